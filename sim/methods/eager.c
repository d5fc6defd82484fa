/* eager.c — eager-SGD: data parallel SGD with partial collectives (Li, Ben-Nun, Dryden,
 * Girolamo, Hoefler, "Taming unbalanced training workloads in deep learning with partial
 * collective operations", PPoPP 2020).
 *
 * Like sync, every agent holds the same model and a step's update is the all-reduced mean
 * of the agents' gradients; unlike sync, the all-reduce of a step does not wait for
 * everybody. It starts as soon as a quorum of agents has a fresh gradient:
 *   collective = solo      the first one (the paper's solo allreduce);
 *   collective = majority  ceil(N / 2) of them (majority allreduce).
 * All N agents take part in the ring (the paper's late processes are activated by the
 * initiator and their communication runs beside their compute: blocking = 0, so a late
 * agent's processor keeps computing while its link carries the ring). Each agent keeps the
 * gradients it has computed and not yet sent (carry_i); at the start of a reduction every
 * agent contributes its whole carry and zeroes it, so a late agent contributes what it
 * has (its gradient of an earlier step, or nothing) and its late gradient is added to the
 * next reduction it makes: no gradient is dropped (the paper's stale-gradient
 * accumulation, its equation of x_{t+1} with the late part of step t-1 added at t).
 * The update is sum_i carry_i / N (the paper divides by P, null contributions included).
 *
 * Protocol per agent: compute a gradient at the current shared model (FLOPs of the
 * [model] step); when done, add it to the carry and wait for the current reduction to
 * end; when a reduction ends every waiting agent starts its next gradient at the new
 * model, and agents still computing carry on (their gradient is of an older model: the
 * staleness of eager-SGD).
 *
 * A round is ceil(mean samples / batch) reductions, as sync's steps. hetsim's deviation:
 * a round ends once its last reduction is done and no agent is still computing (a
 * barrier per round, so the rounds' accounting stays per round); whatever a late agent
 * computed then is carried into the next round's first reduction. rounds.extra = the
 * agent-steps that were late (no fresh gradient at a reduction's start) this round.
 *
 * Features, through the stages as sync's (eager is sync with a partial collective):
 *   [privacy] clip = sample  every gradient is a DP-SGD gradient (local_step_gradient: the
 *                  per-sample clipping, the agent's own noise, one run of the accountant per
 *                  gradient, so a fast agent spends more); a carry is a sum of such
 *                  gradients, post-processing of the mechanism's outputs.
 *   prune = width  slow agents compute the gradient of their nested sub-model (its FLOPs);
 *                  a reduction runs as sync's nested all-reduce shells (non-blocking, among
 *                  all N) and each coordinate's update is the carries' sum over the agents
 *                  holding it (the paper's sum / N, per coordinate over its holders).
 *   freeze = progressive  a gradient costs the round's stage (SmartFreeze); a reduction
 *                  carries the stage's bytes and the update moves the stage's ranges only.
 *                  A late gradient carried across a stage change is not applied: it is of
 *                  the block that froze and of that block's output module, which the new
 *                  stage does not train (the one place a computed gradient is dropped;
 *                  the last stage, which lasts to the end, drops none).
 * The carries stay the method's own (trainer buffer EAGER_CARRY, read by check_eager's
 * conservation test). */
#include "sim/methods/method.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EAGER_COMPUTED = ENGINE_EVENT_METHOD, EAGER_REDUCED };
enum { EAGER_SOLO, EAGER_MAJORITY };

typedef struct EagerKeys {
    int collective; /* EAGER_SOLO or EAGER_MAJORITY */
    PruneKeys pruning;
    FreezeKeys freezing;
} EagerKeys;

typedef struct EagerState {
    int n;
    int steps_per_round;
    int step;          /* reductions done this round */
    int quorum;        /* fresh gradients that start a reduction */
    int fresh;         /* agents with a fresh gradient for the open reduction */
    int in_flight;     /* a reduction is on the wire */
    int busy;          /* agents computing */
    int *waiting;      /* (n) 1 when agent i is done and waits for a reduction's end */
    long late;         /* agent-steps without a fresh gradient at a reduction's start (round) */
    Collective allreduce;
    LocalStep *ls;     /* the local step stage: plain, DP-SGD, sub-model or stage gradients */
    Stages st;
    float *update;     /* (params) the reduced sum / N, applied when the reduction ends */
    float *share;      /* prune, train mode: (params) 1 / agents holding each coordinate */
} EagerState;

/* buffers per agent: 0 the gradient being computed, 1 the carry */
enum { EAGER_PENDING, EAGER_CARRY };

/* The update is the carries' plain sum / N (the paper's): a gradient weighted by its batch
 * (sync's union-batch mean) is not what eager-SGD's partial collective computes. */
