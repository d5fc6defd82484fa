/* test_cnn.c — see test_cnn.h. */
#include "tests/test_cnn.h"

#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

ModelSpec test_cnn_spec(ModelKernels kernels, int batch)
{
    ModelSpec s;
    memset(&s, 0, sizeof s);
    s.arch = MODEL_ARCH_CNN;
    s.in_channels = 1, s.in_height = 28, s.in_width = 28, s.classes = 10;
    s.conv_channels[0] = 32, s.conv_channels[1] = 64;
    s.kernel = 5, s.hidden = 128, s.batch = batch;
    s.kernels = kernels;
    return s;
}

void *test_grad_job(void *arg)
{
    TestGradJob *j = arg;
    ModelSpec s = test_cnn_spec(j->kernels, 64);
    ModelWorkspace *ws = NULL;
    j->status = model_workspace_create(&s, &ws);
    if (j->status != HS_OK) return NULL;
    memset(j->grad, 0, sizeof(float) * model_param_count(j->m));
    j->status = model_grad_full_at(j->m, model_params((Model *)j->m), j->grad, ws, j->x, j->y, j->B, &j->loss);
    model_workspace_free(ws);
    return NULL;
}

double test_relative_distance(const float *a, const float *b, size_t n)
{
    double d = 0, norm = 0;
    for (size_t i = 0; i < n; i++) {
        d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        norm += (double)b[i] * b[i];
    }
    return norm > 0 ? sqrt(d / norm) : sqrt(d);
}

void test_cnn_kernels_against_openblas(const Model *m, ModelKernels kernels, const float *x, const int *y,
                                       float *g[3], double grad_tol)
{
    const size_t n = model_param_count(m);
    for (int bi = 0; bi < 2; bi++) {
        const int B = bi ? 61 : 64;
        TestGradJob ref = {m, MODEL_KERNELS_OPENBLAS, x, y, B, g[0], 0, 0}, got = {m, kernels, x, y, B, g[1], 0, 0};
        test_grad_job(&ref);
        test_grad_job(&got);
        ck_assert_int_eq(ref.status, HS_OK);
        ck_assert_int_eq(got.status, HS_OK);
        ck_assert_double_le(fabs(got.loss - ref.loss), 1e-5 * fabs(ref.loss));
        const double d = test_relative_distance(g[1], g[0], n);
        printf("CNN gradient on kernels %s, batch %d: ||g - g_openblas|| / ||g_openblas|| = %.3g\n",
               kernels == MODEL_KERNELS_WINOGRAD ? "winograd" : kernels == MODEL_KERNELS_ONEDNN ? "onednn" : "other", B, d);
        ck_assert_double_le(d, grad_tol);
        /* the same bits from another workspace in another thread */
        TestGradJob again = {m, kernels, x, y, B, g[2], 0, 0};
        pthread_t thread;
        ck_assert_int_eq(pthread_create(&thread, NULL, test_grad_job, &again), 0);
        pthread_join(thread, NULL);
        ck_assert_int_eq(again.status, HS_OK);
        ck_assert_mem_eq(g[2], g[1], sizeof(float) * n);
        ck_assert(memcmp(&again.loss, &got.loss, sizeof(double)) == 0);
    }
}
