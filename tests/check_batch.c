/* check_batch.c — per-agent batch sizes ([agents] batch, [agents.NAME] batch): step
 * times and rounds against closed forms (sync, localsgd), sync's shared gradient weighed
 * by batch, equal per-agent batches giving exactly the rows of [model] batch, determinism,
 * train mode timing like timing mode, and the inputs refused with FILE:LINE. */
#include "sim/run.h"
#include "sim/train/trainer.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two agents on 960 samples each: agent 0 at 1 GFLOPS on batches of 32, agent 1 at
 * 2 GFLOPS on batches of 96; [model] batch 64 is the mean, so a global epoch is 15 steps. */
static const char *two_batches =
    "[run]\nmethod = sync\nrounds = 1\nmode = timing\n"
    "[model]\nlayers = 784,256,128,10\nbatch = 64\n"
    "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 0 s\nsamples = 960\nbatch = 32\n"
    "[agents.big]\ncount = 1\ncompute = 2 GFLOPS\nbatch = 96\n";

static int run_text(const char *text, const char *const *set, int n, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(text, set, n, ts, &diag);
    if (status != 0) fprintf(stderr, "%s\n", diag.message);
    return status;
}

/* FLOPs of one sample's step (forward, backward, loss) of the MLP 784-256-128-10. */
static double sample_flops(void)
{
    ModelSpec spec = {.arch = MODEL_ARCH_MLP, .n_sizes = 4, .sizes = {784, 256, 128, 10}, .classes = 10, .batch = 1};
    ModelProfile p;
    ck_assert_int_eq(model_profile(&spec, &p), 0);
    return p.total_flops + p.loss_flops;
}

static const double model_bytes = 4.0 * (784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);

START_TEST(test_sync_step_waits_for_the_slower_batch)
{
    TestSink ts;
    ck_assert_int_eq(run_text(two_batches, NULL, 0, &ts), 0);
    double f = sample_flops();
    double small = 32 * f / 1e9, big = 96 * f / 2e9; /* the big batch is the slower step */
    double reduce = 2.0 * 1 * (model_bytes / 2 / 10e6);
    double round = 15 * (big + reduce);
    ck_assert_msg(fabs(ts.last_t_end - round) < 1e-9 * round, "round %.17g expected %.17g", ts.last_t_end, round);
    ck_assert(fabs(ts.agent_round_rows[0].compute_s - 15 * small) < 1e-9);
    ck_assert(fabs(ts.agent_round_rows[1].compute_s - 15 * big) < 1e-9);
    ck_assert(fabs(ts.agent_round_rows[0].idle_s - 15 * (big - small)) < 1e-9);
    test_sink_free(&ts);
    /* a global epoch is ceil(mean samples / mean batch): batches 32 and 160 mean 96, 10 steps */
    const char *wider[] = {"agents.big.batch=160"};
    ck_assert_int_eq(run_text(two_batches, wider, 1, &ts), 0);
    round = 10 * (160 * f / 2e9 + reduce);
    ck_assert_msg(fabs(ts.last_t_end - round) < 1e-9 * round, "round %.17g expected %.17g", ts.last_t_end, round);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_localsgd_epochs_count_own_batches)
{
    /* an epoch is ceil(960 / b) steps of b: 30 steps of 32 at 1 GFLOPS, 10 of 96 at 2 */
    const char *set[] = {"run.method=localsgd"};
    TestSink ts;
    ck_assert_int_eq(run_text(two_batches, set, 1, &ts), 0);
    double f = sample_flops();
    double slow = 30 * 32 * f / 1e9, fast = 10 * 96 * f / 2e9;
    double round = slow + 2.0 * 1 * (model_bytes / 2 / 10e6);
    ck_assert_msg(fabs(ts.last_t_end - round) < 1e-9 * round, "round %.17g expected %.17g", ts.last_t_end, round);
    ck_assert(fabs(ts.agent_round_rows[0].compute_s - slow) < 1e-9);
    ck_assert(fabs(ts.agent_round_rows[1].compute_s - fast) < 1e-9);
    test_sink_free(&ts);
    /* local_steps = 5: five steps of each agent's own batch */
    const char *five[] = {"run.method=localsgd", "method.local_steps=5"};
    ck_assert_int_eq(run_text(two_batches, five, 2, &ts), 0);
    ck_assert(fabs(ts.agent_round_rows[0].compute_s - 15 * 32 * f / 1e9) < 1e-9);
    ck_assert(fabs(ts.agent_round_rows[1].compute_s - 15 * 96 * f / 2e9) < 1e-9);
    test_sink_free(&ts);
}
END_TEST

