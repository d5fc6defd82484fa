/* cli_sweep.c — `hetsim sweep SCENARIO.ini --db FILE [--set S.K=V]... [--jobs N] [--resume]`.
 *
 * Every run of the expansion is resolved before the database is opened, so a bad point
 * stops the sweep before anything is written. Runs then go to worker processes (fork,
 * default one per core) or, under mpirun, to MPI ranks (sweep_mpi.c). Either way one
 * process writes the database: workers simulate into a SweepWire sink whose records
 * travel over a pipe to the parent, which replays them into the Store. So there is no
 * lock contention, rows of a run are written in the order the engine produced them, and
 * a killed worker leaves only its open run, which the parent marks failed.
 *
 * Pipe protocol (parent and workers are the same binary after fork): parent -> worker an
 * int64 run index per command, -1 to stop; worker -> parent the record stream of
 * sweep.h, FINISHED after each run asking for more. The parent keeps up to two runs
 * handed to a worker while enough are left, so a worker never waits for the parent
 * between runs; near the end it hands out one at a time so no worker sits on a queued
 * run while another is idle.
 *
 * --resume: the sweep id is a hash of the resolved expansion (sweep.h). The runs of that
 * id already in the database that are 'done' (or 'diverged', a complete and
 * deterministic result) are kept; every other run of it ('running' from a killed sweep,
 * 'interrupted', 'failed') is deleted with its rows, and only the missing points run.
 * Without --resume a database that already holds runs of the sweep is refused, so a
 * point never appears twice. Do not resume a sweep that is still running.
 *
 * SIGINT/SIGTERM: the parent forwards the signal to the workers; each ends its run as
 * 'interrupted' through the engine's normal path, the parent writes what arrives, hands
 * out nothing more, and prints the command that finishes the sweep. */
#include "analysis/store.h"
#include "sim/cli.h"
#include "sim/interrupt.h"
#include "sim/sweep.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char cli_sweep_usage[] =
    "usage: hetsim sweep SCENARIO.ini [--db FILE] [--set SECTION.KEY=VALUE]... [--jobs N] [--resume]\n"
    "                    [--timing-only] [--quiet]\n"
    "\n"
    "Runs every point of the scenario's [sweep] (Cartesian product of the listed values,\n"
    "`repeat` seeds each) and appends them to the database (default results.db).\n"
    "  --db FILE          result database; only this process writes it\n"
    "  --jobs N           worker processes (default: the number of cores)\n"
    "  --resume           finish an interrupted or killed sweep: keep its done runs,\n"
    "                     drop the incomplete ones, run the missing points\n"
    "  --set S.K=VALUE    override a scenario key before expansion (swept keys win)\n"
    "  --timing-only      same as --set run.mode=timing\n"
    "  --quiet            no progress on stderr and no summary on stdout\n"
    "Under `mpirun -np K hetsim sweep ...` the runs spread over the K ranks instead (rank 0\n"
    "writes the database; --jobs is ignored).\n";

/* ---- the master: queue, outcomes, progress ---- */

static double sweep_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int sweep_master_init(SweepMaster *m, const Sweep *sweep, Sink out, const int64_t *todo, int64_t n_todo,
                      FILE *err, int quiet)
{
    memset(m, 0, sizeof *m);
    m->sweep = sweep;
    m->out = out;
    m->err = err;
    m->quiet = quiet;
    m->is_terminal = err != NULL && isatty(fileno(err));
    hs_diag_clear(&m->diag);
    m->state = malloc((size_t)sweep->n_runs);
    m->sim_time = malloc((size_t)sweep->n_runs * sizeof *m->sim_time);
    m->accuracy = malloc((size_t)sweep->n_runs * sizeof *m->accuracy);
    m->queue = malloc((size_t)(n_todo > 0 ? n_todo : 1) * sizeof *m->queue);
    if (m->state == NULL || m->sim_time == NULL || m->accuracy == NULL || m->queue == NULL) {
        sweep_master_free(m);
        return HS_E_NOMEM;
    }
    memset(m->state, SWEEP_STATE_SKIP, (size_t)sweep->n_runs);
    for (int64_t i = 0; i < sweep->n_runs; i++) m->sim_time[i] = m->accuracy[i] = NAN;
    for (int64_t i = 0; i < n_todo; i++) {
        m->queue[i] = todo[i];
        m->state[todo[i]] = SWEEP_STATE_TODO;
    }
    m->capacity = n_todo;
    m->tail = m->total = n_todo;
    m->started = m->last_draw = sweep_now();
    return HS_OK;
}

