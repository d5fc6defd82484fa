/* sweep.c — [sweep] expansion (see sweep.h for the rules) and the record stream between
 * the processes that simulate runs and the one that writes them.
 * Expansion is cheap next to a run (one document copy and one resolution per point), so
 * sweep_resolve resolves every point up front: a bad key or value in any point stops the
 * sweep before the first run, and the sweep id covers every run's resolved config. */
#include "sim/sweep.h"

#include "base/hash.h"
#include "sim/engine.h"
#include "sim/world.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- expansion ---- */

void sweep_values_free(char **values, int count)
{
    if (values == NULL) return;
    for (int i = 0; i < count; i++) free(values[i]);
    free(values);
}

/* Copies text[start, end) trimmed, without one pair of parentheses that wraps it whole. */
static char *sweep_item(const char *text, size_t start, size_t end)
{
    while (start < end && isspace((unsigned char)text[start])) start++;
    while (end > start && isspace((unsigned char)text[end - 1])) end--;
    if (end - start >= 2 && text[start] == '(' && text[end - 1] == ')') {
        /* Only if the first '(' closes at the last character: "(a), (b)" is not one item
         * here anyway, but "(a) + (b)" must keep its parentheses. */
        int depth = 0;
        size_t close = start;
        for (size_t i = start; i < end; i++) {
            if (text[i] == '(') depth++;
            else if (text[i] == ')' && --depth == 0) {
                close = i;
                break;
            }
        }
        if (close == end - 1) {
            start++;
            end--;
            while (start < end && isspace((unsigned char)text[start])) start++;
            while (end > start && isspace((unsigned char)text[end - 1])) end--;
        }
    }
    char *item = malloc(end - start + 1);
    if (item == NULL) return NULL;
    memcpy(item, text + start, end - start);
    item[end - start] = '\0';
    return item;
}

int sweep_split_values(const char *text, char ***values, int *count, char *why, size_t why_size)
{
    char **list = NULL;
    int n = 0, capacity = 0, depth = 0;
    size_t start = 0, len = strlen(text);
    *values = NULL;
    *count = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = text[i];
        if (c == '(') depth++;
        if (c == ')' && --depth < 0) {
            snprintf(why, why_size, "')' without '(' at character %zu", i + 1);
            goto bad;
        }
        if (c != '\0' && (c != ',' || depth > 0)) continue;
        if (c == '\0' && depth > 0) {
            snprintf(why, why_size, "'(' without ')'");
            goto bad;
        }
        if (n == capacity) {
            capacity = capacity ? 2 * capacity : 8;
            char **grown = realloc(list, (size_t)capacity * sizeof *grown);
            if (grown == NULL) goto nomem;
            list = grown;
        }
        if ((list[n] = sweep_item(text, start, i)) == NULL) goto nomem;
        n++;
        if (list[n - 1][0] == '\0') {
            if (n == 1 && c == '\0') snprintf(why, why_size, "no values");
            else snprintf(why, why_size, "value %d is empty", n);
            goto bad;
        }
        start = i + 1;
    }
    *values = list;
    *count = n;
    return HS_OK;
bad:
    sweep_values_free(list, n);
    return HS_E_INPUT;
nomem:
    sweep_values_free(list, n);
    snprintf(why, why_size, "out of memory");
    return HS_E_NOMEM;
}

int sweep_check(const IniDoc *doc, int64_t *n_runs, HsDiag *diag)
{
    Sweep sw;
    int status = sweep_parse(doc, &sw, diag);
    if (status != HS_OK) return status;
    status = sweep_resolve(&sw, diag);
    *n_runs = sw.n_runs;
    sweep_free(&sw);
    return status;
}

void sweep_free(Sweep *sw)
{
    if (sw == NULL) return;
    inidoc_free(&sw->base);
    for (int a = 0; a < sw->n_axes; a++) sweep_values_free(sw->axes[a].values, sw->axes[a].n_values);
    if (sw->labels)
        for (int64_t i = 0; i < sw->n_runs; i++) free(sw->labels[i]);
    free(sw->labels);
    free(sw->by_label);
    memset(sw, 0, sizeof *sw);
}

/* Drops [sweep] from the copy: points are plain scenarios (has_sweep 0), and the swept
 * keys must not be mistaken for scenario keys. */
