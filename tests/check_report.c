/* check_report.c — `hetsim report`: its numbers equal direct SQL on fixture databases
 * (tests/fixtures/store/report_fixture.sql and sweep_fixture.sql, written with plain
 * SQL, not by the store), per-point means, intervals and speedups equal a hand
 * computation, its CSV parses back with a strict RFC 4180 reader, awkward names survive
 * quoting, the file is only ever read, and every error has its exit status and message.
 * Also the pieces the report stands on: point labels (analysis/label.h) and the
 * heterogeneity level rules (analysis/runset.h). */
#include "analysis/dbread.h"
#include "analysis/label.h"
#include "analysis/report.h"
#include "analysis/runset.h"
#include "analysis/store.h"
#include "cli/cli_report.h"
#include "tests/test_command.h"
#include "tests/test_files.h"
#include "tests/test_user.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIXTURE_SQL "tests/fixtures/store/report_fixture.sql"
#define SWEEP_SQL "tests/fixtures/store/sweep_fixture.sql"

/* ---- scratch folder (made and removed by the parent process) ---- */

static void scratch_setup(void)
{
    test_folder_make("check_report");
}

static void scratch_teardown(void)
{
    test_folder_remove();
}

static char *read_path(const char *path, long *size)
{
    FILE *file = fopen(path, "rb");
    ck_assert_msg(file != NULL, "cannot open %s", path);
    char *text = test_read_stream(file, size);
    fclose(file);
    return text;
}

/* ---- databases ---- */

static void raw_exec(sqlite3 *db, const char *sql)
{
    char *error = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &error);
    ck_assert_msg(rc == SQLITE_OK, "sql failed: %s", error ? error : "?");
}

/* A hetsim database (schema by store_open) holding the rows of the SQL file sql_path. */
static const char *make_database(const char *name, const char *sql_path)
{
    const char *path = test_folder_path(name);
    Store *store = NULL;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(store_open(path, &store, &diag) == HS_OK, "%s", diag.message);
    store_close(store);
    char *sql = read_path(sql_path, NULL);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    raw_exec(db, sql);
    sqlite3_close(db);
    free(sql);
    return path;
}

static const char *make_fixture(const char *name)
{
    return make_database(name, FIXTURE_SQL);
}

/* A hetsim database holding the rows of the SQL text sql. */
static const char *make_from_sql(const char *name, const char *sql)
{
    const char *path = test_folder_path(name);
    Store *store = NULL;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(store_open(path, &store, &diag) == HS_OK, "%s", diag.message);
    store_close(store);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    raw_exec(db, sql);
    sqlite3_close(db);
    return path;
}

/* ---- running the command ---- */

#define RUN_REPORT(...) TEST_COMMAND(cli_report_stream, __VA_ARGS__)

/* ---- a strict RFC 4180 reader: quoted fields, doubled quotes, CR/LF inside quotes ---- */

enum { CSV_ROWS = 64, CSV_COLUMNS = 32 };

typedef struct Csv {
    int rows;
    int columns[CSV_ROWS];
    char *cell[CSV_ROWS][CSV_COLUMNS];
} Csv;

static void csv_free(Csv *csv)
{
    for (int r = 0; r < csv->rows; r++)
        for (int c = 0; c < csv->columns[r]; c++) free(csv->cell[r][c]);
}

/* Returns 0, or -1 when text is not well-formed CSV (every record ends with '\n'). */
static int csv_parse(const char *text, Csv *csv)
{
    memset(csv, 0, sizeof *csv);
    const char *p = text;
    while (*p != '\0') {
        if (csv->rows == CSV_ROWS) return -1;
        int row = csv->rows++;
        for (;;) {
            if (csv->columns[row] == CSV_COLUMNS) return -1;
            size_t capacity = strlen(p) + 1, used = 0;
            char *field = malloc(capacity);
            if (field == NULL) return -1;
            csv->cell[row][csv->columns[row]++] = field;
            if (*p == '"') {
                p++;
                for (;;) {
                    if (*p == '\0') return -1;  /* unterminated quote */
                    if (*p == '"' && p[1] == '"') {
                        field[used++] = '"';
                        p += 2;
                    } else if (*p == '"') {
                        p++;
                        break;
                    } else {
                        field[used++] = *p++;
                    }
                }
            } else {
                while (*p != ',' && *p != '\n' && *p != '\0') {
                    if (*p == '"' || *p == '\r') return -1;  /* must have been quoted */
                    field[used++] = *p++;
                }
            }
            field[used] = '\0';
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p == '\n') {
                p++;
                break;
            }
            return -1;  /* junk after a closing quote, or no final newline */
        }
    }
    return 0;
}

static int csv_column(const Csv *csv, const char *name)
{
    for (int c = 0; c < csv->columns[0]; c++)
        if (strcmp(csv->cell[0][c], name) == 0) return c;
    ck_abort_msg("no column %s", name);
    return -1;
}

START_TEST(test_csv_reader_itself)
{
    Csv csv;
    ck_assert_int_eq(csv_parse("a,\"b,\"\"c\"\"\",\n\"x\ny\",,z\n", &csv), 0);
    ck_assert_int_eq(csv.rows, 2);
    ck_assert_int_eq(csv.columns[0], 3);
    ck_assert_str_eq(csv.cell[0][1], "b,\"c\"");
    ck_assert_str_eq(csv.cell[0][2], "");
    ck_assert_str_eq(csv.cell[1][0], "x\ny");
    csv_free(&csv);
    ck_assert_int_eq(csv_parse("a\"b\n", &csv), -1);
    csv_free(&csv);
    ck_assert_int_eq(csv_parse("\"open\n", &csv), -1);
    csv_free(&csv);
    ck_assert_int_eq(csv_parse("no newline", &csv), -1);
    csv_free(&csv);
}
END_TEST

/* ---- direct SQL, the reference the report is compared with ---- */

typedef struct Expected {
    int64_t id;
    char *name, *method, *status;
    uint64_t seed;
    int has_time, has_idle, has_bytes, has_accuracy;
    int64_t rounds;
    double time, idle, bytes, accuracy;
} Expected;

/* One query per figure, written independently of report.c's summary query. */
static int load_expected(const char *path, Expected *rows, int max)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *q = NULL;
    const char *sql =
        "WITH a AS (SELECT run_id, sum(idle_s) AS idle FROM agent_rounds GROUP BY run_id),"
        " n AS (SELECT run_id, count(*) AS agents FROM agents GROUP BY run_id),"
        " r AS (SELECT run_id, count(*) AS rounds, max(t_end) AS last,"
        "       sum(t_end - t_start) AS span, sum(bytes) AS bytes FROM rounds GROUP BY run_id)"
        " SELECT runs.id, runs.name, runs.method, runs.seed, runs.status,"
        "  CASE WHEN runs.rounds_done IS NULL THEN ifnull(r.rounds, 0) ELSE runs.rounds_done END,"
        "  CASE WHEN runs.sim_time_s IS NULL THEN r.last ELSE runs.sim_time_s END,"
        "  CASE WHEN n.agents > 0 AND r.span > 0 THEN a.idle / (n.agents * r.span) END,"
        "  r.bytes, runs.final_accuracy"
        " FROM runs LEFT JOIN a ON a.run_id = runs.id LEFT JOIN n ON n.run_id = runs.id"
        " LEFT JOIN r ON r.run_id = runs.id ORDER BY runs.id";
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    int count = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        ck_assert_int_lt(count, max);
        Expected *e = &rows[count++];
        e->id = sqlite3_column_int64(q, 0);
        e->name = sqlite3_column_text(q, 1) ? strdup((const char *)sqlite3_column_text(q, 1)) : NULL;
        e->method = strdup((const char *)sqlite3_column_text(q, 2));
        e->seed = (uint64_t)sqlite3_column_int64(q, 3);
        e->status = strdup((const char *)sqlite3_column_text(q, 4));
        e->rounds = sqlite3_column_int64(q, 5);
        e->has_time = sqlite3_column_type(q, 6) != SQLITE_NULL;
        e->time = sqlite3_column_double(q, 6);
        e->has_idle = sqlite3_column_type(q, 7) != SQLITE_NULL;
        e->idle = sqlite3_column_double(q, 7);
        e->has_bytes = sqlite3_column_type(q, 8) != SQLITE_NULL;
        e->bytes = sqlite3_column_double(q, 8);
        e->has_accuracy = sqlite3_column_type(q, 9) != SQLITE_NULL;
        e->accuracy = sqlite3_column_double(q, 9);
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    return count;
}

