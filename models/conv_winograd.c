/* conv_winograd.c — F(4x4, 5x5) Winograd convolution (see conv_winograd.h).
 *
 * The transforms. For a 1-d correlation y_k = sum_j g_j d_{k+j} (k < m = 4 outputs, r = 5
 * taps, n = m + r - 1 = 8 inputs), take n - 1 finite points a_i and infinity, and let V be
 * the n x n matrix V[s][i] = a_i^s (column of infinity: 1 in row n - 1 only). With
 * A^T[k][i] = a_i^k and G[i][j] = a_i^j (infinity: the unit vectors of the highest power),
 * sum_i A^T[k][i] G[i][j] X[i][l] = sum_i V[k+j][i] X[i][l], so X = B^T = V^-1 makes
 * y = A^T ((G g) . (B^T d)) exact (Lavin & Gray 2016, section 4, the Toom-Cook form).
 * Row i of B^T may be scaled by any f_i if row i of G is divided by it; f_i = prod_{j != i}
 * (a_i - a_j) leaves B^T with dyadic entries, exact in float (21/4, 17/4, 5/2...), and puts
 * the fractions in G (1/90, 2/45, 2/9), which is transformed once per batch. With the
 * points 0, 1, -1, 2, -2, 1/2, -1/2 (the set the paper's F(6x6, 3x3)-sized transforms use)
 * B^T is, with row 0 and G's row 0 negated for positive signs:
 *
 *   1   0  -21/4   0     21/4   0     -1  0      G:  1     0      0     0      0
 *   0   1   1     -17/4 -17/4   1      1  0         -2/9  -2/9   -2/9  -2/9   -2/9
 *   0  -1   1      17/4 -17/4  -1      1  0         -2/9   2/9   -2/9   2/9   -2/9
 *   0   1/2 1/4   -5/2  -5/4    2      1  0          1/90  1/45   2/45  4/45   8/45
 *   0  -1/2 1/4    5/2  -5/4   -2      1  0          1/90 -1/45   2/45 -4/45   8/45
 *   0   2   4     -5/2  -5      1/2    1  0         32/45 16/45   8/45  4/45   2/45
 *   0  -2   4      5/2  -5     -1/2    1  0         32/45 -16/45  8/45 -4/45   2/45
 *   0  -1   0      21/4  0    -21/4    0  1          0     0      0     0      1
 *
 * and A^T's columns are (1, a, a^2, a^3) per point, (0, 0, 0, 1) for infinity. The 1-d
 * transforms below are these matrices with their even/odd symmetry (the points come in
 * pairs +-a) written out: 26 operations for B^T d instead of 120. In 2-d each is applied
 * to the columns, then to the rows: V = B^T d B, U = G g G^T, Y = A^T M A.
 *
 * Layouts. A chunk's input is first copied channel-last into a zero-padded buffer
 * (sample, row, column, channel: c->padded), so that gathering a tile's 8x8 patch needs no
 * bounds checks and reads 16 channels a vector. Tiles are numbered over the chunk's
 * samples (sample, tile row, tile column); each tile's 64 transformed values are stored as
 * v[tile][xi][channel]. The sgemm for each of the 64 positions xi is then
 * M[xi] (tiles x Cout) = V[xi] (tiles x Cin) U[xi] (Cin x Cout), on conv_winograd_gemm.c's
 * kernel where it gives oneDNN's bits, and the output transform reads m[tile][xi][oc]
 * back, 16 output channels a vector. The backward-data runs the same steps on the output
 * gradient's channel-last copy (c->grad), the backward-weights sums V^T M over the tiles. */
#include "models/conv_winograd.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_error.h"
#include "models/conv_onednn.h"
#include "models/conv_winograd_gemm.h"
#include "models/kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#define WINO_X86 1
#include <immintrin.h>
#else
#define WINO_X86 0
#endif

enum {
    WINO_M = 4,           /* output tile side */
    WINO_R = 5,           /* kernel side */
    WINO_N = 8,           /* input tile side, WINO_M + WINO_R - 1 */
    WINO_XI = 64,         /* positions of a transformed tile, WINO_N^2 */
    WINO_LANES = 16,      /* tiles transformed together */
    WINO_PAD = 2,         /* padding of the 5x5 convolution */
    /* Floats between consecutive xi planes of u, v and m beyond their size: a transform
     * touches all 64 planes at once, and planes a power of two apart (32 x 128 floats)
     * would all fall in one set of the L1 cache and evict each other; one cache line more
     * spreads them. */
    WINO_SKEW = 16
};

/* What a channel-last buffer holds outside the part each chunk writes: once zeroed for a
 * geometry, the zeros stay (every writer of that geometry writes the same part), so a
 * buffer is zeroed again only when the geometry changes or more samples are needed. */
typedef struct WinoZeroed {
    int rows, cols, offset; /* the planes and where the written part starts */
    int height, width;      /* the written part: positions */
    int channels, lanes;    /* channels written per position, lanes per position */
    int samples;            /* samples zeroed so far; 0: none */
} WinoZeroed;

struct ConvWinograd {
    int C, H, W, OC, max_batch;
    int tiles_h, tiles_w;  /* output tiles per sample: ceil(H/4), ceil(W/4) */
    int pad_h, pad_w;      /* the padded input plane: 4 * tiles + 4 */
    int vector;            /* AVX-512 transforms */
    /* channel counts below are rounded up to 16 (wino_round), xi planes skewed */
    float *u_forward;      /* (64, C, OC) transformed filters of the forward */
    float *u_backward;     /* (64, OC, C) of the backward-data (rotated, channels swapped) */
    float *du;             /* (64, C, OC) the weights' gradient at the 64 positions */
    float *v;              /* (chunk tiles, 64, Cin) transformed input tiles, Cin = C or OC */
    float *m;              /* (chunk tiles, 64, Cout) products */
    float *padded;         /* (chunk, pad_h, pad_w, Cin): the input, zero-padded, channel-last */
    float *grad;           /* (chunk, pad_h, pad_w, OC): the output gradient, channel-last */
    WinoZeroed padded_zeroed, grad_zeroed;
    uint32_t *window_bits; /* (H/2 x W/2, OC): one sample's pooled gradients, ReLU-masked */
    int *window_at;        /* the same shape: their argmax */
};

/* How the output transform puts a value v into its plane d (the `accumulate` argument):
 * d = v; d = d + v; or d = 0 + v, the bits of adding to a zeroed plane (-0 becomes +0)
 * without zeroing it first and reading it back. */
enum { WINO_STORE = 0, WINO_ADD = 1, WINO_ONTO_ZERO = 2 };

/* Channels rounded up to whole vectors. */
static inline int wino_round(int channels) { return (channels + WINO_LANES - 1) / WINO_LANES * WINO_LANES; }

/* ---------------------------------------------------------------- 1-d transforms */

/* Each element is a vector of WINO_LANES floats; element k of in is at in + k * is. */

