/* trainer_ranks.c — one train-mode run across MPI ranks (`mpirun -np K hetsim run`).
 *
 * Every rank plays the same run: world, engine, virtual clock and method, which are
 * deterministic and cheap beside the training. Only the arithmetic of the agents' steps
 * is divided: agent i belongs to rank floor(i K / N) (contiguous blocks), and that rank
 * alone draws the agent's batches, runs its queued steps and keeps its true optimiser
 * state and split copies. Every other rank keeps a replica of the agent's parameters
 * that may be stale; Trainer.remote says, identically on every rank, which replicas are
 * stale. Vectors move only where a method reads or combines other agents' parameters,
 * all inside the trainer, so no method knows about ranks:
 *   queued steps (local, split, pruned, frozen, DP-SGD)  run by the owner; the flush
 *       shares every job's status and loss, so losses add up in queued order everywhere;
 *   trainer_params                  broadcasts a stale replica from its owner first;
 *   trainer_average*, evaluation    the stale members' parameters are broadcast, then
 *       every rank computes the same average (same inputs, same summation order);
 *   shared gradients (sync)         each owner computes its members' gradients, and the
 *       sum, in member order, travels from owner to owner (an ordered fold), then is
 *       broadcast: the very additions of one process, in its order;
 *   a gradient handed back at once (trainer_gradient*, dpsgd, compressed sync, asgd,
 *       token)                      the owner computes it and broadcasts it: correct, but
 *       the ranks take turns (no speed-up there);
 *   optimiser steps asked by a method   every rank steps its replica, unless the owner's
 *       optimiser state has moved on alone (after queued steps): then the owner steps and
 *       broadcasts the parameters.
 * Method-side arithmetic on vectors (mixing, compression, robust aggregation) is thus
 * repeated on every rank on identical inputs and stays identical. Evaluation's test
 * batches are divided between the ranks and their losses gathered, so the figures are
 * model_evaluate's. Rows are therefore bitwise those of one process for any rank count;
 * tests/cli/mpi_run.sh and tests/mpi_rows.c hold that.
 * Memory: every rank holds every agent's model (replicas), so ranks divide time, not
 * memory. Messages use a duplicate of MPI_COMM_WORLD; MPI errors are fatal (the run
 * could not go on consistently anyway).
 * Without MPI compiled in (make MPI=0) trainer_ranks_create refuses and the rest is
 * never reached. */
#include "sim/train/trainer_internal.h"

#include <stdlib.h>
#include <string.h>

int trainer_owner(const Trainer *t, int agent)
{
    return t->n_ranks > 1 ? (int)((long long)agent * t->n_ranks / t->n_agents) : 0;
}

int trainer_mine(const Trainer *t, int agent)
{
    return trainer_owner(t, agent) == t->rank;
}

#if HS_HAVE_MPI

#include <mpi.h>

struct TrainerRanks {
    MPI_Comm comm;
    int rank, size;
    long steps_mine, steps_all; /* trainer_ranks_steps */
};

enum { TRAINER_TAG_FOLD = 17 };

int trainer_ranks_create(TrainerRanks **out, HsDiag *diag)
{
    *out = NULL;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) return hs_diag_set(diag, HS_E_INTERNAL, NULL, 0, "MPI is not initialised");
    TrainerRanks *r = calloc(1, sizeof *r);
    if (r == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    MPI_Comm_dup(MPI_COMM_WORLD, &r->comm);
    MPI_Comm_set_errhandler(r->comm, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_rank(r->comm, &r->rank);
    MPI_Comm_size(r->comm, &r->size);
    *out = r;
    return HS_OK;
}

void trainer_ranks_free(TrainerRanks *r)
{
    if (r == NULL) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&r->comm);
    free(r);
}

int trainer_ranks_rank(const TrainerRanks *r)
{
    return r ? r->rank : 0;
}

int trainer_ranks_size(const TrainerRanks *r)
{
    return r ? r->size : 1;
}

