/* run.c — one run (sim/run.h): the world, its traces, the trainer, the kernel engine and
 * the method set up in that order; then the rounds, each played on the engine with the
 * method's events dispatched to it, closed by the method's round_end, the trainer's
 * evaluation and the round's rows; then the run's end row. Wall time is read here only
 * for runs.wall_s. */
#include "sim/run.h"

#include "sim/stages/privacy.h"
#include "sim/run_params.h"
#include "sim/train/trainer.h"
#include "sim/world/world_traces.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Runs with neither rounds nor a time budget stop at the target or at this cap. */
enum { RUN_MAX_ROUNDS = 100000 };

/* Sim comes first, so the Sim a method or a test holds is the run's. */
typedef struct Run {
    Sim sim;
    Sink sink;
    int64_t run_id;
    const MethodOps *method;
    void *method_state;
    WorldTraces traces;
    double last_accuracy;    /* NaN until evaluated */
} Run;

/* Bytes of memory the system can still give, from /proc/meminfo (0 when unknown). */
static double run_available_memory(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL) return 0;
    char line[256];
    double kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024.0;
}

/* Runs needing less than this are not checked: reading /proc/meminfo (five system calls
 * and the kernel's formatting of it) cost a short timing run more than a tenth of its
 * engine time, for a verdict that cannot be "no" on any machine hetsim runs on. */
#define RUN_MEMORY_CHECKED_BYTES (64.0 * 1024 * 1024)

/* Refuses, before allocating, a run whose models cannot fit: each agent holds its
 * parameters, gradients and optimiser state (Adam: two more vectors, momentum one). */
static int run_check_memory(const Sim *sim, HsDiag *diag)
{
    const Scenario *sc = sim->sc;
    double vectors = 2 + (sc->optim.kind == OPTIM_ADAM || sc->optim.kind == OPTIM_ADAMW ? 2
                          : sc->optim.kind == OPTIM_MOMENTUM ? 1 : 0);
    double per_agent = sc->mode == RUN_MODE_TRAIN ? 4.0 * sim->profile.total_params * vectors : 0;
    per_agent += engine_node_bytes() + sizeof(AgentProfile) + sizeof(SinkAgentRound) + 64;
    double need = per_agent * sim->world.n;
    if (need < RUN_MEMORY_CHECKED_BYTES) return HS_OK;
    double available = run_available_memory();
    if (available > 0 && need > available)
        return hs_diag_set(diag, HS_E_NOMEM, sc->file, 0,
                           "this run needs about %.1f GB (%d agents x %.1f MB) but only %.1f GB of memory is "
                           "available; use fewer agents, a smaller model, or mode = timing",
                           need / 1e9, sim->world.n, per_agent / 1e6, available / 1e9);
    return HS_OK;
}

static SinkAgent *run_sink_agents(const Sim *sim)
{
    SinkAgent *rows = calloc((size_t)sim->world.n, sizeof *rows);
    if (rows == NULL) return NULL;
    for (int i = 0; i < sim->world.n; i++) {
        const AgentProfile *a = &sim->world.agents[i];
        rows[i] = (SinkAgent){.agent = i, .grp = sim->sc->groups[a->group].name, .compute = a->compute,
                              .uplink = a->uplink, .downlink = a->downlink, .latency = a->latency,
                              .samples = a->samples, .byzantine = a->byzantine};
    }
    return rows;
}

/* EngineHandler: the method's events. */
static int run_dispatch(void *ctx, const Event *event)
{
    Run *run = ctx;
    return run->method->on_event(run->method_state, &run->sim, event);
}

/* Node i's attributes for the kernel: the drawn world (trace values at t = 0) and its
 * group's dynamics (EngineConfig.node). */
static void run_engine_node(void *ctx, int i, EngineNode *out)
{
    const Run *run = ctx;
    const Scenario *sc = run->sim.sc;
    const AgentProfile *a = &run->sim.world.agents[i];
    const AgentGroupSpec *g = &sc->groups[a->group];
    AgentEnergy power = world_agent_energy(sc, &run->sim.world, i);
    *out = (EngineNode){.compute = a->compute, .uplink = a->uplink, .downlink = a->downlink,
                        .latency = a->latency, .slowdown = g->slowdown, .jitter = g->jitter,
                        .availability_source = g->availability.kind == DIST_TRACE ? g->availability.path : sc->file,
                        .power_compute = power.power_compute, .power_tx = power.power_tx, .power_rx = power.power_rx,
                        .power_idle = power.power_idle, .energy_per_byte = power.energy_per_byte,
                        .battery = power.battery, .charging = power.charging, .resume_charge = g->resume_charge,
                        .battery_instant = g->battery_check == 1,
                        /* servers lose nothing themselves: a message to or from one is lost
                         * with its agent's loss */
                        .loss = i < run->sim.world.n ? g->loss : 0};
}

