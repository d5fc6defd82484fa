/* sweep_stream.c — the record stream of sweep.h between the processes that simulate
 * runs and the one that writes them: SweepWire, a Sink that frames every callback into a
 * buffer and hands it to a flush function, and SweepReplay, which reads the frames back
 * into the database sink in the same order; and sweep_run_one, which runs one run of
 * the sweep into a sink (a SweepWire in a producer). The framing, the messages and when
 * the wire flushes are said in sweep.h. */
#include "driver/sweep.h"

#include "driver/origin.h"
#include "sim/run.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int sweep_run_one(const Sweep *sw, int64_t index, Sink sink, HsDiag *diag)
{
    Scenario *sc = malloc(sizeof *sc);
    if (sc == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    int status = sweep_scenario(sw, index, sc, diag);
    if (status == HS_OK && sc->threads == 0) sc->threads = sw->threads_default;
    if (status == HS_OK) {
        RunOutcome outcome;
        OriginSink origin;
        status = sim_run(sc, origin_sink(&origin, sink, sw->origin), diag, &outcome);
    }
    free(sc);
    return status;
}

/* ---- the record stream: encoding ---- */

enum {
    WIRE_BEGIN = 1, WIRE_AGENTS, WIRE_ROUND, WIRE_AGENT_ROUNDS, WIRE_PAIRING, WIRE_METRIC,
    WIRE_END, WIRE_FINISHED, WIRE_PARAMS
};

#define WIRE_NULL_STRING 0xffffffffu

static int wire_reserve(SweepWire *w, size_t more)
{
    if (w->failed) return HS_E_NOMEM;
    if (w->len + more <= w->cap) return HS_OK;
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + more) cap *= 2;
    unsigned char *grown = realloc(w->data, cap);
    if (grown == NULL) {
        w->failed = 1;
        return HS_E_NOMEM;
    }
    w->data = grown;
    w->cap = cap;
    return HS_OK;
}

static void wire_put(SweepWire *w, const void *data, size_t len)
{
    if (wire_reserve(w, len) != HS_OK) return;
    memcpy(w->data + w->len, data, len);
    w->len += len;
}

static void wire_i32(SweepWire *w, int32_t v) { wire_put(w, &v, sizeof v); }
static void wire_i64(SweepWire *w, int64_t v) { wire_put(w, &v, sizeof v); }
static void wire_f64(SweepWire *w, double v) { wire_put(w, &v, sizeof v); }

static void wire_str(SweepWire *w, const char *s)
{
    uint32_t len = s == NULL ? WIRE_NULL_STRING : (uint32_t)strlen(s) + 1;
    wire_put(w, &len, sizeof len);
    if (s != NULL) wire_put(w, s, len);
}

/* Starts a message; returns where its length goes. */
static size_t wire_begin(SweepWire *w, unsigned char type)
{
    size_t at = w->len;
    uint32_t placeholder = 0;
    wire_put(w, &placeholder, sizeof placeholder);
    wire_put(w, &type, 1);
    return at;
}

static int wire_end(SweepWire *w, size_t at)
{
    if (w->failed) return HS_E_NOMEM;
    uint32_t len = (uint32_t)(w->len - at - sizeof len);
    memcpy(w->data + at, &len, sizeof len);
    return HS_OK;
}

int sweep_wire_flush(SweepWire *w)
{
    if (w->failed) return HS_E_NOMEM;
    clock_gettime(CLOCK_MONOTONIC, &w->flushed);
    if (w->len == 0) return HS_OK;
    int status = w->flush(w->flush_ctx, w->data, w->len);
    w->len = 0;
    return status;
}

static int wire_maybe_flush(SweepWire *w, int status)
{
    if (status != HS_OK) return status;
    return w->len >= SWEEP_WIRE_FLUSH_BYTES ? sweep_wire_flush(w) : HS_OK;
}

/* The columns a producer sends: every member of the part, but aliases (no member) and
 * what the writer knows itself (SINK_LOCAL: the run id, the sweep id, the point). */
