/* plot.h — straggler-effect figures from a hetsim database (`hetsim plot`; its command
 * line is cli/cli_plot.c), drawn by gnuplot (analysis/gnuplot.h) as PNG (pngcairo) and
 * SVG.
 *
 * Figures, each written as DIR/NAME.png and/or DIR/NAME.svg:
 *   straggler  round makespan (mean t_end - t_start) and idle share against the
 *              heterogeneity level, one line per series (method, plus the other keys
 *              that vary), mean and 95 % interval over seeds (analysis/runset.h);
 *   accuracy   test accuracy of the averaged model (metrics, agent NULL) against
 *              virtual time, one line per run, one colour per method;
 *   timeline   one run's per-agent accounts in selected rounds, stacked horizontal
 *              bars: compute (alone, offloader, helper incl. offloaded work),
 *              communication, idle, offline;
 *   pairing    one ComDML run's pairing map: per round an arrow from each offloader
 *              (slow) to its helper (fast), coloured by the split and labelled with it
 *              while no round has more than 12 pairs (the first
 *              PLOT_MAX_PAIRING_ROUNDS rounds with pairings);
 *   predicted  the same run's predicted against played-out pair time, with y = x;
 *   speedup    speedup over sync (analysis/runset.h) against the heterogeneity level.
 * A figure without data (timing-mode runs have no accuracy, no ComDML run, no sync
 * baseline, ...) is skipped with a note on stderr; that is not an error.
 *
 * Which runs: the aggregate figures (straggler, accuracy, speedup) use one group — the
 * sweep given with --sweep, else the group (sweep, or the runs outside any sweep) of
 * --run, else that of the latest run. The per-run figures use --run, else the latest
 * run of the group with rounds (timeline) and the latest run of the group with pairings rows
 * (pairing, predicted). Timeline rounds: --rounds FIRST[-LAST] (at most
 * PLOT_MAX_ROUNDS), else the first, the slowest (largest makespan) and the last round;
 * of more than PLOT_MAX_AGENTS agents the PLOT_MAX_AGENTS / 2 with the most and the
 * fewest compute seconds in those rounds are shown.
 *
 * Nothing is written to DIR until gnuplot has succeeded on a figure: files are drawn in
 * the private temporary folder and then moved into DIR (created, with parents, if
 * missing). The written paths are printed one per line on stdout. */
#ifndef ANALYSIS_PLOT_H
#define ANALYSIS_PLOT_H

#include "base/hs_error.h"

#include <stdint.h>
#include <stdio.h>

enum { PLOT_PNG = 1u << 0, PLOT_SVG = 1u << 1 };

#define PLOT_DEFAULT_DIR "plots"
#define PLOT_MAX_ROUNDS 12
#define PLOT_MAX_AGENTS 64
#define PLOT_MAX_PAIRING_ROUNDS 40

typedef struct PlotOptions {
    const char *db_path;
    const char *out_dir;    /* NULL: PLOT_DEFAULT_DIR */
    const char *sweep;      /* NULL: see above */
    int have_run;
    int64_t run_id;
    int have_rounds;
    int64_t first_round, last_round;
    unsigned formats;       /* PLOT_PNG | PLOT_SVG; 0 means both */
    const char *gnuplot;    /* NULL: $HETSIM_GNUPLOT, else "gnuplot" on PATH */
} PlotOptions;

/* Writes every figure that has data; paths to out, notes and gnuplot's warnings to err.
 * Returns HS_OK (also when figures were skipped), or with "message" in diag:
 *   HS_E_INPUT    the database is not a hetsim database, no such run or sweep;
 *   HS_E_MISSING  gnuplot is not installed (the message names the package);
 *   HS_E_IO       the database cannot be read, DIR cannot be made, gnuplot failed;
 *   HS_E_NOMEM    out of memory.
 * Figures written before a failure stay written (and were printed). */
int plot_write(const PlotOptions *options, FILE *out, FILE *err, HsDiag *diag);

#endif
