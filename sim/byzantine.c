/* byzantine.c — identities, attacks, robust aggregators and label-flip gradients.
 * Cost per step with K agents and d floats: mean, ALIE/IPM moments and cclip O(K d);
 * median and trimmed mean O(K^2 d) worst case (insertion sort of each coordinate's K
 * values, which beats qsort for the K <= 32 this simulator usually runs; larger K uses
 * qsort); Krum O(K^2 d) for the pairwise distances. */
#include "sim/byzantine.h"

#include "models/dataset.h"
#include "models/model.h"
#include "sim/engine.h"
#include "sim/rng.h"
#include "sim/trainer.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Stream ids under RNG_PURPOSE_METHOD: identities, attackers' noise, label-flip batches. */
#define BYZANTINE_PICK_STREAM (0xB1ULL << 32)
#define BYZANTINE_NOISE_TAG 0xB2ULL
#define BYZANTINE_BATCH_TAG 0xB3ULL

/* An attacker's own rows for labelflip, labels already flipped. */
typedef struct FlipRows {
    float *x;        /* (count, features) */
    int *y;          /* (count) flipped labels */
    int *order;      /* (count) this pass's order */
    int count, cursor, passes;
} FlipRows;

struct Byzantine {
    ByzantineSpec spec;
    uint64_t seed;
    int n;
    size_t d;
    int *flags;              /* (n) */
    const float **honest;    /* (n) honest agents' vectors this step */
    gsl_rng **noise;         /* (n) attackers' streams (gaussian) */
    float *mean, *sd;        /* (d) honest moments (alie, ipm) */
    float *center;           /* (d) cclip: the previous aggregate */
    double *scratch;         /* (n * n) columns, distances, clipping scales */
    /* labelflip */
    FlipRows *rows;          /* (n), only attackers' are filled */
    Model *shape;
    ModelWorkspace *ws;
    float *x;                /* (batch, features) */
    int *y;                  /* (batch) */
    int features, batch;
    gsl_rng *shuffle;
};

int byzantine_pick(const Scenario *sc, int n, int *flags)
{
    memset(flags, 0, (size_t)n * sizeof *flags);
    int count = sc->byzantine.present ? sc->byzantine.count : 0;
    if (count <= 0) return HS_OK;
    int *perm = malloc((size_t)n * sizeof *perm);
    gsl_rng *rng = rng_stream_create(sc->seed, BYZANTINE_PICK_STREAM, RNG_PURPOSE_METHOD);
    if (perm == NULL || rng == NULL) {
        free(perm);
        if (rng) gsl_rng_free(rng);
        return HS_E_NOMEM;
    }
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = 0; i < count && i < n; i++) {
        int j = i + (int)gsl_rng_uniform_int(rng, (unsigned long)(n - i));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
        flags[perm[i]] = 1;
    }
    gsl_rng_free(rng);
    free(perm);
    return HS_OK;
}

static void byzantine_shuffle(Byzantine *b, int agent)
{
    FlipRows *r = &b->rows[agent];
    rng_stream_reset(b->shuffle, b->seed, (BYZANTINE_BATCH_TAG << 56) | ((uint64_t)agent << 24) | (uint64_t)r->passes++,
                     RNG_PURPOSE_METHOD);
    for (int i = r->count - 1; i > 0; i--) {
        int j = (int)gsl_rng_uniform_int(b->shuffle, (unsigned long)i + 1);
        int t = r->order[i];
        r->order[i] = r->order[j];
        r->order[j] = t;
    }
}

/* Keeps a copy of the attackers' rows of the trainer's partition with labels
 * y -> classes - 1 - y (the trainer's own data stays untouched). */
