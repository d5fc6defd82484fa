/* kernels.h — layer kernels for the MLP and the small CNN, in the llm.c shape: outputs
 * first, then inputs, then sizes. Every `_backward` ADDS into the gradients it is given
 * (weights, biases and inputs alike), so gradients can be accumulated over calls; a
 * caller that wants a fresh gradient zeroes it first. Tensors are float32, row-major;
 * images are NCHW. Flatten is the identity on NCHW memory ((B, C, H, W) is already
 * (B, C*H*W)), so there is no flatten kernel: a linear layer reads the pooled buffer.
 *
 * Linear and convolution layers run on cblas_sgemm; the caller chooses OpenBLAS's thread
 * count (the simulator runs it single-threaded inside each worker). Every optimised
 * kernel has a naive twin (plain loops, `_naive` suffix, kernels_naive.c) that the tests
 * compare it with; the twins are not meant for production use. */
#ifndef MODELS_KERNELS_H
#define MODELS_KERNELS_H

#include <stddef.h>

/* The sgemm behind the linear layers: row-major C = op(A) op(B) + beta C, op(X) = X^T when
 * its trans flag is nonzero. kernels_sgemm_openblas is cblas_sgemm, the reference and what
 * the functions without _with use; conv_onednn.h's conv_onednn_sgemm is oneDNN's, which a
 * CNN's or ResNet's linear layers run on when its convolutions run on oneDNN. */
typedef void KernelsSgemm(int trans_a, int trans_b, int M, int N, int K, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc);
void kernels_sgemm_openblas(int trans_a, int trans_b, int M, int N, int K, const float *A, int lda, const float *B,
                            int ldb, float beta, float *C, int ldc);

/* One 2x2 window of the fused conv block's pool: bias already added, ReLU on its four conv
 * outputs (a, bb above c, d), its maximum returned and in *position the place of its
 * first maximum (0..3, row-major), by maxpool2_forward's comparisons in order. The
 * position is arithmetic on the comparisons' outcomes, not a branch (they are coin flips
 * on real data), so that loops over windows vectorise. Shared by kernels.c's block and
 * conv_onednn.c's generic pool, which must give the same bits. */
static inline float kernels_relu_pool_window(float a, float bb, float c, float d, int *position)
{
    a = a < 0.0f ? 0.0f : a;
    bb = bb < 0.0f ? 0.0f : bb;
    c = c < 0.0f ? 0.0f : c;
    d = d < 0.0f ? 0.0f : d;
    int t1 = bb > a;
    float m = t1 ? bb : a;
    int t2 = c > m;
    m = t2 ? c : m;
    int t3 = d > m;
    m = t3 ? d : m;
    /* the last comparison that held names the position */
    *position = t3 * 3 + (1 - t3) * (t2 * 2 + (1 - t2) * t1);
    return m;
}

/* out = in W^T + b. */
void linear_forward(float *out,      /* (B, OUT) */
                    const float *in, /* (B, IN) */
                    const float *w,  /* (OUT, IN) */
                    const float *b,  /* (OUT), may be NULL */
                    int B, int IN, int OUT);
/* out = relu(in W^T + b): bias and ReLU fused in one pass after the sgemm. */
void linear_relu_forward(float *out, /* (B, OUT) */
                         const float *in, const float *w, const float *b, int B, int IN, int OUT);
/* dw += dout^T in; db += column sums of dout; din += dout W (skipped when din is NULL). */
void linear_backward(float *din,        /* (B, IN), may be NULL */
                     float *dw,         /* (OUT, IN) */
                     float *db,         /* (OUT), may be NULL */
                     const float *dout, /* (B, OUT) */
                     const float *in,   /* (B, IN) */
                     const float *w,    /* (OUT, IN) */
                     int B, int IN, int OUT);

/* out = max(in, 0); out may equal in. NaN passes through (so a NaN weight reaches the
 * loss and is reported as divergence); the same holds for the fused ReLUs. */
void relu_forward(float *out, const float *in, size_t n); /* (n) each */
/* din += dout where out > 0. */
void relu_backward(float *din, const float *dout, const float *out, size_t n);
/* In place: d = d where out > 0, else 0 — relu_backward into a zeroed din, without the
 * second buffer. The models use it on the gradient of a post-ReLU activation. */
