/* check_engine.c — the cost model against closed forms, FIFO uplinks, determinism and a
 * golden whole-scenario result. */
#include "sim/kernel/collective.h"
#include "sim/kernel/engine.h"
#include "sim/run.h"
#include "tests/test_files.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run_text(const char *text, const char *const *overrides, int n, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(text, overrides, n, ts, &diag);
    if (status != 0) fprintf(stderr, "%s\n", diag.message);
    return status;
}

/* 4 agents, one at half speed; 640 samples each = 10 steps of 64. */
static const char *two_speed =
    "[run]\nmethod = sync\nrounds = 1\nmode = timing\n"
    "[model]\nlayers = 784,256,128,10\nbatch = 64\n"
    "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 0 s\nsamples = 640\n"
    "[agents.slow]\ncount = 1\ncompute = 500 MFLOPS\n";

static double step_flops(int batch, const int *sizes, int n)
{
    ModelSpec spec = {.arch = MODEL_ARCH_MLP, .n_sizes = n, .classes = sizes[n - 1], .batch = batch};
    memcpy(spec.sizes, sizes, (size_t)n * sizeof *sizes);
    ModelProfile p;
    ck_assert_int_eq(model_profile(&spec, &p), 0);
    return batch * (p.total_flops + p.loss_flops);
}

static double model_bytes(const int *sizes, int n)
{
    double params = 0;
    for (int i = 0; i + 1 < n; i++) params += (double)sizes[i] * sizes[i + 1] + sizes[i + 1];
    return 4 * params;
}

START_TEST(test_sync_round_time_and_idle_closed_form)
{
    TestSink ts;
    ck_assert_int_eq(run_text(two_speed, NULL, 0, &ts), 0);
    int sizes[] = {784, 256, 128, 10};
    double f = step_flops(64, sizes, 4), bytes = model_bytes(sizes, 4);
    double fast = f / 1e9, slow = f / 5e8;
    double reduce = 2.0 * 3 * (bytes / 4 / 10e6);
    double round = 10 * (slow + reduce);
    ck_assert_int_eq(ts.rounds, 1);
    ck_assert_msg(fabs(ts.last_t_end - round) < 1e-9 * round, "round %.17g expected %.17g", ts.last_t_end, round);
    /* A fast agent idles (slow - fast) every step; the slow one never does. */
    ck_assert(fabs(ts.agent_round_rows[0].idle_s - 10 * (slow - fast)) < 1e-9);
    ck_assert(fabs(ts.agent_round_rows[3].idle_s) < 1e-9);
    ck_assert(fabs(ts.agent_round_rows[0].compute_s - 10 * fast) < 1e-9);
    ck_assert(fabs(ts.agent_round_rows[0].comm_s - 10 * reduce) < 1e-9);
    /* Idle share of the fleet: 3 fast agents idle (slow - fast) of (slow + reduce). */
    double share = ts.round_rows[0].idle_s / (4 * round);
    double expected = 3 * (slow - fast) / (4 * (slow + reduce));
    ck_assert(fabs(share - expected) < 1e-12);
    ck_assert(fabs(ts.round_rows[0].bytes - 10 * 2.0 * 3 * bytes) < 1e-3);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_sync_deadline_drops_the_straggler)
{
    /* deadline 0: the step's all-reduce starts when the fast agents are done; the slow
     * agent never makes it and each step averages the other three */
    const char *set[] = {"method.deadline=0 s"};
    TestSink ts;
    ck_assert_int_eq(run_text(two_speed, set, 1, &ts), 0);
    int sizes[] = {784, 256, 128, 10};
    double f = step_flops(64, sizes, 4), bytes = model_bytes(sizes, 4);
    double round = 10 * (f / 1e9 + 2.0 * 2 * (bytes / 3 / 10e6));
    ck_assert_msg(fabs(ts.last_t_end - round) < 1e-9 * round, "round %.17g expected %.17g", ts.last_t_end, round);
    ck_assert(ts.round_rows[0].extra == 10); /* ten agent-steps left out */
    test_sink_free(&ts);
    /* a generous deadline changes nothing against waiting for everyone */
    const char *patient[] = {"method.deadline=1 h"};
    TestSink a, b;
    ck_assert_int_eq(run_text(two_speed, patient, 1, &a), 0);
    ck_assert_int_eq(run_text(two_speed, NULL, 0, &b), 0);
    ck_assert(fabs(a.last_t_end - b.last_t_end) < 1e-12 * b.last_t_end);
    ck_assert(a.round_rows[0].extra == 0);
    test_sink_free(&a);
    test_sink_free(&b);
    const char *bad[] = {"method.deadline=soon"};
    ck_assert_int_eq(run_text(two_speed, bad, 1, &a), HS_E_INPUT);
    test_sink_free(&a);
}
END_TEST

START_TEST(test_allreduce_latency_term)
{
    const char *set[] = {"agents.latency=10 ms", "agents.slow.count=0"};
    TestSink ts;
    ck_assert_int_eq(run_text(two_speed, set, 2, &ts), 0);
    int sizes[] = {784, 256, 128, 10};
    double f = step_flops(64, sizes, 4), bytes = model_bytes(sizes, 4);
    double reduce = 2.0 * 3 * (bytes / 4 / 10e6 + 0.010);
    double round = 10 * (f / 1e9 + reduce);
    ck_assert(fabs(ts.last_t_end - round) < 1e-9 * round);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_localsgd_epoch_waits_for_longest_epoch)
{
    const char *set[] = {"run.method=localsgd", "agents.slow.compute=1 GFLOPS", "agents.slow.samples=1280"};
    TestSink ts;
    ck_assert_int_eq(run_text(two_speed, set, 3, &ts), 0);
    int sizes[] = {784, 256, 128, 10};
    double f = step_flops(64, sizes, 4), bytes = model_bytes(sizes, 4);
    double round = 20 * f / 1e9 + 2.0 * 3 * (bytes / 4 / 10e6);
    ck_assert(fabs(ts.last_t_end - round) < 1e-9 * round);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_localsgd_numeric_period)
{
    /* S = 10 steps, H = 4: periods of 4, 4, 2 steps, three averagings. */
    const char *set[] = {"run.method=localsgd", "method.local_steps=4", "agents.slow.count=0"};
    TestSink ts;
    ck_assert_int_eq(run_text(two_speed, set, 3, &ts), 0);
    int sizes[] = {784, 256, 128, 10};
    double f = step_flops(64, sizes, 4), bytes = model_bytes(sizes, 4);
    double round = 10 * f / 1e9 + 3 * 2.0 * 3 * (bytes / 4 / 10e6);
    ck_assert(fabs(ts.last_t_end - round) < 1e-9 * round);
    test_sink_free(&ts);
}
END_TEST

