/* check_drift.c — [drift] (sim/stages/drift.h): FedProx's and SCAFFOLD's corrected local
 * steps on a small model against the same steps computed by hand from the plain
 * gradients, SCAFFOLD's control variates (option II) after a period and its server
 * update, SCAFFOLD's doubled messages in a FedAvg round's closed form, and the input
 * errors of the [drift] section. */
#include "sim/methods/method.h"
#include "sim/run.h"
#include "sim/stages/drift.h"
#include "sim/train/trainer.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *tiny =
    "[run]\nmethod = fedavg\nrounds = 2\nmode = train\nseed = 3\n"
    "[data]\ndataset = synthetic\nfeatures = 6\nclasses = 3\ntrain_samples = 240\ntest_samples = 60\n"
    "partition = dirichlet\nalpha = 0.3\n"
    "[model]\nlayers = 6,5,3\nbatch = 8\noptimizer = sgd\nlr = 0.1\n"
    "[method.fedavg]\nlocal_steps = 3\n"
    "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\n"
    "[server]\ncompute = 10 GFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\n"
    "[drift]\nmethod = scaffold\nmu = 0.5\n";

/* Two runs of the same scenario opened side by side: `a` takes the stage's corrected
 * steps, `b` gives the plain gradients of the same batches for the hand computation. */
typedef struct Pair {
    Scenario sc;
    TestSink sa, sb;
    Sim *a, *b;
    size_t d, blocks;
    float lr;
} Pair;

static void pair_open(Pair *p, const char *method)
{
    HsDiag diag;
    char set_method[64];
    snprintf(set_method, sizeof set_method, "drift.method=%s", method);
    const char *set[] = {set_method};
    ck_assert_msg(test_resolve(tiny, set, 1, &p->sc, &diag) == 0, "%s", diag.message);
    ck_assert_msg(sim_open(&p->sc, test_sink_init(&p->sa), &diag, &p->a) == 0, "%s", diag.message);
    ck_assert_msg(sim_open(&p->sc, test_sink_init(&p->sb), &diag, &p->b) == 0, "%s", diag.message);
    p->d = trainer_param_count(p->a->trainer);
    p->blocks = (size_t)p->a->profile.total_params;
    p->lr = 0.1f;
    ck_assert(p->blocks <= p->d);
}

static void pair_close(Pair *p)
{
    sim_close(p->a);
    sim_close(p->b);
    test_sink_free(&p->sa);
    test_sink_free(&p->sb);
}

/* By hand in b: y <- y - lr (g(y) + mu (y - anchor) - ci + c) on the blocks (anchor, c
 * NULL: no such term); the heads stay. */
static void hand_step(Pair *p, int agent, float mu, const float *anchor, const float *c, const float *ci)
{
    Trainer *t = p->b->trainer;
    float *g = malloc(p->d * sizeof *g);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(trainer_gradient(t, agent, g), HS_OK);
    float *y = trainer_params(t, agent);
    for (size_t j = 0; j < p->blocks; j++) {
        float step = g[j];
        if (anchor) step += mu * (y[j] - anchor[j]);
        if (c) step = step - ci[j] + c[j];
        y[j] -= p->lr * step;
    }
    free(g);
}

static void assert_close(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t j = 0; j < n; j++)
        ck_assert_msg(fabsf(got[j] - want[j]) <= 1e-6f * (1 + fabsf(want[j])), "%s[%zu]: %.9g vs %.9g", what, j,
                      (double)got[j], (double)want[j]);
}

