/* sync.c — synchronous data parallel, the straggler baseline.
 * Every step each agent computes the gradient of one batch; the gradients are
 * all-reduced (ring, blocking) and every agent applies the same averaged update, so
 * every step waits for the slowest agent. A round is a global epoch:
 * ceil(mean samples / mean batch) steps.
 * Per-agent batches ([agents] batch): each agent's step costs its own batch's FLOPs, and
 * the shared gradient is sum b_i g_i / sum b_i, the gradient of the union of the batches
 * (trainer_shared_gradients_of; the plain mean when the batches are equal). The paths
 * below other than dense (and deadline) refuse unequal batches (sync_validate).
 *
 * Three ways to combine the gradients:
 *   dense       (no [compression], no Byzantine agents, mean): the shared model and a
 *               ring all-reduce of the model's bytes — the original path, bit for bit.
 *   compressed  ([compression] scheme != none): each agent sends C(...) of its gradient
 *               with the configured feedback (sim/stages/compress.h); the messages travel by a
 *               ring all-gather (every hop a message of the encoded size), and every
 *               agent steps with the mean of the contributions (EF21: mean g_i; EControl:
 *               mean h_i after the update; none: mean C(grad_i)). The optimiser of
 *               [model] then applies that vector (plain SGD gives the papers' updates).
 *               With [compression] momentum = worker the [model] momentum moves to the
 *               agents instead (EF21-SGDM, Fatkhullin, Tyurin, Richtarik, NeurIPS 2023):
 *               each keeps u_i <- mu u_i + grad_i (+ wd x), compresses u_i (Nesterov:
 *               grad_i + mu u_i) with the feedback, and the mean is applied as a plain
 *               step x <- x - lr mean. Dense, that is heavy ball on the mean by
 *               linearity; compressed, EF21's g_i tracks the slowly varying u_i instead of
 *               raw batch gradients. The paper's v_i <- (1-eta) v_i + eta grad_i with step
 *               gamma is the same method for eta = 1 - mu, gamma = lr / (1 - mu): top-k
 *               and the feedback rules commute with that positive scaling.
 *               feedback = ef: each agent sends C(e_i + grad_i) and keeps the rest in e_i;
 *               the [model] optimiser steps with the mean of the messages.
 *               feedback = dgc (Lin et al., ICLR 2018): each agent clips its gradient to
 *               clip / sqrt(N), keeps the [model] momentum itself (u_i <- mu u_i + g_i;
 *               Nesterov sends g_i + mu u_i, as the authors' DGCSGDMemory), accumulates
 *               that into e_i, sends C(e_i), zeroes e_i and (masking) u_i where it sent,
 *               and the model takes x <- x - lr (mean of the messages + b) where b is the
 *               heavy ball of the weight decay wd x, applied locally and never sent (the
 *               authors' DGCSGD optimiser: every agent holds the same x, so the decay
 *               needs no communication). With ratio 1 and masking = 0 that is heavy ball
 *               on the mean gradient, by linearity.
 *   per agent   ([byzantine], [privacy] or freeze = progressive): per-agent gradients
 *               (the local step stage forms them: DP-SGD's, a stage's, a label-flipping
 *               attacker's), the outgoing stage (clip = update: each gradient clipped to
 *               C, DP-FedSGD; attackers replace theirs, sim/stages/byzantine.h), and the
 *               aggregation (the [byzantine] rule or the mean; clip = update: central
 *               noise sigma C / N on it, one run of the mechanism per step).
 *               The timing stays the dense all-reduce's (of the stage's bytes under
 *               freeze), as the brief asks: a real serverless median or Krum needs every
 *               vector at every agent, an all-gather N/2 times as heavy, or a server.
 * prune = width (the shared model; sim/stages/prune.h): slow agents compute the gradient of their
 * nested sub-model of the shared parameters (its FLOPs per step); the gradients are
 * reduced in nested all-reduce shells and each coordinate's update is the mean over the
 * agents holding it (uniform, like the dense mean). rounds.extra = the smallest keep ratio.
 * The per-agent paths keep a model per agent (all holding the same parameters: agent 0's
 * optimiser steps and the others copy), because the trainer's shared mode only hands out
 * the mean gradient. */
