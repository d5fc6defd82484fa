/* privacy.c — [privacy]: the RDP accountant, per-sample and per-update clipping, noise.
 * Workload: one accountant query per evaluation (255 orders per agent), one clip per
 * client per period, one noise vector per averaging or per local step. */
#include "sim/stages/privacy.h"

#include "models/model.h"
#include "sim/kernel/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ accountant */

static double privacy_log_add(double a, double b)
{
    if (a == -INFINITY) return b;
    if (b == -INFINITY) return a;
    double hi = a > b ? a : b, lo = a > b ? b : a;
    return hi + log1p(exp(lo - hi));
}

double privacy_rdp_step(double q, double sigma, int alpha)
{
    if (q <= 0) return 0;
    if (!(sigma > 0)) return INFINITY;
    if (q >= 1) return alpha / (2 * sigma * sigma);
    /* log A_alpha for integer alpha (the binomial expansion of E[(mu1/mu0)^alpha] under the
     * mixture (1-q) mu0 + q mu1), terms added in k order in log space */
    double log_a = -INFINITY, log_q = log(q), log_1q = log1p(-q);
    for (int k = 0; k <= alpha; k++) {
        double log_binom = lgamma(alpha + 1.0) - lgamma(k + 1.0) - lgamma(alpha - k + 1.0);
        double term = log_binom + k * log_q + (alpha - k) * log_1q + ((double)k * k - k) / (2 * sigma * sigma);
        log_a = privacy_log_add(log_a, term);
    }
    return log_a / (alpha - 1);
}

void privacy_rdp_orders(double q, double sigma, double steps, double *rdp)
{
    for (int i = 0; i < PRIVACY_N_ORDERS; i++) {
        double step = privacy_rdp_step(q, sigma, PRIVACY_MIN_ORDER + i);
        rdp[i] = steps > 0 ? steps * step : 0;
    }
}

double privacy_epsilon_from_rdp(const double *rdp, int n_orders, double delta, int *best_order)
{
    double best = INFINITY;
    int order = 0;
    for (int i = 0; i < n_orders; i++) {
        int alpha = PRIVACY_MIN_ORDER + i;
        double eps = rdp[i] + log(1 / delta) / (alpha - 1);
        if (eps < best) {
            best = eps;
            order = alpha;
        }
    }
    if (best_order) *best_order = order;
    return best;
}

double privacy_epsilon(double q, double sigma, double steps, double delta, int *best_order)
{
    double rdp[PRIVACY_N_ORDERS];
    privacy_rdp_orders(q, sigma, steps, rdp);
    return privacy_epsilon_from_rdp(rdp, PRIVACY_N_ORDERS, delta, best_order);
}

/* ------------------------------------------------------------------ runtime */

struct Privacy {
    PrivacySpec spec;
    uint64_t seed;
    int n;
    size_t d;              /* entries of a model */
    double *samples;       /* (n) each agent's samples: the averaging weights */
    double *q;             /* (n) sample: batch / samples per agent */
    double *steps;         /* (n) sample: DP-SGD steps taken per agent */
    double periods;        /* update: averagings so far */
    gsl_rng **noise;       /* (n) sample: each agent's noise stream */
    gsl_rng *aggregate;    /* update: re-seeded per (round, period) */
    float *scratch;        /* (d) clip = update: a client's update */
    float *noise_vec;      /* (d) update: the aggregate's noise */
    /* update: each member's starting point. Members that start from the same model (all of
     * them when participation = 1) share one snapshot: version[i] names the model agent i
     * holds (0 = the initial one, then one number per averaging). */
    long *version;         /* (n) */
    long next_version;
    int *slot;             /* (n) snapshot of each member this period */
    long *slot_version;    /* (n) */
    float **snapshots;     /* (n) allocated on first use */
    int n_slots;
};

void privacy_free(Privacy *p)
{
    if (p == NULL) return;
    for (int i = 0; p->noise && i < p->n; i++)
        if (p->noise[i]) gsl_rng_free(p->noise[i]);
    for (int i = 0; p->snapshots && i < p->n; i++) free(p->snapshots[i]);
    if (p->aggregate) gsl_rng_free(p->aggregate);
    free(p->noise), free(p->snapshots), free(p->samples), free(p->q), free(p->steps);
    free(p->scratch), free(p->noise_vec), free(p->version), free(p->slot), free(p->slot_version);
    free(p);
}

