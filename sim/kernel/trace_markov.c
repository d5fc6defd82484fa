/* trace_markov.c — on/off Markov processes drawn on demand into trace series (trace_markov.h).
 * Durations are exponential (gsl_ran_exponential: -mean log(1 - U)), drawn in pairs of
 * nothing but the series' own order: the k-th duration is the stream's k-th draw. */
#include "sim/kernel/trace_markov.h"

#include "base/grow.h"
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
    int cap_times = m->cap, cap_values = m->cap; /* two arrays, one capacity */
    if (hs_grow((void **)&s->times, &cap_times, s->n, sizeof *s->times, 8) != HS_OK ||
        hs_grow((void **)&s->values, &cap_values, s->n, sizeof *s->values, 8) != HS_OK)
        return HS_E_NOMEM;
    m->cap = cap_values;
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

int markov_series_clone(const TraceSeries *s, TraceSeries *out)
{
    const TraceMarkov *from = s->markov;
    memset(out, 0, sizeof *out);
    TraceMarkov *m = out->markov = calloc(1, sizeof *m);
    if (m == NULL) return HS_E_NOMEM;
    *m = (TraceMarkov){.mean_up = from->mean_up, .mean_down = from->mean_down, .diag = from->diag, .cap = s->n};
    /* the generator's state as it is: the copy draws the very changes the original would */
    m->rng = gsl_rng_clone(from->rng);
    out->times = malloc((size_t)s->n * sizeof *out->times);
    out->values = malloc((size_t)s->n * sizeof *out->values);
    if (m->rng == NULL || out->times == NULL || out->values == NULL) return HS_E_NOMEM;
    memcpy(out->times, s->times, (size_t)s->n * sizeof *out->times);
    memcpy(out->values, s->values, (size_t)s->n * sizeof *out->values);
    out->n = s->n;
    return HS_OK;
}

/* The process is drawn past b first, so every change still to be drawn is after the cut
 * and the last row is the process's own state, from which the next duration is drawn:
 * the cut needs no memory of its own. Rows within [a, b) go; a row (a, 0) and, at b, the
 * process's value there take their place. A cut for good (b infinite) ends the process:
 * the series becomes a plain one, offline from a (its value at t = inf is then 0). */
int markov_series_offline(TraceSeries *s, double a, double b)
{
    TraceMarkov *m = s->markov;
    if (isfinite(b)) markov_cover(s, b);
    if (m->diag && m->diag->status != HS_OK) return m->diag->status;
    double after = 0;
    if (isfinite(b)) {
        int k = 0;
        while (k + 1 < s->n && s->times[k + 1] <= b) k++;
        after = s->values[k];
    }
    int keep_before = 0, keep_after = 0;
    while (keep_before < s->n && s->times[keep_before] < a) keep_before++;
    if (isfinite(b))
        for (int k = 0; k < s->n; k++) keep_after += s->times[k] > b;
    int n = keep_before + 1 + (isfinite(b) ? 1 + keep_after : 0);
    double *times = malloc((size_t)n * sizeof *times), *values = malloc((size_t)n * sizeof *values);
    if (times == NULL || values == NULL) {
        free(times);
        free(values);
        return HS_E_NOMEM;
    }
    /* a is at or after the first row kept (the engine cuts from now, and keeps the rows
     * from the round's start), so the value before a is the rows' own */
    memcpy(times, s->times, (size_t)keep_before * sizeof *times);
    memcpy(values, s->values, (size_t)keep_before * sizeof *values);
    int j = keep_before;
    times[j] = a;
    values[j++] = 0;
    if (isfinite(b)) {
        times[j] = b;
        values[j++] = after;
        memcpy(times + j, s->times + s->n - keep_after, (size_t)keep_after * sizeof *times);
        memcpy(values + j, s->values + s->n - keep_after, (size_t)keep_after * sizeof *values);
    }
    free(s->times);
    free(s->values);
    s->times = times;
    s->values = values;
    s->n = n;
    m->cap = n;
    if (!isfinite(b)) {
        /* offline for good: nothing more to draw */
        gsl_rng_free(m->rng);
        free(m);
        s->markov = NULL;
    }
    return HS_OK;
}
