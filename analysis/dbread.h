/* dbread.h — read-only connections to a hetsim database, shared by `report` and `plot`.
 *
 * A reader opens the file with SQLITE_OPEN_READONLY: it never changes a file and can run
 * while a sweep is still writing (WAL readers do not block writers). A closed WAL
 * database in a folder the reader cannot write (no -shm file can be made) is read as
 * immutable instead. The connection is checked to be a hetsim database of
 * STORE_SCHEMA_VERSION before it is handed out. */
#ifndef ANALYSIS_DBREAD_H
#define ANALYSIS_DBREAD_H

#include <sqlite3.h>

#include "base/hs_error.h"

/* Opens path read-only into *out (closed by the caller with sqlite3_close). Errors, with
 * "PATH: message" in diag and *out NULL:
 *   HS_E_IO     the file cannot be opened or read;
 *   HS_E_INPUT  not a SQLite database, not a hetsim database, another schema version;
 *   HS_E_NOMEM  out of memory. */
int dbread_open(const char *path, sqlite3 **out, HsDiag *diag);

/* Records a failed prepare/step of db as "PATH: query failed: ..." and returns the
 * status (HS_E_NOMEM or HS_E_IO). */
int dbread_query_fail(sqlite3 *db, int rc, const char *path, HsDiag *diag);

#endif
