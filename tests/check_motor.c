/* check_motor.c — MOTOR (sim/methods/motor.c): one topology, its gossip periods and its
 * rounds worked by hand under max-min sharing, the keep ratio of a slow agent, the graph
 * rebuilt every `rebuild` rounds as the link rates change, learning, determinism,
 * train = timing, and its input errors ([topology] among them: MOTOR builds its own graph).
 * Unstable links: a pair's steps under drop replayed from the senders' loss streams, the
 * bytes of retransmit, and train = timing, determinism and learning under both modes. */
#include "models/model_spec.h"
#include "models/model_width.h"
#include "sim/kernel/rng.h"
#include "sim/run.h"
#include "sim/stages/prune.h"
#include "tests/test_scenario.h"
#include "tests/test_files.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int run_text(const char *text, const char *const *overrides, int n, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(text, overrides, n, ts, &diag);
    if (status != 0) fprintf(stderr, "%s\n", diag.message);
    return status;
}

static ModelSpec mlp_spec(int batch)
{
    ModelSpec spec = {.arch = MODEL_ARCH_MLP, .n_sizes = 3, .classes = 4, .batch = batch};
    spec.sizes[0] = 16;
    spec.sizes[1] = 32;
    spec.sizes[2] = 4;
    return spec;
}

static double step_flops(const ModelSpec *spec, double keep)
{
    ModelSpec sub;
    ModelProfile p;
    ck_assert_int_eq(model_width_spec(spec, keep, &sub), 0);
    ck_assert_int_eq(model_profile(&sub, &p), 0);
    return model_profile_step_flops(&p, spec->batch);
}

/* The 16-32-4 MLP's model: 4 x (16x32 + 32 + 32x4 + 4) bytes. */
static const double model_bytes = 4.0 * (16 * 32 + 32 + 32 * 4 + 4);

/* Three agents of 1 GFLOPS (a step lasts u), 192 samples of batch 64: 3 steps a round.
 * Two agents' links carry a model in 0.1 u alone (bandwidth B), the third's in 2.5 u
 * (0.04 B); no latency. */
static char *three_links(double *u, const char *extra_method)
{
    ModelSpec spec = mlp_spec(64);
    *u = step_flops(&spec, 1) / 1e9;
    double fast = model_bytes / (0.1 * *u);
    char *text = malloc(2048);
    snprintf(text, 2048,
             "[run]\nmethod = motor\nrounds = 2\nmode = timing\n"
             "[method]\nmax_degree = 1\nmax_period = 4\n%s"
             "[model]\nlayers = 16,32,4\nbatch = 64\n"
             "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\n"
             "[agents]\ncount = 3\ncompute = 1 GFLOPS\nbandwidth = %.17g B/s\nlatency = 0 s\nsamples = 192\n"
             "[agents.far]\ncount = 1\nbandwidth = %.17g B/s\n",
             extra_method, fast, 0.04 * fast);
    return text;
}

/* The graph: the fast pair F1-F2 first (max_degree 1 then stops every agent), then the
 * fastest link joining the far agent S, S-F1 (rate 0.04 B; ties go to the lower index):
 * the path S - F1 - F2, 2 links. Periods: F1-F2 ceil(0.1 u / u) = 1, S-F1
 * ceil(2.5 u / u) = 3, so S-F1 gossips at global steps 0, 3, 6, ...
 * Round 0, in u:
 *   t = 0: every agent computes (to 1); F1->F2, F2->F1, F1->S, S->F1 start. S's links
 *     (0.04 B) bound F1->S and S->F1; F1->F2 and F2->F1 get the 0.96 B left on F1's
 *     uplink and downlink: they end at 0.1/0.96, F1->S and S->F1 at 2.5.
 *   F2 ends step 0 at 1 and starts step 1 (sends to F1, 1 -> 1 + 0.1/0.96; computes to 2).
 *   F1 and S end step 0 at 2.5. Step 1 (S-F1 idle): F1 sends to F2 (2.5 -> 2.6), computes
 *     to 3.5; S computes alone 2.5 -> 3.5, then step 2, 3.5 -> 4.5: S is done at 4.5.
 *   F2 ends step 1 at 2.6 (F1's model), step 2: sends (2.6 -> 2.7), computes to 3.6.
 *   F1 ends step 1 at 3.5, step 2: sends (3.5 -> 3.6), computes to 4.5: done at 4.5.
 *   F2 ends step 2 at 3.6. The round ends at 4.5.
 * Round 1 is global steps 3, 4, 5 (3 mod 3 = 0: S-F1 gossips at the first again), the
 * same: it ends at 9. Bytes: 4 models at step 0, 2 at steps 1 and 2: 8 a round.
 * rounds.extra: 2 links built in round 0, none changed in round 1. */
