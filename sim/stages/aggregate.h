/* aggregate.h — the aggregation stage point: wherever sent vectors are combined. One
 * function per form a method's protocol has; inside each, the features decide:
 *   mean           the plain or weighted mean, summed in member order (deterministic);
 *   prune = width  each coordinate averaged over the members holding it
 *                  (vec_masked_average; sim/stages/prune.h);
 *   [byzantine]    the robust rule of [byzantine] aggregator over the same vectors
 *                  (sim/stages/byzantine.h; rules weigh every vector alike);
 *                  gossip forms: the rule over the agent's closed neighbourhood, and
 *                  centered clipping becomes self-centered clipping (He, Karimireddy,
 *                  Jaggi, "Byzantine-robust decentralized learning via ClippedGossip",
 *                  2022): x_i <- sum_j W_ij (x_i + clip(x_j - x_i, tau)), W_ii's term x_i;
 *   [privacy] clip = update
 *                  central Gaussian noise on the aggregate, sigma C w_max, one run of the
 *                  client-level mechanism for the accountant (sim/stages/privacy.h).
 * The forms:
 *   aggregate_models    an all-reduce of the members' models (every member ends with it);
 *   aggregate_around    an all-gather of changes around a point everybody holds (compressed
 *                       model deltas): xbar += weighted mean of the contributions;
 *   aggregate_vectors   a server's combination of K vectors into one. */
#ifndef SIM_STAGES_AGGREGATE_H
#define SIM_STAGES_AGGREGATE_H

#include "sim/stages/byzantine.h"
#include "sim/stages/local_step.h"
#include "sim/stages/outgoing.h"
#include "sim/stages/privacy.h"
#include "sim/stages/stage.h"

typedef struct Aggregate {
    StageContext cx;
    size_t d;                /* entries combined: the model's blocks */
    Privacy *privacy;        /* clip = update (borrowed) */
    Byzantine *byzantine;    /* [byzantine] on (borrowed) */
    const LocalStep *step;   /* the masks of prune = width (borrowed, may be NULL) */
    double *weights;         /* (n) scratch */
    const float **vectors;   /* (n) scratch */
    float *mean;             /* (d) scratch, train mode */
    int *everyone;           /* (n) 0..n-1 */
    /* a server's buffer of reports (aggregate_buffer_*) */
    float *sum;              /* (params) weighted sum of the reports (plain, masked) */
    float *count;            /* (params) masked: reports holding each coordinate */
    float **slots;           /* (capacity) robust: each report, weighted */
    int *slot_who;           /* (capacity) their senders */
    int n_slots, capacity;
    const float **slot_view; /* (capacity) */
} Aggregate;

int aggregate_init(Aggregate *a, const StageContext *cx, size_t d, const LocalStep *step, Privacy *privacy,
                   Byzantine *byzantine);
void aggregate_free(Aggregate *a);

/* The members' models (the trainer's, all of them; members NULL: 0..K-1) become their
 * mean, weighted by samples or uniform, per coordinate over the holders under prune;
 * then the central noise of clip = update, drawn from the stream of (round, period), on
 * every member's copy. [byzantine]: the rule over the models the members send, the
 * attackers' replaced (outgoing_attack), its blocks to every member. */
int aggregate_models(Aggregate *a, Outgoing *out, const int *members, int K, int by_samples, int round, int period);
/* ComDML's averaging: every block from whichever side trained it, weighted by samples,
 * auxiliary head m among the agents of split m (trainer_average_split), per coordinate
 * over the holders under prune; [byzantine]: the blocks are the rule over the agents'
 * (attackers' replaced; every agent weighs alike); then clip = update's central noise
 * (weights: samples) on every agent's copy. */
int aggregate_split(Aggregate *a, Outgoing *out, const int *splits, int round);
/* Compressed changes: anchor (d) += the weighted mean of contributions[k] (member k's),
 * then every member's model's blocks <- anchor. Train mode only (anchor NULL: nothing). */
int aggregate_around(Aggregate *a, float *anchor, const int *members, int K, const float *const *contributions,
                     int by_samples);

