/* sweep.h — a scenario's [sweep] expanded into runs, the record stream that carries a
 * run's rows from the process that simulates it to the one process that writes the
 * database, and the bookkeeping both sweep drivers (local processes, MPI ranks) share.
 * One header for the sweep files: the expansion is sweep.c, the record stream
 * sweep_stream.c, the master sweep_master.c, the drivers sweep_local.c and sweep_mpi.c.
 * It stays one because the parts use each other: the replay reads the Sweep's id and
 * labels, the master is every replay's FINISHED callback, and the drivers use all three.
 *
 * Expansion rules (the contract tests and users rely on):
 *  - Every [sweep] key but `repeat` is SECTION.KEY, split at its last dot, so group keys
 *    work (`agents.stragglers.compute` is key compute of [agents.stragglers]). Its value
 *    is a list split at top-level commas: commas inside parentheses belong to the value
 *    (`lognormal(2 GFLOPS, 0.2), lognormal(2 GFLOPS, 1.6)` is two values). An item
 *    wrapped whole in parentheses loses them, which is how a value that is itself a
 *    list is swept: `model.layers = (784,256,10), (784,64,10)`. Items are trimmed; an
 *    empty item, unbalanced parentheses or a value listed twice is an error at the
 *    [sweep] line.
 *  - The runs are the Cartesian product of the lists, `repeat = R` (default 1) seeds
 *    each. Order is deterministic: the first key varies slowest, the seed fastest. Run
 *    index i is point i / R, repeat r = i % R.
 *  - A point's document is the scenario (with --set applied, [sweep] removed) with the
 *    point's values set on top, each entry keeping the file:line of its [sweep] line, so
 *    an unknown section, key or bad value is reported there. The swept values win over
 *    --set. Repeat r runs with seed = the point's resolved [run] seed + r.
 *  - Label of a run (runs.point): "KEY=VALUE" for each key in order, then "seed=N",
 *    space separated: `run.method=sync agents.compute=lognormal(2 GFLOPS, 0.2) seed=1`.
 *    A scenario without [sweep] (or an empty one) is a sweep of one run, "seed=N".
 *  - Sweep id (runs.sweep): "sw-" and 16 hex digits of FNV-1a 64 over every run's label
 *    and fully resolved config, in index order. The same scenario, overrides and hetsim
 *    version give the same id (whatever the file is called), which is how --resume finds
 *    an earlier attempt; changing any value that reaches a run gives a new sweep. */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include "base/hs_error.h"
#include "sim/inidoc.h"
#include "sim/scenario.h"
#include "sim/sink.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SWEEP_MAX_AXES 32
#define SWEEP_MAX_RUNS 10000000
#define SWEEP_ID_SIZE 24

typedef struct SweepAxis {
    char section[INIDOC_NAME_MAX];
    char key[INIDOC_NAME_MAX];
    char **values;      /* (n_values) trimmed, owned */
    int n_values;
    int line;           /* the [sweep] line */
} SweepAxis;

typedef struct Sweep {
    IniDoc base;        /* the scenario without [sweep]; owned */
    SweepAxis axes[SWEEP_MAX_AXES];
    int n_axes;
    int repeat;
    int repeat_line;    /* 0 when repeat is not given */
    int64_t n_points;   /* product of the lists' lengths */
    int64_t n_runs;     /* n_points * repeat */
    /* Filled by sweep_resolve: */
    char **labels;      /* (n_runs) owned */
    int64_t *by_label;  /* (n_runs) run indices sorted by label, for sweep_find */
    char id[SWEEP_ID_SIZE];
    int threads_default; /* worker threads of a run whose [run] threads is not set (0: the cores) */
    /* Set by the caller before sweep_resolve (may be NULL): called with the scenario of
     * every point (its first repeat) once it resolved and its agents were drawn, so the
     * command can read the files its runs will read before the database is opened; an
     * error stops the sweep there. */
    int (*check_run)(void *ctx, const Scenario *sc, HsDiag *diag);
    void *check_ctx;
} Sweep;

/* Splits text at top-level commas into a new array of *count trimmed items (outer
 * parentheses of a whole item removed). The caller frees with sweep_values_free.
 * Returns HS_E_INPUT with the reason in why, or HS_E_NOMEM. */
int sweep_split_values(const char *text, char ***values, int *count, char *why, size_t why_size);
void sweep_values_free(char **values, int count);

/* Reads doc's [sweep] into *sw (which owns a copy of doc without [sweep]). Checks the
 * shape of every [sweep] line; the keys themselves are checked by sweep_resolve, which
 * resolves every point. Errors: HS_E_INPUT "FILE:LINE: ..." in diag. On failure *sw is
 * freed. */
int sweep_parse(const IniDoc *doc, Sweep *sw, HsDiag *diag);
/* Resolves every run and draws its agents (world_build), so nothing runs unless every
 * run can start (and calls check_run when set); fills labels and the id. Errors name the
 * run: "... (in sweep point KEY=VALUE ...)". */
