/* collective.c — the collectives of the kernel (collective.h): a ring all-reduce's
 * members join here and the network model times the ring itself; the nested partial
 * all-reduce is rings over prefixes; the all-gather is messages round the ring.
 * Work: O(n log n) time per nested reduce (a sort of its members by level, in memory
 * kept from init), O(1) per all-gather hop. */
#include "sim/kernel/collective.h"

#include "sim/kernel/engine_network.h"

#include <stdlib.h>
#include <string.h>

void engine_collective_begin(Collective *c, const int *members, int n_members, double bytes,
                             int blocking, int kind, int64_t data)
{
    *c = (Collective){.members = members, .n_members = n_members, .bytes = bytes,
                      .blocking = blocking, .kind = kind, .data = data};
}

int engine_collective_join(Engine *e, Collective *c, int node)
{
    double t;
    int joins;
    int status = e->model->join_time(e, c, node, &t, &joins);
    if (status != HS_OK || !joins) return status;
    if (c->joined == 0 || t > c->ready) c->ready = t;
    if (++c->joined < c->n_members) return HS_OK;
    /* under [agents] loss a ring's chunks are messages that may be lost (loss.c) */
    return e->loss ? engine_loss_ring(e, c) : e->model->ring(e, c);
}

int engine_collective_compute_join(Engine *e, Collective *c, int node, double flops, int steps)
{
    if (!c->blocking || (steps > 1 && engine_records_activity(e)))
        return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "a sweep's join needs a blocking collective%s",
                           steps > 1 ? " and no activity recorded" : "");
    double finish;
    for (int k = 0; k < steps; k++) {
        int status = engine_book_compute(e, node, flops, &finish);
        if (status != HS_OK) return status;
    }
    return engine_collective_join(e, c, node);
}

/* ---- nested partial all-reduce ---- */

/* qsort context-free: members are sorted through (level, position) pairs */
typedef struct NestedRank {
    double level;
    int position, agent;
} NestedRank;

int nested_reduce_init(NestedReduce *r, int n)
{
    memset(r, 0, sizeof *r);
    r->shell_level = calloc((size_t)n, sizeof *r->shell_level);
    r->shell_bytes = calloc((size_t)n, sizeof *r->shell_bytes);
    r->order = calloc((size_t)n, sizeof *r->order);
    r->shells = calloc((size_t)n, sizeof *r->shells);
    r->rank = malloc((size_t)(n > 0 ? n : 1) * sizeof *r->rank);
    return r->shell_level && r->shell_bytes && r->order && r->shells && r->rank ? HS_OK : HS_E_NOMEM;
}

void nested_reduce_free(NestedReduce *r)
{
    free(r->shell_level);
    free(r->shell_bytes);
    free(r->order);
    free(r->shells);
    free(r->rank);
    memset(r, 0, sizeof *r);
}


static int nested_compare_rank(const void *a, const void *b)
{
    const NestedRank *x = a, *y = b;
    if (x->level != y->level) return x->level < y->level ? 1 : -1; /* larger levels first */
    return (x->position > y->position) - (x->position < y->position);
}

int nested_reduce_begin(NestedReduce *r, const double *level, const double *bytes, const int *members,
                        int n_members, int blocking, int kind)
{
    /* Members by level, largest first (ties in member order): shell l's members, those
     * with level >= k_l, are a prefix. A ring's time does not depend on its order (every
     * member sends on its uplink and receives on its downlink once per step), so the
     * prefix serves as the ring. O(n log n) time per averaging, in the scratch of init. */
    NestedRank *rank = r->rank;
    r->level = level;
    for (int k = 0; k < n_members; k++) {
        int i = members ? members[k] : k;
        rank[k] = (NestedRank){.level = level[i], .position = k, .agent = i};
    }
    qsort(rank, (size_t)n_members, sizeof *rank, nested_compare_rank);
    for (int k = 0; k < n_members; k++) r->order[k] = rank[k].agent;
    /* distinct levels ascending: walk the sorted list from its end */
    r->n_shells = 0;
    for (int k = n_members - 1; k >= 0; k--) {
        if (r->n_shells > 0 && r->shell_level[r->n_shells - 1] == rank[k].level) continue;
        r->shell_level[r->n_shells] = rank[k].level;
        r->shell_bytes[r->n_shells] = bytes[rank[k].agent]; /* bytes of level k_l, made a shell's below */
        r->n_shells++;
    }
    double below = 0;
    int count = n_members;
    for (int l = 0; l < r->n_shells; l++) {
        while (count > 0 && rank[count - 1].level < r->shell_level[l]) count--;
        double held = r->shell_bytes[l];
        r->shell_bytes[l] = held - below;
        below = held;
        engine_collective_begin(&r->shells[l], r->order, count, r->shell_bytes[l], blocking, kind, l);
    }
    r->pending = r->n_shells;
    return HS_OK;
}

int nested_reduce_join(Engine *e, NestedReduce *r, int agent)
{
    /* Joined innermost first. Under maxmin a join waits for the agent's own messages (a
     * ComDML offloader's activations); the engine keeps every such wait, in order. */
    for (int l = 0; l < r->n_shells; l++) {
        if (r->level[agent] < r->shell_level[l]) break;
        int status = engine_collective_join(e, &r->shells[l], agent);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

int nested_reduce_done(NestedReduce *r)
{
    return --r->pending == 0;
}

/* ---- ring all-gather ---- */

int ring_gather_init(RingGather *g, int n_agents, int kind)
{
    memset(g, 0, sizeof *g);
    g->n_agents = n_agents;
    g->kind = kind;
    g->position = malloc((size_t)n_agents * sizeof *g->position);
    g->bytes = calloc((size_t)n_agents, sizeof *g->bytes);
    g->received = calloc((size_t)n_agents, sizeof *g->received);
    return g->position && g->bytes && g->received ? HS_OK : HS_E_NOMEM;
}

void ring_gather_free(RingGather *g)
{
    free(g->position);
    free(g->bytes);
    free(g->received);
    memset(g, 0, sizeof *g);
}

static int ring_gather_member(const RingGather *g, int position)
{
    return g->members ? g->members[position] : position;
}

void ring_gather_begin(RingGather *g, const int *members, int n_members)
{
    g->members = members;
    g->n = n_members;
    g->complete = 0;
    for (int i = 0; i < g->n_agents; i++) g->position[i] = -1;
    for (int k = 0; k < n_members; k++) {
        g->position[ring_gather_member(g, k)] = k;
        g->received[k] = 0;
        g->bytes[k] = 0;
    }
}

int ring_gather_offer(Engine *e, RingGather *g, int agent, double bytes, int *complete)
{
    int p = g->position[agent];
    g->bytes[p] = bytes;
    *complete = g->n == 1;
    if (*complete) return HS_OK;
    return engine_send(e, agent, ring_gather_member(g, (p + 1) % g->n), bytes, g->kind, p);
}

int ring_gather_arrived(Engine *e, RingGather *g, const Event *ev, int *complete)
{
    int p = g->position[ev->agent], origin = (int)ev->data;
    int next = (p + 1) % g->n;
    *complete = 0;
    if (next != origin) {
        int status = engine_send(e, ev->agent, ring_gather_member(g, next), g->bytes[origin], g->kind, origin);
        if (status != HS_OK) return status;
    }
    if (++g->received[p] == g->n - 1) g->complete++;
    *complete = g->complete == g->n;
    return HS_OK;
}
