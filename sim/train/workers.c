/* workers.c — the thread pool of workers.h: a generation counter wakes the threads for a
 * batch, tasks are handed out under one mutex, the caller drains tasks too and then waits
 * until no thread is inside a task. */
#include "sim/train/workers.h"

#include "base/hs_error.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct WorkerThread {
    struct Workers *pool;
    int slot;
    pthread_t id;
} WorkerThread;

struct Workers {
    int threads;
    WorkerThread *members;   /* (threads - 1) */
    int started;             /* threads actually running */
    pthread_mutex_t lock;
    pthread_cond_t wake, finished;
    unsigned generation;     /* bumped for every batch */
    int stopping;
    /* the batch, guarded by lock */
    WorkersTask fn;
    void *ctx;
    int n_tasks, next_task;
    int running;             /* threads inside workers_drain */
};

/* Takes tasks until none is left. */
static void workers_drain(Workers *w, int slot)
{
    for (;;) {
        pthread_mutex_lock(&w->lock);
        if (w->next_task >= w->n_tasks) {
            pthread_mutex_unlock(&w->lock);
            return;
        }
        int task = w->next_task++;
        WorkersTask fn = w->fn;
        void *ctx = w->ctx;
        pthread_mutex_unlock(&w->lock);
        fn(ctx, task, slot);
    }
}

static void *workers_main(void *arg)
{
    WorkerThread *self = arg;
    Workers *w = self->pool;
    unsigned seen = 0;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->stopping && w->generation == seen) pthread_cond_wait(&w->wake, &w->lock);
        if (w->stopping) break;
        seen = w->generation;
        w->running++;
        pthread_mutex_unlock(&w->lock);
        workers_drain(w, self->slot);
        pthread_mutex_lock(&w->lock);
        if (--w->running == 0) pthread_cond_broadcast(&w->finished);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int workers_create(int threads, Workers **out)
{
    *out = NULL;
    if (threads < 1) threads = 1;
    Workers *w = calloc(1, sizeof *w);
    if (w == NULL) return HS_E_NOMEM;
    w->threads = threads;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->finished, NULL);
    if (threads > 1 && (w->members = calloc((size_t)threads - 1, sizeof *w->members)) == NULL) {
        workers_free(w);
        return HS_E_NOMEM;
    }
    for (int k = 0; k < threads - 1; k++) {
        w->members[k] = (WorkerThread){.pool = w, .slot = k + 1};
        if (pthread_create(&w->members[k].id, NULL, workers_main, &w->members[k]) != 0) {
            workers_free(w);
            return HS_E_INTERNAL;
        }
        w->started++;
    }
    *out = w;
    return HS_OK;
}

void workers_free(Workers *w)
{
    if (w == NULL) return;
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    for (int k = 0; k < w->started; k++) pthread_join(w->members[k].id, NULL);
    pthread_cond_destroy(&w->finished);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w->members);
    free(w);
}

int workers_threads(const Workers *w)
{
    return w ? w->threads : 1;
}

void workers_run(Workers *w, int n_tasks, WorkersTask fn, void *ctx)
{
    if (n_tasks <= 0) return;
    if (w == NULL || w->threads == 1 || n_tasks == 1) {
        /* nothing to share: no wake-up round trip */
        for (int task = 0; task < n_tasks; task++) fn(ctx, task, 0);
        return;
    }
    pthread_mutex_lock(&w->lock);
    w->fn = fn;
    w->ctx = ctx;
    w->n_tasks = n_tasks;
    w->next_task = 0;
    w->generation++;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    workers_drain(w, 0);
    /* every task is taken; wait for the threads still inside one */
    pthread_mutex_lock(&w->lock);
    while (w->running > 0) pthread_cond_wait(&w->finished, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

int workers_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (n > 1024 ? 1024 : (int)n) : 1;
}