static void expected_free(Expected *rows, int count)
{
    for (int i = 0; i < count; i++) {
        free(rows[i].name);
        free(rows[i].method);
        free(rows[i].status);
    }
}

/* A CSV number must read back as exactly the double SQL gave (%.17g round-trips). */
static void expect_number(const char *field, int present, double want, const char *what)
{
    if (!present) {
        ck_assert_msg(field[0] == '\0', "%s: want empty, got '%s'", what, field);
        return;
    }
    char *end = NULL;
    double got = strtod(field, &end);
    ck_assert_msg(end != field && *end == '\0', "%s: '%s' is not a number", what, field);
    ck_assert_msg(got == want, "%s: got %.17g ('%s'), want %.17g", what, got, field, want);
}

/* ---- normal path ---- */

START_TEST(test_summary_csv_equals_sql)
{
    const char *path = make_fixture("summary.db");
    TestOutput o = RUN_REPORT("report", path, "--csv");
    ck_assert_msg(o.status == 0, "status %d: %s", o.status, o.err);
    ck_assert_str_eq(o.err, "");
    static const char header[] = "id,name,method,seed,status,rounds,sim_time_s,idle_share,"
                                 "bytes,final_accuracy,target_accuracy,time_to_target_s,"
                                 "predicted_round_s,actual_round_s,offload_share,sweep,point,"
                                 "energy_j,energy_to_target_j\n";
    ck_assert_msg(strncmp(o.out, header, sizeof header - 1) == 0, "header: %s", o.out);
    Csv csv;
    ck_assert_msg(csv_parse(o.out, &csv) == 0, "not CSV:\n%s", o.out);
    Expected want[8];
    int count = load_expected(path, want, 8);
    ck_assert_int_eq(count, 4);
    ck_assert_int_eq(csv.rows, count + 1);
    for (int i = 0; i < count; i++) {
        char *const *row = csv.cell[i + 1];
        const Expected *e = &want[i];
        ck_assert_int_eq(csv.columns[i + 1], 19);
        ck_assert_int_eq(strtoll(row[csv_column(&csv, "id")], NULL, 10), e->id);
        ck_assert_str_eq(row[csv_column(&csv, "name")], e->name);
        ck_assert_str_eq(row[csv_column(&csv, "method")], e->method);
        ck_assert_uint_eq(strtoull(row[csv_column(&csv, "seed")], NULL, 10), e->seed);
        ck_assert_str_eq(row[csv_column(&csv, "status")], e->status);
        ck_assert_int_eq(strtoll(row[csv_column(&csv, "rounds")], NULL, 10), e->rounds);
        expect_number(row[csv_column(&csv, "sim_time_s")], e->has_time, e->time, "time");
        expect_number(row[csv_column(&csv, "idle_share")], e->has_idle, e->idle, "idle");
        expect_number(row[csv_column(&csv, "bytes")], e->has_bytes, e->bytes, "bytes");
        expect_number(row[csv_column(&csv, "final_accuracy")], e->has_accuracy,
                      e->accuracy, "accuracy");
    }
    /* And the hand-computed figures of the fixture's header comment. */
    ck_assert_str_eq(csv.cell[1][7], "0.10000000000000001");  /* 6 / (2 * 30) */
    ck_assert_str_eq(csv.cell[1][8], "3500");
    ck_assert_str_eq(csv.cell[2][3], "18446744073709551615");
    ck_assert_str_eq(csv.cell[2][9], "");
    ck_assert_str_eq(csv.cell[3][5], "2");
    ck_assert_str_eq(csv.cell[3][6], "12.5");
    ck_assert_str_eq(csv.cell[3][3], "9223372036854775807");
    ck_assert_str_eq(csv.cell[4][7], "");
    ck_assert_str_eq(csv.cell[4][8], "");
    /* configs without a target; run 2 is the only ComDML run (no pairings, nobody
     * offloading) and the only one of a sweep */
    for (int r = 1; r <= 4; r++) {
        ck_assert_str_eq(csv.cell[r][csv_column(&csv, "target_accuracy")], "");
        ck_assert_str_eq(csv.cell[r][csv_column(&csv, "time_to_target_s")], "");
        ck_assert_str_eq(csv.cell[r][csv_column(&csv, "predicted_round_s")], "");
    }
    ck_assert_str_eq(csv.cell[2][csv_column(&csv, "offload_share")], "0");
    ck_assert_str_eq(csv.cell[1][csv_column(&csv, "offload_share")], "");
    ck_assert_str_eq(csv.cell[2][csv_column(&csv, "sweep")], "s");
    ck_assert_str_eq(csv.cell[2][csv_column(&csv, "point")], "run.method=comdml");
    ck_assert_str_eq(csv.cell[1][csv_column(&csv, "point")], "");
    expected_free(want, count);
    csv_free(&csv);
    test_output_free(&o);
}
END_TEST

START_TEST(test_rounds_csv_equals_sql)
{
    const char *path = make_fixture("rounds.db");
    for (int64_t run = 1; run <= 4; run++) {
        char id[16];
        snprintf(id, sizeof id, "%lld", (long long)run);
        TestOutput o = RUN_REPORT("report", "--csv", "--run", id, path);
        ck_assert_msg(o.status == 0, "%s", o.err);
        Csv csv;
        ck_assert_int_eq(csv_parse(o.out, &csv), 0);
        static const char header[] = "run_id,round,t_start,t_end,makespan,idle_s,bytes,extra\n";
        ck_assert_msg(strncmp(o.out, header, sizeof header - 1) == 0, "header: %s", o.out);
        sqlite3 *db = NULL;
        sqlite3_stmt *q = NULL;
        ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
        ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT round, t_start, t_end, idle_s, bytes, extra"
                                                " FROM rounds WHERE run_id = ?1 ORDER BY round",
                                            -1, &q, NULL), SQLITE_OK);
        sqlite3_bind_int64(q, 1, run);
        int r = 1;
        while (sqlite3_step(q) == SQLITE_ROW) {
            ck_assert_int_lt(r, csv.rows);
            char *const *row = csv.cell[r++];
            ck_assert_int_eq(strtoll(row[0], NULL, 10), run);
            ck_assert_int_eq(strtoll(row[1], NULL, 10), sqlite3_column_int64(q, 0));
            expect_number(row[2], 1, sqlite3_column_double(q, 1), "t_start");
            expect_number(row[3], 1, sqlite3_column_double(q, 2), "t_end");
            expect_number(row[4], 1, sqlite3_column_double(q, 2) - sqlite3_column_double(q, 1),
                          "makespan");
            expect_number(row[5], 1, sqlite3_column_double(q, 3), "idle_s");
            expect_number(row[6], 1, sqlite3_column_double(q, 4), "bytes");
            if (sqlite3_column_type(q, 5) == SQLITE_NULL) ck_assert_str_eq(row[7], "");
            else expect_number(row[7], 1, sqlite3_column_double(q, 5), "extra");
        }
        ck_assert_int_eq(r, csv.rows);
        sqlite3_finalize(q);
        sqlite3_close(db);
        csv_free(&csv);
        test_output_free(&o);
    }
}
END_TEST

/* Display width in code points (as report.c measures it). */
static size_t width_of(const char *line, size_t bytes)
{
    size_t width = 0;
    for (size_t i = 0; i < bytes; i++)
        if (((unsigned char)line[i] & 0xC0) != 0x80) width++;
    return width;
}

/* Byte offset in line at which display column `column` starts, or -1. */
static long byte_at_column(const char *line, size_t bytes, size_t column)
{
    size_t width = 0;
    for (size_t i = 0; i < bytes; i++) {
        if (((unsigned char)line[i] & 0xC0) == 0x80) continue;
        if (width == column) return (long)i;
        width++;
    }
    return -1;
}

