/* pairing.c — solver wall times for N = 8 ... 1,000 agents with a full bandwidth
 * matrix and 10,000 with sparse links, and greedy's gap to the optimum over many random
 * instances. Instances follow the ComDML authors' setting: per-batch compute times
 * {16, 22, 54, 72, 256} with probabilities {.1, .2, .4, .2, .1}, links {100, 50, 10}
 * MB/s with probabilities {.2, .3, .5}, the split profile of a small CNN. Prints
 * medians of repeated solves; asserts nothing about time. */
#include "solver/pairing.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const double bench_fs[] = {1, 0.1076, 0.9339, 1.0};
static const double bench_ff[] = {0, 0.8928, 0.0664, 0.0004};
static const double bench_act[] = {0, 0.803e6, 0.401e6, 0.0328e6}; /* bytes per batch of 64 */

static double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double bench_choice(gsl_rng *rng, const double *values, const double *probs, int n)
{
    double u = gsl_rng_uniform(rng), acc = 0;
    for (int i = 0; i < n; i++)
        if (u < (acc += probs[i])) return values[i];
    return values[n - 1];
}

static void bench_agents(PairingProblem *p, gsl_rng *rng)
{
    static const double times[] = {0.016, 0.022, 0.054, 0.072, 0.256}, probs[] = {.1, .2, .4, .2, .1};
    for (int i = 0; i < p->n; i++) {
        p->batches[i] = 59;
        p->speed[i] = 1.0 / bench_choice(rng, times, probs, 5);
    }
    memcpy(p->fs, bench_fs, sizeof bench_fs);
    memcpy(p->ff, bench_ff, sizeof bench_ff);
    memcpy(p->act, bench_act, sizeof bench_act);
}

static double bench_link(gsl_rng *rng)
{
    static const double bw[] = {100e6, 50e6, 10e6}, probs[] = {.2, .3, .5};
    return bench_choice(rng, bw, probs, 3);
}

static void bench_dense(PairingProblem *p, int n, gsl_rng *rng)
{
    pairing_problem_init(p, n, 4);
    bench_agents(p, rng);
    for (int i = 0; i < n; i++) {
        p->bandwidth[(size_t)i * n + i] = INFINITY;
        for (int j = i + 1; j < n; j++) p->bandwidth[(size_t)i * n + j] = p->bandwidth[(size_t)j * n + i] = bench_link(rng);
    }
}

/* A ring plus random chords: degree about `degree`, symmetric. */
static void bench_sparse(PairingProblem *p, int n, int degree, gsl_rng *rng)
{
    int *to = malloc((size_t)n * degree * sizeof *to);
    double *bw = malloc((size_t)n * degree * sizeof *bw);
    int *count = calloc((size_t)n, sizeof *count);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < degree / 2; k++) {
            int j = k == 0 ? (i + 1) % n : (int)gsl_rng_uniform_int(rng, (unsigned long)n);
            if (j == i || count[i] >= degree || count[j] >= degree) continue;
            double b = bench_link(rng);
            to[(size_t)i * degree + count[i]] = j;
            bw[(size_t)i * degree + count[i]++] = b;
            to[(size_t)j * degree + count[j]] = i;
            bw[(size_t)j * degree + count[j]++] = b;
        }
    size_t links = 0;
    for (int i = 0; i < n; i++) links += (size_t)count[i];
    pairing_problem_init_sparse(p, n, 4, links);
    bench_agents(p, rng);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        p->link_offsets[i] = (int)k;
        for (int c = 0; c < count[i]; c++) {
            p->link_to[k] = to[(size_t)i * degree + c];
            p->link_bandwidth[k++] = bw[(size_t)i * degree + c];
        }
    }
    p->link_offsets[n] = (int)k;
    free(to);
    free(bw);
    free(count);
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median wall milliseconds of `reps` solves; *makespan from the last. */
static double bench_solve(const PairingProblem *p, const char *solver, int reps, double *makespan, int *fell_back)
{
    double ms[16];
    PairingResult r;
    pairing_result_init(&r, p->n);
    HsDiag diag;
    for (int k = 0; k < reps; k++) {
        hs_diag_clear(&diag);
        double start = bench_now();
        solver_pair(p, solver, 20, &r, &diag);
        ms[k] = (bench_now() - start) * 1e3;
    }
    *makespan = r.makespan;
    *fell_back = r.fell_back;
    pairing_result_free(&r);
    qsort(ms, (size_t)reps, sizeof *ms, compare_double);
    return ms[reps / 2];
}

