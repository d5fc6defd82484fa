/* model.c — blocks, heads, the flat parameter layout and the training entry points.
 * The forward pass stores every block output in the workspace (ReLU outputs double as
 * the ReLU masks; a conv block keeps its pooled output and each window's argmax, not
 * its full-resolution output, which lives one sample at a time in a cached scratch
 * plane), the backward pass consumes them in reverse. A step allocates nothing. */
#include "models/model.h"

#include "models/conv_onednn.h"
#include "models/conv_winograd.h"
#include "models/kernels.h"
#include "models/resnet.h"
#include "base/hs_error.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct Model {
    ModelSpec spec;
    ModelProfile profile;
    int n_blocks;
    size_t n_params;
    size_t block_offset[MODEL_MAX_BLOCKS + 1]; /* block b is [block_offset[b], block_offset[b+1]) */
    size_t aux_offset[MODEL_MAX_BLOCKS];       /* head of split m, index m */
    size_t aux_count[MODEL_MAX_BLOCKS];
    /* Layer shapes. MLP: block b is linear(in[b] -> out[b]). CNN: blocks 0, 1 are conv
     * from in[b] channels at height[b] x width[b] to out[b] channels, blocks 2, 3 linear. */
    int in[MODEL_MAX_BLOCKS], out[MODEL_MAX_BLOCKS];
    int height[2], width[2];
    int head_in[MODEL_MAX_BLOCKS]; /* features entering head m (after GAP for conv) */
    int head_hw[MODEL_MAX_BLOCKS]; /* GAP area for the head of split m, 0 = no GAP */
    ResnetShape *resnet;           /* ResNet: its block shapes (resnet.h); NULL otherwise */
    float *params; /* (n_params) */
    float *grads;  /* (n_params) */
};

struct ModelWorkspace {
    ModelSpec spec;
    int batch;                     /* evaluation's batches (spec.batch) */
    int capacity;                  /* the largest batch a call may pass (>= batch) */
    float *memory;                 /* the one float allocation below */
    float *act[MODEL_MAX_BLOCKS];  /* (batch, act_floats[b]) output of block b; last = logits */
    float *dact[MODEL_MAX_BLOCKS]; /* same shape: gradient of the loss w.r.t. act[b] */
    int *argmax[2];                /* CNN: (batch, act_floats[b]) window argmax of block b's pool */
    float *plane;                  /* CNN: one sample's conv output, then its gradient: (out[b], height[b],
                                    * width[b]) of the larger conv */
    float *col;                    /* im2col buffer, (C*K*K, H*W) of the larger conv */
    float *gap, *dgap;             /* (batch, max conv channels) */
    float *head_logits, *dhead;    /* (batch, classes) */
    float *x;                      /* (batch, features) gather buffer */
    int *y;                        /* (batch) gather buffer */
    ResnetShape *resnet;           /* ResNet: shapes and the blocks' buffers; NULL otherwise */
    ResnetBuffers rbuf;
    float *rmemory;
    ConvOnednn *conv[2];           /* CNN on oneDNN: the two conv blocks; NULL on OpenBLAS */
    ConvWinograd *wino[2];         /* CNN on winograd: the 5x5 blocks of 8+ channels (conv[b] NULL) */
    KernelsSgemm *gemm;            /* the linear layers' sgemm: oneDNN's with the oneDNN kernels, else
                                    * OpenBLAS's (always for an MLP) */
};

/* ------------------------------------------------------------------ shapes */

static int model_same_shape(const ModelSpec *a, const ModelSpec *b)
{
    if (a->arch != b->arch || a->in_channels != b->in_channels || a->in_height != b->in_height ||
        a->in_width != b->in_width || a->classes != b->classes)
        return 0;
    if (a->arch == MODEL_ARCH_MLP) {
        if (a->n_sizes != b->n_sizes) return 0;
        for (int i = 0; i < a->n_sizes; i++)
            if (a->sizes[i] != b->sizes[i]) return 0;
        return 1;
    }
    if (a->arch == MODEL_ARCH_RESNET)
        return a->depth == b->depth && a->base_channels == b->base_channels && a->norm_groups == b->norm_groups;
    return a->conv_channels[0] == b->conv_channels[0] && a->conv_channels[1] == b->conv_channels[1] &&
           a->kernel == b->kernel && a->hidden == b->hidden;
}

static int model_spec_check(const ModelSpec *s, ModelProfile *profile)
{
    if (s->classes < 2 || s->in_channels < 1 || s->in_height < 1 || s->in_width < 1) return HS_E_INPUT;
    if (model_profile(s, profile) != HS_OK) return HS_E_INPUT;
    if (profile->n_blocks < 1 || profile->n_blocks > MODEL_MAX_BLOCKS) return HS_E_INPUT;
    if (s->arch == MODEL_ARCH_MLP) {
        if (s->sizes[0] != s->in_channels * s->in_height * s->in_width) return HS_E_INPUT;
        if (s->sizes[s->n_sizes - 1] != s->classes) return HS_E_INPUT;
        for (int i = 0; i < s->n_sizes; i++)
            if (s->sizes[i] < 1) return HS_E_INPUT;
    } else if (s->arch == MODEL_ARCH_CNN) {
        if (s->kernel % 2 == 0 || s->conv_channels[0] < 1 || s->conv_channels[1] < 1) return HS_E_INPUT;
    }
    return HS_OK;
}

