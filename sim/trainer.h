/* trainer.h — the real arithmetic of train mode: the shared dataset, the partition,
 * per-agent batch streams, worker workspaces and evaluation. Methods ask it for models
 * and gradients; timing mode has no trainer at all (Engine.trainer == NULL). */
#ifndef SIM_TRAINER_H
#define SIM_TRAINER_H

struct Engine;
typedef struct Trainer Trainer;

int trainer_create(struct Engine *e, Trainer **out);
void trainer_free(Trainer *t);
/* After each round: evaluates the method's evaluation model every eval_every rounds
 * and records a metrics row; sets e->last_accuracy. */
int trainer_round_end(Trainer *t, struct Engine *e);

/* The helpers below do nothing (and return 0) in timing mode, so a method calls them
 * unconditionally and its timing stays the same in both modes. */

/* One model shared by all agents (they hold identical parameters: sync). */
int trainer_setup_shared(struct Engine *e);
/* Each agent's gradient of its next batch on the shared model, averaged in agent order. */
int trainer_shared_gradients(struct Engine *e);
/* One optimiser step of the shared model with the averaged gradient. */
int trainer_shared_apply(struct Engine *e);

/* A model per agent, all initialised to the same parameters (local SGD and the rest). */
int trainer_setup_local(struct Engine *e);
/* One optimiser step of agent's own model on its next batch. */
int trainer_local_step(struct Engine *e, int agent);
/* Replaces the models of members (NULL: all agents) by their average, weighted by
 * samples when by_samples, else uniformly; sums in member order. */
int trainer_average(struct Engine *e, const int *members, int n_members, int by_samples);

#endif
