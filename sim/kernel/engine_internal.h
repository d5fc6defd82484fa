/* engine_internal.h — the inside of the kernel's engine, shared by the files of the
 * kernel that implement it: engine.c (clocks, primitives, the round's loop and
 * accounting), collective.c (collectives), and the network models behind
 * engine_network.h (network_fifo.c, network_maxmin.c). Nothing outside sim/kernel/
 * includes it: methods and the run see the opaque Engine of engine.h. */
#ifndef SIM_KERNEL_ENGINE_INTERNAL_H
#define SIM_KERNEL_ENGINE_INTERNAL_H

#include "sim/kernel/engine.h"

#include <gsl/gsl_rng.h>
#include <string.h>

struct NetworkModel;
/* Unstable links (loss.c): NULL when no node loses messages. */
typedef struct EngineLoss EngineLoss;
/* Messages cut at a deadline (deadline.c): NULL until the first engine_send_until. */
typedef struct EngineDeadlines EngineDeadlines;
/* Batteries checked at the instant they empty (battery.c): NULL when none is. */
typedef struct BatteryInstant BatteryInstant;

/* One message sent by engine_send_until, until its events are through. */
typedef struct DeadlineMessage {
    int from, to, kind;
    int64_t data;
    double bytes, floor, deadline;
    double delivered;  /* the bytes that went; NAN until a cut (or fifo's send) sets it */
    int64_t ref[2];    /* the model's handle of its message (maxmin: its flow) */
    int pending;       /* its events still queued (the end, and a cut); set by the model */
    int ended;         /* its end was delivered */
    int next_free;     /* while the slot is free: base/slots.h's free-list link */
} DeadlineMessage;

/* The attributes of an EngineNode that differ from node to node (drawn per agent), when the
 * engine keeps its own copy (EngineConfig.rates_at.base NULL). */
typedef struct EngineRates {
    double compute, uplink, downlink, latency;
} EngineRates;

/* One rate of node i, read where Engine.rates_at says (its own EngineRates, or the caller's
 * records): through memcpy, as the bytes of a double in a record of another type. */
static inline double engine_rate(const EngineRatesAt *at, int i, size_t offset)
{
    double v;
    memcpy(&v, (const char *)at->base + (size_t)i * at->stride + offset, sizeof v);
    return v;
}
#define engine_compute_rate(e, i) engine_rate(&(e)->rates_at, (i), (e)->rates_at.compute)
#define engine_uplink_rate(e, i) engine_rate(&(e)->rates_at, (i), (e)->rates_at.uplink)
#define engine_downlink_rate(e, i) engine_rate(&(e)->rates_at, (i), (e)->rates_at.downlink)
#define engine_latency_rate(e, i) engine_rate(&(e)->rates_at, (i), (e)->rates_at.latency)

/* One node's resources, booked by the primitives. */
typedef struct AgentClock {
    double compute_free;  /* virtual time its processor is free */
    double compute_s, comm_s, busy_s; /* this round */
    SinkRole role;        /* this round */
    int slow;             /* markov slowdown state */
} AgentClock;

/* A node's energy state, kept only when energy is modelled (Engine.energy). */
typedef struct EnergyClock {
    double bytes_io;      /* bytes sent and received this round */
    double charge;        /* J in the battery (battery nodes) */
    double battery_back;  /* end of the battery's current outage (-inf: none) */
} EnergyClock;

struct Engine {
    double now;
    int round;
    double round_start;
    int round_over;
    double round_bytes, total_bytes;
    int n_agents, n_nodes;
    EngineRates *rates;   /* (n_nodes) each node's own rates, copied; NULL when read in place */
    EngineRatesAt rates_at; /* where they are read (engine_compute_rate, ...): rates or the
                           * caller's records (EngineConfig.rates_at) */
    int *profile_of;      /* (n_nodes) its index in profiles */
    EngineNode *profiles; /* (n_profiles) the rest of the nodes' EngineNode, shared by the
                           * nodes that have the same (a group's); rates left 0 */
    int n_profiles;
    /* attribute traces (EngineTraces): NULL arrays when no group uses one */
    const TraceSeries *const *compute_trace, *const *uplink_trace, *const *downlink_trace,
        *const *availability_trace, *const *outage_trace,
        *const *charging_trace; /* a battery's watts over time (docs/energy.md) */
    EngineNetwork spec;
    EventQueue *queue;
    AgentClock *clocks;      /* (n_nodes) */
    SinkAgentRound *rows;    /* buffer for agent_rounds: (n_agents) with energy, else a
                              * batch of ENGINE_ROWS_BATCH (engine_report_rows) */
    gsl_rng **dynamics_rng;  /* (n_nodes) only for nodes whose slowdown is random over time */
    Sink sink;
    int summary;             /* EngineConfig.summary: agent_rounds rows are formed, not sent */
    int64_t run_id;
    EngineHandler handler;
    void *handler_ctx;
    HsDiag *diag;
    const struct NetworkModel *model; /* fifo or maxmin (engine_network.h) */
    void *net;                        /* the model's state */
    int energy;                       /* some agent has a power or a battery */
    EnergyClock *energy_clocks;       /* (n_nodes) when energy, else NULL */
    /* batteries: each battery node's availability is an owned copy of its trace (or of
     * "always online") that the engine cuts outages into; availability_trace then points
     * at battery_nodes, which holds the borrowed series of the other nodes */
    TraceSeries *battery_series;      /* (n_nodes) owned; n = 0 for nodes without a battery */
    const TraceSeries **battery_nodes; /* (n_nodes) */
    BatteryInstant *instant;          /* (n_nodes) when some battery_check = instant, else NULL */
    size_t instant_queued;            /* its ENGINE_EVENT_BATTERY events in the queue */
    EngineLoss *loss;                 /* [agents] loss > 0 somewhere, else NULL (loss.c) */
    EngineDeadlines *deadlines;       /* engine_send_until's messages, NULL before one (deadline.c) */
    struct Radio *radio;              /* the spans of the agents whose power_tx and power_rx
                                       * differ (radio.h); NULL when none does */
    struct EngineRelay *relays;       /* (n_nodes) runs booked at once (compute_run.c), NULL
                                       * before the first */
};

