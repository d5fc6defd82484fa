/* check_rows.c — the row tables of sim/kernel/sink.h: every column of every record, filled with a
 * value of its own, crosses every path generated from the tables — the sweep's record
 * stream, the SQLite store (DDL, INSERT and binds, read back with plain queries) and the
 * schema upgrade of an older file — so a column added to a list is tested by this suite
 * without a line of its own. */
#include <check.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/store.h"
#include "sim/kernel/sink.h"
#include "driver/sweep.h"
#include "sim/run_params.h"
#include "tests/test_files.h"

/* ---- records filled column by column ---- */

static char texts[SINK_RECORD_COUNT][32][24];

/* Every member of one part of record gets a value no other column has: REAL k + 0.25,
 * INT k, SEED a pattern above 2^63, TEXT "t<which>.<column>", enums their second value
 * (offloader, done, message), FLAG 1 (so gated columns hold their values). */
static void fill(SinkRecord which, SinkPart part, void *record)
{
    const SinkTable *t = &sink_tables[which];
    for (int i = 0; i < t->n_columns; i++) {
        const SinkColumn *c = &t->columns[i];
        if (c->part != part || c->alias) continue;
        int k = 100 * (int)which + i + 1;
        switch (c->type) {
        case SINK_REAL: sink_column_set_real(c, record, k + 0.25); break;
        case SINK_TEXT:
            snprintf(texts[which][i], sizeof texts[which][i], "t%d.%s", (int)which, c->name);
            sink_column_set_text(c, record, texts[which][i]);
            break;
        case SINK_SEED: sink_column_set_int(c, record, (int64_t)(UINT64_C(0x8000000000000000) + (uint64_t)k)); break;
        case SINK_ID: sink_column_set_int(c, record, 0); break;  /* the database chooses */
        case SINK_ROLE: case SINK_STATUS: case SINK_ACTIVITY: case SINK_FLAG: sink_column_set_int(c, record, 1); break;
        default: sink_column_set_int(c, record, k); break;
        }
    }
}

/* Whether column c has the same value in a and b (strings by content). */
static int same(const SinkColumn *c, const void *a, const void *b)
{
    switch (c->type) {
    case SINK_REAL: {
        double x = sink_column_real(c, a), y = sink_column_real(c, b);
        return memcmp(&x, &y, sizeof x) == 0;
    }
    case SINK_TEXT: {
        const char *x = sink_column_text(c, a), *y = sink_column_text(c, b);
        return (x == NULL && y == NULL) || (x != NULL && y != NULL && strcmp(x, y) == 0);
    }
    default: return sink_column_int(c, a) == sink_column_int(c, b);
    }
}

/* ---- a sink that keeps one copy of each record ---- */

typedef struct Kept {
    SinkRunInfo info;
    SinkRunEnd end;
    SinkAgent agent;
    SinkRound round;
    SinkAgentRound agent_round;
    SinkPairing pairing;
    SinkMetric metric;
    SinkParam param;
    char strings[64][64];
    int n_strings;
} Kept;

/* Copies the strings of record into k, so the copy outlives the call. */
static void keep_strings(Kept *k, SinkRecord which, SinkPart part, void *record)
{
    const SinkTable *t = &sink_tables[which];
    for (int i = 0; i < t->n_columns; i++) {
        const SinkColumn *c = &t->columns[i];
        if (c->part != part || c->alias || sink_column_text(c, record) == NULL) continue;
        char *copy = k->strings[k->n_strings++];
        snprintf(copy, sizeof k->strings[0], "%s", sink_column_text(c, record));
        sink_column_set_text(c, record, copy);
    }
}

