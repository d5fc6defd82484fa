/* check_scenario.c — units, distributions, groups, overrides, every error class with
 * its FILE:LINE, the runs.config round trip, and per-agent stream independence. */
#include "base/numtext.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"
#include "tests/test_scenario.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base_text =
    "[run]\n"                                 /* 1 */
    "method = sync\n"                         /* 2 */
    "rounds = 3\n"                            /* 3 */
    "mode = timing\n"                         /* 4 */
    "[agents]\n"                              /* 5 */
    "count = 8\n"                             /* 6 */
    "compute = 2 GFLOPS\n"                    /* 7 */
    "bandwidth = 100 Mbit/s\n"                /* 8 */
    "latency = 10 ms\n";                      /* 9 */

static int resolve_text(const char *text, Scenario *sc, HsDiag *diag)
{
    return test_resolve(text, NULL, 0, sc, diag);
}

/* Resolves base_text with extra appended and expects an error that starts with prefix. */
static void expect_error(const char *extra, const char *prefix, const char *fragment)
{
    test_expect_resolve_error(base_text, extra, NULL, 0, prefix, fragment);
}

START_TEST(test_minimal_resolves_with_defaults)
{
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(resolve_text(base_text, &sc, &diag), 0);
    ck_assert_str_eq(sc.method, "sync");
    ck_assert_str_eq(sc.name, "t");
    ck_assert_int_eq(sc.rounds, 3);
    ck_assert_int_eq(sc.n_agents, 8);
    ck_assert_int_eq(sc.groups[0].count, 8);
    ck_assert(sc.groups[0].compute.a == 2e9);
    ck_assert(sc.groups[0].uplink.a == 12.5e6);
    ck_assert(sc.groups[0].downlink.a == 12.5e6);
    ck_assert(fabs(sc.groups[0].latency.a - 0.010) < 1e-15);
    ck_assert_int_eq(sc.model.batch, 64);
    ck_assert_int_eq(sc.model.n_sizes, 4);
    ck_assert_int_eq(sc.model.sizes[0], 784);
    ck_assert(sc.seed == 1);
}
END_TEST

START_TEST(test_units)
{
    double v;
    char why[200];
    ck_assert_int_eq(units_parse("2 GFLOPS", UNIT_COMPUTE, &v, why, 200), 0);
    ck_assert(v == 2e9);
    ck_assert_int_eq(units_parse("100 Mbit/s", UNIT_BANDWIDTH, &v, why, 200), 0);
    ck_assert(v == 12.5e6);
    ck_assert_int_eq(units_parse("12.5 MB/s", UNIT_BANDWIDTH, &v, why, 200), 0);
    ck_assert(v == 12.5e6);
    ck_assert_int_eq(units_parse("2h", UNIT_TIME, &v, why, 200), 0);
    ck_assert(v == 7200);
    ck_assert_int_eq(units_parse("250us", UNIT_TIME, &v, why, 200), 0);
    ck_assert(fabs(v - 250e-6) < 1e-18);
    ck_assert_int_eq(units_parse("1.5e9", UNIT_COMPUTE, &v, why, 200), 0);
    ck_assert(v == 1.5e9);
    ck_assert_int_eq(units_parse("inf", UNIT_BANDWIDTH, &v, why, 200), 0);
    ck_assert(isinf(v));
    ck_assert_int_eq(units_parse("10 Mbps", UNIT_BANDWIDTH, &v, why, 200), HS_E_INPUT);
    ck_assert(strstr(why, "Mbit/s") != NULL);
    ck_assert_int_eq(units_parse("fast", UNIT_COMPUTE, &v, why, 200), HS_E_INPUT);
    ck_assert_int_eq(units_parse("", UNIT_TIME, &v, why, 200), HS_E_INPUT);
    ck_assert_int_eq(units_parse("3 GFLOPS", UNIT_PLAIN, &v, why, 200), HS_E_INPUT);
}
END_TEST

