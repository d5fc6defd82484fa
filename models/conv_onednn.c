/* conv_onednn.c — convolutions on oneDNN's direct (JIT) kernels; see conv_onednn.h.
 *
 * Why oneDNN and not kernels of our own: on this project's reference machine (AMD Zen 5,
 * full-width AVX-512) Debian's OpenBLAS runs its Haswell (AVX2) sgemm, half the FMA
 * width, and im2col multiplies the padding zeros too; oneDNN's jit:avx512_core
 * convolutions reach ~85 % of the AVX-512 FMA peak on the useful multiply-adds of the
 * CNN's second convolution, in all three passes (docs/results/training-speed.md has the
 * figures). An AVX-512 sgemm of our own would still pay for im2col and the zeros.
 *
 * Per call: the weights are reordered from (OC, C, K, K) into the layouts the forward and
 * the backward-data kernels want (a few thousand floats), the batch runs in chunks of
 * CONV_ONEDNN_CHUNK samples and then one sample at a time; the CNN block's pooling reads
 * the blocked conv output directly (ReLU and max-pool in one pass, NCHW out) and its
 * backward writes the blocked gradient plane directly, so the full-resolution activation
 * never exists in NCHW. Gradients of weights and inputs are added into the caller's
 * buffers by reorders with a sum post-op (dst = src + dst, one rounding, as a loop of
 * += would do), chunk after chunk. */
#include "models/conv_onednn.h"

#include "base/hs_error.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef HS_HAVE_DNNL

int conv_onednn_available(void) { return 0; }
const char *conv_onednn_describe(void) { return ""; }
int conv_onednn_create_block(int C, int H, int W, int OC, int K, int max_batch, ConvOnednn **out)
{
    *out = NULL;
    return HS_E_INPUT;
}
int conv_onednn_create_plain(int C, int H, int W, int OC, int K, int S, int max_batch, ConvOnednn **out)
{
    *out = NULL;
    return HS_E_INPUT;
}
void conv_onednn_free(ConvOnednn *c) { (void)c; }
void conv_onednn_relu_pool_forward(ConvOnednn *c, float *out, int *argmax, const float *in, const float *w,
                                   const float *b, int B)
{
}
void conv_onednn_relu_pool_backward(ConvOnednn *c, float *din, float *dw, float *db, const float *dout,
                                    const float *out, const int *argmax, const float *in, const float *w, int B)
{
}
void conv_onednn_forward(ConvOnednn *c, float *out, const float *in, const float *w, int B) {}
void conv_onednn_backward(ConvOnednn *c, float *din, float *dw, const float *dout, const float *in,
                          const float *w, int B)
{
}

#else

#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdio.h>

/* libgomp's (oneDNN's CPU runtime in Debian); declared here so that no OpenMP compiler
 * flag is needed. */
void omp_set_num_threads(int n);

/* ---------------------------------------------------------------- engine and threads */

static dnnl_engine_t conv_engine;
static pthread_once_t conv_engine_once = PTHREAD_ONCE_INIT;
static char conv_description[96];

/* One thread of OpenMP inside whichever thread calls: oneDNN sizes its parallel regions by
 * omp_get_max_threads() when a primitive is created and when it runs, and that setting is
 * per thread. Set once per thread. */
static _Thread_local int conv_thread_ready;

static void conv_thread_setup(void)
{
    if (conv_thread_ready) return;
    omp_set_num_threads(1);
    conv_thread_ready = 1;
}

static const char *conv_isa_name(dnnl_cpu_isa_t isa)
{
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    default: return "other";
    }
}

static void conv_engine_init(void)
{
    conv_thread_setup();
    if (dnnl_engine_create(&conv_engine, dnnl_cpu, 0) != dnnl_success) {
        conv_engine = NULL;
        return;
    }
    const dnnl_version_t *v = dnnl_version();
    snprintf(conv_description, sizeof conv_description, "oneDNN %d.%d.%d (%s)", v->major, v->minor, v->patch,
             conv_isa_name(dnnl_get_effective_cpu_isa()));
}

int conv_onednn_available(void)
{
    pthread_once(&conv_engine_once, conv_engine_init);
    return conv_engine != NULL;
}

const char *conv_onednn_describe(void) { return conv_onednn_available() ? conv_description : ""; }

/* ---------------------------------------------------------------- layouts */

/* Where element (n, c, h, w) of a 4-d oneDNN tensor lives: n*sn + (c/blk)*sc + h*sh + w*sw
 * + c%blk. Covers nchw, nhwc and the channel-blocked nChw8c / nChw16c (padded channels
 * included), which is what oneDNN's convolutions choose for activations. */
typedef struct ConvLayout {
    ptrdiff_t sn, sc, sh, sw;
    int blk;
} ConvLayout;

