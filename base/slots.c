/* slots.c — see slots.h. */
#include "base/slots.h"

#include "base/grow.h"
#include "base/hs_error.h"

#include <stdlib.h>
#include <string.h>

void hs_slots_init(HsSlots *s, size_t item_size, size_t link, int first)
{
    *s = (HsSlots){.item_size = item_size, .link = link, .first = first, .free_head = -1};
}

/* The free-list field of slot (memcpy: the record's int is not necessarily aligned for a
 * cast pointer from char *, and memcpy of an int compiles to a move). */
static int slots_next(const HsSlots *s, int slot)
{
    int next;
    memcpy(&next, s->items + (size_t)slot * s->item_size + s->link, sizeof next);
    return next;
}

int hs_slots_take(HsSlots *s, int *slot)
{
    if (s->free_head >= 0) {
        *slot = s->free_head;
        s->free_head = slots_next(s, *slot);
        return HS_OK;
    }
    void *items = s->items;
    if (hs_grow(&items, &s->cap, s->n, s->item_size, s->first) != HS_OK) return HS_E_NOMEM;
    s->items = items;
    *slot = s->n++;
    return HS_OK;
}

void hs_slots_release(HsSlots *s, int slot)
{
    memcpy(s->items + (size_t)slot * s->item_size + s->link, &s->free_head, sizeof s->free_head);
    s->free_head = slot;
}

void hs_slots_free(HsSlots *s)
{
    free(s->items);
    hs_slots_init(s, s->item_size, s->link, s->first);
}
