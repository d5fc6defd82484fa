#!/usr/bin/env bash
# CLI contract of `hetsim run`: exit statuses, FILE:LINE messages, nothing written for a
# bad scenario, runs appended, stdout/stderr split.
. "$(dirname "$0")/lib.bash"

"$HETSIM" --version > "$tmp/v" 2>&1
check "--version prints the version" grep -q '^hetsim [0-9]' "$tmp/v"
"$HETSIM" --help > "$tmp/h"; check "--help exits 0" test $? -eq 0
"$HETSIM" run --help > "$tmp/h"; check "run --help lists --set" grep -q -- '--set' "$tmp/h"
"$HETSIM" frobnicate 2> "$tmp/e"; check "unknown command exits 2" test $? -eq 2

"$HETSIM" run scenarios/quickstart.ini --db "$tmp/r.db" --timing-only > "$tmp/out" 2> "$tmp/err"
check "quickstart timing run exits 0" test $? -eq 0
check "run prints its report on stdout" grep -q 'quickstart' "$tmp/out"
check "progress goes to stderr" grep -q 'round 5/5' "$tmp/err"
check "run is done in the database" test "$(sqlite3 "$tmp/r.db" "select status from runs")" = done
check "agents rows" test "$(sqlite3 "$tmp/r.db" "select count(*) from agents")" = 16
check "agent_rounds rows" test "$(sqlite3 "$tmp/r.db" "select count(*) from agent_rounds")" = 80
check "config holds the resolved scenario" sh -c "sqlite3 '$tmp/r.db' 'select config from runs' | grep -q 'count = 4'"

"$HETSIM" run scenarios/quickstart.ini --db "$tmp/r.db" --timing-only --quiet --set run.seed=2 > "$tmp/out"
check "--quiet prints only where the rows went" test "$(cat "$tmp/out")" = "database: $tmp/r.db"
check "runs append" test "$(sqlite3 "$tmp/r.db" "select count(*) from runs")" = 2

# pairings.solver names who answered: a limit of 1e-300 s puts ip's deadline at its own
# entry time (the addition rounds away), so lp_solve always runs out and exact answers.
"$HETSIM" run scenarios/quickstart.ini --db "$tmp/ip.db" --timing-only --quiet --set run.rounds=1 \
  --set method.comdml.solver=ip --set method.comdml.ip_time_limit=1e-300
check "an ip fallback is stored as ip>exact" \
  test "$(sqlite3 "$tmp/ip.db" "select group_concat(distinct solver) from pairings")" = "ip>exact"
"$HETSIM" run scenarios/quickstart.ini --db "$tmp/ip.db" --timing-only --quiet --set run.rounds=1 \
  --set method.comdml.solver=ip
check "an ip answer is stored as ip" \
  test "$(sqlite3 "$tmp/ip.db" "select group_concat(distinct solver) from pairings where run_id = 2")" = ip

cat > "$tmp/bad.ini" <<'INI'
[run]
method = sync
rounds = 2
[agents]
count = 4
compute = 1 GFLOPS
bandwith = 10 Mbit/s
INI
"$HETSIM" run "$tmp/bad.ini" --db "$tmp/bad.db" 2> "$tmp/err"
check "bad scenario exits 2" test $? -eq 2
check "message names file:line and suggests" grep -q "bad.ini:7: unknown key 'bandwith' in \[agents\] (did you mean 'bandwidth'?)" "$tmp/err"
check "bad scenario writes no database" test ! -e "$tmp/bad.db"

"$HETSIM" run scenarios/quickstart.ini --db "$tmp/r.db" --set agents.count=abc 2> "$tmp/err"
check "bad --set exits 2" test $? -eq 2
check "bad --set is named" grep -q -- "^hetsim: --set agents.count=abc: expected a whole number" "$tmp/err"
# Inputs that used to be altered or ignored (issues 13 and 21): each exits 2, names the
# --set or FILE:LINE, and leaves no database.
q=scenarios/quickstart.ini
refused "method.rebalance=abc over [method.comdml]" "--set method.rebalance=abc: expected a whole number" run \
  $q --set method.rebalance=abc
refused "method.rebalance=-3" "--set method.rebalance=-3: expected a whole number in [1, 1000000]" run \
  $q --set method.rebalance=-3
