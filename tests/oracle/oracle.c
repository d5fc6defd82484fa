/* oracle.c — hetsim's maxmin network model checked against SimGrid (simgrid_replay.c).
 *
 *   oracle REPLAY random SEED COUNT   the differential test: COUNT random small platforms
 *                                     and flow patterns drawn from SEED, then COUNT / 15
 *                                     motor runs on fixed links and as many on traced
 *                                     links whose graph changes at the round-1 rebuild;
 *                                     exits 1 when hetsim and SimGrid disagree by more
 *                                     than 0.1 % (or a traced graph does not change)
 *   oracle REPLAY method NAME SEED COUNT
 *                                     the same with every case a whole run of method
 *                                     NAME (agents, links, topology and backbone drawn as
 *                                     in random); eager alternates collective = solo
 *                                     (even cases) and majority (odd ones), and prunes
 *                                     (prune = width) in cases 2, 3 of every 4
 *   oracle REPLAY table               docs/results/network-oracle.md's table: the
 *                                     issue's cases (sync and D-PSGD) under hetsim
 *                                     fifo and maxmin, and SimGrid
 *                                     playing the same method as a task graph with its
 *                                     own causality (end to end), under CM02 (plain
 *                                     max-min), CM02 with latencies on the links (shares
 *                                     weighted by 1 / latency) and LV08
 *   oracle export SCENARIO [SECTION.KEY=VALUE]...
 *                                     runs SCENARIO (maxmin) and prints its tasks in
 *                                     simgrid_replay's input format, each message followed
 *                                     by `# hetsim ID TRANSFER END` (when hetsim says it
 *                                     first moved and arrived; a comment to SimGrid): the
 *                                     trace tests/emulation/ replays over real TCP
 *
 * A case is either a whole hetsim run (a random method, topology, uplink mode and
 * backbone on random agents) or a bare flow pattern (random bursts, fan-ins and chains of
 * messages on the network module alone). hetsim plays it; every computation and message
 * it did is written, with its start time, as a task for SimGrid, which replays the tasks
 * on the same platform (CM02, bandwidth and latency factors 1, no TCP window bound, no
 * cross traffic; `delay` latency, see simgrid_replay.c) and says when each message
 * transferred and arrived. Compared: every message's arrival, every round's length (a
 * round ends with the task that ended it in hetsim), every agent's busy time (compute and
 * own transfers united) and comm time per round. The start times come from hetsim; SimGrid
 * recomputes everything the network model decides (shares, rates, arrivals). */
#include "sim/run.h"
#include "sim/methods/method.h"
#include "sim/kernel/network.h"
#include "sim/scenario/topology.h"
#include "sim/world/world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *replay_path;
/* network/optim:Full: SimGrid 3.32's default lazy update misallocates when many flows
 * leave their latency phase at the same instant (an all-to-all where every flow has a
 * latency: the flows into a slow downlink then all finish with the others, as if that
 * link were not shared); the full update agrees with hetsim and with itself. */
static const char *cm02 = "delay --cfg=network/model:CM02 --cfg=network/TCP-gamma:0 --cfg=network/crosstraffic:0 "
                          "--cfg=network/optim:Full --cfg=maxmin/precision:1e-9 --cfg=surf/precision:1e-9 "
                          "--log=root.thres:critical";

/* ---- what a run did ---- */

typedef struct Task {
    SinkActivity a;
    double sg_transfer, sg_end;
} Task;

typedef struct Record {
    int n_agents;
    int n_nodes;          /* agents and server nodes after them (0: n_agents) */
    double up[64], down[64], latency[64], compute[64], backbone;
    Task *tasks;
    int n_tasks, cap_tasks;
    SinkRound rounds[64];
    int n_rounds;
    SinkAgentRound *rows; /* (rounds x agents) */
    int n_rows;
    /* bandwidth traces (motor's traced cases): agent's uplink and downlink from time t */
    struct {
        double t, up, down;
        int agent;
    } changes[128];
    int n_changes;
} Record;

static void record_task(Record *r, const SinkActivity *a)
{
    if (r->n_tasks == r->cap_tasks) {
        r->cap_tasks = r->cap_tasks ? r->cap_tasks * 2 : 1024;
        r->tasks = realloc(r->tasks, (size_t)r->cap_tasks * sizeof *r->tasks);
    }
    r->tasks[r->n_tasks++] = (Task){.a = *a};
}

static int rec_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    *run_id = 1;
    return 0;
}

static int rec_agents(void *ctx, int64_t run_id, const SinkAgent *a, int count)
{
    Record *r = ctx;
    r->n_agents = count;
    for (int i = 0; i < count; i++) {
        r->up[i] = a[i].uplink;
        r->down[i] = a[i].downlink;
        r->latency[i] = a[i].latency;
        r->compute[i] = a[i].compute;
    }
    return 0;
}

static int rec_round(void *ctx, int64_t run_id, const SinkRound *round)
{
    Record *r = ctx;
    if (r->n_rounds < 64) r->rounds[r->n_rounds++] = *round;
    return 0;
}

static int rec_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows, int count)
{
    Record *r = ctx;
    r->rows = realloc(r->rows, (size_t)(r->n_rows + count) * sizeof *r->rows);
    memcpy(r->rows + r->n_rows, rows, (size_t)count * sizeof *rows);
    r->n_rows += count;
    return 0;
}

static int rec_pairing(void *ctx, int64_t run_id, const SinkPairing *p)
{
    return 0;
}

static int rec_metric(void *ctx, int64_t run_id, const SinkMetric *m)
{
    return 0;
}

static int rec_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    return 0;
}

static int rec_activity(void *ctx, int64_t run_id, const SinkActivity *a)
{
    record_task(ctx, a);
    return 0;
}

static const SinkOps record_ops = {rec_run_begin, rec_agents, rec_round, rec_agent_rounds, rec_pairing,
                                   rec_metric, rec_run_end, rec_activity, NULL, NULL};

static void record_free(Record *r)
{
    free(r->tasks);
    free(r->rows);
    memset(r, 0, sizeof *r);
}

/* ---- SimGrid ---- */

