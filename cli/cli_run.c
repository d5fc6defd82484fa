/* cli_run.c — `hetsim run SCENARIO.ini [--db FILE] [--set S.K=V]... [--timing-only] [--threads N] [--quiet]`.
 * The scenario is resolved completely before the database is opened, so a bad scenario
 * never touches the database. */
#include "cli/cli.h"
#include "driver/origin.h"

#include "analysis/report.h"
#include "analysis/store.h"
#include "cli/progress.h"
#include "sim/run.h"
#include "sim/kernel/interrupt.h"
#include "sim/methods/method.h"
#include "driver/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char cli_run_usage[] =
    "usage: hetsim run SCENARIO.ini [--db FILE] [--set SECTION.KEY=VALUE]... [--timing-only] [--threads N]\n"
    "                  [--quiet]\n"
    "\n"
    "Runs one scenario and appends it to the database (default results.db).\n"
    "  --db FILE          result database (created if missing; runs append)\n"
    "  --set S.K=VALUE    override a scenario key, e.g. --set agents.count=32\n"
    "                     or a group key: --set agents.stragglers.compute=\"100 MFLOPS\"\n"
    "  --timing-only      same as --set run.mode=timing: no arithmetic, identical timings\n"
    "  --threads N        train mode's worker threads (default: [run] threads, else the\n"
    "                     number of cores); results are identical for every N\n"
    "  --quiet            no progress on stderr and no report on stdout\n";

static void cli_remove_database(const char *path)
{
    char side[4096];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

/* The base point of the scenario (the file without [sweep], with the overrides). A
 * [sweep] in the file is checked exactly as `hetsim sweep` checks it, so a typo there is
 * not silently ignored; *sweep_runs gets its run count (0 without [sweep]). */
static int cli_run_load(const char *path, const char *const *overrides, int n_overrides, Scenario *sc,
                        int64_t *sweep_runs, HsDiag *diag)
{
    IniDoc doc;
    *sweep_runs = 0;
    int status = inidoc_load(path, &doc, diag);
    for (int i = 0; status == HS_OK && i < n_overrides; i++) status = inidoc_apply_set(&doc, overrides[i], diag);
    if (status == HS_OK) status = scenario_resolve(&doc, sc, diag);
    if (status == HS_OK && sc->has_sweep) status = sweep_check(&doc, sweep_runs, diag);
    inidoc_free(&doc);
    return status;
}

/* One line on stderr for what the file holds that this run does not use. */
static void cli_run_notes(const Scenario *sc, int64_t sweep_runs, const char *path)
{
    if (sc->has_sweep)
        fprintf(stderr, "hetsim: note: %s defines a sweep of %lld runs; 'hetsim sweep' runs them, 'run' runs "
                        "its base point only\n", path, (long long)sweep_runs);
    if (!sc->has_sweep && sc->topology_line > 0 && !(method_lookup(sc->method)->capabilities & METHOD_USES_TOPOLOGY))
        fprintf(stderr, "hetsim: note: %s:%d: method %s does not use [topology]\n", path, sc->topology_line,
                sc->method);
}

int cli_fail(int status, const char *message)
{
    fprintf(stderr, "hetsim: %s\n", message);
    return hs_error_exit_status(status);
}

/* Runs the scenario into the database and prints its report; the exit status. */
static int cli_run_scenario(const CliScenarioArgs *args, const RunOrigin *origin)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    Store *store = NULL;
    Scenario *sc = malloc(sizeof *sc);
    int64_t sweep_runs;
    int status = sc ? cli_run_load(args->scenario_path, args->overrides, args->n_overrides, sc, &sweep_runs, &diag)
                    : hs_diag_set(&diag, HS_E_NOMEM, NULL, 0, "out of memory");
    if (status != HS_OK) goto fail;
    if (!args->quiet) cli_run_notes(sc, sweep_runs, args->scenario_path);

    const char *db_path = args->db_path;
    int db_existed = access(db_path, F_OK) == 0;
    if ((status = store_open(db_path, &store, &diag)) != HS_OK) goto fail;
    interrupt_install();
    ProgressSink progress;
    OriginSink recorded;
    Sink sink = progress_sink(&progress, origin_sink(&recorded, store_sink(store), origin), stderr, args->quiet,
                              sc->rounds, sc->name);
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
    if (outcome.run_id >= 0 && !args->quiet && (status == HS_OK || status == HS_E_DIVERGED))
        if (report_print_run(db_path, outcome.run_id, 0, stdout, &diag) != HS_OK)
            fprintf(stderr, "hetsim: %s\n", diag.message);
    free(sc);
    return exit_status;
fail:
    free(sc);
    return cli_fail(status, diag.message);
}

int cli_run(int argc, char **argv)
{
    const char **overrides = calloc((size_t)argc + 1, sizeof *overrides);
    if (overrides == NULL) return cli_fail(HS_E_NOMEM, "out of memory");
    CliScenarioArgs args = {.db_path = "results.db", .overrides = overrides};
    int exit_status = -1;
    for (int i = 0; exit_status < 0 && i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(cli_run_usage, stdout);
            exit_status = 0;
        } else if (cli_scenario_arg("run", cli_run_usage, argc, argv, &i, &args) != 0) {
            exit_status = 2;
        }
    }
    if (exit_status < 0 && args.scenario_path == NULL) {
        fputs(cli_run_usage, stderr);
        exit_status = 2;
    }
    if (exit_status < 0) {
        /* provenance (runs.command, scenario_text, overrides): the file as read now; a
         * file that cannot be read is reported by the run's own load */
        HsDiag ignored;
        char *text = NULL;
        if (cli_read_text(args.scenario_path, &text, &ignored) != HS_OK) text = NULL;
        char *command = origin_command("run", argc, argv);
        char *set = origin_overrides(args.overrides, args.n_overrides);
        RunOrigin origin = {.command = command, .scenario_text = text, .overrides = set};
        exit_status = cli_run_scenario(&args, &origin);
        free(text);
        free(command);
        free(set);
    }
    free(overrides);
    return exit_status;
}
