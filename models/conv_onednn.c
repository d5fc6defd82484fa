/* conv_onednn.c — convolutions on oneDNN's direct (JIT) kernels; see conv_onednn.h.
 *
 * Why oneDNN and not kernels of our own: on this project's reference machine (AMD Zen 5,
 * full-width AVX-512) Debian's OpenBLAS runs its Haswell (AVX2) sgemm, half the FMA
 * width, and im2col multiplies the padding zeros too; oneDNN's jit:avx512_core
 * convolutions reach ~85 % of the AVX-512 FMA peak on the useful multiply-adds of the
 * CNN's second convolution, in all three passes (docs/results/cnn.md has the
 * figures). An AVX-512 sgemm of our own would still pay for im2col and the zeros.
 *
 * Per call: the weights are reordered from (OC, C, K, K) into the layouts the forward and
 * the backward-data kernels want (a few thousand floats), the batch runs in chunks of
 * CONV_ONEDNN_CHUNK samples and then one sample at a time; the CNN block's pooling reads
 * the blocked conv output directly (ReLU and max-pool in one pass, NCHW out) and its
 * backward writes the blocked gradient plane directly, so the full-resolution activation
 * never exists in NCHW. A call's weight (and bias) gradients are summed chunk after
 * chunk in the blocked layout (the first chunk written, the next ones added in order),
 * then added into the caller's buffer by one reorder with a sum post-op (dst = src + dst,
 * one rounding, as a loop of += would do); input gradients are added by such a reorder
 * chunk by chunk. The order of every sum depends on the batch size alone.
 * A CNN block linked to the next one (conv_onednn_link) also writes its pooled output in
 * the next convolution's blocked src layout, which that one then reads instead of
 * reordering the NCHW copy (the same values, so the same bits). */
#include "models/conv_onednn.h"

#include "base/hs_error.h"
#include "models/kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef HS_HAVE_DNNL

int conv_onednn_available(void) { return 0; }
void conv_onednn_sgemm(int trans_a, int trans_b, int M, int N, int K, const float *A, int lda, const float *B,
                       int ldb, float beta, float *C, int ldc)
{
    kernels_sgemm_openblas(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
}
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
                                    const int *argmax, const float *in, const float *w, int B)
{
}
void conv_onednn_set_vector(ConvOnednn *c, int on) {}
int conv_onednn_link(ConvOnednn *from, ConvOnednn *to, int max_batch) { return HS_E_INPUT; }
void conv_onednn_forget(ConvOnednn *c) {}
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

void conv_onednn_sgemm(int trans_a, int trans_b, int M, int N, int K, const float *A, int lda, const float *B,
                       int ldb, float beta, float *C, int ldc)
{
    conv_thread_setup();
    if (dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc) !=
        dnnl_success)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = NAN; /* see conv_onednn.h: errors poison */
}

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
    dnnl_memory_desc_t src_md; /* the convolution's src (and diff_src) */
    ConvLayout dst_layout;     /* of the convolution's dst, = its diff_dst */
} ConvPass;