static int byzantine_load_rows(Byzantine *b, Engine *e)
{
    const Scenario *sc = e->sc;
    const Dataset *ds = trainer_dataset(e->trainer);
    int n = e->world.n, status = HS_E_NOMEM;
    b->features = ds->features;
    b->batch = sc->model.batch;
    b->rows = calloc((size_t)n, sizeof *b->rows);
    b->x = malloc((size_t)b->batch * (size_t)b->features * sizeof *b->x);
    b->y = malloc((size_t)b->batch * sizeof *b->y);
    b->shuffle = gsl_rng_alloc(gsl_rng_taus2);
    if (!b->rows || !b->x || !b->y || !b->shuffle) goto done;
    for (int a = 0; a < n; a++) {
        if (!b->flags[a]) continue;
        int count;
        const int *idx = trainer_agent_samples(e->trainer, a, &count);
        FlipRows *r = &b->rows[a];
        r->count = count;
        r->x = malloc(((size_t)count * (size_t)b->features + 1) * sizeof *r->x);
        r->y = malloc(((size_t)count + 1) * sizeof *r->y);
        r->order = malloc(((size_t)count + 1) * sizeof *r->order);
        if (!r->x || !r->y || !r->order) goto done;
        dataset_gather(ds, 0, idx, count, r->x, r->y);
        for (int k = 0; k < count; k++) {
            r->y[k] = ds->classes - 1 - r->y[k];
            r->order[k] = k;
        }
        byzantine_shuffle(b, a);
    }
    gsl_rng *init = rng_stream_create(sc->seed, 0, RNG_PURPOSE_INIT);
    status = init ? model_create(&sc->model, init, &b->shape) : HS_E_NOMEM;
    if (init) gsl_rng_free(init);
    if (status == HS_OK) status = model_workspace_create(&sc->model, &b->ws);
done:
    if (status == HS_E_NOMEM) hs_diag_set(e->diag, status, NULL, 0, "out of memory for label-flipping agents");
    return status;
}

int byzantine_create(Engine *e, size_t d, Byzantine **out)
{
    *out = NULL;
    int n = e->world.n, status = HS_E_NOMEM;
    Byzantine *b = calloc(1, sizeof *b);
    if (b == NULL) goto fail;
    b->spec = e->sc->byzantine;
    if (!b->spec.present) b->spec = (ByzantineSpec){.aggregator = AGGREGATOR_MEAN, .tau = 1, .iters = 1};
    b->seed = e->sc->seed;
    b->n = n;
    b->d = d;
    b->flags = calloc((size_t)n, sizeof *b->flags);
    b->honest = calloc((size_t)n, sizeof *b->honest);
    b->noise = calloc((size_t)n, sizeof *b->noise);
    b->mean = calloc(d ? d : 1, sizeof *b->mean);
    b->sd = calloc(d ? d : 1, sizeof *b->sd);
    b->center = calloc(d ? d : 1, sizeof *b->center);
    b->scratch = calloc((size_t)n * (size_t)n + 1, sizeof *b->scratch);
    if (!b->flags || !b->honest || !b->noise || !b->mean || !b->sd || !b->center || !b->scratch) goto fail;
    for (int i = 0; i < n; i++) b->flags[i] = e->world.agents[i].byzantine;
    for (int i = 0; i < n; i++)
        if (b->flags[i] && b->spec.attack == ATTACK_GAUSSIAN &&
            (b->noise[i] = rng_stream_create(b->seed, (BYZANTINE_NOISE_TAG << 32) | (uint64_t)i, RNG_PURPOSE_METHOD)) == NULL)
            goto fail;
    if (b->spec.attack == ATTACK_LABELFLIP && b->spec.count > 0 && e->trainer &&
        (status = byzantine_load_rows(b, e)) != HS_OK) {
        byzantine_free(b);
        return status;
    }
    *out = b;
    return HS_OK;
fail:
    byzantine_free(b);
    return hs_diag_set(e->diag, status, NULL, 0, "out of memory for the Byzantine agents");
}

void byzantine_free(Byzantine *b)
{
    if (b == NULL) return;
    for (int i = 0; b->noise && i < b->n; i++)
        if (b->noise[i]) gsl_rng_free(b->noise[i]);
    for (int i = 0; b->rows && i < b->n; i++) {
        free(b->rows[i].x);
        free(b->rows[i].y);
        free(b->rows[i].order);
    }
    free(b->rows);
    model_free(b->shape);
    model_workspace_free(b->ws);
    free(b->x);
    free(b->y);
    if (b->shuffle) gsl_rng_free(b->shuffle);
    free(b->noise);
    free(b->flags);
    free(b->honest);
    free(b->mean);
    free(b->sd);
    free(b->center);
    free(b->scratch);
    free(b);
}

