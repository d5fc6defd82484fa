/* plot_timeline.c — one run's per-agent accounts in a few rounds: stacked horizontal
 * bars per agent (compute by role, communication, idle, offline), the rounds side by
 * side, each as wide as its makespan or its longest stack. Which rounds and which agents
 * are shown is said in analysis/plot.h. */
#include "analysis/plot_internal.h"

#include "analysis/dbread.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct AccountRow {
    int slot;        /* index among the shown rounds */
    int64_t agent;
    double part[4];  /* compute, communication, idle, offline (s) */
    int role;        /* 0 alone, 1 offloader, 2 helper */
} AccountRow;

/* Bar categories, in legend order; the three compute ones depend on the role. */
static const struct { const char *title; const char *colour; } plot_timeline_categories[] = {
    { "compute", "#4477aa" },
    { "compute (offloader: its bottom blocks)", "#66ccee" },
    { "compute (helper: incl. offloaded work)", "#228833" },
    { "communication", "#ccbb44" },
    { "idle", "#bbbbbb" },
    { "offline", "#ee6677" },
};
enum { CATEGORY_COUNT = 6 };

static int plot_timeline_role(const char *role)
{
    if (role == NULL) return 0;
    if (strcmp(role, "offloader") == 0) return 1;
    if (strcmp(role, "helper") == 0) return 2;
    return 0;
}

/* Which part of a row a category draws (0..3), -1 when it draws nothing of it. */
static int plot_timeline_category_part(int category, int role)
{
    if (category < 3) return category == role ? 0 : -1;
    return category - 2;
}

typedef struct AgentLoad {
    double compute;  /* compute seconds in the shown rounds */
    int64_t agent;
} AgentLoad;

/* By compute seconds, then agent index (so ties are deterministic). */
static int plot_timeline_compare_load(const void *a, const void *b)
{
    const AgentLoad *x = a, *y = b;
    if (x->compute != y->compute) return x->compute < y->compute ? -1 : 1;
    return (x->agent > y->agent) - (x->agent < y->agent);
}


/* A tic step of 1, 2 or 5 times a power of ten giving about `target` tics over span. */
static double plot_timeline_nice_step(double span, int target)
{
    if (!(span > 0)) return 1;
    double raw = span / target, power = pow(10, floor(log10(raw)));
    double f = raw / power;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * power;
}

