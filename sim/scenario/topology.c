/* topology.c — graph construction from an edge list, deduplicated and sorted into CSR,
 * the random-regular generator, and the checks that say whether a graph can be built
 * before anything runs.
 * One file: the graph kinds, their parameter rules and the edges parser are checked and
 * built by the same code (topology_check and topology_build_kind must agree). */
#include "sim/scenario/topology.h"

#include "base/lines.h"
#include "sim/kernel/rng.h"

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

int topology_from_links(int n, const int *a, const int *b, size_t links, Topology *out)
{
    EdgeList e = {0};
    int status = HS_OK;
    for (size_t k = 0; k < links && status == HS_OK; k++) status = edges_add(&e, a[k], b[k]);
    if (status == HS_OK) status = topology_from_edges(n, &e, out);
    edges_free(&e);
    return status;
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

static int union_find_root(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]]; /* path halving */
        i = parent[i];
    }
    return i;
}

/* A set of links, keyed a·2^32 + b (a < b), each with an int value: an edges file's links
 * with the line that listed each, or a random-regular draw's links with their index in
 * its EdgeList. Open addressing with linear probing, so membership is O(1) and a link can
 * be removed (backward shift, no tombstones). */
typedef struct LinkSlot {
    uint64_t key; /* 0 marks an empty slot (a < b makes every key nonzero) */
    int value;
} LinkSlot;

typedef struct LinkSet {
    LinkSlot *slots; /* (cap) */
    size_t n, cap;   /* cap a power of two, at least twice n */
} LinkSet;

static uint64_t link_key(int a, int b)
{
    return a < b ? (uint64_t)a << 32 | (uint64_t)b : (uint64_t)b << 32 | (uint64_t)a;
}

static size_t link_set_home(const LinkSet *s, uint64_t key)
{
    uint64_t z = key; /* splitmix64's finaliser: neighbouring keys land far apart */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (size_t)z & (s->cap - 1);
}

/* The slot holding key, or the empty slot where it would go. cap must be nonzero. */
static size_t link_set_slot(const LinkSet *s, uint64_t key)
{
    size_t i = link_set_home(s, key);
    while (s->slots[i].key != 0 && s->slots[i].key != key) i = (i + 1) & (s->cap - 1);
    return i;
}

/* Adds link a-b with value: 0 when it is new, the value it already had otherwise (so an
 * edges file's first line, never 0), HS_E_NOMEM when the set cannot grow. */
static int link_set_add(LinkSet *s, int a, int b, int value)
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
    uint64_t key = link_key(a, b);
    LinkSlot *slot = &s->slots[link_set_slot(s, key)];
    if (slot->key == key) return slot->value;
    *slot = (LinkSlot){.key = key, .value = value};
    s->n++;
    return 0;
}

/* An empty set that holds links without growing. */
static int link_set_reserve(LinkSet *s, size_t links)
{
    size_t cap = 64;
    while (cap < 2 * (links + 1)) cap *= 2;
    *s = (LinkSet){.slots = calloc(cap, sizeof *s->slots), .cap = cap};
    return s->slots == NULL ? HS_E_NOMEM : HS_OK;
}

static int link_set_has(const LinkSet *s, int a, int b)
{
    if (s->cap == 0) return 0;
    uint64_t key = link_key(a, b);
    return s->slots[link_set_slot(s, key)].key == key;
}

/* Removes link a-b if present: the later slots of its probe run shift back into the hole
 * unless their home lies cyclically in (hole, slot], where they already are reachable. */
static void link_set_remove(LinkSet *s, int a, int b)
{
    if (s->cap == 0) return;
    size_t mask = s->cap - 1, hole = link_set_slot(s, link_key(a, b));
    if (s->slots[hole].key == 0) return;
    for (size_t i = (hole + 1) & mask; s->slots[i].key != 0; i = (i + 1) & mask) {
        size_t home = link_set_home(s, s->slots[i].key);
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            s->slots[hole] = s->slots[i];
            hole = i;
        }
    }
    s->slots[hole].key = 0;
    s->n--;
}

