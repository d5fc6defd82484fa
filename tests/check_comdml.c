/* check_comdml.c — ComDML played out in the event queue against the solver's
 * prediction: equal when the activations reach the helper before it is free, and larger
 * by exactly the last batch's transfer and top computation when the slow side is the
 * bottleneck; roles and pairings rows; the offload shortens the round.
 * Exact cost: over a few hundred random deterministic scenarios (2-8 agents, random
 * compute, asymmetric links, latencies, MLPs, batches, samples, solvers, topologies) under
 * each [network] variant (maxmin, fifo, maxmin with uplink = fifo, LV08 under maxmin and
 * fifo), every pairings
 * row's predicted_s equals its actual_s to 1e-9 relative, and the scenarios reach every
 * regime (transfers overlapping, the helper waiting, the paper's formula off).
 * Churn: a helper whose offloader goes offline ends at its own work plus the batches that
 * arrived (closed forms, dropped batches in rounds.extra); an agent offline at a
 * rebalance is never paired (dense and sparse links, every solver); train mode times
 * like timing mode under churn; runs repeat bitwise; a dropped top does not pull the
 * average. */
#include "sim/run.h"
#include "sim/train/trainer.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include "tests/test_files.h"

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An MLP whose compute sits in its third block, so split 2 leaves little on the slow side. */
static const char *pair_text =
    "[run]\nmethod = comdml\nrounds = 1\nmode = timing\n"
    "[model]\nlayers = 784,32,512,512,10\nbatch = 64\n"
    "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 GB/s\nlatency = 0 s\nsamples = 640\n"
    "[agents.slow]\ncount = 1\ncompute = 100 MFLOPS\n";

static int run(const char *const *set, int n, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(pair_text, set, n, ts, &diag);
    if (status) fprintf(stderr, "%s\n", diag.message);
    return status;
}

/* The first pairings row of the test sink's text. */
static void first_pairing(const TestSink *ts, int *slow, int *fast, int *split, double *predicted, double *actual)
{
    const char *line = strstr(ts->text, "pairing ");
    ck_assert_ptr_nonnull(line);
    int round;
    ck_assert_int_eq(sscanf(line, "pairing %d %d %d %d %lf %lf", &round, slow, fast, split, predicted, actual), 6);
}

static ModelProfile profile_of(const char *layers)
{
    ModelSpec s = {.arch = MODEL_ARCH_MLP, .classes = 10, .batch = 64};
    char buf[128];
    snprintf(buf, sizeof buf, "%s", layers);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) s.sizes[s.n_sizes++] = atoi(t);
    ModelProfile p;
    model_profile(&s, &p);
    return p;
}

