/* check_quantize.c — the quantizing compressors (sim/stages/quantize.h): QSGD and the
 * scaled sign against naive twins written from the papers' formulas, QSGD's unbiasedness
 * and its levels, the wire sizes and their use through a Compressor (warm start dense),
 * the [compression] keys (levels written only for qsgd, ratio not for the quantizers),
 * and training: sign with error feedback and 8-bit QSGD reach the uncompressed loss on a
 * convex problem, and the bytes of a round follow the quantized size. */
#include "sim/stages/compress.h"
#include "sim/stages/quantize.h"
#include "sim/kernel/rng.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* QSGD as Alistarh et al. write it, one entry at a time, in double. */
static void naive_qsgd(const float *v, float *out, size_t n, int s, gsl_rng *rng)
{
    double norm = 0;
    for (size_t i = 0; i < n; i++) norm += (double)v[i] * v[i];
    norm = sqrt(norm);
    for (size_t i = 0; i < n; i++) {
        double u = gsl_rng_uniform(rng);
        if (norm == 0) {
            out[i] = 0;
            continue;
        }
        double a = fabs((double)v[i]) / norm;   /* in [0, 1] */
        int l = (int)floor(a * s);              /* the level below */
        double p = a * s - l;                   /* the chance of the level above */
        int xi = u < p ? l + 1 : l;
        double sign = v[i] < 0 ? -1.0 : 1.0;
        out[i] = (float)(sign * norm * ((double)xi / s));
    }
}

/* EF-SignSGD's C(v) = |v|_1 / n sign(v). */
static void naive_sign(const float *v, float *out, size_t n)
{
    double l1 = 0;
    for (size_t i = 0; i < n; i++) l1 += fabs((double)v[i]);
    for (size_t i = 0; i < n; i++) {
        int sign = (v[i] > 0) - (v[i] < 0);
        out[i] = (float)(l1 / n) * (float)sign;
    }
}

static void random_vector(float *v, size_t n, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, seed);
    for (size_t i = 0; i < n; i++) v[i] = (float)(gsl_rng_uniform(r) - 0.5) * (i % 7 == 0 ? 10.0f : 1.0f);
    v[3] = 0.0f; /* an exact zero, as dead ReLUs give */
    gsl_rng_free(r);
}

START_TEST(test_qsgd_matches_naive_twin)
{
    enum { N = 1000 };
    static float v[N], a[N], b[N];
    int levels[] = {1, 3, 7, 127, 1000};
    for (int k = 0; k < 5; k++) {
        random_vector(v, N, 11 + k);
        gsl_rng *r1 = gsl_rng_alloc(gsl_rng_taus2), *r2 = gsl_rng_alloc(gsl_rng_taus2);
        gsl_rng_set(r1, 99);
        gsl_rng_set(r2, 99);
        ck_assert_uint_eq(quantize_qsgd(v, a, N, levels[k], r1), N);
        naive_qsgd(v, b, N, levels[k], r2);
        for (size_t i = 0; i < N; i++) ck_assert_msg(a[i] == b[i], "s=%d entry %zu: %g vs %g", levels[k], i, a[i], b[i]);
        ck_assert(a[3] == 0.0f);
        /* both streams moved alike: one draw per entry */
        ck_assert(gsl_rng_get(r1) == gsl_rng_get(r2));
        gsl_rng_free(r1);
        gsl_rng_free(r2);
    }
    /* the zero vector quantizes to zero */
    memset(v, 0, sizeof v);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    quantize_qsgd(v, a, N, 7, r);
    for (size_t i = 0; i < N; i++) ck_assert(a[i] == 0.0f);
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_qsgd_levels_and_unbiased)
{
    enum { N = 64, TRIALS = 20000 };
    float v[N], q[N];
    double mean[N] = {0};
    random_vector(v, N, 5);
    double norm = 0;
    for (int i = 0; i < N; i++) norm += (double)v[i] * v[i];
    norm = sqrt(norm);
    int s = 3;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 7);
    for (int t = 0; t < TRIALS; t++) {
        quantize_qsgd(v, q, N, s, r);
        for (int i = 0; i < N; i++) {
            /* every value is norm * l / s for a whole l in [0, s], with v's sign */
            double l = fabs((double)q[i]) * s / norm;
            ck_assert_msg(fabs(l - round(l)) < 1e-4 && round(l) <= s, "level %g", l);
            ck_assert(q[i] == 0.0f || (q[i] > 0) == (v[i] > 0));
            mean[i] += q[i];
        }
    }
    gsl_rng_free(r);
    /* E Q(v) = v: within 5 standard errors (the variance is at most (norm / s)^2 / 4) */
    double se = norm / s / 2 / sqrt((double)TRIALS);
    for (int i = 0; i < N; i++) ck_assert_msg(fabs(mean[i] / TRIALS - v[i]) < 5 * se, "entry %d: %g vs %g", i,
                                              mean[i] / TRIALS, v[i]);
    /* many levels: within norm / s of v, deterministic for values on a level */
    float exact[4] = {3, 0, -4, 0}, out[4];
    r = gsl_rng_alloc(gsl_rng_taus2);
    quantize_qsgd(exact, out, 4, 5, r); /* norm 5: 3 and -4 are levels 3 and 4 of 5 */
    ck_assert(out[0] == 3.0f && out[1] == 0.0f && out[2] == -4.0f && out[3] == 0.0f);
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_sign_matches_naive_twin_and_hand_example)
{
    enum { N = 777 };
    static float v[N], a[N], b[N];
    random_vector(v, N, 3);
    ck_assert_uint_eq(quantize_sign(v, a, N), N);
    naive_sign(v, b, N);
    for (size_t i = 0; i < N; i++) ck_assert(a[i] == b[i]);
    float h[4] = {2, -1, 0, 5}, out[4];
    quantize_sign(h, out, 4); /* |h|_1 / 4 = 2 */
    ck_assert(out[0] == 2.0f && out[1] == -2.0f && out[2] == 0.0f && out[3] == 2.0f);
}
END_TEST

