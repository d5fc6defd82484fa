/* store.c — the Sink over SQLite: schema, version checks, buffered batched writes.
 * See store.h for the tables, the conventions and why rows are buffered.
 * One file on purpose: every statement the schema has is prepared, bound and finalized
 * here, so a column added to one table changes one file (about 1,000 lines). */
#include "analysis/store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Rows wait in memory at most about this long (checked when the next row arrives), so a
 * slow train-mode run still shows its progress to a reader of the database. */
#define STORE_FLUSH_SECONDS 1.0

/* The DDL of schema version 1. Indexes follow the way rows are read: by run, then by
 * round. No UNIQUE constraints on rows: the store records what the engine reports and
 * does not judge it (an asynchronous method may report an agent twice in a "round").
 * AUTOINCREMENT so that an id deleted by sweep --resume is never given to another run. */
static const char schema_sql[] =
    "CREATE TABLE runs("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT, scenario TEXT, method TEXT,"
    " seed INTEGER,"  /* the uint64 seed's bit pattern, see store.h */
    " mode TEXT, config TEXT,"
    " status TEXT NOT NULL CHECK (status IN"
    "  ('running','done','failed','diverged','interrupted')),"
    " started_at TEXT, finished_at TEXT,"
    " wall_s REAL, sim_time_s REAL, final_accuracy REAL, rounds_done INTEGER,"
    " sweep TEXT, point TEXT, message TEXT);"
    "CREATE INDEX runs_sweep ON runs(sweep, point);"
    "CREATE TABLE agents("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " agent INTEGER NOT NULL, grp TEXT,"
    " compute REAL,"    /* FLOP/s */
    " bandwidth REAL,"  /* bytes/s; the contract's name for the uplink */
    " latency REAL,"    /* s */
    " samples INTEGER,"
    " uplink REAL, downlink REAL,"  /* bytes/s */
    " byzantine INTEGER);"
    "CREATE INDEX agents_run ON agents(run_id, agent);"
    "CREATE TABLE rounds("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " round INTEGER NOT NULL,"
    " t_start REAL, t_end REAL,"  /* virtual seconds */
    " idle_s REAL,"   /* summed over agents */
    " bytes REAL,"
    " extra REAL);"   /* method-specific figure, NULL when none */
    "CREATE INDEX rounds_run ON rounds(run_id, round);"
    "CREATE TABLE agent_rounds("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " round INTEGER NOT NULL, agent INTEGER NOT NULL,"
    " compute_s REAL, comm_s REAL, idle_s REAL,"
    /* ORs, not IN (...): SQLite builds an ephemeral table for an IN list on every
     * insert, which tripled the cost of this, the most frequent, row. */
    " role TEXT CHECK (role = 'alone' OR role = 'offloader' OR role = 'helper'),"
    " offline_s REAL);"
    "CREATE INDEX agent_rounds_run ON agent_rounds(run_id, round);"
    "CREATE TABLE pairings("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " round INTEGER NOT NULL, slow INTEGER, fast INTEGER, split INTEGER,"
    " predicted_s REAL, actual_s REAL, solver TEXT,"
    " solve_ms REAL);"  /* wall-clock, measured by the caller */
    "CREATE INDEX pairings_run ON pairings(run_id, round);"
    "CREATE TABLE metrics("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " t REAL, round INTEGER,"
    " agent INTEGER,"  /* NULL for the averaged model */
    " train_loss REAL, test_loss REAL, test_accuracy REAL, bytes_sent REAL,"
    " heldout_accuracy REAL, seen_accuracy REAL,"  /* [data] partition = domains, else NULL */
    " epsilon REAL);"  /* [privacy] clip = sample | update, else NULL */
    "CREATE INDEX metrics_run ON metrics(run_id, round);";

/* runs, agents, rounds, agent_rounds, pairings, metrics */
#define TABLE_COUNT 6

/* Every statement, prepared once at open and reused. */
enum {
    STMT_BEGIN, STMT_COMMIT, STMT_ROLLBACK,
    STMT_INSERT_RUN, STMT_END_RUN, STMT_MARK_INTERRUPTED, STMT_RUN_EXISTS,
    STMT_INSERT_AGENT, STMT_INSERT_ROUND, STMT_INSERT_AGENT_ROUND, STMT_INSERT_PAIRING,
    STMT_INSERT_METRIC,
    STMT_DELETE_AGENTS, STMT_DELETE_ROUNDS, STMT_DELETE_AGENT_ROUNDS,
    STMT_DELETE_PAIRINGS, STMT_DELETE_METRICS, STMT_DELETE_RUN,
    STMT_LIST_SWEEP,
    STMT_COUNT
};

