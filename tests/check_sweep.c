/* check_sweep.c — [sweep] expansion (counts, order, labels, comma splitting, group keys,
 * repeat, the sweep id), every error class with its FILE:LINE, and the record stream:
 * a run sent through SweepWire and replayed must reach the sink row for row, bit for
 * bit, however the bytes are cut. */
#include "sim/run.h"
#include "driver/sweep.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *base_text =
    "[run]\n"                                     /* 1 */
    "method = sync\n"                             /* 2 */
    "seed = 5\n"                                  /* 3 */
    "rounds = 2\n"                                /* 4 */
    "mode = timing\n"                             /* 5 */
    "[model]\n"                                   /* 6 */
    "layers = 784,32,10\n"                        /* 7 */
    "batch = 50\n"                                /* 8 */
    "[agents]\n"                                  /* 9 */
    "count = 6\n"                                 /* 10 */
    "compute = lognormal(1 GFLOPS, 0.5)\n"        /* 11 */
    "bandwidth = uniform(10 Mbit/s, 100 Mbit/s)\n"/* 12 */
    "latency = 5 ms\n"                            /* 13 */
    "samples = 200\n"                             /* 14 */
    "[agents.slow]\n"                             /* 15 */
    "count = 2\n"                                 /* 16 */
    "compute = 100 MFLOPS\n"                      /* 17 */
    "[sweep]\n";                                  /* 18; sweep lines start at 19 */

/* Parses and resolves base_text + sweep_lines as "t.ini". */
static int load_sweep(const char *sweep_lines, Sweep *sw, HsDiag *diag)
{
    char text[8192];
    snprintf(text, sizeof text, "%s%s", base_text, sweep_lines);
    IniDoc doc;
    hs_diag_clear(diag);
    int status = inidoc_load_string("t.ini", text, &doc, diag);
    if (status == HS_OK) status = sweep_parse(&doc, sw, diag);
    if (status == HS_OK) {
        status = sweep_resolve(sw, diag);
        if (status != HS_OK) sweep_free(sw);
    }
    inidoc_free(&doc);
    return status;
}

static void expect_error(const char *sweep_lines, const char *prefix, const char *fragment)
{
    Sweep sw;
    HsDiag diag;
    test_expect_input_error(load_sweep(sweep_lines, &sw, &diag), &diag, sweep_lines, prefix, fragment);
}

