/* kernels.c — the optimised layer kernels (sgemm-backed linear and convolution, fused
 * bias+ReLU epilogues, single-pass pooling and loss). No allocation happens here: every
 * scratch buffer comes from the caller's workspace. Summation orders are fixed, so a
 * kernel returns bitwise identical results for identical inputs (with single-threaded
 * OpenBLAS). */
#include "models/kernels.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- linear */

static void linear_gemm(float *out, const float *in, const float *w, int B, int IN, int OUT)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, OUT, IN, 1.0f, in, IN, w, IN, 0.0f, out, OUT);
}

void linear_forward(float *out, const float *in, const float *w, const float *b, int B, int IN, int OUT)
{
    linear_gemm(out, in, w, B, IN, OUT);
    if (!b) return;
    for (int i = 0; i < B; i++) {
        float *restrict row = out + (size_t)i * OUT;
        const float *restrict bias = b;
        for (int o = 0; o < OUT; o++) row[o] += bias[o];
    }
}

void linear_relu_forward(float *out, const float *in, const float *w, const float *b, int B, int IN, int OUT)
{
    linear_gemm(out, in, w, B, IN, OUT);
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

void linear_backward(float *din, float *dw, float *db, const float *dout, const float *in, const float *w, int B,
                     int IN, int OUT)
{
    if (din)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, IN, OUT, 1.0f, dout, OUT, w, IN, 1.0f, din, IN);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OUT, IN, B, 1.0f, dout, OUT, in, IN, 1.0f, dw, IN);
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

/* Valid output columns [lo, hi) for a horizontal kernel offset dx in [-p, p]. */
static void conv_valid_span(int W, int dx, int *lo, int *hi)
{
    *lo = dx < 0 ? -dx : 0;
    *hi = dx > 0 ? W - dx : W;
    if (*hi < *lo) *hi = *lo;
}

void im2col(float *col, const float *in, int C, int H, int W, int K)
{
    const int pad = K / 2;
    const size_t hw = (size_t)H * W;
    for (int c = 0; c < C; c++) {
        const float *plane = in + c * hw;
        for (int ki = 0; ki < K; ki++) {
            int dy = ki - pad;
            for (int kj = 0; kj < K; kj++) {
                int dx = kj - pad, lo, hi;
                conv_valid_span(W, dx, &lo, &hi);
                float *row = col + ((size_t)(c * K + ki) * K + kj) * hw;
                for (int h = 0; h < H; h++) {
                    float *dst = row + (size_t)h * W;
                    int ih = h + dy;
                    if (ih < 0 || ih >= H) {
                        memset(dst, 0, sizeof(float) * W);
                        continue;
                    }
                    for (int w = 0; w < lo; w++) dst[w] = 0.0f;
                    if (hi > lo) memcpy(dst + lo, plane + (size_t)ih * W + lo + dx, sizeof(float) * (hi - lo));
                    for (int w = hi; w < W; w++) dst[w] = 0.0f;
                }
            }
        }
    }
}

void col2im_add(float *in, const float *col, int C, int H, int W, int K)
{
    const int pad = K / 2;
    const size_t hw = (size_t)H * W;
    for (int c = 0; c < C; c++) {
        float *plane = in + c * hw;
        for (int ki = 0; ki < K; ki++) {
            int dy = ki - pad;
            for (int kj = 0; kj < K; kj++) {
                int dx = kj - pad, lo, hi;
                conv_valid_span(W, dx, &lo, &hi);
                const float *row = col + ((size_t)(c * K + ki) * K + kj) * hw;
                for (int h = 0; h < H; h++) {
                    int ih = h + dy;
                    if (ih < 0 || ih >= H) continue;
                    const float *src = row + (size_t)h * W;
                    float *dst = plane + (size_t)ih * W + dx;
                    for (int w = lo; w < hi; w++) dst[w] += src[w];
                }
            }
        }
    }
}

static void conv2d_forward_common(float *out, const float *in, const float *w, const float *b, float *col, int B,
                                  int C, int H, int W, int OC, int K, int relu)
{
    const int ckk = C * K * K, hw = H * W;
    for (int n = 0; n < B; n++) {
        const float *x = in + (size_t)n * C * hw;
        float *y = out + (size_t)n * OC * hw;
        const float *cols = x;
        if (K > 1) {
            im2col(col, x, C, H, W, K);
            cols = col;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, OC, hw, ckk, 1.0f, w, ckk, cols, hw, 0.0f, y, hw);
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
}

void conv2d_forward(float *out, const float *in, const float *w, const float *b, float *col, int B, int C, int H,
                    int W, int OC, int K)
{
    conv2d_forward_common(out, in, w, b, col, B, C, H, W, OC, K, 0);
}

void conv2d_relu_forward(float *out, const float *in, const float *w, const float *b, float *col, int B, int C,
                         int H, int W, int OC, int K)
{
    conv2d_forward_common(out, in, w, b, col, B, C, H, W, OC, K, 1);
}

void conv2d_backward(float *din, float *dw, float *db, const float *dout, const float *in, const float *w,
                     float *col, int B, int C, int H, int W, int OC, int K)
{
    const int ckk = C * K * K, hw = H * W;
    for (int n = 0; n < B; n++) {
        const float *x = in + (size_t)n * C * hw;
        const float *dy = dout + (size_t)n * OC * hw;
        const float *cols = x;
        if (K > 1) {
            im2col(col, x, C, H, W, K);
            cols = col;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, OC, ckk, hw, 1.0f, dy, hw, cols, hw, 1.0f, dw, ckk);
        if (db) {
            for (int o = 0; o < OC; o++) {
                const float *plane = dy + (size_t)o * hw;
                float sum = 0.0f;
                for (int i = 0; i < hw; i++) sum += plane[i];
                db[o] += sum;
            }
        }
        if (!din) continue;
        float *dx = din + (size_t)n * C * hw;
        if (K == 1) {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ckk, hw, OC, 1.0f, w, ckk, dy, hw, 1.0f, dx, hw);
        } else {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ckk, hw, OC, 1.0f, w, ckk, dy, hw, 0.0f, col, hw);
            col2im_add(dx, col, C, H, W, K);
        }
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
