/* scenario_read.c — the rows of the schema (scenario_schema.h) applied to a document:
 * each key of a section taken, read as its type says, checked against its range and its
 * row's check, and landed where its row says; the defaults of keys that do not apply;
 * and the two questions runs.config asks of a row (does it apply, is it written). */
#include "sim/scenario/scenario_resolver.h"

#include "base/names.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int schema_applies(const SchemaKey *k, const Scenario *sc, const void *target)
{
    if (k->needs && !(method_lookup(sc->method)->capabilities & (int)k->needs)) return 0;
    return k->when == NULL || k->when(sc, target);
}

int schema_written(const SchemaKey *k, const Scenario *sc, const void *target)
{
    if (k->written == NULL) return schema_applies(k, sc, target);
    return (!k->needs || (method_lookup(sc->method)->capabilities & (int)k->needs)) && k->written(sc, target);
}

static void schema_limits(const SchemaKey *k, const Scenario *sc, double *min, double *max)
{
    *min = k->min;
    *max = k->max;
    if (k->limits) k->limits(sc, min, max);
}

/* trace() in a distribution names a file relative to the scenario's folder. */
static int schema_trace_path(Resolver *r, const SchemaKey *k, IniEntry *e, Distribution *d)
{
    if (k->flags & SCHEMA_NO_TRACE)
        return scenario_bad(r, e, "%s", "trace() is available for compute, bandwidth, uplink, downlink, availability, outage and charging");
    return scenario_input_path(r, e, d->path, sizeof d->path);
}

/* A distribution: positive values (a time: not negative); a constant's or a choice()'s
 * written values must be what the key holds. Continuous draws are rounded (samples) and
 * checked when drawn (world.c). */
static int schema_read_distribution(Resolver *r, const SchemaKey *k, IniEntry *e, const char *text, SchemaValue *v)
{
    Distribution *d = &v->dist;
    char why[300];
    /* compute with [model] profile: a speed relative to the profiling host (0.25x), held
     * as that number (world_build converts a draw); FLOP/s are refused there, and a
     * relative speed without a profile, rather than converted by a rule nobody sees */
    int relative = k->unit == UNIT_COMPUTE && r->sc->model_profile[0];
    if (distribution_parse(text, relative ? UNIT_SPEED : k->unit, d, why, sizeof why) != HS_OK) {
        Distribution other;
        char ignored[300];
        if (k->unit == UNIT_COMPUTE && distribution_parse(text, relative ? UNIT_COMPUTE : UNIT_SPEED, &other, ignored,
                                                          sizeof ignored) == HS_OK)
            return scenario_bad(r, e, "%s",
                                relative ? "is in FLOP/s, but [model] profile is set: give compute as a speed "
                                           "relative to the profiling host (e.g. 0.25x; docs/cost-model.md)"
                                         : "a speed relative to a profiling host (0.25x) needs [model] profile = "
                                           "FILE (hetsim profile); without one compute is in FLOP/s");
        return scenario_bad(r, e, "%s", why);
    }
    if (d->kind == DIST_TRACE && relative)
        return scenario_bad(r, e, "%s",
                            "a compute trace holds FLOP/s, which [model] profile does not take: give a constant or "
                            "a distribution of speeds relative to the profiling host (e.g. uniform(0.2x, 1x))");
    if (d->kind == DIST_TRACE) return schema_trace_path(r, k, e, d);
    /* the energy keys hold 0 (not modelled) and check their ranges in their own hooks */
    if (k->unit == UNIT_POWER || k->unit == UNIT_ENERGY || k->unit == UNIT_ENERGY_PER_BYTE) return HS_OK;
    int positive_only = k->unit != UNIT_TIME;
    double lowest = d->kind == DIST_CHOICE ? d->values[0] : d->a;
    for (int i = 1; d->kind == DIST_CHOICE && i < d->n_choices; i++)
        if (d->values[i] < lowest) lowest = d->values[i];
    if (d->kind == DIST_NORMAL) lowest = d->a;
    if (positive_only ? !(lowest > 0) : !(lowest >= 0))
        return scenario_bad(r, e, "%s", positive_only ? "values must be positive" : "values must not be negative");
    int n_written = d->kind == DIST_CONSTANT ? 1 : d->kind == DIST_CHOICE ? d->n_choices : 0;
    for (int i = 0; i < n_written; i++) {
        double x = d->kind == DIST_CHOICE ? d->values[i] : d->a;
        if ((k->flags & SCHEMA_WHOLE) && (x != floor(x) || x > k->max)) {
            char whole[160];
            snprintf(whole, sizeof whole, "%.17g is not a whole number of samples in [%.0f, %.0f]", x, k->min, k->max);
            return scenario_bad(r, e, "%s", whole);
        }
        if (k->unit == UNIT_TIME && isinf(x)) return scenario_bad(r, e, "%s", "a latency must be finite");
    }
    return HS_OK;
}

