/* cli_check.h — `hetsim check SCENARIO.ini [--set ...] [--only KEY=V1,V2]...` and the
 * --dry-run of `hetsim sweep`: validate the scenario exactly as `sweep` does (every
 * point resolved, every run's agents drawn), then print on stdout the resolved scenario
 * and, for a sweep, the numbered list of its points; nothing is written. `hetsim run
 * --dry-run` (cli_run.c) prints its base point the same way. */
#ifndef CLI_CLI_CHECK_H
#define CLI_CLI_CHECK_H

#include "cli/cli.h"

#include <stdio.h>

int cli_check(int argc, char **argv);

/* The check and its printout for command ("check" or "sweep") with args and the --only
 * values; the exit status (0, or 2 for bad input, said on stderr). */
int cli_check_sweep(const char *command, const CliScenarioArgs *args, const char *const *only, int n_only,
                    FILE *out);

/* The header line of a dry run: "; PATH: valid; nothing was written". */
void cli_check_print_valid(FILE *out, const char *path);

#endif
