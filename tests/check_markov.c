/* check_markov.c — on/off Markov processes (sim/kernel/trace_markov.h, [agents] availability and
 * outage = markov(MEAN_UP, MEAN_DOWN)) against closed forms. A process starting up with
 * exponential up and down durations of means U and D, rate λ = 1/U + 1/D, is down at t
 * with probability π (1 − e^(−λt)), π = D / (U + D), and is down on average
 * π (T − (1 − e^(−λT)) / λ) of [0, T] (the long-run fraction π once the start is
 * forgotten). Over thousands of independent nodes each estimate must lie within 4
 * standard errors. Then: durations' means; the series does not depend on the order of the
 * queries that drew it, nor on rows forgotten before a round; runs replay exactly from
 * the nodes' streams; and every bad input names its file:line. */
#include "sim/kernel/trace_markov.h"
#include "sim/kernel/rng.h"
#include "sim/run.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NODES = 4000 };

static TraceSeries *markov_fleet(int n, double up, double down, uint64_t seed, HsDiag *diag)
{
    TraceSeries *s = calloc((size_t)n, sizeof *s);
    ck_assert_ptr_nonnull(s);
    hs_diag_clear(diag);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(markov_series_init(&s[i], up, down, seed, (uint64_t)i, RNG_PURPOSE_AVAILABILITY, diag),
                         HS_OK);
    return s;
}

static void markov_fleet_free(TraceSeries *s, int n)
{
    for (int i = 0; i < n; i++) markov_series_free(&s[i]);
    free(s);
}

/* P(down at t) over NODES nodes, at a time in the transient and one long after it. */
START_TEST(test_fraction_down_at_t)
{
    const double up = 3, down = 1, pi = down / (up + down), rate = 1 / up + 1 / down;
    const double times[] = {0.4, 2, 60};
    HsDiag diag;
    TraceSeries *s = markov_fleet(NODES, up, down, 11, &diag);
    for (int k = 0; k < 3; k++) {
        int n_down = 0;
        for (int i = 0; i < NODES; i++) n_down += trace_value(&s[i], times[k]) < 0.5;
        double p = pi * (1 - exp(-rate * times[k])), se = sqrt(p * (1 - p) / NODES);
        double seen = (double)n_down / NODES;
        ck_assert_msg(fabs(seen - p) < 4 * se, "t = %g: %g down, expected %g (se %g)", times[k], seen, p, se);
    }
    ck_assert_int_eq(diag.status, HS_OK);
    markov_fleet_free(s, NODES);
}
END_TEST

/* The time down in [0, T] per node: its mean against π (T − (1 − e^(−λT)) / λ). */
START_TEST(test_long_run_fraction_down)
{
    const double up = 20, down = 5, pi = down / (up + down), rate = 1 / up + 1 / down, horizon = 2000;
    HsDiag diag;
    TraceSeries *s = markov_fleet(NODES, up, down, 3, &diag);
    double sum = 0, sum2 = 0;
    for (int i = 0; i < NODES; i++) {
        double f = trace_offline_between(&s[i], 0, horizon) / horizon;
        sum += f;
        sum2 += f * f;
    }
    double mean = sum / NODES, se = sqrt((sum2 / NODES - mean * mean) / (NODES - 1));
    double expected = pi * (1 - (1 - exp(-rate * horizon)) / (rate * horizon));
    ck_assert_msg(fabs(mean - expected) < 4 * se, "fraction down %g, expected %g (se %g)", mean, expected, se);
    ck_assert(fabs(expected - pi) < 0.01); /* the long-run fraction, the start forgotten */
    markov_fleet_free(s, NODES);
}
END_TEST

