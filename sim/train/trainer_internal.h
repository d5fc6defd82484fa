/* trainer_internal.h — the Trainer's state, shared by trainer.c (set-up, averaging,
 * evaluation), trainer_jobs.c (the per-agent job queues and the worker slots) and
 * trainer_prune.c (width pruning and progressive freezing). Only those files include it.
 *
 * Threads: agents' training work is queued per agent (a TrainerJob list) when a method
 * asks for it and run at the next flush, each agent's queue in order on one worker slot,
 * different agents' queues at once. A job touches only its agent's state: its Model,
 * Optim, buffers, batch stream (cursor, epoch) and, for split jobs keyed by the offloader,
 * its SplitPair. Everything that reads or writes more than that (averaging, vector
 * accessors, evaluation, the shared model) flushes first, on the engine's thread.
 * Losses are added in the order the jobs were queued, so every figure is bitwise the
 * same for any number of threads.
 *
 * Ranks (trainer_ranks.c): with a TrainerRanks of K > 1 processes, every process runs
 * the same calls, but an agent's batches, queued jobs, optimiser state and split copies
 * are its owner rank's alone; remote[] tracks which replicas the others hold stale. */
#ifndef SIM_TRAINER_INTERNAL_H
#define SIM_TRAINER_INTERNAL_H

#include "models/model.h"
#include "models/optim.h"
#include "models/partition.h"
#include "sim/train/trainer.h"
#include "sim/train/workers.h"

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* One offloader's activations in flight to its helper, in send order. */
typedef struct SplitPair {
    Model *top;          /* the helper's copy of the offloader's model (only its top is trained) */
    Optim *top_optim;
    float *act;          /* (capacity, B, split floats) */
    int *labels;         /* (capacity, B) */
    int *sizes;          /* (capacity) samples per queued batch */
    int capacity, head, count, act_floats;
    int top_batches;     /* batches the top copy trained on this round (fewer when the helper dropped some) */
} SplitPair;

/* Scratch of one worker slot (slot 0 is the engine's thread). */
typedef struct TrainerSlot {
    ModelWorkspace *ws;
    float *x;             /* (batch, features) */
    int *y;               /* (batch) */
    int *indices;         /* (batch) the batch's sample indices */
    gsl_rng *shuffle_rng; /* reseeded for every reshuffle, so whichever slot shuffles draws the same */
    float *grad;          /* (n_params) a job's gradient: agents' models keep none (model_release_grads) */
    float *clip_scratch;  /* (n_params) one sample's gradient, allocated at the first DP-SGD step */
    float *augment_scratch; /* (features) one image, with [data] augment */
} TrainerSlot;

typedef enum {
    TRAINER_JOB_LOCAL_STEP,     /* gradient into the slot's vector, optimiser step on the blocks */
    TRAINER_JOB_SPLIT_BOTTOM,   /* blocks 1..split + head on the agent's batch; activations to fifo slot */
    TRAINER_JOB_SPLIT_TOP,      /* the top copy trains on fifo slot */
    TRAINER_JOB_WIDTH_STEP,     /* trainer_prune.c: the agent's sub-model `width`, optimiser step */
    TRAINER_JOB_STAGE_STEP,     /* trainer_prune.c: block `split` (the stage) and its head, optimiser step */
    TRAINER_JOB_CLIPPED_STEP    /* DP-SGD: clipped per-sample gradients plus noise, optimiser step */
} TrainerJobKind;

struct ModelWidth;

typedef struct TrainerJob {
    TrainerJobKind kind;
    int agent;
    int split;
    int fifo;            /* split jobs: the activation slot, assigned when queued */
    int round;           /* for the divergence message */
    int next;            /* the agent's next job, -1 for none */
    double lr;           /* the learning rate when queued */
    struct ModelWidth *width; /* TRAINER_JOB_WIDTH_STEP: the agent's own (one per agent, so slots never share it) */
    double threshold, noise_std; /* TRAINER_JOB_CLIPPED_STEP */
    gsl_rng *noise;       /* TRAINER_JOB_CLIPPED_STEP: the agent's own stream */
    int corrected;        /* LOCAL_STEP and CLIPPED_STEP: apply `correction` to the gradient */
    TrainerCorrection correction;
    /* results, written by the slot that runs it */
    int status;
    int has_loss;
    double loss;
} TrainerJob;

