/* engine.h — the discrete-event kernel of one run: the virtual clock, the event queue,
 * every node's resource clocks, the cost-model primitives and the per-round accounting.
 * It knows nodes and their attributes, not scenarios, worlds, trainers or methods: the
 * run (sim/run.h) fills an EngineConfig from those, plays the rounds, and receives the
 * events of kind >= ENGINE_EVENT_METHOD through a handler (plain dispatch). Every
 * primitive computes its finishing time from the cost model (DESIGN.md) and schedules an
 * event; nothing here reads the wall clock. Engine is opaque: what a method may read
 * has a function.
 *
 * Cost model (the network models behind engine_network.h, the collectives collective.h):
 *   compute  flops / node.compute seconds times the node's slowdown factor at the start
 *            (sim/kernel/dynamics.h), FIFO on the node's processor;
 *   maxmin (EngineNetwork.maxmin, sim/kernel/network.h):
 *     send   a flow over up_from and down_to (and the backbone): latency first, then the
 *            bytes at the flow's max-min fair share of every link it crosses;
 *     ring all-reduce of B bytes among N nodes: 2(N-1) steps of B/N bytes per hop, each
 *            step as long as its slowest hop (that hop's own latency and share), starting
 *            when the last member joins; closed form when the ring is alone on its links;
 *   fifo (the older model):
 *     send   latency + bytes / min(uplink_from, downlink_to), FIFO on the sender's uplink
 *            (the uplink is busy for the transmission; latency is propagation);
 *     ring all-reduce: 2(N-1) steps of B/N bytes at the slowest link of the ring plus
 *            2(N-1) times the largest link latency.
 *   lv08 scales latencies by 13.01 and bandwidths by 0.97 in both.
 *   A message's latency is the larger of its two ends' latencies; its bandwidth at fifo
 *   the smaller of the sender's uplink and the receiver's downlink.
 * Availability (a 0/1 trace): an offline node's processor and uplink pause and resume
 * where they stopped (maxmin: both its links carry nothing while it is offline); a fifo
 * collective starts once every member is online. So every method waits for an absent
 * node, except where the method says otherwise (AD-PSGD picks an online neighbour;
 * sync's deadline; ComDML leaves offline agents out of its pairing and its helpers stop
 * waiting for an offline partner, see comdml.c).
 * Nodes: agents 0..n_agents-1, then servers (a server computes, sends and receives under
 * the same cost model); agent_rounds rows and collectives with members == NULL span the
 * agents only.
 * Accounting per agent and round: compute_s is the time booked on the processor; offline_s
 * the time offline; idle_s = round length - the union of busy intervals - offline_s.
 * comm_s: fifo, the time booked on the uplink (a collective books every member for its
 * whole length); maxmin, the time during which at least one message the agent sends or
 * receives is transferring (latency excluded), so an agent waiting inside a collective
 * for a slower hop is idle.
 * Energy (docs/energy.md), when a node has a power: one state at a time, computing before
 * communicating before idle, offline drawing nothing: compute_j = power_compute x
 * compute_s, comm_j = the radio's joules over comm = busy - compute_s + energy_per_byte x
 * (bytes sent + received), idle_j = power_idle x idle_s. The radio draws power_tx while
 * only sending, power_rx while only receiving, and the larger of the two while doing both
 * (a half-duplex radio): with tx the time sending and not computing, comm_j's first term
 * is power_tx x tx + power_rx x (comm - tx) when power_tx >= power_rx (the mirror image
 * otherwise), and power_tx x comm, today's product, when they are equal (radio.h).
 * A battery (battery_check = round) is booked when the round ends: charge += charging x
 * round length (a charging trace: its integral over the round) - the round's joules, at
 * most the capacity; a charge at or below 0 takes the agent offline from that moment (its availability series gets the
 * interval, as churn's would) until charging brings it back to resume_charge. With
 * battery_check = instant the charge is followed between bookings and the outage starts
 * at the instant it reaches 0 (battery.h). */
#ifndef SIM_KERNEL_ENGINE_H
#define SIM_KERNEL_ENGINE_H

#include "base/hs_error.h"
#include "sim/kernel/dynamics.h"
#include "sim/kernel/queue.h"
#include "sim/kernel/sink.h"
#include "sim/kernel/trace.h"

#include <stddef.h>
#include <stdint.h>

typedef struct Engine Engine;

