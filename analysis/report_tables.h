/* report_tables.h — the tables of `hetsim report` (analysis/report.h says what each
 * holds) and how they are filled: a grid of typed cells under named columns, one row per
 * run, point, speedup (from a RunSet, analysis/runset.h) or round (from the database).
 * What is computed lives in report_tables.c; report.c prints the tables as text or CSV.
 * Nothing outside analysis/report*.c includes this. */
#ifndef ANALYSIS_REPORT_TABLES_H
#define ANALYSIS_REPORT_TABLES_H

#include "analysis/report.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    REPORT_CELL_NULL = 0, REPORT_CELL_INT, REPORT_CELL_UINT, REPORT_CELL_REAL, REPORT_CELL_TEXT
} ReportCellType;

typedef struct ReportCell {
    ReportCellType type;
    union {
        int64_t i;
        uint64_t u;
        double d;
        char *s;    /* owned */
    } v;
} ReportCell;

/* How a column reads in the text table; CSV ignores it and prints the raw value. */
typedef enum {
    REPORT_FMT_TEXT, REPORT_FMT_INT, REPORT_FMT_SECONDS, REPORT_FMT_SHARE, REPORT_FMT_BYTES,
    REPORT_FMT_ACCURACY, REPORT_FMT_NUMBER
} ReportFormat;

enum {
    REPORT_COL_OPTIONAL = 1u << 0,  /* text: left out when every row misses it */
    REPORT_COL_CSV_ONLY = 1u << 1,  /* text: never shown */
};

typedef struct ReportColumn {
    const char *title;      /* text table header */
    const char *csv_name;   /* CSV header */
    ReportFormat format;
    unsigned flags;
} ReportColumn;

typedef struct ReportGrid {
    const ReportColumn *columns;
    int column_count;
    ReportCell *cells;      /* (row_count, column_count), row-major */
    size_t row_count, row_capacity;
} ReportGrid;

enum { REPORT_ROUND_COLUMNS = 8 };

/* The four tables of a report. The per-round table's columns are the tables' own: its
 * extra column is titled with what rounds.extra means in the run (report.h's
 * ReportExtraMeaning). A ReportTables is not copied (rounds points into it). */
typedef struct ReportTables {
    ReportGrid runs, points, speedups, rounds;
    ReportColumn round_columns[REPORT_ROUND_COLUMNS];
    char *extra_meaning;   /* the run's, owned; NULL when none is known */
    char *extra_title;     /* "extra (MEANING)", owned; NULL: "extra" */
} ReportTables;

/* Empty tables with their columns. */
void report_tables_init(ReportTables *tables);

/* Frees every cell (the tables are empty again); accepts NULL. */
void report_tables_free(ReportTables *tables);

/* One row per run, point, or non-sync point with a sync baseline, of set. HS_OK or
 * HS_E_NOMEM (rows added before stay, for report_tables_free). */
int report_tables_fill_runs(const RunSet *set, ReportGrid *runs);
int report_tables_fill_points(const RunSet *set, ReportGrid *points);
int report_tables_fill_speedups(const RunSet *set, ReportGrid *speedups);

/* One row per rounds row of run_id, as stored, into tables->rounds; with meaning (NULL:
 * none) what rounds.extra means in the run, asked from its method and its [method] keys
 * in run_params. HS_OK, or the query error (path names the database) or HS_E_NOMEM in
 * diag. */
int report_tables_load_rounds(sqlite3 *db, const char *path, int64_t run_id, ReportExtraMeaning meaning,
                              ReportTables *tables, HsDiag *diag);

/* JSON (report_json.c): table as an array of objects keyed by the CSV names; a string
 * with JSON's escapes; a number in the shortest text that reads back to it (null when
 * not finite). */
void report_write_json(const ReportGrid *table, FILE *out);
void report_json_string(FILE *out, const char *text);
void report_json_number(FILE *out, double value);

/* 1 and *value when cell holds a number, else 0. */
int report_cell_number(const ReportCell *cell, double *value);

#endif
