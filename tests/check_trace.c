/* check_trace.c — trace files: parsing, group and index rows, step values, pausing
 * while offline, and every error with its file:line; engine integration. */
#include "sim/run.h"
#include "sim/kernel/trace.h"
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

/* Loads text as a trace of unit: HS_E_INPUT with "path:line:" (line 0: "path:") and fragment. */
static void expect_unit_error(UnitKind unit, const char *text, int line, const char *fragment)
{
    write_trace(text);
    Trace t;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(trace_load(trace_path, unit, 3, group_of, groups, 2, NULL, &t, &diag) == HS_E_INPUT,
                  "accepted: %s", text);
    char prefix[128];
    if (line > 0) snprintf(prefix, sizeof prefix, "%s:%d:", trace_path, line);
    else snprintf(prefix, sizeof prefix, "%s:", trace_path);
    ck_assert_msg(strncmp(diag.message, prefix, strlen(prefix)) == 0, "%s", diag.message);
    ck_assert_msg(strstr(diag.message, fragment) != NULL, "%s lacks %s", diag.message, fragment);
    unlink(trace_path);
}

static void expect_trace_error(const char *text, int line, const char *fragment)
{
    expect_unit_error(UNIT_COMPUTE, text, line, fragment);
}

/* Loads text as a trace of unit over the 3 agents; the caller frees *t. */
static void expect_trace_ok(UnitKind unit, const char *text, Trace *t)
{
    write_trace(text);
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(trace_load(trace_path, unit, 3, group_of, groups, 2, NULL, t, &diag) == HS_OK, "%s: %s", text,
                  diag.message);
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
    ck_assert(strstr(diag.message, "/nonexistent/t.csv: not found") != NULL);
}
END_TEST

/* Issue 21: times that go back within a series were sorted silently. */
START_TEST(test_times_increase_per_series)
{
    expect_unit_error(UNIT_PLAIN, "0,0,1\n0,10 s,0\n0,5 s,1\n1,0,1\n2,0,1\n", 3, "goes back");
    expect_unit_error(UNIT_PLAIN, "0,0,1\n0,10 s,0\n0,5 s,1\n1,0,1\n2,0,1\n", 3, "(line 2) is at 10 s");
    expect_unit_error(UNIT_PLAIN, "default,0,1\nslow,20,1\n\nslow,3,0\n", 4, "group slow (line 2)");
    /* the first bad line in file order is named, whichever series it is in */
    expect_trace_error("default,0,1 GFLOPS\nslow,5,1 GFLOPS\ndefault,9,1 GFLOPS\nslow,4,1 GFLOPS\ndefault,1,1 GFLOPS\n", 4,
                       "goes back");
    /* equal times stay an error: the second line, naming the first */
    expect_trace_error("default,0,1 GFLOPS\nslow,0,1 GFLOPS\nslow,7,2 GFLOPS\nslow,7 s,3 GFLOPS\n", 4,
                       "a second value at the same time (first at line 3)");
    /* series are separate: an index is not its group, and rows of different series interleave */
    Trace t;
    expect_trace_ok(UNIT_PLAIN, "default,0,0\n0,5,0\nslow,0,1\ndefault,10,1\n2,0,0\n0,7,1\n", &t);
    ck_assert(trace_value(&t.series[1], 3) == 0);
    ck_assert(trace_value(&t.series[1], 10) == 1);
    ck_assert(trace_value(&t.series[0], 3) == 0);
    ck_assert(trace_value(&t.series[0], 7) == 1);
    ck_assert(trace_value(&t.series[2], 0) == 0);
    trace_free(&t);
}
END_TEST

