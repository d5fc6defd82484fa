/* aggregate.c — the aggregation stage (aggregate.h): means, masked means, robust rules and
 * central noise, in the forms the methods' protocols combine vectors. */
#include "sim/stages/aggregate.h"

#include "models/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int aggregate_slots(Aggregate *a, int K, size_t n);
static int aggregate_slots_robust(Aggregate *a, Outgoing *out, int K, float *result);

int aggregate_init(Aggregate *a, const StageContext *cx, size_t d, const LocalStep *step, Privacy *privacy,
                   Byzantine *byzantine)
{
    memset(a, 0, sizeof *a);
    a->cx = *cx;
    a->d = d;
    a->step = step;
    a->privacy = privacy;
    a->byzantine = byzantine;
    int n = cx->world->n;
    a->weights = calloc((size_t)n, sizeof *a->weights);
    a->vectors = calloc((size_t)n, sizeof *a->vectors);
    a->everyone = calloc((size_t)n, sizeof *a->everyone);
    for (int i = 0; a->everyone && i < n; i++) a->everyone[i] = i;
    /* the combinations are of the blocks (d); the heads' range after them stays 0 */
    size_t room = cx->trainer && trainer_param_count(cx->trainer) > d ? trainer_param_count(cx->trainer) : d;
    if (!a->weights || !a->vectors || !a->everyone ||
        (cx->trainer && (a->mean = calloc(room ? room : 1, sizeof *a->mean)) == NULL))
        return hs_diag_set(cx->diag, HS_E_NOMEM, NULL, 0, "out of memory for the aggregation");
    return HS_OK;
}

void aggregate_free(Aggregate *a)
{
    free(a->weights);
    free(a->vectors);
    free(a->mean);
    free(a->everyone);
    free(a->sum);
    free(a->count);
    for (int k = 0; k < a->capacity; k++) free(a->slots[k]);
    free(a->slots);
    free(a->slot_who);
    free(a->slot_view);
    memset(a, 0, sizeof *a);
}

