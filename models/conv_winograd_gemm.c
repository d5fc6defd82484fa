/* conv_winograd_gemm.c — the Winograd block's sgemms on AVX-512 (see conv_winograd_gemm.h).
 *
 * Register blocking: a block of R rows of C by V vectors of 16 columns stays in R x V
 * accumulators while k runs over the whole depth; each k loads V vectors of B's row k and
 * broadcasts R elements of op(A)'s column k. R x V is 16 or more (Zen 5 and Skylake-X
 * have two FMA pipes of latency 4: 8 chains keep them busy) while a k step's loads (V + R)
 * stay under its multiply-adds: 4 x 4, 6 x 3, 8 x 2, 8 x 1 (V = 4: 0.088 ms for the 64
 * forward sgemms of a chunk; 6 x 4 0.099, 8 x 4 0.105, 3 x 4 0.092, one run each in a
 * scratch loop). B's 16 columns a vector is why N must be a multiple of 16, which the
 * block's rounded channel counts are. */
#include "models/conv_winograd_gemm.h"

#include <stddef.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* C[r][16 v ..] for the R x V block at (A, B, C): dnnl_sgemm's order, sum over k from zero
 * by fused multiply-adds, then beta C added. Inlined with constant R, V so that the
 * accumulators are registers. */
__attribute__((target("avx512f"), always_inline)) static inline void gemm_block(int R, int V, int trans_a, int K,
                                                                                 const float *A, int lda,
                                                                                 const float *B, int ldb, int beta,
                                                                                 float *C, int ldc)
{
    __m512 acc[8][4];
    for (int r = 0; r < R; r++)
        for (int v = 0; v < V; v++) acc[r][v] = _mm512_setzero_ps();
    for (int k = 0; k < K; k++) {
        __m512 b[4];
        for (int v = 0; v < V; v++) b[v] = _mm512_loadu_ps(B + (size_t)k * ldb + 16 * v);
        for (int r = 0; r < R; r++) {
            const __m512 a = _mm512_set1_ps(trans_a ? A[(size_t)k * lda + r] : A[(size_t)r * lda + k]);
            for (int v = 0; v < V; v++) acc[r][v] = _mm512_fmadd_ps(a, b[v], acc[r][v]);
        }
    }
    for (int r = 0; r < R; r++)
        for (int v = 0; v < V; v++) {
            float *c = C + (size_t)r * ldc + 16 * v;
            __m512 x = acc[r][v];
            if (beta) x = _mm512_add_ps(_mm512_loadu_ps(c), x);
            _mm512_storeu_ps(c, x);
        }
}

/* Rows i.. of C, columns n.. (V vectors), in blocks of R rows, the last rows one at a time. */
#define GEMM_ROWS(R, V)                                                                                          \
    do {                                                                                                         \
        int i = 0;                                                                                               \
        for (; i + (R) <= M; i += (R))                                                                           \
            gemm_block(R, V, trans_a, K, trans_a ? A + i : A + (size_t)i * lda, lda, B + n, ldb, beta,           \
                       C + (size_t)i * ldc + n, ldc);                                                            \
        for (; i < M; i++)                                                                                       \
            gemm_block(1, V, trans_a, K, trans_a ? A + i : A + (size_t)i * lda, lda, B + n, ldb, beta,           \
                       C + (size_t)i * ldc + n, ldc);                                                            \
    } while (0)

/* Inlined twice with trans_a constant, so that no test of it stays in the k loop. */
__attribute__((target("avx512f"), always_inline)) static inline void gemm_body(int trans_a, int M, int N, int K,
                                                                                const float *A, int lda,
                                                                                const float *B, int ldb, int beta,
                                                                                float *C, int ldc)
{
    for (int n = 0; n < N; n += 64) {
        const int vectors = (N - n) / 16;
        if (vectors >= 4)
            GEMM_ROWS(4, 4);
        else if (vectors == 3)
            GEMM_ROWS(6, 3);
        else if (vectors == 2)
            GEMM_ROWS(8, 2);
        else
            GEMM_ROWS(8, 1);
    }
}

__attribute__((target("avx512f"))) static void gemm_plain_avx512(int M, int N, int K, const float *A, int lda,
                                                                  const float *B, int ldb, int beta, float *C, int ldc)
{
    gemm_body(0, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

__attribute__((target("avx512f"))) static void gemm_transposed_avx512(int M, int N, int K, const float *A, int lda,
                                                                       const float *B, int ldb, int beta, float *C,
                                                                       int ldc)
{
    gemm_body(1, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

int conv_winograd_gemm_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

void conv_winograd_gemm(int trans_a, int M, int N, int K, const float *A, int lda, const float *B, int ldb, int beta,
                        float *C, int ldc)
{
    if (trans_a)
        gemm_transposed_avx512(M, N, K, A, lda, B, ldb, beta, C, ldc);
    else
        gemm_plain_avx512(M, N, K, A, lda, B, ldb, beta, C, ldc);
}

#else

int conv_winograd_gemm_available(void) { return 0; }

/* Never called where unavailable; the same sum in plain C for completeness. */
void conv_winograd_gemm(int trans_a, int M, int N, int K, const float *A, int lda, const float *B, int ldb, int beta,
                        float *C, int ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++)
                acc = __builtin_fmaf(trans_a ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k], B[(size_t)k * ldb + j],
                                     acc);
            C[(size_t)i * ldc + j] = beta ? C[(size_t)i * ldc + j] + acc : acc;
        }
}

#endif
