/* store.c — the Sink over SQLite: schema, version checks, buffered batched writes.
 * See store.h for the conventions and why rows are buffered. The tables, their INSERTs
 * and binds and the upgrade of older files are generated from the row tables of
 * sim/kernel/sink.h, so a column is added there, not here. One file on purpose: every
 * statement is prepared, bound and finalized here (about 1,000 lines). */
#include "analysis/store.h"
#include "analysis/store_vfs.h"

#include <math.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Rows wait in memory at most about this long (checked when the next row arrives), so a
 * slow train-mode run still shows its progress to a reader of the database. */
#define STORE_FLUSH_SECONDS 1.0

/* ---- views: the figures reports derive (analysis/runset.h), as SQL a reader can query
 * without hetsim. Each view's columns are described by a list like the row tables', so
 * the reference (docs/database.md) is generated from the same lists and a test checks
 * the lists against the views' real columns. ---- */

/* run_summary: one row per run, with the columns of `hetsim report --csv` (the same
 * definitions, runset.h) and a few more. */
#define STORE_RUN_SUMMARY_COLUMNS(X) \
    X(STORE, INT64, id, "", 0, "run id") \
    X(STORE, TEXT, name, "", 0, "[run] name") \
    X(STORE, TEXT, method, "", 0, "[run] method") \
    X(STORE, SEED, seed, "", 0, "[run] seed") \
    X(STORE, TEXT, status, "", 0, "running | done | failed | diverged | interrupted") \
    X(STORE, TEXT, mode, "", 0, "train | timing") \
    X(STORE, INT64, rounds, "", 0, "rounds done (logged rounds while the run has not ended)") \
    X(STORE, REAL, sim_time_s, "s", 0, "virtual time at the end (the last round's end while running)") \
    X(STORE, REAL, makespan_s, "s", 0, "mean round makespan, t_end - t_start") \
    X(STORE, REAL, idle_share, "1", 0, "idle time / (agents x total round time)") \
    X(STORE, REAL, bytes, "B", 0, "bytes put on the wire, all rounds (cumulative)") \
    X(STORE, REAL, final_accuracy, "1", 0, "last test accuracy of the averaged model") \
    X(STORE, REAL, target_accuracy, "1", 0, "[run] target_accuracy; NULL when none") \
    X(STORE, REAL, time_to_target_s, "s", 0, "virtual time the averaged model first reached the target") \
    X(STORE, REAL, predicted_round_s, "s", 0, "ComDML: mean predicted time of a pair") \
    X(STORE, REAL, actual_round_s, "s", 0, "ComDML: mean played-out time of a pair") \
    X(STORE, REAL, offload_share, "1", 0, "ComDML: share of agent-rounds in the offloader role") \
    X(STORE, TEXT, sweep, "", 0, "sweep id; NULL outside a sweep") \
    X(STORE, TEXT, point, "", 0, "sweep point label without the seed ('' for a sweep without axes)") \
    X(STORE, REAL, energy_j, "J", 0, "sum of rounds.energy_j; NULL when energy is not modelled") \
    X(STORE, REAL, energy_to_target_j, "J", 0, "sum of rounds.energy_j over the rounds that ended by time_to_target_s") \
    X(STORE, REAL, wall_s, "s", SINK_WALL, "wall-clock duration")

/* the first time the averaged model reached the run's target (t: run_targets) */
#define STORE_TIME_TO_TARGET_SQL \
    "(SELECT m.t FROM metrics m WHERE m.run_id = r.id AND m.agent IS NULL AND m.t IS NOT NULL" \
    " AND m.test_accuracy >= t.target ORDER BY m.t, m.rowid LIMIT 1)"

static const char run_summary_sql[] =
    "CREATE VIEW run_summary AS SELECT r.id AS id, r.name AS name, r.method AS method, r.seed AS seed,"
    " r.status AS status, r.mode AS mode,"
    " coalesce(r.rounds_done, (SELECT count(*) FROM rounds WHERE run_id = r.id)) AS rounds,"
    " coalesce(r.sim_time_s, (SELECT max(t_end) FROM rounds WHERE run_id = r.id)) AS sim_time_s,"
    " (SELECT avg(t_end - t_start) FROM rounds WHERE run_id = r.id) AS makespan_s,"
    " (SELECT CASE WHEN i.idle IS NOT NULL AND i.span IS NOT NULL AND i.agents > 0 AND i.span > 0"
    "   THEN i.idle / (i.agents * i.span) END FROM"
    "  (SELECT coalesce((SELECT sum(idle_s) FROM agent_rounds WHERE run_id = r.id),"
    /* [run] record = summary: no agent_rounds; the rounds' idle time is the same sum */
    "    CASE WHEN instr(r.config, char(10) || 'record = summary' || char(10)) > 0"
    "    THEN (SELECT sum(idle_s) FROM rounds WHERE run_id = r.id) END) AS idle,"
    "   (SELECT count(*) FROM agents WHERE run_id = r.id) AS agents,"
    "   (SELECT sum(t_end - t_start) FROM rounds WHERE run_id = r.id) AS span) AS i) AS idle_share,"
    " (SELECT sum(bytes) FROM rounds WHERE run_id = r.id) AS bytes,"
    " r.final_accuracy AS final_accuracy,"
    " t.target AS target_accuracy,"
    " " STORE_TIME_TO_TARGET_SQL " AS time_to_target_s,"
    " CASE WHEN r.method = 'comdml' OR EXISTS (SELECT 1 FROM pairings WHERE run_id = r.id)"
    "  THEN (SELECT avg(predicted_s) FROM pairings WHERE run_id = r.id) END AS predicted_round_s,"
    " CASE WHEN r.method = 'comdml' OR EXISTS (SELECT 1 FROM pairings WHERE run_id = r.id)"
    "  THEN (SELECT avg(actual_s) FROM pairings WHERE run_id = r.id) END AS actual_round_s,"
    " CASE WHEN r.method = 'comdml' OR EXISTS (SELECT 1 FROM pairings WHERE run_id = r.id)"
    "  THEN (SELECT avg(role = 'offloader') FROM agent_rounds WHERE run_id = r.id) END AS offload_share,"
    " r.sweep AS sweep,"
    /* the label without its last pair seed=N (sweep.h); '' when that is all of it */
    " CASE WHEN r.sweep IS NULL THEN NULL WHEN r.point IS NULL THEN ''"
    "  WHEN rtrim(r.point, '0123456789') = 'seed=' THEN ''"
    "  WHEN rtrim(r.point, '0123456789') LIKE '% seed=' AND rtrim(r.point, '0123456789') <> r.point"
    "  THEN substr(r.point, 1, length(rtrim(r.point, '0123456789')) - 6) ELSE r.point END AS point,"
    " (SELECT sum(energy_j) FROM rounds WHERE run_id = r.id) AS energy_j,"
    " (SELECT sum(energy_j) FROM rounds WHERE run_id = r.id AND t_end <= " STORE_TIME_TO_TARGET_SQL
    ") AS energy_to_target_j,"
    " r.wall_s AS wall_s"
    " FROM runs r LEFT JOIN run_targets t ON t.run_id = r.id";

/* run_targets (not documented on its own: run_summary's and time_to_accuracy's helper):
 * [run] target_accuracy of each run when > 0, from run_params, or from runs.config for
 * a run written before run_params existed. */
static const char run_targets_sql[] =
    "CREATE VIEW run_targets AS SELECT r.id AS run_id, coalesce("
    " (SELECT CASE WHEN p.value_num > 0 AND p.value_num < 9e999 THEN p.value_num END FROM run_params p"
    "  WHERE p.run_id = r.id AND p.section = 'run' AND p.key = 'target_accuracy'),"
    " (SELECT CASE WHEN v > 0 AND v < 9e999 THEN v END FROM (SELECT CAST(substr(r.config, instr(r.config,"
    "   char(10) || 'target_accuracy = ') + 19, instr(substr(r.config, instr(r.config, char(10) ||"
    "   'target_accuracy = ') + 19) || char(10), char(10)) - 1) AS REAL) AS v"
    "   WHERE NOT EXISTS (SELECT 1 FROM run_params WHERE run_id = r.id)"
    "   AND instr(r.config, char(10) || 'target_accuracy = ') > 0))) AS target"
    " FROM runs r";

/* agent_summary: one row per agent of a run, its draws and its time over the run. */
#define STORE_AGENT_SUMMARY_COLUMNS(X) \
    X(STORE, INT64, run_id, "", 0, "run id") \
    X(STORE, INT, agent, "", 0, "agent index") \
    X(STORE, TEXT, grp, "", 0, "group") \
    X(STORE, REAL, compute, "FLOP/s", 0, "compute speed") \
    X(STORE, REAL, uplink, "B/s", 0, "uplink bandwidth") \
    X(STORE, REAL, downlink, "B/s", 0, "downlink bandwidth") \
    X(STORE, REAL, latency, "s", 0, "latency") \
    X(STORE, INT, samples, "", 0, "training samples") \
    X(STORE, INT, byzantine, "", 0, "1 if the agent attacks") \
    X(STORE, INT64, rounds, "", 0, "agent_rounds rows of the agent") \
    X(STORE, REAL, compute_s_total, "s", 0, "time computing, all rounds") \
    X(STORE, REAL, comm_s_total, "s", 0, "time communicating, all rounds") \
    X(STORE, REAL, idle_s_total, "s", 0, "time idle, all rounds") \
    X(STORE, REAL, offline_s_total, "s", 0, "time offline, all rounds") \
    X(STORE, REAL, idle_share, "1", 0, "idle_s_total / the run's total round time") \
    X(STORE, INT64, offloader_rounds, "", 0, "rounds in ComDML's offloader role") \
    X(STORE, INT64, helper_rounds, "", 0, "rounds in ComDML's helper role")

static const char agent_summary_sql[] =
    "CREATE VIEW agent_summary AS SELECT a.run_id AS run_id, a.agent AS agent, a.grp AS grp,"
    " a.compute AS compute, a.uplink AS uplink, a.downlink AS downlink, a.latency AS latency,"
    " a.samples AS samples, a.byzantine AS byzantine, s.rounds AS rounds,"
    " s.compute_s AS compute_s_total, s.comm_s AS comm_s_total, s.idle_s AS idle_s_total,"
    " s.offline_s AS offline_s_total,"
    " s.idle_s / (SELECT CASE WHEN sum(t_end - t_start) > 0 THEN sum(t_end - t_start) END FROM rounds"
    "  WHERE run_id = a.run_id) AS idle_share,"
    " s.offloader AS offloader_rounds, s.helper AS helper_rounds"
    " FROM agents a LEFT JOIN (SELECT run_id, agent, count(*) AS rounds, sum(compute_s) AS compute_s,"
    "  sum(comm_s) AS comm_s, sum(idle_s) AS idle_s, sum(offline_s) AS offline_s,"
    "  sum(role = 'offloader') AS offloader, sum(role = 'helper') AS helper"
    "  FROM agent_rounds GROUP BY run_id, agent) s ON s.run_id = a.run_id AND s.agent = a.agent";

/* time_to_accuracy: for every run with accuracy rows of the averaged model, the first
 * virtual time it reached each of a fixed ladder of accuracies and the run's own
 * target. */
#define STORE_TIME_TO_ACCURACY_COLUMNS(X) \
    X(STORE, INT64, run_id, "", 0, "run id") \
    X(STORE, REAL, accuracy, "1", 0, "0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95 and the run's target_accuracy") \
    X(STORE, REAL, time_s, "s", 0, "virtual time the averaged model first reached it; NULL when it never did") \
    X(STORE, INT, round, "", 0, "the round of that evaluation") \
    X(STORE, INT, is_target, "", 0, "1 for the run's [run] target_accuracy")

static const char time_to_accuracy_sql[] =
    "CREATE VIEW time_to_accuracy AS WITH levels(accuracy) AS (VALUES (0.5), (0.6), (0.7), (0.75), (0.8),"
    " (0.85), (0.9), (0.95)),"
    " wanted(run_id, accuracy, is_target) AS (SELECT r.id, l.accuracy, 0 FROM runs r, levels l"
    "  UNION SELECT run_id, target, 1 FROM run_targets WHERE target IS NOT NULL)"
    " SELECT w.run_id AS run_id, w.accuracy AS accuracy,"
    " (SELECT m.t FROM metrics m WHERE m.run_id = w.run_id AND m.agent IS NULL AND m.t IS NOT NULL"
    "  AND m.test_accuracy >= w.accuracy ORDER BY m.t, m.rowid LIMIT 1) AS time_s,"
    " (SELECT m.round FROM metrics m WHERE m.run_id = w.run_id AND m.agent IS NULL AND m.t IS NOT NULL"
    "  AND m.test_accuracy >= w.accuracy ORDER BY m.t, m.rowid LIMIT 1) AS round,"
    " max(w.is_target) AS is_target"
    " FROM wanted w WHERE EXISTS (SELECT 1 FROM metrics m WHERE m.run_id = w.run_id AND m.agent IS NULL"
    "  AND m.test_accuracy IS NOT NULL) GROUP BY w.run_id, w.accuracy";

