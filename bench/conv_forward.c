/* conv_forward.c — the CNN's two convolutions (scenarios/central-cnn.ini: 1 -> 32 channels
 * at 28x28, 32 -> 64 at 14x14, kernel 5, same padding, bias) forward on oneDNN, for issue
 * #36's question whether the evaluation could run faster than the training's forward:
 * oneDNN's direct algorithm in forward_training (what models/conv_onednn.c runs, in chunks
 * of CONV_ONEDNN_CHUNK samples: the reference here) against other batch sizes,
 * forward_inference, and the Winograd and `auto` algorithms. Each configuration runs N
 * samples; the figure is the thread CPU time per 1,000 samples (median of REPS), with the
 * implementation oneDNN chose and whether its output (reordered to NCHW) is bitwise the
 * reference's: a configuration with other bits would change the evaluation's rows, so it
 * could only be an opt-in kernel choice. Then hetsim's own Winograd F(4x4, 5x5)
 * (models/conv_winograd.c, `[run] kernels = winograd`), forward and backward-data, with its
 * largest difference from the reference relative to the reference's largest value.
 * Prints figures, asserts nothing.
 *
 * Usage: bench/conv_forward [REPS] [N]   (defaults 3 and 2048) */
#include "bench/bench.h"
#include "models/conv_onednn.h"
#include "models/conv_winograd.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef HS_HAVE_DNNL

int main(void)
{
    printf("conv_forward: hetsim was built without oneDNN (DNNL=0); nothing to measure\n");
    return 0;
}

#else

#include <oneapi/dnnl/dnnl.h>

#define CONV_REPS_MAX 15

/* libgomp's: one OpenMP thread in this thread, as conv_onednn.c sets it */
void omp_set_num_threads(int n);

static dnnl_engine_t engine;
static dnnl_stream_t stream;


typedef struct Layer {
    int C, OC, H; /* square planes, kernel 5, stride 1, padding 2 */
} Layer;

typedef struct Config {
    const char *name;
    dnnl_prop_kind_t prop;
    dnnl_alg_kind_t alg;
    int mb;
} Config;

/* One configuration over n samples of x (NCHW): the output in NCHW into y, each
 * repetition's seconds into seconds[]. Returns 0, or -1 when oneDNN has no implementation
 * (its Winograd is for 3x3 kernels only). */
