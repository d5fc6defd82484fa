/* scenario_config.c — the resolved scenario written back as INI (runs.config), row by row
 * from the schema (scenario_schema.c): every key that applies, in table order, each
 * section under its header. Numbers are written in SI as the shortest text that reads
 * back to the same bits (base/numtext.h); the round trip is tested. Keys that
 * do not apply are left out (their rows' `when`), which is why the resolver resets the
 * ones that cannot be left at any value (SCHEMA_RESET). */
#include "sim/scenario/scenario.h"
#include "base/numtext.h"
#include "sim/scenario/method_ops.h"
#include "sim/scenario/scenario_resolver.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The n-th of "a|b|c". */
static void config_write_choice(const char *choices, int n, FILE *out)
{
    const char *p = choices;
    for (int i = 0; i < n && p; i++) {
        p = strchr(p, '|');
        if (p) p++;
    }
    if (p) fprintf(out, "%.*s", (int)strcspn(p, "|"), p);
}

static void config_write_value(const SchemaKey *k, const Scenario *sc, const void *target, FILE *out)
{
    if (k->write) {
        k->write(sc, target, out);
        return;
    }
    const char *at = (const char *)target + k->offset;
    char text[160];
    switch (k->type) {
    case SCHEMA_INT:
    case SCHEMA_STEPS: fprintf(out, "%d", *(const int *)at); break;
    case SCHEMA_CHOICE: config_write_choice(k->choices, *(const int *)at, out); break;
    case SCHEMA_REAL:
    case SCHEMA_TIME:
    case SCHEMA_WORD_OR_REAL: {
        double v = *(const double *)at;
        char number[NUMTEXT_SIZE];
        if ((k->flags & SCHEMA_WRITE_UNIT) && isinf(v)) fputs("inf", out);
        else if (k->flags & SCHEMA_WRITE_UNIT)
            fprintf(out, "%s %s", numtext_double(number, sizeof number, v), units_base_name(k->unit));
        else fputs(numtext_double(number, sizeof number, v), out);
        break;
    }
    case SCHEMA_SEED: fprintf(out, "%llu", (unsigned long long)*(const uint64_t *)at); break;
    case SCHEMA_TEXT:
    case SCHEMA_METHOD: fputs(at, out); break;
    case SCHEMA_DISTRIBUTION:
        /* compute under [model] profile is a relative speed, written back as such */
        distribution_write_unit((const Distribution *)at, k->unit == UNIT_COMPUTE && sc->model_profile[0] ? "x" : "",
                                out);
        break;
    case SCHEMA_SLOWDOWN:
        slowdown_format((const Slowdown *)at, text, sizeof text);
        fputs(text, out);
        break;
    case SCHEMA_AVAILABILITY: {
        const Distribution *d = (const Distribution *)at;
        if (distribution_over_time(d)) distribution_write(d, out);
        else fputs(k->choices ? k->choices : "always", out);
        break;
    }
    case SCHEMA_INT_LIST:
    case SCHEMA_REAL_LIST:
    case SCHEMA_CHOICE_OR_FILE: break; /* always through a hook */
    }
}

/* Every written row of section id under "[header]"; group: the agent group of its
 * attributes. */
static void config_write_section(const Scenario *sc, const char *header, unsigned id, const AgentGroupSpec *group,
                                 FILE *out)
{
    fprintf(out, "%s[%s]\n", id == SCHEMA_IN_RUN ? "" : "\n", header);
    int n;
    const SchemaKey *rows = schema_keys(&n);
    for (int i = 0; i < n; i++) {
        const SchemaKey *k = &rows[i];
        const void *target = (k->flags & SCHEMA_GROUP) ? (const void *)group : (const void *)sc;
        if (!(k->sections & id) || !schema_written(k, sc, target)) continue;
        fprintf(out, "%s = ", k->name);
        config_write_value(k, sc, target, out);
        fputc('\n', out);
    }
}

void scenario_write_config(const Scenario *sc, FILE *out)
{
    config_write_section(sc, "run", SCHEMA_IN_RUN, NULL, out);
    config_write_section(sc, "data", SCHEMA_IN_DATA, NULL, out);
    config_write_section(sc, "model", SCHEMA_IN_MODEL, NULL, out);
    int method_header = 0;
    for (int i = 0; i < sc->n_params; i++) {
        if (!sc->params[i].written) continue;
        if (!method_header++) fputs("\n[method]\n", out);
        fprintf(out, "%s = %s\n", sc->params[i].key, sc->params[i].value);
    }
    /* a method that builds its own graph refuses [topology] in its own file: its config,
     * run again, must not carry the section a file written for other methods gave it */
    if (!(method_lookup(sc->method)->capabilities & METHOD_BUILDS_TOPOLOGY))
        config_write_section(sc, "topology", SCHEMA_IN_TOPOLOGY, NULL, out);
    config_write_section(sc, "agents", SCHEMA_IN_AGENTS, &sc->groups[0], out);
    for (int g = 1; g < sc->n_groups; g++) {
        char header[INIDOC_NAME_MAX + 8];
        snprintf(header, sizeof header, "agents.%s", sc->groups[g].name);
        config_write_section(sc, header, SCHEMA_IN_GROUP, &sc->groups[g], out);
    }
    if (sc->has_server)
        config_write_section(sc, sc->servers_section ? "servers" : "server",
                             sc->servers_section ? SCHEMA_IN_SERVERS : SCHEMA_IN_SERVER, &sc->groups[sc->n_groups], out);
    config_write_section(sc, "network", SCHEMA_IN_NETWORK, NULL, out);
    if (sc->compression.present) config_write_section(sc, "compression", SCHEMA_IN_COMPRESSION, NULL, out);
    if (sc->byzantine.present) config_write_section(sc, "byzantine", SCHEMA_IN_BYZANTINE, NULL, out);
    if (sc->privacy.present) config_write_section(sc, "privacy", SCHEMA_IN_PRIVACY, NULL, out);
    if (sc->drift.present) config_write_section(sc, "drift", SCHEMA_IN_DRIFT, NULL, out);
}

char *scenario_config_string(const Scenario *sc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) return NULL;
    scenario_write_config(sc, f);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
