/* local_step.h — the local-step stage point: what an agent trains on its own samples and
 * how its gradient is formed. A method asks for "a step of agent i" (local_step_run) or
 * "the gradient of agent i at x" (local_step_gradient) and what either costs
 * (local_step_flops); the features the scenario turns on decide the rest:
 *   plain          the full model: trainer_local_step / trainer_gradient_at;
 *   prune = width  a slow agent's nested sub-model (sim/stages/prune.h): its FLOPs, its
 *                  gradient (0 outside the sub-model), its parameter bytes;
 *   freeze = progressive
 *                  SmartFreeze's stage s = round / freeze_rounds + 1 (capped at the
 *                  model's blocks): block s and its output module train, blocks 1..s-1 are
 *                  frozen (forward only); a step costs model_profile_stage_flops, what is
 *                  exchanged 4 model_profile_stage_params bytes; the optimiser touches the
 *                  stage's ranges only (local_step_apply, local_step_optim_step);
 *   [privacy] clip = sample
 *                  a DP-SGD step or gradient (sim/stages/privacy.h): per-sample clipping,
 *                  the agent's own noise, one run of the accountant's mechanism;
 *   [compression] feedback = dgc
 *                  DGC's own local step (sim/stages/compress.h): the gradient clipped to
 *                  clip / sqrt(N), the agent's velocity u_i (the outgoing stage's, which
 *                  masks it) with the [model] momentum and weight decay, a plain step
 *                  x <- x - lr u_i (Nesterov: g + wd x + mu u_i) on the blocks;
 *   [byzantine] attack = labelflip
 *                  an attacker's gradient is taken on its own rows with flipped labels
 *                  (sim/stages/byzantine.h), wherever the method forms gradients;
 *   [drift]        local_step_run's gradient gains FedProx's mu (w - w^t) or SCAFFOLD's
 *                  c - c_i before the optimiser takes it (sim/stages/drift.h; DP-SGD's
 *                  gradient under clip = sample). local_step_gradient is not corrected:
 *                  the methods that take drift correction step with local_step_run.
 * The features exclude each other here (features.c's combinations say which); the plain
 * path calls exactly what the methods called before the stages, so its rows are bitwise
 * the same. Timing mode (no trainer): the costs and the stage are the same, the
 * arithmetic is skipped. */
#ifndef SIM_STAGES_LOCAL_STEP_H
#define SIM_STAGES_LOCAL_STEP_H

#include "sim/stages/byzantine.h"
#include "sim/stages/drift.h"
#include "sim/stages/outgoing.h"
#include "sim/stages/privacy.h"
#include "sim/stages/prune.h"
#include "sim/stages/stage.h"

struct Optim;

enum { FREEZE_NONE = 0, FREEZE_PROGRESSIVE = 1 }; /* freeze's choices, in order */
typedef struct FreezeKeys {
    int freeze;            /* FREEZE_NONE or FREEZE_PROGRESSIVE */
    int freeze_rounds;     /* rounds each block trains before it is frozen */
} FreezeKeys;

/* Their rows, for the key table of a method whose key struct Type holds a FreezeKeys
 * named member (with its dot), as PRUNE_METHOD_KEYS (runs.config leaves them out at their
 * defaults); FREEZE_METHOD_KEYS_ALWAYS writes them always (localsgd, which had them). */
#define FREEZE_METHOD_KEYS_FLAGS(Type, member, omit)                                                               \
    METHOD_KEY_IN(Type, member, freeze, "none",                                                                    \
                  "none, or progressive: train block by block, earlier blocks frozen (SmartFreeze)",               \
                  .type = SCHEMA_CHOICE, .choices = "none|progressive", .flags = (omit)),                          \
    METHOD_KEY_IN(Type, member, freeze_rounds, "2", "freeze = progressive: rounds each block trains before it is frozen", \
                  .type = SCHEMA_INT, .min = 1, .max = 100000000, .flags = (omit))
#define FREEZE_METHOD_KEYS(Type, member) FREEZE_METHOD_KEYS_FLAGS(Type, member, SCHEMA_OMIT_DEFAULT)
#define FREEZE_METHOD_KEYS_ALWAYS(Type, member) FREEZE_METHOD_KEYS_FLAGS(Type, member, 0)

