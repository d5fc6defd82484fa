/* sink.h — how the engine reports what happens in a run, without knowing who listens.
 * analysis/store.c implements it over SQLite; tests plug in sinks of their own.
 * Every callback returns 0 or a negative HS_E_* status; a failing sink fails the run.
 * Records are borrowed for the duration of the call: copy what you keep. */
#ifndef SIM_SINK_H
#define SIM_SINK_H

#include <stddef.h>
#include <stdint.h>

/* ---- row tables ----
 * Every record the sink reports is one list of columns below. From each list come the C
 * struct the engine fills (here), the database table (analysis/store.c: its DDL, the
 * INSERT and its binds, the columns an older file gains when opened), the sweep's record
 * stream (sim/sweep_stream.c), the tests' row dump (tests/test_sink.c) and the database
 * reference. Adding a column is one line in one list, plus the code that fills the
 * field; a new column must be nullable (older files gain it with NULL in their rows).
 *
 *   X(PART, TYPE, NAME, UNIT, FLAGS, DOC)
 * PART   ROW for the per-run tables. runs is two records: INFO (SinkRunInfo, at
 *        run_begin), END (SinkRunEnd, at run_end); STORE columns are filled by the store.
 * TYPE   INT int; INT64 int64_t; ID int64_t, 0 = the database chooses (runs.id);
 *        SEED uint64_t, stored as its int64 bit pattern; REAL double, NaN stored as NULL;
 *        TEXT const char *, NULL stored as NULL; ROLE, STATUS, ACTIVITY the enums below,
 *        stored as their names; FLAG int, a member but no column: the REAL_IF(FLAG)
 *        columns hold values only when it is nonzero (NULL otherwise), so a zeroed record
 *        has none; ALIAS(MEMBER) no member: a second column holding MEMBER's value.
 *        (runs' lists use the plain types only.)
 * NAME   the member and the column.
 * UNIT   SI unit of the number: s, B, B/s, FLOP, FLOP/s, ms; "1" a fraction in [0, 1];
 *        "" a count, an index, a label or a dimensionless figure.
 * FLAGS  SINK_KEY (never NULL: NOT NULL), SINK_NEG_NULL (a negative INT is stored as
 *        NULL), SINK_WALL (measured on the wall clock), SINK_ORIGIN (how or where the run
 *        was started, not what it computed), SINK_LOCAL (known to the writer, not sent by
 *        a sweep's producers), SINK_BLOCK (multi-line text). WALL and ORIGIN columns are
 *        left out of every determinism comparison, BLOCK ones out of one-line dumps. */
enum {
    SINK_KEY = 1u << 0,
    SINK_NEG_NULL = 1u << 1,
    SINK_WALL = 1u << 2,
    SINK_ORIGIN = 1u << 3,
    SINK_LOCAL = 1u << 4,
    SINK_BLOCK = 1u << 5,
};

typedef enum { SINK_ROLE_ALONE = 0, SINK_ROLE_OFFLOADER, SINK_ROLE_HELPER, SINK_ROLE_COUNT } SinkRole;

typedef enum {
    SINK_STATUS_RUNNING = 0, SINK_STATUS_DONE, SINK_STATUS_FAILED,
    SINK_STATUS_DIVERGED, SINK_STATUS_INTERRUPTED, SINK_STATUS_COUNT
} SinkStatus;

/* One computation or message of a maxmin run, for tests that replay the run elsewhere
 * (tests/oracle/: SimGrid). Messages: start = its latency begins, transfer = its first
 * byte moves, end = it arrived; ring all-reduce hops count as messages. */
typedef enum { SINK_ACTIVITY_COMPUTE = 0, SINK_ACTIVITY_MESSAGE = 1, SINK_ACTIVITY_COUNT } SinkActivityKind;