/* LSGD by hand: 3 agents (one of them at half speed), 10 steps a round, an election every
 * period steps. A period: the slow agent's steps; the election, a ring all-gather of
 * 8-byte losses whose last block leaves the slow agent when it is done and takes N-1 = 2
 * hops of latency + 8 B / bandwidth (the fast agents' blocks travelled while it computed);
 * then the leader's model, a ring all-reduce among 3: 2(N-1) = 4 steps of B/3 bytes. */
START_TEST(test_lsgd_round_closed_form)
{
    static const char *three =
        "[run]\nmethod = lsgd\nrounds = 1\nmode = timing\n"
        "[model]\nlayers = 784,256,128,10\nbatch = 64\n"
        "[agents]\ncount = 3\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\nsamples = 640\n"
        "[agents.slow]\ncount = 1\ncompute = 500 MFLOPS\n";
    int sizes[] = {784, 256, 128, 10};
    double f = step_flops(64, sizes, 4), bytes = model_bytes(sizes, 4), latency = 0.001, bw = 10e6;
    double election = 2 * (latency + 8 / bw), broadcast = 4 * (bytes / 3 / bw + latency);
    static const char *const periods[] = {"method.period=2", "method.period=4"};
    /* period 2: five periods of 2 steps; period 4: 4, 4, 2 steps, three elections */
    double expected[] = {5 * (2 * f / 5e8 + election + broadcast), 10 * f / 5e8 + 3 * (election + broadcast)};
    for (int k = 0; k < 2; k++) {
        TestSink ts;
        ck_assert_int_eq(run_text(three, &periods[k], 1, &ts), 0);
        ck_assert_msg(fabs(ts.last_t_end - expected[k]) < 1e-9 * expected[k], "%s: round %.17g expected %.17g",
                      periods[k], ts.last_t_end, expected[k]);
        /* bytes: each election 3 blocks x 2 hops x 8 B, each broadcast 3 x 4 steps x B/3 */
        double elections = k == 0 ? 5 : 3;
        ck_assert(fabs(ts.round_rows[0].bytes - elections * (3 * 2 * 8 + 4 * bytes)) < 1e-3);
        test_sink_free(&ts);
    }
    /* leaders = groups, a global election every second one: the two fast agents ([agents])
     * get their group leader's model by a ring all-reduce among 2 (2 steps of B/2) at every
     * election; the slow agent is alone in its group; elections 2 and 4 of 5 are global */
    const char *grouped[] = {"method.period=2", "method.leaders=groups", "method.global_every=2"};
    double group = 2 * (bytes / 2 / bw + latency);
    double expected_grouped = 5 * (2 * f / 5e8 + election + group) + 2 * broadcast;
    TestSink ts;
    ck_assert_int_eq(run_text(three, grouped, 3, &ts), 0);
    ck_assert_msg(fabs(ts.last_t_end - expected_grouped) < 1e-9 * expected_grouped, "groups: round %.17g expected %.17g",
                  ts.last_t_end, expected_grouped);
    ck_assert(fabs(ts.round_rows[0].bytes - (5 * (3 * 2 * 8 + 2 * bytes) + 2 * 4 * bytes)) < 1e-3);
    test_sink_free(&ts);
}
END_TEST

/* EngineHandler of the hand-driven engines below: records each event. */
typedef struct Seen {
    Engine *e; /* end_at_first's */
    Event events[16];
    int n;
} Seen;

static int record_event(void *ctx, const Event *event)
{
    Seen *seen = ctx;
    if (seen->n < 16) seen->events[seen->n++] = *event;
    return HS_OK;
}

START_TEST(test_send_is_fifo_on_the_uplink)
{
    EngineNode nodes[2] = {{.compute = 1e9, .uplink = 1e6, .downlink = 1e6, .latency = 0.01},
                           {.compute = 1e9, .uplink = 1e6, .downlink = 5e5, .latency = 0.002}};
    HsDiag diag;
    hs_diag_clear(&diag);
    TestSink ts;
    Seen seen = {.n = 0};
    EngineConfig config = {.n_agents = 2, .nodes = nodes, .network = {.maxmin = 0}, .sink = test_sink_init(&ts),
                           .handler = record_event, .handler_ctx = &seen, .diag = &diag};
    Engine *e;
    ck_assert_int_eq(engine_create(&config, &e), HS_OK);
    engine_begin_round(e, 0);
    /* bottleneck = receiver downlink 5e5 B/s; latency = max(10 ms, 2 ms) */
    ck_assert_int_eq(engine_send(e, 0, 1, 1e5, 99, 0), HS_OK);
    ck_assert_int_eq(engine_send(e, 0, 1, 1e5, 99, 1), HS_OK);
    /* compute queues FIFO on the processor, independent of the uplink */
    double c1, c2;
    ck_assert_int_eq(engine_compute(e, 0, 1e9, 98, 0, &c1), HS_OK);
    ck_assert_int_eq(engine_compute(e, 0, 5e8, 98, 1, &c2), HS_OK);
    ck_assert(fabs(c1 - 1.0) < 1e-12 && fabs(c2 - 1.5) < 1e-12);
    ck_assert_int_eq(engine_play(e), HS_OK);
    /* arrivals at 0.2 + 0.01 and 0.4 + 0.01, to agent 1; then the computations */
    ck_assert_int_eq(seen.n, 4);
    ck_assert(seen.events[0].kind == 99 && seen.events[0].agent == 1 && fabs(seen.events[0].time - 0.21) < 1e-12);
    ck_assert(seen.events[1].kind == 99 && seen.events[1].data == 1 && fabs(seen.events[1].time - 0.41) < 1e-12);
    ck_assert(seen.events[2].kind == 98 && fabs(seen.events[2].time - 1.0) < 1e-12);
    ck_assert(seen.events[3].kind == 98 && fabs(seen.events[3].time - 1.5) < 1e-12);
    /* the uplink was booked 0.4 s: the round's agent_rounds row says so */
    ck_assert_int_eq(engine_report_round(e, NAN), HS_OK);
    ck_assert(ts.n_agent_round_rows == 2 && fabs(ts.agent_round_rows[0].comm_s - 0.4) < 1e-12);
    engine_free(e);
    test_sink_free(&ts);
}
END_TEST

