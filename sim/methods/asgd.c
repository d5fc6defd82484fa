/* asgd.c — parameter-server SGD with asynchronous workers: vanilla asynchronous SGD
 * (asgd), Rennala SGD (rennala; Tyurin & Richtárik, "Optimal Time Complexities of
 * Parallel Stochastic Optimization Methods Under a Fixed Computation Model", NeurIPS
 * 2023) and Ringmaster ASGD (ringmaster; Maranjyan, Tyurin & Richtárik, "Ringmaster ASGD:
 * The First Asynchronous SGD with Optimal Time Complexity", ICML 2025).
 *
 * The three share one loop. The server (node world.n, [server]) holds the model x^k and
 * its iteration counter k; it holds no data. Every agent is a worker:
 *   1. the server sends x^k to the worker (engine_send of the model's bytes, the server's
 *      uplink shared by every reply in flight);
 *   2. on arrival the worker computes a stochastic gradient of its next batch at that x
 *      (one step's FLOPs on its processor; train mode takes the gradient at the copy it
 *      received, so the delay is real);
 *   3. it sends the gradient to the server (the model's bytes);
 *   4. the server processes arrivals in order on its processor (2 d FLOPs each: the
 *      axpy into x or into the batch) and decides, with delay = k now - k of the point:
 *        asgd        applies it: x^{k+1} = x^k - lr g, whatever its delay;
 *        ringmaster  applies it when delay < R, else discards it (Algorithm 1 of the paper);
 *        rennala     adds it to the batch when delay = 0 (computed at x^k), else discards
 *                    it; after B gradients at x^k: x^{k+1} = x^k - lr (sum / B);
 *   5. and sends its current x back to that worker (1.).
 * The step is the [model] optimiser at this round's learning rate (plain SGD in the
 * papers; sgd is the optimiser to compare them under).
 *
 * Where this follows or departs from the papers:
 *   - Ringmaster's R: the paper's theory sets R = max(1, ceil(sigma^2 / eps)), which is
 *     also Rennala's batch S = ceil(sigma^2 / eps) — neither sigma^2 nor eps is known for
 *     a neural network, so R and B are keys; the default R = B = the number of agents
 *     keeps the two matched as in the papers (set both to one value to compare them).
 *   - Ringmaster's Algorithm 2 also stops a worker whose computation became too stale;
 *     the engine cannot cancel a computation under way, so this is Algorithm 1 (the
 *     stale gradient is discarded on arrival; the papers show both with the same rate).
 *   - Rennala: the paper's server broadcasts nothing at a step; workers still computing
 *     at the old point finish and are discarded on arrival, as here.
 *   - Messages and the server's own processor cost time (the papers count computation
 *     only); with a fast [server] and links the timings tend to theirs.
 * Rounds: round r ends when the server has received (processed) as many gradients,
 * applied or discarded, as the agents hold batches (one pass over the data set, as in
 * `token`), or `round_gradients` when that key is set (finer evaluation: train mode
 * evaluates at round ends); workers never wait at a round boundary. rounds.extra: asgd, the mean delay
 * of the gradients applied in the round; rennala and ringmaster, the number of gradients
 * the round discarded. Timing mode makes the same decisions (they read only counters),
 * so both modes time alike. */
#include "models/model.h"
#include "models/optim.h"
#include "sim/methods/method.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { PS_MODEL_ARRIVED = ENGINE_EVENT_METHOD, PS_COMPUTED, PS_GRADIENT_ARRIVED, PS_PROCESSED };
typedef enum { PS_ASGD, PS_RENNALA, PS_RINGMASTER } PsKind;

/* [method] keys of the three methods (each lands its rows; the others' fields stay 0) */
typedef struct PsKeys {
    int round_gradients;   /* 0: as many as the agents hold batches */
    int batch;             /* rennala: B, 0 = the number of agents */
    int R;                 /* ringmaster: the delay threshold, 0 = the number of agents */
    PruneKeys pruning;
    FreezeKeys freezing;
} PsKeys;

