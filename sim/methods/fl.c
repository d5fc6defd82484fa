/* fl.c — server-based federated learning: FedAvg with client sampling, over-commitment
 * and a deadline (fedavg), and buffered asynchronous aggregation (fedbuff).
 * The server (node world.n, [server]) holds the global model x and no data; clients are
 * the agents. A client's job: the server sends x (the model's bytes over the server's
 * uplink, shared among the downloads in flight), the client runs `local_steps` local SGD
 * steps on its own data with the [model] optimiser (one step's FLOPs per step on its
 * processor), uploads its model (the model's bytes into the server's downlink), and the
 * server processes the upload on its processor (2 d FLOPs: one axpy into the aggregate).
 *
 * fedavg — McMahan et al., "Communication-Efficient Learning of Deep Networks from
 * Decentralized Data", AISTATS 2017, with the round rules of Bonawitz et al., "Towards
 * Federated Learning at Scale: System Design", MLSys 2019 and FedScale (Lai et al., ICML
 * 2022): each round the server wants K = max(1, round(participation x n)) reports; it
 * selects ceil(K (1 + overcommit)) clients (at most n) uniformly from the clients online
 * at the round's start (all of them when none is), from a stream seeded by (seed,
 * round); the round ends when the first K reports are processed, or at `deadline` after
 * its start with the reports in so far (none: x unchanged, as a failed round in
 * FedScale). x becomes the sample-weighted average of the reported models, summed in
 * report order. A client that misses the cut stops at its next step boundary (the engine
 * cannot cancel a step under way) and its upload, if already sent, is ignored: so the
 * dropped work costs what it cost, and nothing more. rounds.extra: the clients dropped
 * in the round (selected minus aggregated).
 * Departures: the clients' optimiser state (momentum) persists between their jobs
 * (McMahan et al. use plain SGD, where there is none).
 * [privacy] (sim/stages/privacy.h): clip = sample makes every local step a DP-SGD step; clip =
 * update clips each client's update x_i - x before its upload and adds the aggregate's
 * noise to the server's average (DP-FedAvg, McMahan et al. ICLR 2018, with the reporters'
 * sample weights; the accountant claims no amplification by client sampling, so epsilon
 * is an upper bound when participation < 1). A round without reports runs no mechanism.
 * [drift] (sim/stages/drift.h): fedprox adds mu (w - x) to every local step's gradient
 * (FedProx); scaffold corrects every step by c - c_i, the downloads carry (x, c) and the
 * uploads (y, Delta c_i) at twice the bytes, and the server's processing is two axpys;
 * c takes the round's aggregated reports (SCAFFOLD). fedbuff takes fedprox only, from y_0.
 *
 * fedbuff — Nguyen et al., "Federated Learning with Buffered Asynchronous Aggregation",
 * AISTATS 2022 (Algorithm 1): `concurrency` clients train at once (0: every agent);
 * each uploads Delta_i = y_0 - y_Q (the model it received minus its model after its
 * local steps); the server adds s(tau) Delta_i to its buffer, tau the server updates
 * since the client's download and s(tau) = 1 / sqrt(1 + tau) (the paper's staleness
 * weight); once `buffer` = K updates are in, x <- x - server_lr x (buffer / K) and the
 * buffer empties. After each upload the server picks the next client uniformly among
 * the idle ones (a stream seeded by (seed, uploads)) and sends it the current x, so the
 * concurrency stays constant. Rounds: a round is n uploads (one job per agent on
 * average); clients never wait at a round boundary. rounds.extra: the mean staleness
 * tau of the round's uploads.
 * Departures: the server optimiser is plain SGD with server_lr (the paper also tries
 * server momentum); secure aggregation and DP are out of scope here.
 *
 * Selection ([method] selection, fl_select.h, docs/selection.md): "uniformly" above is
 * the default; oort, power-of-choice, deadline and energy replace the draw of both methods
 * (fl_pick), each pick among the same candidates.
 * Both modes: every decision reads only event times, counters, seeded streams, the cost
 * model and the batteries, so train and timing mode time alike; the selections that read
 * losses (oort, power-of-choice) are refused in timing mode. Messages of a job that ended (a dropped fedavg
 * client's, one of a finished round) carry the job's tag and are ignored on arrival. */
