/* kernels.c — the optimised layer kernels (sgemm-backed linear and convolution, fused
 * bias+ReLU epilogues, single-pass pooling and loss). No allocation happens here: every
 * scratch buffer comes from the caller's workspace. Summation orders are fixed, so a
 * kernel returns bitwise identical results for identical inputs (with single-threaded
 * OpenBLAS). */
#include "models/kernels.h"

#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------- linear */

void kernels_sgemm_openblas(int trans_a, int trans_b, int M, int N, int K, const float *A, int lda, const float *B,
                            int ldb, float beta, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, N, K,
                1.0f, A, lda, B, ldb, beta, C, ldc);
}

void linear_forward(float *out, const float *in, const float *w, const float *b, int B, int IN, int OUT)
{
    linear_forward_with(kernels_sgemm_openblas, out, in, w, b, B, IN, OUT);
}

void linear_relu_forward(float *out, const float *in, const float *w, const float *b, int B, int IN, int OUT)
{
    linear_relu_forward_with(kernels_sgemm_openblas, out, in, w, b, B, IN, OUT);
}

void linear_backward(float *din, float *dw, float *db, const float *dout, const float *in, const float *w, int B,
                     int IN, int OUT)
{
    linear_backward_with(kernels_sgemm_openblas, din, dw, db, dout, in, w, B, IN, OUT);
}

void linear_forward_with(KernelsSgemm *gemm, float *out, const float *in, const float *w, const float *b, int B,
                         int IN, int OUT)
{
    gemm(0, 1, B, OUT, IN, in, IN, w, IN, 0.0f, out, OUT);
    if (!b) return;
    for (int i = 0; i < B; i++) {
        float *restrict row = out + (size_t)i * OUT;
        const float *restrict bias = b;
        for (int o = 0; o < OUT; o++) row[o] += bias[o];
    }
}

void linear_relu_forward_with(KernelsSgemm *gemm, float *out, const float *in, const float *w, const float *b, int B,
                              int IN, int OUT)
{
    gemm(0, 1, B, OUT, IN, in, IN, w, IN, 0.0f, out, OUT);
    for (int i = 0; i < B; i++) {
        float *restrict row = out + (size_t)i * OUT;
        if (b) {
            const float *restrict bias = b;
            for (int o = 0; o < OUT; o++) {
                float v = row[o] + bias[o];
                row[o] = v < 0.0f ? 0.0f : v;
            }
        } else {
            for (int o = 0; o < OUT; o++) row[o] = row[o] < 0.0f ? 0.0f : row[o];
        }
    }
}

void linear_backward_with(KernelsSgemm *gemm, float *din, float *dw, float *db, const float *dout, const float *in,
                          const float *w, int B, int IN, int OUT)
{
    if (din) gemm(0, 0, B, IN, OUT, dout, OUT, w, IN, 1.0f, din, IN);
    gemm(1, 0, OUT, IN, B, dout, OUT, in, IN, 1.0f, dw, IN);
    if (db) {
        float *restrict sum = db;
        for (int i = 0; i < B; i++) {
            const float *restrict row = dout + (size_t)i * OUT;
            for (int o = 0; o < OUT; o++) sum[o] += row[o];
        }
    }
}

/* ---------------------------------------------------------------- relu */

void relu_forward(float *out, const float *in, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = in[i] < 0.0f ? 0.0f : in[i];
}

void relu_backward(float *restrict din, const float *restrict dout, const float *restrict out, size_t n)
{
    for (size_t i = 0; i < n; i++) din[i] += out[i] > 0.0f ? dout[i] : 0.0f;
}

void relu_backward_inplace(float *restrict d, const float *restrict out, size_t n)
{
    for (size_t i = 0; i < n; i++) d[i] = out[i] > 0.0f ? d[i] : 0.0f;
}

/* ---------------------------------------------------------------- loss */

