/* check_compress.c — the compressors against naive twins and hand examples, EF21 and
 * EControl state updates, ef and DGC (hand examples, momentum correction, clipping, masking,
 * warm-up), worker-side momentum (EF21-SGDM), wire sizes and their accounting in rounds.bytes, the ring
 * all-gather's closed-form time, compressed training on a convex problem, and the
 * [compression] section: round trip, defaults, errors with FILE:LINE. */
#include "sim/stages/compress.h"
#include "sim/run.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run_text(const char *text, const char *const *set, int n_set, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(text, set, n_set, ts, &diag);
    if (status != 0) fprintf(stderr, "%s\n", diag.message);
    return status;
}

/* The last metrics row's train loss, test loss and accuracy. */
static void last_metric(const TestSink *ts, double *train_loss, double *test_loss, double *accuracy)
{
    *train_loss = *test_loss = *accuracy = NAN;
    for (const char *p = strstr(ts->text, "metric "); p; p = strstr(p + 1, "metric ")) {
        double t, train, test, acc, bytes;
        int round, agent;
        if (sscanf(p, "metric %lf %d %d %lf %lf %lf %lf", &t, &round, &agent, &train, &test, &acc, &bytes) == 7) {
            *train_loss = train;
            *test_loss = test;
            *accuracy = acc;
        }
    }
}

static CompressionSpec spec_of(CompressScheme scheme, double ratio, FeedbackKind feedback)
{
    return (CompressionSpec){.present = 1, .scheme = scheme, .ratio = ratio, .feedback = feedback, .eta = 0.1,
                             .refresh = 1000, .explore = 0.1, .gamma = 0.1};
}

static size_t count_nonzero(const float *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += v[i] != 0.0f;
    return k;
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

START_TEST(test_select_matches_sort)
{
    /* differential: the quickselect against qsort, with and without many duplicates */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    for (int trial = 0; trial < 200; trial++) {
        size_t n = 1 + gsl_rng_uniform_int(rng, 300);
        float *a = malloc(n * sizeof *a), *sorted = malloc(n * sizeof *sorted);
        int levels = trial % 3 == 0 ? 3 : 1000000;
        for (size_t i = 0; i < n; i++) a[i] = (float)gsl_rng_uniform_int(rng, (unsigned long)levels);
        memcpy(sorted, a, n * sizeof *a);
        qsort(sorted, n, sizeof *sorted, compare_floats);
        size_t k = 1 + gsl_rng_uniform_int(rng, n);
        ck_assert(compress_select_largest(a, n, k) == sorted[n - k]);
        free(a);
        free(sorted);
    }
    gsl_rng_free(rng);
}
END_TEST

START_TEST(test_topk_keeps_exactly_the_k_largest)
{
    size_t n = 1000;
    CompressionSpec spec = spec_of(COMPRESS_TOPK, 0.037, FEEDBACK_NONE);
    Compressor *c;
    ck_assert_int_eq(compress_create(&spec, 1, 1, n, &c), 0);
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out), *magnitude = malloc(n * sizeof *magnitude);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    for (size_t i = 0; i < n; i++) in[i] = (float)(gsl_rng_uniform(rng) - 0.5);
    size_t k = compress_keep(0.037, n);
    ck_assert_uint_eq(k, 37);
    ck_assert_uint_eq(compress_apply(c, 0, in, out), k);
    ck_assert_uint_eq(count_nonzero(out, n), k);
    for (size_t i = 0; i < n; i++) magnitude[i] = fabsf(in[i]);
    qsort(magnitude, n, sizeof *magnitude, compare_floats);
    float kth = magnitude[n - k];
    for (size_t i = 0; i < n; i++) {
        if (fabsf(in[i]) >= kth) ck_assert(out[i] == in[i]); /* distinct values: no ties */
        else ck_assert(out[i] == 0.0f);
    }
    /* ties go to the lower indices, so exactly k are kept */
    float tied[8] = {1, -2, 2, 2, 0.5f, -2, 0, 2};
    float kept[8];
    compress_free(c);
    spec.ratio = 3.0 / 8;
    ck_assert_int_eq(compress_create(&spec, 1, 1, 8, &c), 0);
    ck_assert_uint_eq(compress_apply(c, 0, tied, kept), 3);
    float expect[8] = {0, -2, 2, 2, 0, 0, 0, 0};
    for (int i = 0; i < 8; i++) ck_assert(kept[i] == expect[i]);
    compress_free(c);
    gsl_rng_free(rng);
    free(in);
    free(out);
    free(magnitude);
}
END_TEST

/* The naive twin of top-k: sort indices by (|x| descending, index ascending). */
static const float *twin_values;
static int twin_compare(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    float x = fabsf(twin_values[i]), y = fabsf(twin_values[j]);
    if (x != y) return x > y ? -1 : 1;
    return (i > j) - (i < j);
}

START_TEST(test_topk_matches_naive_twin)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    for (int trial = 0; trial < 60; trial++) {
        size_t n = 1 + gsl_rng_uniform_int(rng, 20000);
        double ratio = trial % 4 == 0 ? 0.3 : 0.001 + 0.05 * gsl_rng_uniform(rng);
        int levels = trial % 3 == 0 ? 5 : 1 << 30; /* many ties, or hardly any */
        float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out), *expect = calloc(n, sizeof *expect);
        size_t *order = malloc(n * sizeof *order);
        for (size_t i = 0; i < n; i++) {
            in[i] = (float)gsl_rng_uniform_int(rng, (unsigned long)levels) * (gsl_rng_uniform(rng) < 0.5 ? -1 : 1);
            order[i] = i;
        }
        CompressionSpec spec = spec_of(COMPRESS_TOPK, ratio, FEEDBACK_NONE);
        Compressor *c;
        ck_assert_int_eq(compress_create(&spec, 1, 1, n, &c), 0);
        size_t k = compress_keep(ratio, n);
        twin_values = in;
        qsort(order, n, sizeof *order, twin_compare);
        for (size_t t = 0; t < k; t++) expect[order[t]] = in[order[t]];
        ck_assert_uint_eq(compress_apply(c, 0, in, out), k);
        ck_assert_msg(memcmp(out, expect, n * sizeof *out) == 0, "trial %d: n %zu k %zu differs", trial, n, k);
        compress_free(c);
        free(in);
        free(out);
        free(expect);
        free(order);
    }
    gsl_rng_free(rng);
}
END_TEST

START_TEST(test_randk_keeps_k_entries_reproducibly)
{
    size_t n = 500;
    CompressionSpec spec = spec_of(COMPRESS_RANDK, 0.1, FEEDBACK_NONE);
    Compressor *a, *b;
    ck_assert_int_eq(compress_create(&spec, 9, 2, n, &a), 0);
    ck_assert_int_eq(compress_create(&spec, 9, 2, n, &b), 0);
    float *in = malloc(n * sizeof *in), *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
    for (size_t i = 0; i < n; i++) in[i] = (float)(i + 1);
    for (int round = 0; round < 5; round++) {
        ck_assert_uint_eq(compress_apply(a, 0, in, x), 50);
        ck_assert_uint_eq(count_nonzero(x, n), 50);
        for (size_t i = 0; i < n; i++) ck_assert(x[i] == 0.0f || x[i] == in[i]);
        ck_assert_uint_eq(compress_apply(b, 0, in, y), 50);
        ck_assert(memcmp(x, y, n * sizeof *x) == 0); /* same seed, same agent: same draws */
        compress_apply(a, 1, in, z);
        ck_assert(memcmp(x, z, n * sizeof *x) != 0); /* another agent's stream */
        compress_apply(b, 1, in, z);
    }
    compress_free(a);
    compress_free(b);
    free(in);
    free(x);
    free(y);
    free(z);
}
END_TEST

