/* check_eager.c — eager-SGD (sim/methods/eager.c): the partial collectives' timing worked
 * out by hand, the late gradients carried (not dropped), determinism. */
#include "models/model_spec.h"
#include "sim/run.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run_text(const char *text, const char *const *overrides, int n, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(text, overrides, n, ts, &diag);
    if (status != 0) fprintf(stderr, "%s\n", diag.message);
    return status;
}

static double step_flops(int batch, const int *sizes, int n)
{
    ModelSpec spec = {.arch = MODEL_ARCH_MLP, .n_sizes = n, .classes = sizes[n - 1], .batch = batch};
    memcpy(spec.sizes, sizes, (size_t)n * sizeof *sizes);
    ModelProfile p;
    ck_assert_int_eq(model_profile(&spec, &p), 0);
    return batch * (p.total_flops + p.loss_flops);
}

/* Three agents whose steps last u, 2.7 u and 6.5 u (u = the step's FLOPs at 1 GFLOPS); the
 * links make a ring all-reduce of the model among the three last 0.3 u; 384 samples of
 * batch 64 = 6 reductions a round. */
static char *three_speeds(const char *collective, double *u)
{
    int sizes[] = {16, 32, 4};
    double f = step_flops(64, sizes, 3), bytes = 4.0 * (16 * 32 + 32 + 32 * 4 + 4);
    *u = f / 1e9;
    double bandwidth = 2.0 * 2 * (bytes / 3) / (0.3 * *u);
    char *text = malloc(2048);
    snprintf(text, 2048,
             "[run]\nmethod = eager\nrounds = 2\nmode = timing\n"
             "[method]\ncollective = %s\n"
             "[model]\nlayers = 16,32,4\nbatch = 64\n"
             "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\n"
             "[agents]\ncount = 3\ncompute = 1 GFLOPS\nbandwidth = %.17g B/s\nlatency = 0 s\nsamples = 384\n"
             "[agents.medium]\ncount = 1\ncompute = %.17g FLOPS\n"
             "[agents.slow]\ncount = 1\ncompute = %.17g FLOPS\n",
             collective, bandwidth, 1e9 / 2.7, 1e9 / 6.5);
    return text;
}

/* Solo (quorum 1), in units of u; A, B, C = agents 0, 1, 2:
 *   1.0 A done -> reduction 1 [1.0, 1.3]; A again -> 2.3 -> reduction 2 [2.3, 2.6], A -> 3.6
 *   2.7 B done (A computing, nothing on the wire) -> reduction 3 [2.7, 3.0]; B -> 5.7
 *   3.6 A -> reduction 4 [3.6, 3.9]; A -> 4.9 -> reduction 5 [4.9, 5.2]; A -> 6.2
 *   5.7 B -> reduction 6 [5.7, 6.0]: the round's sixth; A ends 6.2, C 6.5: the round ends at 6.5.
 * Each reduction has one fresh gradient: 2 late agent-steps each, 12 a round.
 * Majority (quorum ceil(3/2) = 2):
 *   1.0 A waits; 2.7 B -> reduction 1 [2.7, 3.0]; A -> 4.0, B -> 5.7
 *   4.0 A; 5.7 B -> reduction 2 [5.7, 6.0]; A -> 7.0, B -> 8.7
 *   6.5 C (its gradient of the initial model); 7.0 A -> reduction 3 [7.0, 7.3]; A -> 8.3, C -> 13.8
 *   8.3 A; 8.7 B -> reduction 4 [8.7, 9.0]; A -> 10.0, B -> 11.7
 *   10.0 A; 11.7 B -> reduction 5 [11.7, 12.0]; A -> 13.0, B -> 14.7
 *   13.0 A; 13.8 C -> reduction 6 [13.8, 14.1]; B ends 14.7: the round ends at 14.7.
 * One late agent-step a reduction, 6 a round. The second round repeats the first (every
 * agent starts it idle). Sync: 6 (6.5 + 0.3) = 40.8 a round. */
