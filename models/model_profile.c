/* model_profile.c — analytic FLOPs and sizes per block for the MLP, the CNN and the ResNet.
 * Conventions: a multiply-add counts as 2 FLOPs; backward costs the input gradient plus
 * the weight gradient (2x forward for linear and conv layers); elementwise layers
 * (ReLU, pooling) cost one FLOP per element forward and one backward. GroupNorm costs 8
 * FLOPs per element forward (mean 1, squared deviation 3, normalise and affine 4, as
 * groupnorm_forward computes them) and 13 backward (the affine gradients 4, the group sums
 * 4, the input gradient 5); the residual sum + ReLU 2 forward and 2 backward (the mask,
 * and the shortcut's gradient added to the branch's). */
#include "models/model_spec.h"
#include "models/resnet.h"
#include "base/hs_error.h"

#include <string.h>

static void profile_add_linear(ModelProfile *p, int block, double in, double out)
{
    p->fwd_flops[block] += 2.0 * in * out + out;
    p->bwd_flops[block] += 4.0 * in * out + out;
    p->params[block] += in * out + out;
}

static void profile_add_elementwise(ModelProfile *p, int block, double elements)
{
    p->fwd_flops[block] += elements;
    p->bwd_flops[block] += elements;
}

static int profile_mlp(const ModelSpec *s, ModelProfile *p)
{
    if (s->n_sizes < 2 || s->n_sizes > MODEL_MAX_SIZES) return HS_E_INPUT;
    p->n_blocks = s->n_sizes - 1;
    for (int b = 0; b < p->n_blocks; b++) {
        double in = s->sizes[b], out = s->sizes[b + 1];
        profile_add_linear(p, b, in, out);
        if (b + 1 < p->n_blocks) profile_add_elementwise(p, b, out); /* ReLU */
        p->act_floats[b] = out;
    }
    for (int m = 1; m < p->n_blocks; m++) {
        double in = s->sizes[m], out = s->classes;
        p->aux_flops[m] = 6.0 * in * out + 2.0 * out;
        p->aux_fwd_flops[m] = 2.0 * in * out + out;
        p->aux_params[m] = in * out + out;
    }
    return HS_OK;
}

static int profile_cnn(const ModelSpec *s, ModelProfile *p)
{
    int c = s->in_channels, h = s->in_height, w = s->in_width, k = s->kernel;
    if (c <= 0 || h < 4 || w < 4 || k <= 0 || s->hidden <= 0) return HS_E_INPUT;
    p->n_blocks = 4;
    for (int b = 0; b < 2; b++) {
        double out_c = s->conv_channels[b];
        double conv_macs = (double)c * k * k * out_c * h * w;
        p->fwd_flops[b] += 2.0 * conv_macs + out_c * h * w;
        p->bwd_flops[b] += 4.0 * conv_macs + out_c * h * w;
        p->params[b] += (double)c * k * k * out_c + out_c;
        profile_add_elementwise(p, b, out_c * h * w); /* ReLU */
        profile_add_elementwise(p, b, out_c * h * w); /* 2x2 max-pool reads every input */
        c = (int)out_c;
        h /= 2;
        w /= 2;
        p->act_floats[b] = (double)c * h * w;
        /* auxiliary head after conv block b+1: global average pool + linear */
        p->aux_flops[b + 1] = 2.0 * c * h * w + 6.0 * c * s->classes + 2.0 * s->classes;
        p->aux_fwd_flops[b + 1] = (double)c * h * w + 2.0 * c * s->classes + s->classes;
        p->aux_params[b + 1] = (double)c * s->classes + s->classes;
    }
    double flat = (double)c * h * w;
    profile_add_linear(p, 2, flat, s->hidden);
    profile_add_elementwise(p, 2, s->hidden);
    p->act_floats[2] = s->hidden;
    p->aux_flops[3] = 6.0 * s->hidden * s->classes + 2.0 * s->classes;
    p->aux_fwd_flops[3] = 2.0 * s->hidden * s->classes + s->classes;
    p->aux_params[3] = (double)s->hidden * s->classes + s->classes;
    profile_add_linear(p, 3, s->hidden, s->classes);
    p->act_floats[3] = s->classes;
    return HS_OK;
}

/* conv without bias, K x K, C -> OC channels at an OH x OW output */
static void profile_add_conv(ModelProfile *p, int block, double C, double OC, double K, double OH, double OW)
{
    double macs = C * K * K * OC * OH * OW;
    p->fwd_flops[block] += 2.0 * macs;
    p->bwd_flops[block] += 4.0 * macs;
    p->params[block] += C * K * K * OC;
}