START_TEST(test_text_table_is_aligned)
{
    const char *path = make_fixture("table.db");
    TestOutput o = RUN_REPORT("report", path, "--table", "runs");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_str_eq(o.err, "");
    /* Header + 4 runs; the newline inside run 3's name must not break a row. Every
     * column up to the left-aligned sweep and point columns ends where the header's
     * does, so the sweep column starts at the same display column on every line. */
    const char *header_sweep = strstr(o.out, "  sweep");
    ck_assert_ptr_nonnull(header_sweep);
    size_t sweep_column = width_of(o.out, (size_t)(header_sweep - o.out)) + 2;
    int lines = 0;
    for (const char *line = o.out; *line; lines++) {
        const char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        long at = byte_at_column(line, (size_t)(end - line), sweep_column);
        ck_assert_msg(at >= 2 && line[at - 1] == ' ' && line[at - 2] == ' ' && line[at] != ' ',
                      "line %d: sweep column not at %zu:\n%s", lines, sweep_column, o.out);
        line = end + 1;
    }
    ck_assert_int_eq(lines, 5);
    ck_assert(strncmp(o.out, "id  name", 8) == 0);
    static const char *const needles[] = {
        "virtual time (s)", "idle share", "final accuracy", "plain", "10.0%", "3.50 kB",
        "0.8125", "30.000", "18446744073709551615", "名前", " leading, and newline ",
        "12.500", "running", "offloading", "0.0%", "run.method=comdml",
    };
    for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
        ck_assert_msg(strstr(o.out, needles[i]) != NULL, "'%s' missing:\n%s", needles[i], o.out);
    /* no run has a target or pairings: those columns stay out of the text */
    ck_assert_ptr_null(strstr(o.out, "time to target"));
    ck_assert_ptr_null(strstr(o.out, "predicted round"));
    /* Run 4 has no idle share and no bytes; run 2 has no accuracy. */
    const char *run4 = strstr(o.out, "\n 4  ");
    ck_assert_ptr_nonnull(run4);
    ck_assert_ptr_nonnull(strstr(run4, " -  "));
    test_output_free(&o);

    /* Without --table the points table follows (a run belongs to a sweep). */
    o = RUN_REPORT("report", path);
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_ptr_nonnull(strstr(o.out, "\n\nPoints: mean and 95 % interval"));
    ck_assert_ptr_null(strstr(o.out, "Speedup over sync"));  /* no sync/other pair */
    test_output_free(&o);
}
END_TEST

START_TEST(test_run_table)
{
    const char *path = make_fixture("run.db");
    TestOutput o = RUN_REPORT("report", path, "--run=1");
    ck_assert_msg(o.status == 0, "%s", o.err);
    /* Summary header and row, a blank line, the per-round header and 3 rounds. */
    const char *blank = strstr(o.out, "\n\n");
    ck_assert_ptr_nonnull(blank);
    int before = 0, after = 0;
    for (const char *p = o.out; p <= blank; p++) before += *p == '\n';
    for (const char *p = blank + 2; *p; p++) after += *p == '\n';
    ck_assert_int_eq(before, 2);
    ck_assert_int_eq(after, 4);
    ck_assert_ptr_nonnull(strstr(blank, "round"));
    ck_assert_ptr_nonnull(strstr(blank, "makespan (s)"));
    ck_assert_ptr_nonnull(strstr(blank, "20.000"));
    ck_assert_ptr_nonnull(strstr(blank, "1.50 kB"));
    ck_assert_ptr_null(strstr(o.out, "He said"));  /* only run 1 */
    test_output_free(&o);
}
END_TEST

/* rounds.extra in the per-round table: titled with what it means in the run, as the
 * method registry says from the run's method and its [method] keys in run_params
 * (MethodExtra); left out of the text when NULL in every round; the CSV and JSON field
 * `extra` always, JSON's extra_meaning the same text. */
/* A run whose only [method] key is keys[0] = keys[1] (cli_extra_meaning's param). */
static const char *one_key(void *ctx, const char *key)
{
    const char *const *pair = ctx;
    return strcmp(key, pair[0]) == 0 ? pair[1] : NULL;
}

START_TEST(test_rounds_extra_titled_with_its_meaning)
{
    const char *path = make_fixture("extra.db");
    /* run 2 (comdml): a figure, the method's one meaning */
    const char *comdml = cli_extra_meaning("comdml", NULL, NULL);
    ck_assert_ptr_nonnull(comdml);
    char title[256];
    snprintf(title, sizeof title, "extra (%s)", comdml);
    TestOutput o = RUN_REPORT("report", path, "--run", "2");
    ck_assert_msg(o.status == 0, "%s", o.err);
    const char *rounds = strstr(o.out, "\n\n");
    ck_assert_ptr_nonnull(rounds);
    ck_assert_msg(strstr(rounds, title) != NULL, "no title '%s' in\n%s", title, o.out);
    ck_assert_ptr_nonnull(strstr(rounds, "0.5\n"));
    test_output_free(&o);
    o = RUN_REPORT("report", path, "--run", "2", "--json");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_ptr_nonnull(strstr(o.out, "\"extra\": 0.5}"));
    char json[300];
    snprintf(json, sizeof json, "\"extra_meaning\": \"%s\"}", comdml);
    ck_assert_msg(strstr(o.out, json) != NULL, "no %s in\n%s", json, o.out);
    test_output_free(&o);
    /* run 1 (sync): NULL in every round, so no column in the text; null meaning in JSON
     * (the fixture has no run_params: a sync run's figure depends on its keys) */
    o = RUN_REPORT("report", path, "--run", "1");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_ptr_null(strstr(o.out, "extra"));
    test_output_free(&o);
    o = RUN_REPORT("report", path, "--run", "1", "--json");
    ck_assert_ptr_nonnull(strstr(o.out, "\"extra\": null}"));
    ck_assert_ptr_nonnull(strstr(o.out, "\"extra_meaning\": null}"));
    test_output_free(&o);

    /* a sync run with a deadline (run_params says so) and one with prune = width: each
     * titled with its own meaning, the registry's for those keys */
    const char *with_keys = make_from_sql(
        "extra-keys.db",
        "INSERT INTO runs(id, name, method, seed, mode, status) VALUES"
        " (1, 'late', 'sync', 1, 'timing', 'done'), (2, 'pruned', 'sync', 1, 'timing', 'done');"
        "INSERT INTO run_params(run_id, section, key, value_text, unit, swept) VALUES"
        " (1, 'method', 'deadline', '50 ms', 's', 0), (1, 'method', 'prune', 'none', '', 0),"
        " (2, 'method', 'deadline', 'none', 's', 0), (2, 'method', 'prune', 'width', '', 0);"
        "INSERT INTO rounds(run_id, round, t_start, t_end, idle_s, bytes, extra) VALUES"
        " (1, 0, 0, 1, 0, 10, 3), (2, 0, 0, 1, 0, 10, 0.25);");
    const char *keys[][2] = {{"deadline", "50 ms"}, {"prune", "width"}};
    for (int run = 1; run <= 2; run++) {
        const char *meaning = cli_extra_meaning("sync", one_key, (void *)keys[run - 1]);
        ck_assert_ptr_nonnull(meaning);
        snprintf(title, sizeof title, "extra (%s)", meaning);
        char id[4];
        snprintf(id, sizeof id, "%d", run);
        o = RUN_REPORT("report", with_keys, "--run", id);
        ck_assert_msg(o.status == 0, "%s", o.err);
        ck_assert_msg(strstr(o.out, title) != NULL, "run %d: no title '%s' in\n%s", run, title, o.out);
        test_output_free(&o);
    }
    ck_assert_str_ne(cli_extra_meaning("sync", one_key, (void *)keys[0]),
                     cli_extra_meaning("sync", one_key, (void *)keys[1]));
}
END_TEST