static int kept_begin(void *ctx, const SinkRunInfo *info, int64_t *id)
{
    Kept *k = ctx;
    k->info = *info;
    keep_strings(k, SINK_RECORD_RUN, SINK_PART_INFO, &k->info);
    *id = 1;
    return 0;
}
static int kept_agents(void *ctx, int64_t id, const SinkAgent *a, int n)
{
    Kept *k = ctx;
    k->agent = a[0];
    keep_strings(k, SINK_RECORD_AGENT, SINK_PART_ROW, &k->agent);
    return 0;
}
static int kept_round(void *ctx, int64_t id, const SinkRound *r)
{
    ((Kept *)ctx)->round = *r;
    return 0;
}
static int kept_agent_rounds(void *ctx, int64_t id, const SinkAgentRound *r, int n)
{
    ((Kept *)ctx)->agent_round = r[0];
    return 0;
}
static int kept_pairing(void *ctx, int64_t id, const SinkPairing *p)
{
    Kept *k = ctx;
    k->pairing = *p;
    keep_strings(k, SINK_RECORD_PAIRING, SINK_PART_ROW, &k->pairing);
    return 0;
}
static int kept_metric(void *ctx, int64_t id, const SinkMetric *m)
{
    ((Kept *)ctx)->metric = *m;
    return 0;
}
static int kept_end(void *ctx, int64_t id, const SinkRunEnd *e)
{
    Kept *k = ctx;
    k->end = *e;
    keep_strings(k, SINK_RECORD_RUN, SINK_PART_END, &k->end);
    return 0;
}
static int kept_params(void *ctx, int64_t id, const SinkParam *rows, int n)
{
    Kept *k = ctx;
    k->param = rows[0];
    keep_strings(k, SINK_RECORD_PARAM, SINK_PART_ROW, &k->param);
    return 0;
}
static const SinkOps kept_ops = {kept_begin, kept_agents, kept_round, kept_agent_rounds,
                                 kept_pairing, kept_metric, kept_end, NULL, kept_params, NULL};

/* The records of one whole run, every column filled. */
typedef struct Filled {
    SinkRunInfo info;
    SinkRunEnd end;
    SinkAgent agent;
    SinkRound round;
    SinkAgentRound agent_round;
    SinkPairing pairing;
    SinkMetric metric;
    SinkParam param;
} Filled;

static void fill_all(Filled *f)
{
    memset(f, 0, sizeof *f);
    fill(SINK_RECORD_RUN, SINK_PART_INFO, &f->info);
    fill(SINK_RECORD_RUN, SINK_PART_END, &f->end);
    fill(SINK_RECORD_AGENT, SINK_PART_ROW, &f->agent);
    fill(SINK_RECORD_ROUND, SINK_PART_ROW, &f->round);
    fill(SINK_RECORD_AGENT_ROUND, SINK_PART_ROW, &f->agent_round);
    fill(SINK_RECORD_PAIRING, SINK_PART_ROW, &f->pairing);
    fill(SINK_RECORD_METRIC, SINK_PART_ROW, &f->metric);
    fill(SINK_RECORD_PARAM, SINK_PART_ROW, &f->param);
}

static int64_t report_all(Sink sink, const Filled *f)
{
    int64_t id = 0;
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &f->info, &id), HS_OK);
    ck_assert_int_eq(sink.ops->params(sink.ctx, id, &f->param, 1), HS_OK);
    ck_assert_int_eq(sink.ops->agents(sink.ctx, id, &f->agent, 1), HS_OK);
    ck_assert_int_eq(sink.ops->round(sink.ctx, id, &f->round), HS_OK);
    ck_assert_int_eq(sink.ops->agent_rounds(sink.ctx, id, &f->agent_round, 1), HS_OK);
    ck_assert_int_eq(sink.ops->pairing(sink.ctx, id, &f->pairing), HS_OK);
    ck_assert_int_eq(sink.ops->metric(sink.ctx, id, &f->metric), HS_OK);
    ck_assert_int_eq(sink.ops->run_end(sink.ctx, id, &f->end), HS_OK);
    return id;
}

/* ---- the record stream ---- */

static int capture(void *ctx, const void *data, size_t len)
{
    SweepReplay *replay = ctx;
    size_t used = 0;
    HsDiag diag;
    hs_diag_clear(&diag);
    int status = sweep_replay(replay, data, len, &used, &diag);
    ck_assert_msg(status == HS_OK, "%s", diag.message);
    ck_assert_uint_eq(used, len);
    return status;
}

