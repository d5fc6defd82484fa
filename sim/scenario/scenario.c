/* scenario.c — validation and resolution of scenario documents: the sections' key lists,
 * [run] [data] [model] [topology] [agents], and the order of it all (value readers in
 * scenario_values.c, [method] in scenario_method.c, [network] [compression] [byzantine]
 * in scenario_options.c).
 * Order matters for good messages: unknown sections and keys are reported first (they
 * are usually typos that would otherwise surface as a confusing "missing key"), then
 * each section is resolved top to bottom.
 * Over 600 lines because the sections' key lists and the order of resolution are one
 * table read top to bottom; the readers and the other sections are split off as above. */
/* realpath() is XSI */
#define _XOPEN_SOURCE 700
#include "sim/scenario/scenario.h"

#include "base/names.h"
#include "models/dataset.h"
#include "models/model.h"
#include "models/partition.h"
#include "sim/scenario/method_ops.h"
#include "sim/scenario/scenario_resolver.h"
#include "sim/scenario/server_assign.h"
#include "sim/scenario/topology.h"

#include <ctype.h>
#include <gsl/gsl_cdf.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const scenario_sections[] = {"run", "data", "model", "method", "topology",
                                                "agents", "server", "servers", "network", "compression",
                                                "byzantine", "privacy", "sweep", NULL};
static const char *const keys_run[] = {"name", "method", "seed", "rounds", "time_budget",
                                       "target_accuracy", "mode", "eval_every", "threads", "kernels", NULL};
static const char *const keys_data[] = {"dataset", "path", "partition", "alpha", "shards",
                                        "test_samples", "features", "classes", "train_samples",
                                        "separation", "domains", "test_domains", "lambda", "channels",
                                        "height", "width", NULL};
static const char *const keys_model[] = {"arch", "layers", "channels", "kernel", "hidden",
                                         "batch", "optimizer", "lr", "momentum", "nesterov",
                                         "weight_decay", "beta1", "beta2", "eps", "schedule",
                                         "step_gamma", "step_every", "warmup", "depth", "width", NULL};
static const char *const keys_topology[] = {"graph", "degree", NULL};
static const char *const keys_agents[] = {"count", "compute", "bandwidth", "uplink", "downlink",
                                          "latency", "samples", "slowdown", "jitter", "availability",
                                          NULL};
/* [server]: an agent's attributes without count and samples (it holds no data) */
static const char *const keys_server[] = {"compute", "bandwidth", "uplink", "downlink", "latency", "slowdown",
                                          "jitter", "availability", NULL};
static const char *const keys_servers[] = {"count", "assign", "compute", "bandwidth", "uplink", "downlink", "latency",
                                           "slowdown", "jitter", "availability", NULL};
static const char *const keys_network[] = {"model", "uplink", "backbone", "tcp", NULL};
static const char *const keys_compression[] = {"scheme", "ratio", "feedback", "eta", "warm_start", "refresh",
                                               "explore", "gamma", "momentum", "warmup_epochs",
                                               "clip", "masking", NULL};
static const char *const keys_privacy[] = {"clip", "threshold", "noise_multiplier", "delta", NULL};
static const char *const keys_byzantine[] = {"count", "attack", "scale", "sigma", "z", "epsilon", "aggregator",
                                             "trim", "f", "tau", "iters", "rank", "lambda", NULL};

const char *const *scenario_section_keys(const char *section)
{
    if (strcmp(section, "run") == 0) return keys_run;
    if (strcmp(section, "data") == 0) return keys_data;
    if (strcmp(section, "model") == 0) return keys_model;
    if (strcmp(section, "topology") == 0) return keys_topology;
    if (strcmp(section, "agents") == 0 || scenario_is_group(section)) return keys_agents;
    if (strcmp(section, "server") == 0) return keys_server;
    if (strcmp(section, "servers") == 0) return keys_servers;
    if (strcmp(section, "network") == 0) return keys_network;
    if (strcmp(section, "compression") == 0) return keys_compression;
    if (strcmp(section, "byzantine") == 0) return keys_byzantine;
    if (strcmp(section, "privacy") == 0) return keys_privacy;
    return NULL;
}

