/* cli_run.h — what `hetsim run` in one process (cli_run.c) and across MPI ranks
 * (cli_run_ranks.c) share. Internal to cli/. */
#ifndef CLI_CLI_RUN_H
#define CLI_CLI_RUN_H

#include "cli/cli.h"
#include "driver/origin.h"
#include "sim/scenario/scenario.h"

#include <stdint.h>

/* The base point of the scenario (text, the file read once, without [sweep], with the
 * overrides); a [sweep] in the file is checked as `hetsim sweep` checks it, *sweep_runs
 * its run count (0 without [sweep]). */
int cli_run_load(const CliScenarioArgs *args, const char *text, Scenario *sc, int64_t *sweep_runs, HsDiag *diag);
/* One line on stderr for what the file holds that this run does not use. */
void cli_run_notes(const Scenario *sc, int64_t sweep_runs, const char *path);
/* Removes a database and its -wal and -shm files (a run refused before it started). */
void cli_remove_database(const char *path);
/* `mpirun -np K hetsim run ...` with K > 1 (cli_run_ranks.c); the exit status. */
int cli_run_ranks(const CliScenarioArgs *args, const RunOrigin *origin);

#endif
