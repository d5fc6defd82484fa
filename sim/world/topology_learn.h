/* topology_learn.h — STL-FW, the sparse topology learner of Le Bars, Bellet, Tommasi,
 * Lavoie and Kermarrec ("Refined Convergence and Topology Learning for Decentralized SGD
 * with Heterogeneous Data", AISTATS 2023, Algorithm 1): Frank-Wolfe over the doubly
 * stochastic matrices, from W = I, minimising the bound on the neighbourhood
 * heterogeneity under label skew
 *   g(W) = (1/n) ||W Pi - 1 pibar'||_F^2 + (lambda/n) ||W - 11'/n||_F^2,
 * Pi (n x K) the agents' label shares (row i: agent i's share of each class), pibar their
 * mean. Each step solves the linear problem over the polytope's vertices (a permutation
 * matrix: an assignment on the gradient, O(n^3)), takes the exactly line-searched step
 * gamma in [0, 1], and so adds at most one vertex: W after l steps mixes at most l + 1
 * matrices, which is what makes it sparse.
 * Where hetsim deviates, and why: hetsim's graphs are undirected and its D-PSGD mixes with
 * a symmetric W (Lian et al.), so the learner runs over the symmetric doubly stochastic
 * matrices. Their linear problem is solved by P, the assignment on the symmetrised
 * gradient, made symmetric: each even cycle of P is replaced by the cheaper of its two
 * perfect matchings (a symmetric permutation of no higher cost: the two costs sum to
 * twice the cycle's), each odd cycle C by (C + C')/2. The paper's W is doubly stochastic
 * but not always symmetric. A step adds at most one neighbour per agent (two on an odd
 * cycle); [topology] degree is the budget: the learner stops before the first step that
 * would give any agent more neighbours, after `iterations` steps, or when no step
 * lowers g (gamma = 0). The graph it returns may be disconnected (g decides; the
 * consensus distance shows it). Deterministic: the assignment scans in index order and
 * keeps the first of equal costs; cycles are taken from their smallest agent. */
#ifndef SIM_TOPOLOGY_LEARN_H
#define SIM_TOPOLOGY_LEARN_H

#include "sim/scenario/topology.h"

/* The learned W over n agents from shares (n x classes, rows summing to 1) into out (its
 * weights and self weights are W). objective (iterations + 1 entries) or NULL receives
 * g before each step and after the last; *steps (or NULL) the steps taken. HS_OK or
 * HS_E_NOMEM. O(steps x (n^3 + n^2 classes)) time, O(n^2) memory. */
int topology_learn(const double *shares, int n, int classes, double lambda, int budget, int iterations,
                   Topology *out, double *objective, int *steps);

/* g(W) for a dense n x n W (row-major). */
double topology_learn_objective(const double *W, const double *shares, int n, int classes, double lambda);

/* The minimum-cost assignment of an n x n cost matrix (row-major): column_of[i] for each
 * row i (Kuhn-Munkres with potentials, O(n^3)). HS_OK or HS_E_NOMEM. */
int topology_assignment(const double *cost, int n, int *column_of);

#endif