/* Names written through the store (the real writer) come back from CSV byte for byte. */
START_TEST(test_awkward_names_survive_csv)
{
    static const char *const names[] = {
        "comma, inside", "say \"hi\"", "\"", ",", " padded ", "two  spaces",
        "tab\there", "crlf\r\nline", "ünïcødé 名前 🙂", "trailing\n", "",
    };
    enum { COUNT = sizeof names / sizeof names[0] };
    const char *path = test_folder_path("names.db");
    Store *store = NULL;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(store_open(path, &store, &diag), HS_OK);
    Sink sink = store_sink(store);
    for (int i = 0; i < COUNT; i++) {
        SinkRunInfo info = { .name = names[i], .method = names[(i + 1) % COUNT],
                             .seed = (uint64_t)i, .mode = "timing" };
        int64_t id;
        ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &id), HS_OK);
        SinkRunEnd end = { .status = SINK_STATUS_DONE, .wall_s = 0, .sim_time_s = 0.1 * i,
                           .final_accuracy = 1.0 / 3.0, .rounds_done = 0 };
        ck_assert_int_eq(sink.ops->run_end(sink.ctx, id, &end), HS_OK);
    }
    store_close(store);

    TestOutput o = RUN_REPORT("report", path, "--csv");
    ck_assert_msg(o.status == 0, "%s", o.err);
    Csv csv;
    ck_assert_msg(csv_parse(o.out, &csv) == 0, "not CSV:\n%s", o.out);
    ck_assert_int_eq(csv.rows, COUNT + 1);
    for (int i = 0; i < COUNT; i++) {
        ck_assert_int_eq(csv.columns[i + 1], 19);
        ck_assert_str_eq(csv.cell[i + 1][1], names[i]);
        ck_assert_str_eq(csv.cell[i + 1][2], names[(i + 1) % COUNT]);
        expect_number(csv.cell[i + 1][6], 1, 0.1 * i, "sim_time_s");
        expect_number(csv.cell[i + 1][9], 1, 1.0 / 3.0, "final_accuracy");
    }
    csv_free(&csv);
    test_output_free(&o);

    /* The table stays one line per run whatever the names hold. */
    o = RUN_REPORT("report", path);
    int lines = 0;
    for (const char *p = o.out; *p; p++) lines += *p == '\n';
    ck_assert_int_eq(lines, COUNT + 1);
    test_output_free(&o);
}
END_TEST

START_TEST(test_report_only_reads)
{
    const char *path = make_fixture("readonly.db");
    long size_before = 0, size_after = 0;
    char *before = read_path(path, &size_before);
    struct stat st_before, st_after;
    ck_assert_int_eq(stat(path, &st_before), 0);
    ck_assert_int_eq(chmod(path, 0444), 0);  /* honoured for non-root users */
    TestOutput o = RUN_REPORT("report", path, "--run", "2");
    ck_assert_msg(o.status == 0, "%s", o.err);
    test_output_free(&o);
    o = RUN_REPORT("report", "--csv", path);
    ck_assert_int_eq(o.status, 0);
    test_output_free(&o);
    ck_assert_int_eq(chmod(path, 0644), 0);
    char *after = read_path(path, &size_after);
    ck_assert_int_eq(stat(path, &st_after), 0);
    ck_assert_int_eq(size_after, size_before);
    ck_assert(memcmp(before, after, (size_t)size_before) == 0);
    ck_assert(st_after.st_mtime == st_before.st_mtime);
    free(before);
    free(after);
}
END_TEST

/* The report as an unprivileged user (tests/test_user.h): the folder must really be
 * unwritable to it, the report must exit 0 and print run 1's CSV row. No ck_assert here. */
typedef struct ReadOnlyFolder {
    const char *folder, *path;
} ReadOnlyFolder;

static int report_as_reader(void *arg)
{
    const ReadOnlyFolder *t = arg;
    if (access(t->path, R_OK) != 0) {
        fprintf(stderr, "uid %d cannot read %s: %s (is TMPDIR open to others?)\n", (int)geteuid(), t->path,
                strerror(errno));
        return 1;
    }
    if (access(t->folder, W_OK) == 0) {
        fprintf(stderr, "uid %d can write %s: the check would prove nothing\n", (int)geteuid(), t->folder);
        return 1;
    }
    FILE *out = tmpfile(), *err = tmpfile();
    if (out == NULL || err == NULL) {
        fprintf(stderr, "tmpfile: %s\n", strerror(errno));
        return 1;
    }
    char *argv[] = {"report", (char *)t->path, "--csv", NULL};
    int status = cli_report_stream(3, argv, out, err);
    char text[4096] = "", message[1024] = "";
    rewind(out);
    rewind(err);
    text[fread(text, 1, sizeof text - 1, out)] = '\0';
    message[fread(message, 1, sizeof message - 1, err)] = '\0';
    int ok = status == 0 && strstr(text, "\n1,plain,sync,1,done,3,30,") != NULL;
    if (!ok) fprintf(stderr, "report as uid %d: status %d, stderr '%s', stdout '%s'\n", (int)geteuid(), status,
                     message, text);
    return ok ? 0 : 1;
}

/* A closed WAL database in a folder the reader cannot write: SQLite cannot make the -shm
 * file a reader needs, and the report falls back to reading the file as immutable.
 * Root writes everywhere, so the report runs in a child that drops root to nobody. */
START_TEST(test_report_from_read_only_folder)
{
    const char *source = make_fixture("shared.db");
    char folder[600], path[700];
    snprintf(folder, sizeof folder, "%s/read only ?#%%", test_folder());  /* URI-hostile name */
    ck_assert_int_eq(mkdir(folder, 0755), 0);
    snprintf(path, sizeof path, "%s/shared.db", folder);
    long size = 0;
    char *bytes = read_path(source, &size);
    FILE *copy = fopen(path, "wb");
    ck_assert_ptr_nonnull(copy);
    ck_assert_uint_eq(fwrite(bytes, 1, (size_t)size, copy), (size_t)size);
    fclose(copy);
    free(bytes);
    /* nobody must reach the file: through the scratch folder (0700 from mkdtemp), to read */
    ck_assert_int_eq(chmod(test_folder(), 0711), 0);
    ck_assert_int_eq(chmod(path, 0644), 0);
    ck_assert_int_eq(chmod(folder, 0555), 0);
    ReadOnlyFolder t = {.folder = folder, .path = path};
    char why[200];
    int failed = test_user_run_unprivileged(report_as_reader, &t, why, sizeof why);
    ck_assert_int_eq(chmod(folder, 0755), 0);
    unlink(path);
    rmdir(folder);
    ck_assert_msg(!failed, "report from a read-only folder: %s", why);
}
END_TEST

START_TEST(test_report_while_a_run_writes)
{
    const char *path = test_folder_path("live.db");
    Store *store = NULL;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(store_open(path, &store, &diag), HS_OK);
    Sink sink = store_sink(store);
    SinkRunInfo info = { .name = "live", .method = "sync", .seed = 3, .mode = "timing" };
    int64_t id;
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &id), HS_OK);
    SinkRound round = { .round = 1, .t_start = 0, .t_end = 4, .idle_s = 1, .bytes = 8,
                        .extra = NAN, .energy_j = NAN };
    ck_assert_int_eq(sink.ops->round(sink.ctx, id, &round), HS_OK);  /* still buffered */
    TestOutput o = RUN_REPORT("report", path, "--csv");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_ptr_nonnull(strstr(o.out, "\n1,live,sync,3,running,0,,,,,,,,,,,,,\n"));
    test_output_free(&o);
    ck_assert_int_eq(store_flush(store), HS_OK);
    o = RUN_REPORT("report", path, "--csv");
    ck_assert_ptr_nonnull(strstr(o.out, "\n1,live,sync,3,running,1,4,,8,,,,,,,,,,\n"));
    test_output_free(&o);
    store_close(store);
}
END_TEST

