/* rog.c — ROG (Guan, Sun, Deng, Chen, Zhao, Zhang, Duan, Wang, Wu, Cui, Zhang, Wu, Wang,
 * Cui, "ROG: A High Performance and Robust Distributed Training System for Robotic IoT",
 * MICRO 2022): data parallel training over fluctuating wireless links, where transmission
 * and synchronisation are row-granulated: each step an agent sends only the rows of its
 * gradient that its link can carry within a time budget, the most important first, and a
 * staleness bound makes sure no row's update is held back for long.
 *
 * exchange = gather (the default): every agent holds the same model (as in sync). Per step:
 *   1. each agent computes the gradient g_i of one batch at the shared model (the [model]
 *      step's FLOPs) and adds it to its residual e_i (the gradients it has not sent);
 *   2. when its gradient is done it sends rows of e_i to its ring successor
 *      (sim/stages/rowsend.h: each layer's share, mandatory rows first so that every row
 *      goes at least once every `staleness` steps, then the others by `importance`); the
 *      sent rows leave e_i. How many:
 *        cut = start (the default): the rows that budget x bw_i bytes hold, bw_i its link's
 *          bandwidth now (a bandwidth trace's current value included);
 *        cut = deadline (the paper's): it streams every row in that order and the message
 *          is cut at now + budget (engine_send_until): the whole rows that arrived are sent,
 *          the mandatory ones whatever the deadline (the message's floor);
 *   3. the agents' messages travel by a ring all-gather (every hop a message of its
 *      encoded size: 4 (X + 1) value bytes and a 4-byte index per row); when every agent
 *      holds every message each applies x <- x - lr (sum_i sent_i) / N with the [model]
 *      optimiser (the same update everywhere: agent 0's optimiser steps, the others copy).
 * exchange = ps (the paper's parameter server): agent 0's node is the server (it trains
 * too; its own rows need no link and all go). Each worker pushes its rows to it as in 2
 * (sized or cut on its link to the server); once every push is in the server steps,
 * x_s <- x_s - lr (sum of the rows in) / N, and sends each worker j a pull: the rows of
 * x_s - x_j, chosen the same way (mandatory rotation, then the largest differences) and
 * sized or cut the same way on the server's link to j; j copies those rows of x_s. The
 * step ends when every pull is in. The workers' models differ on the rows they did not
 * pull; the evaluated model is the agents' average (the run's default).
 * A round is ceil(mean samples / mean batch) steps, as sync's. With budget = none every
 * row goes every step and the update is sync's mean gradient (ps: every worker then holds
 * x_s, so its models are gather's bit for bit).
 *
 * The number of rows an agent sends (so its message's bytes and the run's timing) depends
 * on the budget, the network (its bandwidth at the start, or what arrived by the deadline)
 * and the step only, never on the values: train mode times exactly like timing mode.
 * Which rows go is the values' business.
 *
 * Where hetsim deviates from the paper (docs/methods.md, "rog"), and why:
 *   - exchange = gather (the default, which the first version had) all-gathers the rows,
 *     so the budget bounds the first hop of an agent's own message and a step's exchange
 *     lasts about (N - 1) (latency + budget); ps is the paper's topology, with the server
 *     on a robot (agent 0) rather than a separate machine, and synchronous steps (every
 *     push in before the server steps, every pull in before the next step);
 *   - cut = start (the default) fixes the row count when the message starts, from the
 *     bandwidth then (a trace that drops during the message makes it last longer than the
 *     budget); cut = deadline stops it when the time is up, as the paper does, and the
 *     budget includes the message's latency there;
 *   - a cut message carries its layers interleaved in proportion to their bytes, so that
 *     what arrived holds each layer's share (the row count depends on the bytes only);
 *   - the staleness bound is kept by a fixed rotation (rows r = t mod S are always sent)
 *     rather than by sending the rows whose age reached S, so that the count never depends
 *     on which rows the values picked before (train = timing); ages stay below S all the
 *     same (tests/check_rog.c);
 *   - the budget is split among the layers by their bytes, and rows are ranked within a
 *     layer, so the bytes do not depend on which layer's rows the values pick;
 *   - the server's processing costs no time (the paper's server is a PC beside robots).
 * rounds.extra = the share of rows sent, mean over the round's agent-steps (ps: the
 * workers' pushes).
 *
 * Unstable links ([agents] loss, sim/kernel/loss.c; every message here is point to point,
 * the all-gather's hops included): under loss_mode = retransmit a lost message is sent
 * again rto after its attempt ended; a message cut at a deadline keeps its deadline, so a
 * retransmission cuts it again there, and one that starts after it carries its mandatory
 * rows only (the floor): the rows that had not arrived by the deadline are stale, left in
 * the residual for a later step, as the paper wants of rows a fluctuating link could not
 * carry in time. Under loss_mode = drop (exchange = ps only) nothing is sent again: a lost
 * push leaves the worker's rows in its residual (they count as not sent) and the server
 * steps on the pushes that arrived, still dividing by N; a lost pull leaves the worker's
 * rows as they were, stale where the server's moved. ROG tolerates both: that is what the
 * row-level staleness is for. A lost mandatory row breaks the staleness bound for that
 * row (rowsend keeps the sender's view: it was sent). exchange = gather refuses drop (the
 * ring's later hops forward what a lost hop never delivered; rog_validate). */
