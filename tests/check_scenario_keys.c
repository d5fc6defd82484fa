/* check_scenario_keys.c — nothing a user writes is silently altered or ignored: the
 * [method] / [method.NAME] rule, list elements, whole numbers, overflow after units,
 * and a walk over every key of every section and every method key with a table of bad
 * values, each of which must be an input error naming the --set that carried it (and,
 * through the binary, exit 2 with no database written). */
#include "sim/methods/method.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_schema.h"
#include "sim/world/world.h"
#include "solver/pairing.h"
#include "tests/test_scenario.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* [servers] replaces [server]: its own base. */
static const char *const walk_base_servers =
    "[run]\nmethod = sync\nrounds = 2\nmode = timing\n"
    "[data]\ndataset = synthetic\n"
    "[model]\nlayers = 32,16,10\n"
    "[agents]\ncount = 8\ncompute = 2 GFLOPS\nbandwidth = 100 Mbit/s\n"
    "[servers]\ncount = 2\ncompute = 10 GFLOPS\nbandwidth = 1 Gbit/s\n";

/* Every section is present, so every key is live; byzantine keys get their own base
 * (a robust aggregator cannot be combined with compression). */
static const char *const walk_base =
    "[run]\nmethod = sync\nrounds = 2\nmode = timing\n"
    "[data]\ndataset = synthetic\n"
    "[model]\nlayers = 32,16,10\n"
    "[topology]\ngraph = ring\n"
    "[agents]\ncount = 8\ncompute = 2 GFLOPS\nbandwidth = 100 Mbit/s\nlatency = 1 ms\n"
    "[agents.slow]\ncount = 2\ncompute = 1 GFLOPS\n"
    "[server]\ncompute = 10 GFLOPS\nbandwidth = 1 Gbit/s\n"
    "[compression]\nscheme = topk\n";
static const char *const walk_base_byzantine =
    "[run]\nmethod = sync\nrounds = 2\nmode = timing\n"
    "[data]\ndataset = synthetic\n"
    "[model]\nlayers = 32,16,10\n"
    "[agents]\ncount = 8\ncompute = 2 GFLOPS\nbandwidth = 100 Mbit/s\n"
    "[byzantine]\ncount = 0\n";
/* [privacy] applies to localsgd, without compression */
static const char *const walk_base_privacy =
    "[run]\nmethod = localsgd\nrounds = 2\nmode = timing\n"
    "[data]\ndataset = synthetic\n"
    "[model]\nlayers = 32,16,10\n"
    "[agents]\ncount = 8\ncompute = 2 GFLOPS\nbandwidth = 100 Mbit/s\n"
    "[privacy]\nclip = update\n";
/* [drift] applies to localsgd; mu is read with method = fedprox */
static const char *const walk_base_drift =
    "[run]\nmethod = localsgd\nrounds = 2\nmode = timing\n"
    "[data]\ndataset = synthetic\n"
    "[model]\nlayers = 32,16,10\n"
    "[agents]\ncount = 8\ncompute = 2 GFLOPS\nbandwidth = 100 Mbit/s\n"
    "[drift]\nmethod = fedprox\n";

static int resolve_with(const char *text, const char *const *set, int n_set, Scenario *sc, HsDiag *diag)
{
    return test_resolve(text, set, n_set, sc, diag);
}

/* ---- the rule for [method] and [method.NAME] ---- */

