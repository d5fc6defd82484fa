/* check_store.c — the SQLite store: what the sink is given comes back from the file
 * column by column (read with plain sqlite3 queries, not through the store), runs append,
 * foreign and future files are refused untouched, and the status of a run tells the
 * truth about its rows (running / done / failed / interrupted). */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/store.h"
#include "tests/test_files.h"
#include "tests/test_user.h"

/* ---- a scratch folder per test case, removed by the parent process ---- */

static void scratch_setup(void)
{
    test_folder_make("check_store");
}

static void scratch_teardown(void)
{
    test_folder_remove();
}

/* ---- plain sqlite3 helpers, independent of the store ---- */

static sqlite3 *raw_open(const char *path)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                     NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 2000);
    return db;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
    char *error = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &error);
    ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, error ? error : "?");
}

static int64_t raw_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *stmt = NULL;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(db));
    ck_assert_msg(sqlite3_step(stmt) == SQLITE_ROW, "%s: no row", sql);
    int64_t value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
}

static char *raw_text(sqlite3 *db, const char *sql)  /* malloc'd, NULL for NULL */
{
    sqlite3_stmt *stmt = NULL;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(db));
    ck_assert_msg(sqlite3_step(stmt) == SQLITE_ROW, "%s: no row", sql);
    const unsigned char *text = sqlite3_column_text(stmt, 0);
    char *copy = text ? strdup((const char *)text) : NULL;
    sqlite3_finalize(stmt);
    return copy;
}

/* Query an integer from a file in one call (opens and closes a connection). */
static int64_t file_int(const char *path, const char *sql)
{
    sqlite3 *db = raw_open(path);
    int64_t value = raw_int(db, sql);
    sqlite3_close(db);
    return value;
}

/* Column checks for a result row: NULL-aware, doubles compared exactly (REAL keeps all
 * 64 bits, so anything else is a bug). */
static void expect_double(sqlite3_stmt *stmt, int column, double expected, const char *what)
{
    if (isnan(expected)) {
        ck_assert_msg(sqlite3_column_type(stmt, column) == SQLITE_NULL, "%s: want NULL", what);
        return;
    }
    ck_assert_msg(sqlite3_column_type(stmt, column) == SQLITE_FLOAT ||
                  sqlite3_column_type(stmt, column) == SQLITE_INTEGER,
                  "%s: want a number, type %d", what, sqlite3_column_type(stmt, column));
    double got = sqlite3_column_double(stmt, column);
    ck_assert_msg(got == expected, "%s: got %.17g, want %.17g", what, got, expected);
}

static void expect_int(sqlite3_stmt *stmt, int column, int64_t expected, const char *what)
{
    ck_assert_msg(sqlite3_column_type(stmt, column) == SQLITE_INTEGER, "%s: want INTEGER, type %d",
                  what, sqlite3_column_type(stmt, column));
    ck_assert_msg(sqlite3_column_int64(stmt, column) == expected, "%s: got %lld, want %lld",
                  what, (long long)sqlite3_column_int64(stmt, column), (long long)expected);
}

static void expect_text(sqlite3_stmt *stmt, int column, const char *expected, const char *what)
{
    if (expected == NULL) {
        ck_assert_msg(sqlite3_column_type(stmt, column) == SQLITE_NULL, "%s: want NULL", what);
        return;
    }
    ck_assert_msg(sqlite3_column_type(stmt, column) == SQLITE_TEXT, "%s: want TEXT", what);
    ck_assert_msg(strcmp((const char *)sqlite3_column_text(stmt, column), expected) == 0,
                  "%s: got '%s', want '%s'", what, sqlite3_column_text(stmt, column), expected);
}

static void expect_null(sqlite3_stmt *stmt, int column, const char *what)
{
    ck_assert_msg(sqlite3_column_type(stmt, column) == SQLITE_NULL, "%s: want NULL", what);
}

static sqlite3_stmt *raw_query(sqlite3 *db, const char *sql, int64_t run_id)
{
    sqlite3_stmt *stmt = NULL;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(db));
    sqlite3_bind_int64(stmt, 1, run_id);
    return stmt;
}

static int is_iso_utc(const char *text)
{
    /* 2024-05-01T12:34:56.789Z */
    if (text == NULL || strlen(text) != 24) return 0;
    for (int i = 0; i < 24; i++) {
        char c = text[i];
        int ok;
        switch (i) {
        case 4: case 7: ok = c == '-'; break;
        case 10: ok = c == 'T'; break;
        case 13: case 16: ok = c == ':'; break;
        case 19: ok = c == '.'; break;
        case 23: ok = c == 'Z'; break;
        default: ok = c >= '0' && c <= '9'; break;
        }
        if (!ok) return 0;
    }
    return 1;
}

/* ---- synthetic runs ---- */

typedef struct Synthetic {
    SinkRunInfo info;
    SinkAgent agents[3];
    SinkRound rounds[2];
    SinkAgentRound agent_rounds[6];
    SinkPairing pairings[2];
    SinkMetric metrics[3];
    SinkRunEnd end;
} Synthetic;

/* Two different runs; variant 1 uses the limits (seed 2^64-1, sweep labels, a failure). */
static void synthetic_make(Synthetic *s, int variant)
{
    memset(s, 0, sizeof *s);
    double shift = variant * 1000.0;
    s->info = (SinkRunInfo){
        .name = variant ? "straggler sweep, \"hard\" — ünïcode" : "alpha",
        .scenario = variant ? "scenarios/sweep.ini" : "scenarios/a.ini",
        .method = variant ? "sync" : "comdml",
        .seed = variant ? UINT64_MAX : 42,
        .mode = variant ? "timing" : "train",
        .config = variant ? "[run]\nname = b\n[agents]\ncount = 3\n" : "[run]\nname = alpha\n",
        .sweep = variant ? "sweep-7" : NULL,
        .point = variant ? "run.method=sync,agents.compute=lognormal(2 GFLOPS, 1.6)" : NULL,
    };
    static const char *const groups[] = { "default", "default", "stragglers" };
    for (int i = 0; i < 3; i++)
        s->agents[i] = (SinkAgent){
            .agent = i, .grp = groups[i], .compute = 2e9 / (i + 1) + shift,
            .uplink = 12.5e6 * (i + 1), .downlink = 25e6 + i, .latency = 0.01 * (i + 1),
            .samples = 3750 + i, .byzantine = i == 2 && variant,
        };
    for (int r = 0; r < 2; r++) {
        double t0 = 10.25 * r + shift;
        s->rounds[r] = (SinkRound){
            .round = r + 1, .t_start = t0, .t_end = t0 + 10.25, .idle_s = 0.1 * (r + 1),
            .bytes = 1e6 * (r + 1) + 0.5, .extra = r == 0 ? NAN : 3.25,
        };
        for (int a = 0; a < 3; a++)
            s->agent_rounds[3 * r + a] = (SinkAgentRound){
                .round = r + 1, .agent = a, .compute_s = 1.0 / 3.0 + a + r,
                .comm_s = 0.5 * a, .idle_s = 0.1 * a, .offline_s = a == 1 ? 2.5 : 0.0,
                .role = a == 0 ? SINK_ROLE_OFFLOADER : a == 2 ? SINK_ROLE_HELPER : SINK_ROLE_ALONE,
            };
        s->pairings[r] = (SinkPairing){
            .round = r + 1, .slow = 0, .fast = 2, .split = 3 + r, .predicted_s = 9.5 + r,
            .actual_s = r == 1 ? NAN : 9.75, .solver = variant ? "greedy" : "exact",
            .solve_ms = 0.125,
        };
    }
    s->metrics[0] = (SinkMetric){ .t = 10.25 + shift, .round = 1, .agent = -1,
                                  .train_loss = NAN, .test_loss = 0.75,
                                  .test_accuracy = 0.625, .bytes_sent = 1e6 };
    s->metrics[1] = (SinkMetric){ .t = 10.25 + shift, .round = 1, .agent = 1,
                                  .train_loss = 0.5, .test_loss = NAN,
                                  .test_accuracy = NAN, .bytes_sent = 3e5 };
    s->metrics[2] = (SinkMetric){ .t = 20.5 + shift, .round = 2, .agent = -1,
                                  .train_loss = 0.25, .test_loss = 0.5,
                                  .test_accuracy = 0.8125, .bytes_sent = 2e6,
                                  .has_domains = 1, .heldout_accuracy = 0.375,
                                  .seen_accuracy = 0.875, .has_privacy = 1, .epsilon = 2.5 };
    s->metrics[1].epsilon = 7; /* has_privacy = 0: NULL whatever the field holds */
    s->end = variant ? (SinkRunEnd){ .status = SINK_STATUS_FAILED, .wall_s = 0.5,
                                     .sim_time_s = 20.5 + shift, .final_accuracy = NAN,
                                     .rounds_done = 2, .message = "solver failed: \"ip\"" }
                     : (SinkRunEnd){ .status = SINK_STATUS_DONE, .wall_s = 1.5,
                                     .sim_time_s = 20.5, .final_accuracy = 0.8125,
                                     .rounds_done = 2, .message = NULL };
}

