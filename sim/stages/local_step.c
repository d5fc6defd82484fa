/* local_step.c — the local-step stage (local_step.h): which step an agent takes and what
 * it costs, from the features the scenario turns on. */
#include "sim/stages/local_step.h"

#include "models/model.h"
#include "models/model_width.h"
#include "models/optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int local_step_init(LocalStep *ls, const StageContext *cx, const LocalStepSetup *setup)
{
    memset(ls, 0, sizeof *ls);
    ls->cx = *cx;
    ls->flops = cx->profile->total_flops + cx->profile->loss_flops; /* per sample: x the agent's batch */
    ls->privacy = setup->privacy;
    ls->byzantine = setup->byzantine && byzantine_flips_labels(setup->byzantine) ? setup->byzantine : NULL;
    ls->drift = setup->drift && drift_on(setup->drift) ? setup->drift : NULL;
    if (setup->freezing && setup->freezing->freeze == FREEZE_PROGRESSIVE) {
        ls->freeze_rounds = setup->freezing->freeze_rounds;
        ls->stage = 1;
        Trainer *t = cx->trainer;
        if (t && ((ls->stage_held = malloc(trainer_param_count(t))) == NULL ||
                  trainer_stage_mask(t, ls->stage, ls->stage_held) != HS_OK))
            return hs_diag_set(cx->diag, HS_E_NOMEM, NULL, 0, "out of memory for freeze");
    }
    if (setup->out && setup->out->dgc) {
        ls->dgc = setup->out;
        Trainer *t = cx->trainer;
        if (t && ((ls->gradient = malloc(trainer_param_count(t) * sizeof *ls->gradient)) == NULL ||
                  (ls->velocity_step = malloc(setup->out->d * sizeof *ls->velocity_step)) == NULL))
            return hs_diag_set(cx->diag, HS_E_NOMEM, NULL, 0, "out of memory for dgc");
    }
    if (setup->pruning == NULL) return HS_OK;
    return prune_create(setup->pruning, cx->sc, cx->world, cx->profile, cx->trainer != NULL, setup->steps, cx->diag,
                        &ls->prune);
}

void local_step_free(LocalStep *ls)
{
    prune_free(&ls->prune);
    free(ls->gradient);
    free(ls->velocity_step);
    free(ls->stage_held);
}

void local_step_begin_round(LocalStep *ls, int round)
{
    if (ls->freeze_rounds == 0) return;
    ls->stage = round / ls->freeze_rounds + 1;
    if (ls->stage > ls->cx.profile->n_blocks) ls->stage = ls->cx.profile->n_blocks;
    if (ls->stage_held) trainer_stage_mask(ls->cx.trainer, ls->stage, ls->stage_held);
}

const unsigned char *local_step_held(const LocalStep *ls, int agent)
{
    if (ls->freeze_rounds) return ls->stage_held;
    if (ls->prune.on && ls->prune.widths[agent]) return model_width_held(ls->prune.widths[agent]);
    return NULL;
}

double local_step_extra(const LocalStep *ls)
{
    if (ls->freeze_rounds) return ls->stage;
    if (ls->prune.on) return prune_smallest_keep(&ls->prune);
    return NAN;
}

double local_step_flops(const LocalStep *ls, int agent)
{
    /* the agent's own batch ([agents] batch; [model] batch by default, the same product) */
    int batch = ls->cx.world->agents[agent].batch;
    if (ls->freeze_rounds)
        return batch * (model_profile_stage_flops(ls->cx.profile, ls->stage) + ls->cx.profile->loss_flops);
    return ls->prune.on ? ls->prune.step_flops[agent] : batch * ls->flops;
}

double local_step_bytes(const LocalStep *ls, int agent)
{
    if (ls->freeze_rounds) return 4.0 * model_profile_stage_params(ls->cx.profile, ls->stage);
    return ls->prune.on ? ls->prune.bytes[agent] : 4.0 * ls->cx.profile->total_params;
}

struct ModelWidth *const *local_step_widths(const LocalStep *ls)
{
    return ls->prune.on ? ls->prune.widths : NULL;
}