/* Writes the platform and the tasks in simgrid_replay's input format; with_times adds
 * hetsim's transfer start and arrival after each message, as a comment. */
static void write_tasks(FILE *f, const Record *r, int with_times)
{
    int nodes = r->n_nodes > 0 ? r->n_nodes : r->n_agents;
    fprintf(f, "agents %d\n", nodes);
    if (isfinite(r->backbone)) fprintf(f, "backbone %.17g\n", r->backbone);
    for (int i = 0; i < nodes; i++)
        fprintf(f, "agent %d %.17g %.17g %.17g %.17g\n", i, r->compute[i], r->up[i], r->down[i], r->latency[i]);
    for (int c = 0; c < r->n_changes; c++)
        fprintf(f, "rate %.17g %d %.17g %.17g\n", r->changes[c].t, r->changes[c].agent, r->changes[c].up,
                r->changes[c].down);
    for (int t = 0; t < r->n_tasks; t++) {
        const SinkActivity *a = &r->tasks[t].a;
        if (a->kind == SINK_ACTIVITY_COMPUTE) {
            fprintf(f, "task %d c %d %.17g %.17g\n", t, a->agent, (a->end - a->start) * r->compute[a->agent], a->start);
        } else {
            fprintf(f, "task %d m %d %d %.17g %.17g\n", t, a->agent, a->to, a->amount, a->start);
            if (with_times) fprintf(f, "# hetsim %d %.17g %.17g\n", t, a->transfer, a->end);
        }
    }
}

/* Writes the platform and the tasks, runs the replay, reads its times. Returns 0 or -1. */
static int simgrid_replay(Record *r, const char *options)
{
    char path[] = "/tmp/hetsim-oracle-tasks-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    write_tasks(f, r, 0);
    fclose(f);
    char command[1024];
    snprintf(command, sizeof command, "%s %s < %s", replay_path, options, path);
    FILE *p = popen(command, "r");
    int got = 0;
    if (p) {
        int id;
        double transfer, end;
        while (fscanf(p, " task %d %lf %lf", &id, &transfer, &end) == 3)
            if (id >= 0 && id < r->n_tasks) {
                r->tasks[id].sg_transfer = transfer;
                r->tasks[id].sg_end = end;
                got++;
            }
        if (pclose(p) != 0) got = -1;
    }
    unlink(path);
    return got == r->n_tasks ? 0 : -1;
}

/* ---- comparison ---- */

typedef struct Span {
    double start, end;
} Span;

