/* test_command.c — see test_command.h. */
#include "tests/test_command.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

char *test_read_stream(FILE *file, long *size)
{
    fflush(file);
    ck_assert_int_eq(fseek(file, 0, SEEK_END), 0);
    long n = ftell(file);
    ck_assert_int_ge(n, 0);
    ck_assert_int_eq(fseek(file, 0, SEEK_SET), 0);
    char *text = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, (size_t)n, file), (size_t)n);
    text[n] = '\0';
    if (size) *size = n;
    return text;
}

TestOutput test_command_run(TestCommand command, int argc, const char *const *argv)
{
    TestOutput result;
    FILE *out = tmpfile(), *err = tmpfile();
    ck_assert(out && err);
    char *args[32];
    ck_assert_int_lt(argc, 32);
    for (int i = 0; i < argc; i++) args[i] = (char *)argv[i]; /* the commands do not write them */
    args[argc] = NULL;
    result.status = command(argc, args, out, err);
    result.out = test_read_stream(out, NULL);
    result.err = test_read_stream(err, NULL);
    fclose(out);
    fclose(err);
    return result;
}

void test_output_free(TestOutput *o)
{
    free(o->out);
    free(o->err);
}

void test_output_expect_failure(TestOutput o, int status, const char *needle)
{
    ck_assert_msg(o.status == status, "status %d, want %d (%s; expected '%s')", o.status, status, o.err, needle);
    ck_assert_msg(strstr(o.err, needle) != NULL, "'%s' not in: %s", needle, o.err);
    ck_assert_msg(o.out[0] == '\0', "stdout not empty: %s", o.out);
    test_output_free(&o);
}
