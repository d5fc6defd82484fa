/* mpi_rows.c — one run across MPI ranks writes bitwise the rows of one process, for
 * every method, the variants that take other paths through the trainer (test_variants.h)
 * and the CNN under every method.
 * Run under mpirun by tests/cli/mpi_run.sh (`mpirun -np K mpi_rows`): rank 0 plays each
 * run alone first (sim_run, the reference), then every rank plays it together
 * (sim_run_ranks), and rank 0 compares the rows. Prints "ok"/"FAIL" lines like the
 * CLI tests; the exit status is 0 when every run matched. */
#include "sim/run.h"
#include "sim/methods/method.h"
#include "sim/train/trainer.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"
#include "tests/test_variants.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *mlp =
    "[run]\nrounds = 2\nmode = train\n"
    "[data]\ndataset = synthetic\nfeatures = 12\nclasses = 4\ntrain_samples = 960\ntest_samples = 200\n"
    "separation = 3\n"
    "[model]\nlayers = 12,64,64,4\nbatch = 16\noptimizer = momentum\nlr = 0.05\n"
    "[topology]\ngraph = ring\n"
    "[agents]\ncount = 7\ncompute = lognormal(1 GFLOPS, 0.7)\nbandwidth = 10 MB/s\nlatency = 1 ms\n"
    "[agents.slow]\ncount = 2\ncompute = 50 MFLOPS\n"
    "[servers]\ncount = 1\ncompute = 10 GFLOPS\nbandwidth = 100 MB/s\nlatency = 1 ms\n";

static const char *cnn =
    "[run]\nrounds = 2\nmode = train\n"
    "[data]\ndataset = synthetic\nchannels = 1\nheight = 12\nwidth = 12\nclasses = 4\ntrain_samples = 960\n"
    "test_samples = 200\n"
    "[model]\narch = cnn\nchannels = 4,8\nkernel = 3\nhidden = 32\nbatch = 16\noptimizer = momentum\nlr = 0.05\n"
    "[topology]\ngraph = ring\n"
    "[agents]\ncount = 6\ncompute = lognormal(1 GFLOPS, 0.7)\nbandwidth = 10 MB/s\nlatency = 1 ms\n"
    "[agents.slow]\ncount = 2\ncompute = 50 MFLOPS\n"
    "[servers]\ncount = 1\ncompute = 10 GFLOPS\nbandwidth = 100 MB/s\nlatency = 1 ms\n";

/* The methods whose agents' steps are queued, and so divided between the ranks (what
 * docs/mpi-run.md lists as gaining): their runs must divide some. The others' gradients
 * are handed back at once and computed by their owner in turn. */
static int method_divides(const char *method)
{
    static const char *const dividing[] = {"sync", "localsgd", "qsr", "co2", "comdml", "ripples", "divshare",
                                           "swift", "fedavg", "fedbuff", "sdfeel", "lsgd", NULL};
    for (int k = 0; dividing[k]; k++)
        if (strcmp(dividing[k], method) == 0) return 1;
    return 0;
}

static int failures, passes;
static long steps_all; /* rank 0: the steps of every ranked run */

