/* world.c — per-agent draws. One taus2 stream is re-seeded per agent instead of
 * allocating 100,000 generators. */
#include "sim/world.h"
#include "sim/rng.h"

#include <math.h>
#include <stdlib.h>

int world_build(const Scenario *sc, World *world, HsDiag *diag)
{
    world->n = sc->n_agents;
    world->agents = calloc((size_t)sc->n_agents, sizeof *world->agents);
    if (world->agents == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for %d agents", sc->n_agents);
    gsl_rng *rng = rng_stream_create(sc->seed, 0, RNG_PURPOSE_PROFILE);
    if (rng == NULL) {
        world_free(world);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    int even_share = sc->dataset_train_size / sc->n_agents;
    long long total_samples = 0;
    int index = 0;
    for (int g = 0; g < sc->n_groups; g++) {
        const AgentGroupSpec *spec = &sc->groups[g];
        for (int k = 0; k < spec->count; k++, index++) {
            AgentProfile *a = &world->agents[index];
            rng_stream_reset(rng, sc->seed, (uint64_t)index, RNG_PURPOSE_PROFILE);
            a->group = g;
            a->compute = distribution_draw(&spec->compute, rng);
            a->uplink = distribution_draw(&spec->uplink, rng);
            a->downlink = distribution_draw(&spec->downlink, rng);
            if (spec->symmetric_link) a->downlink = a->uplink;
            a->latency = distribution_draw(&spec->latency, rng);
            double samples = distribution_draw(&spec->samples, rng);
            a->samples = spec->has_samples ? (int)fmax(1.0, floor(samples + 0.5)) : even_share;
            if (a->samples < 1) a->samples = 1;
            total_samples += a->samples;
        }
    }
    gsl_rng_free(rng);
    if (sc->mode == RUN_MODE_TRAIN && total_samples > sc->dataset_train_size) {
        world_free(world);
        return hs_diag_set(diag, HS_E_INPUT, sc->file, sc->groups[0].line,
                           "[agents] samples: the agents hold %lld samples in all, but the dataset "
                           "has %d training samples", total_samples, sc->dataset_train_size);
    }
    return HS_OK;
}

void world_free(World *world)
{
    if (world == NULL) return;
    free(world->agents);
    world->agents = NULL;
    world->n = 0;
}

double world_link_latency(const World *world, int from, int to)
{
    double a = world->agents[from].latency, b = world->agents[to].latency;
    return a > b ? a : b;
}

double world_link_bandwidth(const World *world, int from, int to)
{
    double up = world->agents[from].uplink, down = world->agents[to].downlink;
    return up < down ? up : down;
}