/* Fills the layer shapes and the flat layout. */
static void model_layout(Model *m)
{
    const ModelSpec *s = &m->spec;
    const int L = m->n_blocks, C = s->classes;
    size_t at = 0;
    if (s->arch == MODEL_ARCH_RESNET) {
        for (int b = 0; b < L; b++) {
            const ResnetBlock *k = &m->resnet->block[b];
            m->block_offset[b] = at;
            at += k->count;
            if (b + 1 < L) {
                m->head_in[b + 1] = k->out_c;
                m->head_hw[b + 1] = k->out_h * k->out_w;
            }
        }
    } else if (s->arch == MODEL_ARCH_MLP) {
        for (int b = 0; b < L; b++) {
            m->in[b] = s->sizes[b];
            m->out[b] = s->sizes[b + 1];
            m->block_offset[b] = at;
            at += (size_t)m->in[b] * m->out[b] + m->out[b];
        }
        for (int k = 1; k < L; k++) {
            m->head_in[k] = s->sizes[k];
            m->head_hw[k] = 0;
        }
    } else {
        int c = s->in_channels, h = s->in_height, w = s->in_width, k = s->kernel;
        for (int b = 0; b < 2; b++) {
            m->in[b] = c;
            m->out[b] = s->conv_channels[b];
            m->height[b] = h;
            m->width[b] = w;
            m->block_offset[b] = at;
            at += (size_t)m->out[b] * c * k * k + m->out[b];
            c = m->out[b];
            h /= 2;
            w /= 2;
            m->head_in[b + 1] = c;
            m->head_hw[b + 1] = h * w;
        }
        m->in[2] = c * h * w;
        m->out[2] = s->hidden;
        m->in[3] = s->hidden;
        m->out[3] = C;
        for (int b = 2; b < 4; b++) {
            m->block_offset[b] = at;
            at += (size_t)m->in[b] * m->out[b] + m->out[b];
        }
        m->head_in[3] = s->hidden;
        m->head_hw[3] = 0;
    }
    m->block_offset[L] = at;
    for (int k = 1; k < L; k++) {
        m->aux_offset[k] = at;
        m->aux_count[k] = (size_t)m->head_in[k] * C + C;
        at += m->aux_count[k];
    }
    m->n_params = at;
}

static float model_uniform(gsl_rng *rng, double bound)
{
    return (float)((2.0 * gsl_rng_uniform(rng) - 1.0) * bound);
}

/* Weights of one layer at p (count weights, biases after them stay 0). */
static void model_init_weights(float *p, size_t count, int fan_in, int relu_follows, gsl_rng *rng)
{
    double bound = relu_follows ? sqrt(6.0 / fan_in) : 1.0 / sqrt((double)fan_in);
    for (size_t i = 0; i < count; i++) p[i] = model_uniform(rng, bound);
}

static void model_init(Model *m, gsl_rng *rng)
{
    const ModelSpec *s = &m->spec;
    const int L = m->n_blocks;
    for (int b = 0; b < L; b++) {
        float *p = m->params + m->block_offset[b];
        int relu = b < L - 1;
        if (s->arch == MODEL_ARCH_RESNET) {
            resnet_block_init(m->resnet, b, p, rng);
        } else if (s->arch == MODEL_ARCH_CNN && b < 2) {
            int fan_in = m->in[b] * s->kernel * s->kernel;
            model_init_weights(p, (size_t)m->out[b] * fan_in, fan_in, 1, rng);
        } else {
            model_init_weights(p, (size_t)m->out[b] * m->in[b], m->in[b], relu, rng);
        }
    }
    for (int k = 1; k < L; k++)
        model_init_weights(m->params + m->aux_offset[k], (size_t)m->head_in[k] * s->classes, m->head_in[k], 0, rng);
}

int model_create(const ModelSpec *spec, gsl_rng *rng, Model **out)
{
    *out = NULL;
    ModelProfile profile;
    if (model_spec_check(spec, &profile) != HS_OK) return HS_E_INPUT;
    Model *m = calloc(1, sizeof *m);
    if (!m) return HS_E_NOMEM;
    m->spec = *spec;
    m->profile = profile;
    m->n_blocks = profile.n_blocks;
    if (spec->arch == MODEL_ARCH_RESNET) {
        if (!(m->resnet = malloc(sizeof *m->resnet))) {
            model_free(m);
            return HS_E_NOMEM;
        }
        resnet_shape(spec, m->resnet); /* checked by model_spec_check */
    }
    model_layout(m);
    m->params = calloc(m->n_params, sizeof(float));
    m->grads = calloc(m->n_params, sizeof(float));
    if (!m->params || !m->grads) {
        model_free(m);
        return HS_E_NOMEM;
    }
    model_init(m, rng);
    *out = m;
    return HS_OK;
}

void model_release_grads(Model *m)
{
    free(m->grads);
    m->grads = NULL;
}

