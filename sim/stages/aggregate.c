/* aggregate.c — the aggregation stage (aggregate.h): means, masked means, robust rules and
 * central noise, in the forms the methods' protocols combine vectors. */
#include "sim/stages/aggregate.h"

#include "models/model.h"

#include <stdlib.h>
#include <string.h>

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
    if (!a->weights || !a->vectors || !a->everyone || (cx->trainer && (a->mean = calloc(d ? d : 1, sizeof *a->mean)) == NULL))
        return hs_diag_set(cx->diag, HS_E_NOMEM, NULL, 0, "out of memory for the aggregation");
    return HS_OK;
}

void aggregate_free(Aggregate *a)
{
    free(a->weights);
    free(a->vectors);
    free(a->mean);
    free(a->everyone);
    memset(a, 0, sizeof *a);
}

int aggregate_models(Aggregate *a, const int *members, int K, int by_samples, int round, int period)
{
    Trainer *t = a->cx.trainer;
    struct ModelWidth *const *widths = a->step ? local_step_widths(a->step) : NULL;
    if (widths) return trainer_average_masked(t, members, K, by_samples, widths);
    return privacy_average(a->privacy, t, members, K, by_samples, round, period);
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
