/* names.c — see names.h. */
#include "base/names.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

int names_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diagonal = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
            int best = diagonal + cost;
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diagonal = up;
        }
    }
    return row[lb];
}

int names_near_limit(const char *name)
{
    int limit = (int)strlen(name) / 3 + 1;
    return limit < 3 ? limit : 3;
}

void names_suggest(const char *name, const char *const *known, char *out, size_t size)
{
    const char *best = NULL;
    int best_distance = INT_MAX;
    for (int i = 0; known && known[i]; i++) {
        int d = names_edit_distance(name, known[i]);
        if (d < best_distance) {
            best_distance = d;
            best = known[i];
        }
    }
    if (best && best_distance <= names_near_limit(name))
        snprintf(out, size, " (did you mean '%s'?)", best);
    else
        out[0] = '\0';
}
