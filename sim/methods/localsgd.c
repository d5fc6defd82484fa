/* localsgd.c — Local SGD / FedAvg: H local steps on each agent's own model, then the
 * models are averaged by a blocking ring all-reduce.
 *   local_steps = epoch  every agent makes one pass over its own data (ceil(n_i/batch)
 *                        steps, so agents with more data take longer), then averages:
 *                        one averaging per round. This is ComDML's no-offload twin.
 *   local_steps = H      a round is a global epoch of S = ceil(mean n_i / batch) steps,
 *                        averaged every H steps (the last period may be shorter).
 *   weighting = samples (FedAvg) | uniform
 *   participation = p   each period a seeded random share p of the agents trains and
 *                       averages; the others sit the period out (idle, no bytes)
 * qsr — Local SGD with the Quadratic Synchronization Rule (Gu et al., ICLR 2024): the
 * period is H = max(H_base, floor((alpha / lr)^2)) with lr this round's learning rate,
 * so the period grows as the schedule decays lr. H is logged in rounds.extra.
 *
 * [compression] (sim/stages/compress.h): instead of the models, each agent sends C(...) of its
 * model delta since the last average, delta_i = x_i - xbar, with the configured feedback
 * (EF21 then tracks the deltas: g_i += C(delta_i - g_i)); the messages go round a ring
 * all-gather, and every agent sets xbar <- xbar + weighted mean of the contributions
 * (g_i, h_i or C(delta_i)) over the blocks (the unused auxiliary heads stay as they
 * are). Every agent must take part in every averaging (participation = 1, checked by
 * localsgd_validate), so xbar is common knowledge and held once.
 * feedback = ef: the agent sends C(e_i + delta_i) and keeps the rest in e_i for the next
 * period; the contribution is the message.
 * feedback = dgc (Lin et al., ICLR 2018, there for per-step gradients): the local steps
 * are DGC's own instead of the [model] optimiser's: g is clipped to clip / sqrt(N) and the
 * agent steps x_i <- x_i - lr (u_i <- mu u_i + g + wd x_i; Nesterov: g + wd x_i + mu u_i).
 * At the end of the period delta_i (= -lr times the sum of those velocities: momentum
 * correction, the accumulated quantity is the velocity, not the gradient) goes through
 * ef's accumulation, and u_i is zeroed where the message is non-zero (momentum factor
 * masking). With local_steps = 1 and a constant lr this is sync's dgc scaled by -lr,
 * except that the weight decay joins u_i here (each agent's x_i differs within a period).
 * The paper does not treat local steps; this composition is ours.
 *
 * prune = width (localsgd only; sim/stages/prune.h): slow agents train a nested sub-model at
 * their keep ratio (FLOPs of that sub-model per step) and the average runs as nested
 * all-reduce shells, each coordinate averaged over the members holding it.
 * rounds.extra holds the smallest keep ratio.
 *
 * freeze = progressive (localsgd only): SmartFreeze's progressive training (Wu et al.,
 * "Heterogeneity-Aware Memory Efficient Federated Learning via Progressive Layer
 * Freezing", 2024). The model's L blocks are trained one at a time, front to back:
 * in stage s every agent trains block s with its output module (the auxiliary head of
 * split s; the last stage uses the model's own output) while blocks 1..s-1 are frozen
 * (forward only: no backward, nothing sent; the paper's memory saving is not modelled,
 * the cost model has no memory term), and only block s and its head are averaged. A
 * step costs model_profile_stage_flops, an averaging 4 * model_profile_stage_params bytes.
 * Subset of the paper, on purpose: its pace controller freezes a block once its
 * parameters' perturbation settles, which depends on the trained values, and timing mode
 * must time a run without training; here the pace is fixed, `freeze_rounds` rounds per
 * stage (the last stage then runs to the end), so both modes time it identically. The
 * paper's participant selector (memory- and data-aware choice of who trains each block)
 * is not modelled: everybody trains. rounds.extra holds the stage.
 *
 * [privacy] (sim/stages/privacy.h, localsgd only): clip = sample makes every local step a DP-SGD
 * step; clip = update clips each member's update over its period before the average and
 * adds the aggregate's Gaussian noise after it. With weighting = samples this is DP-FedAvg
 * without a server (seed 003's setting); the server-based fedavg calls the same functions.
 * Not combined with prune or freeze (input errors). */
