/* bench.h — what every benchmark in bench/ shares: a monotonic wall clock, the calling
 * thread's CPU clock, and the comparator qsort needs for medians of doubles. */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <time.h>

static inline double bench_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the calling thread (what a single-thread kernel costs, whatever else
 * the shared machine runs) */
static inline double bench_thread_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* qsort's comparator for doubles, ascending */
static inline int bench_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
