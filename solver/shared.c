/* shared.c — what the shared-helper solvers share (shared.h): results, the proportional
 * shares and times of an assignment, the result checker, the option list and the
 * solver_shared entry point. */
#include "solver/shared.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shared_result_init(SharedResult *r, int n)
{
    memset(r, 0, sizeof *r);
    if (n < 0) return HS_E_INPUT;
    r->n = n;
    size_t count = (size_t)n + 1;
    r->helper = calloc(count, sizeof *r->helper);
    r->split = calloc(count, sizeof *r->split);
    r->role = calloc(count, sizeof *r->role);
    r->members = calloc(count, sizeof *r->members);
    r->share = calloc(count, sizeof *r->share);
    r->link_share = calloc(count, sizeof *r->link_share);
    r->time = calloc(count, sizeof *r->time);
    if (!r->helper || !r->split || !r->role || !r->members || !r->share || !r->link_share || !r->time) {
        shared_result_free(r);
        return HS_E_NOMEM;
    }
    return HS_OK;
}

void shared_result_free(SharedResult *r)
{
    if (r == NULL) return;
    free(r->helper);
    free(r->split);
    free(r->role);
    free(r->members);
    free(r->share);
    free(r->link_share);
    free(r->time);
    memset(r, 0, sizeof *r);
}

/* n_i act[m] / b over a link b > 0; 0 when nothing is sent (keeps 0 * inf out). */
static double shared_transfer(const PairingProblem *p, int i, int m, double b)
{
    return p->act[m] > 0 ? p->batches[i] * p->act[m] / b : 0;
}

int shared_result_from_assignment(const PairingProblem *p, const int *helper, const int *split, SharedResult *r)
{
    int n = p->n;
    if (r->n != n) return HS_E_INPUT;
    for (int i = 0; i < n; i++) {
        r->helper[i] = -1;
        r->split[i] = 0;
        r->role[i] = PAIRING_ALONE;
        r->members[i] = 0;
        r->share[i] = r->link_share[i] = 0;
        r->time[i] = pairing_standalone(p, i);
    }
    /* per helper: sum of top work W and of transfer time D, reusing share/link_share of
     * the helper's own slot as accumulators until the members' shares are set */
    double *work = calloc((size_t)n + 1, sizeof *work), *transfer = calloc((size_t)n + 1, sizeof *transfer);
    if (!work || !transfer) {
        free(work);
        free(transfer);
        return HS_E_NOMEM;
    }
    int status = HS_OK;
    for (int i = 0; i < n && status == HS_OK; i++) {
        int j = helper[i];
        if (j < 0) continue;
        int m = split[i];
        double b = j < n && j != i ? pairing_link(p, i, j) : 0;
        if (j >= n || j == i || helper[j] >= 0 || m < 1 || m >= p->n_splits || !(b > 0)) {
            status = HS_E_INPUT;
            break;
        }
        r->helper[i] = j;
        r->split[i] = m;
        r->role[i] = PAIRING_OFFLOADER;
        r->role[j] = PAIRING_HELPER;
        r->members[j]++;
        work[j] += p->batches[i] * p->ff[m] / p->speed[j];
        transfer[j] += shared_transfer(p, i, m, b);
    }
    if (status == HS_OK) {
        /* the helpers' group times: own epoch then all top work; all transfers; slow sides */
        for (int j = 0; j < n; j++)
            if (r->role[j] == PAIRING_HELPER) r->time[j] = fmax(pairing_standalone(p, j) + work[j], transfer[j]);
        for (int i = 0; i < n; i++) {
            if (r->role[i] != PAIRING_OFFLOADER) continue;
            int j = r->helper[i], m = r->split[i];
            double w = p->batches[i] * p->ff[m] / p->speed[j];
            double d = shared_transfer(p, i, m, pairing_link(p, i, j));
            /* proportional shares; a group with no top work (or nothing sent) splits evenly */
            r->share[i] = work[j] > 0 ? w / work[j] : 1.0 / r->members[j];
            r->link_share[i] = transfer[j] > 0 ? d / transfer[j] : 1.0 / r->members[j];
            double slow = p->batches[i] * p->fs[m] / p->speed[i];
            r->time[i] = fmax(slow, r->time[j]);
        }
        /* a helper ends with its last member: fold the slow sides into the group's time */
        for (int i = 0; i < n; i++)
            if (r->role[i] == PAIRING_OFFLOADER) r->time[r->helper[i]] = fmax(r->time[r->helper[i]], r->time[i]);
        r->makespan = 0;
        for (int i = 0; i < n; i++)
            r->makespan = fmax(r->makespan, r->time[i]);
    }
    free(work);
    free(transfer);
    return status;
}

