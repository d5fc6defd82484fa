/* distribution.c — parsing "name(arg, arg)" forms and drawing with GSL. */
#include "sim/scenario/distribution.h"
#include "base/hs_error.h"
#include "base/numtext.h"

#include <ctype.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Splits "a, b, c" at top-level commas into at most max trimmed pieces in buf. */
static int distribution_split_args(char *args, char **pieces, int max)
{
    int n = 0;
    char *p = args;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        while (isspace((unsigned char)*p)) p++;
        size_t len = strlen(p);
        while (len > 0 && isspace((unsigned char)p[len - 1])) p[--len] = '\0';
        if (n == max) return -1;
        pieces[n++] = p;
        if (!comma) break;
        p = comma + 1;
    }
    return n;
}

static int distribution_parse_pair(char **args, int n, UnitKind kind_a, UnitKind kind_b,
                                   Distribution *out, const char *name, char *why, int why_size)
{
    if (n != 2) {
        snprintf(why, (size_t)why_size, "%s takes 2 arguments, found %d", name, n);
        return HS_E_INPUT;
    }
    char inner[200];
    if (units_parse(args[0], kind_a, &out->a, inner, sizeof inner) != HS_OK ||
        units_parse(args[1], kind_b, &out->b, inner, sizeof inner) != HS_OK) {
        snprintf(why, (size_t)why_size, "in %s(): %s", name, inner);
        return HS_E_INPUT;
    }
    return HS_OK;
}

static int distribution_parse_choice(char **args, int n, UnitKind kind, Distribution *out,
                                     char *why, int why_size)
{
    double total = 0;
    char inner[200];
    out->n_choices = n;
    for (int i = 0; i < n; i++) {
        char *colon = strrchr(args[i], ':');
        if (colon == NULL) {
            snprintf(why, (size_t)why_size, "choice() entry '%s' needs VALUE:PROBABILITY", args[i]);
            return HS_E_INPUT;
        }
        *colon = '\0';
        if (units_parse(args[i], kind, &out->values[i], inner, sizeof inner) != HS_OK ||
            units_parse(colon + 1, UNIT_PLAIN, &out->probs[i], inner, sizeof inner) != HS_OK) {
            snprintf(why, (size_t)why_size, "in choice(): %s", inner);
            return HS_E_INPUT;
        }
        if (out->probs[i] < 0 || out->probs[i] > 1) {
            snprintf(why, (size_t)why_size, "choice() probability %g is outside [0, 1]", out->probs[i]);
            return HS_E_INPUT;
        }
        total += out->probs[i];
    }
    if (fabs(total - 1.0) > 1e-6) {
        snprintf(why, (size_t)why_size, "choice() probabilities sum to %.6g, not 1", total);
        return HS_E_INPUT;
    }
    return HS_OK;
}

