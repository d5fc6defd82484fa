/* check_network.c — max-min link sharing (sim/kernel/network.c) against hand-computed allocations
 * and against a naive twin (full progressive filling from scratch at every event);
 * closed-form rings against the same rings played hop by hop; the [network] section;
 * whole runs under both models (fifo keeps the goldens, train mode times like timing). */
#include "sim/run.h"
#include "sim/kernel/network.h"
#include "tests/test_files.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a recorder for the hooks ---- */

enum { REC_MAX = 512 };

typedef struct Recorder {
    double done_at[REC_MAX]; /* by payload data */
    int done;
    double active[32];       /* per agent: total active time */
    int idle_calls;
} Recorder;

static void rec_done(void *ctx, const NetworkPayload *p, double t)
{
    Recorder *r = ctx;
    if (p->data >= 0 && p->data < REC_MAX) r->done_at[p->data] = t;
    r->done++;
}

static void rec_active(void *ctx, int agent, double start, double end)
{
    Recorder *r = ctx;
    ck_assert(end > start);
    r->active[agent] += end - start;
}

static double periodic_total(const NetworkPeriodic *p)
{
    /* brute force over the periods: a test twin of the engine's arithmetic */
    double total = 0;
    for (int j = 0; j < p->count; j++)
        for (int i = 0; i < p->n_sub; i++) {
            double a = p->t0 + j * p->period + p->a[i], b = p->t0 + j * p->period + p->b[i];
            if (a < p->from) a = p->from;
            if (b > p->to) b = p->to;
            if (b > a) total += b - a;
        }
    return total;
}

static void rec_periodic(void *ctx, int agent, const NetworkPeriodic *p)
{
    Recorder *r = ctx;
    r->active[agent] += periodic_total(p);
}

static void rec_idle(void *ctx, int agent, double t)
{
    Recorder *r = ctx;
    r->idle_calls++;
}

static Network *make_net(int n, const double *up, const double *down, const double *lat, double backbone,
                         Recorder *rec)
{
    memset(rec, 0, sizeof *rec);
    for (int i = 0; i < REC_MAX; i++) rec->done_at[i] = NAN;
    NetworkOptions o = {.n_agents = n, .uplink = up, .downlink = down, .latency = lat, .backbone = backbone,
                        .latency_factor = 1, .bandwidth_factor = 1};
    NetworkHooks h = {.ctx = rec, .done = rec_done, .active = rec_active, .active_periodic = rec_periodic,
                      .sender_idle = rec_idle};
    Network *net = network_create(&o, &h);
    ck_assert_ptr_nonnull(net);
    return net;
}

/* Runs the network until nothing is left, returns the last time. */
static double drain(Network *net)
{
    double t = 0, last = 0;
    while (network_next_time(net, &t) == 0 && t < INFINITY) {
        ck_assert_int_eq(network_advance(net, t), 0);
        last = t;
    }
    network_flush_activity(net, last);
    return last;
}