START_TEST(test_played_out_equals_prediction_when_activations_arrive_early)
{
    TestSink ts;
    ck_assert_int_eq(run(NULL, 0, &ts), 0);
    int slow, fast, split;
    double predicted, actual;
    first_pairing(&ts, &slow, &fast, &split, &predicted, &actual);
    ck_assert_int_eq(slow, 1);
    ck_assert_int_eq(fast, 0);
    ck_assert_int_eq(split, 2);
    ck_assert_msg(fabs(actual - predicted) < 1e-9 * predicted, "actual %.17g predicted %.17g", actual, predicted);
    /* and the prediction is the formula: tau_fast + n ff / s_fast */
    ModelProfile p = profile_of("784,32,512,512,10");
    double step = 64 * (p.total_flops + p.loss_flops);
    double expected = 10 * step / 1e9 + 10 * model_profile_fast_fraction(&p, 2) * step / 1e9;
    ck_assert(fabs(predicted - expected) < 1e-9 * expected);
    ck_assert_str_eq(sink_role_name(ts.agent_round_rows[1].role), "offloader");
    ck_assert_str_eq(sink_role_name(ts.agent_round_rows[0].role), "helper");
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_slow_side_bottleneck_adds_the_last_batch)
{
    /* A helper 50x faster: the slow side's 10 batches are the bottleneck; the helper
     * waits for each activation, so its last top batch (and the last transfer) come
     * after the slow side's end, which is what the solver predicts. */
    const char *set[] = {"agents.compute=5 GFLOPS"};
    TestSink ts;
    ck_assert_int_eq(run(set, 1, &ts), 0);
    int slow, fast, split;
    double predicted, actual;
    first_pairing(&ts, &slow, &fast, &split, &predicted, &actual);
    ModelProfile p = profile_of("784,32,512,512,10");
    double step = 64 * (p.total_flops + p.loss_flops);
    double slow_side = 10 * model_profile_slow_fraction(&p, split) * step / 1e8;
    double transfer = 64 * (model_profile_split_bytes(&p, split) + 4) / 1e9;
    double top = model_profile_fast_fraction(&p, split) * step / 5e9;
    ck_assert(fabs(predicted - slow_side) < 1e-9 * slow_side);
    ck_assert_msg(fabs(actual - (slow_side + transfer + top)) < 1e-9 * actual, "actual %.17g expected %.17g", actual,
                  slow_side + transfer + top);
    test_sink_free(&ts);
    /* the exact cost predicts that tail (same pair, same split: the tail is the same at
     * every split's end, and the paper's best split stays best here) */
    const char *exact[] = {"agents.compute=5 GFLOPS", "method.cost=exact"};
    ck_assert_int_eq(run(exact, 2, &ts), 0);
    int split_exact;
    first_pairing(&ts, &slow, &fast, &split_exact, &predicted, &actual);
    ck_assert_int_eq(split_exact, split);
    ck_assert_msg(fabs(predicted - (slow_side + transfer + top)) < 1e-9 * predicted, "predicted %.17g expected %.17g",
                  predicted, slow_side + transfer + top);
    ck_assert(fabs(actual - predicted) < 1e-9 * actual);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_offloading_shortens_the_round_against_localsgd)
{
    const char *localsgd[] = {"run.method=localsgd"};
    TestSink a, b;
    ck_assert_int_eq(run(NULL, 0, &a), 0);
    ck_assert_int_eq(run(localsgd, 1, &b), 0);
    ck_assert(a.last_t_end < 0.5 * b.last_t_end);
    test_sink_free(&a);
    test_sink_free(&b);
    /* greedy and exact agree on two agents; a bad solver name is an input error */
    const char *greedy[] = {"method.solver=greedy"};
    ck_assert_int_eq(run(greedy, 1, &a), 0);
    ck_assert(a.pairings == 1);
    test_sink_free(&a);
    const char *bad[] = {"method.solver=magic"};
    ck_assert_int_eq(run(bad, 1, &a), HS_E_INPUT);
    test_sink_free(&a);
    /* so is an unknown cost, and more batches than the exact cost plays out */
    const char *bad_cost[] = {"method.cost=magic"};
    ck_assert_int_eq(run(bad_cost, 1, &a), HS_E_INPUT);
    test_sink_free(&a);
    const char *huge[] = {"method.cost=exact", "agents.samples=64000064"};
    HsDiag diag;
    ck_assert_int_eq(test_run(pair_text, huge, 2, &a, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "--set method.cost=exact: cost = exact plays every batch out, at most 1000000") &&
                      strstr(diag.message, "has 1000001"),
                  "%s", diag.message);
    test_sink_free(&a);
}
END_TEST

/* Every pairings row's solver column (the last field) equals want; returns the row count. */
static int pairing_solvers_are(const TestSink *ts, const char *want)
{
    int rows = 0;
    for (const char *p = ts->text; (p = strstr(p, "pairing ")) != NULL; p++) {
        const char *end = strchr(p, '\n'), *last = end;
        while (last > p && last[-1] != ' ') last--;
        ck_assert_msg((size_t)(end - last) == strlen(want) && strncmp(last, want, strlen(want)) == 0,
                      "pairing row says '%.*s', expected '%s'", (int)(end - last), last, want);
        rows++;
    }
    return rows;
}

START_TEST(test_pairings_record_the_solver_that_answered)
{
    /* Two rounds, one re-pairing each: every row names who produced the pairing. */
    const char *names[] = {"exact", "ip", "greedy"};
    for (int k = 0; k < 3; k++) {
        char solver[32];
        snprintf(solver, sizeof solver, "method.solver=%s", names[k]);
        const char *set[] = {"run.rounds=2", solver};
        TestSink ts;
        ck_assert_int_eq(run(set, 2, &ts), 0);
        ck_assert_int_eq(pairing_solvers_are(&ts, names[k]), 2);
        test_sink_free(&ts);
    }
    /* A forced lp_solve timeout: ip's deadline is its entry time plus the limit on the
     * monotonic clock, and 1e-300 s added to any clock reading past 1e-280 s changes
     * nothing, so the deadline is the entry time itself and the first look at the clock
     * finds it passed. Deterministic, no test hook: the exact solver answers, and the rows
     * say so rather than the requested "ip". */
    const char *timeout[] = {"run.rounds=2", "method.solver=ip", "method.ip_time_limit=1e-300"};
    TestSink ts;
    ck_assert_int_eq(run(timeout, 3, &ts), 0);
    ck_assert_int_eq(pairing_solvers_are(&ts, "ip>exact"), 2);
    test_sink_free(&ts);
}
END_TEST

/* --- churn --- */

/* A trace in which agent 1 (the slow one of pair_text) is offline from off to back. */
static const char *write_absence(double off, double back)
{
    char text[256];
    snprintf(text, sizeof text, "agent,time,value\n0,0,1\n1,0,1\n1,%.17g,0\n1,%.17g,1\n", off, back);
    return test_availability_set("comdml", text);
}