#include "sim/methods/method.h"
#include "sim/stages/rowsend.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { ROG_COMPUTED = ENGINE_EVENT_METHOD, ROG_BLOCK, ROG_CUT, ROG_PUSHED, ROG_PULLED };

/* exchange: how the rows travel */
enum { ROG_GATHER = 0, ROG_PS = 1 };
/* the parameter server (exchange = ps): an agent's node, so that it trains as well */
#define ROG_SERVER 0

/* cut: when an agent's message is decided */
enum { ROG_CUT_START = 0, ROG_CUT_DEADLINE = 1 };

/* [method] keys (rog_keys below) */
typedef struct RogKeys {
    double budget;   /* s; inf: none, every row every step */
    int staleness;   /* S */
    int importance;  /* ROWSEND_MAGNITUDE or ROWSEND_AGE */
    int cut;         /* ROG_CUT_START or ROG_CUT_DEADLINE */
    int exchange;    /* ROG_GATHER or ROG_PS */
} RogKeys;

/* buffers per agent: the gradient just computed, the residual not sent yet */
enum { ROG_GRADIENT, ROG_RESIDUAL };

typedef struct RogState {
    int n;
    int steps_per_round;
    int step;           /* steps done this round */
    long serial;        /* steps started, all rounds: the rows' clock */
    double budget;
    int cut;            /* ROG_CUT_DEADLINE: messages cut at the budget (budget finite, N > 1) */
    RowSend rows;
    RingGather gather;
    int ps;             /* exchange = ps */
    RowSend pull;       /* ps: the rows of the server's model each worker pulls */
    double *pull_allowed; /* (n) ps, cut = start: the bytes each pull was given */
    float *diff;        /* (params) ps: x_server - x_j, the pull's candidates */
    int pushed, pulled; /* ps: this step's pushes in, pulls in */
    LocalStep *ls;      /* the local step stage: plain gradients, or DP-SGD's under [privacy]
                         * clip = sample (the rows sent are then post-processing of them) */
    Stages st;
    float *update;      /* (params) sum of the sent rows / N */
    double sent_share;  /* this round: sum over agent-steps of the share of rows sent */
    long agent_steps;
    double *share;      /* (n) the share of rows in each agent's message this step (ps under
                         * loss_mode = drop: a lost push's share is taken back) */
} RogState;

/* The update is the plain sum / N of what the agents sent, every agent's rows alike. (The
 * model's rows, mlp or cnn, are checked by resolution: METHOD_SENDS_ROWS.) */
