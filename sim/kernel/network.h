/* network.h — links shared by concurrent flows: max-min fairness by progressive filling.
 * Every agent has an uplink and a downlink of its own bandwidth; a message a->b is a flow
 * over up_a and down_b (and over a shared backbone when there is one). A message first
 * waits its latency (max(latency_a, latency_b), once per message, using no bandwidth),
 * then transfers at its share: the max-min fair allocation of every link among the flows
 * transferring on it (weighted, under LV08). Shares are recomputed at every flow start
 * and end, and at every capacity change, starting from the flows on the changed links and
 * reaching further only while the new shares leave another flow without a valid
 * bottleneck (in principle the whole connected component; in practice a few links).
 * SimGrid's CM02 model with factors 1, no TCP window bound and no cross traffic computes
 * the same allocation (tests/oracle/).
 *
 * Many flows on one link (a fan-in to a server, a fan-out from it, a shared backbone):
 * once NETWORK_GROUP_MIN flows are held at a link, those whose other links do not limit
 * them share one clock of bytes per unit of weight (processor sharing with virtual time),
 * so a start or an end there costs O(log n), not O(n): 100,000 uploads into one server
 * play in about a second. Below that count every flow is settled one by one, bit for bit
 * as before groups existed; with a group, finish times differ from that arithmetic by
 * rounding only: the grouped ones stay within 1e-12 relative of the exact allocation
 * (3e-14 at 3,000 flows on a link, 2e-13 at 10,000), the ones settled one by one drift
 * further from it as flows accumulate roundings (1.6e-12, 4.4e-12; tests/check_network,
 * docs/results/network.md).
 *
 * Ring all-reduce (network_ring_start): 2(N-1) steps of bytes/N per hop k -> k+1, each
 * step starting when the slowest hop of the previous one is done. When the ring is alone
 * on its members' links (no other flow on them when it starts, no backbone, constant
 * capacities), every hop runs at min(up_k, down_k+1) by itself, so a step lasts
 * max_k(latency_k + chunk / bandwidth_k) and the ring 2(N-1) such steps: the closed form,
 * O(N). A flow that later touches a member's link turns the ring into explicit hop flows
 * from that moment on (each in progress where the closed form had it). Otherwise, the
 * ring is played step by step as flows.
 *
 * Accounting: an agent is active (comm) while at least one message it sends or receives
 * is transferring (its latency excluded); the hooks report those intervals.
 *
 * The caller owns the clock: every call passes `now`, which never decreases. The module
 * reports through hooks; it never reads the wall clock. Workload: up to ~1e6 flows alive,
 * a few links each, up to ~1e6 of them on one link. */
#ifndef SIM_NETWORK_H
#define SIM_NETWORK_H

#include "sim/kernel/periodic.h"

#include <stddef.h>
#include <stdint.h>

typedef struct Network Network;

/* What the caller gets back when a message or a ring finishes. */
typedef struct NetworkPayload {
    int32_t kind;
    int32_t agent;
    int64_t data;
} NetworkPayload;

typedef struct NetworkHooks {
    void *ctx;
    /* a message arrived or a ring finished, at time t */
    void (*done)(void *ctx, const NetworkPayload *payload, double t);
    /* agent had at least one own flow transferring throughout [start, end) */
    void (*active)(void *ctx, int agent, double start, double end);
    /* agent's activity in a closed-form ring */
    void (*active_periodic)(void *ctx, int agent, const NetworkPeriodic *p);
    /* optional, per direction (way NETWORK_SENDING or NETWORK_RECEIVING): agent had at
     * least one flow it sends (receives) transferring throughout [start, end), and its
     * sending (receiving) hop of a closed-form ring; the radio's powers (docs/energy.md)
     * need them. NULL: nothing kept per direction. */
    void (*active_way)(void *ctx, int agent, int way, double start, double end);
    void (*active_periodic_way)(void *ctx, int agent, int way, const NetworkPeriodic *p);
    /* every message agent sent has finished (t is now); may be NULL */
    void (*sender_idle)(void *ctx, int agent, double t);
    /* optional, for replays: a message or ring hop from -> to ended; it waited its latency
     * from start, transferred from transfer to end (closed-form hops included) */
    void (*traced)(void *ctx, int from, int to, double bytes, double start, double transfer, double end);
} NetworkHooks;

enum { NETWORK_SENDING = 0, NETWORK_RECEIVING = 1 };

/* Capacity of a link at time t, and the next time it changes (INFINITY: never).
 * Links: 0..n-1 uplinks, n..2n-1 downlinks, 2n the backbone. */
typedef double (*NetworkCapacityFn)(void *ctx, int link, double t, double *next_change);

typedef struct NetworkOptions {
    int n_agents;
    const double *uplink;      /* (n) bytes/s, copied */
    const double *downlink;    /* (n) bytes/s, copied */
    const double *latency;     /* (n) s, copied: a message a->b waits max(latency_a, latency_b) */
    const void *latency_at;    /* optional, instead of latency: agent a's latency is the double
                                * at latency_at + a x latency_stride, read in place (the engine's
                                * node records: 8 bytes an agent not copied); they must stay
                                * unchanged and outlive the network */
    size_t latency_stride;
    const void *uplink_at;     /* optional, instead of uplink and downlink: agent a's are the
                                * doubles at uplink_at (downlink_at) + a x link_stride, read in
                                * place as latency_at (16 bytes an agent not copied); uplink and
                                * downlink are still read when capacity is given (the network
                                * then keeps its own copy, which capacity changes) */
    const void *downlink_at;
    size_t link_stride;
    double backbone;           /* bytes/s; INFINITY: none */
    int uplink_fifo;           /* a sender's messages queue: one transfers at a time */
    double latency_factor;     /* 1; LV08 13.01 */
    double bandwidth_factor;   /* a flow progresses at factor x its share; 1; LV08 0.97 */
    double weight_s;           /* 0: equal shares; LV08 20537: share weight 1 / (latency +
                                * weight_s / bandwidth of each link crossed) */
    NetworkCapacityFn capacity; /* NULL: the bandwidths above, constant */
    void *capacity_ctx;
    int group_min;             /* flows held at one link before they share one clock (see
                                * network.c, "groups"); 0: NETWORK_GROUP_MIN; < 0: never */
} NetworkOptions;

