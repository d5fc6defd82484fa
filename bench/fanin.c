/* fanin.c — a fan-in on the maxmin network alone: N clients upload one model each to one
 * server (a federated round's uploads), every flow sharing the server's downlink.
 *
 * The pattern (the same for every tool that plays it): client i (0 <= i < N) has an uplink
 * drawn uniformly in [10, 100] Mbit/s and a latency in [1, 20] ms, and starts its upload
 * of 1 MB at a time drawn uniformly in [0, 1) s; the server (agent N) has a 1 Gbit/s
 * downlink and 5 ms of latency. A flow waits max(latency_i, latency_server), then shares
 * the downlink max-min with the others (while the server's share is below a client's
 * uplink, which is the whole round but its last moments).
 *
 *   fanin                       the figures of `make bench`: wall and processor time at
 *                               N = 1,000 ... 300,000 (medians of 3) and the exponents of
 *                               their growth (least squares on log N, log time over the
 *                               sizes from 10,000 up)
 *   fanin run N                 plays it once; prints the network's wall and processor time
 *                               and the last arrival (for a whole-process timer)
 *   fanin scale N1 N2 ...       the same at each N (medians of 5), fitted over all of them
 *   fanin dump N FILE           writes the pattern as tests/oracle/simgrid_replay.c's input
 *                               (bench/fanin_simgrid.c plays it in SimGrid)
 *   fanin compare N FILE        plays it and compares every arrival with FILE, the output of
 *                               bench/fanin_simgrid (`task ID TRANSFER END` lines): prints
 *                               the largest relative difference
 *   fanin exact N               plays it with groups (the default) and without (every flow
 *                               settled one by one, NetworkOptions.group_min < 0): prints the
 *                               largest relative difference of arrivals and both wall times,
 *                               and each one's largest relative difference from a reference
 *                               in long double (water-filling of the star from scratch at
 *                               every event: O(N^2), for N up to ~20,000)
 * `--group-min K` before the mode sets NetworkOptions.group_min (-1: no groups: every flow
 * settled one by one, the arithmetic of the first versions). Prints figures; never fails
 * on time. */
#include "bench/bench.h"
#include "sim/network.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Pattern {
    int n;                 /* clients; the server is agent n */
    double *up, *down, *latency; /* (n + 1) */
    double *start;         /* (n) */
    int *order;            /* (n) clients by start time */
    double bytes;
} Pattern;

/* A fixed generator, so every tool sees the same pattern (splitmix64). */
static double uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* Processor seconds of this process (the machine is shared: wall time also counts others). */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const Pattern *sort_pattern;

static int by_start(const void *a, const void *b)
{
    double x = sort_pattern->start[*(const int *)a], y = sort_pattern->start[*(const int *)b];
    return x < y ? -1 : x > y ? 1 : *(const int *)a - *(const int *)b;
}

static int pattern_make(Pattern *p, int n)
{
    p->n = n;
    p->bytes = 1e6;
    p->up = malloc((size_t)(n + 1) * sizeof *p->up);
    p->down = malloc((size_t)(n + 1) * sizeof *p->down);
    p->latency = malloc((size_t)(n + 1) * sizeof *p->latency);
    p->start = malloc((size_t)n * sizeof *p->start);
    p->order = malloc((size_t)n * sizeof *p->order);
    if (!p->up || !p->down || !p->latency || !p->start || !p->order) return -1;
    uint64_t state = 36;
    const double mbit = 1e6 / 8;
    for (int i = 0; i < n; i++) {
        p->up[i] = (10 + 90 * uniform(&state)) * mbit;
        p->down[i] = 100 * mbit;
        p->latency[i] = 1e-3 + 19e-3 * uniform(&state);
        p->start[i] = uniform(&state);
        p->order[i] = i;
    }
    p->up[n] = 1000 * mbit;
    p->down[n] = 1000 * mbit;
    p->latency[n] = 5e-3;
    sort_pattern = p;
    qsort(p->order, (size_t)n, sizeof *p->order, by_start);
    return 0;
}

static void pattern_free(Pattern *p)
{
    free(p->up);
    free(p->down);
    free(p->latency);
    free(p->start);
    free(p->order);
}

