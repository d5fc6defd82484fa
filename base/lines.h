/* lines.h — reading a small text input file line by line (traces, edges lists,
 * server assignments): a '#'
 * starts a comment, a line too long for the caller's buffer is an error at its line. */
#ifndef BASE_LINES_H
#define BASE_LINES_H

#include "base/hs_error.h"

#include <stdio.h>

/* Reads the next line of f into line (size bytes) with its comment cut off and counts it
 * in *lineno. Returns 1 for a line, 0 at the end of the file, HS_E_INPUT with
 * "PATH:LINE: line longer than N characters" in diag for an over-long line. */
int lines_next(FILE *f, const char *path, char *line, int size, int *lineno, HsDiag *diag);

/* Reads one index after blanks at *p, which must end at a blank or the end of the line
 * ("1x", "1.5", "1,2" do not): 1 with the value (out of long's range: LONG_MIN/MAX, so
 * outside any index range too), its text and length as written, and *p moved past it;
 * 0 when there is none. */
int lines_parse_index(const char **p, long *value, const char **text, int *text_len);
/* 1 when only blanks are left at p. */
int lines_rest_blank(const char *p);

#endif
