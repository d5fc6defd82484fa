/* check_eager.c — eager-SGD (sim/methods/eager.c): the partial collectives' timing worked
 * out by hand, the late gradients carried (not dropped) and every gradient applied exactly
 * once, the stages' features (prune, freeze, DP-SGD) in both modes, determinism. */
#include "models/model_spec.h"
#include "sim/run.h"
#include "sim/train/trainer.h"
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

/* Conservation: every gradient computed is applied exactly once, in its own step's
 * reduction or carried into a later one. Plain SGD (no momentum, no decay) makes every
 * reduction x <- x - lr sum(carries) / N, so over a round
 *   x_after - x_before = -lr / N (carried in + computed - carried out).
 * With one reduction a round (samples = batch) every agent computes exactly one gradient a
 * round, at the round's starting model (all agents are idle at a round's start and none
 * restarts after the round's only reduction), so a second run opened alongside computes
 * the same gradients independently: each agent's next batch at x_before. The carries
 * (trainer buffer 1, eager.c's EAGER_CARRY) are read between rounds. Solo leaves two of
 * the three agents late every round, majority one: their gradients must come back, once. */
static const char *ledger =
    "[run]\nmethod = eager\nrounds = 6\nmode = train\nseed = 7\n"
    "[data]\ndataset = synthetic\nfeatures = 6\nclasses = 3\ntrain_samples = 24\ntest_samples = 30\n"
    "[model]\nlayers = 6,5,3\nbatch = 8\noptimizer = sgd\nlr = 0.5\n"
    "[agents]\ncount = 3\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\nsamples = 8\n"
    "[agents.medium]\ncount = 1\ncompute = 370 MFLOPS\n[agents.slow]\ncount = 1\ncompute = 150 MFLOPS\n";

static double carries_into(Trainer *t, int n, size_t d, double *sum)
{
    double norm = 0;
    for (size_t j = 0; j < d; j++) sum[j] = 0;
    for (int i = 0; i < n; i++) {
        const float *c = trainer_buffer(t, i, 1);
        for (size_t j = 0; j < d; j++) {
            sum[j] += c[j];
            norm += fabs(c[j]);
        }
    }
    return norm;
}

START_TEST(test_every_gradient_is_applied_once)
{
    static const char *collectives[] = {"method.collective=solo", "method.collective=majority"};
    for (int k = 0; k < 2; k++) {
        Scenario sc;
        HsDiag diag;
        ck_assert_msg(test_resolve(ledger, &collectives[k], 1, &sc, &diag) == 0, "%s", diag.message);
        TestSink ts, unused;
        Sim *run, *twin;
        ck_assert_msg(sim_open(&sc, test_sink_init(&ts), &diag, &run) == 0, "%s", diag.message);
        ck_assert_msg(sim_open(&sc, test_sink_init(&unused), &diag, &twin) == 0, "%s", diag.message);
        int n = run->world.n;
        size_t d = trainer_param_count(run->trainer);
        ck_assert_int_eq(n, 3);
        float *x0 = malloc(d * sizeof *x0), *before = malloc(d * sizeof *before), *g = malloc(d * sizeof *g);
        double *in = calloc(d, sizeof *in), *out = calloc(d, sizeof *out), *computed = calloc(d, sizeof *computed);
        double *round_sum = calloc(d, sizeof *round_sum);
        memcpy(x0, trainer_params(run->trainer, 0), d * sizeof *x0);
        const double lr = 0.5;
        double carried = 0, worst = 0, scale = 0;
        for (int r = 0; r < sc.rounds; r++) {
            memcpy(before, trainer_params(run->trainer, 0), d * sizeof *before);
            carries_into(run->trainer, n, d, in);
            for (size_t j = 0; j < d; j++) round_sum[j] = 0;
            trainer_begin_round(twin->trainer, r);
            for (int i = 0; i < n; i++) { /* agent i's next batch at the round's model */
                memcpy(trainer_params(twin->trainer, i), before, d * sizeof *before);
                memset(g, 0, d * sizeof *g); /* the auxiliary heads' entries are not written */
                ck_assert_int_eq(trainer_gradient(twin->trainer, i, g), 0);
                for (size_t j = 0; j < d; j++) round_sum[j] += g[j];
            }
            ck_assert_int_eq(sim_play_round(run, r), 0);
            carried += carries_into(run->trainer, n, d, out);
            const float *after = trainer_params(run->trainer, 0);
            for (size_t j = 0; j < d; j++) {
                computed[j] += round_sum[j];
                double expect = -lr / n * (in[j] + round_sum[j] - out[j]);
                double e = fabs((after[j] - before[j]) - expect);
                if (e > worst) worst = e;
                if (fabs(expect) > scale) scale = fabs(expect);
            }
        }
        ck_assert_msg(carried > 0, "%s: no gradient was ever carried", collectives[k]);
        ck_assert_msg(worst < 1e-5 * scale, "%s: a round's update is off by %g (largest %g)", collectives[k], worst,
                      scale);
        /* and over the run: what moved the model = everything computed but the last carries */
        const float *x = trainer_params(run->trainer, 0);
        worst = 0;
        for (size_t j = 0; j < d; j++) {
            double e = fabs((x[j] - x0[j]) + lr / n * (computed[j] - out[j]));
            if (e > worst) worst = e;
        }
        ck_assert_msg(worst < 1e-5 * sc.rounds * scale, "%s: the run's updates are off by %g", collectives[k], worst);
        free(x0);
        free(before);
        free(g);
        free(in);
        free(out);
        free(computed);
        free(round_sum);
        sim_close(run);
        sim_close(twin);
        test_sink_free(&ts);
        test_sink_free(&unused);
    }
}
END_TEST

