#!/usr/bin/env bash
# SimGrid as an independent oracle of the maxmin network model (tests/oracle/): random
# small platforms and flow patterns from a fixed seed; hetsim's message arrivals, round
# lengths and per-agent busy and comm times must agree with SimGrid's within 0.1 %,
# MOTOR's runs among them (on fixed links, and on traced links whose lowered rates change
# its graph at the round-1 rebuild and the capacities under messages in flight). Then
# eager-SGD's partial collectives alone (solo and majority in turn, non-blocking rings
# beside the late agents' compute) on 12 random fleets, under the same tolerance.
set -u
HETSIM=${HETSIM:-./hetsim}
bin=$(dirname "$HETSIM")/tests
if [ ! -x "$bin/simgrid_replay" ]; then
  if pkg-config --exists simgrid 2>/dev/null; then
    echo "oracle.sh: FAIL: SimGrid is installed but $bin/simgrid_replay was not built"
    exit 1
  fi
  echo "oracle.sh: skipped: SimGrid not found (pkg-config simgrid); install libsimgrid-dev (scripts/install-deps)"
  exit 0
fi
status=0
"$bin/oracle_check" "$bin/simgrid_replay" random "${ORACLE_SEED:-19}" "${ORACLE_CASES:-90}" || status=1
"$bin/oracle_check" "$bin/simgrid_replay" method eager "${ORACLE_SEED:-19}" "${ORACLE_EAGER_CASES:-12}" || status=1
exit $status
