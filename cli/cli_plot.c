/* cli_plot.c — `hetsim plot FILE.db [OPTION]...` (the usage below): parses the arguments
 * into PlotOptions, calls plot_write (analysis/plot.h), and turns its status into the
 * exit status. Every bad value is a usage error (exit 2) that says what is accepted. */
#include "cli/cli_plot.h"

#include "analysis/gnuplot.h"
#include "analysis/plot.h"
#include "base/hs_error.h"
#include "cli/cli.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char cli_plot_usage[] =
    "usage: hetsim plot FILE.db [--out DIR] [--run ID] [--sweep ID] [--rounds A[-B]]\n"
    "                   [--format png,svg,pdf] [--style paper|screen] [--size W,H]\n"
    "                   [--font-size PT] [--keep]\n"
    "\n"
    "Draws, with gnuplot (Debian package gnuplot-nox), into DIR (default: plots); every\n"
    "aggregate is the mean over seeds with a 95 % band, at the true heterogeneity level:\n"
    "  time-to-target.*  time to the target accuracy against the level, a line per method\n"
    "  straggler.*       round time and idle share against the level\n"
    "  speedup.*         speedup over sync against the level\n"
    "  accuracy.*        test accuracy against virtual time, one panel per level\n"
    "  idle.*            per-agent idle share (CDF) per method at the highest level\n"
    "  pairing.*         one ComDML run: who offloads to whom, at which split, per round\n"
    "  predicted.*       that run's predicted against played-out pair times, with y = x\n"
    "  timeline.*        a Gantt chart of one round: per agent compute, wait, send\n"
    "Other keys that vary make one panel per value; identical lines and panels are drawn\n"
    "once (\"localsgd = qsr\"). A figure with nothing to say is skipped with a note on\n"
    "stderr saying why. Written paths go to stdout.\n"
    "\n"
    "  --out DIR          output folder, made if missing\n"
    "  --sweep ID         the sweep of the aggregate figures (default: that of --run, else\n"
    "                     of the latest run)\n"
    "  --run ID           the run of the timeline and ComDML figures (default: the latest\n"
    "                     run, and the latest run with pairings, of the sweep)\n"
    "  --rounds A[-B]     the rounds of the timeline (default: the slowest round)\n"
    "  --format LIST      png, svg, pdf, comma-separated (default: png,svg)\n"
    "  --style NAME       screen (default: 11 pt text, 100 dpi PNGs, titles) or paper\n"
    "                     (3.5 in wide, 7 in for small multiples, 8 pt text, thick lines,\n"
    "                     300 dpi PNGs, no figure titles: the caption says it)\n"
    "  --size W,H         every figure's size: inches (3.5in,2.6in), cm (9cm,6cm) or PNG\n"
    "                     pixels (1000,600 or 1000px,600px)\n"
    "  --font-size PT     text size in points (4 to 40; default: the style's)\n"
    "  --keep             also write NAME.gp and NAME.dat: `gnuplot DIR/NAME.gp` redraws\n"
    "  --help             this text\n"
    "\n"
    "gnuplot is found on PATH, or at $" GNUPLOT_ENV ". Exit status: 0 ok, 1 gnuplot missing\n"
    "or failed, or a file cannot be read or written, 2 bad usage or input.\n";

static int cli_plot_parse_rounds(const char *text, PlotOptions *options)
{
    const char *end = NULL;
    if (cli_parse_whole(text, 0, &options->first_round, &end) != 0) return -1;
    options->last_round = options->first_round;
    if (*end == '-' && cli_parse_whole(end + 1, options->first_round, &options->last_round, NULL) != 0)
        return -1;
    if (*end != '\0' && *end != '-') return -1;
    options->have_rounds = 1;
    return 0;
}

static int cli_plot_parse_formats(const char *text, unsigned *formats)
{
    static const struct { const char *name; unsigned flag; } names[] = {
        { "png", PLOT_PNG }, { "svg", PLOT_SVG }, { "pdf", PLOT_PDF },
    };
    *formats = 0;
    for (const char *p = text;;) {
        const char *comma = strchr(p, ',');
        size_t length = comma ? (size_t)(comma - p) : strlen(p);
        unsigned flag = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (length == 3 && strncmp(p, names[i].name, 3) == 0) flag = names[i].flag;
        if (flag == 0) return -1;
        *formats |= flag;
        if (comma == NULL) return 0;
        p = comma + 1;
    }
}

/* One side of --size: a positive number with an optional unit; *unit gets its kind. */
static int cli_plot_parse_length(const char *text, size_t length, double *value, PlotSizeUnit *unit)
{
    char buffer[64];
    if (length == 0 || length >= sizeof buffer) return -1;
    memcpy(buffer, text, length);
    buffer[length] = '\0';
    char *end = NULL;
    *value = strtod(buffer, &end);
    if (end == buffer || !isfinite(*value) || *value <= 0 || buffer[0] == ' ') return -1;
    if (strcmp(end, "in") == 0) *unit = PLOT_SIZE_INCHES;
    else if (strcmp(end, "cm") == 0) {
        *unit = PLOT_SIZE_INCHES;
        *value /= 2.54;
    } else if (strcmp(end, "px") == 0 || *end == '\0') *unit = PLOT_SIZE_PIXELS;
    else return -1;
    return 0;
}