static NetworkPayload tag(int data)
{
    return (NetworkPayload){.kind = 100, .agent = 0, .data = data};
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

START_TEST(test_single_flow_latency_then_bytes)
{
    double up[] = {10, 10}, down[] = {10, 4}, lat[] = {0.5, 0.25};
    Recorder rec;
    Network *net = make_net(2, up, down, lat, INFINITY, &rec);
    ck_assert_int_eq(network_send(net, 1.0, 0, 1, 8, tag(0)), 0);
    drain(net);
    /* latency max(0.5, 0.25), then 8 bytes at min(10, 4) */
    ck_assert(close_to(rec.done_at[0], 1.0 + 0.5 + 2.0));
    ck_assert(close_to(rec.active[0], 2.0) && close_to(rec.active[1], 2.0));
    ck_assert_int_eq(rec.idle_calls, 1);
    network_free(net);
}
END_TEST

START_TEST(test_fan_in_shares_the_downlink)
{
    /* three senders into one 9 B/s downlink: 3 each; the 3-byte flow ends at 1, then the
     * other two get 4.5 each */
    double up[] = {100, 100, 100, 100}, down[] = {100, 100, 100, 9}, lat[] = {0, 0, 0, 0};
    Recorder rec;
    Network *net = make_net(4, up, down, lat, INFINITY, &rec);
    network_send(net, 0, 0, 3, 3, tag(0));
    network_send(net, 0, 1, 3, 12, tag(1));
    network_send(net, 0, 2, 3, 12, tag(2));
    drain(net);
    ck_assert(close_to(rec.done_at[0], 1.0));
    ck_assert(close_to(rec.done_at[1], 1.0 + 9.0 / 4.5));
    ck_assert(close_to(rec.done_at[2], rec.done_at[1]));
    ck_assert(close_to(rec.active[3], 3.0)); /* the receiver is busy until the last byte */
    network_free(net);
}
END_TEST

START_TEST(test_progressive_filling_textbook)
{
    /* A: 0->2, B: 1->2, C: 1->3; up1 = 4 binds B and C at 2, then A takes the 8 left on
     * down2 (its uplink allows 10) */
    double up[] = {10, 4, 100, 100}, down[] = {100, 100, 10, 10}, lat[] = {0, 0, 0, 0};
    Recorder rec;
    Network *net = make_net(4, up, down, lat, INFINITY, &rec);
    network_send(net, 0, 0, 2, 80, tag(0));
    network_send(net, 0, 1, 2, 20, tag(1));
    network_send(net, 0, 1, 3, 20, tag(2));
    drain(net);
    ck_assert(close_to(rec.done_at[1], 10.0));
    ck_assert(close_to(rec.done_at[2], 10.0));
    ck_assert(close_to(rec.done_at[0], 10.0));
    network_free(net);
}
END_TEST

START_TEST(test_backbone_and_uplink_fifo)
{
    double up[] = {10, 10, 10, 10}, down[] = {10, 10, 10, 10}, lat[] = {0, 0, 0, 0};
    Recorder rec;
    Network *net = make_net(4, up, down, lat, 10, &rec); /* two pairs share a 10 B/s backbone */
    network_send(net, 0, 0, 1, 10, tag(0));
    network_send(net, 0, 2, 3, 10, tag(1));
    drain(net);
    ck_assert(close_to(rec.done_at[0], 2.0) && close_to(rec.done_at[1], 2.0));
    network_free(net);

    /* uplink = fifo: one message at a time, each paying its latency */
    double lat2[] = {1, 1, 0, 0};
    memset(&rec, 0, sizeof rec);
    NetworkOptions o = {.n_agents = 4, .uplink = up, .downlink = down, .latency = lat2, .backbone = INFINITY,
                        .uplink_fifo = 1, .latency_factor = 1, .bandwidth_factor = 1};
    NetworkHooks h = {.ctx = &rec, .done = rec_done, .active = rec_active, .active_periodic = rec_periodic};
    net = network_create(&o, &h);
    network_send(net, 0, 0, 1, 10, tag(0));
    network_send(net, 0, 0, 2, 10, tag(1));
    ck_assert_int_eq(network_outgoing(net, 0), 2);
    drain(net);
    ck_assert(close_to(rec.done_at[0], 2.0) && close_to(rec.done_at[1], 4.0));
    ck_assert_int_eq(network_outgoing(net, 0), 0);
    network_free(net);
}
END_TEST

/* A message's endpoints and latency are read from its links and the agents' latencies
 * (NetFlow keeps neither): a queued message pays the latency of its own receiver, scaled,
 * and the trace hook names both ends. By hand, uplink fifo, latency factor 2, a backbone:
 * 0 -> 1 waits 2 x max(0, 2) = 4 s and sends 10 B at 10 B/s (ends at 5); 0 -> 2 queued
 * behind it waits 2 x max(0, 5) = 10 s from 5 and ends at 16. */
typedef struct TraceRec {
    int n;
    int from[4], to[4];
    double start[4], transfer[4], end[4];
} TraceRec;

static void rec_traced(void *ctx, int from, int to, double bytes, double start, double transfer, double end)
{
    TraceRec *r = ctx;
    (void)bytes;
    ck_assert_int_lt(r->n, 4);
    r->from[r->n] = from, r->to[r->n] = to;
    r->start[r->n] = start, r->transfer[r->n] = transfer, r->end[r->n] = end;
    r->n++;
}

START_TEST(test_queued_message_waits_its_own_latency)
{
    double up[] = {10, 10, 10}, down[] = {10, 10, 10}, lat[] = {0, 2, 5};
    TraceRec rec = {0};
    NetworkOptions o = {.n_agents = 3, .uplink = up, .downlink = down, .latency = lat, .backbone = 100,
                        .uplink_fifo = 1, .latency_factor = 2, .bandwidth_factor = 1};
    NetworkHooks h = {.ctx = &rec, .traced = rec_traced};
    Network *net = network_create(&o, &h);
    ck_assert_ptr_nonnull(net);
    ck_assert_int_eq(network_send(net, 0, 0, 1, 10, tag(0)), 0);
    ck_assert_int_eq(network_send(net, 0, 0, 2, 10, tag(1)), 0);
    drain(net);
    ck_assert_int_eq(rec.n, 2);
    ck_assert(rec.from[0] == 0 && rec.to[0] == 1 && rec.from[1] == 0 && rec.to[1] == 2);
    ck_assert(close_to(rec.start[0], 0) && close_to(rec.transfer[0], 4) && close_to(rec.end[0], 5));
    ck_assert(close_to(rec.start[1], 5) && close_to(rec.transfer[1], 15) && close_to(rec.end[1], 16));
    network_free(net);
}
END_TEST

START_TEST(test_backbone_slot_follows_a_moved_entry)
{
    /* Three messages 0->3, 1->4, 2->5 over a backbone of 30 (every up and down link 100):
     * 10 each there. A (10 bytes) ends at 1 and leaves the backbone's first slot, which the
     * last entry (C) takes: its slot there (kept beside the flow, network.c's flow_slot)
     * must follow. B and C then have 15 each: B (20 bytes, 10 left) ends at 1 + 10/15, C
     * (30 bytes, 20 left at 1, 10 left then) alone at 30 ends 1/3 later, at 2. A slot that
     * did not follow removes B's entry for C's at B's end: network_check finds it, and C
     * ends elsewhere. */
    double up[] = {100, 100, 100, 100, 100, 100}, down[] = {100, 100, 100, 100, 100, 100}, lat[6] = {0};
    Recorder rec;
    memset(&rec, 0, sizeof rec);
    NetworkOptions o = {.n_agents = 6, .uplink = up, .downlink = down, .latency = lat, .backbone = 30,
                        .latency_factor = 1, .bandwidth_factor = 1};
    NetworkHooks h = {.ctx = &rec, .done = rec_done};
    Network *net = network_create(&o, &h);
    ck_assert_ptr_nonnull(net);
    ck_assert_int_eq(network_send(net, 0, 0, 3, 10, tag(0)), 0);
    ck_assert_int_eq(network_send(net, 0, 1, 4, 20, tag(1)), 0);
    ck_assert_int_eq(network_send(net, 0, 2, 5, 30, tag(2)), 0);
    double t = 0;
    while (network_next_time(net, &t) == 0 && t < INFINITY) {
        ck_assert_int_eq(network_advance(net, t), 0);
        ck_assert_int_eq(network_next_time(net, &(double){0}), 0);
        char why[256];
        ck_assert_msg(network_check(net, 1e-12, why, sizeof why) == 0, "at %g: %s", t, why);
    }
    ck_assert_int_eq(rec.done, 3);
    ck_assert(close_to(rec.done_at[0], 1));
    ck_assert(close_to(rec.done_at[1], 1 + 10.0 / 15));
    ck_assert(close_to(rec.done_at[2], 2));
    network_free(net);
}
END_TEST

START_TEST(test_weighted_shares)
{
    /* weight_s: weights 1 / (latency + S/up + S/down); two flows into one downlink */
    double up[] = {100, 50, 100}, down[] = {100, 100, 10}, lat[] = {0.1, 0.1, 0.1};
    Recorder rec;
    memset(&rec, 0, sizeof rec);
    NetworkOptions o = {.n_agents = 3, .uplink = up, .downlink = down, .latency = lat, .backbone = INFINITY,
                        .latency_factor = 1, .bandwidth_factor = 1, .weight_s = 10};
    NetworkHooks h = {.ctx = &rec, .done = rec_done};
    Network *net = network_create(&o, &h);
    network_send(net, 0, 0, 2, 1000, tag(0));
    network_send(net, 0, 1, 2, 1000, tag(1));
    network_next_time(net, &(double){0});
    ck_assert_int_eq(network_advance(net, 0.1), 0);
    double t;
    network_next_time(net, &t);
    double w0 = 1 / (0.1 + 10.0 / 100 + 10.0 / 10), w1 = 1 / (0.1 + 10.0 / 50 + 10.0 / 10);
    double r0 = 10 * w0 / (w0 + w1);
    ck_assert(close_to(t, 0.1 + 1000 / r0)); /* the heavier flow ends first */
    network_free(net);
}
END_TEST

/* Runs the network's own checker; fails the test with its reason. */
static void expect_checked(const Network *net, const char *where, int trial)
{
    char why[256];
    ck_assert_msg(network_check(net, 1e-6, why, sizeof why) == 0, "%s, trial %d: %s", where, trial, why);
}

/* ---- the naive twin: full progressive filling from scratch at every event ---- */

typedef struct NaiveFlow {
    int src, dst;
    double start, latency, left, rate, end, weight;
} NaiveFlow;

static void naive_rates(NaiveFlow *f, int nf, const double *cap, int n_links, int n, int backbone, double now)
{
    int frozen[256] = {0};
    double residual[64];
    for (int l = 0; l < n_links; l++) residual[l] = cap[l];
    for (int i = 0; i < nf; i++) {
        f[i].rate = 0;
        frozen[i] = !(f[i].start + f[i].latency <= now && isnan(f[i].end));
    }
    for (;;) {
        double best = INFINITY;
        int best_link = -1;
        for (int l = 0; l < n_links; l++) {
            double weights = 0;
            for (int i = 0; i < nf; i++)
                if (!frozen[i] && (f[i].src == l || n + f[i].dst == l || (backbone && l == 2 * n))) weights += f[i].weight;
            if (weights > 0 && residual[l] / weights < best) best = residual[l] / weights, best_link = l;
        }
        if (best_link < 0) break;
        for (int i = 0; i < nf; i++) {
            if (frozen[i]) continue;
            int links[3] = {f[i].src, n + f[i].dst, backbone ? 2 * n : -1};
            if (links[0] != best_link && links[1] != best_link && links[2] != best_link) continue;
            f[i].rate = best * f[i].weight;
            frozen[i] = 1;
            for (int k = 0; k < 3; k++)
                if (links[k] >= 0) residual[links[k]] -= f[i].rate;
        }
    }
}

static void naive_run(NaiveFlow *f, int nf, const double *cap, int n_links, int n, int backbone)
{
    double now = 0;
    for (int i = 0; i < nf; i++) f[i].end = NAN;
    for (;;) {
        naive_rates(f, nf, cap, n_links, n, backbone, now);
        double next = INFINITY;
        for (int i = 0; i < nf; i++) {
            if (!isnan(f[i].end)) continue;
            double active = f[i].start + f[i].latency;
            if (active > now && active < next) next = active;
            if (active <= now && f[i].rate > 0 && now + f[i].left / f[i].rate < next) next = now + f[i].left / f[i].rate;
        }
        if (!(next < INFINITY)) break;
        for (int i = 0; i < nf; i++) {
            if (!isnan(f[i].end) || f[i].start + f[i].latency > now) continue;
            f[i].left -= f[i].rate * (next - now);
            if (f[i].left <= 1e-9 * (1 + f[i].rate)) f[i].end = next;
        }
        now = next;
    }
}

START_TEST(test_incremental_equals_naive_twin)
{
    srand(12345);
    for (int trial = 0; trial < 300; trial++) {
        int n = 2 + rand() % 6, nf = 1 + rand() % 24, backbone = rand() % 4 == 0;
        double weight_s = trial % 3 == 2 ? 5 : 0; /* every third trial: LV08-like weighted shares */
        double up[8], down[8], lat[8], cap[17];
        for (int a = 0; a < n; a++) {
            up[a] = 1 + rand() % 20;
            down[a] = 1 + rand() % 20;
            lat[a] = (rand() % 3) * 0.1;
            cap[a] = up[a];
            cap[n + a] = down[a];
        }
        cap[2 * n] = 5 + rand() % 30;
        NaiveFlow f[32];
        for (int i = 0; i < nf; i++) {
            f[i].src = rand() % n;
            do f[i].dst = rand() % n;
            while (f[i].dst == f[i].src);
            f[i].start = (rand() % 10) * 0.5;
            f[i].latency = lat[f[i].src] > lat[f[i].dst] ? lat[f[i].src] : lat[f[i].dst];
            f[i].left = 1 + rand() % 50;
            double penalty = f[i].latency + weight_s / up[f[i].src] + weight_s / down[f[i].dst] +
                             (backbone ? weight_s / cap[2 * n] : 0);
            f[i].weight = weight_s > 0 && penalty > 0 ? 1 / penalty : 1;
        }
        /* starts in time order for the network */
        int order[32];
        for (int i = 0; i < nf; i++) order[i] = i;
        for (int i = 1; i < nf; i++)
            for (int j = i; j > 0 && f[order[j - 1]].start > f[order[j]].start; j--) {
                int tmp = order[j];
                order[j] = order[j - 1];
                order[j - 1] = tmp;
            }
        /* the network as it is by default, then with every flow held at a link in a group
         * (group_min 1: the shared clock where it may be used) */
        double done_at[2][32];
        for (int mode = 0; mode < 2; mode++) {
            Recorder rec;
            memset(&rec, 0, sizeof rec);
            for (int i = 0; i < REC_MAX; i++) rec.done_at[i] = NAN;
            NetworkOptions o = {.n_agents = n, .uplink = up, .downlink = down, .latency = lat,
                                .backbone = backbone ? cap[2 * n] : INFINITY, .latency_factor = 1,
                                .bandwidth_factor = 1, .weight_s = weight_s, .group_min = mode ? 1 : 0};
            NetworkHooks h = {.ctx = &rec, .done = rec_done, .active = rec_active, .active_periodic = rec_periodic};
            Network *net = network_create(&o, &h);
            int next = 0;
            for (;;) {
                double t;
                ck_assert_int_eq(network_next_time(net, &t), 0);
                expect_checked(net, mode ? "naive twin, groups" : "naive twin", trial);
                if (next < nf && f[order[next]].start <= t) {
                    NaiveFlow *g = &f[order[next]];
                    ck_assert_int_eq(network_send(net, g->start, g->src, g->dst, g->left, tag(order[next])), 0);
                    next++;
                    continue;
                }
                if (!(t < INFINITY)) break;
                ck_assert_int_eq(network_advance(net, t), 0);
            }
            for (int i = 0; i < nf; i++) done_at[mode][i] = rec.done_at[i];
            network_free(net);
        }
        naive_run(f, nf, cap, 2 * n + 1, n, backbone);
        for (int i = 0; i < nf; i++) {
            ck_assert_msg(fabs(done_at[0][i] - f[i].end) < 1e-7 * (1 + f[i].end),
                          "trial %d flow %d: network %.12g, naive %.12g", trial, i, done_at[0][i], f[i].end);
            ck_assert_msg(fabs(done_at[1][i] - done_at[0][i]) <= 1e-12 * done_at[0][i],
                          "trial %d flow %d: with groups %.17g, without %.17g", trial, i, done_at[1][i],
                          done_at[0][i]);
        }
    }
}
END_TEST

/* ---- groups: the shared clock against every flow settled one by one ---- */

typedef struct StepCapacity {
    const double *base; /* (links) */
    double period;
    int with_zero;
} StepCapacity;

/* Each link's capacity steps every period through base x {1, 0.5, 2} (or 0), out of phase;
 * periods are multiples of 1/4, so that the steps fall on exact times. */
static double step_capacity(void *ctx, int link, double t, double *next)
{
    const StepCapacity *c = ctx;
    double k = floor(t / c->period);
    *next = (k + 1) * c->period;
    static const double factor[4] = {1, 0.5, 2, 0};
    return c->base[link] * factor[((long)k + link) % (c->with_zero ? 4 : 3)];
}

typedef struct Start {
    double at, bytes;
    int src, dst; /* dst < 0: a ring of the agents src..src+2 */
} Start;

/* Plays the starts on a network with these options; done_at[i] = when start i ended.
 * Checks the allocation after every step. */
static void play_starts(NetworkOptions o, const Start *starts, int n_starts, double *done_at, int trial,
                        NetworkStats *stats)
{
    Recorder rec;
    memset(&rec, 0, sizeof rec);
    for (int i = 0; i < REC_MAX; i++) rec.done_at[i] = NAN;
    NetworkHooks h = {.ctx = &rec, .done = rec_done, .active = rec_active, .active_periodic = rec_periodic};
    Network *net = network_create(&o, &h);
    ck_assert_ptr_nonnull(net);
    int next = 0;
    for (;;) {
        double t;
        ck_assert_int_eq(network_next_time(net, &t), 0);
        expect_checked(net, o.group_min < 0 ? "no groups" : o.group_min == 0 ? "default" : "groups", trial);
        if (next < n_starts && starts[next].at <= t) {
            const Start *st = &starts[next];
            if (st->dst >= 0) {
                ck_assert_int_eq(network_send(net, st->at, st->src, st->dst, st->bytes, tag(next)), 0);
            } else {
                int members[3] = {st->src, st->src + 1, st->src + 2};
                ck_assert_int_eq(network_ring_start(net, st->at, members, 3, st->bytes, tag(next)), 0);
            }
            next++;
            continue;
        }
        if (!(t < INFINITY)) break;
        ck_assert_int_eq(network_advance(net, t), 0);
    }
    for (int i = 0; i < n_starts; i++) done_at[i] = rec.done_at[i];
    network_stats(net, stats);
    network_free(net);
}

START_TEST(test_groups_equal_single_flows)
{
    /* hubs (agents 0 and 1) that many flows enter and leave, uplinks slow enough to limit
     * some of them, flows sent together, several per sender, backbones, weights, a factor,
     * an uplink queue, capacities that step (to 0 too), rings; with a group wherever one
     * may form (group_min 1 and 3) against none: the same finish times within 1e-12 relative,
     * and the default (no group below 64 flows) bit for bit */
    srand(4242);
    NetworkStats total = {0};
    double worst = 0;
    int bitwise = 0;
    for (int trial = 0; trial < 240; trial++) {
        int n = 4 + rand() % 20, n_starts = 10 + rand() % 180;
        double up[24], down[24], lat[24], base[49];
        for (int a = 0; a < n; a++) {
            up[a] = 1 + rand() % 40;
            down[a] = 1 + rand() % 40;
            lat[a] = (rand() % 3) * 0.05;
        }
        for (int a = 0; a < 2; a++) up[a] = 20 + rand() % 80, down[a] = 20 + rand() % 80;
        double backbone = rand() % 4 == 0 ? 30 + rand() % 100 : INFINITY;
        for (int a = 0; a < n; a++) base[a] = up[a], base[n + a] = down[a];
        base[2 * n] = backbone;
        StepCapacity steps = {.base = base, .period = 0.25 * (2 + rand() % 4), .with_zero = rand() % 3 == 0};
        NetworkOptions o = {.n_agents = n, .uplink = up, .downlink = down, .latency = lat, .backbone = backbone,
                            .uplink_fifo = rand() % 7 == 0, .latency_factor = 1,
                            .bandwidth_factor = rand() % 4 == 0 ? 0.97 : 1,
                            .weight_s = rand() % 4 == 0 ? 5 : 0,
                            .capacity = rand() % 4 == 0 ? step_capacity : NULL, .capacity_ctx = &steps};
        if (o.weight_s > 0) steps.with_zero = 0; /* a flow started on a link at 0 would weigh 0 */
        Start starts[200];
        for (int i = 0; i < n_starts; i++) {
            Start *st = &starts[i];
            int kind = rand() % 10;
            st->src = rand() % n;
            st->dst = kind < 6 ? rand() % 2 : rand() % n; /* mostly into a hub */
            if (kind == 6 || kind == 7) st->src = rand() % 2, st->dst = rand() % n; /* out of a hub */
            if (st->dst == st->src) st->dst = (st->src + 1) % n;
            if (kind == 9 && rand() % 4 == 0) st->src = rand() % (n - 2), st->dst = -1;
            st->at = (rand() % 40) * 0.25;
            st->bytes = 1 + rand() % 60;
        }
        for (int i = 1; i < n_starts; i++) /* in time order */
            for (int j = i; j > 0 && starts[j - 1].at > starts[j].at; j--) {
                Start tmp = starts[j];
                starts[j] = starts[j - 1];
                starts[j - 1] = tmp;
            }
        double single[200], grouped[200];
        NetworkStats stats;
        o.group_min = -1;
        play_starts(o, starts, n_starts, single, trial, &stats);
        o.group_min = 0;
        play_starts(o, starts, n_starts, grouped, trial, &stats);
        for (int i = 0; i < n_starts && stats.groups == 0; i++)
            ck_assert_msg(grouped[i] == single[i] || (isnan(grouped[i]) && isnan(single[i])),
                          "trial %d start %d: default %.17g, without groups %.17g", trial, i, grouped[i], single[i]);
        bitwise += stats.groups == 0;
        for (int group_min = 1; group_min <= 3; group_min += 2) {
            o.group_min = group_min;
            play_starts(o, starts, n_starts, grouped, trial, &stats);
            total.groups += stats.groups;
            total.joined += stats.joined;
            total.detached += stats.detached;
            for (int i = 0; i < n_starts; i++) {
                /* a link at 0 turns a rounding of the bytes left at the step into a whole
                 * period: there the allocation is checked, not the times */
                if (o.capacity && steps.with_zero) break;
                double d = fabs(grouped[i] - single[i]) / (single[i] > 1 ? single[i] : 1);
                ck_assert_msg(d <= 1e-12 || (isinf(grouped[i]) && isinf(single[i])),
                              "trial %d start %d (group_min %d): with groups %.17g, without %.17g", trial, i,
                              group_min, grouped[i], single[i]);
                if (d > worst) worst = d;
            }
        }
    }
    /* every path was taken */
    ck_assert(total.groups > 1000 && total.joined > 10000 && total.detached > 100 && bitwise > 200);
    fprintf(stderr, "groups: %llu formed, %llu joins, %llu turned back; largest relative difference %.3g; %d bitwise\n",
            (unsigned long long)total.groups, (unsigned long long)total.joined, (unsigned long long)total.detached,
            worst, bitwise);
}
END_TEST

/* ---- rings ---- */

static double ring_run(int n, const double *up, const double *down, const double *lat, double backbone,
                       double bytes, double interfere_at, Recorder *rec)
{
    Network *net = make_net(n, up, down, lat, backbone, rec);
    int members[8];
    for (int k = 0; k < n; k++) members[k] = k;
    ck_assert_int_eq(network_ring_start(net, 0, members, n, bytes, tag(0)), 0);
    double t;
    int sent = 0;
    for (;;) {
        ck_assert_int_eq(network_next_time(net, &t), 0);
        if (!sent && interfere_at < t) {
            ck_assert_int_eq(network_send(net, interfere_at, 0, 1, bytes, tag(1)), 0);
            sent = 1;
            continue;
        }
        if (!(t < INFINITY)) break;
        ck_assert_int_eq(network_advance(net, t), 0);
    }
    network_flush_activity(net, t);
    network_free(net);
    return rec->done_at[0];
}

START_TEST(test_ring_closed_form_equals_hop_by_hop)
{
    /* heterogeneous hops: the latencies and the slowest link sit on different agents */
    double up[] = {10, 3, 8, 10}, down[] = {10, 10, 4, 10}, lat[] = {0.001, 0.002, 0.005, 0.04};
    Recorder closed, stepped;
    double a = ring_run(4, up, down, lat, INFINITY, 40, INFINITY, &closed);
    double b = ring_run(4, up, down, lat, 1e30, 40, INFINITY, &stepped); /* a backbone forces hops */
    /* per step: max over hops of latency + 10 bytes / min(up_k, down_k+1) */
    double step = 0;
    for (int k = 0; k < 4; k++) {
        int j = (k + 1) % 4;
        double bw = up[k] < down[j] ? up[k] : down[j];
        double l = lat[k] > lat[j] ? lat[k] : lat[j];
        if (l + 10 / bw > step) step = l + 10 / bw;
    }
    ck_assert(close_to(a, 6 * step));
    ck_assert(close_to(b, a));
    for (int k = 0; k < 4; k++)
        ck_assert_msg(close_to(closed.active[k], stepped.active[k]), "agent %d: %.17g vs %.17g", k,
                      closed.active[k], stepped.active[k]);
    /* an agent whose hops are fast is active for part of each step only */
    ck_assert(closed.active[3] < 0.5 * a);
}
END_TEST

START_TEST(test_ring_turns_into_hops_when_a_flow_arrives)
{
    double up[] = {10, 3, 8, 10}, down[] = {10, 10, 4, 10}, lat[] = {0.001, 0.002, 0.005, 0.04};
    double times[] = {0.5, 3.3333333, 7.0, 11.9};
    for (int i = 0; i < 4; i++) {
        Recorder closed, stepped;
        double a = ring_run(4, up, down, lat, INFINITY, 40, times[i], &closed);
        double b = ring_run(4, up, down, lat, 1e30, 40, times[i], &stepped);
        ck_assert_msg(close_to(a, b), "interference at %g: %.17g vs %.17g", times[i], a, b);
        ck_assert(close_to(closed.done_at[1], stepped.done_at[1]));
        for (int k = 0; k < 4; k++) ck_assert(close_to(closed.active[k], stepped.active[k]));
    }
}
END_TEST

/* A ring may run in closed form only if no flow, in any state, will cross its members'
 * links. The count of those flows is kept only once a ring has started (Network.link_users):
 * the first ring counts them from the flows, later sends and finishes keep it. A message in
 * its latency and one waiting in its sender's uplink queue must make the first ring step
 * hop by hop; one sent after the first ring, the third; none left, the second and fourth
 * run in closed form. network_check recounts every link's users from the flows. */
START_TEST(test_ring_counts_flows_in_any_state)
{
    double up[] = {10, 3, 8, 10}, down[] = {10, 10, 4, 10}, lat[] = {0.001, 0.002, 0.005, 0.04};
    for (int fifo = 0; fifo < 2; fifo++) {
        Recorder rec;
        memset(&rec, 0, sizeof rec);
        NetworkOptions o = {.n_agents = 4, .uplink = up, .downlink = down, .latency = lat, .backbone = INFINITY,
                            .latency_factor = 1, .bandwidth_factor = 1, .uplink_fifo = fifo};
        NetworkHooks h = {.ctx = &rec, .done = rec_done, .active = rec_active, .active_periodic = rec_periodic,
                          .sender_idle = rec_idle};
        Network *net = network_create(&o, &h);
        ck_assert_ptr_nonnull(net);
        char why[256];
        int members[] = {0, 1, 2, 3};
        /* round 0: two messages from agent 2 (with fifo the second waits in its queue) */
        ck_assert_int_eq(network_send(net, 0, 2, 0, 40, tag(1)), 0);
        ck_assert_int_eq(network_send(net, 0, 2, 1, 40, tag(2)), 0);
        ck_assert_int_eq(network_ring_start(net, 0, members, 4, 40, tag(3)), 0);
        ck_assert_msg(network_check(net, 1e-9, why, sizeof why) == 0, "%s", why);
        double last = drain(net);
        NetworkStats st;
        network_stats(net, &st);
        ck_assert_int_eq(st.rings_stepped, 1);
        ck_assert_int_eq(st.rings_closed_form, 0);
        /* nothing in flight: closed form */
        ck_assert_int_eq(network_ring_start(net, last, members, 4, 40, tag(4)), 0);
        ck_assert_msg(network_check(net, 1e-9, why, sizeof why) == 0, "%s", why);
        last = drain(net);
        network_stats(net, &st);
        ck_assert_int_eq(st.rings_closed_form, 1);
        /* a message sent after the count began, still in its latency: the ring steps */
        ck_assert_int_eq(network_send(net, last, 3, 1, 40, tag(5)), 0);
        ck_assert_int_eq(network_ring_start(net, last, members, 4, 40, tag(6)), 0);
        ck_assert_msg(network_check(net, 1e-9, why, sizeof why) == 0, "%s", why);
        last = drain(net);
        ck_assert_msg(network_check(net, 1e-9, why, sizeof why) == 0, "%s", why);
        network_stats(net, &st);
        ck_assert_int_eq(st.rings_stepped, 2);
        /* finished, it counts no more */
        ck_assert_int_eq(network_ring_start(net, last, members, 4, 40, tag(7)), 0);
        (void)drain(net);
        network_stats(net, &st);
        ck_assert_int_eq(st.rings_closed_form, 2);
        ck_assert_int_eq(st.rings_stepped, 2);
        for (int i = 1; i <= 7; i++) ck_assert_msg(isfinite(rec.done_at[i]), "payload %d not done", i);
        network_free(net);
    }
}
END_TEST

/* Latencies read in place (NetworkOptions.latency_at: the engine's node records) give what
 * the network's own copy gives, bit for bit: messages (their latency, LV08's share weights
 * read it too) and a closed-form ring (its hops' latencies). */
typedef struct LatencyRecord {
    int pad;
    double uplink;
    double latency;
    char tail;
} LatencyRecord;

/* What the read-in-place tests run: a closed-form ring of agents 0-3, then three
 * messages sharing links (into agent 1 twice, out of agent 0's downlink); the caller may
 * send more after *last (the ring's end), then drains and frees. */
static Network *in_place_messages(const NetworkOptions *o, Recorder *rec, double *last)
{
    NetworkHooks h = {.ctx = rec, .done = rec_done, .active = rec_active, .active_periodic = rec_periodic,
                      .sender_idle = rec_idle};
    Network *net = network_create(o, &h);
    ck_assert_ptr_nonnull(net);
    int members[] = {0, 1, 2, 3};
    ck_assert_int_eq(network_ring_start(net, 0, members, 4, 40, tag(0)), 0);
    *last = drain(net);
    ck_assert_int_eq(network_send(net, *last, 0, 1, 30, tag(1)), 0);
    ck_assert_int_eq(network_send(net, *last, 3, 1, 50, tag(2)), 0);
    ck_assert_int_eq(network_send(net, *last + 0.01, 2, 0, 20, tag(3)), 0);
    return net;
}

static void latency_run(const double *lat, const LatencyRecord *records, Recorder *rec)
{
    double up[] = {10, 3, 8, 10}, down[] = {10, 10, 4, 10};
    memset(rec, 0, sizeof *rec);
    for (int i = 0; i < REC_MAX; i++) rec->done_at[i] = NAN;
    NetworkOptions o = {.n_agents = 4, .uplink = up, .downlink = down, .latency = lat, .backbone = INFINITY,
                        .latency_factor = 1.5, .bandwidth_factor = 1, .weight_s = 2};
    if (records) {
        o.latency = NULL;
        o.latency_at = (const char *)records + offsetof(LatencyRecord, latency);
        o.latency_stride = sizeof *records;
    }
    double last;
    Network *net = in_place_messages(&o, rec, &last);
    (void)drain(net);
    network_free(net);
}

START_TEST(test_latency_read_in_place)
{
    double lat[] = {0.001, 0.002, 0.005, 0.04};
    LatencyRecord records[4];
    for (int a = 0; a < 4; a++) records[a] = (LatencyRecord){.pad = -1, .uplink = 1e9, .latency = lat[a], .tail = 'x'};
    Recorder copied, in_place;
    latency_run(lat, NULL, &copied);
    latency_run(NULL, records, &in_place);
    for (int i = 0; i < 4; i++) {
        ck_assert(isfinite(copied.done_at[i]));
        ck_assert_msg(copied.done_at[i] == in_place.done_at[i], "payload %d: copied %.17g, in place %.17g", i,
                      copied.done_at[i], in_place.done_at[i]);
        ck_assert(copied.active[i] == in_place.active[i]);
    }
    /* and the latencies do count: agent 2's message (alone on its links, after the ring)
     * waits 1.5 x 0.4 s more when its record says 0.405 s */
    records[2].latency = 0.405;
    latency_run(NULL, records, &in_place);
    double before = copied.done_at[3] - copied.done_at[0], after = in_place.done_at[3] - in_place.done_at[0];
    ck_assert_msg(fabs(after - before - 0.6) < 1e-9, "%.17g then %.17g", before, after);
}
END_TEST

/* Bandwidths read in place (NetworkOptions.uplink_at, downlink_at: the engine's node
 * records) give what the network's own copy gives, bit for bit: messages sharing links
 * (max-min, LV08's share weights read the capacities too), an infinite downlink, a closed-
 * form ring (its hops' rates) and a finite backbone (its capacity is the option's). */
typedef struct LinkRecord {
    char head;
    double downlink;
    int pad;
    double uplink;
} LinkRecord;

static void bandwidth_run(const double *up, const double *down, const LinkRecord *records, double backbone,
                          NetworkCapacityFn capacity, void *ctx, Recorder *rec)
{
    double lat[] = {0.001, 0.002, 0.005, 0.04, 0.003};
    memset(rec, 0, sizeof *rec);
    for (int i = 0; i < REC_MAX; i++) rec->done_at[i] = NAN;
    NetworkOptions o = {.n_agents = 5, .uplink = up, .downlink = down, .latency = lat, .backbone = backbone,
                        .latency_factor = 1, .bandwidth_factor = 1, .weight_s = 2, .capacity = capacity,
                        .capacity_ctx = ctx};
    if (records) {
        o.uplink_at = (const char *)records + offsetof(LinkRecord, uplink);
        o.downlink_at = (const char *)records + offsetof(LinkRecord, downlink);
        o.link_stride = sizeof *records;
    }
    double last;
    Network *net = in_place_messages(&o, rec, &last);
    ck_assert_int_eq(network_send(net, last + 0.02, 1, 4, 25, tag(4)), 0);
    ck_assert_int_eq(network_send(net, last + 0.02, 2, 4, 35, tag(5)), 0);
    char why[512];
    ck_assert_msg(network_check(net, 1e-9, why, sizeof why) == 0, "%s", why);
    (void)drain(net);
    ck_assert_msg(network_check(net, 1e-9, why, sizeof why) == 0, "%s", why);
    network_free(net);
}

/* A capacity function: the bandwidths halve for every link at t >= 0.5 s. */
static double halving_capacity(void *ctx, int link, double t, double *next_change)
{
    const double *cap = ctx;
    *next_change = t < 0.5 ? 0.5 : INFINITY;
    return t < 0.5 ? cap[link] : cap[link] / 2;
}

START_TEST(test_bandwidth_read_in_place)
{
    double up[] = {10, 3, 8, 10, 6}, down[] = {10, 10, 4, 10, INFINITY};
    LinkRecord records[5];
    for (int a = 0; a < 5; a++) records[a] = (LinkRecord){.head = 'y', .downlink = down[a], .pad = -1, .uplink = up[a]};
    for (int b = 0; b < 2; b++) {
        double backbone = b ? 12 : INFINITY;
        Recorder copied, in_place;
        bandwidth_run(up, down, NULL, backbone, NULL, NULL, &copied);
        bandwidth_run(NULL, NULL, records, backbone, NULL, NULL, &in_place);
        for (int i = 0; i < 6; i++) {
            ck_assert(isfinite(copied.done_at[i]));
            ck_assert_msg(copied.done_at[i] == in_place.done_at[i], "backbone %g, payload %d: copied %.17g, in place %.17g",
                          backbone, i, copied.done_at[i], in_place.done_at[i]);
        }
        for (int a = 0; a < 5; a++) ck_assert(copied.active[a] == in_place.active[a]);
    }
    /* changing capacities are the network's copy even with records: the records say 1000x */
    double cap[11];
    for (int a = 0; a < 5; a++) {
        cap[a] = up[a];
        cap[5 + a] = down[a];
    }
    cap[10] = INFINITY;
    LinkRecord wrong[5];
    for (int a = 0; a < 5; a++) wrong[a] = (LinkRecord){.downlink = 1000 * down[a], .uplink = 1000 * up[a]};
    Recorder copied, in_place;
    double halved_up[5], halved_down[5];
    memcpy(halved_up, up, sizeof up);
    memcpy(halved_down, down, sizeof down);
    bandwidth_run(halved_up, halved_down, NULL, INFINITY, halving_capacity, cap, &copied);
    bandwidth_run(halved_up, halved_down, wrong, INFINITY, halving_capacity, cap, &in_place);
    for (int i = 0; i < 6; i++) ck_assert(copied.done_at[i] == in_place.done_at[i]);
    /* and the records do count: agent 4's downlink is infinite, so the two messages into it
     * share nothing there; with agent 1's uplink at 2.5 bytes/s, not 3, its message (25
     * bytes, alone on its uplink) takes 25 / 2.5 - 25 / 3 s longer after the ring's end
     * (payload 0, itself later), the other one into agent 4 no longer */
    Recorder base, slower;
    bandwidth_run(NULL, NULL, records, INFINITY, NULL, NULL, &base);
    records[1].uplink = 2.5;
    bandwidth_run(NULL, NULL, records, INFINITY, NULL, NULL, &slower);
    double before = base.done_at[4] - base.done_at[0], after = slower.done_at[4] - slower.done_at[0];
    ck_assert_msg(fabs(after - before - (25 / 2.5 - 25.0 / 3)) < 1e-9, "%.17g then %.17g", before, after);
    before = base.done_at[5] - base.done_at[0], after = slower.done_at[5] - slower.done_at[0];
    ck_assert_msg(fabs(after - before) < 1e-9, "%.17g then %.17g", before, after);
}
END_TEST

/* The order of the done hook's calls. */
typedef struct OrderRecorder {
    int64_t order[64];
    int n;
} OrderRecorder;

static void order_done(void *ctx, const NetworkPayload *p, double t)
{
    (void)t;
    OrderRecorder *r = ctx;
    if (r->n < 64) r->order[r->n++] = p->data;
}

static void order_active(void *ctx, int agent, double start, double end)
{
    (void)ctx, (void)agent, (void)start, (void)end;
}

/* Events at equal times come in creation order (the heap's tie, read from the flows since
 * its items keep none): twelve messages alike on links of their own, sent at the same
 * instant in a scrambled order of payloads, all end at the same time, and the done hook
 * sees them in the order they were sent (their latencies' ends, also at one time, in that
 * order before them); the other twelve, sent alike at t = 1 s, likewise. */
START_TEST(test_equal_times_end_in_creation_order)
{
    enum { N = 24 };
    double up[N], down[N], lat[N];
    for (int a = 0; a < N; a++) up[a] = down[a] = 8, lat[a] = 0.25;
    OrderRecorder rec = {.n = 0};
    NetworkOptions o = {.n_agents = N, .uplink = up, .downlink = down, .latency = lat, .backbone = INFINITY,
                        .latency_factor = 1, .bandwidth_factor = 1};
    NetworkHooks h = {.ctx = &rec, .done = order_done, .active = order_active};
    Network *net = network_create(&o, &h);
    ck_assert_ptr_nonnull(net);
    int64_t sent[N];
    for (int i = 0; i < N; i++) {
        int a = (i * 7) % N; /* a sender of its own, a receiver of its own */
        sent[i] = (i * 5 + 3) % N;
        ck_assert_int_eq(network_send(net, i < N / 2 ? 0 : 1, a, (a + 1) % N, 16, tag(sent[i])), 0);
    }
    (void)drain(net);
    ck_assert_int_eq(rec.n, N);
    for (int i = 0; i < N; i++)
        ck_assert_msg(rec.order[i] == sent[i], "end %d: payload %lld, sent %d-th was %lld", i, (long long)rec.order[i], i,
                      (long long)sent[i]);
    network_free(net);
}
END_TEST

/* ---- scenarios ---- */

static const char *small =
    "[run]\nmethod = sync\nrounds = 2\nmode = timing\n"
    "[model]\nlayers = 784,64,10\nbatch = 50\n"
    "[agents]\ncount = 5\ncompute = lognormal(1 GFLOPS, 0.8)\nbandwidth = uniform(10 Mbit/s, 100 Mbit/s)\n"
    "latency = 5 ms\nsamples = 500\n"
    "[agents.straggler]\ncount = 1\ncompute = 100 MFLOPS\n";

static void expect_error(const char *extra, const char *fragment)
{
    char text[2048];
    snprintf(text, sizeof text, "%s[network]\n%s", small, extra);
    TestSink ts;
    HsDiag diag;
    ck_assert_int_eq(test_run(text, NULL, 0, &ts, &diag), HS_E_INPUT);
    ck_assert_msg(strncmp(diag.message, "t.ini:18:", 9) == 0, "message '%s'", diag.message);
    ck_assert_msg(strstr(diag.message, fragment), "message '%s' lacks '%s'", diag.message, fragment);
}

START_TEST(test_network_section_errors)
{
    expect_error("model = maxmn\n", "[network] model: 'maxmn' is not one of maxmin|fifo");
    expect_error("uplink = queue\n", "is not one of shared|fifo");
    expect_error("backbone = 0\n", "must be positive");
    expect_error("backbone = fast\n", "[network] backbone");
    expect_error("tcp = reno\n", "is not one of none|lv08");
    expect_error("modle = fifo\n", "did you mean 'model'");
}
END_TEST

START_TEST(test_fifo_keeps_the_goldens)
{
    char *text = test_read_file("tests/fixtures/scenarios/golden-timing.ini", NULL);
    ck_assert_ptr_nonnull(text);
    const char *methods[] = {"sync", "localsgd"};
    for (int m = 0; m < 2; m++) {
        char set_method[64], path[256];
        snprintf(set_method, sizeof set_method, "run.method=%s", methods[m]);
        snprintf(path, sizeof path, "tests/golden/fifo-timing-%s.txt", methods[m]);
        const char *set[] = {set_method, "network.model=fifo"};
        TestSink ts;
        HsDiag diag;
        ck_assert_int_eq(test_run(text, set, 2, &ts, &diag), 0);
        char *golden = test_read_file(path, NULL);
        ck_assert_msg(golden != NULL, "missing %s", path);
        ck_assert_msg(strcmp(golden, ts.text) == 0, "%s differs from this run under model = fifo", path);
        free(golden);
        test_sink_free(&ts);
    }
    free(text);
}
END_TEST

START_TEST(test_maxmin_sync_per_hop_latency)
{
    /* 4 agents, latencies 1/2/5/40 ms, the slowest link on agent 1: the ring's step is set
     * by its slowest hop, not by the worst latency plus the worst bandwidth */
    const char *text =
        "[run]\nmethod = sync\nrounds = 1\nmode = timing\n"
        "[model]\nlayers = 784,64,10\nbatch = 50\n"
        "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 100 MB/s\nlatency = 1 ms\nsamples = 500\n"
        "[agents.b]\ncount = 1\nbandwidth = 1 MB/s\nlatency = 2 ms\n"
        "[agents.c]\ncount = 1\nlatency = 5 ms\n"
        "[agents.d]\ncount = 1\nlatency = 40 ms\n";
    const char *maxmin[] = {"network.model=maxmin"}, *fifo[] = {"network.model=fifo"};
    TestSink a, b;
    HsDiag diag;
    ck_assert_int_eq(test_run(text, maxmin, 1, &a, &diag), 0);
    ck_assert_int_eq(test_run(text, fifo, 1, &b, &diag), 0);
    double bytes = 4.0 * (784 * 64 + 64 + 64 * 10 + 10), chunk = bytes / 4;
    /* hops 0->1 and 1->2 cross agent 1's 1 MB/s link (with 2 and 5 ms); hop 3->0 has 40 ms
     * at 100 MB/s; compute is the same under both models */
    double slow = 0.005 + chunk / 1e6, far = 0.040 + chunk / 1e8;
    double step_maxmin = slow > far ? slow : far, step_fifo = 0.040 + chunk / 1e6;
    double compute = a.round_rows[0].t_end - 10 * 6 * step_maxmin;
    ck_assert(close_to(b.round_rows[0].t_end - 10 * 6 * step_fifo, compute));
    ck_assert(a.round_rows[0].t_end < b.round_rows[0].t_end);
    test_sink_free(&a);
    test_sink_free(&b);
}
END_TEST

START_TEST(test_train_mode_times_like_timing_mode)
{
    const char *synthetic =
        "[run]\nmethod = sync\nrounds = 2\nmode = train\n"
        "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 800\ntest_samples = 200\n"
        "[model]\nlayers = 16,32,4\nbatch = 16\n"
        "[topology]\ngraph = ring\n"
        "[network]\nmodel = maxmin\n"
        "[agents]\ncount = 6\ncompute = lognormal(1 GFLOPS, 0.7)\nbandwidth = uniform(1 MB/s, 10 MB/s)\n"
        "latency = uniform(1 ms, 9 ms)\n"
        "[agents.slow]\ncount = 2\ncompute = 50 MFLOPS\ndownlink = 200 kB/s\nuplink = 2 MB/s\n";
    const char *methods[] = {"sync",    "localsgd", "qsr",     "dpsgd",    "adpsgd", "co2",
                             "comdml",  "byzsgdnm", "ripples", "divshare", "swift"};
    const char *variants[] = {"network.uplink=shared", "network.uplink=fifo", "network.model=fifo"};
    for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
        for (int v = 0; v < 3; v++) {
            char set_method[64];
            snprintf(set_method, sizeof set_method, "run.method=%s", methods[m]);
            const char *set[] = {set_method, variants[v], "run.mode=timing"};
            TestSink train, timing;
            HsDiag diag;
            ck_assert_msg(test_run(synthetic, set, 2, &train, &diag) == 0, "%s: %s", methods[m], diag.message);
            ck_assert_msg(test_run(synthetic, set, 3, &timing, &diag) == 0, "%s: %s", methods[m], diag.message);
            ck_assert_int_eq(train.rounds, timing.rounds);
            for (int r = 0; r < train.rounds; r++)
                ck_assert_msg(train.round_rows[r].t_end == timing.round_rows[r].t_end &&
                                  train.round_rows[r].idle_s == timing.round_rows[r].idle_s,
                              "%s round %d", methods[m], r);
            for (int i = 0; i < train.n_agent_round_rows; i++)
                ck_assert(train.agent_round_rows[i].comm_s == timing.agent_round_rows[i].comm_s);
            test_sink_free(&train);
            test_sink_free(&timing);
        }
    }
}
END_TEST