int trainer_ranks_agree(TrainerRanks *r, int status, int *failed_rank)
{
    if (failed_rank) *failed_rank = status != HS_OK ? 0 : -1;
    if (r == NULL) return status;
    /* (rank, status) of the lowest rank that failed, by MINLOC on the rank */
    int mine[2] = {status != HS_OK ? r->rank : r->size, status}, first[2];
    MPI_Allreduce(mine, first, 1, MPI_2INT, MPI_MINLOC, r->comm);
    if (failed_rank) *failed_rank = first[0] == r->size ? -1 : first[0];
    return first[0] == r->size ? HS_OK : first[1];
}

void trainer_ranks_barrier(TrainerRanks *r)
{
    if (r) MPI_Barrier(r->comm);
}

void trainer_ranks_abort(TrainerRanks *r, int code)
{
    MPI_Abort(r ? r->comm : MPI_COMM_WORLD, code);
}

void trainer_ranks_bcast(Trainer *t, int root, void *buf, size_t bytes)
{
    /* in pieces below INT_MAX bytes: MPI counts are ints */
    unsigned char *p = buf;
    for (size_t done = 0; done < bytes;) {
        size_t piece = bytes - done < (size_t)1 << 30 ? bytes - done : (size_t)1 << 30;
        MPI_Bcast(p + done, (int)piece, MPI_BYTE, root, t->ranks->comm);
        done += piece;
    }
}

void trainer_ranks_share_params(Trainer *t, int agent)
{
    if (t->ranks == NULL || !(t->remote[agent] & TRAINER_REMOTE_PARAMS)) return;
    trainer_ranks_bcast(t, trainer_owner(t, agent), model_params(t->models[agent]), t->n_params * sizeof(float));
    t->remote[agent] &= (unsigned char)~TRAINER_REMOTE_PARAMS;
}

void trainer_ranks_share_members(Trainer *t, const int *members, int n_members)
{
    for (int k = 0; t->ranks && k < n_members; k++) trainer_ranks_share_params(t, members ? members[k] : k);
}

int trainer_ranks_share_results(Trainer *t, TrainerResult *results, const int *agents, int n)
{
    if (t->ranks == NULL || n == 0) return HS_OK;
    int size = t->ranks->size;
    int *counts = calloc((size_t)size * 2, sizeof *counts), *displs = counts ? counts + size : NULL;
    TrainerResult *mine = malloc((size_t)n * sizeof *mine), *all = malloc((size_t)n * sizeof *all);
    int status = counts && mine && all ? HS_OK : HS_E_NOMEM;
    if (status == HS_OK) {
        int k_mine = 0;
        for (int k = 0; k < n; k++) {
            int owner = trainer_owner(t, agents[k]);
            counts[owner] += (int)sizeof *all;
            if (owner == t->rank) mine[k_mine++] = results[k];
        }
        for (int r = 1; r < size; r++) displs[r] = displs[r - 1] + counts[r - 1];
        MPI_Allgatherv(mine, k_mine * (int)sizeof *mine, MPI_BYTE, all, counts, displs, MPI_BYTE, t->ranks->comm);
        /* rank r's items came in item order: walk them back into place */
        for (int r = 0; r < size; r++) displs[r] /= (int)sizeof *all;
        for (int k = 0; k < n; k++) results[k] = all[displs[trainer_owner(t, agents[k])]++];
    } else {
        /* the others are in the Allgatherv: this rank cannot go on consistently */
        MPI_Abort(t->ranks->comm, 1);
    }
    free(counts);
    free(mine);
    free(all);
    return status;
}

void trainer_ranks_fold(Trainer *t, const int *members, int n_members, const float *own, float *sum)
{
    int rank = t->ranks->rank, k_own = 0, last = -1;
    size_t n = t->n_params;
    memset(sum, 0, n * sizeof *sum);
    for (int k = 0; k < n_members; k++) {
        int owner = trainer_owner(t, members ? members[k] : k);
        if (owner != last && last >= 0) {
            /* the running sum moves from the last member's owner to this one's */
            if (rank == last) MPI_Send(sum, (int)n, MPI_FLOAT, owner, TRAINER_TAG_FOLD, t->ranks->comm);
            else if (rank == owner)
                MPI_Recv(sum, (int)n, MPI_FLOAT, last, TRAINER_TAG_FOLD, t->ranks->comm, MPI_STATUS_IGNORE);
        }
        if (owner == rank) vec_axpy(sum, 1.0f, own + (size_t)k_own++ * n, n);
        last = owner;
    }
    if (last >= 0) trainer_ranks_bcast(t, last, sum, n * sizeof *sum);
}

