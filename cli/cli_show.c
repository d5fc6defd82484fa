/* cli_show.c — `hetsim show FILE.db RUN [--sweep ID] [--scenario-text]`: one run in full
 * (analysis/show.h). */
#include "analysis/show.h"
#include "cli/cli.h"
#include "cli/cli_report.h"

#include <stdint.h>
#include <stdio.h>

static const char cli_show_usage[] =
    "usage: hetsim show FILE.db RUN [--sweep ID] [--scenario-text]\n"
    "\n"
    "Prints run RUN (its id, as `hetsim report` lists them): its name, method, seed,\n"
    "status, sweep and point; its provenance (hetsim version, command line, --set\n"
    "overrides, host, threads, wall-clock times); its summary (every column of the view\n"
    "run_summary, with units); the resolved scenario it ran (runs.config, swept keys\n"
    "marked); and its per-round table, the method's figure rounds.extra titled with\n"
    "what it means in the run (hetsim methods NAME).\n"
    "  --sweep ID        refuse (exit 2) a run that is not of sweep ID\n"
    "  --scenario-text   print only the scenario file as the run read it\n"
    "  --help            this text\n"
    "\n"
    "The database is opened read-only. Exit status: 0 ok, 1 the file cannot be read,\n"
    "2 bad usage, not a hetsim database, no such run, or a run of another sweep.\n";

int cli_show(int argc, char **argv)
{
    const char *operands[2], *sweep = NULL;
    int scenario_text = 0;
    const CliOption accepted[] = {
        { "--sweep", &sweep, NULL, "a sweep id" },
        { "--scenario-text", NULL, &scenario_text, NULL },
    };
    int parsed = cli_parse_command("show", cli_show_usage, accepted, 2, argc, argv, operands, 2,
                                   "FILE.db and a run id", stdout, stderr);
    if (parsed >= 0) return parsed;
    int64_t run_id;
    if (cli_parse_whole(operands[1], 1, &run_id, NULL) != 0)
        return cli_usage_error(stderr, "show", "RUN is a run id (a positive whole number), not '%s'", operands[1]);
    HsDiag diag;
    hs_diag_clear(&diag);
    int status = show_print_run(operands[0], run_id, sweep, scenario_text ? SHOW_SCENARIO_TEXT : 0, cli_extra_meaning,
                                stdout, &diag);
    if (status != HS_OK) fprintf(stderr, "hetsim: %s\n", diag.message);
    return hs_error_exit_status(status);
}
