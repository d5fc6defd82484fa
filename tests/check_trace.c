/* check_trace.c — trace files: parsing, group and index rows, step values, pausing
 * while offline, and every error with its file:line; engine integration. */
#include "sim/engine.h"
#include "sim/trace.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char trace_path[64];

static void write_trace(const char *text)
{
    snprintf(trace_path, sizeof trace_path, "/tmp/hetsim-trace-%d.csv", (int)getpid());
    FILE *f = fopen(trace_path, "w");
    fputs(text, f);
    fclose(f);
}

static const char *const groups[] = {"default", "slow"};
static const int group_of[] = {0, 0, 1};

START_TEST(test_parse_and_values)
{
    write_trace("# comment\nagent,time,value\ndefault,0,1 GFLOPS\ndefault,10 s,2 GFLOPS\nslow,0,100 MFLOPS\n1,5,3e9\n");
    Trace t;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(trace_load(trace_path, UNIT_COMPUTE, 3, group_of, groups, 2, NULL, &t, &diag), 0);
    ck_assert(trace_value(&t.series[0], 0) == 1e9);
    ck_assert(trace_value(&t.series[0], 9.99) == 1e9);
    ck_assert(trace_value(&t.series[0], 10) == 2e9);
    ck_assert(trace_value(&t.series[2], 100) == 1e8);
    /* agent 1 has its own rows: they replace the group's; before the first, the first holds */
    ck_assert(trace_value(&t.series[1], 0) == 3e9);
    ck_assert(trace_value(&t.series[1], 7) == 3e9);
    trace_free(&t);
    unlink(trace_path);
}
END_TEST

START_TEST(test_availability_pauses_work)
{
    write_trace("default,0,1\ndefault,10,0\ndefault,15,1\nslow,0,1\n");
    Trace t;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(trace_load(trace_path, UNIT_PLAIN, 3, group_of, groups, 2, NULL, &t, &diag), 0);
    const TraceSeries *s = &t.series[0];
    ck_assert(fabs(trace_advance_online(s, 0, 4) - 4) < 1e-12);
    ck_assert(fabs(trace_advance_online(s, 8, 4) - 17) < 1e-12);   /* 2 s, pause 5 s, 2 s */
    ck_assert(fabs(trace_advance_online(s, 12, 1) - 16) < 1e-12);  /* starts offline */
    ck_assert(fabs(trace_advance_online(s, 12, 0) - 15) < 1e-12);  /* next online instant */
    ck_assert(fabs(trace_offline_between(s, 0, 20) - 5) < 1e-12);
    ck_assert(fabs(trace_offline_between(s, 12, 14) - 2) < 1e-12);
    ck_assert(trace_next_offline(s, 0) == 10);   /* online now: when it leaves */
    ck_assert(trace_next_offline(s, 12) == 12);  /* offline now: now */
    ck_assert(isinf(trace_next_offline(s, 15))); /* back for good */
    ck_assert(isinf(trace_next_offline(&t.series[2], 0)));
    trace_free(&t);
    write_trace("default,0,1\ndefault,3,0\nslow,0,1\n");
    ck_assert_int_eq(trace_load(trace_path, UNIT_PLAIN, 3, group_of, groups, 2, NULL, &t, &diag), 0);
    ck_assert(isinf(trace_advance_online(&t.series[0], 1, 5))); /* gone for good */
    trace_free(&t);
    unlink(trace_path);
}
END_TEST

static void expect_trace_error(const char *text, int line, const char *fragment)
{
    write_trace(text);
    Trace t;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(trace_load(trace_path, UNIT_COMPUTE, 3, group_of, groups, 2, NULL, &t, &diag), HS_E_INPUT);
    char prefix[128];
    if (line > 0) snprintf(prefix, sizeof prefix, "%s:%d:", trace_path, line);
    else snprintf(prefix, sizeof prefix, "%s:", trace_path);
    ck_assert_msg(strncmp(diag.message, prefix, strlen(prefix)) == 0, "%s", diag.message);
    ck_assert_msg(strstr(diag.message, fragment) != NULL, "%s lacks %s", diag.message, fragment);
    unlink(trace_path);
}

START_TEST(test_errors)
{
    expect_trace_error("default,0,1 GFLOPS\nslow,x,1 GFLOPS\n", 2, "time");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,fast\n", 2, "value");
    expect_trace_error("default,0,1 GFLOPS\nslow,0\n", 2, "AGENT,TIME,VALUE");
    expect_trace_error("default,0,1 GFLOPS\nfast,0,1 GFLOPS\n", 2, "neither an agent index nor a group");
    expect_trace_error("default,0,1 GFLOPS\n7,0,1 GFLOPS\n", 2, "outside 0..2");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,0\n", 2, "positive");
    expect_trace_error("default,0,1 GFLOPS\n", 0, "no rows for agent 2 (group slow)");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,1 GFLOPS\nslow,0,2 GFLOPS\n", 3, "same time");
    expect_trace_error("# nothing\n", 0, "no rows");
    expect_trace_error("default,-1,1 GFLOPS\n", 1, "negative");
    Trace t;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(trace_load("/nonexistent/t.csv", UNIT_COMPUTE, 3, group_of, groups, 2, NULL, &t, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "cannot open") != NULL);
}
END_TEST

START_TEST(test_engine_offline_straggler_delays_sync)
{
    write_trace("default,0,1\nslow,0,1\nslow,0.001,0\nslow,2.001,1\n");
    char text[1024];
    snprintf(text, sizeof text,
             "[run]\nmethod = sync\nrounds = 1\nmode = timing\n[model]\nlayers = 784,10\nbatch = 10\n"
             "[agents]\ncount = 3\ncompute = 1 GFLOPS\nbandwidth = inf\nsamples = 100\n"
             "[agents.slow]\ncount = 1\navailability = trace(%s)\n", trace_path);
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    Scenario sc;
    ck_assert_int_eq(inidoc_load_string("t.ini", text, &doc, &diag), 0);
    ck_assert_msg(scenario_resolve(&doc, &sc, &diag) == 0, "%s", diag.message);
    inidoc_free(&doc);
    TestSink ts;
    RunOutcome out;
    ck_assert_msg(engine_run(&sc, test_sink_init(&ts), &diag, &out) == 0, "%s", diag.message);
    /* 10 steps of well under a millisecond: the 2 s offline in the middle add to the round */
    ModelProfile p;
    model_profile(&sc.model, &p);
    double step = 10 * (p.total_flops + p.loss_flops) / 1e9;
    ck_assert(fabs(ts.last_t_end - (10 * step + 2.0)) < 1e-9);
    ck_assert(fabs(ts.agent_round_rows[2].offline_s - 2.0) < 1e-9);
    ck_assert(fabs(ts.agent_round_rows[0].idle_s - 2.0) < 1e-9); /* the others wait for it */
    ck_assert(fabs(ts.agent_round_rows[2].idle_s) < 1e-9);
    test_sink_free(&ts);
    unlink(trace_path);
}
END_TEST

static Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse_and_values);
    tcase_add_test(tc, test_availability_pauses_work);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_engine_offline_straggler_delays_sync);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(trace_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
