/* topology.c — graph construction from an edge list, deduplicated and sorted into CSR. */
#include "sim/topology.h"
#include "sim/rng.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct EdgeList {
    int *a, *b;
    size_t n, cap;
} EdgeList;

static int edges_add(EdgeList *e, int a, int b)
{
    if (a == b) return HS_OK;
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 64;
        int *na = realloc(e->a, cap * sizeof *na);
        if (na == NULL) return HS_E_NOMEM;
        e->a = na;
        int *nb = realloc(e->b, cap * sizeof *nb);
        if (nb == NULL) return HS_E_NOMEM;
        e->b = nb;
        e->cap = cap;
    }
    e->a[e->n] = a < b ? a : b;
    e->b[e->n] = a < b ? b : a;
    e->n++;
    return HS_OK;
}

static void edges_free(EdgeList *e)
{
    free(e->a);
    free(e->b);
}

static int compare_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* Builds CSR from the (possibly duplicated) undirected edges. */
static int topology_from_edges(int n, const EdgeList *e, Topology *t)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->offsets = calloc((size_t)n + 1, sizeof *t->offsets);
    int *fill = calloc((size_t)n, sizeof *fill);
    if (t->offsets == NULL || fill == NULL) goto fail;
    for (size_t k = 0; k < e->n; k++) {
        t->offsets[e->a[k] + 1]++;
        t->offsets[e->b[k] + 1]++;
    }
    for (int i = 0; i < n; i++) t->offsets[i + 1] += t->offsets[i];
    t->adj = malloc(((size_t)t->offsets[n] + 1) * sizeof *t->adj);
    if (t->adj == NULL) goto fail;
    for (size_t k = 0; k < e->n; k++) {
        t->adj[t->offsets[e->a[k]] + fill[e->a[k]]++] = e->b[k];
        t->adj[t->offsets[e->b[k]] + fill[e->b[k]]++] = e->a[k];
    }
    /* sort each row and drop duplicates, compacting in place */
    int write = 0;
    for (int i = 0; i < n; i++) {
        int start = t->offsets[i], end = t->offsets[i + 1];
        qsort(t->adj + start, (size_t)(end - start), sizeof *t->adj, compare_int);
        t->offsets[i] = write;
        for (int k = start; k < end; k++)
            if (k == start || t->adj[k] != t->adj[k - 1]) t->adj[write++] = t->adj[k];
    }
    t->offsets[n] = write;
    t->weights = malloc(((size_t)write + 1) * sizeof *t->weights);
    t->self_weights = malloc((size_t)n * sizeof *t->self_weights);
    if (t->weights == NULL || t->self_weights == NULL) goto fail;
    for (int i = 0; i < n; i++) {
        double sum = 0;
        for (int k = t->offsets[i]; k < t->offsets[i + 1]; k++) {
            int j = t->adj[k], di = topology_degree(t, i), dj = topology_degree(t, j);
            t->weights[k] = 1.0 / (1.0 + (di > dj ? di : dj));
            sum += t->weights[k];
        }
        t->self_weights[i] = 1.0 - sum;
    }
    free(fill);
    return HS_OK;
fail:
    free(fill);
    topology_free(t);
    return HS_E_NOMEM;
}

int topology_connected(const Topology *t)
{
    if (t->n <= 1) return 1;
    char *seen = calloc((size_t)t->n, 1);
    int *stack = malloc((size_t)t->n * sizeof *stack);
    if (seen == NULL || stack == NULL) {
        free(seen);
        free(stack);
        return 0;
    }
    int top = 0, reached = 1;
    stack[top++] = 0;
    seen[0] = 1;
    while (top > 0) {
        int i = stack[--top];
        for (int k = t->offsets[i]; k < t->offsets[i + 1]; k++)
            if (!seen[t->adj[k]]) {
                seen[t->adj[k]] = 1;
                reached++;
                stack[top++] = t->adj[k];
            }
    }
    free(seen);
    free(stack);
    return reached == t->n;
}

/* Configuration model: n·d stubs paired by a seeded shuffle; rejected when the result
 * has self-loops or repeated edges. */
static int topology_random_regular(int n, int d, gsl_rng *rng, EdgeList *e)
{
    int stubs_n = n * d;
    int *stubs = malloc((size_t)stubs_n * sizeof *stubs);
    if (stubs == NULL) return HS_E_NOMEM;
    for (int i = 0; i < stubs_n; i++) stubs[i] = i / d;
    for (int i = stubs_n - 1; i > 0; i--) {
        int j = (int)gsl_rng_uniform_int(rng, (unsigned long)i + 1);
        int tmp = stubs[i];
        stubs[i] = stubs[j];
        stubs[j] = tmp;
    }
    e->n = 0;
    int status = HS_OK;
    for (int k = 0; k + 1 < stubs_n && status == HS_OK; k += 2) {
        if (stubs[k] == stubs[k + 1]) {
            status = 1; /* self-loop: caller retries */
            break;
        }
        status = edges_add(e, stubs[k], stubs[k + 1]);
    }
    free(stubs);
    return status;
}

