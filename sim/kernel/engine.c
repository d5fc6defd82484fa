/* engine.c — the event kernel of a run: the round's event loop, the cost-model
 * primitives and the per-round accounting (the run that drives it is sim/run.c).
 * It stays one file: the primitives share the nodes' clocks and the round's accounting,
 * whose invariants (busy intervals, offline time) every primitive must keep. */
#include "sim/kernel/engine.h"

#include "sim/kernel/interrupt.h"
#include "sim/kernel/network.h"
#include "sim/kernel/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct AgentClock {
    double compute_free;  /* virtual time its processor is free */
    double uplink_free;   /* virtual time its uplink is free */
    double busy_end;      /* end of the union of busy intervals booked this round */
    double compute_s, comm_s, busy_s; /* this round */
    SinkRole role;        /* this round */
    int slow;             /* markov slowdown state */
} AgentClock;

struct AgentActivity;

struct Engine {
    double now;
    int round;
    double round_start;
    int round_over;
    double round_bytes, total_bytes;
    int n_agents, n_nodes;
    EngineNode *nodes;    /* (n_nodes) */
    /* attribute traces (EngineTraces): NULL arrays when no group uses one */
    const TraceSeries *const *compute_trace, *const *uplink_trace, *const *downlink_trace,
        *const *availability_trace;
    EngineNetwork spec;
    EventQueue *queue;
    AgentClock *clocks;      /* (n_nodes) */
    SinkAgentRound *rows;    /* (n_agents) buffer for agent_rounds */
    gsl_rng **dynamics_rng;  /* (n_nodes) only for nodes whose slowdown is random over time */
    Sink sink;
    int64_t run_id;
    EngineHandler handler;
    void *handler_ctx;
    HsDiag *diag;
    /* maxmin; NULL under fifo */
    Network *network;
    struct AgentActivity *activity;       /* (n_nodes) busy intervals of this round */
    Collective **collectives;             /* started collectives by slot (event data) */
    int n_collectives;
    Collective **pending_join;            /* (n_nodes) a join waiting for the node's sends */
    double network_wakeup;                /* earliest ENGINE_EVENT_NETWORK queued */
};

/* ---- maxmin accounting: an agent's busy intervals of the round, united at its end ----
 * Compute intervals come in start order (the processor is FIFO) and may lie in the
 * future; transfer intervals come from the network as they end, disjoint and in order;
 * closed-form rings come as periodic sets, which never overlap the agent's transfer
 * intervals (a flow on a member's link ends the closed form first) but may overlap its
 * compute (a non-blocking collective). */
typedef struct Span {
    double start, end;
} Span;

typedef struct AgentActivity {
    Span *compute, *comm;
    int n_compute, cap_compute, n_comm, cap_comm;
    NetworkPeriodic *rings; /* those that overlap a computation */
    int n_rings, cap_rings;
    double ring_s;          /* the measure of the others */
} AgentActivity;

static int activity_grow(void **array, int *cap, int n, size_t size)
{
    if (n < *cap) return HS_OK;
    int grown_cap = *cap ? *cap * 2 : 8;
    void *grown = realloc(*array, (size_t)grown_cap * size);
    if (grown == NULL) return HS_E_NOMEM;
    *array = grown;
    *cap = grown_cap;
    return HS_OK;
}

/* Appends [start, end) to a list in start order, merging with the last span it touches. */
static int activity_add_span(Span **spans, int *n, int *cap, double start, double end)
{
    if (end <= start) return HS_OK;
    if (*n > 0 && start <= (*spans)[*n - 1].end) {
        if (end > (*spans)[*n - 1].end) (*spans)[*n - 1].end = end;
        return HS_OK;
    }
    if (activity_grow((void **)spans, cap, *n, sizeof **spans) != HS_OK) return HS_E_NOMEM;
    (*spans)[(*n)++] = (Span){start, end};
    return HS_OK;
}

