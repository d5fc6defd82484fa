/* check_conv_onednn.c — the oneDNN convolutions (models/conv_onednn.c) against the
 * reference path (kernels.c's im2col + OpenBLAS), the tested one:
 *   - on small whole numbers every sum is exact in float whatever the order, so there
 *     the two paths must give the same bits (forward, argmax routing, every gradient);
 *   - on real-valued data they agree to rounding: the stated tolerance is
 *     |a - b| <= 1e-5 + 1e-5 |b| per element for one layer, and for a whole CNN gradient
 *     ||g_onednn - g_openblas|| <= 1e-5 ||g_openblas|| (what is measured is ~1e-7);
 *   - the pooling's AVX-512 versions against their generic twins, and a linked block
 *     (conv_onednn_link) against an unlinked one: the same bits;
 *   - determinism: the same gradient, bit for bit, from a second workspace, from
 *     another thread, and again after other batch sizes ran in between.
 * Without oneDNN in the build every case checks that the kernels are refused and returns. */
#include "models/conv_onednn.h"
#include "models/kernels.h"
#include "models/model.h"
#include "tests/test_cnn.h"
#include "base/hs_error.h"

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
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

/* whole numbers in [-2, 2] (exact) or uniform in [-1, 1) */
static float *alloc_data(size_t n, gsl_rng *r, int exact)
{
    float *x = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) x[i] = exact ? (float)rand_int(r, -2, 2) : (float)(2 * gsl_rng_uniform(r) - 1);
    return x;
}

static float *alloc_copy(const float *x, size_t n)
{
    float *y = malloc(sizeof(float) * (n ? n : 1));
    memcpy(y, x, sizeof(float) * n);
    return y;
}

/* max over elements of |a - b| / (atol + rtol |b|): <= 1 is within tolerance; NaN fails */
static double worst_ratio(const float *a, const float *b, size_t n, double atol, double rtol)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)a[i] - b[i]) / (atol + rtol * fabs((double)b[i]));
        if (!(err <= worst)) worst = err;
    }
    return worst;
}

/* The argmax of conv_onednn is private: the pooled output and every gradient are what
 * is compared. B up to 19 covers chunks of 8 and the single samples after them; OC up to
 * 40 covers blocks of 16 channels with a partial last one; odd sides drop a row. */
