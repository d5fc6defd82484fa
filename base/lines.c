/* lines.c — see lines.h. */
#include "base/lines.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int lines_next(FILE *f, const char *path, char *line, int size, int *lineno, HsDiag *diag)
{
    if (fgets(line, size, f) == NULL) return 0;
    ++*lineno;
    if (strchr(line, '\n') == NULL && !feof(f))
        return hs_diag_set(diag, HS_E_INPUT, path, *lineno, "line longer than %d characters", size - 2);
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    return 1;
}

int lines_parse_index(const char **p, long *value, const char **text, int *text_len)
{
    const char *s = *p;
    while (isspace((unsigned char)*s)) s++;
    int sign = *s == '-' || *s == '+';
    if (!isdigit((unsigned char)s[sign])) return 0;
    char *end;
    *value = strtol(s, &end, 10);
    if (*end != '\0' && !isspace((unsigned char)*end)) return 0;
    *text = s;
    *text_len = (int)(end - s);
    *p = end;
    return 1;
}

int lines_rest_blank(const char *p)
{
    while (isspace((unsigned char)*p)) p++;
    return *p == '\0';
}