static int topology_read_edges(const char *path, int n, EdgeList *e, HsDiag *diag)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) return hs_diag_set(diag, HS_E_INPUT, path, 0, "cannot open edges file: %s", strerror(errno));
    char line[512];
    int lineno = 0, status = HS_OK;
    while (status == HS_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\n' || *p == '\r' || *p == '\0') continue;
        int a, b;
        char extra;
        if (sscanf(p, "%d %d %c", &a, &b, &extra) != 2)
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "expected two agent indices 'I J'");
        else if (a < 0 || b < 0 || a >= n || b >= n)
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "agent index outside 0..%d", n - 1);
        else if (a == b)
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "self-loop %d-%d", a, b);
        else
            status = edges_add(e, a, b);
    }
    fclose(f);
    return status;
}

int topology_build_kind(TopologyKind kind, int n, int degree, const char *file, uint64_t seed,
                        Topology *out, HsDiag *diag)
{
    EdgeList e = {0};
    int status = HS_OK;
    memset(out, 0, sizeof *out);
    switch (kind) {
    case TOPO_FULL:
        for (int i = 0; i < n && status == HS_OK; i++)
            for (int j = i + 1; j < n && status == HS_OK; j++) status = edges_add(&e, i, j);
        break;
    case TOPO_RING:
        for (int i = 0; i < n && status == HS_OK; i++) status = edges_add(&e, i, (i + 1) % n);
        break;
    case TOPO_TORUS: {
        int rows = (int)floor(sqrt((double)n));
        while (rows > 1 && n % rows != 0) rows--;
        int cols = n / rows;
        for (int i = 0; i < n && status == HS_OK; i++) {
            int r = i / cols, c = i % cols;
            status = edges_add(&e, i, r * cols + (c + 1) % cols);
            if (status == HS_OK) status = edges_add(&e, i, ((r + 1) % rows) * cols + c);
        }
        break;
    }
    case TOPO_EXPONENTIAL:
        for (int i = 0; i < n && status == HS_OK; i++)
            for (long hop = 1; hop < n && status == HS_OK; hop *= 2) status = edges_add(&e, i, (int)((i + hop) % n));
        break;
    case TOPO_RANDOM_REGULAR: {
        if (degree >= n || ((long)n * degree) % 2 != 0) {
            edges_free(&e);
            return hs_diag_set(diag, HS_E_INPUT, file, 0,
                               "[topology] random-regular needs degree < count and count x degree even "
                               "(count %d, degree %d)", n, degree);
        }
        gsl_rng *rng = rng_stream_create(seed, 0, RNG_PURPOSE_METHOD + 100);
        int tries = 0;
        for (;; tries++) {
            status = topology_random_regular(n, degree, rng, &e);
            if (status < 0) break;
            if (status == HS_OK) {
                Topology probe;
                if ((status = topology_from_edges(n, &e, &probe)) != HS_OK) break;
                int simple = probe.offsets[n] == n * degree, connected = topology_connected(&probe);
                topology_free(&probe);
                if (simple && connected) break;
            }
            if (tries == 1000) {
                status = hs_diag_set(diag, HS_E_INPUT, file, 0,
                                     "[topology] no simple connected %d-regular graph found in 1000 draws", degree);
                break;
            }
        }
        gsl_rng_free(rng);
        break;
    }
    case TOPO_FILE:
        status = topology_read_edges(file, n, &e, diag);
        break;
    }
    if (status == HS_OK) status = topology_from_edges(n, &e, out);
    edges_free(&e);
    if (status != HS_OK) return status;
    if (!topology_connected(out)) {
        topology_free(out);
        return hs_diag_set(diag, HS_E_INPUT, file, 0, "[topology] the graph is disconnected: every agent must "
                                                     "reach every other");
    }
    return HS_OK;
}

int topology_build(const Scenario *sc, int n, Topology *out, HsDiag *diag)
{
    const char *where = sc->topology == TOPO_FILE ? sc->topology_file : sc->file;
    return topology_build_kind(sc->topology, n, sc->degree, where, sc->seed, out, diag);
}

void topology_free(Topology *t)
{
    if (t == NULL) return;
    free(t->offsets);
    free(t->adj);
    free(t->weights);
    free(t->self_weights);
    memset(t, 0, sizeof *t);
}