/* runs: one row per run. */
#define SINK_RUN_COLUMNS(X) \
    X(INFO, ID, id, "", SINK_KEY | SINK_LOCAL, "run id; a sweep's runs are numbered in point order") \
    X(INFO, TEXT, name, "", 0, "[run] name") \
    X(INFO, TEXT, scenario, "", SINK_ORIGIN, "path of the scenario file as given") \
    X(INFO, TEXT, method, "", 0, "[run] method") \
    X(INFO, SEED, seed, "", 0, "[run] seed (a seed >= 2^63 reads back as seed - 2^64)") \
    X(INFO, TEXT, mode, "", 0, "train | timing") \
    X(INFO, TEXT, config, "", SINK_BLOCK, "the fully resolved scenario, INI text: reruns the run") \
    X(END, STATUS, status, "", SINK_KEY, "running | done | failed | diverged | interrupted") \
    X(STORE, TEXT, started_at, "", SINK_WALL, "wall-clock start, ISO-8601 UTC") \
    X(STORE, TEXT, finished_at, "", SINK_WALL, "wall-clock end, ISO-8601 UTC") \
    X(END, REAL, wall_s, "s", SINK_WALL, "wall-clock duration") \
    X(END, REAL, sim_time_s, "s", 0, "virtual time at the end of the run") \
    X(END, REAL, final_accuracy, "1", 0, "last test accuracy of the averaged model; NULL when never evaluated") \
    X(END, INT, rounds_done, "", 0, "rounds completed") \
    X(INFO, TEXT, sweep, "", SINK_LOCAL, "sweep id (sw- and 16 hex digits); NULL outside a sweep") \
    X(INFO, TEXT, point, "", SINK_LOCAL, "sweep point label: KEY=VALUE ... seed=N; NULL outside a sweep") \
    X(END, TEXT, message, "", 0, "why the run failed, diverged or was interrupted; NULL when done") \
    X(STORE, TEXT, claimed_by, "", SINK_ORIGIN, "the process that writes the run: HOST PID START (its start in clock ticks since boot)") \
    X(INFO, INT, threads, "", SINK_ORIGIN, "worker threads of train mode's steps (0 in timing mode)") \
    X(INFO, TEXT, version, "", SINK_ORIGIN, "hetsim VERSION (git COMMIT[+modified]) that ran it") \
    X(INFO, TEXT, command, "", SINK_ORIGIN, "the command line that started it") \
    X(INFO, TEXT, scenario_text, "", SINK_ORIGIN | SINK_BLOCK, "the scenario file's text as read") \
    X(INFO, TEXT, overrides, "", SINK_ORIGIN, "--add-group NAME lines, then the --set values (and --timing-only's, --threads'), one per line") \
    X(INFO, TEXT, host, "", SINK_ORIGIN, "host name of the process that simulated it")

/* agents: one row per agent, as drawn at the start of the run. */
#define SINK_AGENT_COLUMNS(X) \
    X(ROW, INT, agent, "", SINK_KEY, "agent index, from 0") \
    X(ROW, TEXT, grp, "", 0, "group: the [agents.NAME] section, 'default' for [agents] itself") \
    X(ROW, REAL, compute, "FLOP/s", 0, "compute speed") \
    X(ROW, ALIAS(uplink), bandwidth, "B/s", 0, "the uplink (the name of the first schema)") \
    X(ROW, REAL, latency, "s", 0, "one-way latency of a message") \
    X(ROW, INT, samples, "", 0, "training samples held") \
    X(ROW, REAL, uplink, "B/s", 0, "uplink bandwidth") \
    X(ROW, REAL, downlink, "B/s", 0, "downlink bandwidth") \
    X(ROW, INT, byzantine, "", 0, "1 if the agent attacks ([byzantine]), else 0")

/* rounds: one row per round. */
#define SINK_ROUND_COLUMNS(X) \
    X(ROW, INT, round, "", SINK_KEY, "round, from 0") \
    X(ROW, REAL, t_start, "s", 0, "virtual time the round began") \
    X(ROW, REAL, t_end, "s", 0, "virtual time the round ended") \
    X(ROW, REAL, idle_s, "s", 0, "idle time in the round, summed over agents") \
    X(ROW, REAL, bytes, "B", 0, "bytes put on the wire in this round") \
    X(ROW, REAL, extra, "", 0, "the method's own figure of the round, NULL when none: what it is per method is in docs/reference/methods.md") \
    X(ROW, REAL, energy_j, "J", 0, "energy the agents drew in the round (docs/energy.md; the run's: SUM over its rounds); NULL when no power is given") \
    X(ROW, INT, lost, "", SINK_NEG_NULL, "message attempts lost in the round ([agents] loss, docs/network.md#unstable-links); NULL when no agent has loss > 0")

/* agent_rounds: one row per agent and round; a round's rows come in agent order, in one
 * call or several (the engine hands them over in batches). */
