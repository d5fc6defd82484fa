/* network.c — max-min fair link sharing, incremental, with closed-form rings.
 * Data: links (2n + backbone) each hold the flows transferring on them (swap-remove, each
 * flow knows its slot); flows live in a pool of indices; one indexed binary heap orders
 * every timed thing (a flow's latency end or completion, a closed-form ring's end, a
 * link's next capacity change) by (time, creation sequence), so runs are deterministic.
 * Shares are recomputed lazily, once per instant, by progressive filling (a heap of link
 * levels: O(F log L) for F flows on L links) over the flows of the links that changed,
 * grown only as far as the new shares disturb other flows (network_recompute).
 * One file on purpose: the flow heap, the progressive filling and its incremental
 * recomputation share invariants that only hold together (about 1,200 lines). */
#include "sim/kernel/network.h"
#include "base/hs_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { FLOW_FREE = 0, FLOW_WAITING, FLOW_LATENCY, FLOW_ACTIVE };
enum { HANDLE_FLOW = 0, HANDLE_RING = 1, HANDLE_LINK = 2 };

typedef struct NetFlow {
    /* what the recomputation reads, in the first cache line (its S membership and
     * index are in Network.mark and .index, dense) */
    int bottleneck;    /* the link that set its share, -1: none (infinite links only) */
    int n_links;
    int links[3];
    int heap;          /* position in the heap, -1 when not scheduled */
    double share;      /* allocated bytes/s; it progresses at share * bandwidth_factor */
    double weight;
    /* the rest */
    int src, dst;
    int slots[3];      /* position in each link's flow array while active */
    int state;
    int ring;          /* -1, or the ring this flow is a hop of */
    int next;          /* uplink queue, free list */
    double bytes_left; /* at `updated` */
    double updated;
    double latency;
    double when;
    double bytes;      /* for the trace hook */
    double created;    /* its latency began */
    double activated;  /* its transfer began (NAN until then, or set by a ring's conversion) */
    uint64_t seq;
    NetworkPayload payload;
} NetFlow;

/* A flow on a link, with the copies of its share, weight and whether this link holds
 * it that the recomputation reads: scanning a link touches no flow. */
typedef struct LinkEntry {
    int flow;
    int held;          /* the flow's bottleneck is this link */
    double share, weight;
} LinkEntry;

typedef struct NetLink {
    double capacity;
    double used;       /* sum of the shares of its flows (exactly 0 when it has none) */
    LinkEntry *entries; /* transferring flows */
    int n, cap;
    int users;         /* flows in any state that will cross it */
    int ring;          /* closed-form ring holding it, -1 */
    int heap;          /* capacity change event */
    double when;
    int dirty;
    unsigned mark;
    /* recompute: the link's residual, weight and count of S flows without their shares
     * (base_), and while filling */
    double base_residual, base_weights, residual, weights;
    int base_unfrozen, unfrozen;
    unsigned version;
} NetLink;

typedef struct NetRing {
    int used;
    int *members;      /* (n) */
    int n;
    double chunk;
    int steps, step, pending;
    int traced;        /* closed form: steps already reported to the trace hook */
    int closed;
    double t0, period, reported;
    double *lat, *rate; /* (n) hop k -> k+1, closed form */
    int heap;
    double when;
    uint64_t seq;
    NetworkPayload payload;
} NetRing;

typedef struct HeapItem {
    double when;
    uint64_t tie;
    int64_t handle;
} HeapItem;

typedef struct FillItem {
    double key;
    int link;
    unsigned version;
} FillItem;

struct Network {
    NetworkOptions opt;
    NetworkHooks hooks;
    int n;             /* agents */
    int n_links;
    NetLink *links;
    double *latency;   /* (n) */
    NetFlow *flows;
    unsigned *mark;    /* (cap_flows) recompute epoch of a flow in S */
    int *index;        /* (cap_flows) its index in S */
    int cap_flows, used_flows, free_flow;
    NetRing *rings;
    int n_rings;
    int *active_count; /* (n) own flows transferring */
    double *active_since;
    int *outgoing;     /* (n) */
    int *queue_head, *queue_tail, *sending; /* (n) uplink fifo */
    HeapItem *heap;
    int heap_n, heap_cap;
    int *dirty;
    int n_dirty;
    double now;
    uint64_t seq;
    unsigned epoch;
    int live;          /* messages and rings not finished */
    /* recompute scratch */
    int *comp_links, *comp_flows, *violated;
    int cap_comp_links, cap_comp_flows, cap_violated;
    FillItem *fill;
    int fill_n, fill_cap;
    double *share;     /* (cap_share) by S index */
    int *bottleneck;   /* (cap_share) */
    int cap_share;
    NetworkStats stats;
};

/* ---- heap of handles keyed by (when, seq) ---- */

static int64_t handle(int type, int index)
{
    return ((int64_t)type << 32) | (uint32_t)index;
}

static int handle_type(int64_t h)
{
    return (int)(h >> 32);
}

static int handle_index(int64_t h)
{
    return (int)(uint32_t)h;
}

static double handle_when(const Network *net, int64_t h)
{
    int i = handle_index(h);
    switch (handle_type(h)) {
    case HANDLE_FLOW: return net->flows[i].when;
    case HANDLE_RING: return net->rings[i].when;
    default: return net->links[i].when;
    }
}

static uint64_t handle_seq(const Network *net, int64_t h)
{
    int i = handle_index(h);
    switch (handle_type(h)) {
    case HANDLE_FLOW: return net->flows[i].seq;
    case HANDLE_RING: return net->rings[i].seq;
    default: return (uint64_t)i;
    }
}

