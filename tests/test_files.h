/* test_files.h — files in the suites: reading a whole one (golden files, fixtures,
 * databases), writing one to a scratch folder, and a suite's scratch folder. */
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

/* A suite's scratch folder, $TMPDIR (or /tmp)/TAG.XXXXXX, for Check's (un)checked
 * fixtures: test_folder_make makes it (the process aborts when it cannot: no test could
 * run), test_folder_remove removes it with everything under it (a folder a test left
 * read-only included). test_folder gives its path; test_folder_path a path in it, in one
 * of 8 buffers used in turn. check_plot, check_report, check_rows and check_store had
 * each written these again. */
void test_folder_make(const char *tag);
void test_folder_remove(void);
const char *test_folder(void);
const char *test_folder_path(const char *name);

#endif
