/* plot_levels.c — the group's points as a table of cells (facet, method, level) for the
 * figures drawn against the heterogeneity level and for the accuracy panels
 * (plot_internal.h). A facet is one combination of the values of the keys that vary in
 * the group besides the level and the method (`data.partition = iid`): each is a panel
 * of its own, so a line is one method and a legend lists methods only.
 *
 * Merging: a figure hands over its numbers per cell; facets whose every number agrees
 * within 1e-12 become one panel, then methods that agree in every panel become one line
 * whose legend entry names them all ("localsgd = qsr"). A group has a few dozen points,
 * so the quadratic comparisons cost nothing. */
#include "analysis/plot_internal.h"

#include "analysis/label.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *plot_join_names(const char *const *names, int n)
{
    size_t size = 1;
    for (int i = 0; i < n; i++) size += strlen(names[i]) + 3;
    char *text = malloc(size);
    if (text == NULL) return NULL;
    text[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i > 0) strcat(text, " = ");
        strcat(text, names[i]);
    }
    return text;
}

void plot_levels_free(PlotLevels *lv)
{
    if (lv->facet_names != NULL)
        for (int f = 0; f < lv->facet_count; f++) free(lv->facet_names[f]);
    if (lv->facet_labels != NULL)
        for (int f = 0; f < lv->facet_count; f++) free(lv->facet_labels[f]);
    if (lv->method_labels != NULL)
        for (int m = 0; m < lv->method_count; m++) free(lv->method_labels[m]);
    free(lv->facet_names);
    free(lv->facet_labels);
    free(lv->facet_kept);
    free(lv->methods);
    free(lv->method_labels);
    free(lv->method_kept);
    free(lv->levels);
    free(lv->point);
    memset(lv, 0, sizeof *lv);
}

/* The facet text of a point: "WORDS = VALUE, WORDS = VALUE" over the varying keys. */
static char *plot_levels_facet(const Label *label, const char *const *keys, int key_count)
{
    char text[1024] = "";
    size_t used = 0;
    for (int k = 0; k < key_count; k++) {
        char words[200];
        const char *value = label_value(label, keys[k]);
        plot_key_words(keys[k], words, sizeof words);
        int wrote = snprintf(text + used, sizeof text - used, "%s%s = %s", used ? ", " : "", words,
                             value ? value : "(none)");
        if (wrote < 0 || (size_t)wrote >= sizeof text - used) break;
        used += (size_t)wrote;
    }
    return strdup(text);
}

