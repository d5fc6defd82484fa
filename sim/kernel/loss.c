/* loss.c — unstable links: messages lost on the way ([agents] loss, [network] loss_mode
 * and rto; docs/network.md "Unstable links"). It sits between engine_send and the network
 * model, so fifo and maxmin lose messages the same way and neither knows it happens.
 *
 * Model. A message a->b is lost with q = 1 - (1 - p_a)(1 - p_b): each end loses it
 * independently with its own probability (a flaky radio at either end). Every attempt is
 * a whole message played by the network model: it waits its latency and transfers all of
 * its bytes (a lost attempt consumes bandwidth: the bytes were sent, and they count in
 * rounds.bytes), and is lost or not when it would have arrived, one uniform draw from the
 * sender's loss stream. A loss is known rto after that arrival time:
 *   retransmit  the sender's timer fires and the message is sent again, as a new attempt,
 *               until one arrives. One message alone on its links, of B bytes at
 *               bandwidth W with latency L: T = (k + 1)(L + B/W) + k rto after k losses,
 *               so E[T] = (L + B/W) + q/(1-q) (rto + L + B/W).
 *   drop        nothing is sent again; the receiver's timeout fires and the method is
 *               told that its message was lost (engine_delivery_lost), at arrival + rto.
 *               Only methods that tolerate a missing message run in this mode
 *               (METHOD_DROPS_LOST): dpsgd mixes over what arrived.
 * Determinism: each node has its own loss stream, seeded from (seed, node) and created
 * only when some node has loss > 0, so a run without loss draws nothing and plays
 * exactly as before; draws happen at arrival events, whose order is the queue's
 * deterministic (time, sequence) order. The ring all-gather is plain messages.
 *
 * Messages cut at a deadline (deadline.c, engine_send_until: ROG's rows) are lost the same
 * way: an attempt is judged when it ends (whole, or cut at the deadline), with the same
 * draw (engine_loss_judge), and deadline.c sends it again rto later with the same deadline
 * (so an attempt after the deadline carries its floor only) or, under drop, tells the
 * receiver that nothing arrived.
 *
 * Rings. A lossy engine plays a ring all-reduce of B bytes among N members as 2(N-1)
 * steps of chunk messages: in each step member k sends B/N to member k+1 (mod N), every
 * chunk a message as above, lost and sent again rto after its would-be arrival; the next
 * step starts when the step's last chunk has arrived. The ring's methods take retransmit
 * only (a ring needs every chunk). Lossless, a step lasts max_k(L_k + (B/N)/W_k) for a
 * ring alone on its links: maxmin's closed form exactly (its hops are the same flows);
 * fifo's closed form takes the largest latency and the smallest bandwidth separately, an
 * upper bound of that, equal when the members' links are. */
#include "sim/kernel/engine_internal.h"

#include "sim/kernel/collective.h"
#include "sim/kernel/engine_network.h"
#include "sim/kernel/rng.h"

#include "base/slots.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

/* One message in the air, or between an attempt and its retransmission. */
typedef struct LossMessage {
    int from, to;
    double bytes;
    int kind;          /* the method's event on arrival */
    int64_t data;
    int next_free;     /* while the slot is free: base/slots.h's free-list link */
} LossMessage;

/* A ring all-reduce being played as chunk messages. */
typedef struct LossRing {
    struct Collective *c;
    int step;     /* 0 .. 2(N-1) - 1 */
    int arrived;  /* chunks of the step arrived */
} LossRing;

struct EngineLoss {
    double *q_out;          /* (n_nodes) the node's own loss probability p */
    gsl_rng **rng;          /* (n_nodes) the senders' streams */
    HsSlots slots;          /* of LossMessage, linked by next_free */
    int drop;               /* loss_mode = drop */
    double rto;             /* s */
    int round_lost;         /* attempts lost this round */
    int *sent_lost;         /* (n_nodes) attempts each node sent that were lost this round */
    /* the message being delivered lost to the handler (drop): its sender, else -1 */
    int delivering_lost_from;
    LossRing *rings;        /* (n_rings) the rings running; c NULL: a free slot */
    int n_rings;
};

