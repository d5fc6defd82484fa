/* check_topology.c — every graph kind: symmetric, doubly stochastic Metropolis–Hastings
 * weights, expected degrees, connectivity, and the edges-file errors; topology_check
 * against the builder (differential: it passes exactly when the build succeeds). */
#include "sim/scenario/topology.h"

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

/* Two random-regular graphs of 30 agents, degree 4, built from the same seed. */
static void build_seeded_pair(Topology *a, Topology *b)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_build_kind(TOPO_RANDOM_REGULAR, 30, 4, "t", 3, a, &diag), 0);
    ck_assert_int_eq(topology_build_kind(TOPO_RANDOM_REGULAR, 30, 4, "t", 3, b, &diag), 0);
}

START_TEST(test_random_regular_is_seeded)
{
    Topology a, b;
    build_seeded_pair(&a, &b);
    ck_assert(memcmp(a.adj, b.adj, (size_t)a.offsets[30] * sizeof *a.adj) == 0);
    topology_free(&a);
    topology_free(&b);
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_build_kind(TOPO_RANDOM_REGULAR, 5, 3, "t.ini", 3, &a, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "even") != NULL);
}
END_TEST

/* topology_drop_weights (a timing run of dpsgd): the weights go, the graph stays as built,
 * and the topology still frees (AddressSanitizer: no double free, no leak). */
START_TEST(test_drop_weights_keeps_the_graph)
{
    Topology a, b;
    build_seeded_pair(&a, &b);
    topology_drop_weights(&b);
    ck_assert(b.weights == NULL && b.self_weights == NULL);
    ck_assert_int_eq(b.n, a.n);
    ck_assert(memcmp(a.offsets, b.offsets, 31 * sizeof *a.offsets) == 0);
    ck_assert(memcmp(a.adj, b.adj, (size_t)a.offsets[30] * sizeof *a.adj) == 0);
    for (int i = 0; i < 30; i++) ck_assert_int_eq(topology_degree(&b, i), 4);
    topology_drop_weights(&b); /* twice: nothing left to free */
    topology_free(&a);
    topology_free(&b);
}
END_TEST

/* What is wrong with t as a simple connected degree-regular graph (rows strictly
 * increasing, no self-loop, every link listed both ways), or NULL. One ck_assert per
 * graph, not per link: each is a write to Check's pipe when it forks. */
static const char *random_regular_fault(const Topology *t, int degree)
{
    for (int i = 0; i < t->n; i++) {
        if (topology_degree(t, i) != degree) return "a degree differs";
        for (int k = t->offsets[i]; k < t->offsets[i + 1]; k++) {
            int j = t->adj[k], back = 0;
            if (j < 0 || j >= t->n || j == i) return "a self-loop or an index out of range";
            if (k > t->offsets[i] && t->adj[k - 1] >= j) return "a row not strictly increasing";
            for (int l = t->offsets[j]; l < t->offsets[j + 1]; l++) back += t->adj[l] == i;
            if (back != 1) return "a link not listed once the other way";
        }
    }
    return topology_connected(t) ? NULL : "disconnected";
}

/* Builds random-regular (n, degree, seed) twice: both simple, regular, connected, equal. */
static void expect_random_regular(int n, int degree, uint64_t seed)
{
    Topology a, b;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(topology_build_kind(TOPO_RANDOM_REGULAR, n, degree, "t.ini", seed, &a, &diag) == HS_OK,
                  "n %d degree %d seed %llu: %s", n, degree, (unsigned long long)seed, diag.message);
    const char *fault = random_regular_fault(&a, degree);
    int built = topology_build_kind(TOPO_RANDOM_REGULAR, n, degree, "t.ini", seed, &b, &diag);
    if (fault == NULL && built != HS_OK) fault = "the second build failed";
    if (fault == NULL && (memcmp(a.offsets, b.offsets, ((size_t)n + 1) * sizeof *a.offsets) != 0 ||
                          memcmp(a.adj, b.adj, (size_t)a.offsets[n] * sizeof *a.adj) != 0))
        fault = "the same seed drew another graph";
    ck_assert_msg(fault == NULL, "n %d degree %d seed %llu: %s", n, degree, (unsigned long long)seed, fault);
    topology_free(&a);
    topology_free(&b);
}