typedef struct PsState {
    PsKind kind;
    int server;           /* node index */
    int batch;            /* rennala: B */
    int threshold;        /* ringmaster: R */
    long k;               /* server iterations (steps of x) */
    long *version;        /* (n) k of the point each worker computes at */
    long received, per_round;
    int collected;        /* rennala: gradients in the batch */
    int round, started;
    double bytes, process_flops;
    double delay_sum;
    long applied, discarded; /* this round */
    /* train mode */
    size_t d;
    float *x;             /* the server's model: the trainer's shared model (evaluated) */
    float *points;        /* (n, d) the x each worker received */
    float *grads;         /* (n, d) each worker's gradient */
    const float **sent;   /* (n) what each worker's message carries (its gradient, or the
                           * compressed contribution) */
    Optim *optim;
    Stages st;            /* the workers' gradients and messages, the server's batch */
} PsState;

static void ps_destroy(void *state)
{
    PsState *s = state;
    if (s == NULL) return;
    free(s->version);
    free(s->points);
    free(s->grads);
    free(s->sent);
    optim_free(s->optim);
    stages_free(&s->st);
    free(s);
}

static int ps_create(Sim *sim, void **state, PsKind kind)
{
    PsState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int n = sim->world.n;
    s->kind = kind;
    s->server = n;
    const PsKeys *keys = scenario_method_keys(sim->sc);
    if (kind == PS_RENNALA) s->batch = keys->batch;
    if (kind == PS_RINGMASTER) s->threshold = keys->R;
    /* 0: the number of agents */
    if (kind == PS_RENNALA && s->batch == 0) s->batch = n;
    if (kind == PS_RINGMASTER && s->threshold == 0) s->threshold = n;
    s->version = calloc((size_t)n, sizeof *s->version);
    if (s->version == NULL) return HS_E_NOMEM;
    s->bytes = sim_model_bytes(sim);
    s->process_flops = 2.0 * sim->profile.total_params;
    s->per_round = keys->round_gradients;
    if (s->per_round == 0)
        for (int i = 0; i < n; i++) s->per_round += sim_agent_steps(sim, i);
    int status = trainer_setup_shared(sim->trainer);
    if (status != HS_OK) return status;
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing, .keep_messages = 1};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    if ((s->sent = calloc((size_t)n, sizeof *s->sent)) == NULL) return HS_E_NOMEM;
    if (sim->trainer == NULL) return HS_OK;
    s->d = trainer_param_count(sim->trainer);
    s->x = trainer_shared_params(sim->trainer);
    s->points = malloc((size_t)n * s->d * sizeof *s->points);
    s->grads = malloc((size_t)n * s->d * sizeof *s->grads);
    if (!s->points || !s->grads) return HS_E_NOMEM;
    return optim_create(&sim->sc->optim, s->d, &s->optim);
}

static int asgd_create(Sim *sim, void **state)
{
    return ps_create(sim, state, PS_ASGD);
}

static int rennala_create(Sim *sim, void **state)
{
    return ps_create(sim, state, PS_RENNALA);
}

static int ringmaster_create(Sim *sim, void **state)
{
    return ps_create(sim, state, PS_RINGMASTER);
}

/* The server sends x^k to worker i (the message carries a copy: x moves on meanwhile). */
static int ps_send_point(PsState *s, Sim *sim, int i)
{
    s->version[i] = s->k;
    if (s->x) memcpy(s->points + (size_t)i * s->d, s->x, s->d * sizeof *s->x);
    return engine_send(sim->engine, s->server, i, s->bytes, PS_MODEL_ARRIVED, i);
}

static int ps_round_begin(void *state, Sim *sim, int round)
{
    PsState *s = state;
    s->round = round;
    stages_begin_round(&s->st, round);
    s->delay_sum = 0;
    s->applied = s->discarded = 0;
    if (s->started) return HS_OK; /* the workers are already running */
    s->started = 1;
    int status = HS_OK;
    for (int i = 0; i < sim->world.n && status == HS_OK; i++) status = ps_send_point(s, sim, i);
    return status;
}

