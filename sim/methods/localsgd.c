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
 * [compression] (sim/compress.h): instead of the models, each agent sends C(...) of its
 * model delta since the last average, delta_i = x_i - xbar, with the configured feedback
 * (EF21 then tracks the deltas: g_i += C(delta_i - g_i)); the messages go round a ring
 * all-gather, and every agent sets xbar <- xbar + weighted mean of the contributions
 * (g_i, h_i or C(delta_i)) over the blocks (the unused auxiliary heads stay as they
 * are). Every agent must take part in every averaging (participation = 1, checked by the
 * scenario), so xbar is common knowledge and held once.
 *
 * [privacy] (sim/privacy.h, localsgd only): clip = sample makes every local step a DP-SGD
 * step; clip = update clips each member's update over its period before the average and
 * adds the aggregate's Gaussian noise after it. With weighting = samples this is DP-FedAvg
 * without a server (seed 003's setting); the server-based fedavg calls the same functions. */
#include "sim/compress.h"
#include "sim/privacy.h"
#include "sim/engine.h"
#include "sim/trainer.h"

#include "models/model.h"
#include "sim/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LOCALSGD_STEPPED = ENGINE_EVENT_METHOD, LOCALSGD_AVERAGED, LOCALSGD_BLOCK };

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
    int n_state;            /* feedback vectors per agent: trainer buffers 1..n_state */
    double *bytes;          /* (n) this period's message sizes */
    double *weights;        /* (n) averaging weights of the members */
    const float **contributions; /* (n) */
    float *anchor;          /* (d) xbar, the last average */
    float *delta;           /* (d) scratch */
    float *mean;            /* (d) scratch */
    Privacy *privacy;       /* [privacy] clip != none; NULL otherwise */
} LocalSgdState;

static int localsgd_alloc(Engine *e, LocalSgdState **out)
{
    LocalSgdState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *out = s;
    s->remaining = calloc((size_t)e->world.n, sizeof *s->remaining);
    s->members = calloc((size_t)e->world.n, sizeof *s->members);
    s->rng = gsl_rng_alloc(gsl_rng_taus2);
    if (s->remaining == NULL || s->members == NULL || s->rng == NULL) return HS_E_NOMEM;
    return HS_OK;
}

static int localsgd_read_common(Engine *e, LocalSgdState *s)
{
    int status;
    s->participation = scenario_param_number(e->sc, "participation");
    s->by_samples = scenario_param_index(e->sc, "weighting") == 0;
    s->round_steps = engine_round_steps(e);
    s->step_flops = engine_step_flops(e, e->sc->model.batch);
    const CompressionSpec *c = &e->sc->compression;
    if (!c->present || c->scheme == COMPRESS_NONE) return trainer_setup_local(e->trainer, 0);
    /* buffer 0: the agent's contribution (its message, or EF21's g_i / EControl's h_i);
     * buffer 1: EControl's e_i */
    int n = e->world.n;
    s->n_state = compress_state_vectors(c);
    s->d = (size_t)e->profile.total_params;
    if ((status = trainer_setup_local(e->trainer, s->n_state > 1 ? 2 : 1)) != HS_OK) return status;
    s->bytes = calloc((size_t)n, sizeof *s->bytes);
    s->weights = calloc((size_t)n, sizeof *s->weights);
    s->contributions = calloc((size_t)n, sizeof *s->contributions);
    if (!s->bytes || !s->weights || !s->contributions) return HS_E_NOMEM;
    if ((status = compress_create(c, e->sc->seed, n, s->d, &s->compressor)) != HS_OK ||
        (status = ring_gather_init(&s->gather, n, LOCALSGD_BLOCK)) != HS_OK)
        return hs_diag_set(e->diag, status, NULL, 0, "out of memory for compression");
    if (e->trainer) {
        s->anchor = malloc(s->d * sizeof *s->anchor);
        s->delta = malloc(s->d * sizeof *s->delta);
        s->mean = malloc(s->d * sizeof *s->mean);
        if (!s->anchor || !s->delta || !s->mean) return HS_E_NOMEM;
        memcpy(s->anchor, trainer_params(e->trainer, 0), s->d * sizeof *s->anchor);
    }
    return HS_OK;
}

