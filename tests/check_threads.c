/* check_threads.c — train mode's worker threads change nothing: every method (and the
 * variants that take other paths through the trainer: compression, Byzantine agents,
 * split training, several tokens) writes bitwise the same rows with 1, 2 and 3 threads
 * as in the eager reference order, where each step runs the moment a method asks for it.
 * The eager comparison catches a method that reads a vector while work on it is still
 * queued (a flush missing); the thread counts catch a race or per-thread state. Run
 * under ThreadSanitizer by `make SANITIZE=thread test-threads`. The CNN likewise, on
 * oneDNN's kernels and on OpenBLAS's. */
#include "sim/run.h"
#include "sim/methods/method.h"
#include "sim/train/workers.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"
#include "tests/test_variants.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *synthetic =
    "[run]\nrounds = 2\nmode = train\n"
    "[data]\ndataset = synthetic\nfeatures = 12\nclasses = 4\ntrain_samples = 960\ntest_samples = 200\n"
    "separation = 3\n"
    "[model]\nlayers = 12,256,256,4\nbatch = 16\noptimizer = momentum\nlr = 0.05\n"
    "[topology]\ngraph = ring\n"
    "[agents]\ncount = 7\ncompute = lognormal(1 GFLOPS, 0.7)\nbandwidth = 10 MB/s\nlatency = 1 ms\n"
    "[agents.slow]\ncount = 2\ncompute = 50 MFLOPS\n"
    "[servers]\ncount = 1\ncompute = 10 GFLOPS\nbandwidth = 100 MB/s\nlatency = 1 ms\n"; /* 3 for sdfeel's gossip */

/* The CNN on small synthetic images (its conv blocks on oneDNN where hetsim has it:
 * [run] kernels = auto), 20 channels in the second block so a block of 16 is partial. */
static const char *cnn =
    "[run]\nrounds = 2\nmode = train\n"
    "[data]\ndataset = synthetic\nchannels = 1\nheight = 12\nwidth = 12\nclasses = 4\ntrain_samples = 600\n"
    "test_samples = 100\n"
    "[model]\narch = cnn\nchannels = 8,20\nkernel = 3\nhidden = 32\nbatch = 19\noptimizer = momentum\nlr = 0.05\n"
    "[topology]\ngraph = ring\n"
    "[agents]\ncount = 5\ncompute = lognormal(1 GFLOPS, 0.7)\nbandwidth = 10 MB/s\nlatency = 1 ms\n"
    "[agents.slow]\ncount = 2\ncompute = 50 MFLOPS\n";

/* Runs text with the overrides; threads as in Scenario.threads. The rows as text in *ts. */
static void run_with_threads(const char *text, const char *const *set, int n, int threads, TestSink *ts)
{
    HsDiag diag;
    Scenario sc;
    int status = test_resolve(text, set, n, &sc, &diag);
    ck_assert_msg(status == HS_OK, "%s", diag.message);
    sc.threads = threads;
    RunOutcome out;
    status = sim_run(&sc, test_sink_init(ts), &diag, &out);
    ck_assert_msg(status == HS_OK, "%s (threads %d): %s", set[0], threads, diag.message);
}

static void check_same_rows_of(const char *text, const char *const *set, int n)
{
    TestSink reference;
    run_with_threads(text, set, n, SCENARIO_THREADS_EAGER, &reference);
    ck_assert_int_gt(reference.metrics, 0);
    for (int threads = 1; threads <= 3; threads++) {
        TestSink ts;
        run_with_threads(text, set, n, threads, &ts);
        ck_assert_msg(ts.len == reference.len && memcmp(ts.text, reference.text, ts.len) == 0,
                      "%s%s%s: rows with %d threads differ from the eager order", set[0], n > 1 ? " " : "",
                      n > 1 ? set[1] : "", threads);
        test_sink_free(&ts);
    }
    test_sink_free(&reference);
}

static void check_same_rows(const char *const *set, int n)
{
    check_same_rows_of(synthetic, set, n);
}

START_TEST(test_every_method_same_rows_for_any_thread_count)
{
    for (const MethodOps *const *m = method_all(); *m; m++) {
        char method[96];
        snprintf(method, sizeof method, "run.method=%s", (*m)->name);
        const char *set[] = {method};
        check_same_rows(set, 1);
    }
}
END_TEST

/* Paths the defaults do not take (tests/test_variants.h). */
START_TEST(test_variants_same_rows_for_any_thread_count)
{
    for (size_t v = 0; v < test_variants_n; v++) check_same_rows(test_variants[v], TEST_VARIANT_SETS);
}
END_TEST

/* The CNN on each kernel set: plain steps, split training (comdml), per-sample
 * gradients (DP-SGD), frozen stages; batch 19 leaves single samples after the chunks. */
START_TEST(test_cnn_same_rows_for_any_thread_count)
{
    static const char *const variants[][2] = {
        {"run.method=sync", "run.kernels=auto"},
        {"run.method=localsgd", "run.kernels=auto"},
        {"run.method=comdml", "run.kernels=auto"},
        {"run.method=localsgd", "privacy.clip=sample"},
        {"run.method=localsgd", "method.freeze=progressive"},
        {"run.method=localsgd", "run.kernels=openblas"},
        {"run.method=comdml", "run.kernels=openblas"},
    };
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) check_same_rows_of(cnn, variants[v], 2);
}
END_TEST

/* The pool itself: every task runs once, whatever the thread count. */
static void count_task(void *ctx, int task, int slot)
{
    int *hits = ctx;
    __atomic_fetch_add(&hits[task], 1, __ATOMIC_RELAXED);
    (void)slot;
}

START_TEST(test_workers_run_every_task_once)
{
    for (int threads = 1; threads <= 4; threads++) {
        Workers *w;
        ck_assert_int_eq(workers_create(threads, &w), HS_OK);
        ck_assert_int_eq(workers_threads(w), threads);
        for (int batch = 0; batch < 50; batch++) {
            int hits[37] = {0};
            int n = batch % 37 + 1;
            workers_run(w, n, count_task, hits);
            for (int k = 0; k < 37; k++) ck_assert_int_eq(hits[k], k < n ? 1 : 0);
        }
        workers_free(w);
    }
    ck_assert_int_ge(workers_online_cpus(), 1);
}
END_TEST

static Suite *threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_workers_run_every_task_once);
    tcase_add_test(tc, test_every_method_same_rows_for_any_thread_count);
    tcase_add_test(tc, test_variants_same_rows_for_any_thread_count);
    tcase_add_test(tc, test_cnn_same_rows_for_any_thread_count);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(threads_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