/* Issue 21: `default,0,1,7` was read as `default,0,1`. */
START_TEST(test_exactly_three_fields)
{
    expect_trace_error("default,0,1 GFLOPS,7\nslow,0,1 GFLOPS\n", 1, "expected AGENT,TIME,VALUE, found 4 fields");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,1 GFLOPS,\n", 2, "found 4 fields");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,1,2,3 GFLOPS\n", 2, "found 5 fields");
    expect_trace_error("default,0,1 GFLOPS\nslow,0\n", 2, "found 2 fields");
    expect_trace_error("default,0,1 GFLOPS\nslow 0 1\n", 2, "found 1 field");
    /* empty and blank fields */
    expect_trace_error("default,0,1 GFLOPS\n,0,1 GFLOPS\n", 2, "AGENT is empty");
    expect_trace_error("default,0,1 GFLOPS\n  ,0,1 GFLOPS\n", 2, "AGENT is empty");
    expect_trace_error("default,0,1 GFLOPS\nslow,,1 GFLOPS\n", 2, "time: expected a number, found nothing");
    expect_trace_error("default,0,1 GFLOPS\nslow, \t,1 GFLOPS\n", 2, "time: expected a number, found nothing");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,\n", 2, "value: expected a number, found nothing");
    expect_trace_error("default,0,1 GFLOPS\nslow,0, \n", 2, "value: expected a number, found nothing");
    expect_trace_error("default,0,1 GFLOPS\n,,\n", 2, "AGENT is empty");
    /* spaces around fields and CRLF line ends are fine */
    Trace t;
    expect_trace_ok(UNIT_COMPUTE, " default , 0 s , 1 GFLOPS \r\n\tslow,0,2 GFLOPS\r\n", &t);
    ck_assert(trace_value(&t.series[2], 0) == 2e9);
    trace_free(&t);
}
END_TEST

/* A header is the first line, with words for TIME and VALUE; it hid a bad first row. */
START_TEST(test_header_and_comments)
{
    Trace t;
    expect_trace_ok(UNIT_COMPUTE, "# a comment\n\n   \nagent,time,value # columns\ndefault,0,1 GFLOPS # full speed\n"
                                  "#slow,0,7 GFLOPS\nslow,0,2 GFLOPS\n", &t);
    ck_assert_int_eq(t.series[2].n, 1);
    ck_assert(trace_value(&t.series[2], 0) == 2e9);
    trace_free(&t);
    expect_trace_ok(UNIT_COMPUTE, "AGENT , time (s) , Value (FLOP/s)\ndefault,0,1e9\nslow,0,1e9\n", &t);
    trace_free(&t);
    /* a first row with a bad field is an error, not a header */
    expect_trace_error("0,,1 GFLOPS\ndefault,0,1 GFLOPS\nslow,0,1 GFLOPS\n", 1, "time");
    expect_trace_error("default,x,1 GFLOPS\nslow,0,1 GFLOPS\n", 1, "time: expected a number, found 'x'");
    expect_trace_error("default,5 parsecs,1 GFLOPS\nslow,0,1 GFLOPS\n", 1, "unknown unit 'parsecs'");
    expect_trace_error("default,1O,1O GFLOPS\nslow,0,1 GFLOPS\n", 1, "time");
    /* only the first line may be a header */
    expect_trace_error("default,0,1 GFLOPS\nagent,time,value\n", 2, "time");
    expect_trace_error("agent,time,value\nagent,time,value\n", 2, "time");
    expect_trace_error("agent,time\ndefault,0,1 GFLOPS\n", 1, "found 2 fields");
    expect_trace_error("agent,time,value\n# only a header\n", 0, "no rows");
    /* a comment can hide the commas of a row */
    expect_trace_error("default,0,1 GFLOPS\nslow,0 # ,1 GFLOPS\n", 2, "found 2 fields");
    char long_line[1200];
    memset(long_line, ' ', sizeof long_line);
    memcpy(long_line, "#", 1);
    long_line[sizeof long_line - 2] = '\n';
    long_line[sizeof long_line - 1] = '\0';
    expect_trace_error(long_line, 1, "line longer than 1022 characters");
}
END_TEST

