/* test_files.c — see test_files.h. */
#include "tests/test_files.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static char test_folder_name[256];

void test_folder_make(const char *tag)
{
    const char *base = getenv("TMPDIR");
    snprintf(test_folder_name, sizeof test_folder_name, "%s/%s.XXXXXX", base && *base ? base : "/tmp", tag);
    if (mkdtemp(test_folder_name) == NULL) {
        perror("mkdtemp");
        abort();
    }
}

/* Removes path and, when it is a folder, everything under it. */
static void test_folder_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    chmod(path, 0700); /* a read-only folder a test made cannot be emptied otherwise */
    DIR *dir = opendir(path);
    if (dir != NULL) {
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
            char child[1024];
            snprintf(child, sizeof child, "%s/%s", path, entry->d_name);
            test_folder_remove_tree(child);
        }
        closedir(dir);
    }
    rmdir(path);
}

void test_folder_remove(void)
{
    test_folder_remove_tree(test_folder_name);
}

const char *test_folder(void)
{
    return test_folder_name;
}

const char *test_folder_path(const char *name)
{
    static char paths[8][512];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, sizeof paths[0], "%s/%s", test_folder_name, name);
    return path;
}