START_TEST(test_dct_threshold_refresh)
{
    /* k = 2 of 6; the threshold (the 2nd largest magnitude) is recomputed every 3 messages
     * and applied as a hard threshold in between */
    CompressionSpec spec = spec_of(COMPRESS_DCT, 2.0 / 6, FEEDBACK_NONE);
    spec.refresh = 3;
    Compressor *c;
    ck_assert_int_eq(compress_create(&spec, 1, 1, 6, &c), 0);
    float v1[6] = {5, -4, 3, 2, 1, 0.5f}, v2[6] = {10, 9, -8, 0, 0, 0}, v3[6] = {1, 1, 1, 1, 1, 1},
          v4[6] = {1, 2, 3, 4, 5, -6}, out[6];
    ck_assert_uint_eq(compress_apply(c, 0, v1, out), 2);
    ck_assert(out[0] == 5 && out[1] == -4 && out[2] == 0);
    ck_assert_uint_eq(compress_apply(c, 0, v2, out), 3); /* |x| >= 4 */
    ck_assert_uint_eq(compress_apply(c, 0, v3, out), 0);
    ck_assert_uint_eq(compress_apply(c, 0, v4, out), 2); /* refresh: threshold 5 */
    ck_assert(out[4] == 5 && out[5] == -6 && out[3] == 0);
    compress_free(c);
}
END_TEST

START_TEST(test_slimdp_significant_plus_exploration)
{
    size_t n = 100;
    CompressionSpec spec = spec_of(COMPRESS_SLIMDP, 0.1, FEEDBACK_NONE);
    spec.explore = 0.3;
    Compressor *c;
    ck_assert_int_eq(compress_create(&spec, 4, 1, n, &c), 0);
    float in[100], out[100];
    for (size_t i = 0; i < n; i++) in[i] = (float)(i + 1); /* the 7 largest sit at 93..99 */
    int seen[100] = {0};
    for (int trial = 0; trial < 20; trial++) {
        ck_assert_uint_eq(compress_apply(c, 0, in, out), 10);
        ck_assert_uint_eq(count_nonzero(out, n), 10);
        for (size_t i = 93; i < n; i++) ck_assert(out[i] == in[i]);
        for (size_t i = 0; i < 93; i++) seen[i] += out[i] != 0;
    }
    int distinct = 0;
    for (size_t i = 0; i < 93; i++) distinct += seen[i] > 0;
    ck_assert_msg(distinct > 20, "exploration drew only %d distinct entries", distinct);
    compress_free(c);
}
END_TEST

START_TEST(test_wire_bytes)
{
    ck_assert(compress_wire_bytes(1000, 10) == 80);        /* values + indices */
    ck_assert(compress_wire_bytes(1000, 100) == 400 + 125); /* values + bitmap */
    ck_assert(compress_wire_bytes(1000, 1000) == 4000);     /* dense */
    ck_assert(compress_wire_bytes(1001, 100) == 400 + 126);
    ck_assert_uint_eq(compress_keep(0.001, 235146), 236);
    ck_assert_uint_eq(compress_keep(1e-9, 100), 1);
    ck_assert_uint_eq(compress_keep(1, 100), 100);
}
END_TEST

START_TEST(test_ef21_hand_example)
{
    /* top-2 of 4; g starts at 0: c = C(grad - g), g += c */
    CompressionSpec spec = spec_of(COMPRESS_TOPK, 0.5, FEEDBACK_EF21);
    Compressor *c;
    ck_assert_int_eq(compress_create(&spec, 1, 1, 4, &c), 0);
    float g[4] = {0}, message[4];
    float grad1[4] = {3, -1, 0.5f, -4}, grad2[4] = {1, 1, 1, 1};
    ck_assert_uint_eq(compress_feedback(c, 0, grad1, g, NULL, message), 2);
    float m1[4] = {3, 0, 0, -4}, g1[4] = {3, 0, 0, -4};
    for (int i = 0; i < 4; i++) ck_assert(message[i] == m1[i] && g[i] == g1[i]);
    compress_feedback(c, 0, grad2, g, NULL, message); /* grad - g = (-2, 1, 1, 5) */
    float m2[4] = {-2, 0, 0, 5}, g2[4] = {1, 0, 0, 1};
    for (int i = 0; i < 4; i++) ck_assert(message[i] == m2[i] && g[i] == g2[i]);
    compress_free(c);
}
END_TEST

START_TEST(test_warm_start_sends_the_first_vector_dense)
{
    CompressionSpec spec = spec_of(COMPRESS_TOPK, 0.25, FEEDBACK_EF21);
    spec.warm_start = 1;
    Compressor *c;
    ck_assert_int_eq(compress_create(&spec, 1, 2, 4, &c), 0);
    float g[4] = {0}, message[4], grad[4] = {3, -1, 0.5f, -4}, grad2[4] = {4, -1, 0.5f, -4};
    ck_assert_uint_eq(compress_feedback(c, 0, grad, g, NULL, message), 4);
    for (int i = 0; i < 4; i++) ck_assert(message[i] == grad[i] && g[i] == grad[i]);
    ck_assert_uint_eq(compress_feedback(c, 0, grad2, g, NULL, message), 1); /* then compressed */
    ck_assert(message[0] == 1 && g[0] == 4 && message[3] == 0);
    /* timing mode books the same sizes */
    ck_assert(compress_expected_bytes(c, 1) == 16);
    ck_assert(compress_expected_bytes(c, 1) == 5); /* 1 value + a 1-byte bitmap */
    compress_free(c);
}
END_TEST

START_TEST(test_econtrol_hand_example)
{
    /* eta = 0.5, top-2 of 4: Delta = C(eta e + grad - h); e += grad - h_old - Delta; h += Delta */
    CompressionSpec spec = spec_of(COMPRESS_TOPK, 0.5, FEEDBACK_ECONTROL);
    spec.eta = 0.5;
    Compressor *c;
    ck_assert_int_eq(compress_create(&spec, 1, 1, 4, &c), 0);
    float h[4] = {0}, e[4] = {0}, delta[4];
    float grad1[4] = {3, -1, 0.5f, -4}, grad2[4] = {1, 1, 1, 1};
    compress_feedback(c, 0, grad1, h, e, delta);
    float d1[4] = {3, 0, 0, -4}, e1[4] = {0, -1, 0.5f, 0}, h1[4] = {3, 0, 0, -4};
    for (int i = 0; i < 4; i++) ck_assert(delta[i] == d1[i] && e[i] == e1[i] && h[i] == h1[i]);
    /* eta e + grad - h = (-2, 0.5, 1.25, 5) */
    compress_feedback(c, 0, grad2, h, e, delta);
    float d2[4] = {-2, 0, 0, 5}, e2[4] = {0, 0, 1.5f, 0}, h2[4] = {1, 0, 0, 1};
    for (int i = 0; i < 4; i++) ck_assert(delta[i] == d2[i] && e[i] == e2[i] && h[i] == h2[i]);
    compress_free(c);
}
END_TEST