void model_free(Model *m)
{
    if (!m) return;
    free(m->params);
    free(m->grads);
    free(m->resnet);
    free(m);
}

const ModelSpec *model_spec(const Model *m) { return &m->spec; }
const ModelProfile *model_get_profile(const Model *m) { return &m->profile; }
size_t model_param_count(const Model *m) { return m->n_params; }
float *model_params(Model *m) { return m->params; }
float *model_grads(Model *m) { return m->grads; }
int model_n_blocks(const Model *m) { return m->n_blocks; }

void model_block_range(const Model *m, int block, size_t *offset, size_t *count)
{
    if (block < 0 || block >= m->n_blocks) {
        *offset = 0;
        *count = 0;
        return;
    }
    *offset = m->block_offset[block];
    *count = m->block_offset[block + 1] - m->block_offset[block];
}

void model_aux_range(const Model *m, int split, size_t *offset, size_t *count)
{
    if (split < 1 || split >= m->n_blocks) {
        *offset = 0;
        *count = 0;
        return;
    }
    *offset = m->aux_offset[split];
    *count = m->aux_count[split];
}

int model_split_floats(const Model *m, int split)
{
    if (split < 1 || split >= m->n_blocks) return 0;
    return (int)m->profile.act_floats[split - 1];
}

int model_copy_params(Model *dst, const Model *src)
{
    if (dst->n_params != src->n_params) return HS_E_INPUT;
    if (dst != src) memcpy(dst->params, src->params, sizeof(float) * src->n_params);
    return HS_OK;
}

/* ------------------------------------------------------------------ vectors */

void vec_axpy(float *restrict y, float a, const float *restrict x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] += a * x[i];
}

void vec_scale(float *x, float a, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] *= a;
}

int vec_weighted_average(float *out, const float *const *vectors, const double *weights, int K, size_t n)
{
    if (K < 1) return HS_E_INPUT;
    double total = 0.0;
    for (int k = 0; k < K; k++) total += weights[k];
    if (!(total > 0.0) || !isfinite(total)) return HS_E_INPUT;
    double scaled[64];
    /* Normalised weights; for K > 64 they are recomputed per element (same values). */
    int cached = K <= 64;
    if (cached)
        for (int k = 0; k < K; k++) scaled[k] = weights[k] / total;
    for (size_t i = 0; i < n; i++) {
        double sum = 0.0;
        for (int k = 0; k < K; k++) sum += (cached ? scaled[k] : weights[k] / total) * vectors[k][i];
        out[i] = (float)sum;
    }
    return HS_OK;
}

double vec_clip_norm(float *x, size_t n, double threshold)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += (double)x[i] * x[i];
    double norm = sqrt(sum);
    if (norm > threshold) vec_scale(x, (float)(threshold / norm), n);
    return norm;
}

void vec_add_gaussian(float *x, double std, size_t n, gsl_rng *rng)
{
    if (!(std > 0.0)) return;
    for (size_t i = 0; i < n; i++) x[i] += (float)gsl_ran_gaussian_ziggurat(rng, std);
}

/* ------------------------------------------------------------------ workspace */

ModelKernels model_kernels_resolve(const ModelSpec *spec)
{
    if (spec->kernels == MODEL_KERNELS_AUTO)
        return spec->arch == MODEL_ARCH_CNN && conv_onednn_available() ? MODEL_KERNELS_ONEDNN : MODEL_KERNELS_OPENBLAS;
    return spec->kernels;
}

int model_kernels_available(ModelKernels kernels)
{
    return (kernels != MODEL_KERNELS_ONEDNN && kernels != MODEL_KERNELS_WINOGRAD) || conv_onednn_available();
}

