/* plot_outcomes.c — the figures drawn against the heterogeneity level (analysis/runset.h
 * defines every figure): time to the target accuracy, the straggler effect (round time
 * and idle share) and the speedup over sync. One line per method at the true levels,
 * the mean over seeds with its 95 % interval as a transparent band, one panel per facet
 * (plot_levels.c), identical lines and panels merged.
 *
 * Data file: one block per (panel, line, measure), preceded by comment lines naming
 * them; columns `level mean low high n` with the level in SI units as the database's
 * label reads (the script divides by the axis unit). */
#include "analysis/plot_internal.h"

#include "analysis/runset.h"
#include "base/hs_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PLOT_MAX_MEASURES = 2 };

/* What a level figure shows: its measures (one panel row each) and words. */
typedef struct LevelFigure {
    const char *name;                       /* for the data comments */
    int measures;
    const char *ylabel[PLOT_MAX_MEASURES];
    int from_zero[PLOT_MAX_MEASURES];
    double floor[PLOT_MAX_MEASURES];        /* the band is clipped to [floor, ceiling] */
    double ceiling[PLOT_MAX_MEASURES];      /* (what the figure can be; NaN: open) */
    double reference;                       /* a dashed horizontal line (NaN: none) */
    const char *reference_title;
    const char *empty;                      /* why there is nothing to draw */
    char title[512];
    char band[160];                         /* what the band is, for the title's 2nd line */
    char basis[160];                        /* more of that line, said with or without a band */
} LevelFigure;

/* Counts the seeds behind the cells: the most done runs of any drawn point. */
static int plot_outcomes_seeds(const Plot *plot, const PlotLevels *lv)
{
    int most = 0;
    size_t cells = (size_t)lv->facet_count * lv->method_count * lv->level_count;
    for (size_t c = 0; c < cells; c++)
        if (lv->point[c] >= 0 && plot->set->points[lv->point[c]].done_count > most)
            most = plot->set->points[lv->point[c]].done_count;
    return most;
}

