/* check_queue.c — the event heap: equal-time order, and a differential test against a
 * naive sorted array over random push/pop sequences. */
#include "base/hs_error.h"
#include "sim/kernel/queue.h"

#include <check.h>
#include <stdlib.h>

START_TEST(test_equal_times_pop_in_push_order)
{
    EventQueue *q = queue_create(4);
    for (int i = 0; i < 100; i++) ck_assert_int_eq(queue_push(q, 5.0, 0, i, 0), 0);
    ck_assert_int_eq(queue_push(q, 1.0, 0, 1000, 0), 0);
    Event e;
    ck_assert(queue_pop(q, &e));
    ck_assert_int_eq(e.agent, 1000);
    for (int i = 0; i < 100; i++) {
        ck_assert(queue_pop(q, &e));
        ck_assert_int_eq(e.agent, i);
        ck_assert(e.time == 5.0);
    }
    ck_assert(!queue_pop(q, &e));
    queue_free(q);
}
END_TEST

START_TEST(test_push_into_the_past_is_refused)
{
    EventQueue *q = queue_create(4);
    Event e;
    ck_assert_int_eq(queue_push(q, 2.0, 0, 0, 0), 0);
    ck_assert(queue_pop(q, &e));
    ck_assert_int_eq(queue_push(q, 1.0, 0, 0, 0), HS_E_INTERNAL);
    ck_assert_int_eq(queue_push(q, 2.0, 0, 1, 0), 0);
    ck_assert(queue_peek(q)->agent == 1);
    queue_free(q);
}
END_TEST

START_TEST(test_extreme_times_and_many_ties)
{
    EventQueue *q = queue_create(4);
    Event e;
    ck_assert_int_eq(queue_push(q, 1e300, 0, 3, 0), 0);
    ck_assert_int_eq(queue_push(q, 0.0, 0, 0, 0), 0);
    ck_assert_int_eq(queue_push(q, 5e-324, 0, 1, 0), 0);
    ck_assert_int_eq(queue_push(q, 1.0, 0, 2, 0), 0);
    for (int i = 0; i < 4; i++) {
        ck_assert(queue_pop(q, &e));
        ck_assert_int_eq(e.agent, i);
    }
    for (int i = 0; i < 10000; i++) queue_push(q, 1e300, 0, i, 0);
    for (int i = 0; i < 10000; i++) {
        ck_assert(queue_pop(q, &e));
        ck_assert_int_eq(e.agent, i);
    }
    queue_free(q);
}
END_TEST

START_TEST(test_empty_queue)
{
    EventQueue *q = queue_create(0);
    Event e;
    ck_assert(queue_peek(q) == NULL);
    ck_assert(!queue_pop(q, &e));
    ck_assert_uint_eq(queue_size(q), 0);
    queue_free(q);
    queue_free(NULL);
}
END_TEST

/* Naive reference: unsorted array, pop scans for the minimum (time, seq). */
typedef struct NaiveQueue {
    Event items[4096];
    int n;
    uint64_t seq;
} NaiveQueue;

static void naive_push(NaiveQueue *q, double t, int agent)
{
    q->items[q->n++] = (Event){.time = t, .seq = q->seq++, .agent = agent};
}

static Event naive_pop(NaiveQueue *q)
{
    int best = 0;
    for (int i = 1; i < q->n; i++) {
        const Event *a = &q->items[i], *b = &q->items[best];
        if (a->time < b->time || (a->time == b->time && a->seq < b->seq)) best = i;
    }
    Event e = q->items[best];
    q->items[best] = q->items[--q->n];
    return e;
}

