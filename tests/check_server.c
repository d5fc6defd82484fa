/* check_server.c — servers as nodes and the server methods: [server] is required by
 * the methods that use one and ignored by the others; a FedAvg round's length is the
 * closed form of its messages over the server's shared links, its computations and the
 * server's processing; sampling, over-commitment and the deadline drop the right
 * number of clients; the asynchronous family times alike and differs only in what it
 * applies; edge servers' clients by nearness, round-robin or a file. */
#include "sim/run.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *base =
    "[run]\nmethod = fedavg\nrounds = 3\nmode = timing\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 1600\n"
    "[model]\nlayers = 16,32,4\nbatch = 16\noptimizer = sgd\nlr = 0.05\n"
    "[agents]\ncount = 8\ncompute = 1 GFLOPS\nbandwidth = 1 GB/s\nlatency = 1 ms\n"
    "[agents.slow]\ncount = 2\ncompute = 100 MFLOPS\n"
    "[server]\ncompute = 10 GFLOPS\nbandwidth = 1 MB/s\nlatency = 2 ms\n";

static int run_with(const char *text, const char *const *set, int n, TestSink *ts, HsDiag *diag, Scenario *out)
{
    Scenario sc;
    int status = test_resolve(text, set, n, &sc, diag);
    if (out && status == 0) *out = sc;
    RunOutcome outcome;
    if (status == 0 && ts) status = sim_run(&sc, test_sink_init(ts), diag, &outcome);
    return status;
}

START_TEST(test_server_section_rules)
{
    HsDiag diag;
    Scenario sc;
    /* a server method without [server] */
    const char *no_server = "[run]\nmethod = asgd\nrounds = 1\nmode = timing\n[data]\ndataset = synthetic\n"
                            "[model]\nlayers = 32,10\n[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 MB/s\n";
    ck_assert_int_eq(run_with(no_server, NULL, 0, NULL, &diag, &sc), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:2: [run] method: method asgd needs a [server] section") == diag.message, "%s",
                  diag.message);
    /* [server] with a serverless method: validated, not simulated */
    const char *sync[] = {"run.method=sync"};
    ck_assert_int_eq(run_with(base, sync, 1, NULL, &diag, &sc), HS_OK);
    ck_assert_int_eq(sc.has_server, 1);
    ck_assert_int_eq(sc.n_servers, 0);
    const char *bad[] = {"run.method=sync", "server.samples=10"};
    ck_assert_int_eq(run_with(base, bad, 2, NULL, &diag, &sc), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "unknown key 'samples' in [server]") != NULL, "%s", diag.message);
    /* a server method: one server node after the agents, written back into runs.config */
    ck_assert_int_eq(run_with(base, NULL, 0, NULL, &diag, &sc), HS_OK);
    ck_assert_int_eq(sc.n_servers, 1);
    char *config = scenario_config_string(&sc);
    ck_assert_ptr_nonnull(strstr(config, "[server]\ncompute = 10000000000\n"));
    free(config);
    /* agents rows: the agents only */
    TestSink ts;
    ck_assert_int_eq(run_with(base, NULL, 0, &ts, &diag, NULL), HS_OK);
    ck_assert_int_eq(ts.n_agent_round_rows, 8);
    test_sink_free(&ts);
}
END_TEST

/* Two identical clients, everything else instant enough to check the closed form: the
 * downloads share the server's uplink, the uploads its downlink, and the server
 * processes the two uploads one after the other. */