START_TEST(test_print_run_api)
{
    const char *path = make_fixture("api.db");
    HsDiag diag;
    hs_diag_clear(&diag);
    FILE *out = tmpfile();
    ck_assert_int_eq(report_print_run(path, 1, 0, NULL, out, &diag), HS_OK);
    char *text = test_read_stream(out, NULL);
    int lines = 0;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    ck_assert_int_eq(lines, 2);  /* header and the run */
    ck_assert_ptr_nonnull(strstr(text, "plain"));
    free(text);
    fclose(out);

    out = tmpfile();
    ck_assert_int_eq(report_print_run(path, 42, 0, NULL, out, &diag), HS_E_INPUT);
    ck_assert_ptr_nonnull(strstr(diag.message, "no run with id 42"));
    ck_assert_ptr_nonnull(strstr(diag.message, path));
    text = test_read_stream(out, NULL);
    ck_assert_str_eq(text, "");  /* nothing printed on failure */
    free(text);
    fclose(out);

    /* An empty hetsim database: the header alone. */
    const char *empty = test_folder_path("empty.db");
    Store *store = NULL;
    ck_assert_int_eq(store_open(empty, &store, &diag), HS_OK);
    store_close(store);
    out = tmpfile();
    hs_diag_clear(&diag);
    ck_assert_int_eq(report_print_runs(empty, REPORT_CSV, out, &diag), HS_OK);
    text = test_read_stream(out, NULL);
    ck_assert_str_eq(text, "id,name,method,seed,status,rounds,sim_time_s,idle_share,bytes,"
                           "final_accuracy,target_accuracy,time_to_target_s,predicted_round_s,"
                           "actual_round_s,offload_share,sweep,point,energy_j,energy_to_target_j\n");
    free(text);
    fclose(out);
}
END_TEST

/* ---- point labels and heterogeneity levels ---- */

START_TEST(test_label_parse)
{
    Label label;
    ck_assert_int_eq(label_parse("run.method=sync agents.compute=lognormal(2 GFLOPS, 0.5) seed=2",
                                 &label), HS_OK);
    ck_assert_int_eq(label.count, 2);
    ck_assert_str_eq(label.pairs[0].key, "run.method");
    ck_assert_str_eq(label.pairs[0].value, "sync");
    ck_assert_str_eq(label.pairs[1].key, "agents.compute");
    ck_assert_str_eq(label.pairs[1].value, "lognormal(2 GFLOPS, 0.5)");
    ck_assert(label.has_seed);
    ck_assert_uint_eq(label.seed, 2);
    char *joined = label_join(&label, NULL);
    ck_assert_str_eq(joined, "run.method=sync agents.compute=lognormal(2 GFLOPS, 0.5)");
    free(joined);
    joined = label_join(&label, "run.method");
    ck_assert_str_eq(joined, "agents.compute=lognormal(2 GFLOPS, 0.5)");
    free(joined);
    ck_assert_str_eq(label_value(&label, "run.method"), "sync");
    ck_assert_ptr_null(label_value(&label, "seed"));
    label_free(&label);

    /* spaces inside an unparenthesised value; the largest seed */
    ck_assert_int_eq(label_parse("agents.stragglers.compute=200 MFLOPS data.partition=iid "
                                 "seed=18446744073709551615", &label), HS_OK);
    ck_assert_int_eq(label.count, 2);
    ck_assert_str_eq(label.pairs[0].value, "200 MFLOPS");
    ck_assert_str_eq(label.pairs[1].value, "iid");
    ck_assert_uint_eq(label.seed, UINT64_MAX);
    label_free(&label);

    /* a sweep of one run; text before any KEY=; a seed that is not a number stays a pair;
     * " k=" inside parentheses does not split */
    ck_assert_int_eq(label_parse("seed=1", &label), HS_OK);
    ck_assert_int_eq(label.count, 0);
    ck_assert(label.has_seed);
    label_free(&label);
    ck_assert_int_eq(label_parse("junk text run.name=a b x=f(a, k=b) seed=x", &label), HS_OK);
    ck_assert_int_eq(label.count, 4);
    ck_assert_str_eq(label.pairs[0].key, "");
    ck_assert_str_eq(label.pairs[0].value, "junk text");
    ck_assert_str_eq(label.pairs[1].value, "a b");
    ck_assert_str_eq(label.pairs[2].key, "x");
    ck_assert_str_eq(label.pairs[2].value, "f(a, k=b)");
    ck_assert_str_eq(label.pairs[3].key, "seed");
    ck_assert(!label.has_seed);
    label_free(&label);
    ck_assert_int_eq(label_parse("", &label), HS_OK);
    ck_assert_int_eq(label.count, 0);
    label_free(&label);

    double value = 0;
    ck_assert_int_eq(label_lognormal_sigma("lognormal(2 GFLOPS, 0.5)", &value), 0);
    ck_assert(value == 0.5);
    ck_assert_int_eq(label_lognormal_sigma("lognormal( 2000000000 ,1.5 )", &value), 0);
    ck_assert(value == 1.5);
    ck_assert_int_eq(label_lognormal_sigma("normal(1, 2)", &value), -1);
    ck_assert_int_eq(label_lognormal_sigma("lognormal(1)", &value), -1);
    ck_assert_int_eq(label_lognormal_sigma("lognormal(1, 2, 3)", &value), -1);
    ck_assert_int_eq(label_lognormal_sigma("lognormal(1, x)", &value), -1);
    ck_assert_int_eq(label_number("200 MFLOPS", &value), 0);
    ck_assert(value == 2e8);
    ck_assert_int_eq(label_number("10 ms", &value), 0);
    ck_assert(value == 0.01);
    ck_assert_int_eq(label_number("0.5", &value), 0);
    ck_assert(value == 0.5);
    ck_assert_int_eq(label_number("iid", &value), -1);
    ck_assert_int_eq(label_number("inf", &value), -1);
}
END_TEST

/* The runs of sweep in a RunSet, for checking points directly. */
static RunSet *load_set(const char *path)
{
    sqlite3 *db = NULL;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(dbread_open(path, &db, &diag) == HS_OK, "%s", diag.message);
    RunSet *set = NULL;
    ck_assert_msg(runset_load(db, path, NULL, &set, &diag) == HS_OK, "%s", diag.message);
    sqlite3_close(db);
    return set;
}

static const RunPoint *find_point(const RunSet *set, const char *label)
{
    for (int p = 0; p < set->point_count; p++)
        if (strcmp(set->points[p].label, label) == 0) return &set->points[p];
    ck_abort_msg("no point '%s'", label);
    return NULL;
}

START_TEST(test_heterogeneity_levels)
{
    const char *path = make_from_sql("levels.db",
        "INSERT INTO runs(id, name, method, seed, status, sweep, point) VALUES"
        /* a: the sigma of the lognormal; the partition tells lines apart */
        " (1, 'a', 'sync', 1, 'done', 'a', 'run.method=sync agents.compute=lognormal(2 GFLOPS, 0.2) data.partition=iid seed=1'),"
        " (2, 'a', 'sync', 1, 'done', 'a', 'run.method=sync agents.compute=lognormal(2 GFLOPS, 1.6) data.partition=iid seed=1'),"
        " (3, 'a', 'sync', 1, 'done', 'a', 'run.method=sync agents.compute=lognormal(2 GFLOPS, 0.2) data.partition=dirichlet seed=1'),"
        /* b: a number with a unit */
        " (4, 'b', 'sync', 1, 'done', 'b', 'agents.stragglers.compute=200 MFLOPS seed=1'),"
        " (5, 'b', 'sync', 1, 'done', 'b', 'agents.stragglers.compute=1 GFLOPS seed=1'),"
        /* c: text values: their index, in order of appearance */
        " (6, 'c', 'sync', 1, 'done', 'c', 'data.partition=shards seed=1'),"
        " (7, 'c', 'sync', 1, 'done', 'c', 'data.partition=iid seed=1'),"
        " (8, 'c', 'sync', 2, 'done', 'c', 'data.partition=shards seed=2'),"
        /* d: only the method varies */
        " (9, 'd', 'sync', 1, 'done', 'd', 'run.method=sync seed=1'),"
        " (10, 'd', 'comdml', 1, 'done', 'd', 'run.method=comdml seed=1');");
    RunSet *set = load_set(path);
    ck_assert_int_eq(set->group_count, 4);
    ck_assert_int_eq(set->point_count, 9);
    const RunPoint *p = find_point(set, "run.method=sync agents.compute=lognormal(2 GFLOPS, 1.6) data.partition=iid");
    const RunGroup *a = &set->groups[p->group];
    ck_assert_str_eq(a->sweep, "a");
    ck_assert_int_eq(a->axis_kind, RUNSET_AXIS_SIGMA);
    ck_assert_str_eq(a->axis_title, "sigma of agents.compute (lognormal)");
    ck_assert(p->level == 1.6);
    ck_assert_str_eq(set->series[p->series].name, "sync, data.partition=iid");
    p = find_point(set, "run.method=sync agents.compute=lognormal(2 GFLOPS, 0.2) data.partition=dirichlet");
    ck_assert(p->level == 0.2);
    ck_assert_str_eq(set->series[p->series].name, "sync, data.partition=dirichlet");

    p = find_point(set, "agents.stragglers.compute=1 GFLOPS");
    ck_assert_int_eq(set->groups[p->group].axis_kind, RUNSET_AXIS_VALUE);
    ck_assert_str_eq(set->groups[p->group].axis_title, "agents.stragglers.compute");
    ck_assert(p->level == 1e9);
    ck_assert_str_eq(p->method, "sync");  /* no run.method in the label: runs.method */
    ck_assert(find_point(set, "agents.stragglers.compute=200 MFLOPS")->level == 2e8);

    p = find_point(set, "data.partition=shards");
    const RunGroup *c = &set->groups[p->group];
    ck_assert_int_eq(c->axis_kind, RUNSET_AXIS_INDEX);
    ck_assert_int_eq(c->level_count, 2);
    ck_assert_str_eq(c->level_names[0], "shards");
    ck_assert_str_eq(c->level_names[1], "iid");
    ck_assert(p->level == 0);
    ck_assert_int_eq(p->run_count, 2);  /* seeds 1 and 2 */
    ck_assert(find_point(set, "data.partition=iid")->level == 1);

    p = find_point(set, "run.method=comdml");
    ck_assert_int_eq(set->groups[p->group].axis_kind, RUNSET_AXIS_NONE);
    ck_assert(p->level == 0);
    ck_assert_str_eq(p->scenario, "");
    runset_free(set);
}
END_TEST

