/* check_deadline.c — messages cut at a deadline (engine_send_until, sim/kernel/deadline.c)
 * against hand-worked figures under both network models: a message alone on a link of
 * known rate cut at a deadline delivers rate x (deadline - latency) and its event comes at
 * the deadline; one that arrives whole before is unchanged (its time is engine_send's);
 * under max-min sharing it delivers its share x time and the link it frees goes to the
 * others; under a bandwidth trace step maxmin follows the step (fifo keeps the rate at
 * the start); a floor makes it go on until the floor is through; a message cut in its
 * latency, or while it waits its turn on a FIFO uplink, delivers 0 and frees its turn; and
 * a flow cut while it is a member of a group (many flows on one link) delivers its share. */
#include "tests/test_engine.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

enum { MESSAGE = ENGINE_EVENT_METHOD };

typedef struct Setup {
    int maxmin, uplink_fifo, n;
    const TraceSeries *const *uplink; /* (n) or NULL */
} Setup;

/* n agents (3 unless given): up 1 MB/s, down 500 kB/s, latency 10 ms (the message's: max
 * of its ends). */
static void make(TestEngine *t, const Setup *setup)
{
    test_engine_open(t, &(TestEngineSetup){
                            .n_agents = setup->n ? setup->n : 3,
                            .node = {.compute = 1e9, .uplink = 1e6, .downlink = 5e5, .latency = 0.01},
                            .traces = {.uplink = setup->uplink},
                            .network = {.maxmin = setup->maxmin, .backbone = INFINITY, .uplink_fifo = setup->uplink_fifo},
                            .kind = MESSAGE});
}

static void near(double got, double expected, const char *what, int maxmin)
{
    ck_assert_msg(fabs(got - expected) <= 1e-9 * (fabs(expected) > 1 ? fabs(expected) : 1),
                  "%s (%s): %.17g, expected %.17g", what, maxmin ? "maxmin" : "fifo", got, expected);
}

START_TEST(test_cut_alone_delivers_rate_times_time)
{
    /* 1 MB at min(1 MB/s, 500 kB/s) = 500 kB/s after 10 ms of latency, cut at 0.5 s:
     * 500e3 x 0.49 = 245,000 bytes, delivered at 0.5 */
    for (int maxmin = 0; maxmin < 2; maxmin++) {
        TestEngine t;
        make(&t, &(Setup){.maxmin = maxmin});
        Engine *e = t.e;
        ck_assert_int_eq(engine_send_until(e, 0, 1, 1e6, 0, 0.5, MESSAGE, 7), HS_OK);
        ck_assert_int_eq(engine_play(e), HS_OK);
        ck_assert_int_eq(t.n, 1);
        ck_assert_int_eq(t.events[0].data, 7);
        near(t.events[0].time, 0.5, "cut at", maxmin);
        near(t.events[0].bytes, 5e5 * 0.49, "delivered", maxmin);
        near(engine_round_bytes(e), 5e5 * 0.49, "round bytes", maxmin);
        /* no other event is left over: the engine's queue ends here */
        ck_assert(isnan(engine_delivered_bytes(e)));
        test_engine_close(&t);
    }
}
END_TEST

START_TEST(test_whole_before_the_deadline_is_unchanged)
{
    /* 100 kB: 0.01 + 0.2 = 0.21 s, as engine_send; every byte delivered */
    for (int maxmin = 0; maxmin < 2; maxmin++) {
        double arrival[2];
        for (int until = 0; until < 2; until++) {
            TestEngine t;
            make(&t, &(Setup){.maxmin = maxmin});
            Engine *e = t.e;
            int status = until ? engine_send_until(e, 0, 1, 1e5, 0, 0.5, MESSAGE, 1)
                               : engine_send(e, 0, 1, 1e5, MESSAGE, 1);
            ck_assert_int_eq(status, HS_OK);
            ck_assert_int_eq(engine_play(e), HS_OK);
            ck_assert_int_eq(t.n, 1);
            arrival[until] = t.events[0].time;
            if (until) near(t.events[0].bytes, 1e5, "delivered", maxmin);
            else ck_assert(isnan(t.events[0].bytes));
            test_engine_close(&t);
        }
        ck_assert_msg(arrival[0] == arrival[1], "%s: %.17g against engine_send's %.17g", maxmin ? "maxmin" : "fifo",
                      arrival[1], arrival[0]);
        near(arrival[1], 0.21, "arrival", maxmin);
        /* a deadline of INFINITY: a plain message */
    }
}
END_TEST

