/* divshare.c — DivShare (Biswas, Kermarrec, Marouani, Pires, Sharma, de Vos, "Boosting
 * Asynchronous Decentralized Learning with Model Fragmentation", WWW 2025, arXiv
 * 2410.12918). Asynchronous: a node trains `local_steps` steps, then splits its model
 * into `fragments` parameter subsets and sends each to `degree` nodes drawn uniformly
 * from all other nodes (no [topology]: the paper samples among every node), in parallel
 * with its next computation. A receiver keeps what arrives and, at its next aggregation,
 * averages each fragment with its own parameters: x[p] = (x[p] + sum of the received
 * copies of p) / (1 + copies) per fragment (models/mix.h); parameters nobody sent stay.
 * Loop of a node: train `local_steps` steps → snapshot the model and queue its fragments
 * → aggregate what arrived → train again.
 *
 * Sending (the communication thread of the paper): a snapshot becomes a queue of
 * fragments x degree messages — fragments in a random order drawn per snapshot, each to
 * `degree` distinct nodes drawn uniformly. A node keeps one connection per peer, carrying
 * one message at a time: every queued message whose recipient has nothing from this node
 * on the wire starts at once, so messages to different peers are concurrent flows that
 * share the node's uplink and, under [network] model = maxmin, each recipient's downlink
 * with whatever else arrives there; a slow recipient holds up only its own messages.
 * When a newer snapshot is ready before the queue is empty, the messages not started yet
 * are dropped and the newer ones take their place (those on the wire finish): a node with
 * a slow uplink contributes the first fragments of every snapshot rather than a whole
 * stale model late, which is the paper's argument for fragmenting. hetsim's reading: the
 * paper's fragments are parameter subsets; here fragment k is the k-th contiguous slice
 * of the flat parameter vector, and the random order per snapshot spreads the slices
 * that get through. A message carries its slice as it was when the message started. A
 * recipient offline when its message would start is skipped (an offline node neither
 * sends nor receives; its links pause); the message counts as dropped.
 * Under [network] model = fifo a sender's flows queue on its uplink one at a time and
 * downlinks are unshared, so fan-in at a popular recipient costs nothing: fifo
 * understates the sharing DivShare's many small flows meet.
 *
 * prune = width and freeze = progressive (the local step's, sim/stages/local_step.h): a
 * node sends what it trains, its sub-model's or the stage's coordinates, so the
 * fragments are cut over those (fragment k: the k-th slice of the coordinates it held at
 * the snapshot, in index order; its bytes 4 per coordinate, the same count in timing
 * mode, local_step_bytes) and a message carries their indices with their values; a
 * receiver averages per coordinate over the copies it got and its own value where it
 * holds the coordinate (a coordinate it does not hold takes the copies' mean, as
 * aggregate_gossip's masked form), and leaves the coordinates its step may not move
 * (the frozen blocks) where they are.
 *
 * Rounds: round r ends when every node has done r+1 passes over its own data
 * (sim/methods/async_round.h). rounds.extra = fragment messages dropped in the round
 * (replaced by a newer snapshot before they started, or their recipient offline). */
#include "models/mix.h"
#include "sim/methods/method.h"
#include "sim/methods/async_round.h"
#include "sim/kernel/rng.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { DIVSHARE_COMPUTED = ENGINE_EVENT_METHOD, DIVSHARE_FRAGMENT };
enum { DIVSHARE_SNAPSHOT = 0 };
enum { DIVSHARE_MAX_FRAGMENTS = 65536, DIVSHARE_MAX_SLOTS = 1 << 20 };

typedef struct DivshareNode {
    int block_left;      /* local steps left before the next snapshot */
    int *fragment, *to;  /* (fragments x degree) the message queue of the current snapshot */
    char *started;       /* (fragments x degree) */
    int n_queue, first;  /* messages queued; all before `first` have started */
    int *slot_to;        /* (n_slots) recipient of the message in that slot, -1: free */
    float *slot_data;    /* (n_slots x longest) train mode: the slice it carries */
    int n_slots;
    long draws;          /* draws from its stream so far */
    /* prune, freeze: */
    size_t snap_held;    /* coordinates held at the snapshot (both modes) */
    uint32_t *snap_index;/* (params) train mode: their indices, ascending */
    uint32_t *slot_index;/* (n_slots x longest) train mode: the indices a message carries */
    size_t *slot_len;    /* (n_slots) train mode: how many */
} DivshareNode;

