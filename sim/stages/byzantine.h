/* byzantine.h — Byzantine agents ([byzantine]): who they are, what they send instead of
 * their honest vector, and the robust aggregators that combine what everybody sent.
 *
 * Identity: `count` agents drawn from the scenario seed alone (a partial Fisher–Yates on
 * one stream), so the same seed marks the same agents whatever the method; world_build
 * draws them once (sim/world/roles.h, AgentProfile.byzantine) and the engine reports
 * them in agents.byzantine. Attackers follow the protocol's timing exactly (they
 * compute and send when an honest agent would), only the values differ.
 *
 * Attacks (v_i = what agent i would send if honest; mu, sd = coordinate-wise mean and
 * standard deviation over the honest agents' vectors — an omniscient attacker):
 *   signflip   -scale v_i
 *   gaussian   N(0, sigma^2) in every coordinate, from the attacker's own stream
 *   alie       mu - z sd ("A little is enough", Baruch et al. 2019; z defaults to their
 *              z_max for n and count), the same vector from every attacker
 *   ipm        -epsilon mu (inner product manipulation, Xie et al. 2020)
 *   labelflip  an honest computation on labels y -> classes - 1 - y: the attacker's
 *              gradient is taken on its own partition with flipped labels (a copy of its
 *              rows of the trainer's data set is kept here, so the trainer is untouched)
 *
 * Aggregators over K vectors of d floats (sums in double, in vector order):
 *   mean; median (coordinate-wise; the mean of the two middle values for even K);
 *   trimmed (coordinate-wise, drops the `trim` largest and smallest, averages the rest);
 *   krum (Blanchard et al. 2017: the vector whose n - f - 2 nearest neighbours are
 *   closest in squared distance; ties to the lower index);
 *   cclip (centered clipping, Karimireddy, He, Jaggi 2021: iters times
 *   v <- v + mean_i (x_i - v) min(1, tau / |x_i - v|), starting from the previous
 *   aggregate; the first starts from 0);
 *   betamle (the Beta-MLE / Flag Aggregator of Almasi et al., ICLR 2024: the m-dimensional
 *   subspace that maximizes the likelihood of every worker's reconstruction ratio
 *   |Y^T g_i|^2/|g_i|^2 under Beta densities, with pairwise terms weighted by lambda, by
 *   `iters` iteratively reweighted least-squares steps from the flag mean; the aggregate is
 *   sum_i Y Y^T g_i/|g_i| / m — see aggregate_betamle in byzantine.c). */
#ifndef SIM_BYZANTINE_H
#define SIM_BYZANTINE_H

#include "sim/scenario/scenario.h"
#include "sim/train/trainer.h"
#include "sim/world/world.h"

#include <gsl/gsl_rng.h>
#include <stddef.h>

typedef struct Byzantine Byzantine;

/* State for a run of sc over world: identities, attackers' streams, scratch, the
 * aggregator's state; vectors are of d floats. labelflip loads the attackers' rows from
 * trainer (train mode; NULL in timing mode). Errors return their status with a message
 * in diag. Free with byzantine_free (accepts NULL). */
int byzantine_create(const Scenario *sc, const World *world, const Trainer *trainer, size_t d, HsDiag *diag,
                     Byzantine **out);
void byzantine_free(Byzantine *b);
int byzantine_is_attacker(const Byzantine *b, int agent);
/* 1 if attackers compute their own vector on flipped labels (byzantine_gradient). */
int byzantine_flips_labels(const Byzantine *b);
/* The attacker's gradient on its next batch of its own rows with flipped labels, at
 * params (the agent's current parameters) into grad (model size). HS_E_DIVERGED (with a
 * message in diag) when its loss is not finite. */
int byzantine_gradient(Byzantine *b, int agent, const float *params, float *grad, HsDiag *diag);

/* Writes each attacker's vector into out[i] from what the agents would send honestly,
 * vectors[i] (out[i] may be vectors[i]); honest agents' out[i] are not touched. */
void byzantine_attack(Byzantine *b, const float *const *vectors, float *const *out);
/* The same over one exchange: vectors[k] is what agent who[k] would send (who NULL:
 * agent k), K of them; the honest moments are over the honest ones among them. */
void byzantine_attack_among(Byzantine *b, const int *who, int K, const float *const *vectors, float *const *out);
/* The spec's aggregator over the n vectors into out (d). */
int byzantine_aggregate(Byzantine *b, const float *const *vectors, float *out);
/* The same over K <= n vectors (one exchange). cclip starts from its previous aggregate,
 * whichever exchange that was. */
int byzantine_aggregate_among(Byzantine *b, const float *const *vectors, int K, float *out);

/* The aggregators and attacks alone, for tests and other callers. scratch: K doubles. */
void aggregate_mean(const float *const *v, int K, size_t d, float *out);
void aggregate_median(const float *const *v, int K, size_t d, double *scratch, float *out);
void aggregate_trimmed(const float *const *v, int K, size_t d, int trim, double *scratch, float *out);
/* Returns the index chosen; distances: K*K doubles of scratch. */
int aggregate_krum(const float *const *v, int K, size_t d, int f, double *distances, float *out);
/* center (d): the starting point; out may alias center. scale: K doubles of scratch. */
void aggregate_cclip(const float *const *v, int K, size_t d, const float *center, double tau, int iters,
                     double *scale, float *out);
/* rank: the subspace dimension m >= 1; lambda >= 0: the pairwise terms' weight; iters >= 0
 * reweightings after the flag mean. Returns 0, or -1 when out of memory. */
int aggregate_betamle(const float *const *v, int K, size_t d, int rank, double lambda, int iters, float *out);
/* Coordinate-wise mean and standard deviation (population) of the K vectors. */
void byzantine_moments(const float *const *v, int K, size_t d, float *mean, float *sd);

#endif
