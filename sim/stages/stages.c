/* stages.c — one method's stages, made and freed together (stages.h). */
#include "sim/stages/stages.h"

#include <stdlib.h>
#include <string.h>

int stages_create(Stages *st, const StageContext *cx, const StagesSetup *setup)
{
    memset(st, 0, sizeof *st);
    st->cx = *cx;
    size_t d = setup->d ? setup->d : (size_t)cx->profile->total_params;
    int status = privacy_create(cx->sc, cx->world, cx->trainer, &st->privacy);
    if (status != HS_OK) return hs_diag_set(cx->diag, status, NULL, 0, "out of memory for [privacy]");
    if ((setup->byzantine || scenario_feature_on(cx->sc, FEATURE_BYZANTINE)) &&
        (status = byzantine_create(cx->sc, cx->world, cx->trainer, d, cx->diag, &st->byzantine)) != HS_OK)
        return status;
    if ((status = outgoing_init(&st->out, cx, d, setup->keep_messages, st->privacy, st->byzantine)) != HS_OK)
        return status;
    if (outgoing_compresses(&st->out) && cx->trainer && (st->change = malloc(d * sizeof *st->change)) == NULL)
        return hs_diag_set(cx->diag, HS_E_NOMEM, NULL, 0, "out of memory for compression");
    if ((status = drift_init(&st->drift, cx)) != HS_OK) return status;
    LocalStepSetup local = {.pruning = setup->pruning, .freezing = setup->freezing, .steps = setup->steps,
                            .privacy = st->privacy, .byzantine = st->byzantine, .out = &st->out,
                            .drift = &st->drift};
    if ((status = local_step_init(&st->step, cx, &local)) != HS_OK) return status;
    return aggregate_init(&st->agg, cx, d, &st->step, st->privacy, st->byzantine);
}

void stages_free(Stages *st)
{
    for (int k = 0; k < st->capacity; k++) free(st->attacked[k]);
    free(st->attacked);
    free(st->inputs);
    free(st->held);
    free(st->change);
    aggregate_free(&st->agg);
    outgoing_free(&st->out);
    local_step_free(&st->step);
    drift_free(&st->drift);
    byzantine_free(st->byzantine);
    privacy_free(st->privacy);
    memset(st, 0, sizeof *st);
}

void stages_begin_round(Stages *st, int round)
{
    local_step_begin_round(&st->step, round);
    outgoing_begin_round(&st->out, round);
}

/* K vectors of scratch (d floats each), kept for the next exchange. */
static int stages_reserve(Stages *st, int K)
{
    if (K <= st->capacity) return HS_OK;
    float **attacked = realloc(st->attacked, (size_t)K * sizeof *attacked);
    if (attacked == NULL) return HS_E_NOMEM;
    st->attacked = attacked;
    const float **inputs = realloc(st->inputs, (size_t)K * sizeof *inputs);
    if (inputs == NULL) return HS_E_NOMEM;
    st->inputs = inputs;
    const unsigned char **held = realloc(st->held, (size_t)K * sizeof *held);
    if (held == NULL) return HS_E_NOMEM;
    st->held = held;
    size_t n = trainer_param_count(st->cx.trainer);
    for (; st->capacity < K; st->capacity++)
        if ((st->attacked[st->capacity] = malloc((n ? n : 1) * sizeof **st->attacked)) == NULL) return HS_E_NOMEM;
    return HS_OK;
}

int stages_gossip_plain(const Stages *st)
{
    return !st->step.prune.on && !st->step.freeze_rounds && st->byzantine == NULL;
}

int stages_gossip(Stages *st, const int *who, const float *const *vectors, const double *weights, int K, size_t n,
                  float *out)
{
    if (stages_reserve(st, K) != HS_OK) return hs_diag_set(st->cx.diag, HS_E_NOMEM, NULL, 0, "out of memory");
    for (int k = 0; k < K; k++) {
        st->held[k] = local_step_held(&st->step, who[k]);
        st->inputs[k] = vectors[k];
    }
    if (st->byzantine == NULL || st->cx.sc->byzantine.count == 0 || byzantine_is_attacker(st->byzantine, who[0]))
        return aggregate_gossip(&st->agg, who, vectors, st->held, weights, K, n, out);
    /* attackers replace what they send (the blocks; the heads ride along as they are) */
    size_t d = st->out.d;
    outgoing_attack(&st->out, who, K, vectors, st->attacked);
    for (int k = 1; k < K; k++)
        if (byzantine_is_attacker(st->byzantine, who[k])) {
            memcpy(st->attacked[k] + d, vectors[k] + d, (n - d) * sizeof **st->attacked);
            st->inputs[k] = st->attacked[k];
        }
    return aggregate_gossip(&st->agg, who, st->inputs, st->held, weights, K, n, out);
}

double stages_upload(Stages *st, int agent, float *x, const float *start)
{
    outgoing_clip(&st->out, x, start);
    if (!outgoing_compresses(&st->out)) return stages_model_bytes(st, agent);
    if (x == NULL) {
        outgoing_change(&st->out, agent, NULL);
        return outgoing_bytes(&st->out, agent);
    }
    size_t d = st->out.d;
    for (size_t j = 0; j < d; j++) st->change[j] = x[j] - start[j];
    const float *arrives = outgoing_change(&st->out, agent, st->change);
    for (size_t j = 0; j < d; j++) x[j] = start[j] + arrives[j];
    return outgoing_bytes(&st->out, agent);
}

double stages_model_bytes(const Stages *st, int agent)
{
    return drift_message_factor(&st->drift) * local_step_bytes(&st->step, agent);
}