/* schema_columns: every column of every table and view with its SI unit and meaning,
 * written from these lists whenever the schema is created or upgraded. */
#define STORE_SCHEMA_COLUMNS(X) \
    X(STORE, TEXT, table_name, "", SINK_KEY, "table or view") \
    X(STORE, TEXT, column_name, "", SINK_KEY, "column") \
    X(STORE, TEXT, type, "", 0, "INTEGER | REAL | TEXT") \
    X(STORE, TEXT, unit, "", 0, "SI unit of a number: s, ms, B, B/s, FLOP/s; 1 for a fraction; '' none") \
    X(STORE, TEXT, doc, "", 0, "what the column holds") \
    X(STORE, INT, is_result, "", 0, "0 for a column measured on the wall clock or saying where and how the run " \
      "was started (the same results may differ there), else 1")

static const SinkColumn run_summary_columns[] = { STORE_RUN_SUMMARY_COLUMNS(SINK_COLUMN_OWN) };
static const SinkColumn agent_summary_columns[] = { STORE_AGENT_SUMMARY_COLUMNS(SINK_COLUMN_OWN) };
static const SinkColumn time_to_accuracy_columns[] = { STORE_TIME_TO_ACCURACY_COLUMNS(SINK_COLUMN_OWN) };
static const SinkColumn schema_columns_columns[] = { STORE_SCHEMA_COLUMNS(SINK_COLUMN_OWN) };
#define STORE_COUNT_OF(a) (int)(sizeof a / sizeof a[0])
static const SinkTable schema_columns_table = {"schema_columns", "column", 1, schema_columns_columns,
                                               STORE_COUNT_OF(schema_columns_columns),
                                               "every column of every table and view: unit and meaning"};

const StoreView store_views[STORE_VIEW_COUNT] = {
    {"run_summary", "one row per run: the figures of `hetsim report` (analysis/runset.h)", run_summary_sql,
     run_summary_columns, STORE_COUNT_OF(run_summary_columns)},
    {"agent_summary", "one row per agent of a run: its draws and where its time went", agent_summary_sql,
     agent_summary_columns, STORE_COUNT_OF(agent_summary_columns)},
    {"time_to_accuracy", "per run with accuracy rows: when the averaged model first reached each accuracy",
     time_to_accuracy_sql, time_to_accuracy_columns, STORE_COUNT_OF(time_to_accuracy_columns)},
};

/* What the store adds to the row tables of sim/kernel/sink.h: the order tables are created in,
 * the index of each (rows are read by run, then by round), and the run_id column every
 * per-run table starts with. No UNIQUE constraints on rows: the store records what the
 * engine reports and does not judge it (an asynchronous method may report an agent
 * twice in a "round"). runs.id is AUTOINCREMENT so that an id deleted by sweep --resume
 * is never given to another run by the database itself. */
typedef struct StoreTable {
    const SinkTable *table;
    int per_run;        /* starts with run_id */
    const char *index;  /* CREATE INDEX statement */
} StoreTable;

/* sweeps: the store's own table, one row per sweep claimed in the file. Its runs have
 * the ids first_run .. first_run + runs - 1 in the order of the expansion (sweep.h),
 * reserved when the sweep is claimed. */
#define STORE_SWEEP_COLUMNS(X) \
    X(STORE, TEXT, sweep, "", SINK_KEY, "sweep id (runs.sweep)") \
    X(STORE, INT64, first_run, "", SINK_KEY, "run id of the sweep's first run; run i of the expansion is first_run + i") \
    X(STORE, INT64, runs, "", SINK_KEY, "runs of the sweep (points x repeat)") \
    X(STORE, INT64, points, "", 0, "points of the sweep") \
    X(STORE, INT, repeat, "", 0, "seeds per point") \
    X(STORE, TEXT, created_at, "", SINK_WALL, "wall-clock time the sweep was claimed, ISO-8601 UTC")

static const SinkColumn sweep_columns[] = { STORE_SWEEP_COLUMNS(SINK_COLUMN_OWN) };
static const SinkTable sweeps_table = {"sweeps", "sweep", 1, sweep_columns,
                                       (int)(sizeof sweep_columns / sizeof sweep_columns[0]),
                                       "one row per sweep claimed in the file, with the run ids it reserved"};

static const StoreTable store_tables[] = {
    {&sink_tables[SINK_RECORD_RUN], 0, "CREATE INDEX runs_sweep ON runs(sweep, point)"},
    {&sink_tables[SINK_RECORD_AGENT], 1, "CREATE INDEX agents_run ON agents(run_id, agent)"},
    {&sink_tables[SINK_RECORD_ROUND], 1, "CREATE INDEX rounds_run ON rounds(run_id, round)"},
    {&sink_tables[SINK_RECORD_AGENT_ROUND], 1, "CREATE INDEX agent_rounds_run ON agent_rounds(run_id, round)"},
    {&sink_tables[SINK_RECORD_PAIRING], 1, "CREATE INDEX pairings_run ON pairings(run_id, round)"},
    {&sink_tables[SINK_RECORD_METRIC], 1, "CREATE INDEX metrics_run ON metrics(run_id, round)"},
    {&sweeps_table, 0, "CREATE UNIQUE INDEX sweeps_id ON sweeps(sweep)"},
    {&sink_tables[SINK_RECORD_PARAM], 1, "CREATE INDEX run_params_run ON run_params(run_id, section, key)"},
    {&schema_columns_table, 0, "CREATE UNIQUE INDEX schema_columns_name ON schema_columns(table_name, column_name)"},
};
#define STORE_TABLE_COUNT (int)(sizeof store_tables / sizeof store_tables[0])

/* The tables every hetsim database has had since schema version 1: a file with the
 * version but not all of these is not ours. Tables added later are created when an
 * older file is opened for writing. */
static const char v1_tables_sql[] =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
    " ('runs','agents','rounds','agent_rounds','pairings','metrics')";
#define V1_TABLE_COUNT 6

/* Every statement that is not generated from the row tables, prepared once at open. */
enum {
    STMT_BEGIN, STMT_COMMIT, STMT_ROLLBACK,
    STMT_MARK_INTERRUPTED, STMT_RUN_EXISTS,
    STMT_DELETE_RUN,
    STMT_LIST_SWEEP, STMT_POINT_RUNS, STMT_FIND_SWEEP, STMT_COUNT_SWEEP_RUNS,
    STMT_LAST_ID, STMT_SET_SEQUENCE, STMT_ADD_SEQUENCE, STMT_INSERT_SWEEP, STMT_INSERT_CLAIM,
    STMT_DROP_UNBEGUN,
    STMT_FIXED_COUNT
};

static const char *const statement_sql[STMT_FIXED_COUNT] = {
    [STMT_BEGIN] = "BEGIN IMMEDIATE",
    [STMT_COMMIT] = "COMMIT",
    [STMT_ROLLBACK] = "ROLLBACK",
    [STMT_MARK_INTERRUPTED] =
        "UPDATE runs SET status = 'interrupted', finished_at = ?2,"
        " wall_s = coalesce(?3, wall_s),"
        " rounds_done = (SELECT count(*) FROM rounds WHERE run_id = ?1),"
        " sim_time_s = (SELECT max(t_end) FROM rounds WHERE run_id = ?1),"
        " message = coalesce(message, 'interrupted')"
        " WHERE id = ?1 AND status = 'running'",
    [STMT_RUN_EXISTS] = "SELECT 1 FROM runs WHERE id = ?1",
    [STMT_DELETE_RUN] = "DELETE FROM runs WHERE id = ?1",
    [STMT_LIST_SWEEP] = "SELECT id, point, status FROM runs WHERE sweep = ?1 ORDER BY id",
    [STMT_POINT_RUNS] = "SELECT id, status, claimed_by FROM runs WHERE sweep = ?1 AND point = ?2 ORDER BY id",
    [STMT_FIND_SWEEP] = "SELECT first_run, runs FROM sweeps WHERE sweep = ?1",
    [STMT_COUNT_SWEEP_RUNS] = "SELECT count(*) FROM runs WHERE sweep = ?1",
    /* the highest id ever given: AUTOINCREMENT's counter, or the rows themselves */
    [STMT_LAST_ID] = "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'runs'), 0),"
                     " coalesce((SELECT max(id) FROM runs), 0))",
    [STMT_SET_SEQUENCE] = "UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'runs'",
    [STMT_ADD_SEQUENCE] = "INSERT INTO sqlite_sequence(name, seq) SELECT 'runs', ?1"
                          " WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'runs')",
    [STMT_INSERT_SWEEP] = "INSERT INTO sweeps(sweep, first_run, runs, points, repeat, created_at)"
                          " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [STMT_INSERT_CLAIM] = "INSERT INTO runs(id, sweep, point, status, claimed_by)"
                          " VALUES (?1, ?2, ?3, 'running', ?4)",
    [STMT_DROP_UNBEGUN] = "DELETE FROM runs WHERE claimed_by = ?1 AND started_at IS NULL AND status = 'running'"
                          " AND NOT EXISTS (SELECT 1 FROM agents WHERE run_id = runs.id)",
};

/* The statements generated from the row tables, prepared at open: the INSERT of each
 * per-run record, the run's INSERT at run_begin and UPDATE at run_end. */
enum { STMT_INSERT_RUN = SINK_RECORD_COUNT, STMT_BEGIN_CLAIMED, STMT_END_RUN, STMT_WHOLE_CLAIMED, STMT_TABLE_COUNT };

/* A row waiting for the next flush. Records are copied by value; the strings a buffered
 * record carries (a parameter's key and value, the pairing's solver) are copied into the
 * store's text chunks (store_keep_text), which live until the buffer is written, and the
 * copy's members point at them. */
typedef struct PendingRow {
    SinkRecord record;
    SinkPart part;          /* ROW; for runs INFO (a deferred begin) or END (a deferred end) */
    int64_t run_id;
    char *text;             /* a run's begin or end: the record itself and its strings */
    char when[32];          /* a deferred begin's or end's wall-clock time */
    union {                 /* a run's begin and end live in text (they are large and rare) */
        SinkAgent agent;
        SinkRound round;
        SinkAgentRound agent_round;
        SinkPairing pairing;
        SinkMetric metric;
        SinkParam param;
    } as;
} PendingRow;

struct Store {
    sqlite3 *db;
    char *path;
    HsDiag diag;            /* first error since open */
    int busy_timeout_ms;
    sqlite3_stmt *stmt[STMT_FIXED_COUNT];
    sqlite3_stmt *table_stmt[STMT_TABLE_COUNT];  /* by SinkRecord, then the runs' three */
    sqlite3_stmt *delete_stmt[16];  /* by store_tables index: DELETE ... WHERE run_id = ?1 */
    sqlite3_stmt *multi_stmt[SINK_RECORD_COUNT];  /* INSERT of STORE_MULTI_ROWS rows at once */
    sqlite3_stmt *few_stmt[SINK_RECORD_COUNT];    /* INSERT of STORE_FEW_ROWS rows at once */
    PendingRow *pending;    /* (pending_capacity) rows, pending_count in use */
    size_t pending_count, pending_capacity;
    uint32_t *order;        /* (pending_capacity) scratch of store_write_pending */
    struct StoreChunk *chunks;  /* the buffered rows' strings, newest chunk first */
    struct StoreChunk *spare;   /* emptied chunks for the next rows */
    int64_t *runs;          /* (runs_cap) the runs rows may be written for, ascending */
    size_t n_runs, runs_cap;
    int64_t last_run;       /* the last run a row was checked for (0: none) */
    struct timespec pending_since;  /* monotonic time of the oldest buffered row */
    char insert_what[SINK_RECORD_COUNT][40];  /* "insert ROW", for error messages */
    int batching;           /* store_set_batching: whole runs wait in the buffer */
    char me[128];           /* this process: HOST PID START (runs.claimed_by) */
    char host[64];
    int64_t timed_run;      /* the run begun last on this Store, for mark_interrupted */
    struct timespec timed_start;
};

/* ---- SQL from the row tables ---- */

static const char *sql_type(SinkType type)
{
    switch (type) {
    case SINK_REAL: return "REAL";
    case SINK_TEXT: case SINK_ROLE: case SINK_STATUS: case SINK_ACTIVITY: return "TEXT";
    default: return "INTEGER";
    }
}

