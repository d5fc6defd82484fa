/* pairing.c — what every solver shares: allocation, validation, the useful-edge list (one
 * best split per link, computed once), result checking, and the solver_pair entry point.
 * The cost T_i(j,m) itself is in cost.c. */
#include "solver/edges.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pairing_alloc_common(PairingProblem *p, int n, int n_splits)
{
    memset(p, 0, sizeof *p);
    if (n < 0 || n_splits < 1) return HS_E_INPUT;
    p->n = n;
    p->n_splits = n_splits;
    /* +1 so that n = 0 still yields non-NULL arrays */
    p->batches = calloc((size_t)n + 1, sizeof *p->batches);
    p->speed = calloc((size_t)n + 1, sizeof *p->speed);
    p->fs = calloc((size_t)n_splits, sizeof *p->fs);
    p->ff = calloc((size_t)n_splits, sizeof *p->ff);
    p->act = calloc((size_t)n_splits, sizeof *p->act);
    p->latency = calloc((size_t)n + 1, sizeof *p->latency);
    return p->batches && p->speed && p->fs && p->ff && p->act && p->latency ? HS_OK : HS_E_NOMEM;
}

int pairing_problem_init(PairingProblem *p, int n, int n_splits)
{
    int status = pairing_alloc_common(p, n, n_splits);
    if (status != HS_OK) goto fail;
    p->bandwidth = calloc((size_t)n * (size_t)n + 1, sizeof *p->bandwidth);
    if (p->bandwidth == NULL) {
        status = HS_E_NOMEM;
        goto fail;
    }
    return HS_OK;
fail:
    pairing_problem_free(p);
    return status;
}

int pairing_problem_init_sparse(PairingProblem *p, int n, int n_splits, size_t n_links)
{
    int status = pairing_alloc_common(p, n, n_splits);
    if (status != HS_OK) goto fail;
    p->link_offsets = calloc((size_t)n + 1, sizeof *p->link_offsets);
    p->link_to = calloc(n_links + 1, sizeof *p->link_to);
    p->link_bandwidth = calloc(n_links + 1, sizeof *p->link_bandwidth);
    if (!p->link_offsets || !p->link_to || !p->link_bandwidth) {
        status = HS_E_NOMEM;
        goto fail;
    }
    return HS_OK;
fail:
    pairing_problem_free(p);
    return status;
}

void pairing_problem_free(PairingProblem *p)
{
    if (p == NULL) return;
    free(p->batches);
    free(p->speed);
    free(p->fs);
    free(p->ff);
    free(p->act);
    free(p->latency);
    free(p->bandwidth);
    free(p->link_offsets);
    free(p->link_to);
    free(p->link_bandwidth);
    memset(p, 0, sizeof *p);
}

