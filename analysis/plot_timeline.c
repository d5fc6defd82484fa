/* plot_timeline.c — a Gantt chart of one run: per agent, when it computes, waits, sends
 * and is offline, on the true virtual-time axis, in one round (the slowest, or the
 * rounds of --rounds side by side at their real times).
 *
 * Where the times come from:
 *   - an `events` table, where the database has one: events(run_id, round, agent, kind,
 *     t_start, t_end), kind compute | send | wait | offline (other kinds are drawn as
 *     wait); its rows are drawn as they are;
 *   - else agent_rounds, which holds how long each agent computed, communicated, idled
 *     and was offline in a round but not when: each bar is laid out from the round's
 *     t_start in the order of a synchronous round — compute, then wait (for the slowest
 *     agent), then send (the averaging that closes the round), then offline — so for
 *     the synchronous methods the send ends at the round's t_end. A method that overlaps
 *     computing and sending has accounts summing past the round; its bars then run past
 *     the round's end, which the figure shows with the round's end as a dashed line.
 * Of more than PLOT_MAX_AGENTS agents the PLOT_MAX_AGENTS / 2 with the most and the
 * fewest compute seconds in the shown rounds are drawn. Data file: one block per kind,
 * columns `t_from t_to row agent round` (row: the agent's line in the chart). */
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

/* Bar kinds, in legend order. */
enum { KIND_COMPUTE, KIND_OFFLOADER, KIND_HELPER, KIND_WAIT, KIND_SEND, KIND_OFFLINE, KIND_COUNT };

static const struct { const char *title; const char *colour; } plot_timeline_kinds[KIND_COUNT] = {
    { "compute", "#0077bb" },
    { "compute (offloader: its bottom blocks)", "#33bbee" },
    { "compute (helper: incl. offloaded work)", "#009988" },
    { "wait", "#dddddd" },
    { "send", "#ee7733" },
    { "offline", "#cc3311" },
};

typedef struct Segment {
    int slot;        /* index among the shown rounds */
    int64_t agent;
    int kind;
    double from, to; /* virtual s */
} Segment;

typedef struct TimelineRound {
    int64_t number;
    double t_start, t_end;
} TimelineRound;

typedef struct Timeline {
    const RunFacts *run;
    TimelineRound *rounds;       /* (round_count) the run's rounds, in order */
    int round_count, round_capacity;
    int slots[PLOT_MAX_ROUNDS];  /* the shown rounds (indices of the above), in order */
    int slot_count;
    Segment *segments;
    int segment_count, segment_capacity;
    int from_events;             /* the segments are the events table's */
    int64_t *shown;              /* (shown_count) the agents drawn, ascending */
    char **groups;               /* (shown_count) their groups, owned; NULL when unknown */
    int shown_count;
} Timeline;

static void plot_timeline_free(Timeline *tl)
{
    free(tl->rounds);
    free(tl->segments);
    free(tl->shown);
    if (tl->groups != NULL)
        for (int i = 0; i < tl->shown_count; i++) free(tl->groups[i]);
    free(tl->groups);
}

static int plot_timeline_add(Timeline *tl, int slot, int64_t agent, int kind, double from, double to)
{
    if (!(to > from)) return 0;
    if (plot_grow((void **)&tl->segments, tl->segment_count, &tl->segment_capacity, 256,
                  sizeof *tl->segments) != 0)
        return -1;
    tl->segments[tl->segment_count++] = (Segment){ slot, agent, kind, from, to };
    return 0;
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

/* --rounds (at most PLOT_MAX_ROUNDS of them), else the slowest round (the first of equal
 * ones). PLOT_SKIP when none is left. */
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
            if (tl->rounds[r].t_end - tl->rounds[r].t_start >
                tl->rounds[slowest].t_end - tl->rounds[slowest].t_start)
                slowest = r;
        tl->slots[tl->slot_count++] = slowest;
    }
    if (tl->slot_count > 0) return HS_OK;
    if (options->have_rounds)
        plot_note(plot, "run %" PRId64 " has no rounds %" PRId64 "-%" PRId64, tl->run->id,
                  options->first_round, options->last_round);
    else
        plot_note(plot, "run %" PRId64 " has no rounds", tl->run->id);
    return PLOT_SKIP;
}

static int plot_timeline_kind(const char *kind)
{
    if (kind == NULL) return KIND_WAIT;
    if (strcmp(kind, "compute") == 0) return KIND_COMPUTE;
    if (strcmp(kind, "send") == 0) return KIND_SEND;
    if (strcmp(kind, "offline") == 0) return KIND_OFFLINE;
    return KIND_WAIT;
}

