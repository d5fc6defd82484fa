/* grow.h — an array that grows by doubling: one place for the capacity arithmetic that
 * sim/kernel wrote inline at every append (battery's instants, the engine's profiles,
 * radio's spans, trace rows, markov draws, the slot pools of base/slots.h). A capacity
 * that doubled past INT_MAX, or a byte count past SIZE_MAX, would wrap into a small
 * allocation that the next writes overrun; here it is HS_E_NOMEM like a failed realloc.
 *
 * The test for room is inline so an append that fits costs a compare, as it did when
 * written out; the growth itself (rare) is a call. */
#ifndef BASE_GROW_H
#define BASE_GROW_H

#include "base/hs_error.h"

#include <stddef.h>

/* Grows *array (of *cap items of size bytes) so that index n fits: *cap becomes first when
 * it was 0, then doubles until it is above n. HS_OK; HS_E_NOMEM when realloc fails or the
 * new capacity or its bytes would not fit an int / a size_t, with *array and *cap as they
 * were. Called by hs_grow only when n >= *cap. */
int hs_grow_to(void **array, int *cap, int n, size_t size, int first);

/* Room for item n in *array (the address of a T *, cast): HS_OK at once when n < *cap,
 * else hs_grow_to. first (> 0) is the capacity of an empty array. */
static inline int hs_grow(void **array, int *cap, int n, size_t size, int first)
{
    return n < *cap ? HS_OK : hs_grow_to(array, cap, n, size, first);
}

/* The capacity hs_grow_to would choose (above n, from *cap or first by doubling), or -1
 * when it or its bytes would wrap; for parallel arrays that share one capacity. */
int hs_grow_capacity(int cap, int n, size_t size, int first);

#endif