/* Random regular graphs.
 *
 * The configuration model pairs all n·d stubs at once and rejects the whole draw when it
 * holds a self-loop or a repeated link; it keeps a draw with probability about
 * exp(−(d²−1)/4): 1 in 40 at degree 4, 1 in 400 at 5, 1 in 6,000 at 6. Retried up to 1000
 * times (as this file once did) it often failed at degree 5 and nearly always from 6 on.
 * Instead stubs are paired one link at a time, as in Steger and Wormald's algorithm
 * (networkx's random_regular_graph): a uniform remaining stub u, then a uniform partner
 * among the remaining stubs that make a new link with it. When none does (every other
 * remaining stub sits on u or on one of its neighbours), one existing link is switched
 * to make room instead of restarting, which always succeeds when 2d <= n − 1
 * (regular_switch says why); denser graphs are drawn as the complement of a
 * (n − 1 − d)-regular one. The components are then joined by switches (regular_connect).
 * The result is simple, d-regular and connected, near uniform but not exactly (Steger–
 * Wormald's pairing is uniform only as n grows; joining favours some graphs, which
 * matters for degree 2, where most draws have several cycles). No retries: every (n, d)
 * that topology_check_parameters accepts is built, in expected O(n·d) time (O(n²) when
 * 2d >= n, the size of the result). */

/* Whether a stub at u and one at w make a new link. */
static int regular_can_link(const LinkSet *links, int u, int w)
{
    return u != w && !link_set_has(links, u, w);
}

static int regular_link(LinkSet *links, EdgeList *e, int u, int w)
{
    int status = edges_add(e, u, w);
    if (status == HS_OK) status = link_set_add(links, u, w, (int)(e->n - 1));
    return status < 0 ? status : HS_OK;
}

/* Links a stub at u with one at v (v == u, or v a neighbour of u) when no remaining stub
 * can link with u, by switching an existing link z-y into u-y and v-z.
 * Such a link exists when 2d <= n − 1. u and v each have a free stub, so at most d − 1
 * neighbours, and every stub still free sits on u or a neighbour of u. So at least
 * n − 2d >= 1 agents z are neither u, v nor next to either; each has all its d links,
 * and they cannot all go to u's d − 1 (or fewer) neighbours, so one goes to a y that is
 * neither u nor next to u (nor v, which is next to u). (When v == u, u has at most d − 2
 * neighbours and any z outside u's neighbourhood will do.) The scan over all links, each
 * read both ways, starts at a random one: O(links) at worst, O(1) when d is small against
 * n, where nearly any link will do. */
static int regular_switch(LinkSet *links, EdgeList *e, int u, int v, gsl_rng *rng)
{
    if (e->n == 0) return HS_E_INTERNAL;
    size_t start = (size_t)gsl_rng_uniform_int(rng, (unsigned long)e->n);
    for (size_t step = 0; step < 2 * e->n; step++) {
        size_t k = (start + step / 2) % e->n;
        int z = step % 2 ? e->b[k] : e->a[k], y = step % 2 ? e->a[k] : e->b[k];
        if (z == u || z == v || y == u || y == v || link_set_has(links, u, z) || link_set_has(links, v, z) ||
            link_set_has(links, u, y))
            continue;
        link_set_remove(links, z, y);
        e->a[k] = u < y ? u : y;
        e->b[k] = u < y ? y : u;
        int status = link_set_add(links, u, y, (int)k);
        return status < 0 ? status : regular_link(links, e, v, z);
    }
    return HS_E_INTERNAL; /* unreachable when 2d <= n − 1 */
}

