/* report.c — `hetsim report`: the runs of a database (analysis/runset.h computes every
 * figure) laid out as in-memory tables, printed as aligned text or CSV. Tables are
 * small (one row per run, point or round), so holding them whole in memory is cheap and
 * buys two things: column widths, and no partial output when a query fails half-way
 * (the text is formatted into memory and written at the end). */
#include "analysis/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/dbread.h"
#include "analysis/runset.h"

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
    FMT_TEXT, FMT_INT, FMT_SECONDS, FMT_SHARE, FMT_BYTES, FMT_ACCURACY, FMT_NUMBER
} ColumnFormat;

enum {
    COL_OPTIONAL = 1u << 0,  /* text: left out when every row misses it */
    COL_CSV_ONLY = 1u << 1,  /* text: never shown */
};

typedef struct Column {
    const char *title;      /* text table header */
    const char *csv_name;   /* CSV header */
    ColumnFormat format;
    unsigned flags;
} Column;

typedef struct Table {
    const Column *columns;
    int column_count;
    Cell *cells;            /* (row_count, column_count), row-major */
    size_t row_count, row_capacity;
} Table;

static const Column run_columns[] = {
    { "id", "id", FMT_INT, 0 },
    { "name", "name", FMT_TEXT, 0 },
    { "method", "method", FMT_TEXT, 0 },
    { "seed", "seed", FMT_INT, 0 },
    { "status", "status", FMT_TEXT, 0 },
    { "rounds", "rounds", FMT_INT, 0 },
    { "virtual time (s)", "sim_time_s", FMT_SECONDS, 0 },
    { "idle share", "idle_share", FMT_SHARE, 0 },
    { "bytes", "bytes", FMT_BYTES, 0 },
    { "final accuracy", "final_accuracy", FMT_ACCURACY, 0 },
    { "target", "target_accuracy", FMT_ACCURACY, COL_OPTIONAL },
    { "time to target (s)", "time_to_target_s", FMT_SECONDS, COL_OPTIONAL },
    { "predicted round (s)", "predicted_round_s", FMT_SECONDS, COL_OPTIONAL },
    { "actual round (s)", "actual_round_s", FMT_SECONDS, COL_OPTIONAL },
    { "offloading", "offload_share", FMT_SHARE, COL_OPTIONAL },
    { "sweep", "sweep", FMT_TEXT, COL_OPTIONAL },
    { "point", "point", FMT_TEXT, COL_OPTIONAL },
};
enum {
    RUN_COL_ID, RUN_COL_NAME, RUN_COL_METHOD, RUN_COL_SEED, RUN_COL_STATUS, RUN_COL_ROUNDS,
    RUN_COL_TIME, RUN_COL_IDLE, RUN_COL_BYTES, RUN_COL_ACCURACY, RUN_COL_TARGET,
    RUN_COL_TO_TARGET, RUN_COL_PREDICTED, RUN_COL_ACTUAL, RUN_COL_OFFLOAD, RUN_COL_SWEEP,
    RUN_COL_POINT, RUN_COLUMNS
};

