/* world_energy.c — each agent's powers and battery (docs/energy.md). A group gives each
 * energy key as a constant or a distribution, like compute; the draws are kept only when
 * some group has a distribution, since constants are the group's and need no memory per
 * agent. Every agent draws from its own stream of RNG_PURPOSE_ENERGY, re-seeded per agent,
 * in a fixed order of the keys; a constant draws nothing, so the profile's streams (and
 * every run whose energy keys are constants) draw exactly what they drew before.
 * power_tx and power_rx that are the same distribution are one radio (power_comm): one
 * draw, in power_comm's place; when they differ, power_tx draws in that place and
 * power_rx after every other key, so no run from before the split draws otherwise. */
#include "sim/world/world.h"

#include "sim/kernel/rng.h"

#include <math.h>
#include <stdlib.h>

/* The keys in the order an agent draws them (power_tx in power_comm's place; power_rx
 * last, when it is not power_tx's draw). */
#define WORLD_ENERGY_KEYS(X)                                                             \
    X(power_compute) X(power_tx) X(power_idle) X(energy_per_byte) X(battery) X(charging)

static int world_energy_drawn(const AgentGroupSpec *g)
{
#define WORLD_ENERGY_DRAWN(field) || (g->field.kind != DIST_CONSTANT && g->field.kind != DIST_TRACE)
    return 0 WORLD_ENERGY_KEYS(WORLD_ENERGY_DRAWN) WORLD_ENERGY_DRAWN(power_rx);
#undef WORLD_ENERGY_DRAWN
}

static AgentEnergy world_group_energy(const AgentGroupSpec *g)
{
    /* a charging trace is the engine's (EngineTraces.charging): 0 here */
    return (AgentEnergy){.power_compute = g->power_compute.a, .power_tx = g->power_tx.a, .power_rx = g->power_rx.a,
                         .power_idle = g->power_idle.a, .energy_per_byte = g->energy_per_byte.a,
                         .battery = g->battery.a, .charging = g->charging.kind == DIST_TRACE ? 0 : g->charging.a};
}

AgentEnergy world_agent_energy(const Scenario *sc, const World *world, int i)
{
    if (i >= world->n) return (AgentEnergy){0}; /* the servers draw nothing */
    if (world->energy) return world->energy[i];
    return world_group_energy(&sc->groups[world->agents[i].group]);
}

int world_energy_draw(const Scenario *sc, World *world, HsDiag *diag)
{
    int drawn = 0;
    for (int g = 0; g < sc->n_groups; g++) drawn |= world_energy_drawn(&sc->groups[g]);
    if (!drawn) return HS_OK;
    world->energy = calloc((size_t)world->n, sizeof *world->energy);
    gsl_rng *rng = rng_stream_create(sc->seed, 0, RNG_PURPOSE_ENERGY);
    if (world->energy == NULL || rng == NULL) {
        if (rng) gsl_rng_free(rng);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for %d agents' energy", world->n);
    }
    int status = HS_OK;
    for (int i = 0; i < world->n && status == HS_OK; i++) {
        const AgentGroupSpec *g = &sc->groups[world->agents[i].group];
        AgentEnergy *out = &world->energy[i];
        rng_stream_reset(rng, sc->seed, (uint64_t)i, RNG_PURPOSE_ENERGY);
        /* a draw no run can use (a wide lognormal or pareto overflows): at the group's line,
         * as compute's (world.c); a normal redraws while <= 0, the others draw >= 0 */
#define WORLD_ENERGY_DRAW(field)                                                                        \
    out->field = g->field.kind == DIST_TRACE ? 0 : distribution_draw(&g->field, rng);                \
    if (status == HS_OK && !(out->field >= 0 && isfinite(out->field)))                                 \
        status = hs_diag_set(diag, HS_E_INPUT, sc->file, g->line,                                      \
                             "[%s%s] %s: agent %d drew %g, which no run can use (a distribution this " \
                             "wide overflows; narrow it)",                                             \
                             g == &sc->groups[0] ? "agents" : "agents.", g == &sc->groups[0] ? "" : g->name, \
                             #field, i, out->field);
        WORLD_ENERGY_KEYS(WORLD_ENERGY_DRAW)
        if (distribution_same(&g->power_tx, &g->power_rx)) {
            out->power_rx = out->power_tx;
        } else {
            WORLD_ENERGY_DRAW(power_rx)
        }
#undef WORLD_ENERGY_DRAW
    }
    gsl_rng_free(rng);
    return status;
}
