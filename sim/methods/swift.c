/* swift.c — SWIFT (Bornstein, Rabbani, Wang, Bedi, Huang, "SWIFT: Rapid Decentralized
 * Federated Learning via Wait-Free Model Communication", ICLR 2023). Wait-free: every
 * client trains at its own pace on its own model; every `period` local steps (the
 * communication set C_s: iterations that are multiples of s) it averages its model with
 * the latest copy it holds of each [topology] neighbour's model and broadcasts the result
 * to its neighbours without waiting for anything (non-blocking sends). A neighbour that
 * has sent nothing new is represented by the copy it sent last (initially the common
 * starting model), so no client ever waits for a slow one.
 *   x_i ← (x_i + Σ_{j ∈ N(i)} x̂_j) / (1 + |N(i)|)          (models/mix.h)
 * hetsim's reading of the paper's weights: uniform over the closed neighbourhood; the
 * paper's client-influence scores (non-uniform p_i) are not modelled.
 * A message carries the model as it was when sent; the receiver replaces its copy on
 * arrival. A broadcast skips a neighbour whose previous message from this client is still
 * on the wire (it gets the next one): the queue of a slow link stays bounded, a slow
 * neighbour does not hold back the others, and what arrives is as fresh as the link
 * allows. Neighbours offline when a broadcast starts are skipped too (an offline client
 * neither sends nor receives); they keep their older copy.
 * Memory (train mode): two model copies per directed edge of the graph (what is on the
 * wire, what the receiver holds).
 *
 * Rounds: round r ends when every client has done r+1 passes over its own data
 * (sim/methods/async_round.h). rounds.extra = mean staleness of the neighbour copies the
 * round's averagings used: local steps the neighbour had done since the copy was sent. */
#include "models/mix.h"
#include "sim/methods/method.h"
#include "sim/methods/async_round.h"
#include "sim/scenario/topology.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SWIFT_COMPUTED = ENGINE_EVENT_METHOD, SWIFT_MODEL };

typedef struct SwiftState {
    Topology topology;
    int period;
    size_t params;
    long *steps;          /* (n) local steps, all rounds */
    char *in_flight;      /* (edges) per slot offsets[i] + q: a message i -> its q-th
                           * neighbour is on the wire */
    long *sent_step;      /* (edges) the sender's step count when that message left */
    float *outbox;        /* (edges x params) train mode: the model that message carries */
    long *copy_step;      /* (edges) per slot offsets[j] + q: sent_step of the copy j holds
                           * of its q-th neighbour */
    float *copies;        /* (edges x params) train mode: those copies */
    const float **gather; /* (max degree + 1) */
    int *who;             /* (max degree + 1) the closed neighbourhood, self first */
    double *weights;      /* (max degree + 1) */
    float *mixed;         /* (params) train mode: the stages' average before it replaces x_i */
    Stages st;
    AsyncRound rounds;
    double staleness_sum; /* this round */
    long staleness_count;
} SwiftState;

/* [method] keys (swift_keys below) */
typedef struct SwiftKeys {
    int period;
    PruneKeys pruning;
    FreezeKeys freezing;
} SwiftKeys;

