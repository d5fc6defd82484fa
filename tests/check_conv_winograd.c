/* check_conv_winograd.c — the Winograd F(4x4, 5x5) convolutions (models/conv_winograd.c)
 * against the naive direct loops (kernels_naive.c):
 *   - per element, forward and backward-data, on odd sizes (sides 1..17, tiles cut by the
 *     border), channel counts around the 16-lane groups and batches across chunks of 8.
 *     The error of an element is measured against the size of its sum, S = sum |w| |x|
 *     over its 25 C terms (the naive loops on |w| and |x|): Winograd's rounding error grows
 *     with the transforms' entries (B^T's 21/4, A^T's 8, G's 32/45: products of their row
 *     sums bound how much each rounding is amplified), not with the result, so a relative
 *     bound per element would fail on results that cancel. The worst measured is printed
 *     (7.3e-6 S over these shapes, float's epsilon 6e-8 amplified about 120 times); the
 *     bound, |a - b| <= 3e-5 S, leaves 4x room, and any wrong transform entry gives
 *     errors of 1e-2 S and more;
 *   - the conv block (bias, ReLU, pool) forward and backward, every gradient, against the
 *     naive block, and its AVX-512 transforms against the generic ones: the same bits;
 *     its backward, which unpools straight into the transforms' channel-last copy, gives
 *     the bits of the unfused path (unpool to a plane, the bias's sums, backward-weights
 *     and backward-data on the plane) for both;
 *   - the block's own AVX-512 sgemm (conv_winograd_gemm.c) against dnnl_sgemm over random
 *     shapes, both transposes, beta 0 and 1, depths up to its 384 (a single row with
 *     beta 1, oneDNN's gemv, excepted): the same bits (the block's AVX-512 path runs it,
 *     the generic path dnnl_sgemm);
 *   - a whole CNN gradient with kernels = winograd against kernels = openblas,
 *     ||g_w - g_ref|| <= 1e-4 ||g_ref|| (measured 3.7e-7, the size of
 *     oneDNN's own difference); determinism: the same bits
 *     from another thread's workspace and after other batch sizes, and the inference pass
 *     gives the training forward's loss to the bit.
 * Without oneDNN in the build the kernel is refused. */
#include "models/conv_onednn.h"
#include "models/conv_winograd.h"
#include "models/conv_winograd_gemm.h"
#include "models/kernels.h"
#include "models/model.h"
#include "tests/test_cnn.h"
#include "base/hs_error.h"

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gsl_rng *test_rng(unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    return r;
}

static int rand_int(gsl_rng *r, int lo, int hi) /* inclusive */
{
    return lo + (int)gsl_rng_uniform_int(r, (unsigned long)(hi - lo + 1));
}

static float *alloc_uniform(size_t n, gsl_rng *r)
{
    float *x = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) x[i] = (float)(2 * gsl_rng_uniform(r) - 1);
    return x;
}

static float *alloc_abs(const float *x, size_t n)
{
    float *y = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) y[i] = fabsf(x[i]);
    return y;
}

/* max over elements of |a - b| / scale */
static double worst_scaled(const float *a, const float *b, const float *scale, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)a[i] - b[i]) / ((double)scale[i] + 1e-30);
        if (!(err <= worst)) worst = err;
    }
    return worst;
}

#define WINO_TOLERANCE 3e-5

START_TEST(test_refused_without_onednn_or_other_kernels)
{
    ConvWinograd *c = NULL;
    if (!conv_onednn_available()) {
        ck_assert_int_eq(conv_winograd_create(8, 8, 8, 8, 5, 4, &c), HS_E_INPUT);
        return;
    }
    ck_assert_int_eq(conv_winograd_create(8, 8, 8, 8, 3, 4, &c), HS_E_INPUT);
    ck_assert_ptr_null(c);
    ck_assert_int_eq(conv_winograd_create(8, 8, 8, 8, 5, 4, &c), HS_OK);
    conv_winograd_free(c);
    conv_winograd_free(NULL);
}
END_TEST

