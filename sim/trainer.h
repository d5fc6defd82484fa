/* trainer.h — the real arithmetic of train mode: the shared dataset, the partition,
 * per-agent batch streams, models, optimisers and evaluation. Methods ask it for
 * gradients and parameter vectors; timing mode has no trainer at all
 * (Engine.trainer == NULL), and every function below then does nothing and returns 0,
 * so a method calls them unconditionally and its timing is the same in both modes.
 * Vector accessors return NULL in timing mode: guard method-side vector math with
 * `if (e->trainer)`. */
#ifndef SIM_TRAINER_H
#define SIM_TRAINER_H

#include "models/dataset.h"

#include <stddef.h>

struct Engine;
typedef struct Trainer Trainer;

int trainer_create(struct Engine *e, Trainer **out);
void trainer_free(Trainer *t);
/* After each round: evaluates every eval_every rounds (the shared model, or the
 * sample-weighted average of the agents' models), writes a metrics row and sets
 * e->last_accuracy. */
int trainer_round_end(Trainer *t, struct Engine *e);

/* --- one model shared by all agents (they hold identical parameters: sync) --- */
int trainer_setup_shared(struct Engine *e);
/* Each agent's gradient of its next batch on the shared model, averaged in agent order. */
int trainer_shared_gradients(struct Engine *e);
/* The same over members only (in their order): the agents that made a deadline. */
int trainer_shared_gradients_of(struct Engine *e, const int *members, int n_members);
/* One optimiser step of the shared model with the averaged gradient. */
int trainer_shared_apply(struct Engine *e);

/* The shared model's parameters (NULL in timing mode or before trainer_setup_shared). */
float *trainer_shared_params(struct Engine *e);
/* Gradient of agent's next batch at params (a whole parameter vector that is not the
 * agent's own, e.g. a token's model) into grad; counts toward the round's train loss. */
int trainer_gradient_at(struct Engine *e, int agent, const float *params, float *grad);

/* --- a model per agent, all initialised to the same parameters --- */
/* n_buffers extra vectors of model size per agent (method state: momenta, copies). */
int trainer_setup_local(struct Engine *e, int n_buffers);
size_t trainer_param_count(const struct Engine *e);
/* The data set, loaded once per run, and agent's rows of it (its partition), for code
 * that needs the same samples the agent trains on (label-flipping attackers). */
const Dataset *trainer_dataset(const Trainer *t);
const int *trainer_agent_samples(const Trainer *t, int agent, int *count);
float *trainer_params(struct Engine *e, int agent);
float *trainer_buffer(struct Engine *e, int agent, int which);
/* Gradient of agent's next batch at its current parameters into grad (model size). */
int trainer_gradient(struct Engine *e, int agent, float *grad);
/* Agent's optimiser applies grad to its parameters (this round's learning rate). */
int trainer_optimizer_step(struct Engine *e, int agent, const float *grad);
/* trainer_gradient + trainer_optimizer_step. */
int trainer_local_step(struct Engine *e, int agent);
/* Replaces the models of members (NULL: agents 0..n-1) by their average, weighted by
 * samples when by_samples, else uniformly; sums in member order (deterministic). */
int trainer_average(struct Engine *e, const int *members, int n_members, int by_samples);
/* --- ComDML's local-loss split training (models/ split entry points) --- */
/* Starts a round in which slow offloads blocks split+1..L: its helper trains a copy of
 * slow's top (with its own optimiser state), fed by a FIFO of activations. */
int trainer_split_begin(struct Engine *e, int slow, int split);
/* slow's next batch through blocks 1..split and auxiliary head split; one optimiser step
 * on those ranges; the cut activations and labels join the FIFO. */
int trainer_split_bottom_step(struct Engine *e, int slow, int split);
/* The helper trains slow's top copy on the oldest activations in the FIFO. */
int trainer_split_top_step(struct Engine *e, int slow, int split);
/* The top copy's blocks go back into slow's model. */
int trainer_split_end(struct Engine *e, int slow, int split);
/* Sample-weighted average of every block over all agents; auxiliary head m averaged only
 * among agents with splits[i] == m (m >= 1); heads of other splits are left as they are.
 * When a helper trained only some of its offloader's batches (it dropped the rest under
 * churn), that offloader's top blocks weigh samples x trained / batches instead (0 when
 * none): a copy that did not train does not pull the average back. */
int trainer_average_split(struct Engine *e, const int *splits);

/* This round's learning rate from the [model] schedule (timing mode too: methods such
 * as QSR time themselves by it). */
double trainer_learning_rate(const struct Engine *e);

#endif
