/* show.c — `hetsim show` (analysis/show.h), and what `hetsim diff` (show_diff.c) shares
 * with it: finding the run, its title line, the value of a column as text. */
#include "analysis/show.h"
#include "analysis/show_internal.h"

#include "analysis/dbread.h"
#include "analysis/report.h"
#include "base/numtext.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int show_has(sqlite3 *db, const char *name)
{
    sqlite3_stmt *stmt = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = ?1", -1, &stmt, NULL) == SQLITE_OK &&
        sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC) == SQLITE_OK)
        found = sqlite3_step(stmt) == SQLITE_ROW;
    sqlite3_finalize(stmt);
    return found;
}

int show_step_run(sqlite3 *db, const char *sql, int64_t run_id, sqlite3_stmt **stmt)
{
    *stmt = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, stmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(*stmt, 1, run_id);
    if (rc == SQLITE_OK) rc = sqlite3_step(*stmt);
    return rc;
}

int show_run_row(sqlite3 *db, const char *path, const char *sql, int64_t run_id, sqlite3_stmt **stmt, HsDiag *diag)
{
    int rc = show_step_run(db, sql, run_id, stmt);
    if (rc == SQLITE_ROW) return HS_OK;
    int status = dbread_query_fail(db, rc, path, diag);
    sqlite3_finalize(*stmt);
    *stmt = NULL;
    return status;
}

void show_value(sqlite3_stmt *stmt, int column, int is_seed, char *out, size_t size)
{
    switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_NULL: snprintf(out, size, "-"); break;
    case SQLITE_INTEGER:
        if (is_seed) snprintf(out, size, "%" PRIu64, (uint64_t)sqlite3_column_int64(stmt, column));
        else snprintf(out, size, "%lld", (long long)sqlite3_column_int64(stmt, column));
        break;
    case SQLITE_FLOAT: {
        char number[NUMTEXT_SIZE];
        snprintf(out, size, "%s", numtext_double(number, sizeof number, sqlite3_column_double(stmt, column)));
        break;
    }
    default: snprintf(out, size, "%s", (const char *)sqlite3_column_text(stmt, column)); break;
    }
}

int show_find_run(sqlite3 *db, const char *path, int64_t run_id, const char *sweep, ShowRun *run, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    memset(run, 0, sizeof *run);
    run->id = run_id;
    int rc = show_step_run(db, "SELECT name, method, seed, status, sweep, point, message FROM runs WHERE id = ?1",
                           run_id, &stmt);
    if (rc == SQLITE_DONE) {
        sqlite3_finalize(stmt);
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "no run with id %lld", (long long)run_id);
    }
    if (rc != SQLITE_ROW) {
        int status = dbread_query_fail(db, rc, path, diag);
        sqlite3_finalize(stmt);
        return status;
    }
    char *fields[] = {run->name, run->method, run->seed, run->status, run->sweep, run->point, run->message};
    size_t sizes[] = {sizeof run->name, sizeof run->method, sizeof run->seed, sizeof run->status, sizeof run->sweep,
                      sizeof run->point, sizeof run->message};
    for (int c = 0; c < 7; c++) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) fields[c][0] = '\0';
        else show_value(stmt, c, c == 2, fields[c], sizes[c]);
    }
    sqlite3_finalize(stmt);
    if (sweep != NULL && strcmp(run->sweep, sweep) != 0) {
        if (run->sweep[0] == '\0')
            return hs_diag_set(diag, HS_E_INPUT, path, 0, "run %lld is not of sweep %s (it is of no sweep)",
                               (long long)run_id, sweep);
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "run %lld is of sweep %s, not %s", (long long)run_id,
                           run->sweep, sweep);
    }
    return HS_OK;
}

/* "run 3 of sweep sw-... (run 3 of 8; ids 1-8)" from the sweeps table, when it has the
 * sweep; "" otherwise (a database of schema version 1). */