/* A handler that ends the round at its first event (and records it). */
static int end_at_first(void *ctx, const Event *event)
{
    Seen *seen = ctx;
    if (seen->n < 16) seen->events[seen->n++] = *event;
    engine_end_round(seen->e);
    return HS_OK;
}

/* fifo keeps each node's busy union past its AgentClock (network_fifo.c, FifoClock), and
 * opens it again at every round's begin. Round 0: node 0 computes 2 s, node 1 0.5 s; the
 * round ends at 0.5 with node 0's computation booked to 2 s (counted whole in round 0).
 * Round 1 at 0.5: node 0 sends 1e5 B at 1e6 B/s, [0.5, 0.6] on its uplink, ending the
 * round at 0.6 + 10 ms. That span is round 1's busy time: 0.1 s, idle 0.01 s. A union
 * not opened again would clip it at round 0's 2 s (idle 0.11 s). */
START_TEST(test_fifo_busy_union_opens_each_round)
{
    EngineNode nodes[2] = {{.compute = 1e9, .uplink = 1e6, .downlink = 1e6, .latency = 0.01},
                           {.compute = 1e9, .uplink = 1e6, .downlink = 1e6, .latency = 0.002}};
    HsDiag diag;
    hs_diag_clear(&diag);
    TestSink ts;
    Seen seen = {.n = 0};
    EngineConfig config = {.n_agents = 2, .nodes = nodes, .network = {.maxmin = 0}, .sink = test_sink_init(&ts),
                           .handler = end_at_first, .handler_ctx = &seen, .diag = &diag};
    ck_assert_int_eq(engine_create(&config, &seen.e), HS_OK);
    Engine *e = seen.e;
    engine_begin_round(e, 0);
    ck_assert_int_eq(engine_compute(e, 0, 2e9, 98, 0, NULL), HS_OK);
    ck_assert_int_eq(engine_compute(e, 1, 5e8, 97, 0, NULL), HS_OK);
    ck_assert_int_eq(engine_play(e), HS_OK);
    ck_assert(seen.n == 1 && seen.events[0].kind == 97 && seen.events[0].time == 0.5);
    ck_assert_int_eq(engine_report_round(e, NAN), HS_OK);
    engine_begin_round(e, 1);
    ck_assert_int_eq(engine_send(e, 0, 1, 1e5, 99, 0), HS_OK);
    ck_assert_int_eq(engine_play(e), HS_OK);
    ck_assert(seen.n == 2 && seen.events[1].kind == 99 && fabs(seen.events[1].time - 0.61) < 1e-12);
    ck_assert_int_eq(engine_report_round(e, NAN), HS_OK);
    ck_assert_int_eq(ts.n_agent_round_rows, 2); /* the last round's */
    const SinkAgentRound *r = &ts.agent_round_rows[0];
    ck_assert(r->round == 1 && r->agent == 0);
    ck_assert(fabs(r->comm_s - 0.1) < 1e-12 && r->compute_s == 0);
    ck_assert_msg(fabs(r->idle_s - 0.01) < 1e-12, "idle %.17g", r->idle_s);
    engine_free(e);
    test_sink_free(&ts);
}
END_TEST

/* The nodes' rates read in place (EngineConfig.rates_at) from records of another layout
 * than EngineRates: the same events at the same times as the engine's own copy, under
 * both models; records that differ from the nodes are refused (HS_E_INTERNAL). */
typedef struct OtherRecord {
    int tag;
    double latency, downlink, compute, uplink;
    char padding[3];
} OtherRecord;

/* Records, and ends the round at the third event. */
static int end_at_third(void *ctx, const Event *event)
{
    Seen *seen = ctx;
    if (seen->n < 16) seen->events[seen->n++] = *event;
    if (seen->n == 3) engine_end_round(seen->e);
    return HS_OK;
}

