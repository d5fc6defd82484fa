/* trainer_jobs.c — the trainer's per-agent job queues and the worker slots that run them
 * (the design is in trainer_internal.h). A flush hands each agent with queued jobs to
 * one slot as one task, longest queue first so two long queues do not end up last on
 * the same thread; results are read back in queued order. */
#include "sim/train/trainer_internal.h"

#include "base/grow.h"

#include "sim/kernel/rng.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int trainer_slots_create(Trainer *t, int threads)
{
    int status = workers_create(threads, &t->workers);
    if (status != HS_OK) return status;
    t->n_slots = workers_threads(t->workers);
    if ((t->slots = calloc((size_t)t->n_slots, sizeof *t->slots)) == NULL) return HS_E_NOMEM;
    for (int s = 0; s < t->n_slots; s++) {
        TrainerSlot *slot = &t->slots[s];
        if ((status = model_workspace_create_sized(&t->sc->model, t->batch, &slot->ws)) != HS_OK) return status;
        slot->x = malloc((size_t)t->batch * (size_t)t->data->features * sizeof *slot->x);
        slot->y = malloc((size_t)t->batch * sizeof *slot->y);
        slot->indices = malloc((size_t)t->batch * sizeof *slot->indices);
        slot->shuffle_rng = gsl_rng_alloc(gsl_rng_taus2);
        slot->grad = malloc(t->n_params * sizeof *slot->grad);
        if (!slot->x || !slot->y || !slot->indices || !slot->shuffle_rng || !slot->grad) return HS_E_NOMEM;
        if (t->augment_rng &&
            !(slot->augment_scratch = malloc((size_t)t->data->features * sizeof *slot->augment_scratch)))
            return HS_E_NOMEM;
    }
    int n = t->n_agents;
    t->first_job = malloc((size_t)n * sizeof *t->first_job);
    t->last_job = malloc((size_t)n * sizeof *t->last_job);
    t->queued = calloc((size_t)n, sizeof *t->queued);
    t->pending = malloc((size_t)n * sizeof *t->pending);
    t->sort_keys = malloc((size_t)n * sizeof *t->sort_keys);
    t->tasks = malloc((size_t)n * sizeof *t->tasks);
    if (!t->first_job || !t->last_job || !t->queued || !t->pending || !t->sort_keys || !t->tasks) return HS_E_NOMEM;
    for (int i = 0; i < n; i++) t->first_job[i] = t->last_job[i] = -1;
    return HS_OK;
}

void trainer_slots_free(Trainer *t)
{
    workers_free(t->workers);
    for (int s = 0; t->slots && s < t->n_slots; s++) {
        TrainerSlot *slot = &t->slots[s];
        model_workspace_free(slot->ws);
        free(slot->x);
        free(slot->y);
        free(slot->indices);
        free(slot->grad);
        free(slot->clip_scratch);
        free(slot->augment_scratch);
        if (slot->shuffle_rng) gsl_rng_free(slot->shuffle_rng);
    }
    free(t->slots);
    free(t->jobs);
    free(t->first_job);
    free(t->last_job);
    free(t->queued);
    free(t->pending);
    free(t->sort_keys);
    free(t->tasks);
}

void trainer_shuffle(Trainer *t, TrainerSlot *slot, int agent)
{
    int *idx = t->order + t->order_offset[agent];
    int n = t->order_offset[agent + 1] - t->order_offset[agent];
    rng_stream_reset(slot->shuffle_rng, t->sc->seed, (uint64_t)agent * 1000003u + (uint64_t)t->epoch[agent]++,
                     RNG_PURPOSE_TRAIN);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)gsl_rng_uniform_int(slot->shuffle_rng, (unsigned long)i + 1);
        int tmp = idx[i];
        idx[i] = idx[j];
        idx[j] = tmp;
    }
}

