/* scenario_schema.c — the schema of the fixed sections: one row per key (see
 * scenario_schema.h for what a row says), the sections, and the lookups over them.
 * Rows are in runs.config order, which is also the order of the reference docs and of
 * resolution within a section (so the first bad value in that order is the one
 * reported). The hooks above the table are what a row cannot say alone: a default that
 * is another key's value, a range from the agent count, where a list lands. */
#include "sim/scenario/scenario_schema.h"

#include "base/hs_error.h"
#include "base/numtext.h"
#include "models/dataset.h"
#include "models/model.h"
#include "sim/scenario/method_ops.h"
#include "sim/scenario/scenario_resolver.h"
#include "sim/scenario/server_assign.h"

#include <ctype.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Choices land in enum fields as their index. */
_Static_assert(sizeof(RunMode) == sizeof(int) && sizeof(CompressScheme) == sizeof(int) &&
                   sizeof(ModelKernels) == sizeof(int),
               "enums are ints");

/* ---- when a key matters (written back to runs.config; reset where SCHEMA_RESET) ---- */

static int never(const Scenario *sc, const void *t) { (void)sc, (void)t; return 0; }
static int has_rounds(const Scenario *sc, const void *t) { (void)t; return sc->rounds > 0; }
static int has_budget(const Scenario *sc, const void *t) { (void)t; return isfinite(sc->time_budget); }
static int synthetic(const Scenario *sc, const void *t) { (void)t; return sc->data.dataset == DATA_SYNTHETIC; }
static int domains(const Scenario *sc, const void *t) { (void)t; return sc->data.partition == PART_DOMAINS; }
static int cifar100(const Scenario *sc, const void *t) { (void)t; return sc->data.dataset == DATA_CIFAR100; }
static int has_files(const Scenario *sc, const void *t) { (void)t; return sc->data.dataset != DATA_SYNTHETIC; }
/* the kinds whose classes come from their files, or from [data] classes */
static int classes_key(const Scenario *sc, const void *t)
{
    (void)t;
    return sc->data.dataset == DATA_SYNTHETIC || sc->data.dataset == DATA_LEAF || sc->data.dataset == DATA_NPY;
}
/* path is written when there is one: cifar in timing mode may have none */
static int path_written(const Scenario *sc, const void *t) { return has_files(sc, t) && sc->data.path[0]; }
/* normalize and augment are written only when used, so the configs of runs from before
 * they existed stay what they were */
static int normalized(const Scenario *sc, const void *t) { (void)t; return sc->data.normalize != DATA_NORMALIZE_NONE; }
static int augmented(const Scenario *sc, const void *t) { (void)t; return sc->data.crop_padding > 0 || sc->data.flip; }
static int image(const Scenario *sc, const void *t) { return synthetic(sc, t) && sc->data.channels > 0; }
static int mlp(const Scenario *sc, const void *t) { (void)t; return sc->model.arch == MODEL_ARCH_MLP; }
static int cnn(const Scenario *sc, const void *t) { (void)t; return sc->model.arch == MODEL_ARCH_CNN; }
static int resnet(const Scenario *sc, const void *t) { (void)t; return sc->model.arch == MODEL_ARCH_RESNET; }
static int symmetric(const Scenario *sc, const void *g) { (void)sc; return ((const AgentGroupSpec *)g)->symmetric_link; }
static int asymmetric(const Scenario *sc, const void *g) { return !symmetric(sc, g); }
/* [agents] profile given, and target an agents' group (not the servers'): the profile
 * gives its compute, links (and latency when the file has them), which are not written */
static int profiled(const Scenario *sc, const void *g)
{
    return sc->agents_profile[0] && (!sc->has_server || g != (const void *)&sc->groups[sc->n_groups]);
}
static int has_profile(const Scenario *sc, const void *t) { (void)t; return sc->agents_profile[0] != 0; }
static int compute_written(const Scenario *sc, const void *g) { return !profiled(sc, g); }
static int has_model_profile(const Scenario *sc, const void *t) { (void)t; return sc->model_profile[0] != 0; }
static int bandwidth_written(const Scenario *sc, const void *g) { return !profiled(sc, g) && symmetric(sc, g); }
static int link_written(const Scenario *sc, const void *g) { return !profiled(sc, g) && asymmetric(sc, g); }
static int latency_written(const Scenario *sc, const void *g) { return !(profiled(sc, g) && sc->profile_latency); }
static int own_samples(const Scenario *sc, const void *g) { (void)sc; return ((const AgentGroupSpec *)g)->has_samples; }
static int own_batch(const Scenario *sc, const void *g) { (void)sc; return ((const AgentGroupSpec *)g)->has_batch; }
static int maxmin(const Scenario *sc, const void *t) { (void)t; return sc->network.model == NETWORK_MAXMIN; }
static int compressed(const Scenario *sc, const void *t) { (void)t; return sc->compression.scheme != COMPRESS_NONE; }
static int econtrol(const Scenario *sc, const void *t) { (void)t; return sc->compression.feedback == FEEDBACK_ECONTROL; }
static int feedback(const Scenario *sc, const void *t) { (void)t; return sc->compression.feedback != FEEDBACK_NONE; }
static int dgc(const Scenario *sc, const void *t) { (void)t; return sc->compression.feedback == FEEDBACK_DGC; }
static int dct(const Scenario *sc, const void *t) { (void)t; return sc->compression.scheme == COMPRESS_DCT; }
static int slimdp(const Scenario *sc, const void *t) { (void)t; return sc->compression.scheme == COMPRESS_SLIMDP; }
static int qsgd(const Scenario *sc, const void *t) { (void)t; return sc->compression.scheme == COMPRESS_QSGD; }
/* the schemes that keep a share of the entries (the quantizers keep all) */
static int sparsified(const Scenario *sc, const void *t)
{
    (void)t;
    CompressScheme s = sc->compression.scheme;
    return s != COMPRESS_NONE && s != COMPRESS_QSGD && s != COMPRESS_SIGN;
}
static int worker(const Scenario *sc, const void *t) { (void)t; return sc->compression.worker_momentum != 0; }
static int signflip(const Scenario *sc, const void *t) { (void)t; return sc->byzantine.attack == ATTACK_SIGNFLIP; }
static int gaussian(const Scenario *sc, const void *t) { (void)t; return sc->byzantine.attack == ATTACK_GAUSSIAN; }
static int alie(const Scenario *sc, const void *t) { (void)t; return sc->byzantine.attack == ATTACK_ALIE; }
static int ipm(const Scenario *sc, const void *t) { (void)t; return sc->byzantine.attack == ATTACK_IPM; }
static int trimmed(const Scenario *sc, const void *t) { (void)t; return sc->byzantine.aggregator == AGGREGATOR_TRIMMED; }
static int krum(const Scenario *sc, const void *t) { (void)t; return sc->byzantine.aggregator == AGGREGATOR_KRUM; }
static int cclip(const Scenario *sc, const void *t) { (void)t; return sc->byzantine.aggregator == AGGREGATOR_CCLIP; }
static int betamle(const Scenario *sc, const void *t) { (void)t; return sc->byzantine.aggregator == AGGREGATOR_BETAMLE; }
static int iterates(const Scenario *sc, const void *t) { return cclip(sc, t) || betamle(sc, t); }
static int clipping(const Scenario *sc, const void *t) { (void)t; return sc->privacy.clip != PRIVACY_CLIP_NONE; }
static int fedprox(const Scenario *sc, const void *t) { (void)t; return sc->drift.method == DRIFT_FEDPROX; }

/* ---- defaults and ranges from other keys ---- */

/* [data] path: Debian's folder for fashion-mnist; none for the others (the kind's
 * resolution says when one is needed) */
static void data_path_default(const Scenario *sc, SchemaValue *v)
{
    snprintf(v->text, sizeof v->text, "%s", sc->data.dataset == DATA_FASHION_MNIST ? "/usr/share/datasets/fashion-mnist" : "");
}

/* [data] classes: 10 for the synthetic mixture; 0 (from the labels) for leaf and npy */
static void data_classes_default(const Scenario *sc, SchemaValue *v)
{
    v->number = sc->data.dataset == DATA_SYNTHETIC ? 10 : 0;
}

/* [data] augment: none | crop-flip | crop | flip, into the crop's padding and the flip */
#define DATA_AUGMENT_PADDING 4
static void data_augment_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    (void)k;
    DataSpec *d = &((Scenario *)target)->data;
    d->crop_padding = v->index == 1 || v->index == 2 ? DATA_AUGMENT_PADDING : 0;
    d->flip = v->index == 1 || v->index == 3;
}

static void data_augment_write(const Scenario *sc, const void *target, FILE *out)
{
    (void)target;
    const DataSpec *d = &sc->data;
    fputs(d->crop_padding && d->flip ? "crop-flip" : d->crop_padding ? "crop" : d->flip ? "flip" : "none", out);
}

/* The file's name without its folder and extension. */
static void run_name_default(const Scenario *sc, SchemaValue *v)
{
    const char *base = strrchr(sc->file, '/');
    base = base ? base + 1 : sc->file;
    snprintf(v->text, sizeof sc->name, "%s", base); /* cut to the field first, as it lands */
    char *dot = strrchr(v->text, '.');
    if (dot && dot != v->text) *dot = '\0';
}

/* Baruch et al.'s z_max for n agents of which m attack: s = floor(n/2 + 1) - m and
 * z = Phi^-1((n - s) / n), clamped to [0, Phi^-1(0.999)] where the formula leaves (0, 1). */
static void byzantine_z_default(const Scenario *sc, SchemaValue *v)
{
    int n = sc->n_agents, s = n / 2 + 1 - sc->byzantine.count;
    double p = (double)(n - s) / n;
    if (p < 0.5) p = 0.5;
    if (p > 0.999) p = 0.999;
    v->number = gsl_cdf_ugaussian_Pinv(p);
}

static void byzantine_count_default(const Scenario *sc, SchemaValue *v) { v->number = sc->byzantine.count; }

/* cclip: clipping iterations (1 by default); betamle: IRLS reweightings after the flag
 * mean (4 by default, as the authors' flag_median.py; 0 is the flag mean) */