static int span_cmp(const void *a, const void *b)
{
    const Span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Measure of the union of spans clipped to [from, to]. */
static double union_within(Span *s, int n, double from, double to)
{
    qsort(s, (size_t)n, sizeof *s, span_cmp);
    double total = 0, cursor = from;
    for (int i = 0; i < n; i++) {
        double a = s[i].start > cursor ? s[i].start : cursor, b = s[i].end < to ? s[i].end : to;
        if (b > a) {
            total += b - a;
            cursor = b;
        }
    }
    return total;
}

typedef struct Worst {
    double flow, round, busy, comm; /* largest relative disagreement */
    long crossings;                 /* traced cases: messages in flight across a link change */
} Worst;

static int compare(const Record *r, const char *label, Worst *worst, int verbose)
{
    int bad = 0;
    /* messages: arrival, relative to the run's length */
    double horizon = r->n_rounds ? r->rounds[r->n_rounds - 1].t_end : 0;
    for (int t = 0; t < r->n_tasks; t++) {
        const Task *k = &r->tasks[t];
        if (k->a.kind != SINK_ACTIVITY_MESSAGE || !isfinite(k->a.end)) continue;
        if (k->a.end > horizon) horizon = k->a.end;
    }
    for (int t = 0; t < r->n_tasks; t++) {
        const Task *k = &r->tasks[t];
        if (k->a.kind != SINK_ACTIVITY_MESSAGE || !isfinite(k->a.end)) continue; /* in flight at the end */
        double e = fabs(k->sg_end - k->a.end) / horizon;
        if (e > worst->flow) worst->flow = e;
        if (e > 1e-3) {
            bad = 1;
            if (verbose)
                printf("  %s: message %d %d->%d of %.0f B at %.9g: hetsim ends %.9g, SimGrid %.9g\n", label, t,
                       k->a.agent, k->a.to, k->a.amount, k->a.start, k->a.end, k->sg_end);
        }
    }
    /* rounds: each ends with the task whose hetsim end is the round's end */
    Span *spans = malloc((size_t)(r->n_tasks + 1) * sizeof *spans);
    double sg_start = 0;
    for (int q = 0; q < r->n_rounds; q++) {
        const SinkRound *round = &r->rounds[q];
        double sg_end = -1;
        for (int t = 0; t < r->n_tasks; t++) {
            const Task *k = &r->tasks[t];
            if (k->a.end == round->t_end && k->sg_end > sg_end) sg_end = k->sg_end;
        }
        if (sg_end < 0) sg_end = round->t_end; /* ended by an event without a task (none here) */
        double length = round->t_end - round->t_start, sg_length = sg_end - sg_start;
        double e = fabs(sg_length - length) / length;
        if (e > worst->round) worst->round = e;
        if (e > 1e-3) {
            bad = 1;
            if (verbose) printf("  %s: round %d lasts %.9g in hetsim, %.9g in SimGrid\n", label, q, length, sg_length);
        }
        for (int i = 0; i < r->n_agents; i++) {
            int n = 0, m = 0;
            for (int t = 0; t < r->n_tasks; t++) {
                const Task *k = &r->tasks[t];
                if (k->a.kind == SINK_ACTIVITY_MESSAGE && (k->a.agent == i || k->a.to == i))
                    spans[n++] = (Span){k->sg_transfer, k->sg_end};
            }
            double comm = union_within(spans, n, sg_start, sg_end);
            m = n;
            for (int t = 0; t < r->n_tasks; t++) {
                const Task *k = &r->tasks[t];
                if (k->a.kind == SINK_ACTIVITY_COMPUTE && k->a.agent == i) spans[m++] = (Span){k->sg_transfer, k->sg_end};
            }
            double busy = union_within(spans, m, sg_start, sg_end);
            const SinkAgentRound *row = &r->rows[q * r->n_agents + i];
            double h_busy = length - row->idle_s - row->offline_s;
            double eb = fabs(busy - h_busy) / length, ec = fabs(comm - row->comm_s) / length;
            if (eb > worst->busy) worst->busy = eb;
            if (ec > worst->comm) worst->comm = ec;
            if (eb > 1e-3 || ec > 1e-3) {
                bad = 1;
                if (verbose)
                    printf("  %s: round %d agent %d busy %.9g / SimGrid %.9g, comm %.9g / SimGrid %.9g\n", label, q, i,
                           h_busy, busy, row->comm_s, comm);
            }
        }
        sg_start = sg_end;
    }
    free(spans);
    return bad;
}

/* The sink has the agents only: the server nodes (after them) from the same world.
 * Returns 0 or -1 (diag says why, or the world has more than 64 nodes). */
static int record_servers(const Scenario *sc, Record *r, HsDiag *diag)
{
    World w;
    if (world_build(sc, &w, diag) != HS_OK) return -1;
    int status = world_nodes(&w) > 64 ? -1 : 0;
    if (status == 0) {
        r->n_nodes = world_nodes(&w);
        for (int v = r->n_agents; v < r->n_nodes; v++) {
            r->up[v] = w.agents[v].uplink;
            r->down[v] = w.agents[v].downlink;
            r->latency[v] = w.agents[v].latency;
            r->compute[v] = w.agents[v].compute;
        }
    }
    world_free(&w);
    return status;
}

/* ---- random cases ---- */

static uint64_t rng_state;

static double uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static int pick(int n)
{
    return (int)(uniform() * n) % n;
}

/* A whole run: random agents (one group each; lsgd's in pairs), method, topology, uplink mode, backbone;
 * the server methods get a server ([server], or 2-3 edge servers on a full graph for
 * sdfeel) of random speed and links, a node of the platform like the agents. forced: the
 * method instead of a random one (eager's and motor's cases, drawn after the random
 * ones so that those keep their draws). */
/* motor's traced cases: every agent's uplink and downlink follow a trace that redraws
 * them once in round 0's first steps and once later, so the rebuild at round 1 sees other
 * rates than round 0's: the graph changes there (checked), and SimGrid replays the same
 * changes on its links (simgrid_replay's `rate` records). The CSV files are written
 * beside the oracle's task files and removed after the run. */
static int trace_path(char *path, size_t size)
{
    snprintf(path, size, "/tmp/hetsim-oracle-trace-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) {
        path[0] = '\0';
        return -1;
    }
    close(fd);
    return 0;
}

static int write_trace(const char *path, const Record *r, int n, const double *start, int up)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) return -1;
    fprintf(f, "agent,time,value\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d,0,%.17g B/s\n", i, start[i]);
        for (int c = 0; c < r->n_changes; c++)
            if (r->changes[c].agent == i)
                fprintf(f, "%d,%.17g,%.17g B/s\n", i, r->changes[c].t, up ? r->changes[c].up : r->changes[c].down);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int case_run(int index, const char *forced, int traced, Worst *worst, char *label, size_t size)
{
    static const char *methods[] = {"sync",    "localsgd", "dpsgd",  "adpsgd", "comdml",   "co2",
                                    "qsr",     "byzsgdnm", "token",  "ripples", "divshare", "swift",
                                    "fedavg",  "fedbuff",  "asgd",   "rennala", "ringmaster", "sdfeel",
                                    "lsgd"};
    static const char *graphs[] = {"ring", "torus", "full", "exponential"};
    int n = 3 + pick(6);
    const char *method = methods[pick((int)(sizeof methods / sizeof *methods))], *graph = graphs[pick(4)];
    if (forced) method = forced; /* drawn all the same: the random cases' draws stay as they were */
    int edge = strcmp(method, "sdfeel") == 0;
    const MethodOps *ops = method_lookup(method);
    /* a method that builds its own graph refuses [topology] (the graph is drawn all the same) */
    int own_graph = ops && (ops->capabilities & METHOD_BUILDS_TOPOLOGY);
    if (traced && n < 4) n = 4; /* 3 agents of degree 2: the triangle whatever the rates */
    int server = ops && (ops->capabilities & METHOD_USES_SERVER);
    if (edge) graph = "full";
    /* every second dpsgd case on a learned graph (STL-FW over Dirichlet(0.1) label shares:
     * a learned graph is just a graph to the network); no draw, so the other cases stay */
    int learned = strcmp(method, "dpsgd") == 0 && index % 2 == 1;
    if (learned) graph = "learned";
    int fifo = pick(3) == 0, backbone = pick(4) == 0;
    char text[8192];
    int len = snprintf(text, sizeof text,
                       "[run]\nmethod = %s\nrounds = 2\nmode = timing\nseed = %d\n[model]\nlayers = 784,32,10\n"
                       "batch = 50\n%s%s%s[network]\nmodel = maxmin\nuplink = %s\n",
                       method, index + 1, own_graph ? "" : "[topology]\ngraph = ", own_graph ? "" : graph,
                       own_graph ? "" : "\n", fifo ? "fifo" : "shared");
    double bb = (20 + pick(180)) * 1e6 / 8;
    if (backbone) len += snprintf(text + len, sizeof text - (size_t)len, "backbone = %.17g B/s\n", bb);
    if (learned)
        len += snprintf(text + len, sizeof text - (size_t)len,
                        "[data]\ndataset = synthetic\nfeatures = 784\nclasses = 10\ntrain_samples = 2000\n"
                        "partition = dirichlet\nalpha = 0.1\n");
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "[agents]\ncount = %d\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nsamples = 200\n", n);
    char up_path[64] = "", down_path[64] = "";
    if (traced) {
        if (trace_path(up_path, sizeof up_path) || trace_path(down_path, sizeof down_path)) {
            if (up_path[0]) unlink(up_path);
            printf("case %d: cannot write the traces\n", index);
            return -1;
        }
        len += snprintf(text + len, sizeof text - (size_t)len, "uplink = trace(%s)\ndownlink = trace(%s)\n", up_path,
                        down_path);
    }
    /* lsgd: its multi-leader form, agents in pairs (the groups' rings, then every second
     * election the global one) */
    int lsgd = strcmp(method, "lsgd") == 0, per_group = lsgd ? 2 : 1;
    if (lsgd) len += snprintf(text + len, sizeof text - (size_t)len, "[method]\nleaders = groups\nglobal_every = 2\n");
    /* eager: its partial all-reduce, started by the first agent (solo) or by half of them
     * (majority); the late agents' links carry the ring beside their compute; every
     * second pair of cases prunes the slow agents (the reduction's nested shells) */
    const char *collective = index % 2 == 0 ? "solo" : "majority";
    int eager = strcmp(method, "eager") == 0, eager_prune = eager && index % 4 >= 2;
    if (eager)
        len += snprintf(text + len, sizeof text - (size_t)len, "[method]\ncollective = %s\n%s", collective,
                        eager_prune ? "prune = width\n" : "");
    /* motor: its graph from the drawn links, rebuilt at round 1, slow links every 2nd-3rd step */
    if (strcmp(method, "motor") == 0)
        len += snprintf(text + len, sizeof text - (size_t)len, "[method]\nmax_degree = 2\nrebuild = 1\nmax_period = 3\n");
    double up0[64], down0[64];
    for (int i = 0; i < n; i += per_group) {
        if (!traced) { /* the draws as the arguments take them, as they always were */
            len += snprintf(text + len, sizeof text - (size_t)len,
                            "[agents.a%d]\ncount = %d\ncompute = %.6g GFLOPS\nuplink = %.6g Mbit/s\n"
                            "downlink = %.6g Mbit/s\nlatency = %.6g ms\n",
                            i, i + per_group <= n ? per_group : 1, 0.1 + 2 * uniform(), 10 + 90 * uniform(),
                            10 + 90 * uniform(), 20 * uniform());
            continue;
        }
        /* traced: the links' values at t = 0 go to the traces (exact, in B/s) */
        double compute = 0.1 + 2 * uniform(), latency = 20 * uniform();
        up0[i] = (10 + 90 * uniform()) * 1e6 / 8;
        down0[i] = (10 + 90 * uniform()) * 1e6 / 8;
        len += snprintf(text + len, sizeof text - (size_t)len,
                        "[agents.a%d]\ncount = 1\ncompute = %.6g GFLOPS\nlatency = %.6g ms\n", i, compute, latency);
    }
    Record r = {.backbone = backbone ? bb : INFINITY};
    if (traced) {
        /* Two changes per agent: at t1, within round 0's first step (a round is 4 steps
         * that each gossip ~100 kB at <= 100 Mbit/s, so it lasts > 8 ms), its links drop
         * to a rate whose rank among the agents is its rank at t = 0 reversed (the fastest
         * becomes the slowest), below every link's first value; at t2 one factor lowers
         * every link, keeping that order. The rebuild at round 1 thus rates the agents in
         * the reverse order of round 0's (checked below: the graph changes). Rates only go
         * down: simgrid_replay.c says why. */
        double lowest = INFINITY, common = 0.3 + 0.7 * uniform();
        for (int i = 0; i < n; i++) {
            double a = up0[i] < down0[i] ? up0[i] : down0[i];
            if (a < lowest) lowest = a;
        }
        for (int i = 0; i < n; i++) {
            double a = up0[i] < down0[i] ? up0[i] : down0[i];
            int faster = 0; /* agents rated above i at t = 0 (ties: the lower index above) */
            for (int j = 0; j < n; j++) {
                double b = up0[j] < down0[j] ? up0[j] : down0[j];
                faster += b > a || (b == a && j < i);
            }
            double t1 = 0.0005 + 0.002 * uniform(), t2 = 0.01 + 0.05 * uniform();
            double v1 = 0.9 * lowest * (faster + 1) / n;
            r.changes[r.n_changes].t = t1, r.changes[r.n_changes].agent = i;
            r.changes[r.n_changes].up = v1, r.changes[r.n_changes++].down = v1;
            r.changes[r.n_changes].t = t2, r.changes[r.n_changes].agent = i;
            r.changes[r.n_changes].up = v1 * common, r.changes[r.n_changes++].down = v1 * common;
        }
        if (write_trace(up_path, &r, n, up0, 1) || write_trace(down_path, &r, n, down0, 0)) {
            printf("case %d: cannot write the traces\n", index);
            unlink(up_path);
            unlink(down_path);
            return -1;
        }
    }
    if (server)
        len += snprintf(text + len, sizeof text - (size_t)len,
                        "[servers]\ncount = %d\ncompute = %.6g GFLOPS\nuplink = %.6g Mbit/s\ndownlink = %.6g Mbit/s\n"
                        "latency = %.6g ms\n",
                        edge ? 2 + pick(2) : 1, 1 + 10 * uniform(), 20 + 180 * uniform(), 20 + 180 * uniform(),
                        10 * uniform());
    snprintf(label, size, "case %d: %s%s%s%s%s on %d agents, %s, uplink %s, backbone %s", index, method,
             eager ? " " : "", eager ? collective : "", eager_prune ? " prune" : "", traced ? " traced" : "", n,
             own_graph ? "own graph" : graph, fifo ? "fifo" : "shared", backbone ? "finite" : "inf");
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    Scenario sc;
    RunOutcome out;
    int status = -1;
    if (inidoc_load_string("oracle.ini", text, &doc, &diag) || scenario_resolve(&doc, &sc, &diag)) {
        printf("%s: %s\n", label, diag.message);
        inidoc_free(&doc);
        goto done;
    }
    inidoc_free(&doc);
    if (sim_run(&sc, (Sink){&record_ops, &r}, &diag, &out) != HS_OK || (server && record_servers(&sc, &r, &diag) != 0)) {
        printf("%s: %s\n", label, diag.message);
        goto done;
    }
    status = simgrid_replay(&r, cm02);
    if (status == 0) status = compare(&r, label, worst, 1);
    else printf("%s: the SimGrid replay failed\n", label);
    /* a traced case is there for a rebuild that changes the graph: rounds.extra of round 1
     * counts the links it added and removed */
    if (traced && (r.n_rounds < 2 || r.rounds[1].extra <= 0)) {
        printf("%s: the rebuild at round 1 left the graph as it was\n", label);
        status = -1;
    }
    /* and for link changes under messages in flight: those whose transfer spans a change
     * of either end's links */
    for (int c = 0; traced && c < r.n_changes; c++)
        for (int t = 0; t < r.n_tasks; t++) {
            const SinkActivity *a = &r.tasks[t].a;
            if (a->kind == SINK_ACTIVITY_MESSAGE && (a->agent == r.changes[c].agent || a->to == r.changes[c].agent) &&
                a->transfer < r.changes[c].t && a->end > r.changes[c].t)
                worst->crossings++;
        }
