/* trainer_prune.c — train-mode arithmetic of width pruning (sim/stages/prune.h,
 * models/model_width.h) and progressive freezing (localsgd's freeze = progressive),
 * beside the trainer's other paths, which it leaves as they are.
 * Threads: a pruned or staged local step is a queued job like trainer_local_step (one
 * agent's jobs run in order on one slot; a pruned agent's ModelWidth, with its own
 * sub-model and workspace, belongs to that agent alone). The calls that hand back a
 * vector at once (a gradient, the shared model's gradients, the masked average) flush
 * the queues first and run on the engine's thread, in agent order. */
#include "sim/train/trainer_internal.h"

#include "models/model_width.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int trainer_width_gradient(Trainer *t, int agent, ModelWidth *width, float *grad)
{
    return trainer_width_gradient_at(t, agent, width, NULL, grad);
}

int trainer_width_gradient_at(Trainer *t, int agent, ModelWidth *width, const float *params, float *grad)
{
    if (t == NULL) return HS_OK;
    if (width == NULL) return params ? trainer_gradient_at(t, agent, params, grad) : trainer_gradient(t, agent, grad);
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    TrainerSlot *slot = &t->slots[0];
    double loss = NAN;
    if (trainer_mine(t, agent)) {
        int b = trainer_next_batch(t, slot, agent);
        status = model_width_grad(width, params ? params : model_params(t->models[agent]), grad, slot->x, slot->y, b, &loss);
    }
    trainer_share_gradient(t, agent, grad, &loss, &status);
    return trainer_count_loss(t, loss, status, agent);
}

int trainer_stage_gradient_at(Trainer *t, int agent, int stage, const float *params, float *grad)
{
    if (t == NULL) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    TrainerSlot *slot = &t->slots[0];
    double loss = NAN;
    /* the frozen blocks' and the other heads' ranges are 0, not left as they were: the
     * whole vector is what the method sends or steps with */
    memset(grad, 0, t->n_params * sizeof *grad);
    if (trainer_mine(t, agent)) { /* one rank computes it, every rank gets it (trainer_ranks.c) */
        int b = trainer_next_batch(t, slot, agent);
        status = model_grad_stage_at(t->eval, params ? params : model_params(t->models[agent]), grad, slot->ws, stage,
                                     slot->x, slot->y, b, &loss);
    }
    trainer_share_gradient(t, agent, grad, &loss, &status);
    return trainer_count_loss(t, loss, status, agent);
}

int trainer_stage_mask(const Trainer *t, int stage, unsigned char *held)
{
    if (t == NULL) return HS_OK;
    memset(held, 0, t->n_params);
    size_t offset, count;
    model_block_range(t->eval, stage - 1, &offset, &count);
    memset(held + offset, 1, count);
    model_aux_range(t->eval, stage, &offset, &count);
    if (count > 0) memset(held + offset, 1, count);
    return HS_OK;
}

int trainer_stage_optimizer_step(Trainer *t, int agent, int stage, const float *grad)
{
    if (t == NULL) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    return trainer_stage_optim_step(t, t->optims[agent], model_params(t->models[agent]), stage, grad,
                                    trainer_schedule_lr(t->sc, t->round));
}

int trainer_stage_optim_step(const Trainer *t, Optim *o, float *params, int stage, const float *grad, double lr)
{
    if (t == NULL) return HS_OK;
    size_t offset, count;
    model_block_range(t->eval, stage - 1, &offset, &count);
    int status = optim_step(o, params, grad, offset, count, lr);
    model_aux_range(t->eval, stage, &offset, &count);
    if (status == HS_OK && count > 0) status = optim_step(o, params, grad, offset, count, lr);
    return status;
}

int trainer_width_step(Trainer *t, int agent, ModelWidth *width)
{
    if (t == NULL) return HS_OK;
    if (width == NULL) return trainer_local_step(t, agent);
    return trainer_queue(t, &(TrainerJob){.kind = TRAINER_JOB_WIDTH_STEP, .agent = agent, .width = width,
                                          .lr = trainer_schedule_lr(t->sc, t->round)});
}

int trainer_job_width_step(Trainer *t, TrainerSlot *slot, TrainerJob *job)
{
    Model *m = t->models[job->agent];
    int b = trainer_next_batch(t, slot, job->agent);
    int status = model_width_grad(job->width, model_params(m), slot->grad, slot->x, slot->y, b, &job->loss);
    job->has_loss = 1;
    if (status != HS_OK || !isfinite(job->loss)) return status;
    /* the blocks only, as a local step: the heads' range of the slot's gradient is another
     * job's. Coordinates outside the sub-model have gradient 0: plain SGD leaves them,
     * and whatever momentum or decay does to them, the masked average ignores them */
    size_t last_offset, last_count;
    model_block_range(m, model_n_blocks(m) - 1, &last_offset, &last_count);
    optim_step(t->optims[job->agent], model_params(m), slot->grad, 0, last_offset + last_count, job->lr);
    return HS_OK;
}

int trainer_stage_step(Trainer *t, int agent, int stage)
{
    if (t == NULL) return HS_OK;
    return trainer_queue(t, &(TrainerJob){.kind = TRAINER_JOB_STAGE_STEP, .agent = agent, .split = stage,
                                          .lr = trainer_schedule_lr(t->sc, t->round)});
}