/* Whether the database has a column for c. */
static int is_column(const SinkColumn *c)
{
    return c->type != SINK_FLAG;
}

/* The definition of column c in CREATE TABLE (or, with added = 1, in ALTER TABLE ADD
 * COLUMN, which cannot add a NOT NULL column without a default). Enums get a CHECK of
 * ORs, not IN (...): SQLite builds an ephemeral table for an IN list on every insert,
 * which tripled the cost of agent_rounds, the most frequent row. */
static void sql_column(sqlite3_str *out, const SinkColumn *c, int added)
{
    if (c->type == SINK_ID) {
        sqlite3_str_appendf(out, "%w INTEGER PRIMARY KEY AUTOINCREMENT", c->name);
        return;
    }
    sqlite3_str_appendf(out, "%w %s", c->name, sql_type(c->type));
    if ((c->flags & SINK_KEY) && !added) sqlite3_str_appendall(out, " NOT NULL");
    int n = sink_type_enum_count(c->type);
    for (int v = 0; v < n; v++)
        sqlite3_str_appendf(out, "%s%w = %Q%s", v == 0 ? " CHECK (" : " OR ", c->name,
                            sink_type_enum_name(c->type, v), v == n - 1 ? ")" : "");
}

/* CREATE TABLE and its index for one of store_tables; malloc'd (sqlite3_free), NULL when
 * out of memory. */
static char *sql_create_table(const StoreTable *t)
{
    const SinkTable *table = t->table;
    sqlite3_str *out = sqlite3_str_new(NULL);
    sqlite3_str_appendf(out, "CREATE TABLE %w(", table->table);
    int first = 1;
    if (t->per_run) {
        sqlite3_str_appendall(out, "run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE");
        first = 0;
    }
    for (int i = 0; i < table->n_columns; i++) {
        if (!is_column(&table->columns[i])) continue;
        if (!first) sqlite3_str_appendall(out, ", ");
        sql_column(out, &table->columns[i], 0);
        first = 0;
    }
    sqlite3_str_appendf(out, "); %s;", t->index);
    return sqlite3_str_finish(out);
}

/* The columns of record (of one part for runs) written by an INSERT or UPDATE. */
static int is_written(const SinkColumn *c, SinkPart part)
{
    return is_column(c) && c->part == part;
}

/* Rows per multi-row INSERT: one statement step for that many rows of one table saves
 * most of SQLite's per-statement work (a third of a sweep writer's time per row). A
 * table's last rows of a flush go STORE_FEW_ROWS at a time, then one by one. */
#define STORE_MULTI_ROWS 32
#define STORE_FEW_ROWS 8

/* INSERT INTO table(run_id, columns...) VALUES (...), ... with rows row groups, for a
 * per-run record. */
static char *sql_insert_rows(SinkRecord record, int rows)
{
    const SinkTable *table = &sink_tables[record];
    sqlite3_str *out = sqlite3_str_new(NULL);
    int n = 1;
    sqlite3_str_appendf(out, "INSERT INTO %w(run_id", table->table);
    for (int i = 0; i < table->n_columns; i++)
        if (is_written(&table->columns[i], SINK_PART_ROW)) {
            sqlite3_str_appendf(out, ", %w", table->columns[i].name);
            n++;
        }
    sqlite3_str_appendall(out, ") VALUES ");
    for (int r = 0; r < rows; r++) {
        sqlite3_str_appendall(out, r ? ", (" : "(");
        for (int k = 1; k <= n; k++) sqlite3_str_appendf(out, "%s?%d", k > 1 ? ", " : "", r * n + k);
        sqlite3_str_appendall(out, ")");
    }
    return sqlite3_str_finish(out);
}

/* INSERT INTO table(run_id, columns...) for a per-run record; for runs, the INFO
 * columns, then status = 'running' and started_at. */
static char *sql_insert(SinkRecord record)
{
    const SinkTable *table = &sink_tables[record];
    SinkPart part = record == SINK_RECORD_RUN ? SINK_PART_INFO : SINK_PART_ROW;
    sqlite3_str *out = sqlite3_str_new(NULL);
    int n = 0;
    sqlite3_str_appendf(out, "INSERT INTO %w(", table->table);
    if (record != SINK_RECORD_RUN) sqlite3_str_appendf(out, "%srun_id", n++ ? ", " : "");
    for (int i = 0; i < table->n_columns; i++)
        if (is_written(&table->columns[i], part))
            sqlite3_str_appendf(out, "%s%w", n++ ? ", " : "", table->columns[i].name);
    if (record == SINK_RECORD_RUN) sqlite3_str_appendf(out, ", status, started_at, claimed_by");
    sqlite3_str_appendall(out, ") VALUES (");
    for (int k = 1; k <= n; k++) sqlite3_str_appendf(out, "%s?%d", k > 1 ? ", " : "", k);
    if (record == SINK_RECORD_RUN) sqlite3_str_appendf(out, ", 'running', ?%d, ?%d", n + 1, n + 2);
    sqlite3_str_appendall(out, ")");
    return sqlite3_str_finish(out);
}

/* UPDATE runs SET INFO columns..., started_at WHERE id = ? AND claimed by this process:
 * the start of a run whose row a sweep claimed (store_claim_run). The id, the sweep and
 * the point are the claim's. with_end (0 or 1) adds the END columns and finished_at: sql_end_run in
 * the same UPDATE, so a claimed run whose begin and end are written in one transaction
 * (store_set_batching) has its large row rewritten once. */
static char *sql_claimed(int with_end)
{
    const SinkTable *table = &sink_tables[SINK_RECORD_RUN];
    sqlite3_str *out = sqlite3_str_new(NULL);
    int n = 0;
    sqlite3_str_appendall(out, "UPDATE runs SET ");
    for (int part = 0; part < (with_end ? 2 : 1); part++)
        for (int i = 0; i < table->n_columns; i++) {
            const SinkColumn *c = &table->columns[i];
            if (!is_written(c, part == 0 ? SINK_PART_INFO : SINK_PART_END) || c->type == SINK_ID) continue;
            sqlite3_str_appendf(out, "%s%w = ?%d", n ? ", " : "", c->name, n + 1);
            n++;
        }
    sqlite3_str_appendf(out, ", started_at = ?%d", ++n);
    if (with_end) sqlite3_str_appendf(out, ", finished_at = ?%d", ++n);
    sqlite3_str_appendf(out, " WHERE id = ?%d AND claimed_by = ?%d AND status = 'running' AND started_at IS NULL",
                        n + 1, n + 2);
    return sqlite3_str_finish(out);
}

/* UPDATE runs SET END columns..., finished_at WHERE id: the run's end. */
static char *sql_end_run(void)
{
    const SinkTable *table = &sink_tables[SINK_RECORD_RUN];
    sqlite3_str *out = sqlite3_str_new(NULL);
    int n = 0;
    sqlite3_str_appendall(out, "UPDATE runs SET ");
    for (int i = 0; i < table->n_columns; i++)
        if (is_written(&table->columns[i], SINK_PART_END)) {
            sqlite3_str_appendf(out, "%s%w = ?%d", n ? ", " : "", table->columns[i].name, n + 1);
            n++;
        }
    sqlite3_str_appendf(out, ", finished_at = ?%d WHERE id = ?%d", n + 1, n + 2);
    return sqlite3_str_finish(out);
}

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

/* Wall-clock "now" as ISO-8601 UTC with milliseconds (24 characters). */
static void format_utc_now(char out[32])
{
    struct timespec now;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    size_t used = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + used, 32 - used, ".%03ldZ", now.tv_nsec / 1000000L);
}

/* Records a SQLite failure as the store's error and returns the matching HS status. */
static int store_fail(Store *store, int sqlite_rc, const char *what)
{
    int status;
    switch (sqlite_rc & 0xff) {
    case SQLITE_NOMEM: status = HS_E_NOMEM; break;
    case SQLITE_NOTADB: status = HS_E_INPUT; break;
    case SQLITE_CONSTRAINT: status = HS_E_INTERNAL; break; /* a row of no run: a bug */
    default: status = HS_E_IO; break;
    }
    switch (sqlite_rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return hs_diag_set(&store->diag, status, store->path, 0,
                           "%s: database is locked by another process (waited %d ms)",
                           what, store->busy_timeout_ms);
    case SQLITE_READONLY:
        return hs_diag_set(&store->diag, status, store->path, 0,
                           "%s: database is read-only (%s)", what,
                           sqlite3_errmsg(store->db));
    case SQLITE_NOTADB:
        return hs_diag_set(&store->diag, status, store->path, 0,
                           "not a SQLite database (%s)", sqlite3_errmsg(store->db));
    default:
        return hs_diag_set(&store->diag, status, store->path, 0, "%s: %s", what,
                           sqlite3_errmsg(store->db));
    }
}

/* Steps a statement that returns no rows, then resets it for the next use. */
static int store_step(Store *store, sqlite3_stmt *stmt, const char *what)
{
    int rc = sqlite3_step(stmt);
    int status = HS_OK;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) status = store_fail(store, rc, what);
    sqlite3_reset(stmt);
    return status;
}

static int store_exec_stmt(Store *store, int which, const char *what)
{
    return store_step(store, store->stmt[which], what);
}

/* Bind helpers accumulate the first failure in *rc, so a row binds in straight lines
 * and is checked once. NaN becomes NULL; text is bound SQLITE_STATIC because every
 * statement is stepped and reset before the borrowed record goes away. */
static void bind_int64(sqlite3_stmt *stmt, int index, int64_t value, int *rc)
{
    if (*rc == SQLITE_OK) *rc = sqlite3_bind_int64(stmt, index, value);
}

static void bind_double(sqlite3_stmt *stmt, int index, double value, int *rc)
{
    if (*rc != SQLITE_OK) return;
    *rc = isnan(value) ? sqlite3_bind_null(stmt, index)
                       : sqlite3_bind_double(stmt, index, value);
}

static void bind_text(sqlite3_stmt *stmt, int index, const char *value, int *rc)
{
    if (*rc != SQLITE_OK) return;
    *rc = value == NULL ? sqlite3_bind_null(stmt, index)
                        : sqlite3_bind_text(stmt, index, value, -1, SQLITE_STATIC);
}

static void bind_null(sqlite3_stmt *stmt, int index, int *rc)
{
    if (*rc == SQLITE_OK) *rc = sqlite3_bind_null(stmt, index);
}

/* Binds column c of record as the row tables say it is stored (sink.h). */
static void bind_column(sqlite3_stmt *stmt, int index, const SinkColumn *c, const void *record, int *rc)
{
    if (sink_column_is_null(c, record)) {
        bind_null(stmt, index, rc);
        return;
    }
    switch (c->type) {
    case SINK_REAL: bind_double(stmt, index, sink_column_real(c, record), rc); break;
    case SINK_TEXT: bind_text(stmt, index, sink_column_text(c, record), rc); break;
    case SINK_ROLE: case SINK_STATUS: case SINK_ACTIVITY:
        bind_text(stmt, index, sink_column_enum_name(c, record), rc);  /* static names */
        break;
    default: bind_int64(stmt, index, sink_column_int(c, record), rc); break;
    }
}

/* Binds the columns of one part of record from parameter first on; returns the next
 * parameter. */
static int bind_record(sqlite3_stmt *stmt, int first, SinkRecord which, SinkPart part, const void *record,
                       int *rc)
{
    const SinkTable *table = &sink_tables[which];
    int index = first;
    for (int i = 0; i < table->n_columns; i++)
        if (is_written(&table->columns[i], part)) bind_column(stmt, index++, &table->columns[i], record, rc);
    return index;
}

/* ---- the buffered rows' strings: bump allocation in chunks that stay where they are
 * until the buffer is written (store_drop_pending keeps one chunk for the next rows) ---- */

#define STORE_CHUNK_BYTES (64u * 1024u)

typedef struct StoreChunk {
    struct StoreChunk *next;
    size_t used, size;
    max_align_t data[];     /* (size bytes) */
} StoreChunk;

/* size bytes aligned for any record, valid until the buffer is dropped; NULL when out
 * of memory. */
static void *store_keep(Store *store, size_t size)
{
    StoreChunk *c = store->chunks;
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (c == NULL || c->size - c->used < size) {
        if (store->spare != NULL && store->spare->size >= size) {
            c = store->spare;
            store->spare = c->next;
        } else {
            size_t want = size > STORE_CHUNK_BYTES ? size : STORE_CHUNK_BYTES;
            c = malloc(sizeof *c + want);
            if (c == NULL) return NULL;
            c->used = 0;
            c->size = want;
        }
        c->next = store->chunks;
        store->chunks = c;
    }
    void *at = (char *)c->data + c->used;
    c->used += size;
    return at;
}