done:
    record_free(&r);
    if (traced) {
        unlink(up_path);
        unlink(down_path);
    }
    return status;
}

/* ---- bare flow patterns on the network module ---- */

typedef struct PatternCtx {
    Record *r;
    double *arrived; /* by message */
} PatternCtx;

static void pattern_done(void *ctx, const NetworkPayload *p, double t)
{
    PatternCtx *c = ctx;
    c->arrived[p->data] = t;
}

static void pattern_traced(void *ctx, int from, int to, double bytes, double start, double transfer, double end)
{
    PatternCtx *c = ctx;
    SinkActivity a = {.kind = SINK_ACTIVITY_MESSAGE, .agent = from, .to = to, .amount = bytes, .start = start,
                      .transfer = transfer, .end = end};
    record_task(c->r, &a);
}

static int case_pattern(int index, Worst *worst, char *label, size_t size)
{
    int n = 2 + pick(10), bursts = 1 + pick(6), backbone = pick(4) == 0, fifo = pick(3) == 0;
    Record r = {.n_agents = n, .backbone = backbone ? (5 + 50 * uniform()) * 1e6 : INFINITY};
    for (int i = 0; i < n; i++) {
        r.up[i] = (1 + 20 * uniform()) * 1e6;
        r.down[i] = pick(3) == 0 ? (0.5 + 2 * uniform()) * 1e6 : (1 + 20 * uniform()) * 1e6;
        r.latency[i] = pick(2) ? 0.02 * uniform() : 0.001;
        r.compute[i] = 1e9;
    }
    snprintf(label, size, "pattern %d: %d agents, %d bursts, uplink %s, backbone %s", index, n, bursts,
             fifo ? "fifo" : "shared", backbone ? "finite" : "inf");
    double arrived[4096];
    PatternCtx ctx = {.r = &r, .arrived = arrived};
    NetworkOptions o = {.n_agents = n, .uplink = r.up, .downlink = r.down, .latency = r.latency,
                        .backbone = r.backbone, .uplink_fifo = fifo, .latency_factor = 1, .bandwidth_factor = 1};
    NetworkHooks h = {.ctx = &ctx, .done = pattern_done, .traced = pattern_traced};
    Network *net = network_create(&o, &h);
    /* bursts at random times: a fan-in to one agent, a fan-out, or random pairs */
    double starts[64];
    for (int b = 0; b < bursts; b++) starts[b] = 2 * uniform();
    for (int b = 1; b < bursts; b++)
        for (int c = b; c > 0 && starts[c - 1] > starts[c]; c--) {
            double t = starts[c];
            starts[c] = starts[c - 1];
            starts[c - 1] = t;
        }
    int messages = 0;
    for (int b = 0; b < bursts; b++) {
        double t;
        network_next_time(net, &t);
        while (t <= starts[b]) {
            network_advance(net, t);
            network_next_time(net, &t);
        }
        int kind = pick(3), hub = pick(n), count = 1 + pick(2 * n);
        for (int k = 0; k < count && messages < 4096; k++) {
            int a = pick(n), c = pick(n);
            if (kind == 0) c = hub;
            if (kind == 1) a = hub;
            if (a == c) c = (a + 1) % n;
            double bytes = (0.1 + 2 * uniform()) * 1e6;
            network_send(net, starts[b], a, c, bytes, (NetworkPayload){.kind = 0, .agent = c, .data = messages++});
        }
    }
    double t;
    while (network_next_time(net, &t) == 0 && t < INFINITY) network_advance(net, t);
    network_free(net);
    int status = simgrid_replay(&r, cm02);
    if (status == 0) status = compare(&r, label, worst, 1);
    else printf("%s: the SimGrid replay failed\n", label);
    record_free(&r);
    return status;
}

