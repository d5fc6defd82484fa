/* sweep_mpi.c — `mpirun -np K hetsim sweep ...`: runs spread over K ranks with dynamic
 * load balancing; rank 0 is the only one that opens the database (no shared file system
 * is needed for it, and rank 0 sends every rank the scenario text it read).
 *
 * Protocol (tags below; payloads are raw bytes, the ranks being one binary on one
 * architecture):
 *   rank 0 -> r   TAG_COMMAND    int64 run index, or -1: stop
 *   rank 0 -> r   TAG_INTERRUPT  empty: SIGINT/SIGTERM reached rank 0; r raises SIGINT in
 *                                itself, so its run ends 'interrupted' as a local one would
 *   r -> rank 0   TAG_RECORDS    a batch of the record stream of sweep.h (a round's rows,
 *                                a run's end, FINISHED = "give me more")
 * Rank 0 keeps up to two runs handed to every rank while enough are left (so a rank
 * starts its next run without waiting for rank 0), one near the end. Rank 0 simulates
 * runs too: its own rows go through the same record stream, and between its rounds it
 * answers the other ranks and writes their rows. A rank's batches are sent with
 * MPI_Isend (at most one in flight), so a rank computes on while rank 0 is busy.
 * Waiting is done by probing with short sleeps instead of Open MPI's spinning receive,
 * so an idle rank does not take a core from a busy one.
 *
 * Without MPI compiled in (make MPI=0) these are stubs, and cli_sweep refuses to run
 * under mpirun rather than let K ranks each do the whole sweep. */
#include "driver/sweep.h"

#include "sim/kernel/interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int sweep_env_int(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return -1;
    char *end;
    long n = strtol(v, &end, 10);
    return *end == '\0' && n >= 0 && n < 1 << 24 ? (int)n : -1;
}

int sweep_mpi_size(void)
{
    int n = sweep_env_int("OMPI_COMM_WORLD_SIZE");
    return n > 0 ? n : 0;
}

int sweep_mpi_rank(void)
{
    int n = sweep_env_int("OMPI_COMM_WORLD_RANK");
    return n > 0 ? n : 0;
}

#if HS_HAVE_MPI

#include <mpi.h>

enum { TAG_COMMAND = 1, TAG_INTERRUPT = 2, TAG_RECORDS = 3, TAG_TEXT = 4 };

int sweep_mpi_compiled(void)
{
    return 1;
}

int sweep_mpi_init(HsDiag *diag)
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized && MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return hs_diag_set(diag, HS_E_IO, NULL, 0, "MPI_Init failed");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return HS_OK;
}

void sweep_mpi_finalize(void)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

int sweep_mpi_share_text(char **text, int status, HsDiag *diag)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long long len = rank == 0 ? (status == HS_OK ? (long long)strlen(*text) : -1) : 0;
    MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (len < 0) return rank == 0 ? status : hs_diag_set(diag, HS_E_INPUT, NULL, 0, "rank 0 cannot read the scenario");
    if (rank != 0) {
        *text = malloc((size_t)len + 1);
        if (*text == NULL) MPI_Abort(MPI_COMM_WORLD, 1);  /* the others would wait for us forever */
    }
    if (len > 0) MPI_Bcast(*text, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    (*text)[len] = '\0';
    return HS_OK;
}

static void sweep_mpi_nap(void)
{
    struct timespec ts = {0, 100000};  /* 0.1 ms: latency far below a run's length */
    nanosleep(&ts, NULL);
}

void sweep_mpi_stop_all(void)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t stop = -1;
    for (int r = 1; r < size; r++) MPI_Send(&stop, 1, MPI_INT64_T, r, TAG_COMMAND, MPI_COMM_WORLD);
}

/* ---- rank 0 ---- */

typedef struct MpiPeer {
    struct MpiMaster *owner;
    SweepReplay replay;
    int64_t handed[2];
    int n_handed;
    int stopped;
} MpiPeer;

