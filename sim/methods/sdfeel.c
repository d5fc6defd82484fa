/* sdfeel.c — SD-FEEL, semi-decentralized federated edge learning (Sun, Zhang, Wang,
 * Letaief et al., "Semi-Decentralized Federated Edge Learning for Fast Convergence on
 * Non-IID Data", IEEE WCNC 2022, and the journal version with the asynchronous variant,
 * "Semi-Decentralized Federated Edge Learning with Data and Device Heterogeneity", IEEE
 * TNSM 2023). The synchronous training algorithm, with its three steps:
 *   local model update     every client runs tau1 = `local_steps` SGD steps (the [model]
 *                          optimiser) on its own data, starting from its edge server's model;
 *   intra-cluster          it uploads its model to its edge server, which averages its
 *   aggregation            clients' models by samples (y_d = sum m_i w_i / sum m_i) and sends
 *                          y_d back; tau2 = `intra_rounds` times;
 *   inter-cluster          then the edge servers run alpha = `gossip_steps` rounds of gossip
 *   aggregation            over [topology] (a graph over the servers): y_d <- sum_j P_dj y_j,
 *                          P the Metropolis-Hastings weights, each step a model to every
 *                          neighbour; then the next round's local updates begin.
 * Servers are [servers] (count E, node world.n + d); clients are assigned once
 * (`[servers] assign`): round-robin (client i to server i mod E), a FILE.assign
 * (sim/server_assign.h) or nearest. hetsim has
 * no positions, so "nearest" is the server the client's model reaches soonest when the
 * server's downlink is shared by the clients given to it so far: clients in index order
 * each take the server with the smallest larger-latency + bytes x (clients + 1) /
 * min(client's uplink, server's downlink), lowest index on a tie — with identical
 * servers this is round-robin, with a fast and a slow server the fast one takes more. Every message is engine_send over
 * the nodes' own links (the server's uplink shared by its downloads, its downlink by its
 * clients' uploads and its neighbours' models); a server processes each arriving model
 * on its processor (2 d FLOPs: one axpy).
 * Synchronisation is what the algorithm needs and no more: a cluster waits for its own
 * clients; a gossip step waits for the neighbours' models of the same step (neighbours
 * can be at most one step apart, so two message slots per server suffice); a server
 * that finished its gossip sends its model to its clients at once, without waiting for
 * the other servers. Round r ends when every server has finished round r's gossip (a
 * faster cluster's next-round work counts in the round it happens in, as in adpsgd).
 * rounds.extra: the spread of the round, the time between the first and the last edge
 * server entering the round's gossip (how unevenly the clusters finish). The evaluated
 * model is the sample-weighted average of the edge servers' models.
 * Departures: the asynchronous, staleness-aware variant of the journal version is not
 * implemented; a server without clients goes straight to the gossip; clients keep their
 * optimiser state between periods (the paper's plain SGD has none). */
#include "models/model.h"
#include "sim/engine.h"
#include "sim/server_assign.h"
#include "sim/topology.h"
#include "sim/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SD_MODEL_ARRIVED = ENGINE_EVENT_METHOD, SD_STEPPED, SD_UPLOADED, SD_PROCESSED, SD_GOSSIP, SD_GOSSIP_PROCESSED,
       SD_GOSSIPED };

typedef struct SdServer {
    int *clients;         /* its cluster, in index order */
    int n_clients;
    double samples;       /* its clients' samples */
    int reported;         /* clients in this period */
    int period;           /* intra-cluster aggregations done this round */
    long step;            /* gossip steps done, all rounds */
    int received[2];      /* neighbours' models of step (parity) processed */
    int round;            /* the round it works on */
    float *y;             /* (d) its model */
    float *sum[2];        /* (d) sum_j P_dj y_j of the step with that parity */
    float *out[2];        /* (d) the model it sent for that step (neighbours read it) */
} SdServer;

typedef struct SdState {
    Topology topology;    /* over the servers */
    int n, E, first;      /* agents, servers, node of server 0 */
    int *server_of;       /* (n) */
    int *remaining;       /* (n) local steps left */
    SdServer *servers;
    int local_steps, intra, gossip;
    int done;             /* servers that finished the current round's gossip */
    int round;
    double step_flops, bytes, process_flops;
    /* per round: the first and last time a server entered its gossip (servers may run a
     * round or more ahead of the slowest, so these are kept for every round) */
    double *first_gossip, *last_gossip;
    int n_gossip_rounds;
    const float **vectors; /* (n) scratch for the intra-cluster average */
    double *weights;
    size_t d;
} SdState;

