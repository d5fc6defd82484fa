/* partition.c — iid, Dirichlet and shard partitions over one shared index array.
 * Cost: O(n_train + n_agents * classes) time, one int per held sample plus one offset
 * per agent of memory. */
#include "models/partition.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct Partition {
    int n_agents;
    int *indices; /* (offsets[n_agents]) the agents' rows, agent after agent */
    size_t *offsets; /* (n_agents + 1) agent a holds indices[offsets[a] .. offsets[a+1]) */
};

void partition_free(Partition *p)
{
    if (!p) return;
    free(p->indices);
    free(p->offsets);
    free(p);
}

int partition_n_agents(const Partition *p) { return p->n_agents; }
size_t partition_total(const Partition *p) { return p->offsets[p->n_agents]; }

const int *partition_indices(const Partition *p, int agent, int *count)
{
    if (agent < 0 || agent >= p->n_agents) {
        *count = 0;
        return NULL;
    }
    *count = (int)(p->offsets[agent + 1] - p->offsets[agent]);
    return p->indices + p->offsets[agent];
}

/* A shuffled permutation of 0..n-1. */
static int *partition_permutation(int n, gsl_rng *rng)
{
    int *perm = malloc(sizeof(int) * (n > 0 ? (size_t)n : 1));
    if (!perm) return NULL;
    for (int i = 0; i < n; i++) perm[i] = i;
    if (n > 1) gsl_ran_shuffle(rng, perm, (size_t)n, sizeof(int));
    return perm;
}

/* Stable counting sort of rows by label into out; class_start (classes + 1) receives the
 * start of each class's run. */
static void partition_sort_by_label(const Dataset *ds, const int *rows, size_t n, int *out, size_t *class_start)
{
    const int K = ds->classes;
    memset(class_start, 0, sizeof(size_t) * (K + 1));
    for (size_t i = 0; i < n; i++) class_start[ds->train_y[rows[i]] + 1]++;
    for (int k = 0; k < K; k++) class_start[k + 1] += class_start[k];
    size_t *fill = malloc(sizeof(size_t) * K);
    if (fill) {
        memcpy(fill, class_start, sizeof(size_t) * K);
        for (size_t i = 0; i < n; i++) out[fill[ds->train_y[rows[i]]]++] = rows[i];
        free(fill);
    }
}

static void partition_shuffle_agents(Partition *p, gsl_rng *rng)
{
    for (int a = 0; a < p->n_agents; a++) {
        size_t n = p->offsets[a + 1] - p->offsets[a];
        if (n > 1) gsl_ran_shuffle(rng, p->indices + p->offsets[a], n, sizeof(int));
    }
}

static int partition_iid(Partition *p, const Dataset *ds, gsl_rng *rng)
{
    int *perm = partition_permutation(ds->n_train, rng);
    if (!perm) return HS_E_NOMEM;
    memcpy(p->indices, perm, sizeof(int) * p->offsets[p->n_agents]);
    free(perm);
    return HS_OK;
}

static int partition_dirichlet(Partition *p, const Dataset *ds, double alpha, gsl_rng *rng)
{
    const int K = ds->classes;
    int status = HS_E_NOMEM;
    int *perm = partition_permutation(ds->n_train, rng);
    int *pool = malloc(sizeof(int) * (size_t)ds->n_train);
    size_t *class_start = malloc(sizeof(size_t) * (K + 1));
    size_t *used = calloc((size_t)K, sizeof(size_t));
    double *alphas = malloc(sizeof(double) * K), *q = malloc(sizeof(double) * K), *w = malloc(sizeof(double) * K);
    unsigned int *counts = malloc(sizeof(unsigned int) * K), *take = malloc(sizeof(unsigned int) * K);
    if (!perm || !pool || !class_start || !used || !alphas || !q || !w || !counts || !take) goto fail;
    partition_sort_by_label(ds, perm, (size_t)ds->n_train, pool, class_start);
    for (int k = 0; k < K; k++) alphas[k] = alpha;
    for (int a = 0; a < p->n_agents; a++) {
        unsigned int n = (unsigned int)(p->offsets[a + 1] - p->offsets[a]);
        gsl_ran_dirichlet(rng, (size_t)K, alphas, q);
        double sum = 0.0;
        for (int k = 0; k < K; k++) sum += q[k];
        if (!(sum > 0.0) || !isfinite(sum)) { /* all Gamma draws underflowed: one class */
            for (int k = 0; k < K; k++) q[k] = 0.0;
            q[gsl_rng_uniform_int(rng, (unsigned long)K)] = 1.0;
        }
        memset(take, 0, sizeof(unsigned int) * K);
        unsigned int left = n;
        for (int attempt = 0; left > 0 && attempt < 8; attempt++) {
            double wsum = 0.0;
            for (int k = 0; k < K; k++) {
                size_t avail = class_start[k + 1] - class_start[k] - used[k] - take[k];
                w[k] = avail > 0 ? q[k] : 0.0;
                wsum += w[k];
            }
            if (!(wsum > 0.0)) break;
            gsl_ran_multinomial(rng, (size_t)K, left, w, counts);
            for (int k = 0; k < K; k++) {
                size_t avail = class_start[k + 1] - class_start[k] - used[k] - take[k];
                unsigned int c = counts[k] < avail ? counts[k] : (unsigned int)avail;
                take[k] += c;
                left -= c;
            }
        }
        /* What is still missing comes from the remaining classes in class order. */
        for (int k = 0; k < K && left > 0; k++) {
            size_t avail = class_start[k + 1] - class_start[k] - used[k] - take[k];
            unsigned int c = left < avail ? left : (unsigned int)avail;
            take[k] += c;
            left -= c;
        }
        size_t at = p->offsets[a];
        for (int k = 0; k < K; k++) {
            memcpy(p->indices + at, pool + class_start[k] + used[k], sizeof(int) * take[k]);
            at += take[k];
            used[k] += take[k];
        }
    }
    partition_shuffle_agents(p, rng);
    status = HS_OK;
fail:
    free(perm);
    free(pool);
    free(class_start);
    free(used);
    free(alphas);
    free(q);
    free(w);
    free(counts);
    free(take);
    return status;
}

