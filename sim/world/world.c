/* world.c — per-agent draws. One taus2 stream is re-seeded per agent instead of
 * allocating 100,000 generators. */
#include "sim/world/world.h"

#include "models/partition.h"
#include "sim/world/roles.h"
#include "sim/kernel/rng.h"

#include <math.h>
#include <stdlib.h>

/* A draw that makes one step or one message outlast SCENARIO_SPAN_MAX (a lognormal that
 * draws 1e-300 FLOP/s): which key, with the reason in why; NULL when none. Values a key
 * bounds were checked at resolution already (sim/scenario/scenario_times.c). */
static const char *world_check_spans(const ScenarioSpans *spans, const AgentGroupSpec *g, const AgentProfile *a,
                                     double *value, char *why, size_t size)
{
    if (!(spans->step_flops > 0)) return NULL;
    if (g->compute.kind != DIST_TRACE) {
        *value = a->compute;
        if (scenario_span_check(spans, SCENARIO_SPAN_COMPUTE, a->compute, 1, why, size) != HS_OK) return "compute";
        double factor = scenario_slowdown_worst(&g->slowdown);
        if (scenario_span_check(spans, SCENARIO_SPAN_COMPUTE, a->compute, factor, why, size) != HS_OK)
            return "slowdown";
    }
    *value = a->uplink;
    if (g->uplink.kind != DIST_TRACE && scenario_span_check(spans, SCENARIO_SPAN_LINK, a->uplink, 1, why, size) != HS_OK)
        return "uplink";
    *value = a->downlink;
    if (g->downlink.kind != DIST_TRACE &&
        scenario_span_check(spans, SCENARIO_SPAN_LINK, a->downlink, 1, why, size) != HS_OK)
        return "downlink";
    *value = a->latency;
    if (scenario_span_check(spans, SCENARIO_SPAN_LATENCY, a->latency, 1, why, size) != HS_OK) return "latency";
    return NULL;
}

/* A draw the run cannot use (a wide lognormal or pareto overflows, a uniform reaches inf,
 * a heavy tail draws more samples than exist, a step or a message would outlast
 * SCENARIO_SPAN_MAX): an input error at the group's line. */
static int world_check_draw(const Scenario *sc, const ScenarioSpans *spans, const AgentProfile *a, int index,
                            double samples, HsDiag *diag)
{
    const AgentGroupSpec *g = &sc->groups[a->group];
    char section[INIDOC_NAME_MAX + 8];
    snprintf(section, sizeof section, a->group == 0 ? "agents" : a->group == sc->n_groups ? "server" : "agents.%s",
             g->name);
    const char *key = NULL;
    double value = 0;
    /* a trace's values are checked when it is loaded (world_traces_load sets them after this) */
    if (g->compute.kind != DIST_TRACE && !(a->compute > 0 && isfinite(a->compute))) key = "compute", value = a->compute;
    else if (g->uplink.kind != DIST_TRACE && !(a->uplink > 0)) key = "uplink", value = a->uplink;
    else if (g->downlink.kind != DIST_TRACE && !(a->downlink > 0)) key = "downlink", value = a->downlink;
    else if (!(a->latency >= 0 && isfinite(a->latency))) key = "latency", value = a->latency;
    if (key)
        return hs_diag_set(diag, HS_E_INPUT, sc->file, g->line,
                           "[%s] %s: agent %d drew %g, which no run can use (a distribution this wide "
                           "overflows; narrow it)", section, key, index, value);
    char why[400];
    if ((key = world_check_spans(spans, g, a, &value, why, sizeof why)) != NULL)
        return hs_diag_set(diag, HS_E_INPUT, sc->file, g->line, "[%s] %s: agent %d drew %g: %s (narrow it)",
                           section, key, index, value, why);
    int limit = sc->mode == RUN_MODE_TRAIN ? sc->dataset_train_size : SCENARIO_MAX_SAMPLES;
    if (g->has_samples && !(floor(samples + 0.5) <= limit))
        return hs_diag_set(diag, HS_E_INPUT, sc->file, g->line,
                           "[%s] samples: agent %d drew %g samples, more than %s (%d)", section, index, samples,
                           sc->mode == RUN_MODE_TRAIN ? "the training set holds" : "an agent may hold", limit);
    return HS_OK;
}

