/* train_step.c — how fast is one training step of our models, against the machine's
 * single-thread sgemm and (when `import torch` works) PyTorch on one thread. Prints
 * figures, asserts nothing; runs in about a minute (with PyTorch; 25 s without).
 *
 *   train_step                      the benchmark
 *   train_step --central mlp|cnn [--epochs N] [--lr X] [--batch B] [--momentum M]
 *              [--nesterov] [--wd W] [--warmup N] [--seed S] [--data DIR]
 *                                   central training on Fashion-MNIST (SGD momentum,
 *                                   cosine schedule per epoch), test accuracy per epoch */
#include "models/dataset.h"
#include "models/model.h"
#include "models/optim.h"
#include "base/hs_error.h"

#include <cblas.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Rates are measured in this thread's CPU time (OpenBLAS runs single-threaded in the
 * calling thread), so other load on a shared machine does not count against us; the
 * central-training mode reports wall-clock seconds. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* GFLOPS of C = A B^T (M x K times K x N), as the linear forward calls it. */
static double bench_sgemm(int M, int N, int K, double seconds)
{
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * N * K), *c = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) a[i] = (float)(i % 7) * 0.1f;
    for (int i = 0; i < N * K; i++) b[i] = (float)(i % 5) * 0.1f;
    long reps = 0;
    double start = cpu_s(), t = 0;
    do {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
        reps++;
    } while ((t = cpu_s() - start) < seconds);
    free(a), free(b), free(c);
    return 2.0 * M * N * K * reps / t / 1e9;
}

static ModelSpec spec_mlp(int batch)
{
    ModelSpec s;
    memset(&s, 0, sizeof s);
    s.arch = MODEL_ARCH_MLP;
    s.in_channels = 1, s.in_height = 28, s.in_width = 28, s.classes = 10;
    int sizes[] = {784, 256, 128, 10};
    s.n_sizes = 4;
    memcpy(s.sizes, sizes, sizeof sizes);
    s.batch = batch;
    return s;
}

static ModelSpec spec_cnn(int batch)
{
    ModelSpec s;
    memset(&s, 0, sizeof s);
    s.arch = MODEL_ARCH_CNN;
    s.in_channels = 1, s.in_height = 28, s.in_width = 28, s.classes = 10;
    s.conv_channels[0] = 32, s.conv_channels[1] = 64;
    s.kernel = 5, s.hidden = 128, s.batch = batch;
    return s;
}

static OptimSpec spec_momentum(double lr)
{
    OptimSpec o;
    memset(&o, 0, sizeof o);
    o.kind = OPTIM_MOMENTUM;
    o.lr = lr, o.momentum = 0.9, o.beta1 = 0.9, o.beta2 = 0.999, o.eps = 1e-8;
    o.schedule = SCHED_COSINE, o.step_gamma = 0.1, o.step_every = 10;
    return o;
}

/* FLOPs one step of our code actually performs (no input gradient for block 1), counting
 * only multiply-adds of linear/conv layers; *profile_flops gets the cost-model figure. */
static double step_flops(const Model *m, int B, double *profile_flops)
{
    const ModelProfile *p = model_get_profile(m);
    *profile_flops = (p->total_flops + p->loss_flops) * B;
    double mac_fwd = 0, first = 0;
    /* exact multiply-add counts from the layer shapes */
    const ModelSpec *s = model_spec(m);
    if (s->arch == MODEL_ARCH_MLP) {
        for (int b = 0; b + 1 < s->n_sizes; b++) mac_fwd += (double)s->sizes[b] * s->sizes[b + 1];
        first = (double)s->sizes[0] * s->sizes[1];
    } else {
        double c1 = s->conv_channels[0], c2 = s->conv_channels[1], k2 = s->kernel * s->kernel;
        double hw0 = s->in_height * s->in_width, hw1 = (s->in_height / 2) * (s->in_width / 2);
        double flat = c2 * (s->in_height / 4) * (s->in_width / 4);
        first = s->in_channels * k2 * c1 * hw0;
        mac_fwd = first + c1 * k2 * c2 * hw1 + flat * s->hidden + (double)s->hidden * s->classes;
    }
    return 2.0 * B * (3 * mac_fwd - first);
}

typedef struct StepBench {
    double steps_per_s, gflops, profile_gflops;
} StepBench;

