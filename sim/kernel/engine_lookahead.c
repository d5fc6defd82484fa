/* engine_lookahead.c — see engine_lookahead.h. */
#include "sim/kernel/engine_lookahead.h"
#include "sim/kernel/engine_internal.h"

double engine_agent_finish(const Engine *e, int node, double start, double seconds)
{
    return engine_finish(e, node, start, seconds);
}
