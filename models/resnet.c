/* resnet.c — shapes, buffers, initialisation and the forward/backward pass of one block
 * of the residual network of resnet.h, on the kernels of kernels.c and kernels_resnet.c.
 * A block keeps its conv outputs and its GroupNorm statistics for the backward pass
 * (three or four (B, OC, OH, OW) tensors per block); gradients inside a block go through
 * four scratch tensors shared by every block, so nothing is allocated per step. */
#include "models/resnet.h"

#include "base/hs_error.h"
#include "models/kernels.h"

#include <math.h>
#include <string.h>

int resnet_shape(const ModelSpec *s, ResnetShape *r)
{
    memset(r, 0, sizeof *r);
    if (s->depth < 8 || (s->depth - 2) % 6 != 0 || s->base_channels < 1 || s->norm_groups < 1) return HS_E_INPUT;
    if (s->in_channels < 1 || s->in_height < 4 || s->in_width < 4 || s->classes < 2) return HS_E_INPUT;
    const int n = (s->depth - 2) / 6;
    if (3 * n > MODEL_MAX_BLOCKS) return HS_E_INPUT;
    if (s->base_channels % s->norm_groups != 0) return HS_E_INPUT; /* 2x and 4x then divide too */
    r->n_blocks = 3 * n;
    r->groups = s->norm_groups;
    int c = s->base_channels, h = s->in_height, w = s->in_width;
    for (int b = 0; b < r->n_blocks; b++) {
        ResnetBlock *k = &r->block[b];
        const int stage = b / n, first = b % n == 0;
        k->in_c = c, k->in_h = h, k->in_w = w;
        k->stride = stage > 0 && first ? 2 : 1;
        k->out_c = s->base_channels << stage;
        k->out_h = conv2d_out_size(h, 3, k->stride);
        k->out_w = conv2d_out_size(w, 3, k->stride);
        k->projection = k->stride != 1 || k->in_c != k->out_c;
        k->stem_c = b == 0 ? s->in_channels : 0;
        k->classes = b == r->n_blocks - 1 ? s->classes : 0;
        size_t at = 0;
        k->o_stem = at;
        if (k->stem_c) at += (size_t)k->in_c * k->stem_c * 9 + 2 * (size_t)k->in_c;
        k->o_w1 = at;
        at += (size_t)k->out_c * k->in_c * 9;
        k->o_g1 = at;
        at += 2 * (size_t)k->out_c;
        k->o_w2 = at;
        at += (size_t)k->out_c * k->out_c * 9;
        k->o_g2 = at;
        at += 2 * (size_t)k->out_c;
        k->o_ws = at;
        if (k->projection) at += (size_t)k->out_c * k->in_c;
        k->o_gs = at;
        if (k->projection) at += 2 * (size_t)k->out_c;
        k->o_fc = at;
        if (k->classes) at += (size_t)k->classes * k->out_c + k->classes;
        k->count = at;
        c = k->out_c, h = k->out_h, w = k->out_w;
    }
    return HS_OK;
}

static size_t block_in_floats(const ResnetBlock *k) { return (size_t)k->in_c * k->in_h * k->in_w; }
static size_t block_out_floats(const ResnetBlock *k) { return (size_t)k->out_c * k->out_h * k->out_w; }

/* Largest per-sample tensor, conv column buffer and channel count over the blocks. */
static void resnet_maxima(const ResnetShape *r, size_t *tensor, size_t *col, size_t *channels)
{
    *tensor = *col = *channels = 0;
    for (int b = 0; b < r->n_blocks; b++) {
        const ResnetBlock *k = &r->block[b];
        size_t t = block_in_floats(k) > block_out_floats(k) ? block_in_floats(k) : block_out_floats(k);
        if (t > *tensor) *tensor = t;
        size_t cols[3] = {conv2d_strided_col_floats(k->in_c, k->in_h, k->in_w, 3, k->stride),
                          conv2d_strided_col_floats(k->out_c, k->out_h, k->out_w, 3, 1),
                          k->stem_c ? conv2d_strided_col_floats(k->stem_c, k->in_h, k->in_w, 3, 1) : 0};
        for (int i = 0; i < 3; i++)
            if (cols[i] > *col) *col = cols[i];
        if ((size_t)k->out_c > *channels) *channels = (size_t)k->out_c;
    }
}

