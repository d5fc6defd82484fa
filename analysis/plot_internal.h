/* plot_internal.h — what the files of `hetsim plot` share, and nothing outside them
 * includes: the Plot a figure is written through, the figure writers (one file per
 * family: plot_outcomes.c, plot_accuracy.c, plot_timeline.c, plot_comdml.c), and the
 * helpers they have in common (plot_common.c): ranges, quoting, notes, line styles,
 * legends. plot.c runs the figures (analysis/plot.h says what each draws).
 *
 * A figure writer gets the data file (numbers only, gnuplot's blank-line-separated
 * blocks) and a script body in memory. It runs once per format: plot->raster says
 * whether the body is for PNG (labels turn characters no font has into '?'),
 * plot->quiet whether an earlier pass has already said its notes; each pass writes the
 * same numbers. */
#ifndef ANALYSIS_PLOT_INTERNAL_H
#define ANALYSIS_PLOT_INTERNAL_H

#include "analysis/gnuplot.h"
#include "analysis/plot.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { PLOT_SKIP = 1 };  /* a figure without data: not an error */

typedef struct Plot {
    const PlotOptions *options;
    const char *db_path;
    const char *out_dir;
    unsigned formats;
    sqlite3 *db;
    RunSet *set;
    int group;
    const RunFacts *run;      /* timeline */
    const RunFacts *comdml;   /* pairing, predicted; NULL when there is none */
    char comdml_missing[256]; /* why there is none */
    Gnuplot gnuplot;
    FILE *out, *err;
    char note[512];           /* why a figure was skipped */
    const char **methods;     /* the group's methods, in point order (colours) */
    int method_count;
    int *variant;             /* (series_count) rank of each series' variant (dashes) */
    int raster;               /* the script body being written is for PNG */
    int quiet;                /* a later pass of the same figure: no notes */
    char title[512];          /* the group, for figure titles */
} Plot;

typedef struct PlotCanvas {
    int width, height;
} PlotCanvas;

/* A figure writer: writes the figure's numbers to data (data_path is its name for the
 * script), the script body to body, and sets the canvas size. Returns HS_OK, PLOT_SKIP
 * (with the reason set by plot_note), or an error in diag. */
typedef int PlotFigureWrite(Plot *plot, const char *data_path, FILE *data, FILE *body,
                            PlotCanvas *canvas, HsDiag *diag);

/* ---- the figures ---- */

PlotFigureWrite plot_figure_straggler;  /* plot_outcomes.c: makespan and idle share */
PlotFigureWrite plot_figure_speedup;    /* plot_outcomes.c: speedup over sync */
PlotFigureWrite plot_figure_accuracy;   /* plot_accuracy.c: accuracy against virtual time */
PlotFigureWrite plot_figure_timeline;   /* plot_timeline.c: plot->run's per-agent accounts */
PlotFigureWrite plot_figure_pairing;    /* plot_comdml.c: plot->comdml's pairing map */
PlotFigureWrite plot_figure_predicted;  /* plot_comdml.c: its predicted and played-out times */

/* ---- ranges ---- */

typedef struct PlotRange {
    double lo, hi;
    int any;
} PlotRange;

/* Widens range to value; NaN and infinities are left out. */
void plot_range_add(PlotRange *range, double value);

/* `set Xrange [lo:hi]` with 5 % room, never empty; from_zero starts at 0 when all
 * values are positive. */
void plot_range_print(FILE *body, const char *axis, PlotRange range, int from_zero);

/* ---- text, notes, errors ---- */

/* A path (data file, image) as a gnuplot string: byte for byte. */
void plot_quote_path(FILE *body, const char *path);

/* A text that gets drawn: for the raster pass, characters no font has become '?'. */
void plot_label(const Plot *plot, FILE *body, const char *text);

/* plot_label of a printf-formatted text (cut at 1023 bytes). */
void plot_labelf(const Plot *plot, FILE *body, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A note on stderr, once per figure (the writers run once per format). */
void plot_inform(const Plot *plot, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Why the figure is skipped (into plot->note; plot.c prints it). */
void plot_note(Plot *plot, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* HS_E_NOMEM with "out of memory" in diag. */
int plot_nomem(HsDiag *diag);

/* Display width of text in code points. */
int plot_text_columns(const char *text);

/* Room for element `count` of *array (*capacity elements of size bytes, doubled; `first`
 * when there are none yet); -1 when out of memory (*array is kept). */
int plot_grow(void **array, int count, int *capacity, int first, size_t size);

/* ---- queries ---- */

/* Prepares sql with ?1 bound to run_id into *stmt; the query error in diag (and *stmt
 * NULL) on failure. */
int plot_query_run(const Plot *plot, const char *sql, int64_t run_id, sqlite3_stmt **stmt,
                   HsDiag *diag);

/* A failed step: the query error in diag (taken before stmt is finalized), then
 * finalizes stmt. */
int plot_query_failed(const Plot *plot, sqlite3_stmt *stmt, int rc, HsDiag *diag);

/* Out of memory while stepping: finalizes stmt, HS_E_NOMEM in diag. */
int plot_query_nomem(sqlite3_stmt *stmt, HsDiag *diag);

/* ---- axes, sorting, intervals ---- */

/* The heterogeneity axis of the group: label, tics for index levels, range. */
void plot_print_level_axis(const Plot *plot, FILE *body, const RunGroup *group, PlotRange levels);

/* Sorts idx[0..n) by key[idx] (insertion sort: a series has a handful of levels). */
void plot_sort_by(int *idx, int n, const double *key);

/* The ends of a mean's 95 % interval; the mean itself when there is none. */
double plot_low_of(RunStat s);
double plot_high_of(RunStat s);

/* Shifts series k of n sideways by a little of the x span, so error bars at one level
 * stay apart. */
double plot_dodge(PlotRange x, int k, int n);

/* qsort/bsearch order of int64_t. */
int plot_compare_int64(const void *a, const void *b);

/* ---- line styles: one colour per method, one dash and point per variant ---- */

enum { PLOT_PALETTE_SIZE = 8 };
extern const char *const plot_palette[PLOT_PALETTE_SIZE];

/* Ranks, once per plot, the group's methods (in point order, so a method keeps its
 * colour in every figure) and its series' variants. HS_E_NOMEM or HS_OK. */
int plot_index_styles(Plot *plot);

/* `lc rgb '#...'`: the method's colour. */
void plot_print_method_colour(FILE *body, const Plot *plot, const char *method);

/* The method's colour, and the dash and point type of the series' variant. */
void plot_print_series_style(FILE *body, const Plot *plot, int series);

/* ---- legends ---- */

/* Rows a legend of `entries` entries, the longest `longest` characters, needs under a
 * plot canvas_width pixels wide (about 7 px a character and 70 px of sample). */
int plot_key_rows(int canvas_width, int entries, int longest);

/* The legend in columns of `rows` entries under the plot area, which keeps a fixed size
 * (gnuplot's own `key below` misjudges long entries). Call once the canvas is final. */
void plot_print_key_under(FILE *body, const PlotCanvas *canvas, int rows, double left);

#endif
