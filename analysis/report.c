/* report.c — `hetsim report`: read-only queries into in-memory tables, printed as
 * aligned text or CSV. Tables are small (one row per run or per round), so holding one
 * whole in memory is cheap and buys two things: column widths, and no partial output
 * when a query fails half-way. */
#include "analysis/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/store.h"

/* ---- cells and tables ---- */

typedef enum { CELL_NULL = 0, CELL_INT, CELL_UINT, CELL_REAL, CELL_TEXT } CellType;

typedef struct Cell {
    CellType type;
    union {
        int64_t i;
        uint64_t u;
        double d;
        char *s;    /* owned */
    } v;
} Cell;

/* How a column reads in the text table; CSV ignores it and prints the raw value. */
typedef enum {
    FMT_TEXT, FMT_INT, FMT_SECONDS, FMT_SHARE, FMT_BYTES, FMT_ACCURACY
} ColumnFormat;

typedef struct Column {
    const char *title;      /* text table header */
    const char *csv_name;   /* CSV header */
    ColumnFormat format;
} Column;

typedef struct Table {
    const Column *columns;
    int column_count;
    Cell *cells;            /* (row_count, column_count), row-major */
    size_t row_count, row_capacity;
} Table;

static const Column summary_columns[] = {
    { "id", "id", FMT_INT },
    { "name", "name", FMT_TEXT },
    { "method", "method", FMT_TEXT },
    { "seed", "seed", FMT_INT },
    { "status", "status", FMT_TEXT },
    { "rounds", "rounds", FMT_INT },
    { "virtual time (s)", "sim_time_s", FMT_SECONDS },
    { "idle share", "idle_share", FMT_SHARE },
    { "bytes", "bytes", FMT_BYTES },
    { "final accuracy", "final_accuracy", FMT_ACCURACY },
};
enum {
    SUM_ID, SUM_NAME, SUM_METHOD, SUM_SEED, SUM_STATUS, SUM_ROUNDS, SUM_TIME, SUM_IDLE,
    SUM_BYTES, SUM_ACCURACY, SUM_COLUMNS
};

static const Column round_columns[] = {
    { "run", "run_id", FMT_INT },
    { "round", "round", FMT_INT },
    { "t_start (s)", "t_start", FMT_SECONDS },
    { "t_end (s)", "t_end", FMT_SECONDS },
    { "makespan (s)", "makespan", FMT_SECONDS },
    { "idle (s)", "idle_s", FMT_SECONDS },
    { "bytes", "bytes", FMT_BYTES },
};
enum { ROUND_COLUMNS = 7 };

/* The summary query. Sub-selects per run use the (run_id, round) indexes; the idle
 * share is finished in C (summary_idle_share) from its three parts. */
static const char summary_sql[] =
    "SELECT r.id, r.name, r.method, r.seed, r.status,"
    " coalesce(r.rounds_done, (SELECT count(*) FROM rounds WHERE run_id = r.id)),"
    " coalesce(r.sim_time_s, (SELECT max(t_end) FROM rounds WHERE run_id = r.id)),"
    " (SELECT sum(idle_s) FROM agent_rounds WHERE run_id = r.id),"
    " (SELECT count(*) FROM agents WHERE run_id = r.id),"
    " (SELECT sum(t_end - t_start) FROM rounds WHERE run_id = r.id),"
    " (SELECT sum(bytes) FROM rounds WHERE run_id = r.id),"
    " r.final_accuracy"
    " FROM runs r WHERE ?1 IS NULL OR r.id = ?1 ORDER BY r.id";

static const char rounds_sql[] =
    "SELECT run_id, round, t_start, t_end, t_end - t_start, idle_s, bytes"
    " FROM rounds WHERE run_id = ?1 ORDER BY round, rowid";

static void table_init(Table *table, const Column *columns, int column_count)
{
    memset(table, 0, sizeof *table);
    table->columns = columns;
    table->column_count = column_count;
}

static void table_free(Table *table)
{
    if (table == NULL) return;
    size_t cells = table->row_count * (size_t)table->column_count;
    for (size_t i = 0; i < cells; i++)
        if (table->cells[i].type == CELL_TEXT) free(table->cells[i].v.s);
    free(table->cells);
    table->cells = NULL;
    table->row_count = table->row_capacity = 0;
}

