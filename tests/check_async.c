/* check_async.c — the asynchronous methods against stragglers (ripples, divshare, swift):
 * their averaging on hand examples (models/mix.h), a Partial All-Reduce's time in closed
 * form, fragment transfers under max-min sharing in closed form (a slow uplink, a slow
 * downlink: the bottleneck link is busy exactly bytes / capacity), wait-free rounds that
 * last only the slowest agent's computation, and their keys' edges. */
#include "models/mix.h"
#include "models/model_spec.h"
#include "sim/run.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- hand examples ---- */

START_TEST(test_fragment_bounds_cover_the_vector)
{
    size_t b, e;
    /* 10 entries in 4 fragments: 3, 3, 2, 2 */
    mix_fragment_bounds(10, 4, 0, &b, &e);
    ck_assert(b == 0 && e == 3);
    mix_fragment_bounds(10, 4, 1, &b, &e);
    ck_assert(b == 3 && e == 6);
    mix_fragment_bounds(10, 4, 2, &b, &e);
    ck_assert(b == 6 && e == 8);
    mix_fragment_bounds(10, 4, 3, &b, &e);
    ck_assert(b == 8 && e == 10);
    mix_fragment_bounds(7, 1, 0, &b, &e);
    ck_assert(b == 0 && e == 7);
}
END_TEST

START_TEST(test_fragment_average_hand_example)
{
    /* x = [1 2 3 4] in 2 fragments; fragment 0 arrives twice ([3 4], [5 6]), fragment 1
     * never: x = [(1+3+5)/3, (2+4+6)/3, 3, 4] = [3 4 3 4]. Then nothing is pending. */
    float x[4] = {1, 2, 3, 4};
    double sum[4] = {0};
    int count[2] = {0};
    const float a[2] = {3, 4}, b[2] = {5, 6}, c[2] = {10, 20};
    mix_fragment_receive(sum, count, 4, 2, 0, a);
    mix_fragment_receive(sum, count, 4, 2, 0, b);
    ck_assert_int_eq(count[0], 2);
    ck_assert_int_eq(count[1], 0);
    mix_fragment_average(x, sum, count, 4, 2);
    ck_assert(x[0] == 3 && x[1] == 4 && x[2] == 3 && x[3] == 4);
    ck_assert(count[0] == 0 && sum[0] == 0 && sum[1] == 0);
    /* one copy of fragment 1: the plain mean of two */
    mix_fragment_receive(sum, count, 4, 2, 1, c);
    mix_fragment_average(x, sum, count, 4, 2);
    ck_assert(x[0] == 3 && x[1] == 4 && x[2] == 6.5f && x[3] == 12);
    /* an odd length: fragment 1 of 5 entries in 2 is entries 3..4 */
    float y[5] = {0, 0, 0, 2, 2};
    double s5[5] = {0};
    int c5[2] = {0};
    const float d[2] = {4, 8};
    mix_fragment_receive(s5, c5, 5, 2, 1, d);
    mix_fragment_average(y, s5, c5, 5, 2);
    ck_assert(y[0] == 0 && y[2] == 0 && y[3] == 3 && y[4] == 5);
}
END_TEST

START_TEST(test_neighbourhood_average_hand_example)
{
    /* SWIFT on a ring: x_i = 3, neighbours' copies 0 and 6, 9 → (3 + 0 + 6) / 3 = 3;
     * (1 + 2 + 9) / 3 = 4 */
    float x[2] = {3, 1};
    const float left[2] = {0, 2}, right[2] = {6, 9};
    const float *copies[2] = {left, right};
    mix_neighbourhood_average(x, copies, 2, 2);
    ck_assert(x[0] == 3 && x[1] == 4);
    /* no neighbour: unchanged */
    mix_neighbourhood_average(x, copies, 0, 2);
    ck_assert(x[0] == 3 && x[1] == 4);
}
END_TEST

/* ---- whole runs ---- */

/* A test sink that also records every message (the activity hook of maxmin runs). The
 * TestSink comes first, so the sink's context is both. */
