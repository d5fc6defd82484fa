/* hash.h — FNV-1a 64, the one hash the project uses for ids and fingerprints (sweep ids,
 * report groupings). Not cryptographic: it names things, it does not guard them. */
#ifndef BASE_HASH_H
#define BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV1A_START 0xcbf29ce484222325ULL

static inline uint64_t hash_fnv1a(uint64_t hash, const void *data, size_t length)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < length; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

#endif
