/* check_rog.c — ROG (sim/methods/rog.c) and its row selector (sim/stages/rowsend.c): the
 * rows of a model, the rows per step worked by hand from budget x bandwidth, the staleness
 * bound over random values and budgets, the most important rows first, a run's timing in
 * closed form, train = timing under a fluctuating bandwidth trace, determinism, learning
 * with a third of the rows, and the keys' errors. Unstable links: the pair's pushes and
 * pulls cut at a deadline, their losses replayed from the senders' streams (retransmit:
 * after the deadline only the mandatory rows go; drop: a lost push sends no row), and
 * train = timing, determinism and learning under loss for every cut and exchange. */
#include "models/model_spec.h"
#include "sim/kernel/rng.h"
#include "sim/run.h"
#include "sim/stages/rowsend.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int run_text(const char *text, const char *const *overrides, int n, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(text, overrides, n, ts, &diag);
    if (status != 0) fprintf(stderr, "%s\n", diag.message);
    return status;
}

/* MLP 16 -> 32 -> 4: layer 0 has 32 rows of 16 weights + bias (72 bytes with the index),
 * layer 1 has 4 rows of 32 + 1 (136 bytes); 2304 + 544 = 2848 bytes in all. */
static RowLayout small_layout(void)
{
    ModelSpec spec = {.arch = MODEL_ARCH_MLP, .n_sizes = 3, .sizes = {16, 32, 4}, .classes = 4, .batch = 16};
    ModelProfile p;
    ck_assert_int_eq(model_profile(&spec, &p), 0);
    RowLayout l;
    ck_assert_int_eq(row_layout_of(&spec, &p, &l), 0);
    return l;
}

START_TEST(test_rows_of_a_model)
{
    RowLayout l = small_layout();
    ck_assert_int_eq(l.n_layers, 2);
    ck_assert_int_eq(l.rows[0], 32);
    ck_assert_int_eq(l.width[0], 16);
    ck_assert_int_eq(l.rows[1], 4);
    ck_assert_int_eq(l.width[1], 32);
    ck_assert_uint_eq(l.offset[1], 16 * 32 + 32);
    ck_assert_int_eq(l.total_rows, 36);
    ck_assert(l.bytes == 2848);
    /* the CNN: conv rows are output channels (C K K + 1 floats) */
    ModelSpec cnn = {.arch = MODEL_ARCH_CNN, .in_channels = 1, .in_height = 8, .in_width = 8, .classes = 10,
                     .conv_channels = {4, 8}, .kernel = 3, .hidden = 16, .batch = 8};
    ModelProfile p;
    ck_assert_int_eq(model_profile(&cnn, &p), 0);
    ck_assert_int_eq(row_layout_of(&cnn, &p, &l), 0);
    ck_assert_int_eq(l.rows[0], 4);
    ck_assert_int_eq(l.width[0], 9);
    ck_assert_int_eq(l.rows[1], 8);
    ck_assert_int_eq(l.width[1], 36);
    ck_assert_int_eq(l.width[2], 8 * 2 * 2);
    ck_assert_int_eq(l.rows[3], 10);
    /* a ResNet has no rows */
    ModelSpec resnet = {.arch = MODEL_ARCH_RESNET, .in_channels = 3, .in_height = 8, .in_width = 8, .classes = 10,
                        .depth = 8, .base_channels = 4, .norm_groups = 2, .batch = 8};
    ck_assert_int_eq(model_profile(&resnet, &p), 0);
    ck_assert_int_eq(row_layout_of(&resnet, &p, &l), HS_E_INPUT);
}
END_TEST

/* Rows per step by hand. Allowed 1000 bytes: layer 0's share is 1000 x 2304 / 2848 =
 * 808.99 bytes, floor(808.99 / 72) = 11 rows; layer 1's 191.01 bytes, floor(191.01 / 136)
 * = 1 row. With S = 4 the mandatory rows are 8 and 1, so 11 and 1: 928 bytes. Allowed 0:
 * the mandatory rows only; with S = 3 they rotate: layer 0 has 11, 11, 10 rows at t = 0,
 * 1, 2 and layer 1 has 2, 1, 1. Allowed 10000 caps at every row. */
