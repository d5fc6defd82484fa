/* features.h — the cross-cutting features as the scenario sees them, and the three stage
 * points they apply at (sim/stages/ holds the stages themselves).
 *
 * Every method passes through up to three stage points; it declares which it has
 * (MethodStages, one per method beside its vtable):
 *   local step  what an agent trains on its own samples and how the gradient is formed
 *               (the full model, a width sub-model, the unfrozen stage, DP-SGD);
 *   outgoing    what an agent sends (a gradient, a model, an update): clipping,
 *               compression, a Byzantine agent's attack;
 *   aggregate   where sent vectors are combined (an all-reduce, a server, a gossip
 *               neighbour): mean or a robust rule, central noise.
 * A feature names the stage points it needs (FeatureInfo.needs). It applies to a method
 * that has them all, unless the method states why it does not (MethodStages.refuses: an
 * algorithmic reason, or that the method is not wired to the stage yet). A method without
 * one of the points refuses with the feature's reason for that point (FeatureInfo.without).
 * So the reason a combination is refused is written once, here or in the method's
 * declaration, and scenario resolution, `hetsim methods --features`, the docs and the
 * matrix test (tests/cli/stages.sh) all read it from there. */
#ifndef SIM_SCENARIO_FEATURES_H
#define SIM_SCENARIO_FEATURES_H

#include "sim/scenario/stage_points.h"

struct Scenario;
struct MethodOps;

typedef struct FeatureInfo {
    const char *name;          /* "compression", "privacy.sample": the table's and the tests' name */
    const char *setting;       /* how a scenario turns it on */
    const char *section;       /* where its setting is written: "compression", "method", ... */
    const char *key;           /* the key that turns it on there */
    unsigned needs;            /* STAGE_* it applies at */
    const char *without[STAGE_POINTS]; /* why not, for a method lacking point 1 << k */
} FeatureInfo;

const FeatureInfo *feature_info(Feature f);

/* Two features that do not combine, with any method: the error is reported at the
 * setting of `at` (one of the two), with `why`. */
typedef struct FeaturePair {
    Feature a, b, at;
    const char *why;
} FeaturePair;
/* The pairs, terminated by one with why = NULL, in the order they are checked. */
const FeaturePair *feature_pairs(void);
/* NULL when method m runs with feature f; else why not (a static string). */
const char *feature_refusal(const struct MethodOps *m, Feature f);
/* 1 when the refusal is STAGE_NOT_WIRED (not an algorithmic reason). */
int feature_refusal_pending(const char *reason);

#endif
