/* test_files.h — reading a whole file in the suites (golden files, fixtures, databases). */
#ifndef TESTS_TEST_FILES_H
#define TESTS_TEST_FILES_H

/* The file's bytes, NUL-terminated, in a malloc'd buffer the caller frees; *size (when
 * size is not NULL) gets the byte count. NULL when it cannot be opened or read. */
char *test_read_file(const char *path, long *size);

#endif