/* Plays the synthetic run into the sink in engine order; end = 0 stops before run_end. */
static int64_t synthetic_play(Sink sink, const Synthetic *s, int end)
{
    int64_t id = 0;
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &s->info, &id), HS_OK);
    ck_assert_int_gt(id, 0);
    ck_assert_int_eq(sink.ops->agents(sink.ctx, id, s->agents, 3), HS_OK);
    for (int r = 0; r < 2; r++) {
        ck_assert_int_eq(sink.ops->pairing(sink.ctx, id, &s->pairings[r]), HS_OK);
        ck_assert_int_eq(sink.ops->agent_rounds(sink.ctx, id, &s->agent_rounds[3 * r], 3), HS_OK);
        ck_assert_int_eq(sink.ops->round(sink.ctx, id, &s->rounds[r]), HS_OK);
        for (int m = 0; m < 3; m++)
            if (s->metrics[m].round == r + 1)
                ck_assert_int_eq(sink.ops->metric(sink.ctx, id, &s->metrics[m]), HS_OK);
    }
    if (end) ck_assert_int_eq(sink.ops->run_end(sink.ctx, id, &s->end), HS_OK);
    return id;
}

/* Compares every column of every table for one run with what the sink was given. */
static void synthetic_verify(sqlite3 *db, int64_t id, const Synthetic *s, const char *status)
{
    sqlite3_stmt *q = raw_query(db,
        "SELECT name, scenario, method, seed, mode, config, status, started_at, finished_at,"
        " wall_s, sim_time_s, final_accuracy, rounds_done, sweep, point, message"
        " FROM runs WHERE id = ?1", id);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    expect_text(q, 0, s->info.name, "runs.name");
    expect_text(q, 1, s->info.scenario, "runs.scenario");
    expect_text(q, 2, s->info.method, "runs.method");
    expect_int(q, 3, (int64_t)s->info.seed, "runs.seed");
    ck_assert_uint_eq((uint64_t)sqlite3_column_int64(q, 3), s->info.seed);
    expect_text(q, 4, s->info.mode, "runs.mode");
    expect_text(q, 5, s->info.config, "runs.config");
    expect_text(q, 6, status, "runs.status");
    ck_assert_msg(is_iso_utc((const char *)sqlite3_column_text(q, 7)), "started_at '%s'",
                  sqlite3_column_text(q, 7));
    if (strcmp(status, "running") == 0) {
        for (int c = 8; c <= 12; c++) expect_null(q, c, "unfinished run column");
        expect_null(q, 15, "runs.message");
    } else {
        ck_assert(is_iso_utc((const char *)sqlite3_column_text(q, 8)));
        ck_assert(strcmp((const char *)sqlite3_column_text(q, 7),
                         (const char *)sqlite3_column_text(q, 8)) <= 0);
        expect_double(q, 9, s->end.wall_s, "runs.wall_s");
        expect_double(q, 10, s->end.sim_time_s, "runs.sim_time_s");
        expect_double(q, 11, s->end.final_accuracy, "runs.final_accuracy");
        expect_int(q, 12, s->end.rounds_done, "runs.rounds_done");
        expect_text(q, 15, s->end.message, "runs.message");
    }
    expect_text(q, 13, s->info.sweep, "runs.sweep");
    expect_text(q, 14, s->info.point, "runs.point");
    ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);

    q = raw_query(db, "SELECT agent, grp, compute, bandwidth, latency, samples, uplink,"
                      " downlink, byzantine FROM agents WHERE run_id = ?1 ORDER BY agent", id);
    for (int i = 0; i < 3; i++) {
        const SinkAgent *a = &s->agents[i];
        ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
        expect_int(q, 0, a->agent, "agents.agent");
        expect_text(q, 1, a->grp, "agents.grp");
        expect_double(q, 2, a->compute, "agents.compute");
        expect_double(q, 3, a->uplink, "agents.bandwidth");
        expect_double(q, 4, a->latency, "agents.latency");
        expect_int(q, 5, a->samples, "agents.samples");
        expect_double(q, 6, a->uplink, "agents.uplink");
        expect_double(q, 7, a->downlink, "agents.downlink");
        expect_int(q, 8, a->byzantine, "agents.byzantine");
    }
    ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);

    q = raw_query(db, "SELECT round, t_start, t_end, idle_s, bytes, extra FROM rounds"
                      " WHERE run_id = ?1 ORDER BY round", id);
    for (int r = 0; r < 2; r++) {
        const SinkRound *x = &s->rounds[r];
        ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
        expect_int(q, 0, x->round, "rounds.round");
        expect_double(q, 1, x->t_start, "rounds.t_start");
        expect_double(q, 2, x->t_end, "rounds.t_end");
        expect_double(q, 3, x->idle_s, "rounds.idle_s");
        expect_double(q, 4, x->bytes, "rounds.bytes");
        expect_double(q, 5, x->extra, "rounds.extra");
    }
    ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);

    q = raw_query(db, "SELECT round, agent, compute_s, comm_s, idle_s, role, offline_s"
                      " FROM agent_rounds WHERE run_id = ?1 ORDER BY round, agent", id);
    for (int i = 0; i < 6; i++) {
        const SinkAgentRound *x = &s->agent_rounds[i];
        ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
        expect_int(q, 0, x->round, "agent_rounds.round");
        expect_int(q, 1, x->agent, "agent_rounds.agent");
        expect_double(q, 2, x->compute_s, "agent_rounds.compute_s");
        expect_double(q, 3, x->comm_s, "agent_rounds.comm_s");
        expect_double(q, 4, x->idle_s, "agent_rounds.idle_s");
        expect_text(q, 5, sink_role_name(x->role), "agent_rounds.role");
        expect_double(q, 6, x->offline_s, "agent_rounds.offline_s");
    }
    ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);

    q = raw_query(db, "SELECT round, slow, fast, split, predicted_s, actual_s, solver,"
                      " solve_ms FROM pairings WHERE run_id = ?1 ORDER BY round", id);
    for (int r = 0; r < 2; r++) {
        const SinkPairing *p = &s->pairings[r];
        ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
        expect_int(q, 0, p->round, "pairings.round");
        expect_int(q, 1, p->slow, "pairings.slow");
        expect_int(q, 2, p->fast, "pairings.fast");
        expect_int(q, 3, p->split, "pairings.split");
        expect_double(q, 4, p->predicted_s, "pairings.predicted_s");
        expect_double(q, 5, p->actual_s, "pairings.actual_s");
        expect_text(q, 6, p->solver, "pairings.solver");
        expect_double(q, 7, p->solve_ms, "pairings.solve_ms");
    }
    ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);

    q = raw_query(db, "SELECT t, round, agent, train_loss, test_loss, test_accuracy, bytes_sent,"
                      " heldout_accuracy, seen_accuracy, epsilon FROM metrics WHERE run_id = ?1 ORDER BY rowid", id);
    for (int m = 0; m < 3; m++) {
        const SinkMetric *x = &s->metrics[m];
        ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
        expect_double(q, 0, x->t, "metrics.t");
        expect_int(q, 1, x->round, "metrics.round");
        if (x->agent < 0) expect_null(q, 2, "metrics.agent of the averaged model");
        else expect_int(q, 2, x->agent, "metrics.agent");
        expect_double(q, 3, x->train_loss, "metrics.train_loss");
        expect_double(q, 4, x->test_loss, "metrics.test_loss");
        expect_double(q, 5, x->test_accuracy, "metrics.test_accuracy");
        expect_double(q, 6, x->bytes_sent, "metrics.bytes_sent");
        /* NULL without domains (has_domains = 0), whatever the fields hold */
        expect_double(q, 7, x->has_domains ? x->heldout_accuracy : NAN, "metrics.heldout_accuracy");
        expect_double(q, 8, x->has_domains ? x->seen_accuracy : NAN, "metrics.seen_accuracy");
        expect_double(q, 9, x->has_privacy ? x->epsilon : NAN, "metrics.epsilon");
    }
    ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);
}

