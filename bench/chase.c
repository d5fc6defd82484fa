/* chase.c — this machine's floor for a state read in random order: the latency of a
 * dependent random access (each address read from the previous line, as a message's
 * records are found one from another: entry -> flow -> link -> heap item) over an array
 * the size of the 1 M-agent dpsgd state, on 4 KB and on 2 MiB pages, and the time per
 * access of independent random reads (addresses known ahead, as a software prefetch or
 * the out-of-order core can overlap them). docs/results/network.md ("dpsgd's time, eighth
 * pass") multiplies the lines a message misses by these to bound what an event-by-event
 * exact max-min simulation can reach.
 *
 *   chase [MiB [steps]]     defaults: 1024 MiB (the 1 M-agent peak, 952 MiB), 4 M steps
 *
 * One line per page size: the median over 5 repeats of processor ns per access (the
 * thread's CPU clock), dependent and independent, and how much of the array the kernel
 * put on huge pages (AnonHugePages of the mapping). */
#define _DEFAULT_SOURCE
#include "bench/bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { LINE = 64, WORDS = LINE / 8, REPEATS = 5 };
#define HUGE_PAGE ((size_t)2 << 20)

static uint64_t chase_rng(uint64_t *s) /* xorshift64*: a fixed, cheap stream */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* kB of the mapping at p on huge pages (smaps' AnonHugePages), -1 when unreadable */
static long chase_huge_kb(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL) return -1;
    char line[512];
    int inside = 0;
    long kb = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long from, to;
        if (sscanf(line, "%lx-%lx ", &from, &to) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = (uintptr_t)p >= from && (uintptr_t)p < to;
        else if (inside && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

/* One cycle through every line (Sattolo's shuffle): line i's first word holds the next. */
static void chase_link(uint64_t *a, size_t lines, uint64_t seed)
{
    uint32_t *order = malloc(lines * sizeof *order);
    if (order == NULL) {
        fprintf(stderr, "chase: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < lines; i++) order[i] = (uint32_t)i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = (size_t)(chase_rng(&seed) % i);
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++) a[(size_t)order[i] * WORDS] = order[(i + 1) % lines];
    free(order);
}

static double chase_median(double *v)
{
    qsort(v, REPEATS, sizeof *v, bench_compare_doubles);
    return v[REPEATS / 2];
}

static void chase_run(size_t bytes, long steps, int huge)
{
    uint8_t *raw = mmap(NULL, bytes + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        fprintf(stderr, "chase: mmap of %zu bytes failed\n", bytes);
        exit(1);
    }
    uint64_t *a = (uint64_t *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    (void)madvise(a, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE); /* advice: see huge_kb */
    size_t lines = bytes / LINE;
    memset(a, 0, bytes);
    chase_link(a, lines, 0x9E3779B97F4A7C15ull);
    double dep[REPEATS], ind[REPEATS];
    uint64_t p = 0, sink = 0;
    for (int r = 0; r < REPEATS; r++) {
        double t0 = bench_thread_seconds();
        for (long s = 0; s < steps; s++) p = a[p * WORDS];
        dep[r] = (bench_thread_seconds() - t0) / (double)steps * 1e9;
        uint64_t seed = 12345 + (uint64_t)r;
        t0 = bench_thread_seconds();
        for (long s = 0; s < steps; s++) sink += a[(chase_rng(&seed) % lines) * WORDS];
        ind[r] = (bench_thread_seconds() - t0) / (double)steps * 1e9;
    }
    printf("chase %s pages: %zu MiB, dependent %.1f ns/access, independent %.1f ns/access, "
           "on huge pages %ld of %zu kB (sink %llu)\n",
           huge ? "2 MiB" : "4 KB", bytes >> 20, chase_median(dep), chase_median(ind), chase_huge_kb(a),
           bytes >> 10, (unsigned long long)((p + sink) & 1));
    munmap(raw, bytes + HUGE_PAGE);
}

int main(int argc, char **argv)
{
    long mib = argc > 1 ? atol(argv[1]) : 1024, steps = argc > 2 ? atol(argv[2]) : 4L << 20;
    if (mib < 1 || mib > (1L << 16) || steps < 1) { /* 64 GiB: 2^30 lines, indices in 32 bits */
        fprintf(stderr, "usage: chase [MiB (1..65536) [steps (>= 1)]]\n");
        return 2;
    }
    chase_run((size_t)mib << 20, steps, 0);
    chase_run((size_t)mib << 20, steps, 1);
    return 0;
}