static char *store_keep_text(Store *store, const char *text)
{
    size_t len = strlen(text) + 1;
    char *copy = store_keep(store, len);
    if (copy != NULL) memcpy(copy, text, len);
    return copy;
}

/* Empties the chunks and keeps them for the next rows: freeing them made glibc give the
 * heap's top back to the system and fault it in again at the next batch. */
static void store_drop_chunks(Store *store)
{
    StoreChunk **last = &store->spare;
    while (*last != NULL) last = &(*last)->next;
    *last = store->chunks;
    for (StoreChunk *c = store->chunks; c != NULL; c = c->next) c->used = 0;
    store->chunks = NULL;
}

static void store_free_chunks(StoreChunk *c)
{
    while (c != NULL) {
        StoreChunk *next = c->next;
        free(c);
        c = next;
    }
}

#include "analysis/store_rows.h"

/* The generated bind of a per-run record's row (store_rows.h); returns the next
 * parameter. */
static int bind_row(sqlite3_stmt *stmt, int first, SinkRecord which, const void *record, int *rc)
{
    switch (which) {
    case SINK_RECORD_AGENT: return store_bind_agent(stmt, first, record, rc);
    case SINK_RECORD_ROUND: return store_bind_round(stmt, first, record, rc);
    case SINK_RECORD_AGENT_ROUND: return store_bind_agent_round(stmt, first, record, rc);
    case SINK_RECORD_PAIRING: return store_bind_pairing(stmt, first, record, rc);
    case SINK_RECORD_METRIC: return store_bind_metric(stmt, first, record, rc);
    case SINK_RECORD_PARAM: return store_bind_param(stmt, first, record, rc);
    default: return bind_record(stmt, first, which, SINK_PART_ROW, record, rc);
    }
}

/* The generated copy of a buffered row's strings (store_rows.h). */
static int copy_row_strings(Store *store, SinkRecord which, void *record)
{
    switch (which) {
    case SINK_RECORD_AGENT: return store_copy_agent(store, record);
    case SINK_RECORD_ROUND: return store_copy_round(store, record);
    case SINK_RECORD_AGENT_ROUND: return store_copy_agent_round(store, record);
    case SINK_RECORD_PAIRING: return store_copy_pairing(store, record);
    case SINK_RECORD_METRIC: return store_copy_metric(store, record);
    case SINK_RECORD_PARAM: return store_copy_param(store, record);
    default: return HS_E_INTERNAL;
    }
}

/* Binds then steps: the one place a bind failure becomes an error. */
static int store_exec_bound(Store *store, sqlite3_stmt *stmt, int bind_rc, const char *what)
{
    if (bind_rc != SQLITE_OK) {
        sqlite3_reset(stmt);
        return store_fail(store, bind_rc, what);
    }
    return store_step(store, stmt, what);
}

/* A database file deleted (or replaced by another) while this Store writes it would
 * take every later row into an unlinked inode and the run would end 'done' in no file:
 * each write transaction first asks SQLite whether the file is still where it was
 * opened. */
static int store_check_file(Store *store)
{
    int moved = 0;
    if (sqlite3_file_control(store->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved)
        return hs_diag_set(&store->diag, HS_E_IO, store->path, 0,
                           "the database file was deleted or replaced while runs were being written to it");
    return HS_OK;
}

static int store_begin(Store *store)
{
    int status = store_check_file(store);
    return status != HS_OK ? status : store_exec_stmt(store, STMT_BEGIN, "begin transaction");
}

static int store_commit(Store *store)
{
    int status = store_exec_stmt(store, STMT_COMMIT, "commit");
    if (status != HS_OK && !sqlite3_get_autocommit(store->db))
        store_exec_stmt(store, STMT_ROLLBACK, "rollback");
    return status;
}

static void store_rollback(Store *store)
{
    if (!sqlite3_get_autocommit(store->db)) {
        sqlite3_step(store->stmt[STMT_ROLLBACK]);
        sqlite3_reset(store->stmt[STMT_ROLLBACK]);
    }
}

/* ---- the runs this Store may write rows for ----
 * Foreign keys are not enforced on the writing connection (set_pragmas): SQLite's check
 * of runs(id) for every row was an eighth of a sweep writer's time. The store checks the
 * same thing itself, once per run of a batch: a row goes only to a run this Store began,
 * claimed or found (store_note_run); any other is a caller's bug, refused as SQLite
 * refused it. Deletes are explicit, children first (store_delete_rows), so nothing needs
 * the cascade either; the schema still declares both for readers. Ids mostly arrive in
 * ascending order, so the sorted array grows at its end. */

static int store_note_run(Store *store, int64_t run_id)
{
    size_t lo = 0, hi = store->n_runs;
    if (hi > 0 && store->runs[hi - 1] < run_id) lo = hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (store->runs[mid] == run_id) return HS_OK;
        if (store->runs[mid] < run_id) lo = mid + 1;
        else hi = mid;
    }
    if (store->n_runs == store->runs_cap) {
        size_t cap = store->runs_cap ? 2 * store->runs_cap : 64;
        int64_t *grown = realloc(store->runs, cap * sizeof *grown);
        if (grown == NULL) return hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory");
        store->runs = grown;
        store->runs_cap = cap;
    }
    memmove(store->runs + lo + 1, store->runs + lo, (store->n_runs - lo) * sizeof *store->runs);
    store->runs[lo] = run_id;
    store->n_runs++;
    return HS_OK;
}

static int store_knows_run(const Store *store, int64_t run_id)
{
    size_t lo = 0, hi = store->n_runs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (store->runs[mid] == run_id) return 1;
        if (store->runs[mid] < run_id) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

static void store_forget_run(Store *store, int64_t run_id)
{
    for (size_t i = 0; i < store->n_runs; i++)
        if (store->runs[i] == run_id) {
            memmove(store->runs + i, store->runs + i + 1, (store->n_runs - i - 1) * sizeof *store->runs);
            store->n_runs--;
            break;
        }
    store->last_run = 0;
}

/* A row of which for run_id may be written: the check the foreign key made. */
static int store_check_run(Store *store, SinkRecord which, int64_t run_id)
{
    if (run_id == store->last_run && run_id != 0) return HS_OK;
    if (!store_knows_run(store, run_id))
        return hs_diag_set(&store->diag, HS_E_INTERNAL, store->path, 0,
                           "%s: FOREIGN KEY constraint failed (no run %lld was begun here)", store->insert_what[which],
                           (long long)run_id);
    store->last_run = run_id;
    return HS_OK;
}

/* INSERTs one per-run record. */
static int store_insert(Store *store, SinkRecord which, int64_t run_id, const void *record)
{
    sqlite3_stmt *stmt = store->table_stmt[which];
    int rc = SQLITE_OK;
    int status = store_check_run(store, which, run_id);
    if (status != HS_OK) return status;
    bind_int64(stmt, 1, run_id, &rc);
    bind_row(stmt, 2, which, record, &rc);
    return store_exec_bound(store, stmt, rc, store->insert_what[which]);
}

static const void *pending_record(const PendingRow *row)
{
    return row->part == SINK_PART_ROW ? (const void *)&row->as : (const void *)row->text;
}

/* Fills in the row a claim made (store_claim_run) for a run that begins. */
static int store_exec_begin_claimed(Store *store, const SinkRunInfo *info, const char *when)
{
    sqlite3_stmt *stmt = store->table_stmt[STMT_BEGIN_CLAIMED];
    const SinkTable *table = &sink_tables[SINK_RECORD_RUN];
    int rc = SQLITE_OK, index = 1;
    for (int i = 0; i < table->n_columns; i++) {
        const SinkColumn *c = &table->columns[i];
        if (is_written(c, SINK_PART_INFO) && c->type != SINK_ID) bind_column(stmt, index++, c, info, &rc);
    }
    bind_text(stmt, index, when, &rc);
    bind_int64(stmt, index + 1, info->id, &rc);
    bind_text(stmt, index + 2, store->me, &rc);
    int status = store_exec_bound(store, stmt, rc, "begin run");
    if (status != HS_OK) return status;
    if (sqlite3_changes(store->db) != 1)
        return hs_diag_set(&store->diag, HS_E_INTERNAL, store->path, 0, "run %lld was not claimed by this process",
                           (long long)info->id);
    return HS_OK;
}

/* A claimed run's begin and end in one statement. */
static int store_exec_whole_claimed(Store *store, const SinkRunInfo *info, const char *began, const SinkRunEnd *end,
                                    const char *ended)
{
    sqlite3_stmt *stmt = store->table_stmt[STMT_WHOLE_CLAIMED];
    const SinkTable *table = &sink_tables[SINK_RECORD_RUN];
    int rc = SQLITE_OK, index = 1;
    for (int i = 0; i < table->n_columns; i++) {
        const SinkColumn *c = &table->columns[i];
        if (is_written(c, SINK_PART_INFO) && c->type != SINK_ID) bind_column(stmt, index++, c, info, &rc);
    }
    index = bind_record(stmt, index, SINK_RECORD_RUN, SINK_PART_END, end, &rc);
    bind_text(stmt, index, began, &rc);
    bind_text(stmt, index + 1, ended, &rc);
    bind_int64(stmt, index + 2, info->id, &rc);
    bind_text(stmt, index + 3, store->me, &rc);
    int status = store_exec_bound(store, stmt, rc, "write run");
    if (status != HS_OK) return status;
    if (sqlite3_changes(store->db) != 1)
        return hs_diag_set(&store->diag, HS_E_INTERNAL, store->path, 0, "run %lld was not claimed by this process",
                           (long long)info->id);
    return HS_OK;
}

/* The run's end: its status and figures. */
static int store_exec_end(Store *store, int64_t run_id, const SinkRunEnd *end, const char *when)
{
    sqlite3_stmt *stmt = store->table_stmt[STMT_END_RUN];
    int rc = SQLITE_OK;
    int next = bind_record(stmt, 1, SINK_RECORD_RUN, SINK_PART_END, end, &rc);
    bind_text(stmt, next, when, &rc);
    bind_int64(stmt, next + 1, run_id, &rc);
    int status = store_exec_bound(store, stmt, rc, "finish run");
    if (status != HS_OK) return status;
    if (sqlite3_changes(store->db) != 1)
        return hs_diag_set(&store->diag, HS_E_INPUT, store->path, 0, "no run with id %lld", (long long)run_id);
    return HS_OK;
}

/* The INSERT of rows rows of which at once (STORE_MULTI_ROWS or STORE_FEW_ROWS),
 * prepared at its first use: a process that never writes that many rows of a table at
 * once does not pay for it (a 32-row statement takes half a million instructions to
 * prepare). NULL when it cannot be prepared (the caller goes row by row). */
static sqlite3_stmt *store_multi(Store *store, SinkRecord which, int rows)
{
    sqlite3_stmt **stmt = rows == STORE_MULTI_ROWS ? &store->multi_stmt[which] : &store->few_stmt[which];
    if (*stmt == NULL) {
        char *sql = sql_insert_rows(which, rows);
        if (sql != NULL) sqlite3_prepare_v3(store->db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL);
        sqlite3_free(sql);
    }
    return *stmt;
}

/* Writes rows[0..n) of one table (run_id then the record's columns each) with as few
 * statements as it can: STORE_MULTI_ROWS rows per step, then STORE_FEW_ROWS, then one. */
static int store_insert_group(Store *store, SinkRecord which, const uint32_t *rows, size_t n)
{
    int status = HS_OK;
    size_t i = 0;
    while (status == HS_OK && i < n) {
        size_t left = n - i;
        int take = left >= STORE_MULTI_ROWS && store_multi(store, which, STORE_MULTI_ROWS) ? STORE_MULTI_ROWS
                   : left >= STORE_FEW_ROWS && store_multi(store, which, STORE_FEW_ROWS)   ? STORE_FEW_ROWS
                                                                                             : 1;
        sqlite3_stmt *stmt = take == STORE_MULTI_ROWS ? store->multi_stmt[which]
                             : take == STORE_FEW_ROWS ? store->few_stmt[which]
                                                      : store->table_stmt[which];
        int rc = SQLITE_OK, next = 1;
        for (int k = 0; k < take && status == HS_OK; k++) {
            const PendingRow *row = &store->pending[rows[i + (size_t)k]];
            status = store_check_run(store, which, row->run_id);
            bind_int64(stmt, next++, row->run_id, &rc);
            next = bind_row(stmt, next, which, &row->as, &rc);
        }
        if (status != HS_OK) {
            sqlite3_reset(stmt);
            break;
        }
        status = store_exec_bound(store, stmt, rc, store->insert_what[which]);
        i += (size_t)take;
    }
    return status;
}

/* Writes the buffered rows inside the caller's transaction. The buffer is emptied only
 * by store_drop_pending after the commit, so a failed transaction can be retried (a
 * failed run keeps its rows when run_end succeeds later). */
static int store_write_pending(Store *store)
{
    /* Table by table, each table's rows in the order they came (so every table's rowids
     * follow the engine's order as before). The runs' begins and ends go first and last:
     * a child row needs its run's row, which a claim or an immediate run_begin made
     * already, and a run's end commits in this same transaction whatever the order
     * inside it. One pass sorts the buffer's indices by class (a counting sort that
     * keeps the arrival order within a class): the begins, the ends, then each table. */
    enum { CLASS_INFO = SINK_RECORD_COUNT, CLASS_END, CLASS_COUNT };
    size_t first[CLASS_COUNT + 1] = {0};
    uint32_t *order = store->order;
    size_t n = store->pending_count;
    for (size_t i = 0; i < n; i++) {
        const PendingRow *row = &store->pending[i];
        int c = row->part == SINK_PART_INFO ? CLASS_INFO : row->part == SINK_PART_END ? CLASS_END : (int)row->record;
        first[c + 1]++;
    }
    for (int c = 0; c < CLASS_COUNT; c++) first[c + 1] += first[c];
    size_t at[CLASS_COUNT];
    memcpy(at, first, sizeof at);
    for (size_t i = 0; i < n; i++) {
        const PendingRow *row = &store->pending[i];
        int c = row->part == SINK_PART_INFO ? CLASS_INFO : row->part == SINK_PART_END ? CLASS_END : (int)row->record;
        order[at[c]++] = (uint32_t)i;
    }
    const uint32_t *infos = order + first[CLASS_INFO], *ends = order + first[CLASS_END];
    size_t n_infos = first[CLASS_INFO + 1] - first[CLASS_INFO], n_ends = first[CLASS_END + 1] - first[CLASS_END];
    int status = HS_OK;
    for (size_t i = 0; status == HS_OK && i < n_infos; i++) {
        const PendingRow *row = &store->pending[infos[i]];
        /* its end in the same buffer (the usual case with batching): one statement; the
         * pass over the ends below skips it (the buffer itself is left as it is, so a
         * failed transaction can be retried) */
        const PendingRow *end = NULL;
        for (size_t j = 0; j < n_ends && end == NULL; j++)
            if (ends[j] > infos[i] && store->pending[ends[j]].run_id == row->run_id) end = &store->pending[ends[j]];
        if (end != NULL) {
            status = store_exec_whole_claimed(store, pending_record(row), row->when, pending_record(end), end->when);
        } else {
            status = store_exec_begin_claimed(store, pending_record(row), row->when);
        }
    }
    for (int which = 0; status == HS_OK && which < SINK_RECORD_COUNT; which++) {
        if (which == SINK_RECORD_RUN || first[which + 1] == first[which]) continue;
        status = store_insert_group(store, (SinkRecord)which, order + first[which], first[which + 1] - first[which]);
    }
    for (size_t j = 0; status == HS_OK && j < n_ends; j++) {
        const PendingRow *row = &store->pending[ends[j]];
        int begun_here = 0;
        for (size_t i = 0; i < n_infos && !begun_here; i++)
            begun_here = infos[i] < ends[j] && store->pending[infos[i]].run_id == row->run_id;
        if (!begun_here) status = store_exec_end(store, row->run_id, pending_record(row), row->when);
    }
    return status;
}

static void store_drop_pending(Store *store)
{
    store->pending_count = 0;
    store_drop_chunks(store);
}

int store_flush(Store *store)
{
    if (store == NULL) return HS_E_INTERNAL;
    if (store->pending_count == 0) return HS_OK;
    int status = store_begin(store);
    if (status != HS_OK) goto fail;
    status = store_write_pending(store);
    if (status != HS_OK) goto fail;
    status = store_commit(store);
    if (status != HS_OK) goto fail;
    store_drop_pending(store);
    return HS_OK;
fail:
    store_rollback(store);
    return status;
}

/* A new row at the end of the buffer (its fields unset); NULL when out of memory. */
static PendingRow *store_pending_row(Store *store)
{
    if (store->pending_count == store->pending_capacity) {
        size_t capacity = store->pending_capacity ? 2 * store->pending_capacity : 256;
        PendingRow *grown = realloc(store->pending, capacity * sizeof *grown);
        if (grown == NULL) return NULL;
        store->pending = grown;
        uint32_t *order = realloc(store->order, capacity * sizeof *order);
        if (order == NULL) return NULL;
        store->order = order;
        store->pending_capacity = capacity;
    }
    if (store->pending_count == 0) clock_gettime(CLOCK_MONOTONIC, &store->pending_since);
    return &store->pending[store->pending_count];
}

/* Buffers a copy of a run's begin or end (part INFO or END, size bytes), its strings
 * copied with it; generic over the columns, as it comes once per run. */
static int store_buffer_part(Store *store, SinkRecord which, SinkPart part, int64_t run_id, const void *record,
                             size_t size)
{
    const SinkTable *table = &sink_tables[which];
    PendingRow *row = store_pending_row(store);
    char *copy = row != NULL ? store_keep(store, size) : NULL;
    if (copy == NULL) return hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory");
    memcpy(copy, record, size);
    /* the borrowed pointers must not outlive the call: point at the copies */
    for (int i = 0; i < table->n_columns; i++) {
        const SinkColumn *c = &table->columns[i];
        const char *text = c->alias || c->part != part ? NULL : sink_column_text(c, record);
        if (text == NULL) continue;
        char *kept = store_keep_text(store, text);
        if (kept == NULL) return hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory");
        memcpy(copy + c->offset, &kept, sizeof kept);
    }
    row->record = which;
    row->part = part;
    row->run_id = run_id;
    row->text = copy;
    store->pending_count++;
    return HS_OK;
}

/* Fills row with a copy of a per-run record's row (size bytes) and of its strings. */
static int store_copy_row(Store *store, PendingRow *row, SinkRecord which, int64_t run_id, const void *record,
                          size_t size)
{
    row->record = which;
    row->part = SINK_PART_ROW;
    row->run_id = run_id;
    row->text = NULL;
    memcpy(&row->as, record, size);
    if (copy_row_strings(store, which, &row->as) != HS_OK)
        return hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory");
    return HS_OK;
}

/* Buffers a copy of a per-run record's row (size bytes) with copies of its strings. */
static int store_buffer(Store *store, SinkRecord which, int64_t run_id, const void *record, size_t size)
{
    PendingRow *row = store_pending_row(store);
    if (row == NULL) return hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory");
    int status = store_copy_row(store, row, which, run_id, record, size);
    if (status == HS_OK) store->pending_count++;
    return status;
}

/* Flushes when the batch is full or the oldest buffered row has waited long enough. */
static int store_maybe_flush(Store *store)
{
    if (store->pending_count == 0) return HS_OK;
    if (store->pending_count < STORE_BATCH_ROWS) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (seconds_between(&store->pending_since, &now) < STORE_FLUSH_SECONDS)
            return HS_OK;
    }
    return store_flush(store);
}

