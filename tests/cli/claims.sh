#!/usr/bin/env bash
# Two processes given the same sweep on one database, started at the same instant: the
# sweep is claimed in one write transaction and each run in another, so every point ends
# done exactly once, whichever starts first — two identical sweeps (the second is
# refused or finds nothing to do) and two --resume of a half-done sweep (they share the
# missing points), 20 times each; and a database deleted while a run writes to it fails
# the run (exit 1) instead of ending 'done' in no file.
# Started together: both processes stop themselves and one `kill -CONT` releases them.
. "$(dirname "$0")/lib.bash"

rounds=${CLAIMS_ROUNDS:-20}
# 4 points x 2 seeds = 8 runs of 40 agents, 15 rounds: a few hundredths of a second each,
# so the two processes overlap for the whole sweep.
cat > "$tmp/s.ini" <<'INI'
[run]
name = claims
method = sync
seed = 1
rounds = 15
mode = timing

[model]
layers = 784,32,10
batch = 50

[agents]
count = 40
compute = lognormal(1 GFLOPS, 0.8)
bandwidth = uniform(10 Mbit/s, 100 Mbit/s)
latency = 5 ms
samples = 500

[sweep]
run.method = sync, localsgd
agents.latency = 1 ms, 5 ms
repeat = 2
INI
n_runs=8

# start_together DB ARGS-A -- ARGS-B: two `hetsim sweep` commands, each stopped (SIGSTOP)
# until both are, then released by one `kill -CONT`; exit statuses in $tmp/st.a, st.b.
start_together() {
  local db=$1; shift
  local a=() b=()
  while [ "$1" != "--" ]; do a+=("$1"); shift; done
  shift
  b=("$@")
  ( kill -STOP "$BASHPID"; "$HETSIM" sweep "$tmp/s.ini" --db "$db" --quiet "${a[@]}" > /dev/null 2> "$tmp/err.a"
    echo $? > "$tmp/st.a" ) &
  local pa=$!
  ( kill -STOP "$BASHPID"; "$HETSIM" sweep "$tmp/s.ini" --db "$db" --quiet "${b[@]}" > /dev/null 2> "$tmp/err.b"
    echo $? > "$tmp/st.b" ) &
  local pb=$!
  local k
  for k in $(seq 500); do
    [ "$(ps -o stat= -p "$pa" -p "$pb" | grep -c '^T')" -eq 2 ] && break
    sleep 0.01
  done
  kill -CONT "$pa" "$pb"
  wait "$pa" "$pb"
}

# every point of the sweep done exactly once, and no other run
once_each() { # db
  local db=$1
  test "$(q "$db" "select count(*) from runs")" -eq "$n_runs" &&
    test "$(q "$db" "select count(distinct point) from runs where status = 'done'")" -eq "$n_runs" &&
    test "$(q "$db" "select count(*) from runs r where status = 'done' and
                     (select count(*) from agents a where a.run_id = r.id) = 40")" -eq "$n_runs"
}

# ---- two identical sweeps at once ----
bad=0 refused=0
for i in $(seq "$rounds"); do
  db="$tmp/two-$i.db"
  start_together "$db" --jobs 2 -- --jobs 2
  a=$(cat "$tmp/st.a") b=$(cat "$tmp/st.b")
  if ! once_each "$db"; then
    bad=$((bad + 1))
    echo "  round $i: exit $a and $b; runs: $(q "$db" "select status, count(*) from runs group by status" | tr '\n' ' ')"
  fi
  # one ran it; the other was refused (it found the sweep claimed) or ran nothing
  if [ "$a" -eq 2 ] || [ "$b" -eq 2 ]; then refused=$((refused + 1)); fi
  if [ "$a" -ne 0 ] && [ "$b" -ne 0 ]; then bad=$((bad + 1)); echo "  round $i: neither exited 0 ($a, $b)"; fi
done
check "two identical sweeps at once: every point done exactly once ($rounds times)" test "$bad" -eq 0
check "... the second is refused" test "$refused" -eq "$rounds"
grep -q "already holds sweep sw-" "$tmp/err.a" "$tmp/err.b"
check "... saying the database already holds the sweep" test $? -eq 0