/* ---- points and speedups over the sweep fixture ---- */

/* t(0.975, 2) in closed form: (2p - 1) / sqrt(2p(1 - p)) for 2 degrees of freedom. */
static double t_two(void)
{
    return 0.95 / sqrt(2 * 0.975 * 0.025);
}

static int csv_row(const Csv *csv, const char *column, const char *value)
{
    int c = csv_column(csv, column);
    for (int r = 1; r < csv->rows; r++)
        if (strcmp(csv->cell[r][c], value) == 0) return r;
    ck_abort_msg("no row with %s = '%s'", column, value);
    return -1;
}

static double csv_number(const Csv *csv, int row, const char *column)
{
    const char *field = csv->cell[row][csv_column(csv, column)];
    char *end = NULL;
    double value = strtod(field, &end);
    ck_assert_msg(end != field && *end == '\0', "%s: '%s' is not a number", column, field);
    return value;
}

static void expect_close(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want)), "%s: got %.17g, want %.17g",
                  what, got, want);
}

START_TEST(test_points_hand_computed)
{
    const char *path = make_database("points.db", SWEEP_SQL);
    TestOutput o = RUN_REPORT("report", path, "--table", "points", "--csv");
    ck_assert_msg(o.status == 0, "%s", o.err);
    Csv csv;
    ck_assert_msg(csv_parse(o.out, &csv) == 0, "not CSV:\n%s", o.out);
    ck_assert_int_eq(csv.rows, 5);
    ck_assert_int_eq(csv.columns[0], 27);
    double t = t_two();

    int r = csv_row(&csv, "point", "run.method=sync agents.compute=lognormal(2 GFLOPS, 0.5)");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "method")], "sync");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "seeds")], "3");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "not_done")], "1");  /* run 113 failed */
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "sweep")], "sw-fixture");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "level_axis")], "sigma of agents.compute (lognormal)");
    expect_close(csv_number(&csv, r, "level"), 0.5, "level");
    expect_close(csv_number(&csv, r, "sim_time_s_mean"), 12, "time mean");
    expect_close(csv_number(&csv, r, "sim_time_s_ci95"), t * 2 / sqrt(3), "time interval");
    expect_close(csv_number(&csv, r, "time_to_target_s_mean"), 5, "target mean");
    expect_close(csv_number(&csv, r, "time_to_target_s_ci95"), t * 1 / sqrt(3), "target interval");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "reached")], "3");
    expect_close(csv_number(&csv, r, "idle_share_mean"), 0.25, "idle");
    expect_close(csv_number(&csv, r, "idle_share_ci95"), 0, "idle interval");
    expect_close(csv_number(&csv, r, "makespan_s_mean"), 6, "makespan");
    expect_close(csv_number(&csv, r, "makespan_s_ci95"), t / sqrt(3), "makespan interval");
    expect_close(csv_number(&csv, r, "final_accuracy_mean"), 0.9, "accuracy");
    expect_close(csv_number(&csv, r, "bytes_mean"), 3000, "bytes");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "predicted_round_s_mean")], "");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "offload_share_mean")], "");

    /* sync at sigma 1: seed 3 never reached the target, so no mean time to target */
    r = csv_row(&csv, "point", "run.method=sync agents.compute=lognormal(2 GFLOPS, 1)");
    expect_close(csv_number(&csv, r, "sim_time_s_mean"), 24, "time mean");
    expect_close(csv_number(&csv, r, "sim_time_s_ci95"), t * 4 / sqrt(3), "time interval");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "time_to_target_s_mean")], "");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "reached")], "2");

    /* comdml at sigma 1: 8, 8, 11 (sd sqrt 3); its ComDML figures */
    r = csv_row(&csv, "point", "run.method=comdml agents.compute=lognormal(2 GFLOPS, 1)");
    expect_close(csv_number(&csv, r, "sim_time_s_mean"), 9, "time mean");
    expect_close(csv_number(&csv, r, "sim_time_s_ci95"), t, "time interval");
    expect_close(csv_number(&csv, r, "time_to_target_s_mean"), 14.0 / 3, "target mean");
    expect_close(csv_number(&csv, r, "idle_share_mean"), 0.125, "idle");
    expect_close(csv_number(&csv, r, "offload_share_mean"), 0.5, "offloading");
    expect_close(csv_number(&csv, r, "predicted_round_s_mean"), 0.45 * 9, "predicted");
    /* played out: (0.95 + 0.01 k + 0.005) T/2 per run, k = 0, 1, 2 */
    expect_close(csv_number(&csv, r, "actual_round_s_mean"),
                 ((0.955 * 8) + (0.965 * 8) + (0.975 * 11)) / 2 / 3, "actual");
    csv_free(&csv);
    test_output_free(&o);
}
END_TEST

/* Each point's mean virtual time and counts against SQL over the label without its seed. */
START_TEST(test_points_equal_sql)
{
    const char *path = make_database("points_sql.db", SWEEP_SQL);
    TestOutput o = RUN_REPORT("report", path, "--csv", "--table=points");
    ck_assert_msg(o.status == 0, "%s", o.err);
    Csv csv;
    ck_assert_int_eq(csv_parse(o.out, &csv), 0);
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db,
        "WITH pt AS (SELECT substr(point, 1, instr(point, ' seed=') - 1) AS p,"
        " sum(status = 'done') AS done, sum(status <> 'done') AS other,"
        " avg(CASE WHEN status = 'done' THEN sim_time_s END) AS mean, method, min(id) AS first"
        " FROM runs GROUP BY p),"
        " sc AS (SELECT *, CASE WHEN p LIKE 'run.method=%' THEN substr(p, instr(p, ' ') + 1) ELSE p END AS s"
        " FROM pt)"
        " SELECT p, done, other, mean, method FROM sc a ORDER BY"
        " (SELECT min(first) FROM sc b WHERE b.s = a.s), (SELECT min(first) FROM sc b WHERE b.method = a.method),"
        " first", -1, &q, NULL), SQLITE_OK);
    int rows = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        rows++;
        ck_assert_int_lt(rows, csv.rows);
        /* points by scenario, then method, each in order of first appearance */
        char *const *row = csv.cell[rows];
        ck_assert_str_eq(row[csv_column(&csv, "point")], (const char *)sqlite3_column_text(q, 0));
        ck_assert_int_eq(strtoll(row[csv_column(&csv, "seeds")], NULL, 10), sqlite3_column_int64(q, 1));
        ck_assert_int_eq(strtoll(row[csv_column(&csv, "not_done")], NULL, 10), sqlite3_column_int64(q, 2));
        ck_assert_str_eq(row[csv_column(&csv, "method")], (const char *)sqlite3_column_text(q, 4));
        expect_close(csv_number(&csv, rows, "sim_time_s_mean"), sqlite3_column_double(q, 3), "mean");
    }
    ck_assert_int_eq(rows + 1, csv.rows);
    sqlite3_finalize(q);
    sqlite3_close(db);
    csv_free(&csv);
    test_output_free(&o);
}
END_TEST

