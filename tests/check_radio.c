/* check_radio.c — the radio's two powers (power_tx, power_rx; docs/energy.md, radio.h)
 * against hand-worked joules. Agent 0 sends 2 MB to agent 1 from t = 0 and agent 2 sends it
 * 1 MB from t = 1.5 s, every link 1 MB/s and no latency, so agent 0 sends over [0, 2) and
 * receives over [1.5, 2.5): 1.5 s sending only, 0.5 s both, 0.5 s receiving only. At
 * power_tx = 3 W and power_rx = 1 W the half-duplex rule charges 3 x 1.5 + max(3, 1) x 0.5 +
 * 1 x 0.5 = 6.5 J; the other way round 1 x 1.5 + 3 x 0.5 + 3 x 0.5 = 4.5 J; with a
 * computation over [0, 1) (charged power_compute alone) 3 x 1 + 1 x 0.5 = 3.5 J; under fifo
 * (a receiver's downlink is not booked) 3 x 2 = 6 J; with equal powers P x 2.5, bit for bit.
 * Then whole runs: a ring all-reduce sends and receives at once, so every agent's comm_j is
 * the larger power x its communicating time, under maxmin (closed-form rings, reported as
 * periodic sets per direction) and fifo alike, and power_tx = power_rx = power_comm gives
 * the rows of power_comm bit for bit. */
#include "sim/kernel/engine.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ARRIVED = ENGINE_EVENT_METHOD, SEND_LATER, COMPUTED };

typedef struct Play {
    Engine *e;
    int arrived;
} Play;

static int on_event(void *ctx, const Event *ev)
{
    Play *p = ctx;
    if (ev->kind == SEND_LATER) return engine_send(p->e, 2, 0, 1e6, ARRIVED, 0);
    if (ev->kind == ARRIVED && ++p->arrived == 2) engine_end_round(p->e);
    return HS_OK;
}

typedef struct Case {
    int maxmin;
    double power_tx, power_rx; /* agent 0's */
    int compute;               /* agent 0 computes 1 s from t = 0 */
} Case;

/* Plays the case's round; returns agent 0's comm_j (its row's other figures in *row). */
static double play(const Case *c, SinkAgentRound *row)
{
    EngineNode nodes[3];
    for (int i = 0; i < 3; i++)
        nodes[i] = (EngineNode){.compute = 1e9, .uplink = 1e6, .downlink = 1e6, .latency = 0};
    nodes[0].power_tx = c->power_tx;
    nodes[0].power_rx = c->power_rx;
    TestSink ts;
    HsDiag diag;
    hs_diag_clear(&diag);
    Play p = {0};
    EngineConfig config = {.n_agents = 3, .nodes = nodes, .sink = test_sink_init(&ts),
                           .network = {.maxmin = c->maxmin, .backbone = INFINITY},
                           .handler = on_event, .handler_ctx = &p, .diag = &diag};
    ck_assert_int_eq(engine_create(&config, &p.e), HS_OK);
    engine_begin_round(p.e, 0);
    ck_assert_int_eq(engine_send(p.e, 0, 1, 2e6, ARRIVED, 0), HS_OK);
    ck_assert_int_eq(engine_schedule(p.e, 1.5, SEND_LATER, 2, 0), HS_OK);
    if (c->compute) ck_assert_int_eq(engine_compute(p.e, 0, 1e9, COMPUTED, 0, NULL), HS_OK);
    ck_assert_int_eq(engine_play(p.e), HS_OK);
    ck_assert_msg(engine_now(p.e) == 2.5, "the round ends at %.17g", engine_now(p.e));
    ck_assert_int_eq(engine_report_round(p.e, NAN), HS_OK);
    ck_assert_int_eq(ts.n_agent_round_rows, 3);
    *row = ts.agent_round_rows[0];
    engine_free(p.e);
    test_sink_free(&ts);
    return row->comm_j;
}

static void near(double got, double expected, const char *what)
{
    ck_assert_msg(fabs(got - expected) <= 1e-12 * (fabs(expected) > 1 ? fabs(expected) : 1), "%s: %.17g J, expected %.17g J",
                  what, got, expected);
}

START_TEST(test_sending_dearer_than_receiving)
{
    SinkAgentRound row;
    near(play(&(Case){.maxmin = 1, .power_tx = 3, .power_rx = 1}, &row), 6.5, "tx 3 W, rx 1 W");
    near(row.comm_s, 2.5, "comm_s, both directions united");
    near(row.compute_j, 0, "compute_j");
}
END_TEST

START_TEST(test_receiving_dearer_than_sending)
{
    SinkAgentRound row;
    near(play(&(Case){.maxmin = 1, .power_tx = 1, .power_rx = 3}, &row), 4.5, "tx 1 W, rx 3 W");
    /* one direction free: only the other is charged, and the overlap at its power */
    near(play(&(Case){.maxmin = 1, .power_tx = 3, .power_rx = 0}, &row), 6.0, "tx 3 W, rx 0 W");
    near(play(&(Case){.maxmin = 1, .power_tx = 0, .power_rx = 3}, &row), 3.0, "tx 0 W, rx 3 W");
}
END_TEST