START_TEST(test_distributions)
{
    Distribution d;
    char why[300];
    ck_assert_int_eq(distribution_parse("uniform(10 Mbit/s, 100 Mbit/s)", UNIT_BANDWIDTH, &d, why, 300), 0);
    ck_assert(d.kind == DIST_UNIFORM && d.a == 1.25e6 && d.b == 12.5e6);
    ck_assert_int_eq(distribution_parse("lognormal(2 GFLOPS, 0.8)", UNIT_COMPUTE, &d, why, 300), 0);
    ck_assert(d.kind == DIST_LOGNORMAL && d.a == 2e9 && d.b == 0.8);
    ck_assert_int_eq(distribution_parse("normal(1 GFLOPS, 100 MFLOPS)", UNIT_COMPUTE, &d, why, 300), 0);
    ck_assert_int_eq(distribution_parse("pareto(1 GFLOPS, 2.5)", UNIT_COMPUTE, &d, why, 300), 0);
    ck_assert_int_eq(distribution_parse("choice(100 MB/s:0.2, 50 MB/s:0.3, 10 MB/s:0.5)", UNIT_BANDWIDTH, &d, why, 300), 0);
    ck_assert_int_eq(d.n_choices, 3);
    ck_assert(d.values[2] == 10e6 && d.probs[1] == 0.3);
    ck_assert_int_eq(distribution_parse("choice(1:0.5, 2:0.4)", UNIT_PLAIN, &d, why, 300), HS_E_INPUT);
    ck_assert(strstr(why, "sum to 0.9") != NULL);
    ck_assert_int_eq(distribution_parse("uniform(5, 1)", UNIT_PLAIN, &d, why, 300), HS_E_INPUT);
    ck_assert_int_eq(distribution_parse("gamma(1, 2)", UNIT_PLAIN, &d, why, 300), HS_E_INPUT);
    ck_assert(strstr(why, "unknown distribution 'gamma'") != NULL);
    ck_assert_int_eq(distribution_parse("uniform(1, 2", UNIT_PLAIN, &d, why, 300), HS_E_INPUT);
    ck_assert_int_eq(distribution_parse("uniform(1)", UNIT_PLAIN, &d, why, 300), HS_E_INPUT);
    ck_assert_int_eq(distribution_parse("lognormal(1 GFLOPS, 2 GFLOPS)", UNIT_COMPUTE, &d, why, 300), HS_E_INPUT);
}
END_TEST

START_TEST(test_draws_follow_distribution)
{
    Distribution d;
    char why[300];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    ck_assert_int_eq(distribution_parse("choice(1:0.25, 2:0.75)", UNIT_PLAIN, &d, why, 300), 0);
    int twos = 0;
    for (int i = 0; i < 20000; i++) twos += distribution_draw(&d, rng) == 2.0;
    ck_assert(fabs(twos / 20000.0 - 0.75) < 0.02);
    ck_assert_int_eq(distribution_parse("lognormal(5, 1)", UNIT_PLAIN, &d, why, 300), 0);
    int below = 0;
    for (int i = 0; i < 20000; i++) below += distribution_draw(&d, rng) < 5.0;
    ck_assert(fabs(below / 20000.0 - 0.5) < 0.02); /* the median is the first argument */
    ck_assert_int_eq(distribution_parse("normal(1, 5)", UNIT_PLAIN, &d, why, 300), 0);
    for (int i = 0; i < 1000; i++) ck_assert(distribution_draw(&d, rng) > 0);
    gsl_rng_free(rng);
}
END_TEST

START_TEST(test_groups_and_inheritance)
{
    char text[2048];
    snprintf(text, sizeof text, "%s[agents.slow]\ncount = 3\ncompute = 200 MFLOPS\n[agents.mid]\ncount = 2\n"
             "latency = 50 ms\n", base_text);
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(resolve_text(text, &sc, &diag), 0);
    ck_assert_int_eq(sc.n_groups, 3);
    ck_assert_int_eq(sc.groups[0].count, 3);
    ck_assert_str_eq(sc.groups[1].name, "slow");
    ck_assert_int_eq(sc.groups[1].count, 3);
    ck_assert(sc.groups[1].compute.a == 200e6);
    ck_assert(sc.groups[1].uplink.a == 12.5e6); /* inherited */
    ck_assert(sc.groups[2].compute.a == 2e9);
    ck_assert(fabs(sc.groups[2].latency.a - 0.05) < 1e-15);
    World w;
    ck_assert_int_eq(world_build(&sc, &w, &diag), 0);
    ck_assert_int_eq(w.agents[0].group, 0);
    ck_assert_int_eq(w.agents[3].group, 1);
    ck_assert(w.agents[3].compute == 200e6);
    ck_assert_int_eq(w.agents[7].group, 2);
    ck_assert_int_eq(w.agents[0].samples, 60000 / 8);
    world_free(&w);
}
END_TEST