size_t resnet_buffer_floats(const ResnetShape *r, int B)
{
    size_t tensor, col, channels, total = 0;
    resnet_maxima(r, &tensor, &col, &channels);
    const ResnetBlock *first = &r->block[0], *last = &r->block[r->n_blocks - 1];
    total += 2 * (size_t)B * block_in_floats(first);
    for (int b = 0; b < r->n_blocks; b++) {
        const ResnetBlock *k = &r->block[b];
        total += (size_t)B * block_out_floats(k) * (3 + (size_t)k->projection);
        total += 8 * (size_t)B * r->groups;
    }
    total += (size_t)B * block_out_floats(last) + (size_t)B * last->out_c;
    total += 4 * (size_t)B * tensor + (size_t)B * channels + col;
    return total;
}

void resnet_buffers_bind(const ResnetShape *r, int B, float *at, ResnetBuffers *buf)
{
    size_t tensor, col, channels;
    resnet_maxima(r, &tensor, &col, &channels);
    memset(buf, 0, sizeof *buf);
    const ResnetBlock *first = &r->block[0], *last = &r->block[r->n_blocks - 1];
    const size_t stem = (size_t)B * block_in_floats(first);
    buf->stem_y = at, at += stem;
    buf->stem_h = at, at += stem;
    for (int b = 0; b < r->n_blocks; b++) {
        const ResnetBlock *k = &r->block[b];
        const size_t n = (size_t)B * block_out_floats(k);
        buf->y1[b] = at, at += n;
        buf->h1[b] = at, at += n;
        buf->y2[b] = at, at += n;
        if (k->projection) buf->ys[b] = at, at += n;
        buf->stats[b] = at, at += 8 * (size_t)B * r->groups;
    }
    buf->res = at, at += (size_t)B * block_out_floats(last);
    buf->gap = at, at += (size_t)B * last->out_c;
    buf->dz = at, at += (size_t)B * tensor;
    buf->t1 = at, at += (size_t)B * tensor;
    buf->t2 = at, at += (size_t)B * tensor;
    buf->dstem = at, at += (size_t)B * tensor;
    buf->dgap = at, at += (size_t)B * channels;
    buf->col = at;
    buf->gemm = kernels_sgemm_openblas;
}

static float resnet_uniform(gsl_rng *rng, double bound)
{
    return (float)((2.0 * gsl_rng_uniform(rng) - 1.0) * bound);
}

static void init_uniform(float *p, size_t count, double bound, gsl_rng *rng)
{
    for (size_t i = 0; i < count; i++) p[i] = resnet_uniform(rng, bound);
}

/* gamma 1, beta 0 */
static void init_norm(float *p, int C)
{
    for (int c = 0; c < C; c++) p[c] = 1.0f, p[C + c] = 0.0f;
}

void resnet_block_init(const ResnetShape *r, int b, float *p, gsl_rng *rng)
{
    const ResnetBlock *k = &r->block[b];
    if (k->stem_c) {
        init_uniform(p + k->o_stem, (size_t)k->in_c * k->stem_c * 9, sqrt(6.0 / (k->stem_c * 9)), rng);
        init_norm(p + k->o_stem + (size_t)k->in_c * k->stem_c * 9, k->in_c);
    }
    init_uniform(p + k->o_w1, (size_t)k->out_c * k->in_c * 9, sqrt(6.0 / (k->in_c * 9)), rng);
    init_norm(p + k->o_g1, k->out_c);
    init_uniform(p + k->o_w2, (size_t)k->out_c * k->out_c * 9, sqrt(6.0 / (k->out_c * 9)), rng);
    init_norm(p + k->o_g2, k->out_c);
    if (k->projection) {
        init_uniform(p + k->o_ws, (size_t)k->out_c * k->in_c, sqrt(6.0 / k->in_c), rng);
        init_norm(p + k->o_gs, k->out_c);
    }
    if (k->classes) {
        init_uniform(p + k->o_fc, (size_t)k->classes * k->out_c, 1.0 / sqrt((double)k->out_c), rng);
        memset(p + k->o_fc + (size_t)k->classes * k->out_c, 0, sizeof(float) * k->classes);
    }
}

