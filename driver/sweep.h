/* sweep.h — running a sweep's runs (sim/scenario/sweep.h expands them): the record stream
 * that carries a run's rows from the process that simulates it to the one process that
 * writes the database, and the bookkeeping both sweep drivers (local processes, MPI
 * ranks) share. One header for the driver files: the record stream sweep_stream.c, a
 * producer's runs sweep_run.c, the master sweep_master.c, the drivers sweep_local.c and
 * sweep_mpi.c, the up-front check sweep_resolve.c, the checkpoint helper
 * sweep_checkpoint.c. It stays one because the parts use each other: the replay reads the
 * Sweep's id and labels, the master is every replay's FINISHED callback, and the drivers
 * use all three. The terminal progress bar is the caller's (cli/progress.c), reached
 * through SweepProgress. */
#ifndef DRIVER_SWEEP_H
#define DRIVER_SWEEP_H

#include "base/hs_error.h"
#include "sim/kernel/sink.h"
#include "sim/scenario/sweep.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* sweep_expand with every run's agents drawn (world_build, sweep_resolve.c), so a run
 * that world_build rejects (more samples than the dataset holds) is bad input found
 * before anything runs. Errors name the run: "... (in sweep run KEY=VALUE ... seed=N)". */
int sweep_resolve(Sweep *sw, HsDiag *diag);
/* The check sweep_resolve makes of each run beyond its resolution: its agents drawn
 * (world_build) and dropped; for `hetsim run --dry-run`. */
int sweep_check_agents(const Scenario *sc, HsDiag *diag);
/* Checks doc's [sweep] exactly as `hetsim sweep` does (sweep_parse, then sweep_resolve:
 * every point resolved and its agents drawn) and counts its runs; for `hetsim run`, which
 * runs the base point of such a file. */
int sweep_check(const IniDoc *doc, int64_t *n_runs, HsDiag *diag);

/* ---- the record stream (sweep_stream.c) ----
 * A producer (worker process, MPI rank, or rank 0 itself) runs sim_run into a
 * SweepWire sink, which appends every callback as a framed message to a buffer and hands
 * the buffer to flush() at a round end SWEEP_WIRE_FLUSH_SECONDS after the last flush, at
 * FINISHED (the run's END waits for it: one write a run, not two) and when it grows past
 * SWEEP_WIRE_FLUSH_BYTES. The consumer feeds the bytes to a SweepReplay, which calls the
 * database sink in the same order. Framing: u32 length of the rest, u8 type, fields;
 * numbers are raw host-order bytes (producers are the same binary on the same
 * architecture), so doubles arrive bit for bit; strings are u32 length (NUL included,
 * 0xffffffff for NULL) then the bytes.
 * Messages: BEGIN(index, SinkRunInfo), PARAMS(count, rows), AGENTS(count, rows), ROUND, AGENT_ROUNDS(count,
 * rows), PAIRING, METRIC, END(SinkRunEnd) — one run at a time per producer, so rows name
 * no run — and FINISHED(index, status, message) after sim_run returns, which also
 * means "ready for more". A record's fields are the members of its row table in
 * sim/kernel/sink.h, in the table's order (i32 for int and enum members, i64 for 64-bit
 * ones, f64, strings), so the stream follows the tables and cannot drift from the store;
 * the SINK_LOCAL columns (run id, sweep id, point label) are not sent: the consumer
 * knows them from the index. The encoders and decoders are expanded from the tables'
 * lists at compile time (sweep_codec.h). */
#define SWEEP_WIRE_FLUSH_BYTES (256u * 1024u)
#define SWEEP_WIRE_FLUSH_SECONDS 0.1

typedef int (*SweepFlushFn)(void *ctx, const void *data, size_t len);

