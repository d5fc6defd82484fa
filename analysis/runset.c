/* runset.c — runs, points, levels and speedups: see runset.h for every definition.
 * Reads one row per run (sub-selects on the (run_id, round) indexes) plus one metrics
 * lookup per run with a target; grouping then sorts the runs once by (group, label),
 * so a sweep of 10^4 runs groups in O(n log n).
 * One file: grouping, fingerprints and the statistics read the same RunFacts in one pass. */
#include "analysis/runset.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/dbread.h"
#include "base/hash.h"
#include "base/grow.h"
#include "analysis/label.h"

static const char facts_sql[] =
    "SELECT r.id, r.name, r.method, r.seed, r.status, r.sweep, r.point, r.config,"
    " coalesce(r.rounds_done, (SELECT count(*) FROM rounds WHERE run_id = r.id)),"
    " coalesce(r.sim_time_s, (SELECT max(t_end) FROM rounds WHERE run_id = r.id)),"
    " (SELECT sum(idle_s) FROM agent_rounds WHERE run_id = r.id),"
    " (SELECT count(*) FROM agents WHERE run_id = r.id),"
    " (SELECT sum(t_end - t_start) FROM rounds WHERE run_id = r.id),"
    " (SELECT sum(bytes) FROM rounds WHERE run_id = r.id),"
    " r.final_accuracy,"
    " (SELECT avg(t_end - t_start) FROM rounds WHERE run_id = r.id),"
    " (SELECT avg(predicted_s) FROM pairings WHERE run_id = r.id),"
    " (SELECT avg(actual_s) FROM pairings WHERE run_id = r.id),"
    " (SELECT count(*) FROM pairings WHERE run_id = r.id),"
    " (SELECT avg(role = 'offloader') FROM agent_rounds WHERE run_id = r.id),"
    " %s,"
    " CASE WHEN instr(r.config, char(10) || 'record = summary' || char(10)) > 0"
    "  THEN (SELECT sum(idle_s) FROM rounds WHERE run_id = r.id) END"
    " FROM runs r WHERE (?1 IS NULL OR r.id = ?1) AND (?2 IS NULL OR r.sweep = ?2)"
    " ORDER BY r.id";

/* rounds.energy_j, or NULL in a file written before it (opened as it is, not upgraded) */
static const char energy_sql[] = "(SELECT sum(energy_j) FROM rounds WHERE run_id = r.id)";
static const char energy_to_target_sql[] =
    "SELECT sum(energy_j) FROM rounds WHERE run_id = ?1 AND t_end <= ?2";

static const char target_sql[] =
    "SELECT t FROM metrics WHERE run_id = ?1 AND agent IS NULL AND t IS NOT NULL"
    " AND test_accuracy >= ?2 ORDER BY t, rowid LIMIT 1";

/* ---- the config text ---- */

/* Trimmed copy of [start, end) into buffer (cut at size - 1). */
static void trim_copy(char *buffer, size_t size, const char *start, const char *end)
{
    while (start < end && (*start == ' ' || *start == '\t')) start++;
    while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
    size_t length = (size_t)(end - start);
    if (length >= size) length = size - 1;
    memcpy(buffer, start, length);
    buffer[length] = '\0';
}

/* Calls visit(section, key, value, line, line_end) for every line of an INI text;
 * section is "" before the first header; key/value are "" on header and blank lines. */
typedef void (*ConfigVisit)(void *ctx, const char *section, const char *key,
                            const char *value, const char *line, const char *line_end);

static void config_walk(const char *config, ConfigVisit visit, void *ctx)
{
    char section[128] = "", key[128], value[256];
    for (const char *line = config; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        if (end == NULL) end = line + strlen(line);
        const char *p = line;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        key[0] = value[0] = '\0';
        if (p < end && *p == '[') {
            const char *close = memchr(p, ']', (size_t)(end - p));
            if (close != NULL) trim_copy(section, sizeof section, p + 1, close);
        } else {
            const char *equals = memchr(p, '=', (size_t)(end - p));
            if (equals != NULL && *p != ';' && *p != '#') {
                trim_copy(key, sizeof key, p, equals);
                const char *stop = equals + 1;
                /* an inline comment needs a space before it, as in scenario files */
                while (stop < end && !((*stop == ';' || *stop == '#') && stop[-1] == ' ')) stop++;
                trim_copy(value, sizeof value, equals + 1, stop);
            }
        }
        visit(ctx, section, key, value, line, end);
        line = *end ? end + 1 : end;
    }
}

