/* check_byzantine.c — robust aggregators on constructed inputs (outliers cannot move
 * median and trimmed mean, Krum picks an honest vector, centered clipping is bounded),
 * the attacks on hand vectors, who the attackers are, sync and byzsgdnm under attack,
 * and the [byzantine] section: round trip, defaults, errors with FILE:LINE. */
#include "sim/stages/byzantine.h"
#include "sim/world/roles.h"
#include "sim/run.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K = 9, D = 64 };

static int run_text(const char *text, const char *const *set, int n_set, TestSink *ts)
{
    HsDiag diag;
    int status = test_run(text, set, n_set, ts, &diag);
    if (status != 0) fprintf(stderr, "%s\n", diag.message);
    return status;
}

/* K vectors: honest ones h + noise * N(0, 1), the first `outliers` replaced by huge ones. */
static void make_vectors(float storage[K][D], const float **v, int outliers, double noise, unsigned long seed)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, seed);
    float h[D];
    for (int j = 0; j < D; j++) h[j] = (float)(j % 7) - 3.0f;
    for (int k = 0; k < K; k++) {
        for (int j = 0; j < D; j++) {
            if (k < outliers) storage[k][j] = (float)((k % 2 ? -1 : 1) * 1e20 * (1 + gsl_rng_uniform(rng)));
            else storage[k][j] = h[j] + (float)(noise * gsl_ran_gaussian(rng, 1));
        }
        v[k] = storage[k];
    }
    gsl_rng_free(rng);
}

START_TEST(test_median_and_trimmed_ignore_outliers)
{
    float storage[K][D], out[D];
    const float *v[K];
    double scratch[K];
    for (int f = 0; f <= (K - 1) / 2; f++) {
        /* identical honest vectors: exactly unchanged */
        make_vectors(storage, v, f, 0, 1);
        aggregate_median(v, K, D, scratch, out);
        for (int j = 0; j < D; j++) ck_assert(out[j] == storage[K - 1][j]);
        aggregate_trimmed(v, K, D, f, scratch, out);
        for (int j = 0; j < D; j++) ck_assert(out[j] == storage[K - 1][j]);
        /* spread honest vectors: every coordinate within the honest range */
        make_vectors(storage, v, f, 0.5, 2 + (unsigned long)f);
        float lo[D], hi[D];
        for (int j = 0; j < D; j++) {
            lo[j] = INFINITY;
            hi[j] = -INFINITY;
            for (int k = f; k < K; k++) {
                if (storage[k][j] < lo[j]) lo[j] = storage[k][j];
                if (storage[k][j] > hi[j]) hi[j] = storage[k][j];
            }
        }
        aggregate_median(v, K, D, scratch, out);
        for (int j = 0; j < D; j++) ck_assert(out[j] >= lo[j] && out[j] <= hi[j]);
        aggregate_trimmed(v, K, D, f, scratch, out);
        for (int j = 0; j < D; j++) ck_assert(out[j] >= lo[j] && out[j] <= hi[j]);
    }
    /* the mean is not robust: one outlier moves it arbitrarily */
    make_vectors(storage, v, 1, 0, 1);
    aggregate_mean(v, K, D, out);
    ck_assert(fabsf(out[0]) > 1e18f);
    /* even K: the mean of the two middle values */
    float a[4][1] = {{1}, {7}, {3}, {100}};
    const float *w[4] = {a[0], a[1], a[2], a[3]};
    aggregate_median(w, 4, 1, scratch, out);
    ck_assert(out[0] == 5);
    aggregate_trimmed(w, 4, 1, 1, scratch, out);
    ck_assert(out[0] == 5);
    aggregate_trimmed(w, 4, 1, 0, scratch, out);
    ck_assert(out[0] == 111.0f / 4);
}
END_TEST

START_TEST(test_krum_picks_an_honest_vector)
{
    float storage[K][D], out[D];
    const float *v[K];
    double distances[K * K];
    for (int f = 1; f <= K - 3 && K - f - 2 >= f; f++) {
        make_vectors(storage, v, f, 0.3, 10 + (unsigned long)f);
        int chosen = aggregate_krum(v, K, D, f, distances, out);
        ck_assert_msg(chosen >= f, "f = %d: Krum chose outlier %d", f, chosen);
        ck_assert(memcmp(out, storage[chosen], sizeof out) == 0);
    }
    /* colluding attackers placed close together, but far from the honest cluster */
    make_vectors(storage, v, 0, 0.3, 20);
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < D; j++) storage[k][j] = 50.0f + 0.01f * (float)k;
    int chosen = aggregate_krum(v, K, D, 3, distances, out);
    ck_assert_msg(chosen >= 3, "Krum chose colluder %d", chosen);
}
END_TEST