static int conv_layout(const dnnl_memory_desc_t *md, ConvLayout *l)
{
    if (md->ndims != 4 || md->format_kind != dnnl_blocked || md->offset0 != 0) return 0;
    const dnnl_blocking_desc_t *bd = &md->format_desc.blocking;
    if (bd->inner_nblks == 0) l->blk = 1;
    else if (bd->inner_nblks == 1 && bd->inner_idxs[0] == 1) l->blk = (int)bd->inner_blks[0];
    else return 0;
    l->sn = (ptrdiff_t)bd->strides[0];
    l->sc = (ptrdiff_t)bd->strides[1];
    l->sh = (ptrdiff_t)bd->strides[2];
    l->sw = (ptrdiff_t)bd->strides[3];
    return 1;
}

/* ---------------------------------------------------------------- the object */

enum { CONV_USER_SRC, CONV_SRC, CONV_USER_DST, CONV_DST, CONV_USER_DSRC, CONV_DSRC, CONV_USER_W, CONV_WF,
       CONV_WB, CONV_DW, CONV_BIAS, CONV_DBIAS, CONV_SCRATCH, CONV_N_MEMORIES };

/* The primitives of one batch size n. A NULL reorder means the two layouts are the same,
 * and the user's buffer is bound directly. */
typedef struct ConvPass {
    int n;
    dnnl_primitive_t fwd, bwd_data, bwd_weights;
    dnnl_primitive_t src_in;   /* NCHW src -> the convolution's src */
    dnnl_primitive_t dst_out;  /* plain: the convolution's dst -> NCHW */
    dnnl_primitive_t ddst_in;  /* plain: NCHW diff_dst -> the convolution's */
    dnnl_primitive_t dsrc_out; /* the convolution's diff_src -> NCHW, adding */
    dnnl_primitive_t wf_in, wb_in; /* (OC, C, K, K) -> forward's / backward data's weights */
    dnnl_primitive_t dw_out;   /* diff weights -> (OC, C, K, K), adding */
    dnnl_memory_t mem[CONV_N_MEMORIES];
    ConvLayout dst_layout;     /* of the convolution's dst, = its diff_dst */
} ConvPass;

struct ConvOnednn {
    int C, H, W, OC, K, S, OH, OW;
    int pool;                  /* 1: the CNN block (bias, ReLU, pool); 0: plain */
    int n_passes;              /* pass[0]: chunks, pass[1]: single samples (absent if chunk = 1) */
    ConvPass pass[2];
    dnnl_stream_t stream;
    /* scratch shared by the passes (one runs at a time), sized for the larger */
    float *src, *dst, *dsrc, *wf, *wb, *dw, *dbias, *zero_bias;
    void *scratchpad;
};

static void conv_pass_free(ConvPass *p)
{
    dnnl_primitive_t *prims[] = {&p->fwd, &p->bwd_data, &p->bwd_weights, &p->src_in, &p->dst_out,
                                 &p->ddst_in, &p->dsrc_out, &p->wf_in, &p->wb_in, &p->dw_out};
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (*prims[i]) dnnl_primitive_destroy(*prims[i]), *prims[i] = NULL;
    for (int i = 0; i < CONV_N_MEMORIES; i++)
        if (p->mem[i]) dnnl_memory_destroy(p->mem[i]), p->mem[i] = NULL;
}

void conv_onednn_free(ConvOnednn *c)
{
    if (!c) return;
    for (int k = 0; k < 2; k++) conv_pass_free(&c->pass[k]);
    if (c->stream) dnnl_stream_destroy(c->stream);
    free(c->src), free(c->dst), free(c->dsrc), free(c->wf), free(c->wb), free(c->dw), free(c->dbias);
    free(c->zero_bias), free(c->scratchpad);
    free(c);
}

/* Sizes in bytes the passes need of each scratch buffer; the largest wins. */
typedef struct ConvNeeds {
    size_t src, dst, dsrc, wf, wb, dw, scratchpad;
} ConvNeeds;

static size_t conv_max(size_t a, size_t b) { return a > b ? a : b; }

/* A primitive attribute with a user-managed scratchpad, optionally adding into dst. */
static dnnl_primitive_attr_t conv_attr(int sum)
{
    dnnl_primitive_attr_t attr = NULL;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success) return NULL;
    if (dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) != dnnl_success) goto fail;
    if (sum) {
        dnnl_post_ops_t po = NULL;
        if (dnnl_post_ops_create(&po) != dnnl_success) goto fail;
        dnnl_status_t s = dnnl_post_ops_append_sum(po, 1.0f);
        if (s == dnnl_success) s = dnnl_primitive_attr_set_post_ops(attr, po);
        dnnl_post_ops_destroy(po);
        if (s != dnnl_success) goto fail;
    }
    return attr;
fail:
    dnnl_primitive_attr_destroy(attr);
    return NULL;
}