/* Event kinds below this are the engine's; methods use ENGINE_EVENT_METHOD + k. */
enum {
    ENGINE_EVENT_COLLECTIVE_START = 1, /* data: collective slot */
    ENGINE_EVENT_COLLECTIVE_DONE = 2,  /* data: collective slot */
    ENGINE_EVENT_NETWORK = 3,          /* the network has something due */
    ENGINE_EVENT_LOSS_ARRIVAL = 4,     /* an attempt of a lossy message arrived (loss.c); data: its slot */
    ENGINE_EVENT_LOSS_TIMEOUT = 5,     /* rto after a lost attempt: resend, or (drop) tell the receiver */
    ENGINE_EVENT_DEADLINE_END = 6,     /* a message with a deadline ended (deadline.c); data: its slot */
    ENGINE_EVENT_DEADLINE_CUT = 7,     /* its deadline came; data: its slot */
    ENGINE_EVENT_LOSS_RING_START = 8,  /* a lossy engine's ring all-reduce starts (loss.c); data: its slot */
    ENGINE_EVENT_LOSS_RING_HOP = 9,    /* a chunk of a lossy ring's step arrived; data: the ring's slot */
    ENGINE_EVENT_BATTERY = 10,         /* an instant battery's predicted crossing (battery.c) */
    ENGINE_EVENT_DEADLINE_TIMEOUT = 11, /* rto after a lost attempt of a message with a deadline
                                         * (deadline.c): resend, or (drop) tell the receiver */
    ENGINE_EVENT_COMPUTE_RELAY = 12,   /* a computation of a run booked at once ended (compute_run.c);
                                        * data: the run's own event's */
    ENGINE_EVENT_METHOD = 16
};

/* One node's attributes, as the floors above resolved them. */
typedef struct EngineNode {
    double compute;     /* FLOP/s at full speed (a compute trace's value at t = 0) */
    double uplink;      /* bytes/s (likewise under a trace) */
    double downlink;    /* bytes/s */
    double latency;     /* s, added to every message the node sends or receives */
    Slowdown slowdown;  /* speed over time */
    double jitter;      /* lognormal sigma of per-computation noise */
    const char *availability_source; /* names the availability in errors: its trace file,
                                      * else the scenario file */
    /* energy (docs/energy.md); all 0 on every node: not modelled, the rows' joules NULL */
    double power_compute, power_idle; /* W */
    double power_tx, power_rx; /* W while sending, receiving (and not computing) */
    double energy_per_byte;  /* J per byte sent or received */
    double battery;          /* J capacity, full at t = 0; 0: none */
    double charging;         /* W into the battery, all the time */
    double resume_charge;    /* J a spent battery must hold again to come back (0: full) */
    int battery_instant;     /* checked at the instant it empties, not at the round's end */
    /* unstable links (sim/kernel/loss.c); 0 on every node: no draw, no loss */
    double loss;             /* probability in [0, 1) that this end loses a message */
} EngineNode;

/* Attribute traces, one series pointer per node (NULL for a node without one); an array
 * is NULL when no node's group uses that trace. Borrowed: they outlive the engine. The
 * value at the start of a computation or message applies. */
typedef struct EngineTraces {
    const TraceSeries *const *compute, *const *uplink, *const *downlink, *const *availability;
    /* the links' state (1 up, 0 down; maxmin only): while down, both of the node's links
     * carry nothing, its processor goes on */
    const TraceSeries *const *outage;
    /* watts into a battery node's battery over time (instead of EngineNode.charging) */
    const TraceSeries *const *charging;
} EngineTraces;

typedef struct EngineNetwork {
    int maxmin;       /* 1: links shared by max-min fairness; 0: fifo */
    int lv08;         /* SimGrid's LV08 factors */
    double backbone;  /* maxmin: a shared backbone's bytes/s (INFINITY: none) */
    int uplink_fifo;  /* maxmin: a sender's messages take turns on its uplink */
    int loss_drop;    /* a lost message is not sent again (the receiver is told) */
    double rto;       /* s from a lost attempt's arrival to its resend (or the receiver's notice) */
} EngineNetwork;

/* Receives the events of kind >= ENGINE_EVENT_METHOD; a status other than HS_OK ends
 * the round with it. */
typedef int (*EngineHandler)(void *ctx, const Event *event);

/* Where the nodes' rates already are, for the engine to read them in place rather than copy
 * them (32 bytes a node at millions of agents): node i's compute, uplink, downlink and
 * latency are the doubles at these byte offsets of the record at base + i x stride (sim/run.c:
 * the world's AgentProfile array). The records must hold the values node() / nodes give
 * (engine_create checks, bit for bit), stay unchanged and outlive the engine. */