int byzantine_is_attacker(const Byzantine *b, int agent)
{
    return b->flags[agent];
}

int byzantine_flips_labels(const Byzantine *b)
{
    return b->spec.attack == ATTACK_LABELFLIP && b->rows != NULL;
}

int byzantine_gradient(Byzantine *b, Engine *e, int agent, const float *params, float *grad)
{
    FlipRows *r = &b->rows[agent];
    int size = b->batch < r->count ? b->batch : r->count;
    for (int k = 0; k < size; k++) {
        if (r->cursor == r->count) {
            r->cursor = 0;
            byzantine_shuffle(b, agent);
        }
        int row = r->order[r->cursor++];
        memcpy(b->x + (size_t)k * (size_t)b->features, r->x + (size_t)row * (size_t)b->features,
               (size_t)b->features * sizeof *b->x);
        b->y[k] = r->y[row];
    }
    double loss;
    int status = model_grad_full_at(b->shape, params, grad, b->ws, b->x, b->y, size, &loss);
    if (status != HS_OK || !isfinite(loss))
        return hs_diag_set(e->diag, HS_E_DIVERGED, NULL, 0, "label-flipping agent %d diverged: loss %g", agent, loss);
    return HS_OK;
}

void byzantine_moments(const float *const *v, int K, size_t d, float *mean, float *sd)
{
    for (size_t j = 0; j < d; j++) {
        double sum = 0;
        for (int k = 0; k < K; k++) sum += v[k][j];
        double mu = sum / K, squares = 0;
        for (int k = 0; k < K; k++) squares += (v[k][j] - mu) * (v[k][j] - mu);
        mean[j] = (float)mu;
        sd[j] = (float)sqrt(squares / K);
    }
}

void byzantine_attack(Byzantine *b, const float *const *vectors, float *const *out)
{
    if (b->spec.count <= 0) return;
    size_t d = b->d;
    int n_honest = 0;
    for (int i = 0; i < b->n; i++)
        if (!b->flags[i]) b->honest[n_honest++] = vectors[i];
    AttackKind attack = b->spec.attack;
    if (attack == ATTACK_ALIE || attack == ATTACK_IPM) byzantine_moments(b->honest, n_honest, d, b->mean, b->sd);
    for (int i = 0; i < b->n; i++) {
        if (!b->flags[i]) continue;
        float *o = out[i];
        const float *v = vectors[i];
        switch (attack) {
        case ATTACK_SIGNFLIP: {
            float scale = (float)b->spec.scale;
            for (size_t j = 0; j < d; j++) o[j] = -scale * v[j];
            break;
        }
        case ATTACK_GAUSSIAN:
            for (size_t j = 0; j < d; j++) o[j] = (float)gsl_ran_gaussian_ziggurat(b->noise[i], b->spec.sigma);
            break;
        case ATTACK_ALIE: {
            float z = (float)b->spec.z;
            for (size_t j = 0; j < d; j++) o[j] = b->mean[j] - z * b->sd[j];
            break;
        }
        case ATTACK_IPM: {
            float epsilon = (float)b->spec.epsilon;
            for (size_t j = 0; j < d; j++) o[j] = -epsilon * b->mean[j];
            break;
        }
        case ATTACK_LABELFLIP:
            if (o != v) memcpy(o, v, d * sizeof *o);
            break;
        }
    }
}

void aggregate_mean(const float *const *v, int K, size_t d, float *out)
{
    for (size_t j = 0; j < d; j++) {
        double sum = 0;
        for (int k = 0; k < K; k++) sum += v[k][j];
        out[j] = (float)(sum / K);
    }
}

static int byzantine_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts one coordinate's K values into column. */
static void byzantine_column(const float *const *v, int K, size_t j, double *column)
{
    for (int k = 0; k < K; k++) column[k] = v[k][j];
    if (K > 32) {
        qsort(column, (size_t)K, sizeof *column, byzantine_compare_doubles);
        return;
    }
    for (int k = 1; k < K; k++) {
        double x = column[k];
        int i = k - 1;
        while (i >= 0 && column[i] > x) {
            column[i + 1] = column[i];
            i--;
        }
        column[i + 1] = x;
    }
}

