/* network.c — max-min fair link sharing, incremental, with closed-form rings and groups.
 * Data: links (2n + backbone, 32 bytes each) each hold the flows transferring on them
 * (swap-remove, each flow knows its slot); flows live in a pool of indices; one indexed
 * 4-ary heap orders every timed thing (a flow's latency end or completion, a group's next
 * completion, a closed-form ring's end, a link's next capacity change) by (time, creation
 * sequence), so runs are deterministic. Shares are recomputed lazily, once per instant, by
 * progressive filling (a heap of link levels: O(F log L) for F flows on L links) over the
 * flows of the links that changed, grown only as far as the new shares disturb other flows
 * (network_recompute). Where many flows are held at one link (a server's downlink in a
 * round of uploads, a backbone), they become one group with one clock ("groups" below):
 * a start or an end there costs O(log n) instead of touching every flow on the link.
 * One file on purpose: the flow heap, the progressive filling, its incremental
 * recomputation and the groups share invariants that only hold together (about 2,500
 * lines). */
#include "sim/kernel/network.h"
#include "base/chunks.h"
#include "base/grow.h"
#include "base/hugemem.h"
#include "base/hs_error.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FLOW_GROUP: not a message but a group's aggregate on its link (see "groups") */
enum { FLOW_FREE = 0, FLOW_WAITING, FLOW_LATENCY, FLOW_ACTIVE, FLOW_GROUP };
enum { HANDLE_FLOW = 0, HANDLE_RING = 1, HANDLE_LINK = 2 };

/* A flow's bottleneck or next (a link or a flow index) take 29 bits: at most 2^28 - 1 links
 * and flows (flow_alloc and network_create refuse more: 134 M agents, 19 GB of flows). */
enum { FLOW_REF_BITS = 29, FLOW_REF_MAX = (1 << (FLOW_REF_BITS - 1)) - 1 };

typedef struct NetFlow {
    /* what the recomputation reads, in the first cache line (its index in S is
     * Network.s_index's); its state shares the word with bottleneck / next */
    union {
        struct {
            int bottleneck : FLOW_REF_BITS; /* the link that set its share, -1: none (infinite
                                             * links only) */
            unsigned state : 3;
        };
        struct {
            int next : FLOW_REF_BITS; /* while it waits in its sender's uplink queue, or is
                        * free: the next there. One field: a queued flow has no share, and it
                        * leaves the queue with next = -1, the bottleneck of a flow that has
                        * none yet */
            unsigned : 3;
        };
    };
    int links[2];      /* a message: its sender's uplink (= the sender), the receiver's
                        * downlink (n + the receiver) (flow_src, flow_dst); its third, when
                        * the network has a backbone, is always the backbone: flow_link; a
                        * group's aggregate: its link alone (flow_n_links) */
    int heap;          /* position in the heap, -1 when not scheduled */
    int slots[2];      /* position in each link's flow array while active; a member: in the
                        * member list of each link it is attached to, -1 elsewhere; the
                        * backbone's in Network.backbone_slot (flow_slot) */
    double share;      /* allocated bytes/s; it progresses at share * bandwidth_factor */
    /* the rest */
    double bytes_left; /* at `updated` */
    double updated;    /* its time (latency end, completion) is its heap item's: flow_due */
    uint64_t seq;
    NetworkPayload payload;
} NetFlow;             /* 72 bytes (a D-PSGD step has four alive an agent): what only the
                        * trace hook reads is in FlowTrace, its group (and what only a group's
                        * member needs) in FlowMember, the ring it is a hop of in
                        * Network.hop_ring; its count of links is its state's (flow_n_links);
                        * its endpoints are its links and its latency is its endpoints'
                        * (flow_latency); its weight is 1 unless Network.weight exists
                        * (flow_weight); its time is its heap item's (flow_due) */
_Static_assert(sizeof(NetFlow) <= 72, "millions of flows are alive at once: keep their fields few");

/* What a flow needs while it is a member of a group, beside the flows and only once a
 * group has formed (D-PSGD on a sparse graph never forms one: no link holds group_min
 * flows). tag and stamp are read only while group says it is a member (written at its
 * join); group is every flow's once the array exists (flow_group: -1 before). */
typedef struct FlowMember {
    double tag;        /* the group clock at which its last byte is through */
    unsigned stamp;    /* which join (its items in the group's queue are this one's) */
    int group;         /* -1, or the group it is a member of (FLOW_GROUP: the group it stands
                        * for); in the padding, so 16 bytes as without it */
} FlowMember;

/* What the trace hook reports of a flow, beside the flows and only when there is a hook:
 * a step of D-PSGD has four flows an agent alive, and these would be 24 bytes of each. */
typedef struct FlowTrace {
    double bytes;
    double created;    /* its latency began */
    double activated;  /* its transfer began (NAN until then, or set by a ring's conversion) */
} FlowTrace;

/* A flow on a link, with the copies of its share and whether this link holds it that the
 * recomputation reads: scanning a link reads no flow record (a cache miss each at a
 * million flows); whether the flow is in S is Network.s_index's (entry_s_index), 4 bytes a
 * flow rather than 4 an entry. Its weight is 1 unless Network.weight exists (flow_weight):
 * 12 bytes, packed, two a message. */
typedef struct __attribute__((packed)) LinkEntry {
    unsigned flow : 31;
    unsigned held : 1; /* the flow's bottleneck is this link */
    double share;
} LinkEntry;
_Static_assert(sizeof(LinkEntry) == 12, "two per message: keep it 12 bytes");

/* A link's entry array while it holds room for 2 or 4 (tier 0 and 1) is a block of a chunk,
 * past that an allocation of its own (entry_block_alloc). */
enum { ENTRY_TIERS = 2 };

typedef struct NetLink {
    double used;       /* sum of the shares of its flows (exactly 0 when it has none) */
    LinkEntry *entries; /* transferring flows (cap 2 or 4: a block of a chunk, entry_block_alloc) */
    int n;
    int n_held;        /* entries held here */
    int tpos;          /* its position in T (comp_links, tfill) when T holds it: in T iff
                        * comp_links[tpos] is it (link_in_t), so no per-link epoch mark */
    uint8_t dirty;
    uint8_t cap_shift; /* entries has room for 1 << cap_shift (2, 4, 8, ...), 0: no array
                        * (link_cap); a byte, not an int (the padding holds it) */
    uint8_t group_tried; /* in T: recompute_regroup looked at forming a group here (in the
                        * link's padding rather than in its 24-byte LinkFill) */
    uint8_t finite;    /* its capacity is below INFINITY (link_capacity), for the tests that
                        * ask only that: they read no agent's record */
} NetLink;             /* 32 bytes: two per agent, under every method (its capacity is
                        * link_capacity's: the agent's record or Network.capacity; its capacity change
                        * events, when links vary, are in link_heap and link_when; the
                        * closed-form ring holding it in Network.link_ring; its LinkAux in
                        * Network.link_aux once a group has formed; the flows that will
                        * cross it in Network.link_users once a ring has started) */
_Static_assert(sizeof(NetLink) <= 32, "two per agent at ten million agents: keep them small");

/* A link of T in a recomputation: its residual and count of S flows without their shares
 * (base_), and while filling. T reaches every link of a D-PSGD graph at times (the first
 * instant of a round, when every agent's first messages start together): 24 bytes. A
 * link's items in the fill heap carry no version: an item is current when its level is
 * the link's level now (recompute_fill). */
typedef struct LinkFill {
    double base_residual;
    double residual;   /* while flows of S are unfrozen on it; once filled, the level they
                        * froze at (fill_frozen_level): no flow's share is kept besides */
    int base_unfrozen, unfrozen;
} LinkFill;
_Static_assert(sizeof(LinkFill) == 24, "T reaches two links an agent at times: keep it 24 bytes");

/* The weights of those flows, beside (Network.tweights) only while weights are kept: with
 * every weight 1 they are the counts, base_unfrozen and unfrozen (fill_weights). */
typedef struct LinkFillWeights {
    double base, now;
} LinkFillWeights;

/* What the network keeps per agent, together: a message touches one line for its sender. */
typedef struct NetAgent {
    double active_since;
    int active_count;  /* own flows transferring */
    int outgoing;      /* messages from it not finished */
} NetAgent;

/* The same per direction (NETWORK_SENDING, NETWORK_RECEIVING), kept only when asked. */
typedef struct NetWays {
    double since[2];
    int count[2];
} NetWays;

typedef struct NetRing {
    int used;
    int *members;      /* (n) */
    int n;
    int cap;           /* members, lat and rate hold cap: kept from ring to ring (a
                        * million-member ring every step would otherwise fault its
                        * pages in every time) */
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

/* A link with a group (a group link) or crossed by a group's members elsewhere (attached
 * to the group). */
typedef struct LinkAux {
    int group;         /* the group held at this link, -1 */
    int attach;        /* the group whose members cross this link, -1 */
    double gweight;    /* attached: the weights of those members */
    int *members;      /* attached: those members beyond two (NULL: in one[]) */
    int n_members, cap_members;
    int one[2];        /* the members while there are two at most (most links: one) */
    int hpos;          /* attached: position in the group's room heap (>= 0), or out of it at
                        * -2 - hpos of its bucket (room_defer), -1: neither */
    union {
        int next;      /* free: the free list */
        int bucket;    /* attached and out of the room heap: its bucket */
    };
} LinkAux;

typedef struct MemberItem {
    double tag;
    uint64_t seq;
    int flow;
    unsigned stamp;    /* the flow's join */
} MemberItem;

typedef struct RoomItem {
    double room;       /* the level at which the link would be full: (capacity - used) / gweight */
    int link;
    int aux;           /* its LinkAux (a heap pass then touches no NetLink) */
} RoomItem;

/* An attached link out of the room heap, in its group's bucket. */
typedef struct DeferItem {
    int link;
    int aux;
} DeferItem;

typedef struct RoomBucket {
    DeferItem *items;
    int n, cap;
} RoomBucket;

/* Buckets of rooms in [2^(b - ROOM_BIAS - 1), 2^(b - ROOM_BIAS)) (bytes/s per unit of
 * weight: 2^-101 to 2^154); a room outside goes into the heap. */
enum { ROOM_BUCKETS = 256, ROOM_BIAS = 100 };

/* Flows held at one link, sharing its level (see "groups"). */
typedef struct NetGroup {
    int used;
    int link;          /* where they are held */
    int pseudo;        /* the flow standing for them on that link */
    int count;         /* members */
    double weight, weight_error; /* their weights (compensated sum) */
    double level;      /* every member's share is weight x level */
    double clock, clock_at; /* bytes per unit of weight through by clock_at */
    /* members by (tag, seq): a queue while they come in that order (equal messages
     * joining in turn: O(1)), a heap for the others; an item whose member left stays until
     * it comes first (member_live) */
    MemberItem *queue; /* ring buffer: [head, head + n_queue) mod cap_queue */
    int head, n_queue, cap_queue;
    MemberItem *heap;
    int n_heap, cap_heap;
    RoomItem *room;    /* (n_room) attached links by room */
    int n_room, cap_room;
    RoomBucket *bucket; /* (ROOM_BUCKETS) attached links whose room is above every level the
                        * group can reach (room_defer); NULL until the first */
    int bucket_low;    /* no bucket below it holds a link */
    int n_deferred;    /* links in the buckets (room has room for them all: room_defer) */
    int *tlist;        /* attached links in the current recomputation */
    int n_tlist, cap_tlist;
    unsigned tlist_epoch;
    int next;          /* free list */
} NetGroup;

/* An item of the event heap: 12 bytes, packed (every flow of a D-PSGD step has one, four
 * an agent, all at once at a round's first instant). Its handle's type is in the index's
 * top two bits (heap_item). The tie at equal times (heap_tie) is not kept: it is read from
 * the entity only when two times are equal, which in a run of distinct latencies is rare,
 * and it is the same total order as when it was a field (8 bytes an item: 32 an agent). */
typedef struct __attribute__((packed)) HeapItem {
    double when;
    uint32_t index;    /* (2 - type) << 30 | the entity's index (heap_item_handle) */
} HeapItem;
_Static_assert(sizeof(HeapItem) == 12, "one a flow: keep it 12 bytes");

/* Entities the heap can name: an index of 30 bits (a billion flows, rings or links). */
enum { HEAP_INDEX_BITS = 30 };

/* 12 bytes, packed: a filling over the whole graph (a D-PSGD round's first instant) holds
 * one to two items a link. */
typedef struct __attribute__((packed)) FillItem {
    double key;        /* the link's level when it was pushed (fill_level) */
    int link;
} FillItem;
_Static_assert(sizeof(FillItem) == 12, "one to two a link at times: keep it 12 bytes");

struct Network {
    NetworkOptions opt;
    NetworkHooks hooks;
    int n;             /* agents */
    int n_links;
    NetLink *links;
    NetAgent *agents;  /* (n) */
    double *latency;   /* (n) the agents' latencies, copied from NetworkOptions.latency; NULL
                        * when they are read in place (latency_at: agent_latency) */
    const unsigned char *latency_at;
    size_t latency_stride;
    double *capacity;  /* (n_links) the links' capacities, copied from NetworkOptions.uplink,
                        * downlink and backbone, and changed by opt.capacity; NULL when they are
                        * read in place (uplink_at: link_capacity) */
    const unsigned char *uplink_at, *downlink_at;
    size_t link_stride;
    NetWays *ways;     /* (n) when hooks.active_way: activity per direction, else NULL */
    NetFlow *flows;
    FlowTrace *trace;  /* (cap_flows) only with hooks.traced, else NULL */
    FlowMember *member; /* (cap_flows) once a group has formed, else NULL */
    int *backbone_slot; /* (cap_flows) a flow's slot on the backbone (its third link), only
                        * with a finite backbone, else NULL (flow_slot) */
    int *hop_ring;     /* (cap_flows) the ring a flow is a hop of, -1: none; once a ring has
                        * stepped (hop flows), else NULL and no flow is a hop (flow_ring) */
    double *weight;    /* (cap_flows) a flow's share weight, only when one may differ from
                        * 1 (LV08's weight_s, or once a group's aggregate exists): else NULL
                        * and every weight is 1 (flow_weight) */
    int cap_flows, used_flows, free_flow;
    int made_flows;    /* slots ever handed out: [made_flows, cap_flows) untouched memory */
    int *s_index;      /* (cap_flows) a flow's index in S if comp_flows[s_index] is it
                        * (entry_s_index): written when it joins S, never cleared (-1 when
                        * its slot is made) */
    NetRing *rings;
    int n_rings;
    int *link_ring;    /* (n_links) the closed-form ring holding a link, -1: none; once a
                        * ring has run in closed form, else NULL (link_ring) */
    int *link_users;   /* (n_links) flows in any state that will cross a link; only a ring's
                        * start reads it (may it run in closed form?): NULL until the first
                        * ring starts, counted from the flows then (link_users_create) */
    int *queue_head, *queue_tail, *sending; /* (n) uplink fifo */
    HeapItem *heap;
    int heap_n, heap_cap;
    int *dirty;
    int n_dirty;
    double now;
    uint64_t seq;
    unsigned epoch;
    int live;          /* messages and rings not finished */
    int group_min;     /* flows held at a link before they become a group */
    unsigned joins;
    NetGroup *groups;
    int n_groups, free_group;
    LinkAux *aux;
    int n_aux, cap_aux, free_aux;
    int *link_aux;     /* (n_links) a link's LinkAux, -1: none (it carries no group and is
                        * attached to none); NULL until the first aux_alloc (link_aux) */
    HsChunks blocks[ENTRY_TIERS];     /* links' first entry arrays: two, then four entries a block */
    LinkEntry *free_block[ENTRY_TIERS]; /* blocks given back (a link that grew past them), chained */
    /* recompute scratch */
    int *comp_links, *comp_flows, *violated;
    int cap_comp_links, cap_comp_flows, cap_violated;
    LinkFill *tfill;   /* (cap_tfill) by position in T */
    int cap_tfill;
    LinkFillWeights *tweights; /* (cap_tweights) by position in T, only with Network.weight */
    int cap_tweights;
    int s_groups, t_attached; /* aggregates in S, attached links in T */
    int regroup;       /* a flow of S is held where a group is or may form */
    int *link_heap;    /* (n_links) capacity change events: only with opt.capacity */
    double *link_when;
    FillItem *fill;
    int fill_n, fill_cap;
    int *bottleneck;   /* (cap_share) by S index, -1 while unfrozen: its level is its
                        * bottleneck's in T (s_level), its share weight x that (s_share) */
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
    default: return &net->link_heap[i];
    }
}