typedef struct EngineRatesAt {
    const void *base; /* NULL: the engine keeps its own copy */
    size_t stride;
    size_t compute, uplink, downlink, latency;
} EngineRatesAt;

typedef struct EngineConfig {
    int n_agents, n_servers;
    EngineRatesAt rates_at;    /* optional (base NULL: the rates are copied) */
    const EngineNode *nodes;   /* (n_agents + n_servers), copied; or NULL and: */
    void (*node)(void *ctx, int i, EngineNode *out); /* node i's attributes, asked once each
                                * (no array of whole EngineNodes at millions of agents) */
    void *node_ctx;
    EngineTraces traces;
    EngineNetwork network;
    uint64_t seed;             /* the nodes' dynamics streams */
    Sink sink;                 /* rounds, agent_rounds, activity, pairings, metrics */
    int summary;               /* [run] record = summary: no agent_rounds rows (the round's
                                * row is the same: its idle sum is formed either way) */
    EngineHandler handler;
    void *handler_ctx;
    HsDiag *diag;              /* every error's message; one found inside the network's
                                * callbacks is noticed there after the event */
} EngineConfig;

/* HS_OK, or HS_E_NOMEM with a message in config->diag. Free with engine_free (accepts
 * NULL). */
int engine_create(const EngineConfig *config, Engine **out);
void engine_free(Engine *e);
/* Bytes the engine keeps for every node, for a run's memory estimate. */
size_t engine_node_bytes(void);
/* The run id the sink gave (rows name it). */
void engine_set_run(Engine *e, int64_t run_id);

/* ---- unstable links (sim/kernel/loss.c) ----
 * A message a->b is lost with 1 - (1 - loss_a)(1 - loss_b) per attempt; under
 * retransmit it is sent again rto after a lost attempt would have arrived, until one
 * arrives; under drop (loss_drop) its event is still delivered, rto after it would have
 * arrived, and engine_delivery_lost says so. */
/* 1 when some node's loss is > 0. */
int engine_lossy(const Engine *e);
/* The probability that one attempt of a message from -> to is lost. */
double engine_loss_probability(const Engine *e, int from, int to);
/* Within the handler: 1 (and the sender in *from, when not NULL) when the event being
 * handled is a message lost under loss_drop, else 0. */
int engine_delivery_lost(const Engine *e, int *from);

/* ---- what a method may read ---- */
double engine_now(const Engine *e);
int engine_round(const Engine *e);
double engine_round_start(const Engine *e);
/* 1 once engine_end_round was called this round. */
int engine_round_over(const Engine *e);
/* Bytes put on the wire this round, and in the rounds reported before it. */
double engine_round_bytes(const Engine *e);
double engine_total_bytes(const Engine *e);

/* ---- rounds, for the run ---- */
/* Starts round `round` at now: clears the round's accounting. */
void engine_begin_round(Engine *e, int round);
/* Runs the round's events in (time, seq) order until engine_end_round or an empty
 * queue; methods' events go to the handler. Returns the first failing status (an
 * offline-for-good node that strands the round is HS_E_INPUT, see engine_fail_stranded). */
int engine_play(Engine *e);
/* The round's accounting to the sink: its rounds row (with the method's extra figure)
 * and the agents' agent_rounds rows; its bytes join the total. */
int engine_report_round(Engine *e, double extra);
/* The run ends: reports what is still in flight to the sink's activity callback. */
void engine_end_run(Engine *e);

/* ---- primitives ---- */
/* Every primitive returns HS_OK or the error that must end the round (HS_E_NOMEM, or
 * HS_E_IO when the sink refuses an activity row), with its message in the diag; a
 * method returns it from its handler. */

/* Books flops on node's processor after its queued work; schedules (kind, node, data)
 * at the finish, which goes to *finish when finish is not NULL (INFINITY when the node
 * is offline for good). */
int engine_compute(Engine *e, int node, double flops, int kind, int64_t data, double *finish);
/* 1 when engine_compute_run keeps the rows of an engine_compute per computation for this
 * node: nothing can change its speed or take it offline between two computations (no
 * availability or compute trace, no slowdown or jitter, no instant battery), and no radio
 * or activity sink lists its computations one by one. */
int engine_compute_run_exact(const Engine *e, int node);
/* `steps` computations of flops each, back to back on node's processor, booked now, with
 * one event (kind, node, data) at the last one's end: the same finish, accounting and
 * event order, bit for bit, as engine_compute from each computation's event handler
 * (compute_run.c says how). Only where engine_compute_run_exact, for a node with no run
 * in flight and nothing else booked on its processor until this one's event; the method
 * does between the computations nothing that another event could see. */
