/* pairing.h — ComDML's pairing problem and its solvers.
 *
 * Agents i = 0..n-1 with n_i batches at s_i batches/s (standalone tau_i = n_i / s_i);
 * splits m = 0..M-1 with fs[m], ff[m] (compute fractions on the slow and the fast side)
 * and act[m] (bytes sent per batch); m = 0 is "no offload". If i offloads to j at m:
 *   T_i(j,m) = max(n_i fs[m] / s_i,  tau_j + n_i ff[m] / s_j,  n_i act[m] / b_ij)
 * That is the paper's cost (cost = PAIRING_COST_PAPER, the default). PAIRING_COST_EXACT
 * replaces it by the time hetsim's engine takes to play the pair's round out: latency, the
 * offloader's activation messages sharing (or queueing on) its link, and the pipeline's
 * tail; see pairing_time_with. Every solver reads T only through pairing_time_with, so
 * all of them minimise the same cost.
 * Each agent is alone (time tau_i), an offloader or a helper (both take the pair's time),
 * in at most one pair. The makespan is the largest time; the solvers minimise it. Both
 * costs give T_i(j,m) >= tau_j + n_i ff[m] / s_j >= tau_j, which is all exact.c needs.
 *
 * Links: a dense bandwidth matrix (b_ij row-major, INFINITY on the diagonal, 0 = no
 * link; b_ij is the i -> j direction, symmetry is not assumed) or, for large sparse
 * networks, per-agent link lists; exactly one of the two is set. Solvers are sized for
 * 1,000 agents with a full matrix and 10,000+ with sparse lists; memory is O(links).
 *
 * Ownership: the *_init functions allocate the arrays of a caller-owned struct, the
 * matching *_free releases them (NULL and zeroed structs are fine) and re-zeroes it. */
#ifndef SOLVER_PAIRING_H
#define SOLVER_PAIRING_H

#include "base/hs_error.h"

#include <stddef.h>

/* Which T_i(j,m) the solvers minimise. */
typedef enum {
    PAIRING_COST_PAPER = 0, /* the published formula above */
    PAIRING_COST_EXACT      /* the engine's play-out of the pair's round, to rounding */
} PairingCost;

/* Exact cost: how the offloader's activation messages travel, after the scenario's
 * [network] keys (sim/kernel/network.h). Each message i -> j waits its latency
 * max(latency_i, latency_j) once and transfers act[m] bytes at b_ij. */
typedef enum {
    PAIRING_NETWORK_MAXMIN = 0, /* model = maxmin, uplink = shared: latency first, then the
                                 * messages transferring share the link equally */
    PAIRING_NETWORK_FIFO,       /* model = fifo: one transfers at a time, its latency after
                                 * the transfer and off the link */
    PAIRING_NETWORK_MAXMIN_FIFO /* model = maxmin, uplink = fifo: one at a time, latency
                                 * then transfer, both holding the link */
} PairingNetwork;

/* How a helper's capacity is given out: to one offloader (ComDML's pairs, every solver
 * here) or shared among several (solver/shared.h, `capacity = shared` in an instance). */
typedef enum { PAIRING_CAPACITY_PAIRS = 0, PAIRING_CAPACITY_SHARED } PairingCapacity;
#define PAIRING_CAPACITY_NAMES "pairs|shared"

/* Plain data: the solvers only read it; pairing_problem_check says what they accept. */
typedef struct PairingProblem {
    int n, n_splits;
    PairingCost cost;       /* PAIRING_COST_PAPER after init */
    PairingNetwork network; /* exact cost only; PAIRING_NETWORK_MAXMIN after init */
    PairingCapacity capacity; /* PAIRING_CAPACITY_PAIRS after init; the solvers ignore it:
                               * callers pick solver_pair or solver_shared by it */
    double *latency;        /* (n) s, >= 0, exact cost only; zeros after init */
    double *batches;        /* (n) n_i >= 0 */
    double *speed;          /* (n) s_i > 0, batches per second */
    double *fs, *ff;        /* (n_splits) compute fractions; split 0 is never used for a pair */
    double *act;            /* (n_splits) bytes per batch */
    double *bandwidth;      /* (n, n) row-major b_ij, or NULL when links are sparse */
    int *link_offsets;      /* (n + 1) sparse: links of i are link_offsets[i] .. [i+1]-1 */
    int *link_to;           /* (links) other end of each link */
    double *link_bandwidth; /* (links) b_ij of each link */
} PairingProblem;

typedef enum { PAIRING_ALONE = 0, PAIRING_OFFLOADER = 1, PAIRING_HELPER = 2 } PairingRole;

typedef struct PairingResult {
    int n;
    int *partner;    /* (n) -1 when alone */
    int *split;      /* (n) the pair's split (both members), 0 when alone */
    int *role;       /* (n) PairingRole */
    double *time;    /* (n) finishing time: tau_i alone, the pair's T otherwise */
    double makespan; /* max of time[], 0 for n = 0 */
    int fell_back;   /* ip only: lp_solve failed or timed out and exact answered */
    char note[200];  /* why it fell back, empty otherwise */
    char solver[16]; /* who produced it: exact, ip, greedy, or ip>exact */
} PairingResult;

