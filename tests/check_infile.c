/* check_infile.c — base/infile.h and base/lines.h: only regular files are read, never
 * a FIFO (without blocking), a directory or a device; sizes are bounded; text files
 * hold no NUL; lines are read from memory with fgets' limits (issue 28, class 5). */
#include "base/infile.h"
#include "base/lines.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char folder[64], fifo_path[96], file_path[96];

static void setup(void)
{
    snprintf(folder, sizeof folder, "/tmp/hetsim-infile-%d", (int)getpid());
    mkdir(folder, 0700);
    snprintf(fifo_path, sizeof fifo_path, "%s/fifo", folder);
    snprintf(file_path, sizeof file_path, "%s/file", folder);
    mkfifo(fifo_path, 0600);
}

static void teardown(void)
{
    unlink(fifo_path);
    unlink(file_path);
    rmdir(folder);
}

static void write_file(const char *bytes, size_t n)
{
    FILE *f = fopen(file_path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* The path's kind in the message, HS_E_INPUT, and (the test has a timeout) no wait. */
static void expect_refused(const char *path, const char *fragment)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    char *text = (char *)1;
    ck_assert_int_eq(infile_read_text(path, "trace", 1 << 20, &text, NULL, &diag), HS_E_INPUT);
    ck_assert_ptr_null(text);
    ck_assert_msg(strstr(diag.message, fragment) != NULL, "'%s' lacks '%s'", diag.message, fragment);
    ck_assert_msg(strncmp(diag.message, path, strlen(path)) == 0, "'%s' does not name %s", diag.message, path);
    int fd = 7;
    hs_diag_clear(&diag);
    ck_assert_int_eq(infile_open(path, "trace", 1 << 20, &fd, NULL, &diag), HS_E_INPUT);
    ck_assert_int_eq(fd, -1);
}

START_TEST(test_refuses_what_is_not_a_regular_file)
{
    expect_refused(fifo_path, "the trace is a FIFO (named pipe), not a regular file");
    expect_refused(folder, "the trace is a directory, not a regular file");
    expect_refused("/dev/zero", "the trace is a character device, not a regular file");
    expect_refused("/nonexistent/x.csv", "cannot open the trace: No such file");
}
END_TEST

START_TEST(test_reads_a_regular_file_within_the_bound)
{
    write_file("a\nb\n", 4);
    HsDiag diag;
    hs_diag_clear(&diag);
    char *text;
    size_t len;
    ck_assert_int_eq(infile_read_text(file_path, "trace", 4, &text, &len, &diag), HS_OK);
    ck_assert_uint_eq(len, 4);
    ck_assert_str_eq(text, "a\nb\n");
    free(text);
    /* one byte over the limit */
    ck_assert_int_eq(infile_read_text(file_path, "trace", 3, &text, &len, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "the trace is 4 bytes, more than the 3 a trace may have") != NULL, "%s",
                  diag.message);
    /* an empty file is an empty text */
    write_file("", 0);
    ck_assert_int_eq(infile_read_text(file_path, "trace", 3, &text, &len, &(HsDiag){0}), HS_OK);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(text, "");
    free(text);
    /* a NUL byte: not a text file */
    write_file("a\0b", 3);
    hs_diag_clear(&diag);
    ck_assert_int_eq(infile_read_text(file_path, "trace", 100, &text, &len, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "not a text file") != NULL);
}
END_TEST

START_TEST(test_check_without_opening)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    write_file("x", 1);
    ck_assert_int_eq(infile_check(file_path, "database", INFILE_REGULAR, &diag), HS_OK);
    ck_assert_int_eq(infile_check(folder, "dataset folder", INFILE_DIRECTORY, &diag), HS_OK);
    ck_assert_int_eq(infile_check("/nonexistent.db", "database", INFILE_REGULAR_OR_ABSENT, &diag), HS_OK);
    ck_assert_int_eq(infile_check(fifo_path, "database", INFILE_REGULAR_OR_ABSENT, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "the database is a FIFO (named pipe), not a regular file") != NULL);
    hs_diag_clear(&diag);
    ck_assert_int_eq(infile_check(file_path, "dataset folder", INFILE_DIRECTORY, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "the dataset folder is a regular file, not a directory") != NULL);
    hs_diag_clear(&diag);
    ck_assert_int_eq(infile_check("/nonexistent.db", "database", INFILE_REGULAR, &diag), HS_E_INPUT);
}
END_TEST

/* lines_next keeps fgets' rules: a line of up to size - 2 characters (plus its '\n'),
 * comments cut at '#', an over-long line an error at its number. */
START_TEST(test_lines_from_memory)
{
    write_file("0 1 # 1\n\n12345678\n123456789", 27);
    LineText t;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(lines_open(file_path, "edges file", &t, &diag), HS_OK);
    char line[10];
    ck_assert_int_eq(lines_next(&t, line, sizeof line, &diag), 1);
    ck_assert_str_eq(line, "0 1 ");
    ck_assert_int_eq(lines_next(&t, line, sizeof line, &diag), 1);
    ck_assert_str_eq(line, "\n");
    ck_assert_int_eq(lines_next(&t, line, sizeof line, &diag), 1);
    ck_assert_str_eq(line, "12345678\n");
    ck_assert_int_eq(lines_next(&t, line, sizeof line, &diag), HS_E_INPUT);
    ck_assert_int_eq(t.lineno, 4);
    ck_assert_msg(strstr(diag.message, "file:4: line longer than 8 characters") != NULL, "%s", diag.message);
    lines_free(&t);
    write_file("12345678", 8);
    ck_assert_int_eq(lines_open(file_path, "edges file", &t, &diag), HS_OK);
    ck_assert_int_eq(lines_next(&t, line, sizeof line, &diag), 1);
    ck_assert_str_eq(line, "12345678");
    ck_assert_int_eq(lines_next(&t, line, sizeof line, &diag), 0);
    lines_free(&t);
}
END_TEST

static Suite *infile_suite(void)
{
    Suite *s = suite_create("infile");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_refuses_what_is_not_a_regular_file);
    tcase_add_test(tc, test_reads_a_regular_file_within_the_bound);
    tcase_add_test(tc, test_check_without_opening);
    tcase_add_test(tc, test_lines_from_memory);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(infile_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