START_TEST(test_overrides)
{
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    char text[2048];
    snprintf(text, sizeof text, "%s[agents.slow]\ncount = 3\ncompute = 200 MFLOPS\n", base_text);
    ck_assert_int_eq(inidoc_load_string("t.ini", text, &doc, &diag), 0);
    ck_assert_int_eq(inidoc_apply_set(&doc, "agents.count=16", &diag), 0);
    ck_assert_int_eq(inidoc_apply_set(&doc, "agents.slow.compute=lognormal(1 GFLOPS, 0.5)", &diag), 0);
    ck_assert_int_eq(inidoc_apply_set(&doc, "method.local_steps = 4", &diag), 0);
    ck_assert_int_eq(inidoc_apply_set(&doc, "run.method=localsgd", &diag), 0);
    Scenario sc;
    ck_assert_int_eq(scenario_resolve(&doc, &sc, &diag), 0);
    ck_assert_int_eq(sc.n_agents, 16);
    ck_assert_int_eq(sc.groups[0].count, 13);
    ck_assert(sc.groups[1].compute.kind == DIST_LOGNORMAL);
    ck_assert_str_eq(test_method_param(&sc, "local_steps")->value, "4");
    ck_assert_int_eq(inidoc_apply_set(&doc, "nodot", &diag), HS_E_INPUT);
    ck_assert(strncmp(diag.message, "--set: ", 7) == 0);
    inidoc_free(&doc);

    /* An override with a bad value names --set, not the file. */
    hs_diag_clear(&diag);
    ck_assert_int_eq(inidoc_load_string("t.ini", base_text, &doc, &diag), 0);
    ck_assert_int_eq(inidoc_apply_set(&doc, "agents.count=many", &diag), 0);
    ck_assert_int_eq(scenario_resolve(&doc, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--set agents.count=many: expected a whole number in [1, 10000000], found 'many'");
    inidoc_free(&doc);
}
END_TEST

START_TEST(test_error_classes_name_file_and_line)
{
    expect_error("bandwith = 10 Mbit/s\n", "t.ini:10:", "did you mean 'bandwidth'");
    expect_error("[agnets]\nx = 1\n", "t.ini:10:", "unknown section [agnets] (did you mean 'agents'?)");
    expect_error("[agents.slow]\ncount = 9\n", "t.ini:11:", "groups take 9 agents, but [agents] count is 8");
    expect_error("[agents.slow]\ncompute = 1 GFLOPS\n", "t.ini:10:", "missing required key 'count' in [agents.slow]");
    expect_error("[model]\nbatch = sixty\n", "t.ini:11:", "expected a whole number");
    expect_error("[model]\nbatch = 0\n", "t.ini:11:", "[model] batch");
    expect_error("[model]\nlr = -1\n", "t.ini:11:", "outside");
    expect_error("[model]\nlayers = 784,100,9\n", "t.ini:11:", "class count 10");
    expect_error("[model]\narch = transformer\n", "t.ini:11:", "not one of mlp|cnn");
    expect_error("[model]\nbatch = 32\nbatch = 64\n", "t.ini:12:", "set twice");
    expect_error("[agents.x]\ncount = 1\ncompute = 5 GHz\n", "t.ini:12:", "unknown unit 'GHz'");
    expect_error("[agents.x]\ncount = 1\ncompute = choice(1 GFLOPS:0.5, 2 GFLOPS:0.6)\n", "t.ini:12:", "sum to 1.1");
    expect_error("[method]\nlocal_steps = 3\n", "t.ini:11:", "unknown key 'local_steps' in [method] for method sync");
    expect_error("[method.localsgd]\nlocal_step = 3\n", "t.ini:11:", "did you mean 'local_steps'");
    expect_error("[method.localsgdd]\nlocal_steps = 3\n", "t.ini:10:", "unknown section [method.localsgdd]");
    expect_error("[data]\npartition = random\n", "t.ini:11:", "not one of iid|dirichlet|shards");
    expect_error("[data]\nthis line is not a key\n", "t.ini:11:", "cannot parse");
    expect_error("[topology]\ngraph = star\n", "t.ini:11:", "not one of full|ring");

    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(resolve_text("[run]\nrounds = 3\n[agents]\ncount = 2\ncompute = 1\nbandwidth = 1\n", &sc, &diag),
                     HS_E_INPUT);
    ck_assert_str_eq(diag.message, "t.ini:1: missing required key 'method' in [run]");
    ck_assert_int_eq(resolve_text("[run]\nmethod = synk\nrounds = 3\n[agents]\ncount = 2\ncompute = 1\nbandwidth = 1\n",
                                  &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:2: [run] method: unknown method 'synk' (did you mean 'sync'?)") ==
                  diag.message, "%s", diag.message);
    ck_assert_int_eq(resolve_text("[run]\nmethod = sync\n[agents]\ncount = 2\ncompute = 1\nbandwidth = 1\n", &sc, &diag),
                     HS_E_INPUT);
    ck_assert(strstr(diag.message, "needs a stop") != NULL);
    ck_assert_int_eq(resolve_text("[run]\nmethod = sync\nrounds = 1\n", &sc, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "missing section [agents]") != NULL);
    ck_assert_int_eq(resolve_text("[run]\nmethod = sync\nrounds = 1\n[agents]\ncount = 2\ncompute = 1\n", &sc, &diag),
                     HS_E_INPUT);
    ck_assert_str_eq(diag.message, "t.ini:4: missing required key 'bandwidth' in [agents]");
    /* A line too long for the parser is an error, not a silent truncation. */
    char text[1024];
    snprintf(text, sizeof text, "%sname = %0300d\n", "[run]\n", 1);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "t.ini:2: line is longer") == diag.message);
}
END_TEST

/* prune, prune_target, prune_min, freeze: the typed values and the combinations that
 * are not modelled, each an input error naming the line. */
START_TEST(test_prune_and_freeze_keys)
{
    Scenario sc;
    HsDiag diag;
    char text[4096];
    snprintf(text, sizeof text, "%s[method]\nprune = width\nprune_target = 0.5\n", base_text);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_OK);
    ck_assert_double_eq(test_method_key(&sc, "prune_target"), 0.5);
    snprintf(text, sizeof text, "%s[method]\nprune = width\n", base_text);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_OK);
    ck_assert(isnan(test_method_key(&sc, "prune_target"))); /* makespan */
    ck_assert_str_eq(test_method_param(&sc, "prune_target")->value, "makespan");
    expect_error("[method]\nprune_target = makespans\n", "t.ini:11:", "expected makespan or a number in (0, 1]");
    expect_error("[method]\nprune_target = 0\n", "t.ini:11:", "expected makespan or a number in (0, 1]");
    expect_error("[method]\nprune = half\n", "t.ini:11:", "none|width");
    expect_error("[method]\nprune = width\ndeadline = 1 s\n", "t.ini:12", "not available with");
    expect_error("[method]\nprune = width\n[compression]\nscheme = topk\n", "t.ini:11", "not available with");
    /* sync took freeze with the stages; with prune it is the pair's error (features.c) */
    snprintf(text, sizeof text, "%s[method]\nfreeze = progressive\n", base_text);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_OK);
    expect_error("[method]\nfreeze = progressive\nprune = width\n", "t.ini:11:", "not available with prune = width");
    /* localsgd: freeze and prune exclude each other, [compression] and [privacy] */
    const char *local = "[run]\nmethod = localsgd\nrounds = 3\n[agents]\ncount = 8\ncompute = 1 GFLOPS\n"
                        "bandwidth = 1 MB/s\n[method]\n";
    snprintf(text, sizeof text, "%sfreeze = progressive\nfreeze_rounds = 3\n", local);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_OK);
    snprintf(text, sizeof text, "%sfreeze = progressive\nprune = width\n", local);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:9") == diag.message && strstr(diag.message, "not available with prune"),
                  "%s", diag.message);
    snprintf(text, sizeof text, "%sfreeze = progressive\n[compression]\nscheme = topk\n", local);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:9") == diag.message, "%s", diag.message);
    /* ... and [privacy] clipping (clip = none is fine) */
    snprintf(text, sizeof text, "%sprune = width\n[privacy]\nclip = update\n", local);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:9") == diag.message && strstr(diag.message, "not available with [privacy]"),
                  "%s", diag.message);
    snprintf(text, sizeof text, "%sfreeze = progressive\n[privacy]\nclip = sample\n", local);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:9") == diag.message && strstr(diag.message, "not available with [privacy]"),
                  "%s", diag.message);
    snprintf(text, sizeof text, "%sprune = width\n[privacy]\nclip = none\n", local);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_OK);
    snprintf(text, sizeof text, "%sfreeze_rounds = 0\n", local);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), HS_E_INPUT);
}
END_TEST

