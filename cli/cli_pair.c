/* cli_pair.c — prints `pair SLOW FAST SPLIT TIME` per pair (by slow agent), then
 * `alone AGENT TIME` per unpaired agent, then `makespan TIME` (times in seconds as the
 * shortest text that reads back to the same double, base/numtext.h). With `capacity =
 * shared` in the instance (helpers shared, solver/shared.h) each pair line is followed by
 * `share SLOW FAST COMPUTE LINK` (the offloader's fractions of its helper), and `helper
 * AGENT OFFLOADERS TIME` lines come before the alone ones. A fallback
 * of the ip solver is said on stderr, so stdout keeps the contract's lines only. */
#include "cli/cli_pair.h"
#include "base/numtext.h"
#include "solver/instance.h"
#include "solver/shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char cli_pair_usage[] =
    "usage: hetsim pair INSTANCE.ini [--solver exact|ip|greedy] [--cost paper|exact]\n"
    "                   [--time-limit SECONDS]\n"
    "\n"
    "Pairs slow agents with fast helpers (ComDML) for the instance and prints\n"
    "  pair SLOW FAST SPLIT TIME   for every pair\n"
    "  alone AGENT TIME            for every unpaired agent\n"
    "  makespan TIME               last (times in seconds, full precision)\n"
    "  --solver exact   minimum makespan (matching + binary search; the default)\n"
    "           ip      integer program with lp_solve (falls back to exact on failure)\n"
    "           greedy  the published scheduler: slowest first, best available partner\n"
    "  --cost paper     the published T_i(j,m) (the default, or the file's `cost`)\n"
    "         exact     the round as hetsim plays it: latency, the offloader's link shared\n"
    "                   or queued (the file's `network`, `uplink`), the pipeline's tail\n"
    "  --time-limit S   wall-clock limit of ip in seconds, building the model included\n"
    "                   (default 10); past it exact answers and stderr says so\n"
    "With `capacity = shared` in the instance a helper serves several offloaders with\n"
    "shares of its compute and link (paper cost only); each pair line is followed by\n"
    "  share SLOW FAST COMPUTE LINK  the offloader's fractions of its helper\n"
    "and before the alone lines come\n"
    "  helper AGENT OFFLOADERS TIME  every helper, how many it serves, when it ends\n"
    "(exact enumerates, up to 14 agents; ip falls back to exact, or greedy past 14).\n";

/* Solves and prints a shared-helpers instance; the status as cli_pair's. */
static int cli_pair_shared(const PairingProblem *problem, const char *solver, double time_limit)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    SharedResult result;
    int status = shared_result_init(&result, problem->n);
    if (status == HS_OK) status = solver_shared(problem, solver, time_limit, &result, &diag);
    if (status == HS_OK) {
        char time[NUMTEXT_SIZE], share[NUMTEXT_SIZE], link[NUMTEXT_SIZE];
        if (result.fell_back) fprintf(stderr, "hetsim: note: %s\n", result.note);
        for (int i = 0; i < problem->n; i++)
            if (result.role[i] == PAIRING_OFFLOADER) {
                printf("pair %d %d %d %s\n", i, result.helper[i], result.split[i],
                       numtext_double(time, sizeof time, result.time[i]));
                printf("share %d %d %s %s\n", i, result.helper[i], numtext_double(share, sizeof share, result.share[i]),
                       numtext_double(link, sizeof link, result.link_share[i]));
            }
        for (int j = 0; j < problem->n; j++)
            if (result.role[j] == PAIRING_HELPER)
                printf("helper %d %d %s\n", j, result.members[j], numtext_double(time, sizeof time, result.time[j]));
        for (int i = 0; i < problem->n; i++)
            if (result.role[i] == PAIRING_ALONE)
                printf("alone %d %s\n", i, numtext_double(time, sizeof time, result.time[i]));
        printf("makespan %s\n", numtext_double(time, sizeof time, result.makespan));
    } else {
        fprintf(stderr, "hetsim: %s\n", diag.message[0] ? diag.message : hs_error_name(status));
    }
    shared_result_free(&result);
    return hs_error_exit_status(status);
}

int cli_pair(int argc, char **argv)
{
    const char *path = NULL, *solver = "exact";
    int cost = -1; /* the file's */
    double time_limit = 10;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(cli_pair_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--solver") == 0 && i + 1 < argc) {
            solver = argv[++i];
            if (!solver_known(solver)) {
                fprintf(stderr, "hetsim pair: unknown solver '%s' (use exact, ip or greedy)\n", solver);
                return 2;
            }
        } else if (strcmp(argv[i], "--cost") == 0 && i + 1 < argc) {
            cost = pairing_cost_parse(argv[++i]);
            if (cost < 0) {
                fprintf(stderr, "hetsim pair: unknown cost '%s' (use paper or exact)\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--time-limit") == 0 && i + 1 < argc) {
            char *end;
            time_limit = strtod(argv[++i], &end);
            if (*end || !(time_limit > 0)) {
                fprintf(stderr, "hetsim pair: --time-limit needs a positive number of seconds\n");
                return 2;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "hetsim pair: unknown or incomplete option '%s'\n%s", argv[i], cli_pair_usage);
            return 2;
        } else if (path == NULL) {
            path = argv[i];
        } else {
            fprintf(stderr, "hetsim pair: one instance at a time\n");
            return 2;
        }
    }
    if (path == NULL) {
        fputs(cli_pair_usage, stderr);
        return 2;
    }
    HsDiag diag;
    hs_diag_clear(&diag);
    PairingProblem problem;
    int status = instance_load(path, &problem, &diag);
    if (status != HS_OK) {
        fprintf(stderr, "hetsim: %s\n", diag.message);
        return hs_error_exit_status(status);
    }
    if (problem.capacity == PAIRING_CAPACITY_SHARED) {
        if (cost == PAIRING_COST_EXACT) {
            fprintf(stderr, "hetsim: %s: capacity = shared takes the paper's cost only (not --cost exact)\n", path);
            pairing_problem_free(&problem);
            return 2;
        }
        status = cli_pair_shared(&problem, solver, time_limit);
        pairing_problem_free(&problem);
        return status;
    }
    if (cost >= 0) problem.cost = (PairingCost)cost;
    PairingResult result;
    if ((status = pairing_result_init(&result, problem.n)) == HS_OK)
        status = solver_pair(&problem, solver, time_limit, &result, &diag);
    if (status == HS_OK) {
        char time[NUMTEXT_SIZE];
        if (result.fell_back) fprintf(stderr, "hetsim: note: %s\n", result.note);
        for (int i = 0; i < problem.n; i++)
            if (result.role[i] == PAIRING_OFFLOADER)
                printf("pair %d %d %d %s\n", i, result.partner[i], result.split[i],
                       numtext_double(time, sizeof time, result.time[i]));
        for (int i = 0; i < problem.n; i++)
            if (result.role[i] == PAIRING_ALONE)
                printf("alone %d %s\n", i, numtext_double(time, sizeof time, result.time[i]));
        printf("makespan %s\n", numtext_double(time, sizeof time, result.makespan));
    } else {
        fprintf(stderr, "hetsim: %s\n", diag.message[0] ? diag.message : hs_error_name(status));
    }
    pairing_result_free(&result);
    pairing_problem_free(&problem);
    return hs_error_exit_status(status);
}