static int eager_validate(const Scenario *sc, HsDiag *diag)
{
    int group;
    if (scenario_batches(sc, &group) == SCENARIO_BATCH_UNEQUAL)
        return scenario_batch_error(sc, group, diag,
                                    "the partial all-reduce sums the carries and divides by N, counting every "
                                    "agent's gradient alike (give every agent the same batch)");
    return HS_OK;
}

static int eager_shares(EagerState *s, Sim *sim);

static int eager_create(Sim *sim, void **state)
{
    EagerState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    const EagerKeys *keys = scenario_method_keys(sim->sc);
    s->n = sim->world.n;
    s->steps_per_round = sim_round_steps(sim);
    s->quorum = keys->collective == EAGER_SOLO ? 1 : (s->n + 1) / 2;
    s->waiting = calloc((size_t)s->n, sizeof *s->waiting);
    if (!s->waiting) return HS_E_NOMEM;
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing};
    int status = sim_stages_create(sim, &s->st, &setup);
    if (status != HS_OK) return status;
    s->ls = &s->st.step;
    if (s->ls->prune.on && (status = eager_shares(s, sim)) != HS_OK) return status;
    /* a model per agent, all holding the shared parameters (agent 0's optimiser steps,
     * the others copy): an agent's gradient is taken when it starts, at the model then */
    if ((status = trainer_setup_local(sim->trainer, 2)) != HS_OK) return status;
    if (sim->trainer && (s->update = calloc(trainer_param_count(sim->trainer), sizeof *s->update)) == NULL)
        return HS_E_NOMEM;
    for (int i = 0; i < s->n; i++) s->waiting[i] = 1; /* every agent starts at the first round */
    return HS_OK;
}

/* prune = width, train mode: each coordinate's share 1 / (agents holding it); every
 * coordinate has a holder (at most half the agents are pruned, the others hold all). */
static int eager_shares(EagerState *s, Sim *sim)
{
    if (sim->trainer == NULL) return HS_OK;
    size_t params = trainer_param_count(sim->trainer);
    if ((s->share = calloc(params, sizeof *s->share)) == NULL) return HS_E_NOMEM;
    for (int i = 0; i < s->n; i++) {
        const unsigned char *held = local_step_held(s->ls, i);
        for (size_t j = 0; j < params; j++) s->share[j] += held == NULL || held[j];
    }
    for (size_t j = 0; j < params; j++) s->share[j] = s->share[j] > 0 ? 1.0f / s->share[j] : 0.0f;
    return HS_OK;
}

/* Agent i starts a gradient at the current model. */
static int eager_start(EagerState *s, Sim *sim, int i)
{
    s->waiting[i] = 0;
    s->busy++;
    int status = engine_compute(sim->engine, i, local_step_flops(s->ls, i), EAGER_COMPUTED, 0, NULL);
    if (status != HS_OK) return status;
    /* timing mode too (no trainer, no buffer): DP-SGD's accountant counts the gradient */
    return local_step_gradient(s->ls, i, NULL, trainer_buffer(sim->trainer, i, EAGER_PENDING));
}

static int eager_start_waiting(EagerState *s, Sim *sim)
{
    for (int i = 0; i < s->n; i++)
        if (s->waiting[i]) {
            int status = eager_start(s, sim, i);
            if (status != HS_OK) return status;
        }
    return HS_OK;
}

