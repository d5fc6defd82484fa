/* sweep.c — how close `hetsim sweep` runs to the engine's own speed on timing-mode sweeps,
 * with 1 job, 2 jobs and 2 MPI ranks. Prints figures; never fails on time.
 *
 * Workloads (each a sweep of RUNS timing-mode runs, two latency values x RUNS/2 seeds):
 *   small   16 agents x 10 rounds of `sync`: short runs, the per-run costs (claim, begin,
 *           end, resolved keys) weigh most;
 *   small-summary   the same runs with `[run] record = summary` (docs/recording.md): no
 *           agent_rounds rows, every other row as small writes it;
 *   rows    100 agents x 30 rounds of `sync`: about 3,300 database rows per 2 ms of
 *           simulation, the writer's worst case;
 *   events  50 agents x 10 rounds of `localsgd`, an epoch of local steps per round: many
 *           events per row, the simulation dominates.
 * For each:
 *   engine  the runs in this process into a sink that discards everything: the ceiling;
 *   writer  the writer alone: the runs' records (simulated beforehand into memory)
 *           claimed and replayed into a new database as `hetsim sweep` writes them, with
 *           no worker, pipe or poll: the floor of the writer's CPU per run;
 *   jobs 1, jobs 2   `hetsim sweep --jobs N` run in this process (cli_sweep), so the
 *           writer's CPU (this process) and the workers' (its children) are measured
 *           apart with getrusage.
 * The machine these run on is shared (other builds and tests on its 2 cores), so wall
 * times wander; CPU seconds per run do not. Besides the measured rates the bench prints
 * the rates those CPU figures give on 2 idle cores: 1 job pipelines one worker and the
 * writer, so its rate is 1 / max(worker, writer); 2 jobs share 2 cores among two workers
 * and the writer, 2 / (workers + writer), but never more than 1 / writer. The ratio to
 * the engine is against 1 / engine CPU per run, the efficiency is rate(2 jobs) /
 * (2 x rate(1 job)). Each figure is the median of REPEAT measurements; the writer's line
 * also says how many rows a run writes (counted in the writer-alone database).
 * Usage: bench/sweep [RUNS [REPEAT [WORKLOADS]]]   (default 200 3 small,small-summary,rows,events; HETSIM
 * names the binary for MPI, HETSIM_BENCH_MPI=0 skips it) */
#include "bench/bench.h"
#include "cli/cli.h"
#include "analysis/store.h"
#include "driver/sweep.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double cpu_of(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* The sweep of the file at path, expanded and resolved into *sw; -1 (said) on failure. */
static int bench_load_sweep(const char *path, Sweep *sw)
{
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    if (inidoc_load(path, &doc, &diag) != HS_OK || sweep_parse(&doc, sw, &diag) != HS_OK) {
        fprintf(stderr, "bench: %s\n", diag.message);
        return -1;
    }
    inidoc_free(&doc);
    if (sweep_resolve(sw, &diag) != HS_OK) {
        fprintf(stderr, "bench: %s\n", diag.message);
        sweep_free(sw);
        return -1;
    }
    return 0;
}

/* Runs every run of the sweep in path here, into the discarding sink; wall and CPU s. */
static int bench_engine_only(const char *path, int64_t *runs, double *wall, double *cpu)
{
    Sweep sw;
    HsDiag diag;
    hs_diag_clear(&diag);
    if (bench_load_sweep(path, &sw) != 0) return -1;
    /* as a worker runs them: one runner, so a point's repeats reuse its scenario */
    SweepRunner runner;
    sweep_runner_init(&runner, &sw);
    double start = bench_seconds(), cpu0 = cpu_of(RUSAGE_SELF);
    for (int64_t i = 0; i < sw.n_runs; i++)
        if (sweep_runner_run(&runner, i, sink_discard(), &diag) != HS_OK) {
            fprintf(stderr, "bench: %s\n", diag.message);
            break;
        }
    *wall = bench_seconds() - start;
    *cpu = cpu_of(RUSAGE_SELF) - cpu0;
    sweep_runner_free(&runner);
    *runs = sw.n_runs;
    sweep_free(&sw);
    return 0;
}

/* The wire's flush into one growing buffer (bench_store_only). */
typedef struct BenchCapture {
    unsigned char *data;
    size_t len, cap;
} BenchCapture;

static int bench_capture(void *ctx, const void *data, size_t len)
{
    BenchCapture *c = ctx;
    if (c->len + len > c->cap) {
        size_t cap = c->cap ? c->cap : 1 << 20;
        while (cap < c->len + len) cap *= 2;
        unsigned char *grown = realloc(c->data, cap);
        if (grown == NULL) return HS_E_NOMEM;
        c->data = grown;
        c->cap = cap;
    }
    memcpy(c->data + c->len, data, len);
    c->len += len;
    return HS_OK;
}