static void sweep_strip(IniDoc *doc)
{
    int kept = 0;
    for (int i = 0; i < doc->count; i++)
        if (strcmp(doc->entries[i].section, "sweep") != 0) doc->entries[kept++] = doc->entries[i];
    doc->count = kept;
    kept = 0;
    for (int i = 0; i < doc->n_sections; i++) {
        if (strcmp(doc->sections[i], "sweep") == 0) continue;
        memmove(doc->sections[kept], doc->sections[i], sizeof doc->sections[i]);
        doc->section_lines[kept++] = doc->section_lines[i];
    }
    doc->n_sections = kept;
}

static int sweep_parse_repeat(const IniEntry *e, int *repeat, HsDiag *diag)
{
    const char *v = e->value;
    while (isspace((unsigned char)*v)) v++;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (end == v || *end != '\0' || errno || n < 1 || n > 1000000)
        return hs_diag_set(diag, HS_E_INPUT, e->file, e->line,
                           "[sweep] repeat: expected a whole number in [1, 1000000], found '%.60s'", e->value);
    *repeat = (int)n;
    return HS_OK;
}

static int sweep_parse_axis(const IniEntry *e, SweepAxis *axis, HsDiag *diag)
{
    const char *dot = strrchr(e->key, '.');
    if (dot == NULL || dot == e->key || dot[1] == '\0')
        return hs_diag_set(diag, HS_E_INPUT, e->file, e->line,
                           "[sweep] '%s' is not SECTION.KEY = VALUE, VALUE, ... (or repeat = N)", e->key);
    size_t section_len = (size_t)(dot - e->key);
    memcpy(axis->section, e->key, section_len);
    axis->section[section_len] = '\0';
    snprintf(axis->key, sizeof axis->key, "%s", dot + 1);
    axis->line = e->line;
    if (strcmp(axis->section, "sweep") == 0)
        return hs_diag_set(diag, HS_E_INPUT, e->file, e->line, "[sweep] cannot sweep over [sweep] itself ('%s')",
                           e->key);
    char why[200];
    int status = sweep_split_values(e->value, &axis->values, &axis->n_values, why, sizeof why);
    if (status != HS_OK)
        return hs_diag_set(diag, status, e->file, e->line, "[sweep] %s: %s", e->key, why);
    for (int i = 0; i < axis->n_values; i++) {
        if (strlen(axis->values[i]) >= INIDOC_VALUE_MAX)
            return hs_diag_set(diag, HS_E_INPUT, e->file, e->line, "[sweep] %s: value %d is too long", e->key, i + 1);
        for (int j = 0; j < i; j++)
            if (strcmp(axis->values[i], axis->values[j]) == 0)
                return hs_diag_set(diag, HS_E_INPUT, e->file, e->line, "[sweep] %s: '%s' is listed twice",
                                   e->key, axis->values[i]);
    }
    return HS_OK;
}

int sweep_parse(const IniDoc *doc, Sweep *sw, HsDiag *diag)
{
    memset(sw, 0, sizeof *sw);
    sw->repeat = 1;
    int status = HS_OK;
    if (inidoc_copy(&sw->base, doc) != HS_OK) {
        status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        goto fail;
    }
    sweep_strip(&sw->base);
    for (int i = 0; i < doc->count; i++) {
        const IniEntry *e = &doc->entries[i];
        if (strcmp(e->section, "sweep") != 0) continue;
        if (strcmp(e->key, "repeat") == 0) {
            if ((status = sweep_parse_repeat(e, &sw->repeat, diag)) != HS_OK) goto fail;
            sw->repeat_line = e->line;
            continue;
        }
        if (sw->n_axes == SWEEP_MAX_AXES) {
            status = hs_diag_set(diag, HS_E_INPUT, e->file, e->line, "[sweep] more than %d keys", SWEEP_MAX_AXES);
            goto fail;
        }
        SweepAxis *axis = &sw->axes[sw->n_axes++];
        if ((status = sweep_parse_axis(e, axis, diag)) != HS_OK) goto fail;
        for (int a = 0; a + 1 < sw->n_axes; a++)
            if (strcmp(sw->axes[a].section, axis->section) == 0 && strcmp(sw->axes[a].key, axis->key) == 0) {
                /* Distinct spellings of one key cannot happen within one INI section, but
                 * --set may add a second line for it. */
                status = hs_diag_set(diag, HS_E_INPUT, e->file, e->line, "[sweep] %s.%s is swept twice",
                                     axis->section, axis->key);
                goto fail;
            }
    }
    sw->n_points = 1;
    for (int a = 0; a < sw->n_axes; a++) {
        sw->n_points *= sw->axes[a].n_values;
        if (sw->n_points * sw->repeat > SWEEP_MAX_RUNS) {
            status = hs_diag_set(diag, HS_E_INPUT, doc->file, sw->axes[a].line,
                                 "[sweep] expands to more than %d runs", SWEEP_MAX_RUNS);
            goto fail;
        }
    }
    sw->n_runs = sw->n_points * sw->repeat;
    return HS_OK;
fail:
    sweep_free(sw);
    return status;
}

