"""hetsim.py — read hetsim result databases and run hetsim from Python.

Standard library only (sqlite3, subprocess); pandas is used when it is installed.

    import hetsim
    db = hetsim.sweep("tests/fixtures/cli/tiny-sweep.ini", db="tiny.db")
    runs = hetsim.runs(db)          # one row per run, every swept key a typed column
    runs.pivot_table(index="agents.compute.sigma", columns="method", values="sim_time_s")

Tables come back as pandas DataFrames when pandas is installed, else as lists of dicts
(one per row); as_frame=True insists on pandas, as_frame=False never uses it.

runs(db)     the view run_summary (one row per run: method, seed, status, virtual time,
             makespan, idle share, bytes, final accuracy, time to target, ...) plus one
             column per key swept in any of the runs (with every run's value of it,
             swept or not), named SECTION.KEY as in run_params ("run.method",
             "agents.compute", "agents.compute.sigma", "agents.slow.compute.median"),
             holding the number (SI units) when the value is one, else the text. A
             swept distribution gives its text, its kind (KEY.dist) and each of its
             parameters. run.seed is there when the sweep repeats seeds.
rounds(db)   the rounds table with makespan_s = t_end - t_start.
agents(db)   the view agent_summary (per agent: draws and time totals).
metrics(db)  the metrics table.
params(db)   run_params itself (every resolved key of every run).
Each takes run= (an id or a list of ids) and sweep= (a sweep id) to narrow it.

run(scenario, db=None, **overrides) and sweep(scenario, db=None, **overrides) call the
hetsim binary and return the database path it printed ("database: PATH"). Overrides are
--set values: a keyword SECTION__KEY=value (double underscore for the dot), or
set={"agents.slow.compute": "100 MFLOPS"} for keys a keyword cannot spell. The binary is
$HETSIM, else `hetsim` on PATH, else ../hetsim beside this file.
"""

import os
import shutil
import sqlite3
import subprocess

__all__ = ["runs", "rounds", "agents", "metrics", "params", "run", "sweep", "HetsimError"]


class HetsimError(RuntimeError):
    """The hetsim binary failed; .status is its exit status, .stderr what it said."""

    def __init__(self, message, status=None, stderr=""):
        super().__init__(message)
        self.status = status
        self.stderr = stderr


# ---- reading ----

def _connect(db):
    if not os.path.exists(db):
        raise FileNotFoundError(db)
    # read-only, as hetsim's own reports: never changes the file
    return sqlite3.connect("file:%s?mode=ro" % os.path.abspath(db), uri=True)


def _frame(rows, columns, as_frame):
    if as_frame is not False:
        try:
            import pandas
        except ImportError:
            if as_frame:
                raise
        else:
            return pandas.DataFrame(rows, columns=columns)
    return [dict(zip(columns, row)) for row in rows]


def _where(run, sweep, id_column, sweep_column="sweep", sweep_table=None):
    """An SQL condition and its parameters for run= and sweep=."""
    terms, args = [], []
    if run is not None:
        ids = [run] if isinstance(run, int) else list(run)
        terms.append("%s IN (%s)" % (id_column, ",".join("?" * len(ids))))
        args += ids
    if sweep is not None:
        if sweep_table:
            terms.append("%s IN (SELECT id FROM runs WHERE sweep = ?)" % id_column)
        else:
            terms.append("%s = ?" % sweep_column)
        args.append(sweep)
    return (" WHERE " + " AND ".join(terms)) if terms else "", args


def _query(db, sql, args, as_frame):
    con = _connect(db)
    try:
        cur = con.execute(sql, args)
        columns = [d[0] for d in cur.description]
        return _frame(cur.fetchall(), columns, as_frame)
    finally:
        con.close()


