#!/usr/bin/env bash
# CLI contract of `hetsim sweep`: bad input before anything runs, one row per point,
# identical rows with 1 job, 2 jobs and 2 MPI ranks, kill -9 then --resume ends with every
# point done exactly once, SIGINT stops cleanly (always mid-sweep: the workers are paused
# around it, so a fast machine cannot finish first). Timing-mode scenarios only.
. "$(dirname "$0")/lib.bash"

# 2 methods x 2 straggler speeds x 5 seeds = 20 runs of 100 agents, 30 rounds: long enough
# to be killed in the middle, short enough to run in well under a second.
cat > "$tmp/s.ini" <<'INI'
[run]
name = sweep-test
method = sync
seed = 1
rounds = 30
mode = timing

[model]
layers = 784,64,10
batch = 50

[agents]
count = 100
compute = lognormal(1 GFLOPS, 0.8)
bandwidth = uniform(10 Mbit/s, 100 Mbit/s)
latency = 5 ms
samples = 500

[agents.slow]
count = 10
compute = 100 MFLOPS

[sweep]
run.method = sync, localsgd
agents.slow.compute = lognormal(100 MFLOPS, 0.2), lognormal(300 MFLOPS, 1.6)
repeat = 5
INI

# Rows of every table by (point, order written), without the wall-clock columns. The
# order within a run is the rowid order, so this also checks rows are written in the
# order the engine produced them.
dump() { dump_rows "$1" "r.point"; } # db

"$HETSIM" sweep --help > "$tmp/h"; check "sweep --help exits 0" test $? -eq 0
check "sweep --help names --resume" grep -q -- '--resume' "$tmp/h"
"$HETSIM" --help | grep -q 'hetsim sweep'; check "hetsim --help lists sweep" test $? -eq 0

# ---- bad input: exit 2, FILE:LINE of the [sweep] line, no database ----
sed 's/^agents.slow.compute = .*/agents.slow.computer = 1 GFLOPS, 2 GFLOPS/' "$tmp/s.ini" > "$tmp/badkey.ini"
"$HETSIM" sweep "$tmp/badkey.ini" --db "$tmp/bad.db" 2> "$tmp/err"
check "bad sweep key exits 2" test $? -eq 2
line=$(grep -n '^agents.slow.computer' "$tmp/badkey.ini" | cut -d: -f1)
check "bad sweep key names the [sweep] line" grep -q "badkey.ini:$line: unknown key 'computer' in \[agents.slow\] (did you mean 'compute'?)" "$tmp/err"
check "bad sweep key writes no database" test ! -e "$tmp/bad.db"
sed 's/^run.method = .*/run.method = sync,,localsgd/' "$tmp/s.ini" > "$tmp/empty.ini"
"$HETSIM" sweep "$tmp/empty.ini" --db "$tmp/bad.db" 2> "$tmp/err"
check "empty sweep value exits 2" test $? -eq 2
check "empty sweep value is named" grep -q "empty.ini:[0-9]*: \[sweep\] run.method: value 2 is empty" "$tmp/err"
"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/bad.db" --jobs 0 2> "$tmp/err"
check "--jobs 0 exits 2" test $? -eq 2
check "bad usage writes no database" test ! -e "$tmp/bad.db"

# ---- 1 job, 2 jobs: same rows ----
"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/j1.db" --jobs 1 > "$tmp/out1" 2> "$tmp/err1"
check "1-job sweep exits 0" test $? -eq 0
check "20 runs, all done" test "$(q "$tmp/j1.db" "select count(*) from runs where status = 'done'")" = 20
check "20 distinct points of one sweep" test "$(q "$tmp/j1.db" "select count(distinct point) || ' ' || count(distinct sweep) from runs")" = "20 1"
check "point label names keys and seed" test "$(q "$tmp/j1.db" "select count(*) from runs where point = 'run.method=localsgd agents.slow.compute=lognormal(300 MFLOPS, 1.6) seed=5'")" = 1
check "method and seed come from the point" test "$(q "$tmp/j1.db" "select method || ' ' || seed from runs where point like 'run.method=localsgd % seed=3'" | sort -u)" = "localsgd 3"
check "config holds the swept value" sh -c "sqlite3 '$tmp/j1.db' \"select config from runs where point like '%lognormal(300 MFLOPS, 1.6)%' limit 1\" | grep -q 'compute = lognormal(300000000, 1.6'"
check "agent_rounds of every run" test "$(q "$tmp/j1.db" "select count(*) from agent_rounds")" = $((20 * 30 * 100))
check "summary on stdout" grep -q '20 runs in .*20 done' "$tmp/out1"
check "progress on stderr" grep -q 'sweep: 20/20 done' "$tmp/err1"

