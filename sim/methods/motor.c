/* motor.c — MOTOR (Jiang, Xu, Xu, Wang, Qiao, Huang, "Joint Model Pruning and Topology
 * Construction for Accelerating Decentralized Machine Learning", TPDS 2023, seed 001),
 * with per-link communication periods after "Enhancing Decentralized Federated Learning
 * with Model Pruning and Adaptive Communication" (seed 001's list): D-PSGD whose agents train
 * sub-models that fit their processors, over a graph rebuilt from the measured link rates,
 * where a slow link gossips only every f-th step. docs/methods.md says where hetsim
 * deviates from the papers and why.
 *
 * Pruning (the local step's stage, sim/stages/prune.h, always on): an agent slower than
 * the median keeps the widest nested sub-model whose step meets the median agent's compute
 * time (prune_target = makespan; or a fixed keep ratio), no less than prune_min. The
 * ratios are chosen once, from the drawn compute speeds.
 *
 * Topology, rebuilt at the start of every `rebuild`-th round (round 0 first) from the
 * link rates the network model gives now (engine_message_bandwidth: min(uplink,
 * downlink) at the current time, traces included): a link i-j is rated
 * r_ij = min(rate(i->j), rate(j->i)). Links are taken fastest first (ties: lower i, then
 * lower j) while both ends have fewer than max_degree neighbours; then, if that left the
 * graph in pieces, the fastest links that join two pieces are added (Kruskal's maximum
 * spanning forest over all links), whatever the degrees, so the graph is connected.
 * Deterministic; O(n^2 log n) time and O(n^2) memory per rebuild (every pair is rated).
 *
 * Periods, set with the graph: link i-j gossips at global steps g with g mod f_ij = 0,
 *   f_ij = clamp(ceil((latency_ij + max(bytes_i, bytes_j) / r_ij) / max(step_i, step_j)), 1, max_period),
 * bytes_k agent k's sub-model bytes, step_k its step's FLOPs over its compute now: a link
 * that needs f steps' time to carry a model carries one every f steps, so its transfer
 * hides behind the computation. At step g each agent mixes over the links active at g
 * with the Metropolis-Hastings weights of that step's active graph,
 *   W_ij = 1 / (1 + max(d_i(g), d_j(g))),  W_ii = 1 - sum_j W_ij,
 * (symmetric, doubly stochastic every step), per coordinate over the holders as dpsgd
 * does under prune (stages_gossip). An agent with no active link at g steps alone.
 *
 * Timing: an agent finishes step g once its gradient is done and it holds x_j^g of every
 * neighbour active at g (a barrier on the active links only). So a neighbour j over a
 * link of period f can be up to f steps ahead (it must wait for i again at the link's
 * next active step): each agent keeps its published models in max_period + 1 slots by
 * global step, and counts arrivals per slot; x_j^g is never overwritten before i reads it.
 * A round is a global epoch of ceil(mean samples / mean batch) steps per agent.
 * Unstable links ([agents] loss, sim/kernel/loss.c), as dpsgd: under loss_mode =
 * retransmit a lost model is sent again rto after it would have arrived, until it does
 * (the barrier on the active links waits for it). Under drop it stays lost: the receiver
 * learns so rto after it would have arrived, counts it among the step's messages (the
 * barrier closes) and mixes over the models that arrived, the Metropolis-Hastings weights
 * of the present members renormalised to sum to 1 (a row stays stochastic; W is no longer
 * symmetric, so a step with losses need not keep the agents' mean). The link rates that
 * build the graph are the network's; loss does not enter them (MOTOR's papers rate links
 * by their bandwidth).
 * rounds.extra: the links added plus removed by this round's rebuild (round 0: the links
 * built); 0 in a round that rebuilt nothing.
 * [topology] is refused (METHOD_BUILDS_TOPOLOGY, checked where the scenario is resolved)
 * in a file whose own method is motor: the graph is the rates', and a written one would be
 * silently ignored. A file run as motor over its own method (--set, [sweep]) keeps its
 * [topology] for the methods it was written for. */
#include "sim/methods/method.h"
#include "sim/scenario/topology.h"
#include "sim/train/trainer.h"

#include <stdlib.h>
#include <string.h>

enum { MOTOR_COMPUTED = ENGINE_EVENT_METHOD, MOTOR_MODEL };

