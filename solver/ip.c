/* ip.c — the pairing as the paper states it, an integer program, solved by lp_solve: the
 * independent check of the exact solver. It builds its own variables straight from
 * the cost, pairing_time_below (not from the edge list exact and greedy share), so it
 * minimises whichever cost the problem names (paper or exact), like the others.
 *
 *   variables  x_ijm in {0,1}: i offloads to j at split m, over every link i -> j
 *              (i != j, b_ij > 0) with i's best split m for it (see below); Z >= 0.
 *   minimise   Z
 *   subject to for every agent k:
 *     (role)   sum_{j,m} x_kjm + sum_{i,m} x_ikm <= 1
 *              (offloads at most once, helps at most once, never both)
 *     (time)   Z >= tau_k + sum_{j,m} (T_kjm - tau_k) x_kjm + sum_{i,m} (T_ikm - tau_k) x_ikm
 *
 * With (role) at most one x touches k, so the right side of (time) is exactly k's
 * finishing time: tau_k alone, T_kjm as an offloader, T_ikm as a helper. One row per
 * agent covers both of k's possible roles. (The tempting separate helper row
 * "Z >= tau_j + sum_i (T_ijm - tau_j) x_ijm" is wrong: it forces Z >= tau_j on a slow
 * agent that offloads and helps nobody.)
 *
 * Two reductions of the variables, both column dominance, done here rather than by
 * lp_solve's presolve (which renumbers the columns it removes):
 *  - of the splits of one link only the best is kept (smallest T, then lowest m): every
 *    x_ijm of a link has the same role coefficients, and the best has the largest time
 *    coefficients tau - T in both of its rows. With all splits, lp_solve's branch and
 *    bound wades through the equivalent choices: on 16-agent paper-like instances it
 *    took 2.5 s on average against 8 ms with the best split only;
 *  - links whose best T_ijm >= tau_i are left out: replacing such a pair by both agents
 *    alone gives i tau_i <= T_ijm and j tau_j <= T_ijm, so some optimum never uses them.
 *    That drops every j with tau_j >= tau_i, about half the links.
 *
 * Bounds on Z, both valid for every pairing: Z <= max tau (all alone is feasible) and
 * Z >= max_k min(tau_k, min_{j,m} T_kjm) (an agent can do no better than alone or its own
 * best offload; as a helper it finishes after tau_k). They tighten the LP relaxation
 * the branch and bound starts from, whose min-max objective is otherwise weak.
 *
 * Time limit: the wall clock from entry, building the model included (a 1,000-agent
 * dense paper-like instance has ~2 x 10^5 variables). lp_solve's own set_timeout counts
 * whole seconds from solve(), so an abort callback enforces the exact deadline and
 * set_timeout stays as the backstop. Gaps are 1e-9 so lp_solve proves the optimum rather
 * than stopping near it. An answer that does not check out (not a matching, or its
 * makespan disagrees with Z) is reported as a failure like any other. */
#include "solver/edges.h"

#include <lpsolve/lp_lib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A guard on memory, not a practical size: on paper-like instances lp_solve stops
 * finishing within seconds at a few hundred variables (24-32 agents, see bench/pairing.c);
 * past this the caller falls back without building the model. */
#define IP_MAX_VARIABLES 2000000

/* Every failure sets status (and the message) and leaves through the one cleanup. */
#define IP_FAIL(expr)                                                                                                  \
    do {                                                                                                               \
        status = (expr);                                                                                               \
        goto fail;                                                                                                     \
    } while (0)

typedef struct IpClock {
    double deadline; /* CLOCK_MONOTONIC seconds, INFINITY without a limit */
} IpClock;

static double ip_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int ip_expired(const IpClock *clock)
{
    return isfinite(clock->deadline) && ip_now() >= clock->deadline;
}

static int __WINAPI ip_abort(lprec *lp, void *handle)
{
    (void)lp;
    return ip_expired(handle) ? TRUE : FALSE;
}