static void bench_finished(void *ctx, SweepReplay *replay, int64_t index, int status, const char *message) {}

/* The writer alone: the sweep's runs are simulated into memory first (their record
 * stream, as workers send it), then timed: a new database at db, the sweep and its runs
 * claimed as `hetsim sweep` claims them, the records replayed into the batching store,
 * the file closed. No worker, pipe or poll: what the writer costs by itself. CPU s. */
static int bench_store_only(const char *path, const char *db, double *cpu)
{
    Sweep sw;
    HsDiag diag;
    hs_diag_clear(&diag);
    if (bench_load_sweep(path, &sw) != 0) return -1;
    int status = HS_OK;
    BenchCapture capture = {0};
    SweepWire wire = {0};
    SweepRunner runner;
    sweep_runner_init(&runner, &sw);
    for (int64_t i = 0; status == HS_OK && i < sw.n_runs; i++) {
        Sink sink = sweep_wire_sink(&wire, i, bench_capture, &capture);
        int run_status = sweep_runner_run(&runner, i, sink, &diag);
        sweep_wire_run_returned(&wire);
        status = sweep_wire_finished(&wire, i, run_status, diag.message);
    }
    sweep_runner_free(&runner);
    sweep_wire_free(&wire);
    /* where each claim's records end: after its last run's FINISHED (found before the
     * clock starts: the writer never scans) */
    int64_t n_claims = (sw.n_runs + SWEEP_CLAIM_BATCH_MAX - 1) / SWEEP_CLAIM_BATCH_MAX;
    size_t *ends = calloc((size_t)n_claims + 1, sizeof *ends);
    if (ends == NULL) status = HS_E_NOMEM;
    for (size_t at = 0, finished = 0; status == HS_OK && at + 5 <= capture.len;) {
        uint32_t len;
        memcpy(&len, capture.data + at, sizeof len);
        if (capture.data[at + 4] == 8 /* FINISHED */ && ++finished % SWEEP_CLAIM_BATCH_MAX == 0)
            ends[finished / SWEEP_CLAIM_BATCH_MAX - 1] = at + sizeof len + len;
        at += sizeof len + len;
    }
    if (ends != NULL) ends[n_claims - 1] = capture.len;
    Store *store = NULL;
    double cpu0 = cpu_of(RUSAGE_SELF);
    if (status == HS_OK) status = store_open(db, &store, &diag);
    StoreSweepClaim claim = {.sweep = sw.id, .runs = sw.n_runs, .points = sw.n_points, .repeat = sw.repeat};
    int existed = 0;
    if (status == HS_OK) status = store_claim_sweep(store, &claim, &sw.first_run, &existed);
    if (status == HS_OK) status = store_set_batching(store, 1);
    const char *points[SWEEP_CLAIM_BATCH_MAX];
    int64_t ids[SWEEP_CLAIM_BATCH_MAX];
    StoreClaim claims[SWEEP_CLAIM_BATCH_MAX];
    SweepReplay replay;
    sweep_replay_init(&replay, &sw, store != NULL ? store_sink(store) : sink_discard(), bench_finished, NULL);
    /* claims of SWEEP_CLAIM_BATCH_MAX runs, each followed by those runs' records */
    size_t at = 0;
    for (int64_t first = 0; status == HS_OK && first < sw.n_runs; first += SWEEP_CLAIM_BATCH_MAX) {
        int n = 0;
        for (int64_t i = first; i < sw.n_runs && n < SWEEP_CLAIM_BATCH_MAX; i++, n++) {
            points[n] = sw.labels[i];
            ids[n] = sw.first_run + i;
        }
        status = store_claim_runs(store, sw.id, n, points, ids, claims, NULL, 0);
        size_t end = ends[first / SWEEP_CLAIM_BATCH_MAX], used = 0;
        if (status == HS_OK) status = sweep_replay(&replay, capture.data + at, end - at, &used, &diag);
        at += used;
    }
    if (status == HS_OK) status = store_set_batching(store, 0);
    store_close(store);
    *cpu = cpu_of(RUSAGE_SELF) - cpu0;
    if (status != HS_OK) fprintf(stderr, "bench: store only: %s\n", diag.message[0] ? diag.message : store_error_message(store));
    sweep_replay_free(&replay);
    free(ends);
    free(capture.data);
    sweep_free(&sw);
    return status == HS_OK ? 0 : -1;
}

/* `hetsim sweep PATH --db DB --jobs JOBS --quiet` in this process: wall, this process's
 * CPU (the writer: resolving, claiming, replaying, SQLite) and the workers'. */