int engine_compute_run(Engine *e, int node, double flops, int steps, int kind, int64_t data);
/* 1 when the sink takes every computation and message (SinkOps.activity): their order is
 * then part of the output, and a method that books a node's computations ahead of their
 * events (engine_collective_compute_join's steps > 1) must not. */
int engine_records_activity(const Engine *e);
/* Sends bytes from -> to; schedules (kind, to, data) on arrival. The arrival time is
 * not returned: under maxmin it depends on the flows that start later. */
int engine_send(Engine *e, int from, int to, double bytes, int kind, int64_t data);

/* engine_send with a deadline (an absolute time): the message is cut then and the receiver
 * gets the bytes that arrived by then (maxmin: those its flow transferred after its
 * latency, at its share; fifo: those its sender's uplink transmitted by deadline -
 * latency); one that arrives whole before is unchanged. It is never cut before floor_bytes
 * are through: it then ends once they are. (kind, to, data) is scheduled when it ends;
 * engine_delivered_bytes says within the handler how many bytes went (they count in
 * rounds.bytes then). On lossy links each attempt is lost or not when it ends, as
 * engine_send's: retransmit sends it again rto later with the same deadline (an attempt
 * that starts after the deadline carries floor_bytes only), until one arrives; drop
 * delivers the event rto after the lost attempt ended, with engine_delivery_lost 1 and
 * engine_delivered_bytes 0. */
int engine_send_until(Engine *e, int from, int to, double bytes, double floor_bytes, double deadline, int kind,
                      int64_t data);
/* Within the handler of an engine_send_until's event: the bytes that arrived; NAN for any
 * other event. */
double engine_delivered_bytes(const Engine *e);

/* A message from -> to as the network model plays it now, alone on its links: the
 * latency it waits (max of the two nodes', [network] tcp's factor included) and the
 * bandwidth it transfers at (min(uplink, downlink) at now, traces included, and the
 * backbone under maxmin, times tcp's factor). What ComDML's exact cost is given. */
double engine_message_latency(const Engine *e, int from, int to);
double engine_message_bandwidth(const Engine *e, int from, int to);
/* The node's compute now (FLOP/s): its compute trace's current value when it has one,
 * slowdowns not included. */
double engine_agent_compute(const Engine *e, int agent);
/* When `seconds` of work started at `start` on the node would end, pausing while it is
 * offline: the series the engine pauses work by (availability, and battery outages as far
 * as they are booked). What a method may foresee (ComDML's predict = trace). */
double engine_finish(const Engine *e, int node, double start, double seconds);
/* The watts charging the node's battery now (its charging trace's value, or its constant). */
double engine_agent_charging(const Engine *e, int node);
/* The node's battery charge (J) as booked at the last round's end (full before the
 * first); INFINITY for a node without a battery. What energy-aware selection reads. */
double engine_agent_charge(const Engine *e, int node);
/* Collectives (ring all-reduce, all-gather, nested partial all-reduce): collective.h. */
/* Schedules (kind, node, data) at time t >= now. */
int engine_schedule(Engine *e, double t, int kind, int node, int64_t data);

/* 1 if the node is online at time t (always, without an availability trace). */
int engine_agent_online(const Engine *e, int node, double t);
/* 1 if the run has availability traces (EngineTraces.availability is not NULL: some
 * group follows one). */
int engine_has_churn(const Engine *e);
/* 1 if the node's Markov slowdown is in its slow state now. */
int engine_agent_slowed(const Engine *e, int node);
/* The first time >= t at which the node is offline; INFINITY without an availability
 * trace or when it stays online. Methods use it to react to an absence when it starts. */
double engine_agent_next_offline(const Engine *e, int node, double t);
/* Fails the run (HS_E_INPUT, naming the trace) because the node's availability trace
 * leaves it offline for good while the round still needs it: work would finish at
 * t = inf and the round could never end. node < 0: the first node offline for good;
 * when no node is (virtual time overflowed), HS_E_INTERNAL.
 * The engine calls it when only such work is left; a method whose other agents keep
 * working (AD-PSGD) calls it itself. */
int engine_fail_stranded(Engine *e, int node);

void engine_end_round(Engine *e);
void engine_set_role(Engine *e, int agent, SinkRole role);
int engine_report_pairing(Engine *e, const SinkPairing *pairing);
int engine_report_metric(Engine *e, const SinkMetric *metric);

#endif