START_TEST(test_every_column_crosses_the_record_stream)
{
    Filled f;
    fill_all(&f);
    Sweep sw;
    memset(&sw, 0, sizeof sw);
    sw.n_runs = 1;
    snprintf(sw.id, sizeof sw.id, "sw-rows");
    Kept kept;
    memset(&kept, 0, sizeof kept);
    SweepReplay replay;
    sweep_replay_init(&replay, &sw, (Sink){&kept_ops, &kept}, NULL, NULL);
    SweepWire wire = {0};
    report_all(sweep_wire_sink(&wire, 0, capture, &replay), &f);
    ck_assert_int_eq(sweep_wire_flush(&wire), HS_OK);

    struct { SinkRecord which; SinkPart part; const void *sent, *got; } records[] = {
        {SINK_RECORD_RUN, SINK_PART_INFO, &f.info, &kept.info},
        {SINK_RECORD_RUN, SINK_PART_END, &f.end, &kept.end},
        {SINK_RECORD_AGENT, SINK_PART_ROW, &f.agent, &kept.agent},
        {SINK_RECORD_ROUND, SINK_PART_ROW, &f.round, &kept.round},
        {SINK_RECORD_AGENT_ROUND, SINK_PART_ROW, &f.agent_round, &kept.agent_round},
        {SINK_RECORD_PAIRING, SINK_PART_ROW, &f.pairing, &kept.pairing},
        {SINK_RECORD_METRIC, SINK_PART_ROW, &f.metric, &kept.metric},
        {SINK_RECORD_PARAM, SINK_PART_ROW, &f.param, &kept.param},
    };
    int checked = 0;
    for (size_t r = 0; r < sizeof records / sizeof records[0]; r++) {
        const SinkTable *t = &sink_tables[records[r].which];
        for (int i = 0; i < t->n_columns; i++) {
            const SinkColumn *c = &t->columns[i];
            if (c->part != records[r].part || c->alias) continue;
            if (c->flags & SINK_LOCAL) continue;  /* the writer's own: checked below */
            ck_assert_msg(same(c, records[r].sent, records[r].got), "%s.%s changed on the record stream",
                          t->table, c->name);
            checked++;
        }
    }
    ck_assert_int_ge(checked, 40);
    /* the writer's own columns: the sweep and the point from the Sweep, not the producer */
    ck_assert_str_eq(kept.info.sweep, "sw-rows");
    ck_assert_ptr_null(kept.info.point);
    ck_assert_int_eq(kept.param.swept, 0);  /* no axis of this sweep set it */
    sweep_replay_free(&replay);
    sweep_wire_free(&wire);
}
END_TEST

/* ---- the store ---- */

static void scratch_setup(void)
{
    test_folder_make("check_rows");
}

static void scratch_teardown(void)
{
    test_folder_remove();
}

/* Reads column c of table's row run_id (the first) back and compares it with what
 * record should have left there: NULL by the row tables' rules, an enum's name, the
 * number or the text. */
static void expect_column(sqlite3 *db, const char *table, int64_t run_id, const SinkColumn *c, const void *record)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT \"%s\" FROM \"%s\" WHERE %s = %lld", c->name, table,
             strcmp(table, "runs") == 0 ? "id" : "run_id", (long long)run_id);
    sqlite3_stmt *stmt = NULL;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    ck_assert_int_eq(sqlite3_step(stmt), SQLITE_ROW);
    int type = sqlite3_column_type(stmt, 0);
    if (c->part == SINK_PART_STORE) {
        ck_assert_msg(type == SQLITE_TEXT, "%s.%s is filled by the store", table, c->name);
    } else if (sink_column_is_null(c, record)) {
        ck_assert_msg(type == SQLITE_NULL, "%s.%s should be NULL", table, c->name);
    } else if (sink_type_enum_count(c->type) > 0) {
        ck_assert_str_eq((const char *)sqlite3_column_text(stmt, 0), sink_column_enum_name(c, record));
    } else if (c->type == SINK_TEXT) {
        ck_assert_str_eq((const char *)sqlite3_column_text(stmt, 0), sink_column_text(c, record));
    } else if (c->type == SINK_REAL) {
        ck_assert_msg(type == SQLITE_FLOAT && sqlite3_column_double(stmt, 0) == sink_column_real(c, record),
                      "%s.%s", table, c->name);
    } else {
        ck_assert_msg(type == SQLITE_INTEGER && sqlite3_column_int64(stmt, 0) == sink_column_int(c, record),
                      "%s.%s", table, c->name);
    }
    sqlite3_finalize(stmt);
}