static int *handle_pos(Network *net, int64_t h)
{
    int i = handle_index(h);
    switch (handle_type(h)) {
    case HANDLE_FLOW: return &net->flows[i].heap;
    case HANDLE_RING: return &net->rings[i].heap;
    default: return &net->links[i].heap;
    }
}

/* (time, tie) of an entity as the heap orders it: at equal times capacity changes, then
 * rings, then flows, each in creation order. Kept in the heap entries so comparisons do
 * not chase the entities. */
static HeapItem heap_item(const Network *net, int64_t h)
{
    uint64_t tie = ((uint64_t)(2 - handle_type(h)) << 62) | (handle_seq(net, h) & ((1ull << 62) - 1));
    return (HeapItem){.when = handle_when(net, h), .tie = tie, .handle = h};
}

static int heap_less(const HeapItem *a, const HeapItem *b)
{
    return a->when < b->when || (a->when == b->when && a->tie < b->tie);
}

static void heap_set(Network *net, int pos, HeapItem item)
{
    net->heap[pos] = item;
    *handle_pos(net, item.handle) = pos;
}

static void heap_up(Network *net, int pos)
{
    HeapItem item = net->heap[pos];
    while (pos > 0) {
        int parent = (pos - 1) / 2;
        if (!heap_less(&item, &net->heap[parent])) break;
        heap_set(net, pos, net->heap[parent]);
        pos = parent;
    }
    heap_set(net, pos, item);
}

static void heap_down(Network *net, int pos)
{
    HeapItem item = net->heap[pos];
    for (;;) {
        int child = 2 * pos + 1;
        if (child >= net->heap_n) break;
        if (child + 1 < net->heap_n && heap_less(&net->heap[child + 1], &net->heap[child])) child++;
        if (!heap_less(&net->heap[child], &item)) break;
        heap_set(net, pos, net->heap[child]);
        pos = child;
    }
    heap_set(net, pos, item);
}