START_TEST(test_cut_under_sharing_frees_the_link)
{
    /* maxmin: 0 -> 2 (cut at 0.5) and 1 -> 2 (1 MB, no deadline) share down_2 = 500 kB/s:
     * 250 kB/s each after their 10 ms. The first delivers 250e3 x 0.49 = 122,500; the
     * second has 1e6 - 122,500 left at 0.5 and the whole link from then: 0.5 + 877,500 /
     * 500e3 = 2.255 s. */
    TestEngine t;
    make(&t, &(Setup){.maxmin = 1});
    Engine *e = t.e;
    ck_assert_int_eq(engine_send_until(e, 0, 2, 1e6, 0, 0.5, MESSAGE, 0), HS_OK);
    ck_assert_int_eq(engine_send(e, 1, 2, 1e6, MESSAGE, 1), HS_OK);
    ck_assert_int_eq(engine_play(e), HS_OK);
    ck_assert_int_eq(t.n, 2);
    near(t.events[0].time, 0.5, "cut at", 1);
    near(t.events[0].bytes, 2.5e5 * 0.49, "delivered", 1);
    ck_assert_int_eq(t.events[1].data, 1);
    near(t.events[1].time, 0.5 + (1e6 - 2.5e5 * 0.49) / 5e5, "the other's arrival", 1);
    near(engine_round_bytes(e), 1e6 + 2.5e5 * 0.49, "round bytes", 1);
    test_engine_close(&t);

    /* fifo: the sender's uplink is FIFO; a cut message stops transmitting at deadline -
     * latency (0.49), and the next one (100 kB) starts then: 0.49 + 0.2 + 0.01 = 0.70 */
    make(&t, &(Setup){.maxmin = 0});
    e = t.e;
    ck_assert_int_eq(engine_send_until(e, 0, 1, 1e6, 0, 0.5, MESSAGE, 0), HS_OK);
    ck_assert_int_eq(engine_send(e, 0, 2, 1e5, MESSAGE, 1), HS_OK);
    ck_assert_int_eq(engine_play(e), HS_OK);
    ck_assert_int_eq(t.n, 2);
    near(t.events[0].bytes, 5e5 * 0.49, "delivered", 0);
    near(t.events[1].time, 0.70, "the next message's arrival", 0);
    test_engine_close(&t);
}
END_TEST

START_TEST(test_cut_under_a_bandwidth_step)
{
    /* agent 0's uplink: 400 kB/s until 0.3 s, then 100 kB/s (below down_1's 500 kB/s).
     * maxmin follows the step: 400e3 x 0.29 + 100e3 x 0.2 = 136,000 bytes by 0.5;
     * fifo takes the rate at the message's start: 400e3 x 0.49 = 196,000. */
    double times[2] = {0, 0.3}, values[2] = {4e5, 1e5};
    TraceSeries step = {.n = 2, .times = times, .values = values};
    const TraceSeries *per_node[3] = {&step, NULL, NULL};
    for (int maxmin = 0; maxmin < 2; maxmin++) {
        TestEngine t;
        make(&t, &(Setup){.maxmin = maxmin, .uplink = per_node});
        Engine *e = t.e;
        ck_assert_int_eq(engine_send_until(e, 0, 1, 1e6, 0, 0.5, MESSAGE, 0), HS_OK);
        ck_assert_int_eq(engine_play(e), HS_OK);
        ck_assert_int_eq(t.n, 1);
        near(t.events[0].time, 0.5, "cut at", maxmin);
        near(t.events[0].bytes, maxmin ? 4e5 * 0.29 + 1e5 * 0.2 : 4e5 * 0.49, "delivered", maxmin);
        test_engine_close(&t);
    }
}
END_TEST

START_TEST(test_floor_goes_whatever_the_deadline)
{
    /* floor 300 kB > the 245 kB the deadline allows: the message ends once 300 kB are
     * through, at 0.01 + 300e3 / 500e3 = 0.61 (fifo: transmitted by 0.6, then 10 ms);
     * a floor below what arrives changes nothing */
    for (int maxmin = 0; maxmin < 2; maxmin++) {
        TestEngine t;
        make(&t, &(Setup){.maxmin = maxmin});
        Engine *e = t.e;
        ck_assert_int_eq(engine_send_until(e, 0, 1, 1e6, 3e5, 0.5, MESSAGE, 0), HS_OK);
        ck_assert_int_eq(engine_play(e), HS_OK);
        ck_assert_int_eq(t.n, 1);
        near(t.events[0].time, 0.61, "floor through at", maxmin);
        near(t.events[0].bytes, 3e5, "delivered", maxmin);
        test_engine_close(&t);
        make(&t, &(Setup){.maxmin = maxmin});
        e = t.e;
        ck_assert_int_eq(engine_send_until(e, 0, 1, 1e6, 1e5, 0.5, MESSAGE, 0), HS_OK);
        ck_assert_int_eq(engine_play(e), HS_OK);
        near(t.events[0].time, 0.5, "cut at", maxmin);
        near(t.events[0].bytes, 5e5 * 0.49, "delivered", maxmin);
        test_engine_close(&t);
    }
}
END_TEST

