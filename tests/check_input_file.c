/* check_input_file.c — base/input_file.h's checks for what hetsim reads as text and for the
 * paths SQLite opens, and base/lines.h: only regular files are read, never a FIFO
 * (without blocking), a directory or a device; sizes are bounded; text files hold no NUL;
 * lines are read from memory with fgets' limits (issue 28, class 5). */
#include "base/input_file.h"
#include "base/lines.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char folder[64], fifo_path[96], file_path[96];

static void setup(void)
{
    snprintf(folder, sizeof folder, "/tmp/hetsim-input-file-%d", (int)getpid());
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

/* HS_E_INPUT naming the path and what it is, at once (the case has a timeout). */
static void expect_refused(const char *path, const char *fragment)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    char *text = (char *)1;
    ck_assert_int_eq(input_file_read_text(path, 1 << 20, &text, NULL, &diag), HS_E_INPUT);
    ck_assert_ptr_null(text);
    ck_assert_msg(strstr(diag.message, fragment) != NULL, "'%s' lacks '%s'", diag.message, fragment);
    ck_assert_msg(strncmp(diag.message, path, strlen(path)) == 0, "'%s' does not name %s", diag.message, path);
    LineText t;
    hs_diag_clear(&diag);
    ck_assert_int_eq(lines_open(path, &t, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, fragment) != NULL, "'%s' lacks '%s'", diag.message, fragment);
}

START_TEST(test_refuses_what_is_not_a_regular_file)
{
    expect_refused(fifo_path, "is a FIFO, not a regular file");
    expect_refused(folder, "is a directory, not a regular file");
    expect_refused("/dev/zero", "is a character device, not a regular file");
    expect_refused("/nonexistent/x.csv", "not found");
}
END_TEST

START_TEST(test_reads_a_regular_text_file_within_the_bound)
{
    write_file("a\nb\n", 4);
    HsDiag diag;
    hs_diag_clear(&diag);
    char *text;
    size_t len;
    ck_assert_int_eq(input_file_read_text(file_path, 4, &text, &len, &diag), HS_OK);
    ck_assert_uint_eq(len, 4);
    ck_assert_str_eq(text, "a\nb\n");
    free(text);
    /* one byte over the limit */
    ck_assert_int_eq(input_file_read_text(file_path, 3, &text, &len, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "is 4 bytes, more than the limit of 3") != NULL, "%s", diag.message);
    /* an empty file is an empty text */
    write_file("", 0);
    ck_assert_int_eq(input_file_read_text(file_path, 3, &text, &len, &(HsDiag){0}), HS_OK);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(text, "");
    free(text);
    /* a NUL byte: not a text file */
    write_file("a\0b", 3);
    hs_diag_clear(&diag);
    ck_assert_int_eq(input_file_read_text(file_path, 100, &text, &len, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "not a text file") != NULL);
}
END_TEST

START_TEST(test_check_without_opening)
{
    HsDiag diag;
    hs_diag_clear(&diag);
    write_file("x", 1);
    ck_assert_int_eq(input_file_check(file_path, INPUT_FILE_REGULAR, &diag), HS_OK);
    ck_assert_int_eq(input_file_check(folder, INPUT_FILE_FOLDER, &diag), HS_OK);
    ck_assert_int_eq(input_file_check("/nonexistent.db", INPUT_FILE_ABSENT_OR_REGULAR, &diag), HS_OK);
    ck_assert_int_eq(input_file_check(fifo_path, INPUT_FILE_ABSENT_OR_REGULAR, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "is a FIFO, not a regular file") != NULL);
    hs_diag_clear(&diag);
    ck_assert_int_eq(input_file_check(file_path, INPUT_FILE_FOLDER, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "is a regular file, not a folder") != NULL);
    hs_diag_clear(&diag);
    ck_assert_int_eq(input_file_check("/dev/zero", INPUT_FILE_FOLDER, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "is a character device, not a folder") != NULL);
    hs_diag_clear(&diag);
    ck_assert_int_eq(input_file_check("/nonexistent.db", INPUT_FILE_REGULAR, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "not found") != NULL);
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
    ck_assert_int_eq(lines_open(file_path, &t, &diag), HS_OK);
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
    ck_assert_int_eq(lines_open(file_path, &t, &diag), HS_OK);
    ck_assert_int_eq(lines_next(&t, line, sizeof line, &diag), 1);
    ck_assert_str_eq(line, "12345678");
    ck_assert_int_eq(lines_next(&t, line, sizeof line, &diag), 0);
    lines_free(&t);
}
END_TEST

static Suite *input_file_suite(void)
{
    Suite *s = suite_create("input_file");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_refuses_what_is_not_a_regular_file);
    tcase_add_test(tc, test_reads_a_regular_text_file_within_the_bound);
    tcase_add_test(tc, test_check_without_opening);
    tcase_add_test(tc, test_lines_from_memory);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(input_file_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