static int rog_validate(const Scenario *sc, HsDiag *diag)
{
    int group;
    if (scenario_batches(sc, &group) == SCENARIO_BATCH_UNEQUAL)
        return scenario_batch_error(sc, group, diag,
                                    "rog's update sums the rows the agents sent and divides by N, counting every "
                                    "agent's gradient alike (give every agent the same batch)");
    /* loss_mode = drop: the all-gather forwards each agent's rows round the ring, so a
     * dropped hop would leave the agents after it without rows the others apply to the one
     * model they share (the header) */
    const RogKeys *keys = scenario_method_keys(sc);
    if (sc->network.loss_mode != LOSS_DROP || keys->exchange != ROG_GATHER) return HS_OK;
    for (int g = 0; g < sc->n_groups; g++)
        if (sc->groups[g].loss > 0) {
            const char *where = sc->network.loss_mode_where[0] ? sc->network.loss_mode_where : sc->file;
            return hs_diag_set(diag, HS_E_INPUT, where, 0,
                               "[network] loss_mode = drop: rog's exchange = gather all-gathers the rows round "
                               "a ring into one shared model, which a dropped hop would split; use exchange = ps "
                               "(a lost push or pull stays stale) or loss_mode = retransmit");
        }
    return HS_OK;
}

static int rog_create(Sim *sim, void **state)
{
    RogState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    const RogKeys *keys = scenario_method_keys(sim->sc);
    s->n = sim->world.n;
    s->steps_per_round = sim_round_steps(sim);
    s->budget = keys->budget;
    s->cut = keys->cut == ROG_CUT_DEADLINE && isfinite(keys->budget) && s->n > 1 ? ROG_CUT_DEADLINE : ROG_CUT_START;
    RowLayout layout;
    if (row_layout_of(&sim->sc->model, &sim->profile, &layout) != HS_OK)
        return hs_diag_set(sim->diag, HS_E_INTERNAL, NULL, 0, "rog: the model has no rows");
    int status;
    s->ps = keys->exchange == ROG_PS;
    if ((status = rowsend_init(&s->rows, &layout, s->n, keys->staleness, keys->importance)) != HS_OK ||
        (status = ring_gather_init(&s->gather, s->n, ROG_BLOCK)) != HS_OK ||
        (s->ps && (status = rowsend_init(&s->pull, &layout, s->n, keys->staleness, keys->importance)) != HS_OK))
        return hs_diag_set(sim->diag, status, NULL, 0, "out of memory for rog's rows");
    if ((s->share = calloc((size_t)s->n, sizeof *s->share)) == NULL ||
        (s->ps && (s->pull_allowed = calloc((size_t)s->n, sizeof *s->pull_allowed)) == NULL))
        return hs_diag_set(sim->diag, HS_E_NOMEM, NULL, 0, "out of memory for rog's rows");
    StagesSetup setup = {0};
    if ((status = sim_stages_create(sim, &s->st, &setup)) != HS_OK) return status;
    s->ls = &s->st.step;
    if ((status = trainer_setup_local(sim->trainer, 2)) != HS_OK) return status;
    if (sim->trainer && (s->update = calloc(trainer_param_count(sim->trainer), sizeof *s->update)) == NULL)
        return HS_E_NOMEM;
    if (s->ps && sim->trainer && (s->diff = calloc(trainer_param_count(sim->trainer), sizeof *s->diff)) == NULL)
        return HS_E_NOMEM;
    return HS_OK;
}

/* Every agent starts its gradient at the shared model; in train mode it is taken now (the
 * parameters do not change until the step's exchange ends) and joins the residual. */