static void visit_target(void *ctx, const char *section, const char *key, const char *value,
                         const char *line, const char *line_end)
{
    double *target = ctx;
    if (strcmp(section, "run") != 0 || strcmp(key, "target_accuracy") != 0) return;
    char *stop = NULL;
    double parsed = strtod(value, &stop);
    *target = stop != value && *stop == '\0' && isfinite(parsed) && parsed > 0 ? parsed : NAN;
}

typedef struct Fingerprint {
    uint64_t hash;
} Fingerprint;

static void visit_fingerprint(void *ctx, const char *section, const char *key,
                              const char *value, const char *line, const char *line_end)
{
    Fingerprint *print = ctx;
    if (strcmp(section, "method") == 0) return;
    if (strcmp(section, "run") == 0 && (strcmp(key, "method") == 0 ||
                                        strcmp(key, "seed") == 0 || strcmp(key, "name") == 0))
        return;
    print->hash = hash_fnv1a(print->hash, line, (size_t)(line_end - line));
    print->hash = hash_fnv1a(print->hash, "\n", 1);
}

/* [run] record = summary in runs.config (written only then): no agent_rounds rows */
static void visit_record(void *ctx, const char *section, const char *key, const char *value,
                         const char *line, const char *line_end)
{
    int *summary = ctx;
    (void)line, (void)line_end;
    if (strcmp(section, "run") == 0 && strcmp(key, "record") == 0) *summary = strcmp(value, "summary") == 0;
}

static int config_summary(const char *config)
{
    int summary = 0;
    if (config != NULL) config_walk(config, visit_record, &summary);
    return summary;
}

static double config_target(const char *config)
{
    double target = NAN;
    if (config != NULL) config_walk(config, visit_target, &target);
    return target;
}

static uint64_t config_fingerprint(const char *config)
{
    Fingerprint print = {HASH_FNV1A_START};
    if (config != NULL) config_walk(config, visit_fingerprint, &print);
    return print.hash;
}

/* ---- reading ---- */

static char *dup_column(sqlite3_stmt *stmt, int column, int *nomem)
{
    if (sqlite3_column_type(stmt, column) == SQLITE_NULL) return NULL;
    const char *text = (const char *)sqlite3_column_text(stmt, column);
    char *copy = text ? strdup(text) : NULL;
    if (copy == NULL) *nomem = 1;
    return copy;
}

static double real_column(sqlite3_stmt *stmt, int column)
{
    return sqlite3_column_type(stmt, column) == SQLITE_NULL ? NAN
                                                            : sqlite3_column_double(stmt, column);
}

static void facts_free(RunFacts *run)
{
    free(run->name);
    free(run->method);
    free(run->status);
    free(run->sweep);
    free(run->point);
}

/* What grouping needs of a run beyond its facts; freed once the set is built. */
typedef struct RunScratch {
    Label label;        /* the point's pairs (the seed apart) */
    uint64_t fingerprint;
    char *key;          /* "GROUP\x1fLABEL": the sort key */
} RunScratch;

