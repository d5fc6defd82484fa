/* check_plot.c — `hetsim plot`: every figure is written as a valid PNG (8-byte signature)
 * and SVG (`<svg` ... `</svg>`) for small databases; names full of quotes, backslashes,
 * spaces, unicode and enhanced-text specials reach the images intact without breaking a
 * script; absent data skips a figure with a note; a missing gnuplot (PATH without it,
 * or a bad $HETSIM_GNUPLOT) gives the clear error naming the package; a failing gnuplot
 * is reported with its message; nothing but the images lands in the output folder. */
#include "analysis/gnuplot.h"
#include "analysis/plot.h"
#include "analysis/store.h"
#include "cli/cli_plot.h"
#include "tests/test_files.h"

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SWEEP_SQL "tests/fixtures/store/sweep_fixture.sql"

/* ---- scratch folder (made and removed by the parent process) ---- */

static char scratch[256];

/* Removes path and, if it is a folder, everything under it. */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(path);
        if (dir != NULL) {
            struct dirent *entry;
            while ((entry = readdir(dir)) != NULL) {
                if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
                char child[1024];
                snprintf(child, sizeof child, "%s/%s", path, entry->d_name);
                remove_tree(child);
            }
            closedir(dir);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void scratch_setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/check_plot.XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(scratch) == NULL) {
        perror("mkdtemp");
        abort();
    }
}

static void scratch_teardown(void)
{
    remove_tree(scratch);
}

static const char *scratch_path(const char *name)
{
    static char paths[8][512];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, sizeof paths[0], "%s/%s", scratch, name);
    return path;
}

static char *read_path(const char *path, long *size_out)
{
    char *text = test_read_file(path, size_out);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    return text;
}

static char *read_stream(FILE *file)
{
    fflush(file);
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, (size_t)size, file), (size_t)size);
    text[size] = '\0';
    return text;
}

/* ---- databases ---- */

static void raw_exec(sqlite3 *db, const char *sql)
{
    char *error = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &error);
    ck_assert_msg(rc == SQLITE_OK, "sql failed: %s", error ? error : "?");
}

static Store *open_store(const char *path)
{
    Store *store = NULL;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(store_open(path, &store, &diag) == HS_OK, "%s", diag.message);
    return store;
}

static const char *make_sweep_fixture(const char *name)
{
    const char *path = scratch_path(name);
    store_close(open_store(path));
    char *sql = read_path(SWEEP_SQL, NULL);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    raw_exec(db, sql);
    sqlite3_close(db);
    free(sql);
    return path;
}

/* One run through the real writer: 3 agents (agent 2 of group `group`), `rounds` rounds
 * of length t_round, the accounts, accuracy rows when train, and for comdml a pairing
 * per round (agent 2 offloads to agent 0 at split 2). */
