/* trainer.c — train mode: real arithmetic behind the engine's virtual clock.
 * Workload: N agents (up to ~1,000 with the MLP), each owning a Model (parameters and
 * gradients in one allocation each) and an optimiser; the dataset is loaded once and
 * agents hold index lists into it. Agents' steps are queued and run on worker threads
 * (trainer_internal.h, trainer_jobs.c); everything else runs on the engine's thread and
 * first runs what is queued, so results are bitwise identical for any thread count.
 * Batches: each agent walks its own indices in an order reshuffled every local epoch
 * from its own stream (seed, agent, RNG_PURPOSE_TRAIN); a batch that crosses the end of
 * the epoch continues into the next shuffle, so every batch has the agent's batch of
 * samples ([agents] batch, default [model] batch; all of its samples when it has fewer).
 * Over 600 lines because the data set, the partition, the agents' models, averaging and
 * evaluation share the Trainer and one rule (queued steps run before anything reads an
 * agent's vectors); the queue and the worker threads are trainer_jobs.c and workers.c,
 * the sub-model steps trainer_prune.c. */
#include "sim/train/trainer.h"

#include "sim/train/trainer_internal.h"

#include "sim/kernel/rng.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int trainer_fail(Trainer *t, int status, const char *what)
{
    return hs_diag_set(t->diag, status, NULL, 0, "%s", what);
}

int trainer_thread_count(const Scenario *sc)
{
    return sc->threads > 0 ? sc->threads : sc->threads == SCENARIO_THREADS_EAGER ? 1 : workers_online_cpus();
}

