/* plot_internal.h — what the files of `hetsim plot` share, and nothing outside them
 * includes: the Plot a figure is written through, the figure writers (one file per
 * family), and the helpers they have in common:
 *   plot_common.c  ranges, quoting, notes, queries, sorting, equality within 1e-12;
 *   plot_style.c   the styles (screen, paper), one colour and marker per method, the
 *                  canvas and the multiplot grid, legends, the heterogeneity axis in words;
 *   plot_levels.c  the level table (facet x method x level) the level figures share,
 *                  with identical series and panels merged.
 * plot.c runs the figures (analysis/plot.h says what each draws).
 *
 * A figure writer gets the data file (numbers, gnuplot's blank-line-separated blocks,
 * and `#` comment lines that say what each block is) and a script body in memory. It
 * runs once per format: plot->raster says whether the body is for a cairo terminal
 * (PNG, PDF: labels turn characters no font has into '?'), plot->quiet whether an
 * earlier pass has already said its notes; each pass writes the same numbers. Scripts
 * name their data file without a folder: gnuplot runs in the data's folder. */
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

enum { PLOT_SKIP = 1 };  /* a figure with nothing to say: not an error */

/* What a style fixes; sizes in points (1/72 in). */
typedef struct PlotStyle {
    double font;            /* font size */
    double dpi;             /* PNG pixels per inch */
    double line_width;      /* gnuplot lw of data lines */
    double point_size;      /* gnuplot ps of markers */
    int titles;             /* figure titles (paper: none, the caption says it) */
    double width_one;       /* default width of a one-column figure */
    double width_multi;     /* ... of small multiples */
    double panel_height;    /* default height of one panel */
    int max_columns;        /* panels side by side at most */
} PlotStyle;

/* One method's look, the same in every figure of a database. */
typedef struct PlotMethodLook {
    const char *method;     /* borrowed from the RunSet */
    const char *colour;     /* "#rrggbb" */
    int point;              /* gnuplot point type */
} PlotMethodLook;

typedef struct Plot {
    const PlotOptions *options;
    const char *db_path;
    const char *out_dir;
    unsigned formats;
    PlotStyle style;
    sqlite3 *db;
    RunSet *set;
    int group;
    const RunFacts *run;      /* timeline */
    const RunFacts *comdml;   /* pairing, predicted; NULL when there is none */
    char comdml_missing[256]; /* why there is none */
    Gnuplot gnuplot;
    FILE *out, *err;
    char note[512];           /* why a figure was skipped */
    PlotMethodLook *looks;    /* (look_count) every method of the database */
    int look_count;
    int raster;               /* the script body being written is for a cairo terminal */
    int quiet;                /* a later pass of the same figure: no notes */
    char title[512];          /* the group in words (run names, never a sweep id) */
} Plot;

/* The size of a figure in points; writers set it through plot_layout_size. */
typedef struct PlotCanvas {
    double width, height;
} PlotCanvas;

/* A figure writer: writes the figure's numbers to data (data_name is its name for the
 * script), the script body to body, and sets the canvas size. Returns HS_OK, PLOT_SKIP
 * (with the reason set by plot_note), or an error in diag. */
typedef int PlotFigureWrite(Plot *plot, const char *data_name, FILE *data, FILE *body,
                            PlotCanvas *canvas, HsDiag *diag);

/* ---- the figures ---- */

PlotFigureWrite plot_figure_time_to_target; /* plot_outcomes.c */
PlotFigureWrite plot_figure_straggler;      /* plot_outcomes.c: round time and idle share */
PlotFigureWrite plot_figure_speedup;        /* plot_outcomes.c: speedup over sync */
PlotFigureWrite plot_figure_accuracy;       /* plot_accuracy.c: accuracy against virtual time */
PlotFigureWrite plot_figure_idle;           /* plot_idle.c: per-agent idle share CDF */
PlotFigureWrite plot_figure_pairing;        /* plot_comdml.c: plot->comdml's pairings */
PlotFigureWrite plot_figure_predicted;      /* plot_comdml.c: its predicted and played-out times */
PlotFigureWrite plot_figure_timeline;       /* plot_timeline.c: a Gantt chart of plot->run */

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

/* A text that gets drawn: for the cairo passes, characters no font has become '?'. */
void plot_label(const Plot *plot, FILE *body, const char *text);