int trainer_next_batch(Trainer *t, TrainerSlot *slot, int agent)
{
    int n = t->order_offset[agent + 1] - t->order_offset[agent];
    int batch = t->world->agents[agent].batch;
    int b = batch < n ? batch : n;
    for (int k = 0; k < b; k++) {
        if (t->cursor[agent] == n) {
            t->cursor[agent] = 0;
            trainer_shuffle(t, slot, agent);
        }
        slot->indices[k] = t->order[t->order_offset[agent] + t->cursor[agent]++];
    }
    dataset_gather(t->data, 0, slot->indices, b, slot->x, slot->y);
    if (t->augment_rng)
        dataset_augment(t->data, &t->augment, slot->x, b, slot->augment_scratch, t->augment_rng[agent]);
    return b;
}

int trainer_queue(Trainer *t, const TrainerJob *job)
{
    if (t->failed) return t->failed;
    if (hs_grow((void **)&t->jobs, &t->jobs_capacity, t->n_jobs, sizeof *t->jobs, 256) != HS_OK)
        return hs_diag_set(t->diag, HS_E_NOMEM, NULL, 0, "out of memory for queued training");
    int k = t->n_jobs++, agent = job->agent;
    t->jobs[k] = *job;
    t->jobs[k].next = -1;
    t->jobs[k].round = t->round;
    t->jobs[k].loss = NAN;
    t->jobs[k].has_loss = 0;
    if (t->first_job[agent] < 0) {
        t->first_job[agent] = k;
        t->pending[t->n_pending++] = agent;
    } else {
        t->jobs[t->last_job[agent]].next = k;
    }
    t->last_job[agent] = k;
    t->queued[agent]++;
    return t->eager ? trainer_flush(t) : HS_OK;
}

/* The bottom (slow) side of a split: blocks 1..split and the head, one optimiser step on
 * those ranges; the cut activations and labels go to the job's fifo slot. */
static int trainer_job_split_bottom(Trainer *t, TrainerSlot *slot, TrainerJob *job)
{
    SplitPair *p = &t->pairs[job->agent];
    Model *m = t->models[job->agent];
    int b = trainer_next_batch(t, slot, job->agent);
    size_t act_floats = (size_t)model_split_floats(m, job->split);
    float *act = p->act + (size_t)job->fifo * (size_t)t->batch * act_floats;
    int status = model_grad_bottom_at(m, model_params(m), slot->grad, slot->ws, job->split, slot->x, slot->y, b,
                                      &job->loss, act);
    job->has_loss = 1;
    if (status != HS_OK || !isfinite(job->loss)) return status;
    memcpy(p->labels + (size_t)job->fifo * (size_t)t->batch, slot->y, (size_t)b * sizeof *slot->y);
    p->sizes[job->fifo] = b;
    size_t last_offset, last_count, offset, count;
    model_block_range(m, job->split - 1, &last_offset, &last_count);
    optim_step(t->optims[job->agent], model_params(m), slot->grad, 0, last_offset + last_count, job->lr);
    model_aux_range(m, job->split, &offset, &count);
    optim_step(t->optims[job->agent], model_params(m), slot->grad, offset, count, job->lr);
    return HS_OK;
}

/* DP-SGD (sim/stages/privacy.h): the clipped mean of the batch's per-sample gradients plus the
 * agent's own noise stream's draw; the blocks only, as a local step. */
/* The job's drift correction on grad (count entries: the blocks), at the agent's params y.
 * FedProx's term first, then SCAFFOLD's g - c_i + c in the paper's order. */
static void trainer_job_correct(const TrainerJob *job, const float *y, float *grad, size_t count)
{
    const TrainerCorrection *k = &job->correction;
    if (!job->corrected) return;
    if (k->anchor)
        for (size_t j = 0; j < count; j++) grad[j] += k->mu * (y[j] - k->anchor[j]);
    if (k->c)
        for (size_t j = 0; j < count; j++) grad[j] = grad[j] - k->ci[j] + k->c[j];
}

static int trainer_job_clipped_step(Trainer *t, TrainerSlot *slot, TrainerJob *job)
{
    Model *m = t->models[job->agent];
    int b = trainer_next_batch(t, slot, job->agent);
    int status = model_grad_clipped_at(m, model_params(m), slot->grad, slot->clip_scratch, slot->ws, slot->x, slot->y,
                                       b, job->threshold, &job->loss, NULL);
    job->has_loss = 1;
    if (status != HS_OK || !isfinite(job->loss)) return status;
    /* the noise goes on the sum of the clipped gradients: (sum + z) / b = mean + z / b */
    size_t blocks = model_block_param_count(m);
    vec_add_gaussian(slot->grad, job->noise_std / b, blocks, job->noise);
    trainer_job_correct(job, model_params(m), slot->grad, blocks);
    optim_step(t->optims[job->agent], model_params(m), slot->grad, 0, blocks, job->lr);
    return HS_OK;
}

