/* prune.c — per-agent keep ratios, their costs and the nested all-reduce shells
 * (see prune.h). Work is O(n log n) per run for the ratios and per averaging for the
 * shells, memory O(n), so timing mode scales as the unpruned methods do. */
#include "sim/stages/prune.h"

#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* FLOPs of one step of batch on the sub-model at keep, as engine_step_flops does it. */
static double prune_step_flops(const ModelSpec *spec, int batch, double keep, double *params)
{
    ModelSpec sub;
    ModelProfile profile;
    if (model_width_spec(spec, keep, &sub) != HS_OK || model_profile(&sub, &profile) != HS_OK) return NAN;
    if (params) *params = profile.total_params;
    return batch * (profile.total_flops + profile.loss_flops);
}

double prune_makespan_keep(const ModelSpec *spec, const ModelProfile *full, int batch, double tau, double target,
                           double min_keep)
{
    if (!(tau > target)) return 1.0;
    double f1 = batch * (full->total_flops + full->loss_flops), budget = f1 * target / tau;
    /* F is a nondecreasing step function of r: bisect for the largest r with F(r) <= budget */
    double lo = 0, hi = 1;
    for (int it = 0; it < 60; it++) {
        double mid = 0.5 * (lo + hi);
        if (prune_step_flops(spec, batch, mid, NULL) <= budget) lo = mid;
        else hi = mid;
    }
    return lo < min_keep ? min_keep : lo;
}

static int prune_compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int prune_ratios(Engine *e, const int *steps, Prune *p)
{
    const Scenario *sc = e->sc;
    int n = e->world.n, batch = sc->model.batch;
    double target_ratio = scenario_param_number(sc, "prune_target"), min_keep = scenario_param_number(sc, "prune_min");
    double *tau = malloc((size_t)n * sizeof *tau), *sorted = malloc((size_t)n * sizeof *sorted);
    if (!tau || !sorted) {
        free(tau);
        free(sorted);
        return HS_E_NOMEM;
    }
    double f1 = engine_step_flops(e, batch);
    for (int i = 0; i < n; i++) {
        int s = steps ? steps[i] : 1;
        tau[i] = sorted[i] = s * f1 / e->world.agents[i].compute;
    }
    qsort(sorted, (size_t)n, sizeof *sorted, prune_compare_double);
    double median = sorted[(n - 1) / 2];
    for (int i = 0; i < n; i++) {
        if (!(tau[i] > median)) p->keep[i] = 1.0;
        else if (isnan(target_ratio)) p->keep[i] = prune_makespan_keep(&sc->model, &e->profile, batch, tau[i], median, min_keep);
        else p->keep[i] = target_ratio;
        double params;
        p->step_flops[i] = p->keep[i] < 1 ? prune_step_flops(&sc->model, batch, p->keep[i], &params) : f1;
        p->bytes[i] = p->keep[i] < 1 ? 4.0 * params : engine_model_bytes(e);
    }
    free(tau);
    free(sorted);
    return HS_OK;
}

int prune_create(Engine *e, const int *steps, Prune *p)
{
    memset(p, 0, sizeof *p);
    p->on = scenario_param_index(e->sc, "prune") == 1;
    if (!p->on) return HS_OK;
    int n = p->n = e->world.n;
    p->keep = calloc((size_t)n, sizeof *p->keep);
    p->step_flops = calloc((size_t)n, sizeof *p->step_flops);
    p->bytes = calloc((size_t)n, sizeof *p->bytes);
    p->widths = calloc((size_t)n, sizeof *p->widths);
    p->shell_keep = calloc((size_t)n, sizeof *p->shell_keep);
    p->shell_bytes = calloc((size_t)n, sizeof *p->shell_bytes);
    p->order = calloc((size_t)n, sizeof *p->order);
    p->shells = calloc((size_t)n, sizeof *p->shells);
    if (!p->keep || !p->step_flops || !p->bytes || !p->widths || !p->shell_keep || !p->shell_bytes ||
        !p->order || !p->shells)
        return HS_E_NOMEM;
    int status = prune_ratios(e, steps, p);
    if (status != HS_OK || e->trainer == NULL) return status;
    for (int i = 0; i < n; i++) {
        if (p->keep[i] >= 1) continue;
        if ((status = model_width_create(&e->sc->model, p->keep[i], &p->widths[i])) != HS_OK)
            return hs_diag_set(e->diag, status, NULL, 0, "cannot build the sub-model of keep ratio %g", p->keep[i]);
    }
    return HS_OK;
}

