/* train_step.c — how fast is one training step of our models, against the machine's
 * single-thread sgemm, its AVX-512 FMA peak (the physical limit: the clock and the FMA
 * throughput are measured) and (when `import torch` works in $PYTHON, default python3)
 * PyTorch on one thread. The CNN is compared with PyTorch in every configuration of
 * bench/torch_step.py (memory format, oneDNN on/off, step order) under glibc's default
 * malloc and under one that keeps freed buffers; the best and the median are reported.
 * Prints figures with the load average, asserts nothing; about 2 minutes of CPU (30 s
 * without PyTorch), several times that in wall time on a loaded machine. Run it from the
 * top folder (it reads bench/torch_step.py).
 *
 *   train_step                      the benchmark
 *   train_step --central mlp|cnn [--epochs N] [--lr X] [--batch B] [--momentum M]
 *              [--nesterov] [--wd W] [--warmup N] [--seed S] [--data DIR]
 *                                   central training on Fashion-MNIST (SGD momentum,
 *                                   cosine schedule per epoch), test accuracy per epoch */
#include "bench/bench.h"
#include "models/conv_onednn.h"
#include "models/dataset.h"
#include "models/kernels.h"
#include "models/model.h"
#include "models/optim.h"
#include "base/hs_error.h"

#include <cblas.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Rates are measured in this thread's CPU time (bench_thread_seconds: OpenBLAS runs
 * single-threaded in the calling thread), so other load on a shared machine does not count
 * against us; the central-training mode reports wall-clock seconds (bench_seconds). */

/* GFLOPS of C = A B^T (M x K times K x N), as the linear forward calls it. */
static double bench_sgemm(int M, int N, int K, double seconds)
{
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * N * K), *c = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) a[i] = (float)(i % 7) * 0.1f;
    for (int i = 0; i < N * K; i++) b[i] = (float)(i % 5) * 0.1f;
    long reps = 0;
    double start = bench_thread_seconds(), t = 0;
    do {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
        reps++;
    } while ((t = bench_thread_seconds() - start) < seconds);
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
    double start = bench_thread_seconds(), t = 0;
    do {
        /* next batch -> forward/backward (grads zeroed inside) -> update */
        int at = (int)((steps * B) % (pool - B));
        memcpy(x, data + (size_t)at * features, sizeof(float) * B * features);
        memcpy(y, labels + at, sizeof(int) * B);
        double loss;
        if (model_grad_full(m, ws, x, y, B, &loss) != HS_OK) break;
        optim_step(o, model_params(m), model_grads(m), 0, model_param_count(m), 0.01);
        steps++;
    } while ((t = bench_thread_seconds() - start) < seconds);
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

/* The interpreter with PyTorch: $PYTHON, else python3. */
static const char *bench_python(void)
{
    const char *p = getenv("PYTHON");
    return p && *p ? p : "python3";
}

/* 1 when `import torch` works; its version into version */
static int bench_have_torch(char *version, size_t size)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' -c 'import torch; print(torch.__version__)' 2>/dev/null", bench_python());
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    if (!fgets(version, (int)size, p)) version[0] = '\0';
    version[strcspn(version, "\n")] = '\0';
    return pclose(p) == 0 && version[0];
}

/* PyTorch's MLP, as a Python expression; inputs are (N, 784). */
static const char torch_mlp[] = "torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), "
                                "torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))";

/* The MLP step in PyTorch on one thread; returns steps/s or 0 if unavailable.
 * OMP_NUM_THREADS=1: torch.set_num_threads(1) alone leaves an OpenMP worker that takes a
 * fifth of a core beside the loop. */