/* The document of point p: the base with the point's values, first key slowest. */
static int sweep_point_doc(const Sweep *sw, int64_t point, IniDoc *doc, int *digits)
{
    if (inidoc_copy(doc, &sw->base) != HS_OK) return HS_E_NOMEM;
    for (int a = sw->n_axes - 1; a >= 0; a--) {
        digits[a] = (int)(point % sw->axes[a].n_values);
        point /= sw->axes[a].n_values;
    }
    for (int a = 0; a < sw->n_axes; a++) {
        const SweepAxis *axis = &sw->axes[a];
        if (inidoc_set(doc, axis->section, axis->key, axis->values[digits[a]], doc->file, axis->line,
                       INIDOC_FROM_SWEEP) != HS_OK) {
            inidoc_free(doc);
            return HS_E_NOMEM;
        }
    }
    return HS_OK;
}

/* "KEY=VALUE ..." of a point, without the seed. */
static void sweep_point_text(const Sweep *sw, const int *digits, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int a = 0; a < sw->n_axes && used < size; a++)
        used += (size_t)snprintf(out + used, size - used, "%s%s.%s=%s", a ? " " : "", sw->axes[a].section,
                                 sw->axes[a].key, sw->axes[a].values[digits[a]]);
}

static int sweep_resolve_point(const Sweep *sw, int64_t point, Scenario *sc, int *digits, HsDiag *diag)
{
    IniDoc doc;
    if (sweep_point_doc(sw, point, &doc, digits) != HS_OK)
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    HsDiag local;
    hs_diag_clear(&local);
    int status = scenario_resolve(&doc, sc, &local);
    inidoc_free(&doc);
    if (status == HS_OK) return HS_OK;
    if (sw->n_axes == 0) return hs_diag_set(diag, status, NULL, 0, "%s", local.message);
    /* Say which point, since the same line may be fine for the others. */
    char point_text[256];
    sweep_point_text(sw, digits, point_text, sizeof point_text);
    return hs_diag_set(diag, status, NULL, 0, "%s (in sweep point %s)", local.message, point_text);
}

static int sweep_add_seed(const Sweep *sw, Scenario *sc, int r, HsDiag *diag)
{
    if (sc->seed > (uint64_t)INT64_MAX - (uint64_t)r)
        return hs_diag_set(diag, HS_E_INPUT, sw->base.file, sw->repeat_line,
                           "[sweep] repeat: seed %llu + %d is 2^63 or more", (unsigned long long)sc->seed, r);
    sc->seed += (uint64_t)r;
    return HS_OK;
}

int sweep_scenario(const Sweep *sw, int64_t index, Scenario *sc, HsDiag *diag)
{
    if (index < 0 || index >= sw->n_runs)
        return hs_diag_set(diag, HS_E_INTERNAL, NULL, 0, "sweep run %lld out of range", (long long)index);
    int digits[SWEEP_MAX_AXES];
    int status = sweep_resolve_point(sw, index / sw->repeat, sc, digits, diag);
    if (status != HS_OK) return status;
    return sweep_add_seed(sw, sc, (int)(index % sw->repeat), diag);
}

/* qsort has no context argument, hence the labels travel with each element. */
typedef struct SweepLabelRef {
    const char *label;
    int64_t index;
} SweepLabelRef;

static int sweep_label_compare(const void *a, const void *b)
{
    const SweepLabelRef *x = a, *y = b;
    return strcmp(x->label, y->label);
}

