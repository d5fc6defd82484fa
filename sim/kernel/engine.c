/* engine.c — the event kernel of a run: the round's event loop, the nodes' clocks, the
 * compute primitive and the per-round accounting (the run that drives it is sim/run.c).
 * How messages and rings travel is the network model's (network_fifo.c,
 * network_maxmin.c behind engine_network.h); how collectives assemble, collective.c. */
#include "sim/kernel/engine.h"

#include "base/hugemem.h"
#include "base/grow.h"
#include "sim/kernel/engine_internal.h"
#include "sim/kernel/battery.h"
#include "sim/kernel/interrupt.h"
#include "sim/kernel/trace_markov.h"
#include "sim/kernel/engine_network.h"
#include "sim/kernel/radio.h"
#include "sim/kernel/rng.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int engine_schedule(Engine *e, double t, int kind, int agent, int64_t data)
{
    if (t < e->now) t = e->now;
    return queue_push(e->queue, t, kind, agent, data);
}

double engine_finish(const Engine *e, int agent, double start, double seconds)
{
    const TraceSeries *availability = engine_series(e->availability_trace, agent);
    return availability ? trace_advance_online(availability, start, seconds) : start + seconds;
}

int engine_book_compute(Engine *e, int agent, double flops, double *finish_out)
{
    AgentClock *c = &e->clocks[agent];
    double start = c->compute_free > e->now ? c->compute_free : e->now;
    const TraceSeries *speed = engine_series(e->compute_trace, agent);
    double duration = flops / (speed ? trace_value(speed, start) : engine_compute_rate(e, agent));
    const EngineNode *node = engine_profile(e, agent);
    if (node->slowdown.kind != SLOWDOWN_NONE || node->jitter > 0)
        duration *= slowdown_factor(&node->slowdown, node->jitter, start, &c->slow,
                                    e->dynamics_rng ? e->dynamics_rng[agent] : NULL);
    double finish;
    if (battery_instant(e, agent)) {
        /* its charge may cross zero meanwhile: the outage is cut before the finish is known */
        int status = battery_book_compute(e, agent, start, duration, &finish);
        if (status != HS_OK) return status;
    } else {
        finish = engine_finish(e, agent, start, duration);
    }
    *finish_out = finish;
    c->compute_free = finish;
    c->compute_s += duration;
    int status = e->model->computed(e, agent, flops, start, start + duration);
    if (status == HS_OK && e->radio) status = engine_radio_span(e, agent, RADIO_COMPUTE, start, start + duration);
    return status;
}

int engine_compute(Engine *e, int agent, double flops, int kind, int64_t data, double *finish_out)
{
    double finish;
    int status = engine_book_compute(e, agent, flops, &finish);
    if (finish_out) *finish_out = finish;
    if (status == HS_OK && queue_push(e->queue, finish, kind, agent, data) != HS_OK)
        status = hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return status;
}

int engine_records_activity(const Engine *e)
{
    return e->sink.ops->activity != NULL;
}

double engine_message_latency(const Engine *e, int from, int to)
{
    double a = engine_latency_rate(e, from), b = engine_latency_rate(e, to);
    double latency = a > b ? a : b;
    return e->spec.lv08 ? latency * ENGINE_LV08_LATENCY : latency;
}

double engine_link_rate(const Engine *e, int from, int to, double t)
{
    const TraceSeries *up = engine_series(e->uplink_trace, from), *down = engine_series(e->downlink_trace, to);
    double u = up ? trace_value(up, t) : engine_uplink_rate(e, from);
    double d = down ? trace_value(down, t) : engine_downlink_rate(e, to);
    double bandwidth = u < d ? u : d;
    return e->spec.lv08 ? bandwidth * ENGINE_LV08_BANDWIDTH : bandwidth;
}

double engine_message_bandwidth(const Engine *e, int from, int to)
{
    double b = engine_link_rate(e, from, to, e->now);
    /* INFINITY under fifo (the resolver resets it) */
    double backbone = e->spec.backbone * (e->spec.lv08 ? ENGINE_LV08_BANDWIDTH : 1);
    return b < backbone ? b : backbone;
}

