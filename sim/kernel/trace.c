/* trace.c — CSV parsing into per-agent step functions, and queries on them.
 * Queries are O(log n) by binary search; traces are small next to a run. */
#include "sim/kernel/trace.h"

#include "base/lines.h"
#include "base/grow.h"
#include "sim/kernel/trace_markov.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct TraceRow {
    int agent;      /* index, or -1 - group for group rows */
    double time, value;
    int line;
} TraceRow;

static int trace_row_compare(const void *a, const void *b)
{
    const TraceRow *x = a, *y = b;
    if (x->agent != y->agent) return x->agent < y->agent ? -1 : 1;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return x->line - y->line;
}

static char *trace_trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* Splits line at its commas into fields (at most max kept); returns how many fields the
 * line has, so that an extra column is seen rather than folded into the last one. */
static int trace_split(char *line, char **fields, int max)
{
    int n = 0;
    for (char *p = line;; n++) {
        char *comma = strchr(p, ',');
        if (n < max) fields[n] = p;
        if (comma == NULL) return n + 1;
        *comma = '\0';
        p = comma + 1;
    }
}

static int trace_series_from(const TraceRow *rows, int n, TraceSeries *out)
{
    out->n = n;
    out->times = malloc((size_t)n * sizeof *out->times);
    out->values = malloc((size_t)n * sizeof *out->values);
    if (out->times == NULL || out->values == NULL) return HS_E_NOMEM;
    for (int k = 0; k < n; k++) {
        out->times[k] = rows[k].time;
        out->values[k] = rows[k].value;
    }
    return HS_OK;
}

int trace_load(const char *path, UnitKind unit, int n_agents, const int *group_of,
               const char *const *group_names, int n_groups, const char *needed, Trace *out,
               HsDiag *diag)
{
    memset(out, 0, sizeof *out);
    LineText text;
    int status = lines_open(path, &text, diag);
    if (status != HS_OK) return status;
    TraceRow *rows = NULL;
    int n_rows = 0, cap = 0, lineno = 0, data_lines = 0;
    /* the previous row of each series (agents 0..n_agents-1, then the groups): times must
     * increase, checked in file order so that the first bad line is the one named */
    int *last_line = calloc((size_t)n_agents + (size_t)n_groups, sizeof *last_line);
    double *last_time = calloc((size_t)n_agents + (size_t)n_groups, sizeof *last_time);
    if (last_line == NULL || last_time == NULL) status = HS_E_NOMEM;
    char line[1024];
    while (lines_each(&text, line, (int)sizeof line, &status, diag)) {
        lineno = text.lineno;
        char *fields[3];
        int nf = trace_split(line, fields, 3);
        if (nf == 1 && trace_trim(fields[0])[0] == '\0') continue;
        data_lines++;
        if (nf != 3) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "expected AGENT,TIME,VALUE, found %d field%s", nf,
                                 nf == 1 ? "" : "s");
            break;
        }
        char *agent = trace_trim(fields[0]), *time_text = trace_trim(fields[1]), *value_text = trace_trim(fields[2]);
        char why[300];
        TraceRow row = {.line = lineno};
        int time_status = units_parse(time_text, UNIT_TIME, &row.time, why, sizeof why);
        /* a header names its columns: TIME and VALUE are words, not numbers */
        if (data_lines == 1 && time_status != HS_OK && isalpha((unsigned char)time_text[0]) &&
            isalpha((unsigned char)value_text[0]))
            continue;
        if (agent[0] == '\0') {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "AGENT is empty");
            break;
        }
        if (time_status != HS_OK) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "time: %s", why);
            break;
        }
        if (row.time < 0 || !isfinite(row.time)) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "time must be finite and not negative");
            break;
        }
        if (units_parse(value_text, unit, &row.value, why, sizeof why) != HS_OK) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "value: %s", why);
            break;
        }
        if (unit == UNIT_PLAIN && row.value != 0 && row.value != 1) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "availability must be 0 (offline) or 1 (online), found %s",
                                 value_text);
            break;
        }
        /* watts (a battery's charging): 0 is a panel at night; what the key takes */
        if (unit == UNIT_POWER && !(row.value >= 0 && row.value <= 1e9)) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "watts must be in [0, 1e9], found %s", value_text);
            break;
        }
        if (unit != UNIT_PLAIN && unit != UNIT_POWER && !(row.value > 0)) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "value must be positive");
            break;
        }
        char *end;
        long index = strtol(agent, &end, 10);
        int slot;
        if (*end == '\0') {
            if (index < 0 || index >= n_agents) {
                status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "agent %s is outside 0..%d", agent, n_agents - 1);
                break;
            }
            row.agent = (int)index;
            slot = row.agent;
        } else {
            int g = 0;
            while (g < n_groups && strcmp(group_names[g], agent) != 0) g++;
            if (g == n_groups) {
                status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "'%s' is neither an agent index nor a group", agent);
                break;
            }
            row.agent = -1 - g;
            slot = n_agents + g;
        }
        if (last_line[slot] > 0 && row.time == last_time[slot]) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "a second value at the same time (first at line %d)",
                                 last_line[slot]);
            break;
        }
        if (last_line[slot] > 0 && row.time < last_time[slot]) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno,
                                 "time %g s goes back: the previous row of %s %s (line %d) is at %g s; times must increase",
                                 row.time, row.agent >= 0 ? "agent" : "group", agent, last_line[slot], last_time[slot]);
            break;
        }
        last_line[slot] = lineno;
        last_time[slot] = row.time;
        if (hs_grow((void **)&rows, &cap, n_rows, sizeof *rows, 64) != HS_OK) {
            status = HS_E_NOMEM;
            break;
        }
        rows[n_rows++] = row;
    }
    free(last_line);
    free(last_time);
    lines_free(&text);
    if (status == HS_OK && n_rows == 0) status = hs_diag_set(diag, HS_E_INPUT, path, 0, "trace has no rows");
    if (status == HS_OK) {
        /* each series' rows are in increasing time already: this groups them by agent */
        qsort(rows, (size_t)n_rows, sizeof *rows, trace_row_compare);
    }
    if (status == HS_OK) {
        out->n_agents = n_agents;
        out->series = calloc((size_t)n_agents, sizeof *out->series);
        if (out->series == NULL) status = HS_E_NOMEM;
    }
    for (int i = 0; status == HS_OK && i < n_agents; i++) {
        /* rows sorted by agent: group rows (negative) first, then indices */
        int key = i, first = -1, count = 0;
        for (int pass = 0; pass < 2 && first < 0; pass++) {
            for (int k = 0; k < n_rows; k++)
                if (rows[k].agent == key) {
                    if (first < 0) first = k;
                    count++;
                }
            key = -1 - group_of[i];
        }
        if (first < 0 && needed && !needed[i]) continue;
        if (first < 0)
            status = hs_diag_set(diag, HS_E_INPUT, path, 0, "no rows for agent %d (group %s)", i, group_names[group_of[i]]);
        else
            status = trace_series_from(rows + first, count, &out->series[i]);
    }
    free(rows);
    if (status != HS_OK) trace_free(out);
    return status;
}