int trainer_create(const Scenario *sc, const World *world, HsDiag *diag, Trainer **out)
{
    *out = NULL;
    Trainer *t = calloc(1, sizeof *t);
    if (t == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    t->sc = sc;
    t->world = world;
    t->diag = diag;
    int n = world->n, status;
    t->n_agents = n;
    /* Agents' steps are small matrices: OpenBLAS threads only add synchronisation. */
    openblas_set_num_threads(1);
    /* buffers for the largest batch of any agent; each draws its own (trainer_next_batch) */
    t->batch = world_max_batch(world) > sc->model.batch ? world_max_batch(world) : sc->model.batch;
    t->uneven_batches = 0;
    for (int i = 1; i < n; i++) t->uneven_batches |= world->agents[i].batch != world->agents[0].batch;
    gsl_rng *data_rng = rng_stream_create(sc->seed, 0, RNG_PURPOSE_DATA);
    if (data_rng == NULL) goto nomem;
    /* the data set's own errors name its file; put the scenario's [data] line before them
     * (the commands read the files before the database; this is where a library caller
     * or a file changed since then meets them) */
    HsDiag inner;
    hs_diag_clear(&inner);
    status = dataset_load(&sc->data, data_rng, &t->data, &inner);
    if (status != HS_OK)
        hs_diag_set(t->diag, status, NULL, 0, "%s%s%s", status == HS_E_INPUT ? sc->data_where : "",
                    status == HS_E_INPUT && sc->data_where[0] ? ": " : "", inner.message);
    if (status == HS_OK) {
        int *samples = malloc((size_t)n * sizeof *samples);
        if (samples == NULL) status = HS_E_NOMEM;
        for (int i = 0; status == HS_OK && i < n; i++) samples[i] = t->world->agents[i].samples;
        if (status == HS_OK) status = partition_make(t->data, &sc->data, n, samples, data_rng, &t->partition, t->diag);
        free(samples);
    }
    gsl_rng_free(data_rng);
    if (status != HS_OK) goto fail;
    t->order_offset = calloc((size_t)n + 1, sizeof *t->order_offset);
    t->cursor = calloc((size_t)n, sizeof *t->cursor);
    t->epoch = calloc((size_t)n, sizeof *t->epoch);
    t->agent_loss = malloc((size_t)n * sizeof *t->agent_loss);
    if (!t->order_offset || !t->cursor || !t->epoch || !t->agent_loss) goto nomem;
    for (int i = 0; i < n; i++) t->agent_loss[i] = NAN;
    gsl_rng *init = rng_stream_create(sc->seed, 0, RNG_PURPOSE_INIT);
    if (init == NULL) goto nomem;
    status = model_create(&sc->model, init, &t->eval);
    gsl_rng_free(init);
    if (status != HS_OK) goto fail;
    t->n_params = model_param_count(t->eval);
    t->eager = sc->threads == SCENARIO_THREADS_EAGER;
    if (sc->data.crop_padding > 0 || sc->data.flip) {
        t->augment = (DataAugment){.crop_padding = sc->data.crop_padding, .flip = sc->data.flip};
        if ((status = dataset_augment_check(t->data, &t->augment, t->diag)) != HS_OK) goto fail;
        if (!(t->augment_rng = calloc((size_t)n, sizeof *t->augment_rng))) goto nomem;
        for (int i = 0; i < n; i++)
            if (!(t->augment_rng[i] = rng_stream_create(sc->seed, (uint64_t)i, RNG_PURPOSE_AUGMENT))) goto nomem;
    }
    if ((status = trainer_slots_create(t, trainer_thread_count(sc))) != HS_OK) {
        status = trainer_fail(t, status, status == HS_E_NOMEM ? "out of memory for train mode"
                                                               : "cannot start the worker threads");
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        int count;
        partition_indices(t->partition, i, &count);
        t->order_offset[i + 1] = t->order_offset[i] + count;
    }
    t->order = malloc(((size_t)t->order_offset[n] + 1) * sizeof *t->order);
    if (t->order == NULL) goto nomem;
    for (int i = 0; i < n; i++) {
        int count;
        const int *idx = partition_indices(t->partition, i, &count);
        memcpy(t->order + t->order_offset[i], idx, (size_t)count * sizeof *idx);
        trainer_shuffle(t, &t->slots[0], i);
    }
    t->n_eval = sc->data.test_samples > 0 && sc->data.test_samples < t->data->n_test ? sc->data.test_samples
                                                                                       : t->data->n_test;
    if (sc->data.partition == PART_DOMAINS) {
        t->heldout_rows = malloc(sizeof(int) * (size_t)t->n_eval + 1);
        t->seen_rows = malloc(sizeof(int) * (size_t)t->n_eval + 1);
        if (!t->heldout_rows || !t->seen_rows) goto nomem;
        for (int k = 0; k < t->n_eval; k++) {
            if (sc->data.held_out[dataset_domain(t->data, k)]) t->heldout_rows[t->n_heldout++] = k;
            else t->seen_rows[t->n_seen++] = k;
        }
    }
    *out = t;
    return HS_OK;
nomem:
    status = trainer_fail(t, HS_E_NOMEM, "out of memory for train mode");
fail:
    trainer_free(t);
    return status;
}

static void trainer_free_pair(SplitPair *p)
{
    model_free(p->top);
    optim_free(p->top_optim);
    free(p->act);
    free(p->labels);
    free(p->sizes);
}

void trainer_set_tick(Trainer *t, void (*tick)(void *ctx), void *ctx)
{
    if (t == NULL) return;
    t->tick = tick;
    t->tick_ctx = ctx;
}

void trainer_free(Trainer *t)
{
    if (t == NULL) return;
    for (int i = 0; t->models && i < t->n_agents; i++) {
        model_free(t->models[i]);
        optim_free(t->optims[i]);
    }
    for (int i = 0; t->buffers && i < t->n_agents * t->n_buffers; i++) free(t->buffers[i]);
    for (int i = 0; t->pairs && i < t->n_agents; i++) trainer_free_pair(&t->pairs[i]);
    free(t->pairs);
    free(t->models);
    free(t->optims);
    free(t->buffers);
    free(t->scratch);
    free(t->weights);
    free(t->vectors);
    model_free(t->shared);
    optim_free(t->shared_optim);
    free(t->grad_sum);
    free(t->width_count);
    model_free(t->eval);
    free(t->heldout_rows);
    free(t->seen_rows);
    trainer_slots_free(t);
    free(t->wave_grads);
    free(t->wave_losses);
    free(t->wave_status);
    free(t->order);
    free(t->order_offset);
    free(t->cursor);
    free(t->epoch);
    free(t->agent_loss);
    free(t->remote);
    free(t->own_grads);
    for (int i = 0; t->augment_rng && i < t->n_agents; i++)
        if (t->augment_rng[i]) gsl_rng_free(t->augment_rng[i]);
    free(t->augment_rng);
    partition_free(t->partition);
    dataset_free(t->data);
    free(t);
}

double trainer_schedule_lr(const Scenario *sc, int round)
{
    /* a run without a round count schedules over the cap the run stops at (sim/run.c) */
    return optim_schedule_lr(&sc->optim, round, sc->rounds > 0 ? sc->rounds : 100000);
}

void trainer_begin_round(Trainer *t, int round)
{
    if (t) t->round = round;
}

/* --- shared model --- */

int trainer_setup_shared(Trainer *t)
{
    if (t == NULL) return HS_OK;
    gsl_rng *init = rng_stream_create(t->sc->seed, 0, RNG_PURPOSE_INIT);
    if (init == NULL) return trainer_fail(t, HS_E_NOMEM, "out of memory");
    int status = model_create(&t->sc->model, init, &t->shared);
    gsl_rng_free(init);
    if (status == HS_OK) status = optim_create(&t->sc->optim, t->n_params, &t->shared_optim);
    t->grad_sum = calloc(t->n_params, sizeof *t->grad_sum);
    t->wave_grads = malloc((size_t)t->n_slots * t->n_params * sizeof *t->wave_grads);
    t->wave_losses = malloc((size_t)t->n_slots * sizeof *t->wave_losses);
    t->wave_status = malloc((size_t)t->n_slots * sizeof *t->wave_status);
    if (status == HS_OK && (!t->grad_sum || !t->wave_grads || !t->wave_losses || !t->wave_status)) status = HS_E_NOMEM;
    return status == HS_OK ? HS_OK : trainer_fail(t, status, "cannot create the model");
}

int trainer_shared_gradients(Trainer *t)
{
    return t ? trainer_shared_gradients_of(t, NULL, t->world->n) : HS_OK;
}

/* The members' batches added up (0 when every agent's batch is the same: no weights). */
static double trainer_batch_total(const Trainer *t, const int *members, int n_members)
{
    double total = 0;
    for (int k = 0; t->uneven_batches && k < n_members; k++) total += t->world->agents[members ? members[k] : k].batch;
    return total;
}

/* The weight of agent's gradient in the members' mean: its batch over the members' mean
 * batch (total from trainer_batch_total), so the mean is the gradient of the union of
 * their batches (docs/methods.md, sync). 1 when every agent's batch is the same: the plain
 * mean, bit for bit. */
static float trainer_batch_weight(const Trainer *t, double total, int n_members, int agent)
{
    if (!t->uneven_batches) return 1.0f;
    return (float)((double)t->world->agents[agent].batch * n_members / total);
}

/* One wave of the shared gradients: task k takes member wave_first + k into gradient k. */
typedef struct SharedWave {
    Trainer *t;
    const int *members;
    int first;
} SharedWave;

static void trainer_shared_wave_task(void *ctx, int task, int slot_index)
{
    SharedWave *wave = ctx;
    Trainer *t = wave->t;
    TrainerSlot *slot = &t->slots[slot_index];
    int k = wave->first + task, agent = wave->members ? wave->members[k] : k;
    int b = trainer_next_batch(t, slot, agent);
    t->wave_status[task] = model_grad_full_at(t->shared, model_params(t->shared), t->wave_grads + (size_t)task * t->n_params,
                                              slot->ws, slot->x, slot->y, b, &t->wave_losses[task]);
    trainer_tick(t, slot_index);
}

/* One wave of a rank's own members: task k takes own member wave_first + k into its
 * place in own_grads. */
typedef struct OwnWave {
    Trainer *t;
    const int *agents;      /* own members, in member order */
    TrainerResult *results; /* (own members) */
    int first;
} OwnWave;

static void trainer_own_wave_task(void *ctx, int task, int slot_index)
{
    OwnWave *wave = ctx;
    Trainer *t = wave->t;
    TrainerSlot *slot = &t->slots[slot_index];
    int k = wave->first + task, agent = wave->agents[k];
    int b = trainer_next_batch(t, slot, agent);
    TrainerResult *r = &wave->results[k];
    r->status = model_grad_full_at(t->shared, model_params(t->shared), t->own_grads + (size_t)k * t->n_params, slot->ws,
                                   slot->x, slot->y, b, &r->loss);
    trainer_tick(t, slot_index);
}

/* Ranks: each rank computes its own members' gradients (in waves over its slots, all
 * kept), every rank counts every member's loss in member order, and the sum goes
 * from owner to owner in member order (trainer_ranks_fold): one process's additions.
 * Out of memory here leaves the other ranks waiting: the job ends. */
static int trainer_shared_gradients_ranks(Trainer *t, const int *members, int n_members)
{
    int n_own = 0;
    for (int k = 0; k < n_members; k++) n_own += trainer_mine(t, members ? members[k] : k);
    TrainerResult *results = calloc((size_t)n_members, sizeof *results);
    TrainerResult *own_results = calloc((size_t)n_own + 1, sizeof *own_results);
    int *agents = malloc((size_t)n_members * sizeof *agents), *own = malloc(((size_t)n_own + 1) * sizeof *own);
    if (t->own_grads_count < (size_t)n_own) {
        free(t->own_grads);
        t->own_grads = malloc((size_t)n_own * t->n_params * sizeof *t->own_grads);
        t->own_grads_count = t->own_grads ? (size_t)n_own : 0;
    }
    if (!results || !own_results || !agents || !own || t->own_grads_count < (size_t)n_own) {
        hs_diag_set(t->diag, HS_E_NOMEM, NULL, 0, "out of memory for the shared gradients");
        trainer_ranks_abort(t->ranks, 1);
    }
    for (int k = 0, k_own = 0; k < n_members; k++) {
        agents[k] = members ? members[k] : k;
        if (trainer_mine(t, agents[k])) own[k_own++] = agents[k];
    }
    for (int first = 0; first < n_own; first += t->n_slots) {
        int size = n_own - first < t->n_slots ? n_own - first : t->n_slots;
        OwnWave wave = {.t = t, .agents = own, .results = own_results, .first = first};
        workers_run(t->workers, size, trainer_own_wave_task, &wave);
    }
    for (int k = 0, k_own = 0; k < n_members; k++)
        results[k] = trainer_mine(t, agents[k]) ? own_results[k_own++] : (TrainerResult){.loss = NAN};
    trainer_ranks_note_steps(t, n_own, n_members);
    int status = trainer_ranks_share_results(t, results, agents, n_members);
    for (int k = 0; status == HS_OK && k < n_members; k++)
        status = trainer_count_loss(t, results[k].loss, results[k].status, agents[k]);
    /* unequal batches: each own gradient weighed before the fold (trainer_batch_weight) */
    double total = trainer_batch_total(t, members, n_members);
    for (int k = 0, k_own = 0; t->uneven_batches && k < n_members; k++)
        if (trainer_mine(t, agents[k]))
            vec_scale(t->own_grads + (size_t)k_own++ * t->n_params, trainer_batch_weight(t, total, n_members, agents[k]),
                      t->n_params);
    free(results);
    free(own_results);
    free(agents);
    free(own);
    if (status != HS_OK) return status;
    trainer_ranks_fold(t, members, n_members, t->own_grads, t->grad_sum);
    vec_scale(t->grad_sum, 1.0f / (float)n_members, t->n_params);
    return HS_OK;
}

/* Members' gradients in waves of one per slot, each wave summed in member order: the
 * same additions in the same order as one thread doing them one by one. */
int trainer_shared_gradients_of(Trainer *t, const int *members, int n_members)
{
    if (t == NULL) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    if (t->ranks) return trainer_shared_gradients_ranks(t, members, n_members);
    memset(t->grad_sum, 0, t->n_params * sizeof *t->grad_sum);
    double total = trainer_batch_total(t, members, n_members);
    for (int first = 0; first < n_members; first += t->n_slots) {
        int size = n_members - first < t->n_slots ? n_members - first : t->n_slots;
        SharedWave wave = {.t = t, .members = members, .first = first};
        workers_run(t->workers, size, trainer_shared_wave_task, &wave);
        for (int k = 0; k < size; k++) {
            int agent = members ? members[first + k] : first + k;
            if ((status = trainer_count_loss(t, t->wave_losses[k], t->wave_status[k], agent)) != HS_OK) return status;
            vec_axpy(t->grad_sum, trainer_batch_weight(t, total, n_members, agent),
                     t->wave_grads + (size_t)k * t->n_params, t->n_params);
        }
    }
    vec_scale(t->grad_sum, 1.0f / (float)n_members, t->n_params);
    return HS_OK;
}

int trainer_shared_apply(Trainer *t)
{
    if (t == NULL) return HS_OK;
    optim_step(t->shared_optim, model_params(t->shared), t->grad_sum, 0, t->n_params, trainer_schedule_lr(t->sc, t->round));
    return HS_OK;
}

float *trainer_shared_params(Trainer *t)
{
    if (t == NULL || t->shared == NULL) return NULL;
    trainer_flush(t);
    return model_params(t->shared);
}

/* Ranks: the owner's gradient (and its outcome) reaches every rank, which all go on
 * with the same vector. */
int trainer_share_gradient(Trainer *t, int agent, float *grad, double *loss, int *status)
{
    if (t->ranks == NULL) return HS_OK;
    TrainerResult r = {.loss = *loss, .status = *status};
    int owner = trainer_owner(t, agent);
    trainer_ranks_bcast(t, owner, &r, sizeof r);
    trainer_ranks_bcast(t, owner, grad, t->n_params * sizeof *grad);
    *loss = r.loss;
    *status = r.status;
    return HS_OK;
}

int trainer_gradient_at(Trainer *t, int agent, const float *params, float *grad)
{
    if (t == NULL) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    TrainerSlot *slot = &t->slots[0];
    double loss = NAN;
    if (trainer_mine(t, agent)) {
        int b = trainer_next_batch(t, slot, agent);
        /* t->eval is only the shape: evaluation runs after the round's last event */
        status = model_grad_full_at(t->eval, params, grad, slot->ws, slot->x, slot->y, b, &loss);
    }
    trainer_share_gradient(t, agent, grad, &loss, &status);
    return trainer_count_loss(t, loss, status, agent);
}

/* --- a model per agent --- */

int trainer_setup_local(Trainer *t, int n_buffers)
{
    if (t == NULL) return HS_OK;
    int n = t->world->n;
    t->models = calloc((size_t)n, sizeof *t->models);
    t->optims = calloc((size_t)n, sizeof *t->optims);
    t->scratch = calloc(t->n_params, sizeof *t->scratch);
    t->weights = calloc((size_t)n, sizeof *t->weights);
    t->vectors = calloc((size_t)n, sizeof *t->vectors);
    t->n_buffers = n_buffers;
    t->buffers = calloc((size_t)n * (size_t)(n_buffers > 0 ? n_buffers : 1), sizeof *t->buffers);
    if (!t->models || !t->optims || !t->scratch || !t->weights || !t->vectors || !t->buffers)
        return trainer_fail(t, HS_E_NOMEM, "out of memory for the agents' models");
    for (int i = 0; i < n; i++) {
        /* every agent starts from the same parameters: the init stream is shared */
        gsl_rng *init = rng_stream_create(t->sc->seed, 0, RNG_PURPOSE_INIT);
        if (init == NULL) return trainer_fail(t, HS_E_NOMEM, "out of memory");
        int status = model_create(&t->sc->model, init, &t->models[i]);
        gsl_rng_free(init);
        if (status == HS_OK) model_release_grads(t->models[i]);
        if (status == HS_OK) status = optim_create(&t->sc->optim, t->n_params, &t->optims[i]);
        if (status != HS_OK) return trainer_fail(t, status, "out of memory for the agents' models");
        for (int k = 0; k < n_buffers; k++)
            if ((t->buffers[i * n_buffers + k] = calloc(t->n_params, sizeof(float))) == NULL)
                return trainer_fail(t, HS_E_NOMEM, "out of memory for method state");
    }
    return HS_OK;
}

const Dataset *trainer_dataset(const Trainer *t)
{
    return t->data;
}

const int *trainer_agent_samples(const Trainer *t, int agent, int *count)
{
    return partition_indices(t->partition, agent, count);
}

size_t trainer_param_count(const Trainer *t)
{
    return t ? t->n_params : 0;
}

/* Accessors hand out vectors the method reads and writes directly: queued work runs
 * first (a failure is in diag, which the engine checks after the event). */
float *trainer_params(Trainer *t, int agent)
{
    if (t == NULL || t->models == NULL) return NULL;
    trainer_flush(t);
    trainer_ranks_share_params(t, agent);
    return model_params(t->models[agent]);
}

float *trainer_buffer(Trainer *t, int agent, int which)
{
    if (t == NULL || which >= t->n_buffers) return NULL;
    trainer_flush(t);
    return t->buffers[agent * t->n_buffers + which];
}

/* A gradient or step on a vector the method reads right away: it happens now, after
 * what is queued (only trainer_local_step and the split steps are queued). */
int trainer_gradient(Trainer *t, int agent, float *grad)
{
    /* the agent's own parameters are one more outside vector of the same shape */
    return t ? trainer_gradient_at(t, agent, model_params(t->models[agent]), grad) : HS_OK;
}

/* grad is the same on every rank (a method computes it from shared vectors). Ranks:
 * every replica takes the step, unless only the owner's optimiser state is current;
 * then the owner steps and shares the result. */
int trainer_optimizer_step(Trainer *t, int agent, const float *grad)
{
    if (t == NULL) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    int alone = t->ranks && (t->remote[agent] & TRAINER_REMOTE_OPTIM);
    if (!alone) trainer_ranks_share_params(t, agent);
    if (!alone || trainer_mine(t, agent))
        optim_step(t->optims[agent], model_params(t->models[agent]), grad, 0, t->n_params,
                   trainer_schedule_lr(t->sc, t->round));
    if (alone) {
        t->remote[agent] |= TRAINER_REMOTE_PARAMS;
        trainer_ranks_share_params(t, agent);
    }
    return HS_OK;
}

int trainer_local_step(Trainer *t, int agent)
{
    if (t == NULL) return HS_OK;
    return trainer_queue(t, &(TrainerJob){.kind = TRAINER_JOB_LOCAL_STEP, .agent = agent,
                                          .lr = trainer_schedule_lr(t->sc, t->round)});
}

int trainer_local_step_clipped(Trainer *t, int agent, double threshold, double noise_std, gsl_rng *noise)
{
    if (t == NULL) return HS_OK;
    /* the slots' scratch for one sample's gradient, made here on the engine's thread */
    for (int k = 0; k < t->n_slots; k++)
        if (t->slots[k].clip_scratch == NULL &&
            (t->slots[k].clip_scratch = malloc(t->n_params * sizeof *t->slots[k].clip_scratch)) == NULL)
            return hs_diag_set(t->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    return trainer_queue(t, &(TrainerJob){.kind = TRAINER_JOB_CLIPPED_STEP, .agent = agent, .threshold = threshold,
                                          .noise_std = noise_std, .noise = noise,
                                          .lr = trainer_schedule_lr(t->sc, t->round)});
}

int trainer_local_step_corrected(Trainer *t, int agent, const TrainerCorrection *correction, double threshold,
                                 double noise_std, gsl_rng *noise)
{
    if (t == NULL) return HS_OK;
    if (threshold > 0)
        for (int k = 0; k < t->n_slots; k++)
            if (t->slots[k].clip_scratch == NULL &&
                (t->slots[k].clip_scratch = malloc(t->n_params * sizeof *t->slots[k].clip_scratch)) == NULL)
                return hs_diag_set(t->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    TrainerJob job = {.kind = threshold > 0 ? TRAINER_JOB_CLIPPED_STEP : TRAINER_JOB_LOCAL_STEP, .agent = agent,
                      .threshold = threshold, .noise_std = noise_std, .noise = noise,
                      .lr = trainer_schedule_lr(t->sc, t->round), .corrected = 1, .correction = *correction};
    return trainer_queue(t, &job);
}

float *trainer_gradient_scratch(Trainer *t)
{
    if (t == NULL || trainer_flush(t) != HS_OK) return NULL;
    return t->slots[0].grad;
}

int trainer_clipped_gradient_at(Trainer *t, int agent, const float *params, float *grad, double threshold,
                                double noise_std, gsl_rng *noise)
{
    if (t == NULL) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    TrainerSlot *slot = &t->slots[0];
    if (slot->clip_scratch == NULL && (slot->clip_scratch = malloc(t->n_params * sizeof *slot->clip_scratch)) == NULL)
        return hs_diag_set(t->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    double loss = NAN;
    /* one rank computes it, with the agent's own batch cursor and noise stream; every
     * rank gets it (trainer_ranks.c) */
    if (trainer_mine(t, agent)) {
        int b = trainer_next_batch(t, slot, agent);
        status = model_grad_clipped_at(t->eval, params ? params : model_params(t->models[agent]), grad,
                                       slot->clip_scratch, slot->ws, slot->x, slot->y, b, threshold, &loss, NULL);
        /* as trainer_job_clipped_step: the noise goes on the sum, (sum + z) / b */
        if (status == HS_OK && isfinite(loss)) vec_add_gaussian(grad, noise_std / b, model_block_param_count(t->eval), noise);
    }
    trainer_share_gradient(t, agent, grad, &loss, &status);
    return trainer_count_loss(t, loss, status, agent);
}

/* Averages [offset, offset+count) of the members' parameters into every member. */
int trainer_average_range(Trainer *t, const int *members, int n_members, int by_samples, size_t offset,
                          size_t count)
{
    double total = 0;
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        t->weights[k] = by_samples ? t->world->agents[i].samples : 1.0;
        total += t->weights[k];
        t->vectors[k] = model_params(t->models[i]) + offset;
    }
    for (int k = 0; k < n_members; k++) t->weights[k] /= total;
    int status = vec_weighted_average(t->scratch, t->vectors, t->weights, n_members, count);
    if (status != HS_OK) return status;
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        memcpy(model_params(t->models[i]) + offset, t->scratch, count * sizeof *t->scratch);
    }
    return HS_OK;
}

int trainer_average(Trainer *t, const int *members, int n_members, int by_samples)
{
    if (t == NULL || n_members == 0) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    trainer_ranks_share_members(t, members, n_members);
    return trainer_average_range(t, members, n_members, by_samples, 0, t->n_params);
}

double trainer_agent_loss(Trainer *t, int agent)
{
    if (t == NULL || trainer_flush(t) != HS_OK) return NAN;
    return t->agent_loss[agent];
}

int trainer_pull(Trainer *t, const int *members, int n_members, int leader, double strength)
{
    if (t == NULL || t->models == NULL || n_members == 0) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    trainer_ranks_share_members(t, members, n_members);
    /* the leader is not pulled (x - lambda (x - x) = x), so its vector is read while the
     * others are written */
    const float *lead = model_params(t->models[leader]);
    float keep = (float)(1.0 - strength), toward = (float)strength;
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        if (i == leader) continue;
        float *x = model_params(t->models[i]);
        for (size_t j = 0; j < t->n_params; j++) x[j] = keep * x[j] + toward * lead[j];
    }
    return HS_OK;
}

int trainer_momentum_at_average(Trainer *t, const int *members, int n_members, int by_samples, TrainerMomentum what)
{
    if (t == NULL || n_members == 0 || what == TRAINER_MOMENTUM_KEEP || t->optims == NULL) return HS_OK;
    int status = trainer_flush(t);
    if (status != HS_OK) return status;
    int first = members ? members[0] : 0;
    if (optim_velocity(t->optims[first]) == NULL) return HS_OK;
    /* the weights and the order of trainer_average_range, so the velocity is averaged
     * exactly as the parameters were */
    double total = 0;
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        t->weights[k] = by_samples ? t->world->agents[i].samples : 1.0;
        total += t->weights[k];
        t->vectors[k] = optim_velocity(t->optims[i]);
    }
    for (int k = 0; k < n_members; k++) t->weights[k] /= total;
    if (what == TRAINER_MOMENTUM_AVERAGE &&
        (status = vec_weighted_average(t->scratch, t->vectors, t->weights, n_members, t->n_params)) != HS_OK)
        return status;
    for (int k = 0; k < n_members; k++) {
        float *v = optim_velocity(t->optims[members ? members[k] : k]);
        if (what == TRAINER_MOMENTUM_RESET) memset(v, 0, t->n_params * sizeof *v);
        else memcpy(v, t->scratch, t->n_params * sizeof *v);
    }
    return HS_OK;
}

