/* kernels_resnet.c — the layers a residual network adds to kernels.c: convolution with a
 * stride (the first convolution of a stage and its 1x1 projection shortcut), group
 * normalisation, and the residual sum followed by a ReLU. Stride-1 convolutions go to
 * conv2d_forward / conv2d_backward (the im2col + sgemm path); a strided one gathers its
 * column buffer with plain loops (only two layers per network stride, so the loops are
 * not worth a faster gather) and multiplies with the same sgemm. No allocation; fixed
 * summation orders, so results are bitwise reproducible. */
#include "models/kernels.h"

#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* ---------------------------------------------------------------- strided convolution */

int conv2d_out_size(int H, int K, int S) { return (H + 2 * (K / 2) - K) / S + 1; }

size_t conv2d_strided_col_floats(int C, int H, int W, int K, int S)
{
    return (size_t)C * K * K * conv2d_out_size(H, K, S) * conv2d_out_size(W, K, S);
}

/* col (C*K*K, OH*OW): col[(c, ki, kj), (i, j)] = in[c, S*i + ki - pad, S*j + kj - pad], 0 outside. */
static void im2col_strided(float *col, const float *in, int C, int H, int W, int K, int S)
{
    const int pad = K / 2, OH = conv2d_out_size(H, K, S), OW = conv2d_out_size(W, K, S);
    for (int c = 0; c < C; c++)
        for (int ki = 0; ki < K; ki++)
            for (int kj = 0; kj < K; kj++) {
                float *row = col + ((size_t)(c * K + ki) * K + kj) * OH * OW;
                for (int i = 0; i < OH; i++) {
                    const int h = S * i + ki - pad;
                    for (int j = 0; j < OW; j++) {
                        const int w = S * j + kj - pad;
                        row[(size_t)i * OW + j] =
                            h < 0 || h >= H || w < 0 || w >= W ? 0.0f : in[((size_t)c * H + h) * W + w];
                    }
                }
            }
}

/* in += the adjoint of im2col_strided applied to col. */
static void col2im_strided_add(float *in, const float *col, int C, int H, int W, int K, int S)
{
    const int pad = K / 2, OH = conv2d_out_size(H, K, S), OW = conv2d_out_size(W, K, S);
    for (int c = 0; c < C; c++)
        for (int ki = 0; ki < K; ki++)
            for (int kj = 0; kj < K; kj++) {
                const float *row = col + ((size_t)(c * K + ki) * K + kj) * OH * OW;
                for (int i = 0; i < OH; i++) {
                    const int h = S * i + ki - pad;
                    if (h < 0 || h >= H) continue;
                    for (int j = 0; j < OW; j++) {
                        const int w = S * j + kj - pad;
                        if (w >= 0 && w < W) in[((size_t)c * H + h) * W + w] += row[(size_t)i * OW + j];
                    }
                }
            }
}

void conv2d_strided_forward(float *out, const float *in, const float *w, float *col, int B, int C, int H, int W,
                            int OC, int K, int S)
{
    if (S == 1) {
        conv2d_forward(out, in, w, NULL, col, B, C, H, W, OC, K);
        return;
    }
    const int ohw = conv2d_out_size(H, K, S) * conv2d_out_size(W, K, S), ckk = C * K * K;
    for (int n = 0; n < B; n++) {
        im2col_strided(col, in + (size_t)n * C * H * W, C, H, W, K, S);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, OC, ohw, ckk, 1.0f, w, ckk, col, ohw, 0.0f,
                    out + (size_t)n * OC * ohw, ohw);
    }
}