int engine_loss_create(Engine *e, const EngineConfig *config)
{
    int lossy = 0;
    for (int i = 0; i < e->n_nodes; i++) lossy |= engine_profile(e, i)->loss > 0;
    if (!lossy) return HS_OK;
    EngineLoss *l = e->loss = calloc(1, sizeof *l);
    if (l == NULL) return HS_E_NOMEM;
    hs_slots_init(&l->slots, sizeof(LossMessage), offsetof(LossMessage, next_free), 64);
    l->drop = config->network.loss_drop;
    l->rto = config->network.rto;
    l->delivering_lost_from = -1;
    l->q_out = malloc((size_t)e->n_nodes * sizeof *l->q_out);
    l->rng = calloc((size_t)e->n_nodes, sizeof *l->rng);
    l->sent_lost = calloc((size_t)e->n_nodes, sizeof *l->sent_lost);
    if (l->q_out == NULL || l->rng == NULL || l->sent_lost == NULL) return HS_E_NOMEM;
    for (int i = 0; i < e->n_nodes; i++) {
        l->q_out[i] = engine_profile(e, i)->loss;
        if ((l->rng[i] = rng_stream_create(config->seed, (uint64_t)i, RNG_PURPOSE_LOSS)) == NULL) return HS_E_NOMEM;
    }
    return HS_OK;
}

void engine_loss_free(Engine *e)
{
    EngineLoss *l = e->loss;
    if (l == NULL) return;
    if (l->rng)
        for (int i = 0; i < e->n_nodes; i++)
            if (l->rng[i]) gsl_rng_free(l->rng[i]);
    free(l->rng);
    free(l->q_out);
    free(l->sent_lost);
    hs_slots_free(&l->slots);
    free(l->rings);
    free(l);
    e->loss = NULL;
}

int engine_lossy(const Engine *e)
{
    return e->loss != NULL;
}

double engine_loss_probability(const Engine *e, int from, int to)
{
    if (e->loss == NULL) return 0;
    return 1 - (1 - e->loss->q_out[from]) * (1 - e->loss->q_out[to]);
}

static LossMessage *loss_message(const EngineLoss *l, int slot)
{
    return hs_slots_at(&l->slots, slot);
}

static int loss_slot(Engine *e, int *slot)
{
    if (hs_slots_take(&e->loss->slots, slot) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for lossy messages");
    return HS_OK;
}

static void loss_release(EngineLoss *l, int slot)
{
    hs_slots_release(&l->slots, slot);
}

/* One attempt of the message in slot: the network model plays it and delivers
 * ENGINE_EVENT_LOSS_ARRIVAL to its receiver, whose data is the slot. */
static int loss_attempt(Engine *e, int slot)
{
    const LossMessage *m = loss_message(e->loss, slot);
    return e->model->send(e, m->from, m->to, m->bytes, ENGINE_EVENT_LOSS_ARRIVAL, slot);
}

int engine_loss_send(Engine *e, int from, int to, double bytes, int kind, int64_t data)
{
    int slot = -1, status = loss_slot(e, &slot);
    if (status != HS_OK) return status;
    *loss_message(e->loss, slot) = (LossMessage){.from = from, .to = to, .bytes = bytes, .kind = kind, .data = data,
                                         .next_free = -1};
    return loss_attempt(e, slot);
}

static int loss_ring_hop(Engine *e, int ring);

/* The method's event for the message in slot, now (delivered or, under drop, known lost). */
static int loss_deliver(Engine *e, int slot, int lost)
{
    EngineLoss *l = e->loss;
    LossMessage m = *loss_message(l, slot);
    loss_release(l, slot);
    if (m.kind == ENGINE_EVENT_LOSS_RING_HOP) {
        if (lost) /* the scenario refuses drop for ring methods (sim/scenario) */
            return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "a ring's chunk dropped under loss_mode = drop");
        return loss_ring_hop(e, (int)m.data);
    }
    Event ev = {.time = e->now, .seq = 0, .kind = m.kind, .agent = m.to, .data = m.data};
    l->delivering_lost_from = lost ? m.from : -1;
    int status = e->handler(e->handler_ctx, &ev);
    l->delivering_lost_from = -1;
    return status;
}

int engine_loss_judge(Engine *e, int from, int to)
{
    EngineLoss *l = e->loss;
    double q = engine_loss_probability(e, from, to);
    if (!(q > 0) || gsl_rng_uniform(l->rng[from]) >= q) return 0;
    l->round_lost++;
    l->sent_lost[from]++;
    return 1;
}

