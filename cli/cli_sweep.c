/* cli_sweep.c — `hetsim sweep SCENARIO.ini --db FILE [--set S.K=V]... [--jobs N] [--resume]`.
 *
 * Every run of the expansion is resolved before the database is opened, so a bad point
 * stops the sweep before anything is written. Runs then go to worker processes (fork,
 * default one per core; driver/sweep_local.c) or, under mpirun, to MPI ranks (driver/sweep_mpi.c). Either way one
 * process writes the database: workers simulate into a SweepWire sink whose records
 * travel over a pipe to the parent, which replays them into the Store. So there is no
 * lock contention, rows of a run are written in the order the engine produced them, and
 * a killed worker leaves only its open run, which the parent marks failed.

 *
 * Claims (analysis/store.h): the sweep is claimed in the database in one write
 * transaction, which reserves its run ids (run i of the expansion gets first_run + i),
 * and each run is claimed in another just before it is handed out. Without --resume a
 * database that already holds the sweep is refused, so a point never appears twice.
 * --resume: the sweep id is a hash of the resolved expansion (sweep.h). The runs of that
 * id that are 'done' (or 'diverged', a complete and deterministic result) are kept; an
 * incomplete run ('running' from a killed sweep, 'interrupted', 'failed') is deleted
 * with its rows when its point is claimed again — unless the process that claimed it
 * is alive, in which case the point is left to it: two --resume at once share the
 * missing points, and a --resume beside a running sweep does what the sweep has not
 * taken.
 *
 * SIGINT/SIGTERM: the parent forwards the signal to the workers; each ends its run as
 * 'interrupted' through the engine's normal path, the parent writes what arrives, hands
 * out nothing more, and prints the command that finishes the sweep. */
#include "cli/cli.h"
#include "driver/origin.h"

#include "analysis/store.h"
#include "base/input_file.h"
#include "cli/cli_check.h"
#include "cli/cli_only.h"
#include "cli/progress.h"
#include "driver/sweep.h"
#include "sim/kernel/interrupt.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char cli_sweep_usage[] =
    "usage: hetsim sweep SCENARIO.ini [--db FILE] [--set SECTION.KEY=VALUE]... [--add-group NAME]...\n"
    "                    [--jobs N] [--resume] [--only KEY=V1,V2]... [--dry-run] [--timing-only]\n"
    "                    [--threads N] [--quiet]\n"
    "\n"
    "Runs every point of the scenario's [sweep] (Cartesian product of the listed values,\n"
    "`repeat` seeds each) and appends them to the database (default results.db).\n"
    "  --db FILE          result database; only this process writes it\n"
    "  --jobs N           worker processes (default: the number of cores)\n"
    "  --resume           finish an interrupted or killed sweep: keep its done runs,\n"
    "                     drop the incomplete ones, run the missing points\n"
    "  --only KEY=V1,V2   run only the points whose swept KEY is one of the values\n"
    "                     (repeatable; keys narrow each other); the runs keep the ids\n"
    "                     and sweep id they have in the whole sweep, so later --only or\n"
    "                     --resume add to the same sweep\n"
    "  --dry-run          check every point, print the resolved scenario and the\n"
    "                     numbered points (as `hetsim check`); write nothing\n"
    "  --set S.K=VALUE    override a scenario key before expansion (swept keys win);\n"
    "                     a group key only for a group the file defines\n"
    "  --add-group NAME   add an empty group [agents.NAME] for --set and [sweep] keys\n"
    "  --timing-only      same as --set run.mode=timing\n"
    "  --threads N        worker threads per train-mode run (default: [run] threads, else\n"
    "                     cores / jobs, at least 1; 1 per rank under mpirun)\n"
    "  --quiet            no progress or notes on stderr and no summary on stdout\n"
    "Under `mpirun -np K hetsim sweep ...` the runs spread over the K ranks instead (rank 0\n"
    "writes the database; --jobs is ignored).\n"
    "Once it has run, stdout says where the rows went, in one line (--quiet or not):\n"
    "  database: PATH\n";

