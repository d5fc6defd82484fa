/* compress.c — top-k / rand-k / DCT / Slim-DP, EF21 and EControl, wire sizes, and the
 * ring all-gather. See compress.h for the definitions; the comments here are about how. */
#include "sim/stages/compress.h"
#include "sim/stages/quantize.h"
#include "sim/kernel/rng.h"

#include "models/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Stream ids of the compressors' draws: (tag << 32) | agent under RNG_PURPOSE_METHOD, far
 * from the small ids methods use for their own draws. */
#define COMPRESS_STREAM_TAG 0xC0ULL

struct Compressor {
    CompressionSpec spec;
    size_t n;              /* vector length */
    size_t k;              /* entries kept per message (DCT: at refresh) */
    int n_agents;
    gsl_rng **rng;         /* (n_agents) randk, slimdp */
    float *threshold;      /* (n_agents) DCT */
    long *messages;        /* (n_agents) DCT: compressions so far */
    long *sent;            /* (n_agents) messages so far (warm start) */
    char *dense;           /* (n_agents) its last message was a warm start's dense one */
    float *magnitude;      /* (n) scratch for selection */
    float *work;           /* (n) scratch for the feedback's argument */
    unsigned char *mark;   /* (n) chosen entries; all 0 between calls */
    uint32_t *rest;        /* (n) Slim-DP: indices not chosen by magnitude */
};

size_t compress_keep(double ratio, size_t n)
{
    double k = ceil(ratio * (double)n - 1e-9);
    if (k < 1) k = 1;
    if (k > (double)n) k = (double)n;
    return (size_t)k;
}

double compress_wire_bytes(size_t n, size_t kept)
{
    double indexed = 8.0 * (double)kept;
    double bitmap = 4.0 * (double)kept + ceil((double)n / 8.0);
    double dense = 4.0 * (double)n;
    double best = indexed < bitmap ? indexed : bitmap;
    return best < dense ? best : dense;
}

int compress_state_vectors(const CompressionSpec *spec)
{
    if (spec->scheme == COMPRESS_NONE) return 0;
    switch (spec->feedback) {
    case FEEDBACK_NONE: return 0;
    case FEEDBACK_EF21:
    case FEEDBACK_EF: return 1;
    case FEEDBACK_ECONTROL:
    case FEEDBACK_DGC: return 2;
    }
    return 0;
}

int compress_contributes_message(const CompressionSpec *spec)
{
    return spec->feedback != FEEDBACK_EF21 && spec->feedback != FEEDBACK_ECONTROL;
}

double compress_round_density(const CompressionSpec *spec, int round)
{
    int w = spec->warmup_epochs;
    if (spec->feedback != FEEDBACK_DGC || w <= 0 || round >= w) return spec->ratio;
    double q = pow(spec->ratio, 1.0 / (double)(w + 1));
    double density = pow(q, (double)(round + 1));
    return density > spec->ratio ? density : spec->ratio;
}

void compress_begin_round(Compressor *c, int round)
{
    c->k = compress_keep(compress_round_density(&c->spec, round), c->n);
}

void compress_dgc_clip(float *g, size_t d, double clip, int n_agents)
{
    if (!(clip > 0)) return;
    double sum = 0;
    for (size_t j = 0; j < d; j++) sum += (double)g[j] * (double)g[j];
    double norm = sqrt(sum), limit = clip / sqrt((double)n_agents);
    /* torch's clip_grad_norm_ (the authors' clip_grad.py): coefficient limit / (norm + 1e-6) */
    double coefficient = limit / (norm + 1e-6);
    if (coefficient < 1) vec_scale(g, (float)coefficient, d);
}

void compress_dgc_mask(float *u, const float *message, size_t d)
{
    for (size_t j = 0; j < d; j++)
        if (message[j] != 0.0f) u[j] = 0.0f;
}

int compress_create(const CompressionSpec *spec, uint64_t seed, int n_agents, size_t n, Compressor **out)
{
    *out = NULL;
    Compressor *c = calloc(1, sizeof *c);
    if (c == NULL) return HS_E_NOMEM;
    c->spec = *spec;
    c->n = n;
    c->k = compress_keep(spec->ratio, n);
    c->n_agents = n_agents;
    c->rng = calloc((size_t)n_agents, sizeof *c->rng);
    c->threshold = calloc((size_t)n_agents, sizeof *c->threshold);
    c->messages = calloc((size_t)n_agents, sizeof *c->messages);
    c->sent = calloc((size_t)n_agents, sizeof *c->sent);
    c->dense = calloc((size_t)n_agents, 1);
    c->magnitude = malloc((n ? n : 1) * sizeof *c->magnitude);
    c->work = malloc((n ? n : 1) * sizeof *c->work);
    c->mark = calloc(n ? n : 1, 1);
    c->rest = malloc((n ? n : 1) * sizeof *c->rest);
    if (!c->rng || !c->threshold || !c->messages || !c->sent || !c->dense || !c->magnitude || !c->work || !c->mark || !c->rest) goto nomem;
    for (int i = 0; i < n_agents; i++)
        if ((c->rng[i] = rng_stream_create(seed, (COMPRESS_STREAM_TAG << 32) | (uint64_t)i, RNG_PURPOSE_METHOD)) == NULL)
            goto nomem;
    *out = c;
    return HS_OK;
nomem:
    compress_free(c);
    return HS_E_NOMEM;
}

