/* scenario.c — validation and resolution of scenario documents: unknown names, the
 * checks across keys of [run] [data] [model] [topology] [agents] [server] [servers], and
 * the order of it all. Every key is a row of the schema (scenario_schema.c), read by
 * scenario_read.c; [method] is scenario_method.c, [network] [compression] [byzantine]
 * [privacy] are scenario_options.c.
 * Order matters for good messages: unknown sections and keys are reported first (they
 * are usually typos that would otherwise surface as a confusing "missing key"), then
 * each section is resolved top to bottom. */
/* realpath() is XSI */
#define _XOPEN_SOURCE 700
#include "sim/scenario/scenario.h"

#include "base/names.h"
#include "models/dataset.h"
#include "models/model.h"
#include "models/partition.h"
#include "sim/scenario/method_ops.h"
#include "sim/scenario/scenario_resolver.h"
#include "sim/scenario/topology.h"

#include <ctype.h>
#include <gsl/gsl_cdf.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Unknown sections and keys, with the nearest known name. [method] and [sweep] keys are
 * checked later (against the method's table; by resolving each sweep point). */
static int scenario_check_names(Resolver *r)
{
    IniDoc *doc = r->doc;
    char hint[128];
    const char *sections[32];
    int n_sections = 0;
    for (const SchemaSection *s = schema_sections(); s->name && n_sections < 31; s++)
        if (strchr(s->name, '.') == NULL) sections[n_sections++] = s->name;
    sections[n_sections] = NULL;
    for (int i = 0; i < doc->n_sections; i++) {
        const char *s = doc->sections[i];
        if (scenario_is_group(s) && (doc->section_origins[i] == INIDOC_FROM_SET ||
                                     doc->section_origins[i] == INIDOC_FROM_SWEEP))
            return scenario_invented_group(r, s);
        int known = schema_section(s) != NULL || scenario_method_section(s) != NULL;
        if (!known && strncmp(s, "method.", 7) == 0) {
            /* [method.NAME] of a method that does not exist: suggest among the methods */
            const char *methods[64];
            int n = 0;
            for (const MethodOps *const *m = method_all(); *m && n < 63; m++) methods[n++] = (*m)->name;
            methods[n] = NULL;
            names_suggest(s + 7, methods, hint, sizeof hint);
        } else if (!known) {
            names_suggest(s, sections, hint, sizeof hint);
        }
        if (!known) {
            char where[INIDOC_VALUE_MAX + 160];
            if (doc->section_lines[i] > 0) snprintf(where, sizeof where, "%s:%d", doc->file, doc->section_lines[i]);
            else scenario_section_where(doc, s, where, sizeof where);
            return hs_diag_set(r->diag, HS_E_INPUT, where, 0, "unknown section [%s]%s", s, hint);
        }
    }
    for (int i = 0; i < doc->count; i++) {
        IniEntry *e = &doc->entries[i];
        const SchemaSection *section = schema_section(e->section);
        if (section == NULL || section->id == SCHEMA_IN_METHOD || section->id == SCHEMA_IN_SWEEP) continue;
        if (schema_find(section->id, e->key) != NULL) continue;
        const char *keys[64];
        schema_key_names(section->id, keys, 64);
        char where[INIDOC_VALUE_MAX + 160];
        names_suggest(e->key, keys, hint, sizeof hint);
        return hs_diag_set(r->diag, HS_E_INPUT, inidoc_entry_where(e, where, sizeof where), 0,
                           "unknown key '%s' in [%s]%s", e->key, e->section, hint);
    }
    return HS_OK;
}

/* Appends "FILE:LINE: [section] key: text" (or "--set ...: text") to sc->notes. */
static void scenario_note(Resolver *r, const IniEntry *e, const char *text)
{
    char where[INIDOC_VALUE_MAX + 160];
    size_t used = strlen(r->sc->notes);
    if (e->origin == INIDOC_FROM_SET)
        snprintf(r->sc->notes + used, sizeof r->sc->notes - used, "%s: %s\n", inidoc_entry_where(e, where, sizeof where),
                 text);
    else
        snprintf(r->sc->notes + used, sizeof r->sc->notes - used, "%s: [%s] %s: %s\n",
                 inidoc_entry_where(e, where, sizeof where), e->section, e->key, text);
}

static int scenario_resolve_run(Resolver *r)
{
    Scenario *sc = r->sc;
    int status = schema_read_section(r, SCHEMA_IN_RUN, "run", NULL);
    if (status != HS_OK) return status;
    if (sc->rounds == 0 && !isfinite(sc->time_budget) && sc->target_accuracy == 0)
        return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, inidoc_section_line(r->doc, "run"),
                           "[run] needs a stop: rounds, time_budget or target_accuracy");
    if (sc->target_accuracy > 0 && sc->mode == RUN_MODE_TIMING && sc->rounds == 0 && !isfinite(sc->time_budget))
        return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, inidoc_section_line(r->doc, "run"),
                           "[run] target_accuracy needs mode = train (timing mode measures no accuracy); "
                           "add rounds or time_budget");
    if (sc->target_accuracy > 0 && sc->mode == RUN_MODE_TIMING)
        scenario_note(r, inidoc_find(r->doc, "run", "target_accuracy"),
                      "has no effect in timing mode (no accuracy is evaluated); the run stops "
                      "at rounds or time_budget");
    return HS_OK;
}