/* Every rank calls it with the same arguments. */
static void check_rows(TrainerRanks *ranks, const char *text, const char *name, const char *const *set, int n,
                       int threads, int must_divide)
{
    int rank = trainer_ranks_rank(ranks);
    HsDiag diag;
    Scenario sc;
    TestSink reference = {0}, ranked;
    int status = test_resolve(text, set, n, &sc, &diag), ok = status == HS_OK;
    sc.threads = threads;
    if (ok && rank == 0) {
        RunOutcome out;
        status = sim_run(&sc, test_sink_init(&reference), &diag, &out);
        ok = status == HS_OK && reference.metrics > 0;
        if (status == HS_OK && !ok) status = hs_diag_set(&diag, HS_E_INTERNAL, NULL, 0, "one process wrote no metrics");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int divided = 1;
    long run_steps = 0;
    if (ok) {
        RunOutcome out;
        long mine0, all0, mine1, all1, mine, sum = 0;
        trainer_ranks_steps(ranks, &mine0, &all0);
        status = sim_run_ranks(&sc, test_sink_init(&ranked), ranks, &diag, &out);
        trainer_ranks_steps(ranks, &mine1, &all1);
        /* the rows cannot tell a rank that trained every agent itself: every step of the
         * run was computed by exactly one rank */
        mine = mine1 - mine0;
        MPI_Reduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            ok = status == HS_OK && ranked.len == reference.len && memcmp(ranked.text, reference.text, ranked.len) == 0;
            divided = sum == all1 - all0;
            if (ok && !divided)
                hs_diag_set(&diag, HS_E_INTERNAL, NULL, 0, "the ranks computed %ld steps of %ld", sum, all1 - all0);
            ok = ok && divided;
            if (ok && must_divide && all1 - all0 == 0) {
                hs_diag_set(&diag, HS_E_INTERNAL, NULL, 0, "no step was divided between the ranks");
                ok = 0;
            }
            run_steps = all1 - all0;
            steps_all += run_steps;
        }
        test_sink_free(&ranked);
    }
    if (rank == 0) {
        char label[256] = "", done[96];
        snprintf(done, sizeof done, "rows identical to one process, each of %ld steps on one rank", run_steps);
        for (int k = 0; k < n; k++) snprintf(label + strlen(label), sizeof label - strlen(label), " %s", set[k]);
        printf("%s %s%s (%d ranks, %d threads): %s\n", ok ? "ok  " : "FAIL", name, label, trainer_ranks_size(ranks),
               threads, ok ? done
                           : status == HS_OK && divided ? "rows differ from one process" : diag.message);
        fflush(stdout);
        if (ok) passes++;
        else failures++;
    }
    test_sink_free(&reference);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    HsDiag diag;
    TrainerRanks *ranks;
    if (trainer_ranks_create(&ranks, &diag) != HS_OK) {
        fprintf(stderr, "mpi_rows: %s\n", diag.message);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* an argument limits the runs to the methods named in it (a comma list) */
    const char *only = argc > 1 ? argv[1] : NULL;
    for (const MethodOps *const *m = method_all(); *m; m++) {
        if (only && !strstr(only, (*m)->name)) continue;
        char method[96];
        snprintf(method, sizeof method, "run.method=%s", (*m)->name);
        const char *set[] = {method};
        check_rows(ranks, mlp, "mlp", set, 1, 1, method_divides((*m)->name));
    }
    for (size_t v = 0; !only && v < test_variants_n; v++)
        check_rows(ranks, mlp, "mlp", test_variants[v], TEST_VARIANT_SETS, 1, 0);
    /* the CNN under every method, and the four of tests/cli/mpi_run.sh with two threads
     * in every rank too */
    for (const MethodOps *const *m = method_all(); *m; m++) {
        if (only && !strstr(only, (*m)->name)) continue;
        char method[96];
        snprintf(method, sizeof method, "run.method=%s", (*m)->name);
        const char *set[] = {method};
        check_rows(ranks, cnn, "cnn", set, 1, 1, method_divides((*m)->name));
        static const char *const core[] = {"sync", "localsgd", "dpsgd", "comdml"};
        for (size_t k = 0; k < sizeof core / sizeof *core; k++)
            if (strcmp(core[k], (*m)->name) == 0) check_rows(ranks, cnn, "cnn", set, 1, 2, method_divides((*m)->name));
    }
    /* and the suite did divide something */
    if (trainer_ranks_rank(ranks) == 0 && steps_all == 0) {
        printf("FAIL no ranked run queued a step\n");
        failures++;
    }
    int failed = failures;
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (trainer_ranks_rank(ranks) == 0)
        printf("mpi_rows: %d passed, %d failed (%d ranks)\n", passes, failures, trainer_ranks_size(ranks));
    trainer_ranks_free(ranks);
    MPI_Finalize();
    return failed ? 1 : 0;
}