START_TEST(test_units_of_time_and_value)
{
    Trace t;
    expect_trace_ok(UNIT_COMPUTE, "default,0,2 GFLOPS\ndefault,2 min,500 MFLOPS\ndefault,1 h,3e9\nslow,90 s,1 TFLOP/s\n", &t);
    ck_assert(trace_value(&t.series[0], 119.9) == 2e9);
    ck_assert(trace_value(&t.series[0], 120) == 5e8);
    ck_assert(trace_value(&t.series[0], 3600) == 3e9);
    ck_assert(t.series[2].times[0] == 90);
    ck_assert(trace_value(&t.series[2], 0) == 1e12);
    trace_free(&t);
    expect_trace_ok(UNIT_BANDWIDTH, "default,0,10 MB/s\ndefault,500 ms,8 Mbit/s\nslow,0,125\n", &t);
    ck_assert(trace_value(&t.series[0], 0.5) == 1e6);
    ck_assert(trace_value(&t.series[2], 0) == 125);
    trace_free(&t);
    expect_trace_error("default,0,10 MB/s\nslow,0,1 GFLOPS\n", 1, "value: unknown unit 'MB/s'");
    expect_unit_error(UNIT_BANDWIDTH, "default,0,1 GFLOPS\nslow,0,1 MB/s\n", 1, "value: unknown unit 'GFLOPS'");
    expect_unit_error(UNIT_PLAIN, "default,0,1 s\nslow,0,1\n", 1, "a plain number is expected");
    expect_trace_error("default,0,1 GFLOPS\nslow,5 GFLOPS,1 GFLOPS\n", 2, "time: unknown unit 'GFLOPS'");
}
END_TEST

/* Availability is 1 (online) or 0 (offline); other values read as online or offline by a
 * 0.5 threshold before. */
START_TEST(test_availability_is_zero_or_one)
{
    expect_unit_error(UNIT_PLAIN, "default,0,1\nslow,0,0.7\n", 2, "availability must be 0 (offline) or 1 (online), found 0.7");
    expect_unit_error(UNIT_PLAIN, "default,0,1\nslow,0,2\n", 2, "found 2");
    expect_unit_error(UNIT_PLAIN, "default,0,1\nslow,0,-1\n", 2, "found -1");
    expect_unit_error(UNIT_PLAIN, "default,0,1\nslow,0,1e-9\n", 2, "0 (offline) or 1 (online)");
    expect_unit_error(UNIT_PLAIN, "default,0,1\nslow,0,inf\n", 2, "value");
    Trace t;
    expect_trace_ok(UNIT_PLAIN, "default,0,1.0\nslow,0,0\nslow,1,1\n", &t);
    ck_assert(trace_value(&t.series[2], 0.5) == 0);
    trace_free(&t);
}
END_TEST

/* Watts (a battery's charging): 0 allowed, negatives refused at their line; the integral
 * and the time it reaches an amount, in closed form on a step. */
START_TEST(test_watts_integral)
{
    expect_unit_error(UNIT_POWER, "default,0,1 W\nslow,0,-100 mW\n", 2, "watts must be in [0, 1e9], found -100 mW");
    expect_unit_error(UNIT_POWER, "default,0,1 W\nslow,0,2e9 W\n", 2, "watts must be in [0, 1e9]");
    Trace t;
    /* 0 W until 2 s, 0.1 W until 10 s, 0.5 W from then on; slow: 0 W for good after 1 s */
    expect_trace_ok(UNIT_POWER, "default,0,0 W\ndefault,2,100 mW\ndefault,10,0.5 W\nslow,0,1 W\nslow,1,0 W\n", &t);
    const TraceSeries *s = &t.series[0];
    ck_assert(trace_integral(s, 0, 2) == 0);
    ck_assert(fabs(trace_integral(s, 1, 4) - 0.2) < 1e-15);
    ck_assert(fabs(trace_integral(s, 0, 12) - (0.8 + 1.0)) < 1e-15);
    /* R = 0.2 J from t = 0.5: nothing until 2 s, then R / C = 2 s more */
    ck_assert(trace_advance_integral(s, 0.5, 0.2) == 4);
    /* across a step: 0.8 J by 10 s, the rest at 0.5 W */
    ck_assert(fabs(trace_advance_integral(s, 0, 1.3) - 11) < 1e-12);
    ck_assert(trace_advance_integral(s, 3, 0.1) == 4);
    /* a rate that ends at 0 brings nothing more for good */
    ck_assert(trace_advance_integral(&t.series[2], 0, 0.5) == 0.5);
    ck_assert(isinf(trace_advance_integral(&t.series[2], 0.5, 1)));
    ck_assert(isinf(trace_advance_integral(&t.series[2], 2, 0.1)));
    trace_free(&t);
}
END_TEST