static double bench_torch_mlp(int B, double seconds)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "OMP_NUM_THREADS=1 '%s' - <<'EOF'\n"
             "import time, torch\n"
             "torch.set_num_threads(1)\n"
             "torch.manual_seed(0)\n"
             "B = %d\n"
             "m = %s\n"
             "opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)\n"
             "x = torch.rand(4096, 784); y = torch.randint(0, 10, (4096,))\n"
             "lossf = torch.nn.CrossEntropyLoss()\n"
             "def step(i):\n"
             "    a = (i * B) %% (4096 - B)\n"
             "    opt.zero_grad(set_to_none=False)\n"
             "    lossf(m(x[a:a+B]), y[a:a+B]).backward()\n"
             "    opt.step()\n"
             "for i in range(20): step(i)\n"
             "n = 0; t0 = time.thread_time()\n"
             "while time.thread_time() - t0 < %g:\n"
             "    step(n); n += 1\n"
             "print(n / (time.thread_time() - t0))\n"
             "EOF\n",
             bench_python(), B, torch_mlp, seconds);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    double rate = 0;
    if (fscanf(p, "%lf", &rate) != 1) rate = 0;
    pclose(p);
    return rate;
}

/* glibc keeps PyTorch's activation buffers instead of unmapping them after every step */
#define BENCH_MALLOC_TUNED "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296"
#define TORCH_CONFIGS 16 /* bench/torch_step.py's 8, under each malloc setting */

typedef struct TorchConfigs {
    int n;
    char name[TORCH_CONFIGS][96];
    double rate[TORCH_CONFIGS][16]; /* per round */
} TorchConfigs;

/* One round of bench/torch_step.py (each configuration `seconds` of CPU time) under
 * malloc setting `tuned`, appended to t as round `round`; 0 if it did not run. */
static int bench_torch_cnn(TorchConfigs *t, int tuned, int round, double seconds)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=1 %s '%s' bench/torch_step.py 1 %g 2>/dev/null",
             tuned ? BENCH_MALLOC_TUNED : "", bench_python(), seconds);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    char line[256];
    int k = tuned ? TORCH_CONFIGS / 2 : 0, got = 0;
    while (fgets(line, sizeof line, p) && k < TORCH_CONFIGS) {
        char *last = strrchr(line, ' ');
        if (!last) continue;
        *last = '\0';
        snprintf(t->name[k], sizeof t->name[k], "%s malloc=%s", line, tuned ? "tuned" : "default");
        t->rate[k][round] = atof(last + 1);
        k++, got++;
    }
    if (pclose(p) != 0 || got != TORCH_CONFIGS / 2) return 0;
    t->n = TORCH_CONFIGS;
    return 1;
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

static double median(const double *v, int n)
{
    double sorted[32];
    memcpy(sorted, v, sizeof(double) * n);
    qsort(sorted, (size_t)n, sizeof(double), bench_compare_doubles);
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

/* ---- the physical limit: the clock and the FMA units, measured ---- */

/* The clock, from a chain of dependent integer adds (one per cycle on every x86-64 since
 * the P6), and the throughput of independent FMAs: 12 chains, enough to cover a 4-cycle
 * latency on 2 units, 512-bit (AVX-512F) and 256-bit (AVX2). 0 where the processor lacks
 * the instructions. */
typedef struct FmaPeak {
    double ghz, avx512_gflops, avx2_gflops;
} FmaPeak;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
static __attribute__((noinline)) long fma_clock_chain(long n)
{
    long x = 0;
    for (long i = 0; i < n; i++)
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                         : "+r"(x));
    return x;
}

#define FMA12(R, A, B)                                                                                                \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "0\n\t"                                                                  \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "1\n\t"                                                                  \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "2\n\t"                                                                  \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "3\n\t"                                                                  \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "4\n\t"                                                                  \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "5\n\t"                                                                  \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "6\n\t"                                                                  \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "7\n\t"                                                                  \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "8\n\t"                                                                  \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "9\n\t"                                                                  \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "10\n\t"                                                                 \
    "vfmadd231ps %%" R A ", %%" R B ", %%" R "11\n\t"