static StepBench bench_step(const ModelSpec *spec, double seconds)
{
    StepBench r = {0, 0, 0};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, 1);
    Model *m = NULL;
    ModelWorkspace *ws = NULL;
    Optim *o = NULL;
    OptimSpec os = spec_momentum(0.01);
    const int B = spec->batch, features = spec->in_channels * spec->in_height * spec->in_width, pool = 4096;
    float *data = malloc(sizeof(float) * (size_t)pool * features);
    int *labels = malloc(sizeof(int) * pool);
    if (model_create(spec, rng, &m) || model_workspace_create(spec, &ws) ||
        optim_create(&os, model_param_count(m), &o) || !data || !labels)
        goto done;
    for (size_t i = 0; i < (size_t)pool * features; i++) data[i] = (float)gsl_rng_uniform(rng);
    for (int i = 0; i < pool; i++) labels[i] = (int)gsl_rng_uniform_int(rng, 10);
    float *x = model_workspace_x(ws);
    int *y = model_workspace_y(ws);
    long steps = 0;
    double start = cpu_s(), t = 0;
    do {
        /* next batch -> forward/backward (grads zeroed inside) -> update */
        int at = (int)((steps * B) % (pool - B));
        memcpy(x, data + (size_t)at * features, sizeof(float) * B * features);
        memcpy(y, labels + at, sizeof(int) * B);
        double loss;
        if (model_grad_full(m, ws, x, y, B, &loss) != HS_OK) break;
        optim_step(o, model_params(m), model_grads(m), 0, model_param_count(m), 0.01);
        steps++;
    } while ((t = cpu_s() - start) < seconds);
    double profile;
    double flops = step_flops(m, B, &profile);
    r.steps_per_s = steps / t;
    r.gflops = flops * r.steps_per_s / 1e9;
    r.profile_gflops = profile * r.steps_per_s / 1e9;
done:
    free(data), free(labels);
    model_free(m), model_workspace_free(ws), optim_free(o);
    gsl_rng_free(rng);
    return r;
}

/* PyTorch's versions of the two models, as Python expressions; inputs are (N, 784) for
 * the MLP and (N, 1, 28, 28) for the CNN. */
static const char torch_mlp[] = "torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), "
                                "torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))";
static const char torch_cnn[] =
    "torch.nn.Sequential(torch.nn.Conv2d(1, 32, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2), "
    "torch.nn.Conv2d(32, 64, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(), "
    "torch.nn.Linear(3136, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))";

/* The same step in PyTorch on one thread (model: torch_mlp or torch_cnn); returns
 * steps/s or 0 if unavailable. OMP_NUM_THREADS=1: torch.set_num_threads(1) alone leaves
 * an OpenMP worker that takes a fifth of a core beside the loop. */
static double bench_torch(const char *model, int B, double seconds)
{
    if (system("python3 -c 'import torch' >/dev/null 2>&1") != 0) return 0;
    int cnn = model == torch_cnn;
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "OMP_NUM_THREADS=1 python3 - <<'EOF'\n"
             "import time, torch\n"
             "torch.set_num_threads(1)\n"
             "torch.manual_seed(0)\n"
             "B = %d\n"
             "m = %s\n"
             "opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)\n"
             "x = torch.rand(4096, %s); y = torch.randint(0, 10, (4096,))\n"
             "lossf = torch.nn.CrossEntropyLoss()\n"
             "def step(i):\n"
             "    a = (i * B) %% (4096 - B)\n"
             "    opt.zero_grad(set_to_none=False)\n"
             "    lossf(m(x[a:a+B]), y[a:a+B]).backward()\n"
             "    opt.step()\n"
             "for i in range(%d): step(i)\n"
             "n = 0; t0 = time.thread_time()\n"
             "while time.thread_time() - t0 < %g:\n"
             "    step(n); n += 1\n"
             "print(n / (time.thread_time() - t0))\n"
             "EOF\n",
             B, model, cnn ? "1, 28, 28" : "784", cnn ? 3 : 20, seconds);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    double rate = 0;
    if (fscanf(p, "%lf", &rate) != 1) rate = 0;
    pclose(p);
    return rate;
}

/* The best single-thread sgemm rate at this moment: a square product and the MLP's own
 * shapes, each run for `seconds`. */
