/* check_plot.c — `hetsim plot`: every figure is written as a valid PNG (8-byte signature),
 * SVG (`<svg` ... `</svg>`) and PDF (`%PDF-` ... `%%EOF`) for small databases; the data
 * behind each figure (the .dat files --keep writes) holds the database's numbers at the
 * true levels (the hand-computed figures of tests/fixtures/store/sweep_fixture.sql),
 * byte for byte the same on a second run; identical series and panels are merged and
 * listed; every skip rule fires with its note; titles carry names, never sweep ids;
 * names full of quotes, backslashes, spaces, unicode and enhanced-text specials reach
 * the images intact; a missing or failing gnuplot gives a clear error; every bad option
 * exits 2. (tests/cli/plot.sh checks the files with pdfinfo, xmllint and a re-render by
 * plain gnuplot.) */
#include "analysis/gnuplot.h"
#include "analysis/plot.h"
#include "analysis/store.h"
#include "cli/cli_plot.h"
#include "tests/test_command.h"
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

static void scratch_setup(void)
{
    test_folder_make("check_plot");
}

static void scratch_teardown(void)
{
    test_folder_remove();
}

static char *read_path(const char *path, long *size_out)
{
    char *text = test_read_file(path, size_out);
    ck_assert_msg(text != NULL, "cannot read %s", path);
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
    const char *path = test_folder_path(name);
    store_close(open_store(path));
    char *sql = read_path(SWEEP_SQL, NULL);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    raw_exec(db, sql);
    sqlite3_close(db);
    free(sql);
    return path;
}

/* What add_run writes. */
typedef struct RunSpec {
    const char *name, *method, *sweep, *point, *group;
    uint64_t seed;
    double t_round;      /* every round's length */
    int rounds;
    int train;           /* accuracy rows (0.3 + 0.1 r at each round's end) */
    int no_target;       /* a config without target_accuracy */
    int no_accounts;     /* no agent_rounds rows */
    int exact;           /* pairings play out exactly as predicted */
} RunSpec;

/* One run through the real writer: 3 agents (agent 2 of spec->group), the rounds, the
 * accounts (agent 0: 0.3 T compute, 0.1 T send, 0.6 T wait; agent 1: 0.5, 0.1, 0.3 and
 * 0.1 T offline; agent 2: 0.9 T compute, 0.1 T send), accuracy rows when train, and for
 * comdml a pairing per round (agent 2 offloads to agent 0 at split 2, predicted 0.9 T,
 * played out (0.95 + 0.01 r) T unless exact). */
static int64_t add_run(Sink sink, const RunSpec *spec)
{
    SinkRunInfo info = { .name = spec->name, .scenario = "odd.ini", .method = spec->method,
                         .seed = spec->seed, .mode = spec->train ? "train" : "timing",
                         .config = spec->no_target ? "[run]\nrounds = 3\n"
                                                   : "[run]\ntarget_accuracy = 0.6\n",
                         .sweep = spec->sweep, .point = spec->point };
    int64_t id = 0;
    double t_round = spec->t_round;
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &id), HS_OK);
    SinkAgent agents[3] = {
        { .agent = 0, .grp = "default", .compute = 2e9, .uplink = 1e6, .downlink = 1e6, .latency = 0.01,
          .samples = 100 },
        { .agent = 1, .grp = "default", .compute = 1e9, .uplink = 1e6, .downlink = 1e6, .latency = 0.01,
          .samples = 100 },
        { .agent = 2, .grp = spec->group ? spec->group : "slow", .compute = 2e8, .uplink = 1e6, .downlink = 1e6,
          .latency = 0.01, .samples = 100 },
    };
    ck_assert_int_eq(sink.ops->agents(sink.ctx, id, agents, 3), HS_OK);
    int comdml = strcmp(spec->method, "comdml") == 0;
    for (int r = 0; r < spec->rounds; r++) {
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
        if (!spec->no_accounts) ck_assert_int_eq(sink.ops->agent_rounds(sink.ctx, id, rows, 3), HS_OK);
        if (comdml) {
            SinkPairing pairing = { .round = r, .slow = 2, .fast = 0, .split = 2, .predicted_s = 0.9 * t_round,
                                    .actual_s = (spec->exact ? 0.9 : 0.95 + 0.01 * r) * t_round,
                                    .solver = "exact", .solve_ms = 0.01 };
            ck_assert_int_eq(sink.ops->pairing(sink.ctx, id, &pairing), HS_OK);
        }
        SinkMetric metric = { .t = t1, .round = r, .agent = -1, .train_loss = NAN, .test_loss = NAN,
                              .test_accuracy = spec->train ? 0.3 + 0.1 * r : NAN, .bytes_sent = 1000.0 * (r + 1) };
        ck_assert_int_eq(sink.ops->metric(sink.ctx, id, &metric), HS_OK);
    }
    SinkRunEnd end = { .status = SINK_STATUS_DONE, .wall_s = 0.1, .sim_time_s = spec->rounds * t_round,
                       .final_accuracy = spec->train ? 0.3 + 0.1 * spec->rounds : NAN, .rounds_done = spec->rounds };
    ck_assert_int_eq(sink.ops->run_end(sink.ctx, id, &end), HS_OK);
    return id;
}

