/* chunks.h — small fixed-size blocks handed out of chunks, all freed at once. At a million
 * agents, a record per agent or per link that was one malloc each cost an allocator header,
 * a call and a scattered cache line apiece (docs/results/network.md, "fedavg's grouped
 * fan-in"); the network's links' first entry arrays (two and four entries) and the
 * accounting's ActivityMore come from here. Blocks are zeroed and never given back one by
 * one (a caller that recycles keeps its own free list). Not thread-safe: one pool per
 * engine. */
#ifndef BASE_CHUNKS_H
#define BASE_CHUNKS_H

#include <stddef.h>

typedef struct HsChunks {
    size_t item_size; /* bytes per block */
    int per_chunk;    /* blocks per chunk */
    char **chunks;    /* (n_chunks) */
    int n_chunks, cap_chunks, used; /* used: blocks handed out of the last chunk */
} HsChunks;

/* An empty pool of blocks of item_size bytes, per_chunk to a chunk. */
void hs_chunks_init(HsChunks *c, size_t item_size, int per_chunk);
/* A zeroed block; NULL when out of memory. */
void *hs_chunks_take(HsChunks *c);
/* Frees every block; the pool is empty again (same sizes). */
void hs_chunks_free(HsChunks *c);

#endif