#include "sim/methods/method.h"
#include "base/units.h"
#include "sim/train/trainer.h"

#include "models/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SYNC_COMPUTED = ENGINE_EVENT_METHOD, SYNC_REDUCED, SYNC_BLOCK, SYNC_DEADLINE };

/* [method] keys (sync_keys below) */
typedef struct SyncKeys {
    double deadline;       /* s; inf: none */
    PruneKeys pruning;
    FreezeKeys freezing;
} SyncKeys;

typedef struct SyncState {
    int steps_per_round;
    int step;
    Collective allreduce;
    /* [method] deadline: the all-reduce starts at the latest `deadline` seconds after the
     * first gradient of a step is done; agents not done by then are left out of that
     * step (their late gradient is discarded) */
    double deadline;        /* INFINITY: wait for everyone */
    long serial;            /* steps started, all rounds: tags compute events */
    int *members;           /* (n) agents on time this step, in arrival order */
    int n_members;
    int closed;             /* this step's all-reduce has started */
    long dropped;           /* agent-steps left out this round (rounds.extra) */
    Stages st;
    /* the compressed and per-agent paths */
    int per_agent;          /* a model per agent (all the same), the gradients one by one */
    size_t d;               /* entries exchanged: the model's blocks (heads excluded) */
    RingGather gather;      /* compressed */
    float *decay;           /* (d) dgc: heavy ball of the weight decay, shared (same x everywhere) */
    float *update;          /* (params) the combined gradient; heads stay 0 */
    const float **vectors;  /* (n) what each agent contributes */
    float **outs;           /* (n) */
} SyncState;

/* Both paths that leave stragglers out would have to agree on what a missing agent's
 * compressed message, robust vote, clipped gradient or sub-model means; none is modelled. */
static int sync_validate(const Scenario *sc, HsDiag *diag)
{
    const SyncKeys *keys = scenario_method_keys(sc);
    static const Feature others[] = {FEATURE_COMPRESSION, FEATURE_BYZANTINE, FEATURE_PRIVACY_SAMPLE,
                                     FEATURE_PRIVACY_UPDATE, FEATURE_PRUNE, FEATURE_FREEZE};
    /* unequal batches are weighed by batch in the shared gradient only (the dense and the
     * deadline paths); the other paths combine the agents' vectors alike */
    int group;
    if (scenario_batches(sc, &group) == SCENARIO_BATCH_UNEQUAL)
        for (size_t k = 0; k < sizeof others / sizeof *others; k++)
            if (scenario_feature_on(sc, others[k]))
                return scenario_batch_error(sc, group, diag,
                                            "unequal batches are weighed by batch only in the dense all-reduce; with "
                                            "[compression], [byzantine], [privacy], prune or freeze the agents' "
                                            "vectors count alike (give every agent the same batch)");
    if (!isfinite(keys->deadline)) return HS_OK;
    for (size_t k = 0; k < sizeof others / sizeof *others; k++)
        if (scenario_feature_on(sc, others[k]))
            return scenario_key_error(sc, &keys->deadline, diag,
                                      "not available with [compression], [byzantine], [privacy], prune or freeze");
    return HS_OK;
}