START_TEST(test_centered_clipping_is_bounded)
{
    float storage[K][D], center[D], out[D];
    const float *v[K];
    double scale[K];
    make_vectors(storage, v, 4, 0.5, 30);
    for (int j = 0; j < D; j++) center[j] = 0.25f;
    for (int iters = 1; iters <= 3; iters++) {
        double tau = 0.7;
        aggregate_cclip(v, K, D, center, tau, iters, scale, out);
        double squares = 0;
        for (int j = 0; j < D; j++) squares += ((double)out[j] - center[j]) * (out[j] - center[j]);
        ck_assert_msg(sqrt(squares) <= iters * tau * (1 + 1e-6), "moved %g > %g", sqrt(squares), iters * tau);
    }
    /* every vector within tau of the center: one iteration is the mean */
    make_vectors(storage, v, 0, 0.01, 31);
    float mean[D];
    aggregate_mean(v, K, D, mean);
    memcpy(center, storage[K - 1], sizeof center);
    aggregate_cclip(v, K, D, center, 100, 1, scale, out);
    for (int j = 0; j < D; j++) ck_assert(fabsf(out[j] - mean[j]) < 1e-5f);
    /* out may alias the center */
    aggregate_cclip(v, K, D, center, 100, 1, scale, center);
    for (int j = 0; j < D; j++) ck_assert(fabsf(center[j] - mean[j]) < 1e-5f);
}
END_TEST

static double cosine(const float *a, const double *b, int d)
{
    double dot = 0, aa = 0, bb = 0;
    for (int j = 0; j < d; j++) {
        dot += a[j] * b[j];
        aa += (double)a[j] * a[j];
        bb += b[j] * b[j];
    }
    return dot / sqrt(aa * bb);
}

