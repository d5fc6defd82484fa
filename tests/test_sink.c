/* test_sink.c — rows as text with %.17g, so equal text means bitwise-equal numbers. */
#include "tests/test_sink.h"

#include "base/hs_error.h"

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

/* One line per record: its row name, then every column the row table has for this
 * part, in the table's order, but wall-clock, origin (where the run was started) and
 * multi-line columns, aliases, the writer's own (SINK_LOCAL) and columns with no value
 * in this record (NULL text, a gated column whose flag is 0). The raw member is
 * printed: %.17g for REAL (nan included), an enum's name, -1 for a SINK_NEG_NULL. */
static void ts_dump(TestSink *s, SinkRecord which, SinkPart part, const char *row, const void *record)
{
    const SinkTable *table = &sink_tables[which];
    test_sink_printf(s, "%s", row);
    for (int i = 0; i < table->n_columns; i++) {
        const SinkColumn *c = &table->columns[i];
        if (c->part != part || c->alias || c->type == SINK_FLAG ||
            (c->flags & (SINK_WALL | SINK_ORIGIN | SINK_BLOCK | SINK_LOCAL)))
            continue;
        if (c->gate >= 0 && sink_column_is_null(c, record)) continue;
        switch (c->type) {
        case SINK_REAL: test_sink_printf(s, " %.17g", sink_column_real(c, record)); break;
        case SINK_TEXT:
            if (sink_column_text(c, record) != NULL) test_sink_printf(s, " %s", sink_column_text(c, record));
            break;
        case SINK_ROLE: case SINK_STATUS: case SINK_ACTIVITY:
            test_sink_printf(s, " %s", sink_column_enum_name(c, record));
            break;
        case SINK_SEED: test_sink_printf(s, " %llu", (unsigned long long)sink_column_int(c, record)); break;
        default: test_sink_printf(s, " %lld", (long long)sink_column_int(c, record)); break;
        }
    }
    test_sink_printf(s, "\n");
}

static int ts_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    TestSink *s = ctx;
    ts_dump(s, SINK_RECORD_RUN, SINK_PART_INFO, "run", info);
    *run_id = 1;
    return 0;
}

static int ts_agents(void *ctx, int64_t run_id, const SinkAgent *a, int count)
{
    TestSink *s = ctx;
    for (int i = 0; i < count; i++) ts_dump(s, SINK_RECORD_AGENT, SINK_PART_ROW, "agent", &a[i]);
    return 0;
}

static int ts_round(void *ctx, int64_t run_id, const SinkRound *r)
{
    TestSink *s = ctx;
    ts_dump(s, SINK_RECORD_ROUND, SINK_PART_ROW, "round", r);
    if (s->rounds < 256) s->round_rows[s->rounds] = *r;
    s->rounds++;
    s->last_t_end = r->t_end;
    return 0;
}

static int ts_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows, int count)
{
    TestSink *s = ctx;
    for (int i = 0; i < count; i++) ts_dump(s, SINK_RECORD_AGENT_ROUND, SINK_PART_ROW, "agent_round", &rows[i]);
    /* a round's rows may come in several calls (the engine's batches): agent 0 opens it */
    if (count > 0 && rows[0].agent == 0) s->n_agent_round_rows = 0;
    SinkAgentRound *grown = realloc(s->agent_round_rows, (size_t)(s->n_agent_round_rows + count) * sizeof *rows);
    if (grown == NULL) return HS_E_NOMEM;
    s->agent_round_rows = grown;
    memcpy(s->agent_round_rows + s->n_agent_round_rows, rows, (size_t)count * sizeof *rows);
    s->n_agent_round_rows += count;
    s->agent_rows += count;
    return 0;
}

static int ts_pairing(void *ctx, int64_t run_id, const SinkPairing *p)
{
    TestSink *s = ctx;
    ts_dump(s, SINK_RECORD_PAIRING, SINK_PART_ROW, "pairing", p);
    s->pairings++;
    return 0;
}

static int ts_metric(void *ctx, int64_t run_id, const SinkMetric *m)
{
    TestSink *s = ctx;
    ts_dump(s, SINK_RECORD_METRIC, SINK_PART_ROW, "metric", m);
    if (m->has_privacy) s->last_epsilon = m->epsilon;
    if (m->has_domains && s->domain_metrics++ == 0) s->first_domains = *m;
    s->metrics++;
    return 0;
}

static int ts_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    TestSink *s = ctx;
    ts_dump(s, SINK_RECORD_RUN, SINK_PART_END, "end", end);
    s->ended = 1;
    s->status = end->status;
    return 0;
}

static const SinkOps test_sink_ops = {ts_run_begin, ts_agents, ts_round, ts_agent_rounds,
                                      ts_pairing, ts_metric, ts_run_end, NULL, NULL, NULL};

Sink test_sink_init(TestSink *s)
{
    memset(s, 0, sizeof *s);
    s->last_epsilon = NAN;
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

char *test_sink_timing_lines(const TestSink *sink)
{
    char *out = calloc(sink->len + 1, 1);
    size_t len = 0;
    for (const char *p = sink->text; out && *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p + 1) : strlen(p);
        if (strncmp(p, "round ", 6) == 0 || strncmp(p, "agent_round ", 12) == 0 || strncmp(p, "pairing ", 8) == 0) {
            memcpy(out + len, p, n);
            len += n;
        }
        p += n;
    }
    return out;
}