static int conv_run(const Layer *l, const Config *c, const float *x, const float *w, const float *b, int n, float *y,
                    int reps, double *seconds, const char **impl)
{
    const int mb = c->mb;
    dnnl_dims_t src_dims = {mb, l->C, l->H, l->H}, w_dims = {l->OC, l->C, 5, 5}, b_dims = {l->OC};
    dnnl_dims_t dst_dims = {mb, l->OC, l->H, l->H}, strides = {1, 1}, pad = {2, 2};
    dnnl_memory_desc_t user_src, user_w, user_dst, bias, any_src, any_w, any_dst;
    dnnl_memory_desc_init_by_tag(&user_src, 4, src_dims, dnnl_f32, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&user_w, 4, w_dims, dnnl_f32, dnnl_oihw);
    dnnl_memory_desc_init_by_tag(&user_dst, 4, dst_dims, dnnl_f32, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&bias, 1, b_dims, dnnl_f32, dnnl_a);
    dnnl_memory_desc_init_by_tag(&any_src, 4, src_dims, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&any_w, 4, w_dims, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&any_dst, 4, dst_dims, dnnl_f32, dnnl_format_tag_any);
    dnnl_convolution_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_convolution_forward_desc_init(&desc, c->prop, c->alg, &any_src, &any_w, &bias, &any_dst, strides, pad,
                                           pad) != dnnl_success ||
        dnnl_primitive_desc_create(&pd, &desc, NULL, engine, NULL) != dnnl_success)
        return -1;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, impl);
    const dnnl_memory_desc_t *src_md = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *w_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *dst_md = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    dnnl_primitive_t conv = NULL, src_in = NULL, w_in = NULL, dst_out = NULL;
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_create(&conv, pd);
    const size_t src_bytes = dnnl_memory_desc_get_size(src_md), dst_bytes = dnnl_memory_desc_get_size(dst_md);
    const size_t w_bytes = dnnl_memory_desc_get_size(w_md);
    float *src = aligned_alloc(64, (src_bytes + 63) / 64 * 64), *dst = aligned_alloc(64, (dst_bytes + 63) / 64 * 64);
    float *wk = aligned_alloc(64, (w_bytes + 63) / 64 * 64);
    dnnl_memory_t m_user_src, m_src, m_user_w, m_w, m_bias, m_dst, m_user_dst;
    dnnl_memory_create(&m_user_src, &user_src, engine, DNNL_MEMORY_NONE);
    dnnl_memory_create(&m_src, src_md, engine, src);
    dnnl_memory_create(&m_user_w, &user_w, engine, (void *)w);
    dnnl_memory_create(&m_w, w_md, engine, wk);
    dnnl_memory_create(&m_bias, &bias, engine, (void *)b);
    dnnl_memory_create(&m_dst, dst_md, engine, dst);
    dnnl_memory_create(&m_user_dst, &user_dst, engine, DNNL_MEMORY_NONE);
    const int same_src = dnnl_memory_desc_equal(&user_src, src_md);
    if (!same_src && dnnl_reorder_primitive_desc_create(&rpd, &user_src, engine, src_md, engine, NULL) == dnnl_success)
        dnnl_primitive_create(&src_in, rpd), dnnl_primitive_desc_destroy(rpd);
    if (dnnl_reorder_primitive_desc_create(&rpd, &user_w, engine, w_md, engine, NULL) == dnnl_success)
        dnnl_primitive_create(&w_in, rpd), dnnl_primitive_desc_destroy(rpd);
    if (dnnl_reorder_primitive_desc_create(&rpd, dst_md, engine, &user_dst, engine, NULL) == dnnl_success)
        dnnl_primitive_create(&dst_out, rpd), dnnl_primitive_desc_destroy(rpd);
    dnnl_exec_arg_t w_args[] = {{DNNL_ARG_FROM, m_user_w}, {DNNL_ARG_TO, m_w}};
    dnnl_primitive_execute(w_in, stream, 2, w_args);
    const size_t in_floats = (size_t)l->C * l->H * l->H, out_floats = (size_t)l->OC * l->H * l->H;
    for (int r = 0; r < reps; r++) {
        double time = 0;
        for (int s = 0; s + mb <= n; s += mb) {
            double start = bench_thread_seconds();
            if (same_src) {
                dnnl_memory_set_data_handle(m_src, (void *)(x + (size_t)s * in_floats));
            } else {
                dnnl_memory_set_data_handle(m_user_src, (void *)(x + (size_t)s * in_floats));
                dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, m_user_src}, {DNNL_ARG_TO, m_src}};
                dnnl_primitive_execute(src_in, stream, 2, args);
            }
            dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, m_src},
                                      {DNNL_ARG_WEIGHTS, m_w},
                                      {DNNL_ARG_BIAS, m_bias},
                                      {DNNL_ARG_DST, m_dst}};
            dnnl_primitive_execute(conv, stream, 4, args);
            dnnl_stream_wait(stream);
            time += bench_thread_seconds() - start;
            /* the NCHW copy for the comparison, outside the clock */
            dnnl_memory_set_data_handle(m_user_dst, y + (size_t)s * out_floats);
            dnnl_exec_arg_t out_args[] = {{DNNL_ARG_FROM, m_dst}, {DNNL_ARG_TO, m_user_dst}};
            dnnl_primitive_execute(dst_out, stream, 2, out_args);
            dnnl_stream_wait(stream);
        }
        seconds[r] = time;
    }
    dnnl_primitive_t prims[] = {conv, src_in, w_in, dst_out};
    for (int i = 0; i < 4; i++)
        if (prims[i]) dnnl_primitive_destroy(prims[i]);
    dnnl_memory_t mems[] = {m_user_src, m_src, m_user_w, m_w, m_bias, m_dst, m_user_dst};
    for (int i = 0; i < 7; i++) dnnl_memory_destroy(mems[i]);
    dnnl_primitive_desc_destroy(pd);
    free(src), free(dst), free(wk);
    return 0;
}