static const char *train_text =
    "[run]\nmethod = sync\nrounds = 3\nmode = train\nseed = 3\nthreads = 1\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 1600\ntest_samples = 400\n"
    "separation = 3\n"
    "[model]\nlayers = 16,32,4\nbatch = %d\nlr = 0.05\n"
    "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\nsamples = 300\n%s"
    "[agents.big]\ncount = %d\ncompute = 2 GFLOPS\nbatch = 48\n";

static char *train_scenario(int model_batch, const char *agents_batch, int big)
{
    static char text[1024];
    snprintf(text, sizeof text, train_text, model_batch, agents_batch, big);
    return text;
}

/* The rows after the run's own (whose config names the keys as written). */
static const char *rows_after_run(const TestSink *ts)
{
    const char *at = strstr(ts->text, "\nagent ");
    ck_assert_ptr_nonnull(at);
    return at;
}

/* A copy of rows without the metric rows (caller frees). */
static char *without_metrics(const char *rows)
{
    char *out = malloc(strlen(rows) + 1), *at = out;
    for (const char *line = rows; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, "metric ", 7) != 0 && strncmp(line, "\nmetric ", 8) != 0) {
            memcpy(at, line, len);
            at += len;
        }
        line += len;
    }
    *at = '\0';
    return out;
}

START_TEST(test_equal_agent_batches_are_model_batch_bitwise)
{
    const char *methods[] = {"run.method=sync", "run.method=localsgd", "run.method=dpsgd", "run.method=fedavg"};
    for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
        static const char *server = "[servers]\ncount = 1\ncompute = 10 GFLOPS\nbandwidth = 100 MB/s\n";
        TestSink global, own;
        char text[1024];
        snprintf(text, sizeof text, "%s%s", train_scenario(24, "", 0), server);
        ck_assert_int_eq(run_text(text, &methods[m], 1, &global), 0);
        snprintf(text, sizeof text, "%s%s", train_scenario(64, "batch = 24\n", 0), server);
        ck_assert_int_eq(run_text(text, &methods[m], 1, &own), 0);
        /* evaluation is in batches of [model] batch: the test loss is summed in other
         * pieces, so it is compared apart (to rounding); every other figure bitwise */
        char *a = without_metrics(rows_after_run(&global)), *b = without_metrics(rows_after_run(&own));
        ck_assert_msg(strcmp(a, b) == 0, "%s: rows differ", methods[m]);
        free(a);
        free(b);
        ck_assert(test_sink_last_accuracy(&global) == test_sink_last_accuracy(&own));
        test_sink_free(&own);
        /* the same [model] batch: the metrics too */
        snprintf(text, sizeof text, "%s%s", train_scenario(24, "batch = 24\n", 0), server);
        ck_assert_int_eq(run_text(text, &methods[m], 1, &own), 0);
        ck_assert_msg(strcmp(rows_after_run(&global), rows_after_run(&own)) == 0, "%s: rows differ", methods[m]);
        ck_assert_int_gt(global.metrics, 0);
        test_sink_free(&global);
        test_sink_free(&own);
    }
}
END_TEST

