/* plot_style.c — how every figure of `hetsim plot` looks (plot_internal.h): the two
 * styles, one colour and marker per method, the canvas and the grid of panels, the
 * legend under the grid, and the heterogeneity axis in words with its unit.
 *
 * Sizes are in points (1/72 in) and follow the font: a margin is so many lines of text,
 * so the same layout serves an 8 pt paper figure and an 11 pt screen one. PNG renders
 * the canvas at the style's dpi; PDF and SVG take it as it is. */
#include "analysis/plot_internal.h"

#include "analysis/label.h"
#include "analysis/runset.h"
#include "base/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- styles ---- */

void plot_style_init(PlotStyle *style, const PlotOptions *options)
{
    if (options->style == PLOT_STYLE_PAPER) {
        /* one column of a two-column paper (3.5 in); small multiples take the full
         * width (7 in); lines and markers thick enough to survive printing */
        *style = (PlotStyle){ .font = 8, .dpi = 300, .line_width = 3, .point_size = 0.7,
                              .titles = 0, .width_one = 252, .width_multi = 504,
                              .panel_height = 165, .max_columns = 3 };
    } else {
        *style = (PlotStyle){ .font = 11, .dpi = 100, .line_width = 3, .point_size = 1.1,
                              .titles = 1, .width_one = 720, .width_multi = 1000,
                              .panel_height = 290, .max_columns = 3 };
    }
    if (options->font_size > 0) style->font = options->font_size;
}

/* ---- one look per method ---- */

const char *const plot_palette[PLOT_PALETTE_SIZE] = {
    "#0077bb", "#ee7733", "#009988", "#cc3311", "#33bbee", "#ee3377", "#555555", "#aa3377",
};

/* The methods hetsim has, each with a look of its own that no other method shares, so
 * a reader who learnt that ComDML is the red circle finds it so in every figure. */
static const struct { const char *method; const char *colour; int point; } plot_known_looks[] = {
    { "sync", "#0077bb", 5 },       { "localsgd", "#33bbee", 9 },   { "qsr", "#009988", 11 },
    { "dpsgd", "#ee7733", 13 },     { "adpsgd", "#aa3377", 15 },    { "co2", "#555555", 3 },
    { "comdml", "#cc3311", 7 },     { "fedavg", "#117733", 4 },     { "fedbuff", "#882255", 6 },
    { "asgd", "#332288", 8 },       { "rennala", "#999933", 10 },   { "ringmaster", "#44aa99", 12 },
    { "sdfeel", "#ee3377", 14 },    { "swift", "#000000", 1 },      { "ripples", "#0077bb", 4 },
    { "divshare", "#ee7733", 6 },   { "token", "#33bbee", 8 },      { "byzsgdnm", "#cc3311", 10 },
};

/* Looks for methods the table does not know, given out by name order. */
static const struct { const char *colour; int point; } plot_spare_looks[] = {
    { "#004488", 2 }, { "#bb5566", 3 }, { "#ddaa33", 1 }, { "#000000", 12 },
    { "#117733", 14 }, { "#882255", 2 }, { "#44aa99", 3 }, { "#999933", 1 },
};

static int plot_compare_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int plot_index_looks(Plot *plot)
{
    const RunSet *set = plot->set;
    const char **names = calloc((size_t)set->run_count + 1, sizeof *names);
    plot->looks = calloc((size_t)set->run_count + 1, sizeof *plot->looks);
    if (names == NULL || plot->looks == NULL) {
        free(names);
        return HS_E_NOMEM;
    }
    /* every method of the database (points carry the label's method), by name */
    int count = 0;
    for (int p = 0; p < set->point_count; p++) names[count++] = set->points[p].method;
    qsort(names, (size_t)count, sizeof *names, plot_compare_text);
    int spare = 0;
    for (int i = 0; i < count; i++) {
        if (i > 0 && strcmp(names[i], names[i - 1]) == 0) continue;
        PlotMethodLook look = { names[i], NULL, 0 };
        for (size_t k = 0; k < sizeof plot_known_looks / sizeof plot_known_looks[0]; k++)
            if (strcmp(plot_known_looks[k].method, names[i]) == 0) {
                look.colour = plot_known_looks[k].colour;
                look.point = plot_known_looks[k].point;
            }
        if (look.colour == NULL) {
            size_t k = (size_t)spare++ % (sizeof plot_spare_looks / sizeof plot_spare_looks[0]);
            look.colour = plot_spare_looks[k].colour;
            look.point = plot_spare_looks[k].point;
        }
        plot->looks[plot->look_count++] = look;
    }
    free(names);
    return HS_OK;
}

