/* progress.c — forwarding callbacks; only round and metric rows produce output. */
#include "cli/progress.h"

#include <math.h>
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

static const SinkOps progress_ops = {
    .run_begin = progress_run_begin,
    .agents = progress_agents,
    .round = progress_round,
    .agent_rounds = progress_agent_rounds,
    .pairing = progress_pairing,
    .metric = progress_metric,
    .run_end = progress_run_end,
};

Sink progress_sink(ProgressSink *p, Sink inner, FILE *out, int quiet, int total_rounds, const char *label)
{
    *p = (ProgressSink){.inner = inner, .out = out, .quiet = quiet, .is_terminal = isatty(fileno(out)),
                        .total_rounds = total_rounds, .last_accuracy = NAN, .label = label};
    return (Sink){.ops = &progress_ops, .ctx = p};
}