static int shared_close(double a, double b)
{
    return a == b || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

int shared_result_check(const PairingProblem *p, const SharedResult *r)
{
    if (r->n != p->n || !r->helper || !r->time) return HS_E_INTERNAL;
    for (int i = 0; i < p->n; i++) {
        if (r->role[i] == PAIRING_OFFLOADER) {
            if (r->helper[i] < 0 || r->helper[i] >= p->n || r->role[r->helper[i]] != PAIRING_HELPER)
                return HS_E_INTERNAL;
        } else if (r->helper[i] != -1 || r->split[i] != 0) {
            return HS_E_INTERNAL;
        }
    }
    SharedResult again;
    if (shared_result_init(&again, p->n) != HS_OK) return HS_E_NOMEM;
    int status = shared_result_from_assignment(p, r->helper, r->split, &again);
    if (status == HS_OK) {
        double *sum = calloc((size_t)p->n + 1, sizeof *sum), *link_sum = calloc((size_t)p->n + 1, sizeof *link_sum);
        if (!sum || !link_sum) status = HS_E_NOMEM;
        for (int i = 0; i < p->n && status == HS_OK; i++) {
            if (again.role[i] != r->role[i] || again.members[i] != r->members[i] ||
                !shared_close(again.time[i], r->time[i]) || !shared_close(again.share[i], r->share[i]) ||
                !shared_close(again.link_share[i], r->link_share[i]))
                status = HS_E_INTERNAL;
            if (r->role[i] == PAIRING_OFFLOADER) {
                sum[r->helper[i]] += r->share[i];
                link_sum[r->helper[i]] += r->link_share[i];
            }
        }
        for (int j = 0; j < p->n && status == HS_OK; j++)
            if (r->role[j] == PAIRING_HELPER && (fabs(sum[j] - 1) > 1e-9 || fabs(link_sum[j] - 1) > 1e-9))
                status = HS_E_INTERNAL;
        if (status == HS_OK && !shared_close(again.makespan, r->makespan)) status = HS_E_INTERNAL;
        free(sum);
        free(link_sum);
    } else {
        status = HS_E_INTERNAL;
    }
    shared_result_free(&again);
    return status;
}

/* 1 if split a is at least as good as b in every respect (and so b need not be tried). */
static int shared_split_dominates(const PairingProblem *p, int a, int b)
{
    return p->fs[a] <= p->fs[b] && p->ff[a] <= p->ff[b] && p->act[a] <= p->act[b];
}

int shared_options(const PairingProblem *p, SharedOption **options, size_t *count, size_t **first)
{
    size_t cap = 256, used = 0;
    SharedOption *list = malloc(cap * sizeof *list);
    size_t *starts = calloc((size_t)p->n + 1, sizeof *starts);
    char *dominated = calloc((size_t)p->n_splits + 1, 1);
    if (!list || !starts || !dominated) goto fail;
    /* which splits another one dominates (ties between identical splits keep the lowest) */
    for (int m = 1; m < p->n_splits; m++)
        for (int k = 1; k < p->n_splits && !dominated[m]; k++)
            if (k != m && shared_split_dominates(p, k, m) && (k < m || !shared_split_dominates(p, m, k)))
                dominated[m] = 1;
    for (int i = 0; i < p->n; i++) {
        starts[i] = used;
        double tau_i = pairing_standalone(p, i);
        int dense = p->bandwidth != NULL;
        int begin = dense ? 0 : p->link_offsets[i], end = dense ? p->n : p->link_offsets[i + 1];
        for (int e = begin; e < end; e++) {
            int j = dense ? e : p->link_to[e];
            double b = dense ? p->bandwidth[(size_t)i * (size_t)p->n + (size_t)j] : p->link_bandwidth[e];
            if (j == i || !(b > 0) || !(pairing_standalone(p, j) < tau_i)) continue;
            for (int m = 1; m < p->n_splits; m++) {
                if (dominated[m] || !(pairing_time_with(p, i, j, m, b) < tau_i)) continue;
                if (used == cap) {
                    SharedOption *grown = realloc(list, 2 * cap * sizeof *list);
                    if (grown == NULL) goto fail;
                    list = grown;
                    cap *= 2;
                }
                list[used++] = (SharedOption){.slow = i,
                                              .fast = j,
                                              .split = m,
                                              .slow_time = p->batches[i] * p->fs[m] / p->speed[i],
                                              .work = p->batches[i] * p->ff[m] / p->speed[j],
                                              .transfer = shared_transfer(p, i, m, b)};
            }
        }
    }
    starts[p->n] = used;
    free(dominated);
    *options = list;
    *count = used;
    *first = starts;
    return HS_OK;
fail:
    free(list);
    free(starts);
    free(dominated);
    return HS_E_NOMEM;
}

int solver_shared(const PairingProblem *p, const char *solver_name, double ip_time_limit, SharedResult *out,
                  HsDiag *diag)
{
    int status = pairing_problem_check(p, diag);
    if (status != HS_OK) return status;
    if (p->cost != PAIRING_COST_PAPER)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "shared helpers take the paper's cost only (not cost = %s)",
                           pairing_cost_name(p->cost));
    if (out == NULL || out->n != p->n || out->helper == NULL)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "shared result not sized for the problem's %d agents", p->n);
    out->fell_back = 0;
    out->note[0] = '\0';
    const char *name = solver_name ? solver_name : "(null)";
    if (strcmp(name, "exact") == 0) {
        if (p->n > SHARED_EXACT_MAX_AGENTS)
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0,
                               "the exact solver with shared helpers takes at most %d agents (%d given); use ip or "
                               "greedy",
                               SHARED_EXACT_MAX_AGENTS, p->n);
        status = shared_exact(p, out);
    } else if (strcmp(name, "greedy") == 0) {
        status = shared_greedy(p, out);
    } else if (strcmp(name, "ip") == 0) {
        HsDiag ip_diag;
        hs_diag_clear(&ip_diag);
        status = shared_ip(p, ip_time_limit, out, &ip_diag);
        if (status == HS_E_SOLVER) {
            int exact = p->n <= SHARED_EXACT_MAX_AGENTS;
            status = exact ? shared_exact(p, out) : shared_greedy(p, out);
            out->fell_back = 1;
            snprintf(out->note, sizeof out->note, "ip: %.150s; the %s solver answered", ip_diag.message,
                     exact ? "exact" : "greedy");
            snprintf(out->solver, sizeof out->solver, exact ? "ip>exact" : "ip>greedy");
        }
    } else {
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "unknown solver '%s' (use exact, ip or greedy)", name);
    }
    if (status == HS_E_NOMEM) return hs_diag_set(diag, status, NULL, 0, "out of memory in the %s solver", name);
    if (status != HS_OK)
        return hs_diag_set(diag, status, NULL, 0, "the %s solver failed (%s)", name, hs_error_name(status));
    return HS_OK;
}