"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/j2.db" --jobs 2 --quiet > "$tmp/out2" 2>&1
check "2-job sweep exits 0" test $? -eq 0
check "--quiet prints only where the rows went" test "$(cat "$tmp/out2")" = "database: $tmp/j2.db"
dump "$tmp/j1.db" > "$tmp/d1"
dump "$tmp/j2.db" > "$tmp/d2"
check "1 job and 2 jobs give identical rows by point" cmp -s "$tmp/d1" "$tmp/d2"
runs_rows "$tmp/j1.db" > "$tmp/r1"
runs_rows "$tmp/j2.db" > "$tmp/r2"
check "1 job and 2 jobs give identical runs rows, ids included (in point order)" cmp -s "$tmp/r1" "$tmp/r2"
check "... ids 1 to 20 in the sweep's point order" \
  test "$(q "$tmp/j2.db" "select group_concat(id) from (select id from runs order by id)")" = "$(seq -s, 1 20)"
check "the comparison saw every table" test "$(cut -d'|' -f1 "$tmp/d1" | grep -c '^agent_rounds$')" = $((20 * 30 * 100))

# The demo sweeps ComDML too, whose pairings carry a wall-clock column (solve_ms).
same_rows_with_1_and_2_jobs "demo sweep" scenarios/sweep-demo.ini "$tmp/demo"
check "demo: 54 runs done, with pairings" test "$(q "$tmp/demo2.db" "select (select count(*) from runs where status = 'done') || ' ' || (select count(*) > 0 from pairings)")" = "54 1"

# The asynchronous methods in train mode (arithmetic included): identical rows too.
cat > "$tmp/async.ini" <<'INI'
[run]
name = sweep-async
rounds = 2
mode = train
[data]
dataset = synthetic
features = 16
classes = 4
train_samples = 800
test_samples = 200
[model]
layers = 16,32,4
batch = 16
[topology]
graph = ring
[agents]
count = 6
compute = lognormal(1 GFLOPS, 0.7)
bandwidth = uniform(200 kB/s, 10 MB/s)
latency = 2 ms
[sweep]
run.method = ripples, divshare, swift
method.ripples.schedule = random, division
repeat = 2
INI
same_rows_with_1_and_2_jobs "async sweep" "$tmp/async.ini" "$tmp/async"
check "async: 12 runs done" test "$(q "$tmp/async2.db" "select count(*) from runs where status = 'done'")" = 12

# ---- a sweep already in the database ----
"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/j1.db" --jobs 2 2> "$tmp/err"
check "running a sweep twice without --resume exits 2" test $? -eq 2
check "... and says to add --resume" grep -q 'add --resume' "$tmp/err"
"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/j1.db" --jobs 2 --resume > /dev/null 2> "$tmp/err"
check "--resume of a finished sweep exits 0" test $? -eq 0
check "... and runs nothing again" test "$(q "$tmp/j1.db" "select count(*) from runs")" = 20
"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/j1.db" --jobs 2 --set sweep.repeat=6 --resume --quiet
check "a larger repeat is another sweep, appended" test "$(q "$tmp/j1.db" "select count(*) || ' ' || count(distinct sweep) from runs where status = 'done'")" = "44 2"

