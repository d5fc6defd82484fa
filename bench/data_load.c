/* data_load.c — how fast the data-set readers load (issue #32: CIFAR-10's 60,000 images
 * in under 1 s, a 200 MB LEAF JSON in under 5 s; issue #36: Fashion-MNIST decoded once
 * per machine). Prints figures, asserts nothing.
 *
 *   cifar10   the binary distribution's six files (50,000 + 10,000 records of random
 *             bytes, 184 MB) written to a temporary folder, then dataset_open, and
 *             dataset_probe (what each scenario resolution reads of them);
 *   leaf      a FEMNIST-like LEAF JSON of about 200 MB (784 grey values a sample, 80 %
 *             written "1.0" as FEMNIST's white background, the rest k/255 with 16-17
 *             digits as Python prints them; 100 samples a writer) and a small test file,
 *             then dataset_open without the cache (the streaming parse), and with a warm
 *             cache;
 *   fashion   the installed Fashion-MNIST (/usr/share/datasets/fashion-mnist, or DATA)
 *             decoded from its gzip'd IDX files (no cache) and read from a warm cache,
 *             alternating, REPS times each.
 *   run       (only when asked: `data_load REPS run`) a whole `hetsim run
 *             scenarios/central-mlp.ini --set run.rounds=1` with HETSIM_DATA_CACHE=off and
 *             with a warm cache, alternating.
 * Every figure is the median of REPS (default 5) loads with the files in the page cache
 * (written or read just before), so they are the readers' speed, not the disk's. The
 * machine is shared: medians, A/B interleaved where two things are compared, and the CPU
 * seconds (user + system) next to the wall seconds: under a load of other work the CPU
 * time is the fairer figure.
 *
 * Usage: bench/data_load [REPS] [run]   (TMPDIR for the generated files, HETSIM for `run`) */
#include "bench/bench.h"
#include "models/dataset.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_REPS 51

static double median(double *v, int n)
{
    double sorted[MAX_REPS];
    memcpy(sorted, v, sizeof(double) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(double), bench_compare_doubles);
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

static void print_samples(const double *v, int n)
{
    printf(" [");
    for (int i = 0; i < n; i++) printf("%s%.3f", i ? " " : "", v[i]);
    printf("]");
}

static uint64_t lcg_state = 0x9e3779b97f4a7c15ull;
static uint32_t lcg_next(void)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(lcg_state >> 33);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* User + system seconds of the children waited for so far. */
static double children_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return 0;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static double last_cpu; /* the CPU seconds of the last timed_open or timed_run */

/* Loads kind from path once; returns the wall seconds (last_cpu the CPU seconds), or -1
 * on error. */
static double timed_open(DatasetKind kind, const char *path, const DataOptions *options, int *n_train, int *n_test)
{
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    double t = bench_seconds(), cpu = cpu_seconds();
    int status = dataset_open(kind, path, options, &ds, &diag);
    t = bench_seconds() - t;
    last_cpu = cpu_seconds() - cpu;
    if (status != HS_OK) {
        fprintf(stderr, "data_load: %s\n", diag.message);
        return -1;
    }
    if (n_train) *n_train = ds->n_train;
    if (n_test) *n_test = ds->n_test;
    dataset_free(ds);
    return t;
}

static void remove_tree(const char *dir)
{
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0) fprintf(stderr, "data_load: could not remove %s\n", dir);
}

static int bench_cifar(const char *tmp, int reps)
{
    char dir[512], file[600];
    snprintf(dir, sizeof dir, "%s/hetsim-bench-cifar-XXXXXX", tmp);
    if (!mkdtemp(dir)) return 1;
    static const char *const names[6] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                         "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"};
    unsigned char *records = malloc(10000 * 3073);
    for (int f = 0; f < 6; f++) {
        for (size_t k = 0; k < 10000 * 3073; k++) records[k] = (unsigned char)lcg_next();
        for (int r = 0; r < 10000; r++) records[(size_t)r * 3073] = (unsigned char)(lcg_next() % 10);
        snprintf(file, sizeof file, "%s/%s", dir, names[f]);
        FILE *out = fopen(file, "wb");
        if (!out || fwrite(records, 3073, 10000, out) != 10000 || fclose(out) != 0) {
            free(records);
            remove_tree(dir);
            return 1;
        }
    }
    free(records);
    double t[MAX_REPS], u[MAX_REPS];
    int n_train = 0, n_test = 0;
    for (int i = 0; i < reps; i++) {
        if ((t[i] = timed_open(DATA_CIFAR10, dir, NULL, &n_train, &n_test)) < 0) return 1;
        u[i] = last_cpu;
    }
    printf("cifar10: %d + %d images (184 MB) loaded in median %.3f s wall, %.3f s CPU (goal < 1 s)", n_train, n_test,
           median(t, reps), median(u, reps));
    print_samples(t, reps);
    print_samples(u, reps);
    printf("\n");
    /* what a scenario's resolution pays for the same folder (dataset_probe: the sizes) */
    DataSpec spec = {.dataset = DATA_CIFAR10};
    snprintf(spec.path, sizeof spec.path, "%s", dir);
    for (int i = 0; i < reps; i++) {
        DatasetInfo info;
        HsDiag diag;
        hs_diag_clear(&diag);
        double start = bench_seconds();
        if (dataset_probe(&spec, &info, &diag) != HS_OK) {
            fprintf(stderr, "data_load: %s\n", diag.message);
            remove_tree(dir);
            return 1;
        }
        t[i] = bench_seconds() - start;
        dataset_info_free(&info);
    }
    printf("cifar10: probed (resolution: the files' sizes) in median %.6f s wall\n", median(t, reps));
    remove_tree(dir);
    return 0;
}