static int sync_create(Sim *sim, void **state)
{
    SyncState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    s->steps_per_round = sim_round_steps(sim);
    int status;
    const SyncKeys *keys = scenario_method_keys(sim->sc);
    s->deadline = keys->deadline;
    if (isfinite(s->deadline) && (s->members = calloc((size_t)sim->world.n, sizeof *s->members)) == NULL)
        return HS_E_NOMEM;
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing, .keep_messages = 1};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    const Scenario *sc = sim->sc;
    s->per_agent = outgoing_compresses(&s->st.out) || scenario_feature_on(sc, FEATURE_BYZANTINE) ||
                   (sc->privacy.present && sc->privacy.clip != PRIVACY_CLIP_NONE) || s->st.step.freeze_rounds;
    if (!s->per_agent) return trainer_setup_shared(sim->trainer);

    int n = sim->world.n;
    s->d = (size_t)sim->profile.total_params;
    /* buffer 0: the agent's gradient */
    if ((status = trainer_setup_local(sim->trainer, 1)) != HS_OK) return status;
    s->vectors = calloc((size_t)n, sizeof *s->vectors);
    s->outs = calloc((size_t)n, sizeof *s->outs);
    if (!s->vectors || !s->outs) return HS_E_NOMEM;
    if (sim->trainer) {
        s->update = calloc(trainer_param_count(sim->trainer), sizeof *s->update);
        if (s->st.out.dgc) s->decay = calloc(s->d, sizeof *s->decay);
        if (!s->update || (s->st.out.dgc && !s->decay)) return HS_E_NOMEM;
    }
    if (outgoing_compresses(&s->st.out) && (status = ring_gather_init(&s->gather, n, SYNC_BLOCK)) != HS_OK)
        return hs_diag_set(sim->diag, status, NULL, 0, "out of memory for compression");
    return HS_OK;
}

/* Per-agent paths: every agent's gradient through the local step and the outgoing stage,
 * then the aggregation into the update (computed at the step's start: the parameters
 * every agent holds do not change until it ends). */
static int sync_agent_step(SyncState *s, Sim *sim)
{
    int n = sim->world.n, status;
    Trainer *t = sim->trainer;
    if (t == NULL) {
        for (int i = 0; i < n; i++) {
            local_step_gradient(&s->st.step, i, NULL, NULL); /* DP-SGD's accountant counts it */
            outgoing_gradient(&s->st.out, i, NULL, NULL);
        }
        aggregate_noise(&s->st.agg, NULL, n, 0, engine_round(sim->engine), s->step, NULL);
        return HS_OK;
    }
    for (int i = 0; i < n; i++) {
        float *g = trainer_buffer(t, i, 0);
        if ((status = local_step_gradient(&s->st.step, i, NULL, g)) != HS_OK) return status;
        outgoing_clip_vector(&s->st.out, g);
        s->vectors[i] = outgoing_gradient(&s->st.out, i, trainer_params(t, i), g);
        s->outs[i] = g;
    }
    outgoing_attack(&s->st.out, NULL, n, s->vectors, s->outs);
    if ((status = aggregate_vectors(&s->st.agg, NULL, s->vectors, n, s->update)) != HS_OK) return status;
    aggregate_noise(&s->st.agg, NULL, n, 0, engine_round(sim->engine), s->step, s->update);
    return HS_OK;
}

/* Agent 0's optimiser applies the update; everybody copies the result. */
static int sync_apply_local(SyncState *s, Sim *sim)
{
    if (sim->trainer == NULL) return HS_OK;
    size_t params = trainer_param_count(sim->trainer);
    float *x = trainer_params(sim->trainer, 0);
    if (s->st.out.dgc) {
        /* DGC: the sparse mean plus the locally applied heavy ball of the weight decay */
        const OptimSpec *o = &sim->sc->optim;
        const float rate = (float)trainer_schedule_lr(sim->sc, engine_round(sim->engine)), wd = (float)o->weight_decay;
        const float mu = o->kind == OPTIM_MOMENTUM ? (float)o->momentum : 0.0f;
        const int nesterov = o->kind == OPTIM_MOMENTUM && o->nesterov;
        for (size_t j = 0; j < s->d; j++) {
            float step = s->update[j];
            if (wd != 0.0f) {
                float a = wd * x[j];
                s->decay[j] = mu * s->decay[j] + a;
                step += nesterov ? a + mu * s->decay[j] : s->decay[j];
            }
            x[j] -= rate * step;
        }
    } else if (s->st.out.worker_momentum) {
        /* the momentum (and weight decay) are in the agents' vectors already */
        const float rate = (float)trainer_schedule_lr(sim->sc, engine_round(sim->engine));
        for (size_t j = 0; j < s->d; j++) x[j] -= rate * s->update[j];
    } else {
        int status = local_step_apply(&s->st.step, 0, s->update);
        if (status != HS_OK) return status;
    }
    for (int i = 1; i < sim->world.n; i++) memcpy(trainer_params(sim->trainer, i), x, params * sizeof *x);
    return HS_OK;
}