START_TEST(test_computing_takes_precedence)
{
    /* [0, 1) computing: power_compute (0 here) alone; [1, 1.5) sending only, [1.5, 2)
     * both, [2, 2.5) receiving only */
    SinkAgentRound row;
    near(play(&(Case){.maxmin = 1, .power_tx = 3, .power_rx = 1, .compute = 1}, &row), 3 * 1.0 + 1 * 0.5,
         "tx 3 W, rx 1 W, computing 1 s");
    near(row.compute_s, 1, "compute_s");
    near(play(&(Case){.maxmin = 1, .power_tx = 1, .power_rx = 3, .compute = 1}, &row), 3 * 1.0 + 1 * 0.5,
         "tx 1 W, rx 3 W, computing 1 s");
}
END_TEST

START_TEST(test_fifo_books_the_sender_only)
{
    SinkAgentRound row;
    near(play(&(Case){.maxmin = 0, .power_tx = 3, .power_rx = 1}, &row), 6.0, "fifo, tx 3 W, rx 1 W");
    near(play(&(Case){.maxmin = 0, .power_tx = 1, .power_rx = 3}, &row), 2.0, "fifo, tx 1 W, rx 3 W");
}
END_TEST

START_TEST(test_equal_powers_are_one_product)
{
    SinkAgentRound row;
    for (int maxmin = 0; maxmin < 2; maxmin++) {
        double j = play(&(Case){.maxmin = maxmin, .power_tx = 2, .power_rx = 2}, &row);
        ck_assert_msg(j == 2 * (maxmin ? 2.5 : 2.0), "%s: %.17g", maxmin ? "maxmin" : "fifo", j);
    }
}
END_TEST

/* 4 agents, 2 of them 4x slower, a ring all-reduce per step (tests/cli/energy.sh's fleet). */
static const char *fleet =
    "[run]\nmethod = sync\nrounds = 2\nmode = timing\nseed = 3\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 512\ntest_samples = 128\n"
    "[model]\narch = mlp\nlayers = 16,32,4\nbatch = 16\n"
    "[agents]\ncount = 4\ncompute = 20 MFLOPS\nbandwidth = 2 MB/s\nlatency = 2 ms\n"
    "[agents.slow]\ncount = 2\ncompute = 5 MFLOPS\n";

static void run_fleet(const char *const *set, int n, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(fleet, set, n, ts, &diag);
    ck_assert_msg(status == HS_OK, "%s", diag.message);
}

START_TEST(test_ring_sends_and_receives_at_once)
{
    for (int maxmin = 0; maxmin < 2; maxmin++)
        for (int high_tx = 0; high_tx < 2; high_tx++) {
            const char *set[] = {maxmin ? "network.model=maxmin" : "network.model=fifo",
                                 high_tx ? "agents.power_tx=3 W" : "agents.power_tx=1 W",
                                 high_tx ? "agents.power_rx=1 W" : "agents.power_rx=3 W"};
            TestSink ts;
            run_fleet(set, 3, &ts);
            const SinkRound *round = &ts.round_rows[ts.rounds - 1];
            for (int i = 0; i < ts.n_agent_round_rows; i++) {
                const SinkAgentRound *a = &ts.agent_round_rows[i];
                double comm = (round->t_end - round->t_start) - a->idle_s - a->offline_s - a->compute_s;
                ck_assert(comm > 0);
                near(a->comm_j, 3 * comm, maxmin ? "maxmin ring" : "fifo ring");
            }
            test_sink_free(&ts);
        }
}
END_TEST

START_TEST(test_power_comm_is_both)
{
    for (int maxmin = 0; maxmin < 2; maxmin++) {
        const char *model = maxmin ? "network.model=maxmin" : "network.model=fifo";
        const char *one[] = {model, "agents.power_comm=1.5 W", "agents.power_compute=2 W"};
        const char *two[] = {model, "agents.power_tx=1500 mW", "agents.power_rx=1.5 W", "agents.power_compute=2 W"};
        TestSink a, b;
        run_fleet(one, 3, &a);
        run_fleet(two, 4, &b);
        ck_assert_msg(strcmp(a.text, b.text) == 0, "power_tx = power_rx = power_comm: other rows");
        ck_assert(a.n_agent_round_rows == 4 && a.agent_round_rows[0].comm_j > 0);
        test_sink_free(&a);
        test_sink_free(&b);
    }
}
END_TEST

static Suite *radio_suite(void)
{
    Suite *s = suite_create("radio");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sending_dearer_than_receiving);
    tcase_add_test(tc, test_receiving_dearer_than_sending);
    tcase_add_test(tc, test_computing_takes_precedence);
    tcase_add_test(tc, test_fifo_books_the_sender_only);
    tcase_add_test(tc, test_equal_powers_are_one_product);
    tcase_add_test(tc, test_ring_sends_and_receives_at_once);
    tcase_add_test(tc, test_power_comm_is_both);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(radio_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