/* Appends a row of NULL cells and returns it, or NULL when out of memory. */
static Cell *table_add_row(Table *table)
{
    size_t width = (size_t)table->column_count;
    if (table->row_count == table->row_capacity) {
        size_t capacity = table->row_capacity ? 2 * table->row_capacity : 64;
        Cell *grown = realloc(table->cells, capacity * width * sizeof *grown);
        if (grown == NULL) return NULL;
        table->cells = grown;
        table->row_capacity = capacity;
    }
    Cell *row = &table->cells[table->row_count * width];
    memset(row, 0, width * sizeof *row);
    table->row_count++;
    return row;
}

/* Copies column `column` of the current result row into *cell; -1 when out of memory. */
static int cell_from_column(Cell *cell, sqlite3_stmt *stmt, int column)
{
    switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_INTEGER:
        cell->type = CELL_INT;
        cell->v.i = sqlite3_column_int64(stmt, column);
        return 0;
    case SQLITE_FLOAT:
        cell->type = CELL_REAL;
        cell->v.d = sqlite3_column_double(stmt, column);
        return 0;
    case SQLITE_NULL:
        cell->type = CELL_NULL;
        return 0;
    default: {
        const char *text = (const char *)sqlite3_column_text(stmt, column);
        if (text == NULL) return -1;  /* TEXT/BLOB whose conversion ran out of memory */
        cell->v.s = strdup(text);
        if (cell->v.s == NULL) return -1;
        cell->type = CELL_TEXT;
        return 0;
    }
    }
}

static int cell_number(const Cell *cell, double *value)
{
    switch (cell->type) {
    case CELL_INT: *value = (double)cell->v.i; return 1;
    case CELL_UINT: *value = (double)cell->v.u; return 1;
    case CELL_REAL: *value = cell->v.d; return 1;
    default: return 0;
    }
}

/* ---- reading the database ---- */

static const char probe_sql[] =
    "SELECT (SELECT user_version FROM pragma_user_version),"
    " (SELECT application_id FROM pragma_application_id),"
    " (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
    "  name IN ('runs','agents','rounds','agent_rounds','pairings','metrics'))";

/* The first read of a connection: the schema facts report_open checks. */
static int probe_schema(sqlite3 *db, sqlite3_stmt **stmt)
{
    int rc = sqlite3_prepare_v2(db, probe_sql, -1, stmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(*stmt);
    return rc;
}

/* Appends text to w percent-encoded as URI paths require: every byte outside
 * [A-Za-z0-9-._~/]. Returns the new end. */
static char *uri_encode(char *w, const char *text)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("-._~/", *p) != NULL) {
            *w++ = (char)*p;
        } else {
            *w++ = '%';
            *w++ = hex[*p >> 4];
            *w++ = hex[*p & 15];
        }
    }
    return w;
}

/* "file:///ABSOLUTE/PATH?immutable=1" (a relative path is taken from the current
 * folder); malloc'd, NULL when the folder cannot be read or memory runs out. */
static char *immutable_uri(const char *path)
{
    static const char suffix[] = "?immutable=1";
    char folder[4096] = "";
    if (path[0] != '/' && getcwd(folder, sizeof folder) == NULL) return NULL;
    char *uri = malloc(7 + 3 * (strlen(folder) + 1 + strlen(path)) + sizeof suffix);
    if (uri == NULL) return NULL;
    memcpy(uri, "file://", 7);
    char *w = uri + 7;
    if (folder[0] != '\0') {
        w = uri_encode(w, folder);
        *w++ = '/';
    }
    w = uri_encode(w, path);
    memcpy(w, suffix, sizeof suffix);
    return uri;
}