typedef struct Messages {
    TestSink ts;
    SinkOps ops;
    int n, cap;
    SinkActivity *rows;
} Messages;

static int messages_activity(void *ctx, int64_t run_id, const SinkActivity *a)
{
    (void)run_id;
    Messages *m = ctx;
    if (a->kind != SINK_ACTIVITY_MESSAGE) return 0;
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        m->rows = realloc(m->rows, (size_t)m->cap * sizeof *m->rows);
        ck_assert_ptr_nonnull(m->rows);
    }
    m->rows[m->n++] = *a;
    return 0;
}

/* Runs text with the overrides; messages (optional) then holds every message. */
static int run_text(const char *text, const char *const *set, int n, Messages *out)
{
    HsDiag diag;
    Scenario sc;
    int status = test_resolve(text, set, n, &sc, &diag);
    if (status != 0) {
        fprintf(stderr, "%s\n", diag.message);
        return status;
    }
    memset(out, 0, sizeof *out);
    Sink sink = test_sink_init(&out->ts);
    out->ops = *sink.ops;
    out->ops.activity = messages_activity;
    sink.ops = &out->ops;
    RunOutcome outcome;
    status = sim_run(&sc, sink, &diag, &outcome);
    if (status != 0) fprintf(stderr, "%s\n", diag.message);
    return status;
}

static void messages_free(Messages *m)
{
    test_sink_free(&m->ts);
    free(m->rows);
}

static double step_flops(int batch, const int *sizes, int n)
{
    ModelSpec spec = {.arch = MODEL_ARCH_MLP, .n_sizes = n, .classes = sizes[n - 1], .batch = batch};
    memcpy(spec.sizes, sizes, (size_t)n * sizeof *sizes);
    ModelProfile p;
    ck_assert_int_eq(model_profile(&spec, &p), 0);
    return batch * (p.total_flops + p.loss_flops);
}

/* 4 identical agents, 640 samples each = 10 steps of 64 per epoch; 676 parameters. */
static const char *four =
    "[run]\nmethod = ripples\nrounds = 2\nmode = timing\n"
    "[model]\nlayers = 16,32,4\nbatch = 64\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\n"
    "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 100 kB/s\nlatency = 10 ms\nsamples = 640\n";

/* Static schedule, G = 2 (or 4): every iteration each agent computes, then its group's
 * ring all-reduce of the model, 2(G-1) steps of B/G over 100 kB/s links with 10 ms of
 * latency each; the groups are disjoint, so every ring is alone on its links. */
START_TEST(test_partial_allreduce_closed_form)
{
    int sizes[] = {16, 32, 4};
    double f = step_flops(64, sizes, 3), bytes = 4.0 * 676;
    const char *models[] = {"network.model=maxmin", "network.model=fifo"};
    const char *groups[] = {"method.group_size=2", "method.group_size=4"};
    for (int m = 0; m < 2; m++)
        for (int g = 0; g < 2; g++) {
            const char *set[] = {"method.schedule=static", models[m], groups[g]};
            Messages run;
            ck_assert_int_eq(run_text(four, set, 3, &run), 0);
            int G = g == 0 ? 2 : 4;
            double reduce = 2.0 * (G - 1) * (bytes / G / 100e3 + 0.010);
            /* round r ends with the (r+1)·10-th step, before that step's P-Reduce */
            double first = 10 * f / 1e9 + 9 * reduce, second = 20 * f / 1e9 + 19 * reduce;
            ck_assert_int_eq(run.ts.rounds, 2);
            ck_assert_msg(fabs(run.ts.round_rows[0].t_end - first) < 1e-9 * first, "%s G=%d: %.9f vs %.9f",
                          models[m], G, run.ts.round_rows[0].t_end, first);
            ck_assert(fabs(run.ts.round_rows[1].t_end - second) < 1e-9 * second);
            ck_assert(run.ts.round_rows[0].extra == 0.9); /* 9 P-Reduces in 10 steps */
            ck_assert(run.ts.round_rows[1].extra == 1.0);
            messages_free(&run);
        }
}
END_TEST

