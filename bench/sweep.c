/* sweep.c — runs per second of `hetsim sweep` on timing-mode sweeps with 1 job, 2 jobs
 * and 2 MPI ranks, and the parallel efficiency (rate with 2 / (2 x rate with 1)) from
 * the same invocation. Prints figures; never fails on time.
 *
 * Two workloads bracket what a timing sweep costs:
 *   rows    100 agents x 30 rounds of `sync`: few events per database row, so the one
 *           writer (SQLite inserts in the parent) bounds the rate;
 *   events  50 agents x 10 rounds of `localsgd` with 100 local steps: many events per
 *           row, so the simulation itself dominates.
 * For each, "engine only" is the same runs in this process into a sink that discards
 * everything: the ceiling of one core without any database.
 * The machine is shared: /proc/loadavg is printed with the figures, since another
 * process on the two cores halves any parallel speed-up. The MPI figure includes
 * mpirun's start-up, measured separately on a one-run sweep.
 * Usage: bench/sweep [RUNS_PER_WORKLOAD]   (HETSIM names the binary; default ./hetsim) */
#include "bench/bench.h"
#include "driver/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Runs every run of the sweep in path here, into the discarding sink. */
static double bench_engine_only(const char *path, int64_t *runs)
{
    IniDoc doc;
    Sweep sw;
    HsDiag diag;
    hs_diag_clear(&diag);
    if (inidoc_load(path, &doc, &diag) != HS_OK || sweep_parse(&doc, &sw, &diag) != HS_OK) {
        fprintf(stderr, "bench: %s\n", diag.message);
        return -1;
    }
    inidoc_free(&doc);
    if (sweep_resolve(&sw, &diag) != HS_OK) {
        fprintf(stderr, "bench: %s\n", diag.message);
        sweep_free(&sw);
        return -1;
    }
    double start = bench_seconds();
    for (int64_t i = 0; i < sw.n_runs; i++)
        if (sweep_run_one(&sw, i, sink_discard(), &diag) != HS_OK) {
            fprintf(stderr, "bench: %s\n", diag.message);
            break;
        }
    double seconds = bench_seconds() - start;
    *runs = sw.n_runs;
    sweep_free(&sw);
    return seconds;
}

static double bench_children_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* CPU seconds of the last bench_command: the command and every process it waited for
 * (a sweep's workers, mpirun's ranks), so a busy machine does not distort it. */
static double bench_last_cpu;

/* Wall seconds of one shell command, -1 if it failed. */
static double bench_command(const char *command)
{
    double start = bench_seconds(), cpu = bench_children_cpu();
    int rc = system(command);
    double seconds = bench_seconds() - start;
    bench_last_cpu = bench_children_cpu() - cpu;
    if (rc != 0) {
        fprintf(stderr, "bench: '%s' exited with %d\n", command, rc);
        return -1;
    }
    return seconds;
}

static void bench_loadavg(char *out, size_t size)
{
    FILE *f = fopen("/proc/loadavg", "r");
    out[0] = '\0';
    if (f == NULL) return;
    if (fgets(out, (int)size, f) == NULL) out[0] = '\0';
    fclose(f);
    char *nl = strchr(out, '\n');
    if (nl) *nl = '\0';
}

