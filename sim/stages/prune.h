/* prune.h — structured (width) pruning for slow agents, shared by localsgd, dpsgd and
 * sync: [method] prune = none | width, prune_target = makespan | RATIO, prune_min.
 *
 * Seed 001 (MOTOR, "Joint Model Pruning and Topology Construction for Accelerating
 * Decentralized Machine Learning", Jiang et al., TPDS 2023: heterogeneous workers get
 * different pruning ratios and each trains and transmits a sub-model that fits its
 * capability) with HeteroFL's nested width scaling (models/model_width.h) as the
 * sub-model: the leading ceil(r * w) units of every hidden layer.
 *
 * Who is slow, and how much it keeps. An agent's standalone round time is
 *   tau_i = steps_i * F(1) / compute_i,
 * steps_i its steps per round (the method says which), F(r) the FLOPs of one step of the
 * sub-model at keep r (F(1) the full model's). T = the lower median of tau over all
 * agents; agent i is slow when tau_i > T (so at most half the agents are pruned).
 *   prune_target = makespan  a slow agent keeps the largest r with
 *                            steps_i * F(r) / compute_i <= T (its compute time meets the
 *                            median agent's; r found by bisection on the monotone F), but
 *                            no less than prune_min (then it stays above T);
 *   prune_target = RATIO     every slow agent keeps RATIO (in (0, 1]).
 * MOTOR picks ratios jointly with the topology by its own optimisation; this is the
 * simpler speed-matching rule the issue asks for. The choice is made once, from the
 * drawn compute speeds (slowdown dynamics and traces are not looked at).
 *
 * Costs: a step of agent i costs F(keep_i); what it sends is its sub-model's parameter
 * bytes (blocks, 4 bytes each). Averaging by all-reduce (localsgd, sync) runs as nested
 * shells (the kernel's NestedReduce, sim/kernel/collective.h, with the keep ratios as
 * levels): with distinct kept ratios k_1 < ... < k_m among the members, shell l holds the
 * coordinates of sub(k_l) not in sub(k_{l-1}) and is a ring all-reduce among the members
 * with keep >= k_l (4 bytes per coordinate). Every coordinate is thus reduced exactly
 * among the agents holding it; a member joins only the shells it holds. With nobody
 * pruned there is one shell, the plain all-reduce. */
#ifndef SIM_PRUNE_H
#define SIM_PRUNE_H

#include "models/model_spec.h"
#include "models/model_width.h"
#include "sim/kernel/collective.h"
#include "sim/kernel/engine.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

typedef struct Prune {
    int on;                /* prune = width */
    int n;
    double *keep;          /* (n) keep ratio, 1 = the whole model */
    double *step_flops;    /* (n) FLOPs of one step of the agent's batch at that ratio */
    double *bytes;         /* (n) parameter bytes of the sub-model's blocks */
    ModelWidth **widths;   /* (n) train mode: NULL for keep 1; one per pruned agent (its own
                            * sub-model and workspace, so agents' steps may run on threads) */
    NestedReduce nest;     /* the averaging's all-reduce shells, levels = keep ratios */
} Prune;

/* The [method] keys prune, prune_target, prune_min, as the methods that prune embed
 * them in their key struct (sim/scenario/method_ops.h). */
enum { PRUNE_NONE = 0, PRUNE_WIDTH = 1 }; /* prune's choices, in order */
typedef struct PruneKeys {
    int prune;             /* PRUNE_NONE or PRUNE_WIDTH */
    double prune_target;   /* a keep ratio in (0, 1], or NaN: makespan */
    double prune_min;      /* makespan: the smallest keep ratio, (0, 1] */
} PruneKeys;

/* Their rows, for the key table of a method whose key struct Type holds a PruneKeys
 * named member (written with its dot: PRUNE_METHOD_KEYS(FlKeys, pruning.)). runs.config
 * leaves each out while it holds its default (SCHEMA_OMIT_DEFAULT), so a method that
 * gained them with the stages keeps the config its runs had; PRUNE_METHOD_KEYS_ALWAYS
 * writes them always (sync, localsgd and dpsgd, which had them before). */
#define PRUNE_METHOD_KEYS_FLAGS(Type, member, omit)                                                                \
    METHOD_KEY_IN(Type, member, prune, "none",                                                                     \
                  "none, or width: slow agents train a nested sub-model (leading units of every hidden layer)",    \
                  .type = SCHEMA_CHOICE, .choices = "none|width", .flags = (omit)),                                \
    METHOD_KEY_IN(Type, member, prune_target, "makespan",                                                          \
                  "makespan (keep ratio that meets the median agent's compute time) or a fixed keep ratio",        \
                  .type = SCHEMA_WORD_OR_REAL, .choices = "makespan", .min = 0, .max = 1,                          \
                  .flags = SCHEMA_OPEN_MIN | (omit)),                                                              \
    METHOD_KEY_IN(Type, member, prune_min, "0.0625", "smallest keep ratio prune_target = makespan may choose",     \
                  .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OPEN_MIN | (omit))
#define PRUNE_METHOD_KEYS(Type, member) PRUNE_METHOD_KEYS_FLAGS(Type, member, SCHEMA_OMIT_DEFAULT)
#define PRUNE_METHOD_KEYS_ALWAYS(Type, member) PRUNE_METHOD_KEYS_FLAGS(Type, member, 0)

/* Reads keys (prune = none: p->on = 0 and nothing else is allocated) for the agents of
 * world, whose full model is profile and sc's [model]. steps: (n) each agent's steps per
 * round, NULL when all take the same number. train (train mode) builds the sub-model maps.
 * Errors: HS_E_NOMEM, or a sub-model that cannot be built (with a message in diag). */
int prune_create(const PruneKeys *keys, const Scenario *sc, const World *world, const ModelProfile *profile, int train,
                 const int *steps, HsDiag *diag, Prune *p);
void prune_free(Prune *p);
/* The keep ratios of prune_target = makespan, for the tests: keep[i] from tau and F. */
double prune_makespan_keep(const ModelSpec *spec, const ModelProfile *full, int batch, double tau, double target,
                           double min_keep);

/* The smallest keep ratio of any agent (1 when nobody is pruned), for rounds.extra. */
double prune_smallest_keep(const Prune *p);

/* Starts the shells of one averaging among members (NULL: agents 0..n-1); each
 * finishes with an event (kind, -1, shell). HS_E_NOMEM. */
int prune_shells_begin(Prune *p, const int *members, int n_members, int blocking, int kind);
/* agent is ready: it joins every shell it holds. */
int prune_shells_join(Engine *e, Prune *p, int agent);
/* A shell's event arrived: 1 once all of them have. */
int prune_shells_done(Prune *p);

#endif