/* hetsim's Winograd on n samples in batches of mb: forward (backward 0), backward-data
 * (1: dout = x, into y zeroed first) or backward-weights (2: dout = x, the input y, into
 * dw), each repetition's seconds into seconds[]; the forward's bias is added outside the
 * clock, for the comparison. */
static int wino_run(const Layer *l, int backward, const float *x, const float *w, const float *b, int n, int mb,
                    float *y, int reps, double *seconds)
{
    ConvWinograd *c = NULL;
    if (conv_winograd_create(l->C, l->H, l->H, l->OC, 5, mb, &c) != 0) return -1;
    const size_t hw = (size_t)l->H * l->H, in_floats = (size_t)l->C * hw, out_floats = (size_t)l->OC * hw;
    for (int r = 0; r < reps; r++) {
        if (backward == 1) memset(y, 0, sizeof(float) * n * in_floats);
        float dw[64 * 32 * 25];
        double start = bench_thread_seconds();
        for (int s = 0; s + mb <= n; s += mb) {
            if (backward == 2)
                conv_winograd_backward_weights(c, dw, x + (size_t)s * out_floats, y + (size_t)s * in_floats, mb);
            else if (backward)
                conv_winograd_backward_data(c, y + (size_t)s * in_floats, x + (size_t)s * out_floats, w, mb);
            else
                conv_winograd_forward(c, y + (size_t)s * out_floats, x + (size_t)s * in_floats, w, mb);
        }
        seconds[r] = bench_thread_seconds() - start;
    }
    if (!backward)
        for (size_t i = 0; i < (size_t)n * l->OC; i++)
            for (size_t p = 0; p < hw; p++) y[i * hw + p] += b[i % l->OC];
    conv_winograd_free(c);
    return 0;
}

