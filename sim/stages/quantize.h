/* quantize.h — quantizing compressors of [compression] (scheme = qsgd | sign), beside the
 * sparsifiers of compress.c, which calls them from compress_apply; the feedback rules
 * (ef, ef21, econtrol) apply to them as to any compressor.
 *
 *   qsgd   QSGD's stochastic quantization with s = `levels` levels (Alistarh, Grubic, Li,
 *          Tomioka, Vojnovic, "QSGD: Communication-Efficient SGD via Gradient Quantization
 *          and Encoding", NeurIPS 2017): Q(v)_i = |v|_2 sign(v_i) l_i / s, l_i = floor(r_i)
 *          + 1 with probability r_i - floor(r_i), r_i = s |v_i| / |v|_2, else floor(r_i);
 *          unbiased, E Q(v) = v. The draws come from the sender's own stream. On the wire:
 *          the norm (4 bytes) and per entry a sign bit and ceil(log2(s + 1)) bits for l_i,
 *          fixed width (the paper's Elias coding of the levels is shorter for sparse
 *          levels; not modelled): levels = 7 is 4 bits per entry, 127 is 8 bits.
 *   sign   1-bit compression, the scaled sign of EF-SignSGD (Karimireddy, Rebjock, Stich,
 *          Jaggi, "Error Feedback Fixes SignSGD and other Gradient Compression Schemes",
 *          ICML 2019): C(v)_i = (|v|_1 / n) sign(v_i), biased (use it with feedback = ef, as
 *          the paper does); on the wire the scale (4 bytes) and a bit per entry. An entry
 *          exactly 0 is sent as 0 (sign(0) = 0) and counted as one bit, as if the decoder
 *          knew it: a real encoding needs log2(3) bits for the three values.
 * Both keep every entry (the message is dense in its own encoding). */
#ifndef SIM_STAGES_QUANTIZE_H
#define SIM_STAGES_QUANTIZE_H

#include "sim/scenario/scenario.h"

#include <gsl/gsl_rng.h>
#include <stddef.h>

/* out = QSGD's Q(in) with `levels` levels (n floats; in, out must not overlap), drawing
 * n uniforms from rng in entry order. Returns n. */
size_t quantize_qsgd(const float *in, float *out, size_t n, int levels, gsl_rng *rng);
/* out = (|in|_1 / n) sign(in). Returns n. */
size_t quantize_sign(const float *in, float *out, size_t n);
/* Bytes of one message of n entries (levels: qsgd's), at most the dense 4 n. */
double quantize_wire_bytes(CompressScheme scheme, size_t n, int levels);
/* 1 for the schemes of this file. */
int quantize_scheme(CompressScheme scheme);

#endif
