/* dpsgd.c — D-PSGD (Lian et al., NeurIPS 2017):
 *   x_i^{k+1} = Σ_j W_ij x_j^k − lr · ∇F_i(x_i^k),   W = Metropolis–Hastings over [topology],
 * or [topology] weights = FILE.weights, or graph = learned (STL-FW, Le Bars et al., AISTATS
 * 2023): sim/world/world_topology.h.
 * Each step an agent computes its gradient and sends its model x^k to every neighbour
 * (one message per neighbour; under maxmin they share its uplink). It finishes step k
 * once its gradient is done and it holds x_j^k of every neighbour: a neighbourhood
 * barrier, not a global one. A round is a global epoch of ceil(mean samples / batch) steps per agent.
 * Train mode keeps two published snapshots per agent (x^k by step parity): a neighbour
 * is at most one step ahead, so x^{k−1} is never needed once x^{k+1} is written. The
 * optimiser then applies the gradient to the mixed parameters (plain SGD gives the
 * paper's update exactly). In train mode rounds.extra holds the consensus distance at
 * the round's end: the mean over agents of ||x_i - mean x||^2.
 *
 * [compression]: the difference gossip of CHOCO-SGD (Koloskova, Stich, Jaggi, ICML 2019)
 * in D-PSGD's step order. Every agent i has a public copy xhat_i that all its neighbours
 * hold too. At the start of step k it sends q_i = C(x_i^k - xhat_i^k) (one message of
 * the encoded size per neighbour) and everyone sets xhat_i^{k+1} = xhat_i^k + q_i; at the
 * end of the step
 *   x_i^{k+1} = x_i^k + gamma sum_j W_ij (xhat_j^{k+1} - xhat_i^{k+1}) - lr grad F_i(x_i^k),
 * which with C = identity and gamma = 1 is D-PSGD. CHOCO takes the gradient step before
 * the gossip; here both use x^k, so the timing is D-PSGD's. xhat starts at the common
 * initial model (known to all from the seed), so nothing dense is ever sent. The
 * compressed difference is its own error feedback, so [compression] feedback must be
 * none. The public copies are kept by parity of the global step count (two per agent,
 * in the snapshot buffers): a neighbour is at most one step apart.
 *
 * prune = width (sim/stages/prune.h): a slow agent's gradient is that of
 * its nested sub-model (its FLOPs per step) and it sends only the sub-model's
 * coordinates (its bytes per neighbour). Every agent mixes each coordinate over the
 * members of its closed neighbourhood that hold it, with their Metropolis-Hastings
 * weights renormalised: x_i[c] = sum_{j holds c} W_ij x_j[c] / sum_{j holds c} W_ij; a
 * coordinate nobody there holds keeps x_i[c]. So a pruned agent's other coordinates
 * still follow its full neighbours, and the sample-weighted average that is evaluated
 * is not pulled back by coordinates nobody trained. freeze = progressive mixes the
 * stage's coordinates the same way (only they travel).
 * [byzantine]: the attackers' models replaced per exchange, the rule's gossip form over the
 * closed neighbourhood (cclip: self-centered clipping); the gradient is the local step's
 * (DP-SGD, a stage, a sub-model, a label flipper): sim/stages/stages.h, docs/stages.md.
 *
 * Unstable links ([agents] loss, sim/kernel/loss.c): under loss_mode = retransmit a lost
 * model is sent again until it arrives, later. Under drop it stays lost: the receiver
 * learns it rto after it would have arrived, counts it among the step's messages (so
 * the neighbourhood barrier still closes) and mixes over what arrived, the
 * weights W_ij of the present members of its closed neighbourhood
 * renormalised to sum to 1 (the paper's W is fixed; a row renormalised this way stays
 * stochastic but W is no longer symmetric, so a step with losses need not keep the
 * agents' mean). A step where every neighbour's model was lost keeps x_i. CHOCO's
 * compressed gossip refuses drop: a lost q_j leaves the receiver's copy of xhat_j
 * behind the sender's for good. */
#include "sim/methods/method.h"
#include "sim/scenario/topology.h"
#include "sim/train/trainer.h"
#include "sim/world/world_topology.h"

#include <stdlib.h>
#include <string.h>

enum { DPSGD_COMPUTED = ENGINE_EVENT_METHOD, DPSGD_MODEL };
enum { DPSGD_SNAPSHOT0 = 0, DPSGD_SNAPSHOT1 = 1, DPSGD_GRADIENT = 2 };