/* [data] channels, height, width: synthetic features seen as an image, so that the CNN
 * and the ResNet run on synthetic data at any input size (timing mode at CIFAR's 3x32x32).
 * Any of the three given: the others default to 1 and features is their product (a
 * `features` that disagrees is an error). With fashion-mnist they are an error: its
 * images are 1x28x28. */
static int scenario_resolve_image_shape(Resolver *r, DataSpec *d)
{
    IniEntry *given[3] = {inidoc_find(r->doc, "data", "channels"), inidoc_find(r->doc, "data", "height"),
                          inidoc_find(r->doc, "data", "width")};
    IniEntry *first = given[0] ? given[0] : given[1] ? given[1] : given[2];
    if (!first) {
        d->channels = d->height = d->width = 0;
        return HS_OK;
    }
    if (d->dataset != DATA_SYNTHETIC)
        return scenario_bad(r, first, "%s", "shapes synthetic data only (fashion-mnist images are 1x28x28)");
    long long product = (long long)d->channels * d->height * d->width;
    char why[160];
    if (product > (1 << 20)) {
        snprintf(why, sizeof why, "channels x height x width = %lld, more than 2^20 features", product);
        return scenario_bad(r, first, "%s", why);
    }
    IniEntry *features = inidoc_find(r->doc, "data", "features");
    if (features && product != d->features) {
        snprintf(why, sizeof why, "%d disagrees with channels x height x width = %lld (leave it out)", d->features,
                 product);
        return scenario_bad(r, features, "%s", why);
    }
    d->features = (int)product;
    return HS_OK;
}

/* [data] of a kind read from files (cifar10, cifar100, leaf, npy): what its files say of
 * the model's input, the classes and the set sizes (scenario_probe_data). */
static int scenario_resolve_data_files(Resolver *r)
{
    Scenario *sc = r->sc;
    DataSpec *d = &sc->data;
    ModelSpec *m = &sc->model;
    DatasetInfo info;
    int status = scenario_probe_data(r, &info);
    if (status != HS_OK) return status;
    m->in_channels = info.channels;
    m->in_height = info.height;
    m->in_width = info.width;
    m->classes = d->classes = info.classes;
    d->features = info.channels * info.height * info.width;
    /* the image shape (0: flat features), as the model's checks read it */
    int flat = info.height == 1 && info.width == 1;
    d->channels = flat ? 0 : info.channels, d->height = flat ? 0 : info.height, d->width = flat ? 0 : info.width;
    sc->dataset_train_size = info.n_train;
    sc->dataset_test_size = d->test_samples > 0 && d->test_samples < info.n_test ? d->test_samples : info.n_test;
    sc->dataset_writers = info.n_writers;
    dataset_info_free(&info);
    if (d->test_samples > info.n_test) {
        char why[160];
        snprintf(why, sizeof why, "more than the %d test samples of the files", info.n_test);
        return scenario_bad(r, inidoc_find(r->doc, "data", "test_samples"), "%s", why);
    }
    if (info.classes < 2) {
        char why[200];
        snprintf(why, sizeof why, "the files' labels make %d class%s; give [data] classes", info.classes,
                 info.classes == 1 ? "" : "es");
        return scenario_bad(r, inidoc_find(r->doc, "data", "path"), "%s", why);
    }
    return HS_OK;
}

/* [data]: its rows, then the image shape and what the data set fixes of the model's input.
 * domains, test_domains and lambda are checked whatever the partition (every value is)
 * and used by partition = domains only. */