static int read_runs(sqlite3 *db, const char *path, const RunSetFilter *filter, RunSet *set,
                     RunScratch **scratch_out, HsDiag *diag)
{
    sqlite3_stmt *stmt = NULL, *target = NULL, *energy = NULL;
    RunScratch *scratch = NULL;
    int capacity = 0, status = HS_OK;
    int has_energy = 0;
    sqlite3_stmt *probe = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info('rounds') WHERE name = 'energy_j'", -1,
                                &probe, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(probe)) == SQLITE_ROW) {
        has_energy = sqlite3_column_int(probe, 0) > 0;
        rc = SQLITE_OK;
    }
    sqlite3_finalize(probe);
    char sql[sizeof facts_sql + sizeof energy_sql];
    snprintf(sql, sizeof sql, facts_sql, has_energy ? energy_sql : "NULL");
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, target_sql, -1, &target, NULL);
    if (rc == SQLITE_OK && has_energy) rc = sqlite3_prepare_v2(db, energy_to_target_sql, -1, &energy, NULL);
    if (rc == SQLITE_OK && filter != NULL && filter->have_run)
        rc = sqlite3_bind_int64(stmt, 1, filter->run_id);
    if (rc == SQLITE_OK && filter != NULL && filter->sweep != NULL)
        rc = sqlite3_bind_text(stmt, 2, filter->sweep, -1, SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) goto query_failed;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int cap_runs = capacity, cap_scratch = capacity; /* two arrays, one capacity */
        if (hs_grow((void **)&set->runs, &cap_runs, set->run_count, sizeof *set->runs, 64) != HS_OK ||
            hs_grow((void **)&scratch, &cap_scratch, set->run_count, sizeof *scratch, 64) != HS_OK)
            goto nomem;
        capacity = cap_scratch;
        RunFacts *run = &set->runs[set->run_count];
        RunScratch *extra = &scratch[set->run_count];
        memset(run, 0, sizeof *run);
        memset(extra, 0, sizeof *extra);
        set->run_count++;
        int nomem = 0;
        run->id = sqlite3_column_int64(stmt, 0);
        run->name = dup_column(stmt, 1, &nomem);
        if (run->name == NULL && !nomem) run->name = strdup("");
        run->method = dup_column(stmt, 2, &nomem);
        if (run->method == NULL && !nomem) run->method = strdup("");
        run->seed = (uint64_t)sqlite3_column_int64(stmt, 3);  /* the bit pattern: store.h */
        run->status = dup_column(stmt, 4, &nomem);
        if (run->status == NULL && !nomem) run->status = strdup("");
        run->sweep = dup_column(stmt, 5, &nomem);
        if (nomem || run->name == NULL || run->method == NULL || run->status == NULL) goto nomem;
        run->done = strcmp(run->status, "done") == 0;
        const char *point = (const char *)sqlite3_column_text(stmt, 6);
        if (run->sweep != NULL && point != NULL) {
            if (label_parse(point, &extra->label) != HS_OK) goto nomem;
            if ((run->point = label_join(&extra->label, NULL)) == NULL) goto nomem;
            if (extra->label.has_seed) run->seed = extra->label.seed;
        } else if (run->sweep != NULL && point == NULL) {
            if ((run->point = strdup("")) == NULL) goto nomem;
        }
        const char *config = (const char *)sqlite3_column_text(stmt, 7);
        extra->fingerprint = config_fingerprint(config);
        run->target_accuracy = config_target(config);
        run->has_rounds = sqlite3_column_type(stmt, 8) != SQLITE_NULL;
        run->rounds = sqlite3_column_int64(stmt, 8);
        run->sim_time_s = real_column(stmt, 9);
        run->summary = config_summary(config);
        run->idle_share = NAN;
        /* a summary run's idle time is its rounds' (each the sum of its agents' idle_s) */
        int idle_column = run->summary ? 21 : 10;
        if (sqlite3_column_type(stmt, idle_column) != SQLITE_NULL &&
            sqlite3_column_type(stmt, 12) != SQLITE_NULL) {
            double idle = sqlite3_column_double(stmt, idle_column);
            int64_t agents = sqlite3_column_int64(stmt, 11);
            double span = sqlite3_column_double(stmt, 12);
            if (agents > 0 && span > 0) run->idle_share = idle / ((double)agents * span);
        }
        run->bytes = real_column(stmt, 13);
        run->final_accuracy = real_column(stmt, 14);
        run->makespan_s = real_column(stmt, 15);
        run->pairings = sqlite3_column_int64(stmt, 18);
        int comdml = strcmp(run->method, "comdml") == 0 || run->pairings > 0;
        run->predicted_s = comdml ? real_column(stmt, 16) : NAN;
        run->actual_s = comdml ? real_column(stmt, 17) : NAN;
        run->offload_share = comdml ? real_column(stmt, 19) : NAN;
        run->energy_j = real_column(stmt, 20);
        run->energy_to_target_j = NAN;
        run->time_to_target_s = NAN;
        if (!isnan(run->target_accuracy)) {
            sqlite3_reset(target);
            sqlite3_bind_int64(target, 1, run->id);
            sqlite3_bind_double(target, 2, run->target_accuracy);
            int found = sqlite3_step(target);
            if (found == SQLITE_ROW) run->time_to_target_s = sqlite3_column_double(target, 0);
            else if (found != SQLITE_DONE) {
                rc = found;
                goto query_failed;
            }
        }
        if (energy != NULL && !isnan(run->energy_j) && !isnan(run->time_to_target_s)) {
            sqlite3_reset(energy);
            sqlite3_bind_int64(energy, 1, run->id);
            sqlite3_bind_double(energy, 2, run->time_to_target_s);
            int found = sqlite3_step(energy);
            if (found == SQLITE_ROW) run->energy_to_target_j = real_column(energy, 0);
            else {
                rc = found;
                goto query_failed;
            }
        }
    }
    if (rc != SQLITE_DONE) goto query_failed;
    sqlite3_finalize(stmt);
    sqlite3_finalize(target);
    sqlite3_finalize(energy);
    *scratch_out = scratch;
    return HS_OK;