/* Forward and backward-data against the naive loops, per element, relative to S. */
START_TEST(test_matches_naive)
{
    if (!conv_onednn_available()) return;
    gsl_rng *r = test_rng(36);
    double worst_forward = 0, worst_backward = 0, worst_weights = 0;
    for (int trial = 0; trial < 24; trial++) {
        const int B = trial < 3 ? 1 + trial * 9 : rand_int(r, 1, 12);
        const int C = trial == 0 ? 1 : rand_int(r, 1, 40), OC = rand_int(r, 1, 40);
        const int H = trial == 1 ? 1 : rand_int(r, 1, 17), W = trial == 2 ? 2 : rand_int(r, 1, 17);
        const size_t nin = (size_t)B * C * H * W, nout = (size_t)B * OC * H * W, nw = (size_t)OC * C * 25;
        float *x = alloc_uniform(nin, r), *w = alloc_uniform(nw, r), *dy = alloc_uniform(nout, r);
        float *ax = alloc_abs(x, nin), *aw = alloc_abs(w, nw), *ady = alloc_abs(dy, nout);
        float *bias = calloc(OC, sizeof(float)), *db = calloc(OC, sizeof(float));
        float *y = malloc(sizeof(float) * nout), *ref = malloc(sizeof(float) * nout), *scale = malloc(sizeof(float) * nout);
        float *dx = calloc(nin, sizeof(float)), *dref = calloc(nin, sizeof(float)), *dscale = calloc(nin, sizeof(float));
        float *dw = calloc(nw, sizeof(float)), *dwref = calloc(nw, sizeof(float)), *dwscale = calloc(nw, sizeof(float));
        ConvWinograd *c = NULL;
        ck_assert_int_eq(conv_winograd_create(C, H, W, OC, 5, B, &c), HS_OK);
        conv_winograd_forward(c, y, x, w, B);
        conv2d_forward_naive(ref, x, w, bias, B, C, H, W, OC, 5);
        conv2d_forward_naive(scale, ax, aw, bias, B, C, H, W, OC, 5);
        double e = worst_scaled(y, ref, scale, nout);
        if (e > worst_forward) worst_forward = e;
        /* backward-data adds: start from 1 in both */
        for (size_t i = 0; i < nin; i++) dx[i] = dref[i] = 1.0f;
        conv_winograd_backward_data(c, dx, dy, w, B);
        conv2d_backward_naive(dref, dwref, db, dy, x, w, B, C, H, W, OC, 5);
        conv2d_backward_naive(dscale, dwscale, db, ady, ax, aw, B, C, H, W, OC, 5);
        for (size_t i = 0; i < nin; i++) dscale[i] += 1.0f; /* the 1 added in */
        double eb = worst_scaled(dx, dref, dscale, nin);
        if (eb > worst_backward) worst_backward = eb;
        /* backward-weights adds too: from 1 */
        for (size_t i = 0; i < nw; i++) dw[i] = 1.0f, dwref[i] += 1.0f, dwscale[i] += 1.0f;
        /* a kernel's 25 values come out of one transform of its 64 position sums, whose
         * rounding spreads over all of them: the scale is the kernel's largest S */
        for (size_t k = 0; k < nw; k += 25) {
            float top = 0;
            for (int j = 0; j < 25; j++) top = dwscale[k + j] > top ? dwscale[k + j] : top;
            for (int j = 0; j < 25; j++) dwscale[k + j] = top;
        }
        conv_winograd_backward_weights(c, dw, dy, x, B);
        double ew = worst_scaled(dw, dwref, dwscale, nw);
        if (ew > worst_weights) worst_weights = ew;
        ck_assert_msg(e <= WINO_TOLERANCE && eb <= WINO_TOLERANCE && ew <= WINO_TOLERANCE,
                      "B %d C %d OC %d %dx%d: forward %.3g, backward-data %.3g, backward-weights %.3g of S", B, C, OC,
                      H, W, e, eb, ew);
        conv_winograd_free(c);
        free(x), free(w), free(dy), free(ax), free(aw), free(ady), free(bias), free(db);
        free(y), free(ref), free(scale), free(dx), free(dref), free(dscale), free(dw), free(dwref), free(dwscale);
    }
    printf("winograd F(4x4,5x5): worst |error| / sum |w||x|: forward %.3g, backward-data %.3g, "
           "backward-weights %.3g\n", worst_forward, worst_backward, worst_weights);
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_gemm_matches_onednn)
{
    if (!conv_onednn_available() || !conv_winograd_gemm_available()) return;
    gsl_rng *r = test_rng(38);
    for (int trial = 0; trial < 200; trial++) {
        /* the block's shapes first (forward, backward-data, backward-weights of the CNN's
         * second block, the deepest product), then random ones */
        static const int shapes[][4] = {{0, 64, 64, 32}, {0, 64, 32, 64}, {1, 32, 64, 64}, {0, 7, 16, 384}};
        const int trans_a = trial < 4 ? shapes[trial][0] : rand_int(r, 0, 1);
        const int M = trial < 4 ? shapes[trial][1] : rand_int(r, 1, 80);
        const int N = trial < 4 ? shapes[trial][2] : 16 * rand_int(r, 1, 9);
        const int K = trial < 4 ? shapes[trial][3] : trial % 10 == 0 ? rand_int(r, 300, CONV_WINOGRAD_GEMM_MAX_K)
                                                                    : rand_int(r, 1, 80);
        const int beta = trial < 4 ? trial == 2 : rand_int(r, 0, 1);
        if (!conv_winograd_gemm_fits(M, K, beta)) continue; /* oneDNN's gemv: not taken */
        const int lda = (trans_a ? M : K) + rand_int(r, 0, 20), ldb = N + rand_int(r, 0, 20);
        const int ldc = N + rand_int(r, 0, 20);
        const size_t na = (size_t)(trans_a ? K : M) * lda, nb = (size_t)K * ldb, nc = (size_t)M * ldc;
        float *a = alloc_uniform(na, r), *b = alloc_uniform(nb, r), *c0 = alloc_uniform(nc, r);
        float *c1 = malloc(sizeof(float) * nc);
        memcpy(c1, c0, sizeof(float) * nc);
        conv_onednn_sgemm(trans_a, 0, M, N, K, a, lda, b, ldb, beta ? 1.0f : 0.0f, c0, ldc);
        conv_winograd_gemm(trans_a, M, N, K, a, lda, b, ldb, beta, c1, ldc);
        ck_assert_msg(memcmp(c0, c1, sizeof(float) * nc) == 0, "trans_a %d M %d N %d K %d beta %d: other bits",
                      trans_a, M, N, K, beta);
        free(a), free(b), free(c0), free(c1);
    }
    gsl_rng_free(r);
}
END_TEST

