/* lines.h — reading a small text input file line by line (traces, edges lists,
 * server assignments): the file is read whole through base/input_file.h (a regular
 * file, bounded), a '#' starts a comment, a line too long for the caller's buffer is an error
 * at its line. */
#ifndef BASE_LINES_H
#define BASE_LINES_H

#include "base/hs_error.h"

#include <stddef.h>

/* The largest data file (trace, edges list, assignment) hetsim reads: 256 MiB. */
#define LINES_MAX_BYTES ((size_t)256 << 20)

/* A text file held in memory and the position of the next line. */
typedef struct LineText {
    const char *path;  /* for messages */
    char *text;        /* NUL-terminated, owned */
    size_t len, pos;
    int lineno;        /* of the line last read */
} LineText;

/* Reads path into t: HS_OK, or HS_E_INPUT with "PATH: ..." in diag for a path that is not
 * a readable regular text file of at most LINES_MAX_BYTES; HS_E_NOMEM. Free with
 * lines_free. */
int lines_open(const char *path, LineText *t, HsDiag *diag);
void lines_free(LineText *t);

/* Copies the next line of t into line (size bytes, with its '\n' when it had one) with its
 * comment cut off, and counts it in t->lineno. Returns 1 for a line, 0 at the end of the
 * text, HS_E_INPUT with "PATH:LINE: line longer than N characters" in diag for an
 * over-long line. */
int lines_next(LineText *t, char *line, int size, HsDiag *diag);
/* lines_next for a reader's loop that stops at the first failure, its own or the
 * reader's: 1 for a line; 0 when *status is already not HS_OK, at the end of the text, or
 * when lines_next fails (*status is then its failure). */
int lines_each(LineText *t, char *line, int size, int *status, HsDiag *diag);

/* Reads one index after blanks at *p, which must end at a blank or the end of the line
 * ("1x", "1.5", "1,2" do not): 1 with the value (out of long's range: LONG_MIN/MAX, so
 * outside any index range too), its text and length as written, and *p moved past it;
 * 0 when there is none. */
int lines_parse_index(const char **p, long *value, const char **text, int *text_len);
/* 1 when only blanks are left at p. */
int lines_rest_blank(const char *p);

/* Cuts a comma-separated line at *p at its next comma (or its end) and trims the field's
 * blanks: returns the field and moves *p past the comma, or sets *p to NULL after the
 * last field; NULL once *p is NULL. The CSV readers (device and layer profiles) share it. */
char *lines_csv_field(char **p);

/* Cuts the next line off a held text at *next (NUL-terminated, written in place): returns
 * it without its '\n' and moves *next past it, or sets *next to NULL after the last line;
 * NULL once *next is NULL or at the text's end. The CSV readers walk their text with it. */
char *lines_cut(char **next);

#endif
