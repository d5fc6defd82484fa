/* stages.h — the three stage points of one method's run, made together from the scenario:
 * the local step (local_step.h), the outgoing vector (outgoing.h) and the aggregation
 * (aggregate.h), with the [privacy] accountant and the [byzantine] agents they share. A
 * method keeps one Stages, says at create what its keys and its vectors are, and calls
 * the stages at its points; the features the scenario turns on are the stages' business. */
#ifndef SIM_STAGES_STAGES_H
#define SIM_STAGES_STAGES_H

#include "sim/stages/aggregate.h"
#include "sim/stages/drift.h"
#include "sim/stages/local_step.h"
#include "sim/stages/outgoing.h"

typedef struct Stages {
    StageContext cx;
    Privacy *privacy;      /* [privacy] clip != none; NULL otherwise */
    Byzantine *byzantine;  /* [byzantine] with attackers or a robust rule; NULL otherwise */
    LocalStep step;
    Drift drift;           /* [drift]: its correction of the local steps, its share of the messages */
    Outgoing out;
    Aggregate agg;
    float **attacked;      /* (capacity) scratch: what attackers send in one exchange */
    const float **inputs;  /* (capacity) */
    const unsigned char **held; /* (capacity) */
    float *change;         /* (d) scratch of stages_upload */
    int capacity;
} Stages;

/* What the method tells the stages at create. */
typedef struct StagesSetup {
    const PruneKeys *pruning;    /* its prune keys (NULL: it has none) */
    const FreezeKeys *freezing;  /* its freeze keys (NULL: none) */
    const int *steps;            /* (n) each agent's steps per round, for prune (NULL: equal) */
    size_t d;                    /* entries of the vectors it sends: 0 for the model's blocks */
    int keep_messages;           /* outgoing_init's */
    int byzantine;               /* 1: make the Byzantine state even without [byzantine] (a
                                  * method whose rule is always robust, byzsgdnm) */
} StagesSetup;

/* Errors with a message in cx->diag. stages_free accepts a zeroed Stages. */
int stages_create(Stages *st, const StageContext *cx, const StagesSetup *setup);
void stages_free(Stages *st);
/* The local step's stage and the compression's warm-up for round. */
void stages_begin_round(Stages *st, int round);

/* Agent's model x (params floats; NULL in timing mode) leaves for a server that holds
 * start (the model it sent): clip = update clips the change x - start to C;
 * [compression] sends C(x - start) with the agent's feedback state and x becomes
 * start + what arrives (the server's reconstruction). Returns the message's bytes: the
 * compressed size, or what the agent trains (its sub-model's, the stage's, the model's). */
double stages_upload(Stages *st, int agent, float *x, const float *start);
/* The bytes of agent's model message uncompressed: what it trains (local_step_bytes),
 * twice that when [drift] method = scaffold adds its control variate. */
double stages_model_bytes(const Stages *st, int agent);

/* One gossip averaging of agent who[0]: the attackers among who[1..K) replace their
 * vectors (the outgoing stage, from the honest ones of this exchange), then the
 * aggregation's gossip form (aggregate_gossip) with the local step's masks. */
int stages_gossip(Stages *st, const int *who, const float *const *vectors, const double *weights, int K, size_t n,
                  float *out);
/* 1 when no feature changes a gossip averaging (no masks, no attackers, the plain mean):
 * a method may then run its own averaging arithmetic, bit for bit what it always did. */
int stages_gossip_plain(const Stages *st);

#endif
