/* check_train.c — train mode end to end on a small synthetic problem: every method
 * learns, runs are bitwise deterministic, divergence ends a run as "diverged", the
 * target accuracy stops it, and timings equal timing mode's exactly. */
#include "models/optim.h"
#include "sim/methods/method.h"
#include "sim/run.h"
#include "sim/stages/prune.h"
#include "sim/train/trainer.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *synthetic =
    "[run]\nmethod = sync\nrounds = 4\nmode = train\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 1600\ntest_samples = 400\n"
    "separation = 3\n"
    "[model]\nlayers = 16,32,4\nbatch = 16\noptimizer = momentum\nlr = 0.05\n"
    "[topology]\ngraph = ring\n"
    "[agents]\ncount = 8\ncompute = lognormal(1 GFLOPS, 0.7)\nbandwidth = 10 MB/s\nlatency = 1 ms\n"
    "[agents.slow]\ncount = 2\ncompute = 50 MFLOPS\n"
    "[servers]\ncount = 1\ncompute = 10 GFLOPS\nbandwidth = 100 MB/s\nlatency = 1 ms\n";

static int run(const char *const *set, int n, TestSink *ts, HsDiag *diag)
{
    return test_run(synthetic, set, n, ts, diag);
}

/* The last accuracy in the test sink's metrics rows. */
START_TEST(test_every_method_learns)
{
    const char *methods[] = {"sync",   "localsgd", "qsr",    "dpsgd",   "adpsgd",     "co2",    "comdml", "token",
                             "ripples", "divshare", "swift", "fedavg", "fedbuff", "asgd", "rennala", "ringmaster",
                             "sdfeel", "sdfeel deadline=auto", "lsgd", "eager", "rog"};
    for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
        char set_method[64];
        snprintf(set_method, sizeof set_method, "run.method=%.*s", (int)strcspn(methods[m], " "), methods[m]);
        /* the parameter-server methods take one gradient per step (sync averages eight):
         * they get more rounds of the same length in gradients, and plain SGD as in their
         * papers (momentum on stale gradients compounds the delay) */
        int one_gradient = strcmp(methods[m], "asgd") == 0 || strcmp(methods[m], "rennala") == 0 ||
                           strcmp(methods[m], "ringmaster") == 0;
        const char *set[] = {set_method, "run.rounds=8", "model.optimizer=sgd"};
        /* sdfeel: three edge servers on the ring; asynchronous with deadline = auto */
        const char *edge[] = {set_method, "servers.count=3", "method.deadline=auto"};
        int sdfeel = strncmp(methods[m], "sdfeel", 6) == 0, async = strchr(methods[m], ' ') != NULL;
        TestSink ts;
        HsDiag diag;
        ck_assert_msg(run(sdfeel ? edge : set, sdfeel ? 2 + async : one_gradient ? 3 : 1, &ts, &diag) == 0, "%s: %s",
                      methods[m], diag.message);
        double accuracy = test_sink_last_accuracy(&ts);
        /* four well-separated classes: chance is 0.25 */
        ck_assert_msg(accuracy > 0.6, "%s reached only %.3f", methods[m], accuracy);
        ck_assert(ts.status == SINK_STATUS_DONE);
        test_sink_free(&ts);
    }
}
END_TEST

START_TEST(test_train_runs_are_deterministic_and_time_like_timing_mode)
{
    const char *methods[] = {"sync",   "adpsgd", "comdml", "ripples",    "divshare", "swift",
                             "fedavg", "fedbuff", "asgd", "rennala", "ringmaster", "sdfeel", "sdfeel deadline=auto",
                             "lsgd", "eager", "rog"};
    for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
        char set_method[64];
        snprintf(set_method, sizeof set_method, "run.method=%.*s", (int)strcspn(methods[m], " "), methods[m]);
        /* train: the first n_train overrides; timing: one more (sdfeel: three edge servers,
         * asynchronous with deadline = auto) */
        int async = strchr(methods[m], ' ') != NULL;
        int n_train = strncmp(methods[m], "sdfeel", 6) == 0 ? 2 + async : 1;
        const char *set[] = {set_method, "servers.count=3", "method.deadline=auto", "run.mode=timing"};
        set[n_train] = "run.mode=timing";
        TestSink a, b, timing;
        HsDiag diag;
        ck_assert_int_eq(run(set, n_train, &a, &diag), 0);
        ck_assert_int_eq(run(set, n_train, &b, &diag), 0);
        ck_assert_str_eq(a.text, b.text);
        ck_assert_int_eq(run(set, n_train + 1, &timing, &diag), 0);
        /* the virtual clock does not depend on the arithmetic */
        ck_assert_int_eq(a.rounds, timing.rounds);
        for (int r = 0; r < a.rounds; r++)
            ck_assert_msg(a.round_rows[r].t_end == timing.round_rows[r].t_end &&
                              a.round_rows[r].bytes == timing.round_rows[r].bytes,
                          "%s: round %d", methods[m], r);
        test_sink_free(&a);
        test_sink_free(&b);
        test_sink_free(&timing);
    }
}
END_TEST

/* Case c's run (set[0..n), room for one more) in train mode and in timing mode: every
 * timing row the same bits, 4 rounds. */
static void train_times_like_timing(const char *set[], int n, size_t c)
{
    TestSink train, timing;
    HsDiag diag;
    ck_assert_msg(run(set, n, &train, &diag) == 0, "case %zu: %s", c, diag.message);
    set[n] = "run.mode=timing";
    ck_assert_msg(run(set, n + 1, &timing, &diag) == 0, "case %zu: %s", c, diag.message);
    char *a = test_sink_timing_lines(&train), *b = test_sink_timing_lines(&timing);
    if (strcmp(a, b) != 0) fprintf(stderr, "case %zu, train:\n%s\ntiming:\n%s\n", c, a, b);
    ck_assert_msg(strcmp(a, b) == 0, "case %zu: train and timing rows differ (stderr)", c);
    ck_assert_int_eq(train.rounds, 4);
    free(a);
    free(b);
    test_sink_free(&train);
    test_sink_free(&timing);
}

