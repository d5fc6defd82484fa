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

/* The test fails unless status is HS_E_INPUT and diag's message starts with prefix and
 * holds fragment; what names the input in the failure's message. */
void test_expect_input_error(int status, const HsDiag *diag, const char *what, const char *prefix,
                             const char *fragment);
/* Resolves base with extra appended (and the n overrides) and expects that input error. */
void test_expect_resolve_error(const char *base, const char *extra, const char *const *set, int n,
                               const char *prefix, const char *fragment);

/* The typed value of the running method's [method] key `key`, read through its schema
 * row (an int field as a double: a choice is its index); aborts the case when the
 * method has no such key. The methods read their own struct; the suites, which do not
 * see it, read here. */
double test_method_key(const Scenario *sc, const char *key);

/* How the running method's key `key` was written (sc->params), NULL when it has none. */
const MethodParam *test_method_param(const Scenario *sc, const char *key);

/* A convex problem for the compressors' tests: multinomial logistic regression (layers =
 * features, classes) by sync over 8 agents, 8 rounds. */
extern const char *const test_convex_text;

#endif