/* The events table's rows of the shown rounds, when the database has such a table. */
static int plot_timeline_load_events(Plot *plot, Timeline *tl, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(plot->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                          "name = 'events'", -1, &stmt, NULL);
    int exists = rc == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW;
    sqlite3_finalize(stmt);
    if (!exists) return HS_OK;
    static const char sql[] = "SELECT agent, kind, t_start, t_end FROM events WHERE run_id = ?1"
                              " AND round = ?2 AND agent IS NOT NULL AND t_start IS NOT NULL"
                              " AND t_end IS NOT NULL ORDER BY agent, t_start, rowid";
    int status = plot_query_run(plot, sql, tl->run->id, &stmt, diag);
    if (status != HS_OK) return status;
    for (int k = 0; k < tl->slot_count; k++) {
        sqlite3_reset(stmt);
        sqlite3_bind_int64(stmt, 2, tl->rounds[tl->slots[k]].number);
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
            if (plot_timeline_add(tl, k, sqlite3_column_int64(stmt, 0),
                                  plot_timeline_kind((const char *)sqlite3_column_text(stmt, 1)),
                                  sqlite3_column_double(stmt, 2), sqlite3_column_double(stmt, 3)) != 0)
                return plot_query_nomem(stmt, diag);
        if (rc != SQLITE_DONE) return plot_query_failed(plot, stmt, rc, diag);
    }
    sqlite3_finalize(stmt);
    tl->from_events = tl->segment_count > 0;
    return HS_OK;
}

/* The agent_rounds rows of the shown rounds laid out as the header says. */
static int plot_timeline_load_accounts(Plot *plot, Timeline *tl, HsDiag *diag)
{
    static const char sql[] = "SELECT agent, compute_s, idle_s, comm_s, offline_s, role FROM agent_rounds"
                              " WHERE run_id = ?1 AND round = ?2 ORDER BY agent, rowid";
    sqlite3_stmt *stmt = NULL;
    int rc, status = plot_query_run(plot, sql, tl->run->id, &stmt, diag);
    if (status != HS_OK) return status;
    for (int k = 0; k < tl->slot_count; k++) {
        sqlite3_reset(stmt);  /* keeps ?1 */
        sqlite3_bind_int64(stmt, 2, tl->rounds[tl->slots[k]].number);
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            int64_t agent = sqlite3_column_int64(stmt, 0);
            const char *role = (const char *)sqlite3_column_text(stmt, 5);
            int compute_kind = role == NULL ? KIND_COMPUTE
                             : strcmp(role, "offloader") == 0 ? KIND_OFFLOADER
                             : strcmp(role, "helper") == 0 ? KIND_HELPER : KIND_COMPUTE;
            static const int order[4] = { -1, KIND_WAIT, KIND_SEND, KIND_OFFLINE };
            double at = tl->rounds[tl->slots[k]].t_start;
            for (int part = 0; part < 4; part++) {
                double seconds = sqlite3_column_double(stmt, 1 + part);  /* NULL reads as 0 */
                if (!isfinite(seconds) || seconds <= 0) continue;
                if (plot_timeline_add(tl, k, agent, part == 0 ? compute_kind : order[part], at,
                                      at + seconds) != 0)
                    return plot_query_nomem(stmt, diag);
                at += seconds;
            }
        }
        if (rc != SQLITE_DONE) return plot_query_failed(plot, stmt, rc, diag);
    }
    sqlite3_finalize(stmt);
    if (tl->segment_count > 0) return HS_OK;
    if (tl->run->summary) {
        plot_note(plot, "run %" PRId64 " was recorded with [run] record = summary: no per-agent accounts "
                  "(agent_rounds rows) to lay out (docs/recording.md)", tl->run->id);
        return PLOT_SKIP;
    }
    plot_note(plot, "run %" PRId64 " has no per-agent accounts (agent_rounds) in the chosen rounds",
              tl->run->id);
    return PLOT_SKIP;
}

typedef struct AgentLoad {
    double compute;
    int64_t agent;
} AgentLoad;

/* By compute seconds, then agent index (so ties are deterministic). */
static int plot_timeline_compare_load(const void *a, const void *b)
{
    const AgentLoad *x = a, *y = b;
    if (x->compute != y->compute) return x->compute < y->compute ? -1 : 1;
    return (x->agent > y->agent) - (x->agent < y->agent);
}

static int plot_timeline_is_compute(int kind)
{
    return kind == KIND_COMPUTE || kind == KIND_OFFLOADER || kind == KIND_HELPER;
}

/* The agents of the segments, ascending; of more than PLOT_MAX_AGENTS, the half with the
 * most and the half with the fewest compute seconds. */
