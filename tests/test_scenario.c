/* test_scenario.c — see test_scenario.h. */
#include "tests/test_scenario.h"

#include "sim/methods/method.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

int test_resolve(const char *text, const char *const *set, int n, Scenario *sc, HsDiag *diag)
{
    IniDoc doc;
    hs_diag_clear(diag);
    int status = inidoc_load_string("t.ini", text, &doc, diag);
    for (int i = 0; status == HS_OK && i < n; i++) status = inidoc_apply_set(&doc, set[i], diag);
    if (status == HS_OK) status = scenario_resolve(&doc, sc, diag);
    inidoc_free(&doc);
    return status;
}

int test_run(const char *text, const char *const *set, int n, TestSink *ts, HsDiag *diag)
{
    Scenario sc;
    int status = test_resolve(text, set, n, &sc, diag);
    RunOutcome outcome;
    if (status == HS_OK) status = sim_run(&sc, test_sink_init(ts), diag, &outcome);
    return status;
}

void test_expect_input_error(int status, const HsDiag *diag, const char *what, const char *prefix,
                             const char *fragment)
{
    ck_assert_msg(status == HS_E_INPUT, "expected an input error for: %s (got %d)", what, status);
    ck_assert_msg(strncmp(diag->message, prefix, strlen(prefix)) == 0, "message '%s' does not start with '%s'",
                  diag->message, prefix);
    ck_assert_msg(strstr(diag->message, fragment) != NULL, "message '%s' lacks '%s'", diag->message, fragment);
}

void test_expect_resolve_error(const char *base, const char *extra, const char *const *set, int n,
                               const char *prefix, const char *fragment)
{
    char text[8192];
    ck_assert_int_lt(snprintf(text, sizeof text, "%s%s", base, extra), (int)sizeof text);
    Scenario sc;
    HsDiag diag;
    test_expect_input_error(test_resolve(text, set, n, &sc, &diag), &diag, extra, prefix, fragment);
}

double test_method_key(const Scenario *sc, const char *key)
{
    for (const SchemaKey *k = method_lookup(sc->method)->keys; k && k->name; k++) {
        if (strcmp(k->name, key) != 0) continue;
        const unsigned char *at = (const unsigned char *)scenario_method_keys(sc) + k->offset;
        int whole;
        double real;
        if (k->size == sizeof whole && (k->type == SCHEMA_INT || k->type == SCHEMA_STEPS || k->type == SCHEMA_CHOICE)) {
            memcpy(&whole, at, sizeof whole);
            return whole;
        }
        ck_assert_uint_eq(k->size, sizeof real);
        memcpy(&real, at, sizeof real);
        return real;
    }
    ck_abort_msg("method %s has no key %s", sc->method, key);
    return 0;
}

const MethodParam *test_method_param(const Scenario *sc, const char *key)
{
    for (int i = 0; i < sc->n_params; i++)
        if (strcmp(sc->params[i].key, key) == 0) return &sc->params[i];
    return NULL;
}

const char *const test_convex_text =
    "[run]\nmethod = sync\nrounds = 8\nseed = 5\n"
    "[data]\ndataset = synthetic\nfeatures = 32\nclasses = 10\ntrain_samples = 4000\ntest_samples = 1000\n"
    "separation = 6\n"
    "[model]\nlayers = 32,10\nbatch = 32\nlr = 0.1\n"
    "[agents]\ncount = 8\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\nlatency = 1 ms\n";
