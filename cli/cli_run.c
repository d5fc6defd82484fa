/* cli_run.c — `hetsim run SCENARIO.ini [--db FILE] [--set S.K=V]... [--timing-only] [--threads N] [--quiet]`.
 * The scenario is resolved completely before the database is opened, so a bad scenario
 * never touches the database. Under `mpirun -np K` (K > 1) the run's training is spread
 * over the K ranks (cli_run_ranks.c; sim/train/trainer_ranks.c): one run, not a sweep. */
#include "cli/cli.h"
#include "cli/cli_run.h"
#include "driver/origin.h"

#include "analysis/report.h"
#include "analysis/store.h"
#include "base/input_file.h"
#include "cli/cli_check.h"
#include "cli/cli_report.h"
#include "cli/progress.h"
#include "sim/run.h"
#include "sim/scenario/inidoc.h"
#include "sim/kernel/interrupt.h"
#include "sim/methods/method.h"
#include "driver/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char cli_run_usage[] =
    "usage: hetsim run SCENARIO.ini [--db FILE] [--set SECTION.KEY=VALUE]... [--add-group NAME]...\n"
    "                  [--timing-only] [--threads N] [--dry-run] [--quiet]\n"
    "\n"
    "Runs one scenario and appends it to the database (default results.db).\n"
    "  --db FILE          result database (created if missing; runs append)\n"
    "  --set S.K=VALUE    override a scenario key, e.g. --set agents.count=32\n"
    "                     or a group key: --set agents.stragglers.compute=\"100 MFLOPS\"\n"
    "                     (only a group the file defines: a misspelt one is an error)\n"
    "  --add-group NAME   add an empty group [agents.NAME] for --set to fill, e.g.\n"
    "                     --add-group fast --set agents.fast.count=4 --set agents.fast.compute=...\n"
    "  --timing-only      same as --set run.mode=timing: no arithmetic, identical timings\n"
    "  --threads N        train mode's worker threads (default: [run] threads, else the\n"
    "                     number of cores); results are identical for every N\n"
    "  --dry-run          check the scenario and print it resolved (every key, SI units);\n"
    "                     run nothing, write nothing (as `hetsim check`)\n"
    "  --quiet            no progress or notes on stderr and no report on stdout\n"
    "\n"
    "Progress goes to stderr: a line when the run starts (scenario, method, agents, mode,\n"
    "database), then a bar (a line per round when stderr is not a terminal) with the wall\n"
    "time elapsed and an ETA. Once rows are written, stdout says where, in one line:\n"
    "  database: PATH\n"
    "(--quiet or not), then the run's summary.\n"
    "\n"
    "Under `mpirun -np K hetsim run ...` the one run is spread over K processes: every\n"
    "rank plays the same run and trains its share of the agents (contiguous blocks);\n"
    "parameters move between ranks only where the method averages or reads other agents'\n"
    "models. The rows are identical to one process. Rank 0 alone writes the database and\n"
    "talks; --threads is per rank (default: the cores / the ranks on the node).\n";

