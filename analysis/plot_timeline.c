/* plot_timeline.c — one run's per-agent accounts in a few rounds: stacked horizontal
 * bars per agent (compute by role, communication, idle, offline), the rounds side by
 * side, each as wide as its makespan or its longest stack. Which rounds and which agents
 * are shown is said in analysis/plot.h. */
#include "analysis/plot_internal.h"

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
    int role;        /* TIMELINE_ALONE, _OFFLOADER or _HELPER */
} AccountRow;

/* A row's role; each is also the category of its compute bar. */
enum { TIMELINE_ALONE = 0, TIMELINE_OFFLOADER = 1, TIMELINE_HELPER = 2 };

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
    if (role == NULL) return TIMELINE_ALONE;
    if (strcmp(role, "offloader") == 0) return TIMELINE_OFFLOADER;
    if (strcmp(role, "helper") == 0) return TIMELINE_HELPER;
    return TIMELINE_ALONE;
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

typedef struct TimelineRound {
    int64_t number;
    double t_start, t_end;
} TimelineRound;

/* A round's makespan. */
static double plot_timeline_length(const TimelineRound *round)
{
    return round->t_end - round->t_start;
}

/* What the figure is drawn from, filled step by step by plot_figure_timeline. */
typedef struct Timeline {
    const RunFacts *run;
    TimelineRound *rounds;       /* (round_count) the run's rounds, in order */
    int round_count, round_capacity;
    int slots[PLOT_MAX_ROUNDS + 3];  /* the shown rounds (indices of the above), in order */
    int slot_count;
    AccountRow *rows;            /* (row_count) agent_rounds rows of the shown rounds */
    int row_count, row_capacity;
    int64_t *shown;              /* (shown_count) the agents shown, ascending */
    char **groups;               /* (shown_count) their groups, owned; NULL when unknown */
    int shown_count;
    double *offset;              /* (slot_count + 1) where each shown round starts */
    double *width;               /* (slot_count) its length or its longest stack */
    double gap;                  /* between rounds */
    int drawn[CATEGORY_COUNT];   /* the categories with bars, one data block each */
    int blocks;
} Timeline;

static void plot_timeline_free(Timeline *tl)
{
    free(tl->rounds);
    free(tl->offset);
    free(tl->width);
    free(tl->rows);
    free(tl->shown);
    if (tl->groups != NULL)
        for (int i = 0; i < tl->shown_count; i++) free(tl->groups[i]);
    free(tl->groups);
}

/* The run's rounds with both times, one per round number. */
static int plot_timeline_load_rounds(Plot *plot, Timeline *tl, HsDiag *diag)
{
    static const char sql[] = "SELECT round, t_start, t_end FROM rounds WHERE run_id = ?1"
                              " AND t_start IS NOT NULL AND t_end IS NOT NULL ORDER BY round, rowid";
    sqlite3_stmt *stmt = NULL;
    int rc, status = plot_query_run(plot, sql, tl->run->id, &stmt, diag);
    if (status != HS_OK) return status;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t number = sqlite3_column_int64(stmt, 0);
        if (tl->round_count > 0 && tl->rounds[tl->round_count - 1].number == number) continue;
        if (plot_grow((void **)&tl->rounds, tl->round_count, &tl->round_capacity, 64,
                      sizeof *tl->rounds) != 0)
            return plot_query_nomem(stmt, diag);
        tl->rounds[tl->round_count++] = (TimelineRound){ number, sqlite3_column_double(stmt, 1),
                                                         sqlite3_column_double(stmt, 2) };
    }
    if (rc != SQLITE_DONE) return plot_query_failed(plot, stmt, rc, diag);
    sqlite3_finalize(stmt);
    return HS_OK;
}

/* --rounds (at most PLOT_MAX_ROUNDS of them), else the first, the slowest and the last
 * round, in round order. PLOT_SKIP when none is left. */