int model_workspace_create(const ModelSpec *spec, ModelWorkspace **out)
{
    *out = NULL;
    ModelProfile p;
    if (model_spec_check(spec, &p) != HS_OK || spec->batch < 1) return HS_E_INPUT;
    Model shape; /* layout only, no vectors */
    memset(&shape, 0, sizeof shape);
    shape.spec = *spec;
    shape.profile = p;
    shape.n_blocks = p.n_blocks;
    ResnetShape *resnet = NULL;
    if (spec->arch == MODEL_ARCH_RESNET) {
        if (!(resnet = malloc(sizeof *resnet))) return HS_E_NOMEM;
        resnet_shape(spec, resnet);
        shape.resnet = resnet;
    }
    model_layout(&shape);
    const size_t B = (size_t)spec->batch, L = (size_t)p.n_blocks, C = (size_t)spec->classes;
    const size_t features = (size_t)spec->in_channels * spec->in_height * spec->in_width;
    size_t total = 0, plane = 0, pooled[2] = {0, 0}, col = 0, gap = 0;
    for (size_t b = 0; b < L; b++) total += 2 * B * (size_t)p.act_floats[b];
    /* the heads' pooled features: at most the last stage's channels */
    if (resnet) gap = (size_t)resnet->block[resnet->n_blocks - 1].out_c;
    if (spec->arch == MODEL_ARCH_CNN) {
        for (int b = 0; b < 2; b++) {
            size_t one = (size_t)shape.out[b] * shape.height[b] * shape.width[b];
            if (one > plane) plane = one;
            pooled[b] = B * (size_t)p.act_floats[b];
            size_t c = conv2d_col_floats(shape.in[b], shape.height[b], shape.width[b], spec->kernel);
            if (c > col) col = c;
            if ((size_t)shape.out[b] > gap) gap = shape.out[b];
        }
    }
    total += plane + col + 2 * B * gap + 2 * B * C + B * features;
    ModelWorkspace *ws = calloc(1, sizeof *ws);
    if (!ws) {
        free(resnet);
        return HS_E_NOMEM;
    }
    ws->resnet = resnet;
    if (resnet && !(ws->rmemory = calloc(resnet_buffer_floats(resnet, spec->batch), sizeof(float)))) {
        model_workspace_free(ws);
        return HS_E_NOMEM;
    }
    if (resnet) resnet_buffers_bind(resnet, spec->batch, ws->rmemory, &ws->rbuf);
    const ModelKernels kernels = model_kernels_resolve(spec);
    if (!model_kernels_available(kernels)) {
        model_workspace_free(ws);
        return HS_E_INPUT;
    }
    const int on_onednn = kernels == MODEL_KERNELS_ONEDNN || kernels == MODEL_KERNELS_WINOGRAD;
    if (on_onednn && spec->arch == MODEL_ARCH_CNN)
        for (int b = 0; b < 2; b++) {
            /* winograd: the 5x5 blocks with channels enough for its sgemms; oneDNN the rest */
            const int wino = kernels == MODEL_KERNELS_WINOGRAD && spec->kernel == 5 &&
                             shape.in[b] >= CONV_WINOGRAD_MIN_CHANNELS;
            int status = wino ? conv_winograd_create(shape.in[b], shape.height[b], shape.width[b], shape.out[b],
                                                     spec->kernel, spec->batch, &ws->wino[b])
                              : conv_onednn_create_block(shape.in[b], shape.height[b], shape.width[b],
                                                         shape.out[b], spec->kernel, spec->batch, &ws->conv[b]);
            if (status != HS_OK) {
                model_workspace_free(ws);
                return status;
            }
        }
    /* the first block hands its pooled output to the second in the second's layout (a
     * shortcut: HS_E_INPUT means the layouts do not allow it, and nothing changes) */
    if (ws->conv[0] && ws->conv[1] && conv_onednn_link(ws->conv[0], ws->conv[1], spec->batch) == HS_E_NOMEM) {
        model_workspace_free(ws);
        return HS_E_NOMEM;
    }
    ws->gemm = on_onednn ? conv_onednn_sgemm : kernels_sgemm_openblas;
    if (resnet) ws->rbuf.gemm = ws->gemm;
    ws->spec = *spec;
    ws->batch = ws->capacity = spec->batch;
    ws->memory = calloc(total, sizeof(float));
    ws->y = calloc(B, sizeof(int));
    int *argmax = NULL;
    if (pooled[0] + pooled[1]) argmax = ws->argmax[0] = calloc(pooled[0] + pooled[1], sizeof(int));
    if (!ws->memory || !ws->y || (pooled[0] + pooled[1] && !argmax)) {
        model_workspace_free(ws);
        return HS_E_NOMEM;
    }
    float *at = ws->memory;
    for (size_t b = 0; b < L; b++) {
        size_t n = B * (size_t)p.act_floats[b];
        ws->act[b] = at;
        ws->dact[b] = at + n;
        at += 2 * n;
    }
    if (argmax) ws->argmax[1] = argmax + pooled[0];
    ws->plane = at;
    at += plane;
    ws->col = at;
    at += col;
    ws->gap = at;
    ws->dgap = at + B * gap;
    at += 2 * B * gap;
    ws->head_logits = at;
    ws->dhead = at + B * C;
    at += 2 * B * C;
    ws->x = at;
    *out = ws;
    return HS_OK;
}

void model_workspace_free(ModelWorkspace *ws)
{
    if (!ws) return;
    free(ws->memory);
    free(ws->y);
    free(ws->argmax[0]);
    free(ws->resnet);
    free(ws->rmemory);
    conv_onednn_free(ws->conv[0]);
    conv_onednn_free(ws->conv[1]);
    conv_winograd_free(ws->wino[0]);
    conv_winograd_free(ws->wino[1]);
    free(ws);
}

int model_workspace_create_sized(const ModelSpec *spec, int capacity, ModelWorkspace **out)
{
    ModelSpec sized = *spec;
    if (capacity > sized.batch) sized.batch = capacity;
    int status = model_workspace_create(&sized, out);
    if (status != HS_OK) return status;
    (*out)->spec.batch = (*out)->batch = spec->batch;
    return HS_OK;
}

int model_workspace_batch(const ModelWorkspace *ws) { return ws->batch; }
float *model_workspace_x(ModelWorkspace *ws) { return ws->x; }
int *model_workspace_y(ModelWorkspace *ws) { return ws->y; }

/* ------------------------------------------------------------------ blocks */

/* Output floats per sample of block b's input (block 0: the model input). */
static size_t model_block_in_floats(const Model *m, int b)
{
    if (b == 0) return (size_t)m->spec.in_channels * m->spec.in_height * m->spec.in_width;
    return (size_t)m->profile.act_floats[b - 1];
}