/* Creates the primitive of pd (consumed) and grows the scratchpad need. */
static int conv_make(dnnl_primitive_desc_t pd, dnnl_primitive_t *out, ConvNeeds *need)
{
    const dnnl_memory_desc_t *sp = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (sp) need->scratchpad = conv_max(need->scratchpad, dnnl_memory_desc_get_size(sp));
    dnnl_status_t s = dnnl_primitive_create(out, pd);
    dnnl_primitive_desc_destroy(pd);
    return s == dnnl_success ? HS_OK : HS_E_NOMEM;
}

/* A reorder from -> to, adding into to when sum; *out = NULL (and success) when the two
 * layouts are equal and no sum is asked. */
static int conv_reorder(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to, int sum, dnnl_primitive_t *out,
                        ConvNeeds *need)
{
    *out = NULL;
    if (!sum && dnnl_memory_desc_equal(from, to)) return HS_OK;
    dnnl_primitive_attr_t attr = conv_attr(sum);
    if (!attr) return HS_E_NOMEM;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t s = dnnl_reorder_primitive_desc_create(&pd, from, conv_engine, to, conv_engine, attr);
    dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success) return HS_E_INPUT;
    return conv_make(pd, out, need);
}

static int conv_memory(const dnnl_memory_desc_t *md, dnnl_memory_t *out)
{
    return dnnl_memory_create(out, md, conv_engine, DNNL_MEMORY_NONE) == dnnl_success ? HS_OK : HS_E_NOMEM;
}

static const dnnl_memory_desc_t *conv_query(const_dnnl_primitive_desc_t pd, dnnl_query_t what)
{
    return dnnl_primitive_desc_query_md(pd, what, 0);
}

/* The primitives and memory objects of batch size n. Activations take the layouts the
 * forward convolution picks (format "any"); the backward passes are asked for the same
 * ones, so one blocked buffer serves dst and diff_dst, src for both. */