static void on_done(void *ctx, const NetworkPayload *payload, double t)
{
    ((double *)ctx)[payload->data] = t;
}

/* Plays the pattern on the network module; arrival[i] = client i's arrival. Returns the
 * wall seconds of the play (creation included), -1 on error. */
static int group_min; /* NetworkOptions.group_min */

static double play_cpu; /* processor seconds of the last play */

static double pattern_play(const Pattern *p, double *arrival, NetworkStats *stats)
{
    double t0 = bench_seconds(), c0 = cpu_seconds();
    NetworkOptions options = {.n_agents = p->n + 1, .uplink = p->up, .downlink = p->down, .latency = p->latency,
                              .backbone = INFINITY, .latency_factor = 1, .bandwidth_factor = 1,
                              .group_min = group_min};
    NetworkHooks hooks = {.ctx = arrival, .done = on_done};
    Network *net = network_create(&options, &hooks);
    if (net == NULL) return -1;
    int next = 0;
    for (;;) {
        double t;
        if (network_next_time(net, &t) != 0) return -1;
        if (next < p->n && p->start[p->order[next]] <= t) {
            int i = p->order[next++];
            NetworkPayload payload = {.kind = 0, .agent = p->n, .data = i};
            if (network_send(net, p->start[i], i, p->n, p->bytes, payload) != 0) return -1;
            continue;
        }
        if (!(t < INFINITY)) break;
        if (network_advance(net, t) != 0) return -1;
    }
    if (stats) network_stats(net, stats);
    network_free(net);
    play_cpu = cpu_seconds() - c0;
    return bench_seconds() - t0;
}

static double last_arrival(const Pattern *p, const double *arrival)
{
    double last = 0;
    for (int i = 0; i < p->n; i++)
        if (arrival[i] > last) last = arrival[i];
    return last;
}

static void sort_doubles(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double tmp = v[j];
            v[j] = v[j - 1];
            v[j - 1] = tmp;
        }
}

/* Wall seconds of one play of N clients (median of `repeat`; *cpu: the median processor
 * seconds), -1 on error. */
static double time_play(int n, int repeat, double *last, double *cpu, NetworkStats *stats)
{
    Pattern p;
    double *arrival = malloc((size_t)n * sizeof *arrival), wall[16], processor[16];
    if (pattern_make(&p, n) != 0 || arrival == NULL) return -1;
    for (int r = 0; r < repeat; r++) {
        if ((wall[r] = pattern_play(&p, arrival, stats)) < 0) return -1;
        processor[r] = play_cpu;
    }
    sort_doubles(wall, repeat);
    sort_doubles(processor, repeat);
    *last = last_arrival(&p, arrival);
    *cpu = processor[repeat / 2];
    pattern_free(&p);
    free(arrival);
    return wall[repeat / 2];
}

/* Least-squares slope of log(time) over log(n). */
static double fit_exponent(const int *n, const double *seconds, int count)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < count; i++) {
        double x = log((double)n[i]), y = log(seconds[i]);
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    return (count * sxy - sx * sy) / (count * sxx - sx * sx);
}

static int scale(const int *sizes, int count, int fit_from, int repeat)
{
    int fit_n[32], n_fit = 0;
    double fit_wall[32], fit_cpu[32];
    printf("%9s %10s %10s %16s %12s %14s\n", "clients", "wall s", "cpu s", "flow events/s", "virtual s",
           "recomputed/ev");
    for (int k = 0; k < count; k++) {
        double last, cpu;
        NetworkStats stats;
        double wall = time_play(sizes[k], repeat, &last, &cpu, &stats);
        if (wall < 0) return 1;
        printf("%9d %10.3f %10.3f %16.0f %12.3f %14.1f\n", sizes[k], wall, cpu, 2.0 * sizes[k] / wall, last,
               stats.recomputes ? (double)stats.flows_recomputed / (double)stats.recomputes : 0.0);
        fflush(stdout);
        if (sizes[k] >= fit_from) {
            fit_n[n_fit] = sizes[k];
            fit_wall[n_fit] = wall;
            fit_cpu[n_fit++] = cpu;
        }
    }
    if (n_fit >= 2)
        printf("time grows as N^%.3f (wall), N^%.3f (cpu) (least squares over N >= %d, medians of %d; goal <= 1.15)\n",
               fit_exponent(fit_n, fit_wall, n_fit), fit_exponent(fit_n, fit_cpu, n_fit), fit_from, repeat);
    return 0;
}

