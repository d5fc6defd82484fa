/* network.c — the cost of the maxmin network model. Prints figures; never fails on time.
 *
 *   dpsgd   D-PSGD on a random-regular graph (degree 4) of 10,000 agents, timing mode, one
 *           round (10 steps): 400,000 messages, each a flow that starts and ends, so
 *           800,000 flow events; the figure is flow events per second of the whole run
 *           (engine, method, network; no database). Goal: >= 1 M/s.
 *   sync    timing-mode sync with 100,000 agents, 5 rounds of 10 steps (the scale of
 *           bench/scale, without its database). Goal: < 10 s.
 * Each workload runs under maxmin (the default) and fifo, REPEAT times (default 5),
 * alternating; the medians are printed with every sample.
 * Usage: bench/network [REPEAT [dpsgd|sync]] */
#include "bench/bench.h"
#include "sim/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Wall seconds of one run of text with [network] model = model; -1 on error. */
static double bench_run(const char *text, const char *model, double *sim_time)
{
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    Scenario sc;
    char set[64];
    snprintf(set, sizeof set, "network.model=%s", model);
    if (inidoc_load_string("bench.ini", text, &doc, &diag) || inidoc_apply_set(&doc, set, &diag) ||
        scenario_resolve(&doc, &sc, &diag)) {
        fprintf(stderr, "bench: %s\n", diag.message);
        inidoc_free(&doc);
        return -1;
    }
    inidoc_free(&doc);
    RunOutcome out;
    double start = bench_seconds();
    int status = sim_run(&sc, sink_discard(), &diag, &out);
    double wall = bench_seconds() - start;
    if (status != HS_OK) {
        fprintf(stderr, "bench: %s\n", diag.message);
        return -1;
    }
    *sim_time = out.sim_time_s;
    return wall;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    int repeat = argc > 1 ? atoi(argv[1]) : 5;
    if (repeat < 1 || repeat > 100) repeat = 5;
    const int dpsgd_agents = 10000, degree = 4, steps = 10;
    char dpsgd[1024], sync[1024];
    snprintf(dpsgd, sizeof dpsgd,
             "[run]\nmethod = dpsgd\nrounds = 1\nmode = timing\n[model]\nbatch = 64\n"
             "[topology]\ngraph = random-regular\ndegree = %d\n"
             "[agents]\ncount = %d\ncompute = lognormal(2 GFLOPS, 0.8)\n"
             "bandwidth = uniform(10 Mbit/s, 100 Mbit/s)\nlatency = 1 ms\nsamples = %d\n",
             degree, dpsgd_agents, 64 * steps);
    snprintf(sync, sizeof sync,
             "[run]\nmethod = sync\nrounds = 5\nmode = timing\n[model]\nbatch = 64\n"
             "[agents]\ncount = 100000\ncompute = lognormal(2 GFLOPS, 0.8)\n"
             "bandwidth = uniform(10 Mbit/s, 100 Mbit/s)\nlatency = 1 ms\nsamples = 640\n");
    const char *models[] = {"maxmin", "fifo"};
    double events = 2.0 * dpsgd_agents * degree * steps;
    const char *only = argc > 2 ? argv[2] : NULL;
    for (int w = 0; w < 2; w++) {
        if (only && strcmp(only, w == 0 ? "dpsgd" : "sync") != 0) continue;
        const char *text = w == 0 ? dpsgd : sync;
        double samples[2][100], sim[2] = {0, 0};
        for (int r = 0; r < repeat; r++)
            for (int m = 0; m < 2; m++) {
                samples[m][r] = bench_run(text, models[m], &sim[m]);
                if (samples[m][r] < 0) return 1;
            }
        for (int m = 0; m < 2; m++) {
            printf("%-5s %-6s:", w == 0 ? "dpsgd" : "sync", models[m]);
            for (int r = 0; r < repeat; r++) printf(" %.3f", samples[m][r]);
            double mid = median(samples[m], repeat);
            if (w == 0)
                printf(" s; median %.3f s = %.2f M flow events/s (goal >= 1 M/s); virtual %.3f s\n", mid,
                       events / mid / 1e6, sim[m]);
            else
                printf(" s; median %.3f s for 100,000 agents x 5 rounds (goal < 10 s); virtual %.1f s\n", mid, sim[m]);
        }
    }
    return 0;
}