static int swift_create(Sim *sim, void **state)
{
    SwiftState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int n = sim->world.n, status = scenario_topology(sim->sc, n, &s->topology, sim->diag);
    if (status != HS_OK) return status;
    s->period = ((const SwiftKeys *)scenario_method_keys(sim->sc))->period;
    s->params = (size_t)sim->profile.total_params;
    size_t edges = (size_t)s->topology.offsets[n];
    int max_degree = 1;
    for (int i = 0; i < n; i++)
        if (topology_degree(&s->topology, i) > max_degree) max_degree = topology_degree(&s->topology, i);
    s->steps = calloc((size_t)n, sizeof *s->steps);
    s->in_flight = calloc(edges ? edges : 1, sizeof *s->in_flight);
    s->sent_step = calloc(edges ? edges : 1, sizeof *s->sent_step);
    s->copy_step = calloc(edges ? edges : 1, sizeof *s->copy_step);
    s->gather = malloc((size_t)(max_degree + 1) * sizeof *s->gather);
    s->who = malloc((size_t)(max_degree + 1) * sizeof *s->who);
    s->weights = malloc((size_t)(max_degree + 1) * sizeof *s->weights);
    if (!s->steps || !s->in_flight || !s->sent_step || !s->copy_step || !s->gather || !s->who || !s->weights)
        return HS_E_NOMEM;
    if ((status = trainer_setup_local(sim->trainer, 0)) != HS_OK) return status;
    const SwiftKeys *keys = scenario_method_keys(sim->sc);
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    if (sim->trainer && !stages_gossip_plain(&s->st) && (s->mixed = malloc(s->params * sizeof *s->mixed)) == NULL)
        return HS_E_NOMEM;
    /* the model's blocks come first in the trainer's vector, ComDML's auxiliary heads
     * after them (models/model.h): fragments, copies and bytes cover the blocks only */
    if (sim->trainer && trainer_param_count(sim->trainer) < s->params)
        return hs_diag_set(sim->diag, HS_E_INTERNAL, NULL, 0, "%s: the model has %zu parameters, its profile %zu",
                           "swift", trainer_param_count(sim->trainer), s->params);
    if (sim->trainer) {
        s->copies = malloc((edges ? edges : 1) * s->params * sizeof *s->copies);
        s->outbox = malloc((edges ? edges : 1) * s->params * sizeof *s->outbox);
        if (s->copies == NULL || s->outbox == NULL) return HS_E_NOMEM;
        /* every client starts from the same model: that is the copy it holds of each */
        for (size_t slot = 0; slot < edges; slot++)
            memcpy(s->copies + slot * s->params, trainer_params(sim->trainer, 0), s->params * sizeof(float));
    }
    return HS_OK;
}

static int swift_compute(SwiftState *s, Sim *sim, int i)
{
    double finish;
    int status = engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), SWIFT_COMPUTED, 0, &finish);
    if (status != HS_OK) return status;
    if (async_round_stranded(sim, i, s->steps[i], finish)) return engine_fail_stranded(sim->engine, i);
    return HS_OK;
}

