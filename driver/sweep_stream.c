/* sweep_stream.c — the record stream of sweep.h between the processes that simulate
 * runs and the one that writes them: SweepWire, a Sink that frames every callback into a
 * buffer and hands it to a flush function, and SweepReplay, which reads the frames back
 * into the database sink in the same order; and sweep_run_one, which runs one run of
 * the sweep into a sink (a SweepWire in a producer). The framing, the messages and when
 * the wire flushes are said in sweep.h. */
#include "driver/sweep.h"

#include "sim/run.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int sweep_run_one(const Sweep *sw, int64_t index, Sink sink, HsDiag *diag)
{
    Scenario *sc = malloc(sizeof *sc);
    if (sc == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    int status = sweep_scenario(sw, index, sc, diag);
    if (status == HS_OK && sc->threads == 0) sc->threads = sw->threads_default;
    if (status == HS_OK) {
        RunOutcome outcome;
        status = sim_run(sc, sink, diag, &outcome);
    }
    free(sc);
    return status;
}

/* ---- the record stream: encoding ---- */

enum {
    WIRE_BEGIN = 1, WIRE_AGENTS, WIRE_ROUND, WIRE_AGENT_ROUNDS, WIRE_PAIRING, WIRE_METRIC,
    WIRE_END, WIRE_FINISHED
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

static int wire_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_BEGIN);
    wire_i64(w, w->index);
    wire_str(w, info->name);
    wire_str(w, info->scenario);
    wire_str(w, info->method);
    wire_i64(w, (int64_t)info->seed);
    wire_str(w, info->mode);
    wire_str(w, info->config);
    *run_id = w->index;  /* the consumer maps it to the database's id */
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_agents(void *ctx, int64_t run_id, const SinkAgent *agents, int count)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_AGENTS);
    wire_i32(w, count);
    for (int i = 0; i < count; i++) {
        const SinkAgent *a = &agents[i];
        wire_i32(w, a->agent);
        wire_str(w, a->group);
        wire_f64(w, a->compute);
        wire_f64(w, a->uplink);
        wire_f64(w, a->downlink);
        wire_f64(w, a->latency);
        wire_i32(w, a->samples);
        wire_i32(w, a->byzantine);
    }
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_round(void *ctx, int64_t run_id, const SinkRound *r)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_ROUND);
    wire_i32(w, r->round);
    wire_f64(w, r->t_start);
    wire_f64(w, r->t_end);
    wire_f64(w, r->idle_s);
    wire_f64(w, r->bytes);
    wire_f64(w, r->extra);
    return wire_maybe_flush(w, wire_end(w, at));
}

/* The engine reports a round's agent rows right after the round: the end of a round, so
 * the rows go to the writer now and progress is seen per round. */
static int wire_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows, int count)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_AGENT_ROUNDS);
    wire_i32(w, count);
    for (int i = 0; i < count; i++) {
        const SinkAgentRound *r = &rows[i];
        wire_i32(w, r->round);
        wire_i32(w, r->agent);
        wire_f64(w, r->compute_s);
        wire_f64(w, r->comm_s);
        wire_f64(w, r->idle_s);
        wire_f64(w, r->offline_s);
        wire_i32(w, (int32_t)r->role);
    }
    int status = wire_end(w, at);
    return status != HS_OK ? status : sweep_wire_flush(w);
}

static int wire_pairing(void *ctx, int64_t run_id, const SinkPairing *p)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_PAIRING);
    wire_i32(w, p->round);
    wire_i32(w, p->slow);
    wire_i32(w, p->fast);
    wire_i32(w, p->split);
    wire_f64(w, p->predicted_s);
    wire_f64(w, p->actual_s);
    wire_str(w, p->solver);
    wire_f64(w, p->solve_ms);
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_metric(void *ctx, int64_t run_id, const SinkMetric *m)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_METRIC);
    wire_f64(w, m->t);
    wire_i32(w, m->round);
    wire_i32(w, m->agent);
    wire_f64(w, m->train_loss);
    wire_f64(w, m->test_loss);
    wire_f64(w, m->test_accuracy);
    wire_f64(w, m->bytes_sent);
    wire_i32(w, m->has_domains);
    wire_f64(w, m->heldout_accuracy);
    wire_f64(w, m->seen_accuracy);
    wire_i32(w, m->has_privacy);
    wire_f64(w, m->epsilon);
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_END);
    wire_i32(w, (int32_t)end->status);
    wire_f64(w, end->wall_s);
    wire_f64(w, end->sim_time_s);
    wire_f64(w, end->final_accuracy);
    wire_i32(w, end->rounds_done);
    wire_str(w, end->message);
    int status = wire_end(w, at);
    return status != HS_OK ? status : sweep_wire_flush(w);
}