#define SINK_AGENT_ROUND_COLUMNS(X) \
    X(ROW, INT, round, "", SINK_KEY, "round, from 0") \
    X(ROW, INT, agent, "", SINK_KEY, "agent index") \
    X(ROW, REAL, compute_s, "s", 0, "time computing in the round") \
    X(ROW, REAL, comm_s, "s", 0, "time communicating (not also computing) in the round") \
    X(ROW, REAL, idle_s, "s", 0, "time neither computing nor communicating") \
    X(ROW, ROLE, role, "", 0, "alone | offloader | helper (ComDML's pairing)") \
    X(ROW, REAL, offline_s, "s", 0, "time unavailable (churn) in the round") \
    X(ROW, REAL, compute_j, "J", 0, "energy computing: power_compute x compute_s; NULL when no power is given") \
    X(ROW, REAL, comm_j, "J", 0, "energy communicating and not computing, plus energy_per_byte x bytes sent and received; NULL when no power is given") \
    X(ROW, REAL, idle_j, "J", 0, "energy idle: power_idle x idle_s (offline draws nothing); NULL when no power is given") \
    X(ROW, REAL, battery_j, "J", 0, "charge left in the agent's battery at the round's end; NULL without [agents] battery") \
    X(ROW, INT, lost, "", SINK_NEG_NULL, "attempts of the agent's messages lost in the round; NULL when no agent has loss > 0")

/* pairings: one row per ComDML pair and round. */
#define SINK_PAIRING_COLUMNS(X) \
    X(ROW, INT, round, "", SINK_KEY, "round, from 0") \
    X(ROW, INT, slow, "", 0, "the offloading agent") \
    X(ROW, INT, fast, "", 0, "the helping agent") \
    X(ROW, INT, split, "", 0, "split point: layers 1..split stay on the slow agent") \
    X(ROW, REAL, predicted_s, "s", 0, "the solver's predicted finishing time of the pair") \
    X(ROW, REAL, actual_s, "s", 0, "the finishing time the engine played out") \
    X(ROW, TEXT, solver, "", 0, "exact | ip | greedy") \
    X(ROW, REAL, solve_ms, "ms", SINK_WALL, "wall-clock time the solver took")

/* metrics: one row per evaluation (agent NULL: the averaged model). */
#define SINK_METRIC_COLUMNS(X) \
    X(ROW, REAL, t, "s", 0, "virtual time of the evaluation") \
    X(ROW, INT, round, "", 0, "round, from 0") \
    X(ROW, INT, agent, "", SINK_NEG_NULL, "agent evaluated; NULL (-1 in the record) for the averaged model") \
    X(ROW, REAL, train_loss, "", 0, "training loss; NULL when not measured") \
    X(ROW, REAL, test_loss, "", 0, "test loss; NULL when not measured") \
    X(ROW, REAL, test_accuracy, "1", 0, "test accuracy; NULL when not measured") \
    X(ROW, REAL, bytes_sent, "B", 0, "bytes put on the wire since the run began (cumulative)") \
    X(ROW, FLAG, has_domains, "", 0, "[data] partition = domains: the next two columns hold values") \
    X(ROW, REAL_IF(has_domains), heldout_accuracy, "1", 0, "accuracy on the held-out domains' test images") \
    X(ROW, REAL_IF(has_domains), seen_accuracy, "1", 0, "accuracy on the training domains' test images") \
    X(ROW, FLAG, has_privacy, "", 0, "[privacy] clip = sample | update: epsilon holds a value") \
    X(ROW, REAL_IF(has_privacy), epsilon, "", 0, "(epsilon, delta)-DP epsilon spent so far (inf without noise)")

/* run_params: every resolved key of a run (sim/run_params.h says how a
 * distribution's parameters become rows). */
#define SINK_PARAM_COLUMNS(X) \
    X(ROW, TEXT, section, "", SINK_KEY, "scenario section: run, data, model, method, agents, agents.NAME, ...") \
    X(ROW, TEXT, key, "", SINK_KEY, "key; a distribution KEY also has rows KEY.dist and KEY.PARAMETER") \
    X(ROW, TEXT, value_text, "", 0, "the value as runs.config writes it (SI units)") \
    X(ROW, REAL, value_num, "", 0, "the value as a number in SI units; NULL when it is not a number") \
    X(ROW, TEXT, unit, "", 0, "SI unit of value_num: s, B/s, FLOP/s; '' for a plain number or text") \
    X(ROW, INT, swept, "", SINK_LOCAL, "1 when a [sweep] axis (or repeat, for run.seed) set the value")

