/* cli_help.c — `hetsim help keys [SECTION] [--markdown]` and `hetsim methods [NAME]
 * [--markdown]`: every scenario key (its type, range, default, unit and help) and every
 * method (its summary, its keys, what it accepts), printed from the schema
 * (sim/scenario/scenario_schema.h), the methods' key tables and the registry (sim/methods/method.h).
 * The --markdown forms of the whole lists are docs/reference/scenario-keys.md and
 * docs/reference/methods.md (`make docs` writes them; tests/cli/docs.sh fails when the
 * committed files differ), so the reference cannot drift from the code. */
#include "cli/cli_help.h"

#include "cli/cli_features.h"
#include "sim/scenario/features.h"

#include "base/names.h"
#include "base/units.h"
#include "sim/methods/method.h"
#include "sim/scenario/scenario_schema.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char cli_help_usage[] =
    "usage: hetsim help keys [SECTION] [--markdown]\n"
    "\n"
    "Prints every key of every scenario section (or of SECTION: run, data, model, method,\n"
    "topology, agents, agents.NAME, server, servers, network, compression, byzantine,\n"
    "privacy): its type, the values it accepts, its default, its unit and what it does.\n"
    "  --markdown   the whole reference as Markdown (docs/reference/scenario-keys.md)\n"
    "The keys of each method: hetsim methods NAME.\n";

static const char cli_methods_usage[] =
    "usage: hetsim methods [NAME | --features] [--markdown | --list]\n"
    "\n"
    "Lists the training methods of [run] method with their summaries; with NAME, the\n"
    "method's [method] keys (type, values, default, what each does) and the sections and\n"
    "features it accepts.\n"
    "  --markdown   every method as Markdown (docs/reference/methods.md)\n"
    "  --features   the method x feature table: which method runs with [compression],\n"
    "               [byzantine], [privacy], prune and freeze, and why the others do not\n"
    "               (--markdown: docs/reference/features.md; --list: a line per cell)\n";

/* ---- a row as text ---- */

/* 0.05, 1e6, 1e-9, inf: as a reader writes them. */
static void help_number(double x, char *buf, size_t size)
{
    if (isinf(x)) {
        snprintf(buf, size, "%sinf", x < 0 ? "-" : "");
        return;
    }
    char raw[64];
    snprintf(raw, sizeof raw, "%.15g", x);
    if (fabs(x) >= 1e5) { /* 1000000 -> 1e6 when that is exact; 1048576 stays */
        char shorter[64];
        snprintf(shorter, sizeof shorter, "%g", x);
        if (strtod(shorter, NULL) == x) snprintf(raw, sizeof raw, "%s", shorter);
    }
    char *e = strchr(raw, 'e');
    if (e) { /* 1e+06 -> 1e6, 1e-09 -> 1e-9 */
        char *digits = e + 1;
        int negative = *digits == '-';
        if (*digits == '+' || *digits == '-') digits++;
        while (*digits == '0' && digits[1]) digits++;
        snprintf(buf, size, "%.*se%s%s", (int)(e - raw), raw, negative ? "-" : "", digits);
        return;
    }
    snprintf(buf, size, "%s", raw);
}

static const char *help_type(const SchemaKey *k)
{
    switch (k->type) {
    case SCHEMA_INT: return "int";
    case SCHEMA_REAL: return k->unit == UNIT_TIME ? "time" : k->unit == UNIT_BANDWIDTH ? "bandwidth" : "real";
    case SCHEMA_CHOICE: return "choice";
    case SCHEMA_SEED: return "int";
    case SCHEMA_TEXT: return "text";
    case SCHEMA_METHOD: return "method";
    case SCHEMA_INT_LIST: return "int list";
    case SCHEMA_REAL_LIST: return "real list";
    case SCHEMA_CHOICE_OR_FILE: return "choice or path";
    case SCHEMA_DISTRIBUTION: return "distribution";
    case SCHEMA_SLOWDOWN: return "slowdown";
    case SCHEMA_AVAILABILITY: return "availability";
    case SCHEMA_STEPS: return "steps";
    case SCHEMA_TIME: return "time";
    case SCHEMA_WORD_OR_REAL: return "real";
    }
    return "?";
}

/* "[a, b]" with an open end as "(" or ")". */
static void help_interval(const SchemaKey *k, char *buf, size_t size)
{
    char low[64], high[64];
    help_number(k->min, low, sizeof low);
    help_number(k->max, high, sizeof high);
    snprintf(buf, size, "%s%s, %s%s", k->flags & SCHEMA_OPEN_MIN ? "(" : "[", low, high,
             k->flags & SCHEMA_OPEN_MAX ? ")" : "]");
}