int world_build(const Scenario *sc, World *world, HsDiag *diag)
{
    world->n = sc->n_agents;
    world->n_servers = sc->n_servers;
    world->agents = calloc((size_t)sc->n_agents + (size_t)sc->n_servers, sizeof *world->agents);
    if (world->agents == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for %d agents", sc->n_agents);
    gsl_rng *rng = rng_stream_create(sc->seed, 0, RNG_PURPOSE_PROFILE);
    if (rng == NULL) {
        world_free(world);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    ScenarioSpans spans;
    scenario_spans(sc, &spans);
    int even_share = sc->dataset_train_size / sc->n_agents;
    long long total_samples = 0;
    int index = 0;
    for (int g = 0; g < sc->n_groups; g++) {
        const AgentGroupSpec *spec = &sc->groups[g];
        for (int k = 0; k < spec->count; k++, index++) {
            AgentProfile *a = &world->agents[index];
            rng_stream_reset(rng, sc->seed, (uint64_t)index, RNG_PURPOSE_PROFILE);
            a->group = g;
            a->compute = distribution_draw(&spec->compute, rng);
            a->uplink = distribution_draw(&spec->uplink, rng);
            a->downlink = distribution_draw(&spec->downlink, rng);
            if (spec->symmetric_link) a->downlink = a->uplink;
            a->latency = distribution_draw(&spec->latency, rng);
            double samples = distribution_draw(&spec->samples, rng);
            int status = world_check_draw(sc, &spans, a, index, samples, diag);
            if (status != HS_OK) {
                gsl_rng_free(rng);
                world_free(world);
                return status;
            }
            a->samples = spec->has_samples ? (int)fmax(1.0, floor(samples + 0.5)) : even_share;
            if (a->samples < 1) a->samples = 1;
            total_samples += a->samples;
        }
    }
    /* the servers draw from the streams after the agents' (index n + k), so they never
     * change an agent's draws; they hold no data */
    for (int k = 0; k < sc->n_servers; k++, index++) {
        AgentProfile *a = &world->agents[index];
        const AgentGroupSpec *spec = &sc->groups[sc->n_groups];
        rng_stream_reset(rng, sc->seed, (uint64_t)index, RNG_PURPOSE_PROFILE);
        a->group = sc->n_groups;
        a->compute = distribution_draw(&spec->compute, rng);
        a->uplink = distribution_draw(&spec->uplink, rng);
        a->downlink = distribution_draw(&spec->downlink, rng);
        if (spec->symmetric_link) a->downlink = a->uplink;
        a->latency = distribution_draw(&spec->latency, rng);
        int status = world_check_draw(sc, &spans, a, index, 0, diag);
        if (status != HS_OK) {
            gsl_rng_free(rng);
            world_free(world);
            return status;
        }
    }
    gsl_rng_free(rng);
    if (sc->data.partition == PART_DOMAINS) {
        /* the partition deals the domains' rows: each agent holds what it is dealt (in
         * timing mode too, from the domain sizes alone) */
        int sizes[DATA_MAX_DOMAINS];
        int *counts = malloc(sizeof(int) * (size_t)world->n * sc->data.n_domains);
        partition_domain_sizes(&sc->data, sc->dataset_train_size, sizes);
        int status = counts ? partition_domain_counts(sizes, sc->data.n_domains, world->n, sc->data.lambda, counts)
                            : HS_E_NOMEM;
        if (status != HS_OK) status = hs_diag_set(diag, status, NULL, 0, "[data] domains: cannot deal the domains");
        total_samples = 0;
        for (int i = 0; status == HS_OK && i < world->n; i++) {
            long long held = 0;
            for (int d = 0; d < sc->data.n_domains; d++) held += counts[(size_t)i * sc->data.n_domains + d];
            if (held < 1) {
                status = hs_diag_set(diag, HS_E_INPUT, sc->file, 0,
                                     "[data] partition = domains: agent %d is dealt no rows (%d agents share %d "
                                     "training domains; raise lambda or lower [agents] count)",
                                     i, world->n, sc->data.n_domains);
                break;
            }
            world->agents[i].samples = (int)held;
            total_samples += held;
        }
        free(counts);
        if (status != HS_OK) {
            world_free(world);
            return status;
        }
    }
    int *attackers = calloc((size_t)sc->n_agents, sizeof *attackers);
    if (attackers == NULL || byzantine_pick(sc, sc->n_agents, attackers) != HS_OK) {
        free(attackers);
        world_free(world);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    for (int i = 0; i < sc->n_agents; i++) world->agents[i].byzantine = attackers[i];
    free(attackers);
    if (sc->mode == RUN_MODE_TRAIN && total_samples > sc->dataset_train_size) {
        world_free(world);
        return hs_diag_set(diag, HS_E_INPUT, sc->file, sc->groups[0].line,
                           "[agents] samples: the agents hold %lld samples in all, but the dataset "
                           "has %d training samples", total_samples, sc->dataset_train_size);
    }
    return HS_OK;
}

void world_free(World *world)
{
    if (world == NULL) return;
    free(world->agents);
    world->agents = NULL;
    world->n = 0;
    world->n_servers = 0;
}

int world_agent_steps(const World *world, int agent, int batch)
{
    return (world->agents[agent].samples + batch - 1) / batch;
}

double world_link_latency(const World *world, int from, int to)
{
    double a = world->agents[from].latency, b = world->agents[to].latency;
    return a > b ? a : b;
}

double world_link_bandwidth(const World *world, int from, int to)
{
    double up = world->agents[from].uplink, down = world->agents[to].downlink;
    return up < down ? up : down;
}
