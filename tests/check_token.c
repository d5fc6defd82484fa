/* check_token.c — the random walks of the `token` method (sim/world/walk.h) on a small graph by
 * hand: transition probabilities of the simple, Metropolis and self-repellent kernels, the
 * visit measure; the walks' long-run frequencies; SRRW's effect in kind (visit
 * frequencies closer to the target, with less spread, as alpha grows); and the method:
 * the round time in closed form, determinism, train mode = timing mode timings, several
 * tokens, and its keys. */
#include "sim/run.h"
#include "sim/kernel/rng.h"
#include "sim/world/walk.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kite: a triangle 0-1-2 with a tail 2-3. Degrees 2, 2, 3, 1. */
static int kite_offsets[] = {0, 2, 4, 7, 8};
static int kite_adj[] = {1, 2, 0, 2, 0, 1, 3, 2};
static const Topology kite = {.n = 4, .offsets = kite_offsets, .adj = kite_adj};

static double probability(const Walk *w, int i, int j)
{
    int targets[8];
    double probs[8], total = 0, p = 0;
    int count = walk_transitions(w, i, targets, probs);
    for (int k = 0; k < count; k++) {
        ck_assert(probs[k] > 0);
        if (k > 0) ck_assert_int_lt(targets[k - 1], targets[k]);
        total += probs[k];
        if (targets[k] == j) p = probs[k];
    }
    ck_assert(fabs(total - 1) < 1e-12);
    return p;
}

