/* sync.c — synchronous data parallel, the straggler baseline.
 * Every step each agent computes the gradient of one batch; the gradients are
 * all-reduced (ring, blocking) and every agent applies the same averaged update, so
 * every step waits for the slowest agent. A round is a global epoch:
 * ceil(mean samples / batch) steps.
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
 *   robust      ([byzantine] with attackers or a robust aggregator): per-agent gradients,
 *               attackers replace theirs (sim/stages/byzantine.h), the aggregator combines them.
 *               The timing stays the dense all-reduce's, as the brief asks: a real
 *               serverless median or Krum needs every vector at every agent, an
 *               all-gather N/2 times as heavy, or a parameter server.
 * prune = width (dense path only; sim/stages/prune.h): slow agents compute the gradient of their
 * nested sub-model of the shared parameters (its FLOPs per step); the gradients are
 * reduced in nested all-reduce shells and each coordinate's update is the mean over the
 * agents holding it (uniform, like the dense mean). rounds.extra = the smallest keep ratio.
 * The per-agent paths keep a model per agent (all holding the same parameters: agent 0's
 * optimiser steps and the others copy), because the trainer's shared mode only hands out
 * the mean gradient. */
#include "sim/stages/byzantine.h"
#include "sim/stages/compress.h"
#include "sim/methods/method.h"
#include "sim/stages/prune.h"
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
} SyncKeys;

typedef struct SyncState {
    int steps_per_round;
    int step;
    double step_flops;
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
    /* compressed and robust paths */
    size_t d;               /* entries exchanged: the model's blocks (heads excluded) */
    Compressor *compressor; /* compressed path */
    RingGather gather;
    int n_state;            /* feedback vectors per agent (trainer buffers 0..n_state-1) */
    int worker_momentum;    /* [compression] momentum = worker: trainer buffer n_state is u_i */
    int dgc;                /* feedback = dgc: trainer buffer 0 is e_i, buffer 1 is u_i */
    float *decay;           /* (d) dgc: heavy ball of the weight decay, shared (same x everywhere) */
    float *sent;            /* (d) worker momentum: the vector an agent compresses */
    double *bytes;          /* (n) this step's message sizes */
    float *gradient;        /* (params) scratch */
    float *message;         /* (d) scratch */
    Byzantine *byzantine;   /* robust path */
    float *update;          /* (params) the combined gradient; heads stay 0 */
    const float **vectors;  /* (n) */
    float **outs;           /* (n) */
    Prune prune;            /* prune = width */
} SyncState;

/* Both paths that leave stragglers out would have to agree on what a missing agent's
 * compressed message or robust vote means; neither is modelled. */
static int sync_validate(const Scenario *sc, HsDiag *diag)
{
    int compressed = sc->compression.present && sc->compression.scheme != COMPRESS_NONE;
    int robust = sc->byzantine.present && (sc->byzantine.count > 0 || sc->byzantine.aggregator != AGGREGATOR_MEAN);
    const SyncKeys *keys = scenario_method_keys(sc);
    if (isfinite(keys->deadline) && (compressed || robust))
        return scenario_key_error(sc, &keys->deadline, diag, "not available with [compression] or [byzantine]");
    if (keys->pruning.prune == PRUNE_WIDTH && (compressed || robust || isfinite(keys->deadline)))
        return scenario_key_error(sc, &keys->pruning.prune, diag,
                                  "width is not available with [compression], [byzantine] or a deadline");
    return HS_OK;
}

static int sync_create(Sim *sim, void **state)
{
    SyncState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    s->steps_per_round = sim_round_steps(sim);
    s->step_flops = sim_step_flops(sim, sim->sc->model.batch);
    int status;
    const SyncKeys *keys = scenario_method_keys(sim->sc);
    s->deadline = keys->deadline;
    if (isfinite(s->deadline) && (s->members = calloc((size_t)sim->world.n, sizeof *s->members)) == NULL)
        return HS_E_NOMEM;
    const CompressionSpec *c = &sim->sc->compression;
    const ByzantineSpec *b = &sim->sc->byzantine;
    int compressed = c->present && c->scheme != COMPRESS_NONE;
    int robust = b->present && (b->count > 0 || b->aggregator != AGGREGATOR_MEAN);
    status = prune_create(&keys->pruning, sim->sc, &sim->world, &sim->profile, sim->trainer != NULL, NULL, sim->diag,
                          &s->prune);
    if (status != HS_OK) return status;
    if (!compressed && !robust) return trainer_setup_shared(sim->trainer);

    int n = sim->world.n;
    s->d = (size_t)sim->profile.total_params;
    s->n_state = compressed ? compress_state_vectors(c) : 0;
    s->worker_momentum = compressed && c->worker_momentum;
    int buffers = compressed ? s->n_state + s->worker_momentum : 1;
    if ((status = trainer_setup_local(sim->trainer, buffers)) != HS_OK) return status;
    size_t params = trainer_param_count(sim->trainer);
    s->bytes = calloc((size_t)n, sizeof *s->bytes);
    s->vectors = calloc((size_t)n, sizeof *s->vectors);
    s->outs = calloc((size_t)n, sizeof *s->outs);
    if (!s->bytes || !s->vectors || !s->outs) return HS_E_NOMEM;
    if (sim->trainer) {
        s->update = calloc(params, sizeof *s->update);
        s->gradient = calloc(params, sizeof *s->gradient);
        s->message = calloc(s->d, sizeof *s->message);
        s->dgc = compressed && c->feedback == FEEDBACK_DGC;
        if (s->worker_momentum || s->dgc) s->sent = calloc(s->d, sizeof *s->sent);
        if (s->dgc) s->decay = calloc(s->d, sizeof *s->decay);
        if (!s->update || !s->gradient || !s->message || ((s->worker_momentum || s->dgc) && !s->sent) ||
            (s->dgc && !s->decay))
            return HS_E_NOMEM;
    }
    if (compressed) {
        if ((status = compress_create(c, sim->sc->seed, n, s->d, &s->compressor)) != HS_OK ||
            (status = ring_gather_init(&s->gather, n, SYNC_BLOCK)) != HS_OK)
            return hs_diag_set(sim->diag, status, NULL, 0, "out of memory for compression");
        return HS_OK;
    }
    return byzantine_create(sim->sc, &sim->world, sim->trainer, s->d, sim->diag, &s->byzantine);
}

