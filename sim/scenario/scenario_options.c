/* scenario_options.c — the optional sections whose valid values depend on the method and
 * the agents: [network], [compression], [byzantine], [privacy]. Resolved after [method] and
 * [agents]; the method's capabilities (MethodOps.capabilities) say what applies. */
#include "sim/scenario/scenario_resolver.h"

#include <gsl/gsl_cdf.h>
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

/* [network]: the link-sharing model. Keys the chosen model does not use are accepted (so a
 * sweep can vary the model) and reset to their defaults, like [compression]'s. */
int scenario_resolve_network(Resolver *r)
{
    NetworkSpec *n = &r->sc->network;
    int model, uplink, tcp, status;
    if ((status = scenario_choice(r, "network", "model", "maxmin", "maxmin|fifo", &model)) ||
        (status = scenario_choice(r, "network", "uplink", "shared", "shared|fifo", &uplink)) ||
        (status = scenario_double(r, "network", "backbone", INFINITY, UNIT_BANDWIDTH, 0, INFINITY, &n->backbone)) ||
        (status = scenario_choice(r, "network", "tcp", "none", "none|lv08", &tcp)))
        return status;
    if (!(n->backbone > 0))
        return scenario_bad(r, inidoc_find(r->doc, "network", "backbone"), "%s", "must be positive (or inf)");
    n->model = (NetworkModelKind)model;
    n->uplink = (UplinkKind)uplink;
    n->tcp = (TcpKind)tcp;
    if (n->model == NETWORK_FIFO) {
        n->uplink = UPLINK_SHARED;
        n->backbone = INFINITY;
    }
    return HS_OK;
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
    if (inidoc_find(r->doc, "compression", "scheme") == NULL) return scenario_missing(r, "compression", "scheme");
    int scheme, feedback, status;
    if ((status = scenario_choice(r, "compression", "scheme", "none", "none|topk|randk|dct|slimdp", &scheme)) ||
        (status = scenario_choice(r, "compression", "momentum", "aggregate", "aggregate|worker",
                                  &c->worker_momentum)) ||
        (status = scenario_double(r, "compression", "ratio", 0.01, UNIT_PLAIN, 0, 1, &c->ratio)) ||
        (status = scenario_choice(r, "compression", "feedback", "none", "none|ef21|econtrol|ef|dgc", &feedback)) ||
        (status = scenario_double(r, "compression", "eta", 0.1, UNIT_PLAIN, 0, 1, &c->eta)) ||
        (status = scenario_int(r, "compression", "warm_start", 0, 0, 1, &c->warm_start)) ||
        (status = scenario_int(r, "compression", "refresh", 1000, 1, 1000000000, &c->refresh)) ||
        (status = scenario_double(r, "compression", "explore", 0.1, UNIT_PLAIN, 0, 1, &c->explore)) ||
        (status = scenario_double(r, "compression", "gamma", 0.1, UNIT_PLAIN, 0, 1, &c->gamma)) ||
        (status = scenario_int(r, "compression", "warmup_epochs", 0, 0, 1000000, &c->warmup_epochs)) ||
        (status = scenario_double(r, "compression", "clip", 0, UNIT_PLAIN, 0, 1e30, &c->clip)) ||
        (status = scenario_int(r, "compression", "masking", 1, 0, 1, &c->masking)))
        return status;
    c->scheme = (CompressScheme)scheme;
    c->feedback = (FeedbackKind)feedback;
    if (!(c->ratio > 0)) return scenario_bad(r, inidoc_find(r->doc, "compression", "ratio"), "%s", "must be in (0, 1]");
    if (!(c->gamma > 0)) return scenario_bad(r, inidoc_find(r->doc, "compression", "gamma"), "%s", "must be in (0, 1]");
    if (c->scheme == COMPRESS_NONE) c->feedback = FEEDBACK_NONE;
    if (c->scheme == COMPRESS_NONE) c->ratio = 0.01;
    if (c->feedback != FEEDBACK_ECONTROL) c->eta = 0.1;
    if (c->feedback == FEEDBACK_NONE) c->warm_start = 0;
    if (c->feedback != FEEDBACK_DGC) {
        c->warmup_epochs = 0;
        c->clip = 0;
        c->masking = 1;
    }
    if (c->scheme != COMPRESS_DCT) c->refresh = 1000;
    if (c->scheme != COMPRESS_SLIMDP) c->explore = 0.1;
    if (!scenario_method_can(sc, METHOD_GOSSIPS_DIFFERENCES)) c->gamma = 0.1;
    /* Dense, worker-side heavy ball is the same arithmetic as heavy ball on the mean
     * (linearity), so scheme = none keeps the dense path and drops the key. */
    if (c->scheme == COMPRESS_NONE) c->worker_momentum = 0;
    if (c->scheme == COMPRESS_NONE) return HS_OK;
    char message[400], methods[200];
    if (!scenario_method_can(sc, METHOD_COMPRESSES)) {
        static const char *const schemes[] = {"none", "topk", "randk", "dct", "slimdp"};
        scenario_methods_with(METHOD_COMPRESSES, methods, sizeof methods);
        snprintf(message, sizeof message,
                 "scheme = %s: compression applies to %s, not to method %s "
                 "(remove the section or set scheme = none)", schemes[scheme], methods, sc->method);
        return scenario_section_bad(r, "compression", message);
    }
    if (scenario_method_can(sc, METHOD_GOSSIPS_DIFFERENCES) && c->feedback != FEEDBACK_NONE) {
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
    const MethodParam *participation = scenario_param(sc, "participation");
    if (participation && participation->number < 1)
        return scenario_section_bad(r, "compression",
                                    "compressed model deltas need every agent to average every period: "
                                    "set [method] participation = 1");
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

/* Baruch et al.'s z_max for n agents of which m attack: s = floor(n/2 + 1) - m and
 * z = Phi^-1((n - s) / n), clamped to [0, Phi^-1(0.999)] where the formula leaves (0, 1). */
static double scenario_alie_z(int n, int m)
{
    int s = n / 2 + 1 - m;
    double p = (double)(n - s) / n;
    if (p < 0.5) p = 0.5;
    if (p > 0.999) p = 0.999;
    return gsl_cdf_ugaussian_Pinv(p);
}

int scenario_resolve_byzantine(Resolver *r)
{
    Scenario *sc = r->sc;
    ByzantineSpec *b = &sc->byzantine;
    if (!inidoc_has_section(r->doc, "byzantine")) return HS_OK;
    b->present = 1;
    b->line = inidoc_section_line(r->doc, "byzantine");
    if (b->line < 0) b->line = 0;
    int n = sc->n_agents, attack, aggregator, status;
    if ((status = scenario_int(r, "byzantine", "count", 0, 0, n - 1, &b->count)) ||
        (status = scenario_choice(r, "byzantine", "attack", "signflip", "signflip|gaussian|alie|ipm|labelflip",
                                  &attack)) ||
        (status = scenario_double(r, "byzantine", "scale", 1, UNIT_PLAIN, 0, 1e12, &b->scale)) ||
        (status = scenario_double(r, "byzantine", "sigma", 1, UNIT_PLAIN, 0, 1e12, &b->sigma)) ||
        (status = scenario_double(r, "byzantine", "z", scenario_alie_z(n, b->count), UNIT_PLAIN, 0, 1e6, &b->z)) ||
        (status = scenario_double(r, "byzantine", "epsilon", 0.1, UNIT_PLAIN, 0, 1e12, &b->epsilon)) ||
        (status = scenario_choice(r, "byzantine", "aggregator", "mean", "mean|median|trimmed|krum|cclip|betamle",
                                  &aggregator)) ||
        (status = scenario_int(r, "byzantine", "trim", b->count, 0, (n - 1) / 2, &b->trim)) ||
        (status = scenario_int(r, "byzantine", "f", b->count, 0, n, &b->f)) ||
        (status = scenario_double(r, "byzantine", "tau", 1, UNIT_PLAIN, 0, 1e12, &b->tau)) ||
        /* cclip: clipping iterations (1 by default); betamle: IRLS reweightings after the
         * flag mean (4 by default, as the authors' flag_median.py; 0 is the flag mean) */
        (status = scenario_int(r, "byzantine", "iters", aggregator == AGGREGATOR_BETAMLE ? 4 : 1,
                               aggregator == AGGREGATOR_BETAMLE ? 0 : 1, 1000, &b->iters)) ||
        (status = scenario_int(r, "byzantine", "rank", 1, 1, n, &b->rank)) ||
        (status = scenario_double(r, "byzantine", "lambda", 0, UNIT_PLAIN, 0, 1e6, &b->lambda)))
        return status;
    b->attack = (AttackKind)attack;
    b->aggregator = (AggregatorKind)aggregator;
    if (!(b->tau > 0)) return scenario_bad(r, inidoc_find(r->doc, "byzantine", "tau"), "%s", "must be positive");
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
    if (b->attack != ATTACK_SIGNFLIP) b->scale = 1;
    if (b->attack != ATTACK_GAUSSIAN) b->sigma = 1;
    if (b->attack != ATTACK_ALIE) b->z = scenario_alie_z(n, b->count);
    if (b->attack != ATTACK_IPM) b->epsilon = 0.1;
    if (b->aggregator != AGGREGATOR_TRIMMED) b->trim = b->count;
    if (b->aggregator != AGGREGATOR_KRUM) b->f = b->count;
    if (b->aggregator != AGGREGATOR_CCLIP) b->tau = 1;
    if (b->aggregator != AGGREGATOR_CCLIP && b->aggregator != AGGREGATOR_BETAMLE) b->iters = 1;
    if (b->aggregator != AGGREGATOR_BETAMLE) {
        b->rank = 1;
        b->lambda = 0;
    }
    int robust = b->count > 0 || b->aggregator != AGGREGATOR_MEAN;
    if (robust && !scenario_method_can(sc, METHOD_ROBUST)) {
        char message[300], methods[200];
        scenario_methods_with(METHOD_ROBUST, methods, sizeof methods);
        snprintf(message, sizeof message, "Byzantine agents and robust aggregators apply to %s, "
                 "not to method %s", methods, sc->method);
        return scenario_section_bad(r, "byzantine", message);
    }
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
    if (inidoc_find(r->doc, "privacy", "clip") == NULL) return scenario_missing(r, "privacy", "clip");
    int clip, status;
    if ((status = scenario_choice(r, "privacy", "clip", "none", "none|sample|update", &clip)) ||
        (status = scenario_double(r, "privacy", "threshold", 1, UNIT_PLAIN, 0, 1e12, &p->threshold)) ||
        (status = scenario_double(r, "privacy", "noise_multiplier", 0, UNIT_PLAIN, 0, 1e6, &p->noise_multiplier)) ||
        (status = scenario_double(r, "privacy", "delta", 1e-5, UNIT_PLAIN, 0, 1, &p->delta)))
        return status;
    p->clip = (PrivacyClip)clip;
    if (!(p->threshold > 0))
        return scenario_bad(r, inidoc_find(r->doc, "privacy", "threshold"), "%s", "must be positive (an L2 norm)");
    if (!(p->delta > 0 && p->delta < 1))
        return scenario_bad(r, inidoc_find(r->doc, "privacy", "delta"), "%s", "must be in (0, 1)");
    if (p->clip == PRIVACY_CLIP_NONE) {
        p->threshold = 1;
        p->noise_multiplier = 0;
        p->delta = 1e-5;
        return HS_OK;
    }
    char message[400], methods[200];
    if (!scenario_method_can(sc, METHOD_PRIVATE)) {
        scenario_methods_with(METHOD_PRIVATE, methods, sizeof methods);
        snprintf(message, sizeof message,
                 "clipping and noise apply to %s, not to method %s (remove the section or set clip = none)", methods,
                 sc->method);
        return scenario_section_bad(r, "privacy", message);
    }
    if (sc->compression.present && sc->compression.scheme != COMPRESS_NONE)
        return scenario_section_bad(r, "privacy",
                                    "cannot be combined with [compression] (the clipped updates and the noise are "
                                    "dense; set its scheme = none)");
    return HS_OK;
}
