/* pairing.c — the cost table and what every solver shares. */
#include "solver/pairing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pairing_problem_init(PairingProblem *p, int n, int n_splits)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->n_splits = n_splits;
    p->batches = calloc((size_t)n, sizeof *p->batches);
    p->speed = calloc((size_t)n, sizeof *p->speed);
    p->fs = calloc((size_t)n_splits, sizeof *p->fs);
    p->ff = calloc((size_t)n_splits, sizeof *p->ff);
    p->act = calloc((size_t)n_splits, sizeof *p->act);
    p->bandwidth = calloc((size_t)n * (size_t)n, sizeof *p->bandwidth);
    if (!p->batches || !p->speed || !p->fs || !p->ff || !p->act || !p->bandwidth) {
        pairing_problem_free(p);
        return HS_E_NOMEM;
    }
    return HS_OK;
}

int pairing_problem_init_sparse(PairingProblem *p, int n, int n_splits, size_t n_links)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->n_splits = n_splits;
    p->batches = calloc((size_t)n, sizeof *p->batches);
    p->speed = calloc((size_t)n, sizeof *p->speed);
    p->fs = calloc((size_t)n_splits, sizeof *p->fs);
    p->ff = calloc((size_t)n_splits, sizeof *p->ff);
    p->act = calloc((size_t)n_splits, sizeof *p->act);
    p->link_offsets = calloc((size_t)n + 1, sizeof *p->link_offsets);
    p->link_to = calloc(n_links + 1, sizeof *p->link_to);
    p->link_bandwidth = calloc(n_links + 1, sizeof *p->link_bandwidth);
    if (!p->batches || !p->speed || !p->fs || !p->ff || !p->act || !p->link_offsets || !p->link_to ||
        !p->link_bandwidth) {
        pairing_problem_free(p);
        return HS_E_NOMEM;
    }
    return HS_OK;
}

void pairing_problem_free(PairingProblem *p)
{
    if (p == NULL) return;
    free(p->batches);
    free(p->speed);
    free(p->fs);
    free(p->ff);
    free(p->act);
    free(p->bandwidth);
    free(p->link_offsets);
    free(p->link_to);
    free(p->link_bandwidth);
    memset(p, 0, sizeof *p);
}

int pairing_result_init(PairingResult *r, int n)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->partner = malloc((size_t)n * sizeof *r->partner);
    r->split = malloc((size_t)n * sizeof *r->split);
    r->role = malloc((size_t)n * sizeof *r->role);
    r->time = malloc((size_t)n * sizeof *r->time);
    if (!r->partner || !r->split || !r->role || !r->time) {
        pairing_result_free(r);
        return HS_E_NOMEM;
    }
    return HS_OK;
}

void pairing_result_free(PairingResult *r)
{
    if (r == NULL) return;
    free(r->partner);
    free(r->split);
    free(r->role);
    free(r->time);
    memset(r, 0, sizeof *r);
}

double pairing_standalone(const PairingProblem *p, int i)
{
    return p->batches[i] / p->speed[i];
}

double pairing_time_with(const PairingProblem *p, int i, int j, int m, double b)
{
    if (m <= 0 || i == j || !(b > 0)) return INFINITY;
    double n = p->batches[i];
    double slow = n * p->fs[m] / p->speed[i];
    double fast = pairing_standalone(p, j) + n * p->ff[m] / p->speed[j];
    double comm = p->act[m] > 0 ? n * p->act[m] / b : 0;
    double t = slow > fast ? slow : fast;
    return t > comm ? t : comm;
}

double pairing_time(const PairingProblem *p, int i, int j, int m)
{
    return pairing_time_with(p, i, j, m, p->bandwidth ? p->bandwidth[(size_t)i * p->n + j] : 0);
}

/* Calls back for every link i -> j (j != i, bandwidth > 0) in increasing j. */
static double pairing_best_split(const PairingProblem *p, int i, int j, double b, int *split)
{
    double best = INFINITY;
    *split = 0;
    for (int m = 1; m < p->n_splits; m++) {
        double t = pairing_time_with(p, i, j, m, b);
        if (t < best) {
            best = t;
            *split = m;
        }
    }
    return best;
}

