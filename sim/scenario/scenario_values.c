/* scenario_values.c — the value helpers of scenario resolution (scenario_resolver.h):
 * whole numbers, choices, lists, plain text, input paths, and the messages that name
 * where a bad value came from. The schema's reader (scenario_read.c) builds on them. */
/* realpath() is XSI */
#define _XOPEN_SOURCE 700
#include "sim/scenario/scenario_resolver.h"

#include "base/names.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scenario_is_group(const char *section)
{
    return strncmp(section, "agents.", 7) == 0 && section[7] != '\0';
}

/* [method.NAME]: knobs of method NAME, used only when NAME runs (so one file can sweep
 * over methods with their own knobs). */
const MethodOps *scenario_method_section(const char *section)
{
    if (strncmp(section, "method.", 7) != 0) return NULL;
    return method_lookup(section + 7);
}

/* Where a section that has no line of its own came from: the first override that made it. */
const char *scenario_section_where(const IniDoc *doc, const char *section, char *where, size_t size)
{
    snprintf(where, size, "--set");
    for (int i = 0; i < doc->count; i++)
        if (strcmp(doc->entries[i].section, section) == 0) return inidoc_entry_where(&doc->entries[i], where, size);
    return where;
}

int scenario_add_group(IniDoc *doc, const char *name, HsDiag *diag)
{
    char section[INIDOC_NAME_MAX + 8];
    size_t len = strlen(name);
    int control = 0;
    for (const char *p = name; *p; p++) control |= (unsigned char)*p < 0x20 || *p == 0x7f;
    if (len == 0 || control || isspace((unsigned char)name[0]) || isspace((unsigned char)name[len - 1]) ||
        strpbrk(name, "[];#=") != NULL)
        return hs_diag_set(diag, HS_E_INPUT, "--add-group", 0,
                           "'%.80s' is not a group name (text without control characters, blanks at its ends, "
                           "or any of [ ] ; # =)", control ? "?" : name);
    if (len + 7 >= INIDOC_INIH_NAME_MAX)
        return hs_diag_set(diag, HS_E_INPUT, "--add-group", 0, "'%.80s' is too long for a group name (at most %d "
                           "characters)", name, INIDOC_INIH_NAME_MAX - 8);
    snprintf(section, sizeof section, "agents.%s", name);
    int line = inidoc_section_line(doc, section);
    if (line > 0)
        return hs_diag_set(diag, HS_E_INPUT, "--add-group", 0,
                           "%s: %s:%d defines [%s] already (change its keys with --set %s.KEY=VALUE)", name,
                           doc->file, line, section, section);
    if (line == 0)
        return hs_diag_set(diag, HS_E_INPUT, "--add-group", 0, "%s: [%s] is added twice", name, section);
    if (inidoc_add_section(doc, section) != HS_OK) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    return HS_OK;
}

int scenario_invented_group(Resolver *r, const char *section)
{
    const IniDoc *doc = r->doc;
    const char *groups[SCENARIO_MAX_GROUPS + 1];
    int n = 0;
    for (int i = 0; i < doc->n_sections && n < SCENARIO_MAX_GROUPS; i++)
        if (scenario_is_group(doc->sections[i]) &&
            (doc->section_origins[i] == INIDOC_FROM_FILE || doc->section_origins[i] == INIDOC_FROM_ADD))
            groups[n++] = doc->sections[i];
    groups[n] = NULL;
    char hint[INIDOC_NAME_MAX + 40], where[INIDOC_VALUE_MAX + 160];
    names_suggest(section, groups, hint, sizeof hint);
    const IniEntry *e = NULL;
    for (int i = 0; i < doc->count && e == NULL; i++)
        if (strcmp(doc->entries[i].section, section) == 0) e = &doc->entries[i];
    if (e == NULL) return hs_diag_set(r->diag, HS_E_INTERNAL, doc->file, 0, "[%s] has no origin", section);
    inidoc_entry_where(e, where, sizeof where);
    if (e->origin == INIDOC_FROM_SWEEP)
        return hs_diag_set(r->diag, HS_E_INPUT, where, 0,
                           "[sweep] %s.%s: the scenario defines no group [%s]%s; a swept key changes what the file "
                           "defines (write the group in the file, count = 0 is allowed, or add it with "
                           "--add-group %s)", section, e->key, section, hint, section + 7);
    return hs_diag_set(r->diag, HS_E_INPUT, where, 0,
                       "the scenario defines no group [%s]%s; --set changes only what the file defines (add the "
                       "group with --add-group %s)", section, hint, section + 7);
}

