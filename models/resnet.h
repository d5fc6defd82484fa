/* resnet.h — a CIFAR-style residual network (He et al., CVPR 2016, section 4.2) cut into
 * blocks, internal to models/ (model.c runs it behind model.h, model_profile.c counts it).
 *
 * depth = 6n + 2: a 3x3 stem conv, three stages of n BasicBlocks (two 3x3 convs) at
 * base, 2 base and 4 base channels, global average pool, linear. The first block of
 * stages 2 and 3 convolves with stride 2 and adds a 1x1 stride-2 projection of its input
 * (He et al.'s option B, as in the ComDML authors' code); the other blocks add their
 * input unchanged. Every conv (no bias) is followed by GroupNorm with norm_groups groups.
 *
 * Blocks (split points lie between them, one after every residual block but the last):
 * block b is residual block b + 1 of 3n; block 0 starts with the stem (conv, GroupNorm,
 * ReLU) and the last block ends with the classifier (global average pool, linear). The
 * heads of the splits are model.c's global average pool + linear.
 *
 * Parameters of a block, in order: [stem w (C0, Cin, 3, 3), gamma (C0), beta (C0)],
 * conv1 w (OC, IC, 3, 3), gamma1, beta1 (OC), conv2 w (OC, OC, 3, 3), gamma2, beta2,
 * [projection w (OC, IC, 1, 1), gamma, beta], [classifier w (classes, OC), b (classes)]. */
#ifndef MODELS_RESNET_H
#define MODELS_RESNET_H

#include "models/kernels.h"
#include "models/model_spec.h"

#include <gsl/gsl_rng.h>
#include <stddef.h>

typedef struct ResnetBlock {
    int in_c, in_h, in_w;    /* the residual block's input (block 0: the stem's output) */
    int out_c, out_h, out_w; /* its output */
    int stride;              /* of conv1 and of the projection */
    int stem_c;              /* block 0: channels of the model input (the stem's input); else 0 */
    int projection;          /* 1: 1x1 conv + GroupNorm shortcut, 0: identity */
    int classes;             /* last block: classifier outputs; else 0 */
    /* offsets of the layers inside the block's parameters */
    size_t o_stem, o_w1, o_g1, o_w2, o_g2, o_ws, o_gs, o_fc, count;
} ResnetBlock;

typedef struct ResnetShape {
    int n_blocks, groups;
    ResnetBlock block[MODEL_MAX_BLOCKS];
} ResnetShape;

/* Per-thread buffers of one batch: what the backward pass needs of each block's forward,
 * and scratch shared by all blocks. Views into one allocation of resnet_buffer_floats. */
typedef struct ResnetBuffers {
    float *stem_y, *stem_h;                 /* (B, C0, H, W): stem conv output, after GN + ReLU */
    float *y1[MODEL_MAX_BLOCKS];            /* (B, OC, OH, OW) conv1 output */
    float *h1[MODEL_MAX_BLOCKS];            /* ReLU(GN(y1)) */
    float *y2[MODEL_MAX_BLOCKS];            /* conv2 output */
    float *ys[MODEL_MAX_BLOCKS];            /* projection conv output (projection blocks) */
    float *stats[MODEL_MAX_BLOCKS];         /* (8, B, G): mean, rstd of stem, gn1, gn2, projection */
    float *res;                             /* (B, OC, OH, OW) last residual output, before the pool */
    float *gap;                             /* (B, OC) its pooled features */
    float *dz, *t1, *t2, *dstem, *dgap;     /* scratch gradients */
    float *col;                             /* im2col buffer of the largest conv */
    KernelsSgemm *gemm;                     /* the classifier's sgemm (the workspace's kernels) */
} ResnetBuffers;

/* Shapes of spec's network; HS_E_INPUT for a depth that is not 6n + 2 with 3n blocks
 * fitting MODEL_MAX_BLOCKS, base channels < 1, channels not divisible by the groups, or an
 * input smaller than 4 x 4. */
int resnet_shape(const ModelSpec *spec, ResnetShape *r);
size_t resnet_buffer_floats(const ResnetShape *r, int B);
void resnet_buffers_bind(const ResnetShape *r, int B, float *memory, ResnetBuffers *buf);
/* Initialises block b's parameters p: convs He-uniform U(+-sqrt(6/fan_in)), GroupNorm
 * gamma 1 and beta 0, the classifier U(+-1/sqrt(fan_in)) with bias 0, drawn in layout order. */
void resnet_block_init(const ResnetShape *r, int b, float *p, gsl_rng *rng);
/* Block b on in (B, block input), out (B, act_floats[b]); keeps what the backward needs. */
void resnet_block_forward(const ResnetShape *r, int b, const float *p, ResnetBuffers *buf, const float *in,
                          float *out, int B);
/* From dout, the gradient of out: g += parameter gradients; din += input gradient unless
 * din is NULL. Needs the buffers of the last forward of block b. */
void resnet_block_backward(const ResnetShape *r, int b, const float *p, float *g, ResnetBuffers *buf,
                           const float *in, const float *out, const float *dout, float *din, int B);

#endif