/* Measure of the periodic set within [t0, t] (all periods, no window). */
static double periodic_cumulative(const NetworkPeriodic *p, double t)
{
    double u = t - p->t0, per = 0;
    if (!(u > 0) || !(p->period > 0)) return 0;
    for (int i = 0; i < p->n_sub; i++) per += p->b[i] - p->a[i];
    double j = floor(u / p->period);
    if (j >= p->count) return p->count * per;
    double r = u - j * p->period, total = j * per;
    for (int i = 0; i < p->n_sub; i++) {
        double part = r - p->a[i];
        if (part > p->b[i] - p->a[i]) part = p->b[i] - p->a[i];
        if (part > 0) total += part;
    }
    return total;
}

/* Measure of the periodic set within [x, y] and its window. */
static double periodic_measure(const NetworkPeriodic *p, double x, double y)
{
    if (x < p->from) x = p->from;
    if (y > p->to) y = p->to;
    if (!(y > x)) return 0;
    double m = periodic_cumulative(p, y) - periodic_cumulative(p, x);
    return m > 0 ? m : 0;
}

static int engine_activity_add(Engine *e, int agent, int compute, double start, double end)
{
    AgentActivity *a = &e->activity[agent];
    int status = compute ? activity_add_span(&a->compute, &a->n_compute, &a->cap_compute, start, end)
                         : activity_add_span(&a->comm, &a->n_comm, &a->cap_comm, start, end);
    if (status != HS_OK) return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for accounting");
    return HS_OK;
}

/* busy = |(compute U comm) within [from, to]| + rings - rings within compute;
 * comm = |comm within [from, to]| + rings. Keeps compute spans that reach past `to`. */
static void engine_activity_close(Engine *e, int agent, double from, double to, double *busy, double *comm)
{
    AgentActivity *a = &e->activity[agent];
    double b = 0, c = 0, cursor = from;
    int i = 0, j = 0;
    while (i < a->n_compute || j < a->n_comm) {
        Span s;
        if (j >= a->n_comm || (i < a->n_compute && a->compute[i].start <= a->comm[j].start)) {
            s = a->compute[i++];
        } else {
            s = a->comm[j++];
            double lo = s.start > from ? s.start : from, hi = s.end < to ? s.end : to;
            if (hi > lo) c += hi - lo;
        }
        if (s.start < cursor) s.start = cursor;
        if (s.end > to) s.end = to;
        if (s.end > s.start) {
            b += s.end - s.start;
            cursor = s.end;
        }
    }
    for (int r = 0; r < a->n_rings; r++) {
        const NetworkPeriodic *p = &a->rings[r];
        double m = periodic_measure(p, from, to);
        b += m;
        c += m;
        for (int k = 0; k < a->n_compute; k++) {
            if (a->compute[k].end <= p->from) continue;
            if (a->compute[k].start >= p->to) break;
            b -= periodic_measure(p, a->compute[k].start < from ? from : a->compute[k].start,
                                  a->compute[k].end > to ? to : a->compute[k].end);
        }
    }
    *busy = b + a->ring_s;
    *comm = c + a->ring_s;
    a->ring_s = 0;
    int kept = 0; /* compute spans still running or queued for later */
    for (int k = 0; k < a->n_compute; k++)
        if (a->compute[k].end > to) a->compute[kept++] = a->compute[k];
    a->n_compute = kept;
    a->n_comm = 0;
    a->n_rings = 0;
}

static void engine_activity_free(Engine *e)
{
    if (e->activity == NULL) return;
    for (int i = 0; i < e->n_nodes; i++) {
        free(e->activity[i].compute);
        free(e->activity[i].comm);
        free(e->activity[i].rings);
    }
    free(e->activity);
    e->activity = NULL;
}

/* Adds [start, end) to the agent's busy union. Intervals are booked roughly in start
 * order per agent (its processor and uplink are FIFO), which this relies on. */
