/* cost.c — T_i(j,m), the time of a pair (i offloads to j at split m): the paper's formula
 * and the exact cost, the engine's play-out of the pair's round (sim/methods/comdml.c).
 *
 * What the engine does, per round, for a pair (i offloads n = n_i batches to j at m):
 *  - i's processor runs its n slow-side steps back to back from the round's start: step k
 *    ends at S_k = k c (c = fs[m]/s_i); at S_k i sends act[m] bytes to j;
 *  - the message reaches j at A_k: under maxmin it first waits its latency L (using no
 *    bandwidth), then transfers on up_i and down_j, sharing them with the other messages
 *    transferring there — only i's own activations: i sends nothing else during the epoch,
 *    j receives from i only (one offloader per helper) and the all-reduce starts after
 *    everyone's epoch; under fifo it waits for i's earlier messages, transfers alone
 *    (act[m]/b) and arrives L later; under maxmin with uplink = fifo it waits for the
 *    earlier ones, then latency and transfer;
 *  - j's processor (FIFO) runs its own n_j steps first (until tau_j = n_j / s_j, booked at
 *    the round's start), then one top step of f = ff[m]/s_j per activation, each booked at
 *    its arrival: F_k = max(F_{k-1}, A_k) + f with F_0 = tau_j;
 *  - the pairings row's actual_s is F_n, the end of j's last top step (i ends at S_n <= A_n).
 * So T = F_n = max(tau_j + n f, max_k (A_k + (n - k + 1) f)): the helper is either busy
 * from its own work straight through, or it last waited for batch k and worked after it.
 *
 * Closed forms. Message k holds i's link for u (the transfer d = act[m]/b, plus L under
 * maxmin-fifo, where the latency holds the queue too) and arrives post after that (L under
 * fifo, 0 under maxmin-fifo). The slow side produces one message per c, so with queueing
 * the k-th starts at c + (k-1) max(c, u) (the queue never empties once u > c) and arrives
 * at A_k = c + (k-1) max(c, u) + u + post. Under maxmin with d <= c, transfer k ends by
 * k c + L + d <= (k+1) c + L, before the next one begins: no sharing, u = d, post = L.
 * A_k affine in k makes A_k + (n-k+1) f affine too, so its maximum is at k = 1 or k = n:
 *   T = max(tau_j + n f, A_1 + n f, A_n + f).
 * Each of the three is at least the matching term of the paper's formula (A_n >= n c,
 * A_n >= n d, the same tau_j + n f), so the paper's cost is a lower bound of the exact one.
 *
 * Maxmin with d > c: transfers overlap, and the ones in flight share i's link equally
 * (same links, same weight, also under LV08): processor sharing of n equal jobs of d
 * arriving at k c + L. The link never idles from the first arrival on (work arrives
 * faster than it leaves), so the last one still arrives at c + L + n d, as with queueing;
 * the others arrive later than a queue would deliver them, by amounts with no closed form.
 * pairing_shared_finish plays the n jobs out in virtual time (each job's attained service
 * is the same for all present ones), O(n) time and memory, and folds F_k as it goes. It
 * is skipped when the helper is still on its own work at the last arrival (then T =
 * tau_j + n f, whatever the order) — the common case of a busy helper. */
#include "solver/pairing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Jobs whose departure tags fit on the stack; more go to the heap. */
enum { PAIRING_STACK_JOBS = 512 };

/* The helper's end F_n under processor sharing: n >= 1 equal messages of d seconds (at the
 * full link) arriving at k c + L, k = 1..n, with d > c >= 0; own work until tau_j, f per
 * top batch. INFINITY if the heap runs out (no pair rather than a wrong time). */