/* ---- the command ---- */

static int cli_preflight_check(void *ctx, const Scenario *sc, HsDiag *diag)
{
    return cli_preflight(ctx, sc, diag);
}

static int sweep_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Claims the sweep in the database (reserving its run ids in point order) and decides
 * which runs to do: every run but the complete ones. Without --resume a database that
 * already holds the sweep is refused, whatever is in it, and nothing is written. The
 * incomplete runs of an earlier attempt are not deleted here: each run is claimed just
 * before it is handed out (sweep_claim), which deletes a stale attempt of its point and
 * leaves a point another live process is running alone. */
static int sweep_plan(Store *store, Sweep *sw, int resume, const unsigned char *selected, int64_t n_selected,
                      const char *db_path, int quiet, int64_t **todo, int64_t *n_todo, int64_t *n_kept,
                      int64_t *n_kept_diverged, HsDiag *diag)
{
    StoreSweepRun *runs = NULL;
    int count = 0;
    unsigned char *kept = calloc((size_t)sw->n_runs, 1);
    *todo = malloc((size_t)sw->n_runs * sizeof **todo);
    int status = HS_OK;
    if (kept == NULL || *todo == NULL) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    StoreSweepClaim claim = {.sweep = sw->id, .runs = sw->n_runs, .points = sw->n_points, .repeat = sw->repeat};
    int existed = 0;
    int subset = selected != NULL;  /* --only: the runs of other points may be there */
    if (!resume && !subset) {
        /* refused before claiming when the file holds the sweep; the claim checks again
         * under the write lock, for a second process starting at the same moment */
        if ((status = store_list_sweep_runs(store, sw->id, &runs, &count)) != HS_OK) {
            hs_diag_set(diag, status, NULL, 0, "%s", store_error_message(store));
            goto done;
        }
    }
    if (count == 0 && (status = store_claim_sweep(store, &claim, &sw->first_run, &existed)) != HS_OK) {
        hs_diag_set(diag, status, NULL, 0, "%s", store_error_message(store));
        goto done;
    }
    if (!resume && !subset && (count > 0 || existed)) {
        if (count == 0 && (status = store_list_sweep_runs(store, sw->id, &runs, &count)) != HS_OK) {
            hs_diag_set(diag, status, NULL, 0, "%s", store_error_message(store));
            goto done;
        }
        int64_t done_before = 0;
        for (int i = 0; i < count; i++)
            if (runs[i].status && strcmp(runs[i].status, "done") == 0) done_before++;
        status = hs_diag_set(diag, HS_E_INPUT, db_path, 0,
                             "already holds sweep %s (%d runs, %lld of %lld done); add --resume to "
                             "finish it, or use another --db",
                             sw->id, count, (long long)done_before, (long long)sw->n_runs);
        goto done;
    }
    if ((status = store_list_sweep_runs(store, sw->id, &runs, &count)) != HS_OK) {
        hs_diag_set(diag, status, NULL, 0, "%s", store_error_message(store));
        goto done;
    }
    /* --only without --resume: refused when a kept point is there already, so a point
     * never appears twice; other points of the sweep may be (an earlier --only) */
    for (int i = 0; subset && !resume && i < count; i++) {
        int64_t index = sweep_find(sw, runs[i].point);
        if (index >= 0 && selected[index]) {
            status = hs_diag_set(diag, HS_E_INPUT, db_path, 0,
                                 "already holds run %lld (%s) of sweep %s, which --only selects; add --resume "
                                 "to finish what is missing, or use another --db",
                                 (long long)runs[i].run_id, runs[i].point, sw->id);
            goto done;
        }
    }
    int64_t incomplete = 0;
    *n_kept_diverged = 0;
    for (int i = 0; i < count; i++) {
        int64_t index = sweep_find(sw, runs[i].point);
        if (index >= 0 && subset && !selected[index]) continue;  /* not this attempt's */
        int complete = runs[i].status != NULL &&
                       (strcmp(runs[i].status, "done") == 0 || strcmp(runs[i].status, "diverged") == 0);
        if (index >= 0 && complete && !kept[index]) {
            kept[index] = 1;
            if (strcmp(runs[i].status, "diverged") == 0) (*n_kept_diverged)++;
        } else if (complete) {
            /* a second complete copy of a point (an older hetsim's double start) */
            if ((status = store_delete_run(store, runs[i].run_id)) != HS_OK) {
                hs_diag_set(diag, status, NULL, 0, "%s", store_error_message(store));
                goto done;
            }
        } else {
            incomplete++;
        }
    }
    *n_todo = *n_kept = 0;
    for (int64_t i = 0; i < sw->n_runs; i++) {
        if (subset && !selected[i]) continue;
        if (kept[i]) (*n_kept)++;
        else (*todo)[(*n_todo)++] = i;
    }
    if (resume && !quiet) {
        if (count == 0)
            fprintf(stderr, "hetsim: no earlier runs of sweep %s in %s; starting it\n", sw->id, db_path);
        else
            fprintf(stderr, "hetsim: resuming sweep %s: %lld of %lld runs kept, %lld incomplete, %lld to run\n",
                    sw->id, (long long)*n_kept, (long long)n_selected, (long long)incomplete, (long long)*n_todo);
    }
done:
    store_sweep_runs_free(runs, count);
    free(kept);
    if (status != HS_OK) {
        free(*todo);
        *todo = NULL;
    }
    return status;
}