/* A read-only connection, checked to be a hetsim database of our schema version. */
static int report_open(const char *path, sqlite3 **out, HsDiag *diag)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK;
    *out = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc != SQLITE_OK) {
        int err = db ? sqlite3_system_errno(db) : 0;
        status = hs_diag_set(diag, rc == SQLITE_NOMEM ? HS_E_NOMEM : HS_E_IO, path, 0,
                             "cannot open database: %s%s%s",
                             db ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
                             err ? ": " : "", err ? strerror(err) : "");
        goto fail;
    }
    sqlite3_busy_timeout(db, STORE_BUSY_TIMEOUT_MS);
    rc = probe_schema(db, &stmt);
    if ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN) {
        /* A WAL database in a folder we may not write (a shared results folder, a
         * read-only mount): a reader must create the -shm file and cannot. No writer has
         * the file open then (a writer keeps its -shm), so the main file holds every
         * committed row and can be read as immutable, without -shm. */
        char *uri = immutable_uri(path);
        if (uri != NULL) {
            sqlite3_finalize(stmt);
            stmt = NULL;
            sqlite3_close(db);
            db = NULL;
            int open_rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
            free(uri);
            rc = open_rc == SQLITE_OK ? probe_schema(db, &stmt) : open_rc;
        }
    }
    if (rc != SQLITE_ROW) {
        int primary = rc & 0xff;
        if (primary == SQLITE_NOTADB)
            status = hs_diag_set(diag, HS_E_INPUT, path, 0, "not a SQLite database");
        else
            status = hs_diag_set(diag, primary == SQLITE_NOMEM ? HS_E_NOMEM : HS_E_IO, path, 0,
                                 "cannot read database: %s",
                                 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        goto fail;
    }
    int64_t version = sqlite3_column_int64(stmt, 0);
    int64_t application = sqlite3_column_int64(stmt, 1);
    int64_t tables = sqlite3_column_int64(stmt, 2);
    if (application != 0 && application != STORE_APPLICATION_ID) {
        status = hs_diag_set(diag, HS_E_INPUT, path, 0,
                             "not a hetsim database (application_id 0x%08llx)",
                             (unsigned long long)application);
        goto fail;
    }
    if (version != STORE_SCHEMA_VERSION && (version != 0 || application != 0)) {
        status = hs_diag_set(diag, HS_E_INPUT, path, 0,
                             "database has schema version %lld (PRAGMA user_version), "
                             "but this hetsim reads version %d",
                             (long long)version, STORE_SCHEMA_VERSION);
        goto fail;
    }
    if (version != STORE_SCHEMA_VERSION || tables != 6) {
        status = hs_diag_set(diag, HS_E_INPUT, path, 0, "not a hetsim database");
        goto fail;
    }
    sqlite3_finalize(stmt);
    *out = db;
    return HS_OK;
fail:
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return status;
}

static int query_fail(sqlite3 *db, int rc, const char *path, HsDiag *diag)
{
    return hs_diag_set(diag, (rc & 0xff) == SQLITE_NOMEM ? HS_E_NOMEM : HS_E_IO, path, 0,
                       "query failed: %s", sqlite3_errmsg(db));
}

/* idle / (agents * span) with the guards the header documents; NULL otherwise. */
static void summary_idle_share(Cell *out, sqlite3_stmt *stmt)
{
    out->type = CELL_NULL;
    if (sqlite3_column_type(stmt, 7) == SQLITE_NULL || sqlite3_column_type(stmt, 9) == SQLITE_NULL)
        return;
    double idle = sqlite3_column_double(stmt, 7);
    int64_t agents = sqlite3_column_int64(stmt, 8);
    double span = sqlite3_column_double(stmt, 9);
    if (agents <= 0 || !(span > 0)) return;
    out->type = CELL_REAL;
    out->v.d = idle / ((double)agents * span);
}

/* Fills table with the summary of one run (have_id) or of all runs. */
static int load_summary(sqlite3 *db, const char *path, int have_id, int64_t run_id,
                        Table *table, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK;
    int rc = sqlite3_prepare_v2(db, summary_sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK && have_id) rc = sqlite3_bind_int64(stmt, 1, run_id);
    if (rc != SQLITE_OK) goto query_failed;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        Cell *row = table_add_row(table);
        if (row == NULL) goto nomem;
        static const struct { int cell, column; } copies[] = {
            { SUM_ID, 0 }, { SUM_NAME, 1 }, { SUM_METHOD, 2 }, { SUM_SEED, 3 },
            { SUM_STATUS, 4 }, { SUM_ROUNDS, 5 }, { SUM_TIME, 6 }, { SUM_BYTES, 10 },
            { SUM_ACCURACY, 11 },
        };
        for (size_t i = 0; i < sizeof copies / sizeof copies[0]; i++)
            if (cell_from_column(&row[copies[i].cell], stmt, copies[i].column) != 0)
                goto nomem;
        /* runs.seed holds the uint64 seed's bit pattern (store.h): undo the cast. */
        if (row[SUM_SEED].type == CELL_INT) {
            row[SUM_SEED].type = CELL_UINT;
            row[SUM_SEED].v.u = (uint64_t)row[SUM_SEED].v.i;
        }
        summary_idle_share(&row[SUM_IDLE], stmt);
    }
    if (rc != SQLITE_DONE) goto query_failed;
    if (have_id && table->row_count == 0)
        status = hs_diag_set(diag, HS_E_INPUT, path, 0, "no run with id %lld",
                             (long long)run_id);
    sqlite3_finalize(stmt);
    return status;