/* infer: no backward pass follows (evaluation), so a oneDNN conv block keeps no pooling
 * positions; the outputs are the same bits either way. */
static void block_forward(const Model *m, const float *P, ModelWorkspace *ws, int b, const float *in, int B, int infer)
{
    const float *w = P + m->block_offset[b];
    const int last = b == m->n_blocks - 1;
    if (m->spec.arch == MODEL_ARCH_RESNET) {
        resnet_block_forward(m->resnet, b, w, &ws->rbuf, in, ws->act[b], B);
        return;
    }
    if (m->spec.arch == MODEL_ARCH_CNN && b < 2) {
        const int C = m->in[b], OC = m->out[b], H = m->height[b], W = m->width[b], K = m->spec.kernel;
        const float *bias = w + (size_t)OC * C * K * K;
        if (ws->conv[b]) {
            conv_onednn_relu_pool_forward(ws->conv[b], ws->act[b], infer ? NULL : ws->argmax[b], in, w, bias, B);
            return;
        }
        if (ws->wino[b]) {
            conv_winograd_relu_pool_forward(ws->wino[b], ws->act[b], infer ? NULL : ws->argmax[b], in, w, bias, B);
            return;
        }
        conv2d_relu_pool_forward(ws->act[b], ws->argmax[b], in, w, bias, ws->col, ws->plane, B, C, H, W, OC, K);
        return;
    }
    const int IN = m->in[b], OUT = m->out[b];
    const float *bias = w + (size_t)IN * OUT;
    if (last)
        linear_forward_with(ws->gemm, ws->act[b], in, w, bias, B, IN, OUT);
    else
        linear_relu_forward_with(ws->gemm, ws->act[b], in, w, bias, B, IN, OUT);
}

/* ws->dact[b] holds dLoss/d(output of b); adds the parameter gradient into G and, unless
 * din is NULL, writes dLoss/d(input of b) into din. */
static void block_backward(const Model *m, const float *P, float *G, ModelWorkspace *ws, int b, const float *in,
                           float *din, int B)
{
    const size_t off = m->block_offset[b];
    const float *w = P + off;
    float *dw = G + off;
    /* a Winograd block writes its din whole (0 + value: the bits of adding to zeros) */
    const int writes_din = m->spec.arch == MODEL_ARCH_CNN && b < 2 && ws->wino[b];
    if (din && !writes_din) memset(din, 0, sizeof(float) * B * model_block_in_floats(m, b));
    if (m->spec.arch == MODEL_ARCH_RESNET) {
        resnet_block_backward(m->resnet, b, w, dw, &ws->rbuf, in, ws->act[b], ws->dact[b], din, B);
        return;
    }
    if (m->spec.arch == MODEL_ARCH_CNN && b < 2) {
        const int C = m->in[b], OC = m->out[b], H = m->height[b], W = m->width[b], K = m->spec.kernel;
        const size_t nw = (size_t)OC * C * K * K;
        if (ws->conv[b]) {
            conv_onednn_relu_pool_backward(ws->conv[b], din, dw, dw + nw, ws->dact[b], ws->argmax[b], in, w, B);
            return;
        }
        if (ws->wino[b]) {
            conv_winograd_relu_pool_backward(ws->wino[b], din, dw, dw + nw, ws->dact[b], ws->act[b], ws->argmax[b],
                                             in, w, B);
            return;
        }
        conv2d_relu_pool_backward(din, dw, dw + nw, ws->dact[b], ws->act[b], ws->argmax[b], in, w, ws->col, ws->plane,
                                  B, C, H, W, OC, K);
        return;
    }
    const int IN = m->in[b], OUT = m->out[b];
    if (b < m->n_blocks - 1) relu_backward_inplace(ws->dact[b], ws->act[b], (size_t)B * OUT);
    linear_backward_with(ws->gemm, din, dw, dw + (size_t)IN * OUT, ws->dact[b], in, w, B, IN, OUT);
}

static void blocks_forward(const Model *m, const float *P, ModelWorkspace *ws, int first, int end, const float *in,
                           int B)
{
    /* a pass that does not start at the input leaves the linked copy of act[0] stale */
    if (first > 0) conv_onednn_forget(ws->conv[1]);
    for (int b = first; b < end; b++) block_forward(m, P, ws, b, b == first ? in : ws->act[b - 1], B, 0);
}

/* The whole model forward for logits alone (model_forward, the evaluation). */
static void blocks_infer(const Model *m, ModelWorkspace *ws, const float *in, int B)
{
    for (int b = 0; b < m->n_blocks; b++) block_forward(m, m->params, ws, b, b == 0 ? in : ws->act[b - 1], B, 1);
}

static void blocks_backward(const Model *m, const float *P, float *G, ModelWorkspace *ws, int first, int end,
                            const float *in, int B)
{
    for (int b = end - 1; b >= first; b--)
        block_backward(m, P, G, ws, b, b == first ? in : ws->act[b - 1], b == first ? NULL : ws->dact[b - 1], B);
}