static void rates_play(int maxmin, const OtherRecord *records, Seen *seen, double *row_comm)
{
    EngineNode nodes[2] = {{.compute = 1e9, .uplink = 1e6, .downlink = 1e6, .latency = 0.01},
                           {.compute = 2e9, .uplink = 3e5, .downlink = 5e5, .latency = 0.002}};
    HsDiag diag;
    hs_diag_clear(&diag);
    TestSink ts;
    EngineConfig config = {.n_agents = 2, .nodes = nodes, .network = {.maxmin = maxmin, .backbone = INFINITY}, .sink = test_sink_init(&ts),
                           .handler = end_at_third, .handler_ctx = seen, .diag = &diag};
    if (records)
        config.rates_at = (EngineRatesAt){.base = records, .stride = sizeof *records,
                                          .compute = offsetof(OtherRecord, compute),
                                          .uplink = offsetof(OtherRecord, uplink),
                                          .downlink = offsetof(OtherRecord, downlink),
                                          .latency = offsetof(OtherRecord, latency)};
    ck_assert_int_eq(engine_create(&config, &seen->e), HS_OK);
    Engine *e = seen->e;
    engine_begin_round(e, 0);
    ck_assert_int_eq(engine_send(e, 0, 1, 1e5, 99, 0), HS_OK);
    ck_assert_int_eq(engine_send(e, 1, 0, 2e5, 99, 1), HS_OK);
    ck_assert_int_eq(engine_compute(e, 1, 1e9, 98, 0, NULL), HS_OK);
    int played = engine_play(e);
    ck_assert_msg(played == HS_OK, "maxmin %d: %s", maxmin, diag.message);
    ck_assert_int_eq(engine_report_round(e, NAN), HS_OK);
    ck_assert_int_eq(ts.n_agent_round_rows, 2);
    row_comm[0] = ts.agent_round_rows[0].comm_s;
    row_comm[1] = ts.agent_round_rows[1].comm_s;
    engine_free(e);
    test_sink_free(&ts);
}

START_TEST(test_rates_read_in_place)
{
    OtherRecord records[2] = {{.tag = 7, .latency = 0.01, .downlink = 1e6, .compute = 1e9, .uplink = 1e6},
                              {.tag = 8, .latency = 0.002, .downlink = 5e5, .compute = 2e9, .uplink = 3e5}};
    for (int maxmin = 0; maxmin <= 1; maxmin++) {
        Seen own = {.n = 0}, in_place = {.n = 0};
        double own_comm[2], in_place_comm[2];
        rates_play(maxmin, NULL, &own, own_comm);
        rates_play(maxmin, records, &in_place, in_place_comm);
        ck_assert_int_eq(own.n, 3);
        ck_assert_int_eq(in_place.n, own.n);
        for (int k = 0; k < own.n; k++)
            ck_assert(in_place.events[k].time == own.events[k].time && in_place.events[k].kind == own.events[k].kind &&
                      in_place.events[k].data == own.events[k].data);
        ck_assert(memcmp(own_comm, in_place_comm, sizeof own_comm) == 0);
        /* 0 -> 1 at 0.21 (5e5 B/s), node 1's computation at 0.5, then 1 -> 0, held at node
         * 1's 3e5 B/s uplink: 2e5 B take 2/3 s (+ 10 ms) */
        ck_assert(fabs(own.events[0].time - 0.21) < 1e-12 && own.events[1].time == 0.5);
        ck_assert(fabs(own.events[2].time - (2e5 / 3e5 + 0.01)) < 1e-12);
    }
    /* a record that is not its node's: refused, whatever the field */
    for (int field = 0; field < 4; field++) {
        OtherRecord wrong[2];
        memcpy(wrong, records, sizeof wrong);
        double *value[4] = {&wrong[1].compute, &wrong[1].uplink, &wrong[1].downlink, &wrong[1].latency};
        *value[field] *= 1 + 1e-15;
        EngineNode nodes[2] = {{.compute = 1e9, .uplink = 1e6, .downlink = 1e6, .latency = 0.01},
                               {.compute = 2e9, .uplink = 3e5, .downlink = 5e5, .latency = 0.002}};
        HsDiag diag;
        hs_diag_clear(&diag);
        TestSink ts;
        Seen seen = {.n = 0};
        EngineConfig config = {.n_agents = 2, .nodes = nodes, .sink = test_sink_init(&ts), .handler = record_event,
                               .handler_ctx = &seen, .diag = &diag,
                               .rates_at = {.base = wrong, .stride = sizeof *wrong,
                                            .compute = offsetof(OtherRecord, compute),
                                            .uplink = offsetof(OtherRecord, uplink),
                                            .downlink = offsetof(OtherRecord, downlink),
                                            .latency = offsetof(OtherRecord, latency)}};
        Engine *e = NULL;
        ck_assert_int_eq(engine_create(&config, &e), HS_E_INTERNAL);
        ck_assert(e == NULL && strstr(diag.message, "rates_at") != NULL);
        test_sink_free(&ts);
    }
}
END_TEST

/* ---- a synchronous step in one sweep (engine_collective_compute_join) against its event
 * twin: every computation an event whose handler books the next, the last joining ---- */
enum { SWEEP_STEPPED = ENGINE_EVENT_METHOD, SWEEP_REDUCED, SWEEP_NODES = 5 };

typedef struct SweepRun {
    Engine *e;
    Collective c;
    int sweep, steps, rounds, round;
    int remaining[SWEEP_NODES];
    double flops;
    double done[4];   /* each round's all-reduce end */
    long events;      /* SWEEP_STEPPED events handled */
} SweepRun;

static int sweep_begin_step(SweepRun *r)
{
    engine_collective_begin(&r->c, NULL, SWEEP_NODES, 4e6, 1, SWEEP_REDUCED, 0);
    for (int i = 0; i < SWEEP_NODES; i++) {
        int status = r->sweep ? engine_collective_compute_join(r->e, &r->c, i, r->flops, r->steps)
                              : engine_compute(r->e, i, r->flops, SWEEP_STEPPED, 0, NULL);
        if (status != HS_OK) return status;
        r->remaining[i] = r->steps - 1;
    }
    return HS_OK;
}

static int sweep_handle(void *ctx, const Event *ev)
{
    SweepRun *r = ctx;
    if (ev->kind == SWEEP_REDUCED) {
        r->done[r->round] = engine_now(r->e);
        engine_end_round(r->e);
        return HS_OK;
    }
    r->events++;
    if (r->remaining[ev->agent]-- > 0) return engine_compute(r->e, ev->agent, r->flops, SWEEP_STEPPED, 0, NULL);
    return engine_collective_join(r->e, &r->c, ev->agent);
}

/* Five nodes of different speeds, one offline over [0.5, 1.2) s; jitter draws a factor per
 * computation from each node's stream. The rows' text and the rings' ends of both ways. */
