/* world.c — per-agent draws. One taus2 stream is re-seeded per agent instead of
 * allocating 100,000 generators. */
#include "sim/world/world.h"

#include "base/device_profile.h"
#include "base/hugemem.h"
#include "models/partition.h"
#include "sim/world/roles.h"
#include "sim/kernel/rng.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* An input error about key of section, at where ("FILE:LINE" or "--set ...", "" for a
 * default: the scenario file). */
static int world_key_error(const Scenario *sc, const char *where, const char *section, const char *key,
                           HsDiag *diag, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int world_key_error(const Scenario *sc, const char *where, const char *section, const char *key,
                           HsDiag *diag, const char *fmt, ...)
{
    char message[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (strncmp(where, "--set ", 6) == 0) return hs_diag_set(diag, HS_E_INPUT, where, 0, "%s", message);
    return hs_diag_set(diag, HS_E_INPUT, where[0] ? where : sc->file, 0, "[%s] %s: %s", section, key, message);
}

/* A draw the run cannot use (a wide lognormal or pareto overflows, a uniform reaches inf,
 * a heavy tail draws more samples than exist, a step or a message would outlast
 * SCENARIO_SPAN_MAX): an input error at the group's line. */
static int world_check_draw(const Scenario *sc, const ScenarioSpans *spans, const AgentProfile *a, int index,
                            double samples, double batch, HsDiag *diag)
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
    if (g->has_batch) {
        /* as samples: a continuous draw is rounded to the nearest whole batch, then checked */
        double rounded = floor(batch + 0.5);
        if (!(rounded >= 1 && rounded <= SCENARIO_MAX_BATCH))
            return world_key_error(sc, g->batch_where, section, "batch", diag,
                                   "agent %d drew a batch of %g, which rounds outside [1, %d] (shift or narrow "
                                   "the distribution)", index, batch, SCENARIO_MAX_BATCH);
    }
    /* a step's span at the agent's own batch (spans holds [model] batch's) */
    ScenarioSpans own = *spans;
    if (g->has_batch && own.batch > 0) {
        own.step_flops = spans->step_flops / spans->batch * floor(batch + 0.5);
        own.batch = (int)floor(batch + 0.5);
    }
    char why[400];
    if ((key = world_check_spans(&own, g, a, &value, why, sizeof why)) != NULL)
        return hs_diag_set(diag, HS_E_INPUT, sc->file, g->line, "[%s] %s: agent %d drew %g: %s (narrow it)",
                           section, key, index, value, why);
    if (!g->has_samples) return HS_OK;
    /* at the key that was drawn (issue 28 class 1: a draw that rounds to 0 was made 1) */
    int limit = sc->mode == RUN_MODE_TRAIN ? sc->dataset_train_size : SCENARIO_MAX_SAMPLES;
    double rounded = floor(samples + 0.5);
    if (!(rounded <= limit))
        return world_key_error(sc, g->samples_where, section, "samples", diag,
                               "agent %d drew %g samples, more than %s (%d)", index, samples,
                               sc->mode == RUN_MODE_TRAIN ? "the training set holds" : "an agent may hold", limit);
    if (!(rounded >= 1))
        return world_key_error(sc, g->samples_where, section, "samples", diag,
                               "agent %d drew %g samples, which rounds to 0 (every agent holds at least 1; "
                               "shift or narrow the distribution)", index, samples);
    return HS_OK;
}

/* [data] partition = shards cuts each agent's rows into `shards` label-sorted pieces: an
 * agent with fewer rows than shards would get empty pieces and a mix that is no longer
 * the shards the scenario asked for (issue 28 class 7). Train mode only: timing mode
 * deals no rows. */
static int world_check_shards(const Scenario *sc, const World *world, HsDiag *diag)
{
    if (sc->mode != RUN_MODE_TRAIN || sc->data.partition != PART_SHARDS) return HS_OK;
    for (int i = 0; i < world->n; i++)
        if (world->agents[i].samples < sc->data.shards_per_agent)
            return world_key_error(sc, sc->shards_where, "data", "shards", diag,
                                   "%d shards per agent, but agent %d holds %d samples (at most as many shards as "
                                   "samples; lower shards or give the agents more samples)",
                                   sc->data.shards_per_agent, i, world->agents[i].samples);
    return HS_OK;
}

/* partition = natural: each agent holds its writers' samples (partition_natural_counts),
 * in timing mode too, from the files' writers (dataset_probe: a hit of the decoded-data
 * cache once the files have been read). */
static int world_natural_samples(const Scenario *sc, World *world, long long *total, HsDiag *diag)
{
    DatasetInfo info;
    HsDiag inner;
    hs_diag_clear(&inner);
    int status = dataset_probe(&sc->data, &info, &inner);
    if (status != HS_OK)
        return hs_diag_set(diag, status, NULL, 0, "%s%s%s", sc->data_where, sc->data_where[0] ? ": " : "",
                           inner.message);
    Dataset writers = {.n_writers = info.n_writers, .writer_start = info.writer_start};
    int *counts = malloc(sizeof(int) * ((size_t)sc->n_agents + 1));
    status = counts ? partition_natural_counts(&writers, sc->n_agents, counts, NULL, diag)
                    : hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    *total = 0;
    for (int i = 0; status == HS_OK && i < sc->n_agents; i++) {
        world->agents[i].samples = counts[i];
        *total += counts[i];
    }
    free(counts);
    dataset_info_free(&info);
    return status;
}

int world_build(const Scenario *sc, World *world, HsDiag *diag)
{
    world->n = sc->n_agents;
    world->n_servers = sc->n_servers;
    world->energy = NULL; /* world_energy_draw's, at the end */
    world->agents = hs_huge_calloc((size_t)sc->n_agents + (size_t)sc->n_servers, sizeof *world->agents);
    if (world->agents == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for %d agents", sc->n_agents);
    gsl_rng *rng = rng_stream_create(sc->seed, 0, RNG_PURPOSE_PROFILE);
    if (rng == NULL) {
        world_free(world);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    ScenarioSpans spans;
    scenario_spans(sc, &spans);
    /* [agents] profile: agent i's compute, links and latency are row i's, read once here
     * (resolution read it too, and checked it) */
    DeviceProfile profile = {0};
    if (sc->agents_profile[0]) {
        HsDiag inner;
        hs_diag_clear(&inner);
        int status = device_profile_read(sc->agents_profile, &profile, &inner);
        if (status == HS_OK && profile.n_agents < sc->n_agents)
            status = hs_diag_set(&inner, HS_E_INPUT, sc->agents_profile, 0, "%d rows for %d agents", profile.n_agents,
                                 sc->n_agents);
        if (status != HS_OK) {
            gsl_rng_free(rng);
            world_free(world);
            device_profile_free(&profile);
            return hs_diag_set(diag, status, sc->file, sc->groups[0].line, "[agents] profile: %s", inner.message);
        }
    }
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
            if (sc->profile_rate > 0) a->compute *= sc->profile_rate; /* a relative speed ([model] profile) */
            a->uplink = distribution_draw(&spec->uplink, rng);
            a->downlink = distribution_draw(&spec->downlink, rng);
            if (spec->symmetric_link) a->downlink = a->uplink;
            a->latency = distribution_draw(&spec->latency, rng);
            double samples = distribution_draw(&spec->samples, rng);
            /* drawn last, and only when written, so the draws before it stay what they were */
            double batch = spec->has_batch ? distribution_draw(&spec->batch, rng) : sc->model.batch;
            if (profile.n_agents > 0) {
                a->compute = profile.compute[index];
                a->uplink = a->downlink = profile.bandwidth[index];
                if (profile.latency) a->latency = profile.latency[index];
            }
            int status = world_check_draw(sc, &spans, a, index, samples, batch, diag);
            if (status != HS_OK) {
                gsl_rng_free(rng);
                world_free(world);
                device_profile_free(&profile);
                return status;
            }
            /* a draw is at least 1 (world_check_draw); the even share is at least 1 too: more
             * agents than samples is refused in train mode, and timing mode deals no rows */
            a->samples = spec->has_samples ? (int)floor(samples + 0.5) : even_share > 0 ? even_share : 1;
            a->batch = (int)floor(batch + 0.5);
            total_samples += a->samples;
        }
    }
    device_profile_free(&profile);
    /* the servers draw from the streams after the agents' (index n + k), so they never
     * change an agent's draws; they hold no data */
    for (int k = 0; k < sc->n_servers; k++, index++) {
        AgentProfile *a = &world->agents[index];
        const AgentGroupSpec *spec = &sc->groups[sc->n_groups];
        rng_stream_reset(rng, sc->seed, (uint64_t)index, RNG_PURPOSE_PROFILE);
        a->group = sc->n_groups;
        a->compute = distribution_draw(&spec->compute, rng);
        if (sc->profile_rate > 0) a->compute *= sc->profile_rate;
        a->uplink = distribution_draw(&spec->uplink, rng);
        a->downlink = distribution_draw(&spec->downlink, rng);
        if (spec->symmetric_link) a->downlink = a->uplink;
        a->latency = distribution_draw(&spec->latency, rng);
        a->batch = sc->model.batch;
        int status = world_check_draw(sc, &spans, a, index, 0, sc->model.batch, diag);
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
    if (sc->data.partition == PART_NATURAL) {
        int status = world_natural_samples(sc, world, &total_samples, diag);
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
    int status = world_check_shards(sc, world, diag);
    if (status == HS_OK) status = world_energy_draw(sc, world, diag);
    if (status == HS_OK) status = scenario_check_round_keys(sc, world_round_steps(world), diag);
    if (status != HS_OK) world_free(world);
    return status;
}

void world_free(World *world)
{
    if (world == NULL) return;
    free(world->agents);
    free(world->energy);
    world->agents = NULL;
    world->energy = NULL;
    world->n = 0;
    world->n_servers = 0;
}

int world_round_steps(const World *world)
{
    double total = 0, batches = 0;
    for (int i = 0; i < world->n; i++) total += world->agents[i].samples, batches += world->agents[i].batch;
    /* batches / n is exactly b when every batch is b: the figure of one shared batch, bit for bit */
    int steps = (int)ceil(total / world->n / (batches / world->n));
    return steps < 1 ? 1 : steps; /* unreachable: every agent holds a sample */
}

int world_agent_steps(const World *world, int agent)
{
    int batch = world->agents[agent].batch;
    return (world->agents[agent].samples + batch - 1) / batch;
}

int world_max_batch(const World *world)
{
    int most = 1;
    for (int i = 0; i < world->n; i++)
        if (world->agents[i].batch > most) most = world->agents[i].batch;
    return most;
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