static int partition_shards(Partition *p, const Dataset *ds, int shards_per_agent, gsl_rng *rng)
{
    const size_t total = p->offsets[p->n_agents];
    const size_t n_pieces = (size_t)p->n_agents * shards_per_agent;
    int status = HS_E_NOMEM;
    int *perm = partition_permutation(ds->n_train, rng);
    int *sorted = malloc(sizeof(int) * (total ? total : 1));
    size_t *class_start = malloc(sizeof(size_t) * (ds->classes + 1));
    size_t *order = malloc(sizeof(size_t) * n_pieces), *piece_start = malloc(sizeof(size_t) * n_pieces);
    if (!perm || !sorted || !class_start || !order || !piece_start) goto fail;
    partition_sort_by_label(ds, perm, total, sorted, class_start);
    /* piece q = a * s + j is agent a's j-th shard; lay the pieces in a random order. */
    for (size_t i = 0; i < n_pieces; i++) order[i] = i;
    gsl_ran_shuffle(rng, order, n_pieces, sizeof(size_t));
    size_t pos = 0;
    for (size_t i = 0; i < n_pieces; i++) {
        size_t piece = order[i], a = piece / shards_per_agent, j = piece % shards_per_agent;
        size_t n = p->offsets[a + 1] - p->offsets[a];
        size_t size = n / shards_per_agent + (j < n % shards_per_agent);
        piece_start[piece] = pos;
        pos += size;
    }
    for (int a = 0; a < p->n_agents; a++) {
        size_t n = p->offsets[a + 1] - p->offsets[a], at = p->offsets[a];
        for (int j = 0; j < shards_per_agent; j++) {
            size_t size = n / shards_per_agent + ((size_t)j < n % shards_per_agent);
            memcpy(p->indices + at, sorted + piece_start[(size_t)a * shards_per_agent + j], sizeof(int) * size);
            at += size;
        }
    }
    partition_shuffle_agents(p, rng);
    status = HS_OK;
fail:
    free(perm);
    free(sorted);
    free(class_start);
    free(order);
    free(piece_start);
    return status;
}

int partition_make(const Dataset *ds, const DataSpec *spec, int n_agents, const int *samples_per_agent,
                   gsl_rng *rng, Partition **out, HsDiag *diag)
{
    *out = NULL;
    if (n_agents < 1) return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "partition: needs at least one agent");
    if (spec->partition == PART_DIRICHLET && !(spec->alpha > 0.0))
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "partition: dirichlet needs alpha > 0 (got %g)", spec->alpha);
    if (spec->partition == PART_SHARDS && spec->shards_per_agent < 1)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "partition: shards needs shards_per_agent >= 1 (got %d)",
                           spec->shards_per_agent);
    Partition *p = calloc(1, sizeof *p);
    if (!p) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    p->n_agents = n_agents;
    p->offsets = malloc(sizeof(size_t) * ((size_t)n_agents + 1));
    if (!p->offsets) {
        partition_free(p);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    p->offsets[0] = 0;
    for (int a = 0; a < n_agents; a++) {
        long long n = samples_per_agent ? samples_per_agent[a] : ds->n_train / n_agents;
        if (n < 0) {
            partition_free(p);
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "partition: agent %d has a negative sample count %lld",
                               a, n);
        }
        p->offsets[a + 1] = p->offsets[a] + (size_t)n;
        if (p->offsets[a + 1] > (size_t)ds->n_train) {
            long long total = 0;
            for (int b = 0; b < n_agents; b++) total += samples_per_agent ? samples_per_agent[b] : 0;
            partition_free(p);
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0,
                               "partition: the %d agents would hold %lld samples but the training set has only "
                               "%d (agents hold disjoint samples; lower [agents] samples or count)",
                               n_agents, total, ds->n_train);
        }
    }
    size_t total = p->offsets[n_agents];
    p->indices = malloc(sizeof(int) * (total ? total : 1));
    if (!p->indices) {
        partition_free(p);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    int status;
    switch (spec->partition) {
    case PART_DIRICHLET: status = partition_dirichlet(p, ds, spec->alpha, rng); break;
    case PART_SHARDS: status = partition_shards(p, ds, spec->shards_per_agent, rng); break;
    default: status = partition_iid(p, ds, rng); break;
    }
    if (status != HS_OK) {
        partition_free(p);
        return hs_diag_set(diag, status, NULL, 0, "partition: out of memory");
    }
    *out = p;
    return HS_OK;
}