/* The pair of pair_text in closed form: step costs at the pair's split. */
typedef struct PairTimes {
    double slow_step; /* the slow side of one batch on 100 MFLOPS */
    double own;       /* the helper's own epoch: 10 full steps */
    double top;       /* one top batch on the helper */
    double transfer;  /* one batch of activations and labels at 1 GB/s */
    double allreduce; /* two agents, no latency: the model's bytes at 1 GB/s */
    double act_bytes, model_bytes;
} PairTimes;

static PairTimes pair_times(double helper_flops, int split)
{
    ModelProfile p = profile_of("784,32,512,512,10");
    double step = 64 * (p.total_flops + p.loss_flops);
    PairTimes t = {.slow_step = model_profile_slow_fraction(&p, split) * step / 1e8,
                   .own = 10 * step / helper_flops,
                   .top = model_profile_fast_fraction(&p, split) * step / helper_flops,
                   .act_bytes = 64 * (model_profile_split_bytes(&p, split) + 4),
                   .model_bytes = 4.0 * p.total_params, .allreduce = 4.0 * p.total_params / 1e9};
    t.transfer = t.act_bytes / 1e9;
    return t;
}

static void assert_near(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12, "%s: got %.17g want %.17g", what, got, want);
}

START_TEST(test_helper_drops_an_offline_offloaders_batches)
{
    /* The slow agent leaves halfway through its 5th batch (4 sent) and comes back long after
     * the helper is done; the helper ends at its own epoch plus the 4 batches that arrived,
     * not at the return, and drops the other 6. */
    PairTimes t = pair_times(1e9, 2); /* split 2, as in the first test */
    double off = 4.5 * t.slow_step, back = t.own + 10;
    ck_assert(4 * t.slow_step + t.transfer < off && off < t.own); /* the premise */
    const char *set[] = {write_absence(off, back)};
    TestSink ts;
    ck_assert_int_eq(run(set, 1, &ts), 0);
    int slow, fast, split;
    double predicted, actual;
    first_pairing(&ts, &slow, &fast, &split, &predicted, &actual);
    ck_assert_int_eq(slow, 1);
    ck_assert_int_eq(split, 2);
    assert_near(actual, t.own + 4 * t.top, "helper's played-out time");
    ck_assert(actual < back);
    ck_assert(ts.round_rows[0].extra == 6);
    /* the slow agent resumes its 5th batch and does 5 more on its local loss, sending none */
    assert_near(ts.round_rows[0].t_end, back + 5.5 * t.slow_step + t.allreduce, "round end");
    assert_near(ts.round_rows[0].bytes, 4 * t.act_bytes + 2 * t.model_bytes, "round bytes");
    /* offline time is the offloader's offline_s, not idle; the helper waits idle */
    const SinkAgentRound *helper = &ts.agent_round_rows[0], *offloader = &ts.agent_round_rows[1];
    assert_near(offloader->offline_s, back - off, "offloader offline_s");
    ck_assert(fabs(offloader->idle_s) < 1e-9);
    ck_assert(helper->offline_s == 0);
    assert_near(helper->idle_s, back + 5.5 * t.slow_step - (t.own + 4 * t.top), "helper idle_s");
    ck_assert_str_eq(sink_role_name(helper->role), "helper");
    ck_assert_str_eq(sink_role_name(offloader->role), "offloader");
    test_sink_free(&ts);
    test_scratch_unlink("comdml", "availability.csv");
}
END_TEST

START_TEST(test_helper_waiting_stops_when_its_partner_leaves)
{
    /* A 5 GFLOPS helper is idle between batches; when the slow agent leaves (4 batches
     * trained), the helper stops at that instant. */
    const char *compute = "agents.compute=5 GFLOPS";
    TestSink ts;
    int slow, fast, split;
    double predicted, actual;
    ck_assert_int_eq(run(&compute, 1, &ts), 0); /* the split this pair uses */
    first_pairing(&ts, &slow, &fast, &split, &predicted, &actual);
    test_sink_free(&ts);
    PairTimes t = pair_times(5e9, split);
    double off = 4.5 * t.slow_step, back = 30;
    ck_assert(4 * t.slow_step + t.transfer + t.top < off && t.own < 4 * t.slow_step); /* idle at off */
    const char *set[] = {compute, write_absence(off, back)};
    ck_assert_int_eq(run(set, 2, &ts), 0);
    first_pairing(&ts, &slow, &fast, &split, &predicted, &actual);
    assert_near(actual, off, "helper stops when the partner leaves");
    ck_assert_msg(ts.round_rows[0].extra == 6, "%s", ts.text);
    test_sink_free(&ts);
    test_scratch_unlink("comdml", "availability.csv");
}
END_TEST

