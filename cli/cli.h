/* cli.h — the hetsim subcommands `run` and `sweep`, and the argument helpers the
 * commands share. Each command takes the arguments after its name and returns the
 * process exit status: 0 success, 1 a run failed, 2 bad usage or bad input. */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include "base/hs_error.h"

#include <stdint.h>
#include <stdio.h>

#include "base/hs_error.h"
#include "base/version.h"

int cli_run(int argc, char **argv);
int cli_sweep(int argc, char **argv);
/* `hetsim show` and `hetsim diff` (cli_show.c, cli_diff.c); argv[0] is the command word. */
int cli_show(int argc, char **argv);
int cli_diff(int argc, char **argv);

/* The arguments `run` and `sweep` share. overrides has room for argc entries; the caller
 * allocates and frees it. */
typedef struct CliScenarioArgs {
    const char *scenario_path;  /* NULL until given */
    const char *db_path;        /* "results.db" unless --db */
    int db_given;               /* --db was given (else a note says where rows go) */
    const char **overrides;     /* --set values in order; --timing-only adds run.mode */
    int n_overrides;
    const char **groups;        /* --add-group names (room for argc, like overrides) */
    int n_groups;
    int quiet;
    char threads_set[32];       /* "run.threads=N" for --threads N (an override) */
} CliScenarioArgs;

/* Applies args' --add-group groups, then its --set overrides in order, to doc (the
 * scenario file's document): HS_OK or the first error in diag. */
struct IniDoc;
int cli_apply_overrides(struct IniDoc *doc, const CliScenarioArgs *args, HsDiag *diag);

/* Takes argv[*i] if it is --db, --set, --add-group, --timing-only, --threads, --quiet or the scenario path
 * (advancing *i past an option's value) and returns 0; for an unknown option or a second
 * scenario prints why (naming command, then usage) and returns 2. Command-specific
 * options must be tried before this. */
int cli_scenario_arg(const char *command, const char *usage, int argc, char **argv, int *i,
                     CliScenarioArgs *args);

/* The line every run and sweep prints on stdout once it has written to the database,
 * --quiet or not, so scripts (python/hetsim.py) and people learn where the rows went:
 * "database: PATH" with the path as given (results.db when --db was not). */
void cli_print_database(const char *db_path);
/* Without --db: a note on stderr (unless quiet) that rows go to ./results.db. */
void cli_note_default_database(const CliScenarioArgs *args);

/* A database path (--db, or FILE.db of report and plot) is a regular file or does not
 * exist yet: a FIFO, a folder or a device is refused (HS_E_INPUT, "PATH: the database
 * is a FIFO (named pipe), not a regular file") before SQLite opens it, which would wait
 * for a FIFO's writer forever. A missing file is left to the caller (run creates it,
 * report says it cannot open it). */
int cli_check_database(const char *path, HsDiag *diag);

/* The pre-flight (cli_preflight.c): what a run will read that resolution did not read
 * whole — a train-mode run's dataset files — read before the database is opened, once
 * per folder (seen remembers the folders read; zero it first, free it after). Errors
 * start with the scenario's line of [data] path (Scenario.data_where); a corrupt or
 * unreadable file is HS_E_INPUT. */
struct Scenario;
typedef struct CliPreflight {
    char (*folders)[512];
    int n, capacity;
} CliPreflight;
int cli_preflight(CliPreflight *seen, const struct Scenario *sc, HsDiag *diag);
void cli_preflight_free(CliPreflight *seen);
/* `run`'s pre-flight: the agents drawn (world_build), then cli_preflight. */
int cli_preflight_run(const struct Scenario *sc, HsDiag *diag);

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

/* The same for a command with n_operands operands (FILE.db RUN, ...) in operands[]:
 * fewer or more is bad usage, said with operand_names ("FILE.db and a run id"). */
int cli_parse_command(const char *command, const char *usage, const CliOption *options, int count, int argc,
                      char **argv, const char **operands, int n_operands, const char *operand_names, FILE *out,
                      FILE *err);

/* A whole decimal number >= minimum, digits first (no sign, no space). With end_out
 * NULL nothing may follow it; otherwise *end_out gets where it stops. Returns 0 (the
 * number in *out) or -1. */
int cli_parse_whole(const char *text, int64_t minimum, int64_t *out, const char **end_out);

/* Prints "hetsim COMMAND: " fmt (with arg) and a "Try 'hetsim COMMAND --help'." line to
 * err; returns 2, the exit status of bad usage. */
int cli_usage_error(FILE *err, const char *command, const char *fmt, const char *arg);

#endif
