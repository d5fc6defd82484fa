/* report.c — `hetsim report` (analysis/report.h): loads the runs (analysis/runset.h),
 * has report_tables.c lay them out as tables, and prints those as aligned text or CSV.
 * The text is formatted into memory and written at the end, so a query that fails
 * half-way prints nothing. */
#include "analysis/report.h"

#include "analysis/dbread.h"
#include "analysis/report_tables.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- printing ---- */

/* RFC 4180 quoting, plus leading/trailing spaces so readers that trim keep them. */
static void report_csv_text(FILE *out, const char *text)
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

static void report_csv_cell(FILE *out, const ReportCell *cell)
{
    switch (cell->type) {
    case REPORT_CELL_NULL: break;
    case REPORT_CELL_INT: fprintf(out, "%" PRId64, cell->v.i); break;
    case REPORT_CELL_UINT: fprintf(out, "%" PRIu64, cell->v.u); break;
    case REPORT_CELL_REAL: fprintf(out, "%.17g", cell->v.d); break;
    case REPORT_CELL_TEXT: report_csv_text(out, cell->v.s); break;
    }
}

static void report_write_csv(const ReportGrid *table, FILE *out)
{
    for (int c = 0; c < table->column_count; c++) {
        if (c > 0) fputc(',', out);
        report_csv_text(out, table->columns[c].csv_name);
    }
    fputc('\n', out);
    for (size_t r = 0; r < table->row_count; r++) {
        const ReportCell *row = &table->cells[r * (size_t)table->column_count];
        for (int c = 0; c < table->column_count; c++) {
            if (c > 0) fputc(',', out);
            report_csv_cell(out, &row[c]);
        }
        fputc('\n', out);
    }
}

static void report_format_bytes(char *out, size_t size, double bytes)
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
static char *report_cell_display(const ReportCell *cell, ReportFormat format)
{
    char buffer[64];
    double number;
    if (cell->type == REPORT_CELL_NULL) return strdup("-");
    if (cell->type == REPORT_CELL_TEXT) {
        char *text = strdup(cell->v.s);
        if (text == NULL) return NULL;
        /* A newline or tab in a name would break the table; CSV keeps the original. */
        for (char *p = text; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
        return text;
    }
    if (cell->type == REPORT_CELL_INT && (format == REPORT_FMT_INT || format == REPORT_FMT_TEXT))
        snprintf(buffer, sizeof buffer, "%" PRId64, cell->v.i);
    else if (cell->type == REPORT_CELL_UINT)
        snprintf(buffer, sizeof buffer, "%" PRIu64, cell->v.u);
    else if (!report_cell_number(cell, &number))
        snprintf(buffer, sizeof buffer, "?");
    else if (format == REPORT_FMT_SECONDS)
        snprintf(buffer, sizeof buffer, "%.3f", number);
    else if (format == REPORT_FMT_SHARE)
        snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * number);
    else if (format == REPORT_FMT_BYTES)
        report_format_bytes(buffer, sizeof buffer, number);
    else if (format == REPORT_FMT_ACCURACY)
        snprintf(buffer, sizeof buffer, "%.4f", number);
    else if (format == REPORT_FMT_NUMBER)
        snprintf(buffer, sizeof buffer, "%.4g", number);
    else
        snprintf(buffer, sizeof buffer, "%.6g", number);
    return strdup(buffer);
}

/* Display width in code points: every byte that is not a UTF-8 continuation byte. */
static size_t report_text_width(const char *text)
{
    size_t width = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if ((*p & 0xC0) != 0x80) width++;
    return width;
}

static void report_pad(FILE *out, const char *text, size_t width, int right, int last)
{
    size_t pad = width - report_text_width(text);
    if (right)
        for (size_t i = 0; i < pad; i++) fputc(' ', out);
    fputs(text, out);
    if (!right && !last)
        for (size_t i = 0; i < pad; i++) fputc(' ', out);
}

/* Whether column c shows in the text table. */
static int report_column_shown(const ReportGrid *table, size_t c)
{
    unsigned flags = table->columns[c].flags;
    if (flags & REPORT_COL_CSV_ONLY) return 0;
    if (!(flags & REPORT_COL_OPTIONAL)) return 1;
    for (size_t r = 0; r < table->row_count; r++)
        if (table->cells[r * (size_t)table->column_count + c].type != REPORT_CELL_NULL) return 1;
    return 0;
}