struct Trainer {
    const Scenario *sc;
    const World *world;
    HsDiag *diag;
    int round;            /* the engine's current round (trainer_begin_round) */
    Dataset *data;
    Partition *partition;
    int batch;                /* the largest of [model] batch and every agent's: buffers' size */
    int uneven_batches;       /* agents' batches differ: the shared gradient weighs each by its batch */
    size_t n_params;
    /* worker slots */
    Workers *workers;
    TrainerSlot *slots;   /* (n_slots) */
    int n_slots;
    /* shared mode */
    Model *shared;
    Optim *shared_optim;
    float *grad_sum;      /* (n_params) */
    float *wave_grads;    /* (n_slots, n_params) one gradient per task of a wave */
    double *wave_losses;  /* (n_slots) */
    int *wave_status;     /* (n_slots) */
    /* local mode */
    Model **models;       /* (n) */
    Optim **optims;       /* (n) */
    float **buffers;      /* (n * n_buffers) */
    int n_buffers;
    float *scratch;       /* (n_params) averaging output */
    double *weights;      /* (n) */
    const float **vectors;/* (n) */
    SplitPair *pairs;     /* (n) by offloader, created on first use */
    /* batch streams */
    int *order;           /* all agents' indices, agent i at order_offset[i] */
    int *order_offset;    /* (n + 1) */
    int *cursor;          /* (n) */
    /* [data] augment: each agent draws its crops and flips from its own stream (seed,
     * agent, RNG_PURPOSE_AUGMENT), kept across its batches: an agent's batches are
     * gathered in its queue's order by whichever slot runs them, so the draws do not
     * depend on the threads. NULL without augmentation. */
    DataAugment augment;
    gsl_rng **augment_rng; /* (n) */
    int *epoch;           /* (n) reshuffles so far */
    double *agent_loss;   /* (n) the loss of each agent's last counted batch, NaN before its first (LSGD's election) */
    /* queued work */
    TrainerJob *jobs;     /* in the order queued */
    int n_jobs, jobs_capacity;
    int *first_job, *last_job, *queued; /* (n) per agent: its list, its length */
    int *pending;         /* (n) agents with queued jobs, in first-queued order */
    int n_pending;
    uint64_t *sort_keys;  /* (n) for the flush's task order */
    int failed;           /* status of a failed flush: later work is refused */
    int eager;            /* every queued job runs at once (SCENARIO_THREADS_EAGER) */
    Model *eval;          /* shape and scratch for evaluating an average */
    int n_eval;
    int *heldout_rows, *seen_rows; /* domains: test rows < n_eval of held-out and seen domains */
    int n_heldout, n_seen;
    double loss_sum;
    long loss_count;
    int n_agents;
    float *width_count;   /* (n_params) trainer_shared_width_gradients: members holding each coordinate */
    /* ranks (NULL, 0, 1 in one process) */
    struct TrainerRanks *ranks;
    int rank, n_ranks;
    unsigned char *remote;  /* (n) TRAINER_REMOTE_*: what the non-owners' replica of the agent lacks */
    int *tasks;             /* (n) a flush's tasks: the pending agents this rank owns */
    int n_tasks;
    float *own_grads;       /* (own members, n_params) shared gradients awaiting the ordered sum */
    size_t own_grads_count;
    void (*tick)(void *ctx); /* trainer_set_tick; called on slot 0 (the engine's thread) only */
    void *tick_ctx;
};

/* The tick after a task run on slot (only slot 0 is the engine's thread). */
static inline void trainer_tick(const Trainer *t, int slot)
{
    if (slot == 0 && t->tick != NULL) t->tick(t->tick_ctx);
}

