/* store_vfs.c — the store's SQLite VFS: the default one, with a WAL file's writes
 * gathered into one write per transaction.
 *
 * Why: SQLite writes a WAL frame as two writes, its 24-byte header and its page, so a
 * sweep's writer made ~14 pwrite calls per small run. On the paravirtualised machines
 * hetsim is measured on a system call costs ~2 µs before any copying: a 4 KB frame
 * cost 5-8 µs of CPU written as two calls and ~1.1 µs as part of one 130 KB write
 * (docs/results/sweep.md). This VFS keeps the frames a connection appends to its WAL in a
 * buffer and writes them with one call when the transaction's commit frame is complete,
 * when the buffer is full, or before anything else touches the file.
 *
 * Why it is safe (readers, a killed writer): a WAL frame is visible to readers only once
 * the writer has published its commit in the shared wal-index, which SQLite does after
 * the last frame's write returns. The commit frame is recognised from the documented WAL
 * format (https://sqlite.org/fileformat2.html#walformat: bytes 4-7 of a frame header are
 * the database size after a commit, zero otherwise), so the buffer is written, and a
 * failure reported as the commit's, inside the xWrite of the commit frame's page: when
 * COMMIT returns, every frame of the transaction has been handed to the kernel, as with
 * the default VFS. A writer killed earlier loses frames of a transaction that had not
 * committed, which SQLite's recovery ignores anyway. Every other call on the file (read,
 * sync, truncate, size, locks, file controls, close) writes the buffer first, so the file
 * is never seen without it. Frame order is kept: a write that does not extend the buffer
 * (SQLite rewriting a frame's checksum) writes the buffer first.
 *
 * The main database file, journals and temporary files are the default VFS's own objects
 * (this VFS's xOpen hands them to it unchanged): only WAL files get these methods. The
 * bytes in the files are the default VFS's, so other programs read the file as before. */
#include "analysis/store_vfs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Bytes gathered before a write: ~30 frames of 4 KB pages, where a write's fixed cost is
 * already small next to its copy. Below 128 KiB: SQLite's unix VFS writes at most
 * 0x1ffff bytes per call (it masks the length, so a larger write fails as a full disk). */
#define STORE_VFS_BUFFER (120 * 1024)

/* A WAL file: the default VFS's file object follows this one in the same allocation. */
typedef struct StoreVfsFile {
    sqlite3_file base;
    sqlite3_file *real;
    char *buf;                  /* STORE_VFS_BUFFER bytes, NULL until the first write */
    size_t len;                 /* bytes of buf waiting */
    sqlite3_int64 at;           /* the file offset of buf[0] */
    int commit_next;            /* the last write was a commit frame's header */
} StoreVfsFile;

static sqlite3_vfs store_vfs;
static sqlite3_io_methods store_vfs_wal_methods;

static sqlite3_file *store_vfs_real(sqlite3_file *f)
{
    return ((StoreVfsFile *)f)->real;
}

/* Writes the waiting bytes; SQLite's error code. */
static int store_vfs_flush(StoreVfsFile *f)
{
    if (f->len == 0) return SQLITE_OK;
    int rc = f->real->pMethods->xWrite(f->real, f->buf, (int)f->len, f->at);
    f->len = 0;
    return rc;
}

static int store_vfs_write(sqlite3_file *file, const void *data, int amt, sqlite3_int64 offset)
{
    StoreVfsFile *f = (StoreVfsFile *)file;
    int commit = f->commit_next;
    f->commit_next = 0;
    if (f->buf == NULL) f->buf = sqlite3_malloc(STORE_VFS_BUFFER);
    if (f->buf == NULL) {                   /* no buffer: the default VFS's behaviour */
        return f->real->pMethods->xWrite(f->real, data, amt, offset);
    }
    int rc = SQLITE_OK;
    if (f->len > 0 && (offset != f->at + (sqlite3_int64)f->len || f->len + (size_t)amt > STORE_VFS_BUFFER))
        rc = store_vfs_flush(f);
    if (rc != SQLITE_OK) return rc;
    if ((size_t)amt > STORE_VFS_BUFFER) return f->real->pMethods->xWrite(f->real, data, amt, offset);
    if (f->len == 0) f->at = offset;
    memcpy(f->buf + f->len, data, (size_t)amt);
    f->len += (size_t)amt;
    /* a frame header (24 bytes) whose database size is set: the next write, its page,
     * ends the transaction */
    const unsigned char *b = data;
    if (amt == 24 && (b[4] | b[5] | b[6] | b[7]) != 0) f->commit_next = 1;
    if (commit) rc = store_vfs_flush(f);
    return rc;
}