IniEntry *scenario_take(Resolver *r, const char *section, const char *key)
{
    IniEntry *e = inidoc_find(r->doc, section, key);
    if (e) e->used = 1;
    return e;
}

/* "FILE:LINE: [section] key: detail", or "--set section.key=value: detail" for an
 * override, which names the section and key itself. */
int scenario_entry_bad(HsDiag *diag, const IniEntry *e, const char *detail)
{
    char where[INIDOC_VALUE_MAX + 160];
    inidoc_entry_where(e, where, sizeof where);
    if (e->origin == INIDOC_FROM_SET) return hs_diag_set(diag, HS_E_INPUT, where, 0, "%s", detail);
    return hs_diag_set(diag, HS_E_INPUT, where, 0, "[%s] %s: %s", e->section, e->key, detail);
}

int scenario_bad(Resolver *r, const IniEntry *e, const char *fmt, const char *detail)
{
    char message[sizeof r->diag->message];
    snprintf(message, sizeof message, fmt, detail);
    return scenario_entry_bad(r->diag, e, message);
}

int scenario_missing(Resolver *r, const char *section, const char *key)
{
    int line = inidoc_section_line(r->doc, section);
    if (line <= 0 && inidoc_section_origin(r->doc, section) == INIDOC_FROM_ADD)
        return hs_diag_set(r->diag, HS_E_INPUT, "--add-group", 0, "%s: missing required key '%s' in [%s]",
                           section + 7, key, section);
    return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, line > 0 ? line : 0,
                       "missing required key '%s' in [%s]", key, section);
}

int scenario_parse_int(const char *text, long long min, long long max, long long *out)
{
    while (isspace((unsigned char)*text)) text++;
    errno = 0;
    char *end;
    long long v = strtoll(text, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (end == text || *end != '\0' || errno) return HS_E_INPUT;
    if (v < min || v > max) return HS_E_INPUT;
    *out = v;
    return HS_OK;
}

/* value must be one of "a|b|c"; returns its index in *out. */
int scenario_match_choice(const char *value, const char *choices)
{
    int index = 0;
    const char *p = choices;
    size_t len = strlen(value);
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, value, n) == 0) return index;
        if (!bar) return -1;
        p = bar + 1;
        index++;
    }
}

void scenario_trim_copy(char *dst, size_t size, const char *src)
{
    while (isspace((unsigned char)*src)) src++;
    snprintf(dst, size, "%s", src);
    size_t len = strlen(dst);
    while (len > 0 && isspace((unsigned char)dst[len - 1])) dst[--len] = '\0';
}

/* A comma-separated list of positive whole numbers. An empty element (two commas in a
 * row, a leading or trailing comma, only blanks) is an error, never dropped: a `layers`
 * list that lost an element would silently describe a shallower model. */
int scenario_int_list(Resolver *r, IniEntry *e, const char *text, int min, int max, double *values,
                      int max_count, int *count)
{
    *count = 0;
    const char *p = text;
    for (int index = 1;; index++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        if (len >= sizeof item) return scenario_bad(r, e, "element %s is too long", index == 1 ? "1" : "of the list");
        memcpy(item, p, len);
        item[len] = '\0';
        char trimmed[64];
        scenario_trim_copy(trimmed, sizeof trimmed, item);
        char why[160];
        if (trimmed[0] == '\0') {
            snprintf(why, sizeof why, "element %d of the list is empty (a list is N,N,...,N)", index);
            return scenario_bad(r, e, "%s", why);
        }
        if (*count == max_count) {
            snprintf(why, sizeof why, "more than %d values", max_count);
            return scenario_bad(r, e, "%s", why);
        }
        long long v;
        if (scenario_parse_int(trimmed, min, max, &v) != HS_OK) {
            snprintf(why, sizeof why, "'%.60s' is not a whole number in [%d, %d]", trimmed, min, max);
            return scenario_bad(r, e, "%s", why);
        }
        values[(*count)++] = (double)v;
        if (comma == NULL) return HS_OK;
        p = comma + 1;
    }
}

