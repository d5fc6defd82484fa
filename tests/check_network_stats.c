/* check_network_stats.c — what NetworkStats says the recomputations reached (sim/kernel/network.c):
 * the sizes of S and T, the fillings and the violation checks' scans, counted by hand on
 * small cases. These counters are how the cost of a recomputation is read at scale
 * (docs/results/network.md, "dpsgd's flows, third pass"), so they must count what the
 * solver does, not roughly. */
#include "sim/kernel/network.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static Network *stats_net(int n, const double *up, const double *down)
{
    static const double lat[8] = {0};
    NetworkOptions o = {.n_agents = n, .uplink = up, .downlink = down, .latency = lat, .backbone = INFINITY,
                        .latency_factor = 1, .bandwidth_factor = 1};
    NetworkHooks h = {0};
    Network *net = network_create(&o, &h);
    ck_assert_ptr_nonnull(net);
    return net;
}

static NetworkStats stats_of(const Network *net)
{
    NetworkStats s;
    network_stats(net, &s);
    return s;
}

static void stats_advance(Network *net, double expect)
{
    double t = 0;
    ck_assert_int_eq(network_next_time(net, &t), 0);
    ck_assert(t == expect);
    ck_assert_int_eq(network_advance(net, t), 0);
}

START_TEST(test_one_filling_when_s_is_every_flow)
{
    /* A: 0->2, B: 1->2, C: 1->3, no latency: at 0 all three join their links at once, so S
     * is the three flows and T their four links (up0, down2, up1, down3); one filling, and
     * the violation check judges the four links (entries: 1 + 2 + 2 + 1) and finds no flow
     * outside S */
    double up[] = {10, 4, 100, 100}, down[] = {100, 100, 10, 10};
    Network *net = stats_net(4, up, down);
    ck_assert_int_eq(network_send(net, 0, 0, 2, 80, (NetworkPayload){0}), 0);
    ck_assert_int_eq(network_send(net, 0, 1, 2, 20, (NetworkPayload){0}), 0);
    ck_assert_int_eq(network_send(net, 0, 1, 3, 20, (NetworkPayload){0}), 0);
    stats_advance(net, 0);
    NetworkStats s = stats_of(net);
    ck_assert_uint_eq(s.recomputes, 1);
    ck_assert_uint_eq(s.flows_recomputed, 3);
    ck_assert_uint_eq(s.links_recomputed, 4);
    ck_assert_uint_eq(s.largest_s, 3);
    ck_assert_uint_eq(s.largest_t, 4);
    ck_assert_uint_eq(s.fills, 1);
    ck_assert_uint_eq(s.links_checked, 4);
    ck_assert_uint_eq(s.entries_checked, 6);
    ck_assert_uint_eq(s.expansions, 0);
    network_free(net);
}
END_TEST

START_TEST(test_s_grows_by_a_violated_link)
{
    /* X: 0->2 and Y: 1->2 share down2 (10); up1 (4) holds Y at 4, X takes 6 at down2. Z:
     * 1->3 comes at 1: the dirty links are up1 and down3, so S = {Y, Z} and T = {up1, down2,
     * down3}; the first filling gives Y and Z 2 each at up1, which leaves down2 unsaturated
     * under X (held there): down2 is violated and X joins, bringing up0. The second filling
     * over S = {X, Y, Z}, T of four links, gives X 8 and finds nothing more. The checks
     * judged 3 links (entries 2 + 2 + 1), then 4 (the same and up0's one). */
    double up[] = {10, 4, 100, 100}, down[] = {100, 100, 10, 10};
    Network *net = stats_net(4, up, down);
    ck_assert_int_eq(network_send(net, 0, 0, 2, 100, (NetworkPayload){0}), 0);
    ck_assert_int_eq(network_send(net, 0, 1, 2, 100, (NetworkPayload){0}), 0);
    stats_advance(net, 0);
    NetworkStats before = stats_of(net);
    ck_assert_uint_eq(before.recomputes, 1);
    ck_assert_uint_eq(before.largest_s, 2);
    ck_assert_uint_eq(before.largest_t, 3);
    ck_assert_int_eq(network_send(net, 1, 1, 3, 100, (NetworkPayload){0}), 0);
    stats_advance(net, 1);
    NetworkStats after = stats_of(net);
    ck_assert_uint_eq(after.recomputes - before.recomputes, 1);
    ck_assert_uint_eq(after.flows_recomputed - before.flows_recomputed, 3);
    ck_assert_uint_eq(after.links_recomputed - before.links_recomputed, 4);
    ck_assert_uint_eq(after.fills - before.fills, 2);
    ck_assert_uint_eq(after.expansions - before.expansions, 1);
    ck_assert_uint_eq(after.links_checked - before.links_checked, 3 + 4);
    ck_assert_uint_eq(after.entries_checked - before.entries_checked, 5 + 6);
    ck_assert_uint_eq(after.largest_s, 3);
    ck_assert_uint_eq(after.largest_t, 4);
    char why[256];
    ck_assert_msg(network_check(net, 1e-12, why, sizeof why) == 0, "%s", why);
    network_free(net);
}
END_TEST