query_failed:
    status = query_fail(db, rc, path, diag);
    sqlite3_finalize(stmt);
    return status;
nomem:
    sqlite3_finalize(stmt);
    return hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
}

static int load_rounds(sqlite3 *db, const char *path, int64_t run_id, Table *table,
                       HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK;
    int rc = sqlite3_prepare_v2(db, rounds_sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(stmt, 1, run_id);
    if (rc != SQLITE_OK) goto query_failed;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        Cell *row = table_add_row(table);
        if (row == NULL) goto nomem;
        for (int i = 0; i < ROUND_COLUMNS; i++)
            if (cell_from_column(&row[i], stmt, i) != 0) goto nomem;
    }
    if (rc != SQLITE_DONE) goto query_failed;
    sqlite3_finalize(stmt);
    return HS_OK;
query_failed:
    status = query_fail(db, rc, path, diag);
    sqlite3_finalize(stmt);
    return status;
nomem:
    sqlite3_finalize(stmt);
    return hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
}

/* ---- printing ---- */

/* RFC 4180 quoting, plus leading/trailing spaces so readers that trim keep them. */
static void csv_write_text(FILE *out, const char *text)
{
    size_t length = strlen(text);
    int quote = strpbrk(text, "\",\r\n") != NULL ||
                (length > 0 && (text[0] == ' ' || text[length - 1] == ' '));
    if (!quote) {
        fputs(text, out);
        return;
    }
    fputc('"', out);
    for (const char *p = text; *p; p++) {
        if (*p == '"') fputc('"', out);
        fputc(*p, out);
    }
    fputc('"', out);
}

static void csv_write_cell(FILE *out, const Cell *cell)
{
    switch (cell->type) {
    case CELL_NULL: break;
    case CELL_INT: fprintf(out, "%" PRId64, cell->v.i); break;
    case CELL_UINT: fprintf(out, "%" PRIu64, cell->v.u); break;
    case CELL_REAL: fprintf(out, "%.17g", cell->v.d); break;
    case CELL_TEXT: csv_write_text(out, cell->v.s); break;
    }
}

static void table_print_csv(const Table *table, FILE *out)
{
    for (int c = 0; c < table->column_count; c++) {
        if (c > 0) fputc(',', out);
        csv_write_text(out, table->columns[c].csv_name);
    }
    fputc('\n', out);
    for (size_t r = 0; r < table->row_count; r++) {
        const Cell *row = &table->cells[r * (size_t)table->column_count];
        for (int c = 0; c < table->column_count; c++) {
            if (c > 0) fputc(',', out);
            csv_write_cell(out, &row[c]);
        }
        fputc('\n', out);
    }
}

static void format_bytes(char *out, size_t size, double bytes)
{
    static const char *const units[] = { "B", "kB", "MB", "GB", "TB", "PB" };
    int unit = 0;
    double value = bytes;
    while (fabs(value) >= 1000.0 && unit < 5) {
        value /= 1000.0;
        unit++;
    }
    if (unit == 0) snprintf(out, size, "%.0f B", value);
    else snprintf(out, size, "%.2f %s", value, units[unit]);
}

