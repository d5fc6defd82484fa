/* sweep_codec.h — the record stream's field codec (sweep.h says the framing), generated
 * at compile time from the row tables of sim/kernel/sink.h: for every record (and, for
 * runs, each part a producer sends) one encoder and one decoder made of straight-line
 * stores and loads of the members in the table's order. A column added to a list is
 * sent without a change here. Internal to sweep_stream.c.
 *
 * Why generated code and not a loop over the column descriptors: the loop costs a type
 * switch and an accessor call per field, a tenth of a sweep writer's time on short runs
 * (about 250 rows each); here each field is one bounds check and one copy.
 *
 * Encoding of a member by its TYPE: INT, FLAG and the enums (ROLE, STATUS, ACTIVITY) as
 * i32; INT64, ID and SEED (its bit pattern) as i64; REAL and REAL_IF as f64, bit for bit;
 * TEXT as u32 length (the NUL included; CODEC_NULL_STRING for NULL) then the bytes.
 * ALIAS columns have no member and SINK_LOCAL ones are the writer's: neither is sent. */
#ifndef DRIVER_SWEEP_CODEC_H
#define DRIVER_SWEEP_CODEC_H

#include "driver/sweep.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CODEC_NULL_STRING 0xffffffffu

/* ---- writing: appends to a SweepWire (its buffer grows; a failed growth sets failed,
 * after which nothing is appended) ---- */

static int codec_grow(SweepWire *w, size_t more)
{
    if (w->failed) return -1;
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + more) cap *= 2;
    unsigned char *grown = realloc(w->data, cap);
    if (grown == NULL) {
        w->failed = 1;
        return -1;
    }
    w->data = grown;
    w->cap = cap;
    return 0;
}

static inline void codec_put(SweepWire *w, const void *data, size_t len)
{
    if (w->len + len > w->cap && codec_grow(w, len) != 0) return;
    memcpy(w->data + w->len, data, len);
    w->len += len;
}

static inline void codec_i32(SweepWire *w, int32_t v) { codec_put(w, &v, sizeof v); }
static inline void codec_i64(SweepWire *w, int64_t v) { codec_put(w, &v, sizeof v); }
static inline void codec_f64(SweepWire *w, double v) { codec_put(w, &v, sizeof v); }

static inline void codec_str(SweepWire *w, const char *s)
{
    uint32_t len = s == NULL ? CODEC_NULL_STRING : (uint32_t)strlen(s) + 1;
    codec_put(w, &len, sizeof len);
    if (s != NULL) codec_put(w, s, len);
}

/* ---- reading: a message's fields; a short or malformed field sets bad and reads as
 * zero (NULL for a string), so a decoder runs straight through and is checked once ---- */

typedef struct CodecReader {
    const unsigned char *p, *end;
    int bad;
} CodecReader;

static inline void codec_get(CodecReader *r, void *out, size_t len)
{
    if (r->bad || (size_t)(r->end - r->p) < len) {
        r->bad = 1;
        memset(out, 0, len);
        return;
    }
    memcpy(out, r->p, len);
    r->p += len;
}

static inline int32_t codec_get_i32(CodecReader *r) { int32_t v; codec_get(r, &v, sizeof v); return v; }
static inline int64_t codec_get_i64(CodecReader *r) { int64_t v; codec_get(r, &v, sizeof v); return v; }
static inline double codec_get_f64(CodecReader *r) { double v; codec_get(r, &v, sizeof v); return v; }

/* Points into the message: strings are sent with their NUL. */
static inline const char *codec_get_str(CodecReader *r)
{
    uint32_t len;
    codec_get(r, &len, sizeof len);
    if (r->bad || len == CODEC_NULL_STRING) return NULL;
    if (len == 0 || (size_t)(r->end - r->p) < len || r->p[len - 1] != '\0') {
        r->bad = 1;
        return NULL;
    }
    const char *s = (const char *)r->p;
    r->p += len;
    return s;
}

/* ---- one member by its TYPE: CODEC_PUT_<TYPE>(record, member), CODEC_GET_<TYPE>(...) ---- */

#define CODEC_PUT_INT(rec, name) codec_i32(w, (int32_t)(rec)->name);
#define CODEC_PUT_FLAG CODEC_PUT_INT
#define CODEC_PUT_ROLE CODEC_PUT_INT
#define CODEC_PUT_STATUS CODEC_PUT_INT
#define CODEC_PUT_ACTIVITY CODEC_PUT_INT
#define CODEC_PUT_INT64(rec, name) codec_i64(w, (int64_t)(rec)->name);
#define CODEC_PUT_ID CODEC_PUT_INT64
#define CODEC_PUT_SEED CODEC_PUT_INT64
#define CODEC_PUT_REAL(rec, name) codec_f64(w, (rec)->name);
#define CODEC_PUT_REAL_IF(flag) CODEC_PUT_REAL
#define CODEC_PUT_TEXT(rec, name) codec_str(w, (rec)->name);
#define CODEC_PUT_ALIAS(member) CODEC_NONE
#define CODEC_NONE(rec, name)