void relu_backward_inplace(float *d, const float *out, size_t n);

/* Mean softmax cross-entropy over the batch, accumulated in double in sample order.
 * Writes dlogits = (softmax(logits) - onehot(y)) / B unless dlogits is NULL. If correct
 * is not NULL it receives the number of samples whose argmax (first maximum) equals y.
 * Labels must lie in [0, C). A NaN/Inf logit makes the result NaN/Inf. */
double softmax_crossentropy(float *dlogits,      /* (B, C), may be NULL */
                            const float *logits, /* (B, C) */
                            const int *y,        /* (B) */
                            int B, int C, int *correct);

/* Convolution, stride 1, same padding (K odd, pad K/2), via im2col + sgemm, one sample
 * at a time so the column buffer stays small: col holds (C*K*K, H*W) floats. */
size_t conv2d_col_floats(int C, int H, int W, int K);
void im2col(float *col,      /* (C*K*K, H*W) */
            const float *in, /* (C, H, W) one sample */
            int C, int H, int W, int K);
/* in += col2im(col), the adjoint of im2col. col is scratch: its entries for positions
 * outside the image are zeroed on the way, so that each of its rows adds as one
 * contiguous span. That adds 0.0f where a row-by-row col2im adds nothing, which changes
 * no value and no bit unless an element of in starts at -0.0f and receives only -0.0f
 * (the models zero in, with +0.0f, first). */
void col2im_add(float *in,  /* (C, H, W) */
                float *col, /* (C*K*K, H*W) */
                int C, int H, int W, int K);
void conv2d_forward(float *out,      /* (B, OC, H, W) */
                    const float *in, /* (B, C, H, W) */
                    const float *w,  /* (OC, C, K, K) */
                    const float *b,  /* (OC) */
                    float *col,      /* workspace (conv2d_col_floats) */
                    int B, int C, int H, int W, int OC, int K);
/* conv2d_forward with bias and ReLU fused into one pass per sample. */
void conv2d_relu_forward(float *out, const float *in, const float *w, const float *b, float *col,
                         int B, int C, int H, int W, int OC, int K);
/* dw += ..., db += ..., din += ... (din NULL: the input gradient is skipped, as for the
 * first layer). col is a workspace of conv2d_col_floats. */
void conv2d_backward(float *din,        /* (B, C, H, W), may be NULL */
                     float *dw,         /* (OC, C, K, K) */
                     float *db,         /* (OC) */
                     const float *dout, /* (B, OC, H, W) */
                     const float *in,   /* (B, C, H, W) */
                     const float *w,    /* (OC, C, K, K) */
                     float *col, int B, int C, int H, int W, int OC, int K);

/* A whole conv block, convolution + bias + ReLU + 2x2 max-pool, one sample at a time so
 * that the full-resolution output never leaves the cache: plane is a workspace of one
 * sample's (OC, H, W) conv output, col one of conv2d_col_floats. Writes the pooled output
 * and, per pooled value, the position of its window's first maximum (0..3, row-major);
 * with the pooled output that is all the backward pass needs, so the (B, OC, H, W)
 * activation is never stored. The values are those of conv2d_relu_forward followed by
 * maxpool2_forward, bit for bit. */
void conv2d_relu_pool_forward(float *out,             /* (B, OC, H/2, W/2) */
                              int *argmax,            /* (B, OC, H/2, W/2) */
                              const float *in,        /* (B, C, H, W) */
                              const float *w,         /* (OC, C, K, K) */
                              const float *b,         /* (OC), may be NULL */
                              float *col,             /* workspace (conv2d_col_floats) */
                              float *plane,           /* workspace (OC, H, W) */
                              int B, int C, int H, int W, int OC, int K);
/* Its backward from dout, the gradient of the pooled output: routed to each window's
 * argmax where out > 0 (maxpool2_relu_backward's gradient, one sample at a time in
 * plane), then through the convolution as conv2d_backward does: dw += ..., db += ...,
 * din += ... (din NULL: skipped). Bit for bit the result of maxpool2_relu_backward
 * followed by conv2d_backward. */
