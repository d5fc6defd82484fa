/* check_models.c — kernels against their naive twins, finite-difference gradient checks
 * (a double-precision reference forward, central differences) for every layer and for
 * the MLP and CNN end to end, bottom and top split passes, the ResNet's layers (strided
 * conv, GroupNorm, residual sum) and the ResNet end to end, the cost profile against the
 * implemented shapes, optimiser formulas on hand examples, schedules, determinism.
 * Data sets and partitions are in check_data.c. */
#include "models/dataset.h"
#include "models/kernels.h"
#include "models/model.h"
#include "models/model_spec.h"
#include "models/model_width.h"
#include "models/optim.h"
#include "base/hs_error.h"

#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

static gsl_rng *test_rng(unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    return r;
}

static void fill_uniform(float *x, size_t n, gsl_rng *r, double lo, double hi)
{
    for (size_t i = 0; i < n; i++) x[i] = (float)(lo + (hi - lo) * gsl_rng_uniform(r));
}

static float *alloc_uniform(size_t n, gsl_rng *r, double lo, double hi)
{
    float *x = malloc(sizeof(float) * (n ? n : 1));
    fill_uniform(x, n, r, lo, hi);
    return x;
}

static float *alloc_copy(const float *x, size_t n)
{
    float *y = malloc(sizeof(float) * (n ? n : 1));
    memcpy(y, x, sizeof(float) * n);
    return y;
}

/* max |a-b| / (atol + rtol |b|) over n entries; <= 1 means close. */
static double worst_ratio(const float *a, const float *b, size_t n, double atol, double rtol)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)a[i] - b[i]) / (atol + rtol * fabs((double)b[i]));
        if (!(err <= worst)) worst = err; /* NaN propagates as "not close" */
    }
    return worst;
}

static int rand_int(gsl_rng *r, int lo, int hi) /* inclusive */
{
    return lo + (int)gsl_rng_uniform_int(r, (unsigned long)(hi - lo + 1));
}

/* ------------------------------------------------------------------ double references */

static void ref_linear(double *out, const double *in, const double *w, const double *b, int B, int IN, int OUT)
{
    for (int i = 0; i < B; i++)
        for (int o = 0; o < OUT; o++) {
            double s = b ? b[o] : 0.0;
            for (int k = 0; k < IN; k++) s += in[i * IN + k] * w[o * IN + k];
            out[i * OUT + o] = s;
        }
}

static void ref_relu(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] < 0) x[i] = 0;
}

static void ref_conv(double *out, const double *in, const double *w, const double *b, int B, int C, int H, int W,
                     int OC, int K)
{
    int p = K / 2;
    for (int n = 0; n < B; n++)
        for (int o = 0; o < OC; o++)
            for (int h = 0; h < H; h++)
                for (int x = 0; x < W; x++) {
                    double s = b[o];
                    for (int c = 0; c < C; c++)
                        for (int i = 0; i < K; i++)
                            for (int j = 0; j < K; j++) {
                                int ih = h + i - p, iw = x + j - p;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                s += w[((o * C + c) * K + i) * K + j] * in[((n * C + c) * H + ih) * W + iw];
                            }
                    out[((n * OC + o) * H + h) * W + x] = s;
                }
}

static void ref_maxpool(double *out, const double *in, int B, int C, int H, int W)
{
    int oh = H / 2, ow = W / 2;
    for (int p = 0; p < B * C; p++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                const double *a = in + (p * H + 2 * i) * W + 2 * j;
                double m = fmax(fmax(a[0], a[1]), fmax(a[W], a[W + 1]));
                out[(p * oh + i) * ow + j] = m;
            }
}

static void ref_gap(double *out, const double *in, int B, int C, int HW)
{
    for (int p = 0; p < B * C; p++) {
        double s = 0;
        for (int i = 0; i < HW; i++) s += in[p * HW + i];
        out[p] = s / HW;
    }
}

static double ref_ce(const double *logits, const int *y, int B, int C)
{
    double total = 0;
    for (int i = 0; i < B; i++) {
        const double *r = logits + i * C;
        double m = r[0];
        for (int j = 1; j < C; j++) m = fmax(m, r[j]);
        double s = 0;
        for (int j = 0; j < C; j++) s += exp(r[j] - m);
        total += log(s) + m - r[y[i]];
    }
    return total / B;
}

static double *to_double(const float *x, size_t n)
{
    double *d = malloc(sizeof(double) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) d[i] = x[i];
    return d;
}

/* Central-difference gradient of f at v[i], eps 1e-6 (f is computed in double). */
typedef double (*ScalarFn)(void *ctx);
static double fd_at(double *v, size_t i, ScalarFn f, void *ctx)
{
    const double eps = 1e-6, keep = v[i];
    v[i] = keep + eps;
    double up = f(ctx);
    v[i] = keep - eps;
    double down = f(ctx);
    v[i] = keep;
    return (up - down) / (2 * eps);
}

/* Checks analytic (float) against numeric gradients of f over all n entries of v. */
static void check_fd(double *v, const float *analytic, size_t n, ScalarFn f, void *ctx, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        double num = fd_at(v, i, f, ctx);
        double err = fabs(num - analytic[i]);
        ck_assert_msg(err <= 2e-4 + 2e-3 * fabs(num), "%s[%zu]: analytic %.7g numeric %.7g", what, i,
                      (double)analytic[i], num);
    }
}

/* ------------------------------------------------------------------ kernels vs naive */

