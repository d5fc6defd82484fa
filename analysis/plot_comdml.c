/* plot_comdml.c — the figures of one ComDML run, from its pairings rows: the pairing
 * map (per round an arrow from each offloader to its helper, coloured by the split) and
 * the solver's predicted against the played-out pair time, with y = x. */
#include "analysis/plot_internal.h"

#include "analysis/dbread.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char plot_comdml_pairings_sql[] =
    "SELECT round, slow, fast, split, predicted_s, actual_s FROM pairings WHERE run_id = ?1"
    " AND slow IS NOT NULL AND fast IS NOT NULL ORDER BY round, slow, rowid";

int plot_figure_pairing(Plot *plot, const char *data_path, FILE *data, FILE *body,
                        PlotCanvas *canvas, HsDiag *diag)
{
    const RunFacts *run = plot->comdml;
    if (run == NULL) {
        plot_note(plot, "%s", plot->comdml_missing);
        return PLOT_SKIP;
    }
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK, rounds = 0, pairs = 0, more = 0;
    int64_t last_round = 0;
    PlotRange x = { 0 }, y = { 0 };
    /* pairs of a round are spread around the round's x so their arrows do not overlap */
    typedef struct Pair { int64_t round, slow, fast, split; } Pair;
    Pair *list = NULL;
    int capacity = 0;
    int rc = sqlite3_prepare_v2(plot->db, plot_comdml_pairings_sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) goto query_failed;
    sqlite3_bind_int64(stmt, 1, run->id);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t round = sqlite3_column_int64(stmt, 0);
        if (pairs == 0 || round != last_round) {
            if (rounds == PLOT_MAX_PAIRING_ROUNDS) {
                more = 1;
                break;
            }
            rounds++;
            last_round = round;
        }
        if (pairs == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            Pair *grown = realloc(list, (size_t)capacity * sizeof *grown);
            if (grown == NULL) goto out_of_memory;
            list = grown;
        }
        list[pairs++] = (Pair){ round, sqlite3_column_int64(stmt, 1), sqlite3_column_int64(stmt, 2),
                                sqlite3_column_int64(stmt, 3) };
    }
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) goto query_failed;
    if (pairs == 0) {
        plot_note(plot, "run %" PRId64 " has no pairings with agents", run->id);
        status = PLOT_SKIP;
        goto done;
    }
    if (more)
        plot_inform(plot, "pairing map shows the first %d rounds of run %" PRId64 "\n",
               PLOT_MAX_PAIRING_ROUNDS, run->id);
    /* the splits in use, ascending; arrows take their split's colour */
    int64_t splits[PLOT_PALETTE_SIZE];
    int split_count = 0, crowded = 0, overflow = 0;
    for (int k = 0; k < pairs; k++) {
        int known = 0;
        for (int j = 0; j < split_count && !known; j++) known = splits[j] == list[k].split;
        if (!known && split_count < PLOT_PALETTE_SIZE) splits[split_count++] = list[k].split;
        else if (!known) overflow = 1;
    }
    qsort(splits, (size_t)split_count, sizeof *splits, plot_compare_int64);
    /* blocks: arrows (x, y, 0, dy, split) of each split, offloaders, helpers, then the
     * labels (x, y, split) when no round has more than a dozen pairs */
    for (int start = 0; start < pairs;) {
        int end = start;
        while (end < pairs && list[end].round == list[start].round) end++;
        if (end - start > 12) crowded = 1;
        start = end;
    }
    int blocks = split_count + 2 + !crowded;
    for (int block = 0; block < blocks; block++) {
        for (int start = 0; start < pairs;) {
            int end = start;
            while (end < pairs && list[end].round == list[start].round) end++;
            int m = end - start;
            double spread = m > 1 ? (0.8 / m < 0.25 ? 0.8 / m : 0.25) : 0;
            for (int k = start; k < end; k++) {
                const Pair *pair = &list[k];
                double px = (double)pair->round + ((k - start) - (m - 1) / 2.0) * spread;
                int colour = split_count - 1;  /* splits past the plot_palette share the last colour */
                for (int j = 0; j < split_count; j++)
                    if (splits[j] == pair->split) colour = j;
                if (block < split_count && colour == block)
                    fprintf(data, "%.17g %" PRId64 " 0 %" PRId64 " %" PRId64 "\n", px, pair->slow,
                            pair->fast - pair->slow, pair->split);
                else if (block == split_count || block == split_count + 1)
                    fprintf(data, "%.17g %" PRId64 "\n", px,
                            block == split_count ? pair->slow : pair->fast);
                else if (block == split_count + 2)
                    fprintf(data, "%.17g %" PRId64 " %" PRId64 "\n", px, pair->slow, pair->split);
                plot_range_add(&x, px);
                plot_range_add(&y, (double)pair->slow);
                plot_range_add(&y, (double)pair->fast);
            }
            start = end;
        }
        fputs("\n\n", data);
    }
    canvas->width = 1100;
    canvas->height = 650;
    fputs("set title ", body);
    plot_labelf(plot, body, "ComDML pairing map: run %" PRId64 " (%s, seed %" PRIu64 "): arrow = offloader to "
                 "helper, colour%s = split m", run->id, run->name, run->seed,
           crowded ? "" : " and label");
    fputs("\nset grid\nset xlabel 'round'\nset ylabel 'agent'\n", body);
    plot_print_key_under(body, canvas, plot_key_rows(canvas->width, split_count + 2, 32), 0.07);
    if (x.hi - x.lo <= 40) fputs("set xtics 1\n", body);
    if (y.hi - y.lo <= 30) fputs("set ytics 1\n", body);
    fprintf(body, "set xrange [%.17g:%.17g]\nset yrange [%.17g:%.17g]\n", x.lo - 0.7, x.hi + 0.7,
            y.lo - 0.8, y.hi + 0.8);
    fputs("plot ", body);
    for (int j = 0; j < split_count; j++) {
        plot_quote_path(body, data_path);
        fprintf(body, " index %d using 1:2:3:4 with vectors head filled lw 1.5 lc rgb '%s' title ", j,
                plot_palette[j % PLOT_PALETTE_SIZE]);
        plot_labelf(plot, body, "offloader to helper, split m=%" PRId64 "%s", splits[j],
               j == split_count - 1 && overflow ? " (and the splits past it)" : "");
        fputs(", \\\n     ", body);
    }
    plot_quote_path(body, data_path);
    fprintf(body, " index %d using 1:2 with points pt 7 ps 1.1 lc rgb '#ee6677' title "
                  "'offloader (slow)', \\\n     ", split_count);
    plot_quote_path(body, data_path);
    fprintf(body, " index %d using 1:2 with points pt 7 ps 1.1 lc rgb '#228833' title 'helper (fast)'",
            split_count + 1);
    if (!crowded) {
        fputs(", \\\n     ", body);
        plot_quote_path(body, data_path);
        fprintf(body, " index %d using 1:2:(sprintf('m=%%d', int($3))) with labels left offset "
                      "char 0.7,0 font ',8' notitle", split_count + 2);
    }
    fputs("\n", body);
    goto done;