static double max_difference(const float *a, const float *ref, size_t n)
{
    double worst = 0, top = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - ref[i]);
        if (!(d <= worst)) worst = d;
        if (fabs(ref[i]) > top) top = fabs(ref[i]);
    }
    return top > 0 ? worst / top : worst;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 3, n = argc > 2 ? atoi(argv[2]) : 2048;
    if (reps < 1) reps = 1;
    if (reps > CONV_REPS_MAX) reps = CONV_REPS_MAX;
    if (n < 128) n = 128;
    n -= n % 128; /* whole batches of every size below */
    omp_set_num_threads(1);
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) != dnnl_success) {
        printf("conv_forward: oneDNN's CPU engine does not start\n");
        return 0;
    }
    printf("the CNN's convolutions forward on %s, %d samples, thread CPU ms per 1,000 samples (median of %d);\n"
           "`same bits`: the NCHW output equals the reference's (direct, forward_training, batch %d)\n",
           conv_onednn_describe(), n, reps, CONV_ONEDNN_CHUNK);
    static const Layer layers[] = {{1, 32, 28}, {32, 64, 14}};
    static const Config configs[] = {
        {"direct, training", dnnl_forward_training, dnnl_convolution_direct, CONV_ONEDNN_CHUNK},
        {"direct, training", dnnl_forward_training, dnnl_convolution_direct, 1},
        {"direct, training", dnnl_forward_training, dnnl_convolution_direct, 64},
        {"direct, inference", dnnl_forward_inference, dnnl_convolution_direct, 1},
        {"direct, inference", dnnl_forward_inference, dnnl_convolution_direct, CONV_ONEDNN_CHUNK},
        {"direct, inference", dnnl_forward_inference, dnnl_convolution_direct, 64},
        {"direct, inference", dnnl_forward_inference, dnnl_convolution_direct, 128},
        {"auto, inference", dnnl_forward_inference, dnnl_convolution_auto, 64},
        {"winograd, inference", dnnl_forward_inference, dnnl_convolution_winograd, 64},
    };
    const int n_configs = (int)(sizeof configs / sizeof configs[0]);
    unsigned seed = 1;
    for (int k = 0; k < 2; k++) {
        const Layer *l = &layers[k];
        const size_t nx = (size_t)n * l->C * l->H * l->H, ny = (size_t)n * l->OC * l->H * l->H;
        const size_t nw = (size_t)l->OC * l->C * 25;
        float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw), *b = malloc(sizeof(float) * l->OC);
        float *ref = malloc(sizeof(float) * ny), *y = malloc(sizeof(float) * ny);
        for (size_t i = 0; i < nx; i++) x[i] = (float)(seed = seed * 1103515245u + 12345u) / 4294967296.0f;
        for (size_t i = 0; i < nw; i++) w[i] = (float)(seed = seed * 1103515245u + 12345u) / 4294967296.0f - 0.5f;
        for (int i = 0; i < l->OC; i++) b[i] = 0.01f * (float)i;
        printf("  conv %d -> %d channels at %dx%d, kernel 5:\n", l->C, l->OC, l->H, l->H);
        for (int c = 0; c < n_configs; c++) {
            double seconds[CONV_REPS_MAX];
            const char *impl = "";
            float *out = c == 0 ? ref : y;
            if (conv_run(l, &configs[c], x, w, b, n, out, reps, seconds, &impl) != 0) {
                printf("    %-20s batch %3d: no implementation in this oneDNN\n", configs[c].name, configs[c].mb);
                continue;
            }
            qsort(seconds, (size_t)reps, sizeof seconds[0], bench_compare_doubles);
            const int same = c == 0 || memcmp(out, ref, sizeof(float) * ny) == 0;
            printf("    %-20s batch %3d: %7.1f ms  %-22s %s\n", configs[c].name, configs[c].mb,
                   1000.0 * seconds[reps / 2] * 1000.0 / n, impl, same ? "same bits" : "other bits");
        }
        for (int mb = 8; mb <= 64; mb *= 8) { /* as oneDNN's training batches above */
            double seconds[CONV_REPS_MAX];
            if (wino_run(l, 0, x, w, b, n, mb, y, reps, seconds) != 0) continue;
            qsort(seconds, (size_t)reps, sizeof seconds[0], bench_compare_doubles);
            printf("    %-20s batch %3d: %7.1f ms  %-22s max |diff| %.2g of max |ref|\n", "hetsim F(4x4,5x5)", mb,
                   1000.0 * seconds[reps / 2] * 1000.0 / n, "winograd (forward)", max_difference(y, ref, ny));
        }
        /* backward-data: dout = the first n outputs' worth of x-like data */
        float *dout = malloc(sizeof(float) * ny), *din = malloc(sizeof(float) * nx);
        for (size_t i = 0; i < ny; i++) dout[i] = (float)(seed = seed * 1103515245u + 12345u) / 4294967296.0f - 0.5f;
        double seconds[CONV_REPS_MAX];
        if (wino_run(l, 1, dout, w, b, n, 64, din, reps, seconds) == 0) {
            qsort(seconds, (size_t)reps, sizeof seconds[0], bench_compare_doubles);
            printf("    %-20s batch %3d: %7.1f ms  %-22s\n", "hetsim F(4x4,5x5)", 64,
                   1000.0 * seconds[reps / 2] * 1000.0 / n, "winograd (backward-data)");
        }
        if ((size_t)l->OC * l->C <= 64 * 32) {
            memcpy(din, x, sizeof(float) * nx);
            if (wino_run(l, 2, dout, w, b, n, 64, din, reps, seconds) == 0) {
                qsort(seconds, (size_t)reps, sizeof seconds[0], bench_compare_doubles);
                printf("    %-20s batch %3d: %7.1f ms  %-22s\n", "hetsim F(4x4,5x5)", 64,
                       1000.0 * seconds[reps / 2] * 1000.0 / n, "winograd (backward-weights)");
            }
        }
        free(dout), free(din);
        free(x), free(w), free(b), free(ref), free(y);
    }
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(engine);
    return 0;
}

#endif
