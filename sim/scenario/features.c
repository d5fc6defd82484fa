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
    [FEATURE_DRIFT_FEDPROX] = {
        .name = "drift.fedprox", .setting = "[drift] method = fedprox", .section = "drift", .key = "method",
        .needs = STAGE_LOCAL_STEP,
        .without = {[0] = "no agent takes local steps: there is no local objective for a proximal term"},
    },
    [FEATURE_DRIFT_SCAFFOLD] = {
        .name = "drift.scaffold", .setting = "[drift] method = scaffold", .section = "drift", .key = "method",
        .needs = STAGE_LOCAL_STEP | STAGE_OUTGOING | STAGE_AGGREGATE,
        .without = {[0] = "no agent takes local steps: there is no drift for control variates to correct",
                    [1] = "it sends nothing a control variate could ride along",
                    [2] = "nothing is averaged: there is no server control variate c"},
    },
};

/* Not modelled together: the stages would have to agree on what a sub-model's, a stage's
 * or a clipped update's compressed or robustly combined vector means. ([compression] with
 * [byzantine] and with [privacy] are their sections' errors, scenario_options.c.) */
static const FeaturePair feature_pair_table[] = {
    {FEATURE_PRUNE, FEATURE_FREEZE, FEATURE_FREEZE,
     "progressive is not available with prune = width (a sub-model trained stage by stage is not modelled)"},
    {FEATURE_PRUNE, FEATURE_COMPRESSION, FEATURE_PRUNE,
     "width is not available with [compression] (a sub-model's compressed change is not modelled)"},
    {FEATURE_FREEZE, FEATURE_COMPRESSION, FEATURE_FREEZE,
     "progressive is not available with [compression] (a stage's compressed change is not modelled)"},
    {FEATURE_PRUNE, FEATURE_PRIVACY_SAMPLE, FEATURE_PRUNE,
     "width is not available with [privacy] (DP-SGD on a sub-model is not modelled)"},
    {FEATURE_PRUNE, FEATURE_PRIVACY_UPDATE, FEATURE_PRUNE,
     "width is not available with [privacy] (a sub-model's clipped update is not modelled)"},
    {FEATURE_FREEZE, FEATURE_PRIVACY_SAMPLE, FEATURE_FREEZE,
     "progressive is not available with [privacy] (DP-SGD on a stage is not modelled)"},
    {FEATURE_FREEZE, FEATURE_PRIVACY_UPDATE, FEATURE_FREEZE,
     "progressive is not available with [privacy] (a stage's clipped update is not modelled)"},
    {FEATURE_PRUNE, FEATURE_BYZANTINE, FEATURE_PRUNE,
     "width is not available with [byzantine] (robust rules compare whole vectors: a sub-model's zeros outside it "
     "would vote)"},
    {FEATURE_PRIVACY_UPDATE, FEATURE_BYZANTINE, FEATURE_BYZANTINE,
     "Byzantine agents and robust aggregators are not available with [privacy] clip = update (its noise is "
     "calibrated to the mean's sensitivity, not a robust rule's)"},
    {FEATURE_PRUNE, FEATURE_DRIFT_FEDPROX, FEATURE_DRIFT_FEDPROX,
     "fedprox is not available with prune = width (a sub-model's proximal term is not modelled)"},
    {FEATURE_PRUNE, FEATURE_DRIFT_SCAFFOLD, FEATURE_DRIFT_SCAFFOLD,
     "scaffold is not available with prune = width (a sub-model's control variates are not modelled)"},
    {FEATURE_FREEZE, FEATURE_DRIFT_FEDPROX, FEATURE_DRIFT_FEDPROX,
     "fedprox is not available with freeze = progressive (a stage's proximal term is not modelled)"},
    {FEATURE_FREEZE, FEATURE_DRIFT_SCAFFOLD, FEATURE_DRIFT_SCAFFOLD,
     "scaffold is not available with freeze = progressive (a stage's control variates are not modelled)"},
    {FEATURE_COMPRESSION, FEATURE_DRIFT_SCAFFOLD, FEATURE_DRIFT_SCAFFOLD,
     "scaffold is not available with [compression] (the control variates' changes would be compressed too, "
     "which SCAFFOLD does not define)"},
    {FEATURE_BYZANTINE, FEATURE_DRIFT_SCAFFOLD, FEATURE_DRIFT_SCAFFOLD,
     "scaffold is not available with [byzantine] (an attacker would forge its control variate too, and the robust "
     "rules combine models, not control variates)"},
    {FEATURE_PRIVACY_UPDATE, FEATURE_DRIFT_SCAFFOLD, FEATURE_DRIFT_SCAFFOLD,
     "scaffold is not available with [privacy] clip = update (a client's control variate change (x - y_i) / (K lr) "
     "- c carries its unclipped update)"},
    {FEATURE_COUNT, FEATURE_COUNT, FEATURE_COUNT, NULL},
};

const FeaturePair *feature_pairs(void)
{
    return feature_pair_table;
}

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