/* localsgd and qsr book a member's whole period in one sweep in timing mode and an event
 * per local step in train mode (localsgd_sweep_period): every timing row of the two must
 * be the same bits, under jitter, a Markov slowdown, Markov availability, partial
 * participation, numeric periods and DP-SGD's counted steps. */
START_TEST(test_localsgd_sweep_times_like_its_events)
{
    static const char *const cases[][4] = {
        {"run.method=localsgd", "agents.jitter=0.4", NULL},
        {"run.method=localsgd", "method.local_steps=3", "method.participation=0.5", "agents.slowdown=markov(0.3, 0.5, 4)"},
        {"run.method=localsgd", "agents.availability=markov(2 s, 1 s)", "method.local_steps=4", NULL},
        {"run.method=qsr", "agents.jitter=0.2", NULL},
        {"run.method=localsgd", "privacy.clip=sample", "privacy.noise_multiplier=1", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *set[6];
        int n = 0;
        for (int k = 0; k < 4 && cases[c][k]; k++) set[n++] = cases[c][k];
        train_times_like_timing(set, n, c);
    }
}
END_TEST

/* fedavg books a client's local steps at once in timing mode (engine_compute_run) and an
 * event per step in train mode: every timing row of the two must be the same bits, with
 * identical clients (every event a tie), partial participation, epochs of local steps,
 * DP-SGD's counted steps, fifo, and where it keeps an event per step in timing mode too
 * (jitter, over-commitment, a deadline). */
START_TEST(test_fedavg_steps_at_once_time_like_events)
{
    static const char *const cases[][4] = {
        {"agents.compute=1 GFLOPS", "agents.slow.compute=1 GFLOPS", "method.local_steps=3", NULL},
        {"agents.compute=1 GFLOPS", "agents.slow.compute=1 GFLOPS", "method.participation=0.5", "network.model=fifo"},
        {"method.participation=0.5", NULL},
        {"privacy.clip=sample", "privacy.noise_multiplier=1", "method.local_steps=4", NULL},
        {"agents.jitter=0.3", "method.local_steps=2", NULL},
        {"method.overcommit=0.5", "method.participation=0.5", NULL},
        {"method.deadline=2 s", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *set[6] = {"run.method=fedavg"};
        int n = 1;
        for (int k = 0; k < 4 && cases[c][k]; k++) set[n++] = cases[c][k];
        train_times_like_timing(set, n, c);
    }
}
END_TEST

/* Width pruning (localsgd, sync, dpsgd) and progressive freezing (localsgd): each learns,
 * is bitwise deterministic, times exactly like timing mode, and the run is shorter than
 * without the option, where the two slow agents' full steps set the pace. (With this
 * two-block MLP, freezing's first stage costs what the full model does: head 1 is as
 * large as block 2. Its second stage, block 1 forward only, is cheaper.) */
START_TEST(test_prune_and_freeze_learn_and_time_like_timing_mode)
{
    /* D-PSGD's steps wait for messages of 1 ms latency, longer than a slow agent's step:
     * its case makes the latency small so that compute sets the pace */
    static const char *const cases[][3] = {
        {"run.method=localsgd", "method.prune=width", NULL},
        {"run.method=localsgd", "method.prune=width", "method.prune_target=0.5"},
        {"run.method=sync", "method.prune=width", NULL},
        {"run.method=dpsgd", "method.prune=width", "agents.latency=1 us"},
        {"run.method=localsgd", "method.freeze=progressive", "method.freeze_rounds=1"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *set[4];
        int n = 0;
        for (int k = 0; k < 3 && cases[c][k]; k++) set[n++] = cases[c][k];
        const char *unpruned[2] = {cases[c][0], c == 3 ? cases[c][2] : "run.rounds=4"};
        TestSink a, b, timing, plain;
        HsDiag diag;
        ck_assert_msg(run(set, n, &a, &diag) == 0, "case %zu: %s", c, diag.message);
        ck_assert_int_eq(run(set, n, &b, &diag), 0);
        ck_assert_str_eq(a.text, b.text);
        set[n] = "run.mode=timing";
        ck_assert_int_eq(run(set, n + 1, &timing, &diag), 0);
        ck_assert_int_eq(a.rounds, timing.rounds);
        for (int r = 0; r < a.rounds; r++) ck_assert(a.round_rows[r].t_end == timing.round_rows[r].t_end);
        ck_assert_msg(test_sink_last_accuracy(&a) > 0.6, "case %zu reached only %.3f", c, test_sink_last_accuracy(&a));
        /* the same method without the option: the slow agents' full steps set the pace */
        ck_assert_int_eq(run(unpruned, 2, &plain, &diag), 0);
        int last = a.rounds - 1;
        ck_assert_int_eq(plain.rounds, a.rounds);
        ck_assert_msg(a.round_rows[last].t_end < plain.round_rows[last].t_end, "case %zu: %g s, without %g s", c,
                      a.round_rows[last].t_end, plain.round_rows[last].t_end);
        test_sink_free(&a);
        test_sink_free(&b);
        test_sink_free(&timing);
        test_sink_free(&plain);
    }
}
END_TEST

/* The keep ratios prune_target chooses and the bytes of the nested shells, by hand:
 * 6 agents at 1 GFLOPS and 2 at 250 MFLOPS (same steps), MLP 16-32-4. */
static Sim *prune_engine(const char *const *set, int n, Scenario *sc, TestSink *ts)
{
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(inidoc_load_string("t.ini", synthetic, &doc, &diag), 0);
    const char *base[] = {"run.method=localsgd", "run.mode=timing", "run.rounds=1", "agents.compute=1 GFLOPS",
                          "agents.slow.compute=250 MFLOPS", "method.prune=width", "method.local_steps=4"};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++) ck_assert_int_eq(inidoc_apply_set(&doc, base[i], &diag), 0);
    for (int i = 0; i < n; i++) ck_assert_int_eq(inidoc_apply_set(&doc, set[i], &diag), 0);
    ck_assert_int_eq(scenario_resolve(&doc, sc, &diag), 0);
    inidoc_free(&doc);
    static HsDiag engine_diag; /* the engine keeps a pointer to it */
    Sim *e;
    ck_assert_int_eq(sim_open(sc, test_sink_init(ts), &engine_diag, &e), 0);
    return e;
}

/* The resolved prune keys of the method that runs, as prune_create takes them. */
static PruneKeys prune_keys_of(const Scenario *sc)
{
    return (PruneKeys){.prune = (int)test_method_key(sc, "prune"), .prune_target = test_method_key(sc, "prune_target"),
                       .prune_min = test_method_key(sc, "prune_min")};
}

/* Step FLOPs of the MLP 16-k-4 at batch 16, as the engine counts them. */
static double prune_mlp_flops(int k)
{
    return 16.0 * ((6.0 * 16 * k + 4 * k) + (6.0 * k * 4 + 2 * 4) + 5 * 4);
}

START_TEST(test_prune_keep_ratios_and_shell_bytes)
{
    Scenario sc;
    TestSink engine_sink;
    Sim *e = prune_engine(NULL, 0, &sc, &engine_sink);
    Prune p;
    PruneKeys keys = prune_keys_of(e->sc);
    ck_assert_int_eq(prune_create(&keys, e->sc, &e->world, &e->profile, e->trainer != NULL, NULL, e->diag, &p), HS_OK);
    /* makespan: the slow agents keep the widest hidden layer whose step is at most a
     * quarter of the full one's (they are 4 times slower): F(k) <= F(32) / 4 */
    int expect = 0;
    for (int k = 1; k <= 32; k++)
        if (prune_mlp_flops(k) <= prune_mlp_flops(32) / 4) expect = k;
    ck_assert_int_eq(expect, 7);
    for (int i = 0; i < 8; i++) {
        ModelSpec sub;
        ck_assert_int_eq(model_width_spec(&sc.model, p.keep[i], &sub), HS_OK);
        ck_assert_int_eq(sub.sizes[1], i < 6 ? 32 : expect);
        ck_assert_double_eq_tol(p.step_flops[i], prune_mlp_flops(sub.sizes[1]), 1e-6);
        ck_assert_double_eq(p.bytes[i], 4.0 * (16 * sub.sizes[1] + sub.sizes[1] + sub.sizes[1] * 4 + 4));
    }
    prune_free(&p);
    sim_close(e);
    test_sink_free(&engine_sink);
    /* the bytes of one averaging: shell 1 (all 8, the 7-unit sub-model) and shell 2 (the
     * 6 full agents, the rest of the model), 2 (n - 1) payloads each */
    TestSink ts;
    HsDiag diag;
    const char *set[] = {"run.method=localsgd", "run.mode=timing", "run.rounds=1", "agents.compute=1 GFLOPS",
                         "agents.slow.compute=250 MFLOPS", "method.prune=width", "method.local_steps=epoch"};
    ck_assert_int_eq(run(set, 7, &ts, &diag), 0);
    double small = 4.0 * (16 * 7 + 7 + 7 * 4 + 4), whole = 4.0 * (16 * 32 + 32 + 32 * 4 + 4);
    ck_assert_double_eq_tol(ts.round_rows[0].bytes, 2 * 7 * small + 2 * 5 * (whole - small), 1e-6);
    ck_assert_double_eq_tol(ts.round_rows[0].extra, 7.0 / 32, 1e-8); /* the smallest keep ratio */
    test_sink_free(&ts);
    /* a fixed ratio for the slow agents only; prune_min bounds makespan from below */
    const char *fixed[] = {"method.prune_target=0.5"};
    e = prune_engine(fixed, 1, &sc, &engine_sink);
    keys = prune_keys_of(e->sc);
    ck_assert_int_eq(prune_create(&keys, e->sc, &e->world, &e->profile, e->trainer != NULL, NULL, e->diag, &p), HS_OK);
    ck_assert_double_eq(p.keep[0], 1.0);
    ck_assert_double_eq(p.keep[6], 0.5);
    ck_assert_double_eq(p.keep[7], 0.5);
    prune_free(&p);
    sim_close(e);
    test_sink_free(&engine_sink);
    const char *floor[] = {"agents.slow.compute=10 MFLOPS", "method.prune_min=0.25"};
    e = prune_engine(floor, 2, &sc, &engine_sink);
    keys = prune_keys_of(e->sc);
    ck_assert_int_eq(prune_create(&keys, e->sc, &e->world, &e->profile, e->trainer != NULL, NULL, e->diag, &p), HS_OK);
    ck_assert_double_eq(p.keep[7], 0.25);
    prune_free(&p);
    sim_close(e);
    test_sink_free(&engine_sink);
}
END_TEST

START_TEST(test_sync_with_a_deadline_learns_without_the_stragglers)
{
    const char *set[] = {"method.deadline=0 s"};
    TestSink ts;
    HsDiag diag;
    ck_assert_msg(run(set, 1, &ts, &diag) == 0, "%s", diag.message);
    ck_assert(test_sink_last_accuracy(&ts) > 0.6);
    ck_assert(ts.round_rows[0].extra > 0); /* the two slow agents were left out */
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_divergence_ends_the_run)
{
    const char *set[] = {"model.lr=1e5", "model.optimizer=sgd"};
    TestSink ts;
    HsDiag diag;
    ck_assert_int_eq(run(set, 2, &ts, &diag), HS_E_DIVERGED);
    ck_assert(ts.ended);
    ck_assert(ts.status == SINK_STATUS_DIVERGED);
    ck_assert_msg(strstr(diag.message, "diverged") != NULL, "%s", diag.message);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_target_accuracy_stops_early)
{
    const char *set[] = {"run.rounds=50", "run.target_accuracy=0.5"};
    TestSink ts;
    HsDiag diag;
    ck_assert_int_eq(run(set, 2, &ts, &diag), 0);
    ck_assert(ts.rounds < 50);
    ck_assert(test_sink_last_accuracy(&ts) >= 0.5);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_missing_dataset_is_a_clear_error)
{
    /* refused at resolution, at the key that names the folder (issue 28, class 8) */
    const char *set[] = {"data.dataset=fashion-mnist", "data.path=/nonexistent", "model.layers=784,10"};
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(synthetic, set, 3, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "--set data.path=/nonexistent: /nonexistent: not found") == diag.message,
                  "%s", diag.message);
}
END_TEST

/* rounds.extra of round r from the test sink. */
static double round_extra(const TestSink *ts, int r)
{
    return ts->round_rows[r].extra;
}

START_TEST(test_dpsgd_consensus_shrinks_once_gradients_stop)
{
    /* lr drops to 0 after round 1 (step schedule, gamma 0): only mixing goes on, and the
     * agents' models contract towards their average */
    const char *set[] = {"run.method=dpsgd", "model.optimizer=sgd", "model.schedule=step", "model.step_every=1",
                         "model.step_gamma=0", "data.partition=dirichlet", "data.alpha=0.1"};
    TestSink ts;
    HsDiag diag;
    ck_assert_msg(run(set, 7, &ts, &diag) == 0, "%s", diag.message);
    ck_assert(round_extra(&ts, 0) > 0);
    ck_assert(round_extra(&ts, 1) < 0.5 * round_extra(&ts, 0));
    ck_assert(round_extra(&ts, 3) < 0.5 * round_extra(&ts, 2));
    test_sink_free(&ts);
}
END_TEST

/* No key holds: a run's meaning from the entries without a key alone. */
static const char *no_key(void *ctx, const char *key)
{
    return NULL;
}

/* rounds.extra is defined once per method (MethodExtra, sim/scenario/method_ops.h):
 * every method, alone, with each local-step feature and with a deadline, in both modes,
 * 2 rounds. A round with a figure has a meaning for the run, so `hetsim show` never
 * titles a bare number; and a meaning chosen by the run's keys (a stage's, a deadline's)
 * is the run's figure: some round of the run has one. Refused combinations are skipped. */
START_TEST(test_every_rounds_extra_has_a_meaning)
{
    const char *variants[] = {NULL, "method.prune=width", "method.freeze=progressive", "method.deadline=50 ms"};
    const char *modes[] = {"run.mode=train", "run.mode=timing"};
    int runs = 0, figures = 0, keyed = 0;
    for (const MethodOps *const *m = method_all(); *m; m++)
        for (size_t v = 0; v < sizeof variants / sizeof *variants; v++)
            for (int mode = 0; mode < 2; mode++) {
                char method[64];
                snprintf(method, sizeof method, "run.method=%s", (*m)->name);
                const char *set[] = {method, "run.rounds=2", modes[mode], variants[v]};
                int n = variants[v] ? 4 : 3;
                Scenario sc;
                HsDiag diag;
                int status = test_resolve(synthetic, set, n, &sc, &diag);
                if (status == HS_E_INPUT && variants[v] != NULL) continue; /* not with this method */
                ck_assert_msg(status == HS_OK, "%s %s: %s", (*m)->name, variants[v] ? variants[v] : "", diag.message);
                TestSink ts;
                RunOutcome outcome;
                ck_assert_msg(sim_run(&sc, test_sink_init(&ts), &diag, &outcome) == HS_OK, "%s %s: %s", (*m)->name,
                              variants[v] ? variants[v] : "", diag.message);
                runs++;
                const char *meaning = method_extra_of_scenario(&sc);
                int any = 0;
                for (int r = 0; r < ts.rounds; r++) {
                    if (isnan(round_extra(&ts, r))) continue;
                    any = 1;
                    figures++;
                    ck_assert_msg(meaning != NULL, "%s %s (%s): round %d has rounds.extra %g, and no meaning", (*m)->name,
                                  variants[v] ? variants[v] : "alone", modes[mode], r, round_extra(&ts, r));
                }
                if (meaning != NULL && meaning != method_extra_meaning(*m, no_key, NULL)) {
                    keyed++;
                    ck_assert_msg(any, "%s %s (%s): rounds.extra means '%s' and no round has it", (*m)->name,
                                  variants[v], modes[mode], meaning);
                }
                test_sink_free(&ts);
            }
    /* the walk saw the methods, their figures and the meanings chosen by keys */
    ck_assert_int_ge(runs, 100);
    ck_assert_int_ge(figures, 100);
    ck_assert_int_ge(keyed, 10);
}
END_TEST

START_TEST(test_qsr_period_follows_the_rule)
{
    /* cosine from lr 0.1 over 6 rounds: H = max(H_base, floor((alpha / lr_r)^2)),
     * capped by the round's 13 steps (200 samples in batches of 16) */
    const char *set[] = {"run.method=qsr", "run.rounds=6", "run.mode=timing", "model.schedule=cosine",
                         "model.lr=0.1", "method.H_base=2", "method.alpha=0.15"};
    TestSink ts;
    HsDiag diag;
    ck_assert_msg(run(set, 7, &ts, &diag) == 0, "%s", diag.message);
    OptimSpec spec = {.lr = 0.1, .schedule = SCHED_COSINE};
    for (int r = 0; r < 6; r++) {
        double lr = optim_schedule_lr(&spec, r, 6);
        double h = lr > 0 ? floor(pow(0.15 / lr, 2)) : 13;
        if (h < 2) h = 2;
        if (h > 13) h = 13;
        ck_assert_msg(round_extra(&ts, r) == h, "round %d: H %g, expected %g (lr %g)", r, round_extra(&ts, r), h, lr);
    }
    ck_assert(round_extra(&ts, 5) > round_extra(&ts, 0)); /* the period grows as lr decays */
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_async_and_delayed_methods_track_their_synchronous_twins)
{
    /* Equal speeds and a complete graph: AD-PSGD's gossip averages like D-PSGD's mixing
     * in expectation; CO2 with period 1, no momentum, no clipping and outer lr 1 applies
     * Local SGD's average one step late. Both must land near their twins. */
    const char *equal[] = {"agents.slow.count=0", "agents.compute=1 GFLOPS", "topology.graph=full"};
    const char *pairs[][5] = {
        {"run.method=adpsgd"}, {"run.method=dpsgd"},
        {"run.method=co2", "method.period=1", "method.beta=0", "method.clip=1e30"},
        {"run.method=localsgd", "method.local_steps=1"},
    };
    int counts[] = {1, 1, 4, 2};
    double accuracy[4];
    for (int k = 0; k < 4; k++) {
        const char *set[8];
        int n = 0;
        for (int i = 0; i < 3; i++) set[n++] = equal[i];
        for (int i = 0; i < counts[k]; i++) set[n++] = pairs[k][i];
        TestSink ts;
        HsDiag diag;
        ck_assert_msg(run(set, n, &ts, &diag) == 0, "%s", diag.message);
        accuracy[k] = test_sink_last_accuracy(&ts);
        test_sink_free(&ts);
    }
    ck_assert_msg(fabs(accuracy[0] - accuracy[1]) < 0.06, "adpsgd %.3f vs dpsgd %.3f", accuracy[0], accuracy[1]);
    ck_assert_msg(fabs(accuracy[2] - accuracy[3]) < 0.06, "co2 %.3f vs localsgd %.3f", accuracy[2], accuracy[3]);
}
END_TEST

/* 1 if [offset, offset+count) of a and b are bitwise equal. */
static int same_range(const float *a, const float *b, size_t offset, size_t count)
{
    return memcmp(a + offset, b + offset, count * sizeof *a) == 0;
}

/* [data] partition = domains on the real Fashion-MNIST (skipped when it is not installed,
 * except in CI): four rotation domains, 90 degrees held out; the agents hold what the
 * partition deals them (in timing mode too), and the metrics carry the held-out and seen
 * domains' accuracy. */
START_TEST(test_domains_run)
{
    const char *probe = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
    if (access(probe, R_OK) != 0) {
        const char *ci = getenv("CI");
        ck_assert_msg(!(ci && *ci && strcmp(ci, "false") != 0 && strcmp(ci, "0") != 0),
                      "%s is missing (CI: the Debian package dataset-fashion-mnist must be installed)", probe);
        fprintf(stderr, "check_train: Fashion-MNIST not installed, skipping the domains run\n");
        return;
    }
    static const char *text =
        "[run]\nmethod = localsgd\nrounds = 1\nmode = train\n"
        "[data]\npartition = domains\ndomains = 0,30,60,90\ntest_domains = 90\nlambda = 0.1\ntest_samples = 2000\n"
        "[model]\nlayers = 784,32,10\nbatch = 64\nlr = 0.1\n"
        "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\n";
    TestSink train, timing, again;
    for (int mode = 0; mode < 2; mode++) {
        HsDiag diag;
        const char *timing_mode[] = {"run.mode=timing"};
        int status = test_run(text, timing_mode, mode, mode ? &timing : &train, &diag);
        ck_assert_msg(status == 0, "%s", diag.message);
    }
    /* a second train run reads the decoded set from the cache the first one left, which
     * is mapped read-only: the rotation must make it writable (models/dataset.c), and
     * rotates the same pixels */
    HsDiag diag;
    ck_assert_msg(test_run(text, NULL, 0, &again, &diag) == 0, "%s", diag.message);
    ck_assert_str_eq(again.text, train.text);
    test_sink_free(&again);
    /* 15,000 rows per domain; 4 agents, 3 training domains: main agents 2, 1, 1; agent 0
     * holds 15000 (0.9/2 + 0.1/4) = 7125 of domain 0 and 375 of each other */
    const int samples[4] = {7875, 7875, 14625, 14625};
    for (int a = 0; a < 4; a++) {
        char row[64];
        snprintf(row, sizeof row, "agent %d default ", a);
        const char *p = strstr(train.text, row);
        ck_assert_ptr_nonnull(p);
        int agent, held, byzantine;
        char group[32];
        double x;
        ck_assert_int_eq(sscanf(p, "agent %d %31s %lf %lf %d %lf %lf %d", &agent, group, &x, &x, &held, &x, &x,
                                &byzantine), 8);
        ck_assert_int_eq(held, samples[a]);
        ck_assert_ptr_nonnull(strstr(timing.text, row));
    }
    ck_assert(train.round_rows[0].t_end == timing.round_rows[0].t_end);
    ck_assert_int_gt(train.domain_metrics, 0);
    ck_assert_int_eq(train.first_domains.round, 0);
    double heldout = train.first_domains.heldout_accuracy, seen = train.first_domains.seen_accuracy;
    fprintf(stderr, "check_train: domains run, held-out (90 degrees) accuracy %.4f, seen %.4f\n", heldout, seen);
    ck_assert(heldout > 0.05 && seen > 0.45 && seen > heldout + 0.2);
    ck_assert_int_eq(timing.domain_metrics, 0);
    test_sink_free(&train);
    test_sink_free(&timing);
}
END_TEST

START_TEST(test_split_step_touches_only_its_side)
{
    HsDiag diag;
    Scenario sc;
    const char *set[] = {"run.method=comdml", "model.layers=16,32,32,4"};
    ck_assert_msg(test_resolve(synthetic, set, 2, &sc, &diag) == 0, "%s", diag.message);
    TestSink ts;
    Sim *e;
    ck_assert_msg(sim_open(&sc, test_sink_init(&ts), &diag, &e) == 0, "%s", diag.message);
    size_t n = trainer_param_count(e->trainer);
    float *before = malloc(n * sizeof *before);
    int slow = 6, split = 1; /* cut after block 1 of 3 */
    ck_assert_int_eq(trainer_split_begin(e->trainer, slow, split), 0);
    memcpy(before, trainer_params(e->trainer, slow), n * sizeof *before);
    ck_assert_int_eq(trainer_split_bottom_step(e->trainer, slow, split), 0);
    const float *after = trainer_params(e->trainer, slow);
    /* layout: blocks 0..2, then heads for splits 1 and 2; block 0 and head 1 train */
    size_t b1 = 16 * 32 + 32, b2 = 32 * 32 + 32, b3 = 32 * 4 + 4, head1 = 32 * 4 + 4;
    ck_assert(!same_range(after, before, 0, b1));                    /* block 1 moved */
    ck_assert(same_range(after, before, b1, b2 + b3));               /* the top did not */
    ck_assert(!same_range(after, before, b1 + b2 + b3, head1));      /* its head moved */
    ck_assert(same_range(after, before, b1 + b2 + b3 + head1, head1)); /* the other did not */
    /* the helper's step: the slow agent's model does not change at all */
    memcpy(before, after, n * sizeof *before);
    ck_assert_int_eq(trainer_split_top_step(e->trainer, slow, split), 0);
    ck_assert(same_range(trainer_params(e->trainer, slow), before, 0, n));
    /* and the top copy's training reaches the slow model only at the round's end */
    ck_assert_int_eq(trainer_split_end(e->trainer, slow, split), 0);
    ck_assert(same_range(trainer_params(e->trainer, slow), before, 0, b1));
    ck_assert(!same_range(trainer_params(e->trainer, slow), before, b1, b2 + b3));
    free(before);
    sim_close(e);
    test_sink_free(&ts);
}
END_TEST

/* A 2-round train run of method (localsgd: averaging every 2 steps; qsr: its rule's
 * period) with momentum_at_average = what (NULL: not given) into ts; ts NULL: resolve
 * into sc only. */
static int momentum_run(const char *method, const char *what, TestSink *ts, Scenario *sc, HsDiag *diag)
{
    char run_method[64], choice[64];
    snprintf(run_method, sizeof run_method, "run.method=%s", method);
    snprintf(choice, sizeof choice, "method.momentum_at_average=%s", what ? what : "");
    const char *set[4] = {run_method, "run.rounds=2"};
    int n = 2;
    if (strcmp(method, "localsgd") == 0) set[n++] = "method.local_steps=2";
    if (what) set[n++] = choice;
    return ts ? test_run(synthetic, set, n, ts, diag) : test_resolve(synthetic, set, n, sc, diag);
}

/* [method] momentum_at_average (localsgd, qsr): what an averaging does to the members'
 * momentum velocities. By hand on the trainer: keep leaves each its own, average gives
 * every member the sample-weighted mean, reset zeroes them. Through runs: keep is the
 * default and changes nothing, not even runs.config; reset and average change training;
 * the combinations that have no velocity to act on are input errors at the key. */
START_TEST(test_momentum_at_average)
{
    HsDiag diag;
    Scenario sc;
    const char *set[] = {"run.method=localsgd", "method.local_steps=2"};
    ck_assert_msg(test_resolve(synthetic, set, 2, &sc, &diag) == 0, "%s", diag.message);
    TestSink ts;
    Sim *e;
    ck_assert_msg(sim_open(&sc, test_sink_init(&ts), &diag, &e) == 0, "%s", diag.message);
    Trainer *t = e->trainer;
    int n = e->world.n;
    size_t d = trainer_param_count(t);
    float *before = malloc((size_t)n * d * sizeof *before);
    ck_assert_ptr_nonnull(before);
    for (int step = 0; step < 3; step++)
        for (int i = 0; i < n; i++) ck_assert_int_eq(trainer_local_step(t, i), 0);
    ck_assert_int_eq(trainer_average(t, NULL, n, 1), 0);
    for (int i = 0; i < n; i++) memcpy(before + (size_t)i * d, trainer_velocity(t, i), d * sizeof *before);
    ck_assert(!same_range(before, before + d, 0, d)); /* the agents' velocities differ */
    ck_assert_int_eq(trainer_momentum_at_average(t, NULL, n, 1, TRAINER_MOMENTUM_KEEP), 0);
    for (int i = 0; i < n; i++) ck_assert(same_range(trainer_velocity(t, i), before + (size_t)i * d, 0, d));
    ck_assert_int_eq(trainer_momentum_at_average(t, NULL, n, 1, TRAINER_MOMENTUM_AVERAGE), 0);
    double total = 0;
    for (int i = 0; i < n; i++) total += e->world.agents[i].samples;
    for (size_t j = 0; j < d; j++) {
        double mean = 0;
        for (int i = 0; i < n; i++) mean += e->world.agents[i].samples / total * before[(size_t)i * d + j];
        for (int i = 0; i < n; i++) ck_assert_float_eq_tol(trainer_velocity(t, i)[j], mean, 1e-6);
    }
    ck_assert(!same_range(trainer_velocity(t, 0), before, 0, d));
    ck_assert_int_eq(trainer_momentum_at_average(t, NULL, n, 1, TRAINER_MOMENTUM_RESET), 0);
    for (int i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) ck_assert(trainer_velocity(t, i)[j] == 0);
    free(before);
    sim_close(e);
    test_sink_free(&ts);

    /* runs: explicit keep is the default, row for row and in runs.config */
    static const char *const methods[] = {"localsgd", "qsr"};
    for (int m = 0; m < 2; m++) {
        TestSink a, b, c, f;
        const char *what[] = {NULL, "keep", "reset", "average"};
        TestSink *sinks[] = {&a, &b, &c, &f};
        for (int w = 0; w < 4; w++)
            ck_assert_msg(momentum_run(methods[m], what[w], sinks[w], &sc, &diag) == 0, "%s", diag.message);
        /* (the texts are too long for check's messages: compare, then say which) */
        ck_assert_msg(strcmp(a.text, b.text) == 0, "%s: keep is not the default", methods[m]);
        ck_assert_msg(strcmp(a.text, c.text) != 0, "%s: reset changed nothing", methods[m]);
        ck_assert_msg(strcmp(a.text, f.text) != 0, "%s: average changed nothing", methods[m]);
        ck_assert_msg(strcmp(c.text, f.text) != 0, "%s: reset and average ran the same", methods[m]);
        ck_assert_msg(test_sink_last_accuracy(&c) > 0.5 && test_sink_last_accuracy(&f) > 0.5, "%s: %.3f %.3f",
                      methods[m], test_sink_last_accuracy(&c), test_sink_last_accuracy(&f));
        for (int w = 0; w < 4; w++) test_sink_free(sinks[w]);
        /* runs.config leaves the default out and writes the others, which read back */
        ck_assert_int_eq(momentum_run(methods[m], "keep", NULL, &sc, &diag), 0);
        char *config = scenario_config_string(&sc);
        ck_assert_ptr_null(strstr(config, "momentum_at_average"));
        free(config);
        ck_assert_int_eq(momentum_run(methods[m], "average", NULL, &sc, &diag), 0);
        config = scenario_config_string(&sc);
        ck_assert_ptr_nonnull(strstr(config, "\nmomentum_at_average = average\n"));
        Scenario again;
        ck_assert_msg(test_resolve(config, NULL, 0, &again, &diag) == 0, "%s", diag.message);
        char *config_again = scenario_config_string(&again);
        ck_assert_str_eq(config, config_again);
        ck_assert(test_method_key(&again, "momentum_at_average") == TRAINER_MOMENTUM_AVERAGE);
        free(config);
        free(config_again);
    }
    /* nothing to act on: an error at the key */
    const char *sgd[] = {"run.method=localsgd", "model.optimizer=sgd", "method.momentum_at_average=reset"};
    ck_assert_int_eq(test_resolve(synthetic, sgd, 3, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "--set method.momentum_at_average=reset: reset and average act on the velocity")
                      == diag.message, "%s", diag.message);
    const char *pruned[] = {"run.method=localsgd", "method.prune=width", "method.momentum_at_average=average"};
    ck_assert_int_eq(test_resolve(synthetic, pruned, 3, &sc, &diag), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "not available with prune = width") != NULL, "%s", diag.message);
    const char *sgd_keep[] = {"run.method=qsr", "model.optimizer=sgd", "method.momentum_at_average=keep"};
    ck_assert_int_eq(test_resolve(synthetic, sgd_keep, 3, &sc, &diag), HS_OK);
}
END_TEST

