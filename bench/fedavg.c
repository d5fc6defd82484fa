/* fedavg.c — whole timing-mode runs of `fedavg` with every client reporting, under the
 * maxmin network: each round the server's uplink carries N downloads at once and its
 * downlink N uploads (bench/fanin is the network alone). The engine, the method and the
 * network; no database (sink_discard). Prints wall and processor seconds (medians) per N
 * and the exponent of their growth (least squares on log N, log time).
 *
 * The clients: compute lognormal(1 GFLOPS, 0.5), bandwidth uniform(10, 100) Mbit/s,
 * latency uniform(1, 20) ms, 200 samples, 5 local steps of batch 32 on an MLP
 * 784-64-10 (203 KB a model); the server: 50 GFLOPS, 1 Gbit/s, 5 ms.
 *
 *   fedavg                  N = 10,000, 30,000, 100,000 x 5 rounds, medians of 3
 *   fedavg N [ROUNDS [REPEAT]]  one size (the goal: 1,000,000 x 5 rounds < 60 s)
 * Note: fedavg_round_begin (sim/methods/fl.c) puts the selected clients in order by
 * insertion sort, O(K^2) for K clients a round: from about 100,000 clients that, not the
 * network, is the cost here. Never fails on time. */
#include "bench/bench.h"
#include "sim/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wall seconds of one run (*cpu: processor seconds), -1 on error. */
static double bench_run(int n, int rounds, double *cpu, double *sim_time)
{
    char text[1024];
    snprintf(text, sizeof text,
             "[run]\nmethod = fedavg\nrounds = %d\nmode = timing\nseed = 1\n"
             "[model]\narch = mlp\nlayers = 784,64,10\nbatch = 32\n"
             "[method.fedavg]\nlocal_steps = 5\nparticipation = 1\n"
             "[agents]\ncount = %d\ncompute = lognormal(1 GFLOPS, 0.5)\n"
             "bandwidth = uniform(10 Mbit/s, 100 Mbit/s)\nlatency = uniform(1 ms, 20 ms)\nsamples = 200\n"
             "[server]\ncompute = 50 GFLOPS\nbandwidth = 1 Gbit/s\nlatency = 5 ms\n",
             rounds, n);
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    Scenario sc;
    if (inidoc_load_string("bench.ini", text, &doc, &diag) || scenario_resolve(&doc, &sc, &diag)) {
        fprintf(stderr, "bench: %s\n", diag.message);
        inidoc_free(&doc);
        return -1;
    }
    inidoc_free(&doc);
    RunOutcome out;
    double start = bench_seconds(), c0 = cpu_seconds();
    int status = engine_run(&sc, sink_discard(), &diag, &out);
    double wall = bench_seconds() - start;
    *cpu = cpu_seconds() - c0;
    if (status != HS_OK) {
        fprintf(stderr, "bench: %s\n", diag.message);
        return -1;
    }
    *sim_time = out.sim_time_s;
    return wall;
}

static void sort_doubles(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double tmp = v[j];
            v[j] = v[j - 1];
            v[j - 1] = tmp;
        }
}

static double fit_exponent(const int *n, const double *seconds, int count)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < count; i++) {
        double x = log((double)n[i]), y = log(seconds[i]);
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    return (count * sxy - sx * sy) / (count * sxx - sx * sx);
}

int main(int argc, char **argv)
{
    int sizes[8] = {10000, 30000, 100000}, count = 3, rounds = 5, repeat = 3;
    if (argc > 1) {
        sizes[0] = atoi(argv[1]);
        count = 1;
        rounds = argc > 2 ? atoi(argv[2]) : 5;
        repeat = argc > 3 ? atoi(argv[3]) : 1;
        if (sizes[0] < 1 || rounds < 1 || repeat < 1 || repeat > 16) {
            fprintf(stderr, "usage: fedavg [N [ROUNDS [REPEAT]]]\n");
            return 2;
        }
    }
    double walls[8], cpus[8];
    printf("%9s %7s %10s %10s %12s\n", "clients", "rounds", "wall s", "cpu s", "virtual s");
    for (int k = 0; k < count; k++) {
        double wall[16], cpu[16], sim = 0;
        for (int r = 0; r < repeat; r++)
            if ((wall[r] = bench_run(sizes[k], rounds, &cpu[r], &sim)) < 0) return 1;
        sort_doubles(wall, repeat);
        sort_doubles(cpu, repeat);
        walls[k] = wall[repeat / 2];
        cpus[k] = cpu[repeat / 2];
        printf("%9d %7d %10.3f %10.3f %12.3f\n", sizes[k], rounds, walls[k], cpus[k], sim);
        fflush(stdout);
    }
    if (count >= 2)
        printf("time grows as N^%.3f (wall), N^%.3f (cpu) (medians of %d; goal <= 1.15)\n",
               fit_exponent(sizes, walls, count), fit_exponent(sizes, cpus, count), repeat);
    return 0;
}
