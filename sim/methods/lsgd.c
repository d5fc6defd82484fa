/* lsgd.c — Leader SGD (Teng, Gao, Chalus, Choromanska, Goldfarb, Weller, "Leader Stochastic
 * Gradient Descent for Distributed Training of Deep Learning Models", NeurIPS 2019).
 * Every agent trains its own model; every `period` (τ) local steps the agents elect a
 * leader, the agent whose last batch had the lowest loss, the leader's model reaches every
 * agent, and each other agent is pulled toward it:
 *     x_i <- x_i - pull (x_i - x_leader)
 * (the leader stays where it is). Between elections each agent takes plain local steps.
 * That is the authors' synchronous implementation (github.com/yunfei-teng/LSGD: at each
 * communication the workers all-gather (rank, loss, lr), the best one broadcasts, and
 * each worker mixes x <- (1 - c) x + c x_leader), i.e. the paper's update
 * x <- x - η ∇f(x) - λ (x - x̃) with the pull applied at the communication steps only, where
 * the leader's x̃ is known. A round is a global epoch of S = ceil(mean n_i / batch) steps,
 * so the last period of a round may be shorter (as localsgd's local_steps = H).
 *
 * Timing, per period: each agent's steps from the cost model; then the election, a ring
 * all-gather of every agent's (index, loss) — 8 bytes, two float32 as the authors' message
 * of floats — over the [network] model (collective.h's RingGather: N-1 hops, so its time is
 * latency-bound); then the leader's model reaches everyone, timed as a blocking ring
 * all-reduce of the model's bytes (the non-leaders contribute zeros, and the sum is the
 * leader's model). rounds.extra holds the last elected (global) leader (train mode; NaN in
 * timing mode, which computes no losses).
 *
 * Where hetsim deviates from the paper, and why:
 *  - The broadcast is an all-reduce, not a broadcast from the leader's node. Who leads
 *    depends on the trained values, and hetsim's timing mode must time a run without
 *    training (train and timing modes give the same clock, as for every method; freeze's
 *    fixed pace is the same trade). A broadcast rooted at the leader would make the clock
 *    depend on the leader's links. The ring all-reduce of the masked models is a real way
 *    to broadcast from a root chosen by data, and its time is the same whoever leads; it
 *    moves 2(N-1)/N of the model per agent where a pipelined ring broadcast moves about
 *    one model per link, so hetsim's LSGD does not show the paper's point (iv), the
 *    smaller communication than averaging: it costs what localsgd's averaging costs plus
 *    the election.
 *  - The multi-leader form (leaders = groups) takes hetsim's [agents] groups as the
 *    paper's nodes: at every election each group of two or more gets its own leader's
 *    model (the groups' ring all-reduces run at once) and its members are pulled by
 *    group_pull (λ); every global_every-th election (τ_G = global_every τ) the global
 *    leader's model then goes to all and everyone is pulled by pull (λ_G), in that order,
 *    as the authors' code does. The global leader leads its group too, so the group pull
 *    does not move it. The paper's groups share a machine (PCIe within a node, TCP between
 *    them); hetsim has no faster link inside a group: a group's ring runs on its members'
 *    own links, so the local leaders cost what their rings cost on the [network] model.
 *    The election stays one all-gather over all agents (the authors' code gathers every
 *    worker's loss every time).
 *  - "Recent loss" is the loss of the agent's last training batch before the election
 *    (the authors' local_train_loss), not an evaluation on held-out data; ties go to the
 *    lowest agent index.
 *  - The asynchronous variant of the paper (workers ask a server whether to communicate) is
 *    not modelled: every agent takes part in every election.
 *
 * Features (sim/stages/): the local step is the stage's (privacy.sample runs: every step a
 * DP-SGD step). Refused: compression (the leader's model is sent, not a change against a
 * point every agent holds), prune and freeze (see lsgd_stages), and the features that need
 * an aggregation (nothing is combined: one model is copied and pulled toward). */
#include "sim/methods/method.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>

enum { LSGD_STEPPED = ENGINE_EVENT_METHOD, LSGD_LOSS, LSGD_GROUP, LSGD_BROADCAST };