/* [method] keys; pruning.prune is not a key: MOTOR always prunes (set in create) */
typedef struct MotorKeys {
    PruneKeys pruning;
    int rebuild;    /* rounds between topology rebuilds */
    int max_degree; /* neighbours an agent takes by rate (more only to connect the graph) */
    int max_period; /* the largest gossip period of a slow link, in steps */
} MotorKeys;

typedef struct MotorLink {
    double rate; /* B/s, r_ij */
    int i, j;    /* i < j */
} MotorLink;

typedef struct MotorState {
    Topology topology;  /* the current graph */
    int *period;        /* (2 links) f_ij aligned with topology.adj */
    int *step;          /* (n) steps completed this round */
    unsigned char *computed; /* (n) gradient of the current step is done */
    int *received;      /* (n x slots) neighbour models received, by global step mod slots */
    int slots;          /* max_period + 1 published models per agent */
    int round_steps;
    long long base;     /* global step number of this round's step 0 */
    int finished;       /* agents done with this round */
    int changed;        /* links added + removed by this round's rebuild */
    /* loss_mode = drop: lost[slot x edges + k] is 1 when the model along adjacency entry k
     * (topology.adj[k], received by the agent that owns row k) for the global steps of
     * that slot was lost; NULL otherwise (sized with each rebuilt graph) */
    unsigned char *lost;
    int drops;          /* loss_mode = drop on lossy links */
    Stages st;
    /* train mode: one agent's active closed neighbourhood, self first */
    int *who;           /* (n) */
    const float **vectors;
    double *weights;
} MotorState;

static int motor_create(Sim *sim, void **state)
{
    MotorState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    const MotorKeys *keys = scenario_method_keys(sim->sc);
    int n = sim->world.n, status;
    s->slots = keys->max_period + 1;
    s->round_steps = sim_round_steps(sim);
    s->step = calloc((size_t)n, sizeof *s->step);
    s->computed = calloc((size_t)n, 1);
    s->received = calloc((size_t)n * (size_t)s->slots, sizeof *s->received);
    s->who = malloc((size_t)n * sizeof *s->who);
    s->vectors = malloc((size_t)n * sizeof *s->vectors);
    s->weights = malloc((size_t)n * sizeof *s->weights);
    if (!s->step || !s->computed || !s->received || !s->who || !s->vectors || !s->weights) return HS_E_NOMEM;
    /* the published models by slot, then the gradient */
    if ((status = trainer_setup_local(sim->trainer, s->slots + 1)) != HS_OK) return status;
    s->drops = engine_lossy(sim->engine) && sim->sc->network.loss_mode == LOSS_DROP;
    PruneKeys pruning = keys->pruning;
    pruning.prune = PRUNE_WIDTH;
    StagesSetup setup = {.pruning = &pruning};
    return sim_stages_create(sim, &s->st, &setup);
}

static int motor_link_order(const void *x, const void *y)
{
    const MotorLink *a = x, *b = y;
    if (a->rate != b->rate) return a->rate > b->rate ? -1 : 1;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    return (a->j > b->j) - (a->j < b->j);
}

