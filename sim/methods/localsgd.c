/* localsgd.c — Local SGD / FedAvg: H local steps on each agent's own model, then the
 * models are averaged by a blocking ring all-reduce.
 *   local_steps = epoch  every agent makes one pass over its own data (ceil(n_i/batch)
 *                        steps, so agents with more data take longer), then averages:
 *                        one averaging per round. This is ComDML's no-offload twin.
 *   local_steps = H      a round is a global epoch of S = ceil(mean n_i / batch) steps,
 *                        averaged every H steps (the last period may be shorter).
 *   weighting = samples (FedAvg) | uniform */
#include "sim/engine.h"
#include "sim/trainer.h"

#include <stdlib.h>

enum { LOCALSGD_STEPPED = ENGINE_EVENT_METHOD, LOCALSGD_AVERAGED };

typedef struct LocalSgdState {
    int local_steps;      /* 0 = one local epoch */
    int by_samples;
    int round_steps;      /* S, for numeric local_steps */
    int period_done;      /* steps already done this round before this period */
    int *remaining;       /* (n) steps left in the current period per agent */
    double step_flops;
    Collective average;
} LocalSgdState;

static int localsgd_create(Engine *e, void **state)
{
    LocalSgdState *s = calloc(1, sizeof *s);
    if (s == NULL) return HS_E_NOMEM;
    *state = s;
    s->remaining = calloc((size_t)e->world.n, sizeof *s->remaining);
    if (s->remaining == NULL) return HS_E_NOMEM;
    int weighting, status;
    if ((status = scenario_param_steps(e->sc, "local_steps", &s->local_steps, e->diag)) ||
        (status = scenario_param_choice(e->sc, "weighting", "samples|uniform", &weighting, e->diag)))
        return status;
    s->by_samples = weighting == 0;
    s->round_steps = engine_round_steps(e);
    s->step_flops = engine_step_flops(e, e->sc->model.batch);
    return trainer_setup_local(e);
}

static int localsgd_start_period(LocalSgdState *s, Engine *e)
{
    engine_collective_begin(&s->average, NULL, e->world.n, engine_model_bytes(e), 1, LOCALSGD_AVERAGED, 0);
    int period = s->local_steps;
    if (period > 0 && s->period_done + period > s->round_steps) period = s->round_steps - s->period_done;
    for (int i = 0; i < e->world.n; i++) {
        s->remaining[i] = s->local_steps == 0 ? engine_agent_steps(e, i) : period;
        engine_compute(e, i, s->step_flops, LOCALSGD_STEPPED, 0);
    }
    s->period_done += period;
    return HS_OK;
}

static int localsgd_round_begin(void *state, Engine *e, int round)
{
    LocalSgdState *s = state;
    s->period_done = 0;
    return localsgd_start_period(s, e);
}

static int localsgd_on_event(void *state, Engine *e, const Event *ev)
{
    LocalSgdState *s = state;
    int status;
    if (ev->kind == LOCALSGD_STEPPED) {
        /* The step's arithmetic runs at its completion: nobody else touches this
         * agent's model during a period, so the parameters are those it started with. */
        if ((status = trainer_local_step(e, ev->agent)) != HS_OK) return status;
        if (--s->remaining[ev->agent] > 0) {
            engine_compute(e, ev->agent, s->step_flops, LOCALSGD_STEPPED, 0);
            return HS_OK;
        }
        return engine_collective_join(e, &s->average, ev->agent);
    }
    if ((status = trainer_average(e, NULL, e->world.n, s->by_samples)) != HS_OK) return status;
    if (s->local_steps > 0 && s->period_done < s->round_steps) return localsgd_start_period(s, e);
    engine_end_round(e);
    return HS_OK;
}

static void localsgd_destroy(void *state)
{
    LocalSgdState *s = state;
    if (s == NULL) return;
    free(s->remaining);
    free(s);
}

static const MethodKey localsgd_keys[] = {
    {"local_steps", "epoch", "local steps between averagings: a number, or epoch"},
    {"weighting", "samples", "model averaging weights: samples (FedAvg) or uniform"},
    {NULL, NULL, NULL},
};

const MethodOps method_localsgd = {
    .name = "localsgd",
    .summary = "Local SGD / FedAvg: local steps, then model averaging by all-reduce",
    .keys = localsgd_keys,
    .create = localsgd_create,
    .round_begin = localsgd_round_begin,
    .on_event = localsgd_on_event,
    .destroy = localsgd_destroy,
};