/* The new per-run figures against independent SQL. */
START_TEST(test_run_figures_equal_sql)
{
    const char *path = make_database("runs_sql.db", SWEEP_SQL);
    TestOutput o = RUN_REPORT("report", path, "--csv");
    ck_assert_msg(o.status == 0, "%s", o.err);
    Csv csv;
    ck_assert_int_eq(csv_parse(o.out, &csv), 0);
    ck_assert_int_eq(csv.rows, 14);
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db,
        "SELECT r.id,"
        " (SELECT min(t) FROM metrics m WHERE m.run_id = r.id AND m.agent IS NULL"
        "  AND m.test_accuracy >= 0.8),"
        " (SELECT avg(predicted_s) FROM pairings p WHERE p.run_id = r.id),"
        " (SELECT avg(actual_s) FROM pairings p WHERE p.run_id = r.id),"
        " CASE WHEN r.method = 'comdml' THEN (SELECT avg(CASE WHEN role = 'offloader' THEN 1.0"
        "  ELSE 0.0 END) FROM agent_rounds a WHERE a.run_id = r.id) END,"
        " substr(r.point, 1, instr(r.point, ' seed=') - 1)"
        " FROM runs r ORDER BY r.id", -1, &q, NULL), SQLITE_OK);
    int row = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        char *const *cells = csv.cell[++row];
        ck_assert_int_eq(strtoll(cells[csv_column(&csv, "id")], NULL, 10), sqlite3_column_int64(q, 0));
        expect_number(cells[csv_column(&csv, "target_accuracy")], 1, 0.8, "target");
        static const struct { int column; const char *name; } figures[] = {
            { 1, "time_to_target_s" }, { 2, "predicted_round_s" }, { 3, "actual_round_s" },
            { 4, "offload_share" },
        };
        for (size_t f = 0; f < sizeof figures / sizeof figures[0]; f++)
            expect_number(cells[csv_column(&csv, figures[f].name)],
                          sqlite3_column_type(q, figures[f].column) != SQLITE_NULL,
                          sqlite3_column_double(q, figures[f].column), figures[f].name);
        ck_assert_str_eq(cells[csv_column(&csv, "point")], (const char *)sqlite3_column_text(q, 5));
    }
    ck_assert_int_eq(row, 13);
    sqlite3_finalize(q);
    sqlite3_close(db);
    csv_free(&csv);
    test_output_free(&o);
}
END_TEST

START_TEST(test_speedup_rows)
{
    const char *path = make_database("speedup.db", SWEEP_SQL);
    TestOutput o = RUN_REPORT("report", path, "--table", "speedup", "--csv");
    ck_assert_msg(o.status == 0, "%s", o.err);
    static const char header[] = "method,level,pairs,basis,speedup_mean,speedup_ci95,time_s_mean,"
                                 "sync_time_s_mean,sweep,scenario\n";
    ck_assert_msg(strncmp(o.out, header, sizeof header - 1) == 0, "header: %s", o.out);
    Csv csv;
    ck_assert_int_eq(csv_parse(o.out, &csv), 0);
    ck_assert_int_eq(csv.rows, 3);  /* comdml at both levels; sync is the baseline */
    int r = csv_row(&csv, "scenario", "agents.compute=lognormal(2 GFLOPS, 0.5)");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "method")], "comdml");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "basis")], "time to target");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "pairs")], "3");
    expect_close(csv_number(&csv, r, "speedup_mean"), 2, "speedup");
    expect_close(csv_number(&csv, r, "speedup_ci95"), 0, "interval");
    expect_close(csv_number(&csv, r, "time_s_mean"), 2.5, "time");
    expect_close(csv_number(&csv, r, "sync_time_s_mean"), 5, "sync time");
    r = csv_row(&csv, "scenario", "agents.compute=lognormal(2 GFLOPS, 1)");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "basis")], "mixed");
    double ratios[3] = { 10.0 / 5, 12.0 / 4, 28.0 / 11 };
    double mean = (ratios[0] + ratios[1] + ratios[2]) / 3, square = 0;
    for (int i = 0; i < 3; i++) square += (ratios[i] - mean) * (ratios[i] - mean);
    expect_close(csv_number(&csv, r, "speedup_mean"), mean, "speedup");
    expect_close(csv_number(&csv, r, "speedup_ci95"), t_two() * sqrt(square / 2) / sqrt(3), "interval");
    expect_close(csv_number(&csv, r, "level"), 1, "level");
    csv_free(&csv);
    test_output_free(&o);

    /* the text report carries both tables after the runs */
    o = RUN_REPORT("report", path);
    ck_assert_msg(o.status == 0, "%s", o.err);
    const char *speedup = strstr(o.out, "\n\nSpeedup over sync");
    ck_assert_ptr_nonnull(speedup);
    ck_assert_ptr_nonnull(strstr(speedup, "time to target"));
    ck_assert_ptr_nonnull(strstr(speedup, "mixed"));
    ck_assert_ptr_nonnull(strstr(o.out, "\n\nPoints: mean"));
    test_output_free(&o);
}
END_TEST

START_TEST(test_sweep_filter)
{
    const char *path = make_database("filter.db", SWEEP_SQL);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    raw_exec(db, "INSERT INTO runs(id, name, method, seed, status, sweep, point) VALUES"
                 " (200, 'other', 'sync', 1, 'done', 'sw-other', 'run.method=sync seed=1')");
    sqlite3_close(db);
    TestOutput o = RUN_REPORT("report", path, "--csv", "--sweep", "sw-other");
    ck_assert_msg(o.status == 0, "%s", o.err);
    Csv csv;
    ck_assert_int_eq(csv_parse(o.out, &csv), 0);
    ck_assert_int_eq(csv.rows, 2);
    ck_assert_str_eq(csv.cell[1][0], "200");
    csv_free(&csv);
    test_output_free(&o);
    o = RUN_REPORT("report", path, "--csv", "--sweep=sw-fixture", "--table", "points");
    ck_assert_int_eq(csv_parse(o.out, &csv), 0);
    ck_assert_int_eq(csv.rows, 5);
    csv_free(&csv);
    test_output_free(&o);
}
END_TEST

/* Runs outside a sweep: same name and configuration but for method and seed make one
 * point per method, compared with sync by seed; another configuration is another point. */