static int report_write_text(const ReportGrid *table, FILE *out)
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
        shown_column[c] = report_column_shown(table, c);
        if (shown_column[c]) last = c;
        widths[c] = report_text_width(table->columns[c].title);
    }
    for (size_t i = 0; i < count; i++) {
        if (!shown_column[i % columns]) continue;
        shown[i] = report_cell_display(&table->cells[i], table->columns[i % columns].format);
        if (shown[i] == NULL) goto nomem;
        size_t width = report_text_width(shown[i]);
        if (width > widths[i % columns]) widths[i % columns] = width;
    }
    int first = 1;
    for (size_t c = 0; c < columns; c++) {
        if (!shown_column[c]) continue;
        if (!first) fputs("  ", out);
        first = 0;
        report_pad(out, table->columns[c].title, widths[c],
                   table->columns[c].format != REPORT_FMT_TEXT, c == last);
    }
    fputc('\n', out);
    for (size_t i = 0; i < count; i++) {
        size_t c = i % columns;
        if (c == 0) first = 1;
        if (shown_column[c]) {
            if (!first) fputs("  ", out);
            first = 0;
            report_pad(out, shown[i], widths[c], table->columns[c].format != REPORT_FMT_TEXT,
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

static int report_write_table(const ReportGrid *table, unsigned flags, FILE *out)
{
    if (flags & REPORT_CSV) {
        report_write_csv(table, out);
        return HS_OK;
    }
    return report_write_text(table, out);
}

static int report_check_output(FILE *out, HsDiag *diag)
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
    ReportExtraMeaning meaning;   /* for the per-round table (NULL: none known) */
} ReportRequest;

/* Whether the points table says more than the runs table: some point aggregates more
 * than one run, or some run belongs to a sweep. */
static int report_points_say_more(const RunSet *set)
{
    for (int p = 0; p < set->point_count; p++)
        if (set->points[p].run_count > 1) return 1;
    for (int i = 0; i < set->run_count; i++)
        if (set->runs[i].sweep != NULL) return 1;
    return 0;
}

static const char report_points_title[] =
    "Points: mean and 95 % interval (±) over the done runs (seeds) of each point\n";
static const char report_speedup_title[] =
    "Speedup over sync (t_sync / t_method, same scenario point and seed; mean ± 95 % interval)\n";

/* One JSON object holding every table the text report prints (report.h): the runs,
 * then the points and speedups (always, even when the text leaves them out), or with
 * --run the run and its rounds; --table keeps one. */
static void report_write_json_tables(const ReportTables *tables, const char *path, ReportTable table,
                                     int have_run, int want_rounds, FILE *out)
{
    fputs("{\"database\": ", out);
    report_json_string(out, path);
    if (table == REPORT_TABLE_ALL || table == REPORT_TABLE_RUNS) {
        fputs(",\n\"runs\": ", out);
        report_write_json(&tables->runs, out);
    }
    if (want_rounds) {
        fputs(",\n\"rounds\": ", out);
        report_write_json(&tables->rounds, out);
        fputs(",\n\"extra_meaning\": ", out);
        if (tables->extra_meaning != NULL) report_json_string(out, tables->extra_meaning);
        else fputs("null", out);
    }
    if (!have_run && (table == REPORT_TABLE_ALL || table == REPORT_TABLE_POINTS)) {
        fputs(",\n\"points\": ", out);
        report_write_json(&tables->points, out);
    }
    if (!have_run && (table == REPORT_TABLE_ALL || table == REPORT_TABLE_SPEEDUP)) {
        fputs(",\n\"speedup\": ", out);
        report_write_json(&tables->speedups, out);
    }
    fputs("}\n", out);
}

/* Formats the requested tables into text (malloc'd, *size bytes). */
static int report_format(sqlite3 *db, const char *path, const RunSet *set,
                         const ReportRequest *request, char **text, size_t *size,
                         HsDiag *diag)
{
    ReportTables tables;
    report_tables_init(&tables);
    FILE *memory = NULL;
    int status = HS_OK, csv = (request->flags & REPORT_CSV) != 0;
    int want_rounds = request->have_run && (request->flags & REPORT_ROUNDS);
    ReportTable table = request->table;
    int all = table == REPORT_TABLE_ALL && !request->have_run;
    *text = NULL;
    *size = 0;
    if ((status = report_tables_fill_runs(set, &tables.runs)) != HS_OK) goto nomem;
    if (!request->have_run) {
        if ((status = report_tables_fill_points(set, &tables.points)) != HS_OK) goto nomem;
        if ((status = report_tables_fill_speedups(set, &tables.speedups)) != HS_OK) goto nomem;
    }
    if (want_rounds &&
        (status = report_tables_load_rounds(db, path, request->run_id, request->meaning, &tables, diag)) != HS_OK)
        goto fail;
    memory = open_memstream(text, size);
    if (memory == NULL) goto nomem;
    if (request->flags & REPORT_JSON) {
        report_write_json_tables(&tables, path, table, request->have_run, want_rounds, memory);
    } else if (want_rounds && (csv || (request->flags & REPORT_ROUNDS_ONLY))) {
        status = report_write_table(&tables.rounds, request->flags, memory);
    } else if (table == REPORT_TABLE_POINTS) {
        status = report_write_table(&tables.points, request->flags, memory);
    } else if (table == REPORT_TABLE_SPEEDUP) {
        status = report_write_table(&tables.speedups, request->flags, memory);
    } else {
        status = report_write_table(&tables.runs, request->flags, memory);
        if (status == HS_OK && want_rounds) {
            fputc('\n', memory);
            status = report_write_table(&tables.rounds, request->flags, memory);
        }
        if (status == HS_OK && all && !csv && tables.points.row_count > 0 && report_points_say_more(set)) {
            fputc('\n', memory);
            fputs(report_points_title, memory);
            status = report_write_table(&tables.points, request->flags, memory);
        }
        if (status == HS_OK && all && !csv && tables.speedups.row_count > 0) {
            fputc('\n', memory);
            fputs(report_speedup_title, memory);
            status = report_write_table(&tables.speedups, request->flags, memory);
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
    report_tables_free(&tables);
    return status;
}

/* A table with per-agent figures: the runs table's offloading share (ComDML), the
 * points' too. The rounds table and the speedups read the rounds rows only. */
static int want_agent_figures(const ReportRequest *request)
{
    return !(request->flags & REPORT_ROUNDS_ONLY) && request->table != REPORT_TABLE_SPEEDUP;
}

/* Runs recorded with [run] record = summary have no agent_rounds rows: say so on stderr
 * (the tables on stdout stay tables) rather than leave a reader to wonder at a blank. */
static void report_note_summary(const RunSet *set, int agent_figures)
{
    int64_t first = -1, count = 0;
    for (int r = 0; r < set->run_count; r++)
        if (set->runs[r].summary && count++ == 0) first = set->runs[r].id;
    if (count == 0 || !agent_figures) return;
    fprintf(stderr,
            "note: %lld run%s (run %lld%s) recorded [run] record = summary: no per-agent rows (agent_rounds); "
            "idle share is the rounds' idle time, offloading share and per-agent figures are unknown "
            "(docs/recording.md)\n",
            (long long)count, count == 1 ? "" : "s", (long long)first, count == 1 ? "" : ", ...");
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
    status = report_format(db, path, set, request, &text, &size, diag);
    if (status != HS_OK) goto done;
    if (size > 0) fwrite(text, 1, size, out);
    status = report_check_output(out, diag);
    if (status == HS_OK) report_note_summary(set, want_agent_figures(request));
done:
    free(text);
    runset_free(set);
    sqlite3_close(db);
    return status;
}

int report_print_runs(const char *db_path, unsigned flags, FILE *out, HsDiag *diag)
{
    ReportRequest request = { NULL, 0, 0, REPORT_TABLE_RUNS, flags, NULL };
    return report_run_request(db_path, &request, out, diag);
}

int report_print_tables(const char *db_path, const char *sweep, ReportTable table,
                        unsigned flags, FILE *out, HsDiag *diag)
{
    ReportRequest request = { sweep, 0, 0, table, flags, NULL };
    return report_run_request(db_path, &request, out, diag);
}

int report_print_rounds(const char *db_path, int64_t run_id, ReportExtraMeaning meaning, FILE *out, HsDiag *diag)
{
    ReportRequest request = { NULL, 1, run_id, REPORT_TABLE_RUNS, REPORT_ROUNDS | REPORT_ROUNDS_ONLY, meaning };
    return report_run_request(db_path, &request, out, diag);
}

int report_print_run(const char *db_path, int64_t run_id, unsigned flags, ReportExtraMeaning meaning, FILE *out,
                     HsDiag *diag)
{
    ReportRequest request = { NULL, 1, run_id, REPORT_TABLE_RUNS, flags, meaning };
    return report_run_request(db_path, &request, out, diag);
}
