/* kernels_naive.c — the naive twins of kernels.c: textbook loops, sums in double, no
 * BLAS and no column buffers. The tests run both on the same inputs and compare; these
 * are slow on purpose and never used by the models. */
#include "models/kernels.h"

#include <math.h>
#include <stdlib.h>

void linear_forward_naive(float *out, const float *in, const float *w, const float *b, int B, int IN, int OUT)
{
    for (int i = 0; i < B; i++)
        for (int o = 0; o < OUT; o++) {
            double sum = b ? b[o] : 0.0;
            for (int k = 0; k < IN; k++) sum += (double)in[(size_t)i * IN + k] * w[(size_t)o * IN + k];
            out[(size_t)i * OUT + o] = (float)sum;
        }
}

void linear_relu_forward_naive(float *out, const float *in, const float *w, const float *b, int B, int IN, int OUT)
{
    linear_forward_naive(out, in, w, b, B, IN, OUT);
    for (size_t i = 0; i < (size_t)B * OUT; i++)
        if (out[i] < 0.0f) out[i] = 0.0f;
}

void linear_backward_naive(float *din, float *dw, float *db, const float *dout, const float *in, const float *w,
                           int B, int IN, int OUT)
{
    for (int o = 0; o < OUT; o++) {
        for (int k = 0; k < IN; k++) {
            double sum = 0.0;
            for (int i = 0; i < B; i++) sum += (double)dout[(size_t)i * OUT + o] * in[(size_t)i * IN + k];
            dw[(size_t)o * IN + k] += (float)sum;
        }
        if (db) {
            double sum = 0.0;
            for (int i = 0; i < B; i++) sum += dout[(size_t)i * OUT + o];
            db[o] += (float)sum;
        }
    }
    if (!din) return;
    for (int i = 0; i < B; i++)
        for (int k = 0; k < IN; k++) {
            double sum = 0.0;
            for (int o = 0; o < OUT; o++) sum += (double)dout[(size_t)i * OUT + o] * w[(size_t)o * IN + k];
            din[(size_t)i * IN + k] += (float)sum;
        }
}

void relu_backward_naive(float *din, const float *dout, const float *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (out[i] > 0.0f) din[i] += dout[i];
}

double softmax_crossentropy_naive(float *dlogits, const float *logits, const int *y, int B, int C, int *correct)
{
    double total = 0.0;
    int right = 0;
    for (int i = 0; i < B; i++) {
        const float *row = logits + (size_t)i * C;
        double maxv = row[0];
        int arg = 0;
        for (int j = 1; j < C; j++)
            if (row[j] > maxv) {
                maxv = row[j];
                arg = j;
            }
        double sum = 0.0;
        for (int j = 0; j < C; j++) sum += exp(row[j] - maxv);
        total += log(sum) + maxv - row[y[i]];
        right += arg == y[i];
        if (dlogits)
            for (int j = 0; j < C; j++)
                dlogits[(size_t)i * C + j] = (float)((exp(row[j] - maxv) / sum - (j == y[i])) / B);
    }
    if (correct) *correct = right;
    return total / B;
}

/* in[n, c, h + ki - p, w + kj - p], zero outside the image. */
static double conv_input(const float *in, int n, int c, int h, int w, int C, int H, int W)
{
    if (h < 0 || h >= H || w < 0 || w >= W) return 0.0;
    return in[(((size_t)n * C + c) * H + h) * W + w];
}

void conv2d_forward_naive(float *out, const float *in, const float *w, const float *b, int B, int C, int H, int W,
                          int OC, int K)
{
    const int pad = K / 2;
    for (int n = 0; n < B; n++)
        for (int o = 0; o < OC; o++)
            for (int h = 0; h < H; h++)
                for (int x = 0; x < W; x++) {
                    double sum = b ? b[o] : 0.0;
                    for (int c = 0; c < C; c++)
                        for (int ki = 0; ki < K; ki++)
                            for (int kj = 0; kj < K; kj++)
                                sum += w[(((size_t)o * C + c) * K + ki) * K + kj] *
                                       conv_input(in, n, c, h + ki - pad, x + kj - pad, C, H, W);
                    out[(((size_t)n * OC + o) * H + h) * W + x] = (float)sum;
                }
}

void conv2d_relu_forward_naive(float *out, const float *in, const float *w, const float *b, int B, int C, int H,
                               int W, int OC, int K)
{
    conv2d_forward_naive(out, in, w, b, B, C, H, W, OC, K);
    for (size_t i = 0; i < (size_t)B * OC * H * W; i++)
        if (out[i] < 0.0f) out[i] = 0.0f;
}

