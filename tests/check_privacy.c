/* check_privacy.c — [privacy] (sim/stages/privacy.h): the RDP accountant against published
 * figures, the section's validation and round trip, per-update clipping and the
 * aggregate's noise on real models, and whole localsgd runs: deterministic, timed exactly
 * like timing mode, epsilon in the metrics as the accountant gives it, learning with
 * clipping alone; fedavg's clipping and noise. */
#include "models/model.h"
#include "sim/run.h"
#include "sim/stages/privacy.h"
#include "sim/train/trainer.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base =
    "[run]\nmethod = localsgd\nrounds = 4\nmode = train\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 1600\ntest_samples = 400\n"
    "separation = 3\n"
    "[model]\nlayers = 16,32,4\nbatch = 16\nlr = 0.1\n"
    "[method.localsgd]\nlocal_steps = 5\n"
    "[agents]\ncount = 6\ncompute = lognormal(1 GFLOPS, 0.7)\nbandwidth = 10 MB/s\nlatency = 1 ms\n"
    "[agents.small]\ncount = 2\nsamples = 100\n"
    "[privacy]\nclip = update\nthreshold = 0.5\nnoise_multiplier = 0.3\n";

static int run(const char *const *set, int n, TestSink *ts, HsDiag *diag)
{
    return test_run(base, set, n, ts, diag);
}

/* ---- the accountant ---- */

START_TEST(test_accountant_published_values)
{
    /* TensorFlow Privacy's rdp_accountant_test (integer orders): compute_rdp(q, sigma,
     * steps, order) and the moments-accountant example of Abadi et al. (CCS 2016, Sec. 3.1:
     * q = 0.01, sigma = 4, 10,000 steps, delta = 1e-5 gives epsilon of about 1.26) */
    ck_assert_double_eq_tol(10 * privacy_rdp_step(0.1, 2, 5), 0.07737, 1e-5);
    ck_assert_double_eq_tol(50 * privacy_rdp_step(0.01, 2.5, 5), 0.00218075, 1e-5);
    ck_assert_double_eq_tol(50 * privacy_rdp_step(0.01, 2.5, 50), 0.023846, 1e-5);
    ck_assert_double_eq_tol(50 * privacy_rdp_step(0.01, 2.5, 100), 167.416307, 1e-5);
    double rdp[31];
    for (int a = 2; a <= 32; a++) rdp[a - 2] = 10000 * privacy_rdp_step(0.01, 4, a);
    int order = 0;
    ck_assert_double_eq_tol(privacy_epsilon_from_rdp(rdp, 31, 1e-5, &order), 1.258575, 1e-6);
    ck_assert_int_eq(order, 20);
    /* all orders 2..256: the same optimum */
    ck_assert_double_eq_tol(privacy_epsilon(0.01, 4, 10000, 1e-5, &order), 1.258575, 1e-6);
    ck_assert_int_eq(order, 20);
    /* Bu, Dong, Long, Su (Harvard Data Science Review 2020, Fig. 4): DP-SGD on MNIST with
     * q = 256/60000, the moments accountant gives (1.34, 1e-5) after 20 epochs at sigma 1.3
     * and (8.68, 1e-5) after 70 epochs at sigma 0.7 (TF Privacy's fractional orders too;
     * integer orders only can only give a slightly larger epsilon) */
    double eps = privacy_epsilon(256.0 / 60000, 1.3, 4688, 1e-5, NULL);
    ck_assert_msg(eps >= 1.34 - 0.005 && eps <= 1.34 * 1.03, "sigma 1.3: %g", eps);
    eps = privacy_epsilon(256.0 / 60000, 0.7, 16407, 1e-5, NULL);
    ck_assert_msg(eps >= 8.68 - 0.005 && eps <= 8.68 * 1.04, "sigma 0.7: %g", eps);
    /* no sampling: the Gaussian mechanism's alpha / (2 sigma^2) (TF Privacy's test) */
    ck_assert_double_eq_tol(privacy_rdp_step(1, 10, 20), 0.1, 1e-15);
    /* R runs at q = 1 are one run at sigma / sqrt(R): 2 runs at sigma 1 = rdp alpha, best
     * integer order 4: 4 + log(1e5) / 3 */
    ck_assert_double_eq_tol(privacy_epsilon(1, 1, 2, 1e-5, &order), 4 + log(1e5) / 3, 1e-12);
    ck_assert_int_eq(order, 4);
    ck_assert_double_eq(privacy_rdp_step(0, 1, 5), 0);
    ck_assert(isinf(privacy_rdp_step(0.1, 0, 5)));
    ck_assert(isinf(privacy_epsilon(0.1, 0, 10, 1e-5, NULL)));
    /* more steps, more epsilon; more noise, less */
    ck_assert(privacy_epsilon(0.01, 1.1, 2000, 1e-5, NULL) < privacy_epsilon(0.01, 1.1, 4000, 1e-5, NULL));
    ck_assert(privacy_epsilon(0.01, 2, 4000, 1e-5, NULL) < privacy_epsilon(0.01, 1.1, 4000, 1e-5, NULL));
    /* a heavy, huge-order sum stays finite in log space */
    ck_assert(isfinite(privacy_rdp_step(0.5, 0.3, 256)));
}
END_TEST

