/* world_topology.c — which W a mixing method runs with (world_topology.h). The learned W
 * needs the partition, so its label shares replay the trainer's data stream
 * (sim/train/trainer.c: the data set and the partition drawn from one stream (seed, 0,
 * RNG_PURPOSE_DATA), in that order); tests/check_topology_learn.c holds the two equal. */
#include "sim/world/world_topology.h"

#include "models/partition.h"
#include "sim/kernel/rng.h"
#include "sim/world/topology_learn.h"

#include <stdlib.h>

int world_label_shares(const Scenario *sc, const World *world, double **shares, int *classes, HsDiag *diag)
{
    *shares = NULL;
    *classes = 0;
    int n = world->n, status;
    Dataset *data = NULL;
    Partition *partition = NULL;
    int *samples = malloc((size_t)n * sizeof *samples);
    gsl_rng *rng = rng_stream_create(sc->seed, 0, RNG_PURPOSE_DATA);
    if (samples == NULL || rng == NULL) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    HsDiag inner;
    hs_diag_clear(&inner);
    if ((status = dataset_load(&sc->data, rng, &data, &inner)) != HS_OK) {
        hs_diag_set(diag, status, NULL, 0, "%s%s%s", status == HS_E_INPUT ? sc->data_where : "",
                    status == HS_E_INPUT && sc->data_where[0] ? ": " : "", inner.message);
        goto done;
    }
    for (int i = 0; i < n; i++) samples[i] = world->agents[i].samples;
    if ((status = partition_make(data, &sc->data, n, samples, rng, &partition, diag)) != HS_OK) goto done;
    int K = data->classes;
    double *share = calloc((size_t)n * K, sizeof *share);
    if (share == NULL) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        int count;
        const int *rows = partition_indices(partition, i, &count);
        for (int r = 0; r < count; r++) share[(size_t)i * K + data->train_y[rows[r]]] += 1;
        for (int k = 0; k < K && count > 0; k++) share[(size_t)i * K + k] /= count;
    }
    *shares = share;
    *classes = K;
done:
    partition_free(partition);
    dataset_free(data);
    if (rng) gsl_rng_free(rng);
    free(samples);
    return status;
}

int world_topology(const Scenario *sc, const World *world, Topology *out, HsDiag *diag)
{
    if (sc->topology_weights_file[0]) return topology_weights_load(sc->topology_weights_file, world->n, out, diag);
    if (sc->topology != TOPO_LEARNED) return scenario_topology(sc, world->n, out, diag);
    double *shares;
    int classes;
    int status = world_label_shares(sc, world, &shares, &classes, diag);
    if (status != HS_OK) return status;
    status = topology_learn(shares, world->n, classes, sc->fw_lambda, sc->degree, sc->fw_iterations, out, NULL, NULL);
    free(shares);
    return status == HS_OK ? HS_OK : hs_diag_set(diag, status, NULL, 0, "out of memory learning the topology");
}
