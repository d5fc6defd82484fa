/* conv_onednn.h — convolutions on oneDNN (Debian's libdnnl-dev 2.x), the fast path of the
 * CNN's conv blocks (`[run] kernels = onednn`, what `auto` picks for a CNN when hetsim is
 * built with oneDNN). The plain strided convolution is here and tested, but the ResNet
 * does not run on it yet. The reference path is kernels.c's im2col + OpenBLAS sgemm;
 * tests/check_conv_onednn.c compares the two.
 *
 * A ConvOnednn is one convolution shape with its primitives, its blocked scratch buffers
 * and its oneDNN stream: per thread (it lives in a ModelWorkspace). Tensors outside stay
 * in hetsim's layouts (activations NCHW, weights (OC, C, K, K)); inside, oneDNN's
 * direct convolutions run on the blocked layouts it prefers (nChw16c with AVX-512), the
 * moves in and out being reorders (or, for the CNN block, the pooling itself). A batch
 * is cut into chunks of CONV_ONEDNN_CHUNK samples, so that a chunk's blocked planes stay
 * in the cache; the samples left over run one at a time. So every call uses primitives
 * of two batch sizes only, created with the object.
 *
 * Determinism: oneDNN's CPU runtime in Debian is OpenMP; every thread that creates or runs
 * a primitive here sets its OpenMP thread count to 1 first, so primitives are planned and
 * run sequentially inside the calling thread, and a gradient's summation order depends on
 * the batch size alone (chunks are added in order), never on hetsim's worker threads.
 * oneDNN picks its kernels by the processor's instruction set, so bits are reproducible
 * on one machine (and any with the same ISA), not across ISAs — the same holds for
 * OpenBLAS's per-core kernels. No fast-math: the reductions are oneDNN's own fixed
 * orders, which differ from the im2col path's, so the two agree to rounding only.
 *
 * Errors: creation returns HS_E_NOMEM (or HS_E_INPUT when oneDNN refuses the shape or
 * hetsim was built without it). After a successful creation an execution cannot fail on
 * valid arguments; if oneDNN still reports an error, the outputs are filled with NaN so
 * the step's loss is reported as a divergence rather than trained on garbage. */
#ifndef MODELS_CONV_ONEDNN_H
#define MODELS_CONV_ONEDNN_H

#include <stddef.h>

#define CONV_ONEDNN_CHUNK 8

typedef struct ConvOnednn ConvOnednn;

/* 1 when hetsim was built with oneDNN and its CPU engine starts; 0 otherwise. */
int conv_onednn_available(void);
/* "oneDNN 2.6.3 (avx512_core)"-like text for reports, or "" without oneDNN. */
const char *conv_onednn_describe(void);

/* kernels.h's KernelsSgemm on oneDNN's sgemm (dnnl_sgemm, JIT kernels of the machine's
 * vector width), sequential in the calling thread. Without oneDNN: OpenBLAS's. */
void conv_onednn_sgemm(int trans_a, int trans_b, int M, int N, int K, const float *A, int lda, const float *B,
                       int ldb, float beta, float *C, int ldc);

/* The CNN's conv block (kernels.h conv2d_relu_pool_*): convolution stride 1, same padding
 * (K odd), bias, ReLU, 2x2 max-pool; batches of 1..max_batch samples. */
int conv_onednn_create_block(int C, int H, int W, int OC, int K, int max_batch, ConvOnednn **out);
/* A bias-free convolution with stride S and padding K/2 (kernels.h conv2d_strided_*). */
int conv_onednn_create_plain(int C, int H, int W, int OC, int K, int S, int max_batch, ConvOnednn **out);
void conv_onednn_free(ConvOnednn *c);

/* The pooled values conv2d_relu_pool_forward writes into out (B, OC, H/2, W/2), to
 * rounding: the same pooling rule (first maximum of each window) on oneDNN's conv output.
 * argmax (B * OC * (H/2) * (W/2) ints) is in this file's own layout, per sample (see
 * conv_onednn.c): only conv_onednn_relu_pool_backward reads it. argmax NULL: an inference
 * pass (evaluation), the same pooled values and no positions, after which no backward of
 * this batch may run. */
void conv_onednn_relu_pool_forward(ConvOnednn *c, float *out, int *argmax, const float *in, const float *w,
                                   const float *b, int B);
/* As conv2d_relu_pool_backward from the forward's argmax (which records where the ReLU
 * closed, so the pooled output is not needed): dw += ..., db += ..., din += ... (din
 * NULL: skipped). */
void conv_onednn_relu_pool_backward(ConvOnednn *c, float *din, float *dw, float *db, const float *dout,
                                    const int *argmax, const float *in, const float *w, int B);
/* Links two consecutive CNN blocks: from's forward then also writes its pooled output in
 * to's src layout, for the whole batch, and to's passes on that same output (the pointer
 * from's forward wrote, at the same batch size) read it there instead of reordering the
 * NCHW copy. HS_E_INPUT when the shapes or to's layout do not fit (nothing changes: the
 * link is only a shortcut), HS_E_NOMEM. */
int conv_onednn_link(ConvOnednn *from, ConvOnednn *to, int max_batch);
/* Drops c's linked copy, for callers that may have written the input themselves. */
void conv_onednn_forget(ConvOnednn *c);
/* Tests: 0 makes the pooling of c run its generic loops instead of its AVX-512 versions
 * (the default, where the processor has AVX-512F); the two give the same bits. */
void conv_onednn_set_vector(ConvOnednn *c, int on);

/* As conv2d_strided_forward (out is written) and conv2d_strided_backward (dw += ...,
 * din += ..., din NULL: skipped). */
void conv_onednn_forward(ConvOnednn *c, float *out, const float *in, const float *w, int B);
void conv_onednn_backward(ConvOnednn *c, float *din, float *dw, const float *dout, const float *in,
                          const float *w, int B);

#endif