static int plot_timeline_choose_rounds(Plot *plot, Timeline *tl)
{
    const PlotOptions *options = plot->options;
    if (options->have_rounds) {
        int chosen = 0;
        for (int r = 0; r < tl->round_count; r++)
            if (tl->rounds[r].number >= options->first_round && tl->rounds[r].number <= options->last_round) {
                if (tl->slot_count < PLOT_MAX_ROUNDS) tl->slots[tl->slot_count++] = r;
                chosen++;
            }
        if (chosen > PLOT_MAX_ROUNDS)
            plot_inform(plot, "timeline shows the first %d of the %d rounds asked for\n",
                        PLOT_MAX_ROUNDS, chosen);
    } else if (tl->round_count > 0) {
        int slowest = 0;
        for (int r = 1; r < tl->round_count; r++)
            if (plot_timeline_length(&tl->rounds[r]) > plot_timeline_length(&tl->rounds[slowest]))
                slowest = r;
        int picks[3] = { 0, slowest, tl->round_count - 1 };
        for (int k = 0; k < 3; k++) {
            int known = 0;
            for (int j = 0; j < tl->slot_count; j++) known |= tl->slots[j] == picks[k];
            if (!known) tl->slots[tl->slot_count++] = picks[k];
        }
        for (int i = 1; i < tl->slot_count; i++)  /* in round order */
            for (int j = i; j > 0 && tl->slots[j - 1] > tl->slots[j]; j--) {
                int swap = tl->slots[j];
                tl->slots[j] = tl->slots[j - 1];
                tl->slots[j - 1] = swap;
            }
    }
    if (tl->slot_count > 0) return HS_OK;
    if (options->have_rounds)
        plot_note(plot, "run %" PRId64 " has no rounds %" PRId64 "-%" PRId64, tl->run->id,
                  options->first_round, options->last_round);
    else
        plot_note(plot, "run %" PRId64 " has no rounds", tl->run->id);
    return PLOT_SKIP;
}

/* The agent_rounds rows of the shown rounds; PLOT_SKIP when there are none. */
static int plot_timeline_load_accounts(Plot *plot, Timeline *tl, HsDiag *diag)
{
    static const char sql[] = "SELECT agent, compute_s, comm_s, idle_s, offline_s, role FROM agent_rounds"
                              " WHERE run_id = ?1 AND round = ?2 ORDER BY agent, rowid";
    sqlite3_stmt *stmt = NULL;
    int rc, status = plot_query_run(plot, sql, tl->run->id, &stmt, diag);
    if (status != HS_OK) return status;
    for (int k = 0; k < tl->slot_count; k++) {
        sqlite3_reset(stmt);  /* keeps ?1 */
        sqlite3_bind_int64(stmt, 2, tl->rounds[tl->slots[k]].number);
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            if (plot_grow((void **)&tl->rows, tl->row_count, &tl->row_capacity, 256,
                          sizeof *tl->rows) != 0)
                return plot_query_nomem(stmt, diag);
            AccountRow *row = &tl->rows[tl->row_count++];
            row->slot = k;
            row->agent = sqlite3_column_int64(stmt, 0);
            for (int part = 0; part < 4; part++) {
                double value = sqlite3_column_double(stmt, 1 + part);  /* NULL reads as 0 */
                row->part[part] = isfinite(value) && value > 0 ? value : 0;
            }
            row->role = plot_timeline_role((const char *)sqlite3_column_text(stmt, 5));
        }
        if (rc != SQLITE_DONE) return plot_query_failed(plot, stmt, rc, diag);
    }
    sqlite3_finalize(stmt);
    if (tl->row_count > 0) return HS_OK;
    plot_note(plot, "run %" PRId64 " has no per-agent accounts (agent_rounds) in the chosen rounds",
              tl->run->id);
    return PLOT_SKIP;
}

/* The agents of the rows, ascending; of more than PLOT_MAX_AGENTS, the half with the
 * most and the half with the fewest compute seconds in the shown rounds. */
static int plot_timeline_choose_agents(Plot *plot, Timeline *tl, HsDiag *diag)
{
    int status = HS_OK, agent_count = 0;
    int64_t *agents = malloc((size_t)tl->row_count * sizeof *agents);
    double *compute_total = NULL;
    AgentLoad *by_compute = NULL;
    if (agents == NULL) goto out_of_memory;
    for (int i = 0; i < tl->row_count; i++) agents[i] = tl->rows[i].agent;
    qsort(agents, (size_t)tl->row_count, sizeof *agents, plot_compare_int64);
    for (int i = 0; i < tl->row_count; i++)
        if (agent_count == 0 || agents[agent_count - 1] != agents[i]) agents[agent_count++] = agents[i];
    tl->shown = malloc((size_t)agent_count * sizeof *tl->shown);
    compute_total = calloc((size_t)agent_count, sizeof *compute_total);
    if (tl->shown == NULL || compute_total == NULL) goto out_of_memory;
    if (agent_count <= PLOT_MAX_AGENTS) {
        memcpy(tl->shown, agents, (size_t)agent_count * sizeof *tl->shown);
        tl->shown_count = agent_count;
        goto done;
    }
    for (int i = 0; i < tl->row_count; i++) {
        int64_t *at = bsearch(&tl->rows[i].agent, agents, (size_t)agent_count, sizeof *agents,
                              plot_compare_int64);
        compute_total[at - agents] += tl->rows[i].part[0];
    }
    by_compute = malloc((size_t)agent_count * sizeof *by_compute);
    if (by_compute == NULL) goto out_of_memory;
    for (int i = 0; i < agent_count; i++) by_compute[i] = (AgentLoad){ compute_total[i], agents[i] };
    qsort(by_compute, (size_t)agent_count, sizeof *by_compute, plot_timeline_compare_load);
    for (int i = 0; i < PLOT_MAX_AGENTS / 2; i++) {
        tl->shown[tl->shown_count++] = by_compute[i].agent;
        tl->shown[tl->shown_count++] = by_compute[agent_count - 1 - i].agent;
    }
    qsort(tl->shown, (size_t)tl->shown_count, sizeof *tl->shown, plot_compare_int64);
    plot_inform(plot, "timeline shows %d of run %" PRId64 "'s %d agents: the %d with the most "
                      "and the %d with the fewest compute seconds\n",
                tl->shown_count, tl->run->id, agent_count, PLOT_MAX_AGENTS / 2, PLOT_MAX_AGENTS / 2);
    goto done;
out_of_memory:
    status = plot_nomem(diag);
done:
    free(agents);
    free(compute_total);
    free(by_compute);
    return status;
}

