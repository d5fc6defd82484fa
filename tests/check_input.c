/* check_input.c — what runs is what was written (issue 28): syntax libinih would accept
 * but a scenario does not mean is an error at its line (class 4); control characters
 * never reach a value (class 3); an override changes only what the file defines, a group
 * is added on purpose with --add-group (class 2); a file a key names is refused at that
 * key, with the file's own line (class 8). */
#include "sim/scenario/scenario.h"
#include "driver/sweep.h"
#include "tests/test_files.h"
#include "tests/test_scenario.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *base_text =
    "[run]\n"                  /* 1 */
    "method = sync\n"          /* 2 */
    "rounds = 3\n"             /* 3 */
    "mode = timing\n"          /* 4 */
    "[agents]\n"               /* 5 */
    "count = 8\n"              /* 6 */
    "compute = 2 GFLOPS\n"     /* 7 */
    "bandwidth = 100 Mbit/s\n" /* 8 */
    "[agents.slow]\n"          /* 9 */
    "count = 2\n"              /* 10 */
    "compute = 1 GFLOPS\n";    /* 11 */

/* base_text + extra with the overrides: HS_OK, or the error in diag. */
static int resolve(const char *extra, const char *const *set, int n, Scenario *sc, HsDiag *diag)
{
    char text[8192];
    snprintf(text, sizeof text, "%s%s", base_text, extra);
    return test_resolve(text, set, n, sc, diag);
}

static void expect_refused(const char *extra, const char *const *set, int n, const char *prefix, const char *fragment)
{
    Scenario sc;
    HsDiag diag;
    test_expect_input_error(resolve(extra, set, n, &sc, &diag), &diag, extra, prefix, fragment);
    ck_assert_msg(strchr(diag.message, '\n') == NULL, "a line break in the message: '%s'", diag.message);
}

static void expect_accepted(const char *extra, const char *const *set, int n, Scenario *sc)
{
    HsDiag diag;
    int status = resolve(extra, set, n, sc, &diag);
    ck_assert_msg(status == HS_OK, "refused '%s': %s", extra, diag.message);
}

/* ---- class 4: what libinih accepts but a scenario does not mean ---- */

START_TEST(test_text_after_a_section_header)
{
    /* the example: the count on the header line was dropped, the one below ran */
    expect_refused("[agents.fast] count = 5\ncount = 2\ncompute = 4 GFLOPS\n", NULL, 0, "t.ini:12:",
                   "text after the section header [agents.fast]: 'count = 5'");
    expect_refused("[agents.fast] # fast ones\ncount = 2\n", NULL, 0, "t.ini:12:", "text after the section header");
    expect_refused("[agents.fast]]\ncount = 2\n", NULL, 0, "t.ini:12:", "text after the section header");
    Scenario sc;
    expect_accepted("[agents.fast] ; the fast ones\ncount = 2\n", NULL, 0, &sc);
    ck_assert_int_eq(sc.groups[2].count, 2);
}
END_TEST

START_TEST(test_section_names)
{
    expect_refused("[]\ncount = 2\n", NULL, 0, "t.ini:12:", "empty section name []");
    expect_refused("[ agents.fast ]\ncount = 2\n", NULL, 0, "t.ini:12:", "blank inside the brackets");
    expect_refused("[agents.fast\ncount = 2\n", NULL, 0, "t.ini:12:", "section header without ']'");
    /* inih cuts a section name at 49 characters and puts the keys in the cut one */
    expect_refused("[agents.a_group_whose_name_is_far_too_long_for_inih_x]\ncount = 2\n", NULL, 0, "t.ini:12:",
                   "section name is longer than 49 characters");
    const char *long_set[] = {"agents.a_group_whose_name_is_far_too_long_for_inih_x.count=2"};
    expect_refused("", long_set, 1, "--set:", "the section name is longer than 49 characters");
    /* and the key an indented line continues */
    expect_refused("[sweep]\nagents.slow.a_key_name_long_enough_to_be_cut_by_inih_x = 1,\n  2\n", NULL, 0,
                   "t.ini:14:", "continues the value of a key longer than 49 characters (line 13)");
    /* inih merges the two blocks into one section */
    expect_refused("[agents.slow]\nlatency = 1 ms\n", NULL, 0, "t.ini:12:",
                   "[agents.slow] is given twice (first at line 9)");
    expect_refused("[run]\nseed = 4\n", NULL, 0, "t.ini:12:", "[run] is given twice (first at line 1)");
}
END_TEST

