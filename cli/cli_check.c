/* cli_check.c — `hetsim check` and `hetsim sweep --dry-run` (cli_check.h).
 *
 * The printout is an INI file: the resolved scenario (every key, numbers in SI units, as
 * runs.config records it) under comment lines, so `hetsim check x.ini > resolved.ini`
 * gives a scenario that runs the same. For a sweep that scenario is its first point
 * (its first kept point under --only) and the points follow as comments:
 *   ; sweep sw-...: 4 points x 2 seeds = 8 runs
 *   ;   1  run.method=sync agents.compute=lognormal(20 MFLOPS, 0.5)  seeds 1-2
 * numbered from 1 in the order the sweep expands them, which is their run ids' order. */
#include "cli/cli_check.h"

#include "base/input_file.h"
#include "cli/cli_only.h"
#include "driver/sweep.h"
#include "sim/scenario/inidoc.h"

#include <stdlib.h>
#include <string.h>

static const char cli_check_usage[] =
    "usage: hetsim check SCENARIO.ini [--set SECTION.KEY=VALUE]... [--add-group NAME]... [--only KEY=V1,V2]...\n"
    "                    [--timing-only] [--db FILE]\n"
    "\n"
    "Checks the scenario as `hetsim sweep` would (every key of every point, every run's\n"
    "agents drawn) and prints the resolved scenario (every key, SI units: an INI file\n"
    "that runs the same) and, for a sweep, the numbered list of its points. Nothing is\n"
    "written. `hetsim run --dry-run` and `hetsim sweep --dry-run` do the same.\n"
    "  --set S.K=VALUE    override a scenario key, as run and sweep take it\n"
    "  --add-group NAME   add an empty group [agents.NAME] for --set to fill\n"
    "  --only KEY=V1,V2   keep the points whose swept KEY is one of the values, as\n"
    "                     `hetsim sweep --only` would run them (repeatable)\n"
    "  --timing-only      same as --set run.mode=timing\n"
    "  --db FILE          the database the sweep would write (only named)\n"
    "Exit status: 0 valid, 2 bad usage or bad input (FILE:LINE: what is wrong).\n";

void cli_check_print_valid(FILE *out, const char *path)
{
    fprintf(out, "; %s: valid; nothing was written\n", path);
}

/* runs.point without its last " seed=N" (or all of it when that is all). */
static void cli_check_point_text(const char *label, char *out, size_t size)
{
    const char *seed = strstr(label, "seed=");
    const char *last = seed;
    while (seed != NULL) {
        last = seed;
        seed = strstr(seed + 1, " seed=");
        if (seed) seed++;
    }
    size_t length = last ? (size_t)(last - label) : strlen(label);
    while (length > 0 && label[length - 1] == ' ') length--;
    snprintf(out, size, "%.*s", (int)length, label);
}

static long long cli_check_seed(const char *label)
{
    const char *seed = strrchr(label, '=');
    return seed ? strtoll(seed + 1, NULL, 10) : 0;
}

static void cli_check_print_points(const Sweep *sw, const unsigned char *selected, FILE *out)
{
    fprintf(out, "\n; points, in the order the sweep runs them and numbers its run ids:\n");
    int width = sw->n_points >= 1000 ? 6 : 3;
    for (int64_t p = 0; p < sw->n_points; p++) {
        int64_t first = p * sw->repeat, last = first + sw->repeat - 1;
        if (!selected[first]) continue;
        char text[4096];
        cli_check_point_text(sw->labels[first], text, sizeof text);
        fprintf(out, "; %*lld  %s  ", width, (long long)p + 1, text[0] ? text : "(no swept key)");
        if (sw->repeat == 1) fprintf(out, "seed %lld\n", cli_check_seed(sw->labels[first]));
        else fprintf(out, "seeds %lld-%lld\n", cli_check_seed(sw->labels[first]), cli_check_seed(sw->labels[last]));
    }
}

