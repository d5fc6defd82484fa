/* stages.c — one method's stages, made and freed together (stages.h). */
#include "sim/stages/stages.h"

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
    LocalStepSetup local = {.pruning = setup->pruning, .freezing = setup->freezing, .steps = setup->steps,
                            .privacy = st->privacy, .byzantine = st->byzantine, .out = &st->out};
    if ((status = local_step_init(&st->step, cx, &local)) != HS_OK) return status;
    return aggregate_init(&st->agg, cx, d, &st->step, st->privacy, st->byzantine);
}

void stages_free(Stages *st)
{
    aggregate_free(&st->agg);
    outgoing_free(&st->out);
    local_step_free(&st->step);
    byzantine_free(st->byzantine);
    privacy_free(st->privacy);
    memset(st, 0, sizeof *st);
}

void stages_begin_round(Stages *st, int round)
{
    local_step_begin_round(&st->step, round);
    outgoing_begin_round(&st->out, round);
}
