/* edges.h — internal to solver/: the useful offload edges that exact and greedy share.
 * An edge i -> j is "useful" when some split gives T_i(j,m) < tau_i: only such an
 * offload can lower agent i's time, and one that does not can be undone (both alone)
 * without raising the makespan. Each edge carries i's best split for that link. */
#ifndef SOLVER_EDGES_H
#define SOLVER_EDGES_H

#include "solver/pairing.h"

typedef struct PairingEdge {
    int slow, fast, split;
    double time;
} PairingEdge;

/* All useful edges, grouped by slow agent in increasing order, and within each group by
 * (time, fast) increasing. first[i] .. first[i+1]-1 are the edges of slow agent i. The
 * caller frees *edges and *first. O(sum of degrees * M + E log E). */
int pairing_useful_edges(const PairingProblem *p, PairingEdge **edges, size_t *count, size_t **first);

/* Fills out with the given pairs and everyone else alone; recomputes the makespan. */
void pairing_result_from_edges(const PairingProblem *p, const PairingEdge *pairs, size_t n_pairs, PairingResult *out);

#endif