/* The stages' features: each runs in both modes, deterministic, timed alike in train and
 * timing mode, and has its effect. prune = width: the slow agent's sub-model makes its
 * compute time and the run shorter; freeze = progressive (freeze_rounds = 1): the second
 * stage, block 2 alone, exchanges fewer bytes and costs less than the whole model;
 * [privacy] clip = sample: an epsilon is spent and the gradients differ (clipped, noised). */
static const char *features_base =
    "[run]\nmethod = eager\nrounds = 2\nmode = train\nseed = 4\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 1200\ntest_samples = 200\n"
    "[model]\nlayers = 16,32,4\nbatch = 16\nlr = 0.05\n"
    "[agents]\ncount = 6\ncompute = 1 GFLOPS\nbandwidth = 100 MB/s\nlatency = 10 us\n"
    "[agents.slow]\ncount = 1\ncompute = 150 MFLOPS\n";

START_TEST(test_features_run_in_both_modes)
{
    static const char *const features[][3] = {
        {"method.prune=width", NULL, NULL},
        {"method.freeze=progressive", "method.freeze_rounds=1", NULL},
        {"privacy.clip=sample", "privacy.threshold=1", "privacy.noise_multiplier=0.5"},
    };
    static const char *collectives[] = {"method.collective=solo", "method.collective=majority"};
    for (int c = 0; c < 2; c++) {
        TestSink plain;
        ck_assert_int_eq(run_text(features_base, &collectives[c], 1, &plain), 0);
        double plain_slow = plain.agent_round_rows[plain.n_agent_round_rows - 1].compute_s;
        for (int f = 0; f < 3; f++) {
            const char *set[5] = {collectives[c]};
            int n = 1;
            for (int k = 0; k < 3 && features[f][k]; k++) set[n++] = features[f][k];
            TestSink a, b, timing;
            ck_assert_int_eq(run_text(features_base, set, n, &a), 0);
            ck_assert_int_eq(run_text(features_base, set, n, &b), 0);
            ck_assert_str_eq(a.text, b.text);
            set[n] = "run.mode=timing";
            ck_assert_int_eq(run_text(features_base, set, n + 1, &timing), 0);
            ck_assert_int_eq(a.rounds, 2);
            ck_assert_int_eq(timing.rounds, 2);
            for (int r = 0; r < 2; r++) {
                ck_assert_msg(a.round_rows[r].t_end == timing.round_rows[r].t_end, "%s %s: round %d %.17g vs %.17g",
                              set[0], set[1], r, a.round_rows[r].t_end, timing.round_rows[r].t_end);
                ck_assert(a.round_rows[r].bytes == timing.round_rows[r].bytes);
                ck_assert(a.round_rows[r].extra == timing.round_rows[r].extra);
            }
            /* the sub-models learn (freeze's two rounds train block 1, then the output layer
             * alone, and DP-SGD's noise at batch 16 is heavy: two rounds say little there) */
            ck_assert_msg(f != 0 || test_sink_last_accuracy(&a) > 0.4, "%s %s: accuracy %.3f", set[0], set[1],
                          test_sink_last_accuracy(&a));
            ck_assert(strcmp(a.text, plain.text) != 0);
            double slow = a.agent_round_rows[a.n_agent_round_rows - 1].compute_s;
            if (f == 0) {
                ck_assert_msg(slow < 0.5 * plain_slow, "prune: the slow agent computes %g s, unpruned %g s", slow,
                              plain_slow);
                ck_assert(a.round_rows[1].t_end < plain.round_rows[1].t_end);
            } else if (f == 1) {
                ck_assert(a.round_rows[1].bytes < 0.5 * plain.round_rows[1].bytes);
                ck_assert(a.round_rows[1].t_end - a.round_rows[0].t_end <
                          plain.round_rows[1].t_end - plain.round_rows[0].t_end);
            } else {
                ck_assert(a.last_epsilon > 0 && isfinite(a.last_epsilon));
                ck_assert(a.round_rows[1].t_end == plain.round_rows[1].t_end); /* clipping costs no time */
            }
            test_sink_free(&a);
            test_sink_free(&b);
            test_sink_free(&timing);
        }
        test_sink_free(&plain);
    }
}
END_TEST

/* What stays refused is refused with its reason, before any row. */
START_TEST(test_update_clipping_is_refused)
{
    TestSink ts;
    HsDiag diag;
    const char *set[] = {"privacy.clip=update", "privacy.threshold=1", "privacy.noise_multiplier=0.5"};
    ck_assert_int_eq(test_run(features_base, set, 3, &ts, &diag), HS_E_INPUT);
    ck_assert_ptr_nonnull(strstr(diag.message, "a carry mixes gradients of several steps"));
}
END_TEST

static Suite *eager_suite(void)
{
    Suite *s = suite_create("eager");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_partial_collectives_hand_worked);
    tcase_add_test(tc, test_late_gradients_are_carried);
    tcase_add_test(tc, test_collective_key_is_checked);
    tcase_add_test(tc, test_every_gradient_is_applied_once);
    tcase_add_test(tc, test_features_run_in_both_modes);
    tcase_add_test(tc, test_update_clipping_is_refused);
    tcase_set_timeout(tc, 300);
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