const float *trainer_velocity(Trainer *t, int agent)
{
    if (t == NULL || t->optims == NULL || trainer_flush(t) != HS_OK) return NULL;
    return optim_velocity(t->optims[agent]);
}

/* --- ComDML split training --- */

static void trainer_top_range(const Model *m, int split, size_t *offset, size_t *count)
{
    size_t first_offset, first_count, last_offset, last_count;
    model_block_range(m, split, &first_offset, &first_count);
    model_block_range(m, model_n_blocks(m) - 1, &last_offset, &last_count);
    *offset = first_offset;
    *count = last_offset + last_count - first_offset;
}

int trainer_split_begin(Trainer *t, int slow, int split)
{
    if (t == NULL) return HS_OK;
    int flushed = trainer_flush(t);
    if (flushed != HS_OK) return flushed;
    if (t->pairs == NULL && (t->pairs = calloc((size_t)t->world->n, sizeof *t->pairs)) == NULL)
        return trainer_fail(t, HS_E_NOMEM, "out of memory");
    SplitPair *p = &t->pairs[slow];
    int steps = world_agent_steps(t->world, slow);
    int act_floats = model_split_floats(t->models[slow], split);
    if (!trainer_mine(t, slow)) {
        /* ranks: the pair's counters are kept everywhere, its copy and queue by the owner */
        if (p->capacity < steps || p->act_floats < act_floats) {
            p->capacity = steps;
            p->act_floats = act_floats;
        }
        p->head = p->count = p->top_batches = 0;
        return HS_OK;
    }
    if (p->top == NULL) {
        gsl_rng *init = rng_stream_create(t->sc->seed, 0, RNG_PURPOSE_INIT);
        int status = init ? model_create(&t->sc->model, init, &p->top) : HS_E_NOMEM;
        if (init) gsl_rng_free(init);
        if (status == HS_OK) model_release_grads(p->top);
        if (status == HS_OK) status = optim_create(&t->sc->optim, t->n_params, &p->top_optim);
        if (status != HS_OK) return trainer_fail(t, status, "out of memory for a helper's copy");
    }
    if (p->capacity < steps || p->act_floats < act_floats) {
        free(p->act);
        free(p->labels);
        free(p->sizes);
        p->act = malloc((size_t)steps * (size_t)t->batch * (size_t)act_floats * sizeof *p->act);
        p->labels = malloc((size_t)steps * (size_t)t->batch * sizeof *p->labels);
        p->sizes = malloc((size_t)steps * sizeof *p->sizes);
        if (!p->act || !p->labels || !p->sizes) return trainer_fail(t, HS_E_NOMEM, "out of memory for activations");
        p->capacity = steps;
        p->act_floats = act_floats;
    }
    p->head = p->count = 0;
    p->top_batches = 0;
    model_copy_params(p->top, t->models[slow]);
    return HS_OK;
}

