/* progress.h — a sink that forwards to another sink and tells the user how far a run
 * has got, on stderr: a redrawn bar on a terminal, one plain line per round otherwise.
 * stdout stays free for results. */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

#include "sim/sink.h"

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

#endif
