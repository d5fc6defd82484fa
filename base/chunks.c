/* chunks.c — see chunks.h. */
#include "base/chunks.h"

#include "base/grow.h"

#include <stdlib.h>

void hs_chunks_init(HsChunks *c, size_t item_size, int per_chunk)
{
    *c = (HsChunks){.item_size = item_size, .per_chunk = per_chunk};
}

void *hs_chunks_take(HsChunks *c)
{
    if (c->n_chunks == 0 || c->used == c->per_chunk) {
        if (hs_grow((void **)&c->chunks, &c->cap_chunks, c->n_chunks, sizeof *c->chunks, 16) != HS_OK) return NULL;
        char *chunk = calloc((size_t)c->per_chunk, c->item_size);
        if (chunk == NULL) return NULL;
        c->chunks[c->n_chunks++] = chunk;
        c->used = 0;
    }
    return c->chunks[c->n_chunks - 1] + (size_t)c->used++ * c->item_size;
}

void hs_chunks_free(HsChunks *c)
{
    for (int i = 0; i < c->n_chunks; i++) free(c->chunks[i]);
    free(c->chunks);
    hs_chunks_init(c, c->item_size, c->per_chunk);
}