PlotMethodLook plot_method_look(const Plot *plot, const char *method)
{
    for (int i = 0; i < plot->look_count; i++)
        if (strcmp(plot->looks[i].method, method) == 0) return plot->looks[i];
    return (PlotMethodLook){ method, "#777777", 6 };
}

void plot_print_method_style(FILE *body, const Plot *plot, const char *method)
{
    PlotMethodLook look = plot_method_look(plot, method);
    fprintf(body, "lc rgb '%s' pt %d lw %g ps %g", look.colour, look.point, plot->style.line_width,
            plot->style.point_size);
}

void plot_print_key_entry(const Plot *plot, FILE *body, const char *method, const char *text)
{
    fputs("keyentry with linespoints ", body);
    plot_print_method_style(body, plot, method);
    fputs(" title ", body);
    plot_label(plot, body, text);
    fputs(", \\\n     ", body);
}

/* ---- canvas, grid, legend ---- */

void plot_layout_grid(const Plot *plot, PlotLayout *layout, int panels)
{
    int cols = panels < plot->style.max_columns ? panels : plot->style.max_columns;
    if (cols < 1) cols = 1;
    layout->cols = cols;
    layout->rows = (panels + cols - 1) / cols;
    if (layout->rows < 1) layout->rows = 1;
}

/* The parts of the canvas, in points, for the style's font. */
typedef struct PlotMargins {
    double top, bottom, left, right, gap_x, gap_y;
} PlotMargins;

static PlotMargins plot_margins(const Plot *plot, const PlotLayout *layout)
{
    double f = plot->style.font;
    int title_lines = plot->style.titles ? layout->title_lines : 0;
    PlotMargins m;
    double panel_title = layout->panel_titles ? 2.0 * f : 0;
    double legend = layout->legend_rows > 0 ? 1.5 * f * layout->legend_rows + 0.4 * f : 0;
    m.top = (title_lines > 0 ? 1.55 * f * title_lines + 1.0 * f : 0.9 * f) + panel_title;
    m.bottom = 3.5 * f + legend;
    m.left = 6.6 * f + layout->left_extra;  /* tic labels of up to 6 characters and the label */
    m.right = 1.6 * f;
    m.gap_x = 6.8 * f + layout->left_extra;
    m.gap_y = 3.9 * f + panel_title;
    return m;
}

void plot_layout_size(const Plot *plot, PlotLayout *layout, PlotCanvas *canvas)
{
    const PlotOptions *options = plot->options;
    const PlotStyle *style = &plot->style;
    if (options->size_unit == PLOT_SIZE_INCHES) {
        canvas->width = options->width * 72;
        canvas->height = options->height * 72;
    } else if (options->size_unit == PLOT_SIZE_PIXELS) {
        canvas->width = options->width * 72 / style->dpi;
        canvas->height = options->height * 72 / style->dpi;
    } else {
        canvas->width = layout->cols > 1 ? style->width_multi : style->width_one;
        canvas->height = 0;
    }
    layout->legend_rows = 0;
    if (layout->legend_entries > 0) {
        /* an entry: its text, the sample line and the gap to the next column */
        double entry = 0.56 * style->font * layout->legend_longest + 4.5 * style->font;
        int columns = (int)(0.94 * canvas->width / entry);
        if (columns < 1) columns = 1;
        layout->legend_rows = (layout->legend_entries + columns - 1) / columns;
    }
    if (canvas->height <= 0) {
        PlotMargins m = plot_margins(plot, layout);
        double panel = style->panel_height * (layout->cols > 1 || layout->rows > 1 ? 1.0 : 1.25);
        canvas->height = m.top + m.bottom + layout->rows * panel + (layout->rows - 1) * m.gap_y;
    }
}

void plot_layout_square(const Plot *plot, const PlotLayout *layout, PlotCanvas *canvas)
{
    if (plot->options->size_unit != PLOT_SIZE_DEFAULT) return;
    PlotLayout shown = *layout;
    if (!plot->style.titles) shown.title_lines = 0;
    PlotMargins m = plot_margins(plot, &shown);
    double side = canvas->width - m.left - m.right;
    if (side > 0.75 * plot->style.width_one) {  /* not taller than wide: narrower */
        side = 0.75 * plot->style.width_one;
        canvas->width = side + m.left + m.right;
    }
    canvas->height = side + m.top + m.bottom;
}