START_TEST(test_differential_against_naive)
{
    srand(12345);
    for (int trial = 0; trial < 20; trial++) {
        EventQueue *q = queue_create(1);
        static NaiveQueue naive;
        naive.n = 0;
        naive.seq = 0;
        double last = 0;
        for (int op = 0; op < 3000; op++) {
            int push = naive.n == 0 || (naive.n < 4000 && rand() % 3 != 0);
            if (push) {
                /* monotone like a simulation: never before the last pop; few distinct
                 * increments, so ties are common */
                double t = last + (double)(rand() % 50) * 0.5;
                queue_push(q, t, 0, op, 0);
                naive_push(&naive, t, op);
            } else {
                Event a, b = naive_pop(&naive);
                ck_assert(queue_pop(q, &a));
                last = a.time;
                ck_assert(a.time == b.time);
                ck_assert_int_eq(a.agent, b.agent);
            }
            ck_assert_uint_eq(queue_size(q), (size_t)naive.n);
        }
        queue_free(q);
    }
}
END_TEST

/* Reference for large queues: a binary heap on (time, seq). */
typedef struct RefHeap {
    Event *items;
    int n;
} RefHeap;

static int ref_less(const Event *a, const Event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void ref_push(RefHeap *h, Event e)
{
    int pos = h->n++;
    while (pos > 0 && ref_less(&e, &h->items[(pos - 1) / 2])) {
        h->items[pos] = h->items[(pos - 1) / 2];
        pos = (pos - 1) / 2;
    }
    h->items[pos] = e;
}

static Event ref_pop(RefHeap *h)
{
    Event top = h->items[0], last = h->items[--h->n];
    int pos = 0;
    for (;;) {
        int child = 2 * pos + 1;
        if (child >= h->n) break;
        if (child + 1 < h->n && ref_less(&h->items[child + 1], &h->items[child])) child++;
        if (!ref_less(&h->items[child], &last)) break;
        h->items[pos] = h->items[child];
        pos = child;
    }
    if (h->n > 0) h->items[pos] = last;
    return top;
}

START_TEST(test_large_bursts_against_reference)
{
    /* a simulation's steps: bursts of thousands of events pushed at once (every agent's
     * next step), spread over a few time scales, popped down to a remainder; the buckets
     * then hold thousands of keys in chains of chunks, moved chunk by chunk */
    srand(777);
    enum { CAP = 200000 };
    RefHeap ref = {.items = malloc(CAP * sizeof(Event))};
    ck_assert_ptr_nonnull(ref.items);
    EventQueue *q = queue_create(16);
    double last = 0;
    uint64_t seq = 0;
    int pops = 0;
    for (int burst = 0; burst < 40; burst++) {
        int n = 1000 + rand() % 30000;
        double scale = burst % 3 == 0 ? 1e-3 : burst % 3 == 1 ? 1 : 1e4;
        for (int i = 0; i < n && ref.n < CAP; i++) {
            double t = last + scale * (double)(rand() % 1000) / 7.0;
            ck_assert_int_eq(queue_push(q, t, 0, (int32_t)seq, 0), 0);
            ref_push(&ref, (Event){.time = t, .seq = seq++, .agent = (int32_t)(seq - 1)});
        }
        int keep = burst == 39 ? 0 : rand() % 2000;
        while (ref.n > keep) {
            Event a, b = ref_pop(&ref);
            ck_assert(queue_pop(q, &a));
            ck_assert(a.time == b.time);
            ck_assert_int_eq(a.agent, b.agent);
            last = a.time;
            pops++;
        }
        ck_assert_uint_eq(queue_size(q), (size_t)ref.n);
    }
    ck_assert(pops > 100000);
    queue_free(q);
    free(ref.items);
}
END_TEST

static Suite *queue_suite(void)
{
    Suite *s = suite_create("queue");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120); /* the naive reference is slow under sanitizers */
    tcase_add_test(tc, test_equal_times_pop_in_push_order);
    tcase_add_test(tc, test_empty_queue);
    tcase_add_test(tc, test_push_into_the_past_is_refused);
    tcase_add_test(tc, test_extreme_times_and_many_ties);
    tcase_add_test(tc, test_differential_against_naive);
    tcase_add_test(tc, test_large_bursts_against_reference);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(queue_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
