#!/usr/bin/env bash
# `hetsim check` and the --dry-run of run and sweep: a valid scenario prints its resolved
# form (an INI file that runs the same) and, for a sweep, the numbered points in sweep
# order; --only narrows the list as `sweep --only` would; bad input exits 2 with
# FILE:LINE, a key no point sweeps or a value not swept exits 2 naming it; and nothing
# is ever written: no database file appears, whatever --db says.
. "$(dirname "$0")/lib.bash"
top=$(cd "$(dirname "$0")/../.." && pwd)
tiny="$top/tests/fixtures/cli/tiny-sweep.ini"
cd "$tmp"

"$HETSIM" check --help > h.txt; check "check --help exits 0" test $? -eq 0
check "... and names --only" grep -q -- '--only KEY=V1,V2' h.txt
"$HETSIM" --help | grep -q 'hetsim check'; check "hetsim --help lists check" test $? -eq 0

"$HETSIM" check "$tiny" > out.ini 2> err
check "check of a sweep exits 0" test $? -eq 0
check "... says it is valid and wrote nothing" grep -q "^; $tiny: valid; nothing was written" out.ini
check "... names the sweep and its size" grep -q '^; sweep sw-[0-9a-f]*: 4 points x 2 seeds = 8 runs' out.ini
check "... says where sweep would write, and that no --db was given" \
  grep -q '^; `hetsim sweep` would write them to results.db (no --db given)' out.ini
check "... numbers the points in sweep order" \
  test "$(grep -c '^;   [1-4]  run.method=' out.ini)" -eq 4 -a -n "$(grep '^;   3  run.method=comdml agents.compute=lognormal(20 MFLOPS, 0.5)  seeds 1-2' out.ini)"
check "... prints the resolved scenario of point 1" grep -q '^compute = lognormal(20000000, 0.5)' out.ini
# the printout is a scenario: the first point, run as it stands, gives the sweep's first run's rows
"$HETSIM" sweep "$tiny" --db full.db --jobs 2 --quiet > /dev/null
"$HETSIM" run out.ini --db point1.db --quiet > /dev/null
check "the printout runs the same as the sweep's point 1" test \
  "$(q point1.db "select sim_time_s, final_accuracy, config from runs")" = "$(q full.db "select sim_time_s, final_accuracy, config from runs where id = 1")"
rm -f point1.db full.db

"$HETSIM" sweep "$tiny" --dry-run --db dry.db --only run.method=comdml > only.ini 2> err
check "sweep --dry-run --only exits 0" test $? -eq 0
check "... keeps the selected points with their numbers in the whole sweep" \
  test "$(grep '^;  *[0-9]  ' only.ini | awk '{print $2}' | tr '\n' ' ')" = "3 4 "
check "... says how many" grep -q '^; --only keeps 2 of the 4 points (4 runs)' only.ini
check "... prints point 3 resolved" grep -q '^; the resolved scenario of point 3, seed 1' only.ini
"$HETSIM" run "$tiny" --dry-run --db dry.db --set run.rounds=3 > run.ini 2> err
check "run --dry-run exits 0" test $? -eq 0
check "... prints the base point with the override" grep -q '^rounds = 3' run.ini
check "... and says the file defines a sweep" grep -q 'defines a sweep of 8 runs' run.ini
"$HETSIM" check "$top/scenarios/quickstart.ini" --timing-only > plain.ini
check "check of a plain scenario exits 0 and lists no points" test $? -eq 0 -a -z "$(grep '^; points' plain.ini)"
check "... with --timing-only applied" grep -q '^mode = timing' plain.ini

# bad input: exit 2, said on stderr, nothing on stdout
sed 's/^latency = 5 ms/latency = 5 parsecs/' "$tiny" > bad.ini
"$HETSIM" check bad.ini > out 2> err
check "a bad value exits 2" test $? -eq 2
check "... naming FILE:LINE" grep -q "bad.ini:$(grep -n '^latency' bad.ini | cut -d: -f1): " err
check "... printing nothing on stdout" test ! -s out
"$HETSIM" check "$tiny" --only agents.count=3 > out 2> err
check "--only of a key no point sweeps exits 2" test $? -eq 2
check "... naming it and the swept keys" \
  grep -q "hetsim check: --only agents.count: no point sweeps agents.count (swept: run.method, agents.compute)" err
"$HETSIM" sweep "$tiny" --dry-run --only run.method=fedavg > out 2> err
check "--only of a value not swept exits 2" test $? -eq 2
check "... naming it and the swept values" \
  grep -q "hetsim sweep: --only run.method: 'fedavg' is not a swept value of run.method (sync; comdml)" err
"$HETSIM" check "$tiny" --only run.method > out 2> err
check "--only without a value exits 2" test $? -eq 2
"$HETSIM" check > out 2> err
check "check without a scenario exits 2" test $? -eq 2
"$HETSIM" check missing.ini > out 2> err
check "a missing file exits 2 naming it" test $? -eq 2 -a -n "$(grep 'missing.ini: not found' err)"

check "nothing was written: no database file appeared" test -z "$(ls *.db* 2>/dev/null)"

check "the man page describes check" grep -q '^\.B check$' "$top/hetsim.1"

finish check.sh
