/* trainer.h — the real arithmetic of train mode: the shared dataset, the partition,
 * per-agent batch streams, models, optimisers and evaluation. Methods ask it for
 * gradients and parameter vectors through Sim.trainer; it knows the scenario and the
 * world but not the engine (the run reports what trainer_round_end returns). Timing
 * mode has no trainer at all
 * (Sim.trainer == NULL), and every function below then does nothing and returns 0,
 * so a method calls them unconditionally and its timing is the same in both modes.
 * Vector accessors return NULL in timing mode: guard method-side vector math with
 * `if (sim->trainer)`. */
#ifndef SIM_TRAINER_H
#define SIM_TRAINER_H

#include "models/dataset.h"
#include "sim/kernel/sink.h"
#include "sim/world/world.h"

#include <gsl/gsl_rng.h>
#include <stddef.h>

typedef struct Trainer Trainer;

/* Loads the data set and partitions it over world's agents; keeps sc, world and diag
 * (which must outlive it). Errors are written to diag. */
int trainer_create(const Scenario *sc, const World *world, HsDiag *diag, Trainer **out);
/* The worker threads a train-mode run of sc computes its steps on: [run] threads, else
 * one per online CPU (1 for SCENARIO_THREADS_EAGER). */
int trainer_thread_count(const Scenario *sc);
void trainer_free(Trainer *t);
/* tick(ctx) runs on the engine's thread after each piece of arithmetic it takes itself
 * (an agent's queued steps, a wave member's gradient, a piece of an evaluation), so a
 * round that is one long flush still shows progress (sim/run.c passes the sink's tick).
 * It must not touch the trainer. NULL: none. */
void trainer_set_tick(Trainer *t, void (*tick)(void *ctx), void *ctx);
/* The round the run plays now: learning-rate schedule and messages follow it. */
void trainer_begin_round(Trainer *t, int round);
/* After each round: every eval_every rounds (and after the last) evaluates the shared
 * model, or the sample-weighted average of the agents' models, into *metric (round,
 * losses, accuracies; the run adds time and bytes) and sets *evaluated. */
int trainer_round_end(Trainer *t, SinkMetric *metric, int *evaluated);

/* --- one model shared by all agents (they hold identical parameters: sync) --- */
int trainer_setup_shared(Trainer *t);
/* Each agent's gradient of its next batch on the shared model, averaged in agent order;
 * when the agents' batches differ ([agents] batch), weighted by batch: sum b_i g_i / sum b_i,
 * the gradient of the union of their batches (the plain mean, bitwise, when they agree). */
int trainer_shared_gradients(Trainer *t);
/* The same over members only (in their order, weighted by their batches): the agents that
 * made a deadline. */
int trainer_shared_gradients_of(Trainer *t, const int *members, int n_members);
/* One optimiser step of the shared model with the averaged gradient. */
int trainer_shared_apply(Trainer *t);

/* The shared model's parameters (NULL in timing mode or before trainer_setup_shared). */
float *trainer_shared_params(Trainer *t);
/* Gradient of agent's next batch at params (a whole parameter vector that is not the
 * agent's own, e.g. a token's model) into grad; counts toward the round's train loss. */
int trainer_gradient_at(Trainer *t, int agent, const float *params, float *grad);

/* --- a model per agent, all initialised to the same parameters --- */
/* n_buffers extra vectors of model size per agent (method state: momenta, copies). */
int trainer_setup_local(Trainer *t, int n_buffers);
size_t trainer_param_count(const Trainer *t);
/* The data set, loaded once per run, and agent's rows of it (its partition), for code
 * that needs the same samples the agent trains on (label-flipping attackers). */
const Dataset *trainer_dataset(const Trainer *t);
const int *trainer_agent_samples(const Trainer *t, int agent, int *count);
float *trainer_params(Trainer *t, int agent);
float *trainer_buffer(Trainer *t, int agent, int which);
/* Gradient of agent's next batch at its current parameters into grad (model size). */
int trainer_gradient(Trainer *t, int agent, float *grad);
/* Agent's optimiser applies grad to its parameters (this round's learning rate). */
int trainer_optimizer_step(Trainer *t, int agent, const float *grad);
/* trainer_gradient + trainer_optimizer_step. */
int trainer_local_step(Trainer *t, int agent);
/* A DP-SGD step of agent (sim/stages/privacy.h, clip = sample): its next batch's per-sample
 * gradients clipped to norm threshold and summed, N(0, noise_std^2) added to every entry
 * of the sum (drawn from noise, which belongs to this agent alone), divided by the batch
 * size, then an optimiser step. Queued like trainer_local_step. */