static int plot_timeline_choose_agents(Plot *plot, Timeline *tl, HsDiag *diag)
{
    int status = HS_OK, agent_count = 0;
    int64_t *agents = malloc((size_t)tl->segment_count * sizeof *agents);
    AgentLoad *load = NULL;
    if (agents == NULL) goto out_of_memory;
    for (int i = 0; i < tl->segment_count; i++) agents[i] = tl->segments[i].agent;
    qsort(agents, (size_t)tl->segment_count, sizeof *agents, plot_compare_int64);
    for (int i = 0; i < tl->segment_count; i++)
        if (agent_count == 0 || agents[agent_count - 1] != agents[i]) agents[agent_count++] = agents[i];
    tl->shown = malloc((size_t)agent_count * sizeof *tl->shown);
    load = calloc((size_t)agent_count, sizeof *load);
    if (tl->shown == NULL || load == NULL) goto out_of_memory;
    if (agent_count <= PLOT_MAX_AGENTS) {
        memcpy(tl->shown, agents, (size_t)agent_count * sizeof *tl->shown);
        tl->shown_count = agent_count;
        goto done;
    }
    for (int i = 0; i < agent_count; i++) load[i].agent = agents[i];
    for (int i = 0; i < tl->segment_count; i++) {
        if (!plot_timeline_is_compute(tl->segments[i].kind)) continue;
        int64_t *at = bsearch(&tl->segments[i].agent, agents, (size_t)agent_count, sizeof *agents,
                              plot_compare_int64);
        load[at - agents].compute += tl->segments[i].to - tl->segments[i].from;
    }
    qsort(load, (size_t)agent_count, sizeof *load, plot_timeline_compare_load);
    for (int i = 0; i < PLOT_MAX_AGENTS / 2; i++) {
        tl->shown[tl->shown_count++] = load[i].agent;
        tl->shown[tl->shown_count++] = load[agent_count - 1 - i].agent;
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
    free(load);
    return status;
}

/* The shown agents' groups (agents.grp), for the tic labels. */
static int plot_timeline_load_groups(Plot *plot, Timeline *tl, HsDiag *diag)
{
    tl->groups = calloc((size_t)tl->shown_count + 1, sizeof *tl->groups);
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
    /* one group for every agent says nothing: leave it out of the tics */
    int one_group = 1;
    for (int i = 1; i < tl->shown_count && one_group; i++)
        one_group = (tl->groups[i] == NULL && tl->groups[0] == NULL) ||
                    (tl->groups[i] != NULL && tl->groups[0] != NULL && strcmp(tl->groups[i], tl->groups[0]) == 0);
    if (one_group)
        for (int i = 0; i < tl->shown_count; i++) {
            free(tl->groups[i]);
            tl->groups[i] = NULL;
        }
    return HS_OK;
}

/* One block per kind with bars; which kinds were written into drawn (returns how many). */
static int plot_timeline_write_data(const Timeline *tl, FILE *data, int *drawn, PlotRange *x)
{
    int blocks = 0;
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        int rows = 0;
        for (int i = 0; i < tl->segment_count; i++) {
            const Segment *s = &tl->segments[i];
            if (s->kind != kind) continue;
            int64_t *at = bsearch(&s->agent, tl->shown, (size_t)tl->shown_count, sizeof *tl->shown,
                                  plot_compare_int64);
            if (at == NULL) continue;
            if (rows++ == 0) {
                plot_data_comment(data, "block %d: %s%s", blocks, plot_timeline_kinds[kind].title,
                                  tl->from_events ? " (events table)" : " (agent_rounds, laid out)");
                plot_data_comment(data, "t_from t_to row agent round");
            }
            fprintf(data, "%.17g %.17g %d %" PRId64 " %" PRId64 "\n", s->from, s->to, (int)(at - tl->shown),
                    s->agent, tl->rounds[tl->slots[s->slot]].number);
            plot_range_add(x, s->from);
            plot_range_add(x, s->to);
        }
        if (rows == 0) continue;
        fputs("\n\n", data);
        drawn[blocks++] = kind;
    }
    return blocks;
}

