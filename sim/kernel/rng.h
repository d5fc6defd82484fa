/* rng.h — independent random streams derived from (scenario seed, stream id, purpose).
 * Each agent draws from its own stream, so adding an agent changes no other agent's
 * draws and a run's randomness does not depend on event order or thread count.
 * Streams use GSL's taus2 (24 bytes of state), small enough for 100,000 agents. */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

enum { RNG_PURPOSE_PROFILE = 1, RNG_PURPOSE_DYNAMICS = 2, RNG_PURPOSE_TRAIN = 3,
       RNG_PURPOSE_DATA = 4, RNG_PURPOSE_METHOD = 5, RNG_PURPOSE_INIT = 6,
       /* [privacy] Gaussian noise (sim/stages/privacy.h): each agent's per-sample noise, and the
        * noise on an aggregate, one stream per averaging */
       RNG_PURPOSE_PRIVACY = 7, RNG_PURPOSE_PRIVACY_AGGREGATE = 8,
       /* [data] augment: each agent's crops and flips (sim/train) */
       RNG_PURPOSE_AUGMENT = 9,
       /* [agents] loss: whether each attempt of a node's messages is lost (sim/kernel/loss.c) */
       RNG_PURPOSE_LOSS = 10,
       /* [agents] power_*, energy_per_byte, battery, charging drawn from distributions
        * (sim/world/world_energy.c) */
       RNG_PURPOSE_ENERGY = 11,
       /* [agents] availability and outage = markov(): each node's on/off durations
        * (sim/kernel/trace_markov.h) */
       RNG_PURPOSE_AVAILABILITY = 12, RNG_PURPOSE_OUTAGE = 13 };

/* A 64-bit mix of the three inputs (splitmix64 finaliser chained), for seeding. */
uint64_t rng_derive_seed(uint64_t seed, uint64_t stream, uint64_t purpose);

/* A new taus2 stream; NULL when out of memory. Free with gsl_rng_free. */
gsl_rng *rng_stream_create(uint64_t seed, uint64_t stream, uint64_t purpose);
/* Re-seeds an existing stream in place (no allocation). */
void rng_stream_reset(gsl_rng *rng, uint64_t seed, uint64_t stream, uint64_t purpose);

#endif
