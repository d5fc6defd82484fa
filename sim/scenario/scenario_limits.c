/* scenario_limits.c — [method] values whose range depends on other sections (the agent
 * count, the model), checked once those are resolved: issue 28 class 1. A method used to
 * clamp such a value when it ran (ripples' group_size to the agent count, divshare's
 * degree to the other agents and its fragments to the parameters), so runs.config said
 * one thing and the run did another; now the row carries a `limits` hook (schema.h), the
 * value is refused at the line that wrote it, and the method uses it as written. Local
 * steps a round must hold (SCHEMA_WITHIN_ROUND rows) wait for the agents' samples, so
 * world_build checks them (scenario_check_round_keys). See docs/limits.md for every site
 * audited. */
#include "sim/scenario/scenario_resolver.h"

#include "models/model_spec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void scenario_limit_agents(const Scenario *sc, double *min, double *max)
{
    (void)min;
    if (*max > sc->n_agents) *max = sc->n_agents;
}

void scenario_limit_other_agents(const Scenario *sc, double *min, double *max)
{
    (void)min;
    if (*max > sc->n_agents - 1) *max = sc->n_agents - 1;
}

void scenario_limit_params(const Scenario *sc, double *min, double *max)
{
    (void)min;
    ModelProfile profile;
    if (model_profile(&sc->model, &profile) == HS_OK && *max > profile.total_params) *max = profile.total_params;
}

/* The smallest share with floor(share x n + 0.5) >= 1, to the last bit (what the method
 * computes, so the check and the run cannot disagree at the edge). */
void scenario_limit_share_of_agents(const Scenario *sc, double *min, double *max)
{
    (void)max;
    double n = sc->n_agents, share = 0.5 / n;
    while (floor(share * n + 0.5) < 1) share = nextafter(share, INFINITY);
    while (floor(nextafter(share, 0) * n + 0.5) >= 1) share = nextafter(share, 0);
    if (share > *min) *min = share;
}

/* The value row k landed in the method's key struct, as a number; 0 when it has no
 * number to bound (`epoch`, `none`, the word of a WORD_OR_REAL row). */
static int scenario_limits_value(const SchemaKey *k, const unsigned char *keys, double *value)
{
    if (k->type == SCHEMA_INT || k->type == SCHEMA_STEPS || k->type == SCHEMA_CHOICE) {
        int whole;
        memcpy(&whole, keys + k->offset, sizeof whole);
        *value = whole;
        return !(k->type == SCHEMA_STEPS && whole == 0);
    }
    memcpy(value, keys + k->offset, sizeof *value);
    return isfinite(*value);
}

int scenario_check_method_limits(Resolver *r)
{
    const Scenario *sc = r->sc;
    const MethodOps *ops = method_lookup(sc->method);
    int i = 0;
    for (const SchemaKey *k = ops->keys; k && k->name; k++, i++) {
        double value, min = k->min, max = k->max;
        if (k->limits == NULL || !scenario_limits_value(k, sc->method_keys, &value)) continue;
        k->limits(sc, &min, &max);
        int open_min = (k->flags & SCHEMA_OPEN_MIN) && min == k->min, open_max = (k->flags & SCHEMA_OPEN_MAX) && max == k->max;
        if ((open_min ? value > min : value >= min) && (open_max ? value < max : value <= max)) continue;
        const MethodParam *p = &sc->params[i];
        char here[96]; /* 6 digits: the exact edge may be an ulp off a round number (the share's) */
        if (min > max) snprintf(here, sizeof here, "empty");
        else snprintf(here, sizeof here, "%s%.6g, %.6g%s", open_min ? "(" : "[", min, max, open_max ? ")" : "]");
        return scenario_key_error(sc, sc->method_keys + k->offset, r->diag, "%s must be in %s, here %s%s", p->value,
                                  k->doc_range ? k->doc_range : "its range", here,
                                  p->where[0] ? "" : " (the default: set it)");
    }
    return HS_OK;
}

int scenario_check_round_keys(const Scenario *sc, int round_steps, HsDiag *diag)
{
    const MethodOps *ops = method_lookup(sc->method);
    int i = 0;
    for (const SchemaKey *k = ops->keys; k && k->name; k++, i++) {
        double value;
        if (!(k->flags & SCHEMA_WITHIN_ROUND) || !scenario_limits_value(k, sc->method_keys, &value) ||
            value <= round_steps)
            continue;
        return scenario_key_error(sc, sc->method_keys + k->offset, diag,
                                  "%s local steps, but a round holds %d (one global epoch: ceil(mean samples / "
                                  "batch)), and a period never crosses a round's end%s",
                                  sc->params[i].value, round_steps, sc->params[i].where[0] ? "" : " (the default: set it)");
    }
    return HS_OK;
}
