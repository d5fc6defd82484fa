/* cli_report.c — `hetsim report FILE.db [--run ID | --sweep ID] [--table T] [--csv | --json]`:
 * parses the arguments, calls report_print_run or report_print_tables
 * (analysis/report.h), and turns their status into the exit status. */
#include "cli/cli_report.h"

#include "analysis/report.h"
#include "base/hs_error.h"
#include "cli/cli.h"
#include "sim/scenario/method_ops.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char cli_report_usage[] =
    "usage: hetsim report FILE.db [--run ID | --sweep ID] [--table runs|points|speedup] [--csv | --json]\n"
    "\n"
    "Prints one row per run of the database: id, name, method, seed, status, rounds,\n"
    "virtual time, idle share (summed agent idle time over agents x round time), bytes\n"
    "on the wire, final accuracy, the run's target accuracy and the virtual time at which\n"
    "it was first reached, for ComDML the mean predicted and played-out pair time and\n"
    "the share of agent-rounds offloading, the sweep point, and when the scenario gave\n"
    "powers the joules the agents drew and those to the target. Then, when they add\n"
    "something, the points table (each sweep point's mean and 95 % t-interval over its\n"
    "seeds) and the speedup table (t_sync / t_method on the same point and seed, by\n"
    "time to target when both reached it, else by total virtual time).\n"
    "\n"
    "  --run ID      the summary of run ID, then its per-round table\n"
    "                (round, t_start, t_end, makespan, idle, bytes, and the method's\n"
    "                figure rounds.extra titled with what it means: hetsim methods NAME)\n"
    "  --sweep ID    only the runs of sweep ID (runs.sweep)\n"
    "  --table T     only table T: runs, points or speedup\n"
    "  --csv         CSV with a header and unrounded numbers instead of a table (one\n"
    "                table: runs unless --table says otherwise; with --run the\n"
    "                per-round rows only)\n"
    "  --json        one JSON object: \"database\", then every table as an array of\n"
    "                objects keyed by the CSV names (\"runs\", \"points\", \"speedup\";\n"
    "                with --run \"runs\", \"rounds\" and \"extra_meaning\"); numbers in full\n"
    "                precision, missing values null\n"
    "  --help        this text\n"
    "\n"
    "The database is opened read-only. Exit status: 0 ok, 1 the file cannot be read,\n"
    "2 bad usage, not a hetsim database, or no such run or sweep.\n";

const char *cli_extra_meaning(const char *method, const char *(*param)(void *ctx, const char *key), void *ctx)
{
    const MethodOps *m = method_lookup(method);
    return m != NULL ? method_extra_meaning(m, param, ctx) : NULL;
}

int cli_report_stream(int argc, char **argv, FILE *out, FILE *err)
{
    const char *path = NULL, *run_text = NULL, *sweep = NULL, *table_text = NULL;
    int csv = 0, json = 0;
    int64_t run_id = 0;
    const CliOption accepted[] = {
        { "--csv", NULL, &csv, NULL },
        { "--json", NULL, &json, NULL },
        { "--run", &run_text, NULL, "a run id" },
        { "--sweep", &sweep, NULL, "a sweep id" },
        { "--table", &table_text, NULL, "runs, points or speedup" },
    };
    int parsed = cli_parse_db_command("report", cli_report_usage, accepted,
                                      (int)(sizeof accepted / sizeof accepted[0]), argc, argv, &path,
                                      out, err);
    if (parsed >= 0) return parsed;
    if (run_text != NULL && cli_parse_whole(run_text, 1, &run_id, NULL) != 0)
        return cli_usage_error(err, "report", "--run needs a positive whole number, not '%s'", run_text);
    if (csv && json) return cli_usage_error(err, "report", "%s", "--csv and --json exclude each other");
    if (run_text != NULL && sweep != NULL)
        return cli_usage_error(err, "report", "%s", "--run and --sweep exclude each other");
    ReportTable table = REPORT_TABLE_ALL;
    if (table_text != NULL) {
        if (run_text != NULL)
            return cli_usage_error(err, "report", "%s", "--run and --table exclude each other");
        if (strcmp(table_text, "runs") == 0) table = REPORT_TABLE_RUNS;
        else if (strcmp(table_text, "points") == 0) table = REPORT_TABLE_POINTS;
        else if (strcmp(table_text, "speedup") == 0) table = REPORT_TABLE_SPEEDUP;
        else
            return cli_usage_error(err, "report", "--table takes runs, points or speedup, not '%s'",
                                   table_text);
    }

    HsDiag diag;
    hs_diag_clear(&diag);
    unsigned flags = csv ? REPORT_CSV : json ? REPORT_JSON : 0;
    int status = cli_check_database(path, &diag);
    if (status == HS_OK)
        status = run_text != NULL ? report_print_run(path, run_id, flags | REPORT_ROUNDS, cli_extra_meaning, out, &diag)
                                  : report_print_tables(path, sweep, table, flags, out, &diag);
    if (status != HS_OK) fprintf(err, "hetsim: %s\n", diag.message);
    return hs_error_exit_status(status);
}

int cli_report(int argc, char **argv)
{
    return cli_report_stream(argc, argv, stdout, stderr);
}