START_TEST(test_rounds_hand_worked)
{
    double u;
    char *text = three_links(&u, "");
    TestSink ts;
    ck_assert_int_eq(run_text(text, NULL, 0, &ts), 0);
    ck_assert_int_eq(ts.rounds, 2);
    double ends[] = {4.5, 9.0}, extras[] = {2, 0};
    for (int r = 0; r < 2; r++) {
        double expected = ends[r] * u;
        ck_assert_msg(fabs(ts.round_rows[r].t_end - expected) < 1e-9 * expected, "round %d: %.17g vs %.17g", r,
                      ts.round_rows[r].t_end, expected);
        ck_assert_msg(fabs(ts.round_rows[r].bytes - 8 * model_bytes) < 1e-6, "round %d bytes %.17g", r,
                      ts.round_rows[r].bytes);
        ck_assert_msg(ts.round_rows[r].extra == extras[r], "round %d extra %g", r, ts.round_rows[r].extra);
    }
    test_sink_free(&ts);
    /* max_period = 1: S-F1 every step, each of the 3 steps waits for S's 2.5 u transfers: 7.5 u */
    const char *every[] = {"method.max_period=1"};
    ck_assert_int_eq(run_text(text, every, 1, &ts), 0);
    ck_assert_msg(fabs(ts.round_rows[0].t_end - 7.5 * u) < 1e-9 * u, "every step %.17g vs %.17g", ts.round_rows[0].t_end,
                  7.5 * u);
    test_sink_free(&ts);
    free(text);
}
END_TEST

/* An agent four times slower than the median keeps the widest sub-model whose step costs
 * a quarter of the full step (prune_target = makespan): its compute per round is then
 * 3 x F(keep) / 250 MFLOPS, about 3 u; every other agent 3 u exactly. */
START_TEST(test_slow_agent_is_pruned)
{
    double u;
    char *text = three_links(&u, "");
    const char *slow[] = {"agents.far.compute=250 MFLOPS"};
    TestSink ts;
    ck_assert_int_eq(run_text(text, slow, 1, &ts), 0);
    ModelSpec spec = mlp_spec(64);
    ModelProfile full;
    ck_assert_int_eq(model_profile(&spec, &full), 0);
    double f1 = step_flops(&spec, 1), keep = prune_makespan_keep(&spec, &full, 64, f1 / 250e6, f1 / 1e9, 0.0625);
    ck_assert(keep < 0.5 && keep > 0.0625);
    double pruned = 3 * step_flops(&spec, keep) / 250e6;
    ck_assert(pruned <= 3 * u * (1 + 1e-12));
    ck_assert(pruned < 2.9 * u);
    int full_rows = 0, pruned_rows = 0;
    for (int k = 0; k < ts.n_agent_round_rows; k++) {
        double c = ts.agent_round_rows[k].compute_s;
        full_rows += fabs(c - 3 * u) < 1e-9 * u;
        pruned_rows += fabs(c - pruned) < 1e-9 * u;
    }
    ck_assert_int_eq(ts.n_agent_round_rows, 3);
    ck_assert_int_eq(full_rows, 2);
    ck_assert_int_eq(pruned_rows, 1);
    test_sink_free(&ts);
    free(text);
}
END_TEST

/* The rates change during round 0: agent 0 becomes the far one and agent 2 fast. Round 0's
 * graph (built at t = 0) is 2-0-1; from then on the fast pair is 1-2 and the far agent 0
 * joins at 0-1: 1 link removed (0-2), 1 added (1-2). rebuild = 1 sees it in round 1,
 * rebuild = 2 in round 2 (round 1 keeps the old graph). */
