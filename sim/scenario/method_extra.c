/* method_extra.c — what rounds.extra means in a run (MethodExtra, method_ops.h): the
 * first of its method's entries whose [method] key holds. The database's readers ask
 * with the keys of run_params (cli/ wires them to analysis/), a resolved scenario with
 * the keys it holds. */
#include "sim/scenario/method_ops.h"
#include "sim/scenario/scenario.h"

#include <string.h>

const char *method_extra_meaning(const MethodOps *m, MethodParamText param, void *ctx)
{
    for (const MethodExtra *e = m->extra; e != NULL && e->meaning != NULL; e++) {
        if (e->key == NULL) return e->meaning;
        const char *written = param != NULL ? param(ctx, e->key) : NULL;
        if (written != NULL && (strcmp(written, e->value) == 0) != e->unless) return e->meaning;
    }
    return NULL;
}

static const char *method_extra_scenario_param(void *ctx, const char *key)
{
    const Scenario *sc = ctx;
    for (int i = 0; i < sc->n_params; i++)
        if (strcmp(sc->params[i].key, key) == 0) return sc->params[i].value;
    return NULL;
}

const char *method_extra_of_scenario(const Scenario *sc)
{
    const MethodOps *m = method_lookup(sc->method);
    return m != NULL ? method_extra_meaning(m, method_extra_scenario_param, (void *)sc) : NULL;
}
