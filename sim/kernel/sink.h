/* sink.h — how the engine reports what happens in a run, without knowing who listens.
 * analysis/store.c implements it over SQLite; tests plug in sinks of their own.
 * Every callback returns 0 or a negative HS_E_* status; a failing sink fails the run.
 * Records are borrowed for the duration of the call: copy what you keep. */
#ifndef SIM_SINK_H
#define SIM_SINK_H

#include <stdint.h>

typedef struct SinkRunInfo {
    const char *name;     /* [run] name */
    const char *scenario; /* path of the scenario file as given */
    const char *method;
    uint64_t seed;
    const char *mode;     /* "train" | "timing" */
    const char *config;   /* the fully resolved scenario, INI text */
    const char *sweep;    /* sweep id, NULL outside a sweep */
    const char *point;    /* sweep point label, NULL outside a sweep */
} SinkRunInfo;

typedef struct SinkAgent {
    int agent;
    const char *group;  /* "default" for agents of [agents] itself */
    double compute;     /* FLOP/s */
    double uplink;      /* bytes/s */
    double downlink;    /* bytes/s */
    double latency;     /* s */
    int samples;
    int byzantine;      /* 1 if the agent attacks */
} SinkAgent;

typedef struct SinkRound {
    int round;
    double t_start, t_end;  /* virtual seconds */
    double idle_s;          /* summed over agents */
    double bytes;           /* bytes put on the wire in this round */
    double extra;           /* method-specific figure (QSR's H, ...); NaN when none */
} SinkRound;

typedef enum { SINK_ROLE_ALONE = 0, SINK_ROLE_OFFLOADER, SINK_ROLE_HELPER } SinkRole;

typedef struct SinkAgentRound {
    int round;
    int agent;
    double compute_s, comm_s, idle_s, offline_s;
    SinkRole role;
} SinkAgentRound;

typedef struct SinkPairing {
    int round;
    int slow, fast, split;
    double predicted_s, actual_s;
    const char *solver;
    double solve_ms;    /* wall-clock: excluded from determinism checks */
} SinkPairing;

typedef struct SinkMetric {
    double t;
    int round;
    int agent;          /* -1 for the averaged model (NULL in the database) */
    double train_loss, test_loss, test_accuracy; /* NaN when not measured */
    double bytes_sent;
    /* [data] partition = domains: accuracy on the test images of the held-out domains and
     * of the training ("seen") domains; has_domains = 0 (NULL in the database) otherwise,
     * so a zero-initialised metric has none. */
    int has_domains;
    double heldout_accuracy, seen_accuracy;
    /* [privacy] clip = sample | update: the (epsilon, delta)-DP epsilon spent so far at the
     * scenario's delta (inf without noise); has_privacy = 0 (NULL) otherwise. */
    int has_privacy;
    double epsilon;
} SinkMetric;

typedef enum {
    SINK_STATUS_RUNNING = 0, SINK_STATUS_DONE, SINK_STATUS_FAILED,
    SINK_STATUS_DIVERGED, SINK_STATUS_INTERRUPTED
} SinkStatus;

typedef struct SinkRunEnd {
    SinkStatus status;
    double wall_s;
    double sim_time_s;
    double final_accuracy;  /* NaN when never evaluated */
    int rounds_done;
    const char *message;    /* why it failed/diverged; NULL when done */
} SinkRunEnd;

/* One computation or message of a maxmin run, for tests that replay the run elsewhere
 * (tests/oracle/: SimGrid). Messages: start = its latency begins, transfer = its first
 * byte moves, end = it arrived; ring all-reduce hops count as messages. */
typedef enum { SINK_ACTIVITY_COMPUTE = 0, SINK_ACTIVITY_MESSAGE = 1 } SinkActivityKind;

typedef struct SinkActivity {
    SinkActivityKind kind;
    int agent;          /* compute: the agent; message: the sender */
    int to;             /* message: the receiver; compute: -1 */
    double amount;      /* FLOPs or bytes */
    double start, transfer, end;
} SinkActivity;

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
} SinkOps;

typedef struct Sink {
    const SinkOps *ops;
    void *ctx;
} Sink;

/* A sink that keeps nothing (run id 1), for runs measured rather than recorded. */
Sink sink_discard(void);

const char *sink_role_name(SinkRole role);
const char *sink_status_name(SinkStatus status);

#endif