START_TEST(test_paused_transmission_is_dropped_on_arrival)
{
    /* The slow agent leaves in the middle of sending its 4th batch: the helper trains 3,
     * drops 7; the paused transmission completes after the return and is discarded. */
    PairTimes t = pair_times(1e9, 2); /* split 2, as in the first test */
    double off = 4 * t.slow_step + 0.5 * t.transfer, back = t.own + 10;
    const char *set[] = {write_absence(off, back)};
    TestSink ts;
    ck_assert_int_eq(run(set, 1, &ts), 0);
    int slow, fast, split;
    double predicted, actual;
    first_pairing(&ts, &slow, &fast, &split, &predicted, &actual);
    assert_near(actual, t.own + 3 * t.top, "helper trains the 3 batches that arrived");
    ck_assert(ts.round_rows[0].extra == 7);
    ck_assert_int_eq(ts.pairings, 1);
    test_sink_free(&ts);
    test_scratch_unlink("comdml", "availability.csv");
}
END_TEST

START_TEST(test_offloader_back_in_time_loses_nothing)
{
    /* Offline for a moment while the helper still does its own epoch: nothing is dropped;
     * rounds.extra is 0 (a run with a trace), and NaN without one. */
    PairTimes t = pair_times(1e9, 2); /* split 2, as in the first test */
    const char *set[] = {write_absence(4.5 * t.slow_step, 5.5 * t.slow_step)};
    TestSink ts;
    ck_assert_int_eq(run(set, 1, &ts), 0);
    ck_assert(ts.round_rows[0].extra == 0);
    ck_assert_int_eq(ts.pairings, 1);
    test_sink_free(&ts);
    test_scratch_unlink("comdml", "availability.csv");
    ck_assert_int_eq(run(NULL, 0, &ts), 0);
    ck_assert(isnan(ts.round_rows[0].extra));
    test_sink_free(&ts);
}
END_TEST

/* Roles of round r in the sink text, by agent ('a', 'o', 'h'); count of its pairings and
 * whether any involves agent x or y. */
static void round_roles(const TestSink *ts, int r, char *roles, int n, int *pairs, int x, int y, int *touched)
{
    *pairs = 0;
    *touched = 0;
    for (const char *p = ts->text; (p = strstr(p, "agent_round ")) != NULL; p++) {
        int round, agent;
        double c, m, idle, off;
        char role[16];
        if (sscanf(p, "agent_round %d %d %lf %lf %lf %15s %lf", &round, &agent, &c, &m, &idle, role, &off) == 7 &&
            round == r && agent < n)
            roles[agent] = role[0];
    }
    for (const char *p = ts->text; (p = strstr(p, "pairing ")) != NULL; p++) {
        int round, slow, fast;
        if (sscanf(p, "pairing %d %d %d", &round, &slow, &fast) == 3 && round == r) {
            (*pairs)++;
            if (slow == x || slow == y || fast == x || fast == y) *touched = 1;
        }
    }
}

START_TEST(test_offline_at_rebalance_is_never_paired)
{
    /* Two fast (0, 1) and two slow (2, 3) agents: all online, both slow agents offload. With
     * 1 and 3 offline at round 0's start, they are alone and 2 pairs with 0; round 1 (all
     * back) pairs everyone again. On a ring 0-1-2-3 the only online neighbour of 2 is gone,
     * so round 0 has no pair at all. */
    const char *trace = test_availability_set("comdml", "agent,time,value\n0,0,1\n1,0,0\n1,0.5,1\n2,0,1\n3,0,0\n3,0.3,1\n");
    const char *solvers[] = {"method.solver=exact", "method.solver=greedy", "method.solver=ip"};
    for (int k = 0; k < 3; k++) {
        const char *all_online[] = {"agents.count=4", "agents.slow.count=2", "run.rounds=2", solvers[k]};
        const char *churn[] = {"agents.count=4", "agents.slow.count=2", "run.rounds=2", solvers[k], trace};
        const char *ring[] = {"agents.count=4", "agents.slow.count=2", "run.rounds=2", solvers[k], trace,
                              "topology.graph=ring"};
        TestSink ts;
        char roles[4];
        int pairs, touched;
        ck_assert_int_eq(run(all_online, 4, &ts), 0);
        round_roles(&ts, 0, roles, 4, &pairs, 1, 3, &touched);
        ck_assert_int_eq(pairs, 2);
        ck_assert_msg(touched, "without churn 1 and 3 are paired");
        test_sink_free(&ts);

        ck_assert_int_eq(run(churn, 5, &ts), 0);
        round_roles(&ts, 0, roles, 4, &pairs, 1, 3, &touched);
        ck_assert_int_eq(pairs, 1);
        ck_assert_msg(!touched, "%s: an offline agent was paired", solvers[k]);
        ck_assert(roles[1] == 'a' && roles[3] == 'a' && roles[2] == 'o' && roles[0] == 'h');
        round_roles(&ts, 1, roles, 4, &pairs, 1, 3, &touched);
        ck_assert_int_eq(pairs, 2); /* the links came back */
        ck_assert(roles[1] == 'h' && roles[3] == 'o');
        test_sink_free(&ts);

        ck_assert_int_eq(run(ring, 6, &ts), 0);
        round_roles(&ts, 0, roles, 4, &pairs, 1, 3, &touched);
        ck_assert_int_eq(pairs, 0);
        ck_assert(roles[0] == 'a' && roles[1] == 'a' && roles[2] == 'a' && roles[3] == 'a');
        round_roles(&ts, 1, roles, 4, &pairs, 1, 3, &touched);
        ck_assert_int_eq(pairs, 2);
        test_sink_free(&ts);
    }
    test_scratch_unlink("comdml", "availability.csv");
}
END_TEST