/* Below it, every flow on a shared link is settled one by one at every change of its share
 * (the arithmetic of the first versions, bit for bit); from it on, the flows held at a link
 * progress on one clock (O(log n) per start or end; finish times within 1e-12 relative of
 * the exact allocation). */
#define NETWORK_GROUP_MIN 64

/* NULL when out of memory. Free with network_free (accepts NULL). */
Network *network_create(const NetworkOptions *options, const NetworkHooks *hooks);
void network_free(Network *net);

/* Starts a message of bytes from -> to at now; payload comes back through hooks.done.
 * Returns 0 or HS_E_NOMEM. */
int network_send(Network *net, double now, int from, int to, double bytes, NetworkPayload payload);

/* A message as network_send_ref started it, for network_cut. */
typedef struct NetworkFlowRef {
    int flow;
    uint64_t seq;
} NetworkFlowRef;

/* network_send that also returns the message's reference. */
int network_send_ref(Network *net, double now, int from, int to, double bytes, NetworkPayload payload,
                     NetworkFlowRef *ref);

/* A deadline cuts the message of `bytes` that ref names at now: *sent = the bytes through
 * by now (0 while it waits its turn or its latency); when that is floor_bytes or more it
 * ends now (hooks.done now, its links freed), else it goes on until floor_bytes are
 * through (*sent = floor_bytes; hooks.done then). *found = 0 when it had ended already
 * (every byte went; nothing changes). Returns 0 or HS_E_NOMEM. */
int network_cut(Network *net, double now, NetworkFlowRef ref, double bytes, double floor_bytes, double *sent,
                int *found);

/* Starts a ring all-reduce of bytes per member (members in ring order; n >= 2; the array
 * is copied; NULL: agents 0..n-1). Returns 0 or HS_E_NOMEM. */
int network_ring_start(Network *net, double now, const int *members, int n, double bytes,
                       NetworkPayload payload);

/* *t = the time of the next thing the network does (INFINITY: nothing scheduled).
 * Recomputes shares first when flows changed. Returns 0 or HS_E_NOMEM. */
int network_next_time(Network *net, double *t);
/* Does everything due at t (= network_next_time), calling the hooks. Returns 0 or HS_E_NOMEM. */
int network_advance(Network *net, double t);

/* The agent's links changed capacity from now on, outside their capacity callback's
 * announced next change (a battery ran out): the links in use read it again. HS_OK or
 * HS_E_NOMEM. */
int network_links_changed(Network *net, double now, int agent);

/* Reports the activity up to now of flows still transferring and of closed-form rings
 * (the round ends). */
void network_flush_activity(Network *net, double now);

/* Reports the messages still in latency or transferring to the trace hook, with end =
 * INFINITY (the run ends with them in flight), and the hops of the closed-form rings'
 * steps begun but not traced yet (those done by now with their end, the others INFINITY). */
void network_trace_pending(Network *net);

/* Messages from agent not finished yet (queued, in latency or transferring). */
int network_outgoing(const Network *net, int agent);
/* When the agent's current activity began (a message it sends or receives transferring
 * since then); INFINITY when none transfers now: its next activity begins at a later now. */
double network_active_since(const Network *net, int agent);
/* Messages and rings not finished. */
int network_pending(const Network *net);

/* Counters since creation, for benchmarks. */
typedef struct NetworkStats {
    uint64_t flows_started, flows_finished, recomputes, flows_recomputed, expansions, rings_closed_form,
        rings_stepped;
    uint64_t groups, joined, detached; /* groups formed; flows that joined one; members turned back */
    uint64_t rooms_deferred, rooms_flushed; /* attached links placed out of their group's room heap;
                                             * of them, put in it later (network.c, "rooms out of the heap") */
    /* what the recomputations reached (docs/results/network.md, "dpsgd's flows, third pass"):
     * the links of T summed over them, and the largest S (flows) and T (links) of one; the
     * progressive fillings run (one, and one more each time S grew); the links the
     * violation checks judged and the link entries they scanned */
    uint64_t links_recomputed, largest_s, largest_t, fills, links_checked, entries_checked;
    /* recomputations after which their scratch, grown past 65,536 slots, was given back
     * (network.c, recompute_scratch_release: dpsgd's round-first instant) */
    uint64_t scratch_released;
} NetworkStats;
void network_stats(const Network *net, NetworkStats *out);

/* For tests: checks the allocation from scratch (every link within its capacity, every
 * transferring flow held at a full link where no flow has a higher level, to `tolerance`
 * relative) and the bookkeeping of groups. Returns 0, or -1 with the first failure
 * described in why. O(flows + links). */
int network_check(const Network *net, double tolerance, char *why, size_t size);

#endif
