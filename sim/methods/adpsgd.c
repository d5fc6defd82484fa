/* adpsgd.c — AD-PSGD (Lian et al., ICML 2018): no global barrier.
 * An agent loops: compute a gradient at its current model; send the model to one
 * neighbour drawn uniformly from its own random stream; the neighbour averages
 * atomically (x_i, x_j ← (x_i + x_j)/2) on receipt and sends its model back; on the
 * reply the agent applies its now stale gradient and starts again. An offline neighbour
 * is skipped (the draw is among the neighbours online now, if any). Passive agents keep
 * computing: their uplink carries the replies. Stragglers slow only their neighbours.
 * Rounds: round r ends when every agent has completed r+1 passes over its own data;
 * agents never wait at a round boundary, so fast agents may be epochs ahead (their
 * extra steps count in the round they happen in). rounds.extra holds the mean gradient
 * staleness of the round: averagings an agent's model went through between computing a
 * gradient and applying it. */
#include "sim/methods/method.h"
#include "sim/kernel/rng.h"
#include "sim/scenario/topology.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { ADPSGD_COMPUTED = ENGINE_EVENT_METHOD, ADPSGD_REQUEST, ADPSGD_REPLY };
enum { ADPSGD_GRADIENT = 0 };

typedef struct AdpsgdAgent {
    long steps;           /* gradients applied, all rounds */
    long averagings;      /* times its model was averaged, all rounds */
    long averagings_at_gradient;
    int partner;
} AdpsgdAgent;

typedef struct AdpsgdState {
    Topology topology;
    AdpsgdAgent *agents;
    gsl_rng *rng;         /* re-seeded per draw from (seed, agent, step): stream per agent */
    double step_flops;
    int started;
    int round;
    int behind;           /* agents that have not finished round+1 epochs */
    double staleness_sum;
    long staleness_count;
} AdpsgdState;

static long adpsgd_epoch_steps(const Sim *sim, int i)
{
    return sim_agent_steps(sim, i);
}

static int adpsgd_create(Sim *sim, void **state)
{
    AdpsgdState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int status = scenario_topology(sim->sc, sim->world.n, &s->topology, sim->diag);
    if (status != HS_OK) return status;
    s->agents = calloc((size_t)sim->world.n, sizeof *s->agents);
    s->rng = gsl_rng_alloc(gsl_rng_taus2);
    if (s->agents == NULL || s->rng == NULL) return HS_E_NOMEM;
    s->step_flops = sim_step_flops(sim, sim->sc->model.batch);
    return trainer_setup_local(sim->trainer, 1);
}

static int adpsgd_start_gradient(AdpsgdState *s, Sim *sim, int i)
{
    AdpsgdAgent *a = &s->agents[i];
    a->averagings_at_gradient = a->averagings;
    /* computed on the model as it is now: averagings during the computation make it stale */
    int status = trainer_gradient(sim->trainer, i, trainer_buffer(sim->trainer, i, ADPSGD_GRADIENT));
    if (status != HS_OK) return status;
    double finish;
    if ((status = engine_compute(sim->engine, i, s->step_flops, ADPSGD_COMPUTED, 0, &finish)) != HS_OK) return status;
    /* Offline for good before its last epoch: the others would gossip on forever while
     * the round waits for it. */
    if (!isfinite(finish) && (sim->sc->rounds <= 0 || a->steps < (long)sim->sc->rounds * adpsgd_epoch_steps(sim, i)))
        return engine_fail_stranded(sim->engine, i);
    return HS_OK;
}

static void adpsgd_average(Sim *sim, int i, int j)
{
    if (!sim->trainer) return;
    size_t n = trainer_param_count(sim->trainer);
    float *xi = trainer_params(sim->trainer, i), *xj = trainer_params(sim->trainer, j);
    for (size_t p = 0; p < n; p++) {
        float mean = 0.5f * (xi[p] + xj[p]);
        xi[p] = xj[p] = mean;
    }
}

