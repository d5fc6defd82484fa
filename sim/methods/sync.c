/* sync.c — synchronous data parallel, the straggler baseline.
 * Every step each agent computes the gradient of one batch; the gradients are
 * all-reduced (ring, blocking) and every agent applies the same averaged update, so
 * every step waits for the slowest agent. A round is a global epoch:
 * ceil(mean samples / batch) steps. */
#include "sim/engine.h"
#include "sim/trainer.h"

#include <stdlib.h>

enum { SYNC_COMPUTED = ENGINE_EVENT_METHOD, SYNC_REDUCED };

typedef struct SyncState {
    int steps_per_round;
    int step;
    double step_flops;
    Collective allreduce;
} SyncState;

static int sync_create(Engine *e, void **state)
{
    SyncState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    s->steps_per_round = engine_round_steps(e);
    s->step_flops = engine_step_flops(e, e->sc->model.batch);
    *state = s;
    return trainer_setup_shared(e);
}

static int sync_start_step(SyncState *s, Engine *e)
{
    engine_collective_begin(&s->allreduce, NULL, e->world.n, engine_model_bytes(e), 1, SYNC_REDUCED, 0);
    for (int i = 0; i < e->world.n; i++) engine_compute(e, i, s->step_flops, SYNC_COMPUTED, 0);
    /* Every agent starts from the same parameters, so the gradients can be computed
     * now, all at once, for the step that completes later. */
    return trainer_shared_gradients(e);
}

static int sync_round_begin(void *state, Engine *e, int round)
{
    SyncState *s = state;
    s->step = 0;
    return sync_start_step(s, e);
}

static int sync_on_event(void *state, Engine *e, const Event *ev)
{
    SyncState *s = state;
    if (ev->kind == SYNC_COMPUTED) return engine_collective_join(e, &s->allreduce, ev->agent);
    int status = trainer_shared_apply(e);
    if (status != HS_OK) return status;
    if (++s->step < s->steps_per_round) return sync_start_step(s, e);
    engine_end_round(e);
    return HS_OK;
}

static void sync_destroy(void *state)
{
    free(state);
}

static const MethodKey sync_keys[] = {{NULL, NULL, NULL}};

const MethodOps method_sync = {
    .name = "sync",
    .summary = "synchronous data parallel: all-reduce of gradients every step",
    .keys = sync_keys,
    .create = sync_create,
    .round_begin = sync_round_begin,
    .on_event = sync_on_event,
    .destroy = sync_destroy,
};
