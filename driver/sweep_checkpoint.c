/* sweep_checkpoint.c — a helper process that checkpoints a sweep's database while the
 * sweep runs (analysis/store.h: checkpoints by another process). The writer of a sweep
 * of short runs spent an eighth of its time copying the WAL into the database file,
 * serially with its own inserts; a helper does it beside them, on a core the writer does
 * not use (the workers', which wait for the writer when it is the bottleneck). It is
 * forked before the parent opens the database, so it inherits no SQLite state, and
 * opens its own connection when told the file is ready. It checkpoints every
 * SWEEP_CHECKPOINT_SECONDS until its pipe closes (the parent is done or gone), then
 * exits; the parent's closing connection checkpoints what is left. */
#include "driver/sweep.h"

#include "analysis/store.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SWEEP_CHECKPOINT_SECONDS 0.1

static void checkpoint_main(int fd, const char *path)
{
    char go;
    ssize_t n;
    do n = read(fd, &go, 1);
    while (n < 0 && errno == EINTR);
    StoreCheckpointer *c = NULL;
    HsDiag diag;
    hs_diag_clear(&diag);
    if (n == 1 && store_checkpointer_open(path, &c, &diag) == HS_OK) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        for (;;) {
            int ready = poll(&pfd, 1, (int)(SWEEP_CHECKPOINT_SECONDS * 1000));
            if (ready < 0 && errno == EINTR) continue;
            if (ready != 0) break;  /* end of file: the parent is done (or gone) */
            if (store_checkpointer_run(c) != HS_OK) break;
        }
    }
    store_checkpointer_close(c);
    _exit(0);  /* not exit(): the parent's stdio buffers are not ours */
}

int sweep_checkpointer_start(SweepCheckpointer *c, const char *path)
{
    c->pid = -1;
    c->fd = -1;
    int fds[2];
    if (pipe(fds) != 0) return HS_E_IO;
    fflush(NULL);
#ifdef __linux__
    /* The child is born with its name (ps and the tests tell it from the workers by it):
     * named after the fork, it would be "hetsim" for a moment, long enough under a
     * sanitizer for tests/cli/sweep.sh to take it for a worker. */
    char own[16] = {0};
    prctl(PR_GET_NAME, own, 0, 0, 0);
    prctl(PR_SET_NAME, "hetsim-ckpt", 0, 0, 0);
#endif
    pid_t pid = fork();
#ifdef __linux__
    if (pid != 0) prctl(PR_SET_NAME, own, 0, 0, 0);
#endif
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return HS_E_IO;
    }
    if (pid == 0) {
        close(fds[1]);
        signal(SIGINT, SIG_IGN);  /* a terminal's Ctrl-C is the sweep's to handle; EOF ends this */
        checkpoint_main(fds[0], path);
    }
    close(fds[0]);
    c->pid = pid;
    c->fd = fds[1];
    return HS_OK;
}

void sweep_checkpointer_go(SweepCheckpointer *c)
{
    if (c->fd < 0) return;
    char go = 'g';
    ssize_t n;
    do n = write(c->fd, &go, 1);
    while (n < 0 && errno == EINTR);
}

void sweep_checkpointer_stop(SweepCheckpointer *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    if (c->pid > 0)
        while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR) {}
    c->pid = -1;
}