void sweep_master_free(SweepMaster *m)
{
    if (m == NULL) return;
    free(m->state);
    free(m->sim_time);
    free(m->accuracy);
    free(m->queue);
    m->state = NULL;
    m->sim_time = m->accuracy = NULL;
    m->queue = NULL;
}

int sweep_master_stopping(const SweepMaster *m)
{
    return m->fatal || interrupt_requested();
}

int64_t sweep_master_take(SweepMaster *m)
{
    if (sweep_master_stopping(m) || m->head == m->tail) return -1;
    int64_t index = m->queue[m->head++];
    m->state[index] = SWEEP_STATE_HANDED;
    return index;
}

int64_t sweep_master_left(const SweepMaster *m)
{
    return sweep_master_stopping(m) ? 0 : m->tail - m->head;
}

/* head > 0 here: the index was taken from the queue, which moved head past it. */
void sweep_master_give_back(SweepMaster *m, int64_t index)
{
    m->state[index] = SWEEP_STATE_TODO;
    if (m->head > 0) m->queue[--m->head] = index;
}

void sweep_master_fail(SweepMaster *m, const HsDiag *diag)
{
    if (!m->fatal) m->diag = *diag;
    m->fatal = 1;
}

static void sweep_format_duration(double s, char *out, size_t size)
{
    if (!isfinite(s) || s < 0) snprintf(out, size, "?");
    else if (s < 60) snprintf(out, size, "%.0fs", s);
    else if (s < 3600) snprintf(out, size, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(out, size, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void sweep_master_draw(SweepMaster *m)
{
    double elapsed = sweep_now() - m->started;
    char eta[32] = "?";
    if (m->finished > 0) {
        double per_run = elapsed / (double)m->finished;
        sweep_format_duration(per_run * (double)(m->total - m->finished), eta, sizeof eta);
    }
    int width = 30, filled = m->total > 0 ? (int)(width * m->finished / m->total) : width;
    fputs("\rsweep [", m->err);
    for (int i = 0; i < width; i++) fputc(i < filled ? '#' : '.', m->err);
    fprintf(m->err, "] %lld/%lld runs", (long long)m->finished, (long long)m->total);
    int64_t bad = m->failed + m->diverged + m->interrupted;
    if (bad > 0) fprintf(m->err, ", %lld not done", (long long)bad);
    fprintf(m->err, "  ETA %s\033[K", m->finished < m->total ? eta : "0s");
    fflush(m->err);
    m->last_draw = sweep_now();
}

void sweep_master_tick(SweepMaster *m)
{
    if (m->quiet || !m->is_terminal || m->total == 0) return;
    if (sweep_now() - m->last_draw >= 0.2) sweep_master_draw(m);
}

void sweep_master_end_progress(SweepMaster *m)
{
    if (m->quiet || !m->is_terminal || m->total == 0) return;
    sweep_master_draw(m);
    fputc('\n', m->err);
}

void sweep_master_finished(void *ctx, SweepReplay *replay, int64_t index, int status, const char *message)
{
    SweepMaster *m = ctx;
    if (index < 0 || index >= m->sweep->n_runs) return;
    const char *label = m->sweep->labels[index];
    if (!replay->begun && status == HS_E_INTERRUPTED) {
        m->state[index] = SWEEP_STATE_TODO;  /* handed out but never started */
        return;
    }
    SweepState state = SWEEP_STATE_FAILED;
    if (replay->begun && replay->ended) {
        switch (replay->end.status) {
        case SINK_STATUS_DONE: state = SWEEP_STATE_DONE; break;
        case SINK_STATUS_DIVERGED: state = SWEEP_STATE_DIVERGED; break;
        case SINK_STATUS_INTERRUPTED: state = SWEEP_STATE_INTERRUPTED; break;
        default: state = SWEEP_STATE_FAILED; break;
        }
        m->sim_time[index] = replay->end.sim_time_s;
        m->accuracy[index] = replay->end.final_accuracy;
    }
    /* Once its end is written, the database's status is the run's status, whatever came
     * after (a worker that died between END and FINISHED). */
    m->state[index] = (unsigned char)state;
    m->finished++;
    switch (state) {
    case SWEEP_STATE_DONE: m->done++; break;
    case SWEEP_STATE_DIVERGED: m->diverged++; break;
    case SWEEP_STATE_INTERRUPTED: m->interrupted++; break;
    default: m->failed++; break;
    }
    if (m->quiet) return;
    if (state == SWEEP_STATE_FAILED || state == SWEEP_STATE_DIVERGED) {
        if (m->is_terminal) fputs("\r\033[K", m->err);
        fprintf(m->err, "hetsim: run %s %s: %s\n", label, state == SWEEP_STATE_FAILED ? "failed" : "diverged",
                message && message[0] ? message : hs_error_name(status));
    }
    if (m->is_terminal) {
        sweep_master_draw(m);
    } else {
        static const char *const names[] = {"todo", "skip", "handed", "done", "failed", "diverged", "interrupted"};
        fprintf(m->err, "sweep: %lld/%lld %s %s\n", (long long)m->finished, (long long)m->total, names[state], label);
        fflush(m->err);
    }
}

/* ---- the local driver: forked workers over pipes ---- */

typedef struct LocalWorker {
    SweepMaster *master;
    pid_t pid;
    int cmd_fd, rec_fd;      /* the parent's ends; -1 once closed */
    unsigned char *buf;      /* bytes read and not yet replayed */
    size_t len, cap;
    SweepReplay replay;
    int64_t handed[2];       /* oldest first: handed[0] is running or next */
    int n_handed;
    int stopped;             /* stop sent */
    int broken;              /* its stream can no longer be written: drop what it sends */
} LocalWorker;

static int sweep_write_all(int fd, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;  /* SIGINT: the run ends at its next event */
        if (n <= 0) return HS_E_IO;
        p += n;
        len -= (size_t)n;
    }
    return HS_OK;
}

static int sweep_read_all(int fd, void *data, size_t len)
{
    unsigned char *p = data;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return HS_E_IO;
        p += n;
        len -= (size_t)n;
    }
    return HS_OK;
}

static int local_flush(void *ctx, const void *data, size_t len)
{
    return sweep_write_all(*(int *)ctx, data, len);
}

/* The child: runs what it is handed until told to stop or the parent goes away. */
static void local_worker_main(const Sweep *sw, int cmd_fd, int rec_fd)
{
    SweepWire wire = {0};
    int64_t index;
    while (sweep_read_all(cmd_fd, &index, sizeof index) == HS_OK && index >= 0) {
        HsDiag diag;
        hs_diag_clear(&diag);
        int status;
        if (interrupt_requested()) {
            status = hs_diag_set(&diag, HS_E_INTERRUPTED, NULL, 0, "interrupted before it started");
        } else {
            Sink sink = sweep_wire_sink(&wire, index, local_flush, &rec_fd);
            status = sweep_run_one(sw, index, sink, &diag);
        }
        wire.len = 0;  /* what a failed flush left behind belongs to no message */
        if (sweep_wire_finished(&wire, index, status, diag.message) != HS_OK) break;
    }
    sweep_wire_free(&wire);
    _exit(0);  /* not exit(): the parent's stdio buffers and database are not ours */
}

static void local_finished(void *ctx, SweepReplay *replay, int64_t index, int status, const char *message)
{
    LocalWorker *w = ctx;
    if (w->n_handed > 0 && w->handed[0] == index) {
        w->handed[0] = w->handed[1];
        w->n_handed--;
    }
    sweep_master_finished(w->master, replay, index, status, message);
}

static void local_assign(LocalWorker *w, int n_alive)
{
    SweepMaster *m = w->master;
    while (!w->stopped && w->cmd_fd >= 0 && w->n_handed < 2) {
        if (w->n_handed == 1 && sweep_master_left(m) < n_alive) break;
        int64_t index = sweep_master_take(m);
        if (index < 0) break;
        if (sweep_write_all(w->cmd_fd, &index, sizeof index) != HS_OK) {
            sweep_master_give_back(m, index);  /* it died; its end of file comes next */
            break;
        }
        w->handed[w->n_handed++] = index;
    }
    if (!w->stopped && w->n_handed == 0 && w->cmd_fd >= 0) {
        int64_t stop = -1;
        sweep_write_all(w->cmd_fd, &stop, sizeof stop);
        close(w->cmd_fd);
        w->cmd_fd = -1;
        w->stopped = 1;
    }
}

/* The worker's pipe closed: reap it, fail the run it left open, requeue the rest. */
static void local_reap(LocalWorker *w)
{
    SweepMaster *m = w->master;
    int wstatus = 0;
    close(w->rec_fd);
    w->rec_fd = -1;
    if (w->cmd_fd >= 0) close(w->cmd_fd);
    w->cmd_fd = -1;
    while (waitpid(w->pid, &wstatus, 0) < 0 && errno == EINTR) {}
    if (w->n_handed == 0) return;
    char why[128];
    if (WIFSIGNALED(wstatus)) snprintf(why, sizeof why, "worker process %d was killed by signal %d", (int)w->pid,
                                       WTERMSIG(wstatus));
    else snprintf(why, sizeof why, "worker process %d exited in the middle of a run", (int)w->pid);
    int first = 0;
    if (w->replay.begun && !w->broken) {
        HsDiag local;
        hs_diag_clear(&local);
        if (sweep_replay_abandon(&w->replay, why, &local) != HS_OK) sweep_master_fail(m, &local);
        sweep_master_finished(m, &w->replay, w->handed[0], HS_E_INTERNAL, why);
        first = 1;
    }
    for (int i = w->n_handed - 1; i >= first; i--) sweep_master_give_back(m, w->handed[i]);
    w->n_handed = 0;
}

/* The database (or the stream) failed: nothing more of this worker can be recorded. Its
 * command pipe is closed so it ends after its run; what it sends until then is dropped
 * and its runs stay not done. */
static void local_break(LocalWorker *w, const HsDiag *diag)
{
    sweep_master_fail(w->master, diag);
    w->broken = 1;
    w->len = 0;
    w->n_handed = 0;
    w->stopped = 1;
    if (w->cmd_fd >= 0) close(w->cmd_fd);
    w->cmd_fd = -1;
}

static void local_read(LocalWorker *w)
{
    if (w->cap - w->len < 65536) {
        size_t cap = w->cap ? 2 * w->cap : 131072;
        unsigned char *grown = realloc(w->buf, cap);
        if (grown == NULL) {
            HsDiag d;
            hs_diag_clear(&d);
            hs_diag_set(&d, HS_E_NOMEM, NULL, 0, "out of memory reading a worker's rows");
            local_break(w, &d);
            return;
        }
        w->buf = grown;
        w->cap = cap;
    }
    ssize_t n = read(w->rec_fd, w->buf + w->len, w->cap - w->len);
    if (n < 0 && errno == EINTR) return;
    if (n <= 0) {
        local_reap(w);
        return;
    }
    if (w->broken) return;
    w->len += (size_t)n;
    size_t used = 0;
    HsDiag local;
    hs_diag_clear(&local);
    int status = sweep_replay(&w->replay, w->buf, w->len, &used, &local);
    if (status != HS_OK) {
        local_break(w, &local);
        return;
    }
    memmove(w->buf, w->buf + used, w->len - used);
    w->len -= used;
}

int sweep_drive_local(SweepMaster *m, int jobs, HsDiag *diag)
{
    int n = jobs;
    if (n > m->total) n = (int)m->total;
    if (n < 1) return HS_OK;
    LocalWorker *workers = calloc((size_t)n, sizeof *workers);
    struct pollfd *fds = calloc((size_t)n, sizeof *fds);
    int *slot = calloc((size_t)n, sizeof *slot);
    if (workers == NULL || fds == NULL || slot == NULL) {
        free(workers);
        free(fds);
        free(slot);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    fflush(NULL);
    int started = 0, status = HS_OK;
    for (; started < n; started++) {
        LocalWorker *w = &workers[started];
        int cmd[2], rec[2];
        w->master = m;
        w->cmd_fd = w->rec_fd = -1;
        if (pipe(cmd) != 0) {
            status = hs_diag_set(diag, HS_E_IO, NULL, 0, "pipe: %s", strerror(errno));
            break;
        }
        if (pipe(rec) != 0) {
            status = hs_diag_set(diag, HS_E_IO, NULL, 0, "pipe: %s", strerror(errno));
            close(cmd[0]);
            close(cmd[1]);
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            status = hs_diag_set(diag, HS_E_IO, NULL, 0, "fork: %s", strerror(errno));
            close(cmd[0]);
            close(cmd[1]);
            close(rec[0]);
            close(rec[1]);
            break;
        }
        if (pid == 0) {
            /* The parent's ends of earlier workers' pipes must not stay open here, or a
             * dead worker's end of file would never reach the parent. */
            for (int i = 0; i < started; i++) {
                close(workers[i].cmd_fd);
                close(workers[i].rec_fd);
            }
            close(cmd[1]);
            close(rec[0]);
            signal(SIGPIPE, SIG_DFL);  /* a worker whose parent is gone just ends */
            local_worker_main(m->sweep, cmd[0], rec[1]);
        }
        close(cmd[0]);
        close(rec[1]);
        w->pid = pid;
        w->cmd_fd = cmd[1];
        w->rec_fd = rec[0];
        sweep_replay_init(&w->replay, m->sweep, m->out, local_finished, w);
    }
    if (started == 0) {
        free(workers);
        free(fds);
        free(slot);
        return status;
    }
    if (status != HS_OK) {  /* fewer workers than asked: go on with those */
        if (!m->quiet) fprintf(stderr, "hetsim: %s; going on with %d workers\n", diag->message, started);
        hs_diag_clear(diag);
        status = HS_OK;
    }
    for (int i = 0; i < started; i++) local_assign(&workers[i], started);
    int forwarded = 0;
    for (;;) {
        int n_fds = 0;
        for (int i = 0; i < started; i++)
            if (workers[i].rec_fd >= 0) {
                fds[n_fds] = (struct pollfd){.fd = workers[i].rec_fd, .events = POLLIN};
                slot[n_fds++] = i;
            }
        if (n_fds == 0) break;
        if (sweep_master_stopping(m) && !forwarded) {
            /* A terminal's Ctrl-C reaches the workers too; `kill` of the parent does not. */
            int signo = interrupt_requested() ? interrupt_signal() : SIGTERM;
            for (int i = 0; i < started; i++)
                if (workers[i].rec_fd >= 0) kill(workers[i].pid, signo);
            forwarded = 1;
        }
        int ready = poll(fds, (nfds_t)n_fds, 200);
        if (ready < 0 && errno != EINTR) {
            status = hs_diag_set(diag, HS_E_IO, NULL, 0, "poll: %s", strerror(errno));
            break;
        }
        for (int k = 0; ready > 0 && k < n_fds; k++) {
            if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            LocalWorker *w = &workers[slot[k]];
            local_read(w);
        }
        int alive = 0;
        for (int i = 0; i < started; i++) alive += workers[i].rec_fd >= 0;
        for (int i = 0; i < started; i++)
            if (workers[i].rec_fd >= 0) local_assign(&workers[i], alive);
        sweep_master_tick(m);
    }
    if (status != HS_OK) {
        for (int i = 0; i < started; i++)
            if (workers[i].rec_fd >= 0) {
                kill(workers[i].pid, SIGKILL);
                local_reap(&workers[i]);
            }
    }
    for (int i = 0; i < started; i++) {
        sweep_replay_free(&workers[i].replay);
        free(workers[i].buf);
    }
    free(workers);
    free(fds);
    free(slot);
    return status;
}

/* ---- the command ---- */

static int sweep_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Reads path whole (the text is what every MPI rank resolves). */
static int sweep_read_text(const char *path, char **text, HsDiag *diag)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return hs_diag_set(diag, HS_E_INPUT, path, 0, "cannot open: %s", strerror(errno));
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    int read_error = ferror(f);
    fclose(f);
    if (buf == NULL) return hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
    if (read_error) {
        free(buf);
        return hs_diag_set(diag, HS_E_IO, path, 0, "read error");
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        free(buf);
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "not a text file (contains NUL bytes)");
    }
    *text = buf;
    return HS_OK;
}

