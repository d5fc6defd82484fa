/* sweep.c — [sweep] expansion (see sweep.h for the rules): the values of each key, the
 * points, their labels and the sweep id. Running them is driver/ (the record stream that
 * carries the runs' rows is driver/sweep_stream.c).
 * Expansion is cheap next to a run (one document copy and one resolution per point), so
 * sweep_expand resolves every point up front: a bad key or value in any point stops the
 * sweep before the first run, and the sweep id covers every run's resolved config (its
 * text built once per point, sweep_idtext.h). */
#include "sim/scenario/sweep.h"
#include "sim/scenario/sweep_idtext.h"

#include "base/hash.h"
#include "base/grow.h"

#include <ctype.h>
#include <errno.h>
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
        if (hs_grow((void **)&list, &capacity, n, sizeof *list, 8) != HS_OK) goto nomem;
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
        doc->section_origins[kept] = doc->section_origins[i];
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

int sweep_expand(Sweep *sw, SweepRunCheck check, HsDiag *diag)
{
    int status = HS_OK;
    SweepLabelRef *refs = NULL;
    SweepIdText id_text = {0};
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
            /* What the caller checks beyond resolution (driver/sweep.h: the agents are
             * drawn) is bad input too, to be found before anything runs. */
            HsDiag local;
            hs_diag_clear(&local);
            if (check && (status = check(sc, &local)) != HS_OK) {
                hs_diag_set(diag, status, NULL, 0, "%s (in sweep run %s)", local.message, sw->labels[index]);
                goto fail;
            }
            if (r == 0 && sw->check_run != NULL && (status = sw->check_run(sw->check_ctx, sc, &local)) != HS_OK) {
                hs_diag_set(diag, status, NULL, 0, "%s (in sweep run %s)", local.message, sw->labels[index]);
                goto fail;
            }
            /* the point's text is built once; its repeats differ in the seed's digits */
            if (r == 0 && sweep_idtext_point(&id_text, sc) != HS_OK) goto nomem;
            const char *run_text = sweep_idtext_run(&id_text, sc);
            if (run_text == NULL) goto nomem;
            hash = hash_fnv1a(hash, sw->labels[index], strlen(sw->labels[index]) + 1);
            hash = hash_fnv1a(hash, run_text, strlen(run_text) + 1);
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
    sweep_idtext_free(&id_text);
    return HS_OK;
nomem:
    status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory expanding %lld runs", (long long)sw->n_runs);
fail:
    free(refs);
    free(sc);
    sweep_idtext_free(&id_text);
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