/* ---- the table of docs/results/network-oracle.md: methods as task graphs, SimGrid end to end ---- */

/* Runs text (with extra --set style overrides) into r; 0 or -1. */
static int run_scenario(const char *text, const char *const *set, int n_set, Record *r, Scenario *sc)
{
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    int status = inidoc_load_string("table.ini", text, &doc, &diag);
    for (int i = 0; status == 0 && i < n_set; i++) status = inidoc_apply_set(&doc, set[i], &diag);
    if (status == 0) status = scenario_resolve(&doc, sc, &diag);
    inidoc_free(&doc);
    RunOutcome out;
    if (status == 0) status = sim_run(sc, (Sink){&record_ops, r}, &diag, &out);
    if (status != 0) printf("table: %s\n", diag.message);
    return status ? -1 : 0;
}

static double mean_round(const Record *r)
{
    return r->n_rounds ? r->rounds[r->n_rounds - 1].t_end / r->n_rounds : NAN;
}

/* A task graph being built: tasks in the Record, their dependencies in a text buffer. */
typedef struct Graph {
    Record *r;
    char *deps;      /* per task: " d1 d2 ..." */
    size_t len, cap;
    int *offsets;    /* (tasks + 1) into deps */
} Graph;

static int graph_task(Graph *g, SinkActivityKind kind, int agent, int to, double amount, const int *deps, int n_deps)
{
    SinkActivity a = {.kind = kind, .agent = agent, .to = to, .amount = amount};
    record_task(g->r, &a);
    int id = g->r->n_tasks - 1;
    g->offsets = realloc(g->offsets, (size_t)(id + 2) * sizeof *g->offsets);
    for (int k = 0; k < n_deps; k++) {
        if (g->len + 16 > g->cap) {
            g->cap = g->cap ? g->cap * 2 : 1 << 16;
            g->deps = realloc(g->deps, g->cap);
        }
        g->len += (size_t)snprintf(g->deps + g->len, 16, " %d", deps[k]);
    }
    g->offsets[id + 1] = (int)g->len;
    return id;
}