typedef struct LocalStep {
    StageContext cx;
    double flops;          /* one full step of one sample (x an agent's batch: sim_step_flops) */
    Prune prune;           /* prune = width: prune.on */
    int freeze_rounds;     /* freeze = progressive: rounds per stage; 0 = off */
    int stage;             /* this round's stage, 1..blocks (freeze) */
    Privacy *privacy;      /* clip = sample: DP-SGD (borrowed, NULL otherwise) */
    Byzantine *byzantine;  /* labelflip attackers (borrowed, NULL otherwise) */
    Outgoing *dgc;         /* feedback = dgc: the velocities (borrowed, NULL otherwise) */
    Drift *drift;          /* [drift] on: its corrected steps (borrowed, NULL otherwise) */
    unsigned char *stage_held; /* freeze, train mode: (params) 1 on the stage's ranges */
    float *gradient;       /* dgc: (params) scratch */
    float *velocity_step;  /* dgc: (d) scratch */
} LocalStep;

/* What the method tells the stage: its keys of the features (NULL when it has none) and
 * the steps each agent takes per round (prune's makespan rule; NULL: all the same). */
typedef struct LocalStepSetup {
    const PruneKeys *pruning;
    const FreezeKeys *freezing;
    const int *steps;
    Privacy *privacy;
    Byzantine *byzantine;
    Outgoing *out;         /* its dgc velocities are the local steps' (feedback = dgc) */
    Drift *drift;          /* [drift]: FedProx's or SCAFFOLD's corrected steps */
} LocalStepSetup;

/* Errors as prune_create's. local_step_free accepts a zeroed LocalStep. */
int local_step_init(LocalStep *ls, const StageContext *cx, const LocalStepSetup *setup);
void local_step_free(LocalStep *ls);
/* The round's stage under freeze = progressive. */
void local_step_begin_round(LocalStep *ls, int round);
/* What rounds.extra shows for the stage: the stage (freeze), the smallest keep ratio
 * (prune), NaN otherwise. A method that writes it there lists LOCAL_STEP_EXTRA in its
 * MethodExtra table (sim/scenario/method_ops.h), so the meaning is written here once. */
double local_step_extra(const LocalStep *ls);
#define LOCAL_STEP_EXTRA                                                                                           \
    {.key = "prune", .value = "width", .meaning = "smallest keep ratio of the agents' sub-models"},                 \
    {.key = "freeze", .value = "progressive", .meaning = "freezing stage s: block s trains, blocks before it are frozen"}

/* FLOPs of one step of agent, at its own batch ([agents] batch). */
double local_step_flops(const LocalStep *ls, int agent);
/* Bytes of the parameters agent trains and exchanges: its sub-model's, the stage's, or
 * the whole model's (4 bytes each). */
double local_step_bytes(const LocalStep *ls, int agent);
/* Per-coordinate masks of the agents' sub-models (NULL: nobody is pruned; widths[i]
 * NULL: agent i holds every coordinate). */
struct ModelWidth *const *local_step_widths(const LocalStep *ls);

/* Which coordinates agent trains and sends (params; NULL: all): its sub-model's under
 * prune, the stage's under freeze. Train mode. */
const unsigned char *local_step_held(const LocalStep *ls, int agent);

/* The coordinates a step of the method may move (params; NULL: all): the stage's under
 * freeze (the frozen blocks stay where they are, whatever a momentum or an outer step
 * remembers), all otherwise (a pruned agent's other coordinates may follow the average). */
const unsigned char *local_step_moving(const LocalStep *ls);
/* v (n floats) <- 0 outside local_step_moving; nothing when every coordinate may move. */
void local_step_mask(const LocalStep *ls, float *v, size_t n);

/* One step of agent on its own model (queued like trainer_local_step). */
int local_step_run(LocalStep *ls, int agent);
/* The gradient of agent's next batch at `at` (a whole parameter vector; NULL: the
 * agent's own model) into grad. */
int local_step_gradient(LocalStep *ls, int agent, const float *at, float *grad);
/* Agent's optimiser applies grad to what it trains (trainer_optimizer_step, or the
 * stage's ranges). */
int local_step_apply(LocalStep *ls, int agent, const float *grad);
/* Any optimiser (a server's, a shared model's) applies grad to params (d floats) at lr:
 * the whole vector, or the stage's ranges under freeze = progressive. */
int local_step_optim_step(const LocalStep *ls, struct Optim *o, float *params, const float *grad, size_t d, double lr);

#endif
