#!/usr/bin/env bash
# `hetsim show DB RUN` (title, provenance, run_summary with units, the resolved scenario
# with swept keys marked, the rounds with rounds.extra titled with its meaning) and `hetsim diff DB RUN RUN` (keys that differ from
# run_params, then figures from run_summary), on a sweep and on the previous release's
# database; bad input: an unknown run id, a run of another sweep, not a run id — exit 2
# naming it, nothing on stdout.
. "$(dirname "$0")/lib.bash"
top=$(cd "$(dirname "$0")/../.." && pwd)
tiny="$top/tests/fixtures/cli/tiny-sweep.ini"
db="$tmp/s.db"
"$HETSIM" sweep "$tiny" --db "$db" --jobs 2 --quiet > /dev/null
"$HETSIM" run "$tiny" --db "$db" --quiet --set run.method=localsgd > /dev/null 2>&1
sweep=$(q "$db" "select sweep from runs where id = 1")

"$HETSIM" show --help > "$tmp/h"; check "show --help exits 0" test $? -eq 0
"$HETSIM" diff --help > "$tmp/h"; check "diff --help exits 0" test $? -eq 0
"$HETSIM" --help | grep -q 'hetsim show' && "$HETSIM" --help | grep -q 'hetsim diff'
check "hetsim --help lists show and diff" test $? -eq 0

"$HETSIM" show "$db" 7 > "$tmp/show" 2> "$tmp/err"
check "show exits 0" test $? -eq 0
check "... titles the run" grep -q '^run 7: tiny, method comdml, seed 1, done' "$tmp/show"
check "... with its place in the sweep" grep -q "^  sweep $sweep (run 7 of its 8, ids 1-8)" "$tmp/show"
check "... its provenance: version and command" \
  test -n "$(grep '^  version  *hetsim ' "$tmp/show")" -a -n "$(grep '^  command  *hetsim sweep ' "$tmp/show")"
sim=$(q "$db" "select sim_time_s from run_summary where id = 7")
got=$(sed -n 's/^  sim_time_s  *\([^ ]*\) s$/\1/p' "$tmp/show")
check "... the summary in full precision, with units ($got)" test "$(q "$db" "select $got = sim_time_s from run_summary where id = 7")" = 1
check "... the resolved scenario, swept keys marked" grep -q '^compute = lognormal(20000000, 1.5)   ; swept' "$tmp/show"
check "... and the rounds" test "$(sed -n '/^rounds$/,$p' "$tmp/show" | grep -c '^  7  ')" -eq 8
"$HETSIM" show "$db" 1 --scenario-text > "$tmp/text"
check "--scenario-text prints the file as read" cmp -s "$tmp/text" "$tiny"
"$HETSIM" show "$db" 2 --sweep "$sweep" > /dev/null
check "--sweep of the run's own sweep exits 0" test $? -eq 0

"$HETSIM" diff "$db" 1 7 > "$tmp/diff" 2> "$tmp/err"
check "diff exits 0" test $? -eq 0
check "... lists the swept method" grep -q '^  run.method  *sync  *comdml$' "$tmp/diff"
check "... and sigma as a number of its own" grep -q '^  agents.compute.sigma  *0.5  *1.5$' "$tmp/diff"
check "... not the keys that agree" test -z "$(grep '^  agents.count ' "$tmp/diff")"
check "... then the figures that differ, with units" grep -q '^  sim_time_s (s) ' "$tmp/diff"
"$HETSIM" diff "$db" 3 3 > "$tmp/same"
check "a run against itself differs in nothing" test "$(grep -c '^  none: ' "$tmp/same")" -eq 2
"$HETSIM" diff "$db" 1 9 > /dev/null
check "runs of different sweeps compare (a sweep's and a single run)" test $? -eq 0