static int wire_sends(const SinkColumn *c, SinkPart part)
{
    return c->part == part && !c->alias && !(c->flags & SINK_LOCAL);
}

/* Appends the members of one part of record, in the row table's order: integers and
 * enums as i32 (i64 for the 64-bit types), REAL as f64, TEXT as a string. */
static void wire_record(SweepWire *w, SinkRecord which, SinkPart part, const void *record)
{
    const SinkTable *table = &sink_tables[which];
    for (int i = 0; i < table->n_columns; i++) {
        const SinkColumn *c = &table->columns[i];
        if (!wire_sends(c, part)) continue;
        switch (c->type) {
        case SINK_REAL: wire_f64(w, sink_column_real(c, record)); break;
        case SINK_TEXT: wire_str(w, sink_column_text(c, record)); break;
        case SINK_INT64: case SINK_ID: case SINK_SEED: wire_i64(w, sink_column_int(c, record)); break;
        default: wire_i32(w, (int32_t)sink_column_int(c, record)); break;
        }
    }
}

static int wire_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_BEGIN);
    wire_i64(w, w->index);
    wire_record(w, SINK_RECORD_RUN, SINK_PART_INFO, info);
    *run_id = w->index;  /* the consumer maps it to the database's id */
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_agents(void *ctx, int64_t run_id, const SinkAgent *agents, int count)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_AGENTS);
    wire_i32(w, count);
    for (int i = 0; i < count; i++) wire_record(w, SINK_RECORD_AGENT, SINK_PART_ROW, &agents[i]);
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_round(void *ctx, int64_t run_id, const SinkRound *r)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_ROUND);
    wire_record(w, SINK_RECORD_ROUND, SINK_PART_ROW, r);
    return wire_maybe_flush(w, wire_end(w, at));
}

/* The engine reports a round's agent rows right after the round: the end of a round. The
 * rows go to the writer when SWEEP_WIRE_FLUSH_SECONDS have passed since the last flush
 * (so a slow run's progress is seen round by round) or the buffer is full; a fast run's
 * rounds travel together, instead of a write and a read per round. */
static int wire_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows, int count)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_AGENT_ROUNDS);
    wire_i32(w, count);
    for (int i = 0; i < count; i++) wire_record(w, SINK_RECORD_AGENT_ROUND, SINK_PART_ROW, &rows[i]);
    int status = wire_end(w, at);
    if (status != HS_OK) return status;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double since = (double)(now.tv_sec - w->flushed.tv_sec) + 1e-9 * (double)(now.tv_nsec - w->flushed.tv_nsec);
    return w->flush_every_round || since >= SWEEP_WIRE_FLUSH_SECONDS ? sweep_wire_flush(w) : wire_maybe_flush(w, HS_OK);
}

static int wire_pairing(void *ctx, int64_t run_id, const SinkPairing *p)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_PAIRING);
    wire_record(w, SINK_RECORD_PAIRING, SINK_PART_ROW, p);
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_metric(void *ctx, int64_t run_id, const SinkMetric *m)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_METRIC);
    wire_record(w, SINK_RECORD_METRIC, SINK_PART_ROW, m);
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_END);
    wire_record(w, SINK_RECORD_RUN, SINK_PART_END, end);
    int status = wire_end(w, at);
    return status != HS_OK ? status : sweep_wire_flush(w);
}

static int wire_params(void *ctx, int64_t run_id, const SinkParam *rows, int count)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_PARAMS);
    wire_i32(w, count);
    for (int i = 0; i < count; i++) wire_record(w, SINK_RECORD_PARAM, SINK_PART_ROW, &rows[i]);
    return wire_maybe_flush(w, wire_end(w, at));
}

static const SinkOps wire_ops = {
    .run_begin = wire_run_begin,
    .agents = wire_agents,
    .round = wire_round,
    .agent_rounds = wire_agent_rounds,
    .pairing = wire_pairing,
    .metric = wire_metric,
    .run_end = wire_run_end,
    .params = wire_params,
};