static void sdfeel_destroy(void *state)
{
    SdState *s = state;
    if (s == NULL) return;
    for (int k = 0; s->servers && k < s->E; k++) {
        SdServer *v = &s->servers[k];
        free(v->clients);
        free(v->y);
        for (int p = 0; p < 2; p++) {
            free(v->sum[p]);
            free(v->out[p]);
        }
    }
    free(s->servers);
    free(s->first_gossip);
    free(s->last_gossip);
    free(s->vectors);
    free(s->weights);
    free(s->server_of);
    free(s->remaining);
    topology_free(&s->topology);
    free(s);
}

/* Time for a model from client i to reach server node v while `sharing` models cross
 * the server's downlink. */
static double sdfeel_reach(const Engine *e, int i, int v, double bytes, int sharing)
{
    const AgentProfile *a = &e->world.agents[i], *b = &e->world.agents[v];
    double bandwidth = a->uplink < b->downlink ? a->uplink : b->downlink;
    return (a->latency > b->latency ? a->latency : b->latency) + bytes * sharing / bandwidth;
}

static int sdfeel_assign(SdState *s, Engine *e)
{
    int nearest = e->sc->server_assign == SERVER_ASSIGN_NEAREST, given = e->sc->server_assign == SERVER_ASSIGN_FILE;
    /* the file was checked when the scenario was read; it is read again here */
    if (given && server_assign_load(e->sc->server_assign_file, s->n, s->E, s->server_of, e->diag) != HS_OK)
        return HS_E_INPUT;
    for (int i = 0; i < s->n; i++) {
        int best = given ? s->server_of[i] : i % s->E;
        if (nearest) {
            best = 0;
            for (int k = 1; k < s->E; k++)
                if (sdfeel_reach(e, i, s->first + k, s->bytes, s->servers[k].n_clients + 1) <
                    sdfeel_reach(e, i, s->first + best, s->bytes, s->servers[best].n_clients + 1))
                    best = k;
        }
        s->server_of[i] = best;
        s->servers[best].n_clients++;
        s->servers[best].samples += e->world.agents[i].samples;
    }
    for (int k = 0; k < s->E; k++) {
        SdServer *v = &s->servers[k];
        v->clients = malloc((size_t)(v->n_clients > 0 ? v->n_clients : 1) * sizeof *v->clients);
        if (v->clients == NULL) return HS_E_NOMEM;
        v->n_clients = 0;
    }
    for (int i = 0; i < s->n; i++) {
        SdServer *v = &s->servers[s->server_of[i]];
        v->clients[v->n_clients++] = i;
    }
    return HS_OK;
}

static int sdfeel_create(Engine *e, void **state)
{
    SdState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    s->n = e->world.n;
    s->E = e->world.n_servers;
    s->first = e->world.n;
    s->local_steps = scenario_param_int(e->sc, "local_steps");
    s->intra = scenario_param_int(e->sc, "intra_rounds");
    s->gossip = scenario_param_int(e->sc, "gossip_steps");
    s->step_flops = engine_step_flops(e, e->sc->model.batch);
    s->bytes = engine_model_bytes(e);
    s->process_flops = 2.0 * e->profile.total_params;
    int status = topology_build(e->sc, s->E, &s->topology, e->diag);
    if (status != HS_OK) return status;
    s->server_of = calloc((size_t)s->n, sizeof *s->server_of);
    s->remaining = calloc((size_t)s->n, sizeof *s->remaining);
    s->servers = calloc((size_t)s->E, sizeof *s->servers);
    if (!s->server_of || !s->remaining || !s->servers) return HS_E_NOMEM;
    if ((status = sdfeel_assign(s, e)) != HS_OK) return status;
    if ((status = trainer_setup_shared(e->trainer)) != HS_OK) return status;
    if ((status = trainer_setup_local(e->trainer, 0)) != HS_OK) return status;
    if (e->trainer == NULL) return HS_OK;
    s->d = trainer_param_count(e->trainer);
    s->vectors = calloc((size_t)s->n, sizeof *s->vectors);
    s->weights = calloc((size_t)s->n, sizeof *s->weights);
    if (!s->vectors || !s->weights) return HS_E_NOMEM;
    for (int k = 0; k < s->E; k++) {
        SdServer *v = &s->servers[k];
        v->y = malloc(s->d * sizeof *v->y);
        for (int p = 0; p < 2; p++) {
            v->sum[p] = calloc(s->d, sizeof *v->sum[p]);
            v->out[p] = malloc(s->d * sizeof *v->out[p]);
            if (!v->sum[p] || !v->out[p]) return HS_E_NOMEM;
        }
        if (v->y == NULL) return HS_E_NOMEM;
        memcpy(v->y, trainer_shared_params(e->trainer), s->d * sizeof *v->y);
    }
    return HS_OK;
}