static int rog_start_step(RogState *s, Sim *sim)
{
    s->serial++;
    ring_gather_begin(&s->gather, NULL, s->n);
    s->pushed = s->pulled = 0;
    Trainer *t = sim->trainer;
    for (int i = 0; i < s->n; i++) {
        int status = engine_compute(sim->engine, i, local_step_flops(s->ls, i), ROG_COMPUTED, 0, NULL);
        if (status != HS_OK) return status;
        /* timing mode too (no trainer, no buffer): DP-SGD's accountant counts the step */
        float *g = trainer_buffer(t, i, ROG_GRADIENT);
        if ((status = local_step_gradient(s->ls, i, NULL, g)) != HS_OK) return status;
        if (t == NULL) continue;
        vec_axpy(trainer_buffer(t, i, ROG_RESIDUAL), 1.0f, g, trainer_param_count(t));
    }
    return HS_OK;
}

/* Agent i sends the rows `allowed` bytes hold this step: they are booked (the round's
 * share of rows, which rows leave the residual) and their bytes returned. */
static double rog_take_rows(RogState *s, Sim *sim, int i, double allowed)
{
    long t = s->serial - 1;
    double bytes = rowsend_bytes(&s->rows, t, allowed);
    const RowLayout *l = &s->rows.layout;
    int sent = 0;
    for (int b = 0; b < l->n_layers; b++) sent += rowsend_count(&s->rows, b, t, allowed);
    s->share[i] = (double)sent / l->total_rows;
    s->sent_share += s->share[i];
    s->agent_steps++;
    sim->round_extra = s->sent_share / (double)s->agent_steps;
    rowsend_choose(&s->rows, i, t, allowed, sim->trainer ? trainer_buffer(sim->trainer, i, ROG_RESIDUAL) : NULL);
    return bytes;
}

/* Agent i's gradient is done. cut = start: its rows for the budget at its link's
 * bandwidth now. cut = deadline: it streams every row to its successor (mandatory first,
 * then by importance, rowsend.h) and the message is cut at now + budget, the mandatory
 * rows through whatever the deadline (rog_cut_arrived takes it from there). */
static int rog_offer(RogState *s, Sim *sim, int i, int *complete)
{
    if (s->cut == ROG_CUT_DEADLINE) {
        long t = s->serial - 1;
        *complete = 0;
        return engine_send_until(sim->engine, i, (i + 1) % s->n, rowsend_bytes(&s->rows, t, INFINITY),
                                 rowsend_floor(&s->rows, t), engine_now(sim->engine) + s->budget, ROG_CUT, i);
    }
    double allowed = INFINITY; /* budget = none */
    if (isfinite(s->budget)) {
        allowed = s->budget * engine_message_bandwidth(sim->engine, i, (i + 1) % s->n);
        if (isnan(allowed)) allowed = 0; /* budget 0 on an infinite link: the mandatory rows */
    }
    double bytes = rog_take_rows(s, sim, i, allowed);
    return ring_gather_offer(sim->engine, &s->gather, i, bytes, complete);
}

/* cut = deadline: agent i's message reached its successor with the bytes that arrived by
 * the deadline; the whole rows among them are what it sent (a number that depends on the
 * network only: train = timing), and they go on round the ring as a block of the gather,
 * as if the successor had received it there (the agents are the gather's members in
 * order: position = agent). */
static int rog_cut_arrived(RogState *s, Sim *sim, const Event *ev, int *complete)
{
    int i = (int)ev->data;
    s->gather.bytes[i] = rog_take_rows(s, sim, i, engine_delivered_bytes(sim->engine));
    Event hop = *ev;
    hop.kind = ROG_BLOCK;
    return ring_gather_arrived(sim->engine, &s->gather, &hop, complete);
}

/* The step is over: the next one, or the round's end. */
static int rog_next_step(RogState *s, Sim *sim)
{
    if (++s->step < s->steps_per_round) return rog_start_step(s, sim);
    engine_end_round(sim->engine);
    return HS_OK;
}