static inline __attribute__((always_inline)) void wino_input_1d(float *restrict out, size_t os,
                                                                  const float *restrict in, size_t is)
{
    for (int l = 0; l < WINO_LANES; l++) {
        const float d0 = in[l], d1 = in[is + l], d2 = in[2 * is + l], d3 = in[3 * is + l];
        const float d4 = in[4 * is + l], d5 = in[5 * is + l], d6 = in[6 * is + l], d7 = in[7 * is + l];
        out[l] = (d0 - d6) + 5.25f * (d4 - d2);
        const float a1 = (d1 + d5) - 4.25f * d3, a2 = (d2 + d6) - 4.25f * d4;
        out[os + l] = a2 + a1;
        out[2 * os + l] = a2 - a1;
        const float b1 = (0.5f * d1 - 2.5f * d3) + 2.0f * d5, b2 = (0.25f * d2 - 1.25f * d4) + d6;
        out[3 * os + l] = b2 + b1;
        out[4 * os + l] = b2 - b1;
        const float c1 = (2.0f * d1 - 2.5f * d3) + 0.5f * d5, c2 = (4.0f * d2 - 5.0f * d4) + d6;
        out[5 * os + l] = c2 + c1;
        out[6 * os + l] = c2 - c1;
        out[7 * os + l] = (d7 - d1) + 5.25f * (d3 - d5);
    }
}

static inline __attribute__((always_inline)) void wino_filter_1d(float *restrict out, size_t os,
                                                                   const float *restrict in, size_t is)
{
    for (int l = 0; l < WINO_LANES; l++) {
        const float g0 = in[l], g1 = in[is + l], g2 = in[2 * is + l], g3 = in[3 * is + l], g4 = in[4 * is + l];
        out[l] = g0;
        const float e1 = g0 + g2 + g4, o1 = g1 + g3;
        out[os + l] = (e1 + o1) * (-2.0f / 9.0f);
        out[2 * os + l] = (e1 - o1) * (-2.0f / 9.0f);
        const float e3 = g0 + 4.0f * g2 + 16.0f * g4, o3 = 2.0f * g1 + 8.0f * g3;
        out[3 * os + l] = (e3 + o3) * (1.0f / 90.0f);
        out[4 * os + l] = (e3 - o3) * (1.0f / 90.0f);
        const float e5 = 16.0f * g0 + 4.0f * g2 + g4, o5 = 8.0f * g1 + 2.0f * g3;
        out[5 * os + l] = (e5 + o5) * (2.0f / 45.0f);
        out[6 * os + l] = (e5 - o5) * (2.0f / 45.0f);
        out[7 * os + l] = g4;
    }
}

static inline __attribute__((always_inline)) void wino_output_1d(float *restrict out, size_t os,
                                                                   const float *restrict in, size_t is)
{
    for (int l = 0; l < WINO_LANES; l++) {
        const float m0 = in[l], m7 = in[7 * is + l];
        const float s1 = in[is + l] + in[2 * is + l], t1 = in[is + l] - in[2 * is + l];
        const float s2 = in[3 * is + l] + in[4 * is + l], t2 = in[3 * is + l] - in[4 * is + l];
        const float s3 = in[5 * is + l] + in[6 * is + l], t3 = in[5 * is + l] - in[6 * is + l];
        out[l] = ((m0 + s1) + s2) + s3;
        out[os + l] = (t1 + 2.0f * t2) + 0.5f * t3;
        out[2 * os + l] = (s1 + 4.0f * s2) + 0.25f * s3;
        out[3 * os + l] = ((t1 + 8.0f * t2) + 0.125f * t3) + m7;
    }
}

/* The transposes for the weights' gradient: A (8 x 4) takes an output tile's gradient to
 * the 64 positions, G^T (5 x 8) takes the positions back to a kernel. */
static inline __attribute__((always_inline)) void wino_gradient_1d(float *restrict out, size_t os,
                                                                     const float *restrict in, size_t is)
{
    for (int l = 0; l < WINO_LANES; l++) {
        const float d0 = in[l], d1 = in[is + l], d2 = in[2 * is + l], d3 = in[3 * is + l];
        out[l] = d0;
        const float e1 = d0 + d2, o1 = d1 + d3;
        out[os + l] = e1 + o1;
        out[2 * os + l] = e1 - o1;
        const float e2 = d0 + 4.0f * d2, o2 = 2.0f * d1 + 8.0f * d3;
        out[3 * os + l] = e2 + o2;
        out[4 * os + l] = e2 - o2;
        const float e3 = d0 + 0.25f * d2, o3 = 0.5f * d1 + 0.125f * d3;
        out[5 * os + l] = e3 + o3;
        out[6 * os + l] = e3 - o3;
        out[7 * os + l] = d3;
    }
}

static inline __attribute__((always_inline)) void wino_kernel_1d(float *restrict out, size_t os,
                                                                   const float *restrict in, size_t is)
{
    for (int l = 0; l < WINO_LANES; l++) {
        const float x0 = in[l], x1 = in[is + l], x2 = in[2 * is + l], x3 = in[3 * is + l];
        const float x4 = in[4 * is + l], x5 = in[5 * is + l], x6 = in[6 * is + l], x7 = in[7 * is + l];
        const float a1 = (x1 + x2) * (-2.0f / 9.0f), b1 = (x1 - x2) * (-2.0f / 9.0f);
        const float a3 = (x3 + x4) * (1.0f / 90.0f), b3 = (x3 - x4) * (1.0f / 90.0f);
        const float a5 = (x5 + x6) * (2.0f / 45.0f), b5 = (x5 - x6) * (2.0f / 45.0f);
        out[l] = ((x0 + a1) + a3) + 16.0f * a5;
        out[os + l] = (b1 + 2.0f * b3) + 8.0f * b5;
        out[2 * os + l] = (a1 + 4.0f * a3) + 4.0f * a5;
        out[3 * os + l] = (b1 + 8.0f * b3) + 2.0f * b5;
        out[4 * os + l] = ((a1 + 16.0f * a3) + a5) + x7;
    }
}

/* ---------------------------------------------------------------- 2-d passes */

#if WINO_X86
__attribute__((target("avx512f"))) static void wino_scatter_avx512(const float *y, float *dst, size_t hw, int W,
                                                                    int rows, int cols, int n, int accumulate);
#endif

/* Filters: u[xi][i][o] for i < Cin, o < Cout rounded up to 16 (zeros past the channels);
 * the 5x5 kernel of (o, i) is w[o][i] (forward) or w[i][o] turned by 180 degrees (rotated:
 * the backward-data pass, whose w is (Cin, Cout, 5, 5)). */
