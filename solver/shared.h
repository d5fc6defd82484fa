/* shared.h — ComDML's offloading with shared helpers (issue #33 item 6, after "Decentralized
 * Proactive Model Offloading and Resource Allocation for Split and Federated Learning"):
 * a helper j may serve a set S_j of offloaders at once, dividing its compute (what is left
 * after its own epoch) and its receiving link among them, instead of ComDML's one-to-one
 * pairs. Instance files select it with `capacity = shared` (instance.h); docs/pair.md has
 * the model and docs/methods/proactive-notes.md where it departs from the paper.
 *
 * Model (the paper's cost, PAIRING_COST_PAPER, extended with shares). Offloader i in S_j at
 * split m_i gets a fraction x_ij of j's compute once j's own n_j batches are done
 * (sum_i x_ij <= 1) and a fraction y_ij of j's receiving time (sum_i y_ij <= 1; b_ij is
 * what i -> j carries with the whole of it). Then
 *   T_i = max( n_i fs[m_i]/s_i,  tau_j + n_i ff[m_i]/(x_ij s_j),  n_i act[m_i]/(y_ij b_ij) ).
 * With |S_j| = 1 and x = y = 1 this is pairing.h's T_i(j,m). For a fixed assignment the
 * best shares are proportional to the work, x_ij = W_i / sum_k W_k with W_i = n_i ff[m_i]/s_j,
 * y_ij = D_i / sum_k D_k with D_i = n_i act[m_i]/b_ij: every member's compute then ends at
 * the same instant and so does every transfer (no share can be lowered without another
 * member ending later), and the group's time has a closed form, linear in the assignment:
 *   G_j(S_j) = max( max_{i in S_j} n_i fs[m_i]/s_i,  tau_j + sum_{i in S_j} W_i,
 *                   sum_{i in S_j} D_i ).
 * Member i finishes at max(n_i fs[m_i]/s_i, tau_j + sum W, sum D) <= G_j; the helper at
 * G_j (the last of its group). The makespan is the largest time over all agents; every
 * solver minimises it. An agent is alone, an offloader (to one helper) or a helper (of
 * one or more offloaders), never two of these. */
#ifndef SOLVER_SHARED_H
#define SOLVER_SHARED_H

#include "solver/pairing.h"

/* The exact (enumeration) solver's size limit: its search is exponential in n. */
#define SHARED_EXACT_MAX_AGENTS 14

typedef struct SharedResult {
    int n;
    int *helper;          /* (n) offloader: its helper; -1 otherwise */
    int *split;           /* (n) offloader: its split; 0 otherwise */
    int *role;            /* (n) PairingRole */
    int *members;         /* (n) helper: how many offloaders it serves; 0 otherwise */
    double *share;        /* (n) offloader: x_ij, its fraction of the helper's compute */
    double *link_share;   /* (n) offloader: y_ij, its fraction of the helper's receiving */
    double *time;         /* (n) finishing time: tau alone, T_i offloader, G_j helper */
    double makespan;      /* max of time[], 0 for n = 0 */
    int fell_back;        /* ip only: lp_solve failed or timed out and exact/greedy answered */
    char note[200];       /* why it fell back, empty otherwise */
    char solver[24];      /* exact, ip, greedy, ip>exact or ip>greedy */
} SharedResult;

int shared_result_init(SharedResult *r, int n);
void shared_result_free(SharedResult *r);

/* Fills r (sized for p->n) from an assignment: helper[i] (-1 or another agent that does
 * not offload itself) and split[i] (1..M-1 for offloaders). Computes roles, proportional
 * shares, times and the makespan. HS_E_INPUT if the assignment is not one. */
int shared_result_from_assignment(const PairingProblem *p, const int *helper, const int *split, SharedResult *r);

/* Checks a result against the problem: roles consistent, splits in range, links present,
 * shares sum to 1 per helper, every time recomputed (relative 1e-9). HS_OK or
 * HS_E_INTERNAL. */
int shared_result_check(const PairingProblem *p, const SharedResult *r);

/* The one entry point, as solver_pair: "exact" (enumeration with pruning, n <=
 * SHARED_EXACT_MAX_AGENTS), "ip" (lp_solve MILP; on failure or past ip_time_limit exact
 * answers when n allows, greedy otherwise, and out->fell_back / note say so), "greedy"
 * (slowest first joins the group that ends soonest). The problem must use the paper's
 * cost. HS_E_INPUT (unknown solver, invalid problem, exact cost, too many agents for
 * exact), HS_E_NOMEM. */
int solver_shared(const PairingProblem *p, const char *solver_name, double ip_time_limit, SharedResult *out,
                  HsDiag *diag);

/* The solvers, on a checked problem under the paper's cost. */
int shared_exact(const PairingProblem *p, SharedResult *out);
int shared_greedy(const PairingProblem *p, SharedResult *out);
int shared_ip(const PairingProblem *p, double time_limit, SharedResult *out, HsDiag *diag);

/* Internal to the shared solvers: the offload options worth considering. Option (i, j, m)
 * is kept when i's time with j to itself, T_i(j,m) of pairing.h (a lower bound of its time
 * in any group of j), is below tau_i — otherwise i alone does no worse and leaves j's group
 * no later — and no other split of the same link is at least as good in fs, ff and act
 * (a dominated split can be swapped for its dominator without raising any time). */
typedef struct SharedOption {
    int slow, fast, split;
    double slow_time; /* n_i fs[m]/s_i */
    double work;      /* W = n_i ff[m]/s_j */
    double transfer;  /* D = n_i act[m]/b_ij */
} SharedOption;

/* All options grouped by slow agent (first[i] .. first[i+1]-1), each group in the order of
 * i's links (helper index for a dense matrix), then split; the options of one link are
 * consecutive. The caller frees *options and *first. O(links * M + M^2). */
int shared_options(const PairingProblem *p, SharedOption **options, size_t *count, size_t **first);

#endif