/* The bottleneck link of a set of flows is busy exactly bytes / capacity: the measure of
 * the union of their transfer intervals times the capacity is their bytes. */
static void check_busy(const Messages *m, int sender, int receiver, double capacity, int *count)
{
    double bytes = 0, busy = 0, until = -INFINITY;
    *count = 0;
    /* activity rows arrive in end order; the intervals of one link's flows, sorted by start */
    int n = 0;
    SinkActivity *rows = malloc((size_t)(m->n ? m->n : 1) * sizeof *rows);
    for (int k = 0; k < m->n; k++)
        if ((sender < 0 || m->rows[k].agent == sender) && (receiver < 0 || m->rows[k].to == receiver) &&
            isfinite(m->rows[k].end))
            rows[n++] = m->rows[k];
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && rows[b - 1].transfer > rows[b].transfer; b--) {
            SinkActivity t = rows[b];
            rows[b] = rows[b - 1];
            rows[b - 1] = t;
        }
    for (int k = 0; k < n; k++) {
        bytes += rows[k].amount;
        double from = rows[k].transfer > until ? rows[k].transfer : until;
        if (rows[k].end > from) busy += rows[k].end - from;
        if (rows[k].end > until) until = rows[k].end;
    }
    free(rows);
    *count = n;
    ck_assert_msg(fabs(busy * capacity - bytes) < 1e-6 * bytes, "busy %.9f s x %.0f B/s vs %.0f B", busy, capacity, bytes);
}

START_TEST(test_fragment_transfers_share_the_bottleneck)
{
    /* Agent 3's uplink (50 kB/s) is the bottleneck of its flows: the others' downlinks are
     * 10 MB/s. In the second run agent 3's downlink (50 kB/s) is the bottleneck of the
     * flows into it: every sender's uplink is 10 MB/s, shared by at most three flows. A
     * snapshot every 2 steps of 0.26 s; a snapshot's 8 messages of 676 B take 0.1 s at
     * 50 kB/s, so every message ends before the next snapshot. */
    const char *text =
        "[run]\nmethod = divshare\nrounds = 2\nmode = timing\n"
        "[model]\nlayers = 16,32,4\nbatch = 64\n"
        "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\n"
        "[method]\nfragments = 4\ndegree = 2\nlocal_steps = 2\n"
        "[agents]\ncount = 4\ncompute = 1 MFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\nsamples = 640\n";
    const char *up[] = {"agents.count=4"};
    Messages run;
    /* agents 0..3: the group [agents.slow] is the last agent, 3 */
    char slow[512];
    snprintf(slow, sizeof slow, "%s[agents.slow]\ncount = 1\nuplink = 50 kB/s\n", text);
    ck_assert_int_eq(run_text(slow, up, 1, &run), 0);
    int count;
    check_busy(&run, 3, -1, 50e3, &count);
    ck_assert_int_ge(count, 2 * 10 / 2 * 8 - 8); /* nearly every message of its 10 snapshots */
    /* Each message carries one fragment (169 parameters). The k messages of agent 3 that
     * start together (one per idle peer) share its uplink equally: each lasts k x 676 B /
     * 50 kB/s — the closed form of max-min sharing of one bottleneck. */
    for (int a = 0; a < run.n; a++) {
        if (run.rows[a].agent != 3 || !isfinite(run.rows[a].end)) continue;
        ck_assert(run.rows[a].amount == 4.0 * 169);
        int k = 0;
        for (int b = 0; b < run.n; b++) k += run.rows[b].agent == 3 && run.rows[b].transfer == run.rows[a].transfer;
        ck_assert_int_ge(k, 1);
        ck_assert_int_le(k, 3);
        double lasts = k * 676.0 / 50e3;
        ck_assert_msg(fabs(run.rows[a].end - run.rows[a].transfer - lasts) < 1e-9, "%d together: %.12f vs %.12f", k,
                      run.rows[a].end - run.rows[a].transfer, lasts);
    }
    messages_free(&run);
    snprintf(slow, sizeof slow, "%s[agents.slow]\ncount = 1\ndownlink = 50 kB/s\n", text);
    ck_assert_int_eq(run_text(slow, up, 1, &run), 0);
    check_busy(&run, -1, 3, 50e3, &count);
    ck_assert_int_gt(count, 4);
    messages_free(&run);
}
END_TEST