/* Client i's communication iteration: average with its copies, then broadcast. */
static int swift_communicate(SwiftState *s, Sim *sim, int i)
{
    const int *neighbours = s->topology.adj + s->topology.offsets[i];
    int degree = topology_degree(&s->topology, i);
    for (int q = 0; q < degree; q++) {
        size_t slot = (size_t)s->topology.offsets[i] + (size_t)q;
        s->staleness_sum += (double)(s->steps[neighbours[q]] - s->copy_step[slot]);
        s->staleness_count++;
        if (sim->trainer) s->gather[q] = s->copies + slot * s->params;
    }
    if (sim->trainer) {
        float *x = trainer_params(sim->trainer, i);
        if (stages_gossip_plain(&s->st)) {
            mix_neighbourhood_average(x, s->gather, degree, s->params);
        } else {
            /* the stages' gossip form: uniform weights over the closed neighbourhood */
            for (int q = degree; q > 0; q--) {
                s->gather[q] = s->gather[q - 1];
                s->who[q] = neighbours[q - 1];
            }
            s->gather[0] = x;
            s->who[0] = i;
            for (int q = 0; q <= degree; q++) s->weights[q] = 1.0 / (degree + 1);
            int status = stages_gossip(&s->st, s->who, s->gather, s->weights, degree + 1, s->params, s->mixed);
            if (status != HS_OK) return status;
            memcpy(x, s->mixed, s->params * sizeof *x);
        }
    }
    for (int q = 0; q < degree; q++) {
        size_t slot = (size_t)s->topology.offsets[i] + (size_t)q;
        if (s->in_flight[slot] || !engine_agent_online(sim->engine, neighbours[q], engine_now(sim->engine))) continue;
        double bytes = local_step_bytes(&s->st.step, i);
        if (outgoing_compresses(&s->st.out)) {
            /* the difference to the copy the receiver holds of i (nothing is in flight on this
             * link, so it holds the last message): that copy plus C(difference) arrives */
            int j = neighbours[q], r = s->topology.offsets[j];
            while (s->topology.adj[r] != i) r++;
            float *copy = s->copies ? s->copies + (size_t)r * s->params : NULL;
            outgoing_difference(&s->st.out, i, s->copies ? trainer_params(sim->trainer, i) : NULL, copy,
                                s->copies ? s->outbox + slot * s->params : NULL);
            bytes = outgoing_bytes(&s->st.out, i);
        } else if (sim->trainer) {
            memcpy(s->outbox + slot * s->params, trainer_params(sim->trainer, i), s->params * sizeof(float));
        }
        s->in_flight[slot] = 1;
        s->sent_step[slot] = s->steps[i];
        int64_t tag = ((int64_t)i << 32) | q;
        int status = engine_send(sim->engine, i, neighbours[q], bytes, SWIFT_MODEL, tag);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

static int swift_round_begin(void *state, Sim *sim, int round)
{
    SwiftState *s = state;
    s->staleness_sum = 0;
    s->staleness_count = 0;
    stages_begin_round(&s->st, round);
    if (async_round_begin(&s->rounds, sim, round, s->steps) || round > 0) return HS_OK;
    int status = HS_OK;
    for (int i = 0; i < sim->world.n && status == HS_OK; i++) status = swift_compute(s, sim, i);
    return status;
}

static int swift_on_event(void *state, Sim *sim, const Event *ev)
{
    SwiftState *s = state;
    if (ev->kind == SWIFT_MODEL) {
        int to = ev->agent, from = (int)(ev->data >> 32);
        size_t sent = (size_t)s->topology.offsets[from] + (size_t)(ev->data & 0xffffffff);
        const int *neighbours = s->topology.adj + s->topology.offsets[to];
        int degree = topology_degree(&s->topology, to), q = 0;
        while (q < degree && neighbours[q] != from) q++;
        size_t slot = (size_t)s->topology.offsets[to] + (size_t)q;
        s->copy_step[slot] = s->sent_step[sent];
        if (sim->trainer)
            memcpy(s->copies + slot * s->params, s->outbox + sent * s->params, s->params * sizeof(float));
        s->in_flight[sent] = 0;
        return HS_OK;
    }
    int i = ev->agent, status;
    /* nothing changes x_i while it computes (copies change, x_i only at its own events),
     * so the step at the end of the computation is the step at its start */
    if ((status = local_step_run(&s->st.step, i)) != HS_OK) return status;
    s->steps[i]++;
    if (s->steps[i] % s->period == 0 && (status = swift_communicate(s, sim, i)) != HS_OK) return status;
    if (async_round_step(&s->rounds, sim, i, s->steps[i]))
        sim->round_extra = s->staleness_count ? s->staleness_sum / (double)s->staleness_count : NAN;
    return swift_compute(s, sim, i);
}

static void swift_destroy(void *state)
{
    SwiftState *s = state;
    if (s == NULL) return;
    topology_free(&s->topology);
    free(s->steps);
    free(s->in_flight);
    free(s->sent_step);
    free(s->copy_step);
    free(s->copies);
    free(s->outbox);
    free(s->gather);
    free(s->who);
    free(s->weights);
    free(s->mixed);
    stages_free(&s->st);
    free(s);
}

static const SchemaKey swift_keys[] = {
    METHOD_KEY(SwiftKeys, period, "1", "local steps between averagings (s of the communication set C_s)",
     .type = SCHEMA_INT, .min = 1, .max = 100000000),
    PRUNE_METHOD_KEYS(SwiftKeys, pruning.),
    FREEZE_METHOD_KEYS(SwiftKeys, freezing.),
    {0},
};

static const MethodStages swift_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps on its own model",
    .outgoing = "its model to its neighbours",
    .aggregate = "average with the neighbours' last copies",
    .refuses = {
        [FEATURE_PRIVACY_UPDATE] = STAGE_NO_TRUSTED_AGGREGATOR,
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_GOSSIP,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_GOSSIP,
    },
};

static const MethodExtra swift_extras[] = {
    {.meaning = "mean staleness of the neighbour copies used (their local steps since sent)"},
    {0},
};

const MethodOps method_swift = {
    .name = "swift",
    .summary = "SWIFT: wait-free; every period steps average with the neighbours' last-received models, broadcast",
    .keys = swift_keys,
    .keys_size = sizeof(SwiftKeys),
    .capabilities = METHOD_USES_TOPOLOGY | METHOD_SENDS_DIFFERENCES | METHOD_LOSSY_LINKS,
    .stages = &swift_stages,
    .extra = swift_extras,
    .create = swift_create,
    .round_begin = swift_round_begin,
    .on_event = swift_on_event,
    .destroy = swift_destroy,
};