/* The agent's period is over: its message (train mode: the compressed delta). */
static int localsgd_compress_delta(LocalSgdState *s, Engine *e, int agent)
{
    if (e->trainer == NULL) {
        s->bytes[agent] = compress_expected_bytes(s->compressor, agent);
        return HS_OK;
    }
    const float *x = trainer_params(e->trainer, agent);
    for (size_t j = 0; j < s->d; j++) s->delta[j] = x[j] - s->anchor[j];
    float *contribution = trainer_buffer(e->trainer, agent, 0);
    size_t kept;
    if (s->n_state == 0) kept = compress_feedback(s->compressor, agent, s->delta, NULL, NULL, contribution);
    else kept = compress_feedback(s->compressor, agent, s->delta, contribution,
                                  s->n_state > 1 ? trainer_buffer(e->trainer, agent, 1) : NULL, s->mean);
    s->bytes[agent] = compress_wire_bytes(s->d, kept);
    return HS_OK;
}

/* Everybody holds every message: xbar += weighted mean of the contributions. */
static int localsgd_compressed_average(LocalSgdState *s, Engine *e)
{
    if (e->trainer == NULL) return HS_OK;
    for (int k = 0; k < s->n_members; k++) {
        int i = s->members[k];
        s->weights[k] = s->by_samples ? e->world.agents[i].samples : 1.0;
        s->contributions[k] = trainer_buffer(e->trainer, i, 0);
    }
    int status = vec_weighted_average(s->mean, s->contributions, s->weights, s->n_members, s->d);
    if (status != HS_OK) return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "cannot average the messages");
    for (size_t j = 0; j < s->d; j++) s->anchor[j] += s->mean[j];
    for (int k = 0; k < s->n_members; k++)
        memcpy(trainer_params(e->trainer, s->members[k]), s->anchor, s->d * sizeof *s->anchor);
    return HS_OK;
}

static int localsgd_create(Engine *e, void **state)
{
    LocalSgdState *s;
    int status = localsgd_alloc(e, &s);
    *state = s;
    if (status != HS_OK) return status;
    s->local_steps = scenario_param_int(e->sc, "local_steps");
    if ((status = localsgd_read_common(e, s)) != HS_OK) return status;
    if ((status = privacy_create(e->sc, &e->world, e->trainer, &s->privacy)) != HS_OK)
        return hs_diag_set(e->diag, status, NULL, 0, "out of memory for [privacy]");
    e->privacy = s->privacy;
    return HS_OK;
}