START_TEST(test_fedavg_round_is_the_closed_form)
{
    const char *text =
        "[run]\nmethod = fedavg\nrounds = 1\nmode = timing\n"
        "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 64\n"
        "[model]\nlayers = 16,32,4\nbatch = 16\n"
        "[method]\nlocal_steps = 3\n"
        "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 GB/s\nlatency = 1 ms\n"
        "[server]\ncompute = 10 MFLOPS\nbandwidth = 1 MB/s\nlatency = 2 ms\n";
    TestSink ts;
    HsDiag diag;
    ck_assert_int_eq(run_with(text, NULL, 0, &ts, &diag, NULL), HS_OK);
    double params = 16 * 32 + 32 + 32 * 4 + 4, bytes = 4 * params;
    Sim *e;
    Scenario sc;
    ck_assert_int_eq(run_with(text, NULL, 0, NULL, &diag, &sc), HS_OK);
    TestSink unused;
    ck_assert_int_eq(sim_open(&sc, test_sink_init(&unused), &diag, &e), HS_OK);
    double step = sim_step_flops(e, 16) / 1e9;
    sim_close(e);
    test_sink_free(&unused);
    double expected = 0.002 + 2 * bytes / 1e6 + 3 * step + 0.002 + 2 * bytes / 1e6 + 2 * (2 * params / 1e7);
    ck_assert_msg(fabs(ts.round_rows[0].t_end - expected) < 1e-12 * expected, "%.17g vs %.17g",
                  ts.round_rows[0].t_end, expected);
    ck_assert(ts.round_rows[0].bytes == 4 * bytes);
    ck_assert(ts.round_rows[0].extra == 0);
    test_sink_free(&ts);
}
END_TEST

START_TEST(test_fedavg_sampling_overcommit_deadline)
{
    TestSink ts;
    HsDiag diag;
    /* K = 4 of 8, 6 selected: two dropped every round. The server's link is fast here:
     * over a slow one the two extra downloads cost more than the stragglers (the
     * sample of 4 is the first 4 of the sample of 6: one stream per round). */
    const char *over[] = {"method.participation=0.5", "method.overcommit=0.5", "server.bandwidth=1 GB/s"};
    ck_assert_int_eq(run_with(base, over, 3, &ts, &diag, NULL), HS_OK);
    for (int r = 0; r < 3; r++) ck_assert(ts.round_rows[r].extra == 2);
    double overcommitted = ts.round_rows[2].t_end;
    test_sink_free(&ts);
    /* without over-commitment a slow client in the sample holds its round */
    const char *plain[] = {"method.participation=0.5", "server.bandwidth=1 GB/s"};
    ck_assert_int_eq(run_with(base, plain, 2, &ts, &diag, NULL), HS_OK);
    for (int r = 0; r < 3; r++) ck_assert(ts.round_rows[r].extra == 0);
    ck_assert_msg(ts.round_rows[2].t_end > overcommitted, "%g vs %g", ts.round_rows[2].t_end, overcommitted);
    test_sink_free(&ts);
    /* a deadline nobody can meet: every selected client is dropped, rounds last the deadline */
    const char *late[] = {"method.deadline=1 ms"};
    ck_assert_int_eq(run_with(base, late, 1, &ts, &diag, NULL), HS_OK);
    for (int r = 0; r < 3; r++) {
        ck_assert(ts.round_rows[r].extra == 8);
        ck_assert(fabs(ts.round_rows[r].t_end - ts.round_rows[r].t_start - 0.001) < 1e-12);
    }
    test_sink_free(&ts);
}
END_TEST

/* asgd, rennala and ringmaster differ only in what the server applies: identical
 * clocks; asgd's delays are positive with stragglers, ringmaster with R = 1 discards
 * what rennala with B = 1 discards (both keep only gradients at the current point). */