double softmax_crossentropy(float *dlogits, const float *logits, const int *y, int B, int C, int *correct)
{
    double total = 0.0;
    int right = 0;
    const float inv_batch = 1.0f / (float)B;
    for (int i = 0; i < B; i++) {
        const float *row = logits + (size_t)i * C;
        float maxv = row[0];
        int arg = 0;
        for (int j = 1; j < C; j++)
            if (row[j] > maxv) {
                maxv = row[j];
                arg = j;
            }
        double sum = 0.0;
        if (dlogits) {
            float *drow = dlogits + (size_t)i * C;
            for (int j = 0; j < C; j++) {
                float e = expf(row[j] - maxv);
                drow[j] = e;
                sum += e;
            }
            float scale = (float)(1.0 / sum) * inv_batch;
            for (int j = 0; j < C; j++) drow[j] *= scale;
            drow[y[i]] -= inv_batch;
        } else {
            for (int j = 0; j < C; j++) sum += expf(row[j] - maxv);
        }
        total += log(sum) - ((double)row[y[i]] - (double)maxv);
        right += arg == y[i];
    }
    if (correct) *correct = right;
    return total / B;
}

/* ---------------------------------------------------------------- convolution */

size_t conv2d_col_floats(int C, int H, int W, int K)
{
    return (size_t)C * K * K * H * W;
}

/* Valid output indices [lo, hi) along an axis of W for a kernel offset dx in [-p, p]:
 * those whose input index (+ dx) lies inside. Used for columns and for rows alike. */
static void conv_valid_span(int W, int dx, int *lo, int *hi)
{
    *lo = dx < 0 ? -dx : 0;
    *hi = dx > 0 ? W - dx : W;
    if (*lo > W) *lo = W; /* a kernel wider than the image */
    if (*hi < *lo) *hi = *lo;
}

/* Row (c, ki, kj) of the column buffer is the input plane shifted by (dy, dx) with zeros
 * outside the image. Within the valid rows that shift is one contiguous copy of the
 * plane at offset dy*W + dx; the columns a row-wise copy would have left at zero (the
 * first or last |dx| of each row, which the contiguous copy fills from the neighbouring
 * row) are zeroed after it, column by column (a strided loop, which GCC does not turn
 * into a call to memset per row). The values written are those of a row-by-row copy
 * exactly; per row it costs one memcpy instead of one per image row, which for 14-wide
 * images was most of the time. */
void im2col(float *col, const float *in, int C, int H, int W, int K)
{
    const int pad = K / 2;
    const size_t hw = (size_t)H * W;
    for (int c = 0; c < C; c++) {
        const float *plane = in + c * hw;
        for (int ki = 0; ki < K; ki++) {
            int dy = ki - pad, top, bottom;
            conv_valid_span(H, dy, &top, &bottom);
            for (int kj = 0; kj < K; kj++) {
                int dx = kj - pad, lo, hi;
                conv_valid_span(W, dx, &lo, &hi);
                float *row = col + ((size_t)(c * K + ki) * K + kj) * hw;
                if (top > 0) memset(row, 0, sizeof(float) * (size_t)top * W);
                if (bottom < H) memset(row + (size_t)bottom * W, 0, sizeof(float) * (size_t)(H - bottom) * W);
                if (bottom == top) continue;
                if (hi > lo) {
                    /* from (top, lo) to (bottom - 1, hi - 1) inclusive; the source starts at
                     * (top + dy, lo + dx) and ends at (bottom - 1 + dy, hi - 1 + dx), both
                     * inside the plane */
                    size_t first = (size_t)top * W + lo, last = (size_t)(bottom - 1) * W + hi;
                    memcpy(row + first, plane + (ptrdiff_t)first + (ptrdiff_t)dy * W + dx,
                           sizeof(float) * (last - first));
                }
                float *valid = row + (size_t)top * W;
                const int rows = bottom - top;
                for (int w = 0; w < lo; w++)
                    for (int h = 0; h < rows; h++) valid[(size_t)h * W + w] = 0.0f;
                for (int w = hi; w < W; w++)
                    for (int h = 0; h < rows; h++) valid[(size_t)h * W + w] = 0.0f;
            }
        }
    }
}

