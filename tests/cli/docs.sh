#!/usr/bin/env bash
# The generated references and the commands that print them: docs/reference/*.md equal
# what the binary prints now (a key or a method changed without `make docs` fails here),
# docs/methods.md has a section for every registered method and for no other, and
# `help keys` and `methods` answer per section and per method, exit 2 on unknown names.
# Run from the top folder with HETSIM set to the binary.
. "$(dirname "$0")/lib.bash"

"$HETSIM" help keys --markdown > "$tmp/keys.md"
check "help keys --markdown exits 0" test $? -eq 0
check "docs/reference/scenario-keys.md is what 'help keys --markdown' prints (run make docs)" \
  cmp -s "$tmp/keys.md" docs/reference/scenario-keys.md
"$HETSIM" methods --markdown > "$tmp/methods.md"
check "methods --markdown exits 0" test $? -eq 0
check "docs/reference/methods.md is what 'methods --markdown' prints (run make docs)" \
  cmp -s "$tmp/methods.md" docs/reference/methods.md
"$HETSIM" methods --features --markdown > "$tmp/features.md"
check "methods --features --markdown exits 0" test $? -eq 0
check "docs/reference/features.md is what 'methods --features --markdown' prints (run make docs)" \
  cmp -s "$tmp/features.md" docs/reference/features.md
"$HETSIM" methods --features --list > "$tmp/cells"
check "methods --features --list has a line per method and feature" \
  test "$(wc -l < "$tmp/cells")" -eq $(( $("$HETSIM" methods | grep -c '^  [a-z0-9]') * 8 ))
check "every cell is ok or refused with a reason" \
  test -z "$(grep -vE '^[a-z0-9]+ [a-z.]+ (ok|refused .+)$' "$tmp/cells")"
"$HETSIM" methods --features localsgd > /dev/null 2>&1
check "--features with a method name exits 2" test $? -eq 2

# every method has its hand-written notes in docs/methods.md, and nothing else does
"$HETSIM" methods | sed -nE 's/^  ([a-z0-9]+) .*/\1/p' | sort > "$tmp/registered"
sed -nE 's/^## ([a-z0-9]+)$/\1/p' docs/methods.md | sort > "$tmp/noted"
check "docs/methods.md has one section per registered method" cmp -s "$tmp/registered" "$tmp/noted"
check "there are methods" test "$(wc -l < "$tmp/registered")" -ge 18
# what rounds.extra means is generated, once per method: the notes point to it
check "every method's reference says what its rounds.extra is" \
  test "$(grep -c '^`rounds.extra`' docs/reference/methods.md)" -eq "$(wc -l < "$tmp/registered")"
check "docs/methods.md does not restate it (one mention: the pointer)" \
  test "$(grep -c 'rounds.extra' docs/methods.md)" -eq 1

# a section, a group, a method
"$HETSIM" help keys run > "$tmp/out" 2> "$tmp/err"
check "help keys run exits 0" test $? -eq 0
check "help keys run prints its section" grep -q '^\[run\] ' "$tmp/out"
check "help keys run prints rounds, its range and its help" \
  grep -qx '  rounds = none                      int: \[1, 1e6\]' "$tmp/out"
check "help keys run prints no other section" test "$(grep -c '^\[' "$tmp/out")" -eq 1
"$HETSIM" help keys agents.slow > "$tmp/out"
check "a group's name gives [agents.NAME]" grep -q '^\[agents.NAME\]' "$tmp/out"
"$HETSIM" help keys > "$tmp/out"
check "help keys prints every section" test "$(grep -c '^\[' "$tmp/out")" -eq 15
"$HETSIM" methods localsgd > "$tmp/out"
check "methods localsgd prints its keys" grep -q '^  local_steps = epoch ' "$tmp/out"
check "methods localsgd says it accepts [privacy]" grep -q 'accepts \[privacy\]' "$tmp/out"
check "... and what rounds.extra holds under prune" grep -q '^    prune = width: smallest keep ratio' "$tmp/out"

# unknown names: exit 2, a suggestion on stderr, nothing on stdout
"$HETSIM" help keys compresion > "$tmp/out" 2> "$tmp/err"
check "an unknown section exits 2" test $? -eq 2
check "it suggests the nearest" grep -q "unknown section 'compresion' (did you mean 'compression'?)" "$tmp/err"
check "it prints nothing on stdout" test ! -s "$tmp/out"
"$HETSIM" methods localsdg > "$tmp/out" 2> "$tmp/err"
check "an unknown method exits 2" test $? -eq 2
check "it suggests the nearest method" grep -q "unknown method 'localsdg' (did you mean 'localsgd'?)" "$tmp/err"
"$HETSIM" methods --bogus > /dev/null 2>&1
check "an unknown option exits 2" test $? -eq 2
"$HETSIM" help > "$tmp/out"
check "plain help still prints the usage" grep -q '^usage:' "$tmp/out"
check "the usage names help keys and methods" grep -q 'hetsim help keys \[SECTION\]' "$tmp/out"

finish docs.sh
