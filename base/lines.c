/* lines.c — see lines.h. */
#include "base/lines.h"

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
