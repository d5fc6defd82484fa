/* cli_preflight.c — what `run` and `sweep` read before they open the database, so that
 * no input problem leaves a database behind (issue 28, class 5). Resolution already
 * reads every trace, edges and assignment file and looks at the dataset's files
 * (sim/scenario_inputs.c); this reads what it only looked at: a train-mode run's dataset
 * files, whole, as the trainer will (dataset_check), once per folder — Fashion-MNIST
 * takes a fraction of a second, a cost paid once per command. `run` also draws the
 * agents here (world_build), which `sweep` does for every point in sweep_resolve. */
#include "cli/cli.h"

#include "base/grow.h"
#include "models/dataset.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

#include <stdlib.h>
#include <string.h>

int cli_preflight(CliPreflight *seen, const Scenario *sc, HsDiag *diag)
{
    if (sc->mode != RUN_MODE_TRAIN || sc->data.dataset == DATA_SYNTHETIC) return HS_OK;
    for (int i = 0; i < seen->n; i++)
        if (strcmp(seen->folders[i], sc->data.path) == 0) return HS_OK;
    HsDiag inner;
    hs_diag_clear(&inner);
    int status = dataset_check(&sc->data, &inner);
    if (status != HS_OK) {
        /* a corrupt file is bad input like a malformed one; a missing package or memory is not */
        if (status != HS_E_MISSING && status != HS_E_NOMEM) status = HS_E_INPUT;
        return hs_diag_set(diag, status, sc->data_where, 0, "%s", inner.message);
    }
    if (hs_grow((void **)&seen->folders, &seen->capacity, seen->n, sizeof *seen->folders, 4) != HS_OK)
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    snprintf(seen->folders[seen->n++], sizeof seen->folders[0], "%s", sc->data.path);
    return HS_OK;
}

int cli_preflight_run(const Scenario *sc, HsDiag *diag)
{
    World world;
    int status = world_build(sc, &world, diag);
    if (status != HS_OK) return status;
    world_free(&world);
    CliPreflight seen = {0};
    status = cli_preflight(&seen, sc, diag);
    cli_preflight_free(&seen);
    return status;
}

void cli_preflight_free(CliPreflight *seen)
{
    free(seen->folders);
    memset(seen, 0, sizeof *seen);
}