/* Completed up and down durations: means U and D (an exponential's sd is its mean). */
START_TEST(test_mean_durations)
{
    const double up = 0.5, down = 2;
    HsDiag diag;
    TraceSeries *s = markov_fleet(500, up, down, 7, &diag);
    double total[2] = {0, 0};
    int count[2] = {0, 0};
    for (int i = 0; i < 500; i++) {
        trace_value(&s[i], 100);
        ck_assert(s[i].times[0] == 0 && s[i].values[0] == 1); /* starts up */
        for (int k = 0; k + 1 < s[i].n; k++) {
            int state = s[i].values[k] > 0.5;
            ck_assert(s[i].values[k + 1] == !state); /* alternates */
            total[state] += s[i].times[k + 1] - s[i].times[k];
            count[state]++;
        }
    }
    for (int state = 0; state < 2; state++) {
        double mean = total[state] / count[state], expected = state ? up : down;
        ck_assert_msg(fabs(mean - expected) < 4 * expected / sqrt(count[state]), "%s: mean %g over %d, expected %g",
                      state ? "up" : "down", mean, count[state], expected);
    }
    markov_fleet_free(s, 500);
}
END_TEST

static int same_rows(const TraceSeries *a, const TraceSeries *b, double from, double to)
{
    for (double t = from; t < to; t += 0.01)
        if (trace_value(a, t) != trace_value(b, t) || trace_next_change(a, t) != trace_next_change(b, t)) return 0;
    return 1;
}

/* Drawn at once or bit by bit by every kind of query, forgotten before a time or not: the
 * same process. Another node, seed or purpose: another process. */
START_TEST(test_lazy_draws_are_one_process)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    TraceSeries at_once, bit_by_bit, other;
    ck_assert_int_eq(markov_series_init(&at_once, 1, 0.5, 5, 9, RNG_PURPOSE_OUTAGE, &diag), HS_OK);
    ck_assert_int_eq(markov_series_init(&bit_by_bit, 1, 0.5, 5, 9, RNG_PURPOSE_OUTAGE, &diag), HS_OK);
    trace_value(&at_once, 100);
    double t = 0;
    for (int k = 0; t < 100; k++) {
        switch (k % 4) {
        case 0: t = trace_next_change(&bit_by_bit, t); break;
        case 1: t = trace_next_offline(&bit_by_bit, t) + 0.1; break;
        case 2: t = trace_advance_online(&bit_by_bit, t, 0.7); break;
        default: trace_offline_between(&bit_by_bit, t, t + 0.3); t += 0.3; break;
        }
    }
    ck_assert_int_eq(bit_by_bit.n > 20, 1);
    ck_assert(same_rows(&at_once, &bit_by_bit, 0, 100));
    markov_forget_before(&bit_by_bit, 50);
    ck_assert(bit_by_bit.times[0] <= 50 && bit_by_bit.n < at_once.n);
    ck_assert(same_rows(&at_once, &bit_by_bit, 50, 120));
    ck_assert(trace_offline_between(&at_once, 55, 99) == trace_offline_between(&bit_by_bit, 55, 99));
    ck_assert(trace_advance_online(&at_once, 60, 5) == trace_advance_online(&bit_by_bit, 60, 5));
    /* never down for good: online at t = inf, and work always ends */
    ck_assert(trace_value(&at_once, INFINITY) == 1);
    ck_assert(isfinite(trace_advance_online(&at_once, 0, 1000)));
    uint64_t variants[3][3] = {{5, 10, RNG_PURPOSE_OUTAGE}, {6, 9, RNG_PURPOSE_OUTAGE}, {5, 9, RNG_PURPOSE_AVAILABILITY}};
    for (int v = 0; v < 3; v++) {
        ck_assert_int_eq(markov_series_init(&other, 1, 0.5, variants[v][0], variants[v][1], variants[v][2], &diag), HS_OK);
        ck_assert(!same_rows(&at_once, &other, 0, 100));
        markov_series_free(&other);
    }
    ck_assert_int_eq(diag.status, HS_OK);
    /* asked before the rows kept: an internal error, not a wrong answer given quietly */
    trace_value(&bit_by_bit, 10);
    ck_assert_int_eq(diag.status, HS_E_INTERNAL);
    markov_series_free(&at_once);
    markov_series_free(&bit_by_bit);
}
END_TEST

/* A battery's outages cut into a copy of the process (trace_series_copy and
 * trace_series_offline, as the engine does): the copy is online exactly when the process
 * is and no cut says offline, at every time, whether its rows were drawn before the cut
 * or after it; a cut for good leaves it offline at t = inf. */
