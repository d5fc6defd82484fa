/* report_tables.c — what `hetsim report` computes: its tables as grids of cells, filled
 * from a RunSet (analysis/runset.h defines every figure; this only lays them out) and,
 * for the per-round table, from the rounds rows. Tables are small (one row per run,
 * point or round), so they are held whole in memory: report.c measures column widths
 * and formats everything before printing a byte. */
#include "analysis/report_tables.h"

#include "analysis/dbread.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the columns ---- */

static const ReportColumn report_run_columns[] = {
    { "id", "id", REPORT_FMT_INT, 0 },
    { "name", "name", REPORT_FMT_TEXT, 0 },
    { "method", "method", REPORT_FMT_TEXT, 0 },
    { "seed", "seed", REPORT_FMT_INT, 0 },
    { "status", "status", REPORT_FMT_TEXT, 0 },
    { "rounds", "rounds", REPORT_FMT_INT, 0 },
    { "virtual time (s)", "sim_time_s", REPORT_FMT_SECONDS, 0 },
    { "idle share", "idle_share", REPORT_FMT_SHARE, 0 },
    { "bytes", "bytes", REPORT_FMT_BYTES, 0 },
    { "final accuracy", "final_accuracy", REPORT_FMT_ACCURACY, 0 },
    { "target", "target_accuracy", REPORT_FMT_ACCURACY, REPORT_COL_OPTIONAL },
    { "time to target (s)", "time_to_target_s", REPORT_FMT_SECONDS, REPORT_COL_OPTIONAL },
    { "predicted round (s)", "predicted_round_s", REPORT_FMT_SECONDS, REPORT_COL_OPTIONAL },
    { "actual round (s)", "actual_round_s", REPORT_FMT_SECONDS, REPORT_COL_OPTIONAL },
    { "offloading", "offload_share", REPORT_FMT_SHARE, REPORT_COL_OPTIONAL },
    { "sweep", "sweep", REPORT_FMT_TEXT, REPORT_COL_OPTIONAL },
    { "point", "point", REPORT_FMT_TEXT, REPORT_COL_OPTIONAL },
    /* last, so that the CSV's earlier columns keep their places */
    { "energy (J)", "energy_j", REPORT_FMT_NUMBER, REPORT_COL_OPTIONAL },
    { "energy to target (J)", "energy_to_target_j", REPORT_FMT_NUMBER, REPORT_COL_OPTIONAL },
};
enum {
    RUN_COL_ID, RUN_COL_NAME, RUN_COL_METHOD, RUN_COL_SEED, RUN_COL_STATUS, RUN_COL_ROUNDS,
    RUN_COL_TIME, RUN_COL_IDLE, RUN_COL_BYTES, RUN_COL_ACCURACY, RUN_COL_TARGET,
    RUN_COL_TO_TARGET, RUN_COL_PREDICTED, RUN_COL_ACTUAL, RUN_COL_OFFLOAD, RUN_COL_SWEEP,
    RUN_COL_POINT, RUN_COL_ENERGY, RUN_COL_ENERGY_TO_TARGET, RUN_COLUMNS
};