/* Compressed path, train mode: every agent's message and the mean of the contributions. */
static int sync_compress_step(SyncState *s, Sim *sim)
{
    int n = sim->world.n;
    if (sim->trainer == NULL) {
        for (int i = 0; i < n; i++) s->bytes[i] = compress_expected_bytes(s->compressor, i);
        return HS_OK;
    }
    memset(s->update, 0, s->d * sizeof *s->update);
    for (int i = 0; i < n; i++) {
        int status = trainer_gradient(sim->trainer, i, s->gradient);
        if (status != HS_OK) return status;
        float *h = s->n_state > 0 ? trainer_buffer(sim->trainer, i, 0) : NULL;
        float *err = s->n_state > 1 ? trainer_buffer(sim->trainer, i, 1) : NULL;
        const float *v = s->gradient;
        if (s->worker_momentum) {
            const OptimSpec *o = &sim->sc->optim;
            compress_worker_momentum(trainer_buffer(sim->trainer, i, s->n_state), s->sent, trainer_params(sim->trainer, i), s->gradient,
                                     s->d, o->momentum, o->weight_decay, o->nesterov);
            v = s->sent;
        }
        if (s->dgc) {
            /* h is e_i, err is u_i. Momentum correction: e_i accumulates the velocity; the
             * weight decay stays out of what is sent (sync_apply_local) */
            const OptimSpec *o = &sim->sc->optim;
            int heavy = o->kind == OPTIM_MOMENTUM;
            compress_dgc_clip(s->gradient, s->d, sim->sc->compression.clip, n);
            compress_worker_momentum(err, s->sent, trainer_params(sim->trainer, i), s->gradient, s->d,
                                     heavy ? o->momentum : 0, 0, heavy && o->nesterov);
            v = s->sent;
        }
        size_t kept = compress_feedback(s->compressor, i, v, h, err, s->message);
        if (s->dgc && sim->sc->compression.masking) compress_dgc_mask(err, s->message, s->d);
        s->bytes[i] = compress_wire_bytes(s->d, kept);
        vec_axpy(s->update, 1.0f, compress_contributes_message(&sim->sc->compression) ? s->message : h, s->d);
    }
    vec_scale(s->update, 1.0f / (float)n, s->d);
    return HS_OK;
}

/* Robust path, train mode: gradients, attacks, the aggregate. */
static int sync_robust_step(SyncState *s, Sim *sim)
{
    if (sim->trainer == NULL) return HS_OK;
    for (int i = 0; i < sim->world.n; i++) {
        float *g = trainer_buffer(sim->trainer, i, 0);
        int status = byzantine_is_attacker(s->byzantine, i) && byzantine_flips_labels(s->byzantine)
                         ? byzantine_gradient(s->byzantine, i, trainer_params(sim->trainer, i), g, sim->diag)
                         : trainer_gradient(sim->trainer, i, g);
        if (status != HS_OK) return status;
        s->vectors[i] = g;
        s->outs[i] = g;
    }
    byzantine_attack(s->byzantine, s->vectors, s->outs);
    return byzantine_aggregate(s->byzantine, s->vectors, s->update);
}

/* Agent 0's optimiser applies the update; everybody copies the result. */
static int sync_apply_local(SyncState *s, Sim *sim)
{
    if (sim->trainer == NULL) return HS_OK;
    size_t params = trainer_param_count(sim->trainer);
    float *x = trainer_params(sim->trainer, 0);
    if (s->dgc) {
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
    } else if (s->worker_momentum) {
        /* the momentum (and weight decay) are in the agents' vectors already */
        const float rate = (float)trainer_schedule_lr(sim->sc, engine_round(sim->engine));
        for (size_t j = 0; j < s->d; j++) x[j] -= rate * s->update[j];
    } else {
        int status = trainer_optimizer_step(sim->trainer, 0, s->update);
        if (status != HS_OK) return status;
    }
    for (int i = 1; i < sim->world.n; i++) memcpy(trainer_params(sim->trainer, i), x, params * sizeof *x);
    return HS_OK;
}