/* Head of split k on act[k-1]: logits into ws->head_logits. */
static void head_forward(const Model *m, const float *P, ModelWorkspace *ws, int k, int B)
{
    const float *w = P + m->aux_offset[k];
    const int IN = m->head_in[k], C = m->spec.classes;
    const float *in = ws->act[k - 1];
    if (m->head_hw[k]) {
        avgpool_global_forward(ws->gap, in, B, IN, m->head_hw[k]);
        in = ws->gap;
    }
    linear_forward_with(ws->gemm, ws->head_logits, in, w, w + (size_t)IN * C, B, IN, C);
}

/* ws->dhead holds dLoss/dlogits; writes dLoss/d(act[k-1]) into ws->dact[k-1]. */
static void head_backward(const Model *m, const float *P, float *G, ModelWorkspace *ws, int k, int B)
{
    const size_t off = m->aux_offset[k];
    const int IN = m->head_in[k], C = m->spec.classes;
    float *dact = ws->dact[k - 1];
    size_t act_floats = (size_t)B * (size_t)m->profile.act_floats[k - 1];
    memset(dact, 0, sizeof(float) * act_floats);
    if (m->head_hw[k]) {
        memset(ws->dgap, 0, sizeof(float) * B * IN);
        linear_backward_with(ws->gemm, ws->dgap, G + off, G + off + (size_t)IN * C, ws->dhead, ws->gap, P + off, B, IN,
                             C);
        avgpool_global_backward(dact, ws->dgap, B, IN, m->head_hw[k]);
    } else {
        linear_backward_with(ws->gemm, dact, G + off, G + off + (size_t)IN * C, ws->dhead, ws->act[k - 1], P + off, B,
                             IN, C);
    }
}

/* ------------------------------------------------------------------ entry points */

static int model_check_call(const Model *m, const ModelWorkspace *ws, const int *y, int B)
{
    if (B < 1 || B > ws->capacity || !model_same_shape(&m->spec, &ws->spec)) return HS_E_INPUT;
    if (y)
        for (int i = 0; i < B; i++)
            if (y[i] < 0 || y[i] >= m->spec.classes) return HS_E_INPUT;
    return HS_OK;
}

static int model_loss(float *dlogits, const float *logits, const int *y, int B, int C, double *loss)
{
    double value = softmax_crossentropy(dlogits, logits, y, B, C, NULL);
    if (loss) *loss = value;
    return isfinite(value) ? HS_OK : HS_E_DIVERGED;
}

int model_grad_full_at(const Model *m, const float *P, float *G, ModelWorkspace *ws, const float *x, const int *y,
                       int B, double *loss)
{
    int status = model_check_call(m, ws, y, B);
    if (status != HS_OK) return status;
    const int L = m->n_blocks;
    memset(G, 0, sizeof(float) * m->block_offset[L]);
    blocks_forward(m, P, ws, 0, L, x, B);
    if ((status = model_loss(ws->dact[L - 1], ws->act[L - 1], y, B, m->spec.classes, loss))) return status;
    blocks_backward(m, P, G, ws, 0, L, x, B);
    return HS_OK;
}

int model_time_step_at(const Model *m, const float *P, float *G, ModelWorkspace *ws, const float *x, const int *y,
                       int B, ModelClock now, void *clock_context, double *fwd_s, double *bwd_s, double *head_fwd_s,
                       double *head_bwd_s)
{
    int status = model_check_call(m, ws, y, B);
    if (status != HS_OK) return status;
    const int L = m->n_blocks;
    memset(G, 0, sizeof(float) * m->n_params);
    /* the same calls in the same order as model_grad_full_at, a clock read between them */
    double t = now(clock_context);
    for (int b = 0; b < L; b++) {
        block_forward(m, P, ws, b, b == 0 ? x : ws->act[b - 1], B, 0);
        double after = now(clock_context);
        fwd_s[b] = after - t;
        t = after;
    }
    if ((status = model_loss(ws->dact[L - 1], ws->act[L - 1], y, B, m->spec.classes, NULL))) return status;
    for (int b = L - 1; b >= 0; b--) {
        block_backward(m, P, G, ws, b, b == 0 ? x : ws->act[b - 1], b == 0 ? NULL : ws->dact[b - 1], B);
        double after = now(clock_context);
        bwd_s[b] = after - t;
        t = after;
    }
    head_fwd_s[0] = head_bwd_s[0] = 0;
    for (int k = 1; k < L; k++) {
        head_forward(m, P, ws, k, B);
        double after = now(clock_context);
        head_fwd_s[k] = after - t;
        t = after;
        if ((status = model_loss(ws->dhead, ws->head_logits, y, B, m->spec.classes, NULL))) return status;
        head_backward(m, P, G, ws, k, B);
        after = now(clock_context);
        head_bwd_s[k] = after - t;
        t = after;
    }
    return HS_OK;
}

int model_grad_full(Model *m, ModelWorkspace *ws, const float *x, const int *y, int B, double *loss)
{
    if (m->grads == NULL) return HS_E_INPUT;
    return model_grad_full_at(m, m->params, m->grads, ws, x, y, B, loss);
}

