/* greedy.c — the published ComDML scheduler (METHODS.md): agents sorted by standalone
 * time, slowest first; each still-unpaired agent takes the available (unpaired, not
 * itself) partner and split with the smallest T_i(j,m) when that is below tau_i; a pair
 * leaves the pool. An agent that stays alone stays in the pool, though only a slower
 * agent could have used it and those have all been served.
 *
 * Ties, all to the lowest index: agents of equal tau go in index order; among partners
 * of equal best time the lower index; among splits of equal time the lower split. The
 * authors' code iterates in index order with a strict "<", which gives the same rule.
 *
 * Only useful edges (T < tau_i) are scanned; that is exactly the "smaller than staying
 * alone" test. Each agent's edges are sorted by (time, partner), so the first one whose
 * partner is free is the choice. O(E log E) for the sort, O(E) for the scan.
 * Not optimal in general: an early slow agent can take the helper a later one needed. */
#include "solver/edges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct GreedyAgent {
    double tau;
    int agent;
} GreedyAgent;

static int greedy_slowest_first(const void *a, const void *b)
{
    const GreedyAgent *x = a, *y = b;
    if (x->tau != y->tau) return x->tau > y->tau ? -1 : 1;
    return (x->agent > y->agent) - (x->agent < y->agent);
}

int solver_greedy(const PairingProblem *p, PairingResult *out)
{
    int n = p->n, status = HS_E_NOMEM;
    PairingEdge *edges = NULL, *pairs = NULL;
    size_t n_edges = 0, n_pairs = 0, *first = NULL;
    GreedyAgent *order = NULL;
    char *taken = NULL;
    if (pairing_useful_edges(p, &edges, &n_edges, &first) != HS_OK) goto fail;
    order = malloc(((size_t)n + 1) * sizeof *order);
    taken = calloc((size_t)n + 1, 1);
    pairs = malloc(((size_t)n + 1) * sizeof *pairs);
    if (!order || !taken || !pairs) goto fail;
    for (int i = 0; i < n; i++)
        order[i] = (GreedyAgent){.tau = pairing_standalone(p, i), .agent = i};
    qsort(order, (size_t)n, sizeof *order, greedy_slowest_first);
    for (int k = 0; k < n; k++) {
        int i = order[k].agent;
        if (taken[i]) continue;
        for (size_t e = first[i]; e < first[i + 1]; e++)
            if (!taken[edges[e].fast]) {
                taken[i] = taken[edges[e].fast] = 1;
                pairs[n_pairs++] = edges[e];
                break;
            }
    }
    pairing_result_from_edges(p, pairs, n_pairs, out);
    snprintf(out->solver, sizeof out->solver, "greedy");
    status = HS_OK;
fail:
    free(edges);
    free(first);
    free(order);
    free(taken);
    free(pairs);
    return status;
}