#include "sim/stages/compress.h"
#include "sim/stages/privacy.h"
#include "sim/methods/method.h"
#include "sim/stages/prune.h"
#include "sim/train/trainer.h"

#include "models/model.h"
#include "sim/kernel/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LOCALSGD_STEPPED = ENGINE_EVENT_METHOD, LOCALSGD_AVERAGED, LOCALSGD_BLOCK };

/* [method] keys of localsgd (localsgd_keys) and qsr (qsr_keys): one struct, each
 * method's rows land in its own fields (the other method's stay 0). */
enum { LOCALSGD_BY_SAMPLES = 0, LOCALSGD_UNIFORM = 1 };   /* weighting's choices */
enum { LOCALSGD_FREEZE_NONE = 0, LOCALSGD_PROGRESSIVE = 1 }; /* freeze's */
typedef struct LocalSgdKeys {
    int local_steps;       /* 0: epoch */
    int weighting;         /* LOCALSGD_BY_SAMPLES or LOCALSGD_UNIFORM */
    double participation;  /* (0, 1] */
    PruneKeys pruning;     /* localsgd */
    int freeze;            /* localsgd: LOCALSGD_FREEZE_NONE or LOCALSGD_PROGRESSIVE */
    int freeze_rounds;
    int H_base;            /* qsr */
    double alpha;          /* qsr */
} LocalSgdKeys;

typedef struct LocalSgdState {
    int local_steps;      /* 0 = one local epoch */
    int qsr;              /* period from the quadratic synchronization rule */
    int h_base;
    double qsr_alpha;
    double participation;
    gsl_rng *rng;         /* participation draws, re-seeded per (round, period) */
    int *members;         /* (n) this period's participants */
    int n_members;
    int period_index;
    int by_samples;
    int round_steps;      /* S, for numeric local_steps */
    int period_done;      /* steps already done this round before this period */
    int *remaining;       /* (n) steps left in the current period per agent */
    double step_flops;
    Collective average;
    /* [compression] */
    Compressor *compressor; /* NULL: dense model averaging */
    RingGather gather;
    size_t d;               /* entries exchanged: the model's blocks */
    int n_state;            /* feedback vectors per agent (compress_state_vectors) */
    int dgc;                /* feedback = dgc: local steps by localsgd_dgc_step */
    float *gradient;        /* (params) dgc scratch */
    float *step;            /* (d) dgc scratch */
    double *bytes;          /* (n) this period's message sizes */
    double *weights;        /* (n) averaging weights of the members */
    const float **contributions; /* (n) */
    float *anchor;          /* (d) xbar, the last average */
    float *delta;           /* (d) scratch */
    float *mean;            /* (d) scratch */
    Prune prune;            /* prune = width */
    int freeze_rounds;      /* freeze = progressive: rounds per stage; 0 = off */
    int stage;              /* this round's stage (1..L) */
    Privacy *privacy;       /* [privacy] clip != none; NULL otherwise */
} LocalSgdState;

static int localsgd_alloc(Sim *sim, LocalSgdState **out)
{
    LocalSgdState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *out = s;
    s->remaining = calloc((size_t)sim->world.n, sizeof *s->remaining);
    s->members = calloc((size_t)sim->world.n, sizeof *s->members);
    s->rng = gsl_rng_alloc(gsl_rng_taus2);
    if (s->remaining == NULL || s->members == NULL || s->rng == NULL) return HS_E_NOMEM;
    return HS_OK;
}