START_TEST(test_rows_per_step_by_hand)
{
    RowLayout l = small_layout();
    RowSend rs;
    ck_assert_int_eq(rowsend_init(&rs, &l, 1, 4, ROWSEND_MAGNITUDE), 0);
    ck_assert_int_eq(rowsend_count(&rs, 0, 0, 1000), 11);
    ck_assert_int_eq(rowsend_count(&rs, 1, 0, 1000), 1);
    ck_assert(rowsend_bytes(&rs, 0, 1000) == 928);
    ck_assert(rowsend_bytes(&rs, 5, 0) == 8 * 72 + 136);
    ck_assert(rowsend_bytes(&rs, 5, 10000) == 2848);
    ck_assert(rowsend_bytes(&rs, 5, INFINITY) == 2848);
    rowsend_free(&rs);
    ck_assert_int_eq(rowsend_init(&rs, &l, 1, 3, ROWSEND_MAGNITUDE), 0);
    static const double bytes[3] = {11 * 72 + 2 * 136, 11 * 72 + 136, 10 * 72 + 136};
    for (long t = 0; t < 6; t++) ck_assert(rowsend_bytes(&rs, t, 0) == bytes[t % 3]);
    rowsend_free(&rs);
}
END_TEST

/* Random values and budgets (0 to every row): the chosen rows are exactly the counted
 * ones, and after every step no row of any agent is S or more steps old. */
START_TEST(test_staleness_bound_holds)
{
    RowLayout l = small_layout();
    static const int bounds[] = {1, 2, 3, 5, 40};
    unsigned seed = 7;
    float *v = malloc(sizeof(float) * (16 * 32 + 32 + 32 * 4 + 4));
    ck_assert_ptr_nonnull(v);
    for (int importance = 0; importance < 2; importance++)
        for (size_t k = 0; k < sizeof bounds / sizeof *bounds; k++) {
            RowSend rs;
            int S = bounds[k];
            ck_assert_int_eq(rowsend_init(&rs, &l, 3, S, importance), 0);
            for (long t = 0; t < 120; t++) {
                for (int a = 0; a < 3; a++) {
                    for (int j = 0; j < 16 * 32 + 32 + 32 * 4 + 4; j++)
                        v[j] = (float)(rand_r(&seed) % 2001 - 1000) / 1000.0f;
                    double allowed = (double)(rand_r(&seed) % 3000);
                    rowsend_choose(&rs, a, t, allowed, v);
                    int marked = 0, counted = 0;
                    for (int r = 0; r < l.total_rows; r++) marked += rowsend_chosen(&rs, a, r);
                    for (int b = 0; b < l.n_layers; b++) counted += rowsend_count(&rs, b, t, allowed);
                    ck_assert_int_eq(marked, counted);
                }
                ck_assert_msg(rowsend_max_age(&rs, t) < S, "S = %d, step %ld: a row is %ld steps old", S, t,
                              rowsend_max_age(&rs, t));
            }
            rowsend_free(&rs);
        }
    /* one row always the largest: the others still go within S steps */
    RowSend rs;
    ck_assert_int_eq(rowsend_init(&rs, &l, 1, 3, ROWSEND_MAGNITUDE), 0);
    for (long t = 0; t < 60; t++) {
        for (int j = 0; j < 16 * 32 + 32 + 32 * 4 + 4; j++) v[j] = j < 17 ? 100.0f : 0.001f; /* row 0 always wins */
        rowsend_choose(&rs, 0, t, 300, v);
        ck_assert_int_lt(rowsend_max_age(&rs, t), 3);
    }
    rowsend_free(&rs);
    free(v);
}
END_TEST

/* Beyond the mandatory rows, the largest mean |v| go first (magnitude), or the oldest
 * (age). S = 40 leaves row t of layer 0 (t < 32) and none of layer 1 mandatory at step t;
 * allowed 808.99... x 2848 / 2304 is 3 rows of layer 0 (216 bytes of its share). */
