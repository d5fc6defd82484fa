/* scenario_options.c — the optional sections whose valid values depend on the method and
 * the agents: [network], [compression], [byzantine], [privacy]. Resolved after [method] and
 * [agents]; the method's capabilities (MethodOps.capabilities) say what applies. */
#include "sim/scenario/scenario_resolver.h"

#include "sim/scenario/features.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int scenario_method_can(const Scenario *sc, int capability)
{
    return (method_lookup(sc->method)->capabilities & capability) != 0;
}

/* "a, b and c": the methods with a capability, for messages. */
static void scenario_methods_with(int capability, char *out, size_t size)
{
    const MethodOps *const *all = method_all();
    int total = 0, written = 0;
    for (int i = 0; all[i]; i++) total += (all[i]->capabilities & capability) != 0;
    out[0] = '\0';
    for (int i = 0; all[i]; i++) {
        if (!(all[i]->capabilities & capability)) continue;
        const char *sep = written == 0 ? "" : written == total - 1 ? " and " : ", ";
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", sep, all[i]->name);
        written++;
    }
}

/* The running method refuses feature f: "[SECTION] SETTING: method M does not take it:
 * WHY" at the section (features.h says why, once). */
static int scenario_feature_refused(Resolver *r, Feature f, const char *setting)
{
    const char *why = feature_refusal(method_lookup(r->sc->method), f);
    if (why == NULL) return HS_OK;
    char message[600];
    snprintf(message, sizeof message, "%s: not with method %s: %s", setting, r->sc->method, why);
    return scenario_section_bad(r, feature_info(f)->section, message);
}

/* A [method] choice key of the running method, as written; 0 when it has no such key. */
static int scenario_method_choice(const Scenario *sc, const char *key, const char *value)
{
    for (int i = 0; i < sc->n_params; i++)
        if (strcmp(sc->params[i].key, key) == 0) return strcmp(sc->params[i].value, value) == 0;
    return 0;
}

int scenario_feature_on(const Scenario *sc, Feature f)
{
    switch (f) {
    case FEATURE_COMPRESSION: return sc->compression.present && sc->compression.scheme != COMPRESS_NONE;
    case FEATURE_BYZANTINE:
        return sc->byzantine.present && (sc->byzantine.count > 0 || sc->byzantine.aggregator != AGGREGATOR_MEAN);
    case FEATURE_PRIVACY_SAMPLE: return sc->privacy.present && sc->privacy.clip == PRIVACY_CLIP_SAMPLE;
    case FEATURE_PRIVACY_UPDATE: return sc->privacy.present && sc->privacy.clip == PRIVACY_CLIP_UPDATE;
    case FEATURE_PRUNE: return scenario_method_choice(sc, "prune", "width");
    case FEATURE_FREEZE: return scenario_method_choice(sc, "freeze", "progressive");
    case FEATURE_DRIFT_FEDPROX: return sc->drift.present && sc->drift.method == DRIFT_FEDPROX;
    case FEATURE_DRIFT_SCAFFOLD: return sc->drift.present && sc->drift.method == DRIFT_SCAFFOLD;
    case FEATURE_COUNT: break;
    }
    return 0;
}

int scenario_batches(const Scenario *sc, int *group)
{
    int kind = SCENARIO_BATCH_MODEL, first = -1;
    double common = NAN;
    for (int g = 0; g < sc->n_groups; g++) {
        const AgentGroupSpec *spec = &sc->groups[g];
        if (spec->count == 0) continue;
        const Distribution *d = &spec->batch;
        int fixed = !spec->has_batch || d->kind == DIST_CONSTANT || (d->kind == DIST_CHOICE && d->n_choices == 1);
        double value = !spec->has_batch ? sc->model.batch : d->kind == DIST_CONSTANT ? d->a : d->values[0];
        if (!(fixed && value == sc->model.batch) && first < 0) first = g;
        if (!fixed) kind = SCENARIO_BATCH_UNEQUAL;
        else if (isnan(common)) common = value;
        else if (value != common) kind = SCENARIO_BATCH_UNEQUAL;
    }
    if (kind == SCENARIO_BATCH_MODEL && !isnan(common) && common != sc->model.batch) kind = SCENARIO_BATCH_EQUAL;
    if (group) *group = first;
    return kind;
}