START_TEST(test_ef_hand_example)
{
    /* top-2 of 4; e starts at 0: m = C(e + v), e = e + v - m */
    CompressionSpec spec = spec_of(COMPRESS_TOPK, 0.5, FEEDBACK_EF);
    Compressor *c;
    ck_assert_int_eq(compress_create(&spec, 1, 1, 4, &c), 0);
    ck_assert_int_eq(compress_state_vectors(&spec), 1);
    ck_assert(compress_contributes_message(&spec));
    float e[4] = {0}, message[4];
    float v1[4] = {3, -1, 0.5f, -4}, v2[4] = {1, 1, 1, 1};
    ck_assert_uint_eq(compress_feedback(c, 0, v1, e, NULL, message), 2);
    float m1[4] = {3, 0, 0, -4}, e1[4] = {0, -1, 0.5f, 0};
    for (int i = 0; i < 4; i++) ck_assert(message[i] == m1[i] && e[i] == e1[i]);
    compress_feedback(c, 0, v2, e, NULL, message); /* e + v = (1, 0, 1.5, 1): the tie goes to index 0 */
    float m2[4] = {1, 0, 1.5f, 0}, e2[4] = {0, 0, 0, 1};
    for (int i = 0; i < 4; i++) ck_assert(message[i] == m2[i] && e[i] == e2[i]);
    compress_free(c);
}
END_TEST

/* One DGC message as sync composes it: clip, u = mu u + g, m = C(e + u), e -= m, mask u. */
static void dgc_message(Compressor *c, const float *g_in, float *u, float *e, float *message, double mu, int masking)
{
    float g[4], v[4], x[4] = {0};
    memcpy(g, g_in, sizeof g);
    compress_dgc_clip(g, 4, 0, 1);
    compress_worker_momentum(u, v, x, g, 4, mu, 0, 0);
    compress_feedback(c, 0, v, e, NULL, message);
    if (masking) compress_dgc_mask(u, message, 4);
}

START_TEST(test_dgc_momentum_correction_hand_example)
{
    CompressionSpec spec = spec_of(COMPRESS_TOPK, 0.5, FEEDBACK_DGC);
    spec.masking = 1;
    ck_assert_int_eq(compress_state_vectors(&spec), 2);
    Compressor *c;
    ck_assert_int_eq(compress_create(&spec, 1, 1, 4, &c), 0);
    float g1[4] = {3, -1, 0.5f, -4}, g2[4] = {1, 1, 1, 1};
    /* momentum 0.5, masking: step 1 u = g1, m = (3, 0, 0, -4), e = (0, -1, 0.5, 0), u masked
     * to (0, -1, 0.5, 0); step 2 u = 0.5 u + g2 = (1, 0.5, 1.25, 1), e + u = (1, -0.5, 1.75, 1),
     * m = (1, 0, 1.75, 0) (tie to index 0), e = (0, -0.5, 0, 1), u masked to (0, 0.5, 0, 1) */
    float u[4] = {0}, e[4] = {0}, m[4];
    dgc_message(c, g1, u, e, m, 0.5, 1);
    float m1[4] = {3, 0, 0, -4}, e1[4] = {0, -1, 0.5f, 0}, u1[4] = {0, -1, 0.5f, 0};
    for (int i = 0; i < 4; i++) ck_assert(m[i] == m1[i] && e[i] == e1[i] && u[i] == u1[i]);
    dgc_message(c, g2, u, e, m, 0.5, 1);
    float m2[4] = {1, 0, 1.75f, 0}, e2[4] = {0, -0.5f, 0, 1}, u2[4] = {0, 0.5f, 0, 1};
    for (int i = 0; i < 4; i++) ck_assert(m[i] == m2[i] && e[i] == e2[i] && u[i] == u2[i]);
    /* without masking: u keeps (3, -1, 0.5, -4), then u = (2.5, 0.5, 1.25, -1),
     * e + u = (2.5, -0.5, 1.75, -1), m = (2.5, 0, 1.75, 0), e = (0, -0.5, 0, -1) */
    float v[4] = {0}, f[4] = {0};
    dgc_message(c, g1, v, f, m, 0.5, 0);
    for (int i = 0; i < 4; i++) ck_assert(v[i] == g1[i]);
    dgc_message(c, g2, v, f, m, 0.5, 0);
    float m3[4] = {2.5f, 0, 1.75f, 0}, e3[4] = {0, -0.5f, 0, -1}, u3[4] = {2.5f, 0.5f, 1.25f, -1};
    for (int i = 0; i < 4; i++) ck_assert(m[i] == m3[i] && f[i] == e3[i] && v[i] == u3[i]);
    compress_free(c);
}
END_TEST

START_TEST(test_dgc_accumulates_the_dense_momentum)
{
    /* momentum correction without masking: everything sent plus what is held back is the
     * sum of the dense heavy-ball velocities, whatever the compressor kept */
    size_t n = 200;
    CompressionSpec spec = spec_of(COMPRESS_TOPK, 0.03, FEEDBACK_DGC);
    Compressor *c;
    ck_assert_int_eq(compress_create(&spec, 1, 1, n, &c), 0);
    float *u = calloc(n, sizeof *u), *e = calloc(n, sizeof *e), *g = malloc(n * sizeof *g), *v = malloc(n * sizeof *v);
    float *m = malloc(n * sizeof *m), *x = calloc(n, sizeof *x), *dense = calloc(n, sizeof *dense);
    double *sent = calloc(n, sizeof *sent), *velocities = calloc(n, sizeof *velocities);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    for (int t = 0; t < 50; t++) {
        for (size_t j = 0; j < n; j++) g[j] = (float)(gsl_rng_uniform(rng) - 0.4);
        compress_worker_momentum(u, v, x, g, n, 0.9, 0, 0);
        compress_feedback(c, 0, v, e, NULL, m);
        for (size_t j = 0; j < n; j++) {
            dense[j] = 0.9f * dense[j] + g[j];
            velocities[j] += dense[j];
            sent[j] += m[j];
        }
    }
    for (size_t j = 0; j < n; j++) {
        ck_assert(u[j] == dense[j]); /* the same float expression: unmasked u is the dense velocity */
        ck_assert_msg(fabs(sent[j] + e[j] - velocities[j]) < 1e-3 * (1 + fabs(velocities[j])), "entry %zu", j);
    }
    gsl_rng_free(rng);
    free(u);
    free(e);
    free(g);
    free(v);
    free(m);
    free(x);
    free(dense);
    free(sent);
    free(velocities);
    compress_free(c);
}
END_TEST