START_TEST(test_most_important_rows_first)
{
    RowLayout l = small_layout();
    size_t d = 16 * 32 + 32 + 32 * 4 + 4;
    float *v = calloc(d, sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int j = 0; j < 16; j++) {
        v[5 * 16 + j] = 3.0f;  /* row 5 */
        v[9 * 16 + j] = -2.0f; /* row 9 */
        v[1 * 16 + j] = 1.0f;  /* row 1 */
    }
    double allowed = 216.0 * 2848 / 2304 + 1;
    RowSend rs;
    ck_assert_int_eq(rowsend_init(&rs, &l, 1, 40, ROWSEND_MAGNITUDE), 0);
    ck_assert_int_eq(rowsend_count(&rs, 0, 0, allowed), 3);
    rowsend_choose(&rs, 0, 0, allowed, v);
    for (int r = 0; r < 32; r++) ck_assert_int_eq(rowsend_chosen(&rs, 0, r), r == 0 || r == 5 || r == 9);
    /* what was sent leaves the residual and goes into the sum */
    float *sum = calloc(d, sizeof *sum);
    ck_assert_ptr_nonnull(sum);
    rowsend_take(&rs, 0, v, sum);
    ck_assert(sum[5 * 16] == 3.0f && v[5 * 16] == 0.0f && sum[9 * 16 + 15] == -2.0f);
    ck_assert(sum[1 * 16] == 0.0f && v[1 * 16] == 1.0f);
    rowsend_free(&rs);
    /* age: the rows never sent are the oldest, the lowest index first */
    ck_assert_int_eq(rowsend_init(&rs, &l, 1, 40, ROWSEND_AGE), 0);
    rowsend_choose(&rs, 0, 0, allowed, v);
    for (int r = 0; r < 32; r++) ck_assert_int_eq(rowsend_chosen(&rs, 0, r), r <= 2);
    rowsend_choose(&rs, 0, 1, allowed, v);
    for (int r = 0; r < 32; r++) ck_assert_int_eq(rowsend_chosen(&rs, 0, r), r == 1 || r == 3 || r == 4);
    rowsend_free(&rs);
    free(v);
    free(sum);
}
END_TEST

static double step_flops(int batch)
{
    ModelSpec spec = {.arch = MODEL_ARCH_MLP, .n_sizes = 3, .sizes = {16, 32, 4}, .classes = 4, .batch = batch};
    ModelProfile p;
    ck_assert_int_eq(model_profile(&spec, &p), 0);
    return batch * (p.total_flops + p.loss_flops);
}

/* Two agents at 1 GFLOPS with 1 MB/s links and no latency, 64 samples of batch 16: 4
 * steps a round. A step is the gradient (u) then the two messages, each alone on its
 * uplink and the other's downlink: bytes / 1 MB/s. */
static const char *pair_text =
    "[run]\nmethod = rog\nrounds = 2\nmode = timing\n"
    "[method]\nbudget = 1 ms\nstaleness = 4\n"
    "[model]\nlayers = 16,32,4\nbatch = 16\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\n"
    "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 MB/s\nlatency = 0 s\nsamples = 64\n";