static void sweep_play(int sweep, int maxmin, double jitter, int steps, TestSink *ts, SweepRun *r)
{
    static const double speed[SWEEP_NODES] = {1e9, 2e9, 5e8, 1.5e9, 3e9};
    EngineNode nodes[SWEEP_NODES];
    for (int i = 0; i < SWEEP_NODES; i++)
        nodes[i] = (EngineNode){.compute = speed[i], .uplink = 1e6 * (i + 1), .downlink = 2e6, .latency = 0.001 * i,
                                .jitter = jitter};
    double times[] = {0, 0.5, 1.2}, values[] = {1, 0, 1};
    TraceSeries offline = {.n = 3, .times = times, .values = values};
    const TraceSeries *availability[SWEEP_NODES] = {NULL, NULL, &offline, NULL, NULL};
    HsDiag diag;
    hs_diag_clear(&diag);
    *r = (SweepRun){.sweep = sweep, .steps = steps, .rounds = 3, .flops = 4e8};
    EngineConfig config = {.n_agents = SWEEP_NODES, .nodes = nodes, .traces = {.availability = availability},
                           .network = {.maxmin = maxmin, .backbone = INFINITY}, .seed = 11,
                           .sink = test_sink_init(ts), .handler = sweep_handle, .handler_ctx = r, .diag = &diag};
    ck_assert_int_eq(engine_create(&config, &r->e), HS_OK);
    for (r->round = 0; r->round < r->rounds; r->round++) {
        engine_begin_round(r->e, r->round);
        ck_assert_int_eq(sweep_begin_step(r), HS_OK);
        ck_assert_int_eq(engine_play(r->e), HS_OK);
        ck_assert_int_eq(engine_report_round(r->e, NAN), HS_OK);
    }
    engine_free(r->e);
}

START_TEST(test_compute_join_same_bits_as_events)
{
    for (int maxmin = 0; maxmin < 2; maxmin++)
        for (int steps = 1; steps <= 3; steps += 2)
            for (int j = 0; j < 2; j++) {
                TestSink a, b;
                SweepRun ra, rb;
                sweep_play(0, maxmin, j ? 0.3 : 0, steps, &a, &ra);
                sweep_play(1, maxmin, j ? 0.3 : 0, steps, &b, &rb);
                ck_assert_msg(strcmp(a.text, b.text) == 0, "maxmin %d steps %d jitter %d:\n%s\nagainst\n%s", maxmin,
                              steps, j, a.text, b.text);
                for (int k = 0; k < 3; k++) ck_assert(ra.done[k] == rb.done[k] && ra.done[k] > 0);
                ck_assert_int_eq(ra.events, 3L * SWEEP_NODES * steps);
                ck_assert_int_eq(rb.events, 0);
                if (!j) {
                    /* by hand, round 1: node 2 (500 MFLOPS) needs 0.8 s a step and is
                     * offline 0.7 s from 0.5 s, so the last computation ends at 0.8 steps +
                     * 0.7; every other node is done before */
                    double ready = 0.8 * steps + 0.7;
                    ck_assert_msg(ra.done[0] > ready, "round 1 ended %.17g before %.17g", ra.done[0], ready);
                    if (maxmin) {
                        /* the ring alone on its links: 8 steps of 0.8 MB, each as long as
                         * its slowest hop: node 0's 1 MB/s uplink, with that hop's latency
                         * max(0, 1 ms) = 1 ms (node 0 sends to node 1) */
                        double ring = 8 * (0.8e6 / 1e6 + 0.001);
                        ck_assert_msg(fabs(ra.done[0] - (ready + ring)) < 1e-9, "round 1 %.17g expected %.17g",
                                      ra.done[0], ready + ring);
                    }
                }
                test_sink_free(&a);
                test_sink_free(&b);
            }
    /* jitter changes the draws: the test compares something */
    TestSink a, b;
    SweepRun ra, rb;
    sweep_play(1, 1, 0, 3, &a, &ra);
    sweep_play(1, 1, 0.3, 3, &b, &rb);
    ck_assert(ra.done[2] != rb.done[2]);
    test_sink_free(&a);
    test_sink_free(&b);
}
END_TEST

/* ---- a client's local steps booked at once (engine_compute_run) against its event twin:
 * every computation an event whose handler books the next ---- */
enum { RUN_START = ENGINE_EVENT_METHOD, RUN_STEPPED, RUN_DONE, RUN_UPLOADED, RUN_ARM, RUN_PROBE, RUN_NODES = 8 };

typedef struct RunPlay {
    Engine *e;
    int at_once, uploads, round;
    int remaining[RUN_NODES];
    long stepped;     /* RUN_STEPPED events handled */
    char log[8192];   /* every method event: kind agent data time, in the order handled */
    size_t used;
} RunPlay;

/* Node i: speed, when its run starts (after the round's start), its steps of 1 GFLOP. All
 * times are exact binary fractions, so runs end together at 6 s after the start by
 * different roads: 0-2 are identical clients (ties in everything), 3 starts earlier with
 * shorter steps (its last step is queued after 0's, though its run began before),
 * 5 starts first with long steps, 6 is one step, 4 starts last with the shortest. */
static const double run_speed[RUN_NODES - 1] = {1e9, 1e9, 1e9, 2e9, 4e9, 5e8, 1e9};
static const double run_start[RUN_NODES - 1] = {1.0, 1.0, 1.0, 0.5, 2.0, 0.0, 5.0};
static const int run_steps[RUN_NODES - 1] = {5, 5, 5, 11, 16, 3, 1};
/* Probes at 6 s, queued from events at 2, 5 and 5.5 s: before, between and after the
 * steps' events that the last steps' events come from. */
static const double run_arm[3] = {2.0, 5.0, 5.5};

