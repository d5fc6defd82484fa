/* sink.c — the row tables of sink.h at run time (one column descriptor per list entry),
 * the accessors generic code reads records with, the names of the enumerations as they
 * appear in the database, and the sink that keeps nothing. */
#include "sim/kernel/sink.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* ---- column descriptors, expanded from the lists ---- */

#define SINK_TYPEID_INT SINK_INT
#define SINK_TYPEID_INT64 SINK_INT64
#define SINK_TYPEID_ID SINK_ID
#define SINK_TYPEID_SEED SINK_SEED
#define SINK_TYPEID_REAL SINK_REAL
#define SINK_TYPEID_TEXT SINK_TEXT
#define SINK_TYPEID_ROLE SINK_ROLE
#define SINK_TYPEID_STATUS SINK_STATUS
#define SINK_TYPEID_ACTIVITY SINK_ACTIVITY
#define SINK_TYPEID_FLAG SINK_FLAG
#define SINK_TYPEID_REAL_IF(flag) SINK_REAL
/* an alias has its member's type */
#define SINK_TYPEID_ALIAS(member)                                                                   \
    _Generic(((SINK_S *)0)->member, int: SINK_INT, int64_t: SINK_INT64, uint64_t: SINK_SEED,         \
             double: SINK_REAL, const char *: SINK_TEXT)

/* offsetof the member in SINK_S (defined around each table below) */
#define SINK_OFFSET_INT(name) offsetof(SINK_S, name)
#define SINK_OFFSET_INT64(name) offsetof(SINK_S, name)
#define SINK_OFFSET_ID(name) offsetof(SINK_S, name)
#define SINK_OFFSET_SEED(name) offsetof(SINK_S, name)
#define SINK_OFFSET_REAL(name) offsetof(SINK_S, name)
#define SINK_OFFSET_TEXT(name) offsetof(SINK_S, name)
#define SINK_OFFSET_ROLE(name) offsetof(SINK_S, name)
#define SINK_OFFSET_STATUS(name) offsetof(SINK_S, name)
#define SINK_OFFSET_ACTIVITY(name) offsetof(SINK_S, name)
#define SINK_OFFSET_FLAG(name) offsetof(SINK_S, name)
#define SINK_OFFSET_REAL_IF(flag) SINK_OFFSET_REAL
#define SINK_OFFSET_ALIAS(member) offsetof(SINK_S, member) SINK_EAT
#define SINK_EAT(name)

#define SINK_GATE_INT -1
#define SINK_GATE_INT64 -1
#define SINK_GATE_ID -1
#define SINK_GATE_SEED -1
#define SINK_GATE_REAL -1
#define SINK_GATE_TEXT -1
#define SINK_GATE_ROLE -1
#define SINK_GATE_STATUS -1
#define SINK_GATE_ACTIVITY -1
#define SINK_GATE_FLAG -1
#define SINK_GATE_REAL_IF(flag) (int)offsetof(SINK_S, flag)
#define SINK_GATE_ALIAS(member) -1

#define SINK_ISALIAS_INT 0
#define SINK_ISALIAS_INT64 0
#define SINK_ISALIAS_ID 0
#define SINK_ISALIAS_SEED 0
#define SINK_ISALIAS_REAL 0
#define SINK_ISALIAS_TEXT 0
#define SINK_ISALIAS_ROLE 0
#define SINK_ISALIAS_STATUS 0
#define SINK_ISALIAS_ACTIVITY 0
#define SINK_ISALIAS_FLAG 0
#define SINK_ISALIAS_REAL_IF(flag) 0
#define SINK_ISALIAS_ALIAS(member) 1

