/* check_slots.c — base/slots.h: slots are handed out 0, 1, 2, ... while none is free, a
 * released one comes back first (last released, first taken), records keep their bytes
 * when the array grows, the free-list link is written only into the record's own field,
 * and a freed pool starts again at 0. deadline.c and loss.c use it (check_deadline,
 * check_links, check_loss_ring, check_rog replay their messages). */
#include "base/slots.h"

#include "base/hs_error.h"

#include <check.h>
#include <stddef.h>
#include <stdlib.h>

typedef struct Rec {
    double a;
    int next_free;
    int b;
} Rec;

START_TEST(test_new_then_released_last_in_first_out)
{
    HsSlots s;
    hs_slots_init(&s, sizeof(Rec), offsetof(Rec, next_free), 2);
    for (int i = 0; i < 100; i++) { /* grows 2, 4, ..., 128 and keeps every record */
        int slot = -1;
        ck_assert_int_eq(hs_slots_take(&s, &slot), HS_OK);
        ck_assert_int_eq(slot, i);
        *(Rec *)hs_slots_at(&s, slot) = (Rec){.a = i + 0.5, .next_free = -7, .b = 3 * i};
    }
    ck_assert_int_eq(s.n, 100);
    ck_assert_int_eq(s.cap, 128);
    for (int i = 0; i < 100; i++) {
        const Rec *r = hs_slots_at(&s, i);
        ck_assert(r->a == i + 0.5);
        ck_assert_int_eq(r->b, 3 * i);
    }
    hs_slots_release(&s, 10);
    hs_slots_release(&s, 42);
    hs_slots_release(&s, 7);
    /* the link went into next_free only: the rest of a released record is untouched */
    const Rec *r = hs_slots_at(&s, 42);
    ck_assert(r->a == 42.5);
    ck_assert_int_eq(r->b, 126);
    ck_assert_int_eq(r->next_free, 10);
    int slot;
    ck_assert_int_eq(hs_slots_take(&s, &slot), HS_OK);
    ck_assert_int_eq(slot, 7);
    ck_assert_int_eq(hs_slots_take(&s, &slot), HS_OK);
    ck_assert_int_eq(slot, 42);
    ck_assert_int_eq(hs_slots_take(&s, &slot), HS_OK);
    ck_assert_int_eq(slot, 10);
    ck_assert_int_eq(hs_slots_take(&s, &slot), HS_OK); /* none free: a new one */
    ck_assert_int_eq(slot, 100);
    ck_assert_int_eq(s.n, 101);
    hs_slots_free(&s);
    ck_assert_int_eq(s.n, 0);
    ck_assert_ptr_null(s.items);
    ck_assert_int_eq(hs_slots_take(&s, &slot), HS_OK); /* the same sizes after a free */
    ck_assert_int_eq(slot, 0);
    ck_assert_int_eq(s.cap, 2);
    hs_slots_free(&s);
}
END_TEST

START_TEST(test_nomem_leaves_the_pool)
{
    HsSlots s; /* records so large that the first array's bytes would wrap */
    hs_slots_init(&s, (size_t)-1 / 2, 0, 4);
    int slot = -3;
    ck_assert_int_eq(hs_slots_take(&s, &slot), HS_E_NOMEM);
    ck_assert_int_eq(slot, -3);
    ck_assert_int_eq(s.n, 0);
    ck_assert_int_eq(s.cap, 0);
    ck_assert_ptr_null(s.items);
    hs_slots_free(&s);
}
END_TEST

static Suite *slots_suite(void)
{
    Suite *s = suite_create("slots");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_new_then_released_last_in_first_out);
    tcase_add_test(tc, test_nomem_leaves_the_pool);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(slots_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
