/* battery.c — batteries checked at the instant they empty (battery.h, docs/energy.md).
 * Workload: a handful of booked computations per node at a time; a walk visits the
 * segments between the checkpoint and the crossing (computation edges, availability and
 * charging changes), at most BATTERY_WALK_SEGMENTS past the horizon asked before it is
 * left to an event to go on. */
#include "sim/kernel/battery.h"

#include "base/grow.h"
#include "sim/kernel/engine_network.h"
#include "sim/kernel/queue.h"

#include <math.h>
#include <stdlib.h>

#define BATTERY_WALK_SEGMENTS 256

/* One node's instant battery: its charge q at tq, and the computations booked that end
 * after tq (start, finish), in booking (= time) order. */
struct BatteryInstant {
    double tq, q;
    double empty_at;   /* start of the last outage it cut */
    int n, cap;
    double *start, *finish;
    double armed_at;   /* the earliest of its events queued (INFINITY: none) */
};

int battery_create(Engine *e)
{
    int any = 0;
    for (int i = 0; i < e->n_agents; i++) any |= engine_profile(e, i)->battery > 0 && engine_profile(e, i)->battery_instant;
    if (!any) return HS_OK;
    e->instant = calloc((size_t)e->n_nodes, sizeof *e->instant);
    if (e->instant == NULL) return HS_E_NOMEM;
    for (int i = 0; i < e->n_nodes; i++) {
        e->instant[i].q = i < e->n_agents ? engine_profile(e, i)->battery : 0;
        e->instant[i].empty_at = -INFINITY;
        e->instant[i].armed_at = INFINITY;
    }
    return HS_OK;
}

void battery_free(Engine *e)
{
    if (e->instant == NULL) return;
    for (int i = 0; i < e->n_nodes; i++) {
        free(e->instant[i].start);
        free(e->instant[i].finish);
    }
    free(e->instant);
    e->instant = NULL;
}

static double battery_charging_at(const Engine *e, int node, double t)
{
    const TraceSeries *charging = engine_series(e->charging_trace, node);
    return charging ? trace_value(charging, t) : engine_profile(e, node)->charging;
}

int battery_cut(Engine *e, int node, double from)
{
    const EngineNode *n = engine_profile(e, node);
    EnergyClock *c = &e->energy_clocks[node];
    const TraceSeries *charging = engine_series(e->charging_trace, node);
    double resume = n->resume_charge > 0 ? n->resume_charge : n->battery;
    if (charging) c->battery_back = trace_advance_integral(charging, from, resume);
    else c->battery_back = n->charging > 0 ? from + resume / n->charging : INFINITY;
    int status = trace_series_offline(&e->battery_series[node], from, c->battery_back);
    if (status != HS_OK && e->diag->status != HS_OK) return e->diag->status; /* a markov() draw failed */
    if (status != HS_OK) return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for agent %d's battery", node);
    if (e->model->availability_changed && (status = e->model->availability_changed(e, node)) != HS_OK)
        return hs_diag_set(e->diag, status, NULL, 0, "out of memory for the network");
    if (battery_instant(e, node)) {
        /* the checkpoint jumps to the agent's return, holding resume_charge */
        BatteryInstant *b = &e->instant[node];
        b->empty_at = from;
        b->tq = c->battery_back;
        b->q = resume;
    }
    return HS_OK;
}

/* The first computation edge after t (INFINITY: none); *computing: t is within one. */
static double battery_next_edge(const BatteryInstant *b, double t, int *computing)
{
    *computing = 0;
    for (int k = 0; k < b->n; k++) {
        if (t < b->start[k]) return b->start[k];
        if (t < b->finish[k]) {
            *computing = 1;
            return b->finish[k];
        }
    }
    return INFINITY;
}

/* Walks the charge from the checkpoint to `until` (>= tq): the first instant it reaches 0
 * (INFINITY: none before until). Without a crossing *charge is the charge at until, or,
 * when the walk stopped early (an infinite until, past BATTERY_WALK_SEGMENTS), at *stopped. */
static double battery_walk(Engine *e, int node, double until, double *charge, double *stopped)
{
    const BatteryInstant *b = &e->instant[node];
    const EngineNode *n = engine_profile(e, node);
    const TraceSeries *availability = &e->battery_series[node];
    const TraceSeries *charging = engine_series(e->charging_trace, node);
    double t = b->tq, q = b->q;
    *stopped = until;
    for (int segments = 0; t < until; segments++) {
        if (segments >= BATTERY_WALK_SEGMENTS && !isfinite(until)) {
            *stopped = t;
            break;
        }
        int computing;
        double end = battery_next_edge(b, t, &computing);
        double change = trace_next_change(availability, t);
        if (change < end) end = change;
        if (charging && (change = trace_next_change(charging, t)) < end) end = change;
        if (end > until) end = until;
        int online = trace_value(availability, t) > 0.5;
        double power = !online ? 0 : computing ? n->power_compute : n->power_idle;
        double rate = battery_charging_at(e, node, t) - power;
        /* q / (power - charging): exact for one segment from a full battery, E / (P - C) */
        if (rate < 0 && q / -rate <= end - t) return t + q / -rate;
        if (!isfinite(end)) { /* the rate holds for good and never empties it */
            *stopped = INFINITY;
            break;
        }
        q += rate * (end - t);
        if (q > n->battery) q = n->battery;
        if (q < 0) q = 0;
        t = end;
    }
    *charge = q;
    return INFINITY;
}

