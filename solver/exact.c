/* exact.c — the minimum-makespan pairing, exactly, in polynomial time.
 * For a candidate makespan T, the agents with tau_i > T must offload, each to a distinct
 * agent over an edge with T_i(j, best m) <= T. Such a helper j has tau_j < T_i(j,m) <= T,
 * so it is never itself required to offload; every other agent can stay alone within T.
 * Offloading by an agent with tau_i <= T is never needed, and helping only constrains
 * the helper's pair, whose time is the edge's time. So T is feasible iff the bipartite
 * graph (required offloaders) x (agents) with edges of time <= T has a matching that
 * covers every required offloader — Hopcroft–Karp decides it in O(E sqrt(V)).
 * Feasibility is monotone in T, and the optimum is one of the finitely many candidate
 * times {tau_i} ∪ {edge times}: binary search over them, sorted once.
 * Cost: O(n^2 M) to build the edges of a dense instance, then O(log E) matchings. */
#include "solver/pairing.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

typedef struct Matcher {
    const PairingProblem *p;
    const PairingEdge *edges;
    const size_t *first;  /* (n + 1) edges of slow i: first[i] .. first[i+1] */
    int *left;            /* required offloaders */
    int n_left;
    int *match_left;      /* (n) by slow agent: its edge index, or -1 */
    int *match_right;     /* (n) by fast agent: the slow agent, or -1 */
    int *dist;            /* (n) BFS layer of each slow agent */
    int *queue;           /* (n) */
    size_t *iter;         /* (n) DFS position per slow agent */
    double limit;         /* edges of time <= limit only */
} Matcher;

static int matcher_bfs(Matcher *m)
{
    int head = 0, tail = 0, found = 0;
    for (int k = 0; k < m->n_left; k++) {
        int i = m->left[k];
        if (m->match_left[i] < 0) {
            m->dist[i] = 0;
            m->queue[tail++] = i;
        } else {
            m->dist[i] = -1;
        }
    }
    while (head < tail) {
        int i = m->queue[head++];
        for (size_t e = m->first[i]; e < m->first[i + 1]; e++) {
            if (m->edges[e].time > m->limit) continue;
            int j = m->edges[e].fast, owner = m->match_right[j];
            if (owner < 0) found = 1;
            else if (m->dist[owner] < 0) {
                m->dist[owner] = m->dist[i] + 1;
                m->queue[tail++] = owner;
            }
        }
    }
    return found;
}

static int matcher_dfs(Matcher *m, int i)
{
    for (; m->iter[i] < m->first[i + 1]; m->iter[i]++) {
        size_t e = m->iter[i];
        if (m->edges[e].time > m->limit) continue;
        int j = m->edges[e].fast, owner = m->match_right[j];
        if (owner < 0 || (m->dist[owner] == m->dist[i] + 1 && matcher_dfs(m, owner))) {
            m->match_left[i] = (int)e;
            m->match_right[j] = i;
            m->iter[i]++;
            return 1;
        }
    }
    m->dist[i] = -1;
    return 0;
}

/* 1 if every agent with tau > limit can be matched over edges of time <= limit. */
static int matcher_feasible(Matcher *m, double limit)
{
    const PairingProblem *p = m->p;
    m->limit = limit;
    m->n_left = 0;
    for (int i = 0; i < p->n; i++) {
        m->match_left[i] = -1;
        m->match_right[i] = -1;
        if (pairing_standalone(p, i) > limit) {
            if (m->first[i] == m->first[i + 1]) return 0; /* nobody can take its work */
            m->left[m->n_left++] = i;
        }
    }
    int matched = 0;
    while (matcher_bfs(m)) {
        for (int k = 0; k < m->n_left; k++) m->iter[m->left[k]] = m->first[m->left[k]];
        for (int k = 0; k < m->n_left; k++)
            if (m->match_left[m->left[k]] < 0 && matcher_dfs(m, m->left[k])) matched++;
    }
    return matched == m->n_left;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int solver_exact(const PairingProblem *p, PairingResult *out)
{
    int n = p->n, status = HS_E_NOMEM;
    PairingEdge *edges = NULL;
    size_t n_edges = 0;
    if (pairing_useful_edges(p, &edges, &n_edges) != HS_OK) return HS_E_NOMEM;
    Matcher m = {.p = p, .edges = edges};
    size_t *first = calloc((size_t)n + 1, sizeof *first);
    double *candidates = malloc((n_edges + (size_t)n) * sizeof *candidates);
    PairingEdge *pairs = malloc(((size_t)n + 1) * sizeof *pairs);
    m.left = malloc((size_t)n * sizeof *m.left);
    m.match_left = malloc((size_t)n * sizeof *m.match_left);
    m.match_right = malloc((size_t)n * sizeof *m.match_right);
    m.dist = malloc((size_t)n * sizeof *m.dist);
    m.queue = malloc((size_t)n * sizeof *m.queue);
    m.iter = malloc((size_t)n * sizeof *m.iter);
    if (!first || !candidates || !pairs || !m.left || !m.match_left || !m.match_right || !m.dist || !m.queue || !m.iter)
        goto done;
    for (size_t e = 0; e < n_edges; e++) first[edges[e].slow + 1]++;
    for (int i = 0; i < n; i++) first[i + 1] += first[i];
    m.first = first;

    /* Lower bound: each agent's own best time. Candidates below it cannot be feasible. */
    double lower = 0, upper = 0;
    for (int i = 0; i < n; i++) {
        double best = pairing_standalone(p, i);
        for (size_t e = first[i]; e < first[i + 1]; e++)
            if (edges[e].time < best) best = edges[e].time;
        if (best > lower) lower = best;
        if (pairing_standalone(p, i) > upper) upper = pairing_standalone(p, i);
    }
    size_t n_candidates = 0;
    for (int i = 0; i < n; i++) {
        double t = pairing_standalone(p, i);
        if (t >= lower && t <= upper) candidates[n_candidates++] = t;
    }
    for (size_t e = 0; e < n_edges; e++)
        if (edges[e].time >= lower && edges[e].time <= upper) candidates[n_candidates++] = edges[e].time;
    qsort(candidates, n_candidates, sizeof *candidates, compare_double);
    /* all alone (T = upper) is always feasible: search the smallest feasible candidate */
    size_t lo = 0, hi = n_candidates - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (matcher_feasible(&m, candidates[mid])) hi = mid;
        else lo = mid + 1;
    }
    matcher_feasible(&m, candidates[lo]);
    size_t n_pairs = 0;
    for (int k = 0; k < m.n_left; k++) pairs[n_pairs++] = edges[m.match_left[m.left[k]]];
    pairing_result_from_edges(p, pairs, n_pairs, out);
    snprintf(out->solver, sizeof out->solver, "exact");
    status = HS_OK;
done:
    free(edges);
    free(first);
    free(candidates);
    free(pairs);
    free(m.left);
    free(m.match_left);
    free(m.match_right);
    free(m.dist);
    free(m.queue);
    free(m.iter);
    return status;
}