static void show_sweep_place(sqlite3 *db, const ShowRun *run, char *out, size_t size)
{
    sqlite3_stmt *stmt = NULL;
    out[0] = '\0';
    if (run->sweep[0] == '\0' || !show_has(db, "sweeps")) return;
    if (sqlite3_prepare_v2(db, "SELECT first_run, runs FROM sweeps WHERE sweep = ?1", -1, &stmt, NULL) == SQLITE_OK &&
        sqlite3_bind_text(stmt, 1, run->sweep, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
        int64_t first = sqlite3_column_int64(stmt, 0), runs = sqlite3_column_int64(stmt, 1);
        if (run->id >= first && run->id < first + runs)
            snprintf(out, size, " (run %lld of its %lld, ids %lld-%lld)", (long long)(run->id - first + 1),
                     (long long)runs, (long long)first, (long long)(first + runs - 1));
    }
    sqlite3_finalize(stmt);
}

void show_title(sqlite3 *db, const ShowRun *run, FILE *out)
{
    fprintf(out, "run %lld: %s, method %s, seed %s, %s\n", (long long)run->id, run->name, run->method, run->seed,
            run->status);
    if (run->message[0]) fprintf(out, "  message: %s\n", run->message);
    if (run->sweep[0]) {
        char place[128];
        show_sweep_place(db, run, place, sizeof place);
        fprintf(out, "  sweep %s%s\n  point %s\n", run->sweep, place, run->point);
    }
}

/* Provenance: the columns of runs that say where, when and how the run was made, those
 * the file has. */
static int show_provenance(sqlite3 *db, const char *path, int64_t run_id, FILE *out, HsDiag *diag)
{
    static const char *const shown[] = {"version", "command", "overrides", "scenario", "host", "threads",
                                        "started_at", "finished_at", "wall_s"};
    sqlite3_stmt *stmt = NULL;
    int status = show_run_row(db, path, "SELECT * FROM runs WHERE id = ?1", run_id, &stmt, diag);
    if (status != HS_OK) return status;
    fputs("\nprovenance\n", out);
    int columns = sqlite3_column_count(stmt), versioned = 0;
    for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++)
        for (int c = 0; c < columns; c++) {
            if (strcmp(sqlite3_column_name(stmt, c), shown[k]) != 0) continue;
            if (sqlite3_column_type(stmt, c) == SQLITE_NULL) break;
            char value[4096];
            show_value(stmt, c, 0, value, sizeof value);
            /* overrides are one per line: one indented line each */
            fprintf(out, "  %-14s", shown[k]);
            for (const char *p = value; *p; p++) {
                fputc(*p, out);
                if (*p == '\n' && p[1] != '\0') fprintf(out, "  %-14s", "");
            }
            fputs(strcmp(shown[k], "wall_s") == 0 ? " s\n" : "\n", out);
            if (k == 0) versioned = 1;
            break;
        }
    for (int c = 0; c < columns; c++)
        if (strcmp(sqlite3_column_name(stmt, c), "scenario_text") == 0 && sqlite3_column_type(stmt, c) != SQLITE_NULL)
            fprintf(out, "  %-14s%d bytes as read (hetsim show --scenario-text)\n", "scenario_text",
                    sqlite3_column_bytes(stmt, c));
    if (!versioned) fputs("  (no version, command or host: the run was written before hetsim recorded them)\n", out);
    sqlite3_finalize(stmt);
    return HS_OK;
}