/* The text a cell shows in the aligned table (malloc'd), or NULL when out of memory. */
static char *cell_display(const Cell *cell, ColumnFormat format)
{
    char buffer[64];
    double number;
    if (cell->type == CELL_NULL) return strdup("-");
    if (cell->type == CELL_TEXT) {
        char *text = strdup(cell->v.s);
        if (text == NULL) return NULL;
        /* A newline or tab in a name would break the table; CSV keeps the original. */
        for (char *p = text; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
        return text;
    }
    if (cell->type == CELL_INT && (format == FMT_INT || format == FMT_TEXT))
        snprintf(buffer, sizeof buffer, "%" PRId64, cell->v.i);
    else if (cell->type == CELL_UINT)
        snprintf(buffer, sizeof buffer, "%" PRIu64, cell->v.u);
    else if (!cell_number(cell, &number))
        snprintf(buffer, sizeof buffer, "?");
    else if (format == FMT_SECONDS)
        snprintf(buffer, sizeof buffer, "%.3f", number);
    else if (format == FMT_SHARE)
        snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * number);
    else if (format == FMT_BYTES)
        format_bytes(buffer, sizeof buffer, number);
    else if (format == FMT_ACCURACY)
        snprintf(buffer, sizeof buffer, "%.4f", number);
    else
        snprintf(buffer, sizeof buffer, "%.6g", number);
    return strdup(buffer);
}

/* Display width in code points: every byte that is not a UTF-8 continuation byte. */
static size_t text_width(const char *text)
{
    size_t width = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if ((*p & 0xC0) != 0x80) width++;
    return width;
}

static void print_padded(FILE *out, const char *text, size_t width, int right, int last)
{
    size_t pad = width - text_width(text);
    if (right)
        for (size_t i = 0; i < pad; i++) fputc(' ', out);
    fputs(text, out);
    if (!right && !last)
        for (size_t i = 0; i < pad; i++) fputc(' ', out);
}

static int table_print_text(const Table *table, FILE *out)
{
    size_t columns = (size_t)table->column_count;
    size_t count = table->row_count * columns;
    size_t widths[16] = { 0 };
    char **shown = calloc(count ? count : 1, sizeof *shown);
    int status = HS_OK;
    if (shown == NULL || columns > 16) goto nomem;
    for (size_t c = 0; c < columns; c++) widths[c] = text_width(table->columns[c].title);
    for (size_t i = 0; i < count; i++) {
        shown[i] = cell_display(&table->cells[i], table->columns[i % columns].format);
        if (shown[i] == NULL) goto nomem;
        size_t width = text_width(shown[i]);
        if (width > widths[i % columns]) widths[i % columns] = width;
    }
    for (size_t c = 0; c < columns; c++) {
        if (c > 0) fputs("  ", out);
        print_padded(out, table->columns[c].title, widths[c],
                     table->columns[c].format != FMT_TEXT, c + 1 == columns);
    }
    fputc('\n', out);
    for (size_t i = 0; i < count; i++) {
        size_t c = i % columns;
        if (c > 0) fputs("  ", out);
        print_padded(out, shown[i], widths[c], table->columns[c].format != FMT_TEXT,
                     c + 1 == columns);
        if (c + 1 == columns) fputc('\n', out);
    }
    goto done;
nomem:
    status = HS_E_NOMEM;
done:
    if (shown != NULL)
        for (size_t i = 0; i < count; i++) free(shown[i]);
    free(shown);
    return status;
}

static int print_table(const Table *table, unsigned flags, FILE *out)
{
    if (flags & REPORT_CSV) {
        table_print_csv(table, out);
        return HS_OK;
    }
    return table_print_text(table, out);
}

static int check_output(FILE *out, HsDiag *diag)
{
    if (fflush(out) != 0 || ferror(out))
        return hs_diag_set(diag, HS_E_IO, NULL, 0, "cannot write the report: %s",
                           strerror(errno));
    return HS_OK;
}