/* "a | b | c" */
static void help_choices(const char *choices, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const char *p = choices; *p && used + 4 < size; p++) {
        if (*p == '|') used += (size_t)snprintf(buf + used, size - used, " | ");
        else buf[used++] = *p, buf[used] = '\0';
    }
}

static void help_range(const SchemaKey *k, char *buf, size_t size)
{
    if (k->doc_range) {
        snprintf(buf, size, "%s", k->doc_range);
        return;
    }
    char interval[160], choices[200];
    help_interval(k, interval, sizeof interval);
    if (k->choices) help_choices(k->choices, choices, sizeof choices);
    switch (k->type) {
    case SCHEMA_INT:
    case SCHEMA_REAL: snprintf(buf, size, "%s", interval); break;
    case SCHEMA_CHOICE: snprintf(buf, size, "%s", choices); break;
    case SCHEMA_CHOICE_OR_FILE: snprintf(buf, size, "%s | FILE%s", choices, k->suffix); break;
    case SCHEMA_TEXT: snprintf(buf, size, "not empty, no ; or #"); break;
    case SCHEMA_METHOD: snprintf(buf, size, "a method (hetsim methods)"); break;
    case SCHEMA_AVAILABILITY: snprintf(buf, size, "always | trace(FILE.csv)"); break;
    case SCHEMA_STEPS: snprintf(buf, size, "epoch | %s", interval); break;
    case SCHEMA_TIME:
        snprintf(buf, size, "%s%s%s%s", isinf(k->max) ? "none | " : "", k->choices ? k->choices : "",
                 k->choices ? " | " : "", interval);
        break;
    case SCHEMA_WORD_OR_REAL: snprintf(buf, size, "%s | %s", k->choices, interval); break;
    default: snprintf(buf, size, "%s", interval); break;
    }
}

static void help_default(const SchemaKey *k, char *buf, size_t size)
{
    snprintf(buf, size, "%s", k->doc_default              ? k->doc_default
                              : k->flags & SCHEMA_REQUIRED ? "required"
                              : k->fallback                ? k->fallback
                                                           : "-");
}

/* "a, b and c": the methods with one of the capabilities. */
static void help_methods_with(int capabilities, char *buf, size_t size)
{
    const MethodOps *const *all = method_all();
    int total = 0, written = 0;
    for (int i = 0; all[i]; i++) total += (all[i]->capabilities & capabilities) != 0;
    buf[0] = '\0';
    for (int i = 0; all[i]; i++) {
        if (!(all[i]->capabilities & capabilities)) continue;
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", written == 0 ? "" : written == total - 1 ? " and " : ", ",
                 all[i]->name);
        written++;
    }
}

/* A Markdown table cell: '|' escaped. */
static void help_cell(const char *text, FILE *out)
{
    for (const char *p = text; *p; p++) {
        if (*p == '|') fputc('\\', out);
        fputc(*p, out);
    }
}

/* One key: "  name = default    type, range[, unit]" and its help below. */
static void help_key_text(const SchemaKey *k, FILE *out)
{
    char range[400], fallback[200], head[300], methods[300];
    help_range(k, range, sizeof range);
    help_default(k, fallback, sizeof fallback);
    snprintf(head, sizeof head, "%s = %s", k->name, fallback);
    const char *unit = units_base_name(k->unit);
    fprintf(out, "  %-34s %s: %s%s%s\n", head, help_type(k), range, *unit ? " " : "", unit);
    fprintf(out, "      %s", k->help);
    if (k->needs) {
        help_methods_with((int)k->needs, methods, sizeof methods);
        fprintf(out, " (%s only)", methods);
    }
    fputc('\n', out);
}

static void help_key_markdown(const SchemaKey *k, FILE *out)
{
    char range[400], fallback[200], methods[300];
    help_range(k, range, sizeof range);
    help_default(k, fallback, sizeof fallback);
    fprintf(out, "| `%s` | %s | ", k->name, help_type(k));
    help_cell(range, out);
    fputs(" | ", out);
    help_cell(fallback, out);
    fprintf(out, " | %s | ", units_base_name(k->unit));
    help_cell(k->help, out);
    if (k->needs) {
        help_methods_with((int)k->needs, methods, sizeof methods);
        fprintf(out, " (%s only)", methods);
    }
    fputs(" |\n", out);
}