START_TEST(test_method_sections_apply_to_their_method)
{
    char text[2048];
    snprintf(text, sizeof text, "%s[method.localsgd]\nlocal_steps = 7\n[method.co2]\nperiod = 3\n", base_text);
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(resolve_text(text, &sc, &diag), 0); /* sync runs: both sections are checked, unused */
    ck_assert_int_eq(sc.n_params, 6);                    /* only sync's own keys, at their defaults */
    ck_assert_str_eq(test_method_param(&sc, "deadline")->value, "none");
    ck_assert_ptr_null(test_method_param(&sc, "local_steps"));
    IniDoc doc;
    hs_diag_clear(&diag);
    ck_assert_int_eq(inidoc_load_string("t.ini", text, &doc, &diag), 0);
    ck_assert_int_eq(inidoc_apply_set(&doc, "run.method=localsgd", &diag), 0);
    ck_assert_int_eq(scenario_resolve(&doc, &sc, &diag), 0);
    ck_assert_str_eq(test_method_param(&sc, "local_steps")->value, "7");
    ck_assert_str_eq(test_method_param(&sc, "weighting")->value, "samples"); /* the default */
    inidoc_free(&doc);
}
END_TEST

START_TEST(test_continuation_lines_join)
{
    char text[2048];
    snprintf(text, sizeof text, "%s[agents.x]\ncount = 1\ncompute = choice(1 GFLOPS:0.5,\n    2 GFLOPS:0.5)\n", base_text);
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(resolve_text(text, &sc, &diag), 0);
    ck_assert_int_eq(sc.groups[1].compute.n_choices, 2);
}
END_TEST

