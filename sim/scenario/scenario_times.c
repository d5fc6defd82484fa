/* scenario_times.c — virtual time stays finite (issue 28, class 6). A compute or a
 * bandwidth so small, or a latency so large, that one step or one message takes longer
 * than SCENARIO_SPAN_MAX used to pass validation: the run then ended `done` with times
 * of 1e307 s and idle_s = Inf, or failed mid-run blaming an "availability trace" the
 * scenario does not have, after the database was written. Here every value a key bounds
 * is checked at resolution, at the key: a constant, a choice's values, a uniform's ends,
 * a pareto's scale (its lowest draw), and a slowdown's worst factor with the group's
 * lowest compute, by the `check` hook of those schema rows (scenario_span_row_check:
 * [model] is resolved before any group); a trace's rows once the traces are loaded
 * (scenario_check_trace_spans). A normal or lognormal has no such bound; world_build checks
 * each of its draws with scenario_span_check (sim/world/world.c). */
#include "sim/scenario/scenario_resolver.h"

#include "sim/kernel/trace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void scenario_spans(const Scenario *sc, ScenarioSpans *out)
{
    memset(out, 0, sizeof *out);
    ModelProfile profile;
    if (model_profile(&sc->model, &profile) != HS_OK) return;
    out->batch = sc->model.batch;
    out->step_flops = model_profile_step_flops(&profile, sc->model.batch);
    out->model_bytes = model_profile_bytes(&profile);
    out->compute_scale = sc->profile_rate > 0 ? sc->profile_rate : 1.0;
}

double scenario_slowdown_worst(const Slowdown *s)
{
    if (s->kind == SLOWDOWN_MARKOV) return s->factor;
    if (s->kind == SLOWDOWN_PERIODIC) return 1.0 + s->amplitude;
    return 1.0;
}

int scenario_span_check(const ScenarioSpans *spans, ScenarioSpanKind kind, double value, double factor, char *why,
                        size_t size)
{
    double span;
    switch (kind) {
    case SCENARIO_SPAN_COMPUTE:
        span = spans->step_flops / value * factor;
        if (span <= SCENARIO_SPAN_MAX) return HS_OK;
        char slowed[64] = "";
        if (factor > 1) snprintf(slowed, sizeof slowed, ", slowed down %.6g times,", factor);
        snprintf(why, size,
                 "%.6g FLOP/s%s makes one training step of [model] (%.6g FLOP, batch %d) take %.3g s, more than "
                 "the %.0e s a step may take (virtual time would overflow)",
                 value, slowed, spans->step_flops, spans->batch, span, SCENARIO_SPAN_MAX);
        return HS_E_INPUT;
    case SCENARIO_SPAN_LINK:
        span = spans->model_bytes / value;
        if (span <= SCENARIO_SPAN_MAX) return HS_OK;
        snprintf(why, size,
                 "%.6g bytes/s makes one transfer of the model (%.6g bytes) take %.3g s, more than the %.0e s a "
                 "message may take (virtual time would overflow)",
                 value, spans->model_bytes, span, SCENARIO_SPAN_MAX);
        return HS_E_INPUT;
    default:
        if (value <= SCENARIO_SPAN_MAX) return HS_OK;
        snprintf(why, size, "a latency of %.3g s is more than the %.0e s a message may take (virtual time would "
                 "overflow)", value, SCENARIO_SPAN_MAX);
        return HS_E_INPUT;
    }
}

/* The value of d that takes longest (the lowest compute or bandwidth, the highest
 * latency) when d bounds it; 0 when it does not (normal, lognormal; pareto's latency). */
static double scenario_dist_worst(const Distribution *d, int highest)
{
    switch (d->kind) {
    case DIST_CONSTANT: return d->a;
    case DIST_UNIFORM: return highest ? d->b : d->a;
    case DIST_PARETO: return highest ? 0 : d->a;
    case DIST_CHOICE: {
        double worst = d->values[0];
        for (int i = 1; i < d->n_choices; i++)
            if (highest ? d->values[i] > worst : d->values[i] < worst) worst = d->values[i];
        return worst;
    }
    default: return 0;
    }
}

