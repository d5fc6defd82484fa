/* cli_diff.c — `hetsim diff FILE.db RUN RUN [--sweep ID]`: the resolved keys, then the
 * summary figures, that differ between two runs (analysis/show.h). */
#include "analysis/show.h"
#include "cli/cli.h"

#include <stdint.h>
#include <stdio.h>

static const char cli_diff_usage[] =
    "usage: hetsim diff FILE.db RUN RUN [--sweep ID]\n"
    "\n"
    "Compares two runs (ids as `hetsim report` lists them): the keys of the resolved\n"
    "scenario whose values differ (from run_params, numbers in SI units; a distribution's\n"
    "parameters are keys of their own: agents.compute.sigma), then the figures of\n"
    "run_summary that differ. Runs of different sweeps may be compared.\n"
    "  --sweep ID   refuse (exit 2) a run that is not of sweep ID\n"
    "  --help       this text\n"
    "\n"
    "The database is opened read-only. Exit status: 0 ok (whether the runs differ or\n"
    "not), 1 the file cannot be read, 2 bad usage, not a hetsim database, no such run, or\n"
    "a run of another sweep.\n";

int cli_diff(int argc, char **argv)
{
    const char *operands[3], *sweep = NULL;
    const CliOption accepted[] = {
        { "--sweep", &sweep, NULL, "a sweep id" },
    };
    int parsed = cli_parse_command("diff", cli_diff_usage, accepted, 1, argc, argv, operands, 3,
                                   "FILE.db and two run ids", stdout, stderr);
    if (parsed >= 0) return parsed;
    int64_t runs[2];
    for (int k = 0; k < 2; k++)
        if (cli_parse_whole(operands[1 + k], 1, &runs[k], NULL) != 0)
            return cli_usage_error(stderr, "diff", "RUN is a run id (a positive whole number), not '%s'", operands[1 + k]);
    HsDiag diag;
    hs_diag_clear(&diag);
    int status = show_print_diff(operands[0], runs[0], runs[1], sweep, stdout, &diag);
    if (status != HS_OK) fprintf(stderr, "hetsim: %s\n", diag.message);
    return hs_error_exit_status(status);
}