int cli_check_sweep(const char *command, const CliScenarioArgs *args, const char *const *only, int n_only,
                    FILE *out)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    char *text = NULL, *config = NULL;
    unsigned char *selected = NULL;
    Scenario *sc = malloc(sizeof *sc);
    IniDoc doc;
    Sweep sw;
    memset(&doc, 0, sizeof doc);
    memset(&sw, 0, sizeof sw);
    int exit_status = 0, status = sc ? HS_OK : hs_diag_set(&diag, HS_E_NOMEM, NULL, 0, "out of memory");
    if (status == HS_OK) status = input_file_read_text(args->scenario_path, INIDOC_FILE_MAX, &text, NULL, &diag);
    if (status == HS_OK) status = inidoc_load_string(args->scenario_path, text, &doc, &diag);
    if (status == HS_OK) status = cli_apply_overrides(&doc, args, &diag);
    if (status == HS_OK) status = sweep_parse(&doc, &sw, &diag);
    if (status != HS_OK) goto fail;
    if ((selected = malloc((size_t)sw.n_runs)) == NULL) {
        status = hs_diag_set(&diag, HS_E_NOMEM, NULL, 0, "out of memory");
        goto fail;
    }
    memset(selected, 1, (size_t)sw.n_runs);
    int64_t n_selected = sw.n_runs;
    char why[1024];
    if (n_only > 0 && (exit_status = cli_only_select(&sw, only, n_only, selected, &n_selected, why, sizeof why)) != 0) {
        fprintf(stderr, "hetsim %s: %s\n", command, why);
        goto done;
    }
    if ((status = sweep_resolve(&sw, &diag)) != HS_OK) goto fail;
    int64_t first = 0;
    while (!selected[first]) first++;
    if ((status = sweep_scenario(&sw, first, sc, &diag)) != HS_OK) goto fail;
    if ((config = scenario_config_string(sc)) == NULL) {
        status = hs_diag_set(&diag, HS_E_NOMEM, NULL, 0, "out of memory");
        goto fail;
    }
    int is_sweep = sw.n_axes > 0 || sw.repeat > 1;
    cli_check_print_valid(out, args->scenario_path);
    if (is_sweep) {
        fprintf(out, "; sweep %s: %lld points x %d seed%s = %lld runs\n", sw.id, (long long)sw.n_points, sw.repeat,
                sw.repeat == 1 ? "" : "s", (long long)sw.n_runs);
        if (n_only > 0)
            fprintf(out, "; --only keeps %lld of the %lld points (%lld runs)\n", (long long)(n_selected / sw.repeat),
                    (long long)sw.n_points, (long long)n_selected);
    }
    fprintf(out, "; `hetsim %s` would write %s to %s%s\n", is_sweep ? "sweep" : "run",
            is_sweep ? "them" : "it", args->db_path, args->db_given ? "" : " (no --db given)");
    if (is_sweep)
        fprintf(out, "; the resolved scenario of point %lld, seed %lld (each point sets its swept keys):\n",
                (long long)(first / sw.repeat) + 1, cli_check_seed(sw.labels[first]));
    else
        fprintf(out, "; the resolved scenario (every key, numbers in SI units, as runs.config records it):\n");
    fputs(config, out);
    if (is_sweep) cli_check_print_points(&sw, selected, out);
    if (fflush(out) != 0) exit_status = 1;
    goto done;
fail:
    exit_status = cli_fail(status, diag.message);
done:
    free(config);
    free(selected);
    sweep_free(&sw);
    inidoc_free(&doc);
    free(text);
    free(sc);
    return exit_status;
}

int cli_check(int argc, char **argv)
{
    /* room for argc --set values, then argc --add-group names */
    const char **overrides = calloc(2 * ((size_t)argc + 1), sizeof *overrides);
    const char **only = calloc((size_t)argc + 1, sizeof *only);
    int n_only = 0, exit_status = -1;
    if (overrides == NULL || only == NULL) {
        free(overrides);
        free(only);
        return cli_fail(HS_E_NOMEM, "out of memory");
    }
    CliScenarioArgs args = {.db_path = "results.db", .overrides = overrides, .groups = overrides + argc + 1};
    for (int i = 0; exit_status < 0 && i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(cli_check_usage, stdout);
            exit_status = 0;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only[n_only++] = argv[++i];
        } else if (strncmp(argv[i], "--only=", 7) == 0) {
            only[n_only++] = argv[i] + 7;
        } else if (cli_scenario_arg("check", cli_check_usage, argc, argv, &i, &args) != 0) {
            exit_status = 2;
        }
    }
    if (exit_status < 0 && args.scenario_path == NULL) {
        fputs(cli_check_usage, stderr);
        exit_status = 2;
    }
    if (exit_status < 0) exit_status = cli_check_sweep("check", &args, only, n_only, stdout);
    free(overrides);
    free(only);
    return exit_status;
}