static const ReportColumn report_point_columns[] = {
    { "method", "method", REPORT_FMT_TEXT, 0 },
    { "level", "level", REPORT_FMT_NUMBER, 0 },
    { "seeds", "seeds", REPORT_FMT_INT, 0 },
    { "not done", "not_done", REPORT_FMT_INT, 0 },
    { "virtual time (s)", "sim_time_s_mean", REPORT_FMT_SECONDS, 0 },
    { "±", "sim_time_s_ci95", REPORT_FMT_SECONDS, 0 },
    { "time to target (s)", "time_to_target_s_mean", REPORT_FMT_SECONDS, REPORT_COL_OPTIONAL },
    { "±", "time_to_target_s_ci95", REPORT_FMT_SECONDS, REPORT_COL_OPTIONAL },
    { "reached", "reached", REPORT_FMT_INT, REPORT_COL_OPTIONAL },
    { "final accuracy", "final_accuracy_mean", REPORT_FMT_ACCURACY, REPORT_COL_OPTIONAL },
    { "±", "final_accuracy_ci95", REPORT_FMT_ACCURACY, REPORT_COL_OPTIONAL },
    { "idle share", "idle_share_mean", REPORT_FMT_SHARE, 0 },
    { "±", "idle_share_ci95", REPORT_FMT_SHARE, 0 },
    { "makespan (s)", "makespan_s_mean", REPORT_FMT_SECONDS, 0 },
    { "±", "makespan_s_ci95", REPORT_FMT_SECONDS, 0 },
    { "bytes", "bytes_mean", REPORT_FMT_BYTES, 0 },
    { "±", "bytes_ci95", REPORT_FMT_BYTES, REPORT_COL_CSV_ONLY },
    { "predicted round (s)", "predicted_round_s_mean", REPORT_FMT_SECONDS, REPORT_COL_OPTIONAL },
    { "actual round (s)", "actual_round_s_mean", REPORT_FMT_SECONDS, REPORT_COL_OPTIONAL },
    { "offloading", "offload_share_mean", REPORT_FMT_SHARE, REPORT_COL_OPTIONAL },
    { "level axis", "level_axis", REPORT_FMT_TEXT, REPORT_COL_CSV_ONLY },
    { "sweep", "sweep", REPORT_FMT_TEXT, REPORT_COL_OPTIONAL },
    { "point", "point", REPORT_FMT_TEXT, 0 },
    /* last, so that the CSV's earlier columns keep their places */
    { "energy (J)", "energy_j_mean", REPORT_FMT_NUMBER, REPORT_COL_OPTIONAL },
    { "±", "energy_j_ci95", REPORT_FMT_NUMBER, REPORT_COL_OPTIONAL },
    { "energy to target (J)", "energy_to_target_j_mean", REPORT_FMT_NUMBER, REPORT_COL_OPTIONAL },
    { "±", "energy_to_target_j_ci95", REPORT_FMT_NUMBER, REPORT_COL_OPTIONAL },
};
enum {
    POINT_COL_METHOD, POINT_COL_LEVEL, POINT_COL_SEEDS, POINT_COL_NOT_DONE, POINT_COL_TIME,
    POINT_COL_TO_TARGET = POINT_COL_TIME + 2, POINT_COL_REACHED = POINT_COL_TO_TARGET + 2,
    POINT_COL_ACCURACY, POINT_COL_IDLE = POINT_COL_ACCURACY + 2,
    POINT_COL_MAKESPAN = POINT_COL_IDLE + 2, POINT_COL_BYTES = POINT_COL_MAKESPAN + 2,
    POINT_COL_PREDICTED = POINT_COL_BYTES + 2, POINT_COL_ACTUAL, POINT_COL_OFFLOAD,
    POINT_COL_AXIS, POINT_COL_SWEEP, POINT_COL_POINT, POINT_COL_ENERGY,
    POINT_COL_ENERGY_TO_TARGET = POINT_COL_ENERGY + 2, POINT_COLUMNS = POINT_COL_ENERGY_TO_TARGET + 2
};

