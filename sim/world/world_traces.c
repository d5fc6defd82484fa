/* world_traces.c — the per-group attribute traces of a run (sim/world/world_traces.h):
 * one file per group and attribute, loaded once per run; moved here from the engine,
 * which now receives the series as node attributes (sim/kernel/engine.h). */
#include "sim/world/world_traces.h"

#include "sim/kernel/trace_markov.h"
#include "sim/kernel/rng.h"

#include <stdlib.h>
#include <string.h>

/* Loads the traces of one attribute: one file per group that uses one. */
static int world_traces_attribute(const Scenario *sc, World *world, WorldTraces *wt, int attribute,
                                  const TraceSeries ***per_agent, HsDiag *diag)
{
    int n = world_nodes(world);
    /* the server's attributes are groups[n_groups] (a trace names it `server`) */
    int n_groups = sc->n_groups + (world->n_servers > 0);
    for (int g = 0; g < n_groups; g++) {
        const AgentGroupSpec *spec = &sc->groups[g];
        const Distribution *d = attribute == 0 ? &spec->compute : attribute == 1 ? &spec->uplink
                              : attribute == 2 ? &spec->downlink : attribute == 3 ? &spec->availability
                              : attribute == SCENARIO_TRACE_OUTAGE ? &spec->outage : &spec->charging;
        /* the server's group is zeroed but for its own keys: outage and charging are agents' keys */
        if ((attribute == SCENARIO_TRACE_OUTAGE || attribute == SCENARIO_TRACE_CHARGING) && g >= sc->n_groups) continue;
        if (d->kind != DIST_TRACE) continue;
        if (*per_agent == NULL && (*per_agent = calloc((size_t)n, sizeof **per_agent)) == NULL) return HS_E_NOMEM;
        char *needed = calloc((size_t)n, 1);
        Trace *grown = realloc(wt->traces, (size_t)(wt->n_traces + 1) * sizeof *wt->traces);
        if (needed == NULL || grown == NULL) {
            free(needed);
            if (grown) wt->traces = grown;
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        }
        wt->traces = grown;
        /* the loader the resolver checked this trace with (its nodes are numbered as
         * world_build numbers them), so the two cannot disagree */
        int status = scenario_trace_load(sc, g, attribute, needed, &wt->traces[wt->n_traces], diag);
        if (status != HS_OK) {
            free(needed);
            return status;
        }
        Trace *t = &wt->traces[wt->n_traces++];
        for (int i = 0; i < n; i++)
            if (needed[i]) {
                (*per_agent)[i] = &t->series[i];
                double v = trace_value(&t->series[i], 0);
                if (attribute == 0) world->agents[i].compute = v;
                if (attribute == 1) world->agents[i].uplink = v;
                if (attribute == 2 || (attribute == 1 && spec->symmetric_link)) world->agents[i].downlink = v;
            }
        if (attribute == 1 && spec->symmetric_link) {
            if (wt->downlink == NULL && (wt->downlink = calloc((size_t)n, sizeof *wt->downlink)) == NULL) {
                free(needed);
                return HS_E_NOMEM;
            }
            for (int i = 0; i < n; i++)
                if (needed[i]) wt->downlink[i] = &t->series[i];
        }
        free(needed);
    }
    return HS_OK;
}

/* availability or outage = markov(): a process per node of each group that has one, from
 * the node's stream (seed, node, purpose); nodes are numbered as world_build numbers them
 * ([agents], each group in order, then the servers). A run without one draws nothing. */
static int world_traces_markov(const Scenario *sc, World *world, WorldTraces *wt, int attribute,
                               const TraceSeries ***per_node, TraceSeries **owned, HsDiag *diag)
{
    int n = world_nodes(world), n_groups = sc->n_groups + (world->n_servers > 0), first = 0;
    uint64_t purpose = attribute == SCENARIO_TRACE_OUTAGE ? RNG_PURPOSE_OUTAGE : RNG_PURPOSE_AVAILABILITY;
    for (int g = 0; g < n_groups; first += g < sc->n_groups ? sc->groups[g].count : 0, g++) {
        const AgentGroupSpec *spec = &sc->groups[g];
        const Distribution *d = attribute == SCENARIO_TRACE_OUTAGE ? &spec->outage : &spec->availability;
        if (attribute == SCENARIO_TRACE_OUTAGE && g >= sc->n_groups) continue; /* an agents' key */
        if (d->kind != DIST_MARKOV) continue;
        if (*per_node == NULL && (*per_node = calloc((size_t)n, sizeof **per_node)) == NULL) return HS_E_NOMEM;
        if (*owned == NULL && (*owned = calloc((size_t)n, sizeof **owned)) == NULL) return HS_E_NOMEM;
        wt->n_nodes = n;
        int count = g < sc->n_groups ? spec->count : world->n_servers;
        for (int i = first; i < first + count && i < n; i++) {
            int status = markov_series_init(&(*owned)[i], d->a, d->b, sc->seed, (uint64_t)i, purpose, diag);
            if (status != HS_OK) return hs_diag_set(diag, status, NULL, 0, "out of memory for markov() processes");
            (*per_node)[i] = &(*owned)[i];
        }
    }
    return HS_OK;
}

int world_traces_load(const Scenario *sc, World *world, WorldTraces *t, HsDiag *diag)
{
    memset(t, 0, sizeof *t);
    int status;
    if ((status = world_traces_markov(sc, world, t, SCENARIO_TRACE_AVAILABILITY, &t->availability,
                                      &t->markov_availability, diag)) ||
        (status = world_traces_markov(sc, world, t, SCENARIO_TRACE_OUTAGE, &t->outage, &t->markov_outage, diag)))
        return status;
    if ((status = world_traces_attribute(sc, world, t, 0, &t->compute, diag)) ||
        (status = world_traces_attribute(sc, world, t, 1, &t->uplink, diag)) ||
        (status = world_traces_attribute(sc, world, t, 2, &t->downlink, diag)) ||
        (status = world_traces_attribute(sc, world, t, 3, &t->availability, diag)) ||
        (status = world_traces_attribute(sc, world, t, SCENARIO_TRACE_OUTAGE, &t->outage, diag)) ||
        (status = world_traces_attribute(sc, world, t, SCENARIO_TRACE_CHARGING, &t->charging, diag)))
        return status;
    return HS_OK;
}

void world_traces_free(WorldTraces *t)
{
    if (t == NULL) return;
    for (int i = 0; i < t->n_traces; i++) trace_free(&t->traces[i]);
    free(t->traces);
    for (int i = 0; i < t->n_nodes; i++) {
        if (t->markov_availability) markov_series_free(&t->markov_availability[i]);
        if (t->markov_outage) markov_series_free(&t->markov_outage[i]);
    }
    free(t->markov_availability);
    free(t->markov_outage);
    free(t->compute);
    free(t->uplink);
    free(t->downlink);
    free(t->availability);
    free(t->outage);
    free(t->charging);
    memset(t, 0, sizeof *t);
}
