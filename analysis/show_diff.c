/* show_diff.c — `hetsim diff` (analysis/show.h): the resolved keys, then the run_summary
 * figures, that differ between two runs. A run has a few hundred keys, so the two lists
 * are matched by a plain search (quadratic, a few ten thousand comparisons). */
#include "analysis/show.h"
#include "analysis/show_internal.h"

#include "analysis/dbread.h"
#include "base/grow.h"
#include "base/numtext.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct DiffKey {
    char *name;     /* SECTION.KEY */
    char *shown;    /* the value as printed */
    double number;  /* NaN when not a number */
} DiffKey;

typedef struct DiffKeys {
    DiffKey *keys;
    int count, capacity;
} DiffKeys;

static void diff_keys_free(DiffKeys *k)
{
    for (int i = 0; i < k->count; i++) {
        free(k->keys[i].name);
        free(k->keys[i].shown);
    }
    free(k->keys);
    memset(k, 0, sizeof *k);
}

static int diff_keys_add(DiffKeys *k, const char *section, const char *key, int key_length, const char *shown,
                         double number)
{
    if (hs_grow((void **)&k->keys, &k->capacity, k->count, sizeof *k->keys, 256) != HS_OK) return HS_E_NOMEM;
    size_t length = strlen(section) + 1 + (size_t)key_length + 1;
    DiffKey *d = &k->keys[k->count];
    d->name = malloc(length);
    d->shown = strdup(shown);
    d->number = number;
    if (d->name == NULL || d->shown == NULL) {
        free(d->name);
        free(d->shown);
        return HS_E_NOMEM;
    }
    snprintf(d->name, length, "%s.%.*s", section, key_length, key);
    k->count++;
    return HS_OK;
}