/* The activation queue's slots are handed out here, in event order, so the bottom and top
 * jobs (both on slow's queue) agree on them whenever they run. */
int trainer_split_bottom_step(Trainer *t, int slow, int split)
{
    if (t == NULL) return HS_OK;
    SplitPair *p = &t->pairs[slow];
    if (p->head + p->count >= p->capacity) return trainer_fail(t, HS_E_INTERNAL, "activation queue overflow");
    int status = trainer_queue(t, &(TrainerJob){.kind = TRAINER_JOB_SPLIT_BOTTOM, .agent = slow, .split = split,
                                                .fifo = p->head + p->count, .lr = trainer_schedule_lr(t->sc, t->round)});
    if (status == HS_OK) p->count++;
    return status;
}

int trainer_split_top_step(Trainer *t, int slow, int split)
{
    if (t == NULL) return HS_OK;
    SplitPair *p = &t->pairs[slow];
    if (p->count == 0) return trainer_fail(t, HS_E_INTERNAL, "no activations queued for the helper");
    int status = trainer_queue(t, &(TrainerJob){.kind = TRAINER_JOB_SPLIT_TOP, .agent = slow, .split = split,
                                                .fifo = p->head, .lr = trainer_schedule_lr(t->sc, t->round)});
    if (status != HS_OK) return status;
    p->head++;
    p->count--;
    p->top_batches++;
    return HS_OK;
}