/* The helper trains the offloader's top copy, blocks split+1..L, on one queued batch. */
static int trainer_job_split_top(Trainer *t, TrainerSlot *slot, TrainerJob *job)
{
    SplitPair *p = &t->pairs[job->agent];
    size_t act_floats = (size_t)model_split_floats(p->top, job->split);
    double loss;
    int status = model_grad_top_at(p->top, model_params(p->top), slot->grad, slot->ws, job->split,
                                   p->act + (size_t)job->fifo * (size_t)t->batch * act_floats,
                                   p->labels + (size_t)job->fifo * (size_t)t->batch, p->sizes[job->fifo], &loss);
    /* the top's loss is the helper's, and was never counted as training loss */
    if (status == HS_OK && !isfinite(loss)) status = HS_E_DIVERGED;
    if (status != HS_OK) {
        job->has_loss = 1;
        job->loss = loss;
        return status;
    }
    size_t first_offset, first_count, last_offset, last_count;
    model_block_range(p->top, job->split, &first_offset, &first_count);
    model_block_range(p->top, model_n_blocks(p->top) - 1, &last_offset, &last_count);
    optim_step(p->top_optim, model_params(p->top), slot->grad, first_offset,
               last_offset + last_count - first_offset, job->lr);
    return HS_OK;
}

static int trainer_job_run(Trainer *t, TrainerSlot *slot, TrainerJob *job)
{
    int agent = job->agent;
    Model *m = t->models[agent];
    switch (job->kind) {
    case TRAINER_JOB_LOCAL_STEP: {
        int b = trainer_next_batch(t, slot, agent);
        int status = model_grad_full_at(m, model_params(m), slot->grad, slot->ws, slot->x, slot->y, b, &job->loss);
        job->has_loss = 1;
        if (status != HS_OK || !isfinite(job->loss)) return status;
        /* the blocks only: model_grad_full_at leaves the auxiliary heads' gradient range
         * as it was, which in a slot's shared vector is another job's */
        size_t last_offset, last_count;
        model_block_range(m, model_n_blocks(m) - 1, &last_offset, &last_count);
        trainer_job_correct(job, model_params(m), slot->grad, last_offset + last_count);
        optim_step(t->optims[agent], model_params(m), slot->grad, 0, last_offset + last_count, job->lr);
        return HS_OK;
    }
    case TRAINER_JOB_SPLIT_BOTTOM: return trainer_job_split_bottom(t, slot, job);
    case TRAINER_JOB_SPLIT_TOP: return trainer_job_split_top(t, slot, job);
    case TRAINER_JOB_WIDTH_STEP: return trainer_job_width_step(t, slot, job);
    case TRAINER_JOB_STAGE_STEP: return trainer_job_stage_step(t, slot, job);
    case TRAINER_JOB_CLIPPED_STEP: return trainer_job_clipped_step(t, slot, job);
    }
    return HS_E_INTERNAL;
}

/* One task of a flush: an agent's whole queue, in order; a failure skips the rest of it
 * (the run stops at the flush anyway). */
static void trainer_run_queue(void *ctx, int task, int slot)
{
    Trainer *t = ctx;
    int agent = t->tasks[task];
    int failed = 0;
    for (int k = t->first_job[agent]; k >= 0; k = t->jobs[k].next) {
        TrainerJob *job = &t->jobs[k];
        job->status = failed ? HS_E_INTERNAL : trainer_job_run(t, &t->slots[slot], job);
        if (job->status != HS_OK || (job->has_loss && !isfinite(job->loss))) failed = 1;
    }
    trainer_tick(t, slot);
}

