/* shared_exact.c — the minimum makespan with shared helpers, by enumeration (small n): the
 * reference the MILP and the greedy heuristic are tested against.
 *
 * Agents are decided in index order; each either stays on its own (alone, or a helper if
 * someone picks it) or takes one of its options (shared.h: useful, non-dominated (j, m)).
 * Rules kept while descending: an offloader's helper never offloads (a later agent may not
 * pick an earlier offloader; an agent already picked by an earlier one may not offload).
 * The bound of a partial assignment only grows as agents are added: the decided agents'
 * slow sides and standalone times, each group's tau_j + sum W and sum D, and for every
 * undecided agent k its own best, min(tau_k, min over its options of T_k(j,m)) — k ends no
 * sooner whatever it does (as a helper it ends after tau_k). A branch whose bound reaches
 * the incumbent is cut; the incumbent starts as greedy's answer, so only strictly better
 * assignments replace it, and the answer is the first optimum in (stay, options in order)
 * depth-first order: deterministic. Worst case exponential; SHARED_EXACT_MAX_AGENTS. */
#include "solver/shared.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ExactSearch {
    const PairingProblem *p;
    const SharedOption *options;
    const size_t *first;
    double *tau, *suffix_best; /* suffix_best[k] = max over agents >= k of their own best */
    double *work, *transfer;   /* per helper: sum W, sum D of its members so far */
    int *members;              /* per agent: how many picked it */
    int *helper, *split;       /* the current assignment */
    int *best_helper, *best_split;
    double best;
} ExactSearch;

static void exact_descend(ExactSearch *s, int k, double bound)
{
    const PairingProblem *p = s->p;
    if (k < p->n) bound = fmax(bound, s->suffix_best[k]);
    if (!(bound < s->best)) return;
    if (k == p->n) {
        s->best = bound;
        memcpy(s->best_helper, s->helper, (size_t)p->n * sizeof *s->helper);
        memcpy(s->best_split, s->split, (size_t)p->n * sizeof *s->split);
        return;
    }
    /* k on its own: tau_k (a helper's group time already includes it through tau_j + W) */
    exact_descend(s, k + 1, fmax(bound, s->tau[k]));
    if (s->members[k] > 0) return; /* picked by an earlier agent: k helps, never offloads */
    for (size_t e = s->first[k]; e < s->first[k + 1]; e++) {
        const SharedOption *o = &s->options[e];
        int j = o->fast;
        if (j < k && s->helper[j] >= 0) continue; /* j already offloads */
        s->work[j] += o->work;
        s->transfer[j] += o->transfer;
        s->members[j]++;
        s->helper[k] = j;
        s->split[k] = o->split;
        double group = fmax(s->tau[j] + s->work[j], s->transfer[j]);
        exact_descend(s, k + 1, fmax(bound, fmax(o->slow_time, group)));
        s->helper[k] = -1;
        s->split[k] = 0;
        s->members[j]--;
        s->work[j] -= o->work;
        s->transfer[j] -= o->transfer;
        if (s->members[j] == 0) s->work[j] = s->transfer[j] = 0; /* no drift from += -= */
    }
}

int shared_exact(const PairingProblem *p, SharedResult *out)
{
    int n = p->n, status = HS_E_NOMEM;
    ExactSearch s;
    memset(&s, 0, sizeof s);
    s.p = p;
    SharedOption *options = NULL;
    size_t n_options = 0, *first = NULL;
    size_t count = (size_t)n + 1;
    s.tau = calloc(count, sizeof *s.tau);
    s.suffix_best = calloc(count, sizeof *s.suffix_best);
    s.work = calloc(count, sizeof *s.work);
    s.transfer = calloc(count, sizeof *s.transfer);
    s.members = calloc(count, sizeof *s.members);
    s.helper = calloc(count, sizeof *s.helper);
    s.split = calloc(count, sizeof *s.split);
    s.best_helper = calloc(count, sizeof *s.best_helper);
    s.best_split = calloc(count, sizeof *s.best_split);
    if (!s.tau || !s.suffix_best || !s.work || !s.transfer || !s.members || !s.helper || !s.split ||
        !s.best_helper || !s.best_split)
        goto fail;
    if ((status = shared_greedy(p, out)) != HS_OK) goto fail;
    status = HS_E_NOMEM;
    if (shared_options(p, &options, &n_options, &first) != HS_OK) goto fail;
    s.options = options;
    s.first = first;
    for (int i = 0; i < n; i++) {
        s.tau[i] = pairing_standalone(p, i);
        s.helper[i] = -1;
        s.best_helper[i] = out->helper[i];
        s.best_split[i] = out->split[i];
    }
    for (int k = n - 1; k >= 0; k--) {
        double own = s.tau[k];
        for (size_t e = first[k]; e < first[k + 1]; e++)
            own = fmin(own, pairing_time(p, k, options[e].fast, options[e].split));
        s.suffix_best[k] = fmax(own, s.suffix_best[k + 1]);
    }
    s.best = out->makespan;
    exact_descend(&s, 0, 0);
    if ((status = shared_result_from_assignment(p, s.best_helper, s.best_split, out)) != HS_OK) {
        status = HS_E_INTERNAL;
        goto fail;
    }
    strcpy(out->solver, "exact");
    status = HS_OK;
fail:
    free(options);
    free(first);
    free(s.tau);
    free(s.suffix_best);
    free(s.work);
    free(s.transfer);
    free(s.members);
    free(s.helper);
    free(s.split);
    free(s.best_helper);
    free(s.best_split);
    return status;
}
