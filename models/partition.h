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
 *   domains:   federated domain generalization (Bai, Bagchi, Inouye, "Benchmarking
 *              Algorithms for Federated Domain Generalization", ICLR 2024): the rows of
 *              the training domains (dataset.h: row k is in domain k mod n_domains; the
 *              held-out domains are left out) are dealt by the paper's heterogeneous
 *              partitioning with parameter lambda (partition_domain_counts), each domain's
 *              rows in a random order, taken by the agents in index order. The agents'
 *              sizes are the partition's, not samples_per_agent.
 *   natural:   the data set's own writers (dataset.h: leaf), W of them, dealt to the
 *              n_agents <= W agents in the files' order, as even groups of whole writers:
 *              agent a holds writers floor(a W / n) .. floor((a + 1) W / n) - 1 (n = W: agent
 *              a is writer a). The agents' sizes are the partition's (partition_natural_counts),
 *              not samples_per_agent; no sample is drawn, only the order within each agent.
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

/* The paper's heterogeneous partitioning, as its authors' code does it
 * (inouye-lab/FedDG_Benchmark, src/splitter.py, NonIIDSplitter; lambda is its `iid`):
 * counts[c * n_domains + d] = the rows of domain d that agent c holds, from the domain
 * sizes alone (no randomness; a held-out domain has size 0).
 *  C agents >= D non-empty domains: every non-empty domain gets one "main" agent, and
 *    the rest go one at a time to the domain with the most rows per main agent (the
 *    first on ties); main agents are laid out domain by domain in index order. Agent c
 *    with main domain m holds n_d ((1 - lambda) [d = m] / s_m + lambda / C) of domain d
 *    (s_m = m's main agents), truncated; each domain's rounding remainder (rounded to
 *    nearest) goes one row each to agents 0, 1, ...
 *  C < D: lambda = 0 deals whole domains, largest first (ties: the higher index, as the
 *    code's reversed stable argsort), each to the agent holding the fewest rows so far
 *    (the first on ties); the mix lambda (n_d / C each) + (1 - lambda) (that deal) is
 *    truncated and each domain's remainder goes to agents 0, 1, ...
 * lambda = 1 gives every agent the same share of every domain; lambda = 0 gives each
 * agent rows of one domain only (C >= D) or whole domains (C < D).
 * Returns HS_OK, HS_E_INPUT (no rows, lambda outside [0, 1], n_domains outside
 * [1, DATA_MAX_DOMAINS], n_agents < 1) or HS_E_NOMEM. */
int partition_domain_counts(const int *domain_sizes, int n_domains, int n_agents, double lambda, int *counts);
/* The training-domain sizes of spec for a training set of n_train rows (held-out
 * domains 0) into sizes (n_domains). */
void partition_domain_sizes(const DataSpec *spec, int n_train, int *sizes);

/* natural: the samples of each of n_agents agents into counts (n_agents), and, when
 * first_writer is not NULL, the first of its writers into first_writer (n_agents + 1:
 * agent a holds writers first_writer[a] .. first_writer[a+1]-1). HS_E_INPUT with a message
 * when the data set has no writers or fewer than n_agents. */
int partition_natural_counts(const Dataset *ds, int n_agents, int *counts, int *first_writer, HsDiag *diag);

int partition_n_agents(const Partition *p);
/* Samples held by all agents together. */
size_t partition_total(const Partition *p);
/* Rows of agent's samples (into the training set); *count receives their number. The
 * array belongs to the partition. */
const int *partition_indices(const Partition *p, int agent, int *count);

#endif
