/* network_fifo.c — [network] model = fifo, the older network model (engine_network.h):
 * a message takes latency + bytes / min(uplink_from, downlink_to), FIFO on the sender's
 * uplink, which is busy for the transmission (latency is propagation); downlinks are
 * not shared. A ring all-reduce is a closed form: 2(N-1) steps of B/N bytes at the
 * slowest link of the ring plus 2(N-1) times the largest link latency, starting once
 * every member is online, booked on every member's uplink for its whole length. Busy
 * time is booked as it goes, so the round needs no closing. */
#include "sim/kernel/engine_network.h"

#include "sim/kernel/collective.h"

#include <math.h>
#include <stdlib.h>

/* A node's uplink and busy union, the model's own (e->net): not in AgentClock, which
 * every node of every model has (16 bytes a node at millions of maxmin agents). */
typedef struct FifoClock {
    double uplink_free; /* virtual time its uplink is free */
    double busy_end;    /* end of the union of busy intervals booked this round */
} FifoClock;

static FifoClock *fifo_clock(const Engine *e, int node)
{
    return &((FifoClock *)e->net)[node];
}

static int fifo_create(Engine *e)
{
    e->net = calloc((size_t)e->n_nodes, sizeof(FifoClock));
    return e->net ? HS_OK : HS_E_NOMEM;
}

static void fifo_free(Engine *e)
{
    free(e->net);
    e->net = NULL;
}

static void fifo_begin_round(Engine *e)
{
    for (int i = 0; i < e->n_nodes; i++) fifo_clock(e, i)->busy_end = e->now;
}

/* Adds [start, end) to the node's busy union. Intervals are booked roughly in start
 * order per node (its processor and uplink are FIFO), which this relies on. */
static void fifo_book_busy(Engine *e, int node, double start, double end)
{
    FifoClock *f = fifo_clock(e, node);
    if (end <= start) return;
    if (start < f->busy_end) start = f->busy_end;
    if (end > start) {
        e->clocks[node].busy_s += end - start;
        f->busy_end = end;
    }
}