/* The one reporting path: summary of all runs or one run, rounds on request. */
static int report_print(const char *path, int have_id, int64_t run_id, unsigned flags,
                        FILE *out, HsDiag *diag)
{
    sqlite3 *db = NULL;
    Table summary, rounds;
    int want_rounds = have_id && (flags & REPORT_ROUNDS);
    table_init(&summary, summary_columns, SUM_COLUMNS);
    table_init(&rounds, round_columns, ROUND_COLUMNS);
    int status = report_open(path, &db, diag);
    if (status != HS_OK) goto fail;
    status = load_summary(db, path, have_id, run_id, &summary, diag);
    if (status != HS_OK) goto fail;
    if (want_rounds) {
        status = load_rounds(db, path, run_id, &rounds, diag);
        if (status != HS_OK) goto fail;
    }
    if (want_rounds && (flags & REPORT_CSV)) {
        status = print_table(&rounds, flags, out);
    } else {
        status = print_table(&summary, flags, out);
        if (status == HS_OK && want_rounds) {
            fputc('\n', out);
            status = print_table(&rounds, flags, out);
        }
    }
    if (status != HS_OK) {
        hs_diag_set(diag, status, path, 0, "out of memory");
        goto fail;
    }
    status = check_output(out, diag);
fail:
    table_free(&summary);
    table_free(&rounds);
    sqlite3_close(db);
    return status;
}

int report_print_runs(const char *db_path, unsigned flags, FILE *out, HsDiag *diag)
{
    return report_print(db_path, 0, 0, flags, out, diag);
}

int report_print_run(const char *db_path, int64_t run_id, unsigned flags, FILE *out,
                     HsDiag *diag)
{
    return report_print(db_path, 1, run_id, flags, out, diag);
}

/* ---- the command line ---- */

static const char usage_text[] =
    "usage: hetsim report FILE.db [--run ID] [--csv]\n"
    "\n"
    "Prints one row per run of the database: id, name, method, seed, status, rounds,\n"
    "virtual time, idle share (summed agent idle time over agents x round time), bytes\n"
    "on the wire and final accuracy.\n"
    "\n"
    "  --run ID   the summary of run ID, then its per-round table\n"
    "             (round, t_start, t_end, makespan, idle, bytes)\n"
    "  --csv      CSV with a header and unrounded numbers instead of a table\n"
    "             (with --run: the per-round rows only)\n"
    "  --help     this text\n"
    "\n"
    "The database is opened read-only. Exit status: 0 ok, 1 the file cannot be read,\n"
    "2 bad usage, not a hetsim database, or no such run.\n";

static int usage_error(FILE *err, const char *fmt, const char *arg)
{
    fputs("hetsim report: ", err);
    fprintf(err, fmt, arg);
    fputs("\nTry 'hetsim report --help'.\n", err);
    return 2;
}

/* A run id: a whole positive decimal number, nothing else. */
static int parse_run_id(const char *text, int64_t *out)
{
    char *end = NULL;
    if (text == NULL || *text < '0' || *text > '9') return -1;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0' || value <= 0) return -1;
    *out = value;
    return 0;
}

int report_cli_stream(int argc, char **argv, FILE *out, FILE *err)
{
    const char *path = NULL;
    const char *run_text = NULL;
    int csv = 0, options_done = 0;
    int64_t run_id = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_done && arg[0] == '-' && arg[1] != '\0') {
            if (strcmp(arg, "--") == 0) {
                options_done = 1;
            } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
                fputs(usage_text, out);
                return 0;
            } else if (strcmp(arg, "--csv") == 0) {
                csv = 1;
            } else if (strcmp(arg, "--run") == 0) {
                if (i + 1 >= argc) return usage_error(err, "%s needs a run id", arg);
                run_text = argv[++i];
            } else if (strncmp(arg, "--run=", 6) == 0) {
                run_text = arg + 6;
            } else {
                return usage_error(err, "unknown option '%s'", arg);
            }
        } else if (path == NULL) {
            path = arg;
        } else {
            return usage_error(err, "unexpected argument '%s' (one FILE.db only)", arg);
        }
    }
    if (path == NULL) return usage_error(err, "%s", "missing FILE.db");
    if (run_text != NULL && parse_run_id(run_text, &run_id) != 0)
        return usage_error(err, "--run needs a positive whole number, not '%s'", run_text);

    HsDiag diag;
    hs_diag_clear(&diag);
    unsigned flags = csv ? REPORT_CSV : 0;
    int status = run_text != NULL
                     ? report_print_run(path, run_id, flags | REPORT_ROUNDS, out, &diag)
                     : report_print_runs(path, flags, out, &diag);
    if (status != HS_OK) fprintf(err, "hetsim: %s\n", diag.message);
    return hs_error_exit_status(status);
}

int report_cli(int argc, char **argv)
{
    return report_cli_stream(argc, argv, stdout, stderr);
}
