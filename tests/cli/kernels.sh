#!/usr/bin/env bash
# [run] kernels through the binary: the default (openblas) writes no kernels line, so
# every run on the reference kernels keeps the runs.config and sweep id it had before the
# key; onednn (and auto, for a CNN) is recorded and its runs.config gives the same rows
# again; the two kernels give different bits but the same training to rounding; timing
# mode, which runs no arithmetic, records nothing.
. "$(dirname "$0")/lib.bash"

cp tests/fixtures/scenarios/cnn-small.ini "$tmp/cnn.ini"

config_of() { q "$1" "select config from runs where id = 1"; }
loss_rows() { q "$1" "select * from metrics order by rowid"; }

run() { # db, overrides...
  local db=$1; shift
  local set=()
  for s in "$@"; do set+=(--set "$s"); done
  "$HETSIM" run "$tmp/cnn.ini" --db "$tmp/$db" --quiet "${set[@]}" > /dev/null
}

check "the default runs" run default.db
check "the default (openblas) writes no kernels line" \
  bash -c "! sqlite3 '$tmp/default.db' 'select config from runs' | grep -q '^kernels'"
check "kernels = openblas gives the default's config and rows" \
  bash -c "'$HETSIM' run '$tmp/cnn.ini' --db '$tmp/openblas.db' --quiet > /dev/null --set run.kernels=openblas &&
           test \"\$(sqlite3 '$tmp/openblas.db' 'select config from runs')\" = \"\$(sqlite3 '$tmp/default.db' 'select config from runs')\" &&
           test \"\$(sqlite3 '$tmp/openblas.db' 'select * from metrics')\" = \"\$(sqlite3 '$tmp/default.db' 'select * from metrics')\""
check "kernels = onednn runs" run onednn.db run.kernels=onednn
check "kernels = onednn is recorded in runs.config" bash -c "sqlite3 '$tmp/onednn.db' 'select config from runs' | grep -qx 'kernels = onednn'"
check "kernels = auto on a CNN is recorded as onednn" \
  bash -c "'$HETSIM' run '$tmp/cnn.ini' --db '$tmp/auto.db' --quiet > /dev/null --set run.kernels=auto &&
           sqlite3 '$tmp/auto.db' 'select config from runs' | grep -qx 'kernels = onednn'"
check "kernels = auto on an MLP stays openblas (no line)" \
  bash -c "'$HETSIM' run '$tmp/cnn.ini' --db '$tmp/mlp.db' --quiet > /dev/null --set run.kernels=auto --set model.arch=mlp &&
           ! sqlite3 '$tmp/mlp.db' 'select config from runs' | grep -q '^kernels'"
check "timing mode records no kernels" \
  bash -c "'$HETSIM' run '$tmp/cnn.ini' --db '$tmp/timing.db' --quiet > /dev/null --set run.kernels=onednn --set run.mode=timing &&
           ! sqlite3 '$tmp/timing.db' 'select config from runs' | grep -q '^kernels'"

# onednn's runs.config replays to the same bits
config_of "$tmp/onednn.db" > "$tmp/again.ini"
check "onednn's runs.config runs" bash -c "'$HETSIM' run '$tmp/again.ini' --db '$tmp/again.db' --quiet > /dev/null"
check "onednn's runs.config gives the same rows" test "$(loss_rows "$tmp/onednn.db")" = "$(loss_rows "$tmp/again.db")"

# the two kernels are different arithmetic (not bit for bit) that trains the same model
check "onednn and openblas differ in the bits (the test can tell them apart)" \
  test "$(loss_rows "$tmp/onednn.db")" != "$(loss_rows "$tmp/default.db")"
losses_within "onednn against openblas" "$tmp/default.db" "$tmp/onednn.db" 1e-5

finish kernels.sh
