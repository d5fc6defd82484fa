/* show_internal.h — what show.c and show_diff.c share (nothing else includes it): the
 * run being shown, found and checked against the sweep the user named. */
#ifndef ANALYSIS_SHOW_INTERNAL_H
#define ANALYSIS_SHOW_INTERNAL_H

#include "base/hs_error.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct ShowRun {
    int64_t id;
    char name[256], method[64], seed[32], status[32];
    char sweep[64];     /* "" outside a sweep */
    char point[1024];
    char message[512];
} ShowRun;

/* Reads run run_id into *run; HS_E_INPUT "no run with id N", or "run N is of sweep X,
 * not Y" when sweep is not NULL and differs. */
int show_find_run(sqlite3 *db, const char *path, int64_t run_id, const char *sweep, ShowRun *run, HsDiag *diag);
/* "run 3: NAME, method M, seed S, STATUS" and its sweep and point. */
void show_title(sqlite3 *db, const ShowRun *run, FILE *out);
/* Whether the file has a table or view called name. */
int show_has(sqlite3 *db, const char *name);
/* Column `column` of the current row as text: '-' for NULL, integers exact (is_seed: as
 * the unsigned 64-bit seed), reals in the shortest text that reads back to them. */
void show_value(sqlite3_stmt *stmt, int column, int is_seed, char *out, size_t size);

/* Prepares sql, whose one parameter ?1 is run_id, binds it and steps: SQLite's code of
 * the first call that did not succeed, SQLITE_ROW with *stmt on the first row, or
 * SQLITE_DONE for no row. *stmt stays NULL when the prepare failed; the caller
 * finalizes it in every case. */
int show_step_run(sqlite3 *db, const char *sql, int64_t run_id, sqlite3_stmt **stmt);
/* show_step_run for a row that must be there (the run was found before): HS_OK with
 * *stmt on it (the caller finalizes it), else the failure as dbread_query_fail says it,
 * *stmt finalized and NULL. */
int show_run_row(sqlite3 *db, const char *path, const char *sql, int64_t run_id, sqlite3_stmt **stmt, HsDiag *diag);

/* The end of show and diff, which print nothing when they fail: closes memory (the
 * open_memstream of *text and *size, NULL when it was never opened), then writes the text
 * to out when status (so far) is HS_OK and frees it. The status after: a failed close is
 * HS_E_NOMEM, a failed write HS_E_IO. */
int show_write_out(FILE *memory, char **text, size_t *size, int status, const char *path, FILE *out, HsDiag *diag);

/* The unit schema_columns gives column of table ("" for none, for a fraction, or when
 * the file has no schema_columns). */
void show_unit(sqlite3 *db, const char *table, const char *column, char *out, size_t size);

#endif