/* Writes a FEMNIST-like LEAF JSON of about target bytes; returns the samples written. */
static long write_leaf_json(const char *file, double target, int per_writer, long *bytes)
{
    FILE *out = fopen(file, "w");
    if (!out) return -1;
    char value[256][24];
    for (int k = 0; k < 256; k++) {
        double v = k / 255.0;
        snprintf(value[k], sizeof value[k], "%.16g", v);
        if (strtod(value[k], NULL) != v) snprintf(value[k], sizeof value[k], "%.17g", v);
        if (k == 255) snprintf(value[k], sizeof value[k], "1.0");
        if (k == 0) snprintf(value[k], sizeof value[k], "0.0");
    }
    /* the samples per writer are known, the writers not yet: user_data first, then the
     * lists (LEAF's own order is users, num_samples, user_data; any order is valid) */
    fprintf(out, "{\"user_data\": {");
    long samples = 0;
    int writers = 0;
    while ((double)ftell(out) < target) {
        fprintf(out, "%s\"f%04d_%02d\": {\"x\": [", writers ? ", " : "", writers, writers % 100);
        for (int s = 0; s < per_writer; s++) {
            fputs(s ? ", [" : "[", out);
            for (int j = 0; j < 784; j++) {
                uint32_t r = lcg_next();
                const char *v = r % 10 < 8 ? value[255] : value[(r >> 8) % 256];
                if (j) fputs(", ", out);
                fputs(v, out);
            }
            fputc(']', out);
        }
        fputs("], \"y\": [", out);
        for (int s = 0; s < per_writer; s++) fprintf(out, "%s%u", s ? ", " : "", lcg_next() % 62);
        fputs("]}", out);
        samples += per_writer;
        writers++;
    }
    fprintf(out, "}, \"users\": [");
    for (int w = 0; w < writers; w++) fprintf(out, "%s\"f%04d_%02d\"", w ? ", " : "", w, w % 100);
    fprintf(out, "], \"num_samples\": [");
    for (int w = 0; w < writers; w++) fprintf(out, "%s%d", w ? ", " : "", per_writer);
    fprintf(out, "]}");
    *bytes = ftell(out);
    if (fclose(out) != 0) return -1;
    return samples;
}

static int bench_leaf(const char *tmp, int reps)
{
    char dir[512], sub[600], file[700];
    snprintf(dir, sizeof dir, "%s/hetsim-bench-leaf-XXXXXX", tmp);
    if (!mkdtemp(dir)) return 1;
    long train_bytes, test_bytes;
    snprintf(sub, sizeof sub, "%s/train", dir);
    mkdir(sub, 0700);
    snprintf(file, sizeof file, "%s/all_data_0_niid_0_keep_0_train_9.json", sub);
    double t0 = bench_seconds();
    long samples = write_leaf_json(file, 200e6, 100, &train_bytes);
    snprintf(sub, sizeof sub, "%s/test", dir);
    mkdir(sub, 0700);
    snprintf(file, sizeof file, "%s/all_data_0_niid_0_keep_0_test_9.json", sub);
    long test_samples = write_leaf_json(file, 2e6, 10, &test_bytes);
    if (samples < 0 || test_samples < 0) {
        remove_tree(dir);
        return 1;
    }
    printf("leaf: wrote %.1f MB (%ld samples) + %.1f MB test in %.1f s\n", train_bytes / 1e6, samples,
           test_bytes / 1e6, bench_seconds() - t0);
    char cache[600];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    DataOptions parse = {.cache_dir = ""}, cached = {.cache_dir = cache};
    double t[MAX_REPS], c[MAX_REPS], u[MAX_REPS], v[MAX_REPS];
    int n_train = 0;
    if (timed_open(DATA_LEAF, dir, &cached, NULL, NULL) < 0) return 1; /* fills the cache */
    for (int i = 0; i < reps; i++) {
        if ((t[i] = timed_open(DATA_LEAF, dir, &parse, &n_train, NULL)) < 0) return 1;
        u[i] = last_cpu;
        if ((c[i] = timed_open(DATA_LEAF, dir, &cached, NULL, NULL)) < 0) return 1;
        v[i] = last_cpu;
    }
    printf("leaf: %.1f MB JSON, %d samples parsed in median %.3f s wall, %.3f s CPU = %.0f MB/s of CPU (goal < 5 s)",
           train_bytes / 1e6, n_train, median(t, reps), median(u, reps),
           (train_bytes + test_bytes) / 1e6 / median(u, reps));
    print_samples(t, reps);
    print_samples(u, reps);
    printf("\nleaf: the same from the decoded-data cache in median %.3f s wall, %.3f s CPU", median(c, reps),
           median(v, reps));
    print_samples(c, reps);
    print_samples(v, reps);
    printf("\n");
    remove_tree(dir);
    return 0;
}

