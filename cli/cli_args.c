/* cli_args.c — the options `hetsim run` and `hetsim sweep` share, parsed in one place,
 * and the option helpers of `hetsim report` and `hetsim plot`. */
#include "cli/cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

int cli_parse_db_command(const char *command, const char *usage, const CliOption *options,
                         int count, int argc, char **argv, const char **db_path, FILE *out,
                         FILE *err)
{
    int options_done = 0;
    *db_path = NULL;
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
        } else if (*db_path == NULL) {
            *db_path = arg;
        } else {
            return cli_usage_error(err, command, "unexpected argument '%s' (one FILE.db only)", arg);
        }
    }
    if (*db_path == NULL) return cli_usage_error(err, command, "%s", "missing FILE.db");
    return -1;
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

/* The scenario text as read (see cli.h). */
int cli_read_text(const char *path, char **text, HsDiag *diag)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return hs_diag_set(diag, HS_E_INPUT, path, 0, "cannot open: %s", strerror(errno));
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    int read_error = ferror(f);
    fclose(f);
    if (buf == NULL) return hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
    if (read_error) {
        free(buf);
        return hs_diag_set(diag, HS_E_IO, path, 0, "read error");
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        free(buf);
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "not a text file (contains NUL bytes)");
    }
    *text = buf;
    return HS_OK;
}