static void add_run(Sink sink, const char *name, const char *method, uint64_t seed,
                    const char *sweep, const char *point, const char *group, double t_round,
                    int rounds, int train)
{
    SinkRunInfo info = { .name = name, .scenario = "odd.ini", .method = method, .seed = seed,
                         .mode = train ? "train" : "timing",
                         .config = "[run]\ntarget_accuracy = 0.6\n", .sweep = sweep,
                         .point = point };
    int64_t id = 0;
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &id), HS_OK);
    SinkAgent agents[3] = {
        { .agent = 0, .grp = "default", .compute = 2e9, .uplink = 1e6, .downlink = 1e6, .latency = 0.01, .samples = 100 },
        { .agent = 1, .grp = "default", .compute = 1e9, .uplink = 1e6, .downlink = 1e6, .latency = 0.01, .samples = 100 },
        { .agent = 2, .grp = group, .compute = 2e8, .uplink = 1e6, .downlink = 1e6, .latency = 0.01, .samples = 100 },
    };
    ck_assert_int_eq(sink.ops->agents(sink.ctx, id, agents, 3), HS_OK);
    int comdml = strcmp(method, "comdml") == 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = r * t_round, t1 = (r + 1) * t_round;
        SinkRound round = { .round = r, .t_start = t0, .t_end = t1, .idle_s = 0.5 * t_round, .bytes = 1000,
                            .extra = NAN };
        ck_assert_int_eq(sink.ops->round(sink.ctx, id, &round), HS_OK);
        SinkAgentRound rows[3] = {
            { .round = r, .agent = 0, .compute_s = 0.3 * t_round, .comm_s = 0.1 * t_round, .idle_s = 0.6 * t_round,
              .role = comdml ? SINK_ROLE_HELPER : SINK_ROLE_ALONE },
            { .round = r, .agent = 1, .compute_s = 0.5 * t_round, .comm_s = 0.1 * t_round, .idle_s = 0.3 * t_round,
              .offline_s = 0.1 * t_round, .role = SINK_ROLE_ALONE },
            { .round = r, .agent = 2, .compute_s = 0.9 * t_round, .comm_s = 0.1 * t_round,
              .role = comdml ? SINK_ROLE_OFFLOADER : SINK_ROLE_ALONE },
        };
        ck_assert_int_eq(sink.ops->agent_rounds(sink.ctx, id, rows, 3), HS_OK);
        if (comdml) {
            SinkPairing pairing = { .round = r, .slow = 2, .fast = 0, .split = 2, .predicted_s = 0.9 * t_round,
                                    .actual_s = 0.95 * t_round, .solver = "exact", .solve_ms = 0.01 };
            ck_assert_int_eq(sink.ops->pairing(sink.ctx, id, &pairing), HS_OK);
        }
        SinkMetric metric = { .t = t1, .round = r, .agent = -1, .train_loss = NAN, .test_loss = NAN,
                              .test_accuracy = train ? 0.3 + 0.1 * r : NAN, .bytes_sent = 1000.0 * (r + 1) };
        ck_assert_int_eq(sink.ops->metric(sink.ctx, id, &metric), HS_OK);
    }
    SinkRunEnd end = { .status = SINK_STATUS_DONE, .wall_s = 0.1, .sim_time_s = rounds * t_round,
                       .final_accuracy = train ? 0.3 + 0.1 * rounds : NAN, .rounds_done = rounds };
    ck_assert_int_eq(sink.ops->run_end(sink.ctx, id, &end), HS_OK);
}

/* The awkward names every text of a figure may carry. */
static const char odd_name[] = "it's \"q\" \\ back @x_y^z {b} &amp; 名前 ünï\nline";
static const char odd_shown[] = "it's \"q\" \\ back @x_y^z {b} &amp;amp; 名前 ünï line";
static const char odd_group[] = "gr'oup \\ @_^ 🙂";

/* A sweep over odd values: methods sync and comdml x two sigmas x two partitions (one of
 * them odd) x two seeds, train mode. */
static const char *make_odd_database(const char *name)
{
    const char *path = scratch_path(name);
    Store *store = open_store(path);
    Sink sink = store_sink(store);
    static const char *const methods[] = { "sync", "comdml" };
    static const char *const sigmas[] = { "0.5", "1.5" };
    static const char *const partitions[] = { "o'dd \"p\" \\ @x_y", "iid" };
    for (int m = 0; m < 2; m++)
        for (int s = 0; s < 2; s++)
            for (int d = 0; d < 2; d++)
                for (uint64_t seed = 1; seed <= 2; seed++) {
                    char point[512];
                    snprintf(point, sizeof point,
                             "run.method=%s agents.compute=lognormal(2 GFLOPS, %s) "
                             "data.partition=%s seed=%llu",
                             methods[m], sigmas[s], partitions[d], (unsigned long long)seed);
                    add_run(sink, odd_name, methods[m], seed, "sw-odd 'x' \"y\"", point,
                            odd_group, (m == 0 ? 4.0 : 2.0) * (1 + s) + (double)seed + 0.5 * d,
                            3, 1);
                }
    store_close(store);
    return path;
}

/* ---- running the command ---- */

typedef struct Output {
    int status;
    char *out, *err;
} Output;

static Output run_plot(int argc, const char *const *argv)
{
    Output result;
    FILE *out = tmpfile(), *err = tmpfile();
    ck_assert(out && err);
    char *args[24];
    ck_assert_int_lt(argc, 24);
    for (int i = 0; i < argc; i++) args[i] = (char *)argv[i];
    args[argc] = NULL;
    result.status = cli_plot_stream(argc, args, out, err);
    result.out = read_stream(out);
    result.err = read_stream(err);
    fclose(out);
    fclose(err);
    return result;
}

