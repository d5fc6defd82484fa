/* workers.h — a fixed pool of threads that runs batches of independent tasks.
 * workers_run(w, n, fn, ctx) calls fn(ctx, task, slot) once for every task 0..n-1 and
 * returns when all have returned. The calling thread works too, as slot 0; the pool's
 * threads are slots 1..threads-1, and no two run the same slot at once, so a task may use
 * per-slot scratch memory. Which slot runs which task varies from run to run: a task's
 * result must depend on the task only (the trainer's jobs do: each task is one agent's
 * queue, computed in a fixed order with whatever slot's scratch).
 * Workload: a handful of coarse tasks (milliseconds each) per call, thousands of calls per
 * run; one mutex guards the task counter, which costs nothing at that grain. */
#ifndef SIM_WORKERS_H
#define SIM_WORKERS_H

typedef struct Workers Workers;
typedef void (*WorkersTask)(void *ctx, int task, int slot);

/* threads >= 1; threads - 1 pthreads are started (none for 1). HS_E_NOMEM, or
 * HS_E_INTERNAL when the system refuses a thread. The caller frees *out. */
int workers_create(int threads, Workers **out);
void workers_free(Workers *w);
int workers_threads(const Workers *w);
/* Runs tasks 0..n_tasks-1 and waits for them. Not reentrant: fn must not call it. */
void workers_run(Workers *w, int n_tasks, WorkersTask fn, void *ctx);

/* The machine's online processors (at least 1). */
int workers_online_cpus(void);

#endif