START_TEST(test_dgc_clipping_and_warm_up)
{
    /* the threshold is scaled by N^(-1/2): clip 2 over 4 agents limits the norm to 1 */
    float g[2] = {3, 4};
    compress_dgc_clip(g, 2, 2, 4);
    ck_assert(fabs(g[0] - 0.6) < 1e-6 && fabs(g[1] - 0.8) < 1e-6);
    float h[2] = {3, 4};
    compress_dgc_clip(h, 2, 10.0001, 4); /* limit 5.00005 > 5: untouched */
    ck_assert(h[0] == 3 && h[1] == 4);
    compress_dgc_clip(h, 2, 0, 4); /* 0: off */
    ck_assert(h[0] == 3 && h[1] == 4);
    /* masking zeroes exactly where the message is non-zero */
    float u[4] = {1, 2, 3, 4}, message[4] = {0, -1, 0, 5};
    compress_dgc_mask(u, message, 4);
    ck_assert(u[0] == 1 && u[1] == 0 && u[2] == 3 && u[3] == 0);
    /* warm-up: max(ratio, q^(r+1)), q = ratio^(1/(W+1)); ratio once r >= W */
    CompressionSpec spec = spec_of(COMPRESS_TOPK, 0.001, FEEDBACK_DGC);
    spec.warmup_epochs = 4;
    double q = pow(0.001, 0.2);
    for (int r = 0; r < 4; r++) ck_assert(fabs(compress_round_density(&spec, r) - pow(q, r + 1)) < 1e-12);
    ck_assert(compress_round_density(&spec, 4) == 0.001 && compress_round_density(&spec, 9) == 0.001);
    ck_assert(fabs(compress_round_density(&spec, 0) - 0.2512) < 1e-4);
    spec.feedback = FEEDBACK_EF; /* the warm-up is DGC's */
    ck_assert(compress_round_density(&spec, 0) == 0.001);
}
END_TEST

/* 4 equal agents, 640 samples = 10 steps of 64, no latency: closed forms. */
static const char *four =
    "[run]\nmethod = sync\nrounds = 1\nmode = timing\n"
    "[model]\nlayers = 784,256,128,10\nbatch = 64\n"
    "[topology]\ngraph = ring\n"
    "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 0 s\nsamples = 640\n"
    "[compression]\nscheme = topk\nratio = 0.01\n";

static const size_t mlp_params = 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10;

START_TEST(test_bytes_and_time_of_the_ring_gather)
{
    TestSink ts;
    ck_assert_int_eq(run_text(four, NULL, 0, &ts), 0);
    double block = compress_wire_bytes(mlp_params, compress_keep(0.01, mlp_params));
    ck_assert(block == 8.0 * 2352);
    /* every step: each of the 4 blocks makes 3 hops */
    ck_assert(fabs(ts.round_rows[0].bytes - 10 * 3 * 4 * block) < 1e-6);
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(four, NULL, 0, &sc, &diag), 0);
    Sim *e;
    TestSink unused;
    ck_assert_int_eq(sim_open(&sc, test_sink_init(&unused), &diag, &e), 0);
    double flops = sim_step_flops(e, 64);
    sim_close(e);
    test_sink_free(&unused);
    /* blocks offered together: 3 hops of one block each, back to back on every uplink */
    double step = flops / 1e9 + 3 * block / 10e6;
    ck_assert_msg(fabs(ts.last_t_end - 10 * step) < 1e-9 * ts.last_t_end, "round %.17g expected %.17g",
                  ts.last_t_end, 10 * step);
    ck_assert(fabs(ts.agent_round_rows[0].comm_s - 10 * 3 * block / 10e6) < 1e-9);
    test_sink_free(&ts);

    /* localsgd (one averaging per round) and dpsgd (2 ring neighbours, 10 steps) */
    const char *local[] = {"run.method=localsgd"};
    ck_assert_int_eq(run_text(four, local, 1, &ts), 0);
    ck_assert(fabs(ts.round_rows[0].bytes - 3 * 4 * block) < 1e-6);
    test_sink_free(&ts);
    const char *gossip[] = {"run.method=dpsgd"};
    ck_assert_int_eq(run_text(four, gossip, 1, &ts), 0);
    ck_assert(fabs(ts.round_rows[0].bytes - 10 * 4 * 2 * block) < 1e-6);
    test_sink_free(&ts);

    /* a warm start's first message is dense: 4 n bytes once per agent */
    const char *warm[] = {"compression.feedback=ef21", "compression.warm_start=1"};
    ck_assert_int_eq(run_text(four, warm, 2, &ts), 0);
    ck_assert(fabs(ts.round_rows[0].bytes - (3 * 4 * 4.0 * mlp_params + 9 * 3 * 4 * block)) < 1e-6);
    test_sink_free(&ts);

    /* scheme = none is the dense path, row for row */
    const char *none[] = {"compression.scheme=none"};
    TestSink dense, plain;
    ck_assert_int_eq(run_text(four, none, 1, &dense), 0);
    char text[2048];
    snprintf(text, sizeof text, "%.*s", (int)(strstr(four, "[compression]") - four), four);
    ck_assert_int_eq(run_text(text, NULL, 0, &plain), 0);
    ck_assert_str_eq(dense.text, plain.text);
    test_sink_free(&dense);
    test_sink_free(&plain);
}
END_TEST

/* the convex problem of tests/test_scenario.h */
#define convex test_convex_text

START_TEST(test_error_feedback_reaches_uncompressed_loss)
{
    TestSink ts;
    double dense_train, dense_test, dense_accuracy, train, test, accuracy;
    ck_assert_int_eq(run_text(convex, NULL, 0, &ts), 0);
    last_metric(&ts, &dense_train, &dense_test, &dense_accuracy);
    test_sink_free(&ts);
    const char *feedbacks[] = {"ef21", "econtrol", "ef", "dgc", "none"};
    for (int f = 0; f < 5; f++) {
        char set_feedback[64];
        snprintf(set_feedback, sizeof set_feedback, "compression.feedback=%s", feedbacks[f]);
        const char *set[] = {"compression.scheme=topk", "compression.ratio=0.05", set_feedback};
        ck_assert_int_eq(run_text(convex, set, 3, &ts), 0);
        last_metric(&ts, &train, &test, &accuracy);
        test_sink_free(&ts);
        if (f < 4)
            ck_assert_msg(test < 1.25 * dense_test && accuracy > dense_accuracy - 0.01,
                          "%s: test loss %g accuracy %g, uncompressed %g %g", feedbacks[f], test, accuracy,
                          dense_test, dense_accuracy);
        else
            ck_assert_msg(test > 2 * dense_test, "no feedback: test loss %g, uncompressed %g", test, dense_test);
    }
}
END_TEST