/* Decides which runs to do. With --resume, drops the sweep's incomplete runs. */
static int sweep_plan(Store *store, const Sweep *sw, int resume, const char *db_path, int quiet,
                      int64_t **todo, int64_t *n_todo, int64_t *n_kept, int64_t *n_kept_diverged, HsDiag *diag)
{
    StoreSweepRun *runs = NULL;
    int count = 0;
    unsigned char *kept = calloc((size_t)sw->n_runs, 1);
    *todo = malloc((size_t)sw->n_runs * sizeof **todo);
    int status = HS_OK;
    if (kept == NULL || *todo == NULL) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    if ((status = store_list_sweep_runs(store, sw->id, &runs, &count)) != HS_OK) {
        hs_diag_set(diag, status, NULL, 0, "%s", store_error_message(store));
        goto done;
    }
    int64_t done_before = 0, deleted = 0;
    *n_kept_diverged = 0;
    for (int i = 0; i < count; i++)
        if (runs[i].status && strcmp(runs[i].status, "done") == 0) done_before++;
    if (count > 0 && !resume) {
        status = hs_diag_set(diag, HS_E_INPUT, db_path, 0,
                             "already holds %d runs of this sweep (%s, %lld of %lld done); add --resume to "
                             "finish it, or use another --db",
                             count, sw->id, (long long)done_before, (long long)sw->n_runs);
        goto done;
    }
    for (int i = 0; i < count; i++) {
        int64_t index = sweep_find(sw, runs[i].point);
        int complete = runs[i].status != NULL &&
                       (strcmp(runs[i].status, "done") == 0 || strcmp(runs[i].status, "diverged") == 0);
        if (index >= 0 && complete && !kept[index]) {
            kept[index] = 1;
            if (strcmp(runs[i].status, "diverged") == 0) (*n_kept_diverged)++;
            continue;
        }
        /* Incomplete, or a second copy: delete it whole, rows first (one transaction). */
        if ((status = store_delete_run(store, runs[i].run_id)) != HS_OK) {
            hs_diag_set(diag, status, NULL, 0, "%s", store_error_message(store));
            goto done;
        }
        deleted++;
    }
    *n_todo = *n_kept = 0;
    for (int64_t i = 0; i < sw->n_runs; i++) {
        if (kept[i]) (*n_kept)++;
        else (*todo)[(*n_todo)++] = i;
    }
    if (resume && !quiet) {
        if (count == 0)
            fprintf(stderr, "hetsim: no earlier runs of sweep %s in %s; starting it\n", sw->id, db_path);
        else
            fprintf(stderr, "hetsim: resuming sweep %s: %lld of %lld runs kept, %lld incomplete deleted, %lld to run\n",
                    sw->id, (long long)*n_kept, (long long)sw->n_runs, (long long)deleted, (long long)*n_todo);
    }
done:
    store_sweep_runs_free(runs, count);
    free(kept);
    if (status != HS_OK) {
        free(*todo);
        *todo = NULL;
    }
    return status;
}