static int motor_root(int *parent, int i)
{
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

/* Links in old but not in new plus the reverse (rows are sorted). */
static int motor_difference(const Topology *old, const Topology *new)
{
    int changed = 0;
    for (int i = 0; i < new->n; i++) {
        int a = old->n ? old->offsets[i] : 0, a_end = old->n ? old->offsets[i + 1] : 0;
        int b = new->offsets[i], b_end = new->offsets[i + 1];
        while (a < a_end || b < b_end) {
            int x = a < a_end ? old->adj[a] : -1, y = b < b_end ? new->adj[b] : -1;
            if (x >= 0 && (y < 0 || x < y)) {
                changed += x > i;
                a++;
            } else if (y >= 0 && (x < 0 || y < x)) {
                changed += y > i;
                b++;
            } else {
                a++;
                b++;
            }
        }
    }
    return changed;
}

static double motor_rate(const Sim *sim, int i, int j)
{
    double ij = engine_message_bandwidth(sim->engine, i, j), ji = engine_message_bandwidth(sim->engine, j, i);
    return ij < ji ? ij : ji;
}

/* Each link's gossip period from the rates, latencies and compute speeds now. */
static int motor_periods(MotorState *s, const Sim *sim, int max_period)
{
    const Topology *t = &s->topology;
    free(s->period);
    s->period = malloc(((size_t)t->offsets[t->n] + 1) * sizeof *s->period);
    if (s->period == NULL) return HS_E_NOMEM;
    const LocalStep *ls = &s->st.step;
    for (int i = 0; i < t->n; i++)
        for (int k = t->offsets[i]; k < t->offsets[i + 1]; k++) {
            int j = t->adj[k];
            double li = engine_message_latency(sim->engine, i, j), lj = engine_message_latency(sim->engine, j, i);
            double bi = local_step_bytes(ls, i), bj = local_step_bytes(ls, j);
            double si = local_step_flops(ls, i) / engine_agent_compute(sim->engine, i);
            double sj = local_step_flops(ls, j) / engine_agent_compute(sim->engine, j);
            double transfer = (li > lj ? li : lj) + (bi > bj ? bi : bj) / motor_rate(sim, i, j);
            double periods = ceil(transfer / (si > sj ? si : sj));
            s->period[k] = !(periods > 1) ? 1 : periods >= max_period ? max_period : (int)periods;
        }
    return HS_OK;
}

/* The graph from the link rates now (the header says how); s->changed: links that differ. */
static int motor_rebuild(MotorState *s, const Sim *sim, const MotorKeys *keys)
{
    int n = sim->world.n, status = HS_E_NOMEM;
    size_t pairs = (size_t)n * (size_t)(n - 1) / 2, chosen = 0;
    MotorLink *links = malloc((pairs + 1) * sizeof *links);
    int *degree = calloc((size_t)n, sizeof *degree), *parent = malloc((size_t)n * sizeof *parent);
    int *a = malloc(((size_t)n + (size_t)n * (size_t)keys->max_degree) * sizeof *a);
    int *b = malloc(((size_t)n + (size_t)n * (size_t)keys->max_degree) * sizeof *b);
    Topology built = {0};
    if (!links || !degree || !parent || !a || !b) goto done;
    size_t m = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) links[m++] = (MotorLink){.rate = motor_rate(sim, i, j), .i = i, .j = j};
    qsort(links, pairs, sizeof *links, motor_link_order);
    for (int i = 0; i < n; i++) parent[i] = i;
    for (size_t k = 0; k < pairs; k++) { /* the fastest links within the degree bound */
        int i = links[k].i, j = links[k].j;
        if (degree[i] >= keys->max_degree || degree[j] >= keys->max_degree) continue;
        degree[i]++;
        degree[j]++;
        a[chosen] = i;
        b[chosen++] = j;
        parent[motor_root(parent, i)] = motor_root(parent, j);
    }
    for (size_t k = 0; k < pairs; k++) { /* the fastest links joining the pieces left */
        int ri = motor_root(parent, links[k].i), rj = motor_root(parent, links[k].j);
        if (ri == rj) continue;
        parent[ri] = rj;
        a[chosen] = links[k].i;
        b[chosen++] = links[k].j;
    }
    if ((status = topology_from_links(n, a, b, chosen, &built)) != HS_OK) goto done;
    s->changed = motor_difference(&s->topology, &built);
    topology_free(&s->topology);
    s->topology = built;
    status = motor_periods(s, sim, keys->max_period);
    if (status == HS_OK && s->drops) { /* no message is in flight between rounds */
        free(s->lost);
        s->lost = calloc((size_t)s->slots * (size_t)s->topology.offsets[n] + 1, 1);
        if (s->lost == NULL) status = HS_E_NOMEM;
    }
done:
    free(links);
    free(degree);
    free(parent);
    free(a);
    free(b);
    return status;
}

static int motor_active(const MotorState *s, int k, long long g)
{
    return g % s->period[k] == 0;
}

/* d_i(g): agent i's links active at global step g. */
static int motor_active_degree(const MotorState *s, int i, long long g)
{
    int d = 0;
    for (int k = s->topology.offsets[i]; k < s->topology.offsets[i + 1]; k++) d += motor_active(s, k, g);
    return d;
}

/* lost[] of agent i's adjacency entry k for slot (drop only). */
static unsigned char *motor_lost(const MotorState *s, int slot, int k)
{
    return &s->lost[(size_t)slot * (size_t)s->topology.offsets[s->topology.n] + (size_t)k];
}

/* x_i <- the Metropolis-Hastings mix of step g's active closed neighbourhood (masked per
 * coordinate under pruning: the aggregation stage). loss_mode = drop: over the members
 * whose model arrived, their weights renormalised to sum to 1 (dpsgd's rule; the weights
 * stay the active graph's, so d_j counts a link whose message was lost). */