static int localsgd_read_common(Sim *sim, LocalSgdState *s)
{
    int status;
    const LocalSgdKeys *keys = scenario_method_keys(sim->sc);
    s->participation = keys->participation;
    s->by_samples = keys->weighting == LOCALSGD_BY_SAMPLES;
    s->round_steps = sim_round_steps(sim);
    s->step_flops = sim_step_flops(sim, sim->sc->model.batch);
    const CompressionSpec *c = &sim->sc->compression;
    if (!c->present || c->scheme == COMPRESS_NONE) return trainer_setup_local(sim->trainer, 0);
    /* buffer 0: the agent's contribution (its message, or EF21's g_i / EControl's h_i);
     * buffer 1: EControl's e_i, or ef's and dgc's accumulated e_i; buffer 2: dgc's u_i */
    int n = sim->world.n;
    s->n_state = compress_state_vectors(c);
    s->d = (size_t)sim->profile.total_params;
    int message_buffer = compress_contributes_message(c) && s->n_state > 0;
    if ((status = trainer_setup_local(sim->trainer, message_buffer + (s->n_state > 1 ? 2 : 1))) != HS_OK) return status;
    s->dgc = c->feedback == FEEDBACK_DGC;
    s->bytes = calloc((size_t)n, sizeof *s->bytes);
    s->weights = calloc((size_t)n, sizeof *s->weights);
    s->contributions = calloc((size_t)n, sizeof *s->contributions);
    if (!s->bytes || !s->weights || !s->contributions) return HS_E_NOMEM;
    if ((status = compress_create(c, sim->sc->seed, n, s->d, &s->compressor)) != HS_OK ||
        (status = ring_gather_init(&s->gather, n, LOCALSGD_BLOCK)) != HS_OK)
        return hs_diag_set(sim->diag, status, NULL, 0, "out of memory for compression");
    if (sim->trainer) {
        s->anchor = malloc(s->d * sizeof *s->anchor);
        s->delta = malloc(s->d * sizeof *s->delta);
        s->mean = malloc(s->d * sizeof *s->mean);
        if (!s->anchor || !s->delta || !s->mean) return HS_E_NOMEM;
        if (s->dgc) {
            s->gradient = malloc(trainer_param_count(sim->trainer) * sizeof *s->gradient);
            s->step = malloc(s->d * sizeof *s->step);
            if (!s->gradient || !s->step) return HS_E_NOMEM;
        }
        memcpy(s->anchor, trainer_params(sim->trainer, 0), s->d * sizeof *s->anchor);
    }
    return HS_OK;
}

/* The agent's period is over: its message (train mode: the compressed delta). */
static int localsgd_compress_delta(LocalSgdState *s, Sim *sim, int agent)
{
    if (sim->trainer == NULL) {
        s->bytes[agent] = compress_expected_bytes(s->compressor, agent);
        return HS_OK;
    }
    const float *x = trainer_params(sim->trainer, agent);
    for (size_t j = 0; j < s->d; j++) s->delta[j] = x[j] - s->anchor[j];
    float *contribution = trainer_buffer(sim->trainer, agent, 0);
    size_t kept;
    const CompressionSpec *c = &sim->sc->compression;
    if (s->n_state == 0) {
        kept = compress_feedback(s->compressor, agent, s->delta, NULL, NULL, contribution);
    } else if (compress_contributes_message(c)) { /* ef, dgc: e_i in buffer 1 */
        kept = compress_feedback(s->compressor, agent, s->delta, trainer_buffer(sim->trainer, agent, 1), NULL,
                                 contribution);
        if (s->dgc && c->masking) compress_dgc_mask(trainer_buffer(sim->trainer, agent, 2), contribution, s->d);
    } else {
        kept = compress_feedback(s->compressor, agent, s->delta, contribution,
                                 s->n_state > 1 ? trainer_buffer(sim->trainer, agent, 1) : NULL, s->mean);
    }
    s->bytes[agent] = compress_wire_bytes(s->d, kept);
    return HS_OK;
}

/* DGC's local step: clipped gradient, the agent's own velocity u_i (buffer 2), a plain
 * step on the block parameters (the auxiliary heads are not trained by localsgd). */