/* The awkward names every text of a figure may carry. */
static const char odd_name[] = "it's \"q\" \\ back @x_y^z {b} &amp; 名前 ünï\nline";
static const char odd_shown[] = "it's \"q\" \\ back @x_y^z {b} &amp;amp; 名前 ünï line";
static const char odd_group[] = "gr'oup \\ @_^ 🙂";

/* A sweep over odd values: methods sync and comdml x two sigmas x two partitions (one of
 * them odd) x two seeds, train mode. */
static const char *make_odd_database(const char *name)
{
    const char *path = test_folder_path(name);
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
                    RunSpec spec = { .name = odd_name, .method = methods[m], .seed = seed,
                                     .sweep = "sw-odd 'x' \"y\"", .point = point, .group = odd_group,
                                     .t_round = (m == 0 ? 4.0 : 2.0) * (1 + s) + (double)seed + 0.5 * d,
                                     .rounds = 4, .train = 1 };
                    add_run(sink, &spec);
                }
    store_close(store);
    return path;
}

/* ---- running the command ---- */

#define RUN_PLOT(...) TEST_COMMAND(cli_plot_stream, __VA_ARGS__)

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
    "time-to-target", "straggler", "speedup", "accuracy", "idle", "pairing", "predicted", "timeline",
};
enum { FIGURES = 8 };

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

static void expect_pdf(const char *path)
{
    long size = 0;
    char *bytes = read_path(path, &size);
    ck_assert_msg(size > 200 && memcmp(bytes, "%PDF-", 5) == 0, "%s: no PDF header", path);
    long end = size;
    while (end > 0 && (bytes[end - 1] == '\n' || bytes[end - 1] == '\r')) end--;
    ck_assert_msg(end >= 5 && memcmp(bytes + end - 5, "%%EOF", 5) == 0, "%s: no %%%%EOF", path);
    free(bytes);
}

/* ---- the data files ---- */

typedef struct DatBlock {
    int found;
    int rows, columns;
    double value[64][8];
    char comment[512];
} DatBlock;

/* The block of folder/NAME.dat whose first comment line holds every one of needles
 * (NULL-terminated); found = 0 when none does. */
static DatBlock dat_block(const char *folder, const char *name, const char *const *needles)
{
    DatBlock block;
    memset(&block, 0, sizeof block);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.dat", folder, name);
    char *text = read_path(path, NULL);
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        if (end == NULL) end = line + strlen(line);
        if (strncmp(line, "# block ", 8) == 0) {
            if (block.found) break;  /* the next block */
            size_t length = (size_t)(end - line);
            char comment[512];
            snprintf(comment, sizeof comment, "%.*s", (int)(length < 511 ? length : 511), line);
            int all = 1;
            for (const char *const *n = needles; *n && all; n++) all = strstr(comment, *n) != NULL;
            if (all) {
                block.found = 1;
                snprintf(block.comment, sizeof block.comment, "%s", comment);
            }
        } else if (block.found && line[0] != '#' && end > line && block.rows < 64) {
            char *p = line;
            int c = 0;
            while (p < end && c < 8) {
                char *stop;
                double v = strtod(p, &stop);
                if (stop == p) break;
                block.value[block.rows][c++] = v;
                p = stop;
            }
            block.columns = c;
            block.rows++;
        } else if (block.found && end == line && block.rows > 0) {
            break;  /* the blank line after the block */
        }
        line = *end ? end + 1 : end;
    }
    free(text);
    return block;
}

#define DAT_BLOCK(folder, name, ...) dat_block(folder, name, (const char *const[]){ __VA_ARGS__, NULL })

static void expect_close(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= 1e-9 * fmax(1, fabs(want)), "%s: %.17g, want %.17g", what, got, want);
}