/* The master's claim of each run before it is handed out (SweepClaimFn). */
typedef struct SweepClaimCtx {
    Store *store;
    const Sweep *sw;
    char holder[160];       /* the last process found running a point */
} SweepClaimCtx;

static int sweep_claim(void *ctx, const int64_t *indices, int count, SweepState *outcomes, HsDiag *diag)
{
    SweepClaimCtx *c = ctx;
    const char *points[SWEEP_CLAIM_BATCH_MAX] = {0};
    int64_t ids[SWEEP_CLAIM_BATCH_MAX] = {0};
    StoreClaim claims[SWEEP_CLAIM_BATCH_MAX];
    char holder[160];
    if (count > SWEEP_CLAIM_BATCH_MAX) return hs_diag_set(diag, HS_E_INTERNAL, NULL, 0, "claim batch too large");
    for (int i = 0; i < count; i++) {
        points[i] = c->sw->labels[indices[i]];
        ids[i] = c->sw->first_run + indices[i];
    }
    int status = store_claim_runs(c->store, c->sw->id, count, points, ids, claims, holder, sizeof holder);
    if (status != HS_OK) return hs_diag_set(diag, status, NULL, 0, "%s", store_error_message(c->store));
    for (int i = 0; i < count; i++)
        outcomes[i] = claims[i] == STORE_CLAIMED ? SWEEP_STATE_TODO
                      : claims[i] == STORE_COMPLETE ? SWEEP_STATE_COMPLETE_ELSEWHERE : SWEEP_STATE_HELD;
    if (holder[0]) snprintf(c->holder, sizeof c->holder, "%s", holder);
    return HS_OK;
}