int trainer_split_end(Trainer *t, int slow, int split)
{
    if (t == NULL) return HS_OK;
    int flushed = trainer_flush(t);
    if (flushed != HS_OK) return flushed;
    SplitPair *p = &t->pairs[slow];
    if (t->ranks) t->remote[slow] |= TRAINER_REMOTE_PARAMS;
    if (!trainer_mine(t, slow)) return HS_OK;
    size_t offset, count;
    trainer_top_range(p->top, split, &offset, &count);
    memcpy(model_params(t->models[slow]) + offset, model_params(p->top) + offset, count * sizeof(float));
    return HS_OK;
}

/* 1 when some offloader's top copy trained on fewer samples than the agent holds: its
 * helper dropped batches of an absent partner (ComDML under churn). */
int trainer_split_partial(const Trainer *t, const int *splits)
{
    for (int i = 0; i < t->world->n; i++)
        if (splits[i] > 0 && t->pairs[i].top_batches != world_agent_steps(t->world, i)) return 1;
    return 0;
}

/* An offloader's top blocks count for the share of its epoch they trained on. */
double trainer_top_weight(const Trainer *t, int i)
{
    int steps = world_agent_steps(t->world, i), done = t->pairs[i].top_batches;
    double samples = t->world->agents[i].samples;
    return done >= steps ? samples : samples * done / steps;
}

