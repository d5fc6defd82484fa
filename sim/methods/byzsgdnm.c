/* byzsgdnm.c — ByzSGDnm (Yang, Shi, Li, "On the effect of batch size in
 * Byzantine-robust distributed learning", ICLR 2024): synchronous steps in which every
 * worker keeps a momentum of its own gradients,
 *   u_i <- beta u_i + (1 - beta) g_i          (u_i starts at 0)
 * the robust aggregate of what the workers send is m = Agg(u_1..u_n) ([byzantine]
 * aggregator; attackers send their attack instead of u_i), and the model takes a
 * normalised step
 *   w <- w - lr m / |m|                        (no step when m = 0)
 * with lr this round's learning rate from [model] (its schedule applies; the [model]
 * optimiser, momentum and weight decay do not: the update above replaces them), times
 * (batch / reference_batch)^p for [method] lr_scaling = none (p = 0, the default),
 * linear (p = 1) or sqrt (p = 1/2). Since the step is normalised, lr is its length: at
 * a fixed number of gradient computations a batch B takes steps in proportion to 1/B,
 * so with a fixed lr a larger batch also travels less far; linear scaling keeps the
 * distance lr x steps the same for every batch, which is what a batch-size comparison
 * at fixed computation (the paper's experiment) needs to vary only the noise.
 * Timing is sync's: every step each agent computes a batch gradient and a blocking ring
 * all-reduce of the model's bytes follows, so a step waits for the slowest agent. A
 * round is a global epoch of ceil(mean samples / batch) steps. Like sync's robust path,
 * agents keep identical models (agent 0's is stepped, the others copy).
 * [agents] batch: one batch for every agent (it is the B of lr_scaling); unequal batches
 * are refused, since the robust aggregate counts every worker's momentum alike. */
#include "sim/stages/byzantine.h"
#include "sim/methods/method.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { BYZSGDNM_COMPUTED = ENGINE_EVENT_METHOD, BYZSGDNM_REDUCED };
enum { BYZSGDNM_GRADIENT = 0, BYZSGDNM_MOMENTUM = 1, BYZSGDNM_SENT = 2 };

typedef struct ByzSgdnmState {
    int steps_per_round;
    int step;
    double beta;
    double lr_factor;      /* (batch / reference_batch)^p of lr_scaling */
    size_t d;              /* entries exchanged: the model's blocks */
    Collective allreduce;
    Byzantine *byzantine;  /* the stages' (always made: ByzSGDnm's rule is the aggregator's) */
    Stages st;
    float *aggregate;      /* (d) */
    const float **vectors; /* (n) the momenta */
    float **outs;          /* (n) attackers' vectors */
    const float **sent;    /* (n) what each agent sends */
} ByzSgdnmState;

/* [method] keys (byzsgdnm_keys below) */
enum { BYZSGDNM_SCALE_NONE = 0, BYZSGDNM_SCALE_LINEAR, BYZSGDNM_SCALE_SQRT }; /* lr_scaling's choices */
typedef struct ByzSgdnmKeys {
    double beta;
    int lr_scaling;        /* BYZSGDNM_SCALE_* */
    int reference_batch;
    FreezeKeys freezing;
} ByzSgdnmKeys;

static int byzsgdnm_validate(const Scenario *sc, HsDiag *diag)
{
    int group;
    if (scenario_batches(sc, &group) == SCENARIO_BATCH_UNEQUAL)
        return scenario_batch_error(sc, group, diag,
                                    "the robust aggregate counts every worker alike and lr_scaling takes one batch "
                                    "(give every agent the same batch)");
    return HS_OK;
}

