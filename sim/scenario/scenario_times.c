/* scenario_times.c — virtual time stays finite (issue 28, class 6). A compute or a
 * bandwidth so small, or a latency so large, that one step or one message takes longer
 * than SCENARIO_SPAN_MAX used to pass validation: the run then ended `done` with times
 * of 1e307 s and idle_s = Inf, or failed mid-run blaming an "availability trace" the
 * scenario does not have, after the database was written. Here every value a key bounds
 * is checked at resolution, at the key: a constant, a choice's values, a uniform's ends,
 * a pareto's scale (its lowest draw), a trace's rows, and a slowdown's worst factor with
 * the group's lowest compute. A normal or lognormal has no such bound; world_build checks
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

/* Group g's compute (lowest bound, and with its slowdown), links and latency. */
static int scenario_check_group_spans(Resolver *r, const ScenarioSpans *spans, int g)
{
    const AgentGroupSpec *spec = &r->sc->groups[g];
    char why[400];
    double factor = scenario_slowdown_worst(&spec->slowdown);
    double compute = scenario_dist_worst(&spec->compute, 0);
    if (spec->compute.kind != DIST_TRACE && compute > 0) {
        if (scenario_span_check(spans, SCENARIO_SPAN_COMPUTE, compute, 1, why, sizeof why) != HS_OK)
            return scenario_span_bad(r, scenario_group_entry(r, g, "compute"), why);
        if (scenario_span_check(spans, SCENARIO_SPAN_COMPUTE, compute, factor, why, sizeof why) != HS_OK)
            return scenario_span_bad(r, scenario_group_entry(r, g, "slowdown"), why);
    }
    static const char *const links[] = {"uplink", "downlink"};
    for (int k = 0; k < 2; k++) {
        const Distribution *d = k == 0 ? &spec->uplink : &spec->downlink;
        double worst = scenario_dist_worst(d, 0);
        if (d->kind != DIST_TRACE && worst > 0 &&
            scenario_span_check(spans, SCENARIO_SPAN_LINK, worst, 1, why, sizeof why) != HS_OK)
            return scenario_span_bad(r, scenario_group_entry(r, g, links[k]), why);
    }
    double latency = scenario_dist_worst(&spec->latency, 1);
    if (scenario_span_check(spans, SCENARIO_SPAN_LATENCY, latency, 1, why, sizeof why) != HS_OK)
        return scenario_span_bad(r, scenario_group_entry(r, g, "latency"), why);
    return HS_OK;
}

int scenario_check_spans(Resolver *r)
{
    const Scenario *sc = r->sc;
    ScenarioSpans spans;
    scenario_spans(sc, &spans);
    if (spans.step_flops <= 0) return HS_OK;
    int n_groups = sc->n_groups + (sc->has_server ? 1 : 0);
    for (int g = 0; g < n_groups; g++) {
        int status = scenario_check_group_spans(r, &spans, g);
        if (status != HS_OK) return status;
    }
    return HS_OK;
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
