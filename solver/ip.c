/* ip.c — the pairing as an integer program, solved by lp_solve: the independent check
 * of the exact solver, and the paper's formulation.
 *   variables  x_e in {0,1} for each useful edge e = (i -> j at i's best split m for j)
 *              (a worse split for the same pair can never lower the makespan), and Z
 *   minimise   Z
 *   subject to for every agent k: sum_{e out of k} x_e + sum_{e into k} x_e <= 1
 *              for every agent i: Z + sum_{e out of i} (tau_i - T_e) x_e >= tau_i
 * An agent's time is tau_i alone or T_e when it offloads over e; a helper's time is its
 * pair's T_e, bounded by the offloader's row; tau_j <= T_e, so helpers need no row.
 * Gaps are set to 1e-9 so lp_solve proves optimality rather than stopping near it. */
#include "solver/pairing.h"

#include <lpsolve/lp_lib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int solver_ip(const PairingProblem *p, double time_limit, PairingResult *out, HsDiag *diag)
{
    int n = p->n, status = HS_E_NOMEM;
    PairingEdge *edges = NULL, *pairs = NULL;
    size_t n_edges = 0, n_pairs = 0;
    lprec *lp = NULL;
    REAL *row = NULL, *values = NULL;
    int *cols = NULL;
    if (pairing_useful_edges(p, &edges, &n_edges) != HS_OK) return HS_E_NOMEM;
    int n_cols = (int)n_edges + 1, z = n_cols;
    row = malloc(((size_t)n_cols + 1) * sizeof *row);
    cols = malloc(((size_t)n_cols + 1) * sizeof *cols);
    values = malloc(((size_t)n_cols + 1) * sizeof *values);
    pairs = malloc(((size_t)n + 1) * sizeof *pairs);
    if (!row || !cols || !values || !pairs) goto done;
    lp = make_lp(0, n_cols);
    if (lp == NULL) goto done;
    set_verbose(lp, NEUTRAL);
    set_add_rowmode(lp, TRUE);
    for (int k = 0; k < n; k++) {
        int count = 0;
        for (size_t e = 0; e < n_edges; e++)
            if (edges[e].slow == k || edges[e].fast == k) {
                cols[count] = (int)e + 1;
                row[count++] = 1.0;
            }
        if (count > 1 && !add_constraintex(lp, count, row, cols, LE, 1.0)) goto solver_error;
    }
    for (int i = 0; i < n; i++) {
        double tau = pairing_standalone(p, i);
        int count = 0;
        cols[count] = z;
        row[count++] = 1.0;
        for (size_t e = 0; e < n_edges; e++)
            if (edges[e].slow == i) {
                cols[count] = (int)e + 1;
                row[count++] = tau - edges[e].time;
            }
        if (!add_constraintex(lp, count, row, cols, GE, tau)) goto solver_error;
    }
    set_add_rowmode(lp, FALSE);
    for (int c = 1; c < z; c++) set_binary(lp, c, TRUE);
    cols[0] = z;
    row[0] = 1.0;
    if (!set_obj_fnex(lp, 1, row, cols)) goto solver_error;
    set_minim(lp);
    set_mip_gap(lp, TRUE, 1e-9);
    set_mip_gap(lp, FALSE, 1e-9);
    if (time_limit > 0) set_timeout(lp, (long)ceil(time_limit));
    int result = solve(lp);
    if (result != OPTIMAL && result != PRESOLVED) {
        status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve %s (code %d)",
                             result == TIMEOUT || result == SUBOPTIMAL ? "ran out of time" : "failed", result);
        goto done;
    }
    if (!get_variables(lp, values)) goto solver_error;
    for (size_t e = 0; e < n_edges; e++)
        if (values[e] > 0.5) pairs[n_pairs++] = edges[e];
    pairing_result_from_edges(p, pairs, n_pairs, out);
    snprintf(out->solver, sizeof out->solver, "ip");
    status = HS_OK;
    goto done;
solver_error:
    status = hs_diag_set(diag, HS_E_SOLVER, NULL, 0, "lp_solve could not build the model");
done:
    if (lp) delete_lp(lp);
    free(edges);
    free(pairs);
    free(row);
    free(cols);
    free(values);
    return status;
}