void conv2d_strided_backward(float *din, float *dw, const float *dout, const float *in, const float *w, float *col,
                             int B, int C, int H, int W, int OC, int K, int S)
{
    if (S == 1) {
        conv2d_backward(din, dw, NULL, dout, in, w, col, B, C, H, W, OC, K);
        return;
    }
    const int ohw = conv2d_out_size(H, K, S) * conv2d_out_size(W, K, S), ckk = C * K * K;
    for (int n = 0; n < B; n++) {
        const float *dy = dout + (size_t)n * OC * ohw;
        im2col_strided(col, in + (size_t)n * C * H * W, C, H, W, K, S);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, OC, ckk, ohw, 1.0f, dy, ohw, col, ohw, 1.0f, dw, ckk);
        if (!din) continue;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ckk, ohw, OC, 1.0f, w, ckk, dy, ohw, 0.0f, col, ohw);
        col2im_strided_add(din + (size_t)n * C * H * W, col, C, H, W, K, S);
    }
}

/* ---------------------------------------------------------------- group normalisation */

void groupnorm_forward(float *out, float *mean, float *rstd, const float *in, const float *gamma, const float *beta,
                       int B, int C, int HW, int G)
{
    const int per = C / G;
    const size_t m = (size_t)per * HW;
    for (int n = 0; n < B; n++)
        for (int g = 0; g < G; g++) {
            const size_t at = ((size_t)n * C + (size_t)g * per) * HW;
            const float *x = in + at;
            /* two passes in double: the mean, then the squared deviations */
            double sum = 0.0;
            for (size_t i = 0; i < m; i++) sum += x[i];
            const double mu = sum / (double)m;
            double var = 0.0;
            for (size_t i = 0; i < m; i++) var += (x[i] - mu) * (x[i] - mu);
            const float r = (float)(1.0 / sqrt(var / (double)m + GROUPNORM_EPS)), mf = (float)mu;
            mean[(size_t)n * G + g] = mf;
            rstd[(size_t)n * G + g] = r;
            for (int c = 0; c < per; c++) {
                const int ch = g * per + c;
                const float a = gamma[ch] * r, b = beta[ch] - mf * a;
                const float *restrict src = x + (size_t)c * HW;
                float *restrict dst = out + at + (size_t)c * HW;
                for (int i = 0; i < HW; i++) dst[i] = src[i] * a + b;
            }
        }
}

void groupnorm_backward(float *din, float *dgamma, float *dbeta, const float *dout, const float *in,
                        const float *mean, const float *rstd, const float *gamma, int B, int C, int HW, int G)
{
    const int per = C / G;
    const size_t m = (size_t)per * HW;
    for (int n = 0; n < B; n++)
        for (int g = 0; g < G; g++) {
            const size_t at = ((size_t)n * C + (size_t)g * per) * HW;
            const float mu = mean[(size_t)n * G + g], r = rstd[(size_t)n * G + g];
            /* the group's sums of dxhat and dxhat * xhat, and per channel the affine gradients */
            double s1 = 0.0, s2 = 0.0;
            for (int c = 0; c < per; c++) {
                const int ch = g * per + c;
                const float *x = in + at + (size_t)c * HW, *dy = dout + at + (size_t)c * HW;
                double dg = 0.0, db = 0.0;
                for (int i = 0; i < HW; i++) {
                    const double xhat = (double)(x[i] - mu) * r;
                    dg += dy[i] * xhat;
                    db += dy[i];
                }
                dgamma[ch] += (float)dg;
                dbeta[ch] += (float)db;
                s1 += gamma[ch] * db;
                s2 += gamma[ch] * dg;
            }
            const double k1 = s1 / (double)m, k2 = s2 / (double)m;
            for (int c = 0; c < per; c++) {
                const int ch = g * per + c;
                const float *x = in + at + (size_t)c * HW, *dy = dout + at + (size_t)c * HW;
                float *dx = din + at + (size_t)c * HW;
                for (int i = 0; i < HW; i++) {
                    const double xhat = (double)(x[i] - mu) * r;
                    dx[i] += (float)(r * ((double)gamma[ch] * dy[i] - k1 - xhat * k2));
                }
            }
        }
}

/* ---------------------------------------------------------------- residual sum */

void residual_relu_forward(float *out, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = a[i] + b[i];
        out[i] = v < 0.0f ? 0.0f : v;
    }
}

void residual_relu_backward(float *dsum, const float *dout, const float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) dsum[i] = out[i] > 0.0f ? dout[i] : 0.0f;
}
