/* instance.c — pairing instance files. A small line parser of its own (no line-length
 * limit, unlike inih's) so that every error can name its line: each list is read once
 * into a growable array that remembers its line, then all are checked together.
 * Cost: linear in the file, plus a linear search for duplicate bandwidth rows, which is
 * no more than reading the rows themselves (n rows of n values). */
#include "solver/instance.h"
#include "base/grow.h"
#include "base/input_file.h"
#include "base/names.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct NumberList {
    double *v;
    int n, cap;
    int line; /* 0 while the key has not been seen */
} NumberList;

typedef struct BandwidthRow {
    long index;
    NumberList values;
} BandwidthRow;

/* A key that takes one word of a fixed list. */
typedef struct WordKey {
    int value; /* index of the word in its list */
    int line;  /* 0 while the key has not been seen */
} WordKey;

typedef struct InstanceText {
    const char *name;
    int section_line; /* line of [pairing], 0 before it */
    NumberList batches, speed, fs, ff, act, latency;
    WordKey cost, network, uplink, capacity;
    BandwidthRow *rows; /* in file order */
    int n_rows, cap_rows;
} InstanceText;

static void instance_text_free(InstanceText *t)
{
    free(t->batches.v);
    free(t->speed.v);
    free(t->fs.v);
    free(t->ff.v);
    free(t->act.v);
    free(t->latency.v);
    for (int r = 0; r < t->n_rows; r++)
        free(t->rows[r].values.v);
    free(t->rows);
}

static char *instance_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int instance_push(NumberList *list, double x)
{
    if (hs_grow((void **)&list->v, &list->cap, list->n, sizeof *list->v, 16) != HS_OK) return HS_E_NOMEM;
    list->v[list->n++] = x;
    return HS_OK;
}

/* Reads "x, y, z" into out. Commas separate; an empty item is an error, not skipped. */
static int instance_numbers(InstanceText *t, int line, const char *key, char *value, NumberList *out, HsDiag *diag)
{
    if (out->line)
        return hs_diag_set(diag, HS_E_INPUT, t->name, line, "'%s' is given twice (first at line %d)", key, out->line);
    out->line = line;
    if (*instance_trim(value) == '\0') return hs_diag_set(diag, HS_E_INPUT, t->name, line, "%s: no values", key);
    char *item = value;
    for (int k = 1;; k++) {
        char *comma = strchr(item, ',');
        if (comma) *comma = '\0';
        char *token = instance_trim(item);
        if (*token == '\0')
            return hs_diag_set(diag, HS_E_INPUT, t->name, line, "%s: value %d is empty (stray comma?)", key, k);
        char *end;
        errno = 0;
        double x = strtod(token, &end);
        if (*end != '\0' || isnan(x))
            return hs_diag_set(diag, HS_E_INPUT, t->name, line, "%s: '%s' is not a number", key, token);
        if (errno == ERANGE && isinf(x))
            return hs_diag_set(diag, HS_E_INPUT, t->name, line, "%s: '%s' is out of range (write inf)", key, token);
        if (instance_push(out, x) != HS_OK) return HS_E_NOMEM;
        if (comma == NULL) return HS_OK;
        item = comma + 1;
    }
}

/* Reads one word of choices ("a|b|c") into out->value, its index. */
static int instance_word(InstanceText *t, int line, const char *key, char *value, const char *choices, WordKey *out,
                         HsDiag *diag)
{
    if (out->line)
        return hs_diag_set(diag, HS_E_INPUT, t->name, line, "'%s' is given twice (first at line %d)", key, out->line);
    out->line = line;
    const char *word = instance_trim(value);
    size_t len = strlen(word);
    int index = 0;
    for (const char *c = choices; *c; index++) {
        const char *bar = strchr(c, '|');
        size_t n = bar ? (size_t)(bar - c) : strlen(c);
        if (n == len && strncmp(c, word, n) == 0) {
            out->value = index;
            return HS_OK;
        }
        c += n + (bar != NULL);
    }
    return hs_diag_set(diag, HS_E_INPUT, t->name, line, "%s: '%s' is not one of %s", key, word, choices);
}

