#!/usr/bin/env bash
# topology_weights.sh — [topology] weights = FILE.weights and graph = learned from the CLI
# (docs/topology.md): a weights file holding the ring's Metropolis-Hastings weights gives
# the ring's rows bitwise (the file read back exactly); malformed files and misplaced keys
# exit 2 with FILE:LINE before any database; a learned run is deterministic, its times
# are the same in train and timing mode (the label shares come from the same partition),
# and it is not the ring's.
. "$(dirname "$0")/lib.bash"

cat > "$tmp/base.ini" <<'INI'
[run]
method = dpsgd
seed = 3
rounds = 3
mode = train

[data]
dataset = synthetic
features = 16
classes = 4
train_samples = 1600
test_samples = 400
partition = dirichlet
alpha = 0.1

[model]
arch = mlp
layers = 16,32,4
batch = 16
lr = 0.05

[agents]
count = 8
compute = lognormal(1 GFLOPS, 0.5)
bandwidth = 20 MB/s
latency = 5 ms
INI

run() { # label, scenario, args... -> $tmp/label.db, $tmp/label.err; returns the exit status
  local label=$1 scenario=$2; shift 2
  rm -f "$tmp/$label.db"
  (cd "$tmp" && "$HETSIM" run "$scenario" --quiet --db "$tmp/$label.db" "$@" > /dev/null 2> "$tmp/$label.err")
}
with_weights() { # file -> $tmp/w.ini: base.ini with [topology] weights = file (line 29)
  { cat "$tmp/base.ini"; printf '\n[topology]\nweights = %s\n' "$1"; } > "$tmp/w.ini"
}
times() { # db: what does not depend on the mode's arithmetic
  q "$1" "select round, t_start, t_end, idle_s, bytes from rounds order by rowid"
  q "$1" "select round, agent, compute_s, comm_s, idle_s from agent_rounds order by rowid"
}
results() { # db: every result row but the scenario's text
  q "$1" "select seed, status, rounds_done, sim_time_s, final_accuracy from runs"
  for t in rounds agent_rounds metrics; do q "$1" "select * from $t order by rowid"; done
}

# the ring's Metropolis-Hastings weights (1/3 each, self 1 - 2/3) as numpy.savetxt would
# write them: rows identical to graph = ring
python3 - "$tmp/ring.weights" <<'PY'
import sys
n = 8
with open(sys.argv[1], "w") as f:
    for i in range(n):
        row = [0.0] * n
        row[(i + 1) % n] = row[(i - 1) % n] = 1.0 / 3
        row[i] = 1.0 - (1.0 / 3 + 1.0 / 3)
        f.write(" ".join("%.18e" % w for w in row) + "\n")
PY
with_weights ring.weights
run ring base.ini --set topology.graph=ring
run file w.ini
check "a weights file runs" test "$?" -eq 0
check "the ring's weights as a file give the ring's rows" test "$(results "$tmp/ring.db")" = "$(results "$tmp/file.db")"
check "runs.config writes the weights file, not a graph" \
  test "$(q "$tmp/file.db" "select config from runs" | grep -cE '^(weights = .*/ring\.weights|graph =)')" -eq 1
check "runs.config leaves the default weights out" test -z "$(q "$tmp/ring.db" "select config from runs" | grep weights)"

bad() { # name, expected message (a grep -F pattern), file text, [run args...]
  local name=$1 message=$2 text=$3; shift 3
  printf '%b' "$text" > "$tmp/bad.weights"
  with_weights bad.weights
  run bad w.ini "$@"
  local status=$?
  check "$name: exit 2, no database" test "$status" -eq 2 -a ! -e "$tmp/bad.db"
  check "$name: said at FILE:LINE" grep -qF -- "$message" "$tmp/bad.err" || cat "$tmp/bad.err"
}
z6="0 0 0 0 0 0"
bad "a row summing to 0.9" "w.ini:29: [topology] weights: $tmp/bad.weights:2: row 1 sums to 0.9, not 1" \
  "1 0 $z6\n0.5 0.4 $z6\n"
bad "a negative weight" "bad.weights:1: W[0][0] = -0.5 is outside [0, 1]" "-0.5 1.5 $z6\n"
bad "an index out of range (a row too long)" "bad.weights:1: row 0 has more than 8 entries" "1 0 $z6 0\n"
bad "too few rows" "bad.weights: holds 1 rows, expected 8" "1 0 $z6\n"
bad "an asymmetric W" "bad.weights:2: W[1][0] = 0.25 but W[0][1] = 0.5 (line 1): W must be symmetric" \
  "0.5 0.5 $z6\n0.25 0.75 $z6\n0 0 1 0 0 0 0 0\n0 0 0 1 0 0 0 0\n0 0 0 0 1 0 0 0\n0 0 0 0 0 1 0 0\n0 0 0 0 0 0 1 0\n0 0 0 0 0 0 0 1\n"
printf '1 0 %s\n' "$z6" > "$tmp/one.weights"
with_weights one.weights
{ cat "$tmp/w.ini"; echo "graph = ring"; } > "$tmp/both.ini"
run both both.ini
check "weights = FILE with graph too: exit 2 at the weights line" \
  grep -qF "both.ini:29: [topology] weights: a FILE.weights sets the graph" "$tmp/both.err"
with_weights ring.weights
run other w.ini --set run.method=adpsgd
check "weights = FILE with a method that does not mix with W: exit 2" \
  grep -qF "w.ini:29: [topology] weights: a FILE.weights is read only by the methods that mix with W" "$tmp/other.err"
run other base.ini --set run.method=token --set topology.graph=learned
check "learned with a method that does not mix with W: exit 2" test "$?" -eq 2 -a ! -e "$tmp/other.db"
run other base.ini --set topology.graph=learned --set topology.lambda=-1
check "learned: a negative lambda is refused" grep -qF -- "--set topology.lambda=-1" "$tmp/other.err"

# learned: deterministic, train = timing, not the ring
learned="--set topology.graph=learned --set topology.degree=3"
run la base.ini $learned && run lb base.ini $learned && run lt base.ini $learned --timing-only
check "learned runs in train and timing mode" test "$?" -eq 0
check "learned ends done" test "$(q "$tmp/la.db" "select status from runs")" = done
check "learned is deterministic" test "$(dump_rows "$tmp/la.db" r.id)" = "$(dump_rows "$tmp/lb.db" r.id)"
check "learned times alike in train and timing mode" test "$(times "$tmp/la.db")" = "$(times "$tmp/lt.db")"
# learning: 4 classes (chance 0.25); the test loss falls round after round
check "learned learns: accuracy above 0.5 after 3 rounds" \
  test "$(q "$tmp/la.db" "select final_accuracy > 0.5 from runs")" = 1
check "learned learns: the test loss falls every round" \
  test "$(q "$tmp/la.db" "select count(*) from metrics a join metrics b on b.round = a.round + 1 where b.test_loss < a.test_loss")" -eq 2
check "learned is not the ring" test "$(results "$tmp/la.db")" != "$(results "$tmp/ring.db")"
check "learned writes its keys in runs.config" \
  grep -q "lambda = 0.1" <(q "$tmp/la.db" "select config from runs")
check "learned: the consensus distance is in rounds.extra" \
  test "$(q "$tmp/la.db" "select count(*) from rounds where extra is not null")" -eq 3

finish topology_weights.sh
