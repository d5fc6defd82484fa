/* pairing.h — ComDML's pairing problem and its solvers.
 * Agents i = 0..n-1 with n_i batches at s_i batches/s (standalone tau_i = n_i / s_i);
 * splits m = 0..M-1 with fs[m], ff[m] (compute fractions on the slow and the fast side)
 * and act[m] (bytes sent per batch); m = 0 is "no offload". If i offloads to j at m:
 *   T_i(j,m) = max(n_i fs[m] / s_i,  tau_j + n_i ff[m] / s_j,  n_i act[m] / b_ij)
 * Each agent is alone (time tau_i), an offloader or a helper (both take the pair's time),
 * in at most one pair. The makespan is the largest time; the solvers minimise it.
 * Links: a dense bandwidth matrix (b_ij, INFINITY on the diagonal, 0 = no link) or, for
 * large sparse networks, per-agent link lists; exactly one of the two is set. */
#ifndef SOLVER_PAIRING_H
#define SOLVER_PAIRING_H

#include "sim/hs_error.h"

#include <stddef.h>

typedef struct PairingProblem {
    int n, n_splits;
    double *batches;    /* (n) n_i */
    double *speed;      /* (n) s_i, batches per second */
    double *fs, *ff;    /* (n_splits) */
    double *act;        /* (n_splits) bytes per batch */
    double *bandwidth;  /* (n * n) row-major b_ij, or NULL when links are sparse */
    int *link_offsets;  /* (n + 1) sparse: links of i are link_to[link_offsets[i] ..] */
    int *link_to;
    double *link_bandwidth;
} PairingProblem;

typedef enum { PAIRING_ALONE = 0, PAIRING_OFFLOADER = 1, PAIRING_HELPER = 2 } PairingRole;

typedef struct PairingResult {
    int n;
    int *partner;       /* (n) -1 when alone */
    int *split;         /* (n) the pair's split (both members), 0 when alone */
    int *role;          /* (n) PairingRole */
    double *time;       /* (n) */
    double makespan;
    int fell_back;      /* ip only: lp_solve failed or timed out and exact answered */
    char note[200];     /* why it fell back, empty otherwise */
    char solver[16];    /* who produced it */
} PairingResult;

/* Allocates the arrays of a dense problem (bandwidth n*n, zeroed). */
int pairing_problem_init(PairingProblem *p, int n, int n_splits);
/* Allocates a problem whose links are given as lists (n_links entries in all). */
int pairing_problem_init_sparse(PairingProblem *p, int n, int n_splits, size_t n_links);
void pairing_problem_free(PairingProblem *p);
int pairing_result_init(PairingResult *r, int n);
void pairing_result_free(PairingResult *r);

double pairing_standalone(const PairingProblem *p, int i);
/* T_i(j,m) for a link of bandwidth b (INFINITY when b <= 0 or m == 0 is meaningless). */
double pairing_time_with(const PairingProblem *p, int i, int j, int m, double b);
/* T_i(j,m) on the dense matrix (INFINITY without a link). */
double pairing_time(const PairingProblem *p, int i, int j, int m);

/* An offload worth considering: i -> j at i's best split for that link, with
 * time < tau_i (offloading to anyone else cannot lower the makespan). */
typedef struct PairingEdge {
    int slow, fast, split;
    double time;
} PairingEdge;

/* All useful edges, grouped by slow agent in increasing order of (slow, fast). The
 * caller frees *edges. */
int pairing_useful_edges(const PairingProblem *p, PairingEdge **edges, size_t *count);

/* Fills out with the given pairs (pairs[k] = edge) and everyone else alone. */
void pairing_result_from_edges(const PairingProblem *p, const PairingEdge *pairs, size_t n_pairs,
                               PairingResult *out);

/* Checks a result against the problem: roles consistent, one pair per agent, times and
 * makespan recomputed. Returns 0 or HS_E_INTERNAL. */
int pairing_result_check(const PairingProblem *p, const PairingResult *r);

/* solver_name: "exact" (minimum makespan), "ip" (lp_solve integer program, falling back
 * to exact on failure or after ip_time_limit seconds), "greedy" (the published scheduler).
 * Errors: HS_E_INPUT (unknown solver), HS_E_NOMEM, HS_E_SOLVER. */
int solver_pair(const PairingProblem *p, const char *solver_name, double ip_time_limit, PairingResult *out,
                HsDiag *diag);
int solver_exact(const PairingProblem *p, PairingResult *out);
int solver_greedy(const PairingProblem *p, PairingResult *out);
/* Returns HS_E_SOLVER (result untouched) when lp_solve fails or times out. */
int solver_ip(const PairingProblem *p, double time_limit, PairingResult *out, HsDiag *diag);

#endif
