/* check_solver.c — the pairing solvers: the published worked example, exact against a
 * brute force over all matchings (and all splits for small n), ip against exact, greedy
 * feasible and never below exact; the instance parser's every error with its line. */
#include "solver/instance.h"
#include "solver/pairing.h"

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static PairingProblem example;

static void load_example(void)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(instance_load("tests/fixtures/pairing/example5.ini", &example, &diag) == 0, "%s", diag.message);
}

START_TEST(test_worked_example_greedy)
{
    load_example();
    double tau[] = {30, 10, 12.5, 50, 15};
    for (int i = 0; i < 5; i++) ck_assert(fabs(pairing_standalone(&example, i) - tau[i]) < 1e-12);
    PairingResult r;
    pairing_result_init(&r, 5);
    ck_assert_int_eq(solver_greedy(&example, &r), 0);
    ck_assert_int_eq(r.partner[3], 1);
    ck_assert_int_eq(r.split[3], 6);
    ck_assert(fabs(r.time[3] - 16.5) < 1e-12);
    ck_assert_int_eq(r.partner[0], 2);
    ck_assert_int_eq(r.split[0], 4);
    ck_assert(fabs(r.time[0] - 16.8) < 1e-12);
    ck_assert_int_eq(r.role[4], PAIRING_ALONE);
    ck_assert(fabs(r.makespan - 16.8) < 1e-12);
    ck_assert_int_eq(pairing_result_check(&example, &r), 0);
    /* the optimum is no better here: exact and ip agree with the paper's answer */
    ck_assert_int_eq(solver_exact(&example, &r), 0);
    ck_assert(fabs(r.makespan - 16.8) < 1e-12);
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(solver_ip(&example, 10, &r, &diag), 0);
    ck_assert(fabs(r.makespan - 16.8) < 1e-9);
    pairing_result_free(&r);
    pairing_problem_free(&example);
}
END_TEST

/* Brute force over every matching, every direction and every split (a pair's splits
 * are independent of the rest, so the best one per pair is enumerated in place). */
static double brute(const PairingProblem *p, int *used)
{
    int i = 0;
    while (i < p->n && used[i]) i++;
    if (i == p->n) return 0;
    used[i] = 1;
    double best = fmax(pairing_standalone(p, i), brute(p, used));
    for (int j = i + 1; j < p->n; j++) {
        if (used[j]) continue;
        double pair = INFINITY;
        for (int m = 1; m < p->n_splits; m++) pair = fmin(pair, fmin(pairing_time(p, i, j, m), pairing_time(p, j, i, m)));
        if (!isfinite(pair)) continue;
        used[j] = 1;
        double rest = brute(p, used);
        used[j] = 0;
        double t = fmax(pair, rest);
        if (t < best) best = t;
    }
    used[i] = 0;
    return best;
}

/* A random instance in the spirit of the paper's setting. */
static void random_instance(PairingProblem *p, gsl_rng *rng, int n)
{
    static const double batch_time[] = {16, 22, 54, 72, 256};
    static const double time_prob[] = {.1, .2, .4, .2, .1};
    static const double bw[] = {100, 50, 10};
    int splits = 3 + (int)gsl_rng_uniform_int(rng, 6);
    pairing_problem_init(p, n, splits);
    for (int i = 0; i < n; i++) {
        double u = gsl_rng_uniform(rng), acc = 0;
        int k = 0;
        while (k < 4 && u >= (acc += time_prob[k])) k++;
        p->batches[i] = 5 + (double)gsl_rng_uniform_int(rng, 20);
        p->speed[i] = 1.0 / batch_time[k] * (0.5 + gsl_rng_uniform(rng));
    }
    p->fs[0] = 1;
    p->ff[0] = 0;
    p->act[0] = 0;
    for (int m = 1; m < splits; m++) {
        double cut = (double)m / splits;
        p->fs[m] = cut + 0.05 * gsl_rng_uniform(rng);
        p->ff[m] = 1 - cut;
        p->act[m] = 0.1 + 2 * gsl_rng_uniform(rng);
    }
    for (int i = 0; i < n; i++) {
        p->bandwidth[(size_t)i * n + i] = INFINITY;
        for (int j = i + 1; j < n; j++) {
            double b = gsl_rng_uniform(rng) < 0.15 ? 0 : bw[gsl_rng_uniform_int(rng, 3)];
            p->bandwidth[(size_t)i * n + j] = p->bandwidth[(size_t)j * n + i] = b;
        }
    }
}

