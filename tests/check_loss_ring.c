/* check_loss_ring.c — ring all-reduces under [agents] loss (sim/kernel/loss.c, "Rings")
 * against closed forms. A ring of N equal members (up = down = W, latency L) of B bytes
 * is 2(N-1) steps; in a step every member sends B/N to the next, each link carrying one
 * chunk at a time, so an attempt takes c = L + (B/N)/W and a chunk lost k times arrives
 * after (k + 1) c + k rto; the step lasts as long as its slowest chunk. Replaying every
 * sender's stream gives each ring's time exactly, under both network models; over many
 * rings the mean step is c + E[max of N geometrics] (c + rto), where
 * E[max] = sum_j>=0 (1 - (1 - q^(j+1))^N). Lossless, a step is c: the models' rings. */
#include "sim/kernel/collective.h"
#include "sim/kernel/rng.h"
#include "tests/test_engine.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

enum { DONE = ENGINE_EVENT_METHOD };

enum { MAX_MEMBERS = 8 };
static const double W = 1e6, L = 0.004, B = 4e5;

static void ring_engine(TestEngine *t, int maxmin, int n, double p, double rto, uint64_t seed)
{
    test_engine_open(t, &(TestEngineSetup){
                            .n_agents = n,
                            .node = {.compute = 1e9, .uplink = W, .downlink = W, .latency = L, .loss = p},
                            .network = {.maxmin = maxmin, .backbone = INFINITY, .rto = rto},
                            .seed = seed,
                            .kind = DONE});
}

/* Plays one blocking ring of every agent to its end: its duration. */
static double one_ring(TestEngine *t, int n)
{
    Collective c;
    engine_collective_begin(&c, NULL, n, B, 1, DONE, 0);
    double start = engine_now(t->e);
    int before = t->n;
    for (int i = 0; i < n; i++) ck_assert_int_eq(engine_collective_join(t->e, &c, i), HS_OK);
    ck_assert_int_eq(engine_play(t->e), HS_OK);
    ck_assert_int_eq(t->n, before + 1);
    ck_assert_int_eq(test_engine_last(t)->agent, -1);
    return test_engine_last(t)->time - start;
}

START_TEST(test_ring_replayed_from_the_streams)
{
    const int sizes[] = {2, 4};
    for (int maxmin = 0; maxmin < 2; maxmin++)
        for (int s = 0; s < 2; s++) {
            int n = sizes[s];
            double p = 0.15, q = 1 - (1 - p) * (1 - p), rto = 0.2, c = L + B / n / W;
            TestEngine t;
            ring_engine(&t, maxmin, n, p, rto, 77);
            Engine *e = t.e;
            gsl_rng *replica[MAX_MEMBERS];
            for (int i = 0; i < n; i++) replica[i] = rng_stream_create(77, (uint64_t)i, RNG_PURPOSE_LOSS);
            int lost[MAX_MEMBERS] = {0}, lost_total = 0, attempts = 0;
            for (int r = 0; r < 25; r++) {
                double expected = 0;
                for (int step = 0; step < 2 * (n - 1); step++) {
                    double slowest = 0;
                    for (int i = 0; i < n; i++) {
                        int k = 0;
                        while (gsl_rng_uniform(replica[i]) < q) k++;
                        slowest = fmax(slowest, (k + 1) * c + k * rto);
                        lost[i] += k;
                        lost_total += k;
                        attempts += k + 1;
                    }
                    expected += slowest;
                }
                double took = one_ring(&t, n);
                ck_assert_msg(fabs(took - expected) < 1e-9, "maxmin %d, %d members, ring %d: %.17g s, expected %.17g",
                              maxmin, n, r, took, expected);
            }
            ck_assert_int_gt(lost_total, 5);
            ck_assert_int_eq(engine_report_round(e, NAN), HS_OK);
            ck_assert_int_eq(t.ts.round_rows[0].lost, lost_total);
            for (int i = 0; i < n; i++) ck_assert_int_eq(t.ts.agent_round_rows[i].lost, lost[i]);
            /* every attempt of a chunk puts B/N on the wire */
            ck_assert_msg(fabs(t.ts.round_rows[0].bytes - attempts * B / n) < 1e-3, "bytes %.17g, expected %.17g",
                          t.ts.round_rows[0].bytes, attempts * B / n);
            for (int i = 0; i < n; i++) gsl_rng_free(replica[i]);
            test_engine_close(&t);
        }
}
END_TEST

START_TEST(test_mean_ring_time_closed_form)
{
    /* a step's time is c + K (c + rto), K the max of N geometric counts of losses; its
     * variance from P(K > j) = 1 - (1 - q^(j+1))^N */
    const double ps[] = {0.01, 0.05};
    int n = 4, rings = 1500;
    double rto = 0.2, c = L + B / n / W;
    for (int maxmin = 0; maxmin < 2; maxmin++)
        for (int i = 0; i < 2; i++) {
            double p = ps[i], q = 1 - (1 - p) * (1 - p), mean_k = 0, mean_k2 = 0;
            for (int j = 0; j < 200; j++) {
                double tail = 1 - pow(1 - pow(q, j + 1), n); /* P(K > j) */
                mean_k += tail;
                mean_k2 += (2 * j + 1) * tail;
            }
            double steps = 2.0 * (n - 1), var_step = (mean_k2 - mean_k * mean_k) * (c + rto) * (c + rto);
            double expected = steps * (c + mean_k * (c + rto)), se = sqrt(steps * var_step / rings);
            TestEngine t;
            ring_engine(&t, maxmin, n, p, rto, 500 + i);
            double sum = 0;
            for (int r = 0; r < rings; r++) sum += one_ring(&t, n);
            double mean = sum / rings, lossless = steps * c;
            ck_assert_msg(fabs(mean - expected) < 4 * se, "maxmin %d p %g: mean ring %.6f s, expected %.6f +- %.6f "
                          "(lossless %.6f)", maxmin, p, mean, expected, 4 * se, lossless);
            ck_assert(mean > lossless);
            test_engine_close(&t);
        }
}
END_TEST

START_TEST(test_lossless_ring_is_the_models)
{
    /* loss 0: the models' own rings, 2(N-1) c; a member alone ends at once */
    for (int maxmin = 0; maxmin < 2; maxmin++) {
        TestEngine t;
        ring_engine(&t, maxmin, 4, 0, 0.2, 1);
        ck_assert_int_eq(engine_lossy(t.e), 0);
        ck_assert(fabs(one_ring(&t, 4) - 6 * (L + B / 4 / W)) < 1e-12);
        test_engine_close(&t);
        ring_engine(&t, maxmin, 1, 0.3, 0.2, 1);
        ck_assert(one_ring(&t, 1) == 0);
        test_engine_close(&t);
    }
}
END_TEST

static Suite *loss_ring_suite(void)
{
    Suite *s = suite_create("loss_ring");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ring_replayed_from_the_streams);
    tcase_add_test(tc, test_mean_ring_time_closed_form);
    tcase_add_test(tc, test_lossless_ring_is_the_models);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(loss_ring_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
