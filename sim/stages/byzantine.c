/* byzantine.c — attacks, robust aggregators and label-flip gradients (who attacks is
 * sim/world/roles.c).
 * Cost per step with K agents and d floats: mean, ALIE/IPM moments and cclip O(K d);
 * median and trimmed mean O(K^2 d) worst case (insertion sort of each coordinate's K
 * values, which beats qsort for the K <= 32 this simulator usually runs; larger K uses
 * qsort); Krum O(K^2 d) for the pairwise distances; betamle O(K^2 d) for the Gram matrix of
 * the normalized vectors, then O((K + K^2 [lambda > 0]) K^2) per IRLS iteration in the
 * K-dimensional span of the vectors.
 * One file: attacks and aggregators share the honest statistics of a step. */
#include "sim/stages/byzantine.h"

#include "models/dataset.h"
#include "models/model.h"
#include "sim/kernel/rng.h"
#include "sim/train/trainer.h"

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Stream ids under RNG_PURPOSE_METHOD: attackers' noise, label-flip batches (identities
 * are sim/world/roles.c's, 0xB1 << 32). */
#define BYZANTINE_NOISE_TAG 0xB2ULL
#define BYZANTINE_BATCH_TAG 0xB3ULL

/* An attacker's own rows for labelflip, labels already flipped. */
typedef struct FlipRows {
    float *x;        /* (count, features) */
    int *y;          /* (count) flipped labels */
    int *order;      /* (count) this pass's order */
    int count, cursor, passes;
    int batch;       /* the attacker's own batch ([agents] batch) */
} FlipRows;