#define SINK_COLUMN_ROW(part, type, name, unit, flags, doc)                                          \
    {#name, SINK_TYPEID_##type, SINK_PART_##part, SINK_OFFSET_##type(name), SINK_GATE_##type,        \
     SINK_ISALIAS_##type, flags, unit, doc},

/* runs: the part decides the struct; the lists of runs use the plain types only */
#define SINK_RUN_OFFSET_INFO(name) offsetof(SinkRunInfo, name)
#define SINK_RUN_OFFSET_END(name) offsetof(SinkRunEnd, name)
#define SINK_RUN_OFFSET_STORE(name) 0
#define SINK_COLUMN_RUN(part, type, name, unit, flags, doc)                                          \
    {#name, SINK_TYPEID_##type, SINK_PART_##part, SINK_RUN_OFFSET_##part(name), -1, 0, flags, unit, doc},

static const SinkColumn run_columns[] = { SINK_RUN_COLUMNS(SINK_COLUMN_RUN) };
#define SINK_S SinkAgent
static const SinkColumn agent_columns[] = { SINK_AGENT_COLUMNS(SINK_COLUMN_ROW) };
#undef SINK_S
#define SINK_S SinkRound
static const SinkColumn round_columns[] = { SINK_ROUND_COLUMNS(SINK_COLUMN_ROW) };
#undef SINK_S
#define SINK_S SinkAgentRound
static const SinkColumn agent_round_columns[] = { SINK_AGENT_ROUND_COLUMNS(SINK_COLUMN_ROW) };
#undef SINK_S
#define SINK_S SinkPairing
static const SinkColumn pairing_columns[] = { SINK_PAIRING_COLUMNS(SINK_COLUMN_ROW) };
#undef SINK_S
#define SINK_S SinkMetric
static const SinkColumn metric_columns[] = { SINK_METRIC_COLUMNS(SINK_COLUMN_ROW) };
#undef SINK_S
#define SINK_S SinkActivity
static const SinkColumn activity_columns[] = { SINK_ACTIVITY_COLUMNS(SINK_COLUMN_ROW) };
#undef SINK_S
#define SINK_S SinkParam
static const SinkColumn param_columns[] = { SINK_PARAM_COLUMNS(SINK_COLUMN_ROW) };
#undef SINK_S

#define SINK_COUNT_OF(a) (int)(sizeof a / sizeof a[0])

const SinkTable sink_tables[SINK_RECORD_COUNT] = {
    [SINK_RECORD_RUN] = {"runs", "run", 1, run_columns, SINK_COUNT_OF(run_columns),
                         "one row per run: what ran, how it ended"},
    [SINK_RECORD_AGENT] = {"agents", "agent", 1, agent_columns, SINK_COUNT_OF(agent_columns),
                           "one row per agent of a run, as drawn at its start"},
    [SINK_RECORD_ROUND] = {"rounds", "round", 1, round_columns, SINK_COUNT_OF(round_columns),
                           "one row per round of a run"},
    [SINK_RECORD_AGENT_ROUND] = {"agent_rounds", "agent_round", 1, agent_round_columns,
                                 SINK_COUNT_OF(agent_round_columns),
                                 "one row per agent and round: where its time went"},
    [SINK_RECORD_PAIRING] = {"pairings", "pairing", 1, pairing_columns, SINK_COUNT_OF(pairing_columns),
                             "one row per ComDML pair (slow agent offloading to a fast one) and round"},
    [SINK_RECORD_METRIC] = {"metrics", "metric", 1, metric_columns, SINK_COUNT_OF(metric_columns),
                            "one row per evaluation of a model"},
    [SINK_RECORD_ACTIVITY] = {"activity", "activity", 0, activity_columns, SINK_COUNT_OF(activity_columns),
                              "one row per computation or message (reported to test sinks only)"},
    [SINK_RECORD_PARAM] = {"run_params", "param", 1, param_columns, SINK_COUNT_OF(param_columns),
                           "one row per resolved scenario key of a run, swept values marked"},
};

/* ---- reading records through the descriptors ---- */

static const void *member(const SinkColumn *c, const void *record)
{
    return (const char *)record + c->offset;
}

int64_t sink_column_int(const SinkColumn *c, const void *record)
{
    const void *p = member(c, record);
    switch (c->type) {
    case SINK_INT: case SINK_FLAG: { int v; memcpy(&v, p, sizeof v); return v; }
    case SINK_INT64: case SINK_ID: { int64_t v; memcpy(&v, p, sizeof v); return v; }
    case SINK_SEED: { uint64_t v; memcpy(&v, p, sizeof v); return (int64_t)v; }
    case SINK_ROLE: { SinkRole v; memcpy(&v, p, sizeof v); return (int64_t)v; }
    case SINK_STATUS: { SinkStatus v; memcpy(&v, p, sizeof v); return (int64_t)v; }
    case SINK_ACTIVITY: { SinkActivityKind v; memcpy(&v, p, sizeof v); return (int64_t)v; }
    default: return 0;
    }
}

double sink_column_real(const SinkColumn *c, const void *record)
{
    double v = NAN;
    if (c->type == SINK_REAL) memcpy(&v, member(c, record), sizeof v);
    return v;
}

const char *sink_column_text(const SinkColumn *c, const void *record)
{
    const char *v = NULL;
    if (c->type == SINK_TEXT) memcpy(&v, member(c, record), sizeof v);
    return v;
}

void sink_column_set_int(const SinkColumn *c, void *record, int64_t value)
{
    void *p = (char *)record + c->offset;
    switch (c->type) {
    case SINK_INT: case SINK_FLAG: { int v = (int)value; memcpy(p, &v, sizeof v); break; }
    case SINK_INT64: case SINK_ID: memcpy(p, &value, sizeof value); break;
    case SINK_SEED: { uint64_t v = (uint64_t)value; memcpy(p, &v, sizeof v); break; }
    case SINK_ROLE: { SinkRole v = (SinkRole)value; memcpy(p, &v, sizeof v); break; }
    case SINK_STATUS: { SinkStatus v = (SinkStatus)value; memcpy(p, &v, sizeof v); break; }
    case SINK_ACTIVITY: { SinkActivityKind v = (SinkActivityKind)value; memcpy(p, &v, sizeof v); break; }
    default: break;
    }
}

void sink_column_set_real(const SinkColumn *c, void *record, double value)
{
    if (c->type == SINK_REAL) memcpy((char *)record + c->offset, &value, sizeof value);
}

void sink_column_set_text(const SinkColumn *c, void *record, const char *value)
{
    if (c->type == SINK_TEXT) memcpy((char *)record + c->offset, &value, sizeof value);
}

const char *sink_type_enum_name(SinkType type, int value)
{
    switch (type) {
    case SINK_ROLE: return sink_role_name((SinkRole)value);
    case SINK_STATUS: return sink_status_name((SinkStatus)value);
    case SINK_ACTIVITY: return value == SINK_ACTIVITY_MESSAGE ? "message" : "compute";
    default: return NULL;
    }
}

int sink_type_enum_count(SinkType type)
{
    switch (type) {
    case SINK_ROLE: return SINK_ROLE_COUNT;
    case SINK_STATUS: return SINK_STATUS_COUNT;
    case SINK_ACTIVITY: return SINK_ACTIVITY_COUNT;
    default: return 0;
    }
}

const char *sink_column_enum_name(const SinkColumn *c, const void *record)
{
    return sink_type_enum_name(c->type, (int)sink_column_int(c, record));
}

int sink_column_is_null(const SinkColumn *c, const void *record)
{
    if (c->part == SINK_PART_STORE || c->type == SINK_FLAG) return 1;
    if (c->gate >= 0) {
        int on;
        memcpy(&on, (const char *)record + c->gate, sizeof on);
        if (!on) return 1;
    }
    switch (c->type) {
    case SINK_REAL: return isnan(sink_column_real(c, record));
    case SINK_TEXT: return sink_column_text(c, record) == NULL;
    case SINK_ID: return sink_column_int(c, record) == 0;
    case SINK_INT: return (c->flags & SINK_NEG_NULL) && sink_column_int(c, record) < 0;
    default: return 0;
    }
}

/* ---- the sink that keeps nothing ---- */

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
                                sink_discard_pairing, sink_discard_metric, sink_discard_end, NULL, NULL, NULL};
    return (Sink){&ops, NULL};
}