static const Column point_columns[] = {
    { "method", "method", FMT_TEXT, 0 },
    { "level", "level", FMT_NUMBER, 0 },
    { "seeds", "seeds", FMT_INT, 0 },
    { "not done", "not_done", FMT_INT, 0 },
    { "virtual time (s)", "sim_time_s_mean", FMT_SECONDS, 0 },
    { "±", "sim_time_s_ci95", FMT_SECONDS, 0 },
    { "time to target (s)", "time_to_target_s_mean", FMT_SECONDS, COL_OPTIONAL },
    { "±", "time_to_target_s_ci95", FMT_SECONDS, COL_OPTIONAL },
    { "reached", "reached", FMT_INT, COL_OPTIONAL },
    { "final accuracy", "final_accuracy_mean", FMT_ACCURACY, COL_OPTIONAL },
    { "±", "final_accuracy_ci95", FMT_ACCURACY, COL_OPTIONAL },
    { "idle share", "idle_share_mean", FMT_SHARE, 0 },
    { "±", "idle_share_ci95", FMT_SHARE, 0 },
    { "makespan (s)", "makespan_s_mean", FMT_SECONDS, 0 },
    { "±", "makespan_s_ci95", FMT_SECONDS, 0 },
    { "bytes", "bytes_mean", FMT_BYTES, 0 },
    { "±", "bytes_ci95", FMT_BYTES, COL_CSV_ONLY },
    { "predicted round (s)", "predicted_round_s_mean", FMT_SECONDS, COL_OPTIONAL },
    { "actual round (s)", "actual_round_s_mean", FMT_SECONDS, COL_OPTIONAL },
    { "offloading", "offload_share_mean", FMT_SHARE, COL_OPTIONAL },
    { "level axis", "level_axis", FMT_TEXT, COL_CSV_ONLY },
    { "sweep", "sweep", FMT_TEXT, COL_OPTIONAL },
    { "point", "point", FMT_TEXT, 0 },
};
enum {
    POINT_COL_METHOD, POINT_COL_LEVEL, POINT_COL_SEEDS, POINT_COL_NOT_DONE, POINT_COL_TIME,
    POINT_COL_TO_TARGET = POINT_COL_TIME + 2, POINT_COL_REACHED = POINT_COL_TO_TARGET + 2,
    POINT_COL_ACCURACY, POINT_COL_IDLE = POINT_COL_ACCURACY + 2,
    POINT_COL_MAKESPAN = POINT_COL_IDLE + 2, POINT_COL_BYTES = POINT_COL_MAKESPAN + 2,
    POINT_COL_PREDICTED = POINT_COL_BYTES + 2, POINT_COL_ACTUAL, POINT_COL_OFFLOAD,
    POINT_COL_AXIS, POINT_COL_SWEEP, POINT_COL_POINT, POINT_COLUMNS
};

static const Column speedup_columns[] = {
    { "method", "method", FMT_TEXT, 0 },
    { "level", "level", FMT_NUMBER, 0 },
    { "pairs", "pairs", FMT_INT, 0 },
    { "basis", "basis", FMT_TEXT, 0 },
    { "speedup", "speedup_mean", FMT_NUMBER, 0 },
    { "±", "speedup_ci95", FMT_NUMBER, 0 },
    { "time (s)", "time_s_mean", FMT_SECONDS, 0 },
    { "sync time (s)", "sync_time_s_mean", FMT_SECONDS, 0 },
    { "sweep", "sweep", FMT_TEXT, COL_OPTIONAL },
    { "scenario", "scenario", FMT_TEXT, COL_OPTIONAL },
};
enum {
    SPEED_COL_METHOD, SPEED_COL_LEVEL, SPEED_COL_PAIRS, SPEED_COL_BASIS, SPEED_COL_MEAN,
    SPEED_COL_HALF, SPEED_COL_TIME, SPEED_COL_SYNC_TIME, SPEED_COL_SWEEP,
    SPEED_COL_SCENARIO, SPEED_COLUMNS
};

_Static_assert(sizeof run_columns / sizeof run_columns[0] == RUN_COLUMNS, "run columns");
_Static_assert(sizeof point_columns / sizeof point_columns[0] == POINT_COLUMNS, "point columns");
_Static_assert(sizeof speedup_columns / sizeof speedup_columns[0] == SPEED_COLUMNS, "speedup columns");

static const Column round_columns[] = {
    { "run", "run_id", FMT_INT, 0 },
    { "round", "round", FMT_INT, 0 },
    { "t_start (s)", "t_start", FMT_SECONDS, 0 },
    { "t_end (s)", "t_end", FMT_SECONDS, 0 },
    { "makespan (s)", "makespan", FMT_SECONDS, 0 },
    { "idle (s)", "idle_s", FMT_SECONDS, 0 },
    { "bytes", "bytes", FMT_BYTES, 0 },
};
enum { ROUND_COLUMNS = 7 };

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