static Store *open_store(const char *path)
{
    Store *store = NULL;
    HsDiag diag;
    hs_diag_clear(&diag);
    int status = store_open(path, &store, &diag);
    ck_assert_msg(status == HS_OK, "store_open(%s): %s", path, diag.message);
    ck_assert_ptr_nonnull(store);
    return store;
}

/* Expects store_open to fail with status and a message holding each of the needles. */
static void expect_open_fails(const char *path, int status, const char *needle1,
                              const char *needle2)
{
    Store *store = (Store *)&store;  /* must come back NULL */
    HsDiag diag;
    hs_diag_clear(&diag);
    int got = store_open(path, &store, &diag);
    ck_assert_msg(got == status, "store_open(%s) = %d, want %d (%s)", path, got, status,
                  diag.message);
    ck_assert_ptr_null(store);
    ck_assert_int_eq(diag.status, status);
    ck_assert_msg(strstr(diag.message, path) != NULL, "message names the file: %s",
                  diag.message);
    if (needle1) ck_assert_msg(strstr(diag.message, needle1), "'%s' in: %s", needle1, diag.message);
    if (needle2) ck_assert_msg(strstr(diag.message, needle2), "'%s' in: %s", needle2, diag.message);
}

static char *read_file_bytes(const char *path, long *size)
{
    char *bytes = test_read_file(path, size);
    ck_assert_msg(bytes != NULL, "cannot read %s", path);
    return bytes;
}

static void write_file_bytes(const char *path, const char *bytes, size_t size)
{
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    ck_assert_uint_eq(fwrite(bytes, 1, size, file), size);
    fclose(file);
}

/* ---- normal path ---- */

START_TEST(test_round_trip_two_runs)
{
    const char *path = test_folder_path("round_trip.db");
    Synthetic a, b;
    synthetic_make(&a, 0);
    synthetic_make(&b, 1);
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    int64_t id_a = synthetic_play(sink, &a, 1);
    int64_t id_b = synthetic_play(sink, &b, 1);
    ck_assert_int_eq(id_a, 1);
    ck_assert_int_eq(id_b, 2);
    ck_assert_str_eq(store_error_message(store), "");

    /* Read while the store is still open: run_end committed everything. */
    sqlite3 *db = raw_open(path);
    synthetic_verify(db, id_a, &a, "done");
    synthetic_verify(db, id_b, &b, "failed");
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM runs"), 2);
    sqlite3_close(db);
    store_close(store);

    db = raw_open(path);
    synthetic_verify(db, id_a, &a, "done");
    synthetic_verify(db, id_b, &b, "failed");
    sqlite3_close(db);
}
END_TEST

START_TEST(test_schema_and_pragmas)
{
    const char *path = test_folder_path("schema.db");
    Store *store = open_store(path);
    store_close(store);
    sqlite3 *db = raw_open(path);
    ck_assert_int_eq(raw_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    ck_assert_int_eq(raw_int(db, "PRAGMA application_id"), STORE_APPLICATION_ID);
    char *mode = raw_text(db, "PRAGMA journal_mode");
    ck_assert_str_eq(mode, "wal");
    free(mode);
    /* Every contract column of DESIGN.md exists (a missing one makes prepare fail). */
    raw_exec(db, "SELECT id, name, scenario, method, seed, mode, config, status, started_at,"
                 " finished_at, wall_s, sim_time_s, final_accuracy, rounds_done, sweep, point,"
                 " message FROM runs;"
                 "SELECT run_id, agent, grp, compute, bandwidth, latency, samples, uplink,"
                 " downlink, byzantine FROM agents;"
                 "SELECT run_id, round, t_start, t_end, idle_s, bytes, extra FROM rounds;"
                 "SELECT run_id, round, agent, compute_s, comm_s, idle_s, role, offline_s"
                 " FROM agent_rounds;"
                 "SELECT run_id, round, slow, fast, split, predicted_s, actual_s, solver,"
                 " solve_ms FROM pairings;"
                 "SELECT run_id, t, round, agent, train_loss, test_loss, test_accuracy,"
                 " bytes_sent, heldout_accuracy, seen_accuracy, epsilon FROM metrics;");
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                                 " AND sql LIKE '%(run_id, round)%'"), 4);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                                 " AND sql LIKE '%agents(run_id, agent)%'"), 1);
    sqlite3_close(db);
}
END_TEST

/* A new file's schema is written in one pass (no views dropped, no schema_columns rows
 * deleted, no check read back): it must be what the upgrade path makes of a file whose
 * views and schema_columns rows are gone, byte for byte in sqlite_master and
 * schema_columns (row ids included), with the same version. */
static char *schema_dump(const char *path)
{
    sqlite3 *db = raw_open(path);
    char *dump = raw_text(db, "SELECT group_concat(line, char(10)) FROM (SELECT type || '|' || name || '|'"
                              " || tbl_name || '|' || coalesce(sql, '') AS line FROM sqlite_master"
                              " ORDER BY type, name)");
    char *columns = raw_text(db, "SELECT group_concat(line, char(10)) FROM (SELECT rowid || '|' || table_name"
                                 " || '|' || column_name || '|' || type || '|' || unit || '|' || doc || '|'"
                                 " || is_result AS line FROM schema_columns ORDER BY rowid)");
    int64_t version = raw_int(db, "PRAGMA user_version");
    sqlite3_close(db);
    ck_assert_ptr_nonnull(dump);
    ck_assert_ptr_nonnull(columns);
    size_t n = strlen(dump) + strlen(columns) + 64;
    char *all = malloc(n);
    snprintf(all, n, "%s\n--\n%s\n--\n%lld", dump, columns, (long long)version);
    free(dump);
    free(columns);
    return all;
}

START_TEST(test_new_schema_equals_upgraded)
{
    const char *path = test_folder_path("fresh.db");
    store_close(open_store(path));
    char *fresh = schema_dump(path);
    sqlite3 *db = raw_open(path);
    raw_exec(db, "DROP VIEW time_to_accuracy; DROP VIEW agent_summary; DROP VIEW run_summary;"
                 " DROP VIEW run_targets; DELETE FROM schema_columns;");
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'view'"), 0);
    sqlite3_close(db);
    store_close(open_store(path));  /* the upgrade path: views and rows again */
    char *upgraded = schema_dump(path);
    ck_assert_str_eq(fresh, upgraded);
    ck_assert_ptr_nonnull(strstr(fresh, "view|run_summary|"));
    ck_assert_ptr_nonnull(strstr(fresh, "|agent_rounds|compute_s|"));
    free(fresh);
    free(upgraded);
}
END_TEST

