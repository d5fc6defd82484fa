/* world_topology.h — the graph and mixing matrix W of a method that mixes with W (dpsgd):
 * [topology] graph with Metropolis-Hastings weights, a [topology] weights = FILE.weights
 * matrix, or graph = learned, STL-FW over the agents' label shares (topology_learn.h),
 * which are known once the data are partitioned. */
#ifndef SIM_WORLD_TOPOLOGY_H
#define SIM_WORLD_TOPOLOGY_H

#include "sim/world/world.h"

/* The scenario's W over the world's agents into out (free with topology_free). Errors as
 * scenario_topology, topology_weights_load, world_label_shares. */
int world_topology(const Scenario *sc, const World *world, Topology *out, HsDiag *diag);

/* Each agent's share of each label in the partition the trainer deals (the same data
 * stream: the same data set and rows, in train and timing mode alike) into a new
 * *shares (n x *classes, row-major; free it). Loads the data set: in timing mode this is
 * the data's only read. HS_E_INPUT for the data set's own errors; HS_E_NOMEM. */
int world_label_shares(const Scenario *sc, const World *world, double **shares, int *classes, HsDiag *diag);

#endif
