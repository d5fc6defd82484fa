/* comdml.c — ComDML (Sajjadi Mohammadabadi et al., ICDCS 2024): workload balancing by
 * local-loss split training.
 * Every `rebalance` rounds the solver pairs agents from their current speeds and links
 * (solver = exact | ip | greedy; see solver/pairing.h): a slow agent i offloads the top
 * of its model, blocks m+1..L, to a fast agent j. The round is then played out batch by
 * batch: i computes blocks 1..m plus the auxiliary head m, steps on that local loss and
 * sends the cut activations and labels to j over its uplink without waiting for
 * gradients; j first does its own epoch, then trains i's top (a separate copy) on the
 * activations in arrival order, on its own processor. Everyone then averages by ring
 * all-reduce: each block from whichever side trained it, weighted by samples; auxiliary
 * heads only among agents that used the same split.
 * Links: any two agents under a full topology, the [topology] graph's edges otherwise.
 * Prediction vs play-out (`pairings` stores both times): under cost = paper (the default)
 * the solver minimises the published T_i(j,m), which leaves out latency, the activation
 * messages sharing (or queueing on) the offloader's link, and the pipeline's tail (the
 * last batch's transfer and top step after the slow side ends, the helper waiting for the
 * first batch); it is exact only when the activations reach the helper before it is free.
 * cost = exact gives the solver the round as played here (solver/cost.c): latency per
 * agent and the link after [network] model, uplink, backbone and tcp, so that without
 * jitter, Markov or periodic slowdowns, traces and churn, predicted_s equals actual_s
 * to rounding. The one approximation left: a finite backbone, which every pair's
 * activations share; the solver gives each pair the backbone to itself, exact only while
 * the pairs' transfers do not overlap in time (comdml_exact_setup).
 *
 * Availability (churn). The engine pauses an offline agent's processor and uplink; on
 * top of that ComDML reacts as follows, the same in timing and train mode:
 * - Re-pairing sees availability: at a rebalance, an agent offline at the round's start
 *   takes no part (role alone; the solver gets no link to it and counts none of its
 *   batches, so the online agents are balanced among themselves). By default (predict =
 *   none) the solver does not look ahead: a deployment knows who is reachable now, and a
 *   mid-round absence is handled by the rules below. predict = trace plays the answer
 *   against the availability series (comdml_solve_ahead: a helper whose absence would
 *   make it end after the makespan is taken out and the solver asked again, the best
 *   answer kept); predict = history keeps agents that often left out of the helpers
 *   (comdml_observe). Between rebalances the pairs stand, even with an absent member.
 * - The helper drops an absent offloader's work: once it has done its own epoch and every
 *   activation batch that has arrived, and its partner is offline (then, or later while it
 *   waits), it stops waiting: the partner's batches not yet trained are dropped
 *   (rounds.extra = batches dropped in the round, 0 when none, for runs with an
 *   availability trace; NaN otherwise) and its pairings row is written then, so actual_s
 *   is the played-out time. Batches still on the wire at that moment count as dropped.
 *   A shared helper applies the rule to each of its offloaders (comdml_shared_wait) and
 *   finishes once every one of them is through or dropped.
 * - The offloader, back online, finishes the rest of its bottom-side batches on its local
 *   loss and sends nothing more (its helper has stopped listening; a transmission paused
 *   mid-way still completes, counts in bytes, and is discarded on arrival). Its top
 *   blocks trained only on the batches the helper took, so the averaging weights them by
 *   that share of its epoch (weight 0 when none), see trainer_average_split.
 * - A helper that goes offline pauses its own and the partner's work; activations keep
 *   arriving and queue on its processor until it returns. Nobody waits for a message
 *   from it, so this cannot deadlock; its round just ends later.
 * - The round ends with the all-reduce, which starts once every member is online: an
 *   agent offline at the round's end delays it, and the time shows up as its offline_s
 *   and as the others' idle_s. */
#include "sim/methods/method.h"
#include "sim/scenario/topology.h"
#include "sim/train/trainer.h"
#include "solver/pairing.h"
#include "solver/shared.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { COMDML_OWN_STEP = ENGINE_EVENT_METHOD, COMDML_SLOW_STEP, COMDML_ACTIVATIONS, COMDML_TOP_STEP,
       COMDML_AVERAGED, COMDML_PARTNER_CHECK };


typedef struct ComdmlAgent {
    int partner;       /* helper of an offloader, offloader of a helper, -1 alone */
    int split;         /* offloader's split, 0 otherwise */
    SinkRole role;
    int own_left;      /* own full steps (alone, helper) or slow-side steps (offloader) left */
    int top_left;      /* helper: top batches of its partner (its offloaders) still to train */
    int top_mine;      /* offloader: of its batches, those its helper has still to train */
    int top_queued;    /* helper: of those, arrived and booked on its processor */
    int released;      /* helper: stopped waiting for an absent partner; later arrivals are dropped */
    int cut;           /* shared offloader: its helper dropped its batches; it sends no more */
    double check_at;   /* helper: time of its pending look at an online partner, -1 none */
    int done;          /* finished all its work this round */
    double predicted;  /* solver's time for its pair or itself */
} ComdmlAgent;

/* [method] keys (comdml_keys below) */
typedef struct ComdmlKeys {
    int solver;           /* its place in SOLVER_NAMES */
    int rebalance;
    double ip_time_limit; /* s */
    int cost;             /* PairingCost: PAIRING_COST_NAMES is in the enum's order */
    int allocation;       /* PairingCapacity: PAIRING_CAPACITY_NAMES is in the enum's order */
    int predict;          /* ComdmlPredict: COMDML_PREDICT_NAMES is in the enum's order */
    double history_weight; /* predict = history: weight of the newest round in the estimate */
    double stay_threshold; /* predict = history: an agent below it helps no one */
    PruneKeys pruning;
} ComdmlKeys;

/* [method] predict: how a rebalance foresees who leaves during the round (comdml_pair_agents,
 * docs/methods/proactive-notes.md). */