START_TEST(test_append_to_existing_database)
{
    const char *path = test_folder_path("append.db");
    Synthetic a, b;
    synthetic_make(&a, 0);
    synthetic_make(&b, 1);
    Store *store = open_store(path);
    int64_t id_a = synthetic_play(store_sink(store), &a, 1);
    store_close(store);

    store = open_store(path);
    int64_t id_b = synthetic_play(store_sink(store), &b, 1);
    store_close(store);
    ck_assert_int_eq(id_b, id_a + 1);

    sqlite3 *db = raw_open(path);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM runs"), 2);
    synthetic_verify(db, id_a, &a, "done");
    synthetic_verify(db, id_b, &b, "failed");
    sqlite3_close(db);
}
END_TEST

/* A file of an older schema, made by running downgrade on a fresh one (columns_before
 * left in metrics): opening it for writing adds the missing columns, where its old rows
 * read NULL, and reopening does not add them twice. */
static void check_old_file_gets_columns(const char *name, const char *downgrade, int columns_before, int had_domains)
{
    const char *path = test_folder_path(name);
    Synthetic a, b;
    synthetic_make(&a, 0);
    synthetic_make(&b, 1);
    Store *store = open_store(path);
    int64_t id_a = synthetic_play(store_sink(store), &a, 1);
    store_close(store);
    sqlite3 *db = raw_open(path);
    raw_exec(db, downgrade);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM pragma_table_info('metrics')"), columns_before);
    sqlite3_close(db);
    store = open_store(path);
    int64_t id_b = synthetic_play(store_sink(store), &b, 1);
    store_close(store);
    store = open_store(path);
    store_close(store);
    db = raw_open(path);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM pragma_table_info('metrics')"), 11);
    ck_assert_int_eq(raw_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    if (!had_domains) a.metrics[2].has_domains = 0; /* written before the columns existed: NULL */
    a.metrics[2].has_privacy = 0;
    synthetic_verify(db, id_a, &a, "done");
    synthetic_verify(db, id_b, &b, "failed");
    sqlite3_close(db);
}

/* Before heldout_accuracy, seen_accuracy and epsilon: metrics rebuilt as it was, rows kept. */
START_TEST(test_old_file_gets_the_domain_columns)
{
    check_old_file_gets_columns("before_domains.db",
                                "CREATE TABLE old_metrics AS SELECT run_id, t, round, agent, train_loss, test_loss,"
                                " test_accuracy, bytes_sent FROM metrics;"
                                "DROP TABLE metrics;"
                                "CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                                " t REAL, round INTEGER, agent INTEGER, train_loss REAL, test_loss REAL,"
                                " test_accuracy REAL, bytes_sent REAL);"
                                "INSERT INTO metrics SELECT * FROM old_metrics; DROP TABLE old_metrics;"
                                "CREATE INDEX metrics_run ON metrics(run_id, round);",
                                8, 0);
}
END_TEST

/* After the domain columns but before epsilon: only epsilon is added. */
START_TEST(test_domain_era_file_gets_epsilon)
{
    check_old_file_gets_columns("before_epsilon.db", "ALTER TABLE metrics DROP COLUMN epsilon;", 10, 1);
}
END_TEST

START_TEST(test_two_stores_on_one_file)
{
    /* Two writers at once (as two sweep jobs): short transactions let both through. */
    const char *path = test_folder_path("two_writers.db");
    Synthetic a, b;
    synthetic_make(&a, 0);
    synthetic_make(&b, 1);
    Store *first = open_store(path);
    Store *second = open_store(path);
    Sink s1 = store_sink(first), s2 = store_sink(second);
    int64_t id_a = 0, id_b = 0;
    ck_assert_int_eq(s1.ops->run_begin(s1.ctx, &a.info, &id_a), HS_OK);
    ck_assert_int_eq(s2.ops->run_begin(s2.ctx, &b.info, &id_b), HS_OK);
    ck_assert_int_ne(id_a, id_b);
    ck_assert_int_eq(s1.ops->agents(s1.ctx, id_a, a.agents, 3), HS_OK);
    ck_assert_int_eq(s2.ops->agents(s2.ctx, id_b, b.agents, 3), HS_OK);
    for (int r = 0; r < 2; r++) {
        ck_assert_int_eq(s1.ops->pairing(s1.ctx, id_a, &a.pairings[r]), HS_OK);
        ck_assert_int_eq(s2.ops->pairing(s2.ctx, id_b, &b.pairings[r]), HS_OK);
        ck_assert_int_eq(s1.ops->agent_rounds(s1.ctx, id_a, &a.agent_rounds[3 * r], 3), HS_OK);
        ck_assert_int_eq(s2.ops->agent_rounds(s2.ctx, id_b, &b.agent_rounds[3 * r], 3), HS_OK);
        ck_assert_int_eq(s1.ops->round(s1.ctx, id_a, &a.rounds[r]), HS_OK);
        ck_assert_int_eq(s2.ops->round(s2.ctx, id_b, &b.rounds[r]), HS_OK);
        for (int m = 0; m < 3; m++) {
            if (a.metrics[m].round != r + 1) continue;
            ck_assert_int_eq(s1.ops->metric(s1.ctx, id_a, &a.metrics[m]), HS_OK);
            ck_assert_int_eq(s2.ops->metric(s2.ctx, id_b, &b.metrics[m]), HS_OK);
        }
    }
    ck_assert_int_eq(s2.ops->run_end(s2.ctx, id_b, &b.end), HS_OK);
    ck_assert_int_eq(s1.ops->run_end(s1.ctx, id_a, &a.end), HS_OK);
    store_close(first);
    store_close(second);
    sqlite3 *db = raw_open(path);
    synthetic_verify(db, id_a, &a, "done");
    synthetic_verify(db, id_b, &b, "failed");
    sqlite3_close(db);
}
END_TEST

/* Several processes start on a new file at once and append to it, each with many rows:
 * the schema is created once, and every run ends 'done' with all of its rows (no
 * SQLITE_BUSY failures, no lost batches). */
START_TEST(test_parallel_processes_share_a_file)
{
    const char *path = test_folder_path("parallel.db");
    enum { PROCESSES = 3, RUNS = 2, ROUNDS = 20, AGENTS = 300 };
    /* No schema yet: the writers race to create it, and exactly one may. */
    pid_t children[PROCESSES];
    for (int p = 0; p < PROCESSES; p++) {
        children[p] = fork();
        ck_assert_int_ge(children[p], 0);
        if (children[p] != 0) continue;
        HsDiag diag;
        hs_diag_clear(&diag);
        Store *mine = NULL;
        if (store_open(path, &mine, &diag) != HS_OK) {
            fprintf(stderr, "writer %d: %s\n", p, diag.message);
            _exit(10);
        }
        Sink sink = store_sink(mine);
        static SinkAgentRound rows[AGENTS];
        for (int run = 0; run < RUNS; run++) {
            SinkRunInfo info = { .name = "parallel", .method = "sync", .seed = (uint64_t)p,
                                 .mode = "timing" };
            int64_t id;
            if (sink.ops->run_begin(sink.ctx, &info, &id) != HS_OK) _exit(11);
            for (int r = 0; r < ROUNDS; r++) {
                for (int a = 0; a < AGENTS; a++)
                    rows[a] = (SinkAgentRound){ .round = r, .agent = a, .compute_s = a,
                                                .idle_s = 0.5 };
                SinkRound round = { .round = r, .t_start = r, .t_end = r + 1, .extra = NAN };
                if (sink.ops->agent_rounds(sink.ctx, id, rows, AGENTS) != HS_OK) _exit(12);
                if (sink.ops->round(sink.ctx, id, &round) != HS_OK) _exit(13);
            }
            SinkRunEnd end = { .status = SINK_STATUS_DONE, .wall_s = 0, .sim_time_s = ROUNDS,
                               .final_accuracy = NAN, .rounds_done = ROUNDS };
            if (sink.ops->run_end(sink.ctx, id, &end) != HS_OK) _exit(14);
        }
        store_close(mine);
        _exit(0);
    }
    for (int p = 0; p < PROCESSES; p++) {
        int wstatus = 0;
        ck_assert_int_eq(waitpid(children[p], &wstatus, 0), children[p]);
        ck_assert_msg(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0,
                      "writer %d exited with %d", p, WEXITSTATUS(wstatus));
    }
    sqlite3 *db = raw_open(path);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM runs WHERE status = 'done'"),
                     PROCESSES * RUNS);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM agent_rounds"),
                     PROCESSES * RUNS * ROUNDS * AGENTS);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM (SELECT run_id FROM agent_rounds"
                                 " GROUP BY run_id HAVING count(*) = 6000)"),
                     PROCESSES * RUNS);
    sqlite3_close(db);
}
END_TEST