static inline __attribute__((always_inline)) void wino_filters_body(float *u, size_t ustride, const float *w,
                                                                      int Cout, int Cin, int rotated)
{
    float g[WINO_R * WINO_R * WINO_LANES], t[WINO_N * WINO_R * WINO_LANES], x[WINO_XI * WINO_LANES];
    const size_t kk = WINO_R * WINO_R;
    const int cout_lanes = wino_round(Cout);
    for (int i = 0; i < wino_round(Cin); i++)
        for (int o0 = 0; o0 < cout_lanes; o0 += WINO_LANES) {
            memset(g, 0, sizeof g);
            for (int l = 0; l < WINO_LANES && i < Cin && o0 + l < Cout; l++) {
                const int o = o0 + l;
                const float *src = rotated ? w + ((size_t)i * Cout + o) * kk : w + ((size_t)o * Cin + i) * kk;
                for (size_t k = 0; k < kk; k++) g[(rotated ? kk - 1 - k : k) * WINO_LANES + l] = src[k];
            }
            for (int kx = 0; kx < WINO_R; kx++)
                wino_filter_1d(t + kx * WINO_LANES, WINO_R * WINO_LANES, g + kx * WINO_LANES, WINO_R * WINO_LANES);
            for (int a = 0; a < WINO_N; a++)
                wino_filter_1d(x + a * WINO_N * WINO_LANES, WINO_LANES, t + a * WINO_R * WINO_LANES, WINO_LANES);
            for (int xi = 0; xi < WINO_XI; xi++)
                memcpy(u + xi * ustride + (size_t)i * cout_lanes + o0, x + xi * WINO_LANES,
                       sizeof(float) * WINO_LANES);
        }
}

/* Input tiles of one chunk (ns samples) from a channel-last padded copy src (ns, pad_h,
 * pad_w, cin_lanes: c->padded, or c->grad for the block's backward-data) into
 * v[xi][tile][channel]: 16 channels a vector. */
static inline __attribute__((always_inline)) void wino_inputs_body(const ConvWinograd *c, const float *src,
                                                                     int cin_lanes, int ns)
{
    float p[WINO_XI * WINO_LANES], t[WINO_XI * WINO_LANES], x[WINO_XI * WINO_LANES];
    const int per = c->tiles_h * c->tiles_w, tiles = ns * per;
    const size_t row = (size_t)c->pad_w * cin_lanes, stride = WINO_XI * (size_t)cin_lanes + WINO_SKEW;
    for (int tile = 0; tile < tiles; tile++) {
        const int s = tile / per, ty = tile % per / c->tiles_w, tx = tile % c->tiles_w;
        const float *corner = src + ((size_t)s * c->pad_h + (size_t)ty * WINO_M) * row +
                              (size_t)tx * WINO_M * cin_lanes;
        for (int c0 = 0; c0 < cin_lanes; c0 += WINO_LANES) {
            for (int y = 0; y < WINO_N; y++)
                for (int xx = 0; xx < WINO_N; xx++)
                    memcpy(p + (y * WINO_N + xx) * WINO_LANES, corner + y * row + (size_t)xx * cin_lanes + c0,
                           sizeof(float) * WINO_LANES);
            for (int col = 0; col < WINO_N; col++)
                wino_input_1d(t + col * WINO_LANES, WINO_N * WINO_LANES, p + col * WINO_LANES, WINO_N * WINO_LANES);
            for (int a = 0; a < WINO_N; a++)
                wino_input_1d(x + a * WINO_N * WINO_LANES, WINO_LANES, t + a * WINO_N * WINO_LANES, WINO_LANES);
            for (int xi = 0; xi < WINO_XI; xi++)
                memcpy(c->v + tile * stride + (size_t)xi * cin_lanes + c0, x + xi * WINO_LANES,
                       sizeof(float) * WINO_LANES);
        }
    }
}

/* A forward block's bias, ReLU and 2x2 max-pooling, applied to the output tiles as they
 * are transformed: a 4x4 tile at (4 ty, 4 tx) holds exactly the pooling windows (2 ty + i,
 * 2 tx + j), so the conv output is never written to memory and read back. */
typedef struct WinoPool {
    float *out;        /* (ns, Cout, H/2, W/2) */
    int *argmax;       /* the same shape, each window's position 0..3; NULL for inference */
    const float *bias; /* (Cout), or NULL */
} WinoPool;

/* Output tiles of one chunk from c->m (m[xi][tile][channel]) into out (ns samples, Cout
 * channels, H x W, NCHW): written, added or written onto zero (accumulate: WINO_*). */
/* The windows of one 4x4 tile y[position][lane] of channels o0..o0+n-1, with
 * conv2d_relu_pool_sample's arithmetic (kernels_relu_pool_window on value + bias): the
 * same bits as pooling the written plane. */
static inline __attribute__((always_inline)) void wino_pool_tile(const WinoPool *pool, const float *y, int s, int o0,
                                                                   int n, int Cout, int ty, int tx, int oh, int ow)
{
    float bias[WINO_LANES], value[WINO_LANES];
    int position[WINO_LANES];
    for (int l = 0; l < WINO_LANES; l++) bias[l] = pool->bias && l < n ? pool->bias[o0 + l] : 0.0f;
    const size_t plane = (size_t)oh * ow;
    for (int i = 0; i < 2 && ty * 2 + i < oh; i++)
        for (int j = 0; j < 2 && tx * 2 + j < ow; j++) {
            const float *q = y + (2 * i * WINO_M + 2 * j) * WINO_LANES;
            for (int l = 0; l < WINO_LANES; l++)
                value[l] = kernels_relu_pool_window(q[l] + bias[l], q[WINO_LANES + l] + bias[l],
                                                    q[WINO_M * WINO_LANES + l] + bias[l],
                                                    q[(WINO_M + 1) * WINO_LANES + l] + bias[l], &position[l]);
            const size_t at = ((size_t)s * Cout + o0) * plane + (size_t)(ty * 2 + i) * ow + tx * 2 + j;
            for (int l = 0; l < n; l++) pool->out[at + l * plane] = value[l];
            if (pool->argmax)
                for (int l = 0; l < n; l++) pool->argmax[at + l * plane] = position[l];
        }
}

