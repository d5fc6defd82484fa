/* check_topology_learn.c — [topology] weights = FILE.weights (read back exactly, every
 * malformed file refused at FILE:LINE) and the STL-FW learner: the assignment against a
 * brute force (its naive twin), a hand-worked case (4 agents of two labels: the first
 * step pairs agents of different labels, gamma = 1/2, g from 0.575 to 0.025), and on
 * Dirichlet-like shares a monotone objective, the degree budget, a symmetric doubly
 * stochastic W and bitwise determinism. */
#include "sim/world/topology_learn.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char weights_path[64];

static void write_file(const char *text)
{
    FILE *f = fopen(weights_path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    snprintf(weights_path, sizeof weights_path, "%s", "/tmp/check_topology_learn_XXXXXX");
    int fd = mkstemp(weights_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void teardown(void)
{
    unlink(weights_path);
}

static double weight_of(const Topology *t, int i, int j)
{
    if (i == j) return t->self_weights[i];
    for (int k = t->offsets[i]; k < t->offsets[i + 1]; k++)
        if (t->adj[k] == j) return t->weights[k];
    return 0;
}

START_TEST(test_weights_read_back)
{
    /* numpy.savetxt's form (%.18e, blanks), a comment, a comma row and a blank line */
    const char *rows[4] = {"6.666666666666666297e-01 3.333333333333333148e-01 0.000000000000000000e+00 0",
                           "3.333333333333333148e-01 3.333333333333333703e-01 0.3333333333333333 0",
                           "0, 0.3333333333333333, 0.41666666666666663, 0.25",
                           "0 0 0.25 0.75"};
    char text[1024];
    snprintf(text, sizeof text, "# a 4-agent path\n%s\n%s\n\n%s\n%s\n", rows[0], rows[1], rows[2], rows[3]);
    write_file(text);
    Topology t;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_weights_load(weights_path, 4, &t, &diag), HS_OK);
    for (int i = 0; i < 4; i++) {
        char copy[256];
        snprintf(copy, sizeof copy, "%s", rows[i]);
        char *p = copy;
        for (int j = 0; j < 4; j++) {
            while (*p == ' ' || *p == ',') p++;
            char *end;
            double expected = strtod(p, &end);
            p = end;
            ck_assert_msg(weight_of(&t, i, j) == expected, "W[%d][%d] = %.17g, file %.17g", i, j,
                          weight_of(&t, i, j), expected);
        }
    }
    /* the graph is W's support: a path 0-1-2-3 */
    ck_assert_int_eq(topology_degree(&t, 0), 1);
    ck_assert_int_eq(topology_degree(&t, 1), 2);
    ck_assert_int_eq(topology_degree(&t, 2), 2);
    ck_assert_int_eq(topology_degree(&t, 3), 1);
    ck_assert_int_eq(t.adj[t.offsets[2]], 1);
    ck_assert_int_eq(t.adj[t.offsets[2] + 1], 3);
    topology_free(&t);
    /* a row longer than any fixed buffer: 2 x 300 digits */
    char wide[1400], zeros[301];
    memset(zeros, '0', 300);
    zeros[300] = 0;
    snprintf(wide, sizeof wide, "0.5%s 0.5%s\n0.5 0.5\n", zeros, zeros);
    write_file(wide);
    ck_assert_int_eq(topology_weights_load(weights_path, 2, &t, &diag), HS_OK);
    ck_assert(t.weights[0] == 0.5 && t.self_weights[0] == 0.5);
    topology_free(&t);
}
END_TEST

static void expect_weights_error(int n, const char *text, const char *message)
{
    write_file(text);
    Topology t;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_weights_load(weights_path, n, &t, &diag), HS_E_INPUT);
    char expected[512];
    snprintf(expected, sizeof expected, "%s%s", weights_path, message);
    ck_assert_msg(strcmp(diag.message, expected) == 0, "got '%s', expected '%s'", diag.message, expected);
}

START_TEST(test_weights_malformed)
{
    expect_weights_error(2, "0.5 0.5\n0.5 0.4\n", ":2: row 1 sums to 0.9, not 1 within 1e-9 (the weights must be "
                                                  "row-stochastic)");
    expect_weights_error(2, "# c\n1.5 -0.5\n-0.5 1.5\n", ":2: W[0][0] = 1.5 is outside [0, 1]");
    expect_weights_error(2, "0.5 0.5\n-0.5 1.5\n", ":2: W[1][0] = -0.5 is outside [0, 1]");
    expect_weights_error(2, "0.5 0.5 0\n0.5 0.5\n", ":1: row 0 has more than 2 entries (one per agent)");
    expect_weights_error(3, "0.5 0.5\n", ":1: row 0 has 2 entries, expected 3 (one per agent)");
    expect_weights_error(2, "0.5 x\n", ":1: row 0, entry 1: 'x' is not a number");
    expect_weights_error(2, "0.5 0.5\n0.5 0.5\n1 0\n", ":3: more than 2 rows (one per agent)");
    expect_weights_error(3, "1 0 0\n0 1 0\n", ": holds 2 rows, expected 3 (one per agent)");
    expect_weights_error(3, "0.5 0.25 0.25\n0.5 0.5 0\n0.25 0 0.75\n",
                         ":2: W[1][0] = 0.5 but W[0][1] = 0.25 (line 1): W must be symmetric, as D-PSGD mixes with "
                         "a symmetric W");
    expect_weights_error(3, "0.5 0.5 0\n0.5 0.5 0\n0 0 1\n",
                         ": the graph of W's nonzero entries is disconnected: every agent must reach every other");
    expect_weights_error(2, "0.5 0.5 \n1e-12 0.999999999999\n",
                         ":2: W[1][0] = 1e-12 but W[0][1] = 0.5 (line 1): W must be symmetric, as D-PSGD mixes "
                         "with a symmetric W");
}
END_TEST

/* the assignment against every permutation of a small matrix */
static double best_by_brute_force(const double *cost, int n, int *perm, int depth, char *used)
{
    if (depth == n) {
        double total = 0;
        for (int i = 0; i < n; i++) total += cost[i * n + perm[i]];
        return total;
    }
    double best = INFINITY;
    for (int j = 0; j < n; j++) {
        if (used[j]) continue;
        used[j] = 1;
        perm[depth] = j;
        double c = best_by_brute_force(cost, n, perm, depth + 1, used);
        if (c < best) best = c;
        used[j] = 0;
    }
    return best;
}

START_TEST(test_assignment_is_optimal)
{
    unsigned state = 12345;
    for (int trial = 0; trial < 200; trial++) {
        int n = 1 + trial % 7, perm[8], column_of[8];
        double cost[64];
        char used[8] = {0};
        for (int e = 0; e < n * n; e++) {
            state = state * 1103515245u + 12345u;
            cost[e] = (double)((state >> 8) % 21) - 10; /* ties on purpose */
        }
        double best = best_by_brute_force(cost, n, perm, 0, used);
        ck_assert_int_eq(topology_assignment(cost, n, column_of), HS_OK);
        double got = 0;
        char seen[8] = {0};
        for (int i = 0; i < n; i++) {
            ck_assert(!seen[column_of[i]]);
            seen[column_of[i]] = 1;
            got += cost[i * n + column_of[i]];
        }
        ck_assert_msg(got == best, "trial %d: %g, best %g", trial, got, best);
    }
}
END_TEST

static const double two_labels[8] = {1, 0, 1, 0, 0, 1, 0, 1}; /* agents 0, 1: label 0; 2, 3: label 1 */

START_TEST(test_hand_worked_pairs_different_labels)
{
    Topology t;
    double g[11];
    int steps;
    /* budget 1: one step. From W = I, g = (1/4)||Pi - 1 pibar'||^2 + (0.1/4)||I - J||^2
     * = (1/4)(4 x 1/2) + 0.1 x 3/4 = 0.575. The best vertex pairs each agent with one of
     * the other label (S Pi swaps the rows), gamma = 1/2 zeroes the first term, and
     * ||(I + S)/2 - J||^2 = 1, so g = 0.1/4 = 0.025. */
    ck_assert_int_eq(topology_learn(two_labels, 4, 2, 0.1, 1, 10, &t, g, &steps), HS_OK);
    ck_assert_int_eq(steps, 1);
    ck_assert(fabs(g[0] - 0.575) < 1e-15);
    ck_assert(fabs(g[1] - 0.025) < 1e-15);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(topology_degree(&t, i), 1);
        int j = t.adj[t.offsets[i]];
        ck_assert_msg((i < 2) != (j < 2), "agent %d paired with %d of its own label", i, j);
        ck_assert(t.weights[t.offsets[i]] == 0.5);
        ck_assert(t.self_weights[i] == 0.5);
    }
    topology_free(&t);
    /* budget 3 (everyone): g never rises and W tends to 11'/n */
    ck_assert_int_eq(topology_learn(two_labels, 4, 2, 0.1, 3, 10, &t, g, &steps), HS_OK);
    ck_assert_int_ge(steps, 2);
    for (int l = 0; l < steps; l++) ck_assert_msg(g[l + 1] <= g[l], "g rose at step %d: %g -> %g", l, g[l], g[l + 1]);
    ck_assert(g[steps] < 0.025);
    topology_free(&t);
}
END_TEST

