/* shared_ip.c — shared helpers as a mixed-integer linear program for lp_solve.
 *
 * The shares would make the problem bilinear (a share times a time), but for a fixed
 * assignment the best shares are proportional to the work and give each group a time
 * that is a maximum of sums (shared.h), so the shares leave the program altogether and
 * come back afterwards from the chosen assignment:
 *
 *   variables  z_e in {0,1} per option e = (i, j, m) of shared_options: i offloads to j
 *              at m; h_j in {0,1}: j is a helper; Z >= 0 the makespan.
 *   minimise   Z
 *   subject to, for every agent k:
 *     (role)   sum_{e: slow k} z_e + h_k <= 1          (offloads once at most, or helps)
 *     (self)   Z >= tau_k - sum_{e: slow k} (tau_k - n_k fs[m_e]/s_k) z_e
 *              (k alone or helping: tau_k; offloading: its slow side)
 *   and for every helper candidate j:
 *     (serve)  sum_{m} z_(i,j,m) <= h_j   for every i with an option to j
 *     (comp)   Z >= tau_j h_j + sum_{e: fast j} W_e z_e   (own epoch, then all top work)
 *     (link)   Z >= sum_{e: fast j} D_e z_e               (all transfers into j)
 * With (role) and (serve), k is exactly one of alone, offloader, helper, and the right
 * sides are its time or its group's (comp, link with h_j = 0 force nothing: no member).
 * Z is bounded by max tau (all alone) above and by max_k min(tau_k, best T_k(j,m)) below,
 * as in ip.c. Options are pruned as in shared.h (useful, non-dominated splits).
 * Time limit and gaps as ip.c: an abort callback on the wall clock from entry; gaps 1e-9.
 * An answer that is not an assignment, or whose recomputed makespan is not Z, fails. */
#include "solver/shared.h"

#include <lpsolve/lp_lib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Beyond this many options the model is not built (the caller falls back). */
#define SHARED_IP_MAX_OPTIONS 200000

static double shared_ip_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int __WINAPI shared_ip_abort(lprec *lp, void *handle)
{
    (void)lp;
    double deadline = *(const double *)handle;
    return isfinite(deadline) && shared_ip_now() >= deadline ? TRUE : FALSE;
}

/* One row: sparse (columns, values), type, right side. 0 when lp_solve refuses it. */
static int shared_ip_row(lprec *lp, int count, REAL *values, int *columns, int type, double rhs)
{
    return add_constraintex(lp, count, values, columns, type, rhs);
}