/* A simple d-regular graph over n agents, 2d <= n − 1, not necessarily connected, into e. */
static int regular_pairing(int n, int d, gsl_rng *rng, EdgeList *e)
{
    enum { TRIES = 32 }; /* random partners tried before scanning all the remaining stubs */
    size_t left = (size_t)n * (size_t)d;
    int *stubs = malloc((left + 1) * sizeof *stubs); /* (left) the agent of each free stub */
    LinkSet links;
    if (link_set_reserve(&links, left / 2) != HS_OK || stubs == NULL) {
        free(stubs);
        free(links.slots);
        return HS_E_NOMEM;
    }
    for (size_t k = 0; k < left; k++) stubs[k] = (int)(k / (size_t)d);
    e->n = 0;
    int status = HS_OK;
    while (left > 0 && status == HS_OK) {
        size_t pick = (size_t)gsl_rng_uniform_int(rng, (unsigned long)left), last = left - 1;
        int u = stubs[pick];
        stubs[pick] = stubs[last];
        stubs[last] = u;
        /* the partner, uniform among the stubs in 0..last-1 that can link with u: random
         * tries are that when one succeeds, and cost O(1) unless u has few partners left */
        size_t partner = last;
        for (int t = 0; t < TRIES && partner == last; t++) {
            size_t k = (size_t)gsl_rng_uniform_int(rng, (unsigned long)last);
            if (regular_can_link(&links, u, stubs[k])) partner = k;
        }
        if (partner == last) {
            size_t usable = 0;
            for (size_t k = 0; k < last; k++) usable += (size_t)regular_can_link(&links, u, stubs[k]);
            if (usable > 0) {
                size_t nth = (size_t)gsl_rng_uniform_int(rng, (unsigned long)usable);
                for (partner = 0; !regular_can_link(&links, u, stubs[partner]) || nth-- > 0; partner++) {}
            }
        }
        if (partner < last) {
            status = regular_link(&links, e, u, stubs[partner]);
        } else {
            partner = (size_t)gsl_rng_uniform_int(rng, (unsigned long)last);
            status = regular_switch(&links, e, u, stubs[partner], rng);
        }
        int w = stubs[partner];
        stubs[partner] = stubs[last - 1];
        stubs[last - 1] = w;
        left -= 2;
    }
    free(stubs);
    free(links.slots);
    return status;
}

/* Replaces the d_h-regular graph in e by its complement. O(n²), the size of the result
 * when d_h < n/2. */
static int regular_complement(int n, int d_h, EdgeList *e)
{
    int *rows = malloc(((size_t)n * (size_t)d_h + 1) * sizeof *rows); /* (n, d_h) sorted */
    int *fill = calloc((size_t)n, sizeof *fill);
    EdgeList complement = {0};
    int status = HS_E_NOMEM;
    if (rows == NULL || fill == NULL) goto done;
    for (size_t k = 0; k < e->n; k++) {
        rows[(size_t)e->a[k] * d_h + fill[e->a[k]]++] = e->b[k];
        rows[(size_t)e->b[k] * d_h + fill[e->b[k]]++] = e->a[k];
    }
    status = HS_OK;
    for (int i = 0; i < n && status == HS_OK; i++) {
        int *row = rows + (size_t)i * d_h, k = 0;
        qsort(row, (size_t)d_h, sizeof *row, compare_int);
        for (int j = i + 1; j < n && status == HS_OK; j++) {
            while (k < d_h && row[k] < j) k++;
            if (k == d_h || row[k] != j) status = edges_add(&complement, i, j);
        }
    }
    if (status == HS_OK) {
        EdgeList swap = *e;
        *e = complement;
        complement = swap;
    }
done:
    free(rows);
    free(fill);
    edges_free(&complement);
    return status;
}

/* Joins the components of a simple graph of minimum degree 2 into one, keeping every
 * degree and no loop or repeated link. Union-find over the links in order: a link whose
 * ends are already joined closes a cycle, so removing it leaves its component connected.
 * Each other component C is joined to the growing part M by switching such a link a-b of
 * C and a link c-x of M into c-a and x-b: C minus a-b stays whole and both halves of M
 * minus c-x (if c-x was a bridge) attach to it; the new links run between components,
 * so neither existed. O(n + links). */
static int regular_connect(int n, EdgeList *e)
{
    int *parent = malloc((size_t)n * sizeof *parent);
    int *cycle = malloc((size_t)n * sizeof *cycle); /* a cycle link of a root's component */
    if (parent == NULL || cycle == NULL) {
        free(parent);
        free(cycle);
        return HS_E_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        parent[i] = i;
        cycle[i] = -1;
    }
    for (size_t k = 0; k < e->n; k++) {
        int ra = union_find_root(parent, e->a[k]), rb = union_find_root(parent, e->b[k]);
        if (ra == rb) {
            if (cycle[ra] < 0) cycle[ra] = (int)k;
        } else {
            parent[ra] = rb;
            if (cycle[rb] < 0) cycle[rb] = cycle[ra];
        }
    }
    int status = HS_OK, root = union_find_root(parent, 0), joint = cycle[root]; /* a link of M */
    for (int i = 1; i < n && status == HS_OK; i++) {
        int r = union_find_root(parent, i);
        if (r == root) continue;
        if (cycle[r] < 0 || joint < 0) {
            status = HS_E_INTERNAL; /* a component without a cycle: a degree below 2 */
            break;
        }
        int k = cycle[r], a = e->a[k], b = e->b[k], c = e->a[joint], x = e->b[joint];
        e->a[joint] = c < a ? c : a;
        e->b[joint] = c < a ? a : c;
        e->a[k] = x < b ? x : b;
        e->b[k] = x < b ? b : x;
        parent[r] = root;
    }
    free(parent);
    free(cycle);
    return status;
}

