/* topology.c — graph construction from an edge list, deduplicated and sorted into CSR,
 * and the checks that say whether a graph can be built before anything runs. */
#include "sim/topology.h"
#include "sim/rng.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
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
    int *stubs = malloc(((size_t)stubs_n + 1) * sizeof *stubs);
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

/* The links an edges file listed so far, keyed a·2^32 + b (a < b) with the line of each:
 * an open-addressing hash set, so a repeated link is found in O(1) as it is read. */
typedef struct LinkSlot {
    uint64_t key; /* 0 marks an empty slot (a < b makes every key nonzero) */
    int line;
} LinkSlot;

typedef struct LinkSet {
    LinkSlot *slots; /* (cap) */
    size_t n, cap;   /* cap a power of two, at least twice n */
} LinkSet;

static size_t link_set_slot(const LinkSet *s, uint64_t key)
{
    uint64_t z = key; /* splitmix64's finaliser: neighbouring keys land far apart */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    size_t i = (size_t)z & (s->cap - 1);
    while (s->slots[i].key != 0 && s->slots[i].key != key) i = (i + 1) & (s->cap - 1);
    return i;
}

/* Adds link a-b (a < b) listed at line: 0 when it is new, the line that listed it first
 * otherwise, HS_E_NOMEM when the set cannot grow. */
static int link_set_add(LinkSet *s, int a, int b, int line)
{
    if (2 * (s->n + 1) > s->cap) {
        LinkSet grown = {.cap = s->cap ? 2 * s->cap : 64, .n = s->n};
        grown.slots = calloc(grown.cap, sizeof *grown.slots);
        if (grown.slots == NULL) return HS_E_NOMEM;
        for (size_t k = 0; k < s->cap; k++)
            if (s->slots[k].key != 0) grown.slots[link_set_slot(&grown, s->slots[k].key)] = s->slots[k];
        free(s->slots);
        *s = grown;
    }
    uint64_t key = (uint64_t)a << 32 | (uint64_t)b;
    LinkSlot *slot = &s->slots[link_set_slot(s, key)];
    if (slot->key == key) return slot->line;
    *slot = (LinkSlot){.key = key, .line = line};
    s->n++;
    return 0;
}

/* Reads one agent index after blanks at *p, which must end at a blank or the end of the
 * line ("1x", "1.5", "1,2" do not): 1 with the value and its text, 0 when there is none. */
static int topology_parse_index(const char **p, long *value, const char **text, int *text_len)
{
    const char *s = *p;
    while (isspace((unsigned char)*s)) s++;
    int sign = *s == '-' || *s == '+';
    if (!isdigit((unsigned char)s[sign])) return 0;
    char *end;
    *value = strtol(s, &end, 10); /* out of long's range: LONG_MIN/MAX, outside 0..n-1 too */
    if (*end != '\0' && !isspace((unsigned char)*end)) return 0;
    *text = s;
    *text_len = (int)(end - s);
    *p = end;
    return 1;
}

/* Parses an edges file: one link "I J" per line, I and J in 0..n-1, blank lines and '#'
 * comments allowed. A line that is not two indices, an index out of range, a self-loop or
 * a link listed a second time (either way round) is an error at its line. O(lines). */
static int topology_read_edges(const char *path, int n, EdgeList *e, HsDiag *diag)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) return hs_diag_set(diag, HS_E_INPUT, path, 0, "cannot open edges file: %s", strerror(errno));
    LinkSet seen = {0};
    char line[512];
    int lineno = 0, status = HS_OK;
    while (status == HS_OK && fgets(line, sizeof line, f)) {
        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "line longer than %d characters", (int)sizeof line - 2);
            break;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        const char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (*p == '\0') continue;
        long a, b;
        const char *a_text, *b_text;
        int a_len, b_len;
        if (!topology_parse_index(&p, &a, &a_text, &a_len) || !topology_parse_index(&p, &b, &b_text, &b_len)) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "expected two agent indices 'I J'");
            break;
        }
        while (isspace((unsigned char)*p)) p++;
        if (*p != '\0') {
            size_t len = strlen(p);
            while (len > 0 && isspace((unsigned char)p[len - 1])) len--;
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "expected two agent indices 'I J', found more: '%.*s'",
                                 (int)len, p);
            break;
        }
        if (a < 0 || a >= n || b < 0 || b >= n) {
            int a_out = a < 0 || a >= n;
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "agent index %.*s is outside 0..%d",
                                 a_out ? a_len : b_len, a_out ? a_text : b_text, n - 1);
            break;
        }
        if (a == b) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "self-loop %ld-%ld", a, b);
            break;
        }
        int first = link_set_add(&seen, (int)(a < b ? a : b), (int)(a < b ? b : a), lineno);
        if (first < 0) status = first;
        else if (first > 0)
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "link %ld-%ld is listed twice (first at line %d)", a, b,
                                 first);
        else
            status = edges_add(e, (int)a, (int)b);
    }
    fclose(f);
    free(seen.slots);
    return status;
}

static int union_find_root(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]]; /* path halving */
        i = parent[i];
    }
    return i;
}

