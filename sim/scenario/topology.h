/* topology.h — who talks to whom: an undirected graph over the agents in compressed
 * sparse rows, and its Metropolis–Hastings mixing weights
 *   W_ij = 1 / (1 + max(deg_i, deg_j)) for each edge, W_ii = 1 − Σ_j W_ij,
 * which are symmetric and doubly stochastic for any connected graph.
 * Graphs: full; ring; torus (a near-square r x c grid with wrap-around; r·c = n);
 * random-regular (degree d, n·d even; a seeded simple connected draw, near uniform, in
 * one pass: stubs paired one link at a time, switching a link when stuck, complement
 * of a sparse draw when 2d >= n, components joined by switches; see topology.c);
 * exponential (i links to i ± 2^k mod n, the graph of SGP/"exponential graph" papers);
 * FILE.edges (one "i j" pair per line, '#' comments and blank lines; a self-loop, a
 * link listed twice either way round, or a disconnected graph is an error);
 * learned (Le Bars et al.'s STL-FW over the agents' label shares, degree its budget): built
 * by sim/world/topology_learn.h, which needs the data partition, never by
 * topology_build_kind. [topology] weights = FILE.weights replaces the graph and its
 * Metropolis-Hastings weights with a given matrix (topology_weights_load). */
#ifndef SIM_TOPOLOGY_H
#define SIM_TOPOLOGY_H

#include "base/hs_error.h"

#include <stddef.h>
#include <stdint.h>

/* [topology] graph */
typedef enum {
    TOPO_FULL = 0, TOPO_RING, TOPO_TORUS, TOPO_RANDOM_REGULAR, TOPO_EXPONENTIAL, TOPO_LEARNED, TOPO_FILE
} TopologyKind;

/* learned (sim/world/topology_learn.h): a dense n x n matrix and an O(n^3) assignment per
 * Frank-Wolfe step, so at most this many agents */
#define TOPOLOGY_LEARN_MAX_AGENTS 2048

typedef struct Topology {
    int n;
    int *offsets;     /* (n+1) neighbours of i are adj[offsets[i] .. offsets[i+1]) */
    int *adj;         /* (2·edges) sorted within each row */
    double *weights;  /* (2·edges) W_ij aligned with adj */
    double *self_weights; /* (n) W_ii */
} Topology;

/* Builds the graph of kind over n nodes (a scenario's: scenario_topology in
 * sim/scenario/scenario.h). Errors name `file` (the scenario, or the edges file and its
 * line); a disconnected graph is an error. */
int topology_build_kind(TopologyKind kind, int n, int degree, const char *file, uint64_t seed,
                        Topology *out, HsDiag *diag);
void topology_free(Topology *t);
/* Frees the mixing weights (weights and self_weights become NULL), for a user that only
 * walks the graph: a timing run of a gossip method never mixes, and they are 40 bytes an
 * agent at degree 4. The graph (offsets, adj) stays. */
void topology_drop_weights(Topology *t);

/* The graph of the given links (a[k], b[k]) over n nodes, deduplicated, with its
 * Metropolis-Hastings weights; self-loops are dropped, connectivity is not checked (a
 * method that builds its own graph, motor, ensures it). HS_E_NOMEM. */
int topology_from_links(int n, const int *a, const int *b, size_t links, Topology *out);

/* Whether topology_build_kind(kind, n, degree, ...) can build the graph, without building
 * it: for a scenario's resolution, before any method runs. O(1) for generated graphs (no
 * random-regular draw); O(n + lines) for an edges file.
 * Returns HS_OK, or HS_E_INPUT with a message in diag (HS_E_NOMEM, HS_E_INTERNAL for an
 * unknown kind):
 *  - parameters, at scenario_file:scenario_line (line <= 0: scenario_file alone): n >= 1
 *    for every kind; random-regular: 0 <= degree < n, n x degree even, degree >= 2 unless
 *    n <= 2 (degree 1 connects 2 agents, 0 one), n x degree within a topology's int
 *    offsets; ring, torus, exponential: their link count too. degree is read only for
 *    random-regular.
 *  - kind TOPO_FILE: edges_file parsed in full with the builder's own code, so the same
 *    error at EDGES_FILE:LINE (bad line, index out of range, self-loop, a link listed
 *    twice naming the first line) or at EDGES_FILE (cannot open, no links, disconnected).
 * check passes <=> build succeeds, for any (kind, n, degree), memory permitting, with
 * one exception: full over more than 46,341 agents, whose n(n-1)/2 links overflow the
 * CSR's int offsets; the builder says so, but check accepts it because full is the
 * default graph and the methods that never build a topology run any number of agents.
 * (random-regular draws never fail: its generator builds every (n, degree) above, for
 * any seed, without retries; tests/check_topology.c builds every one for n <= 60.) */
int topology_check(TopologyKind kind, int n, int degree, const char *edges_file, const char *scenario_file,
                   int scenario_line, HsDiag *diag);

static inline int topology_degree(const Topology *t, int i)
{
    return t->offsets[i + 1] - t->offsets[i];
}

/* [topology] weights = FILE.weights (topology_weights.c): the dense n x n matrix W, one
 * row per line, entries separated by blanks or commas (numpy.savetxt's format), into out,
 * whose graph is W's support. HS_E_INPUT at PATH:LINE for a row without n numbers, an
 * entry outside [0, 1], a row that does not sum to 1 within 1e-9, W_ij != W_ji (beyond
 * 1e-9, or one zero and the other not), too many rows; at PATH for too few rows or a
 * disconnected support; HS_E_NOMEM. Free out with topology_free. */
int topology_weights_load(const char *path, int n, Topology *out, HsDiag *diag);

/* 1 if every agent reaches every other. */
int topology_connected(const Topology *t);

#endif
