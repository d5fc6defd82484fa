/* engine.c — the run loop, the cost-model primitives and per-round accounting.
 * It stays one file: the primitives share the agents' clocks and the round's accounting,
 * whose invariants (busy intervals, offline time) every primitive must keep. */
#include "sim/engine.h"
#include "sim/stages/byzantine.h"
#include "sim/kernel/interrupt.h"
#include "sim/kernel/network.h"
#include "sim/stages/privacy.h"
#include "sim/kernel/rng.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Runs with neither rounds nor a time budget stop at the target or at this cap. */
enum { ENGINE_MAX_ROUNDS = 100000 };

double engine_step_flops(const Engine *e, int batch)
{
    return batch * (e->profile.total_flops + e->profile.loss_flops);
}

double engine_model_bytes(const Engine *e)
{
    return 4.0 * e->profile.total_params;
}

int engine_agent_steps(const Engine *e, int agent)
{
    return world_agent_steps(&e->world, agent, e->sc->model.batch);
}

int engine_round_steps(const Engine *e)
{
    double total = 0;
    for (int i = 0; i < e->world.n; i++) total += e->world.agents[i].samples;
    double mean = total / e->world.n;
    int steps = (int)ceil(mean / e->sc->model.batch);
    return steps < 1 ? 1 : steps;
}

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