static int qsr_create(Engine *e, void **state)
{
    LocalSgdState *s;
    int status = localsgd_alloc(e, &s);
    *state = s;
    if (status != HS_OK) return status;
    s->qsr = 1;
    s->h_base = scenario_param_int(e->sc, "H_base");
    s->qsr_alpha = scenario_param_number(e->sc, "alpha");
    return localsgd_read_common(e, s);
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
static void localsgd_draw_members(LocalSgdState *s, Engine *e)
{
    int n = e->world.n;
    for (int i = 0; i < n; i++) s->members[i] = i;
    s->n_members = n;
    if (s->participation >= 1) return;
    rng_stream_reset(s->rng, e->sc->seed, (uint64_t)e->round * 65536u + (uint64_t)s->period_index, RNG_PURPOSE_METHOD);
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

static int localsgd_start_period(LocalSgdState *s, Engine *e)
{
    localsgd_draw_members(s, e);
    s->period_index++;
    if (s->compressor) ring_gather_begin(&s->gather, s->members, s->n_members);
    else engine_collective_begin(&s->average, s->members, s->n_members, engine_model_bytes(e), 1, LOCALSGD_AVERAGED, 0);
    int status = privacy_period_begin(s->privacy, e->trainer, s->members, s->n_members);
    if (status != HS_OK) return hs_diag_set(e->diag, status, NULL, 0, "out of memory for [privacy]");
    int period = s->local_steps;
    if (period > 0 && s->period_done + period > s->round_steps) period = s->round_steps - s->period_done;
    for (int k = 0; k < s->n_members; k++) {
        int i = s->members[k];
        s->remaining[i] = s->local_steps == 0 ? engine_agent_steps(e, i) : period;
        engine_compute(e, i, s->step_flops, LOCALSGD_STEPPED, 0);
    }
    s->period_done += period;
    return HS_OK;
}

static int localsgd_round_begin(void *state, Engine *e, int round)
{
    LocalSgdState *s = state;
    s->period_done = 0;
    s->period_index = 0;
    if (s->qsr) {
        s->local_steps = qsr_period(s, trainer_schedule_lr(e->sc, e->round), s->round_steps);
        e->round_extra = s->local_steps;
    }
    return localsgd_start_period(s, e);
}

static int localsgd_on_event(void *state, Engine *e, const Event *ev)
{
    LocalSgdState *s = state;
    int status;
    if (ev->kind == LOCALSGD_STEPPED) {
        /* The step's arithmetic runs at its completion: nobody else touches this
         * agent's model during a period, so the parameters are those it started with. */
        if ((status = privacy_local_step(s->privacy, e->trainer, ev->agent)) != HS_OK) return status;
        if (--s->remaining[ev->agent] > 0) {
            engine_compute(e, ev->agent, s->step_flops, LOCALSGD_STEPPED, 0);
            return HS_OK;
        }
        if (s->compressor == NULL) {
            if ((status = privacy_client_done(s->privacy, e->trainer, ev->agent)) != HS_OK) return status;
            return engine_collective_join(e, &s->average, ev->agent);
        }
        if ((status = localsgd_compress_delta(s, e, ev->agent)) != HS_OK) return status;
        if (!ring_gather_offer(e, &s->gather, ev->agent, s->bytes[ev->agent])) return HS_OK;
    } else if (ev->kind == LOCALSGD_BLOCK && !ring_gather_arrived(e, &s->gather, ev)) {
        return HS_OK;
    }
    if (s->compressor) status = localsgd_compressed_average(s, e);
    else status = privacy_average(s->privacy, e->trainer, s->members, s->n_members, s->by_samples, e->round,
                                  s->period_index);
    if (status != HS_OK) return status;
    if (s->local_steps > 0 && s->period_done < s->round_steps) return localsgd_start_period(s, e);
    engine_end_round(e);
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
    privacy_free(s->privacy);
    if (s->rng) gsl_rng_free(s->rng);
    free(s);
}

static const MethodKey localsgd_keys[] = {
    {"local_steps", "epoch", "local steps between averagings: a number, or epoch",
     .type = METHOD_KEY_STEPS, .min = 1, .max = 100000000},
    {"weighting", "samples", "model averaging weights: samples (FedAvg) or uniform", 
     .type = METHOD_KEY_CHOICE, .choices = "samples|uniform"},
    {"participation", "1", "share of agents that train and average each period",
     .type = METHOD_KEY_REAL, .min = 0, .max = 1, .open = METHOD_KEY_OPEN_MIN},
    {0},
};

const MethodOps method_localsgd = {
    .name = "localsgd",
    .summary = "Local SGD / FedAvg: local steps, then model averaging by all-reduce",
    .keys = localsgd_keys,
    .capabilities = METHOD_COMPRESSES | METHOD_PRIVATE,
    .create = localsgd_create,
    .round_begin = localsgd_round_begin,
    .on_event = localsgd_on_event,
    .destroy = localsgd_destroy,
};

static const MethodKey qsr_keys[] = {
    {"H_base", "2", "smallest period (local steps between averagings)",
     .type = METHOD_KEY_INT, .min = 1, .max = 100000000},
    {"alpha", "0.2", "QSR coefficient: H = max(H_base, floor((alpha / lr)^2))",
     .type = METHOD_KEY_REAL, .min = 0, .max = 1e6},
    {"weighting", "samples", "model averaging weights: samples or uniform", 
     .type = METHOD_KEY_CHOICE, .choices = "samples|uniform"},
    {"participation", "1", "share of agents that train and average each period",
     .type = METHOD_KEY_REAL, .min = 0, .max = 1, .open = METHOD_KEY_OPEN_MIN},
    {0},
};

const MethodOps method_qsr = {
    .name = "qsr",
    .summary = "Local SGD whose period follows the Quadratic Synchronization Rule",
    .keys = qsr_keys,
    .capabilities = METHOD_COMPRESSES,
    .create = qsr_create,
    .round_begin = localsgd_round_begin,
    .on_event = localsgd_on_event,
    .destroy = localsgd_destroy,
};
