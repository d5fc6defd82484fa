/* stage.h — what every stage of sim/stages/ is given: the run's scenario, world, model
 * profile, trainer (NULL in timing mode), engine and diagnostics. A method fills one from
 * its Sim (sim/methods/method.h, sim_stage_context); the stages never see the Sim. */
#ifndef SIM_STAGES_STAGE_H
#define SIM_STAGES_STAGE_H

#include "base/hs_error.h"
#include "models/model_spec.h"
#include "sim/kernel/engine.h"
#include "sim/scenario/method_ops.h"
#include "sim/scenario/scenario.h"
#include "sim/train/trainer.h"
#include "sim/world/world.h"

typedef struct StageContext {
    const Scenario *sc;
    const World *world;
    const ModelProfile *profile;
    Trainer *trainer;      /* NULL in timing mode */
    Engine *engine;
    HsDiag *diag;
} StageContext;

#endif
