/* run.h — one run of a scenario, on top of every floor of sim/: it draws the world,
 * loads its traces, creates the trainer, the kernel engine and the method, plays the
 * rounds on the engine (the method's events reach it through the engine's handler),
 * evaluates the averaged model, and reports to the sink. A method sees the run only as
 * the Sim it receives (sim/methods/method.h). */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include "base/hs_error.h"
#include "sim/kernel/sink.h"
#include "sim/methods/method.h"
#include "sim/scenario/scenario.h"

typedef struct RunOutcome {
    int64_t run_id;
    SinkStatus status;
    int rounds_done;
    double sim_time_s;
    double final_accuracy;
} RunOutcome;

/* Runs the scenario to its stop condition, reporting to sink. Input problems found
 * before the run starts return HS_E_INPUT and write nothing to the sink. */
int sim_run(const Scenario *sc, Sink sink, HsDiag *diag, RunOutcome *outcome);

struct TrainerRanks;
/* sim_run as one of the processes of ranks (sim/train/trainer.h; NULL: sim_run): every
 * rank plays the same run and trains its share of the agents; the rows are bitwise
 * sim_run's on every rank, so the caller gives rank 0 the real sink and the others
 * sink_discard(). Every rank must call it with the same scenario. */
int sim_run_ranks(const Scenario *sc, Sink sink, struct TrainerRanks *ranks, HsDiag *diag, RunOutcome *outcome);

/* A run set up for sc (world, traces, trainer, engine, method) without playing it: for
 * tests that drive the primitives or the trainer by hand. Free with sim_close (accepts
 * NULL). */
int sim_open(const Scenario *sc, Sink sink, HsDiag *diag, Sim **out);
void sim_close(Sim *sim);
/* Plays round `round` of a run opened by sim_open, as sim_run plays it (its rows go to
 * the sink, without a run_begin): for tests that look at the trainer between rounds
 * (check_eager's conservation of the gradients). Rounds must be played in order from 0. */
int sim_play_round(Sim *sim, int round);

#endif