/* ---- the section ---- */

START_TEST(test_section_validation_and_round_trip)
{
    Scenario sc, back;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(base, NULL, 0, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.privacy.clip, PRIVACY_CLIP_UPDATE);
    ck_assert_double_eq(sc.privacy.threshold, 0.5);
    ck_assert_double_eq(sc.privacy.delta, 1e-5);
    char *config = scenario_config_string(&sc);
    ck_assert_ptr_nonnull(strstr(config, "[privacy]\nclip = update\nthreshold = 0.5\nnoise_multiplier = 0.3\ndelta = 1e-05\n"));
    ck_assert_int_eq(test_resolve(config, NULL, 0, &back, &diag), HS_OK);
    ck_assert(memcmp(&back.privacy, &sc.privacy, sizeof sc.privacy) == 0 || back.privacy.line != sc.privacy.line);
    ck_assert_double_eq(back.privacy.noise_multiplier, sc.privacy.noise_multiplier);
    free(config);
    /* a method that refuses it (sim/scenario/features.h): an error at the section's header */
    const char *token[] = {"run.method=token"};
    ck_assert_int_eq(test_resolve(base, token, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:26: [privacy]") == diag.message &&
                      strstr(diag.message, "clip = update: not with method token: nothing is combined"),
                  "%s", diag.message);
    /* clip = none there is fine, and its keys are reset */
    const char *none[] = {"run.method=sync", "privacy.clip=none"};
    ck_assert_int_eq(test_resolve(base, none, 2, &sc, &diag), HS_OK);
    ck_assert_double_eq(sc.privacy.threshold, 1);
    ck_assert_double_eq(sc.privacy.noise_multiplier, 0);
    config = scenario_config_string(&sc);
    ck_assert_ptr_nonnull(strstr(config, "[privacy]\nclip = none\n"));
    ck_assert_ptr_null(strstr(config, "threshold"));
    free(config);
    /* with compression */
    const char *topk[] = {"compression.scheme=topk"};
    ck_assert_int_eq(test_resolve(base, topk, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "cannot be combined with [compression]") != NULL, "%s", diag.message);
    /* clip is required; bounds */
    ck_assert_int_eq(test_resolve("[run]\nmethod = localsgd\nrounds = 1\n[agents]\ncount = 2\ncompute = 1 GFLOPS\n"
                             "bandwidth = 1 MB/s\n[privacy]\nthreshold = 1\n", NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "clip") != NULL, "%s", diag.message);
    const char *bad[][1] = {{"privacy.delta=1"}, {"privacy.delta=0"}, {"privacy.threshold=0"},
                            {"privacy.noise_multiplier=-1"}, {"privacy.clip=both"}, {"privacy.treshold=1"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(test_resolve(base, bad[i], 1, &sc, &diag), HS_E_INPUT);
        ck_assert_msg(strstr(diag.message, bad[i][0]) != NULL, "%s", diag.message);
    }
}
END_TEST

/* ---- clipping and noise on real models ---- */

START_TEST(test_update_clipping_and_noise)
{
    Scenario sc;
    HsDiag diag;
    const char *set[] = {"privacy.noise_multiplier=2"};
    ck_assert_int_eq(test_resolve(base, set, 1, &sc, &diag), HS_OK);
    World w;
    ck_assert_int_eq(world_build(&sc, &w, &diag), HS_OK);
    Trainer *t;
    ck_assert_int_eq(trainer_create(&sc, &w, &diag, &t), HS_OK);
    ck_assert_int_eq(trainer_setup_local(t, 0), HS_OK);
    Privacy *p;
    ck_assert_int_eq(privacy_create(&sc, &w, t, &p), HS_OK);
    ck_assert_ptr_nonnull(p);
    const int n = w.n, members[] = {0, 1, 2, 3, 4, 5, 6, 7};
    const size_t d = trainer_param_count(t);
    float *start = malloc(d * sizeof *start), *mean = calloc(d, sizeof *mean);
    memcpy(start, trainer_params(t, 0), d * sizeof *start);
    ck_assert_int_eq(privacy_period_begin(p, t, members, n), HS_OK);
    double total = 0, largest = 0;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 20; k++) ck_assert_int_eq(privacy_local_step(p, t, i), HS_OK);
        ck_assert_int_eq(privacy_client_done(p, t, i), HS_OK);
        const float *x = trainer_params(t, i);
        double s2 = 0;
        for (size_t j = 0; j < d; j++) s2 += ((double)x[j] - start[j]) * ((double)x[j] - start[j]);
        /* 20 steps at lr 0.1 move far more than 0.5: every update is clipped to 0.5 */
        ck_assert_double_eq_tol(sqrt(s2), 0.5, 1e-5);
        total += w.agents[i].samples;
        if (w.agents[i].samples > largest) largest = w.agents[i].samples;
        for (size_t j = 0; j < d; j++) mean[j] += (float)(w.agents[i].samples * ((double)x[j] - start[j]));
    }
    /* a period whose updates stay within the threshold changes nothing, bit for bit */
    Scenario wide = sc;
    wide.privacy.threshold = 1e9;
    Privacy *loose;
    ck_assert_int_eq(privacy_create(&wide, &w, t, &loose), HS_OK);
    float *before = malloc(d * sizeof *before);
    memcpy(before, trainer_params(t, 0), d * sizeof *before);
    trainer_params(t, 0)[0] = 0.75f; /* pretend the period started elsewhere */
    ck_assert_int_eq(privacy_period_begin(loose, t, members, 1), HS_OK);
    trainer_params(t, 0)[0] = before[0];
    ck_assert_int_eq(privacy_client_done(loose, t, 0), HS_OK);
    ck_assert_mem_eq(trainer_params(t, 0), before, d * sizeof *before);
    privacy_free(loose);
    free(before);
    ck_assert_int_eq(privacy_average(p, t, members, n, 1, 3, 1), HS_OK);
    /* every member holds start + mean update + the same noise, of std sigma C w_max */
    double s2 = 0;
    for (size_t j = 0; j < d; j++) {
        double z = trainer_params(t, 0)[j] - start[j] - mean[j] / total;
        s2 += z * z;
    }
    double want = 2 * 0.5 * largest / total;
    ck_assert_double_eq_tol(sqrt(s2 / d), want, 0.05 * want);
    for (int i = 1; i < n; i++) ck_assert_mem_eq(trainer_params(t, i), trainer_params(t, 0), d * sizeof(float));
    /* one run of the client-level mechanism so far */
    ck_assert_double_eq_tol(privacy_spent(p), privacy_epsilon(1, 2, 1, 1e-5, NULL), 1e-12);
    ck_assert(isnan(privacy_spent(NULL)));
    privacy_free(p);
    trainer_free(t);
    world_free(&w);
    free(start), free(mean);
}
END_TEST

