/* check_links.c — unstable links against closed forms. Loss (sim/kernel/loss.c): one message of
 * B bytes alone on a link of bandwidth W and latency L takes c = L + B/W per attempt, and
 * after k lost attempts T = (k + 1) c + k rto; over many messages the mean of k is
 * q / (1 - q), q = 1 - (1 - p_a)(1 - p_b). The exact loss sequence is replayed from the
 * sender's stream (a hand-worked run of every draw), under both network models, for
 * retransmit and drop; the round's bytes and lost counts; and a lossless engine that is
 * what it was. A message cut at a deadline (engine_send_until, ROG's rows) is lost the same
 * way, judged when each attempt ends: its replayed sequence gives exactly the bytes that
 * arrived (a retransmission keeps the deadline, so after it only the floor goes). Outage
 * ([agents] outage, maxmin): a message whose transfer meets a down interval of either end's links arrives later by exactly the interval's length. */
#include "sim/kernel/rng.h"
#include "tests/test_engine.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

enum { MESSAGE = ENGINE_EVENT_METHOD };

/* Two agents: 0 sends to 1 over up_0 = 1 MB/s, down_1 = 500 kB/s, latencies 10 and 2 ms;
 * their losses p0 and p1, and agent outage traces or NULL. */
static void two(TestEngine *t, int maxmin, double p0, double p1, int drop, double rto, uint64_t seed,
                const TraceSeries *const *outage)
{
    EngineNode nodes[2] = {{.compute = 1e9, .uplink = 1e6, .downlink = 1e6, .latency = 0.01, .loss = p0},
                           {.compute = 1e9, .uplink = 1e6, .downlink = 5e5, .latency = 0.002, .loss = p1}};
    test_engine_open(t, &(TestEngineSetup){
                            .n_agents = 2,
                            .nodes = nodes,
                            .traces = {.outage = outage},
                            .network = {.maxmin = maxmin, .backbone = INFINITY, .loss_drop = drop, .rto = rto},
                            .seed = seed,
                            .kind = MESSAGE});
}

/* Sends one message of bytes now and plays it to its delivery: its duration. */
static double one_message(TestEngine *t, double bytes)
{
    double start = engine_now(t->e);
    int before = t->n;
    ck_assert_int_eq(engine_send(t->e, 0, 1, bytes, MESSAGE, 7), HS_OK);
    ck_assert_int_eq(engine_play(t->e), HS_OK);
    ck_assert_int_eq(t->n, before + 1);
    return test_engine_last(t)->time - start;
}

static const double B = 1e5, C = 0.01 + 1e5 / 5e5; /* c = L + B / min(up, down) = 0.21 s */

START_TEST(test_exact_sequence_replayed_from_the_stream)
{
    /* every attempt draws u from the sender's stream; u < q loses it */
    for (int maxmin = 0; maxmin < 2; maxmin++)
        for (int drop = 0; drop < 2; drop++) {
            double p0 = 0.3, p1 = 0.2, q = 1 - (1 - p0) * (1 - p1), rto = 0.5;
            TestEngine t;
            two(&t, maxmin, p0, p1, drop, rto, 42, NULL);
            Engine *e = t.e;
            ck_assert(fabs(engine_loss_probability(e, 0, 1) - q) < 1e-15);
            gsl_rng *replica = rng_stream_create(42, 0, RNG_PURPOSE_LOSS);
            int lost_total = 0, attempts = 0;
            for (int m = 0; m < 60; m++) {
                int k = 0;
                if (drop) k = gsl_rng_uniform(replica) < q;
                else
                    while (gsl_rng_uniform(replica) < q) k++;
                double expected = drop ? C + k * rto : (k + 1) * C + k * rto;
                double took = one_message(&t, B);
                ck_assert_msg(fabs(took - expected) < 1e-9, "maxmin %d drop %d message %d: %.17g s, expected %.17g (k %d)",
                              maxmin, drop, m, took, expected, k);
                ck_assert_int_eq(test_engine_last(&t)->lost, drop && k);
                if (test_engine_last(&t)->lost) ck_assert_int_eq(test_engine_last(&t)->from, 0);
                lost_total += k;
                attempts += drop ? 1 : k + 1;
            }
            ck_assert_int_gt(lost_total, 5); /* the sequence did lose messages */
            ck_assert_int_eq(engine_report_round(e, NAN), HS_OK);
            ck_assert_int_eq(t.ts.round_rows[0].lost, lost_total);
            ck_assert_int_eq(t.ts.agent_round_rows[0].lost, lost_total); /* the sender's */
            ck_assert_int_eq(t.ts.agent_round_rows[1].lost, 0);
            /* every attempt puts its bytes on the wire, lost or not */
            ck_assert(fabs(t.ts.round_rows[0].bytes - attempts * B) < 1e-6);
            gsl_rng_free(replica);
            test_engine_close(&t);
        }
}
END_TEST