START_TEST(test_exact_ip_greedy_against_brute_force)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, 2024);
    int greedy_worse = 0, trials = 0;
    for (int trial = 0; trial < 300; trial++) {
        int n = 2 + trial % 8;
        PairingProblem p;
        random_instance(&p, rng, n);
        int used[16] = {0};
        double optimum = brute(&p, used);
        PairingResult exact, ip, greedy;
        pairing_result_init(&exact, n);
        pairing_result_init(&ip, n);
        pairing_result_init(&greedy, n);
        ck_assert_int_eq(solver_exact(&p, &exact), 0);
        ck_assert_int_eq(pairing_result_check(&p, &exact), 0);
        ck_assert_msg(fabs(exact.makespan - optimum) < 1e-9 * optimum, "trial %d: exact %.17g brute %.17g", trial,
                      exact.makespan, optimum);
        HsDiag diag;
        hs_diag_clear(&diag);
        ck_assert_int_eq(solver_ip(&p, 10, &ip, &diag), 0);
        ck_assert_int_eq(pairing_result_check(&p, &ip), 0);
        ck_assert_msg(fabs(ip.makespan - optimum) < 1e-7 * optimum, "trial %d: ip %.17g brute %.17g", trial, ip.makespan,
                      optimum);
        ck_assert_int_eq(solver_greedy(&p, &greedy), 0);
        ck_assert_int_eq(pairing_result_check(&p, &greedy), 0);
        ck_assert(greedy.makespan >= exact.makespan - 1e-12);
        greedy_worse += greedy.makespan > exact.makespan * (1 + 1e-12);
        trials++;
        pairing_result_free(&exact);
        pairing_result_free(&ip);
        pairing_result_free(&greedy);
        pairing_problem_free(&p);
    }
    /* the instances are hard enough that greedy is sometimes beaten */
    ck_assert_msg(greedy_worse > 0, "greedy matched the optimum on all %d instances", trials);
    gsl_rng_free(rng);
}
END_TEST

START_TEST(test_sparse_links_match_dense)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, 7);
    for (int trial = 0; trial < 50; trial++) {
        PairingProblem dense, sparse;
        int n = 3 + trial % 12;
        random_instance(&dense, rng, n);
        size_t links = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) links += i != j && dense.bandwidth[(size_t)i * n + j] > 0;
        pairing_problem_init_sparse(&sparse, n, dense.n_splits, links);
        memcpy(sparse.batches, dense.batches, (size_t)n * sizeof(double));
        memcpy(sparse.speed, dense.speed, (size_t)n * sizeof(double));
        memcpy(sparse.fs, dense.fs, (size_t)dense.n_splits * sizeof(double));
        memcpy(sparse.ff, dense.ff, (size_t)dense.n_splits * sizeof(double));
        memcpy(sparse.act, dense.act, (size_t)dense.n_splits * sizeof(double));
        size_t k = 0;
        for (int i = 0; i < n; i++) {
            sparse.link_offsets[i] = (int)k;
            for (int j = 0; j < n; j++)
                if (i != j && dense.bandwidth[(size_t)i * n + j] > 0) {
                    sparse.link_to[k] = j;
                    sparse.link_bandwidth[k++] = dense.bandwidth[(size_t)i * n + j];
                }
        }
        sparse.link_offsets[n] = (int)k;
        PairingResult a, b;
        pairing_result_init(&a, n);
        pairing_result_init(&b, n);
        ck_assert_int_eq(solver_exact(&dense, &a), 0);
        ck_assert_int_eq(solver_exact(&sparse, &b), 0);
        ck_assert(a.makespan == b.makespan);
        ck_assert_int_eq(pairing_result_check(&sparse, &b), 0);
        pairing_result_free(&a);
        pairing_result_free(&b);
        pairing_problem_free(&dense);
        pairing_problem_free(&sparse);
    }
    gsl_rng_free(rng);
}
END_TEST

START_TEST(test_edge_cases)
{
    /* one agent; nobody linked; everyone equal: all alone */
    PairingProblem p;
    pairing_problem_init(&p, 1, 2);
    p.batches[0] = 4;
    p.speed[0] = 2;
    p.fs[0] = 1;
    p.fs[1] = 0.5;
    p.ff[1] = 0.5;
    p.bandwidth[0] = INFINITY;
    PairingResult r;
    pairing_result_init(&r, 1);
    ck_assert_int_eq(solver_exact(&p, &r), 0);
    ck_assert(r.makespan == 2 && r.role[0] == PAIRING_ALONE);
    ck_assert_int_eq(solver_greedy(&p, &r), 0);
    pairing_result_free(&r);
    pairing_problem_free(&p);
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(solver_pair(&p, "magic", 1, &r, &diag), HS_E_INPUT);
}
END_TEST