query_failed:
    status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
    goto done;
out_of_memory:
    status = plot_nomem(diag);
done:
    sqlite3_finalize(stmt);
    free(list);
    return status;
}

int plot_figure_predicted(Plot *plot, const char *data_path, FILE *data, FILE *body,
                          PlotCanvas *canvas, HsDiag *diag)
{
    const RunFacts *run = plot->comdml;
    if (run == NULL) {
        plot_note(plot, "%s", plot->comdml_missing);
        return PLOT_SKIP;
    }
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK, points = 0;
    PlotRange both = { 0 };
    plot_range_add(&both, 0);
    int rc = sqlite3_prepare_v2(plot->db, plot_comdml_pairings_sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) goto query_failed;
    sqlite3_bind_int64(stmt, 1, run->id);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (sqlite3_column_type(stmt, 4) == SQLITE_NULL || sqlite3_column_type(stmt, 5) == SQLITE_NULL)
            continue;
        double predicted = sqlite3_column_double(stmt, 4), actual = sqlite3_column_double(stmt, 5);
        if (!isfinite(predicted) || !isfinite(actual)) continue;
        fprintf(data, "%.17g %.17g\n", predicted, actual);
        plot_range_add(&both, predicted);
        plot_range_add(&both, actual);
        points++;
    }
    if (rc != SQLITE_DONE) goto query_failed;
    if (points == 0) {
        plot_note(plot, "run %" PRId64 " has no pairings with both times", run->id);
        status = PLOT_SKIP;
        goto done;
    }
    canvas->width = 800;
    canvas->height = 720;
    fputs("set title ", body);
    plot_labelf(plot, body, "ComDML predicted against played-out pair time: run %" PRId64 " (%s, seed %" PRIu64
                 ")", run->id, run->name, run->seed);
    fputs(" . \"\\n\" . ", body);
    plot_labelf(plot, body, "mean %.4g s predicted, %.4g s played out", run->predicted_s, run->actual_s);
    fputs("\nset grid\nset key top left\nset size ratio -1\n"
          "set xlabel 'predicted by the solver (s)'\n"
          "set ylabel 'played out: end of the pair''s work since the round start (s)'\n", body);
    plot_range_print(body, "x", both, 1);
    plot_range_print(body, "y", both, 1);
    fputs("plot ", body);
    plot_quote_path(body, data_path);
    fputs(" using 1:2 with points pt 7 ps 0.9 lc rgb '#4477aa' title 'pair, one per round', "
          "x with lines dt 2 lc rgb 'gray40' title 'y = x'\n", body);
    goto done;
query_failed:
    status = dbread_query_fail(plot->db, rc, plot->db_path, diag);
done:
    sqlite3_finalize(stmt);
    return status;
}