void cli_remove_database(const char *path)
{
    char side[4096];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

/* The base point of the scenario (text, the file read once, without [sweep], with the
 * overrides). A [sweep] in the file is checked exactly as `hetsim sweep` checks it, so a
 * typo there is not silently ignored; *sweep_runs gets its run count (0 without [sweep]). */
int cli_run_load(const CliScenarioArgs *args, const char *text, Scenario *sc, int64_t *sweep_runs, HsDiag *diag)
{
    IniDoc doc;
    *sweep_runs = 0;
    int status = inidoc_load_string(args->scenario_path, text, &doc, diag);
    if (status == HS_OK) status = cli_apply_overrides(&doc, args, diag);
    if (status == HS_OK) status = scenario_resolve(&doc, sc, diag);
    if (status == HS_OK && sc->has_sweep) status = sweep_check(&doc, sweep_runs, diag);
    inidoc_free(&doc);
    return status;
}

/* One line on stderr for what the file holds that this run does not use. */
void cli_run_notes(const Scenario *sc, int64_t sweep_runs, const char *path)
{
    if (sc->has_sweep)
        fprintf(stderr, "hetsim: note: %s defines a sweep of %lld runs; 'hetsim sweep' runs them, 'run' runs "
                        "its base point only\n", path, (long long)sweep_runs);
    for (const char *line = sc->notes; *line;) {
        const char *end = strchr(line, '\n');
        int length = end ? (int)(end - line) : (int)strlen(line);
        fprintf(stderr, "hetsim: note: %.*s\n", length, line);
        line += length + (end != NULL);
    }
    if (!sc->has_sweep && sc->topology_line > 0 && !(method_lookup(sc->method)->capabilities & METHOD_USES_TOPOLOGY))
        fprintf(stderr, "hetsim: note: %s:%d: method %s does not use [topology]\n", path, sc->topology_line,
                sc->method);
}

int cli_fail(int status, const char *message)
{
    fprintf(stderr, "hetsim: %s\n", message);
    return hs_error_exit_status(status);
}

/* --dry-run: the run's checks (its agents drawn too) and the resolved scenario on
 * stdout as `hetsim check` prints it; nothing is opened for writing. */
static int cli_run_dry(const CliScenarioArgs *args)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    int64_t sweep_runs = 0;
    Scenario *sc = malloc(sizeof *sc);
    char *text = NULL;
    int status = sc ? input_file_read_text(args->scenario_path, INIDOC_FILE_MAX, &text, NULL, &diag)
                    : hs_diag_set(&diag, HS_E_NOMEM, NULL, 0, "out of memory");
    if (status == HS_OK) status = cli_run_load(args, text, sc, &sweep_runs, &diag);
    free(text);
    /* every check the run makes before its database: the agents drawn, the files read */
    if (status == HS_OK) status = cli_preflight_run(sc, &diag);
    char *config = status == HS_OK ? scenario_config_string(sc) : NULL;
    if (status == HS_OK && config == NULL) status = hs_diag_set(&diag, HS_E_NOMEM, NULL, 0, "out of memory");
    if (status != HS_OK) {
        free(sc);
        return cli_fail(status, diag.message);
    }
    cli_check_print_valid(stdout, args->scenario_path);
    if (sc->has_sweep)
        printf("; it defines a sweep of %lld runs; `hetsim run` runs its base point, printed here\n",
               (long long)sweep_runs);
    printf("; `hetsim run` would append it to %s%s\n", args->db_path, args->db_given ? "" : " (no --db given)");
    printf("; the resolved scenario (every key, numbers in SI units, as runs.config records it):\n%s", config);
    free(config);
    free(sc);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* Runs the scenario into the database and prints its report; the exit status. */
static int cli_run_scenario(const CliScenarioArgs *args, const RunOrigin *origin)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    Store *store = NULL;
    Scenario *sc = malloc(sizeof *sc);
    int64_t sweep_runs;
    int status = sc ? cli_run_load(args, origin->scenario_text, sc, &sweep_runs, &diag)
                    : hs_diag_set(&diag, HS_E_NOMEM, NULL, 0, "out of memory");
    if (status != HS_OK) goto fail;
    if (!args->quiet) cli_run_notes(sc, sweep_runs, args->scenario_path);

    /* every input file is read before the database is opened */
    if ((status = cli_preflight_run(sc, &diag)) != HS_OK) goto fail;
    const char *db_path = args->db_path;
    cli_note_default_database(args);
    int db_existed = access(db_path, F_OK) == 0;
    if ((status = cli_check_database(db_path, &diag)) != HS_OK) goto fail;
    if ((status = store_open(db_path, &store, &diag)) != HS_OK) goto fail;
    interrupt_install();
    ProgressSink progress;
    OriginSink recorded;
    ProgressRun shown = {.label = sc->name, .scenario = args->scenario_path, .db_path = db_path,
                         .agents = sc->n_agents, .total_rounds = sc->rounds, .time_budget = sc->time_budget,
                         .target_accuracy = sc->target_accuracy};
    Sink sink = progress_sink(&progress, origin_sink(&recorded, store_sink(store), origin), stderr, args->quiet,
                              &shown);
    RunOutcome outcome;
    status = sim_run(sc, sink, &diag, &outcome);
    int exit_status = 0;
    if (status != HS_OK) {
        const char *store_message = store_error_message(store);
        exit_status = cli_fail(status, store_message && store_message[0] ? store_message : diag.message);
        if (status == HS_E_INTERRUPTED)
            fprintf(stderr, "hetsim: run %lld was interrupted and is marked so in %s; "
                            "start it again with the same command\n", (long long)outcome.run_id, db_path);
    }
    store_close(store);
    /* A run refused before it started (e.g. a bad trace) leaves no database behind. */
    if (outcome.run_id < 0 && !db_existed) cli_remove_database(db_path);
    if (outcome.run_id >= 0) cli_print_database(db_path);
    if (outcome.run_id >= 0 && !args->quiet && (status == HS_OK || status == HS_E_DIVERGED))
        if (report_print_run(db_path, outcome.run_id, 0, cli_extra_meaning, stdout, &diag) != HS_OK)
            fprintf(stderr, "hetsim: %s\n", diag.message);
    free(sc);
    return exit_status;
fail:
    free(sc);
    return cli_fail(status, diag.message);
}

