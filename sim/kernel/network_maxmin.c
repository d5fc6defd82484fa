/* network_maxmin.c — [network] model = maxmin, the default network model
 * (engine_network.h): every message is a flow of the max-min sharing solver (network.h)
 * over up_from and down_to (and the backbone), a ring all-reduce starts as the
 * solver's ring once every member has joined (a member joins once its queued compute,
 * when blocking, and its own messages are done), and the solver's next due time is an
 * engine event (ENGINE_EVENT_NETWORK) re-armed after every event. Busy time is the
 * union of each node's computations and of the intervals during which one of its
 * messages transfers (latency excluded), united when the round closes; a message's
 * arrival is not known when it is sent, since it depends on the flows that start later.
 * One file: the accounting and the solver's hooks share the per-node activity. */
#include "sim/kernel/engine_network.h"
#include "base/chunks.h"
#include "base/grow.h"
#include "base/hugemem.h"

#include "sim/kernel/collective.h"

#include "sim/kernel/network.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct AgentActivity;
struct ActivityRings;

/* A node's joins that wait for its sends to finish, in the order it joined: one for a
 * method that joins one collective at a time, several for the nested shells of a pruned
 * averaging (sim/kernel/collective.h) joined while the node still sends. */
typedef struct PendingJoins {
    Collective **joins;
    int count, cap;
} PendingJoins;

typedef struct Maxmin {
    Network *network;
    struct AgentActivity *activity;       /* (n_nodes) busy intervals of this round */
    Collective **collectives;             /* started collectives by slot (event data) */
    int n_collectives;
    int rings_running;                    /* rings started in the network, not done */
    double ring_floor;                    /* <= the start of every running ring (INFINITY:
                                           * none): no ring reports activity before it */
    PendingJoins *pending_join;           /* (n_nodes) joins waiting for the node's sends */
    double wakeup;                        /* earliest ENGINE_EVENT_NETWORK queued */
    HsChunks more;                         /* the agents' ActivityMore (activity_more) */
    struct ActivityRings *rings;          /* (n_nodes) the rings that overlap a node's
                                           * computation, once one has (activity_rings),
                                           * else NULL */
    double *ring_s;                       /* (n_nodes) the measure of a node's rings this
                                           * round that overlap no computation, once a ring
                                           * has reported (a D-PSGD run has none: 8 bytes
                                           * an agent), else NULL: 0 for every node */
} Maxmin;

static Maxmin *maxmin_of(const Engine *e)
{
    return e->net;
}

/* ---- maxmin accounting: an agent's busy intervals of the round, united as they come ----
 * Compute intervals come in start order (the processor is FIFO) and may lie in the
 * future; transfer intervals come from the network as they end, disjoint and in order;
 * closed-form rings come as periodic sets, which never overlap the agent's transfer
 * intervals (a flow on a member's link ends the closed form first) but may overlap its
 * compute (a non-blocking collective).
 * The union is one pass over both lists merged by start (compute first on a tie), each
 * span clipped to a cursor; its sums depend on the order of their additions, so a span is
 * taken into the running sums (activity_fold) only once nothing can come before it in that
 * order any more, nor be merged into it: it is over, no later span of either list can
 * start before it, and no ring running or stored can overlap it. The rest waits for the
 * round's close, which takes it in the same order: the rows are those of uniting every
 * span at the close, bit for bit, with a few spans held per agent instead of all of the
 * round's (sync: 2 instead of 10 a round). */
typedef struct Span {
    double start, end;
} Span;

/* Up to this many compute spans live in the agent's AgentActivity itself (sync holds 2). */
#define ACTIVITY_INLINE 2

/* What an agent with transfers or overlapping rings needs besides, the first time one comes:
 * from chunks (base/chunks.h), not one calloc an agent, with its first two
 * transfer spans inside (a federated client's download and upload): a million clients'
 * first transfers were two million small allocations. */
