/* plot.c — `hetsim plot`: each figure writes a data file and a gnuplot script body into
 * the private folder of analysis/gnuplot.c, once per format (the PNG body replaces
 * characters no installed font has), then gnuplot draws every format from one script
 * and the images move into the output folder. Figures never put names into data files:
 * every text (series, agents' groups, run names, tic labels) goes into the script
 * through gnuplot's quoting, data files hold numbers only. Ranges are computed here
 * rather than autoscaled, so a single point or a flat line draws without warnings. */
#include "analysis/plot.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/dbread.h"
#include "analysis/gnuplot.h"
#include "analysis/runset.h"

enum { PLOT_SKIP = 1 };  /* a figure without data: not an error */

typedef struct Plot {
    const PlotOptions *options;
    const char *db_path;
    const char *out_dir;
    unsigned formats;
    sqlite3 *db;
    RunSet *set;
    int group;
    const RunFacts *run;      /* timeline */
    const RunFacts *comdml;   /* pairing, predicted; NULL when there is none */
    char comdml_missing[256]; /* why there is none */
    Gnuplot gnuplot;
    FILE *out, *err;
    char note[512];           /* why a figure was skipped */
    const char **methods;     /* the group's methods, in point order (colours) */
    int method_count;
    int *variant;             /* (series_count) rank of each series' variant (dashes) */
    int raster;               /* the script body being written is for PNG */
    int quiet;                /* a later pass of the same figure: no notes */
    char title[512];          /* the group, for figure titles */
} Plot;

typedef struct Canvas {
    int width, height;
} Canvas;

typedef int (*FigureWrite)(Plot *plot, const char *data_path, FILE *data, FILE *body,
                           Canvas *canvas, HsDiag *diag);

/* ---- small helpers ---- */

typedef struct Range {
    double lo, hi;
    int any;
} Range;

static void range_add(Range *range, double value)
{
    if (!isfinite(value)) return;
    if (!range->any) {
        range->lo = range->hi = value;
        range->any = 1;
    } else {
        if (value < range->lo) range->lo = value;
        if (value > range->hi) range->hi = value;
    }
}

/* `set Xrange [lo:hi]` with 5 % room, never empty; from_zero starts at 0 when all
 * values are positive. */
static void range_print(FILE *body, const char *axis, Range range, int from_zero)
{
    if (!range.any) range.lo = range.hi = 0;
    if (from_zero && range.lo > 0) range.lo = 0;
    double span = range.hi - range.lo;
    double pad = span > 0 ? 0.05 * span : (range.hi != 0 ? 0.1 * fabs(range.hi) : 1.0);
    double lo = range.lo - pad, hi = range.hi + pad;
    if (from_zero && range.lo >= 0) lo = 0;
    fprintf(body, "set %srange [%.17g:%.17g]\n", axis, lo, hi);
}

/* A path (data file, image) as a gnuplot string: byte for byte. */
static void quote_path(FILE *body, const char *path)
{
    gnuplot_quote(body, path);
}

/* A text that gets drawn: for the raster pass, characters no font has become '?'. */
static void label(const Plot *plot, FILE *body, const char *text)
{
    gnuplot_quote_drawn(body, text, plot->raster ? &plot->gnuplot : NULL);
}