int cli_run(int argc, char **argv)
{
    /* room for argc --set values, then argc --add-group names */
    const char **overrides = calloc(2 * ((size_t)argc + 1), sizeof *overrides);
    if (overrides == NULL) return cli_fail(HS_E_NOMEM, "out of memory");
    CliScenarioArgs args = {.db_path = "results.db", .overrides = overrides, .groups = overrides + argc + 1};
    int exit_status = -1, dry_run = 0;
    for (int i = 0; exit_status < 0 && i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(cli_run_usage, stdout);
            exit_status = 0;
        } else if (strcmp(argv[i], "--dry-run") == 0) {
            dry_run = 1;
        } else if (cli_scenario_arg("run", cli_run_usage, argc, argv, &i, &args) != 0) {
            exit_status = 2;
        }
    }
    if (exit_status < 0 && args.scenario_path == NULL) {
        fputs(cli_run_usage, stderr);
        exit_status = 2;
    }
    int n_ranks = sweep_mpi_size();
    /* under mpirun every rank would print the same: rank 0 checks and prints */
    if (exit_status < 0 && dry_run) exit_status = sweep_mpi_rank() == 0 ? cli_run_dry(&args) : 0;
    if (exit_status < 0) {
        /* the file read once: what is resolved is what runs.scenario_text records (every
         * rank under mpirun reads it itself) */
        HsDiag diag;
        hs_diag_clear(&diag);
        char *text = NULL;
        int status = input_file_read_text(args.scenario_path, INIDOC_FILE_MAX, &text, NULL, &diag);
        if (status != HS_OK) {
            free(overrides);
            return cli_fail(status, diag.message);
        }
        /* provenance: runs.command, scenario_text, overrides; under mpirun the command
         * says with how many ranks (the rows are the same for any number) */
        char *command = origin_command("run", argc, argv);
        if (command && n_ranks > 1) {
            size_t size = strlen(command) + 32;
            char *ranked = malloc(size);
            if (ranked) snprintf(ranked, size, "mpirun -np %d %s", n_ranks, command);
            free(command);
            command = ranked;
        }
        char *set = origin_overrides(args.groups, args.n_groups, args.overrides, args.n_overrides);
        RunOrigin origin = {.command = command, .scenario_text = text, .overrides = set};
        exit_status = n_ranks > 1 ? cli_run_ranks(&args, &origin) : cli_run_scenario(&args, &origin);
        free(text);
        free(command);
        free(set);
    }
    free(overrides);
    return exit_status;
}
