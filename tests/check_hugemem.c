/* check_hugemem.c — base/hugemem.h: an array grown by hs_huge_realloc keeps its contents
 * and, once at least HUGEMEM_MIN bytes, is advised MADV_HUGEPAGE over its whole 2 MiB
 * pages wherever realloc put it (the kernel shows the advice as "hg" in the mapping's
 * VmFlags); a smaller one is not advised; an overflowing size fails with the array intact.
 * The network's flows and the arrays of base/grow.h depend on it. */
#define _DEFAULT_SOURCE
#include "base/hugemem.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The line starting with key in /proc/self/smaps for the mapping holding p, into line;
 * 0 when /proc/self/smaps cannot tell. */
static int mapping_line(const void *p, const char *key, char *line, int size)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL) return 0;
    int inside = 0, found = 0;
    uintptr_t a = (uintptr_t)p;
    while (!found && fgets(line, size, f)) {
        unsigned long from, to;
        if (sscanf(line, "%lx-%lx ", &from, &to) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = a >= from && a < to;
        else if (inside && strncmp(line, key, strlen(key)) == 0)
            found = 1;
    }
    fclose(f);
    return found;
}

/* 1 when the mapping holding p has the "hg" (MADV_HUGEPAGE) flag, 0 when not, -1 when
 * /proc/self/smaps cannot tell. */
static int advised_huge(const void *p)
{
    char line[512];
    return mapping_line(p, "VmFlags:", line, sizeof line) ? strstr(line, " hg") != NULL : -1;
}

/* Whether this kernel takes the advice at all (no THP, or THP off: nothing to check). */
static int thp_kernel(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (f == NULL) return 0;
    int on = fgets(line, sizeof line, f) != NULL && strstr(line, "[never]") == NULL;
    fclose(f);
    return on;
}

START_TEST(test_realloc_keeps_contents_and_advice)
{
    size_t n = 1024; /* 4 KiB of ints: far below HUGEMEM_MIN */
    int *a = hs_huge_realloc(NULL, n, sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < n; i++) a[i] = (int)(i * 7 + 1);
    while (n * sizeof *a < 4 * HUGEMEM_MIN) { /* doubling, as the flows do, to 32 MiB */
        int *grown = hs_huge_realloc(a, 2 * n, sizeof *a);
        ck_assert_ptr_nonnull(grown);
        a = grown;
        size_t wrong = 0; /* counted, one assert: a ck_assert an element is seconds */
        for (size_t i = 0; i < n; i++) wrong += a[i] != (int)(i * 7 + 1);
        ck_assert_uint_eq(wrong, 0);
        for (size_t i = n; i < 2 * n; i++) a[i] = (int)(i * 7 + 1);
        n *= 2;
    }
    if (thp_kernel()) {
        /* the middle of the array lies on whole 2 MiB pages of the advised range */
        ck_assert_int_eq(advised_huge(a + n / 2), 1);
    }
    void *same = a;
    ck_assert_ptr_null(hs_huge_realloc(a, SIZE_MAX / 2, 4)); /* overflow: refused, a intact */
    ck_assert_ptr_eq(a, same);
    ck_assert_int_eq(a[n - 1], (int)((n - 1) * 7 + 1));
    free(a);
}
END_TEST

START_TEST(test_small_arrays_not_advised)
{
    /* a byte under HUGEMEM_MIN (whole 2 MiB pages inside it): a small run's array stays
     * on 4 KB pages */
    const size_t bytes = HUGEMEM_MIN - 1;
    char *small = hs_huge_realloc(NULL, bytes, 1);
    ck_assert_ptr_nonnull(small);
    memset(small, 1, bytes);
    if (thp_kernel()) ck_assert_int_eq(advised_huge(small + bytes / 2), 0);
    free(small);
}
END_TEST

static Suite *hugemem_suite(void)
{
    Suite *s = suite_create("hugemem");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_realloc_keeps_contents_and_advice);
    tcase_add_test(tc, test_small_arrays_not_advised);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(hugemem_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