static void byzantine_iters_default(const Scenario *sc, SchemaValue *v)
{
    v->number = sc->byzantine.aggregator == AGGREGATOR_BETAMLE ? 4 : 1;
}

static void byzantine_iters_limits(const Scenario *sc, double *min, double *max)
{
    *min = sc->byzantine.aggregator == AGGREGATOR_BETAMLE ? 0 : 1;
    *max = 1000;
}

static void byzantine_count_limits(const Scenario *sc, double *min, double *max) { *min = 0, *max = sc->n_agents - 1; }
static void byzantine_trim_limits(const Scenario *sc, double *min, double *max) { *min = 0, *max = (sc->n_agents - 1) / 2; }
static void byzantine_f_limits(const Scenario *sc, double *min, double *max) { *min = 0, *max = sc->n_agents; }
static void byzantine_rank_limits(const Scenario *sc, double *min, double *max) { *min = 1, *max = sc->n_agents; }

/* ---- [run] kernels ---- */

/* onednn or winograd on a build without oneDNN (DNNL=0) is refused at the key, before
 * anything runs. */
static int run_kernels_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                             void *target)
{
    if (model_kernels_available((ModelKernels)v->index)) return HS_OK;
    return scenario_bad(r, e, "%s", "this hetsim was built without oneDNN (DNNL=0): use openblas or auto");
}

/* record is written back only when summary, so the configs of runs before the key stay */
static int run_record_written(const Scenario *sc, const void *t)
{
    (void)t;
    return sc->record == RUN_RECORD_SUMMARY;
}

/* Written once resolved (auto is onednn or openblas by then, scenario_resolve_model),
 * and only when not openblas: the configs, run_params rows and sweep ids of every run on
 * the reference kernels stay what they were before the key. In timing mode it changes
 * nothing, so it is not written there either. */
static int run_kernels_written(const Scenario *sc, const void *t)
{
    (void)t;
    return sc->mode == RUN_MODE_TRAIN &&
           (sc->model.kernels == MODEL_KERNELS_ONEDNN || sc->model.kernels == MODEL_KERNELS_WINOGRAD);
}

/* ---- [data] domains and test_domains ---- */

static int data_domains_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                              void *target)
{
    for (int a = 0; a < v->count; a++)
        for (int b = 0; b < a; b++)
            if (v->list[a] == v->list[b]) {
                char why[120];
                snprintf(why, sizeof why, "the angle %g is listed twice", v->list[a]);
                return scenario_bad(r, e, "%s", why);
            }
    return HS_OK;
}

static void data_domains_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    DataSpec *d = &((Scenario *)target)->data;
    d->n_domains = v->count;
    memcpy(d->domain_degrees, v->list, (size_t)v->count * sizeof *v->list);
}

static void data_domains_write(const Scenario *sc, const void *target, FILE *out)
{
    char number[NUMTEXT_SIZE];
    for (int k = 0; k < sc->data.n_domains; k++)
        fprintf(out, "%s%s", k ? "," : "", numtext_double(number, sizeof number, sc->data.domain_degrees[k]));
}

/* The last domain is held out unless the file says which. */
static void data_test_domains_default(const Scenario *sc, SchemaValue *v)
{
    v->count = 1;
    v->list[0] = sc->data.domain_degrees[sc->data.n_domains - 1];
}

static int data_test_domains_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e,
                                   SchemaValue *v, void *target)
{
    const DataSpec *d = &((Scenario *)target)->data;
    int held[DATA_MAX_DOMAINS] = {0};
    for (int i = 0; i < v->count; i++) {
        int found = -1;
        for (int a = 0; a < d->n_domains; a++)
            if (d->domain_degrees[a] == v->list[i]) found = a;
        char why[160];
        if (found < 0) {
            snprintf(why, sizeof why, "%g is not one of the domains' angles", v->list[i]);
            return scenario_bad(r, e, "%s", why);
        }
        if (held[found]) {
            snprintf(why, sizeof why, "the angle %g is listed twice", v->list[i]);
            return scenario_bad(r, e, "%s", why);
        }
        held[found] = 1;
    }
    if (v->count >= d->n_domains)
        return scenario_bad(r, e ? e : inidoc_find(r->doc, "data", "domains"), "%s",
                            "holds out every domain: at least one must be left to train on");
    return HS_OK;
}

static void data_test_domains_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    DataSpec *d = &((Scenario *)target)->data;
    memset(d->held_out, 0, sizeof d->held_out);
    for (int i = 0; i < v->count; i++)
        for (int a = 0; a < d->n_domains; a++)
            if (d->domain_degrees[a] == v->list[i]) d->held_out[a] = 1;
}

static void data_test_domains_write(const Scenario *sc, const void *target, FILE *out)
{
    char number[NUMTEXT_SIZE];
    for (int k = 0, n = 0; k < sc->data.n_domains; k++)
        if (sc->data.held_out[k])
            fprintf(out, "%s%s", n++ ? "," : "", numtext_double(number, sizeof number, sc->data.domain_degrees[k]));
}

/* ---- [model] ---- */

static int model_depth_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                             void *target)
{
    if (((int)v->number - 2) % 6 == 0) return HS_OK;
    return scenario_bad(r, e, "%s", "must be 6n + 2 (8, 14, 20, 32, 44, 56, 110, ...)");
}

/* ResNet: 16 x width channels in the first stage (see models/resnet.h) */
static void model_width_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    ((Scenario *)target)->model.base_channels = 16 * (int)v->number;
}

static void model_width_write(const Scenario *sc, const void *target, FILE *out)
{
    fprintf(out, "%d", sc->model.base_channels / 16);
}

/* An MLP of the data's input size, two hidden layers and the class count. */
static void model_layers_default(const Scenario *sc, SchemaValue *v)
{
    const ModelSpec *m = &sc->model;
    double sizes[] = {m->in_channels * m->in_height * m->in_width, 256, 128, m->classes};
    v->count = 4;
    memcpy(v->list, sizes, sizeof sizes);
}

static int model_layers_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                              void *target)
{
    const ModelSpec *m = &((Scenario *)target)->model;
    int features = m->in_channels * m->in_height * m->in_width;
    char why[128];
    if ((int)v->list[0] != features) {
        snprintf(why, sizeof why, "the first size must be the input size %d", features);
        return scenario_bad(r, e, "%s", why);
    }
    if ((int)v->list[v->count - 1] != m->classes) {
        snprintf(why, sizeof why, "the last size must be the class count %d", m->classes);
        return scenario_bad(r, e, "%s", why);
    }
    return HS_OK;
}

static void model_layers_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    ModelSpec *m = &((Scenario *)target)->model;
    m->n_sizes = v->count;
    for (int i = 0; i < v->count; i++) m->sizes[i] = (int)v->list[i];
}

static void model_layers_write(const Scenario *sc, const void *target, FILE *out)
{
    for (int i = 0; i < sc->model.n_sizes; i++) fprintf(out, "%s%d", i ? "," : "", sc->model.sizes[i]);
}

static void model_channels_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    ModelSpec *m = &((Scenario *)target)->model;
    m->conv_channels[0] = (int)v->list[0];
    m->conv_channels[1] = (int)v->list[1];
}

static void model_channels_write(const Scenario *sc, const void *target, FILE *out)
{
    fprintf(out, "%d,%d", sc->model.conv_channels[0], sc->model.conv_channels[1]);
}

static int model_kernel_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                              void *target)
{
    return (int)v->number % 2 == 0 ? scenario_bad(r, e, "%s", "must be odd (same padding)") : HS_OK;
}

/* ---- [topology] graph and [servers] assign: a name or a file ---- */

static void topology_graph_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    Scenario *sc = target;
    sc->topology = v->index < 0 ? TOPO_FILE : (TopologyKind)v->index;
    if (v->index < 0) snprintf(sc->topology_file, sizeof sc->topology_file, "%s", v->text);
}

static void topology_graph_write(const Scenario *sc, const void *target, FILE *out)
{
    static const char *const graphs[] = {"full", "ring", "torus", "random-regular", "exponential", "learned"};
    fputs(sc->topology == TOPO_FILE ? sc->topology_file : graphs[sc->topology], out);
}

/* [topology] weights: metropolis ("" in the field) or a FILE.weights; the file itself is
 * read where the graph is checked (scenario_check_topology), once the agents are known. */
static void topology_weights_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    Scenario *sc = target;
    snprintf(sc->topology_weights_file, sizeof sc->topology_weights_file, "%s", v->index < 0 ? v->text : "");
}

static void topology_weights_write(const Scenario *sc, const void *target, FILE *out)
{
    fputs(sc->topology_weights_file[0] ? sc->topology_weights_file : "metropolis", out);
}

/* written back only when not the default, so the configs of runs before the key stay */
static int topology_weights_given(const Scenario *sc, const void *t)
{
    (void)t;
    return sc->topology_weights_file[0] != 0;
}

/* a FILE.weights is the graph: graph is not written beside it */
static int topology_graph_written(const Scenario *sc, const void *t)
{
    (void)t;
    return sc->topology_weights_file[0] == 0;
}

static int topology_is_learned(const Scenario *sc, const void *t)
{
    (void)t;
    return sc->topology == TOPO_LEARNED;
}

/* After [servers] count and assign: a FILE.assign is read here once, so that a bad file
 * is an input error before anything runs (sim/server_assign.h); a method with one server
 * takes count = 1 only. */
static int servers_assign_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                                void *target)
{
    const Scenario *sc = target;
    if (v->index < 0) {
        int *server_of = malloc((size_t)(sc->n_agents > 0 ? sc->n_agents : 1) * sizeof *server_of);
        if (server_of == NULL) return hs_diag_set(r->diag, HS_E_NOMEM, NULL, 0, "out of memory");
        /* the file's own errors, at this key (scenario_input_bad) */
        HsDiag inner;
        hs_diag_clear(&inner);
        int status = server_assign_load(v->text, sc->n_agents, sc->server_count, server_of, &inner);
        free(server_of);
        if (status != HS_OK) return scenario_input_bad(r, e, &inner);
    }
    int capabilities = method_lookup(sc->method)->capabilities;
    if ((capabilities & METHOD_USES_SERVER) && !(capabilities & METHOD_EDGE_SERVERS) && sc->server_count > 1)
        return scenario_bad(r, inidoc_find(r->doc, "servers", "count"),
                            "method %s has one server: count must be 1 (or write [server])", sc->method);
    return HS_OK;
}