typedef struct DivshareState {
    int fragments, degree, local_steps;
    size_t params;       /* parameters of the model (both modes) */
    Stages st;           /* the local step (DP-SGD) */
    long *steps;         /* (n) local steps, all rounds */
    DivshareNode *nodes;
    int *scratch;        /* (max(n, fragments)) */
    int *pool;           /* (n) */
    int n_nodes;
    double *sum;         /* (n x params) train mode: received copies, summed */
    int *count;          /* (n x fragments) train mode: copies received per fragment */
    size_t longest;      /* parameters of the longest fragment */
    int masked;          /* prune or freeze: fragments over what a node trains */
    size_t extent;       /* masked: coordinates a node may hold: the blocks, and under freeze the
                          * auxiliary heads after them (a stage's output module, models/model.h) */
    int *held_count;     /* (n x params) masked, train mode: copies received per coordinate */
    gsl_rng *rng;
    AsyncRound rounds;
    long dropped;        /* this round */
} DivshareState;

/* [method] keys (divshare_keys below) */
typedef struct DivshareKeys {
    int fragments, degree;
    int local_steps;     /* 0: epoch */
    PruneKeys pruning;
    FreezeKeys freezing;
} DivshareKeys;

static int divshare_create(Sim *sim, void **state)
{
    DivshareState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int n = sim->world.n, status;
    const DivshareKeys *keys = scenario_method_keys(sim->sc);
    s->fragments = keys->fragments;
    s->degree = keys->degree;
    s->local_steps = keys->local_steps;
    s->params = (size_t)sim->profile.total_params;
    s->steps = calloc((size_t)n, sizeof *s->steps);
    s->nodes = calloc((size_t)n, sizeof *s->nodes);
    s->scratch = malloc((size_t)(n > s->fragments ? n : s->fragments) * sizeof *s->scratch);
    s->pool = malloc((size_t)n * sizeof *s->pool);
    s->rng = gsl_rng_alloc(gsl_rng_taus2);
    if (!s->steps || !s->nodes || !s->scratch || !s->pool || !s->rng) return HS_E_NOMEM;
    s->n_nodes = n;
    size_t queue = (size_t)s->fragments * (size_t)s->degree;
    for (int i = 0; i < n; i++) {
        DivshareNode *d = &s->nodes[i];
        d->fragment = malloc(queue * sizeof *d->fragment);
        d->to = malloc(queue * sizeof *d->to);
        d->started = calloc(queue, 1);
        if (!d->fragment || !d->to || !d->started) return HS_E_NOMEM;
    }
    size_t begin, end;
    mix_fragment_bounds(s->params, s->fragments, 0, &begin, &end);
    s->longest = end - begin;
    if ((status = trainer_setup_local(sim->trainer, 1)) != HS_OK) return status;
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    s->masked = s->st.step.prune.on || s->st.step.freeze_rounds;
    /* the model's blocks come first in the trainer's vector, ComDML's auxiliary heads
     * after them (models/model.h): fragments, copies and bytes cover the blocks only */
    if (sim->trainer && trainer_param_count(sim->trainer) < s->params)
        return hs_diag_set(sim->diag, HS_E_INTERNAL, NULL, 0, "%s: the model has %zu parameters, its profile %zu",
                           "divshare", trainer_param_count(sim->trainer), s->params);
    if (sim->trainer) {
        s->sum = calloc((size_t)n * s->params, sizeof *s->sum);
        s->count = calloc((size_t)n * (size_t)s->fragments, sizeof *s->count);
        if (s->sum == NULL || s->count == NULL) return HS_E_NOMEM;
        if (s->masked) {
            s->extent = s->st.step.freeze_rounds ? trainer_param_count(sim->trainer) : s->params;
            free(s->sum);
            s->sum = calloc((size_t)n * s->extent, sizeof *s->sum);
            s->held_count = calloc((size_t)n * s->extent, sizeof *s->held_count);
            if (s->sum == NULL || s->held_count == NULL) return HS_E_NOMEM;
            for (int i = 0; i < n; i++)
                if ((s->nodes[i].snap_index = malloc(s->extent * sizeof *s->nodes[i].snap_index)) == NULL)
                    return HS_E_NOMEM;
        }
    }
    return HS_OK;
}

/* Fragment k of node d's snapshot: its span of the parameters, or under prune and freeze
 * of the coordinates held at the snapshot. */
static void divshare_fragment(const DivshareState *s, const DivshareNode *d, int k, size_t *begin, size_t *end)
{
    mix_fragment_bounds(s->masked ? d->snap_held : s->params, s->fragments, k, begin, end);
}

/* prune, freeze: the coordinates node i holds now (its sub-model's, the stage's), counted
 * as the local step counts its bytes; in train mode their indices. */