START_TEST(test_runs_outside_sweeps)
{
    const char *path = make_from_sql("outside.db",
        "INSERT INTO runs(id, name, method, seed, status, config, sim_time_s) VALUES"
        " (1, 'q', 'sync', 1, 'done', '[run]\nname = q\nmethod = sync\nseed = 1\n\n[method]\n\n"
        "[agents]\ncount = 4\n', 10),"
        " (2, 'q', 'localsgd', 1, 'done', '[run]\nname = q\nmethod = localsgd\nseed = 1\n\n"
        "[method]\nlocal_steps = epoch\n\n[agents]\ncount = 4\n', 4),"
        " (3, 'q', 'localsgd', 2, 'done', '[run]\nname = q\nmethod = localsgd\nseed = 2\n\n"
        "[method]\nlocal_steps = epoch\n\n[agents]\ncount = 4\n', 5),"
        " (4, 'q', 'sync', 1, 'done', '[run]\nname = q\nmethod = sync\nseed = 1\n\n[method]\n\n"
        "[agents]\ncount = 8\n', 20);");
    TestOutput o = RUN_REPORT("report", path, "--csv", "--table", "points");
    ck_assert_msg(o.status == 0, "%s", o.err);
    Csv csv;
    ck_assert_int_eq(csv_parse(o.out, &csv), 0);
    ck_assert_int_eq(csv.rows, 4);
    int r = csv_row(&csv, "point", "run.method=localsgd run.name=q");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "seeds")], "2");
    expect_close(csv_number(&csv, r, "sim_time_s_mean"), 4.5, "mean");
    ck_assert_str_eq(csv.cell[r][csv_column(&csv, "sweep")], "");
    csv_row(&csv, "point", "run.method=sync run.name=q");
    csv_row(&csv, "point", "run.method=sync run.name=q config=#2");
    csv_free(&csv);
    test_output_free(&o);
    o = RUN_REPORT("report", path, "--csv", "--table", "speedup");
    ck_assert_int_eq(csv_parse(o.out, &csv), 0);
    ck_assert_int_eq(csv.rows, 2);
    ck_assert_str_eq(csv.cell[1][csv_column(&csv, "method")], "localsgd");
    ck_assert_str_eq(csv.cell[1][csv_column(&csv, "pairs")], "1");  /* sync has seed 1 only */
    ck_assert_str_eq(csv.cell[1][csv_column(&csv, "basis")], "total virtual time");
    expect_close(csv_number(&csv, 1, "speedup_mean"), 2.5, "speedup");
    ck_assert_str_eq(csv.cell[1][csv_column(&csv, "speedup_ci95")], "");  /* one pair */
    csv_free(&csv);
    test_output_free(&o);
}
END_TEST

/* ---- errors ---- */

START_TEST(test_file_errors)
{
    char message[600];
    const char *missing = test_folder_path("missing.db");
    snprintf(message, sizeof message, "hetsim: %s: cannot open", missing);
    test_output_expect_failure(RUN_REPORT("report", missing), 1, message);
    ck_assert_int_ne(access(missing, F_OK), 0);  /* read-only open creates nothing */

    const char *text = test_folder_path("text.db");
    FILE *file = fopen(text, "w");
    fputs("this is not a database, but it is long enough to have a header\n", file);
    fclose(file);
    snprintf(message, sizeof message, "hetsim: %s: not a SQLite database", text);
    test_output_expect_failure(RUN_REPORT("report", text), 2, message);

    const char *empty = test_folder_path("zero.db");
    fclose(fopen(empty, "w"));
    test_output_expect_failure(RUN_REPORT("report", empty), 2, "not a hetsim database");

    const char *future = test_folder_path("future.db");
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(future, &db), SQLITE_OK);
    raw_exec(db, "CREATE TABLE runs(id); PRAGMA user_version = 7;");
    sqlite3_close(db);
    test_output_expect_failure(RUN_REPORT("report", future), 2, "version 7");

    const char *other = test_folder_path("other.db");
    ck_assert_int_eq(sqlite3_open(other, &db), SQLITE_OK);
    raw_exec(db, "CREATE TABLE notes(x)");
    sqlite3_close(db);
    test_output_expect_failure(RUN_REPORT("report", other, "--csv"), 2, "not a hetsim database");

    const char *fixture = make_fixture("errors.db");
    test_output_expect_failure(RUN_REPORT("report", fixture, "--run", "99"), 2, "no run with id 99");
    test_output_expect_failure(RUN_REPORT("report", fixture, "--run", "99", "--csv"), 2, "no run with id 99");
    test_output_expect_failure(RUN_REPORT("report", fixture, "--sweep", "nope"), 2, "no run of sweep 'nope'");
}
END_TEST

START_TEST(test_usage_errors)
{
    test_output_expect_failure(RUN_REPORT("report"), 2, "missing FILE.db");
    test_output_expect_failure(RUN_REPORT("report", "--frobnicate", "x.db"), 2, "unknown option '--frobnicate'");
    test_output_expect_failure(RUN_REPORT("report", "x.db", "--run"), 2, "--run needs a run id");
    static const char *const bad_ids[] = { "abc", "0", "-3", "12x", "", "99999999999999999999" };
    for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++)
        test_output_expect_failure(RUN_REPORT("report", "x.db", "--run", bad_ids[i]), 2,
                       "--run needs a positive whole number");
    test_output_expect_failure(RUN_REPORT("report", "a.db", "b.db"), 2, "unexpected argument 'b.db'");
    test_output_expect_failure(RUN_REPORT("report", "x.db", "--table", "bogus"), 2,
                   "--table takes runs, points or speedup, not 'bogus'");
    test_output_expect_failure(RUN_REPORT("report", "x.db", "--table"), 2, "--table needs");
    test_output_expect_failure(RUN_REPORT("report", "x.db", "--sweep"), 2, "--sweep needs a sweep id");
    test_output_expect_failure(RUN_REPORT("report", "x.db", "--run", "1", "--sweep", "s"), 2,
                   "--run and --sweep exclude each other");
    test_output_expect_failure(RUN_REPORT("report", "x.db", "--run", "1", "--table", "points"), 2,
                   "--run and --table exclude each other");
    test_output_expect_failure(RUN_REPORT("report", "a.db"), 1, "hetsim: a.db: cannot open");

    TestOutput o = RUN_REPORT("report", "--help");
    ck_assert_int_eq(o.status, 0);
    static const char usage[] =
        "usage: hetsim report FILE.db [--run ID | --sweep ID] [--table runs|points|speedup] [--csv | --json]\n";
    ck_assert(strncmp(o.out, usage, sizeof usage - 1) == 0);
    ck_assert_str_eq(o.err, "");
    test_output_free(&o);
    o = RUN_REPORT("report", "x.db", "-h");
    ck_assert_int_eq(o.status, 0);
    test_output_free(&o);
}
END_TEST

START_TEST(test_output_write_error)
{
    const char *path = make_fixture("full.db");
    FILE *full = fopen("/dev/full", "w");
    if (full == NULL) return;  /* no /dev/full here: nothing to test */
    FILE *err = tmpfile();
    char *args[] = { "report", (char *)path, NULL };
    ck_assert_int_eq(cli_report_stream(2, args, full, err), 1);
    char *text = test_read_stream(err, NULL);
    ck_assert_msg(strstr(text, "hetsim: cannot write the report") != NULL, "%s", text);
    free(text);
    fclose(err);
    fclose(full);
}
END_TEST

static Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *normal = tcase_create("normal");
    tcase_add_unchecked_fixture(normal, scratch_setup, scratch_teardown);
    tcase_set_timeout(normal, 30);
    tcase_add_test(normal, test_csv_reader_itself);
    tcase_add_test(normal, test_summary_csv_equals_sql);
    tcase_add_test(normal, test_rounds_csv_equals_sql);
    tcase_add_test(normal, test_text_table_is_aligned);
    tcase_add_test(normal, test_run_table);
    tcase_add_test(normal, test_rounds_extra_titled_with_its_meaning);
    tcase_add_test(normal, test_awkward_names_survive_csv);
    tcase_add_test(normal, test_report_only_reads);
    tcase_add_test(normal, test_report_from_read_only_folder);
    tcase_add_test(normal, test_report_while_a_run_writes);
    tcase_add_test(normal, test_print_run_api);
    tcase_add_test(normal, test_label_parse);
    tcase_add_test(normal, test_heterogeneity_levels);
    tcase_add_test(normal, test_points_hand_computed);
    tcase_add_test(normal, test_points_equal_sql);
    tcase_add_test(normal, test_run_figures_equal_sql);
    tcase_add_test(normal, test_speedup_rows);
    tcase_add_test(normal, test_sweep_filter);
    tcase_add_test(normal, test_runs_outside_sweeps);
    suite_add_tcase(s, normal);

    TCase *errors = tcase_create("errors");
    tcase_add_unchecked_fixture(errors, scratch_setup, scratch_teardown);
    tcase_set_timeout(errors, 30);
    tcase_add_test(errors, test_file_errors);
    tcase_add_test(errors, test_usage_errors);
    tcase_add_test(errors, test_output_write_error);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(report_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
