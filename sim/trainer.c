/* trainer.c — train mode: real arithmetic behind the engine's virtual clock.
 * Workload: N agents (up to ~1,000 with the MLP), each owning a Model (parameters and
 * gradients in one allocation each) and an optimiser; the dataset is loaded once and
 * agents hold index lists into it. One workspace serves every computation, which runs
 * on the engine's thread in event order, so results are identical run to run.
 * Batches: each agent walks its own indices in an order reshuffled every local epoch
 * from its own stream (seed, agent, RNG_PURPOSE_TRAIN); a batch that crosses the end of
 * the epoch continues into the next shuffle, so every batch has `batch` samples (or all
 * of an agent's samples when it has fewer). */
#include "sim/trainer.h"

#include "models/dataset.h"
#include "models/model.h"
#include "models/optim.h"
#include "models/partition.h"
#include "sim/rng.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One offloader's activations in flight to its helper, in send order. */
typedef struct SplitPair {
    Model *top;          /* the helper's copy of the offloader's model (only its top is trained) */
    Optim *top_optim;
    float *act;          /* (capacity, B, split floats) */
    int *labels;         /* (capacity, B) */
    int *sizes;          /* (capacity) samples per queued batch */
    int capacity, head, count, act_floats;
    int top_batches;     /* batches the top copy trained on this round (fewer when the helper dropped some) */
} SplitPair;

struct Trainer {
    const Scenario *sc;
    const World *world;
    HsDiag *diag;
    int round;            /* the engine's current round (trainer_begin_round) */
    Dataset *data;
    Partition *partition;
    ModelWorkspace *ws;
    int batch;
    float *x;             /* (batch, features) */
    int *y;               /* (batch) */
    int *indices;         /* (batch) the batch's sample indices */
    size_t n_params;
    /* shared mode */
    Model *shared;
    Optim *shared_optim;
    float *grad_sum;      /* (n_params) */
    /* local mode */
    Model **models;       /* (n) */
    Optim **optims;       /* (n) */
    float **buffers;      /* (n * n_buffers) */
    int n_buffers;
    float *scratch;       /* (n_params) averaging output */
    double *weights;      /* (n) */
    const float **vectors;/* (n) */
    SplitPair *pairs;     /* (n) by offloader, created on first use */
    /* batch streams */
    int *order;           /* all agents' indices, agent i at order_offset[i] */
    int *order_offset;    /* (n + 1) */
    int *cursor;          /* (n) */
    gsl_rng *shuffle_rng;
    int *epoch;           /* (n) reshuffles so far */
    Model *eval;          /* shape and scratch for evaluating an average */
    int n_eval;
    int *heldout_rows, *seen_rows; /* domains: test rows < n_eval of held-out and seen domains */
    int n_heldout, n_seen;
    double loss_sum;
    long loss_count;
    int n_agents;
};

static int trainer_fail(Trainer *t, int status, const char *what)
{
    return hs_diag_set(t->diag, status, NULL, 0, "%s", what);
}

static void trainer_shuffle(Trainer *t, int agent)
{
    int *idx = t->order + t->order_offset[agent];
    int n = t->order_offset[agent + 1] - t->order_offset[agent];
    rng_stream_reset(t->shuffle_rng, t->sc->seed, (uint64_t)agent * 1000003u + (uint64_t)t->epoch[agent]++,
                     RNG_PURPOSE_TRAIN);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)gsl_rng_uniform_int(t->shuffle_rng, (unsigned long)i + 1);
        int tmp = idx[i];
        idx[i] = idx[j];
        idx[j] = tmp;
    }
}

/* Fills t->x, t->y with agent's next batch; returns its size. */
static int trainer_next_batch(Trainer *t, int agent)
{
    int n = t->order_offset[agent + 1] - t->order_offset[agent];
    int b = t->batch < n ? t->batch : n;
    for (int k = 0; k < b; k++) {
        if (t->cursor[agent] == n) {
            t->cursor[agent] = 0;
            trainer_shuffle(t, agent);
        }
        t->indices[k] = t->order[t->order_offset[agent] + t->cursor[agent]++];
    }
    dataset_gather(t->data, 0, t->indices, b, t->x, t->y);
    return b;
}