static int divshare_snapshot_held(DivshareState *s, Sim *sim, int i)
{
    DivshareNode *d = &s->nodes[i];
    d->snap_held = (size_t)(local_step_bytes(&s->st.step, i) / 4.0);
    if (!sim->trainer) return HS_OK;
    const unsigned char *held = local_step_held(&s->st.step, i);
    size_t m = 0;
    for (size_t p = 0; p < s->extent; p++)
        if (held == NULL || held[p]) d->snap_index[m++] = (uint32_t)p;
    if (m != d->snap_held)
        return hs_diag_set(sim->diag, HS_E_INTERNAL, NULL, 0, "divshare: node %d holds %zu coordinates, its bytes say %zu",
                           i, m, d->snap_held);
    return HS_OK;
}

/* prune, freeze: node i's aggregation, per coordinate over the copies received and its own
 * value where it holds the coordinate; what its step may not move stays. */
static void divshare_masked_average(DivshareState *s, Sim *sim, int i)
{
    float *x = trainer_params(sim->trainer, i);
    double *sum = s->sum + (size_t)i * s->extent;
    int *count = s->held_count + (size_t)i * s->extent;
    const unsigned char *held = local_step_held(&s->st.step, i), *moving = local_step_moving(&s->st.step);
    for (size_t p = 0; p < s->extent; p++) {
        if (count[p] == 0) continue;
        if (moving == NULL || moving[p]) {
            int own = held == NULL || held[p];
            x[p] = (float)(((own ? (double)x[p] : 0.0) + sum[p]) / (double)(own + count[p]));
        }
        sum[p] = 0;
        count[p] = 0;
    }
}

static void divshare_reseed(DivshareState *s, Sim *sim, int i)
{
    rng_stream_reset(s->rng, sim->sc->seed, (uint64_t)i * 1000003u + (uint64_t)s->nodes[i].draws++, RNG_PURPOSE_METHOD);
}

static int divshare_block_steps(const DivshareState *s, const Sim *sim, int i)
{
    return s->local_steps > 0 ? s->local_steps : sim_agent_steps(sim, i);
}

static int divshare_compute(DivshareState *s, Sim *sim, int i)
{
    double finish;
    int status = engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), DIVSHARE_COMPUTED, 0, &finish);
    if (status != HS_OK) return status;
    if (async_round_stranded(sim, i, s->steps[i], finish)) return engine_fail_stranded(sim->engine, i);
    return HS_OK;
}

/* A free message slot of node i (grown when none is); -1 when out of memory. */
static int divshare_slot(DivshareState *s, Sim *sim, DivshareNode *d)
{
    for (int k = 0; k < d->n_slots; k++)
        if (d->slot_to[k] < 0) return k;
    if (d->n_slots == DIVSHARE_MAX_SLOTS) return -1;
    int *to = realloc(d->slot_to, (size_t)(d->n_slots + 1) * sizeof *to);
    if (to == NULL) return -1;
    d->slot_to = to;
    if (sim->trainer) {
        float *data = realloc(d->slot_data, (size_t)(d->n_slots + 1) * s->longest * sizeof *data);
        if (data == NULL) return -1;
        d->slot_data = data;
    }
    if (sim->trainer && s->masked) {
        uint32_t *index = realloc(d->slot_index, (size_t)(d->n_slots + 1) * s->longest * sizeof *index);
        if (index == NULL) return -1;
        d->slot_index = index;
        size_t *len = realloc(d->slot_len, (size_t)(d->n_slots + 1) * sizeof *len);
        if (len == NULL) return -1;
        d->slot_len = len;
    }
    d->slot_to[d->n_slots] = -1;
    return d->n_slots++;
}

