/* drift.c — FedProx's proximal term and SCAFFOLD's control variates (drift.h). */
#include "sim/stages/drift.h"

#include <stdlib.h>
#include <string.h>

int drift_init(Drift *dr, const StageContext *cx)
{
    memset(dr, 0, sizeof *dr);
    dr->cx = *cx;
    const DriftSpec *spec = &cx->sc->drift;
    if (!spec->present || spec->method == DRIFT_NONE) return HS_OK;
    dr->method = spec->method;
    dr->mu = (float)spec->mu;
    dr->n = cx->world->n;
    if (cx->trainer == NULL) return HS_OK;
    size_t n = (size_t)dr->n, d = dr->d = trainer_param_count(cx->trainer);
    dr->anchor = malloc(n * d * sizeof *dr->anchor);
    if (dr->method == DRIFT_SCAFFOLD) {
        dr->ci = calloc(n * d, sizeof *dr->ci);
        dr->pending = calloc(n * d, sizeof *dr->pending);
        dr->c = calloc(d, sizeof *dr->c);
        dr->sum = calloc(d, sizeof *dr->sum);
        dr->lr_sum = calloc(n, sizeof *dr->lr_sum);
    }
    if (dr->anchor == NULL ||
        (dr->method == DRIFT_SCAFFOLD && (!dr->ci || !dr->pending || !dr->c || !dr->sum || !dr->lr_sum)))
        return hs_diag_set(cx->diag, HS_E_NOMEM, NULL, 0, "out of memory for [drift]");
    return HS_OK;
}

void drift_free(Drift *dr)
{
    free(dr->anchor);
    free(dr->ci);
    free(dr->pending);
    free(dr->c);
    free(dr->sum);
    free(dr->lr_sum);
    memset(dr, 0, sizeof *dr);
}

int drift_on(const Drift *dr)
{
    return dr->method != DRIFT_NONE;
}

double drift_message_factor(const Drift *dr)
{
    return dr->method == DRIFT_SCAFFOLD ? 2.0 : 1.0;
}

int drift_begin(Drift *dr, int agent, const float *start)
{
    if (dr->anchor == NULL) return HS_OK;
    /* the agent's queued steps (they read its anchor) run before it moves */
    trainer_params(dr->cx.trainer, agent);
    memcpy(dr->anchor + (size_t)agent * dr->d, start, dr->d * sizeof *dr->anchor);
    if (dr->lr_sum) dr->lr_sum[agent] = 0;
    return HS_OK;
}

int drift_step(Drift *dr, Privacy *privacy, int agent)
{
    Trainer *t = dr->cx.trainer;
    if (t == NULL) return HS_OK;
    size_t at = (size_t)agent * dr->d;
    TrainerCorrection k = {0};
    if (dr->method == DRIFT_FEDPROX) {
        k.mu = dr->mu;
        k.anchor = dr->anchor + at;
    } else {
        k.c = dr->c;
        k.ci = dr->ci + at;
        dr->lr_sum[agent] += trainer_schedule_lr(dr->cx.sc, engine_round(dr->cx.engine));
    }
    return privacy_local_step_corrected(privacy, t, agent, &k);
}

int drift_end(Drift *dr, int agent)
{
    if (dr->method != DRIFT_SCAFFOLD || dr->cx.trainer == NULL) return HS_OK;
    const float *y = trainer_params(dr->cx.trainer, agent);
    size_t at = (size_t)agent * dr->d;
    const float *x = dr->anchor + at;
    float *change = dr->pending + at;
    /* option II: c_i+ - c_i = -c + (x - y) / (K lr); a period of no steps changes nothing */
    double steps = dr->lr_sum[agent];
    for (size_t j = 0; j < dr->d; j++)
        change[j] = steps > 0 ? (float)((double)(x[j] - y[j]) / steps) - dr->c[j] : 0.0f;
    return HS_OK;
}

int drift_commit(Drift *dr, const int *who, int k)
{
    if (dr->method != DRIFT_SCAFFOLD || dr->cx.trainer == NULL || k == 0) return HS_OK;
    /* every queued step read c and its c_i: they run first */
    trainer_params(dr->cx.trainer, who[0]);
    size_t d = dr->d;
    memset(dr->sum, 0, d * sizeof *dr->sum);
    for (int m = 0; m < k; m++) {
        float *ci = dr->ci + (size_t)who[m] * d;
        const float *change = dr->pending + (size_t)who[m] * d;
        for (size_t j = 0; j < d; j++) {
            ci[j] += change[j];
            dr->sum[j] += change[j];
        }
    }
    const float share = 1.0f / (float)dr->n;
    for (size_t j = 0; j < d; j++) dr->c[j] += share * dr->sum[j];
    return HS_OK;
}