static int online_when_both(const TraceSeries *process, const TraceSeries *copy, const double (*cuts)[2], int n_cuts,
                            double from, double to)
{
    for (double t = from; t < to; t += 0.003) {
        int online = trace_value(process, t) > 0.5;
        for (int k = 0; k < n_cuts; k++) online &= !(t >= cuts[k][0] && t < cuts[k][1]);
        if ((trace_value(copy, t) > 0.5) != online) return 0;
    }
    return 1;
}

START_TEST(test_battery_cut_kept_as_drawn)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    TraceSeries process, copy;
    ck_assert_int_eq(markov_series_init(&process, 0.4, 0.1, 3, 2, RNG_PURPOSE_AVAILABILITY, &diag), HS_OK);
    trace_value(&process, 0.05); /* the copy starts from a partly drawn process */
    ck_assert_int_eq(trace_series_copy(&process, &copy), HS_OK);
    ck_assert_ptr_nonnull(copy.markov);
    const double cuts[3][2] = {{1.3, 2.05}, {2.05, 2.5}, {4.2, INFINITY}};
    trace_value(&copy, 1.0); /* rows drawn before the first cut, past it for the second */
    ck_assert_int_eq(trace_series_offline(&copy, cuts[0][0], cuts[0][1]), HS_OK);
    ck_assert(trace_offline_between(&copy, 1.3, 2.05) == 2.05 - 1.3);
    ck_assert_int_eq(trace_series_offline(&copy, cuts[1][0], cuts[1][1]), HS_OK);
    ck_assert(online_when_both(&process, &copy, cuts, 2, 0.05, 4.2)); /* draws the copy on */
    /* work started before a cut waits it out, with the process's own outages */
    double finish = trace_advance_online(&copy, 1.0, 2.0);
    ck_assert(finish >= 1.0 + 2.0 + (2.5 - 1.3));
    ck_assert(trace_offline_between(&copy, 1.0, finish) == finish - 1.0 - 2.0);
    markov_forget_before(&copy, 3.0);
    ck_assert(same_rows(&process, &copy, 3.0, 4.0));
    ck_assert_int_eq(trace_series_offline(&copy, cuts[2][0], cuts[2][1]), HS_OK);
    ck_assert_ptr_null(copy.markov); /* offline for good: a plain series now */
    ck_assert(online_when_both(&process, &copy, cuts, 3, 3.0, 6.0));
    ck_assert(trace_value(&copy, INFINITY) == 0);
    ck_assert(trace_value(&process, INFINITY) == 1);
    ck_assert(!isfinite(trace_advance_online(&copy, 4.0, 1.0)));
    ck_assert_int_eq(diag.status, HS_OK);
    trace_series_free(&copy);
    markov_series_free(&process);
}
END_TEST

/* trace_advance_online on a process by hand: the first online seconds fill the first up
 * interval, the rest waits out the down one. */
START_TEST(test_work_pauses_while_down)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    TraceSeries s;
    ck_assert_int_eq(markov_series_init(&s, 2, 3, 1, 0, RNG_PURPOSE_AVAILABILITY, &diag), HS_OK);
    trace_value(&s, 0);
    double first_down = s.times[1];
    trace_value(&s, first_down);
    double back = s.times[2];
    ck_assert(trace_advance_online(&s, 0, first_down / 2) == first_down / 2);
    ck_assert(fabs(trace_advance_online(&s, 0, first_down + 0.25) - (back + 0.25)) < 1e-12);
    ck_assert(trace_next_offline(&s, 0) == first_down);
    ck_assert(fabs(trace_offline_between(&s, 0, back + 1) - (back - first_down)) < 1e-12);
    markov_series_free(&s);
}
END_TEST

static void resolve(const char *text, Scenario *sc)
{
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(inidoc_load_string("t.ini", text, &doc, &diag), 0);
    ck_assert_msg(scenario_resolve(&doc, sc, &diag) == 0, "%s", diag.message);
    inidoc_free(&doc);
}

#define FLEET "[run]\nmethod = sync\nrounds = %d\nmode = timing\nseed = 21\n[model]\nlayers = 784,10\nbatch = 10\n" \
              "[agents]\ncount = 4\ncompute = 200 MFLOPS\nbandwidth = inf\nsamples = 100\n" \
              "availability = markov(%s, %s)\n"

