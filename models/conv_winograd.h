/* conv_winograd.h — 5x5 convolutions (stride 1, padding 2) by Winograd's minimal filtering
 * F(4x4, 5x5) (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR
 * 2016): `[run] kernels = winograd` runs the CNN's second conv block on it, forward,
 * backward-data and backward-weights, the one-channel first block on oneDNN
 * (conv_onednn.h). Each 4x4 output tile comes from an 8x8 input tile with 64 multiplies per
 * channel pair where the direct convolution does 400; over a batch those multiplies are 64
 * sgemms [tiles x Cin] x [Cin x Cout] (conv_winograd_gemm.h on AVX-512: dnnl_sgemm's bits
 * without its cost per call; dnnl_sgemm itself otherwise), between an input transform
 * B^T d B, a filter transform G g G^T and an output transform A^T m A. Backward-data is the
 * same algorithm with the kernels turned and the channels swapped; backward-weights runs
 * the forward's map transposed: A dY A^T per tile, sgemms [Cin x tiles] x [tiles x Cout]
 * summed over the batch, G^T dU G.
 *
 * The transforms are those of the points 0, 1, -1, 2, -2, 1/2, -1/2 and infinity, derived in
 * conv_winograd.c; G's entries (1/90, 2/45, 2/9...) are rounded, B^T's and A^T's are exact.
 * The result equals the direct convolution's to rounding: tests/check_conv_winograd.c
 * measures the error against the naive loops and bounds it.
 *
 * Determinism: the sgemms run sequentially in the calling thread (the AVX-512 kernel and
 * oneDNN's sum each product in the same order: the same bits), the transforms are plain
 * loops in a fixed order without fused multiply-adds (the build has no fp-contract), their
 * AVX-512 twins (picked at run time where the processor has AVX-512F) vectorise across 16
 * tiles and give the same bits. So the bits depend on the batch size and the instruction
 * set, never on hetsim's worker threads.
 *
 * A ConvWinograd is one shape with its buffers, per thread (it lives in a ModelWorkspace).
 * A batch runs in chunks of CONV_WINOGRAD_CHUNK samples so the transformed tiles stay in the
 * cache (4 samples: 64 tiles of 14x14, whose transformed rows and products take 0.5 and
 * 1 MB; 2, 8 and 16 samples were slower, docs/results/performance.md). Errors: creation returns
 * HS_E_INPUT for a kernel other than 5x5 or without oneDNN, HS_E_NOMEM. */
#ifndef MODELS_CONV_WINOGRAD_H
#define MODELS_CONV_WINOGRAD_H

#ifndef CONV_WINOGRAD_CHUNK
#define CONV_WINOGRAD_CHUNK 4
#endif
/* Blocks with fewer input channels stay on oneDNN: an sgemm of depth 1 saves nothing and the
 * transforms are pure overhead (the CNN's first block, one channel). */
#define CONV_WINOGRAD_MIN_CHANNELS 8

typedef struct ConvWinograd ConvWinograd;

/* A conv block (kernels.h conv2d_relu_pool_*): stride 1, padding 2, K = 5, bias, ReLU,
 * 2x2 max-pool; batches of 1..max_batch samples. */
int conv_winograd_create(int C, int H, int W, int OC, int K, int max_batch, ConvWinograd **out);
void conv_winograd_free(ConvWinograd *c);
/* Tests: 0 runs the generic transforms instead of the AVX-512 ones; the same bits. */
void conv_winograd_set_vector(ConvWinograd *c, int on);

/* out (B, OC, H, W) = the convolution of in (B, C, H, W) with w (OC, C, 5, 5), no bias. */
void conv_winograd_forward(ConvWinograd *c, float *out, const float *in, const float *w, int B);
/* din (B, C, H, W) += the gradient of that convolution's input from dout (B, OC, H, W). */
void conv_winograd_backward_data(ConvWinograd *c, float *din, const float *dout, const float *w, int B);
/* dw (OC, C, 5, 5) += the gradient of its weights from dout and the input in. */
void conv_winograd_backward_weights(ConvWinograd *c, float *dw, const float *dout, const float *in, int B);

/* As conv2d_relu_pool_forward: pooled out (B, OC, H/2, W/2) and argmax in its layout
 * (argmax NULL: an inference pass, after which no backward of this batch may run). */
void conv_winograd_relu_pool_forward(ConvWinograd *c, float *out, int *argmax, const float *in, const float *w,
                                     const float *b, int B);
/* As conv2d_relu_pool_backward: dw += ..., db += ..., but din = ... (NULL: skipped): the
 * input's gradient is written, with the bits of adding it to a zeroed din (no need to zero
 * it first). out and argmax are the forward's. */
void conv_winograd_relu_pool_backward(ConvWinograd *c, float *din, float *dw, float *db, const float *dout,
                                      const float *out, const int *argmax, const float *in, const float *w, int B);

#endif
