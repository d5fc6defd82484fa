/* instance.c — a small line parser (no line-length limit) so every error can name its
 * line: lists of numbers are read once into growable arrays, then checked together. */
#include "solver/instance.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct NumberList {
    double *v;
    int n, line;
} NumberList;

typedef struct InstanceText {
    NumberList batches, speed, fs, ff, act;
    NumberList *rows;   /* bandwidth.i */
    int n_rows;         /* highest row index + 1 */
} InstanceText;

static void instance_text_free(InstanceText *t)
{
    free(t->batches.v);
    free(t->speed.v);
    free(t->fs.v);
    free(t->ff.v);
    free(t->act.v);
    for (int i = 0; i < t->n_rows; i++) free(t->rows[i].v);
    free(t->rows);
}

static char *instance_trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

static int instance_numbers(const char *name, int line, const char *key, char *value, NumberList *out,
                            HsDiag *diag)
{
    if (out->line)
        return hs_diag_set(diag, HS_E_INPUT, name, line, "'%s' is given twice (first at line %d)", key, out->line);
    out->line = line;
    int cap = 16;
    out->v = malloc((size_t)cap * sizeof *out->v);
    if (out->v == NULL) return HS_E_NOMEM;
    char *save = NULL;
    for (char *tok = strtok_r(value, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        tok = instance_trim(tok);
        double x;
        char *end;
        if (strcmp(tok, "inf") == 0) {
            x = INFINITY;
        } else {
            errno = 0;
            x = strtod(tok, &end);
            if (*tok == '\0' || *end != '\0' || errno || isnan(x))
                return hs_diag_set(diag, HS_E_INPUT, name, line, "%s: '%s' is not a number", key, tok);
        }
        if (out->n == cap) {
            cap *= 2;
            double *grown = realloc(out->v, (size_t)cap * sizeof *grown);
            if (grown == NULL) return HS_E_NOMEM;
            out->v = grown;
        }
        out->v[out->n++] = x;
    }
    if (out->n == 0) return hs_diag_set(diag, HS_E_INPUT, name, line, "%s: no values", key);
    return HS_OK;
}

static int instance_line(const char *name, int line, char *text, int *in_section, InstanceText *t, HsDiag *diag)
{
    char *hash = strpbrk(text, ";#");
    if (hash) *hash = '\0';
    char *s = instance_trim(text);
    if (*s == '\0') return HS_OK;
    if (*s == '[') {
        if (strcmp(s, "[pairing]") != 0)
            return hs_diag_set(diag, HS_E_INPUT, name, line, "unknown section %s (an instance has only [pairing])", s);
        *in_section = 1;
        return HS_OK;
    }
    char *eq = strchr(s, '=');
    if (eq == NULL) return hs_diag_set(diag, HS_E_INPUT, name, line, "expected KEY = VALUES");
    if (!*in_section) return hs_diag_set(diag, HS_E_INPUT, name, line, "key outside [pairing]");
    *eq = '\0';
    char *key = instance_trim(s), *value = eq + 1;
    if (strcmp(key, "batches") == 0) return instance_numbers(name, line, key, value, &t->batches, diag);
    if (strcmp(key, "speed") == 0) return instance_numbers(name, line, key, value, &t->speed, diag);
    if (strcmp(key, "fs") == 0) return instance_numbers(name, line, key, value, &t->fs, diag);
    if (strcmp(key, "ff") == 0) return instance_numbers(name, line, key, value, &t->ff, diag);
    if (strcmp(key, "act") == 0) return instance_numbers(name, line, key, value, &t->act, diag);
    if (strncmp(key, "bandwidth.", 10) == 0) {
        char *end;
        long row = strtol(key + 10, &end, 10);
        if (key[10] == '\0' || *end != '\0' || row < 0 || row > 1000000)
            return hs_diag_set(diag, HS_E_INPUT, name, line, "'%s': expected bandwidth.ROW with ROW a number", key);
        if (row >= t->n_rows) {
            NumberList *grown = realloc(t->rows, (size_t)(row + 1) * sizeof *grown);
            if (grown == NULL) return HS_E_NOMEM;
            memset(grown + t->n_rows, 0, (size_t)(row + 1 - t->n_rows) * sizeof *grown);
            t->rows = grown;
            t->n_rows = (int)row + 1;
        }
        return instance_numbers(name, line, key, value, &t->rows[row], diag);
    }
    return hs_diag_set(diag, HS_E_INPUT, name, line,
                       "unknown key '%s' (use batches, speed, fs, ff, act, bandwidth.ROW)", key);
}

static int instance_check(const char *name, InstanceText *t, HsDiag *diag)
{
    NumberList *required[] = {&t->batches, &t->speed, &t->fs, &t->ff, &t->act};
    const char *names[] = {"batches", "speed", "fs", "ff", "act"};
    for (int k = 0; k < 5; k++)
        if (required[k]->line == 0) return hs_diag_set(diag, HS_E_INPUT, name, 0, "missing key '%s'", names[k]);
    int n = t->batches.n, m = t->fs.n;
    if (t->speed.n != n)
        return hs_diag_set(diag, HS_E_INPUT, name, t->speed.line, "speed has %d values, batches has %d", t->speed.n, n);
    if (t->ff.n != m || t->act.n != m)
        return hs_diag_set(diag, HS_E_INPUT, name, t->ff.n != m ? t->ff.line : t->act.line,
                           "fs, ff and act must have the same length (%d, %d, %d)", m, t->ff.n, t->act.n);
    for (int i = 0; i < n; i++) {
        if (!(t->batches.v[i] >= 0) || !isfinite(t->batches.v[i]))
            return hs_diag_set(diag, HS_E_INPUT, name, t->batches.line, "batches[%d] must be finite and >= 0", i);
        if (!(t->speed.v[i] > 0) || !isfinite(t->speed.v[i]))
            return hs_diag_set(diag, HS_E_INPUT, name, t->speed.line, "speed[%d] must be finite and > 0", i);
    }
    for (int s = 0; s < m; s++) {
        if (!(t->fs.v[s] >= 0 && t->fs.v[s] <= 1))
            return hs_diag_set(diag, HS_E_INPUT, name, t->fs.line, "fs[%d] = %g is outside [0, 1]", s, t->fs.v[s]);
        if (!(t->ff.v[s] >= 0 && t->ff.v[s] <= 1))
            return hs_diag_set(diag, HS_E_INPUT, name, t->ff.line, "ff[%d] = %g is outside [0, 1]", s, t->ff.v[s]);
        if (!(t->act.v[s] >= 0) || !isfinite(t->act.v[s]))
            return hs_diag_set(diag, HS_E_INPUT, name, t->act.line, "act[%d] must be finite and >= 0", s);
    }
    if (t->fs.v[0] != 1 || t->ff.v[0] != 0)
        return hs_diag_set(diag, HS_E_INPUT, name, t->fs.v[0] != 1 ? t->fs.line : t->ff.line,
                           "split 0 means no offload: fs[0] must be 1 and ff[0] 0");
    if (t->n_rows > n)
        return hs_diag_set(diag, HS_E_INPUT, name, t->rows[t->n_rows - 1].line, "bandwidth.%d: only %d agents",
                           t->n_rows - 1, n);
    for (int i = 0; i < n; i++) {
        if (i >= t->n_rows || t->rows[i].line == 0)
            return hs_diag_set(diag, HS_E_INPUT, name, 0, "missing row bandwidth.%d", i);
        if (t->rows[i].n != n)
            return hs_diag_set(diag, HS_E_INPUT, name, t->rows[i].line, "bandwidth.%d has %d values, expected %d", i,
                               t->rows[i].n, n);
        for (int j = 0; j < n; j++)
            if (t->rows[i].v[j] < 0)
                return hs_diag_set(diag, HS_E_INPUT, name, t->rows[i].line, "bandwidth.%d: negative value at column %d", i, j);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (t->rows[i].v[j] != t->rows[j].v[i])
                return hs_diag_set(diag, HS_E_INPUT, name, t->rows[i].line,
                                   "the matrix is not symmetric: bandwidth.%d[%d] = %g but bandwidth.%d[%d] = %g", i, j,
                                   t->rows[i].v[j], j, i, t->rows[j].v[i]);
    return HS_OK;
}

int instance_parse(const char *name, const char *text, PairingProblem *p, HsDiag *diag)
{
    InstanceText t;
    memset(&t, 0, sizeof t);
    memset(p, 0, sizeof *p);
    char *copy = strdup(text);
    if (copy == NULL) return HS_E_NOMEM;
    int status = HS_OK, line = 0, in_section = 0;
    char *cursor = copy;
    while (status == HS_OK && *cursor) {
        char *eol = strchr(cursor, '\n');
        if (eol) *eol = '\0';
        line++;
        status = instance_line(name, line, cursor, &in_section, &t, diag);
        cursor = eol ? eol + 1 : cursor + strlen(cursor);
    }
    free(copy);
    if (status == HS_OK) status = instance_check(name, &t, diag);
    if (status == HS_OK) status = pairing_problem_init(p, t.batches.n, t.fs.n);
    if (status == HS_OK) {
        int n = p->n;
        memcpy(p->batches, t.batches.v, (size_t)n * sizeof *p->batches);
        memcpy(p->speed, t.speed.v, (size_t)n * sizeof *p->speed);
        memcpy(p->fs, t.fs.v, (size_t)p->n_splits * sizeof *p->fs);
        memcpy(p->ff, t.ff.v, (size_t)p->n_splits * sizeof *p->ff);
        memcpy(p->act, t.act.v, (size_t)p->n_splits * sizeof *p->act);
        for (int i = 0; i < n; i++) memcpy(p->bandwidth + (size_t)i * n, t.rows[i].v, (size_t)n * sizeof(double));
    }
    if (status == HS_E_NOMEM) hs_diag_set(diag, status, name, 0, "out of memory");
    instance_text_free(&t);
    return status;
}

int instance_load(const char *path, PairingProblem *p, HsDiag *diag)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return hs_diag_set(diag, HS_E_INPUT, path, 0, "cannot open: %s", strerror(errno));
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *grown = realloc(text, cap * 2);
            if (grown == NULL) {
                free(text);
                text = NULL;
                break;
            }
            text = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (text == NULL) return hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
    text[len] = '\0';
    int status = memchr(text, '\0', len) ? hs_diag_set(diag, HS_E_INPUT, path, 0, "not a text file")
                                          : instance_parse(path, text, p, diag);
    free(text);
    return status;
}