static const SinkOps wire_ops = {
    .run_begin = wire_run_begin,
    .agents = wire_agents,
    .round = wire_round,
    .agent_rounds = wire_agent_rounds,
    .pairing = wire_pairing,
    .metric = wire_metric,
    .run_end = wire_run_end,
};

Sink sweep_wire_sink(SweepWire *w, int64_t index, SweepFlushFn flush, void *flush_ctx)
{
    w->index = index;
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
        info.name = read_str(in);
        info.scenario = read_str(in);
        info.method = read_str(in);
        info.seed = (uint64_t)read_i64(in);
        info.mode = read_str(in);
        info.config = read_str(in);
        if (in->bad || index < 0 || index >= r->sweep->n_runs) return replay_bad(diag, "bad run begin");
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
        for (int i = 0; i < count; i++) {
            SinkAgent *a = &r->agents[i];
            a->agent = read_i32(in);
            a->group = read_str(in);
            a->compute = read_f64(in);
            a->uplink = read_f64(in);
            a->downlink = read_f64(in);
            a->latency = read_f64(in);
            a->samples = read_i32(in);
            a->byzantine = read_i32(in);
        }
        if (in->bad) return replay_bad(diag, "bad agents");
        status = ops->agents(ctx, r->run_id, r->agents, count);
        break;
    }
    case WIRE_ROUND: {
        SinkRound row;
        row.round = read_i32(in);
        row.t_start = read_f64(in);
        row.t_end = read_f64(in);
        row.idle_s = read_f64(in);
        row.bytes = read_f64(in);
        row.extra = read_f64(in);
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
        for (int i = 0; i < count; i++) {
            SinkAgentRound *row = &r->rows[i];
            row->round = read_i32(in);
            row->agent = read_i32(in);
            row->compute_s = read_f64(in);
            row->comm_s = read_f64(in);
            row->idle_s = read_f64(in);
            row->offline_s = read_f64(in);
            row->role = (SinkRole)read_i32(in);
        }
        if (in->bad) return replay_bad(diag, "bad agent rounds");
        status = ops->agent_rounds(ctx, r->run_id, r->rows, count);
        break;
    }
    case WIRE_PAIRING: {
        SinkPairing p;
        p.round = read_i32(in);
        p.slow = read_i32(in);
        p.fast = read_i32(in);
        p.split = read_i32(in);
        p.predicted_s = read_f64(in);
        p.actual_s = read_f64(in);
        p.solver = read_str(in);
        p.solve_ms = read_f64(in);
        if (in->bad) return replay_bad(diag, "bad pairing");
        status = ops->pairing(ctx, r->run_id, &p);
        break;
    }
    case WIRE_METRIC: {
        SinkMetric m;
        m.t = read_f64(in);
        m.round = read_i32(in);
        m.agent = read_i32(in);
        m.train_loss = read_f64(in);
        m.test_loss = read_f64(in);
        m.test_accuracy = read_f64(in);
        m.bytes_sent = read_f64(in);
        m.has_domains = read_i32(in);
        m.heldout_accuracy = read_f64(in);
        m.seen_accuracy = read_f64(in);
        m.has_privacy = read_i32(in);
        m.epsilon = read_f64(in);
        if (in->bad) return replay_bad(diag, "bad metric");
        if (m.agent < 0 && !isnan(m.test_accuracy)) r->accuracy = m.test_accuracy;
        status = ops->metric(ctx, r->run_id, &m);
        break;
    }
    case WIRE_END: {
        SinkRunEnd end;
        end.status = (SinkStatus)read_i32(in);
        end.wall_s = read_f64(in);
        end.sim_time_s = read_f64(in);
        end.final_accuracy = read_f64(in);
        end.rounds_done = read_i32(in);
        const char *message = read_str(in);
        if (in->bad) return replay_bad(diag, "bad run end");
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

