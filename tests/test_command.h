/* test_command.h — runs one of hetsim's commands inside the suite through its
 * cli_*_stream entry point, with stdout and stderr going to temporary files, and gives
 * back its exit status and both texts. check_plot and check_report had each written
 * this, and the check that a command failed as it should. */
#ifndef TESTS_TEST_COMMAND_H
#define TESTS_TEST_COMMAND_H

#include <stdio.h>

typedef struct TestOutput {
    int status;
    char *out, *err; /* malloc'd, NUL-terminated: test_output_free */
} TestOutput;

typedef int (*TestCommand)(int argc, char **argv, FILE *out, FILE *err);

/* command(argc, argv) with argc < 32. */
TestOutput test_command_run(TestCommand command, int argc, const char *const *argv);
/* test_command_run with the arguments written out: TEST_COMMAND(cli_plot_stream, "plot", path) */
#define TEST_COMMAND(command, ...)                                                                  \
    test_command_run(command, (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)), \
                     (const char *const[]){__VA_ARGS__})
void test_output_free(TestOutput *o);
/* The test fails unless o exited with status, its stderr holds needle and it wrote nothing
 * on stdout; frees o when it passes. */
void test_output_expect_failure(TestOutput o, int status, const char *needle);

/* The whole of file from its start (flushed first), malloc'd and NUL-terminated; *size
 * (when size is not NULL) gets the byte count. The test fails when it cannot be read. */
char *test_read_stream(FILE *file, long *size);

#endif
