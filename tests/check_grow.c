/* check_grow.c — base/grow.h: an array grows by doubling from its first capacity until
 * the asked index fits, keeps its items, is left alone when it already fits, and a
 * capacity or byte count that would wrap is HS_E_NOMEM with the array untouched (the
 * overflow every inline `cap * 2` had). sim/kernel's users are covered in use by their
 * suites (check_battery, check_engine, check_radio, check_trace, check_markov, ...). */
#include "base/grow.h"

#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

/* AddressSanitizer (gcc says __SANITIZE_ADDRESS__, clang __has_feature) */
#if defined(__SANITIZE_ADDRESS__)
#define GROW_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GROW_UNDER_ASAN 1
#endif
#endif

START_TEST(test_doubles_from_first_and_keeps_items)
{
    int *a = NULL, cap = 0;
    for (int n = 0; n < 1000; n++) {
        int before = cap;
        ck_assert_int_eq(hs_grow((void **)&a, &cap, n, sizeof *a, 4), HS_OK);
        ck_assert_int_gt(cap, n);
        /* 4, 8, 16, ...: grows only when full, and then to twice */
        if (before == 0) ck_assert_int_eq(cap, 4);
        else if (n < before) ck_assert_int_eq(cap, before);
        else ck_assert_int_eq(cap, 2 * before);
        a[n] = 7 * n + 1;
    }
    ck_assert_int_eq(cap, 1024);
    for (int n = 0; n < 1000; n++) ck_assert_int_eq(a[n], 7 * n + 1);
    free(a);
}
END_TEST

START_TEST(test_far_index_doubles_until_it_fits)
{
    double *a = NULL;
    int cap = 0;
    ck_assert_int_eq(hs_grow((void **)&a, &cap, 100, sizeof *a, 4), HS_OK);
    ck_assert_int_eq(cap, 128); /* 4 -> 8 -> ... -> 128, the first above 100 */
    a[100] = 1.5;
    ck_assert_int_eq(hs_grow((void **)&a, &cap, 128, sizeof *a, 4), HS_OK);
    ck_assert_int_eq(cap, 256);
    ck_assert(a[100] == 1.5);
    free(a);
}
END_TEST

START_TEST(test_capacity_that_would_wrap_is_nomem)
{
    /* doubling past INT_MAX */
    ck_assert_int_eq(hs_grow_capacity(INT_MAX / 2 + 1, INT_MAX / 2 + 1, 1, 4), -1);
    ck_assert_int_eq(hs_grow_capacity(INT_MAX / 2, INT_MAX / 2, 1, 4), INT_MAX / 2 * 2);
    ck_assert_int_eq(hs_grow_capacity(0, INT_MAX - 1, 1, 1), -1);
    /* bytes past SIZE_MAX: 16 items of SIZE_MAX / 8 bytes */
    ck_assert_int_eq(hs_grow_capacity(0, 8, SIZE_MAX / 8, 16), -1);
    ck_assert_int_eq(hs_grow_capacity(0, 7, SIZE_MAX / 8, 8), 8);
    /* nonsense arguments are refused, not grown */
    ck_assert_int_eq(hs_grow_capacity(0, -1, 1, 4), -1);
    ck_assert_int_eq(hs_grow_capacity(0, 0, 1, 0), -1);
    ck_assert_int_eq(hs_grow_capacity(0, 0, 0, 4), -1);

    char keep[4] = {1, 2, 3, 4};
    void *a = keep; /* realloc on it would crash: the wrap must be refused before */
    int cap = INT_MAX / 2 + 1;
    ck_assert_int_eq(hs_grow(&a, &cap, cap, 1, 4), HS_E_NOMEM);
    ck_assert_ptr_eq(a, keep);
    ck_assert_int_eq(cap, INT_MAX / 2 + 1);
    cap = 4;
    ck_assert_int_eq(hs_grow(&a, &cap, 4, SIZE_MAX / 6, 4), HS_E_NOMEM); /* 8 items: wraps */
    ck_assert_ptr_eq(a, keep);
    ck_assert_int_eq(cap, 4);
    ck_assert_int_eq(hs_grow(&a, &cap, 3, SIZE_MAX, 4), HS_OK); /* fits: nothing asked */
    ck_assert_ptr_eq(a, keep);
}
END_TEST

/* AddressSanitizer aborts on such a request (allocator_may_return_null=0): the wrap test
 * above covers the refusal there, this one runs in the plain build. */
#ifndef GROW_UNDER_ASAN
START_TEST(test_realloc_failure_is_nomem)
{
    /* a capacity whose bytes fit a size_t but no allocator gives */
    void *a = NULL;
    int cap = 0;
    ck_assert_int_eq(hs_grow(&a, &cap, 0, SIZE_MAX / 8, 4), HS_E_NOMEM);
    ck_assert_ptr_null(a);
    ck_assert_int_eq(cap, 0);
}
END_TEST
#endif

static Suite *grow_suite(void)
{
    Suite *s = suite_create("grow");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_doubles_from_first_and_keeps_items);
    tcase_add_test(tc, test_far_index_doubles_until_it_fits);
    tcase_add_test(tc, test_capacity_that_would_wrap_is_nomem);
#ifndef GROW_UNDER_ASAN
    tcase_add_test(tc, test_realloc_failure_is_nomem);
#endif
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(grow_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
