/* origin.c — provenance of a run: see origin.h. */
#include "driver/origin.h"

#include "base/hs_error.h"
#include "base/version.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HETSIM_COMMIT
#define HETSIM_COMMIT "" /* the Makefile gives it from git */
#endif

const char *origin_version(void)
{
    return HETSIM_COMMIT[0] ? "hetsim " HETSIM_VERSION " (git " HETSIM_COMMIT ")" : "hetsim " HETSIM_VERSION;
}

/* Appends text to a malloc'd buffer; NULL (and the buffer freed) when out of memory. */
static char *append(char *buffer, size_t *len, const char *text, size_t n)
{
    if (buffer == NULL && *len > 0) return NULL;
    char *grown = realloc(buffer, *len + n + 1);
    if (grown == NULL) {
        free(buffer);
        return NULL;
    }
    memcpy(grown + *len, text, n);
    *len += n;
    grown[*len] = '\0';
    return grown;
}

char *origin_command(const char *word, int argc, char **argv)
{
    size_t len = 0;
    char *out = append(NULL, &len, "hetsim ", 7);
    if (out != NULL) out = append(out, &len, word, strlen(word));
    for (int i = 0; out != NULL && i < argc; i++) {
        const char *a = argv[i];
        out = append(out, &len, " ", 1);
        int plain = a[0] != '\0' && strpbrk(a, " \t\n'\"$`\\()*?;&|<>[]{}~#!") == NULL;
        if (plain) {
            if (out != NULL) out = append(out, &len, a, strlen(a));
            continue;
        }
        if (out != NULL) out = append(out, &len, "'", 1);
        for (const char *p = a; out != NULL && *p; p++)
            out = *p == '\'' ? append(out, &len, "'\\''", 4) : append(out, &len, p, 1);
        if (out != NULL) out = append(out, &len, "'", 1);
    }
    return out;
}

char *origin_overrides(const char *const *groups, int n_groups, const char *const *overrides, int count)
{
    size_t len = 0;
    char *out = NULL;
    /* in the order they are applied (cli_apply_overrides): the groups first */
    for (int i = 0; i < n_groups; i++) {
        out = append(out, &len, "--add-group ", 12);
        if (out != NULL) out = append(out, &len, groups[i], strlen(groups[i]));
        if (out != NULL) out = append(out, &len, "\n", 1);
        if (out == NULL) return NULL;
    }
    for (int i = 0; i < count; i++) {
        out = append(out, &len, overrides[i], strlen(overrides[i]));
        if (out != NULL) out = append(out, &len, "\n", 1);
        if (out == NULL) return NULL;
    }
    return out;
}

static int origin_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    OriginSink *o = ctx;
    SinkRunInfo row = *info;
    row.version = origin_version();
    row.host = o->host;
    if (o->origin != NULL) {
        row.command = o->origin->command;
        row.scenario_text = o->origin->scenario_text;
        row.overrides = o->origin->overrides;
    }
    return o->inner.ops->run_begin(o->inner.ctx, &row, run_id);
}

/* Everything but run_begin passes on unchanged (sink_pass_*: inner must come first). */
_Static_assert(offsetof(OriginSink, inner) == 0, "OriginSink's inner sink is its first member");
static const SinkOps origin_ops = {origin_run_begin, sink_pass_agents, sink_pass_round, sink_pass_agent_rounds,
                                   sink_pass_pairing, sink_pass_metric, sink_pass_run_end, NULL, sink_pass_params,
                                   NULL};
static const SinkOps origin_ops_activity = {origin_run_begin, sink_pass_agents, sink_pass_round,
                                            sink_pass_agent_rounds, sink_pass_pairing, sink_pass_metric,
                                            sink_pass_run_end, sink_pass_activity, sink_pass_params, NULL};

void origin_host(char *out, size_t size)
{
    if (size == 0) return;
    if (gethostname(out, size) != 0) snprintf(out, size, "unknown");
    out[size - 1] = '\0';
}

Sink origin_sink(OriginSink *o, Sink inner, const RunOrigin *origin)
{
    o->inner = inner;
    o->origin = origin;
    if (origin != NULL && origin->host != NULL) snprintf(o->host, sizeof o->host, "%s", origin->host);
    else origin_host(o->host, sizeof o->host);
    /* the optional activity callback stays as optional as the inner sink has it */
    return (Sink){inner.ops->activity ? &origin_ops_activity : &origin_ops, o};
}
