/* scenario_inputs.c — the files a resolved scenario names, read at resolution so that a
 * bad file is an input error at the key that names it, before anything is written
 * (issue 28, classes 5 and 8): every attribute trace is loaded exactly as the engine
 * will load it (scenario_trace_load is the one loader both call), and a dataset's folder
 * must exist as a folder (the check hook of the [data] path row). The edges and assignment files are read where [topology] and
 * [servers] are resolved (scenario.c); the dataset's files are read whole before the
 * database is opened by the commands (dataset_check in cli/cli_preflight.c), once per
 * folder, since that is up to seconds, not milliseconds. Messages: "SCENARIO:LINE:
 * [section] key: FILE:LINE: what is wrong". */
/* realpath() is XSI */
#define _XOPEN_SOURCE 700
#include "sim/scenario/scenario_resolver.h"

#include "base/input_file.h"
#include "sim/kernel/trace.h"

#include <stdlib.h>
#include <string.h>

static const Distribution *scenario_trace_of(const AgentGroupSpec *spec, int attribute)
{
    switch (attribute) {
    case SCENARIO_TRACE_COMPUTE: return &spec->compute;
    case SCENARIO_TRACE_UPLINK: return &spec->uplink;
    case SCENARIO_TRACE_DOWNLINK: return &spec->downlink;
    default: return &spec->availability;
    }
}

int scenario_trace_load(const Scenario *sc, int group, int attribute, char *needed, Trace *out, HsDiag *diag)
{
    /* nodes as world.c numbers them: [agents] itself, each group in order, then the
     * servers, which a trace names `server` (groups[n_groups]) */
    int n = sc->n_agents + sc->n_servers, n_groups = sc->n_groups + (sc->n_servers > 0);
    const Distribution *d = scenario_trace_of(&sc->groups[group], attribute);
    int *group_of = malloc((size_t)(n > 0 ? n : 1) * sizeof *group_of);
    if (group_of == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    const char *names[SCENARIO_MAX_GROUPS];
    int index = 0;
    for (int g = 0; g < n_groups; g++) {
        names[g] = sc->groups[g].name;
        int count = g < sc->n_groups ? sc->groups[g].count : sc->n_servers;
        for (int k = 0; k < count && index < n; k++) group_of[index++] = g;
    }
    for (int i = 0; i < n; i++) needed[i] = group_of[i] == group;
    UnitKind unit = attribute == SCENARIO_TRACE_COMPUTE        ? UNIT_COMPUTE
                    : attribute == SCENARIO_TRACE_AVAILABILITY ? UNIT_PLAIN
                                                               : UNIT_BANDWIDTH;
    int status = trace_load(d->path, unit, n, group_of, names, n_groups, needed, out, diag);
    free(group_of);
    return status;
}

IniEntry *scenario_group_entry(Resolver *r, int g, const char *key)
{
    const Scenario *sc = r->sc;
    char group[INIDOC_NAME_MAX + 8];
    const char *section = g == 0 ? "agents" : g == sc->n_groups ? (sc->servers_section ? "servers" : "server") : group;
    if (g > 0 && g < sc->n_groups) snprintf(group, sizeof group, "agents.%s", sc->groups[g].name);
    int link = strcmp(key, "uplink") == 0 || strcmp(key, "downlink") == 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *s = pass == 0 ? section : "agents";
        IniEntry *e = inidoc_find(r->doc, s, key);
        if (e == NULL && link) e = inidoc_find(r->doc, s, "bandwidth");
        if (e != NULL || g == sc->n_groups) return e;
    }
    return NULL;
}

static const char *const scenario_trace_keys[] = {"compute", "uplink", "downlink", "availability"};

int scenario_input_bad(Resolver *r, const IniEntry *e, const HsDiag *inner)
{
    if (inner->status != HS_E_INPUT || e == NULL)
        return hs_diag_set(r->diag, inner->status, NULL, 0, "%s", inner->message);
    return scenario_bad(r, e, "%s", inner->message);
}