struct ConvOnednn {
    int C, H, W, OC, K, S, OH, OW;
    int pool;                  /* 1: the CNN block (bias, ReLU, pool); 0: plain */
    int vector;                /* 1: the pooling's AVX-512 versions (conv_onednn_set_vector) */
    int n_passes;              /* pass[0]: chunks, pass[1]: single samples (absent if chunk = 1) */
    ConvPass pass[2];
    dnnl_stream_t stream;
    /* scratch shared by the passes (one runs at a time), sized for the larger; dw_acc and
     * db_acc add up a call's chunks before one reorder adds them into the caller's */
    float *src, *dst, *dsrc, *wf, *wb, *dw, *dbias, *dw_acc, *db_acc, *zero_bias;
    size_t dw_bytes;
    void *scratchpad;
    /* conv_onednn_link: the CNN block that feeds this one writes its pooled output here
     * too, in this convolution's src layout (nChw16c), for the whole batch: valid for the
     * input mirror_of at batch mirror_B (else NULL); feeds is the block fed. */
    float *mirror;
    size_t mirror_sample;      /* floats per sample */
    int mirror_capacity;       /* samples */
    const float *mirror_of;
    int mirror_B;
    ConvOnednn *feeds;
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
    free(c->dw_acc), free(c->db_acc), free(c->zero_bias), free(c->scratchpad), free(c->mirror);
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
    p->src_md = src_md;
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
    conv_onednn_set_vector(c, 1);
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
    if (status == HS_OK) status = conv_alloc((void **)&c->dw_acc, need.dw);
    if (status == HS_OK) status = conv_alloc((void **)&c->db_acc, sizeof(float) * (size_t)OC);
    c->dw_bytes = need.dw;
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

/* ---------------------------------------------------------------- the CNN block's pooling
 *
 * The forward's ReLU and 2x2 max-pool read the blocked conv output (bias already added by
 * oneDNN) and write the pooled values in NCHW, with kernels.c's conv2d_relu_pool_sample's
 * expressions and comparisons, so the same conv values give the same pooled values. The
 * argmax stays private to this file (only the backward here reads it, and model.c
 * addresses it by sample only): per sample, channel blocks of the layout's block size
 * (the last one shorter when the channels do not fill it), inside a block the pooled
 * positions row-major and innermost the block's channels, so that a vector of channels
 * is one store; each entry is the window position (0..3, row-major) of the first
 * maximum, or 4 where the pooled value is not positive (the ReLU closed: no gradient,
 * which is what kernels.c's backward decides from the pooled output). A block linked to
 * the next convolution (conv_onednn_link) also writes its pooled values in nChw16c for
 * it, padded channels 0.
 *
 * Each pass has a generic version (any conv_layout, plain loops: the naive twin) and an
 * AVX-512 one for nChw16c, taken when the processor has AVX-512F; the two give the same
 * bits (tests/check_models.c compares them). */

/* first maximum of a window after the ReLU, with conv2d_relu_pool_sample's comparisons; position
 * 4 when the maximum is 0 (no gradient passes) */
static inline float conv_window(float a, float bb, float c, float d, int *position)
{
    float m = kernels_relu_pool_window(a, bb, c, d, position);
    if (!(m > 0.0f)) *position = 4;
    return m;
}

/* mirror: NULL, or n samples of nChw16c (blocks of 16 channels, ohw positions each);
 * argmax: NULL for an inference pass (the values are the same, no position is kept) */
static void conv_pool_generic(const float *y, ConvLayout l, float *out, int *argmax, float *mirror, int n, int OC,
                              int H, int W)
{
    const int oh = H / 2, ow = W / 2;
    const size_t ohw = (size_t)oh * ow, blocks16 = ((size_t)OC + 15) / 16;
    if (mirror) memset(mirror, 0, sizeof(float) * (size_t)n * blocks16 * ohw * 16);
    for (int s = 0; s < n; s++)
        for (int cb = 0; cb * l.blk < OC; cb++) {
            const int lanes = OC - cb * l.blk < l.blk ? OC - cb * l.blk : l.blk;
            const size_t first = (size_t)s * OC + (size_t)cb * l.blk; /* channel, NCHW plane index */
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++)
                    for (int k = 0; k < lanes; k++) {
                        const float *p0 = y + s * l.sn + cb * l.sc + 2 * i * l.sh + 2 * j * l.sw + k;
                        const float *p1 = p0 + l.sh;
                        int position;
                        float m = conv_window(p0[0], p0[l.sw], p1[0], p1[l.sw], &position);
                        const size_t at = (size_t)i * ow + j, channel = (size_t)cb * l.blk + k;
                        out[(first + k) * ohw + at] = m;
                        if (argmax) argmax[first * ohw + at * lanes + k] = position;
                        if (mirror) mirror[(((size_t)s * blocks16 + channel / 16) * ohw + at) * 16 + channel % 16] = m;
                    }
        }
}

