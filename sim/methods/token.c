/* token.c — token algorithms: a model token walks the [topology] graph (SA-SRRW, Hu,
 * Doshi, Eun, "Accelerating Distributed Stochastic Optimization via Self-Repellent Random
 * Walks", ICLR 2024; the SRRW of Doshi, Hu, Eun, ICML 2023).
 *
 * A token is a model with its optimiser state. The agent it visits takes one step on its
 * next batch with the token's model (its processor: engine_compute of one step's FLOPs),
 * draws the next agent from the walk's kernel (sim/world/walk.h: simple, metropolis or srrw)
 * and sends the token there (engine_send of the model's bytes, plus the optimiser's state
 * vectors: velocity for momentum, two moments for Adam, since the state travels with the
 * model). A self-loop (metropolis, srrw on it) keeps the token where it is: no transfer.
 * SA-SRRW's iteration, one token:
 *   X_{n+1} ~ K_{X_n, .}[x_n];  x_{n+1} = x_n + gamma_{n+1} (delta_{X_{n+1}} - x_n);
 *   theta_{n+1} = theta_n - beta_{n+1} grad F_{X_{n+1}}(theta_n).
 * It minimises sum_i mu_i F_i(theta), mu the base chain's stationary distribution:
 * uniform for metropolis (the papers' experiments), degree-proportional for simple (the
 * same on regular graphs: ring, torus, full, random-regular, exponential).
 * Where this departs from the paper: theta's step is the [model] optimiser at this
 * round's learning rate (its schedule), not the paper's beta_n = (n+1)^(-b), so that the
 * token is compared with the other methods under the same optimiser; a decaying schedule
 * is available through [model] schedule. gamma_n = (n+1)^(-a) is the paper's
 * (measure_exponent = a).
 *
 * Several tokens (`tokens = K`): each walks and steps on its own model, with its own
 * random stream, starting at an agent drawn from mu. They share one visit measure: an
 * agent counts every token's visits, and a token at i reads its neighbours' counts (so
 * the repellence also spreads the tokens apart). With one token this is SA-SRRW exactly.
 * The model evaluated after a round is the uniform average of the tokens' models.
 *
 * Rounds: a round is as many visits (steps, all tokens together) as the agents hold
 * batches: one pass over the whole data set, as in `sync`. Tokens never wait at a round
 * boundary (like adpsgd): the round ends when its last step completes, and the tokens in
 * flight carry on into the next round. rounds.extra holds the total-variation distance
 * between the visit frequencies so far and mu: the quantity whose variance SRRW reduces.
 * Timing mode walks the same way (the walk never reads a value), so both modes give
 * identical timings. A visit waits for an offline agent (engine_compute pauses); an agent
 * offline for good while the run still needs steps fails the run. */
#include "models/optim.h"
#include "sim/methods/method.h"
#include "sim/kernel/rng.h"
#include "sim/scenario/topology.h"
#include "sim/train/trainer.h"
#include "sim/world/walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { TOKEN_ARRIVED = ENGINE_EVENT_METHOD, TOKEN_COMPUTED };

/* Stream ids under RNG_PURPOSE_METHOD. */
#define TOKEN_START_STREAM (0x70ULL << 32)
#define TOKEN_WALK_TAG 0x71ULL

typedef struct Token {
    int at;              /* the agent that holds it, or that it travels to */
    gsl_rng *rng;        /* its walk's draws */
    float *params;       /* (n_params) train mode */
    float *grad;         /* (n_params) */
    Optim *optim;
} Token;

typedef struct TokenState {
    Topology topology;
    Walk walk;
    Token *tokens;
    int n_tokens;
    int *targets;        /* (max degree + 1) scratch for the kernel */
    double *probs;
    double bytes;
    long steps_per_round, steps;
    Stages st;           /* the visit's step: DP-SGD, a sub-model, a stage */
    size_t n_params;
    int round, started;
} TokenState;

static void token_destroy(void *state)
{
    TokenState *s = state;
    if (s == NULL) return;
    for (int k = 0; s->tokens && k < s->n_tokens; k++) {
        if (s->tokens[k].rng) gsl_rng_free(s->tokens[k].rng);
        free(s->tokens[k].params);
        free(s->tokens[k].grad);
        optim_free(s->tokens[k].optim);
    }
    free(s->tokens);
    free(s->targets);
    free(s->probs);
    walk_free(&s->walk);
    topology_free(&s->topology);
    stages_free(&s->st);
    free(s);
}