START_TEST(test_block_matches_reference)
{
    if (!conv_onednn_available()) {
        ConvOnednn *c = NULL;
        ck_assert_int_eq(conv_onednn_create_block(1, 4, 4, 1, 3, 1, &c), HS_E_INPUT);
        return;
    }
    gsl_rng *r = test_rng(31);
    const int kernels[] = {1, 3, 5};
    for (int trial = 0; trial < 40; trial++) {
        const int exact = trial % 2 == 0;
        int B = rand_int(r, 1, 19), C = rand_int(r, 1, 20), H = rand_int(r, 2, 13), W = rand_int(r, 2, 13);
        int OC = rand_int(r, 1, 40), K = kernels[trial % 3];
        size_t nin = (size_t)B * C * H * W, nout = (size_t)B * OC * (H / 2) * (W / 2), nw = (size_t)OC * C * K * K;
        float *in = alloc_data(nin, r, exact), *w = alloc_data(nw, r, exact), *b = alloc_data(OC, r, exact);
        float *col = malloc(sizeof(float) * conv2d_col_floats(C, H, W, K)), *plane = malloc(sizeof(float) * OC * H * W);
        float *o_ref = malloc(sizeof(float) * (nout + 1)), *o_dnn = malloc(sizeof(float) * (nout + 1));
        int *a_ref = malloc(sizeof(int) * (nout + 1)), *a_dnn = malloc(sizeof(int) * (nout + 1));
        ConvOnednn *c = NULL;
        ck_assert_int_eq(conv_onednn_create_block(C, H, W, OC, K, B, &c), HS_OK);
        conv2d_relu_pool_forward(o_ref, a_ref, in, w, b, col, plane, B, C, H, W, OC, K);
        conv_onednn_relu_pool_forward(c, o_dnn, a_dnn, in, w, b, B);
        if (exact) ck_assert_mem_eq(o_dnn, o_ref, sizeof(float) * nout);
        else ck_assert_double_le(worst_ratio(o_dnn, o_ref, nout, 1e-5, 1e-5), 1.0);
        if (exact) {
            /* the same argmax (ties are exact here: the first maximum on both sides), so
             * every gradient is exact too; they add onto what is there */
            float *dout = alloc_data(nout, r, 1), *din_ref = alloc_data(nin, r, 1), *dw_ref = alloc_data(nw, r, 1);
            float *db_ref = alloc_data(OC, r, 1);
            float *din = alloc_copy(din_ref, nin), *dw = alloc_copy(dw_ref, nw), *db = alloc_copy(db_ref, OC);
            for (int pass = 0; pass < 2; pass++) {
                conv2d_relu_pool_backward(pass ? NULL : din_ref, dw_ref, db_ref, dout, o_ref, a_ref, in, w, col, plane,
                                          B, C, H, W, OC, K);
                conv_onednn_relu_pool_backward(c, pass ? NULL : din, dw, db, dout, a_dnn, in, w, B);
                ck_assert_mem_eq(din, din_ref, sizeof(float) * nin);
                ck_assert_mem_eq(dw, dw_ref, sizeof(float) * nw);
                ck_assert_mem_eq(db, db_ref, sizeof(float) * OC);
            }
            free(dout), free(din_ref), free(dw_ref), free(db_ref), free(din), free(dw), free(db);
        }
        conv_onednn_free(c);
        free(in), free(w), free(b), free(col), free(plane), free(o_ref), free(o_dnn), free(a_ref), free(a_dnn);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_plain_matches_reference)
{
    if (!conv_onednn_available()) return;
    gsl_rng *r = test_rng(32);
    const int kernels[] = {1, 3, 5};
    for (int trial = 0; trial < 30; trial++) {
        const int exact = trial % 2 == 0;
        int B = rand_int(r, 1, 19), C = rand_int(r, 1, 20), H = rand_int(r, 1, 11), W = rand_int(r, 1, 11);
        int OC = rand_int(r, 1, 40), K = kernels[trial % 3], S = rand_int(r, 1, 2);
        int OH = conv2d_out_size(H, K, S), OW = conv2d_out_size(W, K, S);
        size_t nin = (size_t)B * C * H * W, nout = (size_t)B * OC * OH * OW, nw = (size_t)OC * C * K * K;
        float *in = alloc_data(nin, r, exact), *w = alloc_data(nw, r, exact);
        float *col = malloc(sizeof(float) * conv2d_strided_col_floats(C, H, W, K, S));
        float *o_ref = malloc(sizeof(float) * nout), *o_dnn = malloc(sizeof(float) * nout);
        ConvOnednn *c = NULL;
        ck_assert_int_eq(conv_onednn_create_plain(C, H, W, OC, K, S, B, &c), HS_OK);
        conv2d_strided_forward(o_ref, in, w, col, B, C, H, W, OC, K, S);
        conv_onednn_forward(c, o_dnn, in, w, B);
        float *dout = alloc_data(nout, r, exact), *din_ref = alloc_data(nin, r, exact), *dw_ref = alloc_data(nw, r, exact);
        float *din = alloc_copy(din_ref, nin), *dw = alloc_copy(dw_ref, nw);
        conv2d_strided_backward(din_ref, dw_ref, dout, in, w, col, B, C, H, W, OC, K, S);
        conv_onednn_backward(c, din, dw, dout, in, w, B);
        if (exact) {
            ck_assert_mem_eq(o_dnn, o_ref, sizeof(float) * nout);
            ck_assert_mem_eq(din, din_ref, sizeof(float) * nin);
            ck_assert_mem_eq(dw, dw_ref, sizeof(float) * nw);
        } else {
            ck_assert_double_le(worst_ratio(o_dnn, o_ref, nout, 1e-5, 1e-5), 1.0);
            ck_assert_double_le(worst_ratio(din, din_ref, nin, 1e-5, 1e-5), 1.0);
            ck_assert_double_le(worst_ratio(dw, dw_ref, nw, 1e-5, 1e-5), 1.0);
        }
        conv_onednn_free(c);
        free(in), free(w), free(col), free(o_ref), free(o_dnn), free(dout), free(din_ref), free(dw_ref), free(din);
        free(dw);
    }
    gsl_rng_free(r);
}
END_TEST

/* The pooling's AVX-512 versions (taken where the processor has AVX-512F) against the
 * generic loops, on real values with NaN, -0.0f and ties in the windows: the same bits;
 * each also as an inference pass (no argmax), which must give the training pass's bits. */
START_TEST(test_pool_vector_matches_generic)
{
    if (!conv_onednn_available()) return;
    gsl_rng *r = test_rng(33);
    for (int trial = 0; trial < 12; trial++) {
        int B = rand_int(r, 1, 19), C = rand_int(r, 1, 5), H = rand_int(r, 2, 35), W = rand_int(r, 2, 35);
        int OC = rand_int(r, 1, 40), K = trial % 2 ? 3 : 1;
        size_t nin = (size_t)B * C * H * W, nout = (size_t)B * OC * (H / 2) * (W / 2), nw = (size_t)OC * C * K * K;
        /* K = 1 with whole numbers gives ties and zeros; a NaN weight reaches one channel */
        float *in = alloc_data(nin, r, K == 1), *w = alloc_data(nw, r, K == 1), *b = alloc_data(OC, r, 0);
        if (trial % 4 == 3) w[0] = NAN;
        if (trial % 4 == 2) in[0] = -0.0f;
        ConvOnednn *c = NULL;
        ck_assert_int_eq(conv_onednn_create_block(C, H, W, OC, K, B, &c), HS_OK);
        float *o[2], *din[2], *dw[2], *db[2];
        int *a[2];
        float *dout = alloc_data(nout, r, 0);
        for (int v = 0; v < 2; v++) {
            conv_onednn_set_vector(c, v);
            o[v] = malloc(sizeof(float) * (nout + 1)), a[v] = malloc(sizeof(int) * (nout + 1));
            din[v] = calloc(nin, sizeof(float)), dw[v] = calloc(nw, sizeof(float)), db[v] = calloc(OC, sizeof(float));
            /* an inference pass (argmax NULL) first: the same pooled bits, and the
             * training pass after it is not disturbed */
            float *inferred = malloc(sizeof(float) * (nout + 1));
            conv_onednn_relu_pool_forward(c, inferred, NULL, in, w, b, B);
            conv_onednn_relu_pool_forward(c, o[v], a[v], in, w, b, B);
            ck_assert_mem_eq(inferred, o[v], sizeof(float) * nout);
            free(inferred);
            conv_onednn_relu_pool_backward(c, din[v], dw[v], db[v], dout, a[v], in, w, B);
        }
        ck_assert_mem_eq(o[0], o[1], sizeof(float) * nout);
        ck_assert_mem_eq(din[0], din[1], sizeof(float) * nin);
        ck_assert_mem_eq(dw[0], dw[1], sizeof(float) * nw);
        ck_assert_mem_eq(db[0], db[1], sizeof(float) * OC);
        for (int v = 0; v < 2; v++) free(o[v]), free(a[v]), free(din[v]), free(dw[v]), free(db[v]);
        conv_onednn_free(c);
        free(in), free(w), free(b), free(dout);
    }
    gsl_rng_free(r);
}
END_TEST

/* A linked second block reads the first one's pooled output in its own layout: the same
 * bits as an unlinked one reading the NCHW copy; after the input is written over and
 * conv_onednn_forget, the new values; a different pointer or batch size never reads the
 * linked copy. */
START_TEST(test_link_is_a_shortcut)
{
    if (!conv_onednn_available()) return;
    gsl_rng *r = test_rng(34);
    const int B = 11, C = 1, H = 14, W = 14, C1 = 32, C2 = 20, K = 5, H2 = H / 2, W2 = W / 2;
    size_t nin = (size_t)B * C * H * W, nmid = (size_t)B * C1 * H2 * W2, nout = (size_t)B * C2 * (H2 / 2) * (W2 / 2);
    size_t nw1 = (size_t)C1 * C * K * K, nw2 = (size_t)C2 * C1 * K * K;
    float *in = alloc_data(nin, r, 0), *w1 = alloc_data(nw1, r, 0), *b1 = alloc_data(C1, r, 0);
    float *w2 = alloc_data(nw2, r, 0), *b2 = alloc_data(C2, r, 0), *dout = alloc_data(nout, r, 0);
    ConvOnednn *first = NULL, *linked = NULL, *alone = NULL;
    ck_assert_int_eq(conv_onednn_create_block(C, H, W, C1, K, B, &first), HS_OK);
    ck_assert_int_eq(conv_onednn_create_block(C1, H2, W2, C2, K, B, &linked), HS_OK);
    ck_assert_int_eq(conv_onednn_create_block(C1, H2, W2, C2, K, B, &alone), HS_OK);
    ck_assert_int_eq(conv_onednn_link(first, linked, B), HS_OK);
    ck_assert_int_eq(conv_onednn_link(first, alone, B), HS_E_INPUT); /* one block fed at a time */
    float *mid = malloc(sizeof(float) * nmid), *other = malloc(sizeof(float) * nmid);
    int *amid = malloc(sizeof(int) * nmid), *a[2];
    float *o[2], *din[2], *dw[2], *db[2];
    for (int round = 0; round < 4; round++) {
        /* 0: the linked copy; 1: written over, then forgotten; 2: another pointer; 3: B - 3 */
        const int n = round == 3 ? B - 3 : B;
        conv_onednn_relu_pool_forward(first, mid, amid, in, w1, b1, n);
        const float *x = mid;
        if (round == 1) {
            for (size_t i = 0; i < nmid; i++) mid[i] = 0.5f * mid[i] + 0.25f;
            conv_onednn_forget(linked);
        }
        if (round == 2) x = memcpy(other, mid, sizeof(float) * nmid);
        ConvOnednn *pair[2] = {linked, alone};
        for (int v = 0; v < 2; v++) {
            o[v] = malloc(sizeof(float) * nout), a[v] = malloc(sizeof(int) * nout);
            din[v] = calloc(nmid, sizeof(float)), dw[v] = calloc(nw2, sizeof(float)), db[v] = calloc(C2, sizeof(float));
            conv_onednn_relu_pool_forward(pair[v], o[v], a[v], x, w2, b2, n);
            conv_onednn_relu_pool_backward(pair[v], din[v], dw[v], db[v], dout, a[v], x, w2, n);
        }
        const size_t n_out = nout / B * n, n_mid = nmid / B * n;
        ck_assert_mem_eq(o[0], o[1], sizeof(float) * n_out);
        ck_assert_mem_eq(din[0], din[1], sizeof(float) * n_mid);
        ck_assert_mem_eq(dw[0], dw[1], sizeof(float) * nw2);
        ck_assert_mem_eq(db[0], db[1], sizeof(float) * C2);
        for (int v = 0; v < 2; v++) free(o[v]), free(a[v]), free(din[v]), free(dw[v]), free(db[v]);
    }
    conv_onednn_free(first), conv_onednn_free(linked), conv_onednn_free(alone);
    free(in), free(w1), free(b1), free(w2), free(b2), free(dout), free(mid), free(other), free(amid);
    gsl_rng_free(r);
}
END_TEST

/* ---- whole models: kernels = onednn against openblas, and determinism ---- */

START_TEST(test_model_kernels_agree_and_are_deterministic)
{
    ModelSpec onednn = test_cnn_spec(MODEL_KERNELS_ONEDNN, 64), openblas = test_cnn_spec(MODEL_KERNELS_OPENBLAS, 64);
    ModelSpec automatic = test_cnn_spec(MODEL_KERNELS_AUTO, 64);
    if (!conv_onednn_available()) {
        ModelWorkspace *ws = NULL;
        ck_assert_int_eq(model_kernels_resolve(&automatic), MODEL_KERNELS_OPENBLAS);
        ck_assert_int_eq(model_workspace_create(&onednn, &ws), HS_E_INPUT);
        return;
    }
    ck_assert_int_eq(model_kernels_resolve(&automatic), MODEL_KERNELS_ONEDNN);
    ModelSpec mlp = automatic;
    mlp.arch = MODEL_ARCH_MLP;
    ck_assert_int_eq(model_kernels_resolve(&mlp), MODEL_KERNELS_OPENBLAS); /* auto leaves an MLP alone */
    gsl_rng *r = test_rng(35);
    Model *m = NULL;
    ck_assert_int_eq(model_create(&openblas, r, &m), HS_OK);
    const size_t n = model_param_count(m), nx = (size_t)64 * 28 * 28;
    float *x = malloc(sizeof(float) * nx);
    int y[64];
    for (size_t i = 0; i < nx; i++) x[i] = (float)gsl_rng_uniform(r);
    for (int i = 0; i < 64; i++) y[i] = rand_int(r, 0, 9);
    float *g[5];
    for (int k = 0; k < 5; k++) g[k] = malloc(sizeof(float) * n);
    test_cnn_kernels_against_openblas(m, MODEL_KERNELS_ONEDNN, x, y, g, 1e-5);
    /* one workspace, batch 64 after batches of other sizes and a split pass: the same bits
     * as on a fresh one (nothing of an earlier call leaks into a later one) */
    ModelWorkspace *ws = NULL;
    ck_assert_int_eq(model_workspace_create(&onednn, &ws), HS_OK);
    double loss;
    memset(g[3], 0, sizeof(float) * n);
    ck_assert_int_eq(model_grad_full_at(m, model_params(m), g[3], ws, x, y, 5, &loss), HS_OK);
    ck_assert_int_eq(model_grad_bottom_at(m, model_params(m), g[3], ws, 1, x, y, 17, &loss, NULL), HS_OK);
    /* the top side from activations of its own (the second block's input is not the
     * first block's output there) */
    float *act = malloc(sizeof(float) * (size_t)64 * model_split_floats(m, 1));
    for (size_t i = 0; i < (size_t)64 * model_split_floats(m, 1); i++) act[i] = (float)gsl_rng_uniform(r);
    ck_assert_int_eq(model_grad_top_at(m, model_params(m), g[3], ws, 1, act, y, 64, &loss), HS_OK);
    free(act);
    memset(g[3], 0, sizeof(float) * n);
    ck_assert_int_eq(model_grad_full_at(m, model_params(m), g[3], ws, x, y, 64, &loss), HS_OK);
    /* the evaluation's inference pass (model_forward: no pooling positions kept) gives the
     * training forward's logits: the same loss to the bit, on this workspace and a fresh
     * one, and the gradient after it is unchanged (checked against `fresh` below) */
    for (int k = 0; k < 2; k++) {
        ModelWorkspace *other = NULL;
        ck_assert_int_eq(model_workspace_create(&onednn, &other), HS_OK);
        const float *logits = model_forward(m, k ? other : ws, x, 64);
        ck_assert_ptr_nonnull(logits);
        double inferred = softmax_crossentropy(NULL, logits, y, 64, 10, NULL);
        ck_assert(memcmp(&inferred, &loss, sizeof loss) == 0);
        model_workspace_free(other);
    }
    memset(g[3], 0, sizeof(float) * n);
    ck_assert_int_eq(model_grad_full_at(m, model_params(m), g[3], ws, x, y, 64, &loss), HS_OK);
    TestGradJob fresh = {m, MODEL_KERNELS_ONEDNN, x, y, 64, g[4], 0, 0};
    test_grad_job(&fresh);
    ck_assert_mem_eq(g[3], g[4], sizeof(float) * n);
    model_workspace_free(ws);
    for (int k = 0; k < 5; k++) free(g[k]);
    free(x);
    model_free(m);
    gsl_rng_free(r);
}
END_TEST

static Suite *conv_onednn_suite(void)
{
    Suite *s = suite_create("conv_onednn");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300); /* the im2col reference is slow under sanitizers */
    tcase_add_test(tc, test_block_matches_reference);
    tcase_add_test(tc, test_plain_matches_reference);
    tcase_add_test(tc, test_pool_vector_matches_generic);
    tcase_add_test(tc, test_link_is_a_shortcut);
    tcase_add_test(tc, test_model_kernels_agree_and_are_deterministic);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(conv_onednn_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