/* One attempt of a message with a deadline on the two agents' link (W = 500 kB/s, L =
 * 10 ms), started s after the send, deadline D after it, floor F: what it delivers and
 * when it ends (the hand-worked rule of docs/network.md "Messages cut at a deadline"). */
static double deadline_attempt(double s, double D, double bytes, double floor_bytes, double *end)
{
    const double W = 5e5, L = 0.01;
    double through = W * (D - s - L);
    if (through >= bytes) {
        *end = s + L + bytes / W; /* whole before the deadline */
        return bytes;
    }
    if (through > floor_bytes) {
        *end = D; /* cut at the deadline */
        return through;
    }
    *end = s + L + floor_bytes / W; /* the floor goes whatever the deadline */
    return floor_bytes;
}

START_TEST(test_deadline_message_replayed_from_the_stream)
{
    /* 100 kB with a 10 kB floor; deadlines 0.15 s (the first attempt is cut: 70 kB) and
     * 1 s (a whole attempt takes 0.21 s: several fit before it, then one is cut, then only
     * floors); each attempt draws u from the sender's stream when it ends, u < q loses it;
     * retransmit: again rto later with the same deadline; drop: the event rto after the
     * lost attempt ended, 0 bytes delivered */
    const double bytes = 1e5, floor_bytes = 1e4, rto = 0.1;
    for (int maxmin = 0; maxmin < 2; maxmin++)
        for (int drop = 0; drop < 2; drop++) {
            double p0 = 0.3, p1 = 0.2, q = 1 - (1 - p0) * (1 - p1);
            TestEngine t;
            two(&t, maxmin, p0, p1, drop, rto, 42, NULL);
            Engine *e = t.e;
            gsl_rng *replica = rng_stream_create(42, 0, RNG_PURPOSE_LOSS);
            int lost_total = 0, cut_after_loss = 0, floor_after_loss = 0;
            double wire = 0;
            for (int m = 0; m < 40; m++) {
                double D = m % 2 ? 1.0 : 0.15, start = engine_now(e), s = 0, end = 0, got = 0, at = 0;
                int k = 0;
                for (;;) {
                    double d = deadline_attempt(s, D, bytes, floor_bytes, &end);
                    wire += d;
                    if (!(gsl_rng_uniform(replica) < q)) {
                        got = d;
                        at = end;
                        if (k > 0 && d < bytes) {
                            cut_after_loss += d > floor_bytes;
                            floor_after_loss += d == floor_bytes;
                        }
                        break;
                    }
                    k++;
                    if (drop) {
                        at = end + rto;
                        break;
                    }
                    s = end + rto;
                }
                int before = t.n;
                ck_assert_int_eq(engine_send_until(e, 0, 1, bytes, floor_bytes, start + D, MESSAGE, 7), HS_OK);
                ck_assert_int_eq(engine_play(e), HS_OK);
                ck_assert_int_eq(t.n, before + 1);
                const TestEngineEvent *seen = test_engine_last(&t);
                ck_assert_msg(fabs(seen->time - start - at) < 1e-9, "maxmin %d drop %d message %d: at %.17g, expected %.17g (k %d)",
                              maxmin, drop, m, seen->time - start, at, k);
                ck_assert_msg(fabs(seen->bytes - got) < 1e-6, "maxmin %d drop %d message %d: %.17g bytes, expected %.17g (k %d)",
                              maxmin, drop, m, seen->bytes, got, k);
                ck_assert_int_eq(seen->lost, drop && k);
                lost_total += k;
            }
            ck_assert_int_gt(lost_total, 5);
            if (!drop) { /* the sequence went through both kinds of retransmission */
                ck_assert_int_gt(cut_after_loss, 0);
                ck_assert_int_gt(floor_after_loss, 0);
            }
            ck_assert_int_eq(engine_report_round(e, NAN), HS_OK);
            ck_assert_int_eq(t.ts.round_rows[0].lost, lost_total);
            ck_assert_int_eq(t.ts.agent_round_rows[0].lost, lost_total);
            ck_assert(fabs(t.ts.round_rows[0].bytes - wire) < 1e-3); /* every attempt's bytes, lost or not */
            gsl_rng_free(replica);
            test_engine_close(&t);
        }
}
END_TEST