/* Metropolis-Hastings weight of the link d-j. */
static double sdfeel_weight(const SdState *s, int d, int j)
{
    int a = topology_degree(&s->topology, d), b = topology_degree(&s->topology, j);
    return 1.0 / (1.0 + (a > b ? a : b));
}

static int sdfeel_gossip_begin(SdState *s, Engine *e, int k);

/* Server k sends its model to its clients: the start of a local period (or, without
 * clients, straight to the gossip when the periods are over). */
static int sdfeel_period_begin(SdState *s, Engine *e, int k)
{
    SdServer *v = &s->servers[k];
    v->reported = 0;
    if (v->n_clients == 0) {
        v->period = s->intra;
        return sdfeel_gossip_begin(s, e, k);
    }
    for (int c = 0; c < v->n_clients; c++) engine_send(e, s->first + k, v->clients[c], s->bytes, SD_MODEL_ARRIVED, k);
    return HS_OK;
}

/* Server k sends its model of gossip step v->step to every neighbour. */
static int sdfeel_gossip_begin(SdState *s, Engine *e, int k)
{
    SdServer *v = &s->servers[k];
    if (v->step % s->gossip == 0) {
        /* entering the gossip of its round v->round */
        if (v->round >= s->n_gossip_rounds) {
            int grown = 2 * v->round + 8;
            double *a = realloc(s->first_gossip, (size_t)grown * sizeof *a);
            if (a) s->first_gossip = a;
            double *b = realloc(s->last_gossip, (size_t)grown * sizeof *b);
            if (b) s->last_gossip = b;
            if (!a || !b) return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory");
            for (int r = s->n_gossip_rounds; r < grown; r++) {
                s->first_gossip[r] = INFINITY;
                s->last_gossip[r] = -INFINITY;
            }
            s->n_gossip_rounds = grown;
        }
        if (e->now < s->first_gossip[v->round]) s->first_gossip[v->round] = e->now;
        if (e->now > s->last_gossip[v->round]) s->last_gossip[v->round] = e->now;
    }
    int parity = (int)(v->step & 1);
    if (v->y) memcpy(v->out[parity], v->y, s->d * sizeof *v->y);
    const int *neighbours = s->topology.adj + s->topology.offsets[k];
    int degree = topology_degree(&s->topology, k);
    for (int j = 0; j < degree; j++)
        engine_send(e, s->first + k, s->first + neighbours[j], s->bytes, SD_GOSSIP, ((int64_t)v->step << 20) | k);
    if (degree == 0) return engine_schedule(e, e->now, SD_GOSSIPED, s->first + k, k);
    /* neighbours ahead of it may have sent this step already */
    if (v->received[parity] == degree) return engine_schedule(e, e->now, SD_GOSSIPED, s->first + k, k);
    return HS_OK;
}

/* Server k has every neighbour's model of its current step: mix, then the next step or
 * the end of its round. */
static int sdfeel_gossiped(SdState *s, Engine *e, int k)
{
    SdServer *v = &s->servers[k];
    int parity = (int)(v->step & 1);
    if (v->y) {
        double self = 1.0;
        const int *neighbours = s->topology.adj + s->topology.offsets[k];
        for (int j = 0; j < topology_degree(&s->topology, k); j++) self -= sdfeel_weight(s, k, neighbours[j]);
        for (size_t p = 0; p < s->d; p++) v->y[p] = (float)(self * v->y[p]) + v->sum[parity][p];
        memset(v->sum[parity], 0, s->d * sizeof *v->sum[parity]);
    }
    v->received[parity] = 0;
    v->step++;
    if (v->step % s->gossip != 0) return sdfeel_gossip_begin(s, e, k);
    /* round over for this server: the next round's local work starts at once */
    v->period = 0;
    if (v->round++ == s->round && ++s->done == s->E) {
        e->round_extra = s->last_gossip[s->round] - s->first_gossip[s->round];
        engine_end_round(e);
    }
    return sdfeel_period_begin(s, e, k);
}

static int sdfeel_round_begin(void *state, Engine *e, int round)
{
    SdState *s = state;
    s->round = round;
    s->done = 0;
    /* servers already past this round's gossip (none before round 0) count as done */
    int status = HS_OK;
    for (int k = 0; k < s->E; k++)
        if (s->servers[k].round > round) s->done++;
    if (round > 0) {
        if (s->done == s->E) {
            e->round_extra = s->last_gossip[round] - s->first_gossip[round];
            engine_end_round(e);
        }
        return HS_OK;
    }
    for (int k = 0; k < s->E && status == HS_OK; k++) status = sdfeel_period_begin(s, e, k);
    return status;
}

