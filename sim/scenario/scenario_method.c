/* scenario_method.c — [method] and [method.NAME]: every key checked against its method's
 * rows (sim/scenario/method_ops.h), the rule that merges the two sections, the running
 * method's values landed typed in the struct it declares, and where a key was written
 * (for the method's errors about it). */
#include "sim/scenario/scenario_resolver.h"

#include "sim/scenario/features.h"

#include "base/names.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads text as key k says; *why gets the reason when it does not fit. */
static int scenario_method_value(const SchemaKey *k, const char *text, SchemaValue *p, char *why, size_t size)
{
    char range[128];
    snprintf(range, sizeof range, "%s%.15g, %.15g%s", k->flags & SCHEMA_OPEN_MIN ? "(" : "[", k->min, k->max,
             k->flags & SCHEMA_OPEN_MAX ? ")" : "]");
    long long whole;
    char inner[200];
    switch (k->type) {
    case SCHEMA_CHOICE:
        p->index = scenario_match_choice(text, k->choices);
        if (p->index >= 0) return HS_OK;
        snprintf(why, size, "expected one of %s, found '%.60s'", k->choices, text);
        return HS_E_INPUT;
    case SCHEMA_STEPS:
    case SCHEMA_INT:
        if (k->type == SCHEMA_STEPS && strcmp(text, "epoch") == 0) {
            p->number = 0;
            return HS_OK;
        }
        if (scenario_parse_int(text, (long long)k->min, (long long)k->max, &whole) == HS_OK) {
            p->number = (double)whole;
            return HS_OK;
        }
        snprintf(why, size, "expected %sa whole number in %s, found '%.60s'",
                 k->type == SCHEMA_STEPS ? "epoch or " : "", range, text);
        return HS_E_INPUT;
    case SCHEMA_TIME:
        if (strcmp(text, "none") == 0) p->number = INFINITY;
        else if (k->choices && strcmp(text, k->choices) == 0) {
            p->number = NAN;
            return HS_OK;
        } else if (units_parse(text, UNIT_TIME, &p->number, inner, sizeof inner) != HS_OK) p->number = NAN;
        break;
    case SCHEMA_WORD_OR_REAL:
        if (strcmp(text, k->choices) == 0) {
            p->number = NAN;
            return HS_OK;
        }
        /* fall through - a number */
    case SCHEMA_REAL:
        if (units_parse(text, UNIT_PLAIN, &p->number, inner, sizeof inner) != HS_OK) p->number = NAN;
        break;
    default:
        snprintf(why, size, "is of a type [method] keys do not have");
        return HS_E_INTERNAL;
    }
    double v = p->number;
    int inside = (k->flags & SCHEMA_OPEN_MIN ? v > k->min : v >= k->min) &&
                 (k->flags & SCHEMA_OPEN_MAX ? v < k->max : v <= k->max);
    if (inside) return HS_OK;
    if (k->type == SCHEMA_TIME)
        snprintf(why, size, "expected %s%s%sa time in %s s (e.g. 500 ms), found '%.60s'",
                 isinf(k->max) ? "none or " : "", k->choices ? k->choices : "", k->choices ? " or " : "", range, text);
    else
        snprintf(why, size, "expected %s%sa number in %s, found '%.60s'",
                 k->type == SCHEMA_WORD_OR_REAL ? k->choices : "", k->type == SCHEMA_WORD_OR_REAL ? " or " : "",
                 range, text);
    return HS_E_INPUT;
}

static const SchemaKey *scenario_method_key(const MethodOps *ops, const char *name)
{
    for (const SchemaKey *k = ops->keys; k && k->name; k++)
        if (strcmp(k->name, name) == 0) return k;
    return NULL;
}

/* A [method] key of a feature (prune, prune_target, ... of FEATURE_PRUNE) that method ops
 * does not have: why the method refuses the feature (features.h); NULL for other keys. */
static const char *scenario_feature_key_refused(const MethodOps *ops, const char *key)
{
    for (int f = 0; f < FEATURE_COUNT; f++) {
        const FeatureInfo *info = feature_info((Feature)f);
        size_t length = strlen(info->key);
        if (strcmp(info->section, "method") != 0 || strncmp(key, info->key, length) != 0 ||
            (key[length] != '\0' && key[length] != '_'))
            continue;
        const char *why = feature_refusal(ops, (Feature)f);
        return why ? why : "(declared to run, but the method has no such key: a bug)";
    }
    return NULL;
}

/* Every entry of [method] (keys of the method that runs) and of each [method.NAME] (keys
 * of NAME, whether or not it runs) must be a key of that method with a value of its type. */
static int scenario_check_method_entries(Resolver *r, const MethodOps *running)
{
    for (int i = 0; i < r->doc->count; i++) {
        IniEntry *e = &r->doc->entries[i];
        const MethodOps *ops = strcmp(e->section, "method") == 0 ? running : scenario_method_section(e->section);
        if (ops == NULL) continue;
        e->used = 1;
        const SchemaKey *k = scenario_method_key(ops, e->key);
        const char *refused = k == NULL ? scenario_feature_key_refused(ops, e->key) : NULL;
        if (refused) {
            char where[INIDOC_VALUE_MAX + 160];
            return hs_diag_set(r->diag, HS_E_INPUT, inidoc_entry_where(e, where, sizeof where), 0,
                               "[%s] %s: not with method %s: %s", e->section, e->key, ops->name, refused);
        }
        if (k == NULL) {
            const char *names[SCENARIO_MAX_PARAMS + 1];
            int n = 0;
            for (const SchemaKey *m = ops->keys; m && m->name && n < SCENARIO_MAX_PARAMS; m++) names[n++] = m->name;
            names[n] = NULL;
            char hint[128], where[INIDOC_VALUE_MAX + 160];
            names_suggest(e->key, names, hint, sizeof hint);
            return hs_diag_set(r->diag, HS_E_INPUT, inidoc_entry_where(e, where, sizeof where), 0,
                               "unknown key '%s' in [%s] for method %s%s%s", e->key, e->section, ops->name, hint,
                               ops == running && strcmp(e->section, "method") == 0
                                   ? " (knobs of another method go in [method.NAME])" : "");
        }
        char value[INIDOC_VALUE_MAX], why[300];
        scenario_trim_copy(value, sizeof value, e->value);
        SchemaValue scratch;
        if (scenario_method_value(k, value, &scratch, why, sizeof why) != HS_OK) return scenario_bad(r, e, "%s", why);
    }
    return HS_OK;
}