START_TEST(test_betamle_hand_examples)
{
    float out[2];
    /* Lines at 0, 90 and 45 degrees (lengths do not matter: every vector is normalized).
     * The flag mean is the 45-degree line, where the third vector's reconstruction ratio
     * is 1: every IRLS step keeps it. The aggregate sums the projections of the unit
     * vectors: 1/2 + 1/2 + 1/sqrt 2 on each axis. */
    float a[3][2] = {{3, 0}, {0, 0.5f}, {2, 2}};
    const float *v[3] = {a[0], a[1], a[2]};
    for (int iters = 0; iters <= 8; iters += 4) {
        ck_assert_int_eq(aggregate_betamle(v, 3, 2, 1, 0, iters, out), 0);
        ck_assert(fabs(out[0] - (1 + M_SQRT1_2)) < 1e-6 && fabs(out[1] - (1 + M_SQRT1_2)) < 1e-6);
    }
    /* In the plane, lines at angles t_i: the reconstruction ratio in the line at phi is
     * cos^2(phi - t_i), so the objective is sum_i |sin(phi - t_i)|, concave between data
     * angles: its minimum is at a data angle. For 0, 10, 20, 90, 100 degrees the sums are
     * 2.5005, 2.3321, 2.4401, 3.0981, 3.1432: the line at 10 degrees. The flag mean (the
     * principal axis) is at 20 degrees, (1/2) atan2(sum sin 2t, sum cos 2t) = 40/2; IRLS
     * walks from it to 10 degrees, lowering the objective at every step. The aggregate then
     * is (cos 10 + 1 + cos 10 + cos 80 + cos 90) = 3.1433 along 10 degrees. */
    const double degrees[5] = {0, 10, 20, 90, 100};
    float b[5][2];
    const float *w[5];
    for (int i = 0; i < 5; i++) {
        b[i][0] = (float)((i + 1) * cos(degrees[i] * M_PI / 180));
        b[i][1] = (float)((i + 1) * sin(degrees[i] * M_PI / 180));
        w[i] = b[i];
    }
    ck_assert_int_eq(aggregate_betamle(w, 5, 2, 1, 0, 0, out), 0);
    ck_assert(fabs(atan2(out[1], out[0]) * 180 / M_PI - 20) < 1e-4);
    double previous = INFINITY;
    for (int iters = 0; iters <= 40; iters++) {
        ck_assert_int_eq(aggregate_betamle(w, 5, 2, 1, 0, iters, out), 0);
        double phi = atan2(out[1], out[0]), objective = 0;
        for (int i = 0; i < 5; i++) objective += fabs(sin(phi - degrees[i] * M_PI / 180));
        ck_assert_msg(objective <= previous + 1e-9, "iters %d: objective %g after %g", iters, objective, previous);
        previous = objective;
    }
    ck_assert_msg(fabs(atan2(out[1], out[0]) * 180 / M_PI - 10) < 0.01, "angle %g", atan2(out[1], out[0]) * 180 / M_PI);
    double length = 2 * cos(10 * M_PI / 180) + 1 + cos(80 * M_PI / 180);
    ck_assert_msg(fabs(hypot(out[0], out[1]) - length) < 1e-3, "length %g", hypot(out[0], out[1]));
    /* rank 2 in the plane: the projection is the identity, the aggregate is the sum of the
     * unit vectors over 2 */
    ck_assert_int_eq(aggregate_betamle(w, 5, 2, 2, 0, 4, out), 0);
    double sx = 0, sy = 0;
    for (int i = 0; i < 5; i++) {
        sx += cos(degrees[i] * M_PI / 180) / 2;
        sy += sin(degrees[i] * M_PI / 180) / 2;
    }
    ck_assert(fabs(out[0] - sx) < 1e-6 && fabs(out[1] - sy) < 1e-6);
    /* zero vectors take no part; all zero gives zero */
    float z[3][2] = {{0, 0}, {0, 0}, {0, 0}};
    const float *zv[3] = {z[0], z[1], z[2]};
    ck_assert_int_eq(aggregate_betamle(zv, 3, 2, 1, 0, 4, out), 0);
    ck_assert(out[0] == 0 && out[1] == 0);
    const float *mixed[3] = {a[0], z[1], a[0]};
    ck_assert_int_eq(aggregate_betamle(mixed, 3, 2, 1, 1, 4, out), 0);
    ck_assert(fabs(out[0] - 2) < 1e-6 && out[1] == 0);
}
END_TEST

START_TEST(test_betamle_ignores_outliers)
{
    float storage[K][D], out[D];
    const float *v[K];
    double h[D];
    for (int j = 0; j < D; j++) h[j] = (double)(j % 7) - 3.0;
    for (int f = 0; f <= (K - 1) / 2; f++) {
        /* identical honest vectors: the aggregate is their direction, one unit per honest
         * vector (the outliers lie almost orthogonal to it) */
        make_vectors(storage, v, f, 0, 1);
        for (int lambda = 0; lambda <= 1; lambda++) {
            ck_assert_int_eq(aggregate_betamle(v, K, D, 1, lambda, 4, out), 0);
            ck_assert_msg(cosine(out, h, D) > 0.9999, "f = %d: cosine %g", f, cosine(out, h, D));
            double squares = 0;
            for (int j = 0; j < D; j++) squares += (double)out[j] * out[j];
            ck_assert_msg(fabs(sqrt(squares) - (K - f)) < 0.05 * (K - f), "f = %d: length %g", f, sqrt(squares));
        }
        /* spread honest vectors: still along the honest direction */
        make_vectors(storage, v, f, 0.5, 2 + (unsigned long)f);
        ck_assert_int_eq(aggregate_betamle(v, K, D, 1, 0, 4, out), 0);
        ck_assert_msg(cosine(out, h, D) > 0.99, "f = %d, noise: cosine %g", f, cosine(out, h, D));
    }
    /* the mean under the same outliers points elsewhere */
    make_vectors(storage, v, 1, 0, 1);
    aggregate_mean(v, K, D, out);
    ck_assert(fabs(cosine(out, h, D)) < 0.1);
    /* sign flippers (-4 x an honest vector) share the honest line: they shorten the
     * aggregate by one unit each, they cannot turn it while they are fewer */
    for (int f = 1; f <= (K - 1) / 2; f++) {
        make_vectors(storage, v, 0, 0.3, 40 + (unsigned long)f);
        for (int k = 0; k < f; k++)
            for (int j = 0; j < D; j++) storage[k][j] *= -4;
        ck_assert_int_eq(aggregate_betamle(v, K, D, 1, 0, 4, out), 0);
        ck_assert_msg(cosine(out, h, D) > 0.95, "f = %d flippers: cosine %g", f, cosine(out, h, D));
    }
}
END_TEST