int sweep_resolve(Sweep *sw, HsDiag *diag)
{
    int status = HS_OK;
    SweepLabelRef *refs = NULL;
    Scenario *sc = malloc(sizeof *sc);
    sw->labels = calloc((size_t)sw->n_runs, sizeof *sw->labels);
    sw->by_label = malloc((size_t)sw->n_runs * sizeof *sw->by_label);
    refs = malloc((size_t)sw->n_runs * sizeof *refs);
    if (sc == NULL || sw->labels == NULL || sw->by_label == NULL || refs == NULL) goto nomem;
    static const char version[] = "hetsim sweep 1\n";
    uint64_t hash = hash_fnv1a(HASH_FNV1A_START, version, sizeof version);
    for (int64_t p = 0; p < sw->n_points; p++) {
        int digits[SWEEP_MAX_AXES];
        if ((status = sweep_resolve_point(sw, p, sc, digits, diag)) != HS_OK) goto fail;
        char point_text[2048];
        sweep_point_text(sw, digits, point_text, sizeof point_text);
        uint64_t base_seed = sc->seed;
        for (int r = 0; r < sw->repeat; r++) {
            int64_t index = p * sw->repeat + r;
            sc->seed = base_seed;
            if ((status = sweep_add_seed(sw, sc, r, diag)) != HS_OK) goto fail;
            size_t need = strlen(point_text) + 32;
            if ((sw->labels[index] = malloc(need)) == NULL) goto nomem;
            snprintf(sw->labels[index], need, "%s%sseed=%llu", point_text, sw->n_axes ? " " : "",
                     (unsigned long long)sc->seed);
            /* The agents are drawn too: what world_build rejects (more samples than the
             * dataset holds) is bad input, to be found before anything runs. */
            World world;
            HsDiag local;
            hs_diag_clear(&local);
            if ((status = world_build(sc, &world, &local)) != HS_OK) {
                hs_diag_set(diag, status, NULL, 0, "%s (in sweep run %s)", local.message, sw->labels[index]);
                goto fail;
            }
            world_free(&world);
            char *config = scenario_config_string(sc);
            if (config == NULL) goto nomem;
            hash = hash_fnv1a(hash, sw->labels[index], strlen(sw->labels[index]) + 1);
            hash = hash_fnv1a(hash, config, strlen(config) + 1);
            free(config);
            refs[index] = (SweepLabelRef){sw->labels[index], index};
        }
    }
    qsort(refs, (size_t)sw->n_runs, sizeof *refs, sweep_label_compare);
    for (int64_t i = 0; i < sw->n_runs; i++) {
        if (i > 0 && strcmp(refs[i].label, refs[i - 1].label) == 0) {
            status = hs_diag_set(diag, HS_E_INPUT, sw->base.file, sw->n_axes ? sw->axes[0].line : 0,
                                 "[sweep] two runs have the same label '%s'", refs[i].label);
            goto fail;
        }
        sw->by_label[i] = refs[i].index;
    }
    snprintf(sw->id, sizeof sw->id, "sw-%016llx", (unsigned long long)hash);
    free(refs);
    free(sc);
    return HS_OK;
nomem:
    status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory expanding %lld runs", (long long)sw->n_runs);
fail:
    free(refs);
    free(sc);
    return status;
}

