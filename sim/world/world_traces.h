/* world_traces.h — the attributes that follow a trace over time (`compute`, `uplink`,
 * `downlink`, `bandwidth` with a symmetric link, `availability`, `outage`, `charging` = trace(FILE.csv) in a
 * group, the server's group included; sim/kernel/trace.h reads the files). Each group's
 * file is loaded once for the nodes of that group; a node's compute, uplink and downlink
 * in the World become the trace's value at t = 0 (what the agents rows and the methods
 * see), and the series go to the engine as node attributes. `availability` and `outage` =
 * markov(MEAN_UP, MEAN_DOWN) are series too, drawn as the run asks (sim/kernel/trace_markov.h)
 * from each node's own stream of the scenario's seed. */
#ifndef SIM_WORLD_TRACES_H
#define SIM_WORLD_TRACES_H

#include "sim/kernel/trace.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

typedef struct WorldTraces {
    Trace *traces;       /* (n_traces) the files loaded, owned */
    int n_traces;
    /* per node (world_nodes): its series, NULL for a node without; an array is NULL when
     * no group uses that attribute's trace */
    const TraceSeries **compute, **uplink, **downlink, **availability;
    const TraceSeries **outage; /* [agents] outage: the links' state (1 up, 0 down) */
    const TraceSeries **charging; /* [agents] charging: watts into the battery over time */
    /* availability and outage = markov(): each node's process (sim/kernel/trace_markov.h), owned;
     * NULL when no group has one, a zeroed series for a node without */
    TraceSeries *markov_availability, *markov_outage;
    int n_nodes;
} WorldTraces;

/* Loads every trace of sc's groups for world's nodes and sets their attributes at t = 0.
 * Errors: HS_E_INPUT with "path:line: ..." (sim/kernel/trace.h), HS_E_NOMEM; *t is then
 * partly filled: free it with world_traces_free all the same (it accepts NULL and a
 * zeroed WorldTraces). */
int world_traces_load(const Scenario *sc, World *world, WorldTraces *t, HsDiag *diag);
void world_traces_free(WorldTraces *t);

#endif