/* An attempt arrived: lost with q (one draw from the sender's stream, when q > 0). */
static int loss_arrived(Engine *e, int slot)
{
    EngineLoss *l = e->loss;
    const LossMessage *m = loss_message(l, slot);
    if (!engine_loss_judge(e, m->from, m->to)) return loss_deliver(e, slot, 0);
    int status = queue_push(e->queue, e->now + l->rto, ENGINE_EVENT_LOSS_TIMEOUT, m->to, slot);
    if (status != HS_OK) return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return HS_OK;
}

/* ---- rings ---- */

/* The ring is over: blocking members' processors waited for it (as under the models'
 * rings); the method hears of it now, agent -1. */
static int loss_ring_done(Engine *e, int ring)
{
    Collective *c = e->loss->rings[ring].c;
    e->loss->rings[ring].c = NULL;
    if (c->blocking)
        for (int k = 0; k < c->n_members; k++) {
            AgentClock *clock = &e->clocks[collective_member(c, k)];
            if (clock->compute_free < e->now) clock->compute_free = e->now;
        }
    if (queue_push(e->queue, e->now, c->kind, -1, c->data) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return HS_OK;
}

/* Step r->step begins now: every member sends its chunk to the next. */
static int loss_ring_step(Engine *e, int ring)
{
    LossRing *r = &e->loss->rings[ring];
    Collective *c = r->c;
    int n = c->n_members;
    if (n <= 1) return loss_ring_done(e, ring);
    r->arrived = 0;
    for (int k = 0; k < n; k++) {
        int status = engine_loss_send(e, collective_member(c, k), collective_member(c, (k + 1) % n), c->bytes / n,
                                      ENGINE_EVENT_LOSS_RING_HOP, ring);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

static int loss_ring_hop(Engine *e, int ring)
{
    LossRing *r = &e->loss->rings[ring];
    if (++r->arrived < r->c->n_members) return HS_OK;
    if (++r->step < 2 * (r->c->n_members - 1)) return loss_ring_step(e, ring);
    return loss_ring_done(e, ring);
}

int engine_loss_ring(Engine *e, Collective *c)
{
    EngineLoss *l = e->loss;
    int ring = 0;
    while (ring < l->n_rings && l->rings[ring].c != NULL) ring++;
    if (ring == l->n_rings) {
        LossRing *grown = realloc(l->rings, (size_t)(ring + 1) * sizeof *grown);
        if (grown == NULL) return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for rings");
        l->rings = grown;
        l->n_rings++;
    }
    l->rings[ring] = (LossRing){.c = c};
    /* it starts when the last member is ready (its join time), as the models' rings do */
    if (queue_push(e->queue, c->ready > e->now ? c->ready : e->now, ENGINE_EVENT_LOSS_RING_START, -1, ring) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return HS_OK;
}

int engine_loss_event(Engine *e, const Event *ev)
{
    if (e->loss == NULL)
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "a lossy message's event without loss");
    int slot = (int)ev->data;
    if (ev->kind == ENGINE_EVENT_LOSS_ARRIVAL) return loss_arrived(e, slot);
    if (ev->kind == ENGINE_EVENT_LOSS_RING_START) return loss_ring_step(e, slot);
    /* the timeout: the sender sends it again, or the receiver gives up on it */
    return e->loss->drop ? loss_deliver(e, slot, 1) : loss_attempt(e, slot);
}

int engine_loss_drops(const Engine *e)
{
    return e->loss != NULL && e->loss->drop;
}

double engine_loss_rto(const Engine *e)
{
    return e->loss ? e->loss->rto : NAN;
}

int engine_loss_deliver_lost(Engine *e, const Event *ev, int from)
{
    e->loss->delivering_lost_from = from;
    int status = e->handler(e->handler_ctx, ev);
    e->loss->delivering_lost_from = -1;
    return status;
}

int engine_delivery_lost(const Engine *e, int *from)
{
    if (e->loss == NULL || e->loss->delivering_lost_from < 0) return 0;
    if (from) *from = e->loss->delivering_lost_from;
    return 1;
}

void engine_loss_begin_round(Engine *e)
{
    EngineLoss *l = e->loss;
    if (l == NULL) return;
    l->round_lost = 0;
    for (int i = 0; i < e->n_nodes; i++) l->sent_lost[i] = 0;
}

int engine_loss_round_lost(const Engine *e)
{
    return e->loss ? e->loss->round_lost : -1;
}

int engine_loss_sent_lost(const Engine *e, int node)
{
    return e->loss ? e->loss->sent_lost[node] : -1;
}