START_TEST(test_keys_and_separators)
{
    expect_refused("[topology]\ngraph: ring\n", NULL, 0, "t.ini:13:", "separated by '='");
    expect_refused("[topology]\n= ring\n", NULL, 0, "t.ini:13:", "a key name is missing");
    expect_refused("[topology]\ngraph ring\n", NULL, 0, "t.ini:13:", "cannot parse this line");
    /* a key given twice stays an error */
    expect_refused("[topology]\ngraph = ring\ngraph = full\n", NULL, 0, "t.ini:14:", "set twice");
    /* a ':' inside a value is a value */
    Scenario sc;
    expect_accepted("[agents.fast]\ncount = 2\ncompute = choice(1 GFLOPS:0.5, 2 GFLOPS:0.5)\n", NULL, 0, &sc);
}
END_TEST

/* An indented line continues the key above it, even after a blank line or a comment:
 * an indented header or KEY = VALUE would silently become part of that value. */
START_TEST(test_indented_lines)
{
    expect_refused("[data]\ndataset = synthetic\n  partition = dirichlet\n", NULL, 0, "t.ini:14:",
                   "continues the value of 'dataset' (line 13)");
    expect_refused("[data]\ndataset = synthetic\n\n  ; note\n  partition = dirichlet\n", NULL, 0, "t.ini:16:",
                   "KEY = VALUE would be part of it");
    expect_refused("[agents.fast]\ncount = 2\n  [agents.faster]\n  count = 1\n", NULL, 0, "t.ini:14:",
                   "this section header would be part of it");
    Scenario sc;
    /* continuations, indented keys after a header, CRLF, a BOM and tabs stay fine */
    expect_accepted("[agents.fast]\n  count = 2\ncompute = choice(1 GFLOPS:0.5,\n\t2 GFLOPS:0.5)\r\n", NULL, 0, &sc);
    ck_assert_int_eq(sc.groups[2].compute.n_choices, 2);
    HsDiag diag;
    char text[4096];
    snprintf(text, sizeof text, "\xEF\xBB\xBF%s", base_text);
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_OK);
}
END_TEST

/* ---- class 3: control characters ---- */

START_TEST(test_control_characters_in_the_file)
{
    expect_refused("[agents.fast]\ncount = 2\ncompute = 1\rGFLOPS\n", NULL, 0, "t.ini:14:", "a carriage return (0x0d)");
    expect_refused("[agents.fast]\ncount = 2\nlatency = 1 ms\x1b[0m\n", NULL, 0, "t.ini:14:", "an escape character");
    expect_refused("[agents.f\x7fst]\ncount = 2\n", NULL, 0, "t.ini:12:", "a control character (0x7f)");
    /* a tab is a blank, but not in text that runs.config keeps */
    char text[4096];
    snprintf(text, sizeof text, "[run]\nname = a\tb\nmethod = sync\nrounds = 1\nmode = timing\n%s", strstr(base_text, "[agents]"));
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:2: [run] name: holds a tab") != NULL, "%s", diag.message);
}
END_TEST

START_TEST(test_control_characters_in_overrides)
{
    /* the example: a name that would write fake lines into runs.config */
    const char *newline[] = {"run.name=a\n[agents]\ncount = 3"};
    expect_refused("", newline, 1, "--set:", "'run.name=a\\n[agents]\\ncount = 3' holds a line break (0x0a)");
    const char *cr[] = {"agents.count=4\r"};
    expect_refused("", cr, 1, "--set:", "a carriage return");
    const char *in_key[] = {"agents\x1b.count=4"};
    expect_refused("", in_key, 1, "--set:", "an escape character");
    const char *tab[] = {"run.name=a\tb"};
    expect_refused("", tab, 1, "--set run.name=a\tb:", "holds a tab");
    Scenario sc;
    const char *tab_blank[] = {"agents.count=\t8"};
    expect_accepted("", tab_blank, 1, &sc);
    ck_assert_int_eq(sc.n_agents, 8);
}
END_TEST

/* ---- class 2: overrides change what the file defines ---- */