static const ReportColumn report_speedup_columns[] = {
    { "method", "method", REPORT_FMT_TEXT, 0 },
    { "level", "level", REPORT_FMT_NUMBER, 0 },
    { "pairs", "pairs", REPORT_FMT_INT, 0 },
    { "basis", "basis", REPORT_FMT_TEXT, 0 },
    { "speedup", "speedup_mean", REPORT_FMT_NUMBER, 0 },
    { "±", "speedup_ci95", REPORT_FMT_NUMBER, 0 },
    { "time (s)", "time_s_mean", REPORT_FMT_SECONDS, 0 },
    { "sync time (s)", "sync_time_s_mean", REPORT_FMT_SECONDS, 0 },
    { "sweep", "sweep", REPORT_FMT_TEXT, REPORT_COL_OPTIONAL },
    { "scenario", "scenario", REPORT_FMT_TEXT, REPORT_COL_OPTIONAL },
};
enum {
    SPEED_COL_METHOD, SPEED_COL_LEVEL, SPEED_COL_PAIRS, SPEED_COL_BASIS, SPEED_COL_MEAN,
    SPEED_COL_HALF, SPEED_COL_TIME, SPEED_COL_SYNC_TIME, SPEED_COL_SWEEP,
    SPEED_COL_SCENARIO, SPEED_COLUMNS
};

#define REPORT_COUNT(array) (sizeof array / sizeof array[0])
_Static_assert(REPORT_COUNT(report_run_columns) == RUN_COLUMNS, "run columns");
_Static_assert(REPORT_COUNT(report_point_columns) == POINT_COLUMNS, "point columns");
_Static_assert(REPORT_COUNT(report_speedup_columns) == SPEED_COLUMNS, "speedup columns");

static const ReportColumn report_round_columns[] = {
    { "run", "run_id", REPORT_FMT_INT, 0 },
    { "round", "round", REPORT_FMT_INT, 0 },
    { "t_start (s)", "t_start", REPORT_FMT_SECONDS, 0 },
    { "t_end (s)", "t_end", REPORT_FMT_SECONDS, 0 },
    { "makespan (s)", "makespan", REPORT_FMT_SECONDS, 0 },
    { "idle (s)", "idle_s", REPORT_FMT_SECONDS, 0 },
    { "bytes", "bytes", REPORT_FMT_BYTES, 0 },
    /* titled "extra (MEANING)" for the run (report_tables_load_rounds) */
    { "extra", "extra", REPORT_FMT_NUMBER, REPORT_COL_OPTIONAL },
};
enum { ROUND_COLUMNS = REPORT_ROUND_COLUMNS, ROUND_COL_EXTRA = ROUND_COLUMNS - 1 };
_Static_assert(REPORT_COUNT(report_round_columns) == ROUND_COLUMNS, "round columns");

static const char report_rounds_sql[] =
    "SELECT run_id, round, t_start, t_end, t_end - t_start, idle_s, bytes, extra"
    " FROM rounds WHERE run_id = ?1 ORDER BY round, rowid";

/* ---- grids and cells ---- */

static void report_grid_init(ReportGrid *table, const ReportColumn *columns, int column_count)
{
    memset(table, 0, sizeof *table);
    table->columns = columns;
    table->column_count = column_count;
}

static void report_grid_free(ReportGrid *table)
{
    if (table == NULL) return;
    size_t cells = table->row_count * (size_t)table->column_count;
    for (size_t i = 0; i < cells; i++)
        if (table->cells[i].type == REPORT_CELL_TEXT) free(table->cells[i].v.s);
    free(table->cells);
    table->cells = NULL;
    table->row_count = table->row_capacity = 0;
}

/* Appends a row of NULL cells and returns it, or NULL when out of memory. */
static ReportCell *report_grid_add_row(ReportGrid *table)
{
    size_t width = (size_t)table->column_count;
    if (table->row_count == table->row_capacity) {
        size_t capacity = table->row_capacity ? 2 * table->row_capacity : 64;
        ReportCell *grown = realloc(table->cells, capacity * width * sizeof *grown);
        if (grown == NULL) return NULL;
        table->cells = grown;
        table->row_capacity = capacity;
    }
    ReportCell *row = &table->cells[table->row_count * width];
    memset(row, 0, width * sizeof *row);
    table->row_count++;
    return row;
}