/* A comma-separated list of numbers in [min, max] (no unit), at most max_count; empty
 * elements are errors, as for scenario_int_list. */
int scenario_real_list(Resolver *r, IniEntry *e, const char *text, double min, double max, double *values,
                       int max_count, int *count)
{
    *count = 0;
    const char *p = text;
    for (int index = 1;; index++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64], trimmed[64], why[200];
        if (len >= sizeof item) return scenario_bad(r, e, "element %s is too long", index == 1 ? "1" : "of the list");
        memcpy(item, p, len);
        item[len] = '\0';
        scenario_trim_copy(trimmed, sizeof trimmed, item);
        if (trimmed[0] == '\0') {
            snprintf(why, sizeof why, "element %d of the list is empty (a list is X,X,...,X)", index);
            return scenario_bad(r, e, "%s", why);
        }
        if (*count == max_count) {
            snprintf(why, sizeof why, "more than %d values", max_count);
            return scenario_bad(r, e, "%s", why);
        }
        double v;
        char unit_why[300];
        if (units_parse(trimmed, UNIT_PLAIN, &v, unit_why, sizeof unit_why) != HS_OK || !(v >= min && v <= max)) {
            snprintf(why, sizeof why, "'%.60s' is not a number in [%g, %g]", trimmed, min, max);
            return scenario_bad(r, e, "%s", why);
        }
        values[(*count)++] = v;
        if (comma == NULL) return HS_OK;
        p = comma + 1;
    }
}

/* Text that runs.config must give back as it was: a ';' or '#' there would start a
 * comment when the config is read again; a tab is the one control character a line may
 * hold (the document refuses the others), and none belongs in a name or a path. */
int scenario_plain_text(Resolver *r, const IniEntry *e, const char *text)
{
    if (strchr(text, '\t') != NULL) return scenario_bad(r, e, "%s", "holds a tab (a control character)");
    if (strpbrk(text, ";#") == NULL) return HS_OK;
    char why[INIDOC_VALUE_MAX + 80];
    snprintf(why, sizeof why, "'%.200s' holds ';' or '#', which start comments in a scenario file", text);
    return scenario_bad(r, e, "%s", why);
}

/* A file a scenario names (a trace, an edges list) is relative to the scenario file's
 * folder (an override's, to the current folder); it is stored absolute so that
 * runs.config still finds it from any working directory. */
int scenario_input_path(Resolver *r, const IniEntry *e, char *path, size_t size)
{
    char joined[1024];
    if (path[0] == '/' || e->origin == INIDOC_FROM_SET) {
        snprintf(joined, sizeof joined, "%s", path);
    } else {
        const char *slash = strrchr(r->doc->file, '/');
        int dir_len = slash ? (int)(slash - r->doc->file) : 0;
        if (dir_len > 0) snprintf(joined, sizeof joined, "%.*s/%s", dir_len, r->doc->file, path);
        else snprintf(joined, sizeof joined, "%s", path);
    }
    char *absolute = realpath(joined, NULL);
    if (absolute == NULL) {
        /* worded as base/input_file.c's readers say it (a data set's folder, a scenario) */
        char why[1200];
        if (errno == ENOENT || errno == ENOTDIR) snprintf(why, sizeof why, "%s: not found", joined);
        else snprintf(why, sizeof why, "%s: cannot open: %s", joined, strerror(errno));
        return scenario_bad(r, e, "%s", why);
    }
    int fits = strlen(absolute) < size;
    if (fits) snprintf(path, size, "%s", absolute);
    free(absolute);
    return fits ? scenario_plain_text(r, e, path) : scenario_bad(r, e, "%s", "the file's absolute path is too long");
}

/* An error about a whole section (a combination of keys), at its header line. */
int scenario_section_bad(Resolver *r, const char *section, const char *message)
{
    int line = inidoc_section_line(r->doc, section);
    if (line > 0) return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, line, "[%s] %s", section, message);
    char where[INIDOC_VALUE_MAX + 160];
    return hs_diag_set(r->diag, HS_E_INPUT, scenario_section_where(r->doc, section, where, sizeof where), 0,
                       "[%s] %s", section, message);
}