static void engine_book_busy(AgentClock *c, double start, double end)
{
    if (end <= start) return;
    if (start < c->busy_end) start = c->busy_end;
    if (end > start) {
        c->busy_s += end - start;
        c->busy_end = end;
    }
}

int engine_schedule(Engine *e, double t, int kind, int agent, int64_t data)
{
    if (t < e->now) t = e->now;
    return queue_push(e->queue, t, kind, agent, data);
}

static const TraceSeries *engine_series(const TraceSeries *const *per_agent, int agent);

/* min(uplink of from, downlink of to) at time t, traces included. */
static double engine_link_bandwidth(const Engine *e, int from, int to, double t)
{
    const TraceSeries *up = engine_series(e->uplink_trace, from), *down = engine_series(e->downlink_trace, to);
    double u = up ? trace_value(up, t) : e->nodes[from].uplink;
    double d = down ? trace_value(down, t) : e->nodes[to].downlink;
    return u < d ? u : d;
}

static const TraceSeries *engine_series(const TraceSeries *const *per_agent, int agent)
{
    return per_agent ? per_agent[agent] : NULL;
}

/* When work of `seconds` started at start ends, pausing while the agent is offline. */
static double engine_finish(const Engine *e, int agent, double start, double seconds)
{
    const TraceSeries *availability = engine_series(e->availability_trace, agent);
    return availability ? trace_advance_online(availability, start, seconds) : start + seconds;
}

int engine_compute(Engine *e, int agent, double flops, int kind, int64_t data, double *finish_out)
{
    AgentClock *c = &e->clocks[agent];
    double start = c->compute_free > e->now ? c->compute_free : e->now;
    const TraceSeries *speed = engine_series(e->compute_trace, agent);
    double duration = flops / (speed ? trace_value(speed, start) : e->nodes[agent].compute);
    const EngineNode *node = &e->nodes[agent];
    if (node->slowdown.kind != SLOWDOWN_NONE || node->jitter > 0)
        duration *= slowdown_factor(&node->slowdown, node->jitter, start, &c->slow,
                                    e->dynamics_rng ? e->dynamics_rng[agent] : NULL);
    double finish = engine_finish(e, agent, start, duration);
    if (finish_out) *finish_out = finish;
    c->compute_free = finish;
    c->compute_s += duration;
    int status = HS_OK;
    if (e->network) status = engine_activity_add(e, agent, 1, start, start + duration);
    else engine_book_busy(c, start, start + duration);
    if (status == HS_OK && e->network && e->sink.ops->activity) {
        SinkActivity a = {.kind = SINK_ACTIVITY_COMPUTE, .agent = agent, .to = -1, .amount = flops, .start = start,
                          .transfer = start, .end = start + duration};
        if (e->sink.ops->activity(e->sink.ctx, e->run_id, &a) != HS_OK)
            status = hs_diag_set(e->diag, HS_E_IO, NULL, 0, "the sink refused an activity");
    }
    if (status == HS_OK && queue_push(e->queue, finish, kind, agent, data) != HS_OK)
        status = hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return status;
}

/* [network] tcp = lv08 under fifo: SimGrid's LV08 factors. */
static const double engine_lv08_latency = 13.01, engine_lv08_bandwidth = 0.97, engine_lv08_weight_s = 20537;

static double engine_latency(const Engine *e, int from, int to)
{
    double a = e->nodes[from].latency, b = e->nodes[to].latency;
    double latency = a > b ? a : b;
    return e->spec.lv08 ? latency * engine_lv08_latency : latency;
}

static double engine_bandwidth(const Engine *e, int from, int to, double t)
{
    double bandwidth = engine_link_bandwidth(e, from, to, t);
    return e->spec.lv08 ? bandwidth * engine_lv08_bandwidth : bandwidth;
}