static int store_vfs_close(sqlite3_file *file)
{
    StoreVfsFile *f = (StoreVfsFile *)file;
    int rc = store_vfs_flush(f);
    int close_rc = f->real->pMethods->xClose(f->real);
    sqlite3_free(f->buf);
    f->buf = NULL;
    return rc != SQLITE_OK ? rc : close_rc;
}

/* The other methods write the buffer, then are the default VFS's: NAME(PARAMS) flushes
 * and, only when the flush succeeded, returns the default VFS's METHOD on the same
 * arguments (file replaced by the default VFS's file). One definition so that the order,
 * flush first, cannot differ between methods. */
#define STORE_VFS_FLUSH_THEN(name, method, params, ...)                                            \
    static int name params                                                                        \
    {                                                                                             \
        int rc = store_vfs_flush((StoreVfsFile *)file);                                           \
        return rc != SQLITE_OK ? rc : store_vfs_real(file)->pMethods->method(store_vfs_real(file), __VA_ARGS__); \
    }

STORE_VFS_FLUSH_THEN(store_vfs_read, xRead, (sqlite3_file *file, void *data, int amt, sqlite3_int64 offset),
                     data, amt, offset)
STORE_VFS_FLUSH_THEN(store_vfs_truncate, xTruncate, (sqlite3_file *file, sqlite3_int64 size), size)
STORE_VFS_FLUSH_THEN(store_vfs_sync, xSync, (sqlite3_file *file, int flags), flags)
STORE_VFS_FLUSH_THEN(store_vfs_file_size, xFileSize, (sqlite3_file *file, sqlite3_int64 *size), size)
STORE_VFS_FLUSH_THEN(store_vfs_lock, xLock, (sqlite3_file *file, int level), level)
STORE_VFS_FLUSH_THEN(store_vfs_unlock, xUnlock, (sqlite3_file *file, int level), level)
STORE_VFS_FLUSH_THEN(store_vfs_check_reserved, xCheckReservedLock, (sqlite3_file *file, int *out), out)
STORE_VFS_FLUSH_THEN(store_vfs_file_control, xFileControl, (sqlite3_file *file, int op, void *arg), op, arg)

/* Pure questions about the device: asked while frames are written, so no flush. */
static int store_vfs_sector_size(sqlite3_file *file)
{
    return store_vfs_real(file)->pMethods->xSectorSize(store_vfs_real(file));
}

static int store_vfs_device(sqlite3_file *file)
{
    return store_vfs_real(file)->pMethods->xDeviceCharacteristics(store_vfs_real(file));
}

/* A WAL file has no wal-index and is not memory-mapped by SQLite; these exist so the
 * methods are version 3 like the default VFS's (store_vfs_open wraps only files whose
 * methods are) and are passed on after a flush. */
STORE_VFS_FLUSH_THEN(store_vfs_shm_map, xShmMap,
                     (sqlite3_file *file, int page, int size, int extend, void volatile **out),
                     page, size, extend, out)
STORE_VFS_FLUSH_THEN(store_vfs_shm_lock, xShmLock, (sqlite3_file *file, int offset, int n, int flags),
                     offset, n, flags)
STORE_VFS_FLUSH_THEN(store_vfs_shm_unmap, xShmUnmap, (sqlite3_file *file, int delete_flag), delete_flag)
STORE_VFS_FLUSH_THEN(store_vfs_fetch, xFetch, (sqlite3_file *file, sqlite3_int64 offset, int amt, void **out),
                     offset, amt, out)
STORE_VFS_FLUSH_THEN(store_vfs_unfetch, xUnfetch, (sqlite3_file *file, sqlite3_int64 offset, void *p), offset, p)

/* xShmBarrier returns nothing, so it is written out: flush, then the default's. */
static void store_vfs_shm_barrier(sqlite3_file *file)
{
    store_vfs_flush((StoreVfsFile *)file);  /* errors: the next call on the file has them */
    store_vfs_real(file)->pMethods->xShmBarrier(store_vfs_real(file));
}

/* The default VFS's sqlite3_file is placed after StoreVfsFile, aligned for any type. */
static size_t store_vfs_header(void)
{
    size_t align = sizeof(sqlite3_int64) > sizeof(void *) ? sizeof(sqlite3_int64) : sizeof(void *);
    return (sizeof(StoreVfsFile) + align - 1) / align * align;
}