/* ---- groups against the exact allocation: a fan-in of thousands of flows ---- */

static void fanin_done(void *ctx, const NetworkPayload *p, double t)
{
    ((double *)ctx)[p->data] = t;
}

/* The star's arrivals in long double: at every activation or completion, the max-min
 * allocation from scratch (clients by uplink: each takes its uplink while that is below
 * the fair share of what is left of the server's downlink), then every flow advances to
 * the next event (bench/fanin's reference). O(n) per event. */
static void fanin_reference(int n, const double *up, double server_down, const double *active, double bytes,
                            const int *by_up, double *arrival)
{
    int *state = calloc((size_t)n, sizeof *state);
    long double *left = malloc((size_t)n * sizeof *left), *rate = malloc((size_t)n * sizeof *rate);
    ck_assert(state && left && rate);
    for (int i = 0; i < n; i++) left[i] = bytes;
    long double now = 0;
    for (int remaining = n; remaining > 0;) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (state[i] == 0 && active[i] <= now) state[i] = 1;
            m += state[i] == 1;
        }
        long double residual = server_down, level = 0;
        for (int k = 0, rest = m; k < n; k++) {
            int i = by_up[k];
            if (state[i] != 1) continue;
            if ((long double)up[i] * rest <= residual) {
                rate[i] = up[i];
                residual -= up[i];
                rest--;
            } else {
                rate[i] = -1; /* at the level */
            }
            if (rest > 0) level = residual / rest;
        }
        long double next = INFINITY;
        for (int i = 0; i < n; i++) {
            if (state[i] == 1 && rate[i] < 0) rate[i] = level;
            if (state[i] == 0 && active[i] < next) next = active[i];
            if (state[i] == 1 && now + left[i] / rate[i] < next) next = now + left[i] / rate[i];
        }
        for (int i = 0; i < n; i++) {
            if (state[i] != 1) continue;
            left[i] -= rate[i] * (next - now);
            if (left[i] <= 1e-9L * bytes) {
                state[i] = 2;
                arrival[i] = (double)next;
                remaining--;
            }
        }
        now = next;
    }
    free(state);
    free(left);
    free(rate);
}