#define RUN_PLOT(...)                                                                    \
    run_plot((int)(sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(const char *)),     \
             (const char *const[]){ __VA_ARGS__ })

static void output_free(Output *o)
{
    free(o->out);
    free(o->err);
}

/* ---- checking images ---- */

static void expect_png(const char *path)
{
    long size = 0;
    char *bytes = read_path(path, &size);
    ck_assert_msg(size > 100, "%s: %ld bytes", path, size);
    ck_assert_msg(memcmp(bytes, "\x89PNG\r\n\x1a\n", 8) == 0, "%s: no PNG signature", path);
    free(bytes);
}

/* Returns the SVG text (free it). */
static char *expect_svg(const char *path)
{
    long size = 0;
    char *text = read_path(path, &size);
    ck_assert_msg(strstr(text, "<svg") != NULL, "%s: no <svg", path);
    long end = size;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' ' || text[end - 1] == '\r'))
        end--;
    ck_assert_msg(end >= 6 && memcmp(text + end - 6, "</svg>", 6) == 0, "%s: does not end with </svg>",
                  path);
    return text;
}

static int count_entries(const char *folder)
{
    DIR *dir = opendir(folder);
    if (dir == NULL) return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        count += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
    closedir(dir);
    return count;
}

static int count_lines(const char *text)
{
    int lines = 0;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    return lines;
}

static const char *const figure_names[] = {
    "straggler", "accuracy", "timeline", "pairing", "predicted", "speedup",
};
enum { FIGURES = 6 };

/* Every figure in both formats under folder, each path printed once. */
static void expect_all_figures(const char *folder, const char *printed)
{
    for (int f = 0; f < FIGURES; f++) {
        char path[1024], line[1100];
        snprintf(path, sizeof path, "%s/%s.png", folder, figure_names[f]);
        expect_png(path);
        snprintf(line, sizeof line, "%s\n", path);
        ck_assert_msg(strstr(printed, line) != NULL, "%s not printed:\n%s", path, printed);
        snprintf(path, sizeof path, "%s/%s.svg", folder, figure_names[f]);
        free(expect_svg(path));
        snprintf(line, sizeof line, "%s\n", path);
        ck_assert_msg(strstr(printed, line) != NULL, "%s not printed:\n%s", path, printed);
    }
    ck_assert_int_eq(count_lines(printed), 2 * FIGURES);
    ck_assert_int_eq(count_entries(folder), 2 * FIGURES);  /* the images and nothing else */
}

/* ---- tests ---- */

