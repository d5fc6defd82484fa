/* periodic.c — the measure of a closed-form ring's activity (periodic.h) within an
 * interval: what the accounting of busy time (network_maxmin.c) and of the radio's
 * directions (radio.c) subtract and add for a ring's hops. */
#include "sim/kernel/periodic.h"

#include <math.h>

/* Measure of the periodic set within [t0, t] (all periods, no window). */
static double periodic_cumulative(const NetworkPeriodic *p, double t)
{
    double u = t - p->t0, per = 0;
    if (!(u > 0) || !(p->period > 0)) return 0;
    for (int i = 0; i < p->n_sub; i++) per += p->b[i] - p->a[i];
    double j = floor(u / p->period);
    if (j >= p->count) return p->count * per;
    double r = u - j * p->period, total = j * per;
    for (int i = 0; i < p->n_sub; i++) {
        double part = r - p->a[i];
        if (part > p->b[i] - p->a[i]) part = p->b[i] - p->a[i];
        if (part > 0) total += part;
    }
    return total;
}

double periodic_measure(const NetworkPeriodic *p, double x, double y)
{
    if (x < p->from) x = p->from;
    if (y > p->to) y = p->to;
    if (!(y > x)) return 0;
    double m = periodic_cumulative(p, y) - periodic_cumulative(p, x);
    return m > 0 ? m : 0;
}