static inline __attribute__((always_inline)) void wino_outputs_body(const ConvWinograd *c, float *out, int Cout,
                                                                      int ns, int accumulate, int simd,
                                                                      const WinoPool *pool)
{
    float t[WINO_M * WINO_N * WINO_LANES], y[WINO_M * WINO_M * WINO_LANES];
    const int per = c->tiles_h * c->tiles_w, tiles = ns * per, H = c->H, W = c->W, cout_lanes = wino_round(Cout);
    const size_t hw = (size_t)H * W, stride = WINO_XI * (size_t)cout_lanes + WINO_SKEW;
    for (int tile = 0; tile < tiles; tile++) {
        const int s = tile / per, ty = tile % per / c->tiles_w, tx = tile % c->tiles_w;
        const int rows = H - ty * WINO_M < WINO_M ? H - ty * WINO_M : WINO_M;
        const int cols = W - tx * WINO_M < WINO_M ? W - tx * WINO_M : WINO_M;
        for (int o0 = 0; o0 < Cout; o0 += WINO_LANES) {
            const float *mm = c->m + tile * stride + o0; /* read in place */
            for (int col = 0; col < WINO_N; col++)
                wino_output_1d(t + col * WINO_LANES, WINO_N * WINO_LANES, mm + (size_t)col * cout_lanes,
                               WINO_N * (size_t)cout_lanes);
            for (int k = 0; k < WINO_M; k++)
                wino_output_1d(y + k * WINO_M * WINO_LANES, WINO_LANES, t + k * WINO_N * WINO_LANES, WINO_LANES);
            const int n = Cout - o0 < WINO_LANES ? Cout - o0 : WINO_LANES;
            if (pool) {
                wino_pool_tile(pool, y, s, o0, n, Cout, ty, tx, H / 2, W / 2);
                continue;
            }
#if WINO_X86
            if (simd) {
                wino_scatter_avx512(y, out + ((size_t)s * Cout + o0) * hw + (size_t)ty * WINO_M * W + (size_t)tx * WINO_M,
                                    hw, W, rows, cols, n, accumulate);
                continue;
            }
#endif
            for (int l = 0; l < n; l++) {
                float *dst = out + ((size_t)s * Cout + o0 + l) * hw + (size_t)ty * WINO_M * W + (size_t)tx * WINO_M;
                for (int k = 0; k < rows; k++)
                    for (int j = 0; j < cols; j++) {
                        const float value = y[(k * WINO_M + j) * WINO_LANES + l];
                        if (accumulate == WINO_ADD)
                            dst[(size_t)k * W + j] += value;
                        else if (accumulate == WINO_ONTO_ZERO)
                            dst[(size_t)k * W + j] = 0.0f + value;
                        else
                            dst[(size_t)k * W + j] = value;
                    }
            }
        }
    }
}

/* The output gradient of one chunk, from a channel-last copy src (ns planes of rows x cols
 * positions of cout_lanes, the image at (offset, offset), zeros past it on the 4 tiles_h x
 * 4 tiles_w tile grid), to the 64 positions: c->m[tile][xi][oc]. */
static inline __attribute__((always_inline)) void wino_gradients_body(const ConvWinograd *c, const float *src,
                                                                        int rows, int cols, int offset,
                                                                        int cout_lanes, int ns)
{
    float d[WINO_M * WINO_M * WINO_LANES], t[WINO_N * WINO_M * WINO_LANES], x[WINO_XI * WINO_LANES];
    const int per = c->tiles_h * c->tiles_w, tiles = ns * per;
    const size_t row = (size_t)cols * cout_lanes, stride = WINO_XI * (size_t)cout_lanes + WINO_SKEW;
    for (int tile = 0; tile < tiles; tile++) {
        const int s = tile / per, ty = tile % per / c->tiles_w, tx = tile % c->tiles_w;
        const float *corner = src + ((size_t)s * rows + (size_t)offset + (size_t)ty * WINO_M) * row +
                              ((size_t)offset + (size_t)tx * WINO_M) * cout_lanes;
        for (int o0 = 0; o0 < cout_lanes; o0 += WINO_LANES) {
            for (int y = 0; y < WINO_M; y++)
                for (int xx = 0; xx < WINO_M; xx++)
                    memcpy(d + (y * WINO_M + xx) * WINO_LANES, corner + y * row + (size_t)xx * cout_lanes + o0,
                           sizeof(float) * WINO_LANES);
            for (int col = 0; col < WINO_M; col++)
                wino_gradient_1d(t + col * WINO_LANES, WINO_M * WINO_LANES, d + col * WINO_LANES,
                                 WINO_M * WINO_LANES);
            for (int a = 0; a < WINO_N; a++)
                wino_gradient_1d(x + a * WINO_N * WINO_LANES, WINO_LANES, t + a * WINO_M * WINO_LANES, WINO_LANES);
            for (int xi = 0; xi < WINO_XI; xi++)
                memcpy(c->m + tile * stride + (size_t)xi * cout_lanes + o0, x + xi * WINO_LANES,
                       sizeof(float) * WINO_LANES);
        }
    }
}

/* dw (Cout, Cin, 5, 5) += G^T du G, du the summed products (64, Cin, Cout lanes). */
static inline __attribute__((always_inline)) void wino_kernels_body(float *dw, const float *du, size_t ustride,
                                                                      int Cout, int Cin)
{
    float x[WINO_XI * WINO_LANES], t[WINO_R * WINO_N * WINO_LANES], g[WINO_R * WINO_R * WINO_LANES];
    const int cout_lanes = wino_round(Cout);
    for (int i = 0; i < Cin; i++)
        for (int o0 = 0; o0 < Cout; o0 += WINO_LANES) {
            for (int xi = 0; xi < WINO_XI; xi++)
                memcpy(x + xi * WINO_LANES, du + xi * ustride + (size_t)i * cout_lanes + o0,
                       sizeof(float) * WINO_LANES);
            for (int col = 0; col < WINO_N; col++)
                wino_kernel_1d(t + col * WINO_LANES, WINO_N * WINO_LANES, x + col * WINO_LANES, WINO_N * WINO_LANES);
            for (int ky = 0; ky < WINO_R; ky++)
                wino_kernel_1d(g + ky * WINO_R * WINO_LANES, WINO_LANES, t + ky * WINO_N * WINO_LANES, WINO_LANES);
            const int n = Cout - o0 < WINO_LANES ? Cout - o0 : WINO_LANES;
            for (int l = 0; l < n; l++) {
                float *dst = dw + ((size_t)(o0 + l) * Cin + i) * WINO_R * WINO_R;
                for (int k = 0; k < WINO_R * WINO_R; k++) dst[k] += g[k * WINO_LANES + l];
            }
        }
}

/* 1 when the buffer's zeros for this geometry and ns samples are in place; otherwise
 * records the geometry, for the caller to zero now. */
static int wino_zeroed(WinoZeroed *z, WinoZeroed want, int ns)
{
    const int same = z->samples >= ns && z->rows == want.rows && z->cols == want.cols && z->offset == want.offset &&
                     z->height == want.height && z->width == want.width && z->channels == want.channels &&
                     z->lanes == want.lanes;
    if (same) return 1;
    want.samples = ns;
    *z = want;
    return 0;
}

/* The block's backward from its pooled gradient dout (ns, OC, H/2, W/2), the forward's
 * pooled out and argmax: each window's value goes to its argmax where the pooled output is
 * positive, zero elsewhere (conv2d_relu_unpool_sample's floats, bit for bit: the value's
 * bits masked by the ReLU's outcome), written straight into the channel-last zero-padded
 * c->grad (ns, pad_h, pad_w, OC lanes, the image at (2, 2)) that both the weights'
 * gradient transform and the backward-data's input transform read: no NCHW plane is
 * written, read back and copied twice. db[o] += each sample's sum of the gradient's H x W
 * plane in its row-major order (the plain block's order, so its bits: the zeros added
 * are the same). */