static int instance_row(InstanceText *t, int line, const char *key, char *value, HsDiag *diag)
{
    const char *digits = key + strlen("bandwidth.");
    size_t n_digits = strspn(digits, "0123456789");
    if (n_digits == 0 || digits[n_digits] != '\0' || n_digits > 9)
        return hs_diag_set(diag, HS_E_INPUT, t->name, line, "'%s': expected bandwidth.ROW with ROW an agent number",
                           key);
    long index = strtol(digits, NULL, 10);
    for (int r = 0; r < t->n_rows; r++)
        if (t->rows[r].index == index)
            return hs_diag_set(diag, HS_E_INPUT, t->name, line, "'%s' is given twice (first at line %d)", key,
                               t->rows[r].values.line);
    if (hs_grow((void **)&t->rows, &t->cap_rows, t->n_rows, sizeof *t->rows, 16) != HS_OK) return HS_E_NOMEM;
    BandwidthRow *row = &t->rows[t->n_rows++];
    memset(row, 0, sizeof *row);
    row->index = index;
    return instance_numbers(t, line, key, value, &row->values, diag);
}

/* Writes " (did you mean 'x'?)" for a near miss of a known key, else "". */
static void instance_suggest(const char *key, char *out, size_t size)
{
    static const char *const known[] = {"batches", "speed", "fs", "ff", "act", "latency", "cost", "network", "uplink", "capacity"};
    const char *dot = strchr(key, '.');
    char stem[64];
    snprintf(stem, sizeof stem, "%.*s", dot ? (int)(dot - key) : (int)strlen(key), key);
    int limit = names_near_limit(stem);
    out[0] = '\0';
    if (dot && names_edit_distance(stem, "bandwidth") <= limit) {
        snprintf(out, size, " (did you mean 'bandwidth%.20s'?)", dot);
        return;
    }
    int best = limit + 1;
    for (size_t k = 0; k < sizeof known / sizeof *known; k++) {
        int d = names_edit_distance(key, known[k]);
        if (d < best && d < (int)strlen(known[k])) {
            best = d;
            snprintf(out, size, " (did you mean '%s'?)", known[k]);
        }
    }
}

static int instance_line(InstanceText *t, int line, char *text, HsDiag *diag)
{
    char *comment = strpbrk(text, ";#");
    if (comment) *comment = '\0';
    char *s = instance_trim(text);
    if (*s == '\0') return HS_OK;
    if (*s == '[') {
        if (strcmp(s, "[pairing]") != 0)
            return hs_diag_set(diag, HS_E_INPUT, t->name, line, "unknown section %s (an instance has only [pairing])",
                               s);
        if (t->section_line)
            return hs_diag_set(diag, HS_E_INPUT, t->name, line, "[pairing] is given twice (first at line %d)",
                               t->section_line);
        t->section_line = line;
        return HS_OK;
    }
    char *eq = strchr(s, '=');
    if (eq == NULL) return hs_diag_set(diag, HS_E_INPUT, t->name, line, "expected KEY = VALUES, got '%s'", s);
    if (!t->section_line) return hs_diag_set(diag, HS_E_INPUT, t->name, line, "key before the [pairing] section");
    *eq = '\0';
    char *key = instance_trim(s), *value = eq + 1;
    struct {
        const char *key;
        NumberList *list;
    } lists[] = {{"batches", &t->batches}, {"speed", &t->speed}, {"fs", &t->fs},
                 {"ff", &t->ff},           {"act", &t->act},     {"latency", &t->latency}};
    for (size_t k = 0; k < sizeof lists / sizeof *lists; k++)
        if (strcmp(key, lists[k].key) == 0) return instance_numbers(t, line, key, value, lists[k].list, diag);
    if (strcmp(key, "cost") == 0) return instance_word(t, line, key, value, PAIRING_COST_NAMES, &t->cost, diag);
    if (strcmp(key, "network") == 0) return instance_word(t, line, key, value, "maxmin|fifo", &t->network, diag);
    if (strcmp(key, "uplink") == 0) return instance_word(t, line, key, value, "shared|fifo", &t->uplink, diag);
    if (strcmp(key, "capacity") == 0)
        return instance_word(t, line, key, value, PAIRING_CAPACITY_NAMES, &t->capacity, diag);
    if (strncmp(key, "bandwidth.", strlen("bandwidth.")) == 0) return instance_row(t, line, key, value, diag);
    char hint[64];
    instance_suggest(key, hint, sizeof hint);
    return hs_diag_set(diag, HS_E_INPUT, t->name, line, "unknown key '%s' in [pairing]%s", key,
                       hint[0] ? hint
                               : " (keys: batches, speed, fs, ff, act, bandwidth.ROW, latency, cost, network, uplink, "
                                 "capacity)");
}

static const char *instance_plural(int n)
{
    return n == 1 ? "" : "s";
}