/* ---- exchange = ps: push to the server, pull from it ----
 * The server is agent ROG_SERVER's node (it trains too; its own rows need no link and all
 * go). A worker pushes its rows to the server as the gather's first hop goes (cut = start:
 * budget x bandwidth to the server now; deadline: cut at budget); once every push is in,
 * the server applies x_s <- x_s - lr (sum of the rows in) / N with the [model] optimiser,
 * and sends each worker a pull: the rows of x_s - x_j, chosen and sized the same way (the
 * largest differences first, every row at least once every S steps), which the worker
 * copies from x_s. The step ends when every pull is in: workers hold x_s on the rows they
 * pulled, their older values elsewhere. */

/* Worker j's pull of `allowed` bytes arrived: it takes those rows of x_s. x_s and x_j do
 * not change until the step ends, so the choice made now is the one made at the send. */
static void rog_ps_take_pull(RogState *s, Sim *sim, int j, double allowed)
{
    Trainer *t = sim->trainer;
    long step = s->serial - 1;
    if (t == NULL) return;
    size_t params = trainer_param_count(t);
    const float *x = trainer_params(t, ROG_SERVER);
    float *mine = trainer_params(t, j);
    for (size_t p = 0; p < params; p++) s->diff[p] = x[p] - mine[p];
    rowsend_choose(&s->pull, j, step, allowed, s->diff);
    rowsend_copy(&s->pull, j, x, mine);
}

/* The mean of the rows every agent sent (its residual's chosen rows, taken out of it),
 * applied as one step at agent `at`; summed in agent order, the same sum on every run. */
static int rog_apply_mean_rows(RogState *s, Trainer *t, int at)
{
    size_t params = trainer_param_count(t);
    memset(s->update, 0, params * sizeof *s->update);
    for (int i = 0; i < s->n; i++) rowsend_take(&s->rows, i, trainer_buffer(t, i, ROG_RESIDUAL), s->update);
    vec_scale(s->update, 1.0f / (float)s->n, params);
    return local_step_apply(s->ls, at, s->update);
}

