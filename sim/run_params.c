/* run_params.c — the rows of run_params from a resolved config: see run_params.h. */
#include "sim/run_params.h"

#include "base/units.h"
#include "sim/methods/method.h"
#include "sim/scenario/scenario_schema.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A key's unit is its schema row's: the fixed sections' table, or the method's own rows
 * for [method] and [method.NAME]. A key the schema does not know is plain. */
const char *run_params_unit(const char *section, const char *key, const char *method)
{
    const SchemaKey *row = NULL;
    if (strcmp(section, "method") == 0 || strncmp(section, "method.", 7) == 0) {
        const MethodOps *ops = method != NULL ? method_lookup(method) : NULL;
        for (const SchemaKey *k = ops ? ops->keys : NULL; k && k->name; k++)
            if (strcmp(k->name, key) == 0) row = k;
        if (row == NULL) {   /* the keys every method has ([method] deadline, prune, ...) */
            const SchemaSection *fixed = schema_section("method");
            row = fixed ? schema_find(fixed->id, key) : NULL;
        }
    } else {
        const SchemaSection *fixed = schema_section(section);
        row = fixed ? schema_find(fixed->id, key) : NULL;
    }
    return row != NULL ? units_base_name(row->unit) : "";
}

/* A builder: rows and the strings they point to, as offsets until the end. */
typedef struct Builder {
    SinkParam *rows;
    int count, cap;
    char *text;
    size_t len, size;
    size_t (*offsets)[4];   /* per row: section, key, value_text, unit (+1; 0 = NULL) */
    int failed;
} Builder;

static size_t builder_str(Builder *b, const char *s, size_t n)
{
    if (b->failed || s == NULL) return 0;
    if (b->len + n + 1 > b->size) {
        size_t size = b->size ? b->size : 4096;
        while (size < b->len + n + 1) size *= 2;
        char *grown = realloc(b->text, size);
        if (grown == NULL) {
            b->failed = 1;
            return 0;
        }
        b->text = grown;
        b->size = size;
    }
    memcpy(b->text + b->len, s, n);
    b->text[b->len + n] = '\0';
    size_t at = b->len + 1;
    b->len += n + 1;
    return at;
}

static void builder_row(Builder *b, const char *section, const char *key, size_t key_len, const char *value,
                        size_t value_len, double num, const char *unit)
{
    if (b->failed) return;
    if (b->count == b->cap) {
        int cap = b->cap ? 2 * b->cap : 64;
        SinkParam *rows = realloc(b->rows, (size_t)cap * sizeof *rows);
        size_t(*offsets)[4] = realloc(b->offsets, (size_t)cap * sizeof *offsets);
        if (rows) b->rows = rows;
        if (offsets) b->offsets = offsets;
        if (rows == NULL || offsets == NULL) {
            b->failed = 1;
            return;
        }
        b->cap = cap;
    }
    int i = b->count++;
    memset(&b->rows[i], 0, sizeof b->rows[i]);
    b->rows[i].value_num = num;
    b->offsets[i][0] = builder_str(b, section, strlen(section));
    b->offsets[i][1] = builder_str(b, key, key_len);
    b->offsets[i][2] = value != NULL ? builder_str(b, value, value_len) : 0;
    b->offsets[i][3] = builder_str(b, unit, strlen(unit));
}

static void trim(const char **s, size_t *n)
{
    while (*n > 0 && isspace((unsigned char)**s)) (*s)++, (*n)--;
    while (*n > 0 && isspace((unsigned char)(*s)[*n - 1])) (*n)--;
}

/* The number text[0..n) holds whole, or NaN. */
static double number_of(const char *text, size_t n)
{
    char buf[64];
    trim(&text, &n);
    if (n == 0 || n >= sizeof buf) return NAN;
    memcpy(buf, text, n);
    buf[n] = '\0';
    char *end;
    double v = strtod(buf, &end);
    return *end == '\0' ? v : NAN;
}

/* A compute value under [model] profile is a speed relative to the profiling host,
 * written 0.25x (docs/cost-model.md): its number with the unit "x" instead of FLOP/s.
 * Returns number_of's value otherwise, *unit unchanged. */
static double number_in_unit(const char *text, size_t n, const char **unit)
{
    trim(&text, &n);
    if (n > 1 && text[n - 1] == 'x' && strcmp(*unit, "FLOP/s") == 0) {
        double v = number_of(text, n - 1);
        if (!isnan(v)) *unit = "x";
        return v;
    }
    return number_of(text, n);
}

/* KEY.NAME for a parameter row. */
static void param_row(Builder *b, const char *section, const char *key, const char *name, const char *value,
                      size_t value_len, int numeric, const char *unit)
{
    char full[256];
    int n = snprintf(full, sizeof full, "%s.%s", key, name);
    if (n < 0 || (size_t)n >= sizeof full) return;
    trim(&value, &value_len);
    double number = numeric ? number_in_unit(value, value_len, &unit) : NAN;
    builder_row(b, section, full, (size_t)n, value, value_len, number, numeric ? unit : "");
}

