/* cli_run_ranks.c — `mpirun -np K hetsim run SCENARIO.ini ...` with K > 1: one run whose
 * training is spread over the K ranks (sim/train/trainer_ranks.c). Every rank resolves
 * the scenario itself (the file, its traces and the data set must be readable on every
 * node) and plays the same run; rank 0 alone opens the database, shows progress and
 * prints the report, the others send their rows nowhere. The rows are those of one
 * process (tests/cli/mpi_run.sh). Signals: rank 0 marks the run interrupted, the others
 * ignore SIGINT/SIGTERM and are ended by rank 0. */
#include "cli/cli_report.h"
#include "cli/cli_run.h"

#include "analysis/report.h"
#include "analysis/store.h"
#include "cli/progress.h"
#include "driver/sweep.h"
#include "sim/kernel/interrupt.h"
#include "sim/run.h"
#include "sim/train/trainer.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Failures every rank meets at the same point (the run is deterministic on all of
 * them), against those of one rank (its database, a signal, its memory, a solver's wall
 * clock), after which the others may be waiting for it inside the run. */
static int cli_run_replicated(int status)
{
    return status == HS_OK || status == HS_E_DIVERGED || status == HS_E_INPUT || status == HS_E_INTERNAL ||
           status == HS_E_MISSING;
}

/* Every rank loads the scenario; rank 0 opens the database. HS_OK on every rank or the
 * first failure's status on every rank (each failure named once, by the rank that met it
 * alone or by rank 0 when all met it). */
static int cli_run_ranks_open(TrainerRanks *ranks, const CliScenarioArgs *args, const char *text, Scenario *sc,
                              Store **store, HsDiag *diag)
{
    int rank = trainer_ranks_rank(ranks), talk = rank == 0;
    int64_t sweep_runs;
    int status = cli_run_load(args, text, sc, &sweep_runs, diag);
    int failed_rank, agreed = trainer_ranks_agree(ranks, status, &failed_rank);
    if (status != HS_OK && failed_rank == rank && !talk) fprintf(stderr, "hetsim: rank %d: %s\n", rank, diag->message);
    if (agreed == HS_OK && talk) {
        if (!args->quiet) cli_run_notes(sc, sweep_runs, args->scenario_path);
        if (!args->quiet && sc->mode == RUN_MODE_TIMING)
            fprintf(stderr, "hetsim: note: in timing mode every rank plays the whole run; ranks gain nothing\n");
        cli_note_default_database(args);
        status = store_open(args->db_path, store, diag);
    }
    if (agreed == HS_OK) agreed = trainer_ranks_agree(ranks, status, NULL);
    if (agreed != HS_OK && talk) {
        if (status != HS_OK) cli_fail(status, diag->message);
        else fprintf(stderr, "hetsim: rank %d could not read the scenario (see its message)\n", failed_rank);
    }
    return agreed;
}

int cli_run_ranks(const CliScenarioArgs *args, const RunOrigin *origin)
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
    int status = sc ? HS_OK : hs_diag_set(&diag, HS_E_NOMEM, NULL, 0, "out of memory");
    /* a rank without memory for the scenario meets the others at the first agreement */
    int agreed = sc ? cli_run_ranks_open(ranks, args, origin->scenario_text, sc, &store, &diag) : trainer_ranks_agree(ranks, status, NULL);
    if (agreed != HS_OK) {
        store_close(store);
        free(sc);
        trainer_ranks_free(ranks);
        sweep_mpi_finalize();
        return hs_error_exit_status(agreed);
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
    ProgressRun shown = {.label = sc->name, .scenario = args->scenario_path, .db_path = args->db_path,
                         .agents = sc->n_agents, .total_rounds = sc->rounds, .time_budget = sc->time_budget,
                         .target_accuracy = sc->target_accuracy};
    Sink sink = sink_discard();
    if (talk) {
        interrupt_install();
        sink = progress_sink(&progress, origin_sink(&recorded, store_sink(store), origin), stderr, args->quiet,
                             &shown);
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
    if (talk && outcome.run_id >= 0) cli_print_database(args->db_path);
    if (talk && outcome.run_id >= 0 && !args->quiet && (status == HS_OK || status == HS_E_DIVERGED))
        if (report_print_run(args->db_path, outcome.run_id, 0, cli_extra_meaning, stdout, &diag) != HS_OK)
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