int distribution_parse(const char *text, UnitKind kind, Distribution *out, char *why, int why_size)
{
    memset(out, 0, sizeof *out);
    while (isspace((unsigned char)*text)) text++;
    const char *open = strchr(text, '(');
    if (open == NULL) {
        out->kind = DIST_CONSTANT;
        return units_parse(text, kind, &out->a, why, why_size);
    }
    char name[32];
    size_t name_len = (size_t)(open - text);
    while (name_len > 0 && isspace((unsigned char)text[name_len - 1])) name_len--;
    if (name_len == 0 || name_len >= sizeof name) {
        snprintf(why, (size_t)why_size, "expected a distribution name before '('");
        return HS_E_INPUT;
    }
    memcpy(name, text, name_len);
    name[name_len] = '\0';
    const char *close = strrchr(open, ')');
    if (close == NULL) {
        snprintf(why, (size_t)why_size, "missing ')' in %s(...)", name);
        return HS_E_INPUT;
    }
    for (const char *t = close + 1; *t; t++)
        if (!isspace((unsigned char)*t)) {
            snprintf(why, (size_t)why_size, "unexpected '%s' after %s(...)", t, name);
            return HS_E_INPUT;
        }
    char args_buf[1024];
    size_t args_len = (size_t)(close - open - 1);
    if (args_len >= sizeof args_buf) {
        snprintf(why, (size_t)why_size, "%s(...) is too long", name);
        return HS_E_INPUT;
    }
    memcpy(args_buf, open + 1, args_len);
    args_buf[args_len] = '\0';
    char *args[DIST_MAX_CHOICES];
    int n = distribution_split_args(args_buf, args, DIST_MAX_CHOICES);
    if (n < 0) {
        snprintf(why, (size_t)why_size, "%s() has more than %d arguments", name, DIST_MAX_CHOICES);
        return HS_E_INPUT;
    }
    int status;
    if (strcmp(name, "uniform") == 0) {
        out->kind = DIST_UNIFORM;
        status = distribution_parse_pair(args, n, kind, kind, out, name, why, why_size);
        if (status == HS_OK && !(out->a < out->b)) {
            snprintf(why, (size_t)why_size, "uniform(a, b) needs a < b");
            status = HS_E_INPUT;
        }
    } else if (strcmp(name, "normal") == 0) {
        out->kind = DIST_NORMAL;
        status = distribution_parse_pair(args, n, kind, kind, out, name, why, why_size);
        if (status == HS_OK && (out->a <= 0 || out->b < 0)) {
            snprintf(why, (size_t)why_size, "normal(mean, sd) needs mean > 0 and sd >= 0");
            status = HS_E_INPUT;
        }
    } else if (strcmp(name, "lognormal") == 0) {
        out->kind = DIST_LOGNORMAL;
        status = distribution_parse_pair(args, n, kind, UNIT_PLAIN, out, name, why, why_size);
        if (status == HS_OK && (out->a <= 0 || out->b < 0)) {
            snprintf(why, (size_t)why_size, "lognormal(median, sigma) needs median > 0 and sigma >= 0");
            status = HS_E_INPUT;
        }
    } else if (strcmp(name, "pareto") == 0) {
        out->kind = DIST_PARETO;
        status = distribution_parse_pair(args, n, kind, UNIT_PLAIN, out, name, why, why_size);
        if (status == HS_OK && (out->a <= 0 || out->b <= 0)) {
            snprintf(why, (size_t)why_size, "pareto(scale, shape) needs scale > 0 and shape > 0");
            status = HS_E_INPUT;
        }
    } else if (strcmp(name, "trace") == 0) {
        out->kind = DIST_TRACE;
        if (n != 1 || args[0][0] == '\0') {
            snprintf(why, (size_t)why_size, "trace() takes one file name");
            return HS_E_INPUT;
        }
        snprintf(out->path, sizeof out->path, "%s", args[0]);
        status = HS_OK;
    } else if (strcmp(name, "choice") == 0) {
        out->kind = DIST_CHOICE;
        status = distribution_parse_choice(args, n, kind, out, why, why_size);
    } else {
        snprintf(why, (size_t)why_size,
                 "unknown distribution '%s' (use uniform, normal, lognormal, pareto, choice, trace)", name);
        status = HS_E_INPUT;
    }
    /* an infinite argument makes every draw inf or NaN: uniform(x, inf) ran as the constant
     * inf (issue 28 class 7) */
    int two_numbers = out->kind == DIST_UNIFORM || out->kind == DIST_NORMAL || out->kind == DIST_LOGNORMAL ||
                      out->kind == DIST_PARETO;
    if (status == HS_OK && two_numbers && !(isfinite(out->a) && isfinite(out->b))) {
        snprintf(why, (size_t)why_size, "%s() with an infinite argument draws the same inf (or nothing) every time; "
                 "write inf alone for an unlimited value", name);
        status = HS_E_INPUT;
    }
    return status;
}

int distribution_parse_onoff(const char *text, Distribution *out, char *why, int why_size)
{
    memset(out, 0, sizeof *out);
    while (isspace((unsigned char)*text)) text++;
    size_t len = strlen(text);
    while (len > 0 && isspace((unsigned char)text[len - 1])) len--;
    char args_buf[1024];
    if (strncmp(text, "markov", 6) != 0 || len < 8 || len - 8 >= sizeof args_buf) {
        snprintf(why, (size_t)why_size, "expected markov(MEAN_UP, MEAN_DOWN)");
        return HS_E_INPUT;
    }
    const char *open = text + 6;
    while (isspace((unsigned char)*open)) open++;
    if (*open != '(' || text[len - 1] != ')') {
        snprintf(why, (size_t)why_size, "expected markov(MEAN_UP, MEAN_DOWN)");
        return HS_E_INPUT;
    }
    size_t args_len = (size_t)(text + len - 1 - (open + 1));
    memcpy(args_buf, open + 1, args_len);
    args_buf[args_len] = '\0';
    char *args[3];
    int n = distribution_split_args(args_buf, args, 3);
    if (n != 2 || !args[0][0] || !args[1][0]) {
        snprintf(why, (size_t)why_size, "markov(MEAN_UP, MEAN_DOWN) takes 2 times, the mean up and the mean down "
                 "durations");
        return HS_E_INPUT;
    }
    out->kind = DIST_MARKOV;
    if (distribution_parse_pair(args, n, UNIT_TIME, UNIT_TIME, out, "markov", why, why_size) != HS_OK)
        return HS_E_INPUT;
    if (!(out->a > 0 && isfinite(out->a)) || !(out->b > 0 && isfinite(out->b))) {
        snprintf(why, (size_t)why_size, "markov(MEAN_UP, MEAN_DOWN) needs both means positive and finite "
                 "(found %g s and %g s)", out->a, out->b);
        return HS_E_INPUT;
    }
    return HS_OK;
}

