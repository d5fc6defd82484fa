/* model.h — the MLP and the small CNN of a ModelSpec, cut into blocks with auxiliary
 * heads at every split, for whole-model and local-loss split (ComDML) training.
 *
 * Blocks (the cost profile in model_profile.c counts exactly these layers):
 *   MLP, L = n_sizes - 1 blocks: block b = linear(sizes[b] -> sizes[b+1]), + ReLU unless last.
 *   CNN, L = 4: conv(k, same)+ReLU+maxpool2, conv+ReLU+maxpool2, linear(hidden)+ReLU,
 *   linear(classes).
 * Auxiliary head at split m (1..L-1), fed by the output of block m (1-based, i.e. the
 * activation that crosses the cut): MLP: linear(sizes[m] -> classes); CNN: global average
 * pool + linear(channels -> classes) after a conv block, linear(hidden -> classes) at m = 3.
 *
 * A Model owns two flat float vectors, parameters and gradients, one allocation each,
 * both laid out as: blocks 0..L-1 in order, then the heads of splits 1..L-1. Inside
 * every layer: weight then bias; weights are (OUT, IN) for linear layers and
 * (OC, C, K, K) for convolutions. Everything else (activations, their gradients, the
 * im2col buffer, batch gather buffers) lives in a ModelWorkspace, one per thread, so a
 * Model costs 8 bytes per parameter and a thousand agents fit in memory.
 *
 * Split numbering follows the profile: split m cuts after block m (1-based), so the slow
 * side runs blocks 1..m (indices 0..m-1) plus head m, the fast side blocks m+1..L
 * (indices m..L-1). The entry points write only their own ranges of the gradient vector
 * (they zero those ranges first), so a bottom and a top pass on the same Model touch
 * disjoint memory and may run on two threads with two workspaces.
 *
 * Determinism: given the same parameters and batch, every entry point returns bitwise
 * identical gradients and loss (fixed summation orders; OpenBLAS must run one thread). */
#ifndef MODELS_MODEL_H
#define MODELS_MODEL_H

#include "models/dataset.h"
#include "models/model_spec.h"

#include <gsl/gsl_rng.h>
#include <stddef.h>

typedef struct Model Model;
typedef struct ModelWorkspace ModelWorkspace;

/* A new model for spec, initialised from rng: weights of layers followed by a ReLU are
 * He-uniform, U(-sqrt(6/fan_in), +sqrt(6/fan_in)); the other weights (output layer and
 * heads) U(-1/sqrt(fan_in), +1/sqrt(fan_in)); biases 0. Draws run over the flat vector
 * in layout order. Gradients start at 0. Returns HS_E_INPUT for a spec model_profile
 * rejects (or an MLP whose last size is not spec->classes), HS_E_NOMEM. The caller
 * frees *out with model_free. */
int model_create(const ModelSpec *spec, gsl_rng *rng, Model **out);
void model_free(Model *m);
/* Frees m's gradient vector for a Model whose gradients always go to an outside vector
 * (the _at entry points): 4 bytes per parameter fewer, which is a gigabyte for a thousand
 * agents' MLPs. model_grads then returns NULL and the entry points without _at fail. */
void model_release_grads(Model *m);

const ModelSpec *model_spec(const Model *m);
const ModelProfile *model_get_profile(const Model *m);
size_t model_param_count(const Model *m);
float *model_params(Model *m); /* (model_param_count) */
float *model_grads(Model *m);  /* (model_param_count) */
int model_n_blocks(const Model *m);
/* Range of block (0-based, 0..L-1) in the flat vectors. */
void model_block_range(const Model *m, int block, size_t *offset, size_t *count);
/* Range of the auxiliary head of split (1..L-1); *count = 0 for other splits. */
void model_aux_range(const Model *m, int split, size_t *offset, size_t *count);
/* Floats per sample entering the head of split m (what crosses the cut), = profile
 * act_floats[m-1]. */
int model_split_floats(const Model *m, int split);

/* Copies src's parameters into dst (same shape). HS_E_INPUT if the counts differ. */
int model_copy_params(Model *dst, const Model *src);

/* Flat-vector helpers. */
void vec_axpy(float *y, float a, const float *x, size_t n); /* y += a x; x, y must not overlap */
void vec_scale(float *x, float a, size_t n);                /* x *= a */
/* out = sum_k w_k v_k / sum_k w_k, element by element, summed in double in the order
 * k = 0..K-1 and rounded once, so the result does not depend on threads. out may alias
 * any vectors[k]. HS_E_INPUT if K < 1 or the weights do not sum to a positive number. */