/* The election's message per agent: its index and its loss, two float32. */
#define LSGD_ELECTION_BYTES 8.0

enum { LSGD_ONE_LEADER = 0, LSGD_GROUP_LEADERS = 1 }; /* leaders' choices */
typedef struct LsgdKeys {
    int period;        /* local steps between elections (τ) */
    double pull;       /* toward the global leader (λ_G; λ with one leader), in [0, 1] */
    int leaders;       /* LSGD_ONE_LEADER or LSGD_GROUP_LEADERS */
    double group_pull; /* toward the group's leader (λ) */
    int global_every;  /* elections per global one (τ_G / τ) */
} LsgdKeys;

typedef struct LsgdState {
    int period;
    double pull;
    int groups;       /* leaders = groups */
    double group_pull;
    int global_every;
    long elections;   /* so far in the run */
    int n_groups;
    int *group_members; /* (n) the agents by group, each group's in index order */
    int *group_first;   /* (n_groups + 1) where group g's agents start in group_members */
    int *group_leader;  /* (n_groups) this election's, -1 in timing mode */
    Collective *group_ring; /* (n_groups) */
    int groups_pending; /* group broadcasts not done yet */
    int round_steps;  /* S */
    int period_done;  /* steps of this round before the current period */
    int *remaining;   /* (n) steps left in the current period */
    RingGather election;
    Collective broadcast;
    int leader;       /* the last elected, -1 in timing mode */
    Stages st;
} LsgdState;

/* The agents by [agents] group (the paper's nodes), each group's in index order. */
static int lsgd_groups_init(LsgdState *s, Sim *sim)
{
    int n = sim->world.n, g_count = sim->sc->n_groups;
    s->n_groups = g_count;
    s->group_members = malloc((size_t)n * sizeof *s->group_members);
    s->group_first = calloc((size_t)g_count + 1, sizeof *s->group_first);
    s->group_leader = malloc((size_t)g_count * sizeof *s->group_leader);
    s->group_ring = calloc((size_t)g_count, sizeof *s->group_ring);
    if (!s->group_members || !s->group_first || !s->group_leader || !s->group_ring) return HS_E_NOMEM;
    for (int i = 0; i < n; i++) s->group_first[sim->world.agents[i].group + 1]++;
    for (int g = 0; g < g_count; g++) s->group_first[g + 1] += s->group_first[g];
    for (int g = 0, k = 0; g < g_count; g++)
        for (int i = 0; i < n; i++)
            if (sim->world.agents[i].group == g) s->group_members[k++] = i;
    return HS_OK;
}

static int lsgd_create(Sim *sim, void **state)
{
    LsgdState *s = calloc(1, sizeof *s);
    *state = s;
    if (s == NULL) return HS_E_NOMEM;
    const LsgdKeys *keys = scenario_method_keys(sim->sc);
    s->period = keys->period;
    s->pull = keys->pull;
    s->round_steps = sim_round_steps(sim);
    s->leader = -1;
    int n = sim->world.n, status;
    if ((s->remaining = calloc((size_t)n, sizeof *s->remaining)) == NULL) return HS_E_NOMEM;
    if ((status = ring_gather_init(&s->election, n, LSGD_LOSS)) != HS_OK) return status;
    s->groups = keys->leaders == LSGD_GROUP_LEADERS;
    s->group_pull = keys->group_pull;
    s->global_every = keys->global_every;
    if (s->groups && (status = lsgd_groups_init(s, sim)) != HS_OK) return status;
    if ((status = trainer_setup_local(sim->trainer, 0)) != HS_OK) return status;
    StagesSetup setup = {0};
    return sim_stages_create(sim, &s->st, &setup);
}

static int lsgd_start_period(LsgdState *s, Sim *sim)
{
    int n = sim->world.n, period = s->period;
    if (s->period_done + period > s->round_steps) period = s->round_steps - s->period_done;
    ring_gather_begin(&s->election, NULL, n);
    for (int i = 0; i < n; i++) {
        s->remaining[i] = period;
        int status = engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), LSGD_STEPPED, 0, NULL);
        if (status != HS_OK) return status;
    }
    s->period_done += period;
    return HS_OK;
}