static void servers_assign_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    Scenario *sc = target;
    sc->server_assign = v->index < 0 ? SERVER_ASSIGN_FILE : (ServerAssign)v->index;
    if (v->index < 0) snprintf(sc->server_assign_file, sizeof sc->server_assign_file, "%s", v->text);
}

static void servers_assign_write(const Scenario *sc, const void *target, FILE *out)
{
    fputs(sc->server_assign == SERVER_ASSIGN_FILE      ? sc->server_assign_file
          : sc->server_assign == SERVER_ASSIGN_NEAREST ? "nearest"
                                                       : "round-robin",
          out);
}

/* ---- agent attributes: one link or two ---- */

/* `bandwidth` alone describes one symmetric link per agent (one draw); separate uplink
 * and downlink keys (here or inherited) make them independent draws. */
static void group_bandwidth_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    AgentGroupSpec *g = target;
    g->uplink = g->downlink = v->dist;
    g->symmetric_link = 1;
}

static void group_uplink_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    AgentGroupSpec *g = target;
    g->uplink = v->dist;
    g->symmetric_link = 0;
}

static void group_downlink_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    AgentGroupSpec *g = target;
    g->downlink = v->dist;
    g->symmetric_link = 0;
}

/* A section the [agents] profile times: [agents] and its groups, not the servers'. */
static int section_profiled(Resolver *r, const char *section)
{
    return r->sc->agents_profile[0] && (strcmp(section, "agents") == 0 || scenario_is_group(section));
}

/* [model] profile: a file named relative to the scenario's folder; read and checked
 * against the model once [model] is whole (scenario_resolve_model). */
static int model_profile_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                               void *target)
{
    (void)section, (void)target;
    if (e == NULL || v == NULL || !v->text[0]) return HS_OK;
    return scenario_input_path(r, e, v->text, k->size);
}

/* A key the profile gives, written beside it: refused, so that no value is silently
 * replaced. */
static int profile_conflict(Resolver *r, IniEntry *e)
{
    return scenario_bad(r, e, "%s", "comes from [agents] profile for every agent (leave it out, or the profile)");
}

/* compute: required where nothing else gives it (a group inherits [agents]'s; the
 * profile gives the agents'); then its span (scenario_span_row_check). */
static int group_compute_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                               void *target)
{
    int profile = section_profiled(r, section);
    if (e != NULL && profile) return profile_conflict(r, e);
    if (v == NULL && !scenario_is_group(section) && !profile) return scenario_missing(r, section, k->name);
    return scenario_span_row_check(r, section, k, e, v, target);
}

static int group_latency_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                               void *target)
{
    if (e != NULL && section_profiled(r, section) && r->sc->profile_latency) return profile_conflict(r, e);
    return scenario_span_row_check(r, section, k, e, v, target);
}

/* Energy (docs/energy.md): the keys are written back only when the group uses them, so
 * the configs, run_params rows and sweep ids of runs without them stay what they were. */
static int powered(const Scenario *sc, const void *g)
{
    (void)sc;
    const AgentGroupSpec *group = g;
    return !distribution_is_zero(&group->power_compute) || !distribution_is_zero(&group->power_tx) ||
           !distribution_is_zero(&group->power_rx) || !distribution_is_zero(&group->power_idle) ||
           !distribution_is_zero(&group->energy_per_byte);
}
/* One radio power (power_tx and power_rx the same distribution) is written as power_comm,
 * as before the two existed; two as power_tx and power_rx. */
static int radio_one(const Scenario *sc, const void *g)
{
    const AgentGroupSpec *group = g;
    return powered(sc, g) && distribution_same(&group->power_tx, &group->power_rx);
}
static int radio_split(const Scenario *sc, const void *g)
{
    return powered(sc, g) && !radio_one(sc, g);
}
static int battery_powered(const Scenario *sc, const void *g)
{
    (void)sc;
    return !distribution_is_zero(&((const AgentGroupSpec *)g)->battery);
}
/* resume_charge's default (0: the full capacity) is left out, since 0 written is refused */
static int resume_written(const Scenario *sc, const void *g)
{
    return battery_powered(sc, g) && ((const AgentGroupSpec *)g)->resume_charge > 0;
}

/* An energy key's value: a constant as a number and its SI unit, as when the keys held one
 * number per group (so old configs are written the same); a distribution with the unit
 * after each of its values. */
static void energy_write(const Distribution *d, UnitKind unit, FILE *out)
{
    char text[24];
    snprintf(text, sizeof text, " %s", units_base_name(unit));
    distribution_write_unit(d, text, out);
}
#define ENERGY_WRITER(field, unit)                                                        \
    static void energy_write_##field(const Scenario *sc, const void *target, FILE *out)   \
    {                                                                                     \
        (void)sc;                                                                         \
        energy_write(&((const AgentGroupSpec *)target)->field, unit, out);                \
    }
ENERGY_WRITER(power_compute, UNIT_POWER)
ENERGY_WRITER(power_tx, UNIT_POWER)
ENERGY_WRITER(power_rx, UNIT_POWER)
ENERGY_WRITER(power_idle, UNIT_POWER)
ENERGY_WRITER(energy_per_byte, UNIT_ENERGY_PER_BYTE)
ENERGY_WRITER(battery, UNIT_ENERGY)
ENERGY_WRITER(charging, UNIT_POWER)

/* The values written in a distribution of an energy key: within [min, max] (what the
 * one-number keys took); a draw beyond them is refused when drawn (world_energy.c). */
static int energy_range_check(Resolver *r, const SchemaKey *k, IniEntry *e, const SchemaValue *v)
{
    if (e == NULL || v == NULL || v->dist.kind == DIST_TRACE) return HS_OK; /* a trace's rows: when loaded */
    const Distribution *d = &v->dist;
    double written[DIST_MAX_CHOICES + 2];
    int n = 0;
    if (d->kind == DIST_CHOICE)
        for (int i = 0; i < d->n_choices; i++) written[n++] = d->values[i];
    else written[n++] = d->a; /* constant, lognormal's median, pareto's scale, normal's mean */
    if (d->kind == DIST_UNIFORM) written[n++] = d->b;
    char why[200];
    for (int i = 0; i < n; i++) {
        if (written[i] >= k->min && written[i] <= k->max) continue;
        if (d->kind == DIST_CONSTANT) snprintf(why, sizeof why, "%.6g is outside [%.6g, %.6g]", written[i], k->min, k->max);
        else snprintf(why, sizeof why, "the distribution's value %.6g is outside [%.6g, %.6g]", written[i], k->min, k->max);
        return scenario_bad(r, e, "%s", why);
    }
    return HS_OK;
}

static int energy_key_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                            void *target)
{
    (void)section, (void)target;
    return energy_range_check(r, k, e, v);
}

/* power_comm is the radio's one power: both power_tx and power_rx, one draw per agent. */
static void group_power_comm_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    (void)k;
    AgentGroupSpec *g = target;
    g->power_tx = g->power_rx = v->dist;
}

/* power_tx, power_rx: in range, and agreeing with a power_comm of the same section (whose
 * row landed before: the group's field holds it). Written in the same place (both in the
 * file, both --set, both swept), a different value is a contradiction, refused rather
 * than one of the two silently winning; written in two places, the later one overrides
 * the earlier as --set overrides the file: a --set power_tx over the file's power_comm
 * changes the sending power only, a --set power_comm over the file's power_tx sets both
 * (this value then lands as power_comm's). Inherited from [agents], either overrides
 * what power_comm gave. */
static int power_way_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                           void *target)
{
    int status = energy_range_check(r, k, e, v);
    if (status != HS_OK || e == NULL || v == NULL) return status;
    const AgentGroupSpec *group = target;
    const Distribution *landed = strcmp(k->name, "power_tx") == 0 ? &group->power_tx : &group->power_rx;
    IniEntry *comm = inidoc_find(r->doc, section, "power_comm");
    if (comm == NULL || distribution_same(&v->dist, landed)) return HS_OK;
    if (comm->origin != e->origin) {
        if (comm->order > e->order) v->dist = *landed;
        return HS_OK;
    }
    char where[200], why[INIDOC_VALUE_MAX + 400];
    snprintf(why, sizeof why, "contradicts power_comm = %s (%s), which sets both power_tx and power_rx: give "
             "power_comm alone, or power_tx and power_rx", comm->value, inidoc_entry_where(comm, where, sizeof where));
    return scenario_bad(r, e, "%s", why);
}

/* An energy written as a bare number: J or Wh? Refused rather than guessed. In a
 * distribution every value must carry its unit: uniform's and normal's two, the first
 * of lognormal (median) and pareto (scale), each choice's value. */
static int energy_bare(const IniEntry *e)
{
    const char *open = strchr(e->value, '(');
    if (open == NULL) {
        char *end;
        strtod(e->value, &end);
        while (isspace((unsigned char)*end)) end++;
        return *end == '\0';
    }
    int values = strncmp(e->value, "lognormal", 9) == 0 || strncmp(e->value, "pareto", 6) == 0 ? 1 : DIST_MAX_CHOICES + 1;
    const char *p = open + 1;
    for (int i = 0; i < values && *p && *p != ')'; i++) {
        size_t len = strcspn(p, ",):");
        int unit = 0;
        for (size_t c = 0; c < len; c++) unit |= isalpha((unsigned char)p[c]) && !(p[c] == 'e' || p[c] == 'E');
        if (!unit) return 1;
        p += len;
        if (*p == ':') p += strcspn(p, ",)"); /* a choice's probability */
        if (*p == ',') p++;
    }
    return 0;
}

static int energy_unit_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                             void *target)
{
    (void)section, (void)target;
    if (e != NULL && energy_bare(e))
        return scenario_bad(r, e, "%s", "needs a unit: J, kJ, MJ, mWh, Wh or kWh (a bare number could be either)");
    return energy_range_check(r, k, e, v);
}

/* battery: with a unit; as a distribution, drawing capacities above 0 (0 is no battery). With
 * availability = markov() a spent battery's outage is cut into the process as it is drawn
 * (sim/kernel/trace_markov.h, markov_series_offline). */
