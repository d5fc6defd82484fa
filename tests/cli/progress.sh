#!/usr/bin/env bash
# What `hetsim run` and `hetsim sweep` tell: on stderr a start line (run id, scenario,
# method, agents, mode, rounds, database), then a line per round with the wall time
# elapsed and an ETA (a redrawn bar on a terminal, tried under script(1) when it is
# there); on stdout `database: PATH` once rows are written, --quiet or not; without --db
# a note says the rows go to ./results.db. Nothing of it with --quiet but the database line.
. "$(dirname "$0")/lib.bash"
top=$(cd "$(dirname "$0")/../.." && pwd)
quick="$top/scenarios/quickstart.ini"

"$HETSIM" run "$quick" --db "$tmp/r.db" --timing-only --set run.rounds=3 > "$tmp/out" 2> "$tmp/err"
check "run exits 0" test $? -eq 0
check "the start line names run, scenario, method, agents, mode, rounds and database" \
  grep -qF "hetsim: run 1: quickstart ($quick): method comdml, 16 agents, timing mode, 3 rounds; database $tmp/r.db" "$tmp/err"
check "a line per round with elapsed time and ETA" \
  test "$(grep -c '^quickstart: round [1-3]/3 done at t = [0-9.]* s, elapsed [0-9]*s, ETA [0-9?]' "$tmp/err")" -eq 3
check "stdout says where the rows went, first" test "$(head -1 "$tmp/out")" = "database: $tmp/r.db"
check "... then the report" grep -q '^ *1  quickstart  comdml' "$tmp/out"

sed '/^rounds *=/d' "$quick" > "$tmp/budget.ini"
"$HETSIM" run "$tmp/budget.ini" --db "$tmp/r.db" --timing-only --set run.time_budget=60s > /dev/null 2> "$tmp/err"
check "a run on a time budget says so in its start line" grep -q 'rounds until 60 s of virtual time; database' "$tmp/err"

"$HETSIM" run "$quick" --db "$tmp/r.db" --timing-only --set run.rounds=2 --quiet > "$tmp/out" 2> "$tmp/err"
check "--quiet: nothing on stderr" test ! -s "$tmp/err"
check "... and only the database line on stdout" test "$(cat "$tmp/out")" = "database: $tmp/r.db"

mkdir "$tmp/here"
(cd "$tmp/here" && "$HETSIM" run "$quick" --timing-only --set run.rounds=1 > out 2> err)
check "without --db the rows go to ./results.db" test -s "$tmp/here/results.db"
check "... said on stdout" test "$(head -1 "$tmp/here/out")" = "database: results.db"
check "... and noted on stderr with the folder" grep -qF "hetsim: note: no --db given: the rows go to results.db in $tmp/here" "$tmp/here/err"
(cd "$tmp/here" && "$HETSIM" sweep "$top/tests/fixtures/cli/tiny-sweep.ini" --only run.method=sync --jobs 1 > out 2> err)
check "a sweep without --db says so too" \
  test "$(head -1 "$tmp/here/out")" = "database: results.db" -a -n "$(grep 'no --db given' "$tmp/here/err")"

"$HETSIM" run "$quick" --db "$tmp/refused.db" --set agents.count=0 > "$tmp/out" 2> /dev/null
check "a refused run prints no database line" test $? -eq 2 -a ! -s "$tmp/out"

if command -v script > /dev/null; then
  script -qc "'$HETSIM' run '$quick' --db '$tmp/tty.db' --timing-only --set run.rounds=3 2>&1 > /dev/null" /dev/null \
    < /dev/null > "$tmp/tty" 2>&1
  check "on a terminal: a bar with elapsed time and ETA, redrawn in place" \
    grep -q $'\rquickstart \[#*\.*\] round 3/3  t = [0-9.]* s  elapsed [0-9]*s  ETA 0s' "$tmp/tty"
else
  echo "skip terminal form: no script(1)"
fi

finish progress.sh
