/* dynamics.c — parsing and evaluating slowdown profiles. */
#include "sim/kernel/dynamics.h"
#include "base/hs_error.h"
#include "base/numtext.h"
#include "base/units.h"

#include <ctype.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Parses "name(a, b, c)" into name and up to max numbers (units per position). */
static int dynamics_call(const char *text, char *name, int name_size, double *args, const UnitKind *units,
                         int expected, char *why, int why_size)
{
    while (isspace((unsigned char)*text)) text++;
    const char *open = strchr(text, '('), *close = strrchr(text, ')');
    if (open == NULL || close == NULL || close < open) {
        snprintf(why, (size_t)why_size, "expected NAME(ARGS), found '%s'", text);
        return HS_E_INPUT;
    }
    int len = (int)(open - text);
    while (len > 0 && isspace((unsigned char)text[len - 1])) len--;
    snprintf(name, (size_t)name_size, "%.*s", len, text);
    char inner[256];
    snprintf(inner, sizeof inner, "%.*s", (int)(close - open - 1), open + 1);
    int n = 0;
    for (char *tok = strtok(inner, ","); tok; tok = strtok(NULL, ",")) {
        if (n == expected) {
            snprintf(why, (size_t)why_size, "%s() takes %d arguments", name, expected);
            return HS_E_INPUT;
        }
        char inner_why[200];
        if (units_parse(tok, units[n], &args[n], inner_why, sizeof inner_why) != HS_OK) {
            snprintf(why, (size_t)why_size, "in %s(): %s", name, inner_why);
            return HS_E_INPUT;
        }
        n++;
    }
    if (n != expected) {
        snprintf(why, (size_t)why_size, "%s() takes %d arguments, found %d", name, expected, n);
        return HS_E_INPUT;
    }
    return HS_OK;
}

int slowdown_parse(const char *text, Slowdown *out, char *why, int why_size)
{
    memset(out, 0, sizeof *out);
    const char *t = text;
    while (isspace((unsigned char)*t)) t++;
    if (strncmp(t, "none", 4) == 0 && t[4 + strspn(t + 4, " \t")] == '\0') return HS_OK;
    char name[32];
    double args[3];
    static const UnitKind markov_units[] = {UNIT_PLAIN, UNIT_PLAIN, UNIT_PLAIN};
    static const UnitKind periodic_units[] = {UNIT_TIME, UNIT_PLAIN};
    if (strncmp(t, "markov", 6) == 0) {
        if (dynamics_call(t, name, sizeof name, args, markov_units, 3, why, why_size) != HS_OK) return HS_E_INPUT;
        out->kind = SLOWDOWN_MARKOV;
        out->p_slow = args[0];
        out->p_recover = args[1];
        out->factor = args[2];
        if (args[0] < 0 || args[0] > 1 || args[1] < 0 || args[1] > 1) {
            snprintf(why, (size_t)why_size, "markov() probabilities must be in [0, 1]");
            return HS_E_INPUT;
        }
        if (!(args[2] >= 1)) {
            snprintf(why, (size_t)why_size, "markov() factor must be at least 1");
            return HS_E_INPUT;
        }
        return HS_OK;
    }
    if (strncmp(t, "periodic", 8) == 0) {
        if (dynamics_call(t, name, sizeof name, args, periodic_units, 2, why, why_size) != HS_OK) return HS_E_INPUT;
        out->kind = SLOWDOWN_PERIODIC;
        out->period = args[0];
        out->amplitude = args[1];
        if (!(args[0] > 0) || args[1] < 0) {
            snprintf(why, (size_t)why_size, "periodic() needs period > 0 and amplitude >= 0");
            return HS_E_INPUT;
        }
        return HS_OK;
    }
    snprintf(why, (size_t)why_size, "'%s' is not none, markov(p_slow, p_recover, factor) or periodic(period, amplitude)", t);
    return HS_E_INPUT;
}

void slowdown_format(const Slowdown *s, char *buf, int size)
{
    char a[NUMTEXT_SIZE], b[NUMTEXT_SIZE], c[NUMTEXT_SIZE];
    switch (s->kind) {
    case SLOWDOWN_MARKOV:
        snprintf(buf, (size_t)size, "markov(%s, %s, %s)", numtext_double(a, sizeof a, s->p_slow),
                 numtext_double(b, sizeof b, s->p_recover), numtext_double(c, sizeof c, s->factor));
        break;
    case SLOWDOWN_PERIODIC:
        snprintf(buf, (size_t)size, "periodic(%s, %s)", numtext_double(a, sizeof a, s->period),
                 numtext_double(b, sizeof b, s->amplitude));
        break;
    default: snprintf(buf, (size_t)size, "none"); break;
    }
}

double slowdown_factor(const Slowdown *s, double jitter_sigma, double t, int *slow, gsl_rng *rng)
{
    double factor = 1.0;
    if (s->kind == SLOWDOWN_MARKOV && rng) {
        double u = gsl_rng_uniform(rng);
        if (*slow) *slow = !(u < s->p_recover);
        else *slow = u < s->p_slow;
        if (*slow) factor = s->factor;
    } else if (s->kind == SLOWDOWN_PERIODIC) {
        factor = 1.0 + s->amplitude * (1.0 - cos(2.0 * 3.14159265358979323846 * t / s->period)) / 2.0;
    }
    if (jitter_sigma > 0 && rng) factor *= exp(jitter_sigma * gsl_ran_ugaussian(rng));
    return factor;
}