START_TEST(test_linear_matches_naive)
{
    gsl_rng *r = test_rng(11);
    for (int trial = 0; trial < 40; trial++) {
        int B = rand_int(r, 1, 9), IN = rand_int(r, 1, 40), OUT = rand_int(r, 1, 33);
        float *in = alloc_uniform((size_t)B * IN, r, -1, 1), *w = alloc_uniform((size_t)OUT * IN, r, -1, 1);
        float *b = alloc_uniform(OUT, r, -1, 1), *dout = alloc_uniform((size_t)B * OUT, r, -1, 1);
        float *o1 = malloc(sizeof(float) * B * OUT), *o2 = malloc(sizeof(float) * B * OUT);
        linear_forward(o1, in, w, b, B, IN, OUT);
        linear_forward_naive(o2, in, w, b, B, IN, OUT);
        ck_assert_double_le(worst_ratio(o1, o2, (size_t)B * OUT, 1e-5, 1e-5), 1.0);
        linear_relu_forward(o1, in, w, trial % 5 ? b : NULL, B, IN, OUT);
        linear_relu_forward_naive(o2, in, w, trial % 5 ? b : NULL, B, IN, OUT);
        ck_assert_double_le(worst_ratio(o1, o2, (size_t)B * OUT, 1e-5, 1e-5), 1.0);
        /* backward adds onto what is there */
        float *din1 = alloc_uniform((size_t)B * IN, r, -1, 1), *dw1 = alloc_uniform((size_t)OUT * IN, r, -1, 1);
        float *db1 = alloc_uniform(OUT, r, -1, 1);
        float *din2 = alloc_copy(din1, (size_t)B * IN), *dw2 = alloc_copy(dw1, (size_t)OUT * IN),
              *db2 = alloc_copy(db1, OUT);
        linear_backward(din1, dw1, db1, dout, in, w, B, IN, OUT);
        linear_backward_naive(din2, dw2, db2, dout, in, w, B, IN, OUT);
        ck_assert_double_le(worst_ratio(din1, din2, (size_t)B * IN, 1e-5, 1e-5), 1.0);
        ck_assert_double_le(worst_ratio(dw1, dw2, (size_t)OUT * IN, 1e-5, 1e-5), 1.0);
        ck_assert_double_le(worst_ratio(db1, db2, OUT, 1e-5, 1e-5), 1.0);
        /* din NULL skips the input gradient only */
        linear_backward(NULL, dw1, db1, dout, in, w, B, IN, OUT);
        linear_backward_naive(NULL, dw2, db2, dout, in, w, B, IN, OUT);
        ck_assert_double_le(worst_ratio(dw1, dw2, (size_t)OUT * IN, 1e-5, 1e-5), 1.0);
        free(in), free(w), free(b), free(dout), free(o1), free(o2);
        free(din1), free(dw1), free(db1), free(din2), free(dw2), free(db2);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_conv_matches_naive)
{
    gsl_rng *r = test_rng(12);
    const int kernels[] = {1, 3, 5};
    for (int trial = 0; trial < 30; trial++) {
        int B = rand_int(r, 1, 3), C = rand_int(r, 1, 3), H = rand_int(r, 1, 9), W = rand_int(r, 1, 9);
        int OC = rand_int(r, 1, 4), K = kernels[trial % 3];
        size_t nin = (size_t)B * C * H * W, nout = (size_t)B * OC * H * W, nw = (size_t)OC * C * K * K;
        float *in = alloc_uniform(nin, r, -1, 1), *w = alloc_uniform(nw, r, -1, 1), *b = alloc_uniform(OC, r, -1, 1);
        float *dout = alloc_uniform(nout, r, -1, 1), *col = malloc(sizeof(float) * conv2d_col_floats(C, H, W, K));
        float *o1 = malloc(sizeof(float) * nout), *o2 = malloc(sizeof(float) * nout);
        conv2d_forward(o1, in, w, b, col, B, C, H, W, OC, K);
        conv2d_forward_naive(o2, in, w, b, B, C, H, W, OC, K);
        ck_assert_double_le(worst_ratio(o1, o2, nout, 1e-5, 1e-5), 1.0);
        conv2d_relu_forward(o1, in, w, b, col, B, C, H, W, OC, K);
        conv2d_relu_forward_naive(o2, in, w, b, B, C, H, W, OC, K);
        ck_assert_double_le(worst_ratio(o1, o2, nout, 1e-5, 1e-5), 1.0);
        float *din1 = alloc_uniform(nin, r, -1, 1), *dw1 = alloc_uniform(nw, r, -1, 1), *db1 = alloc_uniform(OC, r, -1, 1);
        float *din2 = alloc_copy(din1, nin), *dw2 = alloc_copy(dw1, nw), *db2 = alloc_copy(db1, OC);
        conv2d_backward(din1, dw1, db1, dout, in, w, col, B, C, H, W, OC, K);
        conv2d_backward_naive(din2, dw2, db2, dout, in, w, B, C, H, W, OC, K);
        ck_assert_double_le(worst_ratio(din1, din2, nin, 1e-5, 1e-5), 1.0);
        ck_assert_double_le(worst_ratio(dw1, dw2, nw, 1e-5, 1e-5), 1.0);
        ck_assert_double_le(worst_ratio(db1, db2, OC, 1e-5, 1e-5), 1.0);
        conv2d_backward(NULL, dw1, db1, dout, in, w, col, B, C, H, W, OC, K);
        conv2d_backward_naive(NULL, dw2, db2, dout, in, w, B, C, H, W, OC, K);
        ck_assert_double_le(worst_ratio(dw1, dw2, nw, 1e-5, 1e-5), 1.0);
        free(in), free(w), free(b), free(dout), free(col), free(o1), free(o2);
        free(din1), free(dw1), free(db1), free(din2), free(dw2), free(db2);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_im2col_col2im_match_naive)
{
    /* the contiguous-copy im2col and col2im give exactly the row-by-row values, kernels
     * wider than the image included */
    gsl_rng *r = test_rng(15);
    const int kernels[] = {1, 3, 5, 7};
    for (int trial = 0; trial < 60; trial++) {
        int C = rand_int(r, 1, 3), H = rand_int(r, 1, 9), W = rand_int(r, 1, 9), K = kernels[trial % 4];
        size_t n = (size_t)C * H * W, ncol = conv2d_col_floats(C, H, W, K);
        float *in = alloc_uniform(n, r, -1, 1), *c1 = alloc_uniform(ncol, r, -1, 1), *c2 = alloc_copy(c1, ncol);
        im2col(c1, in, C, H, W, K);
        im2col_naive(c2, in, C, H, W, K);
        ck_assert_mem_eq(c1, c2, sizeof(float) * ncol);
        fill_uniform(c1, ncol, r, -1, 1);
        memcpy(c2, c1, sizeof(float) * ncol); /* col2im_add clobbers its column buffer */
        float *d1 = alloc_uniform(n, r, -1, 1), *d2 = alloc_copy(d1, n);
        col2im_add(d1, c1, C, H, W, K);
        col2im_add_naive(d2, c2, C, H, W, K);
        ck_assert_mem_eq(d1, d2, sizeof(float) * n);
        free(in), free(c1), free(c2), free(d1), free(d2);
    }
    gsl_rng_free(r);
}
END_TEST

/* Small integers: every sum is exact in float, so the fast kernel and the naive twin
 * agree bit for bit, and pooling windows are full of ties. */
static float *alloc_small_ints(size_t n, gsl_rng *r)
{
    float *x = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) x[i] = (float)rand_int(r, -2, 2);
    return x;
}

START_TEST(test_conv_block_matches_naive_and_unfused)
{
    /* conv + bias + ReLU + max-pool fused: against its naive twin, and bit for bit
     * against the unfused optimised kernels the model ran before */
    gsl_rng *r = test_rng(16);
    const int kernels[] = {1, 3, 5};
    for (int trial = 0; trial < 60; trial++) {
        int B = rand_int(r, 1, 3), C = rand_int(r, 1, 3), H = rand_int(r, 1, 9), W = rand_int(r, 1, 9);
        int OC = rand_int(r, 1, 5), K = kernels[trial % 3], exact = trial % 2 == 0, bias = trial % 5 != 4;
        int oh = H / 2, ow = W / 2;
        size_t nin = (size_t)B * C * H * W, nfull = (size_t)B * OC * H * W, nout = (size_t)B * OC * oh * ow;
        size_t nw = (size_t)OC * C * K * K;
        float *in = exact ? alloc_small_ints(nin, r) : alloc_uniform(nin, r, -1, 1);
        float *w = exact ? alloc_small_ints(nw, r) : alloc_uniform(nw, r, -1, 1);
        float *b = bias ? (exact ? alloc_small_ints(OC, r) : alloc_uniform(OC, r, -1, 1)) : NULL;
        float *col = malloc(sizeof(float) * conv2d_col_floats(C, H, W, K));
        float *plane = malloc(sizeof(float) * OC * H * W);
        float *o1 = malloc(sizeof(float) * (nout + 1)), *o2 = malloc(sizeof(float) * (nout + 1));
        float *full = malloc(sizeof(float) * nfull), *o3 = malloc(sizeof(float) * (nout + 1));
        int *a1 = malloc(sizeof(int) * (nout + 1)), *a2 = malloc(sizeof(int) * (nout + 1));
        conv2d_relu_pool_forward(o1, a1, in, w, b, col, plane, B, C, H, W, OC, K);
        conv2d_relu_pool_forward_naive(o2, a2, in, w, b, B, C, H, W, OC, K);
        if (exact) {
            ck_assert_mem_eq(o1, o2, sizeof(float) * nout);
            ck_assert_mem_eq(a1, a2, sizeof(int) * nout);
        } else {
            ck_assert_double_le(worst_ratio(o1, o2, nout, 1e-5, 1e-5), 1.0);
        }
        conv2d_relu_forward(full, in, w, b, col, B, C, H, W, OC, K);
        maxpool2_forward(o3, full, B, OC, H, W);
        ck_assert_mem_eq(o1, o3, sizeof(float) * nout);
        for (size_t i = 0; i < nout; i++) { /* the argmax names a window maximum, the first */
            size_t p = i / ((size_t)oh * ow), at = i % ((size_t)oh * ow), y = at / ow, x = at % ow;
            const float *win = full + (p * H + 2 * y) * W + 2 * x;
            const float v[4] = {win[0], win[1], win[W], win[W + 1]};
            ck_assert_int_lt(a1[i], 4);
            ck_assert(memcmp(&v[a1[i]], &o1[i], sizeof(float)) == 0);
            for (int k = 0; k < a1[i]; k++) ck_assert(!(v[k] >= o1[i]));
        }
        /* backward, with and without the input gradient */
        float *dout = alloc_uniform(nout, r, -1, 1), *dpre = malloc(sizeof(float) * nfull);
        float *din1 = alloc_uniform(nin, r, -1, 1), *dw1 = alloc_uniform(nw, r, -1, 1);
        float *db1 = alloc_uniform(OC, r, -1, 1);
        float *din2 = alloc_copy(din1, nin), *dw2 = alloc_copy(dw1, nw), *db2 = alloc_copy(db1, OC);
        float *din3 = alloc_copy(din1, nin), *dw3 = alloc_copy(dw1, nw), *db3 = alloc_copy(db1, OC);
        for (int pass = 0; pass < 2; pass++) {
            float *d1 = pass ? NULL : din1, *d2 = pass ? NULL : din2, *d3 = pass ? NULL : din3;
            conv2d_relu_pool_backward(d1, dw1, db1, dout, o1, a1, in, w, col, plane, B, C, H, W, OC, K);
            conv2d_relu_pool_backward_naive(d2, dw2, db2, dout, o1, a1, in, w, B, C, H, W, OC, K);
            maxpool2_relu_backward(dpre, dout, full, B, OC, H, W);
            conv2d_backward(d3, dw3, db3, dpre, in, w, col, B, C, H, W, OC, K);
            ck_assert_double_le(worst_ratio(din1, din2, nin, 1e-5, 1e-5), 1.0);
            ck_assert_double_le(worst_ratio(dw1, dw2, nw, 1e-5, 1e-5), 1.0);
            ck_assert_double_le(worst_ratio(db1, db2, OC, 1e-5, 1e-5), 1.0);
            ck_assert_mem_eq(din1, din3, sizeof(float) * nin);
            ck_assert_mem_eq(dw1, dw3, sizeof(float) * nw);
            ck_assert_mem_eq(db1, db3, sizeof(float) * OC);
        }
        free(in), free(w), free(b), free(col), free(plane), free(o1), free(o2), free(full), free(o3), free(a1);
        free(a2), free(dout), free(dpre), free(din1), free(dw1), free(db1), free(din2), free(dw2), free(db2);
        free(din3), free(dw3), free(db3);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_conv_block_nan_passes)
{
    /* a NaN weight reaches the pooled output (so the loss reports divergence), as through
     * the unfused kernels */
    float in[16], w[9], b[1] = {0}, col[9 * 16], plane[16], out[4], ref[4], full[16];
    int arg[4];
    for (int i = 0; i < 16; i++) in[i] = (float)(i % 5) - 2.0f;
    for (int i = 0; i < 9; i++) w[i] = 0.1f * (float)i;
    w[4] = NAN;
    conv2d_relu_pool_forward(out, arg, in, w, b, col, plane, 1, 1, 4, 4, 1, 3);
    conv2d_relu_forward(full, in, w, b, col, 1, 1, 4, 4, 1, 3);
    maxpool2_forward(ref, full, 1, 1, 4, 4);
    ck_assert_mem_eq(out, ref, sizeof out);
    ck_assert(isnan(out[0]));
}
END_TEST

START_TEST(test_pool_loss_relu_match_naive)
{
    gsl_rng *r = test_rng(13);
    for (int trial = 0; trial < 30; trial++) {
        int B = rand_int(r, 1, 3), C = rand_int(r, 1, 3), H = rand_int(r, 2, 9), W = rand_int(r, 2, 9);
        size_t n = (size_t)B * C * H * W, np = (size_t)B * C * (H / 2) * (W / 2);
        float *in = alloc_uniform(n, r, -1, 1), *g = alloc_uniform(np, r, -1, 1);
        if (trial % 3 == 0) /* ties: whole windows equal */
            for (size_t i = 0; i < n; i++) in[i] = (float)((int)(in[i] * 2));
        float *o1 = malloc(sizeof(float) * np), *o2 = malloc(sizeof(float) * np);
        maxpool2_forward(o1, in, B, C, H, W);
        maxpool2_forward_naive(o2, in, B, C, H, W);
        ck_assert_mem_eq(o1, o2, sizeof(float) * np);
        float *d1 = alloc_uniform(n, r, -1, 1), *d2 = alloc_copy(d1, n);
        maxpool2_backward(d1, g, in, B, C, H, W);
        maxpool2_backward_naive(d2, g, in, B, C, H, W);
        ck_assert_mem_eq(d1, d2, sizeof(float) * n);
        /* fused ReLU + pool backward on a ReLU output = zeroed pool backward, then mask */
        relu_forward(in, in, n);
        for (size_t i = 0; i < n; i++) d1[i] = 123.0f;
        maxpool2_relu_backward(d1, g, in, B, C, H, W);
        memset(d2, 0, sizeof(float) * n);
        maxpool2_backward_naive(d2, g, in, B, C, H, W);
        float *masked = calloc(n, sizeof(float));
        relu_backward_naive(masked, d2, in, n);
        ck_assert_mem_eq(d1, masked, sizeof(float) * n);
        relu_backward_inplace(d2, in, n);
        ck_assert_mem_eq(d2, masked, sizeof(float) * n);
        float *acc = alloc_uniform(n, r, -1, 1), *acc2 = alloc_copy(acc, n);
        relu_backward(acc, d1, in, n);
        relu_backward_naive(acc2, d1, in, n);
        ck_assert_mem_eq(acc, acc2, sizeof(float) * n);
        /* global average pool */
        int HW = H * W;
        float *a1 = malloc(sizeof(float) * B * C), *a2 = malloc(sizeof(float) * B * C);
        avgpool_global_forward(a1, in, B, C, HW);
        avgpool_global_forward_naive(a2, in, B, C, HW);
        ck_assert_double_le(worst_ratio(a1, a2, (size_t)B * C, 1e-6, 1e-5), 1.0);
        float *gd1 = alloc_uniform(n, r, -1, 1), *gd2 = alloc_copy(gd1, n);
        avgpool_global_backward(gd1, a1, B, C, HW);
        avgpool_global_backward_naive(gd2, a1, B, C, HW);
        ck_assert_double_le(worst_ratio(gd1, gd2, n, 1e-6, 1e-5), 1.0);
        free(in), free(g), free(o1), free(o2), free(d1), free(d2), free(masked), free(acc), free(acc2);
        free(a1), free(a2), free(gd1), free(gd2);
    }
    /* softmax cross-entropy */
    for (int trial = 0; trial < 20; trial++) {
        int B = rand_int(r, 1, 8), C = rand_int(r, 2, 12);
        float *logits = alloc_uniform((size_t)B * C, r, -8, 8);
        int *y = malloc(sizeof(int) * B);
        for (int i = 0; i < B; i++) y[i] = rand_int(r, 0, C - 1);
        float *d1 = malloc(sizeof(float) * B * C), *d2 = malloc(sizeof(float) * B * C);
        int c1, c2;
        double l1 = softmax_crossentropy(d1, logits, y, B, C, &c1);
        double l2 = softmax_crossentropy_naive(d2, logits, y, B, C, &c2);
        ck_assert_double_eq_tol(l1, l2, 1e-6 * (1 + fabs(l2)));
        ck_assert_int_eq(c1, c2);
        ck_assert_double_le(worst_ratio(d1, d2, (size_t)B * C, 1e-7, 1e-5), 1.0);
        ck_assert_double_eq(softmax_crossentropy(NULL, logits, y, B, C, NULL), l1);
        free(logits), free(y), free(d1), free(d2);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_softmax_hand_example_and_nan)
{
    float logits[4] = {0, 0, 1, 3};
    int y[2] = {0, 1};
    float d[4];
    int correct;
    double loss = softmax_crossentropy(d, logits, y, 2, 2, &correct);
    double l2 = log(1 + exp(-2.0)); /* second row: label 1, logit 3 vs 1 */
    ck_assert_double_eq_tol(loss, (log(2.0) + l2) / 2, 1e-7);
    ck_assert_float_eq_tol(d[0], -0.25f, 1e-7f);
    ck_assert_float_eq_tol(d[1], 0.25f, 1e-7f);
    double p = 1 / (1 + exp(2.0));
    ck_assert_float_eq_tol(d[2], (float)(p / 2), 1e-7f);
    ck_assert_float_eq_tol(d[3], (float)((1 - p - 1) / 2), 1e-7f);
    ck_assert_int_eq(correct, 2); /* row 0 ties at class 0 (first maximum), row 1 argmax 1 */
    logits[1] = NAN;
    ck_assert(!isfinite(softmax_crossentropy(d, logits, y, 2, 2, NULL)));
    logits[1] = INFINITY;
    ck_assert(!isfinite(softmax_crossentropy(NULL, logits, y, 2, 2, NULL)));
}
END_TEST

/* ------------------------------------------------------------------ per-layer FD checks */

typedef struct LayerCtx {
    int kind; /* 0 linear, 1 conv, 2 maxpool, 3 gap, 4 relu, 5 cross-entropy, 6 conv+relu+maxpool */
    int B, C, H, W, OC, K, IN, OUT;
    double *in, *w, *b, *r; /* r: the random projection f = sum r * out */
    int *y;
    size_t n_out;
    double *out;
    double *full; /* kind 6: the conv output before pooling */
} LayerCtx;

static double layer_objective(void *p)
{
    LayerCtx *c = p;
    switch (c->kind) {
    case 0: ref_linear(c->out, c->in, c->w, c->b, c->B, c->IN, c->OUT); break;
    case 1: ref_conv(c->out, c->in, c->w, c->b, c->B, c->C, c->H, c->W, c->OC, c->K); break;
    case 2: ref_maxpool(c->out, c->in, c->B, c->C, c->H, c->W); break;
    case 3: ref_gap(c->out, c->in, c->B, c->C, c->H * c->W); break;
    case 4:
        memcpy(c->out, c->in, sizeof(double) * c->n_out);
        ref_relu(c->out, c->n_out);
        break;
    case 6:
        ref_conv(c->full, c->in, c->w, c->b, c->B, c->C, c->H, c->W, c->OC, c->K);
        ref_relu(c->full, (size_t)c->B * c->OC * c->H * c->W);
        ref_maxpool(c->out, c->full, c->B, c->OC, c->H, c->W);
        break;
    default: return ref_ce(c->in, c->y, c->B, c->C);
    }
    double s = 0;
    for (size_t i = 0; i < c->n_out; i++) s += c->r[i] * c->out[i];
    return s;
}

START_TEST(test_layer_gradients_by_finite_differences)
{
    gsl_rng *r = test_rng(14);
    /* linear */
    {
        LayerCtx c = {.kind = 0, .B = 3, .IN = 5, .OUT = 4};
        size_t nin = 15, nw = 20;
        float *in = alloc_uniform(nin, r, -1, 1), *w = alloc_uniform(nw, r, -1, 1), *b = alloc_uniform(4, r, -1, 1);
        float *dout = alloc_uniform(12, r, -1, 1);
        float *din = calloc(nin, sizeof(float)), *dw = calloc(nw, sizeof(float)), *db = calloc(4, sizeof(float));
        linear_backward(din, dw, db, dout, in, w, 3, 5, 4);
        c.in = to_double(in, nin), c.w = to_double(w, nw), c.b = to_double(b, 4), c.r = to_double(dout, 12);
        c.n_out = 12;
        c.out = malloc(sizeof(double) * 12);
        check_fd(c.in, din, nin, layer_objective, &c, "linear din");
        check_fd(c.w, dw, nw, layer_objective, &c, "linear dw");
        check_fd(c.b, db, 4, layer_objective, &c, "linear db");
        free(in), free(w), free(b), free(dout), free(din), free(dw), free(db);
        free(c.in), free(c.w), free(c.b), free(c.r), free(c.out);
    }
    /* conv, K = 3 and 5, odd and even sizes */
    for (int K = 3; K <= 5; K += 2) {
        LayerCtx c = {.kind = 1, .B = 2, .C = 2, .H = 5, .W = 4, .OC = 3, .K = K};
        size_t nin = 2 * 2 * 5 * 4, nw = (size_t)3 * 2 * K * K, nout = 2 * 3 * 5 * 4;
        float *in = alloc_uniform(nin, r, -1, 1), *w = alloc_uniform(nw, r, -1, 1), *b = alloc_uniform(3, r, -1, 1);
        float *dout = alloc_uniform(nout, r, -1, 1), *col = malloc(sizeof(float) * conv2d_col_floats(2, 5, 4, K));
        float *din = calloc(nin, sizeof(float)), *dw = calloc(nw, sizeof(float)), *db = calloc(3, sizeof(float));
        conv2d_backward(din, dw, db, dout, in, w, col, 2, 2, 5, 4, 3, K);
        c.in = to_double(in, nin), c.w = to_double(w, nw), c.b = to_double(b, 3), c.r = to_double(dout, nout);
        c.n_out = nout;
        c.out = malloc(sizeof(double) * nout);
        check_fd(c.in, din, nin, layer_objective, &c, "conv din");
        check_fd(c.w, dw, nw, layer_objective, &c, "conv dw");
        check_fd(c.b, db, 3, layer_objective, &c, "conv db");
        free(in), free(w), free(b), free(dout), free(col), free(din), free(dw), free(db);
        free(c.in), free(c.w), free(c.b), free(c.r), free(c.out);
    }
    /* the fused conv block, odd sizes (a dropped row and column) */
    {
        LayerCtx c = {.kind = 6, .B = 2, .C = 2, .H = 5, .W = 7, .OC = 3, .K = 3};
        size_t nin = 2 * 2 * 5 * 7, nw = 3 * 2 * 3 * 3, nout = 2 * 3 * 2 * 3;
        float *in = alloc_uniform(nin, r, -1, 1), *w = alloc_uniform(nw, r, -1, 1), *b = alloc_uniform(3, r, -1, 1);
        float *dout = alloc_uniform(nout, r, -1, 1), *col = malloc(sizeof(float) * conv2d_col_floats(2, 5, 7, 3));
        float *plane = malloc(sizeof(float) * 3 * 5 * 7), *out = malloc(sizeof(float) * nout);
        int *argmax = malloc(sizeof(int) * nout);
        float *din = calloc(nin, sizeof(float)), *dw = calloc(nw, sizeof(float)), *db = calloc(3, sizeof(float));
        conv2d_relu_pool_forward(out, argmax, in, w, b, col, plane, 2, 2, 5, 7, 3, 3);
        conv2d_relu_pool_backward(din, dw, db, dout, out, argmax, in, w, col, plane, 2, 2, 5, 7, 3, 3);
        c.in = to_double(in, nin), c.w = to_double(w, nw), c.b = to_double(b, 3), c.r = to_double(dout, nout);
        c.n_out = nout;
        c.out = malloc(sizeof(double) * nout);
        c.full = malloc(sizeof(double) * 2 * 3 * 5 * 7);
        check_fd(c.in, din, nin, layer_objective, &c, "conv block din");
        check_fd(c.w, dw, nw, layer_objective, &c, "conv block dw");
        check_fd(c.b, db, 3, layer_objective, &c, "conv block db");
        free(in), free(w), free(b), free(dout), free(col), free(plane), free(out), free(argmax);
        free(din), free(dw), free(db), free(c.in), free(c.w), free(c.b), free(c.r), free(c.out), free(c.full);
    }
    /* maxpool (odd size drops a row and a column), gap, relu */
    for (int kind = 2; kind <= 4; kind++) {
        LayerCtx c = {.kind = kind, .B = 2, .C = 2, .H = 5, .W = 6};
        size_t nin = 2 * 2 * 5 * 6;
        size_t nout = kind == 2 ? 2 * 2 * 2 * 3 : kind == 3 ? 4 : nin;
        float *in = alloc_uniform(nin, r, -1, 1), *dout = alloc_uniform(nout, r, -1, 1);
        float *din = calloc(nin, sizeof(float));
        if (kind == 2) maxpool2_backward(din, dout, in, 2, 2, 5, 6);
        if (kind == 3) avgpool_global_backward(din, dout, 2, 2, 30);
        if (kind == 4) {
            float *out = malloc(sizeof(float) * nin);
            relu_forward(out, in, nin);
            relu_backward(din, dout, out, nin);
            free(out);
        }
        c.in = to_double(in, nin), c.r = to_double(dout, nout);
        c.n_out = nout;
        c.out = malloc(sizeof(double) * nout);
        check_fd(c.in, din, nin, layer_objective, &c, kind == 2 ? "maxpool" : kind == 3 ? "gap" : "relu");
        free(in), free(dout), free(din), free(c.in), free(c.r), free(c.out);
    }
    /* cross-entropy w.r.t. the logits */
    {
        int y[3] = {2, 0, 3};
        LayerCtx c = {.kind = 5, .B = 3, .C = 4, .y = y};
        float *logits = alloc_uniform(12, r, -3, 3), *d = malloc(sizeof(float) * 12);
        softmax_crossentropy(d, logits, y, 3, 4, NULL);
        c.in = to_double(logits, 12);
        check_fd(c.in, d, 12, layer_objective, &c, "cross-entropy");
        free(logits), free(d), free(c.in);
    }
    gsl_rng_free(r);
}
END_TEST

/* ------------------------------------------------------------------ model reference */

static ModelSpec mlp_spec(int n, const int *sizes, int batch)
{
    ModelSpec s;
    memset(&s, 0, sizeof s);
    s.arch = MODEL_ARCH_MLP;
    s.in_channels = sizes[0];
    s.in_height = s.in_width = 1;
    s.classes = sizes[n - 1];
    s.n_sizes = n;
    memcpy(s.sizes, sizes, sizeof(int) * n);
    s.batch = batch;
    return s;
}

static ModelSpec cnn_spec(int c, int h, int w, int c1, int c2, int k, int hidden, int classes, int batch)
{
    ModelSpec s;
    memset(&s, 0, sizeof s);
    s.arch = MODEL_ARCH_CNN;
    s.in_channels = c;
    s.in_height = h;
    s.in_width = w;
    s.classes = classes;
    s.conv_channels[0] = c1;
    s.conv_channels[1] = c2;
    s.kernel = k;
    s.hidden = hidden;
    s.batch = batch;
    return s;
}

typedef struct RefModel {
    const ModelSpec *spec;
    const Model *model;
    double *P; /* the parameters in double, same layout */
    const double *x; /* model input (full, bottom) or cut activations (top) */
    const int *y;
    int B;
    int mode, split; /* mode 0 full, 1 bottom (loss on head split), 2 top */
    double *act_at_split; /* bottom: receives the cut activations */
} RefModel;

/* Runs blocks [first, end) of the reference and returns the output (malloc'd), its
 * floats per sample in *width; for a CNN, *channels and *hw describe the last conv block. */
static double *ref_blocks(const RefModel *rm, const double *x, int first, int end, int *width, int *channels,
                          int *hw)
{
    const ModelSpec *s = rm->spec;
    const int B = rm->B;
    size_t off, count;
    int cur = first == 0 ? s->in_channels * s->in_height * s->in_width : 0;
    int c = s->in_channels, h = s->in_height, w = s->in_width;
    if (s->arch == MODEL_ARCH_CNN)
        for (int b = 0; b < first && b < 2; b++) c = s->conv_channels[b], h /= 2, w /= 2;
    if (first > 0) cur = model_split_floats(rm->model, first);
    double *in = malloc(sizeof(double) * B * cur);
    memcpy(in, x, sizeof(double) * B * cur);
    for (int b = first; b < end; b++) {
        model_block_range(rm->model, b, &off, &count);
        const double *W = rm->P + off;
        double *out;
        if (s->arch == MODEL_ARCH_CNN && b < 2) {
            int oc = s->conv_channels[b], k = s->kernel;
            double *conv = malloc(sizeof(double) * B * oc * h * w);
            ref_conv(conv, in, W, W + (size_t)oc * c * k * k, B, c, h, w, oc, k);
            ref_relu(conv, (size_t)B * oc * h * w);
            out = malloc(sizeof(double) * B * oc * (h / 2) * (w / 2));
            ref_maxpool(out, conv, B, oc, h, w);
            free(conv);
            c = oc, h /= 2, w /= 2;
            cur = c * h * w;
        } else {
            int IN = cur, OUT = s->arch == MODEL_ARCH_MLP ? s->sizes[b + 1] : b == 2 ? s->hidden : s->classes;
            ck_assert_uint_eq(count, (size_t)IN * OUT + OUT);
            out = malloc(sizeof(double) * B * OUT);
            ref_linear(out, in, W, W + (size_t)IN * OUT, B, IN, OUT);
            if (b < model_n_blocks(rm->model) - 1) ref_relu(out, (size_t)B * OUT);
            cur = OUT;
        }
        free(in);
        in = out;
    }
    *width = cur;
    *channels = c;
    *hw = h * w;
    return in;
}

static double ref_model_loss(void *p)
{
    RefModel *rm = p;
    const ModelSpec *s = rm->spec;
    const int L = model_n_blocks(rm->model), B = rm->B;
    int width, channels, hw;
    double loss;
    if (rm->mode == 0 || rm->mode == 2) {
        double *logits = ref_blocks(rm, rm->x, rm->mode == 0 ? 0 : rm->split, L, &width, &channels, &hw);
        loss = ref_ce(logits, rm->y, B, s->classes);
        free(logits);
        return loss;
    }
    double *act = ref_blocks(rm, rm->x, 0, rm->split, &width, &channels, &hw);
    if (rm->act_at_split) memcpy(rm->act_at_split, act, sizeof(double) * B * width);
    size_t off, count;
    model_aux_range(rm->model, rm->split, &off, &count);
    const double *in = act;
    double *pooled = NULL;
    int IN = width;
    if (s->arch == MODEL_ARCH_CNN && rm->split < 3) {
        pooled = malloc(sizeof(double) * B * channels);
        ref_gap(pooled, act, B, channels, hw);
        in = pooled;
        IN = channels;
    }
    ck_assert_uint_eq(count, (size_t)IN * s->classes + s->classes);
    double *logits = malloc(sizeof(double) * B * s->classes);
    ref_linear(logits, in, rm->P + off, rm->P + off + (size_t)IN * s->classes, B, IN, s->classes);
    loss = ref_ce(logits, rm->y, B, s->classes);
    free(logits);
    free(pooled);
    free(act);
    return loss;
}

/* Checks the gradient ranges [first block, end block) (+ head when head > 0) against
 * central differences, and that every other entry kept the sentinel value. */
static void check_model_fd(Model *m, RefModel *rm, int first, int end, int head, float sentinel, const char *what)
{
    const float *g = model_grads(m);
    size_t n = model_param_count(m);
    char *tested = calloc(n, 1);
    size_t off, count;
    for (int b = first; b < end; b++) {
        model_block_range(m, b, &off, &count);
        for (size_t i = off; i < off + count; i++) tested[i] = 1;
    }
    if (head) {
        model_aux_range(m, head, &off, &count);
        for (size_t i = off; i < off + count; i++) tested[i] = 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!tested[i]) {
            ck_assert_msg(g[i] == sentinel, "%s: gradient %zu outside the pass's ranges was written", what, i);
            continue;
        }
        double num = fd_at(rm->P, i, ref_model_loss, rm);
        double err = fabs(num - g[i]);
        ck_assert_msg(err <= 2e-4 + 2e-3 * fabs(num), "%s: param %zu analytic %.7g numeric %.7g", what, i,
                      (double)g[i], num);
    }
    free(tested);
}

static void check_model_end_to_end(const ModelSpec *spec, unsigned long seed)
{
    gsl_rng *r = test_rng(seed);
    Model *m;
    ModelWorkspace *ws;
    ck_assert_int_eq(model_create(spec, r, &m), HS_OK);
    ck_assert_int_eq(model_workspace_create(spec, &ws), HS_OK);
    const int B = spec->batch, L = model_n_blocks(m);
    const int features = spec->in_channels * spec->in_height * spec->in_width;
    const size_t n = model_param_count(m);
    /* small random biases too, so bias gradients meet non-trivial activations */
    float *P = model_params(m);
    for (size_t i = 0; i < n; i++)
        if (P[i] == 0.0f) P[i] = (float)(0.1 * (gsl_rng_uniform(r) - 0.5));
    float *x = alloc_uniform((size_t)B * features, r, 0, 1);
    int *y = malloc(sizeof(int) * B);
    for (int i = 0; i < B; i++) y[i] = rand_int(r, 0, spec->classes - 1);
    double *xd = to_double(x, (size_t)B * features);
    RefModel rm = {.spec = spec, .model = m, .P = to_double(P, n), .x = xd, .y = y, .B = B};
    const float sentinel = 7.5f;
    float *G = model_grads(m);
    double loss;

    /* whole model */
    for (size_t i = 0; i < n; i++) G[i] = sentinel;
    ck_assert_int_eq(model_grad_full(m, ws, x, y, B, &loss), HS_OK);
    ck_assert_double_eq_tol(loss, ref_model_loss(&rm), 1e-5);
    check_model_fd(m, &rm, 0, L, 0, sentinel, "full");
    /* model_grad_full_at gives the same bits */
    float *G2 = malloc(sizeof(float) * n);
    double loss2;
    ck_assert_int_eq(model_grad_full_at(m, P, G2, ws, x, y, B, &loss2), HS_OK);
    ck_assert(loss2 == loss);
    for (int b = 0; b < L; b++) {
        size_t off, count;
        model_block_range(m, b, &off, &count);
        ck_assert_mem_eq(G + off, G2 + off, sizeof(float) * count);
    }

    for (int split = 1; split < L; split++) {
        /* bottom: blocks 1..split + head split */
        int act_floats = model_split_floats(m, split);
        float *act = malloc(sizeof(float) * B * act_floats);
        double *act_ref = malloc(sizeof(double) * B * act_floats);
        for (size_t i = 0; i < n; i++) G[i] = sentinel;
        ck_assert_int_eq(model_grad_bottom(m, ws, split, x, y, B, &loss, act), HS_OK);
        rm.mode = 1;
        rm.split = split;
        rm.x = xd;
        rm.act_at_split = act_ref;
        ck_assert_double_eq_tol(loss, ref_model_loss(&rm), 1e-5);
        for (int i = 0; i < B * act_floats; i++) ck_assert_double_eq_tol(act[i], act_ref[i], 1e-5);
        rm.act_at_split = NULL;
        check_model_fd(m, &rm, 0, split, split, sentinel, "bottom");

        /* top: blocks split+1..L from random cut activations */
        float *act_in = alloc_uniform((size_t)B * act_floats, r, 0, 1);
        double *act_in_d = to_double(act_in, (size_t)B * act_floats);
        for (size_t i = 0; i < n; i++) G[i] = sentinel;
        ck_assert_int_eq(model_grad_top(m, ws, split, act_in, y, B, &loss), HS_OK);
        rm.mode = 2;
        rm.x = act_in_d;
        ck_assert_double_eq_tol(loss, ref_model_loss(&rm), 1e-5);
        check_model_fd(m, &rm, split, L, 0, sentinel, "top");
        /* a workspace carries no state between passes: a fresh one gives the same bits */
        ModelWorkspace *fresh;
        ck_assert_int_eq(model_workspace_create(spec, &fresh), HS_OK);
        float *G_top = alloc_copy(G, n);
        double loss_fresh;
        ck_assert_int_eq(model_grad_top(m, fresh, split, act_in, y, B, &loss_fresh), HS_OK);
        ck_assert(loss_fresh == loss);
        ck_assert_mem_eq(G, G_top, sizeof(float) * n);
        model_workspace_free(fresh);
        free(G_top);
        rm.mode = 0;
        rm.x = xd;
        free(act), free(act_ref), free(act_in), free(act_in_d);
    }
    /* a smaller batch than the workspace's */
    if (B > 1) {
        rm.B = B - 1;
        for (size_t i = 0; i < n; i++) G[i] = sentinel;
        ck_assert_int_eq(model_grad_full(m, ws, x, y, B - 1, &loss), HS_OK);
        ck_assert_double_eq_tol(loss, ref_model_loss(&rm), 1e-5);
        check_model_fd(m, &rm, 0, L, 0, sentinel, "full, smaller batch");
    }
    free(G2), free(x), free(y), free(xd), free(rm.P);
    model_workspace_free(ws);
    model_free(m);
    gsl_rng_free(r);
}

/* Per-sample gradients (DP-SGD): sample j's vector against central differences of the
 * double reference on sample j alone, and against a batch-1 model_grad_full_at; the
 * clipped mean against clipping those vectors by hand. */
static void check_per_sample(const ModelSpec *spec, unsigned long seed)
{
    gsl_rng *r = test_rng(seed);
    Model *m;
    ModelWorkspace *ws;
    ck_assert_int_eq(model_create(spec, r, &m), HS_OK);
    ck_assert_int_eq(model_workspace_create(spec, &ws), HS_OK);
    const int B = spec->batch, L = model_n_blocks(m);
    const int features = spec->in_channels * spec->in_height * spec->in_width;
    const size_t n = model_param_count(m), blocks = model_block_param_count(m);
    ck_assert_uint_le(blocks, n);
    float *P = model_params(m);
    for (size_t i = 0; i < n; i++)
        if (P[i] == 0.0f) P[i] = (float)(0.1 * (gsl_rng_uniform(r) - 0.5));
    float *x = alloc_uniform((size_t)B * features, r, 0, 1);
    int *y = malloc(sizeof(int) * B);
    for (int i = 0; i < B; i++) y[i] = rand_int(r, 0, spec->classes - 1);
    const float sentinel = 7.5f;
    float *per = malloc(sizeof(float) * n * B);
    for (size_t i = 0; i < n * B; i++) per[i] = sentinel;
    double loss, batch_loss;
    ck_assert_int_eq(model_grad_samples_at(m, P, per, n, ws, x, y, B, &loss), HS_OK);
    float *full = malloc(sizeof(float) * n), *one = malloc(sizeof(float) * n);
    ck_assert_int_eq(model_grad_full_at(m, P, full, ws, x, y, B, &batch_loss), HS_OK);
    ck_assert_double_eq_tol(loss, batch_loss, 1e-12);
    double *Pd = to_double(P, n);
    for (int j = 0; j < B; j++) {
        const float *g = per + (size_t)j * n;
        /* heads untouched */
        for (size_t i = blocks; i < n; i++) ck_assert(g[i] == sentinel);
        /* a batch-1 pass on sample j */
        double loss_j;
        ck_assert_int_eq(model_grad_full_at(m, P, one, ws, x + (size_t)j * features, y + j, 1, &loss_j), HS_OK);
        double worst = worst_ratio(g, one, blocks, 1e-6, 1e-4);
        ck_assert_msg(worst <= 1, "sample %d differs from its batch-1 gradient (ratio %g)", j, worst);
        /* central differences of sample j's own loss */
        double *xj = to_double(x + (size_t)j * features, (size_t)features);
        RefModel rm = {.spec = spec, .model = m, .P = Pd, .x = xj, .y = y + j, .B = 1};
        for (size_t i = 0; i < blocks; i++) {
            double num = fd_at(Pd, i, ref_model_loss, &rm);
            ck_assert_msg(fabs(num - g[i]) <= 2e-4 + 2e-3 * fabs(num), "sample %d param %zu: %.7g vs numeric %.7g",
                          j, i, (double)g[i], num);
        }
        free(xj);
    }
    /* the mean of the per-sample gradients is the batch gradient */
    for (size_t i = 0; i < blocks; i++) {
        double mean = 0;
        for (int j = 0; j < B; j++) mean += per[(size_t)j * n + i];
        mean /= B;
        ck_assert_msg(fabs(mean - full[i]) <= 1e-6 + 1e-4 * fabs(full[i]), "mean %zu: %g vs %g", i, mean, full[i]);
    }
    /* clipped mean: half the smallest norm clips every sample to exactly that norm */
    double smallest = INFINITY;
    for (int j = 0; j < B; j++) {
        double s2 = 0;
        for (size_t i = 0; i < blocks; i++) s2 += (double)per[(size_t)j * n + i] * per[(size_t)j * n + i];
        if (sqrt(s2) < smallest) smallest = sqrt(s2);
    }
    float *clipped = malloc(sizeof(float) * n), *scratch = malloc(sizeof(float) * n);
    double thresholds[] = {INFINITY, smallest / 2};
    for (int t = 0; t < 2; t++) {
        int n_clipped = -1;
        double loss_c;
        ck_assert_int_eq(model_grad_clipped_at(m, P, clipped, scratch, ws, x, y, B, thresholds[t], &loss_c,
                                               &n_clipped), HS_OK);
        ck_assert(loss_c == loss);
        ck_assert_int_eq(n_clipped, t == 0 ? 0 : B);
        for (size_t i = 0; i < blocks; i++) {
            double want = 0;
            for (int j = 0; j < B; j++) {
                const float *g = per + (size_t)j * n;
                double s2 = 0;
                for (size_t k = 0; k < blocks; k++) s2 += (double)g[k] * g[k];
                double f = sqrt(s2) > thresholds[t] ? thresholds[t] / sqrt(s2) : 1.0;
                want += f * g[i] / B;
            }
            ck_assert_msg(fabs(want - clipped[i]) <= 1e-6 + 1e-4 * fabs(want), "clipped %zu: %g vs %g", i,
                          (double)clipped[i], want);
        }
        if (t == 1) { /* a mean of vectors of norm C has norm at most C */
            double s2 = 0;
            for (size_t i = 0; i < blocks; i++) s2 += (double)clipped[i] * clipped[i];
            ck_assert(sqrt(s2) <= thresholds[t] * (1 + 1e-5));
        }
    }
    ck_assert_int_eq(model_grad_clipped_at(m, P, clipped, scratch, ws, x, y, B, 0, NULL, NULL), HS_E_INPUT);
    ck_assert_int_eq(model_grad_samples_at(m, P, per, n - 1, ws, x, y, B, NULL), HS_E_INPUT);
    (void)L;
    free(per), free(full), free(one), free(clipped), free(scratch), free(Pd), free(x), free(y);
    model_workspace_free(ws);
    model_free(m);
    gsl_rng_free(r);
}

START_TEST(test_per_sample_gradients)
{
    const int sizes[] = {6, 7, 5, 3};
    ModelSpec s = mlp_spec(4, sizes, 4);
    check_per_sample(&s, 41);
    ModelSpec c = cnn_spec(1, 8, 8, 2, 3, 3, 5, 4, 3);
    check_per_sample(&c, 42);
    ModelSpec rgb = cnn_spec(2, 4, 6, 3, 2, 1, 4, 3, 2);
    check_per_sample(&rgb, 43);
}
END_TEST

START_TEST(test_clip_norm_and_gaussian)
{
    float v[2] = {3, 4};
    ck_assert_double_eq(vec_clip_norm(v, 2, 10), 5);
    ck_assert_float_eq(v[0], 3);
    ck_assert_double_eq(vec_clip_norm(v, 2, 1), 5);
    ck_assert_float_eq_tol(v[0], 0.6f, 1e-7);
    ck_assert_float_eq_tol(v[1], 0.8f, 1e-7);
    ck_assert_double_eq(vec_clip_norm(v, 2, INFINITY), sqrt((double)v[0] * v[0] + (double)v[1] * v[1]));
    /* noise: mean 0, the asked std, the same draws from the same seed */
    enum { N = 20000 };
    float *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
    gsl_rng *r1 = test_rng(5), *r2 = test_rng(5);
    vec_add_gaussian(a, 0.5, N, r1);
    vec_add_gaussian(b, 0.5, N, r2);
    ck_assert_mem_eq(a, b, sizeof(float) * N);
    double sum = 0, s2 = 0;
    for (int i = 0; i < N; i++) sum += a[i], s2 += (double)a[i] * a[i];
    ck_assert_double_le(fabs(sum / N), 0.02);
    ck_assert_double_eq_tol(sqrt(s2 / N), 0.5, 0.01);
    vec_add_gaussian(b, 0, N, r2); /* std 0 draws nothing and adds nothing */
    ck_assert_mem_eq(a, b, sizeof(float) * N);
    free(a), free(b);
    gsl_rng_free(r1), gsl_rng_free(r2);
}
END_TEST

START_TEST(test_mlp_gradients_end_to_end)
{
    const int sizes[] = {6, 7, 5, 3};
    ModelSpec s = mlp_spec(4, sizes, 4);
    check_model_end_to_end(&s, 21);
    const int two[] = {5, 4};
    s = mlp_spec(2, two, 3); /* one block: no splits */
    check_model_end_to_end(&s, 22);
    const int deep[] = {4, 6, 6, 5, 5, 3};
    s = mlp_spec(6, deep, 2);
    check_model_end_to_end(&s, 23);
}
END_TEST

START_TEST(test_cnn_gradients_end_to_end)
{
    ModelSpec s = cnn_spec(1, 8, 8, 2, 3, 3, 5, 4, 3);
    check_model_end_to_end(&s, 31);
    s = cnn_spec(2, 7, 6, 3, 2, 5, 4, 3, 2); /* odd sizes: 7x6 -> 3x3 -> 1x1 */
    check_model_end_to_end(&s, 32);
    s = cnn_spec(1, 4, 5, 2, 2, 1, 3, 2, 2); /* 1x1 kernels */
    check_model_end_to_end(&s, 33);
}
END_TEST

/* ------------------------------------------------------------------ profile and layout */

static void check_profile_matches(const ModelSpec *s)
{
    gsl_rng *r = test_rng(5);
    Model *m;
    ck_assert_int_eq(model_create(s, r, &m), HS_OK);
    const ModelProfile *p = model_get_profile(m);
    ModelProfile q;
    ck_assert_int_eq(model_profile(s, &q), HS_OK);
    ck_assert_mem_eq(p, &q, sizeof q);
    const int L = model_n_blocks(m);
    ck_assert_int_eq(L, p->n_blocks);
    size_t expect = 0, total = 0;
    for (int b = 0; b < L; b++) {
        size_t off, count;
        model_block_range(m, b, &off, &count);
        ck_assert_uint_eq(off, expect);
        ck_assert_double_eq((double)count, p->params[b]);
        expect += count;
    }
    ck_assert_double_eq((double)expect, p->total_params);
    for (int k = 1; k < L; k++) {
        size_t off, count;
        model_aux_range(m, k, &off, &count);
        ck_assert_uint_eq(off, expect);
        ck_assert_double_eq((double)count, p->aux_params[k]);
        ck_assert_double_eq((double)model_split_floats(m, k), p->act_floats[k - 1]);
        expect += count;
        total += count;
    }
    ck_assert_uint_eq(model_param_count(m), expect);
    /* FLOPs from the shapes the model runs: linear 2*in*out + out (+ out for ReLU), conv
     * 2*C*K*K*OC*H*W + OC*H*W bias + ReLU + pool reads; backward adds both gradients. */
    if (s->arch == MODEL_ARCH_MLP) {
        for (int b = 0; b < L; b++) {
            double in = s->sizes[b], out = s->sizes[b + 1], relu = b < L - 1 ? out : 0;
            ck_assert_double_eq(p->fwd_flops[b], 2 * in * out + out + relu);
            ck_assert_double_eq(p->bwd_flops[b], 4 * in * out + out + relu);
        }
    } else if (s->arch == MODEL_ARCH_CNN) {
        int c = s->in_channels, h = s->in_height, w = s->in_width, k = s->kernel;
        for (int b = 0; b < 2; b++) {
            double oc = s->conv_channels[b], macs = (double)c * k * k * oc * h * w, e = oc * h * w;
            ck_assert_double_eq(p->fwd_flops[b], 2 * macs + 3 * e);
            ck_assert_double_eq(p->bwd_flops[b], 4 * macs + 3 * e);
            c = (int)oc, h /= 2, w /= 2;
        }
        double flat = (double)c * h * w;
        ck_assert_double_eq(p->fwd_flops[2], 2 * flat * s->hidden + 2.0 * s->hidden);
        ck_assert_double_eq(p->fwd_flops[3], 2.0 * s->hidden * s->classes + s->classes);
    }
    (void)total;
    model_free(m);
    gsl_rng_free(r);
}

START_TEST(test_profile_matches_layout)
{
    const int sizes[] = {784, 256, 128, 10};
    ModelSpec s = mlp_spec(4, sizes, 64);
    s.in_channels = 1, s.in_height = s.in_width = 28;
    check_profile_matches(&s);
    ck_assert_int_eq(s.sizes[0], 784);
    s = cnn_spec(1, 28, 28, 32, 64, 5, 128, 10, 64);
    check_profile_matches(&s);
    s = cnn_spec(3, 9, 7, 4, 6, 3, 16, 5, 8);
    check_profile_matches(&s);
    /* the default MLP's size is what docs/models.md quotes: 235,146 parameters */
    Model *m;
    gsl_rng *r = test_rng(1);
    s = mlp_spec(4, sizes, 64);
    ck_assert_int_eq(model_create(&s, r, &m), HS_OK);
    size_t off, count;
    model_aux_range(m, 1, &off, &count);
    ck_assert_uint_eq(off, 235146);
    ck_assert_uint_eq(count, 2570);
    model_aux_range(m, 0, &off, &count);
    ck_assert_uint_eq(count, 0);
    model_aux_range(m, 3, &off, &count);
    ck_assert_uint_eq(count, 0);
    model_block_range(m, 3, &off, &count);
    ck_assert_uint_eq(count, 0);
    ck_assert_int_eq(model_split_floats(m, 0), 0);
    model_free(m);
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_init_is_he_uniform_and_deterministic)
{
    const int sizes[] = {100, 50, 10};
    ModelSpec s = mlp_spec(3, sizes, 4);
    gsl_rng *r1 = test_rng(3), *r2 = test_rng(3), *r3 = test_rng(4);
    Model *a, *b, *c;
    ck_assert_int_eq(model_create(&s, r1, &a), HS_OK);
    ck_assert_int_eq(model_create(&s, r2, &b), HS_OK);
    ck_assert_int_eq(model_create(&s, r3, &c), HS_OK);
    size_t n = model_param_count(a);
    ck_assert_mem_eq(model_params(a), model_params(b), n * sizeof(float));
    ck_assert(memcmp(model_params(a), model_params(c), n * sizeof(float)) != 0);
    const float *p = model_params(a);
    double bound0 = sqrt(6.0 / 100), bound1 = 1 / sqrt(50.0), max0 = 0, max1 = 0;
    for (int i = 0; i < 5000; i++) max0 = fmax(max0, fabs(p[i]));
    for (int i = 0; i < 50; i++) ck_assert(p[5000 + i] == 0.0f);
    for (int i = 0; i < 500; i++) max1 = fmax(max1, fabs(p[5050 + i]));
    ck_assert(max0 <= bound0 && max0 > 0.9 * bound0);
    ck_assert(max1 <= bound1 && max1 > 0.8 * bound1);
    for (size_t i = 0; i < n; i++) ck_assert(model_grads(a)[i] == 0.0f);
    ck_assert_int_eq(model_copy_params(c, a), HS_OK);
    ck_assert_mem_eq(model_params(a), model_params(c), n * sizeof(float));
    model_free(a), model_free(b), model_free(c);
    model_free(NULL);
    model_workspace_free(NULL);
    optim_free(NULL);
    gsl_rng_free(r1), gsl_rng_free(r2), gsl_rng_free(r3);
}
END_TEST

START_TEST(test_model_errors)
{
    gsl_rng *r = test_rng(6);
    Model *m = (Model *)1;
    const int bad_last[] = {4, 3, 5};
    ModelSpec s = mlp_spec(3, bad_last, 2);
    s.classes = 3; /* last size 5 != classes */
    ck_assert_int_eq(model_create(&s, r, &m), HS_E_INPUT);
    ck_assert_ptr_null(m);
    const int one[] = {4};
    s = mlp_spec(1, one, 2);
    ck_assert_int_eq(model_create(&s, r, &m), HS_E_INPUT);
    s = cnn_spec(1, 8, 8, 2, 2, 4, 3, 2, 2); /* even kernel */
    ck_assert_int_eq(model_create(&s, r, &m), HS_E_INPUT);
    s = cnn_spec(1, 3, 8, 2, 2, 3, 3, 2, 2); /* too small */
    ck_assert_int_eq(model_create(&s, r, &m), HS_E_INPUT);
    ModelWorkspace *ws = (ModelWorkspace *)1;
    s.batch = 0;
    ck_assert_int_eq(model_workspace_create(&s, &ws), HS_E_INPUT);
    ck_assert_ptr_null(ws);

    const int sizes[] = {3, 4, 2};
    s = mlp_spec(3, sizes, 2);
    ck_assert_int_eq(model_create(&s, r, &m), HS_OK);
    ck_assert_int_eq(model_workspace_create(&s, &ws), HS_OK);
    float x[9] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f}, act[8];
    int y[3] = {0, 1, 1};
    double loss = -1;
    ck_assert_int_eq(model_grad_full(m, ws, x, y, 0, &loss), HS_E_INPUT);
    ck_assert_int_eq(model_grad_full(m, ws, x, y, 3, &loss), HS_E_INPUT); /* > batch */
    ck_assert_int_eq(model_grad_bottom(m, ws, 0, x, y, 2, &loss, act), HS_E_INPUT);
    ck_assert_int_eq(model_grad_bottom(m, ws, 2, x, y, 2, &loss, act), HS_E_INPUT);
    ck_assert_int_eq(model_grad_top(m, ws, 2, act, y, 2, &loss), HS_E_INPUT);
    int bad_y[2] = {0, 2};
    ck_assert_int_eq(model_grad_full(m, ws, x, bad_y, 2, &loss), HS_E_INPUT);
    bad_y[1] = -1;
    ck_assert_int_eq(model_grad_top(m, ws, 1, act, bad_y, 2, &loss), HS_E_INPUT);
    ck_assert_ptr_null(model_forward(m, ws, x, 3));
    /* a workspace of another shape */
    const int other[] = {3, 5, 2};
    ModelSpec s2 = mlp_spec(3, other, 2);
    ModelWorkspace *ws2;
    ck_assert_int_eq(model_workspace_create(&s2, &ws2), HS_OK);
    ck_assert_int_eq(model_grad_full(m, ws2, x, y, 2, &loss), HS_E_INPUT);
    Model *m2;
    ck_assert_int_eq(model_create(&s2, r, &m2), HS_OK);
    ck_assert_int_eq(model_copy_params(m2, m), HS_E_INPUT);
    /* divergence */
    ck_assert_int_eq(model_grad_full(m, ws, x, y, 2, &loss), HS_OK);
    ck_assert(isfinite(loss));
    model_params(m)[0] = NAN;
    ck_assert_int_eq(model_grad_full(m, ws, x, y, 2, &loss), HS_E_DIVERGED);
    ck_assert_int_eq(model_grad_bottom(m, ws, 1, x, y, 2, &loss, act), HS_E_DIVERGED);
    model_params(m)[0] = INFINITY;
    ck_assert_int_eq(model_grad_full(m, ws, x, y, 2, &loss), HS_E_DIVERGED);
    float huge[8];
    for (int i = 0; i < 8; i++) huge[i] = NAN;
    ck_assert_int_eq(model_grad_top(m, ws, 1, huge, y, 2, &loss), HS_E_DIVERGED);
    model_free(m), model_free(m2);
    model_workspace_free(ws), model_workspace_free(ws2);
    gsl_rng_free(r);
}
END_TEST

/* ------------------------------------------------------------------ vectors */

START_TEST(test_vector_helpers)
{
    float a[3] = {1, 2, 3}, b[3] = {4, 5, 6}, c[3] = {-1, 0, 1}, out[3];
    const float *vs[3] = {a, b, c};
    double w[3] = {1, 2, 1};
    ck_assert_int_eq(vec_weighted_average(out, vs, w, 3, 3), HS_OK);
    ck_assert_float_eq(out[0], (1 + 8 - 1) / 4.0f);
    ck_assert_float_eq(out[1], (2 + 10 + 0) / 4.0f);
    ck_assert_float_eq(out[2], (3 + 12 + 1) / 4.0f);
    /* in place, aliasing the first input */
    ck_assert_int_eq(vec_weighted_average(a, vs, w, 3, 3), HS_OK);
    ck_assert_mem_eq(a, out, sizeof out);
    double zero[3] = {0, 0, 0};
    ck_assert_int_eq(vec_weighted_average(out, vs, zero, 3, 3), HS_E_INPUT);
    ck_assert_int_eq(vec_weighted_average(out, vs, w, 0, 3), HS_E_INPUT);
    /* more vectors than the cached-weight path holds: same values as summing by hand */
    enum { K = 70 };
    float store[K][2];
    const float *many[K];
    double ww[K], s0 = 0, s1 = 0, total = 0;
    for (int k = 0; k < K; k++) {
        store[k][0] = (float)k;
        store[k][1] = (float)(k * k) / 7.0f;
        many[k] = store[k];
        ww[k] = 1 + k % 3;
        total += ww[k];
    }
    for (int k = 0; k < K; k++) s0 += ww[k] / total * store[k][0], s1 += ww[k] / total * store[k][1];
    ck_assert_int_eq(vec_weighted_average(out, many, ww, K, 2), HS_OK);
    ck_assert_float_eq(out[0], (float)s0);
    ck_assert_float_eq(out[1], (float)s1);
    vec_axpy(b, 0.5f, c, 3);
    ck_assert_float_eq(b[0], 3.5f);
    ck_assert_float_eq(b[2], 6.5f);
    vec_scale(b, 2.0f, 3);
    ck_assert_float_eq(b[1], 10.0f);
}
END_TEST

/* ------------------------------------------------------------------ optimisers */

static OptimSpec optim_spec(OptimKind kind, double lr)
{
    OptimSpec s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.lr = lr;
    s.momentum = 0.9;
    s.beta1 = 0.9;
    s.beta2 = 0.999;
    s.eps = 1e-8;
    s.step_gamma = 0.5;
    s.step_every = 2;
    return s;
}

START_TEST(test_optim_hand_examples)
{
    Optim *o;
    float p[2], g[2] = {0.5f, 1.0f};
    /* sgd, with L2 */
    OptimSpec s = optim_spec(OPTIM_SGD, 0.1);
    ck_assert_int_eq(optim_create(&s, 2, &o), HS_OK);
    p[0] = 1, p[1] = 2;
    optim_step(o, p, g, 0, 2, 0.1);
    ck_assert_float_eq_tol(p[0], 0.95f, 1e-7f);
    ck_assert_float_eq_tol(p[1], 1.9f, 1e-7f);
    optim_free(o);
    s.weight_decay = 0.1;
    ck_assert_int_eq(optim_create(&s, 2, &o), HS_OK);
    p[0] = 1;
    optim_step(o, p, g, 0, 1, 0.1);
    ck_assert_float_eq_tol(p[0], 0.94f, 1e-7f);
    optim_free(o);
    /* momentum: v = .9 v + g */
    s = optim_spec(OPTIM_MOMENTUM, 0.1);
    ck_assert_int_eq(optim_create(&s, 1, &o), HS_OK);
    p[0] = 1, g[0] = 1;
    optim_step(o, p, g, 0, 1, 0.1);
    ck_assert_float_eq_tol(p[0], 0.9f, 1e-7f);
    optim_step(o, p, g, 0, 1, 0.1);
    ck_assert_float_eq_tol(p[0], 0.71f, 1e-6f);
    optim_reset(o);
    p[0] = 1;
    optim_step(o, p, g, 0, 1, 0.1);
    ck_assert_float_eq_tol(p[0], 0.9f, 1e-7f);
    optim_free(o);
    s.nesterov = 1; /* d = g + .9 v */
    ck_assert_int_eq(optim_create(&s, 1, &o), HS_OK);
    p[0] = 1;
    optim_step(o, p, g, 0, 1, 0.1);
    ck_assert_float_eq_tol(p[0], 0.81f, 1e-6f);
    optim_step(o, p, g, 0, 1, 0.1);
    ck_assert_float_eq_tol(p[0], 0.539f, 1e-6f);
    optim_free(o);
    /* adam and adamw, two steps, against the formula in double */
    for (int kind = OPTIM_ADAM; kind <= OPTIM_ADAMW; kind++) {
        s = optim_spec((OptimKind)kind, 0.01);
        s.weight_decay = 0.1;
        ck_assert_int_eq(optim_create(&s, 1, &o), HS_OK);
        double pd = 1, m = 0, v = 0, gs[2] = {0.5, -0.25};
        p[0] = 1;
        for (int t = 1; t <= 2; t++) {
            g[0] = (float)gs[t - 1];
            optim_step(o, p, g, 0, 1, 0.01);
            double gi = gs[t - 1] + (kind == OPTIM_ADAM ? 0.1 * pd : 0);
            if (kind == OPTIM_ADAMW) pd *= 1 - 0.01 * 0.1;
            m = 0.9 * m + 0.1 * gi;
            v = 0.999 * v + 0.001 * gi * gi;
            pd -= 0.01 * (m / (1 - pow(0.9, t))) / (sqrt(v / (1 - pow(0.999, t))) + 1e-8);
            ck_assert_double_eq_tol(p[0], pd, 1e-6);
        }
        optim_free(o);
    }
}
END_TEST

START_TEST(test_optim_ranges)
{
    /* Only [offset, offset+count) moves; Adam's bias correction counts steps per parameter. */
    for (int kind = OPTIM_SGD; kind <= OPTIM_ADAMW; kind++) {
        OptimSpec s = optim_spec((OptimKind)kind, 0.05);
        Optim *o, *fresh;
        ck_assert_int_eq(optim_create(&s, 10, &o), HS_OK);
        ck_assert_int_eq(optim_create(&s, 10, &fresh), HS_OK);
        ck_assert_uint_eq(optim_size(o), 10);
        float p[10], q[10], g[10];
        for (int i = 0; i < 10; i++) p[i] = q[i] = (float)i, g[i] = 0.1f * (i + 1);
        optim_step(o, p, g, 2, 3, 0.05);
        optim_step(o, p, g, 2, 3, 0.05);
        for (int i = 0; i < 10; i++)
            if (i < 2 || i >= 5) ck_assert(p[i] == (float)i);
        optim_step(o, p, g, 7, 100, 0.05); /* clipped at the end */
        optim_step(fresh, q, g, 7, 3, 0.05);
        ck_assert_mem_eq(p + 7, q + 7, 3 * sizeof(float));
        ck_assert(p[5] == 5.0f && p[6] == 6.0f);
        optim_step(o, p, g, 10, 5, 0.05); /* past the end: nothing */
        optim_free(o), optim_free(fresh);
    }
    OptimSpec bad = optim_spec(OPTIM_MOMENTUM, 0.1);
    Optim *o = (Optim *)1;
    bad.momentum = 1.0;
    ck_assert_int_eq(optim_create(&bad, 4, &o), HS_E_INPUT);
    ck_assert_ptr_null(o);
    bad = optim_spec(OPTIM_ADAM, 0.1);
    bad.eps = 0;
    ck_assert_int_eq(optim_create(&bad, 4, &o), HS_E_INPUT);
    bad = optim_spec(OPTIM_SGD, -1);
    ck_assert_int_eq(optim_create(&bad, 4, &o), HS_E_INPUT);
}
END_TEST

/* The naive twin of Adam's run-length step counts: a counter per parameter, the update
 * written out per element, as optim.c did before its counts became runs. */
static void adam_naive_step(const OptimSpec *s, float *p, const float *g, float *m, float *v, uint32_t *t,
                            size_t begin, size_t end, double lr)
{
    const float b1 = (float)s->beta1, b2 = (float)s->beta2, eps = (float)s->eps;
    const float one_b1 = (float)(1.0 - s->beta1), one_b2 = (float)(1.0 - s->beta2);
    const float l2 = s->kind == OPTIM_ADAM ? (float)s->weight_decay : 0.0f;
    const float decay = s->kind == OPTIM_ADAMW ? (float)(1.0 - lr * s->weight_decay) : 1.0f;
    for (size_t i = begin; i < end; i++) {
        uint32_t ti = ++t[i];
        float step_size = (float)(lr / (1.0 - pow(s->beta1, ti)));
        float inv_sqrt_bc2 = (float)(1.0 / sqrt(1.0 - pow(s->beta2, ti)));
        float gi = g[i] + l2 * p[i];
        m[i] = b1 * m[i] + one_b1 * gi;
        v[i] = b2 * v[i] + one_b2 * gi * gi;
        p[i] = p[i] * decay - step_size * m[i] / (sqrtf(v[i]) * inv_sqrt_bc2 + eps);
    }
}

START_TEST(test_optim_adam_runs_match_naive)
{
    /* random ranges (overlapping, nested, touching, clipped, empty) on 97 parameters:
     * the run-length counts give the same bits as a counter per parameter */
    enum { N = 97 };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    for (int kind = OPTIM_ADAM; kind <= OPTIM_ADAMW; kind++) {
        OptimSpec s = optim_spec((OptimKind)kind, 0.01);
        s.weight_decay = 0.05;
        Optim *o;
        ck_assert_int_eq(optim_create(&s, N, &o), HS_OK);
        float p[N], q[N], g[N], m[N] = {0}, v[N] = {0};
        uint32_t t[N] = {0};
        for (int i = 0; i < N; i++) p[i] = q[i] = (float)gsl_ran_gaussian(rng, 1.0);
        for (int step = 0; step < 400; step++) {
            for (int i = 0; i < N; i++) g[i] = (float)gsl_ran_gaussian(rng, 1.0);
            size_t a = gsl_rng_uniform_int(rng, N + 3), count = gsl_rng_uniform_int(rng, N + 3);
            if (step % 50 == 49) a = 0, count = N; /* now and then the whole vector */
            ck_assert_int_eq(optim_step(o, p, g, a, count, 0.01), HS_OK);
            if (a < N) adam_naive_step(&s, q, g, m, v, t, a, a + count > N ? N : a + count, 0.01);
            ck_assert_mem_eq(p, q, sizeof p);
        }
        /* after the mixing, the counts still take bytes, not 4 per parameter */
        ck_assert_uint_lt(optim_state_size(o), 2 * N * sizeof(float) + 4096);
        optim_reset(o);
        memset(m, 0, sizeof m), memset(v, 0, sizeof v), memset(t, 0, sizeof t);
        ck_assert_int_eq(optim_step(o, p, g, 3, 10, 0.01), HS_OK);
        adam_naive_step(&s, q, g, m, v, t, 3, 13, 0.01);
        ck_assert_mem_eq(p, q, sizeof p);
        optim_free(o);
    }
    gsl_rng_free(rng);
}
END_TEST

START_TEST(test_schedules)
{
    OptimSpec s = optim_spec(OPTIM_SGD, 0.1);
    for (int r = 0; r < 5; r++) ck_assert_double_eq(optim_schedule_lr(&s, r, 5), 0.1);
    s.schedule = SCHED_STEP; /* gamma .5 every 2 */
    const double step[] = {0.1, 0.1, 0.05, 0.05, 0.025, 0.025};
    for (int r = 0; r < 6; r++) ck_assert_double_eq_tol(optim_schedule_lr(&s, r, 6), step[r], 1e-15);
    s.schedule = SCHED_COSINE;
    ck_assert_double_eq_tol(optim_schedule_lr(&s, 0, 10), 0.1, 1e-15);
    ck_assert_double_eq_tol(optim_schedule_lr(&s, 5, 10), 0.05, 1e-15);
    ck_assert_double_eq_tol(optim_schedule_lr(&s, 9, 10), 0.05 * (1 + cos(3.14159265358979323846 * 0.9)), 1e-15);
    ck_assert(optim_schedule_lr(&s, 9, 10) > 0);
    ck_assert_double_eq_tol(optim_schedule_lr(&s, 12, 10), 0.0, 1e-15);
    ck_assert_double_eq(optim_schedule_lr(&s, 3, 0), 0.1); /* open-ended: constant */
    s.warmup_rounds = 4; /* lr/4, 2lr/4, 3lr/4, lr, then cosine over 6 rounds */
    for (int r = 0; r < 4; r++) ck_assert_double_eq_tol(optim_schedule_lr(&s, r, 10), 0.1 * (r + 1) / 4, 1e-15);
    ck_assert_double_eq_tol(optim_schedule_lr(&s, 4, 10), 0.1, 1e-15);
    ck_assert_double_eq_tol(optim_schedule_lr(&s, 7, 10), 0.05, 1e-15);
    s.schedule = SCHED_STEP;
    ck_assert_double_eq_tol(optim_schedule_lr(&s, 6, 10), 0.05, 1e-15);
    ck_assert_double_eq_tol(optim_schedule_lr(&s, -3, 10), 0.025, 1e-15);
}
END_TEST

/* ------------------------------------------------------------------ training behaviour */

static Dataset *mixture(int features, int classes, int n, double separation, unsigned long seed)
{
    DataSpec d;
    memset(&d, 0, sizeof d);
    d.dataset = DATA_SYNTHETIC;
    d.features = features;
    d.classes = classes;
    d.train_samples = n;
    d.test_samples = n / 4;
    d.separation = separation;
    gsl_rng *r = test_rng(seed);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_load(&d, r, &ds, &diag), HS_OK);
    gsl_rng_free(r);
    return ds;
}