struct Byzantine {
    ByzantineSpec spec;
    uint64_t seed;
    int n;
    size_t d;
    int *flags;              /* (n) */
    const float **honest;    /* (room) honest agents' vectors this step */
    int room;                /* vectors one exchange may hold (n, more for a server's buffer) */
    gsl_rng **noise;         /* (n) attackers' streams (gaussian) */
    float *mean, *sd;        /* (d) honest moments (alie, ipm) */
    float *center;           /* (d) cclip: the previous aggregate */
    double *scratch;         /* (room * room) columns, distances, clipping scales */
    /* labelflip */
    FlipRows *rows;          /* (n), only attackers' are filled */
    Model *shape;
    ModelWorkspace *ws;
    float *x;                /* (batch, features) */
    int *y;                  /* (batch) */
    int features, batch;
    gsl_rng *shuffle;
};

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
static int byzantine_load_rows(Byzantine *b, const Scenario *sc, const World *world, const Trainer *trainer,
                               HsDiag *diag)
{
    const Dataset *ds = trainer_dataset(trainer);
    int n = world->n, status = HS_E_NOMEM;
    b->features = ds->features;
    /* buffers for the largest batch; each attacker steps on its own ([agents] batch) */
    b->batch = world_max_batch(world) > sc->model.batch ? world_max_batch(world) : sc->model.batch;
    b->rows = calloc((size_t)n, sizeof *b->rows);
    b->x = malloc((size_t)b->batch * (size_t)b->features * sizeof *b->x);
    b->y = malloc((size_t)b->batch * sizeof *b->y);
    b->shuffle = gsl_rng_alloc(gsl_rng_taus2);
    if (!b->rows || !b->x || !b->y || !b->shuffle) goto done;
    for (int a = 0; a < n; a++) {
        if (!b->flags[a]) continue;
        int count;
        const int *idx = trainer_agent_samples(trainer, a, &count);
        FlipRows *r = &b->rows[a];
        r->count = count;
        r->x = malloc(((size_t)count * (size_t)b->features + 1) * sizeof *r->x);
        r->y = malloc(((size_t)count + 1) * sizeof *r->y);
        r->order = malloc(((size_t)count + 1) * sizeof *r->order);
        if (!r->x || !r->y || !r->order) goto done;
        r->batch = world->agents[a].batch;
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
    if (status == HS_OK) status = model_workspace_create_sized(&sc->model, b->batch, &b->ws);
done:
    if (status == HS_E_NOMEM) hs_diag_set(diag, status, NULL, 0, "out of memory for label-flipping agents");
    return status;
}

int byzantine_create(const Scenario *sc, const World *world, const Trainer *trainer, size_t d, HsDiag *diag,
                     Byzantine **out)
{
    *out = NULL;
    int n = world->n, status = HS_E_NOMEM;
    Byzantine *b = calloc(1, sizeof *b);
    if (b == NULL) goto fail;
    b->spec = sc->byzantine;
    if (!b->spec.present) b->spec = (ByzantineSpec){.aggregator = AGGREGATOR_MEAN, .tau = 1, .iters = 1};
    b->seed = sc->seed;
    b->n = n;
    b->d = d;
    b->flags = calloc((size_t)n, sizeof *b->flags);
    b->honest = calloc((size_t)n, sizeof *b->honest);
    b->noise = calloc((size_t)n, sizeof *b->noise);
    b->mean = calloc(d ? d : 1, sizeof *b->mean);
    b->sd = calloc(d ? d : 1, sizeof *b->sd);
    b->center = calloc(d ? d : 1, sizeof *b->center);
    b->scratch = calloc((size_t)n * (size_t)n + 1, sizeof *b->scratch);
    b->room = n;
    if (!b->flags || !b->honest || !b->noise || !b->mean || !b->sd || !b->center || !b->scratch) goto fail;
    for (int i = 0; i < n; i++) b->flags[i] = world->agents[i].byzantine;
    for (int i = 0; i < n; i++)
        if (b->flags[i] && b->spec.attack == ATTACK_GAUSSIAN &&
            (b->noise[i] = rng_stream_create(b->seed, (BYZANTINE_NOISE_TAG << 32) | (uint64_t)i, RNG_PURPOSE_METHOD)) == NULL)
            goto fail;
    if (b->spec.attack == ATTACK_LABELFLIP && b->spec.count > 0 && trainer &&
        (status = byzantine_load_rows(b, sc, world, trainer, diag)) != HS_OK) {
        byzantine_free(b);
        return status;
    }
    *out = b;
    return HS_OK;
fail:
    byzantine_free(b);
    return hs_diag_set(diag, status, NULL, 0, "out of memory for the Byzantine agents");
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

int byzantine_gradient(Byzantine *b, int agent, const float *params, float *grad, HsDiag *diag)
{
    FlipRows *r = &b->rows[agent];
    int size = r->batch < r->count ? r->batch : r->count;
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
        return hs_diag_set(diag, HS_E_DIVERGED, NULL, 0, "label-flipping agent %d diverged: loss %g", agent, loss);
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
    byzantine_attack_among(b, NULL, b->n, vectors, out);
}

/* Room for an exchange of K vectors (a server's buffer may hold more reports than there
 * are agents). */
static int byzantine_reserve(Byzantine *b, int K)
{
    if (K <= b->room) return HS_OK;
    const float **honest = realloc(b->honest, (size_t)K * sizeof *honest);
    if (honest == NULL) return HS_E_NOMEM;
    b->honest = honest;
    double *scratch = realloc(b->scratch, ((size_t)K * (size_t)K + 1) * sizeof *scratch);
    if (scratch == NULL) return HS_E_NOMEM;
    b->scratch = scratch;
    b->room = K;
    return HS_OK;
}

void byzantine_attack_among(Byzantine *b, const int *who, int K, const float *const *vectors, float *const *out)
{
    if (b->spec.count <= 0 || byzantine_reserve(b, K) != HS_OK) return;
    size_t d = b->d;
    int n_honest = 0;
    for (int k = 0; k < K; k++)
        if (!b->flags[who ? who[k] : k]) b->honest[n_honest++] = vectors[k];
    AttackKind attack = b->spec.attack;
    /* no honest vector in the exchange: nothing to imitate (ALIE, IPM send the zero vector) */
    if (attack == ATTACK_ALIE || attack == ATTACK_IPM) {
        if (n_honest > 0) byzantine_moments(b->honest, n_honest, d, b->mean, b->sd);
        else memset(b->mean, 0, d * sizeof *b->mean), memset(b->sd, 0, d * sizeof *b->sd);
    }
    for (int k = 0; k < K; k++) {
        int i = who ? who[k] : k;
        if (!b->flags[i]) continue;
        float *o = out[k];
        const float *v = vectors[k];
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

/* ---- betamle: Beta-MLE subspace aggregation (Flag Aggregator) ----
 *
 * Almasi, Mishra, Vamanan, Ravi, "Flag Aggregator: Scalable Distributed Training under
 * Failures and Augmented Losses using Convex Optimization" (ICLR 2024; the seed's Beta-MLE
 * abstract). Each worker's quality is its reconstruction ratio in an m-dimensional
 * subspace Y (Y^T Y = I): v_i(Y) = |Y^T g_i|^2 / |g_i|^2 in [0, 1]. Aggregation is the
 * maximum-likelihood Y under Beta densities of the v_i, with pairwise terms on the
 * differences as a regulariser (weight lambda), and the paper solves it by iteratively
 * reweighted least squares: each iteration is a weighted flag mean, the top-m left singular
 * vectors of the weighted, normalized vectors. The aggregate is sum_i Y Y^T g_i/|g_i| / m.
 *
 * The paper's text could not be consulted from this project; the objective, the weights and
 * the aggregate follow the authors' public code (hamidralmasi/FlagAggregator,
 * aggregators/flag.py and center_algorithms_torch.py irls_flag), which is the paper's
 * reference implementation:
 *   minimize  sum_i sqrt(1 - v_i) + lambda/(K(K-1)) sum_{i != j} sqrt(1 - v_ij),
 *   IRLS weight of column x: (1 - v_x + eps)^(-1/2), eps = 1e-7,
 *   aggregate sum_i Y Y^T g_i/|g_i| / m (so every worker counts at most one unit of length
 *   and lr is a step length: the aggregate's length is at most K/m).
 * Where this differs from that code, on purpose:
 *   - The start is the flag mean (every weight equal) instead of a random orthonormal Y:
 *     a random Y in d >> K dimensions reconstructs every g_i to ~0, so the authors' first
 *     iteration gives almost equal weights anyway; the flag mean makes it deterministic
 *     without a random stream. `iters` reweightings follow it (the authors use 1 to 4).
 *   - A pair term uses the normalized difference (g^_i - g^_j)/|g^_i - g^_j|, so that its
 *     ratio is a reconstruction ratio in [0, 1] (the Beta support); the code takes the raw
 *     difference of unit vectors and |1 - |Y^T d|^2|. Its weight is lambda/(K(K-1)) times
 *     the IRLS weight (the code scales the column, i.e. squares lambda/(K(K-1))).
 *   - As in irls_flag, an iteration that does not lower the objective is undone and ends
 *     the loop.
 * Everything runs in the span of the K vectors: with the Gram matrix of the unit vectors
 * G^T G = V diag(s) V^T, the columns of U = G V diag(s)^(-1/2) (eigenvalues above
 * 1e-10 max) are an orthonormal basis of that span and g^_i has coordinates
 * c_i = diag(s)^(1/2) V^T e_i in it. A zero vector has no direction and takes no part. */

typedef struct BetaMle {
    int K, r, m, pairs;
    double *coords;   /* (K, r) c_i, row i */
    double *dirs;     /* (pairs, r) normalized differences */
    double *weights;  /* (K + pairs) */
    double *scatter;  /* (r, r) */
    double *z;        /* (r, m) the subspace in span coordinates */
    double *best;     /* (r, m) */
    gsl_eigen_symmv_workspace *ws;
    gsl_matrix *evec;
    gsl_vector *eval;
} BetaMle;

/* |Z^T c|^2 for one r-vector c. */
static double betamle_ratio(const BetaMle *b, const double *c)
{
    double total = 0;
    for (int k = 0; k < b->m; k++) {
        double dot = 0;
        for (int t = 0; t < b->r; t++) dot += b->z[t * b->m + k] * c[t];
        total += dot * dot;
    }
    return total;
}

static double betamle_objective(const BetaMle *b, double lambda)
{
    double total = 0, pair_weight = b->K > 1 ? lambda / ((double)b->K * (b->K - 1)) : 0;
    for (int i = 0; i < b->K; i++) {
        double left = 1 - betamle_ratio(b, b->coords + (size_t)i * b->r);
        total += sqrt(left > 0 ? left : 0);
    }
    for (int q = 0; q < b->pairs; q++) {
        double left = 1 - betamle_ratio(b, b->dirs + (size_t)q * b->r);
        total += pair_weight * sqrt(left > 0 ? left : 0);
    }
    return total;
}

/* z <- the top-m eigenvectors of sum_x weight_x x x^T (a weighted flag mean). */
static void betamle_flag_mean(BetaMle *b)
{
    int r = b->r;
    memset(b->scatter, 0, (size_t)r * r * sizeof *b->scatter);
    for (int x = 0; x < b->K + b->pairs; x++) {
        const double *c = x < b->K ? b->coords + (size_t)x * r : b->dirs + (size_t)(x - b->K) * r;
        double w = b->weights[x];
        for (int s = 0; s < r; s++)
            for (int t = 0; t < r; t++) b->scatter[s * r + t] += w * c[s] * c[t];
    }
    gsl_matrix_view a = gsl_matrix_view_array(b->scatter, (size_t)r, (size_t)r);
    gsl_eigen_symmv(&a.matrix, b->eval, b->evec, b->ws);
    gsl_eigen_symmv_sort(b->eval, b->evec, GSL_EIGEN_SORT_VAL_DESC);
    for (int t = 0; t < r; t++)
        for (int k = 0; k < b->m; k++) b->z[t * b->m + k] = gsl_matrix_get(b->evec, (size_t)t, (size_t)k);
}

/* The IRLS weights at the current z. */
static void betamle_reweight(BetaMle *b, double lambda)
{
    double pair_weight = b->K > 1 ? lambda / ((double)b->K * (b->K - 1)) : 0;
    for (int x = 0; x < b->K + b->pairs; x++) {
        const double *c = x < b->K ? b->coords + (size_t)x * b->r : b->dirs + (size_t)(x - b->K) * b->r;
        double left = 1 - betamle_ratio(b, c);
        if (left < 0) left = 0;
        b->weights[x] = (x < b->K ? 1.0 : pair_weight) / sqrt(left + 1e-7);
    }
}

int aggregate_betamle(const float *const *v, int K, size_t d, int rank, double lambda, int iters, float *out)
{
    int status = -1;
    double *norms = calloc((size_t)K, sizeof *norms), *gram = calloc((size_t)K * K + 3 * (size_t)K, sizeof *gram);
    double *basis = calloc((size_t)K * K, sizeof *basis), *spectrum = calloc((size_t)K, sizeof *spectrum);
    BetaMle b = {.K = K};
    gsl_eigen_symmv_workspace *gram_ws = gsl_eigen_symmv_alloc((size_t)K);
    gsl_matrix *gram_evec = gsl_matrix_alloc((size_t)K, (size_t)K);
    gsl_vector *gram_eval = gsl_vector_alloc((size_t)K);
    if (!norms || !gram || !basis || !spectrum || !gram_ws || !gram_evec || !gram_eval) goto done;
    memset(out, 0, d * sizeof *out);
    for (int i = 0; i < K; i++) {
        double squares = 0;
        for (size_t j = 0; j < d; j++) squares += (double)v[i][j] * v[i][j];
        norms[i] = sqrt(squares);
    }
    /* Gram matrix of the unit vectors (zero vectors: a zero row and column) */
    for (int i = 0; i < K; i++)
        for (int k = i; k < K; k++) {
            double dot = 0;
            if (norms[i] > 0 && norms[k] > 0) {
                for (size_t j = 0; j < d; j++) dot += (double)v[i][j] * v[k][j];
                dot /= norms[i] * norms[k];
            }
            gram[i * K + k] = gram[k * K + i] = dot;
        }
    gsl_matrix_view gv = gsl_matrix_view_array(gram, (size_t)K, (size_t)K);
    gsl_eigen_symmv(&gv.matrix, gram_eval, gram_evec, gram_ws);
    gsl_eigen_symmv_sort(gram_eval, gram_evec, GSL_EIGEN_SORT_VAL_DESC);
    double top = gsl_vector_get(gram_eval, 0);
    int r = 0;
    while (r < K && top > 0 && gsl_vector_get(gram_eval, (size_t)r) > 1e-10 * top) {
        spectrum[r] = gsl_vector_get(gram_eval, (size_t)r);
        for (int i = 0; i < K; i++) basis[i * K + r] = gsl_matrix_get(gram_evec, (size_t)i, (size_t)r);
        r++;
    }
    if (r == 0) {  /* every vector is zero */
        status = 0;
        goto done;
    }
    b.r = r;
    b.m = rank < r ? rank : r;
    int live = 0;
    for (int i = 0; i < K; i++) live += norms[i] > 0;
    b.pairs = lambda > 0 ? live * (live - 1) : 0;
    b.coords = calloc((size_t)K * r, sizeof *b.coords);
    b.dirs = calloc((size_t)(b.pairs ? b.pairs : 1) * r, sizeof *b.dirs);
    b.weights = calloc((size_t)(K + b.pairs), sizeof *b.weights);
    b.scatter = calloc((size_t)r * r, sizeof *b.scatter);
    b.z = calloc((size_t)r * b.m, sizeof *b.z);
    b.best = calloc((size_t)r * b.m, sizeof *b.best);
    b.ws = gsl_eigen_symmv_alloc((size_t)r);
    b.evec = gsl_matrix_alloc((size_t)r, (size_t)r);
    b.eval = gsl_vector_alloc((size_t)r);
    if (!b.coords || !b.dirs || !b.weights || !b.scatter || !b.z || !b.best || !b.ws || !b.evec || !b.eval) goto done;
    for (int i = 0; i < K; i++)
        for (int t = 0; t < r; t++) b.coords[i * r + t] = sqrt(spectrum[t]) * basis[i * K + t];
    for (int i = 0, q = 0; b.pairs && i < K; i++)
        for (int k = 0; k < K; k++) {
            if (i == k || norms[i] == 0 || norms[k] == 0) continue;
            double *dir = b.dirs + (size_t)q++ * r, squares = 0;
            for (int t = 0; t < r; t++) {
                dir[t] = b.coords[i * r + t] - b.coords[k * r + t];
                squares += dir[t] * dir[t];
            }
            /* identical directions: no difference to reconstruct (a zero column) */
            double length = sqrt(squares);
            for (int t = 0; t < r; t++) dir[t] = length > 1e-12 ? dir[t] / length : 0;
        }
    double pair_weight = K > 1 ? lambda / ((double)K * (K - 1)) : 0;
    for (int x = 0; x < K + b.pairs; x++) b.weights[x] = x < K ? 1.0 : pair_weight;
    betamle_flag_mean(&b);
    double objective = betamle_objective(&b, lambda);
    for (int it = 0; it < iters; it++) {
        memcpy(b.best, b.z, (size_t)r * b.m * sizeof *b.z);
        betamle_reweight(&b, lambda);
        betamle_flag_mean(&b);
        double next = betamle_objective(&b, lambda);
        if (!(next < objective)) {
            memcpy(b.z, b.best, (size_t)r * b.m * sizeof *b.z);
            break;
        }
        objective = next;
    }
    /* y = Z Z^T sum_i c_i / rank in span coordinates, then out = G V diag(s)^(-1/2) y:
     * out = sum_i a_i v_i / |v_i| with a = V diag(s)^(-1/2) y. spectrum is reused for y,
     * gram for the sum, the projection and a. */
    double *sum = gram, *proj = gram + K, *a = gram + 2 * K;
    for (int t = 0; t < r; t++) {
        sum[t] = 0;
        for (int i = 0; i < K; i++) sum[t] += b.coords[i * r + t];
    }
    for (int k = 0; k < b.m; k++) {
        proj[k] = 0;
        for (int t = 0; t < r; t++) proj[k] += b.z[t * b.m + k] * sum[t];
    }
    for (int t = 0; t < r; t++) {
        double y = 0;
        for (int k = 0; k < b.m; k++) y += b.z[t * b.m + k] * proj[k];
        spectrum[t] = y / (rank * sqrt(spectrum[t]));
    }
    for (int i = 0; i < K; i++) {
        a[i] = 0;
        for (int t = 0; t < r; t++) a[i] += basis[i * K + t] * spectrum[t];
        a[i] = norms[i] > 0 ? a[i] / norms[i] : 0;
    }
    for (size_t j = 0; j < d; j++) {
        double value = 0;
        for (int i = 0; i < K; i++) value += a[i] * v[i][j];
        out[j] = (float)value;
    }
    status = 0;
done:
    free(norms);
    free(gram);
    free(basis);
    free(spectrum);
    free(b.coords);
    free(b.dirs);
    free(b.weights);
    free(b.scatter);
    free(b.z);
    free(b.best);
    if (b.ws) gsl_eigen_symmv_free(b.ws);
    if (b.evec) gsl_matrix_free(b.evec);
    if (b.eval) gsl_vector_free(b.eval);
    if (gram_ws) gsl_eigen_symmv_free(gram_ws);
    if (gram_evec) gsl_matrix_free(gram_evec);
    if (gram_eval) gsl_vector_free(gram_eval);
    return status;
}

int byzantine_aggregate(Byzantine *b, const float *const *vectors, float *out)
{
    return byzantine_aggregate_among(b, vectors, b->n, out);
}

int byzantine_aggregate_among(Byzantine *b, const float *const *vectors, int K, float *out)
{
    size_t d = b->d;
    if (byzantine_reserve(b, K) != HS_OK) return HS_E_NOMEM;
    switch (b->spec.aggregator) {
    case AGGREGATOR_MEAN:
        aggregate_mean(vectors, K, d, out);
        break;
    case AGGREGATOR_MEDIAN:
        aggregate_median(vectors, K, d, b->scratch, out);
        break;
    case AGGREGATOR_TRIMMED: /* a smaller exchange than the agents drops fewer: at most (K - 1) / 2 */
        aggregate_trimmed(vectors, K, d, b->spec.trim < (K - 1) / 2 ? b->spec.trim : (K - 1) / 2, b->scratch, out);
        break;
    case AGGREGATOR_KRUM:
        if (aggregate_krum(vectors, K, d, b->spec.f, b->scratch, out) < 0) return HS_E_NOMEM;
        break;
    case AGGREGATOR_CCLIP:
        aggregate_cclip(vectors, K, d, b->center, b->spec.tau, b->spec.iters, b->scratch, out);
        memcpy(b->center, out, d * sizeof *out);
        break;
    case AGGREGATOR_BETAMLE:
        if (aggregate_betamle(vectors, K, d, b->spec.rank < K ? b->spec.rank : K, b->spec.lambda, b->spec.iters, out) <
            0)
            return HS_E_NOMEM;
        break;
    }
    return HS_OK;
}