static int diff_has_params(sqlite3 *db, int64_t run_id)
{
    sqlite3_stmt *stmt = NULL;
    int found = 0;
    if (show_has(db, "run_params") &&
        sqlite3_prepare_v2(db, "SELECT 1 FROM run_params WHERE run_id = ?1 LIMIT 1", -1, &stmt, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(stmt, 1, run_id) == SQLITE_OK)
        found = sqlite3_step(stmt) == SQLITE_ROW;
    sqlite3_finalize(stmt);
    return found;
}

/* From run_params: numbers as the shortest text of value_num with its unit. */
static int diff_load_params(sqlite3 *db, const char *path, int64_t run_id, DiffKeys *keys, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT section, key, value_text, value_num, unit FROM run_params"
                                    " WHERE run_id = ?1 ORDER BY rowid", -1, &stmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(stmt, 1, run_id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        const char *section = (const char *)sqlite3_column_text(stmt, 0), *key = (const char *)sqlite3_column_text(stmt, 1);
        const char *text = (const char *)sqlite3_column_text(stmt, 2), *unit = (const char *)sqlite3_column_text(stmt, 4);
        char shown[1024], number[NUMTEXT_SIZE];
        double value = NAN;
        if (sqlite3_column_type(stmt, 3) != SQLITE_NULL) {
            value = sqlite3_column_double(stmt, 3);
            snprintf(shown, sizeof shown, "%s%s%s", numtext_double(number, sizeof number, value),
                     unit && unit[0] ? " " : "", unit ? unit : "");
        } else {
            snprintf(shown, sizeof shown, "%s", text ? text : "-");
        }
        if (diff_keys_add(keys, section ? section : "", key ? key : "", key ? (int)strlen(key) : 0, shown, value) != HS_OK) {
            sqlite3_finalize(stmt);
            return hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
        }
        rc = SQLITE_OK;
    }
    int status = rc == SQLITE_DONE ? HS_OK : dbread_query_fail(db, rc, path, diag);
    sqlite3_finalize(stmt);
    return status;
}

/* From the INI text of runs.config, for runs written before run_params existed. */
static int diff_load_config(sqlite3 *db, const char *path, int64_t run_id, DiffKeys *keys, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    int status = show_run_row(db, path, "SELECT config FROM runs WHERE id = ?1", run_id, &stmt, diag);
    if (status != HS_OK) return status;
    const char *config = (const char *)sqlite3_column_text(stmt, 0);
    char section[256] = "", value[1024];
    for (const char *line = config ? config : ""; *line && status == HS_OK;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        const char *eq = memchr(line, '=', length);
        if (length > 2 && line[0] == '[' && line[length - 1] == ']') {
            snprintf(section, sizeof section, "%.*s", (int)length - 2, line + 1);
        } else if (eq != NULL) {
            size_t key = (size_t)(eq - line);
            while (key > 0 && line[key - 1] == ' ') key--;
            const char *v = eq + 1;
            while (*v == ' ') v++;
            snprintf(value, sizeof value, "%.*s", (int)(line + length - v), v);
            char *number_end;
            double number = strtod(value, &number_end);
            if (number_end == value || *number_end != '\0') number = NAN;
            if (diff_keys_add(keys, section, line, (int)key, value, number) != HS_OK)
                status = hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
        }
        line += end ? length + 1 : length;
    }
    sqlite3_finalize(stmt);
    return status;
}

static const DiffKey *diff_find(const DiffKeys *keys, const char *name)
{
    for (int i = 0; i < keys->count; i++)
        if (strcmp(keys->keys[i].name, name) == 0) return &keys->keys[i];
    return NULL;
}

static int diff_same(const DiffKey *a, const DiffKey *b)
{
    if (a == NULL || b == NULL) return a == b;
    if (!isnan(a->number) && !isnan(b->number)) return a->number == b->number;
    return strcmp(a->shown, b->shown) == 0;
}

static void diff_row(FILE *out, int width, const char *name, const char *a, const char *b)
{
    fprintf(out, "  %-*s  %-28s  %s\n", width, name, a, b);
}

/* The keys that differ: run a's order, then the keys only b has. */
static void diff_print_keys(const DiffKeys *a, const DiffKeys *b, int64_t run_a, int64_t run_b, int from_params,
                            FILE *out)
{
    int width = 24, differ = 0;
    char title_a[32], title_b[32];
    snprintf(title_a, sizeof title_a, "run %lld", (long long)run_a);
    snprintf(title_b, sizeof title_b, "run %lld", (long long)run_b);
    fprintf(out, "\nconfig: the keys that differ (%s)\n", from_params ? "run_params, SI units" : "runs.config");
    for (int i = 0; i < a->count; i++)
        if (!diff_same(&a->keys[i], diff_find(b, a->keys[i].name))) {
            if (differ++ == 0) diff_row(out, width, "key", title_a, title_b);
            const DiffKey *other = diff_find(b, a->keys[i].name);
            diff_row(out, width, a->keys[i].name, a->keys[i].shown, other ? other->shown : "-");
        }
    for (int i = 0; i < b->count; i++)
        if (diff_find(a, b->keys[i].name) == NULL) {
            if (differ++ == 0) diff_row(out, width, "key", title_a, title_b);
            diff_row(out, width, b->keys[i].name, "-", b->keys[i].shown);
        }
    if (differ == 0) fputs("  none: the two runs resolved the same scenario\n", out);
}

/* The run_summary columns whose values differ (id aside). */
static int diff_print_summary(sqlite3 *db, const char *path, int64_t run_a, int64_t run_b, FILE *out, HsDiag *diag)
{
    fputs("\nsummary: the figures that differ (run_summary)\n", out);
    if (!show_has(db, "run_summary")) {
        fputs("  none: this database (schema version 1) has no run_summary view; `hetsim report` compares\n"
              "  the runs\n", out);
        return HS_OK;
    }
    sqlite3_stmt *stmt[2] = {NULL, NULL};
    int64_t ids[2] = {run_a, run_b};
    for (int k = 0; k < 2; k++) {
        int status = show_run_row(db, path, "SELECT * FROM run_summary WHERE id = ?1", ids[k], &stmt[k], diag);
        if (status != HS_OK) {
            sqlite3_finalize(stmt[0]); /* k = 1's is finalized already */
            return status;
        }
    }
    int differ = 0;
    char title_a[32], title_b[32];
    snprintf(title_a, sizeof title_a, "run %lld", (long long)run_a);
    snprintf(title_b, sizeof title_b, "run %lld", (long long)run_b);
    for (int c = 0; c < sqlite3_column_count(stmt[0]); c++) {
        const char *name = sqlite3_column_name(stmt[0], c);
        if (strcmp(name, "id") == 0 || strcmp(name, "wall_s") == 0) continue;  /* always differ, say nothing */
        char a[1024], b[1024];
        show_value(stmt[0], c, strcmp(name, "seed") == 0, a, sizeof a);
        show_value(stmt[1], c, strcmp(name, "seed") == 0, b, sizeof b);
        if (strcmp(a, b) == 0) continue;
        char unit[32], named[96];
        show_unit(db, "run_summary", name, unit, sizeof unit);
        snprintf(named, sizeof named, unit[0] ? "%s (%s)" : "%s", name, unit);
        if (differ++ == 0) diff_row(out, 24, "figure", title_a, title_b);
        diff_row(out, 24, named, a, b);
    }
    if (differ == 0) fputs("  none: the two runs gave the same figures\n", out);
    sqlite3_finalize(stmt[0]);
    sqlite3_finalize(stmt[1]);
    return HS_OK;
}

int show_print_diff(const char *db_path, int64_t run_a, int64_t run_b, const char *sweep, FILE *out, HsDiag *diag)
{
    sqlite3 *db = NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *memory = NULL;
    ShowRun a, b;
    DiffKeys keys_a = {0}, keys_b = {0};
    int status = dbread_open(db_path, &db, diag), from_params = 0;
    if (status == HS_OK) status = show_find_run(db, db_path, run_a, sweep, &a, diag);
    if (status == HS_OK) status = show_find_run(db, db_path, run_b, sweep, &b, diag);
    if (status == HS_OK) {
        /* both from run_params, or both from the config text: never one of each */
        from_params = diff_has_params(db, run_a) && diff_has_params(db, run_b);
        status = from_params ? diff_load_params(db, db_path, run_a, &keys_a, diag)
                             : diff_load_config(db, db_path, run_a, &keys_a, diag);
    }
    if (status == HS_OK)
        status = from_params ? diff_load_params(db, db_path, run_b, &keys_b, diag)
                             : diff_load_config(db, db_path, run_b, &keys_b, diag);
    if (status == HS_OK && (memory = open_memstream(&text, &size)) == NULL)
        status = hs_diag_set(diag, HS_E_NOMEM, db_path, 0, "out of memory");
    if (status == HS_OK) {
        show_title(db, &a, memory);
        show_title(db, &b, memory);
        diff_print_keys(&keys_a, &keys_b, run_a, run_b, from_params, memory);
        status = diff_print_summary(db, db_path, run_a, run_b, memory, diag);
    }
    status = show_write_out(memory, &text, &size, status, db_path, out, diag);
    diff_keys_free(&keys_a);
    diff_keys_free(&keys_b);
    sqlite3_close(db);
    return status;
}