START_TEST(test_partial_collectives_hand_worked)
{
    static const struct {
        const char *collective;
        double round;
        double late;
    } cases[] = {{"solo", 6.5, 12}, {"majority", 14.7, 6}};
    for (int k = 0; k < 2; k++) {
        double u;
        char *text = three_speeds(cases[k].collective, &u);
        TestSink ts;
        ck_assert_int_eq(run_text(text, NULL, 0, &ts), 0);
        ck_assert_int_eq(ts.rounds, 2);
        for (int r = 0; r < 2; r++) {
            double expected = (r + 1) * cases[k].round * u;
            ck_assert_msg(fabs(ts.round_rows[r].t_end - expected) < 1e-9 * expected, "%s round %d: %.17g vs %.17g",
                          cases[k].collective, r, ts.round_rows[r].t_end, expected);
            ck_assert_msg(ts.round_rows[r].extra == cases[k].late, "%s late %g", cases[k].collective,
                          ts.round_rows[r].extra);
        }
        /* every reduction is a ring among all three: 6 x 2 (N-1) x B/N per agent */
        double bytes = 4.0 * (16 * 32 + 32 + 32 * 4 + 4);
        ck_assert(fabs(ts.round_rows[0].bytes - 6 * 3 * 2.0 * 2 * bytes / 3) < 1e-6 * bytes);
        test_sink_free(&ts);
        /* sync on the same fleet waits for C every step */
        const char *sync[] = {"run.method=sync"};
        char *plain = strstr(text, "[method]");
        memmove(plain, strstr(plain, "[model]"), strlen(strstr(plain, "[model]")) + 1);
        ck_assert_int_eq(run_text(text, sync, 1, &ts), 0);
        ck_assert(fabs(ts.round_rows[0].t_end - 40.8 * u) < 1e-9 * 40.8 * u);
        test_sink_free(&ts);
        free(text);
    }
}
END_TEST

/* Late gradients are carried, not dropped. Each agent holds one class (shards = 1) and the
 * slow one (5x slower) is late for nearly every reduction: sync with deadline = 0 drops
 * its gradients and never learns its class; eager adds them to later reductions and does.
 * The same fleet, the same steps of the fast agents. */
static const char *skewed =
    "[run]\nmethod = eager\nrounds = 8\nmode = train\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 1600\ntest_samples = 400\n"
    "separation = 3\npartition = shards\nshards = 1\n"
    "[model]\nlayers = 16,32,4\nbatch = 16\nlr = 0.05\n"
    "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\n"
    "[agents.slow]\ncount = 1\ncompute = 200 MFLOPS\n";

START_TEST(test_late_gradients_are_carried)
{
    static const char *const runs[][2] = {{"method.collective=solo", NULL},
                                          {"method.collective=majority", NULL},
                                          {"run.method=sync", "method.deadline=0 s"}};
    double accuracy[3];
    for (int k = 0; k < 3; k++) {
        TestSink a, b;
        ck_assert_int_eq(run_text(skewed, runs[k], runs[k][1] ? 2 : 1, &a), 0);
        accuracy[k] = test_sink_last_accuracy(&a);
        if (k < 2) { /* determinism: the same rows twice */
            ck_assert_int_eq(run_text(skewed, runs[k], 1, &b), 0);
            ck_assert_str_eq(a.text, b.text);
            test_sink_free(&b);
        }
        test_sink_free(&a);
    }
    for (int k = 0; k < 2; k++)
        ck_assert_msg(accuracy[k] > accuracy[2] + 0.1, "eager %.3f vs dropping %.3f", accuracy[k], accuracy[2]);
}
END_TEST

START_TEST(test_collective_key_is_checked)
{
    double u;
    char *text = three_speeds("half", &u);
    TestSink ts;
    ck_assert_int_eq(run_text(text, NULL, 0, &ts), HS_E_INPUT); /* before any row: nothing to free */
    free(text);
}
END_TEST

static Suite *eager_suite(void)
{
    Suite *s = suite_create("eager");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_partial_collectives_hand_worked);
    tcase_add_test(tc, test_late_gradients_are_carried);
    tcase_add_test(tc, test_collective_key_is_checked);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(eager_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