static int battery_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                         void *target)
{
    int status = energy_unit_check(r, section, k, e, v, target);
    if (status != HS_OK) return status;
    if (e != NULL && v != NULL && v->dist.kind != DIST_CONSTANT &&
        !(v->dist.kind == DIST_CHOICE ? distribution_lowest(&v->dist) > 0 : v->dist.a > 0))
        return scenario_bad(r, e, "%s", "a distribution of capacities must draw positive values (0 is no battery)");
    return HS_OK;
}

/* battery_check: written only when instant, so the configs of battery runs stay what they
 * were; instant only with a battery (the group's own or the inherited one). */
static int battery_check_written(const Scenario *sc, const void *g)
{
    return battery_powered(sc, g) && ((const AgentGroupSpec *)g)->battery_check != 0;
}
static int battery_check_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                               void *target)
{
    (void)section, (void)k;
    if (e != NULL && v != NULL && v->index != 0 && distribution_is_zero(&((const AgentGroupSpec *)target)->battery))
        return scenario_bad(r, e, "%s", "is given without a battery (battery = CAPACITY in J or Wh)");
    return HS_OK;
}

/* charging: only with a battery (the group's own or the inherited one, landed before it). */
static int battery_key_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                             void *target)
{
    (void)section;
    const AgentGroupSpec *group = target;
    int status = energy_range_check(r, k, e, v);
    if (status != HS_OK) return status;
    if (e != NULL && v != NULL && !distribution_is_zero(&v->dist) && distribution_is_zero(&group->battery))
        return scenario_bad(r, e, "%s", "is given without a battery (battery = CAPACITY in J or Wh)");
    return HS_OK;
}

/* resume_charge: with a unit, with a battery, and within its capacity (the least one its
 * distribution draws); an inherited one above a group's own smaller battery is blamed on
 * that battery. */
static int resume_charge_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                               void *target)
{
    const AgentGroupSpec *group = target;
    if (e != NULL && energy_bare(e))
        return scenario_bad(r, e, "%s", "needs a unit: J, kJ, MJ, mWh, Wh or kWh (a bare number could be either)");
    (void)k;
    double resume = e != NULL && v != NULL ? v->number : group->resume_charge;
    if (!(resume > 0)) return HS_OK;
    int has_battery = !distribution_is_zero(&group->battery);
    if (e != NULL && !has_battery)
        return scenario_bad(r, e, "%s", "is given without a battery (battery = CAPACITY in J or Wh)");
    double least = distribution_lowest(&group->battery);
    if (has_battery && resume > least) {
        char why[240];
        if (group->battery.kind == DIST_CONSTANT)
            snprintf(why, sizeof why, "resume_charge (%.6g J) is above the battery's capacity (%.6g J)", resume, least);
        else
            snprintf(why, sizeof why, "resume_charge (%.6g J) is above the least capacity the battery's distribution "
                     "draws (%.6g J; normal and lognormal draw down to 0: use uniform, choice or pareto)", resume, least);
        IniEntry *at = e != NULL ? e : inidoc_find(r->doc, section, "battery");
        if (at == NULL) at = inidoc_find(r->doc, "agents", "resume_charge");
        return scenario_bad(r, at, "%s", why);
    }
    return HS_OK;
}

/* After the three link keys: a section that inherits nothing needs bandwidth, or both. */
static int group_link_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                            void *target)
{
    if (section_profiled(r, section)) {
        static const char *const links[] = {"bandwidth", "uplink", "downlink"};
        for (int i = 0; i < 3; i++) {
            IniEntry *given = inidoc_find(r->doc, section, links[i]);
            if (given) return profile_conflict(r, given);
        }
        return HS_OK;
    }
    if (scenario_is_group(section)) return HS_OK;
    int bandwidth = inidoc_find(r->doc, section, "bandwidth") != NULL;
    int both = inidoc_find(r->doc, section, "uplink") != NULL && inidoc_find(r->doc, section, "downlink") != NULL;
    return bandwidth || both ? HS_OK : scenario_missing(r, section, "bandwidth");
}

/* downlink: the link check above, then its span (scenario_span_row_check) */
static int group_downlink_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                                void *target)
{
    int status = group_link_check(r, section, k, e, v, target);
    return status != HS_OK ? status : scenario_span_row_check(r, section, k, e, v, target);
}

/* Where samples was written: its draws are checked when the agents are drawn (world.c) */
static int group_samples_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                               void *target)
{
    (void)r, (void)section, (void)k, (void)v;
    if (e) inidoc_entry_where(e, ((AgentGroupSpec *)target)->samples_where, sizeof ((AgentGroupSpec *)target)->samples_where);
    return HS_OK;
}

/* Where [data] shards was written: each agent's samples are checked against it when drawn */
static int data_shards_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                             void *target)
{
    (void)section, (void)k, (void)v, (void)target;
    if (e) inidoc_entry_where(e, r->sc->shards_where, sizeof r->sc->shards_where);
    return HS_OK;
}

/* Where batch was written: its draws are checked when the agents are drawn (world.c), and
 * a method that cannot weigh unequal batches refuses them there (scenario_batch_error) */
static int group_batch_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                             void *target)
{
    (void)r, (void)section, (void)k, (void)v;
    if (e) inidoc_entry_where(e, ((AgentGroupSpec *)target)->batch_where, sizeof ((AgentGroupSpec *)target)->batch_where);
    return HS_OK;
}

static void group_batch_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    (void)k;
    AgentGroupSpec *g = target;
    g->batch = v->dist;
    g->has_batch = 1;
}

static void group_samples_land(const SchemaKey *k, const SchemaValue *v, void *target)
{
    AgentGroupSpec *g = target;
    g->samples = v->dist;
    g->has_samples = 1;
}

/* ---- unstable links (sim/kernel/loss.c, docs/network.md#unstable-links) ----
 * loss_mode and rto matter (and are written back) only when some group loses messages,
 * so the configs, run_params rows and sweep ids of runs without loss stay what they were. */
static int lossy(const Scenario *sc, const void *t)
{
    (void)t;
    for (int g = 0; g < sc->n_groups; g++)
        if (sc->groups[g].loss > 0) return 1;
    return 0;
}
static int outaged(const Scenario *sc, const void *g)
{
    (void)sc;
    return distribution_over_time(&((const AgentGroupSpec *)g)->outage);
}
static int lossy_group(const Scenario *sc, const void *g) { (void)sc; return ((const AgentGroupSpec *)g)->loss > 0; }

/* loss > 0 only for a method whose messages are point-to-point or whose ring all-reduces
 * play their chunks as lossy messages (METHOD_LOSSY_RINGS): a method with another kind of
 * exchange would hide the loss behind silently reliable links. (Every method registered
 * today has one of the two; this guards one added without them.) */
static int loss_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                      void *target)
{
    (void)section, (void)k, (void)target;
    if (e == NULL || v == NULL || !(v->number > 0)) return HS_OK;
    const MethodOps *m = method_lookup(r->sc->method);
    if (m == NULL || (m->capabilities & (METHOD_LOSSY_LINKS | METHOD_LOSSY_RINGS))) return HS_OK;
    char why[240];
    snprintf(why, sizeof why, "method %s does not model lost messages; loss applies to the methods whose "
             "messages and rings may lose them (hetsim methods: [agents] loss)", m->name);
    return scenario_bad(r, e, "%s", why);
}

/* drop only for a method that goes on without a lost message (it would wait forever). */
static int loss_mode_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                           void *target)
{
    (void)section, (void)k, (void)target;
    r->sc->network.loss_mode_where[0] = '\0';
    if (e == NULL || v == NULL) return HS_OK;
    inidoc_entry_where(e, r->sc->network.loss_mode_where, sizeof r->sc->network.loss_mode_where);
    const MethodOps *m = method_lookup(r->sc->method);
    if (v->index != LOSS_DROP || !lossy(r->sc, NULL) || m == NULL || (m->capabilities & METHOD_DROPS_LOST))
        return HS_OK;
    char why[240];
    if (m->capabilities & METHOD_LOSSY_RINGS)
        snprintf(why, sizeof why, "method %s averages by ring all-reduce, which needs every chunk of every step; "
                 "a dropped one would stall the ring: use loss_mode = retransmit", m->name);
    else
        snprintf(why, sizeof why, "method %s waits for every message it expects, so a dropped one would stall it; "
                 "use loss_mode = retransmit (drop: hetsim methods)", m->name);
    return scenario_bad(r, e, "%s", why);
}

/* ---- the rows ---- */

#define RUN SCHEMA_IN_RUN
#define DATA SCHEMA_IN_DATA
#define MODEL SCHEMA_IN_MODEL
#define TOPOLOGY SCHEMA_IN_TOPOLOGY
#define AGENTS SCHEMA_IN_AGENTS
#define GROUP SCHEMA_IN_GROUP
#define SERVER SCHEMA_IN_SERVER
#define SERVERS SCHEMA_IN_SERVERS
#define NETWORK SCHEMA_IN_NETWORK
#define COMPRESSION SCHEMA_IN_COMPRESSION
#define BYZANTINE SCHEMA_IN_BYZANTINE
#define PRIVACY SCHEMA_IN_PRIVACY
#define DRIFT SCHEMA_IN_DRIFT
#define ANY_GROUP (AGENTS | GROUP | SERVER | SERVERS)

#define KEY(in, key, ty) .sections = (in), .name = (key), .type = SCHEMA_##ty
#define RANGE(lo, hi) .min = (lo), .max = (hi)
#define DEF(text) .fallback = (text)
#define AT(field) .offset = offsetof(Scenario, field), .size = sizeof(((Scenario *)0)->field)
/* A field of the group; ATTR(field) | SCHEMA_X adds flags to an attribute's. */
#define IN_GROUP(field) .offset = offsetof(AgentGroupSpec, field), .size = sizeof(((AgentGroupSpec *)0)->field), \
                        .flags = SCHEMA_GROUP
#define ATTR(field) IN_GROUP(field) | SCHEMA_INHERITED
#define HELP(text) .help = (text)

