/* hs_error.h — one table of status codes shared by every module.
 * Functions return int: 0 (HS_OK) on success, a negative HS_E_* code otherwise.
 * Messages meant for the user (with FILE:LINE) are written into a caller's HsDiag. */
#ifndef HS_ERROR_H
#define HS_ERROR_H

#include <stddef.h>

enum {
    HS_OK = 0,
    HS_E_NOMEM = -1,    /* allocation failed */
    HS_E_IO = -2,       /* a file or the database could not be read or written */
    HS_E_INPUT = -3,    /* malformed scenario, instance, trace or flag (exit 2) */
    HS_E_SOLVER = -4,   /* a pairing solver failed */
    HS_E_DIVERGED = -5, /* NaN/Inf in a loss or parameter */
    HS_E_INTERNAL = -6, /* a broken invariant: a bug */
    HS_E_INTERRUPTED = -7, /* SIGINT/SIGTERM arrived */
    HS_E_MISSING = -8,  /* an outside resource (dataset, gnuplot) is not installed */
};

/* Static text for a status code; never NULL. */
const char *hs_error_name(int status);

/* Exit status the CLI uses for a status code: 0 ok, 2 bad input/usage, 1 anything else. */
int hs_error_exit_status(int status);

/* A diagnostic buffer: the first error wins, later ones are ignored, so the user sees
 * the root cause rather than its consequences. */
typedef struct HsDiag {
    int status;
    char message[512];
} HsDiag;

void hs_diag_clear(HsDiag *diag);
/* Records "file:line: message" (line <= 0 omits it; file NULL omits both). Returns status. */
int hs_diag_set(HsDiag *diag, int status, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
