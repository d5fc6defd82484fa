/* check_data_keys.c — the [data] keys of the real data sets, through the scenario: a
 * scenario naming CIFAR-10/100 binaries, a LEAF JSON folder or NumPy .npy files (tiny ones
 * the tests write) resolves to the files' shape, classes and sizes (in timing mode too),
 * writes them back to runs.config and reads that back the same; the natural partition
 * gives each agent its writers' samples; augmentation draws from each agent's stream, so
 * the rows are the same for any thread count and differ from a run without it; and every
 * misuse is refused at the key that caused it. [agents] profile gives each agent its
 * row's compute, links and latency. The readers' own values and refusals are
 * tests/check_readers.c; the command's exit status and empty database tests/cli/data.sh. */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */

#include "models/dataset.h"
#include "sim/run.h"
#include "sim/world/world.h"
#include "tests/test_scenario.h"
#include "tests/test_sink.h"

#include <check.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ scratch folders */

static char folder[64];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void folder_make(void)
{
    strcpy(folder, "/tmp/hetsim-data-keys-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(folder));
}

static void folder_remove(void) { nftw(folder, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

static const char *in_folder(const char *name)
{
    static char buffers[4][256];
    static int next;
    char *out = buffers[next++ % 4];
    snprintf(out, sizeof buffers[0], "%s/%s", folder, name);
    return out;
}

static void write_bytes(const char *name, const void *data, size_t n)
{
    FILE *f = fopen(in_folder(name), "wb");
    ck_assert_ptr_nonnull(f);
    if (n) ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* n CIFAR records with label_bytes label bytes each: labels (file + r) mod 10 (and
 * (file + r) mod 100 for the second byte), pixels that differ between records. */
static void write_cifar(const char *name, int file, int n, int label_bytes)
{
    size_t record = (size_t)label_bytes + 3072;
    uint8_t *bytes = malloc(record * (size_t)n + 1);
    ck_assert_ptr_nonnull(bytes);
    for (int r = 0; r < n; r++) {
        uint8_t *rec = bytes + record * (size_t)r;
        rec[0] = (uint8_t)((file + r) % (label_bytes == 1 ? 10 : 20));
        if (label_bytes == 2) rec[1] = (uint8_t)((file + r) % 100);
        for (int j = 0; j < 3072; j++) rec[label_bytes + j] = (uint8_t)((file * 37 + r * 11 + j * 3) % 256);
    }
    write_bytes(name, bytes, record * (size_t)n);
    free(bytes);
}

/* CIFAR-10: 2 + 3 + 1 + 2 + 2 training records, 3 test records */
static void write_cifar10(void)
{
    static const int counts[5] = {2, 3, 1, 2, 2};
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "data_batch_%d.bin", i + 1);
        write_cifar(name, i, counts[i], 1);
    }
    write_cifar("test_batch.bin", 5, 3, 1);
}

/* LEAF: three writers w0, w1, w2 with 2, 1 and 3 samples of 4 grey values (a 2x2 image),
 * labels 0..4, in two training files; one test sample each. */
static void leaf_user(FILE *f, const char *name, int s0, int n, int last)
{
    fprintf(f, "\"%s\": {\"x\": [", name);
    for (int s = s0; s < s0 + n; s++) {
        fprintf(f, "%s[", s > s0 ? ", " : "");
        for (int j = 0; j < 4; j++) fprintf(f, "%s%.17g", j ? ", " : "", ((s * 13 + j * 7) % 256) / 255.0);
        fprintf(f, "]");
    }
    fprintf(f, "], \"y\": [");
    for (int s = s0; s < s0 + n; s++) fprintf(f, "%s%d", s > s0 ? ", " : "", s % 5);
    fprintf(f, "]}%s", last ? "" : ", ");
}

static void write_leaf(void)
{
    ck_assert_int_eq(mkdir(in_folder("train"), 0700), 0);
    ck_assert_int_eq(mkdir(in_folder("test"), 0700), 0);
    FILE *f = fopen(in_folder("train/a.json"), "w");
    fprintf(f, "{\"users\": [\"w0\", \"w1\"], \"num_samples\": [2, 1], \"user_data\": {");
    leaf_user(f, "w0", 0, 2, 0);
    leaf_user(f, "w1", 2, 1, 1);
    fprintf(f, "}}");
    fclose(f);
    f = fopen(in_folder("train/b.json"), "w");
    fprintf(f, "{\"users\": [\"w2\"], \"num_samples\": [3], \"user_data\": {");
    leaf_user(f, "w2", 3, 3, 1);
    fprintf(f, "}}");
    fclose(f);
    f = fopen(in_folder("test/t.json"), "w");
    fprintf(f, "{\"users\": [\"w0\", \"w1\", \"w2\"], \"num_samples\": [1, 1, 1], \"user_data\": {");
    leaf_user(f, "w0", 6, 1, 0);
    leaf_user(f, "w1", 7, 1, 0);
    leaf_user(f, "w2", 8, 1, 1);
    fprintf(f, "}}");
    fclose(f);
}

/* A .npy file (format 1.0) with the given dict and payload. */
static void write_npy(const char *name, const char *dict, const void *payload, size_t n)
{
    uint8_t buf[4096];
    size_t len = strlen(dict), total = 10 + len + 1, pad = (64 - total % 64) % 64;
    ck_assert_uint_lt(total + pad + n, sizeof buf);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)((len + pad + 1) & 0xff), buf[9] = (uint8_t)((len + pad + 1) >> 8);
    memcpy(buf + 10, dict, len);
    memset(buf + 10 + len, ' ', pad);
    buf[10 + len + pad] = '\n';
    memcpy(buf + total + pad, payload, n);
    write_bytes(name, buf, total + pad + n);
}

/* npy: 8 training and 4 test samples of 6 float features, labels 0..2 */
static void write_npy_set(void)
{
    float x[8 * 6];
    int64_t y[8];
    for (int i = 0; i < 8 * 6; i++) x[i] = (float)(i % 7) * 0.25f - 0.5f;
    for (int i = 0; i < 8; i++) y[i] = i % 3;
    write_npy("train_x.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 6), }", x, sizeof x);
    write_npy("train_y.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (8,), }", y, sizeof y);
    write_npy("test_x.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 6), }", x, 4 * 6 * sizeof *x);
    write_npy("test_y.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }", y, 4 * sizeof *y);
}

/* ------------------------------------------------------------------ scenarios */

static char scenario_text[2048];

/* A scenario on the folder's files: dataset, then [model] and [agents] lines. */
static const char *scenario(const char *dataset, const char *model, const char *agents)
{
    snprintf(scenario_text, sizeof scenario_text,
             "[run]\nmethod = localsgd\nrounds = 2\nseed = 5\n"
             "[data]\ndataset = %s\npath = %s\n"
             "[model]\n%s\n"
             "[topology]\ngraph = ring\n"
             "[agents]\n%s\ncompute = lognormal(1 GFLOPS, 0.5)\nbandwidth = 10 MB/s\nlatency = 1 ms\n",
             dataset, folder, model, agents);
    return scenario_text;
}

#define CNN "arch = cnn\nchannels = 4,4\nhidden = 8\nbatch = 4\nlr = 0.05"

static void expect_refused(const char *text, const char *const *set, int n, const char *a, const char *b)
{
    Scenario sc;
    HsDiag diag;
    int status = test_resolve(text, set, n, &sc, &diag);
    ck_assert_msg(status == HS_E_INPUT, "status %d, expected bad input: %s", status, diag.message);
    ck_assert_msg(strstr(diag.message, a) != NULL, "'%s' not in: %s", a, diag.message);
    if (b) ck_assert_msg(strstr(diag.message, b) != NULL, "'%s' not in: %s", b, diag.message);
}

/* runs.config read back resolves to the same runs.config */
static void check_config_round_trip(const Scenario *sc)
{
    char *config = scenario_config_string(sc);
    ck_assert_ptr_nonnull(config);
    Scenario again;
    HsDiag diag;
    int status = test_resolve(config, NULL, 0, &again, &diag);
    ck_assert_msg(status == HS_OK, "%s\n%s", diag.message, config);
    char *config_again = scenario_config_string(&again);
    ck_assert_str_eq(config, config_again);
    free(config);
    free(config_again);
}

START_TEST(test_cifar_shape_sizes_and_config)
{
    folder_make();
    write_cifar10();
    Scenario sc;
    HsDiag diag;
    const char *set[] = {"data.normalize=train", "data.augment=crop-flip"};
    int status = test_resolve(scenario("cifar10", CNN, "count = 4"), set, 2, &sc, &diag);
    ck_assert_msg(status == HS_OK, "%s", diag.message);
    ck_assert_int_eq(sc.model.in_channels, 3);
    ck_assert_int_eq(sc.model.in_height, 32);
    ck_assert_int_eq(sc.model.in_width, 32);
    ck_assert_int_eq(sc.model.classes, 10);
    ck_assert_int_eq(sc.dataset_train_size, 10); /* the files' records, not CIFAR's 50,000 */
    ck_assert_int_eq(sc.dataset_test_size, 3);
    ck_assert_int_eq(sc.data.crop_padding, 4);
    ck_assert_int_eq(sc.data.flip, 1);
    ck_assert_int_eq(sc.data.normalize, DATA_NORMALIZE_TRAIN);
    char *config = scenario_config_string(&sc);
    ck_assert_ptr_nonnull(strstr(config, "dataset = cifar10\npath = "));
    ck_assert_ptr_nonnull(strstr(config, "normalize = train\naugment = crop-flip\n"));
    free(config);
    check_config_round_trip(&sc);
    /* the other augmentations, and none written when none */
    const char *crop[] = {"data.augment=crop"}, *flip[] = {"data.augment=flip"};
    ck_assert_int_eq(test_resolve(scenario("cifar10", CNN, "count = 4"), crop, 1, &sc, &diag), HS_OK);
    ck_assert(sc.data.crop_padding == 4 && sc.data.flip == 0);
    check_config_round_trip(&sc);
    ck_assert_int_eq(test_resolve(scenario("cifar10", CNN, "count = 4"), flip, 1, &sc, &diag), HS_OK);
    ck_assert(sc.data.crop_padding == 0 && sc.data.flip == 1);
    check_config_round_trip(&sc);
    ck_assert_int_eq(test_resolve(scenario("cifar10", CNN, "count = 4"), NULL, 0, &sc, &diag), HS_OK);
    config = scenario_config_string(&sc);
    ck_assert_ptr_null(strstr(config, "normalize"));
    ck_assert_ptr_null(strstr(config, "augment"));
    ck_assert_ptr_null(strstr(config, "label"));
    free(config);
    /* test_samples within the files' test set */
    const char *two[] = {"data.test_samples=2"}, *four[] = {"data.test_samples=4"};
    ck_assert_int_eq(test_resolve(scenario("cifar10", CNN, "count = 4"), two, 1, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.dataset_test_size, 2);
    expect_refused(scenario("cifar10", CNN, "count = 4"), four, 1, "--set data.test_samples=4",
                   "more than the 3 test samples");
    /* more agents than records */
    expect_refused(scenario("cifar10", CNN, "count = 11"), NULL, 0, "t.ini:17: [agents] count",
                   "more agents than training samples");
    folder_remove();
}
END_TEST

START_TEST(test_cifar100_labels)
{
    folder_make();
    write_cifar("train.bin", 0, 6, 2);
    write_cifar("test.bin", 1, 2, 2);
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(scenario("cifar100", CNN, "count = 2"), NULL, 0, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.model.classes, 100);
    ck_assert_int_eq(sc.dataset_train_size, 6);
    check_config_round_trip(&sc);
    const char *coarse[] = {"data.label=coarse"};
    ck_assert_int_eq(test_resolve(scenario("cifar100", CNN, "count = 2"), coarse, 1, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.model.classes, 20);
    char *config = scenario_config_string(&sc);
    ck_assert_ptr_nonnull(strstr(config, "label = coarse\n"));
    free(config);
    check_config_round_trip(&sc);
    /* a CIFAR-100 file read as CIFAR-10 is not a whole number of records */
    const char *wrong[] = {"data.dataset=cifar10"};
    write_cifar("data_batch_1.bin", 0, 2, 2);
    expect_refused(scenario("cifar100", CNN, "count = 2"), wrong, 1, "t.ini:7: [data] path: ",
                   "data_batch_1.bin: truncated record 2 at byte offset 6146");
    folder_remove();
}
END_TEST

START_TEST(test_cifar_without_path)
{
    Scenario sc;
    HsDiag diag;
    const char *text = "[run]\nmethod = comdml\nrounds = 1\nmode = timing\n"
                       "[data]\ndataset = cifar10\n"
                       "[model]\narch = resnet\ndepth = 20\nbatch = 32\n"
                       "[agents]\ncount = 4\ncompute = 1 GFLOPS\nbandwidth = 10 MB/s\n";
    /* timing mode: CIFAR-10's shape and sizes, no file */
    int status = test_resolve(text, NULL, 0, &sc, &diag);
    ck_assert_msg(status == HS_OK, "%s", diag.message);
    ck_assert_int_eq(sc.model.in_channels, 3);
    ck_assert_int_eq(sc.model.classes, 10);
    ck_assert_int_eq(sc.dataset_train_size, 50000);
    ck_assert_int_eq(sc.dataset_test_size, 10000);
    char *config = scenario_config_string(&sc);
    ck_assert_ptr_null(strstr(config, "path"));
    free(config);
    check_config_round_trip(&sc);
    const char *coarse[] = {"data.dataset=cifar100", "data.label=coarse"};
    ck_assert_int_eq(test_resolve(text, coarse, 2, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.model.classes, 20);
    /* training needs the files; leaf and npy always do */
    const char *train[] = {"run.mode=train"};
    expect_refused(text, train, 1, "t.ini:6: [data] dataset", "needs [data] path");
    const char *leaf[] = {"data.dataset=leaf"}, *npy[] = {"data.dataset=npy"};
    expect_refused(text, leaf, 1, "--set data.dataset=leaf", "dataset = leaf needs [data] path");
    expect_refused(text, npy, 1, "--set data.dataset=npy", "dataset = npy needs [data] path");
    /* a folder that is not there, when named */
    const char *missing[] = {"data.path=/nonexistent/cifar"};
    expect_refused(text, missing, 1, "--set data.path=/nonexistent/cifar", "not found");
}
END_TEST

START_TEST(test_cifar_malformed_at_path)
{
    folder_make();
    write_cifar10();
    const char *text = scenario("cifar10", CNN, "count = 2");
    /* truncated record */
    FILE *f = fopen(in_folder("data_batch_4.bin"), "ab");
    fputs("abc", f);
    fclose(f);
    expect_refused(text, NULL, 0, "t.ini:7: [data] path: ", "data_batch_4.bin: truncated record 2 at byte offset 6146");
    /* missing file: bad input, since the user named the folder */
    write_cifar("data_batch_4.bin", 3, 2, 1);
    ck_assert_int_eq(remove(in_folder("test_batch.bin")), 0);
    expect_refused(text, NULL, 0, "t.ini:7: [data] path: ", "test_batch.bin: not found");
    /* a label out of range: the whole read before the database (dataset_check) */
    write_cifar("test_batch.bin", 5, 3, 1);
    uint8_t record[3073] = {10};
    write_bytes("data_batch_2.bin", record, sizeof record);
    Scenario sc;
    HsDiag diag;
    ck_assert_int_eq(test_resolve(text, NULL, 0, &sc, &diag), HS_OK);
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_check(&sc.data, &diag), HS_E_INPUT);
    ck_assert_ptr_nonnull(strstr(diag.message, "data_batch_2.bin: record 0 (byte offset 0): label 10 is not a class 0..9"));
    folder_remove();
}
END_TEST

/* The rows of a run of text with set, threads as given (SCENARIO_THREADS_EAGER: the
 * reference order). */
static void run_rows(const char *text, const char *const *set, int n, int threads, TestSink *ts)
{
    Scenario sc;
    HsDiag diag;
    int status = test_resolve(text, set, n, &sc, &diag);
    ck_assert_msg(status == HS_OK, "%s", diag.message);
    sc.threads = threads;
    RunOutcome out;
    status = sim_run(&sc, test_sink_init(ts), &diag, &out);
    ck_assert_msg(status == HS_OK, "%s", diag.message);
    ck_assert_int_gt(ts->metrics, 0);
}

static int same_rows(const TestSink *a, const TestSink *b)
{
    return a->len == b->len && memcmp(a->text, b->text, a->len) == 0;
}

START_TEST(test_augment_same_rows_for_any_threads)
{
    folder_make();
    write_cifar10();
    const char *text = scenario("cifar10", CNN, "count = 3");
    const char *augment[] = {"data.augment=crop-flip", "data.normalize=train"};
    TestSink reference, ts, plain;
    run_rows(text, augment, 2, SCENARIO_THREADS_EAGER, &reference);
    for (int threads = 1; threads <= 3; threads++) {
        run_rows(text, augment, 2, threads, &ts);
        ck_assert_msg(same_rows(&ts, &reference), "rows with %d threads differ from the eager order", threads);
        test_sink_free(&ts);
    }
    /* the augmentation changes what is trained on; normalisation alone does not draw */
    run_rows(text, augment + 1, 1, 2, &plain);
    ck_assert_msg(!same_rows(&plain, &reference), "crop-flip trained on the same images as none");
    test_sink_free(&plain);
    /* another seed, other crops */
    const char *seed[] = {"data.augment=crop-flip", "data.normalize=train", "run.seed=6"};
    run_rows(text, seed, 3, 2, &ts);
    ck_assert(!same_rows(&ts, &reference));
    test_sink_free(&ts);
    test_sink_free(&reference);
    /* augmentation needs images */
    const char *flat[] = {"data.dataset=synthetic", "model.arch=mlp", "data.augment=flip"};
    expect_refused(text, flat, 3, "--set data.augment=flip", "augments images, but the samples are 1x1");
    folder_remove();
}
END_TEST

START_TEST(test_leaf_natural_partition)
{
    folder_make();
    write_leaf();
    const char *mlp = "layers = 4,8,5\nbatch = 2";
    const char *natural[] = {"data.partition=natural"};
    Scenario sc;
    HsDiag diag;
    int status = test_resolve(scenario("leaf", mlp, "count = 3"), natural, 1, &sc, &diag);
    ck_assert_msg(status == HS_OK, "%s", diag.message);
    ck_assert_int_eq(sc.dataset_writers, 3);
    ck_assert_int_eq(sc.dataset_train_size, 6);
    ck_assert_int_eq(sc.model.classes, 5);
    ck_assert_int_eq(sc.model.in_channels * sc.model.in_height * sc.model.in_width, 4);
    check_config_round_trip(&sc);
    /* one writer an agent: 2, 1, 3 samples, in timing mode too */
    for (int timing = 0; timing < 2; timing++) {
        sc.mode = timing ? RUN_MODE_TIMING : RUN_MODE_TRAIN;
        World world;
        ck_assert_int_eq(world_build(&sc, &world, &diag), HS_OK);
        ck_assert_int_eq(world.agents[0].samples, 2);
        ck_assert_int_eq(world.agents[1].samples, 1);
        ck_assert_int_eq(world.agents[2].samples, 3);
        world_free(&world);
    }
    /* two agents: writers 0 and 1 + 2 */
    ck_assert_int_eq(test_resolve(scenario("leaf", mlp, "count = 2"), natural, 1, &sc, &diag), HS_OK);
    World world;
    ck_assert_int_eq(world_build(&sc, &world, &diag), HS_OK);
    ck_assert_int_eq(world.agents[0].samples, 2);
    ck_assert_int_eq(world.agents[1].samples, 4);
    world_free(&world);
    /* the run trains on them */
    TestSink ts;
    run_rows(scenario("leaf", mlp, "count = 3"), natural, 1, 2, &ts);
    test_sink_free(&ts);
    /* more agents than writers; samples given; natural without writers */
    expect_refused(scenario("leaf", mlp, "count = 4"), natural, 1, "t.ini:14: [agents] count",
                   "the data set has 3 writers (at most 3 agents)");
    expect_refused(scenario("leaf", mlp, "count = 3\nsamples = 2"), natural, 1, "t.ini:15: [agents] samples",
                   "each agent holds its writers' samples");
    const char *no_writers[] = {"data.partition=natural", "data.dataset=synthetic", "model.layers=32,8,10"};
    expect_refused(scenario("leaf", mlp, "count = 3"), no_writers, 3, "--set data.partition=natural",
                   "it needs dataset = leaf");
    /* leaf's classes may be given, at least the labels' */
    const char *classes[] = {"data.classes=7", "model.layers=4,8,7"}, *few[] = {"data.classes=3"};
    ck_assert_int_eq(test_resolve(scenario("leaf", mlp, "count = 3"), classes, 2, &sc, &diag), HS_OK);
    ck_assert_int_eq(sc.model.classes, 7);
    expect_refused(scenario("leaf", mlp, "count = 3"), few, 1, "t.ini:7: [data] path: ", "3 is not a class 0..2");
    /* a JSON that is not LEAF's layout, at the path */
    FILE *f = fopen(in_folder("train/b.json"), "w");
    fputs("{\"users\": [\"w2\"], \"num_samples\": [3]}", f);
    fclose(f);
    expect_refused(scenario("leaf", mlp, "count = 3"), NULL, 0, "t.ini:7: [data] path: ", "b.json");
    folder_remove();
}
END_TEST

START_TEST(test_npy_shape_from_headers)
{
    folder_make();
    write_npy_set();
    const char *mlp = "layers = 6,8,3\nbatch = 2";
    Scenario sc;
    HsDiag diag;
    int status = test_resolve(scenario("npy", mlp, "count = 2"), NULL, 0, &sc, &diag);
    ck_assert_msg(status == HS_OK, "%s", diag.message);
    ck_assert_int_eq(sc.model.in_channels * sc.model.in_height * sc.model.in_width, 6);
    ck_assert_int_eq(sc.model.classes, 3);
    ck_assert_int_eq(sc.dataset_train_size, 8);
    ck_assert_int_eq(sc.dataset_test_size, 4);
    check_config_round_trip(&sc);
    TestSink ts;
    run_rows(scenario("npy", mlp, "count = 2"), NULL, 0, 2, &ts);
    test_sink_free(&ts);
    /* the model must fit the files; a cnn needs images; a Fortran-order file is refused */
    const char *wide[] = {"model.layers=7,8,3"}, *cnn[] = {"model.arch=cnn"};
    expect_refused(scenario("npy", mlp, "count = 2"), wide, 1, "--set model.layers=7,8,3", "input size 6");
    expect_refused(scenario("npy", mlp, "count = 2"), cnn, 1, "--set model.arch=cnn", "6 flat features");
    float x[8 * 6] = {0};
    write_npy("train_x.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (8, 6), }", x, sizeof x);
    expect_refused(scenario("npy", mlp, "count = 2"), NULL, 0, "t.ini:7: [data] path: ", "train_x.npy");
    write_npy("train_x.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (8, 3), }", x, sizeof x);
    expect_refused(scenario("npy", mlp, "count = 2"), NULL, 0, "t.ini:7: [data] path: ", "'<f8'");
    folder_remove();
}
END_TEST

/* ------------------------------------------------------------------ [agents] profile */

static const char *profile_scenario(const char *agents)
{
    snprintf(scenario_text, sizeof scenario_text,
             "[run]\nmethod = localsgd\nrounds = 2\nmode = timing\n"
             "[data]\ndataset = synthetic\n"
             "[agents]\n%s\n"
             "[agents.slow]\ncount = 1\njitter = 0.5\n",
             agents);
    return scenario_text;
}

START_TEST(test_profile_gives_each_agent_its_row)
{
    folder_make();
    const char *csv = "# measured\nsource,latency,bandwidth,compute\nx,20 ms,10 Mbit/s,2 GFLOPS\ny,0,1e6,1e9\n"
                      "z,0.5,2e6,5e8\nunused,1,1,1\n";
    write_bytes("p.csv", csv, strlen(csv));
    char agents[400];
    snprintf(agents, sizeof agents, "count = 3\nprofile = %s", in_folder("p.csv"));
    Scenario sc;
    HsDiag diag;
    int status = test_resolve(profile_scenario(agents), NULL, 0, &sc, &diag);
    ck_assert_msg(status == HS_OK, "%s", diag.message);
    ck_assert_int_eq(sc.profile_latency, 1);
    World world;
    ck_assert_int_eq(world_build(&sc, &world, &diag), HS_OK);
    const double compute[3] = {2e9, 1e9, 5e8}, link[3] = {1.25e6, 1e6, 2e6}, latency[3] = {0.02, 0, 0.5};
    for (int i = 0; i < 3; i++) {
        ck_assert(world.agents[i].compute == compute[i]);
        ck_assert(world.agents[i].uplink == link[i] && world.agents[i].downlink == link[i]);
        ck_assert(world.agents[i].latency == latency[i]);
    }
    ck_assert_int_eq(world.agents[2].group, 1); /* the group keeps its own jitter */
    world_free(&world);
    char *config = scenario_config_string(&sc);
    ck_assert_ptr_nonnull(strstr(config, "profile = "));
    ck_assert_ptr_null(strstr(config, "compute"));
    ck_assert_ptr_null(strstr(config, "bandwidth"));
    ck_assert_ptr_null(strstr(config, "latency"));
    free(config);
    check_config_round_trip(&sc);
    /* without a latency column the key's draw stays */
    const char *no_latency = "compute,bandwidth\n1e9,1e6\n1e9,1e6\n1e9,1e6\n";
    write_bytes("p.csv", no_latency, strlen(no_latency));
    snprintf(agents, sizeof agents, "count = 3\nprofile = %s\nlatency = 7 ms", in_folder("p.csv"));
    ck_assert_int_eq(test_resolve(profile_scenario(agents), NULL, 0, &sc, &diag), HS_OK);
    ck_assert_int_eq(world_build(&sc, &world, &diag), HS_OK);
    ck_assert(world.agents[1].latency == 0.007 && world.agents[1].compute == 1e9);
    world_free(&world);
    check_config_round_trip(&sc);
    /* what the profile gives may not be written beside it */
    const char *compute_too[] = {"agents.compute=1 GFLOPS"}, *bandwidth_too[] = {"agents.slow.bandwidth=1 MB/s"};
    expect_refused(profile_scenario(agents), compute_too, 1, "--set agents.compute=1 GFLOPS", "comes from [agents] profile");
    expect_refused(profile_scenario(agents), bandwidth_too, 1, "--set agents.slow.bandwidth=1 MB/s",
                   "comes from [agents] profile");
    write_bytes("p.csv", csv, strlen(csv));
    expect_refused(profile_scenario(agents), NULL, 0, "t.ini:10: [agents] latency", "comes from [agents] profile");
    /* too few rows; a bad value at its line; no file; without a profile compute is required */
    snprintf(agents, sizeof agents, "count = 5\nprofile = %s", in_folder("p.csv"));
    expect_refused(profile_scenario(agents), NULL, 0, "t.ini:9: [agents] profile", "4 rows for the 5 agents");
    const char *zero = "compute,bandwidth\n1e9,1e6\n0,1e6\n";
    write_bytes("p.csv", zero, strlen(zero));
    expect_refused(profile_scenario(agents), NULL, 0, "t.ini:9: [agents] profile", "p.csv:3: compute '0' must be finite and > 0");
    remove(in_folder("p.csv"));
    expect_refused(profile_scenario(agents), NULL, 0, "t.ini:9: [agents] profile", "p.csv: not found");
    expect_refused(profile_scenario("count = 3\nbandwidth = 1 MB/s"), NULL, 0, "missing", "compute");
    folder_remove();
}
END_TEST

static Suite *data_keys_suite(void)
{
    Suite *s = suite_create("data_keys");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_cifar_shape_sizes_and_config);
    tcase_add_test(tc, test_cifar100_labels);
    tcase_add_test(tc, test_cifar_without_path);
    tcase_add_test(tc, test_cifar_malformed_at_path);
    tcase_add_test(tc, test_augment_same_rows_for_any_threads);
    tcase_add_test(tc, test_leaf_natural_partition);
    tcase_add_test(tc, test_npy_shape_from_headers);
    tcase_add_test(tc, test_profile_gives_each_agent_its_row);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* no decoded-data cache: the folders are temporary */
    setenv("HETSIM_DATA_CACHE", "off", 1);
    SRunner *sr = srunner_create(data_keys_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
