/* plot_outcomes.c — the figures of what heterogeneity costs, over the points of the
 * group (analysis/runset.h defines every figure): the straggler effect (round makespan
 * and idle share against the heterogeneity level) and the speedup over sync. One line
 * per series, a data block per series, mean and 95 % interval over seeds as error bars,
 * series dodged sideways so the bars at one level stay apart. */
#include "analysis/plot_internal.h"

#include "analysis/runset.h"
#include "base/hs_error.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- blocks: one per series ----
 * The figures draw items (points, speedup rows) that each belong to a series; every
 * series of the group with an item is a data block and a line. */

/* The group's series that have an item (item_series[i]: item i's series, -1 for an item
 * not drawn), in series order, into block_series; returns how many. */
static int plot_outcomes_blocks(const Plot *plot, const int *item_series, int item_count,
                                int *block_series)
{
    int blocks = 0;
    for (int s = 0; s < plot->set->series_count; s++) {
        if (plot->set->series[s].group != plot->group) continue;
        for (int i = 0; i < item_count; i++)
            if (item_series[i] == s) {
                block_series[blocks++] = s;
                break;
            }
    }
    return blocks;
}

/* The items of series s, by level (ties in item order), into members; returns how many. */
static int plot_outcomes_members(const int *item_series, int item_count, int s, const double *level,
                                 int *members)
{
    int n = 0;
    for (int i = 0; i < item_count; i++)
        if (item_series[i] == s) members[n++] = i;
    plot_sort_by(members, n, level);
    return n;
}

/* Columns of the longest series name of the blocks, at least `least`. */
static int plot_outcomes_longest(const RunSet *set, const int *block_series, int blocks, int least)
{
    int longest = least;
    for (int b = 0; b < blocks; b++) {
        int width = plot_text_columns(set->series[block_series[b]].name);
        if (width > longest) longest = width;
    }
    return longest;
}

/* Block b's line with error bars from the columns `using`, styled and titled by its
 * series. */
static void plot_outcomes_print_line(const Plot *plot, FILE *body, const char *data_path, int b,
                                     int series, const char *using)
{
    plot_quote_path(body, data_path);
    fprintf(body, " index %d using %s with yerrorlines lw 2 ", b, using);
    plot_print_series_style(body, plot, series);
    fputs(" title ", body);
    plot_label(plot, body, plot->set->series[series].name);
}

/* ---- straggler effect ---- */