/* Trains m for `epochs` over ds in order (batches of ws's size) and returns the params. */
static void train_epochs(Model *m, ModelWorkspace *ws, Optim *o, const Dataset *ds, int epochs, double lr)
{
    int B = model_workspace_batch(ws);
    for (int e = 0; e < epochs; e++)
        for (int start = 0; start + B <= ds->n_train; start += B) {
            int idx[64];
            for (int i = 0; i < B; i++) idx[i] = (start + i * 7919) % ds->n_train;
            dataset_gather(ds, 0, idx, B, model_workspace_x(ws), model_workspace_y(ws));
            double loss;
            ck_assert_int_eq(model_grad_full(m, ws, model_workspace_x(ws), model_workspace_y(ws), B, &loss), HS_OK);
            optim_step(o, model_params(m), model_grads(m), 0, model_param_count(m), lr);
        }
}

START_TEST(test_training_learns_and_is_deterministic)
{
    Dataset *ds = mixture(16, 4, 2000, 8.0, 41);
    const int sizes[] = {16, 32, 4};
    ModelSpec s = mlp_spec(3, sizes, 32);
    OptimSpec os = optim_spec(OPTIM_MOMENTUM, 0.05);
    Model *a, *b;
    ModelWorkspace *wa, *wb;
    Optim *oa, *ob;
    gsl_rng *r1 = test_rng(9), *r2 = test_rng(9);
    ck_assert_int_eq(model_create(&s, r1, &a), HS_OK);
    ck_assert_int_eq(model_create(&s, r2, &b), HS_OK);
    ck_assert_int_eq(model_workspace_create(&s, &wa), HS_OK);
    ck_assert_int_eq(model_workspace_create(&s, &wb), HS_OK);
    ck_assert_int_eq(optim_create(&os, model_param_count(a), &oa), HS_OK);
    ck_assert_int_eq(optim_create(&os, model_param_count(b), &ob), HS_OK);
    double loss0, acc0, loss1, acc1;
    ck_assert_int_eq(model_evaluate(a, wa, ds, 1, NULL, 0, &loss0, &acc0), HS_OK);
    train_epochs(a, wa, oa, ds, 3, 0.05);
    train_epochs(b, wb, ob, ds, 3, 0.05);
    ck_assert_mem_eq(model_params(a), model_params(b), model_param_count(a) * sizeof(float));
    ck_assert_int_eq(model_evaluate(a, wa, ds, 1, NULL, 0, &loss1, &acc1), HS_OK);
    ck_assert_msg(acc1 > 0.9 && loss1 < loss0, "accuracy %.3f -> %.3f, loss %.3f -> %.3f", acc0, acc1, loss0,
                  loss1);
    /* evaluation by index list = evaluation of the same rows in place; batch size does
     * not change the figures beyond rounding */
    int n = 77, *idx = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) idx[i] = i;
    double l_idx, a_idx, l_seq, a_seq;
    ck_assert_int_eq(model_evaluate(a, wa, ds, 1, idx, n, &l_idx, &a_idx), HS_OK);
    ck_assert_int_eq(model_evaluate(a, wa, ds, 1, NULL, n, &l_seq, &a_seq), HS_OK);
    ck_assert_double_eq_tol(l_idx, l_seq, 1e-6);
    ck_assert_double_eq(a_idx, a_seq);
    ck_assert_int_eq(model_evaluate(a, wa, ds, 1, NULL, ds->n_test + 1, &l_seq, &a_seq), HS_E_INPUT);
    ck_assert_int_eq(model_evaluate(a, wa, ds, 0, NULL, 100, &l_seq, &a_seq), HS_OK);
    /* the evaluation in pieces (as threads take it: 77 samples = batches of 32, 32, 13,
     * pieces [0,1) and [1,3) on two workspaces) adds up to bitwise the same figures */
    double batch_loss[3], l_pieces, a_pieces;
    int batch_correct[3];
    ck_assert_int_eq(model_evaluate_batches(a, wb, ds, 1, idx, n, 1, 2, batch_loss + 1, batch_correct + 1), HS_OK);
    ck_assert_int_eq(model_evaluate_batches(a, wa, ds, 1, idx, n, 0, 1, batch_loss, batch_correct), HS_OK);
    model_evaluate_sum(batch_loss, batch_correct, n, 32, &l_pieces, &a_pieces);
    ck_assert(l_pieces == l_idx && a_pieces == a_idx);
    ck_assert_int_eq(model_evaluate_batches(a, wa, ds, 1, idx, n, 2, 2, batch_loss, batch_correct), HS_E_INPUT);
    /* forward logits agree with evaluate's accuracy on one batch */
    dataset_gather(ds, 1, NULL, 32, model_workspace_x(wa), model_workspace_y(wa));
    const float *logits = model_forward(a, wa, model_workspace_x(wa), 32);
    ck_assert_ptr_nonnull(logits);
    int correct;
    softmax_crossentropy(NULL, logits, model_workspace_y(wa), 32, 4, &correct);
    double l32, a32;
    ck_assert_int_eq(model_evaluate(a, wb, ds, 1, NULL, 32, &l32, &a32), HS_OK);
    ck_assert_double_eq(a32, correct / 32.0);
    free(idx);
    model_free(a), model_free(b);
    model_workspace_free(wa), model_workspace_free(wb);
    optim_free(oa), optim_free(ob);
    gsl_rng_free(r1), gsl_rng_free(r2);
    dataset_free(ds);
}
END_TEST

