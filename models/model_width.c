/* model_width.c — the HeteroFL sub-model map: which global coordinate each sub-model
 * parameter is, and the gather / gradient / scatter of a pruned step. The map is an index
 * array (one size_t per sub-model parameter), built once per keep ratio: a step then
 * costs two passes over the sub-model's parameters on top of its arithmetic. */
#include "models/model_width.h"

#include "base/hs_error.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ModelWidth {
    double keep;
    ModelSpec sub_spec;
    Model *sub;            /* the sub-model: its params/grads are scratch for a step */
    ModelWorkspace *ws;
    size_t full_count;     /* parameters of the full model */
    size_t *index;         /* (sub parameter count) global coordinate of each sub parameter */
    unsigned char *held;   /* (full_count) */
    size_t block_end;      /* sub-model parameters in blocks (heads follow) */
    size_t full_block_end; /* full-model parameters in blocks */
};

static int width_kept(int w, double keep)
{
    int k = (int)ceil(keep * w - 1e-9 * w);
    return k < 1 ? 1 : (k > w ? w : k);
}

int model_width_spec(const ModelSpec *full, double keep, ModelSpec *sub)
{
    if (!(keep > 0 && keep <= 1)) return HS_E_INPUT;
    ModelProfile profile;
    if (model_profile(full, &profile) != HS_OK) return HS_E_INPUT;
    *sub = *full;
    if (full->arch == MODEL_ARCH_MLP) {
        for (int i = 1; i < full->n_sizes - 1; i++) sub->sizes[i] = width_kept(full->sizes[i], keep);
    } else {
        sub->conv_channels[0] = width_kept(full->conv_channels[0], keep);
        sub->conv_channels[1] = width_kept(full->conv_channels[1], keep);
        sub->hidden = width_kept(full->hidden, keep);
    }
    return HS_OK;
}

/* A linear-like layer stored (rows, cols) then `bias_rows` biases: the sub layer's leading
 * rows x leading cols map into the full one's. inner > 1 for convolutions: each (row, col)
 * is a K*K patch. */
static size_t width_map_layer(size_t *index, size_t at, size_t full_offset, int rows, int cols, int full_cols,
                              int full_rows, int inner)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            for (int k = 0; k < inner; k++)
                index[at++] = full_offset + ((size_t)r * full_cols + c) * inner + k;
    for (int r = 0; r < rows; r++) index[at++] = full_offset + (size_t)full_rows * full_cols * inner + r;
    return at;
}

/* Inputs and outputs of block b (CNN conv blocks: channels; inner = K*K). */
static void width_block_shape(const ModelSpec *s, int b, int *in, int *out, int *inner)
{
    *inner = 1;
    if (s->arch == MODEL_ARCH_MLP) {
        *in = s->sizes[b];
        *out = s->sizes[b + 1];
        return;
    }
    int hw = (s->in_height / 4) * (s->in_width / 4);
    switch (b) {
    case 0: *in = s->in_channels; *out = s->conv_channels[0]; *inner = s->kernel * s->kernel; break;
    case 1: *in = s->conv_channels[0]; *out = s->conv_channels[1]; *inner = s->kernel * s->kernel; break;
    case 2: *in = s->conv_channels[1] * hw; *out = s->hidden; break;
    default: *in = s->hidden; *out = s->classes; break;
    }
}

/* Inputs of the head of split m (after the global average pool for conv blocks). */
static int width_head_in(const ModelSpec *s, int m)
{
    if (s->arch == MODEL_ARCH_MLP) return s->sizes[m];
    return m == 1 ? s->conv_channels[0] : m == 2 ? s->conv_channels[1] : s->hidden;
}

static int width_build(ModelWidth *w, const Model *full)
{
    const ModelSpec *fs = model_spec(full), *ss = &w->sub_spec;
    size_t at = 0;
    int L = model_n_blocks(full);
    for (int b = 0; b < L; b++) {
        int fin, fout, sin, sout, inner;
        width_block_shape(fs, b, &fin, &fout, &inner);
        width_block_shape(ss, b, &sin, &sout, &inner);
        size_t offset, count;
        model_block_range(full, b, &offset, &count);
        at = width_map_layer(w->index, at, offset, sout, sin, fin, fout, inner);
    }
    w->block_end = at;
    size_t last_offset, last_count;
    model_block_range(full, L - 1, &last_offset, &last_count);
    w->full_block_end = last_offset + last_count;
    for (int m = 1; m < L; m++) {
        size_t offset, count;
        model_aux_range(full, m, &offset, &count);
        at = width_map_layer(w->index, at, offset, fs->classes, width_head_in(ss, m), width_head_in(fs, m),
                             fs->classes, 1);
    }
    if (at != model_param_count(w->sub)) return HS_E_INTERNAL;
    for (size_t i = 0; i < at; i++) w->held[w->index[i]] = 1;
    return HS_OK;
}

