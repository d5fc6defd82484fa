/* ripples.c — Ripples (Luo, He, Zhuo, Qian, "Prague: High-Performance Heterogeneity-Aware
 * Asynchronous Decentralized Training", ASPLOS 2020; preprint title "Heterogeneity-Aware
 * Asynchronous Decentralized Training"). No global barrier: a worker computes a gradient
 * and applies it to its own model, then synchronizes with a small group only, by a
 * Partial All-Reduce (P-Reduce): a ring all-reduce over the group's members that leaves
 * every member with the group's uniform average. Only the group waits for its slowest
 * member, so a straggler slows the groups it is drawn into, not everybody.
 *
 * Group formation (`schedule`):
 *   random    the paper's Group Generator (GG) with Group Buffers: a worker that ends a
 *             computation with an empty buffer asks the GG, which draws G-1 other workers
 *             uniformly and appends the group to the buffer of every member, in one global
 *             order; a worker executes the groups in its buffer front to back before its
 *             next computation. Conflicting groups (sharing a worker) are so serialized in
 *             the same order everywhere: no deadlock.
 *   division  Group Division on top of the buffers: the GG keeps a random partition of the
 *             workers into groups of G; the initiator gets its group of that partition.
 *             Groups of one partition are disjoint, so they never conflict. Once the
 *             initiator's group has been used (or holds a worker now offline), the GG draws
 *             a new partition.
 *   static    the static schedule for homogeneous settings, without a GG: at its t-th
 *             iteration worker i joins its block of the t-th partition, the workers in
 *             index order cut into consecutive blocks of G starting at offset t mod G
 *             (blocks wrap around), so group boundaries move by one every iteration and
 *             models mix along the ring. Members are in lock step; nothing conflicts.
 * The paper leaves the partition of the static schedule to the cluster's layout; the
 * shifted blocks are hetsim's choice. The GG's requests are free and instant here (the
 * paper's GG is a small central service; its messages are a few bytes).
 *
 * Availability: random and division draw only workers online at the request (the
 * initiator is online: it just finished a computation); a member that leaves afterwards
 * pauses the ring until it is back (the engine's rule). The static schedule does not look
 * at availability: its group waits for an absent member.
 *
 * Rounds: round r ends when every worker has completed r+1 passes over its own data
 * (sim/methods/async_round.h). rounds.extra = P-Reduces per local step in the round,
 * over all workers: 1 when every worker joins exactly one group per iteration (static,
 * and division without conflicts); more where a worker is drawn into groups other
 * workers start (conflicts). A round ends at a step, before that step's P-Reduce, which
 * counts in the next round (the first round of a static run shows (S-1)/S). */
#include "sim/methods/method.h"
#include "base/grow.h"
#include "sim/methods/async_round.h"
#include "sim/kernel/rng.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { RIPPLES_COMPUTED = ENGINE_EVENT_METHOD, RIPPLES_REDUCED };
enum { RIPPLES_RANDOM = 0, RIPPLES_DIVISION = 1, RIPPLES_STATIC = 2 }; /* schedule's choices */

/* [method] keys (ripples_keys below) */
typedef struct RipplesKeys {
    int group_size;
    int schedule;        /* RIPPLES_RANDOM, RIPPLES_DIVISION or RIPPLES_STATIC */
    FreezeKeys freezing;
} RipplesKeys;

typedef struct RipplesGroup {
    int *members;        /* (group_size) in ring order */
    int n;
    long t;              /* static: the iteration; -1 otherwise */
    int block;           /* static: the block of that iteration's partition */
    int used;
    Collective reduce;   /* the engine keeps a pointer to it: groups never move */
} RipplesGroup;

typedef struct RipplesAgent {
    int *buffer;         /* Group Buffer: group ids, buffer[head .. head+count) */
    int head, count, cap;
} RipplesAgent;

typedef struct RipplesState {
    int group_size, schedule;
    Stages st;           /* the local step, the group's averaging (robust under [byzantine]) */
    long *steps;         /* (n) local steps, all rounds */
    RipplesAgent *agents;
    RipplesGroup **groups; /* pool, grown as needed */
    int n_groups;
    int *division;       /* (n) division: the agent's group in the current partition, -1 none */
    int *division_fresh; /* (n) division: group k of the partition has not been issued */
    int *scratch;        /* (n) */
    int *members;        /* (n) a group being formed */
    int n;
    gsl_rng *rng;
    long draws;          /* GG draws so far: each draw re-seeds the GG's stream */
    AsyncRound rounds;
    long round_reduces, round_steps;
} RipplesState;

