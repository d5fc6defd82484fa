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

void partition_domain_sizes(const DataSpec *spec, int n_train, int *sizes)
{
    for (int d = 0; d < spec->n_domains; d++)
        sizes[d] = spec->held_out[d] ? 0 : dataset_domain_size(n_train, spec->n_domains, d);
}

int partition_domain_counts(const int *domain_sizes, int n_domains, int n_agents, double lambda, int *counts)
{
    const int D = n_domains, C = n_agents;
    if (D < 1 || D > DATA_MAX_DOMAINS || C < 1 || !(lambda >= 0 && lambda <= 1)) return HS_E_INPUT;
    int non_empty = 0;
    for (int d = 0; d < D; d++) non_empty += domain_sizes[d] > 0;
    if (non_empty == 0) return HS_E_INPUT;
    double *f = malloc(sizeof(double) * (size_t)C * D);
    if (!f) return HS_E_NOMEM;
    if (non_empty <= C) {
        int mains[DATA_MAX_DOMAINS], total = 0;
        for (int d = 0; d < D; d++) total += mains[d] = domain_sizes[d] > 0;
        while (total < C) {
            int best = 0;
            double best_ratio = -1;
            for (int d = 0; d < D; d++) {
                double ratio = mains[d] ? (double)domain_sizes[d] / mains[d] : 0;
                if (ratio > best_ratio) {
                    best_ratio = ratio;
                    best = d;
                }
            }
            mains[best]++;
            total++;
        }
        for (int c = 0, m = 0, left = mains[0]; c < C; c++) {
            while (left == 0) left = mains[++m];
            left--;
            for (int d = 0; d < D; d++) {
                /* the code's float arithmetic, in its order */
                double main_ratio = d == m ? 1.0 / mains[m] : 0.0;
                f[(size_t)c * D + d] = domain_sizes[d] * (main_ratio * (1 - lambda) + (1.0 / C) * lambda);
            }
        }
    } else {
        /* ascending by size, stable (numpy's argsort is an insertion sort below 17
         * elements), then dealt from the end: largest first, equal sizes higher index first */
        int order[DATA_MAX_DOMAINS];
        for (int d = 0; d < D; d++) order[d] = d;
        for (int a = 1; a < D; a++)
            for (int b = a; b > 0 && domain_sizes[order[b]] < domain_sizes[order[b - 1]]; b--) {
                int t = order[b];
                order[b] = order[b - 1];
                order[b - 1] = t;
            }
        double *load = calloc((size_t)C, sizeof *load);
        if (!load) {
            free(f);
            return HS_E_NOMEM;
        }
        for (size_t k = 0; k < (size_t)C * D; k++) f[k] = 0;
        for (int k = D - 1; k >= 0; k--) {
            int d = order[k], least = 0;
            for (int c = 1; c < C; c++)
                if (load[c] < load[least]) least = c;
            f[(size_t)least * D + d] = domain_sizes[d];
            load[least] += domain_sizes[d];
        }
        free(load);
        for (int c = 0; c < C; c++)
            for (int d = 0; d < D; d++)
                f[(size_t)c * D + d] = ((double)domain_sizes[d] / C) * lambda + f[(size_t)c * D + d] * (1 - lambda);
    }
    for (int d = 0; d < D; d++) {
        double remainder = 0;
        long held = 0;
        for (int c = 0; c < C; c++) {
            double v = f[(size_t)c * D + d];
            counts[(size_t)c * D + d] = (int)floor(v);
            remainder += v - floor(v);
            held += counts[(size_t)c * D + d];
        }
        /* C >= D: the code rounds the summed fractions; C < D: it takes what is missing.
         * Both are the same whole number up to rounding error. */
        long extra = non_empty <= C ? (long)rint(remainder) : domain_sizes[d] - held;
        if (held + extra > domain_sizes[d]) extra = domain_sizes[d] - held; /* never more rows than exist */
        for (int c = 0; c < C && extra > 0; c++, extra--) counts[(size_t)c * D + d]++;
    }
    free(f);
    return HS_OK;
}

static int partition_domains(Partition *p, const Dataset *ds, const DataSpec *spec, const int *counts, gsl_rng *rng)
{
    const int D = spec->n_domains;
    int status = HS_E_NOMEM;
    int *rows = malloc(sizeof(int) * (size_t)(ds->n_train ? ds->n_train : 1));
    size_t start[DATA_MAX_DOMAINS + 1], used[DATA_MAX_DOMAINS] = {0};
    if (!rows) goto fail;
    /* each domain's rows in a random order, domain after domain */
    start[0] = 0;
    for (int d = 0; d < D; d++) {
        size_t n = 0;
        for (int k = d; k < ds->n_train; k += D) rows[start[d] + n++] = k;
        if (n > 1) gsl_ran_shuffle(rng, rows + start[d], n, sizeof(int));
        start[d + 1] = start[d] + n;
    }
    for (int a = 0; a < p->n_agents; a++) {
        size_t at = p->offsets[a];
        for (int d = 0; d < D; d++) {
            size_t take = (size_t)counts[(size_t)a * D + d];
            memcpy(p->indices + at, rows + start[d] + used[d], sizeof(int) * take);
            at += take;
            used[d] += take;
        }
    }
    partition_shuffle_agents(p, rng);
    status = HS_OK;
fail:
    free(rows);
    return status;
}