int model_width_create(const ModelSpec *full, double keep, ModelWidth **out)
{
    *out = NULL;
    ModelWidth *w = calloc(1, sizeof *w);
    if (w == NULL) return HS_E_NOMEM;
    Model *shape = NULL;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2); /* only to build the models; values are overwritten */
    int status = rng ? model_width_spec(full, keep, &w->sub_spec) : HS_E_NOMEM;
    w->keep = keep;
    if (status == HS_OK) status = model_create(full, rng, &shape);
    if (status == HS_OK) status = model_create(&w->sub_spec, rng, &w->sub);
    if (status == HS_OK) status = model_workspace_create(&w->sub_spec, &w->ws);
    if (status == HS_OK) {
        w->full_count = model_param_count(shape);
        w->index = malloc(model_param_count(w->sub) * sizeof *w->index);
        w->held = calloc(w->full_count, 1);
        status = w->index && w->held ? width_build(w, shape) : HS_E_NOMEM;
    }
    model_free(shape);
    if (rng) gsl_rng_free(rng);
    if (status != HS_OK) {
        model_width_free(w);
        return status;
    }
    *out = w;
    return HS_OK;
}

void model_width_free(ModelWidth *w)
{
    if (w == NULL) return;
    model_free(w->sub);
    model_workspace_free(w->ws);
    free(w->index);
    free(w->held);
    free(w);
}

double model_width_keep(const ModelWidth *w) { return w->keep; }
const ModelSpec *model_width_sub_spec(const ModelWidth *w) { return &w->sub_spec; }
const unsigned char *model_width_held(const ModelWidth *w) { return w->held; }
size_t model_width_count(const ModelWidth *w) { return model_param_count(w->sub); }

int model_width_grad(ModelWidth *w, const float *P, float *G, const float *x, const int *y, int B, double *loss)
{
    float *sp = model_params(w->sub), *sg = model_grads(w->sub);
    size_t n = model_param_count(w->sub);
    for (size_t i = 0; i < n; i++) sp[i] = P[w->index[i]];
    int status = model_grad_full(w->sub, w->ws, x, y, B, loss);
    if (status != HS_OK) return status;
    /* the blocks' range of G: zero, then the sub-model's gradient at its coordinates */
    memset(G, 0, w->full_block_end * sizeof *G);
    for (size_t i = 0; i < w->block_end; i++) G[w->index[i]] = sg[i];
    return HS_OK;
}

int model_width_grad_naive(const ModelWidth *w, const Model *full, ModelWorkspace *ws, const float *P, float *G,
                           const float *x, const int *y, int B, double *loss)
{
    size_t n = model_param_count(full);
    if (n != w->full_count) return HS_E_INPUT;
    float *masked = malloc(n * sizeof *masked);
    if (masked == NULL) return HS_E_NOMEM;
    for (size_t i = 0; i < n; i++) masked[i] = w->held[i] ? P[i] : 0.0f;
    int status = model_grad_full_at(full, masked, G, ws, x, y, B, loss);
    free(masked);
    if (status != HS_OK) return status;
    size_t offset, count;
    model_block_range(full, model_n_blocks(full) - 1, &offset, &count);
    for (size_t i = 0; i < offset + count; i++)
        if (!w->held[i]) G[i] = 0.0f;
    return HS_OK;
}

int vec_masked_average(float *out, const float *const *vectors, const unsigned char *const *held,
                       const double *weights, int K, size_t n)
{
    if (K < 1) return HS_E_INPUT;
    for (int k = 0; k < K; k++)
        if (!(weights[k] >= 0) || !isfinite(weights[k])) return HS_E_INPUT;
    for (size_t i = 0; i < n; i++) {
        double sum = 0.0, total = 0.0;
        for (int k = 0; k < K; k++)
            if (held[k] == NULL || held[k][i]) {
                sum += weights[k] * vectors[k][i];
                total += weights[k];
            }
        if (total > 0) out[i] = (float)(sum / total);
    }
    return HS_OK;
}