static int conv_pass_create(ConvOnednn *c, ConvPass *p, int n, ConvNeeds *need)
{
    p->n = n;
    /* padding K/2 on both sides: oneDNN's output size (H + 2P - K) / S + 1 is then
     * conv2d_out_size's, and the taps are those of kernels_resnet.c's im2col */
    const int P = c->K / 2;
    dnnl_dims_t src_dims = {n, c->C, c->H, c->W}, w_dims = {c->OC, c->C, c->K, c->K}, b_dims = {c->OC};
    dnnl_dims_t dst_dims = {n, c->OC, c->OH, c->OW}, strides = {c->S, c->S}, pad_l = {P, P}, pad_r = {P, P};
    dnnl_memory_desc_t user_src, user_dst, user_w, bias, any_src, any_dst, any_w;
    if (dnnl_memory_desc_init_by_tag(&user_src, 4, src_dims, dnnl_f32, dnnl_nchw) ||
        dnnl_memory_desc_init_by_tag(&user_dst, 4, dst_dims, dnnl_f32, dnnl_nchw) ||
        dnnl_memory_desc_init_by_tag(&user_w, 4, w_dims, dnnl_f32, dnnl_oihw) ||
        dnnl_memory_desc_init_by_tag(&bias, 1, b_dims, dnnl_f32, dnnl_a) ||
        dnnl_memory_desc_init_by_tag(&any_src, 4, src_dims, dnnl_f32, dnnl_format_tag_any) ||
        dnnl_memory_desc_init_by_tag(&any_dst, 4, dst_dims, dnnl_f32, dnnl_format_tag_any) ||
        dnnl_memory_desc_init_by_tag(&any_w, 4, w_dims, dnnl_f32, dnnl_format_tag_any))
        return HS_E_INPUT;
    const dnnl_memory_desc_t *bias_md = c->pool ? &bias : NULL;
    dnnl_primitive_attr_t attr = conv_attr(0);
    if (!attr) return HS_E_NOMEM;
    int status = HS_E_INPUT;
    dnnl_primitive_desc_t fpd = NULL, dpd = NULL, wpd = NULL;
    dnnl_convolution_desc_t fd, dd, wd;
    if (dnnl_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct, &any_src, &any_w,
                                           bias_md, &any_dst, strides, pad_l, pad_r) ||
        dnnl_primitive_desc_create(&fpd, &fd, attr, conv_engine, NULL))
        goto done;
    dnnl_memory_desc_t src_md = *conv_query(fpd, dnnl_query_src_md), dst_md = *conv_query(fpd, dnnl_query_dst_md);
    /* the pooling and its backward address the blocked dst themselves: a layout they do
     * not know is replaced by plain NCHW */
    if (!conv_layout(&dst_md, &p->dst_layout)) {
        dnnl_primitive_desc_destroy(fpd), fpd = NULL;
        if (dnnl_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct, &any_src,
                                               &any_w, bias_md, &user_dst, strides, pad_l, pad_r) ||
            dnnl_primitive_desc_create(&fpd, &fd, attr, conv_engine, NULL))
            goto done;
        src_md = *conv_query(fpd, dnnl_query_src_md), dst_md = *conv_query(fpd, dnnl_query_dst_md);
        if (!conv_layout(&dst_md, &p->dst_layout)) goto done;
    }
    if (dnnl_convolution_backward_data_desc_init(&dd, dnnl_convolution_direct, &src_md, &any_w, &dst_md, strides,
                                                 pad_l, pad_r) ||
        dnnl_primitive_desc_create(&dpd, &dd, attr, conv_engine, fpd) ||
        dnnl_convolution_backward_weights_desc_init(&wd, dnnl_convolution_direct, &src_md, &any_w, bias_md, &dst_md,
                                                    strides, pad_l, pad_r) ||
        dnnl_primitive_desc_create(&wpd, &wd, attr, conv_engine, fpd))
        goto done;
    /* the backward passes must take the forward's activation layouts (they were asked for
     * them; a library that answered otherwise is refused rather than misread) */
    if (!dnnl_memory_desc_equal(conv_query(dpd, dnnl_query_diff_src_md), &src_md) ||
        !dnnl_memory_desc_equal(conv_query(dpd, dnnl_query_diff_dst_md), &dst_md) ||
        !dnnl_memory_desc_equal(conv_query(wpd, dnnl_query_src_md), &src_md) ||
        !dnnl_memory_desc_equal(conv_query(wpd, dnnl_query_diff_dst_md), &dst_md))
        goto done;
    const dnnl_memory_desc_t wf_md = *conv_query(fpd, dnnl_query_weights_md);
    const dnnl_memory_desc_t wb_md = *conv_query(dpd, dnnl_query_weights_md);
    const dnnl_memory_desc_t dw_md = *conv_query(wpd, dnnl_query_diff_weights_md);
    need->src = conv_max(need->src, dnnl_memory_desc_get_size(&src_md));
    need->dst = conv_max(need->dst, dnnl_memory_desc_get_size(&dst_md));
    need->dsrc = conv_max(need->dsrc, dnnl_memory_desc_get_size(&src_md));
    need->wf = conv_max(need->wf, dnnl_memory_desc_get_size(&wf_md));
    need->wb = conv_max(need->wb, dnnl_memory_desc_get_size(&wb_md));
    need->dw = conv_max(need->dw, dnnl_memory_desc_get_size(&dw_md));
    status = conv_make(fpd, &p->fwd, need);
    fpd = NULL;
    if (status == HS_OK) status = conv_make(dpd, &p->bwd_data, need);
    dpd = NULL;
    if (status == HS_OK) status = conv_make(wpd, &p->bwd_weights, need);
    wpd = NULL;
    if (status == HS_OK) status = conv_reorder(&user_src, &src_md, 0, &p->src_in, need);
    if (status == HS_OK && !c->pool) status = conv_reorder(&dst_md, &user_dst, 0, &p->dst_out, need);
    if (status == HS_OK && !c->pool) status = conv_reorder(&user_dst, &dst_md, 0, &p->ddst_in, need);
    if (status == HS_OK) status = conv_reorder(&src_md, &user_src, 1, &p->dsrc_out, need);
    if (status == HS_OK) status = conv_reorder(&user_w, &wf_md, 0, &p->wf_in, need);
    if (status == HS_OK) status = conv_reorder(&user_w, &wb_md, 0, &p->wb_in, need);
    if (status == HS_OK) status = conv_reorder(&dw_md, &user_w, 1, &p->dw_out, need);
    const dnnl_memory_desc_t *mds[CONV_N_MEMORIES] = {&user_src, &src_md, &user_dst, &dst_md, &user_src, &src_md,
                                                      &user_w, &wf_md, &wb_md, &dw_md, &bias, &bias, NULL};
    for (int i = 0; status == HS_OK && i < CONV_SCRATCH; i++) status = conv_memory(mds[i], &p->mem[i]);
done:
    if (fpd) dnnl_primitive_desc_destroy(fpd);
    if (dpd) dnnl_primitive_desc_destroy(dpd);
    if (wpd) dnnl_primitive_desc_destroy(wpd);
    dnnl_primitive_attr_destroy(attr);
    return status;
}

static int conv_alloc(void **p, size_t bytes)
{
    /* 64-byte aligned for the vector loads; at least one line so a pointer always exists */
    bytes = (bytes + 63) / 64 * 64;
    if (bytes == 0) bytes = 64;
    *p = aligned_alloc(64, bytes);
    if (*p) memset(*p, 0, bytes);
    return *p ? HS_OK : HS_E_NOMEM;
}