typedef struct MpiMaster {
    SweepMaster *m;
    MpiPeer *peers;       /* (size); peers[0] unused */
    int size;
    int n_stopped;
    int forwarded;
    unsigned char *buf;
    size_t cap;
    SweepReplay own;      /* rank 0's own runs */
    /* Whether rank 0 should simulate too: writing costs W per run, a run costs C. Every
     * run's rows go through rank 0, so with P other ranks it spends P*W/C of its time
     * writing for them; it takes runs of its own only while that leaves room. */
    double replay_seconds;  /* time spent writing rows, all runs */
    double own_seconds;     /* time simulating own runs, their writing excluded */
    double flush_seconds;   /* writing and serving inside the current own run */
    int own_runs;
} MpiMaster;

static double mpi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int mpi_rank0_simulates(const MpiMaster *mm)
{
    if (mm->own_runs == 0 || mm->size == 1) return 1;
    double written = (double)(mm->m->finished > 0 ? mm->m->finished : 1);
    double w = mm->replay_seconds / written, c = mm->own_seconds / mm->own_runs;
    return (mm->size - 1) * w < 0.8 * c;
}

static void mpi_peer_finished(void *ctx, SweepReplay *replay, int64_t index, int status, const char *message)
{
    MpiPeer *p = ctx;
    if (p->n_handed > 0 && p->handed[0] == index) {
        p->handed[0] = p->handed[1];
        p->n_handed--;
    }
    sweep_master_finished(p->owner->m, replay, index, status, message);
}

static void mpi_assign(MpiMaster *mm, int rank)
{
    MpiPeer *p = &mm->peers[rank];
    SweepMaster *m = mm->m;
    while (!p->stopped && p->n_handed < 2) {
        /* All ranks, rank 0 included, share what is left. */
        if (p->n_handed == 1 && sweep_master_left(m) < mm->size) break;
        int64_t index = sweep_master_take(m);
        if (index < 0) break;
        MPI_Send(&index, 1, MPI_INT64_T, rank, TAG_COMMAND, MPI_COMM_WORLD);
        p->handed[p->n_handed++] = index;
    }
    if (!p->stopped && p->n_handed == 0) {
        int64_t stop = -1;
        MPI_Send(&stop, 1, MPI_INT64_T, rank, TAG_COMMAND, MPI_COMM_WORLD);
        p->stopped = 1;
        mm->n_stopped++;
    }
}

/* The database (or a record stream) failed. Nothing more can be recorded, and the other
 * ranks would block on their next send: end the job. What was committed stays
 * consistent (a run is 'done' only with all its rows), so --resume finishes the sweep. */
static void mpi_abort_on(SweepMaster *m, const HsDiag *diag)
{
    fprintf(stderr, "\nhetsim: %s; aborting the MPI job (finish the sweep later with --resume)\n",
            diag->status != HS_OK ? diag->message : "partial record batch");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Answers every message that has arrived; never blocks. */
static void mpi_serve(MpiMaster *mm)
{
    SweepMaster *m = mm->m;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_RECORDS, MPI_COMM_WORLD, &flag, &st);
        if (!flag) break;
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t)count > mm->cap) {
            size_t cap = mm->cap ? mm->cap : 65536;
            while (cap < (size_t)count) cap *= 2;
            unsigned char *grown = realloc(mm->buf, cap);
            if (grown == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
            mm->buf = grown;
            mm->cap = cap;
        }
        MPI_Recv(mm->buf, count, MPI_BYTE, st.MPI_SOURCE, TAG_RECORDS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MpiPeer *p = &mm->peers[st.MPI_SOURCE];
        size_t used = 0;
        HsDiag local;
        hs_diag_clear(&local);
        double start = mpi_now();
        if (sweep_replay(&p->replay, mm->buf, (size_t)count, &used, &local) != HS_OK || used != (size_t)count)
            mpi_abort_on(m, &local);
        mm->replay_seconds += mpi_now() - start;
        mpi_assign(mm, st.MPI_SOURCE);
    }
    if (sweep_master_stopping(m) && !mm->forwarded) {
        for (int r = 1; r < mm->size; r++)
            if (!mm->peers[r].stopped) MPI_Send(NULL, 0, MPI_BYTE, r, TAG_INTERRUPT, MPI_COMM_WORLD);
        mm->forwarded = 1;
    }
    for (int r = 1; r < mm->size; r++) mpi_assign(mm, r);
    sweep_master_tick(m);
}

