/* store_rows.h — the store's per-row code for the per-run records (agents, rounds,
 * agent_rounds, pairings, metrics, run_params), generated at compile time from the row
 * tables of sim/kernel/sink.h: binding a record to an INSERT and copying the strings it
 * borrows. Internal to store.c, which includes it after its bind helpers (bind_int64,
 * bind_double, bind_text, bind_null).
 *
 * Why generated code and not a loop over the column descriptors (which store.c still
 * uses for the runs row, written once per run): the loop spent a type switch and two
 * accessor calls per field, about 190 instructions a bind and an eighth of a sweep
 * writer's time; here a field is one bind call. The storage rules are those of
 * sink_column_is_null (sink.h): NaN, a NULL string, a negative SINK_NEG_NULL int and a
 * gated REAL_IF whose flag is 0 are NULL; enums are stored as their names; a FLAG has
 * no column; an ALIAS column holds its member's value again. The columns are bound in
 * the list's order, the order of store.c's generated INSERT. */
#ifndef ANALYSIS_STORE_ROWS_H
#define ANALYSIS_STORE_ROWS_H

#include "sim/kernel/sink.h"

/* ---- binds: store_bind_NAME(stmt, first, record, rc) binds from parameter first on and
 * returns the next parameter (rc: the first bind failure, as the bind helpers keep it) ---- */

#define STORE_BIND_INT(name, flags)                                                        \
    if (((flags) & SINK_NEG_NULL) && r->name < 0) bind_null(stmt, index++, rc);            \
    else bind_int64(stmt, index++, r->name, rc);
#define STORE_BIND_FLAG(name, flags)
#define STORE_BIND_INT64(name, flags) bind_int64(stmt, index++, r->name, rc);
#define STORE_BIND_ID(name, flags)                                                         \
    if (r->name == 0) bind_null(stmt, index++, rc);                                        \
    else bind_int64(stmt, index++, r->name, rc);
#define STORE_BIND_SEED(name, flags) bind_int64(stmt, index++, (int64_t)r->name, rc);
#define STORE_BIND_REAL(name, flags) bind_double(stmt, index++, r->name, rc);
#define STORE_BIND_REAL_IF(flag) if (!r->flag) bind_null(stmt, index++, rc); else STORE_BIND_REAL
#define STORE_BIND_TEXT(name, flags) bind_text(stmt, index++, r->name, rc);
#define STORE_BIND_ROLE(name, flags) bind_text(stmt, index++, sink_role_name(r->name), rc);
#define STORE_BIND_STATUS(name, flags) bind_text(stmt, index++, sink_status_name(r->name), rc);
#define STORE_BIND_ACTIVITY(name, flags) \
    bind_text(stmt, index++, sink_type_enum_name(SINK_ACTIVITY, (int)r->name), rc);
/* an alias binds its member as the member's own type binds */
#define STORE_BIND_ALIAS(member)                                                           \
    _Generic(r->member, double: bind_double, const char *: bind_text, default: bind_int64)( \
        stmt, index++, r->member, rc);                                                     \
    STORE_EAT
#define STORE_EAT(name, flags)

#define STORE_BIND_ROW(part, type, name, unit, flags, doc) STORE_BIND_##type(name, flags)

#define STORE_BINDER(NAME, Struct, LIST)                                                   \
    static int store_bind_##NAME(sqlite3_stmt *stmt, int index, const Struct *r, int *rc) \
    {                                                                                      \
        LIST(STORE_BIND_ROW)                                                               \
        return index;                                                                      \
    }

STORE_BINDER(agent, SinkAgent, SINK_AGENT_COLUMNS)
STORE_BINDER(round, SinkRound, SINK_ROUND_COLUMNS)
STORE_BINDER(agent_round, SinkAgentRound, SINK_AGENT_ROUND_COLUMNS)
STORE_BINDER(pairing, SinkPairing, SINK_PAIRING_COLUMNS)
STORE_BINDER(metric, SinkMetric, SINK_METRIC_COLUMNS)
STORE_BINDER(param, SinkParam, SINK_PARAM_COLUMNS)

/* ---- the strings of a buffered copy: store_copy_NAME(store, copy) points each string
 * member of copy at a copy made by store_keep_text (HS_E_NOMEM when it fails) ---- */

#define STORE_COPY_TEXT(name) \
    if (r->name != NULL && (r->name = store_keep_text(store, r->name)) == NULL) return HS_E_NOMEM;
#define STORE_COPY_NONE(name)
#define STORE_COPY_INT STORE_COPY_NONE
#define STORE_COPY_FLAG STORE_COPY_NONE
#define STORE_COPY_INT64 STORE_COPY_NONE
#define STORE_COPY_ID STORE_COPY_NONE
#define STORE_COPY_SEED STORE_COPY_NONE
#define STORE_COPY_REAL STORE_COPY_NONE
#define STORE_COPY_REAL_IF(flag) STORE_COPY_NONE
#define STORE_COPY_ROLE STORE_COPY_NONE
#define STORE_COPY_STATUS STORE_COPY_NONE
#define STORE_COPY_ACTIVITY STORE_COPY_NONE
#define STORE_COPY_ALIAS(member) STORE_COPY_NONE

#define STORE_COPY_ROW(part, type, name, unit, flags, doc) STORE_COPY_##type(name)

#define STORE_COPIER(NAME, Struct, LIST)                           \
    static int store_copy_##NAME(Store *store, Struct *r)          \
    {                                                              \
        (void)store;                                               \
        LIST(STORE_COPY_ROW)                                       \
        return HS_OK;                                              \
    }

STORE_COPIER(agent, SinkAgent, SINK_AGENT_COLUMNS)
STORE_COPIER(round, SinkRound, SINK_ROUND_COLUMNS)
STORE_COPIER(agent_round, SinkAgentRound, SINK_AGENT_ROUND_COLUMNS)
STORE_COPIER(pairing, SinkPairing, SINK_PAIRING_COLUMNS)
STORE_COPIER(metric, SinkMetric, SINK_METRIC_COLUMNS)
STORE_COPIER(param, SinkParam, SINK_PARAM_COLUMNS)

#endif