/* ---- whole runs ---- */

/* The last epsilon of a run's metrics. */
static double last_epsilon(const TestSink *ts)
{
    return ts->last_epsilon;
}

START_TEST(test_runs_are_deterministic_and_timed_like_timing_mode)
{
    const char *clips[] = {"privacy.clip=none", "privacy.clip=sample", "privacy.clip=update"};
    TestSink plain;
    HsDiag diag;
    const char *none[] = {"privacy.clip=none"};
    ck_assert_int_eq(run(none, 1, &plain, &diag), HS_OK);
    for (int c = 0; c < 3; c++) {
        const char *set[] = {clips[c], "run.mode=timing"};
        TestSink a, b, t;
        ck_assert_msg(run(set, 1, &a, &diag) == HS_OK, "%s", diag.message);
        ck_assert_int_eq(run(set, 1, &b, &diag), HS_OK);
        ck_assert_str_eq(a.text, b.text);
        ck_assert_int_eq(run(set, 2, &t, &diag), HS_OK);
        /* clipping and noise cost no virtual time: the clock of a run without them */
        ck_assert_int_eq(a.rounds, plain.rounds);
        for (int r = 0; r < a.rounds; r++) {
            ck_assert(a.round_rows[r].t_end == t.round_rows[r].t_end);
            ck_assert(a.round_rows[r].t_end == plain.round_rows[r].t_end);
            ck_assert(a.round_rows[r].bytes == plain.round_rows[r].bytes);
        }
        /* epsilon only with clipping, the same in timing mode (no arithmetic needed) */
        ck_assert(!isnan(a.last_epsilon) == (c > 0));
        ck_assert(!isnan(t.last_epsilon) == (c > 0));
        if (c > 0) ck_assert(last_epsilon(&a) == last_epsilon(&t) && last_epsilon(&a) > 0);
        test_sink_free(&a), test_sink_free(&b), test_sink_free(&t);
    }
    test_sink_free(&plain);
}
END_TEST

