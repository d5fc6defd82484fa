/* input_file.h — reading a file a user named (scenarios, pairing instances, traces,
 * edges and assignment files, data sets, device profiles, the databases report and plot
 * read) without trusting it: regular files only, checked before the first byte is read (a FIFO would
 * block, a directory fails late, /dev/zero never ends), a size limit checked at open, and
 * no read past the size seen then. Errors name the file, and truncation names the byte
 * offset where the data ran out.
 *
 * The workload is whole-file or streaming reads of inputs from bytes to gigabytes; the
 * reader does no buffering of its own (callers read in chunks of their choosing). */
#ifndef BASE_INPUT_FILE_H
#define BASE_INPUT_FILE_H

#include "base/hs_error.h"

#include <stddef.h>
#include <stdint.h>

/* The default size limit of input_file_open callers that have no better one: 64 GiB. */
#define INPUT_FILE_MAX_BYTES (64ull << 30)

typedef struct InputFile {
    int fd;              /* -1 when closed */
    const char *path;    /* the caller's string, for messages; not copied */
    uint64_t size;       /* bytes at open; reads stop there */
    uint64_t offset;     /* bytes read so far */
    int64_t mtime_ns;    /* modification time at open, nanoseconds since the epoch */
    uint64_t device, inode;
} InputFile;

/* Opens path for reading (never blocking, even on a FIFO) and checks it: a regular file of
 * at most max_bytes. Errors, with "path: ..." in diag: missing_status (HS_E_MISSING or
 * HS_E_INPUT, as the caller sees an absent file) when it does not exist; HS_E_INPUT when
 * it is a directory, FIFO, device or socket, or larger than max_bytes; HS_E_IO when it
 * cannot be opened or examined. On error *f is closed (input_file_close is harmless). */
int input_file_open(InputFile *f, const char *path, uint64_t max_bytes, int missing_status, HsDiag *diag);

/* Reads up to n bytes into buf, never past the size seen at open; *got receives the
 * count (0 only at that end). HS_E_IO on a read error. */
int input_file_read(InputFile *f, void *buf, size_t n, size_t *got, HsDiag *diag);

/* Reads exactly n bytes; fewer left is HS_E_INPUT "path: truncated at byte OFFSET: WHAT
 * needs N bytes, M left" (what names the record, e.g. "record 12"). */
int input_file_read_exact(InputFile *f, void *buf, size_t n, const char *what, HsDiag *diag);

/* Closes f; accepts a closed or never-opened (fd -1) file. */
void input_file_close(InputFile *f);

/* The whole file in a malloc'd buffer with a NUL after its *size bytes (the caller frees
 * *data), with input_file_open's checks and errors. */
int input_file_read_all(const char *path, uint64_t max_bytes, int missing_status, char **data, size_t *size,
                        HsDiag *diag);

/* A text file a user named (a scenario, a pairing instance, a trace): the whole file as
 * input_file_read_all gives it, every error bad input (HS_E_INPUT: "path: not found",
 * "path: is a FIFO, not a regular file", "path: cannot open: Permission denied", ...;
 * HS_E_NOMEM aside), and a NUL byte inside is an error too ("not a text file"). */
int input_file_read_text(const char *path, uint64_t max_bytes, char **text, size_t *size, HsDiag *diag);

/* For a path another library opens (SQLite) or a folder, checked without opening it:
 * INPUT_FILE_REGULAR a regular file, INPUT_FILE_FOLDER a directory, INPUT_FILE_ABSENT_OR_REGULAR
 * a regular file or nothing at all (a database to create). HS_E_INPUT otherwise, with
 * "path: is a FIFO, not a regular file" (or "not a folder", "not found") in diag. stat(2)
 * follows links; what it finds may change before the library opens the path, which a
 * user naming a FIFO or a folder does not race. */
typedef enum { INPUT_FILE_REGULAR, INPUT_FILE_FOLDER, INPUT_FILE_ABSENT_OR_REGULAR } InputFileKind;
int input_file_check(const char *path, InputFileKind kind, HsDiag *diag);

#endif