static const char *const statement_sql[STMT_COUNT] = {
    [STMT_BEGIN] = "BEGIN IMMEDIATE",
    [STMT_COMMIT] = "COMMIT",
    [STMT_ROLLBACK] = "ROLLBACK",
    [STMT_INSERT_RUN] =
        "INSERT INTO runs(name, scenario, method, seed, mode, config, status, started_at,"
        " sweep, point) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9)",
    [STMT_END_RUN] =
        "UPDATE runs SET status = ?2, finished_at = ?3, wall_s = ?4, sim_time_s = ?5,"
        " final_accuracy = ?6, rounds_done = ?7, message = ?8 WHERE id = ?1",
    [STMT_MARK_INTERRUPTED] =
        "UPDATE runs SET status = 'interrupted', finished_at = ?2,"
        " wall_s = coalesce(?3, wall_s),"
        " rounds_done = (SELECT count(*) FROM rounds WHERE run_id = ?1),"
        " sim_time_s = (SELECT max(t_end) FROM rounds WHERE run_id = ?1),"
        " message = coalesce(message, 'interrupted')"
        " WHERE id = ?1 AND status = 'running'",
    [STMT_RUN_EXISTS] = "SELECT 1 FROM runs WHERE id = ?1",
    [STMT_INSERT_AGENT] =
        "INSERT INTO agents(run_id, agent, grp, compute, bandwidth, latency, samples,"
        " uplink, downlink, byzantine) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?5, ?8, ?9)",
    [STMT_INSERT_ROUND] =
        "INSERT INTO rounds(run_id, round, t_start, t_end, idle_s, bytes, extra)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [STMT_INSERT_AGENT_ROUND] =
        "INSERT INTO agent_rounds(run_id, round, agent, compute_s, comm_s, idle_s, role,"
        " offline_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [STMT_INSERT_PAIRING] =
        "INSERT INTO pairings(run_id, round, slow, fast, split, predicted_s, actual_s,"
        " solver, solve_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [STMT_INSERT_METRIC] =
        "INSERT INTO metrics(run_id, t, round, agent, train_loss, test_loss,"
        " test_accuracy, bytes_sent, heldout_accuracy, seen_accuracy, epsilon)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    [STMT_DELETE_AGENTS] = "DELETE FROM agents WHERE run_id = ?1",
    [STMT_DELETE_ROUNDS] = "DELETE FROM rounds WHERE run_id = ?1",
    [STMT_DELETE_AGENT_ROUNDS] = "DELETE FROM agent_rounds WHERE run_id = ?1",
    [STMT_DELETE_PAIRINGS] = "DELETE FROM pairings WHERE run_id = ?1",
    [STMT_DELETE_METRICS] = "DELETE FROM metrics WHERE run_id = ?1",
    [STMT_DELETE_RUN] = "DELETE FROM runs WHERE id = ?1",
    [STMT_LIST_SWEEP] = "SELECT id, point, status FROM runs WHERE sweep = ?1 ORDER BY id",
};

typedef enum { ROW_ROUND, ROW_AGENT_ROUND, ROW_PAIRING, ROW_METRIC } RowKind;

/* A row waiting for the next flush. Records are copied by value; the one string a
 * buffered record carries (the pairing's solver) is copied into text, owned here. */
typedef struct PendingRow {
    RowKind kind;
    int64_t run_id;
    char *text;
    union {
        SinkRound round;
        SinkAgentRound agent_round;
        SinkPairing pairing;
        SinkMetric metric;
    } as;
} PendingRow;

struct Store {
    sqlite3 *db;
    char *path;
    HsDiag diag;            /* first error since open */
    int busy_timeout_ms;
    sqlite3_stmt *stmt[STMT_COUNT];
    PendingRow *pending;    /* (pending_capacity) rows, pending_count in use */
    size_t pending_count, pending_capacity;
    struct timespec pending_since;  /* monotonic time of the oldest buffered row */
    int64_t timed_run;      /* the run begun last on this Store, for mark_interrupted */
    struct timespec timed_start;
};

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
static int store_exec_stmt(Store *store, int which, const char *what)
{
    sqlite3_stmt *stmt = store->stmt[which];
    int rc = sqlite3_step(stmt);
    int status = HS_OK;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) status = store_fail(store, rc, what);
    sqlite3_reset(stmt);
    return status;
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