static void scratch_done(void *ctx, const NetworkPayload *p, double t)
{
    ((double *)ctx)[p->data] = t;
}

START_TEST(test_scratch_given_back_after_a_whole_graph_recomputation)
{
    /* A ring of N = 70,000 agents, i -> i + 1, all at 0 without latency: one recomputation
     * over every flow and link (S past 65,536, the scratch's keep), which gives its scratch
     * back. Each flow is held at its sender's uplink (10 of 100 down): 100 bytes end at 10.
     * At 5 a second flow B leaves agent 0 (to 2) and must be solved on regrown scratch: up0
     * splits 5 and 5, so A = 0 -> 1 (50 left) ends at 15 and B, 50 left then alone at 10,
     * at 20. Fails when the scratch is kept (no release counted) or given back wrongly (a
     * recomputation on freed arrays: ASan, or wrong times). */
    enum { N = 70000 };
    double *up = malloc(N * sizeof *up), *down = malloc(N * sizeof *down), *lat = calloc(N, sizeof *lat);
    double *done = malloc((N + 1) * sizeof *done);
    ck_assert(up && down && lat && done);
    for (int i = 0; i < N; i++) up[i] = 10, down[i] = 100;
    for (int i = 0; i <= N; i++) done[i] = -1;
    NetworkOptions o = {.n_agents = N, .uplink = up, .downlink = down, .latency = lat, .backbone = INFINITY,
                        .latency_factor = 1, .bandwidth_factor = 1};
    NetworkHooks h = {.ctx = done, .done = scratch_done};
    Network *net = network_create(&o, &h);
    ck_assert_ptr_nonnull(net);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(network_send(net, 0, i, (i + 1) % N, 100, (NetworkPayload){.data = i}), 0);
    stats_advance(net, 0); /* their latency (none) ends: they join their links */
    double t = -1;
    ck_assert_int_eq(network_next_time(net, &t), 0);
    ck_assert(t == 10);
    NetworkStats s = stats_of(net);
    ck_assert_uint_eq(s.recomputes, 1);
    ck_assert_uint_eq(s.largest_s, N);
    ck_assert_uint_eq(s.scratch_released, 1);
    ck_assert_int_eq(network_advance(net, 5), 0);
    ck_assert_int_eq(network_send(net, 5, 0, 2, 100, (NetworkPayload){.data = N}), 0);
    for (;;) {
        ck_assert_int_eq(network_next_time(net, &t), 0);
        if (!(t < INFINITY)) break;
        ck_assert_int_eq(network_advance(net, t), 0);
        char why[256];
        ck_assert_msg(network_check(net, 1e-12, why, sizeof why) == 0, "%s", why);
    }
    ck_assert(done[0] == 15);
    ck_assert(done[N] == 20);
    for (int i = 1; i < N; i++) ck_assert(done[i] == 10);
    s = stats_of(net);
    ck_assert_uint_eq(s.scratch_released, 1); /* the later recomputations stay small */
    network_free(net);
    free(up);
    free(down);
    free(lat);
    free(done);
}
END_TEST

static Suite *network_stats_suite(void)
{
    Suite *s = suite_create("network_stats");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_one_filling_when_s_is_every_flow);
    tcase_add_test(tc, test_s_grows_by_a_violated_link);
    tcase_add_test(tc, test_scratch_given_back_after_a_whole_graph_recomputation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(network_stats_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