START_TEST(test_timing_in_closed_form)
{
    double u = step_flops(16) / 1e9;
    static const struct {
        const char *set;
        double bytes[3]; /* per step, by t mod 3 */
        double extra;    /* share of the 36 rows */
    } cases[] = {
        {"method.budget=1 ms", {928, 928, 928}, 12.0 / 36},
        {"method.budget=0 s", {712, 712, 712}, 9.0 / 36},
        {"method.budget=none", {2848, 2848, 2848}, 1},
    };
    for (int k = 0; k < 3; k++) {
        TestSink ts;
        const char *set[] = {cases[k].set};
        ck_assert_int_eq(run_text(pair_text, set, 1, &ts), 0);
        ck_assert_int_eq(ts.rounds, 2);
        double t = 0;
        for (int step = 0; step < 8; step++) t += u + cases[k].bytes[step % 3] / 1e6;
        ck_assert_msg(fabs(ts.round_rows[1].t_end - t) < 1e-12, "%s: %.17g vs %.17g", cases[k].set,
                      ts.round_rows[1].t_end, t);
        /* each step two messages of that size */
        ck_assert(fabs(ts.round_rows[0].bytes - 4 * 2 * cases[k].bytes[0]) < 1e-9);
        ck_assert(fabs(ts.round_rows[0].extra - cases[k].extra) < 1e-12);
        test_sink_free(&ts);
    }
    /* S = 3 with budget 0: the mandatory rows rotate, 1064, 928, 856 bytes (steps 0..7) */
    const char *set[] = {"method.budget=0 s", "method.staleness=3"};
    TestSink ts;
    ck_assert_int_eq(run_text(pair_text, set, 2, &ts), 0);
    static const double rotate[3] = {1064, 928, 856};
    double t = 0;
    for (int step = 0; step < 8; step++) t += u + rotate[step % 3] / 1e6;
    ck_assert(fabs(ts.round_rows[1].t_end - t) < 1e-12);
    test_sink_free(&ts);
}
END_TEST

/* cut = deadline, on the pair: each agent streams all 2848 bytes and the message is cut at
 * budget. 1 ms at 1 MB/s: 1000 bytes arrive, whole rows floor(1000 x 32 / 2848) = 11 of
 * layer 0 and floor(1000 x 4 / 2848) = 1 of layer 1 (12 of 36); a step lasts u + 1 ms and
 * puts 2 x 1000 bytes on the wire. Budget 0: the floor, every layer's mandatory rows (8
 * and 1 at S = 4: 712 bytes), goes whatever the deadline: u + 712 us, as cut = start's
 * budget 0. Budget none: every row, as cut = start. */
START_TEST(test_deadline_cut_in_closed_form)
{
    double u = step_flops(16) / 1e9;
    static const struct {
        const char *set;
        double step, bytes, extra; /* step's length past u, its wire bytes, share of rows */
    } cases[] = {
        {"method.budget=1 ms", 1e-3, 2 * 1000, 12.0 / 36},
        {"method.budget=0 s", 712e-6, 2 * 712, 9.0 / 36},
        {"method.budget=none", 2848e-6, 2 * 2848, 1},
    };
    for (int k = 0; k < 3; k++) {
        TestSink ts, start;
        const char *set[] = {cases[k].set, "method.cut=deadline"};
        ck_assert_int_eq(run_text(pair_text, set, 2, &ts), 0);
        ck_assert_int_eq(ts.rounds, 2);
        double t = 8 * (u + cases[k].step);
        ck_assert_msg(fabs(ts.round_rows[1].t_end - t) < 1e-12, "%s: %.17g vs %.17g", cases[k].set,
                      ts.round_rows[1].t_end, t);
        ck_assert_msg(fabs(ts.round_rows[0].bytes - 4 * cases[k].bytes) < 1e-6, "%s: bytes %.17g", cases[k].set,
                      ts.round_rows[0].bytes);
        ck_assert(fabs(ts.round_rows[0].extra - cases[k].extra) < 1e-12);
        ck_assert_int_eq(run_text(pair_text, set, 1, &start), 0);
        if (k > 0) /* budget 0 and none: what cut = start does */
            ck_assert(start.round_rows[1].t_end == ts.round_rows[1].t_end);
        test_sink_free(&ts);
        test_sink_free(&start);
    }
}
END_TEST

/* exchange = ps on the pair: agent 0 is the server, its own rows need no link; agent 1
 * pushes its rows to it, and once they are in pulls the rows of the server's model back
 * over the same links: a step is u + push + pull. cut = start, 1 ms at 1 MB/s: 928 bytes
 * each way (12 of 36 rows); cut = deadline: each way cut at 1 ms, 1000 bytes on the wire;
 * budget none: 2848 each way. rounds.extra: the share of rows agent 1 pushed. */