/* The shown agents' groups (agents.grp), for the tic labels. */
static int plot_timeline_load_groups(Plot *plot, Timeline *tl, HsDiag *diag)
{
    tl->groups = calloc((size_t)tl->shown_count, sizeof *tl->groups);
    if (tl->groups == NULL) return plot_nomem(diag);
    sqlite3_stmt *stmt = NULL;
    int rc, status = plot_query_run(plot, "SELECT agent, grp FROM agents WHERE run_id = ?1",
                                    tl->run->id, &stmt, diag);
    if (status != HS_OK) return status;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t agent = sqlite3_column_int64(stmt, 0);
        const char *group = (const char *)sqlite3_column_text(stmt, 1);
        int64_t *at = bsearch(&agent, tl->shown, (size_t)tl->shown_count, sizeof *tl->shown,
                              plot_compare_int64);
        if (at == NULL || group == NULL || tl->groups[at - tl->shown] != NULL) continue;
        if ((tl->groups[at - tl->shown] = strdup(group)) == NULL)
            return plot_query_nomem(stmt, diag);
    }
    if (rc != SQLITE_DONE) return plot_query_failed(plot, stmt, rc, diag);
    sqlite3_finalize(stmt);
    return HS_OK;
}

/* Rounds side by side: each as wide as its length or its longest stack, 3 % of the
 * total apart. */
static int plot_timeline_lay_out(Timeline *tl, HsDiag *diag)
{
    tl->offset = calloc((size_t)tl->slot_count + 1, sizeof *tl->offset);
    tl->width = calloc((size_t)tl->slot_count, sizeof *tl->width);
    if (tl->offset == NULL || tl->width == NULL) return plot_nomem(diag);
    for (int k = 0; k < tl->slot_count; k++)
        tl->width[k] = plot_timeline_length(&tl->rounds[tl->slots[k]]);
    for (int i = 0; i < tl->row_count; i++) {
        const double *part = tl->rows[i].part;
        double sum = part[0] + part[1] + part[2] + part[3];
        if (sum > tl->width[tl->rows[i].slot]) tl->width[tl->rows[i].slot] = sum;
    }
    double total = 0;
    for (int k = 0; k < tl->slot_count; k++) total += tl->width[k] > 0 ? tl->width[k] : 0;
    tl->gap = total > 0 ? 0.03 * total : 1;
    for (int k = 0; k < tl->slot_count; k++)
        tl->offset[k + 1] = tl->offset[k] + (tl->width[k] > 0 ? tl->width[k] : 0) + tl->gap;
    return HS_OK;
}

/* One block per category with bars: (x from, x to, y from, y to) per bar segment. */
static void plot_timeline_write_data(Timeline *tl, FILE *data)
{
    for (int c = 0; c < CATEGORY_COUNT; c++) {
        int segments = 0;
        for (int i = 0; i < tl->row_count; i++) {
            const AccountRow *row = &tl->rows[i];
            int part = plot_timeline_category_part(c, row->role);
            if (part < 0 || row->part[part] <= 0) continue;
            int64_t *at = bsearch(&row->agent, tl->shown, (size_t)tl->shown_count, sizeof *tl->shown,
                                  plot_compare_int64);
            if (at == NULL) continue;
            double start = tl->offset[row->slot];
            for (int before = 0; before < part; before++) start += row->part[before];
            double y = (double)(at - tl->shown);
            fprintf(data, "%.17g %.17g %.17g %.17g\n", start, start + row->part[part], y - 0.38,
                    y + 0.38);
            segments++;
        }
        if (segments == 0) continue;
        fputs("\n\n", data);
        tl->drawn[tl->blocks++] = c;
    }
}

/* The x axis: per-round tics from 0 at each round's start, the round numbers on x2 and
 * a dashed line between rounds. */