START_TEST(test_kernels_by_hand)
{
    Walk w;
    /* simple: 1/d_i to each neighbour, mu_i = d_i / 8 */
    ck_assert_int_eq(walk_init(&w, &kite, WALK_SIMPLE, WALK_SIMPLE, 0, 1), 0);
    ck_assert(fabs(probability(&w, 2, 0) - 1.0 / 3) < 1e-15 && fabs(probability(&w, 2, 3) - 1.0 / 3) < 1e-15);
    ck_assert(probability(&w, 3, 2) == 1 && probability(&w, 3, 3) == 0);
    ck_assert(w.mu[0] == 0.25 && w.mu[2] == 0.375 && w.mu[3] == 0.125);
    walk_free(&w);
    /* metropolis: min(1/d_i, 1/d_j), the rest stays; mu uniform */
    ck_assert_int_eq(walk_init(&w, &kite, WALK_METROPOLIS, WALK_SIMPLE, 0, 1), 0);
    ck_assert(fabs(probability(&w, 0, 1) - 0.5) < 1e-15);
    ck_assert(fabs(probability(&w, 0, 2) - 1.0 / 3) < 1e-15);
    ck_assert(fabs(probability(&w, 0, 0) - 1.0 / 6) < 1e-15);
    ck_assert(fabs(probability(&w, 2, 3) - 1.0 / 3) < 1e-15 && probability(&w, 2, 2) == 0);
    ck_assert(fabs(probability(&w, 3, 2) - 1.0 / 3) < 1e-15 && fabs(probability(&w, 3, 3) - 2.0 / 3) < 1e-15);
    ck_assert(w.mu[0] == 0.25 && w.mu[3] == 0.25);
    /* detailed balance with the uniform target: P_ij = P_ji */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) ck_assert(fabs(probability(&w, i, j) - probability(&w, j, i)) < 1e-15);
    walk_free(&w);
    /* srrw on metropolis, alpha = 1: at x = mu it is the base chain */
    ck_assert_int_eq(walk_init(&w, &kite, WALK_SRRW, WALK_METROPOLIS, 1, 1), 0);
    ck_assert(fabs(probability(&w, 0, 0) - 1.0 / 6) < 1e-12 && fabs(probability(&w, 0, 1) - 0.5) < 1e-12);
    /* visits 0, 1, 0 with a = 1: x = (mu + 2 delta_0 + delta_1) / 4 */
    walk_visit(&w, 0);
    walk_visit(&w, 1);
    walk_visit(&w, 0);
    const double x[4] = {2.25 / 4, 1.25 / 4, 0.25 / 4, 0.25 / 4};
    for (int j = 0; j < 4; j++) ck_assert_msg(fabs(walk_measure(&w, j) - x[j]) < 1e-15, "x_%d = %g", j, walk_measure(&w, j));
    ck_assert(w.counts[0] == 2 && w.counts[1] == 1 && w.visits == 3);
    /* K_0j ∝ P_0j (x_j / mu_j)^-1: 1/6 / 2.25, 1/2 / 1.25, 1/3 / 0.25 (over 4 mu = 1) */
    double k00 = (1.0 / 6) / 2.25, k01 = 0.5 / 1.25, k02 = (1.0 / 3) / 0.25, sum = k00 + k01 + k02;
    ck_assert(fabs(probability(&w, 0, 0) - k00 / sum) < 1e-12);
    ck_assert(fabs(probability(&w, 0, 1) - k01 / sum) < 1e-12);
    ck_assert(fabs(probability(&w, 0, 2) - k02 / sum) < 1e-12);
    /* the TV distance of the raw frequencies (2/3, 1/3, 0, 0) to the uniform mu */
    ck_assert(fabs(walk_tv_distance(&w) - 0.5 * (5.0 / 12 + 1.0 / 12 + 0.25 + 0.25)) < 1e-15);
    walk_free(&w);
    /* the hand example of the kernel: x = (0.4, 0.3, 0.2, 0.1) gives K_0. = 1/9, 4/9, 4/9 */
    ck_assert_int_eq(walk_init(&w, &kite, WALK_SRRW, WALK_METROPOLIS, 1, 1), 0);
    const double target[4] = {0.4, 0.3, 0.2, 0.1};
    for (int j = 0; j < 4; j++) w.weight[j] = target[j];
    ck_assert(fabs(probability(&w, 0, 0) - 1.0 / 9) < 1e-12);
    ck_assert(fabs(probability(&w, 0, 1) - 4.0 / 9) < 1e-12 && fabs(probability(&w, 0, 2) - 4.0 / 9) < 1e-12);
    /* alpha = 2 squares the repellence: from 3, P = (2/3 stay, 1/3 to 2), x_3/mu = 0.4,
     * x_2/mu = 0.8: weights 2/3 / 0.16 and 1/3 / 0.64 */
    w.alpha = 2;
    double stay = (2.0 / 3) / 0.16, go = (1.0 / 3) / 0.64;
    ck_assert(fabs(probability(&w, 3, 3) - stay / (stay + go)) < 1e-12);
    /* srrw on the simple chain: mu = d/8, no self-loop */
    walk_free(&w);
    ck_assert_int_eq(walk_init(&w, &kite, WALK_SRRW, WALK_SIMPLE, 3, 1), 0);
    ck_assert(w.mu[2] == 0.375 && probability(&w, 0, 0) == 0 && fabs(probability(&w, 0, 1) - 0.5) < 1e-12);
    walk_free(&w);
    /* a = 1/2: gamma_k = (k+1)^-1/2, x <- x + gamma (delta - x) */
    ck_assert_int_eq(walk_init(&w, &kite, WALK_SRRW, WALK_METROPOLIS, 1, 0.5), 0);
    double y[4] = {0.25, 0.25, 0.25, 0.25};
    const int visits[] = {3, 3, 1, 0, 3, 2};
    for (int k = 0; k < 6; k++) {
        walk_visit(&w, visits[k]);
        double gamma = 1 / sqrt(k + 2.0);
        for (int j = 0; j < 4; j++) y[j] += gamma * ((j == visits[k]) - y[j]);
    }
    for (int j = 0; j < 4; j++) ck_assert(fabs(walk_measure(&w, j) - y[j]) < 1e-14);
    walk_free(&w);
    /* an agent without neighbours keeps the token */
    int lone_offsets[] = {0, 0};
    const Topology lone = {.n = 1, .offsets = lone_offsets, .adj = kite_adj};
    ck_assert_int_eq(walk_init(&w, &lone, WALK_SRRW, WALK_SIMPLE, 1, 1), 0);
    ck_assert(probability(&w, 0, 0) == 1 && w.mu[0] == 1);
    walk_free(&w);
}
END_TEST