static void sweep_print_summary(const SweepMaster *m, const char *db_path, int64_t n_selected, int64_t kept,
                                int64_t kept_diverged, FILE *out)
{
    const Sweep *sw = m->sweep;
    if (n_selected < sw->n_runs)
        fprintf(out, "sweep %s: %lld of its %lld runs (--only) in %s: %lld done", sw->id, (long long)n_selected,
                (long long)sw->n_runs, db_path, (long long)(m->done + kept - kept_diverged + m->complete_elsewhere));
    else
        fprintf(out, "sweep %s: %lld runs in %s: %lld done", sw->id, (long long)sw->n_runs, db_path,
                (long long)(m->done + kept - kept_diverged + m->complete_elsewhere));
    if (kept > 0) fprintf(out, " (%lld before this attempt)", (long long)(kept - kept_diverged));
    if (m->complete_elsewhere > 0) fprintf(out, " (%lld by another process)", (long long)m->complete_elsewhere);
    if (m->held > 0) fprintf(out, ", %lld being run by another process", (long long)m->held);
    if (m->failed) fprintf(out, ", %lld failed", (long long)m->failed);
    if (m->diverged + kept_diverged) fprintf(out, ", %lld diverged", (long long)(m->diverged + kept_diverged));
    if (m->interrupted) fprintf(out, ", %lld interrupted", (long long)m->interrupted);
    int64_t not_run = m->total - m->finished;  /* finished counts the claims left to others */
    if (not_run > 0) fprintf(out, ", %lld not run", (long long)not_run);
    fputc('\n', out);
    if (m->finished == 0) return;
    size_t width = 5;
    for (int64_t i = 0; i < sw->n_runs; i++)
        if (m->state[i] >= SWEEP_STATE_DONE && m->state[i] <= SWEEP_STATE_INTERRUPTED && strlen(sw->labels[i]) > width)
            width = strlen(sw->labels[i]);
    if (width > 100) width = 100;
    fprintf(out, "%-*s  %-11s  %14s  %8s\n", (int)width, "point", "status", "virtual time s", "accuracy");
    static const char *const names[] = {"todo", "kept", "handed", "done", "failed", "diverged", "interrupted",
                                        "done", "elsewhere"};
    for (int64_t i = 0; i < sw->n_runs; i++) {
        if (m->state[i] < SWEEP_STATE_DONE || m->state[i] > SWEEP_STATE_INTERRUPTED) continue;
        char t[32] = "-", a[32] = "-";
        if (isfinite(m->sim_time[i])) snprintf(t, sizeof t, "%.6g", m->sim_time[i]);
        if (isfinite(m->accuracy[i])) snprintf(a, sizeof a, "%.4f", m->accuracy[i]);
        fprintf(out, "%-*s  %-11s  %14s  %8s\n", (int)width, sw->labels[i], names[m->state[i]], t, a);
    }
}

/* Prints the command that finishes the sweep: the same arguments plus --resume. */
static void sweep_print_resume(int argc, char **argv, int resume, int mpi_size)
{
    fputs("hetsim: finish the sweep with: ", stderr);
    if (mpi_size > 1) fprintf(stderr, "mpirun -np %d ", mpi_size);
    fputs("hetsim sweep", stderr);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int plain = a[0] != '\0' && strpbrk(a, " \t'\"$`\\()*?;&|<>") == NULL;
        if (plain) fprintf(stderr, " %s", a);
        else {
            fputs(" '", stderr);
            for (const char *p = a; *p; p++) {
                if (*p == '\'') fputs("'\\''", stderr);
                else fputc(*p, stderr);
            }
            fputc('\'', stderr);
        }
    }
    if (!resume) fputs(" --resume", stderr);
    fputc('\n', stderr);
}