/* The quorum is there: every agent hands over its carry, the ring starts among all. */
static int eager_reduce(EagerState *s, Sim *sim)
{
    s->in_flight = 1;
    s->late += s->n - s->fresh;
    sim->round_extra = (double)s->late;
    s->fresh = 0;
    Trainer *t = sim->trainer;
    if (t) {
        size_t params = trainer_param_count(t);
        memset(s->update, 0, params * sizeof *s->update);
        for (int i = 0; i < s->n; i++) { /* agent order: the same sum on every run */
            float *carry = trainer_buffer(t, i, EAGER_CARRY);
            for (size_t j = 0; j < params; j++) s->update[j] += carry[j];
            memset(carry, 0, params * sizeof *carry);
        }
        const float inv = 1.0f / (float)s->n;
        if (s->share)
            for (size_t j = 0; j < params; j++) s->update[j] *= s->share[j];
        else
            for (size_t j = 0; j < params; j++) s->update[j] *= inv;
    }
    Prune *prune = &s->ls->prune;
    if (prune->on) { /* nested shells, each among the agents holding it */
        if (prune_shells_begin(prune, NULL, s->n, 0, EAGER_REDUCED) != HS_OK)
            return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < s->n; i++) {
            int status = prune_shells_join(sim->engine, prune, i);
            if (status != HS_OK) return status;
        }
        return HS_OK;
    }
    /* the stage's bytes under freeze, the model's otherwise */
    engine_collective_begin(&s->allreduce, NULL, s->n, local_step_bytes(s->ls, 0), 0, EAGER_REDUCED, 0);
    for (int i = 0; i < s->n; i++) {
        int status = engine_collective_join(sim->engine, &s->allreduce, i);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

static int eager_maybe_end_round(EagerState *s, Sim *sim)
{
    if (s->step == s->steps_per_round && !s->in_flight && s->busy == 0) engine_end_round(sim->engine);
    return HS_OK;
}

static int eager_computed(EagerState *s, Sim *sim, int i)
{
    s->busy--;
    s->waiting[i] = 1;
    if (sim->trainer) {
        size_t params = trainer_param_count(sim->trainer);
        float *carry = trainer_buffer(sim->trainer, i, EAGER_CARRY);
        const float *g = trainer_buffer(sim->trainer, i, EAGER_PENDING);
        for (size_t j = 0; j < params; j++) carry[j] += g[j];
    }
    if (s->step == s->steps_per_round) return eager_maybe_end_round(s, sim);
    if (!s->in_flight && ++s->fresh == s->quorum) return eager_reduce(s, sim);
    return HS_OK;
}

static int eager_reduced(EagerState *s, Sim *sim)
{
    s->in_flight = 0;
    Trainer *t = sim->trainer;
    if (t) {
        int status = local_step_apply(s->ls, 0, s->update);
        if (status != HS_OK) return status;
        size_t params = trainer_param_count(t);
        const float *x = trainer_params(t, 0);
        for (int i = 1; i < s->n; i++) memcpy(trainer_params(t, i), x, params * sizeof *x);
    }
    if (++s->step == s->steps_per_round) return eager_maybe_end_round(s, sim);
    /* agents that finished during the flight already count for the next reduction */
    return eager_start_waiting(s, sim);
}

static int eager_round_begin(void *state, Sim *sim, int round)
{
    EagerState *s = state;
    s->step = 0;
    s->late = 0;
    s->fresh = 0;
    sim->round_extra = 0;
    stages_begin_round(&s->st, round);
    return eager_start_waiting(s, sim);
}

static int eager_on_event(void *state, Sim *sim, const Event *ev)
{
    EagerState *s = state;
    if (ev->kind == EAGER_REDUCED)
        return s->ls->prune.on && !prune_shells_done(&s->ls->prune) ? HS_OK : eager_reduced(s, sim);
    return eager_computed(s, sim, ev->agent);
}

static void eager_destroy(void *state)
{
    EagerState *s = state;
    if (s == NULL) return;
    stages_free(&s->st);
    free(s->waiting);
    free(s->update);
    free(s->share);
    free(s);
}

static const SchemaKey eager_keys[] = {
    METHOD_KEY(EagerKeys, collective, "majority",
               "solo or majority: a step's all-reduce starts when one agent, or ceil(N/2), have a fresh gradient",
               .type = SCHEMA_CHOICE, .choices = "solo|majority"),
    PRUNE_METHOD_KEYS(EagerKeys, pruning.),
    FREEZE_METHOD_KEYS(EagerKeys, freezing.),
    {0},
};

#define EAGER_PARTIAL_REFUSAL(what)                                                                              \
    "a carry mixes gradients of several steps, late ones included: " what " of a carry is not modelled"

static const MethodStages eager_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient of the shared model at the step it starts (DP-SGD's, its sub-model's, the stage's)",
    .outgoing = "its carry: every gradient not sent yet",
    .aggregate = "partial all-reduce: sum of the carries / N",
    .refuses = {
        [FEATURE_COMPRESSION] = EAGER_PARTIAL_REFUSAL("a compressed message with its feedback"),
        [FEATURE_BYZANTINE] = EAGER_PARTIAL_REFUSAL("a robust rule over vectors of different ages"),
        [FEATURE_PRIVACY_UPDATE] = EAGER_PARTIAL_REFUSAL("clipping each update (DP-FedSGD)"),
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_NO_LOCAL_STEPS,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_NO_LOCAL_STEPS,
    },
};

static const MethodExtra eager_extras[] = {
    {.meaning = "agent-steps late: agents without a fresh gradient when a reduction started"},
    {0},
};

const MethodOps method_eager = {
    .name = "eager",
    .capabilities = METHOD_LOSSY_RINGS,
    .summary = "eager-SGD (Li et al., PPoPP 2020): partial all-reduce that starts with one (solo) or half (majority) of the agents ready; late gradients join a later step",
    .keys = eager_keys,
    .keys_size = sizeof(EagerKeys),
    .stages = &eager_stages,
    .extra = eager_extras,
    .validate = eager_validate,
    .create = eager_create,
    .round_begin = eager_round_begin,
    .on_event = eager_on_event,
    .destroy = eager_destroy,
};
