/* plot_accuracy.c — test accuracy of the averaged model (metrics rows with agent NULL)
 * against virtual time: one line per run of the group, one colour per method (titled
 * once), and the target accuracy as a dashed line when every run has the same one. */
#include "analysis/plot_internal.h"

#include "analysis/dbread.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char plot_accuracy_sql[] =
    "SELECT t, test_accuracy FROM metrics WHERE run_id = ?1 AND agent IS NULL"
    " AND t IS NOT NULL AND test_accuracy IS NOT NULL ORDER BY t, rowid";

int plot_figure_accuracy(Plot *plot, const char *data_path, FILE *data, FILE *body,
                         PlotCanvas *canvas, HsDiag *diag)
{
    const RunSet *set = plot->set;
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK, blocks = 0, method_count = 0;
    int *block_run = calloc((size_t)set->run_count + 1, sizeof *block_run);
    const char **methods = calloc((size_t)set->point_count + 1, sizeof *methods);
    PlotRange x = { 0 }, y = { 0 };
    double target = NAN;
    int same_target = 1;
    if (block_run == NULL || methods == NULL) {
        status = plot_nomem(diag);
        goto done;
    }
    int rc = sqlite3_prepare_v2(plot->db, plot_accuracy_sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
        status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
        goto done;
    }
    plot_range_add(&x, 0);
    for (int i = 0; i < set->run_count; i++) {
        const RunFacts *run = &set->runs[i];
        if (set->points[run->point_index].group != plot->group) continue;
        sqlite3_reset(stmt);
        sqlite3_bind_int64(stmt, 1, run->id);
        int rows = 0;
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            double t = sqlite3_column_double(stmt, 0), accuracy = sqlite3_column_double(stmt, 1);
            fprintf(data, "%.17g %.17g\n", t, accuracy);
            plot_range_add(&x, t);
            plot_range_add(&y, accuracy);
            rows++;
        }
        if (rc != SQLITE_DONE) {
            status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
            goto done;
        }
        if (rows == 0) continue;
        fputs("\n\n", data);
        block_run[blocks++] = i;
        if (blocks == 1) target = run->target_accuracy;
        else if (!(run->target_accuracy == target || (isnan(target) && isnan(run->target_accuracy))))
            same_target = 0;
    }
    if (blocks == 0) {
        plot_note(plot, "no accuracy measured in %s (timing-mode runs evaluate nothing)", plot->title);
        status = PLOT_SKIP;
        goto done;
    }
    int draw_target = same_target && isfinite(target);
    if (draw_target) plot_range_add(&y, target);
    canvas->width = 1000;
    canvas->height = 620;
    fputs("set title ", body);
    plot_labelf(plot, body, "Accuracy against virtual time: %s (averaged model; one line per run)",
                plot->title);
    fputs("\nset grid\nset key bottom right\n"
          "set xlabel 'virtual time (s)'\nset ylabel 'test accuracy'\n", body);
    plot_range_print(body, "x", x, 1);
    plot_range_print(body, "y", y, 0);
    fputs("plot ", body);
    for (int b = 0; b < blocks; b++) {
        const RunFacts *run = &set->runs[block_run[b]];
        const char *method = set->points[run->point_index].method;
        int m = 0, first = 0;
        while (m < method_count && strcmp(methods[m], method) != 0) m++;
        if (m == method_count) {
            methods[method_count++] = method;
            first = 1;
        }
        if (b > 0) fputs(", \\\n     ", body);
        plot_quote_path(body, data_path);
        fprintf(body, " index %d using 1:2 with lines lw 1.5 ", b);
        plot_print_method_colour(body, plot, method);
        fputc(' ', body);
        if (first) {
            fputs("title ", body);
            plot_label(plot, body, method);
        } else {
            fputs("notitle", body);
        }
    }
    if (draw_target) {
        fprintf(body, ", \\\n     %.17g with lines dt 2 lc rgb 'gray40' title ", target);
        plot_labelf(plot, body, "target %g", target);
    }
    fputs("\n", body);
done:
    sqlite3_finalize(stmt);
    free(block_run);
    free(methods);
    return status;
}
