/* progress.c — a run's start line and bar (forwarding sink callbacks; run_begin, round
 * and metric rows and the engine's tick produce output) and a sweep's bar (the master's
 * SweepProgress). */
#include "cli/progress.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- a run ---- */

static double progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress_format_duration(double s, char *out, size_t size)
{
    if (!isfinite(s) || s < 0) snprintf(out, size, "?");
    else if (s < 60) snprintf(out, size, "%.0fs", s);
    else if (s < 3600) snprintf(out, size, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(out, size, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* Share of the run done at virtual time t, in [0, 1], or NaN when it cannot be told (a
 * run that stops on accuracy only): rounds done, plus the share of the round running
 * guessed from the last round's wall time (the rounds of a run cost alike; never 1),
 * or the share of the time budget when that is larger. */
static double progress_share(const ProgressSink *p, double t)
{
    double share = NAN;
    if (p->run.total_rounds > 0) {
        double within = p->last_round_wall > 0 ? (progress_now() - p->round_wall_start) / p->last_round_wall : 0;
        if (!(within >= 0)) within = 0;
        if (within > 0.99) within = 0.99;
        share = (p->rounds_done + within) / p->run.total_rounds;
    }
    if (isfinite(p->run.time_budget) && p->run.time_budget > 0) {
        double by_time = t / p->run.time_budget;
        if (isnan(share) || by_time > share) share = by_time;
    }
    return share > 1 ? 1 : share;
}

/* "elapsed 14s  ETA 2m10s" (ETA ? while the share is unknown or 0). */
static void progress_times(const ProgressSink *p, double t, const char *separator, char *out, size_t size)
{
    double elapsed = progress_now() - p->started, share = progress_share(p, t);
    char spent[32], left[32] = "?";
    progress_format_duration(elapsed, spent, sizeof spent);
    if (share > 0) progress_format_duration(elapsed * (1 - share) / share, left, sizeof left);
    snprintf(out, size, "elapsed %s%sETA %s", spent, separator, left);
}

/* The bar on a terminal: round is the one running (in_round) or the one just ended. */
static void progress_draw(ProgressSink *p, int round, double t, int in_round)
{
    char total[32] = "", times[96];
    if (p->run.total_rounds > 0) snprintf(total, sizeof total, "/%d", p->run.total_rounds);
    double share = progress_share(p, t);
    int width = 30, filled = share >= 0 ? (int)(width * share) : 0;
    fprintf(p->out, "\r%s [", p->run.label);
    for (int i = 0; i < width; i++) fputc(i < filled ? '#' : '.', p->out);
    fprintf(p->out, "] round %d%s%s  t = %.6g s", round + 1, total, in_round ? " running" : "", t);
    if (!isnan(p->last_accuracy)) fprintf(p->out, "  accuracy %.4f", p->last_accuracy);
    progress_times(p, t, "  ", times, sizeof times);
    fprintf(p->out, "  %s\033[K", times);
    fflush(p->out);
    p->last_draw = progress_now();
}

static int progress_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    ProgressSink *p = ctx;
    int status = p->inner.ops->run_begin(p->inner.ctx, info, run_id);
    p->run_id = status == HS_OK ? *run_id : -1;
    p->train = info->mode != NULL && strcmp(info->mode, "train") == 0;
    p->started = p->last_draw = p->round_wall_start = progress_now();
    if (p->quiet || status != HS_OK) return status;
    fprintf(p->out, "hetsim: run %lld: %s (%s): method %s, %d agents, %s mode, ", (long long)*run_id,
            p->run.label, p->run.scenario, info->method, p->run.agents, info->mode);
    if (p->run.total_rounds > 0) fprintf(p->out, "%d rounds", p->run.total_rounds);
    else fputs("rounds until", p->out);
    if (isfinite(p->run.time_budget)) fprintf(p->out, "%s %.6g s of virtual time", p->run.total_rounds > 0 ? " or" : "",
                                              p->run.time_budget);
    if (p->run.target_accuracy > 0) fprintf(p->out, "%s accuracy %.4g", p->run.total_rounds > 0 ||
                                            isfinite(p->run.time_budget) ? " or" : "", p->run.target_accuracy);
    fprintf(p->out, "; database %s\n", p->run.db_path);
    fflush(p->out);
    return status;
}

static int progress_round(void *ctx, int64_t run_id, const SinkRound *round)
{
    ProgressSink *p = ctx;
    int status = p->inner.ops->round(p->inner.ctx, run_id, round);
    double now = progress_now();
    p->rounds_done = round->round + 1;
    p->last_round_wall = now - p->round_wall_start;
    p->round_wall_start = now;
    if (p->quiet) return status;
    if (p->is_terminal) {
        progress_draw(p, round->round, round->t_end, 0);
        return status;
    }
    char total[32] = "", times[96];
    if (p->run.total_rounds > 0) snprintf(total, sizeof total, "/%d", p->run.total_rounds);
    fprintf(p->out, "%s: round %d%s done at t = %.6g s", p->run.label, round->round + 1, total, round->t_end);
    if (!isnan(p->last_accuracy)) fprintf(p->out, ", accuracy %.4f", p->last_accuracy);
    progress_times(p, round->t_end, ", ", times, sizeof times);
    fprintf(p->out, ", %s\n", times);
    fflush(p->out);
    p->last_draw = progress_now();
    return status;
}

/* Within a round: a redraw every 0.5 s on a terminal, a line every 10 s otherwise. The
 * clock is read at every event in train mode (an event may be a real training step)
 * and every 256 events in timing mode (where an event is a microsecond). */
static void progress_tick(void *ctx, int64_t run_id, double t)
{
    ProgressSink *p = ctx;
    (void)run_id;
    if (p->quiet || (++p->ticks & (p->train ? 0u : 255u)) != 0) return;
    double now = progress_now();
    if (now - p->last_draw < (p->is_terminal ? 0.5 : 10.0)) return;
    if (p->is_terminal) {
        progress_draw(p, p->rounds_done, t, 1);
        return;
    }
    char total[32] = "", times[96];
    if (p->run.total_rounds > 0) snprintf(total, sizeof total, "/%d", p->run.total_rounds);
    progress_times(p, t, ", ", times, sizeof times);
    fprintf(p->out, "%s: round %d%s running at t = %.6g s, %s\n", p->run.label, p->rounds_done + 1, total, t,
            times);
    fflush(p->out);
    p->last_draw = now;
}

static int progress_metric(void *ctx, int64_t run_id, const SinkMetric *metric)
{
    ProgressSink *p = ctx;
    if (metric->agent < 0 && !isnan(metric->test_accuracy)) p->last_accuracy = metric->test_accuracy;
    return p->inner.ops->metric(p->inner.ctx, run_id, metric);
}

static int progress_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    ProgressSink *p = ctx;
    if (!p->quiet && p->is_terminal) fputc('\n', p->out);
    return p->inner.ops->run_end(p->inner.ctx, run_id, end);
}

/* agents, agent_rounds, pairing and params pass on unchanged (sink_pass_*: inner first) */
_Static_assert(offsetof(ProgressSink, inner) == 0, "ProgressSink's inner sink is its first member");

static const SinkOps progress_ops = {
    .run_begin = progress_run_begin,
    .agents = sink_pass_agents,
    .round = progress_round,
    .agent_rounds = sink_pass_agent_rounds,
    .pairing = sink_pass_pairing,
    .metric = progress_metric,
    .run_end = progress_run_end,
    .params = sink_pass_params,
    .tick = progress_tick,
};

/* --quiet: no tick, so the engine and the trainer do not call one per event for nothing. */
static const SinkOps progress_quiet_ops = {
    .run_begin = progress_run_begin,
    .agents = sink_pass_agents,
    .round = progress_round,
    .agent_rounds = sink_pass_agent_rounds,
    .pairing = sink_pass_pairing,
    .metric = progress_metric,
    .run_end = progress_run_end,
    .params = sink_pass_params,
};

Sink progress_sink(ProgressSink *p, Sink inner, FILE *out, int quiet, const ProgressRun *run)
{
    *p = (ProgressSink){.inner = inner, .out = out, .quiet = quiet, .is_terminal = isatty(fileno(out)),
                        .run = *run, .run_id = -1, .last_accuracy = NAN};
    return (Sink){.ops = quiet ? &progress_quiet_ops : &progress_ops, .ctx = p};
}

/* ---- a sweep ---- */

static void sweep_bar_draw(SweepBar *bar, const SweepMaster *m)
{
    double elapsed = progress_now() - bar->started;
    char eta[32] = "?";
    if (m->finished > 0) {
        double per_run = elapsed / (double)m->finished;
        progress_format_duration(per_run * (double)(m->total - m->finished), eta, sizeof eta);
    }
    int width = 30, filled = m->total > 0 ? (int)(width * m->finished / m->total) : width;
    fputs("\rsweep [", bar->out);
    for (int i = 0; i < width; i++) fputc(i < filled ? '#' : '.', bar->out);
    fprintf(bar->out, "] %lld/%lld runs", (long long)m->finished, (long long)m->total);
    int64_t bad = m->failed + m->diverged + m->interrupted;
    if (bad > 0) fprintf(bar->out, ", %lld not done", (long long)bad);
    fprintf(bar->out, "  ETA %s\033[K", m->finished < m->total ? eta : "0s");
    fflush(bar->out);
    bar->last_draw = progress_now();
}

static void sweep_bar_tick(void *ctx, const SweepMaster *m)
{
    SweepBar *bar = ctx;
    if (bar->quiet || !bar->is_terminal || m->total == 0) return;
    if (progress_now() - bar->last_draw >= 0.2) sweep_bar_draw(bar, m);
}

static void sweep_bar_finished(void *ctx, const SweepMaster *m, int64_t index, SweepState state, int status,
                               const char *message)
{
    SweepBar *bar = ctx;
    if (bar->quiet) return;
    const char *label = m->sweep->labels[index];
    if (state == SWEEP_STATE_FAILED || state == SWEEP_STATE_DIVERGED) {
        if (bar->is_terminal) fputs("\r\033[K", bar->out);
        fprintf(bar->out, "hetsim: run %s %s: %s\n", label, state == SWEEP_STATE_FAILED ? "failed" : "diverged",
                message && message[0] ? message : hs_error_name(status));
    }
    if (bar->is_terminal) {
        sweep_bar_draw(bar, m);
    } else {
        static const char *const names[] = {"todo", "skip", "handed", "done", "failed", "diverged", "interrupted",
                                            "done elsewhere", "held elsewhere"};
        fprintf(bar->out, "sweep: %lld/%lld %s %s\n", (long long)m->finished, (long long)m->total, names[state],
                label);
        fflush(bar->out);
    }
}

SweepProgress sweep_bar(SweepBar *bar, FILE *out, int quiet)
{
    *bar = (SweepBar){.out = out, .quiet = quiet, .is_terminal = out != NULL && isatty(fileno(out))};
    bar->started = bar->last_draw = progress_now();
    return (SweepProgress){.finished = sweep_bar_finished, .tick = sweep_bar_tick, .ctx = bar};
}

void sweep_bar_end(SweepBar *bar, const SweepMaster *m)
{
    if (bar->quiet || !bar->is_terminal || m->total == 0) return;
    sweep_bar_draw(bar, m);
    fputc('\n', bar->out);
}
