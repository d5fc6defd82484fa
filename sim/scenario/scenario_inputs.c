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

#include "base/device_profile.h"
#include "base/input_file.h"
#include "models/dataset.h"
#include "sim/kernel/trace.h"

#include <stdlib.h>
#include <string.h>

static const Distribution *scenario_trace_of(const AgentGroupSpec *spec, int attribute)
{
    switch (attribute) {
    case SCENARIO_TRACE_COMPUTE: return &spec->compute;
    case SCENARIO_TRACE_UPLINK: return &spec->uplink;
    case SCENARIO_TRACE_DOWNLINK: return &spec->downlink;
    case SCENARIO_TRACE_OUTAGE: return &spec->outage;
    case SCENARIO_TRACE_CHARGING: return &spec->charging;
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
                    : attribute == SCENARIO_TRACE_AVAILABILITY || attribute == SCENARIO_TRACE_OUTAGE ? UNIT_PLAIN
                    : attribute == SCENARIO_TRACE_CHARGING     ? UNIT_POWER
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

static const char *const scenario_trace_keys[] = {"compute", "uplink", "downlink", "availability", "outage",
                                                   "charging"};

/* An outage trace must bring every link back: a link down for good would strand every
 * message through it (an availability trace may end offline: methods that leave absent
 * agents out go on without them; nothing goes on without a link it is sending on). */
static int scenario_check_outage_ends_up(Resolver *r, int g, const Trace *trace, const char *needed, IniEntry *e)
{
    for (int i = 0; i < trace->n_agents; i++) {
        const TraceSeries *s = &trace->series[i];
        if (!needed[i] || s->n == 0 || s->values[s->n - 1] > 0.5) continue;
        char why[INIDOC_VALUE_MAX + 200];
        snprintf(why, sizeof why, "%s: node %d's link goes down at t = %g s and never comes back (end the trace with "
                 "the link up: 1)", r->sc->groups[g].outage.path, i, s->times[s->n - 1]);
        return scenario_bad(r, e, "%s", why);
    }
    return HS_OK;
}

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
            if (attribute == SCENARIO_TRACE_OUTAGE) status = scenario_check_outage_ends_up(r, g, &trace, needed, e);
            else if (attribute != SCENARIO_TRACE_AVAILABILITY && attribute != SCENARIO_TRACE_CHARGING)
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
     * before the database is opened (dataset_check, cli/cli_preflight.c). The kinds
     * without a default folder need one: leaf and npy always (their shapes are in their
     * files), cifar to train (timing mode knows its shape and sizes). */
    if (sc->data.dataset == DATA_SYNTHETIC) return HS_OK;
    if (path == NULL && sc->data.dataset != DATA_FASHION_MNIST) {
        int cifar = sc->data.dataset == DATA_CIFAR10 || sc->data.dataset == DATA_CIFAR100;
        if (cifar && sc->mode != RUN_MODE_TRAIN) return HS_OK;
        char why[300];
        snprintf(why, sizeof why, "dataset = %s needs [data] path = the folder of its files%s (see docs/data.md)",
                 dataset_kind_name(sc->data.dataset), cifar ? " to train (timing mode needs none)" : "");
        if (dataset != NULL) return scenario_bad(r, dataset, "%s", why);
        return hs_diag_set(r->diag, HS_E_INPUT, sc->data_where, 0, "%s", why);
    }
    if (path == NULL && sc->mode != RUN_MODE_TRAIN) return HS_OK;
    HsDiag inner;
    hs_diag_clear(&inner);
    if (input_file_check(v->text, INPUT_FILE_FOLDER, &inner) == HS_OK) return HS_OK;
    if (path != NULL) return scenario_bad(r, path, "%s", inner.message);
    /* the default folder missing: a package not installed (exit 1), not bad input */
    return hs_diag_set(r->diag, HS_E_MISSING, sc->data_where, 0, "%s (install the Fashion-MNIST files with "
                       "`apt-get install dataset-fashion-mnist` or set [data] path)", inner.message);
}

/* The shape, classes and sizes of a data set the scenario names by its files (cifar10,
 * cifar100, leaf, npy), probed at resolution (dataset_probe: cifar's file sizes, the
 * others opened as the trainer will), so that the model's input and the agents' shares
 * are known in timing mode too. cifar10 and cifar100 without a path (timing mode) take
 * the standard sets' shape and sizes. A file that is missing or malformed is an input
 * error at [data] path: the user named the folder. */
int scenario_probe_data(Resolver *r, DatasetInfo *info)
{
    Scenario *sc = r->sc;
    DataSpec *d = &sc->data;
    memset(info, 0, sizeof *info);
    if ((d->dataset == DATA_CIFAR10 || d->dataset == DATA_CIFAR100) && !d->path[0]) {
        info->channels = 3, info->height = info->width = 32;
        info->classes = d->dataset == DATA_CIFAR10 ? 10 : d->label == DATA_LABEL_COARSE ? 20 : 100;
        info->n_train = 50000, info->n_test = 10000;
        return HS_OK;
    }
    HsDiag inner;
    hs_diag_clear(&inner);
    int status = dataset_probe(d, info, &inner);
    if (status == HS_OK) return HS_OK;
    IniEntry *path = inidoc_find(r->doc, "data", "path");
    if (status == HS_E_MISSING) inner.status = HS_E_INPUT;
    return scenario_input_bad(r, path, &inner);
}

int scenario_profile_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                           void *target)
{
    (void)section, (void)target;
    if (e == NULL || v == NULL || !v->text[0]) return HS_OK;
    if (r->sc->model_profile[0])
        return scenario_bad(r, e, "%s",
                            "a device profile gives compute in FLOP/s, and [model] profile takes speeds relative to "
                            "its host instead: leave one of the two out");
    int status = scenario_input_path(r, e, v->text, k->size);
    if (status != HS_OK) return status;
    DeviceProfile profile;
    HsDiag inner;
    hs_diag_clear(&inner);
    if ((status = device_profile_read(v->text, &profile, &inner)) != HS_OK) return scenario_input_bad(r, e, &inner);
    char why[600];
    if (profile.n_agents < r->sc->n_agents) {
        snprintf(why, sizeof why, "%s: %d rows for the %d agents of [agents] count (one row per agent)", v->text,
                 profile.n_agents, r->sc->n_agents);
        device_profile_free(&profile);
        return scenario_bad(r, e, "%s", why);
    }
    /* the rows the agents take keep virtual time finite (scenario_times.c) */
    ScenarioSpans spans;
    scenario_spans(r->sc, &spans);
    for (int i = 0; spans.step_flops > 0 && i < r->sc->n_agents; i++) {
        char span[400];
        const char *column = NULL;
        if (scenario_span_check(&spans, SCENARIO_SPAN_COMPUTE, profile.compute[i], 1, span, sizeof span) != HS_OK)
            column = "compute";
        else if (scenario_span_check(&spans, SCENARIO_SPAN_LINK, profile.bandwidth[i], 1, span, sizeof span) != HS_OK)
            column = "bandwidth";
        else if (profile.latency &&
                 scenario_span_check(&spans, SCENARIO_SPAN_LATENCY, profile.latency[i], 1, span, sizeof span) != HS_OK)
            column = "latency";
        if (column) {
            snprintf(why, sizeof why, "%s: agent %d's %s: %s", v->text, i, column, span);
            device_profile_free(&profile);
            return scenario_bad(r, e, "%s", why);
        }
    }
    r->sc->profile_latency = profile.latency != NULL;
    device_profile_free(&profile);
    return HS_OK;
}
