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

typedef struct QueueBucket {
    QueueItem *items;
    size_t n, capacity;
} QueueBucket;

struct EventQueue {
    QueueBucket buckets[QUEUE_BUCKETS];
    uint64_t nonempty[3];              /* bit k: bucket k holds keys */
    uint64_t last_time_bits, last_seq; /* the last popped key */
    size_t size;
    size_t initial_capacity;
    uint64_t next_seq;
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

static inline int queue_append(EventQueue *q, int bucket, const QueueItem *item)
{
    QueueBucket *b = &q->buckets[bucket];
    if (__builtin_expect(b->n == b->capacity, 0)) {
        size_t capacity = b->capacity ? b->capacity * 2 : q->initial_capacity;
        QueueItem *items = realloc(b->items, capacity * sizeof *items);
        if (items == NULL) return HS_E_NOMEM;
        b->items = items;
        b->capacity = capacity;
    }
    b->items[b->n++] = *item;
    q->nonempty[bucket >> 6] |= 1ULL << (bucket & 63);
    return HS_OK;
}

static inline void queue_mark_empty(EventQueue *q, int bucket)
{
    q->nonempty[bucket >> 6] &= ~(1ULL << (bucket & 63));
}

EventQueue *queue_create(size_t initial_capacity)
{
    EventQueue *q = calloc(1, sizeof *q);
    if (q == NULL) return NULL;
    /* Buckets start small and grow on demand; the hint sizes only the first growth of
     * the buckets that fill in bulk. */
    q->initial_capacity = initial_capacity < 16 ? 16 : (initial_capacity > 4096 ? 4096 : initial_capacity);
    return q;
}

void queue_free(EventQueue *q)
{
    if (q == NULL) return;
    for (int b = 0; b < QUEUE_BUCKETS; b++) free(q->buckets[b].items);
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

/* Makes bucket 0 hold the minimum (exactly one key: keys are unique). */
static void queue_settle(EventQueue *q)
{
    if (q->buckets[0].n > 0) return;
    int k;
    if (q->nonempty[0]) k = __builtin_ctzll(q->nonempty[0]);
    else if (q->nonempty[1]) k = 64 + __builtin_ctzll(q->nonempty[1]);
    else k = 128;
    QueueBucket *b = &q->buckets[k];
    size_t best = 0;
    for (size_t i = 1; i < b->n; i++) {
        const QueueItem *x = &b->items[i], *y = &b->items[best];
        if (x->time_bits < y->time_bits || (x->time_bits == y->time_bits && x->seq < y->seq)) best = i;
    }
    q->last_time_bits = b->items[best].time_bits;
    q->last_seq = b->items[best].seq;
    /* Every key of bucket k now differs from the new minimum below bit k-1, so it lands
     * in a lower bucket: the appends never touch bucket k itself. Growth may fail only
     * for lower buckets; capacity was reserved by the bucket they came from, so keep
     * it simple and retry-free: a failed append leaves the item in place. */
    size_t kept = 0;
    for (size_t i = 0; i < b->n; i++) {
        QueueItem item = b->items[i];
        if (queue_append(q, queue_bucket_of(q, item.time_bits, item.seq), &item) != HS_OK)
            b->items[kept++] = item;
    }
    b->n = kept;
    if (kept == 0) queue_mark_empty(q, k);
}

int queue_pop(EventQueue *q, Event *out)
{
    if (q->size == 0) return 0;
    queue_settle(q);
    QueueBucket *b0 = &q->buckets[0];
    const QueueItem *item = &b0->items[--b0->n];
    if (b0->n == 0) queue_mark_empty(q, 0);
    *out = (Event){.time = queue_bits_time(item->time_bits), .seq = item->seq, .kind = item->kind,
                   .agent = item->agent, .data = item->data};
    q->size--;
    return 1;
}

const Event *queue_peek(EventQueue *q)
{
    if (q->size == 0) return NULL;
    queue_settle(q);
    const QueueItem *item = &q->buckets[0].items[q->buckets[0].n - 1];
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
    for (int b = 0; b < QUEUE_BUCKETS; b++) q->buckets[b].n = 0;
    memset(q->nonempty, 0, sizeof q->nonempty);
    q->size = 0;
}
