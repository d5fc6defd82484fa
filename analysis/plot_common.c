/* plot_common.c — the helpers every figure of `hetsim plot` uses (plot_internal.h):
 * ranges, quoting, notes, queries, sorting and equality within 1e-12. Ranges are
 * computed here rather than autoscaled, so a flat line draws without warnings. */
#include "analysis/plot_internal.h"

#include "analysis/dbread.h"
#include "analysis/gnuplot.h"
#include "analysis/runset.h"
#include "base/grow.h"
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

void plot_data_comment(FILE *data, const char *fmt, ...)
{
    char text[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    /* a newline in a name would end the comment and start a line of data */
    for (char *p = text; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
    fprintf(data, "# %s\n", text);
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
    return hs_grow(array, capacity, count, size, first) == HS_OK ? 0 : -1;
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

/* ---- sorting, intervals ---- */

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

int plot_compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int plot_same(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (a == b) return 1;  /* also equal infinities */
    double scale = fmax(1.0, fmax(fabs(a), fabs(b)));
    return fabs(a - b) <= 1e-12 * scale;
}

double plot_clip(double value, double floor, double ceiling)
{
    if (!isnan(floor) && value < floor) return floor;
    if (!isnan(ceiling) && value > ceiling) return ceiling;
    return value;
}