static int dump(int n, const char *path)
{
    Pattern p;
    FILE *f = fopen(path, "w");
    if (f == NULL || pattern_make(&p, n) != 0) return 1;
    fprintf(f, "# bench/fanin: %d clients upload %.17g bytes to agent %d\nagents %d\nbackbone inf\n", n, p.bytes, n,
            n + 1);
    for (int i = 0; i <= n; i++)
        fprintf(f, "agent %d 1e9 %.17g %.17g %.17g\n", i, p.up[i], p.down[i], p.latency[i]);
    for (int i = 0; i < n; i++) fprintf(f, "task %d m %d %d %.17g %.17g\n", i, i, n, p.bytes, p.start[i]);
    pattern_free(&p);
    return fclose(f) == 0 ? 0 : 1;
}

static int compare(int n, const char *path)
{
    Pattern p;
    double *arrival = malloc((size_t)n * sizeof *arrival), *other = malloc((size_t)n * sizeof *other);
    FILE *f = fopen(path, "r");
    if (f == NULL || arrival == NULL || other == NULL || pattern_make(&p, n) != 0) return 1;
    for (int i = 0; i < n; i++) other[i] = NAN;
    int id;
    double transfer, end;
    while (fscanf(f, " task %d %lf %lf", &id, &transfer, &end) == 3)
        if (id >= 0 && id < n) other[id] = end;
    fclose(f);
    if (pattern_play(&p, arrival, NULL) < 0) return 1;
    double worst = 0;
    int at = -1;
    for (int i = 0; i < n; i++) {
        double d = fabs(arrival[i] - other[i]) / fabs(other[i]);
        if (!(d <= worst)) worst = d, at = i;
    }
    printf("%d arrivals compared: largest relative difference %.3g (client %d: hetsim %.17g, other %.17g)\n", n,
           worst, at, at >= 0 ? arrival[at] : NAN, at >= 0 ? other[at] : NAN);
    pattern_free(&p);
    free(arrival);
    free(other);
    return 0;
}

static const double *sort_caps;

static int by_cap(const void *a, const void *b)
{
    double x = sort_caps[*(const int *)a], y = sort_caps[*(const int *)b];
    return x < y ? -1 : x > y ? 1 : *(const int *)a - *(const int *)b;
}

/* The pattern's arrivals in long double: at every activation or completion, the max-min
 * allocation of the star from scratch (clients by uplink: each takes its uplink while
 * that is below the fair share of what is left of the server's downlink), then every
 * flow advances to the next event. */
static int reference_play(const Pattern *p, double *arrival)
{
    int n = p->n, *by = malloc((size_t)n * sizeof *by), *state = calloc((size_t)n, sizeof *state);
    long double *left = malloc((size_t)n * sizeof *left), *rate = malloc((size_t)n * sizeof *rate);
    double *active = malloc((size_t)n * sizeof *active);
    if (!by || !state || !left || !rate || !active) return -1;
    for (int i = 0; i < n; i++) {
        by[i] = i;
        left[i] = p->bytes;
        double wait = p->latency[i] > p->latency[n] ? p->latency[i] : p->latency[n];
        active[i] = p->start[i] + wait; /* as the network computes it */
    }
    sort_caps = p->up;
    qsort(by, (size_t)n, sizeof *by, by_cap);
    long double now = 0;
    for (int remaining = n; remaining > 0;) {
        int m = 0; /* transferring */
        for (int i = 0; i < n; i++) {
            if (state[i] == 0 && active[i] <= now) state[i] = 1;
            m += state[i] == 1;
        }
        long double residual = p->down[n], level = 0;
        for (int k = 0, rest = m; k < n; k++) {
            int i = by[k];
            if (state[i] != 1) continue;
            if ((long double)p->up[i] * rest <= residual) {
                rate[i] = p->up[i];
                residual -= p->up[i];
                rest--;
            } else {
                rate[i] = -1; /* at the level */
            }
            if (rest > 0) level = residual / rest;
        }
        long double next = INFINITY;
        for (int i = 0; i < n; i++) {
            if (state[i] == 1 && rate[i] < 0) rate[i] = level;
            if (state[i] == 0 && active[i] < next) next = active[i];
            if (state[i] == 1 && now + left[i] / rate[i] < next) next = now + left[i] / rate[i];
        }
        for (int i = 0; i < n; i++) {
            if (state[i] != 1) continue;
            left[i] -= rate[i] * (next - now);
            if (left[i] <= 1e-9L) { /* 1e-15 of a message */
                state[i] = 2;
                arrival[i] = (double)next;
                remaining--;
            }
        }
        now = next;
    }
    free(by);
    free(state);
    free(left);
    free(rate);
    free(active);
    return 0;
}

