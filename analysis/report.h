/* report.h — tables and CSV from a hetsim database (`hetsim report`).
 *
 * Reports open the database read-only (SQLITE_OPEN_READONLY): they never change a file,
 * and they can run while a sweep is still writing to it (WAL readers do not block
 * writers). A closed WAL database in a folder the reader cannot write (no -shm file can
 * be made) is read as immutable instead. Everything is read and formatted before the
 * first byte is printed, so a failing report prints nothing on stdout. A report may
 * leave empty -wal/-shm files next to the database: a read-only reader cannot delete
 * them, and the next writer reuses them.
 *
 * Summary (one row per run, ordered by id):
 *   id, name, method, seed (as uint64), status,
 *   rounds       runs.rounds_done, or the number of logged rounds while none is set
 *                (a running or crashed run),
 *   virtual time runs.sim_time_s, or max(rounds.t_end) while none is set,
 *   idle share   sum(agent_rounds.idle_s) / (N_agents * sum(rounds.t_end - t_start)):
 *                the fraction of agent-time spent idle over the run's rounds, with
 *                N_agents = count(agents rows of the run); '-' when the run has no
 *                agent_rounds, no agents or no round time,
 *   bytes        sum(rounds.bytes),
 *   final accuracy runs.final_accuracy.
 * Per-round (--run ID): round, t_start, t_end, makespan = t_end - t_start, idle_s, bytes.
 *
 * Text output aligns columns (width counted in UTF-8 code points; double-width
 * characters are not measured) and rounds numbers for reading; a missing value is '-'.
 * CSV output (REPORT_CSV) has one header line, '\n' line ends, numbers unrounded (%.17g,
 * integers exact), missing values empty, and text quoted as RFC 4180 asks when it holds
 * a quote, comma, CR or LF, or starts or ends with a space. With --run, CSV holds only
 * the per-round rows (one header per CSV stream), with a run_id column first. */
#ifndef ANALYSIS_REPORT_H
#define ANALYSIS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "sim/hs_error.h"

enum {
    REPORT_CSV = 1u << 0,    /* CSV instead of an aligned table */
    REPORT_ROUNDS = 1u << 1, /* report_print_run: the per-round table after the summary */
};

/* `hetsim report FILE.db [--run ID] [--csv]` and `--help`. argv[0] is the command word
 * ("report") and is not read; options may come before or after FILE. Prints results to
 * stdout and "hetsim: FILE: message" errors to stderr. Returns the exit status: 0 ok,
 * 1 the file cannot be opened or read (I/O), 2 bad usage, not a hetsim database (or
 * another schema version), or no run with that ID. */
int report_cli(int argc, char **argv);

/* report_cli writing to out and err instead of stdout and stderr (tests use it). */
int report_cli_stream(int argc, char **argv, FILE *out, FILE *err);

/* Prints the summary of every run in the database at db_path to out, as a table or as
 * CSV (flags & REPORT_CSV). Returns 0, or HS_E_IO / HS_E_INPUT / HS_E_NOMEM with
 * "PATH: message" in diag; nothing is printed on failure. */
int report_print_runs(const char *db_path, unsigned flags, FILE *out, HsDiag *diag);

/* Prints the summary row of one run; with REPORT_ROUNDS also its per-round table (as
 * CSV: only the per-round rows). sim/main.c calls it after run_end with flags 0 to show
 * the result of a run: run_end has committed every row, and this opens its own
 * read-only connection, so it works while the writer's Store is still open.
 * Returns HS_E_INPUT when there is no such run; otherwise as report_print_runs. */
int report_print_run(const char *db_path, int64_t run_id, unsigned flags, FILE *out,
                     HsDiag *diag);

#endif