static int scenario_check_names(Resolver *r)
{
    IniDoc *doc = r->doc;
    char hint[128];
    for (int i = 0; i < doc->n_sections; i++) {
        const char *s = doc->sections[i];
        if (scenario_is_group(s) && (doc->section_origins[i] == INIDOC_FROM_SET ||
                                     doc->section_origins[i] == INIDOC_FROM_SWEEP))
            return scenario_invented_group(r, s);
        int known = scenario_is_group(s) || scenario_method_section(s) != NULL;
        for (int k = 0; !known && scenario_sections[k]; k++) known = strcmp(s, scenario_sections[k]) == 0;
        if (!known && strncmp(s, "method.", 7) == 0) {
            /* [method.NAME] of a method that does not exist: suggest among the methods */
            const char *methods[64];
            int n = 0;
            for (const MethodOps *const *m = method_all(); *m && n < 63; m++) methods[n++] = (*m)->name;
            methods[n] = NULL;
            names_suggest(s + 7, methods, hint, sizeof hint);
        } else if (!known) {
            names_suggest(s, scenario_sections, hint, sizeof hint);
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
        const char *const *keys = scenario_section_keys(e->section);
        if (keys == NULL) continue; /* [method] and [sweep] are checked later */
        int known = 0;
        for (int k = 0; !known && keys[k]; k++) known = strcmp(e->key, keys[k]) == 0;
        if (!known) {
            char where[INIDOC_VALUE_MAX + 160];
            names_suggest(e->key, keys, hint, sizeof hint);
            return hs_diag_set(r->diag, HS_E_INPUT, inidoc_entry_where(e, where, sizeof where), 0,
                               "unknown key '%s' in [%s]%s", e->key, e->section, hint);
        }
    }
    return HS_OK;
}

static int scenario_resolve_run(Resolver *r)
{
    Scenario *sc = r->sc;
    IniEntry *e = scenario_take(r, "run", "name");
    if (e) {
        scenario_trim_copy(sc->name, sizeof sc->name, e->value);
        if (sc->name[0] == '\0') return scenario_bad(r, e, "%s", "is empty (leave the key out for the file's name)");
        int status = scenario_plain_text(r, e, sc->name);
        if (status != HS_OK) return status;
    } else {
        const char *base = strrchr(r->doc->file, '/');
        base = base ? base + 1 : r->doc->file;
        snprintf(sc->name, sizeof sc->name, "%s", base);
        char *dot = strrchr(sc->name, '.');
        if (dot && dot != sc->name) *dot = '\0';
    }
    e = scenario_take(r, "run", "method");
    if (e == NULL) return scenario_missing(r, "run", "method");
    scenario_trim_copy(sc->method, sizeof sc->method, e->value);
    if (method_lookup(sc->method) == NULL) {
        const char *names[64];
        int n = 0;
        for (const MethodOps *const *m = method_all(); *m && n < 63; m++) names[n++] = (*m)->name;
        names[n] = NULL;
        char hint[128], list[400] = "";
        names_suggest(sc->method, names, hint, sizeof hint);
        for (int i = 0; i < n; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, names[i], sizeof list - strlen(list) - 1);
        }
        char why[700];
        snprintf(why, sizeof why, "unknown method '%s'%s; known: %s", sc->method, hint, list);
        return scenario_bad(r, e, "%s", why);
    }
    e = scenario_take(r, "run", "seed");
    sc->seed = 1;
    if (e) {
        char *end;
        errno = 0;
        const char *v = e->value;
        while (isspace((unsigned char)*v)) v++;
        unsigned long long seed = strtoull(v, &end, 10);
        while (isspace((unsigned char)*end)) end++;
        if (*v == '-' || end == v || *end || errno || seed > (unsigned long long)INT64_MAX)
            return scenario_bad(r, e, "%s", "expected a whole number in [0, 2^63)");
        sc->seed = seed;
    }
    int status;
    if ((status = scenario_int(r, "run", "rounds", 0, 1, 1000000, &sc->rounds)) ||
        (status = scenario_double(r, "run", "time_budget", INFINITY, UNIT_TIME, 1e-9, INFINITY, &sc->time_budget)) ||
        (status = scenario_double(r, "run", "target_accuracy", 0, UNIT_PLAIN, 0, 1, &sc->target_accuracy)) ||
        (status = scenario_int(r, "run", "eval_every", 1, 1, 1000000, &sc->eval_every)) ||
        (status = scenario_int(r, "run", "threads", 0, 1, 1024, &sc->threads)))
        return status;
    int mode, kernels;
    if ((status = scenario_choice(r, "run", "mode", "train", "train|timing", &mode))) return status;
    /* the order of ModelKernels; auto is resolved with the model's arch (resolve_model) */
    if ((status = scenario_choice(r, "run", "kernels", "auto", "auto|openblas|onednn", &kernels))) return status;
    sc->model.kernels = (ModelKernels)kernels;
    if (!model_kernels_available(sc->model.kernels))
        return scenario_bad(r, inidoc_find(r->doc, "run", "kernels"), "%s",
                            "this hetsim was built without oneDNN (libdnnl-dev): use auto or openblas");
    sc->mode = mode == 0 ? RUN_MODE_TRAIN : RUN_MODE_TIMING;
    if (sc->rounds == 0 && !isfinite(sc->time_budget) && sc->target_accuracy == 0)
        return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, inidoc_section_line(r->doc, "run"),
                           "[run] needs a stop: rounds, time_budget or target_accuracy");
    if (sc->target_accuracy > 0 && sc->mode == RUN_MODE_TIMING && sc->rounds == 0 && !isfinite(sc->time_budget))
        return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, inidoc_section_line(r->doc, "run"),
                           "[run] target_accuracy needs mode = train (timing mode measures no accuracy); "
                           "add rounds or time_budget");
    return HS_OK;
}