static int cli_plot_parse_size(const char *text, PlotOptions *options)
{
    const char *comma = strchr(text, ',');
    PlotSizeUnit width_unit, height_unit;
    if (comma == NULL ||
        cli_plot_parse_length(text, (size_t)(comma - text), &options->width, &width_unit) != 0 ||
        cli_plot_parse_length(comma + 1, strlen(comma + 1), &options->height, &height_unit) != 0 ||
        width_unit != height_unit)
        return -1;
    options->size_unit = width_unit;
    /* sizes a figure can be drawn at: a thumbnail to a poster */
    if (width_unit == PLOT_SIZE_INCHES)
        return options->width >= 1 && options->width <= 40 && options->height >= 1 &&
                       options->height <= 40 ? 0 : -1;
    return options->width >= 100 && options->width <= 10000 && options->height >= 100 &&
                   options->height <= 10000 && options->width == floor(options->width) &&
                   options->height == floor(options->height) ? 0 : -1;
}

int cli_plot_stream(int argc, char **argv, FILE *out, FILE *err)
{
    PlotOptions options;
    memset(&options, 0, sizeof options);
    const char *run_text = NULL, *rounds_text = NULL, *format_text = NULL, *style_text = NULL;
    const char *size_text = NULL, *font_text = NULL;
    const CliOption accepted[] = {
        { "--out", &options.out_dir, NULL, "a folder" },
        { "--run", &run_text, NULL, "a run id" },
        { "--sweep", &options.sweep, NULL, "a sweep id" },
        { "--rounds", &rounds_text, NULL, "A or A-B" },
        { "--format", &format_text, NULL, "png, svg, pdf or a list of them" },
        { "--style", &style_text, NULL, "paper or screen" },
        { "--size", &size_text, NULL, "W,H" },
        { "--font-size", &font_text, NULL, "points" },
        { "--keep", NULL, &options.keep, NULL },
    };
    int parsed = cli_parse_db_command("plot", cli_plot_usage, accepted,
                                      (int)(sizeof accepted / sizeof accepted[0]), argc, argv,
                                      &options.db_path, out, err);
    if (parsed >= 0) return parsed;
    if (run_text != NULL) {
        if (cli_parse_whole(run_text, 1, &options.run_id, NULL) != 0)
            return cli_usage_error(err, "plot", "--run needs a positive whole number, not '%s'", run_text);
        options.have_run = 1;
    }
    if (rounds_text != NULL && cli_plot_parse_rounds(rounds_text, &options) != 0)
        return cli_usage_error(err, "plot", "--rounds needs A or A-B (whole numbers, A <= B), not '%s'",
                               rounds_text);
    if (format_text != NULL && cli_plot_parse_formats(format_text, &options.formats) != 0)
        return cli_usage_error(err, "plot", "--format takes png, svg, pdf or a comma-separated list "
                                            "of them (png,pdf), not '%s'", format_text);
    if (style_text != NULL) {
        if (strcmp(style_text, "paper") == 0) options.style = PLOT_STYLE_PAPER;
        else if (strcmp(style_text, "screen") == 0) options.style = PLOT_STYLE_SCREEN;
        else return cli_usage_error(err, "plot", "--style takes paper or screen, not '%s'", style_text);
    }
    if (size_text != NULL && cli_plot_parse_size(size_text, &options) != 0)
        return cli_usage_error(err, "plot", "--size takes W,H in inches (3.5in,2.6in, each 1 to 40), "
                                            "cm (9cm,6cm) or pixels (1000,600, each 100 to 10000), "
                                            "not '%s'", size_text);
    if (font_text != NULL) {
        char *end = NULL;
        options.font_size = strtod(font_text, &end);
        if (end == font_text || *end != '\0' || !(options.font_size >= 4 && options.font_size <= 40))
            return cli_usage_error(err, "plot", "--font-size takes points from 4 to 40, not '%s'",
                                   font_text);
    }
    if (options.out_dir != NULL && options.out_dir[0] == '\0')
        return cli_usage_error(err, "plot", "%s", "--out needs a folder");

    HsDiag diag;
    hs_diag_clear(&diag);
    int status = cli_check_database(options.db_path, &diag);
    if (status == HS_OK) status = plot_write(&options, out, err, &diag);
    if (status != HS_OK) fprintf(err, "hetsim: %s\n", diag.message);
    return hs_error_exit_status(status);
}

int cli_plot(int argc, char **argv)
{
    return cli_plot_stream(argc, argv, stdout, stderr);
}