#include "base/hugemem.h"
#include "models/model.h"
#include "sim/methods/fl_select.h"
#include "sim/methods/method.h"
#include "sim/kernel/rng.h"
#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { FL_MODEL_ARRIVED = ENGINE_EVENT_METHOD, FL_STEPPED, FL_UPLOADED, FL_PROCESSED, FL_DEADLINE, FL_TRAINED };

/* A job's tag rides in the events' data: (job << 24) | client. */
#define FL_CLIENT_BITS 24
#define FL_TAG(job, client) (((int64_t)(job) << FL_CLIENT_BITS) | (int64_t)(client))
#define FL_JOB(data) ((long)((data) >> FL_CLIENT_BITS))
#define FL_CLIENT(data) ((int)((data) & ((1 << FL_CLIENT_BITS) - 1)))

/* What a client's events read, in one record (32 bytes: two to a cache line): at a
 * million clients each event of a job is a cache miss on its client, one line instead of
 * one per array (the job, the steps left, the agent's batch for the step's FLOPs). */
typedef struct FlClient {
    long job;             /* its current job (fedavg: the round; fedbuff: a counter), -1: none */
    long version;         /* fedbuff: server updates at its download */
    double step_flops;    /* fedavg: one local step's FLOPs this round (local_step_flops at dispatch) */
    int remaining;        /* local steps left */
} FlClient;

typedef struct FlState {
    int buffered;         /* fedbuff */
    int server, n;
    int local_steps;      /* 0: one local epoch */
    double participation, overcommit, deadline;
    int concurrency, buffer_size;
    double server_lr;
    double bytes, process_flops;
    gsl_rng *rng;
    FlClient *clients;    /* (n) */
    char *busy;           /* (n) fedbuff: training or in flight (a byte each: scanned for idle clients) */
    int *order;           /* (n) scratch: candidates */
    int *reporters;       /* (n) fedavg: this round's reports, in order */
    int n_reports, wanted, selected;
    long k, uploads, jobs;
    int in_buffer, round, started;
    int steps_at_once;    /* fedavg: this round's jobs book their local steps at once (fl_steps_at_once) */
    double staleness_sum;
    long staleness_count;
    /* train mode */
    size_t d;
    float *x;             /* the shared (evaluated) model */
    const float **vectors;
    double *weights;
    Stages st;            /* the local step, the uploads, the server's aggregation */
    FlSelect sel;         /* [method] selection other than uniform (fl_select.h) */
} FlState;

static void fl_destroy(void *state)
{
    FlState *s = state;
    if (s == NULL) return;
    if (s->rng) gsl_rng_free(s->rng);
    free(s->clients);
    free(s->busy);
    free(s->order);
    free(s->reporters);
    free(s->vectors);
    free(s->weights);
    stages_free(&s->st);
    select_free(&s->sel);
    free(s);
}

/* [method] keys of fedavg (fedavg_keys) and fedbuff (fedbuff_keys): each lands its
 * rows, the other's fields stay 0 */
typedef struct FlKeys {
    int local_steps;       /* 0: epoch */
    double participation;  /* fedavg */
    double overcommit;     /* fedavg */
    double deadline;       /* fedavg: s, inf = none */
    int buffer;            /* fedbuff: K */
    int concurrency;       /* fedbuff: 0 = every agent */
    double server_lr;      /* fedbuff */
    PruneKeys pruning;
    FreezeKeys freezing;
    SelectKeys select;     /* both: which clients get the model (fl_select.h) */
} FlKeys;