/* [data] domains, test_domains, lambda: checked whatever the partition (every value is),
 * used by partition = domains only. */
static int scenario_resolve_domains(Resolver *r, DataSpec *d)
{
    IniEntry *e = scenario_take(r, "data", "domains");
    int status;
    if ((status = scenario_real_list(r, e, e ? e->value : "0,15,30,45,60,75", -360, 360, d->domain_degrees,
                                     DATA_MAX_DOMAINS, &d->n_domains)) != HS_OK)
        return status;
    if (d->n_domains < 2) return scenario_bad(r, e, "%s", "needs at least two domains (angles in degrees)");
    for (int a = 0; a < d->n_domains; a++)
        for (int b = 0; b < a; b++)
            if (d->domain_degrees[a] == d->domain_degrees[b]) {
                char why[120];
                snprintf(why, sizeof why, "the angle %g is listed twice", d->domain_degrees[a]);
                return scenario_bad(r, e, "%s", why);
            }
    IniEntry *t = scenario_take(r, "data", "test_domains");
    double held[DATA_MAX_DOMAINS];
    int n_held;
    char fallback[64];
    snprintf(fallback, sizeof fallback, "%.17g", d->domain_degrees[d->n_domains - 1]);
    if ((status = scenario_real_list(r, t, t ? t->value : fallback, -360, 360, held, DATA_MAX_DOMAINS, &n_held)) != HS_OK)
        return status;
    memset(d->held_out, 0, sizeof d->held_out);
    for (int k = 0; k < n_held; k++) {
        int found = -1;
        for (int a = 0; a < d->n_domains; a++)
            if (d->domain_degrees[a] == held[k]) found = a;
        char why[160];
        if (found < 0) {
            snprintf(why, sizeof why, "%g is not one of the domains' angles", held[k]);
            return scenario_bad(r, t, "%s", why);
        }
        if (d->held_out[found]) {
            snprintf(why, sizeof why, "the angle %g is listed twice", held[k]);
            return scenario_bad(r, t, "%s", why);
        }
        d->held_out[found] = 1;
    }
    if (n_held >= d->n_domains)
        return scenario_bad(r, t ? t : e, "%s", "holds out every domain: at least one must be left to train on");
    return scenario_double(r, "data", "lambda", 0.1, UNIT_PLAIN, 0, 1, &d->lambda);
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
    int status;
    if ((status = scenario_int(r, "data", "channels", 1, 1, 4096, &d->channels)) ||
        (status = scenario_int(r, "data", "height", 1, 1, 4096, &d->height)) ||
        (status = scenario_int(r, "data", "width", 1, 1, 4096, &d->width)))
        return status;
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

static int scenario_resolve_data(Resolver *r)
{
    Scenario *sc = r->sc;
    DataSpec *d = &sc->data;
    int dataset, partition, status;
    if ((status = scenario_choice(r, "data", "dataset", "fashion-mnist", "fashion-mnist|synthetic", &dataset)) ||
        (status = scenario_choice(r, "data", "partition", "iid", "iid|dirichlet|shards|domains", &partition)))
        return status;
    d->dataset = dataset == 0 ? DATA_FASHION_MNIST : DATA_SYNTHETIC;
    d->partition = (PartitionKind)partition;
    IniEntry *e = scenario_take(r, "data", "path");
    scenario_trim_copy(d->path, sizeof d->path, e ? e->value : "/usr/share/datasets/fashion-mnist");
    if (d->path[0] == '\0') return scenario_bad(r, e, "%s", "is empty (leave the key out for Debian's folder)");
    if (e && (status = scenario_plain_text(r, e, d->path)) != HS_OK) return status;
    double alpha, separation;
    if ((status = scenario_double(r, "data", "alpha", 0.5, UNIT_PLAIN, 1e-6, 1e6, &alpha)) ||
        (status = scenario_int(r, "data", "shards", 2, 1, 1000, &d->shards_per_agent)) ||
        (status = scenario_int(r, "data", "test_samples", 0, 0, 10000000, &d->test_samples)) ||
        (status = scenario_int(r, "data", "features", 32, 1, 1 << 20, &d->features)) ||
        (status = scenario_int(r, "data", "classes", 10, 2, DATASET_MAX_CLASSES, &d->classes)) ||
        (status = scenario_int(r, "data", "train_samples", 60000, 1, 100000000, &d->train_samples)) ||
        (status = scenario_double(r, "data", "separation", 2.0, UNIT_PLAIN, 0, 1e6, &separation)))
        return status;
    d->alpha = alpha;
    d->separation = separation;
    if ((status = scenario_resolve_image_shape(r, d)) != HS_OK) return status;
    if ((status = scenario_resolve_domains(r, d)) != HS_OK) return status;
    if (d->partition == PART_DOMAINS && dataset != 0)
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
    return HS_OK;
}

static int scenario_resolve_model(Resolver *r)
{
    Scenario *sc = r->sc;
    ModelSpec *m = &sc->model;
    int arch, status;
    if ((status = scenario_choice(r, "model", "arch", "mlp", "mlp|cnn|resnet", &arch))) return status;
    m->arch = (ModelArch)arch;
    int features = m->in_channels * m->in_height * m->in_width;
    IniEntry *e = scenario_take(r, "model", "layers");
    if (e) {
        if ((status = scenario_int_list(r, e, m->sizes, MODEL_MAX_SIZES, &m->n_sizes))) return status;
        if (m->n_sizes < 2) return scenario_bad(r, e, "%s", "needs at least an input and an output size");
        if (m->sizes[0] != features) {
            char why[128];
            snprintf(why, sizeof why, "the first size must be the input size %d", features);
            return scenario_bad(r, e, "%s", why);
        }
        if (m->sizes[m->n_sizes - 1] != m->classes) {
            char why[128];
            snprintf(why, sizeof why, "the last size must be the class count %d", m->classes);
            return scenario_bad(r, e, "%s", why);
        }
    } else {
        int defaults[] = {features, 256, 128, m->classes};
        memcpy(m->sizes, defaults, sizeof defaults);
        m->n_sizes = 4;
    }
    m->conv_channels[0] = 32;
    m->conv_channels[1] = 64;
    e = scenario_take(r, "model", "channels");
    if (e) {
        int n;
        if ((status = scenario_int_list(r, e, m->conv_channels, 2, &n))) return status;
        if (n != 2) return scenario_bad(r, e, "%s", "needs two channel counts, e.g. 32,64");
    }
    if ((status = scenario_int(r, "model", "kernel", 5, 1, 15, &m->kernel)) ||
        (status = scenario_int(r, "model", "hidden", 128, 1, 1 << 16, &m->hidden)) ||
        (status = scenario_int(r, "model", "batch", 64, 1, 1 << 16, &m->batch)))
        return status;
    if (m->kernel % 2 == 0)
        return scenario_bad(r, inidoc_find(r->doc, "model", "kernel"), "%s", "must be odd (same padding)");
    /* ResNet: depth 6n + 2 (n residual blocks per stage, 3n blocks <= MODEL_MAX_BLOCKS),
     * 16 x width channels in the first stage, GroupNorm in 8 groups (see models/resnet.h) */
    int width;
    if ((status = scenario_int(r, "model", "depth", 20, 8, 2 + 2 * MODEL_MAX_BLOCKS, &m->depth)) ||
        (status = scenario_int(r, "model", "width", 1, 1, 64, &width)))
        return status;
    if ((m->depth - 2) % 6 != 0)
        return scenario_bad(r, inidoc_find(r->doc, "model", "depth"), "%s",
                            "must be 6n + 2 (8, 14, 20, 32, 44, 56, 110, ...)");
    m->base_channels = 16 * width;
    m->norm_groups = 8;
    /* [run] kernels as it runs: auto becomes onednn or openblas, which runs.config records */
    m->kernels = model_kernels_resolve(m);
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
    OptimSpec *o = &sc->optim;
    int kind, schedule;
    if ((status = scenario_choice(r, "model", "optimizer", "sgd", "sgd|momentum|adam|adamw", &kind)) ||
        (status = scenario_double(r, "model", "lr", 0.05, UNIT_PLAIN, 0, 1e6, &o->lr)) ||
        (status = scenario_double(r, "model", "momentum", 0.9, UNIT_PLAIN, 0, 0.999999, &o->momentum)) ||
        (status = scenario_int(r, "model", "nesterov", 0, 0, 1, &o->nesterov)) ||
        (status = scenario_double(r, "model", "weight_decay", 0, UNIT_PLAIN, 0, 1e3, &o->weight_decay)) ||
        (status = scenario_double(r, "model", "beta1", 0.9, UNIT_PLAIN, 0, 0.999999, &o->beta1)) ||
        (status = scenario_double(r, "model", "beta2", 0.999, UNIT_PLAIN, 0, 0.99999999, &o->beta2)) ||
        (status = scenario_double(r, "model", "eps", 1e-8, UNIT_PLAIN, 1e-30, 1, &o->eps)) ||
        (status = scenario_choice(r, "model", "schedule", "constant", "constant|step|cosine", &schedule)) ||
        (status = scenario_double(r, "model", "step_gamma", 0.1, UNIT_PLAIN, 0, 1, &o->step_gamma)) ||
        (status = scenario_int(r, "model", "step_every", 10, 1, 1000000, &o->step_every)) ||
        (status = scenario_int(r, "model", "warmup", 0, 0, 1000000, &o->warmup_rounds)))
        return status;
    o->kind = (OptimKind)kind;
    o->schedule = (ScheduleKind)schedule;
    ModelProfile profile;
    if (model_profile(m, &profile) != HS_OK)
        return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, inidoc_section_line(r->doc, "model"),
                           "[model] does not describe a valid network");
    return HS_OK;
}