static int ripples_create(Sim *sim, void **state)
{
    RipplesState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int n = sim->world.n;
    const RipplesKeys *keys = scenario_method_keys(sim->sc);
    s->group_size = keys->group_size;
    s->schedule = keys->schedule;
    s->steps = calloc((size_t)n, sizeof *s->steps);
    s->agents = calloc((size_t)n, sizeof *s->agents);
    s->division = malloc((size_t)n * sizeof *s->division);
    s->division_fresh = calloc((size_t)n, sizeof *s->division_fresh);
    s->scratch = malloc((size_t)n * sizeof *s->scratch);
    s->members = malloc((size_t)n * sizeof *s->members);
    s->n = n;
    s->rng = gsl_rng_alloc(gsl_rng_taus2);
    if (!s->steps || !s->agents || !s->division || !s->division_fresh || !s->scratch || !s->members || !s->rng) return HS_E_NOMEM;
    for (int i = 0; i < n; i++) s->division[i] = -1;
    int status = trainer_setup_local(sim->trainer, 0);
    if (status != HS_OK) return status;
    StagesSetup setup = {.freezing = &keys->freezing};
    return sim_stages_create(sim, &s->st, &setup);
}

/* A free group from the pool (grown when none is). Returns its id, -1 when out of memory. */
static int ripples_group_alloc(RipplesState *s)
{
    for (int g = 0; g < s->n_groups; g++)
        if (!s->groups[g]->used) return g;
    RipplesGroup **grown = realloc(s->groups, (size_t)(s->n_groups + 1) * sizeof *grown);
    if (grown == NULL) return -1;
    s->groups = grown;
    RipplesGroup *g = calloc(1, sizeof *g);
    if (g == NULL) return -1;
    if ((g->members = malloc((size_t)s->group_size * sizeof *g->members)) == NULL) {
        free(g);
        return -1;
    }
    s->groups[s->n_groups] = g;
    return s->n_groups++;
}

static int ripples_buffer_push(RipplesAgent *a, int group)
{
    if (a->head + a->count == a->cap) {
        if (a->head > 0) {
            memmove(a->buffer, a->buffer + a->head, (size_t)a->count * sizeof *a->buffer);
            a->head = 0;
        } else if (hs_grow((void **)&a->buffer, &a->cap, a->count, sizeof *a->buffer, 4) != HS_OK) {
            return HS_E_NOMEM;
        }
    }
    a->buffer[a->head + a->count++] = group;
    return HS_OK;
}

/* Issues a group of the given members (n >= 2): into every member's buffer (GG) or, for
 * the static schedule, into nobody's (each member finds it when it gets there). */
static int ripples_issue(RipplesState *s, Sim *sim, const int *members, int n, long t, int block, int buffered)
{
    int id = ripples_group_alloc(s);
    if (id < 0) return HS_E_NOMEM;
    RipplesGroup *g = s->groups[id];
    memcpy(g->members, members, (size_t)n * sizeof *members);
    g->n = n;
    g->t = t;
    g->block = block;
    g->used = 1;
    engine_collective_begin(&g->reduce, g->members, n, local_step_bytes(&s->st.step, g->members[0]), 1, RIPPLES_REDUCED,
                            id);
    for (int k = 0; buffered && k < n; k++) {
        int status = ripples_buffer_push(&s->agents[members[k]], id);
        if (status != HS_OK) return status;
    }
    return id;
}

/* The workers online now except i, into s->scratch; returns how many. */
static int ripples_online_others(RipplesState *s, Sim *sim, int i)
{
    int m = 0;
    for (int j = 0; j < sim->world.n; j++)
        if (j != i && engine_agent_online(sim->engine, j, engine_now(sim->engine))) s->scratch[m++] = j;
    return m;
}

static void ripples_reseed(RipplesState *s, Sim *sim)
{
    rng_stream_reset(s->rng, sim->sc->seed, (uint64_t)s->draws++, RNG_PURPOSE_METHOD);
}

/* Sorted members keep the ring in index order, the same for every draw of a set. */
static void ripples_sort(int *v, int n)
{
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
            int tmp = v[b];
            v[b] = v[b - 1];
            v[b - 1] = tmp;
        }
}