/* K vectors (vectors[k] sent by who[k]; who NULL: k) combined into out (d floats): the
 * [byzantine] rule when it is on, else their plain mean (summed in float in order, then
 * scaled by 1/K, as a ring all-reduce's mean). out must not be one of the vectors. */
int aggregate_vectors(Aggregate *a, const int *who, const float *const *vectors, int K, float *out);
/* A server's round of reports: x (params floats; NULL in timing mode) <- the combination
 * of the K reported models (models[k] from who[k], weights[k] its weight): plain, their
 * weighted mean (vec_weighted_average); masked (prune, freeze), per coordinate over the
 * reporters holding it, a coordinate nobody holds keeping x's value; robust, x += the
 * [byzantine] rule over their changes models[k] - x, which the attackers among them
 * replace first (every change weighs alike). Then the central noise of clip = update
 * (counted in timing mode too). */
int aggregate_reports(Aggregate *a, Outgoing *out, float *x, const int *who, const float *const *models,
                      const double *weights, int K, int round, int period);
/* A server's buffer (FedBuff): a report delta (params floats; NULL in timing mode) from
 * who with weight w joins it ... */
int aggregate_buffer_add(Aggregate *a, int who, const float *delta, double weight);
/* ... and once full: x <- x - step * combination, the combination being the mean of the
 * weighted reports (plain: their sum times 1/K, as FedBuff writes it; masked: per
 * coordinate over the reports holding it), or the [byzantine] rule over them after the
 * attackers among them replaced theirs; clip = update: noise on the combination first, at
 * the sensitivity of one client's share of the buffer. The buffer empties. */
int aggregate_buffer_flush(Aggregate *a, Outgoing *out, float *x, double step, int round, int period);

/* The same buffer taken whole, for a server with an optimiser of its own (Rennala): the
 * combination (the mean: the sum times 1/K; masked, per coordinate; robust, the rule), its
 * noise added, returned (NULL in timing mode) and valid until aggregate_buffer_clear. */
const float *aggregate_buffer_take(Aggregate *a, Outgoing *out, int round, int period);
void aggregate_buffer_clear(Aggregate *a);

/* Gossip: agent self's new model from its closed neighbourhood: vectors[0] is its own,
 * vectors[1..K) its neighbours' (who[k] the agents; who[0] = self), weights[k] its row of
 * the mixing matrix (summing to 1), held[k] the coordinates each holds (NULL: all; held
 * NULL: nobody is masked). Plain: out = sum_k w_k v_k (float, in order). Masked (prune,
 * freeze): per coordinate over the holders, weights renormalised; a coordinate nobody
 * holds keeps v_0's value. [byzantine] (the attacks already in vectors): mean is the plain
 * mix, cclip is self-centered clipping, the other rules run over the K vectors alike
 * (trimmed drops at most (K - 1) / 2 at each end). The vectors are of n floats (the
 * model's blocks first; n >= d). out may not be a vector. */
int aggregate_gossip(Aggregate *a, const int *who, const float *const *vectors, const unsigned char *const *held,
                     const double *weights, int K, size_t n, float *out);
/* Self-centered clipping (He, Karimireddy, Jaggi 2022): out = w_0 v_0 + sum_{k>=1} w_k
 * (v_0 + clip(v_k - v_0, tau)), clip(z, tau) = z min(1, tau / |z|_2), in double. */
void aggregate_scclip(const float *const *v, const double *weights, int K, size_t d, double tau, float *out);
/* K vectors (vectors[k] from who[k]; who NULL: k) of params floats averaged uniformly into
 * out per coordinate over the senders holding it (prune); a coordinate nobody holds keeps
 * vectors[0]'s value. */
int aggregate_masked(Aggregate *a, const int *who, const float *const *vectors, int K, float *out);
/* clip = update: one run of the client-level mechanism on the mean of the members
 * (members NULL: 0..K-1) weighted by samples or uniform, its noise (the stream of
 * (round, period)) added to out (d floats; NULL in timing mode: only counted). */
void aggregate_noise(Aggregate *a, const int *members, int K, int by_samples, int round, int period, float *out);

#endif