/* mean and rstd of GroupNorm layer i (0 stem, 1 conv1, 2 conv2, 3 projection) of a block */
static float *stat_mean(const ResnetShape *r, ResnetBuffers *buf, int b, int i, int B)
{
    return buf->stats[b] + (size_t)(2 * i) * B * r->groups;
}

static float *stat_rstd(const ResnetShape *r, ResnetBuffers *buf, int b, int i, int B)
{
    return buf->stats[b] + (size_t)(2 * i + 1) * B * r->groups;
}

void resnet_block_forward(const ResnetShape *r, int b, const float *p, ResnetBuffers *buf, const float *in,
                          float *out, int B)
{
    const ResnetBlock *k = &r->block[b];
    const int G = r->groups, in_hw = k->in_h * k->in_w, out_hw = k->out_h * k->out_w;
    const size_t n_in = (size_t)B * block_in_floats(k), n_out = (size_t)B * block_out_floats(k);
    const float *x = in;
    if (k->stem_c) {
        const float *w = p + k->o_stem, *gamma = w + (size_t)k->in_c * k->stem_c * 9;
        conv2d_strided_forward(buf->stem_y, in, w, buf->col, B, k->stem_c, k->in_h, k->in_w, k->in_c, 3, 1);
        groupnorm_forward(buf->stem_h, stat_mean(r, buf, b, 0, B), stat_rstd(r, buf, b, 0, B), buf->stem_y, gamma,
                          gamma + k->in_c, B, k->in_c, in_hw, G);
        relu_forward(buf->stem_h, buf->stem_h, n_in);
        x = buf->stem_h;
    }
    conv2d_strided_forward(buf->y1[b], x, p + k->o_w1, buf->col, B, k->in_c, k->in_h, k->in_w, k->out_c, 3, k->stride);
    groupnorm_forward(buf->h1[b], stat_mean(r, buf, b, 1, B), stat_rstd(r, buf, b, 1, B), buf->y1[b], p + k->o_g1,
                      p + k->o_g1 + k->out_c, B, k->out_c, out_hw, G);
    relu_forward(buf->h1[b], buf->h1[b], n_out);
    conv2d_strided_forward(buf->y2[b], buf->h1[b], p + k->o_w2, buf->col, B, k->out_c, k->out_h, k->out_w, k->out_c,
                           3, 1);
    float *o = k->classes ? buf->res : out;
    groupnorm_forward(o, stat_mean(r, buf, b, 2, B), stat_rstd(r, buf, b, 2, B), buf->y2[b], p + k->o_g2,
                      p + k->o_g2 + k->out_c, B, k->out_c, out_hw, G);
    const float *shortcut = x;
    if (k->projection) {
        conv2d_strided_forward(buf->ys[b], x, p + k->o_ws, buf->col, B, k->in_c, k->in_h, k->in_w, k->out_c, 1,
                               k->stride);
        groupnorm_forward(buf->t1, stat_mean(r, buf, b, 3, B), stat_rstd(r, buf, b, 3, B), buf->ys[b], p + k->o_gs,
                          p + k->o_gs + k->out_c, B, k->out_c, out_hw, G);
        shortcut = buf->t1;
    }
    residual_relu_forward(o, o, shortcut, n_out);
    if (k->classes) {
        avgpool_global_forward(buf->gap, o, B, k->out_c, out_hw);
        const float *w = p + k->o_fc;
        linear_forward_with(buf->gemm, out, buf->gap, w, w + (size_t)k->classes * k->out_c, B, k->out_c,
                            k->classes);
    }
}

