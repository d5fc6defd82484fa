/* trace_markov.c — on/off Markov processes drawn on demand into trace series (trace_markov.h).
 * Durations are exponential (gsl_ran_exponential: -mean log(1 - U)), drawn in pairs of
 * nothing but the series' own order: the k-th duration is the stream's k-th draw. */
#include "sim/kernel/trace_markov.h"

#include "sim/kernel/rng.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct TraceMarkov {
    double mean_up, mean_down; /* s */
    gsl_rng *rng;              /* the node's stream */
    HsDiag *diag;              /* an allocation failure while drawing goes here */
    int cap;                   /* rows allocated in the series */
};

/* Appends the next change: the end of the last row's state. HS_OK or HS_E_NOMEM. */
static int markov_draw(TraceSeries *s)
{
    TraceMarkov *m = s->markov;
    if (s->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 8;
        double *times = realloc(s->times, (size_t)cap * sizeof *times);
        if (times == NULL) return HS_E_NOMEM;
        s->times = times;
        double *values = realloc(s->values, (size_t)cap * sizeof *values);
        if (values == NULL) return HS_E_NOMEM;
        s->values = values;
        m->cap = cap;
    }
    int up = s->values[s->n - 1] > 0.5;
    double duration = gsl_ran_exponential(m->rng, up ? m->mean_up : m->mean_down);
    s->times[s->n] = s->times[s->n - 1] + duration;
    s->values[s->n] = up ? 0 : 1;
    s->n++;
    return HS_OK;
}

int markov_series_init(TraceSeries *s, double mean_up, double mean_down, uint64_t seed, uint64_t node,
                       uint64_t purpose, HsDiag *diag)
{
    memset(s, 0, sizeof *s);
    TraceMarkov *m = s->markov = calloc(1, sizeof *m);
    if (m == NULL) return HS_E_NOMEM;
    *m = (TraceMarkov){.mean_up = mean_up, .mean_down = mean_down, .diag = diag, .cap = 8};
    m->rng = rng_stream_create(seed, node, purpose);
    s->times = malloc((size_t)m->cap * sizeof *s->times);
    s->values = malloc((size_t)m->cap * sizeof *s->values);
    if (m->rng == NULL || s->times == NULL || s->values == NULL) return HS_E_NOMEM;
    /* starts up: a fleet's first round sees every agent, as under availability = always
     * (docs/network.md says why not the stationary law) */
    s->times[0] = 0;
    s->values[0] = 1;
    s->n = 1;
    return markov_draw(s);
}

void markov_series_free(TraceSeries *s)
{
    if (s->markov) {
        if (s->markov->rng) gsl_rng_free(s->markov->rng);
        free(s->markov);
    }
    free(s->times);
    free(s->values);
    memset(s, 0, sizeof *s);
}

void markov_cover(TraceSeries *s, double t)
{
    TraceMarkov *m = s->markov;
    if (m == NULL || !isfinite(t)) return;
    /* a query before the rows kept (the engine forgets a round's past at its start) would
     * read the first kept row's value: a bug in the engine, said loudly */
    if (t < s->times[0]) {
        hs_diag_set(m->diag, HS_E_INTERNAL, NULL, 0, "a markov() process asked at t = %.17g, before its rows kept "
                    "from t = %.17g", t, s->times[0]);
        return;
    }
    while (!(s->times[s->n - 1] > t))
        if (markov_draw(s) != HS_OK) {
            hs_diag_set(m->diag, HS_E_NOMEM, NULL, 0, "out of memory for a markov() process's changes");
            return;
        }
}

void markov_forget_before(TraceSeries *s, double t)
{
    int k = 0;
    while (k + 1 < s->n && s->times[k + 1] <= t) k++;
    if (k == 0) return;
    memmove(s->times, s->times + k, (size_t)(s->n - k) * sizeof *s->times);
    memmove(s->values, s->values + k, (size_t)(s->n - k) * sizeof *s->values);
    s->n -= k;
}