static int schema_read_seed(Resolver *r, IniEntry *e, const char *text, SchemaValue *v)
{
    char *end;
    errno = 0;
    while (isspace((unsigned char)*text)) text++;
    unsigned long long seed = strtoull(text, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (*text == '-' || end == text || *end || errno || seed > (unsigned long long)INT64_MAX)
        return scenario_bad(r, e, "%s", "expected a whole number in [0, 2^63)");
    v->seed = seed;
    return HS_OK;
}

/* Reads text (the entry's value, or the default when e is NULL: defaults are not
 * range-checked, they are the code's own) as row k says into v. */
static int schema_read_value(Resolver *r, const SchemaKey *k, IniEntry *e, const char *text, SchemaValue *v)
{
    const Scenario *sc = r->sc;
    double min, max;
    schema_limits(k, sc, &min, &max);
    char value[INIDOC_VALUE_MAX], why[400];
    int status;
    switch (k->type) {
    case SCHEMA_INT: {
        long long whole;
        if (e == NULL) {
            v->number = (double)strtoll(text, NULL, 10);
            return HS_OK;
        }
        if (scenario_parse_int(text, (long long)min, (long long)max, &whole) != HS_OK) {
            snprintf(why, 160, "expected a whole number in [%d, %d], found '%.60s'", (int)min, (int)max, text);
            return scenario_bad(r, e, "%s", why);
        }
        v->number = (double)whole;
        return HS_OK;
    }
    case SCHEMA_REAL:
        if (units_parse(text, k->unit, &v->number, why, 300) != HS_OK) return scenario_bad(r, e, "%s", why);
        if (e == NULL) return HS_OK;
        if (!(v->number >= min && v->number <= max)) {
            snprintf(why, 128, "%.6g is outside [%.6g, %.6g]", v->number, min, max);
            return scenario_bad(r, e, "%s", why);
        }
        if (((k->flags & SCHEMA_OPEN_MIN) && v->number == min) || ((k->flags & SCHEMA_OPEN_MAX) && v->number == max))
            return scenario_bad(r, e, "%s", k->edge);
        return HS_OK;
    case SCHEMA_CHOICE:
        scenario_trim_copy(value, sizeof value, text);
        v->index = scenario_match_choice(value, k->choices);
        if (v->index >= 0) return HS_OK;
        snprintf(why, sizeof why, "'%.60s' is not one of %s", value, k->choices);
        return scenario_bad(r, e, "%s", why);
    case SCHEMA_SEED:
        return schema_read_seed(r, e, text, v);
    case SCHEMA_TEXT:
        scenario_trim_copy(v->text, k->size, text);
        if (e == NULL) return HS_OK;
        if (v->text[0] == '\0') {
            snprintf(why, sizeof why, "is empty (leave the key out for %s)", k->empty);
            return scenario_bad(r, e, "%s", why);
        }
        return scenario_plain_text(r, e, v->text);
    case SCHEMA_METHOD: {
        scenario_trim_copy(v->text, k->size, text);
        if (method_lookup(v->text) != NULL) return HS_OK;
        const char *names[64];
        int n = 0;
        for (const MethodOps *const *m = method_all(); *m && n < 63; m++) names[n++] = (*m)->name;
        names[n] = NULL;
        char hint[128], list[400] = "";
        names_suggest(v->text, names, hint, sizeof hint);
        for (int i = 0; i < n; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, names[i], sizeof list - strlen(list) - 1);
        }
        char unknown[700];
        snprintf(unknown, sizeof unknown, "unknown method '%s'%s; known: %s", v->text, hint, list);
        return scenario_bad(r, e, "%s", unknown);
    }
    case SCHEMA_INT_LIST:
    case SCHEMA_REAL_LIST:
        status = k->type == SCHEMA_INT_LIST
                     ? scenario_int_list(r, e, text, (int)min, (int)max, v->list, k->count_max, &v->count)
                     : scenario_real_list(r, e, text, min, max, v->list, k->count_max, &v->count);
        if (status != HS_OK) return status;
        return v->count < k->count_min ? scenario_bad(r, e, "%s", k->few) : HS_OK;
    case SCHEMA_CHOICE_OR_FILE: {
        scenario_trim_copy(value, sizeof value, text);
        v->index = scenario_match_choice(value, k->choices);
        if (v->index >= 0) return HS_OK;
        size_t len = strlen(value), suffix = strlen(k->suffix);
        if (len <= suffix || strcmp(value + len - suffix, k->suffix) != 0) {
            snprintf(why, sizeof why, "'%s' is not one of %s|FILE%s", value, k->choices, k->suffix);
            return scenario_bad(r, e, "%s", why);
        }
        snprintf(v->text, k->size, "%s", value);
        return scenario_input_path(r, e, v->text, k->size);
    }
    case SCHEMA_DISTRIBUTION:
        return schema_read_distribution(r, k, e, text, v);
    case SCHEMA_SLOWDOWN:
        if (slowdown_parse(text, &v->slowdown, why, 300) != HS_OK) return scenario_bad(r, e, "%s", why);
        return HS_OK;
    case SCHEMA_AVAILABILITY:
        scenario_trim_copy(value, sizeof value, text);
        /* the word for "no trace": always (availability), or the row's own (outage: none) */
        if (strcmp(value, k->choices ? k->choices : "always") == 0) {
            memset(&v->dist, 0, sizeof v->dist);
            v->dist.kind = DIST_CONSTANT;
            v->dist.a = 1;
            return HS_OK;
        }
        /* markov(MEAN_UP, MEAN_DOWN): an on/off process (sim/kernel/trace_markov.h); its errors
         * (a missing or non-positive mean) are its own */
        if (strncmp(value, "markov", 6) == 0) {
            if (distribution_parse_onoff(value, &v->dist, why, 300) != HS_OK) return scenario_bad(r, e, "%s", why);
            return HS_OK;
        }
        if (distribution_parse(value, UNIT_PLAIN, &v->dist, why, 300) != HS_OK || v->dist.kind != DIST_TRACE)
            return scenario_bad(r, e, "%s", k->choices ? "expected none, trace(FILE.csv) or markov(MEAN_UP, MEAN_DOWN)"
                                                       : "expected always, trace(FILE.csv) or markov(MEAN_UP, MEAN_DOWN)");
        return schema_trace_path(r, k, e, &v->dist);
    case SCHEMA_STEPS:
    case SCHEMA_TIME:
    case SCHEMA_WORD_OR_REAL:
        break; /* [method] keys: scenario_method.c */
    }
    return hs_diag_set(r->diag, HS_E_INTERNAL, NULL, 0, "schema: [%s] key %s has a type of [method]", "?", k->name);
}

