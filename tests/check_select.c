/* check_select.c — the client-selection rules of fedavg and fedbuff (sim/methods/fl_select.c)
 * on hand-worked tables: Oort's utility and exploration share, the top-by-value order,
 * the weighted draw without replacement, Oort's split between explored and unexplored
 * clients, power-of-choice's pick checked against a recomputation from its draw, and
 * Oort's pacer (its T round by round), blacklist and clipping quantile.
 * The runs (deadline's hand-worked pick, energy, determinism, train = timing, bad input)
 * are tests/cli/selection.sh's. */
#include "sim/methods/fl_select.h"

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CLOSE(a, b) ck_assert_msg(fabs((double)(a) - (b)) <= 1e-12 * (fabs((double)(b)) + 1), "%.17g != %.17g", (double)(a), (double)(b))

/* Utility = stat + sqrt(0.1 ln(round + 1) / (last + 1)), times (T / t)^alpha when t > T;
 * the right-hand values worked by hand (python3: math.sqrt, math.log). */
START_TEST(test_oort_utility_table)
{
    /* R = 10, L = 5: bonus sqrt(0.1 ln 10 / 5) = 0.21459660262893; on time */
    CLOSE(select_oort_utility(100, 9, 4, 0.5, 1, 2), 100.21459660262893);
    /* t = T exactly: no penalty */
    CLOSE(select_oort_utility(100, 9, 4, 1, 1, 2), 100.21459660262893);
    /* twice too slow, alpha 2: x 1/4 */
    CLOSE(select_oort_utility(100, 9, 4, 2, 1, 2), 25.053649150657233);
    /* alpha 0: a straggler keeps its utility */
    CLOSE(select_oort_utility(100, 9, 4, 20, 1, 0), 100.21459660262893);
    /* R = 3, L = 1: 7 + sqrt(0.1 ln 3) */
    CLOSE(select_oort_utility(7, 2, 0, 1, 5, 2), 7.3314532076580505);
    /* R = 6, L = 3, t = 3, T = 0.5, alpha 1.5 */
    CLOSE(select_oort_utility(2, 5, 2, 3, 0.5, 1.5), 0.15271123578489898);
    /* the first round: ln 1 = 0, no bonus */
    CLOSE(select_oort_utility(30, 0, 0, 4, 2, 1), 15);
}
END_TEST

START_TEST(test_oort_epsilon_decays_to_its_floor)
{
    CLOSE(select_oort_epsilon(0.9, 0), 0.9);
    CLOSE(select_oort_epsilon(0.9, 10), 0.735365526198792);
    CLOSE(select_oort_epsilon(0.9, 500), 0.2);
    CLOSE(select_oort_epsilon(0.1, 0), 0.1);  /* below the floor: stays */
    CLOSE(select_oort_epsilon(0.1, 50), 0.1);
    CLOSE(select_oort_epsilon(0, 3), 0);
}
END_TEST

START_TEST(test_top_orders_by_value_then_index)
{
    double value[6] = {1, 5, 3, 5, -INFINITY, 3};
    int cand[6] = {4, 5, 0, 3, 1, 2};
    select_top(cand, 6, value, 6);
    int want[6] = {1, 3, 2, 5, 0, 4};
    for (int k = 0; k < 6; k++) ck_assert_int_eq(cand[k], want[k]);
}
END_TEST

START_TEST(test_weighted_draw_follows_the_weights)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    double w[5] = {3, 0, 1, 0, 0};
    int first0 = 0, trials = 20000;
    for (int t = 0; t < trials; t++) {
        int cand[5] = {0, 1, 2, 3, 4};
        select_weighted_draw(rng, cand, 5, w, 2);
        /* weight 0 is never drawn while a positive weight is left */
        ck_assert((cand[0] == 0 && cand[1] == 2) || (cand[0] == 2 && cand[1] == 0));
        first0 += cand[0] == 0;
    }
    double share = (double)first0 / trials; /* 3 / 4; 4 sigma = 0.012 */
    ck_assert_msg(fabs(share - 0.75) < 0.012, "client 0 first in %g of the draws", share);
    /* all weights 0: a uniform draw of distinct clients */
    double zero[5] = {0};
    int cand[5] = {0, 1, 2, 3, 4};
    select_weighted_draw(rng, cand, 5, zero, 5);
    int seen[5] = {0};
    for (int k = 0; k < 5; k++) seen[cand[k]]++;
    for (int k = 0; k < 5; k++) ck_assert_int_eq(seen[k], 1);
    gsl_rng_free(rng);
}
END_TEST

