/* periodic.h — a closed-form ring's activity for one of its members, as the network
 * reports it (network.h's active_periodic hooks): a set of intervals repeated every
 * period, within a window, and its measure within an interval. Its own module, below
 * both the network and the radio's accounting (radio.h), which measure it. */
#ifndef SIM_KERNEL_PERIODIC_H
#define SIM_KERNEL_PERIODIC_H

/* Activity of a closed-form ring for one agent: active in
 * [t0 + j*period + a[i], t0 + j*period + b[i]) for 0 <= j < count and i < n_sub,
 * restricted to the window [from, to). */
typedef struct NetworkPeriodic {
    double t0, period;
    int count;
    int n_sub;
    double a[2], b[2];
    double from, to;
} NetworkPeriodic;

/* Measure of the periodic set within [x, y] and its window. */
double periodic_measure(const NetworkPeriodic *p, double x, double y);

#endif