void trace_free(Trace *trace)
{
    if (trace == NULL || trace->series == NULL) return;
    for (int i = 0; i < trace->n_agents; i++) {
        free(trace->series[i].times);
        free(trace->series[i].values);
    }
    free(trace->series);
    memset(trace, 0, sizeof *trace);
}

/* A markov() process's rows are drawn as queries need them: the series stays the same
 * function of time (its seed fixes it), only more of it is written down, hence the cast
 * from const. A file's series is left alone. */
static void trace_cover(const TraceSeries *s, double t)
{
    if (s->markov) markov_cover((TraceSeries *)s, t);
}

/* Index of the last row with time <= t, or 0 when t precedes every row. */
static int trace_index(const TraceSeries *s, double t)
{
    int lo = 0, hi = s->n - 1;
    if (t < s->times[0]) return 0;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (s->times[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

double trace_value(const TraceSeries *s, double t)
{
    if (s->markov && !isfinite(t)) return 1;
    trace_cover(s, t);
    return s->values[trace_index(s, t)];
}

double trace_next_change(const TraceSeries *s, double t)
{
    trace_cover(s, t);
    int lo = 0, hi = s->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->times[mid] > t) hi = mid;
        else lo = mid + 1;
    }
    return lo < s->n ? s->times[lo] : INFINITY;
}

double trace_advance_online(const TraceSeries *s, double start, double work)
{
    double t = start;
    if (s->markov && !isfinite(start + work)) return INFINITY;
    trace_cover(s, t);
    int k = trace_index(s, t);
    for (;;) {
        trace_cover(s, t);
        double segment_end = k + 1 < s->n ? s->times[k + 1] : INFINITY;
        if (t < s->times[0]) segment_end = s->times[0] > segment_end ? segment_end : s->times[0];
        int online = s->values[k] > 0.5;
        if (online) {
            if (t + work <= segment_end) return t + work;
            work -= segment_end - t;
        } else if (!isfinite(segment_end)) {
            return INFINITY; /* offline for good */
        }
        t = segment_end;
        if (t >= s->times[0] && k + 1 < s->n && t >= s->times[k + 1]) k++;
    }
}

double trace_offline_between(const TraceSeries *s, double a, double b)
{
    double offline = 0, t = a;
    trace_cover(s, b);
    while (t < b) {
        int k = trace_index(s, t);
        double next = k + 1 < s->n && s->times[k + 1] > t ? s->times[k + 1] : INFINITY;
        if (t < s->times[0]) next = s->times[0];
        double end = next < b ? next : b;
        if (!(s->values[k] > 0.5)) offline += end - t;
        t = end;
    }
    return offline;
}

double trace_next_offline(const TraceSeries *s, double t)
{
    /* a markov() process: covered past t, the row after t's is a change, hence down */
    trace_cover(s, t);
    int k = trace_index(s, t);
    if (!(s->values[k] > 0.5)) return t;
    for (k++; k < s->n; k++)
        if (!(s->values[k] > 0.5)) return s->times[k] > t ? s->times[k] : t;
    return INFINITY;
}

/* The step function's segment holding t: [*from, *to) with value s->values[k]. */
static int trace_segment(const TraceSeries *s, double t, double *to)
{
    int k = trace_index(s, t);
    *to = t < s->times[0] ? s->times[0] : k + 1 < s->n ? s->times[k + 1] : INFINITY;
    return k;
}

double trace_integral(const TraceSeries *s, double a, double b)
{
    double sum = 0, t = a;
    while (t < b) {
        double next;
        int k = trace_segment(s, t, &next);
        double end = next < b ? next : b;
        sum += s->values[k] * (end - t);
        t = end;
    }
    return sum;
}

double trace_advance_integral(const TraceSeries *s, double start, double amount)
{
    double t = start;
    for (;;) {
        double next;
        int k = trace_segment(s, t, &next);
        double v = s->values[k];
        /* amount / v, not a running sum: exact for a constant segment (t + R / C) */
        if (v > 0 && (!isfinite(next) || amount <= v * (next - t))) return t + amount / v;
        if (!isfinite(next)) return INFINITY; /* 0 for good */
        amount -= v * (next - t);
        t = next;
    }
}

int trace_series_copy(const TraceSeries *s, TraceSeries *out)
{
    if (s && s->markov) return markov_series_clone(s, out);
    static const double zero = 0, one = 1;
    int n = s ? s->n : 1;
    const double *times = s ? s->times : &zero, *values = s ? s->values : &one;
    double *t = malloc((size_t)n * sizeof *t), *v = malloc((size_t)n * sizeof *v);
    if (t == NULL || v == NULL) {
        free(t);
        free(v);
        return HS_E_NOMEM;
    }
    memcpy(t, times, (size_t)n * sizeof *t);
    memcpy(v, values, (size_t)n * sizeof *v);
    *out = (TraceSeries){.n = n, .times = t, .values = v};
    return HS_OK;
}

int trace_series_offline(TraceSeries *s, double a, double b)
{
    if (s->markov) return markov_series_offline(s, a, b);
    int cap = s->n + 3, m = 0;
    double *t = malloc((size_t)cap * sizeof *t), *v = malloc((size_t)cap * sizeof *v);
    if (t == NULL || v == NULL) {
        free(t);
        free(v);
        return HS_E_NOMEM;
    }
    double after = isfinite(b) ? trace_value(s, b) : 0;
    /* before its first row a series holds its first value: keep it so before a */
    if (a > 0 && s->times[0] >= a) {
        t[m] = 0;
        v[m++] = s->values[0];
    }
    for (int k = 0; k < s->n && s->times[k] < a; k++) {
        t[m] = s->times[k];
        v[m++] = s->values[k];
    }
    t[m] = a;
    v[m++] = 0;
    if (isfinite(b)) {
        t[m] = b;
        v[m++] = after;
        for (int k = 0; k < s->n; k++)
            if (s->times[k] > b) {
                t[m] = s->times[k];
                v[m++] = s->values[k];
            }
    }
    free(s->times);
    free(s->values);
    *s = (TraceSeries){.n = m, .times = t, .values = v};
    return HS_OK;
}

void trace_series_free(TraceSeries *s)
{
    if (s->markov) {
        markov_series_free(s);
        return;
    }
    free(s->times);
    free(s->values);
    s->times = s->values = NULL;
    s->n = 0;
}
