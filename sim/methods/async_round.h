/* async_round.h — the round rule of the asynchronous methods (ripples, divshare, swift;
 * adpsgd keeps its own copy of it): round r ends when every agent has completed r+1
 * passes over its own data (sim_agent_steps local steps each). Agents never wait at a
 * round boundary, so fast agents may be epochs ahead; their extra steps count in the
 * round they happen in. */
#ifndef SIM_METHODS_ASYNC_ROUND_H
#define SIM_METHODS_ASYNC_ROUND_H

#include "sim/methods/method.h"

#include <math.h>

typedef struct AsyncRound {
    int round;
    int behind; /* agents that have not finished round+1 epochs */
} AsyncRound;

/* At round_begin, with steps[i] the local steps agent i has done in all rounds. Returns 1
 * (and ends the round) when nobody is behind already. */
static inline int async_round_begin(AsyncRound *ar, Sim *sim, int round, const long *steps)
{
    ar->round = round;
    ar->behind = 0;
    for (int i = 0; i < sim->world.n; i++)
        if (steps[i] < (long)(round + 1) * sim_agent_steps(sim, i)) ar->behind++;
    if (ar->behind > 0) return 0;
    engine_end_round(sim->engine);
    return 1;
}

/* Agent i has just done its steps-th local step. Returns 1 (and ends the round) when
 * that step completed the round. */
static inline int async_round_step(AsyncRound *ar, Sim *sim, int i, long steps)
{
    if (steps != (long)(ar->round + 1) * sim_agent_steps(sim, i) || --ar->behind > 0) return 0;
    engine_end_round(sim->engine);
    return 1;
}

/* 1 when agent i, whose next computation finishes at `finish`, is offline for good while
 * the run still needs its steps: the others would go on forever while the round waits. */
static inline int async_round_stranded(const Sim *sim, int i, long steps, double finish)
{
    return !isfinite(finish) && (sim->sc->rounds <= 0 || steps < (long)sim->sc->rounds * sim_agent_steps(sim, i));
}

#endif