static int run_engine_create(Run *run, HsDiag *diag)
{
    Sim *sim = &run->sim;
    const Scenario *sc = sim->sc;
    const WorldTraces *t = &run->traces;
    EngineConfig config = {
        .n_agents = sim->world.n, .n_servers = sim->world.n_servers, .node = run_engine_node, .node_ctx = run,
        /* the world outlives the engine (run_teardown): its profiles' rates are read in place */
        .rates_at = {.base = sim->world.agents, .stride = sizeof *sim->world.agents,
                     .compute = offsetof(AgentProfile, compute), .uplink = offsetof(AgentProfile, uplink),
                     .downlink = offsetof(AgentProfile, downlink), .latency = offsetof(AgentProfile, latency)},
        .traces = {.compute = t->compute, .uplink = t->uplink, .downlink = t->downlink,
                   .availability = t->availability, .outage = t->outage, .charging = t->charging},
        .network = {.maxmin = sc->network.model == NETWORK_MAXMIN, .lv08 = sc->network.tcp == TCP_LV08,
                    .backbone = sc->network.backbone, .uplink_fifo = sc->network.uplink == UPLINK_FIFO,
                    .loss_drop = sc->network.loss_mode == LOSS_DROP, .rto = sc->network.rto},
        .seed = sc->seed, .sink = run->sink, .summary = sc->record == RUN_RECORD_SUMMARY,
        .handler = run_dispatch, .handler_ctx = run, .diag = diag};
    return engine_create(&config, &sim->engine);
}

/* The sink's tick from inside the trainer's arithmetic (trainer_set_tick): a round whose
 * steps run in one flush still shows progress. */
static void run_tick(void *ctx)
{
    Run *run = ctx;
    run->sink.ops->tick(run->sink.ctx, run->run_id, engine_now(run->sim.engine));
}

static int run_setup(Run *run, const Scenario *sc, Sink sink, TrainerRanks *ranks, HsDiag *diag)
{
    memset(run, 0, sizeof *run);
    Sim *sim = &run->sim;
    sim->sc = sc;
    sim->diag = diag;
    sim->round_extra = NAN;
    run->sink = sink;
    run->last_accuracy = NAN;
    run->run_id = -1;
    int status = world_build(sc, &sim->world, diag);
    if (status != HS_OK) return status;
    if ((status = world_traces_load(sc, &sim->world, &run->traces, diag)) != HS_OK) return status;
    if (model_profile(&sc->model, &sim->profile) != HS_OK)
        return hs_diag_set(diag, HS_E_INPUT, sc->file, 0, "[model] does not describe a valid network");
    if ((status = run_check_memory(sim, diag)) != HS_OK) return status;
    if ((status = run_engine_create(run, diag)) != HS_OK) return status;
    run->method = method_lookup(sc->method);
    if (run->method == NULL) return hs_diag_set(diag, HS_E_INPUT, sc->file, 0, "unknown method '%s'", sc->method);
    if (sc->mode == RUN_MODE_TRAIN && (status = trainer_create(sc, &sim->world, diag, &sim->trainer)) != HS_OK)
        return status;
    if ((status = trainer_use_ranks(sim->trainer, ranks)) != HS_OK) return status;
    if (sink.ops->tick != NULL) trainer_set_tick(sim->trainer, run_tick, run);
    return run->method->create(sim, &run->method_state);
}

static void run_teardown(Run *run)
{
    if (run->method && run->method_state) run->method->destroy(run->method_state);
    trainer_free(run->sim.trainer);
    engine_free(run->sim.engine);
    world_traces_free(&run->traces);
    world_free(&run->sim.world);
}

/* Train mode, after a round: the trainer's evaluation (when it is due) becomes the
 * metrics row of the averaged model at the round's end. */
static int run_evaluate(Run *run)
{
    Sim *sim = &run->sim;
    SinkMetric metric;
    int evaluated, status = trainer_round_end(sim->trainer, &metric, &evaluated);
    if (status != HS_OK || !evaluated) return status;
    run->last_accuracy = metric.test_accuracy;
    if (sim->privacy) {
        metric.has_privacy = 1;
        metric.epsilon = privacy_spent(sim->privacy);
    }
    metric.t = engine_now(sim->engine);
    metric.bytes_sent = engine_total_bytes(sim->engine) + engine_round_bytes(sim->engine);
    return engine_report_metric(sim->engine, &metric);
}

/* The round's rows; in timing mode also the metrics row that carries the bytes (and the
 * privacy spent, whose accounting needs no arithmetic). */
static int run_report_round(Run *run, int round)
{
    Sim *sim = &run->sim;
    int status = engine_report_round(sim->engine, sim->round_extra);
    if (status == HS_OK && sim->trainer == NULL) {
        SinkMetric m = {.t = engine_now(sim->engine), .round = round, .agent = -1, .train_loss = NAN,
                        .test_loss = NAN, .test_accuracy = NAN, .bytes_sent = engine_total_bytes(sim->engine)};
        if (sim->privacy) {
            m.has_privacy = 1;
            m.epsilon = privacy_spent(sim->privacy);
        }
        status = engine_report_metric(sim->engine, &m);
    }
    return status;
}

