/* method.h — what a training method sees: Sim, the context it receives, and (from
 * sim/scenario/method_ops.h) the vtable it implements and the registry.
 * A method reacts to the engine's events: round_begin schedules the round's first work,
 * on_event continues it, and the round ends when the method calls engine_end_round or
 * the queue drains. The run (sim/run.c) fills the Sim and plays the rounds; a method
 * reads the scenario, the world, the trainer and the model profile from it and calls
 * the kernel engine's primitives and accessors on sim->engine (sim/kernel/engine.h),
 * whose inside it never sees; never SQL. */
#ifndef SIM_METHOD_H
#define SIM_METHOD_H

#include "base/hs_error.h"
#include "models/model_spec.h"
#include "sim/kernel/collective.h"
#include "sim/kernel/engine.h"
#include "sim/kernel/queue.h"
#include "sim/scenario/method_ops.h"
#include "sim/scenario/scenario.h"
#include "sim/stages/stages.h"
#include "sim/world/world.h"

#include <math.h>

struct Trainer;
struct Privacy;

/* What a method receives: the run's context. The run owns everything in it. */
typedef struct Sim {
    const Scenario *sc;
    World world;             /* trace attributes at their t = 0 values */
    ModelProfile profile;    /* of [model] */
    struct Trainer *trainer; /* NULL in timing mode */
    Engine *engine;          /* the kernel: clock, primitives, accounting */
    HsDiag *diag;            /* where a method's errors are explained */
    double round_extra;      /* the method's figure for rounds.extra (NaN when none); the
                              * run resets it at every round's start. What it means is in
                              * the method's MethodExtra table (MethodOps.extra), which
                              * must say so for every run in which it is set */
    /* [privacy] (sim/stages/privacy.h): the method's accountant, owned by the method (NULL
     * when none); each evaluation reports its epsilon in metrics.epsilon */
    struct Privacy *privacy;
} Sim;

/* The stages' view of the run (sim/stages/stage.h). */
static inline StageContext sim_stage_context(Sim *sim)
{
    return (StageContext){.sc = sim->sc, .world = &sim->world, .profile = &sim->profile, .trainer = sim->trainer,
                          .engine = sim->engine, .diag = sim->diag};
}

/* A method's stages (sim/stages/stages.h); its [privacy] accountant reports epsilon. */
static inline int sim_stages_create(Sim *sim, Stages *st, const StagesSetup *setup)
{
    StageContext cx = sim_stage_context(sim);
    int status = stages_create(st, &cx, setup);
    sim->privacy = st->privacy;
    return status;
}

/* FLOPs of one training step (forward + backward + loss) of a batch on the full model. */
static inline double sim_step_flops(const Sim *sim, int batch)
{
    return model_profile_step_flops(&sim->profile, batch);
}

/* Parameter bytes of the whole model (float32). */
static inline double sim_model_bytes(const Sim *sim)
{
    return model_profile_bytes(&sim->profile);
}

/* Steps in one pass over agent's local data: ceil(samples / its batch). */
static inline int sim_agent_steps(const Sim *sim, int agent)
{
    return world_agent_steps(&sim->world, agent);
}

/* Steps of a "global epoch": ceil(mean samples / mean batch). */
static inline int sim_round_steps(const Sim *sim)
{
    return world_round_steps(&sim->world);
}

#endif