/* t(0.975, 2) * sd / sqrt(3), the fixture's 95 % half-width for three seeds. */
static double half_width3(double sd)
{
    double t = 4.302652729696142;
    return t * sd / sqrt(3.0);
}

/* ---- tests ---- */

START_TEST(test_quote)
{
    FILE *out = tmpfile();
    gnuplot_quote(out, "it's a \\ back\nline\x01 @_^&{} 名前 \xff\xc3");
    gnuplot_quote(out, "");
    gnuplot_quote(out, NULL);
    char *text = test_read_stream(out, NULL);
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
    text = test_read_stream(out, NULL);
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
    const char *folder = test_folder_path("made/on/demand");  /* parents made too */
    TestOutput o = RUN_PLOT("plot", db, "--out", folder);
    ck_assert_msg(o.status == 0, "status %d: %s", o.status, o.err);
    expect_all_figures(folder, o.out);
    ck_assert_msg(strstr(o.err, "gnuplot:") == NULL, "gnuplot warned:\n%s", o.err);
    ck_assert_msg(strstr(o.err, "skipped") == NULL, "%s", o.err);
    /* the heterogeneity axis in words, one line per method, names and never the sweep id */
    for (int f = 0; f < FIGURES; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.svg", folder, figure_names[f]);
        char *svg = expect_svg(path);
        ck_assert_msg(strstr(svg, "sw-fixture") == NULL, "%s names the sweep id", path);
        ck_assert_msg(strstr(svg, "fixture") != NULL || f >= 5, "%s: no run name", path);
        if (f < 3) {
            ck_assert_msg(strstr(svg, "compute σ (lognormal)") != NULL, "%s: no axis in words", path);
            ck_assert_ptr_nonnull(strstr(svg, ">comdml<"));
        }
        free(svg);
    }
    test_output_free(&o);

    /* once more into the same folder: files are replaced, not added */
    o = RUN_PLOT("plot", db, "--out", folder, "--sweep", "sw-fixture", "--run", "112");
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_all_figures(folder, o.out);
    test_output_free(&o);
}
END_TEST

/* The numbers behind the figures are the database's (sweep_fixture.sql's hand-computed
 * figures), at the true levels 0.5 and 1, and the same bytes on a second run. */
