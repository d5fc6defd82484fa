/* store.h — the SQLite store: every run the engine reports through a Sink, in one file.
 *
 * A Store is one writable connection to one hetsim database (schema version
 * STORE_SCHEMA_VERSION in PRAGMA user_version, STORE_APPLICATION_ID in
 * PRAGMA application_id). Opening a new or empty file creates the schema; opening an
 * existing hetsim database appends to it. Its tables are the row tables of
 * sim/kernel/sink.h (runs, agents, rounds, agent_rounds, pairings, metrics, run_params),
 * their columns in the lists' order, each per-run table starting with run_id
 * (REFERENCES runs(id) ON DELETE CASCADE), and the store's own sweeps; store.c generates
 * the DDL, the INSERTs and the binds from them. A file written by an older hetsim,
 * opened for writing, gains the columns and tables added since (NULL in its older rows).
 *
 * Conventions a reader of the database can rely on:
 *  - NaN is stored as NULL (SQLite has no NaN); metrics.agent is NULL for the averaged
 *    model (the sink's -1).
 *  - runs.seed is an INTEGER holding the seed's 64-bit pattern: identical to the seed for
 *    every seed below 2^63; a seed >= 2^63 reads back as seed - 2^64 (add 2^64, or cast to
 *    uint64_t in C, to recover it).
 *  - runs.status is running | done | failed | diverged | interrupted. A run becomes
 *    'done' only in the same transaction that commits its last rows, so a 'done' run is
 *    always complete; a crashed process leaves 'running'.
 *  - every per-run row's run_id names a runs row: the schema declares the foreign keys
 *    (ON DELETE CASCADE) for readers, but the writing connection does not enforce them
 *    (SQLite's check per row was an eighth of a sweep writer's time); the store checks
 *    instead that a row's run was begun or claimed by this Store, and deletes a run's
 *    rows itself. A row of any other run fails as the foreign key failed (HS_E_INTERNAL).
 *  - started_at / finished_at are ISO-8601 UTC text (2024-05-01T12:34:56.789Z); they and
 *    wall_s are the only wall-clock columns (pairings.solve_ms is measured by the caller).
 *
 * Workload: a run writes its runs row, then up to ~1e5 agents and ~1e6 per-round rows,
 * in bursts at round ends with long computation in between. Rows are therefore buffered
 * in memory and written in one short transaction every STORE_BATCH_ROWS rows, at the
 * first row that arrives more than a second after the oldest buffered one, and at
 * run_end. Keeping transactions short (instead of leaving one open between bursts) is
 * what lets the processes of a parallel sweep share one database file: a writer holds
 * the lock for milliseconds, never while it trains. Rows still buffered when a process
 * dies are lost, exactly as an uncommitted transaction would be.
 *
 * A Store is not thread-safe: one thread drives it (the engine calls the sink from its
 * own thread). Several processes may each open their own Store on the same file, even a
 * new one at the same moment: the schema is created under the write lock by whichever
 * comes first, and the switch to WAL is retried while another process holds the file. */
#ifndef ANALYSIS_STORE_H
#define ANALYSIS_STORE_H

#include <stdint.h>
#include <stdio.h>

#include "base/hs_error.h"
#include "sim/kernel/sink.h"

#define STORE_SCHEMA_VERSION 2
#define STORE_APPLICATION_ID 0x48535431 /* "HST1", so `file` can tell our databases */
#define STORE_BATCH_ROWS 5000
#define STORE_BUSY_TIMEOUT_MS 5000

typedef struct Store Store;

/* The views every database has (store.c): name, what it is, its CREATE VIEW, and its
 * columns described as the row tables describe theirs (unit, meaning). */
typedef struct StoreView {
    const char *name, *doc, *sql;
    const SinkColumn *columns;
    int n_columns;
} StoreView;
#define STORE_VIEW_COUNT 3
extern const StoreView store_views[STORE_VIEW_COUNT];

/* Writes the database reference (docs/database.md) to out (store_doc.c). */
void store_write_reference(FILE *out);

/* The tables every database has, in the order they are created: the row tables the
 * store keeps and its own (sweeps, schema_columns). *per_run says the table starts with
 * run_id. NULL past the last. */
const SinkTable *store_table(int i, int *per_run);

/* Opens (creating if needed) the database at path for writing and stores the new Store
 * in *out; the caller closes it with store_close. On failure *out is NULL, the status is
 * returned and diag holds "PATH: message":
 *   HS_E_INPUT  the file is not a SQLite database, is another program's database, or
 *               has another schema version (the message names both versions);
 *   HS_E_IO     the file cannot be created or opened, is read-only, or stays locked by
 *               another writer for longer than the busy timeout;
 *   HS_E_NOMEM  out of memory.
 * Sets journal_mode=WAL, synchronous=NORMAL and busy_timeout=STORE_BUSY_TIMEOUT_MS. */
int store_open(const char *path, Store **out, HsDiag *diag);

/* Writes buffered rows (best effort) and closes. Runs that never reached run_end keep
 * status 'running'. Accepts NULL. */
void store_close(Store *store);

/* The sink that writes into store. The Sink borrows store: keep store open while the
 * sink is in use. A failing callback returns HS_E_IO/HS_E_INPUT/HS_E_NOMEM and leaves
 * its message in store_error_message. */
Sink store_sink(Store *store);

/* The first error's "PATH: message" since open ("" when none). Owned by store. */
const char *store_error_message(const Store *store);