START_TEST(test_asynchronous_family_times_alike)
{
    const char *methods[][2] = {{"run.method=asgd", NULL},
                                {"run.method=rennala", "method.batch=1"},
                                {"run.method=ringmaster", "method.R=1"},
                                {"run.method=ringmaster", "method.R=4"}};
    TestSink ts[4];
    HsDiag diag;
    for (int m = 0; m < 4; m++)
        ck_assert_int_eq(run_with(base, methods[m], methods[m][1] ? 2 : 1, &ts[m], &diag, NULL), HS_OK);
    for (int r = 0; r < 3; r++) {
        for (int m = 1; m < 4; m++) ck_assert(ts[m].round_rows[r].t_end == ts[0].round_rows[r].t_end);
        ck_assert(ts[0].round_rows[r].extra > 0);
        ck_assert(ts[1].round_rows[r].extra == ts[2].round_rows[r].extra);
        ck_assert(ts[2].round_rows[r].extra > ts[3].round_rows[r].extra);
    }
    for (int m = 0; m < 4; m++) test_sink_free(&ts[m]);
    /* fedbuff: with one client at a time nothing is ever stale */
    const char *buff[] = {"run.method=fedbuff", "method.concurrency=1", "method.buffer=2"};
    ck_assert_int_eq(run_with(base, buff, 3, &ts[0], &diag, NULL), HS_OK);
    for (int r = 0; r < 3; r++) ck_assert(ts[0].round_rows[r].extra == 0);
    test_sink_free(&ts[0]);
    const char *crowd[] = {"run.method=fedbuff", "method.concurrency=9"};
    ck_assert_int_eq(run_with(base, crowd, 2, NULL, &diag, NULL), HS_E_INPUT);
    ck_assert_str_eq(diag.message, "--set method.concurrency=9: 9 clients at once, but there are 8 agents");
    const char *many[] = {"run.method=fedbuff", "method.buffer=2"};
    ck_assert_int_eq(run_with(base, many, 2, &ts[0], &diag, NULL), HS_OK);
    ck_assert(ts[0].round_rows[2].extra > 0);
    test_sink_free(&ts[0]);
}
END_TEST

START_TEST(test_edge_server_rules)
{
    HsDiag diag;
    Scenario sc;
    const char *plain = "[run]\nmethod = sdfeel\nrounds = 1\nmode = timing\n[data]\ndataset = synthetic\n"
                        "[model]\nlayers = 32,10\n[agents]\ncount = 6\ncompute = 1 GFLOPS\nbandwidth = 1 MB/s\n";
    ck_assert_int_eq(run_with(plain, NULL, 0, NULL, &diag, &sc), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:2: [run] method: method sdfeel needs a [servers] section") == diag.message, "%s",
                  diag.message);
    char text[2048];
    snprintf(text, sizeof text, "%s[servers]\ncount = 3\ncompute = 1 GFLOPS\nbandwidth = 1 GB/s\n", plain);
    ck_assert_int_eq(run_with(text, NULL, 0, NULL, &diag, &sc), HS_OK);
    ck_assert_int_eq(sc.n_servers, 3);
    ck_assert_int_eq(sc.server_assign, SERVER_ASSIGN_NEAREST);
    char *config = scenario_config_string(&sc);
    ck_assert_ptr_nonnull(strstr(config, "[servers]\ncount = 3\nassign = nearest\n"));
    free(config);
    /* the graph is over the servers: degree 3 is impossible on 3 nodes, fine on 6 agents */
    const char *regular[] = {"topology.graph=random-regular", "topology.degree=3"};
    ck_assert_int_eq(run_with(text, regular, 2, NULL, &diag, &sc), HS_E_INPUT);
    const char *sync[] = {"topology.graph=random-regular", "topology.degree=3", "run.method=sync"};
    ck_assert_int_eq(run_with(text, sync, 3, NULL, &diag, &sc), HS_OK);
    ck_assert_int_eq(sc.n_servers, 0);
    /* one server only for the parameter-server methods; not both sections */
    const char *fedavg[] = {"run.method=fedavg"};
    ck_assert_int_eq(run_with(text, fedavg, 1, NULL, &diag, &sc), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:14: [servers] count: method fedavg has one server") == diag.message, "%s",
                  diag.message);
    const char *both[] = {"server.compute=1 GFLOPS"};
    ck_assert_int_eq(run_with(text, both, 1, NULL, &diag, &sc), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "t.ini:13: [servers] and [server] are both given") == diag.message, "%s",
                  diag.message);
}
END_TEST

