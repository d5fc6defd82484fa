/* prune.c — per-agent keep ratios, their costs and the nested all-reduce shells
 * (see prune.h). Work is O(n log n) per run for the ratios and O(n^2) per averaging
 * for the shells, which is fine for the agent counts train mode runs. */
#include "sim/prune.h"

#include "sim/trainer.h"

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
    p->shell_members = calloc((size_t)n * (size_t)n, sizeof *p->shell_members);
    p->shells = calloc((size_t)n, sizeof *p->shells);
    if (!p->keep || !p->step_flops || !p->bytes || !p->widths || !p->shell_keep || !p->shell_bytes ||
        !p->shell_members || !p->shells)
        return HS_E_NOMEM;
    int status = prune_ratios(e, steps, p);
    if (status != HS_OK || e->trainer == NULL) return status;
    for (int i = 0; i < n; i++) {
        if (p->keep[i] >= 1) continue;
        for (int j = 0; j < i && p->widths[i] == NULL; j++)
            if (p->keep[j] == p->keep[i]) p->widths[i] = p->widths[j];
        if (p->widths[i] == NULL && (status = model_width_create(&e->sc->model, p->keep[i], &p->widths[i])) != HS_OK)
            return hs_diag_set(e->diag, status, NULL, 0, "cannot build the sub-model of keep ratio %g", p->keep[i]);
    }
    return HS_OK;
}

void prune_free(Prune *p)
{
    for (int i = 0; p->widths && i < p->n; i++) {
        int shared = 0;
        for (int j = 0; j < i && !shared; j++) shared = p->widths[j] == p->widths[i];
        if (!shared) model_width_free(p->widths[i]);
    }
    free(p->widths);
    free(p->keep);
    free(p->step_flops);
    free(p->bytes);
    free(p->shell_keep);
    free(p->shell_bytes);
    free(p->shell_members);
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

void prune_shells_begin(Prune *p, const int *members, int n_members, int blocking, int kind)
{
    /* the members' distinct ratios, ascending (n is small: insertion) */
    p->n_shells = 0;
    for (int k = 0; k < n_members; k++) {
        double r = p->keep[members ? members[k] : k];
        int at = 0;
        while (at < p->n_shells && p->shell_keep[at] < r) at++;
        if (at < p->n_shells && p->shell_keep[at] == r) continue;
        memmove(p->shell_keep + at + 1, p->shell_keep + at, (size_t)(p->n_shells - at) * sizeof *p->shell_keep);
        p->shell_keep[at] = r;
        p->n_shells++;
    }
    double below = 0;
    for (int l = 0; l < p->n_shells; l++) {
        /* bytes of sub(k_l): those of any member with that ratio */
        double bytes = 0;
        int count = 0, *list = p->shell_members + (size_t)l * p->n;
        for (int k = 0; k < n_members; k++) {
            int i = members ? members[k] : k;
            if (p->keep[i] == p->shell_keep[l]) bytes = p->bytes[i];
            if (p->keep[i] >= p->shell_keep[l]) list[count++] = i;
        }
        p->shell_bytes[l] = bytes - below;
        below = bytes;
        engine_collective_begin(&p->shells[l], list, count, p->shell_bytes[l], blocking, kind, l);
    }
    p->pending = p->n_shells;
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
