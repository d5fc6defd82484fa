/* plot_accuracy.c — test accuracy of the averaged model (metrics rows with agent NULL)
 * against virtual time: one panel per heterogeneity level (and per facet), one line per
 * method, the mean over seeds with a 95 % band, the target accuracy dashed when every
 * run has the same one.
 *
 * Seeds evaluate at different virtual times, so a point's curve is taken at the union
 * of its runs' evaluation times between the latest first and the earliest last one,
 * each run holding its last evaluated accuracy until the next (the accuracy its model
 * had at that time); a point of one seed is exactly its rows. Data file: one block per
 * (panel, line), columns `t mean low high n`. */
#include "analysis/plot_internal.h"

#include "analysis/dbread.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char plot_accuracy_sql[] =
    "SELECT t, test_accuracy FROM metrics WHERE run_id = ?1 AND agent IS NULL"
    " AND t IS NOT NULL AND test_accuracy IS NOT NULL ORDER BY t, rowid";

/* A point's curve. */
typedef struct AccuracyCurve {
    int count;
    double *t;        /* (count) */
    RunStat *stat;    /* (count) */
} AccuracyCurve;

/* One run's rows. */
typedef struct AccuracyRows {
    int count, capacity;
    double *t, *accuracy;
} AccuracyRows;

static int plot_accuracy_read(Plot *plot, sqlite3_stmt *stmt, int64_t run_id, AccuracyRows *rows,
                              HsDiag *diag)
{
    rows->count = 0;
    sqlite3_reset(stmt);
    sqlite3_bind_int64(stmt, 1, run_id);
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int capacity = rows->capacity;
        if (plot_grow((void **)&rows->t, rows->count, &capacity, 64, sizeof *rows->t) != 0 ||
            plot_grow((void **)&rows->accuracy, rows->count, &rows->capacity, 64,
                      sizeof *rows->accuracy) != 0)
            return plot_nomem(diag);
        rows->t[rows->count] = sqlite3_column_double(stmt, 0);
        rows->accuracy[rows->count++] = sqlite3_column_double(stmt, 1);
    }
    if (rc != SQLITE_DONE) return dbread_query_fail(plot->db, rc, plot->db_path, diag);
    return HS_OK;
}

/* The accuracy a run had at time t: its last row at or before t (rows ordered by t). */
static double plot_accuracy_at(const double *t, const double *accuracy, int count, double at)
{
    double value = NAN;
    for (int i = 0; i < count && t[i] <= at; i++) value = accuracy[i];
    return value;
}

/* The curve of point p over its done runs; *evaluations the most rows of one run. */
static int plot_accuracy_curve(Plot *plot, sqlite3_stmt *stmt, int p, AccuracyCurve *curve,
                               int *evaluations, int *measured, HsDiag *diag)
{
    const RunPoint *point = &plot->set->points[p];
    AccuracyRows *rows = calloc((size_t)point->run_count + 1, sizeof *rows);
    double *times = NULL, *column = NULL;
    int status = HS_OK, runs = 0, total = 0;
    memset(curve, 0, sizeof *curve);
    if (rows == NULL) return plot_nomem(diag);
    double from = -INFINITY, to = INFINITY;
    for (int k = 0; k < point->run_count && status == HS_OK; k++) {
        const RunFacts *run = &plot->set->runs[point->runs[k]];
        if (!run->done) continue;
        status = plot_accuracy_read(plot, stmt, run->id, &rows[runs], diag);
        if (status != HS_OK || rows[runs].count == 0) continue;
        *measured = 1;
        if (rows[runs].count > *evaluations) *evaluations = rows[runs].count;
        from = fmax(from, rows[runs].t[0]);
        to = fmin(to, rows[runs].t[rows[runs].count - 1]);
        total += rows[runs].count;
        runs++;
    }
    if (status != HS_OK || runs == 0 || !(from <= to)) goto done;
    times = malloc((size_t)total * sizeof *times);
    column = malloc((size_t)runs * sizeof *column);
    if (times == NULL || column == NULL) {
        status = plot_nomem(diag);
        goto done;
    }
    int n = 0;
    for (int r = 0; r < runs; r++)
        for (int i = 0; i < rows[r].count; i++)
            if (rows[r].t[i] >= from && rows[r].t[i] <= to) times[n++] = rows[r].t[i];
    qsort(times, (size_t)n, sizeof *times, plot_compare_double);
    curve->t = malloc((size_t)n * sizeof *curve->t);
    curve->stat = malloc((size_t)n * sizeof *curve->stat);
    if (curve->t == NULL || curve->stat == NULL) {
        status = plot_nomem(diag);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (curve->count > 0 && curve->t[curve->count - 1] == times[i]) continue;
        for (int r = 0; r < runs; r++)
            column[r] = plot_accuracy_at(rows[r].t, rows[r].accuracy, rows[r].count, times[i]);
        curve->t[curve->count] = times[i];
        runset_stat(column, runs, &curve->stat[curve->count]);
        curve->count++;
    }
done:
    for (int r = 0; r < point->run_count; r++) {
        free(rows[r].t);
        free(rows[r].accuracy);
    }
    free(rows);
    free(times);
    free(column);
    return status;
}