/* Plays one round: the method schedules, events run in (time, seq) order. */
static int run_play_round(Run *run, int round)
{
    Sim *sim = &run->sim;
    sim->round_extra = NAN;
    engine_begin_round(sim->engine, round);
    trainer_begin_round(sim->trainer, round);
    int status = run->method->round_begin(run->method_state, sim, round);
    if (status == HS_OK) status = engine_play(sim->engine);
    if (status == HS_OK && run->method->round_end) status = run->method->round_end(run->method_state, sim, round);
    if (status == HS_OK && sim->trainer) status = run_evaluate(run);
    if (status == HS_OK) status = run_report_round(run, round);
    return status;
}

int sim_open(const Scenario *sc, Sink sink, HsDiag *diag, Sim **out)
{
    Run *run = malloc(sizeof *run);
    *out = NULL;
    if (run == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    int status = run_setup(run, sc, sink, NULL, diag);
    if (status != HS_OK) {
        run_teardown(run);
        free(run);
        return status;
    }
    *out = &run->sim;
    return HS_OK;
}

void sim_close(Sim *sim)
{
    if (sim == NULL) return;
    Run *run = (Run *)sim;
    run_teardown(run);
    free(run);
}

int sim_play_round(Sim *sim, int round)
{
    return run_play_round((Run *)sim, round);
}

static double run_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int sim_run(const Scenario *sc, Sink sink, HsDiag *diag, RunOutcome *outcome)
{
    return sim_run_ranks(sc, sink, NULL, diag, outcome);
}

int sim_run_ranks(const Scenario *sc, Sink sink, TrainerRanks *ranks, HsDiag *diag, RunOutcome *outcome)
{
    Run run;
    Sim *sim = &run.sim;
    double wall_start = run_wall_seconds();
    memset(outcome, 0, sizeof *outcome);
    outcome->run_id = -1;
    outcome->final_accuracy = NAN;
    int status = run_setup(&run, sc, sink, ranks, diag);
    /* ranks: all set up, or none goes on (a rank that could not would leave the others
     * waiting); a failure of a rank other than this one is named by that rank */
    int failed_rank, agreed = trainer_ranks_agree(ranks, status, &failed_rank);
    if (agreed != HS_OK && status == HS_OK)
        status = hs_diag_set(diag, agreed, NULL, 0, "rank %d could not set the run up", failed_rank);
    char *config = NULL;
    SinkAgent *agents = NULL;
    if (status != HS_OK) goto done;

    config = scenario_config_string(sc);
    agents = run_sink_agents(sim);
    if (config == NULL || agents == NULL) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    SinkRunInfo info = {.name = sc->name, .scenario = sc->file, .method = sc->method, .seed = sc->seed,
                        .mode = sc->mode == RUN_MODE_TRAIN ? "train" : "timing", .config = config,
                        .threads = sc->mode == RUN_MODE_TRAIN ? trainer_thread_count(sc) : 0};
    if ((status = sink.ops->run_begin(sink.ctx, &info, &run.run_id)) != HS_OK) goto done;
    engine_set_run(sim->engine, run.run_id);
    outcome->run_id = run.run_id;
    if (sink.ops->params != NULL) {
        RunParams params;
        status = run_params_from_config(config, &params);
        if (status == HS_OK) status = sink.ops->params(sink.ctx, run.run_id, params.rows, params.count);
        else hs_diag_set(diag, status, NULL, 0, "out of memory");
        run_params_free(&params);
    }
    if (status == HS_OK) status = sink.ops->agents(sink.ctx, run.run_id, agents, sim->world.n);
    /* the sinks copy what they keep: the rows need not outlive the run's start (64 bytes
     * an agent, at millions of agents) */
    free(agents);
    agents = NULL;

    int max_rounds = sc->rounds > 0 ? sc->rounds : RUN_MAX_ROUNDS;
    for (int round = 0; status == HS_OK && round < max_rounds; round++) {
        if (engine_now(sim->engine) >= sc->time_budget) break;
        status = run_play_round(&run, round);
        if (status == HS_OK) outcome->rounds_done = round + 1;
        if (status == HS_OK && sc->target_accuracy > 0 && run.last_accuracy >= sc->target_accuracy) break;
    }

    engine_end_run(sim->engine);
    SinkRunEnd end = {.wall_s = run_wall_seconds() - wall_start, .sim_time_s = engine_now(sim->engine),
                      .final_accuracy = run.last_accuracy, .rounds_done = outcome->rounds_done};
    if (status == HS_OK) end.status = SINK_STATUS_DONE;
    else if (status == HS_E_DIVERGED) end.status = SINK_STATUS_DIVERGED;
    else if (status == HS_E_INTERRUPTED) end.status = SINK_STATUS_INTERRUPTED;
    else end.status = SINK_STATUS_FAILED;
    if (status != HS_OK && diag->status == HS_OK) hs_diag_set(diag, status, NULL, 0, "%s", hs_error_name(status));
    end.message = status == HS_OK ? NULL : diag->message;
    int end_status = sink.ops->run_end(sink.ctx, run.run_id, &end);
    if (status == HS_OK) status = end_status;
    outcome->status = end.status;
    outcome->sim_time_s = engine_now(sim->engine);
    outcome->final_accuracy = run.last_accuracy;
done:
    free(config);
    free(agents);
    run_teardown(&run);
    return status;
}