void schema_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    if (k->land) {
        k->land(k, v, target);
        return;
    }
    char *at = (char *)target + k->offset;
    switch (k->type) {
    case SCHEMA_INT:
    case SCHEMA_STEPS: *(int *)at = (int)v->number; break;
    case SCHEMA_CHOICE: *(int *)at = v->index; break;
    case SCHEMA_REAL:
    case SCHEMA_TIME:
    case SCHEMA_WORD_OR_REAL: *(double *)at = v->number; break;
    case SCHEMA_SEED: *(uint64_t *)at = v->seed; break;
    case SCHEMA_TEXT:
    case SCHEMA_METHOD: memcpy(at, v->text, k->size); break; /* whole: the field's bytes are the value's */
    case SCHEMA_DISTRIBUTION:
    case SCHEMA_AVAILABILITY: *(Distribution *)at = v->dist; break;
    case SCHEMA_SLOWDOWN: *(Slowdown *)at = v->slowdown; break;
    case SCHEMA_INT_LIST:
    case SCHEMA_REAL_LIST:
    case SCHEMA_CHOICE_OR_FILE: break; /* always through a hook */
    }
}

/* The default of row k into v; 0 when the row has none (nothing lands). */
static int schema_default(Resolver *r, const SchemaKey *k, SchemaValue *v)
{
    if (k->fallback_of) {
        k->fallback_of(r->sc, v);
        return 1;
    }
    if (k->fallback == NULL) return 0;
    int status = schema_read_value(r, k, NULL, k->fallback, v);
    if (status != HS_OK) /* a bad default is a bug in the table, not an input error */
        hs_diag_set(r->diag, HS_E_INTERNAL, NULL, 0, "schema: bad default '%s' of key %s", k->fallback, k->name);
    return status == HS_OK;
}

static int schema_read_key(Resolver *r, const char *section, const SchemaKey *k, AgentGroupSpec *group)
{
    void *target = (k->flags & SCHEMA_GROUP) ? (void *)group : (void *)r->sc;
    int inherited = (k->flags & SCHEMA_INHERITED) && scenario_is_group(section);
    IniEntry *e = scenario_take(r, section, k->name);
    SchemaValue v;
    memset(&v, 0, sizeof v);
    int status, have = 1;
    if (e != NULL) {
        if ((status = schema_read_value(r, k, e, e->value, &v)) != HS_OK) return status;
    } else if (inherited) {
        have = 0; /* the group keeps [agents]'s value */
    } else if (k->flags & SCHEMA_REQUIRED) {
        return scenario_missing(r, section, k->name);
    } else {
        have = schema_default(r, k, &v);
    }
    if (k->check && (status = k->check(r, section, k, e, have ? &v : NULL, target)) != HS_OK) return status;
    if (have) schema_land(k, &v, target);
    return HS_OK;
}

int schema_read_section(Resolver *r, unsigned id, const char *section, AgentGroupSpec *group)
{
    int n;
    const SchemaKey *rows = schema_keys(&n);
    for (int i = 0; i < n; i++) {
        if (!(rows[i].sections & id)) continue;
        int status = schema_read_key(r, section, &rows[i], group);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

void schema_reset_section(Resolver *r, unsigned id)
{
    int n;
    const SchemaKey *rows = schema_keys(&n);
    for (int i = 0; i < n; i++) {
        const SchemaKey *k = &rows[i];
        if (!(k->sections & id) || !(k->flags & SCHEMA_RESET) || schema_applies(k, r->sc, r->sc)) continue;
        SchemaValue v;
        memset(&v, 0, sizeof v);
        if (schema_default(r, k, &v)) schema_land(k, &v, r->sc);
    }
}
