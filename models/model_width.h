/* model_width.h — width-pruned nested sub-models (HeteroFL, Diao, Ding, Tarokh, ICLR 2021),
 * for slow agents that train a smaller share of the shared model.
 *
 * The sub-model at keep ratio r (0 < r <= 1) keeps the leading ceil(r * w) units of every
 * hidden layer of width w (at least one): MLP sizes[1..n-2]; CNN conv channels 1 and 2
 * and the hidden linear layer. The input and the classes stay whole, as in HeteroFL,
 * where every client's sub-model shares the global model's input and output layers.
 * Sub-models are nested: the coordinates of a smaller ratio are a subset of those of a
 * larger one, so the coordinates two agents share are those of the smaller ratio.
 *
 * Coordinates: a sub-model parameter is the global parameter at the same (row, column)
 * of its layer, in the leading rows (output units) and leading columns (input units);
 * for the linear layer after the CNN's second pool the kept inputs are the leading
 * channels' h*w positions, which are the leading columns because the flatten is NCHW.
 * The auxiliary heads map the same way (leading input columns, every class).
 *
 * Arithmetic: the sub-model is a real smaller Model (its own flat vectors and workspace),
 * so a pruned step costs the smaller sgemms; parameters are gathered from the global
 * vector and the gradient scattered back. Its cost is model_profile() of the sub-model
 * spec, which the simulator uses for time and bytes. */
#ifndef MODELS_MODEL_WIDTH_H
#define MODELS_MODEL_WIDTH_H

#include "models/model.h"
#include "models/model_spec.h"

#include <stddef.h>

/* The sub-model spec of full at keep: hidden widths ceil(keep * w), at least 1 (keep is
 * nudged down by 1e-9 first, so that keep * w a hair above an integer from rounding does
 * not take one more unit). HS_E_INPUT for keep outside (0, 1] or a spec model_profile
 * rejects. */
int model_width_spec(const ModelSpec *full, double keep, ModelSpec *sub);

typedef struct ModelWidth ModelWidth;

/* The map from full's layout to its sub-model at keep, with a sub-model and a workspace
 * of its own. HS_E_INPUT as model_width_spec, HS_E_NOMEM. Free with model_width_free. */
int model_width_create(const ModelSpec *full, double keep, ModelWidth **out);
void model_width_free(ModelWidth *w);
double model_width_keep(const ModelWidth *w);
const ModelSpec *model_width_sub_spec(const ModelWidth *w);
/* (full parameter count) 1 where the sub-model holds the coordinate, else 0 (blocks and heads). */
const unsigned char *model_width_held(const ModelWidth *w);
/* Parameters of the sub-model, blocks and heads: the count of 1s in model_width_held. */
size_t model_width_count(const ModelWidth *w);

/* Gradient of the sub-model's mean cross-entropy on (x, y) at the global parameters P
 * (full layout), scattered into G (full layout): the blocks' coordinates outside the
 * sub-model get 0, the heads' ranges are left untouched (as model_grad_full does).
 * Errors as model_grad_full. */
int model_width_grad(ModelWidth *w, const float *P, float *G, const float *x, const int *y, int B, double *loss);

/* Naive twin for the tests: the full model (shape `full`, workspace ws) at P with every
 * coordinate outside the sub-model set to 0 (so dropped units output 0 after their ReLU
 * and feed nothing forward), its whole gradient, then the dropped coordinates of G set
 * to 0. Same values as model_width_grad up to the summation order of the sgemms. */
int model_width_grad_naive(const ModelWidth *w, const Model *full, ModelWorkspace *ws, const float *P, float *G,
                           const float *x, const int *y, int B, double *loss);

/* Per-coordinate weighted average over the vectors that hold the coordinate:
 *   out[i] = sum_k w_k held_k[i] v_k[i] / sum_k w_k held_k[i],
 * summed in double in the order k = 0..K-1 (deterministic). A coordinate nobody holds
 * keeps out[i]. held[k] NULL means vector k holds every coordinate. out may alias a
 * vector. HS_E_INPUT if K < 1 or a weight is negative or not finite. */
int vec_masked_average(float *out, const float *const *vectors, const unsigned char *const *held,
                       const double *weights, int K, size_t n);

#endif