/* An engine for 5 agents with a [byzantine] section, for the attacks. */
static const char *five =
    "[run]\nmethod = sync\nrounds = 1\nmode = timing\nseed = 3\n"
    "[model]\nlayers = 784,16,10\n"
    "[agents]\ncount = 5\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\n"
    "[byzantine]\ncount = 2\n";

static Byzantine *attack_setup(const char *const *set, int n_set, Sim **engine, TestSink *ts)
{
    Scenario *sc = malloc(sizeof *sc);
    HsDiag diag;
    ck_assert_int_eq(test_resolve(five, set, n_set, sc, &diag), 0);
    ck_assert_int_eq(sim_open(sc, test_sink_init(ts), &diag, engine), 0);
    Byzantine *b;
    ck_assert_int_eq(byzantine_create((*engine)->sc, &(*engine)->world, (*engine)->trainer, 4, (*engine)->diag, &b), 0);
    return b;
}

START_TEST(test_attacks_on_hand_vectors)
{
    float rows[5][4] = {{1, 2, 3, 4}, {3, 2, 1, 0}, {5, 2, -1, 4}, {-1, 2, 7, 0}, {2, 2, 0, 2}};
    const char *kinds[][2] = {{"byzantine.attack=signflip", "byzantine.scale=3"},
                              {"byzantine.attack=ipm", "byzantine.epsilon=0.5"},
                              {"byzantine.attack=alie", "byzantine.z=2"},
                              {"byzantine.attack=gaussian", "byzantine.sigma=2"}};
    for (int kind = 0; kind < 4; kind++) {
        Sim *e;
        TestSink ts;
        Byzantine *b = attack_setup(kinds[kind], 2, &e, &ts);
        float storage[5][4], *out[5];
        const float *v[5];
        int attackers = 0;
        for (int i = 0; i < 5; i++) {
            memcpy(storage[i], rows[i], sizeof rows[i]);
            v[i] = rows[i];
            out[i] = storage[i];
            attackers += byzantine_is_attacker(b, i);
        }
        ck_assert_int_eq(attackers, 2);
        /* the honest agents' mean and (population) sd, by hand */
        double mu[4] = {0}, sd[4] = {0};
        for (int j = 0; j < 4; j++) {
            for (int i = 0; i < 5; i++) mu[j] += byzantine_is_attacker(b, i) ? 0 : rows[i][j] / 3.0;
            for (int i = 0; i < 5; i++)
                sd[j] += byzantine_is_attacker(b, i) ? 0 : (rows[i][j] - mu[j]) * (rows[i][j] - mu[j]) / 3.0;
            sd[j] = sqrt(sd[j]);
        }
        byzantine_attack(b, v, out);
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 4; j++) {
                if (!byzantine_is_attacker(b, i)) {
                    ck_assert(storage[i][j] == rows[i][j]);
                    continue;
                }
                double expect = kind == 0 ? -3.0 * rows[i][j] : kind == 1 ? -0.5 * mu[j] : mu[j] - 2 * sd[j];
                if (kind < 3) ck_assert_msg(fabs(storage[i][j] - expect) < 1e-5, "kind %d: %g != %g", kind,
                                            storage[i][j], expect);
            }
        byzantine_free(b);
        const Scenario *sc = e->sc;
        sim_close(e);
        free((void *)sc);
        test_sink_free(&ts);
    }
    /* gaussian: sample moments over a long vector */
    Sim *e;
    TestSink ts;
    Scenario *sc = malloc(sizeof *sc);
    HsDiag diag;
    const char *set[] = {"byzantine.attack=gaussian", "byzantine.sigma=2"};
    ck_assert_int_eq(test_resolve(five, set, 2, sc, &diag), 0);
    ck_assert_int_eq(sim_open(sc, test_sink_init(&ts), &diag, &e), 0);
    enum { N = 100000 };
    Byzantine *b;
    ck_assert_int_eq(byzantine_create(e->sc, &e->world, e->trainer, N, e->diag, &b), 0);
    float *data = calloc(5 * (size_t)N, sizeof *data);
    const float *v[5];
    float *out[5];
    for (int i = 0; i < 5; i++) v[i] = out[i] = data + (size_t)i * N;
    byzantine_attack(b, v, out);
    for (int i = 0; i < 5; i++) {
        double sum = 0, squares = 0;
        for (int j = 0; j < N; j++) {
            sum += out[i][j];
            squares += (double)out[i][j] * out[i][j];
        }
        if (!byzantine_is_attacker(b, i)) {
            ck_assert(squares == 0);
            continue;
        }
        ck_assert(fabs(sum / N) < 0.05);
        ck_assert(fabs(sqrt(squares / N) - 2) < 0.05);
    }
    free(data);
    byzantine_free(b);
    sim_close(e);
    free(sc);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_attackers_drawn_from_the_seed)
{
    Scenario sc;
    HsDiag diag;
    const char *set[] = {"agents.count=20", "byzantine.count=6"};
    ck_assert_int_eq(test_resolve(five, set, 2, &sc, &diag), 0);
    int a[20], b[20], c[20];
    ck_assert_int_eq(byzantine_pick(&sc, 20, a), 0);
    ck_assert_int_eq(byzantine_pick(&sc, 20, b), 0);
    int count = 0;
    for (int i = 0; i < 20; i++) count += a[i];
    ck_assert_int_eq(count, 6);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    sc.seed = 4;
    ck_assert_int_eq(byzantine_pick(&sc, 20, c), 0);
    ck_assert(memcmp(a, c, sizeof a) != 0);
    /* the agents rows carry the flag */
    TestSink ts;
    ck_assert_int_eq(run_text(five, NULL, 0, &ts), 0);
    int flagged = 0;
    for (const char *p = strstr(ts.text, "agent "); p; p = strstr(p + 1, "\nagent ")) {
        int agent, samples, byzantine;
        char group[64];
        double x;
        if (*p == '\n') p++;
        if (sscanf(p, "agent %d %63s %lf %lf %d %lf %lf %d", &agent, group, &x, &x, &samples, &x, &x, &byzantine) == 8)
            flagged += byzantine;
    }
    ck_assert_int_eq(flagged, 2);
    test_sink_free(&ts);
    /* without the section nobody is */
    ck_assert_int_eq(test_resolve("[run]\nmethod = sync\nrounds = 1\n[agents]\ncount = 3\ncompute = 1\nbandwidth = 1\n",
                                  NULL, 0, &sc, &diag), 0);
    ck_assert_int_eq(byzantine_pick(&sc, 3, a), 0);
    ck_assert(a[0] == 0 && a[1] == 0 && a[2] == 0);
}
END_TEST

