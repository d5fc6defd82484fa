/* sink.c — names of the enumerations the sink reports, as they appear in the database. */
#include "sim/sink.h"

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