START_TEST(test_data_files)
{
    const char *db = make_sweep_fixture("data.db");
    const char *folder = test_folder_path("data");
    TestOutput o = RUN_PLOT("plot", db, "--out", folder, "--format", "png", "--keep");
    ck_assert_msg(o.status == 0, "%s", o.err);
    for (int f = 0; f < FIGURES; f++) {
        char line[1100];
        snprintf(line, sizeof line, "%s/%s.gp\n", folder, figure_names[f]);
        ck_assert_msg(strstr(o.out, line) != NULL, "%s not printed", line);
        snprintf(line, sizeof line, "%s/%s.dat\n", folder, figure_names[f]);
        ck_assert_msg(strstr(o.out, line) != NULL, "%s not printed", line);
    }
    ck_assert_int_eq(count_entries(folder), 3 * FIGURES);
    test_output_free(&o);

    /* straggler: round time = sim_time / 2, idle share 0.25 (sync) and 0.125 (comdml) */
    static const struct { const char *series; double level, makespan, sd, idle; } straggler[] = {
        { "series: sync", 0.5, 6, 1, 0.25 },   { "series: sync", 1, 12, 2, 0.25 },
        { "series: comdml", 0.5, 3, 0.5, 0.125 }, { "series: comdml", 1, 4.5, 0.8660254037844386, 0.125 },
    };
    for (size_t i = 0; i < sizeof straggler / sizeof straggler[0]; i++) {
        DatBlock round_time = DAT_BLOCK(folder, "straggler", straggler[i].series, "round time");
        DatBlock idle = DAT_BLOCK(folder, "straggler", straggler[i].series, "idle share");
        ck_assert_msg(round_time.found && idle.found, "no block for %s", straggler[i].series);
        ck_assert_int_eq(round_time.rows, 2);
        ck_assert_int_eq(round_time.columns, 5);  /* level mean low high n */
        int r = straggler[i].level == 0.5 ? 0 : 1;
        /* x is the level itself: no sideways shift */
        ck_assert_msg(round_time.value[r][0] == straggler[i].level, "level %.17g", round_time.value[r][0]);
        expect_close(round_time.value[r][1], straggler[i].makespan, "mean round time");
        /* the band is clipped at 0: a round takes no negative time */
        expect_close(round_time.value[r][2], fmax(0, straggler[i].makespan - half_width3(straggler[i].sd)),
                     "low end");
        expect_close(round_time.value[r][3], straggler[i].makespan + half_width3(straggler[i].sd), "high end");
        ck_assert_int_eq((int)round_time.value[r][4], 3);
        expect_close(idle.value[r][1], straggler[i].idle, "idle share");
        ck_assert(idle.value[r][0] == straggler[i].level);
    }
    /* time to target: sync 1 has seeds 1 and 2 only (seed 3 never reached it) */
    DatBlock sync = DAT_BLOCK(folder, "time-to-target", "series: sync");
    DatBlock comdml = DAT_BLOCK(folder, "time-to-target", "series: comdml");
    ck_assert(sync.found && comdml.found && sync.rows == 2 && comdml.rows == 2);
    expect_close(sync.value[0][1], 5, "sync 0.5");
    expect_close(sync.value[1][1], 11, "sync 1");
    ck_assert_int_eq((int)sync.value[1][4], 2);
    expect_close(comdml.value[0][1], 2.5, "comdml 0.5");
    expect_close(comdml.value[1][1], 14.0 / 3, "comdml 1");
    /* speedup over sync: 2 2 2 (no spread) and mixed (2 + 3 + 28/11) / 3 */
    DatBlock speedup = DAT_BLOCK(folder, "speedup", "series: comdml");
    ck_assert(speedup.found && speedup.rows == 2);
    expect_close(speedup.value[0][1], 2, "speedup 0.5");
    expect_close(speedup.value[0][2], 2, "no interval");
    expect_close(speedup.value[1][1], (5 + 28.0 / 11) / 3, "speedup 1");
    ck_assert_msg(!DAT_BLOCK(folder, "speedup", "series: sync").found, "sync against itself");
    /* predicted: the pairings rows as they are */
    DatBlock predicted = DAT_BLOCK(folder, "predicted", "pairs of run");
    ck_assert(predicted.found && predicted.rows == 2);
    ck_assert_msg(predicted.value[0][0] < predicted.value[0][1], "played out slower than predicted");
    /* timeline: compute starts at the round's start */
    DatBlock compute = DAT_BLOCK(folder, "timeline", "compute");
    ck_assert_msg(compute.found && compute.rows > 0, "no compute bars");

    /* the same database gives the same bytes */
    const char *again = test_folder_path("data-again");
    o = RUN_PLOT("plot", db, "--out", again, "--format", "svg", "--keep");
    ck_assert_msg(o.status == 0, "%s", o.err);
    test_output_free(&o);
    for (int f = 0; f < FIGURES; f++) {
        char a[1024], b[1024];
        snprintf(a, sizeof a, "%s/%s.dat", folder, figure_names[f]);
        snprintf(b, sizeof b, "%s/%s.dat", again, figure_names[f]);
        long size_a, size_b;
        char *text_a = read_path(a, &size_a), *text_b = read_path(b, &size_b);
        ck_assert_msg(size_a == size_b && memcmp(text_a, text_b, (size_t)size_a) == 0, "%s differs", a);
        free(text_a);
        free(text_b);
    }
}
END_TEST

/* A timing sweep where localsgd and qsr play out alike and the partition changes
 * nothing: one line "localsgd = qsr", one panel "partition = iid = dirichlet". */