/* Sort keys for the longest-queue-first order: fewer jobs sort later, then the agent. */
static int trainer_key_order(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void trainer_longest_first(Trainer *t)
{
    for (int q = 0; q < t->n_tasks; q++) {
        int agent = t->tasks[q];
        t->sort_keys[q] = (uint64_t)(INT32_MAX - t->queued[agent]) << 32 | (uint32_t)agent;
    }
    qsort(t->sort_keys, (size_t)t->n_tasks, sizeof *t->sort_keys, trainer_key_order);
    for (int q = 0; q < t->n_tasks; q++) t->tasks[q] = (int)(t->sort_keys[q] & 0xffffffffu);
}

/* Ranks: every job's status and loss, computed by its agent's owner, reach every rank;
 * the agents' replicas elsewhere are stale from now on. */
static int trainer_share_jobs(Trainer *t)
{
    TrainerResult *results = malloc((size_t)t->n_jobs * sizeof *results);
    int *agents = malloc((size_t)t->n_jobs * sizeof *agents);
    int status = results && agents ? HS_OK : HS_E_NOMEM;
    for (int k = 0; status == HS_OK && k < t->n_jobs; k++) {
        const TrainerJob *job = &t->jobs[k];
        results[k] = (TrainerResult){.loss = job->loss, .status = job->status, .has_loss = job->has_loss};
        agents[k] = job->agent;
    }
    if (status == HS_OK) status = trainer_ranks_share_results(t, results, agents, t->n_jobs);
    for (int k = 0; status == HS_OK && k < t->n_jobs; k++) {
        TrainerJob *job = &t->jobs[k];
        job->loss = results[k].loss;
        job->status = results[k].status;
        job->has_loss = results[k].has_loss;
    }
    long mine = 0;
    for (int k = 0; k < t->n_jobs; k++) mine += trainer_mine(t, t->jobs[k].agent);
    trainer_ranks_note_steps(t, mine, t->n_jobs);
    for (int q = 0; q < t->n_pending; q++) t->remote[t->pending[q]] |= TRAINER_REMOTE_PARAMS | TRAINER_REMOTE_OPTIM;
    free(results);
    free(agents);
    return status == HS_OK ? HS_OK : hs_diag_set(t->diag, status, NULL, 0, "out of memory");
}

int trainer_count_loss(Trainer *t, double loss, int status, int agent)
{
    if (status == HS_OK && isfinite(loss)) {
        t->agent_loss[agent] = loss;
        t->loss_sum += loss;
        t->loss_count++;
        return HS_OK;
    }
    if (status == HS_OK || status == HS_E_DIVERGED)
        return hs_diag_set(t->diag, HS_E_DIVERGED, NULL, 0, "training diverged: loss %g at round %d, agent %d", loss,
                           t->round, agent);
    return hs_diag_set(t->diag, status, NULL, 0, "training failed at round %d, agent %d: %s", t->round, agent,
                       hs_error_name(status));
}

int trainer_flush(Trainer *t)
{
    if (t->failed) return t->failed;
    if (t->n_jobs == 0) return HS_OK;
    /* this rank's agents (every pending one in one process), in first-queued order */
    t->n_tasks = 0;
    for (int q = 0; q < t->n_pending; q++)
        if (trainer_mine(t, t->pending[q])) t->tasks[t->n_tasks++] = t->pending[q];
    if (workers_threads(t->workers) > 1 && t->n_tasks > 1) trainer_longest_first(t);
    workers_run(t->workers, t->n_tasks, trainer_run_queue, t);
    int status = t->ranks ? trainer_share_jobs(t) : HS_OK;
    int round = t->round;
    for (int k = 0; status == HS_OK && k < t->n_jobs; k++) {
        const TrainerJob *job = &t->jobs[k];
        t->round = job->round;
        if (job->kind == TRAINER_JOB_SPLIT_TOP && job->status == HS_OK) continue;
        if (job->has_loss || job->status != HS_OK) status = trainer_count_loss(t, job->loss, job->status, job->agent);
    }
    t->round = round;
    for (int q = 0; q < t->n_pending; q++) {
        int agent = t->pending[q];
        t->first_job[agent] = t->last_job[agent] = -1;
        t->queued[agent] = 0;
    }
    t->n_pending = 0;
    t->n_jobs = 0;
    if (status != HS_OK) t->failed = status;
    return status;
}