void resnet_block_backward(const ResnetShape *r, int b, const float *p, float *g, ResnetBuffers *buf,
                           const float *in, const float *out, const float *dout, float *din, int B)
{
    const ResnetBlock *k = &r->block[b];
    const int G = r->groups, in_hw = k->in_h * k->in_w, out_hw = k->out_h * k->out_w;
    const size_t n_in = (size_t)B * block_in_floats(k), n_out = (size_t)B * block_out_floats(k);
    const float *o = out, *d_o = dout;
    if (k->classes) {
        const size_t nw = (size_t)k->classes * k->out_c;
        memset(buf->dgap, 0, sizeof(float) * B * k->out_c);
        linear_backward_with(buf->gemm, buf->dgap, g + k->o_fc, g + k->o_fc + nw, dout, buf->gap, p + k->o_fc, B,
                             k->out_c,
                        k->classes);
        memset(buf->t2, 0, sizeof(float) * n_out);
        avgpool_global_backward(buf->t2, buf->dgap, B, k->out_c, out_hw);
        o = buf->res;
        d_o = buf->t2;
    }
    /* dz: gradient of the sum, shared by the residual branch and the shortcut */
    residual_relu_backward(buf->dz, d_o, o, n_out);
    memset(buf->t1, 0, sizeof(float) * n_out);
    groupnorm_backward(buf->t1, g + k->o_g2, g + k->o_g2 + k->out_c, buf->dz, buf->y2[b],
                       stat_mean(r, buf, b, 2, B), stat_rstd(r, buf, b, 2, B), p + k->o_g2, B, k->out_c, out_hw, G);
    memset(buf->t2, 0, sizeof(float) * n_out);
    conv2d_strided_backward(buf->t2, g + k->o_w2, buf->t1, buf->h1[b], p + k->o_w2, buf->col, B, k->out_c, k->out_h,
                            k->out_w, k->out_c, 3, 1);
    relu_backward_inplace(buf->t2, buf->h1[b], n_out);
    memset(buf->t1, 0, sizeof(float) * n_out);
    groupnorm_backward(buf->t1, g + k->o_g1, g + k->o_g1 + k->out_c, buf->t2, buf->y1[b],
                       stat_mean(r, buf, b, 1, B), stat_rstd(r, buf, b, 1, B), p + k->o_g1, B, k->out_c, out_hw, G);
    const float *x = k->stem_c ? buf->stem_h : in;
    float *dx = k->stem_c ? buf->dstem : din; /* the caller zeroed din */
    if (k->stem_c) memset(buf->dstem, 0, sizeof(float) * n_in);
    conv2d_strided_backward(dx, g + k->o_w1, buf->t1, x, p + k->o_w1, buf->col, B, k->in_c, k->in_h, k->in_w,
                            k->out_c, 3, k->stride);
    if (k->projection) {
        memset(buf->t2, 0, sizeof(float) * n_out);
        groupnorm_backward(buf->t2, g + k->o_gs, g + k->o_gs + k->out_c, buf->dz, buf->ys[b],
                           stat_mean(r, buf, b, 3, B), stat_rstd(r, buf, b, 3, B), p + k->o_gs, B, k->out_c, out_hw,
                           G);
        conv2d_strided_backward(dx, g + k->o_ws, buf->t2, x, p + k->o_ws, buf->col, B, k->in_c, k->in_h, k->in_w,
                                k->out_c, 1, k->stride);
    } else if (dx) {
        for (size_t i = 0; i < n_in; i++) dx[i] += buf->dz[i];
    }
    if (k->stem_c) {
        const size_t nw = (size_t)k->in_c * k->stem_c * 9;
        const float *w = p + k->o_stem;
        relu_backward_inplace(buf->dstem, buf->stem_h, n_in);
        memset(buf->t1, 0, sizeof(float) * n_in);
        groupnorm_backward(buf->t1, g + k->o_stem + nw, g + k->o_stem + nw + k->in_c, buf->dstem, buf->stem_y,
                           stat_mean(r, buf, b, 0, B), stat_rstd(r, buf, b, 0, B), w + nw, B, k->in_c, in_hw, G);
        conv2d_strided_backward(din, g + k->o_stem, buf->t1, in, w, buf->col, B, k->stem_c, k->in_h, k->in_w,
                                k->in_c, 3, 1);
    }
}