typedef enum { COMDML_PREDICT_NONE = 0, COMDML_PREDICT_TRACE, COMDML_PREDICT_HISTORY } ComdmlPredict;
#define COMDML_PREDICT_NAMES "none|trace|history"

typedef struct ComdmlState {
    char solver[16];      /* [method] solver, the name solver_pair takes */
    char solver_used[16]; /* who answered the last re-pairing: ip>exact when ip fell back */
    PairingCost cost;     /* [method] cost */
    PairingCapacity allocation; /* [method] allocation: pairs, or helpers shared (solver/shared.h) */
    int rebalance;
    double ip_time_limit;
    ComdmlAgent *agents;  /* (n) */
    int *splits;          /* (n) split each agent trains at this round, 0 = whole model */
    PairingProblem problem;
    double step_flops;
    double solve_ms;
    Collective average;
    int pairs;
    int dropped;          /* this round: partner batches helpers dropped */
    char *online;         /* (n) availability the problem's links reflect; NULL without traces */
    ComdmlPredict predict;
    double history_weight, stay_threshold;
    char *no_help;        /* (n) predicted to leave: no links into it, so it helps no one; NULL: predict = none */
    double *stay;         /* (n) predict = history: estimated probability of staying online through a round */
    double last_start;    /* predict = history: start of the round before, -1 before the first */
    int *flipped;         /* (n) scratch: agents whose availability changed since */
    Stages st;            /* the local step (prune), the clipped updates, the averaging */
} ComdmlState;

/* Who may offload to whom: every pair under a full topology (a dense matrix, so at most
 * COMDML_MAX_DENSE agents), the graph's links otherwise (sparse lists: 10,000+ agents). */
enum { COMDML_MAX_DENSE = 4096 };

static int comdml_validate(const Scenario *sc, HsDiag *diag)
{
    int n = sc->n_agents, group;
    /* the solver's cost table, the activations a pair ships and the helper's FIFO are all
     * of one batch; a pair of two batch sizes would need a cost model of its own */
    if (scenario_batches(sc, &group) != SCENARIO_BATCH_MODEL)
        return scenario_batch_error(sc, group, diag,
                                    "ComDML's pairing solver and split training take [model] batch for every agent "
                                    "(leave batch out of [agents], or set [model] batch)");
    const ComdmlKeys *keys = scenario_method_keys(sc);
    if (keys->allocation == PAIRING_CAPACITY_SHARED) {
        if (keys->cost == PAIRING_COST_EXACT)
            return scenario_key_error(sc, &keys->allocation, diag,
                                      "allocation = shared takes cost = paper (the exact cost models one offloader "
                                      "per helper)");
        if (keys->solver == 0 && n > SHARED_EXACT_MAX_AGENTS)
            return scenario_key_error(sc, &keys->allocation, diag,
                                      "allocation = shared with solver = exact enumerates, up to %d agents (%d "
                                      "given); use solver = ip or greedy",
                                      SHARED_EXACT_MAX_AGENTS, n);
    }
    int traced = 0, battery = 0;
    for (int g = 0; g <= sc->n_groups; g++) {
        traced |= distribution_over_time(&sc->groups[g].availability);
        battery |= !distribution_is_zero(&sc->groups[g].battery);
    }
    /* a prediction needs something that can take an agent away */
    if (keys->predict == COMDML_PREDICT_TRACE && !traced)
        return scenario_key_error(sc, &keys->predict, diag,
                                  "predict = trace looks ahead in the agents' availability over time; no group "
                                  "has one ([agents] availability = trace(FILE) or markov(UP, DOWN))");
    if (keys->predict == COMDML_PREDICT_HISTORY && !traced && !battery)
        return scenario_key_error(sc, &keys->predict, diag,
                                  "predict = history learns who leaves, but every agent stays online (no "
                                  "availability trace, no battery)");
    if (keys->predict != COMDML_PREDICT_HISTORY) {
        if (scenario_key_written(sc, &keys->history_weight)->where[0])
            return scenario_key_error(sc, &keys->history_weight, diag, "applies to predict = history only");
        if (scenario_key_written(sc, &keys->stay_threshold)->where[0])
            return scenario_key_error(sc, &keys->stay_threshold, diag, "applies to predict = history only");
    }
    if (sc->topology == TOPO_FULL && n > COMDML_MAX_DENSE)
        return hs_diag_set(diag, HS_E_INPUT, sc->file, sc->topology_line,
                           "comdml with [topology] graph = full pairs every two of %d agents (a %d x %d "
                           "matrix); above %d agents give a sparse graph, e.g. graph = random-regular",
                           n, n, n, COMDML_MAX_DENSE);
    return HS_OK;
}

static double comdml_link_bandwidth(const ComdmlState *s, const Sim *sim, int i, int j);

static int comdml_links(ComdmlState *s, Sim *sim, int splits)
{
    int n = sim->world.n;
    if (sim->sc->topology == TOPO_FULL) {
        if (pairing_problem_init(&s->problem, n, splits) != HS_OK) return HS_E_NOMEM;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                s->problem.bandwidth[(size_t)i * n + j] = i == j ? INFINITY : comdml_link_bandwidth(s, sim, i, j);
        return HS_OK;
    }
    Topology t;
    int status = scenario_topology(sim->sc, n, &t, sim->diag);
    if (status != HS_OK) return status;
    status = pairing_problem_init_sparse(&s->problem, n, splits, (size_t)t.offsets[n]);
    if (status == HS_OK) {
        for (int i = 0; i <= n; i++) s->problem.link_offsets[i] = t.offsets[i];
        for (int k = 0; k < t.offsets[n]; k++) s->problem.link_to[k] = t.adj[k];
        for (int i = 0; i < n; i++)
            for (int k = t.offsets[i]; k < t.offsets[i + 1]; k++)
                s->problem.link_bandwidth[k] = comdml_link_bandwidth(s, sim, i, t.adj[k]);
    }
    topology_free(&t);
    return status;
}

/* b_ij as the solver should see it: none to or from an agent that is offline, none into
 * an agent predicted to leave (predict); under the exact cost the bandwidth a message
 * gets alone, as the network plays it. */