static int sync_start_step(SyncState *s, Sim *sim)
{
    int status;
    LocalStep *step = &s->st.step;
    if (outgoing_compresses(&s->st.out)) {
        ring_gather_begin(&s->gather, NULL, sim->world.n);
        for (int i = 0; i < sim->world.n; i++)
            if ((status = engine_compute(sim->engine, i, local_step_flops(step, i), SYNC_COMPUTED, 0, NULL)) != HS_OK)
                return status;
        return sync_agent_step(s, sim);
    }
    if (isfinite(s->deadline)) {
        s->serial++;
        s->n_members = 0;
        s->closed = 0;
        for (int i = 0; i < sim->world.n; i++)
            if ((status = engine_compute(sim->engine, i, local_step_flops(step, i), SYNC_COMPUTED, s->serial, NULL)) !=
                HS_OK)
                return status;
        return HS_OK;
    }
    if (step->prune.on) {
        if (prune_shells_begin(&step->prune, NULL, sim->world.n, 1, SYNC_REDUCED) != HS_OK)
            return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < sim->world.n; i++)
            if ((status = engine_compute(sim->engine, i, local_step_flops(step, i), SYNC_COMPUTED, 0, NULL)) != HS_OK)
                return status;
        return trainer_shared_width_gradients(sim->trainer, NULL, sim->world.n, local_step_widths(step));
    }
    /* Every agent computes, then joins the all-reduce: booked in one sweep over the agents
     * (engine_collective_compute_join), the same bits as an event per gradient that joins
     * from its handler, without a million events a step. */
    engine_collective_begin(&s->allreduce, NULL, sim->world.n, local_step_bytes(step, 0), 1, SYNC_REDUCED, 0);
    for (int i = 0; i < sim->world.n; i++)
        if ((status = engine_collective_compute_join(sim->engine, &s->allreduce, i, local_step_flops(step, i), 1)) !=
            HS_OK)
            return status;
    if (s->per_agent) return sync_agent_step(s, sim);
    /* Every agent starts from the same parameters, so the gradients can be computed
     * now, all at once, for the step that completes later. */
    return trainer_shared_gradients(sim->trainer);
}

static int sync_round_begin(void *state, Sim *sim, int round)
{
    SyncState *s = state;
    s->step = 0;
    s->dropped = 0;
    if (isfinite(s->deadline)) sim->round_extra = 0;
    stages_begin_round(&s->st, round);
    double extra = local_step_extra(&s->st.step);
    if (!isnan(extra)) sim->round_extra = extra;
    return sync_start_step(s, sim);
}

/* Deadline path: the step's all-reduce among the agents on time. Their gradients are
 * taken now: the shared parameters have not changed since the step began. */
static int sync_close_step(SyncState *s, Sim *sim)
{
    s->closed = 1;
    s->dropped += sim->world.n - s->n_members;
    sim->round_extra = (double)s->dropped;
    engine_collective_begin(&s->allreduce, s->members, s->n_members, sim_model_bytes(sim), 1, SYNC_REDUCED, 0);
    for (int k = 0; k < s->n_members; k++) {
        int status = engine_collective_join(sim->engine, &s->allreduce, s->members[k]);
        if (status != HS_OK) return status;
    }
    return trainer_shared_gradients_of(sim->trainer, s->members, s->n_members);
}