static int scenario_trace_path(Resolver *r, const IniEntry *e, Distribution *d)
{
    if (strcmp(e->key, "latency") == 0 || strcmp(e->key, "samples") == 0)
        return scenario_bad(r, e, "%s", "trace() is available for compute, bandwidth, uplink, downlink and availability");
    return scenario_input_path(r, e, d->path, sizeof d->path);
}

static int scenario_resolve_topology(Resolver *r)
{
    Scenario *sc = r->sc;
    int graph, status;
    IniEntry *e = scenario_take(r, "topology", "graph");
    char value[INIDOC_VALUE_MAX];
    scenario_trim_copy(value, sizeof value, e ? e->value : "full");
    graph = scenario_match_choice(value, "full|ring|torus|random-regular|exponential");
    if (graph < 0) {
        size_t len = strlen(value);
        if (len > 6 && strcmp(value + len - 6, ".edges") == 0) {
            graph = TOPO_FILE;
            snprintf(sc->topology_file, sizeof sc->topology_file, "%s", value);
        } else {
            return scenario_bad(r, e, "'%s' is not one of full|ring|torus|random-regular|exponential|FILE.edges",
                                value);
        }
    }
    sc->topology = (TopologyKind)graph;
    sc->topology_line = inidoc_section_line(r->doc, "topology") > 0 ? inidoc_section_line(r->doc, "topology") : 0;
    if ((status = scenario_int(r, "topology", "degree", 4, 1, 100000, &sc->degree))) return status;
    if (graph == TOPO_FILE) return scenario_input_path(r, e, sc->topology_file, sizeof sc->topology_file);
    return HS_OK;
}