START_TEST(test_value_and_time_limits)
{
    expect_trace_error("default,0,1 GFLOPS\nslow,0,-2 GFLOPS\n", 2, "value must be positive");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,0 GFLOPS\n", 2, "value must be positive");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,1e-400 GFLOPS\n", 2, "value must be positive"); /* underflows to 0 */
    expect_trace_error("default,0,1 GFLOPS\nslow,0,nan\n", 2, "value: expected a number");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,-nan GFLOPS\n", 2, "value: expected a number");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,inf\n", 2, "value: expected a number");
    expect_trace_error("default,0,1 GFLOPS\nslow,0,1e999 FLOPS\n", 2, "value: expected a number");
    /* finite as written, infinite in SI units */
    expect_trace_error("default,0,1 GFLOPS\nslow,0,1e308 TFLOPS\n", 2,
                       "value: '1e308 TFLOPS' is beyond the largest number a double holds");
    expect_unit_error(UNIT_BANDWIDTH, "default,0,1 MB/s\nslow,0,1e306 GB/s\n", 2, "beyond the largest number");
    expect_trace_error("default,0,1 GFLOPS\nslow,1e306 d,1 GFLOPS\n", 2,
                       "time: '1e306 d' is beyond the largest number a double holds");
    expect_trace_error("default,inf,1 GFLOPS\n", 1, "time must be finite");
    expect_trace_error("default,-1 ms,1 GFLOPS\n", 1, "not negative");
    expect_trace_error("default,nan,1 GFLOPS\n", 1, "time: expected a number");
    /* `inf` is a bandwidth (as everywhere in a scenario); the largest finite values pass */
    Trace t;
    expect_trace_ok(UNIT_BANDWIDTH, "default,0,inf\nslow,0,1e299 GB/s\n", &t);
    ck_assert(isinf(trace_value(&t.series[0], 0)));
    ck_assert(trace_value(&t.series[2], 0) == 1e299 * 1e9);
    trace_free(&t);
}
END_TEST

START_TEST(test_agents_groups_and_coverage)
{
    expect_trace_error("default,0,1 GFLOPS\nstragglers,0,1 GFLOPS\n", 2, "'stragglers' is neither an agent index nor a group");
    expect_trace_error("default,0,1 GFLOPS\nDefault,0,1 GFLOPS\n", 2, "neither"); /* names are case-sensitive */
    expect_trace_error("default,0,1 GFLOPS\n1.0,0,1 GFLOPS\n", 2, "'1.0' is neither");
    expect_trace_error("default,0,1 GFLOPS\n3,0,1 GFLOPS\n", 2, "agent 3 is outside 0..2");
    expect_trace_error("default,0,1 GFLOPS\n-1,0,1 GFLOPS\n", 2, "agent -1 is outside 0..2");
    expect_trace_error("default,0,1 GFLOPS\n99999999999999999999,0,1 GFLOPS\n", 2,
                       "agent 99999999999999999999 is outside 0..2");
    /* every agent needs rows, from its group or its index */
    expect_trace_error("slow,0,1 GFLOPS\n0,0,1 GFLOPS\n", 0, "no rows for agent 1 (group default)");
    Trace t;
    expect_trace_ok(UNIT_COMPUTE, "0,0,1 GFLOPS\n1,0,2 GFLOPS\nslow,0,3 GFLOPS\n", &t);
    ck_assert(trace_value(&t.series[1], 0) == 2e9);
    trace_free(&t);
    /* index rows replace all of their group's rows, not just those at the same times */
    expect_trace_ok(UNIT_COMPUTE, "default,0,1 GFLOPS\ndefault,10,5 GFLOPS\n0,3,2 GFLOPS\nslow,0,3 GFLOPS\n2,0,4 GFLOPS\n", &t);
    ck_assert_int_eq(t.series[0].n, 1);
    ck_assert(trace_value(&t.series[0], 20) == 2e9);
    ck_assert(trace_value(&t.series[1], 20) == 5e9);
    ck_assert(trace_value(&t.series[2], 0) == 4e9);
    trace_free(&t);
    /* only the agents that use the trace must be covered */
    write_trace("slow,0,1 GFLOPS\n");
    HsDiag diag;
    hs_diag_clear(&diag);
    const char needed[] = {0, 0, 1};
    ck_assert_int_eq(trace_load(trace_path, UNIT_COMPUTE, 3, group_of, groups, 2, needed, &t, &diag), HS_OK);
    ck_assert_int_eq(t.series[0].n, 0);
    ck_assert_int_eq(t.series[2].n, 1);
    trace_free(&t);
    const char needed_first[] = {1, 0, 0};
    ck_assert_int_eq(trace_load(trace_path, UNIT_COMPUTE, 3, group_of, groups, 2, needed_first, &t, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "no rows for agent 0 (group default)") != NULL, "%s", diag.message);
    unlink(trace_path);
}
END_TEST