/* ---- run status tells the truth ---- */

START_TEST(test_unfinished_run_stays_running)
{
    const char *path = test_folder_path("unfinished.db");
    Synthetic a;
    synthetic_make(&a, 0);
    Store *store = open_store(path);
    int64_t id = synthetic_play(store_sink(store), &a, 0);
    /* Visible as running from another connection right after run_begin's commit. */
    char *status = NULL;
    sqlite3 *db = raw_open(path);
    status = raw_text(db, "SELECT status FROM runs");
    ck_assert_str_eq(status, "running");
    free(status);
    sqlite3_close(db);
    store_close(store);  /* an orderly close keeps the rows but does not finish the run */

    db = raw_open(path);
    synthetic_verify(db, id, &a, "running");
    sqlite3_close(db);
}
END_TEST

START_TEST(test_crash_leaves_running_never_done)
{
    const char *path = test_folder_path("crash.db");
    Synthetic a;
    synthetic_make(&a, 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        HsDiag diag;
        hs_diag_clear(&diag);
        Store *store = NULL;
        if (store_open(path, &store, &diag) != HS_OK) _exit(10);
        Sink sink = store_sink(store);
        int64_t id;
        if (sink.ops->run_begin(sink.ctx, &a.info, &id) != HS_OK) _exit(11);
        if (sink.ops->agents(sink.ctx, id, a.agents, 3) != HS_OK) _exit(12);
        if (sink.ops->round(sink.ctx, id, &a.rounds[0]) != HS_OK) _exit(13);
        _exit(0);  /* dies without run_end or close, like a killed process */
    }
    int wstatus = 0;
    ck_assert_int_eq(waitpid(child, &wstatus, 0), child);
    ck_assert(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    sqlite3 *db = raw_open(path);
    char *status = raw_text(db, "SELECT status FROM runs");
    ck_assert_str_eq(status, "running");
    free(status);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM runs WHERE finished_at IS NULL"), 1);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM agents"), 3);  /* committed */
    ck_assert_int_le(raw_int(db, "SELECT count(*) FROM rounds"), 1);  /* maybe buffered */
    sqlite3_close(db);
}
END_TEST

START_TEST(test_failed_and_diverged_keep_rows)
{
    const char *path = test_folder_path("failed.db");
    Synthetic a;
    synthetic_make(&a, 0);
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    static const SinkStatus statuses[] = { SINK_STATUS_FAILED, SINK_STATUS_DIVERGED,
                                           SINK_STATUS_INTERRUPTED };
    for (int i = 0; i < 3; i++) {
        a.end.status = statuses[i];
        a.end.message = "loss is NaN at round 2";
        int64_t id = synthetic_play(sink, &a, 1);
        sqlite3 *db = raw_open(path);
        synthetic_verify(db, id, &a, sink_status_name(statuses[i]));
        sqlite3_close(db);
    }
    store_close(store);
    ck_assert_int_eq(file_int(path, "SELECT count(*) FROM runs WHERE status = 'done'"), 0);
}
END_TEST

START_TEST(test_run_end_with_running_is_refused)
{
    const char *path = test_folder_path("end_running.db");
    Synthetic a;
    synthetic_make(&a, 0);
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    int64_t id = synthetic_play(sink, &a, 0);
    SinkRunEnd end = a.end;
    end.status = SINK_STATUS_RUNNING;
    ck_assert_int_eq(sink.ops->run_end(sink.ctx, id, &end), HS_E_INTERNAL);
    ck_assert_ptr_nonnull(strstr(store_error_message(store), "running"));
    /* Ending a run that does not exist is an error too, and commits nothing. */
    ck_assert_int_eq(sink.ops->run_end(sink.ctx, id + 100, &a.end), HS_E_INPUT);
    store_close(store);
    sqlite3 *db = raw_open(path);
    synthetic_verify(db, id, &a, "running");
    sqlite3_close(db);
}
END_TEST

START_TEST(test_mark_interrupted)
{
    const char *path = test_folder_path("interrupted.db");
    Synthetic a, b;
    synthetic_make(&a, 0);
    synthetic_make(&b, 1);
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    int64_t done_id = synthetic_play(sink, &b, 1);
    int64_t id = synthetic_play(sink, &a, 0);
    ck_assert_int_eq(store_mark_interrupted(store, id), HS_OK);

    sqlite3 *db = raw_open(path);
    sqlite3_stmt *q = raw_query(db, "SELECT status, finished_at, wall_s, rounds_done,"
                                    " sim_time_s, message FROM runs WHERE id = ?1", id);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    expect_text(q, 0, "interrupted", "status");
    ck_assert(is_iso_utc((const char *)sqlite3_column_text(q, 1)));
    ck_assert(sqlite3_column_type(q, 2) == SQLITE_FLOAT && sqlite3_column_double(q, 2) >= 0);
    expect_int(q, 3, 2, "rounds_done from the stored rounds");
    expect_double(q, 4, a.rounds[1].t_end, "sim_time_s from the last round");
    expect_text(q, 5, "interrupted", "message");
    sqlite3_finalize(q);
    /* Buffered rows were written before the mark. */
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM metrics WHERE run_id = 2"), 3);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM agent_rounds WHERE run_id = 2"), 6);
    sqlite3_close(db);

    /* Marking again, or marking a run that ended, changes nothing. */
    ck_assert_int_eq(store_mark_interrupted(store, id), HS_OK);
    ck_assert_int_eq(store_mark_interrupted(store, done_id), HS_OK);
    ck_assert_int_eq(store_mark_interrupted(store, 999), HS_E_INPUT);
    ck_assert_ptr_nonnull(strstr(store_error_message(store), "999"));
    store_close(store);
    db = raw_open(path);
    char *status = raw_text(db, "SELECT status FROM runs WHERE id = 1");
    ck_assert_str_eq(status, "failed");
    free(status);
    status = raw_text(db, "SELECT status FROM runs WHERE id = 2");
    ck_assert_str_eq(status, "interrupted");
    free(status);
    sqlite3_close(db);
}
END_TEST