static double comdml_link_bandwidth(const ComdmlState *s, const Sim *sim, int i, int j)
{
    if (s->online && !(s->online[i] && s->online[j])) return 0;
    /* predicted to leave before its helping would end: no one offloads to it */
    if (s->no_help && s->no_help[j]) return 0;
    /* a pruned agent trains its sub-model alone: it offloads nothing (it may still help) */
    if (s->st.step.prune.on && s->st.step.prune.keep[i] < 1) return 0;
    if (s->cost == PAIRING_COST_EXACT) return engine_message_bandwidth(sim->engine, i, j);
    return world_link_bandwidth(&sim->world, i, j);
}

/* The exact cost's view of the network: how activation messages share the offloader's
 * link, and each agent's latency (max(l_i, l_j) * factor = max(l_i * factor, l_j *
 * factor), so the per-agent values with tcp's factor give every pair's latency).
 * A finite backbone (maxmin) is in each link's bandwidth as the pair's own: exact while
 * one pair transfers at a time, or while the pairs' transfers together fit in it
 * (sum of min(uplink, downlink) over the offloaders <= backbone); otherwise concurrent
 * pairs slow each other down and the prediction is optimistic. */
static void comdml_exact_setup(ComdmlState *s, const Sim *sim)
{
    PairingProblem *p = &s->problem;
    p->cost = s->cost;
    const NetworkSpec *net = &sim->sc->network;
    p->network = net->model == NETWORK_FIFO  ? PAIRING_NETWORK_FIFO
                 : net->uplink == UPLINK_FIFO ? PAIRING_NETWORK_MAXMIN_FIFO
                                              : PAIRING_NETWORK_MAXMIN;
    for (int i = 0; i < p->n; i++) p->latency[i] = engine_message_latency(sim->engine, i, i);
}

/* Rewrites every link of agent i (both directions) after its availability changed. */
static void comdml_relink(ComdmlState *s, const Sim *sim, int i)
{
    PairingProblem *p = &s->problem;
    int n = p->n;
    if (p->bandwidth) {
        for (int j = 0; j < n; j++) {
            if (j == i) continue;
            p->bandwidth[(size_t)i * n + j] = comdml_link_bandwidth(s, sim, i, j);
            p->bandwidth[(size_t)j * n + i] = comdml_link_bandwidth(s, sim, j, i);
        }
        return;
    }
    for (int k = p->link_offsets[i]; k < p->link_offsets[i + 1]; k++) {
        int j = p->link_to[k];
        p->link_bandwidth[k] = comdml_link_bandwidth(s, sim, i, j);
        for (int r = p->link_offsets[j]; r < p->link_offsets[j + 1]; r++)
            if (p->link_to[r] == i) p->link_bandwidth[r] = comdml_link_bandwidth(s, sim, j, i);
    }
}

/* Under the exact cost every link is read again at a rebalance, so a bandwidth trace's
 * value then is what the solver sees (the paper's cost keeps the links of the start).
 * O(n^2) under a full topology, O(n degree^2) over a graph. */
static void comdml_exact_relink(ComdmlState *s, const Sim *sim)
{
    if (s->cost != PAIRING_COST_EXACT) return;
    for (int i = 0; i < s->problem.n; i++) comdml_relink(s, sim, i);
}

/* Takes the agents offline now out of the pairing: no links (so no pair with them) and no
 * batches (so their standalone time does not set the makespan the others are balanced
 * to). Only agents whose availability changed are rewritten: O(n) each under a full
 * topology, O(degree^2) over a graph. */
static void comdml_mask_offline(ComdmlState *s, Sim *sim)
{
    if (s->online == NULL) return;
    int n = sim->world.n, n_flipped = 0;
    for (int i = 0; i < n; i++) {
        char on = (char)engine_agent_online(sim->engine, i, engine_now(sim->engine));
        if (on != s->online[i]) {
            s->online[i] = on;
            s->flipped[n_flipped++] = i;
        }
        if (!on) s->problem.batches[i] = 0;
    }
    for (int k = 0; k < n_flipped; k++) comdml_relink(s, sim, s->flipped[k]);
}