/* The test losses of ts's metrics rows, in order, as text: what the models are, whatever
 * the clock says (the train loss is a sum in the order the steps ran, which follows it). */
static void metric_losses(const TestSink *ts, char *out, size_t size)
{
    size_t used = 0;
    out[0] = 0;
    for (const char *p = strstr(ts->text, "metric "); p; p = strstr(p + 1, "metric ")) {
        double t, train, test_loss;
        int round, agent;
        if (sscanf(p, "metric %lf %d %d %lf %lf", &t, &round, &agent, &train, &test_loss) == 5 && used < size)
            used += (size_t)snprintf(out + used, size - used, "%d %.17g\n", round, test_loss);
    }
}

/* LSGD's arithmetic in the Trainer: the election reads each agent's last batch loss, and
 * the pull moves every follower by pull (x_leader - x) while the leader stays. Through
 * runs: pull = 0 trains every agent alone, so the run does not depend on the period,
 * and pull = 1 (every follower copies the leader) differs from 0.5. */
START_TEST(test_lsgd_pull_and_election)
{
    HsDiag diag;
    Scenario sc;
    const char *set[] = {"run.method=lsgd"};
    ck_assert_msg(test_resolve(synthetic, set, 1, &sc, &diag) == 0, "%s", diag.message);
    TestSink ts;
    Sim *e;
    ck_assert_msg(sim_open(&sc, test_sink_init(&ts), &diag, &e) == 0, "%s", diag.message);
    Trainer *t = e->trainer;
    int n = e->world.n;
    size_t d = trainer_param_count(t);
    ck_assert(isnan(trainer_agent_loss(t, 0))); /* no batch yet */
    for (int step = 0; step < 2; step++)
        for (int i = 0; i < n; i++) ck_assert_int_eq(trainer_local_step(t, i), 0);
    for (int i = 0; i < n; i++) ck_assert(isfinite(trainer_agent_loss(t, i)) && trainer_agent_loss(t, i) > 0);
    float *before = malloc((size_t)n * d * sizeof *before);
    ck_assert_ptr_nonnull(before);
    for (int i = 0; i < n; i++) memcpy(before + (size_t)i * d, trainer_params(t, i), d * sizeof *before);
    int leader = 3;
    ck_assert_int_eq(trainer_pull(t, NULL, n, leader, 0.25), 0);
    const float *lead = before + (size_t)leader * d;
    ck_assert(same_range(trainer_params(t, leader), lead, 0, d));
    for (int i = 0; i < n; i++) {
        if (i == leader) continue;
        const float *x0 = before + (size_t)i * d, *x = trainer_params(t, i);
        ck_assert(!same_range(x, x0, 0, d));
        for (size_t j = 0; j < d; j++) ck_assert_float_eq_tol(x[j], x0[j] - 0.25 * (x0[j] - lead[j]), 1e-6);
    }
    /* a group's pull: members only; pull 1 copies the group's leader */
    for (int i = 0; i < n; i++) memcpy(before + (size_t)i * d, trainer_params(t, i), d * sizeof *before);
    const int group[] = {1, 2, 5};
    ck_assert_int_eq(trainer_pull(t, group, 3, 2, 1.0), 0);
    for (int i = 0; i < n; i++) {
        int member = i == 1 || i == 2 || i == 5;
        ck_assert(same_range(trainer_params(t, i), before + (size_t)(member ? 2 : i) * d, 0, d));
    }
    free(before);
    sim_close(e);
    test_sink_free(&ts);

    TestSink alone2, alone5, half, copy;
    const char *a2[] = {"run.method=lsgd", "method.pull=0", "method.period=2"};
    const char *a5[] = {"run.method=lsgd", "method.pull=0", "method.period=5"};
    const char *h[] = {"run.method=lsgd", "method.pull=0.5", "method.period=2"};
    const char *c[] = {"run.method=lsgd", "method.pull=1", "method.period=2"};
    ck_assert_int_eq(run(a2, 3, &alone2, &diag), 0);
    ck_assert_int_eq(run(a5, 3, &alone5, &diag), 0);
    ck_assert_int_eq(run(h, 3, &half, &diag), 0);
    ck_assert_int_eq(run(c, 3, &copy, &diag), 0);
    char l2[4096], l5[4096], lh[4096], lc[4096];
    metric_losses(&alone2, l2, sizeof l2);
    metric_losses(&alone5, l5, sizeof l5);
    metric_losses(&half, lh, sizeof lh);
    metric_losses(&copy, lc, sizeof lc);
    ck_assert(l2[0] != 0);
    ck_assert_str_eq(l2, l5);          /* no pull: the period changes the clock only */
    ck_assert_str_ne(l2, lh);          /* the pull changes training */
    ck_assert_str_ne(lh, lc);
    ck_assert_str_ne(alone2.text, alone5.text);
    /* the leader of the round's last election is in rounds.extra */
    for (int r = 0; r < half.rounds; r++)
        ck_assert(half.round_rows[r].extra >= 0 && half.round_rows[r].extra < 10);
    /* the multi-leader form: learns, deterministic, times as timing mode */
    TestSink g1, g2, gt;
    const char *grouped[] = {"run.method=lsgd", "method.leaders=groups", "method.global_every=2", "run.mode=timing"};
    ck_assert_int_eq(run(grouped, 3, &g1, &diag), 0);
    ck_assert_int_eq(run(grouped, 3, &g2, &diag), 0);
    ck_assert_int_eq(run(grouped, 4, &gt, &diag), 0);
    ck_assert_str_eq(g1.text, g2.text);
    ck_assert_int_eq(g1.rounds, gt.rounds);
    for (int r = 0; r < g1.rounds; r++)
        ck_assert(g1.round_rows[r].t_end == gt.round_rows[r].t_end && g1.round_rows[r].bytes == gt.round_rows[r].bytes);
    ck_assert_msg(test_sink_last_accuracy(&g1) > 0.6, "groups reached only %.3f", test_sink_last_accuracy(&g1));
    ck_assert_str_ne(g1.text, half.text);
    test_sink_free(&g1);
    test_sink_free(&g2);
    test_sink_free(&gt);
    test_sink_free(&alone2);
    test_sink_free(&alone5);
    test_sink_free(&half);
    test_sink_free(&copy);
}
END_TEST

