/* test_files.c — see test_files.h. */
#include "tests/test_files.h"

#include <stdio.h>
#include <stdlib.h>

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