static const char *convex =
    "[run]\nmethod = sync\nrounds = 5\nseed = 5\n"
    "[data]\ndataset = synthetic\nfeatures = 32\nclasses = 10\ntrain_samples = 4000\ntest_samples = 1000\n"
    "separation = 6\n"
    "[model]\nlayers = 32,10\nbatch = 32\nlr = 0.1\n"
    "[agents]\ncount = 8\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\n"
    "[byzantine]\ncount = 3\nattack = signflip\nscale = 4\n";

START_TEST(test_robust_aggregation_survives_sign_flips)
{
    const char *aggregators[] = {"mean", "median", "trimmed", "krum", "cclip", "betamle"};
    for (int a = 0; a < 6; a++) {
        char set_aggregator[64];
        snprintf(set_aggregator, sizeof set_aggregator, "byzantine.aggregator=%s", aggregators[a]);
        const char *set[] = {set_aggregator};
        TestSink ts;
        ck_assert_int_eq(run_text(convex, set, 1, &ts), 0);
        double accuracy = test_sink_last_accuracy(&ts);
        if (a == 0) ck_assert_msg(accuracy < 0.5, "mean under attack: accuracy %g", accuracy);
        else ck_assert_msg(accuracy > 0.85, "%s under attack: accuracy %g", aggregators[a], accuracy);
        test_sink_free(&ts);
    }
    /* byzsgdnm: learns without attackers, and with them under a robust aggregator */
    const char *clean[] = {"run.method=byzsgdnm", "byzantine.count=0"};
    const char *attacked[] = {"run.method=byzsgdnm", "byzantine.aggregator=median", "run.rounds=8"};
    TestSink ts;
    ck_assert_int_eq(run_text(convex, clean, 2, &ts), 0);
    ck_assert_msg(test_sink_last_accuracy(&ts) > 0.9, "byzsgdnm: accuracy %g", test_sink_last_accuracy(&ts));
    test_sink_free(&ts);
    ck_assert_int_eq(run_text(convex, attacked, 3, &ts), 0);
    ck_assert_msg(test_sink_last_accuracy(&ts) > 0.85, "byzsgdnm under attack: accuracy %g", test_sink_last_accuracy(&ts));
    test_sink_free(&ts);
    /* label flipping and the other attacks run; timing is sync's whatever the attack */
    const char *attacks[] = {"byzantine.attack=labelflip", "byzantine.attack=alie", "byzantine.attack=ipm",
                             "byzantine.attack=gaussian"};
    TestSink reference;
    const char *plain[] = {"byzantine.count=0", "byzantine.aggregator=mean", "run.rounds=2"};
    ck_assert_int_eq(run_text(convex, plain, 3, &reference), 0);
    for (int k = 0; k < 4; k++) {
        const char *set[] = {attacks[k], "byzantine.aggregator=median", "run.rounds=2"};
        ck_assert_int_eq(run_text(convex, set, 3, &ts), 0);
        ck_assert_msg(test_sink_last_accuracy(&ts) > 0.5, "%s: accuracy %g", attacks[k], test_sink_last_accuracy(&ts));
        for (int r = 0; r < 2; r++) ck_assert(ts.round_rows[r].t_end == reference.round_rows[r].t_end);
        test_sink_free(&ts);
    }
    test_sink_free(&reference);
}
END_TEST