static int bench_sweep(const char *path, const char *db, int jobs, double *wall, double *writer, double *workers)
{
    char jobs_text[16];
    snprintf(jobs_text, sizeof jobs_text, "%d", jobs);
    char *argv[] = {(char *)path, "--db", (char *)db, "--jobs", jobs_text, "--quiet", NULL};
    double start = bench_seconds(), self = cpu_of(RUSAGE_SELF), children = cpu_of(RUSAGE_CHILDREN);
    int status = cli_sweep(6, argv);
    *wall = bench_seconds() - start;
    *writer = cpu_of(RUSAGE_SELF) - self;
    *workers = cpu_of(RUSAGE_CHILDREN) - children;
    return status;
}

static double bench_command(const char *command, double *cpu)
{
    double start = bench_seconds(), children = cpu_of(RUSAGE_CHILDREN);
    int rc = system(command);
    double seconds = bench_seconds() - start;
    *cpu = cpu_of(RUSAGE_CHILDREN) - children;
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

/* Rows of the database at db per run: every table's rows but the store's own (sweeps,
 * schema_columns), over runs; -1 if it cannot be read. */
static double bench_rows_per_run(const char *db, int64_t runs)
{
    static const char sql[] =
        "SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM agents) + (SELECT count(*) FROM rounds)"
        " + (SELECT count(*) FROM agent_rounds) + (SELECT count(*) FROM pairings) + (SELECT count(*) FROM metrics)"
        " + (SELECT count(*) FROM run_params)";
    sqlite3 *handle = NULL;
    sqlite3_stmt *stmt = NULL;
    double rows = -1;
    if (sqlite3_open_v2(db, &handle, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(handle, sql, -1, &stmt, NULL) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
        rows = (double)sqlite3_column_int64(stmt, 0) / (double)runs;
    sqlite3_finalize(stmt);
    sqlite3_close(handle);
    return rows;
}

static int bench_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) return -1;
    fputs(text, f);
    return fclose(f);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Whether name is one of the comma-separated list. */
static int bench_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p != NULL && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

#define MAX_REPEAT 15

int main(int argc, char **argv)
{
    sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);  /* as hetsim's main does */
    int runs = argc > 1 ? atoi(argv[1]) : 200;
    int repeat = argc > 2 ? atoi(argv[2]) : 3;
    if (runs < 2) runs = 2;
    if (repeat < 1) repeat = 1;
    if (repeat > MAX_REPEAT) repeat = MAX_REPEAT;
    const char *hetsim = getenv("HETSIM") ? getenv("HETSIM") : "./hetsim";
    char dir[] = "/tmp/hetsim-bench-sweep-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    const char *only = argc > 3 ? argv[3] : NULL;  /* comma-separated workload names */
    const char *mpi_env = getenv("HETSIM_BENCH_MPI");
    int have_mpi = system("command -v mpirun > /dev/null 2>&1") == 0 && sweep_mpi_compiled() &&
                   !(mpi_env && strcmp(mpi_env, "0") == 0);
    const char *mpirun = "mpirun -np 2 --oversubscribe --allow-run-as-root";

    static const char *const names[] = {"small", "small-summary", "rows", "events"};
    static const char *const bodies[] = {
        "[run]\nname = bench-small\nmethod = sync\nseed = 1\nrounds = 10\nmode = timing\n"
        "[model]\nlayers = 784,64,10\nbatch = 50\n"
        "[agents]\ncount = 16\ncompute = lognormal(1 GFLOPS, 0.8)\n"
        "bandwidth = uniform(10 Mbit/s, 100 Mbit/s)\nlatency = 5 ms\nsamples = 500\n"
        "[sweep]\nagents.latency = 1 ms, 5 ms\nrepeat = %d\n",
        /* small's runs; only what is written differs */
        "[run]\nname = bench-small\nmethod = sync\nseed = 1\nrounds = 10\nmode = timing\nrecord = summary\n"
        "[model]\nlayers = 784,64,10\nbatch = 50\n"
        "[agents]\ncount = 16\ncompute = lognormal(1 GFLOPS, 0.8)\n"
        "bandwidth = uniform(10 Mbit/s, 100 Mbit/s)\nlatency = 5 ms\nsamples = 500\n"
        "[sweep]\nagents.latency = 1 ms, 5 ms\nrepeat = %d\n",
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
    printf("sweep bench: %d runs per workload, median of %d, %ld cores, loadavg before: %s\n", runs / 2 * 2, repeat,
           sysconf(_SC_NPROCESSORS_ONLN), load);
    printf("%-13s %-10s %9s %9s %9s %10s %10s\n", "load", "how", "wall s", "runs/s", "cpu ms/run", "writer ms", "worker ms");
    for (int w = 0; w < (int)(sizeof names / sizeof names[0]); w++) {
        if (only != NULL && !bench_listed(only, names[w])) continue;
        char path[600], text[2048];
        snprintf(path, sizeof path, "%s/%s.ini", dir, names[w]);
        snprintf(text, sizeof text, bodies[w], runs / 2);
        if (bench_write(path, text) != 0) return 1;
        double e_wall[MAX_REPEAT], e_cpu[MAX_REPEAT], w_cpu[MAX_REPEAT];
        double s_wall[2][MAX_REPEAT], s_writer[2][MAX_REPEAT], s_workers[2][MAX_REPEAT];
        int64_t n = 0;
        double rows_per_run = -1;
        for (int r = 0; r < repeat; r++) {
            if (bench_engine_only(path, &n, &e_wall[r], &e_cpu[r]) != 0) return 1;
            char store_db[700], rm[800];
            snprintf(store_db, sizeof store_db, "%s/%s-store-%d.db", dir, names[w], r);
            if (bench_store_only(path, store_db, &w_cpu[r]) != 0) return 1;
            if (r == 0) rows_per_run = bench_rows_per_run(store_db, n);
            snprintf(rm, sizeof rm, "rm -f %s %s-wal %s-shm", store_db, store_db, store_db);
            if (system(rm) != 0) fprintf(stderr, "bench: could not remove %s\n", store_db);
            for (int jobs = 1; jobs <= 2; jobs++) {
                char db[700], cmd[800];
                snprintf(db, sizeof db, "%s/%s-j%d-%d.db", dir, names[w], jobs, r);
                if (bench_sweep(path, db, jobs, &s_wall[jobs - 1][r], &s_writer[jobs - 1][r],
                                &s_workers[jobs - 1][r]) != 0)
                    return 1;
                snprintf(cmd, sizeof cmd, "rm -f %s %s-wal %s-shm", db, db, db);
                if (system(cmd) != 0) fprintf(stderr, "bench: could not remove %s\n", db);
            }
        }
        double engine_wall = median(e_wall, repeat), engine_cpu = median(e_cpu, repeat) / (double)n;
        printf("%-13s %-10s %9.3f %9.1f %9.3f %10s %10s\n", names[w], "engine", engine_wall, n / engine_wall,
               1e3 * engine_cpu, "-", "-");
        double store_cpu = median(w_cpu, repeat) / (double)n;
        printf("%-13s %-10s %9s %9s %9.3f %10.3f %10s   (records replayed from memory into a new file; %.0f rows/run)\n",
               names[w], "writer", "-", "-", 1e3 * store_cpu, 1e3 * store_cpu, "-", rows_per_run);
        double writer[2], worker[2], rate_wall[2];
        for (int j = 0; j < 2; j++) {
            double wall = median(s_wall[j], repeat);
            writer[j] = median(s_writer[j], repeat) / (double)n;
            worker[j] = median(s_workers[j], repeat) / (double)n;
            rate_wall[j] = n / wall;
            printf("%-13s %-10s %9.3f %9.1f %9.3f %10.3f %10.3f\n", names[w], j == 0 ? "--jobs 1" : "--jobs 2", wall,
                   rate_wall[j], 1e3 * (writer[j] + worker[j]), 1e3 * writer[j], 1e3 * worker[j]);
        }
        double engine_rate = 1 / engine_cpu;
        double idle1 = 1 / (worker[0] > writer[0] ? worker[0] : writer[0]);
        double idle2 = 2 / (worker[1] + writer[1]);
        if (idle2 > 1 / writer[1]) idle2 = 1 / writer[1];
        printf("%-13s on 2 idle cores (from CPU): engine %.1f runs/s, 1 job %.1f runs/s (%.2f of the engine), "
               "2 jobs %.1f runs/s (efficiency %.2f)\n",
               names[w], engine_rate, idle1, idle1 / engine_rate, idle2, idle2 / (2 * idle1));
        printf("%-13s as measured (wall, shared machine): 1 job %.2f of the engine, 2 jobs efficiency %.2f\n", names[w],
               rate_wall[0] / (n / engine_wall), rate_wall[1] / (2 * rate_wall[0]));
        if (have_mpi) {
            char cmd[2048];
            double cpu = 0;
            snprintf(cmd, sizeof cmd, "%s %s sweep %s --db %s/%s-mpi.db --quiet", mpirun, hetsim, path, dir, names[w]);
            double s = bench_command(cmd, &cpu);
            if (s > 0)
                printf("%-13s %-10s %9.3f %9.1f %9.3f   (mpirun's start-up included; measured once)\n", names[w],
                       "mpirun -np 2", s, n / s, 1e3 * cpu / (double)n);
        }
    }
    bench_loadavg(load, sizeof load);
    printf("loadavg after: %s\n", load);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench: could not remove %s\n", dir);
    return 0;
}