START_TEST(test_delete_run_removes_every_row)
{
    const char *path = test_folder_path("delete.db");
    Synthetic a, b;
    synthetic_make(&a, 0);
    synthetic_make(&b, 1);
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    int64_t id_a = synthetic_play(sink, &a, 0);  /* incomplete, rows still buffered */
    ck_assert_int_eq(store_mark_interrupted(store, id_a), HS_OK);
    int64_t id_b = synthetic_play(sink, &b, 1);
    int64_t id_c = synthetic_play(sink, &a, 0);
    ck_assert_int_eq(store_delete_run(store, id_a), HS_OK);
    ck_assert_int_eq(store_delete_run(store, id_c), HS_OK);  /* with buffered rows */
    ck_assert_int_eq(store_delete_run(store, 12345), HS_OK);
    int64_t id_d = synthetic_play(sink, &a, 1);
    ck_assert_int_gt(id_d, id_c);  /* AUTOINCREMENT: a deleted id is never reused */
    store_close(store);

    sqlite3 *db = raw_open(path);
    static const char *const tables[] = { "agents", "rounds", "agent_rounds", "pairings",
                                          "metrics" };
    for (int t = 0; t < 5; t++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE run_id IN (%lld, %lld)",
                 tables[t], (long long)id_a, (long long)id_c);
        ck_assert_msg(raw_int(db, sql) == 0, "%s keeps rows of a deleted run", tables[t]);
    }
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM runs"), 2);
    synthetic_verify(db, id_b, &b, "failed");
    synthetic_verify(db, id_d, &a, "done");
    sqlite3_close(db);
}
END_TEST

START_TEST(test_list_sweep_runs)
{
    const char *path = test_folder_path("sweep.db");
    Synthetic a, b;
    synthetic_make(&a, 0);
    synthetic_make(&b, 1);
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    synthetic_play(sink, &a, 1);                 /* outside the sweep */
    int64_t first = synthetic_play(sink, &b, 1); /* failed */
    b.end.status = SINK_STATUS_DONE;
    int64_t second = synthetic_play(sink, &b, 1);
    b.info.point = NULL;
    int64_t third = synthetic_play(sink, &b, 0); /* running */
    StoreSweepRun *runs = NULL;
    int count = -1;
    ck_assert_int_eq(store_list_sweep_runs(store, "sweep-7", &runs, &count), HS_OK);
    ck_assert_int_eq(count, 3);
    ck_assert_int_eq(runs[0].run_id, first);
    ck_assert_str_eq(runs[0].status, "failed");
    ck_assert_str_eq(runs[0].point, "run.method=sync,agents.compute=lognormal(2 GFLOPS, 1.6)");
    ck_assert_int_eq(runs[1].run_id, second);
    ck_assert_str_eq(runs[1].status, "done");
    ck_assert_int_eq(runs[2].run_id, third);
    ck_assert_str_eq(runs[2].status, "running");
    ck_assert_ptr_null(runs[2].point);
    store_sweep_runs_free(runs, count);
    ck_assert_int_eq(store_list_sweep_runs(store, "no such sweep", &runs, &count), HS_OK);
    ck_assert_int_eq(count, 0);
    store_sweep_runs_free(runs, count);
    store_sweep_runs_free(NULL, 0);
    store_close(store);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_batches_become_visible)
{
    const char *path = test_folder_path("batches.db");
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    SinkRunInfo info = { .name = "batches", .method = "sync", .seed = 1, .mode = "timing" };
    int64_t id;
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &id), HS_OK);
    SinkMetric metric = { .round = 1, .agent = 0, .train_loss = 1, .test_loss = 1,
                          .test_accuracy = 0.5, .bytes_sent = 0 };
    for (int i = 0; i < STORE_BATCH_ROWS + 10; i++) {
        metric.t = i;
        ck_assert_int_eq(sink.ops->metric(sink.ctx, id, &metric), HS_OK);
    }
    /* A full batch is committed without any flush call. (How many of the last 10 are
     * also in depends on the one-second age rule, i.e. on the machine's speed, so it is
     * not asserted.) */
    ck_assert_int_ge(file_int(path, "SELECT count(*) FROM metrics"), STORE_BATCH_ROWS);
    ck_assert_int_eq(store_flush(store), HS_OK);
    ck_assert_int_eq(file_int(path, "SELECT count(*) FROM metrics"), STORE_BATCH_ROWS + 10);
    ck_assert_int_eq(store_flush(store), HS_OK);  /* nothing buffered: a no-op */
    store_close(store);
}
END_TEST

START_TEST(test_limit_values)
{
    const char *path = test_folder_path("limits.db");
    size_t big = 2u << 20;  /* a 2 MiB config */
    char *config = malloc(big + 1);
    ck_assert_ptr_nonnull(config);
    for (size_t i = 0; i < big; i++) config[i] = (char)('a' + i % 26);
    config[big] = '\0';
    static const uint64_t seeds[] = { 0, 1, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1,
                                      UINT64_MAX };
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    for (int i = 0; i < 5; i++) {
        SinkRunInfo info = { .name = "", .scenario = NULL, .method = "sync",
                             .seed = seeds[i], .mode = "timing", .config = i ? "" : config };
        int64_t id;
        ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &id), HS_OK);
        ck_assert_int_eq(sink.ops->agents(sink.ctx, id, NULL, 0), HS_OK);
        SinkRound round = { .round = 0, .t_start = 0, .t_end = INFINITY, .idle_s = -0.0,
                            .bytes = 1e300, .extra = -INFINITY };
        ck_assert_int_eq(sink.ops->round(sink.ctx, id, &round), HS_OK);
        SinkPairing pairing = { .round = 0, .slow = 0, .fast = 1, .solver = NULL,
                                .predicted_s = NAN, .actual_s = NAN, .solve_ms = NAN };
        ck_assert_int_eq(sink.ops->pairing(sink.ctx, id, &pairing), HS_OK);
        SinkAgentRound row = { .round = 0, .agent = 0, .role = (SinkRole)99,
                               .compute_s = 5e-324, .comm_s = NAN, .idle_s = 0,
                               .offline_s = 0 };
        ck_assert_int_eq(sink.ops->agent_rounds(sink.ctx, id, &row, 1), HS_OK);
        SinkRunEnd end = { .status = SINK_STATUS_DONE, .wall_s = NAN, .sim_time_s = 0,
                           .final_accuracy = 0, .rounds_done = 0, .message = "" };
        ck_assert_int_eq(sink.ops->run_end(sink.ctx, id, &end), HS_OK);
    }
    store_close(store);

    sqlite3 *db = raw_open(path);
    sqlite3_stmt *q = raw_query(db, "SELECT seed, length(config), name, wall_s FROM runs"
                                    " ORDER BY id", 0);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
        ck_assert_uint_eq((uint64_t)sqlite3_column_int64(q, 0), seeds[i]);
        ck_assert_int_eq(sqlite3_column_int64(q, 1), i ? 0 : (int64_t)big);
        expect_text(q, 2, "", "empty name stays empty, not NULL");
        /* wall_s NaN: the store measures it itself. */
        ck_assert(sqlite3_column_type(q, 3) == SQLITE_FLOAT && sqlite3_column_double(q, 3) >= 0);
    }
    sqlite3_finalize(q);
    char *text = raw_text(db, "SELECT config FROM runs WHERE id = 1");
    ck_assert(strcmp(text, config) == 0);
    free(text);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM rounds WHERE t_end > 1e308"
                                 " AND extra < -1e308 AND bytes = 1e300"), 5);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM pairings WHERE solver IS NULL AND"
                                 " predicted_s IS NULL AND solve_ms IS NULL"), 5);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM agent_rounds WHERE role = 'alone'"
                                 " AND comm_s IS NULL AND compute_s > 0"), 5);
    ck_assert_int_eq(raw_int(db, "SELECT count(*) FROM runs WHERE message = ''"), 5);
    sqlite3_close(db);
    free(config);
}
END_TEST

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

/* 100,000 agents and 500,000 agent rounds: prints the throughput (a measured figure,
 * not a pass/fail timing) and checks every row arrived. */