static const SchemaKey schema_rows[] = {
    /* [run] */
    {KEY(RUN, "name", TEXT), AT(name), .fallback_of = run_name_default, .empty = "the file's name",
     .doc_default = "the file's name", HELP("label of the run")},
    {KEY(RUN, "method", METHOD), AT(method), .flags = SCHEMA_REQUIRED, HELP("the training method (hetsim methods)")},
    {KEY(RUN, "seed", SEED), AT(seed), DEF("1"), .doc_range = "[0, 2^63)",
     HELP("seeds every random stream of the run")},
    {KEY(RUN, "rounds", INT), RANGE(1, 1000000), DEF("0"), AT(rounds), .when = has_rounds, .doc_default = "none",
     HELP("rounds to run; a round is one local epoch")},
    {KEY(RUN, "time_budget", REAL), .unit = UNIT_TIME, RANGE(1e-9, INFINITY), DEF("inf"), AT(time_budget),
     .when = has_budget, HELP("stop at the first round boundary at or after this virtual time")},
    {KEY(RUN, "target_accuracy", REAL), RANGE(0, 1), DEF("0"), AT(target_accuracy),
     HELP("stop when the evaluated accuracy reaches it (train mode; 0: none)")},
    {KEY(RUN, "mode", CHOICE), .choices = "train|timing", DEF("train"), AT(mode),
     HELP("train: real arithmetic; timing: identical timings, no arithmetic")},
    {KEY(RUN, "eval_every", INT), RANGE(1, 1000000), DEF("1"), AT(eval_every),
     HELP("rounds between evaluations in train mode")},
    {KEY(RUN, "record", CHOICE), .choices = "agents|summary", DEF("agents"), AT(record), .written = run_record_written,
     HELP("agents: a row per agent and round (agent_rounds); summary: none, only the rounds rows and the run's "
          "figures (a million agents' rows take most of the database and its writing; docs/recording.md says "
          "what a report and a plot then lack)")},
    {KEY(RUN, "threads", INT), RANGE(1, 1024), DEF("0"), AT(threads), .when = never,
     .doc_default = "the online cores (sweep: cores / jobs, at least 1; 1 per MPI rank)",
     HELP("train mode's worker threads; results do not depend on it, so runs.config leaves it out")},
    {KEY(RUN, "kernels", CHOICE), .choices = "auto|openblas|onednn|winograd", DEF("openblas"), AT(model.kernels),
     .check = run_kernels_check, .written = run_kernels_written,
     HELP("train mode's layer kernels: openblas (the reference: im2col + OpenBLAS sgemm), onednn (a CNN's conv "
          "blocks on oneDNN's direct convolutions, every linear layer on its sgemm; about 2x faster on AVX-512, equal "
          "to rounding, not bit for bit), winograd (onednn with a CNN's 5x5 conv blocks of 8+ input channels on "
          "Winograd F(4x4, 5x5), forward and backward: fewer multiplies, to rounding again) or auto "
          "(onednn for a CNN, else openblas)")},

    /* [data] */
    /* the choices in DatasetKind's order (models/model_spec.h) */
    {KEY(DATA, "dataset", CHOICE), .choices = "fashion-mnist|synthetic|cifar10|cifar100|leaf|npy",
     DEF("fashion-mnist"), AT(data.dataset),
     HELP("fashion-mnist (Debian's dataset-fashion-mnist), a synthetic Gaussian mixture, or files you have: "
          "CIFAR-10/100 binaries, LEAF JSON, NumPy .npy (docs/data.md)")},
    {KEY(DATA, "path", TEXT), AT(data.path), .fallback_of = data_path_default, .when = has_files,
     .written = path_written, .check = scenario_data_path_check, .empty = "the kind's default",
     .doc_default = "/usr/share/datasets/fashion-mnist for fashion-mnist; none for the others",
     HELP("folder of the data set's files (cifar10 in timing mode may leave it out)")},
    {KEY(DATA, "label", CHOICE), .choices = "fine|coarse", DEF("fine"), AT(data.label), .when = cifar100,
     HELP("cifar100: the 100 fine classes or the 20 coarse superclasses")},
    {KEY(DATA, "normalize", CHOICE), .choices = "none|train", DEF("none"), AT(data.normalize), .written = normalized,
     HELP("train: each channel normalised by the training set's mean and standard deviation")},
    {KEY(DATA, "augment", CHOICE), .choices = "none|crop-flip|crop|flip", DEF("none"), .land = data_augment_land,
     .write = data_augment_write, .written = augmented,
     HELP("training augmentation from each agent's stream: crop after zero padding of 4, horizontal flip")},
    {KEY(DATA, "partition", CHOICE), .choices = "iid|dirichlet|shards|domains|natural", DEF("iid"),
     AT(data.partition),
     HELP("how the training set is dealt to the agents (domains: rotated fashion-mnist domains; natural: "
          "leaf's writers)")},
    {KEY(DATA, "alpha", REAL), RANGE(1e-6, 1e6), DEF("0.5"), AT(data.alpha), HELP("Dirichlet concentration")},
    {KEY(DATA, "shards", INT), RANGE(1, 1000), DEF("2"), AT(data.shards_per_agent),
     .check = data_shards_check, HELP("shards per agent (train mode: at most each agent's samples)")},
    {KEY(DATA, "test_samples", INT), RANGE(0, 10000000), DEF("0"), AT(data.test_samples),
     .doc_range = "[0, 10^7]; fashion-mnist: at most 10000",
     HELP("held-out samples used for evaluation (0: the whole test set)")},
    {KEY(DATA, "domains", REAL_LIST), RANGE(-360, 360), DEF("0,15,30,45,60,75"), .count_min = 2,
     .count_max = DATA_MAX_DOMAINS, .few = "needs at least two domains (angles in degrees)", .when = domains,
     .check = data_domains_check, .land = data_domains_land, .write = data_domains_write,
     .doc_range = "2 to 16 distinct numbers in [-360, 360]",
     HELP("partition = domains: each domain's counter-clockwise rotation in degrees")},
    {KEY(DATA, "test_domains", REAL_LIST), RANGE(-360, 360), .count_max = DATA_MAX_DOMAINS, .when = domains,
     .fallback_of = data_test_domains_default, .check = data_test_domains_check, .land = data_test_domains_land,
     .write = data_test_domains_write, .doc_default = "the last domain",
     .doc_range = "some of the domains' angles, not all", HELP("partition = domains: the held-out domains")},
    {KEY(DATA, "lambda", REAL), RANGE(0, 1), DEF("0.1"), AT(data.lambda), .when = domains,
     HELP("partition = domains: 1 every agent holds the same mix of domains, 0 one domain each")},
    {KEY(DATA, "features", INT), RANGE(1, 1 << 20), DEF("32"), AT(data.features), .when = synthetic,
     HELP("synthetic Gaussian mixture: input size (channels x height x width when those are given)")},
    {KEY(DATA, "classes", INT), RANGE(2, DATASET_MAX_CLASSES), AT(data.classes), .fallback_of = data_classes_default,
     .when = classes_key, .doc_default = "synthetic: 10; leaf, npy: the largest label + 1",
     HELP("synthetic: classes; leaf, npy: the classes (every label below it)")},
    {KEY(DATA, "train_samples", INT), RANGE(1, 100000000), DEF("60000"), AT(data.train_samples), .when = synthetic,
     HELP("synthetic: training set size")},
    {KEY(DATA, "separation", REAL), RANGE(0, 1e6), DEF("2"), AT(data.separation), .when = synthetic,
     HELP("synthetic: distance between class means")},
    {KEY(DATA, "channels", INT), RANGE(1, 4096), DEF("1"), AT(data.channels), .when = image,
     .doc_default = "1 (none of the three: flat features)",
     HELP("synthetic: features seen as channels x height x width images (product at most 2^20)")},
    {KEY(DATA, "height", INT), RANGE(1, 4096), DEF("1"), AT(data.height), .when = image,
     .doc_default = "1 (none of the three: flat features)", HELP("synthetic: image height")},
    {KEY(DATA, "width", INT), RANGE(1, 4096), DEF("1"), AT(data.width), .when = image,
     .doc_default = "1 (none of the three: flat features)", HELP("synthetic: image width")},

    /* [model] */
    {KEY(MODEL, "arch", CHOICE), .choices = "mlp|cnn|resnet", DEF("mlp"), AT(model.arch),
     HELP("network: an MLP, a two-block CNN or a CIFAR ResNet (GroupNorm)")},
    {KEY(MODEL, "depth", INT), RANGE(8, 2 + 2 * MODEL_MAX_BLOCKS), DEF("20"), AT(model.depth), .when = resnet,
     .check = model_depth_check, .doc_range = "6n + 2 in [8, 130]: 8, 14, 20, 32, 44, 56, 110, ...",
     HELP("resnet: depth, n residual blocks per stage")},
    {KEY(MODEL, "width", INT), RANGE(1, 64), DEF("1"), AT(model.base_channels), .when = resnet,
     .land = model_width_land, .write = model_width_write,
     HELP("resnet: channel multiplier (stages of 16, 32 and 64 x width channels)")},
    {KEY(MODEL, "layers", INT_LIST), RANGE(1, 1 << 20), .count_min = 2, .count_max = MODEL_MAX_SIZES,
     .few = "needs at least an input and an output size", .when = mlp, .fallback_of = model_layers_default,
     .check = model_layers_check, .land = model_layers_land, .write = model_layers_write,
     .doc_default = "input,256,128,classes", .doc_range = "2 to 16 whole numbers in [1, 2^20]; input first, classes last",
     HELP("mlp: widths, input and output included")},
    {KEY(MODEL, "channels", INT_LIST), RANGE(1, 1 << 20), DEF("32,64"), .count_min = 2, .count_max = 2,
     .few = "needs two channel counts, e.g. 32,64", .when = cnn, .land = model_channels_land,
     .write = model_channels_write, .doc_range = "2 whole numbers in [1, 2^20]",
     HELP("cnn: the channels of its two conv+pool blocks (then linear(hidden), linear(classes))")},
    {KEY(MODEL, "kernel", INT), RANGE(1, 15), DEF("5"), AT(model.kernel), .when = cnn, .check = model_kernel_check,
     .doc_range = "odd, [1, 15]", HELP("cnn: kernel size (same padding)")},
    {KEY(MODEL, "hidden", INT), RANGE(1, 1 << 16), DEF("128"), AT(model.hidden), .when = cnn,
     HELP("cnn: hidden width")},
    {KEY(MODEL, "batch", INT), RANGE(1, SCENARIO_MAX_BATCH), DEF("64"), AT(model.batch), HELP("batch size: every agent's unless [agents] batch gives its own, and the evaluation's")},
    {KEY(MODEL, "optimizer", CHOICE), .choices = "sgd|momentum|adam|adamw", DEF("sgd"), AT(optim.kind),
     HELP("each agent's optimiser")},
    {KEY(MODEL, "lr", REAL), RANGE(0, 1e6), DEF("0.05"), AT(optim.lr), HELP("learning rate")},
    {KEY(MODEL, "momentum", REAL), RANGE(0, 0.999999), DEF("0.9"), AT(optim.momentum),
     HELP("heavy ball (optimizer = momentum)")},
    {KEY(MODEL, "nesterov", INT), RANGE(0, 1), DEF("0"), AT(optim.nesterov), HELP("1: Nesterov momentum")},
    {KEY(MODEL, "weight_decay", REAL), RANGE(0, 1e3), DEF("0"), AT(optim.weight_decay),
     HELP("L2 (sgd, momentum, adam) or decoupled (adamw) weight decay")},
    {KEY(MODEL, "beta1", REAL), RANGE(0, 0.999999), DEF("0.9"), AT(optim.beta1), HELP("adam: first moment decay")},
    {KEY(MODEL, "beta2", REAL), RANGE(0, 0.99999999), DEF("0.999"), AT(optim.beta2),
     HELP("adam: second moment decay")},
    {KEY(MODEL, "eps", REAL), RANGE(1e-30, 1), DEF("1e-8"), AT(optim.eps), HELP("adam: epsilon")},
    {KEY(MODEL, "schedule", CHOICE), .choices = "constant|step|cosine", DEF("constant"), AT(optim.schedule),
     HELP("learning-rate schedule over rounds")},
    {KEY(MODEL, "step_gamma", REAL), RANGE(0, 1), DEF("0.1"), AT(optim.step_gamma),
     HELP("schedule = step: lr is multiplied by it every step_every rounds")},
    {KEY(MODEL, "step_every", INT), RANGE(1, 1000000), DEF("10"), AT(optim.step_every),
     HELP("schedule = step: rounds between steps")},
    {KEY(MODEL, "warmup", INT), RANGE(0, 1000000), DEF("0"), AT(optim.warmup_rounds),
     HELP("rounds of linear warm-up from lr / warmup to lr")},
    {KEY(MODEL, "profile", TEXT), AT(model_profile), DEF(""), .written = has_model_profile,
     .check = model_profile_check, .empty = "the FLOP model", .doc_default = "none (the FLOP model)",
     HELP("a measured compute profile (hetsim profile; docs/cost-model.md): step times and ComDML's split "
          "fractions come from its per-layer seconds, and compute is a speed relative to its host (0.25x)")},

    /* [topology] */
    {KEY(TOPOLOGY, "graph", CHOICE_OR_FILE), .choices = "full|ring|torus|random-regular|exponential|learned",
     .suffix = ".edges", DEF("full"), AT(topology_file), .land = topology_graph_land, .write = topology_graph_write,
     .written = topology_graph_written,
     HELP("who talks to whom; a FILE.edges holds one link I J per line; learned: STL-FW (Le Bars et al., AISTATS "
          "2023) from the agents' label shares, dpsgd only (docs/topology.md)")},
    {KEY(TOPOLOGY, "degree", INT), RANGE(1, 100000), DEF("4"), AT(degree),
     .doc_range = "[1, 100000]; random-regular: below the agent count, count x degree even",
     HELP("random-regular: each agent's degree; learned: the most neighbours any agent gets (the budget)")},
    {KEY(TOPOLOGY, "weights", CHOICE_OR_FILE), .choices = "metropolis", .suffix = ".weights", DEF("metropolis"),
     AT(topology_weights_file), .land = topology_weights_land, .write = topology_weights_write,
     .written = topology_weights_given,
     HELP("the mixing matrix W: Metropolis-Hastings over the graph, or a FILE.weights of n rows of n entries "
          "(numpy.savetxt), symmetric and row-stochastic, whose nonzero entries are the graph; dpsgd only")},
    {KEY(TOPOLOGY, "fw_iterations", INT), RANGE(1, 1000000), DEF("100"), AT(fw_iterations), .when = topology_is_learned,
     HELP("learned: Frank-Wolfe steps at most (fewer when the next would break the degree budget)")},
    {KEY(TOPOLOGY, "lambda", REAL), RANGE(0, 1e6), DEF("0.1"), AT(fw_lambda), .when = topology_is_learned,
     HELP("learned: the weight of the objective's mixing term (lambda/n)||W - 11'/n||^2")},

    /* [agents], [agents.NAME], [server], [servers] */
    {KEY(AGENTS, "count", INT), RANGE(1, 10000000), AT(n_agents), .flags = SCHEMA_REQUIRED,
     HELP("number of agents")},
    {KEY(GROUP, "count", INT), RANGE(0, 10000000), IN_GROUP(count) | SCHEMA_REQUIRED,
     HELP("agents of the group, taken out of [agents] count")},
    {KEY(SERVERS, "count", INT), RANGE(1, 100000), AT(server_count), .flags = SCHEMA_REQUIRED,
     HELP("edge servers")},
    {KEY(SERVERS, "assign", CHOICE_OR_FILE), .choices = "nearest|round-robin", .suffix = ".assign",
     DEF("nearest"), AT(server_assign_file), .check = servers_assign_check, .land = servers_assign_land, .write = servers_assign_write,
     HELP("clients to edge servers: the soonest reached, i mod count, or a FILE.assign of lines I S")},
    {KEY(AGENTS, "profile", TEXT), AT(agents_profile), DEF(""), .written = has_profile, .check = scenario_profile_check,
     .empty = "none", .doc_default = "none",
     HELP("a device profile CSV (docs/data.md): row i is agent i's compute, bandwidth and latency")},
    {KEY(ANY_GROUP, "compute", DISTRIBUTION), .unit = UNIT_COMPUTE, ATTR(compute), .written = compute_written,
     .check = group_compute_check, .doc_default = "required (the agents': unless [agents] profile)", .doc_range = "> 0",
     HELP("FLOP/s of each agent; with [model] profile, its speed relative to the profiling host (0.25x)")},
    {KEY(ANY_GROUP, "bandwidth", DISTRIBUTION), .unit = UNIT_BANDWIDTH, ATTR(uplink), .when = symmetric,
     .written = bandwidth_written, .land = group_bandwidth_land, .check = scenario_span_row_check,
     .doc_default = "required unless uplink and downlink", .doc_range = "> 0, or inf",
     HELP("one symmetric link per agent (one draw for both directions)")},
    {KEY(ANY_GROUP, "uplink", DISTRIBUTION), .unit = UNIT_BANDWIDTH, ATTR(uplink), .when = asymmetric,
     .written = link_written, .land = group_uplink_land, .check = scenario_span_row_check, .doc_default = "bandwidth",
     .doc_range = "> 0, or inf", HELP("upload bandwidth")},
    {KEY(ANY_GROUP, "downlink", DISTRIBUTION), .unit = UNIT_BANDWIDTH, ATTR(downlink), .when = asymmetric,
     .written = link_written, .land = group_downlink_land, .check = group_downlink_check, .doc_default = "bandwidth",
     .doc_range = "> 0, or inf", HELP("download bandwidth")},
    {KEY(ANY_GROUP, "latency", DISTRIBUTION), .unit = UNIT_TIME, ATTR(latency) | SCHEMA_NO_TRACE, DEF("0"),
     .written = latency_written, .check = group_latency_check, .doc_range = ">= 0, finite",
     HELP("per agent; a message between two agents pays the larger")},
    {KEY(ANY_GROUP, "slowdown", SLOWDOWN), ATTR(slowdown), DEF("none"), .check = scenario_span_row_check,
     .doc_range = "none, markov(p_slow, p_recover, factor) or periodic(period, amplitude)",
     HELP("speed over time: markov: two states switched at the start of each computation, slow ones "
          "factor times longer; periodic: durations x (1 + amplitude (1 - cos 2 pi t / period) / 2)")},
    {KEY(ANY_GROUP, "jitter", REAL), RANGE(0, 10), ATTR(jitter), DEF("0"),
     HELP("each computation's duration is multiplied by exp(jitter N(0,1)) (median 1)")},
    {KEY(ANY_GROUP, "availability", AVAILABILITY), ATTR(availability), DEF("always"),
     .doc_range = "always, trace(FILE.csv) or markov(MEAN_UP, MEAN_DOWN)",
     HELP("a trace of 1 (online) and 0 (offline) over time, or markov(): online and offline for exponential "
          "durations of those means (times: 30 min), online at t = 0, each agent from its own stream")},
    {KEY(AGENTS | GROUP, "power_compute", DISTRIBUTION), .unit = UNIT_POWER, RANGE(0, 1e9), ATTR(power_compute) | SCHEMA_NO_TRACE,
     DEF("0"), .written = powered, .check = energy_key_check, .write = energy_write_power_compute,
     .doc_range = "[0, 1e9], a constant or a distribution",
     HELP("watts drawn while computing (docs/energy.md; 0 everywhere: energy not modelled)")},
    {KEY(AGENTS | GROUP, "power_comm", DISTRIBUTION), .unit = UNIT_POWER, RANGE(0, 1e9), ATTR(power_tx) | SCHEMA_NO_TRACE,
     DEF("0"), .written = radio_one, .land = group_power_comm_land, .check = energy_key_check,
     .write = energy_write_power_tx, .doc_range = "[0, 1e9], a constant or a distribution",
     HELP("watts drawn while a message the agent sends or receives transfers and it does not compute: "
          "power_tx and power_rx both (one draw per agent)")},
    {KEY(AGENTS | GROUP, "power_tx", DISTRIBUTION), .unit = UNIT_POWER, RANGE(0, 1e9), ATTR(power_tx) | SCHEMA_NO_TRACE,
     .written = radio_split, .check = power_way_check, .write = energy_write_power_tx, .doc_default = "power_comm",
     .doc_range = "[0, 1e9], a constant or a distribution",
     HELP("watts drawn while only sending (and not computing); while sending and receiving at once, the larger "
          "of power_tx and power_rx (a half-duplex radio, docs/energy.md)")},
    {KEY(AGENTS | GROUP, "power_rx", DISTRIBUTION), .unit = UNIT_POWER, RANGE(0, 1e9), ATTR(power_rx) | SCHEMA_NO_TRACE,
     .written = radio_split, .check = power_way_check, .write = energy_write_power_rx, .doc_default = "power_comm",
     .doc_range = "[0, 1e9], a constant or a distribution",
     HELP("watts drawn while only receiving (and not computing); power_tx and power_rx that differ draw apart")},
    {KEY(AGENTS | GROUP, "power_idle", DISTRIBUTION), .unit = UNIT_POWER, RANGE(0, 1e9), ATTR(power_idle) | SCHEMA_NO_TRACE,
     DEF("0"), .written = powered, .check = energy_key_check, .write = energy_write_power_idle,
     .doc_range = "[0, 1e9], a constant or a distribution",
     HELP("watts drawn while online, neither computing nor communicating (offline draws nothing)")},
    {KEY(AGENTS | GROUP, "energy_per_byte", DISTRIBUTION), .unit = UNIT_ENERGY_PER_BYTE, RANGE(0, 1),
     ATTR(energy_per_byte) | SCHEMA_NO_TRACE, DEF("0"), .written = powered, .check = energy_key_check,
     .write = energy_write_energy_per_byte, .doc_range = "[0, 1], a constant or a distribution",
     HELP("radio joules per byte the agent sends or receives, on top of power_tx and power_rx")},
    {KEY(AGENTS | GROUP, "battery", DISTRIBUTION), .unit = UNIT_ENERGY, RANGE(0, 1e15), ATTR(battery) | SCHEMA_NO_TRACE, DEF("0"),
     .written = battery_powered, .check = battery_check, .write = energy_write_battery,
     .doc_default = "none (mains powered)",
     .doc_range = "> 0 with a unit: J, kJ, MJ, mWh, Wh, kWh; a constant or a distribution",
     HELP("battery capacity, full at the start: an agent whose battery is spent goes offline (as under "
          "availability) until charged back to resume_charge")},
    {KEY(AGENTS | GROUP, "charging", DISTRIBUTION), .unit = UNIT_POWER, RANGE(0, 1e9), ATTR(charging), DEF("0"),
     .written = battery_powered, .check = battery_key_check, .write = energy_write_charging,
     .doc_range = "[0, 1e9], a constant, a distribution or trace(FILE.csv) of watts over time",
     HELP("watts put back into the battery all the time, online or not (0: a spent battery never comes back)")},
    {KEY(AGENTS | GROUP, "resume_charge", REAL), .unit = UNIT_ENERGY, RANGE(0, 1e15), ATTR(resume_charge) | SCHEMA_WRITE_UNIT | SCHEMA_OPEN_MIN, DEF("0"),
     .written = resume_written, .check = resume_charge_check,
     .edge = "must be positive (leave it out for a full battery)", .doc_default = "full (the battery's capacity)",
     .doc_range = "(0, battery] with a unit (a distribution's least capacity)",
     HELP("charge a spent battery must hold again before its agent comes back online")},
    {KEY(AGENTS | GROUP, "battery_check", CHOICE), .choices = "round|instant", ATTR(battery_check), DEF("round"),
     .written = battery_check_written, .check = battery_check_check,
     HELP("when a spent battery takes its agent offline: at the end of the round it ran out in, or at the "
          "instant its charge reaches zero (docs/energy.md)")},
    {KEY(AGENTS | GROUP, "loss", REAL), RANGE(0, 1), ATTR(loss) | SCHEMA_OPEN_MAX, DEF("0"), .written = lossy_group,
     .check = loss_check, .edge = "must be below 1 (a message lost for sure never arrives)", .doc_range = "[0, 1)",
     HELP("probability that this agent's end loses a message (each attempt); a message a->b is lost with "
          "1 - (1 - loss_a)(1 - loss_b) (docs/network.md#unstable-links)")},
    {KEY(AGENTS | GROUP, "outage", AVAILABILITY), ATTR(outage), DEF("none"), .choices = "none", .written = outaged,
     .doc_range = "none, trace(FILE.csv) or markov(MEAN_UP, MEAN_DOWN)",
     HELP("the links' state over time, a trace of 1 (up) and 0 (down) that ends up, or markov(): up and down for "
          "exponential durations of those means, up at t = 0: while an agent's links are "
          "down its messages make no progress and resume where they stopped (network model = maxmin)")},
    {KEY(AGENTS | GROUP, "samples", DISTRIBUTION), RANGE(1, SCENARIO_MAX_SAMPLES),
     ATTR(samples) | SCHEMA_NO_TRACE | SCHEMA_WHOLE, .when = own_samples, .check = group_samples_check,
     .land = group_samples_land,
     .doc_default = "the training set shared out evenly", .doc_range = "whole, [1, 10^9]",
     HELP("local training samples (train mode: all together at most the training set); draws are rounded")},
    {KEY(AGENTS | GROUP, "batch", DISTRIBUTION), RANGE(1, SCENARIO_MAX_BATCH), ATTR(batch) | SCHEMA_NO_TRACE | SCHEMA_WHOLE,
     .when = own_batch, .check = group_batch_check, .land = group_batch_land, .doc_default = "[model] batch",
     .doc_range = "whole, [1, 65536]",
     HELP("samples per local step of each agent (its step's FLOPs scale with it; an agent with fewer samples "
          "steps on all of them); draws are rounded to the nearest whole number; how each method weighs "
          "unequal batches: docs/methods.md")},

    /* [network] */
    {KEY(NETWORK, "model", CHOICE), .choices = "maxmin|fifo", DEF("maxmin"), AT(network.model),
     HELP("maxmin: every link shared by its flows by max-min fairness; fifo: the older model (one message at "
          "a time per uplink at min(uplink, downlink), downlinks never shared)")},
    {KEY(NETWORK, "uplink", CHOICE), .choices = "shared|fifo", DEF("shared"), AT(network.uplink), .when = maxmin,
     .flags = SCHEMA_RESET, HELP("maxmin: a sender's concurrent messages share its uplink, or queue")},
    {KEY(NETWORK, "backbone", REAL), .unit = UNIT_BANDWIDTH, RANGE(0, INFINITY), DEF("inf"), AT(network.backbone),
     .when = maxmin, .flags = SCHEMA_RESET | SCHEMA_OPEN_MIN | SCHEMA_WRITE_UNIT, .edge = "must be positive (or inf)",
     HELP("maxmin: a link every message also crosses (inf: none)")},
    {KEY(NETWORK, "loss_mode", CHOICE), .choices = "retransmit|drop", DEF("retransmit"), AT(network.loss_mode),
     .when = lossy, .flags = SCHEMA_RESET, .check = loss_mode_check,
     HELP("with [agents] loss: retransmit sends a lost message again rto after it would have arrived (TCP-like); "
          "drop leaves it lost and tells its receiver then (UDP-like; methods that go on without it)")},
    {KEY(NETWORK, "rto", REAL), .unit = UNIT_TIME, RANGE(0, 86400), DEF("0.2"), AT(network.rto), .when = lossy,
     .flags = SCHEMA_RESET,
     HELP("with [agents] loss: time from a lost attempt's would-be arrival to its resend (drop: to its receiver's "
          "notice); 0.2 s is Linux's minimum TCP retransmission timeout")},
    {KEY(NETWORK, "tcp", CHOICE), .choices = "none|lv08", DEF("none"), AT(network.tcp),
     HELP("lv08: SimGrid's LV08 corrections: latencies x 13.01, bandwidths x 0.97, maxmin shares weighted by "
          "1 / (latency + 20537 B / bandwidth)")},

    /* [compression] */
    {KEY(COMPRESSION, "scheme", CHOICE), .choices = "none|topk|randk|dct|slimdp|qsgd|sign", AT(compression.scheme),
     .flags = SCHEMA_REQUIRED,
     HELP("what is sent instead of dense vectors: a sparsifier (topk, randk, dct, slimdp) or a quantizer (qsgd: "
          "stochastic levels; sign: 1 bit per entry)")},
    {KEY(COMPRESSION, "ratio", REAL), RANGE(0, 1), DEF("0.01"), AT(compression.ratio), .when = sparsified,
     .flags = SCHEMA_RESET | SCHEMA_OPEN_MIN, .edge = "must be in (0, 1]", HELP("share of entries kept")},
    {KEY(COMPRESSION, "feedback", CHOICE), .choices = "none|ef21|econtrol|ef|dgc", DEF("none"),
     AT(compression.feedback), .when = compressed, .flags = SCHEMA_RESET,
     HELP("error feedback (ef and dgc: methods that accumulate)")},
    {KEY(COMPRESSION, "eta", REAL), RANGE(0, 1), DEF("0.1"), AT(compression.eta), .when = econtrol,
     .flags = SCHEMA_RESET, HELP("econtrol: feedback strength")},
    {KEY(COMPRESSION, "warm_start", INT), RANGE(0, 1), DEF("0"), AT(compression.warm_start), .when = feedback,
     .flags = SCHEMA_RESET, HELP("ef21, econtrol: 1 sends the dense vector first")},
    {KEY(COMPRESSION, "refresh", INT), RANGE(1, 1000000000), DEF("1000"), AT(compression.refresh), .when = dct,
     .flags = SCHEMA_RESET, HELP("dct: steps between threshold recomputations")},
    {KEY(COMPRESSION, "levels", INT), RANGE(1, 65535), DEF("15"), AT(compression.levels), .when = qsgd,
     .flags = SCHEMA_RESET,
     HELP("qsgd: quantization levels s per sign (7: 4 bits an entry, 127: 8 bits, sign included)")},
    {KEY(COMPRESSION, "explore", REAL), RANGE(0, 1), DEF("0.1"), AT(compression.explore), .when = slimdp,
     .flags = SCHEMA_RESET, HELP("slimdp: random share of the kept entries")},
    {KEY(COMPRESSION, "gamma", REAL), RANGE(0, 1), DEF("0.1"), AT(compression.gamma),
     .needs = METHOD_GOSSIPS_DIFFERENCES, .written = compressed, .flags = SCHEMA_RESET | SCHEMA_OPEN_MIN,
     .edge = "must be in (0, 1]", HELP("consensus step of the CHOCO-style difference gossip")},
    {KEY(COMPRESSION, "momentum", CHOICE), .choices = "aggregate|worker", DEF("aggregate"),
     AT(compression.worker_momentum), .when = compressed, .written = worker, .flags = SCHEMA_RESET,
     HELP("worker: each agent applies the [model] momentum before compressing (EF21-SGDM)")},
    {KEY(COMPRESSION, "warmup_epochs", INT), RANGE(0, 1000000), DEF("0"), AT(compression.warmup_epochs),
     .when = dgc, .flags = SCHEMA_RESET, HELP("dgc: rounds of geometrically decreasing density")},
    {KEY(COMPRESSION, "clip", REAL), RANGE(0, 1e30), DEF("0"), AT(compression.clip), .when = dgc,
     .flags = SCHEMA_RESET, HELP("dgc: global L2 clipping threshold (0: off)")},
    {KEY(COMPRESSION, "masking", INT), RANGE(0, 1), DEF("1"), AT(compression.masking), .when = dgc,
     .flags = SCHEMA_RESET, HELP("dgc: momentum factor masking")},

    /* [byzantine] */
    {KEY(BYZANTINE, "count", INT), DEF("0"), AT(byzantine.count), .limits = byzantine_count_limits,
     .doc_range = "[0, agents - 1]", HELP("Byzantine agents, drawn from the seed")},
    {KEY(BYZANTINE, "attack", CHOICE), .choices = "signflip|gaussian|alie|ipm|labelflip", DEF("signflip"),
     AT(byzantine.attack), HELP("what the Byzantine agents send")},
    {KEY(BYZANTINE, "scale", REAL), RANGE(0, 1e12), DEF("1"), AT(byzantine.scale), .when = signflip,
     .flags = SCHEMA_RESET, HELP("signflip: send -scale x own vector")},
    {KEY(BYZANTINE, "sigma", REAL), RANGE(0, 1e12), DEF("1"), AT(byzantine.sigma), .when = gaussian,
     .flags = SCHEMA_RESET, HELP("gaussian: N(0, sigma^2) per entry")},
    {KEY(BYZANTINE, "z", REAL), RANGE(0, 1e6), AT(byzantine.z), .when = alie, .flags = SCHEMA_RESET,
     .fallback_of = byzantine_z_default, .doc_default = "Baruch et al.'s z_max",
     HELP("alie: mean - z x std")},
    {KEY(BYZANTINE, "epsilon", REAL), RANGE(0, 1e12), DEF("0.1"), AT(byzantine.epsilon), .when = ipm,
     .flags = SCHEMA_RESET, HELP("ipm: -epsilon x the honest mean")},
    {KEY(BYZANTINE, "aggregator", CHOICE), .choices = "mean|median|trimmed|krum|cclip|betamle", DEF("mean"),
     AT(byzantine.aggregator), HELP("how vectors are combined")},
    {KEY(BYZANTINE, "trim", INT), AT(byzantine.trim), .when = trimmed, .flags = SCHEMA_RESET,
     .fallback_of = byzantine_count_default, .limits = byzantine_trim_limits, .doc_default = "count",
     .doc_range = "[0, (agents - 1) / 2]", HELP("trimmed: values dropped at each end per coordinate")},
    {KEY(BYZANTINE, "f", INT), AT(byzantine.f), .when = krum, .flags = SCHEMA_RESET,
     .fallback_of = byzantine_count_default, .limits = byzantine_f_limits, .doc_default = "count",
     .doc_range = "[0, agents]", HELP("krum: assumed Byzantine count")},
    {KEY(BYZANTINE, "tau", REAL), RANGE(0, 1e12), DEF("1"), AT(byzantine.tau), .when = cclip,
     .flags = SCHEMA_RESET | SCHEMA_OPEN_MIN, .edge = "must be positive", HELP("cclip: clipping radius")},
    {KEY(BYZANTINE, "rank", INT), DEF("1"), AT(byzantine.rank), .when = betamle, .flags = SCHEMA_RESET,
     .limits = byzantine_rank_limits, .doc_range = "[1, agents]", HELP("betamle: subspace dimension")},
    {KEY(BYZANTINE, "lambda", REAL), RANGE(0, 1e6), DEF("0"), AT(byzantine.lambda), .when = betamle,
     .flags = SCHEMA_RESET, HELP("betamle: weight of the pairwise terms")},
    {KEY(BYZANTINE, "iters", INT), AT(byzantine.iters), .when = iterates, .flags = SCHEMA_RESET,
     .fallback_of = byzantine_iters_default, .limits = byzantine_iters_limits,
     .doc_default = "1 (betamle: 4)", .doc_range = "[1, 1000] (betamle: [0, 1000])",
     HELP("cclip: clipping iterations per step; betamle: IRLS reweightings")},

    /* [privacy] */
    {KEY(PRIVACY, "clip", CHOICE), .choices = "none|sample|update", AT(privacy.clip), .flags = SCHEMA_REQUIRED,
     HELP("sample: every local step clips each sample's gradient and adds noise (DP-SGD); update: each "
          "client's update over its period is clipped, noise goes on the average")},
    {KEY(PRIVACY, "threshold", REAL), RANGE(0, 1e12), DEF("1"), AT(privacy.threshold), .when = clipping,
     .flags = SCHEMA_RESET | SCHEMA_OPEN_MIN, .edge = "must be positive (an L2 norm)",
     HELP("C, the L2 bound of a sample's gradient or of a client's update")},
    {KEY(PRIVACY, "noise_multiplier", REAL), RANGE(0, 1e6), DEF("0"), AT(privacy.noise_multiplier),
     .when = clipping, .flags = SCHEMA_RESET,
     HELP("sigma: Gaussian noise of std sigma x C on the sum (0: clipping only)")},
    {KEY(PRIVACY, "delta", REAL), RANGE(0, 1), DEF("1e-5"), AT(privacy.delta), .when = clipping,
     .flags = SCHEMA_RESET | SCHEMA_OPEN_MIN | SCHEMA_OPEN_MAX, .edge = "must be in (0, 1)",
     HELP("the delta of the (epsilon, delta) reported in metrics.epsilon")},

    /* [drift] */
    {KEY(DRIFT, "method", CHOICE), .choices = "none|fedprox|scaffold", AT(drift.method), .flags = SCHEMA_REQUIRED,
     HELP("fedprox: every local step adds mu (w - w_start) to its gradient (FedProx); scaffold: control variates "
          "c_i and c correct every local step by c - c_i, and every message carries its control variate too "
          "(SCAFFOLD, option II)")},
    {KEY(DRIFT, "mu", REAL), RANGE(0, 1e6), DEF("0.01"), AT(drift.mu), .when = fedprox, .flags = SCHEMA_RESET,
     HELP("fedprox: mu, the weight of the proximal term mu/2 ||w - w_start||^2")},
};