static int trainer_check_loss(Trainer *t, double loss, int agent)
{
    if (isfinite(loss)) return HS_OK;
    return hs_diag_set(t->diag, HS_E_DIVERGED, NULL, 0, "training diverged: loss %g at round %d, agent %d", loss,
                       t->round, agent);
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
    t->batch = sc->model.batch;
    gsl_rng *data_rng = rng_stream_create(sc->seed, 0, RNG_PURPOSE_DATA);
    if (data_rng == NULL) goto nomem;
    status = dataset_load(&sc->data, data_rng, &t->data, t->diag);
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
    t->shuffle_rng = gsl_rng_alloc(gsl_rng_taus2);
    if (!t->order_offset || !t->cursor || !t->epoch || !t->shuffle_rng) goto nomem;
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
        trainer_shuffle(t, i);
    }
    if ((status = model_workspace_create(&sc->model, &t->ws)) != HS_OK) goto fail;
    t->x = malloc((size_t)t->batch * (size_t)t->data->features * sizeof *t->x);
    t->y = malloc((size_t)t->batch * sizeof *t->y);
    t->indices = malloc((size_t)t->batch * sizeof *t->indices);
    if (t->x == NULL || t->y == NULL || t->indices == NULL) goto nomem;
    gsl_rng *init = rng_stream_create(sc->seed, 0, RNG_PURPOSE_INIT);
    if (init == NULL) goto nomem;
    status = model_create(&sc->model, init, &t->eval);
    gsl_rng_free(init);
    if (status != HS_OK) goto fail;
    t->n_params = model_param_count(t->eval);
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
    model_free(t->eval);
    free(t->heldout_rows);
    free(t->seen_rows);
    model_workspace_free(t->ws);
    free(t->x);
    free(t->y);
    free(t->indices);
    free(t->order);
    free(t->order_offset);
    free(t->cursor);
    free(t->epoch);
    if (t->shuffle_rng) gsl_rng_free(t->shuffle_rng);
    partition_free(t->partition);
    dataset_free(t->data);
    free(t);
}

double trainer_schedule_lr(const Scenario *sc, int round)
{
    /* a run without a round count schedules over the cap the engine would stop at */
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
    if (status == HS_OK && t->grad_sum == NULL) status = HS_E_NOMEM;
    return status == HS_OK ? HS_OK : trainer_fail(t, status, "cannot create the model");
}

int trainer_shared_gradients(Trainer *t)
{
    return t ? trainer_shared_gradients_of(t, NULL, t->world->n) : HS_OK;
}

int trainer_shared_gradients_of(Trainer *t, const int *members, int n_members)
{
    if (t == NULL) return HS_OK;
    memset(t->grad_sum, 0, t->n_params * sizeof *t->grad_sum);
    float *grads = model_grads(t->shared);
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        double loss;
        int b = trainer_next_batch(t, i);
        if (b < 0) return trainer_fail(t, HS_E_NOMEM, "out of memory");
        int status = model_grad_full_at(t->shared, model_params(t->shared), grads, t->ws, t->x, t->y, b, &loss);
        if (status == HS_OK) status = trainer_check_loss(t, loss, i);
        if (status != HS_OK) return status;
        t->loss_sum += loss;
        t->loss_count++;
        vec_axpy(t->grad_sum, 1.0f, grads, t->n_params);
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
    return t && t->shared ? model_params(t->shared) : NULL;
}