int engine_send(Engine *e, int from, int to, double bytes, int kind, int64_t data)
{
    if (e->network) {
        e->round_bytes += bytes;
        NetworkPayload payload = {.kind = kind, .agent = to, .data = data};
        if (network_send(e->network, e->now, from, to, bytes, payload) != HS_OK)
            return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for messages");
        return HS_OK;
    }
    AgentClock *c = &e->clocks[from];
    double start = c->uplink_free > e->now ? c->uplink_free : e->now;
    double transmit = bytes / engine_bandwidth(e, from, to, start);
    double sent = engine_finish(e, from, start, transmit);
    double arrival = sent + engine_latency(e, from, to);
    c->uplink_free = sent;
    c->comm_s += transmit;
    engine_book_busy(c, start, start + transmit);
    e->round_bytes += bytes;
    if (queue_push(e->queue, arrival, kind, to, data) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return HS_OK;
}

void engine_collective_begin(Collective *c, const int *members, int n_members, double bytes,
                             int blocking, int kind, int64_t data)
{
    *c = (Collective){.members = members, .n_members = n_members, .bytes = bytes,
                      .blocking = blocking, .kind = kind, .data = data};
}

static int collective_member(const Collective *c, int k)
{
    return c->members ? c->members[k] : k;
}

/* maxmin: the collective starts (an engine event at its ready time) once every member
 * has joined; a member joins once its queued compute (blocking) and its sends are done. */
static int engine_collective_join_maxmin(Engine *e, Collective *c, int agent)
{
    if (network_outgoing(e->network, agent) > 0) {
        e->pending_join[agent] = c; /* joins when its last message is out (engine_sender_idle) */
        return HS_OK;
    }
    AgentClock *clock = &e->clocks[agent];
    double t = e->now;
    if (c->blocking && clock->compute_free > t) t = clock->compute_free;
    if (c->joined == 0 || t > c->ready) c->ready = t;
    if (++c->joined < c->n_members) return HS_OK;
    int slot = 0;
    while (slot < e->n_collectives && e->collectives[slot] != NULL) slot++;
    if (slot == e->n_collectives) {
        Collective **grown = realloc(e->collectives, (size_t)(slot + 1) * sizeof *grown);
        if (grown == NULL) return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory");
        e->collectives = grown;
        e->n_collectives++;
    }
    e->collectives[slot] = c;
    return queue_push(e->queue, c->ready, ENGINE_EVENT_COLLECTIVE_START, -1, slot);
}

static int engine_collective_done(Engine *e, int slot);

static int engine_collective_start(Engine *e, int slot)
{
    Collective *c = e->collectives[slot];
    int n = c->n_members;
    NetworkPayload payload = {.kind = ENGINE_EVENT_COLLECTIVE_DONE, .agent = -1, .data = slot};
    if (n <= 1) return engine_collective_done(e, slot);
    const int *members = c->members;
    int *all = NULL;
    if (members == NULL) {
        if ((all = malloc((size_t)n * sizeof *all)) == NULL) return HS_E_NOMEM;
        for (int k = 0; k < n; k++) all[k] = k;
        members = all;
    }
    e->round_bytes += 2.0 * (n - 1) * c->bytes;
    int status = network_ring_start(e->network, e->now, members, n, c->bytes, payload);
    free(all);
    return status;
}

static int engine_collective_done(Engine *e, int slot)
{
    Collective *c = e->collectives[slot];
    e->collectives[slot] = NULL;
    if (c->blocking)
        for (int k = 0; k < c->n_members; k++) {
            AgentClock *m = &e->clocks[c->members ? c->members[k] : k];
            if (m->compute_free < e->now) m->compute_free = e->now;
        }
    return queue_push(e->queue, e->now, c->kind, -1, c->data);
}

int engine_collective_join(Engine *e, Collective *c, int agent)
{
    if (e->network) return engine_collective_join_maxmin(e, c, agent);
    AgentClock *clock = &e->clocks[agent];
    double t = e->now;
    if (c->blocking && clock->compute_free > t) t = clock->compute_free;
    if (clock->uplink_free > t) t = clock->uplink_free;
    if (c->joined == 0 || t > c->ready) c->ready = t;
    if (++c->joined < c->n_members) return HS_OK;

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
            double bw = engine_bandwidth(e, a, b, c->ready);
            double lat = engine_latency(e, a, b);
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
        engine_book_busy(m, c->ready, finish);
        m->uplink_free = finish;
        if (c->blocking && m->compute_free < finish) m->compute_free = finish;
    }
    return queue_push(e->queue, finish, c->kind, -1, c->data);
}

