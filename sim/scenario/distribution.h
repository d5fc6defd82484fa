/* distribution.h — the value of an agent attribute: a constant or a distribution drawn
 * once per agent from the agent's own stream.
 *   constant            2 GFLOPS
 *   uniform(a, b)       a <= x < b
 *   normal(mean, sd)    redrawn while x <= 0 (attributes are positive)
 *   lognormal(median, sigma)   median * exp(sigma * N(0,1))
 *   pareto(scale, shape)       scale * U^(-1/shape), heavy-tailed
 *   choice(v1:p1, v2:p2, ...)  probabilities must sum to 1 (within 1e-6)
 *   trace(FILE.csv)     the value follows a trace over time (sim/kernel/trace.h); drawing one
 *                       gives NaN: the world reads the trace's value at time 0
 *   markov(up, down)    availability and outage only (distribution_parse_onoff): on/off
 *                       with exponential durations of means up and down (sim/kernel/trace_markov.h);
 *                       drawing one gives NaN */
#ifndef SIM_DISTRIBUTION_H
#define SIM_DISTRIBUTION_H

#include "base/units.h"

#include <gsl/gsl_rng.h>
#include <stdio.h>

#define DIST_MAX_CHOICES 32

typedef enum {
    DIST_CONSTANT = 0, DIST_UNIFORM, DIST_NORMAL, DIST_LOGNORMAL, DIST_PARETO, DIST_CHOICE,
    DIST_TRACE, /* trace(FILE.csv): a value over time, see sim/kernel/trace.h */
    DIST_MARKOV /* markov(MEAN_UP, MEAN_DOWN): a = mean up, b = mean down (s) */
} DistKind;

typedef struct Distribution {
    DistKind kind;
    double a, b;  /* parameters in SI units (sigma and shape are plain) */
    int n_choices;
    double values[DIST_MAX_CHOICES];
    double probs[DIST_MAX_CHOICES];
    char path[512];  /* DIST_TRACE: the CSV file as written (resolved by the scenario) */
} Distribution;

/* Parses text as a distribution of quantities of the given kind. On error returns
 * HS_E_INPUT and writes the reason (without file:line) into why. */
int distribution_parse(const char *text, UnitKind kind, Distribution *out, char *why, int why_size);

/* Parses text as markov(MEAN_UP, MEAN_DOWN), two times (a number of seconds or with a
 * time unit), each positive and finite. HS_E_INPUT with the reason in why. */
int distribution_parse_onoff(const char *text, Distribution *out, char *why, int why_size);

/* 1 for the kinds whose value changes over a run (trace, markov): the engine follows them. */
int distribution_over_time(const Distribution *d);

/* One draw. Never returns a value <= 0 for positive-only kinds (the caller validates). */
double distribution_draw(const Distribution *d, gsl_rng *rng);

/* Writes the distribution back in SI units so that distribution_parse reads it again
 * to the same value (used for runs.config). */
void distribution_write(const Distribution *d, FILE *out);
/* The same with unit after every value written in the values' unit ("x" for a relative
 * speed; "" is distribution_write). */
void distribution_write_unit(const Distribution *d, const char *unit, FILE *out);

/* The distribution's median-like central value, for estimates and messages. */
double distribution_center(const Distribution *d);

/* The least value a draw can take: the constant, uniform's a, pareto's scale, the
 * smallest choice; 0 for normal and lognormal (their draws are positive but come
 * arbitrarily close to 0); NaN for a trace. */
double distribution_lowest(const Distribution *d);

/* The constant 0: an attribute that is not there (an energy key left out). */
static inline int distribution_is_zero(const Distribution *d)
{
    return d->kind == DIST_CONSTANT && d->a == 0;
}

/* The same distribution (the same draws from the same stream): kind, parameters, choices
 * and file. `2 W` and `2000 mW` are the same. */
int distribution_same(const Distribution *x, const Distribution *y);

#endif
