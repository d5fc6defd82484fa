/* queue.c — a radix heap on 128-bit keys (time bits, seq).
 * Why a radix heap: a simulation never schedules into the past, so the queue is
 * monotone — every pushed key is larger than the last popped one. A radix heap exploits
 * that: bucket k holds the keys whose highest bit differing from the last popped key is
 * bit k-1, a push is an append, and a pop rescans only the smallest non-empty bucket,
 * moving its keys into lower buckets with sequential scans. Each key moves at most 128
 * times and in practice a handful, so holds run at memory speed even with 1e6 pending,
 * where a binary heap misses cache at every level.
 * Keys: a non-negative double's bits order like the double, and seq breaks ties, so
 * (time bits, seq) is unique and gives exactly the (time, push order) contract. */
#include "sim/kernel/queue.h"
#include "base/hs_error.h"

#include <stdlib.h>
#include <string.h>

enum { QUEUE_BUCKETS = 129 };

typedef struct QueueItem {
    uint64_t time_bits;
    uint64_t seq;
    int32_t kind, agent;
    int64_t data;
} QueueItem;

/* Buckets are lists of chunks from one free list, not arrays of their own: pushes land
 * in twenty or more buckets over a run (which ones moves with the clock), and arrays
 * that each grew to their bucket's peak held about fourteen slots per pending event at
 * 200,000 agents (440 bytes an agent); chunks hold the pending events and one partial
 * chunk per bucket. A chunk of 255 events is 8 KB: scans stay sequential. */
enum { QUEUE_CHUNK = 255 };

typedef struct QueueChunk {
    struct QueueChunk *next;
    int n;
    QueueItem items[QUEUE_CHUNK];
} QueueChunk;

typedef struct QueueBucket {
    QueueChunk *head, *tail;
    size_t n;
} QueueBucket;

struct EventQueue {
    QueueBucket buckets[QUEUE_BUCKETS];
    uint64_t nonempty[3];              /* bit k: bucket k holds keys */
    uint64_t last_time_bits, last_seq; /* the last popped key */
    size_t size;
    uint64_t next_seq;
    QueueChunk *free_chunks;           /* kept until queue_free: no allocation once warm */
    size_t n_free;
    Event top;
};

static uint64_t queue_time_bits(double t)
{
    uint64_t bits;
    if (!(t > 0)) t = 0; /* -0.0 and negative times sort as 0 */
    memcpy(&bits, &t, sizeof bits);
    return bits;
}

static double queue_bits_time(uint64_t bits)
{
    double t;
    memcpy(&t, &bits, sizeof t);
    return t;
}

static int queue_bucket_of(const EventQueue *q, uint64_t time_bits, uint64_t seq)
{
    uint64_t high = time_bits ^ q->last_time_bits;
    if (high) return 128 - __builtin_clzll(high);
    uint64_t low = seq ^ q->last_seq;
    return low ? 64 - __builtin_clzll(low) : 0;
}

static void queue_chunk_release(EventQueue *q, QueueChunk *c)
{
    c->next = q->free_chunks;
    q->free_chunks = c;
    q->n_free++;
}

/* At least `count` chunks on the free list. */
static int queue_chunk_reserve(EventQueue *q, size_t count)
{
    while (q->n_free < count) {
        QueueChunk *c = malloc(sizeof *c);
        if (c == NULL) return HS_E_NOMEM;
        queue_chunk_release(q, c);
    }
    return HS_OK;
}

static inline int queue_append(EventQueue *q, int bucket, const QueueItem *item)
{
    QueueBucket *b = &q->buckets[bucket];
    QueueChunk *tail = b->tail;
    if (__builtin_expect(tail == NULL || tail->n == QUEUE_CHUNK, 0)) {
        if (queue_chunk_reserve(q, 1) != HS_OK) return HS_E_NOMEM;
        QueueChunk *c = q->free_chunks;
        q->free_chunks = c->next;
        q->n_free--;
        c->next = NULL;
        c->n = 0;
        if (tail) tail->next = c;
        else b->head = c;
        b->tail = tail = c;
    }
    tail->items[tail->n++] = *item;
    b->n++;
    q->nonempty[bucket >> 6] |= 1ULL << (bucket & 63);
    return HS_OK;
}

static inline void queue_mark_empty(EventQueue *q, int bucket)
{
    q->nonempty[bucket >> 6] &= ~(1ULL << (bucket & 63));
}

/* Empties bucket k, its chunks back on the free list. */
static void queue_bucket_clear(EventQueue *q, int k)
{
    QueueBucket *b = &q->buckets[k];
    for (QueueChunk *c = b->head, *next; c; c = next) {
        next = c->next;
        queue_chunk_release(q, c);
    }
    b->head = b->tail = NULL;
    b->n = 0;
    queue_mark_empty(q, k);
}