static int scenario_dist(Resolver *r, const char *section, const char *key, UnitKind unit,
                         Distribution *out, int *present)
{
    IniEntry *e = scenario_take(r, section, key);
    *present = e != NULL;
    if (e == NULL) return HS_OK;
    char why[300];
    if (distribution_parse(e->value, unit, out, why, sizeof why) != HS_OK)
        return scenario_bad(r, e, "%s", why);
    if (out->kind == DIST_TRACE) return scenario_trace_path(r, e, out);
    int positive_only = unit != UNIT_TIME;
    double lowest = out->kind == DIST_CHOICE ? out->values[0] : out->a;
    for (int i = 1; out->kind == DIST_CHOICE && i < out->n_choices; i++)
        if (out->values[i] < lowest) lowest = out->values[i];
    if (out->kind == DIST_NORMAL) lowest = out->a;
    if (positive_only ? !(lowest > 0) : !(lowest >= 0))
        return scenario_bad(r, e, "%s", positive_only ? "values must be positive" : "values must not be negative");
    /* A constant or a choice() is written value by value: each must be what the key
     * holds. Continuous draws are rounded (samples) and checked when drawn (world.c). */
    int n_written = out->kind == DIST_CONSTANT ? 1 : out->kind == DIST_CHOICE ? out->n_choices : 0;
    for (int i = 0; i < n_written; i++) {
        double v = out->kind == DIST_CHOICE ? out->values[i] : out->a;
        if (strcmp(key, "samples") == 0 && (v != floor(v) || v > SCENARIO_MAX_SAMPLES)) {
            char whole[160];
            snprintf(whole, sizeof whole, "%.17g is not a whole number of samples in [1, %d]", v, SCENARIO_MAX_SAMPLES);
            return scenario_bad(r, e, "%s", whole);
        }
        if (unit == UNIT_TIME && isinf(v)) return scenario_bad(r, e, "%s", "a latency must be finite");
    }
    return HS_OK;
}

