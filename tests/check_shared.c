/* check_shared.c — shared helpers (solver/shared.h, `capacity = shared`).
 *  - the hand-worked 3-agent case (tests/fixtures/pairing/shared3.ini): two offloaders
 *    share one helper; shares 0.4/0.6 of compute and 4/7, 3/7 of the link, makespan 4.75 s
 *    against 8 s in pairs; every solver;
 *  - differential on random small instances: exact against a naive brute force over every
 *    assignment (its own makespan formula, no pruning), ip equal to exact, greedy never
 *    below exact and never above all-alone, shared exact never above the pairs' exact (a
 *    pairing is a shared assignment with one member per helper); every result checked;
 *  - with one offloader per helper the times are pairing.h's T_i(j,m) (example5);
 *  - sparse link lists (in any order) give the dense answers;
 *  - limits: no agents, 1,000 agents by greedy; errors: exact cost, exact past its size,
 *    unknown solver, corrupted results, instance keys at their line. */
#include "solver/instance.h"
#include "solver/shared.h"

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURES "tests/fixtures/pairing/"

static void load(const char *path, PairingProblem *p)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(instance_load(path, p, &diag) == HS_OK, "%s", diag.message);
}

static void solve(const PairingProblem *p, const char *solver, SharedResult *r)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(shared_result_init(r, p->n), HS_OK);
    int status = solver_shared(p, solver, 30, r, &diag);
    ck_assert_msg(status == HS_OK, "%s: %s", solver, diag.message);
    ck_assert_msg(shared_result_check(p, r) == HS_OK, "%s's result does not check out", solver);
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

START_TEST(test_hand_worked)
{
    static const char *const solvers[] = {"exact", "ip", "greedy"};
    PairingProblem p;
    load(FIXTURES "shared3.ini", &p);
    ck_assert_int_eq(p.capacity, PAIRING_CAPACITY_SHARED);
    for (int k = 0; k < 3; k++) {
        SharedResult r;
        solve(&p, solvers[k], &r);
        ck_assert_str_eq(r.solver, solvers[k]);
        ck_assert_int_eq(r.role[0], PAIRING_OFFLOADER);
        ck_assert_int_eq(r.role[1], PAIRING_OFFLOADER);
        ck_assert_int_eq(r.role[2], PAIRING_HELPER);
        ck_assert_int_eq(r.helper[0], 2);
        ck_assert_int_eq(r.helper[1], 2);
        ck_assert_int_eq(r.members[2], 2);
        ck_assert_int_eq(r.split[0], 1);
        /* compute after the helper's 1 s epoch: 1.5 s and 2.25 s of top work */
        ck_assert(close_to(r.share[0], 0.4) && close_to(r.share[1], 0.6));
        /* link: 2 s and 1.5 s of transfer into agent 2 */
        ck_assert(close_to(r.link_share[0], 4.0 / 7) && close_to(r.link_share[1], 3.0 / 7));
        for (int i = 0; i < 3; i++)
            ck_assert_msg(close_to(r.time[i], 4.75), "agent %d ends at %.17g", i, r.time[i]);
        ck_assert(close_to(r.makespan, 4.75));
        shared_result_free(&r);
    }
    /* the same agents in pairs: one of the two stays alone */
    PairingResult pairs;
    ck_assert_int_eq(pairing_result_init(&pairs, p.n), HS_OK);
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(solver_pair(&p, "exact", 10, &pairs, &diag), HS_OK);
    ck_assert(close_to(pairs.makespan, 8));
    pairing_result_free(&pairs);
    pairing_problem_free(&p);
}
END_TEST

/* One member per helper: the shared times are pairing.h's (the published example). */
START_TEST(test_single_members_are_pairs)
{
    PairingProblem p;
    load(FIXTURES "example5_shared.ini", &p);
    SharedResult r;
    solve(&p, "exact", &r);
    ck_assert(close_to(r.makespan, 16.8));
    for (int i = 0; i < p.n; i++)
        if (r.role[i] == PAIRING_OFFLOADER) {
            ck_assert_int_eq(r.members[r.helper[i]], 1);
            ck_assert(close_to(r.time[i], pairing_time(&p, i, r.helper[i], r.split[i])));
            ck_assert(r.share[i] == 1 && r.link_share[i] == 1);
        }
    shared_result_free(&r);
    pairing_problem_free(&p);
}
END_TEST

/* ---- the naive reference: every assignment, its own makespan formula --------------- */