/* Dirichlet-like shares: each agent holds one or two of K classes */
static void skewed_shares(double *shares, int n, int K)
{
    unsigned state = 7;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < K; k++) shares[i * K + k] = 0;
        state = state * 1103515245u + 12345u;
        int a = (int)((state >> 8) % (unsigned)K), b = (a + 1 + (int)((state >> 20) % 3)) % K;
        double part = 0.5 + 0.5 * (double)((state >> 4) % 100) / 100;
        shares[i * K + a] += part;
        shares[i * K + b] += 1 - part;
    }
}

START_TEST(test_learned_budget_monotone_deterministic)
{
    enum { N = 24, K = 6 };
    double shares[N * K];
    skewed_shares(shares, N, K);
    for (int budget = 1; budget <= 6; budget++) {
        Topology a, b;
        double g[61];
        int steps, steps_b;
        ck_assert_int_eq(topology_learn(shares, N, K, 0.1, budget, 60, &a, g, &steps), HS_OK);
        ck_assert_int_eq(topology_learn(shares, N, K, 0.1, budget, 60, &b, NULL, &steps_b), HS_OK);
        ck_assert_int_ge(steps, 1);
        ck_assert_int_eq(steps, steps_b);
        for (int l = 0; l < steps; l++) ck_assert(g[l + 1] <= g[l]);
        ck_assert(g[steps] < g[0]);
        for (int i = 0; i < N; i++) {
            ck_assert_int_le(topology_degree(&a, i), budget);
            double row = a.self_weights[i];
            for (int k = a.offsets[i]; k < a.offsets[i + 1]; k++) {
                row += a.weights[k];
                ck_assert(a.weights[k] > 0);
                ck_assert(weight_of(&a, a.adj[k], i) == a.weights[k]); /* symmetric, bitwise */
            }
            ck_assert(fabs(row - 1) < 1e-12);
        }
        ck_assert_int_eq(a.offsets[N], b.offsets[N]);
        ck_assert(memcmp(a.adj, b.adj, (size_t)a.offsets[N] * sizeof *a.adj) == 0);
        ck_assert(memcmp(a.weights, b.weights, (size_t)a.offsets[N] * sizeof *a.weights) == 0);
        ck_assert(memcmp(a.self_weights, b.self_weights, N * sizeof *a.self_weights) == 0);
        topology_free(&a);
        topology_free(&b);
    }
}
END_TEST

START_TEST(test_learned_iterations_bound)
{
    enum { N = 10, K = 4 };
    double shares[N * K];
    skewed_shares(shares, N, K);
    Topology t;
    int steps;
    ck_assert_int_eq(topology_learn(shares, N, K, 0.1, N, 2, &t, NULL, &steps), HS_OK);
    ck_assert_int_le(steps, 2);
    for (int i = 0; i < N; i++) ck_assert_int_le(topology_degree(&t, i), 4); /* two steps, two each at most */
    topology_free(&t);
}
END_TEST

static Suite *topology_learn_suite(void)
{
    Suite *s = suite_create("topology_learn");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_weights_read_back);
    tcase_add_test(tc, test_weights_malformed);
    tcase_add_test(tc, test_assignment_is_optimal);
    tcase_add_test(tc, test_hand_worked_pairs_different_labels);
    tcase_add_test(tc, test_learned_budget_monotone_deterministic);
    tcase_add_test(tc, test_learned_iterations_bound);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(topology_learn_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