# ---- kill -9 at some moment, then --resume ----
# with 2 jobs, and with 1 (a lone worker is handed up to 16 runs at a time)
kill_and_resume() { # jobs
local jobs=$1 pid n before
rm -f "$tmp/k.db" "$tmp/k.db-wal" "$tmp/k.db-shm"
"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/k.db" --jobs $jobs --quiet > /dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do  # until a few runs are done, at most 10 s
  n=$(q "$tmp/k.db" "select count(*) from runs where status = 'done'" 2>/dev/null || echo 0)
  [ "${n:-0}" -ge 3 ] && break
  sleep 0.02
done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
sleep 0.2  # its workers end at their next write to the dead parent
before=$(q "$tmp/k.db" "select count(*) from runs where status = 'done'")
echo "     (killed with $before of 20 runs done, $(q "$tmp/k.db" "select count(*) from runs where status = 'running'") running)"
"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/k.db" --jobs $jobs --resume > /dev/null 2> "$tmp/err"
check "--resume after kill -9 exits 0 ($jobs jobs)" test $? -eq 0
check "... says what it kept ($jobs jobs)" grep -q "resuming sweep sw-[0-9a-f]*: $before of 20 runs kept" "$tmp/err"
check "every point done exactly once ($jobs jobs)" test "$(q "$tmp/k.db" "select count(*) || ' ' || count(distinct point) from runs where status = 'done'")" = "20 20"
check "no run left 'running' or incomplete ($jobs jobs)" test "$(q "$tmp/k.db" "select count(*) from runs where status <> 'done'")" = 0
check "no rows of deleted runs ($jobs jobs)" test "$(q "$tmp/k.db" "select count(*) from agent_rounds where run_id not in (select id from runs)")" = 0
dump "$tmp/k.db" > "$tmp/dk"
check "killed and resumed sweep has the same rows ($jobs jobs)" cmp -s "$tmp/d1" "$tmp/dk"
runs_rows "$tmp/k.db" > "$tmp/rk"
check "killed and resumed sweep has the same runs rows, ids included ($jobs jobs)" cmp -s "$tmp/r1" "$tmp/rk"
}
kill_and_resume 2
kill_and_resume 1