START_TEST(test_mean_retransmission_delay_closed_form)
{
    /* E[T] = c + q/(1-q) (rto + c); K ~ geometric: Var K = q/(1-q)^2, so over n messages
     * the mean of K is within 4 standard errors of q/(1-q) */
    double rto = 0.2;
    const double ps[] = {0.01, 0.05, 0.2};
    for (int maxmin = 0; maxmin < 2; maxmin++)
        for (int i = 0; i < 3; i++) {
            double p = ps[i], q = 1 - (1 - p) * (1 - p);
            TestEngine t;
            two(&t, maxmin, p, p, 0, rto, 1000 + i, NULL);
            int n = 4000;
            double sum = 0;
            for (int m = 0; m < n; m++) sum += one_message(&t, B);
            double mean = sum / n, expected = C + q / (1 - q) * (rto + C);
            double se = sqrt(q) / (1 - q) / sqrt(n) * (rto + C);
            ck_assert_msg(fabs(mean - expected) < 4 * se, "p %g: mean %.6f s, expected %.6f +- %.6f", p, mean, expected,
                          4 * se);
            test_engine_close(&t);
        }
}
END_TEST

START_TEST(test_lossless_engine_is_unchanged)
{
    /* loss 0 on both: no loss state, no draws, NULL columns (-1), the times of before */
    TestEngine t;
    two(&t, 1, 0, 0, 0, 0.2, 1, NULL);
    Engine *e = t.e;
    ck_assert_int_eq(engine_lossy(e), 0);
    ck_assert(engine_loss_probability(e, 0, 1) == 0);
    for (int m = 0; m < 10; m++) ck_assert(fabs(one_message(&t, B) - C) < 1e-12);
    ck_assert_int_eq(engine_report_round(e, NAN), HS_OK);
    ck_assert_int_eq(t.ts.round_rows[0].lost, -1);
    ck_assert_int_eq(t.ts.agent_round_rows[0].lost, -1);
    test_engine_close(&t);
    /* the receiver's end alone loses too: q = p_1 */
    two(&t, 1, 0, 0.25, 0, 0.2, 1, NULL);
    Engine *f = t.e;
    ck_assert(engine_loss_probability(f, 0, 1) == 0.25 && engine_loss_probability(f, 1, 0) == 0.25);
    test_engine_close(&t);
}
END_TEST