/* Every column of every stored table comes back from the file; returns the count. */
static int expect_filled(const char *path, int64_t run_id, const Filled *f)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    const void *records[SINK_RECORD_COUNT] = {
        [SINK_RECORD_AGENT] = &f->agent, [SINK_RECORD_ROUND] = &f->round,
        [SINK_RECORD_AGENT_ROUND] = &f->agent_round, [SINK_RECORD_PAIRING] = &f->pairing,
        [SINK_RECORD_METRIC] = &f->metric, [SINK_RECORD_PARAM] = &f->param,
    };
    int checked = 0;
    for (int w = 0; w < SINK_RECORD_COUNT; w++) {
        const SinkTable *t = &sink_tables[w];
        if (!t->stored) continue;
        for (int i = 0; i < t->n_columns; i++) {
            const SinkColumn *c = &t->columns[i];
            if (c->type == SINK_FLAG) continue;
            const void *record = w != SINK_RECORD_RUN ? records[w] : c->part == SINK_PART_END ? (const void *)&f->end
                                                                                             : (const void *)&f->info;
            if (c->type == SINK_ID) {  /* the database chose it */
                checked++;
                continue;
            }
            expect_column(db, t->table, run_id, c, record);
            checked++;
        }
    }
    sqlite3_close(db);
    return checked;
}

START_TEST(test_every_column_comes_back_from_the_database)
{
    char path[300];
    snprintf(path, sizeof path, "%s/rows.db", test_folder());
    Store *store = NULL;
    HsDiag diag;
    ck_assert_int_eq(store_open(path, &store, &diag), HS_OK);
    Filled f;
    fill_all(&f);
    int64_t id = report_all(store_sink(store), &f);
    store_close(store);
    ck_assert_int_ge(expect_filled(path, id, &f), 50);

    /* the gated columns with their flag down, and the negative SINK_NEG_NULL, are NULL */
    ck_assert_int_eq(store_open(path, &store, &diag), HS_OK);
    f.metric.has_domains = f.metric.has_privacy = 0;
    f.metric.agent = -1;
    id = report_all(store_sink(store), &f);
    store_close(store);
    expect_filled(path, id, &f);
}
END_TEST

/* A file written before any one column existed gains it when opened for writing (NULL in
 * its older rows) and takes the column's values from then on. */
START_TEST(test_every_column_is_added_to_an_older_file)
{
    int dropped = 0;
    for (int w = 0; w < SINK_RECORD_COUNT; w++) {
        const SinkTable *t = &sink_tables[w];
        if (!t->stored) continue;
        for (int i = 0; i < t->n_columns; i++) {
            const SinkColumn *c = &t->columns[i];
            /* the columns of the first schema that indexes or keys use cannot be dropped;
             * nothing added later may be NOT NULL (an older file cannot gain one) */
            if (c->type == SINK_FLAG || (c->flags & SINK_KEY) || strcmp(c->name, "sweep") == 0 ||
                strcmp(c->name, "point") == 0 || (w != SINK_RECORD_RUN && strcmp(c->name, "round") == 0))
                continue;
            char path[300], sql[300];
            snprintf(path, sizeof path, "%s/old-%d-%d.db", test_folder(), w, i);
            Store *store = NULL;
            HsDiag diag;
            Filled f;
            fill_all(&f);
            ck_assert_int_eq(store_open(path, &store, &diag), HS_OK);
            report_all(store_sink(store), &f);
            store_close(store);
            sqlite3 *db = NULL;
            ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
            /* a file before the column, and before the views (which read most columns) */
            for (int v = 0; v < STORE_VIEW_COUNT; v++) {
                snprintf(sql, sizeof sql, "DROP VIEW \"%s\"", store_views[v].name);
                ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
            }
            ck_assert_int_eq(sqlite3_exec(db, "DROP VIEW run_targets; PRAGMA user_version = 1", NULL, NULL, NULL),
                             SQLITE_OK);
            snprintf(sql, sizeof sql, "ALTER TABLE \"%s\" DROP COLUMN \"%s\"", t->table, c->name);
            ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
            sqlite3_close(db);

            ck_assert_msg(store_open(path, &store, &diag) == HS_OK, "%s", diag.message);
            int64_t id = report_all(store_sink(store), &f);
            store_close(store);
            expect_filled(path, id, &f);
            ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
            snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\" WHERE \"%s\" IS NULL AND %s < %lld", t->table,
                     c->name, w == SINK_RECORD_RUN ? "id" : "run_id", (long long)id);
            sqlite3_stmt *stmt = NULL;
            ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
            ck_assert_int_eq(sqlite3_step(stmt), SQLITE_ROW);
            ck_assert_int_eq(sqlite3_column_int(stmt, 0), 1);  /* the older row: NULL */
            sqlite3_finalize(stmt);
            sqlite3_close(db);
            dropped++;
        }
    }
    ck_assert_int_ge(dropped, 30);
}
END_TEST