int vec_weighted_average(float *out, const float *const *vectors, const double *weights, int K, size_t n);

/* Scales x to L2 norm threshold when its norm (summed in double) is above it; returns
 * the norm before clipping. threshold = inf never clips. */
double vec_clip_norm(float *x, size_t n, double threshold);
/* x += N(0, std^2) per entry, drawn in entry order from rng (GSL's ziggurat). */
void vec_add_gaussian(float *x, double std, size_t n, gsl_rng *rng);

/* The kernels spec->kernels stands for: MODEL_KERNELS_OPENBLAS or MODEL_KERNELS_ONEDNN
 * (auto: oneDNN for a CNN when hetsim is built with it and its engine starts, OpenBLAS
 * otherwise, and always for an MLP or a ResNet). */
ModelKernels model_kernels_resolve(const ModelSpec *spec);
/* 1 when kernels can run here (onednn: built with oneDNN and its engine starts). */
int model_kernels_available(ModelKernels kernels);

/* Scratch memory for spec's model at batch sizes up to spec->batch; one per thread,
 * usable with every Model of the same shape. The convolutions run on the kernels of
 * model_kernels_resolve(spec), whatever the Model's own spec says; HS_E_INPUT when
 * spec->kernels is onednn and oneDNN is not available. */
int model_workspace_create(const ModelSpec *spec, ModelWorkspace **out);
/* The same with room for batches up to capacity (when above spec->batch: agents with
 * batches of their own), evaluation still in batches of spec->batch, so its figures stay
 * those of model_workspace_create(spec). */
int model_workspace_create_sized(const ModelSpec *spec, int capacity, ModelWorkspace **out);
void model_workspace_free(ModelWorkspace *ws);
/* The evaluation's batch size (spec->batch). */
int model_workspace_batch(const ModelWorkspace *ws);
/* Gather buffers the caller may use for a batch: x (batch, features), y (batch). */
float *model_workspace_x(ModelWorkspace *ws);
int *model_workspace_y(ModelWorkspace *ws);

/* Training entry points. x is (B, features) (images NCHW), y holds labels in [0, classes),
 * 1 <= B <= workspace batch. Each zeroes its gradient ranges, then accumulates the
 * gradient of the mean cross-entropy over the batch. *loss (may be NULL) receives that
 * loss. HS_E_DIVERGED if the loss is NaN or Inf (gradients are then undefined),
 * HS_E_INPUT for a bad B, split or workspace. */

/* Whole model; gradients of the blocks only (head ranges are left untouched). */
int model_grad_full(Model *m, ModelWorkspace *ws, const float *x, const int *y, int B, double *loss);
/* The same at an outside parameter vector: reads params, writes grads (both of
 * model_param_count floats, laid out like m's); m itself is only a shape. Lets several
 * threads take gradients of one shared model. */
int model_grad_full_at(const Model *m, const float *params, float *grads, ModelWorkspace *ws, const float *x,
                       const int *y, int B, double *loss);
/* Slow side of split (1..L-1): blocks 1..split and head split, loss on the head;
 * gradients into those ranges only. Copies the cut activations (B, model_split_floats)
 * into act_out unless it is NULL. */
int model_grad_bottom(Model *m, ModelWorkspace *ws, int split, const float *x, const int *y, int B, double *loss,
                      float *act_out);
/* Fast side of split: blocks split+1..L from act_in (B, model_split_floats); gradients
 * into those blocks only. No gradient flows back into act_in. */
int model_grad_top(Model *m, ModelWorkspace *ws, int split, const float *act_in, const int *y, int B,
                   double *loss);
/* The two at outside parameter and gradient vectors (laid out like m's; only their
 * ranges are read and written), as model_grad_full_at. */
int model_grad_bottom_at(const Model *m, const float *params, float *grads, ModelWorkspace *ws, int split,
                         const float *x, const int *y, int B, double *loss, float *act_out);
int model_grad_top_at(const Model *m, const float *params, float *grads, ModelWorkspace *ws, int split,
                      const float *act_in, const int *y, int B, double *loss);

/* A clock for model_time_step_at: seconds from any origin, read through the caller's
 * context. The model code never reads a clock itself; `hetsim profile` passes
 * CLOCK_MONOTONIC, the tests a counter. */
typedef double (*ModelClock)(void *context);