/* The adjoint of im2col, with the same trick: once the entries of row (c, ki, kj) that
 * fall outside the image are zeroed, the row adds into the plane as one contiguous span
 * at offset dy*W + dx, the zeros landing on the neighbouring row's edge. x + 0.0f is x
 * for every x but -0.0f, so the sums are those of a row-by-row col2im, bit for bit as
 * long as no element of in starts at -0.0f and receives only -0.0f. */
void col2im_add(float *in, float *col, int C, int H, int W, int K)
{
    const int pad = K / 2;
    const size_t hw = (size_t)H * W;
    for (int c = 0; c < C; c++) {
        float *plane = in + c * hw;
        for (int ki = 0; ki < K; ki++) {
            int dy = ki - pad, top, bottom;
            conv_valid_span(H, dy, &top, &bottom);
            if (bottom == top) continue;
            for (int kj = 0; kj < K; kj++) {
                int dx = kj - pad, lo, hi;
                conv_valid_span(W, dx, &lo, &hi);
                if (hi == lo) continue;
                float *row = col + ((size_t)(c * K + ki) * K + kj) * hw;
                float *valid = row + (size_t)top * W;
                const int rows = bottom - top;
                for (int w = 0; w < lo; w++)
                    for (int h = 0; h < rows; h++) valid[(size_t)h * W + w] = 0.0f;
                for (int w = hi; w < W; w++)
                    for (int h = 0; h < rows; h++) valid[(size_t)h * W + w] = 0.0f;
                /* from (top, lo) to (bottom - 1, hi - 1), landing inside the plane */
                const size_t first = (size_t)top * W + lo, n = (size_t)(bottom - 1) * W + hi - first;
                const float *restrict src = row + first;
                float *restrict dst = plane + (ptrdiff_t)first + (ptrdiff_t)dy * W + dx;
                for (size_t i = 0; i < n; i++) dst[i] += src[i];
            }
        }
    }
}

/* One sample: y (OC, H*W) = w (OC, C*K*K) times its column buffer. */
static void conv_forward_sample(float *y, const float *x, const float *w, float *col, int C, int H, int W, int OC,
                                int K)
{
    const int ckk = C * K * K, hw = H * W;
    const float *cols = x;
    if (K > 1) {
        im2col(col, x, C, H, W, K);
        cols = col;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, OC, hw, ckk, 1.0f, w, ckk, cols, hw, 0.0f, y, hw);
}

/* y += bias per plane, then ReLU if asked, in place. */
static void conv_bias_relu(float *y, const float *b, int OC, int hw, int relu)
{
    for (int o = 0; o < OC; o++) {
        float *restrict plane = y + (size_t)o * hw;
        float bias = b ? b[o] : 0.0f;
        if (relu) {
            for (int i = 0; i < hw; i++) {
                float v = plane[i] + bias;
                plane[i] = v < 0.0f ? 0.0f : v;
            }
        } else {
            for (int i = 0; i < hw; i++) plane[i] += bias;
        }
    }
}

/* db[o] += the sum of plane o of dy, each in plane order from 0.0f. Eight planes run
 * side by side so that eight dependency chains of additions overlap; each sum is still
 * added in its own order, so the result is that of one plane at a time. */