/* [method] keys: the local step's features */
typedef struct DpsgdKeys {
    PruneKeys pruning;
    FreezeKeys freezing;
} DpsgdKeys;

typedef struct DpsgdAgent {
    int step;          /* steps completed this round */
    int received[2];   /* neighbour models received (or known lost), by step parity */
    unsigned char computed;  /* gradient of the current step is done */
    unsigned char exchanges; /* compressed: the parity of the steps since the run began
                              * (xhat's; only the parity is read) */
} DpsgdAgent;          /* 16 bytes: one an agent, at millions of agents */
_Static_assert(sizeof(DpsgdAgent) <= 16, "one an agent: keep it 16 bytes");

typedef struct DpsgdState {
    Topology topology;
    DpsgdAgent *agents; /* (n) */
    int round_steps;
    int finished;       /* agents done with this round */
    Stages st;
    size_t d;           /* entries exchanged: the model's blocks */
    /* one agent's closed neighbourhood, self first (train mode) */
    int *who;           /* (max degree + 1) */
    const float **vectors;
    double *weights;
    /* loss_mode = drop: lost[parity][k] is 1 when the model along adjacency entry k
     * (topology.adj[k], received by the agent that owns row k) was lost; NULL otherwise */
    unsigned char *lost[2];
} DpsgdState;

static int dpsgd_create(Sim *sim, void **state)
{
    DpsgdState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int n = sim->world.n, status = world_topology(sim->sc, &sim->world, &s->topology, sim->diag);
    if (status != HS_OK) return status;
    /* only the models' mixing reads the weights (dpsgd_mix, dpsgd_compressed_mix): a
     * timing run, at millions of agents, does not keep them */
    if (sim->trainer == NULL) topology_drop_weights(&s->topology);
    s->agents = calloc((size_t)n, sizeof *s->agents);
    if (s->agents == NULL) return HS_E_NOMEM;
    s->round_steps = sim_round_steps(sim);
    if ((status = trainer_setup_local(sim->trainer, 3)) != HS_OK) return status;
    const DpsgdKeys *keys = scenario_method_keys(sim->sc);
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    int most = 1;
    for (int i = 0; i < n; i++)
        if (topology_degree(&s->topology, i) + 1 > most) most = topology_degree(&s->topology, i) + 1;
    s->who = malloc((size_t)most * sizeof *s->who);
    s->vectors = malloc((size_t)most * sizeof *s->vectors);
    s->weights = malloc((size_t)most * sizeof *s->weights);
    if (!s->who || !s->vectors || !s->weights) return HS_E_NOMEM;
    s->d = (size_t)sim->profile.total_params;
    if (engine_lossy(sim->engine) && sim->sc->network.loss_mode == LOSS_DROP) {
        size_t edges = (size_t)s->topology.offsets[n];
        for (int p = 0; p < 2; p++)
            if ((s->lost[p] = calloc(edges ? edges : 1, 1)) == NULL) return HS_E_NOMEM;
    }
    if (!outgoing_compresses(&s->st.out) || sim->trainer == NULL) return HS_OK;
    for (int i = 0; i < n; i++) /* xhat^0 = x^0 */
        memcpy(trainer_buffer(sim->trainer, i, DPSGD_SNAPSHOT0), trainer_params(sim->trainer, i), s->d * sizeof(float));
    return HS_OK;
}

/* Compressed step start: q_i = C(x_i - xhat_i), xhat_i^{k+1} = xhat_i^k + q_i. */
static void dpsgd_compress(DpsgdState *s, Sim *sim, int i)
{
    DpsgdAgent *a = &s->agents[i];
    if (sim->trainer == NULL) {
        outgoing_difference(&s->st.out, i, NULL, NULL, NULL);
        return;
    }
    int parity = a->exchanges;
    outgoing_difference(&s->st.out, i, trainer_params(sim->trainer, i), trainer_buffer(sim->trainer, i, parity),
                        trainer_buffer(sim->trainer, i, 1 - parity));
}

/* Compressed step end: x_i += gamma sum_j W_ij (xhat_j - xhat_i). */
static void dpsgd_compressed_mix(DpsgdState *s, Sim *sim, int i)
{
    DpsgdAgent *a = &s->agents[i];
    int parity = 1 - a->exchanges;
    a->exchanges = (unsigned char)parity;
    if (sim->trainer == NULL) return;
    float *x = trainer_params(sim->trainer, i);
    const float *own = trainer_buffer(sim->trainer, i, parity);
    double gamma = sim->sc->compression.gamma;
    for (int k = s->topology.offsets[i]; k < s->topology.offsets[i + 1]; k++) {
        const float *hat = trainer_buffer(sim->trainer, s->topology.adj[k], parity);
        float w = (float)(gamma * s->topology.weights[k]);
        for (size_t p = 0; p < s->d; p++) x[p] += w * (hat[p] - own[p]);
    }
}

