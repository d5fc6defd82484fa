/* cli_run.c — `hetsim run SCENARIO.ini [--db FILE] [--set S.K=V]... [--timing-only] [--threads N] [--quiet]`.
 * The scenario is resolved completely before the database is opened, so a bad scenario
 * never touches the database. Under `mpirun -np K` (K > 1) the run's training is spread
 * over the K ranks (cli_run_ranks; sim/train/trainer_ranks.c): one run, not a sweep. */
#include "cli/cli.h"
#include "driver/origin.h"

#include "analysis/report.h"
#include "analysis/store.h"
#include "cli/progress.h"
#include "sim/run.h"
#include "sim/kernel/interrupt.h"
#include "sim/methods/method.h"
#include "sim/train/trainer.h"
#include "driver/sweep.h"

#include <signal.h>
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
    "  --quiet            no progress on stderr and no report on stdout\n"
    "\n"
    "Under `mpirun -np K hetsim run ...` the one run is spread over K processes: every\n"
    "rank plays the same run and trains its share of the agents (contiguous blocks);\n"
    "parameters move between ranks only where the method averages or reads other agents'\n"
    "models. The rows are identical to one process. Rank 0 alone writes the database and\n"
    "talks; --threads is per rank (default: the cores / the ranks on the node).\n";

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

/* Failures every rank meets at the same point (the run is deterministic on all of
 * them), against those of one rank (its database, a signal, its memory, a solver's wall
 * clock), after which the others may be waiting for it inside the run. */
static int cli_run_replicated(int status)
{
    return status == HS_OK || status == HS_E_DIVERGED || status == HS_E_INPUT || status == HS_E_INTERNAL ||
           status == HS_E_MISSING;
}

/* `mpirun -np K hetsim run ...`: every rank resolves the scenario itself (the file,
 * its traces and the data set must be readable on every node), rank 0 alone opens the
 * database, shows progress and prints the report; the others send their rows nowhere.
 * Signals: rank 0 marks the run interrupted, the others ignore SIGINT/SIGTERM and are
 * ended by rank 0. */