int plot_levels_build(const Plot *plot, PlotLevels *lv)
{
    const RunSet *set = plot->set;
    const RunGroup *group = &set->groups[plot->group];
    int status = HS_E_NOMEM, n = 0, key_count = 0;
    memset(lv, 0, sizeof *lv);
    int *members = calloc((size_t)set->point_count + 1, sizeof *members);
    Label *labels = calloc((size_t)set->point_count + 1, sizeof *labels);
    const char **keys = NULL;
    int *facet_of = calloc((size_t)set->point_count + 1, sizeof *facet_of);
    if (members == NULL || labels == NULL || facet_of == NULL) goto done;
    size_t key_capacity = 1;
    for (int p = 0; p < set->point_count; p++) {
        if (set->points[p].group != plot->group) continue;
        if (label_parse(set->points[p].label, &labels[n]) != HS_OK) goto done;
        key_capacity += (size_t)labels[n].count;
        members[n++] = p;
    }
    keys = calloc(key_capacity, sizeof *keys);
    if (keys == NULL) goto done;
    /* the keys that vary, but for the method and the level's key, in label order */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < labels[i].count; k++) {
            const char *key = labels[i].pairs[k].key;
            if (strcmp(key, "run.method") == 0 ||
                (group->axis_key != NULL && strcmp(key, group->axis_key) == 0))
                continue;
            int known = 0;
            for (int j = 0; j < key_count && !known; j++) known = strcmp(keys[j], key) == 0;
            if (known) continue;
            const char *first = label_value(&labels[0], key);
            int varies = 0;
            for (int j = 0; j < n && !varies; j++) {
                const char *value = label_value(&labels[j], key);
                varies = (first == NULL) != (value == NULL) ||
                         (first != NULL && strcmp(first, value) != 0);
            }
            if (varies) keys[key_count++] = key;
        }
    lv->facet_names = calloc((size_t)n + 1, sizeof *lv->facet_names);
    lv->methods = calloc((size_t)n + 1, sizeof *lv->methods);
    lv->levels = calloc((size_t)n + 1, sizeof *lv->levels);
    if (lv->facet_names == NULL || lv->methods == NULL || lv->levels == NULL) goto done;
    for (int i = 0; i < n; i++) {
        const RunPoint *point = &set->points[members[i]];
        char *facet = plot_levels_facet(&labels[i], keys, key_count);
        if (facet == NULL) goto done;
        int f = 0;
        while (f < lv->facet_count && strcmp(lv->facet_names[f], facet) != 0) f++;
        if (f == lv->facet_count) lv->facet_names[lv->facet_count++] = facet;
        else free(facet);
        facet_of[i] = f;
        int m = 0;
        while (m < lv->method_count && strcmp(lv->methods[m], point->method) != 0) m++;
        if (m == lv->method_count) lv->methods[lv->method_count++] = point->method;
        int l = 0;
        while (l < lv->level_count && lv->levels[l] != point->level) l++;
        if (l == lv->level_count) lv->levels[lv->level_count++] = point->level;
    }
    qsort(lv->levels, (size_t)lv->level_count, sizeof *lv->levels, plot_compare_double);
    size_t cells = (size_t)lv->facet_count * (size_t)lv->method_count * (size_t)lv->level_count;
    lv->point = malloc((cells + 1) * sizeof *lv->point);
    lv->facet_kept = calloc((size_t)lv->facet_count + 1, sizeof *lv->facet_kept);
    lv->facet_labels = calloc((size_t)lv->facet_count + 1, sizeof *lv->facet_labels);
    lv->method_kept = calloc((size_t)lv->method_count + 1, sizeof *lv->method_kept);
    lv->method_labels = calloc((size_t)lv->method_count + 1, sizeof *lv->method_labels);
    if (!lv->point || !lv->facet_kept || !lv->facet_labels || !lv->method_kept || !lv->method_labels)
        goto done;
    for (size_t c = 0; c < cells; c++) lv->point[c] = -1;
    for (int i = 0; i < n; i++) {
        const RunPoint *point = &set->points[members[i]];
        int m = 0, l = 0;
        while (strcmp(lv->methods[m], point->method) != 0) m++;
        while (lv->levels[l] != point->level) l++;
        lv->point[((size_t)facet_of[i] * lv->method_count + m) * lv->level_count + l] = members[i];
    }
    status = HS_OK;
done:
    for (int i = 0; i < n; i++) label_free(&labels[i]);
    free(labels);
    free(members);
    free(keys);
    free(facet_of);
    if (status != HS_OK) plot_levels_free(lv);
    return status;
}

/* "partition = iid = dirichlet" when the facets differ in one key's value, else the
 * facets' names joined by " = " in parentheses. */
static char *plot_levels_facet_label(const PlotLevels *lv, const int *members, int n)
{
    if (n == 1) return strdup(lv->facet_names[members[0]]);
    const char **parts = calloc((size_t)n, sizeof *parts);
    char **owned = calloc((size_t)n, sizeof *owned);
    char *text = NULL;
    if (parts == NULL || owned == NULL) goto done;
    const char *first = lv->facet_names[members[0]], *equals = strstr(first, " = ");
    int simple = equals != NULL && strstr(first, ", ") == NULL;
    size_t prefix = simple ? (size_t)(equals - first) + 3 : 0;
    for (int i = 0; i < n && simple; i++)
        simple = strncmp(lv->facet_names[members[i]], first, prefix) == 0 &&
                 strstr(lv->facet_names[members[i]], ", ") == NULL;
    for (int i = 0; i < n; i++) {
        const char *name = lv->facet_names[members[i]];
        if (simple) {
            parts[i] = i == 0 ? name : name + prefix;
        } else {
            size_t size = strlen(name) + 3;
            if ((owned[i] = malloc(size)) == NULL) goto done;
            snprintf(owned[i], size, "(%s)", name);
            parts[i] = owned[i];
        }
    }
    text = plot_join_names(parts, n);
done:
    if (owned != NULL)
        for (int i = 0; i < n; i++) free(owned[i]);
    free(owned);
    free(parts);
    return text;
}

/* The cells of facet f and method m start at cell (f * M + m) * L. */
static size_t plot_levels_cell(const PlotLevels *lv, int f, int m, int l)
{
    return ((size_t)f * lv->method_count + m) * lv->level_count + l;
}

