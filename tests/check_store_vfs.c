/* check_store_vfs.c — the store's VFS (analysis/store_vfs.c): a transaction's WAL frames
 * reach the file in one write at COMMIT, no write is larger than SQLite's unix VFS takes,
 * a reader on the default VFS sees every committed row at once, a failed write fails the
 * COMMIT (and the reader never sees its rows), and a Store writes through it.
 *
 * A counting VFS is made the default before the store's VFS is first asked for, so the
 * store's VFS wraps it: it counts the writes that reach WAL files and fails them on
 * demand. Check forks per test, so each test starts from zero counts. */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/store.h"
#include "analysis/store_vfs.h"

/* ---- the counting VFS under the store's ---- */

static sqlite3_vfs *count_real;        /* the system's default */
static sqlite3_vfs count_vfs;
static sqlite3_io_methods count_wal_methods;
static int (*count_real_write)(sqlite3_file *, const void *, int, sqlite3_int64);
static long count_writes, count_bytes, count_largest;
static int count_fail;                 /* WAL writes fail with SQLITE_FULL while set */

static int count_write(sqlite3_file *file, const void *data, int amt, sqlite3_int64 offset)
{
    if (count_fail) return SQLITE_FULL;
    count_writes++;
    count_bytes += amt;
    if (amt > count_largest) count_largest = amt;
    return count_real_write(file, data, amt, offset);
}

/* The system's file in this memory; a WAL file's methods are its own with xWrite counted. */
static int count_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags)
{
    (void)vfs;
    int rc = count_real->xOpen(count_real, name, file, flags, out_flags);
    if (rc != SQLITE_OK || !(flags & SQLITE_OPEN_WAL)) return rc;
    count_wal_methods = *file->pMethods;
    count_real_write = file->pMethods->xWrite;
    count_wal_methods.xWrite = count_write;
    file->pMethods = &count_wal_methods;
    return SQLITE_OK;
}

static void count_install(void)
{
    count_real = sqlite3_vfs_find(NULL);
    count_vfs = *count_real;
    count_vfs.zName = "check-count";
    count_vfs.pNext = NULL;
    count_vfs.xOpen = count_open;
    if (sqlite3_vfs_register(&count_vfs, 1) != SQLITE_OK) {
        fprintf(stderr, "check_store_vfs: cannot register the counting VFS\n");
        exit(EXIT_FAILURE);
    }
}

static void count_reset(void)
{
    count_writes = count_bytes = count_largest = 0;
}

/* ---- helpers ---- */

static char scratch[] = "/tmp/hetsim-store-vfs-XXXXXX";  /* made by main */

static const char *path_of(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(path);
    unlink(wal);
    return path;
}

static sqlite3 *open_db(const char *path, const char *vfs)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                                      " PRAGMA wal_autocheckpoint = 0", NULL, NULL, NULL), SQLITE_OK);
    return db;
}

static long query_long(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *stmt;
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(stmt), SQLITE_ROW);
    long v = (long)sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return v;
}

/* The tests' database: NAME made afresh in the scratch folder with an empty table
 * t(x INTEGER, y BLOB), written through the store's VFS (db); reader, when asked for,
 * reads it through the default (counting) VFS, that is the system's files. */
typedef struct Written {
    const char *path;
    sqlite3 *db, *reader;
} Written;

static Written written_open(const char *name, int with_reader)
{
    Written w = {.path = path_of(name)};
    w.db = open_db(w.path, store_vfs_name());
    if (with_reader) w.reader = open_db(w.path, NULL);
    ck_assert_int_eq(sqlite3_exec(w.db, "CREATE TABLE t(x INTEGER, y BLOB)", NULL, NULL, NULL), SQLITE_OK);
    return w;
}

static void written_close(Written *w)
{
    sqlite3_close(w->reader); /* a no-op on NULL */
    sqlite3_close(w->db);
}

/* rows rows of a 3000-byte blob each (one 4 KB page per row) in one transaction; the
 * COMMIT's result code */