static int sdfeel_on_event(void *state, Engine *e, const Event *ev)
{
    SdState *s = state;
    int status;
    switch (ev->kind) {
    case SD_MODEL_ARRIVED: {
        int i = ev->agent;
        SdServer *v = &s->servers[s->server_of[i]];
        if (v->y) memcpy(trainer_params(e->trainer, i), v->y, s->d * sizeof *v->y);
        s->remaining[i] = s->local_steps > 0 ? s->local_steps : engine_agent_steps(e, i);
        engine_compute(e, i, s->step_flops, SD_STEPPED, 0);
        return HS_OK;
    }
    case SD_STEPPED: {
        int i = ev->agent;
        if ((status = trainer_local_step(e->trainer, i)) != HS_OK) return status;
        if (--s->remaining[i] > 0) engine_compute(e, i, s->step_flops, SD_STEPPED, 0);
        else engine_send(e, i, s->first + s->server_of[i], s->bytes, SD_UPLOADED, i);
        return HS_OK;
    }
    case SD_UPLOADED:
        engine_compute(e, ev->agent, s->process_flops, SD_PROCESSED, ev->data);
        return HS_OK;
    case SD_PROCESSED: {
        int k = ev->agent - s->first;
        SdServer *v = &s->servers[k];
        if (++v->reported < v->n_clients) return HS_OK;
        if (v->y) {
            /* y_d = sum m_i w_i / sum m_i, summed in client order */
            for (int c = 0; c < v->n_clients; c++) {
                s->vectors[c] = trainer_params(e->trainer, v->clients[c]);
                s->weights[c] = e->world.agents[v->clients[c]].samples;
            }
            if (vec_weighted_average(v->y, s->vectors, s->weights, v->n_clients, s->d) != HS_OK)
                return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "cannot average a cluster");
        }
        if (++v->period < s->intra) return sdfeel_period_begin(s, e, k);
        return sdfeel_gossip_begin(s, e, k);
    }
    case SD_GOSSIP: {
        /* the receiving server processes the neighbour's model on its processor */
        engine_compute(e, ev->agent, s->process_flops, SD_GOSSIP_PROCESSED, ev->data);
        return HS_OK;
    }
    case SD_GOSSIPED: return sdfeel_gossiped(s, e, (int)ev->data);
    default: break;
    }
    /* a neighbour's model of step `step` processed at server k */
    int k = ev->agent - s->first, from = (int)(ev->data & ((1 << 20) - 1));
    long step = (long)(ev->data >> 20);
    SdServer *v = &s->servers[k];
    int parity = (int)(step & 1);
    if (v->y) {
        float weight = (float)sdfeel_weight(s, k, from);
        vec_axpy(v->sum[parity], weight, s->servers[from].out[parity], s->d);
    }
    int degree = topology_degree(&s->topology, k);
    /* complete for the step it is on (not one it has yet to begin: it sends first) */
    if (++v->received[parity] == degree && step == v->step && v->period == s->intra)
        return sdfeel_gossiped(s, e, k);
    return HS_OK;
}

/* The evaluated model: the edge servers' models averaged by their clients' samples. */
static int sdfeel_round_end(void *state, Engine *e, int round)
{
    SdState *s = state;
    float *shared = trainer_shared_params(e->trainer);
    if (shared == NULL) return HS_OK;
    double total = 0;
    for (int k = 0; k < s->E; k++) total += s->servers[k].samples;
    for (size_t p = 0; p < s->d; p++) {
        double sum = 0;
        for (int k = 0; k < s->E; k++) sum += s->servers[k].samples * s->servers[k].y[p];
        shared[p] = (float)(sum / total);
    }
    return HS_OK;
}

static const MethodKey sdfeel_keys[] = {
    {"local_steps", "epoch", "tau1: local steps per intra-cluster aggregation (a number, or epoch)",
     .type = METHOD_KEY_STEPS, .min = 1, .max = 100000000},
    {"intra_rounds", "2", "tau2: intra-cluster aggregations per inter-cluster aggregation", .type = METHOD_KEY_INT,
     .min = 1, .max = 100000},
    {"gossip_steps", "1", "alpha: gossip steps among the edge servers per inter-cluster aggregation",
     .type = METHOD_KEY_INT, .min = 1, .max = 100000},
    {0},
};

const MethodOps method_sdfeel = {
    .name = "sdfeel",
    .summary = "SD-FEEL: clients of edge servers aggregate in clusters; the edge servers gossip over [topology]",
    .keys = sdfeel_keys,
    .capabilities = METHOD_USES_SERVER | METHOD_EDGE_SERVERS | METHOD_USES_TOPOLOGY,
    .create = sdfeel_create,
    .round_begin = sdfeel_round_begin,
    .on_event = sdfeel_on_event,
    .round_end = sdfeel_round_end,
    .destroy = sdfeel_destroy,
};