void compress_free(Compressor *c)
{
    if (c == NULL) return;
    for (int i = 0; c->rng && i < c->n_agents; i++)
        if (c->rng[i]) gsl_rng_free(c->rng[i]);
    free(c->rng);
    free(c->threshold);
    free(c->messages);
    free(c->sent);
    free(c->dense);
    free(c->magnitude);
    free(c->work);
    free(c->mark);
    free(c->rest);
    free(c);
}

size_t compress_length(const Compressor *c)
{
    return c->n;
}

/* 1 if agent's next message is a warm start's dense first one. */
static int compress_warm(const Compressor *c, int agent)
{
    return c->spec.scheme != COMPRESS_NONE && c->spec.feedback != FEEDBACK_NONE && c->spec.warm_start &&
           c->sent[agent] == 0;
}

double compress_expected_bytes(Compressor *c, int agent)
{
    int warm = compress_warm(c, agent);
    c->sent[agent]++;
    c->dense[agent] = (char)warm;
    return compress_message_bytes(c, agent, warm ? c->n : c->k);
}

double compress_message_bytes(const Compressor *c, int agent, size_t kept)
{
    /* the quantizers keep every entry, at their few bits (a warm start's first is dense) */
    if (quantize_scheme(c->spec.scheme) && !c->dense[agent])
        return quantize_wire_bytes(c->spec.scheme, c->n, c->spec.levels);
    return compress_wire_bytes(c->n, kept);
}

static void compress_swap(float *a, size_t i, size_t j)
{
    float t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static float compress_median3(float x, float y, float z)
{
    if (x < y) return y < z ? y : (x < z ? z : x);
    return x < z ? x : (y < z ? z : y);
}

/* The element that would sit at ascending position nth (0-based): three-way quickselect
 * (Dijkstra's partition), so long runs of equal values — exact zeros of dead ReLUs are
 * common in gradients — cost one pass instead of a quadratic blow-up. */
static float compress_select_ascending(float *a, size_t n, size_t nth)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        float pivot = compress_median3(a[lo], a[lo + (hi - lo) / 2], a[hi - 1]);
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (a[i] < pivot) compress_swap(a, lt++, i++);
            else if (a[i] > pivot) compress_swap(a, i, --gt);
            else i++;
        }
        if (nth < lt) hi = lt;
        else if (nth >= gt) lo = gt;
        else return pivot;
    }
    return a[lo];
}

float compress_select_largest(float *a, size_t n, size_t k)
{
    return compress_select_ascending(a, n, n - k);
}

/* The k-th largest magnitude of in (exact), and in *above how many are strictly larger.
 * A quickselect over all n magnitudes is branchy (about 4 ms for n = 235,000), so for
 * small k a strided sample first gives a low bound t: the 2 k/s + 32-th largest of every
 * s-th magnitude. If at least k magnitudes reach t, the k largest are all among those
 * candidates and the exact answer is their k-th largest; otherwise (never seen in
 * practice) the full selection runs. Either way the result is the same number. */
static float compress_kth_magnitude(Compressor *c, const float *in, size_t k, size_t *above)
{
    size_t n = c->n, stride = 64, m = n / stride, candidates = 0;
    float *a = c->magnitude;
    if (n >= 8 * stride && k <= n / 16) {
        for (size_t i = 0; i < m; i++) a[i] = fabsf(in[i * stride]);
        size_t rank = 2 * k / stride + 32;
        if (rank > m) rank = m;
        float low = compress_select_largest(a, m, rank);
        for (size_t i = 0; i < n; i++) {
            float x = fabsf(in[i]);
            if (x >= low) a[candidates++] = x;
        }
    }
    if (candidates < k) {
        for (size_t i = 0; i < n; i++) a[i] = fabsf(in[i]);
        candidates = n;
    }
    float threshold = compress_select_largest(a, candidates, k);
    *above = 0;
    for (size_t i = 0; i < candidates; i++) *above += a[i] > threshold;
    return threshold;
}

/* Marks (with `code`) the k largest magnitudes of in; ties at the k-th value go to the
 * lower indices. */
static void compress_mark_top(Compressor *c, const float *in, size_t k, unsigned char code)
{
    size_t n = c->n, above;
    if (k == 0) return;
    float threshold = compress_kth_magnitude(c, in, k, &above);
    size_t ties = k - above;
    for (size_t i = 0; i < n; i++) {
        float m = fabsf(in[i]);
        if (m > threshold) c->mark[i] = code;
        else if (m == threshold && ties > 0) {
            c->mark[i] = code;
            ties--;
        }
    }
}

