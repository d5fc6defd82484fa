/* plot_idle.c — how idle time spreads over the agents at the most heterogeneous level of
 * the group: per method, the empirical distribution (CDF) of each agent's idle share,
 * one value per agent and done run (seeds pooled), one panel per facet.
 *
 * An agent's idle share in a run is sum(agent_rounds.idle_s) / sum(rounds.t_end -
 * t_start) — the share of the run's round time it waited, the per-agent form of the
 * straggler figure's idle share. Data file: one block per (panel, method), columns
 * `idle_share cumulative_fraction`, sorted. */
#include "analysis/plot_internal.h"

#include "analysis/dbread.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char plot_idle_sql[] =
    "SELECT sum(a.idle_s) / (SELECT sum(t_end - t_start) FROM rounds WHERE run_id = ?1)"
    " FROM agent_rounds a WHERE a.run_id = ?1 AND a.idle_s IS NOT NULL"
    " GROUP BY a.agent ORDER BY a.agent";

typedef struct IdleValues {
    int count, capacity;
    double *share;   /* sorted ascending */
    int summary;     /* done runs recorded with [run] record = summary: no shares */
} IdleValues;

static int plot_idle_same(void *ctx, size_t a, size_t b)
{
    const IdleValues *v = ctx;
    if (v[a].count != v[b].count) return 0;
    for (int i = 0; i < v[a].count; i++)
        if (!plot_same(v[a].share[i], v[b].share[i])) return 0;
    return 1;
}

static int plot_idle_empty(void *ctx, size_t cell)
{
    const IdleValues *v = ctx;
    return v[cell].count == 0;
}

/* The shares of point p's done runs into v, sorted. */
static int plot_idle_read(Plot *plot, sqlite3_stmt *stmt, int p, IdleValues *v, HsDiag *diag)
{
    const RunPoint *point = &plot->set->points[p];
    for (int k = 0; k < point->run_count; k++) {
        const RunFacts *run = &plot->set->runs[point->runs[k]];
        if (!run->done) continue;
        if (run->summary) {
            v->summary++;
            continue;
        }
        sqlite3_reset(stmt);
        sqlite3_bind_int64(stmt, 1, run->id);
        int rc;
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            double share = sqlite3_column_double(stmt, 0);
            if (sqlite3_column_type(stmt, 0) == SQLITE_NULL || !isfinite(share)) continue;
            if (plot_grow((void **)&v->share, v->count, &v->capacity, 32, sizeof *v->share) != 0)
                return plot_nomem(diag);
            v->share[v->count++] = share;
        }
        if (rc != SQLITE_DONE) return dbread_query_fail(plot->db, rc, plot->db_path, diag);
    }
    if (v->count > 1) /* share is NULL when no run had a finite share (qsort's argument is nonnull) */
        qsort(v->share, (size_t)v->count, sizeof *v->share, plot_compare_double);
    return HS_OK;
}