START_TEST(test_ps_in_closed_form)
{
    double u = step_flops(16) / 1e9;
    static const struct {
        const char *budget, *cut;
        double way, extra; /* bytes each way per step, share of rows */
    } cases[] = {
        {"method.budget=1 ms", "method.cut=start", 928, 12.0 / 36},
        {"method.budget=1 ms", "method.cut=deadline", 1000, 12.0 / 36},
        {"method.budget=0 s", "method.cut=deadline", 712, 9.0 / 36},
        {"method.budget=none", "method.cut=start", 2848, 1},
    };
    for (int k = 0; k < 4; k++) {
        TestSink ts;
        const char *set[] = {cases[k].budget, cases[k].cut, "method.exchange=ps"};
        ck_assert_int_eq(run_text(pair_text, set, 3, &ts), 0);
        ck_assert_int_eq(ts.rounds, 2);
        double t = 8 * (u + 2 * cases[k].way / 1e6);
        ck_assert_msg(fabs(ts.round_rows[1].t_end - t) < 1e-12, "%s %s: %.17g vs %.17g", cases[k].budget,
                      cases[k].cut, ts.round_rows[1].t_end, t);
        ck_assert_msg(fabs(ts.round_rows[0].bytes - 4 * 2 * cases[k].way) < 1e-6, "%s %s: bytes %.17g",
                      cases[k].budget, cases[k].cut, ts.round_rows[0].bytes);
        ck_assert(fabs(ts.round_rows[0].extra - cases[k].extra) < 1e-12);
        test_sink_free(&ts);
    }
}
END_TEST

/* One way of a ps step on the pair under loss (cut = deadline, budget 1 ms at 1 MB/s, no
 * latency): the first attempt is cut at 1 ms with 1000 bytes (12 of 36 rows); every
 * attempt draws u from the sender's stream, u < q loses it; retransmit: rto later, past
 * the deadline, only the floor (the 9 mandatory rows, 712 bytes) goes; drop: the receiver
 * hears rto after the lost attempt, no row. Returns the way's time; rows, wire bytes and
 * lost attempts through the pointers. */
static double ps_way(gsl_rng *stream, double q, double rto, int drop, int *rows, double *wire, int *lost)
{
    double t = 1e-3;
    *wire += 1000;
    *rows = 12;
    while (gsl_rng_uniform(stream) < q) {
        ++*lost;
        if (drop) {
            *rows = 0;
            return t + rto;
        }
        t += rto + 712e-6;
        *wire += 712;
        *rows = 9;
    }
    return t;
}

START_TEST(test_loss_replayed_on_the_pair)
{
    /* p = 0.2 at both ends: q = 0.36; rto 10 ms. Agent 1 pushes (its stream, node 1), the
     * server pulls back (node 0's); a step is u + push + pull; rounds.extra is the mean
     * share of rows agent 1's pushes delivered */
    double u = step_flops(16) / 1e9, q = 1 - 0.8 * 0.8, rto = 0.01;
    for (int drop = 0; drop < 2; drop++) {
        const char *set[] = {"method.budget=1 ms", "method.cut=deadline", "method.exchange=ps", "agents.loss=0.2",
                             "network.rto=10 ms", drop ? "network.loss_mode=drop" : "network.loss_mode=retransmit",
                             "run.rounds=6"};
        TestSink ts;
        ck_assert_int_eq(run_text(pair_text, set, 7, &ts), 0);
        ck_assert_int_eq(ts.rounds, 6);
        gsl_rng *server = rng_stream_create(1, 0, RNG_PURPOSE_LOSS), *worker = rng_stream_create(1, 1, RNG_PURPOSE_LOSS);
        double t = 0;
        int total_lost = 0, cut_rows = 0, floor_rows = 0, no_rows = 0;
        for (int r = 0; r < 6; r++) {
            double wire = 0, share = 0;
            int lost = 0;
            for (int step = 0; step < 4; step++) {
                int push_rows, pull_rows;
                t += u + ps_way(worker, q, rto, drop, &push_rows, &wire, &lost);
                t += ps_way(server, q, rto, drop, &pull_rows, &wire, &lost);
                if (push_rows) share += push_rows / 36.0;
                cut_rows += push_rows == 12;
                floor_rows += push_rows == 9;
                no_rows += push_rows == 0;
            }
            ck_assert_msg(fabs(ts.round_rows[r].t_end - t) < 1e-9, "drop %d round %d: %.17g, expected %.17g", drop, r,
                          ts.round_rows[r].t_end, t);
            ck_assert_msg(fabs(ts.round_rows[r].bytes - wire) < 1e-6, "drop %d round %d: %.17g bytes, expected %.17g",
                          drop, r, ts.round_rows[r].bytes, wire);
            ck_assert_int_eq(ts.round_rows[r].lost, lost);
            ck_assert_msg(fabs(ts.round_rows[r].extra - share / 4) < 1e-12, "drop %d round %d: extra %.17g, expected %.17g",
                          drop, r, ts.round_rows[r].extra, share / 4);
            total_lost += lost;
        }
        /* the sequence lost pushes: after the deadline (retransmit) or for good (drop) */
        ck_assert_int_gt(cut_rows, 0);
        ck_assert_int_gt(drop ? no_rows : floor_rows, 0);
        ck_assert_int_gt(total_lost, 5);
        gsl_rng_free(server);
        gsl_rng_free(worker);
        test_sink_free(&ts);
    }
}
END_TEST