static inline __attribute__((always_inline)) void wino_unpool_body(const ConvWinograd *c, int zeroed, float *db,
                                                                     const float *dout, const float *out,
                                                                     const int *argmax, int ns)
{
    const int OC = c->OC, oh = c->H / 2, ow = c->W / 2, lanes = wino_round(OC);
    const size_t plane = (size_t)oh * ow, pooled = (size_t)OC * plane, row = (size_t)c->pad_w * lanes;
    const size_t lane_bytes = sizeof(float) * lanes;
    for (int s = 0; s < ns; s++) {
        float *p = c->grad + (size_t)s * c->pad_h * row;
        /* zeros around the windows: the border, a dropped odd row or column (the lanes past
         * OC are zeroed by the window stores); they stay from an earlier chunk (zeroed) */
        if (!zeroed) {
            memset(p, 0, WINO_PAD * row * sizeof(float));
            for (int y = WINO_PAD; y < WINO_PAD + 2 * oh; y++) {
                memset(p + (size_t)y * row, 0, WINO_PAD * lane_bytes);
                memset(p + (size_t)y * row + (size_t)(WINO_PAD + 2 * ow) * lanes, 0,
                       (size_t)(c->pad_w - WINO_PAD - 2 * ow) * lane_bytes);
            }
            memset(p + (size_t)(WINO_PAD + 2 * oh) * row, 0,
                   (size_t)(c->pad_h - WINO_PAD - 2 * oh) * row * sizeof(float));
        }
        /* the sample's windows channel-last, read in order (strided reads of 16 channels
         * at a time missed the cache on every load): the value's bits masked by the ReLU,
         * zero in the lanes past OC */
        uint32_t *bits = c->window_bits;
        int *at = c->window_at;
        for (int o = 0; o < lanes; o++) {
            const size_t first = (size_t)s * pooled + (size_t)(o < OC ? o : 0) * plane;
            const uint32_t keep = 0u - (uint32_t)(o < OC);
            for (size_t k = 0; k < plane; k++) {
                uint32_t value;
                memcpy(&value, dout + first + k, sizeof value);
                bits[k * lanes + o] = value & keep & (0u - (uint32_t)(out[first + k] > 0.0f));
                at[k * lanes + o] = argmax[first + k];
            }
        }
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                float *q = p + (size_t)(WINO_PAD + 2 * i) * row + (size_t)(WINO_PAD + 2 * j) * lanes;
                const uint32_t *wb = bits + ((size_t)i * ow + j) * lanes;
                const int *wa = at + ((size_t)i * ow + j) * lanes;
                for (int c0 = 0; c0 < lanes; c0 += WINO_LANES) {
                    uint32_t v[4][WINO_LANES]; /* the window's four positions, row-major */
                    for (int l = 0; l < WINO_LANES; l++)
                        for (int w = 0; w < 4; w++) v[w][l] = wb[c0 + l] & (0u - (uint32_t)(wa[c0 + l] == w));
                    memcpy(q + c0, v[0], sizeof v[0]);
                    memcpy(q + lanes + c0, v[1], sizeof v[1]);
                    memcpy(q + row + c0, v[2], sizeof v[2]);
                    memcpy(q + row + lanes + c0, v[3], sizeof v[3]);
                }
            }
        if (!db) continue;
        for (int c0 = 0; c0 < OC; c0 += WINO_LANES) {
            float sum[WINO_LANES] = {0};
            for (int y = 0; y < c->H; y++) {
                const float *r = p + (size_t)(WINO_PAD + y) * row + (size_t)WINO_PAD * lanes + c0;
                for (int x = 0; x < c->W; x++)
                    for (int l = 0; l < WINO_LANES; l++) sum[l] += r[(size_t)x * lanes + l];
            }
            for (int l = 0; l < WINO_LANES && c0 + l < OC; l++) db[c0 + l] += sum[l];
        }
    }
}

/* The generic passes and, on x86, their AVX-512F twins: the same loops, so the same bits
 * (no reassociation, no contraction: only the width of the lane loops changes). */
static void wino_filters_generic(float *u, size_t ustride, const float *w, int Cout, int Cin, int rotated)
{
    wino_filters_body(u, ustride, w, Cout, Cin, rotated);
}
static void wino_inputs_generic(const ConvWinograd *c, const float *src, int cin_lanes, int ns)
{
    wino_inputs_body(c, src, cin_lanes, ns);
}
static void wino_outputs_generic(const ConvWinograd *c, float *out, int Cout, int ns, int accumulate,
                                 const WinoPool *pool)
{
    wino_outputs_body(c, out, Cout, ns, accumulate, 0, pool);
}
static void wino_gradients_generic(const ConvWinograd *c, const float *src, int rows, int cols, int offset,
                                   int cout_lanes, int ns)
{
    wino_gradients_body(c, src, rows, cols, offset, cout_lanes, ns);
}
static void wino_kernels_generic(float *dw, const float *du, size_t ustride, int Cout, int Cin)
{
    wino_kernels_body(dw, du, ustride, Cout, Cin);
}
static void wino_unpool_generic(const ConvWinograd *c, int zeroed, float *db, const float *dout, const float *out,
                                const int *argmax, int ns)
{
    wino_unpool_body(c, zeroed, db, dout, out, argmax, ns);
}
#if WINO_X86
__attribute__((target("avx512f"))) static void wino_gradients_avx512(const ConvWinograd *c, const float *src,
                                                                      int rows, int cols, int offset,
                                                                      int cout_lanes, int ns)
{
    wino_gradients_body(c, src, rows, cols, offset, cout_lanes, ns);
}
__attribute__((target("avx512f"))) static void wino_kernels_avx512(float *dw, const float *du, size_t ustride,
                                                                    int Cout, int Cin)
{
    wino_kernels_body(dw, du, ustride, Cout, Cin);
}
__attribute__((target("avx512f"))) static void wino_unpool_avx512(const ConvWinograd *c, int zeroed, float *db,
                                                                   const float *dout, const float *out,
                                                                   const int *argmax, int ns)
{
    wino_unpool_body(c, zeroed, db, dout, out, argmax, ns);
}
__attribute__((target("avx512f"))) static void wino_filters_avx512(float *u, size_t ustride, const float *w,
                                                                    int Cout, int Cin, int rotated)
{
    wino_filters_body(u, ustride, w, Cout, Cin, rotated);
}
__attribute__((target("avx512f"))) static void wino_inputs_avx512(const ConvWinograd *c, const float *src,
                                                                   int cin_lanes, int ns)
{
    wino_inputs_body(c, src, cin_lanes, ns);
}
__attribute__((target("avx512f"))) static void wino_outputs_avx512(const ConvWinograd *c, float *out, int Cout,
                                                                    int ns, int accumulate, const WinoPool *pool)
{
    wino_outputs_body(c, out, Cout, ns, accumulate, 1, pool);
}
static int wino_has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}
#else
#define wino_filters_avx512 wino_filters_generic
#define wino_inputs_avx512 wino_inputs_generic
#define wino_outputs_avx512 wino_outputs_generic
#define wino_gradients_avx512 wino_gradients_generic
#define wino_kernels_avx512 wino_kernels_generic
#define wino_unpool_avx512 wino_unpool_generic
static int wino_has_avx512(void) { return 0; }
#endif

