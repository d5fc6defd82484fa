#!/usr/bin/env bash
# scripts/fedscale-traces on synthetic pickles in FedScale's layout (tests/fedscale_traces_test.py
# checks every value and refusal), then hetsim itself reads an availability trace the
# script wrote: a timing run of two agents whose online time follows FedScale clients, and
# a profile it wrote ([agents] profile): each agent's compute, links and latency are its row's.
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

# the profile of three clients, as hetsim's MLP 16-8-4 counts a sample (16*8*2*3 + ...)
scripts/fedscale-traces --capacity "$tmp/capacity.pkl" --clients 3 --sample-flops 1000 --latency 0.005 \
  --profile "$tmp/fs-profile.csv"
check "three clients' profile written" test $? -eq 0
sed -e 's/^count = 2/count = 3/' -e '/^compute/d' -e '/^bandwidth/d' -e '/^latency/d' \
  -e 's|^availability = .*|profile = fs-profile.csv|' "$tmp/fedscale.ini" > "$tmp/profile.ini"
"$HETSIM" run "$tmp/profile.ini" --db "$tmp/p.db" --quiet > /dev/null
check "hetsim runs on the converted profile" test $? -eq 0
want=$(grep -v '^#' "$tmp/fs-profile.csv" | tail -n +2 | awk -F, '{printf "%.9g|%.9g|%.9g|%.9g\n", $2, $3, $3, $4}')
got=$(sqlite3 "$tmp/p.db" "select printf('%.9g|%.9g|%.9g|%.9g', compute, uplink, downlink, latency) from agents order by agent")
check "the profile has three rows" test "$(printf '%s\n' "$want" | grep -c '^[0-9]')" = 3
check "every agent's compute, links and latency are its row's" test "$want" = "$got"
finish fedscale.sh