static void help_section(const SchemaSection *s, int markdown, FILE *out)
{
    char methods[400];
    if (markdown) fprintf(out, "\n## [%s]\n\n%c%s.", s->name, toupper((unsigned char)s->help[0]), s->help + 1);
    else fprintf(out, "[%s] %s", s->name, s->help);
    if (s->needs) {
        help_methods_with((int)s->needs, methods, sizeof methods);
        fprintf(out, markdown ? " Applies to %s." : " (%s)", methods);
    }
    fputs(markdown ? "\n\n" : "\n", out);
    if (s->id == SCHEMA_IN_METHOD) {
        fputs(markdown ? "The keys of each method are in [methods.md](methods.md).\n"
                       : "  the keys of each method: hetsim methods NAME\n",
              out);
        return;
    }
    if (s->id == SCHEMA_IN_SWEEP) return;
    if (markdown) fputs("| key | type | values | default | unit | meaning |\n|---|---|---|---|---|---|\n", out);
    int n;
    const SchemaKey *rows = schema_keys(&n);
    for (int i = 0; i < n; i++)
        if (rows[i].sections & s->id) markdown ? help_key_markdown(&rows[i], out) : help_key_text(&rows[i], out);
}

static const char help_keys_preamble[] =
    "<!-- Generated by `hetsim help keys --markdown` (make docs) from the schema in\n"
    "     sim/scenario/scenario_schema.c: edit the schema, not this file. -->\n"
    "# Scenario keys\n"
    "\n"
    "Every key of every section of a scenario file. *values* is what the key accepts\n"
    "(`[a, b]` includes both ends, `(a, b]` not a); numbers take SI suffixes in the key's\n"
    "unit (`2 GFLOPS`, `100 Mbit/s`, `10 ms`). Keys that matter only for some value of\n"
    "another key (e.g. `[model] depth` for `arch = resnet`) are accepted whatever it is\n"
    "and written to `runs.config` only when they matter. The same text, section by\n"
    "section: `hetsim help keys [SECTION]`.\n";

int cli_help(int argc, char **argv)
{
    const char *section = NULL;
    int markdown = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(cli_help_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--markdown") == 0) {
            markdown = 1;
        } else if (argv[i][0] == '-' || section != NULL) {
            fprintf(stderr, "hetsim help keys: unexpected '%s'\n%s", argv[i], cli_help_usage);
            return 2;
        } else {
            section = argv[i];
        }
    }
    const SchemaSection *only = section ? schema_section(section) : NULL;
    if (section && only == NULL) {
        const char *names[32];
        int n = 0;
        for (const SchemaSection *s = schema_sections(); s->name && n < 31; s++) names[n++] = s->name;
        names[n] = NULL;
        char hint[128];
        names_suggest(section, names, hint, sizeof hint);
        fprintf(stderr, "hetsim help keys: unknown section '%s'%s\n", section, hint);
        return 2;
    }
    if (markdown && only == NULL) fputs(help_keys_preamble, stdout);
    for (const SchemaSection *s = schema_sections(); s->name; s++) {
        if (only && s != only) continue;
        if (!markdown && only == NULL && s != schema_sections()) fputc('\n', stdout);
        help_section(s, markdown, stdout);
    }
    return 0;
}

/* ---- methods ---- */

/* What rounds.extra holds for m (MethodExtra): one line, or one per [method] key it
 * depends on. */
static void help_method_extra(const MethodOps *m, int markdown, FILE *out)
{
    const MethodExtra *e = m->extra;
    const char *code = markdown ? "`" : "";
    if (e == NULL || e->meaning == NULL) {
        fprintf(out, markdown ? "\n`rounds.extra`: NULL (the method writes no figure there).\n"
                              : "  rounds.extra: NULL (the method writes no figure there)\n");
        return;
    }
    if (e->key == NULL) {
        fprintf(out, markdown ? "\n`rounds.extra`: %s.\n" : "  rounds.extra: %s\n", e->meaning);
        return;
    }
    fputs(markdown ? "\n`rounds.extra`, by the run's `[method]` keys:\n\n" : "  rounds.extra, by the run's [method] keys:\n",
          out);
    for (; e->meaning != NULL; e++) {
        fputs(markdown ? "- " : "    ", out);
        if (e->key == NULL) fputs("otherwise", out);
        else if (e->unless) fprintf(out, "%s%s%s is not %s%s%s", code, e->key, code, code, e->value, code);
        else fprintf(out, "%s%s = %s%s", code, e->key, e->value, code);
        fprintf(out, ": %s\n", e->meaning);
        if (e->key == NULL) return;
    }
    fprintf(out, "%sotherwise: NULL\n", markdown ? "- " : "    ");
}

static void help_method_text(const MethodOps *m, FILE *out)
{
    fprintf(out, "%s: %s\n", m->name, m->summary);
    for (int f = 0; f < FEATURE_COUNT; f++)
        if (feature_refusal(m, (Feature)f) == NULL) fprintf(out, "  accepts %s\n", feature_info((Feature)f)->setting);
    for (const MethodCapability *c = method_capabilities(); c->flag; c++)
        if (m->capabilities & c->flag) fprintf(out, "  accepts %s\n", c->accepts);
    help_method_extra(m, 0, out);
    if (m->keys == NULL || m->keys[0].name == NULL) {
        fputs("  no [method] keys\n", out);
        return;
    }
    fprintf(out, "  keys ([method], or [method.%s] in a file that sweeps over methods):\n", m->name);
    for (const SchemaKey *k = m->keys; k->name; k++) help_key_text(k, out);
}