START_TEST(test_worker_momentum_hand_example)
{
    /* EF21-SGDM: u = mu u + grad + wd x; the agent compresses u with EF21 (top-2 of 4):
     * c = C(u - g), g += c */
    float u[4] = {0}, g[4] = {0}, sent[4], message[4], x[4] = {1, 1, 1, 1};
    float grad1[4] = {3, -1, 0.5f, -4}, grad2[4] = {1, 1, 1, 1};
    CompressionSpec spec = spec_of(COMPRESS_TOPK, 0.5, FEEDBACK_EF21);
    Compressor *c;
    ck_assert_int_eq(compress_create(&spec, 1, 1, 4, &c), 0);
    compress_worker_momentum(u, sent, x, grad1, 4, 0.5, 0, 0);
    for (int i = 0; i < 4; i++) ck_assert(u[i] == grad1[i] && sent[i] == grad1[i]);
    compress_feedback(c, 0, sent, g, NULL, message);
    float g1[4] = {3, 0, 0, -4};
    for (int i = 0; i < 4; i++) ck_assert(g[i] == g1[i]);
    /* u = 0.5 (3, -1, 0.5, -4) + (1, 1, 1, 1) = (2.5, 0.5, 1.25, -1); u - g = (-0.5, 0.5, 1.25, 3) */
    compress_worker_momentum(u, sent, x, grad2, 4, 0.5, 0, 0);
    float u2[4] = {2.5f, 0.5f, 1.25f, -1};
    for (int i = 0; i < 4; i++) ck_assert(u[i] == u2[i] && sent[i] == u2[i]);
    compress_feedback(c, 0, sent, g, NULL, message);
    float m2[4] = {0, 0, 1.25f, 3}, g2[4] = {3, 0, 1.25f, -1};
    for (int i = 0; i < 4; i++) ck_assert(message[i] == m2[i] && g[i] == g2[i]);
    /* weight decay joins the gradient; Nesterov sends a + mu u */
    float v[2] = {2, 0}, out[2], y[2] = {10, -10}, grad[2] = {1, 1};
    compress_worker_momentum(v, out, y, grad, 2, 0.5, 0.1, 1);
    /* a = (2, 0); u = (1 + 2, 0 + 0) = (3, 0); out = a + 0.5 u = (3.5, 0) */
    ck_assert(v[0] == 3 && v[1] == 0 && out[0] == 3.5f && out[1] == 0);
    compress_free(c);
}
END_TEST

/* The convex problem with heavy ball (lr 0.01, momentum 0.9: the same effective step as
 * plain SGD at 0.1). */
static const char *const heavy_ball[] = {"model.optimizer=momentum", "model.momentum=0.9", "model.lr=0.01"};

START_TEST(test_worker_momentum_dense_equals_heavy_ball)
{
    /* top-k with ratio 1 keeps every entry: worker-side heavy ball must give the dense
     * run's model up to the order of float sums (linearity) */
    TestSink dense, worker, nesterov_dense, nesterov_worker;
    const char *set[] = {heavy_ball[0], heavy_ball[1], heavy_ball[2], "compression.scheme=topk",
                         "compression.ratio=1", "compression.momentum=worker", "model.nesterov=1"};
    ck_assert_int_eq(run_text(convex, set, 3, &dense), 0);
    ck_assert_int_eq(run_text(convex, set, 6, &worker), 0);
    const char *nesterov[] = {set[0], set[1], set[2], set[6], set[3], set[4], set[5]};
    ck_assert_int_eq(run_text(convex, nesterov, 4, &nesterov_dense), 0);
    ck_assert_int_eq(run_text(convex, nesterov, 7, &nesterov_worker), 0);
    TestSink *pairs[2][2] = {{&dense, &worker}, {&nesterov_dense, &nesterov_worker}};
    for (int p = 0; p < 2; p++) {
        double a[3], b[3];
        last_metric(pairs[p][0], &a[0], &a[1], &a[2]);
        last_metric(pairs[p][1], &b[0], &b[1], &b[2]);
        for (int m = 0; m < 3; m++)
            ck_assert_msg(fabs(a[m] - b[m]) <= 1e-4 * fabs(a[m]), "%s: metric %d dense %.9g worker %.9g",
                          p ? "nesterov" : "heavy ball", m, a[m], b[m]);
        ck_assert(a[1] < 0.5); /* it learned */
        test_sink_free(pairs[p][0]);
        test_sink_free(pairs[p][1]);
    }
}
END_TEST

START_TEST(test_worker_momentum_ef21_reaches_uncompressed_loss)
{
    TestSink ts;
    double dense_train, dense_test, dense_accuracy, train, test, accuracy;
    ck_assert_int_eq(run_text(convex, heavy_ball, 3, &ts), 0);
    last_metric(&ts, &dense_train, &dense_test, &dense_accuracy);
    test_sink_free(&ts);
    const char *set[] = {heavy_ball[0], heavy_ball[1], heavy_ball[2], "compression.scheme=topk",
                         "compression.ratio=0.05", "compression.feedback=ef21", "compression.momentum=worker"};
    ck_assert_int_eq(run_text(convex, set, 7, &ts), 0);
    last_metric(&ts, &train, &test, &accuracy);
    test_sink_free(&ts);
    ck_assert_msg(test < 1.25 * dense_test && accuracy > dense_accuracy - 0.01,
                  "ef21-sgdm: test loss %g accuracy %g, uncompressed %g %g", test, accuracy, dense_test,
                  dense_accuracy);
    /* timing mode books the same messages */
    TestSink train_mode, timing;
    const char *timed[] = {set[0], set[1], set[2], set[3], set[4], set[5], set[6], "run.rounds=2", "run.mode=timing"};
    ck_assert_int_eq(run_text(convex, timed, 8, &train_mode), 0);
    ck_assert_int_eq(run_text(convex, timed, 9, &timing), 0);
    ck_assert_int_eq(train_mode.rounds, timing.rounds);
    for (int r = 0; r < train_mode.rounds; r++)
        ck_assert(train_mode.round_rows[r].t_end == timing.round_rows[r].t_end &&
                  train_mode.round_rows[r].bytes == timing.round_rows[r].bytes);
    test_sink_free(&train_mode);
    test_sink_free(&timing);
}
END_TEST

START_TEST(test_dgc_dense_equals_heavy_ball)
{
    /* ratio 1 sends every entry; without masking DGC's velocities are then the dense heavy
     * ball's, and the weight decay's locally applied heavy ball adds up to heavy ball on
     * grad + wd x (linearity): the dense run's model up to the order of float sums. With
     * masking every entry's momentum is reset every step: plain SGD, a different run. */
    const char *set[] = {heavy_ball[0], heavy_ball[1], heavy_ball[2], "model.weight_decay=0.01", "model.nesterov=0",
                         "compression.scheme=topk", "compression.ratio=1", "compression.feedback=dgc",
                         "compression.masking=0"};
    for (int nesterov = 0; nesterov < 2; nesterov++) {
        set[4] = nesterov ? "model.nesterov=1" : "model.nesterov=0";
        TestSink dense, dgc, masked;
        ck_assert_int_eq(run_text(convex, set, 5, &dense), 0);
        ck_assert_int_eq(run_text(convex, set, 9, &dgc), 0);
        ck_assert_int_eq(run_text(convex, set, 8, &masked), 0);
        double a[3], b[3], c[3];
        last_metric(&dense, &a[0], &a[1], &a[2]);
        last_metric(&dgc, &b[0], &b[1], &b[2]);
        last_metric(&masked, &c[0], &c[1], &c[2]);
        for (int m = 0; m < 3; m++)
            ck_assert_msg(fabs(a[m] - b[m]) <= 1e-4 * fabs(a[m]), "nesterov %d metric %d: dense %.9g dgc %.9g",
                          nesterov, m, a[m], b[m]);
        ck_assert(a[1] < 0.5);
        ck_assert_msg(fabs(a[0] - c[0]) > 1e-3 * a[0], "masking changed nothing: %.9g %.9g", a[0], c[0]);
        test_sink_free(&dense);
        test_sink_free(&dgc);
        test_sink_free(&masked);
    }
}
END_TEST