static void conv_bias_grad(float *db, const float *dy, int OC, int hw)
{
    int o = 0;
    for (; o + 8 <= OC; o += 8) {
        const float *p = dy + (size_t)o * hw;
        float s[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        for (int i = 0; i < hw; i++)
            for (int k = 0; k < 8; k++) s[k] += p[(size_t)k * hw + i];
        for (int k = 0; k < 8; k++) db[o + k] += s[k];
    }
    for (; o < OC; o++) {
        const float *plane = dy + (size_t)o * hw;
        float sum = 0.0f;
        for (int i = 0; i < hw; i++) sum += plane[i];
        db[o] += sum;
    }
}

/* One sample's share of conv2d_backward: dw += dy col^T, db += plane sums of dy, and
 * unless dx is NULL dx += col2im(w^T dy). col is overwritten. */
static void conv_backward_sample(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w,
                                 float *col, int C, int H, int W, int OC, int K)
{
    const int ckk = C * K * K, hw = H * W;
    const float *cols = x;
    if (K > 1) {
        im2col(col, x, C, H, W, K);
        cols = col;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, OC, ckk, hw, 1.0f, dy, hw, cols, hw, 1.0f, dw, ckk);
    if (db) conv_bias_grad(db, dy, OC, hw);
    if (!dx) return;
    if (K == 1) {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ckk, hw, OC, 1.0f, w, ckk, dy, hw, 1.0f, dx, hw);
    } else {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ckk, hw, OC, 1.0f, w, ckk, dy, hw, 0.0f, col, hw);
        col2im_add(dx, col, C, H, W, K);
    }
}

void conv2d_forward(float *out, const float *in, const float *w, const float *b, float *col, int B, int C, int H,
                    int W, int OC, int K)
{
    const size_t hw = (size_t)H * W;
    for (int n = 0; n < B; n++) {
        float *y = out + (size_t)n * OC * hw;
        conv_forward_sample(y, in + (size_t)n * C * hw, w, col, C, H, W, OC, K);
        conv_bias_relu(y, b, OC, (int)hw, 0);
    }
}

void conv2d_relu_forward(float *out, const float *in, const float *w, const float *b, float *col, int B, int C,
                         int H, int W, int OC, int K)
{
    const size_t hw = (size_t)H * W;
    for (int n = 0; n < B; n++) {
        float *y = out + (size_t)n * OC * hw;
        conv_forward_sample(y, in + (size_t)n * C * hw, w, col, C, H, W, OC, K);
        conv_bias_relu(y, b, OC, (int)hw, 1);
    }
}

void conv2d_backward(float *din, float *dw, float *db, const float *dout, const float *in, const float *w,
                     float *col, int B, int C, int H, int W, int OC, int K)
{
    const size_t hw = (size_t)H * W;
    for (int n = 0; n < B; n++)
        conv_backward_sample(din ? din + (size_t)n * C * hw : NULL, dw, db, dout + (size_t)n * OC * hw,
                             in + (size_t)n * C * hw, w, col, C, H, W, OC, K);
}

/* ---------------------------------------------------------------- fused conv blocks */

/* Bias, ReLU and the 2x2 max-pool of one sample's conv output plane (OC, H, W) into out
 * and argmax; plane itself is left as the sgemm wrote it. For each window: bias and
 * ReLU on its four conv outputs (the expressions of conv2d_relu_forward), its maximum
 * and the position of its first maximum (0..3, row-major), by maxpool2_forward's
 * comparisons in order. The position is arithmetic on the comparisons' outcomes rather
 * than a branch (they are coin flips on real data), and the position is an int (a byte
 * would make GCC's vectors 16 windows wide, more than a row holds), so the window loop
 * is vectorised, four windows at a time. GCC would do the rest of a row one window at a
 * time with a branch per select (on rows of 7 windows that remainder took most of the
 * pooling's time), so a row ends instead with its last four windows again, the same
 * values written twice. */