/* Top-k straight into out, in one pass after the threshold. */
static size_t compress_topk(Compressor *c, const float *in, float *out)
{
    size_t n = c->n, k = c->k, above;
    float threshold = compress_kth_magnitude(c, in, k, &above);
    size_t ties = k - above;
    for (size_t i = 0; i < n; i++) {
        float m = fabsf(in[i]);
        int keep = m > threshold || (m == threshold && ties > 0);
        if (m == threshold && keep) ties--;
        out[i] = keep ? in[i] : 0.0f;
    }
    return k;
}

/* Floyd's sampling of k distinct positions out of m: positions p with chosen(p) set. The
 * positions index `rest` when it is given, else the vector itself. */
static void compress_mark_random(Compressor *c, gsl_rng *rng, const uint32_t *rest, size_t m, size_t k,
                                 unsigned char code)
{
    for (size_t j = m - k; j < m; j++) {
        size_t t = (size_t)gsl_rng_uniform_int(rng, (unsigned long)j + 1);
        size_t at = rest ? rest[t] : t;
        if (c->mark[at] == code) t = j;
        c->mark[rest ? rest[t] : t] = code;
    }
}

/* Copies marked entries into out, zeros elsewhere, clears the marks; returns the count. */
static size_t compress_emit(Compressor *c, const float *in, float *out)
{
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->mark[i]) {
            out[i] = in[i];
            c->mark[i] = 0;
            kept++;
        } else {
            out[i] = 0.0f;
        }
    }
    return kept;
}

size_t compress_apply(Compressor *c, int agent, const float *in, float *out)
{
    size_t n = c->n, k = c->k;
    switch (c->spec.scheme) {
    case COMPRESS_QSGD:
        return quantize_qsgd(in, out, n, c->spec.levels, c->rng[agent]);
    case COMPRESS_SIGN:
        return quantize_sign(in, out, n);
    case COMPRESS_NONE:
        memcpy(out, in, n * sizeof *out);
        return n;
    case COMPRESS_TOPK:
        return compress_topk(c, in, out);
    case COMPRESS_RANDK:
        compress_mark_random(c, c->rng[agent], NULL, n, k, 1);
        break;
    case COMPRESS_DCT: {
        size_t above;
        if (c->messages[agent]++ % c->spec.refresh == 0) c->threshold[agent] = compress_kth_magnitude(c, in, k, &above);
        float threshold = c->threshold[agent];
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
            int keep = in[i] != 0.0f && fabsf(in[i]) >= threshold;
            out[i] = keep ? in[i] : 0.0f;
            kept += (size_t)keep;
        }
        return kept;
    }
    case COMPRESS_SLIMDP: {
        size_t significant = (size_t)llround((1.0 - c->spec.explore) * (double)k);
        if (significant > k) significant = k;
        compress_mark_top(c, in, significant, 1);
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (!c->mark[i]) c->rest[m++] = (uint32_t)i;
        compress_mark_random(c, c->rng[agent], c->rest, m, k - significant, 2);
        break;
    }
    }
    return compress_emit(c, in, out);
}

size_t compress_feedback(Compressor *c, int agent, const float *v, float *h, float *e, float *message)
{
    size_t n = c->n;
    FeedbackKind feedback = c->spec.scheme == COMPRESS_NONE ? FEEDBACK_NONE : c->spec.feedback;
    int warm = compress_warm(c, agent);
    c->sent[agent]++;
    c->dense[agent] = (char)warm;
    if (feedback == FEEDBACK_NONE) return compress_apply(c, agent, v, message);
    if (warm) {
        memcpy(message, v, n * sizeof *message);
        memcpy(h, v, n * sizeof *h);
        return n;
    }
    float *w = c->work;
    if (feedback == FEEDBACK_EF || feedback == FEEDBACK_DGC) {
        for (size_t i = 0; i < n; i++) w[i] = h[i] + v[i];
        size_t kept = compress_apply(c, agent, w, message);
        for (size_t i = 0; i < n; i++) h[i] = w[i] - message[i];
        return kept;
    }
    if (feedback == FEEDBACK_EF21) {
        for (size_t i = 0; i < n; i++) w[i] = v[i] - h[i];
        size_t kept = compress_apply(c, agent, w, message);
        for (size_t i = 0; i < n; i++) h[i] += message[i];
        return kept;
    }
    float eta = (float)c->spec.eta;
    for (size_t i = 0; i < n; i++) w[i] = eta * e[i] + v[i] - h[i];
    size_t kept = compress_apply(c, agent, w, message);
    for (size_t i = 0; i < n; i++) {
        e[i] += v[i] - h[i] - message[i]; /* h_i^t: before its update (the paper's order) */
        h[i] += message[i];
    }
    return kept;
}

void compress_worker_momentum(float *u, float *out, const float *x, const float *grad, size_t d, double momentum,
                              double weight_decay, int nesterov)
{
    const float mu = (float)momentum, wd = (float)weight_decay;
    for (size_t j = 0; j < d; j++) {
        float a = grad[j] + wd * x[j];
        u[j] = mu * u[j] + a;
        out[j] = nesterov ? a + mu * u[j] : u[j];
    }
}
