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

/* [method] keys: the local step's features */
typedef struct AdpsgdKeys {
    PruneKeys pruning;
    FreezeKeys freezing;
} AdpsgdKeys;

typedef struct AdpsgdState {
    Topology topology;
    AdpsgdAgent *agents;
    gsl_rng *rng;         /* re-seeded per draw from (seed, agent, step): stream per agent */
    int started;
    Stages st;
    float *mixed[2];      /* (params) train mode, with features: the pair's two averages */
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
    if ((status = trainer_setup_local(sim->trainer, 1)) != HS_OK) return status;
    const AdpsgdKeys *keys = scenario_method_keys(sim->sc);
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    for (int k = 0; sim->trainer && !stages_gossip_plain(&s->st) && k < 2; k++)
        if ((s->mixed[k] = malloc(trainer_param_count(sim->trainer) * sizeof *s->mixed[k])) == NULL) return HS_E_NOMEM;
    return HS_OK;
}

static int adpsgd_start_gradient(AdpsgdState *s, Sim *sim, int i)
{
    AdpsgdAgent *a = &s->agents[i];
    a->averagings_at_gradient = a->averagings;
    /* computed on the model as it is now: averagings during the computation make it stale */
    int status = local_step_gradient(&s->st.step, i, NULL, trainer_buffer(sim->trainer, i, ADPSGD_GRADIENT));
    if (status != HS_OK) return status;
    double finish;
    if ((status = engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), ADPSGD_COMPUTED, 0, &finish)) != HS_OK)
        return status;
    /* Offline for good before its last epoch: the others would gossip on forever while
     * the round waits for it. */
    if (!isfinite(finish) && (sim->sc->rounds <= 0 || a->steps < (long)sim->sc->rounds * adpsgd_epoch_steps(sim, i)))
        return engine_fail_stranded(sim->engine, i);
    return HS_OK;
}

/* The pair's atomic average x_i, x_j <- (x_i + x_j) / 2; with a feature (masks,
 * attackers, a robust rule) each side takes the stages' gossip form over {its own, the
 * other's}, an attacker's message replaced (the reply carries j's model as it was). */
static int adpsgd_average(AdpsgdState *s, Sim *sim, int i, int j)
{
    if (!sim->trainer) return HS_OK;
    size_t n = trainer_param_count(sim->trainer);
    float *xi = trainer_params(sim->trainer, i), *xj = trainer_params(sim->trainer, j);
    if (stages_gossip_plain(&s->st)) {
        for (size_t p = 0; p < n; p++) {
            float mean = 0.5f * (xi[p] + xj[p]);
            xi[p] = xj[p] = mean;
        }
        return HS_OK;
    }
    int who[2][2] = {{i, j}, {j, i}};
    const float *pair[2][2] = {{xi, xj}, {xj, xi}};
    const double half[2] = {0.5, 0.5};
    for (int side = 0; side < 2; side++) {
        int status = stages_gossip(&s->st, who[side], pair[side], half, 2, n, s->mixed[side]);
        if (status != HS_OK) return status;
    }
    memcpy(xi, s->mixed[0], n * sizeof *xi);
    memcpy(xj, s->mixed[1], n * sizeof *xj);
    return HS_OK;
}

static int adpsgd_round_begin(void *state, Sim *sim, int round)
{
    AdpsgdState *s = state;
    s->round = round;
    stages_begin_round(&s->st, round);
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
        return engine_send(sim->engine, i, a->partner, local_step_bytes(&s->st.step, i), ADPSGD_REQUEST, i);
    }
    if (ev->kind == ADPSGD_REQUEST) {
        int from = (int)ev->data;
        /* i replies with its model as it was: the pair's average is taken now */
        double bytes = local_step_bytes(&s->st.step, i);
        int status = adpsgd_average(s, sim, from, i);
        if (status != HS_OK) return status;
        s->agents[from].averagings++;
        a->averagings++;
        return engine_send(sim->engine, i, from, bytes, ADPSGD_REPLY, i);
    }
    /* reply: apply the stale gradient, then the next one */
    int status = local_step_apply(&s->st.step, i, trainer_buffer(sim->trainer, i, ADPSGD_GRADIENT));
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
    stages_free(&s->st);
    free(s->mixed[0]);
    free(s->mixed[1]);
    free(s);
}

static const SchemaKey adpsgd_keys[] = {
    PRUNE_METHOD_KEYS(AdpsgdKeys, pruning.),
    FREEZE_METHOD_KEYS(AdpsgdKeys, freezing.),
    {0},
};

static const MethodStages adpsgd_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient at its own model",
    .outgoing = "its model to one random neighbour",
    .aggregate = "pairwise average",
    .refuses = {
        [FEATURE_COMPRESSION] = "AD-PSGD's pair leaves its exchange holding one average; a compressed model would "
                                "leave the two apart (a CHOCO-style copy per pair is not modelled)",
        [FEATURE_PRIVACY_UPDATE] = STAGE_NO_TRUSTED_AGGREGATOR,
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_GOSSIP,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_GOSSIP,
    },
};

static const MethodExtra adpsgd_extras[] = {
    {.meaning = "mean staleness: averagings between computing a gradient and applying it"},
    {0},
};

const MethodOps method_adpsgd = {
    .name = "adpsgd",
    .summary = "AD-PSGD: asynchronous gossip averaging with one random neighbour, stale gradients",
    .keys = adpsgd_keys,
    .keys_size = sizeof(AdpsgdKeys),
    .capabilities = METHOD_USES_TOPOLOGY | METHOD_LOSSY_LINKS,
    .stages = &adpsgd_stages,
    .extra = adpsgd_extras,
    .create = adpsgd_create,
    .round_begin = adpsgd_round_begin,
    .on_event = adpsgd_on_event,
    .destroy = adpsgd_destroy,
};