/* Four agents on synthetic data, three rounds: 1 and 3 are offline at the first
 * rebalance, 3 leaves in the middle of round 1 (its helper drops batches) and 1 is
 * offline at round 1's end, so the all-reduce waits for it. */
static const char *churn_set[] = {
    "agents.count=4", "agents.slow.count=2", "run.rounds=3", "data.dataset=synthetic", "data.features=784",
    "data.classes=10", "data.train_samples=2560", "data.test_samples=200", "model.lr=0.01", NULL};

static const char *churn_trace =
    "agent,time,value\n0,0,1\n1,0,0\n1,0.5,1\n1,15.3,0\n1,16,1\n2,0,1\n3,0,0\n3,0.3,1\n3,13,0\n3,14.5,1\n";

static int run_churn(const char *mode, TestSink *ts)
{
    const char *set[16];
    int n = 0;
    while (churn_set[n]) {
        set[n] = churn_set[n];
        n++;
    }
    set[n++] = mode;
    set[n++] = test_availability_set("comdml", churn_trace);
    return run(set, n, ts);
}

START_TEST(test_train_mode_times_like_timing_mode_under_churn)
{
    TestSink timing, train;
    ck_assert_int_eq(run_churn("run.mode=timing", &timing), 0);
    ck_assert_int_eq(run_churn("run.mode=train", &train), 0);
    /* the scenario does churn: 1 alone in round 0, batches dropped in round 1, 1 offline at its end */
    char roles[4];
    int pairs, touched;
    round_roles(&timing, 0, roles, 4, &pairs, 1, 1, &touched);
    ck_assert(roles[1] == 'a' && !touched);
    ck_assert_msg(timing.round_rows[1].extra > 0, "no batch dropped: %s", timing.text);
    ck_assert(timing.round_rows[1].t_end >= 16);
    char *a = test_sink_timing_lines(&timing), *b = test_sink_timing_lines(&train);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    ck_assert(strstr(train.text, "metric ") != NULL);
    test_sink_free(&timing);
    test_sink_free(&train);
    test_scratch_unlink("comdml", "availability.csv");
}
END_TEST

START_TEST(test_churn_runs_repeat_bitwise)
{
    const char *modes[] = {"run.mode=timing", "run.mode=train"};
    for (int k = 0; k < 2; k++) {
        TestSink a, b;
        ck_assert_int_eq(run_churn(modes[k], &a), 0);
        ck_assert_int_eq(run_churn(modes[k], &b), 0);
        ck_assert_str_eq(a.text, b.text);
        test_sink_free(&a);
        test_sink_free(&b);
    }
    test_scratch_unlink("comdml", "availability.csv");
}
END_TEST

/* 1 if [offset, offset+count) of a and b are bitwise equal. */
static int same_range(const float *a, const float *b, size_t offset, size_t count)
{
    return memcmp(a + offset, b + offset, count * sizeof *a) == 0;
}

START_TEST(test_dropped_top_does_not_pull_the_average)
{
    /* Agent 1 offloads at split 1 of 16-32-4 and its helper trains none of its top: the
     * top block averages to the helper's own (weight 0 for the untouched copy), the bottom
     * block to the sample-weighted mean of both. */
    const char *text = "[run]\nmethod = comdml\nrounds = 1\nmode = train\n"
                       "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 400\n"
                       "test_samples = 100\n"
                       "[model]\nlayers = 16,32,4\nbatch = 20\n"
                       "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 GB/s\n";
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    Scenario sc;
    ck_assert_int_eq(inidoc_load_string("t.ini", text, &doc, &diag), 0);
    ck_assert_msg(scenario_resolve(&doc, &sc, &diag) == 0, "%s", diag.message);
    inidoc_free(&doc);
    TestSink ts;
    Sim *e;
    ck_assert_msg(sim_open(&sc, test_sink_init(&ts), &diag, &e) == 0, "%s", diag.message);
    size_t n = trainer_param_count(e->trainer), bottom = 16 * 32 + 32, top = 32 * 4 + 4;
    int splits[2] = {0, 1};
    ck_assert_int_eq(trainer_split_begin(e->trainer, 1, 1), 0);
    for (int k = 0; k < sim_agent_steps(e, 1); k++) ck_assert_int_eq(trainer_split_bottom_step(e->trainer, 1, 1), 0);
    ck_assert_int_eq(trainer_local_step(e->trainer, 0), 0);
    ck_assert_int_eq(trainer_split_end(e->trainer, 1, 1), 0);
    float *helper = malloc(n * sizeof *helper), *offloader = malloc(n * sizeof *offloader);
    memcpy(helper, trainer_params(e->trainer, 0), n * sizeof *helper);
    memcpy(offloader, trainer_params(e->trainer, 1), n * sizeof *offloader);
    ck_assert(!same_range(helper, offloader, bottom, top)); /* the helper's step moved its top */
    ck_assert_int_eq(trainer_average_split(e->trainer, splits), 0);
    ck_assert(same_range(trainer_params(e->trainer, 0), helper, bottom, top));
    ck_assert(same_range(trainer_params(e->trainer, 1), helper, bottom, top));
    ck_assert(!same_range(trainer_params(e->trainer, 0), helper, 0, bottom));
    ck_assert(!same_range(trainer_params(e->trainer, 0), offloader, 0, bottom));
    ck_assert(same_range(trainer_params(e->trainer, 0), trainer_params(e->trainer, 1), 0, bottom));
    free(helper);
    free(offloader);
    sim_close(e);
    test_sink_free(&ts);
}
END_TEST