/* State vectors an optimiser carries besides the parameters (they travel with the token). */
static int token_state_vectors(OptimKind kind)
{
    return kind == OPTIM_SGD ? 0 : kind == OPTIM_MOMENTUM ? 1 : 2;
}

/* [method] keys (token_keys below) */
typedef struct TokenKeys {
    int walk;               /* simple|metropolis|srrw: token_create's kinds[] */
    double alpha;
    int base;               /* metropolis|simple: token_create's bases[] */
    double measure_exponent;
    int tokens;
    PruneKeys pruning;
    FreezeKeys freezing;
} TokenKeys;

static int token_create(Sim *sim, void **state)
{
    TokenState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    const Scenario *sc = sim->sc;
    int n = sim->world.n;
    int status = scenario_topology(sc, n, &s->topology, sim->diag);
    if (status != HS_OK) return status;
    static const WalkKind kinds[] = {WALK_SIMPLE, WALK_METROPOLIS, WALK_SRRW};
    static const WalkKind bases[] = {WALK_METROPOLIS, WALK_SIMPLE};
    const TokenKeys *keys = scenario_method_keys(sc);
    if (walk_init(&s->walk, &s->topology, kinds[keys->walk], bases[keys->base], keys->alpha, keys->measure_exponent) !=
        HS_OK)
        return HS_E_NOMEM;
    s->n_tokens = keys->tokens;
    s->tokens = calloc((size_t)s->n_tokens, sizeof *s->tokens);
    s->targets = calloc((size_t)s->walk.max_degree + 2, sizeof *s->targets);
    s->probs = calloc((size_t)s->walk.max_degree + 2, sizeof *s->probs);
    if (!s->tokens || !s->targets || !s->probs) return HS_E_NOMEM;
    s->bytes = sim_model_bytes(sim) * (1 + token_state_vectors(sc->optim.kind));
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    for (int i = 0; i < n; i++) s->steps_per_round += sim_agent_steps(sim, i);
    if ((status = trainer_setup_shared(sim->trainer)) != HS_OK) return status;
    s->n_params = trainer_param_count(sim->trainer);
    gsl_rng *start = rng_stream_create(sc->seed, TOKEN_START_STREAM, RNG_PURPOSE_METHOD);
    if (start == NULL) return HS_E_NOMEM;
    for (int k = 0; k < s->n_tokens; k++) {
        Token *t = &s->tokens[k];
        /* the start is drawn from mu, in token order */
        double u = gsl_rng_uniform(start), cumulative = 0;
        t->at = n - 1;
        for (int i = 0; i < n - 1; i++) {
            cumulative += s->walk.mu[i];
            if (u < cumulative) {
                t->at = i;
                break;
            }
        }
        t->rng = rng_stream_create(sc->seed, (TOKEN_WALK_TAG << 32) | (uint64_t)k, RNG_PURPOSE_METHOD);
        if (t->rng == NULL) break;
        if (sim->trainer == NULL) continue;
        /* every token starts from the shared model's initial parameters */
        t->params = malloc(s->n_params * sizeof *t->params);
        t->grad = calloc(s->n_params, sizeof *t->grad);
        if (!t->params || !t->grad || optim_create(&sc->optim, s->n_params, &t->optim) != HS_OK) break;
        memcpy(t->params, trainer_shared_params(sim->trainer), s->n_params * sizeof *t->params);
    }
    gsl_rng_free(start);
    for (int k = 0; k < s->n_tokens; k++)
        if (s->tokens[k].rng == NULL || (sim->trainer && s->tokens[k].optim == NULL))
            return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory for %d tokens", s->n_tokens);
    return HS_OK;
}

/* Token k arrives at (or stays on) its agent: the visit counts, the step begins. The
 * gradient is taken on the token's model as it is when the computation starts. */
static int token_begin_visit(TokenState *s, Sim *sim, int k)
{
    Token *t = &s->tokens[k];
    walk_visit(&s->walk, t->at);
    int status = local_step_gradient(&s->st.step, t->at, t->params, t->grad);
    if (status != HS_OK) return status;
    double finish;
    if ((status = engine_compute(sim->engine, t->at, local_step_flops(&s->st.step, t->at), TOKEN_COMPUTED, k, &finish)) !=
        HS_OK)
        return status;
    if (!isfinite(finish) && (sim->sc->rounds <= 0 || s->steps < (long)sim->sc->rounds * s->steps_per_round))
        return engine_fail_stranded(sim->engine, t->at);
    return HS_OK;
}