/* Four agents learning a separable synthetic task with ROG (train mode). */
static const char *learn_text =
    "[run]\nmethod = rog\nrounds = 8\nmode = train\n"
    "[method]\nbudget = 2 ms\nstaleness = 4\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 1600\ntest_samples = 400\n"
    "separation = 3\n"
    "[model]\nlayers = 16,32,4\nbatch = 16\noptimizer = sgd\nlr = 0.05\n"
    "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 1 MB/s\nlatency = 1 ms\n";

/* Runs learn_text under set[0..n-1] twice in train mode (the last entry, run.mode=timing,
 * left out) and once in timing mode: the two train runs repeat bit for bit, and every round
 * of the train run ends, sends and shares its rows (extra) as in the timing run, and loses
 * as many attempts. Returns the first train run (the caller frees it). */
static TestSink rog_train_equals_timing(const char *const *set, int n, int k)
{
    TestSink a, b, timing;
    ck_assert_int_eq(run_text(learn_text, set, n - 1, &a), 0);
    ck_assert_int_eq(run_text(learn_text, set, n - 1, &b), 0);
    ck_assert_str_eq(a.text, b.text);
    ck_assert_int_eq(run_text(learn_text, set, n, &timing), 0);
    ck_assert_int_eq(a.rounds, timing.rounds);
    for (int r = 0; r < a.rounds; r++)
        ck_assert_msg(a.round_rows[r].t_end == timing.round_rows[r].t_end &&
                          a.round_rows[r].bytes == timing.round_rows[r].bytes &&
                          a.round_rows[r].extra == timing.round_rows[r].extra &&
                          a.round_rows[r].lost == timing.round_rows[r].lost,
                      "case %d round %d", k, r);
    test_sink_free(&b);
    test_sink_free(&timing);
    return a;
}

/* A bandwidth that changes every 20 ms between 0.2 and 2 MB/s, different for each agent:
 * train and timing give the same clock and bytes, and train runs repeat bit for bit. */
