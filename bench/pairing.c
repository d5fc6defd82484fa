/* pairing.c — wall times of the three pairing solvers and greedy's gap to the optimum.
 *
 * Instances follow the ComDML authors' setting: every agent has 59 batches (3,750
 * samples of 64), a per-batch compute time drawn from {16, 22, 54, 72, 256} ms with
 * probabilities {.1, .2, .4, .2, .1}, links of {100, 50, 10} MB/s with probabilities
 * {.2, .3, .5}, and the 8-split profile of DESIGN.md's instance example (activations in
 * MB per batch). Dense instances have a full bandwidth matrix; the 10,000-agent one is a
 * ring plus random chords, degree about 16, stored as link lists.
 *
 * Prints medians of repeated solves (ms) and asserts nothing about time. ip runs once per
 * size with a time limit; past it the solver falls back to exact and the tables say
 * "timeout" (inf for a median past the limit). Last, both costs side by side (`pairing
 * costs` prints only that table). About a minute in all. */
#include "bench/bench.h"
#include "solver/pairing.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_SPLITS 8
static const double bench_fs[BENCH_SPLITS] = {1, .99, .73, .64, .56, .35, .24, .01};
static const double bench_ff[BENCH_SPLITS] = {0, .02, .13, .26, .43, .51, .65, .99};
static const double bench_act[BENCH_SPLITS] = {0, 1.25e6, 1.25e6, 2.5e6, 2.5e6, 5e6, 5e6, 1.25e6};
static const double bench_ip_limit = 10; /* seconds */

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

static int bench_dense(PairingProblem *p, int n, gsl_rng *rng)
{
    if (pairing_problem_init(p, n, BENCH_SPLITS) != HS_OK) return HS_E_NOMEM;
    bench_agents(p, rng);
    for (int i = 0; i < n; i++) {
        p->bandwidth[(size_t)i * n + i] = INFINITY;
        for (int j = i + 1; j < n; j++)
            p->bandwidth[(size_t)i * n + j] = p->bandwidth[(size_t)j * n + i] = bench_link(rng);
    }
    return HS_OK;
}

/* A ring plus random chords, symmetric, at most `degree` links per agent. */
static int bench_sparse(PairingProblem *p, int n, int degree, gsl_rng *rng)
{
    int status = HS_E_NOMEM;
    int *to = malloc((size_t)n * degree * sizeof *to);
    double *bw = malloc((size_t)n * degree * sizeof *bw);
    int *count = calloc((size_t)n, sizeof *count);
    if (!to || !bw || !count) goto fail;
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
    for (int i = 0; i < n; i++)
        links += (size_t)count[i];
    if (pairing_problem_init_sparse(p, n, BENCH_SPLITS, links) != HS_OK) goto fail;
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
    status = HS_OK;
fail:
    free(to);
    free(bw);
    free(count);
    return status;
}

typedef struct BenchRun {
    double ms;       /* median wall time */
    double makespan; /* of the last solve */
    int fell_back;
    int status;
} BenchRun;

/* Median wall time of `reps` solves; ip stops repeating after a fallback. */
static BenchRun bench_solve(const PairingProblem *p, const char *solver, int reps, double ip_limit)
{
    BenchRun run = {.status = HS_E_NOMEM};
    double ms[16];
    int done = 0;
    PairingResult r;
    if (pairing_result_init(&r, p->n) != HS_OK) return run;
    while (done < reps && done < 16) {
        HsDiag diag;
        hs_diag_clear(&diag);
        double start = bench_seconds();
        run.status = solver_pair(p, solver, ip_limit, &r, &diag);
        ms[done++] = (bench_seconds() - start) * 1e3;
        if (run.status != HS_OK) fprintf(stderr, "bench: %s: %s\n", solver, diag.message);
        if (r.fell_back) break; /* one timeout says enough */
    }
    run.makespan = r.makespan;
    run.fell_back = r.fell_back;
    pairing_result_free(&r);
    qsort(ms, (size_t)done, sizeof *ms, bench_compare_doubles);
    run.ms = ms[done / 2];
    return run;
}

static double bench_alone(const PairingProblem *p)
{
    double alone = 0;
    for (int i = 0; i < p->n; i++)
        alone = fmax(alone, pairing_standalone(p, i));
    return alone;
}

static void bench_times(gsl_rng *rng)
{
    printf("solver wall time in ms, median of repeats (ip: once, limit %g s)\n", bench_ip_limit);
    printf("%-22s %10s %12s %10s %9s %9s %9s\n", "agents", "exact", "ip", "greedy", "alone s", "exact s", "greedy s");
    static const int sizes[] = {8, 16, 64, 256, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int n = sizes[s], reps = n <= 256 ? 9 : 3;
        PairingProblem p;
        if (bench_dense(&p, n, rng) != HS_OK) return;
        BenchRun exact = bench_solve(&p, "exact", reps, 0), greedy = bench_solve(&p, "greedy", reps, 0);
        BenchRun ip = bench_solve(&p, "ip", 1, bench_ip_limit);
        char ip_text[32], label[32];
        if (ip.fell_back)
            snprintf(ip_text, sizeof ip_text, "timeout");
        else
            snprintf(ip_text, sizeof ip_text, "%.3f", ip.ms);
        if (!ip.fell_back && fabs(ip.makespan - exact.makespan) > 1e-9 * exact.makespan)
            printf("  ip and exact disagree: %.9g vs %.9g\n", ip.makespan, exact.makespan);
        snprintf(label, sizeof label, "%d (full matrix)", n);
        printf("%-22s %10.3f %12s %10.3f %9.3f %9.3f %9.3f\n", label, exact.ms, ip_text, greedy.ms, bench_alone(&p),
               exact.makespan, greedy.makespan);
        pairing_problem_free(&p);
    }
    PairingProblem p;
    if (bench_sparse(&p, 10000, 16, rng) != HS_OK) return;
    BenchRun exact = bench_solve(&p, "exact", 3, 0), greedy = bench_solve(&p, "greedy", 3, 0);
    printf("%-22s %10.3f %12s %10.3f %9.3f %9.3f %9.3f\n", "10000 (sparse, deg 16)", exact.ms, "(not run)", greedy.ms,
           bench_alone(&p), exact.makespan, greedy.makespan);
    pairing_problem_free(&p);
}