/* random: i and G-1 others drawn uniformly among the online workers. */
static int ripples_request_random(RipplesState *s, Sim *sim, int i)
{
    int m = ripples_online_others(s, sim, i), want = s->group_size - 1;
    if (want > m) want = m;
    if (want <= 0) return HS_OK;
    ripples_reseed(s, sim);
    for (int k = 0; k < want; k++) { /* partial Fisher-Yates */
        int r = k + (int)gsl_rng_uniform_int(s->rng, (unsigned long)(m - k));
        int tmp = s->scratch[k];
        s->scratch[k] = s->scratch[r];
        s->scratch[r] = tmp;
    }
    int *members = s->members;
    members[0] = i;
    memcpy(members + 1, s->scratch, (size_t)want * sizeof *members);
    ripples_sort(members, want + 1);
    int id = ripples_issue(s, sim, members, want + 1, -1, 0, 1);
    return id < 0 ? id : HS_OK;
}

/* division: the initiator's group of the current partition; a new partition of the
 * workers online now when that group was used already or lost a member. */
static int ripples_request_division(RipplesState *s, Sim *sim, int i)
{
    int n = sim->world.n, k = s->division[i], stale = k < 0 || !s->division_fresh[k];
    for (int j = 0; j < n && !stale; j++)
        if (s->division[j] == k && !engine_agent_online(sim->engine, j, engine_now(sim->engine))) stale = 1;
    if (stale) {
        int m = ripples_online_others(s, sim, i);
        s->scratch[m++] = i;
        ripples_reseed(s, sim);
        for (int a = m - 1; a > 0; a--) {
            int r = (int)gsl_rng_uniform_int(s->rng, (unsigned long)(a + 1));
            int tmp = s->scratch[a];
            s->scratch[a] = s->scratch[r];
            s->scratch[r] = tmp;
        }
        for (int j = 0; j < n; j++) s->division[j] = -1;
        for (int a = 0; a < m; a++) s->division[s->scratch[a]] = a / s->group_size;
        for (int g = 0; g < n; g++) s->division_fresh[g] = 1;
        k = s->division[i];
    }
    s->division_fresh[k] = 0;
    int *members = s->members, count = 0;
    for (int j = 0; j < n; j++)
        if (s->division[j] == k) members[count++] = j;
    if (count < 2) return HS_OK; /* the partition's leftover single worker: alone this time */
    int id = ripples_issue(s, sim, members, count, -1, 0, 1);
    return id < 0 ? id : HS_OK;
}

/* static: worker i at its iteration t joins its block; the first member to get there
 * creates the group. Returns the group id, or -1 when i is alone in its block. */
static int ripples_static_group(RipplesState *s, Sim *sim, int i, long t, int *id)
{
    int n = sim->world.n, G = s->group_size;
    int offset = (int)(t % G), position = ((i - offset) % n + n) % n, block = position / G;
    *id = -1;
    for (int g = 0; g < s->n_groups; g++)
        if (s->groups[g]->used && s->groups[g]->t == t && s->groups[g]->block == block) {
            *id = g;
            return HS_OK;
        }
    int *members = s->members, count = 0;
    for (int q = 0; q < G && block * G + q < n; q++) members[count++] = (offset + block * G + q) % n;
    if (count < 2) return HS_OK;
    ripples_sort(members, count);
    *id = ripples_issue(s, sim, members, count, t, block, 0);
    return *id < 0 ? *id : HS_OK;
}

static int ripples_compute(RipplesState *s, Sim *sim, int i)
{
    double finish;
    int status = engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), RIPPLES_COMPUTED, 0, &finish);
    if (status != HS_OK) return status;
    if (async_round_stranded(sim, i, s->steps[i], finish)) return engine_fail_stranded(sim->engine, i);
    return HS_OK;
}

/* Worker i is free: the next group of its buffer, or its next computation. */
static int ripples_continue(RipplesState *s, Sim *sim, int i)
{
    RipplesAgent *a = &s->agents[i];
    if (a->count > 0) return engine_collective_join(sim->engine, &s->groups[a->buffer[a->head]]->reduce, i);
    return ripples_compute(s, sim, i);
}

static int ripples_round_begin(void *state, Sim *sim, int round)
{
    RipplesState *s = state;
    s->round_reduces = s->round_steps = 0;
    stages_begin_round(&s->st, round);
    if (async_round_begin(&s->rounds, sim, round, s->steps) || round > 0) return HS_OK;
    int status = HS_OK;
    for (int i = 0; i < sim->world.n && status == HS_OK; i++) status = ripples_compute(s, sim, i);
    return status;
}

static void ripples_extra(RipplesState *s, Sim *sim)
{
    sim->round_extra = s->round_steps ? (double)s->round_reduces / (double)s->round_steps : NAN;
}