int aggregate_models(Aggregate *a, Outgoing *out, const int *members, int K, int by_samples, int round, int period)
{
    Trainer *t = a->cx.trainer;
    struct ModelWidth *const *widths = a->step ? local_step_widths(a->step) : NULL;
    if (widths) return trainer_average_masked(t, members, K, by_samples, widths);
    if (a->byzantine == NULL) return privacy_average(a->privacy, t, members, K, by_samples, round, period);
    /* robust: what the members send (their models), the attackers' replaced, the rule
     * over them (every model weighs alike); the result's blocks to every member */
    if (t == NULL) return HS_OK;
    size_t n = trainer_param_count(t);
    if (aggregate_slots(a, K, n) != HS_OK) return hs_diag_set(a->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
    for (int k = 0; k < K; k++) {
        a->slot_who[k] = members ? members[k] : k;
        memcpy(a->slots[k], trainer_params(t, a->slot_who[k]), n * sizeof **a->slots);
    }
    int status = aggregate_slots_robust(a, out, K, a->mean);
    if (status != HS_OK) return hs_diag_set(a->cx.diag, status, NULL, 0, "out of memory");
    for (int k = 0; k < K; k++) memcpy(trainer_params(t, a->slot_who[k]), a->mean, a->d * sizeof *a->mean);
    return HS_OK;
}

int aggregate_around(Aggregate *a, float *anchor, const int *members, int K, const float *const *contributions,
                     int by_samples)
{
    Trainer *t = a->cx.trainer;
    if (t == NULL || anchor == NULL) return HS_OK;
    for (int k = 0; k < K; k++) {
        int i = members ? members[k] : k;
        a->weights[k] = by_samples ? a->cx.world->agents[i].samples : 1.0;
    }
    if (vec_weighted_average(a->mean, contributions, a->weights, K, a->d) != HS_OK)
        return hs_diag_set(a->cx.diag, HS_E_INTERNAL, NULL, 0, "cannot average the messages");
    for (size_t j = 0; j < a->d; j++) anchor[j] += a->mean[j];
    for (int k = 0; k < K; k++) memcpy(trainer_params(t, members ? members[k] : k), anchor, a->d * sizeof *anchor);
    return HS_OK;
}

int aggregate_vectors(Aggregate *a, const int *who, const float *const *vectors, int K, float *out)
{
    if (a->byzantine) return byzantine_aggregate_among(a->byzantine, vectors, K, out);
    memset(out, 0, a->d * sizeof *out);
    for (int k = 0; k < K; k++) vec_axpy(out, 1.0f, vectors[k], a->d);
    vec_scale(out, 1.0f / (float)K, a->d);
    (void)who;
    return HS_OK;
}

void aggregate_noise(Aggregate *a, const int *members, int K, int by_samples, int round, int period, float *out)
{
    privacy_aggregate_noise(a->privacy, members ? members : a->everyone, K, by_samples, round, period, &out,
                            out ? 1 : 0);
}

void aggregate_scclip(const float *const *v, const double *weights, int K, size_t d, double tau, float *out)
{
    const float *self = v[0];
    double *scale = NULL, stack[64];
    scale = K <= 64 ? stack : malloc((size_t)K * sizeof *scale);
    if (scale == NULL) return;
    for (int k = 1; k < K; k++) {
        double norm = 0;
        for (size_t j = 0; j < d; j++) {
            double z = (double)v[k][j] - self[j];
            norm += z * z;
        }
        norm = sqrt(norm);
        scale[k] = norm > tau ? tau / norm : 1.0;
    }
    for (size_t j = 0; j < d; j++) {
        double x = self[j], sum = weights[0] * x;
        for (int k = 1; k < K; k++) sum += weights[k] * (x + scale[k] * ((double)v[k][j] - x));
        out[j] = (float)sum;
    }
    if (scale != stack) free(scale);
}

/* The masked mix: per coordinate over the holders, weights renormalised. */
static void aggregate_gossip_masked(const float *const *v, const unsigned char *const *held, const double *w, int K,
                                    size_t n, float *out)
{
    for (size_t p = 0; p < n; p++) {
        double sum = 0, total = 0;
        for (int k = 0; k < K; k++)
            if (held[k] == NULL || held[k][p]) {
                sum += w[k] * v[k][p];
                total += w[k];
            }
        out[p] = total > 0 ? (float)(sum / total) : v[0][p];
    }
}

int aggregate_gossip(Aggregate *a, const int *who, const float *const *vectors, const unsigned char *const *held,
                     const double *weights, int K, size_t n, float *out)
{
    int masked = 0;
    for (int k = 0; held && k < K; k++) masked |= held[k] != NULL;
    if (masked) {
        aggregate_gossip_masked(vectors, held, weights, K, n, out);
        return HS_OK;
    }
    const ByzantineSpec *spec = &a->cx.sc->byzantine;
    int robust = a->byzantine && !byzantine_is_attacker(a->byzantine, who[0]) && spec->aggregator != AGGREGATOR_MEAN;
    if (!robust) {
        for (size_t p = 0; p < n; p++) out[p] = (float)(weights[0] * vectors[0][p]);
        for (int k = 1; k < K; k++)
            for (size_t p = 0; p < n; p++) out[p] += (float)(weights[k] * vectors[k][p]);
        return HS_OK;
    }
    /* the rules act on the blocks; the heads, which no gossip method trains, stay */
    memcpy(out, vectors[0], n * sizeof *out);
    double *scratch = malloc((size_t)K * (size_t)K * sizeof *scratch + sizeof *scratch);
    if (scratch == NULL) return hs_diag_set(a->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
    int status = HS_OK;
    switch (spec->aggregator) {
    case AGGREGATOR_CCLIP: aggregate_scclip(vectors, weights, K, a->d, spec->tau, out); break;
    case AGGREGATOR_MEDIAN: aggregate_median(vectors, K, a->d, scratch, out); break;
    case AGGREGATOR_TRIMMED: {
        int trim = spec->trim < (K - 1) / 2 ? spec->trim : (K - 1) / 2;
        aggregate_trimmed(vectors, K, a->d, trim, scratch, out);
        break;
    }
    case AGGREGATOR_KRUM:
        if (aggregate_krum(vectors, K, a->d, spec->f, scratch, out) < 0) status = HS_E_NOMEM;
        break;
    case AGGREGATOR_BETAMLE: {
        int rank = spec->rank < K ? spec->rank : K;
        if (aggregate_betamle(vectors, K, a->d, rank, spec->lambda, spec->iters, out) < 0) status = HS_E_NOMEM;
        break;
    }
    case AGGREGATOR_MEAN: break;
    }
    free(scratch);
    return status == HS_OK ? HS_OK : hs_diag_set(a->cx.diag, status, NULL, 0, "out of memory");
}

/* Room for K reports of n floats in the robust slots. */
static int aggregate_slots(Aggregate *a, int K, size_t n)
{
    if (K <= a->capacity) return HS_OK;
    float **slots = realloc(a->slots, (size_t)K * sizeof *slots);
    if (slots == NULL) return HS_E_NOMEM;
    a->slots = slots;
    int *who = realloc(a->slot_who, (size_t)K * sizeof *who);
    if (who == NULL) return HS_E_NOMEM;
    a->slot_who = who;
    const float **view = realloc(a->slot_view, (size_t)K * sizeof *view);
    if (view == NULL) return HS_E_NOMEM;
    a->slot_view = view;
    for (; a->capacity < K; a->capacity++)
        if ((a->slots[a->capacity] = calloc(n ? n : 1, sizeof **a->slots)) == NULL) return HS_E_NOMEM;
    return HS_OK;
}

/* The [byzantine] rule over the K slots (attackers' replaced first) into out (d). */
static int aggregate_slots_robust(Aggregate *a, Outgoing *out, int K, float *result)
{
    for (int k = 0; k < K; k++) a->slot_view[k] = a->slots[k];
    outgoing_attack(out, a->slot_who, K, a->slot_view, a->slots);
    return byzantine_aggregate_among(a->byzantine, a->slot_view, K, result);
}

int aggregate_reports(Aggregate *a, Outgoing *out, float *x, const int *who, const float *const *models,
                      const double *weights, int K, int round, int period)
{
    Trainer *t = a->cx.trainer;
    size_t n = trainer_param_count(t);
    if (x && K > 0) {
        int masked = 0;
        for (int k = 0; k < K; k++) masked |= local_step_held(a->step, who[k]) != NULL;
        if (a->byzantine) {
            if (aggregate_slots(a, K, n) != HS_OK) return hs_diag_set(a->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
            for (int k = 0; k < K; k++) {
                a->slot_who[k] = who[k];
                for (size_t j = 0; j < a->d; j++) a->slots[k][j] = models[k][j] - x[j];
            }
            int status = aggregate_slots_robust(a, out, K, a->mean);
            if (status != HS_OK) return hs_diag_set(a->cx.diag, status, NULL, 0, "out of memory");
            for (size_t j = 0; j < a->d; j++) x[j] += a->mean[j];
        } else if (masked) {
            const unsigned char **held = malloc((size_t)K * sizeof *held);
            if (held == NULL) return hs_diag_set(a->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
            for (int k = 0; k < K; k++) held[k] = local_step_held(a->step, who[k]);
            int status = vec_masked_average(x, models, held, weights, K, n);
            free(held);
            if (status != HS_OK) return hs_diag_set(a->cx.diag, HS_E_INTERNAL, NULL, 0, "cannot average the reports");
        } else if (vec_weighted_average(x, models, weights, K, n) != HS_OK) {
            return hs_diag_set(a->cx.diag, HS_E_INTERNAL, NULL, 0, "cannot average the reports");
        }
    }
    privacy_aggregate_noise(a->privacy, who, K, 1, round, period, &x, x ? 1 : 0);
    return HS_OK;
}

int aggregate_buffer_add(Aggregate *a, int who, const float *delta, double weight)
{
    Trainer *t = a->cx.trainer;
    size_t n = trainer_param_count(t);
    /* the senders are kept whatever the rule (privacy's shares); the vectors only for a
     * robust rule, which needs them all at once */
    if (aggregate_slots(a, a->n_slots + 1, a->byzantine ? n : 0) != HS_OK)
        return hs_diag_set(a->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
    a->slot_who[a->n_slots++] = who;
    if (delta == NULL) return HS_OK;
    if (a->byzantine) {
        float *slot = a->slots[a->n_slots - 1];
        for (size_t j = 0; j < n; j++) slot[j] = (float)weight * delta[j];
        return HS_OK;
    }
    if (a->sum == NULL && (a->sum = calloc(n, sizeof *a->sum)) == NULL)
        return hs_diag_set(a->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
    if (a->step && (a->step->prune.on || a->step->freeze_rounds)) {
        const unsigned char *held = local_step_held(a->step, who);
        if (a->count == NULL && (a->count = calloc(n, sizeof *a->count)) == NULL)
            return hs_diag_set(a->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (size_t j = 0; j < n; j++)
            if (held == NULL || held[j]) {
                a->sum[j] += (float)weight * delta[j];
                a->count[j] += 1.0f;
            }
        return HS_OK;
    }
    vec_axpy(a->sum, (float)weight, delta, n);
    return HS_OK;
}

int aggregate_buffer_flush(Aggregate *a, Outgoing *out, float *x, double step, int round, int period)
{
    int K = a->n_slots;
    a->n_slots = 0;
    /* the largest share one client can have: its reports in the buffer over K */
    int most = 1;
    for (int k = 0; k < K && a->privacy; k++) {
        int times = 0;
        for (int m = 0; m < K; m++) times += a->slot_who[m] == a->slot_who[k];
        if (times > most) most = times;
    }
    if (x == NULL) {
        privacy_aggregate_noise_share(a->privacy, (double)most / K, round, period, NULL, 0);
        return HS_OK;
    }
    size_t n = trainer_param_count(a->cx.trainer);
    if (a->byzantine) {
        int status = aggregate_slots_robust(a, out, K, a->mean);
        if (status != HS_OK) return hs_diag_set(a->cx.diag, status, NULL, 0, "out of memory");
        privacy_aggregate_noise_share(a->privacy, (double)most / K, round, period, &a->mean, 1);
        vec_axpy(x, (float)-step, a->mean, a->d);
        return HS_OK;
    }
    if (a->count) {
        for (size_t j = 0; j < n; j++) {
            if (a->count[j] > 0) a->sum[j] /= a->count[j];
            a->count[j] = 0;
        }
        privacy_aggregate_noise_share(a->privacy, 1.0 / K, round, period, &a->sum, 1);
        vec_axpy(x, (float)-step, a->sum, n);
    } else if (a->privacy) {
        vec_scale(a->sum, 1.0f / (float)K, n);
        privacy_aggregate_noise_share(a->privacy, 1.0 / K, round, period, &a->sum, 1);
        vec_axpy(x, (float)-step, a->sum, n);
    } else {
        vec_axpy(x, (float)(-step / K), a->sum, n);
    }
    memset(a->sum, 0, n * sizeof *a->sum);
    return HS_OK;
}

const float *aggregate_buffer_take(Aggregate *a, Outgoing *out, int round, int period)
{
    int K = a->n_slots, most = 1;
    for (int k = 0; k < K && a->privacy; k++) {
        int times = 0;
        for (int m = 0; m < K; m++) times += a->slot_who[m] == a->slot_who[k];
        if (times > most) most = times;
    }
    a->n_slots = 0;
    if (a->cx.trainer == NULL) {
        privacy_aggregate_noise_share(a->privacy, (double)most / K, round, period, NULL, 0);
        return NULL;
    }
    size_t n = trainer_param_count(a->cx.trainer);
    float *result = a->sum;
    if (a->byzantine) {
        if (aggregate_slots_robust(a, out, K, a->mean) != HS_OK) return NULL;
        result = a->mean;
    } else if (a->count) {
        for (size_t j = 0; j < n; j++) {
            if (a->count[j] > 0) a->sum[j] /= a->count[j];
            a->count[j] = 0;
        }
    } else {
        vec_scale(a->sum, 1.0f / (float)K, n);
    }
    privacy_aggregate_noise_share(a->privacy, (double)most / K, round, period, &result, 1);
    return result;
}

void aggregate_buffer_clear(Aggregate *a)
{
    if (a->sum) memset(a->sum, 0, trainer_param_count(a->cx.trainer) * sizeof *a->sum);
}

int aggregate_split(Aggregate *a, Outgoing *out, const int *splits, int round)
{
    Trainer *t = a->cx.trainer;
    int n = a->cx.world->n;
    struct ModelWidth *const *widths = a->step ? local_step_widths(a->step) : NULL;
    /* [byzantine]: the rule over the agents' blocks, attackers' replaced (the heads are
     * still averaged per split below, then the blocks overwritten by the rule) */
    if (a->byzantine && t) {
        size_t params = trainer_param_count(t);
        if (aggregate_slots(a, n, params) != HS_OK)
            return hs_diag_set(a->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int k = 0; k < n; k++) {
            a->slot_who[k] = k;
            memcpy(a->slots[k], trainer_params(t, k), params * sizeof **a->slots);
        }
        int status = aggregate_slots_robust(a, out, n, a->mean);
        if (status != HS_OK) return hs_diag_set(a->cx.diag, status, NULL, 0, "out of memory");
    }
    int status = widths ? trainer_average_split_masked(t, splits, widths) : trainer_average_split(t, splits);
    if (status == HS_OK && a->byzantine && t)
        for (int k = 0; k < n; k++) memcpy(trainer_params(t, k), a->mean, a->d * sizeof *a->mean);
    if (status != HS_OK || a->privacy == NULL) return status;
    float **targets = NULL;
    if (t && (targets = malloc((size_t)n * sizeof *targets)) == NULL)
        return hs_diag_set(a->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; t && i < n; i++) targets[i] = trainer_params(t, i);
    privacy_aggregate_noise(a->privacy, a->everyone, n, 1, round, 0, targets, t ? n : 0);
    free(targets);
    privacy_models_apart(a->privacy, NULL, n);
    return HS_OK;
}

int aggregate_masked(Aggregate *a, const int *who, const float *const *vectors, int K, float *out)
{
    size_t n = trainer_param_count(a->cx.trainer);
    const unsigned char **held = malloc((size_t)K * sizeof *held);
    if (held == NULL) return hs_diag_set(a->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
    for (int k = 0; k < K; k++) {
        held[k] = local_step_held(a->step, who ? who[k] : k);
        a->weights[k] = 1.0;
    }
    memcpy(out, vectors[0], n * sizeof *out);
    int status = vec_masked_average(out, vectors, held, a->weights, K, n);
    free(held);
    return status == HS_OK ? HS_OK : hs_diag_set(a->cx.diag, HS_E_INTERNAL, NULL, 0, "cannot average the sub-models");
}