int scenario_batch_error(const Scenario *sc, int group, HsDiag *diag, const char *why)
{
    const AgentGroupSpec *g = &sc->groups[group < 0 ? 0 : group];
    if (strncmp(g->batch_where, "--set ", 6) == 0)
        return hs_diag_set(diag, HS_E_INPUT, g->batch_where, 0, "method %s: %s", sc->method, why);
    char section[INIDOC_NAME_MAX + 8];
    snprintf(section, sizeof section, group <= 0 ? "agents" : "agents.%s", g->name);
    return hs_diag_set(diag, HS_E_INPUT, g->batch_where[0] ? g->batch_where : sc->file, 0, "[%s] batch: method %s: %s",
                       section, sc->method, why);
}

/* Where feature f's setting was written: its [method] key, or its section's header. */
static int scenario_feature_error(Resolver *r, Feature f, const char *why)
{
    const Scenario *sc = r->sc;
    const FeatureInfo *info = feature_info(f);
    if (strcmp(info->section, "method") != 0) return scenario_section_bad(r, info->section, why);
    for (int i = 0; i < sc->n_params; i++) {
        const MethodParam *p = &sc->params[i];
        if (strcmp(p->key, info->key) != 0) continue;
        if (strncmp(p->where, "--set ", 6) == 0) return hs_diag_set(r->diag, HS_E_INPUT, p->where, 0, "%s", why);
        return hs_diag_set(r->diag, HS_E_INPUT, p->where[0] ? p->where : sc->file, 0, "[method] %s: %s", p->key, why);
    }
    return hs_diag_set(r->diag, HS_E_INPUT, sc->file, 0, "%s", why);
}

int scenario_check_feature_pairs(Resolver *r)
{
    for (const FeaturePair *p = feature_pairs(); p->why; p++)
        if (scenario_feature_on(r->sc, p->a) && scenario_feature_on(r->sc, p->b))
            return scenario_feature_error(r, p->at, p->why);
    return HS_OK;
}

/* [network]: the link-sharing model. Keys the chosen model does not use are accepted (so a
 * sweep can vary the model) and reset to their defaults, like [compression]'s. */
int scenario_resolve_network(Resolver *r)
{
    int status = schema_read_section(r, SCHEMA_IN_NETWORK, "network", NULL);
    if (status == HS_OK) schema_reset_section(r, SCHEMA_IN_NETWORK);
    /* an outage stalls flows on the links (maxmin); fifo's closed forms have no links to stall */
    for (int g = 0; status == HS_OK && g < r->sc->n_groups; g++)
        if (distribution_over_time(&r->sc->groups[g].outage) && r->sc->network.model == NETWORK_FIFO)
            return scenario_bad(r, scenario_group_entry(r, g, "outage"), "%s",
                                "an outage stalls the flows on an agent's links, which needs [network] model = maxmin "
                                "(fifo has no links to stall)");
    return status;
}

/* [compression]: after [method] and [agents], since what is valid depends on both. Keys
 * the chosen scheme or method does not use are accepted (so a sweep can vary the scheme)
 * and reset to their defaults, so the resolved scenario and runs.config leave them out. */