static int scenario_resolve_data(Resolver *r)
{
    Scenario *sc = r->sc;
    DataSpec *d = &sc->data;
    int status;
    if ((status = schema_read_section(r, SCHEMA_IN_DATA, "data", NULL)) != HS_OK ||
        (status = scenario_resolve_image_shape(r, d)) != HS_OK)
        return status;
    if (d->partition == PART_DOMAINS && d->dataset != DATA_FASHION_MNIST)
        return scenario_bad(r, inidoc_find(r->doc, "data", "partition"), "%s",
                            "domains are rotations of images: it needs dataset = fashion-mnist");
    ModelSpec *m = &sc->model;
    if (d->dataset == DATA_FASHION_MNIST) {
        m->in_channels = 1;
        m->in_height = m->in_width = 28;
        m->classes = 10;
        d->features = 784;
        d->classes = 10;
        sc->dataset_train_size = 60000;
        sc->dataset_test_size = 10000;
    } else if (d->dataset != DATA_SYNTHETIC) {
        if ((status = scenario_resolve_data_files(r)) != HS_OK) return status;
    } else if (d->channels > 0) {
        m->in_channels = d->channels;
        m->in_height = d->height;
        m->in_width = d->width;
        m->classes = d->classes;
        sc->dataset_train_size = d->train_samples;
        sc->dataset_test_size = d->test_samples > 0 ? d->test_samples : d->train_samples / 6 + 1;
    } else {
        m->in_channels = d->features;
        m->in_height = m->in_width = 1;
        m->classes = d->classes;
        sc->dataset_train_size = d->train_samples;
        sc->dataset_test_size = d->test_samples > 0 ? d->test_samples : d->train_samples / 6 + 1;
    }
    if (d->test_samples > sc->dataset_test_size && d->dataset == DATA_FASHION_MNIST)
        return scenario_bad(r, inidoc_find(r->doc, "data", "test_samples"), "%s",
                            "more than the 10000 test images");
    if (d->partition == PART_NATURAL && sc->dataset_writers == 0)
        return scenario_bad(r, inidoc_find(r->doc, "data", "partition"), "%s",
                            "natural deals the data set's writers to the agents: it needs dataset = leaf");
    if ((d->crop_padding > 0 || d->flip) && (m->in_height < 2 || m->in_width < 2 ||
                                             d->crop_padding > m->in_height || d->crop_padding > m->in_width)) {
        char why[200];
        snprintf(why, sizeof why, "augments images, but the samples are %dx%d%s", m->in_height, m->in_width,
                 m->in_height < 2 || m->in_width < 2 ? " (flat features)" : ", smaller than the crop's padding");
        return scenario_bad(r, inidoc_find(r->doc, "data", "augment"), "%s", why);
    }
    return HS_OK;
}

/* [model] profile: read now that [model] is whole (its layers, FLOPs and batch are checked
 * against the file's), before any group's compute is read as a relative speed. */
static int scenario_resolve_model_profile(Resolver *r, const ModelProfile *profile)
{
    Scenario *sc = r->sc;
    memset(&sc->profile_times, 0, sizeof sc->profile_times);
    sc->profile_rate = 0;
    if (!sc->model_profile[0]) return HS_OK;
    LayerProfile layers;
    HsDiag inner;
    hs_diag_clear(&inner);
    if (layer_profile_read(sc->model_profile, &sc->model, sc->model.batch, &layers, &inner) != HS_OK)
        return scenario_input_bad(r, inidoc_find(r->doc, "model", "profile"), &inner);
    layer_profile_times(&layers, &sc->profile_times);
    sc->profile_rate = model_profile_step_flops(profile, sc->model.batch) / sc->profile_times.step_s;
    if (!isfinite(sc->profile_rate)) {
        char why[700];
        snprintf(why, sizeof why, "%s: a step of %.3g s is too short to be a time", sc->model_profile,
                 sc->profile_times.step_s);
        return scenario_bad(r, inidoc_find(r->doc, "model", "profile"), "%s", why);
    }
    return HS_OK;
}

