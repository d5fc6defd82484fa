/* grow.c — see grow.h. */
#include "base/grow.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

int hs_grow_capacity(int cap, int n, size_t size, int first)
{
    if (n < 0 || first <= 0 || size == 0) return -1;
    int grown = cap > 0 ? cap : first;
    while (grown <= n) {
        if (grown > INT_MAX / 2) return -1;
        grown *= 2;
    }
    if ((size_t)grown > SIZE_MAX / size) return -1;
    return grown;
}

int hs_grow_to(void **array, int *cap, int n, size_t size, int first)
{
    if (n < *cap) return HS_OK;
    int grown = hs_grow_capacity(*cap, n, size, first);
    if (grown < 0) return HS_E_NOMEM;
    void *bigger = realloc(*array, (size_t)grown * size);
    if (bigger == NULL) return HS_E_NOMEM;
    *array = bigger;
    *cap = grown;
    return HS_OK;
}