START_TEST(test_train_equals_timing_under_a_trace)
{
    char path[64], set_trace[128];
    snprintf(path, sizeof path, "/tmp/hetsim-rog-%d.csv", (int)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("agent,time,value\n", f);
    for (int a = 0; a < 4; a++)
        for (int k = 0; k < 200; k++) fprintf(f, "%d,%g s,%g MB/s\n", a, 0.02 * k, 0.2 + 1.8 * ((k * 7 + a * 3) % 5) / 4);
    fclose(f);
    snprintf(set_trace, sizeof set_trace, "agents.bandwidth=trace(%s)", path);
    static const char *const importance[] = {"method.importance=magnitude", "method.importance=age"};
    for (int k = 0; k < 8; k++) { /* k & 2: cut = deadline; k & 4: exchange = ps */
        const char *set[] = {set_trace, importance[k % 2], k & 2 ? "method.cut=deadline" : "method.cut=start",
                             k & 4 ? "method.exchange=ps" : "method.exchange=gather", "run.mode=timing"};
        TestSink a = rog_train_equals_timing(set, 5, k);
        /* the share of rows follows the bandwidth: below 1 and not the same every round */
        ck_assert(a.round_rows[0].extra < 1);
        test_sink_free(&a);
    }
    unlink(path);
}
END_TEST

/* Under loss, for every cut and exchange (gather: retransmit only): train times exactly
 * like timing, runs repeat bit for bit, attempts are lost, and it learns. */
START_TEST(test_loss_train_equals_timing)
{
    for (int k = 0; k < 6; k++) { /* k & 1: cut = deadline; k / 2: gather, ps, ps under drop */
        const char *set[] = {"agents.loss=0.1", "network.rto=5 ms", k & 1 ? "method.cut=deadline" : "method.cut=start",
                             k >= 2 ? "method.exchange=ps" : "method.exchange=gather",
                             k >= 4 ? "network.loss_mode=drop" : "network.loss_mode=retransmit", "run.mode=timing"};
        TestSink a = rog_train_equals_timing(set, 6, k);
        int lost = 0;
        for (int r = 0; r < a.rounds; r++) lost += a.round_rows[r].lost;
        ck_assert_int_gt(lost, 0);
        double accuracy = test_sink_last_accuracy(&a);
        ck_assert_msg(accuracy > 0.6, "case %d reached %.3f", k, accuracy);
        test_sink_free(&a);
    }
    /* drop under the all-gather: refused, naming the key */
    const char *set[] = {"agents.loss=0.1", "network.loss_mode=drop"};
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(learn_text, set, 2, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "--set network.loss_mode=drop") != NULL &&
                      strstr(diag.message, "exchange = gather") != NULL,
                  "%s", diag.message);
}
END_TEST

/* The CNN's rows (conv output channels, linear units) in a run: train times like timing,
 * a quarter of the rows at 2 ms x 1 MB/s. */
START_TEST(test_cnn_rows_train_equals_timing)
{
    static const char *cnn =
        "[run]\nmethod = rog\nrounds = 2\nmode = train\n"
        "[method]\nbudget = 2 ms\nstaleness = 4\n"
        "[model]\narch = cnn\nbatch = 16\nlr = 0.05\n"
        "[data]\ndataset = synthetic\nchannels = 1\nheight = 8\nwidth = 8\nclasses = 4\ntrain_samples = 400\n"
        "test_samples = 100\n"
        "[agents]\ncount = 3\ncompute = 1 GFLOPS\nbandwidth = 1 MB/s\nlatency = 1 ms\n";
    const char *timing[] = {"run.mode=timing"};
    TestSink a, b;
    ck_assert_int_eq(run_text(cnn, NULL, 0, &a), 0);
    ck_assert_int_eq(run_text(cnn, timing, 1, &b), 0);
    ck_assert_int_eq(a.rounds, 2);
    for (int r = 0; r < 2; r++)
        ck_assert(a.round_rows[r].t_end == b.round_rows[r].t_end && a.round_rows[r].bytes == b.round_rows[r].bytes);
    ck_assert(a.round_rows[0].extra > 0 && a.round_rows[0].extra < 1);
    test_sink_free(&a);
    test_sink_free(&b);
}
END_TEST

/* A third of the rows each step (budget 1 ms at 1 MB/s: 12 of 36 rows) still learns the
 * four classes, close to every row every step; chance is 0.25. */