/* Floats between the xi planes of transformed filters (Cin, Cout) */
static size_t wino_filter_stride(int Cin, int Cout) { return (size_t)wino_round(Cin) * wino_round(Cout) + WINO_SKEW; }

static void wino_filters(const ConvWinograd *c, float *u, const float *w, int Cout, int Cin, int rotated)
{
    if (c->vector)
        wino_filters_avx512(u, wino_filter_stride(Cin, Cout), w, Cout, Cin, rotated);
    else
        wino_filters_generic(u, wino_filter_stride(Cin, Cout), w, Cout, Cin, rotated);
}

/* ns samples of in (ns, channels, H, W) into to (c->padded or c->grad), channel-last
 * (ns, rows, cols, channels rounded up to 16), the image at (offset, offset), zeros around
 * and past the channels. */
#if WINO_X86
/* r[k] = column k of the 16 x 16 block whose rows were r[0..15]: 32-bit interleaves within
 * the 128-bit lanes, then 4 x 4 blocks within them, then the lanes across registers. */
__attribute__((target("avx512f"))) static inline void wino_transpose16(__m512 r[16])
{
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    /* u[4i + m], 128-bit lane j, holds rows 4i..4i+3 of column 4j + m */
    for (int m = 0; m < 4; m++) {
        const __m512 x = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x88), y = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xDD);
        const __m512 x2 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x88);
        const __m512 y2 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xDD);
        r[m] = _mm512_shuffle_f32x4(x, x2, 0x88);
        r[8 + m] = _mm512_shuffle_f32x4(x, x2, 0xDD);
        r[4 + m] = _mm512_shuffle_f32x4(y, y2, 0x88);
        r[12 + m] = _mm512_shuffle_f32x4(y, y2, 0xDD);
    }
}

/* The output transform's 4x4 results y[position][channel] of n channels to their planes (hw
 * floats apart, rows W apart; rows x cols of the tile inside the image): one transpose puts
 * each channel's tile in a register, whose rows are then stored (or added: the same one
 * addition per output as the scalar loop, so the same bits) 4 floats at a time. */
__attribute__((target("avx512f"))) static void wino_scatter_avx512(const float *y, float *dst, size_t hw, int W,
                                                                    int rows, int cols, int n, int accumulate)
{
    __m512 r[16];
    for (int k = 0; k < 16; k++) r[k] = _mm512_loadu_ps(y + k * WINO_LANES);
    wino_transpose16(r);
    float tile[16];
    for (int l = 0; l < n; l++) {
        float *d = dst + (size_t)l * hw;
        _mm512_storeu_ps(tile, r[l]);
        for (int k = 0; k < rows; k++, d += W) {
            if (cols == WINO_M) {
                __m128 v = _mm_loadu_ps(tile + k * WINO_M);
                if (accumulate == WINO_ADD) v = _mm_add_ps(_mm_loadu_ps(d), v);
                if (accumulate == WINO_ONTO_ZERO) v = _mm_add_ps(_mm_setzero_ps(), v);
                _mm_storeu_ps(d, v);
            } else
                for (int j = 0; j < cols; j++) {
                    const float value = tile[k * WINO_M + j];
                    d[j] = accumulate == WINO_ADD ? d[j] + value : accumulate == WINO_ONTO_ZERO ? 0.0f + value : value;
                }
        }
    }
}

/* wino_channel_last's copy of 16 whole channels: 16 pixels at a time through registers. */
__attribute__((target("avx512f"))) static void wino_channel_last_avx512(float *dst, const float *src, size_t hw,
                                                                         int W, int cols, int lanes)
{
    size_t p = 0;
    int y = 0, x = 0; /* pixel p's place, kept without divisions */
    for (; p + 16 <= hw; p += 16) {
        __m512 r[16];
        for (int l = 0; l < 16; l++) r[l] = _mm512_loadu_ps(src + (size_t)l * hw + p);
        wino_transpose16(r);
        for (int k = 0; k < 16; k++) {
            _mm512_storeu_ps(dst + ((size_t)y * cols + x) * lanes, r[k]);
            if (++x == W) x = 0, y++;
        }
    }
    for (; p < hw; p++) {
        for (int l = 0; l < 16; l++) dst[((size_t)y * cols + x) * lanes + l] = src[(size_t)l * hw + p];
        if (++x == W) x = 0, y++;
    }
}
#endif

static void wino_channel_last(const ConvWinograd *c, float *to, WinoZeroed *zeroed, const float *in, int channels,
                              int ns, int rows, int cols, int offset)
{
    const size_t hw = (size_t)c->H * c->W, plane = (size_t)rows * cols;
    const int lanes = wino_round(channels);
    if (wino_zeroed(zeroed, (WinoZeroed){rows, cols, offset, c->H, c->W, channels, lanes, 0}, ns))
        ; /* the zeros around the image are still there */
    else if (lanes != channels)
        memset(to, 0, sizeof(float) * ns * plane * lanes);
    else /* the copy below writes every float of the image: zero only the border around it */
        for (int s = 0; s < ns; s++) {
            float *p = to + (size_t)s * plane * lanes;
            const size_t lane_bytes = sizeof(float) * lanes;
            memset(p, 0, (size_t)offset * cols * lane_bytes);
            for (int y = offset; y < offset + c->H; y++) {
                memset(p + (size_t)y * cols * lanes, 0, (size_t)offset * lane_bytes);
                memset(p + ((size_t)y * cols + offset + c->W) * lanes, 0, (size_t)(cols - offset - c->W) * lane_bytes);
            }
            memset(p + (size_t)(offset + c->H) * cols * lanes, 0, (size_t)(rows - offset - c->H) * cols * lane_bytes);
        }
    /* 16 channels at a time, so that each store fills a whole cache line of the copy while
     * the loads walk 16 planes in order */
    for (int s = 0; s < ns; s++)
        for (int c0 = 0; c0 < channels; c0 += WINO_LANES) {
            const int n = channels - c0 < WINO_LANES ? channels - c0 : WINO_LANES;
            const float *src = in + ((size_t)s * channels + c0) * hw;
            float *dst = to + ((size_t)s * plane + (size_t)offset * cols + offset) * lanes + c0;
#if WINO_X86
            if (c->vector && n == WINO_LANES) {
                wino_channel_last_avx512(dst, src, hw, c->W, cols, lanes);
                continue;
            }
#endif
            for (int y = 0; y < c->H; y++)
                for (int x = 0; x < c->W; x++) {
                    float *pixel = dst + ((size_t)y * cols + x) * lanes;
                    const float *from = src + (size_t)y * c->W + x;
                    for (int l = 0; l < n; l++) pixel[l] = from[(size_t)l * hw];
                }
        }
}