static void plot_timeline_write_script(Plot *plot, const Timeline *tl, const int *drawn, int blocks,
                                       PlotRange x, const char *data_name, FILE *body,
                                       PlotCanvas *canvas)
{
    const RunFacts *run = tl->run;
    int longest_title = 0, longest_tic = 0;
    for (int b = 0; b < blocks; b++) {
        int width = plot_text_columns(plot_timeline_kinds[drawn[b]].title);
        if (width > longest_title) longest_title = width;
    }
    for (int i = 0; i < tl->shown_count; i++) {
        char tic[64];
        snprintf(tic, sizeof tic, "%" PRId64 " ", tl->shown[i]);
        int width = plot_text_columns(tic) + (tl->groups[i] ? plot_text_columns(tl->groups[i]) : 0);
        if (width > longest_tic) longest_tic = width;
    }
    PlotLayout layout = { .rows = 1, .cols = 1, .title_lines = 2, .legend_entries = blocks,
                          .legend_longest = longest_title };
    double tic_font = tl->shown_count > 32 ? 0.75 : 0.9;
    layout.left_extra = 0.55 * plot->style.font * tic_font * longest_tic - 2.5 * plot->style.font;
    if (layout.left_extra < 0) layout.left_extra = 0;
    plot_layout_size(plot, &layout, canvas);
    if (plot->options->size_unit == PLOT_SIZE_DEFAULT) {
        double rows = 1.5 * plot->style.font * tic_font * tl->shown_count + 9 * plot->style.font +
                      1.4 * plot->style.font * layout.legend_rows;
        if (rows > canvas->height) canvas->height = rows;
    }
    char title[900], rounds[120];
    const TimelineRound *first = &tl->rounds[tl->slots[0]], *last = &tl->rounds[tl->slots[tl->slot_count - 1]];
    if (tl->slot_count == 1)
        snprintf(rounds, sizeof rounds, "round %" PRId64 "%s", first->number,
                 plot->options->have_rounds ? "" : " (the slowest)");
    else
        snprintf(rounds, sizeof rounds, "rounds %" PRId64 "-%" PRId64, first->number, last->number);
    snprintf(title, sizeof title, "Timeline of %s: %s (%s, seed %" PRIu64 ")\n%s", rounds, run->name,
             run->method, run->seed,
             tl->from_events ? "from the recorded events"
                             : "from agent_rounds: compute, then wait, then send, as a synchronous round orders them");
    plot_layout_begin(plot, body, &layout, canvas, title);
    fputs("set style fill solid 1.0 noborder\nunset grid\nset grid xtics\n"
          "set xlabel 'virtual time (s)'\nset ylabel 'agent'\n", body);
    for (int k = 0; k < tl->slot_count; k++) {
        const TimelineRound *round = &tl->rounds[tl->slots[k]];
        plot_range_add(&x, round->t_start);
        plot_range_add(&x, round->t_end);
        fprintf(body, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead dt 2 lc rgb 'gray40'\n",
                round->t_end, round->t_end);
    }
    plot_range_print(body, "x", x, 0);
    fprintf(body, "set yrange [%.17g:-0.6]\n", tl->shown_count - 0.4);
    fprintf(body, "set ytics font ',%g' (", plot->style.font * tic_font);
    for (int i = 0; i < tl->shown_count; i++) {
        if (i > 0) fputs(", ", body);
        plot_labelf(plot, body, "%" PRId64 " %s", tl->shown[i], tl->groups[i] ? tl->groups[i] : "");
        fprintf(body, " %d", i);
    }
    fputs(")\n", body);
    plot_layout_key(plot, body, &layout, canvas);
    fputs("plot ", body);
    for (int b = 0; b < blocks; b++) {
        if (b > 0) fputs(", \\\n     ", body);
        plot_quote_path(body, data_name);
        fprintf(body, " index %d using (($1+$2)/2):3:(($2-$1)/2):(0.38) with boxxyerror fc rgb '%s'"
                      " title ", b, plot_timeline_kinds[drawn[b]].colour);
        plot_label(plot, body, plot_timeline_kinds[drawn[b]].title);
    }
    fputs("\nunset multiplot\n", body);
}

int plot_figure_timeline(Plot *plot, const char *data_name, FILE *data, FILE *body,
                         PlotCanvas *canvas, HsDiag *diag)
{
    Timeline tl;
    memset(&tl, 0, sizeof tl);
    tl.run = plot->run;
    if (tl.run == NULL) {
        plot_note(plot, "no run in %s", plot->title);
        return PLOT_SKIP;
    }
    int drawn[KIND_COUNT];
    PlotRange x = { 0 };
    int status = plot_timeline_load_rounds(plot, &tl, diag);
    if (status == HS_OK) status = plot_timeline_choose_rounds(plot, &tl);
    if (status == HS_OK) status = plot_timeline_load_events(plot, &tl, diag);
    if (status == HS_OK && !tl.from_events) status = plot_timeline_load_accounts(plot, &tl, diag);
    if (status == HS_OK) status = plot_timeline_choose_agents(plot, &tl, diag);
    if (status == HS_OK) status = plot_timeline_load_groups(plot, &tl, diag);
    if (status == HS_OK) {
        int blocks = plot_timeline_write_data(&tl, data, drawn, &x);
        plot_timeline_write_script(plot, &tl, drawn, blocks, x, data_name, body, canvas);
    }
    plot_timeline_free(&tl);
    return status;
}