/* ---- the exact cost against the play-out ------------------------------------------ */

/* EXACT_BACKBONE is not one of the exact variants: a backbone every pair shares */
enum { EXACT_MAXMIN, EXACT_FIFO, EXACT_MAXMIN_UPLINK_FIFO, EXACT_LV08, EXACT_FIFO_LV08, EXACT_VARIANTS,
       EXACT_BACKBONE = EXACT_VARIANTS };
static const char *const exact_network[EXACT_VARIANTS + 1] = {
    "[network]\nmodel = maxmin\n", "[network]\nmodel = fifo\n", "[network]\nmodel = maxmin\nuplink = fifo\n",
    "[network]\nmodel = maxmin\ntcp = lv08\n", "[network]\nmodel = fifo\ntcp = lv08\n", ""};

typedef struct ExactAgent {
    double compute, uplink, downlink, latency; /* FLOP/s, bytes/s, s */
    int samples;
} ExactAgent;

typedef struct ExactScenario {
    char text[4096];
    int n, batch, hidden[3], n_hidden;
    ExactAgent agents[8];
    double backbone, uplinks; /* EXACT_BACKBONE: its bandwidth, and the sum of the uplinks */
} ExactScenario;

static double log_uniform(gsl_rng *rng, double low, double high)
{
    return low * pow(high / low, gsl_rng_uniform(rng));
}

/* Agent k is group a<k> of one agent; [agents] keeps none. Values are written with %.17g
 * so the test knows exactly what the engine draws. */
static void exact_random_scenario(gsl_rng *rng, int variant, ExactScenario *x)
{
    static const int widths[] = {16, 32, 128, 512, 1024};
    static const int batches[] = {8, 16, 32, 64};
    static const char *const solvers[] = {"exact", "greedy", "ip"};
    x->n = 2 + (int)gsl_rng_uniform_int(rng, 7);
    x->batch = batches[gsl_rng_uniform_int(rng, 4)];
    x->n_hidden = 1 + (int)gsl_rng_uniform_int(rng, 3);
    size_t len = 0, cap = sizeof x->text;
    len += (size_t)snprintf(x->text + len, cap - len,
                            "[run]\nmethod = comdml\nrounds = 2\nmode = timing\n"
                            "[method]\ncost = exact\nsolver = %s\nrebalance = %d\n"
                            "[topology]\ngraph = %s\n%s[model]\nbatch = %d\nlayers = 784",
                            solvers[gsl_rng_uniform_int(rng, 3)], 1 + (int)gsl_rng_uniform_int(rng, 2),
                            gsl_rng_uniform(rng) < 0.7 ? "full" : "ring", exact_network[variant], x->batch);
    for (int h = 0; h < x->n_hidden; h++) {
        x->hidden[h] = widths[gsl_rng_uniform_int(rng, 5)];
        len += (size_t)snprintf(x->text + len, cap - len, ",%d", x->hidden[h]);
    }
    len += (size_t)snprintf(x->text + len, cap - len,
                            ",10\n[agents]\ncount = %d\ncompute = 1 GFLOPS\nbandwidth = 1 MB/s\nlatency = 0 s\n", x->n);
    /* half the scenarios have fast processors on slow links, where an offloader's
     * activations take longer to send than to compute and the transfers overlap */
    int link_bound = gsl_rng_uniform(rng) < 0.5;
    double compute_low = link_bound ? 3e8 : 2e7, bandwidth_high = link_bound ? 2e6 : 1.25e8;
    for (int k = 0; k < x->n; k++) {
        ExactAgent *a = &x->agents[k];
        a->compute = log_uniform(rng, compute_low, 5e9);
        a->uplink = log_uniform(rng, 1.25e5, bandwidth_high); /* from 1 Mbit/s */
        a->downlink = gsl_rng_uniform(rng) < 0.5 ? a->uplink : log_uniform(rng, 1.25e5, bandwidth_high);
        a->latency = gsl_rng_uniform(rng) < 0.2 ? 0 : log_uniform(rng, 1e-4, 0.3);
        a->samples = x->batch + (int)gsl_rng_uniform_int(rng, (unsigned long)(40 * x->batch));
        len += (size_t)snprintf(x->text + len, cap - len,
                                "[agents.a%d]\ncount = 1\ncompute = %.17g\nuplink = %.17g\ndownlink = %.17g\n"
                                "latency = %.17g\nsamples = %d\n",
                                k, a->compute, a->uplink, a->downlink, a->latency, a->samples);
    }
    if (variant == EXACT_BACKBONE) {
        /* from a tenth of the uplinks' sum (pairs contend) to twice it (never full) */
        x->uplinks = 0;
        for (int k = 0; k < x->n; k++) x->uplinks += x->agents[k].uplink;
        x->backbone = x->uplinks * log_uniform(rng, 0.1, 2);
        len += (size_t)snprintf(x->text + len, cap - len, "[network]\nmodel = maxmin\nbackbone = %.17g\n", x->backbone);
    }
    ck_assert(len < cap - 1);
}