/* The value of one key of the running method. [method] and [method.NAME] may both hold
 * it: within the file that is a conflict (an error: which one was meant?); otherwise an
 * override wins over the file and a swept value over an override, and between two
 * overrides of the same kind the later one wins. */
static int scenario_method_entry(Resolver *r, const char *own_section, const char *key, IniEntry **out)
{
    IniEntry *general = inidoc_find(r->doc, "method", key), *own = inidoc_find(r->doc, own_section, key);
    *out = general ? general : own;
    if (general == NULL || own == NULL) return HS_OK;
    if (general->origin == INIDOC_FROM_FILE && own->origin == INIDOC_FROM_FILE)
        return hs_diag_set(r->diag, HS_E_INPUT, own->file, own->line,
                           "[%s] %s: also set in [method] at line %d; keep one of the two", own_section, key,
                           general->line);
    if (own->origin > general->origin || (own->origin == general->origin && own->order > general->order))
        *out = own;
    return HS_OK;
}

/* Whether the value row k landed in keys is its default's (typed: "1.0" is "1"). */
static int scenario_method_at_default(const SchemaKey *k, const unsigned char *keys)
{
    _Alignas(max_align_t) unsigned char fallback[SCENARIO_METHOD_KEYS_MAX];
    SchemaValue value;
    char why[300];
    memset(&value, 0, sizeof value);
    if (scenario_method_value(k, k->fallback, &value, why, sizeof why) != HS_OK) return 0;
    memset(fallback, 0, sizeof fallback);
    schema_land(k, &value, fallback);
    return memcmp(fallback + k->offset, keys + k->offset, k->size) == 0;
}

int scenario_resolve_method(Resolver *r)
{
    Scenario *sc = r->sc;
    const MethodOps *ops = method_lookup(sc->method);
    int status = scenario_check_method_entries(r, ops);
    if (status != HS_OK) return status;
    if (ops->keys_size > sizeof sc->method_keys)
        return hs_diag_set(r->diag, HS_E_INTERNAL, NULL, 0, "method %s: its keys take %zu bytes, more than %d",
                           ops->name, ops->keys_size, SCENARIO_METHOD_KEYS_MAX);
    char own_section[INIDOC_NAME_MAX + 8];
    snprintf(own_section, sizeof own_section, "method.%s", sc->method);
    sc->n_params = 0;
    memset(sc->method_keys, 0, sizeof sc->method_keys);
    for (const SchemaKey *k = ops->keys; k && k->name; k++) {
        if (sc->n_params == SCENARIO_MAX_PARAMS || k->offset + k->size > ops->keys_size)
            return hs_diag_set(r->diag, HS_E_INTERNAL, NULL, 0, "method %s: key %s lands outside its %zu-byte struct "
                               "(or the method has over %d keys)", ops->name, k->name, ops->keys_size, SCENARIO_MAX_PARAMS);
        MethodParam *p = &sc->params[sc->n_params++];
        IniEntry *e;
        if ((status = scenario_method_entry(r, own_section, k->name, &e)) != HS_OK) return status;
        snprintf(p->key, sizeof p->key, "%s", k->name);
        scenario_trim_copy(p->value, sizeof p->value, e ? e->value : k->fallback);
        if (e) inidoc_entry_where(e, p->where, sizeof p->where);
        char why[300];
        SchemaValue value;
        if (scenario_method_value(k, p->value, &value, why, sizeof why) != HS_OK)
            return hs_diag_set(r->diag, HS_E_INTERNAL, NULL, 0, "method %s: default of %s: %s", ops->name, k->name, why);
        schema_land(k, &value, sc->method_keys);
        p->written = !(k->flags & SCHEMA_OMIT_DEFAULT) || !scenario_method_at_default(k, sc->method_keys);
    }
    return HS_OK;
}

const MethodParam *scenario_key_written(const Scenario *sc, const void *field)
{
    const MethodOps *ops = method_lookup(sc->method);
    /* as integers: a field from elsewhere is a bug to report, not a pointer to subtract */
    uintptr_t at = (uintptr_t)field, base = (uintptr_t)sc->method_keys;
    size_t offset = at >= base ? (size_t)(at - base) : SIZE_MAX;
    int i = 0;
    for (const SchemaKey *k = ops ? ops->keys : NULL; k && k->name && i < sc->n_params; k++, i++)
        if (k->offset == offset) return &sc->params[i];
    fprintf(stderr, "hetsim: bug: method %s names a field (offset %zu) that none of its keys lands in\n", sc->method,
            offset);
    abort();
}

int scenario_key_error(const Scenario *sc, const void *field, HsDiag *diag, const char *fmt, ...)
{
    const MethodParam *p = scenario_key_written(sc, field);
    char message[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (strncmp(p->where, "--set ", 6) == 0) return hs_diag_set(diag, HS_E_INPUT, p->where, 0, "%s", message);
    return hs_diag_set(diag, HS_E_INPUT, p->where[0] ? p->where : sc->file, 0, "[method] %s: %s", p->key, message);
}
