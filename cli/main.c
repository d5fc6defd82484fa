/* main.c — the hetsim command: dispatches to the subcommands. Only main exits. */
#include "cli/cli.h"
#include "analysis/store.h"
#include "cli/cli_check.h"
#include "cli/cli_help.h"
#include "cli/cli_pair.h"
#include "cli/cli_plot.h"
#include "cli/cli_profile.h"
#include "cli/cli_report.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* The usage lines are each command's own (`hetsim COMMAND --help`), continuation lines
 * indented further; the man page's SYNOPSIS is generated from them (scripts/man-synopsis)
 * and tests/cli/docs_check.sh compares all three. */
static const char main_usage[] =
    "hetsim " HETSIM_VERSION " — discrete-event simulator of heterogeneous decentralized learning\n"
    "\n"
    "usage:\n"
    "  hetsim run SCENARIO.ini [--db FILE] [--set SECTION.KEY=VALUE]... [--add-group NAME]...\n"
    "      [--timing-only] [--threads N] [--dry-run] [--quiet]\n"
    "  hetsim sweep SCENARIO.ini [--db FILE] [--set SECTION.KEY=VALUE]... [--add-group NAME]...\n"
    "      [--jobs N] [--resume] [--only KEY=V1,V2]... [--dry-run] [--timing-only] [--threads N] [--quiet]\n"
    "  hetsim check SCENARIO.ini [--set SECTION.KEY=VALUE]... [--add-group NAME]... [--only KEY=V1,V2]...\n"
    "      [--timing-only] [--db FILE]\n"
    "  hetsim profile SCENARIO.ini [--out FILE] [--repeat N] [--set SECTION.KEY=VALUE]...\n"
    "  hetsim pair INSTANCE.ini [--solver exact|ip|greedy] [--cost paper|exact] [--time-limit SECONDS]\n"
    "  hetsim report FILE.db [--run ID | --sweep ID] [--table runs|points|speedup] [--csv | --json]\n"
    "  hetsim show FILE.db RUN [--sweep ID] [--scenario-text]\n"
    "  hetsim diff FILE.db RUN RUN [--sweep ID]\n"
    "  hetsim plot FILE.db [--out DIR] [--run ID] [--sweep ID] [--rounds A[-B]] [--format png,svg,pdf]\n"
    "      [--style paper|screen] [--size W,H] [--font-size PT] [--keep]\n"
    "  hetsim help keys [SECTION] [--markdown]    every scenario key: type, values, default, unit\n"
    "  hetsim methods [NAME | --features] [--markdown | --list]    every method, or the method x feature table\n"
    "  hetsim help database    the result database's tables, views and units\n"
    "  hetsim --help | hetsim COMMAND --help | hetsim --version\n"
    "\n"
    "A sweep also runs over MPI ranks: mpirun -np K hetsim sweep SCENARIO.ini ...\n"
    "Exit status: 0 success, 1 a run failed, 2 bad usage or bad input.\n"
    "Documentation: man hetsim; README.md and docs/index.md of the source, installed by\n"
    "make install in PREFIX/share/doc/hetsim (PREFIX is /usr/local unless given).\n";

int main(int argc, char **argv)
{
    /* Only this thread ever calls SQLite (a run's worker threads do arithmetic; a sweep's
     * workers are processes), so SQLite's own mutexes are pure cost: about a tenth of a
     * sweep writer's time. Must come before SQLite is first used. */
    sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
    if (argc < 2) {
        fputs(main_usage, stderr);
        return 2;
    }
    const char *command = argv[1];
    if (strcmp(command, "help") == 0 && argc > 2 && strcmp(argv[2], "keys") == 0) return cli_help(argc - 3, argv + 3);
    if (strcmp(command, "methods") == 0) return cli_methods(argc - 2, argv + 2);
    if (strcmp(command, "help") == 0 && argc == 3 && strcmp(argv[2], "database") == 0) {
        store_write_reference(stdout);  /* docs/database.md */
        return 0;
    }
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 || strcmp(command, "help") == 0) {
        fputs(main_usage, stdout);
        return 0;
    }
    if (strcmp(command, "--version") == 0) {
        printf("hetsim %s\n", HETSIM_VERSION);
        return 0;
    }
    if (strcmp(command, "run") == 0) return cli_run(argc - 2, argv + 2);
    if (strcmp(command, "sweep") == 0) return cli_sweep(argc - 2, argv + 2);
    if (strcmp(command, "profile") == 0) return cli_profile(argc - 2, argv + 2);
    if (strcmp(command, "pair") == 0) return cli_pair(argc - 2, argv + 2);
    if (strcmp(command, "report") == 0) return cli_report(argc - 1, argv + 1);
    if (strcmp(command, "plot") == 0) return cli_plot(argc - 1, argv + 1);
    if (strcmp(command, "check") == 0) return cli_check(argc - 2, argv + 2);
    if (strcmp(command, "show") == 0) return cli_show(argc - 1, argv + 1);
    if (strcmp(command, "diff") == 0) return cli_diff(argc - 1, argv + 1);
    fprintf(stderr, "hetsim: unknown command '%s'\n\n%s", command, main_usage);
    return 2;
}