int sweep_resolve(Sweep *sw, HsDiag *diag);
/* The scenario of run index (0 <= index < n_runs), seed included. */
int sweep_scenario(const Sweep *sw, int64_t index, Scenario *sc, HsDiag *diag);
/* Index of the run labelled label, -1 if none. Needs sweep_resolve. */
int64_t sweep_find(const Sweep *sw, const char *label);
/* Accepts a zeroed or freed Sweep. */
void sweep_free(Sweep *sw);
/* Checks doc's [sweep] exactly as `hetsim sweep` does (sweep_parse, then sweep_resolve:
 * every point resolved and its agents drawn) and counts its runs; for `hetsim run`, which
 * runs the base point of such a file. */
int sweep_check(const IniDoc *doc, int64_t *n_runs, HsDiag *diag);

/* ---- the record stream (sweep_stream.c) ----
 * A producer (worker process, MPI rank, or rank 0 itself) runs engine_run into a
 * SweepWire sink, which appends every callback as a framed message to a buffer and hands
 * the buffer to flush() at each round end, at run end and when it grows past
 * SWEEP_WIRE_FLUSH_BYTES. The consumer feeds the bytes to a SweepReplay, which calls the
 * database sink in the same order. Framing: u32 length of the rest, u8 type, fields;
 * numbers are raw host-order bytes (producers are the same binary on the same
 * architecture), so doubles arrive bit for bit; strings are u32 length (NUL included,
 * 0xffffffff for NULL) then the bytes.
 * Messages: BEGIN(index, name, scenario, method, seed, mode, config), AGENTS(count,
 * rows), ROUND, AGENT_ROUNDS(count, rows), PAIRING, METRIC, END(SinkRunEnd) — one run at
 * a time per producer, so rows name no run — and FINISHED(index, status, message) after
 * engine_run returns, which also means "ready for more". The sweep id and point label
 * are not sent: the consumer knows them from the index. */
#define SWEEP_WIRE_FLUSH_BYTES (256u * 1024u)

typedef int (*SweepFlushFn)(void *ctx, const void *data, size_t len);

typedef struct SweepWire {
    unsigned char *data;
    size_t len, cap;
    int64_t index;      /* run being recorded */
    SweepFlushFn flush;
    void *flush_ctx;
    int failed;         /* out of memory: every later call fails */
} SweepWire;

/* A sink recording run index into *wire; wire must outlive it. */
Sink sweep_wire_sink(SweepWire *wire, int64_t index, SweepFlushFn flush, void *flush_ctx);
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
    int rows_cap, agents_cap;
} SweepReplay;

void sweep_replay_init(SweepReplay *r, const Sweep *sweep, Sink out, SweepFinishedFn finished,
                       void *finished_ctx);
/* Replays the whole messages at the start of data; *used gets the bytes consumed (a
 * partial last message is left for the next call). Returns the first failing sink status
 * (with its message in diag) or HS_E_INPUT for a malformed stream. */
int sweep_replay(SweepReplay *r, const void *data, size_t len, size_t *used, HsDiag *diag);
/* The producer died: ends its open run (if any) as failed with message why. */
int sweep_replay_abandon(SweepReplay *r, const char *why, HsDiag *diag);
void sweep_replay_free(SweepReplay *r);

/* Runs index into sink in this process: resolve, engine_run. Returns engine_run's status. */
int sweep_run_one(const Sweep *sw, int64_t index, Sink sink, HsDiag *diag);

/* ---- what both drivers share: which runs are left, what came of them, progress
 * (sweep_master.c) ---- */
typedef enum {
    SWEEP_STATE_TODO = 0, SWEEP_STATE_SKIP, /* done before this attempt (--resume) */
    SWEEP_STATE_HANDED, SWEEP_STATE_DONE, SWEEP_STATE_FAILED, SWEEP_STATE_DIVERGED,
    SWEEP_STATE_INTERRUPTED
} SweepState;

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
    int fatal;              /* the database failed: stop handing out work */
    HsDiag diag;            /* first fatal error */
    /* progress on err */
    FILE *err;
    int quiet, is_terminal;
    double started, last_draw;
} SweepMaster;

/* todo: the run indices to do, in order. Every other run counts as done before. */
int sweep_master_init(SweepMaster *m, const Sweep *sweep, Sink out, const int64_t *todo,
                      int64_t n_todo, FILE *err, int quiet);
void sweep_master_free(SweepMaster *m);
/* The next index to hand out, -1 when none is left or the sweep is stopping. */
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
/* Redraws the progress bar on a terminal (at most a few times a second). */
void sweep_master_tick(SweepMaster *m);
/* Final line on err. */
void sweep_master_end_progress(SweepMaster *m);

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