static int bench_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) return -1;
    fputs(text, f);
    return fclose(f);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 100;
    if (runs < 2) runs = 2;
    const char *hetsim = getenv("HETSIM") ? getenv("HETSIM") : "./hetsim";
    char dir[] = "/tmp/hetsim-bench-sweep-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    int have_mpi = system("command -v mpirun > /dev/null 2>&1") == 0 && sweep_mpi_compiled();
    const char *mpirun = "mpirun -np 2 --oversubscribe --allow-run-as-root";

    static const char *const names[] = {"rows", "events"};
    static const char *const bodies[] = {
        "[run]\nname = bench-rows\nmethod = sync\nseed = 1\nrounds = 30\nmode = timing\n"
        "[model]\nlayers = 784,64,10\nbatch = 50\n"
        "[agents]\ncount = 100\ncompute = lognormal(1 GFLOPS, 0.8)\n"
        "bandwidth = uniform(10 Mbit/s, 100 Mbit/s)\nlatency = 5 ms\nsamples = 500\n"
        "[sweep]\nagents.latency = 1 ms, 5 ms\nrepeat = %d\n",
        "[run]\nname = bench-events\nmethod = localsgd\nseed = 1\nrounds = 10\nmode = timing\n"
        "[model]\nlayers = 784,64,10\nbatch = 50\n[method.localsgd]\nlocal_steps = epoch\n"
        "[agents]\ncount = 50\ncompute = lognormal(1 GFLOPS, 0.8)\n"
        "bandwidth = uniform(10 Mbit/s, 100 Mbit/s)\nlatency = 5 ms\nsamples = 5000\n"
        "[sweep]\nagents.latency = 1 ms, 5 ms\nrepeat = %d\n",
    };

    char load[128];
    bench_loadavg(load, sizeof load);
    printf("sweep bench: %d runs per workload, %ld cores, loadavg before: %s\n", runs / 2 * 2,
           sysconf(_SC_NPROCESSORS_ONLN), load);
    double mpi_startup = -1;
    if (have_mpi) {
        char one[600], cmd[2048];
        snprintf(one, sizeof one, "%s/one.ini", dir);
        char text[1024];
        snprintf(text, sizeof text, bodies[0], 1);
        bench_write(one, text);
        /* A one-run sweep: what mpirun costs before and after the work. */
        snprintf(cmd, sizeof cmd, "%s %s sweep %s --db %s/one.db --quiet --set run.rounds=1 > /dev/null 2>&1",
                 mpirun, hetsim, one, dir);
        mpi_startup = bench_command(cmd);
        printf("mpirun -np 2 start-up and shut-down (2-run sweep of 1 round): %.3f s\n", mpi_startup);
    } else {
        printf("MPI: skipped (%s)\n", sweep_mpi_compiled() ? "mpirun not found" : "built without MPI");
    }
    printf("%-7s %-22s %8s %10s %10s %8s\n", "load", "how", "wall s", "runs/s", "efficiency", "cpu s");
    for (int w = 0; w < 2; w++) {
        char path[600], text[2048], cmd[2048];
        snprintf(path, sizeof path, "%s/%s.ini", dir, names[w]);
        snprintf(text, sizeof text, bodies[w], runs / 2);
        if (bench_write(path, text) != 0) return 1;
        int64_t n = 0;
        double engine = bench_engine_only(path, &n);
        if (engine > 0)
            printf("%-7s %-22s %8.3f %10.1f %10s %8.3f\n", names[w], "engine only, 1 core", engine, n / engine, "-",
                   engine);
        double one = -1;
        for (int jobs = 1; jobs <= 2; jobs++) {
            snprintf(cmd, sizeof cmd, "%s sweep %s --db %s/%s-j%d.db --jobs %d --quiet", hetsim, path, dir, names[w],
                     jobs, jobs);
            double s = bench_command(cmd);
            if (s <= 0) continue;
            char how[32], eff[32] = "-";
            snprintf(how, sizeof how, "--jobs %d", jobs);
            if (jobs == 1) one = s;
            else if (one > 0) snprintf(eff, sizeof eff, "%.2f", one / (2 * s));
            printf("%-7s %-22s %8.3f %10.1f %10s %8.3f\n", names[w], how, s, n / s, eff, bench_last_cpu);
        }
        if (have_mpi) {
            snprintf(cmd, sizeof cmd, "%s %s sweep %s --db %s/%s-mpi.db --quiet", mpirun, hetsim, path, dir, names[w]);
            double s = bench_command(cmd);
            if (s > 0) {
                char eff[32] = "-", eff_net[32] = "-";
                if (one > 0) snprintf(eff, sizeof eff, "%.2f", one / (2 * s));
                printf("%-7s %-22s %8.3f %10.1f %10s %8.3f\n", names[w], "mpirun -np 2", s, n / s, eff, bench_last_cpu);
                if (mpi_startup > 0 && s > mpi_startup && one > 0) {
                    snprintf(eff_net, sizeof eff_net, "%.2f", one / (2 * (s - mpi_startup)));
                    printf("%-7s %-22s %8.3f %10.1f %10s\n", names[w], "  minus mpirun start-up", s - mpi_startup,
                           n / (s - mpi_startup), eff_net);
                }
            }
        }
    }
    bench_loadavg(load, sizeof load);
    printf("loadavg after: %s\n", load);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench: could not remove %s\n", dir);
    return 0;
}