static int scenario_resolve_model(Resolver *r)
{
    Scenario *sc = r->sc;
    ModelSpec *m = &sc->model;
    int status = schema_read_section(r, SCHEMA_IN_MODEL, "model", NULL);
    if (status != HS_OK) return status;
    /* ResNet: GroupNorm in 8 groups (see models/resnet.h) */
    m->norm_groups = 8;
    /* [run] kernels as it runs (read with [run], resolved with the arch): auto becomes
     * onednn or openblas, which runs.config records */
    m->kernels = model_kernels_resolve(m);
    int features = m->in_channels * m->in_height * m->in_width;
    if (m->arch != MODEL_ARCH_MLP && (m->in_height < 4 || m->in_width < 4)) {
        /* at the key that is wrong: arch on flat features, else the image side that is short */
        const char *name = m->arch == MODEL_ARCH_CNN ? "cnn" : "resnet";
        char why[300];
        IniEntry *arch_entry = inidoc_find(r->doc, "model", "arch");
        if (sc->data.channels == 0) {
            snprintf(why, sizeof why, "%s needs image data (fashion-mnist, or synthetic with channels, height and "
                     "width), not %d flat features", name, features);
            return scenario_bad(r, arch_entry, "%s", why);
        }
        char where[INIDOC_VALUE_MAX + 160];
        inidoc_entry_where(arch_entry, where, sizeof where);
        snprintf(why, sizeof why, "%dx%d images are too small for arch = %s (%s), which needs at least 4x4",
                 m->in_height, m->in_width, name, where);
        /* the short side's key, else (it defaulted to 1) the shape key that was given */
        IniEntry *side = inidoc_find(r->doc, "data", m->in_height < 4 ? "height" : "width");
        if (side == NULL) side = inidoc_find(r->doc, "data", "height");
        if (side == NULL) side = inidoc_find(r->doc, "data", "width");
        if (side == NULL) side = inidoc_find(r->doc, "data", "channels");
        return scenario_bad(r, side, "%s", why);
    }
    ModelProfile profile;
    if (model_profile(m, &profile) != HS_OK)
        return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, inidoc_section_line(r->doc, "model"),
                           "[model] does not describe a valid network");
    return scenario_resolve_model_profile(r, &profile);
}

/* A method that splits the model between agents (ComDML) with a model of one block has no
 * split point: no agent could ever offload, and the run would be local SGD under the
 * method's name (issue 28 class 7). */
static int scenario_check_split(Resolver *r)
{
    const Scenario *sc = r->sc;
    ModelProfile profile;
    if (!(method_lookup(sc->method)->capabilities & METHOD_SPLITS_MODEL) || model_profile(&sc->model, &profile) != HS_OK ||
        profile.n_blocks >= 2)
        return HS_OK;
    IniEntry *e = inidoc_find(r->doc, "model", sc->model.arch == MODEL_ARCH_MLP ? "layers" : "arch");
    char why[200];
    snprintf(why, sizeof why, "method %s splits the model between agents, but this one is a single block (no split "
             "point): it needs two blocks or more", sc->method);
    if (e) return scenario_bad(r, e, "%s", why);
    return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, inidoc_section_line(r->doc, "model"), "[model] %s", why);
}

/* A method that sends rows of the layers (ROG) needs layers made of rows: a ResNet's
 * blocks hold several convolutions and GroupNorm parameters (sim/stages/rowsend.h). */
static int scenario_check_rows(Resolver *r)
{
    const Scenario *sc = r->sc;
    if (!(method_lookup(sc->method)->capabilities & METHOD_SENDS_ROWS) || sc->model.arch != MODEL_ARCH_RESNET)
        return HS_OK;
    IniEntry *e = inidoc_find(r->doc, "model", "arch");
    const char *why = "method %s sends rows of a layer's weight (one per output unit): arch = mlp or cnn; a ResNet "
                      "block holds several layers and GroupNorm, which have no such rows";
    if (e) return scenario_bad(r, e, why, sc->method);
    return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, inidoc_section_line(r->doc, "model"), "[model] arch: %s",
                       "resnet has no rows");
}

static int scenario_resolve_topology(Resolver *r)
{
    Scenario *sc = r->sc;
    sc->topology_line = inidoc_section_line(r->doc, "topology") > 0 ? inidoc_section_line(r->doc, "topology") : 0;
    return schema_read_section(r, SCHEMA_IN_TOPOLOGY, "topology", NULL);
}