static int byzsgdnm_create(Sim *sim, void **state)
{
    ByzSgdnmState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int status, n = sim->world.n;
    const ByzSgdnmKeys *keys = scenario_method_keys(sim->sc);
    s->beta = keys->beta;
    int scaling = keys->lr_scaling, reference = keys->reference_batch;
    static const double power[] = {[BYZSGDNM_SCALE_NONE] = 0, [BYZSGDNM_SCALE_LINEAR] = 1, [BYZSGDNM_SCALE_SQRT] = 0.5};
    /* every agent's batch is the same (byzsgdnm_validate): [model] batch or [agents] batch */
    s->lr_factor = pow((double)sim->world.agents[0].batch / reference, power[scaling]);
    s->steps_per_round = sim_round_steps(sim);
    s->d = (size_t)sim->profile.total_params;
    s->vectors = calloc((size_t)n, sizeof *s->vectors);
    s->outs = calloc((size_t)n, sizeof *s->outs);
    s->sent = calloc((size_t)n, sizeof *s->sent);
    if (!s->vectors || !s->outs || !s->sent) return HS_E_NOMEM;
    if ((status = trainer_setup_local(sim->trainer, 3)) != HS_OK) return status;
    if (sim->trainer && (s->aggregate = calloc(s->d, sizeof *s->aggregate)) == NULL) return HS_E_NOMEM;
    StagesSetup setup = {.byzantine = 1, .freezing = &((const ByzSgdnmKeys *)scenario_method_keys(sim->sc))->freezing};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    s->byzantine = s->st.byzantine;
    return HS_OK;
}

/* Gradients, momenta, attacks and the aggregate of this step (train mode). */
static int byzsgdnm_aggregate(ByzSgdnmState *s, Sim *sim)
{
    if (sim->trainer == NULL) { /* timing mode: no arithmetic; DP-SGD's accountant counts the steps */
        for (int i = 0; i < sim->world.n; i++) local_step_gradient(&s->st.step, i, NULL, NULL);
        return HS_OK;
    }
    float beta = (float)s->beta, rest = (float)(1.0 - s->beta);
    for (int i = 0; i < sim->world.n; i++) {
        float *g = trainer_buffer(sim->trainer, i, BYZSGDNM_GRADIENT), *u = trainer_buffer(sim->trainer, i, BYZSGDNM_MOMENTUM);
        int attacker = byzantine_is_attacker(s->byzantine, i);
        /* the local step: a label flipper's gradient, DP-SGD's, or the plain one */
        int status = local_step_gradient(&s->st.step, i, NULL, g);
        if (status != HS_OK) return status;
        for (size_t j = 0; j < s->d; j++) u[j] = beta * u[j] + rest * g[j];
        s->vectors[i] = u;
        s->outs[i] = trainer_buffer(sim->trainer, i, BYZSGDNM_SENT);
        s->sent[i] = attacker ? s->outs[i] : u;
    }
    byzantine_attack(s->byzantine, s->vectors, s->outs);
    return byzantine_aggregate(s->byzantine, s->sent, s->aggregate);
}

static int byzsgdnm_start_step(ByzSgdnmState *s, Sim *sim)
{
    engine_collective_begin(&s->allreduce, NULL, sim->world.n, local_step_bytes(&s->st.step, 0), 1, BYZSGDNM_REDUCED,
                            0);
    for (int i = 0; i < sim->world.n; i++) {
        int status = engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), BYZSGDNM_COMPUTED, 0, NULL);
        if (status != HS_OK) return status;
    }
    return byzsgdnm_aggregate(s, sim);
}

static int byzsgdnm_apply(ByzSgdnmState *s, Sim *sim)
{
    if (sim->trainer == NULL) return HS_OK;
    /* under freeze the step moves the stage only, whatever the momenta remember */
    local_step_mask(&s->st.step, s->aggregate, s->d);
    double squares = 0;
    for (size_t j = 0; j < s->d; j++) squares += (double)s->aggregate[j] * s->aggregate[j];
    if (!isfinite(squares))
        return hs_diag_set(sim->diag, HS_E_DIVERGED, NULL, 0, "training diverged: aggregate norm %g at round %d",
                           sqrt(squares), engine_round(sim->engine));
    if (squares > 0) {
        float step = (float)(trainer_schedule_lr(sim->sc, engine_round(sim->engine)) * s->lr_factor / sqrt(squares));
        float *x = trainer_params(sim->trainer, 0);
        for (size_t j = 0; j < s->d; j++) x[j] -= step * s->aggregate[j];
    }
    size_t params = trainer_param_count(sim->trainer);
    const float *x = trainer_params(sim->trainer, 0);
    for (int i = 1; i < sim->world.n; i++) memcpy(trainer_params(sim->trainer, i), x, params * sizeof *x);
    return HS_OK;
}