/* Plays the graph in SimGrid; returns 0 and fills sg_end, or -1. */
static int graph_replay(Graph *g, const char *options)
{
    Record *r = g->r;
    char path[] = "/tmp/hetsim-oracle-graph-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "agents %d\n", r->n_agents);
    for (int i = 0; i < r->n_agents; i++)
        fprintf(f, "agent %d %.17g %.17g %.17g %.17g\n", i, r->compute[i], r->up[i], r->down[i], r->latency[i]);
    for (int c = 0; c < r->n_changes; c++)
        fprintf(f, "rate %.17g %d %.17g %.17g\n", r->changes[c].t, r->changes[c].agent, r->changes[c].up,
                r->changes[c].down);
    for (int t = 0; t < r->n_tasks; t++) {
        const SinkActivity *a = &r->tasks[t].a;
        if (a->kind == SINK_ACTIVITY_COMPUTE) fprintf(f, "task %d c %d %.17g 0", t, a->agent, a->amount);
        else fprintf(f, "task %d m %d %d %.17g 0", t, a->agent, a->to, a->amount);
        fprintf(f, "%.*s\n", g->offsets[t + 1] - g->offsets[t], g->deps + g->offsets[t]);
    }
    fclose(f);
    char command[1024];
    snprintf(command, sizeof command, "%s %s < %s", replay_path, options, path);
    FILE *p = popen(command, "r");
    int got = 0;
    if (p) {
        int id;
        double transfer, end;
        while (fscanf(p, " task %d %lf %lf", &id, &transfer, &end) == 3)
            if (id >= 0 && id < r->n_tasks) {
                r->tasks[id].sg_end = end;
                got++;
            }
        if (pclose(p) != 0) got = -1;
    }
    unlink(path);
    return got == r->n_tasks ? 0 : -1;
}

/* sync (dense): each step every agent computes, then a ring all-reduce of 2(N-1) steps,
 * each waiting for every hop of the one before. Returns the last task of each round. */
static void graph_sync(Graph *g, int n, int rounds, int steps, double flops, double bytes, int *round_last)
{
    int *prev = malloc((size_t)n * sizeof *prev), *next = malloc((size_t)n * sizeof *next), n_prev = 0;
    for (int q = 0; q < rounds; q++) {
        for (int s = 0; s < steps; s++) {
            for (int i = 0; i < n; i++) next[i] = graph_task(g, SINK_ACTIVITY_COMPUTE, i, -1, flops, prev, n_prev);
            memcpy(prev, next, (size_t)n * sizeof *prev);
            n_prev = n;
            for (int rs = 0; rs < 2 * (n - 1); rs++) {
                for (int k = 0; k < n; k++)
                    next[k] = graph_task(g, SINK_ACTIVITY_MESSAGE, k, (k + 1) % n, bytes / n, prev, n_prev);
                memcpy(prev, next, (size_t)n * sizeof *prev);
            }
        }
        /* a zero-work task after the last step's hops marks the round's end */
        round_last[q] = graph_task(g, SINK_ACTIVITY_COMPUTE, 0, -1, 0, prev, n_prev);
    }
    free(prev);
    free(next);
}

/* D-PSGD: agent i's step k computes and sends its model to every neighbour once its step
 * k-1 computation and its neighbours' step k-1 models are in; rounds are barriers. */
static void graph_dpsgd(Graph *g, const Topology *t, int n, int rounds, int steps, double flops, double bytes,
                        int *round_last)
{
    int *compute = malloc((size_t)n * sizeof *compute);
    int *inbox = malloc((size_t)t->offsets[n] * sizeof *inbox); /* message into i from its k-th neighbour */
    int *all = malloc((size_t)(n + t->offsets[n]) * sizeof *all), n_all = 0;
    int *deps = malloc((size_t)(1 + t->offsets[n] + n) * sizeof *deps);
    int *next_compute = malloc((size_t)n * sizeof *next_compute);
    int *next_inbox = malloc((size_t)t->offsets[n] * sizeof *next_inbox);
    for (int q = 0; q < rounds; q++)
        for (int s = 0; s < steps; s++) {
            int barrier = s == 0 && q > 0;
            for (int i = 0; i < n; i++) {
                int n_deps = 0;
                if (barrier) {
                    memcpy(deps, all, (size_t)n_all * sizeof *deps);
                    n_deps = n_all;
                } else if (s > 0) {
                    deps[n_deps++] = compute[i];
                    for (int k = t->offsets[i]; k < t->offsets[i + 1]; k++) deps[n_deps++] = inbox[k];
                }
                next_compute[i] = graph_task(g, SINK_ACTIVITY_COMPUTE, i, -1, flops, deps, n_deps);
                for (int k = t->offsets[i]; k < t->offsets[i + 1]; k++) {
                    int j = t->adj[k], m = graph_task(g, SINK_ACTIVITY_MESSAGE, i, j, bytes, deps, n_deps);
                    for (int x = t->offsets[j]; x < t->offsets[j + 1]; x++)
                        if (t->adj[x] == i) next_inbox[x] = m;
                }
            }
            memcpy(compute, next_compute, (size_t)n * sizeof *compute);
            memcpy(inbox, next_inbox, (size_t)t->offsets[n] * sizeof *inbox);
            n_all = 0;
            for (int i = 0; i < n; i++) all[n_all++] = compute[i];
            for (int k = 0; k < t->offsets[n]; k++) all[n_all++] = inbox[k];
            if (s == steps - 1) /* a zero-work task after all of them marks the round's end */
                round_last[q] = graph_task(g, SINK_ACTIVITY_COMPUTE, 0, -1, 0, all, n_all);
        }
    free(compute);
    free(inbox);
    free(all);
    free(deps);
    free(next_compute);
    free(next_inbox);
}

