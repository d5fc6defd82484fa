/* layer_profile.h — a measured compute profile: the forward and backward seconds of every
 * block (and every auxiliary head) of a model at one batch size on one host. `hetsim
 * profile SCENARIO` writes one (cli/cli_profile.c); `[model] profile = FILE` reads it, and
 * step times and ComDML's split fractions then come from its seconds instead of FLOP
 * counts (docs/cost-model.md, "Measured compute profiles").
 *
 * The file is CSV with '#' comment lines, so any CSV reader that skips comments takes it
 * (pandas.read_csv(path, comment='#')):
 *
 *   # hetsim layer profile
 *   # host: AMD EPYC 7B13
 *   # command: hetsim profile scenarios/quickstart.ini --repeat 9
 *   # model: mlp 784-128-10
 *   # kernels: openblas, 1 thread; median of 9 runs after 2 warm-up steps
 *   # batch: 32
 *   layer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s
 *   fc1,6431744,12859392,0.000101,0.000190,6.6e10
 *   fc2,82240,164160,2.1e-06,4.0e-06,4.0e10
 *   head1,82240,165760,2.5e-06,5.1e-06,3.3e10
 *
 * The reader takes '# batch: N' (required, once, before the header) and skips every other
 * comment (host, command, model and kernels are for people). Blank lines are skipped. The
 * header names the six columns above, in that order. Then one row per block of the model,
 * in order, named as layer_profile_expect names them (an MLP fc1..fcL; the CNN conv1,
 * conv2, fc1, fc2; a ResNet res1..resL, res1 with the stem, the last with the pooling and
 * the classifier), then one row per auxiliary head, head1..head(L-1) (head m is the local
 * loss of split m: what a ComDML offloader computes besides blocks 1..m). FLOPs are per
 * batch, as models/model_profile.c counts them (the last block's backward and each head's
 * include the softmax cross-entropy), and must be the scenario's model's to 1e-6 relative:
 * a profile of another model or batch is refused. Seconds are finite and > 0.
 * flops_per_s, (fwd_flops + bwd_flops) / (fwd_s + bwd_s), is written for people; the
 * reader accepts a number or an empty field there and does not use it. A profile measured
 * by another tool is imported by writing its seconds into the file `hetsim profile`
 * writes for the same scenario. Every error is HS_E_INPUT with "FILE:LINE: ...". */
#ifndef MODELS_LAYER_PROFILE_H
#define MODELS_LAYER_PROFILE_H

#include "base/hs_error.h"
#include "models/model_spec.h"

#include <stdio.h>

#define LAYER_PROFILE_MAX_ROWS (2 * MODEL_MAX_BLOCKS - 1)
#define LAYER_PROFILE_NAME 16
#define LAYER_PROFILE_MAX_BYTES (1 << 20)
#define LAYER_PROFILE_FLOPS_TOLERANCE 1e-6

typedef struct LayerProfile {
    int n_layers; /* blocks L; rows 0..L-1 are the blocks, rows L..2L-2 heads 1..L-1 */
    int batch;
    char name[LAYER_PROFILE_MAX_ROWS][LAYER_PROFILE_NAME];
    double fwd_flops[LAYER_PROFILE_MAX_ROWS]; /* per batch */
    double bwd_flops[LAYER_PROFILE_MAX_ROWS];
    double fwd_s[LAYER_PROFILE_MAX_ROWS];
    double bwd_s[LAYER_PROFILE_MAX_ROWS];
} LayerProfile;

/* What a scenario keeps of a profile (Scenario.profile_times): n_layers = 0 without one. */
typedef struct LayerTimes {
    int n_layers;
    double layer_s[MODEL_MAX_BLOCKS]; /* block b's forward + backward */
    double head_s[MODEL_MAX_BLOCKS];  /* head of split m (index m), forward + backward; [0] = 0 */
    double step_s;                    /* the blocks' sum: one training step on the profiling host */
} LayerTimes;

static inline int layer_profile_rows(const LayerProfile *p) { return 2 * p->n_layers - 1; }

/* The rows spec has at batch: names and FLOPs, seconds 0. HS_E_INPUT for a spec
 * model_profile rejects or batch < 1. */
int layer_profile_expect(const ModelSpec *spec, int batch, LayerProfile *out);
/* A one-line description of spec's shape ("mlp 784-128-10") for the '# model:' line. */
void layer_profile_describe(const ModelSpec *spec, char *out, size_t size);

/* Writes p in the format above; the comment lines take host, command, model and kernels
 * as given (a newline in them is written as a space). */
void layer_profile_write(FILE *out, const LayerProfile *p, const char *host, const char *command, const char *model,
                         const char *kernels);

/* Reads path into *out and checks it against spec at batch (names, count, FLOPs, batch).
 * The file is read through base/input_file.h (a regular file of at most
 * LAYER_PROFILE_MAX_BYTES). */
int layer_profile_read(const char *path, const ModelSpec *spec, int batch, LayerProfile *out, HsDiag *diag);
/* The same on text already in memory (size bytes, not NUL-terminated); path names it in
 * messages. */
int layer_profile_parse(const char *path, const char *text, size_t size, const ModelSpec *spec, int batch,
                        LayerProfile *out, HsDiag *diag);

void layer_profile_times(const LayerProfile *p, LayerTimes *out);

/* ComDML's split fractions from measured times, as model_profile_slow_fraction and
 * model_profile_fast_fraction give them from FLOPs: the slow side of split m runs blocks
 * 1..m and head m, the fast side blocks m+1..L, each over a whole step's time. m = 0:
 * 1 and 0. */
double layer_times_slow_fraction(const LayerTimes *t, int m);
double layer_times_fast_fraction(const LayerTimes *t, int m);

#endif