/* Issue: the configuration model was retried whole until simple, which failed from
 * degree 5 on. Every degree topology_check accepts now builds: sparse ones by pairing
 * (with switches when stuck, and components joined), dense ones (2d >= n) as a
 * complement. */
START_TEST(test_random_regular_every_degree)
{
    int built = 0;
    for (int n = 1; n <= 60; n++)
        for (int degree = 0; degree < n; degree++) {
            HsDiag diag;
            hs_diag_clear(&diag);
            if (topology_check(TOPO_RANDOM_REGULAR, n, degree, NULL, "t.ini", 0, &diag) != HS_OK) continue;
            for (uint64_t seed = 1; seed <= 3; seed++) expect_random_regular(n, degree, seed);
            built++;
        }
    /* (1, 0), (2, 1), then degrees 2..n-1 with n·d even: n - 2 of them for even n (870
     * over 4..60), (n - 1)/2 for odd n (435 over 3..59) */
    ck_assert_int_eq(built, 1307);
}
END_TEST

/* Triangles of a simple graph: common later neighbours of each link's ends. */
static long count_triangles(const Topology *t)
{
    long triangles = 0;
    for (int i = 0; i < t->n; i++)
        for (int k = t->offsets[i]; k < t->offsets[i + 1]; k++) {
            int j = t->adj[k];
            if (j < i) continue;
            int p = t->offsets[i], q = t->offsets[j];
            while (p < t->offsets[i + 1] && q < t->offsets[j + 1]) {
                if (t->adj[p] < t->adj[q]) p++;
                else if (t->adj[p] > t->adj[q]) q++;
                else {
                    triangles += t->adj[p] > j;
                    p++;
                    q++;
                }
            }
        }
    return triangles;
}

START_TEST(test_random_regular_large)
{
    expect_random_regular(1000, 8, 1);
    expect_random_regular(10000, 8, 1);
    expect_random_regular(10000, 8, 2);
    expect_random_regular(20000, 2, 1); /* one cycle: the pairing's ~5 joined */
    expect_random_regular(20001, 4, 7);
    expect_random_regular(301, 150, 1); /* the densest sparse draw: 2d = n - 1 */
    expect_random_regular(300, 150, 1); /* complement of a 149-regular draw */
    expect_random_regular(300, 297, 1); /* complement of a 2-regular draw */
    /* a uniform random 8-regular graph has about (d-1)^3/6 = 57 triangles (Poisson) at any
     * n; a ring-like one has thousands (i linked to i±1..4: 6n) */
    Topology t;
    HsDiag diag;
    hs_diag_clear(&diag);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        ck_assert_int_eq(topology_build_kind(TOPO_RANDOM_REGULAR, 10000, 8, "t.ini", seed, &t, &diag), HS_OK);
        long triangles = count_triangles(&t);
        ck_assert_msg(triangles >= 25 && triangles <= 110, "seed %llu: %ld triangles", (unsigned long long)seed,
                      triangles);
        topology_free(&t);
    }
}
END_TEST

static int compare_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Seeds 1..seeds draw every labelled connected degree-regular graph over n <= 8 agents
 * (there are `graphs`), none more than `most` times: all of them are reachable and none
 * is heavily favoured (the draw is near uniform, not exactly). */
