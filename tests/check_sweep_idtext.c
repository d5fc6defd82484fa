/* check_sweep_idtext.c — the sweep id's text built once per point (sweep_idtext.h) must be
 * the bytes the full build gives (scenario_config_string in the %.17g form) for every run:
 * every scenario file in scenarios/ and tests/fixtures/ that resolves, at seeds of every
 * length, and whole sweep ids recomputed the full way, run by run. The ids are a contract
 * (`--resume` finds a sweep by its id), so this is a differential test against the
 * reference builder, not against stored values. */
#include "driver/sweep.h"
#include "base/hash.h"
#include "sim/scenario/sweep_idtext.h"
#include "tests/test_scenario.h"

#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seeds whose digits are 1 to 19 long, so the splice moves the text after them. */
static const uint64_t seeds[] = {0, 1, 9, 10, 42, 99, 100, 12345, 1000000007ULL, 4294967296ULL,
                                 123456789012345678ULL, (uint64_t)INT64_MAX};

/* The id the full builder gives: sweep_expand's hash over every run, each run's text
 * built from its own scenario (sweep_scenario resolves the point again). */
static void full_id(const Sweep *sw, char *id, size_t size)
{
    static const char version[] = "hetsim sweep 1\n";
    uint64_t hash = hash_fnv1a(HASH_FNV1A_START, version, sizeof version);
    Scenario *sc = malloc(sizeof *sc);
    ck_assert_ptr_nonnull(sc);
    for (int64_t i = 0; i < sw->n_runs; i++) {
        HsDiag diag;
        hs_diag_clear(&diag);
        ck_assert_int_eq(sweep_scenario(sw, i, sc, &diag), HS_OK);
        char *text = sweep_id_text_full(sc);
        ck_assert_ptr_nonnull(text);
        hash = hash_fnv1a(hash, sw->labels[i], strlen(sw->labels[i]) + 1);
        hash = hash_fnv1a(hash, text, strlen(text) + 1);
        free(text);
    }
    free(sc);
    snprintf(id, size, "sw-%016llx", (unsigned long long)hash);
}

/* Compares the two builders on one sweep: every point at every seed of seeds[], and the
 * whole id. Returns how many texts were compared. */
static int compare_sweep(const char *what, Sweep *sw)
{
    int compared = 0;
    Scenario *sc = malloc(sizeof *sc);
    ck_assert_ptr_nonnull(sc);
    for (int64_t p = 0; p < sw->n_points && p < 8; p++) {
        HsDiag diag;
        hs_diag_clear(&diag);
        ck_assert_int_eq(sweep_scenario(sw, p * sw->repeat, sc, &diag), HS_OK);
        SweepIdText t = {0};
        ck_assert_int_eq(sweep_idtext_point(&t, sc), HS_OK);
        /* the splice, not the full build, is what a real file exercises */
        ck_assert_msg(t.seed_at > 0, "%s: no seed line found in [run]", what);
        for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
            sc->seed = seeds[s];
            char *full = sweep_id_text_full(sc);
            const char *spliced = sweep_idtext_run(&t, sc);
            ck_assert_ptr_nonnull(full);
            ck_assert_ptr_nonnull(spliced);
            ck_assert_msg(strcmp(full, spliced) == 0, "%s point %lld seed %llu: texts differ", what, (long long)p,
                          (unsigned long long)seeds[s]);
            free(full);
            compared++;
        }
        sweep_idtext_free(&t);
    }
    free(sc);
    if (sw->n_runs <= 400) {
        char id[32];
        full_id(sw, id, sizeof id);
        ck_assert_msg(strcmp(id, sw->id) == 0, "%s: sweep id %s, full build %s", what, sw->id, id);
    }
    return compared;
}

/* Loads path as a sweep (a file without [sweep] is a sweep of one run); 0 when it does not
 * resolve here (pairing fixtures, files whose data is absent, bad-input fixtures). */
static int load(const char *path, Sweep *sw)
{
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    int status = inidoc_load(path, &doc, &diag);
    if (status == HS_OK) status = sweep_parse(&doc, sw, &diag);
    inidoc_free(&doc); /* what a failed load had read too */
    if (status != HS_OK) return 0;
    if (sweep_resolve(sw, &diag) != HS_OK) {
        sweep_free(sw);
        return 0;
    }
    return 1;
}

