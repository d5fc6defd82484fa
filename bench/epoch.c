/* epoch.c — a whole hetsim run against PyTorch's bare training loop on the same number
 * of images (issue #3's goal for the MLP: no slower; issue #18's for the CNN: 1.1x
 * faster). Prints figures, asserts nothing.
 *
 * mlp (default): `hetsim run scenarios/central-mlp.ini --set run.rounds=1`, one epoch of
 * 60,000 images, 938 steps of batch 64.
 * cnn: one round of 8 local-SGD agents with 1,000 images each on the CNN of
 * scenarios/central-cnn.ini (conv 32 then 64 channels, kernel 5, hidden 128, batch 64) on
 * [run] kernels = onednn:
 * 8 x 16 steps, the last of each agent 40 images.
 *
 * hetsim runs as a process, timed from exec to exit: loading the gzip'd IDX files,
 * partitioning, training, the evaluation on the 10,000 test images and the SQLite writes
 * are all inside. PyTorch: bench/torch_epoch.py times only its training loop (same model,
 * batches, optimiser and learning rate, one thread); its loading, start-up and any
 * evaluation are not counted. PyTorch runs in several configurations (glibc malloc's
 * defaults or thresholds that keep freed buffers; NCHW or channels_last for the CNN),
 * hetsim and they take turns, REPS times each, and the medians are compared, against
 * PyTorch's best configuration (least CPU time) and its default, so a passing load on the
 * shared machine hits all alike. Both wall-clock and
 * CPU seconds are reported (hetsim's from the child's rusage, PyTorch's process time of
 * the loop): on a machine shared with other work, CPU time is the fairer of the two.
 *
 * mlp16: one round of scenarios/quickstart.ini under localsgd (16 agents x 3,750 images,
 * MLP 784-256-128-10, batch 64) on all the machine's cores (issue #18's goal: 2x), against
 * PyTorch's per-agent loop over the same 16 x 3,750 images on one thread.
 *
 * Usage: bench/epoch [REPS] [mlp|cnn|mlp16]   (HETSIM names the binary, default ./hetsim;
 * PYTHON the interpreter with torch, default python3; DATA the dataset folder) */
#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define EPOCH_MAX_REPS 25

typedef struct EpochTime {
    double wall, cpu; /* seconds; wall < 0: the run failed */
} EpochTime;

/* User + system seconds of the children waited for so far. */
static double epoch_children_cpu(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return 0;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static double epoch_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const char *epoch_env(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* The hetsim arguments of each mode. */
/* mlp and cnn compare one thread with PyTorch's one thread */
static const char mlp_run[] = "scenarios/central-mlp.ini --set run.rounds=1 --threads 1";
static const char mlp16_run[] = "scenarios/quickstart.ini --set run.method=localsgd --set run.rounds=1";
/* on oneDNN's kernels, the fast ones ([run] kernels' default is the reference, OpenBLAS) */
static const char cnn_run[] = "scenarios/central-cnn.ini --set run.method=localsgd "
                              "--set method.localsgd.local_steps=epoch --set agents.count=8 "
                              "--set agents.samples=1000 --set run.rounds=1 --set run.kernels=onednn --threads 1";

/* One hetsim run into a fresh database in dir. */
static EpochTime epoch_hetsim(const char *hetsim, const char *run, const char *dir, const char *data, int rep)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=1 '%s' run %s --set 'data.path=%s' --db '%s/epoch-%d.db' --quiet",
             hetsim, run, data, dir, rep);
    double cpu = epoch_children_cpu(), start = bench_seconds();
    int status = system(cmd);
    EpochTime t = {bench_seconds() - start, epoch_children_cpu() - cpu};
    if (status != 0) t.wall = -1;
    return t;
}

/* PyTorch's configurations: the memory format (the CNN only) and glibc's malloc, with
 * its defaults (which unmap the big activation buffers after each step and fault them in
 * again) or keeping freed memory. The best of them is PyTorch's best bare loop. */
typedef struct TorchConfig {
    const char *name, *format, *env;
} TorchConfig;

#define EPOCH_MALLOC_TUNED "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296"
static const TorchConfig epoch_configs_cnn[] = {
    {"contiguous, malloc default", "contiguous", ""},
    {"channels_last, malloc default", "cl", ""},
    {"contiguous, malloc tuned", "contiguous", EPOCH_MALLOC_TUNED},
    {"channels_last, malloc tuned", "cl", EPOCH_MALLOC_TUNED},
};
static const TorchConfig epoch_configs_mlp[] = {
    {"malloc default", "contiguous", ""},
    {"malloc tuned", "contiguous", EPOCH_MALLOC_TUNED},
};
#define EPOCH_MAX_CONFIGS 4

/* PyTorch's bare loop, as the script reports it; wall < 0 if torch is unavailable or the
 * script failed. OMP_NUM_THREADS=1: torch.set_num_threads(1) alone leaves an OpenMP
 * worker that takes a fifth of a core beside the loop (and counts in its CPU time). */