static int cli_run_ranks(const CliScenarioArgs *args, const RunOrigin *origin)
{
    int rank = sweep_mpi_rank(), talk = rank == 0;
    if (!sweep_mpi_compiled()) {
        if (talk)
            fprintf(stderr, "hetsim: launched by mpirun with %d ranks, but this hetsim was built without MPI "
                            "(rebuild with mpicc, or run without mpirun)\n", sweep_mpi_size());
        return 2;
    }
    HsDiag diag;
    hs_diag_clear(&diag);
    if (sweep_mpi_init(&diag) != HS_OK) return cli_fail(HS_E_IO, diag.message);
    TrainerRanks *ranks = NULL;
    if (trainer_ranks_create(&ranks, &diag) != HS_OK) {
        cli_fail(diag.status, diag.message);
        trainer_ranks_abort(NULL, 1);
    }
    Store *store = NULL;
    Scenario *sc = malloc(sizeof *sc);
    int64_t sweep_runs;
    int status = sc ? cli_run_load(args->scenario_path, args->overrides, args->n_overrides, sc, &sweep_runs, &diag)
                    : hs_diag_set(&diag, HS_E_NOMEM, NULL, 0, "out of memory");
    /* every rank reads the same file: rank 0 names a failure they all meet, a rank
     * names its own */
    int failed_rank, agreed = trainer_ranks_agree(ranks, status, &failed_rank);
    if (status != HS_OK && failed_rank == rank && !talk) fprintf(stderr, "hetsim: rank %d: %s\n", rank, diag.message);
    if (agreed == HS_OK && talk) {
        if (!args->quiet) cli_run_notes(sc, sweep_runs, args->scenario_path);
        if (!args->quiet && sc->mode == RUN_MODE_TIMING)
            fprintf(stderr, "hetsim: note: in timing mode every rank plays the whole run; ranks gain nothing\n");
        status = store_open(args->db_path, &store, &diag);
    }
    if (agreed == HS_OK) agreed = trainer_ranks_agree(ranks, status, NULL);
    if (agreed != HS_OK) {
        int exit_status = hs_error_exit_status(agreed);
        char other[96];
        snprintf(other, sizeof other, "rank %d could not read the scenario (see its message)", failed_rank);
        if (talk) exit_status = cli_fail(status != HS_OK ? status : agreed, status != HS_OK ? diag.message : other);
        store_close(store);
        free(sc);
        trainer_ranks_free(ranks);
        sweep_mpi_finalize();
        return exit_status;
    }
    if (sc->threads == 0) {
        /* the ranks on this node share its cores */
        const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        int on_node = local && atoi(local) > 0 ? atoi(local) : 1;
        int cores = trainer_thread_count(sc); /* the node's cores, with threads unset */
        sc->threads = cores / on_node > 1 ? cores / on_node : 1;
    }
    int db_existed = talk && access(args->db_path, F_OK) == 0;
    ProgressSink progress;
    OriginSink recorded;
    Sink sink = sink_discard();
    if (talk) {
        interrupt_install();
        sink = progress_sink(&progress, origin_sink(&recorded, store_sink(store), origin), stderr, args->quiet,
                             sc->rounds, sc->name);
    } else {
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
    }
    RunOutcome outcome;
    status = sim_run_ranks(sc, sink, ranks, &diag, &outcome);
    int exit_status = 0;
    if (status != HS_OK && talk) {
        const char *store_message = store_error_message(store);
        exit_status = cli_fail(status, store_message && store_message[0] ? store_message : diag.message);
        if (status == HS_E_INTERRUPTED)
            fprintf(stderr, "hetsim: run %lld was interrupted and is marked so in %s; "
                            "start it again with the same command\n", (long long)outcome.run_id, args->db_path);
    } else if (status != HS_OK) {
        exit_status = hs_error_exit_status(status);
        if (!cli_run_replicated(status)) fprintf(stderr, "hetsim: rank %d: %s\n", rank, diag.message);
    }
    store_close(store);
    if (talk && outcome.run_id < 0 && !db_existed) cli_remove_database(args->db_path);
    if (talk && outcome.run_id >= 0 && !args->quiet && (status == HS_OK || status == HS_E_DIVERGED))
        if (report_print_run(args->db_path, outcome.run_id, 0, stdout, &diag) != HS_OK)
            fprintf(stderr, "hetsim: %s\n", diag.message);
    free(sc);
    if (!cli_run_replicated(status)) {
        /* the others may be waiting inside the run: rank 0 has written its rows and ends
         * the job; another rank that failed alone ends it at once */
        fflush(stdout);
        fflush(stderr);
        trainer_ranks_abort(ranks, exit_status ? exit_status : 1);
    }
    trainer_ranks_barrier(ranks);
    trainer_ranks_free(ranks);
    sweep_mpi_finalize();
    return exit_status;
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
         * file that cannot be read is reported by the run's own load. Under mpirun the
         * command says with how many ranks (the rows are the same for any number). */
        HsDiag ignored;
        char *text = NULL;
        if (cli_read_text(args.scenario_path, &text, &ignored) != HS_OK) text = NULL;
        int n_ranks = sweep_mpi_size();
        char *command = origin_command("run", argc, argv);
        if (command && n_ranks > 1) {
            size_t size = strlen(command) + 32;
            char *ranked = malloc(size);
            if (ranked) snprintf(ranked, size, "mpirun -np %d %s", n_ranks, command);
            free(command);
            command = ranked;
        }
        char *set = origin_overrides(args.overrides, args.n_overrides);
        RunOrigin origin = {.command = command, .scenario_text = text, .overrides = set};
        exit_status = n_ranks > 1 ? cli_run_ranks(&args, &origin) : cli_run_scenario(&args, &origin);
        free(text);
        free(command);
        free(set);
    }
    free(overrides);
    return exit_status;
}