# ---- two --resume at once on a half-done sweep ----
"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/half.db" --quiet --jobs 1 > /dev/null 2>&1
base_ids=$(q "$tmp/half.db" "select id || ' ' || point from runs order by id")
# an interrupted attempt: every run of localsgd back to 'running' as a killed sweep leaves
# it (its writer, the sweep above, is gone), one 'failed', one deleted outright
q "$tmp/half.db" "update runs set status = 'running' where point like '%localsgd%';
                  update runs set status = 'failed' where id = (select min(id) from runs where point like '%sync%');
                  delete from agents where run_id = (select max(id) from runs where point like '%sync%');
                  delete from runs where id = (select max(id) from runs where point like '%sync%')"
cp "$tmp/half.db" "$tmp/half-orig.db"
bad=0 shared=0
for i in $(seq "$rounds"); do
  db="$tmp/resume-$i.db"
  cp "$tmp/half-orig.db" "$db"
  start_together "$db" --jobs 1 --resume -- --jobs 1 --resume
  a=$(cat "$tmp/st.a") b=$(cat "$tmp/st.b")
  if ! once_each "$db" || [ "$a" -ne 0 ] || [ "$b" -ne 0 ]; then
    bad=$((bad + 1))
    echo "  round $i: exit $a and $b; runs: $(q "$db" "select status, count(*) from runs group by status" | tr '\n' ' ')"
    head -3 "$tmp/err.a" "$tmp/err.b"
  fi
  # the ids stay those of the first attempt: run i of the expansion is first + i
  if [ "$(q "$db" "select id || ' ' || point from runs order by id")" != "$base_ids" ]; then
    bad=$((bad + 1)); echo "  round $i: ids changed"
  fi
  [ "$(q "$db" "select count(distinct claimed_by) from runs where point like '%localsgd%'" 2>/dev/null)" = 2 ] &&
    shared=$((shared + 1))
done
check "two --resume at once: every point done exactly once, both exit 0, same ids ($rounds times)" test "$bad" -eq 0
echo "     (the two shared the missing points in $shared of $rounds rounds)"

# ---- a sweep and a --resume at once on a new database ----
bad=0
for i in $(seq "$rounds"); do
  db="$tmp/mixed-$i.db"
  start_together "$db" --jobs 2 -- --jobs 2 --resume
  once_each "$db" || { bad=$((bad + 1)); echo "  round $i: $(q "$db" "select status, count(*) from runs group by status" | tr '\n' ' ')"; }
done
check "a sweep and a --resume at once: every point done exactly once ($rounds times)" test "$bad" -eq 0

# ---- the database deleted while a run writes ----
cat > "$tmp/long.ini" <<'INI'
[run]
name = deleted
method = sync
seed = 1
rounds = 4000
mode = timing
[model]
layers = 784,32,10
batch = 50
[agents]
count = 40
compute = lognormal(1 GFLOPS, 0.8)
bandwidth = 50 Mbit/s
latency = 5 ms
samples = 500
INI
"$HETSIM" run "$tmp/long.ini" --db "$tmp/gone.db" --quiet > /dev/null 2> "$tmp/err" &
pid=$!
for _ in $(seq 100); do [ -e "$tmp/gone.db" ] && [ "$(q "$tmp/gone.db" "select count(*) from rounds" 2>/dev/null)" -gt 0 ] 2>/dev/null && break; sleep 0.05; done
rm -f "$tmp/gone.db" "$tmp/gone.db-wal" "$tmp/gone.db-shm"
wait "$pid"
status=$?
check "a run whose database is deleted under it exits 1" test "$status" -eq 1
check "... saying the file was deleted" grep -q "deleted or replaced" "$tmp/err"

"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/gone2.db" --quiet --jobs 1 --set run.rounds=3000 > /dev/null 2> "$tmp/err" &
pid=$!
for _ in $(seq 100); do [ "$(q "$tmp/gone2.db" "select count(*) from rounds" 2>/dev/null)" -gt 0 ] 2>/dev/null && break; sleep 0.05; done
rm -f "$tmp/gone2.db" "$tmp/gone2.db-wal" "$tmp/gone2.db-shm"
wait "$pid"
status=$?
check "a sweep whose database is deleted under it exits 1" test "$status" -eq 1
check "... saying the file was deleted" grep -q "deleted or replaced" "$tmp/err"

finish claims.sh
