/* quantize.c — QSGD and the scaled sign (quantize.h). O(n) per message, sums in double. */
#include "sim/stages/quantize.h"

#include <math.h>

size_t quantize_qsgd(const float *in, float *out, size_t n, int levels, gsl_rng *rng)
{
    double squares = 0;
    for (size_t i = 0; i < n; i++) squares += (double)in[i] * (double)in[i];
    double norm = sqrt(squares), s = levels;
    for (size_t i = 0; i < n; i++) {
        /* every entry draws, even a zero one: the stream's position does not depend on
         * the values */
        double u = gsl_rng_uniform(rng);
        if (!(norm > 0)) {
            out[i] = 0.0f;
            continue;
        }
        double r = s * fabs((double)in[i]) / norm, low = floor(r);
        double level = low + (u < r - low ? 1.0 : 0.0);
        double magnitude = norm * level / s;
        out[i] = (float)(in[i] < 0 ? -magnitude : magnitude);
    }
    return n;
}

size_t quantize_sign(const float *in, float *out, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += fabs((double)in[i]);
    float scale = n > 0 ? (float)(sum / (double)n) : 0.0f;
    for (size_t i = 0; i < n; i++) out[i] = in[i] > 0 ? scale : in[i] < 0 ? -scale : 0.0f;
    return n;
}

double quantize_wire_bytes(CompressScheme scheme, size_t n, int levels)
{
    double bits = scheme == COMPRESS_SIGN ? 1.0 : 1.0 + ceil(log2((double)levels + 1.0));
    double bytes = 4.0 + ceil((double)n * bits / 8.0), dense = 4.0 * (double)n;
    return bytes < dense ? bytes : dense;
}

int quantize_scheme(CompressScheme scheme)
{
    return scheme == COMPRESS_QSGD || scheme == COMPRESS_SIGN;
}