/* Allocates the arrays of a dense problem (all zero; bandwidth n*n). n >= 0, n_splits >= 1. */
int pairing_problem_init(PairingProblem *p, int n, int n_splits);
/* Allocates a problem whose links are given as lists (n_links entries in all). */
int pairing_problem_init_sparse(PairingProblem *p, int n, int n_splits, size_t n_links);
void pairing_problem_free(PairingProblem *p);
/* Checks what the solvers rely on: n >= 0, n_splits >= 1, batches finite >= 0, speed
 * finite > 0, fractions and act finite >= 0, bandwidths >= 0 or inf (not NaN), sparse
 * lists in range; under the exact cost also latencies finite >= 0, batches whole numbers
 * up to PAIRING_MAX_EXACT_BATCHES and a known network. HS_E_INPUT with a message naming
 * the first offending value. */
int pairing_problem_check(const PairingProblem *p, HsDiag *diag);

/* Allocates a result for n agents; free with pairing_result_free. */
int pairing_result_init(PairingResult *r, int n);
void pairing_result_free(PairingResult *r);

/* tau_i = n_i / s_i. */
double pairing_standalone(const PairingProblem *p, int i);
/* b_ij from the matrix or the link list; 0 without a link. O(degree) when sparse. */
double pairing_link(const PairingProblem *p, int i, int j);
/* T_i(j,m) over a link of bandwidth b, under p->cost; INFINITY when m is not an offload
 * split (m <= 0 or m >= n_splits), i == j, or there is no link (b <= 0).
 *
 * The exact cost (cost.c has the derivation) plays the pair's round as the engine does.
 * With n = n_i, per batch c = fs[m]/s_i on the slow side, f = ff[m]/s_j on the helper,
 * d = act[m]/b on the link, L = max(latency_i, latency_j): the slow side ends batch k at
 * k c and sends its activations; they reach j at A_k; j trains its own n_j batches (until
 * tau_j), then each top batch in arrival order: F_0 = tau_j, F_k = max(F_{k-1}, A_k) + f,
 * and T = F_n (the helper is the last of the pair to finish). When A_k is affine in k,
 *   T = max(tau_j + n f,  A_1 + n f,  A_n + f)
 * (the helper's own work then every top batch; waiting for the first batch; the last
 * batch's tail), with, for u = the time a message holds the link,
 *   A_1 = c + u + post,  A_n = c + (n-1) max(c, u) + u + post,
 *   fifo: u = d, post = L;  maxmin-fifo: u = L + d, post = 0;  maxmin with d <= c: u = d,
 *   post = L (no two transfers overlap).
 * Under maxmin with d > c the transfers overlap and share the link (processor sharing of
 * equal jobs arriving at k c + L): A_k has no closed form, and the recurrence runs over
 * the n batches, O(n). */
double pairing_time_with(const PairingProblem *p, int i, int j, int m, double b);
/* pairing_time_with when only times below limit matter: a result >= limit stands for some
 * time >= limit (the exact cost then skips its O(n_i) recurrence when a closed-form lower
 * bound already reaches limit). What the solvers' searches for a best split use. */
double pairing_time_below(const PairingProblem *p, int i, int j, int m, double b, double limit);
/* T_i(j,m) over the problem's own link i -> j. */
double pairing_time(const PairingProblem *p, int i, int j, int m);

/* Largest n_i the exact cost takes (it models every batch; O(n_i) in the worst case). */
#define PAIRING_MAX_EXACT_BATCHES 1000000

/* The words of PairingCost and PairingNetwork (instance files, [method] cost), and back:
 * -1 for an unknown word. */
#define PAIRING_COST_NAMES "paper|exact"
const char *pairing_cost_name(PairingCost cost);
int pairing_cost_parse(const char *word);

/* Checks a result against the problem: sizes, roles consistent (an offloader's partner
 * is a helper whose partner is it), one pair per agent, splits in 1..M-1 for pairs and 0
 * alone, each time recomputed from the problem (relative 1e-9) and the makespan. Returns
 * HS_OK or HS_E_INTERNAL. */
int pairing_result_check(const PairingProblem *p, const PairingResult *r);

/* The solvers' names, the one list every caller checks against: a scenario's [method]
 * solver key takes these choices, `hetsim pair --solver` these words. */
#define SOLVER_NAMES "exact|ip|greedy"
/* 1 if name is one of SOLVER_NAMES. */
int solver_known(const char *name);

/* The one entry point. out must come from pairing_result_init(out, p->n).
 * solver_name: "exact" (minimum makespan), "ip" (lp_solve integer program; on failure or
 * after ip_time_limit seconds of wall time, <= 0 for none, exact answers, out->fell_back
 * is 1 and out->note says why), "greedy" (the published scheduler).
 * Errors: HS_E_INPUT (unknown solver, invalid problem), HS_E_NOMEM; message in diag. */
int solver_pair(const PairingProblem *p, const char *solver_name, double ip_time_limit, PairingResult *out,
                HsDiag *diag);

/* The solvers themselves, on a problem that passed pairing_problem_check.
 * exact pairs only the agents that must offload to meet the optimum; others stay alone
 * even where a pair would shorten their own time (only the makespan is minimised). */
int solver_exact(const PairingProblem *p, PairingResult *out);
int solver_greedy(const PairingProblem *p, PairingResult *out);
/* Returns HS_E_SOLVER (out untouched, reason in diag) when lp_solve fails, its answer
 * does not check out, or time_limit (seconds, <= 0 none) runs out. */
int solver_ip(const PairingProblem *p, double time_limit, PairingResult *out, HsDiag *diag);

#endif