START_TEST(test_fedprox_step_by_hand)
{
    Pair p;
    pair_open(&p, "fedprox");
    StageContext cx = sim_stage_context(p.a);
    Drift dr;
    ck_assert_int_eq(drift_init(&dr, &cx), HS_OK);
    ck_assert(drift_on(&dr) && drift_message_factor(&dr) == 1.0);
    int agent = 1;
    float *anchor = malloc(p.d * sizeof *anchor), *before = malloc(p.d * sizeof *before);
    memcpy(anchor, trainer_params(p.a->trainer, agent), p.d * sizeof *anchor);
    memcpy(before, anchor, p.d * sizeof *before);
    ck_assert(memcmp(anchor, trainer_params(p.b->trainer, agent), p.d * sizeof *anchor) == 0);
    ck_assert_int_eq(drift_begin(&dr, agent, anchor), HS_OK);
    /* the first step starts at the anchor (no pull), the next two are pulled back */
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(drift_step(&dr, NULL, agent), HS_OK);
        hand_step(&p, agent, 0.5f, anchor, NULL, NULL);
    }
    const float *got = trainer_params(p.a->trainer, agent), *want = trainer_params(p.b->trainer, agent);
    assert_close(got, want, p.blocks, "fedprox y");
    ck_assert(memcmp(got + p.blocks, before + p.blocks, (p.d - p.blocks) * sizeof *got) == 0);
    /* and the pull did something: plain steps from the same start end elsewhere */
    int differ = 0;
    {
        Pair q;
        pair_open(&q, "fedprox");
        for (int k = 0; k < 3; k++) hand_step(&q, agent, 0, NULL, NULL, NULL);
        const float *y = trainer_params(q.b->trainer, agent);
        for (size_t j = 0; j < p.blocks; j++) differ += fabsf(y[j] - got[j]) > 1e-7f;
        pair_close(&q);
    }
    ck_assert_int_gt(differ, 0);
    free(anchor);
    free(before);
    drift_free(&dr);
    pair_close(&p);
}
END_TEST

START_TEST(test_scaffold_step_and_control_variates_by_hand)
{
    Pair p;
    pair_open(&p, "scaffold");
    StageContext cx = sim_stage_context(p.a);
    Drift dr;
    ck_assert_int_eq(drift_init(&dr, &cx), HS_OK);
    ck_assert(drift_message_factor(&dr) == 2.0);
    int agent = 2, n = p.a->world.n, K = 3;
    size_t d = p.d;
    float *x = malloc(d * sizeof *x), *c = calloc(d, sizeof *c), *ci = calloc(d, sizeof *ci);
    memcpy(x, trainer_params(p.a->trainer, agent), d * sizeof *x);
    /* period 1: c = c_i = 0, plain steps */
    ck_assert_int_eq(drift_begin(&dr, agent, x), HS_OK);
    for (int k = 0; k < K; k++) {
        ck_assert_int_eq(drift_step(&dr, NULL, agent), HS_OK);
        hand_step(&p, agent, 0, NULL, c, ci);
    }
    assert_close(trainer_params(p.a->trainer, agent), trainer_params(p.b->trainer, agent), p.blocks, "period 1 y");
    ck_assert_int_eq(drift_end(&dr, agent), HS_OK);
    ck_assert_int_eq(drift_commit(&dr, &agent, 1), HS_OK);
    /* option II: c_i+ = c_i - c + (x - y) / (K lr); the server: c += (c_i+ - c_i) / N */
    const float *y = trainer_params(p.b->trainer, agent);
    for (size_t j = 0; j < d; j++) {
        float change = (float)((double)(x[j] - y[j]) / (K * (double)p.lr)) - c[j];
        ci[j] += change;
        c[j] += (1.0f / n) * change;
    }
    assert_close(dr.ci + (size_t)agent * d, ci, d, "c_i");
    assert_close(dr.c, c, d, "c");
    int moved = 0;
    for (size_t j = 0; j < p.blocks; j++) moved += ci[j] != 0;
    ck_assert_int_gt(moved, 0);
    /* period 2: every step is corrected by c - c_i */
    memcpy(x, trainer_params(p.a->trainer, agent), d * sizeof *x);
    ck_assert_int_eq(drift_begin(&dr, agent, x), HS_OK);
    for (int k = 0; k < K; k++) {
        ck_assert_int_eq(drift_step(&dr, NULL, agent), HS_OK);
        hand_step(&p, agent, 0, NULL, c, ci);
    }
    assert_close(trainer_params(p.a->trainer, agent), trainer_params(p.b->trainer, agent), p.blocks, "period 2 y");
    /* a report that is not aggregated changes neither c_i nor c */
    ck_assert_int_eq(drift_end(&dr, agent), HS_OK);
    assert_close(dr.ci + (size_t)agent * d, ci, d, "c_i before commit");
    assert_close(dr.c, c, d, "c before commit");
    free(x);
    free(c);
    free(ci);
    drift_free(&dr);
    pair_close(&p);
}
END_TEST

/* check_server.c's FedAvg closed form with SCAFFOLD: every download and upload carries
 * twice the model's bytes, and the server's processing of an upload is two axpys. */