/* Starts every queued message of node i whose recipient has nothing from i on the wire. */
static int divshare_send_next(DivshareState *s, Sim *sim, int i)
{
    DivshareNode *d = &s->nodes[i];
    for (int q = d->first; q < d->n_queue; q++) {
        if (d->started[q]) continue;
        int to = d->to[q], busy = 0;
        for (int k = 0; k < d->n_slots && !busy; k++) busy = d->slot_to[k] == to;
        if (busy) continue;
        d->started[q] = 1;
        if (!engine_agent_online(sim->engine, to, engine_now(sim->engine))) {
            s->dropped++;
            continue;
        }
        int slot = divshare_slot(s, sim, d);
        if (slot < 0) return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory for fragments");
        d->slot_to[slot] = to;
        size_t begin, end;
        divshare_fragment(s, d, d->fragment[q], &begin, &end);
        const float *snapshot = sim->trainer ? trainer_buffer(sim->trainer, i, DIVSHARE_SNAPSHOT) : NULL;
        float *carried = sim->trainer ? d->slot_data + (size_t)slot * s->longest : NULL;
        if (sim->trainer && s->masked) { /* the held coordinates of the slice, with their indices */
            uint32_t *index = d->slot_index + (size_t)slot * s->longest;
            for (size_t a = begin; a < end; a++) {
                index[a - begin] = d->snap_index[a];
                carried[a - begin] = snapshot[d->snap_index[a]];
            }
            d->slot_len[slot] = end - begin;
        } else if (sim->trainer) { /* the slice as it is now travels with the message */
            memcpy(carried, snapshot + begin, (end - begin) * sizeof(float));
        }
        int64_t data = ((int64_t)i * DIVSHARE_MAX_SLOTS + slot) * DIVSHARE_MAX_FRAGMENTS + d->fragment[q];
        int status = engine_send(sim->engine, i, to, 4.0 * (double)(end - begin), DIVSHARE_FRAGMENT, data);
        if (status != HS_OK) return status;
    }
    while (d->first < d->n_queue && d->started[d->first]) d->first++;
    return HS_OK;
}

/* Node i ends a block: snapshot, queue the messages (dropping the unsent ones of the
 * previous snapshot), aggregate what arrived, train on. */
static int divshare_share(DivshareState *s, Sim *sim, int i)
{
    DivshareNode *d = &s->nodes[i];
    int n = sim->world.n, status;
    for (int q = d->first; q < d->n_queue; q++) s->dropped += !d->started[q];
    if (sim->trainer)
        memcpy(trainer_buffer(sim->trainer, i, DIVSHARE_SNAPSHOT), trainer_params(sim->trainer, i),
               s->params * sizeof(float));
    if (s->masked && (status = divshare_snapshot_held(s, sim, i)) != HS_OK) return status;
    divshare_reseed(s, sim, i);
    int *order = s->scratch; /* fragments in a random order */
    for (int k = 0; k < s->fragments; k++) order[k] = k;
    for (int a = s->fragments - 1; a > 0; a--) {
        int b = (int)gsl_rng_uniform_int(s->rng, (unsigned long)(a + 1));
        int tmp = order[a];
        order[a] = order[b];
        order[b] = tmp;
    }
    d->n_queue = d->first = 0;
    for (int a = 0; n > 1 && a < s->fragments; a++) {
        /* degree distinct recipients among the other nodes: partial Fisher-Yates */
        int m = 0;
        for (int j = 0; j < n; j++)
            if (j != i) s->pool[m++] = j;
        for (int x = 0; x < s->degree; x++) {
            int y = x + (int)gsl_rng_uniform_int(s->rng, (unsigned long)(m - x));
            int tmp = s->pool[x];
            s->pool[x] = s->pool[y];
            s->pool[y] = tmp;
            d->fragment[d->n_queue] = order[a];
            d->started[d->n_queue] = 0;
            d->to[d->n_queue++] = s->pool[x];
        }
    }
    if ((status = divshare_send_next(s, sim, i)) != HS_OK) return status;
    if (sim->trainer && s->masked)
        divshare_masked_average(s, sim, i);
    else if (sim->trainer)
        mix_fragment_average(trainer_params(sim->trainer, i), s->sum + (size_t)i * s->params,
                             s->count + (size_t)i * (size_t)s->fragments, s->params, s->fragments);
    d->block_left = divshare_block_steps(s, sim, i);
    return divshare_compute(s, sim, i);
}

static int divshare_round_begin(void *state, Sim *sim, int round)
{
    DivshareState *s = state;
    s->dropped = 0;
    stages_begin_round(&s->st, round);
    if (async_round_begin(&s->rounds, sim, round, s->steps) || round > 0) {
        if (engine_round_over(sim->engine)) sim->round_extra = 0;
        return HS_OK;
    }
    int status = HS_OK;
    for (int i = 0; i < sim->world.n && status == HS_OK; i++) {
        s->nodes[i].block_left = divshare_block_steps(s, sim, i);
        status = divshare_compute(s, sim, i);
    }
    return status;
}

