/* progress.c — a run's bar (forwarding sink callbacks; only round and metric rows
 * produce output) and a sweep's bar (the master's SweepProgress). */
#include "cli/progress.h"

#include <math.h>
#include <time.h>
#include <unistd.h>

static int progress_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    ProgressSink *p = ctx;
    return p->inner.ops->run_begin(p->inner.ctx, info, run_id);
}

static int progress_agents(void *ctx, int64_t run_id, const SinkAgent *agents, int count)
{
    ProgressSink *p = ctx;
    return p->inner.ops->agents(p->inner.ctx, run_id, agents, count);
}

static int progress_round(void *ctx, int64_t run_id, const SinkRound *round)
{
    ProgressSink *p = ctx;
    int status = p->inner.ops->round(p->inner.ctx, run_id, round);
    if (p->quiet) return status;
    char total[32] = "";
    if (p->total_rounds > 0) snprintf(total, sizeof total, "/%d", p->total_rounds);
    if (p->is_terminal) {
        int width = 30, filled = p->total_rounds > 0 ? width * (round->round + 1) / p->total_rounds : 0;
        fprintf(p->out, "\r%s [", p->label);
        for (int i = 0; i < width; i++) fputc(i < filled ? '#' : '.', p->out);
        fprintf(p->out, "] round %d%s  t = %.6g s", round->round + 1, total, round->t_end);
        if (!isnan(p->last_accuracy)) fprintf(p->out, "  accuracy %.4f", p->last_accuracy);
        fputs("\033[K", p->out);
    } else {
        fprintf(p->out, "%s: round %d%s done at t = %.6g s", p->label, round->round + 1, total, round->t_end);
        if (!isnan(p->last_accuracy)) fprintf(p->out, ", accuracy %.4f", p->last_accuracy);
        fputc('\n', p->out);
    }
    fflush(p->out);
    return status;
}

static int progress_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows, int count)
{
    ProgressSink *p = ctx;
    return p->inner.ops->agent_rounds(p->inner.ctx, run_id, rows, count);
}

static int progress_pairing(void *ctx, int64_t run_id, const SinkPairing *pairing)
{
    ProgressSink *p = ctx;
    return p->inner.ops->pairing(p->inner.ctx, run_id, pairing);
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

static int progress_params(void *ctx, int64_t run_id, const SinkParam *rows, int count)
{
    ProgressSink *p = ctx;
    return p->inner.ops->params ? p->inner.ops->params(p->inner.ctx, run_id, rows, count) : HS_OK;
}

static const SinkOps progress_ops = {
    .run_begin = progress_run_begin,
    .agents = progress_agents,
    .round = progress_round,
    .agent_rounds = progress_agent_rounds,
    .pairing = progress_pairing,
    .metric = progress_metric,
    .run_end = progress_run_end,
    .params = progress_params,
};

Sink progress_sink(ProgressSink *p, Sink inner, FILE *out, int quiet, int total_rounds, const char *label)
{
    *p = (ProgressSink){.inner = inner, .out = out, .quiet = quiet, .is_terminal = isatty(fileno(out)),
                        .total_rounds = total_rounds, .last_accuracy = NAN, .label = label};
    return (Sink){.ops = &progress_ops, .ctx = p};
}

/* ---- a sweep ---- */

static double sweep_bar_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sweep_format_duration(double s, char *out, size_t size)
{
    if (!isfinite(s) || s < 0) snprintf(out, size, "?");
    else if (s < 60) snprintf(out, size, "%.0fs", s);
    else if (s < 3600) snprintf(out, size, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(out, size, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void sweep_bar_draw(SweepBar *bar, const SweepMaster *m)
{
    double elapsed = sweep_bar_now() - bar->started;
    char eta[32] = "?";
    if (m->finished > 0) {
        double per_run = elapsed / (double)m->finished;
        sweep_format_duration(per_run * (double)(m->total - m->finished), eta, sizeof eta);
    }
    int width = 30, filled = m->total > 0 ? (int)(width * m->finished / m->total) : width;
    fputs("\rsweep [", bar->out);
    for (int i = 0; i < width; i++) fputc(i < filled ? '#' : '.', bar->out);
    fprintf(bar->out, "] %lld/%lld runs", (long long)m->finished, (long long)m->total);
    int64_t bad = m->failed + m->diverged + m->interrupted;
    if (bad > 0) fprintf(bar->out, ", %lld not done", (long long)bad);
    fprintf(bar->out, "  ETA %s\033[K", m->finished < m->total ? eta : "0s");
    fflush(bar->out);
    bar->last_draw = sweep_bar_now();
}

static void sweep_bar_tick(void *ctx, const SweepMaster *m)
{
    SweepBar *bar = ctx;
    if (bar->quiet || !bar->is_terminal || m->total == 0) return;
    if (sweep_bar_now() - bar->last_draw >= 0.2) sweep_bar_draw(bar, m);
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
    bar->started = bar->last_draw = sweep_bar_now();
    return (SweepProgress){.finished = sweep_bar_finished, .tick = sweep_bar_tick, .ctx = bar};
}

void sweep_bar_end(SweepBar *bar, const SweepMaster *m)
{
    if (bar->quiet || !bar->is_terminal || m->total == 0) return;
    sweep_bar_draw(bar, m);
    fputc('\n', bar->out);
}