static void expect_every_graph_drawn(int n, int degree, int seeds, int graphs, int most)
{
    uint64_t *keys = malloc((size_t)seeds * sizeof *keys); /* (seeds) bit i·n + j: link i-j */
    ck_assert(n <= 8 && keys != NULL);
    for (int s = 0; s < seeds; s++) {
        Topology t;
        HsDiag diag;
        hs_diag_clear(&diag);
        ck_assert_int_eq(topology_build_kind(TOPO_RANDOM_REGULAR, n, degree, "t.ini", (uint64_t)s + 1, &t, &diag),
                         HS_OK);
        keys[s] = 0;
        for (int i = 0; i < n; i++)
            for (int k = t.offsets[i]; k < t.offsets[i + 1]; k++) keys[s] |= 1ULL << (i * n + t.adj[k]);
        topology_free(&t);
    }
    qsort(keys, (size_t)seeds, sizeof *keys, compare_u64);
    int distinct = 0, run = 0, longest = 0;
    for (int s = 0; s < seeds; s++) {
        run = s > 0 && keys[s] == keys[s - 1] ? run + 1 : 1;
        distinct += run == 1;
        if (run > longest) longest = run;
    }
    free(keys);
    ck_assert_msg(distinct == graphs, "n %d degree %d: %d of %d graphs drawn", n, degree, distinct, graphs);
    ck_assert_msg(longest <= most, "n %d degree %d: one graph drawn %d times in %d", n, degree, longest, seeds);
}

START_TEST(test_random_regular_reaches_every_graph)
{
    /* most: 2 to 3.5 times the mean; the draws seen reach 1.3 to 2.1 times it */
    expect_every_graph_drawn(5, 2, 600, 12, 100);  /* 5-cycles: 4!/2 */
    expect_every_graph_drawn(6, 2, 1200, 60, 50);  /* 6-cycles, 5!/2 (two triangles are joined) */
    expect_every_graph_drawn(6, 3, 1400, 70, 50);  /* 60 prisms + 10 K3,3, via the complement */
    expect_every_graph_drawn(6, 4, 600, 15, 80);   /* complements of perfect matchings */
    expect_every_graph_drawn(7, 4, 4000, 465, 30); /* complements of 360 7-cycles, 105 triangle + square */
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
    ck_assert(strstr(diag.message, ": not found") != NULL);
}
END_TEST

/* Issue 21: topology_check succeeds exactly when topology_build_kind does, and when both
 * fail they say the same thing. */
START_TEST(test_check_matches_build)
{
    TopologyKind kinds[] = {TOPO_FULL, TOPO_RING, TOPO_TORUS, TOPO_RANDOM_REGULAR, TOPO_EXPONENTIAL};
    int passed = 0, refused = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (int n = -2; n <= 40; n++)
            for (int degree = -2; degree <= (n > 0 ? n : 0) + 2; degree++)
                for (uint64_t seed = 1; seed <= (kinds[k] == TOPO_RANDOM_REGULAR ? 3u : 1u); seed++) {
                    HsDiag checked, built;
                    hs_diag_clear(&checked);
                    hs_diag_clear(&built);
                    int c = topology_check(kinds[k], n, degree, NULL, "t.ini", 0, &checked);
                    Topology t;
                    int b = topology_build_kind(kinds[k], n, degree, "t.ini", seed, &t, &built);
                    if (b == HS_OK) topology_free(&t);
                    if (c != HS_OK) {
                        ck_assert_int_eq(c, HS_E_INPUT);
                        ck_assert_msg(b == c && strcmp(checked.message, built.message) == 0,
                                      "kind %d n %d degree %d: check '%s', build %d '%s'", kinds[k], n, degree,
                                      checked.message, b, built.message);
                        refused++;
                    } else {
                        ck_assert_msg(b == HS_OK, "kind %d n %d degree %d: check passed, build: %s", kinds[k], n,
                                      degree, built.message);
                        passed++;
                    }
                }
    ck_assert_int_gt(passed, 500);
    ck_assert_int_gt(refused, 500);
}
END_TEST

static void expect_check_error(TopologyKind kind, int n, int degree, const char *message)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_check(kind, n, degree, NULL, "s.ini", 12, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, message);
}