static void cell_real(Cell *cell, double value)
{
    if (isnan(value)) {
        cell->type = CELL_NULL;
        return;
    }
    cell->type = CELL_REAL;
    cell->v.d = value;
}

static void cell_int(Cell *cell, int64_t value)
{
    cell->type = CELL_INT;
    cell->v.i = value;
}

/* NULL text makes a NULL cell; -1 when out of memory. */
static int cell_text(Cell *cell, const char *text)
{
    if (text == NULL) {
        cell->type = CELL_NULL;
        return 0;
    }
    if ((cell->v.s = strdup(text)) == NULL) return -1;
    cell->type = CELL_TEXT;
    return 0;
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

/* ---- filling the tables ---- */

static int fill_runs(const RunSet *set, Table *table)
{
    for (int i = 0; i < set->run_count; i++) {
        const RunFacts *run = &set->runs[i];
        Cell *row = table_add_row(table);
        if (row == NULL) return HS_E_NOMEM;
        cell_int(&row[RUN_COL_ID], run->id);
        row[RUN_COL_SEED].type = CELL_UINT;
        row[RUN_COL_SEED].v.u = run->seed;
        if (run->has_rounds) cell_int(&row[RUN_COL_ROUNDS], run->rounds);
        cell_real(&row[RUN_COL_TIME], run->sim_time_s);
        cell_real(&row[RUN_COL_IDLE], run->idle_share);
        cell_real(&row[RUN_COL_BYTES], run->bytes);
        cell_real(&row[RUN_COL_ACCURACY], run->final_accuracy);
        cell_real(&row[RUN_COL_TARGET], run->target_accuracy);
        cell_real(&row[RUN_COL_TO_TARGET], run->time_to_target_s);
        cell_real(&row[RUN_COL_PREDICTED], run->predicted_s);
        cell_real(&row[RUN_COL_ACTUAL], run->actual_s);
        cell_real(&row[RUN_COL_OFFLOAD], run->offload_share);
        if (cell_text(&row[RUN_COL_NAME], run->name) != 0 ||
            cell_text(&row[RUN_COL_METHOD], run->method) != 0 ||
            cell_text(&row[RUN_COL_STATUS], run->status) != 0 ||
            cell_text(&row[RUN_COL_SWEEP], run->sweep) != 0 ||
            cell_text(&row[RUN_COL_POINT], run->point) != 0)
            return HS_E_NOMEM;
    }
    return HS_OK;
}

/* The mean and half-width cells of one figure of a point. */
static int point_figure(const RunSet *set, int p, RunField field, Cell *mean, Cell *half)
{
    RunStat stat;
    if (runset_point_stat(set, p, field, &stat) != HS_OK) return HS_E_NOMEM;
    cell_real(mean, stat.mean);
    if (half != NULL) cell_real(half, stat.half);
    return HS_OK;
}

static int fill_points(const RunSet *set, Table *table)
{
    for (int p = 0; p < set->point_count; p++) {
        const RunPoint *point = &set->points[p];
        const RunGroup *group = &set->groups[point->group];
        Cell *row = table_add_row(table);
        if (row == NULL) return HS_E_NOMEM;
        cell_real(&row[POINT_COL_LEVEL], point->level);
        cell_int(&row[POINT_COL_SEEDS], point->done_count);
        cell_int(&row[POINT_COL_NOT_DONE], point->run_count - point->done_count);
        int targets = 0, reached = 0;
        for (int k = 0; k < point->run_count; k++) {
            const RunFacts *run = &set->runs[point->runs[k]];
            if (!run->done || isnan(run->target_accuracy)) continue;
            targets++;
            reached += !isnan(run->time_to_target_s);
        }
        if (targets > 0) cell_int(&row[POINT_COL_REACHED], reached);
        static const struct { int column; RunField field; int half; } figures[] = {
            { POINT_COL_TIME, RUN_SIM_TIME, 1 },
            { POINT_COL_ACCURACY, RUN_FINAL_ACCURACY, 1 },
            { POINT_COL_IDLE, RUN_IDLE_SHARE, 1 },
            { POINT_COL_MAKESPAN, RUN_MAKESPAN, 1 },
            { POINT_COL_BYTES, RUN_BYTES, 1 },
            { POINT_COL_PREDICTED, RUN_PREDICTED, 0 },
            { POINT_COL_ACTUAL, RUN_ACTUAL, 0 },
            { POINT_COL_OFFLOAD, RUN_OFFLOAD_SHARE, 0 },
        };
        for (size_t f = 0; f < sizeof figures / sizeof figures[0]; f++) {
            int c = figures[f].column;
            if (point_figure(set, p, figures[f].field, &row[c],
                             figures[f].half ? &row[c + 1] : NULL) != HS_OK)
                return HS_E_NOMEM;
        }
        /* a mean time to target only when every done seed got there: a mean over the
         * seeds that did would flatter the point */
        if (point->done_count > 0 && reached == point->done_count &&
            point_figure(set, p, RUN_TIME_TO_TARGET, &row[POINT_COL_TO_TARGET],
                         &row[POINT_COL_TO_TARGET + 1]) != HS_OK)
            return HS_E_NOMEM;
        if (cell_text(&row[POINT_COL_METHOD], point->method) != 0 ||
            cell_text(&row[POINT_COL_AXIS], group->axis_title) != 0 ||
            cell_text(&row[POINT_COL_SWEEP], group->sweep[0] ? group->sweep : NULL) != 0 ||
            cell_text(&row[POINT_COL_POINT], point->label) != 0)
            return HS_E_NOMEM;
    }
    return HS_OK;
}

static int fill_speedups(const RunSet *set, Table *table)
{
    RunSpeedup *rows = NULL;
    int count = 0;
    if (runset_speedups(set, &rows, &count) != HS_OK) return HS_E_NOMEM;
    int status = HS_OK;
    for (int i = 0; i < count && status == HS_OK; i++) {
        const RunSpeedup *speedup = &rows[i];
        const RunPoint *point = &set->points[speedup->point];
        const RunGroup *group = &set->groups[point->group];
        Cell *row = table_add_row(table);
        if (row == NULL) {
            status = HS_E_NOMEM;
            break;
        }
        cell_real(&row[SPEED_COL_LEVEL], point->level);
        cell_int(&row[SPEED_COL_PAIRS], speedup->speedup.n);
        cell_real(&row[SPEED_COL_MEAN], speedup->speedup.mean);
        cell_real(&row[SPEED_COL_HALF], speedup->speedup.half);
        cell_real(&row[SPEED_COL_TIME], speedup->time.mean);
        cell_real(&row[SPEED_COL_SYNC_TIME], speedup->sync_time.mean);
        if (cell_text(&row[SPEED_COL_METHOD], point->method) != 0 ||
            cell_text(&row[SPEED_COL_BASIS], runset_basis_name(speedup->basis)) != 0 ||
            cell_text(&row[SPEED_COL_SWEEP], group->sweep[0] ? group->sweep : NULL) != 0 ||
            cell_text(&row[SPEED_COL_SCENARIO], point->scenario[0] ? point->scenario : NULL) != 0)
            status = HS_E_NOMEM;
    }
    free(rows);
    return status;
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
    status = dbread_query_fail(db, rc, path, diag);
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
    else if (format == FMT_NUMBER)
        snprintf(buffer, sizeof buffer, "%.4g", number);
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

/* Whether column c shows in the text table. */
static int column_shown(const Table *table, size_t c)
{
    unsigned flags = table->columns[c].flags;
    if (flags & COL_CSV_ONLY) return 0;
    if (!(flags & COL_OPTIONAL)) return 1;
    for (size_t r = 0; r < table->row_count; r++)
        if (table->cells[r * (size_t)table->column_count + c].type != CELL_NULL) return 1;
    return 0;
}

static int table_print_text(const Table *table, FILE *out)
{
    size_t columns = (size_t)table->column_count;
    size_t count = table->row_count * columns;
    size_t *widths = calloc(columns, sizeof *widths);
    int *shown_column = calloc(columns, sizeof *shown_column);
    char **shown = calloc(count ? count : 1, sizeof *shown);
    int status = HS_OK;
    size_t last = 0;
    if (shown == NULL || widths == NULL || shown_column == NULL) goto nomem;
    for (size_t c = 0; c < columns; c++) {
        shown_column[c] = column_shown(table, c);
        if (shown_column[c]) last = c;
        widths[c] = text_width(table->columns[c].title);
    }
    for (size_t i = 0; i < count; i++) {
        if (!shown_column[i % columns]) continue;
        shown[i] = cell_display(&table->cells[i], table->columns[i % columns].format);
        if (shown[i] == NULL) goto nomem;
        size_t width = text_width(shown[i]);
        if (width > widths[i % columns]) widths[i % columns] = width;
    }
    int first = 1;
    for (size_t c = 0; c < columns; c++) {
        if (!shown_column[c]) continue;
        if (!first) fputs("  ", out);
        first = 0;
        print_padded(out, table->columns[c].title, widths[c],
                     table->columns[c].format != FMT_TEXT, c == last);
    }
    fputc('\n', out);
    for (size_t i = 0; i < count; i++) {
        size_t c = i % columns;
        if (c == 0) first = 1;
        if (shown_column[c]) {
            if (!first) fputs("  ", out);
            first = 0;
            print_padded(out, shown[i], widths[c], table->columns[c].format != FMT_TEXT,
                         c == last);
        }
        if (c + 1 == columns) fputc('\n', out);
    }
    goto done;
nomem:
    status = HS_E_NOMEM;
done:
    if (shown != NULL)
        for (size_t i = 0; i < count; i++) free(shown[i]);
    free(shown);
    free(widths);
    free(shown_column);
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

/* ---- the reports ---- */

typedef struct ReportRequest {
    const char *sweep;      /* NULL: every run */
    int have_run;
    int64_t run_id;
    ReportTable table;
    unsigned flags;
} ReportRequest;

/* Whether the points table says more than the runs table: some point aggregates more
 * than one run, or some run belongs to a sweep. */
static int points_say_more(const RunSet *set)
{
    for (int p = 0; p < set->point_count; p++)
        if (set->points[p].run_count > 1) return 1;
    for (int i = 0; i < set->run_count; i++)
        if (set->runs[i].sweep != NULL) return 1;
    return 0;
}

static const char points_title[] =
    "Points: mean and 95 % interval (±) over the done runs (seeds) of each point\n";
static const char speedup_title[] =
    "Speedup over sync (t_sync / t_method, same scenario point and seed; mean ± 95 % interval)\n";

/* Formats the requested tables into text (malloc'd, *size bytes). */
static int format_report(sqlite3 *db, const char *path, const RunSet *set,
                         const ReportRequest *request, char **text, size_t *size,
                         HsDiag *diag)
{
    Table runs, points, speedups, rounds;
    table_init(&runs, run_columns, RUN_COLUMNS);
    table_init(&points, point_columns, POINT_COLUMNS);
    table_init(&speedups, speedup_columns, SPEED_COLUMNS);
    table_init(&rounds, round_columns, ROUND_COLUMNS);
    FILE *memory = NULL;
    int status = HS_OK, csv = (request->flags & REPORT_CSV) != 0;
    int want_rounds = request->have_run && (request->flags & REPORT_ROUNDS);
    ReportTable table = request->table;
    int all = table == REPORT_TABLE_ALL && !request->have_run;
    *text = NULL;
    *size = 0;
    if ((status = fill_runs(set, &runs)) != HS_OK) goto nomem;
    if (!request->have_run) {
        if ((status = fill_points(set, &points)) != HS_OK) goto nomem;
        if ((status = fill_speedups(set, &speedups)) != HS_OK) goto nomem;
    }
    if (want_rounds && (status = load_rounds(db, path, request->run_id, &rounds, diag)) != HS_OK)
        goto fail;
    memory = open_memstream(text, size);
    if (memory == NULL) goto nomem;
    if (want_rounds && csv) {
        status = print_table(&rounds, request->flags, memory);
    } else if (table == REPORT_TABLE_POINTS) {
        status = print_table(&points, request->flags, memory);
    } else if (table == REPORT_TABLE_SPEEDUP) {
        status = print_table(&speedups, request->flags, memory);
    } else {
        status = print_table(&runs, request->flags, memory);
        if (status == HS_OK && want_rounds) {
            fputc('\n', memory);
            status = print_table(&rounds, request->flags, memory);
        }
        if (status == HS_OK && all && !csv && points.row_count > 0 && points_say_more(set)) {
            fputc('\n', memory);
            fputs(points_title, memory);
            status = print_table(&points, request->flags, memory);
        }
        if (status == HS_OK && all && !csv && speedups.row_count > 0) {
            fputc('\n', memory);
            fputs(speedup_title, memory);
            status = print_table(&speedups, request->flags, memory);
        }
    }
    if (status != HS_OK) goto nomem;
    if (fclose(memory) != 0) {
        memory = NULL;
        goto nomem;
    }
    memory = NULL;
    goto done;
nomem:
    status = hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
fail:
    if (memory != NULL) fclose(memory);
    memory = NULL;
    free(*text);
    *text = NULL;
    *size = 0;
done:
    table_free(&runs);
    table_free(&points);
    table_free(&speedups);
    table_free(&rounds);
    return status;
}

/* The one reporting path. */
static int report_run_request(const char *path, const ReportRequest *request, FILE *out,
                              HsDiag *diag)
{
    sqlite3 *db = NULL;
    RunSet *set = NULL;
    char *text = NULL;
    size_t size = 0;
    RunSetFilter filter = { request->sweep, request->have_run, request->run_id };
    int status = dbread_open(path, &db, diag);
    if (status != HS_OK) goto done;
    status = runset_load(db, path, &filter, &set, diag);
    if (status != HS_OK) goto done;
    if (request->have_run && set->run_count == 0) {
        status = hs_diag_set(diag, HS_E_INPUT, path, 0, "no run with id %lld",
                             (long long)request->run_id);
        goto done;
    }
    if (request->sweep != NULL && set->run_count == 0) {
        status = hs_diag_set(diag, HS_E_INPUT, path, 0, "no run of sweep '%s'", request->sweep);
        goto done;
    }
    status = format_report(db, path, set, request, &text, &size, diag);
    if (status != HS_OK) goto done;
    if (size > 0) fwrite(text, 1, size, out);
    status = check_output(out, diag);
done:
    free(text);
    runset_free(set);
    sqlite3_close(db);
    return status;
}

int report_print_runs(const char *db_path, unsigned flags, FILE *out, HsDiag *diag)
{
    ReportRequest request = { NULL, 0, 0, REPORT_TABLE_RUNS, flags };
    return report_run_request(db_path, &request, out, diag);
}

int report_print_tables(const char *db_path, const char *sweep, ReportTable table,
                        unsigned flags, FILE *out, HsDiag *diag)
{
    ReportRequest request = { sweep, 0, 0, table, flags };
    return report_run_request(db_path, &request, out, diag);
}

int report_print_run(const char *db_path, int64_t run_id, unsigned flags, FILE *out,
                     HsDiag *diag)
{
    ReportRequest request = { NULL, 1, run_id, REPORT_TABLE_RUNS, flags };
    return report_run_request(db_path, &request, out, diag);
}