/* ---- run_params from a resolved config ---- */

static const SinkParam *find_param(const RunParams *p, const char *section, const char *key)
{
    for (int i = 0; i < p->count; i++)
        if (strcmp(p->rows[i].section, section) == 0 && strcmp(p->rows[i].key, key) == 0) return &p->rows[i];
    ck_abort_msg("no run_params row %s.%s", section, key);
    return NULL;
}

START_TEST(test_run_params_from_config)
{
    const char *config = "[run]\nname = x\nmethod = fedavg\nseed = 7\ntime_budget = inf\n"
                         "[method]\ndeadline = 0.5\nlocal_steps = 3\n"
                         "[agents]\ncompute = lognormal(2000000000, 0.80000000000000004)\n"
                         "bandwidth = uniform(1250000, 12500000)\nlatency = choice(0.001:0.25, 0.01:0.75)\n"
                         "availability = trace(traces/a b.csv)\n"
                         "; a comment\n[agents.slow]\ncompute = 200000000\nuplink = pareto(1000, 1.5)\n"
                         "downlink = normal(5e6, 1e6)\n";
    RunParams p;
    ck_assert_int_eq(run_params_from_config(config, &p), HS_OK);
    const SinkParam *r = find_param(&p, "run", "seed");
    ck_assert(r->value_num == 7 && strcmp(r->unit, "") == 0 && strcmp(r->value_text, "7") == 0);
    r = find_param(&p, "run", "time_budget");
    ck_assert(isinf(r->value_num) && strcmp(r->unit, "s") == 0);
    ck_assert(isnan(find_param(&p, "run", "name")->value_num));
    ck_assert_str_eq(find_param(&p, "method", "deadline")->unit, "s");  /* fedavg's TIME key */
    ck_assert_str_eq(find_param(&p, "method", "local_steps")->unit, "");
    r = find_param(&p, "agents", "compute");
    ck_assert(isnan(r->value_num) && strcmp(r->value_text, "lognormal(2000000000, 0.80000000000000004)") == 0);
    ck_assert_str_eq(find_param(&p, "agents", "compute.dist")->value_text, "lognormal");
    r = find_param(&p, "agents", "compute.median");
    ck_assert(r->value_num == 2e9 && strcmp(r->unit, "FLOP/s") == 0);
    r = find_param(&p, "agents", "compute.sigma");
    ck_assert(r->value_num == 0.8 && strcmp(r->unit, "") == 0);
    ck_assert(find_param(&p, "agents", "bandwidth.high")->value_num == 12500000);
    ck_assert_str_eq(find_param(&p, "agents", "bandwidth.low")->unit, "B/s");
    ck_assert(find_param(&p, "agents", "latency.value2")->value_num == 0.01);
    ck_assert_str_eq(find_param(&p, "agents", "latency.value2")->unit, "s");
    ck_assert(find_param(&p, "agents", "latency.p1")->value_num == 0.25);
    ck_assert_str_eq(find_param(&p, "agents", "availability.path")->value_text, "traces/a b.csv");
    r = find_param(&p, "agents.slow", "compute");
    ck_assert(r->value_num == 2e8 && strcmp(r->unit, "FLOP/s") == 0);
    ck_assert(find_param(&p, "agents.slow", "uplink.shape")->value_num == 1.5);
    ck_assert_str_eq(find_param(&p, "agents.slow", "downlink.sd")->unit, "B/s");
    run_params_free(&p);

    /* the sweep's writer marks what its axes set */
    Sweep sw;
    memset(&sw, 0, sizeof sw);
    sw.n_axes = 1;
    sw.repeat = 2;
    snprintf(sw.axes[0].section, sizeof sw.axes[0].section, "agents");
    snprintf(sw.axes[0].key, sizeof sw.axes[0].key, "compute");
    SinkParam row = {.section = "agents", .key = "compute.sigma"};
    ck_assert_int_eq(sweep_param_swept(&sw, &row), 1);
    row.key = "computer";
    ck_assert_int_eq(sweep_param_swept(&sw, &row), 0);
    row.section = "agents.slow";
    row.key = "compute";
    ck_assert_int_eq(sweep_param_swept(&sw, &row), 0);
    row.section = "run";
    row.key = "seed";
    ck_assert_int_eq(sweep_param_swept(&sw, &row), 1);
}
END_TEST