/* The extra rows of a distribution value (kind(args)); nothing for anything else. */
static void distribution_rows(Builder *b, const char *section, const char *key, const char *value, size_t n,
                              const char *unit)
{
    static const struct { const char *kind; const char *first, *second; int first_unit, second_unit; } kinds[] = {
        {"uniform", "low", "high", 1, 1}, {"normal", "mean", "sd", 1, 1},
        {"lognormal", "median", "sigma", 1, 0}, {"pareto", "scale", "shape", 1, 0},
    };
    const char *open = memchr(value, '(', n);
    if (open == NULL || value[n - 1] != ')') return;
    size_t kind_len = (size_t)(open - value);
    const char *args = open + 1;
    size_t args_len = n - kind_len - 2;
    char kind[32];
    if (kind_len == 0 || kind_len >= sizeof kind) return;
    memcpy(kind, value, kind_len);
    kind[kind_len] = '\0';
    char dist_key[256];
    int dk = snprintf(dist_key, sizeof dist_key, "%s.dist", key);
    if (dk < 0 || (size_t)dk >= sizeof dist_key) return;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (strcmp(kind, kinds[k].kind) != 0) continue;
        const char *comma = memchr(args, ',', args_len);
        if (comma == NULL) return;
        builder_row(b, section, dist_key, (size_t)dk, kind, kind_len, NAN, "");
        param_row(b, section, key, kinds[k].first, args, (size_t)(comma - args), 1, kinds[k].first_unit ? unit : "");
        param_row(b, section, key, kinds[k].second, comma + 1, args_len - (size_t)(comma + 1 - args), 1,
                  kinds[k].second_unit ? unit : "");
        return;
    }
    if (strcmp(kind, "trace") == 0) {
        builder_row(b, section, dist_key, (size_t)dk, kind, kind_len, NAN, "");
        param_row(b, section, key, "path", args, args_len, 0, "");
    } else if (strcmp(kind, "choice") == 0) {
        builder_row(b, section, dist_key, (size_t)dk, kind, kind_len, NAN, "");
        const char *p = args, *end = args + args_len;
        for (int i = 1; p < end; i++) {
            const char *comma = memchr(p, ',', (size_t)(end - p));
            const char *item_end = comma ? comma : end;
            const char *colon = memchr(p, ':', (size_t)(item_end - p));
            char name[32];
            snprintf(name, sizeof name, "value%d", i);
            param_row(b, section, key, name, p, (size_t)((colon ? colon : item_end) - p), 1, unit);
            if (colon != NULL) {
                snprintf(name, sizeof name, "p%d", i);
                param_row(b, section, key, name, colon + 1, (size_t)(item_end - colon - 1), 1, "");
            }
            p = comma ? comma + 1 : end;
        }
    }
}

int run_params_from_config(const char *config, RunParams *out)
{
    memset(out, 0, sizeof *out);
    Builder b;
    memset(&b, 0, sizeof b);
    char section[128] = "", method[64] = "";
    /* the method names the units of [method] keys: find it first */
    for (const char *line = config; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        if (n > 9 && strncmp(line, "method = ", 9) == 0 && method[0] == '\0') {
            size_t m = n - 9 < sizeof method - 1 ? n - 9 : sizeof method - 1;
            memcpy(method, line + 9, m);
            method[m] = '\0';
        }
        line = end ? end + 1 : NULL;
    }
    for (const char *line = config; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        const char *s = line;
        trim(&s, &n);
        line = end ? end + 1 : NULL;
        if (n == 0 || s[0] == ';' || s[0] == '#') continue;
        if (s[0] == '[' && s[n - 1] == ']') {
            size_t m = n - 2 < sizeof section - 1 ? n - 2 : sizeof section - 1;
            memcpy(section, s + 1, m);
            section[m] = '\0';
            continue;
        }
        const char *eq = memchr(s, '=', n);
        if (eq == NULL) continue;
        const char *key = s, *value = eq + 1;
        size_t key_len = (size_t)(eq - s), value_len = n - key_len - 1;
        trim(&key, &key_len);
        trim(&value, &value_len);
        char key_z[128];
        if (key_len == 0 || key_len >= sizeof key_z) continue;
        memcpy(key_z, key, key_len);
        key_z[key_len] = '\0';
        const char *unit = run_params_unit(section, key_z, method), *own_unit = unit;
        double num = number_in_unit(value, value_len, &own_unit);
        builder_row(&b, section, key, key_len, value, value_len, num, isnan(num) ? "" : own_unit);
        if (value_len > 0) distribution_rows(&b, section, key_z, value, value_len, unit);
    }
    if (b.failed) {
        free(b.rows);
        free(b.offsets);
        free(b.text);
        return HS_E_NOMEM;
    }
    /* the text is complete: point the rows at it */
    for (int i = 0; i < b.count; i++) {
        const char **fields[4] = {&b.rows[i].section, &b.rows[i].key, &b.rows[i].value_text, &b.rows[i].unit};
        for (int f = 0; f < 4; f++) *fields[f] = b.offsets[i][f] ? b.text + b.offsets[i][f] - 1 : NULL;
    }
    free(b.offsets);
    out->rows = b.rows;
    out->count = b.count;
    out->text = b.text;
    return HS_OK;
}

void run_params_free(RunParams *params)
{
    if (params == NULL) return;
    free(params->rows);
    free(params->text);
    memset(params, 0, sizeof *params);
}
