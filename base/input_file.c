/* input_file.c — see input_file.h. */
#include "base/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *input_file_kind(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

void input_file_close(InputFile *f)
{
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
}

int input_file_open(InputFile *f, const char *path, uint64_t max_bytes, int missing_status, HsDiag *diag)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->path = path;
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return hs_diag_set(diag, missing_status, path, 0, "not found");
        if (errno == EISDIR) return hs_diag_set(diag, HS_E_INPUT, path, 0, "is a directory, not a regular file");
        return hs_diag_set(diag, HS_E_IO, path, 0, "cannot open: %s", strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return hs_diag_set(diag, HS_E_IO, path, 0, "cannot examine: %s", strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "is %s, not a regular file", input_file_kind(st.st_mode));
    }
    if ((uint64_t)st.st_size > max_bytes) {
        close(fd);
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "is %llu bytes, more than the limit of %llu",
                           (unsigned long long)st.st_size, (unsigned long long)max_bytes);
    }
    /* a regular file never blocks; clear the flag anyway so reads behave as usual */
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    f->fd = fd;
    f->size = (uint64_t)st.st_size;
    f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    f->device = (uint64_t)st.st_dev;
    f->inode = (uint64_t)st.st_ino;
    return HS_OK;
}

int input_file_read(InputFile *f, void *buf, size_t n, size_t *got, HsDiag *diag)
{
    *got = 0;
    uint64_t left = f->size - f->offset;
    if (n > left) n = (size_t)left;
    char *out = buf;
    while (*got < n) {
        /* at most 1 GiB a call: some systems refuse larger reads */
        size_t want = n - *got > (1u << 30) ? (1u << 30) : n - *got;
        ssize_t r = read(f->fd, out + *got, want);
        if (r < 0) {
            if (errno == EINTR) continue;
            return hs_diag_set(diag, HS_E_IO, f->path, 0, "read error at byte %llu: %s",
                               (unsigned long long)(f->offset + *got), strerror(errno));
        }
        if (r == 0) {
            /* the file shrank since it was opened */
            return hs_diag_set(diag, HS_E_IO, f->path, 0, "ended at byte %llu although it had %llu bytes when opened",
                               (unsigned long long)(f->offset + *got), (unsigned long long)f->size);
        }
        *got += (size_t)r;
    }
    f->offset += *got;
    return HS_OK;
}

int input_file_read_exact(InputFile *f, void *buf, size_t n, const char *what, HsDiag *diag)
{
    uint64_t left = f->size - f->offset;
    if (n > left)
        return hs_diag_set(diag, HS_E_INPUT, f->path, 0, "truncated at byte %llu: %s needs %zu bytes, %llu left",
                           (unsigned long long)f->offset, what, n, (unsigned long long)left);
    size_t got;
    return input_file_read(f, buf, n, &got, diag);
}

int input_file_read_text(const char *path, uint64_t max_bytes, char **text, size_t *size, HsDiag *diag)
{
    HsDiag inner;
    hs_diag_clear(&inner);
    size_t got = 0;
    int status = input_file_read_all(path, max_bytes, HS_E_INPUT, text, &got, &inner);
    if (size) *size = got;
    if (status != HS_OK) return hs_diag_set(diag, status == HS_E_NOMEM ? status : HS_E_INPUT, NULL, 0, "%s", inner.message);
    if (memchr(*text, '\0', got) != NULL) {
        free(*text);
        *text = NULL;
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "not a text file (it holds NUL bytes)");
    }
    return HS_OK;
}

int input_file_check(const char *path, InputFileKind kind, HsDiag *diag)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (kind == INPUT_FILE_ABSENT_OR_REGULAR && errno == ENOENT) return HS_OK;
        if (errno == ENOENT || errno == ENOTDIR) return hs_diag_set(diag, HS_E_INPUT, path, 0, "not found");
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "cannot open: %s", strerror(errno));
    }
    if (kind == INPUT_FILE_FOLDER) {
        if (S_ISDIR(st.st_mode)) return HS_OK;
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "is %s, not a folder",
                           S_ISREG(st.st_mode) ? "a regular file" : input_file_kind(st.st_mode));
    }
    if (S_ISREG(st.st_mode)) return HS_OK;
    return hs_diag_set(diag, HS_E_INPUT, path, 0, "is %s, not a regular file", input_file_kind(st.st_mode));
}

int input_file_read_all(const char *path, uint64_t max_bytes, int missing_status, char **data, size_t *size,
                        HsDiag *diag)
{
    *data = NULL;
    *size = 0;
    InputFile f;
    int status = input_file_open(&f, path, max_bytes, missing_status, diag);
    if (status != HS_OK) return status;
    if (f.size > SIZE_MAX - 1) {
        input_file_close(&f);
        return hs_diag_set(diag, HS_E_NOMEM, path, 0, "too large to hold in memory");
    }
    char *buffer = malloc((size_t)f.size + 1);
    if (!buffer) {
        input_file_close(&f);
        return hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory for %llu bytes", (unsigned long long)f.size);
    }
    size_t got;
    status = input_file_read(&f, buffer, (size_t)f.size, &got, diag);
    input_file_close(&f);
    if (status != HS_OK) {
        free(buffer);
        return status;
    }
    buffer[got] = '\0';
    *data = buffer;
    *size = got;
    return HS_OK;
}