START_TEST(test_scaffold_round_is_the_closed_form)
{
    const char *text =
        "[run]\nmethod = fedavg\nrounds = 1\nmode = timing\n"
        "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 64\n"
        "[model]\nlayers = 16,32,4\nbatch = 16\n"
        "[method]\nlocal_steps = 3\n"
        "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 GB/s\nlatency = 1 ms\n"
        "[server]\ncompute = 10 MFLOPS\nbandwidth = 1 MB/s\nlatency = 2 ms\n"
        "[drift]\nmethod = scaffold\n";
    HsDiag diag;
    double params = 16 * 32 + 32 + 32 * 4 + 4, bytes = 4 * params;
    Scenario sc;
    ck_assert_msg(test_resolve(text, NULL, 0, &sc, &diag) == 0, "%s", diag.message);
    TestSink ts, unused;
    RunOutcome outcome;
    ck_assert_msg(sim_run(&sc, test_sink_init(&ts), &diag, &outcome) == 0, "%s", diag.message);
    Sim *e;
    ck_assert_int_eq(sim_open(&sc, test_sink_init(&unused), &diag, &e), HS_OK);
    double step = sim_step_flops(e, 16) / 1e9;
    sim_close(e);
    test_sink_free(&unused);
    double message = 2 * bytes;
    double expected = 0.002 + 2 * message / 1e6 + 3 * step + 0.002 + 2 * message / 1e6 + 2 * (2 * 2 * params / 1e7);
    ck_assert_msg(fabs(ts.round_rows[0].t_end - expected) < 1e-12 * expected, "%.17g vs %.17g",
                  ts.round_rows[0].t_end, expected);
    ck_assert(ts.round_rows[0].bytes == 4 * message);
    test_sink_free(&ts);
    /* fedprox's messages are the model's */
    const char *prox[] = {"drift.method=fedprox"};
    ck_assert_msg(test_resolve(text, prox, 1, &sc, &diag) == 0, "%s", diag.message);
    ck_assert_msg(sim_run(&sc, test_sink_init(&ts), &diag, &outcome) == 0, "%s", diag.message);
    ck_assert(ts.round_rows[0].bytes == 4 * bytes);
    test_sink_free(&ts);
}
END_TEST

static void assert_refused(const char *const *set, int n, const char *message)
{
    HsDiag diag;
    Scenario sc;
    ck_assert_int_eq(test_resolve(tiny, set, n, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, message) != NULL, "%s\nwanted: %s", diag.message, message);
}

START_TEST(test_drift_input_errors)
{
    const char *negative[] = {"drift.method=fedprox", "drift.mu=-1"};
    assert_refused(negative, 2, "mu");
    const char *unknown[] = {"drift.method=feddyn"};
    assert_refused(unknown, 1, "feddyn");
    const char *sync[] = {"run.method=sync"};
    assert_refused(sync, 1, "no client drift to correct");
    const char *async[] = {"run.method=fedbuff"};
    assert_refused(async, 1, "SCAFFOLD's c is defined for synchronous rounds");
    const char *compressed[] = {"compression.scheme=topk"};
    assert_refused(compressed, 1, "scaffold is not available with [compression]");
    const char *dgc[] = {"drift.method=fedprox", "run.method=localsgd", "compression.scheme=topk",
                         "compression.feedback=dgc"};
    assert_refused(dgc, 4, "DGC takes its own local steps");
    /* the file's line of the key */
    HsDiag diag;
    Scenario sc;
    char *text = malloc(strlen(tiny) + 64);
    snprintf(text, strlen(tiny) + 64, "%s", tiny);
    char *mu = strstr(text, "mu = 0.5");
    memcpy(mu, "mu = -.5", 8);
    char *fedprox = strstr(text, "method = scaffold");
    memcpy(fedprox, "method = fedprox ", 17);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strncmp(diag.message, "t.ini:32: [drift] mu: ", 22) == 0, "%s", diag.message);
    free(text);
    /* without [drift], or method = none, nothing is corrected and mu is not written */
    const char *none[] = {"drift.method=none"};
    ck_assert_int_eq(test_resolve(tiny, none, 1, &sc, &diag), HS_OK);
    char *config = scenario_config_string(&sc);
    ck_assert_ptr_nonnull(strstr(config, "[drift]\nmethod = none\n"));
    ck_assert_ptr_null(strstr(config, "mu ="));
    free(config);
}
END_TEST

static Suite *drift_suite(void)
{
    Suite *s = suite_create("drift");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_fedprox_step_by_hand);
    tcase_add_test(tc, test_scaffold_step_and_control_variates_by_hand);
    tcase_add_test(tc, test_scaffold_round_is_the_closed_form);
    tcase_add_test(tc, test_drift_input_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(drift_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
