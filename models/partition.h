/* partition.h — which training samples each agent holds. One shared index array and
 * per-agent offsets: an agent holds a list of row numbers into the Dataset, never a copy
 * of the data. Agents' lists are disjoint (no sample is held twice), so the agents
 * together may hold at most n_train samples.
 *
 *   iid:       one shuffle of all rows, cut into consecutive runs of the agents' sizes.
 *   dirichlet: agent i draws class proportions q_i ~ Dir(alpha, ..., alpha) and its
 *              class counts ~ Multinomial(n_i, q_i), taken from per-class pools of
 *              shuffled rows; when a class runs out, the shortfall is redrawn over the
 *              classes that are left (weights q_i), so a small alpha gives each agent few
 *              classes and a large one approaches iid. Agents draw in index order.
 *   shards:    a random subset of sum n_i rows sorted by label is cut into
 *              shards_per_agent pieces per agent (agent i's pieces hold n_i in total, as
 *              equal as possible), laid along the sorted rows in a random order: each
 *              agent sees about shards_per_agent label ranges (McMahan et al.'s shards).
 * Within an agent the rows are shuffled. All randomness comes from rng, in agent order. */
#ifndef MODELS_PARTITION_H
#define MODELS_PARTITION_H

#include "models/dataset.h"
#include "models/model_spec.h"
#include "base/hs_error.h"

#include <gsl/gsl_rng.h>
#include <stddef.h>

typedef struct Partition Partition;

/* samples_per_agent (n_agents entries, each >= 0) or NULL for an even share
 * n_train / n_agents each. HS_E_INPUT with a message in diag when the agents would hold
 * more samples than the training set has, or for bad parameters (alpha <= 0,
 * shards_per_agent < 1, n_agents < 1); HS_E_NOMEM. Free *out with partition_free. */
int partition_make(const Dataset *ds, const DataSpec *spec, int n_agents, const int *samples_per_agent,
                   gsl_rng *rng, Partition **out, HsDiag *diag);
void partition_free(Partition *p);

int partition_n_agents(const Partition *p);
/* Samples held by all agents together. */
size_t partition_total(const Partition *p);
/* Rows of agent's samples (into the training set); *count receives their number. The
 * array belongs to the partition. */
const int *partition_indices(const Partition *p, int agent, int *count);

#endif