static double graph_mean_round(const Graph *g, const int *round_last, int rounds)
{
    return g->r->tasks[round_last[rounds - 1]].sg_end / rounds;
}

typedef struct TableCase {
    const char *label;
    const char *text;
} TableCase;

static int table(void)
{
    static const char *head =
        "[run]\nrounds = 2\nmode = timing\n[model]\nlayers = 784,256,128,10\nbatch = 64\n";
    /* agents: compute 1:2:4:8 GFLOPS; links as the cases */
    static const TableCase cases[] = {
        {"sync, 4 agents, compute 1:2:4:8, asymmetric links",
         "[run]\nmethod = sync\n[agents]\ncount = 4\ncompute = 1 GFLOPS\nuplink = 50 Mbit/s\n"
         "downlink = 100 Mbit/s\nlatency = 5 ms\nsamples = 640\n"
         "[agents.b]\ncount = 1\ncompute = 2 GFLOPS\nuplink = 20 Mbit/s\ndownlink = 80 Mbit/s\n"
         "[agents.c]\ncount = 1\ncompute = 4 GFLOPS\nuplink = 100 Mbit/s\ndownlink = 25 Mbit/s\n"
         "[agents.d]\ncount = 1\ncompute = 8 GFLOPS\nuplink = 40 Mbit/s\ndownlink = 60 Mbit/s\n"},
        {"sync, 4 agents, latencies 1/2/5/40 ms, slowest link not on the 40 ms agent",
         "[run]\nmethod = sync\n[agents]\ncount = 4\ncompute = 2 GFLOPS\nbandwidth = 100 Mbit/s\n"
         "latency = 1 ms\nsamples = 640\n"
         "[agents.b]\ncount = 1\nbandwidth = 20 Mbit/s\nlatency = 2 ms\n"
         "[agents.c]\ncount = 1\nlatency = 5 ms\n[agents.d]\ncount = 1\nlatency = 40 ms\n"},
        {"dpsgd full graph, 8 agents, one 25 Mbit/s downlink (fan-in of 7)",
         "[run]\nmethod = dpsgd\n[topology]\ngraph = full\n[agents]\ncount = 8\ncompute = 2 GFLOPS\n"
         "bandwidth = 100 Mbit/s\nlatency = 5 ms\nsamples = 640\n"
         "[agents.slow]\ncount = 1\nuplink = 100 Mbit/s\ndownlink = 25 Mbit/s\n"},
        {"dpsgd ring, 8 agents, one 25 Mbit/s downlink (fan-in of 2)",
         "[run]\nmethod = dpsgd\n[topology]\ngraph = ring\n[agents]\ncount = 8\ncompute = 2 GFLOPS\n"
         "bandwidth = 100 Mbit/s\nlatency = 5 ms\nsamples = 640\n"
         "[agents.slow]\ncount = 1\nuplink = 100 Mbit/s\ndownlink = 25 Mbit/s\n"},
        {"dpsgd torus, 9 agents, mixed links and latencies",
         "[run]\nmethod = dpsgd\n[topology]\ngraph = torus\n[agents]\ncount = 9\ncompute = 2 GFLOPS\n"
         "uplink = 50 Mbit/s\ndownlink = 100 Mbit/s\nlatency = 2 ms\nsamples = 640\n"
         "[agents.b]\ncount = 3\nuplink = 20 Mbit/s\ndownlink = 30 Mbit/s\nlatency = 20 ms\n"},
    };
    const char *cm02_links = "links --cfg=network/model:CM02 --cfg=network/TCP-gamma:0 --cfg=network/crosstraffic:0 "
                             "--cfg=network/optim:Full --log=root.thres:critical";
    const char *lv08 = "links --cfg=network/model:LV08 --cfg=network/optim:Full --log=root.thres:critical";
    printf("| case | hetsim fifo | hetsim maxmin | SimGrid CM02 | maxmin / SimGrid | fifo / SimGrid | "
           "SimGrid CM02, latency on links | SimGrid LV08 | hetsim tcp = lv08 | lv08 / SimGrid LV08 |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char text[4096];
        snprintf(text, sizeof text, "%s%s", head, cases[c].text);
        const char *fifo[] = {"network.model=fifo"}, *maxmin[] = {"network.model=maxmin"},
                   *tcp[] = {"network.model=maxmin", "network.tcp=lv08"};
        Record rf = {0}, rm = {0}, rl = {0};
        Scenario sc;
        if (run_scenario(text, fifo, 1, &rf, &sc) || run_scenario(text, tcp, 2, &rl, &sc) ||
            run_scenario(text, maxmin, 1, &rm, &sc))
            return 1;
        int n = rm.n_agents, rounds = rm.n_rounds;
        double flops = 0, bytes = 0;
        for (int t = 0; t < rm.n_tasks && (flops == 0 || bytes == 0); t++) {
            if (rm.tasks[t].a.kind == SINK_ACTIVITY_COMPUTE) flops = rm.tasks[t].a.amount;
            else bytes = rm.tasks[t].a.amount;
        }
        int steps = 0;
        for (int t = 0; t < rm.n_tasks; t++) steps += rm.tasks[t].a.kind == SINK_ACTIVITY_COMPUTE && rm.tasks[t].a.agent == 0;
        steps /= rounds;
        double sg[3];
        const char *options[] = {cm02, cm02_links, lv08};
        for (int o = 0; o < 3; o++) {
            Record g_rec = rm;
            g_rec.tasks = NULL;
            g_rec.n_tasks = g_rec.cap_tasks = 0;
            g_rec.rows = NULL;
            Graph g = {.r = &g_rec};
            g.offsets = calloc(1, sizeof *g.offsets);
            int round_last[64];
            if (strcmp(sc.method, "sync") == 0) {
                graph_sync(&g, n, rounds, steps, flops, bytes * n, round_last);
            } else {
                Topology topo;
                HsDiag diag;
                if (scenario_topology(&sc, n, &topo, &diag) != HS_OK) return 1;
                graph_dpsgd(&g, &topo, n, rounds, steps, flops, bytes, round_last);
                topology_free(&topo);
            }
            if (graph_replay(&g, options[o]) != 0) {
                printf("table: the SimGrid replay failed\n");
                return 1;
            }
            sg[o] = graph_mean_round(&g, round_last, rounds);
            free(g.deps);
            free(g.offsets);
            free(g_rec.tasks);
        }
        double f = mean_round(&rf), m = mean_round(&rm), l = mean_round(&rl);
        printf("| %s | %.3f | %.3f | %.3f | %.4f | **%.2f** | %.3f | %.3f | %.3f | %.2f |\n", cases[c].label, f, m,
               sg[0], m / sg[0], f / sg[0], sg[1], sg[2], l, l / sg[2]);
        record_free(&rf);
        record_free(&rm);
        record_free(&rl);
    }
    return 0;
}

