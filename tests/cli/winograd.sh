#!/usr/bin/env bash
# [run] kernels = winograd through the binary: a CNN with 5x5 kernels runs its second conv
# block (8 input channels) on Winograd F(4x4, 5x5), forward and backward, and the rest on
# oneDNN. It is recorded in runs.config, which replays to the same rows; the rows do not
# depend on the worker threads; train mode times like timing mode; its two rounds of
# local SGD give onednn's losses to a relative 1e-4 (measured: 2.4e-8), in other bits;
# a misspelt choice is refused before any database.
. "$(dirname "$0")/lib.bash"

cp tests/fixtures/scenarios/cnn-small.ini "$tmp/cnn.ini"

loss_rows() { q "$1" "select * from metrics order by rowid"; }
run() { # db, hetsim run options...
  local db=$1; shift
  "$HETSIM" run "$tmp/cnn.ini" --db "$tmp/$db" --quiet "$@" > /dev/null
}

if ! run probe.db --set run.kernels=onednn 2> /dev/null; then
  # a build without oneDNN refuses winograd at its key (as onednn)
  refused "winograd without oneDNN" "built without oneDNN" run "$tmp/cnn.ini" --set run.kernels=winograd
  finish winograd.sh
  exit
fi

check "kernels = onednn runs" run onednn.db --set run.kernels=onednn
check "kernels = winograd runs (1 thread)" run winograd.db --set run.kernels=winograd --threads 1
check "kernels = winograd is recorded in runs.config" \
  bash -c "sqlite3 '$tmp/winograd.db' 'select config from runs' | grep -qx 'kernels = winograd'"
check "kernels = winograd runs (3 threads)" run threads.db --set run.kernels=winograd --threads 3
check "the same rows with 1 and 3 threads" test "$(loss_rows "$tmp/winograd.db")" = "$(loss_rows "$tmp/threads.db")"
q "$tmp/winograd.db" "select config from runs where id = 1" > "$tmp/again.ini"
check "winograd's runs.config runs" bash -c "'$HETSIM' run '$tmp/again.ini' --db '$tmp/again.db' --quiet > /dev/null"
check "winograd's runs.config gives the same rows" test "$(loss_rows "$tmp/winograd.db")" = "$(loss_rows "$tmp/again.db")"
check "timing mode runs" run timing.db --set run.kernels=winograd --set run.mode=timing
check "train mode times like timing mode" test \
  "$(q "$tmp/winograd.db" "select group_concat(t_end || ' ' || bytes, ',') from rounds")" = \
  "$(q "$tmp/timing.db" "select group_concat(t_end || ' ' || bytes, ',') from rounds")"

check "winograd and onednn differ in the bits (the test can tell them apart)" \
  test "$(loss_rows "$tmp/winograd.db")" != "$(loss_rows "$tmp/onednn.db")"
losses_within "winograd against onednn" "$tmp/onednn.db" "$tmp/winograd.db" 1e-4

refused "a misspelt kernels choice" "--set run.kernels=winogard" run "$tmp/cnn.ini" --set run.kernels=winogard

finish winograd.sh