int shared_ip(const PairingProblem *p, double time_limit, SharedResult *out, HsDiag *diag)
{
    int n = p->n, status = HS_E_NOMEM;
    double deadline = time_limit > 0 ? shared_ip_now() + time_limit : INFINITY;
    SharedOption *options = NULL;
    size_t n_options = 0, *first = NULL;
    lprec *lp = NULL;
    REAL *values = NULL, *solution = NULL;
    int *columns = NULL, *helper = NULL, *split = NULL;
    if (shared_options(p, &options, &n_options, &first) != HS_OK) goto fail;
    if (n_options > SHARED_IP_MAX_OPTIONS) {
        status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve not tried: more than %d options",
                             SHARED_IP_MAX_OPTIONS);
        goto fail;
    }
    int n_columns = (int)n_options + n + 1, z = n_columns; /* z_e: 1..E, h_k: E+1..E+n, Z */
    size_t row_size = n_options + (size_t)n + 2;
    values = malloc(row_size * sizeof *values);
    columns = malloc(row_size * sizeof *columns);
    solution = malloc(((size_t)n_columns + 1) * sizeof *solution);
    helper = malloc(((size_t)n + 1) * sizeof *helper);
    split = calloc((size_t)n + 1, sizeof *split);
    if (!values || !columns || !solution || !helper || !split) goto fail;
    lp = make_lp(0, n_columns);
    if (lp == NULL) goto fail;
    set_verbose(lp, NEUTRAL);
    put_abortfunc(lp, shared_ip_abort, &deadline);
    set_add_rowmode(lp, TRUE);
    int ok = 1;
    double lower = 0, upper = 0;
    for (int k = 0; k < n && ok; k++) {
        double tau = pairing_standalone(p, k), own = tau;
        upper = fmax(upper, tau);
        /* (role) and (self) */
        int count = 0;
        for (size_t e = first[k]; e < first[k + 1]; e++) {
            columns[count] = (int)e + 1;
            values[count++] = 1;
        }
        columns[count] = (int)n_options + k + 1;
        values[count++] = 1;
        ok = ok && shared_ip_row(lp, count, values, columns, LE, 1);
        count = 0;
        for (size_t e = first[k]; e < first[k + 1]; e++) {
            columns[count] = (int)e + 1;
            values[count++] = tau - options[e].slow_time;
            own = fmin(own, pairing_time(p, k, options[e].fast, options[e].split));
        }
        columns[count] = z;
        values[count++] = 1;
        ok = ok && shared_ip_row(lp, count, values, columns, GE, tau);
        lower = fmax(lower, own);
        /* (serve): the options of one link are consecutive, one row per helper */
        for (size_t e = first[k]; e < first[k + 1] && ok;) {
            int j = options[e].fast;
            count = 0;
            for (; e < first[k + 1] && options[e].fast == j; e++) {
                columns[count] = (int)e + 1;
                values[count++] = 1;
            }
            columns[count] = (int)n_options + j + 1;
            values[count++] = -1;
            ok = shared_ip_row(lp, count, values, columns, LE, 0);
        }
    }
    /* (comp) and (link) per helper candidate: a scan of the options each, O(n E) in all,
     * small beside what lp_solve then spends at any size it can solve */
    for (int j = 0; j < n && ok; j++) {
        int comp = 0;
        for (size_t e = 0; e < n_options; e++)
            if (options[e].fast == j) {
                columns[comp] = (int)e + 1;
                values[comp++] = -options[e].work;
            }
        if (comp == 0) continue;
        columns[comp] = (int)n_options + j + 1;
        values[comp] = -pairing_standalone(p, j);
        columns[comp + 1] = z;
        values[comp + 1] = 1;
        ok = shared_ip_row(lp, comp + 2, values, columns, GE, 0);
        int link = 0;
        for (size_t e = 0; e < n_options; e++)
            if (options[e].fast == j) {
                columns[link] = (int)e + 1;
                values[link++] = -options[e].transfer;
            }
        columns[link] = z;
        values[link] = 1;
        ok = ok && shared_ip_row(lp, link + 1, values, columns, GE, 0);
    }
    set_add_rowmode(lp, FALSE);
    for (int c = 1; c < z && ok; c++)
        ok = set_binary(lp, c, TRUE);
    values[0] = 1;
    columns[0] = z;
    ok = ok && set_obj_fnex(lp, 1, values, columns) && set_bounds(lp, z, lower, upper);
    if (!ok) {
        status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve could not build the model (%zu options)", n_options);
        goto fail;
    }
    set_minim(lp);
    set_mip_gap(lp, TRUE, 1e-9);
    set_mip_gap(lp, FALSE, 1e-9);
    if (isfinite(deadline)) {
        double left = deadline - shared_ip_now();
        if (left <= 0) {
            status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve ran out of time (limit %g s)", time_limit);
            goto fail;
        }
        set_timeout(lp, (long)ceil(left));
    }
    int result = solve(lp);
    if (result == TIMEOUT || result == USERABORT ||
        (result == SUBOPTIMAL && isfinite(deadline) && shared_ip_now() >= deadline)) {
        status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve ran out of time (limit %g s, %zu options)",
                             time_limit, n_options);
        goto fail;
    }
    if (result != OPTIMAL && result != PRESOLVED) {
        status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve: code %d (%zu options)", result, n_options);
        goto fail;
    }
    if (!get_variables(lp, solution)) {
        status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve gave no solution");
        goto fail;
    }
    for (int i = 0; i < n; i++)
        helper[i] = -1;
    for (size_t e = 0; e < n_options; e++) {
        if (solution[e] <= 0.5) continue;
        if (helper[options[e].slow] >= 0) {
            status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve's answer offloads agent %d twice",
                                 options[e].slow);
            goto fail;
        }
        helper[options[e].slow] = options[e].fast;
        split[options[e].slow] = options[e].split;
    }
    if (shared_result_from_assignment(p, helper, split, out) != HS_OK) {
        status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve's answer has a helper that offloads");
        goto fail;
    }
    double objective = solution[z - 1];
    if (!(fabs(out->makespan - objective) <= 1e-6 * fmax(1.0, out->makespan))) {
        status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve's Z = %.9g but its assignment takes %.9g",
                             objective, out->makespan);
        goto fail;
    }
    strcpy(out->solver, "ip");
    status = HS_OK;
fail:
    if (lp) delete_lp(lp);
    free(options);
    free(first);
    free(values);
    free(columns);
    free(solution);
    free(helper);
    free(split);
    return status;
}