int scenario_resolve_compression(Resolver *r)
{
    Scenario *sc = r->sc;
    CompressionSpec *c = &sc->compression;
    if (!inidoc_has_section(r->doc, "compression")) return HS_OK;
    c->present = 1;
    c->line = inidoc_section_line(r->doc, "compression");
    if (c->line < 0) c->line = 0;
    int status = schema_read_section(r, SCHEMA_IN_COMPRESSION, "compression", NULL);
    if (status != HS_OK) return status;
    schema_reset_section(r, SCHEMA_IN_COMPRESSION);
    if (c->scheme == COMPRESS_NONE) return HS_OK;
    char message[400], methods[200];
    static const char *const schemes[] = {"none", "topk", "randk", "dct", "slimdp", "qsgd", "sign"};
    snprintf(message, sizeof message, "scheme = %s", schemes[c->scheme]);
    if ((status = scenario_feature_refused(r, FEATURE_COMPRESSION, message)) != HS_OK) return status;
    if (scenario_method_can(sc, METHOD_GOSSIPS_DIFFERENCES | METHOD_SENDS_DIFFERENCES) && c->feedback != FEEDBACK_NONE) {
        snprintf(message, sizeof message,
                 "%s sends C(x_i - xhat_i), the difference to what its neighbours already hold (CHOCO-SGD), "
                 "which is its own error feedback: leave feedback = none", sc->method);
        return scenario_section_bad(r, "compression", message);
    }
    if (c->feedback == FEEDBACK_EF || c->feedback == FEEDBACK_DGC) {
        const IniEntry *f = inidoc_find(r->doc, "compression", "feedback");
        if (!scenario_method_can(sc, METHOD_ACCUMULATES)) {
            scenario_methods_with(METHOD_ACCUMULATES, methods, sizeof methods);
            snprintf(message, sizeof message, "ef and dgc apply to %s, not to method %s", methods, sc->method);
            return scenario_bad(r, f, "%s", message);
        }
        if (c->warm_start)
            return scenario_bad(r, inidoc_find(r->doc, "compression", "warm_start"), "%s",
                                "ef and dgc accumulate what was not sent; a dense first message has nothing to "
                                "correct (set warm_start = 0)");
    }
    if (c->feedback == FEEDBACK_DGC) {
        const IniEntry *f = inidoc_find(r->doc, "compression", "feedback");
        if (sc->optim.kind != OPTIM_SGD && sc->optim.kind != OPTIM_MOMENTUM)
            return scenario_bad(r, f, "%s",
                                "dgc applies the [model] momentum at the agents (momentum correction), so it "
                                "needs [model] optimizer = momentum or sgd");
        if (c->worker_momentum)
            return scenario_bad(r, inidoc_find(r->doc, "compression", "momentum"), "%s",
                                "dgc moves the momentum to the agents itself (momentum correction): "
                                "remove momentum = worker");
    }
    /* participation < 1 is localsgd's and qsr's error (their validate): their key */
    if (c->worker_momentum) {
        const IniEntry *m = inidoc_find(r->doc, "compression", "momentum");
        if (!scenario_method_can(sc, METHOD_WORKER_MOMENTUM)) {
            scenario_methods_with(METHOD_WORKER_MOMENTUM, methods, sizeof methods);
            snprintf(message, sizeof message,
                     "worker applies to %s only (the other methods step each agent's own optimiser "
                     "already; remove the key or set momentum = aggregate)", methods);
            return scenario_bad(r, m, "%s", message);
        }
        if (sc->optim.kind != OPTIM_MOMENTUM)
            return scenario_bad(r, m, "%s",
                                "worker moves the [model] momentum to the agents, so it needs [model] optimizer "
                                "= momentum (sgd has none to move; adam's update is not linear in the gradient)");
    }
    return HS_OK;
}