static int comdml_create(Sim *sim, void **state)
{
    ComdmlState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int status;
    const ComdmlKeys *keys = scenario_method_keys(sim->sc);
    /* a choice's text is its word (SOLVER_NAMES), the name the solver takes */
    snprintf(s->solver, sizeof s->solver, "%s", scenario_key_written(sim->sc, &keys->solver)->value);
    s->rebalance = keys->rebalance;
    s->ip_time_limit = keys->ip_time_limit;
    s->cost = (PairingCost)keys->cost;
    s->allocation = (PairingCapacity)keys->allocation;
    int n = sim->world.n, splits = sim->profile.n_blocks;
    s->agents = calloc((size_t)n, sizeof *s->agents);
    s->splits = calloc((size_t)n, sizeof *s->splits);
    if (s->agents == NULL || s->splits == NULL) return HS_E_NOMEM;
    if (s->cost == PAIRING_COST_EXACT)
        for (int i = 0; i < n; i++)
            if (sim_agent_steps(sim, i) > PAIRING_MAX_EXACT_BATCHES) {
                const MethodParam *cost = scenario_key_written(sim->sc, &keys->cost);
                return hs_diag_set(sim->diag, HS_E_INPUT, NULL, 0,
                                   "%s%scost = exact plays every batch out, at most %d per agent and round; agent %d "
                                   "has %d (a larger batch, or cost = paper)",
                                   cost->where, cost->where[0] ? ": " : "", PAIRING_MAX_EXACT_BATCHES, i,
                                   sim_agent_steps(sim, i));
            }
    int *steps = malloc((size_t)n * sizeof *steps);
    if (steps == NULL) return HS_E_NOMEM;
    for (int i = 0; i < n; i++) steps[i] = sim_agent_steps(sim, i);
    StagesSetup setup = {.pruning = &keys->pruning, .steps = steps};
    status = sim_stages_create(sim, &s->st, &setup);
    free(steps);
    if (status != HS_OK) return status;
    if ((status = comdml_links(s, sim, splits)) != HS_OK) return status;
    comdml_exact_setup(s, sim);
    s->step_flops = sim_step_flops(sim, sim->sc->model.batch);
    for (int m = 0; m < splits; m++) {
        /* with [model] profile, the shares of a step's measured time; a step's FLOPs at an
         * agent's compute then take that share of its measured step time */
        const LayerTimes *measured = &sim->sc->profile_times;
        s->problem.fs[m] = measured->n_layers ? layer_times_slow_fraction(measured, m)
                                              : model_profile_slow_fraction(&sim->profile, m);
        s->problem.ff[m] = measured->n_layers ? layer_times_fast_fraction(measured, m)
                                              : model_profile_fast_fraction(&sim->profile, m);
        /* activations plus one 4-byte label per sample */
        s->problem.act[m] = m == 0 ? 0 : sim->sc->model.batch * (model_profile_split_bytes(&sim->profile, m) + 4.0);
    }
    for (int i = 0; i < n; i++) s->agents[i].partner = -1;
    if (engine_has_churn(sim->engine)) {
        s->online = malloc((size_t)n);
        s->flipped = malloc((size_t)n * sizeof *s->flipped);
        if (s->online == NULL || s->flipped == NULL) return HS_E_NOMEM;
        memset(s->online, 1, (size_t)n);
    }
    s->predict = (ComdmlPredict)keys->predict;
    s->history_weight = keys->history_weight;
    s->stay_threshold = keys->stay_threshold;
    s->last_start = -1;
    if (s->predict != COMDML_PREDICT_NONE) {
        s->no_help = calloc((size_t)n, 1);
        s->stay = malloc((size_t)n * sizeof *s->stay);
        if (s->no_help == NULL || s->stay == NULL) return HS_E_NOMEM;
        for (int i = 0; i < n; i++) s->stay[i] = 1; /* before any observation: everyone stays */
    }
    return trainer_setup_local(sim->trainer, 0);
}

static double comdml_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Current speed in batches per second: the agent's markov state counts, so a slowed
 * agent is re-paired at the next rebalance; under the exact cost so does its compute
 * trace's current value (the paper's cost keeps the trace's value at 0, as it always has). */
static double comdml_speed(const ComdmlState *s, const Sim *sim, int i, double step_flops)
{
    const AgentGroupSpec *g = &sim->sc->groups[sim->world.agents[i].group];
    double factor = 1;
    if (g->slowdown.kind == SLOWDOWN_MARKOV && engine_agent_slowed(sim->engine, i)) factor = g->slowdown.factor;
    else if (g->slowdown.kind == SLOWDOWN_PERIODIC) {
        int slow = 0;
        factor = slowdown_factor(&g->slowdown, 0, engine_now(sim->engine), &slow, NULL);
    }
    double compute = s->cost == PAIRING_COST_EXACT ? engine_agent_compute(sim->engine, i) : sim->world.agents[i].compute;
    return compute / (step_flops * factor);
}

/* The solver's answer into the agents: each one's partner (-1: none), role, split (an
 * offloader's; 0 otherwise) and predicted finishing time. */
static void comdml_take_answer(ComdmlState *s, int n, const char *solver, const int *partner, const int *split,
                               const int *role, const double *time)
{
    snprintf(s->solver_used, sizeof s->solver_used, "%s", solver);
    s->pairs = 0;
    for (int i = 0; i < n; i++) {
        ComdmlAgent *a = &s->agents[i];
        int offloads = role[i] == PAIRING_OFFLOADER;
        a->partner = partner[i];
        a->split = offloads ? split[i] : 0;
        a->role = offloads ? SINK_ROLE_OFFLOADER : role[i] == PAIRING_HELPER ? SINK_ROLE_HELPER : SINK_ROLE_ALONE;
        a->predicted = time[i];
        s->splits[i] = a->split;
        s->pairs += offloads;
    }
}

/* allocation = shared: several offloaders per helper. An offloader's partner is its
 * helper; a helper has no one partner (-1): its offloaders are those naming it. */
static int comdml_share_agents(ComdmlState *s, Sim *sim)
{
    int n = sim->world.n;
    SharedResult result;
    if (shared_result_init(&result, n) != HS_OK) return HS_E_NOMEM;
    double start = comdml_wall_ms();
    int status = solver_shared(&s->problem, s->solver, s->ip_time_limit, &result, sim->diag);
    s->solve_ms += comdml_wall_ms() - start;
    /* helper[i] is -1 but for an offloader: a helper has no one partner */
    if (status == HS_OK) comdml_take_answer(s, n, result.solver, result.helper, result.split, result.role, result.time);
    shared_result_free(&result);
    return status;
}

/* One solve of the current problem, by the allocation's solver, into the agents. */
static int comdml_solve(ComdmlState *s, Sim *sim)
{
    int n = sim->world.n;
    if (s->allocation == PAIRING_CAPACITY_SHARED) return comdml_share_agents(s, sim);
    PairingResult result;
    if (pairing_result_init(&result, n) != HS_OK) return HS_E_NOMEM;
    double start = comdml_wall_ms();
    int status = solver_pair(&s->problem, s->solver, s->ip_time_limit, &result, sim->diag);
    s->solve_ms += comdml_wall_ms() - start;
    if (status == HS_OK) comdml_take_answer(s, n, result.solver, result.partner, result.split, result.role, result.time);
    pairing_result_free(&result);
    return status;
}

/* Sets agent i's "helps no one" mark and rewrites its links when the mark changes. */
static void comdml_set_no_help(ComdmlState *s, const Sim *sim, int i, int no_help)
{
    if (s->no_help[i] == (char)no_help) return;
    s->no_help[i] = (char)no_help;
    comdml_relink(s, sim, i);
}

/* predict = history: after each round, every agent's estimate of staying online through a
 * round moves towards what the round showed, stay = (1 - w) stay + w x stayed, where
 * stayed is 1 when the agent was online from the round's start to its end. Past
 * availability only (what the agent lived through), no random draw. */
