/* co2.c — CO2 (Sun et al., ICLR 2024): local updating with asynchronous communication.
 * Every `period` local steps an agent launches a ring all-reduce of its parameters in
 * the background (it does not block computation) and goes on with the next period; the
 * average of period p is used at the end of period p+1 — one period late — in an outer
 * step with outer momentum, the staleness-gap penalty and elementwise clipping:
 *   m     ← beta · m + (theta_old − theta_avg) / lambda
 *   m     ← clip(m, −clip, +clip)
 *   theta_old ← theta_old − outer_lr · m ;   theta ← theta_old
 * Timing: the end of period p+1 waits for the all-reduce of period p, if it is still
 * running; with enough computation per period communication is hidden entirely.
 * The very first period has no average to use yet and only launches its all-reduce.
 * With period = 1, beta = 0, lambda = 1, clip = inf, outer_lr = 1 and an all-reduce
 * that is applied at once, the outer step is plain model averaging: Local SGD.
 * [compression]: every agent holds the same theta_old (the outer step is the same
 * function of the same average everywhere), so what a snapshot sends is its period's
 * change from it, compressed with the agent's feedback state (stages_upload); the
 * compressed changes go round a ring all-gather (sim/kernel/collective.h, as localsgd's)
 * in the background instead of the all-reduce, and the average is theta_old plus their
 * mean. */
#include "sim/methods/method.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CO2_STEPPED = ENGINE_EVENT_METHOD, CO2_REDUCED, CO2_GATHERED };
enum { CO2_THETA_OLD = 0, CO2_MOMENTUM = 1, CO2_SENT = 2 };

typedef struct Co2State {
    int period;
    double beta, lambda, clip, outer_lr;
    int round_steps;
    int *remaining;        /* (n) local steps left in this period */
    int *done;             /* (n) steps done this round */
    int *waiting;          /* (n) agent finished a period and waits for the last average */
    int *periods;          /* (n) periods the agent has finished, all rounds */
    Collective reduce;     /* all-reduce number `launched` (at most one in flight) */
    RingGather gather;     /* [compression]: the all-gather of the compressed changes instead */
    int launched;          /* index of the newest all-reduce begun, -1 before the first */
    int completed;         /* all-reduces finished */
    float *average;        /* (params) result of the newest finished all-reduce */
    Stages st;             /* the local step; the all-reduce's rule under [byzantine] */
    const float **sent;    /* (n) the snapshots sent, in agent order */
    int finished;          /* agents done with this round */
} Co2State;

/* [method] keys (co2_keys below) */
typedef struct Co2Keys {
    int period;
    double beta, lambda, clip, outer_lr;
    FreezeKeys freezing;
    PruneKeys pruning;
} Co2Keys;

static int co2_create(Sim *sim, void **state)
{
    Co2State *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int n = sim->world.n, status;
    s->remaining = calloc((size_t)n, sizeof *s->remaining);
    s->done = calloc((size_t)n, sizeof *s->done);
    s->waiting = calloc((size_t)n, sizeof *s->waiting);
    s->periods = calloc((size_t)n, sizeof *s->periods);
    if (!s->remaining || !s->done || !s->waiting || !s->periods) return HS_E_NOMEM;
    s->launched = -1;
    const Co2Keys *keys = scenario_method_keys(sim->sc);
    s->period = keys->period;
    s->beta = keys->beta;
    s->lambda = keys->lambda;
    s->clip = keys->clip;
    s->outer_lr = keys->outer_lr;
    s->round_steps = sim_round_steps(sim);
    if ((status = trainer_setup_local(sim->trainer, 3)) != HS_OK) return status;
    StagesSetup setup = {.freezing = &keys->freezing, .pruning = &keys->pruning};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    if ((s->sent = calloc((size_t)n, sizeof *s->sent)) == NULL) return HS_E_NOMEM;
    if (outgoing_compresses(&s->st.out) && (status = ring_gather_init(&s->gather, n, CO2_GATHERED)) != HS_OK)
        return hs_diag_set(sim->diag, status, NULL, 0, "out of memory for compression");
    if (sim->trainer) {
        size_t p = trainer_param_count(sim->trainer);
        s->average = calloc(p, sizeof *s->average);
        if (s->average == NULL) return HS_E_NOMEM;
        for (int i = 0; i < n; i++) memcpy(trainer_buffer(sim->trainer, i, CO2_THETA_OLD), trainer_params(sim->trainer, i), p * sizeof(float));
    }
    return HS_OK;
}

static int co2_start_period(Co2State *s, Sim *sim, int i)
{
    int left = s->round_steps - s->done[i];
    s->remaining[i] = left < s->period ? left : s->period;
    return engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), CO2_STEPPED, 0, NULL);
}