void conv2d_backward_naive(float *din, float *dw, float *db, const float *dout, const float *in, const float *w,
                           int B, int C, int H, int W, int OC, int K)
{
    const int pad = K / 2;
    for (int o = 0; o < OC; o++) {
        if (db) {
            double sum = 0.0;
            for (int n = 0; n < B; n++)
                for (int i = 0; i < H * W; i++) sum += dout[((size_t)n * OC + o) * H * W + i];
            db[o] += (float)sum;
        }
        for (int c = 0; c < C; c++)
            for (int ki = 0; ki < K; ki++)
                for (int kj = 0; kj < K; kj++) {
                    double sum = 0.0;
                    for (int n = 0; n < B; n++)
                        for (int h = 0; h < H; h++)
                            for (int x = 0; x < W; x++)
                                sum += dout[(((size_t)n * OC + o) * H + h) * W + x] *
                                       conv_input(in, n, c, h + ki - pad, x + kj - pad, C, H, W);
                    dw[(((size_t)o * C + c) * K + ki) * K + kj] += (float)sum;
                }
    }
    if (!din) return;
    for (int n = 0; n < B; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int x = 0; x < W; x++) {
                    /* out[o, h', x'] used in[c, h, x] with weight (ki, kj) where h = h' + ki - pad */
                    double sum = 0.0;
                    for (int o = 0; o < OC; o++)
                        for (int ki = 0; ki < K; ki++)
                            for (int kj = 0; kj < K; kj++) {
                                int oh = h - ki + pad, ox = x - kj + pad;
                                if (oh < 0 || oh >= H || ox < 0 || ox >= W) continue;
                                sum += (double)dout[(((size_t)n * OC + o) * H + oh) * W + ox] *
                                       w[(((size_t)o * C + c) * K + ki) * K + kj];
                            }
                    din[(((size_t)n * C + c) * H + h) * W + x] += (float)sum;
                }
}

void im2col_naive(float *col, const float *in, int C, int H, int W, int K)
{
    const int pad = K / 2;
    for (int c = 0; c < C; c++)
        for (int ki = 0; ki < K; ki++)
            for (int kj = 0; kj < K; kj++)
                for (int h = 0; h < H; h++)
                    for (int x = 0; x < W; x++)
                        col[((((size_t)c * K + ki) * K + kj) * H + h) * W + x] =
                            (float)conv_input(in, 0, c, h + ki - pad, x + kj - pad, C, H, W);
}

void col2im_add_naive(float *in, const float *col, int C, int H, int W, int K)
{
    const int pad = K / 2;
    for (int c = 0; c < C; c++)
        for (int ki = 0; ki < K; ki++)
            for (int kj = 0; kj < K; kj++)
                for (int h = 0; h < H; h++)
                    for (int x = 0; x < W; x++) {
                        int ih = h + ki - pad, ix = x + kj - pad;
                        if (ih < 0 || ih >= H || ix < 0 || ix >= W) continue;
                        in[((size_t)c * H + ih) * W + ix] += col[((((size_t)c * K + ki) * K + kj) * H + h) * W + x];
                    }
}

void conv2d_relu_pool_forward_naive(float *out, int *argmax, const float *in, const float *w,
                                    const float *b, int B, int C, int H, int W, int OC, int K)
{
    const int oh = H / 2, ow = W / 2;
    float *full = malloc(sizeof(float) * ((size_t)B * OC * H * W + 1));
    conv2d_relu_forward_naive(full, in, w, b, B, C, H, W, OC, K);
    for (int p = 0; p < B * OC; p++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                int best = 0;
                float m = full[((size_t)p * H + 2 * i) * W + 2 * j];
                for (int k = 1; k < 4; k++) {
                    float v = full[((size_t)p * H + 2 * i + k / 2) * W + 2 * j + k % 2];
                    if (v > m) {
                        m = v;
                        best = k;
                    }
                }
                out[((size_t)p * oh + i) * ow + j] = m;
                argmax[((size_t)p * oh + i) * ow + j] = best;
            }
    free(full);
}

void conv2d_relu_pool_backward_naive(float *din, float *dw, float *db, const float *dout, const float *out,
                                     const int *argmax, const float *in, const float *w, int B, int C,
                                     int H, int W, int OC, int K)
{
    const int oh = H / 2, ow = W / 2;
    float *dfull = calloc((size_t)B * OC * H * W + 1, sizeof(float));
    for (int p = 0; p < B * OC; p++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                size_t at = ((size_t)p * oh + i) * ow + j;
                if (!(out[at] > 0.0f)) continue; /* the ReLU passed nothing through this window */
                int k = argmax[at];
                dfull[((size_t)p * H + 2 * i + k / 2) * W + 2 * j + k % 2] = dout[at];
            }
    conv2d_backward_naive(din, dw, db, dfull, in, w, B, C, H, W, OC, K);
    free(dfull);
}

