/* battery.h — batteries checked at the instant they empty ([agents] battery_check =
 * instant, docs/energy.md "Batteries"). Kernel-internal: engine.c calls it.
 *
 * The model: the charge moves at charging - power, where power is power_compute while the
 * agent computes, 0 while it is offline and power_idle otherwise; the joules of its radio
 * (power_tx or power_rx less power_idle while it only communicates, and energy_per_byte)
 * are taken when the round ends, since under maxmin a transfer's intervals are known only then. The
 * computations an agent has booked are known when booked (its processor is FIFO), as are
 * its availability and charging series, so the instant the charge reaches zero is found
 * by walking them from the last checkpoint: a computation being booked that would cross
 * it has the outage cut into the agent's availability before its finishing time is
 * computed (so it pauses there and resumes when the agent is back, as under any outage);
 * a crossing in idle time is an engine event, re-armed whenever the agent books. */
#ifndef SIM_KERNEL_BATTERY_H
#define SIM_KERNEL_BATTERY_H

#include "sim/kernel/engine_internal.h"

/* The node's battery is checked at the instant it empties. */
static inline int battery_instant(const Engine *e, int node)
{
    return e->instant != NULL && engine_profile(e, node)->battery_instant;
}

/* Allocates e->instant when some agent's battery is checked at its instant. HS_E_NOMEM. */
int battery_create(Engine *e);
void battery_free(Engine *e);
/* Takes the node offline from `from` until charging brings it back to resume_charge
 * (never, without charging): the outage cut into its availability, the network told.
 * Sets the clock's battery_back. Both checks use it. HS_OK or an error in the diag. */
int battery_cut(Engine *e, int node, double from);
/* engine_compute's finishing time for an instant node: `duration` seconds of work from
 * `start`, through the outages its charge crossing zero cuts meanwhile. */
int battery_book_compute(Engine *e, int node, double start, double duration, double *finish);
/* The ENGINE_EVENT_BATTERY events queued (engine_play: they alone keep no round going). */
size_t battery_queued(const Engine *e);
/* ENGINE_EVENT_BATTERY: a predicted crossing in idle time (or a walk to go on). */
int battery_event(Engine *e, const Event *ev);
/* The round's end for an instant node: its radio's joules taken, the charge left in
 * row->battery_j (an outage from now if they empty it). `online`: the round's online s. */
int battery_round_end(Engine *e, int node, double online, SinkAgentRound *row);

#endif