static void sweep_print_summary(const SweepMaster *m, const char *db_path, int64_t kept, int64_t kept_diverged,
                                FILE *out)
{
    const Sweep *sw = m->sweep;
    fprintf(out, "sweep %s: %lld runs in %s: %lld done", sw->id, (long long)sw->n_runs, db_path,
            (long long)(m->done + kept - kept_diverged));
    if (kept > 0) fprintf(out, " (%lld before this attempt)", (long long)(kept - kept_diverged));
    if (m->failed) fprintf(out, ", %lld failed", (long long)m->failed);
    if (m->diverged + kept_diverged) fprintf(out, ", %lld diverged", (long long)(m->diverged + kept_diverged));
    if (m->interrupted) fprintf(out, ", %lld interrupted", (long long)m->interrupted);
    int64_t not_run = m->total - m->finished;
    if (not_run > 0) fprintf(out, ", %lld not run", (long long)not_run);
    fputc('\n', out);
    if (m->finished == 0) return;
    size_t width = 5;
    for (int64_t i = 0; i < sw->n_runs; i++)
        if (m->state[i] >= SWEEP_STATE_DONE && strlen(sw->labels[i]) > width) width = strlen(sw->labels[i]);
    if (width > 100) width = 100;
    fprintf(out, "%-*s  %-11s  %14s  %8s\n", (int)width, "point", "status", "virtual time s", "accuracy");
    static const char *const names[] = {"todo", "kept", "handed", "done", "failed", "diverged", "interrupted"};
    for (int64_t i = 0; i < sw->n_runs; i++) {
        if (m->state[i] < SWEEP_STATE_DONE) continue;
        char t[32] = "-", a[32] = "-";
        if (isfinite(m->sim_time[i])) snprintf(t, sizeof t, "%.6g", m->sim_time[i]);
        if (isfinite(m->accuracy[i])) snprintf(a, sizeof a, "%.4f", m->accuracy[i]);
        fprintf(out, "%-*s  %-11s  %14s  %8s\n", (int)width, sw->labels[i], names[m->state[i]], t, a);
    }
}

