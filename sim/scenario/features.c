/* features.c — the features' table and the rule that says whether a method runs with one
 * (sim/scenario/features.h). */
#include "sim/scenario/features.h"

#include "sim/scenario/method_ops.h"

#include <string.h>

static const FeatureInfo feature_table[FEATURE_COUNT] = {
    [FEATURE_COMPRESSION] = {
        .name = "compression", .setting = "[compression] scheme != none", .section = "compression", .key = "scheme",
        .needs = STAGE_OUTGOING,
        .without = {[1] = "it sends no vectors to compress"},
    },
    [FEATURE_BYZANTINE] = {
        .name = "byzantine", .setting = "[byzantine] count > 0 or aggregator != mean", .section = "byzantine",
        .key = "count", .needs = STAGE_OUTGOING | STAGE_AGGREGATE,
        .without = {[1] = "it sends no vectors an attacker could replace",
                    [2] = "nothing is combined: a robust rule has no set of vectors to compare"},
    },
    [FEATURE_PRIVACY_SAMPLE] = {
        .name = "privacy.sample", .setting = "[privacy] clip = sample", .section = "privacy", .key = "clip",
        .needs = STAGE_LOCAL_STEP,
        .without = {[0] = "no agent computes gradients on its own samples"},
    },
    [FEATURE_PRIVACY_UPDATE] = {
        .name = "privacy.update", .setting = "[privacy] clip = update", .section = "privacy", .key = "clip",
        .needs = STAGE_OUTGOING | STAGE_AGGREGATE,
        .without = {[1] = "it sends no update to clip",
                    [2] = "nothing is combined: there is no aggregate for the noise to go on"},
    },
    [FEATURE_PRUNE] = {
        .name = "prune", .setting = "[method] prune = width", .section = "method", .key = "prune",
        .needs = STAGE_LOCAL_STEP,
        .without = {[0] = "no agent trains on its own samples: there is no step to prune"},
    },
    [FEATURE_FREEZE] = {
        .name = "freeze", .setting = "[method] freeze = progressive", .section = "method", .key = "freeze",
        .needs = STAGE_LOCAL_STEP,
        .without = {[0] = "no agent trains on its own samples: there is no step to freeze"},
    },
};

const FeatureInfo *feature_info(Feature f)
{
    return &feature_table[f];
}

const char *feature_refusal(const MethodOps *m, Feature f)
{
    const MethodStages *st = m->stages;
    const FeatureInfo *info = &feature_table[f];
    for (int k = 0; k < STAGE_POINTS; k++)
        if ((info->needs & (1u << k)) && !(st->points & (1u << k))) return info->without[k];
    return st->refuses[f];
}

int feature_refusal_pending(const char *reason)
{
    return reason != NULL && strcmp(reason, STAGE_NOT_WIRED) == 0;
}