START_TEST(test_wire_bytes)
{
    ck_assert(quantize_wire_bytes(COMPRESS_QSGD, 1000, 7) == 4 + 500);    /* 4 bits */
    ck_assert(quantize_wire_bytes(COMPRESS_QSGD, 1000, 127) == 4 + 1000); /* 8 bits */
    ck_assert(quantize_wire_bytes(COMPRESS_QSGD, 1000, 8) == 4 + 625);    /* 1 + 4 bits */
    ck_assert(quantize_wire_bytes(COMPRESS_QSGD, 1000, 1) == 4 + 250);    /* sign and one level bit */
    ck_assert(quantize_wire_bytes(COMPRESS_SIGN, 1000, 0) == 4 + 125);
    ck_assert(quantize_wire_bytes(COMPRESS_SIGN, 1001, 0) == 4 + 126);
    ck_assert(quantize_wire_bytes(COMPRESS_QSGD, 1, 65535) == 4);         /* never above dense */
    ck_assert(quantize_scheme(COMPRESS_QSGD) && quantize_scheme(COMPRESS_SIGN) && !quantize_scheme(COMPRESS_TOPK));
}
END_TEST

/* Through a Compressor: the agent's own stream (two agents differ, a re-made compressor
 * repeats), the quantized size, a warm start's dense first message, feedback = ef. */
START_TEST(test_compressor_streams_sizes_and_feedback)
{
    enum { N = 500 };
    static float v[N], m1[N], m2[N], m3[N], e[N];
    random_vector(v, N, 21);
    CompressionSpec spec = {.present = 1, .scheme = COMPRESS_QSGD, .levels = 7, .feedback = FEEDBACK_NONE, .ratio = 1};
    Compressor *c, *again;
    ck_assert_int_eq(compress_create(&spec, 42, 2, N, &c), HS_OK);
    ck_assert_int_eq(compress_create(&spec, 42, 2, N, &again), HS_OK);
    ck_assert_uint_eq(compress_feedback(c, 0, v, NULL, NULL, m1), N);
    ck_assert(compress_message_bytes(c, 0, N) == 4 + 250);
    compress_feedback(c, 1, v, NULL, NULL, m2);
    compress_feedback(again, 0, v, NULL, NULL, m3);
    ck_assert(memcmp(m1, m3, sizeof m1) == 0);
    ck_assert(memcmp(m1, m2, sizeof m1) != 0);
    ck_assert(compress_expected_bytes(c, 1) == 4 + 250);
    compress_free(c);
    compress_free(again);
    /* sign with ef: message = C(e + v), e <- e + v - message; a warm start is dense first */
    spec = (CompressionSpec){.present = 1, .scheme = COMPRESS_SIGN, .feedback = FEEDBACK_EF, .ratio = 1};
    ck_assert_int_eq(compress_create(&spec, 1, 1, N, &c), HS_OK);
    memset(e, 0, sizeof e);
    compress_feedback(c, 0, v, e, NULL, m1);
    naive_sign(v, m2, N);
    for (size_t i = 0; i < N; i++) {
        ck_assert(m1[i] == m2[i]);
        ck_assert(e[i] == v[i] - m1[i]);
    }
    ck_assert(compress_message_bytes(c, 0, N) == 4 + 63);
    compress_free(c);
    spec = (CompressionSpec){.present = 1, .scheme = COMPRESS_QSGD, .levels = 7, .feedback = FEEDBACK_EF21,
                             .warm_start = 1, .ratio = 1};
    ck_assert_int_eq(compress_create(&spec, 1, 1, N, &c), HS_OK);
    memset(e, 0, sizeof e);
    compress_feedback(c, 0, v, e, NULL, m1);
    ck_assert(memcmp(m1, v, sizeof v) == 0);
    ck_assert(compress_message_bytes(c, 0, N) == 4.0 * N);
    compress_feedback(c, 0, v, e, NULL, m1);
    ck_assert(compress_message_bytes(c, 0, N) == 4 + 250);
    compress_free(c);
}
END_TEST

