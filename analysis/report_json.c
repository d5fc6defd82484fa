/* report_json.c — a report table as a JSON array of objects (`hetsim report --json`),
 * one object per row keyed by the CSV column names: numbers as JSON numbers in the
 * shortest text that reads back to the same double (base/numtext.h; integers exact, the
 * seed as its unsigned 64-bit value), a missing value (and a non-finite one, which JSON
 * cannot hold) as null, text as JSON strings (UTF-8 passed through, control characters
 * escaped). */
#include "analysis/report_tables.h"

#include "base/numtext.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

void report_json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f) fprintf(out, "\\u%04x", *p);
            else fputc(*p, out);
        }
    }
    fputc('"', out);
}

void report_json_number(FILE *out, double value)
{
    char text[NUMTEXT_SIZE];
    if (!isfinite(value)) fputs("null", out);
    else fputs(numtext_double(text, sizeof text, value), out);
}

static void report_json_cell(FILE *out, const ReportCell *cell)
{
    switch (cell->type) {
    case REPORT_CELL_NULL: fputs("null", out); break;
    case REPORT_CELL_INT: fprintf(out, "%" PRId64, cell->v.i); break;
    case REPORT_CELL_UINT: fprintf(out, "%" PRIu64, cell->v.u); break;
    case REPORT_CELL_REAL: report_json_number(out, cell->v.d); break;
    case REPORT_CELL_TEXT: report_json_string(out, cell->v.s); break;
    }
}

void report_write_json(const ReportGrid *table, FILE *out)
{
    fputc('[', out);
    for (size_t r = 0; r < table->row_count; r++) {
        const ReportCell *row = &table->cells[r * (size_t)table->column_count];
        fputs(r > 0 ? ",\n  {" : "\n  {", out);
        for (int c = 0; c < table->column_count; c++) {
            if (c > 0) fputs(", ", out);
            report_json_string(out, table->columns[c].csv_name);
            fputs(": ", out);
            report_json_cell(out, &row[c]);
        }
        fputc('}', out);
    }
    fputs(table->row_count > 0 ? "\n]" : "]", out);
}