/* Block by block, every agent's weight is its samples, except the top blocks of an
 * offloader whose helper dropped batches: the share its helper trained (none: weight 0,
 * so an untouched copy does not pull the average back). Every block has a full-weight
 * agent (the helper), so no total is 0. */
static int trainer_average_blocks_by_trained(Trainer *t, const int *splits, int blocks)
{
    int n = t->world->n;
    for (int b = 0; b < blocks; b++) {
        size_t offset, count;
        model_block_range(t->models[0], b, &offset, &count);
        double total = 0;
        for (int i = 0; i < n; i++) {
            int top = splits[i] > 0 && b >= splits[i];
            t->weights[i] = top ? trainer_top_weight(t, i) : t->world->agents[i].samples;
            total += t->weights[i];
            t->vectors[i] = model_params(t->models[i]) + offset;
        }
        if (!(total > 0)) return HS_E_INTERNAL;
        for (int i = 0; i < n; i++) t->weights[i] /= total;
        int status = vec_weighted_average(t->scratch, t->vectors, t->weights, n, count);
        if (status != HS_OK) return status;
        for (int i = 0; i < n; i++) memcpy(model_params(t->models[i]) + offset, t->scratch, count * sizeof *t->scratch);
    }
    return HS_OK;
}

int trainer_average_split(Trainer *t, const int *splits)
{
    if (t == NULL) return HS_OK;
    int flushed = trainer_flush(t);
    if (flushed != HS_OK) return flushed;
    Model *shape = t->models[0];
    int n = t->world->n, blocks = model_n_blocks(shape);
    trainer_ranks_share_members(t, NULL, n);
    size_t last_offset, last_count;
    model_block_range(shape, blocks - 1, &last_offset, &last_count);
    /* Without dropped batches every block's weights are the samples: one pass, as always. */
    int status = t->pairs && trainer_split_partial(t, splits)
                     ? trainer_average_blocks_by_trained(t, splits, blocks)
                     : trainer_average_range(t, NULL, n, 1, 0, last_offset + last_count);
    if (status == HS_E_INTERNAL) return trainer_fail(t, status, "a block that no agent trained");
    int *members = malloc((size_t)n * sizeof *members);
    if (members == NULL) return trainer_fail(t, HS_E_NOMEM, "out of memory");
    if (status == HS_OK) status = trainer_average_aux_heads(t, splits, members);
    free(members);
    return status;
}