typedef struct SweepWire {
    unsigned char *data;
    size_t len, cap;
    int64_t index;      /* run being recorded */
    SweepFlushFn flush;
    void *flush_ctx;
    int failed;         /* out of memory: every later call fails */
    struct timespec flushed; /* monotonic time of the last flush */
    int flush_every_round;   /* tests: flush at every round end, however soon */
    size_t ended;       /* bytes up to the end of the run's END message while unflushed, else 0 */
} SweepWire;

/* A sink recording run index into *wire; wire must outlive it. */
Sink sweep_wire_sink(SweepWire *wire, int64_t index, SweepFlushFn flush, void *flush_ctx);
/* After sim_run returns, whatever its status: drops what the run left in the buffer
 * after its END (a failed run's partial rows belong to no message) and keeps the END
 * itself, so that FINISHED carries it in the same write. Without an END (the run failed
 * before it) the buffer is emptied. */
void sweep_wire_run_returned(SweepWire *wire);
/* Appends FINISHED and flushes. */
int sweep_wire_finished(SweepWire *wire, int64_t index, int status, const char *message);
int sweep_wire_flush(SweepWire *wire);
void sweep_wire_free(SweepWire *wire);

struct SweepReplay;
typedef void (*SweepFinishedFn)(void *ctx, struct SweepReplay *replay, int64_t index, int status,
                                const char *message);

/* Consumer state for one producer. */
typedef struct SweepReplay {
    const Sweep *sweep;
    Sink out;
    SweepFinishedFn finished;
    void *finished_ctx;
    int64_t index;          /* run of the last BEGIN, -1 before any */
    int64_t run_id;         /* its id in out */
    int in_run;             /* BEGIN seen, END not yet */
    int begun;              /* the current index reached BEGIN (reset by FINISHED) */
    int rounds;             /* rounds seen of the open run */
    double t_end;           /* last round's end */
    double accuracy;        /* last averaged-model accuracy, NaN when none */
    SinkRunEnd end;         /* the last END (message points at end_message) */
    int ended;              /* END seen for the current index */
    char end_message[512];
    SinkAgentRound *rows;   /* scratch for AGENT_ROUNDS */
    SinkAgent *agents;      /* scratch for AGENTS */
    SinkParam *params;      /* scratch for PARAMS */
    int params_cap;
    int rows_cap, agents_cap;
} SweepReplay;

/* Whether a [sweep] axis of sw set the run_params row (its key, or a parameter row
 * KEY.NAME of a swept distribution), or repeat > 1 set it (run.seed). The replay marks
 * every PARAMS row with it. */
int sweep_param_swept(const Sweep *sw, const SinkParam *row);

void sweep_replay_init(SweepReplay *r, const Sweep *sweep, Sink out, SweepFinishedFn finished,
                       void *finished_ctx);
/* Replays the whole messages at the start of data; *used gets the bytes consumed (a
 * partial last message is left for the next call). Returns the first failing sink status
 * (with its message in diag) or HS_E_INPUT for a malformed stream. */
int sweep_replay(SweepReplay *r, const void *data, size_t len, size_t *used, HsDiag *diag);
/* The producer died: ends its open run (if any) as failed with message why. */
int sweep_replay_abandon(SweepReplay *r, const char *why, HsDiag *diag);
void sweep_replay_free(SweepReplay *r);

/* ---- running a run in a producer (sweep_run.c) ---- */

/* A producer's runner: the resolved scenario of the point it ran last, reused by the
 * next run of the same point with only run.seed changed (a resolve zeroes and fills a
 * 250 KB Scenario: a fifth of a short timing run). */
typedef struct SweepRunner {
    const Sweep *sweep;
    int64_t point;          /* the point sc holds, -1 for none */
    int repeat;             /* the repeat its seed is for */
    Scenario *sc;           /* owned */
} SweepRunner;

void sweep_runner_init(SweepRunner *r, const Sweep *sw);
/* Runs index into sink in this process: its scenario (resolved or the point's reused),
 * sim_run through an OriginSink with sw->origin (so the producer's host is the run's).
 * Returns sim_run's status. */