void trainer_ranks_gather_batches(Trainer *t, int n_batches, double *batch_loss, int *batch_correct)
{
    int size = t->ranks->size;
    int *counts = malloc((size_t)size * 2 * sizeof *counts);
    if (counts == NULL) MPI_Abort(t->ranks->comm, 1);
    int *displs = counts + size;
    for (int r = 0; r < size; r++) {
        int first, count;
        trainer_ranks_batches(t, n_batches, r, &first, &count);
        counts[r] = count;
        displs[r] = first;
    }
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DOUBLE, batch_loss, counts, displs, MPI_DOUBLE, t->ranks->comm);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_INT, batch_correct, counts, displs, MPI_INT, t->ranks->comm);
    free(counts);
}

#else /* without MPI: a run is one process */

struct TrainerRanks {
    long steps_mine, steps_all;
};

int trainer_ranks_create(TrainerRanks **out, HsDiag *diag)
{
    *out = NULL;
    return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "this hetsim was built without MPI");
}

void trainer_ranks_free(TrainerRanks *r)
{
    free(r);
}

int trainer_ranks_rank(const TrainerRanks *r)
{
    return 0;
}

int trainer_ranks_size(const TrainerRanks *r)
{
    return 1;
}

int trainer_ranks_agree(TrainerRanks *r, int status, int *failed_rank)
{
    if (failed_rank) *failed_rank = status != HS_OK ? 0 : -1;
    return status;
}

void trainer_ranks_barrier(TrainerRanks *r)
{
}

void trainer_ranks_abort(TrainerRanks *r, int code)
{
    abort();
}

void trainer_ranks_bcast(Trainer *t, int root, void *buf, size_t bytes)
{
}

void trainer_ranks_share_params(Trainer *t, int agent)
{
}

void trainer_ranks_share_members(Trainer *t, const int *members, int n_members)
{
}

int trainer_ranks_share_results(Trainer *t, TrainerResult *results, const int *agents, int n)
{
    return HS_OK;
}

void trainer_ranks_fold(Trainer *t, const int *members, int n_members, const float *own, float *sum)
{
}

void trainer_ranks_gather_batches(Trainer *t, int n_batches, double *batch_loss, int *batch_correct)
{
}

#endif

void trainer_ranks_note_steps(Trainer *t, long mine, long all)
{
    if (t->ranks == NULL) return;
    t->ranks->steps_mine += mine;
    t->ranks->steps_all += all;
}

void trainer_ranks_steps(const TrainerRanks *r, long *mine, long *all)
{
    *mine = r ? r->steps_mine : 0;
    *all = r ? r->steps_all : 0;
}

void trainer_ranks_batches(const Trainer *t, int n_batches, int rank, int *first, int *count)
{
    int size = t->n_ranks > 1 ? t->n_ranks : 1;
    *first = (int)((long long)n_batches * rank / size);
    *count = (int)((long long)n_batches * (rank + 1) / size) - *first;
}

int trainer_use_ranks(Trainer *t, TrainerRanks *ranks)
{
    if (t == NULL || ranks == NULL || trainer_ranks_size(ranks) < 2) return HS_OK;
    if (t->models || t->shared) return hs_diag_set(t->diag, HS_E_INTERNAL, NULL, 0, "ranks set after the models");
    t->ranks = ranks;
    t->rank = trainer_ranks_rank(ranks);
    t->n_ranks = trainer_ranks_size(ranks);
    if ((t->remote = calloc((size_t)t->n_agents, sizeof *t->remote)) == NULL)
        return hs_diag_set(t->diag, HS_E_NOMEM, NULL, 0, "out of memory");
    return HS_OK;
}