Sink sweep_wire_sink(SweepWire *w, int64_t index, SweepFlushFn flush, void *flush_ctx)
{
    w->index = index;
    clock_gettime(CLOCK_MONOTONIC, &w->flushed);
    w->flush = flush;
    w->flush_ctx = flush_ctx;
    return (Sink){.ops = &wire_ops, .ctx = w};
}

int sweep_wire_finished(SweepWire *w, int64_t index, int status, const char *message)
{
    size_t at = wire_begin(w, WIRE_FINISHED);
    wire_i64(w, index);
    wire_i32(w, status);
    wire_str(w, message);
    int rc = wire_end(w, at);
    return rc != HS_OK ? rc : sweep_wire_flush(w);
}

void sweep_wire_free(SweepWire *w)
{
    if (w == NULL) return;
    free(w->data);
    w->data = NULL;
    w->len = w->cap = 0;
}

/* ---- the record stream: replay ---- */

typedef struct WireReader {
    const unsigned char *p, *end;
    int bad;
} WireReader;

static void read_bytes(WireReader *r, void *out, size_t len)
{
    if (r->bad || (size_t)(r->end - r->p) < len) {
        r->bad = 1;
        memset(out, 0, len);
        return;
    }
    memcpy(out, r->p, len);
    r->p += len;
}

static int32_t read_i32(WireReader *r) { int32_t v; read_bytes(r, &v, sizeof v); return v; }
static int64_t read_i64(WireReader *r) { int64_t v; read_bytes(r, &v, sizeof v); return v; }
static double read_f64(WireReader *r) { double v; read_bytes(r, &v, sizeof v); return v; }

/* Points into the message: strings are sent with their NUL. */
static const char *read_str(WireReader *r)
{
    uint32_t len;
    read_bytes(r, &len, sizeof len);
    if (r->bad || len == WIRE_NULL_STRING) return NULL;
    if (len == 0 || (size_t)(r->end - r->p) < len || r->p[len - 1] != '\0') {
        r->bad = 1;
        return NULL;
    }
    const char *s = (const char *)r->p;
    r->p += len;
    return s;
}

int sweep_param_swept(const Sweep *sw, const SinkParam *row)
{
    if (row->section == NULL || row->key == NULL) return 0;
    if (sw->repeat > 1 && strcmp(row->section, "run") == 0 && strcmp(row->key, "seed") == 0) return 1;
    for (int a = 0; a < sw->n_axes; a++) {
        const SweepAxis *axis = &sw->axes[a];
        size_t n = strlen(axis->key);
        if (strcmp(row->section, axis->section) == 0 && strncmp(row->key, axis->key, n) == 0 &&
            (row->key[n] == '\0' || row->key[n] == '.'))
            return 1;
    }
    return 0;
}

/* Reads what wire_record wrote into record (zeroed first); strings point into the
 * message. */
static void read_record(WireReader *in, SinkRecord which, SinkPart part, void *record, size_t size)
{
    const SinkTable *table = &sink_tables[which];
    memset(record, 0, size);
    for (int i = 0; i < table->n_columns; i++) {
        const SinkColumn *c = &table->columns[i];
        if (!wire_sends(c, part)) continue;
        switch (c->type) {
        case SINK_REAL: sink_column_set_real(c, record, read_f64(in)); break;
        case SINK_TEXT: sink_column_set_text(c, record, read_str(in)); break;
        case SINK_INT64: case SINK_ID: case SINK_SEED: sink_column_set_int(c, record, read_i64(in)); break;
        default: sink_column_set_int(c, record, read_i32(in)); break;
        }
    }
}

void sweep_replay_init(SweepReplay *r, const Sweep *sweep, Sink out, SweepFinishedFn finished,
                       void *finished_ctx)
{
    memset(r, 0, sizeof *r);
    r->sweep = sweep;
    r->out = out;
    r->finished = finished;
    r->finished_ctx = finished_ctx;
    r->index = -1;
    r->run_id = -1;
    r->accuracy = NAN;
}