int engine_has_churn(const Engine *e)
{
    return e->availability_trace != NULL;
}

int engine_agent_slowed(const Engine *e, int agent)
{
    return e->clocks[agent].slow;
}

int engine_agent_online(const Engine *e, int agent, double t)
{
    const TraceSeries *availability = engine_series(e->availability_trace, agent);
    return availability == NULL || trace_value(availability, t) > 0.5;
}

double engine_agent_next_offline(const Engine *e, int agent, double t)
{
    const TraceSeries *availability = engine_series(e->availability_trace, agent);
    return availability ? trace_next_offline(availability, t) : INFINITY;
}

void engine_end_round(Engine *e)
{
    e->round_over = 1;
}

void engine_set_role(Engine *e, int agent, SinkRole role)
{
    e->clocks[agent].role = role;
}

int engine_report_pairing(Engine *e, const SinkPairing *pairing)
{
    return e->sink.ops->pairing(e->sink.ctx, e->run_id, pairing);
}

int engine_report_metric(Engine *e, const SinkMetric *metric)
{
    return e->sink.ops->metric(e->sink.ctx, e->run_id, metric);
}

void engine_begin_round(Engine *e, int round)
{
    e->round = round;
    e->round_start = e->now;
    e->round_over = 0;
    e->round_bytes = 0;
    for (int i = 0; i < e->n_nodes; i++) {
        AgentClock *c = &e->clocks[i];
        c->busy_end = e->now;
        c->compute_s = c->comm_s = c->busy_s = 0;
        c->role = SINK_ROLE_ALONE;
    }
}

int engine_report_round(Engine *e, double extra)
{
    double length = e->now - e->round_start;
    double idle_total = 0;
    if (e->network) {
        network_flush_activity(e->network, e->now);
        /* servers too, so their spans do not pile up; agent_rounds has agents only */
        for (int i = 0; i < e->n_nodes; i++) {
            AgentClock *c = &e->clocks[i];
            engine_activity_close(e, i, e->round_start, e->now, &c->busy_s, &c->comm_s);
        }
    }
    for (int i = 0; i < e->n_agents; i++) {
        const AgentClock *c = &e->clocks[i];
        const TraceSeries *availability = engine_series(e->availability_trace, i);
        double offline = availability ? trace_offline_between(availability, e->round_start, e->now) : 0;
        double idle = length - c->busy_s - offline;
        if (idle < 0) idle = 0;
        idle_total += idle;
        e->rows[i] = (SinkAgentRound){.round = e->round, .agent = i, .compute_s = c->compute_s,
                                      .comm_s = c->comm_s, .idle_s = idle, .offline_s = offline,
                                      .role = c->role};
    }
    e->total_bytes += e->round_bytes;
    SinkRound row = {.round = e->round, .t_start = e->round_start, .t_end = e->now,
                     .idle_s = idle_total, .bytes = e->round_bytes, .extra = extra};
    int status = e->sink.ops->round(e->sink.ctx, e->run_id, &row);
    if (status == HS_OK) status = e->sink.ops->agent_rounds(e->sink.ctx, e->run_id, e->rows, e->n_agents);
    return status;
}

int engine_fail_stranded(Engine *e, int agent)
{
    if (agent < 0)
        for (agent = 0; agent < e->n_nodes - 1 && engine_agent_online(e, agent, INFINITY); agent++)
            continue;
    char who[48];
    if (agent >= e->n_agents) snprintf(who, sizeof who, "the server (node %d)", agent);
    else snprintf(who, sizeof who, "agent %d", agent);
    return hs_diag_set(e->diag, HS_E_INPUT, e->nodes[agent].availability_source, 0,
                       "round %d can never end: %s is offline for good from this availability trace's "
                       "last row (end it with the %s online)",
                       e->round + 1, who, agent >= e->n_agents ? "server" : "agent");
}

