/* test_scenario.c — see test_scenario.h. */
#include "tests/test_scenario.h"

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