static int run_handle(void *ctx, const Event *ev)
{
    RunPlay *r = ctx;
    double t0 = engine_round_start(r->e);
    if (ev->kind != RUN_STEPPED)
        r->used += (size_t)snprintf(r->log + r->used, sizeof r->log - r->used, "%d %d %lld %a\n", ev->kind, ev->agent,
                                    (long long)ev->data, ev->time);
    int i = ev->agent;
    switch (ev->kind) {
    case RUN_START:
        if (r->at_once) return engine_compute_run(r->e, i, 1e9, run_steps[i], RUN_DONE, ev->data);
        r->remaining[i] = run_steps[i] - 1;
        return engine_compute(r->e, i, 1e9, r->remaining[i] > 0 ? RUN_STEPPED : RUN_DONE, ev->data, NULL);
    case RUN_STEPPED:
        r->stepped++;
        return engine_compute(r->e, i, 1e9, --r->remaining[i] > 0 ? RUN_STEPPED : RUN_DONE, ev->data, NULL);
    case RUN_DONE: return engine_send(r->e, i, RUN_NODES - 1, 2e5, RUN_UPLOADED, ev->data);
    case RUN_ARM: return engine_schedule(r->e, t0 + 6.0, RUN_PROBE, -1, ev->data);
    case RUN_UPLOADED:
        if (++r->uploads == RUN_NODES - 1) engine_end_round(r->e);
        return HS_OK;
    default: return HS_OK;
    }
}

static void run_play(int at_once, int maxmin, TestSink *ts, RunPlay *r)
{
    EngineNode nodes[RUN_NODES];
    for (int i = 0; i < RUN_NODES - 1; i++)
        nodes[i] = (EngineNode){.compute = run_speed[i], .uplink = 1e6, .downlink = 1e6, .latency = 0.001};
    nodes[RUN_NODES - 1] = (EngineNode){.compute = 1e10, .uplink = 1e7, .downlink = 1e6, .latency = 0.001};
    HsDiag diag;
    hs_diag_clear(&diag);
    memset(r, 0, sizeof *r);
    r->at_once = at_once;
    EngineConfig config = {.n_agents = RUN_NODES - 1, .n_servers = 1, .nodes = nodes,
                           .network = {.maxmin = maxmin, .backbone = INFINITY}, .seed = 5,
                           .sink = test_sink_init(ts), .handler = run_handle, .handler_ctx = r, .diag = &diag};
    ck_assert_int_eq(engine_create(&config, &r->e), HS_OK);
    for (r->round = 0; r->round < 2; r->round++) {
        engine_begin_round(r->e, r->round);
        r->uploads = 0;
        double t0 = engine_round_start(r->e);
        /* the arms first: at 5 s one is queued before node 0's fourth step ends */
        for (int k = 0; k < 3; k++) ck_assert_int_eq(engine_schedule(r->e, t0 + run_arm[k], RUN_ARM, -1, k), HS_OK);
        for (int i = 0; i < RUN_NODES - 1; i++)
            ck_assert_int_eq(engine_schedule(r->e, t0 + run_start[i], RUN_START, i, 100 * r->round + i), HS_OK);
        ck_assert_int_eq(engine_play(r->e), HS_OK);
        ck_assert_int_eq(engine_report_round(r->e, NAN), HS_OK);
    }
    engine_free(r->e);
}

START_TEST(test_compute_run_same_order_as_events)
{
    for (int maxmin = 0; maxmin < 2; maxmin++) {
        TestSink a, b;
        RunPlay *ra = malloc(sizeof *ra), *rb = malloc(sizeof *rb);
        run_play(0, maxmin, &a, ra);
        run_play(1, maxmin, &b, rb);
        ck_assert_msg(strcmp(ra->log, rb->log) == 0, "maxmin %d, events:\n%s\nat once:\n%s", maxmin, ra->log, rb->log);
        ck_assert_msg(strcmp(a.text, b.text) == 0, "maxmin %d:\n%s\nagainst\n%s", maxmin, a.text, b.text);
        long steps = 0;
        for (int i = 0; i < RUN_NODES - 1; i++) steps += run_steps[i] - 1;
        ck_assert_int_eq(ra->stepped, 2 * steps);
        ck_assert_int_eq(rb->stepped, 0);
        /* by hand, round 1: every run and probe ends at 6 s, in the order of the pushes that
         * queued them: the probe armed at 2 s; node 5's last step (queued at 4 s); at 5 s
         * the arm (queued at the start), node 6's one step (its start, queued next), then
         * nodes 0, 1, 2 (their fourth steps' ends, queued at 4 s); at 5.5 s the arm, then
         * node 3 (its tenth step's end, queued at 5 s); node 4 (at 5.75 s). A run whose end
         * was queued at its start would come first: node 5, 3, 0, 1, 2 before any probe. */
        const char *expect = "21 -1 0\n18 5 5\n21 -1 1\n18 6 6\n18 0 0\n18 1 1\n18 2 2\n21 -1 2\n18 3 3\n18 4 4\n";
        char got[512] = "";
        size_t used = 0;
        for (const char *line = rb->log; *line; line = strchr(line, '\n') + 1) {
            int kind, agent;
            long long data;
            char when[64];
            ck_assert_int_eq(sscanf(line, "%d %d %lld %63s", &kind, &agent, &data, when), 4);
            if (strcmp(when, "0x1.8p+2") == 0 && (kind == RUN_DONE || kind == RUN_PROBE))
                used += (size_t)snprintf(got + used, sizeof got - used, "%d %d %lld\n", kind, agent, data);
        }
        ck_assert_msg(strcmp(got, expect) == 0, "round 1 at 6 s:\n%s", got);
        test_sink_free(&a);
        test_sink_free(&b);
        free(ra);
        free(rb);
    }
}
END_TEST

static int sweep_activity(void *ctx, int64_t run_id, const SinkActivity *activity)
{
    (void)ctx, (void)run_id, (void)activity;
    return HS_OK;
}

