#!/usr/bin/env bash
# CLI contract of `hetsim pair`: the worked example's output lines exactly (times as the shortest
# text that reads back to the same double: 17.208333333333336, not 17.2083), for every
# solver, under the paper's and the exact cost (`cost` in the file, --cost); directed bandwidth matrices; ip's fallback said on stderr only; malformed instances exit 2 with FILE:LINE on
# stderr and nothing on stdout; usage errors exit 2. One line per check; exits non-zero
# when any check fails. Run from the top folder with HETSIM set to the binary.
. "$(dirname "$0")/lib.bash"
fixtures=tests/fixtures/pairing

printf 'pair 0 2 4 16.8\npair 3 1 6 16.5\nalone 4 15\nmakespan 16.8\n' > "$tmp/expected"
for solver in greedy exact ip; do
  "$HETSIM" pair $fixtures/example5.ini --solver $solver > "$tmp/out" 2> "$tmp/err"
  check "$solver exits 0" test $? -eq 0
  check "$solver prints the worked example" cmp -s "$tmp/out" "$tmp/expected"
  check "$solver is quiet on stderr" test ! -s "$tmp/err"
done
"$HETSIM" pair $fixtures/example5.ini > "$tmp/out"
check "exact is the default" cmp -s "$tmp/out" "$tmp/expected"
"$HETSIM" pair $fixtures/example5_variant.ini --solver greedy > "$tmp/out"
check "CRLF, comments and key order do not matter" cmp -s "$tmp/out" "$tmp/expected"

# links are directed: row i is the bandwidth from i; an offload uses offloader -> helper
printf 'pair 0 1 1 10\nalone 2 12\nalone 3 5\nmakespan 12\n' > "$tmp/directed"
for solver in greedy exact ip; do
  "$HETSIM" pair $fixtures/directed.ini --solver $solver > "$tmp/out" 2> "$tmp/err"
  check "$solver accepts a directed matrix" test $? -eq 0
  check "$solver offloads over offloader -> helper only" cmp -s "$tmp/out" "$tmp/directed"
done

# the exact cost: the file's keys, or --cost over the file's; the paper's cost ignores latency
printf 'pair 0 2 5 17.6\npair 3 1 6 16.5\nalone 4 15\nmakespan 17.6\n' > "$tmp/exact"
for solver in greedy exact ip; do
  "$HETSIM" pair $fixtures/example5_exact.ini --solver $solver > "$tmp/out" 2> "$tmp/err"
  check "$solver under cost = exact" cmp -s "$tmp/out" "$tmp/exact"
done
"$HETSIM" pair $fixtures/example5_exact.ini --cost paper > "$tmp/out"
check "--cost paper gives the published answer" cmp -s "$tmp/out" "$tmp/expected"
printf 'pair 0 2 4 17.208333333333336\npair 3 1 6 16.5\nalone 4 15\nmakespan 17.208333333333336\n' > "$tmp/tail"
"$HETSIM" pair $fixtures/example5.ini --cost exact > "$tmp/out"
check "--cost exact adds the pipeline's tail" cmp -s "$tmp/out" "$tmp/tail"
"$HETSIM" pair $fixtures/example5.ini --cost magic > "$tmp/out" 2> "$tmp/err"
check "unknown cost exits 2" test $? -eq 2
check "unknown cost is named" grep -q "unknown cost 'magic'" "$tmp/err"

# a limit too short for lp_solve: exact answers, the note goes to stderr, stdout keeps its lines
"$HETSIM" pair $fixtures/example5.ini --solver ip --time-limit 1e-9 > "$tmp/out" 2> "$tmp/err"
check "ip fallback exits 0" test $? -eq 0
check "ip fallback prints the optimum" cmp -s "$tmp/out" "$tmp/expected"
check "ip fallback is said on stderr" grep -q "^hetsim: note: ip: lp_solve ran out of time.*exact solver answered" "$tmp/err"

# malformed instances: exit 2, FILE:LINE on stderr, nothing on stdout
malformed() {
  local fixture=$1 line=$2 text=$3
  "$HETSIM" pair "$fixtures/$fixture" > "$tmp/out" 2> "$tmp/err"
  local status=$?
  check "$fixture exits 2" test $status -eq 2
  check "$fixture names $fixture:$line" grep -qF "hetsim: $fixtures/$fixture:$line: $text" "$tmp/err"
  check "$fixture prints nothing on stdout" test ! -s "$tmp/out"
}
malformed err_ragged_row.ini 11 "bandwidth.3 has 4 values, expected 5"
malformed err_unknown_key.ini 8 "unknown key 'bandwith.0'"
malformed err_missing_row.ini 2 "[pairing] lacks the row bandwidth.4"
malformed err_zero_speed.ini 4 "speed[2] = 0 must be finite and > 0"
malformed err_negative_latency.ini 13 "latency[2] = -0.1 must be finite and >= 0"

# shared helpers (capacity = shared): the hand-worked case, two offloaders on one helper
printf 'pair 0 2 1 4.75\nshare 0 2 0.4 0.5714285714285714\npair 1 2 1 4.75\nshare 1 2 0.6 0.42857142857142855\nhelper 2 2 4.75\nmakespan 4.75\n' > "$tmp/shared"
for solver in greedy exact ip; do
  "$HETSIM" pair $fixtures/shared3.ini --solver $solver > "$tmp/out" 2> "$tmp/err"
  check "$solver with shared helpers exits 0" test $? -eq 0
  check "$solver prints the shares" cmp -s "$tmp/out" "$tmp/shared"
  check "$solver with shared helpers is quiet on stderr" test ! -s "$tmp/err"
done
"$HETSIM" pair $fixtures/shared3.ini --cost exact > "$tmp/out" 2> "$tmp/err"
check "--cost exact with shared helpers exits 2" test $? -eq 2
check "--cost exact with shared helpers is named" grep -qF "shared3.ini: capacity = shared takes the paper's cost only" "$tmp/err"
malformed err_capacity.ini 13 "capacity: 'many' is not one of pairs|shared"
malformed err_capacity_cost.ini 14 "capacity = shared takes the paper's cost only"

# usage
"$HETSIM" pair $fixtures/example5.ini --solver magic > "$tmp/out" 2> "$tmp/err"
check "unknown solver exits 2" test $? -eq 2
check "unknown solver is named" grep -q "unknown solver 'magic'" "$tmp/err"
"$HETSIM" pair $fixtures/example5.ini --time-limit soon 2> "$tmp/err"
check "bad --time-limit exits 2" test $? -eq 2
"$HETSIM" pair $fixtures/example5.ini --solver 2> "$tmp/err"
check "--solver without a value exits 2" test $? -eq 2
"$HETSIM" pair 2> "$tmp/err"
check "no instance exits 2" test $? -eq 2
"$HETSIM" pair $fixtures/example5.ini $fixtures/example5.ini 2> "$tmp/err"
check "two instances exit 2" test $? -eq 2
"$HETSIM" pair "$tmp/none.ini" 2> "$tmp/err"
check "missing file exits 2" test $? -eq 2
check "missing file is named" grep -q "none.ini: not found" "$tmp/err"
"$HETSIM" pair --help > "$tmp/out"
check "--help exits 0" test $? -eq 0
check "--help lists the solvers" grep -q "exact|ip|greedy" "$tmp/out"

finish pair.sh
