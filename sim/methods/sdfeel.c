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
 * (sim/scenario/server_assign.h) or nearest. hetsim has
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
 * Departures: a server without clients goes straight to the gossip; clients keep their
 * optimiser state between periods (the paper's plain SGD has none).
 *
 * Asynchronous variant (`deadline` = a time or auto; Sun, Shao, Mao, Zhang, "Asynchronous
 * Semi-Decentralized Federated Edge Learning for Heterogeneous Clients", IEEE ICC 2022,
 * and the TNSM 2023 journal version). Only the abstract was available: "edge servers are
 * allowed to independently set deadlines for the associated client nodes and trigger the
 * model aggregation ... a staleness-aware aggregation scheme". Everything below that the
 * abstract does not say is hetsim's reading, and the full papers may differ:
 *   deadlines    server d aggregates at t = T_d, 2 T_d, ... on its own clock; T_d is the
 *                time given, or auto (sdfeel_auto_deadlines: its median client's period);
 *   clients      train tau1 steps from the model their download carried (version v_i,
 *                the server's aggregation count at the send), upload, and wait for the
 *                server's next deadline; a client still training at a deadline goes on
 *                with its old model and its result is stale when it arrives. Nobody
 *                waits for stragglers; an offline client simply pauses (the engine).
 *   aggregation  the models that arrived since the last deadline, client i weighted
 *                m_i s(tau_i), tau_i = (the server's count) - v_i, s(tau) = 1/sqrt(1 + tau)
 *                (fedbuff's staleness function; hetsim's choice), and y_d itself weighted
 *                by the rest of the cluster's samples, sum m_j - sum m_i s(tau_i):
 *                  y_d <- (W_rest y_d + sum_i m_i s(tau_i) w_i) / sum_j m_j.
 *                So when every client reports fresh this is the synchronous average
 *                exactly, a stale or missing client's share stays with y_d, and no mixing
 *                constant beyond s() is needed. No arrivals: y_d unchanged. Then the
 *                clients that reported get y_d and start again at once.
 *   inter-cluster after each aggregation a server sends y_d to every neighbour (not when
 *                its previous model on that link is still in flight: the link carries at
 *                most one, and the neighbour gets a later one); after every tau2-th of its
 *                aggregations it mixes alpha times y_d <- sum_j P_dj y_j (Metropolis-
 *                Hastings) over the latest neighbour models it has processed, without
 *                waiting (the copies do not change between the alpha mixes).
 *   rounds       round r ends when every server has done (r + 1) tau2 aggregations (as
 *                adpsgd ends a round on the slowest agent's epochs); rounds.extra = mean
 *                staleness tau of the client models aggregated in the round (NaN if none).
 * Both modes time alike: every decision reads event times, counters and the drawn
 * profiles only. A server's deadline fires whether or not it is online (its sends and
 * processing pause as usual).
 * Over 600 lines: one method per file (sim/methods/), and SD-FEEL is two protocols, the
 * synchronous one and the asynchronous variant, over the same servers' state. */
#include "models/model.h"
#include "sim/methods/method.h"
#include "sim/scenario/server_assign.h"
#include "sim/scenario/topology.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SD_MODEL_ARRIVED = ENGINE_EVENT_METHOD, SD_STEPPED, SD_UPLOADED, SD_PROCESSED, SD_GOSSIP, SD_GOSSIP_PROCESSED,
       SD_GOSSIPED, SD_TICK };

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
    /* asynchronous variant */
    double deadline;      /* T_d */
    long version;         /* aggregations done (the version of y) */
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
    double bytes, process_flops;
    Stages st;            /* the clients' steps and uploads, the edge servers' averaging */
    /* per round: the first and last time a server entered its gossip (servers may run a
     * round or more ahead of the slowest, so these are kept for every round) */
    double *first_gossip, *last_gossip;
    int n_gossip_rounds;
    const float **vectors; /* (n + 1) scratch for the intra-cluster average */
    double *weights;
    size_t d;
    /* asynchronous variant (deadline != none) */
    int async;
    long *version;        /* (n) the server's version the client trains from */
    char *arrived;        /* (n) its model is processed at the server, not yet aggregated */
    char *in_flight;      /* (adjacency entries) a model on the directed link k -> j */
    int *reverse;         /* (adjacency entries) the entry of j -> k for the entry k -> j */
    float **sent;         /* (adjacency entries, d) the model on the link k -> j */
    float **latest;       /* (adjacency entries, d) the last model of k that j processed */
    float *scratch;       /* (d) */
    double staleness_sum; /* this round's aggregated client models */
    long staleness_count;
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
    int entries = s->topology.offsets ? s->topology.offsets[s->E] : 0;
    for (int a = 0; a < entries; a++) {
        if (s->sent) free(s->sent[a]);
        if (s->latest) free(s->latest[a]);
    }
    free(s->sent);
    free(s->latest);
    free(s->in_flight);
    free(s->reverse);
    free(s->version);
    free(s->arrived);
    free(s->scratch);
    free(s->first_gossip);
    stages_free(&s->st);
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
static double sdfeel_reach(const Sim *sim, int i, int v, double bytes, int sharing)
{
    const AgentProfile *a = &sim->world.agents[i], *b = &sim->world.agents[v];
    double bandwidth = a->uplink < b->downlink ? a->uplink : b->downlink;
    return (a->latency > b->latency ? a->latency : b->latency) + bytes * sharing / bandwidth;
}

static int sdfeel_assign(SdState *s, Sim *sim)
{
    int nearest = sim->sc->server_assign == SERVER_ASSIGN_NEAREST, given = sim->sc->server_assign == SERVER_ASSIGN_FILE;
    /* the file was checked when the scenario was read; it is read again here */
    if (given && server_assign_load(sim->sc->server_assign_file, s->n, s->E, s->server_of, sim->diag) != HS_OK)
        return HS_E_INPUT;
    for (int i = 0; i < s->n; i++) {
        int best = given ? s->server_of[i] : i % s->E;
        if (nearest) {
            best = 0;
            for (int k = 1; k < s->E; k++)
                if (sdfeel_reach(sim, i, s->first + k, s->bytes, s->servers[k].n_clients + 1) <
                    sdfeel_reach(sim, i, s->first + best, s->bytes, s->servers[best].n_clients + 1))
                    best = k;
        }
        s->server_of[i] = best;
        s->servers[best].n_clients++;
        s->servers[best].samples += sim->world.agents[i].samples;
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

/* deadline = auto (hetsim's reading of "independently set deadlines"): T_d = the median
 * (the lower one for an even count) over server d's n_d clients of
 *   t_i = tau1_i x step FLOPs / compute_i                      its local period
 *       + 2 max(latency_i, latency_d)                          download and upload
 *       + bytes n_d / min(uplink_d, downlink_i)                the download, the server's
 *       + bytes n_d / min(uplink_i, downlink_d)                links shared by its cluster
 *       + 2 d FLOPs / compute_d                                the server's processing,
 * computed once from the drawn profiles (no slowdowns, traces or contention beyond the
 * cluster's own). The sharing term keeps the median client inside its deadline when the
 * whole cluster downloads at once; without it that client just misses every deadline.
 * A server without clients takes the largest T_d of the others (it only gossips). */
static int sdfeel_compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int sdfeel_auto_deadlines(SdState *s, Sim *sim)
{
    double *times = malloc((size_t)s->n * sizeof *times), largest = 0;
    if (times == NULL) return HS_E_NOMEM;
    for (int k = 0; k < s->E; k++) {
        SdServer *v = &s->servers[k];
        const AgentProfile *b = &sim->world.agents[s->first + k];
        for (int c = 0; c < v->n_clients; c++) {
            const AgentProfile *a = &sim->world.agents[v->clients[c]];
            int steps = s->local_steps > 0 ? s->local_steps : sim_agent_steps(sim, v->clients[c]);
            double latency = a->latency > b->latency ? a->latency : b->latency;
            double down = b->uplink < a->downlink ? b->uplink : a->downlink;
            double up = a->uplink < b->downlink ? a->uplink : b->downlink;
            times[c] = steps * sim_step_flops(sim, a->batch) / a->compute + 2 * latency + s->bytes * v->n_clients / down +
                       s->bytes * v->n_clients / up + s->process_flops / b->compute;
        }
        qsort(times, (size_t)v->n_clients, sizeof *times, sdfeel_compare_double);
        v->deadline = v->n_clients > 0 ? times[(v->n_clients - 1) / 2] : 0;
        if (v->deadline > largest) largest = v->deadline;
    }
    for (int k = 0; k < s->E; k++)
        if (s->servers[k].n_clients == 0) s->servers[k].deadline = largest;
    free(times);
    return HS_OK;
}

/* [method] keys (sdfeel_keys below) */
typedef struct SdfeelKeys {
    int local_steps;     /* tau1; 0: epoch */
    int intra_rounds;    /* tau2 */
    int gossip_steps;    /* alpha */
    double deadline;     /* s; inf: none (synchronous), NaN: auto */
    PruneKeys pruning;
    FreezeKeys freezing;
} SdfeelKeys;

/* The asynchronous variant's staleness-weighted average is its own: the features that
 * change the clients' uploads or the servers' averaging are the synchronous variant's. */
static int sdfeel_validate(const Scenario *sc, HsDiag *diag)
{
    const SdfeelKeys *keys = scenario_method_keys(sc);
    if (isinf(keys->deadline)) return HS_OK;
    static const Feature upload[] = {FEATURE_COMPRESSION, FEATURE_BYZANTINE, FEATURE_PRIVACY_UPDATE, FEATURE_PRUNE,
                                     FEATURE_FREEZE};
    for (size_t k = 0; k < sizeof upload / sizeof *upload; k++)
        if (scenario_feature_on(sc, upload[k]))
            return scenario_key_error(sc, &keys->deadline, diag,
                                      "the asynchronous variant's staleness-weighted average takes none of "
                                      "[compression], [byzantine], [privacy] clip = update, prune, freeze (the "
                                      "synchronous one, deadline = none, takes them)");
    return HS_OK;
}

static int sdfeel_create(Sim *sim, void **state)
{
    SdState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    s->n = sim->world.n;
    s->E = sim->world.n_servers;
    s->first = sim->world.n;
    const SdfeelKeys *keys = scenario_method_keys(sim->sc);
    s->local_steps = keys->local_steps;
    s->intra = keys->intra_rounds;
    s->gossip = keys->gossip_steps;
    s->bytes = sim_model_bytes(sim);
    s->process_flops = 2.0 * sim->profile.total_params;
    int status = scenario_topology(sim->sc, s->E, &s->topology, sim->diag);
    if (status != HS_OK) return status;
    s->server_of = calloc((size_t)s->n, sizeof *s->server_of);
    s->remaining = calloc((size_t)s->n, sizeof *s->remaining);
    s->servers = calloc((size_t)s->E, sizeof *s->servers);
    if (!s->server_of || !s->remaining || !s->servers) return HS_E_NOMEM;
    if ((status = sdfeel_assign(s, sim)) != HS_OK) return status;
    double deadline = keys->deadline;
    s->async = !isinf(deadline);
    int entries = s->topology.offsets[s->E];
    if (s->async) {
        s->version = calloc((size_t)s->n, sizeof *s->version);
        s->arrived = calloc((size_t)s->n, 1);
        s->in_flight = calloc((size_t)(entries > 0 ? entries : 1), 1);
        s->reverse = calloc((size_t)(entries > 0 ? entries : 1), sizeof *s->reverse);
        if (!s->version || !s->arrived || !s->in_flight || !s->reverse) return HS_E_NOMEM;
        for (int k = 0; k < s->E; k++)
            for (int a = s->topology.offsets[k]; a < s->topology.offsets[k + 1]; a++) {
                int j = s->topology.adj[a];
                for (int b = s->topology.offsets[j]; b < s->topology.offsets[j + 1]; b++)
                    if (s->topology.adj[b] == k) s->reverse[a] = b;
            }
        if (isnan(deadline)) {
            if ((status = sdfeel_auto_deadlines(s, sim)) != HS_OK) return status;
        } else
            for (int k = 0; k < s->E; k++) s->servers[k].deadline = deadline;
    }
    if ((status = trainer_setup_shared(sim->trainer)) != HS_OK) return status;
    /* asynchronous: buffer 0 holds the model a client's download carries */
    if ((status = trainer_setup_local(sim->trainer, s->async ? 1 : 0)) != HS_OK) return status;
    int *steps = malloc((size_t)s->n * sizeof *steps);
    if (steps == NULL) return HS_E_NOMEM;
    for (int i = 0; i < s->n; i++) steps[i] = s->local_steps > 0 ? s->local_steps : sim_agent_steps(sim, i);
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing, .steps = steps, .keep_messages = 1};
    status = sim_stages_create(sim, &s->st, &setup);
    free(steps);
    if (status != HS_OK) return status;
    if (sim->trainer == NULL) return HS_OK;
    s->d = trainer_param_count(sim->trainer);
    s->vectors = calloc((size_t)s->n + 1, sizeof *s->vectors);
    s->weights = calloc((size_t)s->n + 1, sizeof *s->weights);
    if (!s->vectors || !s->weights) return HS_E_NOMEM;
    if (s->async) {
        s->scratch = malloc(s->d * sizeof *s->scratch);
        s->sent = calloc((size_t)(entries > 0 ? entries : 1), sizeof *s->sent);
        s->latest = calloc((size_t)(entries > 0 ? entries : 1), sizeof *s->latest);
        if (!s->scratch || !s->sent || !s->latest) return HS_E_NOMEM;
        const float *initial = trainer_shared_params(sim->trainer);
        for (int a = 0; a < entries; a++) {
            s->sent[a] = malloc(s->d * sizeof *s->sent[a]);
            s->latest[a] = malloc(s->d * sizeof *s->latest[a]);
            if (!s->sent[a] || !s->latest[a]) return HS_E_NOMEM;
            memcpy(s->latest[a], initial, s->d * sizeof *initial);
        }
    }
    for (int k = 0; k < s->E; k++) {
        SdServer *v = &s->servers[k];
        v->y = malloc(s->d * sizeof *v->y);
        for (int p = 0; p < 2; p++) {
            v->sum[p] = calloc(s->d, sizeof *v->sum[p]);
            v->out[p] = malloc(s->d * sizeof *v->out[p]);
            if (!v->sum[p] || !v->out[p]) return HS_E_NOMEM;
        }
        if (v->y == NULL) return HS_E_NOMEM;
        memcpy(v->y, trainer_shared_params(sim->trainer), s->d * sizeof *v->y);
    }
    return HS_OK;
}

/* Metropolis-Hastings weight of the link d-j. */
static double sdfeel_weight(const SdState *s, int d, int j)
{
    int a = topology_degree(&s->topology, d), b = topology_degree(&s->topology, j);
    return 1.0 / (1.0 + (a > b ? a : b));
}

static int sdfeel_gossip_begin(SdState *s, Sim *sim, int k);

/* Server k sends its model to its clients: the start of a local period (or, without
 * clients, straight to the gossip when the periods are over). */
static int sdfeel_period_begin(SdState *s, Sim *sim, int k)
{
    SdServer *v = &s->servers[k];
    v->reported = 0;
    if (v->n_clients == 0) {
        v->period = s->intra;
        return sdfeel_gossip_begin(s, sim, k);
    }
    for (int c = 0; c < v->n_clients; c++) {
        int status = engine_send(sim->engine, s->first + k, v->clients[c], s->bytes, SD_MODEL_ARRIVED, k);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

/* Server k sends its model of gossip step v->step to every neighbour. */
static int sdfeel_gossip_begin(SdState *s, Sim *sim, int k)
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
            if (!a || !b) return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory");
            for (int r = s->n_gossip_rounds; r < grown; r++) {
                s->first_gossip[r] = INFINITY;
                s->last_gossip[r] = -INFINITY;
            }
            s->n_gossip_rounds = grown;
        }
        if (engine_now(sim->engine) < s->first_gossip[v->round]) s->first_gossip[v->round] = engine_now(sim->engine);
        if (engine_now(sim->engine) > s->last_gossip[v->round]) s->last_gossip[v->round] = engine_now(sim->engine);
    }
    int parity = (int)(v->step & 1);
    if (v->y) memcpy(v->out[parity], v->y, s->d * sizeof *v->y);
    const int *neighbours = s->topology.adj + s->topology.offsets[k];
    int degree = topology_degree(&s->topology, k);
    for (int j = 0; j < degree; j++) {
        int status = engine_send(sim->engine, s->first + k, s->first + neighbours[j], s->bytes, SD_GOSSIP,
                                 ((int64_t)v->step << 20) | k);
        if (status != HS_OK) return status;
    }
    /* without neighbours, or with every neighbour ahead of it (they may have sent this
     * step already), the step is complete now */
    if (degree == 0 || v->received[parity] == degree)
        return engine_schedule(sim->engine, engine_now(sim->engine), SD_GOSSIPED, s->first + k, k);
    return HS_OK;
}

/* Server k has every neighbour's model of its current step: mix, then the next step or
 * the end of its round. */
static int sdfeel_gossiped(SdState *s, Sim *sim, int k)
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
    if (v->step % s->gossip != 0) return sdfeel_gossip_begin(s, sim, k);
    /* round over for this server: the next round's local work starts at once */
    v->period = 0;
    if (v->round++ == s->round && ++s->done == s->E) {
        sim->round_extra = s->last_gossip[s->round] - s->first_gossip[s->round];
        engine_end_round(sim->engine);
    }
    return sdfeel_period_begin(s, sim, k);
}

/* ---- the asynchronous variant (deadline != none) ---- */

/* Server k sends its current model to client i; the message carries a copy (y moves on
 * before it arrives) and the version the client will train from. */
static int sdfeel_async_dispatch(SdState *s, Sim *sim, int k, int i)
{
    SdServer *v = &s->servers[k];
    s->version[i] = v->version;
    if (v->y) memcpy(trainer_buffer(sim->trainer, i, 0), v->y, s->d * sizeof *v->y);
    return engine_send(sim->engine, s->first + k, i, s->bytes, SD_MODEL_ARRIVED, k);
}

/* Round r ends once every server has done (r + 1) tau2 aggregations. */
static void sdfeel_async_round_check(SdState *s, Sim *sim)
{
    long least = s->servers[0].version;
    for (int k = 1; k < s->E; k++)
        if (s->servers[k].version < least) least = s->servers[k].version;
    if (engine_round_over(sim->engine) || least < (long)(s->round + 1) * s->intra) return;
    sim->round_extra = s->staleness_count > 0 ? s->staleness_sum / (double)s->staleness_count : NAN;
    s->staleness_sum = 0;
    s->staleness_count = 0;
    engine_end_round(sim->engine);
}

/* Server k's deadline: aggregate what arrived, maybe mix with the neighbours' latest
 * models, send y to the neighbours and to the clients that reported, and set the next
 * deadline. */
static int sdfeel_async_tick(SdState *s, Sim *sim, int k)
{
    SdServer *v = &s->servers[k];
    int m = 1;
    double fresh = 0;
    for (int c = 0; c < v->n_clients; c++) {
        int i = v->clients[c];
        if (!s->arrived[i]) continue;
        long tau = v->version - s->version[i];
        double weight = sim->world.agents[i].samples / sqrt(1.0 + (double)tau);
        s->staleness_sum += (double)tau;
        s->staleness_count++;
        fresh += weight;
        if (v->y) {
            s->vectors[m] = trainer_params(sim->trainer, i);
            s->weights[m] = weight;
        }
        m++;
    }
    if (v->y && m > 1) {
        /* y keeps the weight the fresh reports do not take: m_i (1 - s(tau_i)) of each
         * report and all of m_j of each client that did not report */
        s->vectors[0] = v->y;
        s->weights[0] = v->samples - fresh > 0 ? v->samples - fresh : 0;
        if (vec_weighted_average(s->scratch, s->vectors, s->weights, m, s->d) != HS_OK)
            return hs_diag_set(sim->diag, HS_E_INTERNAL, NULL, 0, "cannot average a cluster");
        memcpy(v->y, s->scratch, s->d * sizeof *v->y);
    }
    v->version++;
    const int *neighbours = s->topology.adj + s->topology.offsets[k];
    int degree = topology_degree(&s->topology, k);
    if (v->version % s->intra == 0 && v->y && degree > 0) {
        /* gossip_steps mixes with the latest models received; they do not change between
         * the mixes (nobody waits for a new one) */
        double self = 1.0;
        memset(s->scratch, 0, s->d * sizeof *s->scratch);
        for (int j = 0; j < degree; j++) {
            float weight = (float)sdfeel_weight(s, k, neighbours[j]);
            self -= sdfeel_weight(s, k, neighbours[j]);
            vec_axpy(s->scratch, weight, s->latest[s->reverse[s->topology.offsets[k] + j]], s->d);
        }
        for (int step = 0; step < s->gossip; step++)
            for (size_t p = 0; p < s->d; p++) v->y[p] = (float)(self * v->y[p]) + s->scratch[p];
    }
    for (int j = 0; j < degree; j++) {
        int a = s->topology.offsets[k] + j;
        if (s->in_flight[a]) continue; /* the link still carries its previous model */
        s->in_flight[a] = 1;
        if (v->y) memcpy(s->sent[a], v->y, s->d * sizeof *v->y);
        int status = engine_send(sim->engine, s->first + k, s->first + neighbours[j], s->bytes, SD_GOSSIP, a);
        if (status != HS_OK) return status;
    }
    for (int c = 0; c < v->n_clients; c++) {
        int i = v->clients[c];
        if (!s->arrived[i]) continue;
        s->arrived[i] = 0;
        int status = sdfeel_async_dispatch(s, sim, k, i);
        if (status != HS_OK) return status;
    }
    int status = engine_schedule(sim->engine, (double)(v->version + 1) * v->deadline, SD_TICK, s->first + k, k);
    if (status != HS_OK) return status;
    sdfeel_async_round_check(s, sim);
    return HS_OK;
}

static int sdfeel_async_round_begin(SdState *s, Sim *sim, int round)
{
    if (round > 0) {
        sdfeel_async_round_check(s, sim);
        return HS_OK;
    }
    for (int k = 0; k < s->E; k++) {
        SdServer *v = &s->servers[k];
        int status = HS_OK;
        for (int c = 0; c < v->n_clients && status == HS_OK; c++)
            status = sdfeel_async_dispatch(s, sim, k, v->clients[c]);
        if (status == HS_OK) status = engine_schedule(sim->engine, v->deadline, SD_TICK, s->first + k, k);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

static int sdfeel_round_begin(void *state, Sim *sim, int round)
{
    stages_begin_round(&((SdState *)state)->st, round);
    SdState *s = state;
    s->round = round;
    if (s->async) return sdfeel_async_round_begin(s, sim, round);
    s->done = 0;
    /* servers already past this round's gossip (none before round 0) count as done */
    int status = HS_OK;
    for (int k = 0; k < s->E; k++)
        if (s->servers[k].round > round) s->done++;
    if (round > 0) {
        if (s->done == s->E) {
            sim->round_extra = s->last_gossip[round] - s->first_gossip[round];
            engine_end_round(sim->engine);
        }
        return HS_OK;
    }
    for (int k = 0; k < s->E && status == HS_OK; k++) status = sdfeel_period_begin(s, sim, k);
    return status;
}

static int sdfeel_on_event(void *state, Sim *sim, const Event *ev)
{
    SdState *s = state;
    int status;
    switch (ev->kind) {
    case SD_MODEL_ARRIVED: {
        int i = ev->agent;
        SdServer *v = &s->servers[s->server_of[i]];
        const float *from = s->async && v->y ? trainer_buffer(sim->trainer, i, 0) : v->y;
        if (v->y) memcpy(trainer_params(sim->trainer, i), from, s->d * sizeof *v->y);
        s->remaining[i] = s->local_steps > 0 ? s->local_steps : sim_agent_steps(sim, i);
        return engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), SD_STEPPED, 0, NULL);
    }
    case SD_STEPPED: {
        int i = ev->agent;
        if ((status = local_step_run(&s->st.step, i)) != HS_OK) return status;
        if (--s->remaining[i] > 0)
            return engine_compute(sim->engine, i, local_step_flops(&s->st.step, i), SD_STEPPED, 0, NULL);
        /* the upload leaves from the model the client started at (the synchronous y_d does
         * not change until its clients have reported) */
        SdServer *v = &s->servers[s->server_of[i]];
        const float *start = !v->y ? NULL : s->async ? trainer_buffer(sim->trainer, i, 0) : v->y;
        double bytes = stages_upload(&s->st, i, v->y ? trainer_params(sim->trainer, i) : NULL, start);
        return engine_send(sim->engine, i, s->first + s->server_of[i], bytes, SD_UPLOADED, i);
    }
    case SD_UPLOADED:
        return engine_compute(sim->engine, ev->agent, s->process_flops, SD_PROCESSED, ev->data, NULL);
    case SD_PROCESSED: {
        if (s->async) {
            s->arrived[ev->data] = 1; /* waits for the server's next deadline */
            return HS_OK;
        }
        int k = ev->agent - s->first;
        SdServer *v = &s->servers[k];
        if (++v->reported < v->n_clients) return HS_OK;
        /* y_d = sum m_i w_i / sum m_i, summed in client order (the aggregation stage's
         * form of a server's reports) */
        for (int c = 0; v->y && c < v->n_clients; c++) {
            s->vectors[c] = trainer_params(sim->trainer, v->clients[c]);
            s->weights[c] = sim->world.agents[v->clients[c]].samples;
        }
        status = aggregate_reports(&s->st.agg, &s->st.out, v->y, v->clients, s->vectors, s->weights, v->n_clients,
                                   engine_round(sim->engine), k * 256 + v->period % 256);
        if (status != HS_OK) return status;
        if (++v->period < s->intra) return sdfeel_period_begin(s, sim, k);
        return sdfeel_gossip_begin(s, sim, k);
    }
    case SD_GOSSIP: {
        /* the receiving server processes the neighbour's model on its processor */
        return engine_compute(sim->engine, ev->agent, s->process_flops, SD_GOSSIP_PROCESSED, ev->data, NULL);
    }
    case SD_GOSSIPED: return sdfeel_gossiped(s, sim, (int)ev->data);
    case SD_TICK: return sdfeel_async_tick(s, sim, (int)ev->data);
    default: break;
    }
    if (s->async) {
        /* the model on link entry a processed at its receiver: the receiver's latest */
        int64_t a = ev->data;
        if (s->sent) memcpy(s->latest[a], s->sent[a], s->d * sizeof *s->latest[a]);
        s->in_flight[a] = 0;
        return HS_OK;
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
        return sdfeel_gossiped(s, sim, k);
    return HS_OK;
}

/* The evaluated model: the edge servers' models averaged by their clients' samples. */
static int sdfeel_round_end(void *state, Sim *sim, int round)
{
    SdState *s = state;
    float *shared = trainer_shared_params(sim->trainer);
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

static const SchemaKey sdfeel_keys[] = {
    METHOD_KEY(SdfeelKeys, local_steps, "epoch", "tau1: local steps per intra-cluster aggregation (a number, or epoch)",
     .type = SCHEMA_STEPS, .min = 1, .max = 100000000),
    METHOD_KEY(SdfeelKeys, intra_rounds, "2", "tau2: intra-cluster aggregations per inter-cluster aggregation", .type = SCHEMA_INT,
     .min = 1, .max = 100000),
    METHOD_KEY(SdfeelKeys, gossip_steps, "1", "alpha: gossip steps among the edge servers per inter-cluster aggregation",
     .type = SCHEMA_INT, .min = 1, .max = 100000),
    METHOD_KEY(SdfeelKeys, deadline, "none",
     "none: synchronous; a time or auto: each edge server aggregates on its own clock every T_d (asynchronous)",
     .type = SCHEMA_TIME, .unit = UNIT_TIME, .min = 0, .max = INFINITY, .flags = SCHEMA_OPEN_MIN, .choices = "auto"),
    PRUNE_METHOD_KEYS(SdfeelKeys, pruning.),
    FREEZE_METHOD_KEYS(SdfeelKeys, freezing.),
    {0},
};

static const MethodStages sdfeel_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps on its edge server's model",
    .outgoing = "its model to its edge server; a server's model to its neighbour servers",
    .aggregate = "edge server: sample-weighted mean of its clients; servers: Metropolis-Hastings gossip",
    .refuses = {
        [FEATURE_DRIFT_FEDPROX] = "the edge servers' models differ (they gossip among themselves), so there is no one global model w^t for the proximal term",
        [FEATURE_DRIFT_SCAFFOLD] = "the edge servers' models differ (they gossip among themselves), so there is no one server control variate c",
    },
};

static const MethodExtra sdfeel_extras[] = {
    {.key = "deadline", .value = "none", .unless = 1, .meaning = "mean staleness tau of the client models aggregated"},
    {.meaning = "spread (s) between the first and the last edge server entering the round's gossip"},
    {0},
};

const MethodOps method_sdfeel = {
    .name = "sdfeel",
    .summary = "SD-FEEL: clients of edge servers aggregate in clusters; the edge servers gossip over [topology]",
    .keys = sdfeel_keys,
    .keys_size = sizeof(SdfeelKeys),
    .capabilities = METHOD_USES_SERVER | METHOD_EDGE_SERVERS | METHOD_USES_TOPOLOGY | METHOD_ACCUMULATES | METHOD_LOSSY_LINKS,
    .stages = &sdfeel_stages,
    .extra = sdfeel_extras,
    .create = sdfeel_create,
    .round_begin = sdfeel_round_begin,
    .on_event = sdfeel_on_event,
    .round_end = sdfeel_round_end,
    .validate = sdfeel_validate,
    .destroy = sdfeel_destroy,
};