int64_t sweep_find(const Sweep *sw, const char *label)
{
    if (label == NULL || sw->by_label == NULL) return -1;
    int64_t lo = 0, hi = sw->n_runs;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c = strcmp(sw->labels[sw->by_label[mid]], label);
        if (c == 0) return sw->by_label[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

int sweep_run_one(const Sweep *sw, int64_t index, Sink sink, HsDiag *diag)
{
    Scenario *sc = malloc(sizeof *sc);
    if (sc == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    int status = sweep_scenario(sw, index, sc, diag);
    if (status == HS_OK) {
        RunOutcome outcome;
        status = engine_run(sc, sink, diag, &outcome);
    }
    free(sc);
    return status;
}

/* ---- the record stream: encoding ---- */

enum {
    WIRE_BEGIN = 1, WIRE_AGENTS, WIRE_ROUND, WIRE_AGENT_ROUNDS, WIRE_PAIRING, WIRE_METRIC,
    WIRE_END, WIRE_FINISHED
};

#define WIRE_NULL_STRING 0xffffffffu

static int wire_reserve(SweepWire *w, size_t more)
{
    if (w->failed) return HS_E_NOMEM;
    if (w->len + more <= w->cap) return HS_OK;
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + more) cap *= 2;
    unsigned char *grown = realloc(w->data, cap);
    if (grown == NULL) {
        w->failed = 1;
        return HS_E_NOMEM;
    }
    w->data = grown;
    w->cap = cap;
    return HS_OK;
}

static void wire_put(SweepWire *w, const void *data, size_t len)
{
    if (wire_reserve(w, len) != HS_OK) return;
    memcpy(w->data + w->len, data, len);
    w->len += len;
}

static void wire_i32(SweepWire *w, int32_t v) { wire_put(w, &v, sizeof v); }
static void wire_i64(SweepWire *w, int64_t v) { wire_put(w, &v, sizeof v); }
static void wire_f64(SweepWire *w, double v) { wire_put(w, &v, sizeof v); }

static void wire_str(SweepWire *w, const char *s)
{
    uint32_t len = s == NULL ? WIRE_NULL_STRING : (uint32_t)strlen(s) + 1;
    wire_put(w, &len, sizeof len);
    if (s != NULL) wire_put(w, s, len);
}

/* Starts a message; returns where its length goes. */
static size_t wire_begin(SweepWire *w, unsigned char type)
{
    size_t at = w->len;
    uint32_t placeholder = 0;
    wire_put(w, &placeholder, sizeof placeholder);
    wire_put(w, &type, 1);
    return at;
}

static int wire_end(SweepWire *w, size_t at)
{
    if (w->failed) return HS_E_NOMEM;
    uint32_t len = (uint32_t)(w->len - at - sizeof len);
    memcpy(w->data + at, &len, sizeof len);
    return HS_OK;
}

int sweep_wire_flush(SweepWire *w)
{
    if (w->failed) return HS_E_NOMEM;
    if (w->len == 0) return HS_OK;
    int status = w->flush(w->flush_ctx, w->data, w->len);
    w->len = 0;
    return status;
}

static int wire_maybe_flush(SweepWire *w, int status)
{
    if (status != HS_OK) return status;
    return w->len >= SWEEP_WIRE_FLUSH_BYTES ? sweep_wire_flush(w) : HS_OK;
}

static int wire_run_begin(void *ctx, const SinkRunInfo *info, int64_t *run_id)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_BEGIN);
    wire_i64(w, w->index);
    wire_str(w, info->name);
    wire_str(w, info->scenario);
    wire_str(w, info->method);
    wire_i64(w, (int64_t)info->seed);
    wire_str(w, info->mode);
    wire_str(w, info->config);
    *run_id = w->index;  /* the consumer maps it to the database's id */
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_agents(void *ctx, int64_t run_id, const SinkAgent *agents, int count)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_AGENTS);
    wire_i32(w, count);
    for (int i = 0; i < count; i++) {
        const SinkAgent *a = &agents[i];
        wire_i32(w, a->agent);
        wire_str(w, a->group);
        wire_f64(w, a->compute);
        wire_f64(w, a->uplink);
        wire_f64(w, a->downlink);
        wire_f64(w, a->latency);
        wire_i32(w, a->samples);
        wire_i32(w, a->byzantine);
    }
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_round(void *ctx, int64_t run_id, const SinkRound *r)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_ROUND);
    wire_i32(w, r->round);
    wire_f64(w, r->t_start);
    wire_f64(w, r->t_end);
    wire_f64(w, r->idle_s);
    wire_f64(w, r->bytes);
    wire_f64(w, r->extra);
    return wire_maybe_flush(w, wire_end(w, at));
}

/* The engine reports a round's agent rows right after the round: the end of a round, so
 * the rows go to the writer now and progress is seen per round. */
static int wire_agent_rounds(void *ctx, int64_t run_id, const SinkAgentRound *rows, int count)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_AGENT_ROUNDS);
    wire_i32(w, count);
    for (int i = 0; i < count; i++) {
        const SinkAgentRound *r = &rows[i];
        wire_i32(w, r->round);
        wire_i32(w, r->agent);
        wire_f64(w, r->compute_s);
        wire_f64(w, r->comm_s);
        wire_f64(w, r->idle_s);
        wire_f64(w, r->offline_s);
        wire_i32(w, (int32_t)r->role);
    }
    int status = wire_end(w, at);
    return status != HS_OK ? status : sweep_wire_flush(w);
}

