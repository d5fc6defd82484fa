/* store_vfs.h — the SQLite VFS the store writes through: the default VFS, with the frames
 * a connection appends to its WAL written by one call per transaction (store_vfs.c says
 * why and why a killed writer or a reader sees nothing different). */
#ifndef HETSIM_STORE_VFS_H
#define HETSIM_STORE_VFS_H

#include <sqlite3.h>

#define STORE_VFS_NAME "hetsim-wal"

/* The VFS's name for sqlite3_open_v2, registered at the first call (thread-safe), or NULL
 * (the default VFS) when the default VFS lacks what it wraps. */
const char *store_vfs_name(void);

#endif