START_TEST(test_rebuild_every_k_rounds)
{
    char trace[256], text[2048];
    snprintf(trace, sizeof trace, "agent,time,value\n0,0,1 MB/s\n0,0.001,10 kB/s\n1,0,1 MB/s\n2,0,10 kB/s\n2,0.001,1 MB/s\n");
    const char *path = test_scratch_file("motor", "rates.csv", trace);
    snprintf(text, sizeof text,
             "[run]\nmethod = motor\nrounds = 3\nmode = timing\n[method]\nmax_degree = 1\n"
             "[model]\nlayers = 16,32,4\nbatch = 64\n[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\n"
             "[agents]\ncount = 3\ncompute = 10 MFLOPS\nbandwidth = trace(%s)\nlatency = 1 ms\nsamples = 192\n",
             path);
    static const char *const sets[][1] = {{"method.rebuild=1"}, {"method.rebuild=2"}};
    double extras[2][3] = {{2, 2, 0}, {2, 0, 2}};
    for (int k = 0; k < 2; k++) {
        TestSink ts;
        ck_assert_int_eq(run_text(text, sets[k], 1, &ts), 0);
        ck_assert_int_eq(ts.rounds, 3);
        for (int r = 0; r < 3; r++)
            ck_assert_msg(ts.round_rows[r].extra == extras[k][r], "rebuild %d round %d: %g", k + 1, r,
                          ts.round_rows[r].extra);
        test_sink_free(&ts);
    }
    unlink(path);
    rmdir(test_scratch_dir("motor"));
}
END_TEST

/* Two agents of 1 GFLOPS (a step lasts u), 192 samples of batch 64 (3 steps a round), one
 * link carrying a model in c = u / 2 each way (period ceil(c / u) = 1: every step), no
 * latency, loss 0.2 at both ends (q = 0.36), rto = 2 u. Each agent's message of step g
 * leaves at its start of g and, u >= c, is off the wire before its next one, so nothing
 * shares a link. drop: agent i ends step g at
 *   max(start_i(g) + u, start_j(g) + c + lost_ji(g) rto),
 * lost_ji(g) the draw of j's stream for its message of step g; a round starts both at the
 * last one's end. Every message goes once: 6 models a round. retransmit: each lost
 * attempt puts one more model on the wire. */
START_TEST(test_loss_on_a_pair_replayed)
{
    ModelSpec spec = mlp_spec(64);
    double u = step_flops(&spec, 1) / 1e9, c = 0.5 * u, rto = 2 * u, q = 1 - 0.8 * 0.8;
    char text[1024];
    snprintf(text, sizeof text,
             "[run]\nmethod = motor\nrounds = 8\nmode = timing\n"
             "[method]\nmax_degree = 1\nmax_period = 4\n"
             "[model]\nlayers = 16,32,4\nbatch = 64\n"
             "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\n"
             "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = %.17g B/s\nlatency = 0 s\nsamples = 192\n"
             "loss = 0.2\n[network]\nrto = %.17g s\n",
             model_bytes / c, rto);
    const char *drop[] = {"network.loss_mode=drop"};
    TestSink ts;
    ck_assert_int_eq(run_text(text, drop, 1, &ts), 0);
    ck_assert_int_eq(ts.rounds, 8);
    gsl_rng *stream[2] = {rng_stream_create(1, 0, RNG_PURPOSE_LOSS), rng_stream_create(1, 1, RNG_PURPOSE_LOSS)};
    double t = 0;
    int total = 0;
    for (int r = 0; r < 8; r++) {
        double start[2] = {t, t};
        int lost = 0;
        for (int g = 0; g < 3; g++) {
            int l[2]; /* l[j]: j's message of this step lost */
            for (int j = 0; j < 2; j++) lost += l[j] = gsl_rng_uniform(stream[j]) < q;
            double end[2];
            for (int i = 0; i < 2; i++) {
                double heard = start[1 - i] + c + l[1 - i] * rto;
                end[i] = start[i] + u > heard ? start[i] + u : heard;
            }
            start[0] = end[0];
            start[1] = end[1];
        }
        t = start[0] > start[1] ? start[0] : start[1];
        ck_assert_msg(fabs(ts.round_rows[r].t_end - t) < 1e-9 * t, "drop round %d: %.17g, expected %.17g", r,
                      ts.round_rows[r].t_end, t);
        ck_assert_int_eq(ts.round_rows[r].lost, lost);
        ck_assert(fabs(ts.round_rows[r].bytes - 6 * model_bytes) < 1e-6);
        total += lost;
    }
    ck_assert_int_gt(total, 3);
    gsl_rng_free(stream[0]);
    gsl_rng_free(stream[1]);
    test_sink_free(&ts);
    /* retransmit: one more model on the wire per lost attempt, and no round shorter than
     * the lossless one (3 u: compute-bound) */
    ck_assert_int_eq(run_text(text, NULL, 0, &ts), 0);
    total = 0;
    for (int r = 0; r < 8; r++) {
        ck_assert(fabs(ts.round_rows[r].bytes - (6 + ts.round_rows[r].lost) * model_bytes) < 1e-6);
        ck_assert(ts.round_rows[r].t_end - ts.round_rows[r].t_start >= 3 * u * (1 - 1e-12));
        total += ts.round_rows[r].lost;
    }
    ck_assert_int_gt(total, 3);
    test_sink_free(&ts);
}
END_TEST

