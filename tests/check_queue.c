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
