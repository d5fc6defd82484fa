/* hugemem.c — see hugemem.h. The array is an ordinary calloc/malloc block (free()d like
 * any other, realloc'd too); what lies within it on 2 MiB boundaries is advised
 * MADV_HUGEPAGE, a part of a page at either end stays on 4 KB pages. No memset: calloc's
 * fresh pages are zero from the kernel, and a page of the array never touched (an agent's
 * pending joins in a run that has none) is never faulted in. madvise needs the Linux
 * names (_DEFAULT_SOURCE); without MADV_HUGEPAGE the arrays are plain. */
#define _DEFAULT_SOURCE
#include "base/hugemem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGEMEM_PAGE ((uintptr_t)2 << 20)

static void *hs_huge_advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (p == NULL || bytes < HUGEMEM_MIN) return p;
    uintptr_t from = ((uintptr_t)p + HUGEMEM_PAGE - 1) & ~(HUGEMEM_PAGE - 1);
    uintptr_t to = ((uintptr_t)p + bytes) & ~(HUGEMEM_PAGE - 1);
    if (to > from) (void)madvise((void *)from, to - from, MADV_HUGEPAGE); /* advice: refused, ordinary pages */
#else
    (void)bytes;
#endif
    return p;
}

void *hs_huge_calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) return NULL;
    return hs_huge_advise(calloc(count ? count : 1, size ? size : 1), count * size);
}

void *hs_huge_malloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) return NULL;
    size_t bytes = count * size;
    return hs_huge_advise(malloc(bytes ? bytes : 1), bytes);
}
