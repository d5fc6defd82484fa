/* sweep_resolve.c — the up-front check of a sweep: sim/scenario/sweep.c expands and
 * resolves every run; here each run's agents are drawn too (world_build), since a draw
 * the run cannot use is bad input to be found before anything runs. The expansion sits
 * on a floor below the world, hence the check is given to it from here. */
#include "driver/sweep.h"

#include "sim/world/world.h"

/* SweepRunCheck: draws the agents and drops them. */
int sweep_check_agents(const Scenario *sc, HsDiag *diag)
{
    World world;
    int status = world_build(sc, &world, diag);
    if (status == HS_OK) world_free(&world);
    return status;
}

int sweep_resolve(Sweep *sw, HsDiag *diag)
{
    return sweep_expand(sw, sweep_check_agents, diag);
}

int sweep_check(const IniDoc *doc, int64_t *n_runs, HsDiag *diag)
{
    Sweep sw;
    int status = sweep_parse(doc, &sw, diag);
    if (status != HS_OK) return status;
    status = sweep_resolve(&sw, diag);
    *n_runs = sw.n_runs;
    sweep_free(&sw);
    return status;
}