/* The gradient of the conv output of n samples in the blocked layout, from the pooled
 * gradient: each window's value at its argmax, zero everywhere else (dropped odd rows
 * and columns, and padded channels, included): kernels.c's conv2d_relu_unpool_sample. */
static void conv_unpool_generic(float *y, size_t bytes, ConvLayout l, const float *dout, const int *argmax, int n,
                                int OC, int H, int W)
{
    memset(y, 0, bytes);
    const int oh = H / 2, ow = W / 2;
    const size_t ohw = (size_t)oh * ow;
    for (int s = 0; s < n; s++)
        for (int cb = 0; cb * l.blk < OC; cb++) {
            const int lanes = OC - cb * l.blk < l.blk ? OC - cb * l.blk : l.blk;
            const size_t first = (size_t)s * OC + (size_t)cb * l.blk;
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++)
                    for (int k = 0; k < lanes; k++) {
                        const size_t at = (size_t)i * ow + j;
                        const int a = argmax[first * ohw + at * lanes + k];
                        if (a == 4) continue;
                        y[s * l.sn + cb * l.sc + (2 * i + (a >> 1)) * l.sh + (2 * j + (a & 1)) * l.sw + k] =
                            dout[(first + k) * ohw + at];
                    }
        }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CONV_AVX512 1

static int conv_has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

/* r[i] becomes column i of the 16 x 16 matrix whose rows were r[0..15] */
__attribute__((target("avx512f"))) static inline void conv_transpose16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            t[8 * i + k] = _mm512_shuffle_f32x4(r[8 * i + k], r[8 * i + 4 + k], 0x88);
            t[8 * i + 4 + k] = _mm512_shuffle_f32x4(r[8 * i + k], r[8 * i + 4 + k], 0xdd);
        }
    for (int k = 0; k < 8; k++) {
        r[k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
        r[8 + k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xdd);
    }
}

/* conv_pool_generic for nChw16c (argmax NULL alike): one window of 16 channels per
 * vector; the pooled values of up to 16 windows of a row are transposed in registers into
 * the channels' NCHW rows.
 * ReLU as max(0, x) with 0 first: MAXPS returns its second operand for a NaN or for two
 * zeros, so NaN and -0.0f pass as through `x < 0 ? 0 : x`. */