START_TEST(test_split_values)
{
    char **v;
    int n;
    char why[128];
    ck_assert_int_eq(sweep_split_values("sync, comdml,dpsgd", &v, &n, why, sizeof why), HS_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(v[0], "sync");
    ck_assert_str_eq(v[1], "comdml");
    ck_assert_str_eq(v[2], "dpsgd");
    sweep_values_free(v, n);

    /* Commas inside parentheses belong to the value. */
    ck_assert_int_eq(sweep_split_values("lognormal(2 GFLOPS, 0.2), lognormal(2 GFLOPS, 1.6)", &v, &n, why,
                                        sizeof why), HS_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(v[0], "lognormal(2 GFLOPS, 0.2)");
    ck_assert_str_eq(v[1], "lognormal(2 GFLOPS, 1.6)");
    sweep_values_free(v, n);

    /* Nesting, and a whole item in parentheses loses them (a list as one value). */
    ck_assert_int_eq(sweep_split_values("choice(a:0.5, b:0.5), (784,64,10) , ( 1 ), (a) + (b)", &v, &n, why,
                                        sizeof why), HS_OK);
    ck_assert_int_eq(n, 4);
    ck_assert_str_eq(v[0], "choice(a:0.5, b:0.5)");
    ck_assert_str_eq(v[1], "784,64,10");
    ck_assert_str_eq(v[2], "1");
    ck_assert_str_eq(v[3], "(a) + (b)");
    sweep_values_free(v, n);

    ck_assert_int_eq(sweep_split_values("single", &v, &n, why, sizeof why), HS_OK);
    ck_assert_int_eq(n, 1);
    sweep_values_free(v, n);

    ck_assert_int_eq(sweep_split_values("", &v, &n, why, sizeof why), HS_E_INPUT);
    ck_assert_str_eq(why, "no values");
    ck_assert_int_eq(sweep_split_values("   ", &v, &n, why, sizeof why), HS_E_INPUT);
    ck_assert_int_eq(sweep_split_values("a,,b", &v, &n, why, sizeof why), HS_E_INPUT);
    ck_assert_str_eq(why, "value 2 is empty");
    ck_assert_int_eq(sweep_split_values("a, b,", &v, &n, why, sizeof why), HS_E_INPUT);
    ck_assert_str_eq(why, "value 3 is empty");
    ck_assert_int_eq(sweep_split_values(", a", &v, &n, why, sizeof why), HS_E_INPUT);
    ck_assert_int_eq(sweep_split_values("lognormal(1, 2", &v, &n, why, sizeof why), HS_E_INPUT);
    ck_assert(strstr(why, "'(' without ')'") != NULL);
    ck_assert_int_eq(sweep_split_values("a), b", &v, &n, why, sizeof why), HS_E_INPUT);
    ck_assert(strstr(why, "')' without '('") != NULL);
    ck_assert_int_eq(sweep_split_values("()", &v, &n, why, sizeof why), HS_E_INPUT);
}
END_TEST

START_TEST(test_counts_order_and_labels)
{
    Sweep sw;
    HsDiag diag;
    ck_assert_int_eq(load_sweep("run.method = sync, localsgd\n"
                                "agents.compute = lognormal(2 GFLOPS, 0.2), lognormal(2 GFLOPS, 1.6), 1 GFLOPS\n"
                                "repeat = 2\n",
                                &sw, &diag), HS_OK);
    ck_assert_int_eq(sw.n_axes, 2);
    ck_assert_int_eq(sw.repeat, 2);
    ck_assert_int_eq(sw.n_points, 6);
    ck_assert_int_eq(sw.n_runs, 12);
    /* First key slowest, seed fastest. */
    ck_assert_str_eq(sw.labels[0], "run.method=sync agents.compute=lognormal(2 GFLOPS, 0.2) seed=5");
    ck_assert_str_eq(sw.labels[1], "run.method=sync agents.compute=lognormal(2 GFLOPS, 0.2) seed=6");
    ck_assert_str_eq(sw.labels[2], "run.method=sync agents.compute=lognormal(2 GFLOPS, 1.6) seed=5");
    ck_assert_str_eq(sw.labels[5], "run.method=sync agents.compute=1 GFLOPS seed=6");
    ck_assert_str_eq(sw.labels[6], "run.method=localsgd agents.compute=lognormal(2 GFLOPS, 0.2) seed=5");
    ck_assert_str_eq(sw.labels[11], "run.method=localsgd agents.compute=1 GFLOPS seed=6");
    for (int64_t i = 0; i < sw.n_runs; i++) ck_assert_int_eq(sweep_find(&sw, sw.labels[i]), i);
    ck_assert_int_eq(sweep_find(&sw, "run.method=sync seed=5"), -1);
    ck_assert_int_eq(sweep_find(&sw, NULL), -1);

    /* The scenario of a run carries its values and seed. */
    Scenario *sc = malloc(sizeof *sc);
    ck_assert_int_eq(sweep_scenario(&sw, 7, sc, &diag), HS_OK);
    ck_assert_str_eq(sc->method, "localsgd");
    ck_assert_uint_eq(sc->seed, 6);
    ck_assert_int_eq(sc->groups[0].compute.kind, DIST_LOGNORMAL);
    ck_assert(sc->groups[0].compute.a == 2e9);
    ck_assert(sc->groups[0].compute.b == 0.2);
    ck_assert_int_eq(sc->has_sweep, 0);  /* a point is a plain scenario */
    ck_assert_int_eq(sweep_scenario(&sw, 12, sc, &diag), HS_E_INTERNAL);
    free(sc);
    sweep_free(&sw);
    sweep_free(&sw);  /* freeing twice is harmless */
}
END_TEST

START_TEST(test_group_keys_and_new_keys)
{
    Sweep sw;
    HsDiag diag;
    ck_assert_int_eq(load_sweep("agents.slow.compute = 100 MFLOPS, 300 MFLOPS\n"
                                "agents.slow.count = 1, 3\n"
                                "topology.graph = ring, full\n",  /* a section the file lacks */
                                &sw, &diag), HS_OK);
    ck_assert_int_eq(sw.n_runs, 8);
    ck_assert_str_eq(sw.axes[0].section, "agents.slow");
    ck_assert_str_eq(sw.axes[0].key, "compute");
    ck_assert_str_eq(sw.labels[7], "agents.slow.compute=300 MFLOPS agents.slow.count=3 topology.graph=full seed=5");
    Scenario *sc = malloc(sizeof *sc);
    ck_assert_int_eq(sweep_scenario(&sw, 6, sc, &diag), HS_OK);  /* 300 MFLOPS, 3, ring */
    ck_assert_int_eq(sc->n_groups, 2);
    ck_assert_str_eq(sc->groups[1].name, "slow");
    ck_assert(sc->groups[1].compute.a == 3e8);
    ck_assert_int_eq(sc->groups[1].count, 3);
    ck_assert_int_eq(sc->groups[0].count, 3);
    ck_assert(sc->groups[0].compute.a == 1e9);  /* [agents] keeps its own value */
    ck_assert_int_eq(sc->topology, TOPO_RING);
    free(sc);
    sweep_free(&sw);
}
END_TEST

START_TEST(test_repeat_and_seeds)
{
    Sweep sw;
    HsDiag diag;
    ck_assert_int_eq(load_sweep("repeat = 3\n", &sw, &diag), HS_OK);
    ck_assert_int_eq(sw.n_axes, 0);
    ck_assert_int_eq(sw.n_runs, 3);
    ck_assert_str_eq(sw.labels[0], "seed=5");
    ck_assert_str_eq(sw.labels[2], "seed=7");
    sweep_free(&sw);

    /* A swept seed is the base of its repeats. */
    ck_assert_int_eq(load_sweep("run.seed = 10, 20\nrepeat = 2\n", &sw, &diag), HS_OK);
    ck_assert_int_eq(sw.n_runs, 4);
    ck_assert_str_eq(sw.labels[0], "run.seed=10 seed=10");
    ck_assert_str_eq(sw.labels[1], "run.seed=10 seed=11");
    ck_assert_str_eq(sw.labels[3], "run.seed=20 seed=21");
    Scenario *sc = malloc(sizeof *sc);
    ck_assert_int_eq(sweep_scenario(&sw, 3, sc, &diag), HS_OK);
    ck_assert_uint_eq(sc->seed, 21);
    free(sc);
    sweep_free(&sw);

    /* An empty [sweep], or none, is one run. */
    ck_assert_int_eq(load_sweep("", &sw, &diag), HS_OK);
    ck_assert_int_eq(sw.n_runs, 1);
    ck_assert_str_eq(sw.labels[0], "seed=5");
    sweep_free(&sw);
    IniDoc doc;
    ck_assert_int_eq(inidoc_load_string("n.ini", "[run]\nmethod = sync\nrounds = 1\nmode = timing\n"
                                                 "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 MB/s\n",
                                        &doc, &diag), HS_OK);
    ck_assert_int_eq(sweep_parse(&doc, &sw, &diag), HS_OK);
    ck_assert_int_eq(sweep_resolve(&sw, &diag), HS_OK);
    ck_assert_int_eq(sw.n_runs, 1);
    ck_assert_str_eq(sw.labels[0], "seed=1");
    sweep_free(&sw);
    inidoc_free(&doc);
}
END_TEST

START_TEST(test_bad_keys_name_the_sweep_line)
{
    /* Unknown key and section of a point: the [sweep] line, with the hint the scenario
     * resolver gives. */
    expect_error("run.method = sync\nagents.bandwith = 1 MB/s, 2 MB/s\n",
                 "t.ini:20: unknown key 'bandwith' in [agents]", "did you mean 'bandwidth'?");
    expect_error("agnts.count = 4, 8\n", "t.ini:19: unknown section [agnts]", "did you mean 'agents'?");
    expect_error("run.method = sync, nosuch\n", "t.ini:19: [run] method: unknown method 'nosuch'",
                 "(in sweep point run.method=nosuch)");
    /* A value that is bad in one point only names the point. */
    expect_error("run.method = sync, localsgd\nagents.count = 6, -1\n", "t.ini:20: [agents] count",
                 "(in sweep point run.method=sync agents.count=-1)");
    /* A group swept into existence still needs its count. */
    /* a swept key changes what the file defines: it cannot invent a group (issue 28) */
    expect_error("agents.fast.compute = 4 GFLOPS\n", "t.ini:19: [sweep] agents.fast.compute: the scenario defines no "
                 "group [agents.fast]", "--add-group fast");
    /* What only drawing the agents finds is found before anything runs, too. */
    expect_error("run.mode = train\nagents.samples = 200, 20000\n", "t.ini:9: [agents] samples",
                 "(in sweep run run.mode=train agents.samples=20000 seed=5)");
    /* A swept key the base file is wrong about is still found at its own line. */
    expect_error("run.rounds = 2, zero\n", "t.ini:19: [run] rounds", "zero");
}
END_TEST

START_TEST(test_malformed_sweep_lines)
{
    expect_error("method = sync, localsgd\n", "t.ini:19: [sweep] 'method' is not SECTION.KEY", "repeat");
    expect_error("run. = a, b\n", "t.ini:19: [sweep] 'run.' is not SECTION.KEY", "");
    expect_error("run.method =\n", "t.ini:19: [sweep] run.method: no values", "");
    expect_error("run.method = sync,,localsgd\n", "t.ini:19: [sweep] run.method: value 2 is empty", "");
    expect_error("run.method = sync, localsgd,\n", "t.ini:19: [sweep] run.method: value 3 is empty", "");
    expect_error("agents.compute = lognormal(1 GFLOPS, 0.2\n", "t.ini:19: [sweep] agents.compute: '(' without ')'", "");
    expect_error("run.method = sync, sync\n", "t.ini:19: [sweep] run.method: 'sync' is listed twice", "");
    expect_error("repeat = 0\n", "t.ini:19: [sweep] repeat: expected a whole number", "");
    expect_error("repeat = two\n", "t.ini:19: [sweep] repeat", "'two'");
    expect_error("sweep.repeat = 1, 2\n", "t.ini:19: [sweep] cannot sweep over [sweep]", "");
    expect_error("run.method = sync\nrun.method = localsgd\n", "t.ini:20: 'run.method' is set twice in [sweep]", "");
    /* Seeds past 2^63 - 1. */
    expect_error("run.seed = 9223372036854775807\nrepeat = 2\n", "t.ini:20: [sweep] repeat: seed", "2^63");
}
END_TEST

START_TEST(test_sweep_id)
{
    Sweep a, b, c;
    HsDiag diag;
    ck_assert_int_eq(load_sweep("run.method = sync, localsgd\nrepeat = 2\n", &a, &diag), HS_OK);
    ck_assert_int_eq(load_sweep("run.method = sync, localsgd\nrepeat = 2\n", &b, &diag), HS_OK);
    ck_assert_int_eq(load_sweep("run.method = sync, localsgd\nrepeat = 3\n", &c, &diag), HS_OK);
    ck_assert_int_eq(strncmp(a.id, "sw-", 3), 0);
    ck_assert_int_eq(strlen(a.id), 19);
    ck_assert_str_eq(a.id, b.id);
    ck_assert_str_ne(a.id, c.id);
    sweep_free(&c);
    /* A value that changes a resolved run changes the id; spelling that does not, does not. */
    ck_assert_int_eq(load_sweep("run.method = sync, localsgd\nrepeat = 2\nagents.latency = 6 ms\n", &c, &diag), HS_OK);
    ck_assert_str_ne(a.id, c.id);
    sweep_free(&c);
    ck_assert_int_eq(load_sweep("run.method =   sync ,localsgd\nrepeat = 2\n", &c, &diag), HS_OK);
    ck_assert_str_eq(a.id, c.id);
    sweep_free(&a);
    sweep_free(&b);
    sweep_free(&c);
}
END_TEST

/* ---- the record stream ---- */

/* Forwards to a TestSink and keeps the sweep and point of the last run_begin. */
typedef struct LabelSink {
    Sink inner;
    char sweep[64], point[512];
    int begins;
} LabelSink;

static int ls_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    LabelSink *s = ctx;
    snprintf(s->sweep, sizeof s->sweep, "%s", info->sweep ? info->sweep : "(null)");
    snprintf(s->point, sizeof s->point, "%s", info->point ? info->point : "(null)");
    s->begins++;
    return s->inner.ops->run_begin(s->inner.ctx, info, run_id);
}
static int ls_agents(void *ctx, int64_t id, const SinkAgent *a, int n)
{
    LabelSink *s = ctx;
    return s->inner.ops->agents(s->inner.ctx, id, a, n);
}
static int ls_round(void *ctx, int64_t id, const SinkRound *r)
{
    LabelSink *s = ctx;
    return s->inner.ops->round(s->inner.ctx, id, r);
}
static int ls_agent_rounds(void *ctx, int64_t id, const SinkAgentRound *r, int n)
{
    LabelSink *s = ctx;
    return s->inner.ops->agent_rounds(s->inner.ctx, id, r, n);
}
static int ls_pairing(void *ctx, int64_t id, const SinkPairing *p)
{
    LabelSink *s = ctx;
    return s->inner.ops->pairing(s->inner.ctx, id, p);
}
static int ls_metric(void *ctx, int64_t id, const SinkMetric *m)
{
    LabelSink *s = ctx;
    return s->inner.ops->metric(s->inner.ctx, id, m);
}
static int ls_run_end(void *ctx, int64_t id, const SinkRunEnd *e)
{
    LabelSink *s = ctx;
    return s->inner.ops->run_end(s->inner.ctx, id, e);
}
static const SinkOps label_ops = {ls_run_begin, ls_agents, ls_round, ls_agent_rounds, ls_pairing, ls_metric,
                                  ls_run_end, NULL, NULL, NULL};

/* The wire's flush: keeps every byte, to be replayed in pieces of chunk bytes. */
typedef struct Captured {
    unsigned char *data;
    size_t len;
    int flushes;
    size_t first_len; /* bytes after the first flush (a round end: the run is still open) */
    size_t last_at;   /* where the last flush's bytes start */
} Captured;

static int capture_flush(void *ctx, const void *data, size_t len)
{
    Captured *c = ctx;
    c->data = realloc(c->data, c->len + len);
    c->last_at = c->len;
    memcpy(c->data + c->len, data, len);
    c->len += len;
    if (c->flushes++ == 0) c->first_len = c->len;
    return HS_OK;
}

typedef struct Finish {
    int64_t index;
    int status, calls, begun, ended;
    SinkStatus end_status;
} Finish;

static void on_finished(void *ctx, SweepReplay *r, int64_t index, int status, const char *message)
{
    Finish *f = ctx;
    f->index = index;
    f->status = status;
    f->calls++;
    f->begun = r->begun;
    f->ended = r->ended;
    f->end_status = r->end.status;
}

START_TEST(test_wire_replays_bit_for_bit)
{
    Sweep sw;
    HsDiag diag;
    ck_assert_int_eq(load_sweep("run.method = sync, localsgd\nrepeat = 2\n", &sw, &diag), HS_OK);
    const int64_t index = 3;

    /* Direct: the engine into a TestSink. */
    TestSink direct;
    Sink direct_sink = test_sink_init(&direct);
    ck_assert_int_eq(sweep_run_one(&sw, index, direct_sink, &diag), HS_OK);

    /* Through the wire, captured, then replayed in pieces of every size from 1 byte. */
    Captured cap = {0};
    SweepWire wire = {.flush_every_round = 1};  /* a slow run's flushes: one per round */
    Sink wire_sink = sweep_wire_sink(&wire, index, capture_flush, &cap);
    ck_assert_int_eq(sweep_run_one(&sw, index, wire_sink, &diag), HS_OK);
    sweep_wire_run_returned(&wire);  /* as the producers do: must keep the END */
    ck_assert_int_eq(sweep_wire_finished(&wire, index, HS_OK, NULL), HS_OK);
    ck_assert_int_ge(cap.flushes, 3);  /* each round end, then the run's END with FINISHED */
    /* END and FINISHED in one write: the last flush ends with END's frame, then
     * FINISHED's (frames: u32 length of the rest, u8 type; END 7, FINISHED 8). */
    {
        unsigned char types[2] = {0, 0};
        size_t at = cap.last_at;
        while (at < cap.len) {
            uint32_t n;
            memcpy(&n, cap.data + at, sizeof n);
            types[0] = types[1];
            types[1] = cap.data[at + 4];
            at += 4 + n;
        }
        ck_assert_uint_eq(at, cap.len);
        ck_assert_int_eq(types[0], 7);
        ck_assert_int_eq(types[1], 8);
    }
    const size_t chunks[] = {1, 7, 4096, 1 << 30};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        TestSink replayed;
        LabelSink label = {.inner = test_sink_init(&replayed)};
        Finish finish = {0};
        SweepReplay replay;
        sweep_replay_init(&replay, &sw, (Sink){&label_ops, &label}, on_finished, &finish);
        unsigned char *pending = malloc(cap.len);
        size_t have = 0, fed = 0;
        while (fed < cap.len) {
            size_t n = cap.len - fed < chunks[c] ? cap.len - fed : chunks[c];
            memcpy(pending + have, cap.data + fed, n);
            have += n;
            fed += n;
            size_t used = 0;
            ck_assert_int_eq(sweep_replay(&replay, pending, have, &used, &diag), HS_OK);
            memmove(pending, pending + used, have - used);
            have -= used;
        }
        ck_assert_int_eq(have, 0);
        ck_assert_str_eq(replayed.text, direct.text);
        ck_assert_str_eq(label.sweep, sw.id);
        ck_assert_str_eq(label.point, sw.labels[index]);
        ck_assert_int_eq(label.begins, 1);
        ck_assert_int_eq(finish.calls, 1);
        ck_assert_int_eq(finish.index, index);
        ck_assert_int_eq(finish.status, HS_OK);
        ck_assert_int_eq(finish.begun, 1);
        ck_assert_int_eq(finish.ended, 1);
        ck_assert_int_eq(finish.end_status, SINK_STATUS_DONE);
        free(pending);
        sweep_replay_free(&replay);
        test_sink_free(&replayed);
    }

    /* A producer that dies mid-run (after its first round's records; half the capture
     * would depend on how long the run_begin record's config is): the replay ends its
     * run as failed. */
    TestSink cut;
    Finish finish = {0};
    SweepReplay replay;
    sweep_replay_init(&replay, &sw, test_sink_init(&cut), on_finished, &finish);
    size_t used = 0;
    ck_assert(cap.first_len > 0 && cap.first_len < cap.len);
    ck_assert_int_eq(sweep_replay(&replay, cap.data, cap.first_len, &used, &diag), HS_OK);
    ck_assert(used > 0 && used <= cap.first_len);
    ck_assert_int_eq(replay.in_run, 1);
    ck_assert_int_eq(cut.ended, 0);
    ck_assert_int_eq(sweep_replay_abandon(&replay, "worker died", &diag), HS_OK);
    ck_assert_int_eq(cut.ended, 1);
    ck_assert_int_eq(cut.status, SINK_STATUS_FAILED);
    ck_assert_int_eq(replay.in_run, 0);
    ck_assert_int_eq(finish.calls, 0);
    ck_assert_int_eq(sweep_replay_abandon(&replay, "again", &diag), HS_OK);  /* nothing open: no-op */
    sweep_replay_free(&replay);
    test_sink_free(&cut);

    /* Garbage is refused, not replayed. */
    TestSink junk;
    sweep_replay_init(&replay, &sw, test_sink_init(&junk), on_finished, &finish);
    unsigned char bad[] = {2, 0, 0, 0, 99, 0};
    hs_diag_clear(&diag);
    ck_assert_int_eq(sweep_replay(&replay, bad, sizeof bad, &used, &diag), HS_E_INTERNAL);
    sweep_replay_free(&replay);
    test_sink_free(&junk);

    free(cap.data);
    sweep_wire_free(&wire);
    test_sink_free(&direct);
    sweep_free(&sw);
}
END_TEST

