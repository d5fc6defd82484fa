/* topology.h — who talks to whom: an undirected graph over the agents in compressed
 * sparse rows, and its Metropolis–Hastings mixing weights
 *   W_ij = 1 / (1 + max(deg_i, deg_j)) for each edge, W_ii = 1 − Σ_j W_ij,
 * which are symmetric and doubly stochastic for any connected graph.
 * Graphs: full; ring; torus (a near-square r x c grid with wrap-around; r·c = n);
 * random-regular (degree d, n·d even; a seeded configuration-model draw retried until
 * simple and connected); exponential (i links to i ± 2^k mod n, the graph of SGP/
 * "exponential graph" papers); FILE.edges (one "i j" pair per line, '#' comments). */
#ifndef SIM_TOPOLOGY_H
#define SIM_TOPOLOGY_H

#include "sim/hs_error.h"
#include "sim/scenario.h"

#include <stdint.h>

typedef struct Topology {
    int n;
    int *offsets;     /* (n+1) neighbours of i are adj[offsets[i] .. offsets[i+1]) */
    int *adj;         /* (2·edges) sorted within each row */
    double *weights;  /* (2·edges) W_ij aligned with adj */
    double *self_weights; /* (n) W_ii */
} Topology;

/* Builds the scenario's graph over n agents. Errors name the scenario's [topology]
 * (or the edges file and line); a disconnected graph is an error. */
int topology_build(const Scenario *sc, int n, Topology *out, HsDiag *diag);
/* Same from explicit parameters (tests). */
int topology_build_kind(TopologyKind kind, int n, int degree, const char *file, uint64_t seed,
                        Topology *out, HsDiag *diag);
void topology_free(Topology *t);

static inline int topology_degree(const Topology *t, int i)
{
    return t->offsets[i + 1] - t->offsets[i];
}

/* 1 if every agent reaches every other. */
int topology_connected(const Topology *t);

#endif