/* Copies column `column` of the current result row into *cell; -1 when out of memory. */
static int report_cell_from_column(ReportCell *cell, sqlite3_stmt *stmt, int column)
{
    switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_INTEGER:
        cell->type = REPORT_CELL_INT;
        cell->v.i = sqlite3_column_int64(stmt, column);
        return 0;
    case SQLITE_FLOAT:
        cell->type = REPORT_CELL_REAL;
        cell->v.d = sqlite3_column_double(stmt, column);
        return 0;
    case SQLITE_NULL:
        cell->type = REPORT_CELL_NULL;
        return 0;
    default: {
        const char *text = (const char *)sqlite3_column_text(stmt, column);
        if (text == NULL) return -1;  /* TEXT/BLOB whose conversion ran out of memory */
        cell->v.s = strdup(text);
        if (cell->v.s == NULL) return -1;
        cell->type = REPORT_CELL_TEXT;
        return 0;
    }
    }
}

static void report_cell_real(ReportCell *cell, double value)
{
    if (isnan(value)) {
        cell->type = REPORT_CELL_NULL;
        return;
    }
    cell->type = REPORT_CELL_REAL;
    cell->v.d = value;
}

static void report_cell_int(ReportCell *cell, int64_t value)
{
    cell->type = REPORT_CELL_INT;
    cell->v.i = value;
}

/* NULL text makes a NULL cell; -1 when out of memory. */
static int report_cell_text(ReportCell *cell, const char *text)
{
    if (text == NULL) {
        cell->type = REPORT_CELL_NULL;
        return 0;
    }
    if ((cell->v.s = strdup(text)) == NULL) return -1;
    cell->type = REPORT_CELL_TEXT;
    return 0;
}

int report_cell_number(const ReportCell *cell, double *value)
{
    switch (cell->type) {
    case REPORT_CELL_INT: *value = (double)cell->v.i; return 1;
    case REPORT_CELL_UINT: *value = (double)cell->v.u; return 1;
    case REPORT_CELL_REAL: *value = cell->v.d; return 1;
    default: return 0;
    }
}

void report_tables_init(ReportTables *tables)
{
    report_grid_init(&tables->runs, report_run_columns, RUN_COLUMNS);
    report_grid_init(&tables->points, report_point_columns, POINT_COLUMNS);
    report_grid_init(&tables->speedups, report_speedup_columns, SPEED_COLUMNS);
    memcpy(tables->round_columns, report_round_columns, sizeof report_round_columns);
    report_grid_init(&tables->rounds, tables->round_columns, ROUND_COLUMNS);
    tables->extra_meaning = NULL;
    tables->extra_title = NULL;
}

void report_tables_free(ReportTables *tables)
{
    if (tables == NULL) return;
    report_grid_free(&tables->runs);
    report_grid_free(&tables->points);
    report_grid_free(&tables->speedups);
    report_grid_free(&tables->rounds);
    free(tables->extra_meaning);
    free(tables->extra_title);
    tables->extra_meaning = tables->extra_title = NULL;
    tables->round_columns[ROUND_COL_EXTRA].title = report_round_columns[ROUND_COL_EXTRA].title;
}

/* ---- filling the tables ---- */