static int adpsgd_round_begin(void *state, Sim *sim, int round)
{
    AdpsgdState *s = state;
    s->round = round;
    s->staleness_sum = 0;
    s->staleness_count = 0;
    s->behind = 0;
    for (int i = 0; i < sim->world.n; i++)
        if (s->agents[i].steps < (long)(round + 1) * adpsgd_epoch_steps(sim, i)) s->behind++;
    if (s->behind == 0) {
        engine_end_round(sim->engine);
        return HS_OK;
    }
    if (s->started) return HS_OK; /* agents are already running */
    s->started = 1;
    int status = HS_OK;
    for (int i = 0; i < sim->world.n && status == HS_OK; i++) status = adpsgd_start_gradient(s, sim, i);
    return status;
}

static int adpsgd_on_event(void *state, Sim *sim, const Event *ev)
{
    AdpsgdState *s = state;
    int i = ev->agent;
    AdpsgdAgent *a = &s->agents[i];
    double bytes = sim_model_bytes(sim);
    if (ev->kind == ADPSGD_COMPUTED) {
        const int *neighbours = s->topology.adj + s->topology.offsets[i];
        int degree = topology_degree(&s->topology, i), online = 0;
        double now = engine_now(sim->engine);
        for (int k = 0; k < degree; k++) online += engine_agent_online(sim->engine, neighbours[k], now);
        rng_stream_reset(s->rng, sim->sc->seed, (uint64_t)i * 1000003u + (uint64_t)a->steps, RNG_PURPOSE_METHOD);
        int pick = (int)gsl_rng_uniform_int(s->rng, (unsigned long)(online ? online : degree));
        a->partner = neighbours[pick];
        for (int k = 0; online && k < degree; k++)
            if (engine_agent_online(sim->engine, neighbours[k], now) && pick-- == 0) {
                a->partner = neighbours[k];
                break;
            }
        return engine_send(sim->engine, i, a->partner, bytes, ADPSGD_REQUEST, i);
    }
    if (ev->kind == ADPSGD_REQUEST) {
        int from = (int)ev->data;
        adpsgd_average(sim, from, i);
        s->agents[from].averagings++;
        a->averagings++;
        return engine_send(sim->engine, i, from, bytes, ADPSGD_REPLY, i);
    }
    /* reply: apply the stale gradient, then the next one */
    int status = trainer_optimizer_step(sim->trainer, i, trainer_buffer(sim->trainer, i, ADPSGD_GRADIENT));
    if (status != HS_OK) return status;
    s->staleness_sum += (double)(a->averagings - a->averagings_at_gradient);
    s->staleness_count++;
    a->steps++;
    if (a->steps == (long)(s->round + 1) * adpsgd_epoch_steps(sim, i) && --s->behind == 0) {
        sim->round_extra = s->staleness_count ? s->staleness_sum / s->staleness_count : NAN;
        engine_end_round(sim->engine);
    }
    return adpsgd_start_gradient(s, sim, i);
}

static void adpsgd_destroy(void *state)
{
    AdpsgdState *s = state;
    if (s == NULL) return;
    topology_free(&s->topology);
    free(s->agents);
    if (s->rng) gsl_rng_free(s->rng);
    free(s);
}

static const SchemaKey adpsgd_keys[] = {{0}};

static const MethodStages adpsgd_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient at its own model",
    .outgoing = "its model to one random neighbour",
    .aggregate = "pairwise average",
    .refuses = {
        [FEATURE_COMPRESSION] = STAGE_NOT_WIRED,
        [FEATURE_BYZANTINE] = STAGE_NOT_WIRED,
        [FEATURE_PRIVACY_SAMPLE] = STAGE_NOT_WIRED,
        [FEATURE_PRIVACY_UPDATE] = STAGE_NO_TRUSTED_AGGREGATOR,
        [FEATURE_PRUNE] = STAGE_NOT_WIRED,
        [FEATURE_FREEZE] = STAGE_NOT_WIRED,
    },
};

const MethodOps method_adpsgd = {
    .name = "adpsgd",
    .summary = "AD-PSGD: asynchronous gossip averaging with one random neighbour, stale gradients",
    .keys = adpsgd_keys,
    .capabilities = METHOD_USES_TOPOLOGY,
    .stages = &adpsgd_stages,
    .create = adpsgd_create,
    .round_begin = adpsgd_round_begin,
    .on_event = adpsgd_on_event,
    .destroy = adpsgd_destroy,
};