/* The block's backward the long way: the pooled gradient unpooled to a plane (B, OC, H, W),
 * each channel's plane summed in row-major order, backward-weights and backward-data of
 * the plane. The fused backward must give these bits. */
static void unfused_block_backward(ConvWinograd *c, float *din, float *dw, float *db, const float *dout,
                                   const float *out, const int *arg, const float *x, const float *w, int B, int OC,
                                   int H, int W)
{
    const size_t hw = (size_t)H * W, pooled = (size_t)OC * (H / 2) * (W / 2);
    float *plane = malloc(sizeof(float) * B * OC * hw);
    for (int s = 0; s < B; s++) {
        float *g = plane + (size_t)s * OC * hw;
        conv2d_relu_unpool_sample(g, dout + s * pooled, out + s * pooled, arg + s * pooled, OC, H, W);
        for (int o = 0; o < OC; o++) {
            float sum = 0.0f;
            for (size_t p = 0; p < hw; p++) sum += g[(size_t)o * hw + p];
            db[o] += sum;
        }
    }
    conv_winograd_backward_weights(c, dw, plane, x, B);
    conv_winograd_backward_data(c, din, plane, w, B);
    free(plane);
}

/* The block: pooled output, argmax routing and every gradient against the naive block;
 * the generic transforms give the AVX-512 ones' bits, the fused backward the unfused
 * one's. */