EventQueue *queue_create(size_t initial_capacity)
{
    (void)initial_capacity; /* chunks come as needed; kept for callers' hints */
    return calloc(1, sizeof(EventQueue));
}

void queue_free(EventQueue *q)
{
    if (q == NULL) return;
    for (int b = 0; b < QUEUE_BUCKETS; b++) queue_bucket_clear(q, b);
    for (QueueChunk *c = q->free_chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(q);
}

int queue_push(EventQueue *q, double time, int32_t kind, int32_t agent, int64_t data)
{
    QueueItem item = {.time_bits = queue_time_bits(time), .seq = q->next_seq, .kind = kind,
                      .agent = agent, .data = data};
    /* Monotone contract: a key below the last popped one would be lost to ordering;
     * the simulation clamps times to "now", so such a push is a bug. */
    if (item.time_bits < q->last_time_bits) return HS_E_INTERNAL;
    int status = queue_append(q, queue_bucket_of(q, item.time_bits, item.seq), &item);
    if (status != HS_OK) return status;
    q->next_seq++;
    q->size++;
    return HS_OK;
}

/* Makes bucket 0 hold the minimum (exactly one key: keys are unique). HS_E_NOMEM leaves
 * the queue as it was. */
static int queue_settle(EventQueue *q)
{
    if (q->buckets[0].n > 0) return HS_OK;
    int k;
    if (q->nonempty[0]) k = __builtin_ctzll(q->nonempty[0]);
    else if (q->nonempty[1]) k = 64 + __builtin_ctzll(q->nonempty[1]);
    else k = 128;
    /* Moving bucket k's keys takes at most k + 1 chunks more than the ones of bucket k
     * released on the way (all but its tail are full; each of the k lower buckets, all
     * empty, ends with at most one partial chunk), and never more chunks than keys, so
     * with the smaller of the two in hand no append below can fail. The second bound
     * matters at a run's start: k is ~60 for most keys of a double, and 60 chunks
     * (480 KB) reserved for a bucket of a few keys were a new process's first page
     * faults of every sweep worker. */
    QueueBucket *b = &q->buckets[k];
    size_t need = (size_t)k + 1 < b->n ? (size_t)k + 1 : b->n;
    if (queue_chunk_reserve(q, need) != HS_OK) return HS_E_NOMEM;
    const QueueItem *best = &b->head->items[0];
    for (const QueueChunk *c = b->head; c; c = c->next)
        for (int i = 0; i < c->n; i++) {
            const QueueItem *x = &c->items[i];
            if (x->time_bits < best->time_bits || (x->time_bits == best->time_bits && x->seq < best->seq)) best = x;
        }
    q->last_time_bits = best->time_bits;
    q->last_seq = best->seq;
    /* Every key of bucket k now differs from the new minimum below bit k-1, so it lands
     * in a lower bucket: the appends never touch bucket k itself. */
    QueueChunk *c = b->head;
    b->head = b->tail = NULL;
    b->n = 0;
    queue_mark_empty(q, k);
    while (c) {
        for (int i = 0; i < c->n; i++) queue_append(q, queue_bucket_of(q, c->items[i].time_bits, c->items[i].seq), &c->items[i]);
        QueueChunk *next = c->next;
        queue_chunk_release(q, c);
        c = next;
    }
    return HS_OK;
}

int queue_pop(EventQueue *q, Event *out)
{
    if (q->size == 0 || queue_settle(q) != HS_OK) return 0;
    QueueBucket *b0 = &q->buckets[0];
    const QueueItem *item = &b0->head->items[0];
    *out = (Event){.time = queue_bits_time(item->time_bits), .seq = item->seq, .kind = item->kind,
                   .agent = item->agent, .data = item->data};
    b0->head->n = 0; /* bucket 0 keeps its chunk: it takes one key at every pop */
    b0->n = 0;
    queue_mark_empty(q, 0);
    q->size--;
    return 1;
}

const Event *queue_peek(EventQueue *q)
{
    if (q->size == 0 || queue_settle(q) != HS_OK) return NULL;
    const QueueItem *item = &q->buckets[0].head->items[0];
    q->top = (Event){.time = queue_bits_time(item->time_bits), .seq = item->seq, .kind = item->kind,
                     .agent = item->agent, .data = item->data};
    return &q->top;
}

size_t queue_size(const EventQueue *q)
{
    return q->size;
}

void queue_clear(EventQueue *q)
{
    for (int b = 0; b < QUEUE_BUCKETS; b++) queue_bucket_clear(q, b);
    q->size = 0;
}