/* plot_label of a printf-formatted text (cut at 1023 bytes). */
void plot_labelf(const Plot *plot, FILE *body, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A `#` comment line in a data file: the text with control characters as spaces. */
void plot_data_comment(FILE *data, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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

/* Whether two figures are the same within 1e-12 (relative to the larger, at least 1);
 * two NaNs are the same, a NaN and a number are not. */
int plot_same(double a, double b);

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

/* ---- sorting, intervals ---- */

/* Sorts idx[0..n) by key[idx] (insertion sort: a series has a handful of levels). */
void plot_sort_by(int *idx, int n, const double *key);

/* The ends of a mean's 95 % interval; the mean itself when there is none. */
double plot_low_of(RunStat s);
double plot_high_of(RunStat s);

/* value within [floor, ceiling] (a NaN bound is open). */
double plot_clip(double value, double floor, double ceiling);

/* qsort/bsearch order of int64_t, and of double. */
int plot_compare_int64(const void *a, const void *b);
int plot_compare_double(const void *a, const void *b);

/* ---- styles and looks (plot_style.c) ---- */

/* The style of options (its kind, --font-size). */
void plot_style_init(PlotStyle *style, const PlotOptions *options);

/* One colour and marker per method of the whole database (known methods always get the
 * same look; others the free ones, by name). HS_OK or HS_E_NOMEM. */
int plot_index_looks(Plot *plot);

/* The look of method (a grey circle for one the database does not hold). */
PlotMethodLook plot_method_look(const Plot *plot, const char *method);

/* `lc rgb '#...' pt N lw W ps S` of method's line. */
void plot_print_method_style(FILE *body, const Plot *plot, const char *method);

/* A fixed qualitative palette for categories that are not methods (splits, roles). */
enum { PLOT_PALETTE_SIZE = 8 };
extern const char *const plot_palette[PLOT_PALETTE_SIZE];

/* ---- the canvas, the grid of panels, the legend (plot_style.c) ---- */

typedef struct PlotLayout {
    int rows, cols;          /* the grid of panels */
    int panel_titles;        /* whether panels carry a title line */
    int title_lines;         /* lines of the figure title (0 in the paper style) */
    int legend_entries;      /* 0: no legend */
    int legend_longest;      /* columns of the longest entry */
    int legend_rows;         /* set by plot_layout_size */
    double left_extra;       /* points added to the left margin (long y tic labels) */
} PlotLayout;

/* Rows and columns for `panels` panels in the style. */
void plot_layout_grid(const Plot *plot, PlotLayout *layout, int panels);

/* The canvas for the layout (--size when given, else the style's size for that many
 * panels) and the legend's rows. */
void plot_layout_size(const Plot *plot, PlotLayout *layout, PlotCanvas *canvas);

/* With the style's size: the canvas of a one-panel layout made to give a square plot
 * area (predicted against played out, where y = x is the diagonal). */
void plot_layout_square(const Plot *plot, const PlotLayout *layout, PlotCanvas *canvas);

/* `set multiplot layout ...` with margins for the title, the legend under the grid and
 * the panel titles, and the title (its last '\n' starts the subtitle line; NULL or the
 * paper style: none). Each panel is then one `plot` command; end with `unset multiplot`. */
void plot_layout_begin(const Plot *plot, FILE *body, const PlotLayout *layout,
                       const PlotCanvas *canvas, const char *title);

/* Before the first panel's plot: the legend's place under the grid. Its entries are
 * keyentry items (plot_print_key_entry) of that plot; the other panels `unset key`. */
void plot_layout_key(const Plot *plot, FILE *body, const PlotLayout *layout,
                     const PlotCanvas *canvas);

/* `keyentry with linespoints <method's look> title 'TEXT', ` */
void plot_print_key_entry(const Plot *plot, FILE *body, const char *method, const char *text);

/* ---- the heterogeneity axis in words (plot_style.c) ---- */

typedef struct PlotAxis {
    char title[256];         /* "compute σ (lognormal)", "stragglers' compute (GFLOPS)" */
    double scale;            /* x shown = level / scale (SI to the shown unit) */
    int index;               /* RUNSET_AXIS_INDEX or _NONE: tics name the levels */
} PlotAxis;

/* The group's axis: words for its key, the unit of its values. */
void plot_axis_init(const Plot *plot, const RunGroup *group, PlotAxis *axis);

/* A key (`agents.stragglers.compute`) in words ("stragglers' compute"). */
void plot_key_words(const char *key, char *out, size_t size);

/* "compute σ = 0.5", "partition = iid": a level in words, for panel titles. */
void plot_level_words(const Plot *plot, const RunGroup *group, const PlotAxis *axis,
                      double level, char *out, size_t size);

/* xlabel, xtics (at the levels[0..count) themselves while there are few) and xrange of
 * the axis over levels. */
void plot_print_level_axis(const Plot *plot, FILE *body, const RunGroup *group,
                           const PlotAxis *axis, PlotRange range, const double *levels, int count);

/* ---- the level table (plot_levels.c) ----
 * The group's points as cells (facet, method, level): a facet is a combination of the
 * values of the keys that vary besides the level and the method (one panel each). */

typedef struct PlotLevels {
    int facet_count;
    char **facet_names;      /* (facet_count) "partition = iid", "" when no key varies */
    int method_count;
    const char **methods;    /* (method_count) borrowed */
    int level_count;
    double *levels;          /* (level_count) ascending */
    int *point;              /* [(f * method_count + m) * level_count + l]: point, -1 */
    /* after plot_levels_merge: */
    int *facet_kept;         /* (facet_count) 1 if drawn */
    char **facet_labels;     /* (facet_count) owned, "partition = iid = dirichlet" */
    int *method_kept;
    char **method_labels;    /* (method_count) owned, "localsgd = qsr" */
} PlotLevels;

/* The table of the group's points. HS_OK or HS_E_NOMEM. */
int plot_levels_build(const Plot *plot, PlotLevels *levels);

void plot_levels_free(PlotLevels *levels);

/* Merges facets, then methods, whose `count` values per cell (values[cell * count + k],
 * cell as PlotLevels.point is indexed) are all plot_same; a cell of NaNs is empty, and a
 * facet or method with only empty cells is not kept. HS_OK or HS_E_NOMEM. */
int plot_levels_merge(PlotLevels *levels, const double *values, int count);

/* Whether cells a and b hold the same figures; whether a cell holds none. */
typedef int PlotCellSame(void *ctx, size_t a, size_t b);
typedef int PlotCellEmpty(void *ctx, size_t cell);

/* plot_levels_merge for cells a figure compares itself (curves of any length). */
int plot_levels_merge_by(PlotLevels *levels, PlotCellSame *same, PlotCellEmpty *empty, void *ctx);

/* "a = b = c" of names[0..n) (malloc'd, NULL when out of memory). */
char *plot_join_names(const char *const *names, int n);

#endif