static void expect_instance_error(const char *text, const char *prefix, const char *fragment)
{
    PairingProblem p;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(instance_parse("i.ini", text, &p, &diag), HS_E_INPUT);
    ck_assert_msg(strncmp(diag.message, prefix, strlen(prefix)) == 0, "'%s' should start with '%s'", diag.message, prefix);
    ck_assert_msg(strstr(diag.message, fragment) != NULL, "'%s' lacks '%s'", diag.message, fragment);
}

#define HEAD "[pairing]\nbatches = 2, 3\nspeed = 1, 2\nfs = 1, .5\nff = 0, .5\nact = 0, 1\n"

START_TEST(test_instance_errors)
{
    PairingProblem p;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(instance_parse("i.ini", HEAD "bandwidth.0 = inf, 5\nbandwidth.1 = 5, inf\n", &p, &diag), 0);
    ck_assert_int_eq(p.n, 2);
    pairing_problem_free(&p);
    expect_instance_error(HEAD "bandwidth.0 = inf, 5\nbandwidth.1 = 4, inf\n", "i.ini:8:", "not symmetric");
    expect_instance_error(HEAD "bandwidth.0 = inf, 5, 1\nbandwidth.1 = 5, inf\n", "i.ini:7:", "has 3 values, expected 2");
    expect_instance_error(HEAD "bandwidth.0 = inf, 5\n", "i.ini:", "missing row bandwidth.1");
    expect_instance_error(HEAD "bandwidth.0 = inf, -5\nbandwidth.1 = -5, inf\n", "i.ini:7:", "negative");
    expect_instance_error(HEAD "bandwidth.0 = inf, 5\nbandwidth.1 = 5, inf\nbandwidth.2 = 1, 1\n", "i.ini:9:", "only 2 agents");
    expect_instance_error("[pairing]\nbatches = 2, 3\nspeed = 1, -2\nfs = 1, .5\nff = 0, .5\nact = 0, 1\n", "i.ini:3:", "speed[1]");
    expect_instance_error("[pairing]\nbatches = 2, 3\nspeed = 1, 0\nfs = 1, .5\nff = 0, .5\nact = 0, 1\n", "i.ini:3:", "> 0");
    expect_instance_error("[pairing]\nbatches = -2, 3\nspeed = 1, 2\nfs = 1, .5\nff = 0, .5\nact = 0, 1\n", "i.ini:2:", "batches[0]");
    expect_instance_error("[pairing]\nbatches = 2, 3\nspeed = 1, 2\nfs = 1, 1.5\nff = 0, .5\nact = 0, 1\n", "i.ini:4:", "outside [0, 1]");
    expect_instance_error("[pairing]\nbatches = 2, 3\nspeed = 1, 2\nfs = 1, .5\nff = 0, .5, .2\nact = 0, 1\n", "i.ini:5:", "same length");
    expect_instance_error("[pairing]\nbatches = 2, 3\nspeed = 1\nfs = 1, .5\nff = 0, .5\nact = 0, 1\n", "i.ini:3:", "speed has 1 values");
    expect_instance_error("[pairing]\nbatches = 2, x\n", "i.ini:2:", "'x' is not a number");
    expect_instance_error("[pairing]\nbatch = 2\n", "i.ini:2:", "unknown key 'batch'");
    expect_instance_error("[pairing]\nbatches = 2\nbatches = 3\n", "i.ini:3:", "given twice");
    expect_instance_error("[agents]\n", "i.ini:1:", "unknown section");
    expect_instance_error("batches = 1\n", "i.ini:1:", "outside [pairing]");
    expect_instance_error("[pairing]\nwhat\n", "i.ini:2:", "expected KEY = VALUES");
    expect_instance_error("[pairing]\nbatches = 1\n", "i.ini:", "missing key 'speed'");
    expect_instance_error("[pairing]\nbatches = 2, 3\nspeed = 1, 2\nfs = .9, .5\nff = 0, .5\nact = 0, 1\n", "i.ini:4:", "fs[0] must be 1");
    expect_instance_error(HEAD "bandwidth.x = 1\n", "i.ini:7:", "bandwidth.ROW");
    ck_assert_int_eq(instance_load("/nonexistent.ini", &p, &diag), HS_E_INPUT);
}
END_TEST

static Suite *solver_suite(void)
{
    Suite *s = suite_create("solver");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_worked_example_greedy);
    tcase_add_test(tc, test_exact_ip_greedy_against_brute_force);
    tcase_add_test(tc, test_sparse_links_match_dense);
    tcase_add_test(tc, test_edge_cases);
    tcase_add_test(tc, test_instance_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(solver_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
