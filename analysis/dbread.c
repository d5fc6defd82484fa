/* dbread.c — the read-only open of `report` and `plot`: see dbread.h. */
#include "analysis/dbread.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/store.h"

static const char probe_sql[] =
    "SELECT (SELECT user_version FROM pragma_user_version),"
    " (SELECT application_id FROM pragma_application_id),"
    " (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
    "  name IN ('runs','agents','rounds','agent_rounds','pairings','metrics'))";

/* The first read of a connection: the schema facts report_open checks. */
static int probe_schema(sqlite3 *db, sqlite3_stmt **stmt)
{
    int rc = sqlite3_prepare_v2(db, probe_sql, -1, stmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(*stmt);
    return rc;
}

/* Appends text to w percent-encoded as URI paths require: every byte outside
 * [A-Za-z0-9-._~/]. Returns the new end. */
static char *uri_encode(char *w, const char *text)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("-._~/", *p) != NULL) {
            *w++ = (char)*p;
        } else {
            *w++ = '%';
            *w++ = hex[*p >> 4];
            *w++ = hex[*p & 15];
        }
    }
    return w;
}

/* "file:///ABSOLUTE/PATH?immutable=1" (a relative path is taken from the current
 * folder); malloc'd, NULL when the folder cannot be read or memory runs out. */
static char *immutable_uri(const char *path)
{
    static const char suffix[] = "?immutable=1";
    char folder[4096] = "";
    if (path[0] != '/' && getcwd(folder, sizeof folder) == NULL) return NULL;
    char *uri = malloc(7 + 3 * (strlen(folder) + 1 + strlen(path)) + sizeof suffix);
    if (uri == NULL) return NULL;
    memcpy(uri, "file://", 7);
    char *w = uri + 7;
    if (folder[0] != '\0') {
        w = uri_encode(w, folder);
        *w++ = '/';
    }
    w = uri_encode(w, path);
    memcpy(w, suffix, sizeof suffix);
    return uri;
}

int dbread_open(const char *path, sqlite3 **out, HsDiag *diag)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    int status = HS_OK;
    *out = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc != SQLITE_OK) {
        int err = db ? sqlite3_system_errno(db) : 0;
        status = hs_diag_set(diag, rc == SQLITE_NOMEM ? HS_E_NOMEM : HS_E_IO, path, 0,
                             "cannot open database: %s%s%s",
                             db ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
                             err ? ": " : "", err ? strerror(err) : "");
        goto fail;
    }
    sqlite3_busy_timeout(db, STORE_BUSY_TIMEOUT_MS);
    rc = probe_schema(db, &stmt);
    if ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN) {
        /* A WAL database in a folder we may not write (a shared results folder, a
         * read-only mount): a reader must create the -shm file and cannot. No writer has
         * the file open then (a writer keeps its -shm), so the main file holds every
         * committed row and can be read as immutable, without -shm. */
        char *uri = immutable_uri(path);
        if (uri != NULL) {
            sqlite3_finalize(stmt);
            stmt = NULL;
            sqlite3_close(db);
            db = NULL;
            int open_rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
            free(uri);
            rc = open_rc == SQLITE_OK ? probe_schema(db, &stmt) : open_rc;
        }
    }
    if (rc != SQLITE_ROW) {
        int primary = rc & 0xff;
        if (primary == SQLITE_NOTADB)
            status = hs_diag_set(diag, HS_E_INPUT, path, 0, "not a SQLite database");
        else
            status = hs_diag_set(diag, primary == SQLITE_NOMEM ? HS_E_NOMEM : HS_E_IO, path, 0,
                                 "cannot read database: %s",
                                 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        goto fail;
    }
    int64_t version = sqlite3_column_int64(stmt, 0);
    int64_t application = sqlite3_column_int64(stmt, 1);
    int64_t tables = sqlite3_column_int64(stmt, 2);
    if (application != 0 && application != STORE_APPLICATION_ID) {
        status = hs_diag_set(diag, HS_E_INPUT, path, 0,
                             "not a hetsim database (application_id 0x%08llx)",
                             (unsigned long long)application);
        goto fail;
    }
    /* reports and plots read the tables of version 1, which every later version keeps */
    if ((version < 1 || version > STORE_SCHEMA_VERSION) && (version != 0 || application != 0)) {
        status = hs_diag_set(diag, HS_E_INPUT, path, 0,
                             "database has schema version %lld (PRAGMA user_version), "
                             "but this hetsim reads versions 1 to %d",
                             (long long)version, STORE_SCHEMA_VERSION);
        goto fail;
    }
    if (version < 1 || tables != 6) {
        status = hs_diag_set(diag, HS_E_INPUT, path, 0, "not a hetsim database");
        goto fail;
    }
    sqlite3_finalize(stmt);
    *out = db;
    return HS_OK;
fail:
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return status;
}

int dbread_query_fail(sqlite3 *db, int rc, const char *path, HsDiag *diag)
{
    return hs_diag_set(diag, (rc & 0xff) == SQLITE_NOMEM ? HS_E_NOMEM : HS_E_IO, path, 0,
                       "query failed: %s", sqlite3_errmsg(db));
}