static double largest_difference(const double *a, const double *b, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]) / fabs(b[i]);
        if (!(d <= worst)) worst = d;
    }
    return worst;
}

static int exact(int n)
{
    Pattern p;
    double *grouped = malloc((size_t)n * sizeof *grouped), *single = malloc((size_t)n * sizeof *single);
    if (grouped == NULL || single == NULL || pattern_make(&p, n) != 0) return 1;
    NetworkStats stats;
    double wall_grouped = pattern_play(&p, grouped, &stats);
    group_min = -1;
    double wall_single = pattern_play(&p, single, NULL);
    group_min = 0;
    if (wall_grouped < 0 || wall_single < 0) return 1;
    double worst = 0;
    int at = 0, equal = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs(grouped[i] - single[i]) / fabs(single[i]);
        equal += grouped[i] == single[i];
        if (d > worst) worst = d, at = i;
    }
    printf("%d arrivals: %d bitwise equal, largest relative difference %.3g (client %d: %.17g vs %.17g); "
           "wall %.3f s with groups, %.3f s without; %llu groups, %llu joins, %llu members turned back\n",
           n, equal, worst, at, grouped[at], single[at], wall_grouped, wall_single, (unsigned long long)stats.groups,
           (unsigned long long)stats.joined, (unsigned long long)stats.detached);
    if (n <= 20000) {
        double *reference = malloc((size_t)n * sizeof *reference);
        if (reference == NULL || reference_play(&p, reference) != 0) return 1;
        printf("against the long double reference: with groups %.3g, without %.3g (largest relative differences)\n",
               largest_difference(grouped, reference, n), largest_difference(single, reference, n));
        free(reference);
    }
    pattern_free(&p);
    free(grouped);
    free(single);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--group-min") == 0) {
        group_min = atoi(argv[2]);
        argc -= 2;
        argv += 2;
    }
    if (argc >= 3 && strcmp(argv[1], "run") == 0) {
        double last, cpu;
        double wall = time_play(atoi(argv[2]), 1, &last, &cpu, NULL);
        if (wall < 0) return 1;
        printf("fanin %s clients: network %.3f s wall, %.3f s cpu, last arrival %.9f s\n", argv[2], wall, cpu, last);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "scale") == 0) {
        int sizes[32], count = 0;
        for (int i = 2; i < argc && count < 32; i++) sizes[count++] = atoi(argv[i]);
        return scale(sizes, count, sizes[0], 5);
    }
    if (argc == 4 && strcmp(argv[1], "dump") == 0) return dump(atoi(argv[2]), argv[3]);
    if (argc == 4 && strcmp(argv[1], "compare") == 0) return compare(atoi(argv[2]), argv[3]);
    if (argc == 3 && strcmp(argv[1], "exact") == 0) return exact(atoi(argv[2]));
    if (argc > 1) {
        fprintf(stderr, "usage: fanin [run N | scale N... | dump N FILE | compare N FILE | exact N]\n");
        return 2;
    }
    const int sizes[] = {1000, 3000, 10000, 30000, 100000, 300000};
    return scale(sizes, 6, 10000, 3);
}
