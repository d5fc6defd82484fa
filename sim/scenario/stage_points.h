/* stage_points.h — the types a method declares its stage points and its refusals with
 * (MethodStages, in its MethodOps), apart from the features' table (features.h) so that
 * method_ops.h needs nothing else of it. What they mean: features.h. */
#ifndef SIM_SCENARIO_STAGE_POINTS_H
#define SIM_SCENARIO_STAGE_POINTS_H

/* The table's columns, in its order. */
typedef enum {
    FEATURE_COMPRESSION = 0, /* [compression] scheme != none */
    FEATURE_BYZANTINE,       /* [byzantine] count > 0 or aggregator != mean */
    FEATURE_PRIVACY_SAMPLE,  /* [privacy] clip = sample */
    FEATURE_PRIVACY_UPDATE,  /* [privacy] clip = update */
    FEATURE_PRUNE,           /* [method] prune = width */
    FEATURE_FREEZE,          /* [method] freeze = progressive */
    FEATURE_DRIFT_FEDPROX,   /* [drift] method = fedprox */
    FEATURE_DRIFT_SCAFFOLD,  /* [drift] method = scaffold */
    FEATURE_COUNT
} Feature;

/* Stage points (MethodStages.points, FeatureInfo.needs). */
enum {
    STAGE_LOCAL_STEP = 1 << 0,
    STAGE_OUTGOING = 1 << 1,
    STAGE_AGGREGATE = 1 << 2,
};
#define STAGE_POINTS 3

/* A method's stage points and its refusals. The three texts say, in a few words, what
 * the point is for this method (the docs' table shows them); NULL where it has none. */
typedef struct MethodStages {
    unsigned points;           /* STAGE_* */
    const char *local_step;    /* e.g. "a gradient of the shared model" */
    const char *outgoing;      /* e.g. "its gradient" */
    const char *aggregate;     /* e.g. "all-reduce mean" */
    /* NULL: the feature runs wherever its stage points are; otherwise why it does not */
    const char *refuses[FEATURE_COUNT];
} MethodStages;

/* clip = update in a gossip method: the reason, shared by every method without a server. */
#define STAGE_NO_TRUSTED_AGGREGATOR                                                                                \
    "no trusted aggregator: each neighbour receives the clipped model itself, so noise would have to go on every " \
    "message (local DP), which [privacy] does not model"

/* [drift] (FedProx, SCAFFOLD) in the methods that take no local steps from a model they
 * were sent, and in the gossip methods: the reasons they share. */
#define STAGE_DRIFT_NO_LOCAL_STEPS                                                                                 \
    "every step is one gradient of the one shared model: no agent runs local steps away from it, so there is no " \
    "client drift to correct"
#define STAGE_DRIFT_GOSSIP                                                                                         \
    "no global model: each agent mixes with its neighbours' models, so there is no common starting point for a " \
    "proximal term and no server control variate (decentralized drift correction, e.g. gradient tracking, is "  \
    "another algorithm)"

/* A refusal that is not (yet) an algorithmic one: the stage exists, the method's
 * protocol does not call it. Reports count these apart. */
#define STAGE_NOT_WIRED "not wired to the stage yet"

#endif