void prune_free(Prune *p)
{
    for (int i = 0; p->widths && i < p->n; i++) model_width_free(p->widths[i]);
    free(p->widths);
    free(p->keep);
    free(p->step_flops);
    free(p->bytes);
    free(p->shell_keep);
    free(p->shell_bytes);
    free(p->order);
    free(p->shells);
    memset(p, 0, sizeof *p);
}

double prune_smallest_keep(const Prune *p)
{
    double smallest = 1;
    for (int i = 0; i < p->n; i++)
        if (p->keep[i] < smallest) smallest = p->keep[i];
    return smallest;
}

/* qsort context-free: members are sorted through (keep, position) pairs */
typedef struct PruneRank {
    double keep;
    int position, agent;
} PruneRank;

static int prune_compare_rank(const void *a, const void *b)
{
    const PruneRank *x = a, *y = b;
    if (x->keep != y->keep) return x->keep < y->keep ? 1 : -1; /* larger ratios first */
    return (x->position > y->position) - (x->position < y->position);
}

int prune_shells_begin(Prune *p, const int *members, int n_members, int blocking, int kind)
{
    /* Members by ratio, largest first (ties in member order): shell l's members, those
     * with ratio >= k_l, are a prefix. A ring's time does not depend on its order (every
     * member sends on its uplink and receives on its downlink once per step), so the
     * prefix serves as the ring. O(n log n) time and O(n) memory per averaging. */
    PruneRank *rank = malloc((size_t)n_members * sizeof *rank);
    if (rank == NULL) return HS_E_NOMEM;
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        rank[k] = (PruneRank){.keep = p->keep[i], .position = k, .agent = i};
    }
    qsort(rank, (size_t)n_members, sizeof *rank, prune_compare_rank);
    for (int k = 0; k < n_members; k++) p->order[k] = rank[k].agent;
    /* distinct ratios ascending: walk the sorted list from its end */
    p->n_shells = 0;
    for (int k = n_members - 1; k >= 0; k--) {
        if (p->n_shells > 0 && p->shell_keep[p->n_shells - 1] == rank[k].keep) continue;
        p->shell_keep[p->n_shells] = rank[k].keep;
        p->shell_bytes[p->n_shells] = p->bytes[rank[k].agent]; /* bytes of sub(k_l), made a shell's below */
        p->n_shells++;
    }
    double below = 0;
    int count = n_members;
    for (int l = 0; l < p->n_shells; l++) {
        while (count > 0 && rank[count - 1].keep < p->shell_keep[l]) count--;
        double bytes = p->shell_bytes[l];
        p->shell_bytes[l] = bytes - below;
        below = bytes;
        engine_collective_begin(&p->shells[l], p->order, count, p->shell_bytes[l], blocking, kind, l);
    }
    free(rank);
    p->pending = p->n_shells;
    return HS_OK;
}

int prune_shells_join(Engine *e, Prune *p, int agent)
{
    /* Joined innermost first. Under maxmin a join waits for the agent's own messages and
     * the engine keeps one such wait per agent: localsgd and sync send nothing but these
     * collectives, so no join is ever deferred. */
    for (int l = 0; l < p->n_shells; l++) {
        if (p->keep[agent] < p->shell_keep[l]) break;
        int status = engine_collective_join(e, &p->shells[l], agent);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

int prune_shells_done(Prune *p)
{
    return --p->pending == 0;
}