START_TEST(test_split_training_learns)
{
    /* Local-loss split training of a CNN on a tiny image mixture: the bottom learns from its
     * head, the top from the activations it is sent; both halves end above chance. */
    Dataset *ds = mixture(64, 3, 600, 12.0, 43);
    ds->channels = 1, ds->height = 8, ds->width = 8; /* view the 64 features as an 8x8 image */
    ModelSpec s = cnn_spec(1, 8, 8, 4, 4, 3, 16, 3, 20);
    OptimSpec os = optim_spec(OPTIM_MOMENTUM, 0.05);
    gsl_rng *r = test_rng(10);
    Model *m;
    ModelWorkspace *ws, *ws_top;
    Optim *o;
    ck_assert_int_eq(model_create(&s, r, &m), HS_OK);
    ck_assert_int_eq(model_workspace_create(&s, &ws), HS_OK);
    ck_assert_int_eq(model_workspace_create(&s, &ws_top), HS_OK);
    ck_assert_int_eq(optim_create(&os, model_param_count(m), &o), HS_OK);
    const int split = 2, B = 20;
    float *act = malloc(sizeof(float) * B * model_split_floats(m, split));
    /* the three ranges each side steps: blocks 1..split, head split, blocks split+1..L */
    size_t off, count, bottom_count = 0, top_off, top_count = 0, aux_off, aux_count;
    for (int b = 0; b < model_n_blocks(m); b++) {
        model_block_range(m, b, &off, &count);
        if (b < split) bottom_count += count;
        else top_count += count;
    }
    model_block_range(m, split, &top_off, &count);
    model_aux_range(m, split, &aux_off, &aux_count);
    for (int e = 0; e < 4; e++)
        for (int start = 0; start + B <= ds->n_train; start += B) {
            int idx[20];
            for (int i = 0; i < B; i++) idx[i] = start + i;
            dataset_gather(ds, 0, idx, B, model_workspace_x(ws), model_workspace_y(ws));
            double lb, lt;
            ck_assert_int_eq(model_grad_bottom(m, ws, split, model_workspace_x(ws), model_workspace_y(ws), B, &lb, act),
                             HS_OK);
            ck_assert_int_eq(model_grad_top(m, ws_top, split, act, model_workspace_y(ws), B, &lt), HS_OK);
            optim_step(o, model_params(m), model_grads(m), 0, bottom_count, 0.05);
            optim_step(o, model_params(m), model_grads(m), aux_off, aux_count, 0.05);
            optim_step(o, model_params(m), model_grads(m), top_off, top_count, 0.05);
        }
    double loss, acc;
    ck_assert_int_eq(model_evaluate(m, ws, ds, 1, NULL, 0, &loss, &acc), HS_OK);
    ck_assert_msg(acc > 0.8, "split-trained accuracy %.3f", acc);
    free(act);
    optim_free(o);
    model_free(m);
    model_workspace_free(ws), model_workspace_free(ws_top);
    gsl_rng_free(r);
    dataset_free(ds);
}
END_TEST

