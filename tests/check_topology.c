/* check_topology.c — every graph kind: symmetric, doubly stochastic Metropolis–Hastings
 * weights, expected degrees, connectivity, and the edges-file errors. */
#include "sim/topology.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double weight_of(const Topology *t, int i, int j)
{
    if (i == j) return t->self_weights[i];
    for (int k = t->offsets[i]; k < t->offsets[i + 1]; k++)
        if (t->adj[k] == j) return t->weights[k];
    return 0;
}

static void assert_doubly_stochastic(const Topology *t)
{
    for (int i = 0; i < t->n; i++) {
        double row = 0, col = 0;
        for (int j = 0; j < t->n; j++) {
            row += weight_of(t, i, j);
            col += weight_of(t, j, i);
            ck_assert(fabs(weight_of(t, i, j) - weight_of(t, j, i)) < 1e-15);
            ck_assert(weight_of(t, i, j) >= 0);
        }
        ck_assert(fabs(row - 1) < 1e-12);
        ck_assert(fabs(col - 1) < 1e-12);
    }
}

START_TEST(test_each_kind_is_doubly_stochastic)
{
    TopologyKind kinds[] = {TOPO_FULL, TOPO_RING, TOPO_TORUS, TOPO_RANDOM_REGULAR, TOPO_EXPONENTIAL};
    int sizes[] = {2, 3, 12, 16, 31};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            int n = sizes[s], degree = 2;
            if (kinds[k] == TOPO_RANDOM_REGULAR && (n <= degree || (n * degree) % 2)) continue;
            Topology t;
            HsDiag diag;
            hs_diag_clear(&diag);
            ck_assert_msg(topology_build_kind(kinds[k], n, degree, "t.ini", 5, &t, &diag) == 0, "%s", diag.message);
            ck_assert(topology_connected(&t));
            assert_doubly_stochastic(&t);
            topology_free(&t);
        }
}
END_TEST

START_TEST(test_degrees)
{
    Topology t;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_build_kind(TOPO_RING, 10, 0, "t", 1, &t, &diag), 0);
    for (int i = 0; i < 10; i++) ck_assert_int_eq(topology_degree(&t, i), 2);
    topology_free(&t);
    ck_assert_int_eq(topology_build_kind(TOPO_TORUS, 16, 0, "t", 1, &t, &diag), 0);
    for (int i = 0; i < 16; i++) ck_assert_int_eq(topology_degree(&t, i), 4);
    topology_free(&t);
    ck_assert_int_eq(topology_build_kind(TOPO_RANDOM_REGULAR, 20, 3, "t", 9, &t, &diag), 0);
    for (int i = 0; i < 20; i++) ck_assert_int_eq(topology_degree(&t, i), 3);
    topology_free(&t);
    ck_assert_int_eq(topology_build_kind(TOPO_EXPONENTIAL, 16, 0, "t", 1, &t, &diag), 0);
    for (int i = 0; i < 16; i++) ck_assert_int_eq(topology_degree(&t, i), 7); /* ±1,±2,±4 and 8 */
    topology_free(&t);
    ck_assert_int_eq(topology_build_kind(TOPO_FULL, 6, 0, "t", 1, &t, &diag), 0);
    ck_assert_int_eq(topology_degree(&t, 3), 5);
    ck_assert(fabs(weight_of(&t, 0, 1) - 1.0 / 6) < 1e-15);
    topology_free(&t);
}
END_TEST

START_TEST(test_random_regular_is_seeded)
{
    Topology a, b;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_build_kind(TOPO_RANDOM_REGULAR, 30, 4, "t", 3, &a, &diag), 0);
    ck_assert_int_eq(topology_build_kind(TOPO_RANDOM_REGULAR, 30, 4, "t", 3, &b, &diag), 0);
    ck_assert(memcmp(a.adj, b.adj, (size_t)a.offsets[30] * sizeof *a.adj) == 0);
    topology_free(&a);
    topology_free(&b);
    ck_assert_int_eq(topology_build_kind(TOPO_RANDOM_REGULAR, 5, 3, "t.ini", 3, &a, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "even") != NULL);
}
END_TEST

START_TEST(test_edges_file)
{
    char path[] = "/tmp/hetsim-edges-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("# a path 0-1-2-3\n0 1\n1 2\n\n2 3  # tail\n", f);
    fclose(f);
    Topology t;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_build_kind(TOPO_FILE, 4, 0, path, 1, &t, &diag), 0);
    ck_assert_int_eq(topology_degree(&t, 1), 2);
    assert_doubly_stochastic(&t);
    topology_free(&t);
    /* disconnected */
    ck_assert_int_eq(topology_build_kind(TOPO_FILE, 5, 0, path, 1, &t, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "disconnected") != NULL);
    /* bad lines name file:line */
    f = fopen(path, "w");
    fputs("0 1\n1 x\n", f);
    fclose(f);
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_build_kind(TOPO_FILE, 4, 0, path, 1, &t, &diag), HS_E_INPUT);
    char expect[128];
    snprintf(expect, sizeof expect, "%s:2:", path);
    ck_assert_msg(strncmp(diag.message, expect, strlen(expect)) == 0, "%s", diag.message);
    f = fopen(path, "w");
    fputs("0 9\n", f);
    fclose(f);
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_build_kind(TOPO_FILE, 4, 0, path, 1, &t, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "outside 0..3") != NULL);
    unlink(path);
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_build_kind(TOPO_FILE, 4, 0, path, 1, &t, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "cannot open") != NULL);
}
END_TEST

static Suite *topology_suite(void)
{
    Suite *s = suite_create("topology");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_each_kind_is_doubly_stochastic);
    tcase_add_test(tc, test_degrees);
    tcase_add_test(tc, test_random_regular_is_seeded);
    tcase_add_test(tc, test_edges_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(topology_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