/* The parameter errors name the scenario line the caller gives. */
START_TEST(test_check_parameters)
{
    expect_check_error(TOPO_RANDOM_REGULAR, 8, 9, "s.ini:12: [topology] random-regular needs degree < agents (8), found 9");
    expect_check_error(TOPO_RANDOM_REGULAR, 8, 8, "s.ini:12: [topology] random-regular needs degree < agents (8), found 8");
    expect_check_error(TOPO_RANDOM_REGULAR, 5, 3, "s.ini:12: [topology] random-regular needs agents x degree even, found 5 x 3");
    expect_check_error(TOPO_RANDOM_REGULAR, 8, 1,
                       "s.ini:12: [topology] random-regular with degree 1 cannot connect 8 agents: use degree 2 or more");
    expect_check_error(TOPO_RANDOM_REGULAR, 3, 0, "s.ini:12: [topology] random-regular with degree 0 cannot connect 3 agents: "
                                                  "use degree 2 or more");
    expect_check_error(TOPO_RANDOM_REGULAR, 8, -1, "s.ini:12: [topology] random-regular needs degree >= 0, found -1");
    expect_check_error(TOPO_RANDOM_REGULAR, 100000, 30000, "s.ini:12: [topology] random-regular over 100000 agents has "
                                                           "1500000000 links, more than a topology holds (1073741823)");
    TopologyKind kinds[] = {TOPO_FULL, TOPO_RING, TOPO_TORUS, TOPO_RANDOM_REGULAR, TOPO_EXPONENTIAL, TOPO_FILE};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        expect_check_error(kinds[k], 0, 4, "s.ini:12: [topology] needs at least one agent, found 0");
    expect_check_error(TOPO_FILE, 4, 4, "s.ini:12: [topology] graph = FILE.edges names no file");
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_check(TOPO_RANDOM_REGULAR, 8, 9, NULL, "s.ini", 0, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "s.ini: [topology] random-regular needs degree < agents (8), found 9");
    /* what can be built passes, at once: no draw, whatever the size; degree is read only
     * by random-regular */
    ck_assert_int_eq(topology_check(TOPO_RANDOM_REGULAR, 2, 1, NULL, "s.ini", 12, &diag), HS_OK);
    ck_assert_int_eq(topology_check(TOPO_RANDOM_REGULAR, 1, 0, NULL, "s.ini", 12, &diag), HS_OK);
    ck_assert_int_eq(topology_check(TOPO_RANDOM_REGULAR, 10000000, 6, NULL, "s.ini", 12, &diag), HS_OK);
    ck_assert_int_eq(topology_check(TOPO_EXPONENTIAL, 10000000, 9, NULL, "s.ini", 12, &diag), HS_OK);
    ck_assert_int_eq(topology_check(TOPO_TORUS, 1, 100, NULL, "s.ini", 12, &diag), HS_OK);
    ck_assert_int_eq(topology_check(TOPO_RING, 2, -5, NULL, "s.ini", 12, &diag), HS_OK);
    /* full, the default graph, passes at any size; its builder refuses what CSR cannot hold */
    ck_assert_int_eq(topology_check(TOPO_FULL, 100000, 4, NULL, "s.ini", 12, &diag), HS_OK);
    Topology t;
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_build_kind(TOPO_FULL, 46342, 4, "s.ini", 1, &t, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "s.ini: [topology] full over 46342 agents has 1073767311 links, more than a topology "
                                   "holds (1073741823): give a sparse graph, e.g. random-regular");
}
END_TEST

static char edges_path[64];

static void write_edges(const char *text)
{
    snprintf(edges_path, sizeof edges_path, "/tmp/hetsim-edges-%d.edges", (int)getpid());
    FILE *f = fopen(edges_path, "w");
    fputs(text, f);
    fclose(f);
}

/* Both topology_check and the builder refuse text over n agents with the same message,
 * "path:line: ..." (line 0: "path: ..."), containing fragment. */
static void expect_edges_error(const char *text, int n, int line, const char *fragment)
{
    write_edges(text);
    HsDiag checked, built;
    hs_diag_clear(&checked);
    hs_diag_clear(&built);
    ck_assert_msg(topology_check(TOPO_FILE, n, 4, edges_path, "s.ini", 3, &checked) == HS_E_INPUT, "accepted: %s", text);
    Topology t;
    ck_assert_int_eq(topology_build_kind(TOPO_FILE, n, 4, edges_path, 1, &t, &built), HS_E_INPUT);
    ck_assert_str_eq(checked.message, built.message);
    char prefix[128];
    if (line > 0) snprintf(prefix, sizeof prefix, "%s:%d: ", edges_path, line);
    else snprintf(prefix, sizeof prefix, "%s: ", edges_path);
    ck_assert_msg(strncmp(checked.message, prefix, strlen(prefix)) == 0, "%s", checked.message);
    ck_assert_msg(strstr(checked.message, fragment) != NULL, "%s lacks %s", checked.message, fragment);
    unlink(edges_path);
}