static void comdml_observe(ComdmlState *s, const Sim *sim)
{
    double now = engine_round_start(sim->engine), before = s->last_start;
    s->last_start = now;
    if (s->predict != COMDML_PREDICT_HISTORY || before < 0) return;
    for (int i = 0; i < sim->world.n; i++) {
        int stayed = engine_agent_online(sim->engine, i, before) && engine_agent_next_offline(sim->engine, i, before) >= now;
        s->stay[i] += s->history_weight * (stayed - s->stay[i]);
    }
}

/* predict = trace: a piece of work reaching a helper's processor at `at`. */
typedef struct ComdmlArrival {
    double at, work;
} ComdmlArrival;

static int comdml_arrival_order(const void *a, const void *b)
{
    double x = ((const ComdmlArrival *)a)->at, y = ((const ComdmlArrival *)b)->at;
    return (x > y) - (x < y);
}

/* predict = trace: when helper j would be through, absences included. Its own epoch is
 * there at the round's start; offloader i's top batch b arrives once i's slow side has
 * done b batches (i's absences pause it, as the engine does) plus one transfer. A
 * work-conserving processor that pauses while offline ends at the latest, over the
 * arrival instants t, of finish(t, the work arriving at t or later): the busy-period
 * bound, which is the play-out's end while transfers do not overlap (the paper's cost
 * leaves out the same tail). Seconds from start; NAN when out of memory. */
static double comdml_helper_end(const ComdmlState *s, const Sim *sim, double start, int j)
{
    const PairingProblem *p = &s->problem;
    int n = sim->world.n;
    size_t count = 1;
    for (int i = 0; i < n; i++)
        if (s->agents[i].role == SINK_ROLE_OFFLOADER && s->agents[i].partner == j) count += (size_t)ceil(p->batches[i]);
    ComdmlArrival *arrival = malloc(count * sizeof *arrival);
    if (arrival == NULL) return NAN;
    size_t k = 0;
    arrival[k++] = (ComdmlArrival){.at = start, .work = p->batches[j] / p->speed[j]};
    for (int i = 0; i < n; i++) {
        const ComdmlAgent *a = &s->agents[i];
        if (a->role != SINK_ROLE_OFFLOADER || a->partner != j) continue;
        double slow = p->fs[a->split] / p->speed[i], top = p->ff[a->split] / p->speed[j];
        double transfer = p->act[a->split] / pairing_link(p, i, j);
        for (int b = 1; b <= (int)ceil(p->batches[i]); b++)
            arrival[k++] = (ComdmlArrival){.at = engine_finish(sim->engine, i, start, b * slow) + transfer,
                                           .work = top};
    }
    qsort(arrival, k, sizeof *arrival, comdml_arrival_order);
    double end = start, later = 0;
    for (size_t r = k; r-- > 0;) {
        later += arrival[r].work;
        end = fmax(end, engine_finish(sim->engine, j, arrival[r].at, later));
    }
    free(arrival);
    return end - start;
}

/* predict = trace: the solver's answer as the availability trace would play it. An
 * alone agent's epoch and an offloader's slow side pause while it is offline; a helper
 * ends at comdml_helper_end. An agent's time is the larger of the solver's and that, an
 * offloader's also its helper's. Returns the largest (NAN when out of memory), and marks
 * in `late` the helpers that would end after the solver's makespan (their absence, not
 * the assignment, would set the round). */
static double comdml_stretched_makespan(const ComdmlState *s, const Sim *sim, double start, char *late)
{
    const PairingProblem *p = &s->problem;
    int n = sim->world.n;
    double *end = calloc((size_t)n, sizeof *end), makespan = 0, stretched = 0;
    if (end == NULL) return NAN;
    for (int i = 0; i < n; i++) makespan = fmax(makespan, s->agents[i].predicted);
    for (int i = 0; i < n; i++) {
        const ComdmlAgent *a = &s->agents[i];
        double work = a->role == SINK_ROLE_OFFLOADER ? p->batches[i] * p->fs[a->split] / p->speed[i]
                                                     : p->batches[i] / p->speed[i];
        if (a->role == SINK_ROLE_HELPER) end[i] = comdml_helper_end(s, sim, start, i);
        else /* an agent with no work (offline, masked) waits for no one */
            end[i] = work > 0 ? engine_finish(sim->engine, i, start, work) - start : 0;
        if (isnan(end[i])) {
            free(end);
            return NAN;
        }
    }
    for (int i = 0; i < n; i++) {
        const ComdmlAgent *a = &s->agents[i];
        double t = fmax(a->predicted, end[i]);
        if (a->role == SINK_ROLE_OFFLOADER) t = fmax(t, end[a->partner]);
        stretched = fmax(stretched, t);
        late[i] = a->role == SINK_ROLE_HELPER && end[i] > makespan;
    }
    free(end);
    return stretched;
}

/* The agents' answer, kept while a better one is sought. */
typedef struct ComdmlAnswer {
    ComdmlAgent *agents;
    int *splits;
    int pairs;
    char solver_used[16];
} ComdmlAnswer;

static void comdml_keep_answer(ComdmlAnswer *to, const ComdmlState *s, int n)
{
    memcpy(to->agents, s->agents, (size_t)n * sizeof *s->agents);
    memcpy(to->splits, s->splits, (size_t)n * sizeof *s->splits);
    to->pairs = s->pairs;
    memcpy(to->solver_used, s->solver_used, sizeof to->solver_used);
}

static void comdml_restore_answer(ComdmlState *s, const ComdmlAnswer *from, int n)
{
    memcpy(s->agents, from->agents, (size_t)n * sizeof *s->agents);
    memcpy(s->splits, from->splits, (size_t)n * sizeof *s->splits);
    s->pairs = from->pairs;
    memcpy(s->solver_used, from->solver_used, sizeof s->solver_used);
}