const unsigned char *local_step_moving(const LocalStep *ls)
{
    return ls->freeze_rounds ? ls->stage_held : NULL;
}

void local_step_mask(const LocalStep *ls, float *v, size_t n)
{
    const unsigned char *held = v ? local_step_moving(ls) : NULL;
    for (size_t j = 0; held && j < n; j++)
        if (!held[j]) v[j] = 0.0f;
}

/* A label-flipping attacker's step: its gradient on flipped labels, its optimiser. */
static int local_step_attacker(LocalStep *ls, int agent, const float *at, float *grad)
{
    Trainer *t = ls->cx.trainer;
    return byzantine_gradient(ls->byzantine, agent, at ? at : trainer_params(t, agent), grad, ls->cx.diag);
}

/* DGC's local step: clipped gradient, the agent's own velocity u_i, a plain step on the
 * blocks (the auxiliary heads are not trained). */
static int local_step_dgc(LocalStep *ls, int agent)
{
    Trainer *t = ls->cx.trainer;
    if (t == NULL) return HS_OK;
    int status = trainer_gradient(t, agent, ls->gradient);
    if (status != HS_OK) return status;
    const OptimSpec *o = &ls->cx.sc->optim;
    int heavy = o->kind == OPTIM_MOMENTUM;
    size_t d = ls->dgc->d;
    float *x = trainer_params(t, agent);
    compress_dgc_clip(ls->gradient, d, ls->cx.sc->compression.clip, ls->cx.world->n);
    compress_worker_momentum(outgoing_velocity(ls->dgc, agent), ls->velocity_step, x, ls->gradient, d,
                             heavy ? o->momentum : 0, o->weight_decay, heavy && o->nesterov);
    const float rate = (float)trainer_schedule_lr(ls->cx.sc, engine_round(ls->cx.engine));
    for (size_t j = 0; j < d; j++) x[j] -= rate * ls->velocity_step[j];
    return HS_OK;
}

int local_step_run(LocalStep *ls, int agent)
{
    Trainer *t = ls->cx.trainer;
    if (ls->dgc) return local_step_dgc(ls, agent);
    if (ls->freeze_rounds) return trainer_stage_step(t, agent, ls->stage);
    if (ls->prune.on) return trainer_width_step(t, agent, ls->prune.widths[agent]);
    if (t && ls->byzantine && byzantine_is_attacker(ls->byzantine, agent)) {
        float *grad = trainer_gradient_scratch(t);
        int status = local_step_attacker(ls, agent, NULL, grad);
        return status == HS_OK ? trainer_optimizer_step(t, agent, grad) : status;
    }
    if (ls->drift) return drift_step(ls->drift, ls->privacy, agent);
    return privacy_local_step(ls->privacy, t, agent);
}

int local_step_gradient(LocalStep *ls, int agent, const float *at, float *grad)
{
    Trainer *t = ls->cx.trainer;
    if (ls->freeze_rounds) return t ? trainer_stage_gradient_at(t, agent, ls->stage, at, grad) : HS_OK;
    if (ls->prune.on) return t ? trainer_width_gradient_at(t, agent, ls->prune.widths[agent], at, grad) : HS_OK;
    if (ls->byzantine && byzantine_is_attacker(ls->byzantine, agent))
        return t ? local_step_attacker(ls, agent, at, grad) : HS_OK;
    /* timing mode too: the accountant counts the DP-SGD step (as local_step_run does) */
    return privacy_gradient(ls->privacy, t, agent, at, grad);
}

int local_step_apply(LocalStep *ls, int agent, const float *grad)
{
    if (ls->freeze_rounds) return trainer_stage_optimizer_step(ls->cx.trainer, agent, ls->stage, grad);
    return trainer_optimizer_step(ls->cx.trainer, agent, grad);
}

int local_step_optim_step(const LocalStep *ls, struct Optim *o, float *params, const float *grad, size_t d, double lr)
{
    if (ls->freeze_rounds) return trainer_stage_optim_step(ls->cx.trainer, o, params, ls->stage, grad, lr);
    return optim_step(o, params, grad, 0, d, lr);
}