/* Issue 21: a link listed twice was merged silently. */
START_TEST(test_edges_duplicate_links)
{
    expect_edges_error("0 1\n1 2\n0 1\n2 3\n", 4, 3, "link 0-1 is listed twice (first at line 1)");
    expect_edges_error("# a path\n0 1\n1 2\n\n2 3\n1 0 # back\n", 4, 6, "link 1-0 is listed twice (first at line 2)");
    expect_edges_error("2 3\n0 1\n1 2\n3 2\n", 4, 4, "link 3-2 is listed twice (first at line 1)");
    /* the first repeat in file order, before a later bad line */
    expect_edges_error("0 1\n1 0\n0 1\n1 2\nx y\n", 4, 2, "(first at line 1)");
    /* many links: the set grows without losing one */
    char *text = malloc(20000 * 16);
    size_t used = 0;
    for (int i = 0; i + 1 < 20000; i++) used += (size_t)sprintf(text + used, "%d %d\n", i, i + 1);
    sprintf(text + used, "%d %d\n", 12345, 12344);
    expect_edges_error(text, 20000, 20000, "link 12345-12344 is listed twice (first at line 12345)");
    free(text);
}
END_TEST

START_TEST(test_edges_bad_lines)
{
    expect_edges_error("0 1\n1 2 3\n", 4, 2, "expected two agent indices 'I J', found more: '3'");
    expect_edges_error("0 1\n1 2 x\n", 4, 2, "found more: 'x'");
    expect_edges_error("0 1\n1 2\t, \r\n", 4, 2, "found more: ','");
    expect_edges_error("0 1\n1 x\n", 4, 2, "expected two agent indices 'I J'");
    expect_edges_error("a b\n", 4, 1, "expected two agent indices");
    expect_edges_error("0 1\n2\n", 4, 2, "expected two agent indices");
    expect_edges_error("0 1\n1.5 2\n", 4, 2, "expected two agent indices");
    expect_edges_error("0 1\n1,2\n", 4, 2, "expected two agent indices");
    expect_edges_error("0 1\n0x1 2\n", 4, 2, "expected two agent indices");
    expect_edges_error("0 1\n1 2x\n", 4, 2, "expected two agent indices");
    expect_edges_error("0 1\n- 1\n", 4, 2, "expected two agent indices");
    expect_edges_error("0 1\n-1 2\n", 4, 2, "agent index -1 is outside 0..3");
    expect_edges_error("0 1\n2 -3\n", 4, 2, "agent index -3 is outside 0..3");
    expect_edges_error("0 1\n0 4\n", 4, 2, "agent index 4 is outside 0..3");
    expect_edges_error("0 99999999999999999999\n", 4, 1, "agent index 99999999999999999999 is outside 0..3");
    expect_edges_error("0 4294967297\n", 4, 1, "agent index 4294967297 is outside 0..3"); /* not 1 mod 2^32 */
    expect_edges_error("0 1\n2 2\n", 4, 2, "self-loop 2-2");
    char long_line[600];
    memset(long_line, ' ', sizeof long_line);
    memcpy(long_line, "0 1 #", 5);
    long_line[sizeof long_line - 2] = '\n';
    long_line[sizeof long_line - 1] = '\0';
    expect_edges_error(long_line, 4, 1, "line longer than 510 characters");
}
END_TEST