typedef struct Brute {
    const PairingProblem *p;
    int helper[8], split[8];
    double best;
} Brute;

static double brute_makespan(const Brute *b)
{
    const PairingProblem *p = b->p;
    double makespan = 0;
    for (int j = 0; j < p->n; j++) {
        if (b->helper[j] >= 0) continue;
        double work = 0, transfer = 0, slow = 0;
        int members = 0;
        for (int i = 0; i < p->n; i++) {
            if (b->helper[i] != j) continue;
            int m = b->split[i];
            double link = pairing_link(p, i, j);
            members++;
            work += p->batches[i] * p->ff[m] / p->speed[j];
            transfer += p->act[m] > 0 ? p->batches[i] * p->act[m] / link : 0;
            slow = fmax(slow, p->batches[i] * p->fs[m] / p->speed[i]);
        }
        double tau = p->batches[j] / p->speed[j];
        makespan = fmax(makespan, members ? fmax(slow, fmax(tau + work, transfer)) : tau);
    }
    return makespan;
}

static void brute_descend(Brute *b, int k)
{
    const PairingProblem *p = b->p;
    if (k == p->n) {
        for (int i = 0; i < p->n; i++) /* a helper may not offload */
            if (b->helper[i] >= 0 && b->helper[b->helper[i]] >= 0) return;
        b->best = fmin(b->best, brute_makespan(b));
        return;
    }
    b->helper[k] = -1;
    b->split[k] = 0;
    brute_descend(b, k + 1);
    for (int j = 0; j < p->n; j++) {
        if (j == k || !(pairing_link(p, k, j) > 0)) continue;
        for (int m = 1; m < p->n_splits; m++) {
            b->helper[k] = j;
            b->split[k] = m;
            brute_descend(b, k + 1);
        }
    }
    b->helper[k] = -1;
    b->split[k] = 0;
}

static double brute_force(const PairingProblem *p)
{
    Brute b = {.p = p, .best = INFINITY};
    brute_descend(&b, 0);
    return b.best;
}

/* Paper-like (the authors' batch times and bandwidths) or tie-heavy (small integers). */
static void random_instance(PairingProblem *p, gsl_rng *rng, int n, int splits, int ties)
{
    static const double batch_time[] = {16, 22, 54, 72, 256}, bw[] = {100, 50, 10};
    ck_assert_int_eq(pairing_problem_init(p, n, splits), HS_OK);
    p->capacity = PAIRING_CAPACITY_SHARED;
    for (int i = 0; i < n; i++) {
        p->batches[i] = ties ? (double)gsl_rng_uniform_int(rng, 7) : 5 + (double)gsl_rng_uniform_int(rng, 20);
        p->speed[i] = ties ? (double[]){1, 2, 4}[gsl_rng_uniform_int(rng, 3)]
                           : 1000.0 / batch_time[gsl_rng_uniform_int(rng, 5)];
    }
    p->fs[0] = 1;
    for (int m = 1; m < splits; m++) {
        double cut = (double)m / splits;
        p->fs[m] = ties ? 0.25 * (double)gsl_rng_uniform_int(rng, 5) : cut + 0.05 * gsl_rng_uniform(rng);
        p->ff[m] = ties ? 0.25 * (double)gsl_rng_uniform_int(rng, 5) : 1 - cut;
        p->act[m] = ties ? (double)gsl_rng_uniform_int(rng, 3) : 0.1 + 20 * gsl_rng_uniform(rng);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            p->bandwidth[(size_t)i * n + j] = i == j                          ? INFINITY
                                              : gsl_rng_uniform(rng) < 0.2 ? 0
                                                                            : bw[gsl_rng_uniform_int(rng, 3)];
}

START_TEST(test_differential)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 1000 + (unsigned long)_i);
    int ties = _i % 2, shared_wins = 0;
    for (int trial = 0; trial < 60; trial++) {
        int n = 1 + (int)gsl_rng_uniform_int(rng, 6), splits = 1 + (int)gsl_rng_uniform_int(rng, 4);
        if (n >= 5 && splits > 3) splits = 3; /* keeps the brute force at a few 10^5 leaves */
        PairingProblem p;
        random_instance(&p, rng, n, splits, ties);
        SharedResult exact, ip, greedy;
        solve(&p, "exact", &exact);
        solve(&p, "ip", &ip);
        solve(&p, "greedy", &greedy);
        double brute = brute_force(&p);
        ck_assert_msg(close_to(exact.makespan, brute), "trial %d: exact %.17g, brute force %.17g", trial,
                      exact.makespan, brute);
        ck_assert_msg(close_to(ip.makespan, exact.makespan), "trial %d: ip %.17g, exact %.17g", trial, ip.makespan,
                      exact.makespan);
        ck_assert_str_eq(ip.solver, "ip");
        ck_assert(greedy.makespan >= exact.makespan * (1 - 1e-12));
        double alone = 0;
        for (int i = 0; i < n; i++)
            alone = fmax(alone, pairing_standalone(&p, i));
        ck_assert(greedy.makespan <= alone);
        PairingResult pairs;
        ck_assert_int_eq(pairing_result_init(&pairs, n), HS_OK);
        HsDiag diag;
        hs_diag_clear(&diag);
        ck_assert_int_eq(solver_pair(&p, "exact", 10, &pairs, &diag), HS_OK);
        ck_assert(exact.makespan <= pairs.makespan * (1 + 1e-12));
        shared_wins += exact.makespan < pairs.makespan * (1 - 1e-9);
        pairing_result_free(&pairs);
        shared_result_free(&exact);
        shared_result_free(&ip);
        shared_result_free(&greedy);
        pairing_problem_free(&p);
    }
    /* the families do reach instances where sharing a helper pays */
    ck_assert_msg(shared_wins > 0, "no instance where sharing beats pairs");
    gsl_rng_free(rng);
}
END_TEST

