/* report.h — tables and CSV from a hetsim database (`hetsim report`; its command line is
 * cli/cli_report.c).
 *
 * Reports open the database read-only (analysis/dbread.h): they never change a file,
 * and they can run while a sweep is still writing to it. Everything is read and
 * formatted before the first byte is printed, so a failing report prints nothing on
 * stdout. A report may leave empty -wal/-shm files next to the database: a read-only
 * reader cannot delete them, and the next writer reuses them. Every derived figure is
 * defined once, in analysis/runset.h (idle share, time to target, points, heterogeneity
 * level, interval, speedup); the tables below print them.
 *
 * Runs table (one row per run, ordered by id; CSV name, then what it holds):
 *   id, name, method, seed (as uint64), status, rounds, sim_time_s (virtual time),
 *   idle_share, bytes, final_accuracy,
 *   target_accuracy   [run] target_accuracy of the run's config (empty when none or 0),
 *   time_to_target_s  virtual time at which the averaged model first reached it,
 *   predicted_round_s, actual_round_s, offload_share   ComDML runs: mean predicted and
 *                     played-out time of a pair (pairings) and the share of agent-rounds
 *                     in the offloader role,
 *   sweep, point      runs.sweep and the point label without the seed.
 * Points table (one row per sweep point; runs outside a sweep make points too), ordered
 * by scenario then method (runset_point_order: every method of one scenario side by
 * side, scenarios and methods in the order they first appear, i.e. a sweep's order):
 *   method, level (heterogeneity level), seeds (done runs aggregated), not_done (runs of
 *   the point that are not done), then FIGURE_mean and FIGURE_ci95 (half-width of the
 *   95 % interval) for sim_time_s, time_to_target_s (only when every seed reached the
 *   target; `reached` counts those that did), final_accuracy, idle_share, makespan_s
 *   (mean round makespan t_end - t_start), bytes; predicted_round_s_mean,
 *   actual_round_s_mean, offload_share_mean for ComDML; level_axis (what the level
 *   measures), sweep, point (label without the seed).
 * Speedup table (one row per non-sync point with a sync baseline, in the points' order):
 *   method, level, pairs (seeds compared), basis (time to target | total virtual time |
 *   mixed), speedup_mean, speedup_ci95 (t_sync / t_method, > 1 is faster than sync),
 *   time_s_mean, sync_time_s_mean, sweep, scenario (point label without run.method and
 *   the seed).
 * Per-round (--run ID): run_id, round, t_start, t_end, makespan = t_end - t_start,
 *   idle_s, bytes, extra (rounds.extra: the method's figure; the text table titles it
 *   "extra (MEANING)" with what it means in the run, and leaves it out when it is NULL
 *   in every round).
 *
 * Text output aligns columns (width counted in UTF-8 code points; double-width
 * characters are not measured), rounds numbers for reading, shows a missing value as
 * '-', and leaves out the optional columns (target, time to target, ComDML figures,
 * sweep, point, ...) that are missing in every row. CSV output (REPORT_CSV) has every
 * column, one header line, '\n' line ends, numbers unrounded (%.17g, integers exact),
 * missing values empty, and text quoted as RFC 4180 asks when it holds a quote, comma,
 * CR or LF, or starts or ends with a space. CSV holds one table per stream: the runs
 * table unless another is asked for; with --run only the per-round rows, with a run_id
 * column first.
 *
 * JSON output (REPORT_JSON) is one object: "database" (the path as given), then each
 * table as an array of objects keyed by the CSV names — "runs", "points", "speedup"
 * (every one, even when the text would leave it out; --table keeps one), or with --run
 * "runs" (that run), "rounds" and "extra_meaning" (what rounds.extra means in the run, a
 * string, or null when no meaning is known). Numbers are JSON numbers in the shortest text that
 * reads back to the same double (the seed as its unsigned 64-bit value), a missing
 * value is null, and every column is present in every object. */
#ifndef ANALYSIS_REPORT_H
#define ANALYSIS_REPORT_H

#include "base/hs_error.h"

#include <stdint.h>
#include <stdio.h>

enum {
    REPORT_CSV = 1u << 0,    /* CSV instead of an aligned table */
    REPORT_ROUNDS = 1u << 1, /* report_print_run: the per-round table after the summary */
    REPORT_JSON = 1u << 2,   /* one JSON object instead of tables (below) */
    REPORT_ROUNDS_ONLY = 1u << 3, /* with REPORT_ROUNDS: the per-round table alone */
};

typedef enum {
    REPORT_TABLE_ALL = 0,    /* text: runs, then points and speedup when they say more;
                                CSV: runs */
    REPORT_TABLE_RUNS,
    REPORT_TABLE_POINTS,
    REPORT_TABLE_SPEEDUP,
} ReportTable;

/* What rounds.extra means in a run, for the per-round table: analysis knows no method,
 * so the caller answers (cli/ asks the method registry, sim/scenario/method_ops.h's
 * method_extra_meaning) from the run's method (runs.method) and its resolved [method]
 * keys, which param reads from run_params (NULL: the run has no such row). Returns a
 * string that outlives the call, or NULL when none is known: the column is then titled
 * "extra". */
typedef const char *(*ReportExtraMeaning)(const char *method, const char *(*param)(void *ctx, const char *key),
                                          void *ctx);

/* Prints the summary of every run in the database at db_path to out, as a table or as
 * CSV (flags & REPORT_CSV). Returns 0, or HS_E_IO / HS_E_INPUT / HS_E_NOMEM with
 * "PATH: message" in diag; nothing is printed on failure. */
int report_print_runs(const char *db_path, unsigned flags, FILE *out, HsDiag *diag);

/* Prints table (REPORT_TABLE_ALL: as `hetsim report` does) of the runs of sweep (NULL: every
 * run). HS_E_INPUT when sweep names no run; otherwise as report_print_runs. */
int report_print_tables(const char *db_path, const char *sweep, ReportTable table,
                        unsigned flags, FILE *out, HsDiag *diag);

/* Prints the summary row of one run; with REPORT_ROUNDS also its per-round table (as
 * CSV: only the per-round rows), its extra column titled from meaning (NULL: "extra").
 * cli/cli_run.c calls it after run_end with flags 0 to show
 * the result of a run: run_end has committed every row, and this opens its own
 * read-only connection, so it works while the writer's Store is still open.
 * Returns HS_E_INPUT when there is no such run; otherwise as report_print_runs. */
int report_print_run(const char *db_path, int64_t run_id, unsigned flags, ReportExtraMeaning meaning, FILE *out,
                     HsDiag *diag);

/* The per-round table of one run alone, as text (`hetsim show`, analysis/show.h). */
int report_print_rounds(const char *db_path, int64_t run_id, ReportExtraMeaning meaning, FILE *out, HsDiag *diag);

#endif