START_TEST(test_edges_whole_file)
{
    /* no links: fine for one agent (any link would be a self-loop), an error for more */
    expect_edges_error("", 4, 0, "no links: 4 agents need at least 3");
    expect_edges_error("# nothing yet\n\n  \t\n", 2, 0, "no links: 2 agents need at least 1");
    expect_edges_error("0 1\n2 3\n", 4, 0, "the graph is disconnected: agent 2 cannot reach agent 0");
    expect_edges_error("1 2\n", 3, 0, "agent 1 cannot reach agent 0");
    HsDiag diag;
    hs_diag_clear(&diag);
    Topology t;
    write_edges("# one agent\n");
    ck_assert_int_eq(topology_check(TOPO_FILE, 1, 4, edges_path, "s.ini", 3, &diag), HS_OK);
    ck_assert_int_eq(topology_build_kind(TOPO_FILE, 1, 4, edges_path, 1, &t, &diag), HS_OK);
    topology_free(&t);
    /* blank lines, comments, tabs, CRLF and signs are fine */
    write_edges("# a star\r\n\r\n0 1\r\n\t0\t2 # tab\n  0 3   \n#\n+0 +4\n");
    ck_assert_int_eq(topology_check(TOPO_FILE, 5, 4, edges_path, "s.ini", 3, &diag), HS_OK);
    ck_assert_int_eq(topology_build_kind(TOPO_FILE, 5, 4, edges_path, 1, &t, &diag), HS_OK);
    ck_assert_int_eq(topology_degree(&t, 0), 4);
    topology_free(&t);
    unlink(edges_path);
    hs_diag_clear(&diag);
    ck_assert_int_eq(topology_check(TOPO_FILE, 5, 4, edges_path, "s.ini", 3, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, ": not found") != NULL);
}
END_TEST

/* Random edges files over 6 agents, good and bad lines mixed: check and build agree. */
START_TEST(test_edges_check_matches_build)
{
    static const char *const odd[] = {"# c", "", "  ", "3 3", "0 6", "-1 2", "1 2 3", "x", "1 2 # c", "\t4 5"};
    unsigned state = 12345;
    int passed = 0;
    for (int file = 0; file < 400; file++) {
        char text[2048];
        size_t used = 0;
        int lines = 1 + (int)((state = state * 1103515245u + 12345u) >> 16) % 12;
        for (int l = 0; l < lines; l++) {
            unsigned r = (state = state * 1103515245u + 12345u) >> 16;
            if (r % 8 == 0) used += (size_t)snprintf(text + used, sizeof text - used, "%s\n", odd[(r / 8) % 10]);
            else used += (size_t)snprintf(text + used, sizeof text - used, "%u %u\n", (r / 8) % 6, (r / 48) % 6);
        }
        write_edges(text);
        HsDiag checked, built;
        hs_diag_clear(&checked);
        hs_diag_clear(&built);
        int c = topology_check(TOPO_FILE, 6, 4, edges_path, "s.ini", 3, &checked);
        Topology t;
        int b = topology_build_kind(TOPO_FILE, 6, 4, edges_path, 1, &t, &built);
        ck_assert_msg(c == b, "%s: check %d '%s', build %d '%s'", text, c, checked.message, b, built.message);
        if (b == HS_OK) {
            ck_assert(topology_connected(&t));
            topology_free(&t);
            passed++;
        } else {
            ck_assert_str_eq(checked.message, built.message);
        }
    }
    ck_assert_int_gt(passed, 0);
    unlink(edges_path);
}
END_TEST

static Suite *topology_suite(void)
{
    Suite *s = suite_create("topology");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_each_kind_is_doubly_stochastic);
    tcase_add_test(tc, test_degrees);
    tcase_add_test(tc, test_random_regular_is_seeded);
    tcase_add_test(tc, test_drop_weights_keeps_the_graph);
    tcase_add_test(tc, test_random_regular_every_degree);
    tcase_add_test(tc, test_random_regular_large);
    tcase_add_test(tc, test_random_regular_reaches_every_graph);
    tcase_add_test(tc, test_edges_file);
    tcase_add_test(tc, test_check_matches_build);
    tcase_add_test(tc, test_check_parameters);
    tcase_add_test(tc, test_edges_duplicate_links);
    tcase_add_test(tc, test_edges_bad_lines);
    tcase_add_test(tc, test_edges_whole_file);
    tcase_add_test(tc, test_edges_check_matches_build);
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