/* Draws stats[cell * measures + k] (cells as PlotLevels.point). */
static int plot_outcomes_draw(Plot *plot, PlotLevels *lv, const RunStat *stats, LevelFigure *fig,
                              const char *data_name, FILE *data, FILE *body, PlotCanvas *canvas,
                              HsDiag *diag)
{
    const RunGroup *group = &plot->set->groups[plot->group];
    int K = fig->measures, F = lv->facet_count, M = lv->method_count, L = lv->level_count;
    size_t cells = (size_t)F * M * L;
    int status = HS_OK;
    double *values = malloc((cells * K * 2 + 1) * sizeof *values);
    int *block = malloc(((size_t)F * M * K + 1) * sizeof *block);
    if (values == NULL || block == NULL) {
        status = plot_nomem(diag);
        goto done;
    }
    for (size_t c = 0; c < cells; c++)
        for (int k = 0; k < K; k++) {
            values[(c * K + k) * 2] = stats[c * K + k].mean;
            values[(c * K + k) * 2 + 1] = stats[c * K + k].half;
        }
    if (plot_levels_merge(lv, values, 2 * K) != HS_OK) {
        status = plot_nomem(diag);
        goto done;
    }
    /* the skip rules: a line needs two levels */
    if (L < 2) {
        plot_note(plot, "one heterogeneity level in %s (%s): a line needs two levels", plot->title,
                  group->axis_kind == RUNSET_AXIS_NONE ? "no swept key varies" : "one value of it");
        status = PLOT_SKIP;
        goto done;
    }
    int longest_line = 0, lines = 0, legend_longest = 0, panels = 0;
    for (int f = 0; f < F; f++) {
        if (!lv->facet_kept[f]) continue;
        panels++;
        for (int m = 0; m < M; m++) {
            if (!lv->method_kept[m]) continue;
            for (int k = 0; k < K; k++) {
                int n = 0;
                for (int l = 0; l < L; l++)
                    n += isfinite(stats[(((size_t)f * M + m) * L + l) * K + k].mean);
                if (n > longest_line) longest_line = n;
            }
        }
    }
    for (int m = 0; m < M; m++)
        if (lv->method_kept[m]) {
            lines++;
            int width = plot_text_columns(lv->method_labels[m]);
            if (width > legend_longest) legend_longest = width;
        }
    if (panels == 0 || lines == 0) {
        plot_note(plot, "%s in %s", fig->empty, plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    if (longest_line < 2) {
        plot_note(plot, "one point per line in %s: no method has the figure at two levels",
                  plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    /* the data: one block per (panel, line, measure) */
    PlotAxis axis;
    plot_axis_init(plot, group, &axis);
    PlotRange x = { 0 }, y[PLOT_MAX_MEASURES] = { { 0 } };
    int blocks = 0;
    for (int f = 0; f < F; f++)
        for (int m = 0; m < M; m++)
            for (int k = 0; k < K; k++) {
                int b = (f * M + m) * K + k, rows = 0;
                block[b] = -1;
                if (!lv->facet_kept[f] || !lv->method_kept[m]) continue;
                for (int l = 0; l < L; l++) {
                    RunStat s = stats[(((size_t)f * M + m) * L + l) * K + k];
                    if (!isfinite(s.mean)) continue;
                    if (rows++ == 0) {
                        plot_data_comment(data, "block %d: %s%s%s | panel: %s | series: %s",
                                          blocks, fig->name, K > 1 ? ", " : "",
                                          K > 1 ? fig->ylabel[k] : "",
                                          lv->facet_labels[f][0] ? lv->facet_labels[f] : "all",
                                          lv->method_labels[m]);
                        plot_data_comment(data, "level mean low high n");
                    }
                    double low = plot_clip(plot_low_of(s), fig->floor[k], fig->ceiling[k]);
                    double high = plot_clip(plot_high_of(s), fig->floor[k], fig->ceiling[k]);
                    fprintf(data, "%.17g %.17g %.17g %.17g %d\n", lv->levels[l], s.mean, low, high, s.n);
                    plot_range_add(&x, lv->levels[l]);
                    plot_range_add(&y[k], low);
                    plot_range_add(&y[k], high);
                }
                if (rows == 0) continue;
                fputs("\n\n", data);
                block[b] = blocks++;
            }
    for (int k = 0; k < K; k++)
        if (isfinite(fig->reference)) plot_range_add(&y[k], fig->reference);
    /* the grid: a row per measure and a column per panel when there are two measures */
    PlotLayout layout = { 0 };
    if (K > 1) {
        layout.rows = K;
        layout.cols = panels;
    } else {
        plot_layout_grid(plot, &layout, panels);
    }
    /* one panel per measure of a single facet: the facet goes into the title instead */
    int facet_titles = panels > 1;
    const char *single_facet = "";
    for (int f = 0; f < F; f++)
        if (lv->facet_kept[f] && panels == 1) single_facet = lv->facet_labels[f];
    layout.panel_titles = facet_titles;
    layout.title_lines = 2;
    layout.legend_entries = lines + (fig->reference_title != NULL);
    layout.legend_longest = legend_longest;
    plot_layout_size(plot, &layout, canvas);
    int seeds = plot_outcomes_seeds(plot, lv);
    char title[1200];
    snprintf(title, sizeof title, "%s\n%s%s%s%s%s", fig->title, single_facet,
             single_facet[0] ? "; " : "", seeds > 1 ? fig->band : "one seed per point (no band)",
             fig->basis[0] ? "; " : "", fig->basis);
    plot_layout_begin(plot, body, &layout, canvas, title);
    const char *x_using = "1";
    char scaled[64];
    if (axis.scale != 1) {
        snprintf(scaled, sizeof scaled, "($1/%.17g)", axis.scale);
        x_using = scaled;
    }
    int first = 1;
    for (int k = 0; k < K; k++)
        for (int f = 0; f < F; f++) {
            if (!lv->facet_kept[f]) continue;
            if (facet_titles) {
                fputs("set title ", body);
                plot_label(plot, body, lv->facet_labels[f]);
                fputs("\n", body);
            }
            plot_print_level_axis(plot, body, group, &axis, x, lv->levels, L);
            fputs("set ylabel ", body);
            plot_label(plot, body, fig->ylabel[k]);
            fputs("\n", body);
            plot_range_print(body, "y", y[k], fig->from_zero[k]);
            if (first) plot_layout_key(plot, body, &layout, canvas);
            fputs("plot ", body);
            if (first) {
                for (int m = 0; m < M; m++)
                    if (lv->method_kept[m]) plot_print_key_entry(plot, body, lv->methods[m], lv->method_labels[m]);
                if (fig->reference_title != NULL) {
                    fputs("keyentry with lines dt 2 lw 1.5 lc rgb 'gray40' title ", body);
                    plot_label(plot, body, fig->reference_title);
                    fputs(", \\\n     ", body);
                }
            }
            const char *separator = "";
            if (isfinite(fig->reference)) {
                fprintf(body, "%.17g with lines dt 2 lw 1.5 lc rgb 'gray40' notitle", fig->reference);
                separator = ", \\\n     ";
            }
            for (int m = 0; m < M; m++) {
                int b = block[(f * M + m) * K + k];
                if (b < 0) continue;
                PlotMethodLook look = plot_method_look(plot, lv->methods[m]);
                fputs(separator, body);
                separator = ", \\\n     ";
                plot_quote_path(body, data_name);
                fprintf(body, " index %d using %s:3:4 with filledcurves fc rgb '%s' notitle, \\\n     ",
                        b, x_using, look.colour);
                plot_quote_path(body, data_name);
                fprintf(body, " index %d using %s:2 with linespoints ", b, x_using);
                plot_print_method_style(body, plot, lv->methods[m]);
                fputs(" notitle", body);
            }
            if (separator[0] == '\0') fputs("NaN notitle", body);  /* an empty panel */
            fputs("\n", body);
            if (first) fputs("unset key\n", body);
            first = 0;
        }
    fputs("unset multiplot\n", body);
done:
    free(values);
    free(block);
    return status;
}

/* The stats of field over the table's points: stats[cell * K + k] for fields[k]. */
static int plot_outcomes_point_stats(const Plot *plot, const PlotLevels *lv, const RunField *fields,
                                     int K, RunStat **out)
{
    size_t cells = (size_t)lv->facet_count * lv->method_count * lv->level_count;
    RunStat *stats = calloc(cells * K + 1, sizeof *stats);
    if (stats == NULL) return HS_E_NOMEM;
    for (size_t c = 0; c < cells; c++)
        for (int k = 0; k < K; k++) {
            stats[c * K + k] = (RunStat){ 0, NAN, NAN };
            if (lv->point[c] >= 0 &&
                runset_point_stat(plot->set, lv->point[c], fields[k], &stats[c * K + k]) != HS_OK) {
                free(stats);
                return HS_E_NOMEM;
            }
        }
    *out = stats;
    return HS_OK;
}

static const char plot_band_words[] = "mean over seeds, band: 95 % interval (clipped to what can be)";

/* ---- time to target ---- */

int plot_figure_time_to_target(Plot *plot, const char *data_name, FILE *data, FILE *body,
                               PlotCanvas *canvas, HsDiag *diag)
{
    const RunSet *set = plot->set;
    int with_target = 0, reached = 0, done = 0, same_target = 1;
    double target = NAN;
    for (int i = 0; i < set->run_count; i++) {
        const RunFacts *run = &set->runs[i];
        if (set->points[run->point_index].group != plot->group || !run->done) continue;
        done++;
        if (isnan(run->target_accuracy)) continue;
        if (with_target++ == 0) target = run->target_accuracy;
        else if (run->target_accuracy != target) same_target = 0;
        reached += isfinite(run->time_to_target_s);
    }
    if (with_target == 0) {
        plot_note(plot, "no run of %s has a target accuracy ([run] target_accuracy)", plot->title);
        return PLOT_SKIP;
    }
    if (reached == 0) {
        plot_note(plot, "no run of %s reached its target accuracy%s", plot->title,
                  done > 0 && isnan(set->runs[0].final_accuracy) ? " (timing-mode runs evaluate nothing)" : "");
        return PLOT_SKIP;
    }
    PlotLevels lv;
    RunStat *stats = NULL;
    if (plot_levels_build(plot, &lv) != HS_OK) return plot_nomem(diag);
    RunField field = RUN_TIME_TO_TARGET;
    if (plot_outcomes_point_stats(plot, &lv, &field, 1, &stats) != HS_OK) {
        plot_levels_free(&lv);
        return plot_nomem(diag);
    }
    LevelFigure fig = { .name = "time to target", .measures = 1, .from_zero = { 1 },
                        .floor = { 0 }, .ceiling = { NAN },
                        .reference = NAN, .empty = "no done run reached its target" };
    char ylabel[128];
    if (same_target) snprintf(ylabel, sizeof ylabel, "time to %g test accuracy (virtual s)", target);
    else snprintf(ylabel, sizeof ylabel, "time to the run's target accuracy (virtual s)");
    fig.ylabel[0] = ylabel;
    snprintf(fig.title, sizeof fig.title, "Time to target accuracy: %s", plot->title);
    snprintf(fig.band, sizeof fig.band, "%s that reached the target", plot_band_words);
    int status = plot_outcomes_draw(plot, &lv, stats, &fig, data_name, data, body, canvas, diag);
    if (status == HS_OK && reached < with_target)
        plot_inform(plot, "time-to-target: %d of %d runs never reached the target; a point is the "
                          "mean over the seeds that did\n", with_target - reached, with_target);
    free(stats);
    plot_levels_free(&lv);
    return status;
}

/* ---- straggler effect ---- */

int plot_figure_straggler(Plot *plot, const char *data_name, FILE *data, FILE *body,
                          PlotCanvas *canvas, HsDiag *diag)
{
    PlotLevels lv;
    RunStat *stats = NULL;
    if (plot_levels_build(plot, &lv) != HS_OK) return plot_nomem(diag);
    static const RunField fields[2] = { RUN_MAKESPAN, RUN_IDLE_SHARE };
    if (plot_outcomes_point_stats(plot, &lv, fields, 2, &stats) != HS_OK) {
        plot_levels_free(&lv);
        return plot_nomem(diag);
    }
    LevelFigure fig = { .name = "straggler effect", .measures = 2, .from_zero = { 1, 1 },
                        .floor = { 0, 0 }, .ceiling = { NAN, 1 },
                        .reference = NAN, .empty = "no done run with rounds",
                        .ylabel = { "round time (virtual s)", "idle share of agent time" } };
    snprintf(fig.title, sizeof fig.title, "Straggler effect: %s", plot->title);
    snprintf(fig.band, sizeof fig.band, "%s", plot_band_words);
    int status = plot_outcomes_draw(plot, &lv, stats, &fig, data_name, data, body, canvas, diag);
    free(stats);
    plot_levels_free(&lv);
    return status;
}

/* ---- speedup over sync ---- */

int plot_figure_speedup(Plot *plot, const char *data_name, FILE *data, FILE *body,
                        PlotCanvas *canvas, HsDiag *diag)
{
    const RunSet *set = plot->set;
    RunSpeedup *rows = NULL;
    int count = 0, bases = 0, status;
    if (runset_speedups(set, &rows, &count) != HS_OK) return plot_nomem(diag);
    PlotLevels lv;
    if (plot_levels_build(plot, &lv) != HS_OK) {
        free(rows);
        return plot_nomem(diag);
    }
    size_t cells = (size_t)lv.facet_count * lv.method_count * lv.level_count;
    RunStat *stats = calloc(cells + 1, sizeof *stats);
    if (stats == NULL) {
        free(rows);
        plot_levels_free(&lv);
        return plot_nomem(diag);
    }
    int found = 0;
    for (size_t c = 0; c < cells; c++) {
        stats[c] = (RunStat){ 0, NAN, NAN };
        for (int i = 0; i < count && lv.point[c] >= 0; i++)
            if (rows[i].point == lv.point[c]) {
                stats[c] = rows[i].speedup;
                bases |= 1 << rows[i].basis;
                found++;
            }
    }
    if (found == 0) {
        plot_note(plot, "no sync baseline with the same scenario point and seed in %s", plot->title);
        status = PLOT_SKIP;
    } else {
        LevelFigure fig = { .name = "speedup over sync", .measures = 1, .from_zero = { 1 },
                            .floor = { 0 }, .ceiling = { NAN },
                            .reference = 1, .reference_title = "sync",
                            .empty = "no speedup over sync",
                            .ylabel = { "speedup over sync (t_sync / t_method)" } };
        snprintf(fig.title, sizeof fig.title, "Speedup over sync: %s", plot->title);
        snprintf(fig.band, sizeof fig.band, "%s", plot_band_words);
        snprintf(fig.basis, sizeof fig.basis, "t = %s",
                 bases == 1 << SPEEDUP_TARGET ? "time to target"
                 : bases == 1 << SPEEDUP_TOTAL ? "total virtual time"
                 : "time to target where both runs reached it, else total virtual time");
        status = plot_outcomes_draw(plot, &lv, stats, &fig, data_name, data, body, canvas, diag);
    }
    free(stats);
    free(rows);
    plot_levels_free(&lv);
    return status;
}