/* Moves the checkpoint to t (<= now: what happened before is booked for good), cutting
 * an outage at a crossing met on the way; drops the computations over by then. */
static int battery_settle(Engine *e, int node, double t)
{
    BatteryInstant *b = &e->instant[node];
    while (b->tq < t) {
        double q, stopped;
        double crossing = battery_walk(e, node, t, &q, &stopped);
        if (isfinite(crossing)) {
            int status = battery_cut(e, node, crossing);
            if (status != HS_OK) return status;
            continue;
        }
        b->tq = t;
        b->q = q;
    }
    int k = 0;
    while (k < b->n && b->finish[k] <= b->tq && b->finish[k] <= t) k++;
    for (int j = k; j < b->n; j++) {
        b->start[j - k] = b->start[j];
        b->finish[j - k] = b->finish[j];
    }
    b->n -= k;
    return HS_OK;
}

/* Queues an event at the next crossing (or where the walk stopped) when it is before the
 * earliest one queued: an event only looks again, so one too early costs a walk, and
 * the queue holds no event per booking. */
static int battery_arm(Engine *e, int node)
{
    BatteryInstant *b = &e->instant[node];
    double q, stopped;
    double crossing = battery_walk(e, node, INFINITY, &q, &stopped);
    double at = isfinite(crossing) ? crossing : stopped;
    if (at < e->now) at = e->now;
    if (!(at < b->armed_at)) return HS_OK;
    b->armed_at = at;
    if (queue_push(e->queue, at, ENGINE_EVENT_BATTERY, node, 0) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    e->instant_queued++;
    return HS_OK;
}

size_t battery_queued(const Engine *e)
{
    return e->instant_queued;
}

int battery_book_compute(Engine *e, int node, double start, double duration, double *finish)
{
    BatteryInstant *b = &e->instant[node];
    int status = battery_settle(e, node, e->now);
    if (status != HS_OK) return status;
    int cap_start = b->cap, cap_finish = b->cap; /* two arrays, one capacity */
    if (hs_grow((void **)&b->start, &cap_start, b->n, sizeof *b->start, 4) != HS_OK ||
        hs_grow((void **)&b->finish, &cap_finish, b->n, sizeof *b->finish, 4) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for agent %d's battery", node);
    b->cap = cap_finish;
    int k = b->n++;
    b->start[k] = start;
    /* each outage cut moves the finish later, where the charge may cross again */
    for (;;) {
        *finish = b->finish[k] = engine_finish(e, node, start, duration);
        double q, stopped;
        double crossing = battery_walk(e, node, *finish, &q, &stopped);
        if (!(crossing < *finish)) break;
        if ((status = battery_cut(e, node, crossing)) != HS_OK) return status;
    }
    return battery_arm(e, node);
}

int battery_event(Engine *e, const Event *ev)
{
    int node = ev->agent;
    BatteryInstant *b = &e->instant[node];
    e->instant_queued--;
    if (ev->time == b->armed_at) b->armed_at = INFINITY; /* the earliest queued: gone now */
    int status = battery_settle(e, node, e->now);
    if (status != HS_OK) return status;
    /* a crossing at now that the walk to now left as a rounding's worth of charge */
    double q, stopped;
    if (!(e->energy_clocks[node].battery_back > e->now) && battery_walk(e, node, INFINITY, &q, &stopped) <= e->now &&
        (status = battery_cut(e, node, e->now)) != HS_OK)
        return status;
    return battery_arm(e, node);
}

int battery_round_end(Engine *e, int node, double online, SinkAgentRound *row)
{
    const EngineNode *n = engine_profile(e, node);
    BatteryInstant *b = &e->instant[node];
    EnergyClock *c = &e->energy_clocks[node];
    int status = battery_settle(e, node, e->now);
    if (status != HS_OK) return status;
    /* the radio: its joules (comm_j: power_tx, power_rx) instead of power_idle while only communicating, and per byte */
    const AgentClock *clock = &e->clocks[node];
    double busy = clock->busy_s < online ? clock->busy_s : online, comm = busy - clock->compute_s;
    if (comm < 0) comm = 0;
    double radio = row->comm_j - n->power_idle * comm;
    double charge;
    if (c->battery_back > e->now) {
        /* out: charging since it emptied; the radio's joules come off its return charge */
        const TraceSeries *charging = engine_series(e->charging_trace, node);
        charge = charging ? trace_integral(charging, b->empty_at, e->now) : n->charging * (e->now - b->empty_at);
        if (charge > n->battery) charge = n->battery;
        b->q -= radio;
        if (b->q < 0) b->q = 0;
        if (b->q > n->battery) b->q = n->battery; /* a radio below power_idle */
    } else {
        b->q -= radio;
        if (b->q > n->battery) b->q = n->battery;
        if (b->q <= 0) {
            b->q = 0;
            if ((status = battery_cut(e, node, e->now)) != HS_OK) return status;
        }
        charge = b->q > 0 ? b->q : 0;
        if (c->battery_back > e->now) charge = 0;
    }
    c->charge = charge;
    row->battery_j = charge;
    return battery_arm(e, node);
}