static void engine_activity_add(Engine *e, int agent, int compute, double start, double end)
{
    AgentActivity *a = &e->activity[agent];
    int status = compute ? activity_add_span(&a->compute, &a->n_compute, &a->cap_compute, start, end)
                         : activity_add_span(&a->comm, &a->n_comm, &a->cap_comm, start, end);
    if (status != HS_OK) hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for accounting");
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
    for (int i = 0; i < world_nodes(&e->world); i++) {
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

static const TraceSeries *engine_series(const TraceSeries **per_agent, int agent);

/* min(uplink of from, downlink of to) at time t, traces included. */
static double engine_link_bandwidth(const Engine *e, int from, int to, double t)
{
    const TraceSeries *up = engine_series(e->uplink_trace, from), *down = engine_series(e->downlink_trace, to);
    double u = up ? trace_value(up, t) : e->world.agents[from].uplink;
    double d = down ? trace_value(down, t) : e->world.agents[to].downlink;
    return u < d ? u : d;
}

static const TraceSeries *engine_series(const TraceSeries **per_agent, int agent)
{
    return per_agent ? per_agent[agent] : NULL;
}

/* When work of `seconds` started at start ends, pausing while the agent is offline. */
static double engine_finish(const Engine *e, int agent, double start, double seconds)
{
    const TraceSeries *availability = engine_series(e->availability_trace, agent);
    return availability ? trace_advance_online(availability, start, seconds) : start + seconds;
}

double engine_compute(Engine *e, int agent, double flops, int kind, int64_t data)
{
    AgentClock *c = &e->clocks[agent];
    double start = c->compute_free > e->now ? c->compute_free : e->now;
    const TraceSeries *speed = engine_series(e->compute_trace, agent);
    double duration = flops / (speed ? trace_value(speed, start) : e->world.agents[agent].compute);
    const AgentGroupSpec *g = &e->sc->groups[e->world.agents[agent].group];
    if (g->slowdown.kind != SLOWDOWN_NONE || g->jitter > 0)
        duration *= slowdown_factor(&g->slowdown, g->jitter, start, &c->slow,
                                    e->dynamics_rng ? e->dynamics_rng[agent] : NULL);
    double finish = engine_finish(e, agent, start, duration);
    c->compute_free = finish;
    c->compute_s += duration;
    if (e->network) engine_activity_add(e, agent, 1, start, start + duration);
    else engine_book_busy(c, start, start + duration);
    if (e->network && e->sink.ops->activity) {
        SinkActivity a = {.kind = SINK_ACTIVITY_COMPUTE, .agent = agent, .to = -1, .amount = flops, .start = start,
                          .transfer = start, .end = start + duration};
        if (e->sink.ops->activity(e->sink.ctx, e->run_id, &a) != HS_OK)
            hs_diag_set(e->diag, HS_E_IO, NULL, 0, "the sink refused an activity");
    }
    if (queue_push(e->queue, finish, kind, agent, data) != HS_OK)
        hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return finish;
}

/* [network] tcp = lv08 under fifo: SimGrid's LV08 factors. */
static const double engine_lv08_latency = 13.01, engine_lv08_bandwidth = 0.97, engine_lv08_weight_s = 20537;

static double engine_latency(const Engine *e, int from, int to)
{
    double latency = world_link_latency(&e->world, from, to);
    return e->sc->network.tcp == TCP_LV08 ? latency * engine_lv08_latency : latency;
}

static double engine_bandwidth(const Engine *e, int from, int to, double t)
{
    double bandwidth = engine_link_bandwidth(e, from, to, t);
    return e->sc->network.tcp == TCP_LV08 ? bandwidth * engine_lv08_bandwidth : bandwidth;
}

double engine_send(Engine *e, int from, int to, double bytes, int kind, int64_t data)
{
    if (e->network) {
        e->round_bytes += bytes;
        NetworkPayload payload = {.kind = kind, .agent = to, .data = data};
        if (network_send(e->network, e->now, from, to, bytes, payload) != HS_OK)
            hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for messages");
        return NAN;
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
        hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return arrival;
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

static void engine_round_reset(Engine *e)
{
    e->round_start = e->now;
    e->round_over = 0;
    e->round_bytes = 0;
    e->round_extra = NAN;
    for (int i = 0; i < world_nodes(&e->world); i++) {
        AgentClock *c = &e->clocks[i];
        c->busy_end = e->now;
        c->compute_s = c->comm_s = c->busy_s = 0;
        c->role = SINK_ROLE_ALONE;
    }
}

static int engine_round_report(Engine *e)
{
    double length = e->now - e->round_start;
    double idle_total = 0;
    if (e->network) {
        network_flush_activity(e->network, e->now);
        /* servers too, so their spans do not pile up; agent_rounds has agents only */
        for (int i = 0; i < world_nodes(&e->world); i++) {
            AgentClock *c = &e->clocks[i];
            engine_activity_close(e, i, e->round_start, e->now, &c->busy_s, &c->comm_s);
        }
    }
    for (int i = 0; i < e->world.n; i++) {
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
                     .idle_s = idle_total, .bytes = e->round_bytes, .extra = e->round_extra};
    int status = e->sink.ops->round(e->sink.ctx, e->run_id, &row);
    if (status == HS_OK) status = e->sink.ops->agent_rounds(e->sink.ctx, e->run_id, e->rows, e->world.n);
    if (status == HS_OK && e->trainer == NULL) {
        SinkMetric m = {.t = e->now, .round = e->round, .agent = -1, .train_loss = NAN,
                        .test_loss = NAN, .test_accuracy = NAN, .bytes_sent = e->total_bytes};
        if (e->privacy) { /* the accounting needs no arithmetic: timing mode reports it too */
            m.has_privacy = 1;
            m.epsilon = privacy_spent(e->privacy);
        }
        status = engine_report_metric(e, &m);
    }
    return status;
}

/* Plays one round: the method schedules, events run in (time, seq) order. */
int engine_fail_stranded(Engine *e, int agent)
{
    if (agent < 0)
        for (agent = 0; agent < world_nodes(&e->world) - 1 && engine_agent_online(e, agent, INFINITY); agent++)
            continue;
    const Distribution *trace = &e->sc->groups[e->world.agents[agent].group].availability;
    char who[48];
    if (agent >= e->world.n) snprintf(who, sizeof who, "the server (node %d)", agent);
    else snprintf(who, sizeof who, "agent %d", agent);
    return hs_diag_set(e->diag, HS_E_INPUT, trace->kind == DIST_TRACE ? trace->path : e->sc->file, 0,
                       "round %d can never end: %s is offline for good from this availability trace's "
                       "last row (end it with the %s online)",
                       e->round + 1, who, agent >= e->world.n ? "server" : "agent");
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

/* Train mode, after a round: the trainer's evaluation (when it is due) becomes the
 * metrics row of the averaged model at the round's end. */
static int engine_evaluate(Engine *e)
{
    SinkMetric metric;
    int evaluated, status = trainer_round_end(e->trainer, &metric, &evaluated);
    if (status != HS_OK || !evaluated) return status;
    e->last_accuracy = metric.test_accuracy;
    if (e->privacy) {
        metric.has_privacy = 1;
        metric.epsilon = privacy_spent(e->privacy);
    }
    metric.t = e->now;
    metric.bytes_sent = e->total_bytes + e->round_bytes;
    return engine_report_metric(e, &metric);
}

static int engine_play_round(Engine *e)
{
    engine_round_reset(e);
    trainer_begin_round(e->trainer, e->round);
    int status = e->method->round_begin(e->method_state, e, e->round);
    if (status == HS_OK && e->network) status = engine_network_arm(e);
    Event ev;
    while (status == HS_OK && !e->round_over) {
        if (!queue_pop(e->queue, &ev)) {
            /* messages left that can never move: an agent offline for good */
            if (e->network && network_pending(e->network) > 0) status = engine_fail_stranded(e, -1);
            break;
        }
        if (!isfinite(ev.time)) {
            status = engine_fail_stranded(e, -1); /* only work at t = inf is left */
            break;
        }
        e->now = ev.time;
        if (ev.kind < ENGINE_EVENT_METHOD) status = engine_internal_event(e, &ev);
        else status = e->method->on_event(e->method_state, e, &ev);
        if (status == HS_OK && e->network) status = engine_network_arm(e);
        if (status == HS_OK && e->diag->status != HS_OK) status = e->diag->status;
        if (status == HS_OK && interrupt_requested()) status = HS_E_INTERRUPTED;
    }
    if (status == HS_OK && e->method->round_end) status = e->method->round_end(e->method_state, e, e->round);
    if (status == HS_OK && e->trainer) status = engine_evaluate(e);
    if (status == HS_OK) status = engine_round_report(e);
    return status;
}

static SinkAgent *engine_sink_agents(const Engine *e)
{
    SinkAgent *rows = calloc((size_t)e->world.n, sizeof *rows);
    if (rows == NULL) return NULL;
    for (int i = 0; i < e->world.n; i++) {
        const AgentProfile *a = &e->world.agents[i];
        rows[i] = (SinkAgent){.agent = i, .group = e->sc->groups[a->group].name, .compute = a->compute,
                              .uplink = a->uplink, .downlink = a->downlink, .latency = a->latency,
                              .samples = a->samples, .byzantine = a->byzantine};
    }
    return rows;
}

/* Loads the traces of one attribute: one file per group that uses one. */
static int engine_load_attribute(Engine *e, int attribute, const TraceSeries ***per_agent, HsDiag *diag)
{
    const Scenario *sc = e->sc;
    int n = world_nodes(&e->world);
    /* the server's attributes are groups[n_groups] (a trace names it `server`) */
    int n_groups = sc->n_groups + (e->world.n_servers > 0);
    for (int g = 0; g < n_groups; g++) {
        const AgentGroupSpec *spec = &sc->groups[g];
        const Distribution *d = attribute == 0 ? &spec->compute : attribute == 1 ? &spec->uplink
                              : attribute == 2 ? &spec->downlink : &spec->availability;
        if (d->kind != DIST_TRACE) continue;
        if (*per_agent == NULL && (*per_agent = calloc((size_t)n, sizeof **per_agent)) == NULL) return HS_E_NOMEM;
        char *needed = calloc((size_t)n, 1);
        Trace *grown = realloc(e->traces, (size_t)(e->n_traces + 1) * sizeof *e->traces);
        if (needed == NULL || grown == NULL) {
            free(needed);
            if (grown) e->traces = grown;
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        }
        e->traces = grown;
        /* the loader the resolver checked this trace with (its nodes are world.c's) */
        int status = scenario_trace_load(sc, g, attribute, needed, &e->traces[e->n_traces], diag);
        if (status != HS_OK) {
            free(needed);
            return status;
        }
        Trace *t = &e->traces[e->n_traces++];
        for (int i = 0; i < n; i++)
            if (needed[i]) {
                (*per_agent)[i] = &t->series[i];
                double v = trace_value(&t->series[i], 0);
                if (attribute == 0) e->world.agents[i].compute = v;
                if (attribute == 1) e->world.agents[i].uplink = v;
                if (attribute == 2 || (attribute == 1 && spec->symmetric_link)) e->world.agents[i].downlink = v;
            }
        if (attribute == 1 && spec->symmetric_link) {
            if (e->downlink_trace == NULL && (e->downlink_trace = calloc((size_t)n, sizeof *e->downlink_trace)) == NULL) {
                free(needed);
                return HS_E_NOMEM;
            }
            for (int i = 0; i < n; i++)
                if (needed[i]) e->downlink_trace[i] = &t->series[i];
        }
        free(needed);
    }
    return HS_OK;
}

static int engine_load_traces(Engine *e, HsDiag *diag)
{
    int status;
    if ((status = engine_load_attribute(e, 0, &e->compute_trace, diag)) ||
        (status = engine_load_attribute(e, 1, &e->uplink_trace, diag)) ||
        (status = engine_load_attribute(e, 2, &e->downlink_trace, diag)) ||
        (status = engine_load_attribute(e, 3, &e->availability_trace, diag)))
        return status;
    return HS_OK;
}

/* Bytes of memory the system can still give, from /proc/meminfo (0 when unknown). */
static double engine_available_memory(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL) return 0;
    char line[256];
    double kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024.0;
}

/* Refuses, before allocating, a run whose models cannot fit: each agent holds its
 * parameters, gradients and optimiser state (Adam: two more vectors, momentum one). */
static int engine_check_memory(const Engine *e, HsDiag *diag)
{
    const Scenario *sc = e->sc;
    double vectors = 2 + (sc->optim.kind == OPTIM_ADAM || sc->optim.kind == OPTIM_ADAMW ? 2
                          : sc->optim.kind == OPTIM_MOMENTUM ? 1 : 0);
    double per_agent = sc->mode == RUN_MODE_TRAIN ? 4.0 * e->profile.total_params * vectors : 0;
    per_agent += sizeof(AgentClock) + sizeof(AgentProfile) + sizeof(SinkAgentRound) + 64;
    double need = per_agent * e->world.n;
    double available = engine_available_memory();
    if (available > 0 && need > available)
        return hs_diag_set(diag, HS_E_NOMEM, sc->file, 0,
                           "this run needs about %.1f GB (%d agents x %.1f MB) but only %.1f GB of memory is "
                           "available; use fewer agents, a smaller model, or mode = timing",
                           need / 1e9, e->world.n, per_agent / 1e6, available / 1e9);
    return HS_OK;
}

/* ---- the network's hooks ---- */

static void engine_on_done(void *ctx, const NetworkPayload *p, double t)
{
    Engine *e = ctx;
    int status = queue_push(e->queue, t, p->kind, p->agent, p->data);
    if (status != HS_OK)
        hs_diag_set(e->diag, status, NULL, 0, "cannot queue a delivery at t = %.17g (now %.17g)", t, e->now);
}

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
    int n = world_nodes(&e->world);
    if (link >= 2 * n) {
        *next = INFINITY;
        return e->sc->network.backbone;
    }
    int agent = link < n ? link : link - n;
    const TraceSeries *bw = engine_series(link < n ? e->uplink_trace : e->downlink_trace, agent);
    const TraceSeries *availability = engine_series(e->availability_trace, agent);
    double value = bw ? trace_value(bw, t) : link < n ? e->world.agents[agent].uplink : e->world.agents[agent].downlink;
    if (availability && trace_value(availability, t) <= 0.5) value = 0;
    double a = engine_series_next(bw, t), b = engine_series_next(availability, t);
    *next = a < b ? a : b;
    return value;
}

static int engine_network_create(Engine *e)
{
    const NetworkSpec *spec = &e->sc->network;
    int n = world_nodes(&e->world);
    double *up = malloc((size_t)n * sizeof *up), *down = malloc((size_t)n * sizeof *down);
    double *latency = malloc((size_t)n * sizeof *latency);
    e->activity = calloc((size_t)n, sizeof *e->activity);
    e->pending_join = calloc((size_t)n, sizeof *e->pending_join);
    int status = HS_E_NOMEM;
    if (up && down && latency && e->activity && e->pending_join) {
        for (int i = 0; i < n; i++) {
            up[i] = e->world.agents[i].uplink;
            down[i] = e->world.agents[i].downlink;
            latency[i] = e->world.agents[i].latency;
        }
        int lv08 = spec->tcp == TCP_LV08;
        int varying = e->uplink_trace || e->downlink_trace || e->availability_trace;
        NetworkOptions options = {.n_agents = n, .uplink = up, .downlink = down, .latency = latency,
                                  .backbone = spec->backbone, .uplink_fifo = spec->uplink == UPLINK_FIFO,
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

static int engine_setup(Engine *e, const Scenario *sc, Sink sink, HsDiag *diag)
{
    memset(e, 0, sizeof *e);
    e->sc = sc;
    e->sink = sink;
    e->diag = diag;
    e->last_accuracy = NAN;
    e->run_id = -1;
    int status = world_build(sc, &e->world, diag);
    if (status != HS_OK) return status;
    if ((status = engine_load_traces(e, diag)) != HS_OK) return status;
    if (model_profile(&sc->model, &e->profile) != HS_OK)
        return hs_diag_set(diag, HS_E_INPUT, sc->file, 0, "[model] does not describe a valid network");
    if ((status = engine_check_memory(e, diag)) != HS_OK) return status;
    e->queue = queue_create((size_t)e->world.n * 2 + 16);
    e->clocks = calloc((size_t)world_nodes(&e->world), sizeof *e->clocks);
    e->rows = calloc((size_t)e->world.n, sizeof *e->rows);
    if (e->queue == NULL || e->clocks == NULL || e->rows == NULL)
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for %d agents", e->world.n);
    for (int i = 0; i < world_nodes(&e->world); i++) {
        const AgentGroupSpec *g = &sc->groups[e->world.agents[i].group];
        if (g->slowdown.kind != SLOWDOWN_MARKOV && g->jitter == 0) continue;
        if (e->dynamics_rng == NULL &&
            (e->dynamics_rng = calloc((size_t)world_nodes(&e->world), sizeof *e->dynamics_rng)) == NULL)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        if ((e->dynamics_rng[i] = rng_stream_create(sc->seed, (uint64_t)i, RNG_PURPOSE_DYNAMICS)) == NULL)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    e->network_wakeup = INFINITY;
    if (sc->network.model == NETWORK_MAXMIN && engine_network_create(e) != HS_OK)
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for the network of %d agents", e->world.n);
    e->method = method_lookup(sc->method);
    if (e->method == NULL) return hs_diag_set(diag, HS_E_INPUT, sc->file, 0, "unknown method '%s'", sc->method);
    if (sc->mode == RUN_MODE_TRAIN && (status = trainer_create(sc, &e->world, diag, &e->trainer)) != HS_OK)
        return status;
    return e->method->create(e, &e->method_state);
}

static void engine_teardown(Engine *e)
{
    if (e->method && e->method_state) e->method->destroy(e->method_state);
    trainer_free(e->trainer);
    network_free(e->network);
    engine_activity_free(e);
    free(e->collectives);
    free(e->pending_join);
    queue_free(e->queue);
    free(e->clocks);
    free(e->rows);
    if (e->dynamics_rng)
        for (int i = 0; i < world_nodes(&e->world); i++)
            if (e->dynamics_rng[i]) gsl_rng_free(e->dynamics_rng[i]);
    free(e->dynamics_rng);
    for (int i = 0; i < e->n_traces; i++) trace_free(&e->traces[i]);
    free(e->traces);
    free(e->compute_trace);
    free(e->uplink_trace);
    free(e->downlink_trace);
    free(e->availability_trace);
    world_free(&e->world);
}

int engine_open(const Scenario *sc, Sink sink, HsDiag *diag, Engine **out)
{
    *out = malloc(sizeof **out);
    if (*out == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    int status = engine_setup(*out, sc, sink, diag);
    if (status != HS_OK) {
        engine_close(*out);
        *out = NULL;
    }
    return status;
}

void engine_close(Engine *e)
{
    if (e == NULL) return;
    engine_teardown(e);
    free(e);
}

static double engine_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int engine_run(const Scenario *sc, Sink sink, HsDiag *diag, RunOutcome *outcome)
{
    Engine e;
    double wall_start = engine_wall_seconds();
    memset(outcome, 0, sizeof *outcome);
    outcome->run_id = -1;
    outcome->final_accuracy = NAN;
    int status = engine_setup(&e, sc, sink, diag);
    char *config = NULL;
    SinkAgent *agents = NULL;
    if (status != HS_OK) goto done;

    config = scenario_config_string(sc);
    agents = engine_sink_agents(&e);
    if (config == NULL || agents == NULL) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    SinkRunInfo info = {.name = sc->name, .scenario = sc->file, .method = sc->method, .seed = sc->seed,
                        .mode = sc->mode == RUN_MODE_TRAIN ? "train" : "timing", .config = config};
    if ((status = sink.ops->run_begin(sink.ctx, &info, &e.run_id)) != HS_OK) goto done;
    outcome->run_id = e.run_id;
    status = sink.ops->agents(sink.ctx, e.run_id, agents, e.world.n);

    int max_rounds = sc->rounds > 0 ? sc->rounds : ENGINE_MAX_ROUNDS;
    for (e.round = 0; status == HS_OK && e.round < max_rounds; e.round++) {
        if (e.now >= sc->time_budget) break;
        status = engine_play_round(&e);
        if (status == HS_OK) outcome->rounds_done = e.round + 1;
        if (status == HS_OK && sc->target_accuracy > 0 && e.last_accuracy >= sc->target_accuracy) {
            e.target_reached = 1;
            break;
        }
    }

    if (e.network && sink.ops->activity) network_trace_pending(e.network);
    SinkRunEnd end = {.wall_s = engine_wall_seconds() - wall_start, .sim_time_s = e.now,
                      .final_accuracy = e.last_accuracy, .rounds_done = outcome->rounds_done};
    if (status == HS_OK) end.status = SINK_STATUS_DONE;
    else if (status == HS_E_DIVERGED) end.status = SINK_STATUS_DIVERGED;
    else if (status == HS_E_INTERRUPTED) end.status = SINK_STATUS_INTERRUPTED;
    else end.status = SINK_STATUS_FAILED;
    if (status != HS_OK && diag->status == HS_OK) hs_diag_set(diag, status, NULL, 0, "%s", hs_error_name(status));
    end.message = status == HS_OK ? NULL : diag->message;
    int end_status = sink.ops->run_end(sink.ctx, e.run_id, &end);
    if (status == HS_OK) status = end_status;
    outcome->status = end.status;
    outcome->sim_time_s = e.now;
    outcome->final_accuracy = e.last_accuracy;
done:
    free(config);
    free(agents);
    engine_teardown(&e);
    return status;
}
