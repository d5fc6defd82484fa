/* origin.h — where a run comes from (issue #29's provenance): the hetsim version and the
 * source commit it was built from, the command line, the scenario file's text as read
 * and the --set overrides, the host. OriginSink fills the SINK_ORIGIN columns of
 * SinkRunInfo with them at run_begin and forwards every callback to its inner sink; the
 * engine fills runs.threads itself. `hetsim run` wraps its store sink with it, a sweep's
 * producers (worker processes, MPI ranks) their record stream, so `host` is the host
 * that simulated the run. */
#ifndef DRIVER_ORIGIN_H
#define DRIVER_ORIGIN_H

#include "sim/kernel/sink.h"

#include <stddef.h>

typedef struct RunOrigin {
    const char *command;        /* the command line, shell-quoted */
    const char *scenario_text;  /* the scenario file as read; NULL when not read */
    const char *overrides;      /* "--add-group NAME" for each group added, then the
                                 * --set values (and what --timing-only, --threads add),
                                 * one per line; NULL when none */
    const char *host;           /* this process's host name (origin_host), so a sweep's
                                 * producer does not ask the system at every run; NULL:
                                 * origin_sink asks */
} RunOrigin;

typedef struct OriginSink {
    Sink inner;
    const RunOrigin *origin;
    char host[256];
} OriginSink;

/* This host's name into out (size bytes), "unknown" when the system does not say. */
void origin_host(char *out, size_t size);

/* A sink that fills origin's columns and forwards to inner; o and origin must outlive it. */
Sink origin_sink(OriginSink *o, Sink inner, const RunOrigin *origin);

/* "hetsim VERSION (git COMMIT)" — the commit with "+modified" when the tree had changes;
 * "hetsim VERSION" when not built from git. Static storage. */
const char *origin_version(void);

/* "hetsim WORD ARG..." with each argument quoted as a POSIX shell reads it back;
 * malloc'd, NULL when out of memory. */
char *origin_command(const char *word, int argc, char **argv);

/* The overrides, one per line, in the order they are applied: "--add-group NAME" for each
 * of groups (a --set value never starts with "--"), then each of overrides as given;
 * malloc'd (NULL for none, or when out of memory). */
char *origin_overrides(const char *const *groups, int n_groups, const char *const *overrides, int count);

#endif