/* One server step with g (the optimiser of [model]; under freeze the stage's ranges). */
static void ps_step(PsState *s, Sim *sim, const float *g)
{
    if (s->x) local_step_optim_step(&s->st.step, s->optim, s->x, g, s->d, trainer_schedule_lr(sim->sc, engine_round(sim->engine)));
    s->k++;
}

/* asgd and ringmaster apply one gradient: clip = update's noise goes on it (one client's
 * whole share) before the step. */
static void ps_apply_one(PsState *s, Sim *sim, int i)
{
    float *g = s->grads ? s->grads + (size_t)i * s->d : NULL;
    if (s->st.privacy) {
        if (g && s->sent[i] != g) memcpy(g, s->sent[i], s->st.out.d * sizeof *g);
        privacy_aggregate_noise_share(s->st.privacy, 1.0, s->round, (int)(s->k % 65536), &g, g ? 1 : 0);
        ps_step(s, sim, g);
        return;
    }
    ps_step(s, sim, s->sent[i]);
}

/* The server has processed worker i's gradient: apply, collect or discard it. */
static int ps_decide(PsState *s, Sim *sim, int i)
{
    long delay = s->k - s->version[i];
    switch (s->kind) {
    case PS_ASGD:
        s->delay_sum += (double)delay;
        s->applied++;
        ps_apply_one(s, sim, i);
        break;
    case PS_RINGMASTER:
        if (delay < s->threshold) {
            s->applied++;
            ps_apply_one(s, sim, i);
        } else {
            s->discarded++;
        }
        break;
    case PS_RENNALA: {
        if (delay != 0) {
            s->discarded++;
            break;
        }
        int status = aggregate_buffer_add(&s->st.agg, i, s->sent[i], 1.0);
        if (status != HS_OK) return status;
        if (++s->collected < s->batch) break;
        ps_step(s, sim, aggregate_buffer_take(&s->st.agg, &s->st.out, s->round, (int)(s->k % 65536)));
        aggregate_buffer_clear(&s->st.agg);
        s->collected = 0;
        s->applied++;
        break;
    }
    }
    return HS_OK;
}

static int ps_on_event(void *state, Sim *sim, const Event *ev)
{
    PsState *s = state;
    switch (ev->kind) {
    case PS_MODEL_ARRIVED: {
        int i = ev->agent;
        float *point = s->points ? s->points + (size_t)i * s->d : NULL, *g = s->grads ? s->grads + (size_t)i * s->d : NULL;
        int status = local_step_gradient(&s->st.step, i, point, g);
        if (status != HS_OK) return status;
        /* the message leaves now: the point it was computed at does not change */
        outgoing_clip_vector(&s->st.out, g);
        s->sent[i] = outgoing_gradient(&s->st.out, i, point, g);
        return engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), PS_COMPUTED, i, NULL);
    }
    case PS_COMPUTED: {
        int i = ev->agent;
        double bytes = outgoing_compresses(&s->st.out) ? outgoing_bytes(&s->st.out, i) : local_step_bytes(&s->st.step, i);
        return engine_send(sim->engine, i, s->server, bytes, PS_GRADIENT_ARRIVED, i);
    }
    case PS_GRADIENT_ARRIVED:
        /* the server's processor takes arrivals in order */
        return engine_compute(sim->engine, s->server, s->process_flops, PS_PROCESSED, ev->data, NULL);
    default: break;
    }
    int i = (int)ev->data;
    int status = ps_decide(s, sim, i);
    if (status != HS_OK) return status;
    if (++s->received == (long)(s->round + 1) * s->per_round) {
        if (s->kind == PS_ASGD) sim->round_extra = s->applied ? s->delay_sum / (double)s->applied : NAN;
        else sim->round_extra = (double)s->discarded;
        engine_end_round(sim->engine);
    }
    return ps_send_point(s, sim, i);
}

#define PS_ROUND_KEY                                                                                         \
    METHOD_KEY(PsKeys, round_gradients, "0",                                                                 \
               "gradients the server receives per round (0: as many as the agents hold batches)",            \
               .type = SCHEMA_INT, .min = 0, .max = 100000000)

