/* queue.h — the event queue: a monotone priority queue keyed on (time, sequence number).
 * Monotone: a push may not be earlier than the last popped event (the simulation never
 * schedules into the past; the engine clamps to "now"). No per-event allocation: memory
 * in 8 KB chunks, about 32 bytes per pending event at its peak, kept until queue_free.
 * Equal times pop in the order they were pushed, because
 * every push takes the next sequence number: this is what makes runs deterministic.
 * Workload: up to ~1e6 pending events, pushes and pops interleaved. */
#ifndef SIM_QUEUE_H
#define SIM_QUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef struct Event {
    double time;    /* virtual seconds */
    uint64_t seq;   /* push order, the tie-breaker */
    int32_t kind;   /* who handles it: engine or method tag */
    int32_t agent;  /* -1 when the event is not an agent's */
    int64_t data;   /* kind-specific payload */
} Event;

typedef struct EventQueue EventQueue;

/* Returns NULL when out of memory. The caller frees with queue_free. */
EventQueue *queue_create(size_t initial_capacity);
void queue_free(EventQueue *queue);

/* Pushes an event (its seq is assigned here). Returns 0, HS_E_NOMEM, or HS_E_INTERNAL
 * for a time earlier than the last popped event. Times below 0 count as 0. */
int queue_push(EventQueue *queue, double time, int32_t kind, int32_t agent, int64_t data);
/* Pops the earliest event into *out. Returns 1 if one was popped, 0 if empty or out of
 * memory (queue_size then says which; the queue is left as it was). */
int queue_pop(EventQueue *queue, Event *out);
/* The earliest event without removing it, or NULL when empty or out of memory (valid
 * until the next call; it may reorganise the queue internally, hence not const). */
const Event *queue_peek(EventQueue *queue);
size_t queue_size(const EventQueue *queue);
void queue_clear(EventQueue *queue);

#endif