START_TEST(test_merged_series)
{
    const char *db = test_folder_path("merged.db");
    Store *store = open_store(db);
    Sink sink = store_sink(store);
    static const char *const methods[] = { "sync", "localsgd", "qsr" };
    static const char *const partitions[] = { "iid", "dirichlet" };
    for (int m = 0; m < 3; m++)
        for (int s = 0; s < 2; s++)
            for (int d = 0; d < 2; d++) {
                char point[256];
                snprintf(point, sizeof point, "run.method=%s agents.compute=lognormal(1 GFLOPS, %s) "
                         "data.partition=%s seed=1", methods[m], s ? "1.5" : "0", partitions[d]);
                RunSpec spec = { .name = "merge-demo", .method = methods[m], .seed = 1,
                                 .sweep = "sw-merge", .point = point,
                                 .t_round = (m == 0 ? 4.0 : 2.0) * (1 + s), .rounds = 2 };
                add_run(sink, &spec);
            }
    store_close(store);
    const char *folder = test_folder_path("merged");
    TestOutput o = RUN_PLOT("plot", db, "--out", folder, "--format", "svg", "--keep");
    ck_assert_msg(o.status == 0, "%s", o.err);
    DatBlock merged = DAT_BLOCK(folder, "straggler", "series: localsgd = qsr", "round time");
    ck_assert_msg(merged.found, "no merged series");
    ck_assert_msg(strstr(merged.comment, "panel: partition = iid = dirichlet") != NULL, "%s", merged.comment);
    ck_assert_int_eq(merged.rows, 2);
    ck_assert(merged.value[0][0] == 0 && merged.value[1][0] == 1.5);  /* the sigmas, unshifted */
    expect_close(merged.value[1][1], 4, "localsgd round time at sigma 1.5");
    ck_assert_msg(!DAT_BLOCK(folder, "straggler", "series: qsr").found, "qsr drawn twice");
    ck_assert_msg(!DAT_BLOCK(folder, "straggler", "partition = dirichlet |").found, "a panel drawn twice");
    char path[1024];
    snprintf(path, sizeof path, "%s/straggler.svg", folder);
    char *svg = expect_svg(path);
    ck_assert_msg(strstr(svg, "localsgd = qsr") != NULL, "legend does not list the merged series");
    ck_assert_msg(strstr(svg, "sw-merge") == NULL, "sweep id in the figure");
    free(svg);
    DatBlock speedup = DAT_BLOCK(folder, "speedup", "series: localsgd = qsr");
    ck_assert(speedup.found);
    expect_close(speedup.value[0][1], 2, "speedup");
    test_output_free(&o);
}
END_TEST

/* Each rule that skips a degenerate figure fires, with its note. */
START_TEST(test_skip_rules)
{
    /* one timing run: one level, no accuracy, no sync, no ComDML */
    const char *db = test_folder_path("timing.db");
    Store *store = open_store(db);
    RunSpec timing = { .name = "timing", .method = "localsgd", .seed = 1, .t_round = 3, .rounds = 2 };
    add_run(store_sink(store), &timing);
    store_close(store);
    const char *folder = test_folder_path("skips");
    TestOutput o = RUN_PLOT("plot", db, "--out", folder, "--format", "png");
    ck_assert_msg(o.status == 0, "%s", o.err);
    static const char *const notes[] = {
        "skipped time-to-target: no run of timing reached its target accuracy",
        "skipped straggler: one heterogeneity level in timing (no swept key varies)",
        "skipped speedup: no sync baseline",
        "skipped accuracy: no accuracy measured in timing",
        "skipped pairing: no ComDML run", "skipped predicted: no ComDML run",
    };
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
        ck_assert_msg(strstr(o.err, notes[i]) != NULL, "'%s' not in:\n%s", notes[i], o.err);
    ck_assert_int_eq(count_entries(folder), 2);  /* idle and timeline */
    expect_png(test_folder_path("skips/idle.png"));
    expect_png(test_folder_path("skips/timeline.png"));
    test_output_free(&o);

    /* rounds that do not exist skip the timeline; --run of a non-ComDML run names it */
    o = RUN_PLOT("plot", db, "--out", folder, "--format", "png", "--rounds", "5-9", "--run", "1");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_ptr_nonnull(strstr(o.err, "skipped timeline: run 1 has no rounds 5-9"));
    ck_assert_ptr_nonnull(strstr(o.err, "run 1 (localsgd) has no pairings"));
    test_output_free(&o);

    /* a train run of one round, no target, no accounts; a ComDML run of one round */
    db = test_folder_path("one-round.db");
    store = open_store(db);
    RunSpec one = { .name = "one", .method = "comdml", .seed = 1, .t_round = 2, .rounds = 1,
                    .train = 1, .no_target = 1, .no_accounts = 1 };
    add_run(store_sink(store), &one);
    store_close(store);
    o = RUN_PLOT("plot", db, "--out", test_folder_path("one"), "--format", "png");
    ck_assert_msg(o.status == 0, "%s", o.err);
    static const char *const one_notes[] = {
        "skipped time-to-target: no run of one has a target accuracy",
        "skipped accuracy: one evaluation per run in one",
        "skipped idle: no per-agent idle time",
        "skipped pairing: run 1 (one) paired agents in one round only",
        "skipped predicted: run 1 has one pairing with both times",
        "skipped timeline: run 1 has no per-agent accounts",
    };
    for (size_t i = 0; i < sizeof one_notes / sizeof one_notes[0]; i++)
        ck_assert_msg(strstr(o.err, one_notes[i]) != NULL, "'%s' not in:\n%s", one_notes[i], o.err);
    test_output_free(&o);

    /* pairs that play out exactly as predicted: nothing off y = x */
    db = test_folder_path("exact.db");
    store = open_store(db);
    RunSpec exact = { .name = "exact", .method = "comdml", .seed = 1, .t_round = 2, .rounds = 3, .exact = 1 };
    add_run(store_sink(store), &exact);
    store_close(store);
    o = RUN_PLOT("plot", db, "--out", test_folder_path("exact"), "--format", "png");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_msg(strstr(o.err, "skipped predicted: every pair of run 1 has the same predicted") != NULL,
                  "%s", o.err);
    test_output_free(&o);

    /* two levels, but every method has one of them only: one point per line */
    db = test_folder_path("lonely.db");
    store = open_store(db);
    RunSpec a = { .name = "lonely", .method = "sync", .seed = 1, .sweep = "sw-l", .t_round = 2, .rounds = 2,
                  .point = "run.method=sync agents.compute=lognormal(1 GFLOPS, 0.5) seed=1" };
    RunSpec b = { .name = "lonely", .method = "comdml", .seed = 1, .sweep = "sw-l", .t_round = 1, .rounds = 2,
                  .point = "run.method=comdml agents.compute=lognormal(1 GFLOPS, 1) seed=1" };
    add_run(store_sink(store), &a);
    add_run(store_sink(store), &b);
    store_close(store);
    o = RUN_PLOT("plot", db, "--out", test_folder_path("lonely"), "--format", "png");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_msg(strstr(o.err, "skipped straggler: one point per line in lonely") != NULL, "%s", o.err);
    test_output_free(&o);

    /* an empty database: nothing to plot, not an error */
    const char *empty = test_folder_path("empty.db");
    store_close(open_store(empty));
    o = RUN_PLOT("plot", empty, "--out", test_folder_path("none"));
    ck_assert_int_eq(o.status, 0);
    ck_assert_ptr_nonnull(strstr(o.err, "nothing to plot"));
    ck_assert_str_eq(o.out, "");
    test_output_free(&o);
}
END_TEST

