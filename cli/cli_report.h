/* cli_report.h — `hetsim report`: the command line of analysis/report.h. */
#ifndef CLI_CLI_REPORT_H
#define CLI_CLI_REPORT_H

#include <stdio.h>

/* `hetsim report FILE.db [--run ID | --sweep ID] [--table T] [--csv]` and `--help`.
 * argv[0] is the command word ("report") and is not read; options may come before or
 * after FILE. Prints results to stdout and "hetsim: FILE: message" errors to stderr.
 * Returns the exit status: 0 ok, 1 the file cannot be opened or read (I/O), 2 bad usage,
 * not a hetsim database (or another schema version), no run with that ID or no run of
 * that sweep. */
int cli_report(int argc, char **argv);

/* cli_report writing to out and err instead of stdout and stderr (tests use it). */
int cli_report_stream(int argc, char **argv, FILE *out, FILE *err);

#endif