__attribute__((target("avx512f"))) static void conv_pool_avx512(const float *y, ConvLayout l, float *out,
                                                                int *argmax, float *mirror, int n, int OC, int H,
                                                                int W)
{
    const int oh = H / 2, ow = W / 2;
    const size_t ohw = (size_t)oh * ow, blocks = ((size_t)OC + 15) / 16;
    const __m512 zero = _mm512_setzero_ps();
    const __m512i one = _mm512_set1_epi32(1), two = _mm512_set1_epi32(2);
    const __m512i three = _mm512_set1_epi32(3), four = _mm512_set1_epi32(4);
    for (int s = 0; s < n; s++)
        for (int cb = 0; cb * 16 < OC; cb++) {
            const int lanes = OC - cb * 16 < 16 ? OC - cb * 16 : 16;
            const __mmask16 live = (__mmask16)(lanes == 16 ? 0xFFFFu : (1u << lanes) - 1u);
            const size_t first = (size_t)s * OC + (size_t)cb * 16;
            const float *plane = y + s * l.sn + cb * l.sc;
            float *copy = mirror ? mirror + ((size_t)s * blocks + cb) * ohw * 16 : NULL;
            for (int i = 0; i < oh; i++) {
                const float *r0 = plane + 2 * i * l.sh, *r1 = r0 + l.sh;
                for (int j0 = 0; j0 < ow; j0 += 16) {
                    const int count = ow - j0 < 16 ? ow - j0 : 16;
                    __m512 row[16];
                    for (int jj = 0; jj < count; jj++) {
                        const int j = j0 + jj;
                        const __m512 a = _mm512_max_ps(zero, _mm512_loadu_ps(r0 + 32 * j));
                        const __m512 b = _mm512_max_ps(zero, _mm512_loadu_ps(r0 + 32 * j + 16));
                        const __m512 c = _mm512_max_ps(zero, _mm512_loadu_ps(r1 + 32 * j));
                        const __m512 d = _mm512_max_ps(zero, _mm512_loadu_ps(r1 + 32 * j + 16));
                        const __mmask16 t1 = _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ);
                        __m512 m = _mm512_mask_blend_ps(t1, a, b);
                        const __mmask16 t2 = _mm512_cmp_ps_mask(c, m, _CMP_GT_OQ);
                        m = _mm512_mask_blend_ps(t2, m, c);
                        const __mmask16 t3 = _mm512_cmp_ps_mask(d, m, _CMP_GT_OQ);
                        m = _mm512_mask_blend_ps(t3, m, d);
                        const size_t at = (size_t)i * ow + j;
                        if (argmax) {
                            __m512i position = _mm512_maskz_mov_epi32(t1, one);
                            position = _mm512_mask_mov_epi32(position, t2, two);
                            position = _mm512_mask_mov_epi32(position, t3, three);
                            position = _mm512_mask_mov_epi32(position, _mm512_cmp_ps_mask(m, zero, _CMP_NGT_UQ), four);
                            _mm512_mask_storeu_epi32(argmax + first * ohw + at * lanes, live, position);
                        }
                        if (copy) _mm512_storeu_ps(copy + at * 16, _mm512_maskz_mov_ps(live, m));
                        row[jj] = m;
                    }
                    for (int jj = count; jj < 16; jj++) row[jj] = zero;
                    conv_transpose16(row);
                    const __mmask16 positions = (__mmask16)(count == 16 ? 0xFFFFu : (1u << count) - 1u);
                    for (int k = 0; k < lanes; k++)
                        _mm512_mask_storeu_ps(out + (first + k) * ohw + (size_t)i * ow + j0, positions, row[k]);
                }
            }
        }
}

/* conv_unpool_generic for nChw16c: the pooled gradient's rows of the block's channels are
 * transposed in registers into windows of 16 channels; each window stores its four
 * positions whole (the value where the argmax is, +0.0f elsewhere), so only the dropped
 * odd row and column need zeroing. */
__attribute__((target("avx512f"))) static void conv_unpool_avx512(float *y, ConvLayout l, const float *dout,
                                                                  const int *argmax, int n, int OC, int H, int W)
{
    const int oh = H / 2, ow = W / 2;
    const size_t ohw = (size_t)oh * ow;
    const __m512 zero = _mm512_setzero_ps();
    const __m512i p0 = _mm512_setzero_si512(), p1 = _mm512_set1_epi32(1), p2 = _mm512_set1_epi32(2);
    const __m512i p3 = _mm512_set1_epi32(3), four = _mm512_set1_epi32(4);
    for (int s = 0; s < n; s++)
        for (int cb = 0; cb * 16 < OC; cb++) {
            const int lanes = OC - cb * 16 < 16 ? OC - cb * 16 : 16;
            const __mmask16 live = (__mmask16)(lanes == 16 ? 0xFFFFu : (1u << lanes) - 1u);
            const size_t first = (size_t)s * OC + (size_t)cb * 16;
            float *plane = y + s * l.sn + cb * l.sc;
            for (int i = 0; i < oh; i++) {
                float *r0 = plane + 2 * i * l.sh, *r1 = r0 + l.sh;
                for (int j0 = 0; j0 < ow; j0 += 16) {
                    const int count = ow - j0 < 16 ? ow - j0 : 16;
                    const __mmask16 positions = (__mmask16)(count == 16 ? 0xFFFFu : (1u << count) - 1u);
                    __m512 g[16];
                    for (int k = 0; k < 16; k++)
                        g[k] = k < lanes ? _mm512_maskz_loadu_ps(positions, dout + (first + k) * ohw + (size_t)i * ow + j0)
                                         : zero;
                    conv_transpose16(g);
                    for (int jj = 0; jj < count; jj++) {
                        const int j = j0 + jj;
                        const size_t at = (size_t)i * ow + j;
                        const __m512i position = _mm512_mask_loadu_epi32(four, live, argmax + first * ohw + at * lanes);
                        _mm512_storeu_ps(r0 + 32 * j, _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(position, p0), g[jj]));
                        _mm512_storeu_ps(r0 + 32 * j + 16,
                                         _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(position, p1), g[jj]));
                        _mm512_storeu_ps(r1 + 32 * j, _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(position, p2), g[jj]));
                        _mm512_storeu_ps(r1 + 32 * j + 16,
                                         _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(position, p3), g[jj]));
                    }
                }
                if (W & 1) {
                    _mm512_storeu_ps(r0 + 16 * (W - 1), zero);
                    _mm512_storeu_ps(r1 + 16 * (W - 1), zero);
                }
            }
            if (H & 1)
                for (int w = 0; w < W; w++) _mm512_storeu_ps(plane + (H - 1) * l.sh + 16 * w, zero);
        }
}
#endif