/* ------------------------------------------------------------------ residual networks */

static void ref_conv_strided(double *out, const double *in, const double *w, int B, int C, int H, int W, int OC,
                             int K, int S)
{
    const int p = K / 2, OH = (H + 2 * p - K) / S + 1, OW = (W + 2 * p - K) / S + 1;
    for (int n = 0; n < B; n++)
        for (int o = 0; o < OC; o++)
            for (int i = 0; i < OH; i++)
                for (int j = 0; j < OW; j++) {
                    double s = 0;
                    for (int c = 0; c < C; c++)
                        for (int a = 0; a < K; a++)
                            for (int b = 0; b < K; b++) {
                                int ih = S * i + a - p, iw = S * j + b - p;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                s += w[((o * C + c) * K + a) * K + b] * in[((n * C + c) * H + ih) * W + iw];
                            }
                    out[((n * OC + o) * OH + i) * OW + j] = s;
                }
}

static void ref_groupnorm(double *out, const double *in, const double *gamma, const double *beta, int B, int C,
                          int HW, int G)
{
    const int per = C / G, m = per * HW;
    for (int n = 0; n < B; n++)
        for (int g = 0; g < G; g++) {
            const double *x = in + ((size_t)n * C + g * per) * HW;
            double mu = 0, var = 0;
            for (int i = 0; i < m; i++) mu += x[i] / m;
            for (int i = 0; i < m; i++) var += (x[i] - mu) * (x[i] - mu) / m;
            for (int i = 0; i < m; i++) {
                int c = g * per + i / HW;
                out[((size_t)n * C + g * per) * HW + i] = gamma[c] * (x[i] - mu) / sqrt(var + GROUPNORM_EPS) + beta[c];
            }
        }
}

