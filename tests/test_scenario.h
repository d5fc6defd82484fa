/* test_scenario.h — a scenario given as text, resolved or run in the suites. */
#ifndef TESTS_TEST_SCENARIO_H
#define TESTS_TEST_SCENARIO_H

#include "sim/run.h"
#include "tests/test_sink.h"

/* Resolves text (named "t.ini" in messages) with the n `--set` overrides applied in order;
 * HS_OK, or the error with its message in diag. */
int test_resolve(const char *text, const char *const *set, int n, Scenario *sc, HsDiag *diag);
/* test_resolve, then the run into ts (test_sink_init); the first error, message in diag. */
int test_run(const char *text, const char *const *set, int n, TestSink *ts, HsDiag *diag);

#endif