/* the AVX-512 versions: nChw16c with rows of whole pixels (sw = 16) */
static int conv_pool_vector(const ConvOnednn *c, ConvLayout l)
{
#ifdef CONV_AVX512
    return c->vector && l.blk == 16 && l.sw == 16;
#else
    (void)c, (void)l;
    return 0;
#endif
}

void conv_onednn_set_vector(ConvOnednn *c, int on)
{
#ifdef CONV_AVX512
    c->vector = on && conv_has_avx512();
#else
    c->vector = 0;
    (void)on;
#endif
}

/* ---------------------------------------------------------------- linking two blocks */

int conv_onednn_link(ConvOnednn *from, ConvOnednn *to, int max_batch)
{
    if (!from->pool || from->feeds || to->mirror || from->OC != to->C || from->OH / 2 != to->H ||
        from->OW / 2 != to->W)
        return HS_E_INPUT;
    /* every pass of `to` must take its src in nChw16c, the layout the pooling writes */
    for (int k = 0; k < to->n_passes; k++) {
        dnnl_dims_t dims = {to->pass[k].n, to->C, to->H, to->W};
        dnnl_memory_desc_t blocked;
        if (dnnl_memory_desc_init_by_tag(&blocked, 4, dims, dnnl_f32, dnnl_aBcd16b) != dnnl_success ||
            !dnnl_memory_desc_equal(&blocked, &to->pass[k].src_md))
            return HS_E_INPUT;
    }
    to->mirror_sample = ((size_t)to->C + 15) / 16 * 16 * (size_t)to->H * to->W;
    int status = conv_alloc((void **)&to->mirror, sizeof(float) * to->mirror_sample * (size_t)max_batch);
    if (status != HS_OK) return status;
    to->mirror_capacity = max_batch;
    from->feeds = to;
    return HS_OK;
}

