/* test_engine.c — see test_engine.h. */
#include "tests/test_engine.h"

#include <check.h>
#include <stdlib.h>

static int test_engine_record(void *ctx, const Event *ev)
{
    TestEngine *t = ctx;
    ck_assert_int_eq(ev->kind, t->kind);
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->events = realloc(t->events, (size_t)t->cap * sizeof *t->events);
        ck_assert_ptr_nonnull(t->events);
    }
    TestEngineEvent *out = &t->events[t->n++];
    *out = (TestEngineEvent){.time = ev->time, .bytes = engine_delivered_bytes(t->e), .agent = ev->agent,
                             .from = -1, .data = ev->data};
    out->lost = engine_delivery_lost(t->e, &out->from);
    return HS_OK;
}

void test_engine_open(TestEngine *t, const TestEngineSetup *setup)
{
    *t = (TestEngine){.kind = setup->kind};
    EngineNode *equal = NULL;
    if (setup->nodes == NULL) {
        equal = calloc((size_t)setup->n_agents, sizeof *equal);
        ck_assert_ptr_nonnull(equal);
        for (int i = 0; i < setup->n_agents; i++) equal[i] = setup->node;
    }
    hs_diag_clear(&t->diag);
    EngineConfig config = {.n_agents = setup->n_agents, .nodes = equal ? equal : setup->nodes, .seed = setup->seed,
                           .sink = test_sink_init(&t->ts), .traces = setup->traces, .network = setup->network,
                           .handler = test_engine_record, .handler_ctx = t, .diag = &t->diag};
    int status = engine_create(&config, &t->e);
    free(equal); /* engine_create copied the nodes */
    ck_assert_msg(status == HS_OK, "engine_create: %s", t->diag.message);
    engine_begin_round(t->e, 0);
}

const TestEngineEvent *test_engine_last(const TestEngine *t)
{
    ck_assert_int_gt(t->n, 0);
    return &t->events[t->n - 1];
}

void test_engine_close(TestEngine *t)
{
    engine_free(t->e);
    test_sink_free(&t->ts);
    free(t->events);
    *t = (TestEngine){0};
}
