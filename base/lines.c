/* lines.c — see lines.h. */
#include "base/lines.h"

#include "base/input_file.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int lines_open(const char *path, LineText *t, HsDiag *diag)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    return input_file_read_text(path, LINES_MAX_BYTES, &t->text, &t->len, diag);
}

void lines_free(LineText *t)
{
    if (t == NULL) return;
    free(t->text);
    t->text = NULL;
    t->len = t->pos = 0;
}

int lines_next(LineText *t, char *line, int size, HsDiag *diag)
{
    if (t->pos >= t->len) return 0;
    const char *start = t->text + t->pos;
    const char *eol = memchr(start, '\n', t->len - t->pos);
    size_t n = eol ? (size_t)(eol - start) + 1 : t->len - t->pos; /* with its '\n' */
    ++t->lineno;
    t->pos += n;
    size_t content = eol ? n - 1 : n;
    if (content + 2 > (size_t)size)
        return hs_diag_set(diag, HS_E_INPUT, t->path, t->lineno, "line longer than %d characters", size - 2);
    memcpy(line, start, n);
    line[n] = '\0';
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    return 1;
}

int lines_each(LineText *t, char *line, int size, int *status, HsDiag *diag)
{
    if (*status != HS_OK) return 0;
    int got = lines_next(t, line, size, diag);
    if (got < 0) *status = got;
    return got > 0;
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

char *lines_csv_field(char **p)
{
    char *s = *p;
    if (!s) return NULL;
    char *comma = strchr(s, ',');
    if (comma) {
        *comma = '\0';
        *p = comma + 1;
    } else {
        *p = NULL;
    }
    while (isspace((unsigned char)*s)) s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1])) *--end = '\0';
    return s;
}

char *lines_cut(char **next)
{
    char *row = *next;
    if (!row || !*row) return NULL;
    char *newline = strchr(row, '\n');
    *next = newline ? newline + 1 : NULL;
    if (newline) *newline = '\0';
    return row;
}
