/* queue.c — binary min-heap on (time, seq). Sift operations move a hole instead of
 * swapping, which halves the stores on the hot path. */
#include "sim/queue.h"
#include "sim/hs_error.h"

#include <stdlib.h>

struct EventQueue {
    Event *heap;  /* (capacity) heap[0] is the earliest */
    size_t size, capacity;
    uint64_t next_seq;
};

static int event_before(const Event *a, const Event *b)
{
    if (a->time != b->time) return a->time < b->time;
    return a->seq < b->seq;
}

EventQueue *queue_create(size_t initial_capacity)
{
    EventQueue *q = calloc(1, sizeof *q);
    if (q == NULL) return NULL;
    q->capacity = initial_capacity < 16 ? 16 : initial_capacity;
    q->heap = malloc(q->capacity * sizeof *q->heap);
    if (q->heap == NULL) {
        free(q);
        return NULL;
    }
    return q;
}

void queue_free(EventQueue *q)
{
    if (q == NULL) return;
    free(q->heap);
    free(q);
}

int queue_push(EventQueue *q, double time, int32_t kind, int32_t agent, int64_t data)
{
    if (q->size == q->capacity) {
        size_t capacity = q->capacity * 2;
        Event *heap = realloc(q->heap, capacity * sizeof *heap);
        if (heap == NULL) return HS_E_NOMEM;
        q->heap = heap;
        q->capacity = capacity;
    }
    Event e = {.time = time, .seq = q->next_seq++, .kind = kind, .agent = agent, .data = data};
    size_t hole = q->size++;
    while (hole > 0) {
        size_t parent = (hole - 1) / 2;
        if (!event_before(&e, &q->heap[parent])) break;
        q->heap[hole] = q->heap[parent];
        hole = parent;
    }
    q->heap[hole] = e;
    return HS_OK;
}

int queue_pop(EventQueue *q, Event *out)
{
    if (q->size == 0) return 0;
    *out = q->heap[0];
    Event last = q->heap[--q->size];
    size_t n = q->size, hole = 0;
    for (;;) {
        size_t child = 2 * hole + 1;
        if (child >= n) break;
        if (child + 1 < n && event_before(&q->heap[child + 1], &q->heap[child])) child++;
        if (!event_before(&q->heap[child], &last)) break;
        q->heap[hole] = q->heap[child];
        hole = child;
    }
    if (n > 0) q->heap[hole] = last;
    return 1;
}

const Event *queue_peek(const EventQueue *q)
{
    return q->size ? &q->heap[0] : NULL;
}

size_t queue_size(const EventQueue *q)
{
    return q->size;
}

void queue_clear(EventQueue *q)
{
    q->size = 0;
}
