/* privacy.h — differentially private FedAvg / Local SGD: per-sample and per-update
 * clipping, Gaussian noise and the privacy accountant ([privacy], seed 003: Li, Jiang,
 * Schmidt, Alstrom, Stich, "An improved analysis of per-sample and per-update clipping in
 * federated learning", ICLR 2024).
 *
 *   clip = sample  every local step is a DP-SGD step (Abadi et al., CCS 2016): each
 *                  sample's gradient is clipped to L2 norm C (exact per-sample gradients,
 *                  models/model.h), the clipped gradients are summed, N(0, (sigma C)^2 I)
 *                  is added to the sum and the result divided by the batch size. Privacy
 *                  is per sample ("sample-level"); the mechanism runs at every local step.
 *   clip = update  each client runs its local steps unclipped, then clips its model update
 *                  (delta = x_end - x_start over the period) to norm C; the aggregate (the
 *                  weighted mean of the clipped updates) gets N(0, (sigma C w_max)^2 I), w_max
 *                  the largest normalised weight, i.e. sigma x the aggregate's sensitivity
 *                  to one client (sigma C / m for m equally weighted clients: the scaling
 *                  of DP-FedAvg, McMahan et al. ICLR 2018). Privacy is per client
 *                  ("client-level"); the mechanism runs once per averaging. The weights
 *                  (samples) and the members are public, so the mean's denominator is
 *                  fixed, as in DP-FedAvg's fixed-denominator estimator: one client's
 *                  clipped update changes the mean by at most C x its weight when it is
 *                  zeroed out (the zero-out adjacency of DP aggregators).
 * Serverless all-reduce (localsgd): the aggregate's noise comes from one stream seeded per
 * (round, period) that every member draws alike, as if a server or a secure aggregation
 * added it; every member ends with the same noisy model.
 *
 * Accounting: Renyi DP of the (Poisson) subsampled Gaussian mechanism at integer orders
 * 2..256 (Mironov, Talwar, Zhang 2019; the moments accountant of Abadi et al. 2016 is the
 * same quantity), composed over the mechanism's runs and converted to (epsilon, delta) by
 * epsilon = min over orders of rdp + log(1/delta) / (order - 1) (Mironov 2017, Prop. 3).
 * sample: q = batch / n_i per agent and one run per local step; epsilon is the largest over
 * the agents. Batches are taken from reshuffled epochs, not Poisson-sampled: accounting them
 * at q = B / n is the usual approximation (as Abadi et al. and DP libraries do). update:
 * q = 1 and one run per averaging (no amplification by client sampling is claimed, so
 * participation < 1 is over-counted, never under-counted).
 *
 * Clipping and noise cost no virtual time: the cost model counts the same FLOPs (the seed
 * paper analyses rounds, not time), so timing mode's timings are those of train mode. */
#ifndef SIM_PRIVACY_H
#define SIM_PRIVACY_H

#include "sim/scenario/scenario.h"
#include "sim/train/trainer.h"
#include "sim/world/world.h"

#define PRIVACY_MIN_ORDER 2
#define PRIVACY_MAX_ORDER 256
#define PRIVACY_N_ORDERS (PRIVACY_MAX_ORDER - PRIVACY_MIN_ORDER + 1)

/* ---- the accountant ---- */

/* RDP at integer order alpha >= 2 of one run of the Gaussian mechanism with noise
 * multiplier sigma on a Poisson sample of rate q in [0, 1]:
 * log( sum_k C(alpha,k) (1-q)^(alpha-k) q^k exp((k^2 - k) / (2 sigma^2)) ) / (alpha - 1),
 * summed in log space; q = 1 gives alpha / (2 sigma^2), q = 0 gives 0, sigma = 0 inf. */
double privacy_rdp_step(double q, double sigma, int alpha);
/* privacy_rdp_step at every order 2..256 into rdp (PRIVACY_N_ORDERS), times steps. */
void privacy_rdp_orders(double q, double sigma, double steps, double *rdp);
/* min over the orders of rdp[i] + log(1/delta) / (order_i - 1), orders 2, 3, ... (n_orders
 * of them); *best_order (may be NULL) receives the order reaching it. */
double privacy_epsilon_from_rdp(const double *rdp, int n_orders, double delta, int *best_order);
/* Epsilon after steps runs of the sampled Gaussian mechanism (q, sigma), at delta. */
double privacy_epsilon(double q, double sigma, double steps, double delta, int *best_order);

/* ---- what a FedAvg-style method calls (localsgd, fedavg) ---- */

typedef struct Privacy Privacy;

/* NULL in *out when [privacy] is absent or clip = none: every function below then does
 * what the method does without privacy (a plain local step, a plain average). trainer is
 * NULL in timing mode: the accounting still runs, the arithmetic does not. */
int privacy_create(const Scenario *sc, const World *world, Trainer *trainer, Privacy **out);
void privacy_free(Privacy *p);
/* One local step of agent: clip = sample a DP-SGD step, otherwise trainer_local_step. */
int privacy_local_step(Privacy *p, Trainer *t, int agent);
/* privacy_local_step with a drift correction on its gradient (sim/stages/drift.h). */
int privacy_local_step_corrected(Privacy *p, Trainer *t, int agent, const TrainerCorrection *correction);
/* The gradient of agent's next batch at params (NULL: its own model) into grad: clip =
 * sample a DP-SGD gradient (clipped per-sample gradients, noise on the sum, divided by the
 * batch; one run of the mechanism for the accountant), otherwise the plain gradient. */
int privacy_gradient(Privacy *p, Trainer *t, int agent, const float *params, float *grad);
/* clip = update: the members start a local period; their current models are the points
 * their updates are measured from. */
int privacy_period_begin(Privacy *p, Trainer *t, const int *members, int n_members);
/* clip = update where the update is a vector of its own (a gradient): v (d floats) is
 * scaled to L2 norm <= C. */
void privacy_clip_vector(Privacy *p, float *v, size_t d);
/* clip = update: agent finished its period; its model becomes start + clip(update). */
int privacy_client_done(Privacy *p, Trainer *t, int agent);
/* trainer_average of the members, then (clip = update) privacy_aggregate_noise on every
 * member's copy of the average. */
int privacy_average(Privacy *p, Trainer *t, const int *members, int n_members, int by_samples, int round,
                    int period);
/* A server-based method (fedavg) holds the start point itself. clip = update: x <- start +
 * clip(x - start) (x may be NULL: timing mode). */
void privacy_client_done_from(Privacy *p, float *x, const float *start);
/* clip = update: counts one run of the client-level mechanism on the members' weighted mean
 * and adds its noise, N(0, (sigma C w_max)^2 I) drawn from the stream of (round, period), to
 * each of the n_targets vectors (none in timing mode). */
void privacy_aggregate_noise(Privacy *p, const int *members, int n_members, int by_samples, int round, int period,
                             float *const *targets, int n_targets);
/* clip = update, the same with the sensitivity given: one run of the mechanism, noise
 * N(0, (sigma C share)^2) where share is the largest share one client has in the
 * aggregate (its weight over the total). */
void privacy_aggregate_noise_share(Privacy *p, double share, int round, int period, float *const *targets, int n_targets);
/* clip = update: the members' models may now differ (an averaging that leaves parts of
 * them apart, ComDML's auxiliary heads): the next period measures each update from its own
 * start point. */
void privacy_models_apart(Privacy *p, const int *members, int n_members);
/* Epsilon spent so far at the [privacy] delta (inf with noise_multiplier = 0, NaN when p is
 * NULL). */
double privacy_spent(const Privacy *p);

#endif
