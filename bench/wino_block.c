/* wino_block.c — the CNN's second conv block (scenarios/central-cnn.ini: 32 -> 64 channels
 * at 14x14, kernel 5, bias, ReLU, 2x2 max-pool) on `[run] kernels = winograd`
 * (models/conv_winograd.c), forward and backward of one batch of 64 as a training step
 * runs them, for issue #36: the block's share of the CNN whole run. Between passes a 4 MB
 * buffer is swept, as the rest of a step would, so the chunks' buffers start out of the
 * L2 cache as they do in a run. The figures are thread CPU milliseconds per batch, the
 * minimum (the least disturbed by other processes on a shared machine) and the median of
 * REPS batches. Prints figures, asserts nothing.
 *
 * Usage: bench/wino_block [REPS]   (default 100, at most 1000) */
#include "bench/bench.h"
#include "models/conv_winograd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BLOCK_BATCH = 64, BLOCK_C = 32, BLOCK_OC = 64, BLOCK_SIDE = 14, BLOCK_REPS_MAX = 1000 };

/* uniform in [-scale, scale) from a fixed linear congruential sequence */
static void block_fill(float *x, size_t n, float scale, unsigned *state)
{
    for (size_t i = 0; i < n; i++) {
        *state = *state * 1664525u + 1013904223u;
        x[i] = scale * ((float)(*state >> 8) / (float)(1u << 24) * 2.0f - 1.0f);
    }
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 100;
    if (reps < 1 || reps > BLOCK_REPS_MAX) {
        fprintf(stderr, "wino_block: REPS must be 1..%d\n", BLOCK_REPS_MAX);
        return 2;
    }
    const int B = BLOCK_BATCH, C = BLOCK_C, OC = BLOCK_OC, H = BLOCK_SIDE;
    ConvWinograd *c = NULL;
    if (conv_winograd_create(C, H, H, OC, 5, B, &c) != 0) {
        printf("wino_block: no Winograd kernels in this build (oneDNN missing); nothing to measure\n");
        return 0;
    }
    const size_t nin = (size_t)B * C * H * H, nw = (size_t)OC * C * 25, npool = (size_t)B * OC * (H / 2) * (H / 2);
    const size_t sweep = (size_t)1 << 20;
    float *x = malloc(sizeof(float) * nin), *w = malloc(sizeof(float) * nw), *bias = malloc(sizeof(float) * OC);
    float *out = malloc(sizeof(float) * npool), *dout = malloc(sizeof(float) * npool);
    float *din = malloc(sizeof(float) * nin), *dw = calloc(nw, sizeof(float)), *db = calloc(OC, sizeof(float));
    float *other = calloc(sweep, sizeof(float));
    int *argmax = malloc(sizeof(int) * npool);
    double *forward = malloc(sizeof(double) * reps), *backward = malloc(sizeof(double) * reps);
    if (!x || !w || !bias || !out || !dout || !din || !dw || !db || !other || !argmax || !forward || !backward) {
        fprintf(stderr, "wino_block: out of memory\n");
        return 1;
    }
    unsigned state = 1;
    block_fill(x, nin, 1.0f, &state);
    block_fill(w, nw, 0.05f, &state);
    block_fill(bias, OC, 0.01f, &state);
    block_fill(dout, npool, 1.0f, &state);
    for (int r = 0; r < reps; r++) {
        for (size_t i = 0; i < sweep; i += 16) other[i] += 1.0f;
        double t0 = 1e3 * bench_thread_seconds();
        conv_winograd_relu_pool_forward(c, out, argmax, x, w, bias, B);
        forward[r] = 1e3 * bench_thread_seconds() - t0;
        for (size_t i = 0; i < sweep; i += 16) other[i] += 1.0f;
        t0 = 1e3 * bench_thread_seconds();
        conv_winograd_relu_pool_backward(c, din, dw, db, dout, out, argmax, x, w, B);
        backward[r] = 1e3 * bench_thread_seconds() - t0;
    }
    qsort(forward, reps, sizeof *forward, bench_compare_doubles);
    qsort(backward, reps, sizeof *backward, bench_compare_doubles);
    printf("conv block 32 -> 64 at 14x14, k5, batch %d, winograd (%d batches; thread CPU ms per batch)\n", B, reps);
    printf("  forward (conv, bias, ReLU, pool)      min %.3f  median %.3f\n", forward[0], forward[reps / 2]);
    printf("  backward (din, dw, db from the pool)  min %.3f  median %.3f\n", backward[0], backward[reps / 2]);
    conv_winograd_free(c);
    free(x), free(w), free(bias), free(out), free(dout), free(din), free(dw), free(db), free(other), free(argmax);
    free(forward), free(backward);
    return 0;
}