START_TEST(test_quote)
{
    FILE *out = tmpfile();
    gnuplot_quote(out, "it's a \\ back\nline\x01 @_^&{} 名前 \xff\xc3");
    gnuplot_quote(out, "");
    gnuplot_quote(out, NULL);
    char *text = read_stream(out);
    ck_assert_str_eq(text, "'it''s a \\ back line  @_^&{} 名前 ?" "?'''''");
    free(text);
    fclose(out);

    /* for raster output a character no font has becomes '?': U+0378 is unassigned */
    Gnuplot gnuplot;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(gnuplot_open(&gnuplot, NULL, &diag) == HS_OK, "%s", diag.message);
    out = tmpfile();
    gnuplot_quote_drawn(out, "a\xcd\xb8" "b 'c'", &gnuplot);
    gnuplot_quote_drawn(out, "a\xcd\xb8" "b", NULL);
    text = read_stream(out);
    if (gnuplot_knows_glyphs(&gnuplot))
        ck_assert_str_eq(text, "'a?b ''c''''a\xcd\xb8" "b'");
    else
        ck_assert_str_eq(text, "'a\xcd\xb8" "b ''c''''a\xcd\xb8" "b'");
    free(text);
    fclose(out);
    char *folder = strdup(gnuplot.folder);
    struct stat st;
    ck_assert_int_eq(stat(folder, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0700);  /* private */
    gnuplot_close(&gnuplot);
    ck_assert_int_ne(access(folder, F_OK), 0);  /* removed */
    free(folder);
    gnuplot_close(&gnuplot);  /* twice is harmless */
}
END_TEST

START_TEST(test_plot_sweep_fixture)
{
    const char *db = make_sweep_fixture("fixture.db");
    const char *folder = scratch_path("made/on/demand");  /* parents made too */
    Output o = RUN_PLOT("plot", db, "--out", folder);
    ck_assert_msg(o.status == 0, "status %d: %s", o.status, o.err);
    expect_all_figures(folder, o.out);
    ck_assert_msg(strstr(o.err, "gnuplot:") == NULL, "gnuplot warned:\n%s", o.err);
    ck_assert_msg(strstr(o.err, "skipped") == NULL, "%s", o.err);
    /* the heterogeneity axis is the lognormal sigma, one line per method */
    char path[1024];
    snprintf(path, sizeof path, "%s/straggler.svg", folder);
    char *svg = expect_svg(path);
    ck_assert_ptr_nonnull(strstr(svg, "sigma of agents.compute (lognormal)"));
    ck_assert_ptr_nonnull(strstr(svg, ">sync<"));
    ck_assert_ptr_nonnull(strstr(svg, ">comdml<"));
    free(svg);
    snprintf(path, sizeof path, "%s/speedup.svg", folder);
    svg = expect_svg(path);
    ck_assert_ptr_nonnull(strstr(svg, "time to target where both runs reached it"));
    free(svg);
    output_free(&o);

    /* once more into the same folder: files are replaced, not added */
    o = RUN_PLOT("plot", db, "--out", folder, "--sweep", "sw-fixture", "--run", "112");
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_all_figures(folder, o.out);
    output_free(&o);
}
END_TEST

START_TEST(test_plot_formats)
{
    const char *db = make_sweep_fixture("formats.db");
    const char *svg_only = scratch_path("svg");
    Output o = RUN_PLOT("plot", db, "--out", svg_only, "--format", "svg");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_int_eq(count_entries(svg_only), FIGURES);
    ck_assert_ptr_null(strstr(o.out, ".png"));
    output_free(&o);
    const char *png_only = scratch_path("png");
    o = RUN_PLOT("plot", db, "--out=" , "--format=png");
    ck_assert_int_eq(o.status, 2);  /* --out= with nothing */
    output_free(&o);
    o = RUN_PLOT("plot", db, "--out", png_only, "--format=png");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_int_eq(count_entries(png_only), FIGURES);
    ck_assert_ptr_null(strstr(o.out, ".svg"));
    output_free(&o);
}
END_TEST

START_TEST(test_odd_names)
{
    const char *db = make_odd_database("odd.db");
    /* the private folder and the output folder have awkward names too */
    const char *tmp = scratch_path("tmp 'x' \\ @ \"y\"");
    ck_assert_int_eq(mkdir(tmp, 0700), 0);
    setenv("TMPDIR", tmp, 1);
    const char *folder = scratch_path("out 'q' \\ @ ünï");
    Output o = RUN_PLOT("plot", db, "--out", folder);
    ck_assert_msg(o.status == 0, "status %d: %s", o.status, o.err);
    expect_all_figures(folder, o.out);
    ck_assert_msg(strstr(o.err, "gnuplot:") == NULL, "gnuplot warned:\n%s", o.err);
    ck_assert_int_eq(count_entries(tmp), 0);  /* the private folder is gone */
    char path[1024];
    snprintf(path, sizeof path, "%s/timeline.svg", folder);
    char *svg = expect_svg(path);
    ck_assert_msg(strstr(svg, odd_shown) != NULL, "run name not shown as written");
    ck_assert_msg(strstr(svg, "gr'oup \\ @_^ 🙂") != NULL, "group name not shown");
    free(svg);
    snprintf(path, sizeof path, "%s/straggler.svg", folder);
    svg = expect_svg(path);
    const char *series = strstr(svg, "data.partition");
    ck_assert_msg(strstr(svg, "sync, data.partition=o'dd \"p\" \\ @x_y") != NULL,
                  "series name not shown as written: %.200s", series ? series - 40 : "(none)");
    free(svg);
    output_free(&o);
}
END_TEST

START_TEST(test_missing_gnuplot)
{
    const char *db = make_sweep_fixture("missing.db");
    const char *empty = scratch_path("empty-bin");
    ck_assert_int_eq(mkdir(empty, 0700), 0);
    setenv("PATH", empty, 1);
    unsetenv(GNUPLOT_ENV);
    const char *folder = scratch_path("never");
    Output o = RUN_PLOT("plot", db, "--out", folder);
    ck_assert_int_eq(o.status, 1);
    ck_assert_msg(strstr(o.err, "gnuplot not found") != NULL, "%s", o.err);
    ck_assert_msg(strstr(o.err, "apt-get install gnuplot-nox") != NULL, "%s", o.err);
    ck_assert_str_eq(o.out, "");
    ck_assert_int_ne(access(folder, F_OK), 0);  /* nothing made */
    output_free(&o);

    /* a named program that is not there */
    setenv(GNUPLOT_ENV, "/nonexistent/gnuplot", 1);
    o = RUN_PLOT("plot", db, "--out", folder);
    ck_assert_int_eq(o.status, 1);
    ck_assert_msg(strstr(o.err, "'/nonexistent/gnuplot' (from HETSIM_GNUPLOT)") != NULL, "%s", o.err);
    ck_assert_msg(strstr(o.err, "apt-get install gnuplot-nox") != NULL, "%s", o.err);
    output_free(&o);

    /* the function parameter wins over the environment */
    PlotOptions options = { .db_path = db, .out_dir = folder, .gnuplot = "no-such-gnuplot" };
    HsDiag diag;
    hs_diag_clear(&diag);
    FILE *out = tmpfile(), *err = tmpfile();
    ck_assert_int_eq(plot_write(&options, out, err, &diag), HS_E_MISSING);
    ck_assert_ptr_nonnull(strstr(diag.message, "no 'no-such-gnuplot' on PATH"));
    fclose(out);
    fclose(err);
}
END_TEST

START_TEST(test_failing_gnuplot)
{
    const char *db = make_sweep_fixture("failing.db");
    const char *fake = scratch_path("fake-gnuplot");
    FILE *script = fopen(fake, "w");
    ck_assert_ptr_nonnull(script);
    fputs("#!/bin/sh\necho 'line 3: undefined variable: boom' >&2\nexit 1\n", script);
    fclose(script);
    ck_assert_int_eq(chmod(fake, 0700), 0);
    setenv(GNUPLOT_ENV, fake, 1);
    const char *folder = scratch_path("failed");
    Output o = RUN_PLOT("plot", db, "--out", folder);
    ck_assert_int_eq(o.status, 1);
    ck_assert_msg(strstr(o.err, "gnuplot failed (exit 1): line 3: undefined variable: boom") != NULL,
                  "%s", o.err);
    ck_assert_str_eq(o.out, "");
    ck_assert_int_eq(count_entries(folder), 0);
    output_free(&o);
}
END_TEST

START_TEST(test_absent_data_is_skipped)
{
    const char *db = scratch_path("timing.db");
    Store *store = open_store(db);
    add_run(store_sink(store), "timing", "localsgd", 1, NULL, NULL, "slow", 3, 2, 0);
    store_close(store);
    const char *folder = scratch_path("skips");
    Output o = RUN_PLOT("plot", db, "--out", folder, "--format", "png");
    ck_assert_msg(o.status == 0, "%s", o.err);
    static const char *const notes[] = {
        "skipped accuracy: no accuracy measured", "skipped pairing: no ComDML run",
        "skipped predicted: no ComDML run", "skipped speedup: no sync baseline",
    };
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
        ck_assert_msg(strstr(o.err, notes[i]) != NULL, "'%s' not in:\n%s", notes[i], o.err);
    ck_assert_int_eq(count_entries(folder), 2);  /* straggler and timeline */
    expect_png(scratch_path("skips/straggler.png"));
    expect_png(scratch_path("skips/timeline.png"));
    output_free(&o);

    /* rounds that do not exist skip the timeline; --run of a non-ComDML run names it */
    o = RUN_PLOT("plot", db, "--out", folder, "--format", "png", "--rounds", "5-9", "--run", "1");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_ptr_nonnull(strstr(o.err, "skipped timeline: run 1 has no rounds 5-9"));
    ck_assert_ptr_nonnull(strstr(o.err, "run 1 (localsgd) has no pairings"));
    output_free(&o);
    o = RUN_PLOT("plot", db, "--out", folder, "--format", "png", "--rounds", "1");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_ptr_nonnull(strstr(o.out, "timeline.png"));
    output_free(&o);

    /* an empty database: nothing to plot, not an error */
    const char *empty = scratch_path("empty.db");
    store_close(open_store(empty));
    o = RUN_PLOT("plot", empty, "--out", scratch_path("none"));
    ck_assert_int_eq(o.status, 0);
    ck_assert_ptr_nonnull(strstr(o.err, "nothing to plot"));
    ck_assert_str_eq(o.out, "");
    output_free(&o);
}
END_TEST

static void expect_failure(Output o, int status, const char *needle)
{
    ck_assert_msg(o.status == status, "status %d, want %d (%s; expected '%s')", o.status, status,
                  o.err, needle);
    ck_assert_msg(strstr(o.err, needle) != NULL, "'%s' not in: %s", needle, o.err);
    ck_assert_msg(o.out[0] == '\0', "stdout not empty: %s", o.out);
    output_free(&o);
}

START_TEST(test_errors)
{
    expect_failure(RUN_PLOT("plot"), 2, "missing FILE.db");
    expect_failure(RUN_PLOT("plot", "x.db", "--format", "jpg"), 2, "--format takes png, svg");
    expect_failure(RUN_PLOT("plot", "x.db", "--format", "png,"), 2, "--format takes png, svg");
    expect_failure(RUN_PLOT("plot", "x.db", "--rounds", "3-1"), 2, "--rounds needs A or A-B");
    expect_failure(RUN_PLOT("plot", "x.db", "--rounds", "x"), 2, "--rounds needs A or A-B");
    expect_failure(RUN_PLOT("plot", "x.db", "--run", "0"), 2, "--run needs a positive whole number");
    expect_failure(RUN_PLOT("plot", "x.db", "--out"), 2, "--out needs a folder");
    expect_failure(RUN_PLOT("plot", "x.db", "--bogus"), 2, "unknown option '--bogus'");
    expect_failure(RUN_PLOT("plot", "a.db", "b.db"), 2, "unexpected argument 'b.db'");
    const char *absent = scratch_path("absent.db");
    expect_failure(RUN_PLOT("plot", absent), 1, "cannot open database");
    const char *text = scratch_path("text.db");
    FILE *file = fopen(text, "w");
    fputs("this is not a database, but it is long enough to have a header\n", file);
    fclose(file);
    expect_failure(RUN_PLOT("plot", text), 2, "not a SQLite database");
    const char *db = make_sweep_fixture("errors.db");
    expect_failure(RUN_PLOT("plot", db, "--run", "999"), 2, "no run with id 999");
    expect_failure(RUN_PLOT("plot", db, "--sweep", "sw-nope"), 2, "no run of sweep 'sw-nope'");
    const char *file_as_folder = scratch_path("a-file");
    fclose(fopen(file_as_folder, "w"));
    expect_failure(RUN_PLOT("plot", db, "--out", file_as_folder), 1, "output folder");

    Output o = RUN_PLOT("plot", "--help");
    ck_assert_int_eq(o.status, 0);
    ck_assert(strncmp(o.out, "usage: hetsim plot FILE.db", 26) == 0);
    ck_assert_ptr_nonnull(strstr(o.out, "gnuplot-nox"));
    output_free(&o);
}
END_TEST

static Suite *plot_suite(void)
{
    Suite *s = suite_create("plot");
    TCase *normal = tcase_create("normal");
    tcase_add_unchecked_fixture(normal, scratch_setup, scratch_teardown);
    tcase_set_timeout(normal, 120);
    tcase_add_test(normal, test_quote);
    tcase_add_test(normal, test_plot_sweep_fixture);
    tcase_add_test(normal, test_plot_formats);
    tcase_add_test(normal, test_odd_names);
    tcase_add_test(normal, test_absent_data_is_skipped);
    suite_add_tcase(s, normal);

    TCase *errors = tcase_create("errors");
    tcase_add_unchecked_fixture(errors, scratch_setup, scratch_teardown);
    tcase_set_timeout(errors, 60);
    tcase_add_test(errors, test_missing_gnuplot);
    tcase_add_test(errors, test_failing_gnuplot);
    tcase_add_test(errors, test_errors);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(plot_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