/* One training step of the whole model, as model_grad_full_at takes it, timed block by
 * block for a measured profile (models/layer_profile.h): fwd_s[b] is block b's forward,
 * bwd_s[b] its backward (the last block's includes the loss and its gradient; the first
 * block computes no input gradient, as in training); then, for each split k in 1..L-1,
 * head k's forward on the step's activations into head_fwd_s[k], its loss and backward
 * into head_bwd_s[k] (index 0 is 0). The four arrays hold model_n_blocks entries. G receives the blocks'
 * gradient and the heads'. Errors as model_grad_full_at. */
int model_time_step_at(const Model *m, const float *params, float *grads, ModelWorkspace *ws, const float *x,
                       const int *y, int B, ModelClock now, void *clock_context, double *fwd_s, double *bwd_s,
                       double *head_fwd_s, double *head_bwd_s);

/* Progressive freezing (SmartFreeze, Wu et al. 2024): stage s (1..L) trains block s
 * (1-based) with the output module of split s, the auxiliary head (at s = L the model's
 * own last block is the output); blocks 1..s-1 are frozen: forward only, no gradient
 * flows into them and block s computes no input gradient. Reads P, writes G (both laid
 * out like m, m only a shape): block s's range and head s's range, zeroed first, nothing
 * else. Errors as model_grad_full, HS_E_INPUT for a stage outside 1..L. */
int model_grad_stage_at(const Model *m, const float *P, float *G, ModelWorkspace *ws, int stage, const float *x,
                        const int *y, int B, double *loss);

/* Per-sample gradients, for differentially private training (DP-SGD's per-sample
 * clipping, Abadi et al. 2016). One batched forward pass, then one backward pass per
 * sample on that sample's rows of the workspace: sample j's gradient is exactly the
 * gradient of its own loss (what model_grad_full_at gives with B = 1 on sample j, up to
 * the rounding of the batched forward GEMM). Writes the blocks' ranges of B vectors,
 * vector j at grads + j * stride (stride >= model_param_count; head ranges untouched).
 * *loss (may be NULL): the mean loss over the batch. Errors as the entry points above.
 * Cost: B backward passes at batch 1 (no ghost-norm trick); the simulator's virtual time
 * does not depend on it. */
int model_grad_samples_at(const Model *m, const float *params, float *grads, size_t stride, ModelWorkspace *ws,
                          const float *x, const int *y, int B, double *loss);
/* grads (blocks) = (1/B) sum_j clip(g_j, threshold), clip(g, C) = g * min(1, C / ||g||_2)
 * over the blocks' entries, summed in sample order. scratch holds one gradient
 * (model_param_count floats). threshold = inf clips nothing. *clipped (may be NULL):
 * how many samples had a norm above the threshold. HS_E_INPUT for a threshold <= 0. */
int model_grad_clipped_at(const Model *m, const float *params, float *grads, float *scratch, ModelWorkspace *ws,
                          const float *x, const int *y, int B, double threshold, double *loss, int *clipped);
/* Entries of the blocks (the whole model without the auxiliary heads): what a full
 * gradient holds and what per-update clipping clips. */
size_t model_block_param_count(const Model *m);

/* Forward only: logits (B, classes) of x into the workspace; returns a pointer to them
 * (valid until the next call with ws) or NULL for a bad B. */
const float *model_forward(const Model *m, ModelWorkspace *ws, const float *x, int B);

/* Mean loss and accuracy over n samples of the training set (test_set = 0) or the test
 * set: rows indices[0..n-1], or rows 0..n-1 when indices is NULL (n <= 0: the whole set).
 * Batched by the workspace's batch size, loss summed in sample order. HS_E_DIVERGED for
 * a NaN/Inf loss, HS_E_INPUT if the data do not fit the model. */
int model_evaluate(const Model *m, ModelWorkspace *ws, const Dataset *ds, int test_set, const int *indices, int n,
                   double *loss, double *accuracy);
/* The same cut into pieces for threads: batches first_batch..first_batch+n_batches-1 of
 * an evaluation of n samples (n >= 1; batches of the workspace's size, as model_evaluate
 * cuts them) give each batch's mean loss and correct count. model_evaluate_sum adds them
 * in batch order, as model_evaluate does, so the figures are bitwise the same. */
int model_evaluate_batches(const Model *m, ModelWorkspace *ws, const Dataset *ds, int test_set, const int *indices,
                           int n, int first_batch, int n_batches, double *batch_loss, int *batch_correct);
void model_evaluate_sum(const double *batch_loss, const int *batch_correct, int n, int batch, double *loss,
                        double *accuracy);

#endif
