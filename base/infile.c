/* infile.c — see infile.h. */
#include "base/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a path is when it is not a regular file, for the messages. */
static const char *infile_kind_name(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a file";
}

int infile_open(const char *path, const char *what, size_t max_bytes, int *fd, size_t *size, HsDiag *diag)
{
    *fd = -1;
    if (size) *size = 0;
    /* O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting */
    int f;
    do f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    while (f < 0 && errno == EINTR);
    if (f < 0) return hs_diag_set(diag, HS_E_INPUT, path, 0, "cannot open the %s: %s", what, strerror(errno));
    struct stat st;
    if (fstat(f, &st) != 0) {
        int error = errno;
        close(f);
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "cannot read the %s: %s", what, strerror(error));
    }
    if (!S_ISREG(st.st_mode)) {
        close(f);
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "the %s is %s, not a regular file", what,
                           infile_kind_name(st.st_mode));
    }
    if ((uintmax_t)st.st_size > (uintmax_t)max_bytes) {
        close(f);
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "the %s is %jd bytes, more than the %zu a %s may have", what,
                           (intmax_t)st.st_size, max_bytes, what);
    }
    /* reads of a regular file never wait, but a later fdopen/gzdopen expects blocking */
    int flags = fcntl(f, F_GETFL);
    if (flags >= 0) fcntl(f, F_SETFL, flags & ~O_NONBLOCK);
    *fd = f;
    if (size) *size = (size_t)st.st_size;
    return HS_OK;
}

int infile_read_text(const char *path, const char *what, size_t max_bytes, char **text, size_t *len,
                     HsDiag *diag)
{
    *text = NULL;
    if (len) *len = 0;
    int fd;
    size_t size;
    int status = infile_open(path, what, max_bytes, &fd, &size, diag);
    if (status != HS_OK) return status;
    /* the size at open is a hint: the file may change while it is read */
    size_t cap = size + 1 < 4096 ? 4096 : size + 1, used = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            status = hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory for the %s", what);
            break;
        }
        if (used + 1 == cap) {
            size_t grown_cap = cap * 2;
            char *grown = realloc(buf, grown_cap);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = grown;
            cap = grown_cap;
        }
        ssize_t got = read(fd, buf + used, cap - used - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            status = hs_diag_set(diag, HS_E_INPUT, path, 0, "cannot read the %s: %s", what, strerror(errno));
            break;
        }
        if (got == 0) break;
        used += (size_t)got;
        if (used > max_bytes) {
            status = hs_diag_set(diag, HS_E_INPUT, path, 0, "the %s grew past the %zu bytes a %s may have while it "
                                 "was read", what, max_bytes, what);
            break;
        }
    }
    close(fd);
    if (status == HS_OK && memchr(buf, '\0', used) != NULL)
        status = hs_diag_set(diag, HS_E_INPUT, path, 0, "the %s is not a text file (it holds NUL bytes)", what);
    if (status != HS_OK) {
        free(buf);
        return status;
    }
    buf[used] = '\0';
    *text = buf;
    if (len) *len = used;
    return HS_OK;
}

int infile_check(const char *path, const char *what, InfileKind kind, HsDiag *diag)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (kind == INFILE_REGULAR_OR_ABSENT && errno == ENOENT) return HS_OK;
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "cannot open the %s: %s", what, strerror(errno));
    }
    if (kind == INFILE_DIRECTORY ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) return HS_OK;
    return hs_diag_set(diag, HS_E_INPUT, path, 0, "the %s is %s, not a %s", what,
                       S_ISREG(st.st_mode) ? "a regular file" : infile_kind_name(st.st_mode),
                       kind == INFILE_DIRECTORY ? "directory" : "regular file");
}
