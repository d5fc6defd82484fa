/* walk.h — random walks of a token over a Topology: the transition kernels of the
 * `token` method (sim/methods/token.c) and the visit measure they are driven by.
 *
 * Kernels (d_i = degree of i, N(i) its neighbours):
 *   simple      P_ij = 1/d_i for j in N(i); stationary mu_i = d_i / sum_k d_k.
 *   metropolis  the Metropolis–Hastings random walk with a uniform target:
 *               P_ij = min(1/d_i, 1/d_j) for j in N(i), P_ii = 1 - sum_j P_ij; mu_i = 1/n.
 *               (Not topology.h's mixing weights 1/(1 + max(d_i, d_j)), which are
 *               D-PSGD's averaging matrix; this is the sampling chain the SRRW papers use.)
 *   srrw        the self-repellent random walk of Doshi, Hu, Eun (ICML 2023) on a base
 *               chain P (simple or metropolis) with target mu:
 *                 K_ij[x] = P_ij (x_j/mu_j)^(-alpha) / sum_k P_ik (x_k/mu_k)^(-alpha)
 *               over the j with P_ij > 0 (the self-loop included), where x is the visit
 *               measure below. alpha = 0 is the base chain; larger alpha avoids agents
 *               visited more than their share. The measure converges to mu for every
 *               alpha, with an asymptotic sampling variance that falls like O(1/alpha).
 * An agent without neighbours keeps the token (P_ii = 1).
 *
 * Visit measure (SA-SRRW, Hu, Doshi, Eun, ICLR 2024, the "generalized SRRW"):
 *   x_0 = mu, and after the k-th visit, of agent j, x <- x + gamma_k (delta_j - x) with
 *   gamma_k = (k + 1)^(-a), a in (0.5, 1]. a = 1 is the plain empirical measure in which
 *   x_0 counts as one visit: x_k = (mu + visits so far) / (k + 1). Doshi et al. need x_0
 *   inside the simplex (x_j = 0 would make the repellence infinite); starting at the
 *   target mu adds no bias toward any agent. Kept as x = scale * weight so that a visit
 *   costs O(1): only ratios x_j/x_k enter the kernel, and the weights are renormalized
 *   when the scale would underflow.
 * Raw visit counts are kept too, for reports (the total-variation distance of the visit
 * frequencies to mu) and tests. */
#ifndef SIM_WALK_H
#define SIM_WALK_H

#include "sim/scenario/topology.h"

#include <gsl/gsl_rng.h>

typedef enum { WALK_SIMPLE = 0, WALK_METROPOLIS, WALK_SRRW } WalkKind;

typedef struct Walk {
    const Topology *topology;   /* not owned */
    WalkKind kind;
    WalkKind base;              /* srrw: WALK_SIMPLE or WALK_METROPOLIS */
    double alpha;               /* srrw repellence */
    double exponent;            /* a of gamma_k = (k + 1)^(-a) */
    double *mu;                 /* (n) stationary distribution of the base chain */
    double *weight;             /* (n) x = scale * weight */
    double scale;
    long *counts;               /* (n) raw visits */
    long visits;
    int max_degree;
} Walk;

/* kind, base as above (base is ignored unless kind is WALK_SRRW and must not be WALK_SRRW);
 * alpha >= 0; exponent in (0.5, 1]. Returns HS_OK or HS_E_NOMEM. Free with walk_free. */
int walk_init(Walk *w, const Topology *t, WalkKind kind, WalkKind base, double alpha, double exponent);
void walk_free(Walk *w);

/* The transition probabilities out of agent i under the current visit measure: targets[k]
 * with probs[k] > 0, in increasing agent order (i itself in its place when it has a
 * self-loop); both arrays hold at least max_degree + 1 entries. Returns the count. */
int walk_transitions(const Walk *w, int i, int *targets, double *probs);
/* Draws the next agent from i with one uniform of rng (cumulative probabilities in target
 * order); targets/probs are scratch as above. */
int walk_next(const Walk *w, int i, gsl_rng *rng, int *targets, double *probs);
/* Records a visit of agent j (the counts and the measure). */
void walk_visit(Walk *w, int j);
/* x_j of the visit measure (normalized). */
double walk_measure(const Walk *w, int j);
/* Total-variation distance between the raw visit frequencies and mu (0 before any visit:
 * NaN). O(n). */
double walk_tv_distance(const Walk *w);

#endif