/* Proactive allocation (predict = trace): solve, stretch the answer by the trace
 * (comdml_stretched_makespan); while some helper's absence would end its work after the
 * solver's makespan, take those helpers out of the helpers and solve again (each pass
 * removes one at least: at most n passes). The answer kept is the one whose stretched
 * makespan is least, the first of equals (so an absence the helper's slack absorbs costs
 * no helper). Offloaders keep their links: an absent offloader's batches are dropped by
 * its helper and it finishes its bottom side when back. */
static int comdml_solve_ahead(ComdmlState *s, Sim *sim)
{
    int n = sim->world.n, status;
    double start = engine_round_start(sim->engine), best = INFINITY;
    ComdmlAnswer kept = {.agents = malloc((size_t)n * sizeof *kept.agents), .splits = malloc((size_t)n * sizeof *kept.splits)};
    char *late = malloc((size_t)n);
    if (kept.agents == NULL || kept.splits == NULL || late == NULL) {
        status = HS_E_NOMEM;
        goto out;
    }
    for (int i = 0; i < n; i++) comdml_set_no_help(s, sim, i, 0);
    for (;;) {
        if ((status = comdml_solve(s, sim)) != HS_OK) goto out;
        double stretched = comdml_stretched_makespan(s, sim, start, late);
        if (isnan(stretched)) {
            status = HS_E_NOMEM;
            goto out;
        }
        if (stretched < best) {
            best = stretched;
            comdml_keep_answer(&kept, s, n);
        }
        int excluded = 0;
        for (int j = 0; j < n; j++)
            if (late[j]) {
                comdml_set_no_help(s, sim, j, 1);
                excluded++;
            }
        if (excluded == 0) break;
    }
    comdml_restore_answer(s, &kept, n);
out:
    free(kept.agents);
    free(kept.splits);
    free(late);
    return status;
}

static int comdml_pair_agents(ComdmlState *s, Sim *sim)
{
    int n = sim->world.n;
    for (int i = 0; i < n; i++) {
        s->problem.batches[i] = sim_agent_steps(sim, i);
        s->problem.speed[i] = comdml_speed(s, sim, i, local_step_flops(&s->st.step, i));
    }
    comdml_mask_offline(s, sim);
    comdml_exact_relink(s, sim);
    s->solve_ms = 0;
    if (s->predict == COMDML_PREDICT_TRACE) return comdml_solve_ahead(s, sim);
    if (s->predict == COMDML_PREDICT_HISTORY)
        for (int i = 0; i < n; i++) comdml_set_no_help(s, sim, i, s->stay[i] < s->stay_threshold);
    return comdml_solve(s, sim);
}

static int comdml_finish_agent(ComdmlState *s, Sim *sim, int i)
{
    s->agents[i].done = 1;
    if (s->st.step.prune.on) return prune_shells_join(sim->engine, &s->st.step.prune, i);
    return engine_collective_join(sim->engine, &s->average, i);
}

static int comdml_round_begin(void *state, Sim *sim, int round)
{
    ComdmlState *s = state;
    int status;
    comdml_observe(s, sim);
    if (round % s->rebalance == 0 && (status = comdml_pair_agents(s, sim)) != HS_OK) return status;
    /* the averaging: one all-reduce, or nested shells of the sub-models (prune) */
    if (s->st.step.prune.on) {
        if (prune_shells_begin(&s->st.step.prune, NULL, sim->world.n, 1, COMDML_AVERAGED) != HS_OK)
            return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    } else {
        engine_collective_begin(&s->average, NULL, sim->world.n, sim_model_bytes(sim), 1, COMDML_AVERAGED, 0);
    }
    if ((status = outgoing_period_begin(&s->st.out, s->st.agg.everyone, sim->world.n)) != HS_OK) return status;
    s->dropped = 0;
    if (engine_has_churn(sim->engine)) sim->round_extra = 0;
    for (int i = 0; i < sim->world.n; i++) {
        ComdmlAgent *a = &s->agents[i];
        engine_set_role(sim->engine, i, a->role);
        a->done = 0;
        a->top_queued = 0;
        a->released = 0;
        a->cut = 0;
        a->check_at = -1;
        a->own_left = sim_agent_steps(sim, i);
        a->top_left = a->role == SINK_ROLE_HELPER && a->partner >= 0 ? sim_agent_steps(sim, a->partner) : 0;
        a->top_mine = a->role == SINK_ROLE_OFFLOADER ? sim_agent_steps(sim, i) : 0;
        /* All of an agent's own work is booked now, so its processor's FIFO puts the
         * partner's activations after it: "the helper first does its own work". */
        if (a->role == SINK_ROLE_OFFLOADER && (status = trainer_split_begin(sim->trainer, i, a->split)) != HS_OK) return status;
        double flops = a->role == SINK_ROLE_OFFLOADER ? s->problem.fs[a->split] * s->step_flops
                                                      : local_step_flops(&s->st.step, i);
        int kind = a->role == SINK_ROLE_OFFLOADER ? COMDML_SLOW_STEP : COMDML_OWN_STEP;
        for (int k = 0; k < a->own_left; k++)
            if ((status = engine_compute(sim->engine, i, flops, kind, 0, NULL)) != HS_OK) return status;
    }
    /* a shared helper (no one partner) trains the batches of every offloader naming it */
    if (s->allocation == PAIRING_CAPACITY_SHARED)
        for (int i = 0; i < sim->world.n; i++)
            if (s->agents[i].role == SINK_ROLE_OFFLOADER) s->agents[s->agents[i].partner].top_left += sim_agent_steps(sim, i);
    return HS_OK;
}

static int comdml_report_pairing(ComdmlState *s, Sim *sim, int slow, int fast)
{
    SinkPairing row = {.round = engine_round(sim->engine), .slow = slow, .fast = fast, .split = s->agents[slow].split,
                       .predicted_s = s->agents[slow].predicted,
                       .actual_s = engine_now(sim->engine) - engine_round_start(sim->engine), .solver = s->solver_used,
                       .solve_ms = s->solve_ms};
    return engine_report_pairing(sim->engine, &row);
}