refused "method.solver=foo" "--set method.solver=foo: expected one of exact|ip|greedy" run $q --set method.solver=foo
refused "a bad key of a method that does not run" "--set method.co2.period=0:" run $q --set method.co2.period=0
refused "layers with an empty element" "element 3 of the list is empty" run $q --set model.layers=784,256,,10
refused "a fraction of a sample" "12.5 is not a whole number of samples" run $q --set agents.samples=12.5
# [agents] batch (issue 32): at the key's FILE:LINE, before any database
b=scenarios/batch-stragglers.ini
refused "a batch of 0" "--set agents.slow.batch=0: values must be positive" run $b --set agents.slow.batch=0
sed 's/^batch = 64$/batch = 12.5/' $b > "$tmp/batch-half.ini"
refused "a fraction of a batch" "batch-half.ini:24: [model] batch: expected a whole number" run "$tmp/batch-half.ini"
sed '/^\[agents.slow\]/,$ s/^batch = 64$/batch = 12.5/' $b > "$tmp/batch-half.ini"
refused "a fraction of an agent's batch" "batch-half.ini:45: [agents.slow] batch: 12.5 is not a whole number" run \
  "$tmp/batch-half.ini"
sed '/^\[agents.slow\]/,$ s/^batch = 64$/batch = uniform(0.1, 0.4)/' $b > "$tmp/batch-half.ini"
refused "an agent's batch drawn below 1" "batch-half.ini:45: [agents.slow] batch: agent 12 drew a batch of" run \
  "$tmp/batch-half.ini" --set run.mode=timing
sed '/^\[agents.slow\]/,$ s/^batch = 64$/batch = 16/' $b > "$tmp/batch-half.ini"
refused "comdml with unequal batches" "batch-half.ini:45: [agents.slow] batch: method comdml:" run \
  "$tmp/batch-half.ini" --set run.method=comdml
refused "1e308 TFLOPS" "beyond the largest number" run $q --set "agents.compute=1e308 TFLOPS"
refused "an impossible graph under a method that never reads it" \
  "--set topology.degree=9: [topology] random-regular needs degree < agents (8), found 9" run \
  $q --set run.method=localsgd --set agents.count=8 --set agents.stragglers.count=2 \
  --set topology.graph=random-regular --set topology.degree=9
cat > "$tmp/sweep-typo.ini" <<'INI'
[run]
method = sync
rounds = 1
mode = timing
[agents]
count = 4
compute = 1 GFLOPS
bandwidth = 10 Mbit/s
[sweep]
agents.bandwith = 1 MB/s, 2 MB/s
INI
refused "run on a file whose [sweep] has a typo" "sweep-typo.ini:10: unknown key 'bandwith'" run "$tmp/sweep-typo.ini"
sed -i 's/^agents.bandwith.*/agents.count = 8, -3/' "$tmp/sweep-typo.ini"
refused "run on a file whose [sweep] has a bad value" "sweep-typo.ini:10: [agents] count" run "$tmp/sweep-typo.ini"
sed -i 's/^agents.count = 8, -3/agents.count = 8, 16/' "$tmp/sweep-typo.ini"
"$HETSIM" run "$tmp/sweep-typo.ini" --db "$tmp/base.db" > /dev/null 2> "$tmp/err"
check "run on a sweep file runs its base point" test "$(sqlite3 "$tmp/base.db" "select count(*) from agents")" = 4
check "and says how many runs the sweep has" grep -q "defines a sweep of 2 runs; 'hetsim sweep' runs them" "$tmp/err"
printf '[topology]\ngraph = ring\n' >> "$tmp/sweep-typo.ini"
sed -i '/^\[sweep\]/,/^agents.count/d' "$tmp/sweep-typo.ini"
"$HETSIM" run "$tmp/sweep-typo.ini" --db "$tmp/base.db" > /dev/null 2> "$tmp/err"
check "an unused [topology] gets a note" grep -q "sweep-typo.ini:9: method sync does not use \[topology\]" "$tmp/err"

"$HETSIM" run "$tmp/missing.ini" 2> "$tmp/err"
check "missing scenario exits 2" test $? -eq 2
"$HETSIM" run scenarios/quickstart.ini --bogus 2> "$tmp/err"
check "unknown flag exits 2" test $? -eq 2
# SIGINT mid-run: the run ends as 'interrupted', the database stays intact, exit 1
"$HETSIM" run scenarios/quickstart.ini --db "$tmp/int.db" --timing-only --quiet --set run.method=localsgd \
  --set agents.count=20000 --set agents.stragglers.count=0 --set run.rounds=1000 2> "$tmp/err" &
pid=$!
for i in $(seq 50); do
  [ "$(sqlite3 "$tmp/int.db" "select count(*) from rounds" 2>/dev/null)" -gt 0 ] 2>/dev/null && break
  sleep 0.2
