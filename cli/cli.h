/* cli.h — the hetsim subcommands. Each takes the arguments after its name and returns
 * the process exit status: 0 success, 1 a run failed, 2 bad usage or bad input. */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#define HETSIM_VERSION "0.1.0"

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
} CliScenarioArgs;

/* Takes argv[*i] if it is --db, --set, --timing-only, --quiet or the scenario path
 * (advancing *i past an option's value) and returns 0; for an unknown option or a second
 * scenario prints why (naming command, then usage) and returns 2. Command-specific
 * options must be tried before this. */
int cli_scenario_arg(const char *command, const char *usage, int argc, char **argv, int *i,
                     CliScenarioArgs *args);

/* Prints "hetsim: message" to stderr and returns the exit status for status. */
int cli_fail(int status, const char *message);

#endif