static int lsgd_round_begin(void *state, Sim *sim, int round)
{
    LsgdState *s = state;
    s->period_done = 0;
    stages_begin_round(&s->st, round);
    return lsgd_start_period(s, sim);
}

/* The period's exchanges are over: the next period, or the round's end. */
static int lsgd_next(LsgdState *s, Sim *sim)
{
    if (s->period_done < s->round_steps) return lsgd_start_period(s, sim);
    engine_end_round(sim->engine);
    return HS_OK;
}

/* The agent with the lowest last-batch loss among members (ties: the first); agent
 * members[0] when none has a loss yet (a NaN never compares lower). */
static int lsgd_best(Sim *sim, const int *members, int n_members)
{
    double best = INFINITY;
    int leader = members ? members[0] : 0;
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        double loss = trainer_agent_loss(sim->trainer, i);
        if (loss < best) best = loss, leader = i;
    }
    return leader;
}

/* The global leader's model to every agent, or on to the next period when this election
 * is not a global one. */
static int lsgd_global(LsgdState *s, Sim *sim)
{
    if (s->groups && s->elections % s->global_every != 0) return lsgd_next(s, sim);
    engine_collective_begin(&s->broadcast, NULL, sim->world.n, sim_model_bytes(sim), 1, LSGD_BROADCAST, 0);
    for (int i = 0; i < sim->world.n; i++) {
        int status = engine_collective_join(sim->engine, &s->broadcast, i);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

/* Every agent holds every loss: the leaders are known. With leaders = groups each group
 * of two or more first gets its leader's model (the groups' rings at once), then the
 * global leader's goes to all. Timing mode has no losses and no leaders. */
static int lsgd_elect(LsgdState *s, Sim *sim)
{
    int n = sim->world.n;
    s->elections++;
    s->leader = -1;
    if (sim->trainer) {
        s->leader = lsgd_best(sim, NULL, n);
        sim->round_extra = s->leader;
    }
    if (!s->groups) return lsgd_global(s, sim);
    s->groups_pending = 0;
    for (int g = 0; g < s->n_groups; g++) {
        const int *members = s->group_members + s->group_first[g];
        int count = s->group_first[g + 1] - s->group_first[g];
        s->group_leader[g] = sim->trainer && count > 0 ? lsgd_best(sim, members, count) : -1;
        if (count < 2) continue; /* alone in its group: its own leader */
        engine_collective_begin(&s->group_ring[g], members, count, sim_model_bytes(sim), 1, LSGD_GROUP, g);
        s->groups_pending++;
    }
    if (s->groups_pending == 0) return lsgd_global(s, sim);
    for (int g = 0; g < s->n_groups; g++) {
        int count = s->group_first[g + 1] - s->group_first[g];
        for (int k = 0; count >= 2 && k < count; k++) {
            int status = engine_collective_join(sim->engine, &s->group_ring[g], s->group_members[s->group_first[g] + k]);
            if (status != HS_OK) return status;
        }
    }
    return HS_OK;
}

static int lsgd_on_event(void *state, Sim *sim, const Event *ev)
{
    LsgdState *s = state;
    int status, complete = 0;
    if (ev->kind == LSGD_STEPPED) {
        if ((status = local_step_run(&s->st.step, ev->agent)) != HS_OK) return status;
        if (--s->remaining[ev->agent] > 0)
            return engine_compute(sim->engine, ev->agent, local_step_flops(&s->st.step, ev->agent), LSGD_STEPPED, 0,
                                  NULL);
        status = ring_gather_offer(sim->engine, &s->election, ev->agent, LSGD_ELECTION_BYTES, &complete);
        return status != HS_OK || !complete ? status : lsgd_elect(s, sim);
    }
    if (ev->kind == LSGD_LOSS) {
        status = ring_gather_arrived(sim->engine, &s->election, ev, &complete);
        return status != HS_OK || !complete ? status : lsgd_elect(s, sim);
    }
    if (ev->kind == LSGD_GROUP) { /* group ev->data holds its leader's model */
        int g = (int)ev->data, first = s->group_first[g];
        if (s->group_leader[g] >= 0 &&
            (status = trainer_pull(sim->trainer, s->group_members + first, s->group_first[g + 1] - first,
                                   s->group_leader[g], s->group_pull)) != HS_OK)
            return status;
        return --s->groups_pending > 0 ? HS_OK : lsgd_global(s, sim);
    }
    /* LSGD_BROADCAST: every agent holds the global leader's model */
    if (s->leader >= 0 && (status = trainer_pull(sim->trainer, NULL, sim->world.n, s->leader, s->pull)) != HS_OK)
        return status;
    return lsgd_next(s, sim);
}

static void lsgd_destroy(void *state)
{
    LsgdState *s = state;
    if (s == NULL) return;
    free(s->remaining);
    free(s->group_members);
    free(s->group_first);
    free(s->group_leader);
    free(s->group_ring);
    ring_gather_free(&s->election);
    stages_free(&s->st);
    free(s);
}

static const SchemaKey lsgd_keys[] = {
    METHOD_KEY(LsgdKeys, period, "4", "local steps between leader elections (tau)", .type = SCHEMA_INT, .min = 1,
               .max = 100000000, .flags = SCHEMA_WITHIN_ROUND, .doc_range = "[1, a round's steps]"),
    METHOD_KEY(LsgdKeys, pull, "0.5",
               "pull toward the leader at each election: x <- x - pull (x - x_leader) (lambda; 0: no pull, 1: copy)",
               .type = SCHEMA_REAL, .min = 0, .max = 1),
    METHOD_KEY(LsgdKeys, leaders, "one",
               "one: a global leader; groups: also a leader per [agents] group, the paper's multi-leader form",
               .type = SCHEMA_CHOICE, .choices = "one|groups", .flags = SCHEMA_OMIT_DEFAULT),
    METHOD_KEY(LsgdKeys, group_pull, "0.5",
               "leaders = groups: pull toward the group's leader at each election (lambda; pull is lambda_G)",
               .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OMIT_DEFAULT),
    METHOD_KEY(LsgdKeys, global_every, "1",
               "leaders = groups: elections per global one (tau_G / tau); the others pull toward group leaders only",
               .type = SCHEMA_INT, .min = 1, .max = 100000000, .flags = SCHEMA_OMIT_DEFAULT),
    {0},
};

static const MethodStages lsgd_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING,
    .local_step = "local steps on its own model",
    .outgoing = "the leader's model",
    .refuses = {
        [FEATURE_COMPRESSION] = "the leader sends its model, not a change against a point every agent holds, and a "
                                "new leader's model has no feedback state at the receivers: not modelled",
        [FEATURE_PRUNE] = "a pruned follower would be pulled toward coordinates it does not train, and a pruned "
                          "leader's model has none outside its sub-model: not modelled",
        [FEATURE_FREEZE] = "nothing averages the frozen blocks: each agent's differ, and a pull on the trained "
                           "stage only is not SmartFreeze's setting",
        [FEATURE_DRIFT_FEDPROX] = "the pull toward the leader is already LSGD's proximal term, toward the leader's model "
                                  "rather than a common start; a second one toward each agent's own start is not "
                                  "FedProx",
    },
};

static const MethodExtra lsgd_extras[] = {
    {.meaning = "the round's last elected (global) leader, an agent index; train mode only"},
    {0},
};

const MethodOps method_lsgd = {
    .name = "lsgd",
    .capabilities = METHOD_LOSSY_RINGS,
    .summary = "Leader SGD (Teng et al. 2019): local steps; every period the lowest-loss agent leads, the others are "
               "pulled toward its model",
    .keys = lsgd_keys,
    .keys_size = sizeof(LsgdKeys),
    .stages = &lsgd_stages,
    .extra = lsgd_extras,
    .create = lsgd_create,
    .round_begin = lsgd_round_begin,
    .on_event = lsgd_on_event,
    .destroy = lsgd_destroy,
};
