/* cli_profile.c — `hetsim profile SCENARIO.ini [--out FILE] [--repeat N]`: measures on this
 * host, with hetsim's own kernels (OpenBLAS, one thread), the forward and backward time
 * of every block and auxiliary head of the scenario's [model] at its batch size, and
 * writes a measured profile (models/layer_profile.h) that `[model] profile = FILE` reads.
 *
 * Each repetition is one training step of random data (model_time_step_at); a few
 * warm-up steps first fill the caches and OpenBLAS's buffers; every row's seconds are
 * the median over the repetitions, so one preempted step does not move them. The
 * figures are wall-clock times of this host: nothing else in hetsim reads a clock. */
#include "cli/cli.h"
#include "cli/cli_profile.h"

#include "models/layer_profile.h"
#include "models/model.h"
#include "sim/kernel/rng.h"
#include "sim/scenario/scenario.h"

#include <cblas.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLI_PROFILE_WARMUP 2
#define CLI_PROFILE_MAX_REPEAT 100000

static const char cli_profile_usage[] =
    "usage: hetsim profile SCENARIO.ini [--out FILE] [--repeat N] [--set SECTION.KEY=VALUE]...\n"
    "\n"
    "Measures on this host, with hetsim's own kernels (OpenBLAS, one thread), the forward\n"
    "and backward time of every layer (block) and auxiliary head of the scenario's [model]\n"
    "at its batch size: 2 warm-up steps, then the median of N timed steps (default 9).\n"
    "Writes the profile (CSV with '#' comments: host CPU, command, model, batch; one row\n"
    "per layer: name, forward and backward FLOPs, forward and backward seconds, achieved\n"
    "FLOP/s) to FILE, or to standard output. A scenario reads it with [model] profile =\n"
    "FILE, and gives its agents' compute relative to this host (compute = 0.25x).\n"
    "  --out FILE        write the profile to FILE instead of standard output\n"
    "  --repeat N        timed steps per layer, N >= 1 (default 9)\n"
    "  --set S.K=VALUE   override a scenario key first (e.g. model.batch=64)\n"
    "Exit status: 0 written, 1 the file cannot be written, 2 bad usage or bad input.\n";

static double cli_profile_now(void *context)
{
    (void)context;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The "model name" of /proc/cpuinfo's first processor, or "unknown". */
static void cli_profile_host(char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        char *colon = strchr(line, ':');
        if (!colon) continue;
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(out, size, "%s", colon);
        break;
    }
    fclose(f);
}

static int cli_profile_compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static double cli_profile_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cli_profile_compare);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Times repeat steps of spec's model at its batch into p (rows as layer_profile_expect
 * made them): each row's median. */
static int cli_profile_measure(const ModelSpec *spec, uint64_t seed, int repeat, LayerProfile *p, HsDiag *diag)
{
    const int L = p->n_layers, B = spec->batch, rows = layer_profile_rows(p);
    Model *m = NULL;
    ModelWorkspace *ws = NULL;
    double *samples = NULL, fwd[MODEL_MAX_BLOCKS], bwd[MODEL_MAX_BLOCKS], head_fwd[MODEL_MAX_BLOCKS],
                                 head_bwd[MODEL_MAX_BLOCKS];
    gsl_rng *rng = rng_stream_create(seed, 0, RNG_PURPOSE_DATA);
    int status = rng ? model_create(spec, rng, &m) : HS_E_NOMEM;
    if (status == HS_OK) status = model_workspace_create(spec, &ws);
    if (status == HS_OK && !(samples = malloc(sizeof(double) * (size_t)repeat * 2 * (size_t)rows))) status = HS_E_NOMEM;
    if (status != HS_OK) {
        hs_diag_set(diag, status, NULL, 0, status == HS_E_NOMEM ? "out of memory" : "the model cannot be built");
        goto done;
    }
    /* random inputs in [0, 1) and labels cycling over the classes: the kernels' time does
     * not depend on the values (no sparsity shortcuts), only on the shapes */
    const size_t features = (size_t)spec->in_channels * spec->in_height * spec->in_width;
    float *x = model_workspace_x(ws);
    int *y = model_workspace_y(ws);
    for (size_t i = 0; i < (size_t)B * features; i++) x[i] = (float)gsl_rng_uniform(rng);
    for (int i = 0; i < B; i++) y[i] = i % spec->classes;
    for (int k = -CLI_PROFILE_WARMUP; k < repeat; k++) {
        status = model_time_step_at(m, model_params(m), model_grads(m), ws, x, y, B, cli_profile_now, NULL, fwd, bwd,
                                    head_fwd, head_bwd);
        if (status != HS_OK) {
            hs_diag_set(diag, status, NULL, 0, "a profiling step failed (%s)", hs_error_name(status));
            goto done;
        }
        if (k < 0) continue;
        /* samples: row r's forward times at [2 r repeat, ...), its backward after them */
        for (int r = 0; r < rows; r++) {
            double f = r < L ? fwd[r] : head_fwd[r - L + 1], g = r < L ? bwd[r] : head_bwd[r - L + 1];
            samples[(size_t)(2 * r) * repeat + k] = f;
            samples[(size_t)(2 * r + 1) * repeat + k] = g;
        }
    }
    for (int r = 0; r < rows; r++) {
        p->fwd_s[r] = cli_profile_median(samples + (size_t)(2 * r) * repeat, repeat);
        p->bwd_s[r] = cli_profile_median(samples + (size_t)(2 * r + 1) * repeat, repeat);
    }
done:
    free(samples);
    model_workspace_free(ws);
    model_free(m);
    if (rng) gsl_rng_free(rng);
    return status;
}

