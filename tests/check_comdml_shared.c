/* check_comdml_shared.c — ComDML with [method] allocation = shared (solver/shared.h):
 *  - hand-worked timing: two slow agents offload to one fast helper; the helper trains its
 *    own epoch, then both tops; the pairings rows (one per offloader) predict
 *    tau_0 + 2 n ff[m] / s_0 and the play-out ends there exactly (the activations arrive
 *    while the helper is still busy); in pairs one slow agent stays alone and the round
 *    is its epoch;
 *  - the same scenario in train mode times like timing mode; runs repeat bitwise;
 *  - learning: eight rounds on synthetic data lift the accuracy well above chance;
 *  - churn (predict, proactive allocation): the helper leaves as its own epoch ends and
 *    comes back after the slow agents' epochs; reactively (predict = none) it trains both
 *    tops after its return, so the round ends 20 top batches later than with predict =
 *    trace, which sees the absence coming and leaves everyone alone; predict = history
 *    learns it in round 0 and keeps the helper out in round 1; an offloader that leaves
 *    loses the batches its shared helper had not trained (rounds.extra); a helper whose
 *    battery ran out is left out at the next rebalance;
 *  - under churn, train mode times like timing mode and runs repeat bitwise;
 *  - bad input: cost = exact, exact past its size, an unknown allocation, predict without
 *    churn, history's keys without history, out of range — each an input error naming
 *    where the key was written. */
#include "sim/run.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include "tests/test_files.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An MLP whose compute sits in its third block; agent 0 fast (50 batches), agents 1 and 2
 * slow (10 batches each, 10x slower). */
static const char *shared_text =
    "[run]\nmethod = comdml\nrounds = 1\nmode = timing\n"
    "[model]\nlayers = 784,32,512,512,10\nbatch = 64\n"
    "[method.comdml]\nallocation = shared\n"
    "[agents]\ncount = 3\ncompute = 10 GFLOPS\nbandwidth = 10 GB/s\nlatency = 0 s\nsamples = 3200\n"
    "[agents.slow]\ncount = 2\ncompute = 1 GFLOPS\nsamples = 640\n";

static void assert_near(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12, "%s: got %.17g want %.17g", what, got, want);
}

static int run(const char *const *set, int n, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(shared_text, set, n, ts, &diag);
    if (status) fprintf(stderr, "%s\n", diag.message);
    return status;
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

/* Reads the pairings rows: slow, fast, split, predicted, actual of up to max rows. */
static int pairings(const TestSink *ts, int *slow, int *fast, int *split, double *predicted, double *actual, int max)
{
    int rows = 0, round;
    for (const char *line = ts->text; rows < max && (line = strstr(line, "pairing ")) != NULL; line++, rows++)
        ck_assert_int_eq(sscanf(line, "pairing %d %d %d %d %lf %lf", &round, &slow[rows], &fast[rows], &split[rows],
                                &predicted[rows], &actual[rows]),
                         6);
    return rows;
}

START_TEST(test_two_offloaders_share_one_helper)
{
    TestSink ts;
    ck_assert_int_eq(run(NULL, 0, &ts), 0);
    int slow[4], fast[4], split[4];
    double predicted[4], actual[4];
    ck_assert_int_eq(pairings(&ts, slow, fast, split, predicted, actual, 4), 2);
    ModelProfile p = profile_of("784,32,512,512,10");
    double step = 64 * (p.total_flops + p.loss_flops);
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(slow[k], k + 1);
        ck_assert_int_eq(fast[k], 0);
        ck_assert_int_eq(split[k], split[0]);
        /* the helper: its own 50 batches, then 2 x 10 top batches, all on its processor */
        double group = 50 * step / 1e10 + 20 * model_profile_fast_fraction(&p, split[k]) * step / 1e10;
        double slow_side = 10 * model_profile_slow_fraction(&p, split[k]) * step / 1e9;
        double transfer = 20 * 64 * (model_profile_split_bytes(&p, split[k]) + 4) / 1e10;
        double expected = fmax(group, fmax(slow_side, transfer));
        ck_assert_msg(fabs(predicted[k] - expected) < 1e-9 * expected, "predicted %.17g expected %.17g", predicted[k],
                      expected);
    }
    /* the helper is the bottleneck (its own epoch outlasts the slow sides' and transfers,
     * so every activation waits for it): the play-out is the prediction for the offloader
     * whose top ends last, and no later than it for the other */
    ck_assert(50 * step / 1e10 > 10 * model_profile_slow_fraction(&p, split[0]) * step / 1e9);
    ck_assert_msg(fabs(fmax(actual[0], actual[1]) - predicted[0]) < 1e-9 * predicted[0], "actual %.17g, %.17g vs %.17g",
                  actual[0], actual[1], predicted[0]);
    ck_assert(fmin(actual[0], actual[1]) <= predicted[0]);
    ck_assert_str_eq(sink_role_name(ts.agent_round_rows[0].role), "helper");
    ck_assert_str_eq(sink_role_name(ts.agent_round_rows[1].role), "offloader");
    ck_assert_str_eq(sink_role_name(ts.agent_round_rows[2].role), "offloader");
    double shared_end = ts.last_t_end;
    test_sink_free(&ts);
    /* in pairs, one slow agent trains its whole epoch alone: 10 steps at 1 GFLOPS */
    const char *pairs[] = {"method.allocation=pairs"};
    ck_assert_int_eq(run(pairs, 1, &ts), 0);
    ck_assert(ts.pairings <= 1); /* exact pairs no one: a slow agent alone sets the makespan anyway */
    ck_assert(ts.last_t_end >= 10 * step / 1e9);
    ck_assert(shared_end < 0.8 * ts.last_t_end);
    test_sink_free(&ts);
    /* greedy and ip find the same assignment */
    const char *solvers[][1] = {{"method.solver=greedy"}, {"method.solver=ip"}};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(run(solvers[k], 1, &ts), 0);
        ck_assert_int_eq(ts.pairings, 2);
        ck_assert(fabs(ts.last_t_end - shared_end) < 1e-12 * shared_end);
        test_sink_free(&ts);
    }
}
END_TEST

