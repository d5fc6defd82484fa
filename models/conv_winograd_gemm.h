/* conv_winograd_gemm.h — the Winograd block's small sgemms (conv_winograd.c) on AVX-512
 * without oneDNN's call overhead.
 *
 * A chunk of the CNN's second block runs 64 sgemms per pass, each tiny: [64 tiles x 32] x
 * [32 x 64] forward, [64 x 64] x [64 x 32] backward-data, [32 x 64 tiles] x [64 x 64]
 * backward-weights; some 550,000 calls in the CNN whole run. On shapes this small
 * dnnl_sgemm's work around its multiply loop (argument checks, choosing a kernel, packing)
 * is a good part of a call: bench/wino_gemm times a chunk's 64 forward calls at 0.122 ms
 * on it against 0.094 ms here (docs/results/performance.md, "The evaluation's forward
 * and the Winograd block's sgemms").
 *
 * The bits are dnnl_sgemm's. For a depth K up to 384 oneDNN 2.6's AVX-512 sgemm sums each
 * output over k = 0..K-1 in order, one fused multiply-add at a time from zero, then adds
 * beta C; past 384 it splits K into blocks, whose partial sums round differently, and a
 * single row with beta = 1 goes to its matrix-vector kernel, which sums in another order
 * (both found by scanning shapes against it). This kernel does the in-order sum and
 * therefore takes only the shapes conv_winograd_gemm_fits() accepts; conv_winograd.c runs
 * the others on oneDNN. tests/check_conv_winograd.c compares it
 * with dnnl_sgemm bit for bit over random shapes, and the block's AVX-512 path (this
 * kernel) with its generic path (dnnl_sgemm): another oneDNN whose order differed would
 * fail there, not silently change results. */
#ifndef MODELS_CONV_WINOGRAD_GEMM_H
#define MODELS_CONV_WINOGRAD_GEMM_H

/* The deepest product summed as dnnl_sgemm sums it (its K blocking starts above). */
#define CONV_WINOGRAD_GEMM_MAX_K 384

/* Whether conv_winograd_gemm runs here: an AVX-512F processor. */
int conv_winograd_gemm_available(void);
/* Whether a product of M rows, depth K, beta 0 or 1 gets dnnl_sgemm's bits from it. */
static inline int conv_winograd_gemm_fits(int M, int K, int beta)
{
    return K >= 1 && K <= CONV_WINOGRAD_GEMM_MAX_K && (M > 1 || !beta);
}

/* C (M x N, row-major, rows ldc apart) = (beta ? C : 0) + op(A) B, where op(A) is A (M x K,
 * rows lda apart) or, with trans_a, the transpose of A (K x M, rows lda apart), and B is
 * K x N (rows ldb apart). N a multiple of 16, M >= 1, a shape conv_winograd_gemm_fits();
 * only on a processor where conv_winograd_gemm_available(). */
void conv_winograd_gemm(int trans_a, int M, int N, int K, const float *A, int lda, const float *B, int ldb, int beta,
                        float *C, int ldc);

#endif