int scenario_check_traces(Resolver *r)
{
    const Scenario *sc = r->sc;
    int n = sc->n_agents + sc->n_servers, n_groups = sc->n_groups + (sc->n_servers > 0);
    char *needed = NULL;
    for (int g = 0; g < n_groups; g++)
        for (int attribute = 0; attribute < SCENARIO_TRACE_ATTRIBUTES; attribute++) {
            if (scenario_trace_of(&sc->groups[g], attribute)->kind != DIST_TRACE) continue;
            if (needed == NULL && (needed = malloc((size_t)n)) == NULL)
                return hs_diag_set(r->diag, HS_E_NOMEM, NULL, 0, "out of memory");
            Trace trace;
            HsDiag inner;
            hs_diag_clear(&inner);
            int status = scenario_trace_load(sc, g, attribute, needed, &trace, &inner);
            IniEntry *e = scenario_group_entry(r, g, scenario_trace_keys[attribute]);
            if (status != HS_OK) {
                free(needed);
                return scenario_input_bad(r, e, &inner);
            }
            /* its values keep virtual time finite (scenario_times.c) */
            if (attribute != SCENARIO_TRACE_AVAILABILITY)
                status = scenario_check_trace_spans(r, g, attribute, &trace, needed, e);
            trace_free(&trace);
            if (status != HS_OK) {
                free(needed);
                return status;
            }
        }
    free(needed);
    return HS_OK;
}

int scenario_data_path_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *path, SchemaValue *v,
                             void *target)
{
    Scenario *sc = target;
    IniEntry *dataset = inidoc_find(r->doc, "data", "dataset");
    char where[INIDOC_VALUE_MAX + 160];
    int line = inidoc_section_line(r->doc, "data");
    if (path != NULL && path->origin == INIDOC_FROM_SET)
        snprintf(sc->data_where, sizeof sc->data_where, "%s", inidoc_entry_where(path, where, sizeof where));
    else if (path != NULL)
        snprintf(sc->data_where, sizeof sc->data_where, "%s: [data] path", inidoc_entry_where(path, where, sizeof where));
    else if (dataset != NULL && dataset->origin == INIDOC_FROM_SET)
        snprintf(sc->data_where, sizeof sc->data_where, "%s", inidoc_entry_where(dataset, where, sizeof where));
    else if (dataset != NULL)
        snprintf(sc->data_where, sizeof sc->data_where, "%s: [data] dataset", inidoc_entry_where(dataset, where, sizeof where));
    else if (line > 0)
        snprintf(sc->data_where, sizeof sc->data_where, "%s:%d: [data]", r->doc->file, line);
    else
        snprintf(sc->data_where, sizeof sc->data_where, "%s: the default [data]", r->doc->file);
    /* A folder the file names is relative to the file's folder, as every path a
     * scenario names is, and kept absolute so that runs.config finds it from anywhere
     * (the value is changed before it lands, so that it lands absolute). */
    if (path != NULL && path->origin != INIDOC_FROM_SET && v->text[0] != '/') {
        const char *slash = strrchr(r->doc->file, '/');
        char joined[1200], *absolute;
        snprintf(joined, sizeof joined, "%.*s%s%s", slash ? (int)(slash - r->doc->file) : 0, r->doc->file,
                 slash ? "/" : "", v->text);
        if ((absolute = realpath(joined, NULL)) != NULL) {
            snprintf(joined, sizeof joined, "%s", absolute);
            free(absolute);
        }
        if (strlen(joined) >= k->size) return scenario_bad(r, path, "%s", "the folder's path is too long");
        snprintf(v->text, k->size, "%s", joined);
        int status = scenario_plain_text(r, path, v->text);
        if (status != HS_OK) return status;
    }
    /* The default folder is read in train mode only; a folder the user names, always
     * (runs.config keeps it, and a run that trains will read it). Its files are read
     * before the database is opened (dataset_check, cli/cli_preflight.c). */
    if (sc->data.dataset == DATA_SYNTHETIC || (path == NULL && sc->mode != RUN_MODE_TRAIN)) return HS_OK;
    HsDiag inner;
    hs_diag_clear(&inner);
    if (input_file_check(v->text, INPUT_FILE_FOLDER, &inner) == HS_OK) return HS_OK;
    if (path != NULL) return scenario_bad(r, path, "%s", inner.message);
    /* the default folder missing: a package not installed (exit 1), not bad input */
    return hs_diag_set(r->diag, HS_E_MISSING, sc->data_where, 0, "%s (install the Fashion-MNIST files with "
                       "`apt-get install dataset-fashion-mnist` or set [data] path)", inner.message);
}
