#!/usr/bin/env bash
# docs/tutorial-python.md runs as written: its sh and python blocks, in order, in a
# scratch folder that looks like the source folder (hetsim, tests/ and python/ linked
# in). Python blocks share one interpreter state (they are one script, in order); a
# block whose first lines say `# needs pandas` or `# needs matplotlib` runs only when
# that imports (the interpreter is the first of python3, /usr/bin/python3 with pandas:
# Debian's python3-pandas installs for the system python), and the gnuplot block only
# when gnuplot is there. Then python/hetsim.py's own promises: runs() pivots by sigma
# with no string parsing, typed columns, run()'s errors.
. "$(dirname "$0")/lib.bash"
top=$(cd "$(dirname "$0")/../.." && pwd)
work="$tmp/src"
mkdir "$work"
ln -s "$HETSIM" "$work/hetsim"
ln -s "$top/tests" "$work/tests"
ln -s "$top/python" "$work/python"
export HETSIM

py=python3
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" > /dev/null && "$candidate" -c 'import pandas' 2> /dev/null; then py=$candidate; break; fi
done
has() { "$py" -c "import $1" 2> /dev/null; }
has pandas || echo "skip: pandas is not installed; the blocks that need it are left out"

# the blocks: tutorial.N.sh / tutorial.N.py, with the modules each needs
"$py" - "$top/docs/tutorial-python.md" "$tmp/blocks" <<'PY'
import os, re, sys
text = open(sys.argv[1]).read()
os.makedirs(sys.argv[2])
for n, (lang, body) in enumerate(re.findall(r"^```(sh|python)\n(.*?)^```", text, re.S | re.M)):
    open(os.path.join(sys.argv[2], "%02d.%s" % (n, "py" if lang == "python" else "sh")), "w").write(body)
PY
check "the tutorial has sh and python blocks" test "$(ls "$tmp/blocks" | wc -l)" -ge 6

: > "$tmp/script.py"
for block in "$tmp/blocks"/*; do
  skip=""
  for module in $(sed -n 's/^# needs \([a-z]*\)$/\1/p' "$block"); do has "$module" || skip="$module"; done
  if [ "${block##*.}" = sh ] && grep -q '^gnuplot' "$block" && ! command -v gnuplot > /dev/null; then skip=gnuplot; fi
  if [ -n "$skip" ]; then echo "skip block $(basename "$block"): no $skip"; continue; fi
  case $block in
    *.py) cat "$block" >> "$tmp/script.py" ;;
    # a shell block runs from the script at its place, so the blocks keep their order and
    # the python blocks one interpreter state
    *.sh) printf 'import subprocess as _s\n_s.run(["bash", "-e", %s], check=True)\n' "'$block'" >> "$tmp/script.py" ;;
  esac
done
(cd "$work" && "$py" "$tmp/script.py") > "$tmp/py.out" 2>&1
check "the tutorial's blocks run in order" test $? -eq 0
tail -5 "$tmp/py.out"
check "the sweep wrote tiny.db and said so" grep -q '^database: tiny.db' "$tmp/py.out"
check "the standard-library block wrote the data file" test "$(grep -c '^[0-9]' "$work/sigma.dat")" -eq 2
command -v gnuplot > /dev/null && check "gnuplot drew the figure" test -s "$work/sigma.png"
has pandas && check "the pivot table printed a row per sigma" grep -q '^1.5  ' "$tmp/py.out"
has matplotlib && has pandas && check "matplotlib drew the figure" test -s "$work/sigma-matplotlib.png"
check "the runs from Python landed in more.db" test "$(q "$work/more.db" "select count(*) from runs")" -eq 5

# runs(): every swept key a typed column; the numbers are run_params' own
cat > "$tmp/runs.py" <<'PY'
import sqlite3, sys
sys.path.insert(0, "python")
import hetsim
bad = []
rows = hetsim.runs("tiny.db", as_frame=False)
if len(rows) != 8: bad.append("rows %d" % len(rows))
for r in rows:
    if not isinstance(r["agents.compute.sigma"], float): bad.append("sigma not a float")
    if not isinstance(r["agents.compute.median"], int): bad.append("median not an int")
    if r["agents.compute.dist"] != "lognormal": bad.append("dist")
    if not isinstance(r["run.seed"], int) or r["run.seed"] != r["seed"]: bad.append("seed")
con = sqlite3.connect("tiny.db")
want = dict(con.execute("select run_id, value_num from run_params where section = 'agents' and key = 'compute.sigma'"))
if {r["id"]: r["agents.compute.sigma"] for r in rows} != want: bad.append("sigma differs from run_params")
time = dict(con.execute("select id, sim_time_s from run_summary"))
if {r["id"]: r["sim_time_s"] for r in rows} != time: bad.append("sim_time_s differs from run_summary")
if len(hetsim.rounds("tiny.db", run=[1, 2], as_frame=False)) != len(list(con.execute("select 1 from rounds where run_id in (1, 2)"))):
    bad.append("rounds(run=[1, 2])")
sweep = rows[0]["sweep"]
if len(hetsim.agents("tiny.db", sweep=sweep, as_frame=False)) != 48: bad.append("agents(sweep=)")
more = hetsim.runs("more.db", as_frame=False)
if more[0]["agents.compute.sigma"] != 1.5: bad.append("a run outside the sweep lacks the swept key's value")
try:
    hetsim.run("tests/fixtures/cli/tiny-sweep.ini", db="bad.db", agents__count="many")
    bad.append("a bad override did not raise")
except hetsim.HetsimError as e:
    if e.status != 2 or "agents.count" not in str(e): bad.append("HetsimError %r %r" % (e.status, str(e)))
if bad: print("\n".join(bad))
PY
(cd "$work" && "$py" "$tmp/runs.py") > "$tmp/runs.out" 2>&1
check "runs(): typed swept columns equal to run_params and run_summary; rounds, agents; errors raise" \
  test ! -s "$tmp/runs.out"
head -5 "$tmp/runs.out"

finish tutorial_python.sh