typedef struct ActivityMore {
    double comm_sum;        /* the transfer spans taken so far this round */
    Span *comm;             /* transfer spans not taken yet: [m_head, n_comm); comm_two or
                             * its own array past two */
    int m_head, n_comm, cap_comm;
    Span comm_two[2];
} ActivityMore;             /* 64 bytes: every agent of a D-PSGD round has one at its end
                             * (the rings it keeps are in Maxmin.rings, which it rarely needs) */
_Static_assert(sizeof(ActivityMore) <= 64, "one an agent with transfers: keep it 64 bytes");

/* The closed-form rings that overlap an agent's computation this round (Maxmin.rings:
 * only a non-blocking collective beside a computation makes one). */
typedef struct ActivityRings {
    NetworkPeriodic *items;
    int n, cap;
} ActivityRings;

/* The agent's rings to keep, none when no ring has overlapped a computation yet. */
static int activity_n_rings(const Maxmin *m, int agent)
{
    return m->rings ? m->rings[agent].n : 0;
}

typedef struct AgentActivity {
    double busy_sum;        /* the spans taken so far this round (activity_take) */
    double cursor;          /* the end of the union so far (-INFINITY: none yet) */
    union {                 /* compute spans not taken yet: [c_head, n_compute) */
        Span inline_[ACTIVITY_INLINE]; /* while cap_compute <= ACTIVITY_INLINE */
        Span *heap;
    } compute;
    ActivityMore *more;     /* NULL until a transfer span or a ring to keep comes */
    int c_head, n_compute, cap_compute;
} AgentActivity;            /* 72 bytes: every agent has one (its rings' measure is in
                             * Maxmin.ring_s, which a run without rings never allocates) */
_Static_assert(sizeof(AgentActivity) <= 72, "one an agent: keep it 72 bytes");

static Span *activity_compute(AgentActivity *a)
{
    return a->cap_compute > ACTIVITY_INLINE ? a->compute.heap : a->compute.inline_;
}

static ActivityMore *activity_more(Maxmin *m, AgentActivity *a)
{
    if (a->more) return a->more;
    ActivityMore *x = a->more = hs_chunks_take(&m->more);
    if (x == NULL) return NULL;
    x->comm = x->comm_two;
    x->cap_comm = 2;
    return x;
}

/* Room for one more of n in *array of *cap; an array at `fixed` (inside its owner) is not
 * the allocator's: past it, a new one. */
static int activity_grow(void **array, int *cap, int n, size_t size, const void *fixed)
{
    if (n < *cap) return HS_OK;
    int grown_cap = *cap ? *cap * 2 : 2;
    void *grown = *array == fixed && fixed ? malloc((size_t)grown_cap * size) : realloc(*array, (size_t)grown_cap * size);
    if (grown == NULL) return HS_E_NOMEM;
    if (*array == fixed && fixed) memcpy(grown, fixed, (size_t)n * size);
    *array = grown;
    *cap = grown_cap;
    return HS_OK;
}

/* Appends [start, end) to spans [*head, *n) in start order, merging with the last span it
 * touches; the taken head makes room first (`fixed`: activity_grow). */
static int activity_add_span(Span **spans, int *head, int *n, int *cap, const Span *fixed, double start, double end)
{
    if (end <= start) return HS_OK;
    if (*n > *head && start <= (*spans)[*n - 1].end) {
        if (end > (*spans)[*n - 1].end) (*spans)[*n - 1].end = end;
        return HS_OK;
    }
    if (*head > 0 && *n == *cap) {
        memmove(*spans, *spans + *head, (size_t)(*n - *head) * sizeof **spans);
        *n -= *head;
        *head = 0;
    }
    if (activity_grow((void **)spans, cap, *n, sizeof **spans, fixed) != HS_OK) return HS_E_NOMEM;
    (*spans)[(*n)++] = (Span){start, end};
    return HS_OK;
}

/* The same for the compute spans, which start in the AgentActivity and move to the heap
 * past ACTIVITY_INLINE. */