static int motor_mix(MotorState *s, Sim *sim, int i, long long g)
{
    int slot = (int)(g % s->slots), di = motor_active_degree(s, i, g), count = 1, missing = 0;
    double sum = 0;
    s->who[0] = i;
    s->vectors[0] = trainer_buffer(sim->trainer, i, slot);
    for (int k = s->topology.offsets[i]; k < s->topology.offsets[i + 1]; k++) {
        if (!motor_active(s, k, g)) continue;
        int j = s->topology.adj[k], dj = motor_active_degree(s, j, g);
        double w = 1.0 / (1.0 + (di > dj ? di : dj));
        sum += w;
        if (s->lost && *motor_lost(s, slot, k)) { /* dropped */
            missing = 1;
            continue;
        }
        s->who[count] = j;
        s->vectors[count] = trainer_buffer(sim->trainer, j, slot);
        s->weights[count++] = w;
    }
    s->weights[0] = 1.0 - sum;
    if (missing) { /* no loss: the weights are left bit for bit as they were */
        double present = 0;
        for (int k = 0; k < count; k++) present += s->weights[k];
        for (int k = 0; k < count; k++) s->weights[k] /= present;
    }
    return stages_gossip(&s->st, s->who, s->vectors, s->weights, count, trainer_param_count(sim->trainer),
                         trainer_params(sim->trainer, i));
}

/* Starts agent i's step: publish x^g, compute the gradient at it, send it over the
 * links active at g. */
static int motor_start_step(MotorState *s, Sim *sim, int i)
{
    long long g = s->base + s->step[i];
    LocalStep *ls = &s->st.step;
    s->computed[i] = 0;
    if (sim->trainer) {
        size_t d = trainer_param_count(sim->trainer);
        memcpy(trainer_buffer(sim->trainer, i, (int)(g % s->slots)), trainer_params(sim->trainer, i), d * sizeof(float));
        int status = local_step_gradient(ls, i, NULL, trainer_buffer(sim->trainer, i, s->slots));
        if (status != HS_OK) return status;
    }
    int status = engine_compute(sim->engine, i, local_step_flops(ls, i), MOTOR_COMPUTED, 0, NULL);
    double bytes = local_step_bytes(ls, i);
    for (int k = s->topology.offsets[i]; status == HS_OK && k < s->topology.offsets[i + 1]; k++)
        if (motor_active(s, k, g)) status = engine_send(sim->engine, i, s->topology.adj[k], bytes, MOTOR_MODEL, g);
    return status;
}

static int motor_try_finish(MotorState *s, Sim *sim, int i)
{
    long long g = s->base + s->step[i];
    int *received = &s->received[(size_t)i * (size_t)s->slots + (size_t)(g % s->slots)], status;
    if (!s->computed[i] || *received < motor_active_degree(s, i, g)) return HS_OK;
    *received = 0;
    if (sim->trainer) {
        if ((status = motor_mix(s, sim, i, g)) != HS_OK) return status;
        if ((status = local_step_apply(&s->st.step, i, trainer_buffer(sim->trainer, i, s->slots))) != HS_OK)
            return status;
    }
    if (s->lost)
        for (int k = s->topology.offsets[i]; k < s->topology.offsets[i + 1]; k++)
            *motor_lost(s, (int)(g % s->slots), k) = 0;
    if (++s->step[i] < s->round_steps) return motor_start_step(s, sim, i);
    if (++s->finished == sim->world.n) engine_end_round(sim->engine);
    return HS_OK;
}

static int motor_round_begin(void *state, Sim *sim, int round)
{
    MotorState *s = state;
    const MotorKeys *keys = scenario_method_keys(sim->sc);
    s->finished = 0;
    s->changed = 0;
    int status = HS_OK;
    if (round % keys->rebuild == 0 && (status = motor_rebuild(s, sim, keys)) != HS_OK) return status;
    stages_begin_round(&s->st, round);
    for (int i = 0; i < sim->world.n && status == HS_OK; i++) {
        s->step[i] = 0;
        status = motor_start_step(s, sim, i);
    }
    return status;
}

/* drop: the model j sent i for the steps of slot was lost. */
static void motor_mark_lost(MotorState *s, int i, int j, int slot)
{
    for (int k = s->topology.offsets[i]; k < s->topology.offsets[i + 1]; k++)
        if (s->topology.adj[k] == j) *motor_lost(s, slot, k) = 1;
}