query_failed:
    status = dbread_query_fail(db, rc, path, diag);
    goto fail;
nomem:
    status = hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
fail:
    sqlite3_finalize(stmt);
    sqlite3_finalize(target);
    sqlite3_finalize(energy);
    *scratch_out = scratch;
    return status;
}

/* ---- grouping ---- */

/* Runs outside a sweep: `run.method=M run.name=N` (+ config=#K), see runset.h. */
static int pseudo_labels(RunSet *set, RunScratch *scratch)
{
    typedef struct Seen { const char *name; uint64_t fingerprint; int order; } Seen;
    Seen *seen = malloc(((size_t)set->run_count + 1) * sizeof *seen);
    int seen_count = 0;
    if (seen == NULL) return HS_E_NOMEM;
    for (int i = 0; i < set->run_count; i++) {
        RunFacts *run = &set->runs[i];
        if (run->sweep != NULL) continue;
        int order = 1, found = 0;
        for (int k = 0; k < seen_count; k++) {
            if (strcmp(seen[k].name, run->name) != 0) continue;
            if (seen[k].fingerprint == scratch[i].fingerprint) {
                order = seen[k].order;
                found = 1;
                break;
            }
            if (seen[k].order >= order) order = seen[k].order + 1;
        }
        if (!found) seen[seen_count++] = (Seen){ run->name, scratch[i].fingerprint, order };
        Label *label = &scratch[i].label;
        if (label_add(label, "run.method", run->method) != HS_OK ||
            label_add(label, "run.name", run->name) != HS_OK)
            goto nomem;
        if (order > 1) {
            char tag[32];
            snprintf(tag, sizeof tag, "#%d", order);
            if (label_add(label, "config", tag) != HS_OK) goto nomem;
        }
    }
    free(seen);
    return HS_OK;
nomem:
    free(seen);
    return HS_E_NOMEM;
}

/* qsort has no context argument, hence each entry carries its key. */
typedef struct RunOrder {
    const char *key;
    int index;
} RunOrder;

