/* trace_markov.h — on/off two-state continuous-time Markov processes as trace series drawn on
 * demand: `[agents] availability = markov(MEAN_UP, MEAN_DOWN)` and `[agents] outage =
 * markov(MEAN_UP, MEAN_DOWN)` (docs/network.md "Unstable links", docs/scenarios.md).
 *
 * A node's process starts up at t = 0 and alternates exponential durations: up with mean
 * MEAN_UP, down with mean MEAN_DOWN. Its rows are a TraceSeries like a trace file's
 * (value 1 up, 0 down), so every query of sim/kernel/trace.h and every user of a trace
 * (the engine's clocks, maxmin's link capacities) works on it unchanged; the series is
 * drawn only as far as the queries ask (trace.c calls markov_cover), from the node's own
 * stream seeded from (seed, node, purpose). Drawing order is the series' own time order,
 * so what a node's series holds does not depend on who asked first, nor when: the same
 * seed gives the same process whatever the events, threads or jobs.
 *
 * Workload: up to millions of nodes, a handful of rows each at a time; the engine drops
 * the rows that ended before the current round (markov_forget_before), so memory follows
 * the changes within a round, not the run's length. */
#ifndef SIM_KERNEL_TRACE_MARKOV_H
#define SIM_KERNEL_TRACE_MARKOV_H

#include "base/hs_error.h"
#include "sim/kernel/trace.h"

#include <stdint.h>

/* Makes *s the series of a process with the given means (seconds, > 0 and finite), drawn
 * from the stream (seed, node, purpose): rows (0, 1) and its first change. diag receives
 * an allocation failure while drawing later (the engine checks it after every event).
 * HS_OK or HS_E_NOMEM (free *s with markov_series_free all the same). */
int markov_series_init(TraceSeries *s, double mean_up, double mean_down, uint64_t seed, uint64_t node,
                       uint64_t purpose, HsDiag *diag);
/* Frees the rows and the generator (accepts a zeroed series). */
void markov_series_free(TraceSeries *s);
/* Draws rows until the last one is after t (t finite), so that the value at t and the
 * next change after t are known. The series is logically constant (a function of its
 * seed): drawing only writes down more of it. Out of memory: diag is set, no row added. */
void markov_cover(TraceSeries *s, double t);
/* Drops the rows that ended at or before t (keeping the one in force at t); queries
 * before t are then no longer answered. For the engine at a round's start. */
void markov_forget_before(TraceSeries *s, double t);

/* A copy of the markov() series s that goes on drawing the same process (its generator's
 * state copied; its diag s's): a battery's engine copy (sim/kernel/engine.c). HS_OK or
 * HS_E_NOMEM (free *out with markov_series_free all the same). */
int markov_series_clone(const TraceSeries *s, TraceSeries *out);
/* Cuts an outage into the process: offline on [a, b) (b INFINITY: for good), the process
 * elsewhere, so the series is online when both the process and the cut say so. a at or
 * after the first row kept. HS_OK, HS_E_NOMEM (the series unchanged), or the diag's
 * status when drawing up to b failed. */
int markov_series_offline(TraceSeries *s, double a, double b);

#endif
