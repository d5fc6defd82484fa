/* mix.c — see mix.h. O(n) per call; the vectors are a model's parameters. */
#include "models/mix.h"

#include <string.h>

void mix_fragment_bounds(size_t n, int fragments, int k, size_t *begin, size_t *end)
{
    size_t base = n / (size_t)fragments, extra = n % (size_t)fragments, uk = (size_t)k;
    *begin = uk * base + (uk < extra ? uk : extra);
    *end = *begin + base + (uk < extra ? 1 : 0);
}

void mix_fragment_receive(double *sum, int *count, size_t n, int fragments, int k, const float *values)
{
    size_t begin, end;
    mix_fragment_bounds(n, fragments, k, &begin, &end);
    for (size_t p = begin; p < end; p++) sum[p] += values[p - begin];
    count[k]++;
}

void mix_fragment_average(float *x, double *sum, int *count, size_t n, int fragments)
{
    for (int k = 0; k < fragments; k++) {
        if (count[k] == 0) continue;
        size_t begin, end;
        mix_fragment_bounds(n, fragments, k, &begin, &end);
        double weight = 1.0 + count[k];
        for (size_t p = begin; p < end; p++) {
            x[p] = (float)(((double)x[p] + sum[p]) / weight);
            sum[p] = 0;
        }
        count[k] = 0;
    }
}

void mix_neighbourhood_average(float *x, const float *const *copies, int n_copies, size_t n)
{
    double weight = 1.0 + n_copies;
    for (size_t p = 0; p < n; p++) {
        double s = x[p];
        for (int j = 0; j < n_copies; j++) s += copies[j][p];
        x[p] = (float)(s / weight);
    }
}