static const SchemaSection schema_section_list[] = {
    {"run", SCHEMA_IN_RUN, 0, "the method, the seed and when to stop"},
    {"data", SCHEMA_IN_DATA, 0, "the data set and how it is dealt to the agents"},
    {"model", SCHEMA_IN_MODEL, 0, "the network every agent trains, and its optimiser"},
    {"method", SCHEMA_IN_METHOD, 0, "keys of the method that runs (hetsim methods NAME); [method.NAME]: of NAME"},
    {"topology", SCHEMA_IN_TOPOLOGY, METHOD_USES_TOPOLOGY, "the graph of the methods that gossip"},
    {"agents", SCHEMA_IN_AGENTS, 0, "every agent's attributes (the defaults of the groups)"},
    {"agents.NAME", SCHEMA_IN_GROUP, 0, "a group: count agents with these attributes instead of [agents]'s"},
    {"server", SCHEMA_IN_SERVER, METHOD_USES_SERVER, "the parameter server: an agent's attributes, no data"},
    {"servers", SCHEMA_IN_SERVERS, METHOD_EDGE_SERVERS, "edge servers: count of them and how clients are given"},
    {"network", SCHEMA_IN_NETWORK, 0, "how messages share the links"},
    {"compression", SCHEMA_IN_COMPRESSION, 0, "what is sent instead of dense vectors (the methods that take it: hetsim methods --features)"},
    {"byzantine", SCHEMA_IN_BYZANTINE, 0, "attackers and robust aggregators (the methods that take them: hetsim methods --features)"},
    {"privacy", SCHEMA_IN_PRIVACY, 0, "clipping and noise, differentially private training (the methods that take them: hetsim methods --features)"},
    {"drift", SCHEMA_IN_DRIFT, 0, "client drift correction of the local steps: FedProx or SCAFFOLD (the methods that take it: hetsim methods --features)"},
    {"sweep", SCHEMA_IN_SWEEP, 0, "SECTION.KEY = v1, v2, ...: a run for every combination; repeat = seeds each"},
    {NULL, 0, 0, NULL},
};

const SchemaSection *schema_sections(void)
{
    return schema_section_list;
}

const SchemaKey *schema_keys(int *n_keys)
{
    *n_keys = (int)(sizeof schema_rows / sizeof *schema_rows);
    return schema_rows;
}

const SchemaSection *schema_section(const char *name)
{
    int group = scenario_is_group(name);
    for (const SchemaSection *s = schema_section_list; s->name; s++)
        if (group ? s->id == SCHEMA_IN_GROUP : strcmp(s->name, name) == 0) return s;
    return NULL;
}

const SchemaKey *schema_find(unsigned section_id, const char *key)
{
    for (size_t i = 0; i < sizeof schema_rows / sizeof *schema_rows; i++)
        if ((schema_rows[i].sections & section_id) && strcmp(schema_rows[i].name, key) == 0) return &schema_rows[i];
    return NULL;
}

int schema_key_names(unsigned section_id, const char **names, int size)
{
    int n = 0;
    for (size_t i = 0; i < sizeof schema_rows / sizeof *schema_rows && n < size - 1; i++)
        if (schema_rows[i].sections & section_id) names[n++] = schema_rows[i].name;
    names[n] = NULL;
    return n;
}