static __attribute__((noinline, target("avx512f"))) void fma_512(long n)
{
    __asm__ volatile("vxorps %%xmm14, %%xmm14, %%xmm14\n\tvxorps %%xmm15, %%xmm15, %%xmm15\n\t"
                     "1:\n\t" FMA12("zmm", "14", "15") "dec %0\n\tjnz 1b"
                     : "+r"(n)
                     :
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
                       "xmm14", "xmm15");
}

static __attribute__((noinline, target("avx2,fma"))) void fma_256(long n)
{
    __asm__ volatile("vxorps %%xmm14, %%xmm14, %%xmm14\n\tvxorps %%xmm15, %%xmm15, %%xmm15\n\t"
                     "1:\n\t" FMA12("ymm", "14", "15") "dec %0\n\tjnz 1b"
                     : "+r"(n)
                     :
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
                       "xmm14", "xmm15");
}

/* best of three short runs of each */
static FmaPeak bench_fma_peak(void)
{
    FmaPeak r = {0, 0, 0};
    __builtin_cpu_init();
    for (int rep = 0; rep < 3; rep++) {
        const long n = 50000000;
        double t = bench_thread_seconds();
        if (fma_clock_chain(n) != 8 * n) return r;
        t = bench_thread_seconds() - t;
        if (8.0 * n / t / 1e9 > r.ghz) r.ghz = 8.0 * n / t / 1e9;
        const long m = 10000000;
        if (__builtin_cpu_supports("avx512f")) {
            t = bench_thread_seconds();
            fma_512(m);
            t = bench_thread_seconds() - t;
            if (12.0 * m * 32 / t / 1e9 > r.avx512_gflops) r.avx512_gflops = 12.0 * m * 32 / t / 1e9;
        }
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            t = bench_thread_seconds();
            fma_256(m);
            t = bench_thread_seconds() - t;
            if (12.0 * m * 16 / t / 1e9 > r.avx2_gflops) r.avx2_gflops = 12.0 * m * 16 / t / 1e9;
        }
    }
    return r;
}
#else
static FmaPeak bench_fma_peak(void)
{
    FmaPeak r = {0, 0, 0};
    return r;
}
#endif

/* oneDNN's sgemm beside OpenBLAS's (C = A B^T), through the kernels' sgemm hook */
static double bench_sgemm_with(KernelsSgemm *gemm, int M, int N, int K, double seconds)
{
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * N * K), *c = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) a[i] = (float)(i % 7) * 0.1f;
    for (int i = 0; i < N * K; i++) b[i] = (float)(i % 5) * 0.1f;
    long reps = 0;
    double start = bench_thread_seconds(), t = 0;
    do {
        gemm(0, 1, M, N, K, a, K, b, K, 0.0f, c, N);
        reps++;
    } while ((t = bench_thread_seconds() - start) < seconds);
    free(a), free(b), free(c);
    return 2.0 * M * N * K * reps / t / 1e9;
}

/* Multiply-adds of one sample's forward through a same-padded K x K convolution on H x W
 * that touch the image, not its zero padding (a direct convolution skips the padding;
 * im2col multiplies it). */
static double conv_useful_macs(int C, int OC, int H, int W, int K)
{
    double rows = 0, cols = 0;
    for (int i = 0; i < H; i++)
        for (int k = 0; k < K; k++) rows += i + k - K / 2 >= 0 && i + k - K / 2 < H;
    for (int j = 0; j < W; j++)
        for (int k = 0; k < K; k++) cols += j + k - K / 2 >= 0 && j + k - K / 2 < W;
    return (double)C * OC * rows * cols;
}

/* FLOPs of one CNN step of batch B that touch data (forward, weight gradients, input
 * gradients but for the first layer), the multiply-adds of the convolutions and the
 * linear layers only: what a direct convolution must do. */
static double cnn_useful_flops(const ModelSpec *s, int B)
{
    const int c1 = s->conv_channels[0], c2 = s->conv_channels[1], h = s->in_height, w = s->in_width;
    double first = conv_useful_macs(s->in_channels, c1, h, w, s->kernel);
    double second = conv_useful_macs(c1, c2, h / 2, w / 2, s->kernel);
    double linear = (double)c2 * (h / 4) * (w / 4) * s->hidden + (double)s->hidden * s->classes;
    return 2.0 * B * (2 * first + 3 * second + 3 * linear);
}