static double bench_peak(double seconds, double rates[4])
{
    rates[0] = bench_sgemm(512, 512, 512, seconds);
    rates[1] = bench_sgemm(64, 256, 784, seconds);
    rates[2] = bench_sgemm(256, 256, 784, seconds);
    rates[3] = bench_sgemm(64, 128, 256, seconds);
    double peak = 0;
    for (int i = 0; i < 4; i++)
        if (rates[i] > peak) peak = rates[i];
    return peak;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double sorted[16];
    memcpy(sorted, v, sizeof(double) * n);
    qsort(sorted, (size_t)n, sizeof(double), compare_doubles);
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

#define CNN_ROUNDS 5

static int run_benchmark(void)
{
    printf("rates in CPU time of one thread (OPENBLAS single-threaded, OpenBLAS core %s)\n", openblas_get_corename());
    /* "peak": the best of a square sgemm and the MLP's own shapes, so the percentages are
     * against what sgemm reaches on this machine at this moment (other load included). */
    double rates[4];
    double peak = bench_peak(0.4, rates);
    printf("single-thread cblas_sgemm (C = A B^T): 512x512x512 %.1f GFLOPS; 64x256x784 %.1f, 256x256x784 %.1f, "
           "64x128x256 %.1f; best %.1f GFLOPS\n",
           rates[0], rates[1], rates[2], rates[3], peak);
    const int batches[] = {64, 256};
    int have_torch = 1;
    for (int i = 0; i < 2; i++) {
        ModelSpec s = spec_mlp(batches[i]);
        StepBench r = bench_step(&s, 1.5);
        printf("MLP 784-256-128-10 batch %3d (gather + fwd + bwd + SGD momentum): %7.1f steps/s, %5.1f GFLOPS "
               "= %4.1f %% of best sgemm (cost-model FLOPs: %.1f GFLOPS)\n",
               batches[i], r.steps_per_s, r.gflops, 100 * r.gflops / peak, r.profile_gflops);
        double torch_rate = have_torch ? bench_torch(torch_mlp, batches[i], 1.5) : 0;
        if (torch_rate > 0)
            printf("  PyTorch, 1 thread, same model/batch/step: %7.1f steps/s; ours / PyTorch = %.2f\n", torch_rate,
                   r.steps_per_s / torch_rate);
        else if (i == 0) {
            printf("  PyTorch comparison skipped: `python3 -c 'import torch'` fails on this machine\n");
            have_torch = 0;
        }
    }
    /* The CNN: sgemm's peak, our step and PyTorch's, alternating for CNN_ROUNDS rounds, so
     * that a passing load on the shared machine weighs on all three alike; medians. The
     * percentage is the median of each round's own ratio. */
    ModelSpec c = spec_cnn(64);
    double peaks[CNN_ROUNDS], steps[CNN_ROUNDS], gflops[CNN_ROUNDS], share[CNN_ROUNDS], torch[CNN_ROUNDS];
    double versus[CNN_ROUNDS], profile = 0;
    for (int k = 0; k < CNN_ROUNDS; k++) {
        peaks[k] = bench_peak(0.2, rates);
        StepBench r = bench_step(&c, 1.5);
        steps[k] = r.steps_per_s, gflops[k] = r.gflops, share[k] = 100 * r.gflops / peaks[k];
        if (r.steps_per_s > 0) profile = r.profile_gflops / r.steps_per_s; /* cost-model GFLOP per step */
        torch[k] = have_torch ? bench_torch(torch_cnn, 64, 1.5) : 0;
        versus[k] = torch[k] > 0 ? r.steps_per_s / torch[k] : 0;
    }
    double lo = share[0], hi = share[0];
    for (int k = 1; k < CNN_ROUNDS; k++) {
        if (share[k] < lo) lo = share[k];
        if (share[k] > hi) hi = share[k];
    }
    printf("CNN 32,64 k5 hidden 128 batch 64 (gather + fwd + bwd + SGD momentum), medians of %d alternating rounds: "
           "%.2f steps/s, %.1f GFLOPS = %.1f %% of best sgemm (rounds %.1f-%.1f %%; best sgemm %.1f GFLOPS; "
           "%.0f samples/s; cost-model FLOPs: %.1f GFLOPS)\n",
           CNN_ROUNDS, median(steps, CNN_ROUNDS), median(gflops, CNN_ROUNDS), median(share, CNN_ROUNDS), lo, hi,
           median(peaks, CNN_ROUNDS), 64 * median(steps, CNN_ROUNDS), profile * median(steps, CNN_ROUNDS));
    if (have_torch && torch[0] > 0)
        printf("  PyTorch, 1 thread, same model/batch/step: %7.2f steps/s; ours / PyTorch = %.2f (median of the "
               "rounds' ratios)\n",
               median(torch, CNN_ROUNDS), median(versus, CNN_ROUNDS));
    else
        printf("  PyTorch comparison skipped: `python3 -c 'import torch'` fails on this machine\n");
    return 0;
}

static int run_central(int argc, char **argv)
{
    const char *arch = "mlp", *path = "/usr/share/datasets/fashion-mnist";
    int epochs = 12, batch = 64, warmup = 0, nesterov = 0;
    unsigned long seed = 1;
    double lr = -1, momentum = 0.9, wd = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--central") && v) arch = v, i++;
        else if (!strcmp(a, "--epochs") && v) epochs = atoi(v), i++;
        else if (!strcmp(a, "--lr") && v) lr = atof(v), i++;
        else if (!strcmp(a, "--batch") && v) batch = atoi(v), i++;
        else if (!strcmp(a, "--momentum") && v) momentum = atof(v), i++;
        else if (!strcmp(a, "--wd") && v) wd = atof(v), i++;
        else if (!strcmp(a, "--warmup") && v) warmup = atoi(v), i++;
        else if (!strcmp(a, "--seed") && v) seed = strtoul(v, NULL, 10), i++;
        else if (!strcmp(a, "--data") && v) path = v, i++;
        else if (!strcmp(a, "--nesterov")) nesterov = 1;
        else {
            fprintf(stderr, "train_step: unknown or incomplete option '%s'\n", a);
            return 2;
        }
    }
    int cnn = !strcmp(arch, "cnn");
    if (lr < 0) lr = cnn ? 0.05 : 0.1;
    DataSpec d;
    memset(&d, 0, sizeof d);
    d.dataset = DATA_FASHION_MNIST;
    snprintf(d.path, sizeof d.path, "%s", path);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    if (dataset_load(&d, NULL, &ds, &diag) != HS_OK) {
        fprintf(stderr, "train_step: %s\n", diag.message);
        return 1;
    }
    ModelSpec s = cnn ? spec_cnn(batch) : spec_mlp(batch);
    OptimSpec os = spec_momentum(lr);
    os.momentum = momentum, os.nesterov = nesterov, os.weight_decay = wd, os.warmup_rounds = warmup;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, seed);
    Model *m;
    ModelWorkspace *ws;
    Optim *o;
    if (model_create(&s, rng, &m) || model_workspace_create(&s, &ws) || optim_create(&os, model_param_count(m), &o)) {
        fprintf(stderr, "train_step: cannot build the model\n");
        return 1;
    }
    printf("central %s: SGD momentum %.2f%s, lr %.3g cosine over %d epochs (warm-up %d), batch %d, wd %.2g, seed %lu\n",
           arch, momentum, nesterov ? " nesterov" : "", lr, epochs, warmup, batch, wd, seed);
    int *order = malloc(sizeof(int) * ds->n_train);
    for (int i = 0; i < ds->n_train; i++) order[i] = i;
    double start = now_s();
    for (int e = 0; e < epochs; e++) {
        double rate = optim_schedule_lr(&os, e, epochs), sum = 0;
        int steps = 0;
        for (int i = ds->n_train - 1; i > 0; i--) { /* Fisher-Yates (gsl_randist.h clashes with cblas.h) */
            int j = (int)gsl_rng_uniform_int(rng, (unsigned long)i + 1), tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
        for (int at = 0; at + batch <= ds->n_train; at += batch) {
            dataset_gather(ds, 0, order + at, batch, model_workspace_x(ws), model_workspace_y(ws));
            double loss;
            int status = model_grad_full(m, ws, model_workspace_x(ws), model_workspace_y(ws), batch, &loss);
            if (status != HS_OK) {
                fprintf(stderr, "train_step: %s at epoch %d\n", hs_error_name(status), e + 1);
                return 1;
            }
            optim_step(o, model_params(m), model_grads(m), 0, model_param_count(m), rate);
            sum += loss;
            steps++;
        }
        double test_loss, test_acc;
        model_evaluate(m, ws, ds, 1, NULL, 0, &test_loss, &test_acc);
        printf("epoch %2d  lr %.4f  train loss %.4f  test loss %.4f  test accuracy %.4f  (%.0f s)\n", e + 1, rate,
               sum / steps, test_loss, test_acc, now_s() - start);
        fflush(stdout);
    }
    free(order);
    model_free(m), model_workspace_free(ws), optim_free(o);
    gsl_rng_free(rng);
    dataset_free(ds);
    return 0;
}

int main(int argc, char **argv)
{
    openblas_set_num_threads(1);
    if (argc > 1) return run_central(argc, argv);
    return run_benchmark();
}