int privacy_create(const Scenario *sc, const World *world, Trainer *trainer, Privacy **out)
{
    *out = NULL;
    if (!sc->privacy.present || sc->privacy.clip == PRIVACY_CLIP_NONE) return HS_OK;
    Privacy *p = calloc(1, sizeof *p);
    if (p == NULL) return HS_E_NOMEM;
    p->spec = sc->privacy;
    p->seed = sc->seed;
    p->n = world->n;
    p->d = trainer_param_count(trainer);
    size_t n = (size_t)p->n;
    p->samples = calloc(n, sizeof *p->samples);
    p->q = calloc(n, sizeof *p->q);
    p->steps = calloc(n, sizeof *p->steps);
    if (p->samples == NULL || p->q == NULL || p->steps == NULL) goto nomem;
    for (int i = 0; i < p->n; i++) {
        double samples = world->agents[i].samples;
        p->samples[i] = samples;
        int batch = world->agents[i].batch; /* the agent's own sampling rate */
        p->q[i] = samples > batch ? batch / samples : 1.0;
    }
    if (p->spec.clip == PRIVACY_CLIP_SAMPLE) {
        if ((p->noise = calloc(n, sizeof *p->noise)) == NULL) goto nomem;
        for (int i = 0; trainer && i < p->n; i++)
            if ((p->noise[i] = rng_stream_create(sc->seed, (uint64_t)i, RNG_PURPOSE_PRIVACY)) == NULL) goto nomem;
    } else {
        p->version = calloc(n, sizeof *p->version);
        p->slot = calloc(n, sizeof *p->slot);
        p->slot_version = calloc(n, sizeof *p->slot_version);
        p->snapshots = calloc(n, sizeof *p->snapshots);
        p->aggregate = gsl_rng_alloc(gsl_rng_taus2);
        if (!p->version || !p->slot || !p->slot_version || !p->snapshots || !p->aggregate) goto nomem;
        if (trainer && ((p->noise_vec = malloc(p->d * sizeof *p->noise_vec)) == NULL ||
                        (p->scratch = malloc(p->d * sizeof *p->scratch)) == NULL))
            goto nomem;
    }
    *out = p;
    return HS_OK;
nomem:
    privacy_free(p);
    return HS_E_NOMEM;
}

int privacy_local_step(Privacy *p, Trainer *t, int agent)
{
    if (p == NULL || p->spec.clip != PRIVACY_CLIP_SAMPLE) return trainer_local_step(t, agent);
    p->steps[agent] += 1;
    const PrivacySpec *s = &p->spec;
    return trainer_local_step_clipped(t, agent, s->threshold, s->noise_multiplier * s->threshold, p->noise[agent]);
}

int privacy_local_step_corrected(Privacy *p, Trainer *t, int agent, const TrainerCorrection *correction)
{
    if (p == NULL || p->spec.clip != PRIVACY_CLIP_SAMPLE)
        return trainer_local_step_corrected(t, agent, correction, 0, 0, NULL);
    p->steps[agent] += 1;
    const PrivacySpec *s = &p->spec;
    return trainer_local_step_corrected(t, agent, correction, s->threshold, s->noise_multiplier * s->threshold,
                                        p->noise[agent]);
}

int privacy_gradient(Privacy *p, Trainer *t, int agent, const float *params, float *grad)
{
    int sample = p != NULL && p->spec.clip == PRIVACY_CLIP_SAMPLE;
    if (sample) p->steps[agent] += 1;
    if (t == NULL) return HS_OK; /* timing mode: the step counted, no arithmetic */
    if (!sample) return params ? trainer_gradient_at(t, agent, params, grad) : trainer_gradient(t, agent, grad);
    const PrivacySpec *s = &p->spec;
    return trainer_clipped_gradient_at(t, agent, params, grad, s->threshold, s->noise_multiplier * s->threshold,
                                       p->noise[agent]);
}

int privacy_period_begin(Privacy *p, Trainer *t, const int *members, int n_members)
{
    if (p == NULL || p->spec.clip != PRIVACY_CLIP_UPDATE || t == NULL) return HS_OK;
    p->n_slots = 0;
    for (int k = 0; k < n_members; k++) {
        int i = members[k], found = -1;
        for (int s = 0; s < p->n_slots && found < 0; s++)
            if (p->slot_version[s] == p->version[i]) found = s;
        if (found < 0) {
            found = p->n_slots++;
            if (p->snapshots[found] == NULL && (p->snapshots[found] = malloc(p->d * sizeof(float))) == NULL)
                return HS_E_NOMEM;
            p->slot_version[found] = p->version[i];
            memcpy(p->snapshots[found], trainer_params(t, i), p->d * sizeof(float));
        }
        p->slot[i] = found;
    }
    return HS_OK;
}

/* x <- start + clip(x - start); an update within the threshold is left as it is (start +
 * (x - start) would round). */
static void privacy_clip_update(Privacy *p, float *x, const float *start)
{
    for (size_t j = 0; j < p->d; j++) p->scratch[j] = x[j] - start[j];
    if (vec_clip_norm(p->scratch, p->d, p->spec.threshold) <= p->spec.threshold) return;
    for (size_t j = 0; j < p->d; j++) x[j] = start[j] + p->scratch[j];
}