static int compare_runs(const void *a, const void *b)
{
    const RunOrder *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

static int compare_points(const void *a, const void *b)
{
    const RunPoint *x = a, *y = b;
    return (x->runs[0] > y->runs[0]) - (x->runs[0] < y->runs[0]);
}

static char *join_key(const char *group, const char *label)
{
    size_t a = strlen(group), b = strlen(label);
    char *key = malloc(a + b + 2);
    if (key == NULL) return NULL;
    memcpy(key, group, a);
    key[a] = '\x1f';
    memcpy(key + a + 1, label, b + 1);
    return key;
}

static int same_text(const char *a, const char *b)
{
    if (a == NULL || b == NULL) return a == b;
    return strcmp(a, b) == 0;
}

/* Picks the group's heterogeneity axis and gives every point its level and series. */
static int group_axis(RunSet *set, int g, const RunScratch *scratch)
{
    RunGroup *group = &set->groups[g];
    int status = HS_E_NOMEM;
    int *members = NULL, n = 0;
    const char **keys = NULL, **values = NULL;
    int key_count = 0, *varying = NULL;
    members = malloc((size_t)set->point_count * sizeof *members);
    if (members == NULL) goto done;
    size_t key_capacity = 0;
    for (int p = 0; p < set->point_count; p++)
        if (set->points[p].group == g) {
            members[n++] = p;
            key_capacity += (size_t)scratch[set->points[p].runs[0]].label.count;
        }
    keys = malloc((key_capacity + 1) * sizeof *keys);
    if (keys == NULL) goto done;
    /* every key but run.method, in order of first appearance */
    for (int m = 0; m < n; m++) {
        const Label *label = &scratch[set->points[members[m]].runs[0]].label;
        for (int i = 0; i < label->count; i++) {
            const char *key = label->pairs[i].key;
            if (strcmp(key, "run.method") == 0) continue;
            int known = 0;
            for (int k = 0; k < key_count && !known; k++) known = strcmp(keys[k], key) == 0;
            if (!known) keys[key_count++] = key;
        }
    }
    values = malloc(((size_t)key_count * (size_t)n + 1) * sizeof *values);
    varying = calloc((size_t)key_count + 1, sizeof *varying);
    if (values == NULL || varying == NULL) goto done;
    for (int k = 0; k < key_count; k++)
        for (int m = 0; m < n; m++) {
            values[k * n + m] = label_value(&scratch[set->points[members[m]].runs[0]].label, keys[k]);
            if (!same_text(values[k * n + m], values[k * n])) varying[k] = 1;
        }
    int axis = -1;
    RunAxisKind kind = RUNSET_AXIS_NONE;
    for (int pass = 0; pass < 3 && axis < 0; pass++)
        for (int k = 0; k < key_count && axis < 0; k++) {
            if (!varying[k]) continue;
            int all = 1;
            for (int m = 0; m < n && all; m++) {
                double number;
                const char *value = values[k * n + m];
                if (pass == 0) all = value != NULL && label_lognormal_sigma(value, &number) == 0;
                else if (pass == 1) all = value != NULL && label_number(value, &number) == 0;
            }
            if (all) {
                axis = k;
                kind = pass == 0 ? RUNSET_AXIS_SIGMA : pass == 1 ? RUNSET_AXIS_VALUE
                                                                 : RUNSET_AXIS_INDEX;
            }
        }
    group->axis_kind = kind;
    char title[512];
    if (kind == RUNSET_AXIS_NONE) {
        snprintf(title, sizeof title, "heterogeneity level (no key varies)");
    } else {
        if ((group->axis_key = strdup(keys[axis])) == NULL) goto done;
        if (kind == RUNSET_AXIS_SIGMA)
            snprintf(title, sizeof title, "sigma of %s (lognormal)", keys[axis]);
        else
            snprintf(title, sizeof title, "%s", keys[axis]);
    }
    if ((group->axis_title = strdup(title)) == NULL) goto done;
    if (kind == RUNSET_AXIS_INDEX) {
        group->level_names = calloc((size_t)n + 1, sizeof *group->level_names);
        if (group->level_names == NULL) goto done;
    }
    for (int m = 0; m < n; m++) {
        RunPoint *point = &set->points[members[m]];
        const char *value = axis >= 0 ? values[axis * n + m] : NULL;
        point->level = 0;
        if (kind == RUNSET_AXIS_SIGMA) label_lognormal_sigma(value, &point->level);
        else if (kind == RUNSET_AXIS_VALUE) label_number(value, &point->level);
        else if (kind == RUNSET_AXIS_INDEX) {
            const char *shown = value ? value : "(none)";
            int index = 0;
            while (index < group->level_count && strcmp(group->level_names[index], shown) != 0)
                index++;
            if (index == group->level_count) {
                if ((group->level_names[index] = strdup(shown)) == NULL) goto done;
                group->level_count++;
            }
            point->level = index;
        }
        /* series: the method, then the other varying keys */
        size_t size = strlen(point->method) + 1;
        for (int k = 0; k < key_count; k++)
            if (varying[k] && k != axis && values[k * n + m] != NULL)
                size += strlen(keys[k]) + strlen(values[k * n + m]) + 3;
        char *name = malloc(size);
        if (name == NULL) goto done;
        strcpy(name, point->method);
        for (int k = 0; k < key_count; k++)
            if (varying[k] && k != axis && values[k * n + m] != NULL) {
                strcat(name, ", ");
                strcat(name, keys[k]);
                strcat(name, "=");
                strcat(name, values[k * n + m]);
            }
        int s = 0;
        while (s < set->series_count &&
               !(set->series[s].group == g && strcmp(set->series[s].name, name) == 0))
            s++;
        if (s == set->series_count) {
            RunSeries *grown = realloc(set->series, ((size_t)s + 1) * sizeof *grown);
            if (grown == NULL) {
                free(name);
                goto done;
            }
            set->series = grown;
            set->series[s] = (RunSeries){ g, name, point->method };
            set->series_count++;
        } else {
            free(name);
        }
        point->series = s;
    }
    status = HS_OK;
done:
    free(members);
    free(keys);
    free(values);
    free(varying);
    return status;
}

static int build_points(RunSet *set, RunScratch *scratch)
{
    int status = HS_E_NOMEM;
    RunOrder *order = NULL;
    if (pseudo_labels(set, scratch) != HS_OK) goto done;
    order = malloc(((size_t)set->run_count + 1) * sizeof *order);
    if (order == NULL) goto done;
    for (int i = 0; i < set->run_count; i++) {
        char *label = label_join(&scratch[i].label, NULL);
        if (label == NULL) goto done;
        scratch[i].key = join_key(set->runs[i].sweep ? set->runs[i].sweep : "", label);
        free(label);
        if (scratch[i].key == NULL) goto done;
        order[i] = (RunOrder){ scratch[i].key, i };
    }
    qsort(order, (size_t)set->run_count, sizeof *order, compare_runs);
    set->points = calloc((size_t)set->run_count + 1, sizeof *set->points);
    if (set->points == NULL) goto done;
    for (int start = 0; start < set->run_count;) {
        int end = start + 1;
        while (end < set->run_count && strcmp(order[end].key, order[start].key) == 0) end++;
        RunPoint *point = &set->points[set->point_count++];
        int first = order[start].index;
        const Label *label = &scratch[first].label;
        const char *method = label_value(label, "run.method");
        point->label = label_join(label, NULL);
        point->scenario = label_join(label, "run.method");
        point->method = strdup(method ? method : set->runs[first].method);
        point->runs = malloc((size_t)(end - start) * sizeof *point->runs);
        if (point->label == NULL || point->scenario == NULL || point->method == NULL ||
            point->runs == NULL)
            goto done;
        for (int k = start; k < end; k++) {
            point->runs[point->run_count++] = order[k].index;  /* ids ascend within a key */
            point->done_count += set->runs[order[k].index].done;
        }
        start = end;
    }
    qsort(set->points, (size_t)set->point_count, sizeof *set->points, compare_points);
    /* groups in order of their first run */
    set->groups = calloc((size_t)set->point_count + 1, sizeof *set->groups);
    if (set->groups == NULL) goto done;
    for (int p = 0; p < set->point_count; p++) {
        RunPoint *point = &set->points[p];
        const char *sweep = set->runs[point->runs[0]].sweep;
        if (sweep == NULL) sweep = "";
        int g = 0;
        while (g < set->group_count && strcmp(set->groups[g].sweep, sweep) != 0) g++;
        if (g == set->group_count) {
            if ((set->groups[g].sweep = strdup(sweep)) == NULL) goto done;
            set->group_count++;
        }
        point->group = g;
        RunGroup *group = &set->groups[g];
        group->run_count += point->run_count;
        for (int k = 0; k < point->run_count; k++) {
            RunFacts *run = &set->runs[point->runs[k]];
            run->point_index = p;
            if (run->id > group->last_run) group->last_run = run->id;
        }
    }
    for (int g = 0; g < set->group_count; g++)
        if (group_axis(set, g, scratch) != HS_OK) goto done;
    status = HS_OK;
done:
    free(order);
    return status;
}

int runset_load(sqlite3 *db, const char *path, const RunSetFilter *filter, RunSet **out,
                HsDiag *diag)
{
    RunScratch *scratch = NULL;
    RunSet *set = calloc(1, sizeof *set);
    *out = NULL;
    if (set == NULL) return hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
    int status = read_runs(db, path, filter, set, &scratch, diag);
    if (status == HS_OK && build_points(set, scratch) != HS_OK)
        status = hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
    if (scratch != NULL)
        for (int i = 0; i < set->run_count; i++) {
            label_free(&scratch[i].label);
            free(scratch[i].key);
        }
    free(scratch);
    if (status != HS_OK) {
        runset_free(set);
        return status;
    }
    *out = set;
    return HS_OK;
}

/* Rank of point p's text (scenario or method) among the points of its group: the index
 * of the first point of the group with the same text. Points are in order of their first
 * run id, so ranks follow the order of first appearance. */
static int point_rank(const RunSet *set, int p, int method)
{
    const RunPoint *point = &set->points[p];
    for (int q = 0; q <= p; q++) {
        const RunPoint *other = &set->points[q];
        if (other->group == point->group &&
            strcmp(method ? other->method : other->scenario, method ? point->method : point->scenario) == 0)
            return q;
    }
    return p;
}

static int key_after(const int *a, const int *b)
{
    for (int k = 0; k < 4; k++)
        if (a[k] != b[k]) return a[k] > b[k];
    return 0;
}

void runset_point_order(const RunSet *set, int *order)
{
    /* insertion sort on (group, scenario rank, method rank, index): point counts are
     * those of a sweep's points, and ranks are computed once */
    int n = set->point_count;
    int (*key)[4] = malloc(((size_t)n + 1) * sizeof *key);
    for (int p = 0; p < n; p++) {
        order[p] = p;
        if (key != NULL) {
            key[p][0] = set->points[p].group;
            key[p][1] = point_rank(set, p, 0);
            key[p][2] = point_rank(set, p, 1);
            key[p][3] = p;
        }
    }
    if (key == NULL) return;  /* out of memory: the points' own order */
    for (int i = 1; i < n; i++) {
        int v = order[i], j = i - 1;
        while (j >= 0 && key_after(key[order[j]], key[v])) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = v;
    }
    free(key);
}

void runset_free(RunSet *set)
{
    if (set == NULL) return;
    for (int i = 0; i < set->run_count; i++) facts_free(&set->runs[i]);
    free(set->runs);
    for (int p = 0; p < set->point_count; p++) {
        free(set->points[p].label);
        free(set->points[p].scenario);
        free(set->points[p].method);
        free(set->points[p].runs);
    }
    free(set->points);
    for (int g = 0; g < set->group_count; g++) {
        RunGroup *group = &set->groups[g];
        free(group->sweep);
        free(group->axis_key);
        free(group->axis_title);
        for (int k = 0; k < group->level_count; k++) free(group->level_names[k]);
        free(group->level_names);
    }
    free(set->groups);
    for (int s = 0; s < set->series_count; s++) free(set->series[s].name);
    free(set->series);
    free(set);
}

/* ---- figures ---- */

double runset_field(const RunFacts *run, RunField field)
{
    switch (field) {
    case RUN_SIM_TIME: return run->sim_time_s;
    case RUN_TIME_TO_TARGET: return run->time_to_target_s;
    case RUN_FINAL_ACCURACY: return run->final_accuracy;
    case RUN_IDLE_SHARE: return run->idle_share;
    case RUN_BYTES: return run->bytes;
    case RUN_MAKESPAN: return run->makespan_s;
    case RUN_PREDICTED: return run->predicted_s;
    case RUN_ACTUAL: return run->actual_s;
    case RUN_OFFLOAD_SHARE: return run->offload_share;
    case RUN_ENERGY: return run->energy_j;
    case RUN_ENERGY_TO_TARGET: return run->energy_to_target_j;
    default: return NAN;
    }
}

void runset_stat(const double *values, int count, RunStat *out)
{
    double small[64];
    double *finite = count <= 64 ? small : malloc((size_t)count * sizeof *finite);
    out->n = 0;
    out->mean = out->half = NAN;
    if (finite == NULL) return;  /* out of memory: reported as no values */
    int n = 0;
    for (int i = 0; i < count; i++)
        if (isfinite(values[i])) finite[n++] = values[i];
    out->n = n;
    if (n > 0) out->mean = gsl_stats_mean(finite, 1, (size_t)n);
    if (n > 1) {
        double sd = gsl_stats_sd(finite, 1, (size_t)n);
        out->half = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * sd / sqrt((double)n);
    }
    if (finite != small) free(finite);
}

int runset_point_stat(const RunSet *set, int point, RunField field, RunStat *out)
{
    const RunPoint *p = &set->points[point];
    double *values = malloc(((size_t)p->run_count + 1) * sizeof *values);
    if (values == NULL) return HS_E_NOMEM;
    int n = 0;
    for (int k = 0; k < p->run_count; k++) {
        const RunFacts *run = &set->runs[p->runs[k]];
        if (run->done) values[n++] = runset_field(run, field);
    }
    runset_stat(values, n, out);
    free(values);
    return HS_OK;
}

const char *runset_basis_name(SpeedupBasis basis)
{
    switch (basis) {
    case SPEEDUP_TARGET: return "time to target";
    case SPEEDUP_TOTAL: return "total virtual time";
    default: return "mixed";
    }
}

int runset_speedups(const RunSet *set, RunSpeedup **out, int *count)
{
    RunSpeedup *rows = calloc((size_t)set->point_count + 1, sizeof *rows);
    double *ratio = malloc(((size_t)set->run_count + 1) * 3 * sizeof *ratio);
    *out = NULL;
    *count = 0;
    if (rows == NULL || ratio == NULL) {
        free(rows);
        free(ratio);
        return HS_E_NOMEM;
    }
    double *time = ratio + set->run_count + 1, *sync_time = time + set->run_count + 1;
    int n_rows = 0;
    for (int p = 0; p < set->point_count; p++) {
        const RunPoint *point = &set->points[p];
        if (strcmp(point->method, "sync") == 0) continue;
        int s = 0;
        for (; s < set->point_count; s++) {
            const RunPoint *other = &set->points[s];
            if (other->group == point->group && strcmp(other->method, "sync") == 0 &&
                strcmp(other->scenario, point->scenario) == 0)
                break;
        }
        if (s == set->point_count) continue;
        int pairs = 0, by_target = 0;
        for (int k = 0; k < point->run_count; k++) {
            const RunFacts *run = &set->runs[point->runs[k]];
            if (!run->done) continue;
            const RunPoint *sync = &set->points[s];
            for (int j = 0; j < sync->run_count; j++) {
                const RunFacts *base = &set->runs[sync->runs[j]];
                if (!base->done || base->seed != run->seed) continue;
                double t, t_sync;
                int target = isfinite(run->time_to_target_s) && isfinite(base->time_to_target_s) &&
                             run->time_to_target_s > 0 && base->time_to_target_s > 0;
                if (target) {
                    t = run->time_to_target_s;
                    t_sync = base->time_to_target_s;
                } else {
                    t = run->sim_time_s;
                    t_sync = base->sim_time_s;
                }
                if (!(t > 0) || !(t_sync > 0) || !isfinite(t) || !isfinite(t_sync)) break;
                ratio[pairs] = t_sync / t;
                time[pairs] = t;
                sync_time[pairs] = t_sync;
                by_target += target;
                pairs++;
                break;
            }
        }
        if (pairs == 0) continue;
        RunSpeedup *row = &rows[n_rows++];
        row->point = p;
        row->sync_point = s;
        row->basis = by_target == pairs ? SPEEDUP_TARGET : by_target == 0 ? SPEEDUP_TOTAL
                                                                           : SPEEDUP_MIXED;
        runset_stat(ratio, pairs, &row->speedup);
        runset_stat(time, pairs, &row->time);
        runset_stat(sync_time, pairs, &row->sync_time);
    }
    free(ratio);
    *out = rows;
    *count = n_rows;
    return HS_OK;
}
