/* plot_common.c — the helpers every figure of `hetsim plot` uses (plot_internal.h):
 * ranges, quoting, notes, the heterogeneity axis, line styles and legends under the
 * plot area. Ranges are computed here rather than autoscaled, so a single point or a
 * flat line draws without warnings. */
#include "analysis/plot_internal.h"

#include "analysis/dbread.h"
#include "analysis/gnuplot.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ranges ---- */

void plot_range_add(PlotRange *range, double value)
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

void plot_range_print(FILE *body, const char *axis, PlotRange range, int from_zero)
{
    if (!range.any) range.lo = range.hi = 0;
    if (from_zero && range.lo > 0) range.lo = 0;
    double span = range.hi - range.lo;
    double pad = span > 0 ? 0.05 * span : (range.hi != 0 ? 0.1 * fabs(range.hi) : 1.0);
    double lo = range.lo - pad, hi = range.hi + pad;
    if (from_zero && range.lo >= 0) lo = 0;
    fprintf(body, "set %srange [%.17g:%.17g]\n", axis, lo, hi);
}

/* ---- text, notes, errors ---- */

void plot_quote_path(FILE *body, const char *path)
{
    gnuplot_quote(body, path);
}

void plot_label(const Plot *plot, FILE *body, const char *text)
{
    gnuplot_quote_drawn(body, text, plot->raster ? &plot->gnuplot : NULL);
}

void plot_labelf(const Plot *plot, FILE *body, const char *fmt, ...)
{
    char text[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    plot_label(plot, body, text);
}

void plot_inform(const Plot *plot, const char *fmt, ...)
{
    if (plot->quiet) return;
    va_list args;
    va_start(args, fmt);
    fputs("hetsim plot: ", plot->err);
    vfprintf(plot->err, fmt, args);
    va_end(args);
}

void plot_note(Plot *plot, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(plot->note, sizeof plot->note, fmt, args);
    va_end(args);
}

int plot_nomem(HsDiag *diag)
{
    return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
}

int plot_text_columns(const char *text)
{
    int width = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        width += (*p & 0xC0) != 0x80;
    return width;
}

int plot_grow(void **array, int count, int *capacity, int first, size_t size)
{
    if (count < *capacity) return 0;
    int more = *capacity ? 2 * *capacity : first;
    void *grown = realloc(*array, (size_t)more * size);
    if (grown == NULL) return -1;
    *array = grown;
    *capacity = more;
    return 0;
}

/* ---- queries ---- */

int plot_query_run(const Plot *plot, const char *sql, int64_t run_id, sqlite3_stmt **stmt,
                   HsDiag *diag)
{
    int rc = sqlite3_prepare_v2(plot->db, sql, -1, stmt, NULL);
    if (rc != SQLITE_OK) {
        int status = plot_query_failed(plot, *stmt, rc, diag);
        *stmt = NULL;
        return status;
    }
    sqlite3_bind_int64(*stmt, 1, run_id);
    return HS_OK;
}

int plot_query_failed(const Plot *plot, sqlite3_stmt *stmt, int rc, HsDiag *diag)
{
    int status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
    sqlite3_finalize(stmt);
    return status;
}

int plot_query_nomem(sqlite3_stmt *stmt, HsDiag *diag)
{
    sqlite3_finalize(stmt);
    return plot_nomem(diag);
}

/* ---- axes, sorting, intervals ---- */

void plot_print_level_axis(const Plot *plot, FILE *body, const RunGroup *group, PlotRange levels)
{
    plot_label(plot, body, group->axis_title);
    fputs("\n", body);
    if (group->axis_kind == RUNSET_AXIS_INDEX || group->axis_kind == RUNSET_AXIS_NONE) {
        fputs("set xtics (", body);
        if (group->axis_kind == RUNSET_AXIS_NONE) {
            plot_label(plot, body, "all points");
            fputs(" 0", body);
        }
        for (int k = 0; k < group->level_count; k++) {
            if (k > 0) fputs(", ", body);
            plot_label(plot, body, group->level_names[k]);
            fprintf(body, " %d", k);
        }
        fputs(")\n", body);
        fprintf(body, "set xrange [-0.5:%.17g]\n", levels.any ? levels.hi + 0.5 : 0.5);
    } else {
        plot_range_print(body, "x", levels, 0);
    }
}

void plot_sort_by(int *idx, int n, const double *key)
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

int plot_compare_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

double plot_low_of(RunStat s)
{
    return isnan(s.half) ? s.mean : s.mean - s.half;
}

double plot_high_of(RunStat s)
{
    return isnan(s.half) ? s.mean : s.mean + s.half;
}

double plot_dodge(PlotRange x, int k, int n)
{
    double span = x.any && x.hi > x.lo ? x.hi - x.lo : 1.0;
    return (k - (n - 1) / 2.0) * 0.008 * span;
}

/* ---- line styles: one colour per method, one dash and point per variant ---- */

const char *const plot_palette[PLOT_PALETTE_SIZE] = {
    "#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#000000", "#bbbbbb",
};

/* What follows the method in a series name (", data.partition=iid"), "" when nothing. */
static const char *plot_series_variant(const RunSeries *series)
{
    size_t length = strlen(series->method);
    return strncmp(series->name, series->method, length) == 0 ? series->name + length : series->name;
}

int plot_index_styles(Plot *plot)
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
        const char *variant = plot_series_variant(&set->series[s]);
        int v = 0;
        while (v < variant_count && strcmp(variants[v], variant) != 0) v++;
        if (v == variant_count) variants[variant_count++] = variant;
        plot->variant[s] = v;
    }
    free(variants);
    return HS_OK;
}

static int plot_method_rank(const Plot *plot, const char *method)
{
    for (int m = 0; m < plot->method_count; m++)
        if (strcmp(plot->methods[m], method) == 0) return m;
    return plot->method_count;
}

void plot_print_method_colour(FILE *body, const Plot *plot, const char *method)
{
    fprintf(body, "lc rgb '%s'", plot_palette[plot_method_rank(plot, method) % PLOT_PALETTE_SIZE]);
}

void plot_print_series_style(FILE *body, const Plot *plot, int series)
{
    static const int points[] = { 7, 5, 9, 11, 13, 15 };
    int variant = plot->variant[series];
    plot_print_method_colour(body, plot, plot->set->series[series].method);
    fprintf(body, " dt %d pt %d", variant % 5 + 1, points[variant % 6]);
}

/* ---- legends ---- */

int plot_key_rows(int canvas_width, int entries, int longest)
{
    int column = 7 * longest + 70;
    int columns = (int)(0.9 * canvas_width) / (column > 0 ? column : 1);
    if (columns < 1) columns = 1;
    if (columns > 4) columns = 4;
    int rows = (entries + columns - 1) / columns;
    return rows < 1 ? 1 : rows;
}

void plot_print_key_under(FILE *body, const PlotCanvas *canvas, int rows, double left)
{
    double bottom = (95.0 + 18.0 * rows) / canvas->height;
    fprintf(body, "set lmargin at screen %.4f\nset rmargin at screen 0.97\n"
                  "set bmargin at screen %.4f\nset tmargin at screen %.4f\n", left, bottom,
            1.0 - 70.0 / canvas->height);
    fprintf(body, "set key at screen 0.5,%.4f center top vertical maxrows %d\n",
            bottom - 62.0 / canvas->height, rows);
}