int plot_levels_merge_by(PlotLevels *lv, PlotCellSame *same, PlotCellEmpty *empty, void *ctx)
{
    int F = lv->facet_count, M = lv->method_count, L = lv->level_count;
    int *alias = calloc((size_t)(F > M ? F : M) + 1, sizeof *alias);
    int *members = calloc((size_t)(F > M ? F : M) + 1, sizeof *members);
    const char **names = calloc((size_t)M + 1, sizeof *names);
    int status = HS_E_NOMEM;
    if (alias == NULL || members == NULL || names == NULL) goto done;
    /* a facet or a method with no number at all is not drawn */
    for (int f = 0; f < F; f++) {
        lv->facet_kept[f] = 0;
        for (int m = 0; m < M && !lv->facet_kept[f]; m++)
            for (int l = 0; l < L && !lv->facet_kept[f]; l++)
                lv->facet_kept[f] = !empty(ctx, plot_levels_cell(lv, f, m, l));
    }
    for (int f = 0; f < F; f++) {
        alias[f] = f;
        for (int g = 0; g < f && alias[f] == f && lv->facet_kept[f]; g++) {
            if (!lv->facet_kept[g] || alias[g] != g) continue;
            int equal = 1;
            for (int m = 0; m < M && equal; m++)
                for (int l = 0; l < L && equal; l++)
                    equal = same(ctx, plot_levels_cell(lv, f, m, l), plot_levels_cell(lv, g, m, l));
            if (equal) alias[f] = g;
        }
        if (alias[f] != f) lv->facet_kept[f] = 0;
    }
    for (int f = 0; f < F; f++) {
        free(lv->facet_labels[f]);
        lv->facet_labels[f] = NULL;
        if (!lv->facet_kept[f]) continue;
        int n = 0;
        for (int g = f; g < F; g++)
            if (alias[g] == f) members[n++] = g;
        if ((lv->facet_labels[f] = plot_levels_facet_label(lv, members, n)) == NULL) goto done;
    }
    for (int m = 0; m < M; m++) {
        lv->method_kept[m] = 0;
        for (int f = 0; f < F && !lv->method_kept[m]; f++)
            for (int l = 0; l < L && !lv->method_kept[m]; l++)
                lv->method_kept[m] = !empty(ctx, plot_levels_cell(lv, f, m, l));
    }
    for (int m = 0; m < M; m++) {
        alias[m] = m;
        for (int j = 0; j < m && alias[m] == m && lv->method_kept[m]; j++) {
            if (!lv->method_kept[j] || alias[j] != j) continue;
            int equal = 1;
            for (int f = 0; f < F && equal; f++)
                for (int l = 0; l < L && equal; l++)
                    equal = same(ctx, plot_levels_cell(lv, f, m, l), plot_levels_cell(lv, f, j, l));
            if (equal) alias[m] = j;
        }
        if (alias[m] != m) lv->method_kept[m] = 0;
    }
    for (int m = 0; m < M; m++) {
        free(lv->method_labels[m]);
        lv->method_labels[m] = NULL;
        if (!lv->method_kept[m]) continue;
        int n = 0;
        for (int j = m; j < M; j++)
            if (alias[j] == m) names[n++] = lv->methods[j];
        if ((lv->method_labels[m] = plot_join_names(names, n)) == NULL) goto done;
    }
    status = HS_OK;
done:
    free(alias);
    free(members);
    free(names);
    return status;
}

/* ---- merging cells of `count` numbers ---- */

typedef struct PlotValues {
    const double *values;
    int count;
} PlotValues;

static int plot_values_same(void *ctx, size_t a, size_t b)
{
    const PlotValues *v = ctx;
    for (int k = 0; k < v->count; k++)
        if (!plot_same(v->values[a * v->count + k], v->values[b * v->count + k])) return 0;
    return 1;
}

static int plot_values_empty(void *ctx, size_t cell)
{
    const PlotValues *v = ctx;
    for (int k = 0; k < v->count; k++)
        if (!isnan(v->values[cell * v->count + k])) return 0;
    return 1;
}

int plot_levels_merge(PlotLevels *lv, const double *values, int count)
{
    PlotValues v = { values, count };
    return plot_levels_merge_by(lv, plot_values_same, plot_values_empty, &v);
}
