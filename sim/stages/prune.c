/* prune.c — per-agent keep ratios and their costs (see prune.h); the averaging's nested
 * all-reduce shells are the kernel's NestedReduce (sim/kernel/collective.c). Work is
 * O(n log n) per run for the ratios and per averaging for the shells, memory O(n), so
 * timing mode scales as the unpruned methods do. */
#include "sim/stages/prune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* FLOPs of one step of batch on the sub-model at keep, as sim_step_flops does it. */
static double prune_step_flops(const ModelSpec *spec, int batch, double keep, double *params)
{
    ModelSpec sub;
    ModelProfile profile;
    if (model_width_spec(spec, keep, &sub) != HS_OK || model_profile(&sub, &profile) != HS_OK) return NAN;
    if (params) *params = profile.total_params;
    return model_profile_step_flops(&profile, batch);
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

static int prune_ratios(const PruneKeys *keys, const Scenario *sc, const World *world, const ModelProfile *profile,
                        const int *steps, Prune *p)
{
    int n = world->n;
    double target_ratio = keys->prune_target, min_keep = keys->prune_min;
    double *tau = malloc((size_t)n * sizeof *tau), *sorted = malloc((size_t)n * sizeof *sorted);
    if (!tau || !sorted) {
        free(tau);
        free(sorted);
        return HS_E_NOMEM;
    }
    /* each agent's step at its own batch ([agents] batch) */
    for (int i = 0; i < n; i++) {
        int s = steps ? steps[i] : 1;
        tau[i] = sorted[i] = s * model_profile_step_flops(profile, world->agents[i].batch) / world->agents[i].compute;
    }
    qsort(sorted, (size_t)n, sizeof *sorted, prune_compare_double);
    double median = sorted[(n - 1) / 2];
    for (int i = 0; i < n; i++) {
        int batch = world->agents[i].batch;
        double f1 = model_profile_step_flops(profile, batch);
        if (!(tau[i] > median)) p->keep[i] = 1.0;
        else if (isnan(target_ratio)) p->keep[i] = prune_makespan_keep(&sc->model, profile, batch, tau[i], median, min_keep);
        else p->keep[i] = target_ratio;
        double params;
        p->step_flops[i] = p->keep[i] < 1 ? prune_step_flops(&sc->model, batch, p->keep[i], &params) : f1;
        p->bytes[i] = p->keep[i] < 1 ? 4.0 * params : 4.0 * profile->total_params;
    }
    free(tau);
    free(sorted);
    return HS_OK;
}

int prune_create(const PruneKeys *keys, const Scenario *sc, const World *world, const ModelProfile *profile, int train,
                 const int *steps, HsDiag *diag, Prune *p)
{
    memset(p, 0, sizeof *p);
    p->on = keys->prune == PRUNE_WIDTH;
    if (!p->on) return HS_OK;
    int n = p->n = world->n;
    p->keep = calloc((size_t)n, sizeof *p->keep);
    p->step_flops = calloc((size_t)n, sizeof *p->step_flops);
    p->bytes = calloc((size_t)n, sizeof *p->bytes);
    p->widths = calloc((size_t)n, sizeof *p->widths);
    if (!p->keep || !p->step_flops || !p->bytes || !p->widths || nested_reduce_init(&p->nest, n) != HS_OK)
        return HS_E_NOMEM;
    int status = prune_ratios(keys, sc, world, profile, steps, p);
    if (status != HS_OK || !train) return status;
    /* the sub-models' workspaces hold the largest batch of any agent */
    ModelSpec spec = sc->model;
    if (world_max_batch(world) > spec.batch) spec.batch = world_max_batch(world);
    for (int i = 0; i < n; i++) {
        if (p->keep[i] >= 1) continue;
        if ((status = model_width_create(&spec, p->keep[i], &p->widths[i])) != HS_OK)
            return hs_diag_set(diag, status, NULL, 0, "cannot build the sub-model of keep ratio %g", p->keep[i]);
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
    nested_reduce_free(&p->nest);
    memset(p, 0, sizeof *p);
}

double prune_smallest_keep(const Prune *p)
{
    double smallest = 1;
    for (int i = 0; i < p->n; i++)
        if (p->keep[i] < smallest) smallest = p->keep[i];
    return smallest;
}

int prune_shells_begin(Prune *p, const int *members, int n_members, int blocking, int kind)
{
    return nested_reduce_begin(&p->nest, p->keep, p->bytes, members, n_members, blocking, kind);
}

int prune_shells_join(Engine *e, Prune *p, int agent)
{
    return nested_reduce_join(e, &p->nest, agent);
}

int prune_shells_done(Prune *p)
{
    return nested_reduce_done(&p->nest);
}