static int fl_create(Sim *sim, void **state, int buffered)
{
    FlState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    int n = sim->world.n;
    s->buffered = buffered;
    s->server = n;
    s->n = n;
    const FlKeys *keys = scenario_method_keys(sim->sc);
    s->local_steps = keys->local_steps;
    if (buffered) {
        s->concurrency = keys->concurrency;
        if (s->concurrency == 0) s->concurrency = n; /* more than n is refused by fedbuff_validate */
        s->buffer_size = keys->buffer;
        s->server_lr = keys->server_lr;
    } else {
        s->participation = keys->participation;
        s->overcommit = keys->overcommit;
        s->deadline = keys->deadline;
    }
    s->bytes = sim_model_bytes(sim);
    s->process_flops = 2.0 * sim->profile.total_params;
    s->rng = gsl_rng_alloc(gsl_rng_taus2);
    s->clients = hs_huge_calloc((size_t)n, sizeof *s->clients);
    s->busy = calloc((size_t)n, 1);
    s->order = calloc((size_t)n, sizeof *s->order);
    s->reporters = calloc((size_t)n, sizeof *s->reporters);
    if (!s->rng || !s->clients || !s->busy || !s->order || !s->reporters)
        return HS_E_NOMEM;
    for (int i = 0; i < n; i++) s->clients[i].job = -1;
    int status;
    if ((status = trainer_setup_shared(sim->trainer)) != HS_OK) return status;
    /* buffer 0: fedbuff's y_0, the model the client received */
    if ((status = trainer_setup_local(sim->trainer, buffered ? 1 : 0)) != HS_OK) return status;
    if (sim->trainer == NULL) return HS_OK;
    s->d = trainer_param_count(sim->trainer);
    s->x = trainer_shared_params(sim->trainer);
    s->vectors = calloc((size_t)n, sizeof *s->vectors);
    s->weights = calloc((size_t)n, sizeof *s->weights);
    if (!s->vectors || !s->weights) return HS_E_NOMEM;
    return HS_OK;
}

/* The stages, after fl_create: the clients' steps per job for prune's rule. */
static int fl_stages(Sim *sim, FlState *s)
{
    const FlKeys *keys = scenario_method_keys(sim->sc);
    int n = sim->world.n, *steps = malloc((size_t)n * sizeof *steps);
    if (steps == NULL) return HS_E_NOMEM;
    for (int i = 0; i < n; i++) steps[i] = s->local_steps > 0 ? s->local_steps : sim_agent_steps(sim, i);
    StagesSetup setup = {.pruning = &keys->pruning, .freezing = &keys->freezing, .steps = steps, .keep_messages = 1};
    int status = sim_stages_create(sim, &s->st, &setup);
    free(steps);
    if (status != HS_OK) return status;
    /* the selection predicts a job from the same bytes and steps the job will use */
    double bytes = s->bytes * drift_message_factor(&s->st.drift);
    SelectJob job = {.down_bytes = bytes, .up_bytes = bytes, .local_steps = s->local_steps, .step = &s->st.step,
                     .server = s->server};
    return select_create(&s->sel, &keys->select, &job, n, s->buffered ? INFINITY : s->deadline);
}

static int fedavg_create(Sim *sim, void **state)
{
    int status = fl_create(sim, state, 0);
    return status == HS_OK ? fl_stages(sim, *state) : status;
}

static int fedbuff_create(Sim *sim, void **state)
{
    int status = fl_create(sim, state, 1);
    return status == HS_OK ? fl_stages(sim, *state) : status;
}

/* The server sends x to client i for job `job`. fedbuff's message carries a copy of x
 * (x moves on before it arrives); fedavg's x does not change while a round's downloads
 * are current, so the client copies it on arrival. */
static int fl_dispatch(FlState *s, Sim *sim, int i, long job)
{
    FlClient *c = &s->clients[i];
    c->job = job;
    c->version = s->k;
    /* fedavg's jobs lie inside a round, whose stage (freeze) is set: the FLOPs now, while
     * the dispatch walks the clients in order; fedbuff's cross rounds (fl_step_flops) */
    if (!s->buffered) c->step_flops = local_step_flops(&s->st.step, i);
    if (s->buffered && s->x) memcpy(trainer_buffer(sim->trainer, i, 0), s->x, s->d * sizeof *s->x);
    /* [drift] scaffold: the server's control variate c rides along */
    return engine_send(sim->engine, s->server, i, s->bytes * drift_message_factor(&s->st.drift), FL_MODEL_ARRIVED,
                       FL_TAG(job, i));
}

/* Draws `count` distinct clients among candidates[0..m) (in place: the first count). */
static void fl_draw(FlState *s, int *candidates, int m, int count)
{
    for (int k = 0; k < count && k < m; k++) {
        int j = k + (int)gsl_rng_uniform_int(s->rng, (unsigned long)(m - k));
        int tmp = candidates[k];
        candidates[k] = candidates[j];
        candidates[j] = tmp;
    }
}

