/* topology.c — wall time of topology_build_kind for random-regular graphs (the draw, the
 * CSR and its weights, the connectivity check), from D-PSGD's sizes (10,000 agents,
 * degree 8) to a million agents, and dense ones: the densest pairing (2d = n − 1) and
 * complements (2d >= n). Prints the median of 3 builds (seeds 1-3) in ms; asserts
 * nothing about time. About half a minute. */
#include "bench/bench.h"
#include "sim/scenario/topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int compare_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median build time in ms over seeds 1..3, or a negative number when a build fails. */
static double bench_build(int n, int degree)
{
    double ms[3];
    for (int s = 0; s < 3; s++) {
        Topology t;
        HsDiag diag;
        hs_diag_clear(&diag);
        double start = bench_seconds();
        int status = topology_build_kind(TOPO_RANDOM_REGULAR, n, degree, "bench", (uint64_t)s + 1, &t, &diag);
        ms[s] = (bench_seconds() - start) * 1e3;
        if (status != HS_OK) {
            fprintf(stderr, "%s\n", diag.message);
            return -1;
        }
        topology_free(&t);
    }
    qsort(ms, 3, sizeof *ms, compare_double);
    return ms[1];
}

int main(void)
{
    static const int sizes[][2] = {{1000, 8}, {10000, 8}, {10000, 32}, {100000, 4}, {100000, 8},
                                   {1000000, 4}, {20000, 2}, {2001, 1000}, {2000, 1000}, {2000, 1998}};
    printf("%9s %7s %10s\n", "agents", "degree", "median ms");
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int n = sizes[k][0], degree = sizes[k][1];
        double ms = bench_build(n, degree);
        if (ms < 0) return 1;
        printf("%9d %7d %10.1f\n", n, degree, ms);
    }
    return 0;
}
