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
 * went.
 * Lossy links (loss.c): an attempt is lost or not when it ends (engine_loss_judge, the
 * sender's loss stream, as loss.c's messages are at their arrival); its bytes count all
 * the same. A lost one is known rto later (ENGINE_EVENT_DEADLINE_TIMEOUT): retransmit
 * plays it again in a fresh slot with the same deadline, so one sent again after the
 * deadline is cut there at once and carries its floor only; drop hands the method its
 * event with 0 bytes delivered (engine_delivery_lost). */
#include "sim/kernel/engine_internal.h"

#include "sim/kernel/engine_network.h"

#include "base/slots.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

struct EngineDeadlines {
    HsSlots slots; /* of DeadlineMessage, linked by next_free */
    double delivering; /* the bytes of the message whose event the handler has now, else NAN */
};

void engine_deadlines_free(Engine *e)
{
    if (e->deadlines == NULL) return;
    hs_slots_free(&e->deadlines->slots);
    free(e->deadlines);
    e->deadlines = NULL;
}

DeadlineMessage *engine_deadline_slot(Engine *e, int slot)
{
    return hs_slots_at(&e->deadlines->slots, slot);
}

static int deadline_alloc(Engine *e, int *slot)
{
    if (e->deadlines == NULL) { /* allocated on the first use: other runs hold nothing */
        if ((e->deadlines = calloc(1, sizeof *e->deadlines)) == NULL) return HS_E_NOMEM;
        hs_slots_init(&e->deadlines->slots, sizeof(DeadlineMessage), offsetof(DeadlineMessage, next_free), 16);
        e->deadlines->delivering = NAN;
    }
    return hs_slots_take(&e->deadlines->slots, slot);
}

static void deadline_release(EngineDeadlines *d, int slot)
{
    hs_slots_release(&d->slots, slot);
}

int engine_send_until(Engine *e, int from, int to, double bytes, double floor_bytes, double deadline, int kind,
                      int64_t data)
{
    if (!(bytes >= 0) || !(floor_bytes >= 0) || isnan(deadline))
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "engine_send_until: bytes %g, floor %g, deadline %g",
                           bytes, floor_bytes, deadline);
    int slot;
    if (deadline_alloc(e, &slot) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for messages with a deadline");
    *engine_deadline_slot(e, slot) = (DeadlineMessage){
        .from = from, .to = to, .kind = kind, .data = data, .bytes = bytes,
        .floor = floor_bytes < bytes ? floor_bytes : bytes,
        .deadline = deadline > e->now ? deadline : e->now, .delivered = NAN, .next_free = -1};
    return e->model->send_until(e, slot);
}

/* The attempt in slot ended lost: the slot goes when its events are done, and a fresh one
 * holds the message until the timeout rto later (deadline_timeout). */
static int deadline_lost(Engine *e, int slot)
{
    DeadlineMessage m = *engine_deadline_slot(e, slot);
    if (--engine_deadline_slot(e, slot)->pending == 0) deadline_release(e->deadlines, slot);
    int again;
    if (deadline_alloc(e, &again) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for messages with a deadline");
    *engine_deadline_slot(e, again) = (DeadlineMessage){
        .from = m.from, .to = m.to, .kind = m.kind, .data = m.data, .bytes = m.bytes, .floor = m.floor,
        .deadline = m.deadline, .delivered = NAN, .pending = 1, .next_free = -1};
    if (queue_push(e->queue, e->now + engine_loss_rto(e), ENGINE_EVENT_DEADLINE_TIMEOUT, m.to, again) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return HS_OK;
}

/* rto after a lost attempt: sent again (the deadline as it was, or now if it passed), or
 * under drop the method hears that nothing arrived. */
static int deadline_timeout(Engine *e, int slot)
{
    EngineDeadlines *d = e->deadlines;
    DeadlineMessage *m = engine_deadline_slot(e, slot);
    if (!engine_loss_drops(e)) {
        if (m->deadline < e->now) m->deadline = e->now;
        return e->model->send_until(e, slot); /* sets pending anew */
    }
    Event ev = {.time = e->now, .seq = 0, .kind = m->kind, .agent = m->to, .data = m->data};
    int from = m->from;
    deadline_release(d, slot);
    d->delivering = 0;
    int status = engine_loss_deliver_lost(e, &ev, from);
    d->delivering = NAN;
    return status;
}

/* The message ended (ENGINE_EVENT_DEADLINE_END): its bytes are booked and the method's
 * event goes to the handler, with engine_delivered_bytes set (on lossy links: unless the
 * attempt was lost). */
static int deadline_end(Engine *e, int slot)
{
    EngineDeadlines *d = e->deadlines;
    DeadlineMessage *m = engine_deadline_slot(e, slot);
    if (isnan(m->delivered)) m->delivered = m->bytes; /* not cut: every byte went */
    m->ended = 1;
    e->round_bytes += m->delivered;
    engine_book_bytes(e, m->from, m->delivered);
    engine_book_bytes(e, m->to, m->delivered);
    if (e->loss && engine_loss_judge(e, m->from, m->to)) return deadline_lost(e, slot);
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
    if (e->deadlines == NULL || slot < 0 || slot >= e->deadlines->slots.n)
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "a deadline event without its message");
    if (ev->kind == ENGINE_EVENT_DEADLINE_END) return deadline_end(e, slot);
    if (ev->kind == ENGINE_EVENT_DEADLINE_TIMEOUT) return deadline_timeout(e, slot);
    /* ENGINE_EVENT_DEADLINE_CUT: the model cuts what is still on the way */
    DeadlineMessage *m = engine_deadline_slot(e, slot);
    int status = m->ended ? HS_OK : e->model->cut ? e->model->cut(e, slot) : HS_OK;
    m = engine_deadline_slot(e, slot);
    if (--m->pending == 0) deadline_release(e->deadlines, slot);
    return status;
}

double engine_delivered_bytes(const Engine *e)
{
    return e->deadlines ? e->deadlines->delivering : NAN;
}