/* ---- passing a call on to a wrapped sink (the first member of ctx) ---- */

int sink_pass_agents(void *ctx, int64_t run_id, const SinkAgent *agents, int count)
{
    const Sink *inner = ctx;
    return inner->ops->agents(inner->ctx, run_id, agents, count);
}

int sink_pass_round(void *ctx, int64_t run_id, const SinkRound *round)
{
    const Sink *inner = ctx;
    return inner->ops->round(inner->ctx, run_id, round);
}

int sink_pass_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows, int count)
{
    const Sink *inner = ctx;
    return inner->ops->agent_rounds(inner->ctx, run_id, rows, count);
}

int sink_pass_pairing(void *ctx, int64_t run_id, const SinkPairing *pairing)
{
    const Sink *inner = ctx;
    return inner->ops->pairing(inner->ctx, run_id, pairing);
}

int sink_pass_metric(void *ctx, int64_t run_id, const SinkMetric *metric)
{
    const Sink *inner = ctx;
    return inner->ops->metric(inner->ctx, run_id, metric);
}

int sink_pass_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    const Sink *inner = ctx;
    return inner->ops->run_end(inner->ctx, run_id, end);
}

int sink_pass_activity(void *ctx, int64_t run_id, const SinkActivity *activity)
{
    const Sink *inner = ctx;
    return inner->ops->activity ? inner->ops->activity(inner->ctx, run_id, activity) : 0;
}

int sink_pass_params(void *ctx, int64_t run_id, const SinkParam *rows, int count)
{
    const Sink *inner = ctx;
    return inner->ops->params ? inner->ops->params(inner->ctx, run_id, rows, count) : 0;
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