START_TEST(test_lost_attempts_share_the_links)
{
    /* maxmin: two messages sent at once share the 500 kB/s downlink, 0.01 + 2B / 500 kB/s
     * = 0.41 s for both. With a seed whose draws lose the first arrival and deliver the
     * second and the resend: one arrives at 0.41 (sharing with the lost attempt: its bytes
     * were real traffic) and the resend, alone, at 0.41 + rto + c. */
    double q = 1 - 0.7 * 0.8, rto = 0.5;
    uint64_t seed = 0;
    for (uint64_t s = 1; s < 1000 && seed == 0; s++) {
        gsl_rng *r = rng_stream_create(s, 0, RNG_PURPOSE_LOSS);
        double u1 = gsl_rng_uniform(r), u2 = gsl_rng_uniform(r), u3 = gsl_rng_uniform(r);
        if (u1 < q && u2 >= q && u3 >= q) seed = s;
        gsl_rng_free(r);
    }
    ck_assert(seed != 0);
    TestEngine t;
    two(&t, 1, 0.3, 0.2, 0, rto, seed, NULL);
    Engine *e = t.e;
    ck_assert_int_eq(engine_send(e, 0, 1, B, MESSAGE, 1), HS_OK);
    ck_assert_int_eq(engine_send(e, 0, 1, B, MESSAGE, 2), HS_OK);
    ck_assert_int_eq(engine_play(e), HS_OK);
    ck_assert_int_eq(t.n, 2);
    double last = test_engine_last(&t)->time;
    ck_assert_msg(fabs(last - (0.41 + rto + C)) < 1e-9, "last arrival %.17g", last);
    ck_assert_int_eq(engine_report_round(e, NAN), HS_OK);
    ck_assert_int_eq(t.ts.round_rows[0].lost, 1);
    ck_assert(fabs(t.ts.round_rows[0].bytes - 3 * B) < 1e-6);
    test_engine_close(&t);
}
END_TEST

START_TEST(test_outage_delays_by_the_interval)
{
    /* alone: latency 0.01 s, then 1e5 B at 500 kB/s = 0.2 s, arriving at 0.21; a down
     * interval [0.1, 0.35) of the sender's (or the receiver's) links stalls the transfer
     * for its 0.25 s: 0.46. Down before the message starts: it transfers after. */
    double times[3] = {0, 0.1, 0.35}, values[3] = {1, 0, 1};
    TraceSeries down = {.n = 3, .times = times, .values = values};
    for (int who = 0; who < 3; who++) {
        const TraceSeries *per_node[2] = {who == 0 ? &down : NULL, who == 1 ? &down : NULL};
        TestEngine t;
        two(&t, 1, 0, 0, 0, 0, 0, who < 2 ? per_node : NULL);
        double took = one_message(&t, B);
        double expected = who < 2 ? C + 0.25 : C; /* who 2: no outage */
        ck_assert_msg(fabs(took - expected) < 1e-9, "outage of node %d: %.17g s, expected %.17g", who, took, expected);
        /* a second message sent at 0.46, after the interval: c */
        ck_assert(fabs(one_message(&t, B) - C) < 1e-9);
        test_engine_close(&t);
    }
    /* sent while the link is down (at 0.2): its latency runs, its bytes wait for 0.35 */
    const TraceSeries *per_node[2] = {&down, NULL};
    TestEngine t;
    two(&t, 1, 0, 0, 0, 0, 0, per_node);
    Engine *e = t.e;
    ck_assert_int_eq(engine_schedule(e, 0.2, MESSAGE, 0, 0), HS_OK); /* just to move the clock */
    ck_assert_int_eq(engine_play(e), HS_OK);
    ck_assert(fabs(engine_now(e) - 0.2) < 1e-15);
    double took = one_message(&t, B);
    ck_assert_msg(fabs(engine_now(e) - (0.35 + 0.2)) < 1e-9, "sent while down: arrives at %.17g (took %.17g)",
                  engine_now(e), took);
    test_engine_close(&t);
}
END_TEST

static Suite *links_suite(void)
{
    Suite *s = suite_create("links");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_exact_sequence_replayed_from_the_stream);
    tcase_add_test(tc, test_deadline_message_replayed_from_the_stream);
    tcase_add_test(tc, test_mean_retransmission_delay_closed_form);
    tcase_add_test(tc, test_lossless_engine_is_unchanged);
    tcase_add_test(tc, test_lost_attempts_share_the_links);
    tcase_add_test(tc, test_outage_delays_by_the_interval);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(links_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
