#!/usr/bin/env bash
# `hetsim sweep --only KEY=V1,V2`: a subset of a sweep's points, run without editing the
# file, is a part of the whole sweep: the same sweep id, each run the id and the rows it
# has in the whole sweep, so several --only and a final --resume give the database the
# whole sweep gives. A kept point already there is refused without --resume; a key no
# point sweeps or a value not swept exits 2 naming it, before any database exists.
. "$(dirname "$0")/lib.bash"
top=$(cd "$(dirname "$0")/../.." && pwd)
tiny="$top/tests/fixtures/cli/tiny-sweep.ini"

"$HETSIM" sweep "$tiny" --db "$tmp/full.db" --jobs 2 --quiet > /dev/null
"$HETSIM" sweep "$tiny" --db "$tmp/part.db" --jobs 2 --only 'agents.compute=lognormal(20 MFLOPS,1.5)' \
  > "$tmp/out" 2> "$tmp/err"
check "--only exits 0" test $? -eq 0
check "... runs the 4 runs of the 2 points with sigma 1.5" \
  test "$(q "$tmp/part.db" "select count(*) from runs where point like '%1.5)%'")" -eq 4 -a "$(q "$tmp/part.db" "select count(*) from runs")" -eq 4
check "... under the whole sweep's ids" \
  test "$(q "$tmp/part.db" "select group_concat(id) from (select id from runs order by id)")" = "3,4,7,8"
check "... and its sweep id" test "$(q "$tmp/part.db" "select distinct sweep from runs")" = "$(q "$tmp/full.db" "select distinct sweep from runs")"
check "... saying how many it keeps" grep -q -- '--only keeps 4, 4 to run' "$tmp/err"
check "... and that they are part of the sweep" grep -q '4 of its 8 runs (--only)' "$tmp/out"
"$HETSIM" sweep "$tiny" --db "$tmp/part.db" --jobs 2 --only 'agents.compute=lognormal(20 MFLOPS,1.5)' > /dev/null 2> "$tmp/err"
check "a kept point already there is refused without --resume (exit 2)" test $? -eq 2
check "... naming the run" grep -q 'already holds run 3 (run.method=sync agents.compute=lognormal(20 MFLOPS, 1.5) seed=1)' "$tmp/err"
"$HETSIM" sweep "$tiny" --db "$tmp/part.db" --jobs 2 --quiet > /dev/null 2>&1
check "the whole sweep is refused without --resume" test $? -eq 2
"$HETSIM" sweep "$tiny" --db "$tmp/part.db" --jobs 1 --quiet --only run.method=sync --only run.method=comdml \
  --only 'agents.compute=lognormal(20 MFLOPS, 0.5)' > /dev/null 2> "$tmp/err"
check "another --only adds to the sweep (two --only of one key add up)" \
  test $? -eq 0 -a "$(q "$tmp/part.db" "select count(*) from runs")" -eq 8
check "... and together they make the whole sweep: the same runs rows, ids included" \
  test "$(runs_rows "$tmp/part.db")" = "$(runs_rows "$tmp/full.db")"
dump_rows "$tmp/part.db" r.id > "$tmp/part.rows"
dump_rows "$tmp/full.db" r.id > "$tmp/full.rows"
check "... and the same rows in every table" cmp -s "$tmp/part.rows" "$tmp/full.rows"
"$HETSIM" sweep "$tiny" --db "$tmp/part.db" --resume --quiet > /dev/null 2>&1
check "--resume then finds nothing to do" test $? -eq 0 -a "$(q "$tmp/part.db" "select count(*) from runs")" -eq 8

"$HETSIM" sweep "$tiny" --db "$tmp/r.db" --jobs 2 --quiet --only run.method=comdml --resume > /dev/null 2>&1
check "--only with --resume on a new file runs the kept points" test "$(q "$tmp/r.db" "select group_concat(id) from runs")" = "5,6,7,8"

# bad --only: exit 2 naming it, before any database exists
"$HETSIM" sweep "$tiny" --db "$tmp/bad.db" --only agents.latency=5ms 2> "$tmp/err"
check "a key no point sweeps exits 2" test $? -eq 2
check "... naming it" grep -q "hetsim sweep: --only agents.latency: no point sweeps agents.latency (swept: run.method, agents.compute)" "$tmp/err"
"$HETSIM" sweep "$tiny" --db "$tmp/bad.db" --only 'agents.compute=lognormal(20 MFLOPS, 0.7)' 2> "$tmp/err"
check "a value not swept exits 2" test $? -eq 2
check "... naming it and the swept values" grep -qF "'lognormal(20 MFLOPS, 0.7)' is not a swept value of agents.compute (lognormal(20 MFLOPS, 0.5); lognormal(20 MFLOPS, 1.5))" "$tmp/err"
"$HETSIM" sweep "$tiny" --db "$tmp/bad.db" --only run.method 2> "$tmp/err"
check "--only without = exits 2" test $? -eq 2
check "... and no database was made" test ! -e "$tmp/bad.db"
sed 's/^target_accuracy = .*/target_accuracy = 0.50/; /^\[sweep\]/a run.target_accuracy = 0.5, 0.6' "$tiny" > "$tmp/num.ini"
"$HETSIM" sweep "$tmp/num.ini" --dry-run --only run.target_accuracy=0.50 > "$tmp/out" 2> "$tmp/err"
check "a number matches as a number (0.50 is 0.5)" grep -q '^; --only keeps 4 of the 8 points' "$tmp/out"

check "the man page describes --only" grep -q '^\.B \\-\\-only$' "$top/hetsim.1"

finish only.sh
