/* check_comdml.c — ComDML played out in the event queue against the solver's
 * prediction: equal when the activations reach the helper before it is free, and larger
 * by exactly the last batch's transfer and top computation when the slow side is the
 * bottleneck; roles and pairings rows; the offload shortens the round. */
#include "sim/engine.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An MLP whose compute sits in its third block, so split 2 leaves little on the slow side. */
static const char *pair_text =
    "[run]\nmethod = comdml\nrounds = 1\nmode = timing\n"
    "[model]\nlayers = 784,32,512,512,10\nbatch = 64\n"
    "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 GB/s\nlatency = 0 s\nsamples = 640\n"
    "[agents.slow]\ncount = 1\ncompute = 100 MFLOPS\n";

static int run(const char *const *set, int n, TestSink *ts)
{
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    Scenario sc;
    int status = inidoc_load_string("t.ini", pair_text, &doc, &diag);
    for (int i = 0; status == 0 && i < n; i++) status = inidoc_apply_set(&doc, set[i], &diag);
    if (status == 0) status = scenario_resolve(&doc, &sc, &diag);
    inidoc_free(&doc);
    RunOutcome out;
    if (status == 0) status = engine_run(&sc, test_sink_init(ts), &diag, &out);
    if (status) fprintf(stderr, "%s\n", diag.message);
    return status;
}

/* The first pairings row of the test sink's text. */
static void first_pairing(const TestSink *ts, int *slow, int *fast, int *split, double *predicted, double *actual)
{
    const char *line = strstr(ts->text, "pairing ");
    ck_assert_ptr_nonnull(line);
    int round;
    ck_assert_int_eq(sscanf(line, "pairing %d %d %d %d %lf %lf", &round, slow, fast, split, predicted, actual), 6);
}

static ModelProfile profile_of(const char *layers)
{
    ModelSpec s = {.arch = MODEL_ARCH_MLP, .classes = 10, .batch = 64};
    char buf[128];
    snprintf(buf, sizeof buf, "%s", layers);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) s.sizes[s.n_sizes++] = atoi(t);
    ModelProfile p;
    model_profile(&s, &p);
    return p;
}

START_TEST(test_played_out_equals_prediction_when_activations_arrive_early)
{
    TestSink ts;
    ck_assert_int_eq(run(NULL, 0, &ts), 0);
    int slow, fast, split;
    double predicted, actual;
    first_pairing(&ts, &slow, &fast, &split, &predicted, &actual);
    ck_assert_int_eq(slow, 1);
    ck_assert_int_eq(fast, 0);
    ck_assert_int_eq(split, 2);
    ck_assert_msg(fabs(actual - predicted) < 1e-9 * predicted, "actual %.17g predicted %.17g", actual, predicted);
    /* and the prediction is the formula: tau_fast + n ff / s_fast */
    ModelProfile p = profile_of("784,32,512,512,10");
    double step = 64 * (p.total_flops + p.loss_flops);
    double expected = 10 * step / 1e9 + 10 * model_profile_fast_fraction(&p, 2) * step / 1e9;
    ck_assert(fabs(predicted - expected) < 1e-9 * expected);
    ck_assert_str_eq(sink_role_name(ts.agent_round_rows[1].role), "offloader");
    ck_assert_str_eq(sink_role_name(ts.agent_round_rows[0].role), "helper");
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_slow_side_bottleneck_adds_the_last_batch)
{
    /* A helper 50x faster: the slow side's 10 batches are the bottleneck; the helper
     * waits for each activation, so its last top batch (and the last transfer) come
     * after the slow side's end, which is what the solver predicts. */
    const char *set[] = {"agents.compute=5 GFLOPS"};
    TestSink ts;
    ck_assert_int_eq(run(set, 1, &ts), 0);
    int slow, fast, split;
    double predicted, actual;
    first_pairing(&ts, &slow, &fast, &split, &predicted, &actual);
    ModelProfile p = profile_of("784,32,512,512,10");
    double step = 64 * (p.total_flops + p.loss_flops);
    double slow_side = 10 * model_profile_slow_fraction(&p, split) * step / 1e8;
    double transfer = 64 * (model_profile_split_bytes(&p, split) + 4) / 1e9;
    double top = model_profile_fast_fraction(&p, split) * step / 5e9;
    ck_assert(fabs(predicted - slow_side) < 1e-9 * slow_side);
    ck_assert_msg(fabs(actual - (slow_side + transfer + top)) < 1e-9 * actual, "actual %.17g expected %.17g", actual,
                  slow_side + transfer + top);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_offloading_shortens_the_round_against_localsgd)
{
    const char *localsgd[] = {"run.method=localsgd"};
    TestSink a, b;
    ck_assert_int_eq(run(NULL, 0, &a), 0);
    ck_assert_int_eq(run(localsgd, 1, &b), 0);
    ck_assert(a.last_t_end < 0.5 * b.last_t_end);
    test_sink_free(&a);
    test_sink_free(&b);
    /* greedy and exact agree on two agents; a bad solver name is an input error */
    const char *greedy[] = {"method.solver=greedy"};
    ck_assert_int_eq(run(greedy, 1, &a), 0);
    ck_assert(a.pairings == 1);
    test_sink_free(&a);
    const char *bad[] = {"method.solver=magic"};
    ck_assert_int_eq(run(bad, 1, &a), HS_E_INPUT);
    test_sink_free(&a);
}
END_TEST

static Suite *comdml_suite(void)
{
    Suite *s = suite_create("comdml");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_played_out_equals_prediction_when_activations_arrive_early);
    tcase_add_test(tc, test_slow_side_bottleneck_adds_the_last_batch);
    tcase_add_test(tc, test_offloading_shortens_the_round_against_localsgd);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(comdml_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