/* The item of an entity at time when. The heap orders items by (time, tie): at equal times
 * capacity changes, then rings, then flows, each in creation order (heap_tie). */
static HeapItem heap_item(int64_t h, double when)
{
    return (HeapItem){.when = when,
                      .index = ((uint32_t)(2 - handle_type(h)) << HEAP_INDEX_BITS) | (uint32_t)handle_index(h)};
}

/* The handle of an item: its type from the index's top two bits (2 - type, heap_item). */
static int64_t heap_item_handle(const HeapItem *item)
{
    return handle(2 - (int)(item->index >> HEAP_INDEX_BITS), (int)(item->index & ((1u << HEAP_INDEX_BITS) - 1)));
}

/* An item's tie: its type's rank in the top two bits, its entity's sequence below, read
 * from the entity (a group's aggregate takes its first member's: group_schedule updates
 * its item right after). */
static uint64_t heap_tie(const Network *net, const HeapItem *item)
{
    uint64_t rank = item->index >> HEAP_INDEX_BITS;
    return (rank << 62) | (handle_seq(net, heap_item_handle(item)) & ((1ull << 62) - 1));
}

static int heap_less(const Network *net, const HeapItem *a, const HeapItem *b)
{
    return a->when < b->when || (a->when == b->when && heap_tie(net, a) < heap_tie(net, b));
}

static void heap_set(Network *net, int pos, HeapItem item)
{
    net->heap[pos] = item;
    *handle_pos(net, heap_item_handle(&item)) = pos;
}

/* Four children per node: half the levels of a binary heap, so half the moves (each
 * writes the moved entity's position: a cache miss at a million flows), and the children
 * side by side. (when, tie) is a total order, so the order of events is the same. */
enum { HEAP_ARITY = 4 };

static void heap_up(Network *net, int pos)
{
    HeapItem item = net->heap[pos];
    while (pos > 0) {
        int parent = (pos - 1) / HEAP_ARITY;
        if (!heap_less(net, &item, &net->heap[parent])) break;
        heap_set(net, pos, net->heap[parent]);
        pos = parent;
    }
    heap_set(net, pos, item);
}

static void heap_down(Network *net, int pos)
{
    HeapItem item = net->heap[pos];
    for (;;) {
        int first = HEAP_ARITY * pos + 1, last = first + HEAP_ARITY, child = first;
        if (first >= net->heap_n) break;
        if (last > net->heap_n) last = net->heap_n;
        for (int c = first + 1; c < last; c++)
            if (heap_less(net, &net->heap[c], &net->heap[child])) child = c;
        if (!heap_less(net, &net->heap[child], &item)) break;
        heap_set(net, pos, net->heap[child]);
        pos = child;
    }
    heap_set(net, pos, item);
}

/* Puts item at pos in place of what was there, then up or down. The way is chosen against
 * the parent, not against the item replaced: the tie is read from the entity, and an
 * aggregate's may have changed with its time (group_schedule), so the old item's key is
 * gone. The same moves as comparing with the old key: where that said "up", the item is
 * below the parent or stays put either way; where it said "down", the item is not below
 * the parent (the parent was not above the old key, the old key not above the item). */
static void heap_replace(Network *net, int pos, HeapItem item)
{
    int up = pos > 0 && heap_less(net, &item, &net->heap[(pos - 1) / HEAP_ARITY]);
    heap_set(net, pos, item);
    if (up) heap_up(net, pos);
    else heap_down(net, pos);
}

/* Inserts h at time when, or moves it there. A flow's time is kept only here; a ring's
 * and a link's are also in their own records. */
static int heap_update(Network *net, int64_t h, double when)
{
    int *pos = handle_pos(net, h);
    HeapItem item = heap_item(h, when);
    if (*pos >= 0) {
        heap_replace(net, *pos, item);
        return HS_OK;
    }
    /* past 2^30 the index would run into the type's bits (a billion flows: 72 GB of them) */
    if (handle_index(h) >= (1 << HEAP_INDEX_BITS)) return HS_E_NOMEM;
    if (hs_grow((void **)&net->heap, &net->heap_cap, net->heap_n, sizeof *net->heap, 64) != HS_OK) return HS_E_NOMEM;
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
    heap_replace(net, at, last);
}

/* ---- links ---- */

static int link_up(const Network *net, int agent)
{
    (void)net;
    return agent;
}

/* Its latency: the network's copy, or the caller's record (NetworkOptions.latency_at),
 * through memcpy as the bytes of a double in a record of another type. */
static double agent_latency(const Network *net, int agent)
{
    if (net->latency) return net->latency[agent];
    double v;
    memcpy(&v, net->latency_at + (size_t)agent * net->latency_stride, sizeof v);
    return v;
}

/* Its capacity: the network's copy, or the sender's (receiver's) record for an uplink
 * (downlink, NetworkOptions.uplink_at) and the backbone's option, read as agent_latency
 * reads a latency. */
static double link_capacity(const Network *net, int l)
{
    if (net->capacity) return net->capacity[l];
    if (l >= 2 * net->n) return net->opt.backbone;
    const unsigned char *at = l < net->n ? net->uplink_at + (size_t)l * net->link_stride
                                         : net->downlink_at + (size_t)(l - net->n) * net->link_stride;
    double v;
    memcpy(&v, at, sizeof v);
    return v;
}