int trainer_local_step_clipped(Trainer *t, int agent, double threshold, double noise_std, gsl_rng *noise);
/* A drift correction added to a step's gradient g before the optimiser takes it
 * (sim/stages/drift.h): g += mu (y - anchor) (FedProx's proximal term, y the agent's
 * parameters), then g = g - ci + c (SCAFFOLD's corrected direction) where c and ci are
 * given. The vectors are the caller's and must stay as they are until the step ran (the
 * next call that flushes the queue). */
typedef struct TrainerCorrection {
    float mu;              /* 0: no proximal term */
    const float *anchor;   /* (params) the model the period started from; NULL: no proximal term */
    const float *c, *ci;   /* (params) the server's and the agent's control variates; NULL: none */
} TrainerCorrection;
/* trainer_local_step, or (threshold > 0) trainer_local_step_clipped, with the correction
 * on the (averaged, noised) gradient. Queued like them. */
int trainer_local_step_corrected(Trainer *t, int agent, const TrainerCorrection *correction, double threshold,
                                 double noise_std, gsl_rng *noise);
/* A gradient-sized vector for one computation on the engine's thread (the queued work
 * runs first): valid until the next call into the trainer that queues or flushes. */
float *trainer_gradient_scratch(Trainer *t);
/* DP-SGD's gradient of agent's next batch at params (NULL: its own), as
 * trainer_local_step_clipped forms it but without the step: the per-sample gradients
 * clipped to threshold and summed, N(0, noise_std^2) from noise added, divided by the
 * batch size (the blocks only). */
int trainer_clipped_gradient_at(Trainer *t, int agent, const float *params, float *grad, double threshold,
                                double noise_std, gsl_rng *noise);
/* Replaces the models of members (NULL: agents 0..n-1) by their average, weighted by
 * samples when by_samples, else uniformly; sums in member order (deterministic). */
int trainer_average(Trainer *t, const int *members, int n_members, int by_samples);
/* The loss of agent's last batch that counted toward the round's train loss (its local
 * steps' and its gradients'), NaN before its first or in timing mode (LSGD's election). */
double trainer_agent_loss(Trainer *t, int agent);
/* LSGD's pull (sim/methods/lsgd.c): every member but leader (members NULL: agents 0..n-1)
 * moves toward leader's parameters, x <- x - strength (x - x_leader); the leader stays. */
int trainer_pull(Trainer *t, const int *members, int n_members, int leader, double strength);
/* What becomes of the members' [model] optimizer = momentum velocities when their models
 * are averaged (localsgd and qsr's [method] momentum_at_average). */
typedef enum {
    TRAINER_MOMENTUM_KEEP = 0,  /* each keeps its own */
    TRAINER_MOMENTUM_RESET,     /* zeroed */
    TRAINER_MOMENTUM_AVERAGE    /* replaced by their average, weighted as trainer_average weighs */
} TrainerMomentum;
/* Applies `what` to the velocities of members (NULL: agents 0..n-1). Nothing to do in
 * timing mode, for KEEP, or for an optimiser without a velocity. */
int trainer_momentum_at_average(Trainer *t, const int *members, int n_members, int by_samples, TrainerMomentum what);
/* agent's velocity (NULL in timing mode or without one), for the tests. */
const float *trainer_velocity(Trainer *t, int agent);
/* --- ComDML's local-loss split training (models/ split entry points) --- */
/* Starts a round in which slow offloads blocks split+1..L: its helper trains a copy of
 * slow's top (with its own optimiser state), fed by a FIFO of activations. */
int trainer_split_begin(Trainer *t, int slow, int split);
/* slow's next batch through blocks 1..split and auxiliary head split; one optimiser step
 * on those ranges; the cut activations and labels join the FIFO. */
int trainer_split_bottom_step(Trainer *t, int slow, int split);
/* The helper trains slow's top copy on the oldest activations in the FIFO. */
int trainer_split_top_step(Trainer *t, int slow, int split);
/* The top copy's blocks go back into slow's model. */
int trainer_split_end(Trainer *t, int slow, int split);
/* Sample-weighted average of every block over all agents; auxiliary head m averaged only
 * among agents with splits[i] == m (m >= 1); heads of other splits are left as they are.
 * When a helper trained only some of its offloader's batches (it dropped the rest under
 * churn), that offloader's top blocks weigh samples x trained / batches instead (0 when
 * none): a copy that did not train does not pull the average back. */
int trainer_average_split(Trainer *t, const int *splits);

