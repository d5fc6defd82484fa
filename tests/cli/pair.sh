#!/usr/bin/env bash
# CLI contract of `hetsim pair`: the output lines of the worked example, exit statuses.
set -u
HETSIM=${HETSIM:-./hetsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() {
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi
}
printf 'pair 0 2 4 16.8\npair 3 1 6 16.5\nalone 4 15\nmakespan 16.8\n' > "$tmp/expected"
for solver in greedy exact ip; do
  "$HETSIM" pair tests/fixtures/pairing/example5.ini --solver $solver > "$tmp/out" 2> "$tmp/err"
  check "$solver exits 0" test $? -eq 0
  check "$solver prints the worked example" cmp -s "$tmp/out" "$tmp/expected"
done
"$HETSIM" pair tests/fixtures/pairing/example5.ini > "$tmp/out"
check "exact is the default" cmp -s "$tmp/out" "$tmp/expected"
sed 's/^bandwidth.3 = 20, 10, 50, inf, 0/bandwidth.3 = 20, 10, 50, inf/' tests/fixtures/pairing/example5.ini > "$tmp/ragged.ini"
"$HETSIM" pair "$tmp/ragged.ini" 2> "$tmp/err"
check "ragged matrix exits 2" test $? -eq 2
check "ragged matrix names file:line" grep -q "ragged.ini:11: bandwidth.3 has 4 values, expected 5" "$tmp/err"
"$HETSIM" pair tests/fixtures/pairing/example5.ini --solver magic 2> "$tmp/err"
check "unknown solver exits 2" test $? -eq 2
"$HETSIM" pair "$tmp/none.ini" 2> "$tmp/err"
check "missing instance exits 2" test $? -eq 2
"$HETSIM" pair --help > "$tmp/out"
check "--help lists the solvers" grep -q greedy "$tmp/out"
echo "pair.sh: $pass passed, $fail failed"
test $fail -eq 0