int trainer_job_stage_step(Trainer *t, TrainerSlot *slot, TrainerJob *job)
{
    Model *m = t->models[job->agent];
    int b = trainer_next_batch(t, slot, job->agent);
    int status =
        model_grad_stage_at(m, model_params(m), slot->grad, slot->ws, job->split, slot->x, slot->y, b, &job->loss);
    job->has_loss = 1;
    if (status != HS_OK || !isfinite(job->loss)) return status;
    size_t offset, count;
    model_block_range(m, job->split - 1, &offset, &count);
    optim_step(t->optims[job->agent], model_params(m), slot->grad, offset, count, job->lr);
    model_aux_range(m, job->split, &offset, &count);
    if (count > 0) optim_step(t->optims[job->agent], model_params(m), slot->grad, offset, count, job->lr);
    return HS_OK;
}

int trainer_shared_width_gradients(Trainer *t, const int *members, int n_members, ModelWidth *const *widths)
{
    if (t == NULL) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    if (t->width_count == NULL && (t->width_count = malloc(t->n_params * sizeof *t->width_count)) == NULL)
        return hs_diag_set(t->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    memset(t->grad_sum, 0, t->n_params * sizeof *t->grad_sum);
    memset(t->width_count, 0, t->n_params * sizeof *t->width_count);
    TrainerSlot *slot = &t->slots[0];
    float *grads = model_grads(t->shared), *params = model_params(t->shared);
    size_t last_offset, last_count;
    model_block_range(t->shared, model_n_blocks(t->shared) - 1, &last_offset, &last_count);
    size_t blocks = last_offset + last_count;
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        double loss = NAN;
        ModelWidth *w = widths[i];
        if (trainer_mine(t, i)) {
            /* ranks: the owner's gradient is shared; each member in turn */
            int b = trainer_next_batch(t, slot, i);
            if (w) status = model_width_grad(w, params, grads, slot->x, slot->y, b, &loss);
            else status = model_grad_full_at(t->shared, params, grads, slot->ws, slot->x, slot->y, b, &loss);
        }
        trainer_share_gradient(t, i, grads, &loss, &status);
        if ((status = trainer_count_loss(t, loss, status, i)) != HS_OK) return status;
        const unsigned char *held = w ? model_width_held(w) : NULL;
        for (size_t j = 0; j < blocks; j++)
            if (held == NULL || held[j]) {
                t->grad_sum[j] += grads[j];
                t->width_count[j] += 1.0f;
            }
    }
    for (size_t j = 0; j < blocks; j++)
        if (t->width_count[j] > 0) t->grad_sum[j] /= t->width_count[j];
    return HS_OK;
}

int trainer_average_masked(Trainer *t, const int *members, int n_members, int by_samples, ModelWidth *const *widths)
{
    if (t == NULL || n_members == 0) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    const unsigned char **held = malloc((size_t)n_members * sizeof *held);
    if (held == NULL) return hs_diag_set(t->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    trainer_ranks_share_members(t, members, n_members);
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        t->weights[k] = by_samples ? t->world->agents[i].samples : 1.0;
        t->vectors[k] = model_params(t->models[i]);
        held[k] = widths[i] ? model_width_held(widths[i]) : NULL;
    }
    /* a coordinate nobody holds keeps the first member's value */
    memcpy(t->scratch, t->vectors[0], t->n_params * sizeof *t->scratch);
    status = vec_masked_average(t->scratch, t->vectors, held, t->weights, n_members, t->n_params);
    free(held);
    if (status != HS_OK) return hs_diag_set(t->diag, status, NULL, 0, "cannot average the sub-models");
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        memcpy(model_params(t->models[i]), t->scratch, t->n_params * sizeof *t->scratch);
    }
    return HS_OK;
}

int trainer_average_split_masked(Trainer *t, const int *splits, ModelWidth *const *widths)
{
    if (t == NULL) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    int n = t->world->n, blocks = model_n_blocks(t->models[0]), partial = t->pairs && trainer_split_partial(t, splits);
    const unsigned char **held = malloc((size_t)n * sizeof *held);
    int *members = malloc((size_t)n * sizeof *members);
    if (held == NULL || members == NULL) {
        free(held), free(members);
        return hs_diag_set(t->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    trainer_ranks_share_members(t, NULL, n); /* as trainer_average_split: every rank averages the owners' models */
    for (int b = 0; status == HS_OK && b < blocks; b++) {
        size_t offset, count;
        model_block_range(t->models[0], b, &offset, &count);
        for (int i = 0; i < n; i++) {
            int top = splits[i] > 0 && b >= splits[i];
            t->weights[i] = top && partial ? trainer_top_weight(t, i) : t->world->agents[i].samples;
            t->vectors[i] = model_params(t->models[i]) + offset;
            held[i] = widths[i] ? model_width_held(widths[i]) + offset : NULL;
        }
        /* an unpruned agent holds every coordinate: none keeps this start value */
        memcpy(t->scratch, t->vectors[0], count * sizeof *t->scratch);
        if ((status = vec_masked_average(t->scratch, t->vectors, held, t->weights, n, count)) != HS_OK) break;
        for (int i = 0; i < n; i++) memcpy(model_params(t->models[i]) + offset, t->scratch, count * sizeof *t->scratch);
    }
    /* auxiliary head m among the agents that used split m (a pruned agent never offloads) */
    if (status == HS_OK) status = trainer_average_aux_heads(t, splits, members);
    free(held);
    free(members);
    return status == HS_OK ? HS_OK : hs_diag_set(t->diag, status, NULL, 0, "cannot average the sub-models");
}
