/* sweep_local.c — the local sweep driver: worker processes forked from this one.
 *
 * Pipe protocol (parent and workers are the same binary after fork): parent -> worker
 * int64 run indices, -1 to stop; worker -> parent the record stream of sweep.h, FINISHED
 * after each run. The parent keeps runs handed to a worker so that it never waits for the
 * parent between runs: up to LOCAL_QUEUE to a lone worker (--jobs 1), topped up once half
 * of them are done, several indices in one write that the worker reads in one read; two
 * each to several workers, one each near the end, so that no worker sits on queued runs
 * while another is idle (local_hand_more). Workers simulate into a SweepWire sink; the parent
 * replays what arrives into the SweepMaster, so one process writes the database and a
 * killed worker leaves only its open run, which the parent marks failed.
 * Short runs arrive faster than it pays to wake up for: each wake-up of the parent (a
 * poll, a read, a context switch: several µs of system time on a paravirtualised VM,
 * against ~0.1 ms of simulation for a small run) is spaced LOCAL_WAKE_GAP_NS at least,
 * so it reads several runs' records at once. The records wait in the pipe meanwhile,
 * exactly as they were written, so the rows, their order and what a killed worker or
 * parent leaves are the same; only when they reach the database moves, by < 1 ms. */
#include "sim/kernel/interrupt.h"
#include "driver/sweep.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Runs handed to a lone worker at most; a top-up waits until half of them are done. */
enum { LOCAL_QUEUE = 16 };
/* The least time between two wake-ups of the parent (see the top). */
#define LOCAL_WAKE_GAP_NS 500000L

typedef struct LocalWorker {
    SweepMaster *master;
    pid_t pid;
    int cmd_fd, rec_fd;      /* the parent's ends; -1 once closed */
    unsigned char *buf;      /* bytes read and not yet replayed */
    size_t len, cap;
    SweepReplay replay;
    int64_t handed[LOCAL_QUEUE];  /* oldest first: handed[0] is running or next */
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

static int local_flush(void *ctx, const void *data, size_t len)
{
    return sweep_write_all(*(int *)ctx, data, len);
}

/* A worker's commands as they arrive: one read takes every index written so far. */
typedef struct LocalCommands {
    int fd;
    unsigned char buf[LOCAL_QUEUE * sizeof(int64_t)];
    size_t head, len;
} LocalCommands;

static int local_next_command(LocalCommands *c, int64_t *index)
{
    if (c->len - c->head < sizeof *index) {
        memmove(c->buf, c->buf + c->head, c->len - c->head);
        c->len -= c->head;
        c->head = 0;
        while (c->len < sizeof *index) {
            ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return HS_E_IO;
            c->len += (size_t)n;
        }
    }
    memcpy(index, c->buf + c->head, sizeof *index);
    c->head += sizeof *index;
    return HS_OK;
}

/* The child: runs what it is handed until told to stop or the parent goes away. */
static void local_worker_main(const Sweep *sw, int cmd_fd, int rec_fd)
{
    SweepWire wire = {0};
    SweepRunner runner;
    sweep_runner_init(&runner, sw);
    LocalCommands commands = {.fd = cmd_fd};
    int64_t index;
    while (local_next_command(&commands, &index) == HS_OK && index >= 0) {
        HsDiag diag;
        hs_diag_clear(&diag);
        int status;
        if (interrupt_requested()) {
            status = hs_diag_set(&diag, HS_E_INTERRUPTED, NULL, 0, "interrupted before it started");
        } else {
            Sink sink = sweep_wire_sink(&wire, index, local_flush, &rec_fd);
            status = sweep_runner_run(&runner, index, sink, &diag);
        }
        sweep_wire_run_returned(&wire);  /* keeps its END for FINISHED's write */
        if (sweep_wire_finished(&wire, index, status, diag.message) != HS_OK) break;
    }
    sweep_wire_free(&wire);
    sweep_runner_free(&runner);
    _exit(0);  /* not exit(): the parent's stdio buffers and database are not ours */
}

static void local_finished(void *ctx, SweepReplay *replay, int64_t index, int status, const char *message)
{
    LocalWorker *w = ctx;
    if (w->n_handed > 0 && w->handed[0] == index) {
        memmove(w->handed, w->handed + 1, (size_t)(w->n_handed - 1) * sizeof w->handed[0]);
        w->n_handed--;
    }
    sweep_master_finished(w->master, replay, index, status, message);
}

/* Whether a worker with queued runs gets one more, left runs being still to hand out. A
 * lone worker takes no one's runs: it gets up to LOCAL_QUEUE. With several, a second
 * one while every worker could have one, never a third: a worker that is slow or
 * descheduled (a shared machine) must not sit on runs the others could take, and with
 * deeper queues two jobs of 200 small runs took longer (farm-bench, median wall 1.07-1.13
 * of main's at load ~7; the CPU as main's). */
static int local_hand_more(int queued, int64_t left, int n_alive)
{
    if (queued == 0 || n_alive == 1) return 1;
    return queued == 1 && left >= n_alive;
}

/* Tops w's queue up in one write once half of it is done (local_hand_more says how far). */
static void local_assign(LocalWorker *w, int n_alive)
{
    SweepMaster *m = w->master;
    int64_t batch[LOCAL_QUEUE];
    int n = 0;
    if (!w->stopped && w->cmd_fd >= 0 && w->n_handed <= LOCAL_QUEUE / 2)
        while (w->n_handed + n < LOCAL_QUEUE) {
            if (!local_hand_more(w->n_handed + n, sweep_master_left(m), n_alive)) break;
            int64_t index = sweep_master_take(m);
            if (index < 0) break;
            batch[n++] = index;
        }
    if (n > 0) {
        if (sweep_write_all(w->cmd_fd, batch, (size_t)n * sizeof batch[0]) != HS_OK) {
            /* it died; its end of file comes next */
            for (int i = n - 1; i >= 0; i--) sweep_master_give_back(m, batch[i]);
        } else {
            memcpy(w->handed + w->n_handed, batch, (size_t)n * sizeof batch[0]);
            w->n_handed += n;
        }
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

/* Sleeps what is left of LOCAL_WAKE_GAP_NS since *last (the last wake-up that read
 * something), but only while every worker has a run queued behind the one it is on: a
 * pause then holds no worker up (16 queued last a small run's worker ~2 ms). */
static void local_pace(const struct timespec *last, const LocalWorker *workers, int started)
{
    if (last->tv_sec == 0 && last->tv_nsec == 0) return;
    for (int i = 0; i < started; i++)
        if (workers[i].rec_fd >= 0 && workers[i].n_handed < 2) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed = (long)(now.tv_sec - last->tv_sec) * 1000000000L + (now.tv_nsec - last->tv_nsec);
    if (elapsed < 0 || elapsed >= LOCAL_WAKE_GAP_NS) return;
    struct timespec pause = {0, LOCAL_WAKE_GAP_NS - elapsed};
    nanosleep(&pause, NULL);  /* EINTR (SIGINT) ends it early: the loop sees it next */
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
    struct timespec last_wake = {0, 0};
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
        if (!sweep_master_stopping(m)) local_pace(&last_wake, workers, started);
        int ready = poll(fds, (nfds_t)n_fds, 200);
        if (ready > 0) clock_gettime(CLOCK_MONOTONIC, &last_wake);
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