START_TEST(test_method_and_method_name_merge)
{
    char text[2048];
    Scenario sc;
    HsDiag diag;
    /* Both sections set the key in the file: which was meant? An error at the later line. */
    snprintf(text, sizeof text, "%s[method]\nsolver = ip\n[method.comdml]\nsolver = greedy\n", walk_base_byzantine);
    const char *comdml[] = {"run.method=comdml"};
    ck_assert_int_eq(resolve_with(text, comdml, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "t.ini:18: [method.comdml] solver: also set in [method] at line 16; keep one of the two");
    /* An override wins over the file, whichever section either names. */
    snprintf(text, sizeof text, "%s[method.comdml]\nsolver = greedy\nrebalance = 2\n", walk_base_byzantine);
    const char *general[] = {"run.method=comdml", "method.solver=ip", "method.rebalance=5"};
    ck_assert_int_eq(resolve_with(text, general, 3, &sc, &diag), HS_OK);
    ck_assert_str_eq(test_method_param(&sc, "solver")->value, "ip");
    ck_assert_int_eq(test_method_key(&sc, "solver"), 1);
    ck_assert_int_eq(test_method_key(&sc, "rebalance"), 5);
    ck_assert_str_eq(test_method_param(&sc, "rebalance")->where, "--set method.rebalance=5");
    /* Between two overrides, the later one. */
    const char *both[] = {"run.method=comdml", "method.solver=ip", "method.comdml.solver=exact"};
    ck_assert_int_eq(resolve_with(text, both, 3, &sc, &diag), HS_OK);
    ck_assert_str_eq(test_method_param(&sc, "solver")->value, "exact");
    const char *reversed[] = {"run.method=comdml", "method.comdml.solver=exact", "method.solver=ip"};
    ck_assert_int_eq(resolve_with(text, reversed, 3, &sc, &diag), HS_OK);
    ck_assert_str_eq(test_method_param(&sc, "solver")->value, "ip");
    /* The file alone: [method.comdml]'s value, with its line. */
    ck_assert_int_eq(resolve_with(text, comdml, 1, &sc, &diag), HS_OK);
    ck_assert_str_eq(test_method_param(&sc, "solver")->value, "greedy");
    ck_assert_str_eq(test_method_param(&sc, "solver")->where, "t.ini:16");
    /* A bad value in the section of a method that does not run is still an error. */
    snprintf(text, sizeof text, "%s[method.comdml]\nsolver = fast\n", walk_base_byzantine);
    ck_assert_int_eq(resolve_with(text, NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "t.ini:16: [method.comdml] solver: expected one of exact|ip|greedy, found 'fast'");
    /* A [method] key of another method is unknown for the one that runs. */
    const char *other[] = {"method.rebalance=2"};
    ck_assert_int_eq(resolve_with(walk_base_byzantine, other, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "--set method.rebalance=2: unknown key 'rebalance' in [method] for method sync")
                      == diag.message, "%s", diag.message);
}
END_TEST

/* ---- values that used to be altered ---- */

START_TEST(test_list_elements_are_never_dropped)
{
    static const char *const lists[] = {"32,,10", "32,16,", ",32,10", "32, ,10", "32,16,10,", " , ", ""};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
        char set[128];
        snprintf(set, sizeof set, "model.layers=%s", lists[i]);
        const char *sets[] = {set};
        Scenario sc;
        HsDiag diag;
        ck_assert_int_eq(resolve_with(walk_base_byzantine, sets, 1, &sc, &diag), HS_E_INPUT);
        ck_assert_msg(strstr(diag.message, "is empty") != NULL, "%s: %s", lists[i], diag.message);
    }
    Scenario sc;
    HsDiag diag;
    char text[2048];
    snprintf(text, sizeof text, "%s[model]\nchannels = 32,,64\n", walk_base_byzantine);
    /* the base has a [model] already: put channels there instead */
    const char *cnn[] = {"model.channels=32,,64"};
    ck_assert_int_eq(resolve_with(walk_base_byzantine, cnn, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--set model.channels=32,,64: element 2 of the list is empty (a list is N,N,...,N)");
}
END_TEST

START_TEST(test_whole_numbers_and_overflow)
{
    Scenario sc;
    HsDiag diag;
    const char *fraction[] = {"agents.samples=12.5"};
    ck_assert_int_eq(resolve_with(walk_base_byzantine, fraction, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--set agents.samples=12.5: 12.5 is not a whole number of samples in [1, 1000000000]");
    const char *choice[] = {"agents.samples=choice(10:0.5, 10.5:0.5)"};
    ck_assert_int_eq(resolve_with(walk_base_byzantine, choice, 1, &sc, &diag), HS_E_INPUT);
    const char *huge[] = {"agents.samples=1e12"};
    ck_assert_int_eq(resolve_with(walk_base_byzantine, huge, 1, &sc, &diag), HS_E_INPUT);
    const char *overflow[] = {"agents.compute=1e308 TFLOPS"};
    ck_assert_int_eq(resolve_with(walk_base_byzantine, overflow, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--set agents.compute=1e308 TFLOPS: '1e308 TFLOPS' is beyond the largest number a "
                                   "double holds");
    const char *latency[] = {"agents.latency=inf"};
    ck_assert_int_eq(resolve_with(walk_base_byzantine, latency, 1, &sc, &diag), HS_E_INPUT);
    /* Draws the run cannot use are refused when the agents are drawn, at the group's line. */
    const char *wide[] = {"agents.compute=lognormal(1 GFLOPS, 400)"};
    ck_assert_int_eq(resolve_with(walk_base_byzantine, wide, 1, &sc, &diag), HS_OK);
    World w;
    ck_assert_int_eq(world_build(&sc, &w, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:9: [agents] compute: agent") == diag.message, "%s", diag.message);
    const char *tail[] = {"agents.samples=pareto(100, 0.01)"};
    ck_assert_int_eq(resolve_with(walk_base_byzantine, tail, 1, &sc, &diag), HS_OK);
    ck_assert_int_eq(world_build(&sc, &w, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "more than an agent may hold (1000000000)") != NULL, "%s", diag.message);
    /* A 64-bit integer beyond int is refused, not wrapped. */
    const char *rounds[] = {"run.rounds=4294967297"};
    ck_assert_int_eq(resolve_with(walk_base_byzantine, rounds, 1, &sc, &diag), HS_E_INPUT);
    /* An empty group is allowed: a sweep over a group's size may start at 0. */
    char text[2048];
    snprintf(text, sizeof text, "%s[agents.slow]\ncount = 0\ncompute = 1 GFLOPS\n", walk_base_byzantine);
    ck_assert_int_eq(resolve_with(text, NULL, 0, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.n_groups, 2);
    ck_assert_int_eq(sc.groups[1].count, 0);
    ck_assert_int_eq(world_build(&sc, &w, &diag), HS_OK);
    ck_assert_int_eq(w.n, 8);
    world_free(&w);
}
END_TEST

/* ---- the walk ---- */

typedef enum {
    WALK_COUNT,     /* whole number >= 1 */
    WALK_WHOLE,     /* whole number >= 0 */
    WALK_SEED,      /* whole number in [0, 2^63) */
    WALK_FLAG,      /* 0 or 1 */
    WALK_POSITIVE,  /* real > 0, finite */
    WALK_NONNEG,    /* real >= 0, finite */
    WALK_UNIT,      /* real in [0, 1] */
    WALK_TIME,      /* time > 0, inf allowed */
    WALK_BANDWIDTH, /* bandwidth > 0, inf allowed */
    WALK_CHOICE,
    WALK_LIST,      /* whole numbers, comma-separated */
    WALK_ANGLES,    /* numbers in degrees, comma-separated */
    WALK_TEXT,      /* any non-empty text */
    WALK_DIST_COMPUTE, WALK_DIST_BANDWIDTH, WALK_DIST_TIME, WALK_DIST_SAMPLES,
    WALK_SLOWDOWN, WALK_AVAILABILITY,
} WalkKind;

typedef struct WalkKey {
    const char *name;   /* SECTION.KEY */
    WalkKind kind;
    const char *extra;  /* more bad values for this key, '|'-separated */
} WalkKey;

static const WalkKey walk_keys[] = {
    {"run.name", WALK_TEXT, "a;b|x #y|;|a\tb"},
    {"run.method", WALK_CHOICE, NULL},
    {"run.seed", WALK_SEED, NULL},
    {"run.rounds", WALK_COUNT, "1000001"},
    {"run.time_budget", WALK_TIME, NULL},
    {"run.target_accuracy", WALK_UNIT, NULL},
    {"run.mode", WALK_CHOICE, NULL},
    {"run.eval_every", WALK_COUNT, NULL},
    {"run.record", WALK_CHOICE, NULL},
    {"run.threads", WALK_COUNT, "1025"},
    {"run.kernels", WALK_CHOICE, NULL},
    {"data.dataset", WALK_CHOICE, NULL},
    {"data.path", WALK_TEXT, "/usr/share;x|/usr/\tshare"},
    {"data.label", WALK_CHOICE, NULL},
    {"data.normalize", WALK_CHOICE, NULL},
    {"data.augment", WALK_CHOICE, "crop-flip|crop|flip"}, /* the walk's base has flat features */
    {"data.partition", WALK_CHOICE, "natural"},           /* without writers */
    {"data.alpha", WALK_POSITIVE, NULL},
    {"data.shards", WALK_COUNT, NULL},
    {"data.test_samples", WALK_WHOLE, NULL},
    {"data.features", WALK_COUNT, NULL},
    {"data.classes", WALK_COUNT, "1"},
    {"data.train_samples", WALK_COUNT, NULL},
    {"data.separation", WALK_NONNEG, NULL},
    {"data.domains", WALK_ANGLES, "0|0,0|15,30,x|0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"},
    {"data.test_domains", WALK_ANGLES, "10|-1|1.5|75,75|0,15,30,45,60,75"},
    {"data.lambda", WALK_UNIT, NULL},
    {"data.channels", WALK_COUNT, "4097"},
    {"data.height", WALK_COUNT, "4097"},
    {"data.width", WALK_COUNT, "4097"},
    {"model.arch", WALK_CHOICE, NULL},
    {"model.layers", WALK_LIST, "32|32,10,16"},
    {"model.channels", WALK_LIST, "32|32,64,128"},
    {"model.kernel", WALK_COUNT, "2|17"},
    {"model.hidden", WALK_COUNT, NULL},
    {"model.batch", WALK_COUNT, NULL},
    {"model.optimizer", WALK_CHOICE, NULL},
    {"model.lr", WALK_NONNEG, NULL},
    {"model.momentum", WALK_UNIT, "1"},
    {"model.nesterov", WALK_FLAG, NULL},
    {"model.weight_decay", WALK_NONNEG, NULL},
    {"model.beta1", WALK_UNIT, "1"},
    {"model.beta2", WALK_UNIT, "1"},
    {"model.eps", WALK_POSITIVE, "2"},
    {"model.schedule", WALK_CHOICE, NULL},
    {"model.step_gamma", WALK_UNIT, NULL},
    {"model.step_every", WALK_COUNT, NULL},
    {"model.warmup", WALK_WHOLE, NULL},
    {"model.depth", WALK_COUNT, "2|7|9|21|130"},
    {"model.width", WALK_COUNT, "65"},
    {"model.profile", WALK_TEXT, "missing.csv"},
    {"topology.graph", WALK_CHOICE, "missing.edges"},
    {"topology.degree", WALK_COUNT, NULL},
    {"topology.weights", WALK_CHOICE, "missing.weights|weights.txt"},
    {"topology.fw_iterations", WALK_COUNT, "1000001"},
    {"topology.lambda", WALK_NONNEG, "1e7"},
    {"agents.count", WALK_COUNT, NULL},
    {"agents.profile", WALK_TEXT, "missing.csv"},
    {"agents.compute", WALK_DIST_COMPUTE, NULL},
    {"agents.bandwidth", WALK_DIST_BANDWIDTH, NULL},
    {"agents.uplink", WALK_DIST_BANDWIDTH, NULL},
    {"agents.downlink", WALK_DIST_BANDWIDTH, NULL},
    {"agents.latency", WALK_DIST_TIME, NULL},
    {"agents.samples", WALK_DIST_SAMPLES, NULL},
    {"agents.batch", WALK_DIST_SAMPLES, "65537|choice(16:0.5, 65537:0.5)"},
    {"agents.slowdown", WALK_SLOWDOWN, NULL},
    {"agents.jitter", WALK_NONNEG, "11"},
    {"agents.availability", WALK_AVAILABILITY, NULL},
    {"agents.power_compute", WALK_NONNEG, "1e10 W|2 J|-2 W|uniform(-1 W, 2 W)|choice(1 W:0.5, 2e10 W:0.5)|trace(x.csv)"},
    {"agents.power_comm", WALK_NONNEG, "1e10 W|2 J|-2 W|normal(-1 W, 1 W)|uniform(1 J, 2 J)"},
    {"agents.power_tx", WALK_NONNEG, "1e10 W|2 J|-2 W|uniform(-1 W, 2 W)|trace(x.csv)"},
    {"agents.power_rx", WALK_NONNEG, "1e10 W|2 J|-3 W|choice(1 W:0.5, 2e10 W:0.5)"},
    {"agents.power_idle", WALK_NONNEG, "1e10 W|2 J|-2 W|lognormal(-1 W, 0.5)"},
    {"agents.energy_per_byte", WALK_NONNEG, "2 J/B|5 W|-1 nJ/B|uniform(1 nJ/B, 2 J/B)"},
    {"agents.battery", WALK_NONNEG, "3600|1 W|-1 Wh|1e16 J|uniform(1, 2 J)|lognormal(6, 0.5)|uniform(0 J, 1 J)|trace(x.csv)"},
    {"agents.charging", WALK_NONNEG, "5 J|-1 W|1 W|uniform(-1 W, 1 W)|trace(missing.csv)"},
    {"agents.resume_charge", WALK_NONNEG, "0 J|3600|1 Wh|-1 J"},
    {"agents.battery_check", WALK_CHOICE, "instant"}, /* the walk's base has no battery */
    {"agents.loss", WALK_UNIT, "1|0.5 s|1e-400x"},
    {"agents.outage", WALK_AVAILABILITY, "always|0"},
    {"server.compute", WALK_DIST_COMPUTE, NULL},
    {"server.bandwidth", WALK_DIST_BANDWIDTH, NULL},
    {"server.uplink", WALK_DIST_BANDWIDTH, NULL},
    {"server.downlink", WALK_DIST_BANDWIDTH, NULL},
    {"server.latency", WALK_DIST_TIME, NULL},
    {"server.slowdown", WALK_SLOWDOWN, NULL},
    {"server.jitter", WALK_NONNEG, "11"},
    {"server.availability", WALK_AVAILABILITY, NULL},
    {"servers.count", WALK_COUNT, "100001"},
    {"servers.assign", WALK_CHOICE, NULL},
    {"servers.compute", WALK_DIST_COMPUTE, NULL},
    {"servers.bandwidth", WALK_DIST_BANDWIDTH, NULL},
    {"servers.uplink", WALK_DIST_BANDWIDTH, NULL},
    {"servers.downlink", WALK_DIST_BANDWIDTH, NULL},
    {"servers.latency", WALK_DIST_TIME, NULL},
    {"servers.slowdown", WALK_SLOWDOWN, NULL},
    {"servers.jitter", WALK_NONNEG, "11"},
    {"servers.availability", WALK_AVAILABILITY, NULL},
    {"network.model", WALK_CHOICE, NULL},
    {"network.uplink", WALK_CHOICE, NULL},
    {"network.backbone", WALK_BANDWIDTH, NULL},
    {"network.tcp", WALK_CHOICE, NULL},
    {"network.loss_mode", WALK_CHOICE, NULL},
    {"network.rto", WALK_DIST_TIME, "86401 s|2 d|-0 ms x"},
    {"compression.scheme", WALK_CHOICE, NULL},
    {"compression.ratio", WALK_UNIT, "0"},
    {"compression.feedback", WALK_CHOICE, NULL},
    {"compression.eta", WALK_UNIT, NULL},
    {"compression.warm_start", WALK_FLAG, NULL},
    {"compression.refresh", WALK_COUNT, NULL},
    {"compression.explore", WALK_UNIT, NULL},
    {"compression.levels", WALK_COUNT, "65536"},
    {"compression.gamma", WALK_UNIT, "0"},
    {"compression.momentum", WALK_CHOICE, NULL},
    {"compression.warmup_epochs", WALK_WHOLE, NULL},
    {"compression.clip", WALK_NONNEG, NULL},
    {"compression.masking", WALK_FLAG, NULL},
    {"byzantine.count", WALK_WHOLE, "8"},
    {"byzantine.attack", WALK_CHOICE, NULL},
    {"byzantine.scale", WALK_NONNEG, NULL},
    {"byzantine.sigma", WALK_NONNEG, NULL},
    {"byzantine.z", WALK_NONNEG, NULL},
    {"byzantine.epsilon", WALK_NONNEG, NULL},
    {"byzantine.aggregator", WALK_CHOICE, NULL},
    {"byzantine.trim", WALK_WHOLE, "4"},
    {"byzantine.f", WALK_WHOLE, "9"},
    {"byzantine.tau", WALK_POSITIVE, NULL},
    {"byzantine.iters", WALK_COUNT, NULL},
    {"byzantine.rank", WALK_COUNT, "9"},
    {"byzantine.lambda", WALK_NONNEG, "1e7"},
    {"privacy.clip", WALK_CHOICE, NULL},
    {"privacy.threshold", WALK_POSITIVE, "1e13"},
    {"privacy.noise_multiplier", WALK_NONNEG, "1e7"},
    {"privacy.delta", WALK_UNIT, "0|1"},
    {"drift.method", WALK_CHOICE, "feddyn|FedProx"},
    {"drift.mu", WALK_NONNEG, "1e7"},
};

/* Bad values of each kind ('|'-separated): empty, blank, not a number, NaN, overflow,
 * negative, zero, fractions, beyond int, wrong unit, wrong type. */
static const char *walk_bad_values(WalkKind kind)
{
    switch (kind) {
    case WALK_COUNT: return "| |abc|nan|inf|-1|0|1.5|1e999|4294967297|99999999999999999999|5 s|1,2";
    case WALK_WHOLE: return "| |abc|nan|inf|-1|1.5|1e999|4294967297|99999999999999999999|5 s|1,2";
    case WALK_SEED: return "| |abc|nan|inf|-1|1.5|1e999|9223372036854775808|99999999999999999999|5 s|1,2";
    case WALK_FLAG: return "| |abc|nan|-1|2|0.5|5 s";
    case WALK_POSITIVE: return "| |abc|nan|NaN|inf|-1|0|1e999|-1e999|5 s|1,2";
    case WALK_NONNEG: return "| |abc|nan|inf|-1|1e999|-1e999|5 s|1,2";
    case WALK_UNIT: return "| |abc|nan|inf|-1|1.5|1e999|5 s";
    case WALK_TIME: return "| |abc|nan|-1|0|-1 s|5 GFLOPS|1e999 s|1e308 d";
    case WALK_BANDWIDTH: return "| |abc|nan|-1|0|-1 MB/s|5 ms|5 GFLOPS|1e300 GB/s|1,2";
    case WALK_CHOICE: return "| |nonsense|1|nan";
    case WALK_LIST: return "| |abc|0|-1|1.5|99999999999999999999";
    case WALK_ANGLES: return "| |abc|nan|inf|1e999|5 s|0,,15|15,|,0|400|-360.5";
    case WALK_TEXT: return "| ";
    case WALK_DIST_COMPUTE:
        return "| |abc|nan|inf|-1 GFLOPS|0|5 ms|5 GHz|1e308 TFLOPS|uniform(1 GFLOPS, )|uniform(2 GFLOPS, 1 GFLOPS)"
               "|normal(-1 GFLOPS, 1 GFLOPS)|lognormal(1 GFLOPS)|lognormal(1 GFLOPS, -1)|choice(1 GFLOPS:0.5)"
               "|choice(1 GFLOPS:0.5, 2 GFLOPS:0.6)|choice(1 GFLOPS:0.5,,2 GFLOPS:0.5)|pareto(0, 1)|zipf(1, 2)"
               "|trace(missing.csv)";
    case WALK_DIST_BANDWIDTH:
        return "| |abc|nan|-1 MB/s|0|5 ms|5 GFLOPS|1e300 GB/s|uniform(1 MB/s)|lognormal(0, 1)|trace(missing.csv)";
    case WALK_DIST_TIME: return "| |abc|nan|inf|-1 ms|5 GFLOPS|1e308 d|uniform(1 ms, 0)|trace(latency.csv)";
    case WALK_DIST_SAMPLES: return "| |abc|nan|inf|-1|0|12.5|1e12|5 s|choice(10:0.5, 10.5:0.5)|trace(samples.csv)";
    case WALK_SLOWDOWN:
        return "| |abc|markov(0.1, 0.2)|markov(1.5, 0.2, 2)|markov(0.1, 0.2, 0.5)|periodic(0, 1)|periodic(1 s, -1)"
               "|periodic(1e999 s, 1)";
    case WALK_AVAILABILITY: return "| |abc|sometimes|1|trace(missing.csv)";
    }
    return "";
}

/* Control characters, for every key (issue 28, class 3): a value that would carry a line
 * break (and a section) into runs.config, a carriage return, an escape, a DEL. Each is
 * refused whatever the key, before the key reads it. */
static const char walk_control_values[] = "1\n[agents]\ncount = 3|1\r|\x1b[0m1|1\x7f";

typedef struct WalkCase {
    char set[1200];
    const char *base;
} WalkCase;

static WalkCase *walk_cases;
static int walk_n, walk_capacity;

static void walk_add(const char *base, const char *section, const char *key, const char *value)
{
    if (walk_n == walk_capacity) {
        walk_capacity = walk_capacity ? 2 * walk_capacity : 512;
        walk_cases = realloc(walk_cases, (size_t)walk_capacity * sizeof *walk_cases);
        ck_assert_ptr_nonnull(walk_cases);
    }
    WalkCase *c = &walk_cases[walk_n++];
    snprintf(c->set, sizeof c->set, "%s.%s=%s", section, key, value);
    c->base = base;
}

static void walk_add_values(const char *base, const char *section, const char *key, const char *values)
{
    const char *p = values;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        char value[256];
        snprintf(value, sizeof value, "%.*s", (int)len, p);
        walk_add(base, section, key, value);
        if (!bar) return;
        p = bar + 1;
    }
}

/* Scenario keys: every key the resolver knows must be in walk_keys (so a new key cannot
 * go unwalked); group keys are walked in [agents.slow] too. */
static void walk_collect_scenario_keys(void)
{
    static const char *const sections[] = {"run", "data", "model", "topology", "agents", "server", "servers",
                                           "network", "compression", "byzantine", "privacy", "drift"};
    for (size_t s = 0; s < sizeof sections / sizeof *sections; s++) {
        const char *keys[64];
        const SchemaSection *section = schema_section(sections[s]);
        ck_assert_ptr_nonnull(section);
        ck_assert_int_gt(schema_key_names(section->id, keys, 64), 0);
        for (int k = 0; keys[k]; k++) {
            char name[160];
            snprintf(name, sizeof name, "%s.%s", sections[s], keys[k]);
            const WalkKey *w = NULL;
            for (size_t i = 0; i < sizeof walk_keys / sizeof *walk_keys; i++)
                if (strcmp(walk_keys[i].name, name) == 0) w = &walk_keys[i];
            ck_assert_msg(w != NULL, "%s has no bad values in the walk table: add it", name);
            const char *base = strcmp(sections[s], "byzantine") == 0 ? walk_base_byzantine
                               : strcmp(sections[s], "servers") == 0 ? walk_base_servers
                               : strcmp(sections[s], "privacy") == 0 ? walk_base_privacy
                               : strcmp(sections[s], "drift") == 0   ? walk_base_drift
                                                                     : walk_base;
            walk_add_values(base, sections[s], keys[k], walk_bad_values(w->kind));
            walk_add_values(base, sections[s], keys[k], walk_control_values);
            if (w->extra) walk_add_values(base, sections[s], keys[k], w->extra);
            if (strcmp(sections[s], "agents") == 0) {
                /* a group may be empty; everything else is as for [agents] */
                const char *values = walk_bad_values(w->kind == WALK_COUNT ? WALK_WHOLE : w->kind);
                walk_add_values(base, "agents.slow", keys[k], values);
            }
        }
    }
}

static void walk_method_values(const SchemaKey *k, char *out, size_t size)
{
    char low[64], high[64];
    int whole = k->type == SCHEMA_INT || k->type == SCHEMA_STEPS;
    snprintf(low, sizeof low, whole ? "%.0f" : "%.17g", k->flags & SCHEMA_OPEN_MIN ? k->min : k->min - 1);
    snprintf(high, sizeof high, whole ? "%.0f" : "%.17g", k->flags & SCHEMA_OPEN_MAX ? k->max : k->max * 2 + 1);
    switch (k->type) {
    case SCHEMA_CHOICE: snprintf(out, size, "| |nonsense|0"); return;
    case SCHEMA_INT:
    case SCHEMA_STEPS:
        snprintf(out, size, "| |abc|nan|inf|1.5|1e999|99999999999999999999|5 s|%s|%s%s", low, high,
                 k->type == SCHEMA_STEPS ? "|epochs" : "");
        return;
    case SCHEMA_REAL:
        snprintf(out, size, "| |abc|nan|inf|1e999|5 s|%s%s%s", low, isinf(k->max) ? "" : "|", isinf(k->max) ? "" : high);
        return;
    case SCHEMA_WORD_OR_REAL: /* the word with a typo, and the bad numbers */
        snprintf(out, size, "| |%ss|nan|inf|1e999|5 s|%s%s%s", k->choices, low, isinf(k->max) ? "" : "|",
                 isinf(k->max) ? "" : high);
        return;
    case SCHEMA_TIME:
        snprintf(out, size, "| |abc|nan|-1 s|5 GFLOPS|1e999 s|%s%s%s%s%s", k->flags & SCHEMA_OPEN_MIN ? "0" : "-1",
                 isinf(k->max) ? "" : "|", isinf(k->max) ? "inf" : high, k->choices ? "|" : "",
                 k->choices ? k->choices : "");
        if (k->choices) strncat(out, "s", size - strlen(out) - 1); /* the word with a typo */
        return;
    default: /* not a type of [method] keys */
        ck_abort_msg("[method] key %s has the type of a fixed section's key", k->name);
    }
}

/* Method keys: in [method] with the method running, and in [method.NAME] while another
 * method runs (its section is validated all the same). */
static void walk_collect_method_keys(void)
{
    static char method_bases[32][1024], localsgd_base[1024];
    int m = 0;
    for (const MethodOps *const *ops = method_all(); *ops; ops++, m++) {
        ck_assert_int_lt(m, 32);
        const char *plain = "[run]\nmethod = %s\nrounds = 2\nmode = timing\n[data]\ndataset = synthetic\n"
                            "[model]\nlayers = 32,16,10\n[agents]\ncount = 8\ncompute = 2 GFLOPS\n"
                            "bandwidth = 100 Mbit/s\n[server]\ncompute = 10 GFLOPS\nbandwidth = 1 Gbit/s\n";
        snprintf(method_bases[m], sizeof method_bases[m], plain, (*ops)->name);
        /* walk_base_byzantine runs sync; sync's own section is walked while localsgd runs */
        snprintf(localsgd_base, sizeof localsgd_base, plain, "localsgd");
        const char *other_base = strcmp((*ops)->name, "sync") == 0 ? localsgd_base : walk_base_byzantine;
        for (const SchemaKey *k = (*ops)->keys; k->name; k++) {
            char values[512], section[80];
            walk_method_values(k, values, sizeof values);
            walk_add_values(method_bases[m], "method", k->name, values);
            walk_add_values(method_bases[m], "method", k->name, walk_control_values);
            snprintf(section, sizeof section, "method.%s", (*ops)->name);
            walk_add_values(other_base, section, k->name, values);
        }
    }
}

/* A case that resolves must not, and its message must start with the --set it names. */
/* ---- [data] channels/height/width and [model] arch = resnet ---- */

START_TEST(test_image_shape_and_resnet)
{
    Scenario sc;
    HsDiag diag;
    const char *base = "[run]\nmethod = sync\nrounds = 1\nmode = timing\n"
                       "[data]\ndataset = synthetic\nchannels = 3\nheight = 32\nwidth = 32\n"
                       "[model]\narch = resnet\ndepth = 56\n"
                       "[agents]\ncount = 2\ncompute = 1 TFLOPS\nbandwidth = 100 MB/s\n";
    ck_assert_int_eq(resolve_with(base, NULL, 0, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.data.features, 3072);
    ck_assert_int_eq(sc.model.in_channels, 3);
    ck_assert_int_eq(sc.model.in_height, 32);
    ck_assert_int_eq(sc.model.in_width, 32);
    ck_assert_int_eq(sc.model.arch, MODEL_ARCH_RESNET);
    ck_assert_int_eq(sc.model.depth, 56);
    ck_assert_int_eq(sc.model.base_channels, 16);
    /* the config names the shape and the network, and resolves again to itself */
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    scenario_write_config(&sc, f);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "features = 3072\nclasses = 10\ntrain_samples = 60000\nseparation = 2\n"
                                       "channels = 3\nheight = 32\nwidth = 32\n"));
    ck_assert_ptr_nonnull(strstr(text, "arch = resnet\ndepth = 56\nwidth = 1\n"));
    Scenario again;
    ck_assert_int_eq(resolve_with(text, NULL, 0, &again, &diag), HS_OK);
    ck_assert_int_eq(again.model.depth, 56);
    ck_assert_int_eq(again.data.channels, 3);
    free(text);
    /* a flat synthetic set keeps its config as before: no shape lines */
    ck_assert_int_eq(resolve_with(walk_base_byzantine, NULL, 0, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.data.channels, 0);
    ck_assert_int_eq(sc.model.in_channels, 32);
    /* errors: a features that disagrees, fashion-mnist, a depth that is not 6n + 2, a
     * resnet on flat data, a width beyond the range */
    const char *features[] = {"data.features=3000"};
    ck_assert_int_eq(resolve_with(base, features, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--set data.features=3000: 3000 disagrees with channels x height x width = 3072 (leave it out)");
    const char *fashion[] = {"data.dataset=fashion-mnist"};
    ck_assert_int_eq(resolve_with(base, fashion, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "t.ini:7: [data] channels: shapes synthetic data only (fashion-mnist images are 1x28x28)");
    const char *depth[] = {"model.depth=52"};
    ck_assert_int_eq(resolve_with(base, depth, 1, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--set model.depth=52: must be 6n + 2 (8, 14, 20, 32, 44, 56, 110, ...)");
    ck_assert_int_eq(resolve_with(walk_base_byzantine, (const char *[]){"model.arch=resnet"}, 1, &sc, &diag),
                     HS_E_INPUT);
    /* at the arch key (it came from --set) */
    ck_assert_ptr_nonnull(strstr(diag.message, "--set model.arch=resnet: resnet needs image data"));
    const char *wide[] = {"data.height=1024", "data.width=1024"};
    ck_assert_int_eq(resolve_with(base, wide, 2, &sc, &diag), HS_E_INPUT);
    ck_assert_ptr_nonnull(strstr(diag.message, "more than 2^20 features"));
    /* only height given: channels and width default to 1 (a 1 x 40 x 1 image) */
    const char *tall = "[run]\nmethod = sync\nrounds = 1\nmode = timing\n[data]\ndataset = synthetic\nheight = 40\n"
                       "[model]\nlayers = 40,10\n[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 MB/s\n";
    ck_assert_int_eq(resolve_with(tall, NULL, 0, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.data.features, 40);
    ck_assert_int_eq(sc.model.in_height, 40);
}
END_TEST

START_TEST(test_every_key_rejects_every_bad_value)
{
    walk_n = 0;
    walk_collect_scenario_keys();
    walk_collect_method_keys();
    int checked = 0, failures = 0;
    for (int i = 0; i < walk_n; i++) {
        const WalkCase *c = &walk_cases[i];
        const char *sets[] = {c->set};
        Scenario sc;
        HsDiag diag;
        int status = resolve_with(c->base, sets, 1, &sc, &diag);
        if (status == HS_OK) {
            /* draws are checked when the agents are drawn (world.c) */
            World w;
            status = world_build(&sc, &w, &diag);
            if (status == HS_OK) world_free(&w);
        }
        if (status != HS_E_INPUT) {
            fprintf(stderr, "FAIL --set %s was accepted\n", c->set);
            failures++;
            continue;
        }
        /* --set drops the blanks after '=' */
        const char *eq = strchr(c->set, '=');
        const char *value = eq + 1;
        while (*value == ' ') value++;
        char prefix[1300];
        snprintf(prefix, sizeof prefix, "--set %.*s%s: ", (int)(eq + 1 - c->set), c->set, value);
        int names_set = strncmp(diag.message, prefix, strlen(prefix)) == 0;
        /* a bad draw is reported at its group's line, where the distribution's file line is */
        int names_group = strstr(diag.message, "t.ini:") == diag.message && strstr(diag.message, " drew ") != NULL;
        /* a control character is refused in the --set itself, shown escaped */
        int names_control = strncmp(diag.message, "--set: '", 8) == 0 && strstr(diag.message, "' holds ") != NULL;
        if (!(names_set || names_group || names_control)) {
            fprintf(stderr, "FAIL --set %s: message '%s' does not name the --set\n", c->set, diag.message);
            failures++;
        }
        checked++;
    }
    fprintf(stderr, "check_scenario_keys: %d bad values over every key, each refused\n", checked);
    ck_assert_int_eq(failures, 0);
    ck_assert_int_gt(checked, 900);
}
END_TEST

/* The same cases through the binary, a deterministic sample of them: exit 2 and no
 * database file. */
START_TEST(test_binary_exits_2_and_writes_nothing)
{
    const char *binary = getenv("HETSIM");
    ck_assert_msg(binary != NULL, "HETSIM must name the hetsim binary (make test sets it)");
    walk_n = 0;
    walk_collect_scenario_keys();
    walk_collect_method_keys();
    char dir[] = "/tmp/hetsim-keys-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    int ran = 0;
    for (int i = 0; i < walk_n; i += 7) {
        const WalkCase *c = &walk_cases[i];
        char ini[600], db[600];
        snprintf(ini, sizeof ini, "%s/t.ini", dir);
        snprintf(db, sizeof db, "%s/out.db", dir);
        FILE *f = fopen(ini, "w");
        ck_assert_ptr_nonnull(f);
        fputs(c->base, f);
        fclose(f);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            freopen("/dev/null", "w", stderr);
            execl(binary, binary, "run", ini, "--db", db, "--quiet", "--set", c->set, (char *)NULL);
            _exit(127);
        }
        int wstatus;
        ck_assert_int_eq(waitpid(pid, &wstatus, 0), pid);
        ck_assert_msg(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 2, "--set %s: exit %d", c->set,
                      WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
        ck_assert_msg(access(db, F_OK) != 0, "--set %s left a database", c->set);
        ran++;
    }
    char command[700];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
    fprintf(stderr, "check_scenario_keys: %d cases through %s, each exit 2 with no database\n", ran, binary);
}
END_TEST

/* ---- the schema itself: every row says what the reader, the writer and the docs need ---- */

static size_t schema_value_size(SchemaType type)
{
    switch (type) {
    case SCHEMA_INT:
    case SCHEMA_CHOICE:
    case SCHEMA_STEPS: return sizeof(int);
    case SCHEMA_REAL:
    case SCHEMA_TIME:
    case SCHEMA_WORD_OR_REAL: return sizeof(double);
    case SCHEMA_SEED: return sizeof(uint64_t);
    case SCHEMA_DISTRIBUTION:
    case SCHEMA_AVAILABILITY: return sizeof(Distribution);
    case SCHEMA_SLOWDOWN: return sizeof(Slowdown);
    default: return 0; /* text: any size; lists, choice-or-file: a hook */
    }
}

static void check_schema_row(const SchemaKey *k, int method_row)
{
    ck_assert_msg(k->name && k->name[0], "a row without a name");
    ck_assert_msg(k->help && k->help[0], "key %s has no help", k->name);
    ck_assert_msg(k->sections != 0, "key %s is in no section", k->name);
    int method_type = k->type == SCHEMA_STEPS || k->type == SCHEMA_TIME || k->type == SCHEMA_WORD_OR_REAL;
    ck_assert_msg(!method_type || method_row, "key %s has a [method] type in a fixed section", k->name);
    if (k->flags & SCHEMA_REQUIRED) ck_assert_msg(k->fallback == NULL, "required key %s has a default", k->name);
    ck_assert_msg(method_row || !(k->flags & SCHEMA_OMIT_DEFAULT),
                  "key %s: SCHEMA_OMIT_DEFAULT is read by the [method] writer only (a fixed row has `written`)",
                  k->name);
    if (!method_row && (k->flags & (SCHEMA_OPEN_MIN | SCHEMA_OPEN_MAX)))
        ck_assert_msg(k->edge != NULL, "key %s excludes an end of its range but says nothing about it", k->name);
    if (k->type == SCHEMA_CHOICE || k->type == SCHEMA_CHOICE_OR_FILE)
        ck_assert_msg(k->choices != NULL, "choice key %s has no choices", k->name);
    if (k->type == SCHEMA_CHOICE && k->fallback) {
        const char *p = strstr(k->choices, k->fallback);
        size_t n = strlen(k->fallback);
        ck_assert_msg(p && (p == k->choices || p[-1] == '|') && (p[n] == '\0' || p[n] == '|'),
                      "the default '%s' of %s is not one of %s", k->fallback, k->name, k->choices);
    }
    if (k->type == SCHEMA_INT_LIST || k->type == SCHEMA_REAL_LIST || k->type == SCHEMA_CHOICE_OR_FILE) {
        ck_assert_msg(k->land && k->write, "key %s lands through hooks and has none", k->name);
        ck_assert_msg(k->type == SCHEMA_CHOICE_OR_FILE || (k->count_max > 0 && k->count_max <= SCHEMA_LIST_MAX),
                      "list key %s has no element count", k->name);
    } else if (!k->land && schema_value_size(k->type) != 0 && !method_row) {
        ck_assert_msg(k->size == schema_value_size(k->type), "key %s lands in a field of %zu bytes, its type needs %zu",
                      k->name, k->size, schema_value_size(k->type));
    }
    if (k->type == SCHEMA_TEXT || k->type == SCHEMA_METHOD) ck_assert_msg(k->size > 1, "text key %s has no room", k->name);
}

START_TEST(test_schema_rows_are_complete)
{
    int n;
    const SchemaKey *rows = schema_keys(&n);
    for (int i = 0; i < n; i++) {
        check_schema_row(&rows[i], 0);
        for (int j = 0; j < i; j++)
            ck_assert_msg(!(rows[i].sections & rows[j].sections) || strcmp(rows[i].name, rows[j].name) != 0,
                          "two rows of key %s share a section", rows[i].name);
    }
    /* every section but [method] and [sweep] has keys, and finds each by name */
    for (const SchemaSection *s = schema_sections(); s->name; s++) {
        const char *names[64];
        int count = schema_key_names(s->id, names, 64);
        if (s->id == SCHEMA_IN_METHOD || s->id == SCHEMA_IN_SWEEP) {
            ck_assert_int_eq(count, 0);
            continue;
        }
        ck_assert_msg(count > 0, "[%s] has no keys", s->name);
        for (int k = 0; k < count; k++) ck_assert_ptr_nonnull(schema_find(s->id, names[k]));
        ck_assert_ptr_eq(schema_section(s->name), s);
    }
    ck_assert_ptr_eq(schema_section("agents.slow"), schema_section("agents.NAME"));
    ck_assert_ptr_null(schema_section("agent"));
    /* every method's rows, and every default of theirs resolves (scenario_resolve would
     * report a bad one as an internal error) */
    for (const MethodOps *const *m = method_all(); *m; m++)
        for (const SchemaKey *k = (*m)->keys; k && k->name; k++) {
            check_schema_row(k, 1);
            ck_assert_msg(k->sections == SCHEMA_IN_METHOD, "%s's key %s is not in [method]", (*m)->name, k->name);
            ck_assert_msg(k->fallback != NULL, "%s's key %s has no default", (*m)->name, k->name);
        }
}
END_TEST

/* A method reads its keys as fields of the struct it declares (sim/scenario/method_ops.h):
 * every row must land inside that struct, in a field of its type's size and alignment,
 * over no other row's field, so that what the method reads is what the row resolved. */
START_TEST(test_method_rows_land_in_their_struct)
{
    for (const MethodOps *const *m = method_all(); *m; m++) {
        const MethodOps *ops = *m;
        ck_assert_msg(ops->keys_size <= SCENARIO_METHOD_KEYS_MAX, "%s's keys take %zu bytes", ops->name, ops->keys_size);
        int count = 0;
        for (const SchemaKey *k = ops->keys; k && k->name; k++, count++) {
            size_t size = schema_value_size(k->type);
            ck_assert_msg(k->size == size, "%s's key %s lands in %zu bytes, its type needs %zu", ops->name, k->name,
                          k->size, size);
            ck_assert_msg(k->offset % size == 0 && k->offset + k->size <= ops->keys_size,
                          "%s's key %s lands at %zu, outside its %zu-byte struct or unaligned", ops->name, k->name,
                          k->offset, ops->keys_size);
            for (const SchemaKey *j = ops->keys; j != k; j++) {
                ck_assert_msg(strcmp(j->name, k->name) != 0, "%s has two keys %s", ops->name, k->name);
                ck_assert_msg(j->offset + j->size <= k->offset || k->offset + k->size <= j->offset,
                              "%s's keys %s and %s land in the same bytes", ops->name, j->name, k->name);
            }
        }
        ck_assert_msg(count <= SCENARIO_MAX_PARAMS, "%s has %d keys", ops->name, count);
        ck_assert_msg((count == 0) == (ops->keys_size == 0), "%s: %d keys in a %zu-byte struct", ops->name, count,
                      ops->keys_size);
    }
    /* comdml casts its cost's index to PairingCost: the choices are in the enum's order */
    ck_assert_int_eq(pairing_cost_parse("paper"), 0);
    ck_assert_int_eq(pairing_cost_parse("exact"), 1);
    ck_assert_str_eq(PAIRING_COST_NAMES, "paper|exact");
    /* the struct a method reads holds what its rows resolved: defaults, a value, a word */
    Scenario sc;
    HsDiag diag;
    const char *fedavg[] = {"run.method=fedavg", "method.participation=0.25", "method.local_steps=7"};
    const char *with_server = "[run]\nmethod = sync\nrounds = 2\nmode = timing\n[data]\ndataset = synthetic\n"
                              "[model]\nlayers = 32,16,10\n[agents]\ncount = 8\ncompute = 2 GFLOPS\nbandwidth = 100 Mbit/s\n"
                              "[server]\ncompute = 10 GFLOPS\nbandwidth = 1 Gbit/s\n";
    ck_assert_msg(resolve_with(with_server, fedavg, 3, &sc, &diag) == HS_OK, "%s", diag.message);
    ck_assert(test_method_key(&sc, "participation") == 0.25 && test_method_key(&sc, "local_steps") == 7);
    ck_assert(test_method_key(&sc, "overcommit") == 0 && isinf(test_method_key(&sc, "deadline")));
    const char *sdfeel[] = {"run.method=sdfeel", "method.local_steps=epoch", "method.deadline=auto"};
    ck_assert_msg(resolve_with(walk_base_servers, sdfeel, 3, &sc, &diag) == HS_OK, "%s", diag.message);
    ck_assert(test_method_key(&sc, "local_steps") == 0 && isnan(test_method_key(&sc, "deadline")));
    ck_assert(test_method_key(&sc, "intra_rounds") == 2);
}
END_TEST

/* Issue 28 class 1, over every [method] row with a `limits` hook: the edge its hook gives
 * on a resolved scenario is accepted and lands as written (never clamped), and one step
 * beyond it is refused naming the key. */
static const char *const limits_base =
    "[run]\nmethod = sync\nrounds = 2\nmode = timing\n[data]\ndataset = synthetic\n[model]\nlayers = 32,16,10\n"
    "[agents]\ncount = 8\ncompute = 2 GFLOPS\nbandwidth = 100 Mbit/s\n[server]\ncompute = 10 GFLOPS\nbandwidth = 1 Gbit/s\n";

static void limits_edge(const char *method, const SchemaKey *k, double value, int accepted)
{
    char run[64], key[128];
    snprintf(run, sizeof run, "run.method=%s", method);
    snprintf(key, sizeof key, "method.%s=%.17g", k->name, value);
    const char *set[] = {run, key};
    Scenario sc;
    HsDiag diag;
    int status = resolve_with(limits_base, set, 2, &sc, &diag);
    if (accepted) {
        ck_assert_msg(status == HS_OK, "%s %s at its limit: %s", method, key, diag.message);
        ck_assert_msg(test_method_key(&sc, k->name) == value, "%s %s landed as %.17g", method, key,
                      test_method_key(&sc, k->name));
    } else {
        ck_assert_msg(status == HS_E_INPUT && strstr(diag.message, key) != NULL, "%s %s beyond its limit: %d %s",
                      method, key, status, diag.message);
    }
}

START_TEST(test_method_limits_are_edges_not_clamps)
{
    int rows = 0;
    for (const MethodOps *const *m = method_all(); *m; m++)
        for (const SchemaKey *k = (*m)->keys; k && k->name; k++) {
            if (k->limits == NULL) continue;
            char run[64];
            snprintf(run, sizeof run, "run.method=%s", (*m)->name);
            const char *set[] = {run};
            Scenario sc;
            HsDiag diag;
            ck_assert_msg(resolve_with(limits_base, set, 1, &sc, &diag) == HS_OK, "%s: %s", (*m)->name, diag.message);
            double min = k->min, max = k->max;
            k->limits(&sc, &min, &max);
            int whole = k->type == SCHEMA_INT || k->type == SCHEMA_STEPS;
            ck_assert_msg(min < k->min || min > k->min || max < k->max || max > k->max,
                          "%s's %s: its limits change nothing on 8 agents", (*m)->name, k->name);
            if (max < k->max) {
                limits_edge((*m)->name, k, max, 1);
                limits_edge((*m)->name, k, whole ? max + 1 : nextafter(max, INFINITY), 0);
            }
            if (min > k->min) {
                limits_edge((*m)->name, k, min, 1);
                limits_edge((*m)->name, k, whole ? min - 1 : nextafter(min, 0), 0);
            }
            rows++;
        }
    ck_assert_msg(rows >= 5, "only %d [method] rows with limits", rows);
}
END_TEST

/* rounds.extra's meanings (MethodExtra): each names a key of its method, with a value
 * that is not the key's default (unless: that is its default), so that a run that does
 * not write the key matches no entry; an entry without a key ends the table (one after
 * it could never hold); and a scenario that sets the key gets that entry's meaning. */
START_TEST(test_extra_meanings_name_their_keys)
{
    int keyed = 0;
    for (const MethodOps *const *m = method_all(); *m; m++) {
        const MethodOps *ops = *m;
        for (const MethodExtra *e = ops->extra; e && (e->key || e->meaning); e++) {
            ck_assert_msg(e->meaning != NULL && e->meaning[0] != '\0', "%s: an entry without a meaning", ops->name);
            if (e->key == NULL) {
                ck_assert_msg(e[1].key == NULL && e[1].meaning == NULL, "%s: an entry after the one without a key",
                              ops->name);
                continue;
            }
            const SchemaKey *row = NULL;
            for (const SchemaKey *k = ops->keys; k && k->name; k++)
                if (strcmp(k->name, e->key) == 0) row = k;
            ck_assert_msg(row != NULL, "%s: rounds.extra depends on %s, which is not one of its keys", ops->name, e->key);
            ck_assert_msg((strcmp(e->value, row->fallback) == 0) == e->unless,
                          "%s: rounds.extra's entry for %s %s %s, whose default is %s", ops->name, e->key,
                          e->unless ? "is not" : "=", e->value, row->fallback);
            if (e->unless) continue;
            char method[64], key[128];
            snprintf(method, sizeof method, "run.method=%s", ops->name);
            snprintf(key, sizeof key, "method.%s=%s", e->key, e->value);
            const char *set[] = {method, key};
            Scenario sc;
            HsDiag diag;
            ck_assert_msg(resolve_with(limits_base, set, 2, &sc, &diag) == HS_OK, "%s %s: %s", ops->name, key,
                          diag.message);
            ck_assert_msg(method_extra_of_scenario(&sc) == e->meaning, "%s with %s: rounds.extra means '%s'", ops->name,
                          key, method_extra_of_scenario(&sc) ? method_extra_of_scenario(&sc) : "nothing");
            keyed++;
        }
    }
    ck_assert_int_ge(keyed, 4);
}
END_TEST

static Suite *scenario_keys_suite(void)
{
    Suite *s = suite_create("scenario_keys");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_schema_rows_are_complete);
    tcase_add_test(tc, test_method_rows_land_in_their_struct);
    tcase_add_test(tc, test_method_limits_are_edges_not_clamps);
    tcase_add_test(tc, test_extra_meanings_name_their_keys);
    tcase_add_test(tc, test_method_and_method_name_merge);
    tcase_add_test(tc, test_list_elements_are_never_dropped);
    tcase_add_test(tc, test_whole_numbers_and_overflow);
    tcase_add_test(tc, test_image_shape_and_resnet);
    tcase_add_test(tc, test_every_key_rejects_every_bad_value);
    tcase_add_test(tc, test_binary_exits_2_and_writes_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(scenario_keys_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    free(walk_cases);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