static int conv_create(int C, int H, int W, int OC, int K, int S, int pool, int max_batch, ConvOnednn **out)
{
    *out = NULL;
    if (C < 1 || H < 1 || W < 1 || OC < 1 || K < 1 || K % 2 == 0 || S < 1 || max_batch < 1) return HS_E_INPUT;
    if (!conv_onednn_available()) return HS_E_INPUT;
    conv_thread_setup();
    ConvOnednn *c = calloc(1, sizeof *c);
    if (!c) return HS_E_NOMEM;
    c->C = C, c->H = H, c->W = W, c->OC = OC, c->K = K, c->S = S, c->pool = pool;
    c->OH = (H + 2 * (K / 2) - K) / S + 1;
    c->OW = (W + 2 * (K / 2) - K) / S + 1;
    const int chunk = max_batch < CONV_ONEDNN_CHUNK ? max_batch : CONV_ONEDNN_CHUNK;
    c->n_passes = chunk > 1 ? 2 : 1;
    ConvNeeds need;
    memset(&need, 0, sizeof need);
    int status = dnnl_stream_create(&c->stream, conv_engine, dnnl_stream_default_flags) == dnnl_success
                     ? HS_OK
                     : HS_E_NOMEM;
    for (int k = 0; status == HS_OK && k < c->n_passes; k++)
        status = conv_pass_create(c, &c->pass[k], k == 0 ? chunk : 1, &need);
    if (status == HS_OK) status = conv_alloc((void **)&c->src, need.src);
    if (status == HS_OK) status = conv_alloc((void **)&c->dst, need.dst);
    if (status == HS_OK) status = conv_alloc((void **)&c->dsrc, need.dsrc);
    if (status == HS_OK) status = conv_alloc((void **)&c->wf, need.wf);
    if (status == HS_OK) status = conv_alloc((void **)&c->wb, need.wb);
    if (status == HS_OK) status = conv_alloc((void **)&c->dw, need.dw);
    if (status == HS_OK) status = conv_alloc((void **)&c->dbias, sizeof(float) * (size_t)OC);
    if (status == HS_OK) status = conv_alloc((void **)&c->zero_bias, sizeof(float) * (size_t)OC);
    if (status == HS_OK) status = conv_alloc(&c->scratchpad, need.scratchpad);
    /* scratch-backed memories point at their buffers once and for all */
    for (int k = 0; status == HS_OK && k < c->n_passes; k++) {
        ConvPass *p = &c->pass[k];
        void *fixed[CONV_N_MEMORIES] = {[CONV_SRC] = c->src, [CONV_DST] = c->dst, [CONV_DSRC] = c->dsrc,
                                        [CONV_WF] = c->wf, [CONV_WB] = c->wb, [CONV_DW] = c->dw,
                                        [CONV_DBIAS] = c->dbias};
        for (int i = 0; i < CONV_SCRATCH; i++)
            if (fixed[i] && dnnl_memory_set_data_handle(p->mem[i], fixed[i]) != dnnl_success) status = HS_E_NOMEM;
        dnnl_memory_desc_t sp;
        dnnl_dims_t bytes = {(dnnl_dim_t)(need.scratchpad ? need.scratchpad : 1)};
        if (status == HS_OK && (dnnl_memory_desc_init_by_tag(&sp, 1, bytes, dnnl_u8, dnnl_a) ||
                                dnnl_memory_create(&p->mem[CONV_SCRATCH], &sp, conv_engine, c->scratchpad)))
            status = HS_E_NOMEM;
    }
    if (status != HS_OK) {
        conv_onednn_free(c);
        return status;
    }
    *out = c;
    return HS_OK;
}

int conv_onednn_create_block(int C, int H, int W, int OC, int K, int max_batch, ConvOnednn **out)
{
    return conv_create(C, H, W, OC, K, 1, 1, max_batch, out);
}

int conv_onednn_create_plain(int C, int H, int W, int OC, int K, int S, int max_batch, ConvOnednn **out)
{
    return conv_create(C, H, W, OC, K, S, 0, max_batch, out);
}

/* ---------------------------------------------------------------- execution */

static int conv_bind(ConvPass *p, int which, const void *data)
{
    return dnnl_memory_set_data_handle(p->mem[which], (void *)data) == dnnl_success;
}

static int conv_exec(ConvOnednn *c, dnnl_primitive_t prim, int n, const dnnl_exec_arg_t *args)
{
    return dnnl_primitive_execute(prim, c->stream, n, args) == dnnl_success;
}

/* reorder from -> to of pass p (a NULL primitive: nothing to do) */
static int conv_move(ConvOnednn *c, ConvPass *p, dnnl_primitive_t reorder, int from, int to)
{
    if (!reorder) return 1;
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, p->mem[from]}, {DNNL_ARG_TO, p->mem[to]},
                              {DNNL_ARG_SCRATCHPAD, p->mem[CONV_SCRATCH]}};
    return conv_exec(c, reorder, 3, args);
}

/* The activation memory `mine` of pass p gets user data: copied in by `reorder`, or bound
 * directly when the layouts agree. */
static int conv_input(ConvOnednn *c, ConvPass *p, dnnl_primitive_t reorder, int user, int mine, const float *data,
                      float *scratch)
{
    if (!reorder) return conv_bind(p, mine, data);
    return conv_bind(p, mine, scratch) && conv_bind(p, user, data) && conv_move(c, p, reorder, user, mine);
}