/* The timeline is drawn at the round's real times: from agent_rounds laid out compute,
 * wait, send, offline from t_start; from an events table where there is one. */
START_TEST(test_timeline_times)
{
    const char *db = test_folder_path("gantt.db");
    Store *store = open_store(db);
    RunSpec spec = { .name = "gantt", .method = "sync", .seed = 1, .t_round = 10, .rounds = 3 };
    add_run(store_sink(store), &spec);
    store_close(store);
    const char *folder = test_folder_path("gantt");
    TestOutput o = RUN_PLOT("plot", db, "--out", folder, "--format", "png", "--keep", "--rounds", "1");
    ck_assert_msg(o.status == 0, "%s", o.err);
    test_output_free(&o);
    DatBlock compute = DAT_BLOCK(folder, "timeline", "compute", "agent_rounds");
    ck_assert(compute.found && compute.rows == 3);
    for (int r = 0; r < 3; r++) {
        ck_assert_msg(compute.value[r][0] == 10, "compute starts at %.17g", compute.value[r][0]);
        ck_assert_int_eq((int)compute.value[r][4], 1);  /* round 1 */
    }
    expect_close(compute.value[2][1], 19, "agent 2 computes 0.9 T");
    DatBlock wait = DAT_BLOCK(folder, "timeline", "wait");
    ck_assert(wait.found);
    expect_close(wait.value[0][0], 13, "agent 0 waits after its 3 s of compute");
    expect_close(wait.value[0][1], 19, "... for 6 s");
    DatBlock send = DAT_BLOCK(folder, "timeline", "send");
    expect_close(send.value[0][1], 20, "agent 0's send ends at the round's end");

    /* recorded events win */
    sqlite3 *raw = NULL;
    ck_assert_int_eq(sqlite3_open(db, &raw), SQLITE_OK);
    raw_exec(raw, "CREATE TABLE events(run_id INTEGER, round INTEGER, agent INTEGER, kind TEXT,"
                  " t_start REAL, t_end REAL);"
                  "INSERT INTO events VALUES (1, 1, 0, 'compute', 10, 12.5), (1, 1, 0, 'send', 12.5, 14),"
                  " (1, 1, 0, 'wait', 14, 20), (1, 1, 1, 'compute', 10, 18);");
    sqlite3_close(raw);
    o = RUN_PLOT("plot", db, "--out", folder, "--format", "png", "--keep", "--rounds", "1");
    ck_assert_msg(o.status == 0, "%s", o.err);
    test_output_free(&o);
    compute = DAT_BLOCK(folder, "timeline", "compute", "events table");
    ck_assert(compute.found && compute.rows == 2);
    expect_close(compute.value[0][1], 12.5, "event end");
    send = DAT_BLOCK(folder, "timeline", "send", "events table");
    ck_assert(send.found && send.rows == 1 && send.value[0][0] == 12.5 && send.value[0][1] == 14);
}
END_TEST