/* The outer step of agent i with the stale average. */
static void co2_outer_step(Co2State *s, Sim *sim, int i)
{
    if (!sim->trainer) return;
    size_t p = trainer_param_count(sim->trainer);
    float *theta = trainer_params(sim->trainer, i), *old = trainer_buffer(sim->trainer, i, CO2_THETA_OLD);
    float *m = trainer_buffer(sim->trainer, i, CO2_MOMENTUM);
    /* under freeze the outer step moves the stage only (the all-reduce carried it alone) */
    const unsigned char *held = local_step_moving(&s->st.step);
    for (size_t k = 0; k < p; k++) {
        if (held && !held[k]) continue;
        double mk = s->beta * m[k] + (old[k] - s->average[k]) / s->lambda;
        if (mk > s->clip) mk = s->clip;
        if (mk < -s->clip) mk = -s->clip;
        m[k] = (float)mk;
        old[k] = (float)(old[k] - s->outer_lr * mk);
        theta[k] = old[k];
    }
}

static int co2_reduced(Co2State *s, Sim *sim);

/* Agent i joins all-reduce number c with a snapshot of its parameters. All-reduce c
 * begins with its first member: c-1 has finished by then, since joining c requires it. */
static int co2_launch(Co2State *s, Sim *sim, int i, int c)
{
    Prune *prune = &s->st.step.prune;
    int compressed = outgoing_compresses(&s->st.out);
    if (s->launched < c) {
        /* prune: nested shells of the sub-models, in the background as the plain ring */
        if (prune->on && prune_shells_begin(prune, NULL, sim->world.n, 0, CO2_REDUCED) != HS_OK)
            return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory");
        if (compressed)
            ring_gather_begin(&s->gather, NULL, sim->world.n);
        else if (!prune->on)
            engine_collective_begin(&s->reduce, NULL, sim->world.n, local_step_bytes(&s->st.step, 0), 0, CO2_REDUCED,
                                    c);
        s->launched = c;
    }
    float *sent = NULL, *old = NULL;
    if (sim->trainer) {
        sent = trainer_buffer(sim->trainer, i, CO2_SENT);
        old = trainer_buffer(sim->trainer, i, CO2_THETA_OLD);
        memcpy(sent, trainer_params(sim->trainer, i), trainer_param_count(sim->trainer) * sizeof(float));
    }
    if (compressed) {
        /* the snapshot becomes theta_old + what arrives of its compressed change */
        int complete;
        double bytes = stages_upload(&s->st, i, sent, old);
        int status = ring_gather_offer(sim->engine, &s->gather, i, bytes, &complete);
        return status == HS_OK && complete ? co2_reduced(s, sim) : status;
    }
    /* clip = update: the period's change from theta_old, where it began, is clipped */
    if (sim->trainer) outgoing_clip(&s->st.out, sent, old);
    return prune->on ? prune_shells_join(sim->engine, prune, i) : engine_collective_join(sim->engine, &s->reduce, i);
}

/* Agent i ended its period c and the average of period c-1 (if c > 0) is available. */
static int co2_continue(Co2State *s, Sim *sim, int i)
{
    int c = s->periods[i]++;
    /* the period's local progress goes into the all-reduce first; only then does the
     * outer step with the previous average reset the local parameters */
    int status = co2_launch(s, sim, i, c);
    if (status != HS_OK) return status;
    if (c > 0) co2_outer_step(s, sim, i);
    if (s->done[i] < s->round_steps) return co2_start_period(s, sim, i);
    if (++s->finished == sim->world.n) engine_end_round(sim->engine);
    return HS_OK;
}

static int co2_round_begin(void *state, Sim *sim, int round)
{
    Co2State *s = state;
    s->finished = 0;
    stages_begin_round(&s->st, round);
    for (int i = 0; i < sim->world.n; i++) {
        s->done[i] = 0;
        int status = co2_start_period(s, sim, i);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

static int co2_on_event(void *state, Sim *sim, const Event *ev)
{
    Co2State *s = state;
    int status;
    if (ev->kind == CO2_STEPPED) {
        int i = ev->agent;
        if ((status = local_step_run(&s->st.step, i)) != HS_OK) return status;
        s->done[i]++;
        if (--s->remaining[i] > 0)
            return engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), CO2_STEPPED, 0, NULL);
        /* Period c over: the all-reduce of period c-1 must have finished. */
        if (s->periods[i] > 0 && s->completed < s->periods[i]) {
            s->waiting[i] = 1;
            return HS_OK;
        }
        return co2_continue(s, sim, i);
    }
    if (ev->kind == CO2_GATHERED) {
        int complete;
        if ((status = ring_gather_arrived(sim->engine, &s->gather, ev, &complete)) != HS_OK || !complete) return status;
        return co2_reduced(s, sim);
    }
    if (s->st.step.prune.on && !prune_shells_done(&s->st.step.prune)) return HS_OK;
    return co2_reduced(s, sim);
}