/* Two clients, two servers, one of each per cluster: download, one step, upload, the
 * server's processing, one gossip step to the other server and its processing. */
START_TEST(test_sdfeel_round_is_the_closed_form)
{
    const char *text =
        "[run]\nmethod = sdfeel\nrounds = 2\nmode = timing\n"
        "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 64\n"
        "[model]\nlayers = 16,32,4\nbatch = 16\n"
        "[method]\nlocal_steps = 1\nintra_rounds = 1\ngossip_steps = 1\n"
        "[topology]\ngraph = full\n"
        "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 GB/s\nlatency = 1 ms\n"
        "[servers]\ncount = 2\nassign = round-robin\ncompute = 10 MFLOPS\nbandwidth = 1 MB/s\nlatency = 2 ms\n";
    TestSink ts, unused;
    HsDiag diag;
    ck_assert_int_eq(run_with(text, NULL, 0, &ts, &diag, NULL), HS_OK);
    double params = 16 * 32 + 32 + 32 * 4 + 4, bytes = 4 * params;
    Sim *e;
    Scenario sc;
    ck_assert_int_eq(run_with(text, NULL, 0, NULL, &diag, &sc), HS_OK);
    ck_assert_int_eq(sim_open(&sc, test_sink_init(&unused), &diag, &e), HS_OK);
    double step = sim_step_flops(e, 16) / 1e9;
    sim_close(e);
    test_sink_free(&unused);
    double process = 2 * params / 1e7;
    double round = 2 * (0.002 + bytes / 1e6) + step + process + (0.002 + bytes / 1e6) + process;
    for (int r = 0; r < 2; r++)
        ck_assert_msg(fabs(ts.round_rows[r].t_end - (r + 1) * round) < 1e-12 * round, "round %d: %.17g vs %.17g", r,
                      ts.round_rows[r].t_end, (r + 1) * round);
    /* two downloads, two uploads, two gossip messages, and the next round's downloads,
     * sent as each server finishes (they count in the round they happen in) */
    ck_assert_msg(ts.round_rows[0].bytes == 8 * bytes && ts.round_rows[1].bytes == 6 * bytes, "%g %g (model %g)",
                  ts.round_rows[0].bytes, ts.round_rows[1].bytes, bytes);
    ck_assert(ts.round_rows[0].extra == 0); /* both clusters reach the gossip together */
    test_sink_free(&ts);
}
END_TEST

/* The asynchronous variant on one server with a fast client (1 GFLOPS: one step of
 * S = step FLOPs takes S / 1e9 = about 65 us) and a slow one (10 MFLOPS: about 6.5 ms),
 * tau1 = tau2 = alpha = 1, deadline T = 5 ms. A period is a download (1 ms latency + a
 * few us), one step, an upload (1 ms + a few us) and the server's processing:
 *   fast: about 2.07 ms, so it reports before every deadline, staleness 0;
 *   slow: about 8.6 ms: sent version 0 at t = 0, in at 8.6 ms, aggregated at the
 *         deadline t = 10 ms where the server is at version 1: tau = 1; sent version 2
 *         at 10 ms, aggregated at 20 ms against version 3: tau = 1 again.
 * Round r ends at the server's (r + 1)-th aggregation, t = (r + 1) T exactly; rounds.extra
 * (mean staleness of the round's aggregated models): 0 (fast), 0.5 (fast 0, slow 1), 0,
 * 0.5. Bytes by send time: round 0 the two downloads, the fast upload and its next
 * download (4 models); round 1 two uploads and two downloads (4); round 2 one of each
 * (2); round 3 as round 1 (4).
 * deadline = auto: T = the lower median of the two clients' periods, the fast one's:
 * S / 1e9 + 2 x 1 ms + 2 x 2 bytes / 1 GB/s (two clients share the server's links) +
 * 2 d / 10 GFLOPS; round 0 ends at T, and the fast client made it (extra 0). */