/* Every method whose gradient goes through the local-step stage (local_step_gradient)
 * counts its DP-SGD steps in timing mode too: the same epsilon as train mode (sync,
 * dpsgd, byzsgdnm and eager once skipped the stage without a trainer and said 0). */
START_TEST(test_every_gradient_method_counts_steps_in_timing_mode)
{
    const char *methods[] = {"run.method=sync", "run.method=dpsgd", "run.method=adpsgd", "run.method=byzsgdnm",
                             "run.method=token", "run.method=eager", "run.method=rog"};
    HsDiag diag;
    for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
        const char *train[] = {"privacy.clip=sample", methods[m]};
        const char *timing[] = {"privacy.clip=sample", methods[m], "run.mode=timing"};
        TestSink a, t;
        ck_assert_msg(run(train, 2, &a, &diag) == HS_OK, "%s: %s", methods[m], diag.message);
        ck_assert_msg(run(timing, 3, &t, &diag) == HS_OK, "%s: %s", methods[m], diag.message);
        ck_assert_msg(last_epsilon(&a) > 0 && last_epsilon(&a) == last_epsilon(&t), "%s: epsilon %g in train mode, %g in timing mode",
                      methods[m], last_epsilon(&a), last_epsilon(&t));
        test_sink_free(&a), test_sink_free(&t);
    }
}
END_TEST

START_TEST(test_metrics_epsilon_is_the_accountants)
{
    HsDiag diag;
    TestSink ts;
    /* update: 4 rounds of ceil(mean samples / batch) steps, averaged every 5 */
    ck_assert_int_eq(run(NULL, 0, &ts, &diag), HS_OK);
    Scenario sc;
    ck_assert_int_eq(test_resolve(base, NULL, 0, &sc, &diag), HS_OK);
    World w;
    ck_assert_int_eq(world_build(&sc, &w, &diag), HS_OK);
    double mean = 0;
    for (int i = 0; i < w.n; i++) mean += w.agents[i].samples;
    int steps = (int)ceil(mean / w.n / 16), periods = 4 * ((steps + 4) / 5);
    ck_assert_double_eq_tol(last_epsilon(&ts), privacy_epsilon(1, 0.3, periods, 1e-5, NULL), 1e-9);
    test_sink_free(&ts);
    /* sample: the small agents (100 samples, q = 16/100) take as many steps as the others
     * (a round is a global epoch) at a larger rate: theirs is the epsilon */
    const char *sample[] = {"privacy.clip=sample"};
    ck_assert_int_eq(run(sample, 1, &ts, &diag), HS_OK);
    ck_assert_double_eq_tol(last_epsilon(&ts), privacy_epsilon(0.16, 0.3, 4 * steps, 1e-5, NULL), 1e-9);
    test_sink_free(&ts);
    /* no noise: no guarantee */
    const char *noiseless[] = {"privacy.noise_multiplier=0"};
    ck_assert_int_eq(run(noiseless, 1, &ts, &diag), HS_OK);
    ck_assert(isinf(last_epsilon(&ts)));
    test_sink_free(&ts);
    world_free(&w);
}
END_TEST