/* The weights of pass p in the forward's and/or the backward data's layouts. */
static int conv_weights(ConvOnednn *c, ConvPass *p, const float *w, int forward, int backward_data)
{
    int ok = conv_bind(p, CONV_USER_W, w);
    if (forward)
        ok = ok && (p->wf_in ? conv_bind(p, CONV_WF, c->wf) && conv_move(c, p, p->wf_in, CONV_USER_W, CONV_WF)
                             : conv_bind(p, CONV_WF, w));
    if (backward_data)
        ok = ok && (p->wb_in ? conv_bind(p, CONV_WB, c->wb) && conv_move(c, p, p->wb_in, CONV_USER_W, CONV_WB)
                             : conv_bind(p, CONV_WB, w));
    return ok;
}

static void conv_poison(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = NAN;
}

/* The CNN block's ReLU and 2x2 max-pool of n samples of the blocked conv output (bias
 * already added by oneDNN): kernels.c's conv_pool_sample's expressions and comparisons,
 * so the same conv values give the same pooled values and argmaxes. Within a channel
 * block the lanes are innermost (contiguous in the blocked layout, a vector loop), and
 * are then scattered to their NCHW planes. */
static inline __attribute__((always_inline)) void conv_pool_blocked(const float *y, ConvLayout l, float *out,
                                                                    int *argmax, int n, int OC, int H, int W,
                                                                    const int blk)
{
    const int oh = H / 2, ow = W / 2;
    const size_t ohw = (size_t)oh * ow;
    for (int s = 0; s < n; s++)
        for (int cb = 0; cb * blk < OC; cb++) {
            const int lanes = OC - cb * blk < blk ? OC - cb * blk : blk;
            const float *plane = y + s * l.sn + cb * l.sc;
            float *dst = out + ((size_t)s * OC + (size_t)cb * blk) * ohw;
            int *arg = argmax + ((size_t)s * OC + (size_t)cb * blk) * ohw;
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++) {
                    const float *restrict p0 = plane + 2 * i * l.sh + 2 * j * l.sw, *restrict p1 = p0 + l.sh;
                    float m_lane[16];
                    int a_lane[16];
                    for (int k = 0; k < blk; k++) {
                        float a = p0[k], bb = p0[l.sw + k], c = p1[k], d = p1[l.sw + k];
                        a = a < 0.0f ? 0.0f : a;
                        bb = bb < 0.0f ? 0.0f : bb;
                        c = c < 0.0f ? 0.0f : c;
                        d = d < 0.0f ? 0.0f : d;
                        int t1 = bb > a;
                        float m = t1 ? bb : a;
                        int t2 = c > m;
                        m = t2 ? c : m;
                        int t3 = d > m;
                        m = t3 ? d : m;
                        m_lane[k] = m;
                        a_lane[k] = t3 * 3 + (1 - t3) * (t2 * 2 + (1 - t2) * t1);
                    }
                    const size_t at = (size_t)i * ow + j;
                    for (int k = 0; k < lanes; k++) {
                        dst[k * ohw + at] = m_lane[k];
                        arg[k * ohw + at] = a_lane[k];
                    }
                }
        }
}

static void conv_pool(const float *y, ConvLayout l, float *out, int *argmax, int n, int OC, int H, int W)
{
    if (l.blk == 16) conv_pool_blocked(y, l, out, argmax, n, OC, H, W, 16);
    else if (l.blk == 8) conv_pool_blocked(y, l, out, argmax, n, OC, H, W, 8);
    else if (l.blk == 1) conv_pool_blocked(y, l, out, argmax, n, OC, H, W, 1);
    else {
        /* any other block size of conv_layout's forms, one lane at a time */
        const int oh = H / 2, ow = W / 2;
        for (int s = 0; s < n; s++)
            for (int o = 0; o < OC; o++) {
                const float *plane = y + s * l.sn + (o / l.blk) * l.sc + o % l.blk;
                for (int i = 0; i < oh; i++)
                    for (int j = 0; j < ow; j++) {
                        const float *p0 = plane + 2 * i * l.sh + 2 * j * l.sw, *p1 = p0 + l.sh;
                        float a = p0[0], bb = p0[l.sw], c = p1[0], d = p1[l.sw];
                        a = a < 0.0f ? 0.0f : a;
                        bb = bb < 0.0f ? 0.0f : bb;
                        c = c < 0.0f ? 0.0f : c;
                        d = d < 0.0f ? 0.0f : d;
                        int t1 = bb > a;
                        float m = t1 ? bb : a;
                        int t2 = c > m;
                        m = t2 ? c : m;
                        int t3 = d > m;
                        m = t3 ? d : m;
                        const size_t at = (((size_t)s * OC + o) * oh + i) * ow + j;
                        out[at] = m;
                        argmax[at] = t3 * 3 + (1 - t3) * (t2 * 2 + (1 - t2) * t1);
                    }
            }
    }
}