static int wire_pairing(void *ctx, int64_t run_id, const SinkPairing *p)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_PAIRING);
    wire_i32(w, p->round);
    wire_i32(w, p->slow);
    wire_i32(w, p->fast);
    wire_i32(w, p->split);
    wire_f64(w, p->predicted_s);
    wire_f64(w, p->actual_s);
    wire_str(w, p->solver);
    wire_f64(w, p->solve_ms);
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_metric(void *ctx, int64_t run_id, const SinkMetric *m)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_METRIC);
    wire_f64(w, m->t);
    wire_i32(w, m->round);
    wire_i32(w, m->agent);
    wire_f64(w, m->train_loss);
    wire_f64(w, m->test_loss);
    wire_f64(w, m->test_accuracy);
    wire_f64(w, m->bytes_sent);
    wire_i32(w, m->has_domains);
    wire_f64(w, m->heldout_accuracy);
    wire_f64(w, m->seen_accuracy);
    return wire_maybe_flush(w, wire_end(w, at));
}

static int wire_run_end(void *ctx, int64_t run_id, const SinkRunEnd *end)
{
    SweepWire *w = ctx;
    size_t at = wire_begin(w, WIRE_END);
    wire_i32(w, (int32_t)end->status);
    wire_f64(w, end->wall_s);
    wire_f64(w, end->sim_time_s);
    wire_f64(w, end->final_accuracy);
    wire_i32(w, end->rounds_done);
    wire_str(w, end->message);
    int status = wire_end(w, at);
    return status != HS_OK ? status : sweep_wire_flush(w);
}

static const SinkOps wire_ops = {
    .run_begin = wire_run_begin,
    .agents = wire_agents,
    .round = wire_round,
    .agent_rounds = wire_agent_rounds,
    .pairing = wire_pairing,
    .metric = wire_metric,
    .run_end = wire_run_end,
};

Sink sweep_wire_sink(SweepWire *w, int64_t index, SweepFlushFn flush, void *flush_ctx)
{
    w->index = index;
    w->flush = flush;
    w->flush_ctx = flush_ctx;
    return (Sink){.ops = &wire_ops, .ctx = w};
}

int sweep_wire_finished(SweepWire *w, int64_t index, int status, const char *message)
{
    size_t at = wire_begin(w, WIRE_FINISHED);
    wire_i64(w, index);
    wire_i32(w, status);
    wire_str(w, message);
    int rc = wire_end(w, at);
    return rc != HS_OK ? rc : sweep_wire_flush(w);
}

void sweep_wire_free(SweepWire *w)
{
    if (w == NULL) return;
    free(w->data);
    w->data = NULL;
    w->len = w->cap = 0;
}

/* ---- the record stream: replay ---- */

typedef struct WireReader {
    const unsigned char *p, *end;
    int bad;
} WireReader;

static void read_bytes(WireReader *r, void *out, size_t len)
{
    if (r->bad || (size_t)(r->end - r->p) < len) {
        r->bad = 1;
        memset(out, 0, len);
        return;
    }
    memcpy(out, r->p, len);
    r->p += len;
}

static int32_t read_i32(WireReader *r) { int32_t v; read_bytes(r, &v, sizeof v); return v; }
static int64_t read_i64(WireReader *r) { int64_t v; read_bytes(r, &v, sizeof v); return v; }
static double read_f64(WireReader *r) { double v; read_bytes(r, &v, sizeof v); return v; }

/* Points into the message: strings are sent with their NUL. */
static const char *read_str(WireReader *r)
{
    uint32_t len;
    read_bytes(r, &len, sizeof len);
    if (r->bad || len == WIRE_NULL_STRING) return NULL;
    if (len == 0 || (size_t)(r->end - r->p) < len || r->p[len - 1] != '\0') {
        r->bad = 1;
        return NULL;
    }
    const char *s = (const char *)r->p;
    r->p += len;
    return s;
}