/* What a pairings row says about the pair, recomputed from the scenario: whether the
 * transfers overlap (d > c), the paper's formula for the same pair and split, and the
 * helper's time if it never waited (own epoch, then every top batch). */
static void exact_classify(const ExactScenario *x, int variant, int slow, int fast, int split, int *overlap,
                           double *paper, double *busy)
{
    char layers[64];
    int len = snprintf(layers, sizeof layers, "784");
    for (int h = 0; h < x->n_hidden; h++) len += snprintf(layers + len, sizeof layers - (size_t)len, ",%d", x->hidden[h]);
    snprintf(layers + len, sizeof layers - (size_t)len, ",10");
    ModelSpec spec = {.arch = MODEL_ARCH_MLP, .classes = 10, .batch = x->batch};
    for (char *t = strtok(layers, ","); t; t = strtok(NULL, ",")) spec.sizes[spec.n_sizes++] = atoi(t);
    ModelProfile p;
    ck_assert_int_eq(model_profile(&spec, &p), HS_OK);
    double step = x->batch * (p.total_flops + p.loss_flops);
    const ExactAgent *i = &x->agents[slow], *j = &x->agents[fast];
    double n = ceil((double)i->samples / x->batch), n_j = ceil((double)j->samples / x->batch);
    double c = model_profile_slow_fraction(&p, split) * step / i->compute;
    double f = model_profile_fast_fraction(&p, split) * step / j->compute;
    double act = x->batch * (model_profile_split_bytes(&p, split) + 4.0);
    double b = fmin(i->uplink, j->downlink);
    int lv08 = variant == EXACT_LV08 || variant == EXACT_FIFO_LV08;
    *overlap = act / (lv08 ? 0.97 * b : b) > c; /* LV08: SimGrid's 0.97 (engine.c) */
    *busy = n_j * step / j->compute + n * f;
    *paper = fmax(fmax(n * c, *busy), n * act / b);
}

START_TEST(test_exact_cost_equals_the_play_out)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, 3500 + (unsigned long)_i);
    int trials = 100, rows = 0, overlapping = 0, overlap_waits = 0, paper_off = 0;
    double worst = 0;
    ExactScenario x;
    for (int trial = 0; trial < trials; trial++) {
        exact_random_scenario(rng, _i, &x);
        TestSink ts;
        HsDiag diag;
        int status = test_run(x.text, NULL, 0, &ts, &diag);
        ck_assert_msg(status == HS_OK, "variant %d trial %d: %s\n%s", _i, trial, diag.message, x.text);
        for (const char *line = ts.text; (line = strstr(line, "pairing ")) != NULL; line++) {
            int round, slow, fast, split, overlap;
            double predicted, actual, paper, busy;
            ck_assert_int_eq(sscanf(line, "pairing %d %d %d %d %lf %lf", &round, &slow, &fast, &split, &predicted,
                                    &actual), 6);
            double error = fabs(actual - predicted) / actual;
            ck_assert_msg(error <= 1e-9, "variant %d trial %d round %d: %d -> %d at %d predicted %.17g actual %.17g\n%s",
                          _i, trial, round, slow, fast, split, predicted, actual, x.text);
            worst = fmax(worst, error);
            exact_classify(&x, _i, slow, fast, split, &overlap, &paper, &busy);
            overlapping += overlap;
            overlap_waits += overlap && actual > busy * (1 + 1e-6);
            paper_off += actual > paper * (1 + 1e-6);
            rows++;
        }
        test_sink_free(&ts);
    }
    /* the scenarios are not trivial: pairs form, transfers overlap, the paper is off */
    ck_assert_msg(rows >= trials, "variant %d: only %d pairings rows", _i, rows);
    ck_assert_msg(overlapping >= rows / 20, "variant %d: %d of %d rows with overlapping transfers", _i, overlapping,
                  rows);
    ck_assert_msg(overlap_waits > 0, "variant %d: the helper never waits for overlapping transfers", _i);
    ck_assert_msg(paper_off >= rows / 4, "variant %d: the paper's formula is off in only %d of %d rows", _i,
                  paper_off, rows);
    fprintf(stderr,
            "exact cost, variant %d: %d rows, %d with overlapping transfers (%d of them with the helper waiting), "
            "%d off the paper's formula, worst relative error %.3g\n",
            _i, rows, overlapping, overlap_waits, paper_off, worst);
    gsl_rng_free(rng);
}
END_TEST