void sweep_replay_free(SweepReplay *r)
{
    if (r == NULL) return;
    free(r->params);
    free(r->rows);
    free(r->agents);
    r->rows = NULL;
    r->agents = NULL;
}

static int replay_bad(HsDiag *diag, const char *what)
{
    return hs_diag_set(diag, HS_E_INTERNAL, NULL, 0, "sweep record stream: %s", what);
}

static int replay_grow(void **array, int *cap, int need, size_t size)
{
    if (need <= *cap) return HS_OK;
    void *grown = realloc(*array, (size_t)need * size);
    if (grown == NULL) return HS_E_NOMEM;
    *array = grown;
    *cap = need;
    return HS_OK;
}

static int replay_message(SweepReplay *r, WireReader *in, HsDiag *diag)
{
    unsigned char type;
    read_bytes(in, &type, 1);
    const SinkOps *ops = r->out.ops;
    void *ctx = r->out.ctx;
    int status = HS_OK;
    if (type != WIRE_BEGIN && type != WIRE_FINISHED && !r->in_run) return replay_bad(diag, "row outside a run");
    switch (type) {
    case WIRE_BEGIN: {
        if (r->in_run) return replay_bad(diag, "run begins inside a run");
        int64_t index = read_i64(in);
        SinkRunInfo info;
        read_record(in, SINK_RECORD_RUN, SINK_PART_INFO, &info, sizeof info);
        if (in->bad || index < 0 || index >= r->sweep->n_runs) return replay_bad(diag, "bad run begin");
        info.id = r->sweep->first_run > 0 ? r->sweep->first_run + index : 0;
        info.sweep = r->sweep->id;
        info.point = r->sweep->labels ? r->sweep->labels[index] : NULL;
        r->index = index;
        r->in_run = r->begun = 1;
        r->ended = 0;
        r->rounds = 0;
        r->t_end = NAN;
        r->accuracy = NAN;
        status = ops->run_begin(ctx, &info, &r->run_id);
        break;
    }
    case WIRE_AGENTS: {
        int count = read_i32(in);
        if (in->bad || count < 0) return replay_bad(diag, "bad agents");
        if (replay_grow((void **)&r->agents, &r->agents_cap, count, sizeof *r->agents) != HS_OK)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < count; i++)
            read_record(in, SINK_RECORD_AGENT, SINK_PART_ROW, &r->agents[i], sizeof r->agents[i]);
        if (in->bad) return replay_bad(diag, "bad agents");
        status = ops->agents(ctx, r->run_id, r->agents, count);
        break;
    }
    case WIRE_PARAMS: {
        int count = read_i32(in);
        if (in->bad || count < 0) return replay_bad(diag, "bad params");
        if (replay_grow((void **)&r->params, &r->params_cap, count, sizeof *r->params) != HS_OK)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < count; i++) {
            read_record(in, SINK_RECORD_PARAM, SINK_PART_ROW, &r->params[i], sizeof r->params[i]);
            if (!in->bad) r->params[i].swept = sweep_param_swept(r->sweep, &r->params[i]);
        }
        if (in->bad) return replay_bad(diag, "bad params");
        if (ops->params != NULL) status = ops->params(ctx, r->run_id, r->params, count);
        break;
    }
    case WIRE_ROUND: {
        SinkRound row;
        read_record(in, SINK_RECORD_ROUND, SINK_PART_ROW, &row, sizeof row);
        if (in->bad) return replay_bad(diag, "bad round");
        r->rounds++;
        r->t_end = row.t_end;
        status = ops->round(ctx, r->run_id, &row);
        break;
    }
    case WIRE_AGENT_ROUNDS: {
        int count = read_i32(in);
        if (in->bad || count < 0) return replay_bad(diag, "bad agent rounds");
        if (replay_grow((void **)&r->rows, &r->rows_cap, count, sizeof *r->rows) != HS_OK)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < count; i++)
            read_record(in, SINK_RECORD_AGENT_ROUND, SINK_PART_ROW, &r->rows[i], sizeof r->rows[i]);
        if (in->bad) return replay_bad(diag, "bad agent rounds");
        status = ops->agent_rounds(ctx, r->run_id, r->rows, count);
        break;
    }
    case WIRE_PAIRING: {
        SinkPairing p;
        read_record(in, SINK_RECORD_PAIRING, SINK_PART_ROW, &p, sizeof p);
        if (in->bad) return replay_bad(diag, "bad pairing");
        status = ops->pairing(ctx, r->run_id, &p);
        break;
    }
    case WIRE_METRIC: {
        SinkMetric m;
        read_record(in, SINK_RECORD_METRIC, SINK_PART_ROW, &m, sizeof m);
        if (in->bad) return replay_bad(diag, "bad metric");
        if (m.agent < 0 && !isnan(m.test_accuracy)) r->accuracy = m.test_accuracy;
        status = ops->metric(ctx, r->run_id, &m);
        break;
    }
    case WIRE_END: {
        SinkRunEnd end;
        read_record(in, SINK_RECORD_RUN, SINK_PART_END, &end, sizeof end);
        if (in->bad) return replay_bad(diag, "bad run end");
        const char *message = end.message;
        snprintf(r->end_message, sizeof r->end_message, "%s", message ? message : "");
        end.message = message ? r->end_message : NULL;
        r->end = end;
        r->in_run = 0;
        r->ended = 1;
        status = ops->run_end(ctx, r->run_id, &end);
        break;
    }
    case WIRE_FINISHED: {
        int64_t index = read_i64(in);
        int run_status = read_i32(in);
        const char *message = read_str(in);
        if (in->bad) return replay_bad(diag, "bad finished");
        if (r->in_run) return replay_bad(diag, "run finished without its end");
        if (r->finished) r->finished(r->finished_ctx, r, index, run_status, message);
        r->begun = 0;
        r->ended = 0;
        r->run_id = -1;
        return HS_OK;
    }
    default:
        return replay_bad(diag, "unknown message");
    }
    if (status != HS_OK)
        return hs_diag_set(diag, status, NULL, 0, "writing run %lld (%s): %s", (long long)r->run_id,
                           r->sweep->labels ? r->sweep->labels[r->index] : "?", hs_error_name(status));
    return HS_OK;
}