/* The same problem with its links as lists: every solver gives the same answer. */
START_TEST(test_sparse_links_match_dense)
{
    static const char *const solvers[] = {"exact", "ip", "greedy"};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 99);
    for (int trial = 0; trial < 30; trial++) {
        int n = 2 + (int)gsl_rng_uniform_int(rng, 6);
        PairingProblem dense, sparse;
        random_instance(&dense, rng, n, 1 + (int)gsl_rng_uniform_int(rng, 4), trial % 2);
        size_t links = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                links += j != i && dense.bandwidth[(size_t)i * n + j] > 0;
        ck_assert_int_eq(pairing_problem_init_sparse(&sparse, n, dense.n_splits, links), HS_OK);
        sparse.capacity = PAIRING_CAPACITY_SHARED;
        memcpy(sparse.batches, dense.batches, (size_t)n * sizeof *dense.batches);
        memcpy(sparse.speed, dense.speed, (size_t)n * sizeof *dense.speed);
        memcpy(sparse.fs, dense.fs, (size_t)dense.n_splits * sizeof *dense.fs);
        memcpy(sparse.ff, dense.ff, (size_t)dense.n_splits * sizeof *dense.ff);
        memcpy(sparse.act, dense.act, (size_t)dense.n_splits * sizeof *dense.act);
        int k = 0;
        for (int i = 0; i < n; i++) {
            sparse.link_offsets[i] = k;
            for (int j = n - 1; j >= 0; j--) /* listed backwards: order must not matter */
                if (j != i && dense.bandwidth[(size_t)i * n + j] > 0) {
                    sparse.link_to[k] = j;
                    sparse.link_bandwidth[k++] = dense.bandwidth[(size_t)i * n + j];
                }
        }
        sparse.link_offsets[n] = k;
        for (int v = 0; v < 3; v++) {
            SharedResult a, b;
            solve(&dense, solvers[v], &a);
            solve(&sparse, solvers[v], &b);
            ck_assert_msg(close_to(a.makespan, b.makespan), "%s: dense %.17g, sparse %.17g", solvers[v], a.makespan,
                          b.makespan);
            shared_result_free(&a);
            shared_result_free(&b);
        }
        pairing_problem_free(&dense);
        pairing_problem_free(&sparse);
    }
    gsl_rng_free(rng);
}
END_TEST

START_TEST(test_limits)
{
    PairingProblem p;
    ck_assert_int_eq(pairing_problem_init(&p, 0, 1), HS_OK);
    SharedResult r;
    solve(&p, "exact", &r);
    ck_assert(r.makespan == 0);
    shared_result_free(&r);
    solve(&p, "ip", &r);
    shared_result_free(&r);
    pairing_problem_free(&p);
    /* 1,000 agents: greedy answers and checks out, never above all-alone */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    random_instance(&p, rng, 1000, 6, 0);
    solve(&p, "greedy", &r);
    double alone = 0;
    int helpers = 0, crowded = 0;
    for (int i = 0; i < p.n; i++) {
        alone = fmax(alone, pairing_standalone(&p, i));
        helpers += r.role[i] == PAIRING_HELPER;
        crowded += r.members[i] > 1;
    }
    ck_assert(r.makespan < alone);
    ck_assert(helpers > 0 && crowded > 0);
    shared_result_free(&r);
    pairing_problem_free(&p);
    gsl_rng_free(rng);
}
END_TEST