static int localsgd_dgc_step(LocalSgdState *s, Sim *sim, int agent)
{
    if (sim->trainer == NULL) return HS_OK;
    int status = trainer_gradient(sim->trainer, agent, s->gradient);
    if (status != HS_OK) return status;
    const OptimSpec *o = &sim->sc->optim;
    int heavy = o->kind == OPTIM_MOMENTUM;
    float *x = trainer_params(sim->trainer, agent);
    compress_dgc_clip(s->gradient, s->d, sim->sc->compression.clip, sim->world.n);
    compress_worker_momentum(trainer_buffer(sim->trainer, agent, 2), s->step, x, s->gradient, s->d,
                             heavy ? o->momentum : 0, o->weight_decay, heavy && o->nesterov);
    const float rate = (float)trainer_schedule_lr(sim->sc, engine_round(sim->engine));
    for (size_t j = 0; j < s->d; j++) x[j] -= rate * s->step[j];
    return HS_OK;
}

/* Everybody holds every message: xbar += weighted mean of the contributions. */
static int localsgd_compressed_average(LocalSgdState *s, Sim *sim)
{
    if (sim->trainer == NULL) return HS_OK;
    for (int k = 0; k < s->n_members; k++) {
        int i = s->members[k];
        s->weights[k] = s->by_samples ? sim->world.agents[i].samples : 1.0;
        s->contributions[k] = trainer_buffer(sim->trainer, i, 0);
    }
    int status = vec_weighted_average(s->mean, s->contributions, s->weights, s->n_members, s->d);
    if (status != HS_OK) return hs_diag_set(sim->diag, HS_E_INTERNAL, NULL, 0, "cannot average the messages");
    for (size_t j = 0; j < s->d; j++) s->anchor[j] += s->mean[j];
    for (int k = 0; k < s->n_members; k++)
        memcpy(trainer_params(sim->trainer, s->members[k]), s->anchor, s->d * sizeof *s->anchor);
    return HS_OK;
}

static int localsgd_create(Sim *sim, void **state)
{
    LocalSgdState *s;
    int status = localsgd_alloc(sim, &s);
    *state = s;
    if (status != HS_OK) return status;
    const LocalSgdKeys *keys = scenario_method_keys(sim->sc);
    s->local_steps = keys->local_steps;
    if ((status = localsgd_read_common(sim, s)) != HS_OK) return status;
    if (keys->freeze == LOCALSGD_PROGRESSIVE) s->freeze_rounds = keys->freeze_rounds;
    int n = sim->world.n, *steps = malloc((size_t)n * sizeof *steps);
    if (steps == NULL) return HS_E_NOMEM;
    for (int i = 0; i < n; i++) steps[i] = s->local_steps == 0 ? sim_agent_steps(sim, i) : 1;
    status = prune_create(&keys->pruning, sim->sc, &sim->world, &sim->profile, sim->trainer != NULL, steps, sim->diag,
                          &s->prune);
    free(steps);
    if (status != HS_OK) return status;
    if ((status = privacy_create(sim->sc, &sim->world, sim->trainer, &s->privacy)) != HS_OK)
        return hs_diag_set(sim->diag, status, NULL, 0, "out of memory for [privacy]");
    sim->privacy = s->privacy;
    return HS_OK;
}

/* Combinations whose meaning is not modelled: a pruned or frozen model's compressed or
 * privatised delta, pruning a model that is being frozen, and compressed deltas from
 * part of the agents (xbar must stay common knowledge). ([privacy] with [compression]
 * is the [privacy] section's error.) localsgd's and qsr's. */
static int localsgd_validate(const Scenario *sc, HsDiag *diag)
{
    const LocalSgdKeys *keys = scenario_method_keys(sc);
    int compressed = sc->compression.present && sc->compression.scheme != COMPRESS_NONE;
    if (compressed && keys->participation < 1)
        return scenario_key_error(sc, &keys->participation, diag,
                                  "compressed model deltas need every agent to average every period: set "
                                  "participation = 1 (or leave [compression] out)");
    int prune = keys->pruning.prune == PRUNE_WIDTH, freeze = keys->freeze == LOCALSGD_PROGRESSIVE;
    if (prune && freeze) return scenario_key_error(sc, &keys->freeze, diag, "progressive is not available with prune = width");
    if (prune && compressed)
        return scenario_key_error(sc, &keys->pruning.prune, diag, "width is not available with [compression]");
    if (freeze && compressed)
        return scenario_key_error(sc, &keys->freeze, diag, "progressive is not available with [compression]");
    int privatised = sc->privacy.present && sc->privacy.clip != PRIVACY_CLIP_NONE;
    if (prune && privatised)
        return scenario_key_error(sc, &keys->pruning.prune, diag, "width is not available with [privacy]");
    if (freeze && privatised)
        return scenario_key_error(sc, &keys->freeze, diag, "progressive is not available with [privacy]");
    return HS_OK;
}