START_TEST(test_cut_in_latency_or_in_the_queue_delivers_nothing)
{
    /* a deadline of 5 ms, within the 10 ms latency: 0 bytes at 0.005 */
    for (int maxmin = 0; maxmin < 2; maxmin++) {
        TestEngine t;
        make(&t, &(Setup){.maxmin = maxmin});
        Engine *e = t.e;
        ck_assert_int_eq(engine_send_until(e, 0, 1, 1e6, 0, 0.005, MESSAGE, 0), HS_OK);
        ck_assert_int_eq(engine_play(e), HS_OK);
        ck_assert_int_eq(t.n, 1);
        near(t.events[0].time, 0.005, "cut at", maxmin);
        ck_assert(t.events[0].bytes == 0);
        ck_assert(engine_round_bytes(e) == 0);
        test_engine_close(&t);
    }
    /* maxmin with FIFO uplinks: 0 sends 100 kB to 1 (0.21 s), then a message with a
     * deadline of 0.1 to 2 that waits its turn: cut in the queue, 0 bytes at 0.1; a third
     * message queued behind it starts when the first ends: 0.21 + 0.21 = 0.42 */
    TestEngine t;
    make(&t, &(Setup){.maxmin = 1, .uplink_fifo = 1});
    Engine *e = t.e;
    ck_assert_int_eq(engine_send(e, 0, 1, 1e5, MESSAGE, 0), HS_OK);
    ck_assert_int_eq(engine_send_until(e, 0, 2, 1e6, 0, 0.1, MESSAGE, 1), HS_OK);
    ck_assert_int_eq(engine_send(e, 0, 2, 1e5, MESSAGE, 2), HS_OK);
    ck_assert_int_eq(engine_play(e), HS_OK);
    ck_assert_int_eq(t.n, 3);
    ck_assert_int_eq(t.events[0].data, 1);
    near(t.events[0].time, 0.1, "cut in the queue at", 1);
    ck_assert(t.events[0].bytes == 0);
    near(t.events[1].time, 0.21, "first", 1);
    near(t.events[2].time, 0.42, "third", 1);
    test_engine_close(&t);
}
END_TEST

START_TEST(test_cut_of_a_group_member)
{
    /* 100 agents send 100 kB each to agent 100 (down 500 kB/s): held at that downlink
     * (more than NETWORK_GROUP_MIN flows: one group), 5 kB/s each after 10 ms. Agent 0's
     * is cut at 1 s: 5e3 x 0.99 = 4,950 bytes. The others then share 500 kB/s among 99:
     * each has 100e3 - 4,950 left at 1 s, so all end at 1 + 99 x 95,050 / 500e3. */
    enum { N = 101 };
    TestEngine t;
    make(&t, &(Setup){.maxmin = 1, .n = N});
    Engine *e = t.e;
    ck_assert_int_eq(engine_send_until(e, 0, N - 1, 1e5, 0, 1.0, MESSAGE, 0), HS_OK);
    for (int i = 1; i < N - 1; i++) ck_assert_int_eq(engine_send(e, i, N - 1, 1e5, MESSAGE, i), HS_OK);
    ck_assert_int_eq(engine_play(e), HS_OK);
    ck_assert_int_eq(t.n, N - 1);
    ck_assert_int_eq(t.events[0].data, 0);
    near(t.events[0].time, 1.0, "cut at", 1);
    near(t.events[0].bytes, 5e3 * 0.99, "delivered", 1);
    double end = 1 + 99 * (1e5 - 5e3 * 0.99) / 5e5;
    for (int k = 1; k < N - 1; k++) near(t.events[k].time, end, "the others' arrival", 1);
    test_engine_close(&t);
}
END_TEST

static Suite *deadline_suite(void)
{
    Suite *s = suite_create("deadline");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cut_alone_delivers_rate_times_time);
    tcase_add_test(tc, test_whole_before_the_deadline_is_unchanged);
    tcase_add_test(tc, test_cut_under_sharing_frees_the_link);
    tcase_add_test(tc, test_cut_under_a_bandwidth_step);
    tcase_add_test(tc, test_floor_goes_whatever_the_deadline);
    tcase_add_test(tc, test_cut_in_latency_or_in_the_queue_delivers_nothing);
    tcase_add_test(tc, test_cut_of_a_group_member);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(deadline_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