/* Two classes per agent (shards), heterogeneous compute and links, two agents 5x slower
 * than the others' median train small sub-models: MOTOR learns; the same rows
 * twice; timing mode times it exactly as train mode does. */
static const char *learning =
    "[run]\nmethod = motor\nrounds = 6\nmode = train\nseed = 3\n"
    "[method]\nmax_degree = 2\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 1600\ntest_samples = 400\n"
    "separation = 3\npartition = shards\nshards = 2\n"
    "[model]\nlayers = 16,32,4\nbatch = 16\nlr = 0.05\n"
    "[agents]\ncount = 6\ncompute = lognormal(20 MFLOPS, 0.8)\nbandwidth = uniform(1 Mbit/s, 50 Mbit/s)\n"
    "latency = 5 ms\n[agents.slow]\ncount = 2\ncompute = 4 MFLOPS\n";

START_TEST(test_learns_deterministic_train_equals_timing)
{
    TestSink a, b, t;
    ck_assert_int_eq(run_text(learning, NULL, 0, &a), 0);
    ck_assert_int_eq(run_text(learning, NULL, 0, &b), 0);
    ck_assert_str_eq(a.text, b.text);
    double accuracy = test_sink_last_accuracy(&a);
    ck_assert_msg(accuracy > 0.55, "accuracy %.3f", accuracy); /* chance: 0.25; measured 0.6325 */
    const char *timing[] = {"run.mode=timing"};
    ck_assert_int_eq(run_text(learning, timing, 1, &t), 0);
    ck_assert_int_eq(a.rounds, t.rounds);
    for (int r = 0; r < a.rounds; r++) {
        ck_assert(a.round_rows[r].t_end == t.round_rows[r].t_end);
        ck_assert(a.round_rows[r].bytes == t.round_rows[r].bytes);
        ck_assert(a.round_rows[r].idle_s == t.round_rows[r].idle_s);
        ck_assert(a.round_rows[r].extra == t.round_rows[r].extra);
    }
    test_sink_free(&a);
    test_sink_free(&b);
    test_sink_free(&t);
}
END_TEST

/* Under loss (retransmit and drop): it still learns, the same rows twice, and timing
 * mode times it exactly as train mode does. */
START_TEST(test_loss_train_equals_timing)
{
    for (int drop = 0; drop < 2; drop++) {
        const char *set[] = {"agents.loss=0.1", "network.rto=50 ms",
                             drop ? "network.loss_mode=drop" : "network.loss_mode=retransmit", "run.mode=timing"};
        TestSink a, b, t;
        ck_assert_int_eq(run_text(learning, set, 3, &a), 0);
        ck_assert_int_eq(run_text(learning, set, 3, &b), 0);
        ck_assert_str_eq(a.text, b.text);
        double accuracy = test_sink_last_accuracy(&a);
        ck_assert_msg(accuracy > 0.55, "drop %d: accuracy %.3f", drop, accuracy);
        ck_assert_int_eq(run_text(learning, set, 4, &t), 0);
        ck_assert_int_eq(a.rounds, t.rounds);
        int lost = 0;
        for (int r = 0; r < a.rounds; r++) {
            ck_assert(a.round_rows[r].t_end == t.round_rows[r].t_end);
            ck_assert(a.round_rows[r].bytes == t.round_rows[r].bytes);
            ck_assert(a.round_rows[r].idle_s == t.round_rows[r].idle_s);
            ck_assert(a.round_rows[r].lost == t.round_rows[r].lost);
            lost += a.round_rows[r].lost;
        }
        ck_assert_int_gt(lost, 0);
        test_sink_free(&a);
        test_sink_free(&b);
        test_sink_free(&t);
    }
}
END_TEST