void conv2d_relu_pool_sample(float *out, int *argmax, const float *plane, const float *b, int OC, int H, int W)
{
    const int oh = H / 2, ow = W / 2, body = ow > 4 ? ow & ~3 : ow;
    for (int o = 0; o < OC; o++) {
        const float *p = plane + (size_t)o * H * W;
        const float bias = b ? b[o] : 0.0f;
        for (int i = 0; i < oh; i++) {
            const float *restrict r0 = p + (size_t)(2 * i) * W, *restrict r1 = r0 + W;
            float *restrict dst = out + ((size_t)o * oh + i) * ow;
            int *restrict arg = argmax + ((size_t)o * oh + i) * ow;
            for (int pass = 0; pass < 2; pass++) {
                const int from = pass ? ow - 4 : 0, to = pass ? ow : body;
                if (pass && body == ow) break;
                for (int j = from; j < to; j++) {
                    int position;
                    dst[j] = kernels_relu_pool_window(r0[2 * j] + bias, r0[2 * j + 1] + bias, r1[2 * j] + bias,
                                                      r1[2 * j + 1] + bias, &position);
                    arg[j] = position;
                }
            }
        }
    }
}

/* The gradient at the ReLU's input, plane (OC, H, W), from the gradient dout of the
 * pooled output: each window's value goes to its argmax where the pooled output is
 * positive (there the maximum ReLU input was positive too), zero everywhere else,
 * dropped odd rows and columns included: what maxpool2_relu_backward writes. The
 * window is zeroed, then one store goes to an address computed from the argmax, of the
 * value's bits masked by the ReLU's outcome (all-zero bits are +0.0f): no branch on the
 * data, which GCC would otherwise emit for the float select. */
void conv2d_relu_unpool_sample(float *plane, const float *dout, const float *out, const int *argmax, int OC,
                               int H, int W)
{
    const int oh = H / 2, ow = W / 2;
    for (int o = 0; o < OC; o++) {
        float *p = plane + (size_t)o * H * W;
        for (int i = 0; i < oh; i++) {
            float *restrict r0 = p + (size_t)(2 * i) * W;
            const size_t at = ((size_t)o * oh + i) * ow;
            const float *restrict g = dout + at, *restrict y = out + at;
            const int *restrict arg = argmax + at;
            for (int j = 0; j < ow; j++) {
                uint32_t bits;
                memcpy(&bits, &g[j], sizeof bits);
                bits &= 0u - (uint32_t)(y[j] > 0.0f);
                int k = arg[j];
                r0[2 * j] = r0[2 * j + 1] = r0[W + 2 * j] = r0[W + 2 * j + 1] = 0.0f;
                memcpy(&r0[(k >> 1) * W + 2 * j + (k & 1)], &bits, sizeof bits);
            }
            if (W & 1) r0[W - 1] = r0[2 * W - 1] = 0.0f;
        }
        if (H & 1) memset(p + (size_t)(H - 1) * W, 0, sizeof(float) * W);
    }
}

void conv2d_relu_pool_forward(float *out, int *argmax, const float *in, const float *w, const float *b,
                              float *col, float *plane, int B, int C, int H, int W, int OC, int K)
{
    const size_t hw = (size_t)H * W, pooled = (size_t)OC * (H / 2) * (W / 2);
    for (int n = 0; n < B; n++) {
        conv_forward_sample(plane, in + (size_t)n * C * hw, w, col, C, H, W, OC, K);
        conv2d_relu_pool_sample(out + (size_t)n * pooled, argmax + (size_t)n * pooled, plane, b, OC, H, W);
    }
}

void conv2d_relu_pool_backward(float *din, float *dw, float *db, const float *dout, const float *out,
                               const int *argmax, const float *in, const float *w, float *col, float *plane,
                               int B, int C, int H, int W, int OC, int K)
{
    const size_t hw = (size_t)H * W, pooled = (size_t)OC * (H / 2) * (W / 2);
    for (int n = 0; n < B; n++) {
        const size_t at = (size_t)n * pooled;
        conv2d_relu_unpool_sample(plane, dout + at, out + at, argmax + at, OC, H, W);
        conv_backward_sample(din ? din + (size_t)n * C * hw : NULL, dw, db, plane, in + (size_t)n * C * hw, w, col,
                             C, H, W, OC, K);
    }
}

