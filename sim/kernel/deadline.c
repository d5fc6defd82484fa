/* deadline.c — messages cut at a deadline (engine_send_until, engine.h): the receiver
 * keeps the bytes that arrived by then. It sits beside engine_send: the slot of each such
 * message holds what the method's event needs, and each network model plays the message
 * its own way (send_until, engine_network.h):
 *   maxmin  a flow like any message (latency first, then its max-min share); an engine
 *           event at the deadline cuts it (network_cut): the bytes through by then arrive,
 *           the flow ends and frees its links; one that ended before is unchanged;
 *   fifo    transmission first on the sender's FIFO uplink at min(up, down) at its start,
 *           then latency: the bytes that arrive by the deadline are those transmitted by
 *           deadline - latency, the uplink stops there (closed form at the send).
 * A floor: the message is never cut before floor bytes are through; it goes on until they
 * are (ROG's mandatory rows), and then ends.
 * The bytes count in rounds.bytes (and the ends' energy) when the message ends, as many as
 * went. Lossy links are not modelled (the methods that send this way refuse loss > 0). */
#include "sim/kernel/engine_internal.h"

#include "sim/kernel/engine_network.h"

#include <math.h>
#include <stdlib.h>

struct EngineDeadlines {
    DeadlineMessage *slots;
    int n_slots, cap_slots, free_slot;
    double delivering; /* the bytes of the message whose event the handler has now, else NAN */
};

void engine_deadlines_free(Engine *e)
{
    if (e->deadlines == NULL) return;
    free(e->deadlines->slots);
    free(e->deadlines);
    e->deadlines = NULL;
}

DeadlineMessage *engine_deadline_slot(Engine *e, int slot)
{
    return &e->deadlines->slots[slot];
}

static int deadline_alloc(Engine *e, int *slot)
{
    if (e->deadlines == NULL) { /* allocated on the first use: other runs hold nothing */
        if ((e->deadlines = calloc(1, sizeof *e->deadlines)) == NULL) return HS_E_NOMEM;
        e->deadlines->free_slot = -1;
        e->deadlines->delivering = NAN;
    }
    EngineDeadlines *d = e->deadlines;
    if (d->free_slot >= 0) {
        *slot = d->free_slot;
        d->free_slot = d->slots[*slot].next_free;
        return HS_OK;
    }
    if (d->n_slots == d->cap_slots) {
        int cap = d->cap_slots ? 2 * d->cap_slots : 16;
        DeadlineMessage *grown = realloc(d->slots, (size_t)cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        d->slots = grown;
        d->cap_slots = cap;
    }
    *slot = d->n_slots++;
    return HS_OK;
}

static void deadline_release(EngineDeadlines *d, int slot)
{
    d->slots[slot].next_free = d->free_slot;
    d->free_slot = slot;
}

int engine_send_until(Engine *e, int from, int to, double bytes, double floor_bytes, double deadline, int kind,
                      int64_t data)
{
    if (e->loss)
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "a message cut at a deadline on lossy links is not modelled");
    if (!(bytes >= 0) || !(floor_bytes >= 0) || isnan(deadline))
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "engine_send_until: bytes %g, floor %g, deadline %g",
                           bytes, floor_bytes, deadline);
    int slot;
    if (deadline_alloc(e, &slot) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for messages with a deadline");
    e->deadlines->slots[slot] = (DeadlineMessage){
        .from = from, .to = to, .kind = kind, .data = data, .bytes = bytes,
        .floor = floor_bytes < bytes ? floor_bytes : bytes,
        .deadline = deadline > e->now ? deadline : e->now, .delivered = NAN, .next_free = -1};
    return e->model->send_until(e, slot);
}

/* The message ended (ENGINE_EVENT_DEADLINE_END): its bytes are booked and the method's
 * event goes to the handler, with engine_delivered_bytes set. */
static int deadline_end(Engine *e, int slot)
{
    EngineDeadlines *d = e->deadlines;
    DeadlineMessage *m = &d->slots[slot];
    if (isnan(m->delivered)) m->delivered = m->bytes; /* not cut: every byte went */
    m->ended = 1;
    e->round_bytes += m->delivered;
    engine_book_bytes(e, m->from, m->delivered);
    engine_book_bytes(e, m->to, m->delivered);
    Event ev = {.time = e->now, .seq = 0, .kind = m->kind, .agent = m->to, .data = m->data};
    d->delivering = m->delivered;
    if (--m->pending == 0) deadline_release(d, slot);
    int status = e->handler(e->handler_ctx, &ev);
    d->delivering = NAN;
    return status;
}

int engine_deadline_event(Engine *e, const Event *ev)
{
    int slot = (int)ev->data;
    if (e->deadlines == NULL || slot < 0 || slot >= e->deadlines->n_slots)
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "a deadline event without its message");
    if (ev->kind == ENGINE_EVENT_DEADLINE_END) return deadline_end(e, slot);
    /* ENGINE_EVENT_DEADLINE_CUT: the model cuts what is still on the way */
    DeadlineMessage *m = &e->deadlines->slots[slot];
    int status = m->ended ? HS_OK : e->model->cut ? e->model->cut(e, slot) : HS_OK;
    m = &e->deadlines->slots[slot];
    if (--m->pending == 0) deadline_release(e->deadlines, slot);
    return status;
}

double engine_delivered_bytes(const Engine *e)
{
    return e->deadlines ? e->deadlines->delivering : NAN;
}