static const char *ip_result_name(int result)
{
    switch (result) {
    case NOMEMORY: return "out of memory";
    case INFEASIBLE: return "infeasible";
    case UNBOUNDED: return "unbounded";
    case DEGENERATE: return "degenerate";
    case NUMFAILURE: return "numerical failure";
    case PROCFAIL: return "branch and bound failed";
    case PROCBREAK: return "stopped early";
    case NOFEASFOUND: return "no feasible solution";
    case SUBOPTIMAL: return "stopped before proving the optimum";
    default: return "failed";
    }
}

/* n_vars = 0 while the variables are still being listed */
static int ip_out_of_time(HsDiag *diag, double time_limit, int solving, size_t n_vars)
{
    if (!solving)
        return hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve ran out of time (limit %g s) building the model",
                           time_limit);
    return hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve ran out of time (limit %g s, %zu variables)", time_limit,
                       n_vars);
}

static int ip_build_error(HsDiag *diag, size_t n_vars)
{
    return hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve could not build the model (%zu variables)", n_vars);
}

int solver_ip(const PairingProblem *p, double time_limit, PairingResult *out, HsDiag *diag)
{
    int n = p->n, status = HS_E_NOMEM;
    IpClock clock = {.deadline = time_limit > 0 ? ip_now() + time_limit : INFINITY};
    PairingEdge *vars = NULL, *pairs = NULL;
    size_t n_vars = 0, cap = 1024, n_pairs = 0;
    double *tau = NULL, *values = NULL;
    int *degree = NULL;
    lprec *lp = NULL;
    vars = malloc(cap * sizeof *vars);
    tau = malloc(((size_t)n + 1) * sizeof *tau);
    degree = calloc((size_t)n + 1, sizeof *degree);
    pairs = malloc(((size_t)n + 1) * sizeof *pairs);
    if (!vars || !tau || !degree || !pairs) goto fail;

    double lower = 0, upper = 0;
    for (int k = 0; k < n; k++) {
        tau[k] = pairing_standalone(p, k);
        upper = fmax(upper, tau[k]);
    }
    for (int i = 0; i < n; i++) {
        if (ip_expired(&clock)) IP_FAIL(ip_out_of_time(diag, time_limit, 0, n_vars));
        double best = tau[i];
        int dense = p->bandwidth != NULL;
        int begin = dense ? 0 : p->link_offsets[i], end = dense ? n : p->link_offsets[i + 1];
        for (int k = begin; k < end; k++) {
            int j = dense ? k : p->link_to[k];
            double b = dense ? p->bandwidth[(size_t)i * (size_t)n + (size_t)j] : p->link_bandwidth[k];
            int split = 0;
            double t = INFINITY;
            for (int m = 1; m < p->n_splits; m++) {
                /* INFINITY for i == j or no link; only times below t and tau_i matter */
                double tm = pairing_time_below(p, i, j, m, b, fmin(t, tau[i]));
                if (tm < t) {
                    t = tm;
                    split = m;
                }
            }
            if (!(t < tau[i])) continue;
            if (n_vars == IP_MAX_VARIABLES)
                IP_FAIL(hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve not tried: more than %d variables",
                                    IP_MAX_VARIABLES));
            if (n_vars == cap) {
                PairingEdge *grown = realloc(vars, 2 * cap * sizeof *vars);
                if (grown == NULL) goto fail;
                vars = grown;
                cap *= 2;
            }
            vars[n_vars++] = (PairingEdge){.slow = i, .fast = j, .split = split, .time = t};
            best = fmin(best, t);
        }
        lower = fmax(lower, best);
    }
    values = malloc((n_vars + 2) * sizeof *values);
    if (values == NULL) goto fail;

    /* rows 1..n: role of agent k; rows n+1..2n: time of agent k; column n_vars+1: Z */
    lp = make_lp(2 * n, 0);
    if (lp == NULL) goto fail;
    set_verbose(lp, NEUTRAL);
    put_abortfunc(lp, ip_abort, &clock);
    for (int k = 0; k < n; k++) {
        if (!set_constr_type(lp, k + 1, LE) || !set_rh(lp, k + 1, 1.0) || !set_constr_type(lp, n + k + 1, GE) ||
            !set_rh(lp, n + k + 1, tau[k]))
            IP_FAIL(ip_build_error(diag, n_vars));
    }
    for (size_t v = 0; v < n_vars; v++) {
        if ((v & 1023) == 0 && ip_expired(&clock)) IP_FAIL(ip_out_of_time(diag, time_limit, 0, n_vars));
        const PairingEdge *x = &vars[v];
        int rows[4] = {x->slow + 1, x->fast + 1, n + x->slow + 1, n + x->fast + 1};
        REAL column[4] = {1.0, 1.0, tau[x->slow] - x->time, tau[x->fast] - x->time};
        if (!add_columnex(lp, 4, column, rows)) IP_FAIL(ip_build_error(diag, n_vars));
        if (!set_binary(lp, (int)v + 1, TRUE)) IP_FAIL(ip_build_error(diag, n_vars));
    }
    {
        int *rows = malloc(((size_t)n + 1) * sizeof *rows);
        REAL *column = malloc(((size_t)n + 1) * sizeof *column);
        int ok = rows && column;
        if (ok) {
            rows[0] = 0; /* the objective row */
            column[0] = 1.0;
            for (int k = 0; k < n; k++) {
                rows[k + 1] = n + k + 1;
                column[k + 1] = 1.0;
            }
            ok = add_columnex(lp, n + 1, column, rows);
        }
        free(rows);
        free(column);
        if (!ok) IP_FAIL(ip_build_error(diag, n_vars));
    }
    int z = (int)n_vars + 1;
    if (!set_bounds(lp, z, lower, upper)) IP_FAIL(ip_build_error(diag, n_vars));
    set_minim(lp);
    set_mip_gap(lp, TRUE, 1e-9);
    set_mip_gap(lp, FALSE, 1e-9);
    if (isfinite(clock.deadline)) {
        double left = clock.deadline - ip_now();
        if (left <= 0) IP_FAIL(ip_out_of_time(diag, time_limit, 1, n_vars));
        set_timeout(lp, (long)ceil(left));
    }
    int result = solve(lp);
    if (result == TIMEOUT || result == USERABORT || (result == SUBOPTIMAL && ip_expired(&clock)))
        IP_FAIL(ip_out_of_time(diag, time_limit, 1, n_vars));
    if (result != OPTIMAL && result != PRESOLVED) {
        status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve: %s (code %d, %zu variables)",
                             ip_result_name(result), result, n_vars);
        goto fail;
    }
    if (!get_variables(lp, values)) IP_FAIL(ip_build_error(diag, n_vars));

    for (size_t v = 0; v < n_vars; v++) {
        if (values[v] <= 0.5) continue;
        int twice = degree[vars[v].slow] ? vars[v].slow : degree[vars[v].fast] ? vars[v].fast : -1;
        if (twice >= 0) {
            status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve's answer puts agent %d in two pairs", twice);
            goto fail;
        }
        degree[vars[v].slow] = degree[vars[v].fast] = 1;
        pairs[n_pairs++] = vars[v];
    }
    /* the chosen pairs' makespan, recomputed, against the Z lp_solve reports */
    double makespan = 0;
    for (int k = 0; k < n; k++)
        if (!degree[k]) makespan = fmax(makespan, tau[k]);
    for (size_t k = 0; k < n_pairs; k++)
        makespan = fmax(makespan, pairs[k].time);
    double objective = values[n_vars];
    if (!(fabs(makespan - objective) <= 1e-6 * fmax(1.0, makespan))) {
        status =
            hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve's Z = %.9g but its pairs take %.9g", objective, makespan);
        goto fail;
    }
    pairing_result_from_edges(p, pairs, n_pairs, out);
    snprintf(out->solver, sizeof out->solver, "ip");
    status = HS_OK;
fail:
    if (lp) delete_lp(lp);
    free(vars);
    free(tau);
    free(degree);
    free(pairs);
    free(values);
    return status;
}