/* Six agents, four slow, on synthetic data: two helpers serve two offloaders each. */
static const char *learn_set[] = {"agents.count=6", "agents.slow.count=4", "agents.samples=640",
                                  "data.dataset=synthetic", "data.features=16",  "data.classes=4", "model.layers=16,32,32,4",
                                  "data.train_samples=3840", "data.test_samples=400", "model.lr=0.05",
                                  "data.separation=3", "run.rounds=8"};

static int run_learning(const char *mode, TestSink *ts)
{
    const char *set[16];
    int n = 0;
    for (size_t k = 0; k < sizeof learn_set / sizeof *learn_set; k++)
        set[n++] = learn_set[k];
    set[n++] = mode;
    return run(set, n, ts);
}

START_TEST(test_train_mode_times_like_timing_mode)
{
    TestSink timing, train;
    ck_assert_int_eq(run_learning("run.mode=timing", &timing), 0);
    ck_assert_int_eq(run_learning("run.mode=train", &train), 0);
    /* a helper does serve several offloaders here */
    int slow[32], fast[32], split[32];
    double predicted[32], actual[32];
    int rows = pairings(&timing, slow, fast, split, predicted, actual, 32), crowded = 0;
    for (int a = 0; a < rows; a++)
        for (int b = a + 1; b < rows; b++)
            crowded += fast[a] == fast[b];
    ck_assert_msg(crowded > 0, "no helper serves two offloaders: %s", timing.text);
    char *a = test_sink_timing_lines(&timing), *b = test_sink_timing_lines(&train);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    test_sink_free(&timing);
    test_sink_free(&train);
}
END_TEST

START_TEST(test_runs_repeat_bitwise_and_learn)
{
    TestSink a, b;
    ck_assert_int_eq(run_learning("run.mode=train", &a), 0);
    ck_assert_int_eq(run_learning("run.mode=train", &b), 0);
    ck_assert_str_eq(a.text, b.text);
    double accuracy = test_sink_last_accuracy(&a);
    ck_assert_msg(accuracy > 0.5, "accuracy %g after 8 rounds (chance 0.25)", accuracy);
    test_sink_free(&a);
    test_sink_free(&b);
}
END_TEST