/* Binds then steps: the one place a bind failure becomes an error. */
static int store_exec_bound(Store *store, int which, int bind_rc, const char *what)
{
    if (bind_rc != SQLITE_OK) {
        sqlite3_reset(store->stmt[which]);
        return store_fail(store, bind_rc, what);
    }
    return store_exec_stmt(store, which, what);
}

static int store_begin(Store *store)
{
    return store_exec_stmt(store, STMT_BEGIN, "begin transaction");
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

static int store_write_row(Store *store, const PendingRow *row)
{
    int rc = SQLITE_OK;
    sqlite3_stmt *stmt;
    switch (row->kind) {
    case ROW_ROUND: {
        const SinkRound *r = &row->as.round;
        stmt = store->stmt[STMT_INSERT_ROUND];
        bind_int64(stmt, 1, row->run_id, &rc);
        bind_int64(stmt, 2, r->round, &rc);
        bind_double(stmt, 3, r->t_start, &rc);
        bind_double(stmt, 4, r->t_end, &rc);
        bind_double(stmt, 5, r->idle_s, &rc);
        bind_double(stmt, 6, r->bytes, &rc);
        bind_double(stmt, 7, r->extra, &rc);
        return store_exec_bound(store, STMT_INSERT_ROUND, rc, "insert round");
    }
    case ROW_AGENT_ROUND: {
        const SinkAgentRound *r = &row->as.agent_round;
        stmt = store->stmt[STMT_INSERT_AGENT_ROUND];
        bind_int64(stmt, 1, row->run_id, &rc);
        bind_int64(stmt, 2, r->round, &rc);
        bind_int64(stmt, 3, r->agent, &rc);
        bind_double(stmt, 4, r->compute_s, &rc);
        bind_double(stmt, 5, r->comm_s, &rc);
        bind_double(stmt, 6, r->idle_s, &rc);
        bind_text(stmt, 7, sink_role_name(r->role), &rc);
        bind_double(stmt, 8, r->offline_s, &rc);
        return store_exec_bound(store, STMT_INSERT_AGENT_ROUND, rc, "insert agent round");
    }
    case ROW_PAIRING: {
        const SinkPairing *p = &row->as.pairing;
        stmt = store->stmt[STMT_INSERT_PAIRING];
        bind_int64(stmt, 1, row->run_id, &rc);
        bind_int64(stmt, 2, p->round, &rc);
        bind_int64(stmt, 3, p->slow, &rc);
        bind_int64(stmt, 4, p->fast, &rc);
        bind_int64(stmt, 5, p->split, &rc);
        bind_double(stmt, 6, p->predicted_s, &rc);
        bind_double(stmt, 7, p->actual_s, &rc);
        bind_text(stmt, 8, row->text, &rc);
        bind_double(stmt, 9, p->solve_ms, &rc);
        return store_exec_bound(store, STMT_INSERT_PAIRING, rc, "insert pairing");
    }
    case ROW_METRIC: {
        const SinkMetric *m = &row->as.metric;
        stmt = store->stmt[STMT_INSERT_METRIC];
        bind_int64(stmt, 1, row->run_id, &rc);
        bind_double(stmt, 2, m->t, &rc);
        bind_int64(stmt, 3, m->round, &rc);
        if (m->agent < 0) bind_null(stmt, 4, &rc);  /* the averaged model */
        else bind_int64(stmt, 4, m->agent, &rc);
        bind_double(stmt, 5, m->train_loss, &rc);
        bind_double(stmt, 6, m->test_loss, &rc);
        bind_double(stmt, 7, m->test_accuracy, &rc);
        bind_double(stmt, 8, m->bytes_sent, &rc);
        bind_double(stmt, 9, m->has_domains ? m->heldout_accuracy : NAN, &rc);
        bind_double(stmt, 10, m->has_domains ? m->seen_accuracy : NAN, &rc);
        bind_double(stmt, 11, m->has_privacy ? m->epsilon : NAN, &rc);
        return store_exec_bound(store, STMT_INSERT_METRIC, rc, "insert metric");
    }
    }
    return hs_diag_set(&store->diag, HS_E_INTERNAL, store->path, 0, "unknown row kind");
}

/* Writes the buffered rows inside the caller's transaction. The buffer is emptied only
 * by store_drop_pending after the commit, so a failed transaction can be retried (a
 * failed run keeps its rows when run_end succeeds later). */
static int store_write_pending(Store *store)
{
    for (size_t i = 0; i < store->pending_count; i++) {
        int status = store_write_row(store, &store->pending[i]);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

static void store_drop_pending(Store *store)
{
    for (size_t i = 0; i < store->pending_count; i++) free(store->pending[i].text);
    store->pending_count = 0;
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

/* Reserves the next buffer slot; the caller fills it and bumps pending_count. */
static PendingRow *store_reserve(Store *store)
{
    if (store->pending_count == store->pending_capacity) {
        size_t capacity = store->pending_capacity ? 2 * store->pending_capacity : 256;
        PendingRow *grown = realloc(store->pending, capacity * sizeof *grown);
        if (grown == NULL) {
            hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory");
            return NULL;
        }
        store->pending = grown;
        store->pending_capacity = capacity;
    }
    if (store->pending_count == 0) clock_gettime(CLOCK_MONOTONIC, &store->pending_since);
    PendingRow *row = &store->pending[store->pending_count];
    row->text = NULL;
    return row;
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
    int rc = SQLITE_OK;
    sqlite3_stmt *stmt = store->stmt[STMT_INSERT_RUN];
    /* Earlier runs' rows go first, so the file always reads in the order of events. */
    int status = store_flush(store);
    if (status != HS_OK) return status;
    format_utc_now(now);
    bind_text(stmt, 1, info->name, &rc);
    bind_text(stmt, 2, info->scenario, &rc);
    bind_text(stmt, 3, info->method, &rc);
    bind_int64(stmt, 4, (int64_t)info->seed, &rc);  /* the bit pattern, see store.h */
    bind_text(stmt, 5, info->mode, &rc);
    bind_text(stmt, 6, info->config, &rc);
    bind_text(stmt, 7, now, &rc);
    bind_text(stmt, 8, info->sweep, &rc);
    bind_text(stmt, 9, info->point, &rc);
    /* Outside any transaction: the insert commits at once, so even a crash right after
     * leaves a visible 'running' run. */
    status = store_exec_bound(store, STMT_INSERT_RUN, rc, "insert run");
    if (status != HS_OK) return status;
    *run_id = sqlite3_last_insert_rowid(store->db);
    store->timed_run = *run_id;
    clock_gettime(CLOCK_MONOTONIC, &store->timed_start);
    return HS_OK;
}

/* Agents arrive all at once at the start of a run: one transaction for all of them,
 * with anything still buffered written first. */
static int sink_agents(void *ctx, int64_t run_id, const SinkAgent *agents, int count)
{
    Store *store = ctx;
    sqlite3_stmt *stmt = store->stmt[STMT_INSERT_AGENT];
    int status = store_begin(store);
    if (status != HS_OK) goto fail;
    status = store_write_pending(store);
    if (status != HS_OK) goto fail;
    for (int i = 0; i < count; i++) {
        const SinkAgent *a = &agents[i];
        int rc = SQLITE_OK;
        bind_int64(stmt, 1, run_id, &rc);
        bind_int64(stmt, 2, a->agent, &rc);
        bind_text(stmt, 3, a->group, &rc);
        bind_double(stmt, 4, a->compute, &rc);
        bind_double(stmt, 5, a->uplink, &rc);  /* bandwidth and uplink */
        bind_double(stmt, 6, a->latency, &rc);
        bind_int64(stmt, 7, a->samples, &rc);
        bind_double(stmt, 8, a->downlink, &rc);
        bind_int64(stmt, 9, a->byzantine, &rc);
        status = store_exec_bound(store, STMT_INSERT_AGENT, rc, "insert agent");
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
    PendingRow *row = store_reserve(store);
    if (row == NULL) return HS_E_NOMEM;
    row->kind = ROW_ROUND;
    row->run_id = run_id;
    row->as.round = *round;
    store->pending_count++;
    return store_maybe_flush(store);
}

static int sink_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows,
                             int count)
{
    Store *store = ctx;
    for (int i = 0; i < count; i++) {
        PendingRow *row = store_reserve(store);
        if (row == NULL) return HS_E_NOMEM;
        row->kind = ROW_AGENT_ROUND;
        row->run_id = run_id;
        row->as.agent_round = rows[i];
        store->pending_count++;
    }
    return store_maybe_flush(store);
}

static int sink_pairing(void *ctx, int64_t run_id, const SinkPairing *pairing)
{
    Store *store = ctx;
    char *solver = NULL;
    if (pairing->solver != NULL) {
        solver = strdup(pairing->solver);
        if (solver == NULL)
            return hs_diag_set(&store->diag, HS_E_NOMEM, store->path, 0, "out of memory");
    }
    PendingRow *row = store_reserve(store);
    if (row == NULL) {
        free(solver);
        return HS_E_NOMEM;
    }
    row->kind = ROW_PAIRING;
    row->run_id = run_id;
    row->as.pairing = *pairing;
    row->as.pairing.solver = NULL;  /* the borrowed pointer must not outlive the call */
    row->text = solver;
    store->pending_count++;
    return store_maybe_flush(store);
}

static int sink_metric(void *ctx, int64_t run_id, const SinkMetric *metric)
{
    Store *store = ctx;
    PendingRow *row = store_reserve(store);
    if (row == NULL) return HS_E_NOMEM;
    row->kind = ROW_METRIC;
    row->run_id = run_id;
    row->as.metric = *metric;
    store->pending_count++;
    return store_maybe_flush(store);
}

/* The last rows and the final status commit together: a run reads 'done' only if all of
 * its rows are in the file. */
static int sink_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    Store *store = ctx;
    sqlite3_stmt *stmt = store->stmt[STMT_END_RUN];
    char now[32];
    int rc = SQLITE_OK;
    int status;
    if (end->status == SINK_STATUS_RUNNING)
        return hs_diag_set(&store->diag, HS_E_INTERNAL, store->path, 0,
                           "run %lld ended with status 'running'", (long long)run_id);
    double wall_s = end->wall_s;
    if (isnan(wall_s) && run_id == store->timed_run) {
        struct timespec now_mono;
        clock_gettime(CLOCK_MONOTONIC, &now_mono);
        wall_s = seconds_between(&store->timed_start, &now_mono);
    }
    format_utc_now(now);
    status = store_begin(store);
    if (status != HS_OK) goto fail;
    status = store_write_pending(store);
    if (status != HS_OK) goto fail;
    bind_int64(stmt, 1, run_id, &rc);
    bind_text(stmt, 2, sink_status_name(end->status), &rc);
    bind_text(stmt, 3, now, &rc);
    bind_double(stmt, 4, wall_s, &rc);
    bind_double(stmt, 5, end->sim_time_s, &rc);
    bind_double(stmt, 6, end->final_accuracy, &rc);
    bind_int64(stmt, 7, end->rounds_done, &rc);
    bind_text(stmt, 8, end->message, &rc);
    status = store_exec_bound(store, STMT_END_RUN, rc, "finish run");
    if (status != HS_OK) goto fail;
    if (sqlite3_changes(store->db) != 1) {
        status = hs_diag_set(&store->diag, HS_E_INPUT, store->path, 0, "no run with id %lld",
                             (long long)run_id);
        goto fail;
    }
    status = store_commit(store);
    if (status != HS_OK) goto fail;
    store_drop_pending(store);
    return HS_OK;
fail:
    store_rollback(store);
    return status;
}

static const SinkOps store_sink_ops = {
    .run_begin = sink_run_begin,
    .agents = sink_agents,
    .round = sink_round,
    .agent_rounds = sink_agent_rounds,
    .pairing = sink_pairing,
    .metric = sink_metric,
    .run_end = sink_run_end,
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
    status = store_exec_bound(store, STMT_MARK_INTERRUPTED, rc, "mark run interrupted");
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

int store_delete_run(Store *store, int64_t run_id)
{
    if (store == NULL) return HS_E_INTERNAL;
    static const int deletes[] = {
        STMT_DELETE_AGENTS, STMT_DELETE_ROUNDS, STMT_DELETE_AGENT_ROUNDS,
        STMT_DELETE_PAIRINGS, STMT_DELETE_METRICS, STMT_DELETE_RUN,
    };
    int status = store_begin(store);
    if (status != HS_OK) goto fail;
    /* Buffered rows of this run are written and deleted with the rest; simpler than
     * filtering the buffer, and the same transaction. */
    status = store_write_pending(store);
    if (status != HS_OK) goto fail;
    for (size_t i = 0; i < sizeof deletes / sizeof deletes[0]; i++) {
        int rc = sqlite3_bind_int64(store->stmt[deletes[i]], 1, run_id);
        status = store_exec_bound(store, deletes[i], rc, "delete run");
        if (status != HS_OK) goto fail;
    }
    status = store_commit(store);
    if (status != HS_OK) goto fail;
    store_drop_pending(store);
    if (store->timed_run == run_id) store->timed_run = 0;
    return HS_OK;
fail:
    store_rollback(store);
    return status;
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
    if (version != STORE_SCHEMA_VERSION)
        return hs_diag_set(&store->diag, HS_E_INPUT, store->path, 0,
                           "database has schema version %lld (PRAGMA user_version), "
                           "but this hetsim reads and writes version %d",
                           (long long)version, STORE_SCHEMA_VERSION);
    status = query_int(store,
                       "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
                       " ('runs','agents','rounds','agent_rounds','pairings','metrics')",
                       &tables);
    if (status != HS_OK) return status;
    if (tables != TABLE_COUNT)
        return hs_diag_set(&store->diag, HS_E_INPUT, store->path, 0,
                           "not a hetsim database (schema version %d but %lld of its %d "
                           "tables)", STORE_SCHEMA_VERSION, (long long)tables, TABLE_COUNT);
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

/* Creates the schema unless another process did it first: the check is repeated under
 * the write lock, so two sweep jobs starting on a new file cannot both create it. */
static int create_schema(Store *store)
{
    char pragmas[96];
    int is_empty = 0;
    int status = exec_sql(store, "BEGIN IMMEDIATE", "create schema");
    if (status != HS_OK) goto fail;
    status = check_schema(store, &is_empty);
    if (status != HS_OK) goto fail;
    if (!is_empty) {  /* another process created it (and check_schema accepted it) */
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
        return HS_OK;
    }
    status = exec_sql(store, schema_sql, "create schema");
    if (status != HS_OK) goto fail;
    snprintf(pragmas, sizeof pragmas, "PRAGMA user_version = %d; PRAGMA application_id = %d;",
             STORE_SCHEMA_VERSION, STORE_APPLICATION_ID);
    status = exec_sql(store, pragmas, "create schema");
    if (status != HS_OK) goto fail;
    return exec_sql(store, "COMMIT", "create schema");
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
    return exec_sql(store, "PRAGMA foreign_keys = ON", "enable foreign keys");
}

/* A database written before metrics had its domain columns (heldout_accuracy,
 * seen_accuracy) or its privacy column (epsilon) gets them, NULL in its older rows (the
 * schema version stays 1: readers name their columns, and the new ones are optional).
 * Checked again under the write lock, so two processes cannot both add them. */
static int add_metrics_column(Store *store, const char *column, const char *alter, const char *what)
{
    char has_sql[160];
    snprintf(has_sql, sizeof has_sql, "SELECT count(*) FROM pragma_table_info('metrics') WHERE name = '%s'", column);
    int64_t has = 0;
    int status = query_int(store, has_sql, &has);
    if (status != HS_OK || has) return status;
    status = exec_sql(store, "BEGIN IMMEDIATE", what);
    if (status == HS_OK) status = query_int(store, has_sql, &has);
    if (status == HS_OK && !has) status = exec_sql(store, alter, what);
    if (status == HS_OK) return exec_sql(store, "COMMIT", what);
    if (!sqlite3_get_autocommit(store->db)) sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
    return status;
}

static int add_domain_columns(Store *store)
{
    int status = add_metrics_column(store, "heldout_accuracy",
                                    "ALTER TABLE metrics ADD COLUMN heldout_accuracy REAL;"
                                    "ALTER TABLE metrics ADD COLUMN seen_accuracy REAL;",
                                    "add the metrics' domain columns");
    if (status != HS_OK) return status;
    return add_metrics_column(store, "epsilon", "ALTER TABLE metrics ADD COLUMN epsilon REAL;",
                              "add the metrics' privacy column");
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

    status = check_file_header(store);
    if (status != HS_OK) goto fail;
    rc = sqlite3_open_v2(path, &store->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
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
    if (is_empty) {
        status = create_schema(store);
        if (status != HS_OK) goto fail;
    }
    status = add_domain_columns(store);
    if (status != HS_OK) goto fail;
    for (int i = 0; i < STMT_COUNT; i++) {
        rc = sqlite3_prepare_v2(store->db, statement_sql[i], -1, &store->stmt[i], NULL);
        if (rc != SQLITE_OK) {
            status = store_fail(store, rc, "prepare statement (schema mismatch?)");
            goto fail;
        }
    }
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
    for (int i = 0; i < STMT_COUNT; i++) sqlite3_finalize(store->stmt[i]);
    sqlite3_close(store->db);
    free(store->pending);
    free(store->path);
    free(store);
}