/* The views' real columns are the ones their lists describe, in order (so the
 * reference generated from the lists is right), and every table of a new file is one
 * of store_table's. */
START_TEST(test_views_have_the_described_columns)
{
    char path[300];
    snprintf(path, sizeof path, "%s/views.db", test_folder());
    Store *store = NULL;
    HsDiag diag;
    ck_assert_int_eq(store_open(path, &store, &diag), HS_OK);
    store_close(store);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    for (int v = 0; v < STORE_VIEW_COUNT; v++) {
        char sql[200];
        snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s') ORDER BY cid", store_views[v].name);
        sqlite3_stmt *stmt = NULL;
        ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
        int i = 0;
        while (sqlite3_step(stmt) == SQLITE_ROW) {
            ck_assert_msg(i < store_views[v].n_columns, "%s has more columns than described", store_views[v].name);
            ck_assert_str_eq((const char *)sqlite3_column_text(stmt, 0), store_views[v].columns[i].name);
            i++;
        }
        ck_assert_int_eq(i, store_views[v].n_columns);
        sqlite3_finalize(stmt);
    }
    sqlite3_stmt *stmt = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'"
                                        " AND name <> 'sqlite_sequence'", -1, &stmt, NULL), SQLITE_OK);
    int tables = 0;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(stmt, 0);
        int found = 0;
        for (int t = 0; store_table(t, NULL) != NULL; t++) found |= strcmp(store_table(t, NULL)->table, name) == 0;
        ck_assert_msg(found, "table %s is not one of store_table's", name);
        tables++;
    }
    int listed = 0;
    while (store_table(listed, NULL) != NULL) listed++;
    ck_assert_int_eq(tables, listed);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
}
END_TEST

/* ---- the tables themselves ---- */

START_TEST(test_tables_are_well_formed)
{
    for (int w = 0; w < SINK_RECORD_COUNT; w++) {
        const SinkTable *t = &sink_tables[w];
        ck_assert_int_gt(t->n_columns, 0);
        for (int i = 0; i < t->n_columns; i++) {
            const SinkColumn *c = &t->columns[i];
            ck_assert_msg(c->doc != NULL && c->doc[0] != '\0', "%s.%s has no description", t->table, c->name);
            ck_assert_ptr_nonnull(c->unit);
            ck_assert_msg(c->gate < 0 || c->type == SINK_REAL, "%s.%s: only REAL columns are gated", t->table,
                          c->name);
            for (int j = 0; j < i; j++)
                ck_assert_msg(strcmp(c->name, t->columns[j].name) != 0, "%s.%s twice", t->table, c->name);
            if (w == SINK_RECORD_RUN) ck_assert(c->part != SINK_PART_ROW);
            else ck_assert(c->part == SINK_PART_ROW);
        }
    }
}
END_TEST

static Suite *rows_suite(void)
{
    Suite *s = suite_create("rows");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tables_are_well_formed);
    tcase_add_test(tc, test_every_column_crosses_the_record_stream);
    tcase_add_test(tc, test_every_column_comes_back_from_the_database);
    tcase_add_test(tc, test_every_column_is_added_to_an_older_file);
    tcase_add_test(tc, test_run_params_from_config);
    tcase_add_test(tc, test_views_have_the_described_columns);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(rows_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