int sweep_runner_run(SweepRunner *r, int64_t index, Sink sink, HsDiag *diag);
void sweep_runner_free(SweepRunner *r);
/* sweep_runner_run with a runner of its own. */
int sweep_run_one(const Sweep *sw, int64_t index, Sink sink, HsDiag *diag);

/* ---- what both drivers share: which runs are left and what came of them
 * (sweep_master.c) ---- */
typedef enum {
    SWEEP_STATE_TODO = 0, SWEEP_STATE_SKIP, /* done before this attempt (--resume) */
    SWEEP_STATE_HANDED, SWEEP_STATE_DONE, SWEEP_STATE_FAILED, SWEEP_STATE_DIVERGED,
    SWEEP_STATE_INTERRUPTED,
    SWEEP_STATE_COMPLETE_ELSEWHERE, /* found done when claimed: another process ran it */
    SWEEP_STATE_HELD                /* another live process is running it */
} SweepState;

/* Claims runs indices[0..count) for this process before they are handed out, in one
 * write transaction (the writer's claim in the database, analysis/store.h): outcomes[i]
 * SWEEP_STATE_TODO to run it, or SWEEP_STATE_COMPLETE_ELSEWHERE / SWEEP_STATE_HELD to
 * leave it. A failure stops the sweep like a database failure (diag says why). */
typedef int (*SweepClaimFn)(void *ctx, const int64_t *indices, int count, SweepState *outcomes, HsDiag *diag);

/* Runs claimed per transaction. A claim commits the rows buffered so far with it, so
 * short runs want large claims (each commit rewrites the last page of every table and
 * index: with 8 runs of 250 rows a commit, that was a third of the pages written), and
 * two processes sharing a sweep want small ones (a claimed run waits for its claimer).
 * The master starts at SWEEP_CLAIM_BATCH and doubles the batch while claims come less
 * than SWEEP_CLAIM_SECONDS apart, up to SWEEP_CLAIM_BATCH_MAX, and halves it when they
 * come more than twice that apart: another process then waits at most about
 * SWEEP_CLAIM_SECONDS of this one's work for a run it could have taken, and runs of a
 * second or more are claimed 8 at a time as before. */
#define SWEEP_CLAIM_BATCH 8
#define SWEEP_CLAIM_BATCH_MAX 128
#define SWEEP_CLAIM_SECONDS 0.25

struct SweepMaster;
/* How the master tells the user how far the sweep has got; the caller draws it (cli/:
 * a bar on a terminal, one plain line per run otherwise). Either callback may be NULL. */
typedef struct SweepProgress {
    /* A run's outcome is recorded (state DONE, FAILED, DIVERGED or INTERRUPTED; the
     * master's counts include it); status and message are the run's FINISHED ones. */
    void (*finished)(void *ctx, const struct SweepMaster *m, int64_t index, SweepState state, int status,
                     const char *message);
    /* The drivers' loops call it between messages, a few times a second. */
    void (*tick)(void *ctx, const struct SweepMaster *m);
    void *ctx;
} SweepProgress;

typedef struct SweepMaster {
    const Sweep *sweep;
    Sink out;               /* the database */
    unsigned char *state;   /* (n_runs) SweepState */
    double *sim_time;       /* (n_runs) for the summary */
    double *accuracy;       /* (n_runs) */
    int64_t *queue;         /* indices still to hand out, front at head */
    int64_t head, tail, capacity;
    int64_t total;          /* runs to do in this attempt */
    int64_t finished, done, failed, diverged, interrupted;
    int64_t complete_elsewhere, held;   /* left to other processes when claimed */
    SweepClaimFn claim;     /* NULL: every run is this process's */
    void *claim_ctx;
    int64_t claimed[SWEEP_CLAIM_BATCH_MAX]; /* claimed, not handed out yet, front at claimed_head */
    int claimed_head, claimed_count;
    int claim_batch;        /* runs the next claim asks for (SWEEP_CLAIM_BATCH..._MAX) */
    struct timespec claimed_at; /* monotonic time of the last claim (0: none yet) */
    int fatal;              /* the database failed: stop handing out work */
    HsDiag diag;            /* first fatal error */
    SweepProgress progress;
    int quiet;              /* no notes on stderr (a driver that starts fewer workers) */
} SweepMaster;