START_TEST(test_sdfeel_async_is_the_closed_form)
{
    const char *text =
        "[run]\nmethod = sdfeel\nrounds = 4\nmode = timing\n"
        "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 64\n"
        "[model]\nlayers = 16,32,4\nbatch = 16\n"
        "[method]\nlocal_steps = 1\nintra_rounds = 1\ngossip_steps = 1\ndeadline = 5 ms\n"
        "[topology]\ngraph = full\n"
        "[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 GB/s\nlatency = 1 ms\n"
        "[agents.slow]\ncount = 1\ncompute = 10 MFLOPS\n"
        "[servers]\ncount = 1\ncompute = 10 GFLOPS\nbandwidth = 1 GB/s\nlatency = 1 ms\n";
    TestSink ts, unused;
    HsDiag diag;
    ck_assert_int_eq(run_with(text, NULL, 0, &ts, &diag, NULL), HS_OK);
    double params = 16 * 32 + 32 + 32 * 4 + 4, bytes = 4 * params;
    const double extra[] = {0, 0.5, 0, 0.5}, models[] = {4, 4, 2, 4};
    ck_assert_int_eq(ts.rounds, 4);
    for (int r = 0; r < 4; r++) {
        ck_assert_msg(fabs(ts.round_rows[r].t_end - (r + 1) * 0.005) < 1e-15, "round %d: %.17g", r,
                      ts.round_rows[r].t_end);
        ck_assert_msg(ts.round_rows[r].extra == extra[r], "round %d: extra %g", r, ts.round_rows[r].extra);
        ck_assert_msg(ts.round_rows[r].bytes == models[r] * bytes, "round %d: %g bytes (model %g)", r,
                      ts.round_rows[r].bytes, bytes);
    }
    test_sink_free(&ts);
    const char *automatic[] = {"method.deadline=auto", "run.rounds=1"};
    ck_assert_int_eq(run_with(text, automatic, 2, &ts, &diag, NULL), HS_OK);
    Sim *e;
    Scenario sc;
    ck_assert_int_eq(run_with(text, NULL, 0, NULL, &diag, &sc), HS_OK);
    ck_assert_int_eq(sim_open(&sc, test_sink_init(&unused), &diag, &e), HS_OK);
    double step = sim_step_flops(e, 16) / 1e9;
    sim_close(e);
    test_sink_free(&unused);
    double deadline = step + 0.002 + 4 * bytes / 1e9 + 2 * params / 1e10;
    ck_assert_msg(fabs(ts.round_rows[0].t_end - deadline) < 1e-12 * deadline, "%.17g vs %.17g", ts.round_rows[0].t_end,
                  deadline);
    ck_assert(ts.round_rows[0].extra == 0);
    test_sink_free(&ts);
    /* bad values name the key */
    const char *bad[] = {"method.deadline=0 s"};
    ck_assert_int_eq(run_with(text, bad, 1, NULL, &diag, NULL), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "--set method.deadline=0 s: expected none or auto or a time") == diag.message,
                  "%s", diag.message);
    const char *typo[] = {"method.deadline=automatic"};
    ck_assert_int_eq(run_with(text, typo, 1, NULL, &diag, NULL), HS_E_INPUT);
}
END_TEST

/* 12 identical clients of 3 edge servers on a ring, the servers' links the bottleneck. */
static const char *const sdfeel_twelve =
    "[run]\nmethod = sdfeel\nrounds = 2\nmode = timing\n"
    "[data]\ndataset = synthetic\nfeatures = 16\nclasses = 4\ntrain_samples = 640\n"
    "[model]\nlayers = 16,32,4\nbatch = 16\n"
    "[topology]\ngraph = ring\n"
    "[agents]\ncount = 12\ncompute = 1 GFLOPS\nbandwidth = 100 MB/s\nlatency = 1 ms\n"
    "[servers]\ncount = 3\ncompute = 10 GFLOPS\nbandwidth = 1 MB/s\nlatency = 1 ms\n";