def _has(con, name):
    return con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def runs(db, run=None, sweep=None, as_frame=None):
    """One row per run: run_summary's columns, then one typed column per swept key."""
    con = _connect(db)
    try:
        if not _has(con, "run_summary"):
            raise ValueError("%s has no run_summary view (a database of hetsim 0.1.0: "
                             "writing one run to it with this hetsim upgrades it)" % db)
        where, args = _where(run, sweep, "id")
        cur = con.execute("SELECT * FROM run_summary%s ORDER BY id" % where, args)
        columns = [d[0] for d in cur.description]
        rows = [list(r) for r in cur.fetchall()]
        # run_summary's seed is the stored 64-bit pattern; the seed as the scenario gave it
        seed = columns.index("seed")
        for r in rows:
            if r[seed] is not None and r[seed] < 0:
                r[seed] += 1 << 64
        swept = []
        by_run = {}
        if _has(con, "run_params") and rows:
            ids = [r[0] for r in rows]
            marks = ",".join("?" * len(ids))
            # the keys swept in any of these runs, then their values in every run (a run
            # outside the sweep has them too, not swept)
            for section, key in con.execute(
                    "SELECT DISTINCT section, key FROM run_params WHERE swept AND run_id IN (%s)"
                    " ORDER BY run_id, rowid" % marks, ids):
                if section + "." + key not in swept:
                    swept.append(section + "." + key)
            for rid, section, key, text, num in con.execute(
                    "SELECT run_id, section, key, value_text, value_num FROM run_params"
                    " WHERE run_id IN (%s) AND section || '.' || key IN (SELECT section || '.' || key"
                    " FROM run_params WHERE swept AND run_id IN (%s))" % (marks, marks), ids + ids):
                by_run.setdefault(rid, {})[section + "." + key] = num if num is not None else text
        for name in swept:
            # whole numbers (counts, seeds) as int; the rest as they are
            values = [by_run.get(r[0], {}).get(name) for r in rows]
            if all(isinstance(v, float) and v.is_integer() and abs(v) < 2 ** 53 for v in values if v is not None):
                values = [int(v) if v is not None else None for v in values]
            for r, v in zip(rows, values):
                r.append(v)
        return _frame(rows, columns + swept, as_frame)
    finally:
        con.close()


def rounds(db, run=None, sweep=None, as_frame=None):
    """The rounds rows (per round: t_start, t_end, idle_s, bytes, ...) and makespan_s."""
    where, args = _where(run, sweep, "run_id", sweep_table=True)
    return _query(db, "SELECT *, t_end - t_start AS makespan_s FROM rounds%s ORDER BY run_id, round" % where,
                  args, as_frame)


def agents(db, run=None, sweep=None, as_frame=None):
    """agent_summary: per agent of a run, its draws and its time over the run."""
    where, args = _where(run, sweep, "run_id", sweep_table=True)
    return _query(db, "SELECT * FROM agent_summary%s ORDER BY run_id, agent" % where, args, as_frame)


def metrics(db, run=None, sweep=None, as_frame=None):
    """The metrics rows (agent None: the averaged model)."""
    where, args = _where(run, sweep, "run_id", sweep_table=True)
    return _query(db, "SELECT * FROM metrics%s ORDER BY run_id, t, rowid" % where, args, as_frame)


def params(db, run=None, sweep=None, as_frame=None):
    """run_params: every resolved key of every run (value_num in SI units, swept marked)."""
    where, args = _where(run, sweep, "run_id", sweep_table=True)
    return _query(db, "SELECT * FROM run_params%s ORDER BY run_id, rowid" % where, args, as_frame)


# ---- running ----

def _binary():
    found = os.environ.get("HETSIM") or shutil.which("hetsim")
    if found:
        return found
    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "hetsim")
    if os.path.exists(beside):
        return os.path.abspath(beside)
    raise HetsimError("no hetsim binary: set HETSIM, put hetsim on PATH, or build it (make)")


def _call(command, scenario, db, overrides, settings, extra):
    args = [_binary(), command, str(scenario), "--quiet"]
    if db is not None:
        args += ["--db", str(db)]
    for key, value in list((settings or {}).items()) + [(k.replace("__", "."), v) for k, v in overrides.items()]:
        args += ["--set", "%s=%s" % (key, value)]
    args += list(extra)
    done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    path = None
    for line in done.stdout.splitlines():
        if line.startswith("database: "):
            path = line[len("database: "):]
    if done.returncode != 0:
        raise HetsimError("hetsim %s exited %d: %s" % (command, done.returncode, done.stderr.strip()),
                          done.returncode, done.stderr)
    if path is None:
        raise HetsimError("hetsim %s printed no database line" % command, 0, done.stderr)
    return path


def run(scenario, db=None, set=None, args=(), **overrides):
    """Runs one scenario (`hetsim run`); returns the database path. args: more options
    (["--timing-only"], ["--threads", "2"])."""
    return _call("run", scenario, db, overrides, set, args)


def sweep(scenario, db=None, set=None, only=None, args=(), **overrides):
    """Runs a sweep (`hetsim sweep`); only={"run.method": ["sync", "comdml"]} runs a
    subset of its points (--only); returns the database path."""
    extra = list(args)
    for key, values in (only or {}).items():
        values = [values] if isinstance(values, str) else values
        extra += ["--only", "%s=%s" % (key, ", ".join("(%s)" % v if "," in str(v) else str(v) for v in values))]
    return _call("sweep", scenario, db, overrides, set, extra)