/* todo: the run indices to do, in order. Every other run counts as done before. */
int sweep_master_init(SweepMaster *m, const Sweep *sweep, Sink out, const int64_t *todo,
                      int64_t n_todo, SweepProgress progress, int quiet);
void sweep_master_free(SweepMaster *m);
/* The next index to hand out (claimed first when m->claim is set; a run claimed by
 * another process is skipped), -1 when none is left or the sweep is stopping. */
int64_t sweep_master_take(SweepMaster *m);
/* Indices not handed out yet (0 when stopping). */
int64_t sweep_master_left(const SweepMaster *m);
/* An index handed out but never begun goes back to the front of the queue. */
void sweep_master_give_back(SweepMaster *m, int64_t index);
/* SIGINT/SIGTERM arrived or the database failed. */
int sweep_master_stopping(const SweepMaster *m);
/* The SweepFinishedFn of every replay (ctx is the master). */
void sweep_master_finished(void *ctx, SweepReplay *replay, int64_t index, int status,
                           const char *message);
/* Records a fatal database error (stops handing out work). */
void sweep_master_fail(SweepMaster *m, const HsDiag *diag);
/* Calls the progress tick (the drivers, between messages). */
void sweep_master_tick(SweepMaster *m);

/* ---- the checkpoint helper (sweep_checkpoint.c) ---- */
typedef struct SweepCheckpointer {
    int pid;                /* the helper, -1 when none */
    int fd;                 /* the parent's end of its pipe, -1 when closed */
} SweepCheckpointer;

/* Forks the helper for the database at path; before the caller opens any SQLite
 * connection in this process. HS_E_IO when it cannot (the sweep goes on without). */
int sweep_checkpointer_start(SweepCheckpointer *c, const char *path);
/* The database is open and in WAL mode: the helper opens it and starts. */
void sweep_checkpointer_go(SweepCheckpointer *c);
/* Ends the helper and waits for it (it checkpoints no more). */
void sweep_checkpointer_stop(SweepCheckpointer *c);

/* The drivers. Both return HS_OK when the loop ran to its end (runs may still have
 * failed: see the master's counts), or the error that stopped it, with diag set. */
int sweep_drive_local(SweepMaster *m, int jobs, HsDiag *diag);

/* MPI (sweep_mpi.c). The size and rank come from the Open MPI environment
 * (OMPI_COMM_WORLD_SIZE / _RANK), so they are known before MPI_Init and the same binary
 * runs without mpirun: size 0 means not launched by mpirun. */
int sweep_mpi_size(void);
int sweep_mpi_rank(void);
/* 1 when this hetsim was built with MPI. */
int sweep_mpi_compiled(void);
/* MPI_Init / MPI_Finalize (no-ops without MPI). */
int sweep_mpi_init(HsDiag *diag);
void sweep_mpi_finalize(void);
/* Rank 0 passes the scenario text it read (or NULL with status its read error); every
 * other rank gets a malloc'd copy in *text. All ranks return rank 0's status (an error
 * other than rank 0's is HS_E_INPUT with a generic message). */
int sweep_mpi_share_text(char **text, int status, HsDiag *diag);
/* Rank 0: hands out runs on request and writes every rank's rows through m->out; it also
 * simulates runs itself between messages. Other ranks: sweep_mpi_work. */
int sweep_drive_mpi(SweepMaster *m, HsDiag *diag);
/* A rank other than 0: runs what rank 0 hands out until told to stop. */
int sweep_mpi_work(const Sweep *sw, HsDiag *diag);
/* Rank 0 before any run was handed out: tells the other ranks to stop. */
void sweep_mpi_stop_all(void);

#endif