int trainer_average_aux_heads(Trainer *t, const int *splits, int *members)
{
    int n = t->world->n, blocks = model_n_blocks(t->models[0]), status = HS_OK;
    for (int m = 1; status == HS_OK && m < blocks; m++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (splits[i] == m) members[k++] = i;
        if (k < 2) continue;
        size_t offset, count;
        model_aux_range(t->models[0], m, &offset, &count);
        status = trainer_average_range(t, members, k, 1, offset, count);
    }
    return status;
}

/* --- evaluation --- */

/* The test batches [base, base + n_batches) cut into contiguous pieces, a few per
 * slot, evaluated at once. */
typedef struct EvalPieces {
    Trainer *t;
    const Model *model;
    const int *rows;
    int n, base, n_batches, n_pieces;
    double *batch_loss;
    int *batch_correct;
    int *status;        /* (n_pieces) */
} EvalPieces;

static void trainer_eval_piece(void *ctx, int piece, int slot)
{
    EvalPieces *e = ctx;
    int first = e->base + (int)((long)e->n_batches * piece / e->n_pieces);
    int last = e->base + (int)((long)e->n_batches * (piece + 1) / e->n_pieces);
    e->status[piece] = last > first ? model_evaluate_batches(e->model, e->t->slots[slot].ws, e->t->data, 1, e->rows, e->n,
                                                             first, last - first, e->batch_loss + first,
                                                             e->batch_correct + first)
                                    : HS_OK;
    trainer_tick(e->t, slot);
}