void conv_onednn_forget(ConvOnednn *c)
{
    if (c) c->mirror_of = NULL;
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

/* The src of samples [s, s + p->n) of the batch `in` of B samples: the feeding block's
 * nChw16c copy when it is the one of this input, else reordered from NCHW. */
static int conv_source(ConvOnednn *c, ConvPass *p, const float *in, int B, int s)
{
    if (c->mirror_of && c->mirror_of == in && c->mirror_B == B)
        return conv_bind(p, CONV_SRC, c->mirror + (size_t)s * c->mirror_sample);
    const size_t in_floats = (size_t)c->C * c->H * c->W;
    return conv_input(c, p, p->src_in, CONV_USER_SRC, CONV_SRC, in + (size_t)s * in_floats, c->src);
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
    const size_t pooled = (size_t)c->OC * (c->H / 2) * (c->W / 2);
    ConvOnednn *next = c->feeds && B <= c->feeds->mirror_capacity ? c->feeds : NULL;
    if (c->feeds) c->feeds->mirror_of = NULL; /* rewritten below */
    ConvSpan span[2];
    const int n_spans = conv_spans(c, B, span);
    int ok = 1;
    for (int k = 0; ok && k < n_spans; k++) {
        ConvPass *p = span[k].p;
        ok = conv_weights(c, p, w, 1, 0) && conv_bind(p, CONV_BIAS, b ? b : c->zero_bias);
        for (int s = span[k].first; ok && s < span[k].first + span[k].count; s += p->n) {
            ok = conv_source(c, p, in, B, s);
            dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, p->mem[CONV_SRC]},    {DNNL_ARG_WEIGHTS, p->mem[CONV_WF]},
                                      {DNNL_ARG_BIAS, p->mem[CONV_BIAS]},  {DNNL_ARG_DST, p->mem[CONV_DST]},
                                      {DNNL_ARG_SCRATCHPAD, p->mem[CONV_SCRATCH]}};
            ok = ok && conv_exec(c, p->fwd, 5, args);
            if (!ok) break;
            float *copy = next ? next->mirror + (size_t)s * next->mirror_sample : NULL;
#ifdef CONV_AVX512
            if (conv_pool_vector(c, p->dst_layout)) {
                conv_pool_avx512(c->dst, p->dst_layout, out + s * pooled, argmax ? argmax + s * pooled : NULL, copy,
                                 p->n, c->OC, c->H, c->W);
                continue;
            }
#endif
            conv_pool_generic(c->dst, p->dst_layout, out + s * pooled, argmax ? argmax + s * pooled : NULL, copy, p->n,
                              c->OC, c->H, c->W);
        }
    }
    ok = ok && dnnl_stream_wait(c->stream) == dnnl_success;
    if (!ok) {
        conv_poison(out, (size_t)B * pooled);
        return;
    }
    if (next) next->mirror_of = out, next->mirror_B = B;
}

/* The weight (and bias) gradients of one chunk, whose diff_dst is in CONV_DST and src in
 * CONV_SRC: the first chunk of a span straight into the accumulators, the others beside
 * and then added (in chunk order, so the sum depends on the batch size only). */
static int conv_weights_chunk(ConvOnednn *c, ConvPass *p, int first_chunk)
{
    float *dw = first_chunk ? c->dw_acc : c->dw, *dbias = first_chunk ? c->db_acc : c->dbias;
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, p->mem[CONV_SRC]},
                              {DNNL_ARG_DIFF_DST, p->mem[CONV_DST]},
                              {DNNL_ARG_DIFF_WEIGHTS, p->mem[CONV_DW]},
                              {DNNL_ARG_SCRATCHPAD, p->mem[CONV_SCRATCH]},
                              {DNNL_ARG_DIFF_BIAS, p->mem[CONV_DBIAS]}};
    if (!conv_bind(p, CONV_DW, dw) || !conv_bind(p, CONV_DBIAS, dbias) ||
        !conv_exec(c, p->bwd_weights, c->pool ? 5 : 4, args))
        return 0;
    if (!first_chunk) {
        float *restrict acc = c->dw_acc;
        const float *restrict add = c->dw;
        for (size_t i = 0; i < c->dw_bytes / sizeof(float); i++) acc[i] += add[i];
        if (c->pool)
            for (int o = 0; o < c->OC; o++) c->db_acc[o] += c->dbias[o];
    }
    return 1;
}