START_TEST(test_labelflip_gradient_differs)
{
    Scenario *sc = malloc(sizeof *sc);
    HsDiag diag;
    const char *set[] = {"byzantine.attack=labelflip", "run.rounds=1"};
    ck_assert_int_eq(test_resolve(convex, set, 2, sc, &diag), 0);
    Sim *e;
    TestSink ts;
    ck_assert_int_eq(sim_open(sc, test_sink_init(&ts), &diag, &e), 0);
    Byzantine *b;
    ck_assert_int_eq(byzantine_create(e->sc, &e->world, e->trainer, 330, e->diag, &b), 0);
    ck_assert(byzantine_flips_labels(b));
    int attacker = 0;
    while (!byzantine_is_attacker(b, attacker)) attacker++;
    float params[330], flipped[330];
    for (int j = 0; j < 330; j++) params[j] = 0.01f * (float)(j % 13);
    ck_assert_int_eq(byzantine_gradient(b, attacker, params, flipped, e->diag), 0);
    double squares = 0;
    for (int j = 0; j < 330; j++) squares += (double)flipped[j] * flipped[j];
    ck_assert(squares > 0 && isfinite(squares));
    byzantine_free(b);
    sim_close(e);
    free(sc);
    test_sink_free(&ts);
}
END_TEST

static const char *base =
    "[run]\n"                 /* 1 */
    "method = sync\n"         /* 2 */
    "rounds = 2\n"            /* 3 */
    "mode = timing\n"         /* 4 */
    "[agents]\n"              /* 5 */
    "count = 10\n"            /* 6 */
    "compute = 1 GFLOPS\n"    /* 7 */
    "bandwidth = 10 MB/s\n";  /* 8 */

static void expect_error(const char *extra, const char *const *set, int n_set, const char *prefix,
                         const char *fragment)
{
    test_expect_resolve_error(base, extra, set, n_set, prefix, fragment);
}

