/* lines.h — reading a small text input file line by line (traces, edges lists): a '#'
 * starts a comment, a line too long for the caller's buffer is an error at its line. */
#ifndef BASE_LINES_H
#define BASE_LINES_H

#include "base/hs_error.h"

#include <stdio.h>

/* Reads the next line of f into line (size bytes) with its comment cut off and counts it
 * in *lineno. Returns 1 for a line, 0 at the end of the file, HS_E_INPUT with
 * "PATH:LINE: line longer than N characters" in diag for an over-long line. */
int lines_next(FILE *f, const char *path, char *line, int size, int *lineno, HsDiag *diag);

#endif