void plot_layout_begin(const Plot *plot, FILE *body, const PlotLayout *layout,
                       const PlotCanvas *canvas, const char *title)
{
    PlotLayout shown = *layout;
    if (!plot->style.titles || title == NULL) shown.title_lines = 0;
    PlotMargins m = plot_margins(plot, &shown);
    double w = canvas->width, h = canvas->height;
    fputs("set multiplot", body);
    if (shown.title_lines > 0) {
        /* the title and, after its last '\n', the subtitle: quoted pieces joined by "\n"
         * (a quoted string cannot hold one); the last, since a name in the title may hold
         * a newline of its own, which quoting turns into a space */
        fputs(" title ", body);
        const char *split = strrchr(title, '\n');
        if (split == NULL) {
            plot_label(plot, body, title);
        } else {
            char *first = strndup(title, (size_t)(split - title));
            plot_label(plot, body, first ? first : "");
            free(first);
            fputs(" . \"\\n\" . ", body);
            plot_label(plot, body, split + 1);
        }
    }
    fprintf(body, " layout %d,%d margins %.4f,%.4f,%.4f,%.4f spacing %.4f,%.4f\n", layout->rows,
            layout->cols, m.left / w, 1 - m.right / w, m.bottom / h, 1 - m.top / h, m.gap_x / w,
            m.gap_y / h);
    fputs("set grid lc rgb '#dddddd'\nset border lw 1\nset tics nomirror\n"
          "set style fill transparent solid 0.18 noborder\n", body);
}

void plot_layout_key(const Plot *plot, FILE *body, const PlotLayout *layout,
                     const PlotCanvas *canvas)
{
    if (layout->legend_rows <= 0) {
        fputs("unset key\n", body);
        return;
    }
    double f = plot->style.font;
    double top = 1.5 * f * layout->legend_rows + 0.3 * f;
    fprintf(body, "set key at screen 0.5,%.4f center top vertical maxrows %d samplen 2.5 "
                  "spacing 1.1 width 1 noautotitle\n", top / canvas->height, layout->legend_rows);
}

/* ---- the heterogeneity axis in words ---- */

static const struct { const char *key; const char *words; } plot_key_table[] = {
    { "compute", "compute" },       { "bandwidth", "bandwidth" },   { "uplink", "uplink" },
    { "downlink", "downlink" },     { "latency", "latency" },       { "samples", "samples per agent" },
    { "count", "agents" },          { "availability", "availability" },
    { "batch", "batch size" },
};

static const struct { const char *key; const char *words; } plot_full_key_table[] = {
    { "data.partition", "partition" },  { "data.alpha", "Dirichlet α" },
    { "data.dataset", "data set" },     { "run.rounds", "rounds" },
    { "run.method", "method" },         { "model.lr", "learning rate" },
    { "model.batch", "batch size" },    { "model.arch", "model" },
    { "topology.graph", "topology" },   { "network.model", "network model" },
};

void plot_key_words(const char *key, char *out, size_t size)
{
    for (size_t i = 0; i < sizeof plot_full_key_table / sizeof plot_full_key_table[0]; i++)
        if (strcmp(key, plot_full_key_table[i].key) == 0) {
            snprintf(out, size, "%s", plot_full_key_table[i].words);
            return;
        }
    const char *dot = strrchr(key, '.');
    if (strncmp(key, "agents.", 7) == 0 && dot != NULL) {
        const char *name = dot + 1, *words = name;
        for (size_t i = 0; i < sizeof plot_key_table / sizeof plot_key_table[0]; i++)
            if (strcmp(name, plot_key_table[i].key) == 0) words = plot_key_table[i].words;
        if (dot == key + 6) {   /* agents.KEY: every agent's */
            snprintf(out, size, "%s", words);
        } else {                /* agents.GROUP.KEY: that group's */
            int group = (int)(dot - (key + 7));
            snprintf(out, size, "%.*s' %s", group, key + 7, words);
        }
        return;
    }
    snprintf(out, size, "%s", key);
}

/* The shown unit of SI values of kind up to `largest`: its name and SI per unit. */
static void plot_unit_for(int kind, double largest, const char **name, double *scale)
{
    static const char *const compute[] = { "FLOPS", "kFLOPS", "MFLOPS", "GFLOPS", "TFLOPS" };
    static const char *const bits[] = { "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s" };
    static const char *const bytes[] = { "B", "kB", "MB", "GB", "TB" };
    *name = "";
    *scale = 1;
    if (kind == UNIT_TIME) {
        if (largest > 0 && largest < 1) {
            *name = "ms";
            *scale = 1e-3;
        } else {
            *name = "s";
        }
        return;
    }
    const char *const *names = kind == UNIT_COMPUTE ? compute : kind == UNIT_BANDWIDTH ? bits
                             : kind == UNIT_BYTES ? bytes : NULL;
    if (names == NULL) return;
    double base = kind == UNIT_BANDWIDTH ? 0.125 : 1;  /* bandwidth in bits: 1 bit/s = 1/8 B/s */
    int prefix = 0;
    while (prefix < 4 && largest / (base * pow(1e3, prefix + 1)) >= 1) prefix++;
    *name = names[prefix];
    *scale = base * pow(1e3, prefix);
}