void maxpool2_forward_naive(float *out, const float *in, int B, int C, int H, int W)
{
    const int oh = H / 2, ow = W / 2;
    for (int p = 0; p < B * C; p++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                float m = -INFINITY;
                for (int di = 0; di < 2; di++)
                    for (int dj = 0; dj < 2; dj++) {
                        float v = in[((size_t)p * H + 2 * i + di) * W + 2 * j + dj];
                        if (v > m) m = v;
                    }
                out[((size_t)p * oh + i) * ow + j] = m;
            }
}

void maxpool2_backward_naive(float *din, const float *dout, const float *in, int B, int C, int H, int W)
{
    const int oh = H / 2, ow = W / 2;
    for (int p = 0; p < B * C; p++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                size_t best = 0;
                float m = -INFINITY;
                for (int di = 0; di < 2; di++)
                    for (int dj = 0; dj < 2; dj++) {
                        size_t at = ((size_t)p * H + 2 * i + di) * W + 2 * j + dj;
                        if (in[at] > m || (di == 0 && dj == 0)) {
                            m = in[at];
                            best = at;
                        }
                    }
                din[best] += dout[((size_t)p * oh + i) * ow + j];
            }
}

void avgpool_global_forward_naive(float *out, const float *in, int B, int C, int HW)
{
    for (int p = 0; p < B * C; p++) {
        double sum = 0.0;
        for (int i = 0; i < HW; i++) sum += in[(size_t)p * HW + i];
        out[p] = (float)(sum / HW);
    }
}

void avgpool_global_backward_naive(float *din, const float *dout, int B, int C, int HW)
{
    for (int p = 0; p < B * C; p++)
        for (int i = 0; i < HW; i++) din[(size_t)p * HW + i] += (float)((double)dout[p] / HW);
}

/* in[n, c, S*i + ki - pad, S*j + kj - pad], zero outside the image. */
static double conv_strided_input(const float *in, int n, int c, int h, int w, int C, int H, int W)
{
    if (h < 0 || h >= H || w < 0 || w >= W) return 0.0;
    return in[(((size_t)n * C + c) * H + h) * W + w];
}

void conv2d_strided_forward_naive(float *out, const float *in, const float *w, int B, int C, int H, int W, int OC,
                                  int K, int S)
{
    const int pad = K / 2, OH = (H + 2 * pad - K) / S + 1, OW = (W + 2 * pad - K) / S + 1;
    for (int n = 0; n < B; n++)
        for (int o = 0; o < OC; o++)
            for (int i = 0; i < OH; i++)
                for (int j = 0; j < OW; j++) {
                    double sum = 0.0;
                    for (int c = 0; c < C; c++)
                        for (int ki = 0; ki < K; ki++)
                            for (int kj = 0; kj < K; kj++)
                                sum += w[(((size_t)o * C + c) * K + ki) * K + kj] *
                                       conv_strided_input(in, n, c, S * i + ki - pad, S * j + kj - pad, C, H, W);
                    out[(((size_t)n * OC + o) * OH + i) * OW + j] = (float)sum;
                }
}

void conv2d_strided_backward_naive(float *din, float *dw, const float *dout, const float *in, const float *w, int B,
                                   int C, int H, int W, int OC, int K, int S)
{
    const int pad = K / 2, OH = (H + 2 * pad - K) / S + 1, OW = (W + 2 * pad - K) / S + 1;
    for (int o = 0; o < OC; o++)
        for (int c = 0; c < C; c++)
            for (int ki = 0; ki < K; ki++)
                for (int kj = 0; kj < K; kj++) {
                    double sum = 0.0;
                    for (int n = 0; n < B; n++)
                        for (int i = 0; i < OH; i++)
                            for (int j = 0; j < OW; j++)
                                sum += dout[(((size_t)n * OC + o) * OH + i) * OW + j] *
                                       conv_strided_input(in, n, c, S * i + ki - pad, S * j + kj - pad, C, H, W);
                    dw[(((size_t)o * C + c) * K + ki) * K + kj] += (float)sum;
                }
    if (!din) return;
    /* input (h, x) feeds output (i, j) through tap (ki, kj) when S*i + ki - pad = h */
    for (int n = 0; n < B; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int x = 0; x < W; x++) {
                    double sum = 0.0;
                    for (int o = 0; o < OC; o++)
                        for (int ki = 0; ki < K; ki++)
                            for (int kj = 0; kj < K; kj++) {
                                int ti = h - ki + pad, tj = x - kj + pad;
                                if (ti < 0 || tj < 0 || ti % S || tj % S) continue;
                                int i = ti / S, j = tj / S;
                                if (i >= OH || j >= OW) continue;
                                sum += (double)dout[(((size_t)n * OC + o) * OH + i) * OW + j] *
                                       w[(((size_t)o * C + c) * K + ki) * K + kj];
                            }
                    din[(((size_t)n * C + c) * H + h) * W + x] += (float)sum;
                }
}

