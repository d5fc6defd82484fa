/* cli_args.c — the options `hetsim run` and `hetsim sweep` share, parsed in one place,
 * and the option helpers of `hetsim report` and `hetsim plot`. */
#include "cli/cli.h"

#include "base/input_file.h"
#include "sim/scenario/scenario.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_check_database(const char *path, HsDiag *diag)
{
    return input_file_check(path, INPUT_FILE_ABSENT_OR_REGULAR, diag);
}

int cli_apply_overrides(IniDoc *doc, const CliScenarioArgs *args, HsDiag *diag)
{
    int status = HS_OK;
    for (int i = 0; status == HS_OK && i < args->n_groups; i++) status = scenario_add_group(doc, args->groups[i], diag);
    for (int i = 0; status == HS_OK && i < args->n_overrides; i++)
        status = inidoc_apply_set(doc, args->overrides[i], diag);
    return status;
}

int cli_scenario_arg(const char *command, const char *usage, int argc, char **argv, int *i,
                     CliScenarioArgs *args)
{
    const char *a = argv[*i];
    if (strcmp(a, "--db") == 0 && *i + 1 < argc) {
        args->db_path = argv[++*i];
        args->db_given = 1;
    } else if (strcmp(a, "--set") == 0 && *i + 1 < argc) {
        args->overrides[args->n_overrides++] = argv[++*i];
    } else if (strncmp(a, "--set=", 6) == 0) {
        args->overrides[args->n_overrides++] = a + 6;
    } else if (strcmp(a, "--add-group") == 0 && *i + 1 < argc) {
        args->groups[args->n_groups++] = argv[++*i];
    } else if (strncmp(a, "--add-group=", 12) == 0) {
        args->groups[args->n_groups++] = a + 12;
    } else if (strcmp(a, "--timing-only") == 0) {
        args->overrides[args->n_overrides++] = "run.mode=timing";
    } else if (strcmp(a, "--quiet") == 0) {
        args->quiet = 1;
    } else if (strcmp(a, "--threads") == 0 && *i + 1 < argc) {
        /* checked here so the message names the option, then applied as run.threads */
        const char *value = argv[++*i];
        int64_t n;
        if (cli_parse_whole(value, 1, &n, NULL) != 0 || n > 1024) {
            fprintf(stderr, "hetsim %s: --threads needs a number in [1, 1024], got '%s'\n", command, value);
            return 2;
        }
        snprintf(args->threads_set, sizeof args->threads_set, "run.threads=%d", (int)n);
        args->overrides[args->n_overrides++] = args->threads_set;
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

/* "--name VALUE" or "--name=VALUE": 1 and *value when argv[*i] is that option (advancing
 * *i past a separate value), 0 when not, -1 when its value is missing. */
static int cli_option_value(const char *name, int argc, char **argv, int *i, const char **value)
{
    size_t length = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, name, length) != 0) return 0;
    if (arg[length] == '=') {
        *value = arg + length + 1;
        return 1;
    }
    if (arg[length] != '\0') return 0;
    if (*i + 1 >= argc) return -1;
    *value = argv[++*i];
    return 1;
}

/* Takes the option argv[*i] (advancing *i past its value): -1 when taken, else the exit
 * status of bad usage. */
static int cli_take_option(const char *command, const CliOption *options, int count, int argc,
                           char **argv, int *i, FILE *err)
{
    const char *arg = argv[*i];
    for (int k = 0; k < count; k++) {
        if (options[k].value == NULL) {
            if (strcmp(arg, options[k].name) != 0) continue;
            *options[k].flag = 1;
            return -1;
        }
        int found = cli_option_value(options[k].name, argc, argv, i, options[k].value);
        if (found > 0) return -1;
        if (found < 0) {
            fprintf(err, "hetsim %s: %s needs %s\nTry 'hetsim %s --help'.\n", command, arg,
                    options[k].needs, command);
            return 2;
        }
    }
    return cli_usage_error(err, command, "unknown option '%s'", arg);
}

int cli_parse_command(const char *command, const char *usage, const CliOption *options, int count, int argc,
                      char **argv, const char **operands, int n_operands, const char *operand_names, FILE *out,
                      FILE *err)
{
    int options_done = 0, given = 0;
    for (int k = 0; k < n_operands; k++) operands[k] = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_done && arg[0] == '-' && arg[1] != '\0') {
            if (strcmp(arg, "--") == 0) {
                options_done = 1;
            } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
                fputs(usage, out);
                return 0;
            } else {
                int status = cli_take_option(command, options, count, argc, argv, &i, err);
                if (status >= 0) return status;
            }
        } else if (given < n_operands) {
            operands[given++] = arg;
        } else {
            fprintf(err, "hetsim %s: unexpected argument '%s' (it takes %s only)\nTry 'hetsim %s --help'.\n",
                    command, arg, operand_names, command);
            return 2;
        }
    }
    if (given < n_operands) {
        fprintf(err, "hetsim %s: missing %s\nTry 'hetsim %s --help'.\n", command,
                given == 0 ? operand_names : "an argument", command);
        return 2;
    }
    return -1;
}

int cli_parse_db_command(const char *command, const char *usage, const CliOption *options,
                         int count, int argc, char **argv, const char **db_path, FILE *out,
                         FILE *err)
{
    return cli_parse_command(command, usage, options, count, argc, argv, db_path, 1, "FILE.db", out, err);
}

void cli_print_database(const char *db_path)
{
    printf("database: %s\n", db_path);
    fflush(stdout);
}

void cli_note_default_database(const CliScenarioArgs *args)
{
    if (args->db_given || args->quiet) return;
    char folder[4096];
    fprintf(stderr, "hetsim: note: no --db given: the rows go to %s in %s\n", args->db_path,
            getcwd(folder, sizeof folder) ? folder : "the current folder");
}

int cli_parse_whole(const char *text, int64_t minimum, int64_t *out, const char **end_out)
{
    char *end = NULL;
    if (text == NULL || *text < '0' || *text > '9') return -1;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno != 0 || value < minimum) return -1;
    *out = value;
    if (end_out != NULL) *end_out = end;
    else if (*end != '\0') return -1;
    return 0;
}

int cli_usage_error(FILE *err, const char *command, const char *fmt, const char *arg)
{
    fprintf(err, "hetsim %s: ", command);
    fprintf(err, fmt, arg);
    fprintf(err, "\nTry 'hetsim %s --help'.\n", command);
    return 2;
}