/* Resolves one agents section into *g, inheriting from base when given. */
static int scenario_resolve_group(Resolver *r, const char *section, const AgentGroupSpec *base,
                                  AgentGroupSpec *g)
{
    int status, present;
    Distribution bandwidth;
    if ((status = scenario_dist(r, section, "compute", UNIT_COMPUTE, &g->compute, &present))) return status;
    if (!present) {
        if (!base) return scenario_missing(r, section, "compute");
        g->compute = base->compute;
    }
    int has_bw, has_up, has_down;
    if ((status = scenario_dist(r, section, "bandwidth", UNIT_BANDWIDTH, &bandwidth, &has_bw)) ||
        (status = scenario_dist(r, section, "uplink", UNIT_BANDWIDTH, &g->uplink, &has_up)) ||
        (status = scenario_dist(r, section, "downlink", UNIT_BANDWIDTH, &g->downlink, &has_down)))
        return status;
    if (!has_up) g->uplink = has_bw ? bandwidth : (base ? base->uplink : g->uplink);
    if (!has_down) g->downlink = has_bw ? bandwidth : (base ? base->downlink : g->downlink);
    /* `bandwidth` alone describes one symmetric link per agent; separate uplink and
     * downlink keys (here or inherited) make them independent draws. */
    if (has_up || has_down) g->symmetric_link = 0;
    else g->symmetric_link = has_bw ? 1 : (base ? base->symmetric_link : 0);
    if (!base && !(has_bw || (has_up && has_down)))
        return scenario_missing(r, section, "bandwidth");
    if ((status = scenario_dist(r, section, "latency", UNIT_TIME, &g->latency, &present))) return status;
    if (!present) {
        if (base) g->latency = base->latency;
        else g->latency = (Distribution){.kind = DIST_CONSTANT, .a = 0};
    }
    if ((status = scenario_dist(r, section, "samples", UNIT_PLAIN, &g->samples, &present))) return status;
    g->has_samples = present || (base && base->has_samples);
    if (!present && base) g->samples = base->samples;
    IniEntry *e = scenario_take(r, section, "slowdown");
    if (e) {
        char why[300];
        if (slowdown_parse(e->value, &g->slowdown, why, sizeof why) != HS_OK) return scenario_bad(r, e, "%s", why);
    } else if (base) {
        g->slowdown = base->slowdown;
    }
    e = scenario_take(r, section, "availability");
    if (e == NULL) {
        if (base) g->availability = base->availability;
        else g->availability = (Distribution){.kind = DIST_CONSTANT, .a = 1};
    } else {
        char value[INIDOC_VALUE_MAX];
        scenario_trim_copy(value, sizeof value, e->value);
        if (strcmp(value, "always") == 0) {
            g->availability = (Distribution){.kind = DIST_CONSTANT, .a = 1};
        } else {
            char why[300];
            if (distribution_parse(value, UNIT_PLAIN, &g->availability, why, sizeof why) != HS_OK ||
                g->availability.kind != DIST_TRACE)
                return scenario_bad(r, e, "%s", "expected always or trace(FILE.csv)");
            if ((status = scenario_trace_path(r, e, &g->availability)) != HS_OK) return status;
        }
    }
    return scenario_double(r, section, "jitter", base ? base->jitter : 0, UNIT_PLAIN, 0, 10, &g->jitter);
}