START_TEST(test_compute_join_refuses_what_it_cannot_keep)
{
    EngineNode nodes[2] = {{.compute = 1e9, .uplink = 1e6, .downlink = 1e6}, {.compute = 1e9, .uplink = 1e6, .downlink = 1e6}};
    HsDiag diag;
    hs_diag_clear(&diag);
    TestSink ts;
    Sink sink = test_sink_init(&ts);
    SinkOps ops = *sink.ops;
    ops.activity = sweep_activity;
    sink.ops = &ops;
    EngineConfig config = {.n_agents = 2, .nodes = nodes, .network = {.maxmin = 1, .backbone = INFINITY},
                           .sink = sink, .handler = record_event, .handler_ctx = &(Seen){.n = 0}, .diag = &diag};
    Engine *e;
    ck_assert_int_eq(engine_create(&config, &e), HS_OK);
    engine_begin_round(e, 0);
    ck_assert_int_eq(engine_records_activity(e), 1);
    Collective c;
    /* a non-blocking member's join does not wait for its computations */
    engine_collective_begin(&c, NULL, 2, 1e6, 0, 99, 0);
    ck_assert_int_eq(engine_collective_compute_join(e, &c, 0, 1e9, 1), HS_E_INTERNAL);
    /* the activity rows of later steps would come before the events between them */
    hs_diag_clear(&diag);
    engine_collective_begin(&c, NULL, 2, 1e6, 1, 99, 0);
    ck_assert_int_eq(engine_collective_compute_join(e, &c, 0, 1e9, 2), HS_E_INTERNAL);
    hs_diag_clear(&diag);
    ck_assert_int_eq(engine_collective_compute_join(e, &c, 0, 1e9, 1), HS_OK);
    /* nor a run of computations booked at once (engine_compute_run) */
    ck_assert_int_eq(engine_compute_run_exact(e, 1), 0);
    ck_assert_int_eq(engine_compute_run(e, 1, 1e9, 2, 99, 0), HS_E_INTERNAL);
    engine_free(e);
    test_sink_free(&ts);
    /* a node whose computations draw their own jitter, or that goes offline, neither */
    hs_diag_clear(&diag);
    nodes[1].jitter = 0.1;
    double times[] = {0, 0.5}, values[] = {1, 0};
    TraceSeries offline = {.n = 2, .times = times, .values = values};
    for (int churn = 0; churn < 2; churn++) {
        const TraceSeries *availability[2] = {NULL, &offline};
        config = (EngineConfig){.n_agents = 2, .nodes = nodes, .network = {.maxmin = 1, .backbone = INFINITY},
                                .traces = {.availability = churn ? availability : NULL}, .sink = test_sink_init(&ts),
                                .handler = record_event, .handler_ctx = &(Seen){.n = 0}, .diag = &diag};
        ck_assert_int_eq(engine_create(&config, &e), HS_OK);
        engine_begin_round(e, 0);
        ck_assert_int_eq(engine_compute_run_exact(e, 0), !churn);
        ck_assert_int_eq(engine_compute_run_exact(e, 1), 0);
        ck_assert_int_eq(engine_compute_run(e, 1, 1e9, 2, 99, 0), HS_E_INTERNAL);
        hs_diag_clear(&diag);
        engine_free(e);
        test_sink_free(&ts);
    }
}
END_TEST

/* More agents than a batch of agent_rounds rows (ENGINE_ROWS_BATCH, 1024): without energy
 * the rows go in batches, with energy in one buffer; the rows' times must be the same
 * either way, in agent order, and sum to the round's idle time bit for bit. localsgd on
 * lognormal agents: every agent's row differs. */
static const char *many_agents =
    "[run]\nmethod = localsgd\nrounds = 2\nmode = timing\nseed = 3\n"
    "[model]\nlayers = 784,10\nbatch = 16\n"
    "[agents]\ncount = 2500\ncompute = lognormal(1 GFLOPS, 0.5)\nbandwidth = uniform(10 Mbit/s, 100 Mbit/s)\n"
    "latency = 1 ms\nsamples = 64\n";

START_TEST(test_agent_rounds_in_batches_equal_one_buffer)
{
    TestSink plain, energy;
    const char *power[] = {"agents.power_idle=1 W"};
    ck_assert_int_eq(run_text(many_agents, NULL, 0, &plain), 0);
    ck_assert_int_eq(run_text(many_agents, power, 1, &energy), 0);
    ck_assert_int_eq(plain.agent_rows, 2 * 2500);
    ck_assert_int_eq(plain.n_agent_round_rows, 2500);
    ck_assert_int_eq(energy.n_agent_round_rows, 2500);
    double idle = 0;
    for (int i = 0; i < 2500; i++) {
        const SinkAgentRound *a = &plain.agent_round_rows[i], *b = &energy.agent_round_rows[i];
        ck_assert_int_eq(a->agent, i);
        ck_assert_int_eq(a->round, 1);
        ck_assert(a->compute_s == b->compute_s && a->comm_s == b->comm_s && a->idle_s == b->idle_s &&
                  a->offline_s == b->offline_s && a->role == b->role);
        ck_assert(isnan(a->idle_j) && b->idle_j > 0);
        idle += a->idle_s;
    }
    ck_assert(idle > 0);
    ck_assert(idle == plain.round_rows[1].idle_s);
    test_sink_free(&plain);
    test_sink_free(&energy);
}
END_TEST

START_TEST(test_determinism_same_rows_twice)
{
    char *text = test_read_file("tests/fixtures/scenarios/golden-timing.ini", NULL);
    ck_assert_ptr_nonnull(text);
    TestSink a, b;
    ck_assert_int_eq(run_text(text, NULL, 0, &a), 0);
    ck_assert_int_eq(run_text(text, NULL, 0, &b), 0);
    ck_assert_str_eq(a.text, b.text);
    /* and a different seed changes the draws */
    const char *set[] = {"run.seed=8"};
    TestSink c;
    ck_assert_int_eq(run_text(text, set, 1, &c), 0);
    ck_assert(strcmp(a.text, c.text) != 0);
    test_sink_free(&a);
    test_sink_free(&b);
    test_sink_free(&c);
    free(text);
}
END_TEST