START_TEST(test_bad_input)
{
    static const struct {
        const char *set[2];
        const char *fragment;
    } cases[] = {
        {{"method.cost=exact", NULL}, "allocation = shared takes cost = paper"},
        {{"agents.count=15", "agents.slow.count=2"}, "with solver = exact enumerates, up to 14 agents (15 given)"},
        {{"method.allocation=many", NULL}, "'many'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        TestSink ts;
        memset(&ts, 0, sizeof ts); /* the run stops before it sets the sink up */
        HsDiag diag;
        hs_diag_clear(&diag);
        int n = cases[k].set[1] ? 2 : 1;
        ck_assert_int_eq(test_run(shared_text, cases[k].set, n, &ts, &diag), HS_E_INPUT);
        ck_assert_msg(strstr(diag.message, cases[k].fragment) != NULL, "'%s' lacks '%s'", diag.message,
                      cases[k].fragment);
        test_sink_free(&ts);
    }
    /* the key's own line in the file */
    TestSink ts;
    memset(&ts, 0, sizeof ts);
    HsDiag diag;
    hs_diag_clear(&diag);
    const char *exact[] = {"method.cost=exact"};
    ck_assert_int_eq(test_run(shared_text, exact, 1, &ts, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:9: ") != NULL && strstr(diag.message, "allocation = shared takes cost = paper"),
                  "%s", diag.message);
    test_sink_free(&ts);
    /* predict and its keys */
    const char *trace = test_availability_set("shared", "agent,time,value\n0,0,1\n1,0,1\n2,0,1\n");
    static const struct {
        const char *set[3];
        const char *fragment;
    } predict_cases[] = {
        {{"method.predict=trace", NULL, NULL}, "--set method.predict=trace: predict = trace looks ahead"},
        {{"method.predict=history", NULL, NULL}, "every agent stays online"},
        {{"method.predict=trace", "method.history_weight=0.3", "T"}, "--set method.history_weight=0.3: applies to predict = history only"},
        {{"method.stay_threshold=0.3", "T", NULL}, "applies to predict = history only"},
        {{"method.predict=history", "method.history_weight=0", "T"}, "history_weight"},
        {{"method.predict=history", "method.stay_threshold=1.5", "T"}, "stay_threshold"},
        {{"method.predict=soon", NULL, NULL}, "'soon'"},
    };
    for (size_t k = 0; k < sizeof predict_cases / sizeof *predict_cases; k++) {
        const char *set[3];
        int n = 0;
        for (int w = 0; w < 3 && predict_cases[k].set[w]; w++)
            set[n++] = strcmp(predict_cases[k].set[w], "T") ? predict_cases[k].set[w] : trace;
        memset(&ts, 0, sizeof ts);
        hs_diag_clear(&diag);
        ck_assert_int_eq(test_run(shared_text, set, n, &ts, &diag), HS_E_INPUT);
        ck_assert_msg(strstr(diag.message, predict_cases[k].fragment) != NULL, "'%s' lacks '%s'", diag.message,
                      predict_cases[k].fragment);
        test_sink_free(&ts);
    }
    /* the key's own line in the file */
    static const char *predict_text =
        "[run]\nmethod = comdml\nrounds = 1\nmode = timing\n"
        "[model]\nlayers = 784,32,512,512,10\nbatch = 64\n"
        "[method.comdml]\nallocation = shared\npredict = trace\n"
        "[agents]\ncount = 3\ncompute = 10 GFLOPS\nbandwidth = 10 GB/s\nlatency = 0 s\nsamples = 3200\n";
    memset(&ts, 0, sizeof ts);
    hs_diag_clear(&diag);
    ck_assert_int_eq(test_run(predict_text, NULL, 0, &ts, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:10: ") && strstr(diag.message, "predict = trace looks ahead"), "%s",
                  diag.message);
    test_sink_free(&ts);
    test_scratch_unlink("shared", "availability.csv");
}
END_TEST

/* --- churn: predict --- */

/* The helper (agent 0) leaves at `off` and is back at `back`; the slow agents stay. */
static const char *helper_absence(double off, double back)
{
    char text[256];
    snprintf(text, sizeof text, "agent,time,value\n0,0,1\n0,%.17g,0\n0,%.17g,1\n1,0,1\n2,0,1\n", off, back);
    return test_availability_set("shared", text);
}

START_TEST(test_trace_prediction_avoids_a_departing_helper)
{
    TestSink ts;
    int slow[4], fast[4], split[4];
    double predicted[4], actual[4];
    ck_assert_int_eq(run(NULL, 0, &ts), 0); /* the split both offloaders use */
    ck_assert_int_eq(pairings(&ts, slow, fast, split, predicted, actual, 4), 2);
    test_sink_free(&ts);
    ModelProfile p = profile_of("784,32,512,512,10");
    double step = 64 * (p.total_flops + p.loss_flops);
    double own = 50 * step / 1e10, alone = 10 * step / 1e9, top = model_profile_fast_fraction(&p, split[0]) * step / 1e10;
    /* the helper leaves as its own epoch ends (a hair before: its last own step resumes
     * on its return) and is back a second after the slow agents' epochs */
    double off = own * (1 - 1e-12), back = alone + 1;
    const char *none[] = {helper_absence(off, back)};
    ck_assert_int_eq(run(none, 1, &ts), 0);
    ck_assert_int_eq(ts.pairings, 2);
    ck_assert_str_eq(sink_role_name(ts.agent_round_rows[0].role), "helper");
    double reactive = ts.last_t_end;
    /* the helper's processor after its return: what was left of its epoch, then both tops */
    ck_assert_msg(fabs(fmax(actual[0], actual[1]) - predicted[0]) < 1e-9 * predicted[0], "premise");
    test_sink_free(&ts);
    const char *ahead[] = {none[0], "method.predict=trace"};
    ck_assert_int_eq(run(ahead, 2, &ts), 0);
    ck_assert_int_eq(ts.pairings, 0);
    for (int i = 0; i < 3; i++) ck_assert_str_eq(sink_role_name(ts.agent_round_rows[i].role), "alone");
    /* alone, each slow agent trains its epoch; the all-reduce waits for the helper's return */
    assert_near(ts.agent_round_rows[1].compute_s, alone, "slow agent's epoch");
    ck_assert(alone < back);
    double proactive = ts.last_t_end;
    /* the same all-reduce after back in both: the reactive round is the 20 tops longer */
    assert_near(reactive - proactive, 20 * top + off * 1e-12, "reactive - proactive");
    test_sink_free(&ts);
    /* an absence the helper's slack absorbs: it leaves after its own epoch and is back
     * before the slow agents' last activations: predict = trace keeps it as helper */
    const char *short_absence[] = {helper_absence(own * 1.01, own * 1.02), "method.predict=trace"};
    ck_assert_int_eq(run(short_absence, 2, &ts), 0);
    ck_assert_int_eq(ts.pairings, 2);
    test_sink_free(&ts);
    test_scratch_unlink("shared", "availability.csv");
}
END_TEST

START_TEST(test_history_prediction_learns_a_departing_helper)
{
    /* round 0: the helper leaves mid-round (history knows nothing yet: it helps); round 1:
     * its estimate is 1 - w = 0.4 < 0.5, so it helps no one */
    const char *set[] = {helper_absence(0.5, 0.6), "method.predict=history", "method.history_weight=0.6",
                         "run.rounds=2"};
    TestSink ts;
    ck_assert_int_eq(run(set, 4, &ts), 0);
    int slow[8], fast[8], split[8];
    double predicted[8], actual[8];
    int rows = pairings(&ts, slow, fast, split, predicted, actual, 8);
    ck_assert_int_eq(rows, 2); /* round 0 only */
    ck_assert_int_eq(ts.pairings, 2);
    for (int i = 0; i < 3; i++) ck_assert_str_eq(sink_role_name(ts.agent_round_rows[i].role), "alone");
    test_sink_free(&ts);
    /* weight 0.4 leaves it at 0.6: it helps again */
    set[2] = "method.history_weight=0.4";
    ck_assert_int_eq(run(set, 4, &ts), 0);
    ck_assert_int_eq(ts.pairings, 4);
    test_sink_free(&ts);
    test_scratch_unlink("shared", "availability.csv");
}
END_TEST

START_TEST(test_shared_helper_drops_a_departed_offloader)
{
    /* Agent 2 leaves for good... not: it leaves after sending a few batches and is back long
     * after the helper is done; the helper drops its untrained batches (rounds.extra) and
     * writes its row then, while agent 1's batches are all trained. */
    TestSink ts;
    ck_assert_int_eq(run(NULL, 0, &ts), 0);
    int slow[4], fast[4], split[4];
    double predicted[4], actual[4];
    ck_assert_int_eq(pairings(&ts, slow, fast, split, predicted, actual, 4), 2);
    test_sink_free(&ts);
    ModelProfile p = profile_of("784,32,512,512,10");
    double step = 64 * (p.total_flops + p.loss_flops);
    double slow_step = model_profile_slow_fraction(&p, split[0]) * step / 1e9;
    double off = 3.5 * slow_step, back = 60; /* three batches sent */
    char text[256];
    snprintf(text, sizeof text, "agent,time,value\n0,0,1\n1,0,1\n2,0,1\n2,%.17g,0\n2,%.17g,1\n", off, back);
    const char *set[] = {test_availability_set("shared", text)};
    ck_assert_int_eq(run(set, 1, &ts), 0);
    ck_assert_int_eq(pairings(&ts, slow, fast, split, predicted, actual, 4), 2);
    ck_assert_msg(ts.round_rows[0].extra == 7, "%s", ts.text);
    for (int k = 0; k < 2; k++) ck_assert(actual[k] < back);
    ck_assert(ts.last_t_end > back + 6.5 * slow_step);
    test_sink_free(&ts);
    test_scratch_unlink("shared", "availability.csv");
}
END_TEST

START_TEST(test_battery_outage_leaves_the_helper_out)
{
    /* The helper's 1 J battery runs out in round 0 (booked at its end); it is offline for
     * the 0.5 s charging at 1 W takes to hold 0.5 J again, so round 1's rebalance leaves
     * it out and the slow agents train alone. */
    const char *set[] = {"agents.power_compute=10W", "agents.battery=1J",    "agents.charging=1W",
                         "agents.resume_charge=0.5J", "agents.slow.battery=0J", "agents.slow.power_compute=0W",
                         "agents.slow.charging=0W", "run.rounds=2"};
    TestSink ts;
    ck_assert_int_eq(run(set, 8, &ts), 0);
    ck_assert_int_eq(ts.pairings, 2); /* round 0's */
    for (int i = 0; i < 3; i++) ck_assert_str_eq(sink_role_name(ts.agent_round_rows[i].role), "alone");
    ModelProfile p = profile_of("784,32,512,512,10");
    double step = 64 * (p.total_flops + p.loss_flops);
    assert_near(ts.agent_round_rows[0].offline_s, 0.5, "helper's outage");
    assert_near(ts.agent_round_rows[1].compute_s, 10 * step / 1e9, "slow agent's epoch alone");
    test_sink_free(&ts);
}
END_TEST

static const char *churn_learn_trace =
    "agent,time,value\n0,0,1\n0,0.003,0\n0,0.005,1\n1,0,1\n2,0,1\n2,0.0005,0\n2,0.0008,1\n3,0,1\n4,0,1\n"
    "4,0.011,0\n4,0.013,1\n5,0,1\n"; /* rounds of about 2.7 ms */

START_TEST(test_churn_train_times_like_timing_and_repeats)
{
    static const char *predicts[] = {"method.predict=none", "method.predict=trace", "method.predict=history"};
    TestSink steady;
    ck_assert_int_eq(run_learning("run.mode=timing", &steady), 0);
    for (int k = 0; k < 3; k++) {
        const char *set[16];
        int n = 0;
        for (size_t w = 0; w < sizeof learn_set / sizeof *learn_set; w++) set[n++] = learn_set[w];
        set[n++] = test_availability_set("shared", churn_learn_trace);
        set[n++] = predicts[k];
        set[n++] = "run.mode=timing";
        TestSink timing, train, again;
        ck_assert_int_eq(run(set, n, &timing), 0);
        set[n - 1] = "run.mode=train";
        ck_assert_int_eq(run(set, n, &train), 0);
        ck_assert_int_eq(run(set, n, &again), 0);
        ck_assert_msg(timing.last_t_end > steady.last_t_end, "the churn matters: %g", timing.last_t_end);
        char *a = test_sink_timing_lines(&timing), *b = test_sink_timing_lines(&train);
        ck_assert_str_eq(a, b);
        ck_assert_str_eq(train.text, again.text);
        free(a);
        free(b);
        test_sink_free(&timing);
        test_sink_free(&train);
        test_sink_free(&again);
    }
    test_sink_free(&steady);
    test_scratch_unlink("shared", "availability.csv");
}
END_TEST

static Suite *comdml_shared_suite(void)
{
    Suite *s = suite_create("comdml_shared");
    TCase *tc = tcase_create("normal");
    tcase_add_test(tc, test_two_offloaders_share_one_helper);
    tcase_add_test(tc, test_train_mode_times_like_timing_mode);
    tcase_add_test(tc, test_runs_repeat_bitwise_and_learn);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_trace_prediction_avoids_a_departing_helper);
    tcase_add_test(tc, test_history_prediction_learns_a_departing_helper);
    tcase_add_test(tc, test_shared_helper_drops_a_departed_offloader);
    tcase_add_test(tc, test_battery_outage_leaves_the_helper_out);
    tcase_add_test(tc, test_churn_train_times_like_timing_and_repeats);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(comdml_shared_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