int pairing_problem_check(const PairingProblem *p, HsDiag *diag)
{
    if (p == NULL || p->n < 0 || p->n_splits < 1)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: needs n >= 0 agents and at least one split");
    if (!p->batches || !p->speed || !p->fs || !p->ff || !p->act || !p->latency || (!p->bandwidth && !p->link_offsets))
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: arrays not allocated");
    int n = p->n, exact = p->cost == PAIRING_COST_EXACT;
    if (p->cost != PAIRING_COST_PAPER && !exact)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: unknown cost %d", (int)p->cost);
    if (exact && p->network != PAIRING_NETWORK_MAXMIN && p->network != PAIRING_NETWORK_FIFO &&
        p->network != PAIRING_NETWORK_MAXMIN_FIFO)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: unknown network %d", (int)p->network);
    for (int i = 0; i < n; i++) {
        if (!(p->batches[i] >= 0) || !isfinite(p->batches[i]))
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: batches[%d] = %g must be finite and >= 0",
                               i, p->batches[i]);
        if (!(p->speed[i] > 0) || !isfinite(p->speed[i]))
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: speed[%d] = %g must be finite and > 0", i,
                               p->speed[i]);
        if (exact && !(p->latency[i] >= 0 && isfinite(p->latency[i])))
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: latency[%d] = %g must be finite and >= 0",
                               i, p->latency[i]);
        /* the exact cost plays every batch out, so there must be a whole number of them */
        if (exact && (p->batches[i] != floor(p->batches[i]) || p->batches[i] > PAIRING_MAX_EXACT_BATCHES))
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0,
                               "pairing problem: batches[%d] = %g must be a whole number up to %d under the exact cost",
                               i, p->batches[i], PAIRING_MAX_EXACT_BATCHES);
    }
    for (int m = 0; m < p->n_splits; m++) {
        double v[3] = {p->fs[m], p->ff[m], p->act[m]};
        const char *name[3] = {"fs", "ff", "act"};
        for (int k = 0; k < 3; k++)
            if (!(v[k] >= 0) || !isfinite(v[k]))
                return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: %s[%d] = %g must be finite and >= 0",
                                   name[k], m, v[k]);
    }
    if (p->bandwidth) {
        for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
            if (!(p->bandwidth[k] >= 0))
                return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: bandwidth[%d][%d] = %g must be >= 0",
                                   (int)(k / (size_t)n), (int)(k % (size_t)n), p->bandwidth[k]);
        return HS_OK;
    }
    if (p->link_offsets[0] != 0)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: link_offsets[0] must be 0");
    for (int i = 0; i < n; i++) {
        if (p->link_offsets[i + 1] < p->link_offsets[i])
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: link_offsets decrease at agent %d", i);
        for (int k = p->link_offsets[i]; k < p->link_offsets[i + 1]; k++) {
            if (p->link_to[k] < 0 || p->link_to[k] >= n)
                return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: link %d of agent %d goes to %d", k, i,
                                   p->link_to[k]);
            if (!(p->link_bandwidth[k] >= 0))
                return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing problem: link %d of agent %d has bandwidth %g",
                                   k, i, p->link_bandwidth[k]);
        }
    }
    return HS_OK;
}

int pairing_result_init(PairingResult *r, int n)
{
    memset(r, 0, sizeof *r);
    if (n < 0) return HS_E_INPUT;
    r->n = n;
    r->partner = calloc((size_t)n + 1, sizeof *r->partner);
    r->split = calloc((size_t)n + 1, sizeof *r->split);
    r->role = calloc((size_t)n + 1, sizeof *r->role);
    r->time = calloc((size_t)n + 1, sizeof *r->time);
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

double pairing_link(const PairingProblem *p, int i, int j)
{
    if (p->bandwidth) return p->bandwidth[(size_t)i * (size_t)p->n + (size_t)j];
    for (int k = p->link_offsets[i]; k < p->link_offsets[i + 1]; k++)
        if (p->link_to[k] == j) return p->link_bandwidth[k];
    return 0;
}

/* i's best split over a link of bandwidth b, if its time is below limit (else any
 * time >= limit); ties go to the lower split. */
static double pairing_best_split(const PairingProblem *p, int i, int j, double b, double limit, int *split)
{
    double best = INFINITY;
    *split = 0;
    for (int m = 1; m < p->n_splits; m++) {
        double t = pairing_time_below(p, i, j, m, b, fmin(best, limit));
        if (t < best) {
            best = t;
            *split = m;
        }
    }
    return best;
}

static int pairing_edge_order(const void *a, const void *b)
{
    const PairingEdge *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return (x->fast > y->fast) - (x->fast < y->fast);
}

int pairing_useful_edges(const PairingProblem *p, PairingEdge **edges, size_t *count, size_t **first)
{
    size_t cap = 1024, n_edges = 0;
    PairingEdge *list = malloc(cap * sizeof *list);
    size_t *starts = calloc((size_t)p->n + 1, sizeof *starts);
    if (list == NULL || starts == NULL) goto fail;
    for (int i = 0; i < p->n; i++) {
        double tau_i = pairing_standalone(p, i);
        int dense = p->bandwidth != NULL;
        int begin = dense ? 0 : p->link_offsets[i], end = dense ? p->n : p->link_offsets[i + 1];
        starts[i] = n_edges;
        for (int k = begin; k < end; k++) {
            int j = dense ? k : p->link_to[k];
            double b = dense ? p->bandwidth[(size_t)i * (size_t)p->n + (size_t)j] : p->link_bandwidth[k];
            /* T_i(j,m) >= tau_j, so a helper no faster than i can never beat tau_i */
            if (j == i || !(b > 0) || !(pairing_standalone(p, j) < tau_i)) continue;
            int split;
            double t = pairing_best_split(p, i, j, b, tau_i, &split);
            if (!(t < tau_i)) continue;
            if (n_edges == cap) {
                PairingEdge *grown = realloc(list, 2 * cap * sizeof *list);
                if (grown == NULL) goto fail;
                list = grown;
                cap *= 2;
            }
            list[n_edges++] = (PairingEdge){.slow = i, .fast = j, .split = split, .time = t};
        }
        qsort(list + starts[i], n_edges - starts[i], sizeof *list, pairing_edge_order);
    }
    starts[p->n] = n_edges;
    *edges = list;
    *count = n_edges;
    *first = starts;
    return HS_OK;
fail:
    free(list);
    free(starts);
    return HS_E_NOMEM;
}

void pairing_result_from_edges(const PairingProblem *p, const PairingEdge *pairs, size_t n_pairs, PairingResult *out)
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

static int pairing_close(double a, double b)
{
    return a == b || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

int pairing_result_check(const PairingProblem *p, const PairingResult *r)
{
    if (r->n != p->n || !r->partner || !r->split || !r->role || !r->time) return HS_E_INTERNAL;
    double makespan = 0;
    for (int i = 0; i < p->n; i++) {
        double t;
        int j = r->partner[i];
        if (r->role[i] == PAIRING_ALONE) {
            if (j != -1 || r->split[i] != 0) return HS_E_INTERNAL;
            t = pairing_standalone(p, i);
        } else if (r->role[i] == PAIRING_OFFLOADER || r->role[i] == PAIRING_HELPER) {
            if (j < 0 || j >= p->n || j == i || r->partner[j] != i || r->split[j] != r->split[i]) return HS_E_INTERNAL;
            if (r->split[i] < 1 || r->split[i] >= p->n_splits) return HS_E_INTERNAL;
            int slow = r->role[i] == PAIRING_OFFLOADER ? i : j, fast = slow == i ? j : i;
            if (r->role[slow] != PAIRING_OFFLOADER || r->role[fast] != PAIRING_HELPER) return HS_E_INTERNAL;
            t = pairing_time(p, slow, fast, r->split[i]);
            if (!isfinite(t)) return HS_E_INTERNAL; /* no link */
        } else {
            return HS_E_INTERNAL;
        }
        if (!pairing_close(t, r->time[i])) return HS_E_INTERNAL;
        if (t > makespan) makespan = t;
    }
    return pairing_close(makespan, r->makespan) ? HS_OK : HS_E_INTERNAL;
}

int solver_known(const char *name)
{
    size_t len = strlen(name);
    for (const char *p = SOLVER_NAMES; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, name, n) == 0) return 1;
        p += n + (bar != NULL);
    }
    return 0;
}

