/* progress.h — telling the user how far things have got, on stderr: a redrawn bar on a
 * terminal, one plain line per step otherwise; stdout stays free for results.
 *  - a run: a sink that forwards to another sink: a start line, then a line or the bar
 *    per round (and within slow rounds), with elapsed wall time and an ETA;
 *  - a sweep: the SweepProgress of the sweep's master (driver/sweep.h), a line or the
 *    bar per finished run, and each failed or diverged run's message. */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

#include "driver/sweep.h"
#include "sim/kernel/sink.h"

#include <stdio.h>

/* What the start line and the ETA of a run need to know (cli_run.c fills it). */
typedef struct ProgressRun {
    const char *label;      /* run name, shown on each line */
    const char *scenario;   /* the scenario file as given */
    const char *db_path;    /* the database the rows go to */
    int agents;
    int total_rounds;       /* 0 when the run stops on time or accuracy only */
    double time_budget;     /* s of virtual time; inf when none */
    double target_accuracy; /* 0 when none */
} ProgressRun;

typedef struct ProgressSink {
    Sink inner;
    FILE *out;
    int quiet;
    int is_terminal;
    ProgressRun run;
    int64_t run_id;
    int train;              /* train mode: an event may be a real training step */
    unsigned ticks;         /* engine events since the last look at the clock */
    double last_accuracy;
    int rounds_done;
    double started, last_draw; /* monotonic wall clock */
    double round_wall_start;   /* when the running round began */
    double last_round_wall;    /* the last round's wall time: the share of a round done */
} ProgressSink;

/* Wraps inner: prints a start line (run id, scenario, method, agents, mode, rounds, the
 * database) when the run begins, then a bar on a terminal (redrawn at every round end
 * and, when rounds are slow, every half second within a round) or one line per round
 * otherwise (and one every 10 s within a slow round), with the wall time elapsed and an
 * ETA from the share of rounds (or of the time budget) done. The returned Sink points
 * at *progress, which must outlive it; run's strings too. */
Sink progress_sink(ProgressSink *progress, Sink inner, FILE *out, int quiet, const ProgressRun *run);

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