/* The clients of a pick: uniform is fl_draw's draw, as it always was (no other call, no
 * other draw); the other rules are fl_select.c's. Returns how many were picked in *count. */
static int fl_pick(FlState *s, Sim *sim, int *candidates, int m, int *count)
{
    if (s->sel.keys.selection == SELECT_UNIFORM) {
        fl_draw(s, candidates, m, *count);
        return HS_OK;
    }
    return select_pick(&s->sel, sim, s->rng, candidates, m, *count, s->round, s->x, count);
}

static int fl_index_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* A fedavg round whose jobs cannot be cut: with no deadline and every selected client's
 * report wanted, the round ends only after every job's last step, and no selected client
 * gets another job before. In timing mode a step's only work besides its computation is
 * its own client's counters (local_step_run: DP-SGD's step count), which nothing reads
 * before the round's end. Then a client's steps are one engine_compute_run, the same rows
 * as an event per step (sim/kernel/compute_run.c); otherwise (train mode, where each step's
 * arithmetic runs at its end in event order; a deadline or over-commitment, which stop a
 * dropped client at its next step boundary; fedbuff, whose jobs cross rounds) an event
 * per step. */
static int fl_steps_at_once(const FlState *s)
{
    return !s->buffered && s->x == NULL && !isfinite(s->deadline) && s->wanted == s->selected;
}

static int fedavg_round_begin(FlState *s, Sim *sim, int round)
{
    int n = s->n, m = 0;
    s->n_reports = 0;
    s->wanted = (int)floor(s->participation * n + 0.5);
    s->selected = (int)ceil(s->wanted * (1 + s->overcommit) - 1e-9);
    /* 1 <= wanted <= selected <= n: the rows' limits (scenario_limit_share_of_agents, fedavg_overcommit_limits) */
    for (int i = 0; i < n; i++)
        if (engine_agent_online(sim->engine, i, engine_now(sim->engine))) s->order[m++] = i;
    if (m == 0)
        for (int i = 0; i < n; i++) s->order[m++] = i;
    if (s->selected > m) s->selected = m;
    if (s->wanted > s->selected) s->wanted = s->selected;
    rng_stream_reset(s->rng, sim->sc->seed, (uint64_t)round, RNG_PURPOSE_METHOD);
    int status = fl_pick(s, sim, s->order, m, &s->selected);
    if (status != HS_OK) return status;
    if (s->wanted > s->selected) s->wanted = s->selected; /* deadline, energy: fewer qualified */
    s->steps_at_once = fl_steps_at_once(s);
    /* downloads start in client order, so the draw's order does not matter (distinct
     * indices: one sorted order; qsort, since K clients in insertion sort were O(K^2)) */
    qsort(s->order, (size_t)s->selected, sizeof *s->order, fl_index_cmp);
    for (int k = 0; k < s->selected; k++)
        if ((status = fl_dispatch(s, sim, s->order[k], round)) != HS_OK) return status;
    if (isfinite(s->deadline))
        return engine_schedule(sim->engine, engine_now(sim->engine) + s->deadline, FL_DEADLINE, s->server, round);
    return HS_OK;
}