/* The fraction of visits to each agent after `steps` steps from agent 0. */
static double walk_run(WalkKind kind, WalkKind base, double alpha, const Topology *t, long steps, uint64_t seed,
                       double *frequencies)
{
    Walk w;
    ck_assert_int_eq(walk_init(&w, t, kind, base, alpha, 1), 0);
    gsl_rng *rng = rng_stream_create(seed, 1, RNG_PURPOSE_METHOD);
    int targets[64], at = 0;
    double probs[64];
    for (long k = 0; k < steps; k++) {
        walk_visit(&w, at);
        at = walk_next(&w, at, rng, targets, probs);
    }
    for (int j = 0; frequencies && j < t->n; j++) frequencies[j] = (double)w.counts[j] / steps;
    double tv = walk_tv_distance(&w);
    gsl_rng_free(rng);
    walk_free(&w);
    return tv;
}

START_TEST(test_long_run_frequencies_reach_the_target)
{
    double f[4];
    const double simple[4] = {0.25, 0.25, 0.375, 0.125};
    walk_run(WALK_SIMPLE, WALK_SIMPLE, 0, &kite, 400000, 1, f);
    for (int j = 0; j < 4; j++) ck_assert_msg(fabs(f[j] - simple[j]) < 0.005, "simple %d: %g", j, f[j]);
    walk_run(WALK_METROPOLIS, WALK_SIMPLE, 0, &kite, 400000, 2, f);
    for (int j = 0; j < 4; j++) ck_assert_msg(fabs(f[j] - 0.25) < 0.005, "metropolis %d: %g", j, f[j]);
    /* SRRW keeps the target of its base chain, whatever alpha */
    walk_run(WALK_SRRW, WALK_METROPOLIS, 5, &kite, 100000, 3, f);
    for (int j = 0; j < 4; j++) ck_assert_msg(fabs(f[j] - 0.25) < 0.002, "srrw on metropolis %d: %g", j, f[j]);
    walk_run(WALK_SRRW, WALK_SIMPLE, 5, &kite, 100000, 4, f);
    for (int j = 0; j < 4; j++) ck_assert_msg(fabs(f[j] - simple[j]) < 0.002, "srrw on simple %d: %g", j, f[j]);
}
END_TEST

/* The papers' effect in kind: on a ring of 16 (a slowly mixing base chain) after 1,000
 * steps, the visit frequencies are closer to the target and vary less across seeds as
 * alpha grows (Doshi et al.: asymptotic variance O(1/alpha)). Measured over these 200
 * seeds: mean TV 0.106 (sd 0.040) at alpha 0, 0.051 (0.017) at 1, 0.025 (0.008) at 5,
 * 0.019 (0.006) at 10. */
START_TEST(test_srrw_lowers_the_spread_of_visit_frequencies)
{
    Topology ring;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_build_kind(TOPO_RING, 16, 2, "t.ini", 1, &ring, &diag), 0);
    const double alphas[] = {0, 1, 5, 10};
    double mean[4], sd[4];
    enum { SEEDS = 200 };
    for (int a = 0; a < 4; a++) {
        double sum = 0, squares = 0;
        for (int seed = 0; seed < SEEDS; seed++) {
            double tv = walk_run(WALK_SRRW, WALK_METROPOLIS, alphas[a], &ring, 1000, (uint64_t)seed, NULL);
            sum += tv;
            squares += tv * tv;
        }
        mean[a] = sum / SEEDS;
        sd[a] = sqrt(squares / SEEDS - mean[a] * mean[a]);
        fprintf(stderr, "check_token: ring 16, 1000 steps, alpha %g: mean TV %.4f, sd %.4f\n", alphas[a], mean[a], sd[a]);
    }
    for (int a = 1; a < 4; a++) ck_assert_msg(mean[a] < 0.8 * mean[a - 1] && sd[a] < sd[a - 1], "alpha %g", alphas[a]);
    ck_assert(mean[3] < 0.25 * mean[0]);
    /* alpha = 0 is the base chain itself, draw for draw */
    ck_assert(walk_run(WALK_SRRW, WALK_METROPOLIS, 0, &ring, 1000, 7, NULL) ==
              walk_run(WALK_METROPOLIS, WALK_SIMPLE, 0, &ring, 1000, 7, NULL));
    topology_free(&ring);
}
END_TEST