static int byzsgdnm_round_begin(void *state, Sim *sim, int round)
{
    ByzSgdnmState *s = state;
    s->step = 0;
    stages_begin_round(&s->st, round);
    return byzsgdnm_start_step(s, sim);
}

static int byzsgdnm_on_event(void *state, Sim *sim, const Event *ev)
{
    ByzSgdnmState *s = state;
    if (ev->kind == BYZSGDNM_COMPUTED) return engine_collective_join(sim->engine, &s->allreduce, ev->agent);
    int status = byzsgdnm_apply(s, sim);
    if (status != HS_OK) return status;
    if (++s->step < s->steps_per_round) return byzsgdnm_start_step(s, sim);
    engine_end_round(sim->engine);
    return HS_OK;
}

static void byzsgdnm_destroy(void *state)
{
    ByzSgdnmState *s = state;
    if (s == NULL) return;
    stages_free(&s->st);
    free(s->aggregate);
    free(s->vectors);
    free(s->outs);
    free(s->sent);
    free(s);
}

static const SchemaKey byzsgdnm_keys[] = {
    METHOD_KEY(ByzSgdnmKeys, beta, "0.9", "worker momentum: u_i = beta u_i + (1 - beta) g_i",
     .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OPEN_MAX),
    METHOD_KEY(ByzSgdnmKeys, lr_scaling, "none", "none, linear or sqrt: the step length is lr (batch / reference_batch)^(0, 1 or 1/2)",
     .type = SCHEMA_CHOICE, .choices = "none|linear|sqrt"),
    METHOD_KEY(ByzSgdnmKeys, reference_batch, "32", "the batch at which lr_scaling leaves lr as it is",
     .type = SCHEMA_INT, .min = 1, .max = 1 << 20),
    FREEZE_METHOD_KEYS(ByzSgdnmKeys, freezing.),
    {0},
};

static const MethodStages byzsgdnm_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient at the shared model, into its worker momentum",
    .outgoing = "its momentum",
    .aggregate = "the [byzantine] aggregator, then a normalised step",
    .refuses = {
        [FEATURE_COMPRESSION] = "ByzSGDnm's aggregate is the [byzantine] rule (the mean without attackers): compressed "
                                "vectors under a robust rule are not modelled",
        [FEATURE_PRIVACY_UPDATE] = "ByzSGDnm's step is normalised and its aggregate a robust rule: the noise of clip = "
                                   "update is calibrated to a mean's sensitivity",
        [FEATURE_PRUNE] = "the robust aggregate compares the workers' whole momenta: a sub-model's zeros outside it "
                          "would vote",
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_NO_LOCAL_STEPS,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_NO_LOCAL_STEPS,
    },
};

const MethodOps method_byzsgdnm = {
    .name = "byzsgdnm",
    .capabilities = METHOD_LOSSY_RINGS,
    .summary = "ByzSGDnm: worker momentum, robust aggregation, normalised step",
    .keys = byzsgdnm_keys,
    .keys_size = sizeof(ByzSgdnmKeys),
    .stages = &byzsgdnm_stages,
    .validate = byzsgdnm_validate,
    .create = byzsgdnm_create,
    .round_begin = byzsgdnm_round_begin,
    .on_event = byzsgdnm_on_event,
    .destroy = byzsgdnm_destroy,
};