/* A new capacity, from opt.capacity (the copy exists whenever it is given). */
static void link_capacity_set(Network *net, int l, double capacity)
{
    net->capacity[l] = capacity;
    net->links[l].finite = capacity < INFINITY;
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

/* Its LinkAux, -1: none (every link until a group first forms). */
static int link_aux(const Network *net, int l)
{
    return net->link_aux ? net->link_aux[l] : -1;
}

static LinkAux *link_attached(const Network *net, int l)
{
    int a = link_aux(net, l);
    return a >= 0 && net->aux[a].attach >= 0 ? &net->aux[a] : NULL;
}

static int link_group(const Network *net, int l)
{
    int a = link_aux(net, l);
    return a >= 0 ? net->aux[a].group : -1;
}

/* Flows transferring on it: its entries and the members of a group crossing it. */
static int link_flows(const Network *net, int l)
{
    const LinkAux *aux = link_attached(net, l);
    return net->links[l].n + (aux ? aux->n_members : 0);
}

static void room_update(Network *net, int l);
static int group_dissolve_all(Network *net, int g);
static void room_flush(Network *net, NetGroup *g);

/* Current capacity; schedules its next change while flows use it. */
static int link_refresh(Network *net, int l)
{
    NetLink *link = &net->links[l];
    if (net->opt.capacity == NULL) return HS_OK;
    double next = INFINITY;
    link_capacity_set(net, l, net->opt.capacity(net->opt.capacity_ctx, l, net->now, &next));
    net->link_when[l] = next;
    if (link_attached(net, l)) room_update(net, l);
    int status = HS_OK;
    if (!link->finite && link_group(net, l) >= 0) status = group_dissolve_all(net, link_group(net, l));
    else if (link_group(net, l) >= 0) room_flush(net, &net->groups[link_group(net, l)]); /* the bound moved */
    if (status != HS_OK) return status;
    if (isfinite(next)) return heap_update(net, handle(HANDLE_LINK, l), next);
    heap_remove(net, handle(HANDLE_LINK, l));
    return HS_OK;
}

/* A link's first entry arrays, room for two (a client's link holds one flow at a time) and
 * then for four (a D-PSGD agent's uplink and downlink on a degree-4 graph: both links of
 * every agent): from chunks (base/chunks.h), not one malloc a link (a million clients' first
 * transfers were a million mallocs of 48 bytes and their headers; the four-entry arrays of
 * D-PSGD were two mallocs of 64 bytes an agent, each with a 16-byte header). A link that
 * outgrows its block moves to the next tier, or past four to an array of its own, and its
 * block goes back for the next link. The tier of an array of cap entries, -1: its own. */
static int entry_tier(int cap)
{
    return cap == 2 ? 0 : cap == 4 ? 1 : -1;
}

/* Room in the link's entry array: doubled from 2, kept as its exponent. */
static int link_cap(const NetLink *link)
{
    return link->cap_shift ? 1 << link->cap_shift : 0;
}

static LinkEntry *entry_block_alloc(Network *net, int tier)
{
    LinkEntry *block = net->free_block[tier];
    if (block) {
        /* the chain is in the block's bytes */
        memcpy(&net->free_block[tier], block, sizeof net->free_block[tier]);
        return block;
    }
    return hs_chunks_take(&net->blocks[tier]);
}

static void entry_block_free(Network *net, int tier, LinkEntry *block)
{
    memcpy(block, &net->free_block[tier], sizeof net->free_block[tier]);
    net->free_block[tier] = block;
}

/* Its count of links, not stored: a group's aggregate crosses its link alone, a message
 * its sender's uplink, its receiver's downlink and the backbone when there is one (the
 * links beyond the agents' 2n). */
static int flow_n_links(const Network *net, const NetFlow *f)
{
    return f->state == FLOW_GROUP ? 1 : 2 + (net->n_links - 2 * net->n);
}

/* The group flow fi is a member of (a group's aggregate: the group it stands for), -1: none;
 * in FlowMember, which exists once a group has formed (every flow's is -1 before). */
static int flow_group(const Network *net, int fi)
{
    return net->member ? net->member[fi].group : -1;
}

/* Link k of flow f (0: its sender's uplink, 1: the receiver's downlink, 2: the backbone, the
 * last link, not stored: a message crosses it whenever there is one), and its slot there:
 * the backbone's in Network.backbone_slot, so that the millions of flows of a network
 * without one (the default) are 8 bytes smaller. */
static int flow_link(const Network *net, const NetFlow *f, int k)
{
    return k < 2 ? f->links[k] : 2 * net->n;
}

static int flow_slot(const Network *net, const NetFlow *f, int k)
{
    return k < 2 ? f->slots[k] : net->backbone_slot[f - net->flows];
}

static void flow_slot_set(Network *net, NetFlow *f, int k, int slot)
{
    if (k < 2) f->slots[k] = slot;
    else net->backbone_slot[f - net->flows] = slot;
}

/* Adds flow f, with its current share, to the link's entries (nothing marked dirty). */
static int link_add_entry(Network *net, int l, int f)
{
    NetLink *link = &net->links[l];
    if (link->n == link_cap(link)) {
        int old_cap = link_cap(link), cap = old_cap ? old_cap * 2 : 2, from = entry_tier(old_cap), to = entry_tier(cap);
        LinkEntry *grown = to >= 0     ? entry_block_alloc(net, to)
                           : from >= 0 ? malloc((size_t)cap * sizeof *grown)
                                       : realloc(link->entries, (size_t)cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        if (from >= 0) { /* out of its block */
            memcpy(grown, link->entries, (size_t)old_cap * sizeof *grown);
            entry_block_free(net, from, link->entries);
        }
        link->entries = grown;
        link->cap_shift++;
    }
    NetFlow *flow = &net->flows[f];
    for (int k = 0; k < flow_n_links(net, flow); k++)
        if (flow_link(net, flow, k) == l) flow_slot_set(net, flow, k, link->n);
    int held = flow->bottleneck == l;
    link->entries[link->n++] = (LinkEntry){.flow = (unsigned)f, .held = (unsigned)held, .share = flow->share};
    link->n_held += held;
    if (flow->share != 0 && link->finite) {
        link->used += flow->share;
        if (link_attached(net, l)) room_update(net, l);
    }
    return HS_OK;
}

/* A flow joins the link (its latency paid, share 0 until the recomputation). */
static int link_add_flow(Network *net, int l, int f)
{
    int status = link_add_entry(net, l, f);
    if (status != HS_OK) return status;
    link_mark_dirty(net, l);
    if (link_flows(net, l) == 1) return link_refresh(net, l);
    return HS_OK;
}

/* Takes the entry at slot off the link (nothing marked dirty). */
static void link_drop_entry(Network *net, int l, int slot)
{
    NetLink *link = &net->links[l];
    link->used = link->n == 1 ? 0 : link->used - link->entries[slot].share;
    link->n_held -= link->entries[slot].held;
    LinkEntry last = link->entries[--link->n];
    int moved = last.flow;
    if (slot < link->n) {
        link->entries[slot] = last;
        NetFlow *m = &net->flows[moved];
        for (int k = 0; k < flow_n_links(net, m); k++)
            if (flow_link(net, m, k) == l) flow_slot_set(net, m, k, slot);
    }
    if (link_attached(net, l)) room_update(net, l);
}

static void link_remove_flow(Network *net, int l, int slot)
{
    link_drop_entry(net, l, slot);
    /* The freed share matters only to flows this link holds: the others are held below
     * its level elsewhere, where nothing changed (capacity changes always mark). */
    if (net->links[l].n_held > 0) link_mark_dirty(net, l);
}

/* ---- a message's endpoints and latency, from its links (not kept in NetFlow) ---- */

static int flow_src(const NetFlow *f)
{
    return f->links[0]; /* link_up(src) */
}

static int flow_dst(const Network *net, const NetFlow *f)
{
    return f->links[1] - net->n; /* link_down(dst) */
}

/* The wait of a message from -> to: the larger latency of the two, scaled. */
static double flow_latency(const Network *net, int from, int to)
{
    double lat_from = agent_latency(net, from), lat_to = agent_latency(net, to);
    double raw = lat_from > lat_to ? lat_from : lat_to;
    return raw * net->opt.latency_factor;
}

/* A flow's share weight: 1 unless weights are kept (x / 1 and 1 * x are x, bit for bit,
 * so the arithmetic is the one of a stored 1). */
static double flow_weight(const Network *net, int f)
{
    return net->weight ? net->weight[f] : 1;
}

/* The ring flow f is a hop of, -1: none (no ring has stepped yet: no flow is a hop). */
static int flow_ring(const Network *net, int f)
{
    return net->hop_ring ? net->hop_ring[f] : -1;
}

/* Network.hop_ring at the first hop flow: every flow so far is no hop. */
static int flow_hop_ring_create(Network *net)
{
    net->hop_ring = malloc((size_t)(net->cap_flows ? net->cap_flows : 1) * sizeof *net->hop_ring);
    if (net->hop_ring == NULL) return HS_E_NOMEM;
    for (int f = 0; f < net->made_flows; f++) net->hop_ring[f] = -1;
    return HS_OK;
}

/* ---- activity ---- */

static void activity_open(Network *net, int agent)
{
    NetAgent *a = &net->agents[agent];
    if (a->active_count++ == 0) a->active_since = net->now;
}

static void activity_close(Network *net, int agent)
{
    NetAgent *a = &net->agents[agent];
    if (--a->active_count == 0 && net->hooks.active && net->now > a->active_since)
        net->hooks.active(net->hooks.ctx, agent, a->active_since, net->now);
}

/* The flow src -> dst starts (opening) or stops transferring: per direction, when kept. */
static void activity_ways(Network *net, int src, int dst, int opening)
{
    int agent[2] = {src, dst};
    for (int way = 0; way < 2; way++) {
        NetWays *w = &net->ways[agent[way]];
        if (opening) {
            if (w->count[way]++ == 0) w->since[way] = net->now;
        } else if (--w->count[way] == 0 && net->now > w->since[way]) {
            net->hooks.active_way(net->hooks.ctx, agent[way], way, w->since[way], net->now);
        }
    }
}

/* ---- flows ---- */

/* A free slot: the last released, else a new one in order (so the slots come in the same
 * order as from a list of every slot; memory is first touched when a flow uses it). */
static int flow_alloc(Network *net)
{
    int f = net->free_flow;
    if (f >= 0) {
        net->free_flow = net->flows[f].next;
        net->used_flows++;
        return f;
    }
    if (net->made_flows == net->cap_flows) {
        int cap = net->cap_flows ? net->cap_flows * 2 : 64;
        if (cap - 1 > FLOW_REF_MAX) return -1; /* a flow's next has 29 bits */
        NetFlow *grown = realloc(net->flows, (size_t)cap * sizeof *grown);
        if (grown == NULL) return -1;
        net->flows = grown;
        int *s_index = realloc(net->s_index, (size_t)cap * sizeof *s_index);
        if (s_index == NULL) return -1;
        net->s_index = s_index;
        if (net->hooks.traced) {
            FlowTrace *trace = realloc(net->trace, (size_t)cap * sizeof *trace);
            if (trace == NULL) return -1;
            net->trace = trace;
        }
        if (net->member) {
            FlowMember *member = realloc(net->member, (size_t)cap * sizeof *member);
            if (member == NULL) return -1;
            net->member = member;
            for (int k = net->cap_flows; k < cap; k++) net->member[k].group = -1;
        }
        if (isfinite(net->opt.backbone)) {
            int *slot = realloc(net->backbone_slot, (size_t)cap * sizeof *slot);
            if (slot == NULL) return -1;
            net->backbone_slot = slot;
        }
        if (net->hop_ring) {
            int *hop = realloc(net->hop_ring, (size_t)cap * sizeof *hop);
            if (hop == NULL) return -1;
            net->hop_ring = hop;
        }
        if (net->weight || net->opt.weight_s > 0) {
            double *weight = realloc(net->weight, (size_t)cap * sizeof *weight);
            if (weight == NULL) return -1;
            net->weight = weight;
        }
        net->cap_flows = cap;
    }
    f = net->made_flows++;
    net->flows[f].state = FLOW_FREE;
    net->s_index[f] = -1;
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

/* When its last byte is through at its current share. */
static double flow_when_by_share(const Network *net, const NetFlow *f)
{
    double speed = flow_speed(net, f);
    if (f->bytes_left <= 0 || isinf(speed)) return net->now;
    if (speed > 0) return net->now + f->bytes_left / speed;
    return INFINITY;
}

/* Whether a transferring flow's completion is due by now (one not scheduled is not: it
 * waits for its first share). */
static int flow_due(const Network *net, const NetFlow *f)
{
    return f->heap >= 0 && net->heap[f->heap].when <= net->now;
}

static int flow_begin_latency(Network *net, int f, double wait)
{
    NetFlow *flow = &net->flows[f];
    flow->state = FLOW_LATENCY;
    double when = net->now + wait;
    if (net->trace) net->trace[f].created = net->now;
    if (net->opt.uplink_fifo) net->sending[flow_src(flow)] = 1;
    return heap_update(net, handle(HANDLE_FLOW, f), when);
}

/* Latency paid: the flow joins its links (share 0 until the recompute). */
static int flow_activate(Network *net, int f)
{
    NetFlow *flow = &net->flows[f];
    flow->state = FLOW_ACTIVE;
    flow->share = 0;
    flow->updated = net->now;
    if (net->trace && isnan(net->trace[f].activated)) net->trace[f].activated = net->now;
    int src = flow_src(flow), dst = flow_dst(net, flow);
    activity_open(net, src);
    if (dst != src) activity_open(net, dst);
    if (net->ways) activity_ways(net, src, dst, 1);
    int status = HS_OK;
    for (int k = 0; k < flow_n_links(net, flow) && status == HS_OK; k++) status = link_add_flow(net, flow_link(net, flow, k), f);
    if (flow->bytes_left <= 0 && status == HS_OK) status = heap_update(net, handle(HANDLE_FLOW, f), net->now);
    return status;
}

static int ring_hop_done(Network *net, int r);
static int ring_convert(Network *net, int r);
static int group_leave(Network *net, int fi, int finished);
static int group_fire(Network *net, int gi);
static int group_materialize(Network *net, int fi);

/* The closed-form ring holding link l, -1: none (Network.link_ring). */
static int link_ring(const Network *net, int l)
{
    return net->link_ring ? net->link_ring[l] : -1;
}

/* A new flow over the links of a closed-form ring turns that ring into hop flows first. */
static int flow_claim_links(Network *net, const int *links, int n_links)
{
    for (int k = 0; k < n_links; k++) {
        int r = link_ring(net, links[k]);
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
    memcpy(flow->links, links, sizeof flow->links); /* the backbone's, links[2], is flow_link's */
    if (net->backbone_slot) net->backbone_slot[f] = 0; /* as the memset did to slots[2] */
    if (ring >= 0 && net->hop_ring == NULL && flow_hop_ring_create(net) != HS_OK) return HS_E_NOMEM;
    if (net->hop_ring) net->hop_ring[f] = ring;
    if (net->member) net->member[f].group = -1;
    flow->heap = -1;
    flow->bottleneck = -1;
    flow->next = -1;
    flow->bytes_left = bytes;
    flow->updated = net->now;
    if (net->trace) net->trace[f] = (FlowTrace){.bytes = bytes, .created = 0, .activated = NAN};
    flow->seq = net->seq++;
    flow->payload = payload;
    if (net->weight) net->weight[f] = 1;
    if (net->opt.weight_s > 0) {
        double lat_from = agent_latency(net, from), lat_to = agent_latency(net, to);
        double penalty = lat_from > lat_to ? lat_from : lat_to;
        for (int k = 0; k < n_links; k++) {
            if (net->opt.capacity && link_flows(net, links[k]) == 0) link_refresh(net, links[k]);
            penalty += net->opt.weight_s / link_capacity(net, links[k]);
        }
        if (penalty > 0) net->weight[f] = 1 / penalty;
    }
    if (net->link_users)
        for (int k = 0; k < n_links; k++) net->link_users[links[k]]++;
    net->agents[from].outgoing++;
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
    return flow_begin_latency(net, f, latency_left < 0 ? flow_latency(net, from, to) : latency_left);
}

/* The transfer ended at now (or a cut ended the message early: network_cut, where it may
 * still wait in its sender's queue or its latency, on no link yet). */
static int flow_finish(Network *net, int f)
{
    int member = flow_group(net, f) >= 0;
    if (member && group_leave(net, f, 1) != HS_OK) return HS_E_NOMEM;
    NetFlow *flow = &net->flows[f];
    int active = flow->state == FLOW_ACTIVE, waiting = flow->state == FLOW_WAITING;
    for (int k = 0; k < flow_n_links(net, flow); k++) {
        if (!member && active) link_remove_flow(net, flow_link(net, flow, k), flow_slot(net, flow, k));
        if (net->link_users) net->link_users[flow_link(net, flow, k)]--;
    }
    int src = flow_src(flow), dst = flow_dst(net, flow), ring = flow_ring(net, f);
    if (active) {
        activity_close(net, src);
        if (dst != src) activity_close(net, dst);
        if (net->ways) activity_ways(net, src, dst, 0);
    }
    if (net->hooks.traced)
        net->hooks.traced(net->hooks.ctx, src, dst, net->trace[f].bytes, net->trace[f].created,
                          net->trace[f].activated, net->now);
    NetworkPayload payload = flow->payload;
    flow_release(net, f);
    net->live--;
    net->stats.flows_finished++;
    int status = HS_OK;
    if (net->opt.uplink_fifo && !waiting) { /* a queued message held no turn */
        net->sending[src] = 0;
        int next = net->queue_head[src];
        if (next >= 0) {
            net->queue_head[src] = net->flows[next].next;
            if (net->queue_head[src] < 0) net->queue_tail[src] = -1;
            net->flows[next].next = -1;
            status = flow_begin_latency(net, next, flow_latency(net, src, flow_dst(net, &net->flows[next])));
        }
    }
    if (--net->agents[src].outgoing == 0 && net->hooks.sender_idle) net->hooks.sender_idle(net->hooks.ctx, src, net->now);
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

int network_send_ref(Network *net, double now, int from, int to, double bytes, NetworkPayload payload,
                     NetworkFlowRef *ref)
{
    if (now > net->now) net->now = now;
    int f = -1, status = flow_start(net, from, to, bytes, -1, payload, -1, &f);
    if (status == HS_OK) *ref = (NetworkFlowRef){.flow = f, .seq = net->flows[f].seq};
    return status;
}

/* Takes a queued message out of its sender's uplink queue. */
static void flow_unqueue(Network *net, int f)
{
    int src = flow_src(&net->flows[f]), prev = -1;
    for (int q = net->queue_head[src]; q >= 0; prev = q, q = net->flows[q].next) {
        if (q != f) continue;
        if (prev >= 0) net->flows[prev].next = net->flows[f].next;
        else net->queue_head[src] = net->flows[f].next;
        if (net->queue_tail[src] == f) net->queue_tail[src] = prev;
        net->flows[f].next = -1;
        return;
    }
}

int network_cut(Network *net, double now, NetworkFlowRef ref, double bytes, double floor_bytes, double *sent,
                int *found)
{
    if (now > net->now) net->now = now;
    int f = ref.flow;
    *found = f >= 0 && f < net->made_flows && net->flows[f].state != FLOW_FREE && net->flows[f].state != FLOW_GROUP &&
             flow_ring(net, f) < 0 && net->flows[f].seq == ref.seq;
    if (!*found) return HS_OK; /* it ended already: every byte went */
    int status = HS_OK;
    /* a group's member turns back into an ordinary flow with its bytes left now */
    if (flow_group(net, f) >= 0 && (status = group_materialize(net, f)) != HS_OK) return status;
    NetFlow *flow = &net->flows[f];
    if (flow->state == FLOW_ACTIVE) {
        flow_settle(net, flow);
        if (flow_due(net, flow)) flow->bytes_left = 0; /* due now: it is through */
    }
    double through = flow->state == FLOW_ACTIVE ? bytes - flow->bytes_left : 0;
    if (through < 0) through = 0;
    if (through < floor_bytes) { /* the floor is not through yet: the message goes on to it */
        *sent = floor_bytes;
        flow->bytes_left = floor_bytes - through;
        if (net->trace) net->trace[f].bytes = floor_bytes;
        if (flow->state != FLOW_ACTIVE) return HS_OK;
        return heap_update(net, handle(HANDLE_FLOW, f), flow_when_by_share(net, flow));
    }
    *sent = through;
    if (net->trace) net->trace[f].bytes = through;
    heap_remove(net, handle(HANDLE_FLOW, f));
    if (flow->state == FLOW_WAITING) flow_unqueue(net, f);
    return flow_finish(net, f);
}

/* ---- groups ----
 * Flows held at one link all get weight x its level. Once `group_min` flows are held at a
 * link, those that qualify become its group: they leave the link's entries, where one
 * aggregate (a FLOW_GROUP flow whose weight is theirs summed) stands for them, so that a
 * recomputation there touches one entry instead of every member. Members progress
 * together: the group keeps a clock, the bytes per unit of weight that went through since
 * it formed (processor sharing with virtual time, as in fair queueing), and each member a
 * tag, the clock value at which its last byte is through; members wait in a heap by
 * (tag, seq) and the aggregate is scheduled at the smallest. A start or an end at the
 * link then costs O(log n) plus the link's other entries (flows limited elsewhere).
 * A member's other finite links (its uplink, the server's, the backbone) are attached to
 * the group: they must not limit it, which holds while none of their own flows is held
 * there and their room, (capacity - the shares of their own flows) / the members' weights
 * on them, is above the level. A heap of attached links by room says which breaks first
 * when the level rises (those that cannot break before many members leave wait out of it:
 * "rooms out of the heap"); an attached link that progressive filling touches brings the
 * aggregate in with it, and where one would limit the members, those members turn back
 * into ordinary flows (materialise) and progressive filling decides.
 * A flow joins only at a level its share already has, so joining changes no share; the
 * arithmetic of its progress changes: bytes left = weight x (tag - clock), one rounding
 * per event for the whole group instead of one per member. */

static void group_weight_add(NetGroup *g, double w)
{
    double t = g->weight + w; /* compensated (Neumaier): weights come and go for hours */
    g->weight_error += fabs(g->weight) >= fabs(w) ? (g->weight - t) + w : (w - t) + g->weight;
    g->weight = t;
}

static int member_less(const MemberItem *a, const MemberItem *b)
{
    return a->tag < b->tag || (a->tag == b->tag && a->seq < b->seq);
}

/* Whether the item still stands for a member of group gi (else the flow left). */
static int member_live(const Network *net, int gi, const MemberItem *item)
{
    const NetFlow *f = &net->flows[item->flow];
    return flow_group(net, item->flow) == gi && f->state == FLOW_ACTIVE && f->seq == item->seq &&
           net->member[item->flow].stamp == item->stamp;
}

static void member_heap_down(NetGroup *g, int pos)
{
    MemberItem item = g->heap[pos];
    for (;;) {
        int child = 2 * pos + 1;
        if (child >= g->n_heap) break;
        if (child + 1 < g->n_heap && member_less(&g->heap[child + 1], &g->heap[child])) child++;
        if (!member_less(&g->heap[child], &item)) break;
        g->heap[pos] = g->heap[child];
        pos = child;
    }
    g->heap[pos] = item;
}

/* Drops the items of members that left, once they are most of the items (a member that
 * turns back and joins again leaves one behind each time). */
static void member_compact(const Network *net, NetGroup *g, int gi)
{
    int kept = 0;
    for (int i = 0; i < g->n_queue; i++) {
        const MemberItem *item = &g->queue[(g->head + i) % g->cap_queue];
        if (member_live(net, gi, item)) g->queue[(g->head + kept++) % g->cap_queue] = *item;
    }
    g->n_queue = kept;
    kept = 0;
    for (int i = 0; i < g->n_heap; i++)
        if (member_live(net, gi, &g->heap[i])) g->heap[kept++] = g->heap[i];
    g->n_heap = kept;
    for (int i = g->n_heap / 2 - 1; i >= 0; i--) member_heap_down(g, i);
}

static int member_push(Network *net, NetGroup *g, int f)
{
    if (g->n_queue + g->n_heap > 2 * g->count + 1024) member_compact(net, g, flow_group(net, g->pseudo));
    NetFlow *flow = &net->flows[f];
    FlowMember *m = &net->member[f];
    m->stamp = ++net->joins;
    MemberItem item = {.tag = m->tag, .seq = flow->seq, .flow = f, .stamp = m->stamp};
    const MemberItem *tail = g->n_queue ? &g->queue[(g->head + g->n_queue - 1) % g->cap_queue] : NULL;
    if (tail == NULL || !member_less(&item, tail)) {
        if (g->n_queue == g->cap_queue) {
            int cap = g->cap_queue ? g->cap_queue * 2 : 64;
            MemberItem *grown = malloc((size_t)cap * sizeof *grown);
            if (grown == NULL) return HS_E_NOMEM;
            for (int i = 0; i < g->n_queue; i++) grown[i] = g->queue[(g->head + i) % g->cap_queue];
            free(g->queue);
            g->queue = grown;
            g->cap_queue = cap;
            g->head = 0;
        }
        g->queue[(g->head + g->n_queue++) % g->cap_queue] = item;
        return HS_OK;
    }
    if (g->n_heap == g->cap_heap) {
        int cap = g->cap_heap ? g->cap_heap * 2 : 64;
        MemberItem *grown = realloc(g->heap, (size_t)cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        g->heap = grown;
        g->cap_heap = cap;
    }
    int pos = g->n_heap++;
    while (pos > 0 && member_less(&item, &g->heap[(pos - 1) / 2])) {
        g->heap[pos] = g->heap[(pos - 1) / 2];
        pos = (pos - 1) / 2;
    }
    g->heap[pos] = item;
    return HS_OK;
}

/* The first member by (tag, seq), the items of those that left dropped on the way;
 * *in_queue says where it is. The group has a member. */
static const MemberItem *member_first(const Network *net, NetGroup *g, int gi, int *in_queue)
{
    while (g->n_queue > 0 && !member_live(net, gi, &g->queue[g->head])) {
        g->head = (g->head + 1) % g->cap_queue;
        g->n_queue--;
    }
    while (g->n_heap > 0 && !member_live(net, gi, &g->heap[0])) {
        g->heap[0] = g->heap[--g->n_heap];
        if (g->n_heap > 0) member_heap_down(g, 0);
    }
    const MemberItem *q = g->n_queue ? &g->queue[g->head] : NULL, *h = g->n_heap ? g->heap : NULL;
    *in_queue = h == NULL || (q != NULL && member_less(q, h));
    return *in_queue ? q : h;
}

/* ---- attached links, in their group's heap by room ---- */

static double room_of(const Network *net, int l)
{
    const NetLink *link = &net->links[l];
    return (link_capacity(net, l) - link->used) / link_attached(net, l)->gweight;
}

static void room_set(Network *net, NetGroup *g, int pos, RoomItem item)
{
    g->room[pos] = item;
    net->aux[item.aux].hpos = pos;
}

static void room_up(Network *net, NetGroup *g, int pos)
{
    RoomItem item = g->room[pos];
    while (pos > 0) {
        int parent = (pos - 1) / 2;
        if (!(item.room < g->room[parent].room)) break;
        room_set(net, g, pos, g->room[parent]);
        pos = parent;
    }
    room_set(net, g, pos, item);
}

static void room_down(Network *net, NetGroup *g, int pos)
{
    RoomItem item = g->room[pos];
    for (;;) {
        int child = 2 * pos + 1;
        if (child >= g->n_room) break;
        if (child + 1 < g->n_room && g->room[child + 1].room < g->room[child].room) child++;
        if (!(g->room[child].room < item.room)) break;
        room_set(net, g, pos, g->room[child]);
        pos = child;
    }
    room_set(net, g, pos, item);
}

/* Attached link l (its LinkAux a) into g's heap; room_defer keeps the room for the links of
 * the buckets, so that one of them never needs to grow it. */
static int room_push(Network *net, NetGroup *g, int l, int a)
{
    if (g->n_room == g->cap_room) {
        int cap = g->cap_room ? g->cap_room * 2 : 64;
        RoomItem *grown = realloc(g->room, (size_t)cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        g->room = grown;
        g->cap_room = cap;
    }
    g->room[g->n_room] = (RoomItem){.room = room_of(net, l), .link = l, .aux = a};
    room_up(net, g, g->n_room++);
    return HS_OK;
}

static void room_remove(Network *net, NetGroup *g, int a)
{
    int pos = net->aux[a].hpos;
    RoomItem moved = g->room[--g->n_room];
    net->aux[a].hpos = -1;
    if (pos == g->n_room) return;
    int earlier = moved.room < g->room[pos].room;
    room_set(net, g, pos, moved);
    if (earlier) room_up(net, g, pos);
    else room_down(net, g, pos);
}

/* ---- rooms out of the heap ----
 * A group's level is at most its link's capacity over its members' weight (their aggregate
 * is held there). An attached link whose room is above that bound cannot limit the
 * members until enough of them have left, or the link's capacity has risen, for the bound
 * to reach its room; until then it needs no place in the heap (whose passes are random
 * misses: O(log n) of them at each member's join and leave). Such a link (a client's
 * downlink under a server's fan-out: one member, no flow of its own) waits in a bucket by
 * the binary exponent of its room instead, O(1) in and out, and a bucket goes into the
 * heap, whole, once the bound reaches its floor (room_flush: after a member leaves, after
 * the link's capacity changes), or one link does once its room falls below its bucket's
 * floor (room_update). So every attached link whose room is below the level the group may
 * take next is in the heap, and recompute_room finds it there as before. At a server's
 * fan-out of n equal flows the bound reaches the clients' rooms only for the last hundred
 * or so members. */

/* Rooms in [2^(b - ROOM_BIAS - 1), 2^(b - ROOM_BIAS)) go into bucket b. */
static double room_bucket_floor(int b)
{
    return ldexp(1, b - ROOM_BIAS - 1);
}

static int room_bucket_of(double room)
{
    if (!(room > 0) || !(room < INFINITY)) return -1;
    int e;
    (void)frexp(room, &e); /* room in [2^(e - 1), 2^e) */
    int b = e + ROOM_BIAS;
    return b >= 0 && b < ROOM_BUCKETS ? b : -1;
}

/* Above every level group g can take while its members weigh what they do; the margin
 * covers the rounding of the link's sums (its level is a residual over weights). */
static double room_bound(const Network *net, const NetGroup *g)
{
    double weight = g->weight + g->weight_error;
    return weight > 0 ? link_capacity(net, g->link) / weight * (1 + 1e-6) : INFINITY;
}

static int room_defer(Network *net, NetGroup *g, int l, int a, int b)
{
    if (g->bucket == NULL && (g->bucket = calloc(ROOM_BUCKETS, sizeof *g->bucket)) == NULL) return HS_E_NOMEM;
    /* room for every deferred one: room_update's and room_flush's pushes then cannot fail */
    if (hs_grow((void **)&g->room, &g->cap_room, g->n_room + g->n_deferred, sizeof *g->room, 64) != HS_OK)
        return HS_E_NOMEM;
    RoomBucket *bucket = &g->bucket[b];
    if (hs_grow((void **)&bucket->items, &bucket->cap, bucket->n, sizeof *bucket->items, 16) != HS_OK)
        return HS_E_NOMEM;
    net->aux[a].hpos = -2 - bucket->n;
    net->aux[a].bucket = b;
    bucket->items[bucket->n++] = (DeferItem){.link = l, .aux = a};
    g->n_deferred++;
    if (b < g->bucket_low) g->bucket_low = b;
    net->stats.rooms_deferred++;
    return HS_OK;
}

/* Takes link (LinkAux a) out of its bucket. */
static void room_undefer(Network *net, NetGroup *g, int a)
{
    LinkAux *aux = &net->aux[a];
    RoomBucket *bucket = &g->bucket[aux->bucket];
    int pos = -2 - aux->hpos;
    DeferItem last = bucket->items[--bucket->n];
    if (pos < bucket->n) {
        bucket->items[pos] = last;
        net->aux[last.aux].hpos = -2 - pos;
    }
    aux->hpos = -1;
    g->n_deferred--;
}

/* A newly attached link l (LinkAux a): into a bucket when its room is above g's bound. */
static int room_place(Network *net, NetGroup *g, int l, int a)
{
    int b = room_bucket_of(room_of(net, l));
    if (b >= 0 && room_bucket_floor(b) > room_bound(net, g)) return room_defer(net, g, l, a, b);
    return room_push(net, g, l, a);
}

/* g's bound rose: the buckets whose floor it reached go into the heap (never grown here). */
static void room_flush(Network *net, NetGroup *g)
{
    if (g->n_deferred == 0) return;
    double bound = room_bound(net, g);
    for (; g->bucket_low < ROOM_BUCKETS; g->bucket_low++) {
        RoomBucket *bucket = &g->bucket[g->bucket_low];
        if (bucket->n == 0) continue;
        if (room_bucket_floor(g->bucket_low) > bound) break;
        while (bucket->n > 0) {
            DeferItem item = bucket->items[--bucket->n];
            net->aux[item.aux].hpos = -1;
            g->n_deferred--;
            (void)room_push(net, g, item.link, item.aux);
            net->stats.rooms_flushed++;
        }
    }
}

/* The room of attached link l changed (its capacity, its own flows' shares or members). */
static void room_update(Network *net, int l)
{
    LinkAux *aux = link_attached(net, l);
    NetGroup *g = &net->groups[aux->attach];
    if (aux->hpos < -1) { /* in a bucket: into the heap once below the bucket's floor */
        if (room_of(net, l) < room_bucket_floor(aux->bucket)) {
            int a = link_aux(net, l);
            room_undefer(net, g, a);
            (void)room_push(net, g, l, a);
            net->stats.rooms_flushed++;
        }
        return;
    }
    if (aux->hpos < 0) return;
    int pos = aux->hpos;
    double room = room_of(net, l);
    int earlier = room < g->room[pos].room;
    g->room[pos].room = room;
    if (earlier) room_up(net, g, pos);
    else room_down(net, g, pos);
}

static int *aux_members(LinkAux *aux)
{
    return aux->members ? aux->members : aux->one;
}

static int aux_alloc(Network *net, int l)
{
    if (net->link_aux == NULL) { /* the first: every link had none */
        net->link_aux = malloc((size_t)net->n_links * sizeof *net->link_aux);
        if (net->link_aux == NULL) return HS_E_NOMEM;
        for (int k = 0; k < net->n_links; k++) net->link_aux[k] = -1;
    }
    if (net->free_aux < 0) {
        int cap = net->cap_aux ? net->cap_aux * 2 : 64;
        LinkAux *grown = realloc(net->aux, (size_t)cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        net->aux = grown;
        for (int a = cap - 1; a >= net->cap_aux; a--) {
            grown[a] = (LinkAux){.group = -1, .attach = -1, .hpos = -1, .next = net->free_aux};
            net->free_aux = a;
        }
        net->cap_aux = cap;
    }
    int a = net->free_aux;
    LinkAux *aux = &net->aux[a];
    net->free_aux = aux->next;
    aux->group = aux->attach = aux->hpos = -1;
    aux->gweight = 0;
    aux->n_members = 0; /* the member list's memory is kept for the next user */
    net->link_aux[l] = a;
    return HS_OK;
}

static void aux_release(Network *net, int l)
{
    int a = net->link_aux[l];
    net->aux[a].next = net->free_aux;
    net->free_aux = a;
    net->link_aux[l] = -1;
}

/* Member f (of group g) crosses attached link l as its k-th link. */
static int attach_add(Network *net, int l, int g, int f, int k)
{
    if (link_aux(net, l) < 0) {
        if (aux_alloc(net, l) != HS_OK) return HS_E_NOMEM;
        net->aux[net->link_aux[l]].attach = g;
    }
    LinkAux *aux = &net->aux[net->link_aux[l]];
    if (aux->n_members == (aux->members ? aux->cap_members : 2)) {
        int cap = aux->members ? aux->cap_members * 2 : 4;
        int *grown = realloc(aux->members, (size_t)cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        if (aux->members == NULL) memcpy(grown, aux->one, sizeof aux->one);
        aux->members = grown;
        aux->cap_members = cap;
    }
    flow_slot_set(net, &net->flows[f], k, aux->n_members);
    aux_members(aux)[aux->n_members++] = f;
    aux->gweight += flow_weight(net, f);
    if (aux->hpos != -1) { /* in the heap or a bucket already */
        room_update(net, l);
        return HS_OK;
    }
    return room_place(net, &net->groups[g], l, net->link_aux[l]);
}

static void attach_remove(Network *net, int l, int f, int k)
{
    LinkAux *aux = link_attached(net, l);
    int *members = aux_members(aux);
    int slot = flow_slot(net, &net->flows[f], k), last = members[--aux->n_members];
    flow_slot_set(net, &net->flows[f], k, -1);
    if (slot < aux->n_members) {
        members[slot] = last;
        NetFlow *m = &net->flows[last];
        for (int j = 0; j < flow_n_links(net, m); j++)
            if (flow_link(net, m, j) == l) flow_slot_set(net, m, j, slot);
    }
    if (aux->n_members > 0) {
        aux->gweight -= flow_weight(net, f);
        room_update(net, l);
        return;
    }
    NetGroup *g = &net->groups[aux->attach];
    if (aux->hpos < -1) room_undefer(net, g, net->link_aux[l]);
    else room_remove(net, g, net->link_aux[l]);
    aux_release(net, l);
}

/* ---- a group's clock ---- */

/* Its clock brought to now at the current level. */
static void group_settle(Network *net, NetGroup *g)
{
    double dt = net->now - g->clock_at;
    if (dt > 0 && g->level > 0) g->clock += g->level * net->opt.bandwidth_factor * dt;
    g->clock_at = net->now;
}

/* The aggregate's time: when the first member's last byte is through (settled first). */
static int group_schedule(Network *net, NetGroup *g)
{
    NetFlow *p = &net->flows[g->pseudo];
    int in_queue;
    const MemberItem *top = member_first(net, g, flow_group(net, g->pseudo), &in_queue);
    double rate = g->level * net->opt.bandwidth_factor, left = top->tag - g->clock;
    p->seq = top->seq; /* at equal times, members end in creation order among other flows */
    double when = left <= 0 ? net->now : rate > 0 ? net->now + left / rate : INFINITY;
    return heap_update(net, handle(HANDLE_FLOW, g->pseudo), when);
}

/* The aggregate's weight and share after members came or went (the level unchanged). */
static void group_sync(Network *net, NetGroup *g)
{
    NetFlow *p = &net->flows[g->pseudo];
    NetLink *link = &net->links[g->link];
    double weight = g->weight + g->weight_error, share = weight * g->level;
    LinkEntry *e = &link->entries[p->slots[0]];
    link->used += share - p->share;
    net->weight[g->pseudo] = weight;
    p->share = e->share = share;
}

/* A new group at link l, at level (no member yet). Returns its index, or < 0. Flows may move. */
static int group_create(Network *net, int l, double level)
{
    if (net->member == NULL) { /* the first group: flows may join from now on */
        net->member = malloc((size_t)(net->cap_flows ? net->cap_flows : 1) * sizeof *net->member);
        if (net->member == NULL) return HS_E_NOMEM;
        for (int k = 0; k < net->cap_flows; k++) net->member[k].group = -1;
    }
    if (net->weight == NULL) { /* an aggregate's weight is its members' */
        net->weight = malloc((size_t)(net->cap_flows ? net->cap_flows : 1) * sizeof *net->weight);
        if (net->weight == NULL) return HS_E_NOMEM;
        for (int fi = 0; fi < net->made_flows; fi++) net->weight[fi] = 1;
    }
    int f = flow_alloc(net);
    if (f < 0) return HS_E_NOMEM;
    if (net->free_group < 0) {
        int cap = net->n_groups ? net->n_groups * 2 : 4;
        NetGroup *grown = realloc(net->groups, (size_t)cap * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        net->groups = grown;
        for (int g = cap - 1; g >= net->n_groups; g--) {
            grown[g] = (NetGroup){.next = net->free_group};
            net->free_group = g;
        }
        net->n_groups = cap;
    }
    if (aux_alloc(net, l) != HS_OK) return HS_E_NOMEM;
    int gi = net->free_group;
    NetGroup *g = &net->groups[gi];
    net->free_group = g->next;
    g->used = 1;
    g->link = l;
    g->pseudo = f;
    g->count = g->n_queue = g->n_heap = 0;
    g->weight = g->weight_error = 0;
    g->level = level;
    g->clock = 0;
    g->clock_at = net->now;
    g->n_room = g->n_deferred = 0;
    g->bucket_low = ROOM_BUCKETS;
    g->tlist_epoch = 0;
    net->aux[net->link_aux[l]].group = gi;
    NetFlow *p = &net->flows[f];
    memset(p, 0, sizeof *p);
    p->state = FLOW_GROUP;
    net->member[f].group = gi;
    if (net->hop_ring) net->hop_ring[f] = -1;
    p->links[0] = l;
    p->bottleneck = l;
    p->heap = -1;
    net->weight[f] = 0;
    if (net->trace) net->trace[f] = (FlowTrace){.bytes = 0, .created = 0, .activated = NAN};
    net->stats.groups++;
    if (link_add_entry(net, l, f) != HS_OK) return HS_E_NOMEM;
    return gi;
}

/* Flow f, held at g's link at g's level, becomes a member. */
static int group_join(Network *net, int fi, int gi)
{
    NetFlow *f = &net->flows[fi];
    NetGroup *g = &net->groups[gi];
    flow_settle(net, f);
    group_settle(net, g);
    net->member[fi].tag = g->clock + f->bytes_left / flow_weight(net, fi);
    heap_remove(net, handle(HANDLE_FLOW, fi));
    for (int k = 0; k < flow_n_links(net, f); k++) {
        int l = flow_link(net, f, k);
        link_drop_entry(net, l, flow_slot(net, f, k));
        flow_slot_set(net, f, k, -1);
        if (l != g->link && net->links[l].finite && attach_add(net, l, gi, fi, k) != HS_OK)
            return HS_E_NOMEM;
    }
    if (member_push(net, g, fi) != HS_OK) return HS_E_NOMEM;
    g->count++;
    group_weight_add(g, flow_weight(net, fi));
    net->member[fi].group = gi;
    group_sync(net, g);
    net->stats.joined++;
    return group_schedule(net, g);
}

static void group_dissolve(Network *net, int gi)
{
    NetGroup *g = &net->groups[gi];
    int p = g->pseudo, l = g->link;
    link_remove_flow(net, l, net->flows[p].slots[0]);
    heap_remove(net, handle(HANDLE_FLOW, p));
    flow_release(net, p);
    aux_release(net, l);
    g->used = 0;
    g->next = net->free_group;
    net->free_group = gi;
}

/* Member f leaves its group: its last byte is through (finished: the link's freed share
 * goes to the others), or it turns back into an ordinary flow. */
static int group_leave(Network *net, int fi, int finished)
{
    NetFlow *f = &net->flows[fi];
    int gi = flow_group(net, fi);
    NetGroup *g = &net->groups[gi];
    g->count--; /* its item stays until it comes first */
    for (int k = 0; k < flow_n_links(net, f); k++)
        if (flow_slot(net, f, k) >= 0) attach_remove(net, flow_link(net, f, k), fi, k);
    net->member[fi].group = -1;
    group_weight_add(g, -flow_weight(net, fi));
    if (g->count == 0) {
        group_dissolve(net, gi);
        return HS_OK;
    }
    room_flush(net, g); /* their weight fell: the bound rose */
    group_sync(net, g);
    if (finished) link_mark_dirty(net, g->link);
    group_settle(net, g);
    return group_schedule(net, g);
}

/* Member f turns back into an ordinary flow, with the share and the bytes left it has. */
static int group_materialize(Network *net, int fi)
{
    NetFlow *f = &net->flows[fi];
    NetGroup *g = &net->groups[flow_group(net, fi)];
    int l = g->link;
    group_settle(net, g);
    double left = flow_weight(net, fi) * (net->member[fi].tag - g->clock), level = g->level;
    int status = group_leave(net, fi, 0);
    f = &net->flows[fi];
    f->bytes_left = left > 0 ? left : 0;
    f->share = flow_weight(net, fi) * level;
    f->updated = net->now;
    f->bottleneck = l;
    for (int k = 0; k < flow_n_links(net, f) && status == HS_OK; k++) status = link_add_entry(net, flow_link(net, f, k), fi);
    if (status != HS_OK) return status;
    net->stats.detached++;
    return heap_update(net, handle(HANDLE_FLOW, fi), flow_when_by_share(net, f));
}

/* Attached link l may limit its group's members: they turn back into ordinary flows. */
static int group_detach_link(Network *net, int l)
{
    for (LinkAux *aux = link_attached(net, l); aux; aux = link_attached(net, l)) {
        int status = group_materialize(net, aux_members(aux)[aux->n_members - 1]);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

static int group_dissolve_all(Network *net, int gi)
{
    while (net->groups[gi].used) {
        int in_queue;
        int status = group_materialize(net, member_first(net, &net->groups[gi], gi, &in_queue)->flow);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

/* The aggregate's time came: its first member is through. */
static int group_fire(Network *net, int gi)
{
    NetGroup *g = &net->groups[gi];
    int in_queue;
    const MemberItem *first = member_first(net, g, gi, &in_queue);
    group_settle(net, g);
    if (g->clock < first->tag) g->clock = first->tag;
    return flow_finish(net, first->flow);
}

/* Whether flow fi, held at link b at `level`, may join group gi there (-1: a group to be
 * formed at that level): the group is at that very level, and on each other finite link
 * no flow is held and the members (fi with them) fit with a margin (else the link would
 * limit them at the next rise, and they would leave). */
static int group_eligible(const Network *net, int fi, int b, int gi, double level)
{
    const NetFlow *f = &net->flows[fi];
    if ((gi >= 0 && level != net->groups[gi].level) || f->state != FLOW_ACTIVE || flow_group(net, fi) >= 0 ||
        f->bottleneck != b || !(flow_weight(net, fi) > 0))
        return 0;
    for (int k = 0; k < flow_n_links(net, f); k++) {
        int l = flow_link(net, f, k);
        const NetLink *link = &net->links[l];
        if (l == b || !link->finite) continue;
        if (link->n_held > 0) return 0;
        double gweight = 0;
        if (link_aux(net, l) >= 0) {
            const LinkAux *aux = &net->aux[link_aux(net, l)];
            if (aux->attach != gi) return 0; /* a group's link, or attached to another */
            gweight = aux->gweight;
        }
        double room = link_capacity(net, l) - link->used + f->share;
        if (!(room >= (gweight + flow_weight(net, fi)) * level * (1 + 1e-9))) return 0;
    }
    return 1;
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
    NetRing kept = {.members = ring->members, .lat = ring->lat, .rate = ring->rate, .cap = ring->cap};
    *ring = kept;
    net->live--;
}

/* Room for n members in ring r's arrays. */
static int ring_reserve(Network *net, int r, int n)
{
    NetRing *ring = &net->rings[r];
    if (n <= ring->cap) return HS_OK;
    int *members = realloc(ring->members, (size_t)n * sizeof *members);
    if (members) ring->members = members;
    double *lat = realloc(ring->lat, (size_t)n * sizeof *lat);
    if (lat) ring->lat = lat;
    double *rate = realloc(ring->rate, (size_t)n * sizeof *rate);
    if (rate) ring->rate = rate;
    if (members == NULL || lat == NULL || rate == NULL) return HS_E_NOMEM;
    ring->cap = n;
    return HS_OK;
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
            if (net->hooks.active_periodic_way) { /* its own hop sends, its predecessor's receives */
                NetworkPeriodic way = p;
                way.n_sub = 1;
                way.a[0] = a0, way.b[0] = b0;
                net->hooks.active_periodic_way(net->hooks.ctx, ring->members[k], NETWORK_SENDING, &way);
                way.a[0] = a1, way.b[0] = b1;
                net->hooks.active_periodic_way(net->hooks.ctx, ring->members[k], NETWORK_RECEIVING, &way);
            }
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
    for (int k = 0; net->link_ring && k < ring->n; k++) {
        net->link_ring[link_up(net, ring->members[k])] = -1;
        net->link_ring[link_down(net, ring->members[k])] = -1;
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
            if (status == HS_OK && net->trace) net->trace[f].activated = step_start + lat;
        }
        if (status != HS_OK) return status;
        if (net->trace) {
            net->trace[f].created = step_start;
            net->trace[f].bytes = chunk;
        }
    }
    if (net->rings[r].pending == 0) return ring_step_over(net, r); /* the step ended just now */
    return HS_OK;
}

/* The flows in any state (waiting in an uplink queue, in their latency, transferring, in a
 * group) that will cross each link, counted from the flows at the first ring's start and
 * kept from then by flow_start and flow_finish: a network that never starts a ring (D-PSGD)
 * keeps no count, 8 bytes an agent. A group's aggregate (FLOW_GROUP) crosses nothing. */
static int link_users_create(Network *net)
{
    net->link_users = calloc((size_t)net->n_links, sizeof *net->link_users);
    if (net->link_users == NULL) return HS_E_NOMEM;
    for (int f = 0; f < net->made_flows; f++) {
        const NetFlow *flow = &net->flows[f];
        if (flow->state == FLOW_FREE || flow->state == FLOW_GROUP) continue;
        for (int k = 0; k < flow_n_links(net, flow); k++) net->link_users[flow_link(net, flow, k)]++;
    }
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
    net->live++;
    if (ring_reserve(net, r, n) != HS_OK) return HS_E_NOMEM;
    ring = &net->rings[r];
    if (members)
        memcpy(ring->members, members, (size_t)n * sizeof *members);
    else
        for (int k = 0; k < n; k++) ring->members[k] = k;
    members = ring->members;
    int alone = !isfinite(net->opt.backbone) && net->opt.capacity == NULL;
    if (alone && net->link_users == NULL && link_users_create(net) != HS_OK) return HS_E_NOMEM;
    for (int k = 0; alone && k < n; k++) {
        int up = link_up(net, members[k]), down = link_down(net, members[k]);
        alone = net->link_users[up] == 0 && net->link_users[down] == 0 && link_ring(net, up) < 0 &&
                link_ring(net, down) < 0;
    }
    if (!alone) {
        net->stats.rings_stepped++;
        return ring_start_step(net, r);
    }
    if (net->link_ring == NULL) { /* the first closed-form ring */
        net->link_ring = malloc((size_t)net->n_links * sizeof *net->link_ring);
        if (net->link_ring == NULL) return HS_E_NOMEM;
        for (int l = 0; l < net->n_links; l++) net->link_ring[l] = -1;
    }
    net->stats.rings_closed_form++;
    ring->closed = 1;
    ring->t0 = ring->reported = net->now;
    ring->period = 0;
    for (int k = 0; k < n; k++) {
        int a = members[k], b = members[(k + 1) % n];
        double up = link_capacity(net, link_up(net, a)), down = link_capacity(net, link_down(net, b));
        double lat_a = agent_latency(net, a), lat_b = agent_latency(net, b);
        double lat = lat_a > lat_b ? lat_a : lat_b;
        ring->lat[k] = lat * net->opt.latency_factor;
        ring->rate[k] = (up < down ? up : down) * net->opt.bandwidth_factor;
        double end = ring_hop_end(ring, k);
        if (end > ring->period) ring->period = end;
        net->link_ring[link_up(net, a)] = r;
        net->link_ring[link_down(net, a)] = r;
    }
    ring->when = net->now + ring->steps * ring->period;
    return heap_update(net, handle(HANDLE_RING, r), ring->when);
}

/* ---- shares: progressive filling over the component of the dirty links ---- */

/* The unfrozen weight of the link at position pos of T. With every weight 1 it is their
 * count: the sum of as many 1s, the same double (and read only while they go together:
 * the link being filled loses its count, not its weight, and is not read again). */
static double fill_weights(const Network *net, int pos)
{
    return net->weight ? net->tweights[pos].now : (double)net->tfill[pos].unfrozen;
}

/* The level at which the link at position pos of T saturates now: its residual over the
 * unfrozen weight (0 when nothing is left). */
static double fill_level(const Network *net, int pos)
{
    const LinkFill *link = &net->tfill[pos];
    return link->residual > 0 ? link->residual / fill_weights(net, pos) : 0;
}

static int fill_push(Network *net, int l)
{
    if (hs_grow((void **)&net->fill, &net->fill_cap, net->fill_n, sizeof *net->fill, 64) != HS_OK) return HS_E_NOMEM;
    FillItem item = {.key = fill_level(net, net->links[l].tpos), .link = l};
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
    if (hs_grow((void **)array, cap, n, sizeof **array, 64) != HS_OK) return HS_E_NOMEM;
    (*array)[n] = value;
    return HS_OK;
}

static int recompute_add(Network *net, int fi, unsigned epoch, int *n_flows, int *n_links);

/* Whether link l is in T, whose first n_links links are comp_links: a tpos left from an
 * earlier recomputation names another link there, or lies past the end (comp_links holds
 * each link of T once), as entry_s_index tells the flows of S. */
static int link_in_t(const Network *net, int l, int n_links)
{
    int pos = net->links[l].tpos;
    return pos >= 0 && pos < n_links && net->comp_links[pos] == l;
}

/* Link l joins T: its base residual is the capacity minus the shares of the flows outside
 * S. An attached link brings its group's aggregate into S, and counts the members on it
 * as one more unfrozen flow of their weight. */
static int recompute_link(Network *net, int l, unsigned epoch, int *n_flows, int *n_links)
{
    NetLink *link = &net->links[l];
    if (link_in_t(net, l, *n_links)) return HS_OK;
    if (push_int(&net->comp_links, &net->cap_comp_links, *n_links, l)) return HS_E_NOMEM;
    if (net->cap_tfill < net->cap_comp_links) {
        LinkFill *grown = realloc(net->tfill, (size_t)net->cap_comp_links * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        net->tfill = grown;
        net->cap_tfill = net->cap_comp_links;
    }
    if (net->weight && net->cap_tweights < net->cap_tfill) { /* weights kept since */
        LinkFillWeights *grown = realloc(net->tweights, (size_t)net->cap_tfill * sizeof *grown);
        if (grown == NULL) return HS_E_NOMEM;
        net->tweights = grown;
        net->cap_tweights = net->cap_tfill;
    }
    link->tpos = (*n_links)++;
    LinkFill *fill = &net->tfill[link->tpos];
    fill->base_residual = link_capacity(net, l) - link->used;
    if (net->weight) net->tweights[link->tpos].base = 0;
    fill->base_unfrozen = 0;
    link->group_tried = 0;
    LinkAux *aux = link_attached(net, l);
    if (aux == NULL) return HS_OK;
    net->t_attached++;
    NetGroup *g = &net->groups[aux->attach];
    if (recompute_add(net, g->pseudo, epoch, n_flows, n_links)) return HS_E_NOMEM;
    fill = &net->tfill[link->tpos];
    net->tweights[link->tpos].base += aux->gweight; /* a group: weights are kept */
    fill->base_unfrozen++;
    if (g->tlist_epoch != epoch) g->tlist_epoch = epoch, g->n_tlist = 0;
    return push_int(&g->tlist, &g->cap_tlist, g->n_tlist++, l);
}

/* The index in S (its first n_flows flows) of the flow of entry e, -1 when not in S. An
 * index left from an earlier recomputation names another flow there, or none (comp_flows
 * holds each flow of S once). */
static int flow_s_index(const Network *net, int fi, int n_flows)
{
    int i = net->s_index[fi];
    return i >= 0 && i < n_flows && net->comp_flows[i] == fi ? i : -1;
}

/* The same for the flow of entry e. */
static int entry_s_index(const Network *net, const LinkEntry *e, int n_flows)
{
    return flow_s_index(net, (int)e->flow, n_flows);
}

/* Adds flow fi to S: its links join T, and its current share goes back to them. */
static int recompute_add(Network *net, int fi, unsigned epoch, int *n_flows, int *n_links)
{
    if (flow_s_index(net, fi, *n_flows) >= 0) return HS_OK;
    const NetFlow *f = &net->flows[fi];
    net->s_index[fi] = *n_flows;
    if (push_int(&net->comp_flows, &net->cap_comp_flows, (*n_flows)++, fi)) return HS_E_NOMEM;
    net->s_groups += f->state == FLOW_GROUP;
    for (int k = 0; k < flow_n_links(net, f); k++) {
        int l = flow_link(net, f, k);
        NetLink *link = &net->links[l];
        if (!link->finite) continue;
        if (!link_in_t(net, l, *n_links) && recompute_link(net, l, epoch, n_flows, n_links)) return HS_E_NOMEM;
        LinkFill *fill = &net->tfill[link->tpos];
        fill->base_residual += f->share;
        if (net->weight) net->tweights[link->tpos].base += net->weight[fi];
        fill->base_unfrozen++;
    }
    return HS_OK;
}

/* The group's aggregate froze at level: the members on its attached links in T take
 * their share there. */
static int recompute_fill_attached(Network *net, const NetGroup *g, unsigned epoch, double level)
{
    if (g->tlist_epoch != epoch) return HS_OK;
    for (int t = 0; t < g->n_tlist; t++) {
        int l = g->tlist[t];
        LinkFill *other = &net->tfill[net->links[l].tpos];
        double gweight = link_attached(net, l)->gweight;
        other->unfrozen--;
        other->residual -= gweight * level;
        net->tweights[net->links[l].tpos].now -= gweight;
        if (other->unfrozen > 0 && fill_push(net, l)) return HS_E_NOMEM;
    }
    return HS_OK;
}

/* Progressive filling of S over T, flows outside S fixed: the link with the lowest level
 * (residual / unfrozen weight) saturates next; its unfrozen flows get weight x level.
 * Writes bottleneck[] by S index and, on each link it fills, the level its flows froze at
 * (s_level). An attached link that would saturate before its group's link limits the
 * members on it: *conflict = that link and the filling stops. */
static int recompute_fill(Network *net, unsigned epoch, int n_flows, int n_links, int *conflict)
{
    int *bottleneck = net->bottleneck;
    *conflict = -1;
    for (int i = 0; i < n_flows; i++) bottleneck[i] = -1; /* unfrozen */
    net->fill_n = 0;
    for (int i = 0; i < n_links; i++) {
        LinkFill *fill = &net->tfill[i];
        fill->residual = fill->base_residual;
        if (net->weight) net->tweights[i].now = net->tweights[i].base;
        fill->unfrozen = fill->base_unfrozen;
        if (fill->unfrozen > 0 && fill_push(net, net->comp_links[i])) return HS_E_NOMEM;
    }
    while (net->fill_n > 0) {
        FillItem item = fill_pop(net);
        const NetLink *link = &net->links[item.link];
        LinkFill *fill = &net->tfill[link->tpos];
        if (fill->unfrozen == 0) continue;
        /* An item pushed before the link's last change is stale. Its level may equal the
         * current one: then it is the current item's twin, (level, link) being the heap's
         * whole order, and the link is filled at the first of them as at the last. */
        double level = fill_level(net, link->tpos);
        if (item.key != level) continue;
        const LinkAux *aux = link_aux(net, item.link) >= 0 ? &net->aux[link_aux(net, item.link)] : NULL;
        if (aux && aux->attach >= 0 && bottleneck[flow_s_index(net, net->groups[aux->attach].pseudo, n_flows)] < 0) {
            *conflict = item.link;
            return HS_OK;
        }
        for (int j = 0; j < link->n; j++) {
            const LinkEntry *e = &link->entries[j];
            int index = entry_s_index(net, e, n_flows);
            if (index < 0) continue; /* outside S */
            if (bottleneck[index] >= 0) continue; /* frozen */
            double weight = flow_weight(net, e->flow), s = weight * level;
            bottleneck[index] = item.link;
            const NetFlow *f = &net->flows[e->flow];
            for (int k = 0; k < flow_n_links(net, f); k++) {
                const NetLink *other_link = &net->links[flow_link(net, f, k)];
                if (!link_in_t(net, flow_link(net, f, k), n_links)) continue; /* infinite */
                LinkFill *other = &net->tfill[other_link->tpos];
                other->unfrozen--;
                if (flow_link(net, f, k) == item.link) continue;
                other->residual -= s;
                if (net->weight) net->tweights[other_link->tpos].now -= weight;
                if (other->unfrozen > 0 && fill_push(net, flow_link(net, f, k))) return HS_E_NOMEM;
            }
            if (f->state == FLOW_GROUP && recompute_fill_attached(net, &net->groups[flow_group(net, (int)e->flow)], epoch, level))
                return HS_E_NOMEM;
        }
        fill->unfrozen = 0;
        fill->residual = level; /* no longer read as a residual: s_level's */
    }
    return HS_OK;
}

/* The level flow i of S froze at in the last filling: its bottleneck's, which that link's
 * LinkFill keeps once filled; INFINITY for a flow on infinite links only (no bottleneck). */
static double s_level(const Network *net, int i)
{
    int b = net->bottleneck[i];
    return b >= 0 ? net->tfill[net->links[b].tpos].residual : INFINITY;
}

/* Its share: weight x level, the product the filling took (1 x level is level, bit for
 * bit, while every weight is 1). */
static double s_share(const Network *net, int i)
{
    return net->bottleneck[i] >= 0 ? flow_weight(net, net->comp_flows[i]) * s_level(net, i) : INFINITY;
}

/* Every flow outside S that the new shares of S leave without a valid bottleneck joins S:
 * one whose bottleneck link is no longer saturated or now carries an S flow at a higher
 * level, and one above the level at which S flows froze on a link they share. Returns
 * how many joined (< 0 on error). */
static int recompute_violations(Network *net, unsigned epoch, int *n_flows, int *n_links)
{
    const double eps = 1e-9;
    int links = *n_links, n_violated = 0, links_n_flows = *n_flows;
    net->stats.links_checked += (uint64_t)links;
    /* first every link is judged against the current S, then the violated links' flows join */
    for (int i = 0; i < links; i++) {
        int l = net->comp_links[i];
        NetLink *link = &net->links[l];
        double used = link->used, top = 0, frozen_at = -1, outside_top = -1, held_low = INFINITY;
        int outside = 0;
        net->stats.entries_checked += (uint64_t)link->n;
        for (int j = 0; j < link->n; j++) {
            const LinkEntry *e = &link->entries[j];
            double level;
            int index = entry_s_index(net, e, links_n_flows);
            if (index < 0) {
                outside = 1;
                level = e->share / flow_weight(net, e->flow);
                if (level > outside_top) outside_top = level;
                if (e->held && level < held_low) held_low = level;
                continue;
            }
            double s = s_share(net, index);
            used += s - e->share;
            level = s / flow_weight(net, e->flow);
            if (level > top) top = level;
            if (net->bottleneck[index] == l && level > frozen_at) frozen_at = level;
        }
        if (!outside) continue;
        const LinkAux *aux = link_attached(net, l);
        if (aux) { /* the members crossing it, in S with their aggregate */
            double level = s_level(net, flow_s_index(net, net->groups[aux->attach].pseudo, links_n_flows));
            used += aux->gweight * level;
            if (level > top) top = level;
        }
        int saturated = used >= link_capacity(net, l) * (1 - eps);
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
            if (entry_s_index(net, &link->entries[j], *n_flows) >= 0) continue;
            if (recompute_add(net, (int)link->entries[j].flow, epoch, n_flows, n_links)) return HS_E_NOMEM;
            joined++;
        }
    }
    return joined;
}

/* The attached links outside T that a group's new level would overfill join T (their
 * flows stay fixed; the filling then says whether they limit the members). Returns how
 * many joined (< 0 on error). */
static int recompute_room(Network *net, unsigned epoch, int *n_flows, int *n_links)
{
    int joined = 0;
    if (net->s_groups == 0) return 0;
    for (int i = 0; i < *n_flows; i++) {
        const NetFlow *p = &net->flows[net->comp_flows[i]];
        if (p->state != FLOW_GROUP) continue;
        const NetGroup *g = &net->groups[flow_group(net, net->comp_flows[i])];
        double level = s_level(net, i);
        if (!(level > g->level)) continue;
        /* the heap's nodes with room below the level: a subtree at its root */
        int top = 0;
        if (g->n_room > 0 && g->room[0].room < level && push_int(&net->violated, &net->cap_violated, top++, 0))
            return -1;
        while (top > 0) {
            int pos = net->violated[--top];
            int l = g->room[pos].link;
            if (!link_in_t(net, l, *n_links)) {
                if (recompute_link(net, l, epoch, n_flows, n_links)) return -1;
                joined++;
            }
            for (int c = 2 * pos + 1; c <= 2 * pos + 2 && c < g->n_room; c++)
                if (g->room[c].room < level && push_int(&net->violated, &net->cap_violated, top++, c)) return -1;
        }
    }
    return joined;
}

/* The bottleneck of each flow of S, its only scratch: a flow's share and level are its
 * bottleneck's level (s_level, s_share), not 8 (16 with weights) more bytes a flow of S,
 * which reaches every flow of a D-PSGD graph (four an agent) at a round's first instant,
 * the run's peak. */
static int recompute_scratch(Network *net, int n_flows)
{
    if (n_flows > net->cap_share) {
        /* a quarter more, not twice: these bytes are then part of the run's peak */
        int cap = n_flows + n_flows / 4 + 64;
        int *bottleneck = realloc(net->bottleneck, (size_t)cap * sizeof *bottleneck);
        if (bottleneck == NULL) return HS_E_NOMEM;
        net->bottleneck = bottleneck;
        net->cap_share = cap;
    }
    return HS_OK;
}

/* A recomputation's scratch past this many slots is given back when it ends. */
enum { SCRATCH_KEEP = 1 << 16 };

/* The scratch that only a recomputation reads (S, T, their fill and shares), given back
 * once it has grown past SCRATCH_KEEP: on a D-PSGD graph the round's first instant reaches
 * every flow (four an agent) and every link, some 160 bytes an agent of scratch at a
 * million agents, and no other recomputation of the round reaches 128 flows
 * (docs/results/network.md, "Where a message's time goes (part 2)"). Kept, those bytes
 * sat under everything the run allocates later (its accounting's spans, the engine's
 * queue), which was the peak; given back, the later allocations reuse them. The next
 * recomputation grows its arrays again from empty (their contents are written before they
 * are read: an entry's s_index is checked against this recomputation's S, a link's tpos
 * is set when it joins T). */
static void recompute_scratch_release(Network *net)
{
    if (net->cap_comp_flows <= SCRATCH_KEEP && net->cap_comp_links <= SCRATCH_KEEP && net->fill_cap <= SCRATCH_KEEP &&
        net->cap_share <= SCRATCH_KEEP)
        return;
    net->stats.scratch_released++;
    free(net->comp_flows);
    free(net->comp_links);
    free(net->tfill);
    free(net->tweights);
    free(net->fill);
    free(net->bottleneck);
    free(net->violated);
    net->comp_flows = net->comp_links = net->bottleneck = net->violated = NULL;
    net->tfill = NULL;
    net->tweights = NULL;
    net->fill = NULL;
    net->cap_comp_flows = net->cap_comp_links = net->cap_tfill = net->cap_tweights = 0;
    net->fill_cap = net->fill_n = net->cap_share = net->cap_violated = 0;
}

/* After the new shares: attached links where a flow is now held stop being attached (the
 * level of the members crossing them would move those flows' shares); flows held at a
 * link with a group at the group's level join it; a link holding group_min flows gets a
 * group of the ones that qualify. */
static int recompute_regroup(Network *net, int n_flows, int n_links)
{
    for (int i = 0; i < n_links && net->t_attached > 0; i++) {
        int l = net->comp_links[i];
        if (net->links[l].n_held > 0 && link_attached(net, l) && group_detach_link(net, l)) return HS_E_NOMEM;
    }
    for (int i = 0; i < n_flows; i++) {
        int fi = net->comp_flows[i], b = net->flows[fi].bottleneck;
        if (net->flows[fi].state != FLOW_ACTIVE || flow_group(net, fi) >= 0 || b < 0) continue;
        double level = s_level(net, i);
        int gi = link_group(net, b);
        if (gi >= 0) {
            if (group_eligible(net, fi, b, gi, level) && group_join(net, fi, gi)) return HS_E_NOMEM;
            continue;
        }
        NetLink *link = &net->links[b];
        if (link->n_held < net->group_min || link_aux(net, b) >= 0 || link->group_tried) continue;
        link->group_tried = 1; /* once per recomputation: the scan is O(flows here) */
        /* the flows of S held here froze with fi, at its level: enough of them that may join? */
        int eligible = 0;
        for (int j = 0; j < link->n; j++) {
            int g = link->entries[j].flow, index = entry_s_index(net, &link->entries[j], n_flows);
            eligible += link->entries[j].held && index >= 0 && s_level(net, index) == level &&
                        group_eligible(net, g, b, -1, level);
        }
        if (eligible < net->group_min) continue;
        if ((gi = group_create(net, b, level)) < 0) return HS_E_NOMEM;
        for (int j = net->links[b].n - 1; j >= 0; j--) { /* downwards: a join moves the last entry to j */
            if (j >= net->links[b].n) continue;
            int g = net->links[b].entries[j].flow, index = entry_s_index(net, &net->links[b].entries[j], n_flows);
            if (index < 0 || net->flows[g].state != FLOW_ACTIVE) continue;
            if (group_eligible(net, g, b, gi, s_level(net, index)) && group_join(net, g, gi)) return HS_E_NOMEM;
        }
    }
    return HS_OK;
}

/* New shares after the dirty links changed. S starts as the flows on the dirty links; the
 * rest keep their shares; S is filled again, and grows by the flows its new shares leave
 * without a valid bottleneck, until none is left. Then every flow has a bottleneck (a
 * saturated link on which no flow has a higher level): the max-min fair allocation, which
 * is unique, is reached while S is usually a small part of the connected component.
 * A group's aggregate is one flow of S; when an attached link would limit members, they
 * turn back into flows and the recomputation starts again over the same links. */
static int network_recompute(Network *net)
{
    unsigned epoch;
    int n_links, n_flows;
again:
    epoch = ++net->epoch;
    n_links = n_flows = 0;
    net->s_groups = net->t_attached = net->regroup = 0;
    for (int i = 0; i < net->n_dirty; i++) {
        int l = net->dirty[i];
        NetLink *link = &net->links[l];
        link->dirty = 0;
        for (int j = 0; j < link->n; j++)
            if (entry_s_index(net, &link->entries[j], n_flows) < 0 &&
                recompute_add(net, (int)link->entries[j].flow, epoch, &n_flows, &n_links))
                return HS_E_NOMEM;
        if (link_attached(net, l) && recompute_link(net, l, epoch, &n_flows, &n_links)) return HS_E_NOMEM;
    }
    net->n_dirty = 0;
    for (;;) {
        int conflict;
        if (recompute_scratch(net, n_flows) || recompute_fill(net, epoch, n_flows, n_links, &conflict))
            return HS_E_NOMEM;
        net->stats.fills++;
        if (conflict >= 0) {
            for (int i = 0; i < n_links; i++) link_mark_dirty(net, net->comp_links[i]);
            if (group_detach_link(net, conflict)) return HS_E_NOMEM;
            net->stats.expansions++;
            goto again;
        }
        int joined = recompute_violations(net, epoch, &n_flows, &n_links);
        if (joined == 0) joined = recompute_room(net, epoch, &n_flows, &n_links);
        if (joined < 0) return HS_E_NOMEM;
        if (joined == 0) break;
        net->stats.expansions++;
    }
    net->stats.recomputes++;
    net->stats.flows_recomputed += (uint64_t)n_flows;
    net->stats.links_recomputed += (uint64_t)n_links;
    if ((uint64_t)n_flows > net->stats.largest_s) net->stats.largest_s = (uint64_t)n_flows;
    if ((uint64_t)n_links > net->stats.largest_t) net->stats.largest_t = (uint64_t)n_links;
    int status = HS_OK;
    for (int i = 0; i < n_flows && status == HS_OK; i++) {
        int fi = net->comp_flows[i];
        NetFlow *f = &net->flows[fi];
        double s = s_share(net, i);
        if (f->state == FLOW_GROUP) { /* held at its link, always */
            NetGroup *g = &net->groups[flow_group(net, fi)];
            NetLink *link = &net->links[g->link];
            link->used += s - f->share;
            f->share = link->entries[f->slots[0]].share = s;
            if (s_level(net, i) == g->level) continue;
            group_settle(net, g);
            g->level = s_level(net, i);
            status = group_schedule(net, g);
            continue;
        }
        int held_changed = f->bottleneck != net->bottleneck[i];
        f->bottleneck = net->bottleneck[i];
        if (f->bottleneck >= 0 && net->group_min > 0) {
            const NetLink *b = &net->links[f->bottleneck];
            net->regroup |= b->n_held + 1 >= net->group_min || link_group(net, f->bottleneck) >= 0;
        }
        if (s == f->share && f->heap >= 0 && !held_changed) continue;
        for (int k = 0; k < flow_n_links(net, f); k++) {
            int l = flow_link(net, f, k);
            NetLink *link = &net->links[l];
            LinkEntry *e = &link->entries[flow_slot(net, f, k)];
            int held = f->bottleneck == l;
            link->n_held += held - e->held;
            e->held = held;
            e->share = s;
            if (link->finite) {
                link->used += s - f->share;
                if (link_attached(net, l)) room_update(net, l);
            }
        }
        if (s == f->share && f->heap >= 0) continue;
        flow_settle(net, f);
        f->share = s;
        status = heap_update(net, handle(HANDLE_FLOW, fi), flow_when_by_share(net, f));
    }
    if (status == HS_OK && (net->regroup || net->t_attached > 0)) status = recompute_regroup(net, n_flows, n_links);
    recompute_scratch_release(net);
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
            int64_t h = heap_item_handle(&net->heap[0]);
            int i = handle_index(h), status = HS_OK;
            heap_remove(net, h);
            switch (handle_type(h)) {
            case HANDLE_LINK:
                if (link_flows(net, i) > 0) {
                    link_mark_dirty(net, i);
                    status = link_refresh(net, i);
                } else {
                    net->link_when[i] = INFINITY;
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
                else if (net->flows[i].state == FLOW_GROUP) status = group_fire(net, flow_group(net, i));
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

int network_links_changed(Network *net, double now, int agent)
{
    if (now > net->now) net->now = now;
    int links[2] = {agent, net->opt.n_agents + agent};
    for (int k = 0; k < 2; k++) {
        if (link_flows(net, links[k]) == 0) continue;
        link_mark_dirty(net, links[k]);
        int status = link_refresh(net, links[k]);
        if (status != HS_OK) return status;
    }
    return HS_OK;
}

void network_flush_activity(Network *net, double now)
{
    if (now > net->now) net->now = now;
    for (int a = 0; a < net->n; a++) {
        NetAgent *agent = &net->agents[a];
        if (agent->active_count > 0 && net->now > agent->active_since) {
            if (net->hooks.active) net->hooks.active(net->hooks.ctx, a, agent->active_since, net->now);
            agent->active_since = net->now;
        }
        for (int way = 0; net->ways && way < 2; way++) {
            NetWays *w = &net->ways[a];
            if (w->count[way] > 0 && net->now > w->since[way]) {
                net->hooks.active_way(net->hooks.ctx, a, way, w->since[way], net->now);
                w->since[way] = net->now;
            }
        }
    }
    for (int r = 0; r < net->n_rings; r++)
        if (net->rings[r].used && net->rings[r].closed) ring_report(net, r, net->now);
}

void network_trace_pending(Network *net)
{
    if (net->hooks.traced == NULL) return;
    for (int f = 0; f < net->made_flows; f++) {
        const NetFlow *flow = &net->flows[f];
        if (flow->state == FLOW_LATENCY || flow->state == FLOW_ACTIVE)
            net->hooks.traced(net->hooks.ctx, flow_src(flow), flow_dst(net, flow), net->trace[f].bytes, net->trace[f].created,
                              net->trace[f].activated, INFINITY);
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
    return net->agents[agent].outgoing;
}

double network_active_since(const Network *net, int agent)
{
    const NetAgent *a = &net->agents[agent];
    return a->active_count > 0 ? a->active_since : INFINITY;
}

int network_pending(const Network *net)
{
    return net->live;
}

void network_stats(const Network *net, NetworkStats *out)
{
    *out = net->stats;
}

/* ---- checking (tests) ---- */

static int check_fail(char *why, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static int check_fail(char *why, size_t size, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    if (why && size) vsnprintf(why, size, format, ap);
    va_end(ap);
    return -1;
}

/* A transferring flow's share: its own, or a member's weight x its group's level. */
static double check_share(const Network *net, int fi)
{
    const NetFlow *f = &net->flows[fi];
    int gi = flow_group(net, fi);
    return gi >= 0 ? flow_weight(net, fi) * net->groups[gi].level : f->share;
}

int network_check(const Network *net, double tolerance, char *why, size_t size)
{
    int n_links = net->n_links, status = 0;
    double *sum = calloc((size_t)n_links, sizeof *sum), *top = calloc((size_t)n_links, sizeof *top);
    int *count = calloc((size_t)n_links, sizeof *count);
    if (sum == NULL || top == NULL || count == NULL) {
        status = check_fail(why, size, "out of memory");
        goto done;
    }
    for (int fi = 0; fi < net->made_flows; fi++) {
        const NetFlow *f = &net->flows[fi];
        if (f->state != FLOW_ACTIVE) continue;
        double share = check_share(net, fi), weight = flow_weight(net, fi), level = weight > 0 ? share / weight : 0;
        for (int k = 0; k < flow_n_links(net, f); k++) {
            int l = flow_link(net, f, k);
            sum[l] += share;
            count[l]++;
            if (level > top[l]) top[l] = level;
        }
    }
    if (net->link_users) { /* kept since the first ring: what a count from the flows gives */
        int *users = calloc((size_t)n_links, sizeof *users);
        if (users == NULL) {
            status = check_fail(why, size, "out of memory");
            goto done;
        }
        for (int fi = 0; fi < net->made_flows; fi++) {
            const NetFlow *f = &net->flows[fi];
            if (f->state == FLOW_FREE || f->state == FLOW_GROUP) continue;
            for (int k = 0; k < flow_n_links(net, f); k++) users[flow_link(net, f, k)]++;
        }
        for (int l = 0; l < n_links && status == 0; l++)
            if (users[l] != net->link_users[l])
                status = check_fail(why, size, "link %d: %d flows will cross it, it counts %d", l, users[l],
                                    net->link_users[l]);
        free(users);
        if (status != 0) goto done;
    }
    double scale = 0; /* rounding leaves traces of the size of the largest capacity */
    for (int l = 0; l < n_links; l++)
        if (net->links[l].finite && link_capacity(net, l) > scale) scale = link_capacity(net, l);
    for (int l = 0; l < n_links && status == 0; l++) {
        const NetLink *link = &net->links[l];
        if (link->finite && sum[l] > link_capacity(net, l) + tolerance * scale)
            status = check_fail(why, size, "link %d carries %.17g over its capacity %.17g", l, sum[l], link_capacity(net, l));
        int counted = link_flows(net, l);
        if (link_group(net, l) >= 0) counted += net->groups[link_group(net, l)].count - 1;
        if (count[l] != counted) status = check_fail(why, size, "link %d: %d flows cross it, it counts %d", l, count[l], counted);
        int held = 0;
        for (int j = 0; j < link->n; j++) held += link->entries[j].held;
        if (held != link->n_held) status = check_fail(why, size, "link %d: %d held, it counts %d", l, held, link->n_held);
        if (link_attached(net, l) && held > 0) status = check_fail(why, size, "attached link %d holds a flow", l);
    }
    for (int fi = 0; fi < net->made_flows && status == 0; fi++) {
        const NetFlow *f = &net->flows[fi];
        if (f->state != FLOW_ACTIVE || net->now < f->updated) continue;
        double share = check_share(net, fi), weight = flow_weight(net, fi), level = weight > 0 ? share / weight : 0;
        int bottleneck = 0, finite = 0;
        for (int k = 0; k < flow_n_links(net, f); k++) {
            int l = flow_link(net, f, k);
            const NetLink *link = &net->links[l];
            if (!link->finite) continue;
            finite = 1;
            if (sum[l] >= link_capacity(net, l) - tolerance * scale && level >= top[l] * (1 - tolerance)) bottleneck = 1;
        }
        if (finite && !bottleneck) {
            char links[160] = "";
            for (int k = 0, at = 0; k < flow_n_links(net, f) && at < (int)sizeof links; k++) {
                int l = flow_link(net, f, k);
                at += snprintf(links + at, sizeof links - (size_t)at, " [link %d: %.6g of %.6g, top level %.6g]", l,
                               sum[l], link_capacity(net, l), top[l]);
            }
            status = check_fail(why, size, "flow %d (%d -> %d, share %.17g%s) has no bottleneck:%s", fi, flow_src(f),
                                flow_dst(net, f), share, flow_group(net, fi) >= 0 ? ", a member" : "", links);
        }
        if (!finite && !isinf(share)) status = check_fail(why, size, "flow %d crosses infinite links only", fi);
    }
    for (int gi = 0; gi < net->n_groups && status == 0; gi++) {
        const NetGroup *g = &net->groups[gi];
        if (!g->used) continue;
        const NetFlow *p = &net->flows[g->pseudo];
        double weight = 0;
        int live = 0;
        for (int m = 0; m < g->n_heap + g->n_queue; m++) {
            const MemberItem *item = m < g->n_heap ? &g->heap[m] : &g->queue[(g->head + m - g->n_heap) % g->cap_queue];
            if (!member_live(net, gi, item)) continue;
            live++;
            weight += flow_weight(net, item->flow);
        }
        for (int m = 1; m < g->n_heap; m++)
            if (member_less(&g->heap[m], &g->heap[(m - 1) / 2])) status = check_fail(why, size, "group %d: heap order", gi);
        for (int m = 1; m < g->n_queue; m++)
            if (member_less(&g->queue[(g->head + m) % g->cap_queue], &g->queue[(g->head + m - 1) % g->cap_queue]))
                status = check_fail(why, size, "group %d: queue order", gi);
        if (live != g->count) status = check_fail(why, size, "group %d: %d members, it counts %d", gi, live, g->count);
        if (g->count == 0 || p->state != FLOW_GROUP || flow_group(net, g->pseudo) != gi || link_group(net, g->link) != gi ||
            fabs(weight - flow_weight(net, g->pseudo)) > 1e-9 * weight)
            status = check_fail(why, size, "group %d: aggregate (%d members, weight %.17g, sum %.17g)", gi, g->count,
                                flow_weight(net, g->pseudo), weight);
        for (int r = 0; r < g->n_room && status == 0; r++) {
            int l = g->room[r].link;
            const LinkAux *aux = link_attached(net, l);
            if (aux == NULL || aux->attach != gi || aux->hpos != r || g->room[r].room != room_of(net, l))
                status = check_fail(why, size, "group %d: room entry %d (link %d)", gi, r, l);
            else if (g->room[r].room < g->level * (1 - tolerance) - tolerance * scale / aux->gweight)
                status = check_fail(why, size, "group %d: link %d has room %.17g below the level %.17g", gi, l,
                                    g->room[r].room, g->level);
            if (r > 0 && g->room[r].room < g->room[(r - 1) / 2].room) status = check_fail(why, size, "group %d: room order", gi);
        }
        /* a link out of the heap: its room at least its bucket's floor, which is above every
         * level the group can take (its link's capacity over its members' weight) */
        int deferred = 0;
        double bound = link_capacity(net, g->link) / (g->weight + g->weight_error);
        for (int b = 0; g->bucket && b < ROOM_BUCKETS && status == 0; b++) {
            for (int i = 0; i < g->bucket[b].n && status == 0; i++) {
                DeferItem item = g->bucket[b].items[i];
                const LinkAux *aux = link_attached(net, item.link);
                deferred++;
                if (aux == NULL || aux != &net->aux[item.aux] || aux->attach != gi || aux->hpos != -2 - i ||
                    aux->bucket != b || b < g->bucket_low)
                    status = check_fail(why, size, "group %d: bucket %d entry %d (link %d)", gi, b, i, item.link);
                else if (room_of(net, item.link) < room_bucket_floor(b) || !(room_bucket_floor(b) > bound) ||
                         !(room_bucket_floor(b) > g->level))
                    status = check_fail(why, size, "group %d: link %d out of the heap with room %.17g (floor %.17g), bound %.17g, level %.17g",
                                        gi, item.link, room_of(net, item.link), room_bucket_floor(b), bound, g->level);
            }
        }
        if (status == 0 && deferred != g->n_deferred)
            status = check_fail(why, size, "group %d: %d links in buckets, it counts %d", gi, deferred, g->n_deferred);
    }
    for (int l = 0; l < n_links && status == 0; l++) {
        const LinkAux *aux = link_attached(net, l);
        if (aux == NULL) continue;
        double gweight = 0;
        for (int m = 0; m < aux->n_members; m++) {
            int fi = aux->members ? aux->members[m] : aux->one[m];
            const NetFlow *f = &net->flows[fi];
            gweight += flow_weight(net, fi);
            int found = 0;
            for (int k = 0; k < flow_n_links(net, f); k++) found |= flow_link(net, f, k) == l && flow_slot(net, f, k) == m;
            if (flow_group(net, fi) != aux->attach || !found) status = check_fail(why, size, "link %d: member %d", l, m);
        }
        if (fabs(gweight - aux->gweight) > 1e-9 * gweight)
            status = check_fail(why, size, "link %d: members' weight %.17g, it counts %.17g", l, gweight, aux->gweight);
        if (aux->hpos == -1) status = check_fail(why, size, "link %d: attached, in neither the room heap nor a bucket", l);
    }
done:
    free(sum);
    free(top);
    free(count);
    return status;
}

Network *network_create(const NetworkOptions *options, const NetworkHooks *hooks)
{
    /* a flow's bottleneck has 29 bits (FLOW_REF_BITS): 134 M agents at most */
    if (options->n_agents < 0 || options->n_agents > (FLOW_REF_MAX - 1) / 2) return NULL;
    Network *net = calloc(1, sizeof *net);
    if (net == NULL) return NULL;
    for (int tier = 0; tier < ENTRY_TIERS; tier++) hs_chunks_init(&net->blocks[tier], (2u << tier) * sizeof(LinkEntry), 1024);
    net->opt = *options;
    net->hooks = *hooks;
    int n = options->n_agents;
    net->n = n;
    net->n_links = 2 * n + (isfinite(options->backbone) ? 1 : 0);
    net->links = hs_huge_calloc((size_t)net->n_links, sizeof *net->links);
    net->agents = hs_huge_calloc((size_t)n, sizeof *net->agents);
    net->dirty = malloc((size_t)net->n_links * sizeof *net->dirty);
    if (hooks->active_way && (net->ways = calloc((size_t)n, sizeof *net->ways)) == NULL) {
        network_free(net);
        return NULL;
    }
    net->free_flow = -1;
    if (options->latency_at) {
        net->latency_at = options->latency_at;
        net->latency_stride = options->latency_stride;
    } else if ((net->latency = malloc((size_t)n * sizeof *net->latency)) == NULL) {
        network_free(net);
        return NULL;
    }
    /* capacities that change (opt.capacity) are the network's own; constant ones are read in
     * place when the caller has records (uplink_at) */
    if (options->uplink_at && options->capacity == NULL) {
        net->uplink_at = options->uplink_at;
        net->downlink_at = options->downlink_at;
        net->link_stride = options->link_stride;
    } else if ((net->capacity = malloc((size_t)net->n_links * sizeof *net->capacity)) == NULL) {
        network_free(net);
        return NULL;
    }
    if (options->uplink_fifo) {
        net->queue_head = malloc((size_t)n * sizeof *net->queue_head);
        net->queue_tail = malloc((size_t)n * sizeof *net->queue_tail);
        net->sending = calloc((size_t)n, sizeof *net->sending);
    }
    if (!net->links || !net->agents || !net->dirty ||
        (options->uplink_fifo && (!net->queue_head || !net->queue_tail || !net->sending))) {
        network_free(net);
        return NULL;
    }
    for (int a = 0; a < n; a++) {
        if (net->latency) net->latency[a] = options->latency[a];
        if (net->capacity) {
            net->capacity[link_up(net, a)] = options->uplink[a];
            net->capacity[link_down(net, a)] = options->downlink[a];
        }
        if (options->uplink_fifo) net->queue_head[a] = net->queue_tail[a] = -1;
    }
    if (isfinite(options->backbone) && net->capacity) net->capacity[2 * n] = options->backbone;
    for (int l = 0; l < net->n_links; l++) net->links[l].finite = link_capacity(net, l) < INFINITY;
    net->group_min = options->group_min > 0 ? options->group_min : options->group_min < 0 ? 0 : NETWORK_GROUP_MIN;
    net->free_group = net->free_aux = -1;
    if (options->capacity) {
        net->link_heap = malloc((size_t)net->n_links * sizeof *net->link_heap);
        net->link_when = malloc((size_t)net->n_links * sizeof *net->link_when);
        if (!net->link_heap || !net->link_when) {
            network_free(net);
            return NULL;
        }
        for (int l = 0; l < net->n_links; l++) {
            net->link_heap[l] = -1;
            net->link_when[l] = INFINITY;
        }
    }
    net->opt.uplink = net->opt.downlink = net->opt.latency = NULL;
    net->opt.latency_at = net->opt.uplink_at = net->opt.downlink_at = NULL;
    return net;
}

void network_free(Network *net)
{
    if (net == NULL) return;
    for (int l = 0; net->links && l < net->n_links; l++)
        if (link_cap(&net->links[l]) > 0 && entry_tier(link_cap(&net->links[l])) < 0)
            free(net->links[l].entries); /* else a block of a chunk (or none) */
    for (int tier = 0; tier < ENTRY_TIERS; tier++) hs_chunks_free(&net->blocks[tier]);
    for (int r = 0; r < net->n_rings; r++) {
        free(net->rings[r].members);
        free(net->rings[r].lat);
        free(net->rings[r].rate);
    }
    free(net->links);
    for (int g = 0; g < net->n_groups; g++) {
        free(net->groups[g].queue);
        free(net->groups[g].heap);
        free(net->groups[g].room);
        for (int b = 0; net->groups[g].bucket && b < ROOM_BUCKETS; b++) free(net->groups[g].bucket[b].items);
        free(net->groups[g].bucket);
        free(net->groups[g].tlist);
    }
    free(net->groups);
    for (int a = 0; a < net->cap_aux; a++) free(net->aux[a].members);
    free(net->aux);
    free(net->agents);
    free(net->latency);
    free(net->capacity);
    free(net->ways);
    free(net->flows);
    free(net->s_index);
    free(net->trace);
    free(net->member);
    free(net->hop_ring);
    free(net->backbone_slot);
    free(net->weight);
    free(net->rings);
    free(net->link_ring);
    free(net->link_users);
    free(net->link_aux);
    free(net->queue_head);
    free(net->queue_tail);
    free(net->sending);
    free(net->heap);
    free(net->dirty);
    free(net->comp_links);
    free(net->tfill);
    free(net->tweights);
    free(net->link_heap);
    free(net->link_when);
    free(net->comp_flows);
    free(net->violated);
    free(net->fill);
    free(net->bottleneck);
    free(net);
}