/* The gradient of the conv output of n samples, in the blocked layout, from the pooled
 * gradient: each window's value at its argmax where the pooled output is positive, zero
 * everywhere else (kernels.c's conv_unpool_sample). */
static void conv_unpool(float *y, size_t bytes, ConvLayout l, const float *dout, const float *out,
                        const int *argmax, int n, int OC, int H, int W)
{
    memset(y, 0, bytes);
    const int oh = H / 2, ow = W / 2;
    for (int s = 0; s < n; s++)
        for (int o = 0; o < OC; o++) {
            float *plane = y + s * l.sn + (o / l.blk) * l.sc + o % l.blk;
            const size_t at = ((size_t)s * OC + o) * oh * ow;
            const float *g = dout + at, *v = out + at;
            const int *arg = argmax + at;
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++) {
                    const size_t k = (size_t)i * ow + j;
                    if (!(v[k] > 0.0f)) continue;
                    const int a = arg[k];
                    plane[(2 * i + (a >> 1)) * l.sh + (2 * j + (a & 1)) * l.sw] = g[k];
                }
        }
}

/* Samples [first, first + count) of the batch go through pass p, n at a time. */
typedef struct ConvSpan {
    ConvPass *p;
    int first, count;
} ConvSpan;

/* The batch cut into whole chunks (pass 0) and single samples (pass 1). */
static int conv_spans(ConvOnednn *c, int B, ConvSpan span[2])
{
    const int chunk = c->pass[0].n, whole = B / chunk * chunk;
    int k = 0;
    if (whole > 0) span[k++] = (ConvSpan){&c->pass[0], 0, whole};
    if (B > whole) span[k++] = (ConvSpan){&c->pass[1], whole, B - whole};
    return k;
}

void conv_onednn_relu_pool_forward(ConvOnednn *c, float *out, int *argmax, const float *in, const float *w,
                                   const float *b, int B)
{
    conv_thread_setup();
    const size_t in_floats = (size_t)c->C * c->H * c->W, pooled = (size_t)c->OC * (c->H / 2) * (c->W / 2);
    ConvSpan span[2];
    const int n_spans = conv_spans(c, B, span);
    int ok = 1;
    for (int k = 0; ok && k < n_spans; k++) {
        ConvPass *p = span[k].p;
        ok = conv_weights(c, p, w, 1, 0) && conv_bind(p, CONV_BIAS, b ? b : c->zero_bias);
        for (int s = span[k].first; ok && s < span[k].first + span[k].count; s += p->n) {
            ok = conv_input(c, p, p->src_in, CONV_USER_SRC, CONV_SRC, in + s * in_floats, c->src);
            dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, p->mem[CONV_SRC]},    {DNNL_ARG_WEIGHTS, p->mem[CONV_WF]},
                                      {DNNL_ARG_BIAS, p->mem[CONV_BIAS]},  {DNNL_ARG_DST, p->mem[CONV_DST]},
                                      {DNNL_ARG_SCRATCHPAD, p->mem[CONV_SCRATCH]}};
            ok = ok && conv_exec(c, p->fwd, 5, args);
            if (ok) conv_pool(c->dst, p->dst_layout, out + s * pooled, argmax + s * pooled, p->n, c->OC, c->H, c->W);
        }
    }
    ok = ok && dnnl_stream_wait(c->stream) == dnnl_success;
    if (!ok) conv_poison(out, (size_t)B * pooled);
}

/* Shared by both backward passes, once diff_dst (CONV_DST) holds the chunk's gradient:
 * weight (and bias) gradients added into dw (db), the input gradient into din. */
static int conv_backward_chunk(ConvOnednn *c, ConvPass *p, float *din, float *dw, float *db, const float *x)
{
    int ok = conv_input(c, p, p->src_in, CONV_USER_SRC, CONV_SRC, x, c->src);
    dnnl_exec_arg_t wargs[] = {{DNNL_ARG_SRC, p->mem[CONV_SRC]},
                               {DNNL_ARG_DIFF_DST, p->mem[CONV_DST]},
                               {DNNL_ARG_DIFF_WEIGHTS, p->mem[CONV_DW]},
                               {DNNL_ARG_SCRATCHPAD, p->mem[CONV_SCRATCH]},
                               {DNNL_ARG_DIFF_BIAS, p->mem[CONV_DBIAS]}};
    ok = ok && conv_exec(c, p->bwd_weights, c->pool ? 5 : 4, wargs);
    ok = ok && conv_bind(p, CONV_USER_W, dw) && conv_move(c, p, p->dw_out, CONV_DW, CONV_USER_W);
    if (ok && db)
        for (int o = 0; o < c->OC; o++) db[o] += c->dbias[o];
    if (!din) return ok;
    dnnl_exec_arg_t dargs[] = {{DNNL_ARG_DIFF_DST, p->mem[CONV_DST]},
                               {DNNL_ARG_WEIGHTS, p->mem[CONV_WB]},
                               {DNNL_ARG_DIFF_SRC, p->mem[CONV_DSRC]},
                               {DNNL_ARG_SCRATCHPAD, p->mem[CONV_SCRATCH]}};
    ok = ok && conv_bind(p, CONV_DSRC, c->dsrc) && conv_exec(c, p->bwd_data, 4, dargs);
    return ok && conv_bind(p, CONV_USER_DSRC, din) && conv_move(c, p, p->dsrc_out, CONV_DSRC, CONV_USER_DSRC);
}