static const char *scenario =
    "[run]\nmethod = token\nrounds = 3\nseed = 4\n"
    "[data]\ndataset = synthetic\nfeatures = 32\nclasses = 10\ntrain_samples = 4000\ntest_samples = 1000\n"
    "separation = 6\n"
    "[model]\nlayers = 32,10\nbatch = 32\nlr = 0.1\n"
    "[topology]\ngraph = ring\n"
    "[agents]\ncount = 16\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\n";

static int run_text(const char *const *set, int n_set, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(scenario, set, n_set, ts, &diag);
    if (status != 0) fprintf(stderr, "%s\n", diag.message);
    return status;
}

/* Only the rounds and agent_rounds rows: the timings (timing mode has no accuracy, and
 * the run row names the mode). */
static void strip_metrics(char *text)
{
    char *out = text;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line + 1) : strlen(line);
        if (strncmp(line, "round ", 6) == 0 || strncmp(line, "agent_round ", 12) == 0) {
            memmove(out, line, len);
            out += len;
        }
        line += len;
    }
    *out = '\0';
}

START_TEST(test_round_time_in_closed_form)
{
    /* One token on a ring (no self-loops): every visit is a step of F FLOPs at 1 GFLOPS
     * and a hop of 1 ms + B / (10 MB/s), B the model's bytes (SGD: no optimiser state).
     * 4000 samples over 16 agents, batch 32: 8 steps each, 128 per round; round r ends
     * with step 128 (r+1), after 128 (r+1) - 1 hops. */
    Scenario sc;
    HsDiag diag;
    const char *timing[] = {"run.mode=timing"};
    ck_assert_int_eq(test_resolve(scenario, timing, 1, &sc, &diag), 0);
    TestSink ts;
    Sim *e;
    ck_assert_int_eq(sim_open(&sc, test_sink_init(&ts), &diag, &e), 0);
    double step = sim_step_flops(e, 32) / 1e9, hop = 1e-3 + sim_model_bytes(e) / 1e7;
    double bytes = sim_model_bytes(e);
    sim_close(e);
    test_sink_free(&ts);
    ck_assert_int_eq(run_text(timing, 1, &ts), 0);
    ck_assert_int_eq(ts.rounds, 3);
    for (int r = 0; r < 3; r++) {
        double expect = 128.0 * (r + 1) * step + (128.0 * (r + 1) - 1) * hop;
        ck_assert_msg(fabs(ts.round_rows[r].t_end - expect) < 1e-9 * expect, "round %d: %.12g != %.12g", r,
                      ts.round_rows[r].t_end, expect);
    }
    /* the token is sent once per step, also after the round's last step (booked when
     * the send starts, in the round that ends): 128 sends of the model's bytes */
    ck_assert_msg(fabs(ts.round_rows[0].bytes - 128 * bytes) < 1e-6, "bytes %g", ts.round_rows[0].bytes);
    test_sink_free(&ts);
    /* momentum: the velocity travels with the model, twice the bytes per hop */
    const char *momentum[] = {"run.mode=timing", "model.optimizer=momentum"};
    ck_assert_int_eq(run_text(momentum, 2, &ts), 0);
    ck_assert(fabs(ts.round_rows[0].bytes - 256 * bytes) < 1e-6);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_deterministic_and_timing_equals_train)
{
    const char *walks[] = {"method.walk=simple", "method.walk=metropolis", "method.walk=srrw"};
    for (int w = 0; w < 3; w++) {
        const char *train[] = {walks[w], "topology.graph=exponential", "method.alpha=5", "method.tokens=3",
                               "model.optimizer=momentum"};
        const char *timing[] = {walks[w], "topology.graph=exponential", "method.alpha=5", "method.tokens=3",
                                "model.optimizer=momentum", "run.mode=timing"};
        TestSink a, b, c;
        ck_assert_int_eq(run_text(train, 5, &a), 0);
        ck_assert_int_eq(run_text(train, 5, &b), 0);
        ck_assert_str_eq(a.text, b.text);
        ck_assert_msg(test_sink_last_accuracy(&a) > 0.9, "%s: accuracy %g", walks[w], test_sink_last_accuracy(&a));
        ck_assert_int_eq(run_text(timing, 6, &c), 0);
        strip_metrics(a.text);
        strip_metrics(c.text);
        ck_assert_str_eq(a.text, c.text);
        test_sink_free(&a);
        test_sink_free(&b);
        test_sink_free(&c);
    }
    /* a different seed walks elsewhere */
    TestSink a, b;
    const char *one[] = {"run.mode=timing", "topology.graph=random-regular", "topology.degree=3"};
    const char *other[] = {"run.mode=timing", "topology.graph=random-regular", "topology.degree=3", "run.seed=5"};
    ck_assert_int_eq(run_text(one, 3, &a), 0);
    ck_assert_int_eq(run_text(other, 4, &b), 0);
    ck_assert_str_ne(a.text, b.text);
    test_sink_free(&a);
    test_sink_free(&b);
}
END_TEST