static int fifo_send(Engine *e, int from, int to, double bytes, int kind, int64_t data)
{
    AgentClock *c = &e->clocks[from];
    FifoClock *f = fifo_clock(e, from);
    double start = f->uplink_free > e->now ? f->uplink_free : e->now;
    double transmit = bytes / engine_link_rate(e, from, to, start);
    double sent = engine_finish(e, from, start, transmit);
    double arrival = sent + engine_message_latency(e, from, to);
    f->uplink_free = sent;
    c->comm_s += transmit;
    fifo_book_busy(e, from, start, start + transmit);
    /* the radio (radio.h): the sender transmits; a fifo downlink is not booked */
    if (e->radio && engine_radio_span(e, from, ENGINE_RADIO_TX, start, start + transmit) != HS_OK) return HS_E_NOMEM;
    e->round_bytes += bytes;
    engine_book_bytes(e, from, bytes);
    engine_book_bytes(e, to, bytes);
    if (queue_push(e->queue, arrival, kind, to, data) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return HS_OK;
}

/* A message with a deadline (deadline.c): the bytes that arrive by the deadline are those
 * the uplink transmits by deadline - latency (its online time then, at the rate at its
 * start); the uplink stops there, or once the floor is through when that is later. */
static int fifo_send_until(Engine *e, int slot)
{
    DeadlineMessage *m = engine_deadline_slot(e, slot);
    AgentClock *c = &e->clocks[m->from];
    FifoClock *f = fifo_clock(e, m->from);
    double start = f->uplink_free > e->now ? f->uplink_free : e->now;
    double rate = engine_link_rate(e, m->from, m->to, start), latency = engine_message_latency(e, m->from, m->to);
    double by = m->deadline - latency, window = by > start ? by - start : 0;
    const TraceSeries *availability = engine_series(e->availability_trace, m->from);
    if (availability && window > 0 && isfinite(by)) window -= trace_offline_between(availability, start, by);
    double sent = rate > 0 && window > 0 ? rate * window : 0;
    if (!(sent < m->bytes)) sent = m->bytes; /* it arrives whole by the deadline */
    int floored = sent < m->floor;
    if (floored) sent = m->floor; /* the floor goes whatever the deadline */
    double transmit = sent > 0 ? sent / rate : 0;
    double done = engine_finish(e, m->from, start, transmit);
    /* cut: the receiver has what arrived at the deadline; whole or floor: at its arrival */
    double end = sent < m->bytes && !floored ? m->deadline : done + latency;
    if (sent < m->bytes) m->delivered = sent;
    f->uplink_free = done;
    c->comm_s += transmit;
    fifo_book_busy(e, m->from, start, start + transmit);
    if (e->radio && engine_radio_span(e, m->from, ENGINE_RADIO_TX, start, start + transmit) != HS_OK) return HS_E_NOMEM;
    m->pending = 1;
    if (queue_push(e->queue, end, ENGINE_EVENT_DEADLINE_END, m->to, slot) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return HS_OK;
}

static int fifo_computed(Engine *e, int node, double flops, double start, double end)
{
    fifo_book_busy(e, node, start, end);
    return HS_OK;
}

/* A member joins once its queued compute (blocking) and its uplink's sends are done. */
static int fifo_join_time(Engine *e, Collective *c, int node, double *t, int *joins)
{
    AgentClock *clock = &e->clocks[node];
    *t = e->now;
    if (c->blocking && clock->compute_free > *t) *t = clock->compute_free;
    if (fifo_clock(e, node)->uplink_free > *t) *t = fifo_clock(e, node)->uplink_free;
    *joins = 1;
    return HS_OK;
}

static int fifo_ring(Engine *e, Collective *c)
{
    int n = c->n_members;
    double duration = 0;
    if (e->availability_trace)
        for (int k = 0; k < n; k++) {
            double online = engine_finish(e, collective_member(c, k), c->ready, 0);
            if (online > c->ready) c->ready = online;
        }
    if (n > 1) {
        double slowest = INFINITY, latency = 0;
        for (int k = 0; k < n; k++) {
            int a = collective_member(c, k), b = collective_member(c, (k + 1) % n);
            double bw = engine_link_rate(e, a, b, c->ready);
            double lat = engine_message_latency(e, a, b);
            if (bw < slowest) slowest = bw;
            if (lat > latency) latency = lat;
        }
        duration = 2.0 * (n - 1) * (c->bytes / n / slowest + latency);
        e->round_bytes += 2.0 * (n - 1) * c->bytes;
    }
    double finish = c->ready + duration;
    for (int k = 0; k < n; k++) {
        AgentClock *m = &e->clocks[collective_member(c, k)];
        m->comm_s += duration;
        /* each member sends and receives 2(N-1) chunks of B/N */
        engine_book_bytes(e, collective_member(c, k), n > 1 ? 4.0 * (n - 1) * c->bytes / n : 0);
        fifo_book_busy(e, collective_member(c, k), c->ready, finish);
        /* the radio: a member sends and receives for the ring's whole length */
        for (int way = ENGINE_RADIO_TX; e->radio && way <= ENGINE_RADIO_RX; way++)
            if (engine_radio_span(e, collective_member(c, k), way, c->ready, finish) != HS_OK) return HS_E_NOMEM;
        fifo_clock(e, collective_member(c, k))->uplink_free = finish;
        if (c->blocking && m->compute_free < finish) m->compute_free = finish;
    }
    return queue_push(e->queue, finish, c->kind, -1, c->data);
}

const NetworkModel network_model_fifo = {
    .name = "fifo",
    .create = fifo_create,
    .free = fifo_free,
    .begin_round = fifo_begin_round,
    .send = fifo_send,
    .send_until = fifo_send_until,
    .computed = fifo_computed,
    .join_time = fifo_join_time,
    .ring = fifo_ring,
};
