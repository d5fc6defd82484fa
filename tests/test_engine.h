/* test_engine.h — an Engine for the kernel's closed-form suites (check_deadline,
 * check_loss_ring, check_links): built from the nodes and network a test gives, with a
 * TestSink for its rows, already in round 0, and a handler that logs every event the
 * method would receive, so a test sends, plays, and reads what arrived, when, and how.
 * Those suites had each written this scaffolding again. */
#ifndef TESTS_TEST_ENGINE_H
#define TESTS_TEST_ENGINE_H

#include "sim/kernel/engine.h"
#include "tests/test_sink.h"

#include <stdint.h>

/* One event handed to the handler, read at that moment. */
typedef struct TestEngineEvent {
    double time;
    double bytes;  /* engine_delivered_bytes: a message cut at a deadline's; NaN otherwise */
    int agent;     /* -1 when not an agent's (a collective's end) */
    int lost;      /* engine_delivery_lost: 1 for a message lost under drop */
    int from;      /* its sender when lost, else -1 */
    int64_t data;
} TestEngineEvent;

typedef struct TestEngineSetup {
    int n_agents;
    const EngineNode *nodes; /* (n_agents), copied; NULL: every agent is `node` */
    EngineNode node;
    EngineTraces traces;     /* borrowed: they outlive the engine */
    EngineNetwork network;
    uint64_t seed;
    int kind;                /* the only event kind the handler accepts (a test fails on another) */
} TestEngineSetup;

typedef struct TestEngine {
    Engine *e;
    TestSink ts;
    HsDiag diag;
    int kind;
    TestEngineEvent *events; /* (n) in the order handled; grows as needed */
    int n, cap;
} TestEngine;

/* Creates the engine (the test fails if it cannot) and begins round 0 with an empty log. */
void test_engine_open(TestEngine *t, const TestEngineSetup *setup);
/* The last event logged; the test fails when there is none. */
const TestEngineEvent *test_engine_last(const TestEngine *t);
/* Frees the engine, its sink and the log; t may be opened again. */
void test_engine_close(TestEngine *t);

#endif
