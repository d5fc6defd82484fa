/* greedy.c — the published ComDML scheduler: agents sorted by standalone time, slowest
 * first; each still-unpaired agent takes the available partner and split with the
 * smallest T_i(j,m) when that beats staying alone; a pair leaves the pool.
 * Ties: the lower partner index, then the lower split (edges are enumerated in that
 * order and only a strictly smaller time replaces the best). Not optimal in general:
 * an early slow agent can take the helper a later one needed more. O(E + n log n). */
#include "solver/pairing.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

typedef struct GreedyAgent {
    double tau;
    int agent;
} GreedyAgent;

static int greedy_slowest_first(const void *a, const void *b)
{
    const GreedyAgent *x = a, *y = b;
    if (x->tau != y->tau) return x->tau > y->tau ? -1 : 1;
    return x->agent - y->agent;
}

int solver_greedy(const PairingProblem *p, PairingResult *out)
{
    int n = p->n;
    PairingEdge *edges = NULL, *pairs = NULL;
    size_t n_edges = 0, n_pairs = 0, *first = NULL;
    GreedyAgent *order = NULL;
    int status = HS_E_NOMEM;
    char *taken = NULL;
    if (pairing_useful_edges(p, &edges, &n_edges) != HS_OK) return HS_E_NOMEM;
    first = calloc((size_t)n + 1, sizeof *first);
    order = malloc((size_t)n * sizeof *order);
    taken = calloc((size_t)n, 1);
    pairs = malloc(((size_t)n + 1) * sizeof *pairs);
    if (!first || !order || !taken || !pairs) goto done;
    for (size_t e = 0; e < n_edges; e++) first[edges[e].slow + 1]++;
    for (int i = 0; i < n; i++) first[i + 1] += first[i];
    for (int i = 0; i < n; i++) order[i] = (GreedyAgent){.tau = pairing_standalone(p, i), .agent = i};
    qsort(order, (size_t)n, sizeof *order, greedy_slowest_first);
    for (int k = 0; k < n; k++) {
        int i = order[k].agent;
        if (taken[i]) continue;
        const PairingEdge *best = NULL;
        for (size_t e = first[i]; e < first[i + 1]; e++)
            if (!taken[edges[e].fast] && (best == NULL || edges[e].time < best->time)) best = &edges[e];
        if (best == NULL) continue; /* stays alone: nobody available beats tau_i */
        taken[i] = taken[best->fast] = 1;
        pairs[n_pairs++] = *best;
    }
    pairing_result_from_edges(p, pairs, n_pairs, out);
    snprintf(out->solver, sizeof out->solver, "greedy");
    status = HS_OK;
done:
    free(edges);
    free(first);
    free(order);
    free(taken);
    free(pairs);
    return status;
}
