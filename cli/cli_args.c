/* cli_args.c — the options `hetsim run` and `hetsim sweep` share, parsed in one place. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

int cli_scenario_arg(const char *command, const char *usage, int argc, char **argv, int *i,
                     CliScenarioArgs *args)
{
    const char *a = argv[*i];
    if (strcmp(a, "--db") == 0 && *i + 1 < argc) {
        args->db_path = argv[++*i];
    } else if (strcmp(a, "--set") == 0 && *i + 1 < argc) {
        args->overrides[args->n_overrides++] = argv[++*i];
    } else if (strncmp(a, "--set=", 6) == 0) {
        args->overrides[args->n_overrides++] = a + 6;
    } else if (strcmp(a, "--timing-only") == 0) {
        args->overrides[args->n_overrides++] = "run.mode=timing";
    } else if (strcmp(a, "--quiet") == 0) {
        args->quiet = 1;
    } else if (a[0] == '-') {
        fprintf(stderr, "hetsim %s: unknown or incomplete option '%s'\n%s", command, a, usage);
        return 2;
    } else if (args->scenario_path == NULL) {
        args->scenario_path = a;
    } else {
        fprintf(stderr, "hetsim %s: one scenario at a time (got '%s' and '%s')\n", command,
                args->scenario_path, a);
        return 2;
    }
    return 0;
}
