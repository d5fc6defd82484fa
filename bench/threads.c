/* threads.c — train mode's worker threads on a whole run (issue #18): one round of
 * scenarios/comdml-paper.ini (16 agents, CNN 16,32 k5, 60,000 Fashion-MNIST images) with
 * 1, 2, ... threads up to the machine's cores, alternated REPS times so a passing load hits
 * every count alike. Prints the median wall seconds per thread count, the speed-up and
 * the parallel efficiency T1 / (N T_N), and whether the database rows (every column but
 * the wall-clock ones) are identical to the one-thread run's. Asserts nothing.
 *
 * Usage: bench/threads [REPS] [SCENARIO]   (HETSIM names the binary, default ./hetsim;
 * DATA the dataset folder) */
#include "base/hash.h"
#include "bench/bench.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS_MAX_REPS 15
#define THREADS_MAX_COUNT 16

static double threads_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* FNV-1a of every row of the result tables in written order, wall-clock columns left out. */
static uint64_t threads_rows_hash(const char *db_path)
{
    static const char *const queries[] = {
        "select name, method, seed, mode, config, status, sim_time_s, final_accuracy from runs order by id",
        "select * from agents order by rowid", "select * from rounds order by rowid",
        "select * from agent_rounds order by rowid",
        "select round, slow, fast, split, predicted_s, actual_s, solver from pairings order by rowid",
        "select * from metrics order by rowid"};
    sqlite3 *db;
    uint64_t hash = 14695981039346656037ull;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return 0;
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, queries[q], -1, &st, NULL) != SQLITE_OK) continue;
        while (sqlite3_step(st) == SQLITE_ROW)
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                const unsigned char *text = sqlite3_column_text(st, c);
                hash = hash_fnv1a(hash, text ? (const char *)text : "NULL", text ? strlen((const char *)text) + 1 : 5);
            }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return hash;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 3;
    const char *scenario = argc > 2 ? argv[2] : "scenarios/comdml-paper.ini";
    if (reps < 1) reps = 1;
    if (reps > THREADS_MAX_REPS) reps = THREADS_MAX_REPS;
    const char *hetsim = getenv("HETSIM") && *getenv("HETSIM") ? getenv("HETSIM") : "./hetsim";
    const char *data = getenv("DATA") && *getenv("DATA") ? getenv("DATA") : "/usr/share/datasets/fashion-mnist";
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int counts = cores < 2 ? 2 : cores > THREADS_MAX_COUNT ? THREADS_MAX_COUNT : (int)cores;
    char dir[] = "/tmp/hetsim-bench-threads-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    double wall[THREADS_MAX_COUNT][THREADS_MAX_REPS];
    uint64_t rows[THREADS_MAX_COUNT];
    for (int r = 0; r < reps; r++)
        for (int n = 1; n <= counts; n++) {
            char db[256], cmd[2048];
            snprintf(db, sizeof db, "%s/threads-%d-%d.db", dir, n, r);
            snprintf(cmd, sizeof cmd,
                     "OPENBLAS_NUM_THREADS=1 '%s' run '%s' --set run.rounds=1 --set 'data.path=%s' --threads %d "
                     "--db '%s' --quiet",
                     hetsim, scenario, data, n, db);
            double start = bench_seconds();
            if (system(cmd) != 0) {
                fprintf(stderr, "threads: '%s' failed\n", cmd);
                return 1;
            }
            wall[n - 1][r] = bench_seconds() - start;
            if (r == 0) rows[n - 1] = threads_rows_hash(db);
            unlink(db);
        }
    rmdir(dir);
    printf("one round of %s, whole process (load, train, evaluate, SQLite), median of %d; %ld cores\n", scenario,
           reps, cores);
    double one = threads_median(wall[0], reps);
    for (int n = 1; n <= counts; n++) {
        double t = threads_median(wall[n - 1], reps);
        printf("  %2d thread%s %8.2f s wall   speed-up %.2fx   efficiency %.2f   rows %s\n", n, n > 1 ? "s" : " ", t,
               one / t, one / (n * t), rows[n - 1] == rows[0] && rows[0] != 0 ? "identical" : "DIFFER");
    }
    return 0;
}
