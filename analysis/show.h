/* show.h — one run of a database in full (`hetsim show`) and two runs side by side
 * (`hetsim diff`); their command lines are cli/cli_show.c and cli/cli_diff.c.
 *
 * Like reports (analysis/report.h), they open the database read-only, read everything
 * before printing, and print nothing when they fail.
 *
 * show: a title line (run id, name, method, seed, status; its sweep, point and place in
 * the sweep), the provenance (hetsim version, command line, --set overrides, host,
 * threads, wall-clock start, end and duration; the scenario file's text with
 * SHOW_SCENARIO_TEXT), the summary (every column of the view run_summary with its unit
 * from schema_columns, numbers in the shortest text that reads back to the stored
 * double), the resolved scenario (runs.config, each swept key marked `; swept`, from
 * run_params) and the per-round table of `hetsim report --run` (its extra column titled
 * with what rounds.extra means in the run: meaning, NULL for none known).
 *
 * diff: the keys whose resolved values differ (from run_params: a distribution's
 * parameters are keys of their own, numbers compared as numbers in SI units; a run
 * written before run_params existed is compared on its runs.config lines instead), then
 * the run_summary figures that differ. Runs of different sweeps may be compared.
 *
 * Errors: HS_E_INPUT for a run that is not in the file, or not of the sweep the caller
 * names (sweep != NULL): "run 5 is of sweep sw-..., not sw-..."; otherwise as
 * dbread_open and the reports. A database written by hetsim 0.1.0 (schema version 1:
 * no views, no run_params, no provenance columns) shows what it has and says what it
 * lacks. */
#ifndef ANALYSIS_SHOW_H
#define ANALYSIS_SHOW_H

#include "analysis/report.h"
#include "base/hs_error.h"

#include <stdint.h>
#include <stdio.h>

enum {
    SHOW_SCENARIO_TEXT = 1u << 0, /* show: only the scenario file's text as the run read it */
};

int show_print_run(const char *db_path, int64_t run_id, const char *sweep, unsigned flags, ReportExtraMeaning meaning,
                   FILE *out, HsDiag *diag);
int show_print_diff(const char *db_path, int64_t run_a, int64_t run_b, const char *sweep, FILE *out,
                    HsDiag *diag);

#endif
