/* check_layer_profile.c — measured compute profiles (models/layer_profile.h, [model]
 * profile): the reader's malformed files, each refused at its FILE:LINE; write then read
 * gives the same rows; model_time_step_at runs the training step (same gradient) and
 * reads the clock between every block; a hand-written profile gives closed-form step
 * times (an agent at 0.5x of a host whose blocks take a and b seconds steps in
 * 2 (a + b)) and ComDML's split fractions and pairing times from the measured seconds;
 * compute in FLOP/s, compute traces and device profiles are refused beside a profile, a
 * relative speed without one; runs.config writes the speeds back as 0.25x. */
#include "models/layer_profile.h"
#include "models/model.h"
#include "sim/run_params.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* MLP 8-4-3 at batch 2: fc1 144 + 272 FLOPs (its ReLU's 4 a sample each way), fc2 54 + 132
 * (the loss's 2 x 15 in the backward), head1 54 + 132. Blocks take a = 0.75 s and b = 0.25 s: a step is 1 s. */
static const char *profile_text = "# hetsim layer profile\n"
                                  "# host: a test\n"
                                  "# batch: 2\n"
                                  "layer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\n"
                                  "fc1,144,272,0.25,0.5,\n"
                                  "fc2,54,132,0.125,0.125,744\n"
                                  "head1,54,132,0.0625,0.0625,1488\n";

static ModelSpec small_spec(void)
{
    ModelSpec s = {.arch = MODEL_ARCH_MLP, .in_channels = 8, .in_height = 1, .in_width = 1, .classes = 3,
                   .n_sizes = 3, .sizes = {8, 4, 3}, .batch = 2};
    return s;
}

static char profile_path[64];

/* Writes text to the suite's profile file (its path in profile_path). */
static void put_profile(const char *text)
{
    FILE *f = fopen(profile_path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int parse(const char *text, LayerProfile *out, HsDiag *diag)
{
    ModelSpec s = small_spec();
    hs_diag_clear(diag);
    return layer_profile_parse("p.csv", text, strlen(text), &s, 2, out, diag);
}

START_TEST(test_reader_takes_the_hand_written_profile)
{
    LayerProfile p;
    HsDiag diag;
    ck_assert_msg(parse(profile_text, &p, &diag) == HS_OK, "%s", diag.message);
    ck_assert_int_eq(p.n_layers, 2);
    ck_assert_int_eq(layer_profile_rows(&p), 3);
    ck_assert_str_eq(p.name[2], "head1");
    ck_assert(p.fwd_s[0] == 0.25 && p.bwd_s[0] == 0.5 && p.bwd_flops[1] == 132);
    LayerTimes t;
    layer_profile_times(&p, &t);
    ck_assert(t.step_s == 1.0 && t.layer_s[0] == 0.75 && t.layer_s[1] == 0.25 && t.head_s[1] == 0.125);
    /* the slow side of split 1 runs fc1 and head1, the fast side fc2 */
    ck_assert(layer_times_slow_fraction(&t, 1) == 0.875);
    ck_assert(layer_times_fast_fraction(&t, 1) == 0.25);
    ck_assert(layer_times_slow_fraction(&t, 0) == 1.0 && layer_times_fast_fraction(&t, 0) == 0.0);
    /* CRLF line ends and blank lines are fine */
    const char *crlf = "# batch: 2\r\n\r\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\r\n"
                       "fc1,144,272,1,1,\r\nfc2,54,132,1,1,\r\nhead1,54,132,1,1,\r\n";
    ck_assert_msg(parse(crlf, &p, &diag) == HS_OK, "%s", diag.message);
}
END_TEST

/* Each malformed file, the line its error names and a phrase of the message. */
static const struct {
    const char *text, *where, *says;
} malformed[] = {
    {"", "p.csv: ", "no header"},
    {"# batch: 2\n", "p.csv:1:", "no header"},
    {"layer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\n", "p.csv:1:", "'# batch: N' line"},
    {"# batch: 3\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\n", "p.csv:1:", "measured at batch 3"},
    {"# batch: two\n", "p.csv:1:", "whole number"},
    {"# batch: 2\n# batch: 2\n", "p.csv:2:", "a second '# batch:'"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\n# batch: 2\n", "p.csv:3:", "a second '# batch:' line (the first is line 1)"},
    {"# batch: 2\nlayer,flops,fwd_s\n", "p.csv:2:", "expected the header"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc1,144,272,0.25,0.5,\n", "p.csv:3:",
     "the first missing is fc2"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc2,54,132,1,1,\n", "p.csv:3:",
     "layer 'fc2' where 'fc1' was expected"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc1,145,272,1,1,\n", "p.csv:3:",
     "fwd_flops of fc1 is 145, but the scenario's model has 144"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc1,144,272,0,1,\n", "p.csv:3:",
     "fwd_s of fc1: 0 must be > 0"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc1,144,272,1,-1,\n", "p.csv:3:",
     "must be > 0"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc1,144,272,1,inf,\n", "p.csv:3:",
     "not a finite number"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc1,144,272,1 s,1,\n", "p.csv:3:",
     "not a finite number"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc1,144,272,1,\n", "p.csv:3:",
     "missing flops_per_s"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc1,144,272,1,1,,7\n", "p.csv:3:",
     "more fields"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc1,144,272,1,1,fast\n", "p.csv:3:",
     "neither a number nor empty"},
    {"# batch: 2\nlayer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s\nfc1,144,272,1,1,\nfc2,54,132,1,1,\n"
     "head1,54,132,1,1,\nhead2,54,132,1,1,\n",
     "p.csv:6:", "more rows than"},
};

START_TEST(test_reader_refuses_malformed_files)
{
    LayerProfile p;
    HsDiag diag;
    const char *text = malformed[_i].text;
    ck_assert_int_eq(parse(text, &p, &diag), HS_E_INPUT);
    ck_assert_msg(strncmp(diag.message, malformed[_i].where, strlen(malformed[_i].where)) == 0 &&
                      strstr(diag.message, malformed[_i].says),
                  "case %d: '%s'", _i, diag.message);
    ck_assert_int_eq(p.n_layers, 0);
    /* a NUL byte inside */
    ModelSpec s = small_spec();
    hs_diag_clear(&diag);
    ck_assert_int_eq(layer_profile_parse("p.csv", "# batch: 2\0", 11, &s, 2, &p, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "NUL"), "%s", diag.message);
}
END_TEST

START_TEST(test_written_profile_reads_back)
{
    ModelSpec s = {.arch = MODEL_ARCH_CNN, .in_channels = 1, .in_height = 8, .in_width = 8, .classes = 4,
                   .conv_channels = {3, 5}, .kernel = 3, .hidden = 6, .batch = 5};
    LayerProfile p, q;
    ck_assert_int_eq(layer_profile_expect(&s, 5, &p), HS_OK);
    ck_assert_str_eq(p.name[0], "conv1");
    ck_assert_str_eq(p.name[3], "fc2");
    ck_assert_str_eq(p.name[6], "head3");
    for (int r = 0; r < layer_profile_rows(&p); r++) p.fwd_s[r] = 0.1 * (r + 1), p.bwd_s[r] = 1.0 / 3 + r;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    layer_profile_write(f, &p, "cpu\nwith a newline", "hetsim profile x.ini", "cnn", "openblas");
    fclose(f);
    ck_assert(strstr(text, "# host: cpu with a newline\n"));
    HsDiag diag;
    ck_assert_msg(layer_profile_parse("w.csv", text, size, &s, 5, &q, &diag) == HS_OK, "%s", diag.message);
    ck_assert_int_eq(q.n_layers, 4);
    for (int r = 0; r < layer_profile_rows(&p); r++) {
        ck_assert(q.fwd_s[r] == p.fwd_s[r] && q.bwd_s[r] == p.bwd_s[r]);
        ck_assert(q.fwd_flops[r] == p.fwd_flops[r] && q.bwd_flops[r] == p.bwd_flops[r]);
    }
    /* another batch is refused at its line */
    ck_assert_int_eq(layer_profile_parse("w.csv", text, size, &s, 6, &q, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "w.csv:6: measured at batch 5"));
    free(text);
}
END_TEST

static double tick(void *context)
{
    return (*(double *)context)++;
}

START_TEST(test_timed_step_is_the_training_step)
{
    ModelSpec s = {.arch = MODEL_ARCH_MLP, .in_channels = 6, .in_height = 1, .in_width = 1, .classes = 3,
                   .n_sizes = 4, .sizes = {6, 5, 4, 3}, .batch = 4};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    Model *m;
    ModelWorkspace *ws;
    ck_assert_int_eq(model_create(&s, rng, &m), HS_OK);
    ck_assert_int_eq(model_workspace_create(&s, &ws), HS_OK);
    float x[24];
    int y[4] = {0, 1, 2, 1};
    for (int i = 0; i < 24; i++) x[i] = (float)gsl_rng_uniform(rng);
    size_t n = model_param_count(m), blocks = model_block_param_count(m);
    float *g1 = calloc(n, sizeof(float)), *g2 = calloc(n, sizeof(float));
    double fwd[3], bwd[3], hf[3], hb[3], clock = 0;
    ck_assert_int_eq(model_grad_full_at(m, model_params(m), g1, ws, x, y, 4, NULL), HS_OK);
    ck_assert_int_eq(model_time_step_at(m, model_params(m), g2, ws, x, y, 4, tick, &clock, fwd, bwd, hf, hb), HS_OK);
    ck_assert(memcmp(g1, g2, blocks * sizeof(float)) == 0); /* the same step, bit for bit */
    /* one clock read before and one after every piece: 3 forwards, 3 backwards, 2 heads x 2 */
    ck_assert(clock == 11);
    for (int b = 0; b < 3; b++) ck_assert(fwd[b] == 1 && bwd[b] == 1);
    ck_assert(hf[0] == 0 && hb[0] == 0);
    for (int k = 1; k < 3; k++) ck_assert(hf[k] == 1 && hb[k] == 1);
    free(g1);
    free(g2);
    model_workspace_free(ws);
    model_free(m);
    gsl_rng_free(rng);
}
END_TEST

/* Two agents, 20 samples each (10 steps of batch 2), 0.5x and 1x of the profile's host. */
static const char *scenario_text = "[run]\nmethod = localsgd\nrounds = 1\nmode = timing\n"
                                   "[data]\ndataset = synthetic\nfeatures = 8\nclasses = 3\n"
                                   "[model]\nlayers = 8,4,3\nbatch = 2\nprofile = %s\n"
                                   "[method.localsgd]\nlocal_steps = epoch\n"
                                   "[agents]\ncount = 2\ncompute = 1x\nbandwidth = 1 GB/s\nlatency = 0 s\nsamples = 20\n"
                                   "[agents.half]\ncount = 1\ncompute = 0.5x\n";

static int run_profiled(const char *const *set, int n, TestSink *ts, HsDiag *diag)
{
    put_profile(profile_text);
    char text[1024];
    snprintf(text, sizeof text, scenario_text, profile_path);
    return test_run(text, set, n, ts, diag);
}

START_TEST(test_step_time_is_the_measured_time_over_the_speed)
{
    TestSink ts;
    HsDiag diag;
    ck_assert_msg(run_profiled(NULL, 0, &ts, &diag) == HS_OK, "%s", diag.message);
    /* [agents.half] is agent 1: 10 steps of 2 (0.75 + 0.25) s; agent 0: 10 steps of 1 s */
    ck_assert_int_eq(ts.n_agent_round_rows, 2);
    double half = ts.agent_round_rows[1].compute_s, whole = ts.agent_round_rows[0].compute_s;
    ck_assert_msg(fabs(half - 20.0) < 1e-12 * 20, "compute_s %.17g", half);
    ck_assert_msg(fabs(whole - 10.0) < 1e-12 * 10, "compute_s %.17g", whole);
    test_sink_free(&ts);
    /* a slower host: every time scales with the profile's seconds */
    const char *set[] = {"agents.half.compute=uniform(0.25x, 0.2500001x)"};
    ck_assert_msg(run_profiled(set, 1, &ts, &diag) == HS_OK, "%s", diag.message);
    ck_assert_msg(fabs(ts.agent_round_rows[1].compute_s - 40.0) < 1e-4, "%.17g", ts.agent_round_rows[1].compute_s);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_comdml_fractions_come_from_the_profile)
{
    /* the slow agent at 0.1x, the helper at 1x: split 1 leaves fc1 and head1 (0.875 of a
     * step) on the slow side and moves fc2 (0.25) to the helper; the slow side is the
     * bottleneck, so the pair ends after its 10 batches, the last transfer and the last
     * top batch (as check_comdml's FLOP-model case) */
    const char *set[] = {"run.method=comdml", "agents.half.compute=0.1x"};
    TestSink ts;
    HsDiag diag;
    ck_assert_msg(run_profiled(set, 2, &ts, &diag) == HS_OK, "%s", diag.message);
    const char *line = strstr(ts.text, "pairing ");
    ck_assert_ptr_nonnull(line);
    int round, slow, fast, split;
    double predicted, actual;
    ck_assert_int_eq(sscanf(line, "pairing %d %d %d %d %lf %lf", &round, &slow, &fast, &split, &predicted, &actual),
                     6);
    ck_assert_int_eq(slow, 1);
    ck_assert_int_eq(fast, 0);
    ck_assert_int_eq(split, 1);
    double slow_side = 10 * 0.875 / 0.1, transfer = 2 * (4 * 4.0 + 4) / 1e9, top = 0.25 / 1.0;
    ck_assert_msg(fabs(predicted - slow_side) < 1e-9 * slow_side, "predicted %.17g", predicted);
    ck_assert_msg(fabs(actual - (slow_side + transfer + top)) < 1e-9 * actual, "actual %.17g", actual);
    /* the FLOP model's fraction would differ: fc1 + head1 over the whole step */
    ModelSpec s = small_spec();
    ModelProfile p;
    model_profile(&s, &p);
    ck_assert(fabs(model_profile_slow_fraction(&p, 1) - 0.875) > 0.01);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_flops_and_relative_speeds_do_not_mix)
{
    TestSink ts;
    HsDiag diag;
    const char *flops[] = {"agents.compute=1 GFLOPS"};
    ck_assert_int_eq(run_profiled(flops, 1, &ts, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "is in FLOP/s, but [model] profile is set"), "%s", diag.message);
    const char *bare[] = {"agents.half.compute=0.5"};
    ck_assert_int_eq(run_profiled(bare, 1, &ts, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "[model] profile is set"), "%s", diag.message);
    const char *mixed[] = {"agents.compute=uniform(1x, 2 GFLOPS)"};
    ck_assert_int_eq(run_profiled(mixed, 1, &ts, &diag), HS_E_INPUT);
    const char *trace[] = {"agents.compute=trace(c.csv)"};
    ck_assert_int_eq(run_profiled(trace, 1, &ts, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "a compute trace holds FLOP/s"), "%s", diag.message);
    const char *device[] = {"agents.profile=devices.csv"};
    ck_assert_int_eq(run_profiled(device, 1, &ts, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "leave one of the two out"), "%s", diag.message);
    /* without a profile, 0.5x is refused */
    Scenario *sc = calloc(1, sizeof *sc);
    const char *plain = "[run]\nmethod = localsgd\nrounds = 1\nmode = timing\n[data]\ndataset = synthetic\n"
                        "[agents]\ncount = 2\ncompute = 0.5x\nbandwidth = 1 GB/s\n";
    ck_assert_int_eq(test_resolve(plain, NULL, 0, sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:9: [agents] compute: a speed relative to a profiling host (0.25x) needs "
                                       "[model] profile"),
                  "%s", diag.message);
    free(sc);
}
END_TEST

START_TEST(test_mismatched_profile_is_refused_at_its_line)
{
    TestSink ts;
    HsDiag diag;
    const char *batch[] = {"model.batch=4"};
    ck_assert_int_eq(run_profiled(batch, 1, &ts, &diag), HS_E_INPUT);
    char where[96];
    snprintf(where, sizeof where, "%s:3: measured at batch 2", profile_path);
    ck_assert_msg(strstr(diag.message, where), "%s", diag.message);
    const char *layers[] = {"model.layers=8,5,3"};
    ck_assert_int_eq(run_profiled(layers, 1, &ts, &diag), HS_E_INPUT);
    snprintf(where, sizeof where, "%s:5: fwd_flops of fc1", profile_path);
    ck_assert_msg(strstr(diag.message, where), "%s", diag.message);
    const char *deeper[] = {"model.layers=8,4,4,3"};
    ck_assert_int_eq(run_profiled(deeper, 1, &ts, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "fc2"), "%s", diag.message);
}
END_TEST

START_TEST(test_config_writes_relative_speeds_back)
{
    put_profile(profile_text);
    char text[1024];
    snprintf(text, sizeof text, scenario_text, profile_path);
    const char *set[] = {"agents.half.compute=choice(0.5x:0.5, 0.25x:0.5)", "agents.compute=lognormal(1x, 0.2)"};
    Scenario *sc = calloc(1, sizeof *sc), *back = calloc(1, sizeof *back);
    HsDiag diag;
    ck_assert_msg(test_resolve(text, set, 2, sc, &diag) == HS_OK, "%s", diag.message);
    ck_assert(sc->profile_rate > 0 && sc->profile_times.step_s == 1.0);
    char *config = scenario_config_string(sc);
    ck_assert_msg(strstr(config, "compute = lognormal(1x, 0.2)") && strstr(config, "compute = choice(0.5x:0.5, 0.25x:0.5)"),
                  "%s", config);
    ck_assert(strstr(config, "profile = "));
    ck_assert_msg(test_resolve(config, NULL, 0, back, &diag) == HS_OK, "%s", diag.message);
    char *again = scenario_config_string(back);
    ck_assert_str_eq(config, again);
    /* run_params: the speeds as numbers in x, not FLOP/s */
    RunParams params;
    ck_assert_int_eq(run_params_from_config(config, &params), HS_OK);
    int seen = 0;
    for (int i = 0; i < params.count; i++) {
        const SinkParam *r = &params.rows[i];
        if (strcmp(r->section, "agents.half") == 0 && strcmp(r->key, "compute.value2") == 0)
            ck_assert(r->value_num == 0.25 && strcmp(r->unit, "x") == 0), seen++;
        if (strcmp(r->section, "agents") == 0 && strcmp(r->key, "compute.median") == 0)
            ck_assert(r->value_num == 1 && strcmp(r->unit, "x") == 0), seen++;
        if (strcmp(r->section, "agents") == 0 && strcmp(r->key, "compute.sigma") == 0)
            ck_assert(r->value_num == 0.2 && strcmp(r->unit, "") == 0), seen++;
    }
    ck_assert_int_eq(seen, 3);
    run_params_free(&params);
    free(config);
    free(again);
    free(sc);
    free(back);
}
END_TEST

static Suite *layer_profile_suite(void)
{
    Suite *s = suite_create("layer_profile");
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, test_reader_takes_the_hand_written_profile);
    tcase_add_loop_test(tc, test_reader_refuses_malformed_files, 0, (int)(sizeof malformed / sizeof malformed[0]));
    tcase_add_test(tc, test_written_profile_reads_back);
    tcase_add_test(tc, test_timed_step_is_the_training_step);
    suite_add_tcase(s, tc);
    TCase *sim = tcase_create("scenario");
    tcase_add_test(sim, test_step_time_is_the_measured_time_over_the_speed);
    tcase_add_test(sim, test_comdml_fractions_come_from_the_profile);
    tcase_add_test(sim, test_flops_and_relative_speeds_do_not_mix);
    tcase_add_test(sim, test_mismatched_profile_is_refused_at_its_line);
    tcase_add_test(sim, test_config_writes_relative_speeds_back);
    suite_add_tcase(s, sim);
    return s;
}

int main(void)
{
    snprintf(profile_path, sizeof profile_path, "/tmp/hetsim-check-profile-%d.csv", (int)getpid());
    SRunner *runner = srunner_create(layer_profile_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    if (profile_path[0]) unlink(profile_path);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