/* Prints the command that finishes the sweep: the same arguments plus --resume. */
static void sweep_print_resume(int argc, char **argv, int resume, int mpi_size)
{
    fputs("hetsim: finish the sweep with: ", stderr);
    if (mpi_size > 1) fprintf(stderr, "mpirun -np %d ", mpi_size);
    fputs("hetsim sweep", stderr);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int plain = a[0] != '\0' && strpbrk(a, " \t'\"$`\\()*?;&|<>") == NULL;
        if (plain) fprintf(stderr, " %s", a);
        else {
            fputs(" '", stderr);
            for (const char *p = a; *p; p++) {
                if (*p == '\'') fputs("'\\''", stderr);
                else fputc(*p, stderr);
            }
            fputc('\'', stderr);
        }
    }
    if (!resume) fputs(" --resume", stderr);
    fputc('\n', stderr);
}

int cli_sweep(int argc, char **argv)
{
    int resume = 0, jobs = 0;
    const char **overrides = calloc((size_t)argc + 1, sizeof *overrides);
    if (overrides == NULL) return cli_fail(HS_E_NOMEM, "out of memory");
    CliScenarioArgs args = {.db_path = "results.db", .overrides = overrides};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(cli_sweep_usage, stdout);
            free(overrides);
            return 0;
        } else if ((strcmp(a, "--jobs") == 0 || strcmp(a, "-j") == 0) && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end != '\0' || end == argv[i] || n < 1 || n > 4096) {
                fprintf(stderr, "hetsim sweep: --jobs needs a number in [1, 4096], got '%s'\n", argv[i]);
                free(overrides);
                return 2;
            }
            jobs = (int)n;
        } else if (strcmp(a, "--resume") == 0) {
            resume = 1;
        } else if (cli_scenario_arg("sweep", cli_sweep_usage, argc, argv, &i, &args) != 0) {
            free(overrides);
            return 2;
        }
    }
    const char *scenario_path = args.scenario_path, *db_path = args.db_path;
    int quiet = args.quiet, n_overrides = args.n_overrides;
    if (scenario_path == NULL) {
        fputs(cli_sweep_usage, stderr);
        free(overrides);
        return 2;
    }
    if (jobs == 0) jobs = sweep_cores();

    /* Under mpirun every rank gets here; only rank 0 talks to the user. */
    int mpi = sweep_mpi_size() > 1, rank = mpi ? sweep_mpi_rank() : 0;
    int talk = rank == 0;
    if (mpi && !sweep_mpi_compiled()) {
        if (talk)
            fprintf(stderr, "hetsim: launched by mpirun with %d ranks, but this hetsim was built without MPI "
                            "(rebuild with mpicc, or run without mpirun and use --jobs)\n", sweep_mpi_size());
        free(overrides);
        return 2;
    }

    HsDiag diag;
    hs_diag_clear(&diag);
    int status = HS_OK, exit_status = 0, mpi_started = 0, ranks_waiting = 0;
    char *text = NULL;
    IniDoc doc;
    Sweep sw;
    Store *store = NULL;
    SweepMaster master;
    int64_t *todo = NULL, n_todo = 0, n_kept = 0, n_kept_diverged = 0;
    memset(&doc, 0, sizeof doc);
    memset(&sw, 0, sizeof sw);
    memset(&master, 0, sizeof master);

    if (mpi) {
        if ((status = sweep_mpi_init(&diag)) != HS_OK) goto fail;
        mpi_started = 1;
    }
    /* Rank 0 reads the file and the other ranks get its text, so only rank 0 needs it. */
    if (talk) status = sweep_read_text(scenario_path, &text, &diag);
    if (mpi) status = sweep_mpi_share_text(&text, status, &diag);
    if (status != HS_OK) goto fail;
    if ((status = inidoc_load_string(scenario_path, text, &doc, &diag)) != HS_OK) goto fail;
    for (int i = 0; i < n_overrides; i++)
        if ((status = inidoc_apply_set(&doc, overrides[i], &diag)) != HS_OK) goto fail;
    if ((status = sweep_parse(&doc, &sw, &diag)) != HS_OK) goto fail;
    if (talk && !quiet)
        for (int i = 0; i < n_overrides; i++)
            for (int a = 0; a < sw.n_axes; a++) {
                char name[2 * INIDOC_NAME_MAX + 2];
                snprintf(name, sizeof name, "%s.%s", sw.axes[a].section, sw.axes[a].key);
                size_t len = strlen(name);
                if (strncmp(overrides[i], name, len) == 0 && (overrides[i][len] == '=' || overrides[i][len] == ' '))
                    fprintf(stderr, "hetsim: note: --set %s is replaced by the swept values of %s (%s:%d)\n",
                            overrides[i], name, scenario_path, sw.axes[a].line);
            }
    if ((status = sweep_resolve(&sw, &diag)) != HS_OK) goto fail;
    /* Every rank resolved the same text the same way; from here the other ranks wait for
     * rank 0's orders, so a failure of rank 0 must tell them to stop. */
    ranks_waiting = mpi;

    if (rank != 0) {
        status = sweep_mpi_work(&sw, &diag);
        if (status != HS_OK) fprintf(stderr, "hetsim: rank %d: %s\n", rank, diag.message);
        exit_status = hs_error_exit_status(status);
        goto cleanup;
    }

    if ((status = store_open(db_path, &store, &diag)) != HS_OK) goto fail;
    status = sweep_plan(store, &sw, resume, db_path, quiet, &todo, &n_todo, &n_kept, &n_kept_diverged, &diag);
    if (status != HS_OK) goto fail;
    if ((status = sweep_master_init(&master, &sw, store_sink(store), todo, n_todo, stderr, quiet)) != HS_OK) {
        hs_diag_set(&diag, status, NULL, 0, "out of memory");
        goto fail;
    }
    if (!quiet)
        fprintf(stderr, "hetsim: sweep %s: %lld runs (%lld points x %d), %lld to run on %d %s\n", sw.id,
                (long long)sw.n_runs, (long long)sw.n_points, sw.repeat, (long long)n_todo,
                mpi ? sweep_mpi_size() : (int)(jobs < n_todo ? jobs : (n_todo > 0 ? n_todo : 1)),
                mpi ? "ranks" : "worker processes");
    interrupt_install();
    signal(SIGPIPE, SIG_IGN);  /* a dead worker's pipe reports EPIPE instead of killing us */
    ranks_waiting = 0;  /* the MPI driver stops them itself, whatever happens */
    status = mpi ? sweep_drive_mpi(&master, &diag) : sweep_drive_local(&master, jobs, &diag);
    sweep_master_end_progress(&master);
    if (status != HS_OK) goto fail;
    if (master.fatal) {
        fprintf(stderr, "hetsim: %s%s%s\n", master.diag.message, store_error_message(store)[0] ? ": " : "",
                store_error_message(store));
        exit_status = 1;
    }
    if (!quiet) sweep_print_summary(&master, db_path, n_kept, n_kept_diverged, stdout);
    /* A diverged run is complete and kept by --resume, but it is not a success. */
    if (master.done + n_kept - n_kept_diverged < sw.n_runs) exit_status = 1;
    if (interrupt_requested() || master.interrupted > 0 || master.finished < master.total) {
        if (interrupt_requested())
            fprintf(stderr, "hetsim: sweep interrupted: %lld of %lld runs done; interrupted runs are marked so in %s\n",
                    (long long)(master.done + n_kept), (long long)sw.n_runs, db_path);
        sweep_print_resume(argc, argv, resume, mpi ? sweep_mpi_size() : 0);
    } else if (master.failed > 0) {
        fprintf(stderr, "hetsim: %lld of %lld runs failed; --resume runs them again\n", (long long)master.failed,
                (long long)sw.n_runs);
    }
    goto cleanup;

fail:
    if (talk) cli_fail(status, diag.message);
    exit_status = hs_error_exit_status(status);
    if (ranks_waiting && talk) sweep_mpi_stop_all();
cleanup:
    store_close(store);
    sweep_master_free(&master);
    free(todo);
    sweep_free(&sw);
    inidoc_free(&doc);
    free(text);
    free(overrides);
    if (mpi_started) sweep_mpi_finalize();
    return exit_status;
}