static int activity_add_compute(AgentActivity *a, double start, double end)
{
    if (end <= start) return HS_OK;
    Span *spans = activity_compute(a);
    if (a->n_compute > a->c_head && start <= spans[a->n_compute - 1].end) {
        if (end > spans[a->n_compute - 1].end) spans[a->n_compute - 1].end = end;
        return HS_OK;
    }
    int cap = a->cap_compute > ACTIVITY_INLINE ? a->cap_compute : ACTIVITY_INLINE;
    if (a->c_head > 0 && a->n_compute == cap) {
        memmove(spans, spans + a->c_head, (size_t)(a->n_compute - a->c_head) * sizeof *spans);
        a->n_compute -= a->c_head;
        a->c_head = 0;
    }
    if (a->n_compute == cap) {
        Span *grown = a->cap_compute > ACTIVITY_INLINE ? realloc(spans, (size_t)(2 * cap) * sizeof *grown)
                                                       : malloc((size_t)(2 * cap) * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        if (a->cap_compute <= ACTIVITY_INLINE) memcpy(grown, a->compute.inline_, (size_t)a->n_compute * sizeof *grown);
        a->compute.heap = spans = grown;
        a->cap_compute = 2 * cap;
    }
    spans[a->n_compute++] = (Span){start, end};
    return HS_OK;
}

/* One span of the merged order into the sums: busy gains its part after the cursor (up to
 * `to`); comm_sum (a transfer span's, else NULL) its part within [from, to]. */
static void activity_take(AgentActivity *a, double *comm_sum, Span s, double from, double to)
{
    if (comm_sum) {
        double lo = s.start > from ? s.start : from, hi = s.end < to ? s.end : to;
        if (hi > lo) *comm_sum += hi - lo;
    }
    if (s.start < a->cursor) s.start = a->cursor;
    if (s.end > to) s.end = to;
    if (s.end > s.start) {
        a->busy_sum += s.end - s.start;
        a->cursor = s.end;
    }
}

/* Takes the spans that nothing can precede or extend any more (see above). Later spans:
 * compute starts at now or later (merging with the last span when it starts at its end);
 * a transfer span starts when the agent's current activity began (network_active_since),
 * or at now or later when none is on. A computation is taken once it is over (so no
 * round's end clips it), and only when no stored ring needs it at the close and every
 * running ring started after it ended (a ring reports activity from its start on). */
static void activity_fold(Engine *e, int agent)
{
    Maxmin *m = maxmin_of(e);
    AgentActivity *a = &m->activity[agent];
    ActivityMore *x = a->more;
    Span *compute = activity_compute(a);
    double now = e->now, from = e->round_start;
    double since = network_active_since(m->network, agent);
    double next_comm = since < now ? since : now; /* no transfer span starts before it */
    int rings = activity_n_rings(m, agent) > 0;
    if (a->cursor < from) a->cursor = from;
    for (;;) {
        int have_c = a->c_head < a->n_compute, have_m = x && x->m_head < x->n_comm;
        if (have_c && (!have_m || compute[a->c_head].start <= x->comm[x->m_head].start)) {
            Span s = compute[a->c_head];
            int last = a->c_head + 1 == a->n_compute;
            if (!(s.end <= now && (!last || s.end < now) && s.start <= next_comm && s.end <= m->ring_floor && !rings))
                break;
            activity_take(a, NULL, s, from, now);
            a->c_head++;
        } else if (have_m) {
            Span s = x->comm[x->m_head];
            if (x->m_head + 1 == x->n_comm && !(s.end < next_comm)) break; /* the next may merge */
            activity_take(a, &x->comm_sum, s, from, now);
            x->m_head++;
        } else {
            break;
        }
    }
    if (a->c_head == a->n_compute) a->c_head = a->n_compute = 0;
    if (x && x->m_head == x->n_comm) x->m_head = x->n_comm = 0;
}

static int maxmin_activity_add(Engine *e, int agent, int compute, double start, double end)
{
    Maxmin *m = maxmin_of(e);
    AgentActivity *a = &m->activity[agent];
    ActivityMore *x = compute ? NULL : activity_more(m, a);
    int status = compute ? activity_add_compute(a, start, end)
                 : x ? activity_add_span(&x->comm, &x->m_head, &x->n_comm, &x->cap_comm, x->comm_two, start, end)
                     : HS_E_NOMEM;
    if (status != HS_OK) return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for accounting");
    activity_fold(e, agent);
    return HS_OK;
}

/* busy = |(compute U comm) within [from, to]| + rings - rings within compute;
 * comm = |comm within [from, to]| + rings: the sums so far, then the spans not taken yet
 * in the same order. Keeps compute spans that reach past `to`. */
static void maxmin_activity_close(Engine *e, int agent, double from, double to, double *busy, double *comm)
{
    Maxmin *mm = maxmin_of(e);
    AgentActivity *a = &mm->activity[agent];
    ActivityRings *rings = mm->rings ? &mm->rings[agent] : NULL;
    ActivityMore *x = a->more;
    Span *compute = activity_compute(a);
    int i = a->c_head, j = x ? x->m_head : 0, n_comm = x ? x->n_comm : 0;
    if (a->cursor < from) a->cursor = from;
    while (i < a->n_compute || j < n_comm) {
        if (j >= n_comm || (i < a->n_compute && compute[i].start <= x->comm[j].start))
            activity_take(a, NULL, compute[i++], from, to);
        else
            activity_take(a, &x->comm_sum, x->comm[j++], from, to);
    }
    double b = a->busy_sum, c = x ? x->comm_sum : 0;
    for (int r = 0; rings && r < rings->n; r++) {
        const NetworkPeriodic *p = &rings->items[r];
        double m = periodic_measure(p, from, to);
        b += m;
        c += m;
        for (int k = a->c_head; k < a->n_compute; k++) {
            if (compute[k].end <= p->from) continue;
            if (compute[k].start >= p->to) break;
            b -= periodic_measure(p, compute[k].start < from ? from : compute[k].start,
                                  compute[k].end > to ? to : compute[k].end);
        }
    }
    double ring_s = mm->ring_s ? mm->ring_s[agent] : 0; /* b + 0 is b (b >= 0): no ring, the same sums */
    *busy = b + ring_s;
    *comm = c + ring_s;
    a->busy_sum = 0;
    if (mm->ring_s) mm->ring_s[agent] = 0;
    a->cursor = -INFINITY;
    int kept = 0; /* compute spans still running or queued for later */
    for (int k = a->c_head; k < a->n_compute; k++)
        if (compute[k].end > to) compute[kept++] = compute[k];
    a->c_head = 0;
    a->n_compute = kept;
    if (x) {
        x->comm_sum = 0;
        x->m_head = x->n_comm = 0;
    }
    if (rings) rings->n = 0;
}

static void maxmin_free(Engine *e)
{
    Maxmin *m = maxmin_of(e);
    if (m == NULL) return;
    network_free(m->network);
    if (m->activity)
        for (int i = 0; i < e->n_nodes; i++) {
            AgentActivity *a = &m->activity[i];
            if (a->cap_compute > ACTIVITY_INLINE) free(a->compute.heap);
            if (a->more && a->more->comm != a->more->comm_two) free(a->more->comm);
            if (m->rings) free(m->rings[i].items);
        }
    hs_chunks_free(&m->more);
    free(m->rings);
    free(m->ring_s);
    free(m->activity);
    free(m->collectives);
    for (int i = 0; m->pending_join && i < e->n_nodes; i++) free(m->pending_join[i].joins);
    free(m->pending_join);
    free(m);
    e->net = NULL;
}

static int maxmin_send(Engine *e, int from, int to, double bytes, int kind, int64_t data)
{
    e->round_bytes += bytes;
    engine_book_bytes(e, from, bytes);
    engine_book_bytes(e, to, bytes);
    NetworkPayload payload = {.kind = kind, .agent = to, .data = data};
    if (network_send(maxmin_of(e)->network, e->now, from, to, bytes, payload) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for messages");
    return HS_OK;
}

/* A message with a deadline (deadline.c): a flow like any message's, and an engine event
 * at the deadline that cuts it (maxmin_cut) unless it ended before. */
static int maxmin_send_until(Engine *e, int slot)
{
    DeadlineMessage *m = engine_deadline_slot(e, slot);
    NetworkPayload payload = {.kind = ENGINE_EVENT_DEADLINE_END, .agent = m->to, .data = slot};
    NetworkFlowRef ref;
    if (network_send_ref(maxmin_of(e)->network, e->now, m->from, m->to, m->bytes, payload, &ref) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for messages");
    m->ref[0] = ref.flow;
    m->ref[1] = (int64_t)ref.seq;
    m->pending = 1;
    if (!isfinite(m->deadline)) return HS_OK;
    m->pending = 2;
    if (queue_push(e->queue, m->deadline, ENGINE_EVENT_DEADLINE_CUT, m->to, slot) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for events");
    return HS_OK;
}

static int maxmin_cut(Engine *e, int slot)
{
    DeadlineMessage *m = engine_deadline_slot(e, slot);
    NetworkFlowRef ref = {.flow = (int)m->ref[0], .seq = (uint64_t)m->ref[1]};
    double sent = m->bytes;
    int found;
    if (network_cut(maxmin_of(e)->network, e->now, ref, m->bytes, m->floor, &sent, &found) != HS_OK)
        return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for messages");
    if (found && sent < m->bytes) m->delivered = sent;
    return HS_OK;
}

static int maxmin_computed(Engine *e, int node, double flops, double start, double end)
{
    int status = maxmin_activity_add(e, node, 1, start, end);
    if (status == HS_OK && e->sink.ops->activity) {
        SinkActivity a = {.kind = SINK_ACTIVITY_COMPUTE, .agent = node, .to = -1, .amount = flops, .start = start,
                          .transfer = start, .end = end};
        if (e->sink.ops->activity(e->sink.ctx, e->run_id, &a) != HS_OK)
            status = hs_diag_set(e->diag, HS_E_IO, NULL, 0, "the sink refused an activity");
    }
    return status;
}

/* A member joins once its queued compute (blocking) and its own messages are done; one
 * with messages still out joins from maxmin_on_sender_idle. */
static int maxmin_join_time(Engine *e, Collective *c, int node, double *t, int *joins)
{
    Maxmin *m = maxmin_of(e);
    *joins = 0;
    if (network_outgoing(m->network, node) > 0) {
        PendingJoins *p = &m->pending_join[node];
        if (hs_grow((void **)&p->joins, &p->cap, p->count, sizeof *p->joins, 2) != HS_OK)
            return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory");
        p->joins[p->count++] = c;
        return HS_OK;
    }
    AgentClock *clock = &e->clocks[node];
    *t = e->now;
    if (c->blocking && clock->compute_free > *t) *t = clock->compute_free;
    *joins = 1;
    return HS_OK;
}

/* The ring starts with an engine event at its ready time. */
static int maxmin_ring(Engine *e, Collective *c)
{
    Maxmin *m = maxmin_of(e);
    int slot = 0;
    while (slot < m->n_collectives && m->collectives[slot] != NULL) slot++;
    if (slot == m->n_collectives) {
        Collective **grown = realloc(m->collectives, (size_t)(slot + 1) * sizeof *grown);
        if (grown == NULL) return hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory");
        m->collectives = grown;
        m->n_collectives++;
    }
    m->collectives[slot] = c;
    return queue_push(e->queue, c->ready, ENGINE_EVENT_COLLECTIVE_START, -1, slot);
}

static int maxmin_collective_done(Engine *e, int slot)
{
    Maxmin *m = maxmin_of(e);
    Collective *c = m->collectives[slot];
    m->collectives[slot] = NULL;
    if (c->blocking)
        for (int k = 0; k < c->n_members; k++) {
            AgentClock *clock = &e->clocks[collective_member(c, k)];
            if (clock->compute_free < e->now) clock->compute_free = e->now;
        }
    return queue_push(e->queue, e->now, c->kind, -1, c->data);
}

static int maxmin_collective_start(Engine *e, int slot)
{
    Maxmin *m = maxmin_of(e);
    Collective *c = m->collectives[slot];
    int n = c->n_members;
    NetworkPayload payload = {.kind = ENGINE_EVENT_COLLECTIVE_DONE, .agent = -1, .data = slot};
    if (n <= 1) return maxmin_collective_done(e, slot);
    e->round_bytes += 2.0 * (n - 1) * c->bytes;
    m->rings_running++;
    if (e->now < m->ring_floor) m->ring_floor = e->now;
    /* each member sends and receives 2(N-1) chunks of B/N */
    for (int k = 0; e->energy && k < n; k++) engine_book_bytes(e, collective_member(c, k), 4.0 * (n - 1) * c->bytes / n);
    /* members NULL (every agent): the network's ring keeps its arrays from ring to ring,
     * so a million-member ring allocates nothing after the first */
    return network_ring_start(m->network, e->now, c->members, n, c->bytes, payload);
}

static int maxmin_wakeup(Engine *e, const Event *ev)
{
    Maxmin *m = maxmin_of(e);
    if (ev->time == m->wakeup) m->wakeup = INFINITY;
    double t;
    if (network_next_time(m->network, &t) != HS_OK) return HS_E_NOMEM;
    if (t > e->now) return HS_OK;
    return network_advance(m->network, e->now);
}

static int maxmin_event(Engine *e, const Event *ev)
{
    switch (ev->kind) {
    case ENGINE_EVENT_COLLECTIVE_START: return maxmin_collective_start(e, (int)ev->data);
    case ENGINE_EVENT_COLLECTIVE_DONE: /* a ring of the network's, reported by now */
        if (--maxmin_of(e)->rings_running == 0) maxmin_of(e)->ring_floor = INFINITY;
        return maxmin_collective_done(e, (int)ev->data);
    case ENGINE_EVENT_NETWORK: return maxmin_wakeup(e, ev);
    default: return hs_diag_set(e->diag, HS_E_INTERNAL, NULL, 0, "unknown engine event %d", ev->kind);
    }
}

/* The network's next due time is an engine event (ENGINE_EVENT_NETWORK) in the queue,
 * re-armed after every event; one that became stale (the network's next time moved
 * later) does nothing. A message arriving at t is delivered by an event queued at t. */
static int maxmin_arm(Engine *e)
{
    Maxmin *m = maxmin_of(e);
    double t;
    if (network_next_time(m->network, &t) != HS_OK) return HS_E_NOMEM;
    if (!(t < m->wakeup)) return HS_OK;
    m->wakeup = t;
    return queue_push(e->queue, t, ENGINE_EVENT_NETWORK, -1, 0);
}

/* Messages left that can never move: a node offline for good. */
static int maxmin_stranded(const Engine *e)
{
    return network_pending(maxmin_of(e)->network) > 0;
}

/* Servers too, so their spans do not pile up; agent_rounds has agents only. */
static void maxmin_close_round(Engine *e)
{
    network_flush_activity(maxmin_of(e)->network, e->now);
    for (int i = 0; i < e->n_nodes; i++) {
        AgentClock *c = &e->clocks[i];
        maxmin_activity_close(e, i, e->round_start, e->now, &c->busy_s, &c->comm_s);
    }
}

static int maxmin_availability_changed(Engine *e, int node)
{
    return network_links_changed(maxmin_of(e)->network, e->now, node);
}

static void maxmin_end_run(Engine *e)
{
    if (e->sink.ops->activity) network_trace_pending(maxmin_of(e)->network);
}

/* ---- the network's hooks ---- */

static void maxmin_on_done(void *ctx, const NetworkPayload *p, double t)
{
    Engine *e = ctx;
    int status = queue_push(e->queue, t, p->kind, p->agent, p->data);
    if (status != HS_OK)
        hs_diag_set(e->diag, status, NULL, 0, "cannot queue a delivery at t = %.17g (now %.17g)", t, e->now);
}

/* The network's hooks return nothing (sim/kernel/network.h): an error inside one lands
 * in the diag, which engine_play checks after every event. */
static void maxmin_on_active(void *ctx, int agent, double start, double end)
{
    maxmin_activity_add(ctx, agent, 0, start, end);
}

static void maxmin_on_periodic(void *ctx, int agent, const NetworkPeriodic *p)
{
    Engine *e = ctx;
    AgentActivity *a = &maxmin_of(e)->activity[agent];
    const Span *compute = activity_compute(a);
    /* Reported up to now, so later computations start after it: only the ones booked
     * already can overlap it (a blocking collective has none: its measure is enough). */
    int overlaps = 0;
    for (int k = a->n_compute - 1; k >= a->c_head && compute[k].end > p->from && !overlaps; k--)
        overlaps = compute[k].start < p->to;
    Maxmin *m = maxmin_of(e);
    if (!overlaps) {
        if (m->ring_s == NULL && (m->ring_s = calloc((size_t)e->n_nodes, sizeof *m->ring_s)) == NULL) {
            hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for accounting");
            return;
        }
        m->ring_s[agent] += periodic_measure(p, p->from, p->to);
        return;
    }
    ActivityMore *x = activity_more(m, a); /* as it was when the rings were in it */
    if (m->rings == NULL) m->rings = calloc((size_t)e->n_nodes, sizeof *m->rings);
    ActivityRings *rings = m->rings ? &m->rings[agent] : NULL;
    if (x == NULL || rings == NULL ||
        activity_grow((void **)&rings->items, &rings->cap, rings->n, sizeof *rings->items, NULL) != HS_OK) {
        hs_diag_set(e->diag, HS_E_NOMEM, NULL, 0, "out of memory for accounting");
        return;
    }
    rings->items[rings->n++] = *p;
}

/* The radio's spans per direction (radio.h), asked only when some agent's powers differ;
 * the network numbers the directions as the engine does. */
_Static_assert((int)NETWORK_SENDING == (int)ENGINE_RADIO_TX && (int)NETWORK_RECEIVING == (int)ENGINE_RADIO_RX,
               "directions");
static void maxmin_on_active_way(void *ctx, int agent, int way, double start, double end)
{
    engine_radio_span(ctx, agent, way, start, end);
}

static void maxmin_on_periodic_way(void *ctx, int agent, int way, const NetworkPeriodic *p)
{
    engine_radio_periodic(ctx, agent, way, p);
}

static void maxmin_on_sender_idle(void *ctx, int agent, double t)
{
    Engine *e = ctx;
    Maxmin *m = maxmin_of(e);
    PendingJoins *p = &m->pending_join[agent];
    int count = p->count;
    if (count == 0) return; /* written only when there is one: the array is calloc'd, and a
                             * run without collectives (D-PSGD) never faults its pages in */
    p->count = 0;
    for (int k = 0; k < count; k++) {
        int status = engine_collective_join(e, p->joins[k], agent);
        if (status != HS_OK && e->diag->status == HS_OK)
            hs_diag_set(e->diag, status, NULL, 0, "%s", hs_error_name(status));
    }
}

static void maxmin_on_traced(void *ctx, int from, int to, double bytes, double start, double transfer, double end)
{
    Engine *e = ctx;
    SinkActivity a = {.kind = SINK_ACTIVITY_MESSAGE, .agent = from, .to = to, .amount = bytes, .start = start,
                      .transfer = transfer, .end = end};
    if (e->sink.ops->activity(e->sink.ctx, e->run_id, &a) != HS_OK)
        hs_diag_set(e->diag, HS_E_IO, NULL, 0, "the sink refused an activity");
}

/* The first change of a series after t (INFINITY: none); trace.c draws a markov()
 * process's rows as far as that. */
static double maxmin_series_next(const TraceSeries *s, double t)
{
    return s ? trace_next_change(s, t) : INFINITY;
}

/* Link capacity under traces: the bandwidth trace's value, 0 while the agent is offline. */
static double maxmin_link_capacity(void *ctx, int link, double t, double *next)
{
    Engine *e = ctx;
    int n = e->n_nodes;
    if (link >= 2 * n) {
        *next = INFINITY;
        return e->spec.backbone;
    }
    int agent = link < n ? link : link - n;
    const TraceSeries *bw = engine_series(link < n ? e->uplink_trace : e->downlink_trace, agent);
    const TraceSeries *availability = engine_series(e->availability_trace, agent);
    const TraceSeries *outage = engine_series(e->outage_trace, agent); /* [agents] outage: link down */
    double value = bw ? trace_value(bw, t) : link < n ? engine_uplink_rate(e, agent) : engine_downlink_rate(e, agent);
    if (availability && trace_value(availability, t) <= 0.5) value = 0;
    if (outage && trace_value(outage, t) <= 0.5) value = 0;
    double a = maxmin_series_next(bw, t), b = maxmin_series_next(availability, t), c = maxmin_series_next(outage, t);
    *next = a < b ? a : b;
    if (c < *next) *next = c;
    return value;
}

static int maxmin_create(Engine *e)
{
    const EngineNetwork *spec = &e->spec;
    int n = e->n_nodes;
    Maxmin *m = e->net = calloc(1, sizeof *m);
    if (m != NULL) hs_chunks_init(&m->more, sizeof(ActivityMore), 1024);
    if (m == NULL) return HS_E_NOMEM;
    m->wakeup = INFINITY;
    m->ring_floor = INFINITY;
    int varying = e->uplink_trace || e->downlink_trace || e->availability_trace || e->outage_trace;
    /* constant bandwidths are read in place like the latencies; a copy only when they vary
     * (maxmin_link_capacity: the network keeps its own) */
    double *up = NULL, *down = NULL;
    if (varying) {
        up = malloc((size_t)n * sizeof *up);
        down = malloc((size_t)n * sizeof *down);
    }
    m->activity = hs_huge_calloc((size_t)n, sizeof *m->activity);
    m->pending_join = hs_huge_calloc((size_t)n, sizeof *m->pending_join);
    int status = HS_E_NOMEM;
    if ((!varying || (up && down)) && m->activity && m->pending_join) {
        for (int i = 0; i < n; i++) {
            m->activity[i].cursor = -INFINITY;
            if (varying) {
                up[i] = engine_uplink_rate(e, i);
                down[i] = engine_downlink_rate(e, i);
            }
        }
        int lv08 = spec->lv08;
        /* the latencies and bandwidths are read where the engine reads them (its rates, or
         * the world's records: EngineConfig.rates_at), which outlive the network
         * (engine_free) */
        const char *base = e->rates_at.base;
        NetworkOptions options = {.n_agents = n, .uplink = up, .downlink = down,
                                  .latency_at = base + e->rates_at.latency,
                                  .latency_stride = e->rates_at.stride,
                                  .uplink_at = varying ? NULL : base + e->rates_at.uplink,
                                  .downlink_at = varying ? NULL : base + e->rates_at.downlink,
                                  .link_stride = e->rates_at.stride,
                                  .backbone = spec->backbone, .uplink_fifo = spec->uplink_fifo,
                                  .latency_factor = lv08 ? ENGINE_LV08_LATENCY : 1,
                                  .bandwidth_factor = lv08 ? ENGINE_LV08_BANDWIDTH : 1,
                                  .weight_s = lv08 ? ENGINE_LV08_WEIGHT_S : 0,
                                  .capacity = varying ? maxmin_link_capacity : NULL, .capacity_ctx = e};
        NetworkHooks hooks = {.ctx = e, .done = maxmin_on_done, .active = maxmin_on_active,
                              .active_periodic = maxmin_on_periodic, .sender_idle = maxmin_on_sender_idle,
                              .active_way = e->radio ? maxmin_on_active_way : NULL,
                              .active_periodic_way = e->radio ? maxmin_on_periodic_way : NULL,
                              .traced = e->sink.ops->activity ? maxmin_on_traced : NULL};
        m->network = network_create(&options, &hooks);
        if (m->network) status = HS_OK;
    }
    free(up);
    free(down);
    return status;
}



const NetworkModel network_model_maxmin = {
    .name = "maxmin",
    .clips_rounds = 1,
    .create = maxmin_create,
    .free = maxmin_free,
    .send = maxmin_send,
    .send_until = maxmin_send_until,
    .cut = maxmin_cut,
    .computed = maxmin_computed,
    .join_time = maxmin_join_time,
    .ring = maxmin_ring,
    .event = maxmin_event,
    .after_event = maxmin_arm,
    .stranded = maxmin_stranded,
    .close_round = maxmin_close_round,
    .availability_changed = maxmin_availability_changed,
    .end_run = maxmin_end_run,
};
