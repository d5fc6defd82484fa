/* hugemem.h — the per-node arrays of a run at millions of agents, on transparent huge
 * pages. A run touches each agent's clock, links and rates once or more a step, so at
 * gigabytes of such arrays the time goes to TLB misses and to one page fault per 4 KB.
 * An array of at least HUGEMEM_MIN bytes is advised madvise(MADV_HUGEPAGE) over its 2 MiB
 * pages, which the kernel honours under transparent_hugepage = madvise (Debian's default)
 * or always; smaller ones are plain calloc/malloc. Advice only: where the kernel has no
 * huge page to give, it is ordinary memory. Measured in
 * docs/results/network.md ("10 M agents in one sweep"). Free with free(). */
#ifndef BASE_HUGEMEM_H
#define BASE_HUGEMEM_H

#include <stddef.h>

/* Arrays below this are not advised: they hold few whole 2 MiB pages. */
#define HUGEMEM_MIN ((size_t)8 << 20)

/* count x size bytes, zeroed (hs_huge_calloc) or not (hs_huge_malloc); NULL when out of
 * memory or when count x size overflows. The caller frees with free() (or reallocs). */
void *hs_huge_calloc(size_t count, size_t size);
void *hs_huge_malloc(size_t count, size_t size);

#endif
