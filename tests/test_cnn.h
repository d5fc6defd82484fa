/* test_cnn.h — the Fashion-MNIST CNN of the kernel suites (check_conv_onednn,
 * check_conv_winograd): its spec, one gradient on a fresh workspace of given kernels, and
 * the check every kernel choice passes against the OpenBLAS reference (close to it, the
 * same bits from another thread). Both suites had written these again. */
#ifndef TESTS_TEST_CNN_H
#define TESTS_TEST_CNN_H

#include "models/model.h"

#include <stddef.h>

/* The CNN 32,64 with 5x5 kernels and 128 hidden units on 28x28 single-channel inputs. */
ModelSpec test_cnn_spec(ModelKernels kernels, int batch);

/* One gradient of m's parameters on batch (x, y) of B samples, on a fresh workspace of
 * `kernels` (batch 64): grad is zeroed first; status and loss are the outcome. A pthread
 * entry too, so that "another thread" runs the same call. */
typedef struct TestGradJob {
    const Model *m;
    ModelKernels kernels;
    const float *x;
    const int *y;
    int B;
    float *grad;
    double loss;
    int status;
} TestGradJob;
void *test_grad_job(void *job);

/* ||a - b|| / ||b|| (||a - b|| when b is zero). */
double test_relative_distance(const float *a, const float *b, size_t n);

/* For batches 64 and 61 (chunks of 8 and single samples after them): `kernels`' loss within
 * 1e-5 relative and gradient within grad_tol (relative distance) of OpenBLAS's, and the same
 * bits again from a fresh workspace in another thread. g[0..2] hold n floats each; g[1] ends
 * as `kernels`' gradient of batch 61. */
void test_cnn_kernels_against_openblas(const Model *m, ModelKernels kernels, const float *x, const int *y,
                                       float *g[3], double grad_tol);

#endif