START_TEST(test_block_matches_naive_and_generic)
{
    if (!conv_onednn_available()) return;
    gsl_rng *r = test_rng(37);
    for (int trial = 0; trial < 6; trial++) {
        const int B = rand_int(r, 1, 19), C = rand_int(r, 8, 40), OC = rand_int(r, 1, 40);
        const int H = rand_int(r, 2, 15), W = rand_int(r, 2, 15);
        const size_t nin = (size_t)B * C * H * W, nw = (size_t)OC * C * 25;
        const size_t npool = (size_t)B * OC * (H / 2) * (W / 2);
        float *x = alloc_uniform(nin, r), *w = alloc_uniform(nw, r), *b = alloc_uniform(OC, r);
        float *dout = alloc_uniform(npool, r);
        float *out[3], *din[3], *dw[3], *db[3];
        int *arg[3];
        for (int k = 0; k < 3; k++) {
            out[k] = malloc(sizeof(float) * (npool + 1)), arg[k] = malloc(sizeof(int) * (npool + 1));
            din[k] = calloc(nin, sizeof(float)), dw[k] = calloc(nw, sizeof(float)), db[k] = calloc(OC, sizeof(float));
        }
        for (int k = 0; k < 2; k++) /* the Winograd block writes din: what was there must not count */
            for (size_t i = 0; i < nin; i++) din[k][i] = (float)(i % 7) - 3.0f;
        ConvWinograd *c = NULL;
        ck_assert_int_eq(conv_winograd_create(C, H, W, OC, 5, 19, &c), HS_OK);
        for (int k = 0; k < 2; k++) {
            conv_winograd_set_vector(c, k == 0);
            conv_winograd_relu_pool_forward(c, out[k], arg[k], x, w, b, B);
            conv_winograd_relu_pool_backward(c, din[k], dw[k], db[k], dout, out[k], arg[k], x, w, B);
        }
        ck_assert_mem_eq(out[1], out[0], sizeof(float) * npool);
        ck_assert_mem_eq(din[1], din[0], sizeof(float) * nin);
        ck_assert_mem_eq(dw[1], dw[0], sizeof(float) * nw);
        ck_assert_mem_eq(db[1], db[0], sizeof(float) * OC);
        for (int k = 0; k < 2; k++) { /* the fused backward against the unfused, both kinds */
            float *fdin = calloc(nin, sizeof(float)), *fdw = calloc(nw, sizeof(float)), *fdb = calloc(OC, sizeof(float));
            conv_winograd_set_vector(c, k == 0);
            unfused_block_backward(c, fdin, fdw, fdb, dout, out[0], arg[0], x, w, B, OC, H, W);
            ck_assert_mem_eq(fdin, din[0], sizeof(float) * nin);
            ck_assert_mem_eq(fdw, dw[0], sizeof(float) * nw);
            ck_assert_mem_eq(fdb, db[0], sizeof(float) * OC);
            free(fdin), free(fdw), free(fdb);
        }
        conv2d_relu_pool_forward_naive(out[2], arg[2], x, w, b, B, C, H, W, OC, 5);
        conv2d_relu_pool_backward_naive(din[2], dw[2], db[2], dout, out[2], arg[2], x, w, B, C, H, W, OC, 5);
        ck_assert_double_le(test_relative_distance(out[0], out[2], npool), 1e-5);
        ck_assert_mem_eq(arg[0], arg[2], sizeof(int) * npool); /* no near-ties in this data */
        ck_assert_double_le(test_relative_distance(din[0], din[2], nin), 1e-5);
        ck_assert_double_le(test_relative_distance(dw[0], dw[2], nw), 1e-5);
        ck_assert_double_le(test_relative_distance(db[0], db[2], OC), 1e-5);
        conv_winograd_free(c);
        for (int k = 0; k < 3; k++) free(out[k]), free(arg[k]), free(din[k]), free(dw[k]), free(db[k]);
        free(x), free(w), free(b), free(dout);
    }
    gsl_rng_free(r);
}
END_TEST

/* ---- whole models ---- */