#define PS_STAGE_KEYS PRUNE_METHOD_KEYS(PsKeys, pruning.), FREEZE_METHOD_KEYS(PsKeys, freezing.)

static const SchemaKey asgd_keys[] = {PS_ROUND_KEY, PS_STAGE_KEYS, {0}};

static const SchemaKey rennala_keys[] = {
    METHOD_KEY(PsKeys, batch, "0", "B: gradients computed at the current point that make one step (0: the number of agents)",
               .type = SCHEMA_INT, .min = 0, .max = 100000000),
    PS_ROUND_KEY,
    PS_STAGE_KEYS,
    {0},
};

static const SchemaKey ringmaster_keys[] = {
    METHOD_KEY(PsKeys, R, "0", "delay threshold: gradients with delay >= R are discarded (0: the number of agents)",
               .type = SCHEMA_INT, .min = 0, .max = 100000000),
    PS_ROUND_KEY,
    PS_STAGE_KEYS,
    {0},
};

static const MethodStages asgd_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient at the point the server sent",
    .outgoing = "its gradient to the server",
    .aggregate = "the server applies each gradient alone, on arrival",
    .refuses = {
        [FEATURE_BYZANTINE] = "the server applies each gradient alone on arrival: a robust rule has no set of vectors to compare",
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_NO_LOCAL_STEPS,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_NO_LOCAL_STEPS,
    },
};

static const MethodExtra asgd_extras[] = {
    {.meaning = "mean delay of the gradients applied (server steps since the gradient's point)"},
    {0},
};

const MethodOps method_asgd = {
    .name = "asgd",
    .summary = "asynchronous SGD with a parameter server: every gradient applied on arrival, however stale",
    .keys = asgd_keys,
    .keys_size = sizeof(PsKeys),
    .capabilities = METHOD_USES_SERVER | METHOD_LOSSY_LINKS,
    .stages = &asgd_stages,
    .extra = asgd_extras,
    .create = asgd_create,
    .round_begin = ps_round_begin,
    .on_event = ps_on_event,
    .destroy = ps_destroy,
};

static const MethodStages rennala_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient at the point the server sent",
    .outgoing = "its gradient to the server",
    .aggregate = "the server's mean of B gradients computed at its current point",
    .refuses = {
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_NO_LOCAL_STEPS,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_NO_LOCAL_STEPS,
    },
};

static const MethodExtra rennala_extras[] = {
    {.meaning = "gradients discarded (computed at an older point)"},
    {0},
};

const MethodOps method_rennala = {
    .name = "rennala",
    .summary = "Rennala SGD: the server steps once B gradients computed at its current point arrived",
    .keys = rennala_keys,
    .keys_size = sizeof(PsKeys),
    .capabilities = METHOD_USES_SERVER | METHOD_LOSSY_LINKS,
    .stages = &rennala_stages,
    .extra = rennala_extras,
    .create = rennala_create,
    .round_begin = ps_round_begin,
    .on_event = ps_on_event,
    .destroy = ps_destroy,
};

static const MethodStages ringmaster_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient at the point the server sent",
    .outgoing = "its gradient to the server",
    .aggregate = "the server applies each gradient with delay < R alone, on arrival",
    .refuses = {
        [FEATURE_BYZANTINE] = "the server applies each gradient alone on arrival: a robust rule has no set of vectors to compare",
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_NO_LOCAL_STEPS,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_NO_LOCAL_STEPS,
    },
};

static const MethodExtra ringmaster_extras[] = {
    {.meaning = "gradients discarded (delay at least R)"},
    {0},
};

const MethodOps method_ringmaster = {
    .name = "ringmaster",
    .summary = "Ringmaster ASGD: asynchronous SGD that discards gradients with delay >= R",
    .keys = ringmaster_keys,
    .keys_size = sizeof(PsKeys),
    .capabilities = METHOD_USES_SERVER | METHOD_LOSSY_LINKS,
    .stages = &ringmaster_stages,
    .extra = ringmaster_extras,
    .create = ringmaster_create,
    .round_begin = ps_round_begin,
    .on_event = ps_on_event,
    .destroy = ps_destroy,
};
