/* infile.h — opening a file the user named as input: regular files only, read with a
 * bound. Every reader of user input goes through here (scenario and pairing-instance
 * files, traces, edges and assignment files, dataset files, the databases `report` and
 * `plot` read), so that a FIFO, a directory, a device such as /dev/zero, a socket or an
 * oversized file is refused at once — exit 2, the path and what it was meant to be —
 * instead of blocking for a writer that never comes, reading until memory runs out, or
 * reading as an empty file.
 *
 * The type is checked on the open descriptor (open with O_NONBLOCK, which never waits
 * for a FIFO's writer, then fstat), so the file checked is the file read; the size is
 * checked at open and again while reading (a file that grows past the limit is refused).
 * Errors are HS_E_INPUT (a path the user gave that cannot be read is bad input, like a
 * bad flag) with "PATH: ..." in diag, or HS_E_NOMEM. `what` names the file's role in
 * the messages: "the trace is a FIFO (named pipe), not a regular file". */
#ifndef BASE_INFILE_H
#define BASE_INFILE_H

#include "base/hs_error.h"

#include <stddef.h>

/* Opens path read-only: a regular file (symbolic links followed) of at most max_bytes
 * bytes. On success *fd is the descriptor (blocking, close-on-exec; the caller closes
 * it) and *size its size. */
int infile_open(const char *path, const char *what, size_t max_bytes, int *fd, size_t *size, HsDiag *diag);

/* infile_open, then the whole file into *text (malloc'd, NUL-terminated, the caller
 * frees; *len bytes before the NUL, len may be NULL). A NUL byte inside is an error:
 * every text input is a text file. */
int infile_read_text(const char *path, const char *what, size_t max_bytes, char **text, size_t *len,
                     HsDiag *diag);

/* For paths another library opens (SQLite) and for folders: checks, without opening,
 * that path is a regular file (INFILE_REGULAR), a directory (INFILE_DIRECTORY), or a
 * regular file or nothing at all (INFILE_REGULAR_OR_ABSENT: a database to create). */
typedef enum { INFILE_REGULAR, INFILE_DIRECTORY, INFILE_REGULAR_OR_ABSENT } InfileKind;
int infile_check(const char *path, const char *what, InfileKind kind, HsDiag *diag);

#endif