static int plot_accuracy_same(void *ctx, size_t a, size_t b)
{
    const AccuracyCurve *curves = ctx;
    if (curves[a].count != curves[b].count) return 0;
    for (int i = 0; i < curves[a].count; i++)
        if (!plot_same(curves[a].t[i], curves[b].t[i]) ||
            !plot_same(curves[a].stat[i].mean, curves[b].stat[i].mean) ||
            !plot_same(curves[a].stat[i].half, curves[b].stat[i].half))
            return 0;
    return 1;
}

static int plot_accuracy_empty(void *ctx, size_t cell)
{
    const AccuracyCurve *curves = ctx;
    return curves[cell].count == 0;
}

/* The target every run of the group shares, NaN when they differ or have none. */
static double plot_accuracy_target(const Plot *plot)
{
    const RunSet *set = plot->set;
    double target = NAN;
    int first = 1;
    for (int i = 0; i < set->run_count; i++) {
        const RunFacts *run = &set->runs[i];
        if (set->points[run->point_index].group != plot->group) continue;
        if (first) target = run->target_accuracy;
        else if (!plot_same(target, run->target_accuracy)) return NAN;
        first = 0;
    }
    return target;
}

static void plot_accuracy_write_script(Plot *plot, const PlotLevels *lv, const AccuracyCurve *curves,
                                       const int *block, int panels, PlotRange x, PlotRange y,
                                       double target, int seeds, const char *data_name, FILE *body,
                                       PlotCanvas *canvas)
{
    const RunGroup *group = &plot->set->groups[plot->group];
    int F = lv->facet_count, M = lv->method_count, L = lv->level_count, kept_facets = 0;
    int lines = 0, longest = 6;
    for (int f = 0; f < F; f++) kept_facets += lv->facet_kept[f];
    for (int m = 0; m < M; m++)
        if (lv->method_kept[m]) {
            lines++;
            if (plot_text_columns(lv->method_labels[m]) > longest)
                longest = plot_text_columns(lv->method_labels[m]);
        }
    PlotLayout layout = { 0 };
    if (kept_facets > 1 && L > 1) {
        layout.rows = kept_facets;
        layout.cols = L;
    } else {
        plot_layout_grid(plot, &layout, panels);
    }
    layout.panel_titles = L > 1 || kept_facets > 1;
    layout.title_lines = 2;
    layout.legend_entries = lines + isfinite(target);
    layout.legend_longest = longest;
    plot_layout_size(plot, &layout, canvas);
    char title[1200];
    snprintf(title, sizeof title, "Test accuracy against virtual time: %s\n%s", plot->title,
             seeds > 1 ? "averaged model; mean over seeds, band: 95 % interval (clipped to [0, 1])"
                       : "averaged model; one seed per point");
    plot_layout_begin(plot, body, &layout, canvas, title);
    PlotAxis axis;
    plot_axis_init(plot, group, &axis);
    fputs("set xlabel 'virtual time (s)'\nset ylabel 'test accuracy'\n", body);
    plot_range_print(body, "x", x, 1);
    plot_range_print(body, "y", y, 0);
    int first = 1;
    for (int f = 0; f < F; f++) {
        if (!lv->facet_kept[f]) continue;
        for (int l = 0; l < L; l++) {
            int any = 0;
            for (int m = 0; m < M; m++) any |= block[((size_t)f * M + m) * L + l] >= 0;
            if (!any) continue;
            if (layout.panel_titles) {
                char words[300], text[700];
                plot_level_words(plot, group, &axis, lv->levels[l], words, sizeof words);
                if (L > 1 && lv->facet_labels[f][0] != '\0')
                    snprintf(text, sizeof text, "%s; %s", words, lv->facet_labels[f]);
                else
                    snprintf(text, sizeof text, "%s", L > 1 ? words : lv->facet_labels[f]);
                fputs("set title ", body);
                plot_label(plot, body, text);
                fputs("\n", body);
            }
            if (first) plot_layout_key(plot, body, &layout, canvas);
            fputs("plot ", body);
            if (first) {
                for (int m = 0; m < M; m++)
                    if (lv->method_kept[m]) plot_print_key_entry(plot, body, lv->methods[m], lv->method_labels[m]);
                if (isfinite(target)) {
                    fputs("keyentry with lines dt 2 lw 1.5 lc rgb 'gray40' title ", body);
                    plot_labelf(plot, body, "target %g", target);
                    fputs(", \\\n     ", body);
                }
            }
            if (isfinite(target)) fprintf(body, "%.17g with lines dt 2 lw 1.5 lc rgb 'gray40' notitle", target);
            else fputs("NaN notitle", body);
            for (int m = 0; m < M; m++) {
                size_t cell = ((size_t)f * M + m) * L + l;
                if (block[cell] < 0) continue;
                PlotMethodLook look = plot_method_look(plot, lv->methods[m]);
                int band = 0;
                for (int i = 0; i < curves[cell].count; i++) band |= !isnan(curves[cell].stat[i].half);
                if (band) {
                    fputs(", \\\n     ", body);
                    plot_quote_path(body, data_name);
                    fprintf(body, " index %d using 1:3:4 with filledcurves fc rgb '%s' notitle", block[cell],
                            look.colour);
                }
                fputs(", \\\n     ", body);
                plot_quote_path(body, data_name);
                /* markers at a few evaluations only: a marker per evaluation hides the line */
                int every = curves[cell].count > 12 ? curves[cell].count / 8 : 1;
                fprintf(body, " index %d using 1:2 with linespoints pi %d ", block[cell], every);
                plot_print_method_style(body, plot, lv->methods[m]);
                fputs(" notitle", body);
            }
            fputs("\n", body);
            if (first) fputs("unset key\n", body);
            first = 0;
        }
    }
    fputs("unset multiplot\n", body);
}

