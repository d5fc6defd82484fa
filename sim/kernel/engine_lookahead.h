/* engine_lookahead.h — what a method may foresee of a node's availability: the same
 * series the engine pauses work by (availability traces, and battery outages as far as
 * they are booked). ComDML's predict = trace reads it (sim/methods/comdml.c); a file of
 * its own so that nothing of the engine's own files changes. */
#ifndef SIM_KERNEL_ENGINE_LOOKAHEAD_H
#define SIM_KERNEL_ENGINE_LOOKAHEAD_H

#include "sim/kernel/engine.h"

/* When `seconds` of work started at `start` on the node would end, pausing while it is
 * offline (start + seconds without an availability series). */
double engine_agent_finish(const Engine *e, int node, double start, double seconds);

#endif