/* The end of a span: dw += its weight gradient (reorder with a sum), db += its bias's. */
static int conv_weights_flush(ConvOnednn *c, ConvPass *p, float *dw, float *db)
{
    if (!conv_bind(p, CONV_DW, c->dw_acc) || !conv_bind(p, CONV_USER_W, dw) ||
        !conv_move(c, p, p->dw_out, CONV_DW, CONV_USER_W))
        return 0;
    if (db)
        for (int o = 0; o < c->OC; o++) db[o] += c->db_acc[o];
    return 1;
}

/* The input gradient of one chunk into din (+=), from CONV_DST. */
static int conv_data_chunk(ConvOnednn *c, ConvPass *p, float *din)
{
    dnnl_exec_arg_t args[] = {{DNNL_ARG_DIFF_DST, p->mem[CONV_DST]},
                              {DNNL_ARG_WEIGHTS, p->mem[CONV_WB]},
                              {DNNL_ARG_DIFF_SRC, p->mem[CONV_DSRC]},
                              {DNNL_ARG_SCRATCHPAD, p->mem[CONV_SCRATCH]}};
    return conv_bind(p, CONV_DSRC, c->dsrc) && conv_exec(c, p->bwd_data, 4, args) &&
           conv_bind(p, CONV_USER_DSRC, din) && conv_move(c, p, p->dsrc_out, CONV_DSRC, CONV_USER_DSRC);
}

void conv_onednn_relu_pool_backward(ConvOnednn *c, float *din, float *dw, float *db, const float *dout,
                                    const int *argmax, const float *in, const float *w, int B)
{
    conv_thread_setup();
    const size_t in_floats = (size_t)c->C * c->H * c->W, pooled = (size_t)c->OC * (c->H / 2) * (c->W / 2);
    ConvSpan span[2];
    const int n_spans = conv_spans(c, B, span);
    int ok = 1;
    for (int k = 0; ok && k < n_spans; k++) {
        ConvPass *p = span[k].p;
        ok = conv_weights(c, p, w, 0, din != NULL) && conv_bind(p, CONV_DST, c->dst);
        for (int s = span[k].first; ok && s < span[k].first + span[k].count; s += p->n) {
#ifdef CONV_AVX512
            if (conv_pool_vector(c, p->dst_layout))
                conv_unpool_avx512(c->dst, p->dst_layout, dout + s * pooled, argmax + s * pooled, p->n, c->OC, c->H,
                                   c->W);
            else
#endif
                conv_unpool_generic(c->dst, (size_t)p->n * p->dst_layout.sn * sizeof(float), p->dst_layout,
                                    dout + s * pooled, argmax + s * pooled, p->n, c->OC, c->H, c->W);
            ok = conv_source(c, p, in, B, s) && conv_weights_chunk(c, p, s == span[k].first);
            ok = ok && (!din || conv_data_chunk(c, p, din + s * in_floats));
        }
        ok = ok && conv_weights_flush(c, p, dw, db);
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
    const size_t out_floats = (size_t)c->OC * c->OH * c->OW;
    ConvSpan span[2];
    const int n_spans = conv_spans(c, B, span);
    int ok = 1;
    for (int k = 0; ok && k < n_spans; k++) {
        ConvPass *p = span[k].p;
        ok = conv_weights(c, p, w, 1, 0);
        for (int s = span[k].first; ok && s < span[k].first + span[k].count; s += p->n) {
            float *y = out + s * out_floats;
            ok = conv_source(c, p, in, B, s) && conv_bind(p, CONV_DST, p->dst_out ? c->dst : y);
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
            ok = ok && conv_source(c, p, in, B, s) && conv_weights_chunk(c, p, s == span[k].first);
            ok = ok && (!din || conv_data_chunk(c, p, din + s * in_floats));
        }
        ok = ok && conv_weights_flush(c, p, dw, NULL);
    }
    ok = ok && dnnl_stream_wait(c->stream) == dnnl_success;
    if (!ok) {
        conv_poison(dw, (size_t)c->OC * c->C * c->K * c->K);
        if (din) conv_poison(din, (size_t)B * in_floats);
    }
}

#endif