/* --- width pruning (sim/stages/prune.h, models/model_width.h) and progressive freezing --- */
struct ModelWidth;
/* Gradient of agent's next batch on width's sub-model of its parameters into grad
 * (model size; the blocks' coordinates outside the sub-model get 0). width NULL: exactly
 * trainer_gradient. */
int trainer_width_gradient(Trainer *t, int agent, struct ModelWidth *width, float *grad);
/* trainer_width_gradient into the agent's gradient vector, then its optimiser step. */
int trainer_width_step(Trainer *t, int agent, struct ModelWidth *width);
/* The same at params (a whole parameter vector, e.g. the point a server sent; NULL: the
 * agent's own). */
int trainer_width_gradient_at(Trainer *t, int agent, struct ModelWidth *width, const float *params, float *grad);
/* Progressive freezing's gradient of agent's next batch at params (NULL: its own): block
 * `stage` and its output module (model_grad_stage_at); every other entry of grad is 0. */
int trainer_stage_gradient_at(Trainer *t, int agent, int stage, const float *params, float *grad);
/* held (params): 1 on block `stage` and its output module, 0 elsewhere. */
int trainer_stage_mask(const Trainer *t, int stage, unsigned char *held);
/* The agent's optimiser applies grad to block `stage` and its output module only (the
 * frozen blocks keep their values whatever the optimiser's state). */
int trainer_stage_optimizer_step(Trainer *t, int agent, int stage, const float *grad);
/* The same with any optimiser over any parameter vector laid out like the model (a
 * server's): o steps params at lr on those two ranges. */
struct Optim;
int trainer_stage_optim_step(const Trainer *t, struct Optim *o, float *params, int stage, const float *grad, double lr);
/* Shared model (sync): each member's gradient on its sub-model (widths[agent], NULL:
 * whole) of the shared parameters; per coordinate the mean over the members that hold
 * it, summed in member order, is what trainer_shared_apply then applies. */
int trainer_shared_width_gradients(Trainer *t, const int *members, int n_members, struct ModelWidth *const *widths);
/* Per-coordinate average of the members' models over the members that hold each
 * coordinate (widths[agent] NULL: all), weighted by samples or uniformly
 * (vec_masked_average); every member receives the whole result. */
int trainer_average_masked(Trainer *t, const int *members, int n_members, int by_samples,
                           struct ModelWidth *const *widths);
/* trainer_average_split with pruned agents (widths[agent], NULL: whole): each block's
 * coordinate averaged over the agents holding it (weights as trainer_average_split's). */
int trainer_average_split_masked(Trainer *t, const int *splits, struct ModelWidth *const *widths);
/* Progressive freezing: agent's next batch trains block `stage` and its output module
 * (model_grad_stage_at), one optimiser step on those two ranges. */
int trainer_stage_step(Trainer *t, int agent, int stage);

/* --- one run across MPI ranks (trainer_ranks.c) --- */
typedef struct TrainerRanks TrainerRanks;
/* The processes of MPI_COMM_WORLD (MPI initialised by the caller) for one run, on a
 * duplicate communicator. HS_E_INPUT when hetsim was built without MPI. */
int trainer_ranks_create(TrainerRanks **out, HsDiag *diag);
void trainer_ranks_free(TrainerRanks *r);
int trainer_ranks_rank(const TrainerRanks *r);  /* 0 for NULL */
int trainer_ranks_size(const TrainerRanks *r);  /* 1 for NULL */
/* Collective: HS_OK when every rank passes HS_OK, else the status of the lowest rank
 * that did not, whose rank goes to *failed_rank (-1: none; may be NULL). r NULL: status,
 * as rank 0's. */
int trainer_ranks_agree(TrainerRanks *r, int status, int *failed_rank);
void trainer_ranks_barrier(TrainerRanks *r);
/* Since r was created: the queued steps and shared-gradient members of every run it took
 * part in (*all) and those this rank computed (*mine); tests check that the work is
 * divided, which the rows cannot show (0, 0 for NULL or a single process). */
void trainer_ranks_steps(const TrainerRanks *r, long *mine, long *all);
/* Ends every rank of the job (MPI_Abort) with exit code. */
void trainer_ranks_abort(TrainerRanks *r, int code);
/* From now on every rank makes the same calls on t, but each agent's arithmetic is done
 * by one rank (trainer_ranks.c); rows stay bitwise those of one process. Call after
 * trainer_create and before any set-up; ranks (NULL or a size of 1: one process) must
 * outlive t. */
int trainer_use_ranks(Trainer *t, TrainerRanks *ranks);

/* The learning rate of round from the [model] schedule; needs no trainer, since methods
 * such as QSR time themselves by it in timing mode too. */
double trainer_schedule_lr(const Scenario *sc, int round);

#endif