START_TEST(test_config_round_trip)
{
    char text[4096];
    snprintf(text, sizeof text,
             "%s[agents.slow]\ncount = 2\ncompute = lognormal(300 MFLOPS, 0.7)\nsamples = uniform(100, 900)\n"
             "[model]\nlayers = 784,64,10\noptimizer = adamw\nlr = 0.001\n[data]\npartition = dirichlet\n"
             "alpha = 0.3\n",
             base_text);
    Scenario a, b;
    HsDiag diag;
    ck_assert_int_eq(resolve_text(text, &a, &diag), 0);
    char *config = scenario_config_string(&a);
    ck_assert_int_eq(resolve_text(config, &b, &diag), 0);
    char *again = scenario_config_string(&b);
    ck_assert_str_eq(config, again);
    ck_assert(a.groups[1].compute.a == b.groups[1].compute.a);
    ck_assert(a.optim.lr == b.optim.lr);
    /* numbers as written, not 17 digits: the shortest text that reads back (base/numtext.h) */
    static const char *const shortest[] = {"\nlr = 0.001\n", "\nalpha = 0.3\n", "\nbeta1 = 0.9\n",
                                           "\ncompute = lognormal(300000000, 0.7)\n", "\nlatency = 0.01\n",
                                           "\nsamples = uniform(100, 900)\n", "\nstep_gamma = 0.1\n"};
    for (size_t i = 0; i < sizeof shortest / sizeof *shortest; i++)
        ck_assert_msg(strstr(config, shortest[i]) != NULL, "runs.config lacks '%s':\n%s", shortest[i] + 1, config);
    free(config);
    free(again);
}
END_TEST

/* numtext_double, which runs.config writes its numbers with: the text reads back to the
 * very double, and is no longer than %.17g's. */