int distribution_over_time(const Distribution *d)
{
    return d->kind == DIST_TRACE || d->kind == DIST_MARKOV;
}

double distribution_draw(const Distribution *d, gsl_rng *rng)
{
    switch (d->kind) {
    case DIST_UNIFORM: return d->a + (d->b - d->a) * gsl_rng_uniform(rng);
    case DIST_NORMAL: {
        /* Attributes are positive: redraw a bounded number of times, then fall back to
         * the mean so a pathological sd cannot loop forever. */
        for (int tries = 0; tries < 1000; tries++) {
            double x = d->a + gsl_ran_gaussian(rng, d->b);
            if (x > 0) return x;
        }
        return d->a;
    }
    case DIST_LOGNORMAL: return d->a * exp(d->b * gsl_ran_ugaussian(rng));
    case DIST_PARETO: return gsl_ran_pareto(rng, d->b, d->a);
    case DIST_TRACE:
    case DIST_MARKOV: return NAN;
    case DIST_CHOICE: {
        double u = gsl_rng_uniform(rng), acc = 0;
        for (int i = 0; i < d->n_choices; i++) {
            acc += d->probs[i];
            if (u < acc) return d->values[i];
        }
        return d->values[d->n_choices - 1];
    }
    default: return d->a;
    }
}

void distribution_write(const Distribution *d, FILE *out)
{
    distribution_write_unit(d, "", out);
}

void distribution_write_unit(const Distribution *d, const char *unit, FILE *out)
{
    /* numbers as the shortest text that reads back to the same double (base/numtext.h) */
    char a[NUMTEXT_SIZE], b[NUMTEXT_SIZE];
    const char *name = d->kind == DIST_UNIFORM ? "uniform" : d->kind == DIST_NORMAL ? "normal"
                       : d->kind == DIST_LOGNORMAL ? "lognormal" : "pareto";
    /* the second argument is in the values' unit for uniform and normal; lognormal's
     * sigma and pareto's shape are plain */
    const char *second = d->kind == DIST_UNIFORM || d->kind == DIST_NORMAL ? unit : "";
    switch (d->kind) {
    case DIST_UNIFORM:
    case DIST_NORMAL:
    case DIST_LOGNORMAL:
    case DIST_PARETO:
        fprintf(out, "%s(%s%s, %s%s)", name, numtext_double(a, sizeof a, d->a), unit,
                numtext_double(b, sizeof b, d->b), second);
        break;
    case DIST_CHOICE:
        fputs("choice(", out);
        for (int i = 0; i < d->n_choices; i++)
            fprintf(out, "%s%s%s:%s", i ? ", " : "", numtext_double(a, sizeof a, d->values[i]), unit,
                    numtext_double(b, sizeof b, d->probs[i]));
        fputc(')', out);
        break;
    case DIST_TRACE: fprintf(out, "trace(%s)", d->path); break;
    case DIST_MARKOV: /* seconds, whatever unit was written */
        fprintf(out, "markov(%s, %s)", numtext_double(a, sizeof a, d->a), numtext_double(b, sizeof b, d->b));
        break;
    default: fprintf(out, "%s%s", numtext_double(a, sizeof a, d->a), unit); break;
    }
}

double distribution_center(const Distribution *d)
{
    switch (d->kind) {
    case DIST_UNIFORM: return 0.5 * (d->a + d->b);
    case DIST_PARETO: return d->a * pow(2.0, 1.0 / d->b);
    case DIST_CHOICE: {
        double mean = 0;
        for (int i = 0; i < d->n_choices; i++) mean += d->values[i] * d->probs[i];
        return mean;
    }
    default: return d->a;
    }
}

double distribution_lowest(const Distribution *d)
{
    switch (d->kind) {
    case DIST_NORMAL:
    case DIST_LOGNORMAL: return 0;
    case DIST_TRACE: return NAN;
    case DIST_CHOICE: {
        double lowest = d->values[0];
        for (int i = 1; i < d->n_choices; i++)
            if (d->values[i] < lowest) lowest = d->values[i];
        return lowest;
    }
    default: return d->a; /* constant, uniform's a, pareto's scale */
    }
}

int distribution_same(const Distribution *x, const Distribution *y)
{
    if (x->kind != y->kind || x->a != y->a || x->b != y->b || x->n_choices != y->n_choices) return 0;
    for (int i = 0; i < x->n_choices; i++)
        if (x->values[i] != y->values[i] || x->probs[i] != y->probs[i]) return 0;
    return x->kind != DIST_TRACE || strcmp(x->path, y->path) == 0;
}