/* One of a chunk's 64 sgemms, C = (beta ? C : 0) + op(A) B: with the AVX-512 transforms
 * on conv_winograd_gemm (dnnl_sgemm's bits without its cost per call, for the shapes it fits),
 * otherwise on oneDNN; so the generic path checks the kernel against oneDNN's bits. */
static void wino_sgemm(const ConvWinograd *c, int trans_a, int M, int N, int K, const float *A, int lda,
                       const float *B, int ldb, int beta, float *C, int ldc)
{
    if (c->vector && conv_winograd_gemm_fits(M, K, beta))
        conv_winograd_gemm(trans_a, M, N, K, A, lda, B, ldb, beta, C, ldc);
    else
        conv_onednn_sgemm(trans_a, 0, M, N, K, A, lda, B, ldb, beta ? 1.0f : 0.0f, C, ldc);
}

/* One chunk of a convolution from its padded channel-last input src (ns, pad_h, pad_w, Cin
 * lanes): input transform, the 64 sgemms through the transformed filters u (64, Cin,
 * Cout), output transform into out (ns, Cout, H, W; accumulate as wino_outputs_body),
 * or with pool the pooled block output into pool's rows. */
static void wino_chunk(ConvWinograd *c, float *out, const float *src, const float *u, int Cin, int Cout, int ns,
                       int accumulate, const WinoPool *pool)
{
    const int tiles = ns * c->tiles_h * c->tiles_w, cin_lanes = wino_round(Cin), cout_lanes = wino_round(Cout);
    if (c->vector)
        wino_inputs_avx512(c, src, cin_lanes, ns);
    else
        wino_inputs_generic(c, src, cin_lanes, ns);
    /* the rows of v and m are tiles, each holding its 64 positions' channels */
    const int vrow = WINO_XI * cin_lanes + WINO_SKEW, mrow = WINO_XI * cout_lanes + WINO_SKEW;
    const size_t ustride = wino_filter_stride(Cin, Cout);
    for (int xi = 0; xi < WINO_XI; xi++)
        wino_sgemm(c, 0, tiles, cout_lanes, cin_lanes, c->v + (size_t)xi * cin_lanes, vrow, u + xi * ustride,
                   cout_lanes, 0, c->m + (size_t)xi * cout_lanes, mrow);
    if (c->vector)
        wino_outputs_avx512(c, out, Cout, ns, accumulate, pool);
    else
        wino_outputs_generic(c, out, Cout, ns, accumulate, pool);
}

/* One convolution in chunks: out (B, Cout, H, W) = (or +=) in (B, Cin, H, W) through the
 * transformed filters u (64, Cin, Cout); with pool, out is unused and the pooled block
 * output goes to pool's rows instead. */
static void wino_run(ConvWinograd *c, float *out, const float *in, const float *u, int Cin, int Cout, int B,
                     int accumulate, const WinoPool *pool)
{
    const size_t pooled = (size_t)Cout * (c->H / 2) * (c->W / 2);
    const size_t hw = (size_t)c->H * c->W;
    for (int s0 = 0; s0 < B; s0 += CONV_WINOGRAD_CHUNK) {
        const int ns = B - s0 < CONV_WINOGRAD_CHUNK ? B - s0 : CONV_WINOGRAD_CHUNK;
        wino_channel_last(c, c->padded, &c->padded_zeroed, in + (size_t)s0 * Cin * hw, Cin, ns, c->pad_h, c->pad_w,
                          WINO_PAD);
        float *dst = pool ? NULL : out + (size_t)s0 * Cout * hw;
        WinoPool chunk;
        if (pool)
            chunk = (WinoPool){pool->out + s0 * pooled, pool->argmax ? pool->argmax + s0 * pooled : NULL, pool->bias};
        wino_chunk(c, dst, c->padded, u, Cin, Cout, ns, accumulate, pool ? &chunk : NULL);
    }
}

/* One chunk of the weights' gradient: the input in (ns, C, H, W) to the 64 positions, the
 * output gradient from its channel-last copy grad (as wino_gradients_body reads it) to
 * the 64 positions, and per position c->du = (first ? 0 : c->du) + v^T m, so that the
 * chunks add up in order. */
static void wino_weights_chunk(ConvWinograd *c, const float *in, const float *grad, int rows, int cols, int offset,
                               int ns, int first)
{
    const size_t ustride = wino_filter_stride(c->C, c->OC);
    const int tiles = ns * c->tiles_h * c->tiles_w, cin_lanes = wino_round(c->C), cout_lanes = wino_round(c->OC);
    const int vrow = WINO_XI * cin_lanes + WINO_SKEW, mrow = WINO_XI * cout_lanes + WINO_SKEW;
    wino_channel_last(c, c->padded, &c->padded_zeroed, in, c->C, ns, c->pad_h, c->pad_w, WINO_PAD);
    if (c->vector) {
        wino_inputs_avx512(c, c->padded, cin_lanes, ns);
        wino_gradients_avx512(c, grad, rows, cols, offset, cout_lanes, ns);
    } else {
        wino_inputs_generic(c, c->padded, cin_lanes, ns);
        wino_gradients_generic(c, grad, rows, cols, offset, cout_lanes, ns);
    }
    for (int xi = 0; xi < WINO_XI; xi++)
        wino_sgemm(c, 1, cin_lanes, cout_lanes, tiles, c->v + (size_t)xi * cin_lanes, vrow,
                   c->m + (size_t)xi * cout_lanes, mrow, !first, c->du + xi * ustride, cout_lanes);
}

/* ---------------------------------------------------------------- public */

