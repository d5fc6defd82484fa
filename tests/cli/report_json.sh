#!/usr/bin/env bash
# `hetsim report --json`: valid JSON (python3 -m json.tool) holding every table the text
# report prints, keyed by the CSV names, numbers as JSON numbers equal to the database's
# own doubles (run_summary, rounds: compared exactly in Python's sqlite3), missing values
# null, and bad usage refused.
. "$(dirname "$0")/lib.bash"
top=$(cd "$(dirname "$0")/../.." && pwd)
db="$tmp/j.db"
"$HETSIM" sweep "$top/tests/fixtures/cli/tiny-sweep.ini" --db "$db" --jobs 2 --quiet > /dev/null
"$HETSIM" run "$top/tests/fixtures/cli/tiny-sweep.ini" --db "$db" --quiet --set run.method=localsgd > /dev/null 2>&1

"$HETSIM" report "$db" --json > "$tmp/all.json"
check "report --json exits 0" test $? -eq 0
python3 -m json.tool "$tmp/all.json" > /dev/null
check "... and prints valid JSON" test $? -eq 0

cat > "$tmp/compare.py" <<'PY'
import json, math, sqlite3, sys
db, path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
doc = json.load(open(path))
con = sqlite3.connect(db)
bad = []
def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return float(a) == float(b)  # exact: the JSON text reads back to the same double
if mode == "all":
    if sorted(doc) != ["database", "points", "runs", "speedup"]:
        bad.append("keys %s" % sorted(doc))
    cols = [r[1] for r in con.execute("pragma table_info(run_summary)")]
    rows = {r[0]: dict(zip(cols, r)) for r in con.execute("select * from run_summary")}
    if len(doc["runs"]) != len(rows):
        bad.append("runs: %d objects for %d runs" % (len(doc["runs"]), len(rows)))
    for obj in doc["runs"]:
        row = rows[obj["id"]]
        for key, value in obj.items():
            if key in row and not same(value, row[key]):
                bad.append("run %d %s: json %r, run_summary %r" % (obj["id"], key, value, row[key]))
        if not isinstance(obj["sim_time_s"], float) or not isinstance(obj["rounds"], int):
            bad.append("run %d: numbers are not JSON numbers" % obj["id"])
    if len(doc["points"]) != 5 or len(doc["speedup"]) != 2:
        bad.append("points %d, speedup %d" % (len(doc["points"]), len(doc["speedup"])))
else:
    run = int(mode)
    if sorted(doc) != ["database", "extra_meaning", "rounds", "runs"] or [r["id"] for r in doc["runs"]] != [run]:
        bad.append("--run: keys %s" % sorted(doc))
    stored = con.execute("select round, t_start, t_end, idle_s, bytes, extra from rounds where run_id = ? order by round", (run,)).fetchall()
    got = [(r["round"], r["t_start"], r["t_end"], r["idle_s"], r["bytes"], r["extra"]) for r in doc["rounds"]]
    if len(got) != len(stored) or not all(all(same(a, b) for a, b in zip(g, s)) for g, s in zip(got, stored)):
        bad.append("--run: rounds differ from the rounds table")
if bad: print("\n".join(bad))
PY
python3 "$tmp/compare.py" "$db" "$tmp/all.json" all > "$tmp/diff" 2>&1
check "every run's JSON equals its run_summary row, exactly" test ! -s "$tmp/diff"
head -5 "$tmp/diff"
check "a missing value is null" grep -q '"time_to_target_s": null' "$tmp/all.json"
check "... a seed a number" grep -q '"seed": 2,' "$tmp/all.json"

"$HETSIM" report "$db" --json --run 3 > "$tmp/run.json"
check "report --json --run exits 0" test $? -eq 0
python3 "$tmp/compare.py" "$db" "$tmp/run.json" 3 > "$tmp/diff" 2>&1
check "... with the run and its rounds as stored" test ! -s "$tmp/diff"
head -5 "$tmp/diff"
"$HETSIM" run "$top/tests/fixtures/cli/tiny-sweep.ini" --db "$tmp/qsr.db" --quiet --timing-only --set run.method=qsr > /dev/null 2>&1
"$HETSIM" report "$tmp/qsr.db" --json --run 1 > "$tmp/qsr.json"
python3 "$tmp/compare.py" "$tmp/qsr.db" "$tmp/qsr.json" 1 > "$tmp/diff" 2>&1
check "a run's rounds.extra as stored (qsr's H)" test ! -s "$tmp/diff"
head -5 "$tmp/diff"
check "... and what it means, the text of hetsim methods qsr" \
  test "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["extra_meaning"])' "$tmp/qsr.json")" = \
       "$("$HETSIM" methods qsr | sed -n 's/^  rounds.extra: //p')"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["extra_meaning"] is not None)' "$tmp/run.json"
check "... null for a run whose method logs none (comdml without churn)" test $? -eq 0
"$HETSIM" report "$db" --json --table points | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(sorted(d) != ["database", "points"])'
check "--table keeps one table" test $? -eq 0
"$HETSIM" report "$db" --json --table speedup | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(not all(r["method"] == "comdml" and r["speedup_mean"] > 1 for r in d["speedup"]))'
check "... the speedups as numbers" test $? -eq 0

"$HETSIM" report "$db" --json --csv > "$tmp/out" 2> "$tmp/err"
check "--json with --csv exits 2" test $? -eq 2
check "... saying why" grep -q -- "--csv and --json exclude each other" "$tmp/err"
"$HETSIM" report "$db" --json --run 99 > "$tmp/out" 2> "$tmp/err"
check "--json of an unknown run exits 2 naming it, printing nothing" \
  test $? -eq 2 -a ! -s "$tmp/out" -a -n "$(grep 'no run with id 99' "$tmp/err")"
"$HETSIM" report --help | grep -q -- '--json'
check "report --help names --json" test $? -eq 0

check "the man page describes --json" grep -q '^\.B \\-\\-json$' "$top/hetsim.1"

finish report_json.sh