static int scenario_resolve_agents(Resolver *r)
{
    Scenario *sc = r->sc;
    if (!inidoc_has_section(r->doc, "agents"))
        return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, 0, "missing section [agents]");
    int status;
    IniEntry *count_entry = inidoc_find(r->doc, "agents", "count");
    if (count_entry == NULL) return scenario_missing(r, "agents", "count");
    if ((status = scenario_int(r, "agents", "count", 0, 1, 10000000, &sc->n_agents))) return status;
    AgentGroupSpec *base = &sc->groups[0];
    snprintf(base->name, sizeof base->name, "default");
    base->line = inidoc_section_line(r->doc, "agents");
    if ((status = scenario_resolve_group(r, "agents", NULL, base))) return status;
    sc->n_groups = 1;
    int taken = 0;
    for (int i = 0; i < r->doc->n_sections; i++) {
        const char *s = r->doc->sections[i];
        if (!scenario_is_group(s)) continue;
        int line = r->doc->section_lines[i];
        if (sc->n_groups == SCENARIO_MAX_GROUPS)
            return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, line, "more than %d agent groups",
                               SCENARIO_MAX_GROUPS - 1);
        AgentGroupSpec *g = &sc->groups[sc->n_groups++];
        snprintf(g->name, sizeof g->name, "%s", s + 7);
        g->line = line;
        if (inidoc_find(r->doc, s, "count") == NULL) return scenario_missing(r, s, "count");
        if ((status = scenario_int(r, s, "count", 0, 0, 10000000, &g->count))) return status;
        if ((status = scenario_resolve_group(r, s, base, g))) return status;
        taken += g->count;
        if (taken > sc->n_agents) {
            IniEntry *e = inidoc_find(r->doc, s, "count");
            char why[160];
            snprintf(why, sizeof why, "groups take %d agents, but [agents] count is %d", taken, sc->n_agents);
            return scenario_bad(r, e, "%s", why);
        }
    }
    base->count = sc->n_agents - taken;
    if (sc->mode == RUN_MODE_TRAIN && sc->n_agents > sc->dataset_train_size)
        return scenario_bad(r, count_entry, "%s", "more agents than training samples");
    return HS_OK;
}