START_TEST(test_plot_formats)
{
    const char *db = make_sweep_fixture("formats.db");
    const char *svg_only = test_folder_path("svg");
    TestOutput o = RUN_PLOT("plot", db, "--out", svg_only, "--format", "svg");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_int_eq(count_entries(svg_only), FIGURES);
    ck_assert_ptr_null(strstr(o.out, ".png"));
    test_output_free(&o);
    o = RUN_PLOT("plot", db, "--out=" , "--format=png");
    ck_assert_int_eq(o.status, 2);  /* --out= with nothing */
    test_output_free(&o);
    const char *pdf = test_folder_path("pdf");
    o = RUN_PLOT("plot", db, "--out", pdf, "--format=pdf,png", "--style", "paper", "--font-size", "7");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_int_eq(count_entries(pdf), 2 * FIGURES);
    ck_assert_ptr_null(strstr(o.out, ".svg"));
    for (int f = 0; f < FIGURES; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.pdf", pdf, figure_names[f]);
        expect_pdf(path);
    }
    test_output_free(&o);
    /* a size in inches or pixels reaches the terminal */
    const char *sized = test_folder_path("sized");
    o = RUN_PLOT("plot", db, "--out", sized, "--format", "svg", "--size", "5in,3in", "--keep");
    ck_assert_msg(o.status == 0, "%s", o.err);
    char *script = read_path(test_folder_path("sized/straggler.gp"), NULL);
    ck_assert_msg(strstr(script, "set terminal svg noenhanced size 360,216 ") != NULL, "%s", script);
    free(script);
    test_output_free(&o);
    o = RUN_PLOT("plot", db, "--out", sized, "--format", "png", "--size", "1000,600", "--keep");
    ck_assert_msg(o.status == 0, "%s", o.err);
    script = read_path(test_folder_path("sized/straggler.gp"), NULL);
    ck_assert_msg(strstr(script, "set terminal pngcairo noenhanced size 1000,600 ") != NULL, "%s", script);
    free(script);
    test_output_free(&o);
}
END_TEST

START_TEST(test_odd_names)
{
    const char *db = make_odd_database("odd.db");
    /* the private folder and the output folder have awkward names too */
    const char *tmp = test_folder_path("tmp 'x' \\ @ \"y\"");
    ck_assert_int_eq(mkdir(tmp, 0700), 0);
    setenv("TMPDIR", tmp, 1);
    const char *folder = test_folder_path("out 'q' \\ @ ünï");
    TestOutput o = RUN_PLOT("plot", db, "--out", folder);
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
    /* the odd partition is a panel of its own, its value drawn as written */
    const char *panel = strstr(svg, "partition = ");
    ck_assert_msg(strstr(svg, "partition = o'dd \"p\" \\ @x_y") != NULL,
                  "panel title not shown as written: %.200s", panel ? panel : "(none)");
    ck_assert_msg(strstr(svg, "sw-odd") == NULL, "a sweep id in a figure");
    free(svg);
    test_output_free(&o);
}
END_TEST

START_TEST(test_missing_gnuplot)
{
    const char *db = make_sweep_fixture("missing.db");
    const char *empty = test_folder_path("empty-bin");
    ck_assert_int_eq(mkdir(empty, 0700), 0);
    setenv("PATH", empty, 1);
    unsetenv(GNUPLOT_ENV);
    const char *folder = test_folder_path("never");
    TestOutput o = RUN_PLOT("plot", db, "--out", folder);
    ck_assert_int_eq(o.status, 1);
    ck_assert_msg(strstr(o.err, "gnuplot not found") != NULL, "%s", o.err);
    ck_assert_msg(strstr(o.err, "apt-get install gnuplot-nox") != NULL, "%s", o.err);
    ck_assert_str_eq(o.out, "");
    ck_assert_int_ne(access(folder, F_OK), 0);  /* nothing made */
    test_output_free(&o);

    /* a named program that is not there */
    setenv(GNUPLOT_ENV, "/nonexistent/gnuplot", 1);
    o = RUN_PLOT("plot", db, "--out", folder);
    ck_assert_int_eq(o.status, 1);
    ck_assert_msg(strstr(o.err, "'/nonexistent/gnuplot' (from HETSIM_GNUPLOT)") != NULL, "%s", o.err);
    ck_assert_msg(strstr(o.err, "apt-get install gnuplot-nox") != NULL, "%s", o.err);
    test_output_free(&o);

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
    const char *fake = test_folder_path("fake-gnuplot");
    FILE *script = fopen(fake, "w");
    ck_assert_ptr_nonnull(script);
    fputs("#!/bin/sh\necho 'line 3: undefined variable: boom' >&2\nexit 1\n", script);
    fclose(script);
    ck_assert_int_eq(chmod(fake, 0700), 0);
    setenv(GNUPLOT_ENV, fake, 1);
    const char *folder = test_folder_path("failed");
    TestOutput o = RUN_PLOT("plot", db, "--out", folder);
    ck_assert_int_eq(o.status, 1);
    ck_assert_msg(strstr(o.err, "gnuplot failed (exit 1): line 3: undefined variable: boom") != NULL,
                  "%s", o.err);
    ck_assert_str_eq(o.out, "");
    ck_assert_int_eq(count_entries(folder), 0);
    test_output_free(&o);
}
END_TEST