static Suite *train_suite(void)
{
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_method_learns);
    tcase_add_test(tc, test_train_runs_are_deterministic_and_time_like_timing_mode);
    tcase_add_test(tc, test_prune_and_freeze_learn_and_time_like_timing_mode);
    tcase_add_test(tc, test_localsgd_sweep_times_like_its_events);
    tcase_add_test(tc, test_fedavg_steps_at_once_time_like_events);
    tcase_add_test(tc, test_prune_keep_ratios_and_shell_bytes);
    tcase_add_test(tc, test_divergence_ends_the_run);
    tcase_add_test(tc, test_sync_with_a_deadline_learns_without_the_stragglers);
    tcase_add_test(tc, test_target_accuracy_stops_early);
    tcase_add_test(tc, test_missing_dataset_is_a_clear_error);
    tcase_add_test(tc, test_dpsgd_consensus_shrinks_once_gradients_stop);
    tcase_add_test(tc, test_qsr_period_follows_the_rule);
    tcase_add_test(tc, test_every_rounds_extra_has_a_meaning);
    tcase_add_test(tc, test_split_step_touches_only_its_side);
    tcase_add_test(tc, test_momentum_at_average);
    tcase_add_test(tc, test_lsgd_pull_and_election);
    tcase_add_test(tc, test_domains_run);
    tcase_add_test(tc, test_async_and_delayed_methods_track_their_synchronous_twins);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(train_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
