/* shared_greedy.c — the shared-helper heuristic for large n: ComDML's published scheduler
 * (greedy.c) with helpers that stay available. Agents go slowest first (standalone time,
 * ties to the lower index); an agent still on its own (neither a helper nor an offloader)
 * looks at each of its options (shared.h) whose helper does not offload, and takes the one
 * that gives the smallest time for it and the helper's group once it joins,
 *   max(n_i fs[m]/s_i, tau_j + sum W + W_i, sum D + D_i),
 * if that is below tau_i (ties: lower helper, then lower split). Joining never raises the
 * makespan: the group's new time is below tau_i, and i was still on its own at tau_i.
 * An agent that became a helper does not offload later. O(options) after the option list.
 * Not optimal: an early slow agent may fill the helper a later one needed, or offload to
 * an agent whose own offload would have helped more. */
#include "solver/shared.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct SharedGreedyAgent {
    double tau;
    int agent;
} SharedGreedyAgent;

static int shared_greedy_slowest_first(const void *a, const void *b)
{
    const SharedGreedyAgent *x = a, *y = b;
    if (x->tau != y->tau) return x->tau > y->tau ? -1 : 1;
    return (x->agent > y->agent) - (x->agent < y->agent);
}

int shared_greedy(const PairingProblem *p, SharedResult *out)
{
    int n = p->n, status = HS_E_NOMEM;
    SharedOption *options = NULL;
    size_t n_options = 0, *first = NULL, count = (size_t)n + 1;
    SharedGreedyAgent *order = malloc(count * sizeof *order);
    double *work = calloc(count, sizeof *work), *transfer = calloc(count, sizeof *transfer);
    int *helper = malloc(count * sizeof *helper), *split = calloc(count, sizeof *split);
    int *members = calloc(count, sizeof *members);
    if (!order || !work || !transfer || !helper || !split || !members) goto fail;
    if (shared_options(p, &options, &n_options, &first) != HS_OK) goto fail;
    for (int i = 0; i < n; i++) {
        order[i] = (SharedGreedyAgent){.tau = pairing_standalone(p, i), .agent = i};
        helper[i] = -1;
    }
    qsort(order, (size_t)n, sizeof *order, shared_greedy_slowest_first);
    for (int k = 0; k < n; k++) {
        int i = order[k].agent;
        if (members[i] > 0) continue;
        double best = order[k].tau;
        size_t pick = first[i + 1];
        for (size_t e = first[i]; e < first[i + 1]; e++) {
            const SharedOption *o = &options[e];
            int j = o->fast;
            if (helper[j] >= 0) continue;
            double t = fmax(o->slow_time,
                            fmax(pairing_standalone(p, j) + work[j] + o->work, transfer[j] + o->transfer));
            /* ties to the lower helper, then the lower split, whatever the links' order */
            int tie = pick < first[i + 1] && t == best &&
                      (j < options[pick].fast || (j == options[pick].fast && o->split < options[pick].split));
            if (t < best || tie) {
                best = t;
                pick = e;
            }
        }
        if (pick == first[i + 1]) continue;
        const SharedOption *o = &options[pick];
        helper[i] = o->fast;
        split[i] = o->split;
        work[o->fast] += o->work;
        transfer[o->fast] += o->transfer;
        members[o->fast]++;
    }
    if ((status = shared_result_from_assignment(p, helper, split, out)) != HS_OK) {
        status = HS_E_INTERNAL;
        goto fail;
    }
    strcpy(out->solver, "greedy");
    status = HS_OK;
fail:
    free(options);
    free(first);
    free(order);
    free(work);
    free(transfer);
    free(helper);
    free(split);
    free(members);
    return status;
}
