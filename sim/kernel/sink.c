/* sink.c — names of the enumerations the sink reports, as they appear in the database,
 * and the sink that keeps nothing. */
#include "sim/kernel/sink.h"

#include <stddef.h>

static int sink_discard_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    *run_id = 1;
    return 0;
}
static int sink_discard_agents(void *ctx, int64_t id, const SinkAgent *a, int n) { return 0; }
static int sink_discard_round(void *ctx, int64_t id, const SinkRound *r) { return 0; }
static int sink_discard_agent_rounds(void *ctx, int64_t id, const SinkAgentRound *r, int n) { return 0; }
static int sink_discard_pairing(void *ctx, int64_t id, const SinkPairing *p) { return 0; }
static int sink_discard_metric(void *ctx, int64_t id, const SinkMetric *m) { return 0; }
static int sink_discard_end(void *ctx, int64_t id, const SinkRunEnd *e) { return 0; }

Sink sink_discard(void)
{
    static const SinkOps ops = {sink_discard_begin, sink_discard_agents, sink_discard_round, sink_discard_agent_rounds,
                                sink_discard_pairing, sink_discard_metric, sink_discard_end, NULL};
    return (Sink){&ops, NULL};
}

const char *sink_role_name(SinkRole role)
{
    switch (role) {
    case SINK_ROLE_OFFLOADER: return "offloader";
    case SINK_ROLE_HELPER: return "helper";
    default: return "alone";
    }
}

const char *sink_status_name(SinkStatus status)
{
    switch (status) {
    case SINK_STATUS_RUNNING: return "running";
    case SINK_STATUS_DONE: return "done";
    case SINK_STATUS_DIVERGED: return "diverged";
    case SINK_STATUS_INTERRUPTED: return "interrupted";
    default: return "failed";
    }
}