void conv_onednn_relu_pool_backward(ConvOnednn *c, float *din, float *dw, float *db, const float *dout,
                                    const float *out, const int *argmax, const float *in, const float *w, int B)
{
    conv_thread_setup();
    const size_t in_floats = (size_t)c->C * c->H * c->W, pooled = (size_t)c->OC * (c->H / 2) * (c->W / 2);
    ConvSpan span[2];
    const int n_spans = conv_spans(c, B, span);
    int ok = 1;
    for (int k = 0; ok && k < n_spans; k++) {
        ConvPass *p = span[k].p;
        ok = conv_weights(c, p, w, 0, din != NULL) && conv_bind(p, CONV_DST, c->dst);
        const size_t plane_bytes = (size_t)p->n * p->dst_layout.sn * sizeof(float);
        for (int s = span[k].first; ok && s < span[k].first + span[k].count; s += p->n) {
            conv_unpool(c->dst, plane_bytes, p->dst_layout, dout + s * pooled, out + s * pooled,
                        argmax + s * pooled, p->n, c->OC, c->H, c->W);
            ok = conv_backward_chunk(c, p, din ? din + s * in_floats : NULL, dw, db, in + s * in_floats);
        }
    }
    ok = ok && dnnl_stream_wait(c->stream) == dnnl_success;
    if (!ok) {
        conv_poison(dw, (size_t)c->OC * c->C * c->K * c->K);
        if (db) conv_poison(db, (size_t)c->OC);
        if (din) conv_poison(din, (size_t)B * in_floats);
    }
}

void conv_onednn_forward(ConvOnednn *c, float *out, const float *in, const float *w, int B)
{
    conv_thread_setup();
    const size_t in_floats = (size_t)c->C * c->H * c->W, out_floats = (size_t)c->OC * c->OH * c->OW;
    ConvSpan span[2];
    const int n_spans = conv_spans(c, B, span);
    int ok = 1;
    for (int k = 0; ok && k < n_spans; k++) {
        ConvPass *p = span[k].p;
        ok = conv_weights(c, p, w, 1, 0);
        for (int s = span[k].first; ok && s < span[k].first + span[k].count; s += p->n) {
            float *y = out + s * out_floats;
            ok = conv_input(c, p, p->src_in, CONV_USER_SRC, CONV_SRC, in + s * in_floats, c->src);
            ok = ok && conv_bind(p, CONV_DST, p->dst_out ? c->dst : y);
            dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, p->mem[CONV_SRC]},
                                      {DNNL_ARG_WEIGHTS, p->mem[CONV_WF]},
                                      {DNNL_ARG_DST, p->mem[CONV_DST]},
                                      {DNNL_ARG_SCRATCHPAD, p->mem[CONV_SCRATCH]}};
            ok = ok && conv_exec(c, p->fwd, 4, args);
            ok = ok && (!p->dst_out || (conv_bind(p, CONV_USER_DST, y) &&
                                        conv_move(c, p, p->dst_out, CONV_DST, CONV_USER_DST)));
        }
    }
    ok = ok && dnnl_stream_wait(c->stream) == dnnl_success;
    if (!ok) conv_poison(out, (size_t)B * out_floats);
}

void conv_onednn_backward(ConvOnednn *c, float *din, float *dw, const float *dout, const float *in,
                          const float *w, int B)
{
    conv_thread_setup();
    const size_t in_floats = (size_t)c->C * c->H * c->W, out_floats = (size_t)c->OC * c->OH * c->OW;
    ConvSpan span[2];
    const int n_spans = conv_spans(c, B, span);
    int ok = 1;
    for (int k = 0; ok && k < n_spans; k++) {
        ConvPass *p = span[k].p;
        ok = conv_weights(c, p, w, 0, din != NULL);
        for (int s = span[k].first; ok && s < span[k].first + span[k].count; s += p->n) {
            ok = conv_input(c, p, p->ddst_in, CONV_USER_DST, CONV_DST, dout + s * out_floats, c->dst);
            ok = ok && conv_backward_chunk(c, p, din ? din + s * in_floats : NULL, dw, NULL, in + s * in_floats);
        }
    }
    ok = ok && dnnl_stream_wait(c->stream) == dnnl_success;
    if (!ok) {
        conv_poison(dw, (size_t)c->OC * c->C * c->K * c->K);
        if (din) conv_poison(din, (size_t)B * in_floats);
    }
}

#endif