int model_grad_bottom(Model *m, ModelWorkspace *ws, int split, const float *x, const int *y, int B, double *loss,
                      float *act_out)
{
    if (m->grads == NULL) return HS_E_INPUT;
    return model_grad_bottom_at(m, m->params, m->grads, ws, split, x, y, B, loss, act_out);
}

int model_grad_bottom_at(const Model *m, const float *P, float *G, ModelWorkspace *ws, int split, const float *x,
                         const int *y, int B, double *loss, float *act_out)
{
    int status = model_check_call(m, ws, y, B);
    if (status != HS_OK) return status;
    if (split < 1 || split >= m->n_blocks) return HS_E_INPUT;
    memset(G, 0, sizeof(float) * m->block_offset[split]);
    memset(G + m->aux_offset[split], 0, sizeof(float) * m->aux_count[split]);
    blocks_forward(m, P, ws, 0, split, x, B);
    head_forward(m, P, ws, split, B);
    if (act_out)
        memcpy(act_out, ws->act[split - 1], sizeof(float) * B * (size_t)m->profile.act_floats[split - 1]);
    if ((status = model_loss(ws->dhead, ws->head_logits, y, B, m->spec.classes, loss))) return status;
    head_backward(m, P, G, ws, split, B);
    blocks_backward(m, P, G, ws, 0, split, x, B);
    return HS_OK;
}

int model_grad_top(Model *m, ModelWorkspace *ws, int split, const float *act_in, const int *y, int B, double *loss)
{
    if (m->grads == NULL) return HS_E_INPUT;
    return model_grad_top_at(m, m->params, m->grads, ws, split, act_in, y, B, loss);
}

int model_grad_top_at(const Model *m, const float *P, float *G, ModelWorkspace *ws, int split, const float *act_in,
                      const int *y, int B, double *loss)
{
    int status = model_check_call(m, ws, y, B);
    if (status != HS_OK) return status;
    if (split < 1 || split >= m->n_blocks) return HS_E_INPUT;
    const int L = m->n_blocks;
    memset(G + m->block_offset[split], 0, sizeof(float) * (m->block_offset[L] - m->block_offset[split]));
    blocks_forward(m, P, ws, split, L, act_in, B);
    if ((status = model_loss(ws->dact[L - 1], ws->act[L - 1], y, B, m->spec.classes, loss))) return status;
    blocks_backward(m, P, G, ws, split, L, act_in, B);
    return HS_OK;
}

int model_grad_stage_at(const Model *m, const float *P, float *G, ModelWorkspace *ws, int stage, const float *x,
                        const int *y, int B, double *loss)
{
    int status = model_check_call(m, ws, y, B);
    if (status != HS_OK) return status;
    const int L = m->n_blocks, b = stage - 1;
    if (stage < 1 || stage > L) return HS_E_INPUT;
    memset(G + m->block_offset[b], 0, sizeof(float) * (m->block_offset[b + 1] - m->block_offset[b]));
    blocks_forward(m, P, ws, 0, stage, x, B);
    if (stage == L) {
        if ((status = model_loss(ws->dact[L - 1], ws->act[L - 1], y, B, m->spec.classes, loss))) return status;
    } else {
        memset(G + m->aux_offset[stage], 0, sizeof(float) * m->aux_count[stage]);
        head_forward(m, P, ws, stage, B);
        if ((status = model_loss(ws->dhead, ws->head_logits, y, B, m->spec.classes, loss))) return status;
        head_backward(m, P, G, ws, stage, B); /* into ws->dact[b] */
    }
    block_backward(m, P, G, ws, b, b == 0 ? x : ws->act[b - 1], NULL, B);
    return HS_OK;
}

/* ------------------------------------------------------------------ per sample */

size_t model_block_param_count(const Model *m) { return m->block_offset[m->n_blocks]; }

/* A view of ws restricted to sample j of a batched forward pass: every per-sample buffer
 * (activations, their gradients, pooling argmaxes) starts at row j, so a B = 1 backward
 * pass on it reads and writes only sample j's rows. The shared scratch (im2col, conv
 * plane) is used one sample at a time. */
static void model_sample_view(const Model *m, const ModelWorkspace *ws, int j, ModelWorkspace *view)
{
    *view = *ws;
    for (int b = 0; b < m->n_blocks; b++) {
        size_t floats = (size_t)m->profile.act_floats[b];
        view->act[b] = ws->act[b] + (size_t)j * floats;
        view->dact[b] = ws->dact[b] + (size_t)j * floats;
        if (b < 2 && ws->argmax[b]) view->argmax[b] = ws->argmax[b] + (size_t)j * floats;
    }
}

/* After blocks_forward over the batch: sample j's own gradient into G (blocks). */
static int model_sample_backward(const Model *m, const float *P, float *G, const ModelWorkspace *ws,
                                 const float *x, const int *y, int j)
{
    const int L = m->n_blocks;
    const size_t features = model_block_in_floats(m, 0);
    ModelWorkspace view;
    model_sample_view(m, ws, j, &view);
    /* dlogits of sample j's own loss, as a batch-1 pass computes them (not the batch's
     * mean-loss rows times B, which would round differently) */
    double loss = softmax_crossentropy(view.dact[L - 1], view.act[L - 1], y + j, 1, m->spec.classes, NULL);
    if (!isfinite(loss)) return HS_E_DIVERGED;
    memset(G, 0, sizeof(float) * m->block_offset[L]);
    blocks_backward(m, P, G, &view, 0, L, x + (size_t)j * features, 1);
    return HS_OK;
}