# ---- SIGINT: runs marked interrupted, the resume command printed ----
# However fast the machine, SIGINT must arrive mid-sweep: the workers are paused
# (SIGSTOP) the moment they are seen and let go in slices of 10 ms until both runs
# handed out first have begun (their rows exist); then the parent gets SIGINT while they
# stay paused, and they resume only once the signal it forwards is pending in them
# (ShdPnd in /proc/PID/status), so none can finish another run first. /proc, not
# procps: CI images may lack pgrep.
workers=()
children() { # pid: its worker processes into workers[] (not the checkpoint helper, hetsim-ckpt)
  local all=() c comm stat cpid state ppid
  if [ -r "/proc/$1/task/$1/children" ]; then  # one read, no fork: quick enough to catch them early
    read -r -a all < "/proc/$1/task/$1/children"
  else
    for stat in /proc/[0-9]*/stat; do
      read -r cpid comm state ppid _ 2>/dev/null < "$stat" && [ "$ppid" = "$1" ] && all+=("$cpid")
    done
  fi
  workers=()
  for c in "${all[@]}"; do
    read -r comm 2>/dev/null < "/proc/$c/comm" && [ "$comm" = hetsim-ckpt ] && continue
    workers+=("$c")
  done
}
sigint_pending() { # pid
  local field
  field=$(awk '/^ShdPnd:/ { print $2 }' "/proc/$1/status" 2>/dev/null) && [ -n "$field" ] &&
    [ $((16#$field & 2)) -ne 0 ]
}
runs_with() { q "$tmp/i.db" "select count(*) from runs where $1" 2>/dev/null || echo 0; }
# a run is claimed (a 'running' row) just before a worker gets it, and begun when the
# worker's run_begin fills it in (started_at)
begun() { runs_with "started_at is not null"; }
# with 2 jobs, and with 1: a lone worker has up to 16 runs queued, each of which must come
# back not done
interrupt_and_resume() { # jobs
local jobs=$1 pid caught paused forwarded rc w
rm -f "$tmp/i.db" "$tmp/i.db-wal" "$tmp/i.db-shm"
"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/i.db" --jobs $jobs > /dev/null 2> "$tmp/err" &
pid=$!
for _ in $(seq 5000); do  # both workers forked, each paused as soon as it is seen: at most 10 s
  children $pid
  [ ${#workers[@]} -gt 0 ] && kill -STOP "${workers[@]}" 2>/dev/null
  [ ${#workers[@]} -eq $jobs ] && break
  sleep 0.002
done
caught=$(runs_with "status = 'done'")
for _ in $(seq 1000); do  # a run begun per worker
  [ "$(begun)" -ge $jobs ] && break
  kill -CONT "${workers[@]}" 2>/dev/null; sleep 0.01; kill -STOP "${workers[@]}" 2>/dev/null
done
paused=$(runs_with "status = 'done'")
echo "     (workers ${workers[*]} caught with $caught runs done; SIGINT with $paused done, $(begun) begun)"
kill -INT $pid
forwarded=0
for _ in $(seq 500); do  # the parent forwarded SIGINT to both: at most 10 s
  forwarded=0
  for w in "${workers[@]}"; do sigint_pending $w && forwarded=$((forwarded + 1)); done
  [ $forwarded -eq $jobs ] && break
  sleep 0.02
done
kill -CONT "${workers[@]}" 2>/dev/null
wait $pid; rc=$?
check "SIGINT arrived mid-sweep (every worker paused, runs begun, not all done) ($jobs jobs)" \
  test ${#workers[@]} -eq $jobs -a "$(begun)" -ge $jobs -a "$paused" -lt 20
check "the parent forwarded SIGINT to every worker ($jobs jobs)" test $forwarded -eq $jobs
check "SIGINT exits 1 ($jobs jobs)" test $rc -eq 1
check "SIGINT prints the resume command ($jobs jobs)" grep -q "hetsim sweep .*--resume" "$tmp/err"
check "SIGINT leaves no run 'running' ($jobs jobs)" test "$(runs_with "status = 'running'")" = 0
check "SIGINT stops the sweep short ($jobs jobs)" test "$(runs_with "status = 'done'")" -lt 20
"$HETSIM" sweep "$tmp/s.ini" --db "$tmp/i.db" --jobs $jobs --resume --quiet
check "--resume after SIGINT completes the sweep ($jobs jobs)" test "$(q "$tmp/i.db" "select count(*) || ' ' || count(distinct point) from runs")" = "20 20"
runs_rows "$tmp/i.db" > "$tmp/ri"
check "interrupted and resumed sweep has the runs rows of 1 job, ids included ($jobs jobs)" cmp -s "$tmp/r1" "$tmp/ri"
}
interrupt_and_resume 2
interrupt_and_resume 1

# ---- MPI: 2 ranks, rank 0 writes ----
if command -v mpirun > /dev/null 2>&1; then
  # Open MPI's own allocations outlive MPI_Finalize: no leak report for them.
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
  mpirun -np 2 --oversubscribe --allow-run-as-root "$HETSIM" sweep "$tmp/s.ini" --db "$tmp/m.db" --quiet \
    > "$tmp/mout" 2>&1
  rc=$?
  if grep -q 'built without MPI' "$tmp/mout"; then
    check "MPI-less build refuses to run under mpirun" test $rc -ne 0
  else
    check "2-rank sweep exits 0" test $rc -eq 0
    dump "$tmp/m.db" > "$tmp/dm"
    check "2 MPI ranks give the rows of 1 job" cmp -s "$tmp/d1" "$tmp/dm"
    runs_rows "$tmp/m.db" > "$tmp/rm"
    check "2 MPI ranks give the runs rows of 1 job, ids included" cmp -s "$tmp/r1" "$tmp/rm"
  fi
else
  echo "skip MPI test: mpirun not found"
fi

# A sweep's id is what --resume finds a sweep by. It hashes the runs' configs with their
# numbers in one fixed form (sim/scenario/sweep.c), so writing runs.config's numbers more
# shortly (0.9 for 0.90000000000000002) did not change it: this is the id every hetsim
# since then and the one before gave sweep-demo.ini. It changes only on purpose (a key
# that writes a new line into every config).
id=$("$HETSIM" sweep scenarios/sweep-demo.ini --dry-run 2>&1 | sed -n 's/^; sweep \(sw-[0-9a-f]*\):.*/\1/p')
check "sweep-demo.ini's id is sw-c7d8f32e3790d284, as before runs.config's short numbers" \
  test "$id" = sw-c7d8f32e3790d284

finish sweep.sh