/* activity: one computation or message (not stored in the database). */
#define SINK_ACTIVITY_COLUMNS(X) \
    X(ROW, ACTIVITY, kind, "", 0, "compute | message") \
    X(ROW, INT, agent, "", 0, "compute: the agent; message: the sender") \
    X(ROW, INT, to, "", 0, "message: the receiver; compute: -1") \
    X(ROW, REAL, amount, "", 0, "FLOPs (compute) or bytes (message)") \
    X(ROW, REAL, start, "s", 0, "compute begins; message: its latency begins") \
    X(ROW, REAL, transfer, "s", 0, "message: its first byte moves") \
    X(ROW, REAL, end, "s", 0, "it ended or arrived")

/* The members each TYPE declares. */
#define SINK_DECL_INT(name) int name;
#define SINK_DECL_INT64(name) int64_t name;
#define SINK_DECL_ID(name) int64_t name;
#define SINK_DECL_SEED(name) uint64_t name;
#define SINK_DECL_REAL(name) double name;
#define SINK_DECL_TEXT(name) const char *name;
#define SINK_DECL_ROLE(name) SinkRole name;
#define SINK_DECL_STATUS(name) SinkStatus name;
#define SINK_DECL_ACTIVITY(name) SinkActivityKind name;
#define SINK_DECL_FLAG(name) int name;
#define SINK_DECL_REAL_IF(flag) SINK_DECL_REAL
#define SINK_DECL_ALIAS(member) SINK_DECL_NONE
#define SINK_DECL_NONE(name)

#define SINK_DECL_ROW(part, type, name, unit, flags, doc) SINK_DECL_##type(name)
#define SINK_DECL_RUN_INFO(part, type, name, unit, flags, doc) SINK_DECL_INFO_##part(type, name)
#define SINK_DECL_INFO_INFO(type, name) SINK_DECL_##type(name)
#define SINK_DECL_INFO_END(type, name)
#define SINK_DECL_INFO_STORE(type, name)
#define SINK_DECL_RUN_END(part, type, name, unit, flags, doc) SINK_DECL_END_##part(type, name)
#define SINK_DECL_END_INFO(type, name)
#define SINK_DECL_END_END(type, name) SINK_DECL_##type(name)
#define SINK_DECL_END_STORE(type, name)

typedef struct SinkRunInfo { SINK_RUN_COLUMNS(SINK_DECL_RUN_INFO) } SinkRunInfo;
typedef struct SinkRunEnd { SINK_RUN_COLUMNS(SINK_DECL_RUN_END) } SinkRunEnd;
typedef struct SinkAgent { SINK_AGENT_COLUMNS(SINK_DECL_ROW) } SinkAgent;
typedef struct SinkRound { SINK_ROUND_COLUMNS(SINK_DECL_ROW) } SinkRound;
typedef struct SinkAgentRound { SINK_AGENT_ROUND_COLUMNS(SINK_DECL_ROW) } SinkAgentRound;
typedef struct SinkPairing { SINK_PAIRING_COLUMNS(SINK_DECL_ROW) } SinkPairing;
typedef struct SinkMetric { SINK_METRIC_COLUMNS(SINK_DECL_ROW) } SinkMetric;
typedef struct SinkActivity { SINK_ACTIVITY_COLUMNS(SINK_DECL_ROW) } SinkActivity;
typedef struct SinkParam { SINK_PARAM_COLUMNS(SINK_DECL_ROW) } SinkParam;

/* ---- the row tables at run time: what generic code (store, record stream, dumps,
 * docs) iterates ---- */
typedef enum {
    SINK_INT, SINK_INT64, SINK_ID, SINK_SEED, SINK_REAL, SINK_TEXT, SINK_ROLE, SINK_STATUS,
    SINK_ACTIVITY, SINK_FLAG
} SinkType;

typedef enum { SINK_PART_ROW, SINK_PART_INFO, SINK_PART_END, SINK_PART_STORE } SinkPart;

typedef struct SinkColumn {
    const char *name;   /* the column (and the member, except for an alias) */
    SinkType type;      /* an alias has its member's type */
    SinkPart part;
    size_t offset;      /* of the member in its part's struct (0 for STORE) */
    int gate;           /* offset of the FLAG member gating it, -1 when none */
    int alias;          /* 1: a second column of another member (no member, not sent) */
    unsigned flags;
    const char *unit;
    const char *doc;
} SinkColumn;

typedef enum {
    SINK_RECORD_RUN, SINK_RECORD_AGENT, SINK_RECORD_ROUND, SINK_RECORD_AGENT_ROUND,
    SINK_RECORD_PAIRING, SINK_RECORD_METRIC, SINK_RECORD_ACTIVITY, SINK_RECORD_PARAM, SINK_RECORD_COUNT
} SinkRecord;