/* The step's cost and the averaging's bytes under freeze = progressive. */
static double localsgd_step_flops(const LocalSgdState *s, const Sim *sim, int agent)
{
    if (s->freeze_rounds)
        return sim->sc->model.batch * (model_profile_stage_flops(&sim->profile, s->stage) + sim->profile.loss_flops);
    return s->prune.on ? s->prune.step_flops[agent] : s->step_flops;
}

static int qsr_create(Sim *sim, void **state)
{
    LocalSgdState *s;
    int status = localsgd_alloc(sim, &s);
    *state = s;
    if (status != HS_OK) return status;
    s->qsr = 1;
    const LocalSgdKeys *keys = scenario_method_keys(sim->sc);
    s->h_base = keys->H_base;
    s->qsr_alpha = keys->alpha;
    return localsgd_read_common(sim, s);
}

/* QSR: H = max(H_base, floor((alpha / lr)^2)), capped by the round's steps. */
static int qsr_period(const LocalSgdState *s, double lr, int round_steps)
{
    double h = lr > 0 ? floor(pow(s->qsr_alpha / lr, 2)) : (double)round_steps;
    if (h < s->h_base) h = s->h_base;
    if (h > round_steps) h = round_steps;
    return (int)h;
}

/* This period's participants: all agents, or a seeded share (at least one). */
static void localsgd_draw_members(LocalSgdState *s, Sim *sim)
{
    int n = sim->world.n;
    for (int i = 0; i < n; i++) s->members[i] = i;
    s->n_members = n;
    if (s->participation >= 1) return;
    rng_stream_reset(s->rng, sim->sc->seed, (uint64_t)engine_round(sim->engine) * 65536u + (uint64_t)s->period_index,
                     RNG_PURPOSE_METHOD);
    int k = (int)ceil(s->participation * n);
    if (k < 1) k = 1;
    for (int i = 0; i < k; i++) { /* partial Fisher–Yates, then sort for the ring order */
        int j = i + (int)gsl_rng_uniform_int(s->rng, (unsigned long)(n - i));
        int tmp = s->members[i];
        s->members[i] = s->members[j];
        s->members[j] = tmp;
    }
    s->n_members = k;
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && s->members[j - 1] > s->members[j]; j--) {
            int tmp = s->members[j];
            s->members[j] = s->members[j - 1];
            s->members[j - 1] = tmp;
        }
}

static int localsgd_start_period(LocalSgdState *s, Sim *sim)
{
    localsgd_draw_members(s, sim);
    s->period_index++;
    double bytes = s->freeze_rounds ? 4.0 * model_profile_stage_params(&sim->profile, s->stage) : sim_model_bytes(sim);
    if (s->compressor) {
        ring_gather_begin(&s->gather, s->members, s->n_members);
    } else if (s->prune.on) {
        if (prune_shells_begin(&s->prune, s->members, s->n_members, 1, LOCALSGD_AVERAGED) != HS_OK)
            return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    } else {
        engine_collective_begin(&s->average, s->members, s->n_members, bytes, 1, LOCALSGD_AVERAGED, 0);
    }
    int status = privacy_period_begin(s->privacy, sim->trainer, s->members, s->n_members);
    if (status != HS_OK) return hs_diag_set(sim->diag, status, NULL, 0, "out of memory for [privacy]");
    int period = s->local_steps;
    if (period > 0 && s->period_done + period > s->round_steps) period = s->round_steps - s->period_done;
    for (int k = 0; k < s->n_members; k++) {
        int i = s->members[k];
        s->remaining[i] = s->local_steps == 0 ? sim_agent_steps(sim, i) : period;
        status = engine_compute(sim->engine, i, localsgd_step_flops(s, sim, i), LOCALSGD_STEPPED, 0, NULL);
        if (status != HS_OK) return status;
    }
    s->period_done += period;
    return HS_OK;
}