int pairing_useful_edges(const PairingProblem *p, PairingEdge **edges, size_t *count)
{
    size_t cap = 1024, n_edges = 0;
    PairingEdge *list = malloc(cap * sizeof *list);
    if (list == NULL) return HS_E_NOMEM;
    for (int i = 0; i < p->n; i++) {
        double tau_i = pairing_standalone(p, i);
        int first = p->bandwidth ? 0 : p->link_offsets[i];
        int last = p->bandwidth ? p->n : p->link_offsets[i + 1];
        for (int k = first; k < last; k++) {
            int j = p->bandwidth ? k : p->link_to[k];
            double b = p->bandwidth ? p->bandwidth[(size_t)i * p->n + j] : p->link_bandwidth[k];
            if (j == i || !(b > 0) || !(pairing_standalone(p, j) < tau_i)) continue;
            int split;
            double t = pairing_best_split(p, i, j, b, &split);
            if (!(t < tau_i)) continue;
            if (n_edges == cap) {
                cap *= 2;
                PairingEdge *grown = realloc(list, cap * sizeof *list);
                if (grown == NULL) {
                    free(list);
                    return HS_E_NOMEM;
                }
                list = grown;
            }
            list[n_edges++] = (PairingEdge){.slow = i, .fast = j, .split = split, .time = t};
        }
    }
    *edges = list;
    *count = n_edges;
    return HS_OK;
}

void pairing_result_from_edges(const PairingProblem *p, const PairingEdge *pairs, size_t n_pairs,
                               PairingResult *out)
{
    for (int i = 0; i < p->n; i++) {
        out->partner[i] = -1;
        out->split[i] = 0;
        out->role[i] = PAIRING_ALONE;
        out->time[i] = pairing_standalone(p, i);
    }
    for (size_t k = 0; k < n_pairs; k++) {
        const PairingEdge *e = &pairs[k];
        out->partner[e->slow] = e->fast;
        out->partner[e->fast] = e->slow;
        out->split[e->slow] = out->split[e->fast] = e->split;
        out->role[e->slow] = PAIRING_OFFLOADER;
        out->role[e->fast] = PAIRING_HELPER;
        out->time[e->slow] = out->time[e->fast] = e->time;
    }
    out->makespan = 0;
    for (int i = 0; i < p->n; i++)
        if (out->time[i] > out->makespan) out->makespan = out->time[i];
}

static double pairing_link(const PairingProblem *p, int i, int j)
{
    if (p->bandwidth) return p->bandwidth[(size_t)i * p->n + j];
    for (int k = p->link_offsets[i]; k < p->link_offsets[i + 1]; k++)
        if (p->link_to[k] == j) return p->link_bandwidth[k];
    return 0;
}

int pairing_result_check(const PairingProblem *p, const PairingResult *r)
{
    double makespan = 0;
    for (int i = 0; i < p->n; i++) {
        double t;
        int j = r->partner[i];
        if (r->role[i] == PAIRING_ALONE) {
            if (j != -1) return HS_E_INTERNAL;
            t = pairing_standalone(p, i);
        } else {
            if (j < 0 || j >= p->n || j == i || r->partner[j] != i || r->split[j] != r->split[i]) return HS_E_INTERNAL;
            int slow = r->role[i] == PAIRING_OFFLOADER ? i : j, fast = slow == i ? j : i;
            if (r->role[slow] != PAIRING_OFFLOADER || r->role[fast] != PAIRING_HELPER) return HS_E_INTERNAL;
            t = pairing_time_with(p, slow, fast, r->split[i], pairing_link(p, slow, fast));
            if (!isfinite(t)) return HS_E_INTERNAL;
        }
        if (fabs(t - r->time[i]) > 1e-9 * (1 + t)) return HS_E_INTERNAL;
        if (t > makespan) makespan = t;
    }
    return fabs(makespan - r->makespan) <= 1e-9 * (1 + makespan) ? HS_OK : HS_E_INTERNAL;
}

int solver_pair(const PairingProblem *p, const char *solver_name, double ip_time_limit, PairingResult *out,
                HsDiag *diag)
{
    int status;
    out->fell_back = 0;
    out->note[0] = '\0';
    if (strcmp(solver_name, "exact") == 0) {
        status = solver_exact(p, out);
    } else if (strcmp(solver_name, "greedy") == 0) {
        status = solver_greedy(p, out);
    } else if (strcmp(solver_name, "ip") == 0) {
        HsDiag ip_diag;
        hs_diag_clear(&ip_diag);
        status = solver_ip(p, ip_time_limit, out, &ip_diag);
        if (status == HS_E_SOLVER) {
            /* say so, then answer exactly: the run goes on with the optimum */
            status = solver_exact(p, out);
            out->fell_back = 1;
            snprintf(out->note, sizeof out->note, "%s; the exact solver answered", ip_diag.message);
            snprintf(out->solver, sizeof out->solver, "ip>exact");
        }
    } else {
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "unknown solver '%s' (use exact, ip or greedy)", solver_name);
    }
    if (status == HS_E_NOMEM) hs_diag_set(diag, status, NULL, 0, "out of memory in the %s solver", solver_name);
    return status;
}
