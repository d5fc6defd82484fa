/* mix.h — the averaging arithmetic of the asynchronous decentralized methods, on flat
 * parameter vectors (no time, no agents): DivShare's per-fragment averaging of received
 * model fragments and SWIFT's closed-neighbourhood average of stored neighbour copies.
 * Sums run in double, in a fixed order, and are rounded once, so results do not depend
 * on threads or event interleaving beyond the order the caller gives. */
#ifndef MODELS_MIX_H
#define MODELS_MIX_H

#include <stddef.h>

/* Fragment k of `fragments` over a vector of n entries: [*begin, *end), contiguous,
 * sizes differing by at most one (the first n % fragments fragments are one longer). */
void mix_fragment_bounds(size_t n, int fragments, int k, size_t *begin, size_t *end);

/* DivShare's aggregation: for every fragment k with count[k] > 0 received copies, whose
 * element-wise sum is in sum[begin_k..end_k),
 *     x[p] = (x[p] + sum[p]) / (1 + count[k])      for p in fragment k;
 * fragments nobody sent are left as they are. Clears sum and count afterwards. */
void mix_fragment_average(float *x, double *sum, int *count, size_t n, int fragments);

/* Adds a received fragment k (values, end_k - begin_k of them) into sum and counts it. */
void mix_fragment_receive(double *sum, int *count, size_t n, int fragments, int k, const float *values);

/* SWIFT's wait-free averaging: x = (x + sum_j copies[j]) / (1 + n_copies), uniform
 * weights over the closed neighbourhood, summed in j order. */
void mix_neighbourhood_average(float *x, const float *const *copies, int n_copies, size_t n);

#endif