/* Checks the lists together and fills rows_by_agent[i] with row i. */
static int instance_check(InstanceText *t, const NumberList **rows_by_agent, HsDiag *diag)
{
    const char *name = t->name;
    if (!t->section_line) return hs_diag_set(diag, HS_E_INPUT, name, 1, "no [pairing] section");
    struct {
        const char *key;
        const NumberList *list;
    } required[] = {{"batches", &t->batches}, {"speed", &t->speed}, {"fs", &t->fs}, {"ff", &t->ff}, {"act", &t->act}};
    for (size_t k = 0; k < sizeof required / sizeof *required; k++)
        if (required[k].list->line == 0)
            return hs_diag_set(diag, HS_E_INPUT, name, t->section_line, "[pairing] lacks the key '%s'",
                               required[k].key);
    int n = t->batches.n, m = t->fs.n;
    if (t->speed.n != n)
        return hs_diag_set(diag, HS_E_INPUT, name, t->speed.line,
                           "speed has %d value%s but batches has %d (one per agent)", t->speed.n,
                           instance_plural(t->speed.n), n);
    const NumberList *per_split[] = {&t->ff, &t->act};
    const char *split_key[] = {"ff", "act"};
    for (int k = 0; k < 2; k++)
        if (per_split[k]->n != m)
            return hs_diag_set(diag, HS_E_INPUT, name, per_split[k]->line,
                               "%s has %d value%s but fs has %d (fs, ff and act have one per split)", split_key[k],
                               per_split[k]->n, instance_plural(per_split[k]->n), m);
    /* shared helpers have the paper's cost only (solver/shared.h) */
    if (t->capacity.value == PAIRING_CAPACITY_SHARED && t->cost.value == PAIRING_COST_EXACT)
        return hs_diag_set(diag, HS_E_INPUT, name, t->capacity.line,
                           "capacity = shared takes the paper's cost only (cost = exact is at line %d)",
                           t->cost.line);
    if (t->latency.line && t->latency.n != n)
        return hs_diag_set(diag, HS_E_INPUT, name, t->latency.line,
                           "latency has %d value%s but batches has %d (one per agent)", t->latency.n,
                           instance_plural(t->latency.n), n);
    for (int i = 0; i < n; i++) {
        if (t->latency.line && !(t->latency.v[i] >= 0 && isfinite(t->latency.v[i])))
            return hs_diag_set(diag, HS_E_INPUT, name, t->latency.line, "latency[%d] = %g must be finite and >= 0", i,
                               t->latency.v[i]);
        /* the exact cost plays out every batch */
        if (t->cost.value == PAIRING_COST_EXACT && t->batches.v[i] >= 0 && isfinite(t->batches.v[i]) &&
            (t->batches.v[i] != floor(t->batches.v[i]) || t->batches.v[i] > PAIRING_MAX_EXACT_BATCHES))
            return hs_diag_set(diag, HS_E_INPUT, name, t->batches.line,
                               "batches[%d] = %g: cost = exact needs whole numbers up to %d", i, t->batches.v[i],
                               PAIRING_MAX_EXACT_BATCHES);
        if (!(t->batches.v[i] >= 0) || !isfinite(t->batches.v[i]))
            return hs_diag_set(diag, HS_E_INPUT, name, t->batches.line, "batches[%d] = %g must be finite and >= 0", i,
                               t->batches.v[i]);
        if (!(t->speed.v[i] > 0) || !isfinite(t->speed.v[i]))
            return hs_diag_set(diag, HS_E_INPUT, name, t->speed.line, "speed[%d] = %g must be finite and > 0", i,
                               t->speed.v[i]);
    }
    const NumberList *fractions[] = {&t->fs, &t->ff};
    const char *fraction_key[] = {"fs", "ff"};
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < m; s++)
            if (!(fractions[k]->v[s] >= 0 && fractions[k]->v[s] <= 1))
                return hs_diag_set(diag, HS_E_INPUT, name, fractions[k]->line, "%s[%d] = %g is outside [0, 1]",
                                   fraction_key[k], s, fractions[k]->v[s]);
    for (int s = 0; s < m; s++)
        if (!(t->act.v[s] >= 0) || !isfinite(t->act.v[s]))
            return hs_diag_set(diag, HS_E_INPUT, name, t->act.line, "act[%d] = %g must be finite and >= 0", s,
                               t->act.v[s]);
    if (t->fs.v[0] != 1)
        return hs_diag_set(diag, HS_E_INPUT, name, t->fs.line,
                           "fs[0] = %g: split 0 means no offload, so fs[0] must be 1", t->fs.v[0]);
    if (t->ff.v[0] != 0)
        return hs_diag_set(diag, HS_E_INPUT, name, t->ff.line,
                           "ff[0] = %g: split 0 means no offload, so ff[0] must be 0", t->ff.v[0]);

    for (int i = 0; i < n; i++)
        rows_by_agent[i] = NULL;
    for (int r = 0; r < t->n_rows; r++) {
        const BandwidthRow *row = &t->rows[r];
        if (row->index >= n)
            return hs_diag_set(diag, HS_E_INPUT, name, row->values.line,
                               "bandwidth.%ld: there are only %d agents (rows 0..%d)", row->index, n, n - 1);
        rows_by_agent[row->index] = &row->values;
    }
    for (int i = 0; i < n; i++)
        if (rows_by_agent[i] == NULL)
            return hs_diag_set(diag, HS_E_INPUT, name, t->section_line,
                               "[pairing] lacks the row bandwidth.%d (one row per agent, %d agents)", i, n);
    for (int i = 0; i < n; i++) {
        const NumberList *row = rows_by_agent[i];
        if (row->n != n)
            return hs_diag_set(diag, HS_E_INPUT, name, row->line,
                               "bandwidth.%d has %d value%s, expected %d (one per agent)", i, row->n,
                               instance_plural(row->n), n);
        for (int j = 0; j < n; j++)
            if (row->v[j] < 0)
                return hs_diag_set(diag, HS_E_INPUT, name, row->line, "bandwidth.%d: value %d is %g, must be >= 0", i,
                                   j, row->v[j]);
    }
    return HS_OK;
}