int conv_winograd_create(int C, int H, int W, int OC, int K, int max_batch, ConvWinograd **out)
{
    *out = NULL;
    if (K != WINO_R || C < 1 || OC < 1 || H < 1 || W < 1 || max_batch < 1 || !conv_onednn_available())
        return HS_E_INPUT;
    ConvWinograd *c = calloc(1, sizeof *c);
    if (!c) return HS_E_NOMEM;
    c->C = C, c->H = H, c->W = W, c->OC = OC, c->max_batch = max_batch;
    c->tiles_h = (H + WINO_M - 1) / WINO_M;
    c->tiles_w = (W + WINO_M - 1) / WINO_M;
    c->pad_h = c->tiles_h * WINO_M + WINO_N - WINO_M;
    c->pad_w = c->tiles_w * WINO_M + WINO_N - WINO_M;
    const int chunk = max_batch < CONV_WINOGRAD_CHUNK ? max_batch : CONV_WINOGRAD_CHUNK;
    c->vector = wino_has_avx512();
    const size_t widest = (size_t)wino_round(C > OC ? C : OC);
    const size_t filters = (size_t)WINO_XI * wino_filter_stride(C, OC);
    const size_t tiles = (size_t)chunk * c->tiles_h * c->tiles_w * (WINO_XI * widest + WINO_SKEW);
    c->u_forward = malloc(sizeof(float) * filters);
    c->u_backward = malloc(sizeof(float) * filters);
    c->du = malloc(sizeof(float) * filters);
    c->v = malloc(sizeof(float) * tiles);
    c->m = malloc(sizeof(float) * tiles);
    c->padded = malloc(sizeof(float) * chunk * widest * c->pad_h * c->pad_w);
    c->grad = malloc(sizeof(float) * chunk * wino_round(OC) * c->pad_h * c->pad_w);
    const size_t windows = (size_t)(H / 2) * (W / 2) * wino_round(OC) + 1; /* + 1: H or W of 1 */
    c->window_bits = malloc(sizeof(uint32_t) * windows);
    c->window_at = malloc(sizeof(int) * windows);
    if (!c->u_forward || !c->u_backward || !c->v || !c->m || !c->padded || !c->grad || !c->du || !c->window_bits ||
        !c->window_at) {
        conv_winograd_free(c);
        return HS_E_NOMEM;
    }
    *out = c;
    return HS_OK;
}

void conv_winograd_free(ConvWinograd *c)
{
    if (!c) return;
    free(c->u_forward);
    free(c->u_backward);
    free(c->du);
    free(c->v);
    free(c->m);
    free(c->padded);
    free(c->grad);
    free(c->window_bits);
    free(c->window_at);
    free(c);
}

void conv_winograd_set_vector(ConvWinograd *c, int on) { c->vector = on && wino_has_avx512(); }

void conv_winograd_forward(ConvWinograd *c, float *out, const float *in, const float *w, int B)
{
    wino_filters(c, c->u_forward, w, c->OC, c->C, 0);
    wino_run(c, out, in, c->u_forward, c->C, c->OC, B, WINO_STORE, NULL);
}

/* The input's gradient is the correlation of dout, padded by K - 1 - 2 = 2, with the
 * kernels turned by 180 degrees and the channels swapped: the forward's algorithm. */
void conv_winograd_backward_data(ConvWinograd *c, float *din, const float *dout, const float *w, int B)
{
    wino_filters(c, c->u_backward, w, c->C, c->OC, 1);
    wino_run(c, din, dout, c->u_backward, c->OC, c->C, B, WINO_ADD, NULL);
}

/* dw = G^T (sum over tiles of (A dY A^T) . (B^T d B)) G, the transpose of the forward's
 * map from the kernels to the outputs: per position an sgemm [C x tiles] x [tiles x OC]
 * adding chunk after chunk, then one kernel transform of the sums. */
void conv_winograd_backward_weights(ConvWinograd *c, float *dw, const float *dout, const float *in, int B)
{
    const size_t hw = (size_t)c->H * c->W, ustride = wino_filter_stride(c->C, c->OC);
    const int rows = c->tiles_h * WINO_M, cols = c->tiles_w * WINO_M;
    for (int s0 = 0; s0 < B; s0 += CONV_WINOGRAD_CHUNK) {
        const int ns = B - s0 < CONV_WINOGRAD_CHUNK ? B - s0 : CONV_WINOGRAD_CHUNK;
        /* the gradient on the tile grid, no border */
        wino_channel_last(c, c->grad, &c->grad_zeroed, dout + (size_t)s0 * c->OC * hw, c->OC, ns, rows, cols, 0);
        wino_weights_chunk(c, in + (size_t)s0 * c->C * hw, c->grad, rows, cols, 0, ns, s0 == 0);
    }
    if (B < 1) return;
    if (c->vector)
        wino_kernels_avx512(dw, c->du, ustride, c->OC, c->C);
    else
        wino_kernels_generic(dw, c->du, ustride, c->OC, c->C);
}

void conv_winograd_relu_pool_forward(ConvWinograd *c, float *out, int *argmax, const float *in, const float *w,
                                     const float *b, int B)
{
    wino_filters(c, c->u_forward, w, c->OC, c->C, 0);
    /* pooled tile by tile as the output transform makes them (inference: no positions) */
    const WinoPool pool = {out, argmax, b};
    wino_run(c, NULL, in, c->u_forward, c->C, c->OC, B, WINO_STORE, &pool);
}

/* conv_winograd_backward_weights and _backward_data of the unpooled gradient, chunk by
 * chunk from one channel-last copy that the unpool writes (wino_unpool_body): the same
 * floats in the same order as unpooling to a plane and running the two onto a zeroed din,
 * so the same bits (tests/check_conv_winograd.c compares them). */
void conv_winograd_relu_pool_backward(ConvWinograd *c, float *din, float *dw, float *db, const float *dout,
                                      const float *out, const int *argmax, const float *in, const float *w, int B)
{
    const size_t hw = (size_t)c->H * c->W, pooled = (size_t)c->OC * (c->H / 2) * (c->W / 2);
    if (din) wino_filters(c, c->u_backward, w, c->C, c->OC, 1);
    for (int s0 = 0; s0 < B; s0 += CONV_WINOGRAD_CHUNK) {
        const int ns = B - s0 < CONV_WINOGRAD_CHUNK ? B - s0 : CONV_WINOGRAD_CHUNK;
        const int oh = c->H / 2, ow = c->W / 2, lanes = wino_round(c->OC);
        const int zeroed = wino_zeroed(&c->grad_zeroed, (WinoZeroed){c->pad_h, c->pad_w, WINO_PAD, 2 * oh, 2 * ow, lanes,
                                                                     lanes, 0}, ns);
        if (c->vector)
            wino_unpool_avx512(c, zeroed, db, dout + s0 * pooled, out + s0 * pooled, argmax + s0 * pooled, ns);
        else
            wino_unpool_generic(c, zeroed, db, dout + s0 * pooled, out + s0 * pooled, argmax + s0 * pooled, ns);
        wino_weights_chunk(c, in + (size_t)s0 * c->C * hw, c->grad, c->pad_h, c->pad_w, WINO_PAD, ns, s0 == 0);
        /* backward-data: the forward's algorithm on the same copy, padded by 2 */
        if (din)
            wino_chunk(c, din + (size_t)s0 * c->C * hw, c->grad, c->u_backward, c->OC, c->C, ns, WINO_ONTO_ZERO, NULL);
    }
    if (B < 1) return;
    if (c->vector)
        wino_kernels_avx512(dw, c->du, wino_filter_stride(c->C, c->OC), c->OC, c->C);
    else
        wino_kernels_generic(dw, c->du, wino_filter_stride(c->C, c->OC), c->OC, c->C);
}
