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
 *   momentum_at_average = keep | reset | average   (localsgd and qsr; [model] optimizer =
 *                       momentum) what an averaging does to the members' velocities:
 *                       each keeps its own (the default, and the behaviour before the key),
 *                       zeroed, or averaged with the parameters' weights. Train mode only:
 *                       timing is the same whichever it is.
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
 * prune = width (sim/stages/prune.h): slow agents train a nested sub-model at
 * their keep ratio (FLOPs of that sub-model per step) and the average runs as nested
 * all-reduce shells, each coordinate averaged over the members holding it.
 * rounds.extra holds the smallest keep ratio.
 *
 * freeze = progressive (sim/stages/local_step.h): SmartFreeze's progressive training (Wu et al.,
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
 * [privacy] (sim/stages/privacy.h): clip = sample makes every local step a DP-SGD
 * step; clip = update clips each member's update over its period before the average and
 * adds the aggregate's Gaussian noise after it. With weighting = samples this is DP-FedAvg
 * without a server (seed 003's setting); the server-based fedavg calls the same functions.
 * [byzantine]: the rule over the members' models, the attackers' replaced, the timing the
 * dense all-reduce's (sim/stages/aggregate.h). Which features combine: features.c's pairs.
 * [drift] (sim/stages/drift.h): fedprox pulls every local step towards the period's
 * starting model; scaffold corrects it by c - c_i, and the averaging all-reduce carries
 * the control variates' changes too (twice the bytes), so every agent holds the same c.
 *
 * The features are the stages' (sim/stages/stages.h): the local step decides which step
 * an agent takes (local_step_run), the outgoing stage what a compressed delta costs, the
 * aggregation how the models are combined; this file plays the protocol. */
#include "sim/methods/method.h"
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
typedef struct LocalSgdKeys {
    int local_steps;       /* 0: epoch */
    int weighting;         /* LOCALSGD_BY_SAMPLES or LOCALSGD_UNIFORM */
    double participation;  /* (0, 1] */
    PruneKeys pruning;     /* localsgd */
    FreezeKeys freezing;   /* localsgd */
    int H_base;            /* qsr */
    double alpha;          /* qsr */
    int momentum_at_average; /* TrainerMomentum: the velocities when the models are averaged */
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
    TrainerMomentum momentum; /* what an averaging does to the members' velocities */
    int round_steps;      /* S, for numeric local_steps */
    int period_done;      /* steps already done this round before this period */
    int *remaining;       /* (n) steps left in the current period per agent */
    Collective average;
    Stages st;
    /* [compression]: the deltas go round a ring all-gather */
    RingGather gather;
    size_t d;               /* entries exchanged: the model's blocks */
    const float **contribution; /* (n) each agent's, this period */
    const float **ordered;  /* (n) the members' contributions in member order */
    float *anchor;          /* (d) xbar, the last average */
    float *delta;           /* (d) scratch */
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

/* steps: (n) each agent's steps per round for prune's rule, NULL when every agent takes
 * the same number (qsr). */
static int localsgd_read_common(Sim *sim, LocalSgdState *s, const int *steps)
{
    int status;
    const LocalSgdKeys *keys = scenario_method_keys(sim->sc);
    s->participation = keys->participation;
    s->by_samples = keys->weighting == LOCALSGD_BY_SAMPLES;
    s->momentum = (TrainerMomentum)keys->momentum_at_average;
    s->round_steps = sim_round_steps(sim);
    if ((status = trainer_setup_local(sim->trainer, 0)) != HS_OK) return status;
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing, .steps = steps, .keep_messages = 1};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    if (!outgoing_compresses(&s->st.out)) return HS_OK;
    int n = sim->world.n;
    s->d = (size_t)sim->profile.total_params;
    s->contribution = calloc((size_t)n, sizeof *s->contribution);
    s->ordered = calloc((size_t)n, sizeof *s->ordered);
    if (!s->contribution || !s->ordered) return HS_E_NOMEM;
    if ((status = ring_gather_init(&s->gather, n, LOCALSGD_BLOCK)) != HS_OK)
        return hs_diag_set(sim->diag, status, NULL, 0, "out of memory for compression");
    if (sim->trainer) {
        s->anchor = malloc(s->d * sizeof *s->anchor);
        s->delta = malloc(s->d * sizeof *s->delta);
        if (!s->anchor || !s->delta) return HS_E_NOMEM;
        memcpy(s->anchor, trainer_params(sim->trainer, 0), s->d * sizeof *s->anchor);
    }
    return HS_OK;
}

/* The agent's period is over: its message (train mode: the compressed delta). */
static void localsgd_compress_delta(LocalSgdState *s, Sim *sim, int agent)
{
    if (sim->trainer) {
        const float *x = trainer_params(sim->trainer, agent);
        for (size_t j = 0; j < s->d; j++) s->delta[j] = x[j] - s->anchor[j];
    }
    s->contribution[agent] = outgoing_change(&s->st.out, agent, sim->trainer ? s->delta : NULL);
}

/* The period's averaging among its members. */
static int localsgd_average(LocalSgdState *s, Sim *sim)
{
    if (outgoing_compresses(&s->st.out)) {
        for (int k = 0; k < s->n_members; k++) s->ordered[k] = s->contribution[s->members[k]];
        return aggregate_around(&s->st.agg, s->anchor, s->members, s->n_members, s->ordered, s->by_samples);
    }
    return aggregate_models(&s->st.agg, &s->st.out, s->members, s->n_members, s->by_samples, engine_round(sim->engine),
                            s->period_index);
}

static int localsgd_create(Sim *sim, void **state)
{
    LocalSgdState *s;
    int status = localsgd_alloc(sim, &s);
    *state = s;
    if (status != HS_OK) return status;
    const LocalSgdKeys *keys = scenario_method_keys(sim->sc);
    s->local_steps = keys->local_steps;
    int n = sim->world.n, *steps = malloc((size_t)n * sizeof *steps);
    if (steps == NULL) return HS_E_NOMEM;
    for (int i = 0; i < n; i++) steps[i] = s->local_steps == 0 ? sim_agent_steps(sim, i) : 1;
    status = localsgd_read_common(sim, s, steps);
    free(steps);
    return status;
}

/* Compressed deltas from part of the agents: xbar must stay common knowledge.
 * localsgd's and qsr's. */
static int localsgd_validate(const Scenario *sc, HsDiag *diag)
{
    const LocalSgdKeys *keys = scenario_method_keys(sc);
    if (scenario_feature_on(sc, FEATURE_COMPRESSION) && keys->participation < 1)
        return scenario_key_error(sc, &keys->participation, diag,
                                  "compressed model deltas need every agent to average every period: set "
                                  "participation = 1 (or leave [compression] out)");
    if (keys->momentum_at_average != TRAINER_MOMENTUM_KEEP) {
        if (sc->optim.kind != OPTIM_MOMENTUM)
            return scenario_key_error(sc, &keys->momentum_at_average, diag,
                                      "reset and average act on the velocity of [model] optimizer = momentum "
                                      "(sgd has none; adam's moments are not handled)");
        if (scenario_feature_on(sc, FEATURE_PRUNE) ||
            (scenario_feature_on(sc, FEATURE_COMPRESSION) && sc->compression.feedback == FEEDBACK_DGC))
            return scenario_key_error(sc, &keys->momentum_at_average, diag,
                                      "not available with prune = width (sub-models' velocities) or [compression] "
                                      "feedback = dgc (its own velocities)");
    }
    return HS_OK;
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
    return localsgd_read_common(sim, s, NULL); /* qsr's periods vary: every agent takes the same steps */
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

/* Timing mode, a plain all-reduce: the member's whole period in one sweep (issue 36). Its
 * local steps do no arithmetic here (the stages count them, per agent), so they are taken
 * at once, then what localsgd_period_done does; its computations are booked back to back
 * and it joins the averaging at the last one's end (engine_collective_compute_join): the
 * clocks and rows of one event per step, without the event. Train mode keeps the events
 * (a step's arithmetic runs at its end), and its timings are this path's: train = timing
 * checks the sweep. Not when the sink records every computation (their order is output). */
static int localsgd_sweeps(const LocalSgdState *s, const Sim *sim)
{
    return sim->trainer == NULL && !outgoing_compresses(&s->st.out) && !s->st.step.prune.on &&
           !engine_records_activity(sim->engine);
}

static int localsgd_sweep_period(LocalSgdState *s, Sim *sim, int agent)
{
    int status, steps = s->remaining[agent] > 0 ? s->remaining[agent] : 1; /* the event path's count */
    for (int k = 0; k < steps; k++)
        if ((status = local_step_run(&s->st.step, agent)) != HS_OK) return status;
    s->remaining[agent] = 0;
    if ((status = drift_end(&s->st.drift, agent)) != HS_OK) return status;
    if ((status = outgoing_clip_own(&s->st.out, agent)) != HS_OK) return status;
    return engine_collective_compute_join(sim->engine, &s->average, agent, local_step_flops(&s->st.step, agent), steps);
}

static int localsgd_start_period(LocalSgdState *s, Sim *sim)
{
    localsgd_draw_members(s, sim);
    s->period_index++;
    LocalStep *step = &s->st.step;
    if (outgoing_compresses(&s->st.out)) {
        ring_gather_begin(&s->gather, s->members, s->n_members);
    } else if (step->prune.on) {
        if (prune_shells_begin(&step->prune, s->members, s->n_members, 1, LOCALSGD_AVERAGED) != HS_OK)
            return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    } else {
        /* every member exchanges the same: the model, or the stage that trains */
        engine_collective_begin(&s->average, s->members, s->n_members, stages_model_bytes(&s->st, s->members[0]), 1,
                                LOCALSGD_AVERAGED, 0);
    }
    int status = outgoing_period_begin(&s->st.out, s->members, s->n_members);
    if (status != HS_OK) return status;
    int period = s->local_steps, sweep = localsgd_sweeps(s, sim);
    if (period > 0 && s->period_done + period > s->round_steps) period = s->round_steps - s->period_done;
    for (int k = 0; k < s->n_members; k++) {
        int i = s->members[k];
        if (sim->trainer && drift_on(&s->st.drift) &&
            (status = drift_begin(&s->st.drift, i, trainer_params(sim->trainer, i))) != HS_OK)
            return status;
        s->remaining[i] = s->local_steps == 0 ? sim_agent_steps(sim, i) : period;
        status = sweep ? localsgd_sweep_period(s, sim, i)
                       : engine_compute(sim->engine, i, local_step_flops(step, i), LOCALSGD_STEPPED, 0, NULL);
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
    stages_begin_round(&s->st, round);
    double extra = local_step_extra(&s->st.step);
    if (!isnan(extra)) sim->round_extra = extra;
    if (s->qsr) {
        s->local_steps = qsr_period(s, trainer_schedule_lr(sim->sc, engine_round(sim->engine)), s->round_steps);
        sim->round_extra = s->local_steps;
    }
    return localsgd_start_period(s, sim);
}

/* Agent's period is over: it joins the averaging. */
static int localsgd_period_done(LocalSgdState *s, Sim *sim, int agent, int *complete)
{
    int status;
    *complete = 0;
    if ((status = drift_end(&s->st.drift, agent)) != HS_OK) return status;
    if (s->st.step.prune.on) return prune_shells_join(sim->engine, &s->st.step.prune, agent);
    if (!outgoing_compresses(&s->st.out)) {
        if ((status = outgoing_clip_own(&s->st.out, agent)) != HS_OK) return status;
        return engine_collective_join(sim->engine, &s->average, agent);
    }
    localsgd_compress_delta(s, sim, agent);
    return ring_gather_offer(sim->engine, &s->gather, agent, outgoing_bytes(&s->st.out, agent), complete);
}

static int localsgd_on_event(void *state, Sim *sim, const Event *ev)
{
    LocalSgdState *s = state;
    int status, complete = 1;
    if (ev->kind == LOCALSGD_STEPPED) {
        /* The step's arithmetic runs at its completion: nobody else touches this
         * agent's model during a period, so the parameters are those it started with. */
        if ((status = local_step_run(&s->st.step, ev->agent)) != HS_OK) return status;
        if (--s->remaining[ev->agent] > 0)
            return engine_compute(sim->engine, ev->agent, local_step_flops(&s->st.step, ev->agent), LOCALSGD_STEPPED, 0,
                                  NULL);
        status = localsgd_period_done(s, sim, ev->agent, &complete);
    } else if (ev->kind == LOCALSGD_BLOCK) {
        status = ring_gather_arrived(sim->engine, &s->gather, ev, &complete);
    } else {
        status = HS_OK;
        complete = !s->st.step.prune.on || prune_shells_done(&s->st.step.prune);
    }
    if (status != HS_OK || !complete) return status;
    if ((status = localsgd_average(s, sim)) != HS_OK) return status;
    if ((status = drift_commit(&s->st.drift, s->members, s->n_members)) != HS_OK) return status;
    if ((status = trainer_momentum_at_average(sim->trainer, s->members, s->n_members, s->by_samples, s->momentum)) !=
        HS_OK)
        return status;
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
    stages_free(&s->st);
    ring_gather_free(&s->gather);
    free(s->contribution);
    free(s->ordered);
    free(s->anchor);
    free(s->delta);
    if (s->rng) gsl_rng_free(s->rng);
    free(s);
}

/* localsgd's and qsr's: who averages, with which weights */
#define LOCALSGD_AVERAGING_KEYS                                                                              \
    METHOD_KEY(LocalSgdKeys, weighting, "samples", "model averaging weights: samples (FedAvg) or uniform",     \
               .type = SCHEMA_CHOICE, .choices = "samples|uniform"),                                        \
    METHOD_KEY(LocalSgdKeys, participation, "1", "share of agents that train and average each period",        \
               .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OPEN_MIN)

/* localsgd's and qsr's (the order of TrainerMomentum) */
#define LOCALSGD_MOMENTUM_KEY                                                                                \
    METHOD_KEY(LocalSgdKeys, momentum_at_average, "keep",                                                    \
               "the agents' [model] momentum velocities when the models are averaged: keep (each its own), " \
               "reset (zeroed) or average (like the parameters)",                                            \
               .type = SCHEMA_CHOICE, .choices = "keep|reset|average", .flags = SCHEMA_OMIT_DEFAULT)

static const SchemaKey localsgd_keys[] = {
    METHOD_KEY(LocalSgdKeys, local_steps, "epoch", "local steps between averagings: a number, or epoch",
               .type = SCHEMA_STEPS, .min = 1, .max = 100000000, .flags = SCHEMA_WITHIN_ROUND,
               .doc_range = "epoch | [1, a round's steps]"),
    LOCALSGD_AVERAGING_KEYS,
    PRUNE_METHOD_KEYS_ALWAYS(LocalSgdKeys, pruning.),
    FREEZE_METHOD_KEYS_ALWAYS(LocalSgdKeys, freezing.),
    LOCALSGD_MOMENTUM_KEY,
    {0},
};

static const MethodStages localsgd_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps on its own model",
    .outgoing = "its model (compressed: its change since the last average)",
    .aggregate = "all-reduce weighted mean of the models",
};

static const MethodExtra localsgd_extras[] = {
    LOCAL_STEP_EXTRA,
    {0},
};

const MethodOps method_localsgd = {
    .name = "localsgd",
    .summary = "Local SGD / FedAvg: local steps, then model averaging by all-reduce",
    .keys = localsgd_keys,
    .keys_size = sizeof(LocalSgdKeys),
    .capabilities = METHOD_LOSSY_RINGS | METHOD_ACCUMULATES,
    .stages = &localsgd_stages,
    .extra = localsgd_extras,
    .validate = localsgd_validate,
    .create = localsgd_create,
    .round_begin = localsgd_round_begin,
    .on_event = localsgd_on_event,
    .destroy = localsgd_destroy,
};

static const SchemaKey qsr_keys[] = {
    METHOD_KEY(LocalSgdKeys, H_base, "2", "smallest period (local steps between averagings)",
               .type = SCHEMA_INT, .min = 1, .max = 100000000, .flags = SCHEMA_WITHIN_ROUND,
               .doc_range = "[1, a round's steps]"),
    METHOD_KEY(LocalSgdKeys, alpha, "0.2", "QSR coefficient: H = max(H_base, floor((alpha / lr)^2))",
               .type = SCHEMA_REAL, .min = 0, .max = 1e6),
    LOCALSGD_AVERAGING_KEYS,
    LOCALSGD_MOMENTUM_KEY,
    PRUNE_METHOD_KEYS(LocalSgdKeys, pruning.),
    FREEZE_METHOD_KEYS(LocalSgdKeys, freezing.),
    {0},
};

static const MethodStages qsr_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps on its own model",
    .outgoing = "its model (compressed: its change since the last average)",
    .aggregate = "all-reduce weighted mean of the models",
};

static const MethodExtra qsr_extras[] = {
    {.meaning = "H, the round's period: local steps between averagings"},
    {0},
};

const MethodOps method_qsr = {
    .name = "qsr",
    .summary = "Local SGD whose period follows the Quadratic Synchronization Rule",
    .keys = qsr_keys,
    .keys_size = sizeof(LocalSgdKeys),
    .capabilities = METHOD_LOSSY_RINGS | METHOD_ACCUMULATES,
    .validate = localsgd_validate,
    .stages = &qsr_stages,
    .extra = qsr_extras,
    .create = qsr_create,
    .round_begin = localsgd_round_begin,
    .on_event = localsgd_on_event,
    .destroy = localsgd_destroy,
};
