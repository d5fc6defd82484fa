/* engine_network.h — the engine's network models behind one interface, side by side as
 * SimGrid keeps network_cm02 and network_constant: network_maxmin.c (links shared by
 * max-min fairness, over the flow solver of network.h) and network_fifo.c (the older
 * model: a sender's uplink sends one message at a time at min(up, down), downlinks
 * unshared). engine.c picks one at engine_create and never asks which one runs; the cost
 * model of each is in engine.h. Kernel-internal: methods only see the primitives.
 *
 * What a model owns: how a message travels (send), when a collective member may join
 * and how its ring all-reduce travels (join_time, ring; collective.c does the rest),
 * its share of the round's accounting (computed, close_round: the nodes' busy_s and
 * comm_s), and, optionally, events of its own below ENGINE_EVENT_METHOD. */
#ifndef SIM_KERNEL_ENGINE_NETWORK_H
#define SIM_KERNEL_ENGINE_NETWORK_H

#include "sim/kernel/engine_internal.h"

struct Collective;

typedef struct NetworkModel {
    const char *name;
    /* 1: the round's accounting clips busy spans at the round's start and end, keeping
     * what runs past its end for the next round (maxmin); 0: a span counts whole in the
     * round that booked it (fifo). The radio's spans (radio.h) follow it. */
    int clips_rounds;
    /* Allocates the model's state (e->net) for e's nodes. NULL: none. HS_E_NOMEM. */
    int (*create)(Engine *e);
    void (*free)(Engine *e);
    /* A round begins at e->now (after the engine's clocks are reset). NULL: nothing. */
    void (*begin_round)(Engine *e);
    /* A message from -> to of bytes; (kind, to, data) is scheduled on arrival. The
     * bytes count in the round's. */
    int (*send)(Engine *e, int from, int to, double bytes, int kind, int64_t data);
    /* The message in deadline slot (engine_deadline_slot; deadline.c): plays it, sets the
     * slot's pending events, and queues ENGINE_EVENT_DEADLINE_END (data: slot) at its end,
     * with delivered set when it is cut (NAN: every byte went). Its bytes are booked then,
     * by deadline.c. */
    int (*send_until)(Engine *e, int slot);
    /* ENGINE_EVENT_DEADLINE_CUT of a slot whose end has not come: cut it now. NULL: the
     * model's send_until cut it already (it queues no cut event). */
    int (*cut)(Engine *e, int slot);
    /* node's computation of flops was booked on [start, end). */
    int (*computed)(Engine *e, int node, double flops, double start, double end);
    /* When node may join c (*t), or 0 in *joins when it joins later by itself (calling
     * engine_collective_join again once it can). */
    int (*join_time)(Engine *e, struct Collective *c, int node, double *t, int *joins);
    /* The last member joined at c->ready: the ring all-reduce of c->bytes per member
     * runs, and (c->kind, -1, c->data) is scheduled at its end. */
    int (*ring)(Engine *e, struct Collective *c);
    /* Events of kinds below ENGINE_EVENT_METHOD. NULL: the model has none. */
    int (*event)(Engine *e, const Event *event);
    /* After every event (and before the round's first): NULL or re-arms the model's
     * next event. */
    int (*after_event)(Engine *e);
    /* 1 when the queue is empty but messages are left that can never move. NULL: never. */
    int (*stranded)(const Engine *e);
    /* The round ends at e->now: every node's busy_s and comm_s for it. NULL: booked as
     * they went. */
    void (*close_round)(Engine *e);
    /* The node's availability series changed from e->now on (a battery ran out): links
     * in use read their capacity again. NULL: every booking reads the series anew. */
    int (*availability_changed)(Engine *e, int node);
    /* The run ends: what is in flight to the sink's activity callback. NULL: nothing. */
    void (*end_run)(Engine *e);
} NetworkModel;

extern const NetworkModel network_model_fifo;   /* network_fifo.c */
extern const NetworkModel network_model_maxmin; /* network_maxmin.c */

#endif