int scenario_resolve_byzantine(Resolver *r)
{
    Scenario *sc = r->sc;
    ByzantineSpec *b = &sc->byzantine;
    if (!inidoc_has_section(r->doc, "byzantine")) return HS_OK;
    b->present = 1;
    b->line = inidoc_section_line(r->doc, "byzantine");
    if (b->line < 0) b->line = 0;
    int n = sc->n_agents, status = schema_read_section(r, SCHEMA_IN_BYZANTINE, "byzantine", NULL);
    if (status != HS_OK) return status;
    schema_reset_section(r, SCHEMA_IN_BYZANTINE);
    if (b->aggregator == AGGREGATOR_TRIMMED && 2 * b->trim >= n) {
        char message[200];
        snprintf(message, sizeof message, "aggregator = trimmed drops trim values at each end of every coordinate: "
                 "needs 2 trim < %d agents, found trim = %d (it defaults to count)", n, b->trim);
        return scenario_section_bad(r, "byzantine", message);
    }
    if (b->aggregator == AGGREGATOR_KRUM && n - b->f - 2 < 1) {
        char message[200];
        snprintf(message, sizeof message, "aggregator = krum scores each vector by its n - f - 2 nearest neighbours: "
                 "needs f <= %d with %d agents, found f = %d", n - 3, n, b->f);
        return scenario_section_bad(r, "byzantine", message);
    }
    int robust = scenario_feature_on(sc, FEATURE_BYZANTINE);
    if (robust && (status = scenario_feature_refused(r, FEATURE_BYZANTINE, "Byzantine agents and robust aggregators")) != HS_OK)
        return status;
    if (robust && sc->compression.present && sc->compression.scheme != COMPRESS_NONE)
        return scenario_section_bad(r, "byzantine", "cannot be combined with [compression] (set its scheme = none)");
    return HS_OK;
}

/* [privacy]: keys clip = none does not use are accepted (so a sweep can vary clip) and
 * reset to their defaults, like [compression]'s. */
int scenario_resolve_privacy(Resolver *r)
{
    Scenario *sc = r->sc;
    PrivacySpec *p = &sc->privacy;
    if (!inidoc_has_section(r->doc, "privacy")) return HS_OK;
    p->present = 1;
    p->line = inidoc_section_line(r->doc, "privacy");
    if (p->line < 0) p->line = 0;
    int status = schema_read_section(r, SCHEMA_IN_PRIVACY, "privacy", NULL);
    if (status != HS_OK) return status;
    schema_reset_section(r, SCHEMA_IN_PRIVACY);
    if (p->clip == PRIVACY_CLIP_NONE) return HS_OK;
    Feature f = p->clip == PRIVACY_CLIP_SAMPLE ? FEATURE_PRIVACY_SAMPLE : FEATURE_PRIVACY_UPDATE;
    if ((status = scenario_feature_refused(r, f, p->clip == PRIVACY_CLIP_SAMPLE ? "clip = sample" : "clip = update")) != HS_OK)
        return status;
    if (sc->compression.present && sc->compression.scheme != COMPRESS_NONE)
        return scenario_section_bad(r, "privacy",
                                    "cannot be combined with [compression] (the clipped updates and the noise are "
                                    "dense; set its scheme = none)");
    return HS_OK;
}

int scenario_resolve_drift(Resolver *r)
{
    Scenario *sc = r->sc;
    DriftSpec *d = &sc->drift;
    if (!inidoc_has_section(r->doc, "drift")) return HS_OK;
    d->present = 1;
    d->line = inidoc_section_line(r->doc, "drift");
    if (d->line < 0) d->line = 0;
    int status = schema_read_section(r, SCHEMA_IN_DRIFT, "drift", NULL);
    if (status != HS_OK) return status;
    schema_reset_section(r, SCHEMA_IN_DRIFT);
    if (d->method == DRIFT_NONE) return HS_OK;
    Feature f = d->method == DRIFT_FEDPROX ? FEATURE_DRIFT_FEDPROX : FEATURE_DRIFT_SCAFFOLD;
    const char *setting = d->method == DRIFT_FEDPROX ? "method = fedprox" : "method = scaffold";
    if ((status = scenario_feature_refused(r, f, setting)) != HS_OK) return status;
    if (scenario_feature_on(sc, FEATURE_COMPRESSION) && sc->compression.feedback == FEEDBACK_DGC)
        return scenario_bad(r, inidoc_find(r->doc, "drift", "method"), "%s",
                            "not with [compression] feedback = dgc (DGC takes its own local steps, with its own "
                            "velocity, which the correction would bypass)");
    return HS_OK;
}
