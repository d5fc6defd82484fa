/* collective.h — the collectives of the kernel, in one place: a ring all-reduce among
 * members (Collective), a nested partial all-reduce (NestedReduce: rings over nested
 * prefixes of a vector, the pruned agents' averaging), and a ring all-gather
 * (RingGather: the compressed vectors). How a ring all-reduce's bytes travel is the
 * network model's (engine_network.h: fifo's closed form, maxmin's flows of network.h);
 * how its members join and when it starts is here. The all-gather is plain messages
 * (engine_send), timed by the model like any other.
 *
 * Ring all-reduce of B bytes among N members: 2(N-1) steps of B/N bytes per hop, each
 * step as long as its slowest hop; it starts when the last member joins, and a member
 * joins once its queued compute (blocking collectives) and its own sends are done. When
 * it ends, one event (kind, agent -1, data) is scheduled; blocking members' processors
 * wait for it, non-blocking ones (CO2) overlap it with their compute. */
#ifndef SIM_KERNEL_COLLECTIVE_H
#define SIM_KERNEL_COLLECTIVE_H

#include "sim/kernel/engine.h"

/* A ring all-reduce being assembled: members join one by one; when the last joins the
 * engine schedules one event (kind, agent -1, data) at the finishing time. */
typedef struct Collective {
    const int *members;  /* NULL: all agents 0..n-1 in index order (the ring order) */
    int n_members;
    int joined;
    double ready;        /* latest join time so far */
    double bytes;        /* payload per member */
    int blocking;        /* members' processors wait for it (sync); 0 overlaps compute (CO2) */
    int kind;
    int64_t data;
} Collective;

/* Member k of c in ring order. */
static inline int collective_member(const Collective *c, int k)
{
    return c->members ? c->members[k] : k;
}

void engine_collective_begin(Collective *c, const int *members, int n_members, double bytes,
                             int blocking, int kind, int64_t data);
/* Node joins once its queued compute (and sends) are done. */
int engine_collective_join(Engine *e, Collective *c, int node);
/* A synchronous step in one sweep (issue 36): books `steps` computations of `flops` each
 * on node's processor, back to back after its queued work, and joins the blocking
 * collective c when the last ends, without an event per computation. The clocks, the
 * accounting and the ring are the bits of engine_compute's events, each booking the next
 * computation and the last joining from its handler, on these conditions, which the
 * caller keeps: c->blocking; from now until c starts nothing else is booked or sent for
 * the node and no other event of the method needs its computations' ends; and, for
 * steps > 1, engine_records_activity is 0 (the later bookings' activity rows would come
 * early). Why the same bits: a computation starts at max(its processor's free time, now)
 * and the event path books each at the previous one's end, where the two agree; a
 * blocking member joins at max(now, processor free, sends done), which is its last end
 * whenever it is taken; the ring starts at the latest join either way. A run then
 * holds no event per agent-step: it touches the agents in index order, not in the
 * random order of their finishing times. HS_OK or an engine error (engine_compute's). */
int engine_collective_compute_join(Engine *e, Collective *c, int node, double flops, int steps);

/* ---- nested partial all-reduce ----
 * Members hold nested prefixes of one vector: member i holds the prefix of level
 * level[i] in (0, 1] (a larger level holds more), bytes[i] bytes of it. With distinct
 * levels k_1 < ... < k_m among the members, shell l carries the coordinates of level
 * k_l's prefix not in k_{l-1}'s and is a ring all-reduce among the members with level
 * >= k_l. Every coordinate is thus reduced exactly among the members holding it; a
 * member joins only the shells it holds. With one level it is one plain all-reduce.
 * Each shell ends with an event (kind, -1, shell). */
typedef struct NestedReduce {
    int n_shells;
    double *shell_level;   /* (n) the level whose coordinates shell l adds */
    double *shell_bytes;   /* (n) */
    int *order;            /* (n) this reduce's members by level, largest first */
    Collective *shells;    /* (n) */
    int pending;           /* shells not done yet */
    const double *level;   /* (agents) of the current reduce, borrowed */
    struct NestedRank *rank; /* (n) scratch of nested_reduce_begin: no allocation per averaging */
} NestedReduce;

/* For up to n members. HS_OK or HS_E_NOMEM. Free with nested_reduce_free (accepts a
 * zeroed NestedReduce). */
int nested_reduce_init(NestedReduce *r, int n);
void nested_reduce_free(NestedReduce *r);
/* Starts the shells among members (NULL: agents 0..n_members-1); level and bytes are
 * per agent and must outlive the reduce; at most init's n members. HS_OK. */
int nested_reduce_begin(NestedReduce *r, const double *level, const double *bytes, const int *members,
                        int n_members, int blocking, int kind);
/* agent is ready: it joins every shell it holds. */
int nested_reduce_join(Engine *e, NestedReduce *r, int agent);
/* A shell's event arrived: 1 once all of them have. */
int nested_reduce_done(NestedReduce *r);

/* ---- ring all-gather (of compressed vectors: sim/stages/compress.h) ----
 * Members in ring order; each member's block (its compressed vector, of its own size)
 * travels N-1 hops round the ring: a member sends its own block to its successor when it
 * offers it, and forwards every block it receives, except to the block's origin. Every
 * hop is an engine_send (timed by the [network] model like any message, bytes counted in
 * rounds.bytes), so a gather costs (N-1) sum_i bytes_i on the wire; its time is about
 * (N-1) (max_i bytes_i / bandwidth + latency) when blocks are offered together. The
 * gather is complete when every member holds all N-1 other blocks. Then each member
 * decompresses and averages locally, identically (no reduction happens in the network;
 * sparse vectors with different supports do not stay sparse when summed). */
typedef struct RingGather {
    int n_agents;
    int n;               /* members this gather */
    const int *members;  /* NULL: agents 0..n-1 */
    int *position;       /* (n_agents) ring position of an agent, -1 outside */
    double *bytes;       /* (n_agents) block size by position */
    int *received;       /* (n_agents) blocks held by position */
    int complete;        /* members holding every block */
    int kind;            /* event kind of block arrivals: data = origin position */
} RingGather;

int ring_gather_init(RingGather *g, int n_agents, int kind);
void ring_gather_free(RingGather *g);
void ring_gather_begin(RingGather *g, const int *members, int n_members);
/* agent's own block of `bytes` is ready: it goes to the successor. *complete = 1 when
 * that completes the gather (a single member), else 0. Returns the send's status. */
int ring_gather_offer(Engine *e, RingGather *g, int agent, double bytes, int *complete);
/* A block arrived (an event of g->kind): forwards it. *complete = 1 once every member
 * holds every block, else 0. Returns the send's status. */
int ring_gather_arrived(Engine *e, RingGather *g, const Event *ev, int *complete);

#endif