static int token_round_begin(void *state, Sim *sim, int round)
{
    TokenState *s = state;
    s->round = round;
    stages_begin_round(&s->st, round);
    if (s->started) return HS_OK; /* the tokens are already walking */
    s->started = 1;
    int status = HS_OK;
    for (int k = 0; k < s->n_tokens && status == HS_OK; k++) status = token_begin_visit(s, sim, k);
    return status;
}

static int token_on_event(void *state, Sim *sim, const Event *ev)
{
    TokenState *s = state;
    int k = (int)ev->data;
    Token *t = &s->tokens[k];
    if (ev->kind == TOKEN_ARRIVED) return token_begin_visit(s, sim, k);
    /* the step is done: apply it, count it, pass the token on */
    if (sim->trainer)
        local_step_optim_step(&s->st.step, t->optim, t->params, t->grad, s->n_params,
                              trainer_schedule_lr(sim->sc, engine_round(sim->engine)));
    s->steps++;
    if (s->steps == (long)(s->round + 1) * s->steps_per_round) {
        sim->round_extra = walk_tv_distance(&s->walk);
        engine_end_round(sim->engine);
    }
    int from = t->at;
    t->at = walk_next(&s->walk, from, t->rng, s->targets, s->probs);
    if (t->at == from) return token_begin_visit(s, sim, k);
    return engine_send(sim->engine, from, t->at, s->bytes, TOKEN_ARRIVED, k);
}

/* The evaluated model: the tokens' average, summed in token order. */
static int token_round_end(void *state, Sim *sim, int round)
{
    TokenState *s = state;
    float *shared = trainer_shared_params(sim->trainer);
    if (shared == NULL) return HS_OK;
    for (size_t j = 0; j < s->n_params; j++) {
        double sum = 0;
        for (int k = 0; k < s->n_tokens; k++) sum += s->tokens[k].params[j];
        shared[j] = (float)(sum / s->n_tokens);
    }
    return HS_OK;
}

static const SchemaKey token_keys[] = {
    METHOD_KEY(TokenKeys, walk, "srrw", "the token's transition kernel: simple, metropolis (uniform target) or srrw (self-repellent)",
     .type = SCHEMA_CHOICE, .choices = "simple|metropolis|srrw"),
    METHOD_KEY(TokenKeys, alpha, "1", "srrw: self-repellence strength (0 is the base chain)", .type = SCHEMA_REAL, .min = 0, .max = 100),
    METHOD_KEY(TokenKeys, base, "metropolis", "srrw: the base chain it is built on", .type = SCHEMA_CHOICE,
     .choices = "metropolis|simple"),
    METHOD_KEY(TokenKeys, measure_exponent, "1", "a of the visit measure's step (k+1)^-a (1: the empirical measure)",
     .type = SCHEMA_REAL, .min = 0.5, .max = 1, .flags = SCHEMA_OPEN_MIN),
    METHOD_KEY(TokenKeys, tokens, "1", "tokens walking at once, each with its own model", .type = SCHEMA_INT, .min = 1, .max = 1024),
    PRUNE_METHOD_KEYS(TokenKeys, pruning.),
    FREEZE_METHOD_KEYS(TokenKeys, freezing.),
    {0},
};

static const MethodStages token_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING,
    .local_step = "a step of the visiting token's model on the agent's batch",
    .outgoing = "the token: its model and optimiser state",
    .aggregate = NULL,
    .refuses = {
        [FEATURE_COMPRESSION] = "the token is the only copy of its model: the agent it moves to holds nothing a compressed difference could be added to",
        [FEATURE_DRIFT_FEDPROX] = "the token is the only model: one trajectory visits the agents in turn, so no clients train apart from a common start and drift",
    },
};

static const MethodExtra token_extras[] = {
    {.meaning = "total-variation distance between the visit frequencies so far and mu"},
    {0},
};

const MethodOps method_token = {
    .name = "token",
    .summary = "token algorithm: a model walks the graph (simple, Metropolis or self-repellent SRRW walk), "
               "one step per visit",
    .keys = token_keys,
    .keys_size = sizeof(TokenKeys),
    .capabilities = METHOD_USES_TOPOLOGY | METHOD_LOSSY_LINKS,
    .stages = &token_stages,
    .extra = token_extras,
    .create = token_create,
    .round_begin = token_round_begin,
    .on_event = token_on_event,
    .round_end = token_round_end,
    .destroy = token_destroy,
};
