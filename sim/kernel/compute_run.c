/* compute_run.c — a run of equal computations on one node (a federated client's local
 * steps) booked at once, with the rows and the event order of one event per computation.
 *
 * Why: at a million clients every event of a client's job is a string of cache misses on
 * that client's state (the method's job, the agent's batch, its clock, rates, profile and
 * accounting); 5 local steps paid them 5 times. Here the node's computations are booked
 * in one go, on lines already in the cache, and each computation's end is only relayed.
 *
 * Same bits as engine_compute called from each computation's handler (the "event path"):
 * - Finish times. engine_book_compute starts a computation at max(processor free, now).
 *   On the event path computation k+1 is booked at computation k's end f_k, where the
 *   processor is free and now is f_k: it starts at f_k. Booked now (now <= f_k), the
 *   processor is free at f_k: it starts at f_k too. With no trace, slowdown or jitter
 *   (engine_compute_run_exact) its length is the same quotient flops / rate and its
 *   finish the same sum f_k + length, so f_1..f_n are the same doubles; engine_compute_run
 *   checks the relay's sums against the booked finish.
 * - Accounting. compute_s adds the same lengths in the same order; the maxmin accounting
 *   merges a computation that starts at the last one's end into it (one span [f_0, f_n]
 *   either way) and takes a span into its sums only once it is over, in the merged order
 *   of start times, so taking it at another event gives the same sums (network_maxmin.c,
 *   "maxmin accounting"); fifo's busy union adds the same intervals in the same order.
 *   Nothing else books on the node meanwhile (the caller's promise), and no sink or radio
 *   sees the computations one by one (excluded).
 * - Event order. The queue orders ties by push order, so an event pushed earlier than
 *   its twin would have been could overtake a tie. The relay pushes nothing early: the
 *   booking pushes an ENGINE_EVENT_COMPUTE_RELAY at f_1, where engine_compute pushed the
 *   first computation's event, and each relay pushes the next one (at f_k + length) from
 *   its own handler, the last one the run's own (kind, data) at f_n: every push happens
 *   in the same handler, at the same time, as on the event path, so every event of the
 *   run (everyone's sequence numbers included) keeps its place. The method's handler for
 *   an intermediate step pushed nothing else (it is the caller's promise that it did
 *   nothing another event could see), and the network's re-arm after every event sees the
 *   same network (a computation does not touch it).
 * What is saved is the handler's work per step, not the queue's: a relay reads one
 * 16-byte record of the node. */
#include "sim/kernel/engine.h"
#include "sim/kernel/engine_internal.h"
#include "base/hugemem.h"
#include "sim/kernel/battery.h"

#include <stdlib.h>

/* A run in flight on a node: the relays still to come and the run's own event kind. */
typedef struct EngineRelay {
    double seconds; /* one computation's length */
    int32_t left;   /* computations still to end after the one queued (0: none in flight) */
    int32_t kind;   /* the run's event at its end */
} EngineRelay;

int engine_compute_run_exact(const Engine *e, int node)
{
    if (e->availability_trace != NULL || engine_series(e->compute_trace, node) != NULL) return 0;
    const EngineNode *profile = engine_profile(e, node);
    if (profile->slowdown.kind != SLOWDOWN_NONE || profile->jitter > 0) return 0;
    return !battery_instant(e, node) && e->radio == NULL && !engine_records_activity(e);
}

int engine_compute_run(Engine *e, int node, double flops, int steps, int kind, int64_t data)
{
    if (steps < 1 || !engine_compute_run_exact(e, node))
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "a run of %d computations on node %d cannot be booked at once",
                           steps, node);
    if (steps == 1) return engine_compute(e, node, flops, kind, data, NULL);
    if (e->relays == NULL && (e->relays = hs_huge_calloc((size_t)e->n_nodes, sizeof *e->relays)) == NULL)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for compute runs");
    EngineRelay *r = &e->relays[node];
    if (r->left > 0) return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "node %d has a run in flight", node);
    /* the length engine_book_compute gives each (no trace, slowdown or jitter here) */
    double seconds = flops / engine_compute_rate(e, node), first = 0, finish = 0;
    for (int k = 0; k < steps; k++) {
        int status = engine_book_compute(e, node, flops, k == 0 ? &first : &finish);
        if (status != HS_OK) return status;
    }
    /* the relays' sums must be the booked finish (what the event path would have queued) */
    double t = first;
    for (int k = 1; k < steps; k++) t = t + seconds;
    if (t != finish)
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "node %d: a run's relays end at %.17g, booked %.17g", node,
                           t, finish);
    *r = (EngineRelay){.seconds = seconds, .left = steps - 1, .kind = kind};
    if (queue_push(e->queue, first, ENGINE_EVENT_COMPUTE_RELAY, node, data) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return HS_OK;
}

int engine_compute_relay(Engine *e, const Event *ev)
{
    EngineRelay *r = &e->relays[ev->agent];
    double next = ev->time + r->seconds;
    int kind = --r->left > 0 ? ENGINE_EVENT_COMPUTE_RELAY : r->kind;
    if (queue_push(e->queue, next, kind, ev->agent, ev->data) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return HS_OK;
}
