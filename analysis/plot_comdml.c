/* plot_comdml.c — the figures of one ComDML run, from its pairings rows: the pairing
 * chart (a cell per round and agent: the offloader's cell coloured by its split and
 * labelled with its helper, the helper's cell labelled with its offloader) and the
 * solver's predicted against the played-out pair time, with y = x.
 *
 * Skipped when there is nothing to compare: pairings in one round only (pairing), fewer
 * than two pairs, one distinct (predicted, actual) pair, or every pair played out
 * exactly as predicted (predicted: every dot on y = x says it in one sentence). */
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

/* ---- pairing chart ---- */

typedef struct Pair {
    int64_t round, slow, fast, split;
} Pair;

/* The pairs of the first PLOT_MAX_PAIRING_ROUNDS rounds with pairings into *list
 * (malloc'd, *count of them), *rounds how many rounds; PLOT_SKIP when there are none. */
static int plot_comdml_load_pairs(Plot *plot, Pair **list, int *count, int *rounds, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL;
    int rc, status = plot_comdml_pairings(plot, &stmt, diag);
    if (status != HS_OK) return status;
    int pairs = 0, more = 0, capacity = 0;
    int64_t last_round = 0;
    *rounds = 0;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t round = sqlite3_column_int64(stmt, 0);
        if (pairs == 0 || round != last_round) {
            if (*rounds == PLOT_MAX_PAIRING_ROUNDS) {
                more = 1;
                break;
            }
            (*rounds)++;
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
    if (*rounds < 2) {
        plot_note(plot, "run %" PRId64 " (%s) paired agents in one round only: nothing to compare "
                        "across rounds", plot->comdml->id, plot->comdml->name);
        return PLOT_SKIP;
    }
    if (more)
        plot_inform(plot, "pairing chart shows the first %d rounds with pairings of run %" PRId64 "\n",
                    PLOT_MAX_PAIRING_ROUNDS, plot->comdml->id);
    return HS_OK;
}

/* The splits in use, ascending, into splits (at most PLOT_PALETTE_SIZE - 1: *overflow
 * says whether there were more; they share the last colour); returns how many. */
static int plot_comdml_splits(const Pair *list, int pairs, int64_t *splits, int *overflow)
{
    int split_count = 0;
    *overflow = 0;
    for (int k = 0; k < pairs; k++) {
        int known = 0;
        for (int j = 0; j < split_count && !known; j++) known = splits[j] == list[k].split;
        if (!known && split_count < PLOT_PALETTE_SIZE - 1) splits[split_count++] = list[k].split;
        else if (!known) *overflow = 1;
    }
    qsort(splits, (size_t)split_count, sizeof *splits, plot_compare_int64);
    return split_count;
}

/* The agents of the run: the highest agent index + 1 (agents rows, else the pairs). */
static int64_t plot_comdml_agents(Plot *plot, const Pair *list, int pairs)
{
    int64_t agents = 0;
    sqlite3_stmt *stmt = NULL;
    HsDiag ignored;
    if (plot_query_run(plot, "SELECT max(agent) + 1 FROM agents WHERE run_id = ?1", plot->comdml->id,
                       &stmt, &ignored) == HS_OK) {
        if (sqlite3_step(stmt) == SQLITE_ROW) agents = sqlite3_column_int64(stmt, 0);
        sqlite3_finalize(stmt);
    }
    for (int k = 0; k < pairs; k++) {
        if (list[k].slow + 1 > agents) agents = list[k].slow + 1;
        if (list[k].fast + 1 > agents) agents = list[k].fast + 1;
    }
    return agents;
}

int plot_figure_pairing(Plot *plot, const char *data_name, FILE *data, FILE *body,
                        PlotCanvas *canvas, HsDiag *diag)
{
    const RunFacts *run = plot->comdml;
    Pair *list = NULL;
    int pairs = 0, rounds = 0;
    int status = plot_comdml_load_pairs(plot, &list, &pairs, &rounds, diag);
    if (status != HS_OK) {
        free(list);
        return status;
    }
    int64_t splits[PLOT_PALETTE_SIZE];
    int overflow;
    int split_count = plot_comdml_splits(list, pairs, splits, &overflow);
    int64_t agents = plot_comdml_agents(plot, list, pairs);
    /* blocks: the offloaders of each split, then the helpers; `round agent partner split` */
    for (int block = 0; block <= split_count; block++) {
        if (block < split_count)
            plot_data_comment(data, "block %d: offloaders at split %" PRId64 "%s", block, splits[block],
                              block == split_count - 1 && overflow ? " and higher" : "");
        else
            plot_data_comment(data, "block %d: helpers", block);
        plot_data_comment(data, "round agent partner split");
        for (int k = 0; k < pairs; k++) {
            const Pair *pair = &list[k];
            int colour = split_count - 1;
            for (int j = 0; j < split_count; j++)
                if (splits[j] == pair->split) colour = j;
            if (block < split_count && colour == block)
                fprintf(data, "%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n", pair->round, pair->slow,
                        pair->fast, pair->split);
            else if (block == split_count)
                fprintf(data, "%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n", pair->round, pair->fast,
                        pair->slow, pair->split);
        }
        fputs("\n\n", data);
    }
    int64_t first_round = list[0].round, last_round = list[pairs - 1].round;
    free(list);
    int span = (int)(last_round - first_round + 1);
    int labelled = span <= 24 && agents <= 32;
    PlotLayout layout = { .rows = 1, .cols = 1, .title_lines = 2,
                          .legend_entries = split_count + 1, .legend_longest = 30 };
    plot_layout_size(plot, &layout, canvas);
    if (plot->options->size_unit == PLOT_SIZE_DEFAULT) {
        /* a row per agent: the canvas grows with the agents */
        double rows = 1.9 * plot->style.font * (double)agents + 9 * plot->style.font +
                      1.4 * plot->style.font * layout.legend_rows;
        if (rows > canvas->height) canvas->height = rows;
    }
    char title[700];
    snprintf(title, sizeof title, "ComDML pairings: %s, seed %" PRIu64 "\n"
                                  "colour: the offloader's split%s", run->name, run->seed,
             labelled ? "; label: its partner (→ helper, ← offloader)" : "");
    plot_layout_begin(plot, body, &layout, canvas, title);
    fputs("set style fill solid 0.85 noborder\nunset grid\n"
          "set xlabel 'round'\nset ylabel 'agent'\n", body);
    fprintf(body, "set xrange [%.17g:%.17g]\nset yrange [%.17g:%.17g]\n",  /* agent 0 on top */
            (double)first_round - 0.5, (double)last_round + 0.5, (double)agents - 0.5, -0.5);
    if (span <= 30) fputs("set xtics 1\n", body);
    if (agents <= 32) fputs("set ytics 1\n", body);
    plot_layout_key(plot, body, &layout, canvas);
    fputs("plot ", body);
    for (int j = 0; j < split_count; j++) {
        fprintf(body, "keyentry with boxes fc rgb '%s' title ", plot_palette[j]);
        plot_labelf(plot, body, "offloads at split m = %" PRId64 "%s", splits[j],
                    j == split_count - 1 && overflow ? " or higher" : "");
        fputs(", \\\n     ", body);
    }
    fputs("keyentry with boxes fc rgb '#bbbbbb' title 'helps', \\\n     ", body);
    for (int block = 0; block <= split_count; block++) {
        if (block > 0) fputs(", \\\n     ", body);
        plot_quote_path(body, data_name);
        fprintf(body, " index %d using 1:2:(0.46):(0.42) with boxxyerror fc rgb '%s' notitle", block,
                block < split_count ? plot_palette[block] : "#bbbbbb");
        if (labelled) {
            fputs(", \\\n     ", body);
            plot_quote_path(body, data_name);
            fprintf(body, " index %d using 1:2:(sprintf(", block);
            plot_label(plot, body, block < split_count ? "→%d" : "←%d");
            fputs(", int($3))) with labels notitle", body);
        }
    }
    fputs("\nunset multiplot\n", body);
    return HS_OK;
}

/* ---- predicted against played-out time ---- */

int plot_figure_predicted(Plot *plot, const char *data_name, FILE *data, FILE *body,
                          PlotCanvas *canvas, HsDiag *diag)
{
    const RunFacts *run = plot->comdml;
    sqlite3_stmt *stmt = NULL;
    int rc, status = plot_comdml_pairings(plot, &stmt, diag);
    if (status != HS_OK) return status;
    int points = 0, distinct = 0;
    double first_predicted = NAN, first_actual = NAN, worst = 0;
    PlotRange both = { 0 };
    plot_data_comment(data, "block 0: pairs of run %" PRId64 " (%s)", run->id, run->name);
    plot_data_comment(data, "predicted_s actual_s round");
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (sqlite3_column_type(stmt, 4) == SQLITE_NULL || sqlite3_column_type(stmt, 5) == SQLITE_NULL)
            continue;
        double predicted = sqlite3_column_double(stmt, 4), actual = sqlite3_column_double(stmt, 5);
        if (!isfinite(predicted) || !isfinite(actual)) continue;
        fprintf(data, "%.17g %.17g %" PRId64 "\n", predicted, actual, (int64_t)sqlite3_column_int64(stmt, 0));
        plot_range_add(&both, predicted);
        plot_range_add(&both, actual);
        if (points++ == 0) {
            first_predicted = predicted;
            first_actual = actual;
        } else if (!plot_same(predicted, first_predicted) || !plot_same(actual, first_actual)) {
            distinct = 1;
        }
        if (predicted > 0 && fabs(actual - predicted) / predicted > worst)
            worst = fabs(actual - predicted) / predicted;
    }
    if (rc != SQLITE_DONE) return plot_query_failed(plot, stmt, rc, diag);
    sqlite3_finalize(stmt);
    if (points < 2) {
        plot_note(plot, "run %" PRId64 " has %s pairing with both times: one dot says nothing", run->id,
                  points == 0 ? "no" : "one");
        return PLOT_SKIP;
    }
    if (!distinct) {
        plot_note(plot, "every pair of run %" PRId64 " has the same predicted and played-out time "
                        "(%.4g s, %.4g s): one dot says nothing", run->id, first_predicted, first_actual);
        return PLOT_SKIP;
    }
    if (worst <= 1e-9) {
        plot_note(plot, "every pair of run %" PRId64 " played out as the solver predicted (largest "
                        "error %.2g %%): every dot would sit on y = x", run->id, 100 * worst);
        return PLOT_SKIP;
    }
    PlotLayout layout = { .rows = 1, .cols = 1, .title_lines = 2, .legend_entries = 2,
                          .legend_longest = 22 };
    plot_layout_size(plot, &layout, canvas);
    plot_layout_square(plot, &layout, canvas);
    char title[700];
    snprintf(title, sizeof title, "ComDML predicted against played-out pair time: %s, seed %" PRIu64
                                  "\nmean %.4g s predicted, %.4g s played out; largest error %.1f %%",
             run->name, run->seed, run->predicted_s, run->actual_s, 100 * worst);
    plot_layout_begin(plot, body, &layout, canvas, title);
    fputs("set xlabel 'predicted by the solver (s)'\n"
          "set ylabel 'played out (s)'\n", body);
    /* both axes over the data only: y = x is the diagonal of the square */
    plot_range_print(body, "x", both, 0);
    plot_range_print(body, "y", both, 0);
    plot_layout_key(plot, body, &layout, canvas);
    PlotMethodLook look = plot_method_look(plot, run->method);
    fprintf(body, "plot keyentry with points pt %d ps %g lc rgb '%s' title 'one pair in one round', \\\n"
                  "     keyentry with lines dt 2 lw 1.5 lc rgb 'gray40' title 'y = x (as predicted)', \\\n"
                  "     x with lines dt 2 lw 1.5 lc rgb 'gray40' notitle, \\\n     ",
            look.point, plot->style.point_size, look.colour);
    plot_quote_path(body, data_name);
    fprintf(body, " using 1:2 with points pt %d ps %g lc rgb '%s' notitle\nunset multiplot\n", look.point,
            plot->style.point_size, look.colour);
    return HS_OK;
}