/* Dense step end: x_i <- the gossip average of its closed neighbourhood's x^k (the
 * aggregation stage: the weights W_ij; masked under prune and freeze; the
 * robust rule's gossip form under [byzantine]). */
static int dpsgd_mix(DpsgdState *s, Sim *sim, int i, int parity)
{
    int first = s->topology.offsets[i], degree = s->topology.offsets[i + 1] - first, count = 0;
    double present = 0;
    for (int k = 0; k <= degree; k++) {
        if (k > 0 && s->lost[parity] && s->lost[parity][first + k - 1]) continue; /* dropped */
        int j = k == 0 ? i : s->topology.adj[first + k - 1];
        s->who[count] = j;
        s->vectors[count] = trainer_buffer(sim->trainer, j, parity);
        s->weights[count] = k == 0 ? s->topology.self_weights[i] : s->topology.weights[first + k - 1];
        present += s->weights[count++];
    }
    /* drop: the present members' weights renormalised (no loss: count = degree + 1 and
     * the weights are left bit for bit as they were) */
    if (count < degree + 1)
        for (int k = 0; k < count; k++) s->weights[k] /= present;
    return stages_gossip(&s->st, s->who, s->vectors, s->weights, count, trainer_param_count(sim->trainer),
                         trainer_params(sim->trainer, i));
}

/* drop: the model j sent i for the step of this parity was lost. */
static void dpsgd_mark_lost(DpsgdState *s, int i, int j, int parity)
{
    for (int k = s->topology.offsets[i]; k < s->topology.offsets[i + 1]; k++)
        if (s->topology.adj[k] == j) s->lost[parity][k] = 1;
}

/* Starts step agent->step: publish x^k, compute the gradient at x^k, send to neighbours. */
static int dpsgd_start_step(DpsgdState *s, Sim *sim, int i)
{
    DpsgdAgent *a = &s->agents[i];
    LocalStep *step = &s->st.step;
    int compressed = outgoing_compresses(&s->st.out);
    a->computed = 0;
    if (compressed) dpsgd_compress(s, sim, i);
    if (sim->trainer && !compressed)
        memcpy(trainer_buffer(sim->trainer, i, a->step % 2), trainer_params(sim->trainer, i),
               trainer_param_count(sim->trainer) * sizeof(float));
    /* timing mode too (no trainer, no buffer): DP-SGD's accountant counts the step */
    int status = local_step_gradient(step, i, NULL, trainer_buffer(sim->trainer, i, DPSGD_GRADIENT));
    if (status != HS_OK) return status;
    status = engine_compute(sim->engine, i, local_step_flops(step, i), DPSGD_COMPUTED, 0, NULL);
    double bytes = compressed ? outgoing_bytes(&s->st.out, i) : local_step_bytes(step, i);
    for (int k = s->topology.offsets[i]; status == HS_OK && k < s->topology.offsets[i + 1]; k++)
        status = engine_send(sim->engine, i, s->topology.adj[k], bytes, DPSGD_MODEL, a->step);
    return status;
}

static int dpsgd_try_finish(DpsgdState *s, Sim *sim, int i)
{
    DpsgdAgent *a = &s->agents[i];
    int parity = a->step % 2, status;
    if (!a->computed || a->received[parity] < topology_degree(&s->topology, i)) return HS_OK;
    a->received[parity] = 0;
    if (outgoing_compresses(&s->st.out)) dpsgd_compressed_mix(s, sim, i);
    else if (sim->trainer && (status = dpsgd_mix(s, sim, i, parity)) != HS_OK) return status;
    if (s->lost[parity]) {
        int first = s->topology.offsets[i];
        memset(s->lost[parity] + first, 0, (size_t)(s->topology.offsets[i + 1] - first));
    }
    if (sim->trainer &&
        (status = local_step_apply(&s->st.step, i, trainer_buffer(sim->trainer, i, DPSGD_GRADIENT))) != HS_OK)
        return status;
    if (++a->step < s->round_steps) return dpsgd_start_step(s, sim, i);
    if (++s->finished == sim->world.n) engine_end_round(sim->engine);
    return HS_OK;
}