/* ---------------------------------------------------------------- pooling */

void maxpool2_forward(float *out, const float *in, int B, int C, int H, int W)
{
    const int oh = H / 2, ow = W / 2;
    for (int p = 0; p < B * C; p++) {
        const float *plane = in + (size_t)p * H * W;
        float *dst = out + (size_t)p * oh * ow;
        for (int i = 0; i < oh; i++) {
            const float *r0 = plane + (size_t)(2 * i) * W, *r1 = r0 + W;
            for (int j = 0; j < ow; j++) {
                float m = r0[2 * j];
                if (r0[2 * j + 1] > m) m = r0[2 * j + 1];
                if (r1[2 * j] > m) m = r1[2 * j];
                if (r1[2 * j + 1] > m) m = r1[2 * j + 1];
                dst[(size_t)i * ow + j] = m;
            }
        }
    }
}

void maxpool2_backward(float *din, const float *dout, const float *in, int B, int C, int H, int W)
{
    const int oh = H / 2, ow = W / 2;
    for (int p = 0; p < B * C; p++) {
        const float *plane = in + (size_t)p * H * W;
        float *dplane = din + (size_t)p * H * W;
        const float *g = dout + (size_t)p * oh * ow;
        for (int i = 0; i < oh; i++) {
            size_t r0 = (size_t)(2 * i) * W, r1 = r0 + W;
            for (int j = 0; j < ow; j++) {
                size_t best = r0 + 2 * j;
                float m = plane[best];
                if (plane[r0 + 2 * j + 1] > m) m = plane[best = r0 + 2 * j + 1];
                if (plane[r1 + 2 * j] > m) m = plane[best = r1 + 2 * j];
                if (plane[r1 + 2 * j + 1] > m) best = r1 + 2 * j + 1;
                dplane[best] += g[(size_t)i * ow + j];
            }
        }
    }
}

void avgpool_global_forward(float *out, const float *in, int B, int C, int HW)
{
    const float inv = 1.0f / (float)HW;
    for (int p = 0; p < B * C; p++) {
        const float *plane = in + (size_t)p * HW;
        float sum = 0.0f;
        for (int i = 0; i < HW; i++) sum += plane[i];
        out[p] = sum * inv;
    }
}

void avgpool_global_backward(float *din, const float *dout, int B, int C, int HW)
{
    const float inv = 1.0f / (float)HW;
    for (int p = 0; p < B * C; p++) {
        float g = dout[p] * inv;
        float *plane = din + (size_t)p * HW;
        for (int i = 0; i < HW; i++) plane[i] += g;
    }
}

void maxpool2_relu_backward(float *din, const float *dout, const float *in, int B, int C, int H, int W)
{
    const int oh = H / 2, ow = W / 2;
    for (int p = 0; p < B * C; p++) {
        const float *plane = in + (size_t)p * H * W;
        float *dplane = din + (size_t)p * H * W;
        const float *g = dout + (size_t)p * oh * ow;
        for (int i = 0; i < oh; i++) {
            size_t r0 = (size_t)(2 * i) * W, r1 = r0 + W;
            for (int j = 0; j < ow; j++) {
                size_t a = r0 + 2 * j, b = a + 1, c = r1 + 2 * j, d = c + 1, best = a;
                float m = plane[a];
                if (plane[b] > m) m = plane[best = b];
                if (plane[c] > m) m = plane[best = c];
                if (plane[d] > m) m = plane[best = d];
                dplane[a] = dplane[b] = dplane[c] = dplane[d] = 0.0f;
                if (m > 0.0f) dplane[best] = g[(size_t)i * ow + j];
            }
            if (W & 1) dplane[r0 + W - 1] = dplane[r1 + W - 1] = 0.0f;
        }
        if (H & 1) memset(dplane + (size_t)(H - 1) * W, 0, sizeof(float) * W);
    }
}