int report_tables_fill_runs(const RunSet *set, ReportGrid *table)
{
    for (int i = 0; i < set->run_count; i++) {
        const RunFacts *run = &set->runs[i];
        ReportCell *row = report_grid_add_row(table);
        if (row == NULL) return HS_E_NOMEM;
        report_cell_int(&row[RUN_COL_ID], run->id);
        row[RUN_COL_SEED].type = REPORT_CELL_UINT;
        row[RUN_COL_SEED].v.u = run->seed;
        if (run->has_rounds) report_cell_int(&row[RUN_COL_ROUNDS], run->rounds);
        report_cell_real(&row[RUN_COL_TIME], run->sim_time_s);
        report_cell_real(&row[RUN_COL_IDLE], run->idle_share);
        report_cell_real(&row[RUN_COL_BYTES], run->bytes);
        report_cell_real(&row[RUN_COL_ACCURACY], run->final_accuracy);
        report_cell_real(&row[RUN_COL_TARGET], run->target_accuracy);
        report_cell_real(&row[RUN_COL_TO_TARGET], run->time_to_target_s);
        report_cell_real(&row[RUN_COL_PREDICTED], run->predicted_s);
        report_cell_real(&row[RUN_COL_ACTUAL], run->actual_s);
        report_cell_real(&row[RUN_COL_OFFLOAD], run->offload_share);
        report_cell_real(&row[RUN_COL_ENERGY], run->energy_j);
        report_cell_real(&row[RUN_COL_ENERGY_TO_TARGET], run->energy_to_target_j);
        if (report_cell_text(&row[RUN_COL_NAME], run->name) != 0 ||
            report_cell_text(&row[RUN_COL_METHOD], run->method) != 0 ||
            report_cell_text(&row[RUN_COL_STATUS], run->status) != 0 ||
            report_cell_text(&row[RUN_COL_SWEEP], run->sweep) != 0 ||
            report_cell_text(&row[RUN_COL_POINT], run->point) != 0)
            return HS_E_NOMEM;
    }
    return HS_OK;
}

/* The mean and half-width cells of one figure of a point. */
static int report_point_figure(const RunSet *set, int p, RunField field, ReportCell *mean,
                               ReportCell *half)
{
    RunStat stat;
    if (runset_point_stat(set, p, field, &stat) != HS_OK) return HS_E_NOMEM;
    report_cell_real(mean, stat.mean);
    if (half != NULL) report_cell_real(half, stat.half);
    return HS_OK;
}

static int report_tables_fill_points_in(const RunSet *set, ReportGrid *table, const int *order);

int report_tables_fill_points(const RunSet *set, ReportGrid *table)
{
    int *order = malloc(((size_t)set->point_count + 1) * sizeof *order);
    if (order == NULL) return HS_E_NOMEM;
    runset_point_order(set, order);
    int status = report_tables_fill_points_in(set, table, order);
    free(order);
    return status;
}

static int report_tables_fill_points_in(const RunSet *set, ReportGrid *table, const int *order)
{
    for (int i = 0; i < set->point_count; i++) {
        int p = order[i];
        const RunPoint *point = &set->points[p];
        const RunGroup *group = &set->groups[point->group];
        ReportCell *row = report_grid_add_row(table);
        if (row == NULL) return HS_E_NOMEM;
        report_cell_real(&row[POINT_COL_LEVEL], point->level);
        report_cell_int(&row[POINT_COL_SEEDS], point->done_count);
        report_cell_int(&row[POINT_COL_NOT_DONE], point->run_count - point->done_count);
        int targets = 0, reached = 0;
        for (int k = 0; k < point->run_count; k++) {
            const RunFacts *run = &set->runs[point->runs[k]];
            if (!run->done || isnan(run->target_accuracy)) continue;
            targets++;
            reached += !isnan(run->time_to_target_s);
        }
        if (targets > 0) report_cell_int(&row[POINT_COL_REACHED], reached);
        static const struct { int column; RunField field; int half; } figures[] = {
            { POINT_COL_TIME, RUN_SIM_TIME, 1 },
            { POINT_COL_ACCURACY, RUN_FINAL_ACCURACY, 1 },
            { POINT_COL_IDLE, RUN_IDLE_SHARE, 1 },
            { POINT_COL_MAKESPAN, RUN_MAKESPAN, 1 },
            { POINT_COL_BYTES, RUN_BYTES, 1 },
            { POINT_COL_PREDICTED, RUN_PREDICTED, 0 },
            { POINT_COL_ACTUAL, RUN_ACTUAL, 0 },
            { POINT_COL_OFFLOAD, RUN_OFFLOAD_SHARE, 0 },
            { POINT_COL_ENERGY, RUN_ENERGY, 1 },
        };
        for (size_t f = 0; f < sizeof figures / sizeof figures[0]; f++) {
            int c = figures[f].column;
            if (report_point_figure(set, p, figures[f].field, &row[c],
                                    figures[f].half ? &row[c + 1] : NULL) != HS_OK)
                return HS_E_NOMEM;
        }
        /* a mean time to target only when every done seed got there: a mean over the
         * seeds that did would flatter the point */
        if (point->done_count > 0 && reached == point->done_count &&
            report_point_figure(set, p, RUN_TIME_TO_TARGET, &row[POINT_COL_TO_TARGET],
                                &row[POINT_COL_TO_TARGET + 1]) != HS_OK)
            return HS_E_NOMEM;
        if (point->done_count > 0 && reached == point->done_count &&
            report_point_figure(set, p, RUN_ENERGY_TO_TARGET, &row[POINT_COL_ENERGY_TO_TARGET],
                                &row[POINT_COL_ENERGY_TO_TARGET + 1]) != HS_OK)
            return HS_E_NOMEM;
        if (report_cell_text(&row[POINT_COL_METHOD], point->method) != 0 ||
            report_cell_text(&row[POINT_COL_AXIS], group->axis_title) != 0 ||
            report_cell_text(&row[POINT_COL_SWEEP], group->sweep[0] ? group->sweep : NULL) != 0 ||
            report_cell_text(&row[POINT_COL_POINT], point->label) != 0)
            return HS_E_NOMEM;
    }
    return HS_OK;
}