/* [servers] assign: nearest, round-robin or FILE.assign (sim/scenario/server_assign.h), read here
 * once so that a bad file is an input error before anything runs. */
static int scenario_resolve_assign(Resolver *r)
{
    Scenario *sc = r->sc;
    IniEntry *e = scenario_take(r, "servers", "assign");
    char value[INIDOC_VALUE_MAX];
    scenario_trim_copy(value, sizeof value, e ? e->value : "nearest");
    int assign = scenario_match_choice(value, "nearest|round-robin");
    size_t len = strlen(value);
    if (assign >= 0) {
        sc->server_assign = (ServerAssign)assign;
        return HS_OK;
    }
    if (len <= 7 || strcmp(value + len - 7, ".assign") != 0)
        return scenario_bad(r, e, "'%s' is not one of nearest|round-robin|FILE.assign", value);
    sc->server_assign = SERVER_ASSIGN_FILE;
    snprintf(sc->server_assign_file, sizeof sc->server_assign_file, "%s", value);
    int status = scenario_input_path(r, e, sc->server_assign_file, sizeof sc->server_assign_file);
    if (status != HS_OK) return status;
    int *server_of = malloc((size_t)(sc->n_agents > 0 ? sc->n_agents : 1) * sizeof *server_of);
    if (server_of == NULL) return hs_diag_set(r->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    HsDiag inner;
    hs_diag_clear(&inner);
    status = server_assign_load(sc->server_assign_file, sc->n_agents, sc->server_count, server_of, &inner);
    free(server_of);
    return status == HS_OK ? HS_OK : scenario_input_bad(r, e, &inner);
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
    const char *section = many ? "servers" : "server";
    int status;
    if (many) {
        if (inidoc_find(r->doc, "servers", "count") == NULL) return scenario_missing(r, "servers", "count");
        if ((status = scenario_int(r, "servers", "count", 1, 1, 100000, &sc->server_count)) ||
            (status = scenario_resolve_assign(r)))
            return status;
        if (uses && !edge && sc->server_count > 1)
            return scenario_bad(r, inidoc_find(r->doc, "servers", "count"),
                                "method %s has one server: count must be 1 (or write [server])", sc->method);
    }
    AgentGroupSpec *g = &sc->groups[sc->n_groups];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "server");
    g->count = sc->server_count;
    g->line = inidoc_section_line(r->doc, section);
    if ((status = scenario_resolve_group(r, section, NULL, g)) != HS_OK) return status;
    sc->n_servers = uses ? sc->server_count : 0;
    return HS_OK;
}

/* After [agents]: whether the graph can be built over this many agents, whatever the
 * method (an impossible [topology] is an error even where no method reads it). A
 * problem is reported at the key that sets it: degree for random-regular, else graph. */
static int scenario_check_topology(Resolver *r)
{
    Scenario *sc = r->sc;
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
        (status = scenario_resolve_method(&r)) || (status = scenario_resolve_topology(&r)) ||
        (status = scenario_resolve_agents(&r)) || (status = scenario_resolve_server(&r)) ||
        (status = scenario_check_topology(&r)) ||
        (status = scenario_check_domains(&r)) || (status = scenario_resolve_network(&r)) ||
        (status = scenario_resolve_compression(&r)) ||
        (status = scenario_resolve_byzantine(&r)) || (status = scenario_resolve_privacy(&r)) ||
        (status = scenario_check_dataset(&r)) || (status = scenario_check_traces(&r)) ||
        (status = scenario_check_spans(&r)))
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