/* Rank 0's own rows: replayed at once, then the other ranks get their turn. */
static int mpi_own_flush(void *ctx, const void *data, size_t len)
{
    MpiMaster *mm = ctx;
    size_t used = 0;
    HsDiag local;
    hs_diag_clear(&local);
    double start = mpi_now();
    if (sweep_replay(&mm->own, data, len, &used, &local) != HS_OK) mpi_abort_on(mm->m, &local);
    double replayed = mpi_now();
    mm->replay_seconds += replayed - start;
    mpi_serve(mm);
    mm->flush_seconds += mpi_now() - start;
    return HS_OK;
}

int sweep_drive_mpi(SweepMaster *m, HsDiag *diag)
{
    MpiMaster mm = {.m = m};
    MPI_Comm_size(MPI_COMM_WORLD, &mm.size);
    mm.peers = calloc((size_t)mm.size, sizeof *mm.peers);
    if (mm.peers == NULL) {
        sweep_mpi_stop_all();
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    for (int r = 1; r < mm.size; r++) {
        mm.peers[r].owner = &mm;
        sweep_replay_init(&mm.peers[r].replay, m->sweep, m->out, mpi_peer_finished, &mm.peers[r]);
    }
    sweep_replay_init(&mm.own, m->sweep, m->out, sweep_master_finished, m);
    SweepWire wire = {0};
    SweepRunner runner;
    sweep_runner_init(&runner, m->sweep);
    for (int r = 1; r < mm.size; r++) mpi_assign(&mm, r);
    for (;;) {
        mpi_serve(&mm);
        int64_t index = mpi_rank0_simulates(&mm) ? sweep_master_take(m) : -1;
        if (index >= 0) {
            HsDiag local;
            hs_diag_clear(&local);
            Sink sink = sweep_wire_sink(&wire, index, mpi_own_flush, &mm);
            double start = mpi_now();
            mm.flush_seconds = 0;
            int status = sweep_runner_run(&runner, index, sink, &local);
            sweep_wire_run_returned(&wire);
            sweep_wire_finished(&wire, index, status, local.message);
            mm.own_seconds += mpi_now() - start - mm.flush_seconds;
            mm.own_runs++;
            continue;
        }
        if (mm.n_stopped == mm.size - 1) break;
        sweep_mpi_nap();
    }
    sweep_wire_free(&wire);
    sweep_runner_free(&runner);
    for (int r = 1; r < mm.size; r++) sweep_replay_free(&mm.peers[r].replay);
    sweep_replay_free(&mm.own);
    free(mm.peers);
    free(mm.buf);
    return HS_OK;
}

/* ---- the other ranks ---- */

/* A rank's rows wait here until MPI_BATCH_BYTES have gathered or its run is finished:
 * one message per run (or per few MB) instead of one per round, so a rank seldom waits
 * for rank 0, which answers only between its own rounds. */
#define MPI_BATCH_BYTES (4u * 1024u * 1024u)

typedef struct MpiSender {
    unsigned char *staging, *inflight;
    size_t len, staging_cap, inflight_cap;
    MPI_Request request;
    int active;             /* inflight is being sent */
} MpiSender;

static void mpi_check_interrupt(void)
{
    int flag = 0;
    MPI_Iprobe(0, TAG_INTERRUPT, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    if (!flag) return;
    MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_INTERRUPT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (!interrupt_requested()) raise(SIGINT);  /* caught by interrupt.c: sets the flag */
}

/* Sends what is staged; waits only for the batch before it. */
static void mpi_sender_push(MpiSender *s)
{
    if (s->len == 0) return;
    if (s->active) MPI_Wait(&s->request, MPI_STATUS_IGNORE);
    unsigned char *buf = s->inflight;
    size_t cap = s->inflight_cap;
    s->inflight = s->staging;
    s->inflight_cap = s->staging_cap;
    s->staging = buf;
    s->staging_cap = cap;
    MPI_Isend(s->inflight, (int)s->len, MPI_BYTE, 0, TAG_RECORDS, MPI_COMM_WORLD, &s->request);
    s->active = 1;
    s->len = 0;
}

static void mpi_sender_progress(MpiSender *s)
{
    if (!s->active) return;
    int sent = 0;
    MPI_Test(&s->request, &sent, MPI_STATUS_IGNORE);
    s->active = !sent;
}

static int mpi_send_flush(void *ctx, const void *data, size_t len)
{
    MpiSender *s = ctx;
    if (s->len + len > s->staging_cap) {
        size_t cap = s->staging_cap ? s->staging_cap : 65536;
        while (cap < s->len + len) cap *= 2;
        unsigned char *grown = realloc(s->staging, cap);
        if (grown == NULL) return HS_E_NOMEM;
        s->staging = grown;
        s->staging_cap = cap;
    }
    memcpy(s->staging + s->len, data, len);
    s->len += len;
    if (s->len >= MPI_BATCH_BYTES) mpi_sender_push(s);
    else mpi_sender_progress(s);
    mpi_check_interrupt();
    return HS_OK;
}

int sweep_mpi_work(const Sweep *sw, HsDiag *diag)
{
    interrupt_install();
    MpiSender sender = {0};
    SweepWire wire = {0};
    SweepRunner runner;
    sweep_runner_init(&runner, sw);
    int status = HS_OK;
    for (;;) {
        int flag = 0;
        while (!flag) {
            MPI_Iprobe(0, TAG_COMMAND, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (flag) break;
            mpi_sender_progress(&sender);  /* lets a large batch in flight move on */
            sweep_mpi_nap();
        }
        int64_t index;
        MPI_Recv(&index, 1, MPI_INT64_T, 0, TAG_COMMAND, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (index < 0) break;
        mpi_check_interrupt();
        HsDiag local;
        hs_diag_clear(&local);
        int run_status;
        if (interrupt_requested()) {
            run_status = hs_diag_set(&local, HS_E_INTERRUPTED, NULL, 0, "interrupted before it started");
        } else {
            Sink sink = sweep_wire_sink(&wire, index, mpi_send_flush, &sender);
            run_status = sweep_runner_run(&runner, index, sink, &local);
        }
        sweep_wire_run_returned(&wire);
        if ((status = sweep_wire_finished(&wire, index, run_status, local.message)) != HS_OK) {
            hs_diag_set(diag, status, NULL, 0, "out of memory");
            MPI_Abort(MPI_COMM_WORLD, 1);  /* rank 0 would wait for this FINISHED forever */
        }
        mpi_sender_push(&sender);  /* FINISHED asks for the next run: send it now */
    }
    if (sender.active) MPI_Wait(&sender.request, MPI_STATUS_IGNORE);
    /* An interrupt sent after our last command would otherwise stay unreceived. */
    int flag = 1;
    while (flag) {
        flag = 0;
        MPI_Iprobe(0, TAG_INTERRUPT, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (flag) MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_INTERRUPT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    free(sender.staging);
    free(sender.inflight);
    sweep_wire_free(&wire);
    sweep_runner_free(&runner);
    return status;
}

#else /* no MPI compiled in */

int sweep_mpi_compiled(void)
{
    return 0;
}

int sweep_mpi_init(HsDiag *diag)
{
    return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "this hetsim was built without MPI");
}

void sweep_mpi_finalize(void) {}

int sweep_mpi_share_text(char **text, int status, HsDiag *diag)
{
    return status;
}

void sweep_mpi_stop_all(void) {}

int sweep_drive_mpi(SweepMaster *m, HsDiag *diag)
{
    return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "this hetsim was built without MPI");
}

int sweep_mpi_work(const Sweep *sw, HsDiag *diag)
{
    return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "this hetsim was built without MPI");
}

#endif
