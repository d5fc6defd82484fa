/* check_chunks.c — base/chunks.h: blocks handed out of chunks are zeroed, apart (no two
 * overlap, even across a chunk's end), of the item's size, and all freed at once; a freed
 * pool hands blocks out again. The network's first entry pairs and the accounting's
 * ActivityMore depend on it (check_network covers them in use). */
#include "base/chunks.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_blocks_zeroed_and_apart_across_chunks)
{
    enum { SIZE = 24, PER = 5, N = 23 }; /* 23 blocks: four whole chunks and part of a fifth */
    HsChunks c;
    hs_chunks_init(&c, SIZE, PER);
    unsigned char *blocks[N];
    for (int i = 0; i < N; i++) {
        blocks[i] = hs_chunks_take(&c);
        ck_assert_ptr_nonnull(blocks[i]);
        for (int b = 0; b < SIZE; b++) ck_assert_int_eq(blocks[i][b], 0);
        memset(blocks[i], 0xA0 + i, SIZE); /* a block that overlapped another would show it */
    }
    for (int i = 0; i < N; i++)
        for (int b = 0; b < SIZE; b++) ck_assert_int_eq(blocks[i][b], 0xA0 + i);
    ck_assert_int_eq(c.n_chunks, (N + PER - 1) / PER);
    for (int i = 1; i < N; i++) /* within a chunk, consecutive */
        if (i % PER) ck_assert_ptr_eq(blocks[i], blocks[i - 1] + SIZE);
    hs_chunks_free(&c);
    ck_assert_int_eq(c.n_chunks, 0);
    ck_assert_ptr_null(c.chunks);
    unsigned char *again = hs_chunks_take(&c); /* the same sizes after a free */
    ck_assert_ptr_nonnull(again);
    for (int b = 0; b < SIZE; b++) ck_assert_int_eq(again[b], 0);
    ck_assert_int_eq((int)c.item_size, SIZE);
    hs_chunks_free(&c);
}
END_TEST

static Suite *chunks_suite(void)
{
    Suite *s = suite_create("chunks");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_blocks_zeroed_and_apart_across_chunks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(chunks_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
