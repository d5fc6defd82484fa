#!/usr/bin/env bash
# mpi_train.sh — what one train-mode run gains from MPI ranks (`mpirun -np K hetsim run`,
# sim/train/trainer_ranks.c): the CNN of scenarios/central-cnn.ini, 8 local-SGD agents x
# 1,000 Fashion-MNIST images, 2 rounds (each rank loads the data, plays the engine and
# evaluates its share of the 10,000 test images; the agents' steps are divided), timed as
# whole processes by farm-bench, A and B in turn, medians of RUNS pairs:
#   mpirun -np 2, 1 thread a rank      vs  one process, 1 thread
#   mpirun -np 2, 1 thread a rank      vs  one process, 2 threads (the in-process way)
#   mpirun -np 4 (oversubscribed here) vs  one process, 1 thread
# The rows are the same in every case (tests/cli/mpi_run.sh checks it); only time moves.
# Prints farm-bench's reports and the load average before and after: on a machine
# shared with other work, wall-clock ratios say what the shared cores gave.
#   bash bench/mpi_train.sh [RUNS]        from the top folder, after `make` (with MPI)
set -euo pipefail
HETSIM=${HETSIM:-./hetsim}
runs=${1:-5}
command -v mpirun > /dev/null || { echo "mpi_train.sh: mpirun not found (scripts/install-deps)"; exit 1; }
command -v farm-bench > /dev/null || { echo "mpi_train.sh: farm-bench not found"; exit 1; }
dir=$(mktemp -d /tmp/hetsim-bench-mpi.XXXX)
trap 'rm -rf "$dir"' EXIT
scenario="scenarios/central-cnn.ini --set run.method=localsgd --set agents.count=8 --set agents.samples=1000"
scenario="$scenario --set run.rounds=2 --quiet"
mpi="mpirun --oversubscribe --allow-run-as-root"
[ "$(id -u)" = 0 ] || mpi="mpirun --oversubscribe"
one1="$HETSIM run $scenario --threads 1 --db $dir/one1.db"
one2="$HETSIM run $scenario --threads 2 --db $dir/one2.db"
np2="$mpi -np 2 $HETSIM run $scenario --threads 1 --db $dir/np2.db"
np4="$mpi -np 4 $HETSIM run $scenario --threads 1 --db $dir/np4.db"
if $mpi -np 2 "$HETSIM" run "$dir/none.ini" --db "$dir/probe.db" 2>&1 |
  grep -q 'built without MPI'; then
  echo "mpi_train.sh: $HETSIM was built without MPI"; exit 1
fi
load() { echo "load average $1: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"; }
load "at the start"
echo "== A: mpirun -np 2, --threads 1 a rank; B: one process, --threads 1"
# shellcheck disable=SC2086
farm-bench -n "$runs" --timeout 3600 --vs "$one1" -- $np2
echo "== A: mpirun -np 2, --threads 1 a rank; B: one process, --threads 2"
# shellcheck disable=SC2086
farm-bench -n "$runs" --timeout 3600 --vs "$one2" -- $np2
echo "== A: mpirun -np 4 (oversubscribed), --threads 1 a rank; B: one process, --threads 1"
# shellcheck disable=SC2086
farm-bench -n "$runs" --timeout 3600 --vs "$one1" -- $np4
load "at the end"