int plot_figure_straggler(Plot *plot, const char *data_path, FILE *data, FILE *body,
                          PlotCanvas *canvas, HsDiag *diag)
{
    const RunSet *set = plot->set;
    const RunGroup *group = &set->groups[plot->group];
    int status = HS_OK, blocks = 0;
    RunStat *makespan = calloc((size_t)set->point_count + 1, sizeof *makespan);
    RunStat *idle = calloc((size_t)set->point_count + 1, sizeof *idle);
    double *level = calloc((size_t)set->point_count + 1, sizeof *level);
    int *point_series = calloc((size_t)set->point_count + 1, sizeof *point_series);
    int *members = calloc((size_t)set->point_count + 1, sizeof *members);
    int *block_series = calloc((size_t)set->series_count + 1, sizeof *block_series);
    PlotRange x = { 0 }, y_makespan = { 0 }, y_idle = { 0 };
    if (!makespan || !idle || !level || !point_series || !members || !block_series) {
        status = plot_nomem(diag);
        goto done;
    }
    for (int p = 0; p < set->point_count; p++) {
        point_series[p] = -1;
        if (set->points[p].group != plot->group) continue;
        level[p] = set->points[p].level;
        if (runset_point_stat(set, p, RUN_MAKESPAN, &makespan[p]) != HS_OK ||
            runset_point_stat(set, p, RUN_IDLE_SHARE, &idle[p]) != HS_OK) {
            status = plot_nomem(diag);
            goto done;
        }
        if (makespan[p].n > 0 || idle[p].n > 0) {
            plot_range_add(&x, level[p]);
            point_series[p] = set->points[p].series;
        }
    }
    blocks = plot_outcomes_blocks(plot, point_series, set->point_count, block_series);
    if (blocks == 0) {
        plot_note(plot, "no done run with rounds in %s", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    for (int b = 0; b < blocks; b++) {
        int n = plot_outcomes_members(point_series, set->point_count, block_series[b], level, members);
        double shift = plot_dodge(x, b, blocks);
        for (int k = 0; k < n; k++) {
            int p = members[k];
            fprintf(data, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", level[p] + shift,
                    makespan[p].mean, plot_low_of(makespan[p]), plot_high_of(makespan[p]), idle[p].mean,
                    plot_low_of(idle[p]), plot_high_of(idle[p]));
            plot_range_add(&y_makespan, plot_low_of(makespan[p]));
            plot_range_add(&y_makespan, plot_high_of(makespan[p]));
            plot_range_add(&y_idle, plot_low_of(idle[p]));
            plot_range_add(&y_idle, plot_high_of(idle[p]));
        }
        fputs("\n\n", data);
    }
    /* one legend under both panels: fixed margins keep the panels the same size */
    int rows = plot_key_rows(1300, blocks, plot_outcomes_longest(set, block_series, blocks, 0));
    canvas->width = 1300;
    canvas->height = 560 + 18 * rows;
    double bottom = (90.0 + 18.0 * rows) / canvas->height;
    fputs("set multiplot layout 1,2 title ", body);
    plot_labelf(plot, body, "Straggler effect: %s", plot->title);
    fprintf(body, " . \"\\n\" . 'mean and 95 %% interval over seeds' margins 0.07,0.98,%.4f,0.88"
                  " spacing 0.08\n", bottom);
    fprintf(body, "set grid\nset key at screen 0.5,%.4f center top vertical maxrows %d\n",
            bottom - 60.0 / canvas->height, rows);
    fputs("set xlabel ", body);
    plot_print_level_axis(plot, body, group, x);
    for (int panel = 0; panel < 2; panel++) {
        fputs(panel == 0 ? "set ylabel 'round makespan (s): mean of t_end - t_start'\n"
                         : "unset key\nset ylabel 'idle share of agent time'\n",
              body);
        plot_range_print(body, "y", panel == 0 ? y_makespan : y_idle, 1);
        fputs("plot ", body);
        for (int b = 0; b < blocks; b++) {
            if (b > 0) fputs(", \\\n     ", body);
            plot_outcomes_print_line(plot, body, data_path, b, block_series[b],
                                     panel == 0 ? "1:2:3:4" : "1:5:6:7");
        }
        fputs("\n", body);
    }
    fputs("unset multiplot\n", body);
done:
    free(makespan);
    free(idle);
    free(level);
    free(point_series);
    free(members);
    free(block_series);
    return status;
}

/* ---- speedup over sync ---- */

int plot_figure_speedup(Plot *plot, const char *data_path, FILE *data, FILE *body,
                        PlotCanvas *canvas, HsDiag *diag)
{
    const RunSet *set = plot->set;
    const RunGroup *group = &set->groups[plot->group];
    RunSpeedup *rows = NULL;
    int count = 0, status = HS_OK, blocks = 0, bases = 0;
    if (runset_speedups(set, &rows, &count) != HS_OK) return plot_nomem(diag);
    int *row_series = calloc((size_t)count + 1, sizeof *row_series);
    int *members = calloc((size_t)count + 1, sizeof *members);
    int *block_series = calloc((size_t)set->series_count + 1, sizeof *block_series);
    double *level = calloc((size_t)count + 1, sizeof *level);
    PlotRange x = { 0 }, y = { 0 };
    if (!row_series || !members || !block_series || !level) {
        status = plot_nomem(diag);
        goto done;
    }
    plot_range_add(&y, 1.0);
    for (int i = 0; i < count; i++) {
        level[i] = set->points[rows[i].point].level;
        row_series[i] = set->points[rows[i].point].series;
        if (set->points[rows[i].point].group == plot->group) plot_range_add(&x, level[i]);
    }
    blocks = plot_outcomes_blocks(plot, row_series, count, block_series);
    if (blocks == 0) {
        plot_note(plot, "no sync baseline with the same scenario point and seed in %s", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    for (int b = 0; b < blocks; b++) {
        int n = plot_outcomes_members(row_series, count, block_series[b], level, members);
        double shift = plot_dodge(x, b, blocks);
        for (int k = 0; k < n; k++) {
            const RunSpeedup *row = &rows[members[k]];
            fprintf(data, "%.17g %.17g %.17g %.17g\n", level[members[k]] + shift,
                    row->speedup.mean, plot_low_of(row->speedup), plot_high_of(row->speedup));
            plot_range_add(&y, plot_low_of(row->speedup));
            plot_range_add(&y, plot_high_of(row->speedup));
            bases |= 1 << row->basis;
        }
        fputs("\n\n", data);
    }
    const char *basis = bases == 1 << SPEEDUP_TARGET ? "t = time to target"
                        : bases == 1 << SPEEDUP_TOTAL ? "t = total virtual time"
                        : "t = time to target where both runs reached it, else total virtual time";
    canvas->width = 1000;
    int longest = plot_outcomes_longest(set, block_series, blocks, 4);  /* 4: "sync" */
    int legend_rows = plot_key_rows(canvas->width, blocks + 1, longest);
    canvas->height = 640 + 18 * legend_rows;
    fputs("set title ", body);
    plot_labelf(plot, body, "Speedup over sync: %s", plot->title);
    fputs(" . \"\\n\" . ", body);
    plot_labelf(plot, body, "%s; mean and 95 %% interval over seeds", basis);
    fputs("\nset grid\n", body);
    plot_print_key_under(body, canvas, legend_rows, 0.08);
    fputs("set xlabel ", body);
    plot_print_level_axis(plot, body, group, x);
    fputs("set ylabel 'speedup over sync: t_sync / t_method (> 1 is faster)'\n", body);
    plot_range_print(body, "y", y, 1);
    fputs("plot 1 with lines dt 2 lw 1.5 lc rgb 'gray40' title 'sync'", body);
    for (int b = 0; b < blocks; b++) {
        fputs(", \\\n     ", body);
        plot_outcomes_print_line(plot, body, data_path, b, block_series[b], "1:2:3:4");
    }
    fputs("\n", body);
done:
    free(rows);
    free(row_series);
    free(members);
    free(block_series);
    free(level);
    return status;
}
