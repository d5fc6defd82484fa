/* test_files.h — reading a whole file in the suites (golden files, fixtures, databases). */
#ifndef TESTS_TEST_FILES_H
#define TESTS_TEST_FILES_H

/* The file's bytes, NUL-terminated, in a malloc'd buffer the caller frees; *size (when
 * size is not NULL) gets the byte count. NULL when it cannot be opened or read. */
char *test_read_file(const char *path, long *size);

/* Writes text to NAME in this process's scratch folder /tmp/hetsim-TAG-PID (made on first
 * use) and returns its path, in a buffer the next call overwrites; the test fails when the
 * file cannot be written. test_scratch_dir gives the folder, for its removal. */
const char *test_scratch_file(const char *tag, const char *name, const char *text);
const char *test_scratch_dir(const char *tag);

/* Writes an availability trace (text, agent,time,value rows) to availability.csv in the
 * scratch folder of tag and returns the --set that gives it to every agent, in a buffer the
 * next call overwrites; test_scratch_unlink(tag, "availability.csv") removes it (and the
 * folder, when that was its last file). */
const char *test_availability_set(const char *tag, const char *text);
void test_scratch_unlink(const char *tag, const char *name);

#endif
