/* cli_plot.h — `hetsim plot`: the command line of analysis/plot.h. */
#ifndef CLI_CLI_PLOT_H
#define CLI_CLI_PLOT_H

#include <stdio.h>

/* `hetsim plot FILE.db [--out DIR] [--run ID] [--sweep ID] [--rounds A[-B]]
 * [--format png,svg,pdf] [--style paper|screen] [--size W,H] [--font-size PT] [--keep]`
 * and `--help`; argv[0] is the command word. Returns the exit
 * status: 0 ok, 1 gnuplot missing or failed / I/O, 2 bad usage or input. */
int cli_plot(int argc, char **argv);

/* cli_plot writing to out and err (tests use it). */
int cli_plot_stream(int argc, char **argv, FILE *out, FILE *err);

#endif