static void profile_add_groupnorm(ModelProfile *p, int block, double C, double HW)
{
    p->fwd_flops[block] += 8.0 * C * HW;
    p->bwd_flops[block] += 13.0 * C * HW;
    p->params[block] += 2.0 * C;
}

static int profile_resnet(const ModelSpec *s, ModelProfile *p)
{
    ResnetShape r;
    if (resnet_shape(s, &r) != HS_OK) return HS_E_INPUT;
    p->n_blocks = r.n_blocks;
    for (int b = 0; b < r.n_blocks; b++) {
        const ResnetBlock *k = &r.block[b];
        const double in_hw = (double)k->in_h * k->in_w, out_hw = (double)k->out_h * k->out_w;
        const double out = k->out_c * out_hw;
        if (k->stem_c) {
            profile_add_conv(p, b, k->stem_c, k->in_c, 3, k->in_h, k->in_w);
            profile_add_groupnorm(p, b, k->in_c, in_hw);
            profile_add_elementwise(p, b, k->in_c * in_hw);
        }
        profile_add_conv(p, b, k->in_c, k->out_c, 3, k->out_h, k->out_w);
        profile_add_groupnorm(p, b, k->out_c, out_hw);
        profile_add_elementwise(p, b, out); /* ReLU */
        profile_add_conv(p, b, k->out_c, k->out_c, 3, k->out_h, k->out_w);
        profile_add_groupnorm(p, b, k->out_c, out_hw);
        if (k->projection) {
            profile_add_conv(p, b, k->in_c, k->out_c, 1, k->out_h, k->out_w);
            profile_add_groupnorm(p, b, k->out_c, out_hw);
        }
        profile_add_elementwise(p, b, 2.0 * out); /* residual sum + ReLU */
        p->act_floats[b] = out;
        if (k->classes) {
            profile_add_elementwise(p, b, out); /* global average pool */
            profile_add_linear(p, b, k->out_c, k->classes);
            p->act_floats[b] = k->classes;
        } else {
            /* head of split b + 1: global average pool + linear */
            p->aux_flops[b + 1] = 2.0 * out + 6.0 * k->out_c * s->classes + 2.0 * s->classes;
            p->aux_fwd_flops[b + 1] = out + 2.0 * k->out_c * s->classes + s->classes;
            p->aux_params[b + 1] = (double)k->out_c * s->classes + s->classes;
        }
    }
    return HS_OK;
}

int model_profile(const ModelSpec *spec, ModelProfile *profile)
{
    memset(profile, 0, sizeof *profile);
    int status = spec->arch == MODEL_ARCH_MLP   ? profile_mlp(spec, profile)
                 : spec->arch == MODEL_ARCH_CNN ? profile_cnn(spec, profile)
                                                : profile_resnet(spec, profile);
    if (status != HS_OK) return status;
    for (int b = 0; b < profile->n_blocks; b++) {
        profile->total_flops += profile->fwd_flops[b] + profile->bwd_flops[b];
        profile->total_params += profile->params[b];
    }
    profile->loss_flops = 5.0 * spec->classes;
    return HS_OK;
}

static double profile_flops_through(const ModelProfile *p, int first, int last)
{
    double sum = 0;
    for (int b = first; b <= last; b++) sum += p->fwd_flops[b] + p->bwd_flops[b];
    return sum;
}

double model_profile_slow_fraction(const ModelProfile *p, int m)
{
    if (m <= 0) return 1.0;
    return (profile_flops_through(p, 0, m - 1) + p->aux_flops[m]) / p->total_flops;
}

double model_profile_fast_fraction(const ModelProfile *p, int m)
{
    if (m <= 0) return 0.0;
    return profile_flops_through(p, m, p->n_blocks - 1) / p->total_flops;
}

double model_profile_split_bytes(const ModelProfile *p, int m)
{
    if (m <= 0) return 0.0;
    return 4.0 * p->act_floats[m - 1];
}

double model_profile_stage_flops(const ModelProfile *p, int stage)
{
    if (stage < 1 || stage > p->n_blocks) return 0.0;
    double sum = p->bwd_flops[stage - 1];
    for (int b = 0; b < stage; b++) sum += p->fwd_flops[b];
    return stage < p->n_blocks ? sum + p->aux_flops[stage] : sum;
}

double model_profile_stage_params(const ModelProfile *p, int stage)
{
    if (stage < 1 || stage > p->n_blocks) return 0.0;
    return p->params[stage - 1] + (stage < p->n_blocks ? p->aux_params[stage] : 0.0);
}