static int ripples_on_event(void *state, Sim *sim, const Event *ev)
{
    RipplesState *s = state;
    int status;
    if (ev->kind == RIPPLES_COMPUTED) {
        int i = ev->agent;
        /* the model did not change during the computation (a worker in a P-Reduce does
         * not compute), so the step at its end is the step at its start */
        if ((status = local_step_run(&s->st.step, i)) != HS_OK) return status;
        long t = s->steps[i]++;
        s->round_steps++;
        if (async_round_step(&s->rounds, sim, i, s->steps[i])) ripples_extra(s, sim);
        if (s->schedule == RIPPLES_STATIC) {
            int id;
            if ((status = ripples_static_group(s, sim, i, t, &id)) != HS_OK) return status;
            if (id >= 0) return engine_collective_join(sim->engine, &s->groups[id]->reduce, i);
            return ripples_compute(s, sim, i);
        }
        if (s->agents[i].count == 0) {
            status = s->schedule == RIPPLES_RANDOM ? ripples_request_random(s, sim, i) : ripples_request_division(s, sim, i);
            if (status != HS_OK) return status;
        }
        return ripples_continue(s, sim, i);
    }
    /* a P-Reduce finished: the members hold the group's average and go on */
    RipplesGroup *g = s->groups[ev->data];
    status = aggregate_models(&s->st.agg, &s->st.out, g->members, g->n, 0, engine_round(sim->engine), 0);
    if (status != HS_OK) return status;
    g->used = 0;
    s->round_reduces += g->n;
    for (int k = 0; k < g->n; k++) {
        int i = g->members[k];
        if (s->schedule != RIPPLES_STATIC) {
            RipplesAgent *a = &s->agents[i];
            a->head++; /* this group was its buffer's front */
            if (--a->count == 0) a->head = 0;
        }
        if ((status = ripples_continue(s, sim, i)) != HS_OK) return status;
    }
    return HS_OK;
}

static void ripples_destroy(void *state)
{
    RipplesState *s = state;
    if (s == NULL) return;
    for (int g = 0; g < s->n_groups; g++) {
        free(s->groups[g]->members);
        free(s->groups[g]);
    }
    free(s->groups);
    for (int i = 0; s->agents && i < s->n; i++) free(s->agents[i].buffer);
    free(s->agents);
    free(s->steps);
    free(s->division);
    stages_free(&s->st);
    free(s->division_fresh);
    free(s->scratch);
    free(s->members);
    if (s->rng) gsl_rng_free(s->rng);
    free(s);
}

static const SchemaKey ripples_keys[] = {
    METHOD_KEY(RipplesKeys, group_size, "3", "workers in a Partial All-Reduce group (G; at most the agent count)",
     .type = SCHEMA_INT, .min = 2, .max = 1000000, .limits = scenario_limit_agents, .doc_range = "[2, agents]"),
    METHOD_KEY(RipplesKeys, schedule, "division", "group formation: GG with Group Buffers (random), plus Group Division, or static",
     .type = SCHEMA_CHOICE, .choices = "random|division|static"),
    FREEZE_METHOD_KEYS(RipplesKeys, freezing.),
    {0},
};

static const MethodStages ripples_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient step on its own model",
    .outgoing = "its model to its group's P-Reduce",
    .aggregate = "uniform all-reduce mean within the group",
    .refuses = {
        [FEATURE_COMPRESSION] = "a P-Reduce's group is drawn anew each time and its members hold different models: "
                                "there is no point they all hold to compress a change against, and one message round "
                                "the ring cannot be the difference to each receiver's own copy",
        [FEATURE_PRIVACY_UPDATE] = "group averages are asynchronous and overlap: the period an update would be clipped "
                                   "over and the accountant's runs are not modelled",
        [FEATURE_PRUNE] = "the groups' P-Reduces run at once, each would need its own nested shells of sub-models "
                          "(one set per run is modelled)",
        [FEATURE_DRIFT_FEDPROX] = "no global model: each group averages its own members after every step, so there is "
                                  "no common starting point for a proximal term",
        [FEATURE_DRIFT_SCAFFOLD] = "no global model: each group averages its own members after every step, so there is "
                                   "no server control variate c",
    },
};

static const MethodExtra ripples_extras[] = {
    {.meaning = "P-Reduces per local step (1 without conflicts)"},
    {0},
};

const MethodOps method_ripples = {
    .name = "ripples",
    .capabilities = METHOD_LOSSY_RINGS,
    .summary = "Ripples: asynchronous Partial All-Reduce among small groups (Group Buffer, Group Division, static)",
    .keys = ripples_keys,
    .keys_size = sizeof(RipplesKeys),
    .stages = &ripples_stages,
    .extra = ripples_extras,
    .create = ripples_create,
    .round_begin = ripples_round_begin,
    .on_event = ripples_on_event,
    .destroy = ripples_destroy,
};