START_TEST(test_resnet_kernels_match_naive)
{
    gsl_rng *r = test_rng(41);
    for (int trial = 0; trial < 24; trial++) {
        /* strided convolution: K 1 and 3, stride 1 and 2, odd and even sizes */
        int B = rand_int(r, 1, 3), C = rand_int(r, 1, 3), H = rand_int(r, 1, 9), W = rand_int(r, 1, 9);
        int OC = rand_int(r, 1, 4), K = trial % 2 ? 3 : 1, S = trial % 4 < 2 ? 2 : 1;
        int OH = conv2d_out_size(H, K, S), OW = conv2d_out_size(W, K, S);
        size_t nin = (size_t)B * C * H * W, nout = (size_t)B * OC * OH * OW, nw = (size_t)OC * C * K * K;
        float *in = alloc_uniform(nin, r, -1, 1), *w = alloc_uniform(nw, r, -1, 1), *dout = alloc_uniform(nout, r, -1, 1);
        float *col = malloc(sizeof(float) * conv2d_strided_col_floats(C, H, W, K, S));
        float *o1 = malloc(sizeof(float) * nout), *o2 = malloc(sizeof(float) * nout);
        conv2d_strided_forward(o1, in, w, col, B, C, H, W, OC, K, S);
        conv2d_strided_forward_naive(o2, in, w, B, C, H, W, OC, K, S);
        ck_assert_double_le(worst_ratio(o1, o2, nout, 1e-5, 1e-5), 1.0);
        float *din1 = alloc_uniform(nin, r, -1, 1), *dw1 = alloc_uniform(nw, r, -1, 1);
        float *din2 = alloc_copy(din1, nin), *dw2 = alloc_copy(dw1, nw);
        conv2d_strided_backward(din1, dw1, dout, in, w, col, B, C, H, W, OC, K, S);
        conv2d_strided_backward_naive(din2, dw2, dout, in, w, B, C, H, W, OC, K, S);
        ck_assert_double_le(worst_ratio(din1, din2, nin, 1e-5, 1e-5), 1.0);
        ck_assert_double_le(worst_ratio(dw1, dw2, nw, 1e-5, 1e-5), 1.0);
        conv2d_strided_backward(NULL, dw1, dout, in, w, col, B, C, H, W, OC, K, S);
        conv2d_strided_backward_naive(NULL, dw2, dout, in, w, B, C, H, W, OC, K, S);
        ck_assert_double_le(worst_ratio(dw1, dw2, nw, 1e-5, 1e-5), 1.0);
        free(in), free(w), free(dout), free(col), free(o1), free(o2), free(din1), free(dw1), free(din2), free(dw2);

        /* group normalisation: groups of 1..3 channels, off-centre inputs */
        int G = rand_int(r, 1, 3), Cg = G * rand_int(r, 1, 3), HW = rand_int(r, 1, 20);
        size_t n = (size_t)B * Cg * HW;
        float *x = alloc_uniform(n, r, 2, 5), *gamma = alloc_uniform(Cg, r, 0.5, 1.5), *beta = alloc_uniform(Cg, r, -1, 1);
        float *y1 = malloc(sizeof(float) * n), *y2 = malloc(sizeof(float) * n), *dy = alloc_uniform(n, r, -1, 1);
        float *m1 = malloc(sizeof(float) * B * G), *r1 = malloc(sizeof(float) * B * G);
        float *m2 = malloc(sizeof(float) * B * G), *r2 = malloc(sizeof(float) * B * G);
        groupnorm_forward(y1, m1, r1, x, gamma, beta, B, Cg, HW, G);
        groupnorm_forward_naive(y2, m2, r2, x, gamma, beta, B, Cg, HW, G);
        ck_assert_double_le(worst_ratio(y1, y2, n, 1e-4, 1e-4), 1.0);
        ck_assert_double_le(worst_ratio(m1, m2, (size_t)B * G, 1e-5, 1e-5), 1.0);
        ck_assert_double_le(worst_ratio(r1, r2, (size_t)B * G, 1e-4, 1e-4), 1.0);
        float *dx1 = alloc_uniform(n, r, -1, 1), *dg1 = alloc_uniform(Cg, r, -1, 1), *db1 = alloc_uniform(Cg, r, -1, 1);
        float *dx2 = alloc_copy(dx1, n), *dg2 = alloc_copy(dg1, Cg), *db2 = alloc_copy(db1, Cg);
        groupnorm_backward(dx1, dg1, db1, dy, x, m1, r1, gamma, B, Cg, HW, G);
        groupnorm_backward_naive(dx2, dg2, db2, dy, x, gamma, B, Cg, HW, G);
        ck_assert_double_le(worst_ratio(dx1, dx2, n, 1e-4, 1e-3), 1.0);
        ck_assert_double_le(worst_ratio(dg1, dg2, Cg, 1e-4, 1e-4), 1.0);
        ck_assert_double_le(worst_ratio(db1, db2, Cg, 1e-5, 1e-5), 1.0);

        /* residual sum + ReLU: exact, in place, NaN passes */
        float *a = alloc_uniform(n, r, -1, 1), *b = alloc_uniform(n, r, -1, 1);
        a[0] = NAN;
        residual_relu_forward(y1, a, b, n);
        residual_relu_forward_naive(y2, a, b, n);
        ck_assert(isnan(y1[0]) && isnan(y2[0]));
        ck_assert_mem_eq(y1 + 1, y2 + 1, sizeof(float) * (n - 1));
        residual_relu_forward(a, a, b, n);
        ck_assert_mem_eq(a + 1, y1 + 1, sizeof(float) * (n - 1));
        residual_relu_backward(dx1, dy, y1, n);
        residual_relu_backward_naive(dx2, dy, y1, n);
        ck_assert_mem_eq(dx1, dx2, sizeof(float) * n);
        free(x), free(gamma), free(beta), free(y1), free(y2), free(dy), free(m1), free(r1), free(m2), free(r2);
        free(dx1), free(dg1), free(db1), free(dx2), free(dg2), free(db2), free(a), free(b);
    }
    gsl_rng_free(r);
}
END_TEST

typedef struct ResLayerCtx {
    int kind; /* 0 strided conv, 1 group norm, 2 residual sum + ReLU */
    int B, C, H, W, OC, K, S, G;
    double *in, *w, *gamma, *beta, *other, *r, *out;
    size_t n_out;
} ResLayerCtx;

static double res_layer_objective(void *p)
{
    ResLayerCtx *c = p;
    if (c->kind == 0) ref_conv_strided(c->out, c->in, c->w, c->B, c->C, c->H, c->W, c->OC, c->K, c->S);
    if (c->kind == 1) ref_groupnorm(c->out, c->in, c->gamma, c->beta, c->B, c->C, c->H * c->W, c->G);
    if (c->kind == 2)
        for (size_t i = 0; i < c->n_out; i++) c->out[i] = fmax(c->in[i] + c->other[i], 0.0);
    double s = 0;
    for (size_t i = 0; i < c->n_out; i++) s += c->r[i] * c->out[i];
    return s;
}