/* A sync run's last round replayed from the agents' streams: each agent's offline time is
 * the process's over [t_start, t_end), and each of its 10 steps ends when the slowest
 * agent has computed the step's online seconds and every agent is online for the ring
 * (instant: bandwidth inf). Rows forgotten at every round's start change nothing; a
 * second run gives the same rows. */
START_TEST(test_run_replays_the_processes)
{
    char text[1024];
    snprintf(text, sizeof text, FLEET, 6, "20 ms", "10 ms");
    Scenario sc;
    resolve(text, &sc);
    TestSink ts, again;
    RunOutcome out;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(sim_run(&sc, test_sink_init(&ts), &diag, &out) == 0, "%s", diag.message);
    ck_assert_msg(sim_run(&sc, test_sink_init(&again), &diag, &out) == 0, "%s", diag.message);
    ck_assert_str_eq(ts.text, again.text);
    ModelProfile p;
    model_profile(&sc.model, &p);
    double step = 10 * (p.total_flops + p.loss_flops) / 200e6; /* a step: 10 samples */
    ck_assert_int_eq(ts.rounds, 6);
    double t_start = ts.round_rows[5].t_start, t_end = ts.round_rows[5].t_end, offline = 0;
    TraceSeries s[4];
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(markov_series_init(&s[i], 0.02, 0.01, sc.seed, (uint64_t)i, RNG_PURPOSE_AVAILABILITY, &diag),
                         HS_OK);
        double expected = trace_offline_between(&s[i], t_start, t_end);
        ck_assert_msg(fabs(ts.agent_round_rows[i].offline_s - expected) < 1e-12, "agent %d: offline %.17g, replay %.17g",
                      i, ts.agent_round_rows[i].offline_s, expected);
        offline += expected;
    }
    double t = t_start;
    for (int k = 0; k < 10; k++) {
        double slowest = t;
        for (int i = 0; i < 4; i++) slowest = fmax(slowest, trace_advance_online(&s[i], t, step));
        t = slowest;
        for (int i = 0; i < 4; i++) slowest = fmax(slowest, trace_advance_online(&s[i], t, 0));
        t = slowest;
    }
    for (int i = 0; i < 4; i++) markov_series_free(&s[i]);
    ck_assert_msg(fabs(t_end - t) < 1e-9, "t_end %.17g, replay %.17g", t_end, t);
    ck_assert(offline > 0); /* the processes did take agents away */
    test_sink_free(&ts);
    test_sink_free(&again);
}
END_TEST

/* Bad markov() arguments name the scenario's line (the 14th: availability). */
START_TEST(test_bad_inputs)
{
    const char *bad[][3] = {{"0", "1 s", "positive"},    {"1 s", "-2 s", "positive"}, {"1 s", "inf", "finite"},
                            {"1 s", "", "takes 2 times"}, {"1 kg", "1 s", "in markov()"}};
    for (int k = 0; k < 5; k++) {
        char text[1024];
        snprintf(text, sizeof text, FLEET, 1, bad[k][0], bad[k][1]);
        IniDoc doc;
        HsDiag diag;
        hs_diag_clear(&diag);
        Scenario sc;
        ck_assert_int_eq(inidoc_load_string("t.ini", text, &doc, &diag), 0);
        ck_assert_int_eq(scenario_resolve(&doc, &sc, &diag), HS_E_INPUT);
        ck_assert_msg(strncmp(diag.message, "t.ini:14:", 9) == 0 && strstr(diag.message, bad[k][2]),
                      "markov(%s, %s): %s", bad[k][0], bad[k][1], diag.message);
        inidoc_free(&doc);
    }
}
END_TEST

static Suite *markov_suite(void)
{
    Suite *s = suite_create("markov");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fraction_down_at_t);
    tcase_add_test(tc, test_long_run_fraction_down);
    tcase_add_test(tc, test_mean_durations);
    tcase_add_test(tc, test_lazy_draws_are_one_process);
    tcase_add_test(tc, test_battery_cut_kept_as_drawn);
    tcase_add_test(tc, test_work_pauses_while_down);
    tcase_add_test(tc, test_run_replays_the_processes);
    tcase_add_test(tc, test_bad_inputs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(markov_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