static int insert_rows(sqlite3 *db, int first, int rows)
{
    ck_assert_int_eq(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_stmt *stmt;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "INSERT INTO t(x, y) VALUES (?1, zeroblob(3000))", -1, &stmt, NULL),
                     SQLITE_OK);
    for (int i = 0; i < rows; i++) {
        sqlite3_bind_int(stmt, 1, first + i);
        ck_assert_int_eq(sqlite3_step(stmt), SQLITE_DONE);
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    int rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* ---- tests ---- */

START_TEST(test_commit_is_one_write)
{
    ck_assert_str_eq(store_vfs_name(), STORE_VFS_NAME);
    Written w = written_open("one.db", 1);
    for (int txn = 0; txn < 3; txn++) {
        count_reset();
        ck_assert_int_eq(insert_rows(w.db, txn * 20, 20), SQLITE_OK);
        /* 20+ frames of 4 KB: the default VFS would make 2 writes per frame */
        ck_assert_int_ge(count_bytes, 20 * (4096 + 24));
        ck_assert_int_eq(count_writes, 1);
        ck_assert_int_eq(query_long(w.reader, "SELECT count(*) FROM t"), (txn + 1) * 20);
    }
    ck_assert_int_eq(query_long(w.reader, "SELECT sum(x) FROM t"), 59 * 60 / 2);
    written_close(&w);
}
END_TEST

START_TEST(test_large_transaction_in_pieces)
{
    Written w = written_open("large.db", 0);
    count_reset();
    ck_assert_int_eq(insert_rows(w.db, 0, 400), SQLITE_OK);  /* ~1.6 MB of frames */
    long frames = count_bytes / (4096 + 24);
    ck_assert_int_ge(frames, 400);
    /* at most 128 KiB per write (the unix VFS's limit), few of them */
    ck_assert_int_lt(count_largest, 128 * 1024);
    ck_assert_int_le(count_writes, count_bytes / (100 * 1024) + 2);
    w.reader = open_db(w.path, NULL);
    ck_assert_int_eq(query_long(w.reader, "SELECT count(*) FROM t"), 400);
    written_close(&w);
    /* the frames as written: recovered from the WAL by a fresh connection */
    sqlite3 *db = open_db(w.path, NULL);
    ck_assert_int_eq(query_long(db, "SELECT count(*) FROM t"), 400);
    sqlite3_stmt *stmt;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(stmt), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(stmt, 0), "ok");
    sqlite3_finalize(stmt);
    sqlite3_close(db);
}
END_TEST

START_TEST(test_failed_write_fails_the_commit)
{
    Written w = written_open("fail.db", 1);
    ck_assert_int_eq(insert_rows(w.db, 0, 5), SQLITE_OK);
    count_fail = 1;  /* the buffered frames' one write fails: COMMIT must say so */
    ck_assert_int_eq(insert_rows(w.db, 100, 5) & 0xff, SQLITE_FULL);
    count_fail = 0;
    ck_assert_int_eq(query_long(w.reader, "SELECT count(*) FROM t"), 5);
    ck_assert_int_eq(insert_rows(w.db, 200, 5), SQLITE_OK);
    ck_assert_int_eq(query_long(w.reader, "SELECT count(*) FROM t"), 10);
    ck_assert_int_eq(query_long(w.reader, "SELECT count(*) FROM t WHERE x >= 100 AND x < 200"), 0);
    written_close(&w);
}
END_TEST

/* A Store's rows go through the store's VFS: a batch of rows is one WAL write. */
START_TEST(test_store_writes_through_it)
{
    const char *path = path_of("store.db");
    Store *store = NULL;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(store_open(path, &store, &diag), HS_OK);
    Sink sink = store_sink(store);
    SinkRunInfo info = { .name = "vfs", .method = "sync", .seed = 1, .mode = "timing" };
    int64_t id;
    ck_assert_int_eq(sink.ops->run_begin(sink.ctx, &info, &id), HS_OK);
    ck_assert_int_eq(store_flush(store), HS_OK);
    SinkMetric metric = { .round = 1, .agent = 0, .train_loss = 1, .test_loss = 1, .test_accuracy = 0.5 };
    for (int i = 0; i < 2000; i++) {
        metric.t = i;
        ck_assert_int_eq(sink.ops->metric(sink.ctx, id, &metric), HS_OK);
    }
    count_reset();
    ck_assert_int_eq(store_flush(store), HS_OK);
    /* 2000 rows and their index: tens of pages, one write */
    ck_assert_int_ge(count_bytes, 10 * (4096 + 24));
    ck_assert_int_eq(count_writes, 1);
    store_close(store);
    sqlite3 *reader = open_db(path, NULL);
    ck_assert_int_eq(query_long(reader, "SELECT count(*) FROM metrics"), 2000);
    sqlite3_close(reader);
}
END_TEST

static Suite *store_vfs_suite(void)
{
    Suite *s = suite_create("store_vfs");
    TCase *tc = tcase_create("wal");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_commit_is_one_write);
    tcase_add_test(tc, test_large_transaction_in_pieces);
    tcase_add_test(tc, test_failed_write_fails_the_commit);
    tcase_add_test(tc, test_store_writes_through_it);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    count_install();  /* before the store's VFS wraps the default */
    if (mkdtemp(scratch) == NULL) {
        perror("check_store_vfs: mkdtemp");
        return EXIT_FAILURE;
    }
    SRunner *runner = srunner_create(store_vfs_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0) failed++;
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
