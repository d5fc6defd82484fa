#!/usr/bin/env bash
# ROG's cut and exchange keys end to end (docs/methods.md#rog): the defaults leave runs.config
# as it was (no cut or exchange line); cut = deadline and exchange = ps run from --set and
# from the file, change the clock, and train mode times exactly like timing mode under a
# fluctuating bandwidth; bad values exit 2 naming the --set argument or FILE:LINE, before
# any database.
. "$(dirname "$0")/lib.bash"
S=$tmp/rog.ini
{
  printf '[run]\nmethod = rog\nrounds = 3\nmode = train\n'
  printf '[method]\nbudget = 2 ms\nstaleness = 4\n'
  printf '[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 800\ntest_samples = 200\n'
  printf '[model]\nlayers = 16,32,4\nbatch = 16\nlr = 0.05\n'
  printf '[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = trace(bw.csv)\nlatency = 1 ms\n'
} > "$S"
{
  echo "agent,time,value"
  for a in 0 1 2 3; do for k in $(seq 0 99); do echo "$a,$(echo "0.02 * $k" | bc) s,$(( (k * 7 + a * 3) % 5 + 1 ))00 kB/s"; done; done
} > "$tmp/bw.csv"
db=$tmp/r.db
run() { "$HETSIM" run "$S" --db $db --quiet "$@" 2>> $tmp/err; }
t_end() { q $db "select group_concat(printf('%.17g %.17g', t_end, bytes), ' ') from rounds where run_id = $1"; }

run --set run.mode=timing                                                       # 1
run --set run.mode=timing --set method.cut=deadline                             # 2
run --set run.mode=timing --set method.exchange=ps                              # 3
run --set run.mode=timing --set method.exchange=ps --set method.cut=deadline    # 4
run --set method.exchange=ps --set method.cut=deadline                          # 5: train
check "the defaults write no cut or exchange into runs.config" \
  test "$(q $db "select instr(config, 'cut =') + instr(config, 'exchange =') from runs where id = 1")" = 0
check "cut = deadline is in runs.config" test "$(q $db "select instr(config, 'cut = deadline') > 0 from runs where id = 2")" = 1
check "cut = deadline changes the clock" test "$(t_end 1)" != "$(t_end 2)"
check "exchange = ps changes the clock" test "$(t_end 1)" != "$(t_end 3)"
check "ps with the deadline cut: train = timing" test "$(t_end 4)" = "$(t_end 5)"
check "every run ran its 3 rounds" test "$(q $db "select count(*) from rounds")" = 15

# from the file: the line of the key
sed 's/^staleness = 4$/staleness = 4\nexchange = ps\ncut = deadline/' "$S" > "$tmp/file.ini"
"$HETSIM" run "$tmp/file.ini" --db $db --quiet --set run.mode=timing 2>> $tmp/err
check "cut and exchange from the file: the --set run's clock" test "$(t_end 6)" = "$(t_end 4)"

bad() { # name, file, --set or "", expected text
  rm -f $tmp/bad.db
  local out status
  if [ -n "$3" ]; then out=$("$HETSIM" run "$2" --db $tmp/bad.db --set "$3" 2>&1); status=$?
  else out=$("$HETSIM" run "$2" --db $tmp/bad.db 2>&1); status=$?; fi
  check "$1: exit 2" test $status = 2
  check "$1: says where" grep -q -- "$4" <<< "$out"
  check "$1: no database" test ! -e $tmp/bad.db
}
bad "cut = later from --set" "$S" method.cut=later "\-\-set method.cut=later"
bad "exchange = ring from --set" "$S" method.exchange=ring "\-\-set method.exchange=ring"
sed 's/^cut = deadline$/cut = later/' "$tmp/file.ini" > "$tmp/bad.ini"
bad "cut = later in the file" "$tmp/bad.ini" "" "bad.ini:9: \[method\] cut"

finish rog.sh