static int localsgd_round_begin(void *state, Sim *sim, int round)
{
    LocalSgdState *s = state;
    s->period_done = 0;
    s->period_index = 0;
    if (s->compressor) compress_begin_round(s->compressor, round);
    if (s->prune.on) sim->round_extra = prune_smallest_keep(&s->prune);
    if (s->freeze_rounds) {
        s->stage = round / s->freeze_rounds + 1;
        if (s->stage > sim->profile.n_blocks) s->stage = sim->profile.n_blocks;
        sim->round_extra = s->stage;
    }
    if (s->qsr) {
        s->local_steps = qsr_period(s, trainer_schedule_lr(sim->sc, engine_round(sim->engine)), s->round_steps);
        sim->round_extra = s->local_steps;
    }
    return localsgd_start_period(s, sim);
}

static int localsgd_on_event(void *state, Sim *sim, const Event *ev)
{
    LocalSgdState *s = state;
    int status;
    if (ev->kind == LOCALSGD_STEPPED) {
        /* The step's arithmetic runs at its completion: nobody else touches this
         * agent's model during a period, so the parameters are those it started with. */
        if (s->freeze_rounds) status = trainer_stage_step(sim->trainer, ev->agent, s->stage);
        else if (s->prune.on) status = trainer_width_step(sim->trainer, ev->agent, s->prune.widths[ev->agent]);
        else if (s->dgc) status = localsgd_dgc_step(s, sim, ev->agent);
        else status = privacy_local_step(s->privacy, sim->trainer, ev->agent);
        if (status != HS_OK) return status;
        if (--s->remaining[ev->agent] > 0)
            return engine_compute(sim->engine, ev->agent, localsgd_step_flops(s, sim, ev->agent), LOCALSGD_STEPPED, 0,
                                  NULL);
        if (s->prune.on) return prune_shells_join(sim->engine, &s->prune, ev->agent);
        if (s->compressor == NULL) {
            if ((status = privacy_client_done(s->privacy, sim->trainer, ev->agent)) != HS_OK) return status;
            return engine_collective_join(sim->engine, &s->average, ev->agent);
        }
        if ((status = localsgd_compress_delta(s, sim, ev->agent)) != HS_OK) return status;
        int complete;
        status = ring_gather_offer(sim->engine, &s->gather, ev->agent, s->bytes[ev->agent], &complete);
        if (status != HS_OK || !complete) return status;
    } else if (ev->kind == LOCALSGD_BLOCK) {
        int complete;
        status = ring_gather_arrived(sim->engine, &s->gather, ev, &complete);
        if (status != HS_OK || !complete) return status;
    } else if (ev->kind == LOCALSGD_AVERAGED && s->prune.on && !prune_shells_done(&s->prune)) {
        return HS_OK;
    }
    if (s->compressor) status = localsgd_compressed_average(s, sim);
    else if (s->prune.on) status = trainer_average_masked(sim->trainer, s->members, s->n_members, s->by_samples, s->prune.widths);
    else status = privacy_average(s->privacy, sim->trainer, s->members, s->n_members, s->by_samples, engine_round(sim->engine),
                                  s->period_index);
    if (status != HS_OK) return status;
    if (s->local_steps > 0 && s->period_done < s->round_steps) return localsgd_start_period(s, sim);
    engine_end_round(sim->engine);
    return HS_OK;
}

static void localsgd_destroy(void *state)
{
    LocalSgdState *s = state;
    if (s == NULL) return;
    free(s->remaining);
    free(s->members);
    compress_free(s->compressor);
    ring_gather_free(&s->gather);
    free(s->bytes);
    free(s->weights);
    free(s->contributions);
    free(s->anchor);
    free(s->delta);
    free(s->mean);
    free(s->gradient);
    free(s->step);
    prune_free(&s->prune);
    privacy_free(s->privacy);
    if (s->rng) gsl_rng_free(s->rng);
    free(s);
}