/* ---- the sink callbacks ---- */

static int sink_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    Store *store = ctx;
    char now[32];
    int rc = SQLITE_OK, status;
    format_utc_now(now);
    if (info->id > 0 && store->batching) {
        /* A claimed run's row exists: its begin waits with its rows (store_set_batching). */
        status = store_buffer_part(store, SINK_RECORD_RUN, SINK_PART_INFO, info->id, info, sizeof *info);
        if (status != HS_OK) return status;
        snprintf(store->pending[store->pending_count - 1].when, sizeof store->pending[0].when, "%s", now);
        *run_id = info->id;
        if ((status = store_note_run(store, *run_id)) != HS_OK) return status;
    } else {
        /* Earlier runs' rows go first, so the file always reads in the order of events. */
        status = store_flush(store);
        if (status == HS_OK) status = store_check_file(store);
        if (status != HS_OK) return status;
        if (info->id > 0) {
            /* A run whose row a sweep claimed: fill it in. */
            status = store_exec_begin_claimed(store, info, now);
            if (status != HS_OK) return status;
            *run_id = info->id;
        } else {
            sqlite3_stmt *stmt = store->table_stmt[STMT_INSERT_RUN];
            int next = bind_record(stmt, 1, SINK_RECORD_RUN, SINK_PART_INFO, info, &rc);
            bind_text(stmt, next, now, &rc);
            bind_text(stmt, next + 1, store->me, &rc);
            /* Outside any transaction: the insert commits at once, so even a crash right
             * after leaves a visible 'running' run. */
            status = store_exec_bound(store, stmt, rc, "insert run");
            if (status != HS_OK) return status;
            *run_id = sqlite3_last_insert_rowid(store->db);
        }
        if ((status = store_note_run(store, *run_id)) != HS_OK) return status;
    }
    store->timed_run = *run_id;
    clock_gettime(CLOCK_MONOTONIC, &store->timed_start);
    return HS_OK;
}

/* Agents arrive all at once at the start of a run: one transaction for all of them,
 * with anything still buffered written first. */
static int sink_agents(void *ctx, int64_t run_id, const SinkAgent *agents, int count)
{
    Store *store = ctx;
    if (store->batching) {
        for (int i = 0; i < count; i++) {
            int status = store_buffer(store, SINK_RECORD_AGENT, run_id, &agents[i], sizeof agents[i]);
            if (status != HS_OK) return status;
        }
        return store_maybe_flush(store);
    }
    int status = store_begin(store);
    if (status != HS_OK) goto fail;
    status = store_write_pending(store);
    if (status != HS_OK) goto fail;
    for (int i = 0; i < count; i++) {
        status = store_insert(store, SINK_RECORD_AGENT, run_id, &agents[i]);
        if (status != HS_OK) goto fail;
    }
    status = store_commit(store);
    if (status != HS_OK) goto fail;
    store_drop_pending(store);
    return HS_OK;
fail:
    store_rollback(store);
    return status;
}

static int sink_round(void *ctx, int64_t run_id, const SinkRound *round)
{
    Store *store = ctx;
    int status = store_buffer(store, SINK_RECORD_ROUND, run_id, round, sizeof *round);
    return status != HS_OK ? status : store_maybe_flush(store);
}

static int sink_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows,
                             int count)
{
    Store *store = ctx;
    for (int i = 0; i < count; i++) {
        int status = store_buffer(store, SINK_RECORD_AGENT_ROUND, run_id, &rows[i], sizeof rows[i]);
        if (status != HS_OK) return status;
    }
    return store_maybe_flush(store);
}

static int sink_pairing(void *ctx, int64_t run_id, const SinkPairing *pairing)
{
    Store *store = ctx;
    int status = store_buffer(store, SINK_RECORD_PAIRING, run_id, pairing, sizeof *pairing);
    return status != HS_OK ? status : store_maybe_flush(store);
}

static int sink_metric(void *ctx, int64_t run_id, const SinkMetric *metric)
{
    Store *store = ctx;
    int status = store_buffer(store, SINK_RECORD_METRIC, run_id, metric, sizeof *metric);
    return status != HS_OK ? status : store_maybe_flush(store);
}

/* The last rows and the final status commit together: a run reads 'done' only if all of
 * its rows are in the file. */
static int sink_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    Store *store = ctx;
    char now[32];
    int status;
    if (end->status == SINK_STATUS_RUNNING)
        return hs_diag_set(&store->diag, HS_E_INTERNAL, store->path, 0,
                           "run %lld ended with status 'running'", (long long)run_id);
    SinkRunEnd row = *end;
    if (isnan(row.wall_s) && run_id == store->timed_run) {
        struct timespec now_mono;
        clock_gettime(CLOCK_MONOTONIC, &now_mono);
        row.wall_s = seconds_between(&store->timed_start, &now_mono);
    }
    format_utc_now(now);
    if (store->batching) {
        /* after the run's rows in the buffer: they commit in one transaction */
        status = store_buffer_part(store, SINK_RECORD_RUN, SINK_PART_END, run_id, &row, sizeof row);
        if (status != HS_OK) return status;
        snprintf(store->pending[store->pending_count - 1].when, sizeof store->pending[0].when, "%s", now);
        return store_maybe_flush(store);
    }
    status = store_begin(store);
    if (status != HS_OK) goto fail;
    status = store_write_pending(store);
    if (status != HS_OK) goto fail;
    status = store_exec_end(store, run_id, &row, now);
    if (status != HS_OK) goto fail;
    status = store_commit(store);
    if (status != HS_OK) goto fail;
    store_drop_pending(store);
    return HS_OK;
fail:
    store_rollback(store);
    return status;
}

