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
 * Prediction vs play-out: the solver's T_i(j,m) ignores latency and the FIFO queueing of
 * activations behind the helper's own work is exact only when the activations arrive
 * before the helper is free; `pairings` stores both times. */
#include "sim/engine.h"
#include "sim/topology.h"
#include "sim/trainer.h"
#include "solver/pairing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { COMDML_OWN_STEP = ENGINE_EVENT_METHOD, COMDML_SLOW_STEP, COMDML_ACTIVATIONS, COMDML_TOP_STEP,
       COMDML_AVERAGED };

static const char *const comdml_solvers = "exact|ip|greedy";

typedef struct ComdmlAgent {
    int partner;       /* helper of an offloader, offloader of a helper, -1 alone */
    int split;         /* offloader's split, 0 otherwise */
    SinkRole role;
    int own_left;      /* own full steps (alone, helper) or slow-side steps (offloader) left */
    int top_left;      /* helper: top batches of its partner still to train */
    int done;          /* finished all its work this round */
    double predicted;  /* solver's time for its pair or itself */
} ComdmlAgent;

typedef struct ComdmlState {
    int solver_index;
    int rebalance;
    double ip_time_limit;
    ComdmlAgent *agents;  /* (n) */
    int *splits;          /* (n) split each agent trains at this round, 0 = whole model */
    PairingProblem problem;
    double step_flops;
    double solve_ms;
    Collective average;
    int pairs;
} ComdmlState;

/* Who may offload to whom: every pair under a full topology (a dense matrix, so at most
 * COMDML_MAX_DENSE agents), the graph's links otherwise (sparse lists: 10,000+ agents). */
enum { COMDML_MAX_DENSE = 4096 };

static int comdml_links(ComdmlState *s, Engine *e, int splits)
{
    int n = e->world.n;
    if (e->sc->topology == TOPO_FULL) {
        if (n > COMDML_MAX_DENSE)
            return hs_diag_set(e->diag, HS_E_INPUT, e->sc->file, 0,
                               "comdml with [topology] graph = full pairs every two of %d agents (a %d x %d "
                               "matrix); above %d agents give a sparse graph, e.g. graph = random-regular",
                               n, n, n, COMDML_MAX_DENSE);
        if (pairing_problem_init(&s->problem, n, splits) != HS_OK) return HS_E_NOMEM;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                s->problem.bandwidth[(size_t)i * n + j] = i == j ? INFINITY : world_link_bandwidth(&e->world, i, j);
        return HS_OK;
    }
    Topology t;
    int status = topology_build(e->sc, n, &t, e->diag);
    if (status != HS_OK) return status;
    status = pairing_problem_init_sparse(&s->problem, n, splits, (size_t)t.offsets[n]);
    if (status == HS_OK) {
        for (int i = 0; i <= n; i++) s->problem.link_offsets[i] = t.offsets[i];
        for (int k = 0; k < t.offsets[n]; k++) s->problem.link_to[k] = t.adj[k];
        for (int i = 0; i < n; i++)
            for (int k = t.offsets[i]; k < t.offsets[i + 1]; k++)
                s->problem.link_bandwidth[k] = world_link_bandwidth(&e->world, i, t.adj[k]);
    }
    topology_free(&t);
    return status;
}