static int sync_deadline_event(SyncState *s, Sim *sim, const Event *ev)
{
    if (ev->kind == SYNC_DEADLINE) return ev->data == s->serial && !s->closed ? sync_close_step(s, sim) : HS_OK;
    if (ev->data != s->serial || s->closed) return HS_OK; /* a late gradient: discarded */
    if (s->n_members == 0 &&
        engine_schedule(sim->engine, engine_now(sim->engine) + s->deadline, SYNC_DEADLINE, -1, s->serial) != HS_OK)
        return HS_E_NOMEM;
    s->members[s->n_members++] = ev->agent;
    return s->n_members == sim->world.n ? sync_close_step(s, sim) : HS_OK;
}

static int sync_finish_step(SyncState *s, Sim *sim)
{
    int status = s->per_agent ? sync_apply_local(s, sim) : trainer_shared_apply(sim->trainer);
    if (status != HS_OK) return status;
    if (++s->step < s->steps_per_round) return sync_start_step(s, sim);
    engine_end_round(sim->engine);
    return HS_OK;
}

static int sync_on_event(void *state, Sim *sim, const Event *ev)
{
    SyncState *s = state;
    Prune *prune = &s->st.step.prune;
    if (outgoing_compresses(&s->st.out)) {
        int complete;
        int status = ev->kind == SYNC_COMPUTED
                         ? ring_gather_offer(sim->engine, &s->gather, ev->agent, outgoing_bytes(&s->st.out, ev->agent),
                                             &complete)
                         : ring_gather_arrived(sim->engine, &s->gather, ev, &complete);
        if (status != HS_OK) return status;
        return complete ? sync_finish_step(s, sim) : HS_OK;
    }
    if (ev->kind == SYNC_REDUCED) return prune->on && !prune_shells_done(prune) ? HS_OK : sync_finish_step(s, sim);
    if (isfinite(s->deadline)) return sync_deadline_event(s, sim, ev);
    if (prune->on) return prune_shells_join(sim->engine, prune, ev->agent);
    /* the all-reduce's members joined when their gradients were booked (sync_start_step) */
    return hs_diag_set(sim->diag, HS_E_INTERNAL, NULL, 0, "sync: an event of kind %d outside its paths", ev->kind);
}

static void sync_destroy(void *state)
{
    SyncState *s = state;
    if (s == NULL) return;
    stages_free(&s->st);
    ring_gather_free(&s->gather);
    free(s->decay);
    free(s->update);
    free(s->vectors);
    free(s->outs);
    free(s->members);
    free(s);
}

static const SchemaKey sync_keys[] = {
    METHOD_KEY(SyncKeys, deadline, "none",
               "none, or how long after the first gradient a step waits before leaving stragglers out",
               .type = SCHEMA_TIME, .unit = UNIT_TIME, .min = 0, .max = INFINITY),
    PRUNE_METHOD_KEYS_ALWAYS(SyncKeys, pruning.),
    FREEZE_METHOD_KEYS(SyncKeys, freezing.),
    {0},
};

static const MethodStages sync_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient of the shared model",
    .outgoing = "its gradient",
    .aggregate = "all-reduce mean of the gradients",
    .refuses = {
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_NO_LOCAL_STEPS,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_NO_LOCAL_STEPS,
    },
};

static const MethodExtra sync_extras[] = {
    {.key = "deadline", .value = "none", .unless = 1, .meaning = "agent-steps left out of the round's all-reduces"},
    LOCAL_STEP_EXTRA,
    {0},
};

const MethodOps method_sync = {
    .name = "sync",
    .summary = "synchronous data parallel: all-reduce of gradients every step",
    .keys = sync_keys,
    .keys_size = sizeof(SyncKeys),
    .capabilities = METHOD_LOSSY_RINGS | METHOD_WORKER_MOMENTUM | METHOD_ACCUMULATES,
    .stages = &sync_stages,
    .extra = sync_extras,
    .validate = sync_validate,
    .create = sync_create,
    .round_begin = sync_round_begin,
    .on_event = sync_on_event,
    .destroy = sync_destroy,
};