int store_set_batching(Store *store, int on)
{
    if (store == NULL) return HS_E_INTERNAL;
    int status = on ? HS_OK : store_flush(store);
    store->batching = on;
    return status;
}

/* A run's keys arrive right after run_begin; they wait with the rows and are written in
 * the agents' transaction. */
static int sink_params(void *ctx, int64_t run_id, const SinkParam *rows, int count)
{
    Store *store = ctx;
    for (int i = 0; i < count; i++) {
        int status = store_buffer(store, SINK_RECORD_PARAM, run_id, &rows[i], sizeof rows[i]);
        if (status != HS_OK) return status;
    }
    return store_maybe_flush(store);
}

static const SinkOps store_sink_ops = {
    .run_begin = sink_run_begin,
    .agents = sink_agents,
    .round = sink_round,
    .agent_rounds = sink_agent_rounds,
    .pairing = sink_pairing,
    .metric = sink_metric,
    .run_end = sink_run_end,
    .params = sink_params,
};

Sink store_sink(Store *store)
{
    Sink sink = { &store_sink_ops, store };
    return sink;
}

const char *store_error_message(const Store *store)
{
    return store == NULL ? "" : store->diag.message;
}

int store_set_busy_timeout(Store *store, int milliseconds)
{
    if (store == NULL || milliseconds < 0) return HS_E_INTERNAL;
    int rc = sqlite3_busy_timeout(store->db, milliseconds);
    if (rc != SQLITE_OK) return store_fail(store, rc, "set busy timeout");
    store->busy_timeout_ms = milliseconds;
    return HS_OK;
}

/* ---- runs as a whole ---- */

static int store_run_exists(Store *store, int64_t run_id, int *exists)
{
    sqlite3_stmt *stmt = store->stmt[STMT_RUN_EXISTS];
    int rc = sqlite3_bind_int64(stmt, 1, run_id);
    if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
    *exists = rc == SQLITE_ROW;
    sqlite3_reset(stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return store_fail(store, rc, "find run");
    return HS_OK;
}

int store_mark_interrupted(Store *store, int64_t run_id)
{
    if (store == NULL) return HS_E_INTERNAL;
    sqlite3_stmt *stmt = store->stmt[STMT_MARK_INTERRUPTED];
    char now[32];
    int rc = SQLITE_OK;
    int exists = 0;
    format_utc_now(now);
    int status = store_begin(store);
    if (status != HS_OK) goto fail;
    status = store_write_pending(store);  /* an interrupted run keeps what it did */
    if (status != HS_OK) goto fail;
    bind_int64(stmt, 1, run_id, &rc);
    bind_text(stmt, 2, now, &rc);
    if (run_id == store->timed_run) {
        struct timespec now_mono;
        clock_gettime(CLOCK_MONOTONIC, &now_mono);
        bind_double(stmt, 3, seconds_between(&store->timed_start, &now_mono), &rc);
    } else {
        bind_null(stmt, 3, &rc);
    }
    status = store_exec_bound(store, stmt, rc, "mark run interrupted");
    if (status != HS_OK) goto fail;
    if (sqlite3_changes(store->db) == 0) {
        status = store_run_exists(store, run_id, &exists);
        if (status != HS_OK) goto fail;
        if (!exists) {
            status = hs_diag_set(&store->diag, HS_E_INPUT, store->path, 0,
                                 "no run with id %lld", (long long)run_id);
            goto fail;
        }
    }
    status = store_commit(store);
    if (status != HS_OK) goto fail;
    store_drop_pending(store);
    return HS_OK;
fail:
    store_rollback(store);
    return status;
}

/* Deletes run_id's rows, children first, inside the caller's transaction. */
static int store_delete_rows(Store *store, int64_t run_id)
{
    for (int t = 0; t < STORE_TABLE_COUNT; t++) {
        if (!store_tables[t].per_run) continue;
        int rc = sqlite3_bind_int64(store->delete_stmt[t], 1, run_id);
        int status = store_exec_bound(store, store->delete_stmt[t], rc, "delete run");
        if (status != HS_OK) return status;
    }
    int rc = sqlite3_bind_int64(store->stmt[STMT_DELETE_RUN], 1, run_id);
    return store_exec_bound(store, store->stmt[STMT_DELETE_RUN], rc, "delete run");
}

int store_delete_run(Store *store, int64_t run_id)
{
    if (store == NULL) return HS_E_INTERNAL;
    int status = store_begin(store);
    if (status != HS_OK) goto fail;
    /* Buffered rows of this run are written and deleted with the rest; simpler than
     * filtering the buffer, and the same transaction. */
    status = store_write_pending(store);
    if (status != HS_OK) goto fail;
    status = store_delete_rows(store, run_id);
    if (status != HS_OK) goto fail;
    store_forget_run(store, run_id);
    status = store_commit(store);
    if (status != HS_OK) goto fail;
    store_drop_pending(store);
    if (store->timed_run == run_id) store->timed_run = 0;
    return HS_OK;
fail:
    store_rollback(store);
    return status;
}

/* ---- claims: which process runs which run of a sweep ---- */

/* This process as runs.claimed_by says it: "HOST PID START", START being its start time
 * in clock ticks since boot (/proc/PID/stat field 22), so that a claim of a process that
 * died cannot be taken for a live one when its pid is given to another process. */
static long long process_start(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');  /* the command name may hold spaces */
    if (p == NULL) return -1;
    long long start = -1;
    /* after ") ": state is field 3, starttime field 22 */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %lld",
               &start) != 1)
        return -1;
    return start;
}

static void store_identity(Store *store)
{
    if (gethostname(store->host, sizeof store->host) != 0) snprintf(store->host, sizeof store->host, "unknown");
    store->host[sizeof store->host - 1] = '\0';
    for (char *p = store->host; *p; p++)
        if (*p == ' ') *p = '_';
    long pid = (long)getpid();
    snprintf(store->me, sizeof store->me, "%s %ld %lld", store->host, pid, process_start(pid));
}

/* Whether the process of claimed_by may still be writing its run: a claim of this very
 * process, of none (an older hetsim) or of a process on this host that is gone, is not;
 * a claim from another host cannot be checked and is taken as alive. */
static int claim_alive(const Store *store, const char *claimed_by)
{
    if (claimed_by == NULL || strcmp(claimed_by, store->me) == 0) return 0;
    char host[64];
    long pid = 0;
    long long start = 0;
    if (sscanf(claimed_by, "%63s %ld %lld", host, &pid, &start) != 3) return 0;
    if (strcmp(host, store->host) != 0) return 1;
    return pid > 0 && process_start(pid) == start;
}

int store_claim_sweep(Store *store, const StoreSweepClaim *claim, int64_t *first_run, int *existed)
{
    if (store == NULL || claim == NULL || claim->sweep == NULL || first_run == NULL || existed == NULL)
        return HS_E_INTERNAL;
    char now[32];
    int rc = SQLITE_OK, status;
    *first_run = 0;
    *existed = 0;
    status = store_begin(store);
    if (status != HS_OK) goto fail;
    sqlite3_stmt *find = store->stmt[STMT_FIND_SWEEP];
    bind_text(find, 1, claim->sweep, &rc);
    if (rc == SQLITE_OK) rc = sqlite3_step(find);
    if (rc == SQLITE_ROW) {
        *first_run = sqlite3_column_int64(find, 0);
        *existed = 1;
        int64_t reserved = sqlite3_column_int64(find, 1);
        sqlite3_reset(find);
        if (reserved != claim->runs) {
            status = hs_diag_set(&store->diag, HS_E_INTERNAL, store->path, 0,
                                 "sweep %s reserved %lld run ids, but it has %lld runs", claim->sweep,
                                 (long long)reserved, (long long)claim->runs);
            goto fail;
        }
        return store_commit(store);
    }
    sqlite3_reset(find);
    if (rc != SQLITE_DONE) {
        status = store_fail(store, rc, "find sweep");
        goto fail;
    }
    /* runs of the sweep written before sweeps were claimed (an older hetsim) */
    rc = SQLITE_OK;
    sqlite3_stmt *count = store->stmt[STMT_COUNT_SWEEP_RUNS];
    bind_text(count, 1, claim->sweep, &rc);
    if (rc == SQLITE_OK) rc = sqlite3_step(count);
    int64_t older = rc == SQLITE_ROW ? sqlite3_column_int64(count, 0) : 0;
    sqlite3_reset(count);
    if (rc != SQLITE_ROW) {
        status = store_fail(store, rc, "find sweep");
        goto fail;
    }
    *existed = older > 0;
    /* Reserve ids: past every id given so far, and AUTOINCREMENT's counter moved past
     * the range so no other run is given one of them. */
    sqlite3_stmt *last = store->stmt[STMT_LAST_ID];
    rc = sqlite3_step(last);
    int64_t last_id = rc == SQLITE_ROW ? sqlite3_column_int64(last, 0) : 0;
    sqlite3_reset(last);
    if (rc != SQLITE_ROW) {
        status = store_fail(store, rc, "reserve run ids");
        goto fail;
    }
    *first_run = last_id + 1;
    int64_t end = last_id + claim->runs;
    rc = SQLITE_OK;
    bind_int64(store->stmt[STMT_SET_SEQUENCE], 1, end, &rc);
    if ((status = store_exec_bound(store, store->stmt[STMT_SET_SEQUENCE], rc, "reserve run ids")) != HS_OK) goto fail;
    bind_int64(store->stmt[STMT_ADD_SEQUENCE], 1, end, &rc);
    if ((status = store_exec_bound(store, store->stmt[STMT_ADD_SEQUENCE], rc, "reserve run ids")) != HS_OK) goto fail;
    format_utc_now(now);
    sqlite3_stmt *insert = store->stmt[STMT_INSERT_SWEEP];
    bind_text(insert, 1, claim->sweep, &rc);
    bind_int64(insert, 2, *first_run, &rc);
    bind_int64(insert, 3, claim->runs, &rc);
    bind_int64(insert, 4, claim->points, &rc);
    bind_int64(insert, 5, claim->repeat, &rc);
    bind_text(insert, 6, now, &rc);
    if ((status = store_exec_bound(store, insert, rc, "claim sweep")) != HS_OK) goto fail;
    return store_commit(store);
fail:
    store_rollback(store);
    return status;
}

/* One point's claim inside the caller's transaction. */
static int store_claim_one(Store *store, const char *sweep, const char *point, int64_t run_id, StoreClaim *outcome,
                           char *holder, size_t holder_size)
{
    int64_t stale[16];
    int n_stale = 0, rc = SQLITE_OK, status;
    *outcome = STORE_CLAIMED;
    sqlite3_stmt *find = store->stmt[STMT_POINT_RUNS];
    bind_text(find, 1, sweep, &rc);
    bind_text(find, 2, point, &rc);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(find);
        if (rc != SQLITE_ROW) break;
        const char *run_status = (const char *)sqlite3_column_text(find, 1);
        const char *claimed_by = (const char *)sqlite3_column_text(find, 2);
        int complete = run_status != NULL && (strcmp(run_status, "done") == 0 || strcmp(run_status, "diverged") == 0);
        if (complete) {
            if (*outcome == STORE_CLAIMED) *outcome = STORE_COMPLETE;
        } else if (run_status != NULL && strcmp(run_status, "running") == 0 && claim_alive(store, claimed_by)) {
            if (*outcome == STORE_CLAIMED) *outcome = STORE_HELD;
            if (holder != NULL && holder_size > 0) snprintf(holder, holder_size, "%s", claimed_by);
        } else if (n_stale < (int)(sizeof stale / sizeof stale[0])) {
            stale[n_stale++] = sqlite3_column_int64(find, 0);
        }
    }
    sqlite3_reset(find);
    if (rc != SQLITE_DONE) return store_fail(store, rc, "claim run");
    if (*outcome != STORE_CLAIMED) return HS_OK;  /* nothing changes */
    /* Incomplete runs of the point that nobody writes any more: gone with their rows. */
    for (int i = 0; i < n_stale; i++) {
        if ((status = store_delete_rows(store, stale[i])) != HS_OK) return status;
        store_forget_run(store, stale[i]);
        if (store->timed_run == stale[i]) store->timed_run = 0;
    }
    sqlite3_stmt *insert = store->stmt[STMT_INSERT_CLAIM];
    rc = SQLITE_OK;
    bind_int64(insert, 1, run_id, &rc);
    bind_text(insert, 2, sweep, &rc);
    bind_text(insert, 3, point, &rc);
    bind_text(insert, 4, store->me, &rc);
    status = store_exec_bound(store, insert, rc, "claim run");
    return status != HS_OK ? status : store_note_run(store, run_id);
}

