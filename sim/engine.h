/* engine.h — the discrete-event kernel of one run and the primitives methods use.
 * The engine owns the virtual clock, the event queue, per-agent resource clocks and the
 * per-round accounting; a method (sim/methods/) decides what happens. Every primitive
 * computes its finishing time from the cost model (DESIGN.md) and schedules an event;
 * nothing here reads the wall clock.
 *
 * Cost model:
 *   compute  flops / agent.compute seconds times the agent's slowdown factor at the
 *            start (sim/kernel/dynamics.h), FIFO on the agent's processor;
 *   [network] model = maxmin (sim/kernel/network.h):
 *     send   a flow over up_from and down_to (and the backbone): latency first, then the
 *            bytes at the flow's max-min fair share of every link it crosses;
 *     ring all-reduce of B bytes among N agents: 2(N-1) steps of B/N bytes per hop, each
 *            step as long as its slowest hop (that hop's own latency and share), starting
 *            when the last member joins; closed form when the ring is alone on its links;
 *   [network] model = fifo (the older model):
 *     send   latency + bytes / min(uplink_from, downlink_to), FIFO on the sender's uplink
 *            (the uplink is busy for the transmission; latency is propagation);
 *     ring all-reduce: 2(N-1) steps of B/N bytes at the slowest link of the ring plus
 *            2(N-1) times the largest link latency.
 *   [network] tcp = lv08 scales latencies by 13.01 and bandwidths by 0.97 in both.
 * Availability (a 0/1 trace): an offline agent's processor and uplink pause and resume
 * where they stopped (maxmin: both its links carry nothing while it is offline); a fifo
 * collective starts once every member is online. So every method
 * waits for an absent agent, except where the method says otherwise (AD-PSGD picks an
 * online neighbour; sync's deadline; ComDML leaves offline agents out of its pairing and
 * its helpers stop waiting for an offline partner, see comdml.c).
 * Servers ([server], METHOD_USES_SERVER): node world.n + k is server k. Every primitive
 * takes a node index, so a server computes (its processor: aggregation FLOPs), sends
 * and receives over its own uplink and downlink under the same cost model, sharing them
 * under maxmin, and pauses while its availability trace says it is offline. Servers are
 * not agents: they have no agents or agent_rounds rows, and collectives with members ==
 * NULL span the agents only.
 * Accounting per agent and round: compute_s is the time booked on the processor; offline_s
 * the time offline; idle_s = round length - the union of busy intervals - offline_s.
 * comm_s: fifo, the time booked on the uplink (a collective books every member for its
 * whole length); maxmin, the time during which at least one message the agent sends or
 * receives is transferring (latency excluded), so an agent waiting inside a collective
 * for a slower hop is idle. */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include "models/model_spec.h"
#include "sim/methods/method.h"
#include "sim/kernel/queue.h"
#include "sim/scenario/scenario.h"
#include "sim/kernel/sink.h"
#include "sim/kernel/trace.h"
#include "sim/world/world.h"

struct Trainer;

/* Event kinds below this are the engine's; methods use ENGINE_EVENT_METHOD + k. */
enum {
    ENGINE_EVENT_COLLECTIVE_START = 1, /* data: collective slot */
    ENGINE_EVENT_COLLECTIVE_DONE = 2,  /* data: collective slot */
    ENGINE_EVENT_NETWORK = 3,          /* the network has something due */
    ENGINE_EVENT_METHOD = 16
};

struct Network;
struct AgentActivity;
struct Collective;

typedef struct AgentClock {
    double compute_free;  /* virtual time its processor is free */
    double uplink_free;   /* virtual time its uplink is free */
    double busy_end;      /* end of the union of busy intervals booked this round */
    double compute_s, comm_s, busy_s; /* this round */
    SinkRole role;        /* this round */
    int slow;             /* markov slowdown state */
} AgentClock;