int cli_profile(int argc, char **argv)
{
    const char *path = NULL, *out_path = NULL;
    long repeat = 9;
    const char **overrides = calloc((size_t)argc + 1, sizeof *overrides);
    if (!overrides) return cli_fail(HS_E_NOMEM, "out of memory");
    int n_overrides = 0, status;
    char command[2048];
    int used = snprintf(command, sizeof command, "hetsim profile");
    for (int i = 0; i < argc && used >= 0 && (size_t)used < sizeof command; i++)
        used += snprintf(command + used, sizeof command - (size_t)used, " %s", argv[i]);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(cli_profile_usage, stdout);
            free(overrides);
            return 0;
        }
        if (strcmp(a, "--out") == 0 || strcmp(a, "--repeat") == 0 || strcmp(a, "--set") == 0) {
            if (i + 1 >= argc) {
                free(overrides);
                return cli_usage_error(stderr, "profile", "%s needs a value", a);
            }
            const char *v = argv[++i];
            if (a[2] == 'o') {
                out_path = v;
            } else if (a[2] == 's') {
                overrides[n_overrides++] = v;
            } else {
                int64_t n;
                if (cli_parse_whole(v, 1, &n, NULL) != 0 || n > CLI_PROFILE_MAX_REPEAT) {
                    free(overrides);
                    return cli_usage_error(stderr, "profile", "--repeat takes a whole number in [1, 100000], not '%s'",
                                           v);
                }
                repeat = (long)n;
            }
        } else if (a[0] == '-' && a[1]) {
            free(overrides);
            return cli_usage_error(stderr, "profile", "unknown option '%s'", a);
        } else if (path) {
            free(overrides);
            return cli_usage_error(stderr, "profile", "one scenario only; '%s' is a second", a);
        } else {
            path = a;
        }
    }
    if (!path) {
        free(overrides);
        return cli_usage_error(stderr, "profile", "%s", "needs SCENARIO.ini");
    }
    HsDiag diag;
    hs_diag_clear(&diag);
    Scenario *sc = calloc(1, sizeof *sc);
    if (!sc) {
        free(overrides);
        return cli_fail(HS_E_NOMEM, "out of memory");
    }
    status = scenario_load(path, overrides, n_overrides, sc, &diag);
    free(overrides);
    if (status != HS_OK) {
        free(sc);
        return cli_fail(status, diag.message);
    }
    /* the reference kernels, one thread, as train mode runs an agent's step */
    ModelSpec spec = sc->model;
    spec.kernels = MODEL_KERNELS_OPENBLAS;
    openblas_set_num_threads(1);
    LayerProfile profile;
    char model[256], host[256], kernels[160];
    if (layer_profile_expect(&spec, spec.batch, &profile) != HS_OK) {
        free(sc);
        return cli_fail(HS_E_INPUT, "the scenario's [model] does not describe a valid network");
    }
    status = cli_profile_measure(&spec, sc->seed, (int)repeat, &profile, &diag);
    free(sc);
    if (status != HS_OK) return cli_fail(status, diag.message);
    layer_profile_describe(&spec, model, sizeof model);
    cli_profile_host(host, sizeof host);
    snprintf(kernels, sizeof kernels, "openblas, 1 thread; median of %ld steps after %d warm-up steps", repeat,
             CLI_PROFILE_WARMUP);
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (!out) {
        hs_diag_set(&diag, HS_E_IO, out_path, 0, "cannot open for writing");
        return cli_fail(HS_E_IO, diag.message);
    }
    layer_profile_write(out, &profile, host, command, model, kernels);
    int failed = ferror(out);
    if (out_path) failed |= fclose(out) != 0;
    else failed |= fflush(out) != 0;
    if (failed) {
        hs_diag_set(&diag, HS_E_IO, out_path ? out_path : "standard output", 0, "write failed");
        return cli_fail(HS_E_IO, diag.message);
    }
    return 0;
}
