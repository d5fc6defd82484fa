/* queue_hold.c — the classic hold benchmark: with P events pending, pop the earliest
 * and push one a random increment later, many times. Prints operations per second
 * (a hold = one pop + one push = 2 operations) for P = 1e3 ... 1e6; median of 5. */
#include "bench/bench.h"
#include "sim/kernel/queue.h"

#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    printf("%10s %14s %14s\n", "pending", "Mops/s", "ns/op");
    for (size_t pending = 1000; pending <= 1000000; pending *= 10) {
        double rates[5];
        for (int rep = 0; rep < 5; rep++) {
            EventQueue *q = queue_create(pending);
            for (size_t i = 0; i < pending; i++) queue_push(q, gsl_rng_uniform(rng), 0, (int)i, 0);
            size_t holds = 4000000;
            double start = bench_seconds();
            Event e;
            for (size_t i = 0; i < holds; i++) {
                queue_pop(q, &e);
                queue_push(q, e.time + gsl_rng_uniform(rng), 0, e.agent, 0);
            }
            double elapsed = bench_seconds() - start;
            rates[rep] = 2.0 * holds / elapsed;
            queue_free(q);
        }
        qsort(rates, 5, sizeof *rates, bench_compare_doubles);
        printf("%10zu %14.2f %14.2f\n", pending, rates[2] / 1e6, 1e9 / rates[2]);
    }
    gsl_rng_free(rng);
    return 0;
}