static EpochTime epoch_torch(const char *python, const char *data, const char *mode, const TorchConfig *c)
{
    EpochTime t = {-1, -1};
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=1 %s '%s' bench/torch_epoch.py '%s' 1 %s %s 2>/dev/null", c->env,
             python, data, mode, c->format);
    FILE *p = popen(cmd, "r");
    if (!p) return t;
    if (fscanf(p, "%lf %lf", &t.wall, &t.cpu) != 2) t.wall = -1;
    if (pclose(p) != 0) t.wall = -1;
    return t;
}

static void epoch_load(const char *when)
{
    double load[3];
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) == 3)
        printf("  load average %s: %.2f %.2f %.2f (%ld cores)\n", when, load[0], load[1], load[2],
               sysconf(_SC_NPROCESSORS_ONLN));
    fclose(f);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    const char *mode = argc > 2 ? argv[2] : "mlp";
    if (strcmp(mode, "mlp") != 0 && strcmp(mode, "cnn") != 0 && strcmp(mode, "mlp16") != 0) {
        fprintf(stderr, "usage: epoch [REPS] [mlp|cnn|mlp16]\n");
        return 2;
    }
    const int cnn = !strcmp(mode, "cnn"), mlp16 = !strcmp(mode, "mlp16");
    if (reps < 1) reps = 1;
    if (reps > EPOCH_MAX_REPS) reps = EPOCH_MAX_REPS;
    const char *hetsim = epoch_env("HETSIM", "./hetsim"), *python = epoch_env("PYTHON", "python3");
    const char *data = epoch_env("DATA", "/usr/share/datasets/fashion-mnist");
    const char *run = cnn ? cnn_run : mlp16 ? mlp16_run : mlp_run;
    const TorchConfig *configs = cnn ? epoch_configs_cnn : epoch_configs_mlp;
    const int n_configs = cnn ? 4 : 2;
    char dir[] = "/tmp/hetsim-bench-epoch-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    double ours_wall[EPOCH_MAX_REPS], ours_cpu[EPOCH_MAX_REPS];
    double theirs_wall[EPOCH_MAX_CONFIGS][EPOCH_MAX_REPS], theirs_cpu[EPOCH_MAX_CONFIGS][EPOCH_MAX_REPS];
    if (mlp16)
        printf("one round of 16 local-SGD agents x 3,750 images, MLP 784-256-128-10, batch 64 "
               "(scenarios/quickstart.ini, method localsgd; hetsim on every core, %ld here), median of %d:\n",
               sysconf(_SC_NPROCESSORS_ONLN), reps);
    else if (cnn)
        printf("one round of 8 local-SGD agents x 1,000 images, CNN 32,64 k5 hidden 128, batch 64 "
               "(scenarios/central-cnn.ini), median of %d:\n",
               reps);
    else
        printf("one epoch of scenarios/central-mlp.ini (MLP 784-256-128-10, batch 64, 60,000 images), median of %d:\n",
               reps);
    epoch_load("at the start");
    int have_torch = 1;
    for (int r = 0; r < reps; r++) {
        EpochTime t = epoch_hetsim(hetsim, run, dir, data, r);
        if (t.wall < 0) {
            fprintf(stderr, "epoch: %s run %s failed (is %s installed and built?)\n", hetsim, run, data);
            return 1;
        }
        ours_wall[r] = t.wall, ours_cpu[r] = t.cpu;
        for (int c = 0; have_torch && c < n_configs; c++) {
            t = epoch_torch(python, data, mode, &configs[c]);
            if (t.wall < 0) have_torch = 0;
            theirs_wall[c][r] = t.wall, theirs_cpu[c][r] = t.cpu;
        }
    }
    char cleanup[128];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
    if (system(cleanup) != 0) fprintf(stderr, "epoch: could not remove %s\n", dir);
    double wall = epoch_median(ours_wall, reps), cpu = epoch_median(ours_cpu, reps);
    printf("  hetsim run, whole process (load + train + evaluate + SQLite): %7.3f s wall, %7.3f s CPU\n", wall, cpu);
    if (!have_torch) {
        printf("  PyTorch comparison skipped: `%s bench/torch_epoch.py` fails (python3-torch, python3-numpy?)\n",
               python);
        epoch_load("at the end");
        return 0;
    }
    /* the best configuration: the least median CPU time (the fairer clock on a shared machine) */
    double loop_wall[EPOCH_MAX_CONFIGS], loop_cpu[EPOCH_MAX_CONFIGS];
    int best = 0;
    for (int c = 0; c < n_configs; c++) {
        loop_wall[c] = epoch_median(theirs_wall[c], reps), loop_cpu[c] = epoch_median(theirs_cpu[c], reps);
        printf("  PyTorch 1 thread, the training loop alone, %-30s %7.3f s wall, %7.3f s CPU%s\n", configs[c].name,
               loop_wall[c], loop_cpu[c], "");
        if (loop_cpu[c] < loop_cpu[best]) best = c;
    }
    printf("  PyTorch / hetsim, against its best configuration (%s): %.2fx wall, %.2fx CPU; against its default "
           "(%s): %.2fx wall, %.2fx CPU (above 1: the whole hetsim run is faster than the bare loop)\n",
           configs[best].name, loop_wall[best] / wall, loop_cpu[best] / cpu, configs[0].name, loop_wall[0] / wall,
           loop_cpu[0] / cpu);
    epoch_load("at the end");
    return 0;
}