/* An edges file's graph: parsed, and connected (union-find, O(n + links)). */
static int topology_load_edges(const char *path, int n, EdgeList *e, HsDiag *diag)
{
    int status = topology_read_edges(path, n, e, diag);
    if (status != HS_OK || n <= 1) return status;
    if (e->n == 0) return hs_diag_set(diag, HS_E_INPUT, path, 0, "no links: %d agents need at least %d", n, n - 1);
    int *parent = malloc((size_t)n * sizeof *parent);
    if (parent == NULL) return HS_E_NOMEM;
    for (int i = 0; i < n; i++) parent[i] = i;
    for (size_t k = 0; k < e->n; k++) parent[union_find_root(parent, e->a[k])] = union_find_root(parent, e->b[k]);
    int root = union_find_root(parent, 0), apart = 0;
    while (apart < n && union_find_root(parent, apart) == root) apart++;
    free(parent);
    if (apart < n)
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "the graph is disconnected: agent %d cannot reach agent 0 (every "
                                                      "agent must reach every other)", apart);
    return HS_OK;
}

/* 2 x the links a generated graph lists before duplicates are merged: what the CSR's
 * int offsets must hold. */
static long long topology_entries(TopologyKind kind, int n, int degree)
{
    long long hops = 0;
    switch (kind) {
    case TOPO_FULL: return (long long)n * (n - 1);
    case TOPO_RING: return 2LL * n;
    case TOPO_TORUS: return 4LL * n;
    case TOPO_RANDOM_REGULAR: return (long long)n * degree;
    case TOPO_EXPONENTIAL:
        for (long long hop = 1; hop < n; hop *= 2) hops++;
        return 2 * hops * n;
    case TOPO_FILE: return 0;
    }
    return 0;
}

static const char *topology_kind_name(TopologyKind kind)
{
    static const char *const names[] = {"full", "ring", "torus", "random-regular", "exponential", "FILE.edges"};
    return kind >= TOPO_FULL && kind <= TOPO_FILE ? names[kind] : "?";
}

/* What a graph needs of n and degree, said at file:line. The builder runs it too, so
 * that topology_check and topology_build_kind refuse the same parameters with the same
 * words. Full's size limit is left to the builder (see topology_check). */
static int topology_check_parameters(TopologyKind kind, int n, int degree, const char *file, int line,
                                     HsDiag *diag)
{
    if (kind < TOPO_FULL || kind > TOPO_FILE)
        return hs_diag_set(diag, HS_E_INTERNAL, file, line, "[topology] unknown graph kind %d", (int)kind);
    if (n < 1) return hs_diag_set(diag, HS_E_INPUT, file, line, "[topology] needs at least one agent, found %d", n);
    if (kind == TOPO_RANDOM_REGULAR) {
        if (degree < 0)
            return hs_diag_set(diag, HS_E_INPUT, file, line, "[topology] random-regular needs degree >= 0, found %d",
                               degree);
        if (degree >= n)
            return hs_diag_set(diag, HS_E_INPUT, file, line, "[topology] random-regular needs degree < agents (%d), "
                                                             "found %d", n, degree);
        if ((long long)n * degree % 2 != 0)
            return hs_diag_set(diag, HS_E_INPUT, file, line, "[topology] random-regular needs agents x degree even, "
                                                             "found %d x %d", n, degree);
        /* degree 0 connects one agent, degree 1 two; from 2 on a circulant graph exists */
        if ((degree == 0 && n > 1) || (degree == 1 && n > 2))
            return hs_diag_set(diag, HS_E_INPUT, file, line, "[topology] random-regular with degree %d cannot connect "
                                                             "%d agents: use degree 2 or more", degree, n);
    }
    long long entries = topology_entries(kind, n, degree);
    if (kind != TOPO_FULL && entries > INT_MAX)
        return hs_diag_set(diag, HS_E_INPUT, file, line, "[topology] %s over %d agents has %lld links, more than a "
                                                         "topology holds (%d)", topology_kind_name(kind), n,
                           entries / 2, INT_MAX / 2);
    return HS_OK;
}

int topology_check(TopologyKind kind, int n, int degree, const char *edges_file, const char *scenario_file,
                   int scenario_line, HsDiag *diag)
{
    int status = topology_check_parameters(kind, n, degree, scenario_file, scenario_line, diag);
    if (status != HS_OK || kind != TOPO_FILE) return status;
    if (edges_file == NULL || edges_file[0] == '\0')
        return hs_diag_set(diag, HS_E_INPUT, scenario_file, scenario_line, "[topology] graph = FILE.edges names no file");
    EdgeList e = {0};
    status = topology_load_edges(edges_file, n, &e, diag);
    edges_free(&e);
    return status;
}

int topology_build_kind(TopologyKind kind, int n, int degree, const char *file, uint64_t seed,
                        Topology *out, HsDiag *diag)
{
    EdgeList e = {0};
    memset(out, 0, sizeof *out);
    int status = topology_check_parameters(kind, n, degree, file, 0, diag);
    if (status != HS_OK) return status;
    if (kind == TOPO_FULL && topology_entries(kind, n, degree) > INT_MAX)
        return hs_diag_set(diag, HS_E_INPUT, file, 0, "[topology] full over %d agents has %lld links, more than a "
                                                     "topology holds (%d): give a sparse graph, e.g. random-regular",
                           n, topology_entries(kind, n, degree) / 2, INT_MAX / 2);
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
        status = topology_load_edges(file, n, &e, diag);
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