/* The batched forward pass and the batch's mean loss. */
static int model_samples_forward(const Model *m, const float *P, ModelWorkspace *ws, const float *x, const int *y,
                                 int B, double *loss)
{
    int status = model_check_call(m, ws, y, B);
    if (status != HS_OK) return status;
    const int L = m->n_blocks;
    blocks_forward(m, P, ws, 0, L, x, B);
    double value = softmax_crossentropy(NULL, ws->act[L - 1], y, B, m->spec.classes, NULL);
    if (loss) *loss = value;
    return isfinite(value) ? HS_OK : HS_E_DIVERGED;
}

int model_grad_samples_at(const Model *m, const float *P, float *grads, size_t stride, ModelWorkspace *ws,
                          const float *x, const int *y, int B, double *loss)
{
    if (stride < m->n_params) return HS_E_INPUT;
    int status = model_samples_forward(m, P, ws, x, y, B, loss);
    for (int j = 0; status == HS_OK && j < B; j++)
        status = model_sample_backward(m, P, grads + (size_t)j * stride, ws, x, y, j);
    return status;
}

int model_grad_clipped_at(const Model *m, const float *P, float *G, float *scratch, ModelWorkspace *ws,
                          const float *x, const int *y, int B, double threshold, double *loss, int *clipped)
{
    if (!(threshold > 0)) return HS_E_INPUT;
    const size_t count = m->block_offset[m->n_blocks];
    int over = 0;
    int status = model_samples_forward(m, P, ws, x, y, B, loss);
    if (status == HS_OK) memset(G, 0, sizeof(float) * count);
    for (int j = 0; status == HS_OK && j < B; j++) {
        status = model_sample_backward(m, P, scratch, ws, x, y, j);
        if (status != HS_OK) break;
        over += vec_clip_norm(scratch, count, threshold) > threshold;
        vec_axpy(G, 1.0f / (float)B, scratch, count);
    }
    if (clipped) *clipped = over;
    return status;
}

const float *model_forward(const Model *m, ModelWorkspace *ws, const float *x, int B)
{
    if (model_check_call(m, ws, NULL, B) != HS_OK) return NULL;
    blocks_infer(m, ws, x, B);
    return ws->act[m->n_blocks - 1];
}

int model_evaluate_batches(const Model *m, ModelWorkspace *ws, const Dataset *ds, int test_set, const int *indices,
                           int n, int first_batch, int n_batches, double *batch_loss, int *batch_correct)
{
    const int size = test_set ? ds->n_test : ds->n_train;
    const int features = m->spec.in_channels * m->spec.in_height * m->spec.in_width;
    if (ds->features != features || ds->classes > m->spec.classes || !model_same_shape(&m->spec, &ws->spec) ||
        n <= 0 || (!indices && n > size))
        return HS_E_INPUT;
    for (int k = 0; k < n_batches; k++) {
        int start = (first_batch + k) * ws->batch;
        if (start >= n) return HS_E_INPUT;
        int B = n - start < ws->batch ? n - start : ws->batch;
        if (indices)
            dataset_gather(ds, test_set, indices + start, B, ws->x, ws->y);
        else
            dataset_gather_range(ds, test_set, start, B, ws->x, ws->y);
        blocks_infer(m, ws, ws->x, B);
        batch_loss[k] = softmax_crossentropy(NULL, ws->act[m->n_blocks - 1], ws->y, B, m->spec.classes,
                                             &batch_correct[k]);
    }
    return HS_OK;
}

void model_evaluate_sum(const double *batch_loss, const int *batch_correct, int n, int batch, double *loss,
                        double *accuracy)
{
    double total = 0.0;
    long right = 0;
    for (int k = 0; k * batch < n; k++) {
        int B = n - k * batch < batch ? n - k * batch : batch;
        total += batch_loss[k] * B;
        right += batch_correct[k];
    }
    if (loss) *loss = total / n;
    if (accuracy) *accuracy = (double)right / n;
}

int model_evaluate(const Model *m, ModelWorkspace *ws, const Dataset *ds, int test_set, const int *indices, int n,
                   double *loss, double *accuracy)
{
    if (n <= 0) {
        if (indices) return HS_E_INPUT;
        n = test_set ? ds->n_test : ds->n_train;
    }
    double total = 0.0;
    long right = 0;
    for (int batch = 0; batch * ws->batch < n; batch++) {
        double batch_loss;
        int correct;
        int status = model_evaluate_batches(m, ws, ds, test_set, indices, n, batch, 1, &batch_loss, &correct);
        if (status != HS_OK) return status;
        int B = n - batch * ws->batch < ws->batch ? n - batch * ws->batch : ws->batch;
        total += batch_loss * B;
        right += correct;
    }
    double mean = total / n;
    if (loss) *loss = mean;
    if (accuracy) *accuracy = (double)right / n;
    return isfinite(mean) ? HS_OK : HS_E_DIVERGED;
}