typedef struct SinkTable {
    const char *table;  /* the database table */
    const char *row;    /* one row's name: the tests' dump lines start with it */
    int stored;         /* 0: reported to sinks, not kept in the database */
    const SinkColumn *columns;
    int n_columns;
    const char *doc;
} SinkTable;

extern const SinkTable sink_tables[SINK_RECORD_COUNT];

/* The descriptor of a column of a table no record carries (a writer's own table, filled
 * by the writer): the same X(PART, TYPE, ...) lists with PART STORE and plain TYPEs. */
#define SINK_COLUMN_OWN(part, type, name, unit, flags, doc) \
    {#name, SINK_##type, SINK_PART_##part, 0, -1, 0, flags, unit, doc},

/* Whether column c of record (a struct of c's part) holds no value: NaN, NULL text, a
 * negative SINK_NEG_NULL, a gated column whose flag is 0; a FLAG is never a column. */
int sink_column_is_null(const SinkColumn *c, const void *record);
/* The member's value (c's type must fit): integers of every integer type and enum widen
 * to int64 (a SEED keeps its bit pattern). */
int64_t sink_column_int(const SinkColumn *c, const void *record);
double sink_column_real(const SinkColumn *c, const void *record);
const char *sink_column_text(const SinkColumn *c, const void *record);
/* Set the member of c in record (the setters for its type). */
void sink_column_set_int(const SinkColumn *c, void *record, int64_t value);
void sink_column_set_real(const SinkColumn *c, void *record, double value);
void sink_column_set_text(const SinkColumn *c, void *record, const char *value);
/* The text an enum column is stored as (its name), NULL for other types. */
const char *sink_column_enum_name(const SinkColumn *c, const void *record);
/* The names an enum type takes, in order; *count of them (0 for other types). */
const char *sink_type_enum_name(SinkType type, int value);
int sink_type_enum_count(SinkType type);

typedef struct SinkOps {
    int (*run_begin)(void *ctx, const SinkRunInfo *info, int64_t *run_id);
    int (*agents)(void *ctx, int64_t run_id, const SinkAgent *agents, int count);
    int (*round)(void *ctx, int64_t run_id, const SinkRound *round);
    int (*agent_rounds)(void *ctx, int64_t run_id, const SinkAgentRound *rows, int count);
    int (*pairing)(void *ctx, int64_t run_id, const SinkPairing *pairing);
    int (*metric)(void *ctx, int64_t run_id, const SinkMetric *metric);
    int (*run_end)(void *ctx, int64_t run_id, const SinkRunEnd *end);
    /* optional (NULL: not wanted) */
    int (*activity)(void *ctx, int64_t run_id, const SinkActivity *activity);
    /* every resolved key of the run, right after run_begin (sim/run_params.h) */
    int (*params)(void *ctx, int64_t run_id, const SinkParam *rows, int count);
    /* after every engine event, with the virtual time now: progress within a round for
     * a person watching (cli/progress.c). Writes no rows and cannot fail; it must be
     * cheap, as it runs once per event. */
    void (*tick)(void *ctx, int64_t run_id, double t);
} SinkOps;

typedef struct Sink {
    const SinkOps *ops;
    void *ctx;
} Sink;

/* A sink that keeps nothing (run id 1), for runs measured rather than recorded. */
Sink sink_discard(void);

/* A sink that wraps another (driver/origin.c's, cli/progress.c's) keeps the wrapped one
 * as the first member of its context; these methods pass a call on to it unchanged, for
 * the methods the wrapper has nothing to add to. activity and params: HS_OK and nothing
 * more when the inner sink has none. */
int sink_pass_agents(void *ctx, int64_t run_id, const SinkAgent *agents, int count);
int sink_pass_round(void *ctx, int64_t run_id, const SinkRound *round);
int sink_pass_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows, int count);
int sink_pass_pairing(void *ctx, int64_t run_id, const SinkPairing *pairing);
int sink_pass_metric(void *ctx, int64_t run_id, const SinkMetric *metric);
int sink_pass_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end);
int sink_pass_activity(void *ctx, int64_t run_id, const SinkActivity *activity);
int sink_pass_params(void *ctx, int64_t run_id, const SinkParam *rows, int count);

const char *sink_role_name(SinkRole role);
const char *sink_status_name(SinkStatus status);

#endif
