/* test_sink.c — rows as text with %.17g, so equal text means bitwise-equal numbers. */
#include "tests/test_sink.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_sink_printf(TestSink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void test_sink_printf(TestSink *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (s->len + (size_t)need + 1 > s->cap) {
        s->cap = (s->len + (size_t)need + 1) * 2;
        s->text = realloc(s->text, s->cap);
    }
    va_start(ap, fmt);
    vsnprintf(s->text + s->len, (size_t)need + 1, fmt, ap);
    va_end(ap);
    s->len += (size_t)need;
}

static int ts_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    TestSink *s = ctx;
    test_sink_printf(s, "run %s %s %llu %s\n", info->name, info->method, (unsigned long long)info->seed, info->mode);
    *run_id = 1;
    return 0;
}

static int ts_agents(void *ctx, int64_t run_id, const SinkAgent *a, int count)
{
    TestSink *s = ctx;
    for (int i = 0; i < count; i++)
        test_sink_printf(s, "agent %d %s %.17g %.17g %.17g %.17g %d %d\n", a[i].agent, a[i].group, a[i].compute,
                         a[i].uplink, a[i].downlink, a[i].latency, a[i].samples, a[i].byzantine);
    return 0;
}

static int ts_round(void *ctx, int64_t run_id, const SinkRound *r)
{
    TestSink *s = ctx;
    test_sink_printf(s, "round %d %.17g %.17g %.17g %.17g %.17g\n", r->round, r->t_start, r->t_end, r->idle_s,
                     r->bytes, r->extra);
    if (s->rounds < 256) s->round_rows[s->rounds] = *r;
    s->rounds++;
    s->last_t_end = r->t_end;
    return 0;
}

static int ts_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows, int count)
{
    TestSink *s = ctx;
    for (int i = 0; i < count; i++)
        test_sink_printf(s, "agent_round %d %d %.17g %.17g %.17g %.17g %s\n", rows[i].round, rows[i].agent,
                         rows[i].compute_s, rows[i].comm_s, rows[i].idle_s, rows[i].offline_s,
                         sink_role_name(rows[i].role));
    free(s->agent_round_rows);
    s->agent_round_rows = malloc((size_t)count * sizeof *rows);
    memcpy(s->agent_round_rows, rows, (size_t)count * sizeof *rows);
    s->n_agent_round_rows = count;
    s->agent_rows += count;
    return 0;
}

static int ts_pairing(void *ctx, int64_t run_id, const SinkPairing *p)
{
    TestSink *s = ctx;
    test_sink_printf(s, "pairing %d %d %d %d %.17g %.17g %s\n", p->round, p->slow, p->fast, p->split,
                     p->predicted_s, p->actual_s, p->solver);
    s->pairings++;
    return 0;
}

static int ts_metric(void *ctx, int64_t run_id, const SinkMetric *m)
{
    TestSink *s = ctx;
    test_sink_printf(s, "metric %.17g %d %d %.17g %.17g %.17g %.17g\n", m->t, m->round, m->agent, m->train_loss,
                     m->test_loss, m->test_accuracy, m->bytes_sent);
    /* only with domains, so that the goldens of other runs stay as they were */
    if (m->has_domains)
        test_sink_printf(s, "domains %d %.17g %.17g\n", m->round, m->heldout_accuracy, m->seen_accuracy);
    if (m->has_privacy) test_sink_printf(s, "privacy %d %.17g\n", m->round, m->epsilon);
    s->metrics++;
    return 0;
}

static int ts_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    TestSink *s = ctx;
    test_sink_printf(s, "end %s %.17g %.17g %d\n", sink_status_name(end->status), end->sim_time_s,
                     end->final_accuracy, end->rounds_done);
    s->ended = 1;
    s->status = end->status;
    return 0;
}

static const SinkOps test_sink_ops = {ts_run_begin, ts_agents, ts_round, ts_agent_rounds,
                                      ts_pairing, ts_metric, ts_run_end, NULL};

Sink test_sink_init(TestSink *s)
{
    memset(s, 0, sizeof *s);
    s->text = calloc(1, 1);
    s->cap = 1;
    return (Sink){.ops = &test_sink_ops, .ctx = s};
}

void test_sink_free(TestSink *s)
{
    free(s->text);
    free(s->agent_round_rows);
    memset(s, 0, sizeof *s);
}

double test_sink_last_accuracy(const TestSink *sink)
{
    double accuracy = NAN;
    for (const char *p = strstr(sink->text, "metric "); p; p = strstr(p + 1, "metric ")) {
        double t, train, test_loss, acc, bytes;
        int round, agent;
        if (sscanf(p, "metric %lf %d %d %lf %lf %lf %lf", &t, &round, &agent, &train, &test_loss, &acc, &bytes) == 7)
            accuracy = acc;
    }
    return accuracy;
}
