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
 * leader's model). rounds.extra holds the last elected leader (train mode; NaN in timing
 * mode, which computes no losses).
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
 *  - One level only. The paper's multi-leader form (local leaders within groups that share
 *    a node, a global leader across them, two pulls λ and λ_G, two periods) would map to
 *    hetsim's [agents.NAME] groups, but it needs two concurrent blocking collectives per
 *    agent (its group's and the global one) that the kernel's ring does not time together;
 *    it is not implemented.
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

enum { LSGD_STEPPED = ENGINE_EVENT_METHOD, LSGD_LOSS, LSGD_BROADCAST };

/* The election's message per agent: its index and its loss, two float32. */
#define LSGD_ELECTION_BYTES 8.0

typedef struct LsgdKeys {
    int period;   /* local steps between elections (τ) */
    double pull;  /* λ in [0, 1] */
} LsgdKeys;

typedef struct LsgdState {
    int period;
    double pull;
    int round_steps;  /* S */
    int period_done;  /* steps of this round before the current period */
    int *remaining;   /* (n) steps left in the current period */
    RingGather election;
    Collective broadcast;
    int leader;       /* the last elected, -1 in timing mode */
    Stages st;
} LsgdState;

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
    if ((status = trainer_setup_local(sim->trainer, 0)) != HS_OK) return status;
    StagesSetup setup = {0};
    return sim_stages_create(sim, &s->st, &setup);
}

static int lsgd_start_period(LsgdState *s, Sim *sim)
{
    int n = sim->world.n, period = s->period;
    if (s->period_done + period > s->round_steps) period = s->round_steps - s->period_done;
    ring_gather_begin(&s->election, NULL, n);
    engine_collective_begin(&s->broadcast, NULL, n, sim_model_bytes(sim), 1, LSGD_BROADCAST, 0);
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

/* Every agent holds every loss: the lowest leads (ties: the lowest index), and the
 * leader's model goes out. Timing mode has no losses and no leader. */
static int lsgd_elect(LsgdState *s, Sim *sim)
{
    int n = sim->world.n;
    s->leader = -1;
    if (sim->trainer) {
        double best = INFINITY;
        s->leader = 0; /* no agent has a loss yet: agent 0 (a NaN never compares lower) */
        for (int i = 0; i < n; i++) {
            double loss = trainer_agent_loss(sim->trainer, i);
            if (loss < best) best = loss, s->leader = i;
        }
        sim->round_extra = s->leader;
    }
    for (int i = 0; i < n; i++) {
        int status = engine_collective_join(sim->engine, &s->broadcast, i);
        if (status != HS_OK) return status;
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
    /* LSGD_BROADCAST: every agent holds the leader's model */
    if (s->leader >= 0 && (status = trainer_pull(sim->trainer, NULL, sim->world.n, s->leader, s->pull)) != HS_OK)
        return status;
    if (s->period_done < s->round_steps) return lsgd_start_period(s, sim);
    engine_end_round(sim->engine);
    return HS_OK;
}

static void lsgd_destroy(void *state)
{
    LsgdState *s = state;
    if (s == NULL) return;
    free(s->remaining);
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
    },
};

const MethodOps method_lsgd = {
    .name = "lsgd",
    .summary = "Leader SGD (Teng et al. 2019): local steps; every period the lowest-loss agent leads, the others are "
               "pulled toward its model",
    .keys = lsgd_keys,
    .keys_size = sizeof(LsgdKeys),
    .stages = &lsgd_stages,
    .create = lsgd_create,
    .round_begin = lsgd_round_begin,
    .on_event = lsgd_on_event,
    .destroy = lsgd_destroy,
};
