/* exact.c — the minimum-makespan pairing, exactly, in polynomial time.
 *
 * Feasibility of a makespan T. Call agent i "required" when tau_i > T. Claim: a pairing
 * with makespan <= T exists iff the bipartite graph
 *     left  = required agents,  right = agents with tau_j <= T,
 *     edges = (i, j) with min_m T_i(j,m) <= T
 * has a matching that covers every left vertex.
 *  (only if) In a pairing of makespan <= T a required agent i cannot be alone (tau_i > T)
 *   and cannot be a helper: a helper's time is T_k(i,m) >= tau_i + n_k ff[m]/s_i >= tau_i
 *   > T. So i offloads to some j at some m with T_i(j,m) <= T; then min_m T_i(j,m) <= T,
 *   and tau_j <= T_i(j,m) <= T, so j is on the right. Pairs are disjoint, so these edges
 *   form a matching covering the left side.
 *  (if) Take the matching; pair each required i with its matched j at i's best split for
 *   that link (time <= T for both members); every other agent stays alone with tau <= T
 *   (it is not required). Right vertices are never left vertices, so no agent is in two
 *   pairs. Makespan <= T.
 * So agents with tau <= T never need to offload (alone already meets T), and helpers are
 * only constrained through their pair's time — the reduction loses nothing.
 *
 * Candidates. The optimum is the time of some agent in an optimal pairing: a tau_i, or a
 * pair's time. A pair may be moved to its best split without raising anything, and a pair
 * whose best time is not below tau_i (slow side) may be dissolved (both alone: tau_i and
 * tau_j <= T_i(j,m)), so the optimum lies in {tau_i} ∪ {useful edge times} (edges.h).
 * Feasibility is monotone in T (edges and right side only grow, left only shrinks), so a
 * binary search over the sorted distinct candidates finds the smallest feasible one.
 * Candidates below max_i min(tau_i, best edge of i) — every agent's own best — or above
 * max tau_i (all alone is always feasible) are skipped.
 *
 * Matching: Hopcroft–Karp, O(E sqrt V) per test; each slow agent's edges are sorted by
 * time, so a test at T scans only the edges of time <= T. In all: O(sum deg * M) to
 * build the edges, O(E log E) to sort, O(E sqrt V log E) to search. */
#include "solver/edges.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Matcher {
    int n;
    const PairingEdge *edges; /* sorted by (slow, time, fast) */
    const size_t *first;      /* (n + 1) edges of slow i: first[i] .. first[i+1]-1 */
    const double *tau;        /* (n) */
    int *left;                /* required agents of the current test */
    int n_left;
    size_t *match_left; /* (n) by slow agent: its matched edge, or SIZE_MAX */
    int *match_right;   /* (n) by fast agent: the slow agent, or -1 */
    int *dist;          /* (n) BFS layer of each slow agent, -1 unreached */
    int *queue;         /* (n) */
    size_t *iter;       /* (n) DFS position per slow agent */
    double limit;       /* only edges of time <= limit */
} Matcher;

#define MATCH_NONE ((size_t)-1)

/* Layers the alternating graph from the free left vertices; 1 if a free right vertex is
 * reachable (an augmenting path exists). */
static int matcher_bfs(Matcher *m)
{
    int head = 0, tail = 0, found = 0;
    for (int k = 0; k < m->n_left; k++) {
        int i = m->left[k];
        if (m->match_left[i] == MATCH_NONE) {
            m->dist[i] = 0;
            m->queue[tail++] = i;
        } else {
            m->dist[i] = -1;
        }
    }
    while (head < tail) {
        int i = m->queue[head++];
        for (size_t e = m->first[i]; e < m->first[i + 1] && m->edges[e].time <= m->limit; e++) {
            int owner = m->match_right[m->edges[e].fast];
            if (owner < 0) {
                found = 1;
            } else if (m->dist[owner] < 0) {
                m->dist[owner] = m->dist[i] + 1;
                m->queue[tail++] = owner;
            }
        }
    }
    return found;
}

/* Augments along the layers from slow agent i. Recursion depth is at most the path
 * length, which is bounded by the number of required agents. */
static int matcher_dfs(Matcher *m, int i)
{
    for (; m->iter[i] < m->first[i + 1] && m->edges[m->iter[i]].time <= m->limit; m->iter[i]++) {
        size_t e = m->iter[i];
        int j = m->edges[e].fast, owner = m->match_right[j];
        if (owner < 0 || (m->dist[owner] == m->dist[i] + 1 && matcher_dfs(m, owner))) {
            m->match_left[i] = e;
            m->match_right[j] = i;
            m->iter[i]++;
            return 1;
        }
    }
    m->dist[i] = -1; /* dead end for the rest of this phase */
    return 0;
}

