/* test_files.c — see test_files.h. */
#include "tests/test_files.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

char *test_read_file(const char *path, long *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    char *bytes = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (bytes = malloc((size_t)n + 1)) != NULL && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        free(bytes);
        bytes = NULL;
    }
    fclose(f);
    if (bytes == NULL) return NULL;
    bytes[n] = '\0';
    if (size) *size = n;
    return bytes;
}

const char *test_scratch_dir(const char *tag)
{
    static char dir[96];
    snprintf(dir, sizeof dir, "/tmp/hetsim-%s-%d", tag, (int)getpid());
    return dir;
}

const char *test_scratch_file(const char *tag, const char *name, const char *text)
{
    static char path[160];
    const char *dir = test_scratch_dir(tag);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

const char *test_availability_set(const char *tag, const char *text)
{
    static char set[200];
    snprintf(set, sizeof set, "agents.availability=trace(%s)", test_scratch_file(tag, "availability.csv", text));
    return set;
}

void test_scratch_unlink(const char *tag, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", test_scratch_dir(tag), name);
    unlink(path);
    rmdir(test_scratch_dir(tag)); /* when it was the folder's last file */
}