#define CODEC_GET_INT(rec, name) (rec)->name = codec_get_i32(in);
#define CODEC_GET_FLAG CODEC_GET_INT
#define CODEC_GET_ROLE(rec, name) (rec)->name = (SinkRole)codec_get_i32(in);
#define CODEC_GET_STATUS(rec, name) (rec)->name = (SinkStatus)codec_get_i32(in);
#define CODEC_GET_ACTIVITY(rec, name) (rec)->name = (SinkActivityKind)codec_get_i32(in);
#define CODEC_GET_INT64(rec, name) (rec)->name = codec_get_i64(in);
#define CODEC_GET_ID CODEC_GET_INT64
#define CODEC_GET_SEED(rec, name) (rec)->name = (uint64_t)codec_get_i64(in);
#define CODEC_GET_REAL(rec, name) (rec)->name = codec_get_f64(in);
#define CODEC_GET_REAL_IF(flag) CODEC_GET_REAL
#define CODEC_GET_TEXT(rec, name) (rec)->name = codec_get_str(in);
#define CODEC_GET_ALIAS(member) CODEC_NONE

/* A column is sent unless it is the writer's own (SINK_LOCAL); the condition is a
 * constant, so the compiler keeps only the fields sent. */
#define CODEC_SENT(flags) (!((flags) & SINK_LOCAL))

#define CODEC_PUT_ROW(part, type, name, unit, flags, doc) \
    if (CODEC_SENT(flags)) { CODEC_PUT_##type(r, name) }
#define CODEC_GET_ROW(part, type, name, unit, flags, doc) \
    if (CODEC_SENT(flags)) { CODEC_GET_##type(r, name) }

/* runs: the INFO columns from SinkRunInfo, the END ones from SinkRunEnd */
#define CODEC_PUT_RUN_INFO(part, type, name, unit, flags, doc) CODEC_PUT_IN_##part(INFO, type, name, flags)
#define CODEC_PUT_RUN_END(part, type, name, unit, flags, doc) CODEC_PUT_IN_##part(END, type, name, flags)
#define CODEC_GET_RUN_INFO(part, type, name, unit, flags, doc) CODEC_GET_IN_##part(INFO, type, name, flags)
#define CODEC_GET_RUN_END(part, type, name, unit, flags, doc) CODEC_GET_IN_##part(END, type, name, flags)
#define CODEC_PUT_IN_INFO(want, type, name, flags) CODEC_PUT_WANT_INFO_##want(type, name, flags)
#define CODEC_PUT_IN_END(want, type, name, flags) CODEC_PUT_WANT_END_##want(type, name, flags)
#define CODEC_PUT_IN_STORE(want, type, name, flags)
#define CODEC_PUT_WANT_INFO_INFO(type, name, flags) if (CODEC_SENT(flags)) { CODEC_PUT_##type(r, name) }
#define CODEC_PUT_WANT_INFO_END(type, name, flags)
#define CODEC_PUT_WANT_END_END(type, name, flags) if (CODEC_SENT(flags)) { CODEC_PUT_##type(r, name) }
#define CODEC_PUT_WANT_END_INFO(type, name, flags)
#define CODEC_GET_IN_INFO(want, type, name, flags) CODEC_GET_WANT_INFO_##want(type, name, flags)
#define CODEC_GET_IN_END(want, type, name, flags) CODEC_GET_WANT_END_##want(type, name, flags)
#define CODEC_GET_IN_STORE(want, type, name, flags)
#define CODEC_GET_WANT_INFO_INFO(type, name, flags) if (CODEC_SENT(flags)) { CODEC_GET_##type(r, name) }
#define CODEC_GET_WANT_INFO_END(type, name, flags)
#define CODEC_GET_WANT_END_END(type, name, flags) if (CODEC_SENT(flags)) { CODEC_GET_##type(r, name) }
#define CODEC_GET_WANT_END_INFO(type, name, flags)

/* codec_put_NAME(w, record) and codec_get_NAME(in, record): the decoder zeroes the record
 * first (the writer's own members stay 0 for it to fill); strings point into the
 * message. */
#define CODEC_RECORD(NAME, Struct, LIST, PUT, GET)                          \
    static void codec_put_##NAME(SweepWire *w, const Struct *r) { LIST(PUT) } \
    static void codec_get_##NAME(CodecReader *in, Struct *r)              \
    {                                                                     \
        memset(r, 0, sizeof *r);                                          \
        LIST(GET)                                                         \
    }

CODEC_RECORD(run_info, SinkRunInfo, SINK_RUN_COLUMNS, CODEC_PUT_RUN_INFO, CODEC_GET_RUN_INFO)
CODEC_RECORD(run_end, SinkRunEnd, SINK_RUN_COLUMNS, CODEC_PUT_RUN_END, CODEC_GET_RUN_END)
CODEC_RECORD(agent, SinkAgent, SINK_AGENT_COLUMNS, CODEC_PUT_ROW, CODEC_GET_ROW)
CODEC_RECORD(round, SinkRound, SINK_ROUND_COLUMNS, CODEC_PUT_ROW, CODEC_GET_ROW)
CODEC_RECORD(agent_round, SinkAgentRound, SINK_AGENT_ROUND_COLUMNS, CODEC_PUT_ROW, CODEC_GET_ROW)
CODEC_RECORD(pairing, SinkPairing, SINK_PAIRING_COLUMNS, CODEC_PUT_ROW, CODEC_GET_ROW)
CODEC_RECORD(metric, SinkMetric, SINK_METRIC_COLUMNS, CODEC_PUT_ROW, CODEC_GET_ROW)
CODEC_RECORD(param, SinkParam, SINK_PARAM_COLUMNS, CODEC_PUT_ROW, CODEC_GET_ROW)

#endif