void privacy_clip_vector(Privacy *p, float *v, size_t d)
{
    if (p == NULL || p->spec.clip != PRIVACY_CLIP_UPDATE || v == NULL) return;
    vec_clip_norm(v, d, p->spec.threshold);
}

int privacy_client_done(Privacy *p, Trainer *t, int agent)
{
    if (p == NULL || p->spec.clip != PRIVACY_CLIP_UPDATE || t == NULL) return HS_OK;
    privacy_clip_update(p, trainer_params(t, agent), p->snapshots[p->slot[agent]]);
    return HS_OK;
}

void privacy_client_done_from(Privacy *p, float *x, const float *start)
{
    if (p == NULL || p->spec.clip != PRIVACY_CLIP_UPDATE || x == NULL) return;
    privacy_clip_update(p, x, start);
}

static void privacy_noise(Privacy *p, double std, int round, int period, float *const *targets, int n_targets);

void privacy_aggregate_noise(Privacy *p, const int *members, int n_members, int by_samples, int round, int period,
                             float *const *targets, int n_targets)
{
    if (p == NULL || p->spec.clip != PRIVACY_CLIP_UPDATE || n_members == 0) return;
    /* sensitivity of the weighted mean to one client's clipped update: C x its weight */
    double total = 0, largest = 0;
    for (int k = 0; k < n_members; k++) {
        double w = by_samples ? p->samples[members[k]] : 1.0;
        total += w;
        if (w > largest) largest = w;
    }
    privacy_noise(p, p->spec.noise_multiplier * p->spec.threshold * largest / total, round, period, targets, n_targets);
}

void privacy_aggregate_noise_share(Privacy *p, double share, int round, int period, float *const *targets, int n_targets)
{
    if (p == NULL || p->spec.clip != PRIVACY_CLIP_UPDATE) return;
    privacy_noise(p, p->spec.noise_multiplier * p->spec.threshold * share, round, period, targets, n_targets);
}

/* One run of the client-level mechanism: counted, and N(0, std^2) on every target. */
static void privacy_noise(Privacy *p, double std, int round, int period, float *const *targets, int n_targets)
{
    p->periods += 1;
    if (n_targets == 0 || !(p->spec.noise_multiplier > 0)) return;
    rng_stream_reset(p->aggregate, p->seed, (uint64_t)round * 65536u + (uint64_t)period, RNG_PURPOSE_PRIVACY_AGGREGATE);
    memset(p->noise_vec, 0, p->d * sizeof *p->noise_vec);
    vec_add_gaussian(p->noise_vec, std, p->d, p->aggregate);
    for (int k = 0; k < n_targets; k++) vec_axpy(targets[k], 1.0f, p->noise_vec, p->d);
}

int privacy_average(Privacy *p, Trainer *t, const int *members, int n_members, int by_samples, int round,
                    int period)
{
    int status = trainer_average(t, members, n_members, by_samples);
    if (status != HS_OK || p == NULL || p->spec.clip != PRIVACY_CLIP_UPDATE || n_members == 0) return status;
    long version = ++p->next_version;
    for (int k = 0; k < n_members; k++) p->version[members[k]] = version;
    /* every member ends with the same noisy model: the noise goes on each copy */
    float **targets = NULL;
    if (t && (targets = malloc((size_t)n_members * sizeof *targets)) == NULL) return HS_E_NOMEM;
    for (int k = 0; t && k < n_members; k++) targets[k] = trainer_params(t, members[k]);
    privacy_aggregate_noise(p, members, n_members, by_samples, round, period, targets, t ? n_members : 0);
    free(targets);
    return HS_OK;
}

void privacy_models_apart(Privacy *p, const int *members, int n_members)
{
    if (p == NULL || p->spec.clip != PRIVACY_CLIP_UPDATE) return;
    for (int k = 0; k < n_members; k++) p->version[members ? members[k] : k] = ++p->next_version;
}

double privacy_spent(const Privacy *p)
{
    if (p == NULL) return NAN;
    const PrivacySpec *s = &p->spec;
    if (s->clip == PRIVACY_CLIP_UPDATE) return privacy_epsilon(1.0, s->noise_multiplier, p->periods, s->delta, NULL);
    /* per agent: its own rate and steps; agents with the same rate share one RDP curve */
    double worst = 0, rdp[PRIVACY_N_ORDERS], step_rdp[PRIVACY_N_ORDERS], curve_q = -1;
    for (int i = 0; i < p->n; i++) {
        if (p->steps[i] == 0) continue;
        if (p->q[i] != curve_q) {
            curve_q = p->q[i];
            privacy_rdp_orders(curve_q, s->noise_multiplier, 1, step_rdp);
        }
        for (int k = 0; k < PRIVACY_N_ORDERS; k++) rdp[k] = p->steps[i] * step_rdp[k];
        double eps = privacy_epsilon_from_rdp(rdp, PRIVACY_N_ORDERS, s->delta, NULL);
        if (eps > worst) worst = eps;
    }
    return worst;
}