/* The value of the group's axis key in its first point's label; NULL when none. */
static int plot_axis_kind(const Plot *plot, const RunGroup *group)
{
    const RunSet *set = plot->set;
    for (int p = 0; p < set->point_count; p++) {
        if (set->points[p].group != plot->group) continue;
        Label label;
        int kind = UNIT_PLAIN;
        if (label_parse(set->points[p].label, &label) == HS_OK) {
            const char *value = label_value(&label, group->axis_key);
            double number;
            if (value == NULL || label_number_unit(value, &number, &kind) != 0) kind = UNIT_PLAIN;
        }
        label_free(&label);
        return kind;
    }
    return UNIT_PLAIN;
}

void plot_axis_init(const Plot *plot, const RunGroup *group, PlotAxis *axis)
{
    char words[200];
    memset(axis, 0, sizeof *axis);
    axis->scale = 1;
    axis->index = group->axis_kind == RUNSET_AXIS_INDEX || group->axis_kind == RUNSET_AXIS_NONE;
    if (group->axis_kind == RUNSET_AXIS_NONE) {
        snprintf(axis->title, sizeof axis->title, "(no swept key varies)");
        return;
    }
    plot_key_words(group->axis_key, words, sizeof words);
    if (group->axis_kind == RUNSET_AXIS_SIGMA) {
        snprintf(axis->title, sizeof axis->title, "%s σ (lognormal)", words);
    } else if (group->axis_kind == RUNSET_AXIS_VALUE) {
        double largest = 0;
        for (int p = 0; p < plot->set->point_count; p++)
            if (plot->set->points[p].group == plot->group && fabs(plot->set->points[p].level) > largest)
                largest = fabs(plot->set->points[p].level);
        const char *unit;
        plot_unit_for(plot_axis_kind(plot, group), largest, &unit, &axis->scale);
        if (unit[0] != '\0') snprintf(axis->title, sizeof axis->title, "%s (%s)", words, unit);
        else snprintf(axis->title, sizeof axis->title, "%s", words);
    } else {
        snprintf(axis->title, sizeof axis->title, "%s", words);
    }
}

void plot_level_words(const Plot *plot, const RunGroup *group, const PlotAxis *axis,
                      double level, char *out, size_t size)
{
    char words[200];
    if (group->axis_kind == RUNSET_AXIS_NONE) {
        snprintf(out, size, "all runs");
        return;
    }
    plot_key_words(group->axis_key, words, sizeof words);
    if (group->axis_kind == RUNSET_AXIS_SIGMA) {
        snprintf(out, size, "%s σ = %g", words, level);
    } else if (group->axis_kind == RUNSET_AXIS_VALUE) {
        /* the title holds the unit in parentheses: repeat it after the number */
        const char *open = strrchr(axis->title, '(');
        if (open != NULL)
            snprintf(out, size, "%s = %g %.*s", words, level / axis->scale,
                     (int)strcspn(open + 1, ")"), open + 1);
        else
            snprintf(out, size, "%s = %g", words, level / axis->scale);
    } else {
        int k = (int)level;
        snprintf(out, size, "%s = %s", words,
                 k >= 0 && k < group->level_count ? group->level_names[k] : "?");
    }
}

void plot_print_level_axis(const Plot *plot, FILE *body, const RunGroup *group,
                           const PlotAxis *axis, PlotRange levels, const double *values, int count)
{
    fputs("set xlabel ", body);
    plot_label(plot, body, axis->title);
    fputs("\n", body);
    if (axis->index) {
        fputs("set xtics (", body);
        for (int k = 0; k < group->level_count; k++) {
            if (k > 0) fputs(", ", body);
            plot_label(plot, body, group->level_names[k]);
            fprintf(body, " %d", k);
        }
        if (group->level_count == 0) fputs("'all' 0", body);
        fputs(")\n", body);
        fprintf(body, "set xrange [-0.5:%.17g]\n", levels.any ? levels.hi + 0.5 : 0.5);
    } else {
        PlotRange shown = levels;
        shown.lo /= axis->scale;
        shown.hi /= axis->scale;
        if (count <= 8) {
            /* tics at the levels swept: the reader sees which were run */
            fputs("set xtics (", body);
            for (int k = 0; k < count; k++)
                fprintf(body, "%s'%g' %.17g", k ? ", " : "", values[k] / axis->scale, values[k] / axis->scale);
            fputs(")\n", body);
        } else {
            fputs("set xtics autofreq\n", body);
        }
        plot_range_print(body, "x", shown, 0);
    }
}