# rounds.extra: its column titled with what the figure means in the run, the text the
# method's table gives (`hetsim methods NAME`), chosen by the run's keys; no column when
# the method logs nothing
x="$tmp/x.db"
"$HETSIM" run "$tiny" --db "$x" --quiet --timing-only --set run.method=qsr > /dev/null 2>&1
"$HETSIM" run "$tiny" --db "$x" --quiet --timing-only --set run.method=sync --set method.sync.deadline=20ms > /dev/null 2>&1
"$HETSIM" run "$tiny" --db "$x" --quiet --timing-only --set run.method=sync > /dev/null 2>&1
qsr=$("$HETSIM" methods qsr | sed -n 's/^  rounds.extra: //p')
late=$("$HETSIM" methods sync | sed -n 's/^    deadline is not none: //p')
check "hetsim methods says what qsr's and a late sync's rounds.extra mean" test -n "$qsr" -a -n "$late"
"$HETSIM" show "$x" 1 > "$tmp/x1"
check "show titles qsr's extra column with its meaning" \
  grep -qF "bytes  extra ($qsr)" "$tmp/x1"
check "... above the periods H" test "$(sed -n '/^rounds$/,$p' "$tmp/x1" | grep -cE '^  1  .* [0-9]+$')" -eq 8
"$HETSIM" show "$x" 2 > "$tmp/x2"
check "show titles sync's with the meaning its deadline chooses" grep -qF "bytes  extra ($late)" "$tmp/x2"
"$HETSIM" show "$x" 3 > "$tmp/x3"
check "a sync run without a deadline logs nothing: no extra column" \
  test -z "$(sed -n '/^rounds$/,$p' "$tmp/x3" | grep extra)"
"$HETSIM" report "$x" --run 2 > "$tmp/x2r"
check "report --run titles it too" grep -qF "extra ($late)" "$tmp/x2r"

# bad input
bad() { # name, expected stderr text, command...
  local name=$1 text=$2; shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"
  local status=$?
  check "$name exits 2" test $status -eq 2
  check "... saying '$text'" grep -qF "$text" "$tmp/err"
  check "... printing nothing on stdout" test ! -s "$tmp/out"
}
bad "show of an unknown run" "no run with id 99" "$HETSIM" show "$db" 99
bad "diff with an unknown run" "no run with id 42" "$HETSIM" diff "$db" 1 42
bad "show of a run of another sweep" "run 9 is not of sweep $sweep (it is of no sweep)" "$HETSIM" show "$db" 9 --sweep "$sweep"
bad "diff with a run of another sweep" "run 2 is of sweep $sweep, not sw-0000000000000000" \
  "$HETSIM" diff "$db" 2 3 --sweep sw-0000000000000000
bad "show with a run that is not an id" "RUN is a run id (a positive whole number), not 'first'" "$HETSIM" show "$db" first
bad "diff with one run" "missing an argument" "$HETSIM" diff "$db" 1
bad "show of a file that is not a database" "not a SQLite database" "$HETSIM" show "$tiny" 1

# the previous release's database (schema version 1): what it has, and what it lacks said
sqlite3 "$tmp/old.db" < "$top/tests/fixtures/store/release-0.1.0.sql"
cp "$tmp/old.db" "$tmp/old-copy.db"
"$HETSIM" show "$tmp/old.db" 2 > "$tmp/old" 2> "$tmp/err"
check "show opens the previous release's database" test $? -eq 0
check "... says what provenance it lacks" grep -q 'no version, command or host' "$tmp/old"
check "... and has no run_summary" grep -q 'no run_summary view' "$tmp/old"
check "... and still prints the config and rounds" \
  test -n "$(grep '^\[agents\]' "$tmp/old")" -a -n "$(sed -n '/^rounds$/,$p' "$tmp/old" | grep '^  2  ')"
"$HETSIM" diff "$tmp/old.db" 1 5 > "$tmp/old" 2> "$tmp/err"
check "diff compares its runs on their config lines" grep -q '^config: the keys that differ (runs.config)' "$tmp/old"
check "... finding what differs" test "$(sed -n '/^config/,/^$/p' "$tmp/old" | grep -c '^  [a-z]')" -ge 2
check "... and leave the file as it was" cmp -s "$tmp/old.db" "$tmp/old-copy.db"

check "the man page describes show" grep -q '^\.B show$' "$top/hetsim.1"
check "the man page describes diff" grep -q '^\.B diff$' "$top/hetsim.1"

finish show.sh
