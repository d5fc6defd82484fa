/* progress.h — telling the user how far things have got, on stderr: a redrawn bar on a
 * terminal, one plain line per step otherwise; stdout stays free for results.
 *  - a run: a sink that forwards to another sink, a line or the bar per round;
 *  - a sweep: the SweepProgress of the sweep's master (driver/sweep.h), a line or the
 *    bar per finished run, and each failed or diverged run's message. */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

#include "driver/sweep.h"
#include "sim/kernel/sink.h"

#include <stdio.h>

typedef struct ProgressSink {
    Sink inner;
    FILE *out;
    int quiet;
    int is_terminal;
    int total_rounds;   /* 0 when the run stops on time or accuracy */
    double last_accuracy;
    const char *label;  /* run name shown on each line */
} ProgressSink;

/* Wraps inner; the returned Sink points at *progress, which must outlive it. */
Sink progress_sink(ProgressSink *progress, Sink inner, FILE *out, int quiet, int total_rounds,
                   const char *label);

typedef struct SweepBar {
    FILE *out;
    int quiet, is_terminal;
    double started, last_draw;  /* monotonic wall clock, for the ETA */
} SweepBar;

/* The sweep master's progress, drawn on out; *bar must outlive the sweep. */
SweepProgress sweep_bar(SweepBar *bar, FILE *out, int quiet);
/* The bar's final state and a newline (on a terminal). */
void sweep_bar_end(SweepBar *bar, const SweepMaster *m);

#endif