void conv2d_relu_pool_backward(float *din,                 /* (B, C, H, W), may be NULL */
                               float *dw,                  /* (OC, C, K, K) */
                               float *db,                  /* (OC), may be NULL */
                               const float *dout,          /* (B, OC, H/2, W/2) */
                               const float *out,           /* (B, OC, H/2, W/2) pooled forward output */
                               const int *argmax,          /* (B, OC, H/2, W/2) from the forward */
                               const float *in,            /* (B, C, H, W) */
                               const float *w,             /* (OC, C, K, K) */
                               float *col, float *plane,   /* workspaces as for the forward */
                               int B, int C, int H, int W, int OC, int K);

/* The two halves of the block above for one sample, for other convolutions to share:
 * the pool writes out (OC, H/2, W/2) and argmax from a conv output plane (OC, H, W) without
 * its bias b (added here, b may be NULL); the unpool WRITES plane, the gradient at the
 * ReLU's input, from dout and the pooled out and argmax (every element, dropped odd rows
 * and columns as 0). conv_winograd.c's block runs on them. */
void conv2d_relu_pool_sample(float *out, int *argmax, const float *plane, const float *b, int OC, int H, int W);
void conv2d_relu_unpool_sample(float *plane, const float *dout, const float *out, const int *argmax, int OC,
                               int H, int W);

/* 2x2 max-pool, stride 2; odd trailing rows/columns are dropped (H/2, W/2 floor). */
void maxpool2_forward(float *out,      /* (B, C, H/2, W/2) */
                      const float *in, /* (B, C, H, W) */
                      int B, int C, int H, int W);
/* din += dout routed to the first maximum of each window (recomputed from in, so no
 * index buffer is kept). */
void maxpool2_backward(float *din, const float *dout, const float *in, int B, int C, int H, int W);
/* Fused backward of ReLU then max-pool, for a pool fed by a ReLU output `in`:
 * din = (in > 0) * maxpool2_backward(dout). Unlike the other backward kernels it WRITES
 * every element of din (dropped odd rows/columns get 0), which saves the zeroing pass. */
void maxpool2_relu_backward(float *din, const float *dout, const float *in, int B, int C, int H, int W);

/* Global average pool over H*W. */
void avgpool_global_forward(float *out,      /* (B, C) */
                            const float *in, /* (B, C, H, W) */
                            int B, int C, int HW);
void avgpool_global_backward(float *din,        /* (B, C, H, W) */
                             const float *dout, /* (B, C) */
                             int B, int C, int HW);

/* The three on the given sgemm (the ones above are these on kernels_sgemm_openblas). */
void linear_forward_with(KernelsSgemm *gemm, float *out, const float *in, const float *w, const float *b, int B,
                         int IN, int OUT);
void linear_relu_forward_with(KernelsSgemm *gemm, float *out, const float *in, const float *w, const float *b, int B,
                              int IN, int OUT);
void linear_backward_with(KernelsSgemm *gemm, float *din, float *dw, float *db, const float *dout, const float *in,
                          const float *w, int B, int IN, int OUT);

/* ---- naive twins (tests only) ---- */
void linear_forward_naive(float *out, const float *in, const float *w, const float *b, int B, int IN, int OUT);
void linear_relu_forward_naive(float *out, const float *in, const float *w, const float *b, int B, int IN,
                               int OUT);
void linear_backward_naive(float *din, float *dw, float *db, const float *dout, const float *in, const float *w,
                           int B, int IN, int OUT);
void relu_backward_naive(float *din, const float *dout, const float *out, size_t n);
double softmax_crossentropy_naive(float *dlogits, const float *logits, const int *y, int B, int C, int *correct);
/* Direct convolution loops, no column buffer. */
void conv2d_forward_naive(float *out, const float *in, const float *w, const float *b, int B, int C, int H, int W,
                          int OC, int K);
void conv2d_relu_forward_naive(float *out, const float *in, const float *w, const float *b, int B, int C, int H,
                               int W, int OC, int K);
void conv2d_backward_naive(float *din, float *dw, float *db, const float *dout, const float *in, const float *w,
                           int B, int C, int H, int W, int OC, int K);
