/* sweep_stream.c — the record stream of sweep.h between the processes that simulate
 * runs and the one that writes them: SweepWire, a Sink that frames every callback into a
 * buffer and hands it to a flush function, and SweepReplay, which reads the frames back
 * into the database sink in the same order. The framing, the messages and when
 * the wire flushes are said in sweep.h. */
#include "driver/sweep.h"

#include "driver/sweep_codec.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the record stream: encoding ---- */

enum {
    WIRE_BEGIN = 1, WIRE_AGENTS, WIRE_ROUND, WIRE_AGENT_ROUNDS, WIRE_PAIRING, WIRE_METRIC,
    WIRE_END, WIRE_FINISHED, WIRE_PARAMS
};

/* The buffer's growth and the messages' fields are sweep_codec.h's. */

/* Starts a message; returns where its length goes. */
static size_t wire_begin(SweepWire *w, unsigned char type)
{
    size_t at = w->len;
    uint32_t placeholder = 0;
    codec_put(w, &placeholder, sizeof placeholder);
    codec_put(w, &type, 1);
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
    w->ended = 0;
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
    codec_i64(w, w->index);
    codec_put_run_info(w, info);
    *run_id = w->index;  /* the consumer maps it to the database's id */
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_agents(void *ctx, int64_t run_id, const SinkAgent *agents, int count)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_AGENTS);
    codec_i32(w, count);
    for (int i = 0; i < count; i++) codec_put_agent(w, &agents[i]);
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_round(void *ctx, int64_t run_id, const SinkRound *r)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_ROUND);
    codec_put_round(w, r);
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
    codec_i32(w, count);
    for (int i = 0; i < count; i++) codec_put_agent_round(w, &rows[i]);
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
    codec_put_pairing(w, p);
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_metric(void *ctx, int64_t run_id, const SinkMetric *m)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_METRIC);
    codec_put_metric(w, m);
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_END);
    codec_put_run_end(w, end);
    int status = wire_end(w, at);
    if (status != HS_OK) return status;
    /* Not flushed here: FINISHED follows as soon as sim_run returns, and the two go in
     * one write (one system call and one wake-up of the writer less per run). A
     * producer killed between the two loses the END as if killed just before it: the
     * run is not done, as for any run whose END never reached the writer. */
    w->ended = w->len;
    return wire_maybe_flush(w, HS_OK);
}

static int wire_params(void *ctx, int64_t run_id, const SinkParam *rows, int count)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_PARAMS);
    codec_i32(w, count);
    for (int i = 0; i < count; i++) codec_put_param(w, &rows[i]);
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
    w->ended = 0;
    return (Sink){.ops = &wire_ops, .ctx = w};
}

void sweep_wire_run_returned(SweepWire *w)
{
    w->len = w->ended;
    w->ended = 0;
}

int sweep_wire_finished(SweepWire *w, int64_t index, int status, const char *message)
{
    size_t at = wire_begin(w, WIRE_FINISHED);
    codec_i64(w, index);
    codec_i32(w, status);
    codec_str(w, message);
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

static int replay_message(SweepReplay *r, CodecReader *in, HsDiag *diag)
{
    unsigned char type;
    codec_get(in, &type, 1);
    const SinkOps *ops = r->out.ops;
    void *ctx = r->out.ctx;
    int status = HS_OK;
    if (type != WIRE_BEGIN && type != WIRE_FINISHED && !r->in_run) return replay_bad(diag, "row outside a run");
    switch (type) {
    case WIRE_BEGIN: {
        if (r->in_run) return replay_bad(diag, "run begins inside a run");
        int64_t index = codec_get_i64(in);
        SinkRunInfo info;
        codec_get_run_info(in, &info);
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
        int count = codec_get_i32(in);
        if (in->bad || count < 0) return replay_bad(diag, "bad agents");
        if (replay_grow((void **)&r->agents, &r->agents_cap, count, sizeof *r->agents) != HS_OK)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < count; i++)
            codec_get_agent(in, &r->agents[i]);
        if (in->bad) return replay_bad(diag, "bad agents");
        status = ops->agents(ctx, r->run_id, r->agents, count);
        break;
    }
    case WIRE_PARAMS: {
        int count = codec_get_i32(in);
        if (in->bad || count < 0) return replay_bad(diag, "bad params");
        if (replay_grow((void **)&r->params, &r->params_cap, count, sizeof *r->params) != HS_OK)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < count; i++) {
            codec_get_param(in, &r->params[i]);
            if (!in->bad) r->params[i].swept = sweep_param_swept(r->sweep, &r->params[i]);
        }
        if (in->bad) return replay_bad(diag, "bad params");
        if (ops->params != NULL) status = ops->params(ctx, r->run_id, r->params, count);
        break;
    }
    case WIRE_ROUND: {
        SinkRound row;
        codec_get_round(in, &row);
        if (in->bad) return replay_bad(diag, "bad round");
        r->rounds++;
        r->t_end = row.t_end;
        status = ops->round(ctx, r->run_id, &row);
        break;
    }
    case WIRE_AGENT_ROUNDS: {
        int count = codec_get_i32(in);
        if (in->bad || count < 0) return replay_bad(diag, "bad agent rounds");
        if (replay_grow((void **)&r->rows, &r->rows_cap, count, sizeof *r->rows) != HS_OK)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < count; i++)
            codec_get_agent_round(in, &r->rows[i]);
        if (in->bad) return replay_bad(diag, "bad agent rounds");
        status = ops->agent_rounds(ctx, r->run_id, r->rows, count);
        break;
    }
    case WIRE_PAIRING: {
        SinkPairing p;
        codec_get_pairing(in, &p);
        if (in->bad) return replay_bad(diag, "bad pairing");
        status = ops->pairing(ctx, r->run_id, &p);
        break;
    }
    case WIRE_METRIC: {
        SinkMetric m;
        codec_get_metric(in, &m);
        if (in->bad) return replay_bad(diag, "bad metric");
        if (m.agent < 0 && !isnan(m.test_accuracy)) r->accuracy = m.test_accuracy;
        status = ops->metric(ctx, r->run_id, &m);
        break;
    }
    case WIRE_END: {
        SinkRunEnd end;
        codec_get_run_end(in, &end);
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
        int64_t index = codec_get_i64(in);
        int run_status = codec_get_i32(in);
        const char *message = codec_get_str(in);
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
        CodecReader in = {.p = p + sizeof n, .end = p + sizeof n + n};
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