int report_tables_fill_speedups(const RunSet *set, ReportGrid *table)
{
    RunSpeedup *rows = NULL;
    int count = 0;
    if (runset_speedups(set, &rows, &count) != HS_OK) return HS_E_NOMEM;
    /* in the order of the points table */
    int *order = malloc(((size_t)set->point_count + 1) * sizeof *order);
    int *position = malloc(((size_t)set->point_count + 1) * sizeof *position);
    if (order == NULL || position == NULL) {
        free(order);
        free(position);
        free(rows);
        return HS_E_NOMEM;
    }
    runset_point_order(set, order);
    for (int i = 0; i < set->point_count; i++) position[order[i]] = i;
    for (int i = 1; i < count; i++) {  /* insertion sort: stable */
        RunSpeedup v = rows[i];
        int j = i - 1;
        while (j >= 0 && position[rows[j].point] > position[v.point]) {
            rows[j + 1] = rows[j];
            j--;
        }
        rows[j + 1] = v;
    }
    free(order);
    free(position);
    int status = HS_OK;
    for (int i = 0; i < count && status == HS_OK; i++) {
        const RunSpeedup *speedup = &rows[i];
        const RunPoint *point = &set->points[speedup->point];
        const RunGroup *group = &set->groups[point->group];
        ReportCell *row = report_grid_add_row(table);
        if (row == NULL) {
            status = HS_E_NOMEM;
            break;
        }
        report_cell_real(&row[SPEED_COL_LEVEL], point->level);
        report_cell_int(&row[SPEED_COL_PAIRS], speedup->speedup.n);
        report_cell_real(&row[SPEED_COL_MEAN], speedup->speedup.mean);
        report_cell_real(&row[SPEED_COL_HALF], speedup->speedup.half);
        report_cell_real(&row[SPEED_COL_TIME], speedup->time.mean);
        report_cell_real(&row[SPEED_COL_SYNC_TIME], speedup->sync_time.mean);
        if (report_cell_text(&row[SPEED_COL_METHOD], point->method) != 0 ||
            report_cell_text(&row[SPEED_COL_BASIS], runset_basis_name(speedup->basis)) != 0 ||
            report_cell_text(&row[SPEED_COL_SWEEP], group->sweep[0] ? group->sweep : NULL) != 0 ||
            report_cell_text(&row[SPEED_COL_SCENARIO], point->scenario[0] ? point->scenario : NULL) != 0)
            status = HS_E_NOMEM;
    }
    free(rows);
    return status;
}

