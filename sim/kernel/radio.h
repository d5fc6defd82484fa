/* radio.h — how long each agent's radio transmits and receives in a round, for the
 * powers power_tx and power_rx (docs/energy.md). The engine's busy time unites an agent's
 * computations and transfers in both directions; when an agent's two powers differ, the
 * engine also needs the measure of its sending and of its receiving apart, each outside
 * its computations (computing is charged power_compute alone). Kept only for such agents
 * (radio_create's `split`), since every other agent's comm_j needs the union alone.
 *
 * Spans come as the network reports them: per direction, disjoint and in order under
 * maxmin (network.h's active_way hooks), booked as they go under fifo (sender's uplink;
 * a ring on both directions of every member); closed-form rings come as periodic sets,
 * which never overlap the same direction's spans (a flow on a member's link ends the
 * closed form first), as network_maxmin.c relies on. Computations come in start order
 * (the processor is FIFO). Workload: a few to a few hundred spans per agent and round;
 * each direction is united once at the round's close (sorted, O(n log n)). */
#ifndef SIM_KERNEL_RADIO_H
#define SIM_KERNEL_RADIO_H

#include "sim/kernel/periodic.h"

typedef struct Radio Radio;

/* the directions as network.h numbers them (NETWORK_SENDING, NETWORK_RECEIVING) */
enum { RADIO_TX = 0, RADIO_RX = 1, RADIO_COMPUTE = 2 };

/* split: (n_nodes) 1 for the nodes whose spans are kept (borrowed for the call). NULL
 * when out of memory. Free with radio_free (accepts NULL). */
Radio *radio_create(int n_nodes, const unsigned char *split);
void radio_free(Radio *r);
/* 1 when node's spans are kept. */
int radio_kept(const Radio *r, int node);
/* node's way (RADIO_TX, RADIO_RX or RADIO_COMPUTE) was active on [start, end). HS_OK or
 * HS_E_NOMEM; nothing for a node not kept. */
int radio_span(Radio *r, int node, int way, double start, double end);
/* node's sending or receiving hop of a closed-form ring. HS_OK or HS_E_NOMEM. */
int radio_periodic(Radio *r, int node, int way, const NetworkPeriodic *p);
/* The round [from, to] closes (-inf and inf under fifo, whose rounds count a span whole
 * in the round that booked it, as its busy time does): out[RADIO_TX] and out[RADIO_RX] = the measure within it of
 * the node's sending (receiving) outside its computations. Spans reaching past `to` are
 * kept for the next round; the rest are forgotten. 0 and 0 for a node not kept. HS_OK or
 * HS_E_NOMEM. */
int radio_close(Radio *r, int node, double from, double to, double out[2]);

#endif
