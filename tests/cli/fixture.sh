#!/usr/bin/env bash
# A database written by the previous release (hetsim 0.1.0, schema version 1:
# tests/fixtures/store/release-0.1.0.sql, the dump of the file made from release-0.1.0.ini with that release's
# `hetsim sweep` and one `hetsim run --timing-only --set run.method=localsgd`) still
# opens, reports and plots without being changed, and is upgraded when a run is written
# to it: version 2, the views, every old run reported as before and by run_summary,
# its sweep (written before sweeps were claimed) found again by --resume.
. "$(dirname "$0")/lib.bash"
top=$(cd "$(dirname "$0")/../.." && pwd)
fixture="$tmp/release-0.1.0.db"
scenario="$top/tests/fixtures/store/release-0.1.0.ini"
# Kept as text (a dump, with the release's user_version) so that it is reviewable and not
# caught by .gitignore's *.db; the file the release wrote is rebuilt from it here.
sqlite3 "$fixture" < "$top/tests/fixtures/store/release-0.1.0.sql"
cp "$fixture" "$tmp/old.db"

check "the fixture is schema version 1" test "$(q "$tmp/old.db" "pragma user_version")" -eq 1
"$HETSIM" report "$tmp/old.db" > "$tmp/report.txt" 2> "$tmp/err"
check "report opens it (exit 0)" test $? -eq 0
check "... and lists its 5 runs" test "$(grep -c -E '^ *[1-5] ' "$tmp/report.txt")" -ge 5
"$HETSIM" report "$tmp/old.db" --csv > "$tmp/before.csv"
"$HETSIM" plot "$tmp/old.db" --out "$tmp/plots" > /dev/null 2> "$tmp/err"
check "plot draws it (exit 0)" test $? -eq 0
check "... into figures" test "$(ls "$tmp/plots" | wc -l)" -gt 0
check "report and plot leave the file as it was" cmp -s "$fixture" "$tmp/old.db"

"$HETSIM" run "$scenario" --db "$tmp/old.db" --quiet --timing-only > /dev/null 2> "$tmp/err"
check "a run appends to it (exit 0)" test $? -eq 0
check "... which upgrades it to version 2" test "$(q "$tmp/old.db" "pragma user_version")" -eq 2
check "... with the views" test "$(q "$tmp/old.db" "select count(*) from sqlite_master where type = 'view'")" -eq 4
check "... and the new run's keys in run_params" test "$(q "$tmp/old.db" "select count(distinct run_id) from run_params")" -eq 1
"$HETSIM" report "$tmp/old.db" --csv > "$tmp/after.csv"
check "the old runs report as before" cmp -s "$tmp/before.csv" <(head -6 "$tmp/after.csv")
same_as_report "$tmp/old.db" > "$tmp/diff"
check "run_summary agrees with the report on old and new runs" test ! -s "$tmp/diff"
head -3 "$tmp/diff"
check "... the old runs' target read from their config" \
  test "$(q "$tmp/old.db" "select count(*) from run_summary where id <= 5 and target_accuracy = 0.3")" -eq 5
"$HETSIM" plot "$tmp/old.db" --out "$tmp/plots2" > /dev/null 2>&1
check "plot draws the upgraded file" test $? -eq 0

# The release's sweep, resumed: a sweep's id hashes the resolved configs, which gain a
# line whenever a key is added, so the id this hetsim gives the same file is found first
# (on a scratch copy) and given to the release's runs, as a release with the same keys
# would have written them.
cp "$tmp/old.db" "$tmp/scratch.db"
id=$("$HETSIM" sweep "$scenario" --db "$tmp/scratch.db" --resume --jobs 1 2>&1 > /dev/null |
     sed -n 's/.*no earlier runs of sweep \(sw-[0-9a-f]*\).*/\1/p')
check "this hetsim names the fixture's sweep" test -n "$id"
q "$tmp/old.db" "update runs set sweep = '$id' where sweep is not null"
"$HETSIM" sweep "$scenario" --db "$tmp/old.db" --quiet > /dev/null 2> "$tmp/err"
check "the release's sweep is found again: refused without --resume" test $? -eq 2
"$HETSIM" sweep "$scenario" --db "$tmp/old.db" --resume --jobs 1 > /dev/null 2> "$tmp/err"
check "... and --resume keeps its 4 done runs, runs nothing" test $? -eq 0 -a "$(q "$tmp/old.db" "select count(*) from runs")" -eq 6
grep -q "4 of 4 runs kept" "$tmp/err"
check "... saying so" test $? -eq 0

finish fixture.sh