int cli_sweep(int argc, char **argv)
{
    int resume = 0, jobs = 0, dry_run = 0, n_only = 0;
    /* room for argc --set values, then argc --add-group names */
    const char **overrides = calloc(2 * ((size_t)argc + 1), sizeof *overrides);
    const char **only = calloc((size_t)argc + 1, sizeof *only);
    if (overrides == NULL || only == NULL) {
        free(overrides);
        free(only);
        return cli_fail(HS_E_NOMEM, "out of memory");
    }
    CliScenarioArgs args = {.db_path = "results.db", .overrides = overrides, .groups = overrides + argc + 1};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(cli_sweep_usage, stdout);
            free(overrides);
            free(only);
            return 0;
        } else if ((strcmp(a, "--jobs") == 0 || strcmp(a, "-j") == 0) && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end != '\0' || end == argv[i] || n < 1 || n > 4096) {
                fprintf(stderr, "hetsim sweep: --jobs needs a number in [1, 4096], got '%s'\n", argv[i]);
                free(overrides);
                free(only);
                return 2;
            }
            jobs = (int)n;
        } else if (strcmp(a, "--resume") == 0) {
            resume = 1;
        } else if (strcmp(a, "--dry-run") == 0) {
            dry_run = 1;
        } else if (strcmp(a, "--only") == 0 && i + 1 < argc) {
            only[n_only++] = argv[++i];
        } else if (strncmp(a, "--only=", 7) == 0) {
            only[n_only++] = a + 7;
        } else if (cli_scenario_arg("sweep", cli_sweep_usage, argc, argv, &i, &args) != 0) {
            free(overrides);
            free(only);
            return 2;
        }
    }
    const char *scenario_path = args.scenario_path, *db_path = args.db_path;
    int quiet = args.quiet, n_overrides = args.n_overrides;
    if (scenario_path == NULL) {
        fputs(cli_sweep_usage, stderr);
        free(overrides);
        free(only);
        return 2;
    }
    if (dry_run) {
        /* under mpirun only rank 0 speaks; nothing is run, so nothing needs MPI */
        int status = sweep_mpi_size() > 1 && sweep_mpi_rank() != 0 ? 0
                     : cli_check_sweep("sweep", &args, only, n_only, stdout);
        free(overrides);
        free(only);
        return status;
    }
    if (jobs == 0) jobs = sweep_cores();

    /* Under mpirun every rank gets here; only rank 0 talks to the user. */
    int mpi = sweep_mpi_size() > 1, rank = mpi ? sweep_mpi_rank() : 0;
    int talk = rank == 0;
    if (mpi && !sweep_mpi_compiled()) {
        if (talk)
            fprintf(stderr, "hetsim: launched by mpirun with %d ranks, but this hetsim was built without MPI "
                            "(rebuild with mpicc, or run without mpirun and use --jobs)\n", sweep_mpi_size());
        free(overrides);
        free(only);
        return 2;
    }

    HsDiag diag;
    hs_diag_clear(&diag);
    int status = HS_OK, exit_status = 0, mpi_started = 0, ranks_waiting = 0;
    char *text = NULL, *origin_command_text = NULL, *origin_set_text = NULL, host[256];
    RunOrigin origin;
    SweepCheckpointer checkpointer = {.pid = -1, .fd = -1};
    IniDoc doc;
    Sweep sw;
    Store *store = NULL;
    SweepMaster master;
    SweepBar bar;
    int64_t *todo = NULL, n_todo = 0, n_kept = 0, n_kept_diverged = 0, n_selected = 0;
    unsigned char *selected = NULL;  /* --only: the runs kept, NULL for all */
    memset(&doc, 0, sizeof doc);
    memset(&sw, 0, sizeof sw);
    memset(&master, 0, sizeof master);

    if (mpi) {
        if ((status = sweep_mpi_init(&diag)) != HS_OK) goto fail;
        mpi_started = 1;
    }
    /* Rank 0 reads the file and the other ranks get its text, so only rank 0 needs it. */
    if (talk) status = input_file_read_text(scenario_path, INIDOC_FILE_MAX, &text, NULL, &diag);
    if (mpi) status = sweep_mpi_share_text(&text, status, &diag);
    if (status != HS_OK) goto fail;
    if ((status = inidoc_load_string(scenario_path, text, &doc, &diag)) != HS_OK) goto fail;
    if ((status = cli_apply_overrides(&doc, &args, &diag)) != HS_OK) goto fail;
    if ((status = sweep_parse(&doc, &sw, &diag)) != HS_OK) goto fail;
    n_selected = sw.n_runs;
    if (n_only > 0) {
        if ((selected = malloc((size_t)sw.n_runs)) == NULL) {
            status = hs_diag_set(&diag, HS_E_NOMEM, NULL, 0, "out of memory");
            goto fail;
        }
        /* every rank decides the same; only rank 0 says why it refuses */
        char why[1024];
        if ((exit_status = cli_only_select(&sw, only, n_only, selected, &n_selected, why, sizeof why)) != 0) {
            if (talk) fprintf(stderr, "hetsim sweep: %s\n", why);
            goto cleanup;
        }
    }
    /* provenance of every run (driver/origin.h); every rank has the text and the command */
    origin_command_text = origin_command("sweep", argc, argv);
    origin_set_text = origin_overrides(args.groups, args.n_groups, overrides, n_overrides);
    origin_host(host, sizeof host);  /* once: every run of this process (and its workers) */
    origin = (RunOrigin){.command = origin_command_text, .scenario_text = text, .overrides = origin_set_text,
                         .host = host};
    sw.origin = &origin;
    if (talk && !quiet)
        for (int i = 0; i < n_overrides; i++)
            for (int a = 0; a < sw.n_axes; a++) {
                char name[2 * INIDOC_NAME_MAX + 2];
                snprintf(name, sizeof name, "%s.%s", sw.axes[a].section, sw.axes[a].key);
                size_t len = strlen(name);
                if (strncmp(overrides[i], name, len) == 0 && (overrides[i][len] == '=' || overrides[i][len] == ' '))
                    fprintf(stderr, "hetsim: note: --set %s is replaced by the swept values of %s (%s:%d)\n",
                            overrides[i], name, scenario_path, sw.axes[a].line);
            }
    /* rank 0 reads every input file (traces and the like at resolution, the datasets
     * here) before it opens the database */
    CliPreflight preflight = {0};
    if (talk) {
        sw.check_run = cli_preflight_check;
        sw.check_ctx = &preflight;
    }
    status = sweep_resolve(&sw, &diag);
    cli_preflight_free(&preflight);
    if (status != HS_OK) goto fail;
    /* jobs x threads stay within the cores; MPI ranks usually fill a node's cores already */
    int busy_jobs = sw.n_runs < jobs ? (int)sw.n_runs : jobs;
    sw.threads_default = mpi || busy_jobs < 1 ? 1 : (sweep_cores() / busy_jobs > 1 ? sweep_cores() / busy_jobs : 1);
    /* Every rank resolved the same text the same way; from here the other ranks wait for
     * rank 0's orders, so a failure of rank 0 must tell them to stop. */
    ranks_waiting = mpi;

    if (rank != 0) {
        status = sweep_mpi_work(&sw, &diag);
        if (status != HS_OK) fprintf(stderr, "hetsim: rank %d: %s\n", rank, diag.message);
        exit_status = hs_error_exit_status(status);
        goto cleanup;
    }

    cli_note_default_database(&args);
    if ((status = cli_check_database(db_path, &diag)) != HS_OK) goto fail;
    /* the WAL's checkpoints go to a helper process (store.h), forked before this process
     * has any SQLite state; MPI ranks are not forked */
    if (!mpi) sweep_checkpointer_start(&checkpointer, db_path);
    if ((status = store_open(db_path, &store, &diag)) != HS_OK) goto fail;
    status = sweep_plan(store, &sw, resume, selected, n_selected, db_path, quiet, &todo, &n_todo, &n_kept,
                        &n_kept_diverged, &diag);
    if (status != HS_OK) goto fail;
    if ((status = sweep_master_init(&master, &sw, store_sink(store), todo, n_todo, sweep_bar(&bar, stderr, quiet),
                                    quiet)) != HS_OK) {
        hs_diag_set(&diag, status, NULL, 0, "out of memory");
        goto fail;
    }
    SweepClaimCtx claim_ctx = {.store = store, .sw = &sw};
    store_set_batching(store, 1);  /* short runs share transactions (store.h) */
    if (checkpointer.pid > 0 && store_set_autocheckpoint(store, STORE_WAL_PAGES_ALONE) == HS_OK)
        sweep_checkpointer_go(&checkpointer);
    master.claim = sweep_claim;
    master.claim_ctx = &claim_ctx;
    if (!quiet)
        fprintf(stderr, "hetsim: sweep %s: %lld runs (%lld points x %d)%s%.0lld, %lld to run on %d %s\n", sw.id,
                (long long)sw.n_runs, (long long)sw.n_points, sw.repeat, n_only > 0 ? ", --only keeps " : "",
                n_only > 0 ? (long long)n_selected : 0LL, (long long)n_todo,
                mpi ? sweep_mpi_size() : (int)(jobs < n_todo ? jobs : (n_todo > 0 ? n_todo : 1)),
                mpi ? "ranks" : "worker processes");
    interrupt_install();
    signal(SIGPIPE, SIG_IGN);  /* a dead worker's pipe reports EPIPE instead of killing us */
    ranks_waiting = 0;  /* the MPI driver stops them itself, whatever happens */
    status = mpi ? sweep_drive_mpi(&master, &diag) : sweep_drive_local(&master, jobs, &diag);
    sweep_bar_end(&bar, &master);
    if (checkpointer.pid > 0) {
        sweep_checkpointer_stop(&checkpointer);
        store_set_autocheckpoint(store, STORE_WAL_PAGES);
    }
    /* what is still buffered, then the runs claimed and never begun (stopped early):
     * free for a --resume */
    if (!master.fatal && store_set_batching(store, 0) != HS_OK) {
        HsDiag flush;
        hs_diag_set(&flush, HS_E_IO, NULL, 0, "%s", store_error_message(store));
        sweep_master_fail(&master, &flush);
    }
    if (!master.fatal) store_drop_unbegun(store);
    cli_print_database(db_path);  /* the sweep is claimed there, whatever happened since */
    if (status != HS_OK) goto fail;
    if (master.fatal) {
        fprintf(stderr, "hetsim: %s%s%s\n", master.diag.message, store_error_message(store)[0] ? ": " : "",
                store_error_message(store));
        exit_status = 1;
    }
    if (!quiet) sweep_print_summary(&master, db_path, n_selected, n_kept, n_kept_diverged, stdout);
    /* A diverged run is complete and kept by --resume, but it is not a success. Runs
     * another process ran, or is running, are that process's to report. */
    if (master.done + n_kept - n_kept_diverged + master.complete_elsewhere + master.held < n_selected) exit_status = 1;
    if (master.held > 0 && !quiet)
        fprintf(stderr, "hetsim: %lld runs of sweep %s are being run by another process (%s); they are its to report\n",
                (long long)master.held, sw.id, claim_ctx.holder);
    if (interrupt_requested() || master.interrupted > 0 || master.finished < master.total) {
        if (interrupt_requested())
            fprintf(stderr, "hetsim: sweep interrupted: %lld of %lld runs done; interrupted runs are marked so in %s\n",
                    (long long)(master.done + n_kept), (long long)sw.n_runs, db_path);
        sweep_print_resume(argc, argv, resume, mpi ? sweep_mpi_size() : 0);
    } else if (master.failed > 0) {
        fprintf(stderr, "hetsim: %lld of %lld runs failed; --resume runs them again\n", (long long)master.failed,
                (long long)sw.n_runs);
    }
    goto cleanup;

fail:
    if (talk) cli_fail(status, diag.message);
    exit_status = hs_error_exit_status(status);
    if (ranks_waiting && talk) sweep_mpi_stop_all();
cleanup:
    sweep_checkpointer_stop(&checkpointer);
    store_close(store);
    sweep_master_free(&master);
    free(todo);
    free(selected);
    sweep_free(&sw);
    inidoc_free(&doc);
    free(text);
    free(origin_command_text);
    free(origin_set_text);
    free(overrides);
    free(only);
    if (mpi_started) sweep_mpi_finalize();
    return exit_status;
}