static int scenario_resolve_agents(Resolver *r)
{
    Scenario *sc = r->sc;
    if (!inidoc_has_section(r->doc, "agents"))
        return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, 0, "missing section [agents]");
    int status;
    IniEntry *count_entry = inidoc_find(r->doc, "agents", "count");
    AgentGroupSpec *base = &sc->groups[0];
    snprintf(base->name, sizeof base->name, "default");
    base->line = inidoc_section_line(r->doc, "agents");
    if ((status = schema_read_section(r, SCHEMA_IN_AGENTS, "agents", base))) return status;
    sc->n_groups = 1;
    int taken = 0;
    for (int i = 0; i < r->doc->n_sections; i++) {
        const char *s = r->doc->sections[i];
        if (!scenario_is_group(s)) continue;
        int line = r->doc->section_lines[i];
        if (sc->n_groups == SCENARIO_MAX_GROUPS)
            return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, line, "more than %d agent groups",
                               SCENARIO_MAX_GROUPS - 1);
        /* a group starts as [agents] and takes what it sets (its name whole: no byte of
         * "default" left after it) */
        AgentGroupSpec *g = &sc->groups[sc->n_groups++];
        *g = *base;
        memset(g->name, 0, sizeof g->name);
        snprintf(g->name, sizeof g->name, "%s", s + 7);
        g->line = line;
        if ((status = schema_read_section(r, SCHEMA_IN_GROUP, s, g))) return status;
        taken += g->count;
        if (taken > sc->n_agents) {
            IniEntry *e = inidoc_find(r->doc, s, "count");
            char why[160];
            snprintf(why, sizeof why, "groups take %d agents, but [agents] count is %d", taken, sc->n_agents);
            return scenario_bad(r, e, "%s", why);
        }
    }
    base->count = sc->n_agents - taken;
    if (sc->data.partition == PART_NATURAL) {
        /* the writers are dealt whole: at least one an agent, and their samples are the agents' */
        char why[200];
        if (sc->n_agents > sc->dataset_writers) {
            snprintf(why, sizeof why, "partition = natural gives each agent at least one writer, but the data set "
                     "has %d writers (at most %d agents)", sc->dataset_writers, sc->dataset_writers);
            return scenario_bad(r, count_entry, "%s", why);
        }
        for (int g = 0; g < sc->n_groups; g++)
            if (sc->groups[g].has_samples) {
                IniEntry *e = scenario_group_entry(r, g, "samples");
                return scenario_bad(r, e, "%s", "partition = natural: each agent holds its writers' samples "
                                    "(leave samples out)");
            }
    }
    if (sc->mode == RUN_MODE_TRAIN && sc->n_agents > sc->dataset_train_size)
        return scenario_bad(r, count_entry, "%s", "more agents than training samples");
    return HS_OK;
}


/* [server] or [servers]: resolved whenever present (so a sweep over methods validates it
 * once), but simulated only for a method that uses servers; such a method without one
 * is an error, and so is a count above 1 for a method with one server. */
static int scenario_resolve_server(Resolver *r)
{
    Scenario *sc = r->sc;
    const MethodOps *ops = method_lookup(sc->method);
    int uses = (ops->capabilities & METHOD_USES_SERVER) != 0, edge = (ops->capabilities & METHOD_EDGE_SERVERS) != 0;
    int one = inidoc_has_section(r->doc, "server"), many = inidoc_has_section(r->doc, "servers");
    sc->has_server = one || many;
    sc->servers_section = many;
    sc->server_count = 1;
    if (one && many) {
        char where[INIDOC_VALUE_MAX + 160];
        int line = inidoc_section_line(r->doc, "servers");
        if (line > 0) snprintf(where, sizeof where, "%s:%d", r->doc->file, line);
        else scenario_section_where(r->doc, "servers", where, sizeof where);
        return hs_diag_set(r->diag, HS_E_INPUT, where, 0,
                           "[servers] and [server] are both given: keep [server] for one server or [servers] "
                           "(with count) for edge servers");
    }
    if (!sc->has_server) {
        if (!uses) return HS_OK;
        /* at the key that chose the method (a file without it runs the default method) */
        char why[300];
        snprintf(why, sizeof why, "method %s needs a %s section (compute, bandwidth or uplink and downlink, latency%s)",
                 sc->method, edge ? "[servers]" : "[server]", edge ? ", count: the edge servers" : ": the parameter server");
        IniEntry *method = inidoc_find(r->doc, "run", "method");
        if (method != NULL) return scenario_bad(r, method, "%s", why);
        return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, 0, "%s", why);
    }
    AgentGroupSpec *g = &sc->groups[sc->n_groups];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "server");
    g->line = inidoc_section_line(r->doc, many ? "servers" : "server");
    int status = many ? schema_read_section(r, SCHEMA_IN_SERVERS, "servers", g)
                      : schema_read_section(r, SCHEMA_IN_SERVER, "server", g);
    if (status != HS_OK) return status;
    g->count = sc->server_count;
    sc->n_servers = uses ? sc->server_count : 0;
    return HS_OK;
}