/* The background all-reduce finished (every shell of it under prune, every block of the
 * all-gather under [compression]): average the sent snapshots in agent order (the
 * [byzantine] rule over them, the attackers' replaced, when it is on; per coordinate over
 * the holders under prune), then wake the agents waiting for it. */
static int co2_reduced(Co2State *s, Sim *sim)
{
    int status;
    if (sim->trainer && s->st.step.prune.on) {
        for (int i = 0; i < sim->world.n; i++) s->sent[i] = trainer_buffer(sim->trainer, i, CO2_SENT);
        if ((status = aggregate_masked(&s->st.agg, NULL, s->sent, sim->world.n, s->average)) != HS_OK) return status;
    } else if (sim->trainer && s->st.byzantine) {
        for (int i = 0; i < sim->world.n; i++) s->sent[i] = trainer_buffer(sim->trainer, i, CO2_SENT);
        outgoing_attack(&s->st.out, NULL, sim->world.n, s->sent, (float *const *)s->sent);
        if ((status = aggregate_vectors(&s->st.agg, NULL, s->sent, sim->world.n, s->average)) != HS_OK) return status;
    } else if (sim->trainer) {
        size_t p = trainer_param_count(sim->trainer);
        memset(s->average, 0, p * sizeof *s->average);
        for (int i = 0; i < sim->world.n; i++) {
            const float *sent = trainer_buffer(sim->trainer, i, CO2_SENT);
            for (size_t k = 0; k < p; k++) s->average[k] += sent[k];
        }
        for (size_t k = 0; k < p; k++) s->average[k] /= (float)sim->world.n;
    }
    /* clip = update: the all-reduce's central noise, one run of the mechanism (every agent
     * weighs alike), from the stream every member draws alike */
    aggregate_noise(&s->st.agg, NULL, sim->world.n, 0, engine_round(sim->engine), s->completed % 65536,
                    sim->trainer ? s->average : NULL);
    s->completed++;
    for (int i = 0; i < sim->world.n; i++)
        if (s->waiting[i]) {
            s->waiting[i] = 0;
            if ((status = co2_continue(s, sim, i)) != HS_OK) return status;
        }
    return HS_OK;
}

static void co2_destroy(void *state)
{
    Co2State *s = state;
    if (s == NULL) return;
    free(s->remaining);
    free(s->done);
    free(s->waiting);
    free(s->periods);
    free(s->average);
    free(s->sent);
    ring_gather_free(&s->gather);
    stages_free(&s->st);
    free(s);
}

static const SchemaKey co2_keys[] = {
    METHOD_KEY(Co2Keys, period, "4", "local steps between background all-reduces (tau)",
     .type = SCHEMA_INT, .min = 1, .max = 100000000, .flags = SCHEMA_WITHIN_ROUND, .doc_range = "[1, a round's steps]"),
    METHOD_KEY(Co2Keys, beta, "0.5", "outer momentum", .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OPEN_MAX),
    METHOD_KEY(Co2Keys, lambda, "1", "staleness-gap penalty: the outer gradient is divided by it",
     .type = SCHEMA_REAL, .min = 0, .max = 1e6, .flags = SCHEMA_OPEN_MIN),
    METHOD_KEY(Co2Keys, clip, "1", "elementwise clip of the outer momentum",
     .type = SCHEMA_REAL, .min = 0, .max = 1e300, .flags = SCHEMA_OPEN_MIN),
    METHOD_KEY(Co2Keys, outer_lr, "1", "outer learning rate", .type = SCHEMA_REAL, .min = 0, .max = 1e6),
    FREEZE_METHOD_KEYS(Co2Keys, freezing.),
    PRUNE_METHOD_KEYS(Co2Keys, pruning.),
    {0},
};

static const MethodStages co2_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps on its own model",
    .outgoing = "its model to the background all-reduce (compressed: its change from theta_old)",
    .aggregate = "all-reduce mean, applied one period late by the outer step",
    .refuses = {
        [FEATURE_DRIFT_FEDPROX] = "the average is used one period late, in an outer step with momentum: a proximal term towards the stale theta_old is a different method (not FedProx's w^t)",
        [FEATURE_DRIFT_SCAFFOLD] = "the average is used one period late, in an outer step with momentum: the control variates would be one period stale, which SCAFFOLD does not define",
    },
};

const MethodOps method_co2 = {
    .name = "co2",
    .capabilities = METHOD_LOSSY_RINGS,
    .summary = "CO2: local steps with the parameter all-reduce overlapped and applied one period late",
    .keys = co2_keys,
    .keys_size = sizeof(Co2Keys),
    .stages = &co2_stages,
    .create = co2_create,
    .round_begin = co2_round_begin,
    .on_event = co2_on_event,
    .destroy = co2_destroy,
};