int plot_figure_accuracy(Plot *plot, const char *data_name, FILE *data, FILE *body,
                         PlotCanvas *canvas, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    PlotLevels lv;
    AccuracyCurve *curves = NULL;
    int *block = NULL;
    int status = HS_OK, evaluations = 0, measured = 0;
    size_t cells = 0;
    if (plot_levels_build(plot, &lv) != HS_OK) return plot_nomem(diag);
    cells = (size_t)lv.facet_count * lv.method_count * lv.level_count;
    curves = calloc(cells + 1, sizeof *curves);
    block = malloc((cells + 1) * sizeof *block);
    if (curves == NULL || block == NULL) {
        status = plot_nomem(diag);
        goto done;
    }
    int rc = sqlite3_prepare_v2(plot->db, plot_accuracy_sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
        status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
        goto done;
    }
    for (size_t c = 0; c < cells && status == HS_OK; c++)
        if (lv.point[c] >= 0)
            status = plot_accuracy_curve(plot, stmt, lv.point[c], &curves[c], &evaluations, &measured, diag);
    if (status != HS_OK) goto done;
    if (!measured) {
        plot_note(plot, "no accuracy measured in %s (timing-mode runs evaluate nothing)", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    if (evaluations < 2) {
        plot_note(plot, "one evaluation per run in %s: a line needs two", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    if (plot_levels_merge_by(&lv, plot_accuracy_same, plot_accuracy_empty, curves) != HS_OK) {
        status = plot_nomem(diag);
        goto done;
    }
    PlotRange x = { 0 }, y = { 0 };
    double target = plot_accuracy_target(plot);
    if (isfinite(target)) plot_range_add(&y, target);
    int blocks = 0, panels = 0, seeds = 0;
    for (int f = 0; f < lv.facet_count; f++)
        for (int l = 0; l < lv.level_count; l++) {
            int any = 0;
            for (int m = 0; m < lv.method_count; m++) {
                size_t cell = ((size_t)f * lv.method_count + m) * lv.level_count + l;
                block[cell] = -1;
                if (!lv.facet_kept[f] || !lv.method_kept[m] || curves[cell].count == 0) continue;
                char words[300];
                PlotAxis axis;
                plot_axis_init(plot, &plot->set->groups[plot->group], &axis);
                plot_level_words(plot, &plot->set->groups[plot->group], &axis, lv.levels[l], words,
                                 sizeof words);
                plot_data_comment(data, "block %d: accuracy | panel: %s%s%s | series: %s", blocks, words,
                                  lv.facet_labels[f][0] ? "; " : "", lv.facet_labels[f],
                                  lv.method_labels[m]);
                plot_data_comment(data, "t mean low high n");
                for (int i = 0; i < curves[cell].count; i++) {
                    RunStat s = curves[cell].stat[i];
                    /* an accuracy is in [0, 1]: so is its band */
                    double low = plot_clip(plot_low_of(s), 0, 1), high = plot_clip(plot_high_of(s), 0, 1);
                    fprintf(data, "%.17g %.17g %.17g %.17g %d\n", curves[cell].t[i], s.mean, low, high, s.n);
                    plot_range_add(&x, curves[cell].t[i]);
                    plot_range_add(&y, low);
                    plot_range_add(&y, high);
                    if (s.n > seeds) seeds = s.n;
                }
                fputs("\n\n", data);
                block[cell] = blocks++;
                any = 1;
            }
            panels += any;
        }
    plot_accuracy_write_script(plot, &lv, curves, block, panels, x, y, target, seeds, data_name, body,
                               canvas);
done:
    sqlite3_finalize(stmt);
    for (size_t c = 0; c < cells && curves != NULL; c++) {
        free(curves[c].t);
        free(curves[c].stat);
    }
    free(curves);
    free(block);
    plot_levels_free(&lv);
    return status;
}