static int engine_network_wakeup(Engine *e, const Event *ev);

static int engine_internal_event(Engine *e, const Event *ev)
{
    switch (ev->kind) {
    case ENGINE_EVENT_COLLECTIVE_START: return engine_collective_start(e, (int)ev->data);
    case ENGINE_EVENT_COLLECTIVE_DONE: return engine_collective_done(e, (int)ev->data);
    case ENGINE_EVENT_NETWORK: return engine_network_wakeup(e, ev);
    default: return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "unknown engine event %d", ev->kind);
    }
}

/* maxmin: the network's next due time is an engine event (ENGINE_EVENT_NETWORK) in the
 * queue, re-armed after every event; one that became stale (the network's next time moved
 * later) does nothing. A message arriving at t is delivered by an event queued at t. */
static int engine_network_arm(Engine *e)
{
    double t;
    if (network_next_time(e->network, &t) != HS_OK) return HS_E_NOMEM;
    if (!(t < e->network_wakeup)) return HS_OK;
    e->network_wakeup = t;
    return queue_push(e->queue, t, ENGINE_EVENT_NETWORK, -1, 0);
}

static int engine_network_wakeup(Engine *e, const Event *ev)
{
    if (ev->time == e->network_wakeup) e->network_wakeup = INFINITY;
    double t;
    if (network_next_time(e->network, &t) != HS_OK) return HS_E_NOMEM;
    if (t > e->now) return HS_OK;
    return network_advance(e->network, e->now);
}

/* ---- the network's hooks ---- */

static void engine_on_done(void *ctx, const NetworkPayload *p, double t)
{
    Engine *e = ctx;
    int status = queue_push(e->queue, t, p->kind, p->agent, p->data);
    if (status != HS_OK)
        hs_diag_set(e->diag, status, NULL, 0, "cannot queue a delivery at t = %.17g (now %.17g)", t, e->now);
}

/* The network's hooks return nothing (sim/kernel/network.h): an error inside one lands
 * in the diag, which engine_play checks after every event. */
static void engine_on_active(void *ctx, int agent, double start, double end)
{
    engine_activity_add(ctx, agent, 0, start, end);
}

static void engine_on_periodic(void *ctx, int agent, const NetworkPeriodic *p)
{
    Engine *e = ctx;
    AgentActivity *a = &e->activity[agent];
    /* Reported up to now, so later computations start after it: only the ones booked
     * already can overlap it (a blocking collective has none: its measure is enough). */
    int overlaps = 0;
    for (int k = a->n_compute - 1; k >= 0 && a->compute[k].end > p->from && !overlaps; k--)
        overlaps = a->compute[k].start < p->to;
    if (!overlaps) {
        a->ring_s += periodic_measure(p, p->from, p->to);
        return;
    }
    if (activity_grow((void **)&a->rings, &a->cap_rings, a->n_rings, sizeof *a->rings) != HS_OK) {
        hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for accounting");
        return;
    }
    a->rings[a->n_rings++] = *p;
}

static void engine_on_sender_idle(void *ctx, int agent, double t)
{
    Engine *e = ctx;
    Collective *c = e->pending_join[agent];
    if (c == NULL) return;
    e->pending_join[agent] = NULL;
    int status = engine_collective_join_maxmin(e, c, agent);
    if (status != HS_OK && e->diag->status == HS_OK) hs_diag_set(e->diag, status, NULL, 0, "%s", hs_error_name(status));
}