done
kill -INT $pid
wait $pid
check "SIGINT exits 1" test $? -eq 1
check "SIGINT marks the run interrupted" test "$(sqlite3 "$tmp/int.db" "select status from runs")" = interrupted
check "SIGINT leaves the database intact" test "$(sqlite3 "$tmp/int.db" "pragma integrity_check")" = ok
check "SIGINT says how to go on" grep -q "interrupted" "$tmp/err"

# a database of another program is refused, and left untouched
sqlite3 "$tmp/other.db" "create table t(x); pragma user_version = 7;"
before=$(md5sum < "$tmp/other.db")
"$HETSIM" run scenarios/quickstart.ini --db "$tmp/other.db" --timing-only --quiet 2> "$tmp/err"
check "foreign database exits 2" test $? -eq 2
check "foreign database untouched" test "$(md5sum < "$tmp/other.db")" = "$before"
# a run far too big for the machine is refused before it allocates, with an estimate
cat > "$tmp/huge.ini" <<'INI'
[run]
method = localsgd
rounds = 1
[data]
dataset = synthetic
features = 784
train_samples = 4000000
[model]
layers = 784,8192,8192,10
[agents]
count = 1000000
compute = 1 GFLOPS
bandwidth = 1 MB/s
INI
"$HETSIM" run "$tmp/huge.ini" --db "$tmp/huge.db" --quiet 2> "$tmp/err"
check "huge run exits 1" test $? -eq 1
check "huge run gives its estimate" grep -q "needs about" "$tmp/err"
check "huge run leaves no database" test ! -e "$tmp/huge.db"
# Pruning and freezing from the CLI (scenarios/straggler-prune.ini, timing mode): the
# virtual times of docs/results/pruning.md, and a bad value named by its --set.
"$HETSIM" run scenarios/straggler-prune.ini --db "$tmp/p.db" --timing-only --quiet --set run.method=localsgd
"$HETSIM" run scenarios/straggler-prune.ini --db "$tmp/p.db" --timing-only --quiet --set run.method=localsgd \
  --set method.localsgd.prune=width
"$HETSIM" run scenarios/straggler-prune.ini --db "$tmp/p.db" --timing-only --quiet --set run.method=localsgd \
  --set method.localsgd.freeze=progressive
check "straggler-prune: localsgd, pruned, frozen times as in docs/results/pruning.md" \
  test "$(sqlite3 "$tmp/p.db" "select group_concat(round(sim_time_s, 1), ' ') from runs")" = "171.8 35.6 85.0"
check "pruned rounds log the smallest keep ratio" \
  test "$(sqlite3 "$tmp/p.db" "select round(extra, 3) from rounds where run_id = 2 and round = 0")" = 0.223
"$HETSIM" run scenarios/straggler-prune.ini --db "$tmp/p2.db" --set method.localsgd.prune_target=fast 2> "$tmp/err"
check "bad prune_target exits 2" test $? -eq 2
check "bad prune_target is named" grep -q -- "--set method.localsgd.prune_target=fast: expected makespan or a number" "$tmp/err"

# [privacy]: the shipped scenario, timed only, reports the epsilon the accountant gives
# (2 rounds of 4 averagings at q = 1, sigma = 1: rdp 4 alpha, best order 3: 12 + ln(1e5)/2)
"$HETSIM" run scenarios/privacy-clipping.ini --db "$tmp/dp.db" --timing-only --quiet --set run.rounds=2 \
    --set privacy.noise_multiplier=1 > /dev/null 2> "$tmp/err"
check "privacy run exits 0" test $? -eq 0
check "metrics.epsilon of a privacy run" test "$(sqlite3 "$tmp/dp.db" \
    "select printf('%.6f', epsilon) from metrics where round = 1")" = "$(awk 'BEGIN { printf "%.6f", 12 + log(1e5) / 2 }')"
check "metrics.epsilon is NULL without [privacy]" test "$(sqlite3 "$tmp/r.db" \
    "select count(*) from metrics where epsilon is not null")" = 0
# [servers] assign = FILE.assign: a bad line exits 2 naming the file's line, writes nothing
printf '0 0\n0 1\n' > "$tmp/bad.assign"
"$HETSIM" run scenarios/sdfeel-edge.ini --timing-only --db "$tmp/assign.db" --set "servers.assign=$tmp/bad.assign" \
  2> "$tmp/err"
check "bad assignment file exits 2" test $? -eq 2
check "bad assignment file names its line" grep -q "bad.assign:2: agent 0 is assigned twice" "$tmp/err"
check "bad assignment file leaves no database" test ! -e "$tmp/assign.db"
finish run.sh