/* nearest gives the faster server more clients: shorter rounds than round-robin when the
 * servers' links differ; with identical servers the two assignments coincide. */
START_TEST(test_sdfeel_nearest_assignment)
{
    const char *text = sdfeel_twelve;
    TestSink a, b;
    HsDiag diag;
    const char *robin[] = {"servers.assign=round-robin"};
    ck_assert_int_eq(run_with(text, NULL, 0, &a, &diag, NULL), HS_OK);
    ck_assert_int_eq(run_with(text, robin, 1, &b, &diag, NULL), HS_OK);
    ck_assert_str_eq(a.text, b.text);
    test_sink_free(&a);
    test_sink_free(&b);
    const char *spread[] = {"servers.bandwidth=uniform(100 kB/s, 10 MB/s)"};
    const char *spread_robin[] = {"servers.bandwidth=uniform(100 kB/s, 10 MB/s)", "servers.assign=round-robin"};
    ck_assert_int_eq(run_with(text, spread, 1, &a, &diag, NULL), HS_OK);
    ck_assert_int_eq(run_with(text, spread_robin, 2, &b, &diag, NULL), HS_OK);
    ck_assert_msg(a.round_rows[1].t_end < b.round_rows[1].t_end, "%g vs %g", a.round_rows[1].t_end,
                  b.round_rows[1].t_end);
    test_sink_free(&a);
    test_sink_free(&b);
}
END_TEST

/* assign = FILE.assign: a file that spells out round-robin runs as round-robin; one that
 * crowds 10 clients on server 0 makes its shared links the bottleneck; a bad file is an
 * input error at its line, a missing agent at the file; runs.config keeps the path. */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_sdfeel_file_assignment)
{
    const char *text = sdfeel_twelve;
    char dir[] = "/tmp/hetsim-assign-XXXXXX", path[128], set[200];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/clients.assign", dir);
    snprintf(set, sizeof set, "servers.assign=%s", path);
    const char *given[] = {set}, *robin[] = {"servers.assign=round-robin"};
    /* round-robin spelled out, in reverse order, with a comment and a blank line */
    char spelled[512] = "# agent server\n\n";
    for (int i = 11; i >= 0; i--) snprintf(spelled + strlen(spelled), sizeof spelled - strlen(spelled), "%d %d\n", i, i % 3);
    write_file(path, spelled);
    TestSink a, b;
    HsDiag diag;
    Scenario sc;
    ck_assert_msg(run_with(text, given, 1, &a, &diag, &sc) == HS_OK, "%s", diag.message);
    ck_assert_int_eq(run_with(text, robin, 1, &b, &diag, NULL), HS_OK);
    ck_assert_str_eq(a.text, b.text);
    char *config = scenario_config_string(&sc);
    char expected[300];
    snprintf(expected, sizeof expected, "[servers]\ncount = 3\nassign = %s\n", path);
    ck_assert_msg(strstr(config, expected) != NULL, "%s", config);
    free(config);
    test_sink_free(&a);
    /* crowded: server 0 takes clients 0..9 over its 1 MB/s links */
    write_file(path, "0 0\n1 0\n2 0\n3 0\n4 0\n5 0\n6 0\n7 0\n8 0\n9 0\n10 1\n11 2\n");
    ck_assert_int_eq(run_with(text, given, 1, &a, &diag, NULL), HS_OK);
    ck_assert_msg(a.round_rows[1].t_end > 2 * b.round_rows[1].t_end, "%g vs %g", a.round_rows[1].t_end,
                  b.round_rows[1].t_end);
    test_sink_free(&a);
    test_sink_free(&b);
    /* errors: the file's line and what is wrong */
    const char *bad[][2] = {{"0 0\n1 x\n", ":2: expected an agent and its server 'I S'"},
                            {"0 0\n1 1 1\n", ":2: expected an agent and its server 'I S'"},
                            {"12 0\n", ":1: agent index 12 is outside 0..11"},
                            {"0 3\n", ":1: server index 3 is outside 0..2"},
                            {"0 -1\n", ":1: server index -1 is outside 0..2"},
                            {"0 0\n\n0 1\n", ":3: agent 0 is assigned twice (first at line 1)"},
                            {"0 0\n1 0\n", ": agent 2 has no line (every agent needs its server)"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        write_file(path, bad[k][0]);
        ck_assert_int_eq(run_with(text, given, 1, NULL, &diag, NULL), HS_E_INPUT);
        char want[300];
        /* at the key, then the file's line (issue 28, class 8) */
        snprintf(want, sizeof want, "--set servers.assign=%s: %s%s", path, path, bad[k][1]);
        ck_assert_msg(strstr(diag.message, want) == diag.message, "%s", diag.message);
    }
    /* not a FILE.assign, or no such file: at the key */
    const char *other[] = {"servers.assign=closest"};
    ck_assert_int_eq(run_with(text, other, 1, NULL, &diag, NULL), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "is not one of nearest|round-robin|FILE.assign") != NULL, "%s", diag.message);
    unlink(path);
    ck_assert_int_eq(run_with(text, given, 1, NULL, &diag, NULL), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, ": not found") != NULL, "%s", diag.message);
    rmdir(dir);
}
END_TEST