static void engine_on_traced(void *ctx, int from, int to, double bytes, double start, double transfer, double end)
{
    Engine *e = ctx;
    SinkActivity a = {.kind = SINK_ACTIVITY_MESSAGE, .agent = from, .to = to, .amount = bytes, .start = start,
                      .transfer = transfer, .end = end};
    if (e->sink.ops->activity(e->sink.ctx, e->run_id, &a) != HS_OK)
        hs_diag_set(e->diag, HS_E_IO, NULL, 0, "the sink refused an activity");
}

/* The first change of a series after t (INFINITY: none). */
static double engine_series_next(const TraceSeries *s, double t)
{
    if (s == NULL) return INFINITY;
    int lo = 0, hi = s->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->times[mid] > t) hi = mid;
        else lo = mid + 1;
    }
    return lo < s->n ? s->times[lo] : INFINITY;
}

/* Link capacity under traces: the bandwidth trace's value, 0 while the agent is offline. */
static double engine_link_capacity(void *ctx, int link, double t, double *next)
{
    Engine *e = ctx;
    int n = e->n_nodes;
    if (link >= 2 * n) {
        *next = INFINITY;
        return e->spec.backbone;
    }
    int agent = link < n ? link : link - n;
    const TraceSeries *bw = engine_series(link < n ? e->uplink_trace : e->downlink_trace, agent);
    const TraceSeries *availability = engine_series(e->availability_trace, agent);
    double value = bw ? trace_value(bw, t) : link < n ? e->nodes[agent].uplink : e->nodes[agent].downlink;
    if (availability && trace_value(availability, t) <= 0.5) value = 0;
    double a = engine_series_next(bw, t), b = engine_series_next(availability, t);
    *next = a < b ? a : b;
    return value;
}

static int engine_network_create(Engine *e)
{
    const EngineNetwork *spec = &e->spec;
    int n = e->n_nodes;
    double *up = malloc((size_t)n * sizeof *up), *down = malloc((size_t)n * sizeof *down);
    double *latency = malloc((size_t)n * sizeof *latency);
    e->activity = calloc((size_t)n, sizeof *e->activity);
    e->pending_join = calloc((size_t)n, sizeof *e->pending_join);
    int status = HS_E_NOMEM;
    if (up && down && latency && e->activity && e->pending_join) {
        for (int i = 0; i < n; i++) {
            up[i] = e->nodes[i].uplink;
            down[i] = e->nodes[i].downlink;
            latency[i] = e->nodes[i].latency;
        }
        int lv08 = spec->lv08;
        int varying = e->uplink_trace || e->downlink_trace || e->availability_trace;
        NetworkOptions options = {.n_agents = n, .uplink = up, .downlink = down, .latency = latency,
                                  .backbone = spec->backbone, .uplink_fifo = spec->uplink_fifo,
                                  .latency_factor = lv08 ? engine_lv08_latency : 1,
                                  .bandwidth_factor = lv08 ? engine_lv08_bandwidth : 1,
                                  .weight_s = lv08 ? engine_lv08_weight_s : 0,
                                  .capacity = varying ? engine_link_capacity : NULL, .capacity_ctx = e};
        NetworkHooks hooks = {.ctx = e, .done = engine_on_done, .active = engine_on_active,
                              .active_periodic = engine_on_periodic, .sender_idle = engine_on_sender_idle,
                              .traced = e->sink.ops->activity ? engine_on_traced : NULL};
        e->network = network_create(&options, &hooks);
        if (e->network) status = HS_OK;
    }
    free(up);
    free(down);
    free(latency);
    return status;
}


int engine_play(Engine *e)
{
    int status = e->network ? engine_network_arm(e) : HS_OK;
    Event ev;
    while (status == HS_OK && !e->round_over) {
        if (!queue_pop(e->queue, &ev)) {
            /* messages left that can never move: a node offline for good */
            if (e->network && network_pending(e->network) > 0) status = engine_fail_stranded(e, -1);
            break;
        }
        if (!isfinite(ev.time)) {
            status = engine_fail_stranded(e, -1); /* only work at t = inf is left */
            break;
        }
        e->now = ev.time;
        if (ev.kind < ENGINE_EVENT_METHOD) status = engine_internal_event(e, &ev);
        else status = e->handler(e->handler_ctx, &ev);
        if (status == HS_OK && e->network) status = engine_network_arm(e);
        if (status == HS_OK && e->diag->status != HS_OK) status = e->diag->status;
        if (status == HS_OK && interrupt_requested()) status = HS_E_INTERRUPTED;
    }
    return status;
}