static void plot_timeline_print_rounds(const Plot *plot, const Timeline *tl, FILE *body)
{
    double longest = 0;
    for (int k = 0; k < tl->slot_count; k++) if (tl->width[k] > longest) longest = tl->width[k];
    double step = plot_timeline_nice_step(longest, tl->slot_count > 3 ? 3 : 5);
    fputs("set xtics (", body);
    int first_tic = 1;
    for (int k = 0; k < tl->slot_count; k++)
        for (double tic = 0; tic <= tl->width[k] + 1e-9 * tl->width[k]; tic += step) {
            fprintf(body, "%s'%g' %.17g", first_tic ? "" : ", ", tic, tl->offset[k] + tic);
            first_tic = 0;
            if (step <= 0) break;
        }
    fputs(")\nset link x2\nset x2tics (", body);
    for (int k = 0; k < tl->slot_count; k++) {
        if (k > 0) fputs(", ", body);
        plot_labelf(plot, body, "round %" PRId64, tl->rounds[tl->slots[k]].number);
        fprintf(body, " %.17g", tl->offset[k]);
    }
    fputs(")\n", body);
    for (int k = 1; k < tl->slot_count; k++)
        fprintf(body, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead dt 2 lc rgb 'gray50'\n",
                tl->offset[k] - tl->gap / 2, tl->offset[k] - tl->gap / 2);
}

static void plot_timeline_write_script(const Plot *plot, const Timeline *tl, const char *data_path,
                                       FILE *body, PlotCanvas *canvas)
{
    const RunFacts *run = tl->run;
    canvas->width = 1100;
    int longest_title = 0;
    for (int b = 0; b < tl->blocks; b++) {
        int title_width = plot_text_columns(plot_timeline_categories[tl->drawn[b]].title);
        if (title_width > longest_title) longest_title = title_width;
    }
    int legend_rows = plot_key_rows(canvas->width, tl->blocks, longest_title);
    canvas->height = 170 + 18 * legend_rows + 18 * tl->shown_count;
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
    for (int i = 0; i < tl->shown_count; i++) {
        char tic[64];
        snprintf(tic, sizeof tic, "%" PRId64 " ", tl->shown[i]);
        int tic_width = plot_text_columns(tic) + (tl->groups[i] ? plot_text_columns(tl->groups[i]) : 0);
        if (tic_width > longest_tic) longest_tic = tic_width;
    }
    double left = (55.0 + 7.0 * longest_tic) / canvas->width;
    plot_print_key_under(body, canvas, legend_rows, left < 0.08 ? 0.08 : left > 0.45 ? 0.45 : left);
    fprintf(body, "set xrange [0:%.17g]\n", tl->offset[tl->slot_count] - tl->gap);
    fprintf(body, "set yrange [%.17g:-0.6]\n", tl->shown_count - 0.4);
    plot_timeline_print_rounds(plot, tl, body);
    fprintf(body, "set ytics font ',%d' (", tl->shown_count > 32 ? 7 : 9);
    for (int i = 0; i < tl->shown_count; i++) {
        if (i > 0) fputs(", ", body);
        plot_labelf(plot, body, "%" PRId64 " %s", tl->shown[i], tl->groups[i] ? tl->groups[i] : "");
        fprintf(body, " %d", i);
    }
    fputs(")\nplot ", body);
    for (int b = 0; b < tl->blocks; b++) {
        if (b > 0) fputs(", \\\n     ", body);
        plot_quote_path(body, data_path);
        fprintf(body, " index %d using (($1+$2)/2):(($3+$4)/2):1:2:3:4 with boxxyerror lc rgb '%s'"
                      " title ", b, plot_timeline_categories[tl->drawn[b]].colour);
        plot_label(plot, body, plot_timeline_categories[tl->drawn[b]].title);
    }
    fputs("\n", body);
}

int plot_figure_timeline(Plot *plot, const char *data_path, FILE *data, FILE *body,
                         PlotCanvas *canvas, HsDiag *diag)
{
    Timeline tl;
    memset(&tl, 0, sizeof tl);
    tl.run = plot->run;
    int status = plot_timeline_load_rounds(plot, &tl, diag);
    if (status == HS_OK) status = plot_timeline_choose_rounds(plot, &tl);
    if (status == HS_OK) status = plot_timeline_load_accounts(plot, &tl, diag);
    if (status == HS_OK) status = plot_timeline_choose_agents(plot, &tl, diag);
    if (status == HS_OK) status = plot_timeline_load_groups(plot, &tl, diag);
    if (status == HS_OK) status = plot_timeline_lay_out(&tl, diag);
    if (status == HS_OK) {
        plot_timeline_write_data(&tl, data);
        plot_timeline_write_script(plot, &tl, data_path, body, canvas);
    }
    plot_timeline_free(&tl);
    return status;
}