/* Every push is in: the server's update, then the pulls. */
static int rog_ps_update(RogState *s, Sim *sim)
{
    Trainer *t = sim->trainer;
    if (t != NULL) {
        int status = rog_apply_mean_rows(s, t, ROG_SERVER);
        if (status != HS_OK) return status;
    }
    if (s->n == 1) return rog_next_step(s, sim);
    long step = s->serial - 1;
    double now = engine_now(sim->engine);
    for (int j = 0; j < s->n; j++) {
        if (j == ROG_SERVER) continue;
        int status;
        if (s->cut == ROG_CUT_DEADLINE) {
            status = engine_send_until(sim->engine, ROG_SERVER, j, rowsend_bytes(&s->pull, step, INFINITY),
                                       rowsend_floor(&s->pull, step), now + s->budget, ROG_PULLED, j);
        } else {
            double allowed = INFINITY;
            if (isfinite(s->budget)) {
                allowed = s->budget * engine_message_bandwidth(sim->engine, ROG_SERVER, j);
                if (isnan(allowed)) allowed = 0;
            }
            s->pull_allowed[j] = allowed;
            status = engine_send(sim->engine, ROG_SERVER, j, rowsend_bytes(&s->pull, step, allowed), ROG_PULLED, j);
        }
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

static int rog_ps_pushed(RogState *s, Sim *sim)
{
    return ++s->pushed == s->n ? rog_ps_update(s, sim) : HS_OK;
}

/* Agent i's gradient is done: the server's own rows all go; a worker pushes. */
static int rog_ps_offer(RogState *s, Sim *sim, int i)
{
    long step = s->serial - 1;
    if (i == ROG_SERVER) {
        rowsend_choose(&s->rows, i, step, INFINITY,
                       sim->trainer ? trainer_buffer(sim->trainer, i, ROG_RESIDUAL) : NULL);
        return rog_ps_pushed(s, sim);
    }
    if (s->cut == ROG_CUT_DEADLINE)
        return engine_send_until(sim->engine, i, ROG_SERVER, rowsend_bytes(&s->rows, step, INFINITY),
                                 rowsend_floor(&s->rows, step), engine_now(sim->engine) + s->budget, ROG_PUSHED, i);
    double allowed = INFINITY;
    if (isfinite(s->budget)) {
        allowed = s->budget * engine_message_bandwidth(sim->engine, i, ROG_SERVER);
        if (isnan(allowed)) allowed = 0;
    }
    return engine_send(sim->engine, i, ROG_SERVER, rog_take_rows(s, sim, i, allowed), ROG_PUSHED, i);
}

/* loss_mode = drop: worker i's push was lost. Its rows stay in its residual (stale, to go
 * again by importance or rotation) and count as not sent: cut = start took them at the
 * send, so their share is taken back; cut = deadline never took them (the agent-step
 * counts, with no rows). */
static void rog_ps_push_lost(RogState *s, Sim *sim, int i)
{
    rowsend_forget(&s->rows, i);
    if (s->cut == ROG_CUT_DEADLINE) s->agent_steps++;
    else s->sent_share -= s->share[i];
    sim->round_extra = s->sent_share / (double)s->agent_steps;
}

static int rog_ps_event(RogState *s, Sim *sim, const Event *ev)
{
    int lost = engine_delivery_lost(sim->engine, NULL);
    switch (ev->kind) {
    case ROG_COMPUTED: return rog_ps_offer(s, sim, ev->agent);
    case ROG_PUSHED:
        if (lost) rog_ps_push_lost(s, sim, (int)ev->data);
        else if (s->cut == ROG_CUT_DEADLINE)
            rog_take_rows(s, sim, (int)ev->data, engine_delivered_bytes(sim->engine));
        return rog_ps_pushed(s, sim);
    default: /* ROG_PULLED; lost (drop): the worker keeps its rows, stale where the server's moved */
        if (!lost)
            rog_ps_take_pull(s, sim, ev->agent,
                             s->cut == ROG_CUT_DEADLINE ? engine_delivered_bytes(sim->engine)
                                                        : s->pull_allowed[ev->agent]);
        return ++s->pulled == s->n - 1 ? rog_next_step(s, sim) : HS_OK;
    }
}

/* Every agent holds every message: the same update everywhere. */
static int rog_finish_step(RogState *s, Sim *sim)
{
    Trainer *t = sim->trainer;
    if (t != NULL) {
        int status = rog_apply_mean_rows(s, t, 0);
        if (status != HS_OK) return status;
        size_t params = trainer_param_count(t);
        const float *x = trainer_params(t, 0);
        for (int i = 1; i < s->n; i++) memcpy(trainer_params(t, i), x, params * sizeof *x);
    }
    return rog_next_step(s, sim);
}

static int rog_round_begin(void *state, Sim *sim, int round)
{
    RogState *s = state;
    s->step = 0;
    s->sent_share = 0;
    s->agent_steps = 0;
    stages_begin_round(&s->st, round);
    return rog_start_step(s, sim);
}

static int rog_on_event(void *state, Sim *sim, const Event *ev)
{
    RogState *s = state;
    if (s->ps) return rog_ps_event(s, sim, ev);
    int complete;
    int status = ev->kind == ROG_COMPUTED ? rog_offer(s, sim, ev->agent, &complete)
                 : ev->kind == ROG_CUT        ? rog_cut_arrived(s, sim, ev, &complete)
                                              : ring_gather_arrived(sim->engine, &s->gather, ev, &complete);
    if (status != HS_OK) return status;
    return complete ? rog_finish_step(s, sim) : HS_OK;
}

static void rog_destroy(void *state)
{
    RogState *s = state;
    if (s == NULL) return;
    stages_free(&s->st);
    rowsend_free(&s->rows);
    rowsend_free(&s->pull);
    free(s->pull_allowed);
    free(s->share);
    free(s->diff);
    ring_gather_free(&s->gather);
    free(s->update);
    free(s);
}

static const SchemaKey rog_keys[] = {
    METHOD_KEY(RogKeys, budget, "50 ms",
               "time an agent's message may take on its link: it sends the rows that budget x its bandwidth now "
               "holds, or (cut = deadline) the message is cut at budget (none: every row every step)",
               .type = SCHEMA_TIME, .unit = UNIT_TIME, .min = 0, .max = INFINITY),
    METHOD_KEY(RogKeys, staleness, "4",
               "staleness bound S: every row of an agent's gradient is sent at least once every S steps",
               .type = SCHEMA_INT, .min = 1, .max = 1000000),
    METHOD_KEY(RogKeys, importance, "magnitude",
               "magnitude or age: which rows go first beyond the mandatory ones (mean |g| of the row's residual, or "
               "steps since the agent last sent it)",
               .type = SCHEMA_CHOICE, .choices = "magnitude|age"),
    METHOD_KEY(RogKeys, cut, "start",
               "start or deadline: an agent's row count is fixed when its message starts, from its bandwidth then "
               "(start), or it streams every row by importance and the message is cut at budget, keeping the rows "
               "that arrived, its mandatory ones whatever the deadline (deadline: the paper's design)",
               .type = SCHEMA_CHOICE, .choices = "start|deadline", .flags = SCHEMA_OMIT_DEFAULT),
    METHOD_KEY(RogKeys, exchange, "gather",
               "gather or ps: the agents all-gather the rows they send and hold one model (gather), or push them to a "
               "parameter server on agent 0 and pull the rows of its model that differ most, sized and cut like the "
               "pushes (ps: the paper's design)",
               .type = SCHEMA_CHOICE, .choices = "gather|ps", .flags = SCHEMA_OMIT_DEFAULT),
    {0},
};

#define ROG_ROWS_REFUSAL(what)                                                                                   \
    "rog sends a residual's rows (its own error feedback) chosen by importance: " what " of a partial row " \
    "message is not modelled"

static const MethodStages rog_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "a gradient of the shared model (exchange = ps: of its own)",
    .outgoing = "the rows of its residual that the budget holds",
    .aggregate = "all-gather (exchange = ps: the server's): sum of the rows sent / N",
    .refuses = {
        [FEATURE_COMPRESSION] = "rog's row selection is its compression, with its residual as the error feedback: "
                                "a second compressor on the rows is not modelled",
        [FEATURE_BYZANTINE] = ROG_ROWS_REFUSAL("a robust rule over vectors holding different rows"),
        [FEATURE_PRIVACY_UPDATE] = ROG_ROWS_REFUSAL("clipping each update (DP-FedSGD)"),
        [FEATURE_PRUNE] = STAGE_NOT_WIRED,
        [FEATURE_FREEZE] = STAGE_NOT_WIRED,
        [FEATURE_DRIFT_FEDPROX] = STAGE_DRIFT_NO_LOCAL_STEPS,
        [FEATURE_DRIFT_SCAFFOLD] = STAGE_DRIFT_NO_LOCAL_STEPS,
    },
};

static const MethodExtra rog_extras[] = {
    {.meaning = "share of rows sent, mean over the round's agent-steps"},
    {0},
};

const MethodOps method_rog = {
    .name = "rog",
    .summary = "ROG (Guan et al., MICRO 2022): each step an agent sends the most important rows of its gradient "
               "that its link carries within a time budget, every row at least once every S steps",
    .keys = rog_keys,
    .keys_size = sizeof(RogKeys),
    .capabilities = METHOD_SENDS_ROWS | METHOD_LOSSY_LINKS | METHOD_DROPS_LOST,
    .stages = &rog_stages,
    .extra = rog_extras,
    .validate = rog_validate,
    .create = rog_create,
    .round_begin = rog_round_begin,
    .on_event = rog_on_event,
    .destroy = rog_destroy,
};