/* Replicas other ranks hold stale (the owner's copy is always current). */
enum { TRAINER_REMOTE_PARAMS = 1, TRAINER_REMOTE_OPTIM = 2 };

/* One job's or one member's outcome, as ranks share it. */
typedef struct TrainerResult {
    double loss;
    int status;
    int has_loss;
} TrainerResult;

/* --- ranks (trainer_ranks.c); all of them no-ops in one process --- */
/* The rank doing agent's arithmetic (0 in one process), and whether it is this one. */
int trainer_owner(const Trainer *t, int agent);
int trainer_mine(const Trainer *t, int agent);
/* A collective broadcast of bytes from root. */
void trainer_ranks_bcast(Trainer *t, int root, void *buf, size_t bytes);
/* Makes agent's parameters current on every rank (a broadcast from the owner when stale). */
void trainer_ranks_share_params(Trainer *t, int agent);
/* The same for members (NULL: agents 0..n-1). */
void trainer_ranks_share_members(Trainer *t, const int *members, int n_members);
/* results[k] is filled by the owner of agents[k]; afterwards every rank holds all n. */
int trainer_ranks_share_results(Trainer *t, TrainerResult *results, const int *agents, int n);
/* sum = 0 + g_0 + g_1 + ... in member order (NULL: 0..n-1), each g_k added by its owner,
 * which holds its members' vectors in order in own; the running sum travels between
 * owners, and the result is broadcast to every rank. */
void trainer_ranks_fold(Trainer *t, const int *members, int n_members, const float *own, float *sum);
/* Ranks: the owner of agent computed grad (and *loss, *status) alone; afterwards every
 * rank holds them (two broadcasts). */
int trainer_share_gradient(Trainer *t, int agent, float *grad, double *loss, int *status);
/* Evaluation: rank's share [*first, *first + *count) of n_batches test batches, and
 * every rank's share gathered into the whole arrays. */
void trainer_ranks_batches(const Trainer *t, int n_batches, int rank, int *first, int *count);
void trainer_ranks_gather_batches(Trainer *t, int n_batches, double *batch_loss, int *batch_correct);
/* Counts work for trainer_ranks_steps: mine of all computed by this rank. */
void trainer_ranks_note_steps(Trainer *t, long mine, long all);

/* Worker slots and job queues (trainer_jobs.c). */
int trainer_slots_create(Trainer *t, int threads);
void trainer_slots_free(Trainer *t);
void trainer_shuffle(Trainer *t, TrainerSlot *slot, int agent);
/* Fills slot's x, y with agent's next batch; returns its size. */
int trainer_next_batch(Trainer *t, TrainerSlot *slot, int agent);
/* Queues a job for job->agent; HS_E_NOMEM or the status of an earlier failed flush. */
int trainer_queue(Trainer *t, const TrainerJob *job);
/* Runs every queued job; errors go to diag (the first in queued order). */
int trainer_flush(Trainer *t);
/* The two job kinds of trainer_prune.c. */
int trainer_job_width_step(Trainer *t, TrainerSlot *slot, TrainerJob *job);
int trainer_job_stage_step(Trainer *t, TrainerSlot *slot, TrainerJob *job);
/* ComDML's averaging (trainer.c): 1 when a helper trained only some of its offloader's
 * batches this round; the weight of an offloader's top blocks (its samples times the share
 * of its epoch its helper trained). */
int trainer_split_partial(const Trainer *t, const int *splits);
/* Averages [offset, offset+count) of the members' parameters into every member. */
int trainer_average_range(Trainer *t, const int *members, int n_members, int by_samples, size_t offset, size_t count);
double trainer_top_weight(const Trainer *t, int i);
/* ComDML's auxiliary heads: head m averaged by samples among the agents whose split is m
 * (splits[i], 0: none), where two or more are; members (n ints) is scratch. The split
 * averagings (trainer_average_split and its masked form) end with it. */
int trainer_average_aux_heads(Trainer *t, const int *splits, int *members);
/* Adds a loss computed on the engine's thread, or reports it as a divergence. */
int trainer_count_loss(Trainer *t, double loss, int status, int agent);

#endif