static int motor_on_event(void *state, Sim *sim, const Event *ev)
{
    MotorState *s = state;
    int from;
    if (ev->kind == MOTOR_COMPUTED) s->computed[ev->agent] = 1;
    else {
        int slot = (int)(ev->data % s->slots);
        s->received[(size_t)ev->agent * (size_t)s->slots + (size_t)slot]++;
        if (engine_delivery_lost(sim->engine, &from)) motor_mark_lost(s, ev->agent, from, slot);
    }
    return motor_try_finish(s, sim, ev->agent);
}

static int motor_round_end(void *state, Sim *sim, int round)
{
    MotorState *s = state;
    s->base += s->round_steps;
    sim->round_extra = s->changed;
    return HS_OK;
}

static void motor_destroy(void *state)
{
    MotorState *s = state;
    if (s == NULL) return;
    topology_free(&s->topology);
    free(s->period);
    free(s->step);
    free(s->computed);
    free(s->received);
    free(s->lost);
    stages_free(&s->st);
    free(s->who);
    free(s->vectors);
    free(s->weights);
    free(s);
}

static const SchemaKey motor_keys[] = {
    METHOD_KEY_IN(MotorKeys, pruning., prune_target, "makespan",
                  "makespan (keep ratio that meets the median agent's compute time) or a fixed keep ratio for the "
                  "agents slower than the median",
                  .type = SCHEMA_WORD_OR_REAL, .choices = "makespan", .min = 0, .max = 1, .flags = SCHEMA_OPEN_MIN),
    METHOD_KEY_IN(MotorKeys, pruning., prune_min, "0.0625", "smallest keep ratio prune_target = makespan may choose",
                  .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OPEN_MIN),
    METHOD_KEY(MotorKeys, rebuild, "1", "rounds between rebuilds of the topology from the link rates",
               .type = SCHEMA_INT, .min = 1, .max = 100000000),
    METHOD_KEY(MotorKeys, max_degree, "2",
               "neighbours an agent takes, fastest links first (more only where needed to connect the graph)",
               .type = SCHEMA_INT, .min = 1, .max = 100000),
    METHOD_KEY(MotorKeys, max_period, "4",
               "largest gossip period of a slow link, in steps (1: every link every step)", .type = SCHEMA_INT,
               .min = 1, .max = 16),
    {0},
};

#define MOTOR_PRUNED "MOTOR's agents train nested sub-models of different widths (it always prunes), and "

static const MethodStages motor_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient of its sub-model at its own model",
    .outgoing = "its sub-model over the links active at the step",
    .aggregate = "Metropolis-Hastings mix over the step's active links, per coordinate over the holders",
    .refuses = {
        [FEATURE_COMPRESSION] = MOTOR_PRUNED "a compressed difference of a sub-model, and a skipped link leaving a "
                                "neighbour's public copy (CHOCO) stale, are not modelled",
        [FEATURE_BYZANTINE] = MOTOR_PRUNED "robust rules over vectors holding different coordinates are not modelled",
        [FEATURE_PRIVACY_SAMPLE] = MOTOR_PRUNED "DP-SGD's per-sample clipping of a sub-model's gradient is not modelled",
        [FEATURE_PRIVACY_UPDATE] = STAGE_NO_TRUSTED_AGGREGATOR,
        [FEATURE_PRUNE] = "MOTOR always prunes, by its own keys prune_target and prune_min: there is no prune key "
                          "to set",
        [FEATURE_FREEZE] = MOTOR_PRUNED "progressive freezing cuts the model by stages, not by width",
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_GOSSIP,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_GOSSIP,
    },
};

static const MethodExtra motor_extras[] = {
    {.meaning = "links added plus removed by the round's topology rebuild (round 0: links built; 0 without a rebuild)"},
    {0},
};

const MethodOps method_motor = {
    .name = "motor",
    .summary = "MOTOR (Jiang et al., TPDS 2023): D-PSGD with compute-fitted sub-models over a graph it rebuilds "
               "from the link rates ([topology] refused); a slow link gossips every f-th step",
    .capabilities = METHOD_BUILDS_TOPOLOGY | METHOD_LOSSY_LINKS | METHOD_DROPS_LOST,
    .keys = motor_keys,
    .keys_size = sizeof(MotorKeys),
    .stages = &motor_stages,
    .extra = motor_extras,
    .create = motor_create,
    .round_begin = motor_round_begin,
    .on_event = motor_on_event,
    .round_end = motor_round_end,
    .destroy = motor_destroy,
};