static void help_method_markdown(const MethodOps *m, FILE *out)
{
    fprintf(out, "\n## %s\n\n%c%s.\n", m->name, toupper((unsigned char)m->summary[0]), m->summary + 1);
    int any = 0;
    for (int f = 0; f < FEATURE_COUNT; f++)
        if (feature_refusal(m, (Feature)f) == NULL)
            fprintf(out, "%s- `%s` (%s)\n", any++ ? "" : "\nAccepts:\n\n", feature_info((Feature)f)->setting,
                    feature_info((Feature)f)->name);
    for (const MethodCapability *c = method_capabilities(); c->flag; c++)
        if (m->capabilities & c->flag) fprintf(out, "%s- %s\n", any++ ? "" : "\nAccepts:\n\n", c->accepts);
    help_method_extra(m, 1, out);
    if (m->keys == NULL || m->keys[0].name == NULL) {
        fputs("\nNo `[method]` keys.\n", out);
        return;
    }
    fprintf(out, "\nKeys of `[method]` (or `[method.%s]`):\n\n", m->name);
    fputs("| key | type | values | default | unit | meaning |\n|---|---|---|---|---|---|\n", out);
    for (const SchemaKey *k = m->keys; k->name; k++) help_key_markdown(k, out);
}

static const char help_methods_preamble[] =
    "<!-- Generated by `hetsim methods --markdown` (make docs) from the method registry\n"
    "     (sim/methods/): edit the methods' tables, not this file. -->\n"
    "# Methods\n"
    "\n"
    "Every method `[run] method` names: its summary, what it accepts beyond [run], [data],\n"
    "[model], [agents] and [network] (from its capabilities), what its figure in the\n"
    "database's `rounds.extra` column means (`hetsim show` and `hetsim report --run` title\n"
    "the column with it), and its `[method]` keys. The same text, method by method:\n"
    "`hetsim methods NAME`. What each method does in detail: [docs/methods.md](../methods.md).\n"
    "\n"
    "| method | summary |\n|---|---|\n";

int cli_methods(int argc, char **argv)
{
    const char *name = NULL;
    int markdown = 0, features = 0, list = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(cli_methods_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--markdown") == 0) {
            markdown = 1;
        } else if (strcmp(argv[i], "--features") == 0) {
            features = 1;
        } else if (strcmp(argv[i], "--list") == 0) {
            list = 1;
        } else if (argv[i][0] == '-' || name != NULL) {
            fprintf(stderr, "hetsim methods: unexpected '%s'\n%s", argv[i], cli_methods_usage);
            return 2;
        } else {
            name = argv[i];
        }
    }
    if (features || list) {
        if (!features || name || (list && markdown)) {
            fprintf(stderr, "hetsim methods: --features takes --markdown or --list, no NAME\n%s", cli_methods_usage);
            return 2;
        }
        cli_features(list ? CLI_FEATURES_LIST : markdown ? CLI_FEATURES_MARKDOWN : CLI_FEATURES_TEXT, stdout);
        return 0;
    }
    const MethodOps *only = name ? method_lookup(name) : NULL;
    if (name && only == NULL) {
        const char *names[64];
        int n = 0;
        for (const MethodOps *const *m = method_all(); *m && n < 63; m++) names[n++] = (*m)->name;
        names[n] = NULL;
        char hint[128];
        names_suggest(name, names, hint, sizeof hint);
        fprintf(stderr, "hetsim methods: unknown method '%s'%s\n", name, hint);
        return 2;
    }
    if (only) {
        markdown ? help_method_markdown(only, stdout) : help_method_text(only, stdout);
        return 0;
    }
    if (markdown) {
        fputs(help_methods_preamble, stdout);
        for (const MethodOps *const *m = method_all(); *m; m++) {
            fprintf(stdout, "| [`%s`](#%s) | ", (*m)->name, (*m)->name);
            help_cell((*m)->summary, stdout);
            fputs(" |\n", stdout);
        }
        for (const MethodOps *const *m = method_all(); *m; m++) help_method_markdown(*m, stdout);
        return 0;
    }
    for (const MethodOps *const *m = method_all(); *m; m++) printf("  %-12s %s\n", (*m)->name, (*m)->summary);
    puts("\nhetsim methods NAME: a method's keys and what it accepts.");
    return 0;
}