/* label of a printf-formatted text (cut at 1023 bytes). */
static void labelf(const Plot *plot, FILE *body, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void labelf(const Plot *plot, FILE *body, const char *fmt, ...)
{
    char text[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    label(plot, body, text);
}

/* A note on stderr, once per figure (the writers run once per format). */
static void inform(const Plot *plot, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void inform(const Plot *plot, const char *fmt, ...)
{
    if (plot->quiet) return;
    va_list args;
    va_start(args, fmt);
    fputs("hetsim plot: ", plot->err);
    vfprintf(plot->err, fmt, args);
    va_end(args);
}

static void note(Plot *plot, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(Plot *plot, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(plot->note, sizeof plot->note, fmt, args);
    va_end(args);
}

static int nomem(HsDiag *diag)
{
    return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
}

/* The heterogeneity axis of the group: label, tics for index levels, range. */
static void print_level_axis(const Plot *plot, FILE *body, const RunGroup *group, Range levels)
{
    label(plot, body, group->axis_title);
    fputs("\n", body);
    if (group->axis_kind == RUNSET_AXIS_INDEX || group->axis_kind == RUNSET_AXIS_NONE) {
        fputs("set xtics (", body);
        if (group->axis_kind == RUNSET_AXIS_NONE) {
            label(plot, body, "all points");
            fputs(" 0", body);
        }
        for (int k = 0; k < group->level_count; k++) {
            if (k > 0) fputs(", ", body);
            label(plot, body, group->level_names[k]);
            fprintf(body, " %d", k);
        }
        fputs(")\n", body);
        fprintf(body, "set xrange [-0.5:%.17g]\n", levels.any ? levels.hi + 0.5 : 0.5);
    } else {
        range_print(body, "x", levels, 0);
    }
}

/* Sorts idx[0..n) by key[idx] (insertion sort: a series has a handful of levels). */
static void sort_by(int *idx, int n, const double *key)
{
    for (int i = 1; i < n; i++) {
        int moving = idx[i], j = i;
        while (j > 0 && key[idx[j - 1]] > key[moving]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = moving;
    }
}

static double low_of(RunStat s)
{
    return isnan(s.half) ? s.mean : s.mean - s.half;
}

static double high_of(RunStat s)
{
    return isnan(s.half) ? s.mean : s.mean + s.half;
}

/* ---- line styles: one colour per method, one dash and point per variant ---- */

static const char *const palette[] = {
    "#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#000000", "#bbbbbb",
};
enum { PALETTE_SIZE = 8 };

/* What follows the method in a series name (", data.partition=iid"), "" when nothing. */
static const char *series_variant(const RunSeries *series)
{
    size_t length = strlen(series->method);
    return strncmp(series->name, series->method, length) == 0 ? series->name + length : series->name;
}

/* Ranks, once per plot, the group's methods (in point order, so a method keeps its
 * colour in every figure) and its series' variants. */
static int index_styles(Plot *plot)
{
    const RunSet *set = plot->set;
    plot->methods = calloc((size_t)set->point_count + 1, sizeof *plot->methods);
    plot->variant = calloc((size_t)set->series_count + 1, sizeof *plot->variant);
    const char **variants = calloc((size_t)set->series_count + 1, sizeof *variants);
    int variant_count = 0;
    if (plot->methods == NULL || plot->variant == NULL || variants == NULL) {
        free(variants);
        return HS_E_NOMEM;
    }
    for (int p = 0; p < set->point_count; p++) {
        if (set->points[p].group != plot->group) continue;
        int m = 0;
        while (m < plot->method_count && strcmp(plot->methods[m], set->points[p].method) != 0) m++;
        if (m == plot->method_count) plot->methods[plot->method_count++] = set->points[p].method;
    }
    for (int s = 0; s < set->series_count; s++) {
        if (set->series[s].group != plot->group) continue;
        const char *variant = series_variant(&set->series[s]);
        int v = 0;
        while (v < variant_count && strcmp(variants[v], variant) != 0) v++;
        if (v == variant_count) variants[variant_count++] = variant;
        plot->variant[s] = v;
    }
    free(variants);
    return HS_OK;
}

static int method_rank(const Plot *plot, const char *method)
{
    for (int m = 0; m < plot->method_count; m++)
        if (strcmp(plot->methods[m], method) == 0) return m;
    return plot->method_count;
}

static void print_method_colour(FILE *body, const Plot *plot, const char *method)
{
    fprintf(body, "lc rgb '%s'", palette[method_rank(plot, method) % PALETTE_SIZE]);
}

static void print_series_style(FILE *body, const Plot *plot, int series)
{
    static const int points[] = { 7, 5, 9, 11, 13, 15 };
    int variant = plot->variant[series];
    print_method_colour(body, plot, plot->set->series[series].method);
    fprintf(body, " dt %d pt %d", variant % 5 + 1, points[variant % 6]);
}

/* Shifts series k of n sideways by a little of the x span, so error bars at one level
 * stay apart. */
static double dodge(Range x, int k, int n)
{
    double span = x.any && x.hi > x.lo ? x.hi - x.lo : 1.0;
    return (k - (n - 1) / 2.0) * 0.008 * span;
}

/* Display width of text in code points. */
static int text_columns(const char *text)
{
    int width = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        width += (*p & 0xC0) != 0x80;
    return width;
}

/* Rows a legend of `entries` entries, the longest `longest` characters, needs under a
 * plot canvas_width pixels wide (about 7 px a character and 70 px of sample). */
static int key_rows(int canvas_width, int entries, int longest)
{
    int column = 7 * longest + 70;
    int columns = (int)(0.9 * canvas_width) / (column > 0 ? column : 1);
    if (columns < 1) columns = 1;
    if (columns > 4) columns = 4;
    int rows = (entries + columns - 1) / columns;
    return rows < 1 ? 1 : rows;
}

/* The legend in columns of `rows` entries under the plot area, which keeps a fixed size
 * (gnuplot's own `key below` misjudges long entries). Call once the canvas is final. */
static void print_key_under(FILE *body, const Canvas *canvas, int rows, double left)
{
    double bottom = (95.0 + 18.0 * rows) / canvas->height;
    fprintf(body, "set lmargin at screen %.4f\nset rmargin at screen 0.97\n"
                  "set bmargin at screen %.4f\nset tmargin at screen %.4f\n", left, bottom,
            1.0 - 70.0 / canvas->height);
    fprintf(body, "set key at screen 0.5,%.4f center top vertical maxrows %d\n",
            bottom - 62.0 / canvas->height, rows);
}

/* ---- 1. straggler effect ---- */

static int figure_straggler(Plot *plot, const char *data_path, FILE *data, FILE *body,
                            Canvas *canvas, HsDiag *diag)
{
    const RunSet *set = plot->set;
    const RunGroup *group = &set->groups[plot->group];
    int status = HS_OK, blocks = 0;
    RunStat *makespan = calloc((size_t)set->point_count + 1, sizeof *makespan);
    RunStat *idle = calloc((size_t)set->point_count + 1, sizeof *idle);
    double *level = calloc((size_t)set->point_count + 1, sizeof *level);
    int *members = calloc((size_t)set->point_count + 1, sizeof *members);
    int *block_series = calloc((size_t)set->series_count + 1, sizeof *block_series);
    Range x = { 0 }, y_makespan = { 0 }, y_idle = { 0 };
    if (!makespan || !idle || !level || !members || !block_series) {
        status = nomem(diag);
        goto done;
    }
    for (int p = 0; p < set->point_count; p++) {
        if (set->points[p].group != plot->group) continue;
        level[p] = set->points[p].level;
        if (runset_point_stat(set, p, RUN_MAKESPAN, &makespan[p]) != HS_OK ||
            runset_point_stat(set, p, RUN_IDLE_SHARE, &idle[p]) != HS_OK) {
            status = nomem(diag);
            goto done;
        }
        if (makespan[p].n > 0 || idle[p].n > 0) range_add(&x, level[p]);
    }
    for (int s = 0; s < set->series_count; s++) {
        if (set->series[s].group != plot->group) continue;
        for (int p = 0; p < set->point_count; p++)
            if (set->points[p].group == plot->group && set->points[p].series == s &&
                (makespan[p].n > 0 || idle[p].n > 0)) {
                block_series[blocks++] = s;
                break;
            }
    }
    if (blocks == 0) {
        note(plot, "no done run with rounds in %s", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    for (int b = 0; b < blocks; b++) {
        int n = 0;
        for (int p = 0; p < set->point_count; p++)
            if (set->points[p].group == plot->group && set->points[p].series == block_series[b] &&
                (makespan[p].n > 0 || idle[p].n > 0))
                members[n++] = p;
        sort_by(members, n, level);
        double shift = dodge(x, b, blocks);
        for (int k = 0; k < n; k++) {
            int p = members[k];
            fprintf(data, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", level[p] + shift,
                    makespan[p].mean, low_of(makespan[p]), high_of(makespan[p]), idle[p].mean,
                    low_of(idle[p]), high_of(idle[p]));
            range_add(&y_makespan, low_of(makespan[p]));
            range_add(&y_makespan, high_of(makespan[p]));
            range_add(&y_idle, low_of(idle[p]));
            range_add(&y_idle, high_of(idle[p]));
        }
        fputs("\n\n", data);
    }
    /* one legend under both panels: fixed margins keep the panels the same size */
    int longest = 0;
    for (int b = 0; b < blocks; b++) {
        int width = text_columns(set->series[block_series[b]].name);
        if (width > longest) longest = width;
    }
    int rows = key_rows(1300, blocks, longest);
    canvas->width = 1300;
    canvas->height = 560 + 18 * rows;
    double bottom = (90.0 + 18.0 * rows) / canvas->height;
    fputs("set multiplot layout 1,2 title ", body);
    labelf(plot, body, "Straggler effect: %s", plot->title);
    fprintf(body, " . \"\\n\" . 'mean and 95 %% interval over seeds' margins 0.07,0.98,%.4f,0.88"
                  " spacing 0.08\n", bottom);
    fprintf(body, "set grid\nset key at screen 0.5,%.4f center top vertical maxrows %d\n",
            bottom - 60.0 / canvas->height, rows);
    fputs("set xlabel ", body);
    print_level_axis(plot, body, group, x);
    for (int panel = 0; panel < 2; panel++) {
        fputs(panel == 0 ? "set ylabel 'round makespan (s): mean of t_end - t_start'\n"
                         : "unset key\nset ylabel 'idle share of agent time'\n",
              body);
        range_print(body, "y", panel == 0 ? y_makespan : y_idle, 1);
        fputs("plot ", body);
        for (int b = 0; b < blocks; b++) {
            if (b > 0) fputs(", \\\n     ", body);
            quote_path(body, data_path);
            fprintf(body, " index %d using 1:%d:%d:%d with yerrorlines lw 2 ", b,
                    panel == 0 ? 2 : 5, panel == 0 ? 3 : 6, panel == 0 ? 4 : 7);
            print_series_style(body, plot, block_series[b]);
            fputs(" title ", body);
            label(plot, body, set->series[block_series[b]].name);
        }
        fputs("\n", body);
    }
    fputs("unset multiplot\n", body);
done:
    free(makespan);
    free(idle);
    free(level);
    free(members);
    free(block_series);
    return status;
}

/* ---- 5. speedup over sync ---- */

static int figure_speedup(Plot *plot, const char *data_path, FILE *data, FILE *body,
                          Canvas *canvas, HsDiag *diag)
{
    const RunSet *set = plot->set;
    const RunGroup *group = &set->groups[plot->group];
    RunSpeedup *rows = NULL;
    int count = 0, status = HS_OK, blocks = 0, bases = 0;
    if (runset_speedups(set, &rows, &count) != HS_OK) return nomem(diag);
    int *members = calloc((size_t)count + 1, sizeof *members);
    int *block_series = calloc((size_t)set->series_count + 1, sizeof *block_series);
    double *level = calloc((size_t)count + 1, sizeof *level);
    Range x = { 0 }, y = { 0 };
    if (!members || !block_series || !level) {
        status = nomem(diag);
        goto done;
    }
    range_add(&y, 1.0);
    for (int i = 0; i < count; i++) {
        level[i] = set->points[rows[i].point].level;
        if (set->points[rows[i].point].group == plot->group) range_add(&x, level[i]);
    }
    for (int s = 0; s < set->series_count; s++) {
        if (set->series[s].group != plot->group) continue;
        for (int i = 0; i < count; i++)
            if (set->points[rows[i].point].series == s) {
                block_series[blocks++] = s;
                break;
            }
    }
    if (blocks == 0) {
        note(plot, "no sync baseline with the same scenario point and seed in %s", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    for (int b = 0; b < blocks; b++) {
        int n = 0;
        for (int i = 0; i < count; i++)
            if (set->points[rows[i].point].series == block_series[b]) members[n++] = i;
        sort_by(members, n, level);
        double shift = dodge(x, b, blocks);
        for (int k = 0; k < n; k++) {
            const RunSpeedup *row = &rows[members[k]];
            fprintf(data, "%.17g %.17g %.17g %.17g\n", level[members[k]] + shift,
                    row->speedup.mean, low_of(row->speedup), high_of(row->speedup));
            range_add(&y, low_of(row->speedup));
            range_add(&y, high_of(row->speedup));
            bases |= 1 << row->basis;
        }
        fputs("\n\n", data);
    }
    const char *basis = bases == 1 << SPEEDUP_TARGET ? "t = time to target"
                        : bases == 1 << SPEEDUP_TOTAL ? "t = total virtual time"
                        : "t = time to target where both runs reached it, else total virtual time";
    canvas->width = 1000;
    int longest = 4;  /* "sync" */
    for (int b = 0; b < blocks; b++) {
        int width = text_columns(set->series[block_series[b]].name);
        if (width > longest) longest = width;
    }
    int legend_rows = key_rows(canvas->width, blocks + 1, longest);
    canvas->height = 640 + 18 * legend_rows;
    fputs("set title ", body);
    labelf(plot, body, "Speedup over sync: %s", plot->title);
    fputs(" . \"\\n\" . ", body);
    labelf(plot, body, "%s; mean and 95 %% interval over seeds", basis);
    fputs("\nset grid\n", body);
    print_key_under(body, canvas, legend_rows, 0.08);
    fputs("set xlabel ", body);
    print_level_axis(plot, body, group, x);
    fputs("set ylabel 'speedup over sync: t_sync / t_method (> 1 is faster)'\n", body);
    range_print(body, "y", y, 1);
    fputs("plot 1 with lines dt 2 lw 1.5 lc rgb 'gray40' title 'sync'", body);
    for (int b = 0; b < blocks; b++) {
        fputs(", \\\n     ", body);
        quote_path(body, data_path);
        fprintf(body, " index %d using 1:2:3:4 with yerrorlines lw 2 ", b);
        print_series_style(body, plot, block_series[b]);
        fputs(" title ", body);
        label(plot, body, set->series[block_series[b]].name);
    }
    fputs("\n", body);
done:
    free(rows);
    free(members);
    free(block_series);
    free(level);
    return status;
}

/* ---- 2. accuracy against virtual time ---- */

static const char accuracy_sql[] =
    "SELECT t, test_accuracy FROM metrics WHERE run_id = ?1 AND agent IS NULL"
    " AND t IS NOT NULL AND test_accuracy IS NOT NULL ORDER BY t, rowid";

static int figure_accuracy(Plot *plot, const char *data_path, FILE *data, FILE *body,
                           Canvas *canvas, HsDiag *diag)
{
    const RunSet *set = plot->set;
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK, blocks = 0, method_count = 0;
    int *block_run = calloc((size_t)set->run_count + 1, sizeof *block_run);
    const char **methods = calloc((size_t)set->point_count + 1, sizeof *methods);
    Range x = { 0 }, y = { 0 };
    double target = NAN;
    int same_target = 1;
    if (block_run == NULL || methods == NULL) {
        status = nomem(diag);
        goto done;
    }
    int rc = sqlite3_prepare_v2(plot->db, accuracy_sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
        status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
        goto done;
    }
    range_add(&x, 0);
    for (int i = 0; i < set->run_count; i++) {
        const RunFacts *run = &set->runs[i];
        if (set->points[run->point_index].group != plot->group) continue;
        sqlite3_reset(stmt);
        sqlite3_bind_int64(stmt, 1, run->id);
        int rows = 0;
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            double t = sqlite3_column_double(stmt, 0), accuracy = sqlite3_column_double(stmt, 1);
            fprintf(data, "%.17g %.17g\n", t, accuracy);
            range_add(&x, t);
            range_add(&y, accuracy);
            rows++;
        }
        if (rc != SQLITE_DONE) {
            status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
            goto done;
        }
        if (rows == 0) continue;
        fputs("\n\n", data);
        block_run[blocks++] = i;
        if (blocks == 1) target = run->target_accuracy;
        else if (!(run->target_accuracy == target || (isnan(target) && isnan(run->target_accuracy))))
            same_target = 0;
    }
    if (blocks == 0) {
        note(plot, "no accuracy measured in %s (timing-mode runs evaluate nothing)", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    int draw_target = same_target && isfinite(target);
    if (draw_target) range_add(&y, target);
    canvas->width = 1000;
    canvas->height = 620;
    fputs("set title ", body);
    labelf(plot, body, "Accuracy against virtual time: %s (averaged model; one line per run)",
           plot->title);
    fputs("\nset grid\nset key bottom right\n"
          "set xlabel 'virtual time (s)'\nset ylabel 'test accuracy'\n", body);
    range_print(body, "x", x, 1);
    range_print(body, "y", y, 0);
    fputs("plot ", body);
    for (int b = 0; b < blocks; b++) {
        const RunFacts *run = &set->runs[block_run[b]];
        const char *method = set->points[run->point_index].method;
        int m = 0, first = 0;
        while (m < method_count && strcmp(methods[m], method) != 0) m++;
        if (m == method_count) {
            methods[method_count++] = method;
            first = 1;
        }
        if (b > 0) fputs(", \\\n     ", body);
        quote_path(body, data_path);
        fprintf(body, " index %d using 1:2 with lines lw 1.5 ", b);
        print_method_colour(body, plot, method);
        fputc(' ', body);
        if (first) {
            fputs("title ", body);
            label(plot, body, method);
        } else {
            fputs("notitle", body);
        }
    }
    if (draw_target) {
        fprintf(body, ", \\\n     %.17g with lines dt 2 lc rgb 'gray40' title ", target);
        labelf(plot, body, "target %g", target);
    }
    fputs("\n", body);
done:
    sqlite3_finalize(stmt);
    free(block_run);
    free(methods);
    return status;
}

/* ---- 3. per-agent timeline ---- */

typedef struct AccountRow {
    int slot;        /* index among the shown rounds */
    int64_t agent;
    double part[4];  /* compute, communication, idle, offline (s) */
    int role;        /* 0 alone, 1 offloader, 2 helper */
} AccountRow;

/* Bar categories, in legend order; the three compute ones depend on the role. */
static const struct { const char *title; const char *colour; } categories[] = {
    { "compute", "#4477aa" },
    { "compute (offloader: its bottom blocks)", "#66ccee" },
    { "compute (helper: incl. offloaded work)", "#228833" },
    { "communication", "#ccbb44" },
    { "idle", "#bbbbbb" },
    { "offline", "#ee6677" },
};
enum { CATEGORY_COUNT = 6 };

static int role_code(const char *role)
{
    if (role == NULL) return 0;
    if (strcmp(role, "offloader") == 0) return 1;
    if (strcmp(role, "helper") == 0) return 2;
    return 0;
}

/* Which part of a row a category draws (0..3), -1 when it draws nothing of it. */
static int category_part(int category, int role)
{
    if (category < 3) return category == role ? 0 : -1;
    return category - 2;
}

typedef struct AgentLoad {
    double compute;  /* compute seconds in the shown rounds */
    int64_t agent;
} AgentLoad;

/* By compute seconds, then agent index (so ties are deterministic). */
static int compare_load(const void *a, const void *b)
{
    const AgentLoad *x = a, *y = b;
    if (x->compute != y->compute) return x->compute < y->compute ? -1 : 1;
    return (x->agent > y->agent) - (x->agent < y->agent);
}

static int compare_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A tic step of 1, 2 or 5 times a power of ten giving about `target` tics over span. */
static double nice_step(double span, int target)
{
    if (!(span > 0)) return 1;
    double raw = span / target, power = pow(10, floor(log10(raw)));
    double f = raw / power;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * power;
}

static int figure_timeline(Plot *plot, const char *data_path, FILE *data, FILE *body,
                           Canvas *canvas, HsDiag *diag)
{
    const RunFacts *run = plot->run;
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK, rc;
    int64_t *round_number = NULL;
    double *t_start = NULL, *t_end = NULL, *offset = NULL, *width = NULL;
    int round_count = 0, round_capacity = 0;
    int slots[PLOT_MAX_ROUNDS + 3], slot_count = 0;
    AccountRow *rows = NULL;
    int row_count = 0, row_capacity = 0;
    int64_t *agents = NULL, *shown = NULL;
    char **groups = NULL;
    int agent_count = 0, shown_count = 0;
    double *compute_total = NULL;

    /* the run's rounds */
    rc = sqlite3_prepare_v2(plot->db, "SELECT round, t_start, t_end FROM rounds WHERE run_id = ?1"
                                      " AND t_start IS NOT NULL AND t_end IS NOT NULL"
                                      " ORDER BY round, rowid", -1, &stmt, NULL);
    if (rc != SQLITE_OK) goto query_failed;
    sqlite3_bind_int64(stmt, 1, run->id);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t number = sqlite3_column_int64(stmt, 0);
        if (round_count > 0 && round_number[round_count - 1] == number) continue;
        if (round_count == round_capacity) {
            round_capacity = round_capacity ? 2 * round_capacity : 64;
            int64_t *n = realloc(round_number, (size_t)round_capacity * sizeof *n);
            if (n) round_number = n;
            double *a = realloc(t_start, (size_t)round_capacity * sizeof *a);
            if (a) t_start = a;
            double *b = realloc(t_end, (size_t)round_capacity * sizeof *b);
            if (b) t_end = b;
            if (!n || !a || !b) goto out_of_memory;
        }
        round_number[round_count] = number;
        t_start[round_count] = sqlite3_column_double(stmt, 1);
        t_end[round_count] = sqlite3_column_double(stmt, 2);
        round_count++;
    }
    if (rc != SQLITE_DONE) goto query_failed;
    sqlite3_finalize(stmt);
    stmt = NULL;
    const PlotOptions *options = plot->options;
    if (options->have_rounds) {
        int chosen = 0;
        for (int r = 0; r < round_count; r++)
            if (round_number[r] >= options->first_round && round_number[r] <= options->last_round) {
                if (slot_count < PLOT_MAX_ROUNDS) slots[slot_count++] = r;
                chosen++;
            }
        if (chosen > PLOT_MAX_ROUNDS)
            inform(plot, "timeline shows the first %d of the %d rounds asked for\n",
                   PLOT_MAX_ROUNDS, chosen);
    } else if (round_count > 0) {
        int slowest = 0;
        for (int r = 1; r < round_count; r++)
            if (t_end[r] - t_start[r] > t_end[slowest] - t_start[slowest]) slowest = r;
        int picks[3] = { 0, slowest, round_count - 1 };
        for (int k = 0; k < 3; k++) {
            int known = 0;
            for (int j = 0; j < slot_count; j++) known |= slots[j] == picks[k];
            if (!known) slots[slot_count++] = picks[k];
        }
        for (int i = 1; i < slot_count; i++)  /* in round order */
            for (int j = i; j > 0 && slots[j - 1] > slots[j]; j--) {
                int swap = slots[j];
                slots[j] = slots[j - 1];
                slots[j - 1] = swap;
            }
    }
    if (slot_count == 0) {
        if (options->have_rounds)
            note(plot, "run %" PRId64 " has no rounds %" PRId64 "-%" PRId64, run->id,
                 options->first_round, options->last_round);
        else
            note(plot, "run %" PRId64 " has no rounds", run->id);
        status = PLOT_SKIP;
        goto done;
    }

    /* the accounts of those rounds */
    rc = sqlite3_prepare_v2(plot->db, "SELECT agent, compute_s, comm_s, idle_s, offline_s, role"
                                      " FROM agent_rounds WHERE run_id = ?1 AND round = ?2"
                                      " ORDER BY agent, rowid", -1, &stmt, NULL);
    if (rc != SQLITE_OK) goto query_failed;
    for (int k = 0; k < slot_count; k++) {
        sqlite3_reset(stmt);
        sqlite3_bind_int64(stmt, 1, run->id);
        sqlite3_bind_int64(stmt, 2, round_number[slots[k]]);
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            if (row_count == row_capacity) {
                row_capacity = row_capacity ? 2 * row_capacity : 256;
                AccountRow *grown = realloc(rows, (size_t)row_capacity * sizeof *grown);
                if (grown == NULL) goto out_of_memory;
                rows = grown;
            }
            AccountRow *row = &rows[row_count++];
            row->slot = k;
            row->agent = sqlite3_column_int64(stmt, 0);
            for (int part = 0; part < 4; part++) {
                double value = sqlite3_column_double(stmt, 1 + part);  /* NULL reads as 0 */
                row->part[part] = isfinite(value) && value > 0 ? value : 0;
            }
            row->role = role_code((const char *)sqlite3_column_text(stmt, 5));
        }
        if (rc != SQLITE_DONE) goto query_failed;
    }
    sqlite3_finalize(stmt);
    stmt = NULL;
    if (row_count == 0) {
        note(plot, "run %" PRId64 " has no per-agent accounts (agent_rounds) in the chosen rounds",
             run->id);
        status = PLOT_SKIP;
        goto done;
    }

    /* the agents: distinct, sorted; at most PLOT_MAX_AGENTS shown */
    agents = malloc((size_t)row_count * sizeof *agents);
    if (agents == NULL) goto out_of_memory;
    for (int i = 0; i < row_count; i++) agents[i] = rows[i].agent;
    qsort(agents, (size_t)row_count, sizeof *agents, compare_int64);
    for (int i = 0; i < row_count; i++)
        if (agent_count == 0 || agents[agent_count - 1] != agents[i]) agents[agent_count++] = agents[i];
    shown = malloc((size_t)agent_count * sizeof *shown);
    compute_total = calloc((size_t)agent_count, sizeof *compute_total);
    if (shown == NULL || compute_total == NULL) goto out_of_memory;
    if (agent_count <= PLOT_MAX_AGENTS) {
        memcpy(shown, agents, (size_t)agent_count * sizeof *shown);
        shown_count = agent_count;
    } else {
        for (int i = 0; i < row_count; i++) {
            int64_t *at = bsearch(&rows[i].agent, agents, (size_t)agent_count, sizeof *agents,
                                  compare_int64);
            compute_total[at - agents] += rows[i].part[0];
        }
        AgentLoad *by_compute = malloc((size_t)agent_count * sizeof *by_compute);
        if (by_compute == NULL) goto out_of_memory;
        for (int i = 0; i < agent_count; i++) by_compute[i] = (AgentLoad){ compute_total[i], agents[i] };
        qsort(by_compute, (size_t)agent_count, sizeof *by_compute, compare_load);
        for (int i = 0; i < PLOT_MAX_AGENTS / 2; i++) {
            shown[shown_count++] = by_compute[i].agent;
            shown[shown_count++] = by_compute[agent_count - 1 - i].agent;
        }
        free(by_compute);
        qsort(shown, (size_t)shown_count, sizeof *shown, compare_int64);
        inform(plot, "timeline shows %d of run %" PRId64 "'s %d agents: the %d with the most "
                     "and the %d with the fewest compute seconds\n",
               shown_count, run->id, agent_count, PLOT_MAX_AGENTS / 2, PLOT_MAX_AGENTS / 2);
    }
    /* their groups, for the tic labels */
    groups = calloc((size_t)shown_count, sizeof *groups);
    if (groups == NULL) goto out_of_memory;
    rc = sqlite3_prepare_v2(plot->db, "SELECT agent, grp FROM agents WHERE run_id = ?1", -1,
                            &stmt, NULL);
    if (rc != SQLITE_OK) goto query_failed;
    sqlite3_bind_int64(stmt, 1, run->id);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t agent = sqlite3_column_int64(stmt, 0);
        const char *group = (const char *)sqlite3_column_text(stmt, 1);
        int64_t *at = bsearch(&agent, shown, (size_t)shown_count, sizeof *shown, compare_int64);
        if (at == NULL || group == NULL || groups[at - shown] != NULL) continue;
        if ((groups[at - shown] = strdup(group)) == NULL) goto out_of_memory;
    }
    if (rc != SQLITE_DONE) goto query_failed;
    sqlite3_finalize(stmt);
    stmt = NULL;

    /* rounds side by side: each as wide as its length or its longest stack */
    offset = calloc((size_t)slot_count + 1, sizeof *offset);
    width = calloc((size_t)slot_count, sizeof *width);
    if (offset == NULL || width == NULL) goto out_of_memory;
    for (int k = 0; k < slot_count; k++) width[k] = t_end[slots[k]] - t_start[slots[k]];
    for (int i = 0; i < row_count; i++) {
        double sum = rows[i].part[0] + rows[i].part[1] + rows[i].part[2] + rows[i].part[3];
        if (sum > width[rows[i].slot]) width[rows[i].slot] = sum;
    }
    double total = 0;
    for (int k = 0; k < slot_count; k++) total += width[k] > 0 ? width[k] : 0;
    double gap = total > 0 ? 0.03 * total : 1;
    for (int k = 0; k < slot_count; k++)
        offset[k + 1] = offset[k] + (width[k] > 0 ? width[k] : 0) + gap;

    int drawn[CATEGORY_COUNT] = { 0 }, blocks = 0;
    for (int c = 0; c < CATEGORY_COUNT; c++) {
        int segments = 0;
        for (int i = 0; i < row_count; i++) {
            const AccountRow *row = &rows[i];
            int part = category_part(c, row->role);
            if (part < 0 || row->part[part] <= 0) continue;
            int64_t *at = bsearch(&row->agent, shown, (size_t)shown_count, sizeof *shown,
                                  compare_int64);
            if (at == NULL) continue;
            double start = offset[row->slot];
            for (int before = 0; before < part; before++) start += row->part[before];
            double y = (double)(at - shown);
            fprintf(data, "%.17g %.17g %.17g %.17g\n", start, start + row->part[part], y - 0.38,
                    y + 0.38);
            segments++;
        }
        if (segments == 0) continue;
        fputs("\n\n", data);
        drawn[blocks++] = c;
    }

    canvas->width = 1100;
    int longest_title = 0;
    for (int b = 0; b < blocks; b++) {
        int title_width = text_columns(categories[drawn[b]].title);
        if (title_width > longest_title) longest_title = title_width;
    }
    int legend_rows = key_rows(canvas->width, blocks, longest_title);
    canvas->height = 170 + 18 * legend_rows + 18 * shown_count;
    if (canvas->height < 460) canvas->height = 460;
    if (canvas->height > 1640) canvas->height = 1640;
    fputs("set title ", body);
    labelf(plot, body, "Per-agent accounts: run %" PRId64 " (%s, %s, seed %" PRIu64 ")", run->id,
           run->name, run->method, run->seed);
    fputs("\nset xlabel 'seconds since the start of each round (rounds side by side; stacked: "
          "compute, communication, idle, offline)'\n", body);
    fputs("set ylabel 'agent'\nset style fill solid 1.0 noborder\n"
          "set grid xtics\nset xtics nomirror out\n", body);
    /* room on the left for the longest "AGENT GROUP" tic label */
    int longest_tic = 0;
    for (int i = 0; i < shown_count; i++) {
        char tic[64];
        snprintf(tic, sizeof tic, "%" PRId64 " ", shown[i]);
        int tic_width = text_columns(tic) + (groups[i] ? text_columns(groups[i]) : 0);
        if (tic_width > longest_tic) longest_tic = tic_width;
    }
    double left = (55.0 + 7.0 * longest_tic) / canvas->width;
    print_key_under(body, canvas, legend_rows, left < 0.08 ? 0.08 : left > 0.45 ? 0.45 : left);
    fprintf(body, "set xrange [0:%.17g]\n", offset[slot_count] - gap);
    fprintf(body, "set yrange [%.17g:-0.6]\n", shown_count - 0.4);
    /* per-round tics: 0 at each round's start */
    double longest = 0;
    for (int k = 0; k < slot_count; k++) if (width[k] > longest) longest = width[k];
    double step = nice_step(longest, slot_count > 3 ? 3 : 5);
    fputs("set xtics (", body);
    int first_tic = 1;
    for (int k = 0; k < slot_count; k++)
        for (double tic = 0; tic <= width[k] + 1e-9 * width[k]; tic += step) {
            fprintf(body, "%s'%g' %.17g", first_tic ? "" : ", ", tic, offset[k] + tic);
            first_tic = 0;
            if (step <= 0) break;
        }
    fputs(")\nset link x2\nset x2tics (", body);
    for (int k = 0; k < slot_count; k++) {
        if (k > 0) fputs(", ", body);
        labelf(plot, body, "round %" PRId64, round_number[slots[k]]);
        fprintf(body, " %.17g", offset[k]);
    }
    fputs(")\n", body);
    for (int k = 1; k < slot_count; k++)
        fprintf(body, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead dt 2 lc rgb 'gray50'\n",
                offset[k] - gap / 2, offset[k] - gap / 2);
    fprintf(body, "set ytics font ',%d' (", shown_count > 32 ? 7 : 9);
    for (int i = 0; i < shown_count; i++) {
        if (i > 0) fputs(", ", body);
        labelf(plot, body, "%" PRId64 " %s", shown[i], groups[i] ? groups[i] : "");
        fprintf(body, " %d", i);
    }
    fputs(")\nplot ", body);
    for (int b = 0; b < blocks; b++) {
        if (b > 0) fputs(", \\\n     ", body);
        quote_path(body, data_path);
        fprintf(body, " index %d using (($1+$2)/2):(($3+$4)/2):1:2:3:4 with boxxyerror lc rgb '%s'"
                      " title ", b, categories[drawn[b]].colour);
        label(plot, body, categories[drawn[b]].title);
    }
    fputs("\n", body);
    goto done;
query_failed:
    status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
    goto done;
out_of_memory:
    status = nomem(diag);
done:
    sqlite3_finalize(stmt);
    free(round_number);
    free(t_start);
    free(t_end);
    free(offset);
    free(width);
    free(rows);
    free(agents);
    free(shown);
    free(compute_total);
    if (groups != NULL)
        for (int i = 0; i < shown_count; i++) free(groups[i]);
    free(groups);
    return status;
}

/* ---- 4. ComDML: pairing map, predicted against played-out time ---- */

static const char pairings_sql[] =
    "SELECT round, slow, fast, split, predicted_s, actual_s FROM pairings WHERE run_id = ?1"
    " AND slow IS NOT NULL AND fast IS NOT NULL ORDER BY round, slow, rowid";

static int figure_pairing(Plot *plot, const char *data_path, FILE *data, FILE *body,
                          Canvas *canvas, HsDiag *diag)
{
    const RunFacts *run = plot->comdml;
    if (run == NULL) {
        note(plot, "%s", plot->comdml_missing);
        return PLOT_SKIP;
    }
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK, rounds = 0, pairs = 0, more = 0;
    int64_t last_round = 0;
    Range x = { 0 }, y = { 0 };
    /* pairs of a round are spread around the round's x so their arrows do not overlap */
    typedef struct Pair { int64_t round, slow, fast, split; } Pair;
    Pair *list = NULL;
    int capacity = 0;
    int rc = sqlite3_prepare_v2(plot->db, pairings_sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) goto query_failed;
    sqlite3_bind_int64(stmt, 1, run->id);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t round = sqlite3_column_int64(stmt, 0);
        if (pairs == 0 || round != last_round) {
            if (rounds == PLOT_MAX_PAIRING_ROUNDS) {
                more = 1;
                break;
            }
            rounds++;
            last_round = round;
        }
        if (pairs == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            Pair *grown = realloc(list, (size_t)capacity * sizeof *grown);
            if (grown == NULL) goto out_of_memory;
            list = grown;
        }
        list[pairs++] = (Pair){ round, sqlite3_column_int64(stmt, 1), sqlite3_column_int64(stmt, 2),
                                sqlite3_column_int64(stmt, 3) };
    }
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) goto query_failed;
    if (pairs == 0) {
        note(plot, "run %" PRId64 " has no pairings with agents", run->id);
        status = PLOT_SKIP;
        goto done;
    }
    if (more)
        inform(plot, "pairing map shows the first %d rounds of run %" PRId64 "\n",
               PLOT_MAX_PAIRING_ROUNDS, run->id);
    /* the splits in use, ascending; arrows take their split's colour */
    int64_t splits[PALETTE_SIZE];
    int split_count = 0, crowded = 0, overflow = 0;
    for (int k = 0; k < pairs; k++) {
        int known = 0;
        for (int j = 0; j < split_count && !known; j++) known = splits[j] == list[k].split;
        if (!known && split_count < PALETTE_SIZE) splits[split_count++] = list[k].split;
        else if (!known) overflow = 1;
    }
    qsort(splits, (size_t)split_count, sizeof *splits, compare_int64);
    /* blocks: arrows (x, y, 0, dy, split) of each split, offloaders, helpers, then the
     * labels (x, y, split) when no round has more than a dozen pairs */
    for (int start = 0; start < pairs;) {
        int end = start;
        while (end < pairs && list[end].round == list[start].round) end++;
        if (end - start > 12) crowded = 1;
        start = end;
    }
    int blocks = split_count + 2 + !crowded;
    for (int block = 0; block < blocks; block++) {
        for (int start = 0; start < pairs;) {
            int end = start;
            while (end < pairs && list[end].round == list[start].round) end++;
            int m = end - start;
            double spread = m > 1 ? (0.8 / m < 0.25 ? 0.8 / m : 0.25) : 0;
            for (int k = start; k < end; k++) {
                const Pair *pair = &list[k];
                double px = (double)pair->round + ((k - start) - (m - 1) / 2.0) * spread;
                int colour = split_count - 1;  /* splits past the palette share the last colour */
                for (int j = 0; j < split_count; j++)
                    if (splits[j] == pair->split) colour = j;
                if (block < split_count && colour == block)
                    fprintf(data, "%.17g %" PRId64 " 0 %" PRId64 " %" PRId64 "\n", px, pair->slow,
                            pair->fast - pair->slow, pair->split);
                else if (block == split_count || block == split_count + 1)
                    fprintf(data, "%.17g %" PRId64 "\n", px,
                            block == split_count ? pair->slow : pair->fast);
                else if (block == split_count + 2)
                    fprintf(data, "%.17g %" PRId64 " %" PRId64 "\n", px, pair->slow, pair->split);
                range_add(&x, px);
                range_add(&y, (double)pair->slow);
                range_add(&y, (double)pair->fast);
            }
            start = end;
        }
        fputs("\n\n", data);
    }
    canvas->width = 1100;
    canvas->height = 650;
    fputs("set title ", body);
    labelf(plot, body, "ComDML pairing map: run %" PRId64 " (%s, seed %" PRIu64 "): arrow = offloader to "
                 "helper, colour%s = split m", run->id, run->name, run->seed,
           crowded ? "" : " and label");
    fputs("\nset grid\nset xlabel 'round'\nset ylabel 'agent'\n", body);
    print_key_under(body, canvas, key_rows(canvas->width, split_count + 2, 32), 0.07);
    if (x.hi - x.lo <= 40) fputs("set xtics 1\n", body);
    if (y.hi - y.lo <= 30) fputs("set ytics 1\n", body);
    fprintf(body, "set xrange [%.17g:%.17g]\nset yrange [%.17g:%.17g]\n", x.lo - 0.7, x.hi + 0.7,
            y.lo - 0.8, y.hi + 0.8);
    fputs("plot ", body);
    for (int j = 0; j < split_count; j++) {
        quote_path(body, data_path);
        fprintf(body, " index %d using 1:2:3:4 with vectors head filled lw 1.5 lc rgb '%s' title ", j,
                palette[j % PALETTE_SIZE]);
        labelf(plot, body, "offloader to helper, split m=%" PRId64 "%s", splits[j],
               j == split_count - 1 && overflow ? " (and the splits past it)" : "");
        fputs(", \\\n     ", body);
    }
    quote_path(body, data_path);
    fprintf(body, " index %d using 1:2 with points pt 7 ps 1.1 lc rgb '#ee6677' title "
                  "'offloader (slow)', \\\n     ", split_count);
    quote_path(body, data_path);
    fprintf(body, " index %d using 1:2 with points pt 7 ps 1.1 lc rgb '#228833' title 'helper (fast)'",
            split_count + 1);
    if (!crowded) {
        fputs(", \\\n     ", body);
        quote_path(body, data_path);
        fprintf(body, " index %d using 1:2:(sprintf('m=%%d', int($3))) with labels left offset "
                      "char 0.7,0 font ',8' notitle", split_count + 2);
    }
    fputs("\n", body);
    goto done;
query_failed:
    status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
    goto done;
out_of_memory:
    status = nomem(diag);
done:
    sqlite3_finalize(stmt);
    free(list);
    return status;
}

static int figure_predicted(Plot *plot, const char *data_path, FILE *data, FILE *body,
                            Canvas *canvas, HsDiag *diag)
{
    const RunFacts *run = plot->comdml;
    if (run == NULL) {
        note(plot, "%s", plot->comdml_missing);
        return PLOT_SKIP;
    }
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK, points = 0;
    Range both = { 0 };
    range_add(&both, 0);
    int rc = sqlite3_prepare_v2(plot->db, pairings_sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) goto query_failed;
    sqlite3_bind_int64(stmt, 1, run->id);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (sqlite3_column_type(stmt, 4) == SQLITE_NULL || sqlite3_column_type(stmt, 5) == SQLITE_NULL)
            continue;
        double predicted = sqlite3_column_double(stmt, 4), actual = sqlite3_column_double(stmt, 5);
        if (!isfinite(predicted) || !isfinite(actual)) continue;
        fprintf(data, "%.17g %.17g\n", predicted, actual);
        range_add(&both, predicted);
        range_add(&both, actual);
        points++;
    }
    if (rc != SQLITE_DONE) goto query_failed;
    if (points == 0) {
        note(plot, "run %" PRId64 " has no pairings with both times", run->id);
        status = PLOT_SKIP;
        goto done;
    }
    canvas->width = 800;
    canvas->height = 720;
    fputs("set title ", body);
    labelf(plot, body, "ComDML predicted against played-out pair time: run %" PRId64 " (%s, seed %" PRIu64
                 ")", run->id, run->name, run->seed);
    fputs(" . \"\\n\" . ", body);
    labelf(plot, body, "mean %.4g s predicted, %.4g s played out", run->predicted_s, run->actual_s);
    fputs("\nset grid\nset key top left\nset size ratio -1\n"
          "set xlabel 'predicted by the solver (s)'\n"
          "set ylabel 'played out: end of the pair''s work since the round start (s)'\n", body);
    range_print(body, "x", both, 1);
    range_print(body, "y", both, 1);
    fputs("plot ", body);
    quote_path(body, data_path);
    fputs(" using 1:2 with points pt 7 ps 0.9 lc rgb '#4477aa' title 'pair, one per round', "
          "x with lines dt 2 lc rgb 'gray40' title 'y = x'\n", body);
    goto done;
query_failed:
    status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
done:
    sqlite3_finalize(stmt);
    return status;
}

/* ---- running a figure ---- */

static const struct { const char *name; FigureWrite write; } figures[] = {
    { "straggler", figure_straggler },
    { "accuracy", figure_accuracy },
    { "timeline", figure_timeline },
    { "pairing", figure_pairing },
    { "predicted", figure_predicted },
    { "speedup", figure_speedup },
};

static const struct { unsigned flag; const char *extension; const char *terminal; } image_formats[] = {
    { PLOT_PNG, "png", "pngcairo noenhanced font 'sans,10'" },
    { PLOT_SVG, "svg", "svg noenhanced font 'sans,11' background rgb 'white'" },
};

static char *join_path(const char *folder, const char *name, const char *extension)
{
    size_t length = strlen(folder);
    int slash = length > 0 && folder[length - 1] != '/';
    size_t size = length + strlen(name) + strlen(extension) + 3;
    char *path = malloc(size);
    if (path != NULL)
        snprintf(path, size, "%s%s%s%s%s", folder, slash ? "/" : "", name,
                 extension[0] ? "." : "", extension);
    return path;
}

/* Moves from to to; across filesystems by a copy to a hidden name and a rename. */
static int move_file(const char *from, const char *to, HsDiag *diag)
{
    if (rename(from, to) == 0) return HS_OK;
    if (errno != EXDEV)
        return hs_diag_set(diag, HS_E_IO, to, 0, "cannot write: %s", strerror(errno));
    size_t size = strlen(to) + 16;
    char *temporary = malloc(size);
    if (temporary == NULL) return nomem(diag);
    snprintf(temporary, size, "%s.partial", to);
    int status = HS_OK;
    FILE *in = fopen(from, "rb"), *out = in ? fopen(temporary, "wb") : NULL;
    if (in == NULL || out == NULL) {
        status = hs_diag_set(diag, HS_E_IO, in ? temporary : from, 0, "cannot open: %s",
                             strerror(errno));
    } else {
        char buffer[65536];
        size_t got;
        while ((got = fread(buffer, 1, sizeof buffer, in)) > 0)
            if (fwrite(buffer, 1, got, out) != got) break;
        if (ferror(in) || ferror(out))
            status = hs_diag_set(diag, HS_E_IO, temporary, 0, "cannot write: %s", strerror(errno));
    }
    if (in) fclose(in);
    if (out && fclose(out) != 0 && status == HS_OK)
        status = hs_diag_set(diag, HS_E_IO, temporary, 0, "cannot write: %s", strerror(errno));
    if (status == HS_OK && rename(temporary, to) != 0)
        status = hs_diag_set(diag, HS_E_IO, to, 0, "cannot write: %s", strerror(errno));
    if (status != HS_OK) unlink(temporary);
    free(temporary);
    return status;
}

/* Writes figure index's data and script (the writer runs once per format: labels for
 * PNG avoid characters no font draws), runs gnuplot and moves the images to the output
 * folder. A writer's skip is a note, not an error. */
static int run_figure(Plot *plot, int index, HsDiag *diag)
{
    const char *name = figures[index].name;
    char *data_path = join_path(plot->gnuplot.folder, name, "dat");
    char *script_path = join_path(plot->gnuplot.folder, name, "gp");
    char *body_text = NULL;
    size_t body_size = 0;
    FILE *data = NULL, *body = NULL, *script = NULL;
    int status = HS_OK, passes = 0;
    plot->note[0] = '\0';
    if (data_path == NULL || script_path == NULL) {
        status = nomem(diag);
        goto done;
    }
    script = fopen(script_path, "w");
    if (script == NULL) {
        status = hs_diag_set(diag, HS_E_IO, script_path, 0, "cannot write: %s", strerror(errno));
        goto done;
    }
    fputs("set encoding utf8\n", script);
    for (size_t f = 0; f < sizeof image_formats / sizeof image_formats[0]; f++) {
        if (!(plot->formats & image_formats[f].flag)) continue;
        Canvas canvas = { 1000, 600 };
        plot->raster = image_formats[f].flag == PLOT_PNG;
        plot->quiet = passes++ > 0;
        data = fopen(data_path, "w");  /* each pass writes the same numbers */
        body = open_memstream(&body_text, &body_size);
        if (data == NULL || body == NULL) {
            status = hs_diag_set(diag, HS_E_IO, data_path, 0, "cannot write: %s", strerror(errno));
            goto done;
        }
        status = figures[index].write(plot, data_path, data, body, &canvas, diag);
        int data_failed = fclose(data) != 0;
        data = NULL;
        int body_failed = fclose(body) != 0;
        body = NULL;
        if (status == PLOT_SKIP) {
            fprintf(plot->err, "hetsim plot: skipped %s: %s\n", name, plot->note);
            status = HS_OK;
            goto done;
        }
        if (status != HS_OK) goto done;
        if (data_failed || body_failed) {
            status = hs_diag_set(diag, HS_E_IO, data_path, 0, "cannot write the plot data");
            goto done;
        }
        char *image = join_path(plot->gnuplot.folder, name, image_formats[f].extension);
        if (image == NULL) {
            status = nomem(diag);
            goto done;
        }
        fprintf(script, "reset\nset terminal %s size %d,%d\nset output ", image_formats[f].terminal,
                canvas.width, canvas.height);
        quote_path(script, image);
        fputc('\n', script);
        fwrite(body_text, 1, body_size, script);
        fputs("unset output\n", script);
        free(image);
        free(body_text);
        body_text = NULL;
        body_size = 0;
    }
    int script_failed = fclose(script) != 0;
    script = NULL;
    if (script_failed) {
        status = hs_diag_set(diag, HS_E_IO, script_path, 0, "cannot write the gnuplot script");
        goto done;
    }
    status = gnuplot_run(&plot->gnuplot, script_path, plot->err, diag);
    if (status != HS_OK) goto done;
    for (size_t f = 0; f < sizeof image_formats / sizeof image_formats[0] && status == HS_OK; f++) {
        if (!(plot->formats & image_formats[f].flag)) continue;
        char *image = join_path(plot->gnuplot.folder, name, image_formats[f].extension);
        char *target = join_path(plot->out_dir, name, image_formats[f].extension);
        if (image == NULL || target == NULL) status = nomem(diag);
        else if ((status = move_file(image, target, diag)) == HS_OK) {
            fprintf(plot->out, "%s\n", target);
            fflush(plot->out);
        }
        free(image);
        free(target);
    }
done:
    if (data) fclose(data);
    if (body) fclose(body);
    if (script) fclose(script);
    free(body_text);
    free(data_path);
    free(script_path);
    return status;
}

/* mkdir -p: every missing folder of path. */
static int make_folders(const char *path, HsDiag *diag)
{
    char *copy = strdup(path);
    if (copy == NULL) return nomem(diag);
    int status = HS_OK;
    for (char *p = copy + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(copy, 0777) != 0 && errno != EEXIST) {
            status = hs_diag_set(diag, HS_E_IO, copy, 0, "cannot make the output folder: %s",
                                 strerror(errno));
            break;
        }
        *p = saved;
        if (saved == '\0') break;
    }
    struct stat st;
    if (status == HS_OK && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
        status = hs_diag_set(diag, HS_E_IO, path, 0, "the output folder is not a folder");
    free(copy);
    return status;
}

/* ---- choosing the runs ---- */

static void describe_group(Plot *plot)
{
    const RunSet *set = plot->set;
    const RunGroup *group = &set->groups[plot->group];
    const char *name = NULL;
    int same = 1;
    for (int i = 0; i < set->run_count; i++) {
        if (set->points[set->runs[i].point_index].group != plot->group) continue;
        if (name == NULL) name = set->runs[i].name;
        else if (strcmp(name, set->runs[i].name) != 0) same = 0;
    }
    if (group->sweep[0] != '\0')
        snprintf(plot->title, sizeof plot->title, "%s%ssweep %s", same && name ? name : "",
                 same && name ? ", " : "", group->sweep);
    else if (same && name != NULL)
        snprintf(plot->title, sizeof plot->title, "%s (runs outside any sweep)", name);
    else
        snprintf(plot->title, sizeof plot->title, "runs outside any sweep");
}

static int choose_runs(Plot *plot, HsDiag *diag)
{
    const PlotOptions *options = plot->options;
    const RunSet *set = plot->set;
    const RunFacts *asked = NULL;
    if (options->have_run) {
        for (int i = 0; i < set->run_count && asked == NULL; i++)
            if (set->runs[i].id == options->run_id) asked = &set->runs[i];
        if (asked == NULL)
            return hs_diag_set(diag, HS_E_INPUT, plot->db_path, 0, "no run with id %" PRId64,
                               options->run_id);
    }
    plot->group = -1;
    if (options->sweep != NULL) {
        for (int g = 0; g < set->group_count && plot->group < 0; g++)
            if (set->groups[g].sweep[0] != '\0' && strcmp(set->groups[g].sweep, options->sweep) == 0)
                plot->group = g;
        if (plot->group < 0)
            return hs_diag_set(diag, HS_E_INPUT, plot->db_path, 0, "no run of sweep '%s'",
                               options->sweep);
    } else if (asked != NULL) {
        plot->group = set->points[asked->point_index].group;
    } else {
        plot->group = 0;
        for (int g = 1; g < set->group_count; g++)
            if (set->groups[g].last_run > set->groups[plot->group].last_run) plot->group = g;
        if (set->group_count > 1)
            fprintf(plot->err, "hetsim plot: %s holds %d sweeps or sets of runs; plotting the "
                               "latest%s%s (choose with --sweep ID)\n",
                    plot->db_path, set->group_count, set->groups[plot->group].sweep[0] ? ", " : "",
                    set->groups[plot->group].sweep);
    }
    describe_group(plot);
    /* the per-run figures */
    plot->run = asked;
    for (int i = set->run_count - 1; i >= 0 && plot->run == NULL; i--)
        if (set->points[set->runs[i].point_index].group == plot->group &&
            isfinite(set->runs[i].makespan_s))
            plot->run = &set->runs[i];  /* the latest with rounds */
    for (int i = set->run_count - 1; i >= 0 && plot->run == NULL; i--)
        if (set->points[set->runs[i].point_index].group == plot->group) plot->run = &set->runs[i];
    plot->comdml = NULL;
    if (asked != NULL) {
        if (asked->pairings > 0) plot->comdml = asked;
        else
            snprintf(plot->comdml_missing, sizeof plot->comdml_missing,
                     "run %" PRId64 " (%s) has no pairings: not a ComDML run", asked->id, asked->method);
    } else {
        for (int i = set->run_count - 1; i >= 0 && plot->comdml == NULL; i--)
            if (set->points[set->runs[i].point_index].group == plot->group && set->runs[i].pairings > 0)
                plot->comdml = &set->runs[i];
        if (plot->comdml == NULL)
            snprintf(plot->comdml_missing, sizeof plot->comdml_missing,
                     "no ComDML run with pairings in %s", plot->title);
    }
    return HS_OK;
}

int plot_write(const PlotOptions *options, FILE *out, FILE *err, HsDiag *diag)
{
    Plot plot;
    memset(&plot, 0, sizeof plot);
    plot.options = options;
    plot.db_path = options->db_path;
    plot.out_dir = options->out_dir ? options->out_dir : PLOT_DEFAULT_DIR;
    plot.formats = options->formats ? options->formats : PLOT_PNG | PLOT_SVG;
    plot.out = out;
    plot.err = err;
    int status = dbread_open(options->db_path, &plot.db, diag);
    if (status != HS_OK) goto done;
    status = runset_load(plot.db, options->db_path, NULL, &plot.set, diag);
    if (status != HS_OK) goto done;
    if (plot.set->run_count == 0 && !options->have_run && options->sweep == NULL) {
        fprintf(err, "hetsim plot: %s holds no runs: nothing to plot\n", options->db_path);
        goto done;
    }
    if ((status = choose_runs(&plot, diag)) != HS_OK) goto done;
    if (index_styles(&plot) != HS_OK) {
        status = nomem(diag);
        goto done;
    }
    if ((status = gnuplot_open(&plot.gnuplot, options->gnuplot, diag)) != HS_OK) goto done;
    if ((status = make_folders(plot.out_dir, diag)) != HS_OK) goto done;
    for (size_t f = 0; f < sizeof figures / sizeof figures[0] && status == HS_OK; f++)
        status = run_figure(&plot, (int)f, diag);
done:
    gnuplot_close(&plot.gnuplot);
    free(plot.methods);
    free(plot.variant);
    runset_free(plot.set);
    sqlite3_close(plot.db);
    return status;
}