void aggregate_median(const float *const *v, int K, size_t d, double *scratch, float *out)
{
    for (size_t j = 0; j < d; j++) {
        byzantine_column(v, K, j, scratch);
        out[j] = (float)(K % 2 ? scratch[K / 2] : (scratch[K / 2 - 1] + scratch[K / 2]) / 2);
    }
}

void aggregate_trimmed(const float *const *v, int K, size_t d, int trim, double *scratch, float *out)
{
    for (size_t j = 0; j < d; j++) {
        byzantine_column(v, K, j, scratch);
        double sum = 0;
        for (int k = trim; k < K - trim; k++) sum += scratch[k];
        out[j] = (float)(sum / (K - 2 * trim));
    }
}

int aggregate_krum(const float *const *v, int K, size_t d, int f, double *distances, float *out)
{
    for (int a = 0; a < K; a++) {
        distances[a * K + a] = 0;
        for (int b = a + 1; b < K; b++) {
            double sum = 0;
            for (size_t j = 0; j < d; j++) {
                double diff = (double)v[a][j] - v[b][j];
                sum += diff * diff;
            }
            distances[a * K + b] = distances[b * K + a] = sum;
        }
    }
    int neighbours = K - f - 2, best = 0;
    if (neighbours < 1) neighbours = 1;
    if (neighbours > K - 1) neighbours = K - 1;
    double best_score = INFINITY;
    for (int a = 0; a < K; a++) {
        /* the `neighbours` smallest distances to the others, by partial selection sort
         * on a copy of row a (K is small) */
        double row[256], score = 0;
        double *r = K <= 256 ? row : malloc((size_t)K * sizeof *r);
        if (r == NULL) return -1;
        int m = 0;
        for (int b = 0; b < K; b++)
            if (b != a) r[m++] = distances[a * K + b];
        for (int t = 0; t < neighbours; t++) {
            int min = t;
            for (int u = t + 1; u < m; u++)
                if (r[u] < r[min]) min = u;
            double tmp = r[t];
            r[t] = r[min];
            r[min] = tmp;
            score += r[t];
        }
        if (r != row) free(r);
        if (score < best_score) {
            best_score = score;
            best = a;
        }
    }
    memcpy(out, v[best], d * sizeof *out);
    return best;
}

void aggregate_cclip(const float *const *v, int K, size_t d, const float *center, double tau, int iters,
                     double *scale, float *out)
{
    if (out != center) memcpy(out, center, d * sizeof *out);
    for (int l = 0; l < iters; l++) {
        for (int k = 0; k < K; k++) {
            double squares = 0;
            for (size_t j = 0; j < d; j++) {
                double diff = (double)v[k][j] - out[j];
                squares += diff * diff;
            }
            double norm = sqrt(squares);
            scale[k] = norm > tau ? tau / norm : 1.0;
        }
        for (size_t j = 0; j < d; j++) {
            double step = 0;
            for (int k = 0; k < K; k++) step += scale[k] * ((double)v[k][j] - out[j]);
            out[j] = (float)(out[j] + step / K);
        }
    }
}

int byzantine_aggregate(Byzantine *b, const float *const *vectors, float *out)
{
    int K = b->n;
    size_t d = b->d;
    switch (b->spec.aggregator) {
    case AGGREGATOR_MEAN:
        aggregate_mean(vectors, K, d, out);
        break;
    case AGGREGATOR_MEDIAN:
        aggregate_median(vectors, K, d, b->scratch, out);
        break;
    case AGGREGATOR_TRIMMED:
        aggregate_trimmed(vectors, K, d, b->spec.trim, b->scratch, out);
        break;
    case AGGREGATOR_KRUM:
        if (aggregate_krum(vectors, K, d, b->spec.f, b->scratch, out) < 0) return HS_E_NOMEM;
        break;
    case AGGREGATOR_CCLIP:
        aggregate_cclip(vectors, K, d, b->center, b->spec.tau, b->spec.iters, b->scratch, out);
        memcpy(b->center, out, d * sizeof *out);
        break;
    }
    return HS_OK;
}
