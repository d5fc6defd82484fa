/* agents.c — memory and time per agent of a whole timing-mode run at millions of agents
 * (issue 36, item 2): the engine, the method and the maxmin network; no database
 * (sink_discard), so the figure is the simulator's own state, not SQLite's.
 *
 *   agents METHOD N [ROUNDS]   one run of METHOD (sync | localsgd | dpsgd | ...) with N
 *                              agents, ROUNDS rounds (default 5) of 10 local steps; dpsgd
 *                              on a random-regular graph of degree 4
 *   agents                     sync with 100,000 agents, 5 rounds (what `make bench` runs)
 * Prints the run's wall and processor seconds, of these the system seconds and the minor
 * page faults (the kernel's share: page faults, mostly), the peak resident set (getrusage) and the peak per agent (the peak
 * over N: the process's few MB of code and libraries included, under 10 bytes per agent
 * at a million). The agents: compute lognormal(2 GFLOPS, 0.8), bandwidth
 * uniform(10, 100) Mbit/s, latency 1 ms, 640 samples of batch 64. Never fails on time. */
#include "bench/bench.h"
#include "sim/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double agents_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc == 2 || (argc >= 3 && atoi(argv[2]) < 1)) {
        fprintf(stderr, "usage: agents [METHOD N [ROUNDS]]\n");
        return 2;
    }
    const char *method = argc > 1 ? argv[1] : "sync";
    int n = argc > 2 ? atoi(argv[2]) : 100000, rounds = argc > 3 ? atoi(argv[3]) : 5;
    char text[1024];
    snprintf(text, sizeof text,
             "[run]\nmethod = %s\nrounds = %d\nmode = timing\nseed = 1\n[model]\nbatch = 64\n"
             "[agents]\ncount = %d\ncompute = lognormal(2 GFLOPS, 0.8)\n"
             "bandwidth = uniform(10 Mbit/s, 100 Mbit/s)\nlatency = 1 ms\nsamples = 640\n%s",
             method, rounds, n, strcmp(method, "dpsgd") == 0 ? "[topology]\ngraph = random-regular\ndegree = 4\n" : "");
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    Scenario sc;
    if (inidoc_load_string("agents.ini", text, &doc, &diag) || scenario_resolve(&doc, &sc, &diag)) {
        fprintf(stderr, "agents: %s\n", diag.message);
        inidoc_free(&doc);
        return 2;
    }
    inidoc_free(&doc);
    RunOutcome out;
    struct rusage before;
    getrusage(RUSAGE_SELF, &before);
    double start = bench_seconds(), c0 = agents_cpu_seconds();
    int status = sim_run(&sc, sink_discard(), &diag, &out);
    double wall = bench_seconds() - start, cpu = agents_cpu_seconds() - c0;
    if (status != HS_OK) {
        fprintf(stderr, "agents: %s\n", diag.message);
        return 1;
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    double peak = (double)usage.ru_maxrss * 1024.0;
    double sys = (double)(usage.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                 1e-6 * (double)(usage.ru_stime.tv_usec - before.ru_stime.tv_usec);
    printf("%s %d agents x %d rounds: %.3f s wall, %.3f s cpu (%.3f s system, %ld minor faults), peak %.1f MB = "
           "%.0f B/agent, virtual %.3f s\n",
           method, n, out.rounds_done, wall, cpu, sys, usage.ru_minflt - before.ru_minflt, peak / 1e6, peak / n, out.sim_time_s);
    return 0;
}