START_TEST(test_clipped_runs_learn)
{
    /* clipping alone (no noise) with a generous threshold keeps localsgd learning; both
     * clips are different arithmetic from the unclipped run */
    const char *clips[][2] = {{"privacy.clip=sample", "privacy.threshold=5"}, {"privacy.clip=update", "privacy.threshold=5"}};
    TestSink plain;
    HsDiag diag;
    const char *none[] = {"privacy.clip=none"};
    ck_assert_int_eq(run(none, 1, &plain, &diag), HS_OK);
    for (int c = 0; c < 2; c++) {
        const char *set[] = {clips[c][0], clips[c][1], "privacy.noise_multiplier=0"};
        TestSink ts;
        ck_assert_msg(run(set, 3, &ts, &diag) == HS_OK, "%s", diag.message);
        double accuracy = test_sink_last_accuracy(&ts);
        ck_assert_msg(accuracy > 0.6, "%s reached only %.3f", clips[c][0], accuracy);
        ck_assert_str_ne(ts.text, plain.text);
        test_sink_free(&ts);
    }
    test_sink_free(&plain);
}
END_TEST

/* fedavg ([server], half the clients a round): with clip = update, no noise and a
 * threshold no update reaches, exactly the plain run; the timing never changes; epsilon
 * counts one client-level run per round; clipped runs still learn (4 classes: chance is
 * 0.25, the plain run reaches 0.64) and differ from plain. */
START_TEST(test_fedavg_is_private_too)
{
    static const char *const fedavg[] = {"run.method=fedavg", "method.fedavg.local_steps=5",
                                         "method.fedavg.participation=0.5"};
    char text[2048];
    snprintf(text, sizeof text, "%s[server]\ncompute = 10 GFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\n", base);
    const char *cases[][3] = {{"privacy.clip=none", "privacy.threshold=1", "privacy.noise_multiplier=0"},
                              {"privacy.clip=update", "privacy.threshold=1e6", "privacy.noise_multiplier=0"},
                              {"privacy.clip=update", "privacy.threshold=5", "privacy.noise_multiplier=0"},
                              {"privacy.clip=sample", "privacy.threshold=5", "privacy.noise_multiplier=0"},
                              {"privacy.clip=update", "privacy.threshold=0.5", "privacy.noise_multiplier=0.3"}};
    TestSink ts[5];
    HsDiag diag;
    for (int c = 0; c < 5; c++) {
        const char *set[6] = {fedavg[0], fedavg[1], fedavg[2], cases[c][0], cases[c][1], cases[c][2]};
        Scenario sc;
        ck_assert_msg(test_resolve(text, set, 6, &sc, &diag) == HS_OK, "%s", diag.message);
        RunOutcome out;
        ck_assert_msg(sim_run(&sc, test_sink_init(&ts[c]), &diag, &out) == HS_OK, "%s", diag.message);
        ck_assert_int_eq(ts[c].rounds, 4);
        for (int r = 0; r < 4; r++) ck_assert(ts[c].round_rows[r].t_end == ts[0].round_rows[r].t_end);
    }
    ck_assert(test_sink_last_accuracy(&ts[1]) == test_sink_last_accuracy(&ts[0]));
    ck_assert(isinf(last_epsilon(&ts[1])));
    for (int c = 2; c < 4; c++) {
        ck_assert_msg(test_sink_last_accuracy(&ts[c]) > 0.5, "case %d reached %.3f", c, test_sink_last_accuracy(&ts[c]));
        ck_assert_str_ne(ts[c].text, ts[0].text);
    }
    ck_assert_double_eq_tol(last_epsilon(&ts[4]), privacy_epsilon(1, 0.3, 4, 1e-5, NULL), 1e-9);
    ck_assert(test_sink_last_accuracy(&ts[4]) != test_sink_last_accuracy(&ts[0]));
    for (int c = 0; c < 5; c++) test_sink_free(&ts[c]);
}
END_TEST

static Suite *privacy_suite(void)
{
    Suite *s = suite_create("privacy");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_accountant_published_values);
    tcase_add_test(tc, test_section_validation_and_round_trip);
    tcase_add_test(tc, test_update_clipping_and_noise);
    tcase_add_test(tc, test_runs_are_deterministic_and_timed_like_timing_mode);
    tcase_add_test(tc, test_every_gradient_method_counts_steps_in_timing_mode);
    tcase_add_test(tc, test_metrics_epsilon_is_the_accountants);
    tcase_add_test(tc, test_clipped_runs_learn);
    tcase_add_test(tc, test_fedavg_is_private_too);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(privacy_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