int main(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, 42);
    printf("solver wall time, median (full bandwidth matrix; 10000: sparse, degree ~16)\n");
    printf("%7s %12s %12s %12s %10s %10s\n", "agents", "exact ms", "ip ms", "greedy ms", "alone s", "exact s");
    int sizes[] = {8, 16, 64, 256, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int n = sizes[s], reps = n <= 256 ? 5 : 3;
        PairingProblem p;
        bench_dense(&p, n, rng);
        double exact_ms, ip_ms = NAN, greedy_ms, exact_makespan, ip_makespan, greedy_makespan;
        int fell_back = 0, ignored;
        exact_ms = bench_solve(&p, "exact", reps, &exact_makespan, &ignored);
        greedy_ms = bench_solve(&p, "greedy", reps, &greedy_makespan, &ignored);
        if (n <= 64) ip_ms = bench_solve(&p, "ip", 1, &ip_makespan, &fell_back);
        double alone = 0;
        for (int i = 0; i < n; i++) alone = fmax(alone, pairing_standalone(&p, i));
        char ip_text[32];
        if (n > 64) snprintf(ip_text, sizeof ip_text, "(not run)");
        else if (fell_back) snprintf(ip_text, sizeof ip_text, "timeout");
        else snprintf(ip_text, sizeof ip_text, "%.3f", ip_ms);
        printf("%7d %12.3f %12s %12.3f %10.3f %10.3f\n", n, exact_ms, ip_text, greedy_ms, alone, exact_makespan);
        pairing_problem_free(&p);
    }
    {
        PairingProblem p;
        bench_sparse(&p, 10000, 16, rng);
        double exact_ms, greedy_ms, exact_makespan, greedy_makespan;
        int ignored;
        exact_ms = bench_solve(&p, "exact", 3, &exact_makespan, &ignored);
        greedy_ms = bench_solve(&p, "greedy", 3, &greedy_makespan, &ignored);
        printf("%7d %12.3f %12s %12.3f %10s %10.3f\n", 10000, exact_ms, "(not run)", greedy_ms, "", exact_makespan);
        pairing_problem_free(&p);
    }
    printf("\ngreedy's gap to the optimum (exact), 1000 random instances per size\n");
    printf("%7s %14s %12s %12s\n", "agents", "greedy worse", "mean gap", "max gap");
    int gap_sizes[] = {4, 8, 16, 64};
    for (size_t s = 0; s < sizeof gap_sizes / sizeof *gap_sizes; s++) {
        int n = gap_sizes[s], worse = 0, trials = 1000;
        double sum = 0, max = 0;
        PairingResult a, b;
        pairing_result_init(&a, n);
        pairing_result_init(&b, n);
        for (int t = 0; t < trials; t++) {
            PairingProblem p;
            bench_dense(&p, n, rng);
            solver_exact(&p, &a);
            solver_greedy(&p, &b);
            double gap = b.makespan / a.makespan - 1;
            if (gap > 1e-12) worse++;
            sum += gap;
            if (gap > max) max = gap;
            pairing_problem_free(&p);
        }
        printf("%7d %13.1f%% %11.2f%% %11.2f%%\n", n, 100.0 * worse / trials, 100 * sum / trials, 100 * max);
        pairing_result_free(&a);
        pairing_result_free(&b);
    }
    gsl_rng_free(rng);
    return 0;
}
