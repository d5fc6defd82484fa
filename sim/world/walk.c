/* walk.c — random-walk kernels and the SRRW visit measure (see walk.h).
 * Cost: a transition out of i is O(d_i) (the kernel needs every neighbour's measure; the
 * metropolis self-loop needs every neighbour's degree); a visit is O(1), with an O(n)
 * renormalization of the weights when the scale would underflow (for a = 1 the scale is
 * 1/(k+1): never in practice). */
#include "sim/world/walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int walk_init(Walk *w, const Topology *t, WalkKind kind, WalkKind base, double alpha, double exponent)
{
    memset(w, 0, sizeof *w);
    int n = t->n;
    w->topology = t;
    w->kind = kind;
    w->base = kind == WALK_SRRW ? base : kind;
    w->alpha = alpha;
    w->exponent = exponent;
    w->scale = 1;
    w->mu = calloc((size_t)n, sizeof *w->mu);
    w->weight = calloc((size_t)n, sizeof *w->weight);
    w->counts = calloc((size_t)n, sizeof *w->counts);
    if (!w->mu || !w->weight || !w->counts) {
        walk_free(w);
        return HS_E_NOMEM;
    }
    double degrees = 0;
    for (int i = 0; i < n; i++) {
        int d = topology_degree(t, i);
        degrees += d;
        if (d > w->max_degree) w->max_degree = d;
    }
    for (int i = 0; i < n; i++)
        /* an edgeless graph (one agent) has no degrees: uniform */
        w->mu[i] = w->base == WALK_SIMPLE && degrees > 0 ? topology_degree(t, i) / degrees : 1.0 / n;
    memcpy(w->weight, w->mu, (size_t)n * sizeof *w->weight);
    return HS_OK;
}

void walk_free(Walk *w)
{
    if (w == NULL) return;
    free(w->mu);
    free(w->weight);
    free(w->counts);
    w->mu = w->weight = NULL;
    w->counts = NULL;
}

/* The base chain's row i into targets/probs (ascending agents, the self-loop in place). */
static int walk_base_row(const Walk *w, int i, int *targets, double *probs)
{
    const Topology *t = w->topology;
    const int *adj = t->adj + t->offsets[i];
    int d = topology_degree(t, i), count = 0;
    if (d == 0) {
        targets[0] = i;
        probs[0] = 1;
        return 1;
    }
    double stay = 1;
    int self = -1;
    for (int k = 0; k < d; k++) {
        if (w->base == WALK_METROPOLIS && self < 0 && adj[k] > i) self = count++;
        double p = 1.0 / d;
        if (w->base == WALK_METROPOLIS) {
            int dj = topology_degree(t, adj[k]);
            if (dj > d) p = 1.0 / dj;
        }
        targets[count] = adj[k];
        probs[count++] = p;
        stay -= p;
    }
    if (w->base == WALK_METROPOLIS) {
        if (self < 0) self = count++;
        targets[self] = i;
        probs[self] = stay;
        if (!(stay > 1e-15)) { /* no self-loop: drop the slot (rounding left ~0) */
            memmove(targets + self, targets + self + 1, (size_t)(count - self - 1) * sizeof *targets);
            memmove(probs + self, probs + self + 1, (size_t)(count - self - 1) * sizeof *probs);
            count--;
        }
    }
    return count;
}

int walk_transitions(const Walk *w, int i, int *targets, double *probs)
{
    int count = walk_base_row(w, i, targets, probs);
    if (w->kind != WALK_SRRW || w->alpha == 0) return count;
    /* repellence (x_j/mu_j)^(-alpha); x_j = scale * weight_j and the scale cancels. In
     * logarithms, less the largest, so that a strong alpha cannot overflow. */
    double top = -INFINITY, total = 0;
    for (int k = 0; k < count; k++) {
        int j = targets[k];
        probs[k] = log(probs[k]) - w->alpha * log(w->weight[j] / w->mu[j]);
        if (probs[k] > top) top = probs[k];
    }
    for (int k = 0; k < count; k++) {
        probs[k] = exp(probs[k] - top);
        total += probs[k];
    }
    for (int k = 0; k < count; k++) probs[k] /= total;
    return count;
}

int walk_next(const Walk *w, int i, gsl_rng *rng, int *targets, double *probs)
{
    int count = walk_transitions(w, i, targets, probs);
    double u = gsl_rng_uniform(rng), cumulative = 0;
    for (int k = 0; k < count - 1; k++) {
        cumulative += probs[k];
        if (u < cumulative) return targets[k];
    }
    return targets[count - 1];
}

void walk_visit(Walk *w, int j)
{
    w->counts[j]++;
    w->visits++;
    double gamma = pow((double)w->visits + 1, -w->exponent);
    /* x <- (1 - gamma) x + gamma delta_j: scale the whole measure, then add to j */
    w->scale *= 1 - gamma;
    if (w->scale < 1e-200) {
        for (int k = 0; k < w->topology->n; k++) w->weight[k] *= w->scale;
        w->scale = 1;
    }
    w->weight[j] += gamma / w->scale;
}

double walk_measure(const Walk *w, int j)
{
    return w->scale * w->weight[j];
}

double walk_tv_distance(const Walk *w)
{
    if (w->visits == 0) return NAN;
    double total = 0;
    for (int k = 0; k < w->topology->n; k++) total += fabs((double)w->counts[k] / w->visits - w->mu[k]);
    return total / 2;
}
