/* roles.c — who attacks: the [byzantine] agents, drawn once per run by world_build.
 * A partial Fisher–Yates on one stream seeded from the scenario seed alone, so the same
 * seed marks the same agents whatever the method. What the attackers do is
 * sim/stages/byzantine.c. */
#include "sim/world/roles.h"

#include "sim/kernel/rng.h"

#include <stdlib.h>
#include <string.h>

/* Stream id under RNG_PURPOSE_METHOD (sim/stages/byzantine.c uses 0xB2 and 0xB3). */
#define BYZANTINE_PICK_STREAM (0xB1ULL << 32)

int byzantine_pick(const Scenario *sc, int n, int *flags)
{
    memset(flags, 0, (size_t)n * sizeof *flags);
    int count = sc->byzantine.present ? sc->byzantine.count : 0;
    if (count <= 0) return HS_OK;
    int *perm = malloc((size_t)n * sizeof *perm);
    gsl_rng *rng = rng_stream_create(sc->seed, BYZANTINE_PICK_STREAM, RNG_PURPOSE_METHOD);
    if (perm == NULL || rng == NULL) {
        free(perm);
        if (rng) gsl_rng_free(rng);
        return HS_E_NOMEM;
    }
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = 0; i < count && i < n; i++) {
        int j = i + (int)gsl_rng_uniform_int(rng, (unsigned long)(n - i));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
        flags[perm[i]] = 1;
    }
    gsl_rng_free(rng);
    free(perm);
    return HS_OK;
}