typedef struct Engine {
    /* ---- what a method may read (and round_extra, which it writes) ---- */
    const Scenario *sc;
    World world;
    ModelProfile profile;
    double now;
    int round;
    double round_start;
    double round_extra;   /* method figure for rounds.extra (NaN when none) */
    /* [privacy] (sim/stages/privacy.h): the method's accountant, owned by the method (NULL when
     * none); each evaluation reports its epsilon in metrics.epsilon */
    struct Privacy *privacy;
    HsDiag *diag;
    struct Trainer *trainer; /* NULL in timing mode */
    /* ---- the engine's own state: methods use the primitives below instead ---- */
    EventQueue *queue;
    int round_over;
    AgentClock *clocks;   /* (world.n) */
    double round_bytes, total_bytes;
    Sink sink;
    int64_t run_id;
    const MethodOps *method;
    void *method_state;
    double last_accuracy;    /* NaN until evaluated */
    int target_reached;
    SinkAgentRound *rows;    /* (world.n) buffer for agent_rounds */
    gsl_rng **dynamics_rng;  /* (world.n) only for agents whose group is random over time */
    /* Attribute traces (NULL arrays when no group uses one; NULL entries for agents
     * without): the value at the start of a computation or message applies. */
    Trace *traces;
    int n_traces;
    const TraceSeries **compute_trace, **uplink_trace, **downlink_trace, **availability_trace;
    /* [network] model = maxmin; NULL under fifo */
    struct Network *network;
    struct AgentActivity *activity;       /* (world.n) busy intervals of this round */
    struct Collective **collectives;      /* started collectives by slot (event data) */
    int n_collectives;
    struct Collective **pending_join;     /* (world.n) a join waiting for the agent's sends */
    double network_wakeup;                /* earliest ENGINE_EVENT_NETWORK queued */
} Engine;

/* A ring all-reduce being assembled: members join one by one; when the last joins the
 * engine schedules one event (kind, agent -1, data) at the finishing time. */
typedef struct Collective {
    const int *members;  /* NULL: all agents 0..n-1 in index order (the ring order) */
    int n_members;
    int joined;
    double ready;        /* latest join time so far */
    double bytes;        /* payload per member */
    int blocking;        /* members' processors wait for it (sync); 0 overlaps compute (CO2) */
    int kind;
    int64_t data;
} Collective;

typedef struct RunOutcome {
    int64_t run_id;
    SinkStatus status;
    int rounds_done;
    double sim_time_s;
    double final_accuracy;
} RunOutcome;

/* Runs the scenario to its stop condition, reporting to sink. Input problems found
 * before the run starts return HS_E_INPUT and write nothing to the sink. */
int engine_run(const Scenario *sc, Sink sink, HsDiag *diag, RunOutcome *outcome);

/* An engine set up for sc (world, traces, trainer, method) without running it: for
 * tests that drive the primitives or the trainer by hand. Free with engine_close. */
int engine_open(const Scenario *sc, Sink sink, HsDiag *diag, Engine **out);
void engine_close(Engine *e);

/* FLOPs of one training step (forward + backward + loss) of a batch on the full model. */
double engine_step_flops(const Engine *e, int batch);
/* Parameter bytes of the whole model (float32). */
double engine_model_bytes(const Engine *e);
/* Steps in one pass over agent's local data. */
int engine_agent_steps(const Engine *e, int agent);
/* Steps of a "global epoch": ceil(mean samples / batch). */
int engine_round_steps(const Engine *e);

/* Books flops on agent's processor after its queued work; schedules (kind, agent, data)
 * at the finish. Returns the finishing time. */
double engine_compute(Engine *e, int agent, double flops, int kind, int64_t data);
/* Sends bytes from -> to; schedules (kind, to, data) on arrival. Returns the arrival time
 * under fifo; NAN under maxmin, where it depends on the flows that start later. */
double engine_send(Engine *e, int from, int to, double bytes, int kind, int64_t data);

void engine_collective_begin(Collective *c, const int *members, int n_members, double bytes,
                             int blocking, int kind, int64_t data);
/* Agent joins once its queued compute (and sends) are done. Returns HS_OK. */
int engine_collective_join(Engine *e, Collective *c, int agent);
/* Schedules (kind, agent, data) at time t >= now. */
int engine_schedule(Engine *e, double t, int kind, int agent, int64_t data);

/* 1 if the agent is online at time t (always, without an availability trace). */
int engine_agent_online(const Engine *e, int agent, double t);
/* 1 if some group of the run follows an availability trace. */
int engine_has_churn(const Engine *e);
/* 1 if the agent's Markov slowdown is in its slow state now. */
int engine_agent_slowed(const Engine *e, int agent);
/* The first time >= t at which the agent is offline; INFINITY without an availability
 * trace or when it stays online. Methods use it to react to an absence when it starts. */
double engine_agent_next_offline(const Engine *e, int agent, double t);
/* Fails the run (HS_E_INPUT, naming the trace) because the agent's availability trace
 * leaves it offline for good while the round still needs it: work would finish at
 * t = inf and the round could never end. agent < 0: the first agent offline for good.
 * The engine calls it when only such work is left; a method whose other agents keep
 * working (AD-PSGD) calls it itself. */
int engine_fail_stranded(Engine *e, int agent);

void engine_end_round(Engine *e);
void engine_set_role(Engine *e, int agent, SinkRole role);
int engine_report_pairing(Engine *e, const SinkPairing *pairing);
int engine_report_metric(Engine *e, const SinkMetric *metric);

#endif