START_TEST(test_resnet_layer_gradients_by_finite_differences)
{
    gsl_rng *r = test_rng(42);
    /* strided conv: 3x3 stride 2 and 1x1 stride 2 on odd and even sizes, 3x3 stride 1 */
    const int cases[][4] = {{3, 2, 5, 6}, {1, 2, 5, 6}, {3, 2, 6, 7}, {3, 1, 4, 5}};
    for (int t = 0; t < 4; t++) {
        int K = cases[t][0], S = cases[t][1], H = cases[t][2], W = cases[t][3];
        ResLayerCtx c = {.kind = 0, .B = 2, .C = 2, .H = H, .W = W, .OC = 3, .K = K, .S = S};
        int OH = conv2d_out_size(H, K, S), OW = conv2d_out_size(W, K, S);
        size_t nin = (size_t)2 * 2 * H * W, nw = (size_t)3 * 2 * K * K, nout = (size_t)2 * 3 * OH * OW;
        float *in = alloc_uniform(nin, r, -1, 1), *w = alloc_uniform(nw, r, -1, 1), *dout = alloc_uniform(nout, r, -1, 1);
        float *col = malloc(sizeof(float) * conv2d_strided_col_floats(2, H, W, K, S));
        float *din = calloc(nin, sizeof(float)), *dw = calloc(nw, sizeof(float));
        conv2d_strided_backward(din, dw, dout, in, w, col, 2, 2, H, W, 3, K, S);
        c.in = to_double(in, nin), c.w = to_double(w, nw), c.r = to_double(dout, nout);
        c.n_out = nout;
        c.out = malloc(sizeof(double) * nout);
        check_fd(c.in, din, nin, res_layer_objective, &c, "strided conv din");
        check_fd(c.w, dw, nw, res_layer_objective, &c, "strided conv dw");
        free(in), free(w), free(dout), free(col), free(din), free(dw), free(c.in), free(c.w), free(c.r), free(c.out);
    }
    /* group norm: 2 groups of 2 channels, and one group of 3 (layer norm) */
    for (int G = 1; G <= 2; G++) {
        int C = G == 1 ? 3 : 4;
        ResLayerCtx c = {.kind = 1, .B = 2, .C = C, .H = 3, .W = 2, .G = G};
        size_t n = (size_t)2 * C * 6;
        float *in = alloc_uniform(n, r, -2, 2), *gamma = alloc_uniform(C, r, 0.5, 1.5), *beta = alloc_uniform(C, r, -1, 1);
        float *dout = alloc_uniform(n, r, -1, 1), *out = malloc(sizeof(float) * n);
        float *mean = malloc(sizeof(float) * 2 * G), *rstd = malloc(sizeof(float) * 2 * G);
        float *din = calloc(n, sizeof(float)), *dg = calloc(C, sizeof(float)), *db = calloc(C, sizeof(float));
        groupnorm_forward(out, mean, rstd, in, gamma, beta, 2, C, 6, G);
        groupnorm_backward(din, dg, db, dout, in, mean, rstd, gamma, 2, C, 6, G);
        c.in = to_double(in, n), c.gamma = to_double(gamma, C), c.beta = to_double(beta, C), c.r = to_double(dout, n);
        c.n_out = n;
        c.out = malloc(sizeof(double) * n);
        check_fd(c.in, din, n, res_layer_objective, &c, "groupnorm din");
        check_fd(c.gamma, dg, C, res_layer_objective, &c, "groupnorm dgamma");
        check_fd(c.beta, db, C, res_layer_objective, &c, "groupnorm dbeta");
        free(in), free(gamma), free(beta), free(dout), free(out), free(mean), free(rstd), free(din), free(dg), free(db);
        free(c.in), free(c.gamma), free(c.beta), free(c.r), free(c.out);
    }
    /* residual sum + ReLU: the same gradient reaches both summands */
    {
        ResLayerCtx c = {.kind = 2};
        size_t n = 24;
        float *a = alloc_uniform(n, r, -1, 1), *b = alloc_uniform(n, r, -1, 1), *dout = alloc_uniform(n, r, -1, 1);
        float *out = malloc(sizeof(float) * n), *dsum = malloc(sizeof(float) * n);
        residual_relu_forward(out, a, b, n);
        residual_relu_backward(dsum, dout, out, n);
        c.in = to_double(a, n), c.other = to_double(b, n), c.r = to_double(dout, n);
        c.n_out = n;
        c.out = malloc(sizeof(double) * n);
        check_fd(c.in, dsum, n, res_layer_objective, &c, "residual da");
        check_fd(c.other, dsum, n, res_layer_objective, &c, "residual db");
        free(a), free(b), free(dout), free(out), free(dsum), free(c.in), free(c.other), free(c.r), free(c.out);
    }
    gsl_rng_free(r);
}
END_TEST

static ModelSpec resnet_spec(int c, int h, int w, int depth, int base, int groups, int classes, int batch)
{
    ModelSpec s;
    memset(&s, 0, sizeof s);
    s.arch = MODEL_ARCH_RESNET;
    s.in_channels = c, s.in_height = h, s.in_width = w;
    s.classes = classes;
    s.depth = depth, s.base_channels = base, s.norm_groups = groups;
    s.batch = batch;
    return s;
}

/* The loss a pass reports, at the model's current (float) parameters: mode 0 full, 1
 * bottom at split, 2 top at split from act. */
typedef struct ResModelCtx {
    Model *m;
    ModelWorkspace *ws;
    const float *x, *act;
    const int *y;
    int B, mode, split;
} ResModelCtx;

static double res_model_loss(ResModelCtx *c)
{
    double loss = 0;
    float *G = model_grads(c->m);
    size_t n = model_param_count(c->m);
    float *keep = alloc_copy(G, n);
    int status = c->mode == 0 ? model_grad_full(c->m, c->ws, c->x, c->y, c->B, &loss)
                 : c->mode == 1 ? model_grad_bottom(c->m, c->ws, c->split, c->x, c->y, c->B, &loss, NULL)
                                : model_grad_top(c->m, c->ws, c->split, c->act, c->y, c->B, &loss);
    ck_assert_int_eq(status, HS_OK);
    memcpy(G, keep, sizeof(float) * n);
    free(keep);
    return loss;
}

/* Central differences on the float model itself (steps 2e-4 and 1e-4, the loss summed in
 * double; float rounding in the forward leaves ~5e-4 of noise in them, hence the 1e-3
 * absolute tolerance): catches wiring mistakes, which are O(1), where the per-layer checks above
 * verify the arithmetic in double. A parameter whose two estimates disagree has a ReLU
 * kink within the step (tiny GroupNorm groups make them dense) and is skipped; at most
 * one in ten may be. Every entry outside the pass's ranges must keep the sentinel. */
static void check_resnet_fd(ResModelCtx *c, int first, int end, int head, float sentinel, const char *what)
{
    const float *g = model_grads(c->m);
    float *P = model_params(c->m);
    size_t n = model_param_count(c->m);
    char *tested = calloc(n, 1);
    size_t off, count;
    for (int b = first; b < end; b++) {
        model_block_range(c->m, b, &off, &count);
        memset(tested + off, 1, count);
    }
    if (head) {
        model_aux_range(c->m, head, &off, &count);
        memset(tested + off, 1, count);
    }
    size_t checked = 0, kinked = 0;
    for (size_t i = 0; i < n; i++) {
        if (!tested[i]) {
            ck_assert_msg(g[i] == sentinel, "%s: gradient %zu outside the pass's ranges was written", what, i);
            continue;
        }
        double num[2];
        const float keep = P[i];
        for (int k = 0; k < 2; k++) {
            const float eps = k ? 1e-4f : 2e-4f;
            P[i] = keep + eps;
            double up = res_model_loss(c);
            P[i] = keep - eps;
            double down = res_model_loss(c);
            P[i] = keep;
            num[k] = (up - down) / (2.0 * eps);
        }
        checked++;
        /* two steps that disagree straddle a ReLU kink: no derivative to compare with */
        if (fabs(num[0] - num[1]) > 1.5e-3 + 2e-2 * fabs(num[1])) {
            kinked++;
            continue;
        }
        double err = fabs(num[1] - g[i]);
        ck_assert_msg(err <= 1e-3 + 2e-2 * fabs(num[1]), "%s: param %zu analytic %.7g numeric %.7g", what, i,
                      (double)g[i], num[1]);
    }
    ck_assert_msg(kinked * 10 <= checked, "%s: %zu of %zu parameters sit on a kink", what, kinked, checked);
    free(tested);
}

START_TEST(test_resnet_gradients_end_to_end)
{
    /* depth 8 (three blocks), 2 base channels in groups of 1, 8x8 -> 4x4 -> 2x2, 3 classes;
     * and depth 14 on an odd input (7x5 -> 4x3 -> 2x2) with layer-norm-like groups */
    const ModelSpec specs[] = {resnet_spec(1, 8, 8, 8, 2, 2, 3, 3), resnet_spec(2, 7, 5, 14, 2, 1, 3, 2)};
    for (int t = 0; t < 2; t++) {
        const ModelSpec *spec = &specs[t];
        gsl_rng *r = test_rng(51 + t);
        Model *m;
        ModelWorkspace *ws;
        ck_assert_int_eq(model_create(spec, r, &m), HS_OK);
        ck_assert_int_eq(model_workspace_create(spec, &ws), HS_OK);
        const int B = spec->batch, L = model_n_blocks(m);
        ck_assert_int_eq(L, (spec->depth - 2) / 2);
        const size_t n = model_param_count(m);
        const int features = spec->in_channels * spec->in_height * spec->in_width;
        float *P = model_params(m), *G = model_grads(m);
        /* perturb GroupNorm's gamma/beta and the biases away from 1 and 0 */
        for (size_t i = 0; i < n; i++) P[i] += (float)(0.2 * (gsl_rng_uniform(r) - 0.5));
        float *x = alloc_uniform((size_t)B * features, r, 0, 1);
        int *y = malloc(sizeof(int) * B);
        for (int i = 0; i < B; i++) y[i] = rand_int(r, 0, spec->classes - 1);
        ResModelCtx c = {.m = m, .ws = ws, .x = x, .y = y, .B = B};
        const float sentinel = 7.5f;
        double loss;
        for (size_t i = 0; i < n; i++) G[i] = sentinel;
        ck_assert_int_eq(model_grad_full(m, ws, x, y, B, &loss), HS_OK);
        ck_assert(isfinite(loss) && loss > 0);
        check_resnet_fd(&c, 0, L, 0, sentinel, "resnet full");
        /* the forward's logits are those the loss saw: model_forward agrees bit for bit */
        const float *logits = model_forward(m, ws, x, B);
        ck_assert_ptr_nonnull(logits);
        for (int split = 1; split < L; split++) {
            int act_floats = model_split_floats(m, split);
            float *act = malloc(sizeof(float) * B * act_floats);
            for (size_t i = 0; i < n; i++) G[i] = sentinel;
            ck_assert_int_eq(model_grad_bottom(m, ws, split, x, y, B, &loss, act), HS_OK);
            c.mode = 1, c.split = split;
            check_resnet_fd(&c, 0, split, split, sentinel, "resnet bottom");
            /* top from the bottom's real cut activations (post-ReLU, some exact zeros) */
            for (size_t i = 0; i < n; i++) G[i] = sentinel;
            ck_assert_int_eq(model_grad_top(m, ws, split, act, y, B, &loss), HS_OK);
            c.mode = 2, c.act = act;
            check_resnet_fd(&c, split, L, 0, sentinel, "resnet top");
            /* determinism: a fresh workspace gives the same bits */
            ModelWorkspace *fresh;
            ck_assert_int_eq(model_workspace_create(spec, &fresh), HS_OK);
            float *G_top = alloc_copy(G, n);
            double loss_fresh;
            ck_assert_int_eq(model_grad_top(m, fresh, split, act, y, B, &loss_fresh), HS_OK);
            ck_assert(loss_fresh == loss);
            ck_assert_mem_eq(G, G_top, sizeof(float) * n);
            model_workspace_free(fresh);
            free(G_top), free(act);
            c.mode = 0, c.act = NULL;
        }
        free(x), free(y);
        model_workspace_free(ws);
        model_free(m);
        gsl_rng_free(r);
    }
}
END_TEST

START_TEST(test_resnet_profile_closed_form)
{
    /* layout and profile agree (offsets, parameter counts, split floats) */
    ModelSpec s = resnet_spec(3, 32, 32, 8, 16, 8, 10, 4);
    check_profile_matches(&s);
    ModelSpec odd = resnet_spec(1, 28, 28, 20, 16, 8, 10, 4);
    check_profile_matches(&odd);
    /* ResNet-8 at 3x32x32, worked by hand. Block 0: stem 3->16 and two 16->16 convs at
     * 32x32 (E = 16 * 1024 elements each), three GroupNorms, two ReLUs, the residual sum.
     * Blocks 1, 2: 16->32 at 16x16 and 32->64 at 8x8, each conv1 3x3/2 + conv2 3x3 + 1x1/2
     * projection = 3,670,016 MACs, three GroupNorms, one ReLU, the sum; block 2 adds the
     * pool and linear(64 -> 10). */
    ModelProfile p;
    ck_assert_int_eq(model_profile(&s, &p), HS_OK);
    ck_assert_int_eq(p.n_blocks, 3);
    const double E0 = 16384, E1 = 8192, E2 = 4096, macs0 = 442368 + 2 * 2359296, macs12 = 3670016;
    ck_assert_double_eq(p.fwd_flops[0], 2 * macs0 + 3 * 8 * E0 + 2 * E0 + 2 * E0); /* 10,780,672 */
    ck_assert_double_eq(p.fwd_flops[0], 10780672);
    ck_assert_double_eq(p.bwd_flops[0], 4 * macs0 + 3 * 13 * E0 + 2 * E0 + 2 * E0);
    ck_assert_double_eq(p.fwd_flops[1], 2 * macs12 + 3 * 8 * E1 + E1 + 2 * E1);
    ck_assert_double_eq(p.bwd_flops[1], 4 * macs12 + 3 * 13 * E1 + E1 + 2 * E1);
    ck_assert_double_eq(p.fwd_flops[2], 2 * macs12 + 3 * 8 * E2 + E2 + 2 * E2 + E2 + 2 * 640 + 10);
    ck_assert_double_eq(p.bwd_flops[2], 4 * macs12 + 3 * 13 * E2 + E2 + 2 * E2 + E2 + 4 * 640 + 10);
    ck_assert_double_eq(p.params[0], 5136);
    ck_assert_double_eq(p.params[1], 14528);
    ck_assert_double_eq(p.params[2], 58378);
    ck_assert_double_eq(p.act_floats[0], E0);
    ck_assert_double_eq(p.act_floats[1], E1);
    ck_assert_double_eq(p.act_floats[2], 10);
    ck_assert_double_eq(model_profile_split_bytes(&p, 1), 4 * E0);
    ck_assert_double_eq(p.aux_flops[1], 2 * E0 + 6 * 16 * 10 + 20);
    ck_assert_double_eq(p.aux_params[2], 32 * 10 + 10);
    /* the paper's models (He et al. quote 0.85 M and 1.7 M): per stage, the first block
     * of stages 2 and 3 has the projection; 464 stem + 650 classifier */
    s.depth = 56;
    ck_assert_int_eq(model_profile(&s, &p), HS_OK);
    ck_assert_int_eq(p.n_blocks, 27);
    ck_assert_double_eq(p.total_params, 464 + 9 * 4672 + 14528 + 8 * 18560 + 57728 + 8 * 73984 + 650);
    ck_assert_double_eq(p.total_params, 855770);
    s.depth = 110;
    ck_assert_int_eq(model_profile(&s, &p), HS_OK);
    ck_assert_int_eq(p.n_blocks, 54);
    ck_assert_double_eq(p.total_params, 1730714);
    /* shapes the network cannot have */
    const int bad_depths[] = {6, 9, 13, 134};
    for (int i = 0; i < 4; i++) {
        s.depth = bad_depths[i];
        ck_assert_int_eq(model_profile(&s, &p), HS_E_INPUT);
    }
    s.depth = 8, s.norm_groups = 3; /* 16 channels in 3 groups */
    ck_assert_int_eq(model_profile(&s, &p), HS_E_INPUT);
    s = resnet_spec(3, 3, 32, 8, 16, 8, 10, 4); /* smaller than 4x4 */
    ck_assert_int_eq(model_profile(&s, &p), HS_E_INPUT);
}
END_TEST

START_TEST(test_resnet_split_training_learns)
{
    /* a mixture seen as 1x6x6 images: ResNet-8 split at block 1 learns it, the bottom from
     * its head, the top from the activations */
    Dataset *ds = mixture(36, 3, 480, 12.0, 61);
    ds->channels = 1, ds->height = 6, ds->width = 6;
    ModelSpec s = resnet_spec(1, 6, 6, 8, 4, 2, 3, 16);
    gsl_rng *r = test_rng(62);
    Model *m;
    ModelWorkspace *ws;
    ck_assert_int_eq(model_create(&s, r, &m), HS_OK);
    ck_assert_int_eq(model_workspace_create(&s, &ws), HS_OK);
    double loss0, acc0, loss1, acc1;
    ck_assert_int_eq(model_evaluate(m, ws, ds, 0, NULL, 0, &loss0, &acc0), HS_OK);
    const size_t n = model_param_count(m);
    float *act = malloc(sizeof(float) * 16 * model_split_floats(m, 1));
    for (int epoch = 0; epoch < 4; epoch++)
        for (int start = 0; start + 16 <= ds->n_train; start += 16) {
            dataset_gather_range(ds, 0, start, 16, model_workspace_x(ws), model_workspace_y(ws));
            double l;
            ck_assert_int_eq(model_grad_bottom(m, ws, 1, model_workspace_x(ws), model_workspace_y(ws), 16, &l, act), HS_OK);
            ck_assert_int_eq(model_grad_top(m, ws, 1, act, model_workspace_y(ws), 16, &l), HS_OK);
            vec_axpy(model_params(m), -0.05f, model_grads(m), n);
        }
    ck_assert_int_eq(model_evaluate(m, ws, ds, 1, NULL, 0, &loss1, &acc1), HS_OK);
    ck_assert_msg(loss1 < 0.6 * loss0 && acc1 > 0.8, "loss %g -> %g, accuracy %g -> %g", loss0, loss1, acc0, acc1);
    free(act);
    model_workspace_free(ws);
    model_free(m);
    gsl_rng_free(r);
    dataset_free(ds);
}
END_TEST

