/* model_spec.h — plain descriptions of a model, its optimiser and its data, as resolved
 * from a scenario's [model] and [data] sections, plus the model's analytic cost profile.
 * The simulator's cost model uses the profile, never its own estimates, so timing mode
 * and train mode agree on every FLOP. */
#ifndef MODEL_SPEC_H
#define MODEL_SPEC_H

#define MODEL_MAX_SIZES 16  /* MLP widths, input and output included */
#define MODEL_MAX_BLOCKS 64 /* blocks a model is cut into; splits lie between blocks (ResNet-110: 54) */

typedef enum { MODEL_ARCH_MLP = 0, MODEL_ARCH_CNN = 1, MODEL_ARCH_RESNET = 2 } ModelArch;

/* What runs a model's layers ([run] kernels): openblas is the reference, im2col +
 * OpenBLAS sgemm (kernels.c); onednn runs the CNN's conv blocks on oneDNN's direct
 * convolutions (conv_onednn.c), about 2x faster where OpenBLAS lacks the machine's
 * vector width, and every linear layer on oneDNN's sgemm; auto is onednn for a CNN when
 * hetsim is built with oneDNN, else openblas (model_kernels_resolve): an MLP and a ResNet
 * (whose convolutions are not on oneDNN yet) stay on the reference unless onednn is
 * asked for. The two paths agree to rounding, not bit for bit. winograd (opt-in) is onednn
 * with the CNN's 5x5 blocks of 8 or more input channels on Winograd F(4x4, 5x5), forward
 * and backward (conv_winograd.c): fewer multiplies, a larger rounding error. */
typedef enum { MODEL_KERNELS_AUTO = 0, MODEL_KERNELS_OPENBLAS, MODEL_KERNELS_ONEDNN, MODEL_KERNELS_WINOGRAD } ModelKernels;

typedef struct ModelSpec {
    ModelArch arch;
    /* Input shape (from the dataset): channels x height x width; an MLP flattens it. */
    int in_channels, in_height, in_width;
    int classes;
    /* MLP: sizes[0] = inputs, sizes[n_sizes-1] = classes. */
    int n_sizes;
    int sizes[MODEL_MAX_SIZES];
    /* CNN: two conv(k x k, same padding) + ReLU + 2x2 max-pool blocks, then linear
     * (hidden) + ReLU, then linear (classes). */
    int conv_channels[2];
    int kernel;
    int hidden;
    /* ResNet (CIFAR-style, He et al. 2016, section 4.2): depth = 6n + 2, a 3x3 stem conv,
     * then three stages of n BasicBlocks at base, 2 base, 4 base channels (the second and
     * third start with stride 2 and a 1x1 projection shortcut), global average pool,
     * linear. Every conv is followed by GroupNorm with norm_groups groups. */
    int depth;
    int base_channels; /* 16 x the [model] width multiplier */
    int norm_groups;
    int batch;
    ModelKernels kernels; /* the workspace's spec decides (model_workspace_create) */
} ModelSpec;

typedef enum { OPTIM_SGD = 0, OPTIM_MOMENTUM, OPTIM_ADAM, OPTIM_ADAMW } OptimKind;
typedef enum { SCHED_CONSTANT = 0, SCHED_STEP, SCHED_COSINE } ScheduleKind;

typedef struct OptimSpec {
    OptimKind kind;
    double lr;
    double momentum;      /* OPTIM_MOMENTUM */
    int nesterov;         /* OPTIM_MOMENTUM */
    double beta1, beta2, eps; /* Adam/AdamW */
    double weight_decay;  /* L2 for SGD/momentum/Adam, decoupled for AdamW */
    ScheduleKind schedule;
    double step_gamma;    /* SCHED_STEP: lr *= gamma every step_every rounds */
    int step_every;
    int warmup_rounds;    /* linear warm-up from lr/warmup to lr */
} OptimSpec;

/* The kinds of dataset.h; new kinds go at the end so stored values keep their meaning. */
typedef enum {
    DATA_FASHION_MNIST = 0,
    DATA_SYNTHETIC,
    DATA_CIFAR10,  /* the binary distribution's data_batch_{1..5}.bin, test_batch.bin */
    DATA_CIFAR100, /* train.bin, test.bin; label = fine or coarse */
    DATA_LEAF,     /* LEAF's JSON (FEMNIST): train/ and test/ folders, writers kept */
    DATA_NPY,      /* NumPy arrays: train_x.npy, train_y.npy, test_x.npy, test_y.npy */
} DatasetKind;
/* natural: each agent holds one writer of the data set, or a group of them (leaf). */
typedef enum { PART_IID = 0, PART_DIRICHLET, PART_SHARDS, PART_DOMAINS, PART_NATURAL } PartitionKind;
/* CIFAR-100's two labels: 100 fine classes or 20 coarse superclasses. */
typedef enum { DATA_LABEL_FINE = 0, DATA_LABEL_COARSE } DataLabel;
/* none: samples as read (bytes / 255, or the stored floats); train: per channel,
 * x = (x - mean) / std with the training set's mean and standard deviation. */