static double pairing_shared_finish(int n, double c, double d, double latency, double tau_j, double f)
{
    double stack[PAIRING_STACK_JOBS];
    double *tag = n <= PAIRING_STACK_JOBS ? stack : malloc((size_t)n * sizeof *tag);
    if (tag == NULL) return INFINITY;
    /* virtual time: the service every job present since time 0 would have received;
     * job k leaves when it reaches tag[k] = (virtual time at its arrival) + d. Jobs leave
     * in arrival order, since equal sizes and equal shares keep the oldest ahead. */
    double now = c + latency, virtual_time = 0, finish = tau_j;
    int head = 0, next = 0; /* present jobs: head .. next-1 (0-based) */
    while (head < n) {
        int present = next - head;
        double arrival = next < n ? (double)(next + 1) * c + latency : INFINITY;
        if (present == 0) {
            now = arrival;
            tag[next++] = virtual_time + d;
            continue;
        }
        double departure = now + (tag[head] - virtual_time) * present;
        if (arrival <= departure) {
            virtual_time += (arrival - now) / present;
            now = arrival;
            tag[next++] = virtual_time + d;
        } else {
            virtual_time = tag[head++];
            now = departure;
            finish = fmax(finish, now) + f;
        }
    }
    if (tag != stack) free(tag);
    return finish;
}

static double pairing_time_paper(const PairingProblem *p, int i, int j, int m, double b)
{
    double n = p->batches[i];
    double slow = n * p->fs[m] / p->speed[i];
    double fast = pairing_standalone(p, j) + n * p->ff[m] / p->speed[j];
    /* act = 0 over an infinite link would be 0/inf = 0 anyway; the test keeps 0*inf out */
    double comm = p->act[m] > 0 ? n * p->act[m] / b : 0;
    double t = slow > fast ? slow : fast;
    return t > comm ? t : comm;
}

static double pairing_time_exact(const PairingProblem *p, int i, int j, int m, double b, double limit)
{
    int n = (int)p->batches[i]; /* a whole number: pairing_problem_check */
    double tau_j = pairing_standalone(p, j);
    if (n == 0) return tau_j;
    double c = p->fs[m] / p->speed[i], f = p->ff[m] / p->speed[j], d = p->act[m] / b;
    double latency = fmax(p->latency[i], p->latency[j]);
    double hold = d, post = latency; /* fifo, and maxmin without overlap */
    if (p->network == PAIRING_NETWORK_MAXMIN_FIFO) {
        hold = latency + d;
        post = 0;
    }
    double first = c + hold + post, last = c + (n - 1) * fmax(c, hold) + hold + post;
    double own = tau_j + n * f, queued = fmax(own, fmax(first + n * f, last + f));
    if (p->network == PAIRING_NETWORK_MAXMIN && d > c) {
        /* the last arrival is the same under sharing (see above); the others are later */
        if (tau_j >= last) return own;
        /* equal jobs leave a queue no later than they leave processor sharing (the queue
         * serves the least remaining work first), so the queue's time is a lower bound */
        if (queued >= limit) return queued;
        return pairing_shared_finish(n, c, d, latency, tau_j, f);
    }
    return queued;
}

double pairing_time_below(const PairingProblem *p, int i, int j, int m, double b, double limit)
{
    if (m <= 0 || m >= p->n_splits || i == j || !(b > 0)) return INFINITY;
    if (p->cost == PAIRING_COST_EXACT) return pairing_time_exact(p, i, j, m, b, limit);
    return pairing_time_paper(p, i, j, m, b);
}

double pairing_time_with(const PairingProblem *p, int i, int j, int m, double b)
{
    return pairing_time_below(p, i, j, m, b, INFINITY);
}

double pairing_time(const PairingProblem *p, int i, int j, int m)
{
    return pairing_time_with(p, i, j, m, pairing_link(p, i, j));
}

const char *pairing_cost_name(PairingCost cost)
{
    return cost == PAIRING_COST_EXACT ? "exact" : "paper";
}

int pairing_cost_parse(const char *word)
{
    if (strcmp(word, "paper") == 0) return PAIRING_COST_PAPER;
    if (strcmp(word, "exact") == 0) return PAIRING_COST_EXACT;
    return -1;
}
