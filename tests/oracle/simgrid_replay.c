/* simgrid_replay.c — SimGrid as an independent oracle for hetsim's network model.
 * Reads a platform and a task graph (tests/oracle/README in the header of oracle.c, format
 * below), builds the same platform in SimGrid (one host per agent, a private uplink and
 * downlink per agent, an optional backbone every route crosses), plays the tasks and
 * prints when each one started transferring and ended.
 *
 * Input, one record per line ('#' comments):
 *   agents N
 *   backbone BYTES_PER_S | inf
 *   agent I FLOPS UPLINK DOWNLINK LATENCY     (SI units: FLOP/s, B/s, s)
 *   rate TIME I UPLINK DOWNLINK               agent I's links take these bandwidths at TIME
 *                                             (a bandwidth trace; after its agent line, TIME
 *                                             > 0, each no higher than the link's last value)
 *   task ID c AGENT FLOPS START DEPS...       a computation on AGENT's host
 *   task ID m FROM TO BYTES START DEPS...     a message FROM -> TO
 * A task starts once every listed task has ended and not before START; ids are 0..T-1 in
 * order. Output: `task ID TRANSFER_START END` (computations: their start).
 *
 * Latency, by the first argument:
 *   delay  the sending actor waits the message's latency max(latency_a, latency_b), then
 *          puts it on links without latency (every flow then has SimGrid's penalty 1, so
 *          shares are plain max-min: what hetsim's maxmin computes);
 *   links  each route also crosses a private link of latency max(latency_a, latency_b) and
 *          no bandwidth limit (1e15 B/s): SimGrid's own latency phase, and under CM02 shares
 *          weighted by 1 / latency (its RTT unfairness).
 * The remaining arguments go to SimGrid (--cfg=network/model:CM02 ...).
 *
 * Rates only go down: SimGrid bounds a communication's rate by its route's bandwidth when
 * it starts (CM02's user bound), so a link raised later would keep the flows under way at
 * their old rate, where hetsim's maxmin shares the new capacity out. A lowered link binds
 * them through its capacity in both, so the shares agree; a raise is refused (exit 2). */
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Task {
    int id;
    char kind;
    int agent, to;
    double amount, start;
    int n_deps, *deps;
    int n_dependents;
    sg_sem_t done;       /* released once per dependent */
    double transfer, end;
} Task;

static Task *tasks;
static int n_tasks, n_agents, delay_latency;
static double *latency;

typedef struct RateChange {
    double time, up, down;
    int agent;
} RateChange;

static RateChange *changes;
static int n_changes;

static double message_latency(const Task *t)
{
    return latency[t->agent] > latency[t->to] ? latency[t->agent] : latency[t->to];
}

static void task_wait_and_sleep(Task *t)
{
    for (int k = 0; k < t->n_deps; k++) sg_sem_acquire(tasks[t->deps[k]].done);
    if (simgrid_get_clock() < t->start) sg_actor_sleep_until(t->start);
}

static void task_finish(Task *t)
{
    t->end = simgrid_get_clock();
    for (int k = 0; k < t->n_dependents; k++) sg_sem_release(t->done);
}

static void run_task(int argc, char **argv)
{
    (void)argc;
    Task *t = &tasks[atoi(argv[1])];
    task_wait_and_sleep(t);
    if (t->kind == 'c') {
        t->transfer = simgrid_get_clock();
        sg_actor_execute(t->amount);
    } else {
        char name[32];
        snprintf(name, sizeof name, "m%d", t->id);
        if (delay_latency) sg_actor_sleep_for(message_latency(t));
        t->transfer = delay_latency ? simgrid_get_clock() : simgrid_get_clock() + message_latency(t);
        sg_mailbox_put(sg_mailbox_by_name(name), t, (long)llround(t->amount));
    }
    task_finish(t);
}