static int comdml_create(Engine *e, void **state)
{
    ComdmlState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int status;
    if ((status = scenario_param_choice(e->sc, "solver", comdml_solvers, &s->solver_index, e->diag)) ||
        (status = scenario_param_int(e->sc, "rebalance", &s->rebalance, e->diag)) ||
        (status = scenario_param_double(e->sc, "ip_time_limit", &s->ip_time_limit, e->diag)))
        return status;
    if (s->rebalance < 1)
        return hs_diag_set(e->diag, HS_E_INPUT, e->sc->file, scenario_param(e->sc, "rebalance")->line,
                           "[method] rebalance: must be at least 1 round");
    int n = e->world.n, splits = e->profile.n_blocks;
    s->agents = calloc((size_t)n, sizeof *s->agents);
    s->splits = calloc((size_t)n, sizeof *s->splits);
    if (s->agents == NULL || s->splits == NULL) return HS_E_NOMEM;
    if ((status = comdml_links(s, e, splits)) != HS_OK) return status;
    s->step_flops = engine_step_flops(e, e->sc->model.batch);
    for (int m = 0; m < splits; m++) {
        s->problem.fs[m] = model_profile_slow_fraction(&e->profile, m);
        s->problem.ff[m] = model_profile_fast_fraction(&e->profile, m);
        /* activations plus one 4-byte label per sample */
        s->problem.act[m] = m == 0 ? 0 : e->sc->model.batch * (model_profile_split_bytes(&e->profile, m) + 4.0);
    }
    for (int i = 0; i < n; i++) s->agents[i].partner = -1;
    return trainer_setup_local(e, 0);
}

static double comdml_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Current speed in batches per second: the agent's markov state counts, so a slowed
 * agent is re-paired at the next rebalance. */
static double comdml_speed(const Engine *e, int i, double step_flops)
{
    const AgentGroupSpec *g = &e->sc->groups[e->world.agents[i].group];
    double factor = 1;
    if (g->slowdown.kind == SLOWDOWN_MARKOV && e->clocks[i].slow) factor = g->slowdown.factor;
    else if (g->slowdown.kind == SLOWDOWN_PERIODIC) {
        int slow = 0;
        factor = slowdown_factor(&g->slowdown, 0, e->now, &slow, NULL);
    }
    return e->world.agents[i].compute / (step_flops * factor);
}

static int comdml_repair(ComdmlState *s, Engine *e)
{
    int n = e->world.n;
    for (int i = 0; i < n; i++) {
        s->problem.batches[i] = engine_agent_steps(e, i);
        s->problem.speed[i] = comdml_speed(e, i, s->step_flops);
    }
    PairingResult result;
    if (pairing_result_init(&result, n) != HS_OK) return HS_E_NOMEM;
    const char *names[] = {"exact", "ip", "greedy"};
    double start = comdml_wall_ms();
    int status = solver_pair(&s->problem, names[s->solver_index], s->ip_time_limit, &result, e->diag);
    s->solve_ms = comdml_wall_ms() - start;
    if (status == HS_OK) {
        s->pairs = 0;
        for (int i = 0; i < n; i++) {
            ComdmlAgent *a = &s->agents[i];
            a->partner = result.partner[i];
            a->split = result.role[i] == 1 ? result.split[i] : 0;
            a->role = result.role[i] == 1 ? SINK_ROLE_OFFLOADER : result.role[i] == 2 ? SINK_ROLE_HELPER : SINK_ROLE_ALONE;
            a->predicted = result.time[i];
            s->splits[i] = a->split;
            s->pairs += result.role[i] == 1;
        }
    }
    pairing_result_free(&result);
    return status;
}

static void comdml_finish_agent(ComdmlState *s, Engine *e, int i)
{
    s->agents[i].done = 1;
    engine_collective_join(e, &s->average, i);
}

static int comdml_round_begin(void *state, Engine *e, int round)
{
    ComdmlState *s = state;
    int status;
    if (round % s->rebalance == 0 && (status = comdml_repair(s, e)) != HS_OK) return status;
    engine_collective_begin(&s->average, NULL, e->world.n, engine_model_bytes(e), 1, COMDML_AVERAGED, 0);
    for (int i = 0; i < e->world.n; i++) {
        ComdmlAgent *a = &s->agents[i];
        engine_set_role(e, i, a->role);
        a->done = 0;
        a->own_left = engine_agent_steps(e, i);
        a->top_left = a->role == SINK_ROLE_HELPER ? engine_agent_steps(e, a->partner) : 0;
        /* All of an agent's own work is booked now, so its processor's FIFO puts the
         * partner's activations after it: "the helper first does its own work". */
        if (a->role == SINK_ROLE_OFFLOADER && (status = trainer_split_begin(e, i, a->split)) != HS_OK) return status;
        double flops = a->role == SINK_ROLE_OFFLOADER ? s->problem.fs[a->split] * s->step_flops : s->step_flops;
        int kind = a->role == SINK_ROLE_OFFLOADER ? COMDML_SLOW_STEP : COMDML_OWN_STEP;
        for (int k = 0; k < a->own_left; k++) engine_compute(e, i, flops, kind, 0);
    }
    return HS_OK;
}