void sweep_replay_init(SweepReplay *r, const Sweep *sweep, Sink out, SweepFinishedFn finished,
                       void *finished_ctx)
{
    memset(r, 0, sizeof *r);
    r->sweep = sweep;
    r->out = out;
    r->finished = finished;
    r->finished_ctx = finished_ctx;
    r->index = -1;
    r->run_id = -1;
    r->accuracy = NAN;
}

void sweep_replay_free(SweepReplay *r)
{
    if (r == NULL) return;
    free(r->rows);
    free(r->agents);
    r->rows = NULL;
    r->agents = NULL;
}

static int replay_bad(HsDiag *diag, const char *what)
{
    return hs_diag_set(diag, HS_E_INTERNAL, NULL, 0, "sweep record stream: %s", what);
}

static int replay_grow(void **array, int *cap, int need, size_t size)
{
    if (need <= *cap) return HS_OK;
    void *grown = realloc(*array, (size_t)need * size);
    if (grown == NULL) return HS_E_NOMEM;
    *array = grown;
    *cap = need;
    return HS_OK;
}

static int replay_message(SweepReplay *r, WireReader *in, HsDiag *diag)
{
    unsigned char type;
    read_bytes(in, &type, 1);
    const SinkOps *ops = r->out.ops;
    void *ctx = r->out.ctx;
    int status = HS_OK;
    if (type != WIRE_BEGIN && type != WIRE_FINISHED && !r->in_run) return replay_bad(diag, "row outside a run");
    switch (type) {
    case WIRE_BEGIN: {
        if (r->in_run) return replay_bad(diag, "run begins inside a run");
        int64_t index = read_i64(in);
        SinkRunInfo info;
        info.name = read_str(in);
        info.scenario = read_str(in);
        info.method = read_str(in);
        info.seed = (uint64_t)read_i64(in);
        info.mode = read_str(in);
        info.config = read_str(in);
        if (in->bad || index < 0 || index >= r->sweep->n_runs) return replay_bad(diag, "bad run begin");
        info.sweep = r->sweep->id;
        info.point = r->sweep->labels ? r->sweep->labels[index] : NULL;
        r->index = index;
        r->in_run = r->begun = 1;
        r->ended = 0;
        r->rounds = 0;
        r->t_end = NAN;
        r->accuracy = NAN;
        status = ops->run_begin(ctx, &info, &r->run_id);
        break;
    }
    case WIRE_AGENTS: {
        int count = read_i32(in);
        if (in->bad || count < 0) return replay_bad(diag, "bad agents");
        if (replay_grow((void **)&r->agents, &r->agents_cap, count, sizeof *r->agents) != HS_OK)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < count; i++) {
            SinkAgent *a = &r->agents[i];
            a->agent = read_i32(in);
            a->group = read_str(in);
            a->compute = read_f64(in);
            a->uplink = read_f64(in);
            a->downlink = read_f64(in);
            a->latency = read_f64(in);
            a->samples = read_i32(in);
            a->byzantine = read_i32(in);
        }
        if (in->bad) return replay_bad(diag, "bad agents");
        status = ops->agents(ctx, r->run_id, r->agents, count);
        break;
    }
    case WIRE_ROUND: {
        SinkRound row;
        row.round = read_i32(in);
        row.t_start = read_f64(in);
        row.t_end = read_f64(in);
        row.idle_s = read_f64(in);
        row.bytes = read_f64(in);
        row.extra = read_f64(in);
        if (in->bad) return replay_bad(diag, "bad round");
        r->rounds++;
        r->t_end = row.t_end;
        status = ops->round(ctx, r->run_id, &row);
        break;
    }
    case WIRE_AGENT_ROUNDS: {
        int count = read_i32(in);
        if (in->bad || count < 0) return replay_bad(diag, "bad agent rounds");
        if (replay_grow((void **)&r->rows, &r->rows_cap, count, sizeof *r->rows) != HS_OK)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < count; i++) {
            SinkAgentRound *row = &r->rows[i];
            row->round = read_i32(in);
            row->agent = read_i32(in);
            row->compute_s = read_f64(in);
            row->comm_s = read_f64(in);
            row->idle_s = read_f64(in);
            row->offline_s = read_f64(in);
            row->role = (SinkRole)read_i32(in);
        }
        if (in->bad) return replay_bad(diag, "bad agent rounds");
        status = ops->agent_rounds(ctx, r->run_id, r->rows, count);
        break;
    }
    case WIRE_PAIRING: {
        SinkPairing p;
        p.round = read_i32(in);
        p.slow = read_i32(in);
        p.fast = read_i32(in);
        p.split = read_i32(in);
        p.predicted_s = read_f64(in);
        p.actual_s = read_f64(in);
        p.solver = read_str(in);
        p.solve_ms = read_f64(in);
        if (in->bad) return replay_bad(diag, "bad pairing");
        status = ops->pairing(ctx, r->run_id, &p);
        break;
    }
    case WIRE_METRIC: {
        SinkMetric m;
        m.t = read_f64(in);
        m.round = read_i32(in);
        m.agent = read_i32(in);
        m.train_loss = read_f64(in);
        m.test_loss = read_f64(in);
        m.test_accuracy = read_f64(in);
        m.bytes_sent = read_f64(in);
        m.has_domains = read_i32(in);
        m.heldout_accuracy = read_f64(in);
        m.seen_accuracy = read_f64(in);
        if (in->bad) return replay_bad(diag, "bad metric");
        if (m.agent < 0 && !isnan(m.test_accuracy)) r->accuracy = m.test_accuracy;
        status = ops->metric(ctx, r->run_id, &m);
        break;
    }
    case WIRE_END: {
        SinkRunEnd end;
        end.status = (SinkStatus)read_i32(in);
        end.wall_s = read_f64(in);
        end.sim_time_s = read_f64(in);
        end.final_accuracy = read_f64(in);
        end.rounds_done = read_i32(in);
        const char *message = read_str(in);
        if (in->bad) return replay_bad(diag, "bad run end");
        snprintf(r->end_message, sizeof r->end_message, "%s", message ? message : "");
        end.message = message ? r->end_message : NULL;
        r->end = end;
        r->in_run = 0;
        r->ended = 1;
        status = ops->run_end(ctx, r->run_id, &end);
        break;
    }
    case WIRE_FINISHED: {
        int64_t index = read_i64(in);
        int run_status = read_i32(in);
        const char *message = read_str(in);
        if (in->bad) return replay_bad(diag, "bad finished");
        if (r->in_run) return replay_bad(diag, "run finished without its end");
        if (r->finished) r->finished(r->finished_ctx, r, index, run_status, message);
        r->begun = 0;
        r->ended = 0;
        r->run_id = -1;
        return HS_OK;
    }
    default:
        return replay_bad(diag, "unknown message");
    }
    if (status != HS_OK)
        return hs_diag_set(diag, status, NULL, 0, "writing run %lld (%s): %s", (long long)r->run_id,
                           r->sweep->labels ? r->sweep->labels[r->index] : "?", hs_error_name(status));
    return HS_OK;
}