/* model_evaluate on the test rows (NULL: 0..n-1), the batches spread over the slots
 * (ranks: over the ranks, then their slots, the per-batch figures gathered); bitwise its
 * figures. */
static int trainer_evaluate(Trainer *t, const Model *model, const int *rows, int n, double *loss, double *accuracy)
{
    int batch = model_workspace_batch(t->slots[0].ws), n_batches = (n + batch - 1) / batch;
    EvalPieces e = {.t = t, .model = model, .rows = rows, .n = n};
    trainer_ranks_batches(t, n_batches, t->rank, &e.base, &e.n_batches);
    e.n_pieces = e.n_batches < 4 * t->n_slots ? e.n_batches : 4 * t->n_slots;
    e.batch_loss = malloc(((size_t)n_batches + 1) * sizeof *e.batch_loss);
    e.batch_correct = malloc(((size_t)n_batches + 1) * sizeof *e.batch_correct);
    e.status = malloc(((size_t)e.n_pieces + 1) * sizeof *e.status);
    int status = e.batch_loss && e.batch_correct && e.status ? HS_OK : HS_E_NOMEM;
    if (status == HS_OK) workers_run(t->workers, e.n_pieces, trainer_eval_piece, &e);
    for (int k = 0; status == HS_OK && k < e.n_pieces; k++) status = e.status[k];
    if (t->ranks) {
        /* the others wait in the gather: a rank that failed ends the job */
        if (status != HS_OK) trainer_ranks_abort(t->ranks, 1);
        trainer_ranks_gather_batches(t, n_batches, e.batch_loss, e.batch_correct);
    }
    if (status == HS_OK) model_evaluate_sum(e.batch_loss, e.batch_correct, n, batch, loss, accuracy);
    free(e.batch_loss);
    free(e.batch_correct);
    free(e.status);
    return status;
}

int trainer_round_end(Trainer *t, SinkMetric *metric, int *evaluated)
{
    *evaluated = 0;
    int flushed = trainer_flush(t);
    if (flushed != HS_OK) return flushed;
    if ((t->round + 1) % t->sc->eval_every != 0 && t->round + 1 != t->sc->rounds) return HS_OK;
    Model *model = t->shared;
    if (model == NULL) {
        /* the sample-weighted average of the agents' models */
        model = t->eval;
        trainer_ranks_share_members(t, NULL, t->world->n);
        double total = 0;
        for (int i = 0; i < t->world->n; i++) total += t->world->agents[i].samples;
        for (int i = 0; i < t->world->n; i++) {
            t->weights[i] = t->world->agents[i].samples / total;
            t->vectors[i] = model_params(t->models[i]);
        }
        int status = vec_weighted_average(model_params(model), t->vectors, t->weights, t->world->n, t->n_params);
        if (status != HS_OK) return trainer_fail(t, status, "out of memory");
    }
    double loss, accuracy;
    int status = trainer_evaluate(t, model, NULL, t->n_eval, &loss, &accuracy);
    if (status == HS_OK && !isfinite(loss))
        status = hs_diag_set(t->diag, HS_E_DIVERGED, NULL, 0, "training diverged: test loss %g after round %d", loss, t->round);
    if (status != HS_OK) return status;
    *metric = (SinkMetric){.round = t->round, .agent = -1,
                           .train_loss = t->loss_count ? t->loss_sum / t->loss_count : NAN,
                           .test_loss = loss, .test_accuracy = accuracy};
    if (t->heldout_rows) {
        /* domains: the same model on the held-out and the seen domains' test images */
        double part_loss;
        metric->has_domains = 1;
        metric->heldout_accuracy = metric->seen_accuracy = NAN;
        if (t->n_heldout > 0)
            status = trainer_evaluate(t, model, t->heldout_rows, t->n_heldout, &part_loss, &metric->heldout_accuracy);
        if (status == HS_OK && t->n_seen > 0)
            status = trainer_evaluate(t, model, t->seen_rows, t->n_seen, &part_loss, &metric->seen_accuracy);
        if (status != HS_OK) return trainer_fail(t, status, "cannot evaluate the domains");
    }
    t->loss_sum = 0;
    t->loss_count = 0;
    *evaluated = 1;
    return HS_OK;
}
