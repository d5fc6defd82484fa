/* trace.h — attribute values over time, from CSV files.
 * Format: one row per change, `AGENT,TIME,VALUE`, where AGENT is an agent index or a
 * group name (`default` for the agents of [agents] itself), TIME is virtual time (a
 * number of seconds or with a time unit: `90 s`, `2 min`), and VALUE is in the
 * attribute's units (`2 GFLOPS`, `10 MB/s`; availability: 1 online, 0 offline). A row
 * has exactly three fields, none empty. A first line whose TIME and VALUE are words (a
 * header: `agent,time,value`) is skipped; `#` starts a comment. The rows of one series
 * (an agent index, or a group) must have increasing times: a time equal to or below the
 * previous row's of the same series is an error naming both lines.
 * The value holds from its time until the next row of the same agent (a step
 * function); before an agent's first row its first value applies. Rows for an agent
 * index take precedence over rows for its group; every agent must be covered. */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include "base/hs_error.h"
#include "base/units.h"

/* A markov() process's generator (sim/kernel/trace_markov.h). */
typedef struct TraceMarkov TraceMarkov;

typedef struct TraceSeries {
    int n;
    double *times;   /* (n) increasing */
    double *values;  /* (n) */
    /* NULL: the rows are all there (a file's). Else the series is a markov() process drawn
     * only as far as it is asked: every query below draws what it needs first. */
    TraceMarkov *markov;
} TraceSeries;

typedef struct Trace {
    int n_agents;
    TraceSeries *series;  /* (n_agents) owned copies */
} Trace;

/* Loads path for agents whose group names are group_names[group_of[i]]; only agents
 * with needed[i] set (NULL: all) must be covered, the others get an empty series.
 * unit UNIT_PLAIN is availability: every value 0 or 1; UNIT_POWER (charging): values in
 * [0, 1e9]; other units: values > 0.
 * Errors are HS_E_INPUT with "path:line: ..." in diag and leave nothing to free; on
 * success the caller frees *out with trace_free. */
int trace_load(const char *path, UnitKind unit, int n_agents, const int *group_of,
               const char *const *group_names, int n_groups, const char *needed, Trace *out,
               HsDiag *diag);
void trace_free(Trace *trace);

/* The value at time t (a markov() process at t = inf: up, since it always comes back). */
double trace_value(const TraceSeries *s, double t);
/* The first change of the series after t (INFINITY: none). */
double trace_next_change(const TraceSeries *s, double t);
/* For availability (value > 0.5 = online): the time at which `work` seconds of online
 * time, starting at `start`, have elapsed. */
double trace_advance_online(const TraceSeries *s, double start, double work);
/* Offline seconds within [a, b). */
double trace_offline_between(const TraceSeries *s, double a, double b);
/* For availability: the first time >= t at which the agent is offline (t itself when it
 * is offline at t), INFINITY when it stays online for good. */
double trace_next_offline(const TraceSeries *s, double t);

/* For a rate (watts of charging): its integral over [a, b). */
double trace_integral(const TraceSeries *s, double a, double b);
/* For a rate: the first time t >= start at which its integral from start reaches amount
 * (> 0); INFINITY when it never does (the rate ends at 0). */
double trace_advance_integral(const TraceSeries *s, double start, double amount);

/* Series the engine owns and edits (batteries, docs/energy.md). A markov() process's copy
 * goes on drawing the same process, and an outage cut into it is kept as it draws on
 * (trace_markov.h): online when both the process and the battery say so. */
/* A copy of s into *out (s NULL: always online, one row (0, 1)). HS_OK or HS_E_NOMEM
 * (a markov() copy: free *out with trace_series_free all the same). */
int trace_series_copy(const TraceSeries *s, TraceSeries *out);
/* Makes the series 0 (offline) on [a, b), b INFINITY for good, and what it was elsewhere;
 * a >= 0. HS_OK or HS_E_NOMEM (the series unchanged). */
int trace_series_offline(TraceSeries *s, double a, double b);
/* Frees an owned series' rows (accepts a zeroed one). */
void trace_series_free(TraceSeries *s);

#endif
