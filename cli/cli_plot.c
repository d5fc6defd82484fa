/* cli_plot.c — `hetsim plot FILE.db [--out DIR] [--run ID] [--sweep ID] [--rounds A[-B]]
 * [--format png,svg]`: parses the arguments into PlotOptions, calls plot_write
 * (analysis/plot.h), and turns its status into the exit status. */
#include "cli/cli_plot.h"

#include "analysis/gnuplot.h"
#include "analysis/plot.h"
#include "base/hs_error.h"
#include "cli/cli.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char cli_plot_usage[] =
    "usage: hetsim plot FILE.db [--out DIR] [--run ID] [--sweep ID] [--rounds A[-B]]\n"
    "                   [--format png,svg]\n"
    "\n"
    "Draws, with gnuplot (Debian package gnuplot-nox), into DIR (default: plots):\n"
    "  straggler.*  round makespan and idle share against the heterogeneity level,\n"
    "               one line per method, mean and 95 % interval over seeds\n"
    "  accuracy.*   test accuracy against virtual time, one colour per method\n"
    "  timeline.*   one run's per-agent compute/communication/idle/offline bars\n"
    "  pairing.*    one ComDML run's pairings: offloader -> helper, with the split\n"
    "  predicted.*  that run's predicted against played-out pair times, with y = x\n"
    "  speedup.*    speedup over sync against the heterogeneity level\n"
    "A figure without data is skipped with a note on stderr. Written paths go to stdout.\n"
    "\n"
    "  --out DIR        output folder, made if missing\n"
    "  --sweep ID       the sweep of the aggregate figures (default: that of --run, else\n"
    "                   of the latest run)\n"
    "  --run ID         the run of the timeline and ComDML figures (default: the latest\n"
    "                   run, and the latest run with pairings, of the sweep)\n"
    "  --rounds A[-B]   the rounds of the timeline (default: first, slowest, last)\n"
    "  --format LIST    png, svg or png,svg (default)\n"
    "  --help           this text\n"
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
    *formats = 0;
    for (const char *p = text;;) {
        const char *comma = strchr(p, ',');
        size_t length = comma ? (size_t)(comma - p) : strlen(p);
        if (length == 3 && strncmp(p, "png", 3) == 0) *formats |= PLOT_PNG;
        else if (length == 3 && strncmp(p, "svg", 3) == 0) *formats |= PLOT_SVG;
        else return -1;
        if (comma == NULL) return 0;
        p = comma + 1;
    }
}

int cli_plot_stream(int argc, char **argv, FILE *out, FILE *err)
{
    PlotOptions options;
    memset(&options, 0, sizeof options);
    const char *run_text = NULL, *rounds_text = NULL, *format_text = NULL;
    const CliOption accepted[] = {
        { "--out", &options.out_dir, NULL, "a folder" },
        { "--run", &run_text, NULL, "a run id" },
        { "--sweep", &options.sweep, NULL, "a sweep id" },
        { "--rounds", &rounds_text, NULL, "A or A-B" },
        { "--format", &format_text, NULL, "png, svg or png,svg" },
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
        return cli_usage_error(err, "plot", "--format takes png, svg or png,svg, not '%s'", format_text);
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
