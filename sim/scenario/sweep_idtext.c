/* sweep_idtext.c — a sweep run's id text, built once per point (sweep_idtext.h). */
#include "sim/scenario/sweep_idtext.h"

#include "base/hs_error.h"
#include "base/numtext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text a sweep's id hashes for one run: its runs.config with numbers in the %.17g form
 * hetsim wrote before it wrote the shortest form (base/numtext.h), but for the [method]
 * section, which was written as the keys' text (and so in the shortest form a user
 * types). The ids of sweeps begun before then stay what they were, so `--resume` finds
 * them. */
static char *idtext_of_config(char *config)
{
    char *method = strstr(config, "\n[method]\n");
    if (method == NULL) return numtext_as_17g(config);
    method++;                                    /* its header's '[' */
    char *after = strstr(method, "\n[");          /* the '\n' before the next header */
    size_t middle = after ? (size_t)(after - method) : strlen(method);
    char saved = *method;
    *method = '\0';
    char *head = numtext_as_17g(config);
    *method = saved;
    char *tail = numtext_as_17g(after ? after : "");
    char *out = head && tail ? malloc(strlen(head) + middle + strlen(tail) + 1) : NULL;
    if (out) {
        size_t n = strlen(head);
        memcpy(out, head, n);
        memcpy(out + n, method, middle);
        strcpy(out + n + middle, tail);
    }
    free(head);
    free(tail);
    return out;
}

char *sweep_id_text_full(const Scenario *sc)
{
    char *config = scenario_config_string(sc);
    char *text = config ? idtext_of_config(config) : NULL;
    free(config);
    return text;
}

/* Where the digits of "seed = N" are in [run], the text's first section (written first,
 * with no blank line before its header; the next header follows a blank line). A value
 * never spans lines, so a line that starts "seed = " is the key's. The %.17g form leaves
 * a whole number as it is, so the digits are sc->seed's, which is checked: 0 when they
 * are not found as expected (the caller then builds every run's text in full). */
static size_t idtext_find_seed(const char *text, uint64_t seed, size_t *len)
{
    static const char key[] = "\nseed = ";
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)seed);
    const char *end = strstr(text, "\n\n[");
    for (const char *p = strstr(text, key); p != NULL && (end == NULL || p < end); p = strstr(p + 1, key)) {
        const char *at = p + sizeof key - 1;
        if (strncmp(at, digits, (size_t)n) == 0 && at[n] == '\n') {
            *len = (size_t)n;
            return (size_t)(at - text);
        }
    }
    return 0;
}

int sweep_idtext_point(SweepIdText *t, const Scenario *sc)
{
    sweep_idtext_free(t);
    if ((t->text = sweep_id_text_full(sc)) == NULL) return HS_E_NOMEM;
    t->length = strlen(t->text);
    t->seed_at = idtext_find_seed(t->text, sc->seed, &t->seed_len);
    /* a seed has at most 19 digits (< 2^63) */
    if (t->seed_at > 0 && (t->run = malloc(t->length - t->seed_len + 20 + 1)) == NULL) {
        sweep_idtext_free(t);
        return HS_E_NOMEM;
    }
    return HS_OK;
}

const char *sweep_idtext_run(SweepIdText *t, const Scenario *sc)
{
    if (t->text == NULL) return NULL;
    if (t->seed_at == 0) {
        free(t->run);
        return t->run = sweep_id_text_full(sc);
    }
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)sc->seed);
    if (n > 20) return NULL; /* cannot happen for a uint64_t */
    size_t tail = t->seed_at + t->seed_len;
    memcpy(t->run, t->text, t->seed_at);
    memcpy(t->run + t->seed_at, digits, (size_t)n);
    memcpy(t->run + t->seed_at + (size_t)n, t->text + tail, t->length - tail + 1);
    return t->run;
}

void sweep_idtext_free(SweepIdText *t)
{
    free(t->text);
    free(t->run);
    memset(t, 0, sizeof *t);
}