/* Where lp_solve stops keeping up: how many instances it solves within a short limit. */
static void bench_ip_reach(gsl_rng *rng)
{
    enum { INSTANCES = 4 };
    const double limit = 2;
    printf("\nip within %g s, %d instances per size (full matrix)\n", limit, INSTANCES);
    printf("%7s %8s %12s\n", "agents", "solved", "median ms");
    static const int sizes[] = {16, 20, 24, 28, 32};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        double ms[INSTANCES];
        int solved = 0;
        for (int k = 0; k < INSTANCES; k++) {
            PairingProblem p;
            if (bench_dense(&p, sizes[s], rng) != HS_OK) return;
            BenchRun ip = bench_solve(&p, "ip", 1, limit);
            solved += !ip.fell_back;
            ms[k] = ip.fell_back ? INFINITY : ip.ms;
            pairing_problem_free(&p);
        }
        qsort(ms, INSTANCES, sizeof *ms, bench_compare_doubles);
        printf("%7d %6d/%d %12.1f\n", sizes[s], solved, INSTANCES, ms[INSTANCES / 2]);
    }
}

static void bench_gap(gsl_rng *rng)
{
    enum { TRIALS = 1000 };
    printf("\ngreedy's makespan against the optimum (exact), %d random instances per size\n", TRIALS);
    printf("%7s %14s %12s %12s %14s\n", "agents", "greedy worse", "mean gap", "max gap", "mean gain, %");
    static const int sizes[] = {4, 8, 16, 64, 256};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int n = sizes[s], worse = 0;
        double sum = 0, max = 0, gain = 0;
        PairingResult a, b;
        if (pairing_result_init(&a, n) != HS_OK || pairing_result_init(&b, n) != HS_OK) return;
        for (int t = 0; t < TRIALS; t++) {
            PairingProblem p;
            HsDiag diag;
            hs_diag_clear(&diag);
            if (bench_dense(&p, n, rng) != HS_OK) return;
            if (solver_pair(&p, "exact", 0, &a, &diag) != HS_OK || solver_pair(&p, "greedy", 0, &b, &diag) != HS_OK) {
                fprintf(stderr, "bench: %s\n", diag.message);
                return;
            }
            double gap = b.makespan / a.makespan - 1, alone = 0;
            for (int i = 0; i < n; i++)
                alone = fmax(alone, pairing_standalone(&p, i));
            if (gap > 1e-12) worse++;
            sum += gap;
            max = fmax(max, gap);
            gain += 1 - a.makespan / alone;
            pairing_problem_free(&p);
        }
        printf("%7d %13.1f%% %11.2f%% %11.2f%% %13.1f%%\n", n, 100.0 * worse / TRIALS, 100 * sum / TRIALS, 100 * max,
               100 * gain / TRIALS);
        pairing_result_free(&a);
        pairing_result_free(&b);
    }
    printf("(gap = greedy / optimum - 1; gain = the optimum's cut of the all-alone makespan)\n");
}

/* The exact cost (solver/cost.c) against the paper's on the same instances: 10 ms of
 * latency per agent, each [network] variant. Under maxmin a link slower than the slow
 * side's activations makes each evaluation an O(n_i) recurrence. */
static void bench_costs(gsl_rng *rng)
{
    static const char *const names[] = {"paper", "exact maxmin", "exact fifo", "exact maxmin-fifo"};
    printf("\nexact and greedy in ms under each cost (median of 3), makespan in s\n");
    printf("%-22s %-18s %10s %10s %10s\n", "agents", "cost", "exact", "greedy", "makespan");
    for (int size = 0; size < 2; size++) {
        PairingProblem p;
        int status = size == 0 ? bench_dense(&p, 1000, rng) : bench_sparse(&p, 10000, 16, rng);
        if (status != HS_OK) return;
        for (int i = 0; i < p.n; i++)
            p.latency[i] = 0.01;
        for (int k = 0; k < 4; k++) {
            p.cost = k == 0 ? PAIRING_COST_PAPER : PAIRING_COST_EXACT;
            p.network = k == 2 ? PAIRING_NETWORK_FIFO : k == 3 ? PAIRING_NETWORK_MAXMIN_FIFO : PAIRING_NETWORK_MAXMIN;
            BenchRun exact = bench_solve(&p, "exact", 3, 0), greedy = bench_solve(&p, "greedy", 3, 0);
            printf("%-22s %-18s %10.1f %10.1f %10.3f\n", size == 0 ? "1000 (full matrix)" : "10000 (sparse, deg 16)",
                   names[k], exact.ms, greedy.ms, exact.makespan);
        }
        pairing_problem_free(&p);
    }
}

int main(int argc, char **argv)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    if (rng == NULL) return 1;
    gsl_rng_set(rng, 42);
    double start = bench_seconds();
    if (argc > 1 && strcmp(argv[1], "costs") == 0) { /* just this table */
        bench_costs(rng);
        gsl_rng_free(rng);
        return 0;
    }
    bench_times(rng);
    bench_ip_reach(rng);
    bench_gap(rng);
    bench_costs(rng);
    printf("\nbench/pairing: %.1f s in all\n", bench_seconds() - start);
    gsl_rng_free(rng);
    return 0;
}
