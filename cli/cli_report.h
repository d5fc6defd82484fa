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

/* What rounds.extra means in a run of method whose [method] keys param reads (NULL: not
 * known): the method registry's answer (method_extra_meaning) for the reports and `hetsim
 * show` (analysis/report.h's ReportExtraMeaning). */
const char *cli_extra_meaning(const char *method, const char *(*param)(void *ctx, const char *key), void *ctx);

/* cli_report writing to out and err instead of stdout and stderr (tests use it). */
int cli_report_stream(int argc, char **argv, FILE *out, FILE *err);

#endif