int plot_figure_timeline(Plot *plot, const char *data_path, FILE *data, FILE *body,
                         PlotCanvas *canvas, HsDiag *diag)
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
            plot_inform(plot, "timeline shows the first %d of the %d rounds asked for\n",
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
            plot_note(plot, "run %" PRId64 " has no rounds %" PRId64 "-%" PRId64, run->id,
                 options->first_round, options->last_round);
        else
            plot_note(plot, "run %" PRId64 " has no rounds", run->id);
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
            row->role = plot_timeline_role((const char *)sqlite3_column_text(stmt, 5));
        }
        if (rc != SQLITE_DONE) goto query_failed;
    }
    sqlite3_finalize(stmt);
    stmt = NULL;
    if (row_count == 0) {
        plot_note(plot, "run %" PRId64 " has no per-agent accounts (agent_rounds) in the chosen rounds",
             run->id);
        status = PLOT_SKIP;
        goto done;
    }

    /* the agents: distinct, sorted; at most PLOT_MAX_AGENTS shown */
    agents = malloc((size_t)row_count * sizeof *agents);
    if (agents == NULL) goto out_of_memory;
    for (int i = 0; i < row_count; i++) agents[i] = rows[i].agent;
    qsort(agents, (size_t)row_count, sizeof *agents, plot_compare_int64);
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
                                  plot_compare_int64);
            compute_total[at - agents] += rows[i].part[0];
        }
        AgentLoad *by_compute = malloc((size_t)agent_count * sizeof *by_compute);
        if (by_compute == NULL) goto out_of_memory;
        for (int i = 0; i < agent_count; i++) by_compute[i] = (AgentLoad){ compute_total[i], agents[i] };
        qsort(by_compute, (size_t)agent_count, sizeof *by_compute, plot_timeline_compare_load);
        for (int i = 0; i < PLOT_MAX_AGENTS / 2; i++) {
            shown[shown_count++] = by_compute[i].agent;
            shown[shown_count++] = by_compute[agent_count - 1 - i].agent;
        }
        free(by_compute);
        qsort(shown, (size_t)shown_count, sizeof *shown, plot_compare_int64);
        plot_inform(plot, "timeline shows %d of run %" PRId64 "'s %d agents: the %d with the most "
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
        int64_t *at = bsearch(&agent, shown, (size_t)shown_count, sizeof *shown, plot_compare_int64);
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
            int part = plot_timeline_category_part(c, row->role);
            if (part < 0 || row->part[part] <= 0) continue;
            int64_t *at = bsearch(&row->agent, shown, (size_t)shown_count, sizeof *shown,
                                  plot_compare_int64);
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
        int title_width = plot_text_columns(plot_timeline_categories[drawn[b]].title);
        if (title_width > longest_title) longest_title = title_width;
    }
    int legend_rows = plot_key_rows(canvas->width, blocks, longest_title);
    canvas->height = 170 + 18 * legend_rows + 18 * shown_count;
    if (canvas->height < 460) canvas->height = 460;
    if (canvas->height > 1640) canvas->height = 1640;
    fputs("set title ", body);
    plot_labelf(plot, body, "Per-agent accounts: run %" PRId64 " (%s, %s, seed %" PRIu64 ")", run->id,
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
        int tic_width = plot_text_columns(tic) + (groups[i] ? plot_text_columns(groups[i]) : 0);
        if (tic_width > longest_tic) longest_tic = tic_width;
    }
    double left = (55.0 + 7.0 * longest_tic) / canvas->width;
    plot_print_key_under(body, canvas, legend_rows, left < 0.08 ? 0.08 : left > 0.45 ? 0.45 : left);
    fprintf(body, "set xrange [0:%.17g]\n", offset[slot_count] - gap);
    fprintf(body, "set yrange [%.17g:-0.6]\n", shown_count - 0.4);
    /* per-round tics: 0 at each round's start */
    double longest = 0;
    for (int k = 0; k < slot_count; k++) if (width[k] > longest) longest = width[k];
    double step = plot_timeline_nice_step(longest, slot_count > 3 ? 3 : 5);
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
        plot_labelf(plot, body, "round %" PRId64, round_number[slots[k]]);
        fprintf(body, " %.17g", offset[k]);
    }
    fputs(")\n", body);
    for (int k = 1; k < slot_count; k++)
        fprintf(body, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead dt 2 lc rgb 'gray50'\n",
                offset[k] - gap / 2, offset[k] - gap / 2);
    fprintf(body, "set ytics font ',%d' (", shown_count > 32 ? 7 : 9);
    for (int i = 0; i < shown_count; i++) {
        if (i > 0) fputs(", ", body);
        plot_labelf(plot, body, "%" PRId64 " %s", shown[i], groups[i] ? groups[i] : "");
        fprintf(body, " %d", i);
    }
    fputs(")\nplot ", body);
    for (int b = 0; b < blocks; b++) {
        if (b > 0) fputs(", \\\n     ", body);
        plot_quote_path(body, data_path);
        fprintf(body, " index %d using (($1+$2)/2):(($3+$4)/2):1:2:3:4 with boxxyerror lc rgb '%s'"
                      " title ", b, plot_timeline_categories[drawn[b]].colour);
        plot_label(plot, body, plot_timeline_categories[drawn[b]].title);
    }
    fputs("\n", body);
    goto done;
query_failed:
    status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
    goto done;
out_of_memory:
    status = plot_nomem(diag);
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
