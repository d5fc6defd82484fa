/* sweep_master.c — the one process that owns a sweep's database writes: the queue of
 * runs still to do and each run's outcome as its records are replayed into the output
 * sink, told to the caller's SweepProgress (the terminal bar is cli/progress.c). Both
 * drivers (local workers, MPI ranks) hand runs out through it, so they share one notion
 * of what is done, failed or left. */
#include "driver/sweep.h"

#include "sim/kernel/interrupt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int sweep_master_init(SweepMaster *m, const Sweep *sweep, Sink out, const int64_t *todo, int64_t n_todo,
                      SweepProgress progress, int quiet)
{
    memset(m, 0, sizeof *m);
    m->sweep = sweep;
    m->out = out;
    m->progress = progress;
    m->quiet = quiet;
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

/* The size of the next claim (sweep.h: SWEEP_CLAIM_SECONDS), from how long the last
 * one lasted. */
static int sweep_master_claim_size(SweepMaster *m)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (m->claim_batch == 0) m->claim_batch = SWEEP_CLAIM_BATCH;
    else if (m->claimed_at.tv_sec != 0 || m->claimed_at.tv_nsec != 0) {
        double since = (double)(now.tv_sec - m->claimed_at.tv_sec) + 1e-9 * (double)(now.tv_nsec - m->claimed_at.tv_nsec);
        if (since < SWEEP_CLAIM_SECONDS && m->claim_batch < SWEEP_CLAIM_BATCH_MAX) m->claim_batch *= 2;
        else if (since > 2 * SWEEP_CLAIM_SECONDS && m->claim_batch > SWEEP_CLAIM_BATCH) m->claim_batch /= 2;
    }
    m->claimed_at = now;
    return m->claim_batch;
}

int64_t sweep_master_take(SweepMaster *m)
{
    while (!sweep_master_stopping(m)) {
        if (m->claim != NULL && m->claimed_head == m->claimed_count) {
            /* claim the next few in one transaction */
            int64_t batch[SWEEP_CLAIM_BATCH_MAX];
            SweepState outcomes[SWEEP_CLAIM_BATCH_MAX];
            int n = 0, want = sweep_master_claim_size(m);
            while (n < want && m->head < m->tail) batch[n++] = m->queue[m->head++];
            if (n == 0) return -1;
            HsDiag diag;
            hs_diag_clear(&diag);
            if (m->claim(m->claim_ctx, batch, n, outcomes, &diag) != HS_OK) {
                m->head -= n;
                sweep_master_fail(m, &diag);
                return -1;
            }
            m->claimed_head = m->claimed_count = 0;
            for (int i = 0; i < n; i++) {
                if (outcomes[i] == SWEEP_STATE_TODO) {
                    m->claimed[m->claimed_count++] = batch[i];
                    continue;
                }
                m->state[batch[i]] = (unsigned char)outcomes[i];
                m->finished++;
                if (outcomes[i] == SWEEP_STATE_HELD) m->held++;
                else m->complete_elsewhere++;
            }
            continue;
        }
        int64_t index;
        if (m->claim != NULL) index = m->claimed[m->claimed_head++];
        else if (m->head < m->tail) index = m->queue[m->head++];
        else return -1;
        m->state[index] = SWEEP_STATE_HANDED;
        return index;
    }
    return -1;
}

int64_t sweep_master_left(const SweepMaster *m)
{
    return sweep_master_stopping(m) ? 0 : m->tail - m->head + (m->claimed_count - m->claimed_head);
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

void sweep_master_tick(SweepMaster *m)
{
    if (m->progress.tick) m->progress.tick(m->progress.ctx, m);
}

void sweep_master_finished(void *ctx, SweepReplay *replay, int64_t index, int status, const char *message)
{
    SweepMaster *m = ctx;
    if (index < 0 || index >= m->sweep->n_runs) return;
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
    if (m->progress.finished) m->progress.finished(m->progress.ctx, m, index, state, status, message);
}