START_TEST(test_uneven_batches_deterministic_and_timed_like_timing_mode)
{
    const char *methods[] = {"run.method=sync", "run.method=localsgd", "run.method=dpsgd", "run.method=adpsgd",
                             "run.method=co2", "run.method=swift"};
    for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
        const char *text = train_scenario(16, "", 2);
        const char *timing[] = {methods[m], "run.mode=timing"};
        TestSink a, b, t;
        ck_assert_int_eq(run_text(text, timing, 1, &a), 0);
        ck_assert_int_eq(run_text(text, timing, 1, &b), 0);
        ck_assert_int_eq(run_text(text, timing, 2, &t), 0);
        ck_assert_msg(strcmp(a.text, b.text) == 0, "%s: two runs differ", methods[m]);
        ck_assert_int_eq(a.rounds, t.rounds);
        for (int r = 0; r < a.rounds; r++)
            ck_assert_msg(a.round_rows[r].t_end == t.round_rows[r].t_end && a.round_rows[r].bytes == t.round_rows[r].bytes,
                          "%s: round %d train %.17g timing %.17g", methods[m], r, a.round_rows[r].t_end,
                          t.round_rows[r].t_end);
        /* four separated classes, chance 0.25 (swift's wait-free mixing needs more than 3 rounds) */
        if (strcmp(methods[m], "run.method=swift") != 0)
            ck_assert_msg(test_sink_last_accuracy(&a) > 0.5, "%s: accuracy %g", methods[m], test_sink_last_accuracy(&a));
        test_sink_free(&a);
        test_sink_free(&b);
        test_sink_free(&t);
    }
}
END_TEST

/* sync's shared gradient is sum b_i g_i / sum b_i: replayed here from each agent's own
 * gradient on a second trainer drawing the same batches. */
START_TEST(test_sync_gradient_weighs_each_batch)
{
    Scenario sc;
    HsDiag diag;
    const char *sgd[] = {"model.optimizer=sgd"};
    ck_assert_int_eq(test_resolve(train_scenario(16, "", 2), sgd, 1, &sc, &diag), HS_OK);
    World world;
    ck_assert_int_eq(world_build(&sc, &world, &diag), HS_OK);
    ck_assert_int_eq(world.agents[0].batch, 16);
    ck_assert_int_eq(world.agents[3].batch, 48);
    Trainer *shared, *replay;
    ck_assert_int_eq(trainer_create(&sc, &world, &diag, &shared), HS_OK);
    ck_assert_int_eq(trainer_create(&sc, &world, &diag, &replay), HS_OK);
    ck_assert_int_eq(trainer_setup_shared(shared), HS_OK);
    ck_assert_int_eq(trainer_setup_shared(replay), HS_OK);
    size_t d = trainer_param_count(shared);
    float *before = malloc(d * sizeof *before), *grad = malloc(d * sizeof *grad);
    double *weighted = calloc(d, sizeof *weighted), *uniform = calloc(d, sizeof *uniform);
    memcpy(before, trainer_shared_params(shared), d * sizeof *before);
    ck_assert_int_eq(trainer_shared_gradients(shared), HS_OK);
    ck_assert_int_eq(trainer_shared_apply(shared), HS_OK);
    double total = 0;
    for (int i = 0; i < world.n; i++) total += world.agents[i].batch;
    for (int i = 0; i < world.n; i++) {
        ck_assert_int_eq(trainer_gradient_at(replay, i, trainer_shared_params(replay), grad), HS_OK);
        for (size_t j = 0; j < d; j++) {
            weighted[j] += world.agents[i].batch / total * grad[j];
            uniform[j] += grad[j] / world.n;
        }
    }
    const float *after = trainer_shared_params(shared);
    double off_weighted = 0, off_uniform = 0, scale = 0;
    for (size_t j = 0; j < d; j++) {
        double step = (before[j] - after[j]) / 0.05;
        off_weighted = fmax(off_weighted, fabs(step - weighted[j]));
        off_uniform = fmax(off_uniform, fabs(step - uniform[j]));
        scale = fmax(scale, fabs(weighted[j]));
    }
    ck_assert_msg(off_weighted < 1e-4 * scale, "weighted mean off by %g (scale %g)", off_weighted, scale);
    ck_assert_msg(off_uniform > 1e-2 * scale, "the uniform mean fits too (%g): the weights do nothing", off_uniform);
    free(before);
    free(grad);
    free(weighted);
    free(uniform);
    trainer_free(shared);
    trainer_free(replay);
    world_free(&world);
}
END_TEST

