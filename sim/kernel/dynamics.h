/* dynamics.h — how an agent's speed changes over virtual time.
 *   slowdown = none
 *   slowdown = markov(p_slow, p_recover, factor)  two states per agent, evaluated at the
 *              start of each computation: fast -> slow with probability p_slow, slow ->
 *              fast with p_recover; a slow agent's computations take factor times longer
 *   slowdown = periodic(period, amplitude)  durations scale by
 *              1 + amplitude * (1 - cos(2 pi t / period)) / 2, in [1, 1 + amplitude]
 *   jitter   = sigma  every computation's duration is multiplied by exp(sigma N(0,1))
 *              (median 1), from the agent's own stream
 * Draws come from the agent's RNG_PURPOSE_DYNAMICS stream, in the order of its own
 * computations, so they do not depend on other agents or threads. */
#ifndef SIM_DYNAMICS_H
#define SIM_DYNAMICS_H

#include <gsl/gsl_rng.h>

typedef enum { SLOWDOWN_NONE = 0, SLOWDOWN_MARKOV, SLOWDOWN_PERIODIC } SlowdownKind;

typedef struct Slowdown {
    SlowdownKind kind;
    double p_slow, p_recover, factor; /* markov */
    double period, amplitude;         /* periodic (period in seconds) */
} Slowdown;

int slowdown_parse(const char *text, Slowdown *out, char *why, int why_size);
/* Writes it back in a form slowdown_parse reads (runs.config). */
void slowdown_format(const Slowdown *s, char *buf, int size);

/* Duration multiplier for one computation starting at time t. *slow is the agent's
 * markov state (updated); rng is the agent's dynamics stream (NULL when the agent has
 * neither randomness in its slowdown nor jitter). */
double slowdown_factor(const Slowdown *s, double jitter_sigma, double t, int *slow, gsl_rng *rng);

#endif