/* The node's dynamics, energy and availability's name: its EngineNode but for the rates. */
static inline const EngineNode *engine_profile(const Engine *e, int node)
{
    return &e->profiles[e->profile_of[node]];
}

/* Energy per byte: the bytes a node sends or receives (collectives: each member's share). */
static inline void engine_book_bytes(Engine *e, int node, double bytes)
{
    if (e->energy) e->energy_clocks[node].bytes_io += bytes;
}

/* The radio's spans (radio.h), kept for the agents whose two powers differ: way
 * ENGINE_RADIO_TX or ENGINE_RADIO_RX (network.h's NETWORK_SENDING and NETWORK_RECEIVING),
 * or ENGINE_RADIO_COMPUTE. HS_OK, or HS_E_NOMEM in the engine's diag. */
struct NetworkPeriodic;
enum { ENGINE_RADIO_TX = 0, ENGINE_RADIO_RX = 1, ENGINE_RADIO_COMPUTE = 2 };
int engine_radio_span(Engine *e, int node, int way, double start, double end);
int engine_radio_periodic(Engine *e, int node, int way, const struct NetworkPeriodic *p);

/* agent_rounds rows handed to the sink per call when energy is off */
#define ENGINE_ROWS_BATCH 1024

/* [network] tcp = lv08: SimGrid's LV08 factors. */
#define ENGINE_LV08_LATENCY 13.01
#define ENGINE_LV08_BANDWIDTH 0.97
#define ENGINE_LV08_WEIGHT_S 20537.0

static inline const TraceSeries *engine_series(const TraceSeries *const *per_node, int node)
{
    return per_node ? per_node[node] : NULL;
}

/* engine_compute without its event: books flops on the node's processor after its queued
 * work, the finish in *finish (collective.c's engine_collective_compute_join). */
int engine_book_compute(Engine *e, int node, double flops, double *finish);
/* min(uplink of from, downlink of to) at time t, traces and tcp's factor included (no
 * backbone): the rate a fifo message transfers at. */
double engine_link_rate(const Engine *e, int from, int to, double t);

/* ---- messages cut at a deadline (deadline.c) ---- */
/* The slot's message (a model's send_until and cut read and fill it). */
DeadlineMessage *engine_deadline_slot(Engine *e, int slot);
/* ENGINE_EVENT_DEADLINE_END and ENGINE_EVENT_DEADLINE_CUT. */
int engine_deadline_event(Engine *e, const Event *ev);
void engine_deadlines_free(Engine *e);

/* ---- unstable links (loss.c) ---- */
/* Allocates e->loss when some node's loss is > 0 (else leaves it NULL). HS_E_NOMEM. */
int engine_loss_create(Engine *e, const EngineConfig *config);
void engine_loss_free(Engine *e);
/* engine_send of a lossy engine: the message's attempts go through the model. */
int engine_loss_send(Engine *e, int from, int to, double bytes, int kind, int64_t data);
/* A ring all-reduce of a lossy engine, every member joined: played as 2(N-1) steps of
 * chunk messages that may be lost and sent again (collective.c calls it instead of the
 * model's ring). HS_OK or HS_E_NOMEM. */
struct Collective;
int engine_loss_ring(Engine *e, struct Collective *c);
/* ENGINE_EVENT_LOSS_ARRIVAL, ENGINE_EVENT_LOSS_TIMEOUT and ENGINE_EVENT_LOSS_RING_START. */
int engine_loss_event(Engine *e, const Event *ev);
/* ENGINE_EVENT_COMPUTE_RELAY (compute_run.c). */
int engine_compute_relay(Engine *e, const Event *ev);
void engine_loss_begin_round(Engine *e);
/* One attempt of a message from -> to of another module (deadline.c) arrived: 1 when it
 * was lost (one draw from the sender's loss stream, counted in the round's and the
 * sender's lost attempts), 0 when it arrived. Only on a lossy engine. */
int engine_loss_judge(Engine *e, int from, int to);
/* loss_mode = drop on a lossy engine; the retransmission timeout (NAN without loss). */
int engine_loss_drops(const Engine *e);
double engine_loss_rto(const Engine *e);
/* Hands ev to the method as a message from `from` that was lost (engine_delivery_lost
 * says so within the handler). */
int engine_loss_deliver_lost(Engine *e, const Event *ev, int from);
/* Attempts lost this round, in all and sent by node; -1 without loss (NULL columns). */
int engine_loss_round_lost(const Engine *e);
int engine_loss_sent_lost(const Engine *e, int node);

#endif