void engine_end_run(Engine *e)
{
    if (e->network && e->sink.ops->activity) network_trace_pending(e->network);
}

double engine_now(const Engine *e)
{
    return e->now;
}

int engine_round(const Engine *e)
{
    return e->round;
}

double engine_round_start(const Engine *e)
{
    return e->round_start;
}

int engine_round_over(const Engine *e)
{
    return e->round_over;
}

double engine_round_bytes(const Engine *e)
{
    return e->round_bytes;
}

double engine_total_bytes(const Engine *e)
{
    return e->total_bytes;
}

size_t engine_node_bytes(void)
{
    return sizeof(AgentClock);
}

void engine_set_run(Engine *e, int64_t run_id)
{
    e->run_id = run_id;
}

int engine_create(const EngineConfig *config, Engine **out)
{
    HsDiag *diag = config->diag;
    int status = HS_OK;
    Engine *e = *out = calloc(1, sizeof *e);
    if (e == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    e->n_agents = config->n_agents;
    e->n_nodes = config->n_agents + config->n_servers;
    e->compute_trace = config->traces.compute;
    e->uplink_trace = config->traces.uplink;
    e->downlink_trace = config->traces.downlink;
    e->availability_trace = config->traces.availability;
    e->spec = config->network;
    e->sink = config->sink;
    e->run_id = -1;
    e->handler = config->handler;
    e->handler_ctx = config->handler_ctx;
    e->diag = diag;
    e->network_wakeup = INFINITY;
    e->nodes = malloc((size_t)e->n_nodes * sizeof *e->nodes);
    e->queue = queue_create((size_t)e->n_agents * 2 + 16);
    e->clocks = calloc((size_t)e->n_nodes, sizeof *e->clocks);
    e->rows = calloc((size_t)e->n_agents, sizeof *e->rows);
    if (e->nodes == NULL || e->queue == NULL || e->clocks == NULL || e->rows == NULL) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for %d agents", e->n_agents);
        goto fail;
    }
    memcpy(e->nodes, config->nodes, (size_t)e->n_nodes * sizeof *e->nodes);
    for (int i = 0; i < e->n_nodes; i++) {
        const EngineNode *node = &e->nodes[i];
        if (node->slowdown.kind != SLOWDOWN_MARKOV && node->jitter == 0) continue;
        if ((e->dynamics_rng == NULL && (e->dynamics_rng = calloc((size_t)e->n_nodes, sizeof *e->dynamics_rng)) == NULL) ||
            (e->dynamics_rng[i] = rng_stream_create(config->seed, (uint64_t)i, RNG_PURPOSE_DYNAMICS)) == NULL) {
            status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
            goto fail;
        }
    }
    if (e->spec.maxmin && engine_network_create(e) != HS_OK) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for the network of %d agents", e->n_agents);
        goto fail;
    }
    return HS_OK;
fail:
    engine_free(e);
    *out = NULL;
    return status;
}

void engine_free(Engine *e)
{
    if (e == NULL) return;
    network_free(e->network);
    engine_activity_free(e);
    free(e->collectives);
    free(e->pending_join);
    queue_free(e->queue);
    free(e->clocks);
    free(e->rows);
    if (e->dynamics_rng)
        for (int i = 0; i < e->n_nodes; i++)
            if (e->dynamics_rng[i]) gsl_rng_free(e->dynamics_rng[i]);
    free(e->dynamics_rng);
    free(e->nodes);
    free(e);
}
