#!/usr/bin/env bash
# The docs against the code: every method of the registry and every command of
# `hetsim --help` is documented; the usage lines of `hetsim --help`, of each
# `hetsim COMMAND --help`, of the man page's SYNOPSIS and of the command summaries in
# README.md and docs/cli.md are one text; every relative link of README.md and docs/
# resolves; the README's scenario runs; `make install-share` installs the man page and the
# docs where their links work. Run from the top folder with HETSIM set to the binary.
. "$(dirname "$0")/lib.bash"

# --- methods: the registry, as the scenario error for an unknown method lists it
"$HETSIM" run scenarios/quickstart.ini --db "$tmp/m.db" --set run.method=no-such-method 2> "$tmp/err"
sed -n 's/.*unknown method .no-such-method.; known: //p' "$tmp/err" | tr -d ' ' | tr ',' '\n' | sort > "$tmp/methods"
n_methods=$(wc -l < "$tmp/methods")
check "the registry lists its methods ($n_methods)" test "$n_methods" -ge 18
sed -nE 's/^## ([a-z0-9]+)$/\1/p' docs/methods.md | sort > "$tmp/noted"
check "docs/methods.md has one section per registered method and no other" cmp -s "$tmp/methods" "$tmp/noted"
missing=""
for m in $(cat "$tmp/methods"); do grep -qw -- "$m" hetsim.1 || missing="$missing $m"; done
check "the man page names every method${missing:+ (not:$missing)}" test -z "$missing"
counts=$(grep -ohE '\b(the|runs|of) [0-9]+ methods\b' README.md docs/index.md docs/methods.md docs/scenarios.md |
         grep -oE '[0-9]+' | sort -u)
check "README and docs count $n_methods methods wherever they count them (found: $(echo $counts))" \
  test "$counts" = "$n_methods"

# --- commands and usage lines: hetsim --help is the source
scripts/man-synopsis --lines "$HETSIM" > "$tmp/usage"
check "hetsim --help has usage lines" test "$(wc -l < "$tmp/usage")" -ge 7
compared=0 differ=""
while read -r _ cmd _; do
  case $cmd in -*|[A-Z]*) continue ;; esac
  "$HETSIM" "$cmd" --help > "$tmp/cmdhelp" 2> /dev/null || continue
  grep -q "^usage: hetsim $cmd " "$tmp/cmdhelp" || continue
  own=$(awk '/^usage:/ { on = 1; sub(/^usage: /, "") } on && /^$/ { exit } on { print }' "$tmp/cmdhelp" | tr -s ' \n' ' ' | sed 's/ $//')
  main=$(grep "^hetsim $cmd " "$tmp/usage" | tr -s ' ')
  [ "$own" = "$main" ] || differ="$differ $cmd"
  compared=$((compared + 1))
done < "$tmp/usage"
check "each command's own usage is its line of hetsim --help${differ:+ (differ:$differ)}" test -z "$differ"
check "five commands have their own --help" test "$compared" -ge 5
summary() { sed -n "/^$2/,/^## /p" "$1" | awk '/^```$/ { if (on) exit; on = 1; next } on'; }
summary README.md '## Commands' > "$tmp/readme-usage"
check "the README's command summary is the usage of hetsim --help" cmp -s "$tmp/readme-usage" "$tmp/usage"
summary docs/cli.md '# The command line' > "$tmp/cli-usage"
check "docs/cli.md's command summary is the usage of hetsim --help" cmp -s "$tmp/cli-usage" "$tmp/usage"
missing=""
for cmd in $(awk '{ print $2 }' "$tmp/usage" | grep -v '^-' | sort -u); do
  grep -q "hetsim $cmd" docs/cli.md || missing="$missing $cmd"
done
check "docs/cli.md names every command${missing:+ (not:$missing)}" test -z "$missing"

# --- the man page
scripts/man-synopsis "$HETSIM" < hetsim.1 > "$tmp/hetsim.1"
check "hetsim.1's SYNOPSIS is what scripts/man-synopsis makes of --help (run make man)" cmp -s "$tmp/hetsim.1" hetsim.1
if command -v groff > /dev/null; then
  groff -man -Tutf8 -ww -z hetsim.1 2> "$tmp/groff"
  check "groff reads hetsim.1 without a warning" test ! -s "$tmp/groff"
else
  check "groff is installed to check the man page (apt-get install groff-base)" false
fi
check "the man page no longer sends readers to the README of the source distribution" \
  test "$(grep -c 'README of the source' hetsim.1)" -eq 0
check "the man page names the installed docs" grep -q 'share/doc/hetsim' hetsim.1
check "hetsim --help points to the man page and the installed docs" \
  sh -c "'$HETSIM' --help | grep -q 'man hetsim' && '$HETSIM' --help | grep -q 'share/doc/hetsim'"

# --- links
if command -v python3 > /dev/null; then
  python3 tests/docs/links.py README.md $(find docs -name '*.md' | sort) > "$tmp/links"
  check "every relative link of README.md and docs/ resolves" test $? -eq 0
  cat "$tmp/links"
else
  check "python3 is installed to check the links" false
fi

# --- the README's scenario runs as shown (timing mode, one round)
awk '/^```ini$/ { on = 1; next } on && /^```$/ { exit } on' README.md > "$tmp/readme.ini"
check "the README shows a scenario of at most 25 lines" test "$(wc -l < "$tmp/readme.ini")" -le 25 -a -s "$tmp/readme.ini"
"$HETSIM" run "$tmp/readme.ini" --db "$tmp/readme.db" --timing-only --set run.rounds=1 --quiet > /dev/null 2> "$tmp/err"
check "the README's scenario runs" test $? -eq 0
check "README.md stays short (at most 300 lines)" test "$(wc -l < README.md)" -le 300

# --- make install-share (the man page, the docs, the scenarios) into a scratch DESTDIR
env -u MAKEFLAGS -u MAKELEVEL make -s install-share DESTDIR="$tmp/inst" PREFIX=/usr > "$tmp/install.out" 2>&1
check "make install-share succeeds" test $? -eq 0
check "it installs the man page" cmp -s hetsim.1 "$tmp/inst/usr/share/man/man1/hetsim.1"
missing=""
for f in README.md $(find docs -type f); do cmp -s "$f" "$tmp/inst/usr/share/doc/hetsim/$f" || missing="$missing $f"; done
check "it installs README.md and every file of docs/ under share/doc/hetsim${missing:+ (not:$missing)}" test -z "$missing"
if command -v python3 > /dev/null; then
  (cd "$tmp/inst/usr/share/doc/hetsim" && python3 "$OLDPWD/tests/docs/links.py" README.md $(find docs -name '*.md'))
  check "the links resolve in the installed docs too" test $? -eq 0
fi

finish docs_check.sh