/* The machine is shared: every figure goes with the load it was measured under. */
static void print_load(const char *when)
{
    double load[3];
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) == 3)
        printf("load average %s: %.2f %.2f %.2f (%ld cores)\n", when, load[0], load[1], load[2],
               sysconf(_SC_NPROCESSORS_ONLN));
    fclose(f);
}

#define CNN_ROUNDS 5

static int run_benchmark(void)
{
    print_load("at the start");
    printf("rates in CPU time of one thread (OPENBLAS single-threaded, OpenBLAS core %s; %s)\n",
           openblas_get_corename(), conv_onednn_available() ? conv_onednn_describe() : "built without oneDNN");
    FmaPeak fma = bench_fma_peak();
    if (fma.ghz > 0)
        printf("the physical limit: clock %.2f GHz (dependent adds); FMA throughput measured %.1f GFLOPS AVX-512 "
               "(%.1f flop/cycle), %.1f GFLOPS AVX2 (%.1f flop/cycle); AVX-512 peak 2 FMA units x 16 floats x 2 "
               "flops x clock = %.1f GFLOPS\n",
               fma.ghz, fma.avx512_gflops, fma.avx512_gflops / fma.ghz, fma.avx2_gflops, fma.avx2_gflops / fma.ghz,
               64 * fma.ghz);
    const double peak_512 = fma.avx512_gflops > 0 ? 64 * fma.ghz : 32 * fma.ghz;
    /* "best sgemm": the best of a square sgemm and the MLP's own shapes, so the percentages
     * are against what OpenBLAS reaches on this machine at this moment (load included). */
    double rates[4];
    double peak = bench_peak(0.4, rates);
    printf("single-thread cblas_sgemm (C = A B^T): 512x512x512 %.1f GFLOPS; 64x256x784 %.1f, 256x256x784 %.1f, "
           "64x128x256 %.1f; best %.1f GFLOPS\n",
           rates[0], rates[1], rates[2], rates[3], peak);
    if (conv_onednn_available())
        printf("single-thread dnnl_sgemm (C = A B^T): 512x512x512 %.1f GFLOPS; 64x256x784 %.1f\n",
               bench_sgemm_with(conv_onednn_sgemm, 512, 512, 512, 0.4),
               bench_sgemm_with(conv_onednn_sgemm, 64, 256, 784, 0.4));
    const int batches[] = {64, 256};
    char torch_version[64] = "";
    int have_torch = bench_have_torch(torch_version, sizeof torch_version);
    if (!have_torch)
        printf("PyTorch comparisons skipped: `%s -c 'import torch'` fails on this machine (python3-torch; PYTHON "
               "names another interpreter)\n",
               bench_python());
    for (int i = 0; i < 2; i++) {
        ModelSpec s = spec_mlp(batches[i]);
        StepBench r = bench_step(&s, 1.5);
        printf("MLP 784-256-128-10 batch %3d (gather + fwd + bwd + SGD momentum): %7.1f steps/s, %5.1f GFLOPS "
               "= %4.1f %% of best sgemm (cost-model FLOPs: %.1f GFLOPS)\n",
               batches[i], r.steps_per_s, r.gflops, 100 * r.gflops / peak, r.profile_gflops);
        double torch_rate = have_torch ? bench_torch_mlp(batches[i], 1.5) : 0;
        if (torch_rate > 0)
            printf("  PyTorch, 1 thread, same model/batch/step: %7.1f steps/s; ours / PyTorch = %.2f\n", torch_rate,
                   r.steps_per_s / torch_rate);
    }
    /* The CNN: our step on each kernel set, and PyTorch's in every configuration of
     * bench/torch_step.py under both malloc settings, taking turns for CNN_ROUNDS rounds,
     * so that a passing load on the shared machine weighs on all alike; medians. */
    ModelSpec c = spec_cnn(64), c_ref = spec_cnn(64);
    c_ref.kernels = MODEL_KERNELS_OPENBLAS;
    const int fast = model_kernels_resolve(&c) == MODEL_KERNELS_ONEDNN;
    double steps[CNN_ROUNDS], ref_steps[CNN_ROUNDS], profile = 0;
    TorchConfigs torch;
    memset(&torch, 0, sizeof torch);
    for (int k = 0; k < CNN_ROUNDS; k++) {
        StepBench r = bench_step(&c, 1.5);
        steps[k] = r.steps_per_s;
        if (r.steps_per_s > 0) profile = r.profile_gflops / r.steps_per_s; /* cost-model GFLOP per step */
        ref_steps[k] = fast ? bench_step(&c_ref, 1.5).steps_per_s : r.steps_per_s;
        if (have_torch)
            for (int tuned = 0; tuned < 2; tuned++)
                if (!bench_torch_cnn(&torch, tuned, k, 0.75)) have_torch = 0;
    }
    const double useful = cnn_useful_flops(&c, 64) / 1e9;
    const double ours = median(steps, CNN_ROUNDS), ref = median(ref_steps, CNN_ROUNDS);
    printf("CNN 32,64 k5 hidden 128 batch 64 (gather + fwd + bwd + SGD momentum), medians of %d rounds taking "
           "turns:\n",
           CNN_ROUNDS);
    printf("  hetsim, kernels = %s: %.2f steps/s (%.0f samples/s); %.1f useful GFLOPS (%.3f GFLOP a step of "
           "multiply-adds that touch data) = %.1f %% of the AVX-512 peak; cost-model FLOPs %.1f GFLOPS\n",
           fast ? "onednn (auto)" : "openblas (auto: built without oneDNN)", ours, 64 * ours, useful * ours, useful,
           peak_512 > 0 ? 100 * useful * ours / peak_512 : 0, profile * ours);
    if (fast)
        printf("  hetsim, kernels = openblas (the reference): %.2f steps/s, %.1f useful GFLOPS = %.1f %% of the "
               "AVX-512 peak; onednn / openblas = %.2f\n",
               ref, useful * ref, peak_512 > 0 ? 100 * useful * ref / peak_512 : 0, ours / ref);
    printf("  the limit at the AVX-512 peak: %.1f steps/s (every useful multiply-add at 64 flop/cycle)\n",
           peak_512 > 0 ? peak_512 / useful : 0);
    if (!have_torch || torch.n == 0) {
        printf("  PyTorch comparison skipped: `%s bench/torch_step.py` did not run (python3-torch?)\n",
               bench_python());
        print_load("at the end");
        return 0;
    }
    double config_median[TORCH_CONFIGS];
    int best = 0;
    for (int i = 0; i < torch.n; i++) {
        config_median[i] = median(torch.rate[i], CNN_ROUNDS);
        if (config_median[i] > config_median[best]) best = i;
    }
    printf("  PyTorch %s, 1 thread (OMP_NUM_THREADS=1, set_num_threads(1)), same model/batch/step, medians of the "
           "rounds:\n",
           torch_version);
    for (int i = 0; i < torch.n; i++)
        printf("    %-58s %6.2f steps/s%s\n", torch.name[i], config_median[i], i == best ? "  <- best" : "");
    const double torch_best = config_median[best], torch_median = median(config_median, torch.n);
    printf("  PyTorch best %.2f steps/s, median of the %d configurations %.2f steps/s\n", torch_best, torch.n,
           torch_median);
    printf("  ours / PyTorch best = %.2f; ours / PyTorch median = %.2f; PyTorch best = %.1f %% of the AVX-512 "
           "peak\n",
           ours / torch_best, ours / torch_median, peak_512 > 0 ? 100 * useful * torch_best / peak_512 : 0);
    print_load("at the end");
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
    double start = bench_seconds();
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
               sum / steps, test_loss, test_acc, bench_seconds() - start);
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