START_TEST(test_errors)
{
    PairingProblem p;
    load(FIXTURES "shared3.ini", &p);
    SharedResult r;
    ck_assert_int_eq(shared_result_init(&r, p.n), HS_OK);
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(solver_shared(&p, "magic", 1, &r, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "unknown solver 'magic'") != NULL);
    p.cost = PAIRING_COST_EXACT;
    hs_diag_clear(&diag);
    ck_assert_int_eq(solver_shared(&p, "exact", 1, &r, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "paper's cost only") != NULL, "%s", diag.message);
    p.cost = PAIRING_COST_PAPER;
    /* corruptions the checker must catch */
    ck_assert_int_eq(solver_shared(&p, "exact", 1, &r, &diag), HS_OK);
    ck_assert_int_eq(shared_result_check(&p, &r), HS_OK);
    r.share[0] = 0.5;
    ck_assert_int_eq(shared_result_check(&p, &r), HS_E_INTERNAL);
    r.share[0] = 0.4;
    r.time[1] = 4;
    ck_assert_int_eq(shared_result_check(&p, &r), HS_E_INTERNAL);
    r.time[1] = 4.75;
    r.helper[2] = 0; /* a helper that offloads */
    ck_assert_int_eq(shared_result_check(&p, &r), HS_E_INTERNAL);
    r.helper[2] = -1;
    r.makespan = 4;
    ck_assert_int_eq(shared_result_check(&p, &r), HS_E_INTERNAL);
    shared_result_free(&r);
    pairing_problem_free(&p);
    /* exact refuses more than its limit; ip answers through its fallback then */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 3);
    random_instance(&p, rng, SHARED_EXACT_MAX_AGENTS + 1, 3, 0);
    ck_assert_int_eq(shared_result_init(&r, p.n), HS_OK);
    hs_diag_clear(&diag);
    ck_assert_int_eq(solver_shared(&p, "exact", 1, &r, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "at most 14 agents") != NULL);
    ck_assert_int_eq(solver_shared(&p, "ip", 1e-9, &r, &diag), HS_OK);
    ck_assert(r.fell_back);
    ck_assert_str_eq(r.solver, "ip>greedy");
    ck_assert_int_eq(shared_result_check(&p, &r), HS_OK);
    shared_result_free(&r);
    pairing_problem_free(&p);
    gsl_rng_free(rng);
}
END_TEST

static const struct {
    const char *fixture;
    int line;
    const char *fragment;
} instance_errors[] = {
    {"err_capacity.ini", 13, "capacity: 'many' is not one of pairs|shared"},
    {"err_capacity_cost.ini", 14, "capacity = shared takes the paper's cost only (cost = exact is at line 13)"},
};

START_TEST(test_instance_errors)
{
    char path[256], prefix[300];
    snprintf(path, sizeof path, FIXTURES "%s", instance_errors[_i].fixture);
    snprintf(prefix, sizeof prefix, "%s:%d: ", path, instance_errors[_i].line);
    PairingProblem p;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(instance_load(path, &p, &diag), HS_E_INPUT);
    ck_assert_msg(strncmp(diag.message, prefix, strlen(prefix)) == 0, "'%s' should start with '%s'", diag.message,
                  prefix);
    ck_assert_msg(strstr(diag.message, instance_errors[_i].fragment) != NULL, "'%s' lacks '%s'", diag.message,
                  instance_errors[_i].fragment);
    pairing_problem_free(&p);
}
END_TEST

static Suite *shared_suite(void)
{
    Suite *s = suite_create("shared");
    TCase *normal = tcase_create("normal");
    tcase_add_test(normal, test_hand_worked);
    tcase_add_test(normal, test_single_members_are_pairs);
    tcase_add_loop_test(normal, test_differential, 0, 4);
    tcase_add_test(normal, test_sparse_links_match_dense);
    tcase_add_test(normal, test_limits);
    tcase_set_timeout(normal, 300);
    suite_add_tcase(s, normal);
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, test_errors);
    tcase_add_loop_test(errors, test_instance_errors, 0, (int)(sizeof instance_errors / sizeof *instance_errors));
    tcase_set_timeout(errors, 60);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(shared_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