/* A run that fails before its END (here: its records stop after the agents) leaves
 * rows in the wire's buffer; sweep_wire_run_returned drops them, so the one write is
 * FINISHED alone and the replay never sees the run begin, let alone end as done. A run
 * that failed after its END (the END's status says how) keeps that END, as when END
 * was flushed by itself. */
START_TEST(test_wire_failed_run_sends_no_rows)
{
    Sweep sw;
    HsDiag diag;
    ck_assert_int_eq(load_sweep("run.method = sync\nrepeat = 2\n", &sw, &diag), HS_OK);
    Captured cap = {0};
    SweepWire wire = {0};
    Sink sink = sweep_wire_sink(&wire, 0, capture_flush, &cap);
    SinkRunInfo info = {.name = "x", .scenario = "x.ini", .method = "sync", .seed = 1, .mode = "timing",
                        .config = "[run]\n"};
    SinkAgent agent = {0};
    int64_t run_id = -1;
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &run_id), HS_OK);
    ck_assert_int_eq(sink.ops->agents(sink.ctx, run_id, &agent, 1), HS_OK);
    ck_assert_uint_gt(wire.len, 0);
    sweep_wire_run_returned(&wire);
    ck_assert_uint_eq(wire.len, 0);
    ck_assert_int_eq(sweep_wire_finished(&wire, 0, HS_E_INTERNAL, "failed"), HS_OK);
    ck_assert_int_eq(cap.flushes, 1);
    ck_assert_int_eq(cap.data[4], 8);  /* FINISHED only */

    /* a failed run with its END: the END stays, rows after it go */
    SinkRunEnd end = {.status = SINK_STATUS_FAILED, .message = "failed"};
    sink = sweep_wire_sink(&wire, 1, capture_flush, &cap);
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &run_id), HS_OK);
    ck_assert_int_eq(sink.ops->run_end(sink.ctx, run_id, &end), HS_OK);
    size_t with_end = wire.len;
    ck_assert_int_eq(sink.ops->agents(sink.ctx, run_id, &agent, 1), HS_OK);
    sweep_wire_run_returned(&wire);
    ck_assert_uint_eq(wire.len, with_end);
    ck_assert_int_eq(sweep_wire_finished(&wire, 1, HS_E_INTERNAL, "failed"), HS_OK);
    ck_assert_int_eq(cap.flushes, 2);

    Finish finish = {0};
    TestSink replayed;
    SweepReplay replay;
    sweep_replay_init(&replay, &sw, test_sink_init(&replayed), on_finished, &finish);
    size_t used = 0;
    ck_assert_int_eq(sweep_replay(&replay, cap.data, cap.last_at, &used, &diag), HS_OK);
    ck_assert_uint_eq(used, cap.last_at);
    ck_assert_int_eq(finish.calls, 1);
    ck_assert_int_eq(finish.begun, 0);
    ck_assert_int_eq(finish.ended, 0);
    ck_assert_uint_eq(replayed.len, 0);  /* no row replayed */
    ck_assert_int_eq(sweep_replay(&replay, cap.data + used, cap.len - used, &used, &diag), HS_OK);
    ck_assert_int_eq(finish.calls, 2);
    ck_assert_int_eq(finish.ended, 1);
    ck_assert_int_eq(finish.end_status, SINK_STATUS_FAILED);
    ck_assert_int_eq(replayed.ended, 1);
    ck_assert_int_eq(replayed.status, SINK_STATUS_FAILED);
    sweep_replay_free(&replay);
    test_sink_free(&replayed);
    free(cap.data);
    sweep_wire_free(&wire);
    sweep_free(&sw);
}
END_TEST

static Suite *sweep_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("expansion");
    tcase_add_test(tc, test_split_values);
    tcase_add_test(tc, test_counts_order_and_labels);
    tcase_add_test(tc, test_group_keys_and_new_keys);
    tcase_add_test(tc, test_repeat_and_seeds);
    tcase_add_test(tc, test_bad_keys_name_the_sweep_line);
    tcase_add_test(tc, test_malformed_sweep_lines);
    tcase_add_test(tc, test_sweep_id);
    suite_add_tcase(s, tc);
    TCase *wire = tcase_create("wire");
    tcase_add_test(wire, test_wire_replays_bit_for_bit);
    tcase_add_test(wire, test_wire_failed_run_sends_no_rows);
    suite_add_tcase(s, wire);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(sweep_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