START_TEST(test_errors)
{
    test_output_expect_failure(RUN_PLOT("plot"), 2, "missing FILE.db");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--format", "jpg"), 2, "--format takes png, svg, pdf");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--format", "png,"), 2, "--format takes png, svg, pdf");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--style", "poster"), 2, "--style takes paper or screen");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--size", "3.5in"), 2, "--size takes W,H");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--size", "3.5in,600"), 2, "--size takes W,H");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--size", "0.2in,1in"), 2, "--size takes W,H");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--size", "10,10"), 2, "--size takes W,H");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--size", "800.5,600"), 2, "--size takes W,H");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--size", "3ft,2ft"), 2, "--size takes W,H");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--font-size", "2"), 2, "--font-size takes points from 4 to 40");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--font-size", "9pt"), 2, "--font-size takes points");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--keep=yes"), 2, "--keep");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--rounds", "3-1"), 2, "--rounds needs A or A-B");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--rounds", "x"), 2, "--rounds needs A or A-B");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--run", "0"), 2, "--run needs a positive whole number");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--out"), 2, "--out needs a folder");
    test_output_expect_failure(RUN_PLOT("plot", "x.db", "--bogus"), 2, "unknown option '--bogus'");
    test_output_expect_failure(RUN_PLOT("plot", "a.db", "b.db"), 2, "unexpected argument 'b.db'");
    const char *absent = test_folder_path("absent.db");
    test_output_expect_failure(RUN_PLOT("plot", absent), 1, "cannot open database");
    const char *text = test_folder_path("text.db");
    FILE *file = fopen(text, "w");
    fputs("this is not a database, but it is long enough to have a header\n", file);
    fclose(file);
    test_output_expect_failure(RUN_PLOT("plot", text), 2, "not a SQLite database");
    const char *db = make_sweep_fixture("errors.db");
    test_output_expect_failure(RUN_PLOT("plot", db, "--run", "999"), 2, "no run with id 999");
    test_output_expect_failure(RUN_PLOT("plot", db, "--sweep", "sw-nope"), 2, "no run of sweep 'sw-nope'");
    const char *file_as_folder = test_folder_path("a-file");
    fclose(fopen(file_as_folder, "w"));
    test_output_expect_failure(RUN_PLOT("plot", db, "--out", file_as_folder), 1, "output folder");

    TestOutput o = RUN_PLOT("plot", "--help");
    ck_assert_int_eq(o.status, 0);
    ck_assert(strncmp(o.out, "usage: hetsim plot FILE.db", 26) == 0);
    ck_assert_ptr_nonnull(strstr(o.out, "gnuplot-nox"));
    ck_assert_ptr_nonnull(strstr(o.out, "--style"));
    test_output_free(&o);
}
END_TEST

static Suite *plot_suite(void)
{
    Suite *s = suite_create("plot");
    TCase *normal = tcase_create("normal");
    tcase_add_unchecked_fixture(normal, scratch_setup, scratch_teardown);
    tcase_set_timeout(normal, 180);
    tcase_add_test(normal, test_quote);
    tcase_add_test(normal, test_plot_sweep_fixture);
    tcase_add_test(normal, test_data_files);
    tcase_add_test(normal, test_merged_series);
    tcase_add_test(normal, test_skip_rules);
    tcase_add_test(normal, test_timeline_times);
    tcase_add_test(normal, test_plot_formats);
    tcase_add_test(normal, test_odd_names);
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