/* Clients 0..5 explored with utilities {0.5, 10, 1, 9.6, 9.8, 5}, 6..9 never seen with
 * speeds {1, 0, 0, 2}. count 4, eps 0.5: 2 exploited, 2 explored. The cut-off is the
 * 2nd utility, 9.8; the pool those >= 0.95 x 9.8 = 9.31: {1, 4, 3}; the explored places
 * go to the only unexplored with a speed, {6, 9}. */
START_TEST(test_oort_split_pool_and_exploration)
{
    char explored[10] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
    double util[10] = {0.5, 10, 1, 9.6, 9.8, 5, 0, 0, 0, 0};
    double speed[10] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 2};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    int seen3 = 0;
    for (unsigned long seed = 1; seed <= 200; seed++) {
        gsl_rng_set(rng, seed);
        int cand[10] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
        ck_assert_int_eq(select_oort(rng, cand, 10, explored, util, speed, 0.5, 4), 4);
        for (int k = 0; k < 2; k++) ck_assert(cand[k] == 1 || cand[k] == 4 || cand[k] == 3);
        ck_assert_int_ne(cand[0], cand[1]);
        ck_assert((cand[2] == 6 && cand[3] == 9) || (cand[2] == 9 && cand[3] == 6));
        seen3 += cand[0] == 3 || cand[1] == 3;
    }
    ck_assert(seen3 > 0); /* the pool is drawn from, not just its top */
    /* the first round: nobody explored, every place explores */
    char none[10] = {0};
    double fast[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    int cand[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    ck_assert_int_eq(select_oort(rng, cand, 10, none, util, fast, 0.2, 4), 4);
    /* eps 0.25 of 4 = 1 explored place, but no unexplored left with 6..9 explored too:
     * all 4 exploit */
    char all[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    double u2[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    int c2[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    gsl_rng_set(rng, 7);
    ck_assert_int_eq(select_oort(rng, c2, 10, all, u2, fast, 0.25, 4), 4);
    /* cut 0.95 x 7 = 6.65: the pool is {9, 8, 7, 6} (utilities 10, 9, 8, 7): all of it */
    int got[10] = {0};
    for (int k = 0; k < 4; k++) got[c2[k]] = 1;
    ck_assert(got[6] && got[7] && got[8] && got[9]);
    gsl_rng_free(rng);
}
END_TEST

/* The pacer's rule on its own: relax when the last W rounds sum below the W before. */
START_TEST(test_oort_pacer_rule)
{
    double fell[4] = {3, 1, 2, 1}; /* 4 before, 3 since */
    double rose[4] = {1, 1, 2, 1};
    double flat[4] = {2, 2, 1, 3};
    ck_assert_int_eq(select_oort_pacer_relax(fell, 2), 1);
    ck_assert_int_eq(select_oort_pacer_relax(rose, 2), 0);
    ck_assert_int_eq(select_oort_pacer_relax(flat, 2), 0); /* equal sums: T stays */
    double one[2] = {5, 4.5};
    ck_assert_int_eq(select_oort_pacer_relax(one, 1), 1);
}
END_TEST

/* The pacer's T round by round through FlSelect's own history (select_reported), W = 2,
 * Delta = 0.5 s, T starting at select_time = 1 s. Utility reported per round (two
 * clients, half each): 10 10 8 8 9 12 1 1 3, then rounds 9 and 10 with no report.
 * Round k >= 4 compares U(k-4) + U(k-3) with U(k-2) + U(k-1):
 *   4: 20 > 16 relax 1.5;  5: 18 > 17 relax 2;  6: 16 < 21 stays;  7: 17 > 13 relax 2.5;
 *   8: 21 > 2 relax 3;  9: 13 > 4 relax 3.5;  10: 2 < 3 stays;  11: 4 > 0 relax 4.
 * Rounds 9..11 are tested in one call (no pick in between), each once. */
START_TEST(test_oort_pacer_T_sequence)
{
    SelectKeys keys = {.selection = SELECT_OORT, .select_time = 1, .oort_pacer_step = 0.5, .oort_pacer_window = 2,
                       .oort_clip = 1};
    SelectJob job = {0};
    FlSelect sel;
    ck_assert_int_eq(select_create(&sel, &keys, &job, 2, INFINITY), HS_OK);
    const double u[9] = {10, 10, 8, 8, 9, 12, 1, 1, 3};
    const double want[9] = {1, 1, 1, 1, 1.5, 2, 2, 2.5, 3};
    for (int r = 0; r < 9; r++) {
        CLOSE(select_pacer_T(&sel, r), want[r]);
        CLOSE(select_pacer_T(&sel, r), want[r]); /* a second pick in the round: no second test */
        for (int i = 0; i < 2; i++) {
            sel.pending[i] = u[r] / 2;
            select_reported(&sel, i, r);
        }
    }
    CLOSE(select_pacer_T(&sel, 11), 4);
    select_free(&sel);
    /* where T starts: fedavg's deadline without select_time, else Delta (Algorithm 1) */
    keys.select_time = INFINITY;
    ck_assert_int_eq(select_create(&sel, &keys, &job, 2, 3), HS_OK);
    CLOSE(select_pacer_T(&sel, 0), 3);
    select_free(&sel);
    ck_assert_int_eq(select_create(&sel, &keys, &job, 2, INFINITY), HS_OK);
    CLOSE(select_pacer_T(&sel, 0), 0.5);
    select_free(&sel);
    /* no pacer: no ring */
    keys.oort_pacer_step = INFINITY;
    ck_assert_int_eq(select_create(&sel, &keys, &job, 2, INFINITY), HS_OK);
    ck_assert_ptr_null(sel.pacer_u);
    select_free(&sel);
}
END_TEST

/* The blacklist on a hand-worked table: picks {3, 1, 2, 5, 0, 2} for clients 0..5. */
START_TEST(test_oort_blacklist_admits)
{
    const int picks[6] = {3, 1, 2, 5, 0, 2};
    /* limit 2: 0 (3) and 3 (5) are out, the rest keep their order */
    int cand[6] = {5, 3, 1, 0, 4, 2};
    ck_assert_int_eq(select_oort_admit(cand, 6, picks, 2, 3), 4);
    const int want2[4] = {5, 1, 4, 2};
    for (int k = 0; k < 4; k++) ck_assert_int_eq(cand[k], want2[k]);
    /* limit 1: only 1 and 4 are left, fewer than 3: the blacklisted selected the fewest
     * times come back, 2 and 5 tie at 2, the lower index first */
    int c1[6] = {5, 3, 1, 0, 4, 2};
    ck_assert_int_eq(select_oort_admit(c1, 6, picks, 1, 3), 3);
    const int want1[3] = {1, 4, 2};
    for (int k = 0; k < 3; k++) ck_assert_int_eq(c1[k], want1[k]);
    /* asked for more than there are: all of them, the blacklisted by fewest picks */
    int c3[6] = {5, 3, 1, 0, 4, 2};
    ck_assert_int_eq(select_oort_admit(c3, 6, picks, 1, 10), 6);
    const int want3[6] = {1, 4, 2, 5, 0, 3};
    for (int k = 0; k < 6; k++) ck_assert_int_eq(c3[k], want3[k]);
    /* limit 0: no blacklist, nothing moves */
    int c0[6] = {5, 3, 1, 0, 4, 2};
    ck_assert_int_eq(select_oort_admit(c0, 6, picks, 0, 2), 6);
    ck_assert_int_eq(c0[0], 5);
    ck_assert_int_eq(c0[1], 3);
}
END_TEST

/* The clip's cap: the nearest-rank quantile. */
START_TEST(test_quantile_nearest_rank)
{
    double v[5];
    const double base[5] = {5, 1, 4, 2, 3};
    const double q[5] = {1, 0.6, 0.95, 0.2, 0.21};
    const double want[5] = {5, 3, 5, 1, 2}; /* ranks ceil(5q): 5, 3, 5, 1, 2 */
    for (int k = 0; k < 5; k++) {
        memcpy(v, base, sizeof v);
        CLOSE(select_quantile(v, 5, q[k]), want[k]);
    }
    double twenty[20];
    for (int k = 0; k < 20; k++) twenty[k] = 20 - k;
    CLOSE(select_quantile(twenty, 20, 0.95), 19); /* 0.95 x 20 = 19 exactly: rank 19, not 20 */
}
END_TEST

/* A loss per client from a table, counting the calls. */
typedef struct LossTable {
    const double *loss;
    int calls;
    char asked[64];
} LossTable;

static double table_loss(void *ctx, int c, int *status)
{
    LossTable *t = ctx;
    t->calls++;
    t->asked[c] = 1;
    *status = HS_OK;
    return t->loss[c];
}

/* pow-d: the pick is the count highest losses among the d drawn by share, recomputed
 * here from the same stream's draw by brute force. */
START_TEST(test_pow_d_against_a_recomputation)
{
    enum { M = 40 };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2), *again = gsl_rng_alloc(gsl_rng_taus2), *tab = gsl_rng_alloc(gsl_rng_taus2);
    for (unsigned long seed = 1; seed <= 300; seed++) {
        gsl_rng_set(tab, seed);
        double loss[M], share[M], losses[M];
        for (int c = 0; c < M; c++) {
            loss[c] = floor(gsl_rng_uniform(tab) * 8); /* ties on purpose */
            share[c] = c % 7 == 0 ? 0 : 1 + floor(gsl_rng_uniform(tab) * 100);
        }
        if (seed % 5 == 0) loss[3] = NAN; /* no loss yet: last */
        int d = 4 + (int)(seed % 17), count = 1 + (int)(seed % (unsigned long)d);
        int cand[M], drawn[M];
        for (int c = 0; c < M; c++) cand[c] = drawn[c] = (c * 13) % M;
        gsl_rng_set(rng, seed);
        gsl_rng_set(again, seed);
        LossTable t = {.loss = loss};
        ck_assert_int_eq(select_pow_d(rng, cand, M, share, d, count, table_loss, &t, losses), HS_OK);
        select_weighted_draw(again, drawn, M, share, d);
        ck_assert_int_eq(t.calls, d);
        for (int k = 0; k < d; k++) {
            ck_assert(t.asked[drawn[k]]);
            ck_assert(share[drawn[k]] > 0); /* no data: never a candidate */
        }
        /* brute force: repeatedly the highest loss (NaN lowest), ties the lower index */
        char taken[M] = {0};
        for (int k = 0; k < count; k++) {
            int best = -1;
            for (int j = 0; j < d; j++) {
                int c = drawn[j];
                if (taken[c]) continue;
                double lc = isnan(loss[c]) ? -INFINITY : loss[c];
                double lb = best < 0 ? 0 : isnan(loss[best]) ? -INFINITY : loss[best];
                if (best < 0 || lc > lb || (lc == lb && c < best)) best = c;
            }
            taken[best] = 1;
            ck_assert_int_eq(cand[k], best);
        }
    }
    gsl_rng_free(rng);
    gsl_rng_free(again);
    gsl_rng_free(tab);
}
END_TEST

static Suite *select_suite(void)
{
    Suite *s = suite_create("select");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_oort_utility_table);
    tcase_add_test(tc, test_oort_epsilon_decays_to_its_floor);
    tcase_add_test(tc, test_top_orders_by_value_then_index);
    tcase_add_test(tc, test_weighted_draw_follows_the_weights);
    tcase_add_test(tc, test_oort_split_pool_and_exploration);
    tcase_add_test(tc, test_pow_d_against_a_recomputation);
    tcase_add_test(tc, test_oort_pacer_rule);
    tcase_add_test(tc, test_oort_pacer_T_sequence);
    tcase_add_test(tc, test_oort_blacklist_admits);
    tcase_add_test(tc, test_quantile_nearest_rank);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(select_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