/* Row-by-row copies and adds, one output element at a time. */
void im2col_naive(float *col, const float *in, int C, int H, int W, int K);
void col2im_add_naive(float *in, const float *col, int C, int H, int W, int K);
/* conv2d_relu_forward_naive, then the pool with its argmax; the backward routes dout
 * through the pool and the ReLU into a zeroed buffer, then conv2d_backward_naive. */
void conv2d_relu_pool_forward_naive(float *out, int *argmax, const float *in, const float *w,
                                    const float *b, int B, int C, int H, int W, int OC, int K);
void conv2d_relu_pool_backward_naive(float *din, float *dw, float *db, const float *dout, const float *out,
                                     const int *argmax, const float *in, const float *w, int B, int C,
                                     int H, int W, int OC, int K);
void maxpool2_forward_naive(float *out, const float *in, int B, int C, int H, int W);
void maxpool2_backward_naive(float *din, const float *dout, const float *in, int B, int C, int H, int W);
void avgpool_global_forward_naive(float *out, const float *in, int B, int C, int HW);
void avgpool_global_backward_naive(float *din, const float *dout, int B, int C, int HW);

/* ---- residual networks (kernels_resnet.c) ---- */

/* Output side of a convolution with odd kernel K, padding K/2 and stride S. */
int conv2d_out_size(int H, int K, int S);
/* Column buffer of one sample for conv2d_strided_*: (C*K*K, OH*OW) floats. */
size_t conv2d_strided_col_floats(int C, int H, int W, int K, int S);
/* Convolution without bias, stride S (S = 1: conv2d_forward's im2col + sgemm path).
 * out (B, OC, OH, OW), in (B, C, H, W), w (OC, C, K, K), col: conv2d_strided_col_floats. */
void conv2d_strided_forward(float *out, const float *in, const float *w, float *col, int B, int C, int H, int W,
                            int OC, int K, int S);
/* dw += ..., din += ... (din NULL: skipped). */
void conv2d_strided_backward(float *din, float *dw, const float *dout, const float *in, const float *w, float *col,
                             int B, int C, int H, int W, int OC, int K, int S);

/* Group normalisation (Wu & He, ECCV 2018): channels split into G groups of C/G; each
 * sample's group is normalised by its own mean and variance (biased, + GROUPNORM_EPS),
 * then scaled and shifted per channel: out = gamma * (x - mean) * rstd + beta. Statistics
 * are per sample, never per batch, so a model behaves the same in training and in
 * evaluation and has no running buffers to average. C must be a multiple of G. */
#define GROUPNORM_EPS 1e-5
void groupnorm_forward(float *out,         /* (B, C, HW) */
                       float *mean,        /* (B, G) written */
                       float *rstd,        /* (B, G) written: 1 / sqrt(var + eps) */
                       const float *in,    /* (B, C, HW) */
                       const float *gamma, /* (C) */
                       const float *beta,  /* (C) */
                       int B, int C, int HW, int G);
/* din += ..., dgamma += ..., dbeta += ..., from the forward's input and statistics. */
void groupnorm_backward(float *din, float *dgamma, float *dbeta, const float *dout, const float *in,
                        const float *mean, const float *rstd, const float *gamma, int B, int C, int HW, int G);

/* The end of a residual block: out = max(a + b, 0); out may equal a or b. */
void residual_relu_forward(float *out, const float *a, const float *b, size_t n);
/* WRITES dsum = dout where out > 0, else 0: the gradient of both a and b. */
void residual_relu_backward(float *dsum, const float *dout, const float *out, size_t n);

void conv2d_strided_forward_naive(float *out, const float *in, const float *w, int B, int C, int H, int W, int OC,
                                  int K, int S);
void conv2d_strided_backward_naive(float *din, float *dw, const float *dout, const float *in, const float *w, int B,
                                   int C, int H, int W, int OC, int K, int S);
void groupnorm_forward_naive(float *out, float *mean, float *rstd, const float *in, const float *gamma,
                             const float *beta, int B, int C, int HW, int G);
void groupnorm_backward_naive(float *din, float *dgamma, float *dbeta, const float *dout, const float *in,
                              const float *gamma, int B, int C, int HW, int G);
void residual_relu_forward_naive(float *out, const float *a, const float *b, size_t n);
void residual_relu_backward_naive(float *dsum, const float *dout, const float *out, size_t n);

#endif