int store_claim_runs(Store *store, const char *sweep, int count, const char *const *points, const int64_t *run_ids,
                     StoreClaim *outcomes, char *holder, size_t holder_size)
{
    if (store == NULL || sweep == NULL || points == NULL || run_ids == NULL || outcomes == NULL) return HS_E_INTERNAL;
    if (holder != NULL && holder_size > 0) holder[0] = '\0';
    int status = store_begin(store);
    if (status != HS_OK) goto fail;
    /* Rows written before this transaction by this Store go first (they may be a
     * point's earlier rows); with batching this is also when they commit. */
    status = store_write_pending(store);
    for (int i = 0; status == HS_OK && i < count; i++)
        status = store_claim_one(store, sweep, points[i], run_ids[i], &outcomes[i], holder, holder_size);
    if (status != HS_OK) goto fail;
    status = store_commit(store);
    if (status != HS_OK) goto fail;
    store_drop_pending(store);
    return HS_OK;
fail:
    store_rollback(store);
    return status;
}

int store_claim_run(Store *store, const char *sweep, const char *point, int64_t run_id, StoreClaim *outcome,
                    char *holder, size_t holder_size)
{
    return store_claim_runs(store, sweep, 1, &point, &run_id, outcome, holder, holder_size);
}

int store_drop_unbegun(Store *store)
{
    if (store == NULL) return HS_E_INTERNAL;
    int rc = SQLITE_OK;
    bind_text(store->stmt[STMT_DROP_UNBEGUN], 1, store->me, &rc);
    return store_exec_bound(store, store->stmt[STMT_DROP_UNBEGUN], rc, "release claims");
}

int store_set_autocheckpoint(Store *store, int pages)
{
    if (store == NULL || pages < 0) return HS_E_INTERNAL;
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA wal_autocheckpoint = %d", pages);
    int rc = sqlite3_exec(store->db, pragma, NULL, NULL, NULL);
    return rc == SQLITE_OK ? HS_OK : store_fail(store, rc, "set checkpoints");
}

struct StoreCheckpointer {
    sqlite3 *db;
};

int store_checkpointer_open(const char *path, StoreCheckpointer **out, HsDiag *diag)
{
    *out = NULL;
    StoreCheckpointer *c = calloc(1, sizeof *c);
    if (c == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    int rc = sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        hs_diag_set(diag, HS_E_IO, path, 0, "cannot open database: %s", c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
        store_checkpointer_close(c);
        return HS_E_IO;
    }
    /* a first read opens the WAL: until then the connection does not know the file is
     * in WAL mode, and a checkpoint does nothing */
    sqlite3_busy_timeout(c->db, STORE_BUSY_TIMEOUT_MS);
    rc = sqlite3_exec(c->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        hs_diag_set(diag, HS_E_IO, path, 0, "cannot read database: %s", sqlite3_errmsg(c->db));
        store_checkpointer_close(c);
        return HS_E_IO;
    }
    *out = c;
    return HS_OK;
}

int store_checkpointer_run(StoreCheckpointer *c)
{
    int rc = sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return rc == SQLITE_OK || (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED ? HS_OK : HS_E_IO;
}

void store_checkpointer_close(StoreCheckpointer *c)
{
    if (c == NULL) return;
    sqlite3_close(c->db);
    free(c);
}

void store_sweep_runs_free(StoreSweepRun *runs, int count)
{
    if (runs == NULL) return;
    for (int i = 0; i < count; i++) {
        free(runs[i].point);
        free(runs[i].status);
    }
    free(runs);
}

static char *copy_column_text(sqlite3_stmt *stmt, int column, int *failed)
{
    const unsigned char *text = sqlite3_column_text(stmt, column);
    if (text == NULL) return NULL;
    char *copy = strdup((const char *)text);
    if (copy == NULL) *failed = 1;
    return copy;
}

int store_list_sweep_runs(Store *store, const char *sweep, StoreSweepRun **runs,
                          int *count)
{
    if (store == NULL || sweep == NULL || runs == NULL || count == NULL)
        return HS_E_INTERNAL;
    sqlite3_stmt *stmt = store->stmt[STMT_LIST_SWEEP];
    StoreSweepRun *list = NULL;
    int used = 0, capacity = 0, rc;
    int status = HS_OK;
    *runs = NULL;
    *count = 0;
    rc = sqlite3_bind_text(stmt, 1, sweep, -1, SQLITE_STATIC);
    if (rc != SQLITE_OK) {
        status = store_fail(store, rc, "list sweep runs");
        goto fail;
    }
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (used == capacity) {
            capacity = capacity ? 2 * capacity : 16;
            StoreSweepRun *grown = realloc(list, (size_t)capacity * sizeof *grown);
            if (grown == NULL) goto nomem;
            list = grown;
        }
        int failed = 0;
        StoreSweepRun *run = &list[used++];
        run->run_id = sqlite3_column_int64(stmt, 0);
        run->point = copy_column_text(stmt, 1, &failed);
        run->status = copy_column_text(stmt, 2, &failed);
        if (failed) goto nomem;
    }
    if (rc != SQLITE_DONE) {
        status = store_fail(store, rc, "list sweep runs");
        goto fail;
    }
    sqlite3_reset(stmt);
    *runs = list;
    *count = used;
    return HS_OK;
nomem:
    status = hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory");
fail:
    sqlite3_reset(stmt);
    store_sweep_runs_free(list, used);
    return status;
}

/* ---- open and close ---- */

/* SQLite takes a very short non-database file for an empty database and would write a
 * schema over it; the header check refuses every existing non-empty file that does not
 * start with SQLite's magic string. */
static int check_file_header(Store *store)
{
    static const char magic[16] = "SQLite format 3";  /* with its terminating NUL */
    char header[16];
    FILE *file = fopen(store->path, "rb");
    if (file == NULL) return HS_OK;  /* new file, or SQLite will say why it cannot open */
    size_t got = fread(header, 1, sizeof header, file);
    fclose(file);
    if (got == 0 || (got == sizeof header && memcmp(header, magic, sizeof magic) == 0))
        return HS_OK;
    return hs_diag_set(&store->diag, HS_E_INPUT, store->path, 0,
                       "not a SQLite database (no SQLite header)");
}

static int query_int(Store *store, const char *sql, int64_t *value)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(store->db, sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
        *value = sqlite3_column_int64(stmt, 0);
        rc = SQLITE_OK;
    }
    int status = rc == SQLITE_OK ? HS_OK : store_fail(store, rc, "read schema");
    sqlite3_finalize(stmt);
    return status;
}

/* Reads what the file holds and decides: *is_empty means "create the schema here". */
static int check_schema(Store *store, int *is_empty)
{
    int64_t objects = 0, version = 0, application = 0, tables = 0;
    int status = query_int(store, "SELECT count(*) FROM sqlite_master", &objects);
    if (status != HS_OK) return status;
    status = query_int(store, "PRAGMA user_version", &version);
    if (status != HS_OK) return status;
    status = query_int(store, "PRAGMA application_id", &application);
    if (status != HS_OK) return status;
    *is_empty = objects == 0 && version == 0 && application == 0;
    if (*is_empty) return HS_OK;
    if (application != 0 && application != STORE_APPLICATION_ID)
        return hs_diag_set(&store->diag, HS_E_INPUT, store->path, 0,
                           "not a hetsim database (application_id 0x%08llx)",
                           (unsigned long long)application);
    if (version == 0)
        return hs_diag_set(&store->diag, HS_E_INPUT, store->path, 0,
                           "not a hetsim database (it has tables but no schema version)");
    /* an older version is brought up to this one when opened (upgrade_schema) */
    if (version < 1 || version > STORE_SCHEMA_VERSION)
        return hs_diag_set(&store->diag, HS_E_INPUT, store->path, 0,
                           "database has schema version %lld (PRAGMA user_version), "
                           "but this hetsim reads and writes versions 1 to %d",
                           (long long)version, STORE_SCHEMA_VERSION);
    status = query_int(store, v1_tables_sql, &tables);
    if (status != HS_OK) return status;
    if (tables != V1_TABLE_COUNT)
        return hs_diag_set(&store->diag, HS_E_INPUT, store->path, 0,
                           "not a hetsim database (schema version %lld but %lld of its %d "
                           "tables)", (long long)version, (long long)tables, V1_TABLE_COUNT);
    return HS_OK;
}

static int exec_sql(Store *store, const char *sql, const char *what)
{
    int rc = sqlite3_exec(store->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? HS_OK : store_fail(store, rc, what);
}

/* check_schema in one read transaction. Its queries are separate statements; in
 * autocommit each would read its own snapshot, and a process creating the schema between
 * them made a new file look like "tables but no schema version" (CI saw it; about 1 file
 * in 150 with three processes opening it together). */
static int check_schema_snapshot(Store *store, int *is_empty)
{
    int status = exec_sql(store, "BEGIN", "read schema");
    if (status != HS_OK) return status;
    status = check_schema(store, is_empty);
    int end = exec_sql(store, status == HS_OK ? "COMMIT" : "ROLLBACK", "read schema");
    return status != HS_OK ? status : end;
}

static int schema_finish(Store *store, int fresh);

/* Creates the schema unless another process did it first: the check is repeated under
 * the write lock, so two sweep jobs starting on a new file cannot both create it.
 * *created says whether this call did. */
static int create_schema(Store *store, int *created)
{
    char pragmas[96];
    int is_empty = 0;
    *created = 0;
    int status = exec_sql(store, "BEGIN IMMEDIATE", "create schema");
    if (status != HS_OK) goto fail;
    status = check_schema(store, &is_empty);
    if (status != HS_OK) goto fail;
    if (!is_empty) {  /* another process created it (and check_schema accepted it) */
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
        return HS_OK;
    }
    for (int t = 0; t < STORE_TABLE_COUNT; t++) {
        char *sql = sql_create_table(&store_tables[t]);
        status = sql == NULL ? hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory")
                             : exec_sql(store, sql, "create schema");
        sqlite3_free(sql);
        if (status != HS_OK) goto fail;
    }
    snprintf(pragmas, sizeof pragmas, "PRAGMA application_id = %d;", STORE_APPLICATION_ID);
    status = exec_sql(store, pragmas, "create schema");
    if (status == HS_OK) status = schema_finish(store, 1);
    if (status != HS_OK) goto fail;
    status = exec_sql(store, "COMMIT", "create schema");
    *created = status == HS_OK;
    return status;
fail:
    if (!sqlite3_get_autocommit(store->db)) sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
    return status;
}

/* Switching to WAL needs the file to itself, and SQLite answers SQLITE_BUSY at once,
 * without its busy handler, when another connection is reading it (as when several sweep
 * jobs open a new file together). So this retries for up to the busy timeout. Once the
 * file is in WAL mode the pragma is a no-op that never blocks.
 * journal_mode answers with the mode it ended in; WAL may be refused (some network
 * file systems), which costs concurrency but not correctness, so that is not an error. */
static int set_journal_wal(Store *store)
{
    struct timespec start, now, pause = { 0, 10 * 1000 * 1000 };  /* 10 ms */
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int rc = sqlite3_exec(store->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
        if (rc == SQLITE_OK) return HS_OK;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((rc & 0xff) != SQLITE_BUSY ||
            seconds_between(&start, &now) * 1000.0 >= store->busy_timeout_ms)
            return store_fail(store, rc, "set journal mode");
        nanosleep(&pause, NULL);
    }
}

static int set_pragmas(Store *store)
{
    int status = set_journal_wal(store);
    if (status != HS_OK) return status;
    status = exec_sql(store, "PRAGMA synchronous = NORMAL", "set synchronous");
    if (status != HS_OK) return status;
    /* off: the store checks its rows' runs itself (store_check_run) */
    return exec_sql(store, "PRAGMA foreign_keys = OFF", "set foreign keys");
}

/* Which columns of table the file has: *exists says whether it has the table, and
 * has[i] whether it has table->columns[i] (stmt: SELECT name FROM pragma_table_info(?1),
 * one query per table; a prepared query per column was a fifth of a short sweep's
 * set-up). */
static int table_columns(Store *store, sqlite3_stmt *stmt, const SinkTable *table, int *exists, unsigned char *has)
{
    int rc = sqlite3_bind_text(stmt, 1, table->table, -1, SQLITE_STATIC);
    *exists = 0;
    memset(has, 0, (size_t)table->n_columns);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(stmt);
        if (rc != SQLITE_ROW) break;
        const char *name = (const char *)sqlite3_column_text(stmt, 0);
        *exists = 1;
        for (int i = 0; name != NULL && i < table->n_columns; i++)
            if (strcmp(table->columns[i].name, name) == 0) has[i] = 1;
    }
    sqlite3_reset(stmt);
    return rc == SQLITE_DONE ? HS_OK : store_fail(store, rc, "read schema");
}