double engine_agent_compute(const Engine *e, int agent)
{
    const TraceSeries *speed = engine_series(e->compute_trace, agent);
    return speed ? trace_value(speed, e->now) : engine_compute_rate(e, agent);
}

double engine_agent_charging(const Engine *e, int node)
{
    const TraceSeries *charging = engine_series(e->charging_trace, node);
    return charging ? trace_value(charging, e->now) : engine_profile(e, node)->charging;
}

double engine_agent_charge(const Engine *e, int node)
{
    return e->energy && engine_profile(e, node)->battery > 0 ? e->energy_clocks[node].charge : INFINITY;
}

int engine_send(Engine *e, int from, int to, double bytes, int kind, int64_t data)
{
    if (e->loss) return engine_loss_send(e, from, to, bytes, kind, data);
    return e->model->send(e, from, to, bytes, kind, data);
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

/* A markov() process's rows that ended before the round are never asked again (the
 * engine reads availability from the round's start on): dropping them keeps a node's
 * rows to those of a round. The series is the run's (world_traces.c) and logically
 * constant, hence the cast: only rows nobody reads go. */
static void engine_forget_markov(Engine *e, int node)
{
    const TraceSeries *availability = engine_series(e->availability_trace, node);
    const TraceSeries *outage = engine_series(e->outage_trace, node);
    if (availability && availability->markov) markov_forget_before((TraceSeries *)availability, e->round_start);
    if (outage && outage->markov) markov_forget_before((TraceSeries *)outage, e->round_start);
}

void engine_begin_round(Engine *e, int round)
{
    e->round = round;
    e->round_start = e->now;
    e->round_over = 0;
    e->round_bytes = 0;
    for (int i = 0; i < e->n_nodes; i++) {
        AgentClock *c = &e->clocks[i];
        c->compute_s = c->comm_s = c->busy_s = 0;
        c->role = SINK_ROLE_ALONE;
        if (e->energy) e->energy_clocks[i].bytes_io = 0;
        if (e->availability_trace || e->outage_trace) engine_forget_markov(e, i);
    }
    if (e->model->begin_round) e->model->begin_round(e);
    engine_loss_begin_round(e);
}

/* radio.h's directions are the engine's (and the network's) */
_Static_assert((int)RADIO_TX == (int)ENGINE_RADIO_TX && (int)RADIO_RX == (int)ENGINE_RADIO_RX &&
                   (int)RADIO_COMPUTE == (int)ENGINE_RADIO_COMPUTE,
               "the radio's directions");

int engine_radio_span(Engine *e, int node, int way, double start, double end)
{
    if (radio_span(e->radio, node, way, start, end) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for the radio's accounting");
    return HS_OK;
}

int engine_radio_periodic(Engine *e, int node, int way, const NetworkPeriodic *p)
{
    if (radio_periodic(e->radio, node, way, p) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for the radio's accounting");
    return HS_OK;
}

/* The radio's joules over comm seconds of communicating and not computing: power_tx while
 * only sending, power_rx while only receiving, the larger while both (half duplex). The
 * larger power's direction is charged for the time it is on (at most comm: the spans
 * stalled offline come off it first), the smaller for the rest. Equal powers take
 * today's product, bit for bit. */
static int engine_radio_joules(const Engine *e, int agent, const EngineNode *node, double comm, double *joules)
{
    if (node->power_tx == node->power_rx) {
        *joules = node->power_tx * comm;
        return HS_OK;
    }
    double way[2], from = e->round_start, to = e->now;
    if (!e->model->clips_rounds) from = -INFINITY, to = INFINITY; /* fifo: as booked */
    if (radio_close(e->radio, agent, from, to, way) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for the radio's accounting");
    int tx_high = node->power_tx > node->power_rx;
    double high = tx_high ? node->power_tx : node->power_rx, low = tx_high ? node->power_rx : node->power_tx;
    double on = way[tx_high ? RADIO_TX : RADIO_RX];
    if (on > comm) on = comm;
    *joules = high * on + low * (comm - on);
    return HS_OK;
}

/* The agent's energy in the round (docs/energy.md): one state at a time, computing before
 * communicating before idle; offline draws nothing. */
static int engine_round_energy(const Engine *e, int agent, double online, SinkAgentRound *row)
{
    const EngineNode *node = engine_profile(e, agent);
    const AgentClock *c = &e->clocks[agent];
    /* communicating and not computing, online: a message stalled while its agent is
     * offline (maxmin counts its flow as transferring) draws nothing */
    double busy = c->busy_s < online ? c->busy_s : online;
    double comm = busy - c->compute_s;
    if (comm < 0) comm = 0;
    double radio = 0;
    int status = engine_radio_joules(e, agent, node, comm, &radio);
    row->compute_j = node->power_compute * c->compute_s;
    row->comm_j = radio + node->energy_per_byte * e->energy_clocks[agent].bytes_io;
    row->idle_j = node->power_idle * row->idle_s;
    return status;
}

/* The battery at the round's end: charging in, the round's joules out, at most full. A
 * spent battery takes the agent offline from now, through its availability series, until
 * charging brings it back to resume_charge (never, without charging). */
static int engine_round_battery(Engine *e, int agent, double length, SinkAgentRound *row)
{
    const EngineNode *node = engine_profile(e, agent);
    EnergyClock *c = &e->energy_clocks[agent];
    const TraceSeries *charging = engine_series(e->charging_trace, agent);
    double gained = charging ? trace_integral(charging, e->round_start, e->now) : node->charging * length;
    double charge = c->charge + gained - (row->compute_j + row->comm_j + row->idle_j);
    if (charge > node->battery) charge = node->battery;
    if (charge <= 0 && !(c->battery_back > e->now)) {
        /* the round's overdraft is forgiven: the agent stops at the round's end, not when
         * its charge crossed 0 within the round (docs/energy.md) */
        charge = 0;
        int status = battery_cut(e, agent, e->now);
        if (status != HS_OK) return status;
    }
    if (charge < 0) charge = 0;
    c->charge = charge;
    row->battery_j = charge;
    return HS_OK;
}

/* Agent i's row of the round, energy aside; returns its idle time. */
static double engine_agent_row(const Engine *e, int i, double length, SinkAgentRound *row)
{
    const AgentClock *c = &e->clocks[i];
    const TraceSeries *availability = engine_series(e->availability_trace, i);
    double offline = availability ? trace_offline_between(availability, e->round_start, e->now) : 0;
    double idle = length - c->busy_s - offline;
    if (idle < 0) idle = 0;
    *row = (SinkAgentRound){.round = e->round, .agent = i, .compute_s = c->compute_s, .comm_s = c->comm_s,
                            .idle_s = idle, .offline_s = offline, .role = c->role, .compute_j = NAN,
                            .comm_j = NAN, .idle_j = NAN, .battery_j = NAN, .lost = engine_loss_sent_lost(e, i)};
    return idle;
}

/* Without energy a row is a function of the clocks alone: the round's row (which sums
 * every agent's idle time) goes first, then the agents' rows are formed again and go in
 * batches of ENGINE_ROWS_BATCH, so the buffer is not one row per agent. With energy (a
 * battery changes the agent's state as its row is formed) every row is formed once, into
 * a buffer of all of them. Same rows, same order either way. */
static int engine_report_rows(Engine *e, double length, double extra)
{
    double idle_total = 0, energy_total = e->energy ? 0 : NAN;
    int status = HS_OK;
    SinkAgentRound scratch;
    for (int i = 0; i < e->n_agents; i++) {
        SinkAgentRound *row = e->energy ? &e->rows[i] : &scratch;
        idle_total += engine_agent_row(e, i, length, row);
        if (!e->energy) continue;
        if (status == HS_OK) status = engine_round_energy(e, i, length - row->offline_s, row);
        energy_total += row->compute_j + row->comm_j + row->idle_j;
        if (!(engine_profile(e, i)->battery > 0) || status != HS_OK) continue;
        if (battery_instant(e, i)) status = battery_round_end(e, i, length - row->offline_s, row);
        else status = engine_round_battery(e, i, length, row);
    }
    if (status != HS_OK) return status;
    e->total_bytes += e->round_bytes;
    SinkRound row = {.round = e->round, .t_start = e->round_start, .t_end = e->now,
                     .idle_s = idle_total, .bytes = e->round_bytes, .extra = extra, .energy_j = energy_total,
                     .lost = engine_loss_round_lost(e)};
    status = e->sink.ops->round(e->sink.ctx, e->run_id, &row);
    /* [run] record = summary: the rows were formed for the round's sums (and a battery's
     * state) above; the sink gets none of them */
    if (e->summary) return status;
    if (e->energy)
        return status == HS_OK ? e->sink.ops->agent_rounds(e->sink.ctx, e->run_id, e->rows, e->n_agents) : status;
    for (int first = 0; status == HS_OK && first < e->n_agents; first += ENGINE_ROWS_BATCH) {
        int count = e->n_agents - first < ENGINE_ROWS_BATCH ? e->n_agents - first : ENGINE_ROWS_BATCH;
        for (int k = 0; k < count; k++) engine_agent_row(e, first + k, length, &e->rows[k]);
        status = e->sink.ops->agent_rounds(e->sink.ctx, e->run_id, e->rows, count);
    }
    return status;
}

int engine_report_round(Engine *e, double extra)
{
    /* never a row of infinite times (issue 28, class 6): a bug, since the scenario's
     * checks keep every step and message within SCENARIO_SPAN_MAX */
    if (!isfinite(e->now))
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "round %d: virtual time overflowed (t = %g)",
                           e->round + 1, e->now);
    if (e->model->close_round) e->model->close_round(e);
    return engine_report_rows(e, e->now - e->round_start, extra);
}

int engine_fail_stranded(Engine *e, int agent)
{
    if (agent < 0)
        for (agent = 0; agent < e->n_nodes - 1 && engine_agent_online(e, agent, INFINITY); agent++)
            continue;
    /* No node is offline for good: the work at t = inf is virtual time overflowing, which
     * the scenario's checks refuse (SCENARIO_SPAN_MAX); never blame a trace that is not there. */
    if (engine_agent_online(e, agent, INFINITY))
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0,
                           "round %d can never end: virtual time overflowed (work would end at t = inf)",
                           e->round + 1);
    char who[48];
    const EngineNode *dead = engine_profile(e, agent);
    const TraceSeries *charging = engine_series(e->charging_trace, agent);
    if (dead->battery > 0 && (charging || dead->charging == 0) && e->energy_clocks &&
        !(e->energy_clocks[agent].battery_back < INFINITY))
        return hs_diag_set(e->diag, HS_E_INPUT, dead->availability_source, 0,
                           "round %d can never end: agent %d's battery ran out and %s never brings it "
                           "back (give charging, or a method that leaves absent agents out)",
                           e->round + 1, agent, charging ? "its charging trace, which ends at 0 W," : "charging = 0");
    if (agent >= e->n_agents) snprintf(who, sizeof who, "the server (node %d)", agent);
    else snprintf(who, sizeof who, "agent %d", agent);
    return hs_diag_set(e->diag, HS_E_INPUT, dead->availability_source, 0,
                       "round %d can never end: %s is offline for good from this availability trace's "
                       "last row (end it with the %s online)",
                       e->round + 1, who, agent >= e->n_agents ? "server" : "agent");
}

int engine_play(Engine *e)
{
    const NetworkModel *model = e->model;
    int status = model->after_event ? model->after_event(e) : HS_OK;
    void (*tick)(void *, int64_t, double) = e->sink.ops->tick;
    Event ev;
    while (status == HS_OK && !e->round_over) {
        /* an instant battery's events keep no round going: with only them left the queue
         * has drained (they wait there for the next round) */
        int drained = e->instant != NULL && queue_size(e->queue) == battery_queued(e);
        if (drained || !queue_pop(e->queue, &ev)) {
            if (!drained && queue_size(e->queue) > 0) {
                status = hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for the event queue");
                break;
            }
            /* messages left that can never move: a node offline for good */
            if (model->stranded && model->stranded(e)) status = engine_fail_stranded(e, -1);
            break;
        }
        if (!isfinite(ev.time)) {
            status = engine_fail_stranded(e, -1); /* only work at t = inf is left */
            break;
        }
        e->now = ev.time;
        if (ev.kind >= ENGINE_EVENT_METHOD) status = e->handler(e->handler_ctx, &ev);
        else if (ev.kind == ENGINE_EVENT_LOSS_ARRIVAL || ev.kind == ENGINE_EVENT_LOSS_TIMEOUT ||
                 ev.kind == ENGINE_EVENT_LOSS_RING_START)
            status = engine_loss_event(e, &ev);
        else if (ev.kind == ENGINE_EVENT_DEADLINE_END || ev.kind == ENGINE_EVENT_DEADLINE_CUT ||
                 ev.kind == ENGINE_EVENT_DEADLINE_TIMEOUT)
            status = engine_deadline_event(e, &ev);
        else if (ev.kind == ENGINE_EVENT_COMPUTE_RELAY)
            status = engine_compute_relay(e, &ev);
        else if (ev.kind == ENGINE_EVENT_BATTERY)
            status = battery_event(e, &ev);
        else if (model->event) status = model->event(e, &ev);
        else status = hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "unknown engine event %d", ev.kind);
        if (status == HS_OK && model->after_event) status = model->after_event(e);
        if (status == HS_OK && e->diag->status != HS_OK) status = e->diag->status;
        if (status == HS_OK && interrupt_requested()) status = HS_E_INTERRUPTED;
        if (tick != NULL) tick(e->sink.ctx, e->run_id, e->now);
    }
    return status;
}

void engine_end_run(Engine *e)
{
    if (e->model->end_run) e->model->end_run(e);
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

/* Energy on when some agent has a power or a battery; battery nodes get an owned
 * availability series (their trace's copy, or always online) to cut outages into. */
static int engine_energy_create(Engine *e, const EngineConfig *config)
{
    int batteries = 0, split = 0;
    for (int i = 0; i < e->n_agents; i++) {
        const EngineNode *n = engine_profile(e, i);
        if (n->power_compute > 0 || n->power_tx > 0 || n->power_rx > 0 || n->power_idle > 0 ||
            n->energy_per_byte > 0 || n->battery > 0)
            e->energy = 1;
        batteries += n->battery > 0;
        split += n->power_tx != n->power_rx;
    }
    if (split > 0) { /* the agents whose two powers differ keep their spans (radio.h) */
        unsigned char *kept = calloc((size_t)e->n_nodes, 1);
        for (int i = 0; kept && i < e->n_agents; i++) kept[i] = engine_profile(e, i)->power_tx != engine_profile(e, i)->power_rx;
        e->radio = kept ? radio_create(e->n_nodes, kept) : NULL;
        free(kept);
        if (e->radio == NULL) return hs_diag_set(config->diag, HS_E_NOMEM, NULL, 0, "out of memory for the radio");
    }
    if (e->energy) {
        e->energy_clocks = calloc((size_t)e->n_nodes, sizeof *e->energy_clocks);
        if (e->energy_clocks == NULL) return hs_diag_set(config->diag, HS_E_NOMEM, NULL, 0, "out of memory for energy");
        for (int i = 0; i < e->n_agents; i++) {
            e->energy_clocks[i].charge = engine_profile(e, i)->battery;
            e->energy_clocks[i].battery_back = -INFINITY;
        }
    }
    if (batteries == 0) return HS_OK;
    e->battery_series = calloc((size_t)e->n_nodes, sizeof *e->battery_series);
    e->battery_nodes = calloc((size_t)e->n_nodes, sizeof *e->battery_nodes);
    if (e->battery_series == NULL || e->battery_nodes == NULL)
        return hs_diag_set(config->diag, HS_E_NOMEM, NULL, 0, "out of memory for batteries");
    for (int i = 0; i < e->n_nodes; i++) {
        const TraceSeries *borrowed = engine_series(config->traces.availability, i);
        e->battery_nodes[i] = borrowed;
        if (i >= e->n_agents || !(engine_profile(e, i)->battery > 0)) continue;
        if (trace_series_copy(borrowed, &e->battery_series[i]) != HS_OK)
            return hs_diag_set(config->diag, HS_E_NOMEM, NULL, 0, "out of memory for batteries");
        e->battery_nodes[i] = &e->battery_series[i];
    }
    e->availability_trace = e->battery_nodes;
    return HS_OK;
}

/* Bit for bit: a profile stands for a node only if every value is the node's own. */
static int engine_same_bits(const void *a, const void *b, size_t size)
{
    return memcmp(a, b, size) == 0;
}

static int engine_same_profile(const EngineNode *a, const EngineNode *b)
{
    const Slowdown *x = &a->slowdown, *y = &b->slowdown;
    return x->kind == y->kind && engine_same_bits(&x->p_slow, &y->p_slow, sizeof x->p_slow) &&
           engine_same_bits(&x->p_recover, &y->p_recover, sizeof x->p_recover) &&
           engine_same_bits(&x->factor, &y->factor, sizeof x->factor) &&
           engine_same_bits(&x->period, &y->period, sizeof x->period) &&
           engine_same_bits(&x->amplitude, &y->amplitude, sizeof x->amplitude) &&
           engine_same_bits(&a->jitter, &b->jitter, sizeof a->jitter) &&
           a->availability_source == b->availability_source &&
           engine_same_bits(&a->power_compute, &b->power_compute, sizeof a->power_compute) &&
           engine_same_bits(&a->power_tx, &b->power_tx, sizeof a->power_tx) &&
           engine_same_bits(&a->power_rx, &b->power_rx, sizeof a->power_rx) &&
           engine_same_bits(&a->power_idle, &b->power_idle, sizeof a->power_idle) &&
           engine_same_bits(&a->energy_per_byte, &b->energy_per_byte, sizeof a->energy_per_byte) &&
           engine_same_bits(&a->battery, &b->battery, sizeof a->battery) &&
           engine_same_bits(&a->charging, &b->charging, sizeof a->charging) &&
           engine_same_bits(&a->resume_charge, &b->resume_charge, sizeof a->resume_charge) &&
           a->battery_instant == b->battery_instant &&
           engine_same_bits(&a->loss, &b->loss, sizeof a->loss);
}

/* Up to this many distinct profiles are looked through for a node's; past it a node
 * gets one of its own unless it shares its predecessor's (never wrong, only larger). */
#define ENGINE_PROFILES_SEARCHED 64

/* Whether node i's rates read in place are node's, bit for bit. */
static int engine_rates_match(const Engine *e, int i, const EngineNode *node)
{
    double mine[4] = {engine_compute_rate(e, i), engine_uplink_rate(e, i), engine_downlink_rate(e, i),
                      engine_latency_rate(e, i)};
    double given[4] = {node->compute, node->uplink, node->downlink, node->latency};
    return memcmp(mine, given, sizeof mine) == 0;
}

/* The nodes split into their own rates (32 bytes a node, or none when the caller's records
 * hold them: EngineConfig.rates_at), a profile index (4 bytes) and a profile shared by the
 * nodes of a group (a whole EngineNode was 152 bytes a node, at millions of agents). */
static int engine_nodes_create(Engine *e, const EngineConfig *config)
{
    int n = e->n_nodes, cap = 4, last = -1;
    if (config->rates_at.base) {
        e->rates_at = config->rates_at;
    } else {
        e->rates = hs_huge_malloc((size_t)n, sizeof *e->rates);
        if (e->rates == NULL) return HS_E_NOMEM;
        e->rates_at = (EngineRatesAt){.base = e->rates, .stride = sizeof *e->rates,
                                      .compute = offsetof(EngineRates, compute), .uplink = offsetof(EngineRates, uplink),
                                      .downlink = offsetof(EngineRates, downlink), .latency = offsetof(EngineRates, latency)};
    }
    e->profile_of = hs_huge_malloc((size_t)n, sizeof *e->profile_of);
    e->profiles = malloc((size_t)cap * sizeof *e->profiles);
    if (e->profile_of == NULL || e->profiles == NULL) return HS_E_NOMEM;
    for (int i = 0; i < n; i++) {
        EngineNode asked;
        if (config->nodes == NULL) config->node(config->node_ctx, i, &asked);
        const EngineNode *node = config->nodes ? &config->nodes[i] : &asked;
        if (e->rates) e->rates[i] = (EngineRates){node->compute, node->uplink, node->downlink, node->latency};
        else if (!engine_rates_match(e, i, node)) return HS_E_INTERNAL;
        int found = last >= 0 && engine_same_profile(&e->profiles[last], node) ? last : -1;
        for (int k = 0; found < 0 && k < e->n_profiles && k < ENGINE_PROFILES_SEARCHED; k++)
            if (engine_same_profile(&e->profiles[k], node)) found = k;
        if (found < 0) {
            if (hs_grow((void **)&e->profiles, &cap, e->n_profiles, sizeof *e->profiles, 4) != HS_OK)
                return HS_E_NOMEM;
            found = e->n_profiles++;
            e->profiles[found] = *node;
            e->profiles[found].compute = e->profiles[found].uplink = e->profiles[found].downlink = 0;
            e->profiles[found].latency = 0;
        }
        e->profile_of[i] = last = found;
    }
    return HS_OK;
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
    e->outage_trace = config->traces.outage;
    e->charging_trace = config->traces.charging;
    e->spec = config->network;
    e->sink = config->sink;
    e->summary = config->summary;
    e->run_id = -1;
    e->handler = config->handler;
    e->handler_ctx = config->handler_ctx;
    e->diag = diag;
    e->model = e->spec.maxmin ? &network_model_maxmin : &network_model_fifo;
    e->queue = queue_create((size_t)e->n_agents * 2 + 16);
    e->clocks = hs_huge_calloc((size_t)e->n_nodes, sizeof *e->clocks);
    if (e->queue == NULL || e->clocks == NULL) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for %d agents", e->n_agents);
        goto fail;
    }
    if ((status = engine_nodes_create(e, config)) != HS_OK) {
        status = status == HS_E_NOMEM ? hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for %d agents", e->n_agents)
                                      : hs_diag_set(diag, status, NULL, 0, "the nodes' rates read in place "
                                                                           "(EngineConfig.rates_at) are not the nodes'");
        goto fail;
    }
    for (int i = 0; i < e->n_nodes; i++) {
        const EngineNode *node = engine_profile(e, i);
        if (node->slowdown.kind != SLOWDOWN_MARKOV && node->jitter == 0) continue;
        if (e->dynamics_rng == NULL) e->dynamics_rng = calloc((size_t)e->n_nodes, sizeof *e->dynamics_rng);
        if (e->dynamics_rng == NULL ||
            (e->dynamics_rng[i] = rng_stream_create(config->seed, (uint64_t)i, RNG_PURPOSE_DYNAMICS)) == NULL) {
            status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
            goto fail;
        }
    }
    if ((status = engine_energy_create(e, config)) != HS_OK) goto fail;
    if (battery_create(e) != HS_OK) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for batteries");
        goto fail;
    }
    /* agent_rounds rows: a batch at a time without energy (engine_report_rows) */
    int n_rows = e->energy || e->n_agents < ENGINE_ROWS_BATCH ? e->n_agents : ENGINE_ROWS_BATCH;
    if ((e->rows = calloc((size_t)(n_rows > 0 ? n_rows : 1), sizeof *e->rows)) == NULL) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for %d agents", e->n_agents);
        goto fail;
    }
    if (engine_loss_create(e, config) != HS_OK) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for lossy links");
        goto fail;
    }
    if (e->model->create && e->model->create(e) != HS_OK) {
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
    if (e->model && e->model->free) e->model->free(e);
    engine_loss_free(e);
    engine_deadlines_free(e);
    radio_free(e->radio);
    free(e->relays);
    battery_free(e);
    queue_free(e->queue);
    free(e->clocks);
    free(e->energy_clocks);
    free(e->rows);
    if (e->dynamics_rng)
        for (int i = 0; i < e->n_nodes; i++)
            if (e->dynamics_rng[i]) gsl_rng_free(e->dynamics_rng[i]);
    free(e->dynamics_rng);
    if (e->battery_series)
        for (int i = 0; i < e->n_nodes; i++) trace_series_free(&e->battery_series[i]);
    free(e->battery_series);
    free(e->battery_nodes);
    free(e->rates);
    free(e->profile_of);
    free(e->profiles);
    free(e);
}
