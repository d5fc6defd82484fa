/* slots.h — a pool of fixed-size records named by their index, with a free list: a
 * record released is handed out again before the array grows. The messages cut at a
 * deadline (sim/kernel/deadline.c) and those on lossy links (sim/kernel/loss.c) each kept
 * one, written twice; an event carries the slot's index, so the records are addressed by
 * index, not pointer (the array moves when it grows).
 *
 * The free list is threaded through the records: each record type has an int field the
 * pool writes the next free index into while the record is free (link, its offset), so a
 * free record costs no memory beside it; the caller must not read that field's meaning
 * from a released record. Released slots come back last in, first out. Not thread-safe:
 * one pool per engine. */
#ifndef BASE_SLOTS_H
#define BASE_SLOTS_H

#include <stddef.h>

typedef struct HsSlots {
    char *items;       /* (cap) records of item_size bytes */
    size_t item_size;
    size_t link;       /* offset of the record's int free-list field */
    int first;         /* capacity of the first allocation */
    int n;             /* slots ever handed out: indices 0 .. n-1 exist */
    int cap;
    int free_head;     /* the last released slot, -1: none */
} HsSlots;

/* An empty pool of records of item_size bytes whose int at offset link is the free-list
 * field; first records are allocated on the first take. */
void hs_slots_init(HsSlots *s, size_t item_size, size_t link, int first);
/* A slot's index in *slot (a released one if any, else the next new one): HS_OK, or
 * HS_E_NOMEM (the pool as it was). The record's bytes are what they were: the caller
 * writes the whole record. */
int hs_slots_take(HsSlots *s, int *slot);
/* Slot (taken, not released since) is free again. */
void hs_slots_release(HsSlots *s, int slot);
/* The record of slot; valid until the next take. */
static inline void *hs_slots_at(const HsSlots *s, int slot)
{
    return s->items + (size_t)slot * s->item_size;
}
/* Frees the records; the pool is empty again (same sizes). */
void hs_slots_free(HsSlots *s);

#endif