START_TEST(test_model_gradient_and_determinism)
{
    ModelSpec wino = test_cnn_spec(MODEL_KERNELS_WINOGRAD, 64), openblas = test_cnn_spec(MODEL_KERNELS_OPENBLAS, 64);
    if (!conv_onednn_available()) {
        ModelWorkspace *ws = NULL;
        ck_assert(!model_kernels_available(MODEL_KERNELS_WINOGRAD));
        ck_assert_int_eq(model_workspace_create(&wino, &ws), HS_E_INPUT);
        return;
    }
    ck_assert(model_kernels_available(MODEL_KERNELS_WINOGRAD));
    ck_assert_int_eq(model_kernels_resolve(&wino), MODEL_KERNELS_WINOGRAD);
    gsl_rng *r = test_rng(38);
    Model *m = NULL;
    ck_assert_int_eq(model_create(&openblas, r, &m), HS_OK);
    const size_t n = model_param_count(m), nx = (size_t)64 * 28 * 28;
    float *x = malloc(sizeof(float) * nx);
    int y[64];
    for (size_t i = 0; i < nx; i++) x[i] = (float)gsl_rng_uniform(r);
    for (int i = 0; i < 64; i++) y[i] = rand_int(r, 0, 9);
    float *g[4];
    for (int k = 0; k < 4; k++) g[k] = malloc(sizeof(float) * n);
    test_cnn_kernels_against_openblas(m, MODEL_KERNELS_WINOGRAD, x, y, g, 1e-4);
    /* one workspace after other batch sizes: the fresh one's bits; the inference pass's
     * loss is the training forward's */
    ModelWorkspace *ws = NULL;
    ck_assert_int_eq(model_workspace_create(&wino, &ws), HS_OK);
    double loss;
    memset(g[3], 0, sizeof(float) * n);
    ck_assert_int_eq(model_grad_full_at(m, model_params(m), g[3], ws, x, y, 5, &loss), HS_OK);
    ck_assert_int_eq(model_grad_full_at(m, model_params(m), g[3], ws, x, y, 17, &loss), HS_OK);
    memset(g[3], 0, sizeof(float) * n);
    ck_assert_int_eq(model_grad_full_at(m, model_params(m), g[3], ws, x, y, 61, &loss), HS_OK);
    ck_assert_mem_eq(g[3], g[1], sizeof(float) * n); /* g[1]: batch 61 on a fresh workspace */
    const float *logits = model_forward(m, ws, x, 61);
    ck_assert_ptr_nonnull(logits);
    double inferred = softmax_crossentropy(NULL, logits, y, 61, 10, NULL);
    ck_assert(memcmp(&inferred, &loss, sizeof loss) == 0);
    model_workspace_free(ws);
    /* a 3x3 CNN on winograd runs every block on oneDNN: onednn's bits */
    ModelSpec small_onednn = test_cnn_spec(MODEL_KERNELS_ONEDNN, 8), small_wino = test_cnn_spec(MODEL_KERNELS_WINOGRAD, 8);
    small_onednn.kernel = small_wino.kernel = 3;
    Model *m3 = NULL;
    ck_assert_int_eq(model_create(&small_onednn, r, &m3), HS_OK);
    const size_t n3 = model_param_count(m3);
    float *g3[2];
    for (int k = 0; k < 2; k++) {
        ModelWorkspace *w3 = NULL;
        g3[k] = calloc(n3, sizeof(float));
        ck_assert_int_eq(model_workspace_create(k ? &small_wino : &small_onednn, &w3), HS_OK);
        ck_assert_int_eq(model_grad_full_at(m3, model_params(m3), g3[k], w3, x, y, 8, &loss), HS_OK);
        model_workspace_free(w3);
    }
    ck_assert_mem_eq(g3[0], g3[1], sizeof(float) * n3);
    free(g3[0]), free(g3[1]);
    model_free(m3);
    for (int k = 0; k < 4; k++) free(g[k]);
    free(x);
    model_free(m);
    gsl_rng_free(r);
}
END_TEST

static Suite *conv_winograd_suite(void)
{
    Suite *s = suite_create("conv_winograd");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300); /* the naive loops are slow under sanitizers */
    tcase_add_test(tc, test_refused_without_onednn_or_other_kernels);
    tcase_add_test(tc, test_matches_naive);
    tcase_add_test(tc, test_gemm_matches_onednn);
    tcase_add_test(tc, test_block_matches_naive_and_generic);
    tcase_add_test(tc, test_model_gradient_and_determinism);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(conv_winograd_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