/* the convex problem of tests/test_scenario.h */
#define convex test_convex_text

/* The last metrics row's test loss, and the run's bytes (the sum of rounds.bytes). */
static void results(const TestSink *ts, double *test_loss, double *bytes)
{
    *test_loss = NAN;
    *bytes = 0;
    for (const char *p = strstr(ts->text, "metric "); p; p = strstr(p + 1, "metric ")) {
        double t, train, test, acc, b;
        int round, agent;
        if (sscanf(p, "metric %lf %d %d %lf %lf %lf %lf", &t, &round, &agent, &train, &test, &acc, &b) == 7)
            *test_loss = test;
    }
    for (int r = 0; r < ts->rounds && r < 256; r++) *bytes += ts->round_rows[r].bytes;
}

START_TEST(test_quantized_training_reaches_uncompressed_loss)
{
    TestSink ts;
    HsDiag diag;
    double dense, dense_bytes, loss, bytes;
    ck_assert_int_eq(test_run(convex, NULL, 0, &ts, &diag), 0);
    results(&ts, &dense, &dense_bytes);
    test_sink_free(&ts);
    const char *qsgd[] = {"compression.scheme=qsgd", "compression.levels=127"};
    ck_assert_msg(test_run(convex, qsgd, 2, &ts, &diag) == 0, "%s", diag.message);
    results(&ts, &loss, &bytes);
    test_sink_free(&ts);
    ck_assert_msg(loss < 1.05 * dense, "qsgd 8 bits: test loss %g, uncompressed %g", loss, dense);
    double qsgd_bytes = bytes;
    const char *sign[] = {"compression.scheme=sign", "compression.feedback=ef"};
    ck_assert_msg(test_run(convex, sign, 2, &ts, &diag) == 0, "%s", diag.message);
    results(&ts, &loss, &bytes);
    test_sink_free(&ts);
    ck_assert_msg(loss < 1.25 * dense, "sign with ef: test loss %g, uncompressed %g", loss, dense);
    /* both go round the same ring all-gather: the bytes are in the ratio of the messages,
     * (4 + 330) / (4 + 42) for the 330 parameters; the all-gather of N messages costs N / 2
     * times a reduce's, so 8-bit QSGD over 8 agents moves what the dense all-reduce does */
    ck_assert_msg(fabs(qsgd_bytes / bytes - 334.0 / 46.0) < 1e-9, "qsgd %g, sign %g bytes", qsgd_bytes, bytes);
    ck_assert_msg(bytes < 0.2 * dense_bytes, "sign bytes %g of %g", bytes, dense_bytes);
}
END_TEST

START_TEST(test_section_keys)
{
    Scenario sc;
    HsDiag diag;
    char text[2048];
    snprintf(text, sizeof text, "%s[compression]\nscheme = qsgd\n", convex);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.compression.levels, 15);
    char *config = scenario_config_string(&sc);
    ck_assert_ptr_nonnull(strstr(config, "[compression]\nscheme = qsgd\nfeedback = none\nlevels = 15\n"));
    ck_assert_ptr_null(strstr(config, "\nratio"));
    free(config);
    snprintf(text, sizeof text, "%s[compression]\nscheme = sign\nlevels = 3\nfeedback = ef\n", convex);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_OK);
    config = scenario_config_string(&sc);
    ck_assert_ptr_null(strstr(config, "levels"));
    ck_assert_ptr_null(strstr(config, "\nratio"));
    free(config);
    snprintf(text, sizeof text, "%s[compression]\nscheme = qsgd\nlevels = 0\n", convex);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "levels") != NULL, "%s", diag.message);
}
END_TEST

static Suite *quantize_suite(void)
{
    Suite *s = suite_create("quantize");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_qsgd_matches_naive_twin);
    tcase_add_test(tc, test_qsgd_levels_and_unbiased);
    tcase_add_test(tc, test_sign_matches_naive_twin_and_hand_example);
    tcase_add_test(tc, test_wire_bytes);
    tcase_add_test(tc, test_compressor_streams_sizes_and_feedback);
    tcase_add_test(tc, test_quantized_training_reaches_uncompressed_loss);
    tcase_add_test(tc, test_section_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(quantize_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
