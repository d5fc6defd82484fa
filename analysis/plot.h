/* plot.h — straggler-effect figures from a hetsim database (`hetsim plot`; its command
 * line is cli/cli_plot.c), drawn by gnuplot (analysis/gnuplot.h) as PNG (pngcairo), SVG
 * and PDF (pdfcairo). docs/figures.md shows every figure and the command that made it.
 *
 * Figures, each written as DIR/NAME.{png,svg,pdf} (and with --keep DIR/NAME.gp and
 * DIR/NAME.dat, from which `gnuplot DIR/NAME.gp` draws the same images again):
 *   time-to-target  time to the target accuracy against the heterogeneity level, one
 *                   line per method (train mode; runs that never reach it are left out
 *                   and counted in a note);
 *   straggler       round time (mean t_end - t_start) and idle share against the level;
 *   speedup         speedup over sync against the level;
 *   accuracy        test accuracy of the averaged model against virtual time, one panel
 *                   per level, one mean line per method;
 *   idle            per-agent idle share at the highest level: its distribution (CDF)
 *                   per method, seeds pooled;
 *   pairing         one ComDML run: per round and agent, whom it offloads to (and at
 *                   which split) or whom it helps;
 *   predicted       that run's predicted against played-out pair time, with y = x;
 *   timeline        a Gantt chart of one round of one run: per agent, when it computes,
 *                   sends and waits (from an `events` table where the database has one,
 *                   else inferred from agent_rounds; analysis/plot_timeline.c says how).
 * Every aggregate is the mean over seeds with a 95 % band (analysis/runset.h) where a
 * point has two or more seeds. x is always the true value (no sideways nudging); the
 * keys that vary besides the level and the method make small multiples (one panel per
 * value), and series or panels whose numbers agree within 1e-12 are drawn once with a
 * legend entry that names them all ("localsgd = qsr").
 *
 * A figure with nothing to say (no data, one heterogeneity level, one point per line,
 * one evaluation per run, one round of pairings, one pairing) is skipped with a note
 * on stderr saying why; that is not an error.
 *
 * Which runs: the aggregate figures use one group — the sweep given with --sweep, else
 * the group (sweep, or the runs outside any sweep) of --run, else that of the latest
 * run. The per-run figures use --run, else the latest run of the group with rounds
 * (timeline; its slowest round unless --rounds) and the latest run of the group with
 * pairings rows (pairing, predicted).
 *
 * Nothing is written to DIR until gnuplot has succeeded on a figure: files are drawn in
 * a private temporary folder and then moved into DIR (created, with parents, if
 * missing). The written paths are printed one per line on stdout. */
#ifndef ANALYSIS_PLOT_H
#define ANALYSIS_PLOT_H

#include "base/hs_error.h"

#include <stdint.h>
#include <stdio.h>

enum { PLOT_PNG = 1u << 0, PLOT_SVG = 1u << 1, PLOT_PDF = 1u << 2 };

typedef enum { PLOT_STYLE_SCREEN = 0, PLOT_STYLE_PAPER } PlotStyleKind;

/* How --size was given: inches (and cm, kept in inches) or PNG pixels. */
typedef enum { PLOT_SIZE_DEFAULT = 0, PLOT_SIZE_INCHES, PLOT_SIZE_PIXELS } PlotSizeUnit;

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
    unsigned formats;       /* PLOT_PNG | PLOT_SVG | PLOT_PDF; 0 means PNG and SVG */
    PlotStyleKind style;
    PlotSizeUnit size_unit; /* PLOT_SIZE_DEFAULT: the style's size for each figure */
    double width, height;   /* in size_unit */
    double font_size;       /* points; 0: the style's */
    int keep;               /* also write NAME.gp and NAME.dat */
    const char *gnuplot;    /* NULL: $HETSIM_GNUPLOT, else "gnuplot" on PATH */
} PlotOptions;

/* Writes every figure that has something to say; paths to out, notes and gnuplot's
 * warnings to err. Returns HS_OK (also when figures were skipped), or with "message" in
 * diag:
 *   HS_E_INPUT    the database is not a hetsim database, no such run or sweep;
 *   HS_E_MISSING  gnuplot is not installed (the message names the package);
 *   HS_E_IO       the database cannot be read, DIR cannot be made, gnuplot failed;
 *   HS_E_NOMEM    out of memory.
 * Figures written before a failure stay written (and were printed). */
int plot_write(const PlotOptions *options, FILE *out, FILE *err, HsDiag *diag);

#endif