/* The helper stops waiting for its offline partner: what has not been trained is dropped. */
static int comdml_drop_partner(ComdmlState *s, Sim *sim, int j)
{
    ComdmlAgent *a = &s->agents[j];
    s->dropped += a->top_left;
    sim->round_extra = s->dropped;
    a->top_left = 0;
    a->released = 1;
    return comdml_report_pairing(s, sim, a->partner, j);
}

/* The helper waits for an online partner; if the partner leaves while it still waits,
 * a look at that moment lets it stop then rather than at the partner's return. */
static int comdml_watch_partner(ComdmlState *s, Sim *sim, int j)
{
    ComdmlAgent *a = &s->agents[j];
    double leaves = engine_agent_next_offline(sim->engine, a->partner, engine_now(sim->engine));
    if (!isfinite(leaves) || leaves == a->check_at) return HS_OK;
    a->check_at = leaves;
    return engine_schedule(sim->engine, leaves, COMDML_PARTNER_CHECK, j, engine_round(sim->engine));
}

/* A shared helper with nothing queued: the pair rule for each of its offloaders. Those
 * offline now lose the batches it has not trained (dropped, their pairings rows written
 * now, and they send no more); for those online with batches to come it looks again when
 * the first of them leaves. O(n) per look, only when its processor has run dry. */
static int comdml_shared_wait(ComdmlState *s, Sim *sim, int j)
{
    ComdmlAgent *a = &s->agents[j];
    double now = engine_now(sim->engine), leaves = INFINITY;
    int status;
    for (int i = 0; i < sim->world.n; i++) {
        ComdmlAgent *o = &s->agents[i];
        if (o->role != SINK_ROLE_OFFLOADER || o->partner != j || o->top_mine == 0) continue;
        if (engine_agent_online(sim->engine, i, now)) {
            leaves = fmin(leaves, engine_agent_next_offline(sim->engine, i, now));
            continue;
        }
        s->dropped += o->top_mine;
        sim->round_extra = s->dropped;
        a->top_left -= o->top_mine;
        o->top_mine = 0;
        o->cut = 1;
        if ((status = comdml_report_pairing(s, sim, i, j)) != HS_OK) return status;
    }
    if (a->top_left == 0 || !isfinite(leaves) || leaves == a->check_at) return HS_OK;
    a->check_at = leaves;
    return engine_schedule(sim->engine, leaves, COMDML_PARTNER_CHECK, j, engine_round(sim->engine));
}

/* Called whenever the helper's processor may have run dry: it finishes once its own work
 * and its partner's batches are done, or drops the rest when the partner is offline. */
static int comdml_helper_check(ComdmlState *s, Sim *sim, int j)
{
    ComdmlAgent *a = &s->agents[j];
    if (a->done || a->own_left > 0 || a->top_queued > 0) return HS_OK;
    if (a->top_left > 0 && a->partner < 0) { /* shared */
        int status = comdml_shared_wait(s, sim, j);
        if (status != HS_OK || a->top_left > 0) return status;
    } else if (a->top_left > 0) {
        if (engine_agent_online(sim->engine, a->partner, engine_now(sim->engine)))
            return comdml_watch_partner(s, sim, j);
        int status = comdml_drop_partner(s, sim, j);
        if (status != HS_OK) return status;
    }
    return comdml_finish_agent(s, sim, j);
}

/* Activations carry their round. The end-of-round all-reduce outlasts any link's latency,
 * so none should arrive after its round ends; the tag keeps it that way if the timing
 * changes. A dropped partner's late batches are discarded by `released`. */
static int64_t comdml_activation_tag(const Sim *sim, int slow)
{
    return (int64_t)engine_round(sim->engine) * sim->world.n + slow;
}

static int comdml_on_activations(ComdmlState *s, Sim *sim, int j, int64_t tag)
{
    ComdmlAgent *a = &s->agents[j];
    int slow = (int)(tag % sim->world.n);
    int mine = a->partner >= 0 ? a->partner == slow
                               : s->agents[slow].partner == j && !s->agents[slow].cut; /* pairs : shared */
    if (tag / sim->world.n != engine_round(sim->engine) || a->released || !mine)
        return HS_OK; /* dropped */
    /* queued on the helper's processor behind its own work (FIFO) */
    a->top_queued++;
    double flops = s->problem.ff[s->agents[slow].split] * s->step_flops;
    return engine_compute(sim->engine, j, flops, COMDML_TOP_STEP, slow, NULL);
}

static int comdml_on_event(void *state, Sim *sim, const Event *ev)
{
    ComdmlState *s = state;
    int i = ev->agent, status;
    ComdmlAgent *a = i >= 0 ? &s->agents[i] : NULL;
    switch (ev->kind) {
    case COMDML_OWN_STEP:
        if ((status = local_step_run(&s->st.step, i)) != HS_OK) return status;
        if (--a->own_left > 0) return HS_OK;
        if (a->role == SINK_ROLE_HELPER) return comdml_helper_check(s, sim, i);
        return comdml_finish_agent(s, sim, i);
    case COMDML_SLOW_STEP:
        if ((status = trainer_split_bottom_step(sim->trainer, i, a->split)) != HS_OK) return status;
        /* a released helper no longer listens: the rest trains on the local loss only */
        if (!s->agents[a->partner].released && !a->cut &&
            (status = engine_send(sim->engine, i, a->partner, s->problem.act[a->split], COMDML_ACTIVATIONS,
                                  comdml_activation_tag(sim, i))) != HS_OK)
            return status;
        return --a->own_left == 0 ? comdml_finish_agent(s, sim, i) : HS_OK;
    case COMDML_ACTIVATIONS:
        return comdml_on_activations(s, sim, i, ev->data);
    case COMDML_TOP_STEP: {
        int slow = (int)ev->data;
        if ((status = trainer_split_top_step(sim->trainer, slow, s->agents[slow].split)) != HS_OK) return status;
        a->top_queued--;
        /* a pair's row when the helper is through; a shared helper's, per offloader */
        int last = --a->top_left == 0;
        if (--s->agents[slow].top_mine == 0 && a->partner < 0) last = 1;
        if (last && (status = comdml_report_pairing(s, sim, slow, i)) != HS_OK) return status;
        return comdml_helper_check(s, sim, i);
    }
    case COMDML_PARTNER_CHECK:
        return ev->data == engine_round(sim->engine) ? comdml_helper_check(s, sim, i) : HS_OK;
    default: /* COMDML_AVERAGED */
        if (s->st.step.prune.on && !prune_shells_done(&s->st.step.prune)) return HS_OK;
        for (int k = 0; k < sim->world.n; k++)
            if (s->agents[k].role == SINK_ROLE_OFFLOADER &&
                (status = trainer_split_end(sim->trainer, k, s->agents[k].split)) != HS_OK)
                return status;
        /* clip = update: each agent's update over the round, its helper's top blocks included */
        for (int k = 0; k < sim->world.n; k++)
            if ((status = outgoing_clip_own(&s->st.out, k)) != HS_OK) return status;
        if ((status = aggregate_split(&s->st.agg, &s->st.out, s->splits, engine_round(sim->engine))) != HS_OK) return status;
        engine_end_round(sim->engine);
        return HS_OK;
    }
}