/* 1 if every agent with tau > limit can be matched over edges of time <= limit. */
static int matcher_feasible(Matcher *m, double limit)
{
    m->limit = limit;
    m->n_left = 0;
    for (int i = 0; i < m->n; i++) {
        m->match_left[i] = MATCH_NONE;
        m->match_right[i] = -1;
        if (m->tau[i] > limit) {
            /* edges are sorted: the first one is the agent's best */
            if (m->first[i] == m->first[i + 1] || m->edges[m->first[i]].time > limit) return 0;
            m->left[m->n_left++] = i;
        }
    }
    int matched = 0;
    while (matched < m->n_left && matcher_bfs(m)) {
        for (int k = 0; k < m->n_left; k++)
            m->iter[m->left[k]] = m->first[m->left[k]];
        for (int k = 0; k < m->n_left; k++)
            if (m->match_left[m->left[k]] == MATCH_NONE && matcher_dfs(m, m->left[k])) matched++;
    }
    return matched == m->n_left;
}

static int exact_compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int solver_exact(const PairingProblem *p, PairingResult *out)
{
    int n = p->n, status = HS_E_NOMEM;
    PairingEdge *edges = NULL, *pairs = NULL;
    size_t n_edges = 0, *first = NULL;
    double *candidates = NULL, *tau = NULL;
    Matcher m = {.n = n};
    if (pairing_useful_edges(p, &edges, &n_edges, &first) != HS_OK) goto fail;
    candidates = malloc((n_edges + (size_t)n + 1) * sizeof *candidates);
    tau = malloc(((size_t)n + 1) * sizeof *tau);
    pairs = malloc(((size_t)n + 1) * sizeof *pairs);
    m.left = malloc(((size_t)n + 1) * sizeof *m.left);
    m.match_left = malloc(((size_t)n + 1) * sizeof *m.match_left);
    m.match_right = malloc(((size_t)n + 1) * sizeof *m.match_right);
    m.dist = malloc(((size_t)n + 1) * sizeof *m.dist);
    m.queue = malloc(((size_t)n + 1) * sizeof *m.queue);
    m.iter = malloc(((size_t)n + 1) * sizeof *m.iter);
    if (!candidates || !tau || !pairs || !m.left || !m.match_left || !m.match_right || !m.dist || !m.queue || !m.iter)
        goto fail;
    m.edges = edges;
    m.first = first;
    m.tau = tau;

    double lower = 0, upper = 0;
    for (int i = 0; i < n; i++) {
        tau[i] = pairing_standalone(p, i);
        double best = first[i] < first[i + 1] ? fmin(tau[i], edges[first[i]].time) : tau[i];
        lower = fmax(lower, best);
        upper = fmax(upper, tau[i]);
    }
    size_t n_candidates = 0;
    candidates[n_candidates++] = upper; /* always feasible: everyone alone */
    for (int i = 0; i < n; i++)
        if (tau[i] >= lower && tau[i] < upper) candidates[n_candidates++] = tau[i];
    for (size_t e = 0; e < n_edges; e++)
        if (edges[e].time >= lower && edges[e].time < upper) candidates[n_candidates++] = edges[e].time;
    qsort(candidates, n_candidates, sizeof *candidates, exact_compare_double);
    size_t distinct = 0;
    for (size_t k = 0; k < n_candidates; k++)
        if (distinct == 0 || candidates[k] != candidates[distinct - 1]) candidates[distinct++] = candidates[k];

    size_t lo = 0, hi = distinct - 1; /* candidates[hi] is feasible throughout */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (matcher_feasible(&m, candidates[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    if (!matcher_feasible(&m, candidates[lo])) {
        status = HS_E_INTERNAL; /* monotonicity says this cannot happen */
        goto fail;
    }
    size_t n_pairs = 0;
    for (int k = 0; k < m.n_left; k++)
        pairs[n_pairs++] = edges[m.match_left[m.left[k]]];
    pairing_result_from_edges(p, pairs, n_pairs, out);
    snprintf(out->solver, sizeof out->solver, "exact");
    status = HS_OK;
fail:
    free(edges);
    free(first);
    free(candidates);
    free(tau);
    free(pairs);
    free(m.left);
    free(m.match_left);
    free(m.match_right);
    free(m.dist);
    free(m.queue);
    free(m.iter);
    return status;
}