static void expect_refused(const char *const *set, int n, const char *where, const char *fragment)
{
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(learning, set, n, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, where) == diag.message && strstr(diag.message, fragment) != NULL, "%s",
                  diag.message);
}

START_TEST(test_bad_input)
{
    const char *period[] = {"method.max_period=0"};
    expect_refused(period, 1, "--set method.max_period=0", "max_period");
    const char *long_period[] = {"method.max_period=17"};
    expect_refused(long_period, 1, "--set method.max_period=17", "max_period");
    const char *rebuild[] = {"method.rebuild=0"};
    expect_refused(rebuild, 1, "--set method.rebuild=0", "rebuild");
    const char *target[] = {"method.prune_target=0"};
    expect_refused(target, 1, "--set method.prune_target=0", "prune_target");
    const char *prune[] = {"method.prune=width"};
    expect_refused(prune, 1, "--set method.prune=width", "always prunes");
    const char *compress[] = {"compression.scheme=topk", "compression.ratio=0.25"};
    expect_refused(compress, 2, "--set compression.scheme=topk", "sub-models");
    /* [topology], which MOTOR would ignore (it builds its own graph), by an override */
    const char *graph[] = {"topology.graph=full"};
    expect_refused(graph, 1, "--set topology.graph=full", "builds its own graph");
}
END_TEST

/* [topology] in the file: refused at its key's line, or its header's when empty; kept
 * when the method is not the file's own: [sweep] varies run.method (the base point and
 * the sweep's motor point) or --set run.method=motor runs a dpsgd file. */
START_TEST(test_topology_refused_unless_methods_are_swept)
{
    char text[2048];
    Scenario sc;
    HsDiag diag;
    /* learning's text has 28 lines (its last ends with a newline): the header is line 29 */
    snprintf(text, sizeof text, "%s[topology]\ngraph = ring\n", learning);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:30: [topology] graph: method motor builds its own graph") == diag.message,
                  "%s", diag.message);
    snprintf(text, sizeof text, "%s[topology]\n", learning);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:29: [topology]: method motor builds") == diag.message, "%s",
                  diag.message);
    snprintf(text, sizeof text, "%s[topology]\ngraph = ring\n[sweep]\nrun.method = dpsgd, motor\n", learning);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_OK);
    /* the sweep's own points: the method from [sweep] */
    snprintf(text, sizeof text, "%s[topology]\ngraph = ring\n", learning);
    IniDoc doc;
    ck_assert_int_eq(inidoc_load_string("t.ini", text, &doc, &diag), HS_OK);
    ck_assert_int_eq(inidoc_set(&doc, "run", "method", "motor", "t.ini", 31, INIDOC_FROM_SWEEP), HS_OK);
    ck_assert_int_eq(scenario_resolve(&doc, &sc, &diag), HS_OK);
    inidoc_free(&doc);
    /* a dpsgd file run as motor */
    char dpsgd[2048];
    snprintf(dpsgd, sizeof dpsgd, "%s", text);
    char *m = strstr(dpsgd, "method = motor");
    ck_assert_ptr_nonnull(m);
    memcpy(m, "method = dpsgd", 14);
    const char *as_motor[] = {"run.method=motor"};
    ck_assert_int_eq(test_resolve(dpsgd, as_motor, 1, &sc, &diag), HS_OK);
    /* ... but not as the file's own method */
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_E_INPUT);
}
END_TEST

static Suite *motor_suite(void)
{
    Suite *s = suite_create("motor");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_rounds_hand_worked);
    tcase_add_test(tc, test_slow_agent_is_pruned);
    tcase_add_test(tc, test_rebuild_every_k_rounds);
    tcase_add_test(tc, test_learns_deterministic_train_equals_timing);
    tcase_add_test(tc, test_loss_on_a_pair_replayed);
    tcase_add_test(tc, test_loss_train_equals_timing);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_topology_refused_unless_methods_are_swept);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(motor_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