static const double *fanin_sort_up;

static int fanin_by_up(const void *a, const void *b)
{
    double x = fanin_sort_up[*(const int *)a], y = fanin_sort_up[*(const int *)b];
    return x < y ? -1 : x > y ? 1 : *(const int *)a - *(const int *)b;
}

START_TEST(test_fanin_groups_within_1e12_of_exact)
{
    /* 3,000 uploads into one server's downlink (a federated round): a group forms and
     * every arrival is within 1e-12 relative of the exact allocation (long double, from
     * scratch at every event); the flows settled one by one drift further from it as
     * their count grows (4.4e-12 at 10,000: docs/results/network.md) */
    enum { N = 3000 };
    static double up[N + 1], down[N + 1], lat[N + 1], start[N], active[N], grouped[N], single[N], exact[N];
    static int order[N], by_up[N];
    srand(36);
    for (int i = 0; i < N; i++) {
        up[i] = 1.25e6 * (10 + rand() % 91);
        down[i] = 12.5e6;
        lat[i] = 1e-3 * (1 + rand() % 20);
        start[i] = (rand() % 100000) * 1e-5;
        order[i] = by_up[i] = i;
    }
    up[N] = down[N] = 125e6;
    lat[N] = 5e-3;
    for (int i = 1; i < N; i++) /* sends in time order */
        for (int j = i; j > 0 && start[order[j - 1]] > start[order[j]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    fanin_sort_up = up;
    qsort(by_up, N, sizeof *by_up, fanin_by_up);
    NetworkStats stats[2];
    for (int mode = 0; mode < 2; mode++) {
        double *arrival = mode ? single : grouped;
        NetworkOptions o = {.n_agents = N + 1, .uplink = up, .downlink = down, .latency = lat,
                            .backbone = INFINITY, .latency_factor = 1, .bandwidth_factor = 1,
                            .group_min = mode ? -1 : 0};
        NetworkHooks h = {.ctx = arrival, .done = fanin_done};
        Network *net = network_create(&o, &h);
        ck_assert_ptr_nonnull(net);
        for (int next = 0;;) {
            double t;
            ck_assert_int_eq(network_next_time(net, &t), 0);
            if (next < N && start[order[next]] <= t) {
                int i = order[next++];
                NetworkPayload payload = {.kind = 0, .agent = N, .data = i};
                ck_assert_int_eq(network_send(net, start[i], i, N, 1e6, payload), 0);
                continue;
            }
            if (!(t < INFINITY)) break;
            ck_assert_int_eq(network_advance(net, t), 0);
        }
        network_stats(net, &stats[mode]);
        network_free(net);
    }
    ck_assert(stats[0].groups > 0 && stats[0].joined > N / 2 && stats[1].groups == 0);
    for (int i = 0; i < N; i++) active[i] = start[i] + (lat[i] > lat[N] ? lat[i] : lat[N]);
    fanin_reference(N, up, down[N], active, 1e6, by_up, exact);
    double worst[2] = {0, 0};
    for (int i = 0; i < N; i++) {
        double g = fabs(grouped[i] - exact[i]) / exact[i], s = fabs(single[i] - exact[i]) / exact[i];
        ck_assert_msg(g <= 1e-12, "client %d: with groups %.17g, exact %.17g", i, grouped[i], exact[i]);
        if (g > worst[0]) worst[0] = g;
        if (s > worst[1]) worst[1] = s;
    }
    fprintf(stderr, "fan-in of %d against the exact allocation: with groups %.3g, every flow settled %.3g\n", N,
            worst[0], worst[1]);
}
END_TEST

/* Plays a server's fan-out: agent n sends `bytes` to each client at start[i] (in time
 * order), the allocation checked from scratch after every step; arrival[i] = when client i
 * has its copy. */
static void fanout_play(const NetworkOptions *o, const double *start, const int *order, double bytes,
                        double *arrival, NetworkStats *stats)
{
    int n = o->n_agents - 1;
    NetworkHooks h = {.ctx = arrival, .done = fanin_done};
    Network *net = network_create(o, &h);
    ck_assert_ptr_nonnull(net);
    for (int next = 0;;) {
        double t;
        ck_assert_int_eq(network_next_time(net, &t), 0);
        expect_checked(net, o->group_min < 0 ? "fan-out, no groups" : "fan-out", next);
        if (next < n && start[order[next]] <= t) {
            int i = order[next++];
            ck_assert_int_eq(network_send(net, start[i], n, i, bytes, (NetworkPayload){.agent = i, .data = i}), 0);
            continue;
        }
        if (!(t < INFINITY)) break;
        ck_assert_int_eq(network_advance(net, t), 0);
    }
    network_stats(net, stats);
    network_free(net);
}

START_TEST(test_fanout_rooms_out_of_the_heap)
{
    /* A server sends a model to 1,000 clients (a federated round's downloads): a group forms
     * at its uplink, and the clients' downlinks, whose rooms are above every level the group
     * can take while hundreds of members are left, wait out of its room heap. As the last
     * members leave, the level rises to the slowest downlinks: those links must be back in
     * the heap by then, or their members would take more than their link (the checker
     * fails) and arrive early (the exact allocation fails). Then the same with every
     * capacity stepping (x 1, 0.5, 2): the server's rising capacity, and the clients'
     * falling ones, put links back as well; there against no groups, within 1e-12. */
    enum { N = 1000 };
    static double up[N + 1], down[N + 1], lat[N + 1], start[N], active[N], grouped[N], single[N], exact[N];
    static int order[N], by_down[N];
    srand(3636);
    for (int i = 0; i < N; i++) {
        up[i] = 1.25e6;
        down[i] = 1.25e6 * (10 + rand() % 91);
        lat[i] = 1e-3 * (1 + rand() % 20);
        start[i] = (rand() % 1000) * 1e-5;
        order[i] = by_down[i] = i;
    }
    up[N] = down[N] = 125e6;
    lat[N] = 5e-3;
    for (int i = 1; i < N; i++)
        for (int j = i; j > 0 && start[order[j - 1]] > start[order[j]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    NetworkOptions o = {.n_agents = N + 1, .uplink = up, .downlink = down, .latency = lat, .backbone = INFINITY,
                        .latency_factor = 1, .bandwidth_factor = 1};
    NetworkStats stats;
    fanout_play(&o, start, order, 2e5, grouped, &stats);
    ck_assert_msg(stats.groups > 0 && stats.joined > N / 2 && stats.rooms_deferred > N / 2 && stats.rooms_flushed > 0 &&
                      stats.rooms_flushed < N / 4,
                  "%llu groups, %llu joins, %llu links out of the heap, %llu back", (unsigned long long)stats.groups,
                  (unsigned long long)stats.joined, (unsigned long long)stats.rooms_deferred,
                  (unsigned long long)stats.rooms_flushed);
    for (int i = 0; i < N; i++) active[i] = start[i] + (lat[i] > lat[N] ? lat[i] : lat[N]);
    fanin_sort_up = down;
    qsort(by_down, N, sizeof *by_down, fanin_by_up);
    fanin_reference(N, down, up[N], active, 2e5, by_down, exact);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double d = fabs(grouped[i] - exact[i]) / exact[i];
        ck_assert_msg(d <= 1e-12, "client %d: with groups %.17g, exact %.17g", i, grouped[i], exact[i]);
        if (d > worst) worst = d;
    }
    double base[2 * N + 2];
    for (int a = 0; a <= N; a++) base[a] = up[a], base[N + 1 + a] = down[a];
    StepCapacity steps = {.base = base, .period = 0.25, .with_zero = 0};
    o.capacity = step_capacity;
    o.capacity_ctx = &steps;
    NetworkStats stepped, none;
    fanout_play(&o, start, order, 2e5, grouped, &stepped);
    o.group_min = -1;
    fanout_play(&o, start, order, 2e5, single, &none);
    ck_assert(stepped.rooms_deferred > N / 2 && stepped.rooms_flushed > stats.rooms_flushed && none.groups == 0);
    for (int i = 0; i < N; i++)
        ck_assert_msg(fabs(grouped[i] - single[i]) <= 1e-12 * single[i], "stepping, client %d: with groups %.17g, without %.17g",
                      i, grouped[i], single[i]);
    fprintf(stderr, "fan-out of %d: %llu of %llu joins out of the room heap, %llu back (%llu stepping); against the exact allocation %.3g\n",
            N, (unsigned long long)stats.rooms_deferred, (unsigned long long)stats.joined, (unsigned long long)stats.rooms_flushed,
            (unsigned long long)stepped.rooms_flushed, worst);
}
END_TEST

static Suite *network_suite(void)
{
    Suite *s = suite_create("network");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_single_flow_latency_then_bytes);
    tcase_add_test(tc, test_fan_in_shares_the_downlink);
    tcase_add_test(tc, test_progressive_filling_textbook);
    tcase_add_test(tc, test_backbone_and_uplink_fifo);
    tcase_add_test(tc, test_queued_message_waits_its_own_latency);
    tcase_add_test(tc, test_weighted_shares);
    tcase_add_test(tc, test_incremental_equals_naive_twin);
    tcase_add_test(tc, test_groups_equal_single_flows);
    tcase_add_test(tc, test_fanin_groups_within_1e12_of_exact);
    tcase_add_test(tc, test_fanout_rooms_out_of_the_heap);
    tcase_add_test(tc, test_ring_closed_form_equals_hop_by_hop);
    tcase_add_test(tc, test_ring_turns_into_hops_when_a_flow_arrives);
    tcase_add_test(tc, test_ring_counts_flows_in_any_state);
    tcase_add_test(tc, test_latency_read_in_place);
    tcase_add_test(tc, test_bandwidth_read_in_place);
    tcase_add_test(tc, test_equal_times_end_in_creation_order);
    tcase_add_test(tc, test_network_section_errors);
    tcase_add_test(tc, test_fifo_keeps_the_goldens);
    tcase_add_test(tc, test_maxmin_sync_per_hop_latency);
    tcase_add_test(tc, test_train_mode_times_like_timing_mode);
    tcase_add_test(tc, test_backbone_slot_follows_a_moved_entry);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(network_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