START_TEST(test_section_round_trip_defaults_and_errors)
{
    char text[4096];
    snprintf(text, sizeof text, "%s[byzantine]\ncount = 4\nattack = alie\naggregator = trimmed\nsigma = 5\n", base);
    Scenario a, b;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(text, NULL, 0, &a, &diag), 0);
    const ByzantineSpec *s = &a.byzantine;
    ck_assert(s->present && s->count == 4 && s->attack == ATTACK_ALIE && s->aggregator == AGGREGATOR_TRIMMED);
    ck_assert_int_eq(s->trim, 4);  /* defaults to count */
    ck_assert(s->sigma == 1);      /* not the gaussian attack: reset, left out of the config */
    /* Baruch et al.: s = floor(10/2 + 1) - 4 = 2, z = Phi^-1(8/10) */
    ck_assert(fabs(s->z - gsl_cdf_ugaussian_Pinv(0.8)) < 1e-12);
    char *config = scenario_config_string(&a);
    ck_assert_ptr_nonnull(strstr(config, "[byzantine]\ncount = 4\nattack = alie\nz = "));
    ck_assert_ptr_nonnull(strstr(config, "aggregator = trimmed\ntrim = 4\n"));
    ck_assert_ptr_null(strstr(config, "sigma"));
    ck_assert_int_eq(test_resolve(config, NULL, 0, &b, &diag), 0);
    char *again = scenario_config_string(&b);
    ck_assert_str_eq(config, again);
    ck_assert(b.byzantine.z == a.byzantine.z && b.byzantine.trim == 4);
    free(config);
    free(again);
    snprintf(text, sizeof text, "%s[byzantine]\ncount = 2\naggregator = cclip\ntau = 0.5\niters = 3\n", base);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &a, &diag), 0);
    config = scenario_config_string(&a);
    ck_assert_ptr_nonnull(strstr(config, "aggregator = cclip\ntau = 0.5\niters = 3\n"));
    ck_assert_int_eq(test_resolve(config, NULL, 0, &b, &diag), 0);
    ck_assert(b.byzantine.tau == 0.5 && b.byzantine.iters == 3 && b.byzantine.count == 2);
    free(config);
    /* betamle: rank, lambda and iters (4 by default, 0 allowed), written back */
    snprintf(text, sizeof text, "%s[byzantine]\ncount = 3\naggregator = betamle\nlambda = 0.5\ntau = 2\n", base);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &a, &diag), 0);
    ck_assert(a.byzantine.aggregator == AGGREGATOR_BETAMLE && a.byzantine.rank == 1 && a.byzantine.lambda == 0.5 &&
              a.byzantine.iters == 4 && a.byzantine.tau == 1);
    config = scenario_config_string(&a);
    ck_assert_ptr_nonnull(strstr(config, "aggregator = betamle\nrank = 1\nlambda = 0.5\niters = 4\n"));
    ck_assert_ptr_null(strstr(config, "tau"));
    ck_assert_int_eq(test_resolve(config, NULL, 0, &b, &diag), 0);
    again = scenario_config_string(&b);
    ck_assert_str_eq(config, again);
    free(config);
    free(again);
    const char *flag_mean[] = {"byzantine.iters=0", "byzantine.rank=3"};
    ck_assert_int_eq(test_resolve(text, flag_mean, 2, &a, &diag), 0);
    ck_assert(a.byzantine.iters == 0 && a.byzantine.rank == 3);
    /* rank and lambda are reset for the other aggregators */
    const char *other[] = {"byzantine.aggregator=median", "byzantine.rank=3"};
    ck_assert_int_eq(test_resolve(text, other, 2, &a, &diag), 0);
    ck_assert(a.byzantine.rank == 1 && a.byzantine.lambda == 0 && a.byzantine.iters == 1);

    expect_error("[byzantine]\ncount = 2\nagregator = median\n", NULL, 0, "t.ini:11:", "did you mean 'aggregator'");
    expect_error("[byzantine]\ncount = 10\n", NULL, 0, "t.ini:10:", "[0, 9]");
    expect_error("[byzantine]\nattack = flip\n", NULL, 0, "t.ini:10:", "signflip|gaussian|alie|ipm|labelflip");
    expect_error("[byzantine]\naggregator = bulyan\n", NULL, 0, "t.ini:10:", "mean|median|trimmed|krum|cclip|betamle");
    expect_error("[byzantine]\naggregator = betamle\nrank = 11\n", NULL, 0, "t.ini:11:", "[1, 10]");
    expect_error("[byzantine]\naggregator = betamle\nlambda = -1\n", NULL, 0, "t.ini:11:", "outside [0, 1e+06]");
    expect_error("[byzantine]\naggregator = cclip\niters = 0\n", NULL, 0, "t.ini:11:", "[1, 1000]");
    const char *rank[] = {"byzantine.rank=0"};
    expect_error("[byzantine]\naggregator = betamle\n", rank, 1, "--set byzantine.rank=0:", "[1, 10]");
    expect_error("[byzantine]\ncount = 4\naggregator = krum\nf = 8\n", NULL, 0, "t.ini:9:", "needs f <= 7");
    expect_error("[byzantine]\ncount = 5\naggregator = trimmed\n", NULL, 0, "t.ini:9:", "2 trim < 10");
    expect_error("[byzantine]\naggregator = cclip\ntau = 0\n", NULL, 0, "t.ini:11:", "must be positive");
    const char *local[] = {"run.method=localsgd"};
    const char *token[] = {"run.method=token"};
    expect_error("[byzantine]\ncount = 1\n", token, 1, "t.ini:9:", "not with method token: nothing is combined");
    expect_error("[byzantine]\ncount = 1\n[compression]\nscheme = topk\n", NULL, 0, "t.ini:9:", "[compression]");
    /* count = 0 with the mean is allowed with any method */
    snprintf(text, sizeof text, "%s[byzantine]\ncount = 0\n", base);
    ck_assert_int_eq(test_resolve(text, local, 1, &a, &diag), 0);
    /* byzsgdnm's beta */
    const char *beta[] = {"run.method=byzsgdnm", "method.beta=1.5", "run.mode=train"};
    snprintf(text, sizeof text, "%s", convex);
    ck_assert_int_eq(test_resolve(text, beta, 3, &a, &diag), HS_E_INPUT);
    ck_assert_msg(strcmp(diag.message, "--set method.beta=1.5: expected a number in [0, 1), found '1.5'") == 0, "%s",
                  diag.message);
    /* byzsgdnm's lr_scaling: batch 64 against reference 32 doubles the step length (linear)
     * or multiplies it by sqrt 2 — the same run, bit for bit, as that lr unscaled */
    const char *scaled[] = {"run.method=byzsgdnm", "model.batch=64", "model.lr=0.05", "method.lr_scaling=linear",
                            "run.rounds=2", "byzantine.aggregator=median"};
    const char *doubled[] = {"run.method=byzsgdnm", "model.batch=64", "model.lr=0.1", "method.lr_scaling=none",
                             "run.rounds=2", "byzantine.aggregator=median"};
    TestSink x, y;
    ck_assert_int_eq(run_text(convex, scaled, 6, &x), 0);
    ck_assert_int_eq(run_text(convex, doubled, 6, &y), 0);
    ck_assert_str_eq(x.text, y.text);
    test_sink_free(&x);
    test_sink_free(&y);
    const char *root[] = {"run.method=byzsgdnm", "model.batch=128", "model.lr=0.05", "method.lr_scaling=sqrt",
                          "run.rounds=2", "byzantine.aggregator=median"};
    const char *root_lr[] = {"run.method=byzsgdnm", "model.batch=128", "model.lr=0.1", "run.rounds=2",
                             "byzantine.aggregator=median"};
    ck_assert_int_eq(run_text(convex, root, 6, &x), 0);
    ck_assert_int_eq(run_text(convex, root_lr, 5, &y), 0);
    ck_assert_str_eq(x.text, y.text); /* (128 / 32)^(1/2) = 2 */
    test_sink_free(&x);
    test_sink_free(&y);
    const char *cubic[] = {"run.method=byzsgdnm", "method.lr_scaling=cubic", "run.mode=train"};
    ck_assert_int_eq(test_resolve(convex, cubic, 3, &a, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--set method.lr_scaling=cubic: expected one of none|linear|sqrt, found 'cubic'");
    const char *zero[] = {"run.method=byzsgdnm", "method.reference_batch=0", "run.mode=train"};
    ck_assert_int_eq(test_resolve(convex, zero, 3, &a, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--set method.reference_batch=0: expected a whole number in [1, 1048576], found '0'");
}
END_TEST

static Suite *byzantine_suite(void)
{
    Suite *s = suite_create("byzantine");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_median_and_trimmed_ignore_outliers);
    tcase_add_test(tc, test_krum_picks_an_honest_vector);
    tcase_add_test(tc, test_centered_clipping_is_bounded);
    tcase_add_test(tc, test_betamle_hand_examples);
    tcase_add_test(tc, test_betamle_ignores_outliers);
    tcase_add_test(tc, test_attacks_on_hand_vectors);
    tcase_add_test(tc, test_attackers_drawn_from_the_seed);
    tcase_add_test(tc, test_robust_aggregation_survives_sign_flips);
    tcase_add_test(tc, test_labelflip_gradient_differs);
    tcase_add_test(tc, test_section_round_trip_defaults_and_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(byzantine_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