static int bench_fashion(const char *tmp, int reps)
{
    const char *data = getenv("DATA") ? getenv("DATA") : "/usr/share/datasets/fashion-mnist";
    char cache[512];
    snprintf(cache, sizeof cache, "%s/hetsim-bench-cache-XXXXXX", tmp);
    if (!mkdtemp(cache)) return 1;
    DataOptions decode = {.cache_dir = ""}, cached = {.cache_dir = cache};
    double t[MAX_REPS], c[MAX_REPS], u[MAX_REPS], v[MAX_REPS];
    int n_train = 0, n_test = 0;
    if (timed_open(DATA_FASHION_MNIST, data, &cached, NULL, NULL) < 0) {
        printf("fashion: skipped (no Fashion-MNIST in %s)\n", data);
        remove_tree(cache);
        return 0;
    }
    for (int i = 0; i < reps; i++) {
        if ((t[i] = timed_open(DATA_FASHION_MNIST, data, &decode, &n_train, &n_test)) < 0) return 1;
        u[i] = last_cpu;
        if ((c[i] = timed_open(DATA_FASHION_MNIST, data, &cached, NULL, NULL)) < 0) return 1;
        v[i] = last_cpu;
    }
    printf("fashion: %d + %d images decoded from gzip'd IDX in median %.3f s wall, %.3f s CPU", n_train, n_test,
           median(t, reps), median(u, reps));
    print_samples(t, reps);
    print_samples(u, reps);
    printf("\nfashion: read from the decoded-data cache in median %.3f s wall, %.3f s CPU (%.1fx less CPU)",
           median(c, reps), median(v, reps), median(u, reps) / median(v, reps));
    print_samples(c, reps);
    print_samples(v, reps);
    printf("\n");
    remove_tree(cache);
    return 0;
}

/* One `hetsim run` of the MLP epoch into db (removed first); the seconds from exec to
 * exit, -1 on failure. */
static double timed_run(const char *hetsim, const char *cache_env, const char *db)
{
    unlink(db);
    double t = bench_seconds(), cpu = children_cpu_seconds();
    pid_t pid = fork();
    if (pid == 0) {
        setenv("HETSIM_DATA_CACHE", cache_env, 1);
        execl(hetsim, hetsim, "run", "scenarios/central-mlp.ini", "--set", "run.rounds=1", "--db", db, "--quiet",
              (char *)NULL);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    last_cpu = children_cpu_seconds() - cpu;
    return bench_seconds() - t;
}

static int bench_run(const char *tmp, int reps)
{
    const char *hetsim = getenv("HETSIM") ? getenv("HETSIM") : "./hetsim";
    char cache[512];
    snprintf(cache, sizeof cache, "%s/hetsim-bench-cache-XXXXXX", tmp);
    if (!mkdtemp(cache)) return 1;
    double off[MAX_REPS], on[MAX_REPS], off_cpu[MAX_REPS], on_cpu[MAX_REPS];
    char db[600];
    snprintf(db, sizeof db, "%s/run.db", cache);
    if (timed_run(hetsim, cache, db) < 0) {
        printf("run: skipped (%s run scenarios/central-mlp.ini failed)\n", hetsim);
        remove_tree(cache);
        return 0;
    }
    for (int i = 0; i < reps; i++) {
        if ((off[i] = timed_run(hetsim, "off", db)) < 0) return 1;
        off_cpu[i] = last_cpu;
        if ((on[i] = timed_run(hetsim, cache, db)) < 0) return 1;
        on_cpu[i] = last_cpu;
    }
    printf("run: one MLP epoch (scenarios/central-mlp.ini) as a whole process, median wall %.3f s decoding, %.3f s "
           "with the cache (%.1f %% less); CPU %.3f s and %.3f s (%.1f %% less)",
           median(off, reps), median(on, reps), 100.0 * (1 - median(on, reps) / median(off, reps)),
           median(off_cpu, reps), median(on_cpu, reps), 100.0 * (1 - median(on_cpu, reps) / median(off_cpu, reps)));
    print_samples(off, reps);
    print_samples(on, reps);
    print_samples(off_cpu, reps);
    print_samples(on_cpu, reps);
    printf("\n");
    remove_tree(cache);
    return 0;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1 || reps > MAX_REPS) reps = 5;
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    int failed = bench_cifar(tmp, reps) || bench_leaf(tmp, reps) || bench_fashion(tmp, reps);
    if (!failed && argc > 2 && strcmp(argv[2], "run") == 0) failed = bench_run(tmp, reps);
    return failed ? 1 : 0;
}