START_TEST(test_set_does_not_invent_groups)
{
    /* the example: a typo of slow ran with a new group and the real one unchanged */
    const char *typo[] = {"agents.slw.count=1"};
    expect_refused("", typo, 1, "--set agents.slw.count=1:",
                   "the scenario defines no group [agents.slw] (did you mean 'agents.slow'?); --set changes only "
                   "what the file defines (add the group with --add-group slw)");
    const char *key[] = {"agents.new.compute=1 GFLOPS"};
    expect_refused("", key, 1, "--set agents.new.compute=1 GFLOPS:", "defines no group [agents.new]");
    /* the groups the file defines take overrides as before */
    const char *known[] = {"agents.slow.count=3"};
    Scenario sc;
    expect_accepted("", known, 1, &sc);
    ck_assert_int_eq(sc.groups[1].count, 3);
}
END_TEST

START_TEST(test_add_group)
{
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(inidoc_load_string("t.ini", base_text, &doc, &diag), HS_OK);
    ck_assert_int_eq(scenario_add_group(&doc, "fast", &diag), HS_OK);
    ck_assert_int_eq(inidoc_apply_set(&doc, "agents.fast.count=3", &diag), HS_OK);
    ck_assert_int_eq(inidoc_apply_set(&doc, "agents.fast.compute=8 GFLOPS", &diag), HS_OK);
    Scenario sc;
    ck_assert_int_eq(scenario_resolve(&doc, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.n_groups, 3);
    ck_assert_str_eq(sc.groups[2].name, "fast");
    ck_assert_int_eq(sc.groups[2].count, 3);
    ck_assert_int_eq(sc.groups[0].count, 3);
    /* a group the file has, twice, or with a bad name */
    ck_assert_int_eq(scenario_add_group(&doc, "slow", &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:9 defines [agents.slow] already") != NULL, "%s", diag.message);
    hs_diag_clear(&diag);
    ck_assert_int_eq(scenario_add_group(&doc, "fast", &diag), HS_E_INPUT);
    const char *bad[] = {"", " x", "a]b", "a\nb", "a;b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        hs_diag_clear(&diag);
        ck_assert_msg(scenario_add_group(&doc, bad[i], &diag) == HS_E_INPUT, "accepted '%s'", bad[i]);
        ck_assert(strchr(diag.message, '\n') == NULL);
    }
    inidoc_free(&doc);
    /* an added group without its count is named by the option */
    hs_diag_clear(&diag);
    ck_assert_int_eq(inidoc_load_string("t.ini", base_text, &doc, &diag), HS_OK);
    ck_assert_int_eq(scenario_add_group(&doc, "fast", &diag), HS_OK);
    ck_assert_int_eq(scenario_resolve(&doc, &sc, &diag), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--add-group: fast: missing required key 'count' in [agents.fast]");
    inidoc_free(&doc);
}
END_TEST

/* Sections with a fixed name (every one but the groups) may be created by --set: a
 * misspelt one is an unknown section, a misspelt key an unknown key, and each key names
 * what it turns on (README, "Overrides"). */
START_TEST(test_set_may_create_fixed_sections)
{
    const char *sets[] = {"data.dataset=synthetic", "model.layers=32,16,10", "topology.graph=ring",
                          "network.model=fifo", "method.deadline=none", "method.localsgd.local_steps=3",
                          "byzantine.count=0", "privacy.clip=none", "compression.scheme=none"};
    Scenario sc;
    expect_accepted("", sets, (int)(sizeof sets / sizeof *sets), &sc);
    ck_assert(sc.byzantine.present && sc.privacy.present && sc.compression.present);
    const char *typo[] = {"compresion.scheme=topk"};
    expect_refused("", typo, 1, "--set compresion.scheme=topk:", "unknown section [compresion] (did you mean 'compression'?)");
    const char *method_typo[] = {"method.comdm.solver=ip"};
    expect_refused("", method_typo, 1, "--set method.comdm.solver=ip:",
                   "unknown section [method.comdm] (did you mean 'comdml'?)");
}
END_TEST

START_TEST(test_sweep_keys_do_not_invent_groups)
{
    char text[4096];
    snprintf(text, sizeof text, "%s[sweep]\nagents.slw.count = 1, 2\n", base_text);
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(inidoc_load_string("t.ini", text, &doc, &diag), HS_OK);
    int64_t runs;
    ck_assert_int_eq(sweep_check(&doc, &runs, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:13: [sweep] agents.slw.count: the scenario defines no group "
                                       "[agents.slw] (did you mean 'agents.slow'?)") != NULL,
                  "%s", diag.message);
    /* --add-group makes it on purpose */
    hs_diag_clear(&diag);
    ck_assert_int_eq(scenario_add_group(&doc, "slw", &diag), HS_OK);
    ck_assert_int_eq(inidoc_apply_set(&doc, "agents.slw.count=0", &diag), HS_OK);
    ck_assert_int_eq(sweep_check(&doc, &runs, &diag), HS_OK);
    ck_assert_int_eq(runs, 2);
    inidoc_free(&doc);
}
END_TEST

/* ---- class 8: a file a key names is refused at the key, with its own line ---- */

START_TEST(test_input_files_are_named_at_their_key)
{
    char extra[512], fragment[256];
    const char *trace = test_scratch_file("input", "t.csv", "agent,time,value\ndefault,0,1 GFLOPS\nslow,0,-1 GFLOPS\n");
    snprintf(extra, sizeof extra, "[agents.fast]\ncount = 1\ncompute = trace(%s)\n", trace);
    snprintf(fragment, sizeof fragment, "[agents.fast] compute: %s:3: value must be positive", trace);
    expect_refused(extra, NULL, 0, "t.ini:14:", fragment);
    /* inherited from [agents]: named there */
    char text[4096];
    snprintf(text, sizeof text, "[run]\nmethod = sync\nrounds = 1\nmode = timing\n[agents]\ncount = 4\n"
                                "compute = 1 GFLOPS\nbandwidth = trace(%s)\n[agents.slow]\ncount = 1\n",
             test_scratch_file("input", "b.csv", "default,0,1 MB/s\n"));
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:8: [agents] bandwidth: ") == diag.message &&
                      strstr(diag.message, "b.csv: no rows for agent 3 (group slow)") != NULL,
                  "%s", diag.message);
    const char *edges = test_scratch_file("input", "g.edges", "0 1\n1 1\n");
    snprintf(extra, sizeof extra, "[topology]\ngraph = %s\n", edges);
    snprintf(fragment, sizeof fragment, "[topology] graph: %s:2: self-loop 1-1", edges);
    expect_refused(extra, NULL, 0, "t.ini:13:", fragment);
    const char *set[] = {"topology.graph=/nonexistent/x.edges"};
    expect_refused("", set, 1, "--set topology.graph=/nonexistent/x.edges:", "/nonexistent/x.edges: not found");
    const char *assign = test_scratch_file("input", "c.assign", "0 0\n0 1\n");
    snprintf(extra, sizeof extra, "[servers]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 Gbit/s\nassign = %s\n",
             assign);
    snprintf(fragment, sizeof fragment, "[servers] assign: %s:2: agent 0 is assigned twice (first at line 1)", assign);
    expect_refused(extra, NULL, 0, "t.ini:16:", fragment);
    expect_refused("[data]\npath = /nonexistent\n", NULL, 0, "t.ini:13:", "[data] path: /nonexistent: not found");
    snprintf(extra, sizeof extra, "[data]\npath = %s\n", trace);
    snprintf(fragment, sizeof fragment, "[data] path: %s: is a regular file, not a folder", trace);
    expect_refused(extra, NULL, 0, "t.ini:13:", fragment);
    expect_refused("[data]\npath = /dev/null\n", NULL, 0, "t.ini:13:",
                   "[data] path: /dev/null: is a character device, not a folder");
    unlink(trace);
    unlink(edges);
    unlink(assign);
    unlink(test_scratch_file("input", "b.csv", ""));
    rmdir(test_scratch_dir("input"));
}
END_TEST

static Suite *input_suite(void)
{
    Suite *s = suite_create("input");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_text_after_a_section_header);
    tcase_add_test(tc, test_section_names);
    tcase_add_test(tc, test_keys_and_separators);
    tcase_add_test(tc, test_indented_lines);
    tcase_add_test(tc, test_control_characters_in_the_file);
    tcase_add_test(tc, test_control_characters_in_overrides);
    tcase_add_test(tc, test_set_does_not_invent_groups);
    tcase_add_test(tc, test_add_group);
    tcase_add_test(tc, test_set_may_create_fixed_sections);
    tcase_add_test(tc, test_sweep_keys_do_not_invent_groups);
    tcase_add_test(tc, test_input_files_are_named_at_their_key);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(input_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