int plot_figure_idle(Plot *plot, const char *data_name, FILE *data, FILE *body, PlotCanvas *canvas,
                     HsDiag *diag)
{
    const RunGroup *group = &plot->set->groups[plot->group];
    PlotLevels lv;
    sqlite3_stmt *stmt = NULL;
    IdleValues *values = NULL;
    int *block = NULL, status = HS_OK;
    if (plot_levels_build(plot, &lv) != HS_OK) return plot_nomem(diag);
    /* cells of the highest level only: a table of one level */
    int F = lv.facet_count, M = lv.method_count, L = lv.level_count, top = L - 1;
    size_t cells = (size_t)F * M;
    values = calloc(cells + 1, sizeof *values);
    block = malloc((cells + 1) * sizeof *block);
    if (values == NULL || block == NULL || L == 0) {
        status = L == 0 ? HS_OK : plot_nomem(diag);
        if (L == 0) {
            plot_note(plot, "no runs in %s", plot->title);
            status = PLOT_SKIP;
        }
        goto done;
    }
    int rc = sqlite3_prepare_v2(plot->db, plot_idle_sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
        status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
        goto done;
    }
    int most = 0, summary = 0;
    for (int f = 0; f < F && status == HS_OK; f++)
        for (int m = 0; m < M && status == HS_OK; m++) {
            int p = lv.point[((size_t)f * M + m) * L + top];
            if (p >= 0) status = plot_idle_read(plot, stmt, p, &values[(size_t)f * M + m], diag);
            if (values[(size_t)f * M + m].count > most) most = values[(size_t)f * M + m].count;
            summary += values[(size_t)f * M + m].summary;
        }
    if (status != HS_OK) goto done;
    if (most == 0 && summary > 0) {
        plot_note(plot, "no per-agent idle time in %s: its runs were recorded with [run] record = summary "
                  "(no agent_rounds rows; docs/recording.md)", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    if (most == 0) {
        plot_note(plot, "no per-agent idle time (agent_rounds) in %s", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    if (most < 2) {
        plot_note(plot, "one agent per method in %s: a distribution needs two", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    /* merge as a one-level table: cell (f, m) */
    PlotLevels one = lv;
    one.level_count = 1;
    if (plot_levels_merge_by(&one, plot_idle_same, plot_idle_empty, values) != HS_OK) {
        status = plot_nomem(diag);
        goto done;
    }
    lv.facet_kept = one.facet_kept;
    lv.facet_labels = one.facet_labels;
    lv.method_kept = one.method_kept;
    lv.method_labels = one.method_labels;
    PlotAxis axis;
    plot_axis_init(plot, group, &axis);
    char level[300];
    plot_level_words(plot, group, &axis, lv.levels[top], level, sizeof level);
    int blocks = 0, panels = 0, lines = 0, longest = 4;
    PlotRange x = { 0 };
    plot_range_add(&x, 0);
    for (int f = 0; f < F; f++) {
        int any = 0;
        for (int m = 0; m < M; m++) {
            size_t cell = (size_t)f * M + m;
            block[cell] = -1;
            if (!lv.facet_kept[f] || !lv.method_kept[m] || values[cell].count == 0) continue;
            plot_data_comment(data, "block %d: per-agent idle share at %s | panel: %s | series: %s",
                              blocks, level, lv.facet_labels[f][0] ? lv.facet_labels[f] : "all",
                              lv.method_labels[m]);
            plot_data_comment(data, "idle_share cumulative_fraction");
            for (int i = 0; i < values[cell].count; i++) {
                fprintf(data, "%.17g %.17g\n", values[cell].share[i],
                        (double)(i + 1) / values[cell].count);
                plot_range_add(&x, values[cell].share[i]);
            }
            fputs("\n\n", data);
            block[cell] = blocks++;
            any = 1;
        }
        panels += any;
    }
    for (int m = 0; m < M; m++)
        if (lv.method_kept[m]) {
            lines++;
            if (plot_text_columns(lv.method_labels[m]) > longest) longest = plot_text_columns(lv.method_labels[m]);
        }
    PlotLayout layout = { 0 };
    plot_layout_grid(plot, &layout, panels);
    layout.panel_titles = panels > 1;
    layout.title_lines = 2;
    layout.legend_entries = lines;
    layout.legend_longest = longest;
    plot_layout_size(plot, &layout, canvas);
    char title[1200];
    snprintf(title, sizeof title, "Per-agent idle share: %s\nat %s; one value per agent and run, "
                                  "seeds pooled", plot->title, level);
    plot_layout_begin(plot, body, &layout, canvas, title);
    fputs("set xlabel 'idle share of the agent''s round time'\n"
          "set ylabel 'fraction of agents (CDF)'\nset yrange [0:1.02]\n", body);
    PlotRange shown = x;
    if (shown.hi < 1e-9) shown.hi = 1;
    plot_range_print(body, "x", shown, 1);
    int first = 1;
    for (int f = 0; f < F; f++) {
        int any = 0;
        for (int m = 0; m < M; m++) any |= block[(size_t)f * M + m] >= 0;
        if (!any) continue;
        if (layout.panel_titles) {
            fputs("set title ", body);
            plot_label(plot, body, lv.facet_labels[f]);
            fputs("\n", body);
        }
        if (first) plot_layout_key(plot, body, &layout, canvas);
        fputs("plot ", body);
        if (first)
            for (int m = 0; m < M; m++)
                if (lv.method_kept[m]) plot_print_key_entry(plot, body, lv.methods[m], lv.method_labels[m]);
        const char *separator = "";
        for (int m = 0; m < M; m++) {
            int b = block[(size_t)f * M + m];
            if (b < 0) continue;
            fputs(separator, body);
            separator = ", \\\n     ";
            /* steps from 0 at the smallest share: the CDF as a staircase, markers on it */
            plot_quote_path(body, data_name);
            fprintf(body, " index %d using 1:2 with steps lw %g lc rgb '%s' notitle, \\\n     ", b,
                    plot->style.line_width, plot_method_look(plot, lv.methods[m]).colour);
            plot_quote_path(body, data_name);
            fprintf(body, " index %d using 1:2 with points ", b);
            plot_print_method_style(body, plot, lv.methods[m]);
            fputs(" notitle", body);
        }
        fputs("\n", body);
        if (first) fputs("unset key\n", body);
        first = 0;
    }
    fputs("unset multiplot\n", body);
done:
    sqlite3_finalize(stmt);
    for (size_t c = 0; c < cells && values != NULL; c++) free(values[c].share);
    free(values);
    free(block);
    plot_levels_free(&lv);
    return status;
}