int sweep_replay(SweepReplay *r, const void *data, size_t len, size_t *used, HsDiag *diag)
{
    const unsigned char *p = data, *end = p + len;
    *used = 0;
    while ((size_t)(end - p) >= sizeof(uint32_t)) {
        uint32_t n;
        memcpy(&n, p, sizeof n);
        if ((size_t)(end - p) - sizeof n < n) break;  /* the rest has not arrived yet */
        WireReader in = {.p = p + sizeof n, .end = p + sizeof n + n};
        int status = replay_message(r, &in, diag);
        if (status != HS_OK) return status;
        if (in.p != in.end) return replay_bad(diag, "message longer than its fields");
        p += sizeof n + n;
        *used = (size_t)(p - (const unsigned char *)data);
    }
    return HS_OK;
}

int sweep_replay_abandon(SweepReplay *r, const char *why, HsDiag *diag)
{
    if (!r->in_run) return HS_OK;
    snprintf(r->end_message, sizeof r->end_message, "%s", why);
    SinkRunEnd end = {.status = SINK_STATUS_FAILED, .wall_s = NAN, .sim_time_s = r->t_end,
                      .final_accuracy = r->accuracy, .rounds_done = r->rounds, .message = r->end_message};
    r->end = end;
    r->in_run = 0;
    r->ended = 1;
    int status = r->out.ops->run_end(r->out.ctx, r->run_id, &end);
    if (status != HS_OK)
        return hs_diag_set(diag, status, NULL, 0, "marking run %lld failed: %s", (long long)r->run_id,
                           hs_error_name(status));
    return HS_OK;
}