static int divshare_on_event(void *state, Sim *sim, const Event *ev)
{
    DivshareState *s = state;
    if (ev->kind == DIVSHARE_FRAGMENT) {
        int k = (int)(ev->data % DIVSHARE_MAX_FRAGMENTS);
        int64_t sender = ev->data / DIVSHARE_MAX_FRAGMENTS;
        int from = (int)(sender / DIVSHARE_MAX_SLOTS), slot = (int)(sender % DIVSHARE_MAX_SLOTS);
        DivshareNode *d = &s->nodes[from];
        int to = ev->agent;
        if (sim->trainer && s->masked) {
            const float *carried = d->slot_data + (size_t)slot * s->longest;
            const uint32_t *index = d->slot_index + (size_t)slot * s->longest;
            double *sum = s->sum + (size_t)to * s->extent;
            int *count = s->held_count + (size_t)to * s->extent;
            for (size_t a = 0; a < d->slot_len[slot]; a++) {
                sum[index[a]] += carried[a];
                count[index[a]]++;
            }
        } else if (sim->trainer) {
            mix_fragment_receive(s->sum + (size_t)to * s->params, s->count + (size_t)to * (size_t)s->fragments,
                                 s->params, s->fragments, k, d->slot_data + (size_t)slot * s->longest);
        }
        d->slot_to[slot] = -1;
        return divshare_send_next(s, sim, from);
    }
    int i = ev->agent, status;
    if ((status = local_step_run(&s->st.step, i)) != HS_OK) return status;
    s->steps[i]++;
    if (async_round_step(&s->rounds, sim, i, s->steps[i])) sim->round_extra = (double)s->dropped;
    if (--s->nodes[i].block_left > 0) return divshare_compute(s, sim, i);
    return divshare_share(s, sim, i);
}

static void divshare_destroy(void *state)
{
    DivshareState *s = state;
    if (s == NULL) return;
    if (s->nodes)
        for (int i = 0; i < s->n_nodes; i++) {
            free(s->nodes[i].fragment);
            free(s->nodes[i].to);
            free(s->nodes[i].started);
            free(s->nodes[i].slot_to);
            free(s->nodes[i].slot_data);
            free(s->nodes[i].snap_index);
            free(s->nodes[i].slot_index);
            free(s->nodes[i].slot_len);
        }
    free(s->nodes);
    free(s->steps);
    free(s->scratch);
    free(s->pool);
    free(s->sum);
    free(s->count);
    free(s->held_count);
    if (s->rng) gsl_rng_free(s->rng);
    stages_free(&s->st);
    free(s);
}

static const SchemaKey divshare_keys[] = {
    METHOD_KEY(DivshareKeys, fragments, "8", "parameter subsets a model is split into (Omega)",
     .type = SCHEMA_INT, .min = 1, .max = DIVSHARE_MAX_FRAGMENTS, .limits = scenario_limit_params,
     .doc_range = "[1, 65536], at most the model's parameters"),
    METHOD_KEY(DivshareKeys, degree, "2", "recipients drawn per fragment (J; at most the other agents)",
     .type = SCHEMA_INT, .min = 1, .max = 1000000, .limits = scenario_limit_other_agents, .doc_range = "[1, agents - 1]"),
    METHOD_KEY(DivshareKeys, local_steps, "10", "local steps between two snapshots (`epoch`: one pass over the node's data)",
     .type = SCHEMA_STEPS, .min = 1, .max = 100000000),
    PRUNE_METHOD_KEYS(DivshareKeys, pruning.),
    FREEZE_METHOD_KEYS(DivshareKeys, freezing.),
    {0},
};

static const MethodStages divshare_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps on its own model",
    .outgoing = "fragments of its model to random nodes",
    .aggregate = "per-fragment average with the copies received",
    .refuses = {
        [FEATURE_COMPRESSION] = "a snapshot's fragments go to nodes drawn anew each time, which hold no copy of the "
                                "sender's model to add a compressed difference to (a copy per pair of nodes would be n "
                                "models per node); a compressed slice of the model itself is no model",
        [FEATURE_BYZANTINE] = "a node sums the fragment copies it receives as they come (no copy is kept apart): a "
                              "robust rule over them is not modelled",
        [FEATURE_PRIVACY_UPDATE] = STAGE_NO_TRUSTED_AGGREGATOR,
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_GOSSIP,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_GOSSIP,
    },
};

static const MethodExtra divshare_extras[] = {
    {.meaning = "fragment messages dropped (superseded by a newer snapshot, or recipient offline)"},
    {0},
};

const MethodOps method_divshare = {
    .name = "divshare",
    .summary = "DivShare: asynchronous; model fragments sent to random nodes while computing, averaged per fragment",
    .keys = divshare_keys,
    .keys_size = sizeof(DivshareKeys),
    .capabilities = METHOD_LOSSY_LINKS,
    .stages = &divshare_stages,
    .extra = divshare_extras,
    .create = divshare_create,
    .round_begin = divshare_round_begin,
    .on_event = divshare_on_event,
    .destroy = divshare_destroy,
};
