/* world.h — the agents of a run, drawn from the scenario.
 * Agent i's attributes come from its own stream (seed, i), drawn in a fixed order
 * (compute, uplink, downlink, latency, samples, batch) whatever its group, so adding an agent
 * or a group never changes the draws of the agents before it.
 * Indices: the agents of [agents] itself first, then each group in file order, then the
 * server nodes ([server]; Scenario.n_servers), which hold no data (samples 0) and are
 * not agents: n counts the agents only, and loops over agents stay 0..n-1.
 * Memory: 48 bytes per agent, so 100,000 agents fit in a few MB. */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include "sim/scenario/scenario.h"

typedef struct AgentProfile {
    double compute;   /* FLOP/s at full speed */
    double uplink;    /* bytes/s */
    double downlink;  /* bytes/s */
    double latency;   /* s, added to every message the agent sends or receives */
    int samples;      /* local training samples */
    int batch;        /* samples per local step ([agents] batch, default [model] batch) */
    int group;        /* index into Scenario.groups */
    int byzantine;    /* 1 for the [byzantine] attackers, drawn here once (sim/world/roles.h) */
} AgentProfile;

/* An agent's powers and battery (docs/energy.md), its group's constants or its draws. */
typedef struct AgentEnergy {
    double power_compute, power_idle; /* W */
    double power_tx, power_rx;        /* W while sending, receiving (power_comm: both) */
    double energy_per_byte;                       /* J per byte sent or received */
    double battery;                               /* J capacity; 0: none */
    double charging;                              /* W into the battery, all the time (0
                                                   * under a charging trace: the engine's) */
} AgentEnergy;

typedef struct World {
    int n;                /* agents */
    int n_servers;        /* server nodes after them: indices n .. n + n_servers - 1 */
    AgentProfile *agents; /* (n + n_servers) */
    AgentEnergy *energy;  /* (n) the agents' drawn energy, when some group gives an energy
                           * key as a distribution; NULL otherwise (the groups' constants:
                           * no memory per agent for what every agent shares) */
} World;

/* Agents and servers: the size of the per-node arrays (clocks, links). */
static inline int world_nodes(const World *world)
{
    return world->n + world->n_servers;
}

/* Draws every agent. Errors: HS_E_NOMEM, HS_E_INPUT (e.g. samples exceed the dataset). */
int world_build(const Scenario *sc, World *world, HsDiag *diag);
void world_free(World *world);

/* world_energy.c: draws world->energy from each agent's own stream (RNG_PURPOSE_ENERGY,
 * so no other draw moves), when some group's energy key is a distribution; a constant
 * draws nothing. HS_OK, HS_E_NOMEM, or HS_E_INPUT for a draw no run can use. */
int world_energy_draw(const Scenario *sc, World *world, HsDiag *diag);
/* Node i's powers and battery: its draws, or its group's constants (servers: none). */
AgentEnergy world_agent_energy(const Scenario *sc, const World *world, int i);

/* Steps of a round, a "global epoch" of steps in which every agent takes one batch:
 * ceil(mean samples / mean batch), at least 1 (all batches b: ceil(mean samples / b)). */
int world_round_steps(const World *world);
/* Steps of one local epoch of agent: ceil(samples / its batch). */
int world_agent_steps(const World *world, int agent);
/* The largest batch of any agent (buffers sized for every agent's steps). */
int world_max_batch(const World *world);
/* Latency of a message from a to b: the larger of the two agents' latencies. */
double world_link_latency(const World *world, int from, int to);
/* Bottleneck bandwidth of a message from a to b: min(uplink a, downlink b). */
double world_link_bandwidth(const World *world, int from, int to);

#endif