START_TEST(test_ef_and_dgc_with_momentum_and_local_steps)
{
    TestSink ts;
    double dense_train, dense_test, dense_accuracy, train, test, accuracy;
    /* sync with heavy ball at 5 %: ef (heavy ball on the mean) and dgc without masking
     * (momentum correction alone) reach the uncompressed loss. Masking resets the momentum
     * of every entry sent, so over these 8 epochs the entries sent often move at about lr
     * instead of lr / (1 - mu): measured 0.297 against 0.159 (0.144 unmasked, 0.476 without
     * feedback) */
    ck_assert_int_eq(run_text(convex, heavy_ball, 3, &ts), 0);
    last_metric(&ts, &dense_train, &dense_test, &dense_accuracy);
    test_sink_free(&ts);
    const char *feedbacks[] = {"compression.feedback=dgc", "compression.feedback=ef", "compression.feedback=none"};
    double masked_test = NAN, none_test = NAN;
    for (int f = 0; f < 4; f++) {
        const char *set[] = {heavy_ball[0], heavy_ball[1], heavy_ball[2], "compression.scheme=topk",
                             "compression.ratio=0.05", feedbacks[f < 3 ? f : 0], "compression.masking=0"};
        ck_assert_int_eq(run_text(convex, set, f == 0 ? 7 : 6, &ts), 0);
        last_metric(&ts, &train, &test, &accuracy);
        test_sink_free(&ts);
        if (f == 2) none_test = test;
        if (f == 3) masked_test = test;
        if (f < 2)
            ck_assert_msg(test < 1.25 * dense_test && accuracy > dense_accuracy - 0.01,
                          "%s with heavy ball: test loss %g accuracy %g, uncompressed %g %g", feedbacks[f], test,
                          accuracy, dense_test, dense_accuracy);
    }
    ck_assert_msg(masked_test < 0.75 * none_test && masked_test > 1.25 * dense_test,
                  "dgc masked: test loss %g, no feedback %g, uncompressed %g", masked_test, none_test, dense_test);
    /* localsgd, 8 local steps: top-5 % of the deltas stalls without feedback; ef and dgc
     * reach the uncompressed loss */
    const char *local[] = {"run.method=localsgd", "method.local_steps=8", "compression.scheme=none",
                           "compression.ratio=0.05", "compression.feedback=none"};
    ck_assert_int_eq(run_text(convex, local, 3, &ts), 0);
    last_metric(&ts, &dense_train, &dense_test, &dense_accuracy);
    test_sink_free(&ts);
    const char *schemes[] = {"compression.feedback=none", "compression.feedback=ef", "compression.feedback=dgc"};
    for (int f = 0; f < 3; f++) {
        local[2] = "compression.scheme=topk";
        local[4] = schemes[f];
        ck_assert_int_eq(run_text(convex, local, 5, &ts), 0);
        last_metric(&ts, &train, &test, &accuracy);
        test_sink_free(&ts);
        if (f == 0)
            ck_assert_msg(test > 2 * dense_test, "localsgd without feedback: test loss %g, uncompressed %g", test,
                          dense_test);
        else
            ck_assert_msg(test < 1.25 * dense_test && accuracy > dense_accuracy - 0.01,
                          "localsgd %s: test loss %g accuracy %g, uncompressed %g %g", schemes[f], test, accuracy,
                          dense_test, dense_accuracy);
    }
    /* localsgd's dgc with plain SGD and no clipping takes the [model] optimiser's steps */
    TestSink ef, dgc;
    const char *set_ef[] = {local[0], local[1], "compression.scheme=topk", local[3], "compression.feedback=ef"};
    const char *set_dgc[] = {local[0], local[1], "compression.scheme=topk", local[3], "compression.feedback=dgc"};
    ck_assert_int_eq(run_text(convex, set_ef, 5, &ef), 0);
    ck_assert_int_eq(run_text(convex, set_dgc, 5, &dgc), 0);
    ck_assert_str_eq(ef.text, dgc.text);
    test_sink_free(&ef);
    test_sink_free(&dgc);
    /* a small clipping threshold slows learning (pins that clip reaches the steps) */
    const char *clipped[] = {local[0], local[1], "compression.scheme=topk", local[3], "compression.feedback=dgc",
                             "compression.clip=0.01"};
    ck_assert_int_eq(run_text(convex, clipped, 6, &ts), 0);
    last_metric(&ts, &train, &test, &accuracy);
    test_sink_free(&ts);
    ck_assert_msg(test > 2 * dense_test, "clip 0.01: test loss %g, uncompressed %g", test, dense_test);
}
END_TEST

START_TEST(test_dgc_warm_up_bytes)
{
    /* 10 steps per round, 4 agents, 3 hops per block: the round's bytes follow the density */
    const char *set[] = {"compression.feedback=dgc", "compression.ratio=0.001", "compression.warmup_epochs=2",
                         "run.rounds=4"};
    TestSink ts;
    ck_assert_int_eq(run_text(four, set, 4, &ts), 0);
    ck_assert_int_eq(ts.rounds, 4);
    double q = pow(0.001, 1.0 / 3);
    double density[4] = {q, q * q, 0.001, 0.001};
    for (int r = 0; r < 4; r++) {
        double block = compress_wire_bytes(mlp_params, compress_keep(density[r], mlp_params));
        ck_assert_msg(fabs(ts.round_rows[r].bytes - 10 * 3 * 4 * block) < 1e-6, "round %d: %.17g bytes", r,
                      ts.round_rows[r].bytes);
    }
    ck_assert(ts.round_rows[0].bytes > 10 * ts.round_rows[2].bytes);
    test_sink_free(&ts);
    /* localsgd: one averaging per round */
    const char *local[] = {set[0], set[1], set[2], set[3], "run.method=localsgd"};
    ck_assert_int_eq(run_text(four, local, 5, &ts), 0);
    for (int r = 0; r < 4; r++) {
        double block = compress_wire_bytes(mlp_params, compress_keep(density[r], mlp_params));
        ck_assert(fabs(ts.round_rows[r].bytes - 3 * 4 * block) < 1e-6);
    }
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_train_mode_timing_equals_timing_mode)
{
    /* top-k sizes do not depend on the values, so both modes book the same messages */
    const char *schemes[] = {"compression.scheme=topk", "compression.scheme=slimdp"};
    const char *methods[] = {"run.method=sync", "run.method=localsgd", "run.method=dpsgd", "run.method=sync",
                             "run.method=localsgd"};
    for (int m = 0; m < 5; m++)
        for (int k = 0; k < 2; k++) {
            TestSink train, timing;
            /* dpsgd takes no feedback; sync and localsgd use EF21 with a warm start, then
             * DGC with a one-round warm-up of the sparsity */
            const char *feedback = m == 2 ? "compression.feedback=none"
                                   : m < 2 ? "compression.feedback=ef21" : "compression.feedback=dgc";
            const char *warm = m == 2 ? "compression.warm_start=0"
                               : m < 2 ? "compression.warm_start=1" : "compression.warmup_epochs=1";
            const char *set[] = {schemes[k], methods[m], "run.rounds=2", feedback, warm};
            const char *set_timing[] = {schemes[k], methods[m], "run.rounds=2", feedback, warm, "run.mode=timing"};
            ck_assert_int_eq(run_text(convex, set, 5, &train), 0);
            ck_assert_int_eq(run_text(convex, set_timing, 6, &timing), 0);
            ck_assert_int_eq(train.rounds, timing.rounds);
            for (int r = 0; r < train.rounds; r++) {
                ck_assert(train.round_rows[r].t_end == timing.round_rows[r].t_end);
                ck_assert(train.round_rows[r].bytes == timing.round_rows[r].bytes);
            }
            /* and a second train run is bitwise the same */
            TestSink again;
            ck_assert_int_eq(run_text(convex, set, 5, &again), 0);
            ck_assert_str_eq(train.text, again.text);
            test_sink_free(&train);
            test_sink_free(&timing);
            test_sink_free(&again);
        }
}
END_TEST