static int fl_round_begin(void *state, Sim *sim, int round)
{
    FlState *s = state;
    s->round = round;
    stages_begin_round(&s->st, round);
    s->staleness_sum = 0;
    s->staleness_count = 0;
    if (!s->buffered) return fedavg_round_begin(s, sim, round);
    if (s->started) return HS_OK; /* clients are already training */
    s->started = 1;
    for (int i = 0; i < s->n; i++) s->order[i] = i;
    rng_stream_reset(s->rng, sim->sc->seed, 0x46420000ULL, RNG_PURPOSE_METHOD);
    int picked = s->concurrency, status = fl_pick(s, sim, s->order, s->n, &picked);
    if (status != HS_OK) return status;
    for (int k = 0; k < picked; k++) {
        s->busy[s->order[k]] = 1;
        status = fl_dispatch(s, sim, s->order[k], s->jobs++);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

/* fedavg: x <- the aggregation of the reported models (their sample-weighted average,
 * plain); the round ends. */
static int fedavg_finish(FlState *s, Sim *sim)
{
    for (int k = 0; s->x && k < s->n_reports; k++) {
        int i = s->reporters[k];
        s->vectors[k] = trainer_params(sim->trainer, i);
        s->weights[k] = sim->world.agents[i].samples;
    }
    int status = aggregate_reports(&s->st.agg, &s->st.out, s->x, s->reporters, s->vectors, s->weights, s->n_reports,
                                   s->round, 0);
    if (status != HS_OK) return status;
    if ((status = drift_commit(&s->st.drift, s->reporters, s->n_reports)) != HS_OK) return status;
    for (int i = 0; i < s->n; i++) s->clients[i].job = -1; /* every job of the round ends */
    sim->round_extra = (double)(s->selected - s->n_reports);
    engine_end_round(sim->engine);
    return HS_OK;
}

/* fedbuff: an upload processed: into the buffer, maybe a server step, the next client. */
static int fedbuff_processed(FlState *s, Sim *sim, int i)
{
    long tau = s->k - s->clients[i].version;
    float *delta = NULL;
    if (s->x) {
        /* Delta_i = y_0 - y_Q, weighted by s(tau) */
        delta = trainer_buffer(sim->trainer, i, 0);
        vec_axpy(delta, -1.0f, trainer_params(sim->trainer, i), s->d);
    }
    int status = aggregate_buffer_add(&s->st.agg, i, delta, 1.0 / sqrt(1.0 + (double)tau));
    if (status != HS_OK) return status;
    s->staleness_sum += (double)tau;
    s->staleness_count++;
    if (++s->in_buffer == s->buffer_size) {
        status = aggregate_buffer_flush(&s->st.agg, &s->st.out, s->x, s->server_lr, s->round, (int)(s->k % 65536));
        if (status != HS_OK) return status;
        s->in_buffer = 0;
        s->k++;
    }
    s->busy[i] = 0;
    s->uploads++;
    if (s->uploads == (long)(s->round + 1) * s->n) {
        sim->round_extra = s->staleness_sum / (double)s->staleness_count;
        engine_end_round(sim->engine);
    }
    int m = 0;
    for (int c = 0; c < s->n; c++)
        if (!s->busy[c]) s->order[m++] = c;
    rng_stream_reset(s->rng, sim->sc->seed, (uint64_t)s->uploads, RNG_PURPOSE_METHOD);
    int picked = 1;
    if ((status = fl_pick(s, sim, s->order, m, &picked)) != HS_OK) return status;
    int next = s->order[0];
    s->busy[next] = 1;
    return fl_dispatch(s, sim, next, s->jobs++);
}

/* One local step's FLOPs of client i's job. */
static double fl_step_flops(const FlState *s, int i)
{
    return s->buffered ? local_step_flops(&s->st.step, i) : s->clients[i].step_flops;
}

/* Client i's last local step ended: its upload. */
static int fl_trained(FlState *s, Sim *sim, int i, int64_t tag)
{
    /* the upload leaves from the model the job started at: fedavg's x (it does not
     * change while the round's jobs are current), fedbuff's y_0 */
    const float *start = !s->x ? NULL : s->buffered ? trainer_buffer(sim->trainer, i, 0) : s->x;
    int status = drift_end(&s->st.drift, i);
    if (status != HS_OK) return status;
    select_job_done(&s->sel, sim, i, s->local_steps > 0 ? s->local_steps : sim_agent_steps(sim, i));
    double bytes = stages_upload(&s->st, i, s->x ? trainer_params(sim->trainer, i) : NULL, start);
    return engine_send(sim->engine, i, s->server, bytes, FL_UPLOADED, tag);
}

static int fl_on_event(void *state, Sim *sim, const Event *ev)
{
    FlState *s = state;
    if (ev->kind == FL_DEADLINE)
        return ev->data == s->round && !engine_round_over(sim->engine) ? fedavg_finish(s, sim) : HS_OK;
    int i = FL_CLIENT(ev->data);
    FlClient *c = &s->clients[i];
    if (FL_JOB(ev->data) != c->job) return HS_OK; /* a job that ended: dropped or stale */
    int status;
    switch (ev->kind) {
    case FL_MODEL_ARRIVED: {
        if (s->x) {
            const float *from = s->buffered ? trainer_buffer(sim->trainer, i, 0) : s->x;
            memcpy(trainer_params(sim->trainer, i), from, s->d * sizeof *from);
            if ((status = drift_begin(&s->st.drift, i, from)) != HS_OK) return status;
        }
        int steps = s->local_steps > 0 ? s->local_steps : sim_agent_steps(sim, i);
        if (s->steps_at_once && engine_compute_run_exact(sim->engine, i)) {
            /* timing mode: the steps' own work (counters) now, their computations at once */
            for (int k = 0; k < steps; k++)
                if ((status = local_step_run(&s->st.step, i)) != HS_OK) return status;
            return engine_compute_run(sim->engine, i, c->step_flops, steps, FL_TRAINED, ev->data);
        }
        c->remaining = steps;
        return engine_compute(sim->engine, i, fl_step_flops(s, i), FL_STEPPED, ev->data, NULL);
    }
    case FL_STEPPED:
        if ((status = local_step_run(&s->st.step, i)) != HS_OK) return status;
        if (--c->remaining > 0) return engine_compute(sim->engine, i, fl_step_flops(s, i), FL_STEPPED, ev->data, NULL);
        return fl_trained(s, sim, i, ev->data);
    case FL_TRAINED:
        return fl_trained(s, sim, i, ev->data);
    case FL_UPLOADED:
        /* scaffold: the control variate's change is one more axpy */
        return engine_compute(sim->engine, s->server, s->process_flops * drift_message_factor(&s->st.drift),
                              FL_PROCESSED, ev->data, NULL);
    default: break;
    }
    select_reported(&s->sel, i, s->round);
    if (s->buffered) return fedbuff_processed(s, sim, i);
    s->reporters[s->n_reports++] = i;
    c->job = -1;
    return s->n_reports == s->wanted ? fedavg_finish(s, sim) : HS_OK;
}

/* More clients at once than there are agents cannot be meant. The selection picks one
 * client per upload (the first `concurrency` at once, with d raised to it if fewer). */
static int fedbuff_validate(const Scenario *sc, HsDiag *diag)
{
    const FlKeys *keys = scenario_method_keys(sc);
    if (keys->concurrency > sc->n_agents)
        return scenario_key_error(sc, &keys->concurrency, diag, "%d clients at once, but there are %d agents",
                                  keys->concurrency, sc->n_agents);
    return select_validate(sc, &keys->select, 1, INFINITY, diag);
}

/* The selection's checks, with the clients a round selects: ceil(K (1 + overcommit)). */
static int fedavg_validate(const Scenario *sc, HsDiag *diag)
{
    const FlKeys *keys = scenario_method_keys(sc);
    int wanted = (int)floor(keys->participation * sc->n_agents + 0.5);
    int count = (int)ceil(wanted * (1 + keys->overcommit) - 1e-9);
    return select_validate(sc, &keys->select, count, keys->deadline, diag);
}

/* The largest overcommit whose ceil(K (1 + overcommit)) selects at most every agent (the
 * round's own formula, bisected to the last bit, so the check and the run agree). */
static int fedavg_selects_at_most(int wanted, double overcommit, int n)
{
    return ceil(wanted * (1 + overcommit) - 1e-9) <= n;
}

static void fedavg_overcommit_limits(const Scenario *sc, double *min, double *max)
{
    (void)min;
    const FlKeys *keys = scenario_method_keys(sc);
    int n = sc->n_agents, wanted = (int)floor(keys->participation * n + 0.5);
    if (wanted < 1) return; /* participation is refused first */
    double fits = 0, beyond = (double)n / wanted; /* K (1 + n / K) > n */
    for (;;) {
        double mid = fits + (beyond - fits) / 2;
        if (mid <= fits || mid >= beyond) break;
        if (fedavg_selects_at_most(wanted, mid, n)) fits = mid;
        else beyond = mid;
    }
    if (fits < *max) *max = fits;
}

static const SchemaKey fedavg_keys[] = {
    METHOD_KEY(FlKeys, local_steps, "epoch", "local steps per round: a number, or epoch (one pass over the client's data)",
     .type = SCHEMA_STEPS, .min = 1, .max = 100000000),
    METHOD_KEY(FlKeys, participation, "1", "share of the agents whose reports a round aggregates (K = round(share x agents))",
     .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OPEN_MIN, .limits = scenario_limit_share_of_agents,
     .doc_range = "(0, 1], at least 0.5 / agents"),
    METHOD_KEY(FlKeys, overcommit, "0", "extra share of clients selected: ceil(K (1 + overcommit)); the first K reports count",
     .type = SCHEMA_REAL, .min = 0, .max = 100, .limits = fedavg_overcommit_limits,
     .doc_range = "[0, 100], at most agents / K - 1"),
    METHOD_KEY(FlKeys, deadline, "none", "a round ends this long after its start with the reports in so far",
     .type = SCHEMA_TIME, .unit = UNIT_TIME, .min = 0, .max = INFINITY, .flags = SCHEMA_OPEN_MIN),
    PRUNE_METHOD_KEYS(FlKeys, pruning.),
    FREEZE_METHOD_KEYS(FlKeys, freezing.),
    SELECT_METHOD_KEYS(FlKeys, select.),
    {0},
};

static const SchemaKey fedbuff_keys[] = {
    METHOD_KEY(FlKeys, local_steps, "epoch", "local steps per job: a number, or epoch", .type = SCHEMA_STEPS, .min = 1,
     .max = 100000000),
    METHOD_KEY(FlKeys, buffer, "10", "K: client updates buffered per server step", .type = SCHEMA_INT, .min = 1,
     .max = 100000000),
    METHOD_KEY(FlKeys, concurrency, "0", "clients training at once (0: every agent)", .type = SCHEMA_INT, .min = 0,
     .max = 100000000),
    METHOD_KEY(FlKeys, server_lr, "1", "server learning rate: x <- x - server_lr (buffer / K)", .type = SCHEMA_REAL, .min = 0,
     .max = 1000, .flags = SCHEMA_OPEN_MIN),
    PRUNE_METHOD_KEYS(FlKeys, pruning.),
    FREEZE_METHOD_KEYS(FlKeys, freezing.),
    SELECT_METHOD_KEYS(FlKeys, select.),
    {0},
};

static const MethodStages fedavg_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps on the model the server sent",
    .outgoing = "its model to the server",
    .aggregate = "the server's sample-weighted mean of the reports",
};

static const MethodExtra fedavg_extras[] = {
    {.meaning = "clients dropped: selected minus aggregated"},
    {0},
};

const MethodOps method_fedavg = {
    .name = "fedavg",
    .summary = "FedAvg with a server: client sampling, over-commitment (first K reports) and a deadline",
    .keys = fedavg_keys,
    .keys_size = sizeof(FlKeys),
    .capabilities = METHOD_USES_SERVER | METHOD_ACCUMULATES | METHOD_LOSSY_LINKS,
    .stages = &fedavg_stages,
    .extra = fedavg_extras,
    .validate = fedavg_validate,
    .create = fedavg_create,
    .round_begin = fl_round_begin,
    .on_event = fl_on_event,
    .destroy = fl_destroy,
};

static const MethodStages fedbuff_stages = {
    .points = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
    .local_step = "local steps on the model the server sent",
    .outgoing = "its update (the model's change) to the server",
    .aggregate = "the server's staleness-weighted buffer of K updates",
    .refuses = {
        [FEATURE_DRIFT_SCAFFOLD] = "asynchronous: the buffered updates were trained from different server models and control variates of different staleness, and SCAFFOLD's c is defined for synchronous rounds",
    },
};

static const MethodExtra fedbuff_extras[] = {
    {.meaning = "mean staleness tau of the uploads (server steps since the client's download)"},
    {0},
};

const MethodOps method_fedbuff = {
    .name = "fedbuff",
    .summary = "FedBuff: asynchronous clients, the server steps once K staleness-weighted updates are buffered",
    .keys = fedbuff_keys,
    .keys_size = sizeof(FlKeys),
    .capabilities = METHOD_USES_SERVER | METHOD_ACCUMULATES | METHOD_LOSSY_LINKS,
    .stages = &fedbuff_stages,
    .extra = fedbuff_extras,
    .validate = fedbuff_validate,
    .create = fedbuff_create,
    .round_begin = fl_round_begin,
    .on_event = fl_on_event,
    .destroy = fl_destroy,
};