START_TEST(test_learns_with_a_third_of_the_rows)
{
    const char *partial[] = {"method.budget=1 ms", "agents.bandwidth=1 MB/s"};
    const char *full[] = {"method.budget=none"};
    TestSink a, b;
    ck_assert_int_eq(run_text(learn_text, partial, 2, &a), 0);
    ck_assert_int_eq(run_text(learn_text, full, 1, &b), 0);
    double pa = test_sink_last_accuracy(&a), pb = test_sink_last_accuracy(&b);
    ck_assert(fabs(a.round_rows[0].extra - 12.0 / 36) < 1e-12);
    ck_assert_msg(pa > 0.6, "partial sends reached %.3f", pa);
    ck_assert_msg(pb > 0.6, "full sends reached %.3f", pb);
    /* and the partial sends cost a third of the bytes */
    ck_assert(a.round_rows[0].bytes < 0.4 * b.round_rows[0].bytes);
    test_sink_free(&a);
    test_sink_free(&b);
    /* a parameter server with a third of the rows each way learns too, and with every row
     * each way its workers hold the server's model exactly: gather's models, bit for bit */
    const char *ps_partial[] = {"method.budget=1 ms", "agents.bandwidth=1 MB/s", "method.exchange=ps",
                                "method.cut=deadline"};
    const char *ps_full[] = {"method.budget=none", "method.exchange=ps"};
    TestSink c, d;
    ck_assert_int_eq(run_text(learn_text, ps_partial, 4, &c), 0);
    ck_assert_int_eq(run_text(learn_text, ps_full, 2, &d), 0);
    double pc = test_sink_last_accuracy(&c);
    ck_assert_msg(pc > 0.6, "ps, partial sends, reached %.3f", pc);
    ck_assert_msg(test_sink_last_accuracy(&d) == pb, "ps, full sends: %.17g, gather %.17g", test_sink_last_accuracy(&d),
                  pb);
    test_sink_free(&c);
    test_sink_free(&d);
}
END_TEST

START_TEST(test_bad_keys_name_their_line)
{
    static const struct {
        const char *set;
        const char *says;
    } cases[] = {
        {"method.staleness=0", "staleness"},
        {"method.budget=-1 ms", "budget"},
        {"method.importance=random", "importance"},
        {"method.cut=never", "cut"},
        {"method.exchange=ring", "exchange"},
        {"agents.batch=uniform(8, 32)", "counting every agent's gradient alike"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        Scenario sc;
        HsDiag diag;
        const char *set[] = {cases[k].set};
        ck_assert_int_eq(test_resolve(pair_text, set, 1, &sc, &diag), HS_E_INPUT);
        ck_assert_msg(strstr(diag.message, cases[k].says) != NULL, "%s: %s", cases[k].set, diag.message);
    }
    /* a value in the file names its line */
    char *text = strdup(pair_text);
    char *at = strstr(text, "staleness = 4");
    at[12] = '0';
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:7") != NULL, "%s", diag.message);
    free(text);
    /* a ResNet has no rows: refused at its arch line */
    static const char *resnet =
        "[run]\nmethod = rog\nrounds = 1\nmode = timing\n"
        "[model]\narch = resnet\ndepth = 8\nbatch = 16\n"
        "[data]\ndataset = synthetic\nchannels = 1\nheight = 8\nwidth = 8\nclasses = 4\n"
        "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 MB/s\nlatency = 0 s\n";
    ck_assert_int_eq(test_resolve(resnet, NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:6") != NULL && strstr(diag.message, "sends rows") != NULL, "%s",
                  diag.message);
    const char *sync[] = {"run.method=sync"};
    ck_assert_int_eq(test_resolve(resnet, sync, 1, &sc, &diag), HS_OK);
}
END_TEST

static Suite *rog_suite(void)
{
    Suite *s = suite_create("rog");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_rows_of_a_model);
    tcase_add_test(tc, test_rows_per_step_by_hand);
    tcase_add_test(tc, test_staleness_bound_holds);
    tcase_add_test(tc, test_most_important_rows_first);
    tcase_add_test(tc, test_timing_in_closed_form);
    tcase_add_test(tc, test_deadline_cut_in_closed_form);
    tcase_add_test(tc, test_ps_in_closed_form);
    tcase_add_test(tc, test_train_equals_timing_under_a_trace);
    tcase_add_test(tc, test_loss_replayed_on_the_pair);
    tcase_add_test(tc, test_loss_train_equals_timing);
    tcase_add_test(tc, test_cnn_rows_train_equals_timing);
    tcase_add_test(tc, test_learns_with_a_third_of_the_rows);
    tcase_add_test(tc, test_bad_keys_name_their_line);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rog_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