static int dpsgd_round_begin(void *state, Sim *sim, int round)
{
    DpsgdState *s = state;
    s->finished = 0;
    stages_begin_round(&s->st, round);
    int status = HS_OK;
    for (int i = 0; i < sim->world.n && status == HS_OK; i++) {
        s->agents[i].step = 0;
        status = dpsgd_start_step(s, sim, i);
    }
    return status;
}

static int dpsgd_on_event(void *state, Sim *sim, const Event *ev)
{
    DpsgdState *s = state;
    DpsgdAgent *a = &s->agents[ev->agent];
    int from;
    if (ev->kind == DPSGD_COMPUTED) a->computed = 1;
    else {
        a->received[ev->data % 2]++;
        if (engine_delivery_lost(sim->engine, &from)) dpsgd_mark_lost(s, ev->agent, from, (int)(ev->data % 2));
    }
    return dpsgd_try_finish(s, sim, ev->agent);
}

static int dpsgd_round_end(void *state, Sim *sim, int round)
{
    if (!sim->trainer) return HS_OK;
    size_t n = trainer_param_count(sim->trainer);
    double *mean = calloc(n, sizeof *mean);
    if (mean == NULL) return HS_E_NOMEM;
    for (int i = 0; i < sim->world.n; i++) {
        const float *x = trainer_params(sim->trainer, i);
        for (size_t p = 0; p < n; p++) mean[p] += x[p];
    }
    for (size_t p = 0; p < n; p++) mean[p] /= sim->world.n;
    double distance = 0;
    for (int i = 0; i < sim->world.n; i++) {
        const float *x = trainer_params(sim->trainer, i);
        for (size_t p = 0; p < n; p++) distance += (x[p] - mean[p]) * (x[p] - mean[p]);
    }
    free(mean);
    sim->round_extra = distance / sim->world.n;
    return HS_OK;
}

static void dpsgd_destroy(void *state)
{
    DpsgdState *s = state;
    if (s == NULL) return;
    topology_free(&s->topology);
    free(s->agents);
    stages_free(&s->st);
    free(s->who);
    free(s->vectors);
    free(s->weights);
    free(s->lost[0]);
    free(s->lost[1]);
    free(s);
}

/* CHOCO's copies need every q_j to arrive (see the header). */
static int dpsgd_validate(const Scenario *sc, HsDiag *diag)
{
    if (sc->network.loss_mode != LOSS_DROP || sc->compression.scheme == COMPRESS_NONE) return HS_OK;
    const char *where = sc->network.loss_mode_where[0] ? sc->network.loss_mode_where : sc->file;
    return hs_diag_set(diag, HS_E_INPUT, where, 0,
                       "[network] loss_mode = drop: dpsgd's [compression] gossips differences to copies its "
                       "neighbours hold, which a dropped message would leave behind for good; use loss_mode = "
                       "retransmit, or no [compression]");
}

static const SchemaKey dpsgd_keys[] = {
    PRUNE_METHOD_KEYS_ALWAYS(DpsgdKeys, pruning.),
    FREEZE_METHOD_KEYS(DpsgdKeys, freezing.),
    {0},
};

static const MethodStages dpsgd_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient at its own model",
    .outgoing = "its model to every neighbour (compressed: CHOCO differences)",
    .aggregate = "Metropolis-Hastings mix of the neighbours' models",
    .refuses = {
        [FEATURE_PRIVACY_UPDATE] = STAGE_NO_TRUSTED_AGGREGATOR,
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_GOSSIP,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_GOSSIP,
    },
};

static const MethodExtra dpsgd_extras[] = {
    {.meaning = "consensus distance at the round's end: mean of ||x_i - mean x||^2 (train mode)"},
    {0},
};

const MethodOps method_dpsgd = {
    .name = "dpsgd",
    .summary = "D-PSGD: gradient step plus mixing with neighbours every step (Metropolis-Hastings, a FILE.weights, "
               "or STL-FW's learned W)",
    .keys = dpsgd_keys,
    .keys_size = sizeof(DpsgdKeys),
    .capabilities = METHOD_USES_TOPOLOGY | METHOD_GOSSIPS_DIFFERENCES | METHOD_LOSSY_LINKS | METHOD_DROPS_LOST |
                    METHOD_MIXES_WEIGHTS,
    .stages = &dpsgd_stages,
    .extra = dpsgd_extras,
    .validate = dpsgd_validate,
    .create = dpsgd_create,
    .round_begin = dpsgd_round_begin,
    .on_event = dpsgd_on_event,
    .round_end = dpsgd_round_end,
    .destroy = dpsgd_destroy,
};