/* Writes every buffered row now (one transaction). The sink does this by itself; call it
 * when another connection must see the rows at once. */
int store_flush(Store *store);

/* Batching (a sweep's writer): the begin of a claimed run (SinkRunInfo.id > 0), its
 * agents and its end wait in the buffer with its rows, and the buffer is written in one
 * transaction when it holds STORE_BATCH_ROWS rows, when its oldest row has waited
 * STORE_FLUSH_SECONDS, before a claim, and at store_flush; so many short runs share a
 * transaction and a run is still 'done' only in the transaction that writes its last
 * row. A claimed run reads 'running' (its claim) until then. Off (the default for
 * `hetsim run`): a run's row is inserted at run_begin and its agents and end commit at
 * once. Turning it off flushes. */
int store_set_batching(Store *store, int on);

/* Sets how long a write waits for another process's lock before failing with HS_E_IO.
 * A sweep with many jobs may want more than the default, a test less. */
int store_set_busy_timeout(Store *store, int milliseconds);

/* Marks run_id as 'interrupted' after writing its buffered rows: finished_at = now,
 * wall_s since its run_begin (when it began on this Store), rounds_done and sim_time_s
 * from the rows stored so far. A run that already ended is left as it is (HS_OK). Not
 * async-signal-safe: call it from the main flow once a signal handler has set a flag.
 * Returns HS_E_INPUT if there is no such run. */
int store_mark_interrupted(Store *store, int64_t run_id);

/* Deletes run_id and every row of it in one transaction (sweep --resume drops
 * incomplete runs this way). Deleting a run that does not exist is HS_OK. */
int store_delete_run(Store *store, int64_t run_id);

/* One run of a sweep, as sweep --resume needs to see it. */
typedef struct StoreSweepRun {
    int64_t run_id;
    char *point;        /* NULL when the run had none */
    char *status;       /* runs.status text */
} StoreSweepRun;

/* Lists the runs whose runs.sweep equals sweep, ordered by id, into a new array *runs
 * of *count entries; the caller frees it with store_sweep_runs_free. */
int store_list_sweep_runs(Store *store, const char *sweep, StoreSweepRun **runs,
                          int *count);
void store_sweep_runs_free(StoreSweepRun *runs, int count);

/* ---- claims (sweep.h): a sweep's runs are claimed in the file before they run, so
 * two processes given the same sweep never both run a point ---- */

typedef struct StoreSweepClaim {
    const char *sweep;  /* the sweep id */
    int64_t runs, points;
    int repeat;
} StoreSweepClaim;

/* In one write transaction: finds the sweep's row in sweeps, or creates it, reserving the
 * run ids *first_run .. *first_run + runs - 1 (run i of the expansion gets *first_run +
 * i, whatever process runs it, whenever). *existed is 1 when the file already held the
 * sweep (its row, or runs of it written by a hetsim before claims): a caller that was
 * not asked to resume refuses then, and nothing was written. */
int store_claim_sweep(Store *store, const StoreSweepClaim *claim, int64_t *first_run, int *existed);

typedef enum {
    STORE_CLAIMED = 0,  /* the point is this process's to run, as run id run_id */
    STORE_COMPLETE,     /* a run of the point is done (or diverged): nothing to do */
    STORE_HELD          /* another live process is running it (holder says which) */
} StoreClaim;

/* In one write transaction: decides who runs sweep's point. Incomplete runs of the point
 * whose writer is gone (on this host: its process no longer exists; a run from an older
 * hetsim names none) are deleted with their rows, and a 'running' row with id run_id,
 * claimed by this process, is inserted; a sink run_begin with SinkRunInfo.id = run_id
 * then fills it in. A claim from another host cannot be checked and counts as alive. */
int store_claim_run(Store *store, const char *sweep, const char *point, int64_t run_id, StoreClaim *outcome,
                    char *holder, size_t holder_size);

/* store_claim_run for count points (outcomes[i] for points[i], run_ids[i]) in one
 * write transaction. */
int store_claim_runs(Store *store, const char *sweep, int count, const char *const *points, const int64_t *run_ids,
                     StoreClaim *outcomes, char *holder, size_t holder_size);

/* Deletes the runs this process claimed and never began (a sweep stopped early). */
int store_drop_unbegun(Store *store);

/* ---- checkpoints by another process ----
 * In WAL mode every page is written twice: into the WAL at the commit, and into the
 * database file by a checkpoint, which the committing connection runs itself every
 * STORE_WAL_PAGES pages by default. A sweep's writer gives that copy to a helper process
 * instead (driver/sweep_checkpoint.c): its own setting is raised to
 * STORE_WAL_PAGES_ALONE, a safety net should the helper die. */
#define STORE_WAL_PAGES 1000
#define STORE_WAL_PAGES_ALONE 16384

/* Sets the WAL size (pages) at which this Store's commits checkpoint themselves. */
int store_set_autocheckpoint(Store *store, int pages);

/* A connection that only checkpoints, for a process that has no other SQLite state
 * (opened before anything else of SQLite in the process, or in a process forked before
 * any connection was opened: SQLite's lock bookkeeping is per process). */
typedef struct StoreCheckpointer StoreCheckpointer;
int store_checkpointer_open(const char *path, StoreCheckpointer **out, HsDiag *diag);
/* One passive checkpoint: copies what no reader needs any more, never waits. */
int store_checkpointer_run(StoreCheckpointer *c);
void store_checkpointer_close(StoreCheckpointer *c);

#endif