/* After [agents]: whether the graph can be built over this many agents, whatever the
 * method (an impossible [topology] is an error even where no method reads it). A
 * problem is reported at the key that sets it: degree for random-regular, else graph. */
/* A method that builds its own graph (METHOD_BUILDS_TOPOLOGY) would ignore [topology]:
 * refused at its first key (or its header) when the method is the file's own. A method
 * set over the file's (--set run.method=..., or [sweep], whose base point counts too when
 * it varies run.method) runs a file written for others, whose [topology] is theirs: it is
 * left alone (hetsim run notes that the method does not use it). */
static int scenario_refuse_topology(Resolver *r)
{
    Scenario *sc = r->sc;
    if (!(method_lookup(sc->method)->capabilities & METHOD_BUILDS_TOPOLOGY) || !inidoc_has_section(r->doc, "topology"))
        return HS_OK;
    IniEntry *method = inidoc_find(r->doc, "run", "method");
    if ((method && method->origin != INIDOC_FROM_FILE) || inidoc_find(r->doc, "sweep", "run.method")) return HS_OK;
    char why[200];
    snprintf(why, sizeof why, "method %s builds its own graph (docs/methods.md): leave [topology] out", sc->method);
    for (int i = 0; i < r->doc->count; i++)
        if (strcmp(r->doc->entries[i].section, "topology") == 0) return scenario_bad(r, &r->doc->entries[i], "%s", why);
    return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, sc->topology_line, "[topology]: %s", why);
}

static int scenario_check_topology(Resolver *r)
{
    Scenario *sc = r->sc;
    int refused = scenario_refuse_topology(r);
    if (refused != HS_OK) return refused;
    IniEntry *e = sc->topology == TOPO_RANDOM_REGULAR ? inidoc_find(r->doc, "topology", "degree") : NULL;
    if (e == NULL) e = inidoc_find(r->doc, "topology", "graph");
    char where[INIDOC_VALUE_MAX + 160];
    const char *file = r->doc->file;
    int line = sc->topology_line;
    if (e && e->origin == INIDOC_FROM_SET) {
        file = inidoc_entry_where(e, where, sizeof where);
        line = 0;
    } else if (e) {
        line = e->line;
    }
    /* edge-server methods run the graph over their servers */
    int nodes = (method_lookup(sc->method)->capabilities & METHOD_EDGE_SERVERS) && sc->has_server ? sc->server_count
                                                                                                : sc->n_agents;
    /* a given W and a learned one are read by the methods that mix with W only; a given W
     * is the graph too (its nonzero entries), so the graph is not also written */
    int mixes = (method_lookup(sc->method)->capabilities & METHOD_MIXES_WEIGHTS) != 0;
    if (sc->topology_weights_file[0]) {
        IniEntry *given = inidoc_find(r->doc, "topology", "weights");
        if (!mixes)
            return scenario_bad(r, given, "%s", "a FILE.weights is read only by the methods that mix with W "
                                                "(hetsim methods: dpsgd)");
        if (inidoc_find(r->doc, "topology", "graph"))
            return scenario_bad(r, given, "%s", "a FILE.weights sets the graph (its nonzero entries): leave "
                                                "[topology] graph out");
        Topology t;
        HsDiag inner;
        hs_diag_clear(&inner);
        int status = topology_weights_load(sc->topology_weights_file, nodes, &t, &inner);
        topology_free(&t);
        return status == HS_OK ? HS_OK : scenario_input_bad(r, given, &inner);
    }
    if (sc->topology == TOPO_LEARNED && !mixes)
        return scenario_bad(r, e, "%s", "learned is a mixing matrix, read only by the methods that mix with W "
                                        "(hetsim methods: dpsgd)");
    if (sc->topology != TOPO_FILE)
        return topology_check(sc->topology, nodes, sc->degree, sc->topology_file, file, line, r->diag);
    /* the edges file's own errors, at the graph key */
    HsDiag inner;
    hs_diag_clear(&inner);
    int status = topology_check(sc->topology, nodes, sc->degree, sc->topology_file, file, line, &inner);
    return status == HS_OK ? HS_OK : scenario_input_bad(r, e, &inner);
}