/* Inserts h, or moves it after its time changed. */
static int heap_update(Network *net, int64_t h)
{
    int *pos = handle_pos(net, h);
    HeapItem item = heap_item(net, h);
    if (*pos >= 0) {
        int at = *pos;
        int earlier = heap_less(&item, &net->heap[at]);
        net->heap[at] = item;
        if (earlier) heap_up(net, at);
        else heap_down(net, at);
        return HS_OK;
    }
    if (net->heap_n == net->heap_cap) {
        int cap = net->heap_cap ? net->heap_cap * 2 : 64;
        HeapItem *grown = realloc(net->heap, (size_t)cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        net->heap = grown;
        net->heap_cap = cap;
    }
    net->heap[net->heap_n] = item;
    *pos = net->heap_n++;
    heap_up(net, *pos);
    return HS_OK;
}

static void heap_remove(Network *net, int64_t h)
{
    int *pos = handle_pos(net, h);
    int at = *pos;
    if (at < 0) return;
    *pos = -1;
    HeapItem last = net->heap[--net->heap_n];
    if (at == net->heap_n) return;
    int earlier = heap_less(&last, &net->heap[at]);
    heap_set(net, at, last);
    if (earlier) heap_up(net, at);
    else heap_down(net, at);
}

/* ---- links ---- */

static int link_up(const Network *net, int agent)
{
    (void)net;
    return agent;
}

static int link_down(const Network *net, int agent)
{
    return net->n + agent;
}

static void link_mark_dirty(Network *net, int l)
{
    NetLink *link = &net->links[l];
    if (link->dirty) return;
    link->dirty = 1;
    net->dirty[net->n_dirty++] = l;
}

/* Current capacity; schedules its next change while flows use it. */
static int link_refresh(Network *net, int l)
{
    NetLink *link = &net->links[l];
    if (net->opt.capacity == NULL) return HS_OK;
    double next = INFINITY;
    link->capacity = net->opt.capacity(net->opt.capacity_ctx, l, net->now, &next);
    link->when = next;
    if (isfinite(next)) return heap_update(net, handle(HANDLE_LINK, l));
    heap_remove(net, handle(HANDLE_LINK, l));
    return HS_OK;
}

static int link_add_flow(Network *net, int l, int f)
{
    NetLink *link = &net->links[l];
    if (link->n == link->cap) {
        int cap = link->cap ? link->cap * 2 : 4;
        LinkEntry *grown = realloc(link->entries, (size_t)cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        link->entries = grown;
        link->cap = cap;
    }
    NetFlow *flow = &net->flows[f];
    for (int k = 0; k < flow->n_links; k++)
        if (flow->links[k] == l) flow->slots[k] = link->n;
    link->entries[link->n++] = (LinkEntry){.flow = f, .held = flow->bottleneck == l, .share = flow->share,
                                           .weight = flow->weight};
    link_mark_dirty(net, l);
    if (link->n == 1) return link_refresh(net, l);
    return HS_OK;
}

static void link_remove_flow(Network *net, int l, int slot)
{
    NetLink *link = &net->links[l];
    link->used = link->n == 1 ? 0 : link->used - link->entries[slot].share;
    LinkEntry last = link->entries[--link->n];
    int moved = last.flow;
    if (slot < link->n) {
        link->entries[slot] = last;
        NetFlow *m = &net->flows[moved];
        for (int k = 0; k < m->n_links; k++)
            if (m->links[k] == l) m->slots[k] = slot;
    }
    /* The freed share matters only to flows this link holds: the others are held below
     * its level elsewhere, where nothing changed (capacity changes always mark). */
    for (int j = 0; j < link->n; j++)
        if (link->entries[j].held) {
            link_mark_dirty(net, l);
            return;
        }
}

/* ---- activity ---- */

static void activity_open(Network *net, int agent)
{
    if (net->active_count[agent]++ == 0) net->active_since[agent] = net->now;
}

static void activity_close(Network *net, int agent)
{
    if (--net->active_count[agent] == 0 && net->hooks.active && net->now > net->active_since[agent])
        net->hooks.active(net->hooks.ctx, agent, net->active_since[agent], net->now);
}

/* ---- flows ---- */

static int flow_alloc(Network *net)
{
    if (net->free_flow < 0) {
        int cap = net->cap_flows ? net->cap_flows * 2 : 64;
        NetFlow *grown = realloc(net->flows, (size_t)cap * sizeof *grown);
        if (grown == NULL) return -1;
        net->flows = grown;
        unsigned *mark = realloc(net->mark, (size_t)cap * sizeof *mark);
        if (mark) net->mark = mark;
        int *index = realloc(net->index, (size_t)cap * sizeof *index);
        if (index) net->index = index;
        if (mark == NULL || index == NULL) return -1;
        for (int i = net->cap_flows; i < cap; i++) mark[i] = 0;
        for (int i = cap - 1; i >= net->cap_flows; i--) {
            grown[i].state = FLOW_FREE;
            grown[i].next = net->free_flow;
            net->free_flow = i;
        }
        net->cap_flows = cap;
    }
    int f = net->free_flow;
    net->free_flow = net->flows[f].next;
    net->used_flows++;
    return f;
}

static void flow_release(Network *net, int f)
{
    net->flows[f].state = FLOW_FREE;
    net->flows[f].next = net->free_flow;
    net->free_flow = f;
    net->used_flows--;
}

static double flow_speed(const Network *net, const NetFlow *f)
{
    return f->share * net->opt.bandwidth_factor;
}

/* Settles bytes_left at now under the current share. */
static void flow_settle(Network *net, NetFlow *f)
{
    double dt = net->now - f->updated;
    if (dt > 0 && f->share > 0) {
        f->bytes_left -= isinf(f->share) ? f->bytes_left : flow_speed(net, f) * dt;
        if (f->bytes_left < 0) f->bytes_left = 0;
    }
    f->updated = net->now;
}

static void flow_set_when_by_share(Network *net, NetFlow *f)
{
    double speed = flow_speed(net, f);
    if (f->bytes_left <= 0 || isinf(speed)) f->when = net->now;
    else if (speed > 0) f->when = net->now + f->bytes_left / speed;
    else f->when = INFINITY;
}

static int flow_begin_latency(Network *net, int f, double wait)
{
    NetFlow *flow = &net->flows[f];
    flow->state = FLOW_LATENCY;
    flow->when = net->now + wait;
    flow->created = net->now;
    if (net->opt.uplink_fifo) net->sending[flow->src] = 1;
    return heap_update(net, handle(HANDLE_FLOW, f));
}

/* Latency paid: the flow joins its links (share 0 until the recompute). */
static int flow_activate(Network *net, int f)
{
    NetFlow *flow = &net->flows[f];
    flow->state = FLOW_ACTIVE;
    flow->share = 0;
    flow->updated = net->now;
    if (isnan(flow->activated)) flow->activated = net->now;
    flow->when = INFINITY;
    activity_open(net, flow->src);
    if (flow->dst != flow->src) activity_open(net, flow->dst);
    int status = HS_OK;
    for (int k = 0; k < flow->n_links && status == HS_OK; k++) status = link_add_flow(net, flow->links[k], f);
    if (flow->bytes_left <= 0) {
        flow->when = net->now;
        if (status == HS_OK) status = heap_update(net, handle(HANDLE_FLOW, f));
    }
    return status;
}

static int ring_hop_done(Network *net, int r);
static int ring_convert(Network *net, int r);

/* A new flow over the links of a closed-form ring turns that ring into hop flows first. */
static int flow_claim_links(Network *net, const int *links, int n_links)
{
    for (int k = 0; k < n_links; k++) {
        int r = net->links[links[k]].ring;
        if (r >= 0) {
            int status = ring_convert(net, r);
            if (status != HS_OK) return status;
        }
    }
    return HS_OK;
}

static int flow_start(Network *net, int from, int to, double bytes, int ring, NetworkPayload payload,
                      double latency_left, int *out)
{
    int links[3], n_links = 0;
    links[n_links++] = link_up(net, from);
    links[n_links++] = link_down(net, to);
    if (isfinite(net->opt.backbone)) links[n_links++] = 2 * net->n;
    int status = flow_claim_links(net, links, n_links);
    if (status != HS_OK) return status;
    int f = flow_alloc(net);
    if (f < 0) return HS_E_NOMEM;
    NetFlow *flow = &net->flows[f];
    memset(flow, 0, sizeof *flow);
    flow->src = from;
    flow->dst = to;
    flow->n_links = n_links;
    memcpy(flow->links, links, sizeof links);
    flow->ring = ring;
    flow->heap = -1;
    flow->bottleneck = -1;
    flow->next = -1;
    flow->bytes_left = flow->bytes = bytes;
    flow->updated = net->now;
    flow->activated = NAN;
    flow->seq = net->seq++;
    flow->payload = payload;
    double raw = net->latency[from] > net->latency[to] ? net->latency[from] : net->latency[to];
    flow->latency = raw * net->opt.latency_factor;
    flow->weight = 1;
    if (net->opt.weight_s > 0) {
        double penalty = raw;
        for (int k = 0; k < n_links; k++) {
            NetLink *link = &net->links[links[k]];
            if (net->opt.capacity && link->n == 0) link_refresh(net, links[k]);
            penalty += net->opt.weight_s / link->capacity;
        }
        if (penalty > 0) flow->weight = 1 / penalty;
    }
    for (int k = 0; k < n_links; k++) net->links[links[k]].users++;
    net->outgoing[from]++;
    net->live++;
    net->stats.flows_started++;
    if (out) *out = f;
    if (net->opt.uplink_fifo && net->sending[from]) {
        flow->state = FLOW_WAITING;
        if (net->queue_tail[from] >= 0) net->flows[net->queue_tail[from]].next = f;
        else net->queue_head[from] = f;
        net->queue_tail[from] = f;
        return HS_OK;
    }
    return flow_begin_latency(net, f, latency_left < 0 ? flow->latency : latency_left);
}

/* The transfer ended at now. */
static int flow_finish(Network *net, int f)
{
    NetFlow *flow = &net->flows[f];
    for (int k = 0; k < flow->n_links; k++) {
        link_remove_flow(net, flow->links[k], flow->slots[k]);
        net->links[flow->links[k]].users--;
    }
    activity_close(net, flow->src);
    if (flow->dst != flow->src) activity_close(net, flow->dst);
    if (net->hooks.traced)
        net->hooks.traced(net->hooks.ctx, flow->src, flow->dst, flow->bytes, flow->created, flow->activated, net->now);
    int src = flow->src, ring = flow->ring;
    NetworkPayload payload = flow->payload;
    flow_release(net, f);
    net->live--;
    net->stats.flows_finished++;
    int status = HS_OK;
    if (net->opt.uplink_fifo) {
        net->sending[src] = 0;
        int next = net->queue_head[src];
        if (next >= 0) {
            net->queue_head[src] = net->flows[next].next;
            if (net->queue_head[src] < 0) net->queue_tail[src] = -1;
            net->flows[next].next = -1;
            status = flow_begin_latency(net, next, net->flows[next].latency);
        }
    }
    if (--net->outgoing[src] == 0 && net->hooks.sender_idle) net->hooks.sender_idle(net->hooks.ctx, src, net->now);
    if (status != HS_OK) return status;
    if (ring >= 0) return ring_hop_done(net, ring);
    if (net->hooks.done) net->hooks.done(net->hooks.ctx, &payload, net->now);
    return HS_OK;
}

int network_send(Network *net, double now, int from, int to, double bytes, NetworkPayload payload)
{
    if (now > net->now) net->now = now;
    return flow_start(net, from, to, bytes, -1, payload, -1, NULL);
}

/* ---- rings ---- */

static int ring_alloc(Network *net)
{
    for (int r = 0; r < net->n_rings; r++)
        if (!net->rings[r].used) return r;
    NetRing *grown = realloc(net->rings, (size_t)(net->n_rings + 1) * sizeof *grown);
    if (grown == NULL) return -1;
    net->rings = grown;
    memset(&grown[net->n_rings], 0, sizeof *grown);
    return net->n_rings++;
}

static void ring_release(Network *net, int r)
{
    NetRing *ring = &net->rings[r];
    free(ring->members);
    free(ring->lat);
    free(ring->rate);
    memset(ring, 0, sizeof *ring);
    net->live--;
}

/* Hop k's transfer within a step of a closed-form ring: [lat, lat + chunk / rate). */
static double ring_hop_end(const NetRing *ring, int k)
{
    return ring->lat[k] + (isinf(ring->rate[k]) ? 0 : ring->chunk / ring->rate[k]);
}

/* Reports the closed-form ring's activity in [ring->reported, to) for every member. */
static void ring_report(Network *net, int r, double to)
{
    NetRing *ring = &net->rings[r];
    if (net->hooks.active_periodic && to > ring->reported) {
        for (int k = 0; k < ring->n; k++) {
            int prev = (k + ring->n - 1) % ring->n;
            double a0 = ring->lat[k], b0 = ring_hop_end(ring, k);
            double a1 = ring->lat[prev], b1 = ring_hop_end(ring, prev);
            NetworkPeriodic p = {.t0 = ring->t0, .period = ring->period, .count = ring->steps,
                                 .from = ring->reported, .to = to};
            if (a1 < a0) { /* sort */
                double ta = a0, tb = b0;
                a0 = a1, b0 = b1, a1 = ta, b1 = tb;
            }
            if (a1 <= b0) { /* overlap: one interval */
                p.n_sub = 1;
                p.a[0] = a0;
                p.b[0] = b1 > b0 ? b1 : b0;
            } else {
                p.n_sub = 2;
                p.a[0] = a0, p.b[0] = b0, p.a[1] = a1, p.b[1] = b1;
            }
            net->hooks.active_periodic(net->hooks.ctx, ring->members[k], &p);
        }
    }
    if (to > ring->reported) ring->reported = to;
}

/* Reports the closed-form hops of steps [ring->traced, upto) to the trace hook; a hop
 * that ends after `cutoff` (the end of the run) is reported in flight, ending at INFINITY. */
static void ring_trace(Network *net, NetRing *ring, int upto, double cutoff)
{
    if (net->hooks.traced)
        for (int s = ring->traced; s < upto; s++) {
            double start = ring->t0 + s * ring->period;
            for (int k = 0; k < ring->n; k++) {
                double end = start + ring_hop_end(ring, k);
                net->hooks.traced(net->hooks.ctx, ring->members[k], ring->members[(k + 1) % ring->n], ring->chunk,
                                  start, start + ring->lat[k], end <= cutoff ? end : INFINITY);
            }
        }
    if (upto > ring->traced) ring->traced = upto;
}

static void ring_unreserve(Network *net, NetRing *ring)
{
    for (int k = 0; k < ring->n; k++) {
        net->links[link_up(net, ring->members[k])].ring = -1;
        net->links[link_down(net, ring->members[k])].ring = -1;
    }
}

static int ring_start_step(Network *net, int r)
{
    NetRing *ring = &net->rings[r];
    int n = ring->n;
    ring->pending = n;
    for (int k = 0; k < n; k++) {
        int status = flow_start(net, net->rings[r].members[k], net->rings[r].members[(k + 1) % n],
                                net->rings[r].chunk, r, net->rings[r].payload, -1, NULL);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

static int ring_finish(Network *net, int r)
{
    NetworkPayload payload = net->rings[r].payload;
    ring_release(net, r);
    if (net->hooks.done) net->hooks.done(net->hooks.ctx, &payload, net->now);
    return HS_OK;
}

static int ring_step_over(Network *net, int r)
{
    NetRing *ring = &net->rings[r];
    if (++ring->step == ring->steps) return ring_finish(net, r);
    return ring_start_step(net, r);
}

static int ring_hop_done(Network *net, int r)
{
    if (--net->rings[r].pending > 0) return HS_OK;
    return ring_step_over(net, r);
}

/* The closed form stops being exact at now: the hops of the current step become flows,
 * each where the closed form had it; the ring goes on step by step. */
static int ring_convert(Network *net, int r)
{
    NetRing *ring = &net->rings[r];
    ring_report(net, r, net->now);
    ring_unreserve(net, ring);
    heap_remove(net, handle(HANDLE_RING, r));
    ring->closed = 0;
    int step = ring->period > 0 ? (int)floor((net->now - ring->t0) / ring->period) : ring->steps - 1;
    if (step < 0) step = 0;
    if (step >= ring->steps) step = ring->steps - 1;
    double step_start = ring->t0 + step * ring->period, offset = net->now - step_start;
    if (offset < 0) offset = 0; /* rounding at a step boundary */
    ring->step = step;
    ring->pending = 0;
    ring_trace(net, ring, step, INFINITY);
    int n = ring->n;
    for (int k = 0; k < n; k++) {
        ring = &net->rings[r];
        if (offset >= ring_hop_end(ring, k)) {
            if (net->hooks.traced)
                net->hooks.traced(net->hooks.ctx, ring->members[k], ring->members[(k + 1) % n], ring->chunk, step_start,
                                  step_start + ring->lat[k], step_start + ring_hop_end(ring, k));
            continue;
        }
        ring->pending++;
        double lat = ring->lat[k], rate = ring->rate[k], chunk = ring->chunk;
        int f, status;
        if (offset < lat) {
            status = flow_start(net, ring->members[k], ring->members[(k + 1) % n], chunk, r, ring->payload,
                                lat - offset, &f);
        } else {
            double left = chunk - rate * (offset - lat);
            status = flow_start(net, ring->members[k], ring->members[(k + 1) % n], left > 0 ? left : 0, r,
                                ring->payload, 0, &f);
            if (status == HS_OK) net->flows[f].activated = step_start + lat;
        }
        if (status != HS_OK) return status;
        net->flows[f].created = step_start;
        net->flows[f].bytes = chunk;
    }
    if (net->rings[r].pending == 0) return ring_step_over(net, r); /* the step ended just now */
    return HS_OK;
}

int network_ring_start(Network *net, double now, const int *members, int n, double bytes, NetworkPayload payload)
{
    if (now > net->now) net->now = now;
    int r = ring_alloc(net);
    if (r < 0) return HS_E_NOMEM;
    NetRing *ring = &net->rings[r];
    ring->used = 1;
    ring->heap = -1;
    ring->seq = net->seq++;
    ring->payload = payload;
    ring->n = n;
    ring->chunk = bytes / n;
    ring->steps = 2 * (n - 1);
    ring->members = malloc((size_t)n * sizeof *ring->members);
    ring->lat = malloc((size_t)n * sizeof *ring->lat);
    ring->rate = malloc((size_t)n * sizeof *ring->rate);
    net->live++;
    if (ring->members == NULL || ring->lat == NULL || ring->rate == NULL) return HS_E_NOMEM;
    memcpy(ring->members, members, (size_t)n * sizeof *members);
    int alone = !isfinite(net->opt.backbone) && net->opt.capacity == NULL;
    for (int k = 0; alone && k < n; k++) {
        const NetLink *up = &net->links[link_up(net, members[k])], *down = &net->links[link_down(net, members[k])];
        alone = up->users == 0 && down->users == 0 && up->ring < 0 && down->ring < 0;
    }
    if (!alone) {
        net->stats.rings_stepped++;
        return ring_start_step(net, r);
    }
    net->stats.rings_closed_form++;
    ring->closed = 1;
    ring->t0 = ring->reported = net->now;
    ring->period = 0;
    for (int k = 0; k < n; k++) {
        int a = members[k], b = members[(k + 1) % n];
        double up = net->links[link_up(net, a)].capacity, down = net->links[link_down(net, b)].capacity;
        double lat = net->latency[a] > net->latency[b] ? net->latency[a] : net->latency[b];
        ring->lat[k] = lat * net->opt.latency_factor;
        ring->rate[k] = (up < down ? up : down) * net->opt.bandwidth_factor;
        double end = ring_hop_end(ring, k);
        if (end > ring->period) ring->period = end;
        net->links[link_up(net, a)].ring = r;
        net->links[link_down(net, a)].ring = r;
    }
    ring->when = net->now + ring->steps * ring->period;
    return heap_update(net, handle(HANDLE_RING, r));
}

/* ---- shares: progressive filling over the component of the dirty links ---- */

static int fill_push(Network *net, int l)
{
    NetLink *link = &net->links[l];
    if (net->fill_n == net->fill_cap) {
        int cap = net->fill_cap ? net->fill_cap * 2 : 64;
        FillItem *grown = realloc(net->fill, (size_t)cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        net->fill = grown;
        net->fill_cap = cap;
    }
    double level = link->residual > 0 ? link->residual / link->weights : 0;
    FillItem item = {.key = level, .link = l, .version = ++link->version};
    int pos = net->fill_n++;
    while (pos > 0) {
        int parent = (pos - 1) / 2;
        FillItem *p = &net->fill[parent];
        if (p->key < item.key || (p->key == item.key && p->link < item.link)) break;
        net->fill[pos] = *p;
        pos = parent;
    }
    net->fill[pos] = item;
    return HS_OK;
}

static FillItem fill_pop(Network *net)
{
    FillItem top = net->fill[0], last = net->fill[--net->fill_n];
    int pos = 0;
    for (;;) {
        int child = 2 * pos + 1;
        if (child >= net->fill_n) break;
        FillItem *c = &net->fill[child];
        if (child + 1 < net->fill_n) {
            FillItem *d = &net->fill[child + 1];
            if (d->key < c->key || (d->key == c->key && d->link < c->link)) c = d, child++;
        }
        if (last.key < c->key || (last.key == c->key && last.link < c->link)) break;
        net->fill[pos] = *c;
        pos = child;
    }
    if (net->fill_n > 0) net->fill[pos] = last;
    return top;
}

static int push_int(int **array, int *cap, int n, int value)
{
    if (n == *cap) {
        int grown_cap = *cap ? *cap * 2 : 64;
        int *grown = realloc(*array, (size_t)grown_cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        *array = grown;
        *cap = grown_cap;
    }
    (*array)[n] = value;
    return HS_OK;
}

/* Adds flow fi to S: its links join T (their base residual is the capacity minus the
 * shares of the flows outside S), and its current share goes back to them. */
static int recompute_add(Network *net, int fi, unsigned epoch, int *n_flows, int *n_links)
{
    if (net->mark[fi] == epoch) return HS_OK;
    NetFlow *f = &net->flows[fi];
    net->mark[fi] = epoch;
    net->index[fi] = *n_flows;
    if (push_int(&net->comp_flows, &net->cap_comp_flows, (*n_flows)++, fi)) return HS_E_NOMEM;
    for (int k = 0; k < f->n_links; k++) {
        int l = f->links[k];
        NetLink *link = &net->links[l];
        if (!(link->capacity < INFINITY)) continue;
        if (link->mark != epoch) {
            link->mark = epoch;
            if (push_int(&net->comp_links, &net->cap_comp_links, (*n_links)++, l)) return HS_E_NOMEM;
            link->base_residual = link->capacity - link->used;
            link->base_weights = 0;
            link->base_unfrozen = 0;
        }
        link->base_residual += f->share;
        link->base_weights += f->weight;
        link->base_unfrozen++;
    }
    return HS_OK;
}

/* Progressive filling of S over T, flows outside S fixed: the link with the lowest level
 * (residual / unfrozen weight) saturates next; its unfrozen flows get weight x level.
 * Writes share[] and bottleneck[] by S index. */
static int recompute_fill(Network *net, unsigned epoch, int n_flows, int n_links)
{
    double *share = net->share;
    int *bottleneck = net->bottleneck;
    for (int i = 0; i < n_flows; i++) {
        share[i] = -1; /* unfrozen */
        bottleneck[i] = -1;
    }
    net->fill_n = 0;
    for (int i = 0; i < n_links; i++) {
        NetLink *link = &net->links[net->comp_links[i]];
        link->residual = link->base_residual;
        link->weights = link->base_weights;
        link->unfrozen = link->base_unfrozen;
        if (link->unfrozen > 0 && fill_push(net, net->comp_links[i])) return HS_E_NOMEM;
    }
    while (net->fill_n > 0) {
        FillItem item = fill_pop(net);
        NetLink *link = &net->links[item.link];
        if (item.version != link->version || link->unfrozen == 0) continue;
        double level = link->residual > 0 ? link->residual / link->weights : 0;
        for (int j = 0; j < link->n; j++) {
            const LinkEntry *e = &link->entries[j];
            if (net->mark[e->flow] != epoch) continue; /* outside S */
            int index = net->index[e->flow];
            if (share[index] >= 0) continue; /* frozen */
            double s = e->weight * level;
            share[index] = s;
            bottleneck[index] = item.link;
            const NetFlow *f = &net->flows[e->flow];
            for (int k = 0; k < f->n_links; k++) {
                NetLink *other = &net->links[f->links[k]];
                if (other->mark != epoch) continue; /* infinite */
                other->unfrozen--;
                if (f->links[k] == item.link) continue;
                other->residual -= s;
                other->weights -= f->weight;
                if (other->unfrozen > 0 && fill_push(net, f->links[k])) return HS_E_NOMEM;
            }
        }
        link->unfrozen = 0;
    }
    for (int i = 0; i < n_flows; i++)
        if (share[i] < 0) share[i] = INFINITY; /* infinite links only */
    return HS_OK;
}

/* Every flow outside S that the new shares of S leave without a valid bottleneck joins S:
 * one whose bottleneck link is no longer saturated or now carries an S flow at a higher
 * level, and one above the level at which S flows froze on a link they share. Returns
 * how many joined (< 0 on error). */
static int recompute_violations(Network *net, unsigned epoch, int *n_flows, int *n_links)
{
    const double eps = 1e-9;
    int links = *n_links, n_violated = 0;
    /* first every link is judged against the current S, then the violated links' flows join */
    for (int i = 0; i < links; i++) {
        int l = net->comp_links[i];
        NetLink *link = &net->links[l];
        double used = link->used, top = 0, frozen_at = -1, outside_top = -1, held_low = INFINITY;
        int outside = 0;
        for (int j = 0; j < link->n; j++) {
            const LinkEntry *e = &link->entries[j];
            double level;
            if (net->mark[e->flow] != epoch) {
                outside = 1;
                level = e->share / e->weight;
                if (level > outside_top) outside_top = level;
                if (e->held && level < held_low) held_low = level;
                continue;
            }
            int index = net->index[e->flow];
            double s = net->share[index];
            used += s - e->share;
            level = s / e->weight;
            if (level > top) top = level;
            if (net->bottleneck[index] == l && level > frozen_at) frozen_at = level;
        }
        if (!outside) continue;
        int saturated = used >= link->capacity * (1 - eps);
        /* an outside flow held here needs the link full and no S flow above it; an S flow
         * held here needs no outside flow above it */
        int violated = (held_low < INFINITY && (!saturated || top > held_low * (1 + eps))) ||
                       (frozen_at >= 0 && outside_top > frozen_at * (1 + eps) + 1e-300);
        if (violated && push_int(&net->violated, &net->cap_violated, n_violated++, l)) return HS_E_NOMEM;
    }
    int joined = 0;
    for (int v = 0; v < n_violated; v++) { /* the whole link joins: fewer rounds */
        NetLink *link = &net->links[net->violated[v]];
        for (int j = 0; j < link->n; j++) {
            int g = link->entries[j].flow;
            if (net->mark[g] == epoch) continue;
            if (recompute_add(net, g, epoch, n_flows, n_links)) return HS_E_NOMEM;
            joined++;
        }
    }
    return joined;
}

static int recompute_scratch(Network *net, int n_flows)
{
    if (n_flows <= net->cap_share) return HS_OK;
    int cap = n_flows * 2;
    double *share = realloc(net->share, (size_t)cap * sizeof *share);
    if (share) net->share = share;
    int *bottleneck = realloc(net->bottleneck, (size_t)cap * sizeof *bottleneck);
    if (bottleneck) net->bottleneck = bottleneck;
    if (share == NULL || bottleneck == NULL) return HS_E_NOMEM;
    net->cap_share = cap;
    return HS_OK;
}

/* New shares after the dirty links changed. S starts as the flows on the dirty links; the
 * rest keep their shares; S is filled again, and grows by the flows its new shares leave
 * without a valid bottleneck, until none is left. Then every flow has a bottleneck (a
 * saturated link on which no flow has a higher level): the max-min fair allocation, which
 * is unique, is reached while S is usually a small part of the connected component. */
static int network_recompute(Network *net)
{
    unsigned epoch = ++net->epoch;
    int n_links = 0, n_flows = 0;
    for (int i = 0; i < net->n_dirty; i++) {
        NetLink *link = &net->links[net->dirty[i]];
        link->dirty = 0;
        for (int j = 0; j < link->n; j++)
            if (recompute_add(net, link->entries[j].flow, epoch, &n_flows, &n_links)) return HS_E_NOMEM;
    }
    net->n_dirty = 0;
    for (;;) {
        if (recompute_scratch(net, n_flows) || recompute_fill(net, epoch, n_flows, n_links)) return HS_E_NOMEM;
        int joined = recompute_violations(net, epoch, &n_flows, &n_links);
        if (joined < 0) return HS_E_NOMEM;
        if (joined == 0) break;
        net->stats.expansions++;
    }
    net->stats.recomputes++;
    net->stats.flows_recomputed += (uint64_t)n_flows;
    int status = HS_OK;
    for (int i = 0; i < n_flows && status == HS_OK; i++) {
        int fi = net->comp_flows[i];
        NetFlow *f = &net->flows[fi];
        double s = net->share[i];
        int held_changed = f->bottleneck != net->bottleneck[i];
        f->bottleneck = net->bottleneck[i];
        if (s == f->share && f->heap >= 0 && !held_changed) continue;
        for (int k = 0; k < f->n_links; k++) {
            NetLink *link = &net->links[f->links[k]];
            LinkEntry *e = &link->entries[f->slots[k]];
            e->held = f->bottleneck == f->links[k];
            e->share = s;
            if (link->capacity < INFINITY) link->used += s - f->share;
        }
        if (s == f->share && f->heap >= 0) continue;
        flow_settle(net, f);
        f->share = s;
        flow_set_when_by_share(net, f);
        status = heap_update(net, handle(HANDLE_FLOW, fi));
    }
    return status;
}

/* ---- driving ---- */

int network_next_time(Network *net, double *t)
{
    int status = net->n_dirty > 0 ? network_recompute(net) : HS_OK;
    *t = net->heap_n > 0 ? net->heap[0].when : INFINITY;
    return status;
}

int network_advance(Network *net, double t)
{
    if (t > net->now) net->now = t;
    for (;;) {
        while (net->heap_n > 0 && net->heap[0].when <= net->now) {
            int64_t h = net->heap[0].handle;
            int i = handle_index(h), status = HS_OK;
            heap_remove(net, h);
            switch (handle_type(h)) {
            case HANDLE_LINK:
                if (net->links[i].n > 0) {
                    link_mark_dirty(net, i);
                    status = link_refresh(net, i);
                } else {
                    net->links[i].when = INFINITY;
                }
                break;
            case HANDLE_RING:
                ring_trace(net, &net->rings[i], net->rings[i].steps, INFINITY);
                ring_report(net, i, net->now);
                ring_unreserve(net, &net->rings[i]);
                status = ring_finish(net, i);
                break;
            default:
                if (net->flows[i].state == FLOW_LATENCY) status = flow_activate(net, i);
                else status = flow_finish(net, i);
            }
            if (status != HS_OK) return status;
        }
        if (net->n_dirty == 0) return HS_OK;
        int status = network_recompute(net);
        if (status != HS_OK) return status;
        if (net->heap_n == 0 || net->heap[0].when > net->now) return HS_OK;
    }
}

void network_flush_activity(Network *net, double now)
{
    if (now > net->now) net->now = now;
    for (int a = 0; a < net->n; a++)
        if (net->active_count[a] > 0 && net->now > net->active_since[a]) {
            if (net->hooks.active) net->hooks.active(net->hooks.ctx, a, net->active_since[a], net->now);
            net->active_since[a] = net->now;
        }
    for (int r = 0; r < net->n_rings; r++)
        if (net->rings[r].used && net->rings[r].closed) ring_report(net, r, net->now);
}

void network_trace_pending(Network *net)
{
    if (net->hooks.traced == NULL) return;
    for (int f = 0; f < net->cap_flows; f++) {
        const NetFlow *flow = &net->flows[f];
        if (flow->state == FLOW_LATENCY || flow->state == FLOW_ACTIVE)
            net->hooks.traced(net->hooks.ctx, flow->src, flow->dst, flow->bytes, flow->created, flow->activated, INFINITY);
    }
    /* closed-form rings still running: the steps begun by now, not traced yet (a step is
     * traced as a whole when the next begins); a hop not done by now ends at INFINITY,
     * like a flow in flight */
    for (int r = 0; r < net->n_rings; r++) {
        NetRing *ring = &net->rings[r];
        if (!ring->used || !ring->closed) continue;
        int begun = ring->period > 0 ? (int)floor((net->now - ring->t0) / ring->period) + 1 : ring->steps;
        ring_trace(net, ring, begun < ring->steps ? begun : ring->steps, net->now);
    }
}

int network_outgoing(const Network *net, int agent)
{
    return net->outgoing[agent];
}

int network_pending(const Network *net)
{
    return net->live;
}

void network_stats(const Network *net, NetworkStats *out)
{
    *out = net->stats;
}

Network *network_create(const NetworkOptions *options, const NetworkHooks *hooks)
{
    Network *net = calloc(1, sizeof *net);
    if (net == NULL) return NULL;
    net->opt = *options;
    net->hooks = *hooks;
    int n = options->n_agents;
    net->n = n;
    net->n_links = 2 * n + (isfinite(options->backbone) ? 1 : 0);
    net->links = calloc((size_t)net->n_links, sizeof *net->links);
    net->latency = malloc((size_t)n * sizeof *net->latency);
    net->active_count = calloc((size_t)n, sizeof *net->active_count);
    net->active_since = calloc((size_t)n, sizeof *net->active_since);
    net->outgoing = calloc((size_t)n, sizeof *net->outgoing);
    net->dirty = malloc((size_t)net->n_links * sizeof *net->dirty);
    net->free_flow = -1;
    if (options->uplink_fifo) {
        net->queue_head = malloc((size_t)n * sizeof *net->queue_head);
        net->queue_tail = malloc((size_t)n * sizeof *net->queue_tail);
        net->sending = calloc((size_t)n, sizeof *net->sending);
    }
    if (!net->links || !net->latency || !net->active_count || !net->active_since || !net->outgoing || !net->dirty ||
        (options->uplink_fifo && (!net->queue_head || !net->queue_tail || !net->sending))) {
        network_free(net);
        return NULL;
    }
    for (int a = 0; a < n; a++) {
        net->latency[a] = options->latency[a];
        net->links[link_up(net, a)].capacity = options->uplink[a];
        net->links[link_down(net, a)].capacity = options->downlink[a];
        if (options->uplink_fifo) net->queue_head[a] = net->queue_tail[a] = -1;
    }
    if (isfinite(options->backbone)) net->links[2 * n].capacity = options->backbone;
    for (int l = 0; l < net->n_links; l++) {
        net->links[l].ring = -1;
        net->links[l].heap = -1;
        net->links[l].when = INFINITY;
    }
    net->opt.uplink = net->opt.downlink = net->opt.latency = NULL;
    return net;
}

void network_free(Network *net)
{
    if (net == NULL) return;
    for (int l = 0; net->links && l < net->n_links; l++) free(net->links[l].entries);
    for (int r = 0; r < net->n_rings; r++) {
        free(net->rings[r].members);
        free(net->rings[r].lat);
        free(net->rings[r].rate);
    }
    free(net->links);
    free(net->latency);
    free(net->flows);
    free(net->mark);
    free(net->index);
    free(net->rings);
    free(net->active_count);
    free(net->active_since);
    free(net->outgoing);
    free(net->queue_head);
    free(net->queue_tail);
    free(net->sending);
    free(net->heap);
    free(net->dirty);
    free(net->comp_links);
    free(net->comp_flows);
    free(net->violated);
    free(net->fill);
    free(net->share);
    free(net->bottleneck);
    free(net);
}