/* A bandwidth trace's step: the agent's two links change at the change's time. */
static void run_rate_change(int argc, char **argv)
{
    (void)argc;
    const RateChange *c = &changes[atoi(argv[1])];
    sg_actor_sleep_until(c->time);
    char name[32];
    snprintf(name, sizeof name, "up%d", c->agent);
    sg_link_set_bandwidth(sg_link_by_name(name), c->up);
    snprintf(name, sizeof name, "down%d", c->agent);
    sg_link_set_bandwidth(sg_link_by_name(name), c->down);
}

static void run_receiver(int argc, char **argv)
{
    (void)argc;
    char name[32];
    snprintf(name, sizeof name, "m%s", argv[1]);
    sg_mailbox_get(sg_mailbox_by_name(name));
}

static int read_input(FILE *in, double **flops, double **up, double **down, double *backbone)
{
    char line[65536];
    int cap = 0;
    *backbone = INFINITY;
    while (fgets(line, sizeof line, in)) {
        char *p = line;
        while (*p == ' ') p++;
        if (*p == '#' || *p == '\n' || *p == '\0') continue;
        char word[32];
        int used;
        if (sscanf(p, "%31s%n", word, &used) != 1) continue;
        p += used;
        if (strcmp(word, "agents") == 0) {
            n_agents = atoi(p);
            *flops = calloc((size_t)n_agents, sizeof **flops);
            *up = calloc((size_t)n_agents, sizeof **up);
            *down = calloc((size_t)n_agents, sizeof **down);
            latency = calloc((size_t)n_agents, sizeof *latency);
        } else if (strcmp(word, "backbone") == 0) {
            *backbone = strtod(p, NULL);
        } else if (strcmp(word, "agent") == 0) {
            int i;
            double f, u, d, l;
            if (sscanf(p, "%d %lf %lf %lf %lf", &i, &f, &u, &d, &l) != 5 || i < 0 || i >= n_agents) return -1;
            (*flops)[i] = f, (*up)[i] = u, (*down)[i] = d, latency[i] = l;
        } else if (strcmp(word, "rate") == 0) {
            RateChange c;
            if (sscanf(p, "%lf %d %lf %lf", &c.time, &c.agent, &c.up, &c.down) != 4 || c.agent < 0 ||
                c.agent >= n_agents || !(c.time > 0))
                return -1;
            /* no raise (the header says why): against the agent line and the earlier changes */
            double up_now = (*up)[c.agent], down_now = (*down)[c.agent], last = 0;
            for (int k = 0; k < n_changes; k++)
                if (changes[k].agent == c.agent) {
                    up_now = changes[k].up, down_now = changes[k].down, last = changes[k].time;
                }
            if (c.up > up_now || c.down > down_now || c.time <= last) return -1;
            changes = realloc(changes, (size_t)(n_changes + 1) * sizeof *changes);
            changes[n_changes++] = c;
        } else if (strcmp(word, "task") == 0) {
            if (n_tasks == cap) {
                cap = cap ? cap * 2 : 256;
                tasks = realloc(tasks, (size_t)cap * sizeof *tasks);
            }
            Task *t = &tasks[n_tasks];
            memset(t, 0, sizeof *t);
            char kind;
            if (sscanf(p, "%d %c%n", &t->id, &kind, &used) != 2 || t->id != n_tasks) return -1;
            p += used;
            t->kind = kind;
            t->to = -1;
            if (kind == 'c' && sscanf(p, "%d %lf %lf%n", &t->agent, &t->amount, &t->start, &used) != 3) return -1;
            if (kind == 'm' && sscanf(p, "%d %d %lf %lf%n", &t->agent, &t->to, &t->amount, &t->start, &used) != 4)
                return -1;
            if (kind != 'c' && kind != 'm') return -1;
            p += used;
            int dep;
            int dep_cap = 0;
            while (sscanf(p, "%d%n", &dep, &used) == 1) {
                p += used;
                if (dep < 0 || dep >= n_tasks) return -1;
                if (t->n_deps == dep_cap) {
                    dep_cap = dep_cap ? dep_cap * 2 : 4;
                    t->deps = realloc(t->deps, (size_t)dep_cap * sizeof *t->deps);
                }
                t->deps[t->n_deps++] = dep;
                tasks[dep].n_dependents++;
            }
            n_tasks++;
        } else {
            return -1;
        }
    }
    return n_agents > 0 ? 0 : -1;
}