/* partition = domains sets every agent's samples (the partition deals the domains'
 * rows): a `samples` key is then an error at that key, and so is a dealing that leaves an
 * agent no rows, at lambda (or partition) — world_build deals the same rows. */
static int scenario_check_domains(Resolver *r)
{
    Scenario *sc = r->sc;
    if (sc->data.partition != PART_DOMAINS) return HS_OK;
    int sizes[DATA_MAX_DOMAINS], n = sc->n_agents, D = sc->data.n_domains;
    int *counts = malloc(sizeof(int) * (size_t)n * (size_t)D);
    if (counts == NULL) return hs_diag_set(r->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    partition_domain_sizes(&sc->data, sc->dataset_train_size, sizes);
    int status = partition_domain_counts(sizes, D, n, sc->data.lambda, counts), empty = -1;
    for (int i = 0; status == HS_OK && empty < 0 && i < n; i++) {
        long long held = 0;
        for (int d = 0; d < D; d++) held += counts[(size_t)i * D + d];
        if (held < 1) empty = i;
    }
    free(counts);
    if (status == HS_E_NOMEM) return hs_diag_set(r->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    if (status != HS_OK || empty >= 0) {
        IniEntry *e = inidoc_find(r->doc, "data", "lambda");
        char why[300];
        if (status != HS_OK) snprintf(why, sizeof why, "partition = domains cannot deal the training domains' rows");
        else snprintf(why, sizeof why, "partition = domains deals agent %d no rows (%d agents share %d training "
                      "domains; raise lambda or lower [agents] count)", empty, n, D);
        return scenario_bad(r, e ? e : inidoc_find(r->doc, "data", "partition"), "%s", why);
    }
    for (int g = 0; g < sc->n_groups; g++) {
        const char *section = g == 0 ? "agents" : NULL;
        char group[INIDOC_NAME_MAX + 8];
        if (g > 0) {
            snprintf(group, sizeof group, "agents.%s", sc->groups[g].name);
            section = group;
        }
        IniEntry *e = inidoc_find(r->doc, section, "samples");
        if (e)
            return scenario_bad(r, e, "%s",
                                "[data] partition = domains deals each agent its rows of the domains, so it sets "
                                "every agent's samples (remove the key)");
    }
    return HS_OK;
}

int scenario_resolve(IniDoc *doc, Scenario *sc, HsDiag *diag)
{
    memset(sc, 0, sizeof *sc);
    snprintf(sc->file, sizeof sc->file, "%s", doc->file);
    Resolver r = {.doc = doc, .sc = sc, .diag = diag};
    int status;
    if ((status = scenario_check_names(&r)) || (status = scenario_resolve_run(&r)) ||
        (status = scenario_resolve_data(&r)) || (status = scenario_resolve_model(&r)) ||
        (status = scenario_resolve_method(&r)) || (status = scenario_check_split(&r)) ||
        (status = scenario_check_rows(&r)) ||
        (status = scenario_resolve_topology(&r)) ||
        (status = scenario_resolve_agents(&r)) || (status = scenario_resolve_server(&r)) ||
        (status = scenario_check_topology(&r)) ||
        (status = scenario_check_domains(&r)) || (status = scenario_resolve_network(&r)) ||
        (status = scenario_resolve_compression(&r)) ||
        (status = scenario_resolve_byzantine(&r)) || (status = scenario_resolve_privacy(&r)) ||
        (status = scenario_resolve_drift(&r)) ||
        (status = scenario_check_feature_pairs(&r)) || (status = scenario_check_traces(&r)) ||
        (status = scenario_check_method_limits(&r)))
        return status;
    sc->has_sweep = inidoc_has_section(doc, "sweep");
    const MethodOps *ops = method_lookup(sc->method);
    return ops->validate ? ops->validate(sc, diag) : HS_OK;
}

int scenario_load(const char *path, const char *const *overrides, int n_overrides, Scenario *sc,
                  HsDiag *diag)
{
    IniDoc doc;
    int status = inidoc_load(path, &doc, diag);
    for (int i = 0; status == HS_OK && i < n_overrides; i++) status = inidoc_apply_set(&doc, overrides[i], diag);
    if (status == HS_OK) status = scenario_resolve(&doc, sc, diag);
    inidoc_free(&doc);
    return status;
}