static int exact_compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A finite backbone that every pair's activations cross: the solver gives each pair the
 * backbone to itself. Exact when it cannot fill (backbone >= the sum of the uplinks);
 * otherwise never pessimistic, and the figures say how optimistic (docs/methods/comdml-notes.md). */
START_TEST(test_exact_cost_under_a_shared_backbone)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, 3600);
    enum { TRIALS = 200 };
    double errors[4 * TRIALS];
    int n_errors = 0, exact_rows = 0, off = 0;
    ExactScenario x;
    for (int trial = 0; trial < TRIALS; trial++) {
        exact_random_scenario(rng, EXACT_BACKBONE, &x);
        TestSink ts;
        HsDiag diag;
        ck_assert_msg(test_run(x.text, NULL, 0, &ts, &diag) == HS_OK, "trial %d: %s", trial, diag.message);
        for (const char *line = ts.text; (line = strstr(line, "pairing ")) != NULL; line++) {
            int round, slow, fast, split;
            double predicted, actual;
            ck_assert_int_eq(sscanf(line, "pairing %d %d %d %d %lf %lf", &round, &slow, &fast, &split, &predicted,
                                    &actual), 6);
            double error = actual / predicted - 1;
            ck_assert_msg(error >= -1e-9, "trial %d: predicted %.17g above actual %.17g", trial, predicted, actual);
            if (x.backbone >= x.uplinks) {
                ck_assert_msg(error <= 1e-9, "trial %d: a backbone that cannot fill, yet predicted %.17g actual %.17g",
                              trial, predicted, actual);
                exact_rows++;
            } else if (n_errors < 4 * TRIALS) {
                errors[n_errors++] = error;
                off += error > 1e-9;
            }
        }
        test_sink_free(&ts);
    }
    qsort(errors, (size_t)n_errors, sizeof *errors, exact_compare_double);
    ck_assert_msg(exact_rows > 0 && n_errors > 0 && off > 0, "%d exact rows, %d contended of which %d off", exact_rows,
                  n_errors, off);
    fprintf(stderr,
            "exact cost, shared backbone: %d rows where it cannot fill (exact); %d where it can, %d of them off, "
            "actual / predicted - 1: median %.3g, 90th percentile %.3g, max %.3g\n",
            exact_rows, n_errors, off, errors[n_errors / 2], errors[n_errors * 9 / 10], errors[n_errors - 1]);
    gsl_rng_free(rng);
}
END_TEST

static Suite *comdml_suite(void)
{
    Suite *s = suite_create("comdml");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_played_out_equals_prediction_when_activations_arrive_early);
    tcase_add_test(tc, test_slow_side_bottleneck_adds_the_last_batch);
    tcase_add_test(tc, test_offloading_shortens_the_round_against_localsgd);
    tcase_add_test(tc, test_pairings_record_the_solver_that_answered);
    suite_add_tcase(s, tc);
    TCase *exact = tcase_create("exact cost");
    tcase_add_loop_test(exact, test_exact_cost_equals_the_play_out, 0, EXACT_VARIANTS);
    tcase_add_test(exact, test_exact_cost_under_a_shared_backbone);
    tcase_set_timeout(exact, 600);
    suite_add_tcase(s, exact);
    TCase *churn = tcase_create("churn");
    tcase_add_test(churn, test_helper_drops_an_offline_offloaders_batches);
    tcase_add_test(churn, test_helper_waiting_stops_when_its_partner_leaves);
    tcase_add_test(churn, test_paused_transmission_is_dropped_on_arrival);
    tcase_add_test(churn, test_offloader_back_in_time_loses_nothing);
    tcase_add_test(churn, test_offline_at_rebalance_is_never_paired);
    tcase_add_test(churn, test_train_mode_times_like_timing_mode_under_churn);
    tcase_add_test(churn, test_churn_runs_repeat_bitwise);
    tcase_add_test(churn, test_dropped_top_does_not_pull_the_average);
    /* four train-mode runs: Check's 4 s default expires on a loaded machine */
    tcase_set_timeout(churn, 120);
    suite_add_tcase(s, churn);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(comdml_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
