/* store.h — the SQLite store: every run the engine reports through a Sink, in one file.
 *
 * A Store is one writable connection to one hetsim database (schema version
 * STORE_SCHEMA_VERSION in PRAGMA user_version, STORE_APPLICATION_ID in
 * PRAGMA application_id). Opening a new or empty file creates the schema; opening an
 * existing hetsim database appends to it. Tables (see store.c for the exact DDL):
 *
 *   runs(id, name, scenario, method, seed, mode, config, status, started_at,
 *        finished_at, wall_s, sim_time_s, final_accuracy, rounds_done, sweep, point,
 *        message)
 *   agents(run_id, agent, grp, compute, bandwidth, latency, samples, uplink, downlink,
 *          byzantine)                                  -- bandwidth is the uplink
 *   rounds(run_id, round, t_start, t_end, idle_s, bytes, extra)
 *   agent_rounds(run_id, round, agent, compute_s, comm_s, idle_s, role, offline_s)
 *   pairings(run_id, round, slow, fast, split, predicted_s, actual_s, solver, solve_ms)
 *   metrics(run_id, t, round, agent, train_loss, test_loss, test_accuracy, bytes_sent,
 *           heldout_accuracy, seen_accuracy,  -- [data] partition = domains
 *           epsilon)                          -- [privacy] clip = sample | update
 *                                             -- (the last three added to older files when opened)
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

#include "base/hs_error.h"
#include "sim/kernel/sink.h"

#define STORE_SCHEMA_VERSION 1
#define STORE_APPLICATION_ID 0x48535431 /* "HST1", so `file` can tell our databases */
#define STORE_BATCH_ROWS 5000
#define STORE_BUSY_TIMEOUT_MS 5000

typedef struct Store Store;

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

#endif