/* Every *.ini under folder (recursively); *files counts those that resolved. */
static int compare_folder(const char *folder, int *files)
{
    DIR *dir = opendir(folder);
    ck_assert_msg(dir != NULL, "cannot open %s (run from the source root)", folder);
    int compared = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", folder, entry->d_name);
        size_t n = strlen(entry->d_name);
        DIR *sub = opendir(path);
        if (sub != NULL) {
            closedir(sub);
            compared += compare_folder(path, files);
            continue;
        }
        if (n < 5 || strcmp(entry->d_name + n - 4, ".ini") != 0) continue;
        Sweep sw;
        if (!load(path, &sw)) continue;
        compared += compare_sweep(path, &sw);
        ++*files;
        sweep_free(&sw);
    }
    closedir(dir);
    return compared;
}

START_TEST(test_every_scenario_file)
{
    int files = 0;
    int compared = compare_folder("scenarios", &files) + compare_folder("tests/fixtures", &files);
    /* 44 files in scenarios/ and 9 fixtures resolve today; most of them must still */
    fprintf(stderr, "sweep_idtext: %d files, %d texts compared\n", files, compared);
    ck_assert_int_ge(files, 40);
    ck_assert_int_ge(compared, files * (int)(sizeof seeds / sizeof seeds[0]));
}
END_TEST

/* Swept seeds, a [method] section (written as typed, not in %.17g), several groups and
 * numbers that the %.17g form rewrites. */
START_TEST(test_swept_seed_and_method_keys)
{
    static const char text[] = "[run]\nname = seed = 3\nmethod = localsgd\nseed = 7\nrounds = 2\nmode = timing\n"
                               "[model]\nlayers = 784,32,10\nbatch = 50\nlr = 0.1\n"
                               "[method.localsgd]\nlocal_steps = 3\n"
                               "[agents]\ncount = 4\ncompute = lognormal(1.5 GFLOPS, 0.3)\nlatency = 2.5 ms\n"
                               "bandwidth = 10 Mbit/s\nsamples = 500\n"
                               "[agents.slow]\ncount = 2\ncompute = 0.1 GFLOPS\n"
                               "[sweep]\nrun.seed = 7, 10, 99\nagents.latency = 0.1 ms, 3 ms\nrepeat = 4\n";
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(inidoc_load_string("t.ini", text, &doc, &diag), HS_OK);
    Sweep sw;
    ck_assert_int_eq(sweep_parse(&doc, &sw, &diag), HS_OK);
    inidoc_free(&doc);
    ck_assert_msg(sweep_resolve(&sw, &diag) == HS_OK, "%s", diag.message);
    ck_assert_int_eq(sw.n_runs, 24);
    ck_assert_int_eq(compare_sweep("t.ini", &sw), 6 * (int)(sizeof seeds / sizeof seeds[0]));
    sweep_free(&sw);
}
END_TEST

/* Without a seed line where it is looked for, every run is built in full: same text. */
START_TEST(test_fallback_builds_in_full)
{
    Scenario *sc = malloc(sizeof *sc);
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(test_resolve("[run]\nmethod = sync\nseed = 5\nrounds = 1\nmode = timing\n"
                                       "[model]\nlayers = 784,10\nbatch = 50\n[agents]\ncount = 2\ncompute = 1 GFLOPS\n"
                                       "bandwidth = 10 Mbit/s\nlatency = 1 ms\nsamples = 100\n", NULL, 0, sc, &diag), HS_OK);
    SweepIdText t = {0};
    ck_assert_int_eq(sweep_idtext_point(&t, sc), HS_OK);
    ck_assert_uint_gt(t.seed_at, 0);
    t.seed_at = 0; /* as if the line had not been found */
    sc->seed = 123;
    char *full = sweep_id_text_full(sc);
    ck_assert_str_eq(sweep_idtext_run(&t, sc), full);
    ck_assert_ptr_nonnull(strstr(full, "\nseed = 123\n"));
    free(full);
    sweep_idtext_free(&t);
    free(sc);
}
END_TEST

static Suite *idtext_suite(void)
{
    Suite *s = suite_create("sweep_idtext");
    TCase *tc = tcase_create("identity");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_scenario_file);
    tcase_add_test(tc, test_swept_seed_and_method_keys);
    tcase_add_test(tc, test_fallback_builds_in_full);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(idtext_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