/* Batteries cut outages into an owned copy of a series (docs/energy.md): 0 on [a, b), the
 * series' own value elsewhere, its rows still increasing. */
START_TEST(test_series_offline)
{
    TraceSeries s;
    ck_assert_int_eq(trace_series_copy(NULL, &s), HS_OK); /* always online */
    ck_assert_int_eq(trace_series_offline(&s, 2, 5), HS_OK);
    ck_assert(trace_value(&s, 1.9) == 1 && trace_value(&s, 2) == 0 && trace_value(&s, 4.99) == 0 && trace_value(&s, 5) == 1);
    ck_assert(trace_offline_between(&s, 0, 10) == 3);
    ck_assert(trace_advance_online(&s, 1, 2) == 6); /* 1 s before the outage, 1 s after */
    ck_assert(trace_next_offline(&s, 0) == 2 && trace_next_offline(&s, 5) == INFINITY);
    ck_assert_int_eq(trace_series_offline(&s, 8, INFINITY), HS_OK); /* for good */
    ck_assert(trace_value(&s, 7) == 1 && trace_value(&s, 1e300) == 0 && trace_advance_online(&s, 7, 2) == INFINITY);
    for (int k = 1; k < s.n; k++) ck_assert(s.times[k] > s.times[k - 1]);
    trace_series_free(&s);
    /* a churn trace starting offline-then-online at 10 s: the outage keeps what lies outside */
    double times[] = {4, 10}, values[] = {0, 1};
    TraceSeries churn = {.n = 2, .times = times, .values = values};
    ck_assert_int_eq(trace_series_copy(&churn, &s), HS_OK);
    ck_assert_int_eq(trace_series_offline(&s, 12, 15), HS_OK);
    ck_assert(trace_value(&s, 1) == 0 && trace_value(&s, 11) == 1 && trace_value(&s, 13) == 0 && trace_value(&s, 20) == 1);
    ck_assert(trace_offline_between(&s, 0, 20) == 10 + 3);
    trace_series_free(&s);
    /* an outage before a series' first row keeps its first value before the outage */
    double late[] = {6}, on[] = {1};
    TraceSeries first = {.n = 1, .times = late, .values = on};
    ck_assert_int_eq(trace_series_copy(&first, &s), HS_OK);
    ck_assert_int_eq(trace_series_offline(&s, 3, 4), HS_OK);
    ck_assert(trace_value(&s, 1) == 1 && trace_value(&s, 3.5) == 0 && trace_value(&s, 5) == 1);
    trace_series_free(&s);
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
    ck_assert_msg(sim_run(&sc, test_sink_init(&ts), &diag, &out) == 0, "%s", diag.message);
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
    tcase_add_test(tc, test_times_increase_per_series);
    tcase_add_test(tc, test_exactly_three_fields);
    tcase_add_test(tc, test_header_and_comments);
    tcase_add_test(tc, test_units_of_time_and_value);
    tcase_add_test(tc, test_availability_is_zero_or_one);
    tcase_add_test(tc, test_value_and_time_limits);
    tcase_add_test(tc, test_watts_integral);
    tcase_add_test(tc, test_agents_groups_and_coverage);
    tcase_add_test(tc, test_engine_offline_straggler_delays_sync);
    tcase_add_test(tc, test_series_offline);
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