START_TEST(test_insert_throughput)
{
    enum { AGENTS = 100000, ROUNDS = 5 };
    const char *path = test_folder_path("throughput.db");
    SinkAgent *agents = calloc(AGENTS, sizeof *agents);
    SinkAgentRound *rows = calloc(AGENTS, sizeof *rows);
    ck_assert(agents && rows);
    for (int i = 0; i < AGENTS; i++)
        agents[i] = (SinkAgent){ .agent = i, .grp = i % 4 ? "default" : "stragglers",
                                 .compute = 1e9 + i, .uplink = 1e6, .downlink = 2e6,
                                 .latency = 0.01, .samples = 600 };
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    SinkRunInfo info = { .name = "throughput", .method = "sync", .seed = 7, .mode = "timing" };
    int64_t id;
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &id), HS_OK);
    ck_assert_int_eq(sink.ops->agents(sink.ctx, id, agents, AGENTS), HS_OK);
    double agents_s = seconds_since(&start);
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < AGENTS; i++)
            rows[i] = (SinkAgentRound){ .round = r, .agent = i, .compute_s = 1.5 + i,
                                        .comm_s = 0.25, .idle_s = 0.125, .offline_s = 0,
                                        .role = (SinkRole)(i % 3) };
        ck_assert_int_eq(sink.ops->agent_rounds(sink.ctx, id, rows, AGENTS), HS_OK);
        SinkRound round = { .round = r, .t_start = r, .t_end = r + 1, .extra = NAN };
        ck_assert_int_eq(sink.ops->round(sink.ctx, id, &round), HS_OK);
    }
    SinkRunEnd end = { .status = SINK_STATUS_DONE, .wall_s = 1, .sim_time_s = ROUNDS,
                       .final_accuracy = NAN, .rounds_done = ROUNDS };
    ck_assert_int_eq(sink.ops->run_end(sink.ctx, id, &end), HS_OK);
    store_close(store);
    double total_s = seconds_since(&start);
    fprintf(stderr, "store throughput: %d agents in %.3f s, %d agent_rounds in %.3f s"
                    " (%.0f rows/s overall)\n",
            AGENTS, agents_s, AGENTS * ROUNDS, total_s - agents_s,
            (AGENTS * (ROUNDS + 1.0)) / total_s);
    ck_assert_int_eq(file_int(path, "SELECT count(*) FROM agents"), AGENTS);
    ck_assert_int_eq(file_int(path, "SELECT count(*) FROM agent_rounds"), AGENTS * ROUNDS);
    free(agents);
    free(rows);
}
END_TEST

/* ---- errors ---- */

START_TEST(test_other_schema_version_refused)
{
    const char *path = test_folder_path("future.db");
    sqlite3 *db = raw_open(path);
    raw_exec(db, "CREATE TABLE runs(id INTEGER PRIMARY KEY); PRAGMA user_version = 7;");
    sqlite3_close(db);
    expect_open_fails(path, HS_E_INPUT, "version 7", "versions 1 to 2");
    ck_assert_int_eq(file_int(path, "PRAGMA user_version"), 7);  /* untouched */

    /* Our application id with a newer version: the same message. (An older one is
     * upgraded: check_rows.c, and the fixture of tests/cli/fixture.sh.) */
    const char *ours = test_folder_path("ours_v3.db");
    Store *store = open_store(ours);
    store_close(store);
    db = raw_open(ours);
    raw_exec(db, "PRAGMA user_version = 3");
    sqlite3_close(db);
    expect_open_fails(ours, HS_E_INPUT, "version 3", "versions 1 to 2");

    /* A bare user_version on an otherwise empty file is not a new database either. */
    const char *bare = test_folder_path("bare_v3.db");
    db = raw_open(bare);
    raw_exec(db, "PRAGMA user_version = 3");
    sqlite3_close(db);
    expect_open_fails(bare, HS_E_INPUT, "version 3", "versions 1 to 2");
}
END_TEST

START_TEST(test_non_database_refused_untouched)
{
    static const char text[] = "[run]\nname = this is a scenario, not a database\n";
    const char *path = test_folder_path("scenario.ini");
    write_file_bytes(path, text, sizeof text - 1);
    expect_open_fails(path, HS_E_INPUT, "not a SQLite database", NULL);

    /* One byte: SQLite alone would take it for an empty database and overwrite it. */
    const char *tiny = test_folder_path("tiny.txt");
    write_file_bytes(tiny, "x", 1);
    expect_open_fails(tiny, HS_E_INPUT, "not a SQLite database", NULL);
    long size = 0;
    char *bytes = read_file_bytes(tiny, &size);
    ck_assert_int_eq(size, 1);
    ck_assert_int_eq(bytes[0], 'x');
    free(bytes);
    bytes = read_file_bytes(path, &size);
    ck_assert_int_eq(size, (long)sizeof text - 1);
    ck_assert(memcmp(bytes, text, sizeof text - 1) == 0);
    free(bytes);

    /* Another program's SQLite database: refused, and its journal mode is not changed. */
    const char *other = test_folder_path("other_app.db");
    sqlite3 *db = raw_open(other);
    raw_exec(db, "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('keep me');");
    sqlite3_close(db);
    expect_open_fails(other, HS_E_INPUT, "not a hetsim database", NULL);
    db = raw_open(other);
    char *mode = raw_text(db, "PRAGMA journal_mode");
    ck_assert_str_eq(mode, "delete");
    free(mode);
    sqlite3_close(db);

    const char *foreign = test_folder_path("foreign_app.db");
    db = raw_open(foreign);
    raw_exec(db, "PRAGMA application_id = 1234; CREATE TABLE runs(x); PRAGMA user_version = 1;");
    sqlite3_close(db);
    expect_open_fails(foreign, HS_E_INPUT, "not a hetsim database", "application_id");

    /* Our version number but not our tables. */
    const char *partial = test_folder_path("partial.db");
    db = raw_open(partial);
    raw_exec(db, "CREATE TABLE runs(id); PRAGMA user_version = 1;");
    sqlite3_close(db);
    expect_open_fails(partial, HS_E_INPUT, "not a hetsim database", NULL);

    /* A directory. */
    expect_open_fails(test_folder(), HS_E_IO, "cannot open", NULL);
}
END_TEST

/* store_open as an unprivileged user (tests/test_user.h) on a location it cannot write:
 * it must fail with status and a message naming the file and holding needle. The
 * location must really be unwritable to that user, or the check proves nothing.
 * No ck_assert here. */
typedef struct Unwritable {
    const char *path, *unwritable, *needle;
    int status;
} Unwritable;

static int open_fails_as_reader(void *arg)
{
    const Unwritable *t = arg;
    if (access(t->unwritable, W_OK) == 0) {
        fprintf(stderr, "uid %d can write %s: the check would prove nothing\n", (int)geteuid(), t->unwritable);
        return 1;
    }
    Store *store = (Store *)&store; /* must come back NULL */
    HsDiag diag;
    hs_diag_clear(&diag);
    int got = store_open(t->path, &store, &diag);
    int ok = got == t->status && store == NULL && diag.status == t->status && strstr(diag.message, t->path) &&
             strstr(diag.message, t->needle);
    if (!ok) {
        fprintf(stderr, "store_open(%s) as uid %d = %d, want %d with '%s': %s\n", t->path, (int)geteuid(), got,
                t->status, t->needle, diag.message);
        if (got == HS_OK && store != NULL) store_close(store);
    }
    return ok ? 0 : 1;
}