/* Counts in *missing the tables and columns of the row tables the file lacks; with apply,
 * adds them (inside the caller's transaction). A file written by an older hetsim gains
 * the columns added since, NULL in its older rows, and the tables added since; the
 * schema version stays: readers name their columns, and the new ones are optional. */
static int migrate_tables(Store *store, sqlite3_stmt *stmt, int apply, int *missing)
{
    for (int t = 0; t < STORE_TABLE_COUNT; t++) {
        const SinkTable *table = store_tables[t].table;
        unsigned char has[64];
        int exists = 0;
        if (table->n_columns > (int)sizeof has)
            return hs_diag_set(&store->diag, HS_E_INTERNAL, store->path, 0, "table %s: too many columns", table->table);
        int status = table_columns(store, stmt, table, &exists, has);
        if (status != HS_OK) return status;
        if (!exists) {
            (*missing)++;
            if (!apply) continue;
            char *sql = sql_create_table(&store_tables[t]);
            status = sql == NULL ? hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory")
                                 : exec_sql(store, sql, "add a table");
            sqlite3_free(sql);
            if (status != HS_OK) return status;
            continue;
        }
        for (int i = 0; i < table->n_columns; i++) {
            const SinkColumn *c = &table->columns[i];
            if (!is_column(c) || has[i]) continue;
            (*missing)++;
            if (!apply) continue;
            sqlite3_str *out = sqlite3_str_new(NULL);
            sqlite3_str_appendf(out, "ALTER TABLE %w ADD COLUMN ", table->table);
            sql_column(out, c, 1);
            char *sql = sqlite3_str_finish(out);
            status = sql == NULL ? hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory")
                                 : exec_sql(store, sql, "add a column");
            sqlite3_free(sql);
            if (status != HS_OK) return status;
        }
    }
    return HS_OK;
}

/* migrate_tables with the one statement it needs. */
static int migrate(Store *store, int apply, int *missing)
{
    *missing = 0;
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(store->db, "SELECT name FROM pragma_table_info(?1)", -1, &stmt, NULL);
    if (rc != SQLITE_OK) return store_fail(store, rc, "read schema");
    int status = migrate_tables(store, stmt, apply, missing);
    sqlite3_finalize(stmt);
    return status;
}

/* The views (recreated, so that their text is this version's), the rows of
 * schema_columns and the version: the last step of creating or upgrading a schema,
 * inside its transaction. fresh: the tables were created in this transaction, so there
 * are no views to drop and no schema_columns rows to delete (each statement parsed and
 * run for nothing costs a new file's set-up ~0.1M instructions). */
static int schema_finish(Store *store, int fresh)
{
    static const char *const drop[] = {"DROP VIEW IF EXISTS time_to_accuracy", "DROP VIEW IF EXISTS agent_summary",
                                       "DROP VIEW IF EXISTS run_summary", "DROP VIEW IF EXISTS run_targets"};
    int status = HS_OK;
    for (size_t i = 0; status == HS_OK && !fresh && i < sizeof drop / sizeof drop[0]; i++)
        status = exec_sql(store, drop[i], "create views");
    if (status == HS_OK) status = exec_sql(store, run_targets_sql, "create views");
    for (int v = 0; status == HS_OK && v < STORE_VIEW_COUNT; v++)
        status = exec_sql(store, store_views[v].sql, "create views");
    if (status == HS_OK && !fresh) status = exec_sql(store, "DELETE FROM schema_columns", "describe columns");
    sqlite3_stmt *insert = NULL;
    if (status == HS_OK) {
        int rc = sqlite3_prepare_v2(store->db, "INSERT INTO schema_columns(table_name, column_name, type, unit, doc,"
                                    " is_result) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &insert, NULL);
        if (rc != SQLITE_OK) status = store_fail(store, rc, "describe columns");
    }
    for (int t = 0; status == HS_OK && t < STORE_TABLE_COUNT + STORE_VIEW_COUNT; t++) {
        const char *name = t < STORE_TABLE_COUNT ? store_tables[t].table->table : store_views[t - STORE_TABLE_COUNT].name;
        const SinkColumn *columns = t < STORE_TABLE_COUNT ? store_tables[t].table->columns
                                                          : store_views[t - STORE_TABLE_COUNT].columns;
        int n = t < STORE_TABLE_COUNT ? store_tables[t].table->n_columns : store_views[t - STORE_TABLE_COUNT].n_columns;
        int per_run = t < STORE_TABLE_COUNT && store_tables[t].per_run;
        for (int i = -1; status == HS_OK && i < n; i++) {
            int rc = SQLITE_OK;
            if (i < 0 && !per_run) continue;
            const SinkColumn *c = i < 0 ? NULL : &columns[i];
            if (c != NULL && !is_column(c)) continue;
            bind_text(insert, 1, name, &rc);
            bind_text(insert, 2, c ? c->name : "run_id", &rc);
            bind_text(insert, 3, c ? sql_type(c->type) : "INTEGER", &rc);
            bind_text(insert, 4, c ? c->unit : "", &rc);
            bind_text(insert, 5, c ? c->doc : "the run (runs.id)", &rc);
            bind_int64(insert, 6, c == NULL || !(c->flags & (SINK_WALL | SINK_ORIGIN)), &rc);
            status = store_exec_bound(store, insert, rc, "describe columns");
        }
    }
    sqlite3_finalize(insert);
    if (status == HS_OK) {
        char pragma[64];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
        status = exec_sql(store, pragma, "set schema version");
    }
    return status;
}

/* Brings an older file up to this version: the tables and columns added since, the
 * views, schema_columns, the version. Checked again under the write lock, so two
 * processes cannot both add a column. */
static int upgrade_schema(Store *store)
{
    int missing = 0;
    int64_t version = 0, views = 0;
    int status = migrate(store, 0, &missing);
    if (status == HS_OK) status = query_int(store, "PRAGMA user_version", &version);
    if (status == HS_OK)
        status = query_int(store, "SELECT count(*) FROM sqlite_master WHERE type = 'view'", &views);
    if (status != HS_OK || (missing == 0 && version == STORE_SCHEMA_VERSION && views == STORE_VIEW_COUNT + 1))
        return status;
    status = exec_sql(store, "BEGIN IMMEDIATE", "upgrade schema");
    if (status == HS_OK) status = migrate(store, 1, &missing);
    if (status == HS_OK) status = schema_finish(store, 0);
    if (status == HS_OK) return exec_sql(store, "COMMIT", "upgrade schema");
    if (!sqlite3_get_autocommit(store->db)) sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
    return status;
}

const SinkTable *store_table(int i, int *per_run)
{
    if (i < 0 || i >= STORE_TABLE_COUNT) return NULL;
    if (per_run != NULL) *per_run = store_tables[i].per_run;
    return store_tables[i].table;
}

/* Prepares the statements: the fixed ones and those generated from the row tables. */
static int prepare_statements(Store *store)
{
    for (int i = 0; i < STMT_FIXED_COUNT; i++) {
        int rc = sqlite3_prepare_v2(store->db, statement_sql[i], -1, &store->stmt[i], NULL);
        if (rc != SQLITE_OK) return store_fail(store, rc, "prepare statement (schema mismatch?)");
    }
    for (int i = 0; i < STMT_TABLE_COUNT; i++) {
        if (i < SINK_RECORD_COUNT && (i == SINK_RECORD_RUN || !sink_tables[i].stored)) continue;
        char *sql = i == STMT_INSERT_RUN      ? sql_insert(SINK_RECORD_RUN)
                    : i == STMT_BEGIN_CLAIMED ? sql_claimed(0)
                    : i == STMT_WHOLE_CLAIMED ? sql_claimed(1)
                    : i == STMT_END_RUN       ? sql_end_run()
                                              : sql_insert((SinkRecord)i);
        if (sql == NULL) return hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory");
        int rc = sqlite3_prepare_v2(store->db, sql, -1, &store->table_stmt[i], NULL);
        sqlite3_free(sql);
        if (rc != SQLITE_OK) return store_fail(store, rc, "prepare statement (schema mismatch?)");
        if (i < SINK_RECORD_COUNT)
            snprintf(store->insert_what[i], sizeof store->insert_what[i], "insert %s", sink_tables[i].row);
    }
    for (int t = 0; t < STORE_TABLE_COUNT; t++) {
        if (!store_tables[t].per_run) continue;
        char *sql = sqlite3_mprintf("DELETE FROM %w WHERE run_id = ?1", store_tables[t].table->table);
        if (sql == NULL) return hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory");
        int rc = sqlite3_prepare_v2(store->db, sql, -1, &store->delete_stmt[t], NULL);
        sqlite3_free(sql);
        if (rc != SQLITE_OK) return store_fail(store, rc, "prepare statement (schema mismatch?)");
    }
    return HS_OK;
}

int store_open(const char *path, Store **out, HsDiag *diag)
{
    Store *store = NULL;
    int is_empty = 0, status, rc;
    if (out != NULL) *out = NULL;
    if (path == NULL || out == NULL || path[0] == '\0')
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "no database file given");
    store = calloc(1, sizeof *store);
    if (store == NULL) goto nomem;
    store->path = strdup(path);
    if (store->path == NULL) goto nomem;
    hs_diag_clear(&store->diag);
    store->busy_timeout_ms = STORE_BUSY_TIMEOUT_MS;
    store_identity(store);

    status = check_file_header(store);
    if (status != HS_OK) goto fail;
    /* NOMUTEX: one thread drives a Store (store.h), so SQLite's per-call mutexes are
     * pure cost (a tenth of a sweep writer's CPU). */
    /* store_vfs: the WAL's frames written by one call per transaction */
    rc = sqlite3_open_v2(path, &store->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                         store_vfs_name());
    if (rc != SQLITE_OK) {
        int err = store->db ? sqlite3_system_errno(store->db) : 0;
        status = hs_diag_set(&store->diag, rc == SQLITE_NOMEM ? HS_E_NOMEM : HS_E_IO, path, 0,
                             "cannot open database: %s%s%s",
                             store->db ? sqlite3_errmsg(store->db) : sqlite3_errstr(rc),
                             err ? ": " : "", err ? strerror(err) : "");
        goto fail;
    }
    /* READWRITE silently falls back to read-only on a write-protected file. */
    if (sqlite3_db_readonly(store->db, "main") == 1) {
        status = hs_diag_set(&store->diag, HS_E_IO, path, 0,
                             "database is read-only (cannot write runs to it)");
        goto fail;
    }
    sqlite3_busy_timeout(store->db, store->busy_timeout_ms);

    /* The version is checked before any pragma writes to the file, so another program's
     * database is left exactly as it was. */
    status = check_schema_snapshot(store, &is_empty);
    if (status != HS_OK) goto fail;
    status = set_pragmas(store);
    if (status != HS_OK) goto fail;
    int created = 0;
    if (is_empty) {
        status = create_schema(store, &created);
        if (status != HS_OK) goto fail;
    }
    /* A schema this call created is this version's: checking it again would only read
     * back what was just written (a query per table) */
    if (!created) status = upgrade_schema(store);
    if (status != HS_OK) goto fail;
    status = prepare_statements(store);
    if (status != HS_OK) goto fail;
    *out = store;
    return HS_OK;
nomem:
    status = HS_E_NOMEM;
    if (store != NULL) hs_diag_set(&store->diag, HS_E_NOMEM, path, 0, "out of memory");
fail:
    hs_diag_set(diag, status, NULL, 0, "%s",
                store != NULL && store->diag.message[0] ? store->diag.message
                                                        : "out of memory");
    store_close(store);
    return status;
}

void store_close(Store *store)
{
    if (store == NULL) return;
    if (store->db != NULL && store->pending_count > 0 && store->stmt[STMT_BEGIN] != NULL)
        store_flush(store);  /* best effort: the run stays 'running' either way */
    store_drop_pending(store);
    for (int i = 0; i < STMT_FIXED_COUNT; i++) sqlite3_finalize(store->stmt[i]);
    for (int i = 0; i < STMT_TABLE_COUNT; i++) sqlite3_finalize(store->table_stmt[i]);
    for (int t = 0; t < STORE_TABLE_COUNT; t++) sqlite3_finalize(store->delete_stmt[t]);
    for (int i = 0; i < SINK_RECORD_COUNT; i++) sqlite3_finalize(store->multi_stmt[i]);
    for (int i = 0; i < SINK_RECORD_COUNT; i++) sqlite3_finalize(store->few_stmt[i]);
    sqlite3_close(store->db);
    store_free_chunks(store->chunks);
    store_free_chunks(store->spare);
    free(store->pending);
    free(store->order);
    free(store->runs);
    free(store->path);
    free(store);
}