/* The [method] keys of one run as run_params holds them, for the caller's
 * ReportExtraMeaning. */
typedef struct RoundKeys {
    sqlite3_stmt *stmt;     /* value_text of (run, 'method', key); NULL without run_params */
    int64_t run_id;
    char value[256];
} RoundKeys;

static const char *report_round_key(void *ctx, const char *key)
{
    RoundKeys *keys = ctx;
    if (keys->stmt == NULL) return NULL;
    sqlite3_reset(keys->stmt);
    const char *found = NULL;
    if (sqlite3_bind_int64(keys->stmt, 1, keys->run_id) == SQLITE_OK &&
        sqlite3_bind_text(keys->stmt, 2, key, -1, SQLITE_TRANSIENT) == SQLITE_OK &&
        sqlite3_step(keys->stmt) == SQLITE_ROW && sqlite3_column_text(keys->stmt, 0) != NULL) {
        snprintf(keys->value, sizeof keys->value, "%s", (const char *)sqlite3_column_text(keys->stmt, 0));
        found = keys->value;
    }
    sqlite3_reset(keys->stmt);
    return found;
}

/* What rounds.extra means in run_id, from meaning: *out malloc'd, NULL when none is
 * known (no such run, a database without run_params answers from the method alone). */
static int report_extra_meaning(sqlite3 *db, int64_t run_id, ReportExtraMeaning meaning, char **out)
{
    *out = NULL;
    if (meaning == NULL) return HS_OK;
    sqlite3_stmt *method = NULL;
    RoundKeys keys = {.run_id = run_id};
    int status = HS_OK;
    if (sqlite3_prepare_v2(db, "SELECT method FROM runs WHERE id = ?1", -1, &method, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(method, 1, run_id) == SQLITE_OK && sqlite3_step(method) == SQLITE_ROW &&
        sqlite3_column_text(method, 0) != NULL) {
        /* a database of schema version 1 has no run_params: its runs' keys are unknown */
        if (sqlite3_prepare_v2(db,
                               "SELECT value_text FROM run_params WHERE run_id = ?1 AND section = 'method' AND key = ?2",
                               -1, &keys.stmt, NULL) != SQLITE_OK) {
            sqlite3_finalize(keys.stmt);
            keys.stmt = NULL;
        }
        const char *text = meaning((const char *)sqlite3_column_text(method, 0), report_round_key, &keys);
        if (text != NULL && (*out = strdup(text)) == NULL) status = HS_E_NOMEM;
    }
    sqlite3_finalize(keys.stmt);
    sqlite3_finalize(method);
    return status;
}

int report_tables_load_rounds(sqlite3 *db, const char *path, int64_t run_id, ReportExtraMeaning meaning,
                              ReportTables *tables, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    ReportGrid *table = &tables->rounds;
    int status = HS_OK;
    if (report_extra_meaning(db, run_id, meaning, &tables->extra_meaning) != HS_OK) goto nomem;
    if (tables->extra_meaning != NULL) {
        size_t size = strlen(tables->extra_meaning) + sizeof "extra ()";
        if ((tables->extra_title = malloc(size)) == NULL) goto nomem;
        snprintf(tables->extra_title, size, "extra (%s)", tables->extra_meaning);
        tables->round_columns[ROUND_COL_EXTRA].title = tables->extra_title;
    }
    int rc = sqlite3_prepare_v2(db, report_rounds_sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(stmt, 1, run_id);
    if (rc != SQLITE_OK) goto query_failed;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        ReportCell *row = report_grid_add_row(table);
        if (row == NULL) goto nomem;
        for (int i = 0; i < ROUND_COLUMNS; i++)
            if (report_cell_from_column(&row[i], stmt, i) != 0) goto nomem;
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
