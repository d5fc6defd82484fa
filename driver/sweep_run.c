/* sweep_run.c — running one run of a sweep in a producer (sweep.h): SweepRunner keeps
 * the resolved scenario of the point it ran last, so that the next run of the same point
 * (the same scenario but for run.seed, which [sweep] repeat adds) does not resolve it
 * again. A Scenario is a flat 250 KB struct: resolving one zeroes it and re-reads the
 * whole document, which cost a short timing run about a fifth of its engine time; the
 * seed is the only field that differs between the repeats of a point (sweep_scenario).
 * The producers run a point's repeats one after the other (local workers and MPI ranks
 * are handed consecutive indices), so nearly every run but a point's first reuses it. */
#include "driver/sweep.h"

#include "driver/origin.h"
#include "sim/run.h"

#include <stdint.h>
#include <stdlib.h>

void sweep_runner_init(SweepRunner *r, const Sweep *sw)
{
    r->sweep = sw;
    r->point = -1;
    r->repeat = 0;
    r->sc = NULL;
}

void sweep_runner_free(SweepRunner *r)
{
    if (r == NULL) return;
    free(r->sc);
    r->sc = NULL;
    r->point = -1;
}

/* The scenario of run index in r->sc: the cached point's with its seed moved to this
 * repeat's, or resolved anew (sweep_scenario, which also says what is wrong). */
static int sweep_runner_scenario(SweepRunner *r, int64_t index, HsDiag *diag)
{
    const Sweep *sw = r->sweep;
    if (index < 0 || index >= sw->n_runs)
        return hs_diag_set(diag, HS_E_INTERNAL, NULL, 0, "sweep run %lld out of range", (long long)index);
    int64_t point = index / sw->repeat;
    int repeat = (int)(index % sw->repeat);
    if (r->sc != NULL && r->point == point) {
        uint64_t base = r->sc->seed - (uint64_t)r->repeat;
        /* sweep_scenario's own check (seed + repeat < 2^63), else it says why */
        if (base <= (uint64_t)INT64_MAX - (uint64_t)repeat) {
            r->sc->seed = base + (uint64_t)repeat;
            r->repeat = repeat;
            return HS_OK;
        }
    }
    if (r->sc == NULL && (r->sc = malloc(sizeof *r->sc)) == NULL)
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    r->point = -1;
    int status = sweep_scenario(sw, index, r->sc, diag);
    if (status != HS_OK) return status;
    if (r->sc->threads == 0) r->sc->threads = sw->threads_default;
    r->point = point;
    r->repeat = repeat;
    return HS_OK;
}

int sweep_runner_run(SweepRunner *r, int64_t index, Sink sink, HsDiag *diag)
{
    int status = sweep_runner_scenario(r, index, diag);
    if (status != HS_OK) return status;
    RunOutcome outcome;
    OriginSink origin;
    return sim_run(r->sc, origin_sink(&origin, sink, r->sweep->origin), diag, &outcome);
}

int sweep_run_one(const Sweep *sw, int64_t index, Sink sink, HsDiag *diag)
{
    SweepRunner r;
    sweep_runner_init(&r, sw);
    int status = sweep_runner_run(&r, index, sink, diag);
    sweep_runner_free(&r);
    return status;
}