int instance_parse(const char *name, const char *text, PairingProblem *p, HsDiag *diag)
{
    InstanceText t;
    memset(&t, 0, sizeof t);
    memset(p, 0, sizeof *p);
    t.name = name;
    const NumberList **rows_by_agent = NULL;
    int status = HS_E_NOMEM, line = 0;
    char *copy = strdup(text);
    if (copy == NULL) goto fail;
    status = HS_OK;
    for (char *cursor = copy; status == HS_OK && *cursor;) {
        char *eol = strchr(cursor, '\n');
        if (eol) *eol = '\0';
        line++;
        status = instance_line(&t, line, cursor, diag);
        cursor = eol ? eol + 1 : cursor + strlen(cursor);
    }
    if (status != HS_OK) goto fail;
    status = HS_E_NOMEM;
    rows_by_agent = malloc(((size_t)t.batches.n + 1) * sizeof *rows_by_agent);
    if (rows_by_agent == NULL) goto fail;
    if ((status = instance_check(&t, rows_by_agent, diag)) != HS_OK) goto fail;
    if ((status = pairing_problem_init(p, t.batches.n, t.fs.n)) != HS_OK) goto fail;
    int n = p->n;
    memcpy(p->batches, t.batches.v, (size_t)n * sizeof *p->batches);
    memcpy(p->speed, t.speed.v, (size_t)n * sizeof *p->speed);
    memcpy(p->fs, t.fs.v, (size_t)p->n_splits * sizeof *p->fs);
    memcpy(p->ff, t.ff.v, (size_t)p->n_splits * sizeof *p->ff);
    memcpy(p->act, t.act.v, (size_t)p->n_splits * sizeof *p->act);
    if (t.latency.line) memcpy(p->latency, t.latency.v, (size_t)n * sizeof *p->latency);
    p->cost = (PairingCost)t.cost.value;
    p->capacity = (PairingCapacity)t.capacity.value;
    /* network = fifo has no uplink choice: its messages always queue (as in a scenario) */
    p->network = t.network.value == 1   ? PAIRING_NETWORK_FIFO
                 : t.uplink.value == 1 ? PAIRING_NETWORK_MAXMIN_FIFO
                                       : PAIRING_NETWORK_MAXMIN;
    for (int i = 0; i < n; i++)
        memcpy(p->bandwidth + (size_t)i * (size_t)n, rows_by_agent[i]->v, (size_t)n * sizeof *p->bandwidth);
    status = HS_OK;
fail:
    if (status == HS_E_NOMEM) hs_diag_set(diag, status, name, 0, "out of memory");
    if (status != HS_OK) pairing_problem_free(p);
    free(rows_by_agent);
    free(copy);
    instance_text_free(&t);
    return status;
}

int instance_load(const char *path, PairingProblem *p, HsDiag *diag)
{
    memset(p, 0, sizeof *p);
    char *text;
    int status = input_file_read_text(path, INSTANCE_FILE_MAX, &text, NULL, diag);
    if (status != HS_OK) return status;
    status = instance_parse(path, text, p, diag);
    free(text);
    return status;
}