static int comdml_helper_check(ComdmlState *s, Engine *e, int j)
{
    ComdmlAgent *a = &s->agents[j];
    if (a->own_left == 0 && a->top_left == 0 && !a->done) comdml_finish_agent(s, e, j);
    return HS_OK;
}

static int comdml_on_event(void *state, Engine *e, const Event *ev)
{
    ComdmlState *s = state;
    int i = ev->agent, status;
    ComdmlAgent *a = i >= 0 ? &s->agents[i] : NULL;
    switch (ev->kind) {
    case COMDML_OWN_STEP:
        if ((status = trainer_local_step(e, i)) != HS_OK) return status;
        if (--a->own_left > 0) return HS_OK;
        if (a->role == SINK_ROLE_HELPER) return comdml_helper_check(s, e, i);
        comdml_finish_agent(s, e, i);
        return HS_OK;
    case COMDML_SLOW_STEP:
        if ((status = trainer_split_bottom_step(e, i, a->split)) != HS_OK) return status;
        engine_send(e, i, a->partner, s->problem.act[a->split], COMDML_ACTIVATIONS, i);
        if (--a->own_left == 0) comdml_finish_agent(s, e, i);
        return HS_OK;
    case COMDML_ACTIVATIONS: {
        /* queued on the helper's processor behind its own work (FIFO) */
        int slow = (int)ev->data;
        engine_compute(e, i, s->problem.ff[s->agents[slow].split] * s->step_flops, COMDML_TOP_STEP, slow);
        return HS_OK;
    }
    case COMDML_TOP_STEP: {
        int slow = (int)ev->data;
        if ((status = trainer_split_top_step(e, slow, s->agents[slow].split)) != HS_OK) return status;
        if (--a->top_left == 0) {
            SinkPairing row = {.round = e->round, .slow = slow, .fast = i, .split = s->agents[slow].split,
                               .predicted_s = s->agents[slow].predicted, .actual_s = e->now - e->round_start,
                               .solver = (const char *[]){"exact", "ip", "greedy"}[s->solver_index],
                               .solve_ms = s->solve_ms};
            if ((status = engine_report_pairing(e, &row)) != HS_OK) return status;
        }
        return comdml_helper_check(s, e, i);
    }
    default: /* COMDML_AVERAGED */
        for (int k = 0; k < e->world.n; k++)
            if (s->agents[k].role == SINK_ROLE_OFFLOADER &&
                (status = trainer_split_end(e, k, s->agents[k].split)) != HS_OK)
                return status;
        if ((status = trainer_average_split(e, s->splits)) != HS_OK) return status;
        engine_end_round(e);
        return HS_OK;
    }
}

static void comdml_destroy(void *state)
{
    ComdmlState *s = state;
    if (s == NULL) return;
    free(s->agents);
    free(s->splits);
    pairing_problem_free(&s->problem);
    free(s);
}

static const MethodKey comdml_keys[] = {
    {"solver", "exact", "pairing solver: exact (minimum makespan), ip (lp_solve), greedy (the paper's)"},
    {"rebalance", "1", "rounds between re-pairings"},
    {"ip_time_limit", "10", "seconds lp_solve may take before the exact solver is used instead"},
    {NULL, NULL, NULL},
};

const MethodOps method_comdml = {
    .name = "comdml",
    .summary = "ComDML: slow agents offload their model's tail to fast agents (local-loss split training)",
    .keys = comdml_keys,
    .create = comdml_create,
    .round_begin = comdml_round_begin,
    .on_event = comdml_on_event,
    .destroy = comdml_destroy,
};
