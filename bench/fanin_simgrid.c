/* fanin_simgrid.c — bench/fanin's pattern played in SimGrid, for a side-by-side speed
 * comparison. Reads the pattern that `fanin dump N FILE` writes (tests/oracle/
 * simgrid_replay.c's input format: `agents`, `backbone`, `agent I FLOPS UP DOWN LATENCY`,
 * `task ID m FROM TO BYTES START` without dependencies), builds the same platform as
 * simgrid_replay (a private uplink and downlink per host, `delay` latency: the sender
 * sleeps max(latency_a, latency_b) then puts on links without latency) but declares only
 * the routes the messages use (simgrid_replay declares all N^2, which a fan-in of 10,000
 * cannot afford), plays it, and prints `task ID TRANSFER END` per message (for
 * `fanin compare`) and on stderr the wall seconds of the platform's loading and of the
 * simulation.
 *
 * `make` builds this file without SimGrid (the benchmarks link against hetsim only): then
 * it only says how to build the real one, by hand:
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -DFANIN_SIMGRID bench/fanin_simgrid.c \
 *      -o build/fanin_simgrid $(pkg-config --cflags --libs simgrid) -lm
 * Usage: fanin_simgrid FILE [--cfg=...]   (the oracle's configuration when none is given:
 *        CM02, network/optim:Full, precision 1e-9, no TCP gamma, no cross traffic) */
#ifndef FANIN_SIMGRID
#include <stdio.h>

int main(void)
{
    puts("fanin_simgrid: built without SimGrid; bench/fanin_simgrid.c's header says how to build it");
    return 0;
}
#else
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct Message {
    int from, to;
    double bytes, start, transfer, end;
} Message;

static Message *messages;
static int n_messages, n_agents;
static double *up, *down, *latency, backbone = INFINITY;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sender(int argc, char **argv)
{
    (void)argc;
    Message *m = &messages[atoi(argv[1])];
    char name[32];
    snprintf(name, sizeof name, "m%s", argv[1]);
    if (simgrid_get_clock() < m->start) sg_actor_sleep_until(m->start);
    sg_actor_sleep_for(latency[m->from] > latency[m->to] ? latency[m->from] : latency[m->to]);
    m->transfer = simgrid_get_clock();
    sg_mailbox_put(sg_mailbox_by_name(name), m, (long)llround(m->bytes));
    m->end = simgrid_get_clock();
}

static void receiver(int argc, char **argv)
{
    (void)argc;
    char name[32];
    snprintf(name, sizeof name, "m%s", argv[1]);
    sg_mailbox_get(sg_mailbox_by_name(name));
}

static int read_pattern(FILE *in)
{
    char line[512];
    int cap = 0;
    while (fgets(line, sizeof line, in)) {
        int i, from, to;
        double f, u, d, l, bytes, start;
        char inf[8];
        if (line[0] == '#') continue;
        if (sscanf(line, "agents %d", &n_agents) == 1) {
            up = calloc((size_t)n_agents, sizeof *up);
            down = calloc((size_t)n_agents, sizeof *down);
            latency = calloc((size_t)n_agents, sizeof *latency);
        } else if (sscanf(line, "backbone %lf", &f) == 1) {
            backbone = f;
        } else if (sscanf(line, "backbone %7s", inf) == 1) {
            backbone = INFINITY;
        } else if (sscanf(line, "agent %d %lf %lf %lf %lf", &i, &f, &u, &d, &l) == 5 && i >= 0 && i < n_agents) {
            up[i] = u, down[i] = d, latency[i] = l;
        } else if (sscanf(line, "task %d m %d %d %lf %lf", &i, &from, &to, &bytes, &start) == 5) {
            if (n_messages == cap) {
                cap = cap ? 2 * cap : 1024;
                messages = realloc(messages, (size_t)cap * sizeof *messages);
            }
            messages[n_messages++] = (Message){.from = from, .to = to, .bytes = bytes, .start = start};
        } else {
            return -1;
        }
    }
    return n_agents > 0 ? 0 : -1;
}

static int cmp_route(const void *a, const void *b)
{
    const long *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

static void write_platform(const char *path)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n<zone id=\"world\" routing=\"Full\">\n");
    for (int i = 0; i < n_agents; i++) fprintf(f, "<host id=\"h%d\" speed=\"1e9f\"/>\n", i);
    for (int i = 0; i < n_agents; i++) {
        fprintf(f, "<link id=\"up%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", i, up[i]);
        fprintf(f, "<link id=\"down%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", i, down[i]);
    }
    if (isfinite(backbone)) fprintf(f, "<link id=\"backbone\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", backbone);
    long *routes = malloc((size_t)n_messages * sizeof *routes);
    for (int k = 0; k < n_messages; k++) routes[k] = (long)messages[k].from * n_agents + messages[k].to;
    qsort(routes, (size_t)n_messages, sizeof *routes, cmp_route);
    for (int k = 0; k < n_messages; k++) {
        if (k > 0 && routes[k] == routes[k - 1]) continue;
        int i = (int)(routes[k] / n_agents), j = (int)(routes[k] % n_agents);
        fprintf(f, "<route src=\"h%d\" dst=\"h%d\" symmetrical=\"NO\"><link_ctn id=\"up%d\"/>", i, j, i);
        if (isfinite(backbone)) fputs("<link_ctn id=\"backbone\"/>", f);
        fprintf(f, "<link_ctn id=\"down%d\"/></route>\n", j);
    }
    free(routes);
    fputs("</zone>\n</platform>\n", f);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fanin_simgrid FILE [--cfg=...]\n");
        return 2;
    }
    double t0 = seconds();
    FILE *in = fopen(argv[1], "r");
    if (in == NULL || read_pattern(in) != 0) {
        fprintf(stderr, "fanin_simgrid: cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(in);
    char *defaults[] = {argv[0],
                        "--cfg=network/model:CM02",
                        "--cfg=network/TCP-gamma:0",
                        "--cfg=network/crosstraffic:0",
                        "--cfg=network/optim:Full",
                        "--cfg=maxmin/precision:1e-9",
                        "--cfg=surf/precision:1e-9",
                        "--log=root.thres:critical"};
    int sg_argc = argc > 2 ? argc - 1 : (int)(sizeof defaults / sizeof *defaults);
    char **sg_argv = argc > 2 ? argv + 1 : defaults;
    if (argc > 2) sg_argv[0] = argv[0];
    simgrid_init(&sg_argc, sg_argv);
    char path[] = "/tmp/hetsim-fanin-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    write_platform(path);
    simgrid_load_platform(path);
    unlink(path);
    for (int k = 0; k < n_messages; k++) {
        char host[32], id[32];
        snprintf(id, sizeof id, "%d", k);
        char *args[] = {"sender", id};
        snprintf(host, sizeof host, "h%d", messages[k].from);
        sg_actor_create("sender", sg_host_by_name(host), sender, 2, args);
        char *rargs[] = {"receiver", id};
        snprintf(host, sizeof host, "h%d", messages[k].to);
        sg_actor_create("receiver", sg_host_by_name(host), receiver, 2, rargs);
    }
    double t1 = seconds();
    simgrid_run();
    double t2 = seconds();
    for (int k = 0; k < n_messages; k++) printf("task %d %.17g %.17g\n", k, messages[k].transfer, messages[k].end);
    fprintf(stderr, "fanin_simgrid: %d messages: set-up %.3f s, simulation %.3f s wall\n", n_messages, t1 - t0,
            t2 - t1);
    return 0;
}
#endif
