/* epoch.c — a whole one-epoch central run of hetsim against PyTorch's bare epoch loop on
 * the same data (issue #3's goal: no slower). Prints figures, asserts nothing.
 *
 * hetsim: `hetsim run scenarios/central-mlp.ini --set run.rounds=1` as a process, timed
 * in wall-clock seconds from exec to exit: loading the gzip'd IDX files, partitioning,
 * 938 steps of batch 64, the evaluation on the 10,000 test images and the SQLite writes
 * are all inside. PyTorch: bench/torch_epoch.py times only its training loop (same model,
 * batch, optimiser and learning rate, one thread); its loading and start-up are not
 * counted. The two alternate, REPS times each, and the medians are compared, so a
 * passing load on the shared machine hits both alike.
 *
 * Usage: bench/epoch [REPS]   (HETSIM names the binary, default ./hetsim; PYTHON the
 * interpreter with torch, default python3; DATA the dataset folder) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EPOCH_MAX_REPS 25

static double epoch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int epoch_compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double epoch_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, epoch_compare);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const char *epoch_env(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* Wall seconds of one hetsim run into a fresh database in dir; < 0 if it failed. */
static double epoch_hetsim(const char *hetsim, const char *dir, const char *data, int rep)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "OPENBLAS_NUM_THREADS=1 '%s' run scenarios/central-mlp.ini --set run.rounds=1 --set 'data.path=%s' "
             "--db '%s/epoch-%d.db' --quiet",
             hetsim, data, dir, rep);
    double start = epoch_now();
    int status = system(cmd);
    double seconds = epoch_now() - start;
    return status == 0 ? seconds : -1;
}

/* Seconds of PyTorch's bare loop for one epoch, as the script reports it; < 0 if torch
 * is unavailable or the script failed. */
static double epoch_torch(const char *python, const char *data)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' bench/torch_epoch.py '%s' 1 2>/dev/null", python, data);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    double seconds = -1;
    if (fscanf(p, "%lf", &seconds) != 1) seconds = -1;
    return pclose(p) == 0 ? seconds : -1;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1) reps = 1;
    if (reps > EPOCH_MAX_REPS) reps = EPOCH_MAX_REPS;
    const char *hetsim = epoch_env("HETSIM", "./hetsim"), *python = epoch_env("PYTHON", "python3");
    const char *data = epoch_env("DATA", "/usr/share/datasets/fashion-mnist");
    char dir[] = "/tmp/hetsim-bench-epoch-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    double ours[EPOCH_MAX_REPS], theirs[EPOCH_MAX_REPS];
    int have_torch = 1;
    for (int r = 0; r < reps; r++) {
        if ((ours[r] = epoch_hetsim(hetsim, dir, data, r)) < 0) {
            fprintf(stderr, "epoch: %s run scenarios/central-mlp.ini failed (is %s installed and built?)\n", hetsim,
                    data);
            return 1;
        }
        if (have_torch && (theirs[r] = epoch_torch(python, data)) < 0) have_torch = 0;
    }
    char cleanup[128];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
    if (system(cleanup) != 0) fprintf(stderr, "epoch: could not remove %s\n", dir);
    double mine = epoch_median(ours, reps);
    printf("one epoch of scenarios/central-mlp.ini (MLP 784-256-128-10, batch 64, 60,000 images), median of %d:\n",
           reps);
    printf("  hetsim run, whole process (load + train + evaluate + SQLite): %.3f s\n", mine);
    if (!have_torch) {
        printf("  PyTorch comparison skipped: `%s bench/torch_epoch.py` fails (python3-torch, python3-numpy?)\n",
               python);
        return 0;
    }
    double loop = epoch_median(theirs, reps);
    printf("  PyTorch 1 thread, the training loop alone:                %.3f s\n", loop);
    printf("  hetsim / PyTorch time = %.2f (below 1: the whole hetsim run is faster than the bare loop)\n",
           mine / loop);
    return 0;
}