int sweep_replay(SweepReplay *r, const void *data, size_t len, size_t *used, HsDiag *diag)
{
    const unsigned char *p = data, *end = p + len;
    *used = 0;
    while ((size_t)(end - p) >= sizeof(uint32_t)) {
        uint32_t n;
        memcpy(&n, p, sizeof n);
        if ((size_t)(end - p) - sizeof n < n) break;  /* the rest has not arrived yet */
        WireReader in = {.p = p + sizeof n, .end = p + sizeof n + n};
        int status = replay_message(r, &in, diag);
        if (status != HS_OK) return status;
        if (in.p != in.end) return replay_bad(diag, "message longer than its fields");
        p += sizeof n + n;
        *used = (size_t)(p - (const unsigned char *)data);
    }
    return HS_OK;
}

int sweep_replay_abandon(SweepReplay *r, const char *why, HsDiag *diag)
{
    if (!r->in_run) return HS_OK;
    snprintf(r->end_message, sizeof r->end_message, "%s", why);
    SinkRunEnd end = {.status = SINK_STATUS_FAILED, .wall_s = NAN, .sim_time_s = r->t_end,
                      .final_accuracy = r->accuracy, .rounds_done = r->rounds, .message = r->end_message};
    r->end = end;
    r->in_run = 0;
    r->ended = 1;
    int status = r->out.ops->run_end(r->out.ctx, r->run_id, &end);
    if (status != HS_OK)
        return hs_diag_set(diag, status, NULL, 0, "marking run %lld failed: %s", (long long)r->run_id,
                           hs_error_name(status));
    return HS_OK;
}