void show_unit(sqlite3 *db, const char *table, const char *column, char *out, size_t size)
{
    sqlite3_stmt *stmt = NULL;
    out[0] = '\0';
    if (sqlite3_prepare_v2(db, "SELECT unit FROM schema_columns WHERE table_name = ?1 AND column_name = ?2", -1,
                           &stmt, NULL) == SQLITE_OK &&
        sqlite3_bind_text(stmt, 1, table, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_bind_text(stmt, 2, column, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW &&
        sqlite3_column_text(stmt, 0) != NULL && strcmp((const char *)sqlite3_column_text(stmt, 0), "1") != 0)
        snprintf(out, size, "%s", (const char *)sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
}

/* Every column of run_summary with its unit. */
static int show_summary(sqlite3 *db, const char *path, int64_t run_id, FILE *out, HsDiag *diag)
{
    fputs("\nsummary (run_summary)\n", out);
    if (!show_has(db, "run_summary")) {
        fputs("  none: this database (schema version 1) has no run_summary view; it gets one when a run is\n"
              "  written to it; `hetsim report FILE --run ID` computes the same figures\n", out);
        return HS_OK;
    }
    sqlite3_stmt *stmt = NULL;
    int status = show_run_row(db, path, "SELECT * FROM run_summary WHERE id = ?1", run_id, &stmt, diag);
    if (status != HS_OK) return status;
    for (int c = 0; c < sqlite3_column_count(stmt); c++) {
        const char *name = sqlite3_column_name(stmt, c);
        if (strcmp(name, "id") == 0) continue;
        char value[1024], unit[32];
        show_value(stmt, c, strcmp(name, "seed") == 0, value, sizeof value);
        show_unit(db, "run_summary", name, unit, sizeof unit);
        int with_unit = unit[0] && strcmp(value, "-") != 0;
        fprintf(out, "  %-18s %s%s%s\n", name, value, with_unit ? " " : "", with_unit ? unit : "");
    }
    sqlite3_finalize(stmt);
    return HS_OK;
}

/* runs.config, a swept key's line marked. */
static int show_config(sqlite3 *db, const char *path, int64_t run_id, FILE *out, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL, *swept = NULL;
    int status = show_run_row(db, path, "SELECT config FROM runs WHERE id = ?1", run_id, &stmt, diag);
    if (status != HS_OK) return status;
    int has_params = show_has(db, "run_params");
    if (has_params &&
        sqlite3_prepare_v2(db, "SELECT 1 FROM run_params WHERE run_id = ?1 AND section = ?2 AND key = ?3 AND swept",
                           -1, &swept, NULL) != SQLITE_OK) {
        status = dbread_query_fail(db, sqlite3_errcode(db), path, diag);
        sqlite3_finalize(stmt);
        return status;
    }
    fprintf(out, "\nconfig (runs.config: the resolved scenario, SI units%s)\n",
            has_params ? "; a swept key says so" : "");
    const char *config = (const char *)sqlite3_column_text(stmt, 0);
    char section[256] = "";
    for (const char *line = config ? config : ""; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        fprintf(out, "%.*s", (int)length, line);
        if (length > 2 && line[0] == '[' && line[length - 1] == ']') {
            snprintf(section, sizeof section, "%.*s", (int)length - 2, line + 1);
        } else if (swept != NULL) {
            const char *eq = memchr(line, '=', length);
            size_t key = eq ? (size_t)(eq - line) : 0;
            while (key > 0 && line[key - 1] == ' ') key--;
            if (key > 0) {
                sqlite3_reset(swept);
                sqlite3_bind_int64(swept, 1, run_id);
                sqlite3_bind_text(swept, 2, section, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(swept, 3, line, (int)key, SQLITE_TRANSIENT);
                if (sqlite3_step(swept) == SQLITE_ROW) fputs("   ; swept", out);
            }
        }
        fputc('\n', out);
        line += end ? length + 1 : length;
    }
    sqlite3_finalize(stmt);
    sqlite3_finalize(swept);
    return HS_OK;
}

/* SHOW_SCENARIO_TEXT: the file as the run read it, nothing else. */
static int show_scenario_text(sqlite3 *db, const char *path, int64_t run_id, FILE *out, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    int rc = show_step_run(db, "SELECT scenario_text FROM runs WHERE id = ?1", run_id, &stmt);
    if (rc == SQLITE_ERROR && stmt == NULL) { /* the prepare failed: no such column */
        return hs_diag_set(diag, HS_E_INPUT, path, 0,
                           "this database (schema version 1) keeps no scenario text; runs.config has the resolved one");
    }
    if (rc != SQLITE_ROW) {
        int status = dbread_query_fail(db, rc, path, diag);
        sqlite3_finalize(stmt);
        return status;
    }
    int status = HS_OK;
    if (sqlite3_column_type(stmt, 0) == SQLITE_NULL)
        status = hs_diag_set(diag, HS_E_INPUT, path, 0, "run %lld has no scenario text (written before hetsim kept it)",
                             (long long)run_id);
    else fputs((const char *)sqlite3_column_text(stmt, 0), out);
    sqlite3_finalize(stmt);
    return status;
}

int show_write_out(FILE *memory, char **text, size_t *size, int status, const char *path, FILE *out, HsDiag *diag)
{
    if (memory != NULL && fclose(memory) != 0 && status == HS_OK)
        status = hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
    if (status == HS_OK) {
        fwrite(*text, 1, *size, out);
        if (fflush(out) != 0 || ferror(out))
            status = hs_diag_set(diag, HS_E_IO, NULL, 0, "cannot write: %s", strerror(errno));
    }
    free(*text);
    *text = NULL;
    return status;
}

int show_print_run(const char *db_path, int64_t run_id, const char *sweep, unsigned flags, ReportExtraMeaning meaning,
                   FILE *out, HsDiag *diag)
{
    sqlite3 *db = NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *memory = NULL;
    ShowRun run;
    int status = dbread_open(db_path, &db, diag);
    if (status == HS_OK) status = show_find_run(db, db_path, run_id, sweep, &run, diag);
    if (status == HS_OK && (memory = open_memstream(&text, &size)) == NULL)
        status = hs_diag_set(diag, HS_E_NOMEM, db_path, 0, "out of memory");
    if (status == HS_OK && (flags & SHOW_SCENARIO_TEXT)) {
        status = show_scenario_text(db, db_path, run_id, memory, diag);
    } else if (status == HS_OK) {
        show_title(db, &run, memory);
        status = show_provenance(db, db_path, run_id, memory, diag);
        if (status == HS_OK) status = show_summary(db, db_path, run_id, memory, diag);
        if (status == HS_OK) status = show_config(db, db_path, run_id, memory, diag);
        if (status == HS_OK) {
            fputs("\nrounds\n", memory);
            status = report_print_rounds(db_path, run_id, meaning, memory, diag);
        }
    }
    status = show_write_out(memory, &text, &size, status, db_path, out, diag);
    sqlite3_close(db);
    return status;
}