/* ---- export: a run's trace for a replay elsewhere ---- */

/* Runs the scenario file with its overrides (maxmin only: the activity trace is the
 * maxmin model's) and writes its trace to stdout. Returns the exit status. */
static int export_trace(const char *path, char **set, int n_set)
{
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    Scenario sc;
    Record r = {0};
    RunOutcome out;
    int status = inidoc_load(path, &doc, &diag);
    for (int i = 0; status == 0 && i < n_set; i++) status = inidoc_apply_set(&doc, set[i], &diag);
    if (status == 0) status = scenario_resolve(&doc, &sc, &diag);
    inidoc_free(&doc);
    if (status == 0) {
        r.backbone = sc.network.backbone;
        status = sim_run(&sc, (Sink){&record_ops, &r}, &diag, &out);
    }
    const MethodOps *ops = status == 0 ? method_lookup(sc.method) : NULL;
    if (ops && (ops->capabilities & METHOD_USES_SERVER) && record_servers(&sc, &r, &diag) != 0) status = -1;
    if (status != 0) {
        fprintf(stderr, "oracle export: %s\n", diag.message[0] ? diag.message : "the world has too many nodes");
        record_free(&r);
        return 1;
    }
    printf("# hetsim trace of %s (oracle export), %d rounds, %d tasks\n", path, r.n_rounds, r.n_tasks);
    write_tasks(stdout, &r, 1);
    record_free(&r);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "export") == 0) return export_trace(argv[2], argv + 3, argc - 3);
    if (argc < 3) {
        fprintf(stderr, "usage: oracle REPLAY random SEED COUNT\n");
        return 2;
    }
    replay_path = argv[1];
    if (strcmp(argv[2], "random") == 0 && argc == 5) {
        rng_state = strtoull(argv[3], NULL, 10) * 2654435761u + 88172645463325252ull;
        int count = atoi(argv[4]), failed = 0;
        Worst worst = {0};
        for (int i = 0; i < count; i++) {
            char label[256];
            int status = i % 3 == 2 ? case_pattern(i, &worst, label, sizeof label)
                                    : case_run(i, NULL, 0, &worst, label, sizeof label);
            printf("%s %s\n", status == 0 ? "ok  " : "FAIL", label);
            failed += status != 0;
        }
        /* motor's graphs rebuilt from the links and its per-link periods: a case in 15;
         * as many again with traced links, whose graph changes at the round-1 rebuild */
        int motor_cases = count / 15;
        Worst traced = {0};
        for (int i = 0; i < 2 * motor_cases; i++) {
            char label[256];
            int status = case_run(count + i, "motor", i >= motor_cases, i >= motor_cases ? &traced : &worst, label,
                                  sizeof label);
            printf("%s %s\n", status == 0 ? "ok  " : "FAIL", label);
            failed += status != 0;
        }
        count += 2 * motor_cases;
        if (motor_cases > 0)
            printf("motor with traced links (%d cases, each graph changed at the round-1 rebuild, %ld messages in "
                   "flight across a link change): largest disagreement: message %.2e, round %.2e, busy %.2e, "
                   "comm %.2e\n",
                   motor_cases, traced.crossings, traced.flow, traced.round, traced.busy, traced.comm);
        worst.flow = traced.flow > worst.flow ? traced.flow : worst.flow;
        worst.round = traced.round > worst.round ? traced.round : worst.round;
        worst.busy = traced.busy > worst.busy ? traced.busy : worst.busy;
        worst.comm = traced.comm > worst.comm ? traced.comm : worst.comm;
        printf("largest disagreement (share of the run or round length): message %.2e, round %.2e, busy %.2e, "
               "comm %.2e\n", worst.flow, worst.round, worst.busy, worst.comm);
        printf("oracle: %d of %d cases agree within 0.1 %%\n", count - failed, count);
        return failed ? 1 : 0;
    }
    if (strcmp(argv[2], "method") == 0 && argc == 6) {
        if (method_lookup(argv[3]) == NULL) {
            fprintf(stderr, "oracle: unknown method '%s'\n", argv[3]);
            return 2;
        }
        rng_state = strtoull(argv[4], NULL, 10) * 2654435761u + 88172645463325252ull;
        int count = atoi(argv[5]), failed = 0;
        Worst worst = {0};
        for (int i = 0; i < count; i++) {
            char label[256];
            int status = case_run(i, argv[3], 0, &worst, label, sizeof label);
            printf("%s %s\n", status == 0 ? "ok  " : "FAIL", label);
            failed += status != 0;
        }
        printf("largest disagreement (share of the run or round length): message %.2e, round %.2e, busy %.2e, "
               "comm %.2e\n", worst.flow, worst.round, worst.busy, worst.comm);
        printf("oracle: %d of %d %s cases agree within 0.1 %%\n", count - failed, count, argv[3]);
        return failed ? 1 : 0;
    }
    if (strcmp(argv[2], "table") == 0) return table();
    fprintf(stderr, "usage: oracle REPLAY random SEED COUNT | oracle REPLAY method NAME SEED COUNT | oracle REPLAY table | "
                    "oracle export SCENARIO [SET]...\n");
    return 2;
}
