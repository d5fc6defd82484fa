/* wino_gemm.c — the Winograd block's 64 sgemms of one chunk (models/conv_winograd.c, the
 * CNN's second block: 4 samples of 14x14, 64 tiles, 32 -> 64 channels) on oneDNN's
 * dnnl_sgemm and on hetsim's AVX-512 kernel (models/conv_winograd_gemm.c), for the three
 * passes' shapes with the block's leading dimensions, for issue #36. Between repetitions a
 * 4 MB buffer is swept, so that the operands start out of the L2 cache as they do in a
 * run. Prints thread CPU milliseconds for the 64 calls, minimum and median of REPS, and
 * whether the two gave the same bits. Asserts nothing.
 *
 * Usage: bench/wino_gemm [REPS]   (default 200, at most 2000) */
#include "bench/bench.h"
#include "models/conv_onednn.h"
#include "models/conv_winograd_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { GEMM_POSITIONS = 64, GEMM_SKEW = 16, GEMM_REPS_MAX = 2000 };

/* The 64 products of one pass: position xi's rows of A (a tile's 64 positions a row, as
 * the block's v), its filters' K x N in B, its columns of C (as the block's m). */
static void gemm_pass(int own, int trans_a, int M, int N, int K, const float *a, int lda, const float *b, float *c,
                      int ldc, int beta)
{
    const size_t bstride = (size_t)K * N + GEMM_SKEW;
    for (int xi = 0; xi < GEMM_POSITIONS; xi++) {
        const float *A = a + (size_t)xi * (trans_a ? M : K);
        if (own)
            conv_winograd_gemm(trans_a, M, N, K, A, lda, b + xi * bstride, N, beta, c + (size_t)xi * N, ldc);
        else
            conv_onednn_sgemm(trans_a, 0, M, N, K, A, lda, b + xi * bstride, N, beta ? 1.0f : 0.0f,
                              c + (size_t)xi * N, ldc);
    }
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 200;
    if (reps < 1 || reps > GEMM_REPS_MAX) {
        fprintf(stderr, "wino_gemm: REPS must be 1..%d\n", GEMM_REPS_MAX);
        return 2;
    }
    if (!conv_onednn_available() || !conv_winograd_gemm_available()) {
        printf("wino_gemm: needs oneDNN and an AVX-512 processor; nothing to measure\n");
        return 0;
    }
    static const struct {
        const char *name;
        int trans_a, M, N, K, beta;
    } pass[] = {{"forward        [64 tiles x 32] x [32 x 64]", 0, 64, 64, 32, 0},
                {"backward-data  [64 tiles x 64] x [64 x 32]", 0, 64, 32, 64, 0},
                {"backward-wts   [32 x 64 tiles] x [64 x 64] + C", 1, 32, 64, 64, 1}};
    const size_t sweep = (size_t)1 << 20;
    float *other = calloc(sweep, sizeof(float));
    double *t[2] = {malloc(sizeof(double) * reps), malloc(sizeof(double) * reps)};
    if (!other || !t[0] || !t[1]) return 1;
    printf("the 64 sgemms of one chunk (%d repetitions; thread CPU ms for the 64 calls)\n", reps);
    for (size_t p = 0; p < sizeof pass / sizeof pass[0]; p++) {
        const int ta = pass[p].trans_a, M = pass[p].M, N = pass[p].N, K = pass[p].K;
        const int arows = ta ? K : M, lda = GEMM_POSITIONS * (ta ? M : K) + GEMM_SKEW;
        const int ldc = GEMM_POSITIONS * N + GEMM_SKEW;
        const size_t na = (size_t)arows * lda, nb = GEMM_POSITIONS * ((size_t)K * N + GEMM_SKEW);
        const size_t nc = (size_t)M * ldc;
        float *a = malloc(sizeof(float) * na), *b = malloc(sizeof(float) * nb);
        float *c[2] = {malloc(sizeof(float) * nc), malloc(sizeof(float) * nc)};
        if (!a || !b || !c[0] || !c[1]) return 1;
        unsigned state = 7;
        for (size_t i = 0; i < na; i++) a[i] = (float)((state = state * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
        for (size_t i = 0; i < nb; i++) b[i] = (float)((state = state * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
        for (int own = 0; own < 2; own++) {
            for (size_t i = 0; i < nc; i++) c[own][i] = 0.25f;
            gemm_pass(own, ta, M, N, K, a, lda, b, c[own], ldc, pass[p].beta);
        }
        const int same = memcmp(c[0], c[1], sizeof(float) * nc) == 0;
        for (int r = 0; r < reps; r++)
            for (int own = 0; own < 2; own++) {
                for (size_t i = 0; i < sweep; i += 16) other[i] += 1.0f;
                const double t0 = 1e3 * bench_thread_seconds();
                gemm_pass(own, ta, M, N, K, a, lda, b, c[own], ldc, pass[p].beta);
                t[own][r] = 1e3 * bench_thread_seconds() - t0;
            }
        for (int own = 0; own < 2; own++) qsort(t[own], reps, sizeof(double), bench_compare_doubles);
        printf("  %-46s dnnl_sgemm min %.3f median %.3f   hetsim min %.3f median %.3f   bits %s\n", pass[p].name,
               t[0][0], t[0][reps / 2], t[1][0], t[1][reps / 2], same ? "same" : "DIFFER");
        free(a), free(b), free(c[0]), free(c[1]);
    }
    free(other), free(t[0]), free(t[1]);
    return 0;
}
