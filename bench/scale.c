/* scale.c — timing-mode `sync` with 10 ... 100,000 agents, 5 rounds of 10 steps, into a
 * SQLite database in a temporary folder (the writes are part of the cost). Prints wall
 * time, peak memory per agent (resident set growth / agents) and events per second. */
#include "bench/bench.h"
#include "analysis/store.h"
#include "sim/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Current resident set in bytes (from /proc/self/statm). */
static double bench_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return (double)resident * sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
    const char *method = argc > 1 ? argv[1] : "sync";
    char dir[] = "/tmp/hetsim-scale-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    printf("%8s %10s %10s %12s %14s\n", "agents", "wall s", "rounds", "events/s", "peak B/agent");
    for (int n = 10; n <= 100000; n *= 10) {
        char text[1024], db[512];
        /* 640 samples of batch 64: 10 steps per round */
        snprintf(text, sizeof text,
                 "[run]\nmethod = %s\nrounds = 5\nmode = timing\n[model]\nbatch = 64\n"
                 "[agents]\ncount = %d\ncompute = lognormal(2 GFLOPS, 0.8)\n"
                 "bandwidth = uniform(10 Mbit/s, 100 Mbit/s)\nlatency = 1 ms\nsamples = 640\n",
                 method, n);
        snprintf(db, sizeof db, "%s/scale-%d.db", dir, n);
        IniDoc doc;
        HsDiag diag;
        hs_diag_clear(&diag);
        Scenario sc;
        if (inidoc_load_string("scale.ini", text, &doc, &diag) || scenario_resolve(&doc, &sc, &diag)) {
            fprintf(stderr, "%s\n", diag.message);
            return 1;
        }
        inidoc_free(&doc);
        Store *store;
        if (store_open(db, &store, &diag)) {
            fprintf(stderr, "%s\n", diag.message);
            return 1;
        }
        double rss_before = bench_rss();
        double start = bench_seconds();
        RunOutcome out;
        int status = sim_run(&sc, store_sink(store), &diag, &out);
        double elapsed = bench_seconds() - start;
        struct rusage usage;
        getrusage(RUSAGE_SELF, &usage);
        double peak = (double)usage.ru_maxrss * 1024.0;
        store_close(store);
        if (status) {
            fprintf(stderr, "%s\n", diag.message);
            return 1;
        }
        /* sync: n compute events + 1 reduce per step, 10 steps, 5 rounds */
        double events = 5.0 * 10 * (n + 1);
        double growth = peak - rss_before;
        printf("%8d %10.3f %10d %12.3g %14.0f\n", n, elapsed, out.rounds_done, events / elapsed,
               growth > 0 ? growth / n : 0);
        unlink(db);
        char side[600];
        snprintf(side, sizeof side, "%s-wal", db);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", db);
        unlink(side);
    }
    rmdir(dir);
    return 0;
}