START_TEST(test_numtext_round_trips)
{
    char text[NUMTEXT_SIZE], full[64];
#define SHORTEST(v) numtext_double(text, sizeof text, (v))
    ck_assert_str_eq(SHORTEST(0.9), "0.9");
    ck_assert_str_eq(SHORTEST(1e-08), "1e-08");
    ck_assert_str_eq(SHORTEST(300000000), "300000000");
    ck_assert_str_eq(SHORTEST(1.5e16), "15000000000000000");
    ck_assert_str_eq(SHORTEST(1e20), "1e+20");
    ck_assert_str_eq(SHORTEST(1.0 / 3), "0.3333333333333333");       /* 16 digits */
    ck_assert_str_eq(SHORTEST(0.1 + 0.2), "0.30000000000000004");    /* 17 */
    ck_assert_str_eq(SHORTEST(INFINITY), "inf");
    ck_assert_str_eq(SHORTEST(-INFINITY), "-inf");
    ck_assert_str_eq(SHORTEST(-0.0), "-0");
    ck_assert_str_eq(SHORTEST(NAN), "nan");
    ck_assert_str_eq(SHORTEST(-2.2250738585072014e-308), "-2.2250738585072014e-308");
    ck_assert_str_eq(SHORTEST(4.9406564584124654e-324), "5e-324"); /* the smallest subnormal */
#undef SHORTEST
    uint64_t state = 0x9e3779b97f4a7c15u; /* splitmix64: any bit pattern that is a number */
    for (int i = 0; i < 20000; i++) {
        uint64_t z = (state += 0x9e3779b97f4a7c15u);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        z ^= z >> 31;
        double v;
        memcpy(&v, &z, sizeof v);
        if (isnan(v)) continue;
        numtext_double(text, sizeof text, v);
        ck_assert_msg(strtod(text, NULL) == v, "%s does not read back to %a", text, v);
        snprintf(full, sizeof full, "%.17g", v);
        ck_assert_uint_le(strlen(text), strlen(full));
    }
}
END_TEST

/* numtext_as_17g, the form sweep ids hash: numbers standing alone in %.17g, numbers
 * inside names and whole numbers untouched. */
START_TEST(test_numtext_as_17g)
{
    static const struct { const char *in, *out; } cases[] = {
        {"momentum = 0.9\n", "momentum = 0.90000000000000002\n"},
        {"compute = lognormal(5e+08, 1.5)", "compute = lognormal(500000000, 1.5)"},
        {"latency = 0.005 s", "latency = 0.0050000000000000001 s"},
        {"lr = -0.1,2.5e-3", "lr = -0.10000000000000001,0.0025000000000000001"},
        {"name = sync-8 rounds = 12", "name = sync-8 rounds = 12"},
        {"path = /d/run-0.5.csv x1.5 v2.0b", "path = /d/run-0.5.csv x1.5 v2.0b"},
        {"bandwidth = inf", "bandwidth = inf"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = numtext_as_17g(cases[i].in);
        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got, cases[i].out);
        free(got);
    }
}
END_TEST

START_TEST(test_adding_an_agent_keeps_earlier_draws)
{
    const char *fmt = "[run]\nmethod = sync\nrounds = 1\nmode = timing\n[agents]\ncount = %d\n"
                      "compute = lognormal(1 GFLOPS, 1)\nbandwidth = uniform(1 MB/s, 10 MB/s)\n";
    char text[1024];
    Scenario sc;
    HsDiag diag;
    World small, large;
    snprintf(text, sizeof text, fmt, 5);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), 0);
    ck_assert_int_eq(world_build(&sc, &small, &diag), 0);
    snprintf(text, sizeof text, fmt, 6);
    ck_assert_int_eq(resolve_text(text, &sc, &diag), 0);
    ck_assert_int_eq(world_build(&sc, &large, &diag), 0);
    for (int i = 0; i < 5; i++) {
        ck_assert(small.agents[i].compute == large.agents[i].compute);
        ck_assert(small.agents[i].uplink == large.agents[i].uplink);
    }
    ck_assert(small.agents[0].compute != small.agents[1].compute);
    world_free(&small);
    world_free(&large);
}
END_TEST

START_TEST(test_samples_exceeding_dataset_rejected)
{
    char text[2048];
    snprintf(text, sizeof text, "[run]\nmethod = sync\nrounds = 1\n[agents]\ncount = 4\ncompute = 1 GFLOPS\n"
             "bandwidth = 1 MB/s\nsamples = 20000\n");
    Scenario sc;
    HsDiag diag;
    World w;
    ck_assert_int_eq(resolve_text(text, &sc, &diag), 0);
    ck_assert_int_eq(world_build(&sc, &w, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "t.ini:4:") == diag.message);
    ck_assert(strstr(diag.message, "80000 samples") != NULL);
}
END_TEST