/* ------------------------------------------------------------------ width pruning, stages */

/* model_width_grad against its naive twin (the masked full model) and, through the
 * double reference of the sub-model, against central differences; what it must not
 * write stays put; the sub-model's size and FLOPs are the closed forms. */
static void check_width(const ModelSpec *spec, double keep, unsigned long seed)
{
    gsl_rng *r = test_rng(seed);
    Model *full;
    ModelWorkspace *ws;
    ModelWidth *w;
    ck_assert_int_eq(model_create(spec, r, &full), HS_OK);
    ck_assert_int_eq(model_workspace_create(spec, &ws), HS_OK);
    ck_assert_int_eq(model_width_create(spec, keep, &w), HS_OK);
    const ModelSpec *sub = model_width_sub_spec(w);
    size_t n = model_param_count(full), held_count = 0, blocks = 0, off, count;
    model_block_range(full, model_n_blocks(full) - 1, &off, &count);
    blocks = off + count;
    const unsigned char *held = model_width_held(w);
    for (size_t i = 0; i < n; i++) held_count += held[i];
    ck_assert_uint_eq(held_count, model_width_count(w));
    /* the sub-model's parameter count is the profile's of the sub spec, heads included */
    ModelProfile sp;
    ck_assert_int_eq(model_profile(sub, &sp), HS_OK);
    double heads = 0;
    for (int m = 1; m < sp.n_blocks; m++) heads += sp.aux_params[m];
    ck_assert_double_eq((double)held_count, sp.total_params + heads);

    const int B = 5;
    float *P = alloc_uniform(n, r, -0.5, 0.5);
    size_t features = (size_t)spec->in_channels * spec->in_height * spec->in_width;
    float *x = alloc_uniform((size_t)B * features, r, -1, 1);
    int y[5];
    for (int i = 0; i < B; i++) y[i] = rand_int(r, 0, spec->classes - 1);
    float *G = malloc(n * sizeof *G), *Gn = malloc(n * sizeof *Gn);
    for (size_t i = 0; i < n; i++) G[i] = Gn[i] = 7.0f; /* sentinel */
    double loss, loss_naive;
    ck_assert_int_eq(model_width_grad(w, P, G, x, y, B, &loss), HS_OK);
    ck_assert_int_eq(model_width_grad_naive(w, full, ws, P, Gn, x, y, B, &loss_naive), HS_OK);
    ck_assert_double_le(fabs(loss - loss_naive), 1e-5 * (1 + fabs(loss)));
    ck_assert_double_le(worst_ratio(G, Gn, blocks, 1e-6, 1e-4), 1.0);
    for (size_t i = 0; i < n; i++) {
        if (i < blocks && !held[i]) ck_assert_msg(G[i] == 0.0f, "dropped coordinate %zu has gradient %g", i, (double)G[i]);
        if (i >= blocks) ck_assert_msg(G[i] == 7.0f, "head coordinate %zu was written", i);
    }
    /* central differences on the double reference of the sub-model: sub parameter k is
     * the k-th held coordinate (the map is increasing) */
    Model *sm;
    ck_assert_int_eq(model_create(sub, r, &sm), HS_OK);
    size_t sn = model_param_count(sm), k = 0;
    ck_assert_uint_eq(sn, held_count);
    double *Ps = malloc(sn * sizeof *Ps);
    float *Gs = malloc(sn * sizeof *Gs);
    for (size_t i = 0; i < n; i++)
        if (held[i]) {
            Ps[k] = P[i];
            Gs[k++] = G[i];
        }
    double *xd = to_double(x, (size_t)B * features);
    RefModel rm = {.spec = sub, .model = sm, .P = Ps, .x = xd, .y = y, .B = B, .mode = 0};
    model_block_range(sm, model_n_blocks(sm) - 1, &off, &count);
    ck_assert_double_le(fabs(ref_model_loss(&rm) - loss), 1e-4 * (1 + fabs(loss)));
    check_fd(Ps, Gs, off + count, ref_model_loss, &rm, "width");
    free(Ps), free(Gs), free(xd), free(P), free(x), free(G), free(Gn);
    model_free(sm);
    model_width_free(w);
    model_workspace_free(ws);
    model_free(full);
    gsl_rng_free(r);
}

START_TEST(test_width_submodel_gradients_and_costs)
{
    const int sizes[] = {12, 10, 7, 3};
    ModelSpec mlp = mlp_spec(4, sizes, 5);
    ModelSpec sub;
    /* ceil(0.5 * 10) = 5, ceil(0.5 * 7) = 4; input and classes whole */
    ck_assert_int_eq(model_width_spec(&mlp, 0.5, &sub), HS_OK);
    ck_assert_int_eq(sub.sizes[0], 12); ck_assert_int_eq(sub.sizes[1], 5);
    ck_assert_int_eq(sub.sizes[2], 4); ck_assert_int_eq(sub.sizes[3], 3);
    ck_assert_int_eq(model_width_spec(&mlp, 0.01, &sub), HS_OK); /* at least one unit */
    ck_assert_int_eq(sub.sizes[1], 1); ck_assert_int_eq(sub.sizes[2], 1);
    ck_assert_int_eq(model_width_spec(&mlp, 0.7, &sub), HS_OK); /* 0.7 * 10 is 7, not 8 */
    ck_assert_int_eq(sub.sizes[1], 7);
    ck_assert_int_eq(model_width_spec(&mlp, 0, &sub), HS_E_INPUT);
    ck_assert_int_eq(model_width_spec(&mlp, 1.5, &sub), HS_E_INPUT);
    /* closed forms at keep 0.5 (widths 12-5-4-3): parameters 65 + 24 + 15, FLOPs per
     * sample fwd + bwd: linear 6 i o + 2 o, ReLU 2 o */
    ModelProfile p;
    ck_assert_int_eq(model_width_spec(&mlp, 0.5, &sub), HS_OK);
    ck_assert_int_eq(model_profile(&sub, &p), HS_OK);
    ck_assert_double_eq(p.total_params, 12 * 5 + 5 + 5 * 4 + 4 + 4 * 3 + 3);
    ck_assert_double_eq(p.total_flops, (6 * 12 * 5 + 4 * 5) + (6 * 5 * 4 + 4 * 4) + (6 * 4 * 3 + 2 * 3));
    check_width(&mlp, 0.5, 31);
    check_width(&mlp, 0.25, 32);
    check_width(&mlp, 1.0, 33);
    ModelSpec cnn = cnn_spec(2, 8, 8, 4, 6, 3, 10, 3, 5);
    ck_assert_int_eq(model_width_spec(&cnn, 0.5, &sub), HS_OK);
    ck_assert_int_eq(sub.conv_channels[0], 2); ck_assert_int_eq(sub.conv_channels[1], 3);
    ck_assert_int_eq(sub.hidden, 5); ck_assert_int_eq(sub.in_channels, 2);
    /* CNN at keep 0.5: conv 2->2 (k 3), conv 2->3, linear 3*2*2 -> 5, linear 5 -> 3 */
    ck_assert_int_eq(model_profile(&sub, &p), HS_OK);
    ck_assert_double_eq(p.total_params, (2 * 9 * 2 + 2) + (2 * 9 * 3 + 3) + (12 * 5 + 5) + (5 * 3 + 3));
    check_width(&cnn, 0.5, 34);
    check_width(&cnn, 0.3, 35);
    /* nested: every coordinate of a smaller ratio is held by a larger one */
    ModelWidth *small, *large;
    ck_assert_int_eq(model_width_create(&cnn, 0.3, &small), HS_OK);
    ck_assert_int_eq(model_width_create(&cnn, 0.7, &large), HS_OK);
    gsl_rng *r = test_rng(3);
    Model *m;
    ck_assert_int_eq(model_create(&cnn, r, &m), HS_OK);
    size_t n = model_param_count(m);
    for (size_t i = 0; i < n; i++)
        if (model_width_held(small)[i]) ck_assert(model_width_held(large)[i]);
    ck_assert_uint_lt(model_width_count(small), model_width_count(large));
    model_free(m);
    gsl_rng_free(r);
    model_width_free(small);
    model_width_free(large);
}
END_TEST

START_TEST(test_masked_average_hand_example)
{
    /* weights 1 and 3; b lacks coordinate 1; nobody holds coordinate 3 */
    float a[4] = {1, 2, 3, 9}, b[4] = {5, 6, 7, 8}, out[4] = {0, 0, 0, -1};
    unsigned char ha[4] = {1, 1, 1, 0}, hb[4] = {1, 0, 1, 0};
    const float *v[2] = {a, b};
    const unsigned char *h[2] = {ha, hb};
    double w[2] = {1, 3};
    ck_assert_int_eq(vec_masked_average(out, v, h, w, 2, 4), HS_OK);
    ck_assert_float_eq(out[0], 4.0f);  /* (1 + 15) / 4 */
    ck_assert_float_eq(out[1], 2.0f);  /* a only */
    ck_assert_float_eq(out[2], 6.0f);  /* (3 + 21) / 4 */
    ck_assert_float_eq(out[3], -1.0f); /* kept */
    const unsigned char *all[2] = {NULL, NULL}; /* NULL: holds everything */
    ck_assert_int_eq(vec_masked_average(out, v, all, w, 2, 4), HS_OK);
    ck_assert_float_eq(out[1], 5.0f); /* (2 + 18) / 4 */
    w[1] = -1;
    ck_assert_int_eq(vec_masked_average(out, v, h, w, 2, 4), HS_E_INPUT);
    ck_assert_int_eq(vec_masked_average(out, v, h, w, 0, 4), HS_E_INPUT);
}
END_TEST

/* Stage s's gradient is block s's and head s's of the bottom pass at split s (the last
 * stage: the full pass's last block); nothing else is written. */
static void check_stages(const ModelSpec *spec, unsigned long seed)
{
    gsl_rng *r = test_rng(seed);
    Model *m;
    ModelWorkspace *ws;
    ck_assert_int_eq(model_create(spec, r, &m), HS_OK);
    ck_assert_int_eq(model_workspace_create(spec, &ws), HS_OK);
    size_t n = model_param_count(m), features = (size_t)spec->in_channels * spec->in_height * spec->in_width;
    const int B = 4, L = model_n_blocks(m);
    float *x = alloc_uniform((size_t)B * features, r, -1, 1), *G = malloc(n * sizeof *G);
    int y[4] = {0, 1, 2, 1};
    float *P = model_params(m), *ref = model_grads(m);
    for (int s = 1; s <= L; s++) {
        for (size_t i = 0; i < n; i++) G[i] = 7.0f;
        double loss, ref_loss;
        ck_assert_int_eq(model_grad_stage_at(m, P, G, ws, s, x, y, B, &loss), HS_OK);
        if (s < L) ck_assert_int_eq(model_grad_bottom(m, ws, s, x, y, B, &ref_loss, NULL), HS_OK);
        else ck_assert_int_eq(model_grad_full(m, ws, x, y, B, &ref_loss), HS_OK);
        ck_assert_double_eq(loss, ref_loss);
        size_t boff, bcount, hoff, hcount;
        model_block_range(m, s - 1, &boff, &bcount);
        model_aux_range(m, s, &hoff, &hcount);
        for (size_t i = 0; i < n; i++) {
            int mine = (i >= boff && i < boff + bcount) || (i >= hoff && i < hoff + hcount);
            if (mine) ck_assert_msg(G[i] == ref[i], "stage %d: coordinate %zu %g vs %g", s, i, (double)G[i], (double)ref[i]);
            else ck_assert_msg(G[i] == 7.0f, "stage %d wrote coordinate %zu", s, i);
        }
    }
    ck_assert_int_eq(model_grad_stage_at(m, P, G, ws, 0, x, y, B, NULL), HS_E_INPUT);
    ck_assert_int_eq(model_grad_stage_at(m, P, G, ws, L + 1, x, y, B, NULL), HS_E_INPUT);
    free(x), free(G);
    model_workspace_free(ws);
    model_free(m);
    gsl_rng_free(r);
}

START_TEST(test_stage_gradients_and_costs)
{
    const int sizes[] = {12, 10, 7, 3};
    ModelSpec mlp = mlp_spec(4, sizes, 4);
    check_stages(&mlp, 41);
    ModelSpec cnn = cnn_spec(2, 8, 8, 4, 6, 3, 10, 3, 4);
    check_stages(&cnn, 42);
    /* closed forms, MLP 784-256-128-10: stage 1 runs block 1 forward and backward and its
     * head (6*256*10 + 2*10); stage 2 adds block 1's forward only; stage 3 has no head */
    const int big[] = {784, 256, 128, 10};
    ModelSpec s = mlp_spec(4, big, 64);
    ModelProfile p;
    ck_assert_int_eq(model_profile(&s, &p), HS_OK);
    double f1 = 2.0 * 784 * 256 + 2 * 256, b1 = 4.0 * 784 * 256 + 2 * 256;
    double f2 = 2.0 * 256 * 128 + 2 * 128, b2 = 4.0 * 256 * 128 + 2 * 128;
    double f3 = 2.0 * 128 * 10 + 10;
    ck_assert_double_eq(model_profile_stage_flops(&p, 1), f1 + b1 + 6.0 * 256 * 10 + 20);
    ck_assert_double_eq(model_profile_stage_flops(&p, 2), f1 + f2 + b2 + 6.0 * 128 * 10 + 20);
    ck_assert_double_eq(model_profile_stage_flops(&p, 3), f1 + f2 + f3 + 4.0 * 128 * 10 + 10);
    ck_assert_double_eq(model_profile_stage_params(&p, 1), 784.0 * 256 + 256 + 256 * 10 + 10);
    ck_assert_double_eq(model_profile_stage_params(&p, 3), 128.0 * 10 + 10);
    ck_assert_double_eq(model_profile_stage_flops(&p, 0), 0);
    ck_assert_double_eq(model_profile_stage_flops(&p, 4), 0);
}
END_TEST

static Suite *kernels_suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_linear_matches_naive);
    tcase_add_test(tc, test_conv_matches_naive);
    tcase_add_test(tc, test_im2col_col2im_match_naive);
    tcase_add_test(tc, test_conv_block_matches_naive_and_unfused);
    tcase_add_test(tc, test_conv_block_nan_passes);
    tcase_add_test(tc, test_pool_loss_relu_match_naive);
    tcase_add_test(tc, test_softmax_hand_example_and_nan);
    tcase_add_test(tc, test_layer_gradients_by_finite_differences);
    tcase_add_test(tc, test_resnet_kernels_match_naive);
    tcase_add_test(tc, test_resnet_layer_gradients_by_finite_differences);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_mlp_gradients_end_to_end);
    tcase_add_test(tc, test_cnn_gradients_end_to_end);
    tcase_add_test(tc, test_per_sample_gradients);
    tcase_add_test(tc, test_clip_norm_and_gaussian);
    tcase_add_test(tc, test_profile_matches_layout);
    tcase_add_test(tc, test_init_is_he_uniform_and_deterministic);
    tcase_add_test(tc, test_model_errors);
    tcase_add_test(tc, test_vector_helpers);
    tcase_add_test(tc, test_training_learns_and_is_deterministic);
    tcase_add_test(tc, test_split_training_learns);
    tcase_add_test(tc, test_resnet_gradients_end_to_end);
    tcase_add_test(tc, test_resnet_profile_closed_form);
    tcase_add_test(tc, test_resnet_split_training_learns);
    tcase_add_test(tc, test_width_submodel_gradients_and_costs);
    tcase_add_test(tc, test_masked_average_hand_example);
    tcase_add_test(tc, test_stage_gradients_and_costs);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *optim_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_optim_hand_examples);
    tcase_add_test(tc, test_optim_ranges);
    tcase_add_test(tc, test_optim_adam_runs_match_naive);
    tcase_add_test(tc, test_schedules);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(kernels_suite());
    srunner_add_suite(runner, model_suite());
    srunner_add_suite(runner, optim_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
