#!/usr/bin/env bash
# CLI contract of one run across MPI ranks (`mpirun -np K hetsim run ...`,
# sim/train/trainer_ranks.c): a train-mode CNN run on synthetic images gives every
# database row of one process under mpirun -np 1, 2 and 4 (oversubscribed), for
# sync, localsgd, dpsgd and comdml; rank 0 alone writes the database and prints; bad input
# stops every rank with exit 2. Then tests/mpi/mpi_rows (built with MPI next to the
# hetsim under test) checks every method and the trainer's other paths the same way.
# Skipped, saying why, without mpirun or without MPI in this build.
. "$(dirname "$0")/lib.bash"
dump() { dump_rows "$1" "r.name, r.seed, r.method"; } # db

if ! command -v mpirun > /dev/null 2>&1; then
  echo "mpi_run.sh: skipped: mpirun not found (install openmpi-bin and libopenmpi-dev, then rebuild)"
  exit 0
fi
# Open MPI's own allocations outlive MPI_Finalize: no leak report for them. As root,
# Open MPI wants to be told; 4 ranks on fewer cores need --oversubscribe.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
mpi() { # ranks, command...
  local np=$1; shift
  timeout 600 mpirun -np "$np" --oversubscribe --allow-run-as-root "$@"
}

cat > "$tmp/cnn.ini" <<'INI'
[run]
name = mpi-cnn
method = comdml
seed = 5
rounds = 2
mode = train

[data]
dataset = synthetic
channels = 1
height = 12
width = 12
classes = 4
train_samples = 1200
test_samples = 300

[model]
arch = cnn
channels = 4,8
kernel = 3
hidden = 32
batch = 16
optimizer = momentum
lr = 0.05

[topology]
graph = ring

[agents]
count = 6
compute = lognormal(1 GFLOPS, 0.8)
bandwidth = 10 MB/s
latency = 1 ms

[agents.slow]
count = 2
compute = 50 MFLOPS
INI

mpi 2 "$HETSIM" run "$tmp/cnn.ini" --db "$tmp/probe.db" --quiet > "$tmp/probe" 2>&1
if grep -q 'built without MPI' "$tmp/probe"; then
  check "an MPI-less build refuses to run under mpirun" test ! -e "$tmp/probe.db"
  echo "mpi_run.sh: the rest skipped: this hetsim was built without MPI (mpicc not found at build time)"
  finish mpi_run.sh
  exit $?
fi

"$HETSIM" run --help | grep -q 'mpirun -np K hetsim run'
check "run --help documents mpirun" test $? -eq 0

# ---- the same rows for 1, 2 and 4 processes ----
for method in sync localsgd dpsgd comdml; do
  "$HETSIM" run "$tmp/cnn.ini" --set run.method=$method --threads 1 --db "$tmp/$method-one.db" --quiet > /dev/null 2>&1
  check "$method: one process exits 0" test $? -eq 0
  dump "$tmp/$method-one.db" > "$tmp/$method-one.txt"
  for np in 1 2 4; do
    mpi $np "$HETSIM" run "$tmp/cnn.ini" --set run.method=$method --db "$tmp/$method-$np.db" --quiet \
      > "$tmp/out" 2> "$tmp/err"
    check "$method: mpirun -np $np exits 0" test $? -eq 0
    dump "$tmp/$method-$np.db" > "$tmp/$method-$np.txt"
    check "$method: $np ranks write every row of one process" cmp -s "$tmp/$method-one.txt" "$tmp/$method-$np.txt"
  done
done
# unequal batches ([agents.slow] batch): sync's gradients weighed by batch on each rank
# before the fold give one process's rows
"$HETSIM" run "$tmp/cnn.ini" --set run.method=sync --set agents.slow.batch=40 --threads 1 --db "$tmp/batch-one.db" \
  --quiet > /dev/null 2>&1
check "sync, unequal batches: one process exits 0" test $? -eq 0
dump "$tmp/batch-one.db" > "$tmp/batch-one.txt"
cmp -s "$tmp/batch-one.txt" "$tmp/sync-one.txt"
check "sync, unequal batches: rows of their own" test $? -ne 0
for np in 2 4; do
  mpi $np "$HETSIM" run "$tmp/cnn.ini" --set run.method=sync --set agents.slow.batch=40 --db "$tmp/batch-$np.db" \
    --quiet > "$tmp/out" 2> "$tmp/err"
  check "sync, unequal batches: mpirun -np $np exits 0" test $? -eq 0
  dump "$tmp/batch-$np.db" > "$tmp/batch-$np.txt"
  check "sync, unequal batches: $np ranks write every row of one process" cmp -s "$tmp/batch-one.txt" "$tmp/batch-$np.txt"
done
check "the runs wrote metrics of 2 rounds" test "$(q "$tmp/comdml-4.db" 'select count(*) from metrics')" = 2
check "the runs paired agents (split training)" test "$(q "$tmp/comdml-4.db" 'select count(*) from pairings')" -gt 0

# ---- one database writer, one voice ----
mpi 2 "$HETSIM" run "$tmp/cnn.ini" --db "$tmp/talk.db" > "$tmp/out" 2> "$tmp/err"
check "2 ranks: exit 0" test $? -eq 0
check "2 ranks: one run in the database" test "$(q "$tmp/talk.db" 'select count(*) from runs')" = 1
check "2 ranks: the run is done" test "$(q "$tmp/talk.db" 'select status from runs')" = done
check "2 ranks: the report is printed once" test "$(grep -c 'mpi-cnn' "$tmp/out")" = "$(
  "$HETSIM" run "$tmp/cnn.ini" --db "$tmp/talk1.db" 2> /dev/null | grep -c 'mpi-cnn')"
check "2 ranks: no note of a sweep" test "$(grep -c sweep "$tmp/err")" = 0
check "2 ranks: one 'database:' line on stdout" test "$(grep -c "^database: $tmp/talk.db\$" "$tmp/out")" = 1
case "$(q "$tmp/talk.db" 'select command from runs')" in "mpirun -np 2 hetsim run "*) ok=0 ;; *) ok=1 ;; esac
check "2 ranks: runs.command says how many ranks played the run" test $ok -eq 0

sed 's/^rounds = 2/rounds = two/' "$tmp/cnn.ini" > "$tmp/bad.ini"
mpi 2 "$HETSIM" run "$tmp/bad.ini" --db "$tmp/bad.db" > "$tmp/out" 2> "$tmp/err"
check "bad input under mpirun exits 2" test $? -eq 2
line=$(grep -n '^rounds' "$tmp/bad.ini" | cut -d: -f1)
check "bad input: the error names the line, once" test "$(grep -c "bad.ini:$line:" "$tmp/err")" = 1
check "bad input: no database" test ! -e "$tmp/bad.db"

# ---- every method and the trainer's other paths (tests/mpi/mpi_rows.c) ----
rows=$(dirname "$HETSIM")/tests/mpi_rows
if [ -x "$rows" ]; then
  for np in 2 4; do
    (cd "$tmp" && mpi $np "$rows") > "$tmp/rows$np" 2>&1
    check "mpi_rows: every method and variant on $np ranks writes the rows of one process" test $? -eq 0
    grep '^FAIL' "$tmp/rows$np"
    tail -1 "$tmp/rows$np"
  done
else
  echo "mpi_run.sh: mpi_rows skipped: $rows not built (make test builds it with MPI)"
fi

finish mpi_run.sh
