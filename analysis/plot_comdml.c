/* plot_comdml.c — the figures of one ComDML run, from its pairings rows: the pairing
 * map (per round an arrow from each offloader to its helper, coloured by the split) and
 * the solver's predicted against the played-out pair time, with y = x. */
#include "analysis/plot_internal.h"

#include "analysis/runset.h"
#include "base/hs_error.h"

#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The ComDML run's pairings rows with both agents, ready to step, into *stmt; PLOT_SKIP
 * (with the note) when the group has no ComDML run. */
static int plot_comdml_pairings(Plot *plot, sqlite3_stmt **stmt, HsDiag *diag)
{
    static const char sql[] =
        "SELECT round, slow, fast, split, predicted_s, actual_s FROM pairings WHERE run_id = ?1"
        " AND slow IS NOT NULL AND fast IS NOT NULL ORDER BY round, slow, rowid";
    if (plot->comdml == NULL) {
        plot_note(plot, "%s", plot->comdml_missing);
        return PLOT_SKIP;
    }
    return plot_query_run(plot, sql, plot->comdml->id, stmt, diag);
}

/* ---- pairing map ---- */

typedef struct Pair {
    int64_t round, slow, fast, split;
} Pair;

/* The pairs of the first PLOT_MAX_PAIRING_ROUNDS rounds with pairings, by round and slow
 * agent, into *list (malloc'd, *count of them); PLOT_SKIP when there are none. */
static int plot_comdml_load_pairs(Plot *plot, Pair **list, int *count, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    int rc, status = plot_comdml_pairings(plot, &stmt, diag);
    if (status != HS_OK) return status;
    int rounds = 0, pairs = 0, more = 0, capacity = 0;
    int64_t last_round = 0;
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
        if (plot_grow((void **)list, pairs, &capacity, 64, sizeof **list) != 0)
            return plot_query_nomem(stmt, diag);
        (*list)[pairs++] = (Pair){ round, sqlite3_column_int64(stmt, 1), sqlite3_column_int64(stmt, 2),
                                   sqlite3_column_int64(stmt, 3) };
    }
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return plot_query_failed(plot, stmt, rc, diag);
    sqlite3_finalize(stmt);
    *count = pairs;
    if (pairs == 0) {
        plot_note(plot, "run %" PRId64 " has no pairings with agents", plot->comdml->id);
        return PLOT_SKIP;
    }
    if (more)
        plot_inform(plot, "pairing map shows the first %d rounds of run %" PRId64 "\n",
                    PLOT_MAX_PAIRING_ROUNDS, plot->comdml->id);
    return HS_OK;
}

/* The splits in use, ascending, into splits (at most PLOT_PALETTE_SIZE: *overflow says
 * whether there were more); returns how many. */
static int plot_comdml_splits(const Pair *list, int pairs, int64_t *splits, int *overflow)
{
    int split_count = 0;
    *overflow = 0;
    for (int k = 0; k < pairs; k++) {
        int known = 0;
        for (int j = 0; j < split_count && !known; j++) known = splits[j] == list[k].split;
        if (!known && split_count < PLOT_PALETTE_SIZE) splits[split_count++] = list[k].split;
        else if (!known) *overflow = 1;
    }
    qsort(splits, (size_t)split_count, sizeof *splits, plot_compare_int64);
    return split_count;
}

/* Whether some round has more than a dozen pairs (too many to label). */
static int plot_comdml_crowded(const Pair *list, int pairs)
{
    int crowded = 0;
    for (int start = 0; start < pairs;) {
        int end = start;
        while (end < pairs && list[end].round == list[start].round) end++;
        if (end - start > 12) crowded = 1;
        start = end;
    }
    return crowded;
}

/* The blocks: arrows (x, y, 0, dy, split) of each split, offloaders, helpers, then the
 * labels (x, y, split) unless crowded. Pairs of a round are spread around the round's x
 * so their arrows do not overlap; x and y get the extent. */
static void plot_comdml_write_pairs(FILE *data, const Pair *list, int pairs, const int64_t *splits,
                                    int split_count, int crowded, PlotRange *x, PlotRange *y)
{
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
                int colour = split_count - 1;  /* splits past the palette share the last colour */
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
                plot_range_add(x, px);
                plot_range_add(y, (double)pair->slow);
                plot_range_add(y, (double)pair->fast);
            }
            start = end;
        }
        fputs("\n\n", data);
    }
}

int plot_figure_pairing(Plot *plot, const char *data_path, FILE *data, FILE *body,
                        PlotCanvas *canvas, HsDiag *diag)
{
    const RunFacts *run = plot->comdml;
    Pair *list = NULL;
    int pairs = 0;
    int status = plot_comdml_load_pairs(plot, &list, &pairs, diag);
    if (status != HS_OK) {
        free(list);
        return status;
    }
    int64_t splits[PLOT_PALETTE_SIZE];
    int overflow;
    int split_count = plot_comdml_splits(list, pairs, splits, &overflow);
    int crowded = plot_comdml_crowded(list, pairs);
    PlotRange x = { 0 }, y = { 0 };
    plot_comdml_write_pairs(data, list, pairs, splits, split_count, crowded, &x, &y);
    free(list);
    canvas->width = 1100;
    canvas->height = 650;
    fputs("set title ", body);
    plot_labelf(plot, body, "ComDML pairing map: run %" PRId64 " (%s, seed %" PRIu64 "): arrow = "
                            "offloader to helper, colour%s = split m", run->id, run->name, run->seed,
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
    return HS_OK;
}

/* ---- predicted against played-out time ---- */

int plot_figure_predicted(Plot *plot, const char *data_path, FILE *data, FILE *body,
                          PlotCanvas *canvas, HsDiag *diag)
{
    const RunFacts *run = plot->comdml;
    sqlite3_stmt *stmt = NULL;
    int rc, status = plot_comdml_pairings(plot, &stmt, diag);
    if (status != HS_OK) return status;
    int points = 0;
    PlotRange both = { 0 };
    plot_range_add(&both, 0);
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
    if (rc != SQLITE_DONE) return plot_query_failed(plot, stmt, rc, diag);
    sqlite3_finalize(stmt);
    if (points == 0) {
        plot_note(plot, "run %" PRId64 " has no pairings with both times", run->id);
        return PLOT_SKIP;
    }
    canvas->width = 800;
    canvas->height = 720;
    fputs("set title ", body);
    plot_labelf(plot, body, "ComDML predicted against played-out pair time: run %" PRId64
                            " (%s, seed %" PRIu64 ")", run->id, run->name, run->seed);
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
    return HS_OK;
}