START_TEST(test_domains_keys)
{
    char text[4096];
    snprintf(text, sizeof text, "%s[data]\npartition = domains\ndomains = 0, 20, -20, 45.5\ntest_domains = -20,45.5\n"
             "lambda = 0.25\n", base_text);
    Scenario a, b;
    HsDiag diag;
    ck_assert_int_eq(resolve_text(text, &a, &diag), 0);
    const DataSpec *d = &a.data;
    ck_assert(d->partition == PART_DOMAINS && d->n_domains == 4 && d->domain_degrees[2] == -20);
    ck_assert(d->domain_degrees[3] == 45.5 && !d->held_out[0] && !d->held_out[1] && d->held_out[2] && d->held_out[3]);
    ck_assert(d->lambda == 0.25);
    char *config = scenario_config_string(&a);
    ck_assert_ptr_nonnull(strstr(config, "partition = domains\nalpha = 0.5\nshards = 2\ntest_samples = 0\n"
                                         "domains = 0,20,-20,45.5\ntest_domains = -20,45.5\nlambda = 0.25\n"));
    ck_assert_int_eq(resolve_text(config, &b, &diag), 0);
    char *again = scenario_config_string(&b);
    ck_assert_str_eq(config, again);
    free(config);
    free(again);
    /* the defaults: six domains 15 degrees apart, the last held out, lambda 0.1; another
     * partition's config leaves them out */
    snprintf(text, sizeof text, "%s[data]\npartition = domains\n", base_text);
    ck_assert_int_eq(resolve_text(text, &a, &diag), 0);
    ck_assert(a.data.n_domains == 6 && a.data.domain_degrees[5] == 75 && a.data.held_out[5] && !a.data.held_out[4]);
    ck_assert(a.data.lambda == 0.1);
    World w;
    ck_assert_int_eq(world_build(&a, &w, &diag), 0);
    /* 8 agents, 5 domains of 10000: 2, 2, 2, 1, 1 main agents; agent 0 holds
     * 10000 (0.9/2 + 0.1/8) + 4 x 125 = 5125, agent 7 10000 (0.9 + 0.1/8) + 4 x 125 */
    ck_assert_int_eq(w.agents[0].samples, 5125);
    ck_assert_int_eq(w.agents[7].samples, 9625);
    world_free(&w);
    ck_assert_int_eq(resolve_text(base_text, &a, &diag), 0);
    config = scenario_config_string(&a);
    ck_assert_ptr_null(strstr(config, "domains"));
    ck_assert_ptr_null(strstr(config, "lambda"));
    free(config);
    /* errors, at their lines */
    expect_error("[data]\ndomains = 0\n", "t.ini:11:", "at least two domains");
    expect_error("[data]\ndomains = 0,15,0\n", "t.ini:11:", "listed twice");
    expect_error("[data]\ndomains = 0,15,,30\n", "t.ini:11:", "element 3 of the list is empty");
    expect_error("[data]\ndomains = 0,400\n", "t.ini:11:", "'400' is not a number in [-360, 360]");
    expect_error("[data]\ntest_domains = 10\n", "t.ini:11:", "10 is not one of the domains' angles");
    expect_error("[data]\ndomains = 0,15\ntest_domains = 0,15\n", "t.ini:12:", "at least one must be left");
    expect_error("[data]\nlambda = 1.5\n", "t.ini:11:", "outside [0, 1]");
    expect_error("[data]\npartition = domains\ndataset = synthetic\n", "t.ini:11:", "needs dataset = fashion-mnist");
    expect_error("[data]\npartition = domains\n[agents.small]\ncount = 2\nsamples = 100\n", "t.ini:14:",
                 "sets every agent's samples");
}
END_TEST

static Suite *scenario_suite(void)
{
    Suite *s = suite_create("scenario");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_minimal_resolves_with_defaults);
    tcase_add_test(tc, test_units);
    tcase_add_test(tc, test_distributions);
    tcase_add_test(tc, test_draws_follow_distribution);
    tcase_add_test(tc, test_groups_and_inheritance);
    tcase_add_test(tc, test_overrides);
    tcase_add_test(tc, test_error_classes_name_file_and_line);
    tcase_add_test(tc, test_continuation_lines_join);
    tcase_add_test(tc, test_method_sections_apply_to_their_method);
    tcase_add_test(tc, test_config_round_trip);
    tcase_add_test(tc, test_numtext_round_trips);
    tcase_add_test(tc, test_numtext_as_17g);
    tcase_add_test(tc, test_adding_an_agent_keeps_earlier_draws);
    tcase_add_test(tc, test_samples_exceeding_dataset_rejected);
    tcase_add_test(tc, test_domains_keys);
    tcase_add_test(tc, test_prune_and_freeze_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(scenario_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