/* A random simple connected d-regular graph over n agents into e, for any (n, d) that
 * topology_check_parameters accepts. */
static int topology_random_regular(int n, int d, gsl_rng *rng, EdgeList *e)
{
    if (2 * d > n - 1) {
        /* the complement of a sparse draw; any two agents of degree >= n/2 that are not
         * linked share a neighbour, so it is connected */
        int status = regular_pairing(n, n - 1 - d, rng, e);
        return status == HS_OK ? regular_complement(n, n - 1 - d, e) : status;
    }
    int status = regular_pairing(n, d, rng, e);
    return status == HS_OK && d >= 2 ? regular_connect(n, e) : status;
}

/* Parses an edges file: one link "I J" per line, I and J in 0..n-1, blank lines and '#'
 * comments allowed. A line that is not two indices, an index out of range, a self-loop or
 * a link listed a second time (either way round) is an error at its line. O(lines). */
static int topology_read_edges(const char *path, int n, EdgeList *e, HsDiag *diag)
{
    LineText text;
    int status = lines_open(path, &text, diag);
    if (status != HS_OK) return status;
    LinkSet seen = {0};
    char line[512];
    int lineno = 0;
    while (lines_each(&text, line, (int)sizeof line, &status, diag)) {
        lineno = text.lineno;
        const char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (*p == '\0') continue;
        long a, b;
        const char *a_text, *b_text;
        int a_len, b_len;
        if (!lines_parse_index(&p, &a, &a_text, &a_len) || !lines_parse_index(&p, &b, &b_text, &b_len)) {
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
    lines_free(&text);
    free(seen.slots);
    return status;
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
    case TOPO_LEARNED: return (long long)n * degree;
    case TOPO_FILE: return 0;
    }
    return 0;
}

static const char *topology_kind_name(TopologyKind kind)
{
    static const char *const names[] = {"full", "ring", "torus", "random-regular", "exponential", "learned",
                                         "FILE.edges"};
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
    if (kind == TOPO_LEARNED && n > TOPOLOGY_LEARN_MAX_AGENTS)
        return hs_diag_set(diag, HS_E_INPUT, file, line, "[topology] learned over %d agents: at most %d (a dense "
                                                         "matrix and an O(n^3) assignment per Frank-Wolfe step)",
                           n, TOPOLOGY_LEARN_MAX_AGENTS);
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
        if (rng == NULL) {
            status = HS_E_NOMEM;
            break;
        }
        status = topology_random_regular(n, degree, rng, &e);
        gsl_rng_free(rng);
        if (status == HS_E_INTERNAL)
            status = hs_diag_set(diag, status, file, 0, "[topology] random-regular draw of degree %d over %d agents "
                                                       "broke an invariant (a bug)", degree, n);
        break;
    }
    case TOPO_FILE:
        status = topology_load_edges(file, n, &e, diag);
        break;
    case TOPO_LEARNED: /* needs the data partition: sim/world/world_topology.h */
        status = hs_diag_set(diag, HS_E_INTERNAL, file, 0, "[topology] learned is built from the agents' labels "
                                                           "(world_topology), not here");
        break;
    }
    if (status == HS_OK) status = topology_from_edges(n, &e, out);
    edges_free(&e);
    if (status != HS_OK) return status;
    if (kind == TOPO_RANDOM_REGULAR && out->offsets[n] != n * degree) { /* topology_from_edges merged a repeat */
        topology_free(out);
        return hs_diag_set(diag, HS_E_INTERNAL, file, 0, "[topology] random-regular draw of degree %d over %d agents "
                                                        "is not simple (a bug)", degree, n);
    }
    if (!topology_connected(out)) {
        topology_free(out);
        return hs_diag_set(diag, HS_E_INPUT, file, 0, "[topology] the graph is disconnected: every agent must "
                                                     "reach every other");
    }
    return HS_OK;
}

void topology_drop_weights(Topology *t)
{
    free(t->weights);
    free(t->self_weights);
    t->weights = t->self_weights = NULL;
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
