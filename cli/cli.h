/* cli.h — the hetsim subcommands `run` and `sweep`, and the argument helpers the
 * commands share. Each command takes the arguments after its name and returns the
 * process exit status: 0 success, 1 a run failed, 2 bad usage or bad input. */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "base/hs_error.h"
#include "base/version.h"

int cli_run(int argc, char **argv);
int cli_sweep(int argc, char **argv);

/* The arguments `run` and `sweep` share. overrides has room for argc entries; the caller
 * allocates and frees it. */
typedef struct CliScenarioArgs {
    const char *scenario_path;  /* NULL until given */
    const char *db_path;        /* "results.db" unless --db */
    const char **overrides;     /* --set values in order; --timing-only adds run.mode */
    int n_overrides;
    int quiet;
    char threads_set[32];       /* "run.threads=N" for --threads N (an override) */
} CliScenarioArgs;

/* Takes argv[*i] if it is --db, --set, --timing-only, --threads, --quiet or the scenario path
 * (advancing *i past an option's value) and returns 0; for an unknown option or a second
 * scenario prints why (naming command, then usage) and returns 2. Command-specific
 * options must be tried before this. */
int cli_scenario_arg(const char *command, const char *usage, int argc, char **argv, int *i,
                     CliScenarioArgs *args);

/* Reads the file at path whole into a malloc'd, NUL-terminated *text (a sweep's text is
 * what every MPI rank resolves; a run records it as runs.scenario_text). HS_E_INPUT when
 * it cannot be opened or holds NUL bytes, HS_E_IO, HS_E_NOMEM; diag names the path. */
int cli_read_text(const char *path, char **text, HsDiag *diag);

/* Prints "hetsim: message" to stderr and returns the exit status for status. */
int cli_fail(int status, const char *message);

/* The command lines of `report` and `plot` (cli_args.c): `hetsim COMMAND FILE.db
 * [OPTION]...`, options before or after FILE.db, `--` ending them. */

/* One option: "--name VALUE" or "--name=VALUE" into *value, or with value NULL a flag
 * "--name" that sets *flag to 1. */
typedef struct CliOption {
    const char *name;
    const char **value;
    int *flag;
    const char *needs;  /* the usage error of a missing value: "NAME needs <needs>" */
} CliOption;

/* Parses argv (argv[0] is the command word and is not read) against options[0..count),
 * tried in order, and puts FILE.db in *db_path. --help or -h prints usage to out.
 * Returns -1 when the command goes on; otherwise the exit status to return: 0 after
 * --help, 2 for bad usage (an unknown option, a missing value, a second or no FILE.db),
 * said on err as cli_usage_error does. */
int cli_parse_db_command(const char *command, const char *usage, const CliOption *options,
                         int count, int argc, char **argv, const char **db_path, FILE *out,
                         FILE *err);

/* A whole decimal number >= minimum, digits first (no sign, no space). With end_out
 * NULL nothing may follow it; otherwise *end_out gets where it stops. Returns 0 (the
 * number in *out) or -1. */
int cli_parse_whole(const char *text, int64_t minimum, int64_t *out, const char **end_out);

/* Prints "hetsim COMMAND: " fmt (with arg) and a "Try 'hetsim COMMAND --help'." line to
 * err; returns 2, the exit status of bad usage. */
int cli_usage_error(FILE *err, const char *command, const char *fmt, const char *arg);

#endif
