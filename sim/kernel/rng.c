/* rng.c — seed derivation. taus2 needs a nonzero 32-bit seed; GSL fixes up small seeds. */
#include "sim/kernel/rng.h"

static uint64_t rng_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t rng_derive_seed(uint64_t seed, uint64_t stream, uint64_t purpose)
{
    return rng_mix(rng_mix(rng_mix(seed) ^ stream) ^ (purpose * 0x632be59bd9b4e019ULL));
}

void rng_stream_reset(gsl_rng *rng, uint64_t seed, uint64_t stream, uint64_t purpose)
{
    uint64_t s = rng_derive_seed(seed, stream, purpose);
    unsigned long folded = (unsigned long)((s ^ (s >> 32)) & 0xffffffffUL);
    gsl_rng_set(rng, folded ? folded : 1UL);
}

gsl_rng *rng_stream_create(uint64_t seed, uint64_t stream, uint64_t purpose)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    if (rng != NULL) rng_stream_reset(rng, seed, stream, purpose);
    return rng;
}