START_TEST(test_compressed_localsgd_and_dpsgd_learn)
{
    const char *sets[][5] = {
        {"run.method=localsgd", "method.local_steps=8", "compression.scheme=topk", "compression.feedback=ef21",
         "compression.ratio=0.1"},
        {"run.method=qsr", "compression.scheme=dct", "compression.feedback=econtrol", "compression.refresh=10",
         "compression.ratio=0.1"},
        {"run.method=dpsgd", "topology.graph=ring", "compression.scheme=topk", "compression.ratio=0.1",
         "compression.gamma=0.1"},
    };
    for (int s = 0; s < 3; s++) {
        TestSink ts;
        ck_assert_int_eq(run_text(convex, sets[s], 5, &ts), 0);
        double train, test, accuracy;
        last_metric(&ts, &train, &test, &accuracy);
        ck_assert_msg(accuracy > 0.9, "%s: accuracy %g", sets[s][0], accuracy);
        test_sink_free(&ts);
    }
}
END_TEST

static const char *base =
    "[run]\n"                       /* 1 */
    "method = sync\n"               /* 2 */
    "rounds = 2\n"                  /* 3 */
    "mode = timing\n"               /* 4 */
    "[agents]\n"                    /* 5 */
    "count = 8\n"                   /* 6 */
    "compute = 1 GFLOPS\n"          /* 7 */
    "bandwidth = 10 MB/s\n";        /* 8 */

static void expect_error(const char *extra, const char *const *set, int n_set, const char *prefix,
                         const char *fragment)
{
    test_expect_resolve_error(base, extra, set, n_set, prefix, fragment);
}

