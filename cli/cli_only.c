/* cli_only.c — `--only KEY=V1,V2`: the points of a sweep to run (cli_only.h). */
#include "cli/cli_only.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Equal once white space is removed. */
static int only_same_text(const char *a, const char *b)
{
    for (;;) {
        while (isspace((unsigned char)*a)) a++;
        while (isspace((unsigned char)*b)) b++;
        if (*a != *b) return 0;
        if (*a == '\0') return 1;
        a++;
        b++;
    }
}

/* Both read whole as the same number. */
static int only_same_number(const char *a, const char *b)
{
    char *end_a, *end_b;
    double x = strtod(a, &end_a), y = strtod(b, &end_b);
    if (end_a == a || end_b == b) return 0;
    while (isspace((unsigned char)*end_a)) end_a++;
    while (isspace((unsigned char)*end_b)) end_b++;
    return *end_a == '\0' && *end_b == '\0' && x == y;
}

/* The axis named "SECTION.KEY" (name is length bytes long), -1 if none. */
static int only_axis(const Sweep *sw, const char *name, size_t length)
{
    for (int a = 0; a < sw->n_axes; a++) {
        size_t section = strlen(sw->axes[a].section);
        if (length == section + 1 + strlen(sw->axes[a].key) && strncmp(name, sw->axes[a].section, section) == 0 &&
            name[section] == '.' && strncmp(name + section + 1, sw->axes[a].key, length - section - 1) == 0)
            return a;
    }
    return -1;
}

/* Appends to why (a message of why_size bytes) what snprintf would write. */
#define ONLY_SAY(...) \
    do { \
        size_t used_ = strlen(why); \
        if (used_ < why_size) snprintf(why + used_, why_size - used_, __VA_ARGS__); \
    } while (0)

static void only_list_keys(const Sweep *sw, char *why, size_t why_size)
{
    if (sw->n_axes == 0) {
        ONLY_SAY("the scenario sweeps no key");
        return;
    }
    ONLY_SAY("swept: ");
    for (int a = 0; a < sw->n_axes; a++) ONLY_SAY("%s%s.%s", a ? ", " : "", sw->axes[a].section, sw->axes[a].key);
}

static void only_list_values(const SweepAxis *axis, char *why, size_t why_size)
{
    for (int v = 0; v < axis->n_values; v++) ONLY_SAY("%s%s", v ? "; " : "", axis->values[v]);
}

int cli_only_select(const Sweep *sw, const char *const *only, int n_only, unsigned char *selected,
                    int64_t *n_selected, char *why, size_t why_size)
{
    why[0] = '\0';
    /* wanted[a][v]: value v of axis a is kept; an axis no --only names keeps them all */
    unsigned char *wanted[SWEEP_MAX_AXES] = {0};
    int named[SWEEP_MAX_AXES] = {0}, status = 0;
    for (int a = 0; a < sw->n_axes; a++)
        if ((wanted[a] = calloc((size_t)sw->axes[a].n_values, 1)) == NULL) goto nomem;
    for (int i = 0; i < n_only; i++) {
        const char *eq = strchr(only[i], '=');
        if (eq == NULL || eq == only[i]) {
            ONLY_SAY("--only needs KEY=VALUE[,VALUE...], got '%s'", only[i]);
            status = 2;
            goto done;
        }
        int a = only_axis(sw, only[i], (size_t)(eq - only[i]));
        if (a < 0) {
            ONLY_SAY("--only %.*s: no point sweeps %.*s (", (int)(eq - only[i]), only[i], (int)(eq - only[i]),
                     only[i]);
            only_list_keys(sw, why, why_size);
            ONLY_SAY(")");
            status = 2;
            goto done;
        }
        char **values = NULL, split_why[256];
        int count = 0;
        if (sweep_split_values(eq + 1, &values, &count, split_why, sizeof split_why) != HS_OK) {
            ONLY_SAY("--only %s: %s", only[i], split_why);
            status = 2;
            goto done;
        }
        named[a] = 1;
        const SweepAxis *axis = &sw->axes[a];
        for (int k = 0; k < count && status == 0; k++) {
            int found = -1;
            for (int v = 0; v < axis->n_values && found < 0; v++)
                if (only_same_text(values[k], axis->values[v]) || only_same_number(values[k], axis->values[v]))
                    found = v;
            if (found < 0) {
                ONLY_SAY("--only %s.%s: '%s' is not a swept value of %s.%s (", axis->section, axis->key, values[k],
                         axis->section, axis->key);
                only_list_values(axis, why, why_size);
                ONLY_SAY(")");
                status = 2;
            } else {
                wanted[a][found] = 1;
            }
        }
        sweep_values_free(values, count);
        if (status != 0) goto done;
    }
    /* point p's value of axis a: the first axis varies slowest (sweep.h) */
    *n_selected = 0;
    for (int64_t p = 0; p < sw->n_points; p++) {
        int64_t rest = p;
        int keep = 1;
        for (int a = sw->n_axes - 1; a >= 0; a--) {
            int v = (int)(rest % sw->axes[a].n_values);
            rest /= sw->axes[a].n_values;
            if (named[a] && !wanted[a][v]) keep = 0;
        }
        for (int r = 0; r < sw->repeat; r++) selected[p * sw->repeat + r] = (unsigned char)keep;
        *n_selected += keep ? sw->repeat : 0;
    }
    goto done;
nomem:
    ONLY_SAY("out of memory");
    status = 1;
done:
    for (int a = 0; a < sw->n_axes; a++) free(wanted[a]);
    return status;
}