START_TEST(test_unwritable_locations)
{
    /* Root-proof cases first: a missing folder, and /proc where nobody creates files. */
    const char *missing = test_folder_path("no/such/folder/x.db");
    expect_open_fails(missing, HS_E_IO, "cannot open", "No such file");
    expect_open_fails("/proc/hetsim-check-store.db", HS_E_IO, "cannot open", NULL);

    /* chmod 0444 cannot stop root, and CI runs as root: the permission cases run in a
     * child that drops root to nobody, which must reach them through the scratch folder. */
    ck_assert_int_eq(chmod(test_folder(), 0711), 0);
    const char *path = test_folder_path("readonly.db");
    Store *store = open_store(path);
    store_close(store);
    ck_assert_int_eq(chmod(path, 0444), 0);
    char why[200];
    Unwritable file = {.path = path, .unwritable = path, .needle = "read-only", .status = HS_E_IO};
    int failed = test_user_run_unprivileged(open_fails_as_reader, &file, why, sizeof why);
    ck_assert_msg(!failed, "a read-only file: %s", why);
    ck_assert_int_eq(chmod(path, 0644), 0);

    char folder[512];
    snprintf(folder, sizeof folder, "%s/readonly_folder", test_folder());
    ck_assert_int_eq(mkdir(folder, 0755), 0);
    ck_assert_int_eq(chmod(folder, 0555), 0);
    char inside[600];
    snprintf(inside, sizeof inside, "%s/x.db", folder);
    Unwritable in_folder = {.path = inside, .unwritable = folder, .needle = "cannot open", .status = HS_E_IO};
    failed = test_user_run_unprivileged(open_fails_as_reader, &in_folder, why, sizeof why);
    ck_assert_msg(!failed, "a read-only folder: %s", why);
    ck_assert_int_eq(access(inside, F_OK), -1); /* and nothing was created there */
}
END_TEST

START_TEST(test_locked_database)
{
    const char *path = test_folder_path("locked.db");
    Store *store = open_store(path);
    ck_assert_int_eq(store_set_busy_timeout(store, 100), HS_OK);
    ck_assert_int_eq(store_set_busy_timeout(store, -1), HS_E_INTERNAL);
    sqlite3 *other = raw_open(path);
    raw_exec(other, "BEGIN EXCLUSIVE");
    SinkRunInfo info = { .name = "locked", .method = "sync", .seed = 1, .mode = "timing" };
    Sink sink = store_sink(store);
    int64_t id = 0;
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &id), HS_E_IO);
    ck_assert_ptr_nonnull(strstr(store_error_message(store), "locked"));
    ck_assert_ptr_nonnull(strstr(store_error_message(store), path));
    raw_exec(other, "COMMIT");
    /* Once the other writer is gone the same store works again. */
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &id), HS_OK);
    sqlite3_close(other);
    store_close(store);

    /* Locked while opening: a rollback-journal database held by an exclusive lock
     * blocks even reading the schema, for the whole (default) busy timeout. */
    const char *rollback = test_folder_path("locked_rollback.db");
    store = open_store(rollback);
    store_close(store);
    other = raw_open(rollback);
    raw_exec(other, "PRAGMA journal_mode = DELETE");
    raw_exec(other, "BEGIN EXCLUSIVE; INSERT INTO runs(status) VALUES ('running');");
    expect_open_fails(rollback, HS_E_IO, "locked", NULL);
    raw_exec(other, "ROLLBACK");
    sqlite3_close(other);
}
END_TEST

START_TEST(test_bad_arguments)
{
    Store *store = (Store *)&store;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(store_open(NULL, &store, &diag), HS_E_INPUT);
    ck_assert_ptr_null(store);
    hs_diag_clear(&diag);
    ck_assert_int_eq(store_open("", &store, &diag), HS_E_INPUT);
    ck_assert_int_eq(store_open("x.db", NULL, NULL), HS_E_INPUT);
    store_close(NULL);
    ck_assert_str_eq(store_error_message(NULL), "");
    ck_assert_int_eq(store_flush(NULL), HS_E_INTERNAL);
    ck_assert_int_eq(store_mark_interrupted(NULL, 1), HS_E_INTERNAL);
    ck_assert_int_eq(store_delete_run(NULL, 1), HS_E_INTERNAL);
}
END_TEST

START_TEST(test_row_of_unknown_run_fails_the_flush)
{
    const char *path = test_folder_path("orphan.db");
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    SinkRound round = { .round = 1, .t_start = 0, .t_end = 1, .extra = NAN };
    ck_assert_int_eq(sink.ops->round(sink.ctx, 77, &round), HS_OK);  /* buffered */
    ck_assert_int_eq(store_flush(store), HS_E_INTERNAL);  /* foreign key: a caller bug */
    ck_assert_ptr_nonnull(strstr(store_error_message(store), "FOREIGN KEY"));
    store_close(store);
    ck_assert_int_eq(file_int(path, "SELECT count(*) FROM rounds"), 0);
}
END_TEST

/* Many fresh files, each opened by three processes at once: every open succeeds. The
 * schema check used to read the file in several snapshots, and a schema committed between
 * them looked like "tables but no schema version": 2 to 3 of these 150 files failed per
 * run before the fix. */
START_TEST(test_simultaneous_opens_of_new_files)
{
    enum { FILES = 150, PROCESSES = 3 };
    int failures = 0;
    for (int f = 0; f < FILES; f++) {
        char name[32];
        snprintf(name, sizeof name, "open-race-%d.db", f);
        const char *path = test_folder_path(name);
        pid_t children[PROCESSES];
        for (int p = 0; p < PROCESSES; p++) {
            children[p] = fork();
            ck_assert_int_ge(children[p], 0);
            if (children[p] != 0) continue;
            HsDiag diag;
            hs_diag_clear(&diag);
            Store *mine = NULL;
            if (store_open(path, &mine, &diag) != HS_OK) {
                fprintf(stderr, "file %d, process %d: %s\n", f, p, diag.message);
                _exit(10);
            }
            store_close(mine);
            _exit(0);
        }
        for (int p = 0; p < PROCESSES; p++) {
            int wstatus = 0;
            ck_assert_int_eq(waitpid(children[p], &wstatus, 0), children[p]);
            failures += !(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
        }
    }
    ck_assert_int_eq(failures, 0);
}
END_TEST

static Suite *store_suite(void)
{
    Suite *s = suite_create("store");
    TCase *normal = tcase_create("normal");
    tcase_add_unchecked_fixture(normal, scratch_setup, scratch_teardown);
    tcase_set_timeout(normal, 60);
    tcase_add_test(normal, test_round_trip_two_runs);
    tcase_add_test(normal, test_schema_and_pragmas);
    tcase_add_test(normal, test_new_schema_equals_upgraded);
    tcase_add_test(normal, test_append_to_existing_database);
    tcase_add_test(normal, test_old_file_gets_the_domain_columns);
    tcase_add_test(normal, test_domain_era_file_gets_epsilon);
    tcase_add_test(normal, test_two_stores_on_one_file);
    tcase_add_test(normal, test_parallel_processes_share_a_file);
    tcase_add_test(normal, test_simultaneous_opens_of_new_files);
    tcase_add_test(normal, test_unfinished_run_stays_running);
    tcase_add_test(normal, test_crash_leaves_running_never_done);
    tcase_add_test(normal, test_failed_and_diverged_keep_rows);
    tcase_add_test(normal, test_run_end_with_running_is_refused);
    tcase_add_test(normal, test_mark_interrupted);
    tcase_add_test(normal, test_delete_run_removes_every_row);
    tcase_add_test(normal, test_list_sweep_runs);
    suite_add_tcase(s, normal);

    TCase *limits = tcase_create("limits");
    tcase_add_unchecked_fixture(limits, scratch_setup, scratch_teardown);
    tcase_set_timeout(limits, 60);
    tcase_add_test(limits, test_batches_become_visible);
    tcase_add_test(limits, test_limit_values);
    tcase_add_test(limits, test_insert_throughput);
    suite_add_tcase(s, limits);

    TCase *errors = tcase_create("errors");
    tcase_add_unchecked_fixture(errors, scratch_setup, scratch_teardown);
    tcase_set_timeout(errors, 60);
    tcase_add_test(errors, test_other_schema_version_refused);
    tcase_add_test(errors, test_non_database_refused_untouched);
    tcase_add_test(errors, test_unwritable_locations);
    tcase_add_test(errors, test_locked_database);
    tcase_add_test(errors, test_bad_arguments);
    tcase_add_test(errors, test_row_of_unknown_run_fails_the_flush);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(store_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