static int scenario_span_bad(Resolver *r, const IniEntry *e, const char *why)
{
    if (e != NULL) return scenario_bad(r, e, "%s", why);
    return hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, 0, "%s", why);
}

int scenario_span_row_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                            void *target)
{
    const AgentGroupSpec *group = target;
    int slowdown = k->type == SCHEMA_SLOWDOWN;
    /* an inherited value is [agents]'s, checked there against the same [model]; only a
     * slowdown combines with the group's own compute */
    if (v == NULL && !slowdown) return HS_OK;
    ScenarioSpans spans;
    scenario_spans(r->sc, &spans);
    if (spans.step_flops <= 0) return HS_OK;
    char why[400];
    if (slowdown) {
        double compute = group->compute.kind == DIST_TRACE ? 0 : scenario_dist_worst(&group->compute, 0);
        compute *= spans.compute_scale; /* FLOP/s from a relative speed ([model] profile) */
        double factor = scenario_slowdown_worst(v ? &v->slowdown : &group->slowdown);
        if (compute <= 0 || scenario_span_check(&spans, SCENARIO_SPAN_COMPUTE, compute, factor, why, sizeof why) == HS_OK)
            return HS_OK;
        /* an inherited slowdown: at [agents]'s */
        return scenario_span_bad(r, e || !scenario_is_group(section) ? e : inidoc_find(r->doc, "agents", k->name), why);
    }
    const Distribution *d = &v->dist;
    if (d->kind == DIST_TRACE) return HS_OK; /* its rows: scenario_check_traces */
    ScenarioSpanKind kind = k->unit == UNIT_COMPUTE ? SCENARIO_SPAN_COMPUTE
                            : k->unit == UNIT_BANDWIDTH ? SCENARIO_SPAN_LINK : SCENARIO_SPAN_LATENCY;
    double worst = scenario_dist_worst(d, kind == SCENARIO_SPAN_LATENCY);
    if (kind == SCENARIO_SPAN_COMPUTE) worst *= spans.compute_scale;
    if (kind != SCENARIO_SPAN_LATENCY && !(worst > 0)) return HS_OK;
    if (scenario_span_check(&spans, kind, worst, 1, why, sizeof why) == HS_OK) return HS_OK;
    return scenario_span_bad(r, e, why);
}

int scenario_check_trace_spans(Resolver *r, int g, int attribute, const Trace *trace, const char *needed,
                               const IniEntry *e)
{
    const Scenario *sc = r->sc;
    ScenarioSpans spans;
    scenario_spans(sc, &spans);
    if (spans.step_flops <= 0) return HS_OK;
    double lowest = INFINITY;
    int agent = -1;
    for (int i = 0; i < trace->n_agents; i++) {
        const TraceSeries *s = &trace->series[i];
        for (int k = 0; needed[i] && k < s->n; k++)
            if (s->values[k] < lowest) lowest = s->values[k], agent = i;
    }
    if (agent < 0) return HS_OK;
    int compute = attribute == SCENARIO_TRACE_COMPUTE;
    double factor = compute ? scenario_slowdown_worst(&sc->groups[g].slowdown) : 1;
    char why[400], message[600];
    int status = scenario_span_check(&spans, compute ? SCENARIO_SPAN_COMPUTE : SCENARIO_SPAN_LINK, lowest, 1, why,
                                     sizeof why);
    const IniEntry *at = e;
    if (status == HS_OK && compute &&
        (status = scenario_span_check(&spans, SCENARIO_SPAN_COMPUTE, lowest, factor, why, sizeof why)) != HS_OK)
        at = scenario_group_entry(r, g, "slowdown");
    if (status == HS_OK) return HS_OK;
    const AgentGroupSpec *spec = &sc->groups[g];
    const Distribution *d = compute ? &spec->compute : attribute == SCENARIO_TRACE_UPLINK ? &spec->uplink : &spec->downlink;
    snprintf(message, sizeof message, "%s: node %d's lowest value: %s", d->path, agent, why);
    return scenario_span_bad(r, at, message);
}