/* One pass of sums (sum and sum of squares), the textbook variance E[x^2] - E[x]^2. */
static void groupnorm_stats_naive(const float *in, int n, int g, int C, int HW, int G, double *mu, double *r)
{
    const int per = C / G;
    double s = 0.0, q = 0.0;
    for (int c = g * per; c < (g + 1) * per; c++)
        for (int i = 0; i < HW; i++) {
            double v = in[((size_t)n * C + c) * HW + i];
            s += v;
            q += v * v;
        }
    const double m = (double)per * HW;
    *mu = s / m;
    *r = 1.0 / sqrt(q / m - *mu * *mu + GROUPNORM_EPS);
}

void groupnorm_forward_naive(float *out, float *mean, float *rstd, const float *in, const float *gamma,
                             const float *beta, int B, int C, int HW, int G)
{
    const int per = C / G;
    for (int n = 0; n < B; n++)
        for (int g = 0; g < G; g++) {
            double mu, r;
            groupnorm_stats_naive(in, n, g, C, HW, G, &mu, &r);
            mean[(size_t)n * G + g] = (float)mu;
            rstd[(size_t)n * G + g] = (float)r;
            for (int c = g * per; c < (g + 1) * per; c++)
                for (int i = 0; i < HW; i++) {
                    size_t at = ((size_t)n * C + c) * HW + i;
                    out[at] = (float)(gamma[c] * (in[at] - mu) * r + beta[c]);
                }
        }
}

/* The chain rule through mean and variance written out (as for batch normalisation):
 * dvar = sum dxhat (x - mu) (-1/2) r^3, dmu = -r sum dxhat + dvar * (-2/m) sum (x - mu),
 * dx = dxhat r + dvar 2 (x - mu) / m + dmu / m. Statistics are recomputed from in. */
void groupnorm_backward_naive(float *din, float *dgamma, float *dbeta, const float *dout, const float *in,
                              const float *gamma, int B, int C, int HW, int G)
{
    const int per = C / G;
    const double m = (double)per * HW;
    for (int n = 0; n < B; n++)
        for (int g = 0; g < G; g++) {
            double mu, r, dvar = 0.0, dmu = 0.0, dev = 0.0;
            groupnorm_stats_naive(in, n, g, C, HW, G, &mu, &r);
            for (int c = g * per; c < (g + 1) * per; c++)
                for (int i = 0; i < HW; i++) {
                    size_t at = ((size_t)n * C + c) * HW + i;
                    double dxhat = (double)dout[at] * gamma[c];
                    dvar += dxhat * (in[at] - mu) * -0.5 * r * r * r;
                    dmu += -dxhat * r;
                    dev += in[at] - mu;
                }
            dmu += dvar * -2.0 * dev / m;
            for (int c = g * per; c < (g + 1) * per; c++) {
                double dg = 0.0, db = 0.0;
                for (int i = 0; i < HW; i++) {
                    size_t at = ((size_t)n * C + c) * HW + i;
                    double dxhat = (double)dout[at] * gamma[c];
                    dg += dout[at] * (in[at] - mu) * r;
                    db += dout[at];
                    din[at] += (float)(dxhat * r + dvar * 2.0 * (in[at] - mu) / m + dmu / m);
                }
                dgamma[c] += (float)dg;
                dbeta[c] += (float)db;
            }
        }
}

void residual_relu_forward_naive(float *out, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double v = (double)a[i] + b[i];
        out[i] = (float)(v < 0.0 ? 0.0 : v); /* NaN passes, as in the kernel */
    }
}

void residual_relu_backward_naive(float *dsum, const float *dout, const float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dsum[i] = 0.0f;
        if (out[i] > 0.0f) dsum[i] = dout[i];
    }
}