static int sync_start_step(SyncState *s, Sim *sim)
{
    int status;
    if (s->compressor) {
        ring_gather_begin(&s->gather, NULL, sim->world.n);
        for (int i = 0; i < sim->world.n; i++)
            if ((status = engine_compute(sim->engine, i, s->step_flops, SYNC_COMPUTED, 0, NULL)) != HS_OK)
                return status;
        return sync_compress_step(s, sim);
    }
    if (isfinite(s->deadline)) {
        s->serial++;
        s->n_members = 0;
        s->closed = 0;
        for (int i = 0; i < sim->world.n; i++)
            if ((status = engine_compute(sim->engine, i, s->step_flops, SYNC_COMPUTED, s->serial, NULL)) != HS_OK)
                return status;
        return HS_OK;
    }
    if (s->prune.on) {
        if (prune_shells_begin(&s->prune, NULL, sim->world.n, 1, SYNC_REDUCED) != HS_OK)
            return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < sim->world.n; i++)
            if ((status = engine_compute(sim->engine, i, s->prune.step_flops[i], SYNC_COMPUTED, 0, NULL)) != HS_OK)
                return status;
        return trainer_shared_width_gradients(sim->trainer, NULL, sim->world.n, s->prune.widths);
    }
    engine_collective_begin(&s->allreduce, NULL, sim->world.n, sim_model_bytes(sim), 1, SYNC_REDUCED, 0);
    for (int i = 0; i < sim->world.n; i++)
        if ((status = engine_compute(sim->engine, i, s->step_flops, SYNC_COMPUTED, 0, NULL)) != HS_OK) return status;
    if (s->byzantine) return sync_robust_step(s, sim);
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
    if (s->compressor) compress_begin_round(s->compressor, round);
    if (s->prune.on) sim->round_extra = prune_smallest_keep(&s->prune);
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
    int status = s->compressor || s->byzantine ? sync_apply_local(s, sim) : trainer_shared_apply(sim->trainer);
    if (status != HS_OK) return status;
    if (++s->step < s->steps_per_round) return sync_start_step(s, sim);
    engine_end_round(sim->engine);
    return HS_OK;
}

static int sync_on_event(void *state, Sim *sim, const Event *ev)
{
    SyncState *s = state;
    if (s->compressor) {
        int complete;
        int status = ev->kind == SYNC_COMPUTED
                         ? ring_gather_offer(sim->engine, &s->gather, ev->agent, s->bytes[ev->agent], &complete)
                         : ring_gather_arrived(sim->engine, &s->gather, ev, &complete);
        if (status != HS_OK) return status;
        return complete ? sync_finish_step(s, sim) : HS_OK;
    }
    if (ev->kind == SYNC_REDUCED) return s->prune.on && !prune_shells_done(&s->prune) ? HS_OK : sync_finish_step(s, sim);
    if (isfinite(s->deadline)) return sync_deadline_event(s, sim, ev);
    if (s->prune.on) return prune_shells_join(sim->engine, &s->prune, ev->agent);
    return engine_collective_join(sim->engine, &s->allreduce, ev->agent);
}

static void sync_destroy(void *state)
{
    SyncState *s = state;
    if (s == NULL) return;
    compress_free(s->compressor);
    ring_gather_free(&s->gather);
    byzantine_free(s->byzantine);
    free(s->bytes);
    free(s->gradient);
    free(s->message);
    free(s->sent);
    free(s->decay);
    free(s->update);
    free(s->vectors);
    free(s->outs);
    free(s->members);
    prune_free(&s->prune);
    free(s);
}

static const SchemaKey sync_keys[] = {
    METHOD_KEY(SyncKeys, deadline, "none",
               "none, or how long after the first gradient a step waits before leaving stragglers out",
               .type = SCHEMA_TIME, .unit = UNIT_TIME, .min = 0, .max = INFINITY),
    PRUNE_METHOD_KEYS(SyncKeys, pruning.),
    {0},
};

static const MethodStages sync_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient of the shared model",
    .outgoing = "its gradient",
    .aggregate = "all-reduce mean of the gradients",
    .refuses = {
        [FEATURE_PRIVACY_SAMPLE] = STAGE_NOT_WIRED,
        [FEATURE_PRIVACY_UPDATE] = STAGE_NOT_WIRED,
        [FEATURE_FREEZE] = STAGE_NOT_WIRED,
    },
};

const MethodOps method_sync = {
    .name = "sync",
    .summary = "synchronous data parallel: all-reduce of gradients every step",
    .keys = sync_keys,
    .keys_size = sizeof(SyncKeys),
    .capabilities = METHOD_WORKER_MOMENTUM | METHOD_ACCUMULATES,
    .stages = &sync_stages,
    .validate = sync_validate,
    .create = sync_create,
    .round_begin = sync_round_begin,
    .on_event = sync_on_event,
    .destroy = sync_destroy,
};