START_TEST(test_section_round_trip_and_errors)
{
    char text[4096];
    snprintf(text, sizeof text, "%s[compression]\nscheme = dct\nratio = 0.001\nfeedback = econtrol\neta = 0.3\n"
             "refresh = 50\nexplore = 0.5\nwarm_start = 1\n", base);
    Scenario a, b;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(text, NULL, 0, &a, &diag), 0);
    ck_assert(a.compression.present && a.compression.scheme == COMPRESS_DCT && a.compression.ratio == 0.001);
    ck_assert(a.compression.feedback == FEEDBACK_ECONTROL && a.compression.eta == 0.3 && a.compression.refresh == 50);
    ck_assert(a.compression.explore == 0.1); /* not Slim-DP: reset to its default, left out */
    ck_assert(a.compression.warm_start == 1);
    char *config = scenario_config_string(&a);
    ck_assert_ptr_nonnull(strstr(config, "[compression]\nscheme = dct\n"));
    ck_assert_ptr_null(strstr(config, "explore"));
    ck_assert_int_eq(test_resolve(config, NULL, 0, &b, &diag), 0);
    char *again = scenario_config_string(&b);
    ck_assert_str_eq(config, again);
    ck_assert(b.compression.scheme == a.compression.scheme && b.compression.ratio == a.compression.ratio &&
              b.compression.eta == a.compression.eta && b.compression.refresh == a.compression.refresh &&
              b.compression.warm_start == 1);
    free(config);
    free(again);
    /* no section: nothing written */
    ck_assert_int_eq(test_resolve(base, NULL, 0, &a, &diag), 0);
    config = scenario_config_string(&a);
    ck_assert_ptr_null(strstr(config, "[compression]"));
    free(config);

    expect_error("[compression]\nscheme = topk\nratoi = 0.1\n", NULL, 0, "t.ini:11:", "did you mean 'ratio'");
    expect_error("[compresion]\nscheme = topk\n", NULL, 0, "t.ini:9:", "did you mean 'compression'");
    expect_error("[compression]\nscheme = top-k\n", NULL, 0, "t.ini:10:", "not one of none|topk|randk|dct|slimdp");
    expect_error("[compression]\nscheme = topk\nratio = 0\n", NULL, 0, "t.ini:11:", "must be in (0, 1]");
    expect_error("[compression]\nscheme = topk\nratio = 2\n", NULL, 0, "t.ini:11:", "outside");
    expect_error("[compression]\nscheme = topk\nfeedback = ef14\n", NULL, 0, "t.ini:11:", "none|ef21|econtrol|ef|dgc");
    expect_error("[compression]\nratio = 0.1\n", NULL, 0, "t.ini:9:", "missing required key 'scheme'");
    const char *token[] = {"run.method=token"};
    expect_error("[compression]\nscheme = topk\n", token, 1, "t.ini:9:", "not with method token: the token is");
    expect_error("[compression]\nscheme = randk\n", token, 1, "t.ini:9: [compression] scheme = randk",
                 "not with method token");
    const char *dpsgd[] = {"run.method=dpsgd"};
    expect_error("[compression]\nscheme = topk\nfeedback = ef21\n", dpsgd, 1, "t.ini:9:", "leave feedback = none");
    const char *partial[] = {"run.method=localsgd", "method.participation=0.5"};
    expect_error("[compression]\nscheme = topk\n", partial, 2, "--set method.participation=0.5:", "participation = 1");
    const char *overridden[] = {"compression.scheme=topk", "run.method=token"};
    expect_error("", overridden, 2, "--set compression.scheme=topk: [compression]", "not with method token");
    /* momentum = worker: sync with heavy ball only; dropped with scheme = none */
    expect_error("[compression]\nscheme = topk\nmomentum = workers\n", NULL, 0, "t.ini:11:",
                 "not one of aggregate|worker");
    expect_error("[compression]\nscheme = topk\nmomentum = worker\n", NULL, 0, "t.ini:11: [compression] momentum",
                 "optimizer = momentum");
    const char *adam[] = {"model.optimizer=adam"};
    expect_error("[compression]\nscheme = topk\nmomentum = worker\n", adam, 1, "t.ini:11:", "optimizer = momentum");
    const char *local_momentum[] = {"run.method=localsgd", "model.optimizer=momentum"};
    expect_error("[compression]\nscheme = topk\nmomentum = worker\n", local_momentum, 2, "t.ini:11:",
                 "sync only");
    const char *worker_set[] = {"model.optimizer=momentum", "compression.momentum=worker"};
    expect_error("[compression]\nscheme = topk\n", worker_set + 1, 1, "--set compression.momentum=worker: ",
                 "optimizer = momentum");
    snprintf(text, sizeof text, "%s[model]\noptimizer = momentum\n[compression]\nscheme = topk\nmomentum = worker\n",
             base);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &a, &diag), 0);
    ck_assert_int_eq(a.compression.worker_momentum, 1);
    config = scenario_config_string(&a);
    ck_assert_ptr_nonnull(strstr(config, "momentum = worker\n"));
    ck_assert_int_eq(test_resolve(config, NULL, 0, &b, &diag), 0);
    ck_assert_int_eq(b.compression.worker_momentum, 1);
    free(config);
    const char *none[] = {"compression.scheme=none"};
    ck_assert_int_eq(test_resolve(text, none, 1, &a, &diag), 0);
    ck_assert_int_eq(a.compression.worker_momentum, 0);
    config = scenario_config_string(&a);
    ck_assert_ptr_null(strstr(config, "worker"));
    free(config);
    ck_assert_int_eq(test_resolve(text, worker_set, 2, &a, &diag), 0);
    /* ef and dgc: sync, localsgd, qsr; dgc needs heavy ball or sgd and its own momentum */
    const char *dpsgd_ef[] = {"run.method=dpsgd"};
    expect_error("[compression]\nscheme = topk\nfeedback = ef\n", dpsgd_ef, 1, "t.ini:9:", "leave feedback = none");
    expect_error("[compression]\nscheme = topk\nfeedback = dgc\n", adam, 1, "t.ini:11: [compression] feedback",
                 "optimizer = momentum or sgd");
    expect_error("[model]\noptimizer = momentum\n[compression]\nscheme = topk\nfeedback = dgc\nmomentum = worker\n",
                 NULL, 0, "t.ini:14: [compression] momentum", "remove momentum = worker");
    expect_error("[compression]\nscheme = topk\nfeedback = ef\nwarm_start = 1\n", NULL, 0,
                 "t.ini:12: [compression] warm_start", "set warm_start = 0");
    expect_error("[compression]\nscheme = topk\nfeedback = dgc\nclip = -1\n", NULL, 0, "t.ini:12:", "outside");
    expect_error("[compression]\nscheme = topk\nfeedback = dgc\nmasking = 2\n", NULL, 0, "t.ini:12:", "");
    expect_error("[compression]\nscheme = topk\nfeedback = dgc\nwarmup_epochs = 1.5\n", NULL, 0, "t.ini:12:", "");
    const char *qsr[] = {"run.method=qsr"};
    snprintf(text, sizeof text, "%s[compression]\nscheme = topk\nfeedback = ef\n", base);
    ck_assert_int_eq(test_resolve(text, qsr, 1, &a, &diag), 0);
    snprintf(text, sizeof text, "%s[compression]\nscheme = topk\nratio = 0.003\nfeedback = dgc\nwarmup_epochs = 4\n"
             "clip = 2.5\nmasking = 0\n", base);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &a, &diag), 0);
    ck_assert(a.compression.feedback == FEEDBACK_DGC && a.compression.warmup_epochs == 4 && a.compression.clip == 2.5 &&
              a.compression.masking == 0);
    config = scenario_config_string(&a);
    ck_assert_ptr_nonnull(strstr(config, "feedback = dgc\n"));
    ck_assert_ptr_nonnull(strstr(config, "warmup_epochs = 4\nclip = 2.5\nmasking = 0\n"));
    ck_assert_int_eq(test_resolve(config, NULL, 0, &b, &diag), 0);
    ck_assert(b.compression.warmup_epochs == 4 && b.compression.clip == 2.5 && b.compression.masking == 0);
    free(config);
    /* not dgc: its keys are accepted (a sweep may vary the feedback), reset and left out */
    const char *to_ef[] = {"compression.feedback=ef"};
    ck_assert_int_eq(test_resolve(text, to_ef, 1, &a, &diag), 0);
    ck_assert(a.compression.warmup_epochs == 0 && a.compression.clip == 0 && a.compression.masking == 1);
    config = scenario_config_string(&a);
    ck_assert_ptr_nonnull(strstr(config, "feedback = ef\n"));
    ck_assert_ptr_null(strstr(config, "masking"));
    free(config);
    /* scheme = none is allowed with any method */
    snprintf(text, sizeof text, "%s[compression]\nscheme = none\nratio = 0.5\n", base);
    const char *co2[] = {"run.method=co2"};
    ck_assert_int_eq(test_resolve(text, co2, 1, &a, &diag), 0);
}
END_TEST

static Suite *compress_suite(void)
{
    Suite *s = suite_create("compress");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_select_matches_sort);
    tcase_add_test(tc, test_topk_keeps_exactly_the_k_largest);
    tcase_add_test(tc, test_topk_matches_naive_twin);
    tcase_add_test(tc, test_randk_keeps_k_entries_reproducibly);
    tcase_add_test(tc, test_dct_threshold_refresh);
    tcase_add_test(tc, test_slimdp_significant_plus_exploration);
    tcase_add_test(tc, test_wire_bytes);
    tcase_add_test(tc, test_ef21_hand_example);
    tcase_add_test(tc, test_warm_start_sends_the_first_vector_dense);
    tcase_add_test(tc, test_econtrol_hand_example);
    tcase_add_test(tc, test_ef_hand_example);
    tcase_add_test(tc, test_dgc_momentum_correction_hand_example);
    tcase_add_test(tc, test_dgc_accumulates_the_dense_momentum);
    tcase_add_test(tc, test_dgc_clipping_and_warm_up);
    tcase_add_test(tc, test_dgc_dense_equals_heavy_ball);
    tcase_add_test(tc, test_ef_and_dgc_with_momentum_and_local_steps);
    tcase_add_test(tc, test_dgc_warm_up_bytes);
    tcase_add_test(tc, test_worker_momentum_hand_example);
    tcase_add_test(tc, test_worker_momentum_dense_equals_heavy_ball);
    tcase_add_test(tc, test_worker_momentum_ef21_reaches_uncompressed_loss);
    tcase_add_test(tc, test_bytes_and_time_of_the_ring_gather);
    tcase_add_test(tc, test_error_feedback_reaches_uncompressed_loss);
    tcase_add_test(tc, test_train_mode_timing_equals_timing_mode);
    tcase_add_test(tc, test_compressed_localsgd_and_dpsgd_learn);
    tcase_add_test(tc, test_section_round_trip_and_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(compress_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
