/* fuzz_profile.c — libFuzzer target: any bytes as a measured compute profile
 * (models/layer_profile.h) read against a fixed model, a 3-block MLP at batch 2 (the
 * first byte picks the batch the scenario asks for, 1..4, so the batch check is reached
 * both ways). Every read either succeeds with rows that match the model (names, FLOPs,
 * positive finite seconds) or fails with a "p.csv..." message; none reads out of bounds
 * (ASan) or hangs. */
#include "models/layer_profile.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    ModelSpec spec = {.arch = MODEL_ARCH_MLP, .in_channels = 8, .in_height = 1, .in_width = 1, .classes = 3,
                      .n_sizes = 4, .sizes = {8, 6, 4, 3}, .batch = 2};
    int batch = 1 + data[0] % 4;
    LayerProfile p, want;
    HsDiag diag;
    hs_diag_clear(&diag);
    int status = layer_profile_parse("p.csv", (const char *)data + 1, size - 1, &spec, batch, &p, &diag);
    if (status != HS_OK) {
        if (strncmp(diag.message, "p.csv", 5) != 0) abort();
        if (p.n_layers != 0) abort();
        return 0;
    }
    if (layer_profile_expect(&spec, batch, &want) != HS_OK || p.n_layers != 3 || p.batch != batch) abort();
    for (int r = 0; r < layer_profile_rows(&p); r++) {
        if (strcmp(p.name[r], want.name[r]) != 0) abort();
        if (!(p.fwd_s[r] > 0) || !(p.bwd_s[r] > 0) || !isfinite(p.fwd_s[r]) || !isfinite(p.bwd_s[r])) abort();
        if (fabs(p.fwd_flops[r] - want.fwd_flops[r]) > LAYER_PROFILE_FLOPS_TOLERANCE * want.fwd_flops[r]) abort();
    }
    LayerTimes t;
    layer_profile_times(&p, &t);
    if (!(t.step_s > 0)) abort();
    return 0;
}