/* Wait-free methods: a round lasts the slowest agent's computation, whatever the links. */
START_TEST(test_wait_free_rounds_last_the_slowest_computation)
{
    const char *text =
        "[run]\nmethod = swift\nrounds = 3\nmode = timing\n"
        "[model]\nlayers = 16,32,4\nbatch = 64\n"
        "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\n"
        "[topology]\ngraph = ring\n"
        "[agents]\ncount = 6\ncompute = 1 GFLOPS\nbandwidth = 20 kB/s\nlatency = 50 ms\nsamples = 640\n"
        "[agents.slow]\ncount = 2\ncompute = 200 MFLOPS\n";
    int sizes[] = {16, 32, 4};
    double epoch = 10 * step_flops(64, sizes, 3) / 200e6;
    const char *methods[] = {"run.method=swift", "run.method=divshare"};
    for (int m = 0; m < 2; m++) {
        const char *set[] = {methods[m]};
        Messages run;
        ck_assert_int_eq(run_text(text, set, 1, &run), 0);
        ck_assert_int_eq(run.ts.rounds, 3);
        for (int r = 0; r < 3; r++)
            ck_assert_msg(fabs(run.ts.round_rows[r].t_end - (r + 1) * epoch) < 1e-9 * epoch, "%s round %d: %.9f",
                          methods[m], r, run.ts.round_rows[r].t_end);
        ck_assert_int_gt(run.n, 0); /* and they did communicate */
        messages_free(&run);
    }
}
END_TEST

/* Ripples' group formation: conflicts make random groups cost more P-Reduces per step
 * than Group Division; every schedule is deterministic. */
START_TEST(test_ripples_schedules)
{
    const char *text =
        "[run]\nmethod = ripples\nrounds = 2\nmode = timing\n"
        "[model]\nlayers = 16,32,4\nbatch = 64\n"
        "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\n"
        "[agents]\ncount = 9\ncompute = lognormal(1 GFLOPS, 0.5)\nbandwidth = 1 MB/s\nlatency = 1 ms\nsamples = 640\n";
    double extra[3];
    const char *schedules[] = {"method.schedule=random", "method.schedule=division", "method.schedule=static"};
    for (int k = 0; k < 3; k++) {
        const char *set[] = {schedules[k]};
        Messages a, b;
        ck_assert_int_eq(run_text(text, set, 1, &a), 0);
        ck_assert_int_eq(run_text(text, set, 1, &b), 0);
        ck_assert_str_eq(a.ts.text, b.ts.text);
        extra[k] = a.ts.round_rows[1].extra;
        messages_free(&a);
        messages_free(&b);
    }
    ck_assert_msg(extra[0] > extra[1], "random %.3f vs division %.3f", extra[0], extra[1]);
    /* 9 workers in blocks of 3: one P-Reduce per step (round 1; round 0's last step has
     * its P-Reduce in round 1) */
    ck_assert_msg(fabs(extra[2] - 1.0) < 0.1, "static %.3f", extra[2]);
}
END_TEST

static Suite *async_suite(void)
{
    Suite *s = suite_create("async");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fragment_bounds_cover_the_vector);
    tcase_add_test(tc, test_fragment_average_hand_example);
    tcase_add_test(tc, test_neighbourhood_average_hand_example);
    tcase_add_test(tc, test_partial_allreduce_closed_form);
    tcase_add_test(tc, test_fragment_transfers_share_the_bottleneck);
    tcase_add_test(tc, test_wait_free_rounds_last_the_slowest_computation);
    tcase_add_test(tc, test_ripples_schedules);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(async_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