static const SchemaKey localsgd_keys[] = {
    METHOD_KEY(LocalSgdKeys, local_steps, "epoch", "local steps between averagings: a number, or epoch",
               .type = SCHEMA_STEPS, .min = 1, .max = 100000000),
    METHOD_KEY(LocalSgdKeys, weighting, "samples", "model averaging weights: samples (FedAvg) or uniform",
               .type = SCHEMA_CHOICE, .choices = "samples|uniform"),
    METHOD_KEY(LocalSgdKeys, participation, "1", "share of agents that train and average each period",
               .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OPEN_MIN),
    PRUNE_METHOD_KEYS(LocalSgdKeys, pruning.),
    METHOD_KEY(LocalSgdKeys, freeze, "none",
               "none, or progressive: train block by block, earlier blocks frozen (SmartFreeze)",
               .type = SCHEMA_CHOICE, .choices = "none|progressive"),
    METHOD_KEY(LocalSgdKeys, freeze_rounds, "2", "freeze = progressive: rounds each block trains before it is frozen",
               .type = SCHEMA_INT, .min = 1, .max = 100000000),
    {0},
};

static const MethodStages localsgd_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps on its own model",
    .outgoing = "its model (compressed: its change since the last average)",
    .aggregate = "all-reduce weighted mean of the models",
    .refuses = {
        [FEATURE_BYZANTINE] = STAGE_NOT_WIRED,
    },
};

const MethodOps method_localsgd = {
    .name = "localsgd",
    .summary = "Local SGD / FedAvg: local steps, then model averaging by all-reduce",
    .keys = localsgd_keys,
    .keys_size = sizeof(LocalSgdKeys),
    .capabilities = METHOD_ACCUMULATES,
    .stages = &localsgd_stages,
    .validate = localsgd_validate,
    .create = localsgd_create,
    .round_begin = localsgd_round_begin,
    .on_event = localsgd_on_event,
    .destroy = localsgd_destroy,
};

static const SchemaKey qsr_keys[] = {
    METHOD_KEY(LocalSgdKeys, H_base, "2", "smallest period (local steps between averagings)",
               .type = SCHEMA_INT, .min = 1, .max = 100000000),
    METHOD_KEY(LocalSgdKeys, alpha, "0.2", "QSR coefficient: H = max(H_base, floor((alpha / lr)^2))",
               .type = SCHEMA_REAL, .min = 0, .max = 1e6),
    METHOD_KEY(LocalSgdKeys, weighting, "samples", "model averaging weights: samples or uniform",
               .type = SCHEMA_CHOICE, .choices = "samples|uniform"),
    METHOD_KEY(LocalSgdKeys, participation, "1", "share of agents that train and average each period",
               .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OPEN_MIN),
    {0},
};

static const MethodStages qsr_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps on its own model",
    .outgoing = "its model (compressed: its change since the last average)",
    .aggregate = "all-reduce weighted mean of the models",
    .refuses = {
        [FEATURE_BYZANTINE] = STAGE_NOT_WIRED,
        [FEATURE_PRIVACY_SAMPLE] = STAGE_NOT_WIRED,
        [FEATURE_PRIVACY_UPDATE] = STAGE_NOT_WIRED,
        [FEATURE_PRUNE] = STAGE_NOT_WIRED,
        [FEATURE_FREEZE] = STAGE_NOT_WIRED,
    },
};

const MethodOps method_qsr = {
    .name = "qsr",
    .summary = "Local SGD whose period follows the Quadratic Synchronization Rule",
    .keys = qsr_keys,
    .keys_size = sizeof(LocalSgdKeys),
    .capabilities = METHOD_ACCUMULATES,
    .validate = localsgd_validate,
    .stages = &qsr_stages,
    .create = qsr_create,
    .round_begin = localsgd_round_begin,
    .on_event = localsgd_on_event,
    .destroy = localsgd_destroy,
};