typedef enum { DATA_NORMALIZE_NONE = 0, DATA_NORMALIZE_TRAIN } DataNormalize;

#define DATA_MAX_DOMAINS 16

typedef struct DataSpec {
    DatasetKind dataset;
    char path[256];       /* folder of the data set's files ("": fashion-mnist's Debian folder) */
    DataLabel label;      /* cifar100 */
    DataNormalize normalize;
    /* augmentation of training batches (dataset_augment): random crop after zero padding
     * of crop_padding pixels on every side (0: none), horizontal flip with probability
     * 1/2 (flip = 1) */
    int crop_padding, flip;
    PartitionKind partition;
    double alpha;         /* dirichlet concentration */
    int shards_per_agent; /* shards */
    /* domains (federated domain generalization, see partition.h): image k of the
     * training (test) set belongs to domain k mod n_domains and is rotated by that
     * domain's angle; held-out domains are left out of training. */
    int n_domains;
    double domain_degrees[DATA_MAX_DOMAINS]; /* counter-clockwise rotation of each domain */
    int held_out[DATA_MAX_DOMAINS];          /* 1: a test domain, never trained on */
    double lambda;        /* heterogeneity: 1 every agent sees every domain alike, 0 one each */
    int test_samples;     /* held-out evaluation samples (0 = the whole test set) */
    /* synthetic Gaussian mixture */
    int features, classes, train_samples;
    /* synthetic: the features seen as a channels x height x width image (so convolutional
     * models run on them); 0,0,0 = a flat vector of features */
    int channels, height, width;
    double separation;
} DataSpec;

/* Analytic cost of one sample through each block, and what crosses each split.
 * Split m (1..n_blocks-1) cuts after block m; split 0 means "no offload". */
typedef struct ModelProfile {
    int n_blocks;
    double fwd_flops[MODEL_MAX_BLOCKS];  /* per sample */
    double bwd_flops[MODEL_MAX_BLOCKS];  /* per sample (input and weight gradients) */
    double params[MODEL_MAX_BLOCKS];     /* parameter count per block */
    double act_floats[MODEL_MAX_BLOCKS]; /* floats per sample leaving block m (index m-1) */
    double aux_flops[MODEL_MAX_BLOCKS];  /* fwd+bwd per sample of the auxiliary head at split m (index m) */
    double aux_params[MODEL_MAX_BLOCKS]; /* parameters of that head (index m) */
    double aux_fwd_flops[MODEL_MAX_BLOCKS]; /* the forward share of aux_flops (index m): a measured
                                             * profile (layer_profile.h) times a head's two passes */
    double total_flops;                  /* fwd+bwd per sample, whole model without heads */
    double total_params;
    double loss_flops;                   /* softmax cross-entropy per sample */
} ModelProfile;

/* Fills *profile for spec. Returns 0, or HS_E_INPUT if the spec is inconsistent. */
int model_profile(const ModelSpec *spec, ModelProfile *profile);

/* FLOPs of one training step (forward + backward + loss) of a batch on the full model. */
static inline double model_profile_step_flops(const ModelProfile *profile, int batch)
{
    return batch * (profile->total_flops + profile->loss_flops);
}

/* Parameter bytes of the whole model (float32). */
static inline double model_profile_bytes(const ModelProfile *profile)
{
    return 4.0 * profile->total_params;
}

/* Fraction of per-batch compute on the slow side (blocks 1..m + head m) and on the fast
 * side (blocks m+1..L) at split m; activation bytes per sample (float32 + 1 label byte
 * share is added by the caller). m = 0: fs = 1, ff = 0. */
double model_profile_slow_fraction(const ModelProfile *profile, int m);
double model_profile_fast_fraction(const ModelProfile *profile, int m);
double model_profile_split_bytes(const ModelProfile *profile, int m);

/* Progressive freezing at stage s (1..n_blocks; model.h model_grad_stage_at): FLOPs per
 * sample of blocks 1..s forward, block s backward, and the output module of split s
 * forward and backward unless s is the last block; the parameters trained and sent
 * (block s and head s). Frozen blocks cost their forward only, and nothing is sent for
 * them. 0 for a stage outside 1..n_blocks. */
double model_profile_stage_flops(const ModelProfile *profile, int stage);
double model_profile_stage_params(const ModelProfile *profile, int stage);

#endif