START_TEST(test_golden_whole_scenario)
{
    char *text = test_read_file("tests/fixtures/scenarios/golden-timing.ini", NULL);
    ck_assert_ptr_nonnull(text);
    const char *methods[] = {"sync", "localsgd"};
    for (int m = 0; m < 2; m++) {
        char set_method[64], golden_path[256];
        snprintf(set_method, sizeof set_method, "run.method=%s", methods[m]);
        snprintf(golden_path, sizeof golden_path, "tests/golden/golden-timing-%s.txt", methods[m]);
        const char *set[] = {set_method};
        TestSink ts;
        ck_assert_int_eq(run_text(text, set, 1, &ts), 0);
        if (getenv("HETSIM_UPDATE_GOLDEN")) {
            FILE *f = fopen(golden_path, "wb");
            fputs(ts.text, f);
            fclose(f);
        }
        char *golden = test_read_file(golden_path, NULL);
        ck_assert_msg(golden != NULL, "missing %s (HETSIM_UPDATE_GOLDEN=1 writes it)", golden_path);
        ck_assert_msg(strcmp(golden, ts.text) == 0, "%s differs from this run", golden_path);
        free(golden);
        test_sink_free(&ts);
    }
    free(text);
}
END_TEST

START_TEST(test_markov_slowdown_and_jitter)
{
    /* factor 3 always on (p_slow = 1, p_recover = 0): sync round time triples for compute */
    const char *slow[] = {"agents.slow.count=0", "agents.slowdown=markov(1, 0, 3)", "agents.bandwidth=inf"};
    const char *plain[] = {"agents.slow.count=0", "agents.bandwidth=inf"};
    TestSink a, b;
    ck_assert_int_eq(run_text(two_speed, slow, 3, &a), 0);
    ck_assert_int_eq(run_text(two_speed, plain, 2, &b), 0);
    ck_assert(fabs(a.last_t_end - 3 * b.last_t_end) < 1e-9 * b.last_t_end);
    test_sink_free(&a);
    test_sink_free(&b);
    /* jitter: deterministic per seed, different across agents, median near 1 */
    const char *jitter[] = {"agents.slow.count=0", "agents.jitter=0.5", "run.rounds=3"};
    ck_assert_int_eq(run_text(two_speed, jitter, 3, &a), 0);
    ck_assert_int_eq(run_text(two_speed, jitter, 3, &b), 0);
    ck_assert_str_eq(a.text, b.text);
    ck_assert(a.agent_round_rows[0].compute_s != a.agent_round_rows[1].compute_s);
    test_sink_free(&a);
    test_sink_free(&b);
}
END_TEST

START_TEST(test_periodic_slowdown_bounds)
{
    Slowdown s;
    char why[200];
    int slow = 0;
    ck_assert_int_eq(slowdown_parse("periodic(10 s, 2)", &s, why, 200), 0);
    ck_assert(fabs(slowdown_factor(&s, 0, 0, &slow, NULL) - 1) < 1e-12);
    ck_assert(fabs(slowdown_factor(&s, 0, 5, &slow, NULL) - 3) < 1e-12);
    ck_assert_int_eq(slowdown_parse("markov(0.1, 2, 3)", &s, why, 200), HS_E_INPUT);
    ck_assert_int_eq(slowdown_parse("markov(0.1, 0.2, 0.5)", &s, why, 200), HS_E_INPUT);
    ck_assert_int_eq(slowdown_parse("sometimes", &s, why, 200), HS_E_INPUT);
    ck_assert_int_eq(slowdown_parse("periodic(1 s)", &s, why, 200), HS_E_INPUT);
    ck_assert_int_eq(slowdown_parse("none", &s, why, 200), 0);
    ck_assert(s.kind == SLOWDOWN_NONE);
}
END_TEST

START_TEST(test_time_budget_stops_at_round_boundary)
{
    /* rounds last ~3.2 s: a 7 s budget ends after the third, the first to cross it */
    const char *set[] = {"run.rounds=50", "run.time_budget=7 s"};
    TestSink ts;
    ck_assert_int_eq(run_text(two_speed, set, 2, &ts), 0);
    ck_assert_int_eq(ts.rounds, 3);
    ck_assert(ts.round_rows[1].t_end < 7.0);
    ck_assert(ts.last_t_end >= 7.0);
    test_sink_free(&ts);
}
END_TEST

static Suite *engine_suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_sync_round_time_and_idle_closed_form);
    tcase_add_test(tc, test_allreduce_latency_term);
    tcase_add_test(tc, test_sync_deadline_drops_the_straggler);
    tcase_add_test(tc, test_localsgd_epoch_waits_for_longest_epoch);
    tcase_add_test(tc, test_localsgd_numeric_period);
    tcase_add_test(tc, test_lsgd_round_closed_form);
    tcase_add_test(tc, test_send_is_fifo_on_the_uplink);
    tcase_add_test(tc, test_fifo_busy_union_opens_each_round);
    tcase_add_test(tc, test_rates_read_in_place);
    tcase_add_test(tc, test_compute_join_same_bits_as_events);
    tcase_add_test(tc, test_compute_join_refuses_what_it_cannot_keep);
    tcase_add_test(tc, test_compute_run_same_order_as_events);
    tcase_add_test(tc, test_determinism_same_rows_twice);
    tcase_add_test(tc, test_agent_rounds_in_batches_equal_one_buffer);
    tcase_add_test(tc, test_golden_whole_scenario);
    tcase_add_test(tc, test_time_budget_stops_at_round_boundary);
    tcase_add_test(tc, test_markov_slowdown_and_jitter);
    tcase_add_test(tc, test_periodic_slowdown_bounds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(engine_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
