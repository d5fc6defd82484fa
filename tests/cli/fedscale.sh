#!/usr/bin/env bash
# scripts/fedscale-traces on synthetic pickles in FedScale's layout (tests/fedscale_traces_test.py
# checks every value and refusal), then hetsim itself reads an availability trace the
# script wrote: a timing run of two agents whose online time follows FedScale clients.
. "$(dirname "$0")/lib.bash"
if ! command -v python3 > /dev/null; then
  echo "fedscale.sh: skipped (no python3)"
  exit 0
fi
python3 tests/fedscale_traces_test.py "$tmp"
check "tests/fedscale_traces_test.py passes" test $? -eq 0

scripts/fedscale-traces --behave "$tmp/behave.pkl" --clients 2 --horizon 100000 --availability "$tmp/online.csv"
check "two online clients' availability written" test $? -eq 0
cat > "$tmp/fedscale.ini" <<INI
[run]
name = fedscale-availability
method = sync
rounds = 3
mode = timing

[data]
dataset = synthetic
features = 16
classes = 4
train_samples = 256
test_samples = 32

[model]
layers = 16,8,4
batch = 32

[agents]
count = 2
compute = 1 MFLOPS
bandwidth = 1 MB/s
latency = 0 s
availability = trace(online.csv)
INI
"$HETSIM" run "$tmp/fedscale.ini" --db "$tmp/f.db" --quiet
check "hetsim runs on the converted availability trace" test $? -eq 0
check "the run is done" test "$(sqlite3 "$tmp/f.db" "select status from runs")" = done
check "agent 1 (online 10 s a minute) spends time offline" \
  test "$(sqlite3 "$tmp/f.db" "select sum(offline_s) > 0 from agent_rounds where agent = 1")" = 1
finish fedscale.sh