int trainer_gradient_at(Trainer *t, int agent, const float *params, float *grad)
{
    if (t == NULL) return HS_OK;
    double loss;
    int b = trainer_next_batch(t, agent);
    if (b < 0) return trainer_fail(t, HS_E_NOMEM, "out of memory");
    /* t->eval is only the shape: evaluation runs after the round's last event */
    int status = model_grad_full_at(t->eval, params, grad, t->ws, t->x, t->y, b, &loss);
    if (status == HS_OK) status = trainer_check_loss(t, loss, agent);
    if (status == HS_OK) {
        t->loss_sum += loss;
        t->loss_count++;
    }
    return status;
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

float *trainer_params(Trainer *t, int agent)
{
    return t && t->models ? model_params(t->models[agent]) : NULL;
}

float *trainer_buffer(Trainer *t, int agent, int which)
{
    return t && which < t->n_buffers ? t->buffers[agent * t->n_buffers + which] : NULL;
}

int trainer_gradient(Trainer *t, int agent, float *grad)
{
    if (t == NULL) return HS_OK;
    double loss;
    int b = trainer_next_batch(t, agent);
    if (b < 0) return trainer_fail(t, HS_E_NOMEM, "out of memory");
    Model *m = t->models[agent];
    int status = model_grad_full_at(m, model_params(m), grad, t->ws, t->x, t->y, b, &loss);
    if (status == HS_OK) status = trainer_check_loss(t, loss, agent);
    if (status == HS_OK) {
        t->loss_sum += loss;
        t->loss_count++;
    }
    return status;
}

int trainer_optimizer_step(Trainer *t, int agent, const float *grad)
{
    if (t == NULL) return HS_OK;
    optim_step(t->optims[agent], model_params(t->models[agent]), grad, 0, t->n_params, trainer_schedule_lr(t->sc, t->round));
    return HS_OK;
}

int trainer_local_step(Trainer *t, int agent)
{
    if (t == NULL) return HS_OK;
    int status = trainer_gradient(t, agent, model_grads(t->models[agent]));
    if (status == HS_OK) status = trainer_optimizer_step(t, agent, model_grads(t->models[agent]));
    return status;
}

int trainer_local_step_clipped(Trainer *t, int agent, double threshold, double noise_std, gsl_rng *noise,
                               float *scratch, int *batch)
{
    if (t == NULL) return HS_OK;
    double loss;
    int b = trainer_next_batch(t, agent);
    if (batch) *batch = b;
    Model *m = t->models[agent];
    float *grad = model_grads(m);
    size_t count = model_block_param_count(m);
    int status = model_grad_clipped_at(m, model_params(m), grad, scratch, t->ws, t->x, t->y, b, threshold, &loss, NULL);
    if (status == HS_OK) status = trainer_check_loss(t, loss, agent);
    if (status != HS_OK) return status;
    t->loss_sum += loss;
    t->loss_count++;
    /* the noise goes on the sum of the clipped gradients: (sum + z) / b = mean + z / b */
    vec_add_gaussian(grad, noise_std / b, count, noise);
    return trainer_optimizer_step(t, agent, grad);
}

/* Averages [offset, offset+count) of the members' parameters into every member. */
static int trainer_average_range(Trainer *t, const int *members, int n_members, int by_samples,
                                 size_t offset, size_t count)
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
    return trainer_average_range(t, members, n_members, by_samples, 0, t->n_params);
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

static void trainer_bottom_range(const Model *m, int split, size_t *offset, size_t *count)
{
    size_t last_offset, last_count;
    model_block_range(m, split - 1, &last_offset, &last_count);
    *offset = 0;
    *count = last_offset + last_count;
}

int trainer_split_begin(Trainer *t, int slow, int split)
{
    if (t == NULL) return HS_OK;
    if (t->pairs == NULL && (t->pairs = calloc((size_t)t->world->n, sizeof *t->pairs)) == NULL)
        return trainer_fail(t, HS_E_NOMEM, "out of memory");
    SplitPair *p = &t->pairs[slow];
    int steps = world_agent_steps(t->world, slow, t->batch);
    int act_floats = model_split_floats(t->models[slow], split);
    if (p->top == NULL) {
        gsl_rng *init = rng_stream_create(t->sc->seed, 0, RNG_PURPOSE_INIT);
        int status = init ? model_create(&t->sc->model, init, &p->top) : HS_E_NOMEM;
        if (init) gsl_rng_free(init);
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

int trainer_split_bottom_step(Trainer *t, int slow, int split)
{
    if (t == NULL) return HS_OK;
    SplitPair *p = &t->pairs[slow];
    int b = trainer_next_batch(t, slow);
    if (b < 0) return trainer_fail(t, HS_E_NOMEM, "out of memory");
    if (p->head + p->count >= p->capacity) return trainer_fail(t, HS_E_INTERNAL, "activation queue overflow");
    int slot = p->head + p->count;
    size_t act_floats = (size_t)model_split_floats(t->models[slow], split);
    float *act = p->act + (size_t)slot * (size_t)t->batch * act_floats;
    double loss;
    Model *m = t->models[slow];
    int status = model_grad_bottom(m, t->ws, split, t->x, t->y, b, &loss, act);
    if (status == HS_OK) status = trainer_check_loss(t, loss, slow);
    if (status != HS_OK) return status;
    t->loss_sum += loss;
    t->loss_count++;
    memcpy(p->labels + (size_t)slot * (size_t)t->batch, t->y, (size_t)b * sizeof *t->y);
    p->sizes[slot] = b;
    p->count++;
    double lr = trainer_schedule_lr(t->sc, t->round);
    size_t offset, count;
    trainer_bottom_range(m, split, &offset, &count);
    optim_step(t->optims[slow], model_params(m), model_grads(m), offset, count, lr);
    model_aux_range(m, split, &offset, &count);
    optim_step(t->optims[slow], model_params(m), model_grads(m), offset, count, lr);
    return HS_OK;
}

int trainer_split_top_step(Trainer *t, int slow, int split)
{
    if (t == NULL) return HS_OK;
    SplitPair *p = &t->pairs[slow];
    if (p->count == 0) return trainer_fail(t, HS_E_INTERNAL, "no activations queued for the helper");
    int slot = p->head++;
    p->count--;
    size_t act_floats = (size_t)model_split_floats(p->top, split);
    double loss;
    int status = model_grad_top(p->top, t->ws, split, p->act + (size_t)slot * (size_t)t->batch * act_floats,
                                p->labels + (size_t)slot * (size_t)t->batch, p->sizes[slot], &loss);
    if (status == HS_OK) status = trainer_check_loss(t, loss, slow);
    if (status != HS_OK) return status;
    size_t offset, count;
    trainer_top_range(p->top, split, &offset, &count);
    optim_step(p->top_optim, model_params(p->top), model_grads(p->top), offset, count, trainer_schedule_lr(t->sc, t->round));
    p->top_batches++;
    return HS_OK;
}

int trainer_split_end(Trainer *t, int slow, int split)
{
    if (t == NULL) return HS_OK;
    SplitPair *p = &t->pairs[slow];
    size_t offset, count;
    trainer_top_range(p->top, split, &offset, &count);
    memcpy(model_params(t->models[slow]) + offset, model_params(p->top) + offset, count * sizeof(float));
    return HS_OK;
}

/* 1 when some offloader's top copy trained on fewer samples than the agent holds: its
 * helper dropped batches of an absent partner (ComDML under churn). */
static int trainer_split_partial(const Trainer *t, const int *splits)
{
    for (int i = 0; i < t->world->n; i++)
        if (splits[i] > 0 && t->pairs[i].top_batches != world_agent_steps(t->world, i, t->batch)) return 1;
    return 0;
}

/* An offloader's top blocks count for the share of its epoch they trained on. */
static double trainer_top_weight(const Trainer *t, int i)
{
    int steps = world_agent_steps(t->world, i, t->batch), done = t->pairs[i].top_batches;
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
    Model *shape = t->models[0];
    int n = t->world->n, blocks = model_n_blocks(shape);
    size_t last_offset, last_count;
    model_block_range(shape, blocks - 1, &last_offset, &last_count);
    /* Without dropped batches every block's weights are the samples: one pass, as always. */
    int status = t->pairs && trainer_split_partial(t, splits)
                     ? trainer_average_blocks_by_trained(t, splits, blocks)
                     : trainer_average_range(t, NULL, n, 1, 0, last_offset + last_count);
    if (status == HS_E_INTERNAL) return trainer_fail(t, status, "a block that no agent trained");
    int *members = malloc((size_t)n * sizeof *members);
    if (members == NULL) return trainer_fail(t, HS_E_NOMEM, "out of memory");
    for (int m = 1; status == HS_OK && m < blocks; m++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (splits[i] == m) members[k++] = i;
        if (k < 2) continue;
        size_t offset, count;
        model_aux_range(shape, m, &offset, &count);
        status = trainer_average_range(t, members, k, 1, offset, count);
    }
    free(members);
    return status;
}

/* --- evaluation --- */

int trainer_round_end(Trainer *t, SinkMetric *metric, int *evaluated)
{
    *evaluated = 0;
    if ((t->round + 1) % t->sc->eval_every != 0 && t->round + 1 != t->sc->rounds) return HS_OK;
    Model *model = t->shared;
    if (model == NULL) {
        /* the sample-weighted average of the agents' models */
        model = t->eval;
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
    int status = model_evaluate(model, t->ws, t->data, 1, NULL, t->n_eval, &loss, &accuracy);
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
            status = model_evaluate(model, t->ws, t->data, 1, t->heldout_rows, t->n_heldout, &part_loss,
                                    &metric->heldout_accuracy);
        if (status == HS_OK && t->n_seen > 0)
            status = model_evaluate(model, t->ws, t->data, 1, t->seen_rows, t->n_seen, &part_loss, &metric->seen_accuracy);
        if (status != HS_OK) return trainer_fail(t, status, "cannot evaluate the domains");
    }
    t->loss_sum = 0;
    t->loss_count = 0;
    *evaluated = 1;
    return HS_OK;
}