START_TEST(test_tokens_and_rounds)
{
    /* Four tokens share the round's 128 steps: the round takes about a quarter of the
     * time of one token, and rounds.extra (the TV distance of the visit frequencies to
     * mu) is in [0, 1] */
    TestSink one, four;
    const char *single[] = {"run.mode=timing"};
    const char *several[] = {"run.mode=timing", "method.tokens=4"};
    ck_assert_int_eq(run_text(single, 1, &one), 0);
    ck_assert_int_eq(run_text(several, 2, &four), 0);
    double ratio = four.round_rows[2].t_end / one.round_rows[2].t_end;
    ck_assert_msg(ratio > 0.24 && ratio < 0.3, "ratio %g", ratio);
    for (int r = 0; r < 3; r++) ck_assert(four.round_rows[r].extra >= 0 && four.round_rows[r].extra <= 1);
    test_sink_free(&one);
    test_sink_free(&four);
}
END_TEST

START_TEST(test_keys)
{
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(scenario, NULL, 0, &sc, &diag), 0);
    ck_assert_str_eq(test_method_param(&sc, "walk")->value, "srrw");
    ck_assert(test_method_key(&sc, "alpha") == 1 && test_method_key(&sc, "tokens") == 1);
    ck_assert(test_method_key(&sc, "measure_exponent") == 1);
    ck_assert_str_eq(test_method_param(&sc, "base")->value, "metropolis");
    const char *bad_walk[] = {"method.walk=levy"};
    ck_assert_int_eq(test_resolve(scenario, bad_walk, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--set method.walk=levy: expected one of simple|metropolis|srrw, found 'levy'");
    const char *half[] = {"method.measure_exponent=0.5"};
    ck_assert_int_eq(test_resolve(scenario, half, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "--set method.measure_exponent=0.5: ") == diag.message, "%s", diag.message);
    char text[2048];
    snprintf(text, sizeof text, "%s[method]\nalpha = -1\n", scenario);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:24: [method] alpha: ") == diag.message, "%s", diag.message);
    /* the graph is the method's: an impossible one is an error */
    const char *graph[] = {"topology.graph=random-regular", "topology.degree=16"};
    ck_assert_int_eq(test_resolve(scenario, graph, 2, &sc, &diag), HS_E_INPUT);
}
END_TEST

static Suite *token_suite(void)
{
    Suite *s = suite_create("token");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_kernels_by_hand);
    tcase_add_test(tc, test_long_run_frequencies_reach_the_target);
    tcase_add_test(tc, test_srrw_lowers_the_spread_of_visit_frequencies);
    tcase_add_test(tc, test_round_time_in_closed_form);
    tcase_add_test(tc, test_deterministic_and_timing_equals_train);
    tcase_add_test(tc, test_tokens_and_rounds);
    tcase_add_test(tc, test_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(token_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