static int store_vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags)
{
    sqlite3_vfs *real = vfs->pAppData;
    /* anything but a WAL file is the default VFS's object in this memory */
    if (!(flags & SQLITE_OPEN_WAL)) return real->xOpen(real, name, file, flags, out_flags);
    StoreVfsFile *f = (StoreVfsFile *)file;
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)((char *)file + store_vfs_header());
    int rc = real->xOpen(real, name, f->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        /* the default VFS's file may still need closing (xOpen's contract) */
        if (f->real->pMethods != NULL) f->real->pMethods->xClose(f->real);
        f->base.pMethods = NULL;
        return rc;
    }
    if (f->real->pMethods->iVersion < 3) {
        /* a default VFS without the version-3 methods this one passes on: its own file */
        f->real->pMethods->xClose(f->real);
        return real->xOpen(real, name, file, flags, out_flags);
    }
    f->base.pMethods = &store_vfs_wal_methods;
    return SQLITE_OK;
}

/* The VFS's other methods (delete, access, randomness, time...) are the default's. */
static int store_vfs_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
    sqlite3_vfs *real = vfs->pAppData;
    return real->xDelete(real, name, sync_dir);
}

static int store_vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    sqlite3_vfs *real = vfs->pAppData;
    return real->xAccess(real, name, flags, out);
}

static int store_vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    sqlite3_vfs *real = vfs->pAppData;
    return real->xFullPathname(real, name, n, out);
}

static void *store_vfs_dl_open(sqlite3_vfs *vfs, const char *name)
{
    sqlite3_vfs *real = vfs->pAppData;
    return real->xDlOpen(real, name);
}

static void store_vfs_dl_error(sqlite3_vfs *vfs, int n, char *out)
{
    sqlite3_vfs *real = vfs->pAppData;
    real->xDlError(real, n, out);
}

static void (*store_vfs_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void)
{
    sqlite3_vfs *real = vfs->pAppData;
    return real->xDlSym(real, handle, symbol);
}

static void store_vfs_dl_close(sqlite3_vfs *vfs, void *handle)
{
    sqlite3_vfs *real = vfs->pAppData;
    real->xDlClose(real, handle);
}

static int store_vfs_randomness(sqlite3_vfs *vfs, int n, char *out)
{
    sqlite3_vfs *real = vfs->pAppData;
    return real->xRandomness(real, n, out);
}

static int store_vfs_sleep(sqlite3_vfs *vfs, int us)
{
    sqlite3_vfs *real = vfs->pAppData;
    return real->xSleep(real, us);
}

static int store_vfs_current_time(sqlite3_vfs *vfs, double *out)
{
    sqlite3_vfs *real = vfs->pAppData;
    return real->xCurrentTime(real, out);
}

static int store_vfs_last_error(sqlite3_vfs *vfs, int n, char *out)
{
    sqlite3_vfs *real = vfs->pAppData;
    return real->xGetLastError ? real->xGetLastError(real, n, out) : 0;
}

static int store_vfs_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
    sqlite3_vfs *real = vfs->pAppData;
    return real->xCurrentTimeInt64(real, out);
}

static int store_vfs_status = SQLITE_ERROR;

static void store_vfs_register_once(void)
{
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (real == NULL || real->iVersion < 2 || real->xCurrentTimeInt64 == NULL) return;
    store_vfs_wal_methods = (sqlite3_io_methods){
        3, store_vfs_close, store_vfs_read, store_vfs_write, store_vfs_truncate, store_vfs_sync,
        store_vfs_file_size, store_vfs_lock, store_vfs_unlock, store_vfs_check_reserved,
        store_vfs_file_control, store_vfs_sector_size, store_vfs_device,
        store_vfs_shm_map, store_vfs_shm_lock, store_vfs_shm_barrier, store_vfs_shm_unmap,
        store_vfs_fetch, store_vfs_unfetch,
    };
    size_t size = store_vfs_header() + (size_t)real->szOsFile;
    store_vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)(size > (size_t)real->szOsFile ? size : (size_t)real->szOsFile),
        .mxPathname = real->mxPathname,
        .zName = STORE_VFS_NAME,
        .pAppData = real,
        .xOpen = store_vfs_open,
        .xDelete = store_vfs_delete,
        .xAccess = store_vfs_access,
        .xFullPathname = store_vfs_full_pathname,
        .xDlOpen = store_vfs_dl_open,
        .xDlError = store_vfs_dl_error,
        .xDlSym = store_vfs_dl_sym,
        .xDlClose = store_vfs_dl_close,
        .xRandomness = store_vfs_randomness,
        .xSleep = store_vfs_sleep,
        .xCurrentTime = store_vfs_current_time,
        .xGetLastError = store_vfs_last_error,
        .xCurrentTimeInt64 = store_vfs_current_time64,
    };
    store_vfs_status = sqlite3_vfs_register(&store_vfs, 0);
}

const char *store_vfs_name(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, store_vfs_register_once);
    return store_vfs_status == SQLITE_OK ? STORE_VFS_NAME : NULL;
}