int solver_pair(const PairingProblem *p, const char *solver_name, double ip_time_limit, PairingResult *out,
                HsDiag *diag)
{
    int status = pairing_problem_check(p, diag);
    if (status != HS_OK) return status;
    if (out == NULL || out->n != p->n || out->partner == NULL)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "pairing result not sized for the problem's %d agents", p->n);
    out->fell_back = 0;
    out->note[0] = '\0';
    if (solver_name != NULL && strcmp(solver_name, "exact") == 0) {
        status = solver_exact(p, out);
    } else if (solver_name != NULL && strcmp(solver_name, "greedy") == 0) {
        status = solver_greedy(p, out);
    } else if (solver_name != NULL && strcmp(solver_name, "ip") == 0) {
        HsDiag ip_diag;
        hs_diag_clear(&ip_diag);
        status = solver_ip(p, ip_time_limit, out, &ip_diag);
        if (status == HS_E_SOLVER) {
            /* the run goes on with the optimum; the caller sees why in note and solver */
            status = solver_exact(p, out);
            out->fell_back = 1;
            snprintf(out->note, sizeof out->note, "ip: %.150s; the exact solver answered", ip_diag.message);
            snprintf(out->solver, sizeof out->solver, "ip>exact");
        }
    } else {
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "unknown solver '%s' (use exact, ip or greedy)",
                           solver_name ? solver_name : "(null)");
    }
    if (status == HS_E_NOMEM) return hs_diag_set(diag, status, NULL, 0, "out of memory in the %s solver", solver_name);
    if (status != HS_OK)
        return hs_diag_set(diag, status, NULL, 0, "the %s solver failed (%s)", solver_name, hs_error_name(status));
    return HS_OK;
}
