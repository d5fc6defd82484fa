/* hs_error.c — status names and the first-error-wins diagnostic buffer. */
#include "base/hs_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *hs_error_name(int status)
{
    switch (status) {
    case HS_OK: return "ok";
    case HS_E_NOMEM: return "out of memory";
    case HS_E_IO: return "input/output error";
    case HS_E_INPUT: return "bad input";
    case HS_E_SOLVER: return "solver failed";
    case HS_E_DIVERGED: return "training diverged";
    case HS_E_INTERNAL: return "internal error";
    case HS_E_INTERRUPTED: return "interrupted";
    case HS_E_MISSING: return "missing resource";
    default: return "unknown error";
    }
}

int hs_error_exit_status(int status)
{
    if (status == HS_OK) return 0;
    if (status == HS_E_INPUT) return 2;
    return 1;
}

void hs_diag_clear(HsDiag *diag)
{
    diag->status = HS_OK;
    diag->message[0] = '\0';
}

int hs_diag_set(HsDiag *diag, int status, const char *file, int line, const char *fmt, ...)
{
    if (diag == NULL || diag->status != HS_OK) return status;
    diag->status = status;
    size_t used = 0;
    if (file != NULL && line > 0)
        used = (size_t)snprintf(diag->message, sizeof diag->message, "%s:%d: ", file, line);
    else if (file != NULL)
        used = (size_t)snprintf(diag->message, sizeof diag->message, "%s: ", file);
    if (used >= sizeof diag->message) used = sizeof diag->message - 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->message + used, sizeof diag->message - used, fmt, ap);
    va_end(ap);
    return status;
}