/* The server pauses while its availability trace (group `server`) says it is offline:
 * the run is longer by about the outage; a server gone for good fails the run. */
START_TEST(test_server_availability)
{
    char path[] = "/tmp/hetsim-server-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("agent,time,value\nserver,0,1\nserver,0.005 s,0\nserver,0.5 s,1\n", f);
    fclose(f);
    char set[200];
    snprintf(set, sizeof set, "server.availability=trace(%s)", path);
    const char *offline[] = {set, "server.bandwidth=1 GB/s"}, *online[] = {"server.bandwidth=1 GB/s"};
    TestSink a, b;
    HsDiag diag;
    ck_assert_int_eq(run_with(base, offline, 2, &a, &diag, NULL), HS_OK);
    ck_assert_int_eq(run_with(base, online, 1, &b, &diag, NULL), HS_OK);
    /* nothing moves through the server for most of the half-second outage */
    ck_assert_msg(a.round_rows[2].t_end > b.round_rows[2].t_end + 0.4 && b.round_rows[2].t_end < 0.5, "%g vs %g",
                  a.round_rows[2].t_end, b.round_rows[2].t_end);
    test_sink_free(&a);
    test_sink_free(&b);
    f = fopen(path, "w");
    fputs("agent,time,value\nserver,0,1\nserver,0.005 s,0\n", f);
    fclose(f);
    const char *gone[] = {set, "server.bandwidth=1 GB/s", "run.method=asgd"};
    ck_assert_int_eq(run_with(base, gone, 3, &a, &diag, NULL), HS_E_INPUT);
    ck_assert_msg(strstr(diag.message, "the server (node 8) is offline for good") != NULL, "%s", diag.message);
    test_sink_free(&a);
    unlink(path);
}
END_TEST

static Suite *server_suite(void)
{
    Suite *s = suite_create("server");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_server_section_rules);
    tcase_add_test(tc, test_fedavg_round_is_the_closed_form);
    tcase_add_test(tc, test_fedavg_sampling_overcommit_deadline);
    tcase_add_test(tc, test_asynchronous_family_times_alike);
    tcase_add_test(tc, test_server_availability);
    tcase_add_test(tc, test_edge_server_rules);
    tcase_add_test(tc, test_sdfeel_round_is_the_closed_form);
    tcase_add_test(tc, test_sdfeel_nearest_assignment);
    tcase_add_test(tc, test_sdfeel_file_assignment);
    tcase_add_test(tc, test_sdfeel_async_is_the_closed_form);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(server_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? 0 : 1;
}
