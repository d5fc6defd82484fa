/* bench.h — what every benchmark in bench/ shares: a monotonic wall clock. */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <time.h>

static inline double bench_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