START_TEST(test_bad_batches_name_the_line)
{
    struct {
        const char *value, *expect;
    } bad[] = {
        {"0", "t.ini:15: "},
        {"2.5", "t.ini:15: "},
        {"65537", "t.ini:15: "},
        {"choice(16:0.5, 7.5:0.5)", "t.ini:15: "},
        {"uniform(0.01, 0.2)", "t.ini:15: [agents.big] batch: agent 2 drew"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "[run]\nmethod = sync\nrounds = 1\nmode = timing\n"
                 "[model]\nlayers = 784,10\nbatch = 16\n"
                 "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nsamples = 100\n"
                 "[agents.big]\ncount = 2\nbatch = %s\n", bad[k].value);
        TestSink ts;
        memset(&ts, 0, sizeof ts);
        HsDiag diag;
        ck_assert_int_eq(test_run(text, NULL, 0, &ts, &diag), HS_E_INPUT);
        ck_assert_msg(strncmp(diag.message, bad[k].expect, strlen(bad[k].expect)) == 0, "%s: %s", bad[k].value,
                      diag.message);
        test_sink_free(&ts);
    }
}
END_TEST

START_TEST(test_methods_that_cannot_weigh_unequal_batches_refuse_them)
{
    struct {
        const char *set[3];
        int n;
        const char *expect;
    } refused[] = {
        {{"run.method=comdml"}, 1, "t.ini:15: [agents.big] batch: method comdml: "},
        {{"run.method=byzsgdnm"}, 1, "t.ini:15: [agents.big] batch: method byzsgdnm: "},
        {{"run.method=sync", "method.prune=width"}, 2, "t.ini:15: [agents.big] batch: method sync: "},
        {{"run.method=sync", "method.freeze=progressive"}, 2, "t.ini:15: [agents.big] batch: method sync: "},
    };
    const char *text = "[run]\nmethod = sync\nrounds = 1\nmode = timing\n"
                       "[model]\nlayers = 784,32,10\nbatch = 16\n"
                       "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nsamples = 100\n"
                       "[agents.big]\ncount = 2\nbatch = 32\n";
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++) {
        Scenario sc;
        HsDiag diag;
        ck_assert_int_eq(test_resolve(text, refused[k].set, refused[k].n, &sc, &diag), HS_E_INPUT);
        ck_assert_msg(strncmp(diag.message, refused[k].expect, strlen(refused[k].expect)) == 0, "%s", diag.message);
    }
    /* one batch for every agent: byzsgdnm takes it (its lr_scaling's B); comdml does not */
    const char *equal[] = {"run.method=byzsgdnm", "agents.big.batch=16"};
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(text, equal, 2, &sc, &diag), HS_OK);
    ck_assert_int_eq(scenario_batches(&sc, NULL), SCENARIO_BATCH_MODEL);
    const char *other[] = {"run.method=comdml", "agents.big.batch=16", "agents.batch=32"};
    ck_assert_int_eq(test_resolve(text, other, 3, &sc, &diag), HS_E_INPUT);
    ck_assert_int_eq(test_resolve(text, other + 1, 2, &sc, &diag), HS_OK);
    ck_assert_int_eq(scenario_batches(&sc, NULL), SCENARIO_BATCH_UNEQUAL);
}
END_TEST

static Suite *batch_suite(void)
{
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("batch");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_sync_step_waits_for_the_slower_batch);
    tcase_add_test(tc, test_localsgd_epochs_count_own_batches);
    tcase_add_test(tc, test_equal_agent_batches_are_model_batch_bitwise);
    tcase_add_test(tc, test_uneven_batches_deterministic_and_timed_like_timing_mode);
    tcase_add_test(tc, test_sync_gradient_weighs_each_batch);
    tcase_add_test(tc, test_bad_batches_name_the_line);
    tcase_add_test(tc, test_methods_that_cannot_weigh_unequal_batches_refuse_them);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(batch_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