int partition_natural_counts(const Dataset *ds, int n_agents, int *counts, int *first_writer, HsDiag *diag)
{
    const int W = ds->n_writers;
    if (W < 1 || !ds->writer_start)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0,
                           "partition: natural needs a data set with writers (dataset = leaf)");
    if (n_agents < 1 || n_agents > W)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0,
                           "partition: natural gives each agent at least one writer, but there are %d agents for the "
                           "%d writers of the data set (lower [agents] count to %d or less)",
                           n_agents, W, W);
    for (int a = 0; a < n_agents; a++) {
        int first = (int)((long long)a * W / n_agents), end = (int)((long long)(a + 1) * W / n_agents);
        counts[a] = ds->writer_start[end] - ds->writer_start[first];
        if (first_writer) first_writer[a] = first;
    }
    if (first_writer) first_writer[n_agents] = W;
    return HS_OK;
}

static int partition_natural(Partition *p, const Dataset *ds, gsl_rng *rng)
{
    /* the writers' rows are consecutive in the training set, and so are a group's */
    for (int a = 0; a < p->n_agents; a++) {
        int first = (int)((long long)a * ds->n_writers / p->n_agents);
        int begin = ds->writer_start[first];
        for (size_t k = p->offsets[a]; k < p->offsets[a + 1]; k++) p->indices[k] = begin + (int)(k - p->offsets[a]);
    }
    partition_shuffle_agents(p, rng);
    return HS_OK;
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
    int *domain_counts = NULL, *natural_counts = NULL;
    if (spec->partition == PART_NATURAL) {
        int status;
        natural_counts = malloc(sizeof(int) * (size_t)n_agents);
        status = natural_counts ? partition_natural_counts(ds, n_agents, natural_counts, NULL, diag)
                                : hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        if (status != HS_OK) {
            free(natural_counts);
            partition_free(p);
            return status;
        }
    }
    if (spec->partition == PART_DOMAINS) {
        int sizes[DATA_MAX_DOMAINS], status;
        if (ds->n_domains != spec->n_domains || spec->n_domains < 1) {
            partition_free(p);
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "partition: domains needs a data set loaded with its domains");
        }
        partition_domain_sizes(spec, ds->n_train, sizes);
        domain_counts = malloc(sizeof(int) * (size_t)n_agents * spec->n_domains);
        status = domain_counts ? partition_domain_counts(sizes, spec->n_domains, n_agents, spec->lambda, domain_counts)
                               : HS_E_NOMEM;
        if (status != HS_OK) {
            free(domain_counts);
            partition_free(p);
            return hs_diag_set(diag, status, NULL, 0, "partition: bad domains (lambda %g, %d domains)", spec->lambda,
                               spec->n_domains);
        }
    }
    for (int a = 0; a < n_agents; a++) {
        long long n = samples_per_agent ? samples_per_agent[a] : ds->n_train / n_agents;
        if (natural_counts) {
            if (samples_per_agent && n != natural_counts[a]) {
                int held = natural_counts[a];
                free(natural_counts);
                partition_free(p);
                return hs_diag_set(diag, HS_E_INPUT, NULL, 0,
                                   "partition: agent %d holds %d samples of its writers, not the %lld asked for "
                                   "(a natural partition's sizes are the writers')",
                                   a, held, n);
            }
            n = natural_counts[a];
        }
        if (domain_counts) {
            long long held = 0;
            for (int d = 0; d < spec->n_domains; d++) held += domain_counts[(size_t)a * spec->n_domains + d];
            if (samples_per_agent && held != n) {
                free(domain_counts);
                free(natural_counts);
                partition_free(p);
                return hs_diag_set(diag, HS_E_INTERNAL, NULL, 0,
                                   "partition: agent %d holds %lld rows of its domains, not its %lld samples", a, held,
                                   n);
            }
            n = held;
        }
        if (n < 0) {
            free(domain_counts);
            free(natural_counts);
            partition_free(p);
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "partition: agent %d has a negative sample count %lld",
                               a, n);
        }
        p->offsets[a + 1] = p->offsets[a] + (size_t)n;
        if (p->offsets[a + 1] > (size_t)ds->n_train) {
            long long total = 0;
            for (int b = 0; b < n_agents; b++) total += samples_per_agent ? samples_per_agent[b] : 0;
            free(domain_counts);
            free(natural_counts);
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
        free(domain_counts);
        free(natural_counts);
        partition_free(p);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    int status;
    switch (spec->partition) {
    case PART_DOMAINS: status = partition_domains(p, ds, spec, domain_counts, rng); break;
    case PART_NATURAL: status = partition_natural(p, ds, rng); break;
    case PART_DIRICHLET: status = partition_dirichlet(p, ds, spec->alpha, rng); break;
    case PART_SHARDS: status = partition_shards(p, ds, spec->shards_per_agent, rng); break;
    default: status = partition_iid(p, ds, rng); break;
    }
    free(domain_counts);
    free(natural_counts);
    if (status != HS_OK) {
        partition_free(p);
        return hs_diag_set(diag, status, NULL, 0, "partition: out of memory");
    }
    *out = p;
    return HS_OK;
}
