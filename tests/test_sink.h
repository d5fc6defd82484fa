/* test_sink.h — a Sink that records every row as a line of text, so tests can compare
 * runs (determinism), check accounting, and diff against golden files. The lines come
 * from the row tables of sim/kernel/sink.h (test_sink.c says which columns): wall-clock
 * columns (wall_s, solve_ms) and the scenario path are left out of the text. */
#ifndef TESTS_TEST_SINK_H
#define TESTS_TEST_SINK_H

#include "sim/kernel/sink.h"

#include <stddef.h>

typedef struct TestSink {
    char *text;       /* every row, one line each */
    size_t len, cap;
    int rounds, agent_rows, pairings, metrics;
    int ended;
    SinkStatus status;
    double last_t_end;
    double last_epsilon;  /* of the last metric with [privacy]; NaN when none */
    SinkMetric first_domains; /* the first metric with domain accuracies */
    int domain_metrics;       /* how many there were */
    /* the last round's rows, for accounting checks */
    SinkRound round_rows[256];
    SinkAgentRound *agent_round_rows; /* rows of the last round */
    int n_agent_round_rows;
} TestSink;

Sink test_sink_init(TestSink *sink);
void test_sink_free(TestSink *sink);
/* The test accuracy of the last metrics row of the averaged model or an agent; NaN when
 * the run wrote none. */
double test_sink_last_accuracy(const TestSink *sink);
/* The text's round, agent_round and pairing lines (the timings: pairing lines end with the
 * solver's name, the wall-clock solve_ms is not in the text), malloc'd; the caller frees. */
char *test_sink_timing_lines(const TestSink *sink);

#endif