static void comdml_destroy(void *state)
{
    ComdmlState *s = state;
    if (s == NULL) return;
    free(s->agents);
    free(s->splits);
    free(s->online);
    free(s->flipped);
    free(s->no_help);
    free(s->stay);
    stages_free(&s->st);
    pairing_problem_free(&s->problem);
    free(s);
}

static const SchemaKey comdml_keys[] = {
    METHOD_KEY(ComdmlKeys, solver, "exact", "pairing solver: exact (minimum makespan), ip (lp_solve), greedy (the paper's)",
     .type = SCHEMA_CHOICE, .choices = SOLVER_NAMES),
    METHOD_KEY(ComdmlKeys, rebalance, "1", "rounds between re-pairings", .type = SCHEMA_INT, .min = 1, .max = 1000000),
    METHOD_KEY(ComdmlKeys, ip_time_limit, "10", "how long lp_solve may take before the exact solver is used instead",
     .type = SCHEMA_TIME, .unit = UNIT_TIME, .min = 0, .max = 86400, .flags = SCHEMA_OPEN_MIN),
    METHOD_KEY(ComdmlKeys, cost, "paper", "what the solver minimises: paper (the published T_i(j,m)) or exact (the round as played "
     "out here: latency, shared link, pipeline tail; predicted_s = actual_s without randomness)",
     .type = SCHEMA_CHOICE, .choices = PAIRING_COST_NAMES),
    METHOD_KEY(ComdmlKeys, allocation, "pairs", "pairs (one offloader per helper, ComDML's) or shared (a helper serves "
     "several offloaders with shares of its compute and link, after \"Decentralized Proactive Model Offloading and "
     "Resource Allocation for Split and Federated Learning\"; cost = paper; "
     "docs/methods/proactive-notes.md)",
     .type = SCHEMA_CHOICE, .choices = PAIRING_CAPACITY_NAMES, .flags = SCHEMA_OMIT_DEFAULT),
    METHOD_KEY(ComdmlKeys, predict, "none", "how a re-pairing foresees absences: none (who is online at the round's "
     "start), trace (looks ahead in the availability traces: a helper that leaves before its offloaded work would "
     "end helps no one), history (an agent whose estimated chance of staying online through a round is below "
     "stay_threshold helps no one); docs/methods/proactive-notes.md",
     .type = SCHEMA_CHOICE, .choices = COMDML_PREDICT_NAMES, .flags = SCHEMA_OMIT_DEFAULT),
    METHOD_KEY(ComdmlKeys, history_weight, "0.5", "predict = history: weight of the newest round in each agent's "
     "estimate of staying online (an exponentially weighted average of the rounds it stayed online throughout)",
     .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OPEN_MIN | SCHEMA_OMIT_DEFAULT),
    METHOD_KEY(ComdmlKeys, stay_threshold, "0.5", "predict = history: an agent whose estimate is below it helps no one "
     "(0: everyone may help, 1: only agents that never left)",
     .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OMIT_DEFAULT),
    PRUNE_METHOD_KEYS(ComdmlKeys, pruning.),
    {0},
};

static const MethodStages comdml_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps; an offloader the bottom of its split on a local loss, its helper the top",
    .outgoing = "cut activations and labels to the helper; its model to the all-reduce",
    .aggregate = "all-reduce sample-weighted mean, each block from the side that trained it",
    .refuses = {
        [FEATURE_COMPRESSION] = "ComDML averages each block from the side that trained it and each auxiliary head "
                                "among the agents of its split: compressed changes around one common point are "
                                "not modelled",
        [FEATURE_PRIVACY_SAMPLE] = "an offloader sends its cut activations and labels to its helper, which no per-sample clipping covers",
        [FEATURE_FREEZE] = "progressive freezing trains one block at a time, while ComDML's offloaders train blocks "
                           "1..m on a local loss and their helpers blocks m+1..L: the two cut the model differently",
        [FEATURE_DRIFT_FEDPROX] = "an offloader's step is split with its helper (the helper trains the top blocks on the cut activations), which the corrected step of one agent does not cover",
        [FEATURE_DRIFT_SCAFFOLD] = "an offloader's step is split with its helper (the helper trains the top blocks on the cut activations), which the corrected step of one agent does not cover",
    },
};

static const MethodExtra comdml_extras[] = {
    {.meaning = "batches of offline offloaders their helpers dropped (availability traces)"},
    {0},
};

const MethodOps method_comdml = {
    .name = "comdml",
    .summary = "ComDML: slow agents offload their model's tail to fast agents (local-loss split training)",
    .keys = comdml_keys,
    .keys_size = sizeof(ComdmlKeys),
    .capabilities = METHOD_LOSSY_RINGS | METHOD_USES_TOPOLOGY | METHOD_SPLITS_MODEL,
    .stages = &comdml_stages,
    .extra = comdml_extras,
    .validate = comdml_validate,
    .create = comdml_create,
    .round_begin = comdml_round_begin,
    .on_event = comdml_on_event,
    .destroy = comdml_destroy,
};