static void write_platform(const char *path, const double *flops, const double *up, const double *down,
                           double backbone)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n<zone id=\"world\" routing=\"Full\">\n");
    for (int i = 0; i < n_agents; i++) fprintf(f, "<host id=\"h%d\" speed=\"%.17gf\"/>\n", i, flops[i]);
    for (int i = 0; i < n_agents; i++) {
        fprintf(f, "<link id=\"up%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", i, up[i]);
        fprintf(f, "<link id=\"down%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", i, down[i]);
    }
    if (isfinite(backbone)) fprintf(f, "<link id=\"backbone\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", backbone);
    for (int i = 0; i < n_agents && !delay_latency; i++)
        for (int j = 0; j < n_agents; j++) {
            double lat = latency[i] > latency[j] ? latency[i] : latency[j];
            if (i != j) fprintf(f, "<link id=\"lat%d_%d\" bandwidth=\"1e15Bps\" latency=\"%.17gs\"/>\n", i, j, lat);
        }
    for (int i = 0; i < n_agents; i++)
        for (int j = 0; j < n_agents; j++) {
            if (i == j) continue;
            fprintf(f, "<route src=\"h%d\" dst=\"h%d\" symmetrical=\"NO\"><link_ctn id=\"up%d\"/>", i, j, i);
            if (isfinite(backbone)) fputs("<link_ctn id=\"backbone\"/>", f);
            if (!delay_latency) fprintf(f, "<link_ctn id=\"lat%d_%d\"/>", i, j);
            fprintf(f, "<link_ctn id=\"down%d\"/></route>\n", j);
        }
    fputs("</zone>\n</platform>\n", f);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "delay") != 0 && strcmp(argv[1], "links") != 0)) {
        fprintf(stderr, "usage: simgrid_replay delay|links [--cfg=...] < TASKS\n");
        return 2;
    }
    delay_latency = strcmp(argv[1], "delay") == 0;
    double *flops = NULL, *up = NULL, *down = NULL, backbone;
    if (read_input(stdin, &flops, &up, &down, &backbone) != 0) {
        fprintf(stderr, "simgrid_replay: bad input\n");
        return 2;
    }
    int sg_argc = argc - 1;
    char **sg_argv = argv + 1; /* argv[1] plays the program name */
    simgrid_init(&sg_argc, sg_argv);
    char path[] = "/tmp/hetsim-oracle-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    write_platform(path, flops, up, down, backbone);
    simgrid_load_platform(path);
    if (getenv("HETSIM_ORACLE_KEEP")) fprintf(stderr, "platform kept in %s\n", path);
    else unlink(path);
    for (int i = 0; i < n_tasks; i++) {
        Task *t = &tasks[i];
        t->done = sg_sem_init(0);
        char host[32], id[32];
        snprintf(host, sizeof host, "h%d", t->agent);
        snprintf(id, sizeof id, "%d", i);
        char *args[] = {"task", id};
        sg_actor_create("task", sg_host_by_name(host), run_task, 2, args);
        if (t->kind == 'm') {
            snprintf(host, sizeof host, "h%d", t->to);
            char *rargs[] = {"receiver", id};
            sg_actor_create("receiver", sg_host_by_name(host), run_receiver, 2, rargs);
        }
    }
    for (int i = 0; i < n_changes; i++) {
        char host[32], id[32];
        snprintf(host, sizeof host, "h%d", changes[i].agent);
        snprintf(id, sizeof id, "%d", i);
        char *args[] = {"rate", id};
        sg_actor_create("rate", sg_host_by_name(host), run_rate_change, 2, args);
    }
    simgrid_run();
    for (int i = 0; i < n_tasks; i++) printf("task %d %.17g %.17g\n", i, tasks[i].transfer, tasks[i].end);
    return 0;
}
