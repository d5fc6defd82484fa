/* check_readers.c — the readers of real data sets and device profiles on tiny files the
 * tests write themselves: CIFAR-10 and CIFAR-100 records, LEAF JSON (three writers in two
 * training files), NumPy .npy pairs, the device profile CSV and the bounded file reader
 * underneath them all. Every value read is checked; then the natural partition, the
 * normalisation, the augmentation's determinism, the decoded-data cache (hit, stale,
 * corrupt, unwritable) and every malformed case the readers refuse. */
#define _XOPEN_SOURCE 700 /* nftw, mkfifo */

#include "models/dataset.h"
#include "models/dataset_internal.h"
#include "models/partition.h"
#include "base/device_profile.h"
#include "base/hs_error.h"
#include "base/input_file.h"

#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* ------------------------------------------------------------------ scratch folders */

typedef struct Dir {
    char path[64];
} Dir;

static void dir_make(Dir *d)
{
    strcpy(d->path, "/tmp/hetsim-readers-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d->path));
}

static int dir_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void dir_remove(Dir *d) { nftw(d->path, dir_remove_one, 16, FTW_DEPTH | FTW_PHYS); }

/* dir/name into a rotating static buffer (four live at once). */
static const char *in_dir(const Dir *d, const char *name)
{
    static char buffers[4][256];
    static int next;
    char *out = buffers[next++ % 4];
    snprintf(out, sizeof buffers[0], "%s/%s", d->path, name);
    return out;
}

static void sub_dir(const Dir *d, const char *name) { ck_assert_int_eq(mkdir(in_dir(d, name), 0700), 0); }

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    if (n) ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static void write_text(const char *path, const char *text) { write_bytes(path, text, strlen(text)); }

/* Asserts that status is want and the message holds every one of the texts. */
static void expect_error(int status, int want, const HsDiag *diag, const char *a, const char *b)
{
    ck_assert_msg(status == want, "status %d, expected %d: %s", status, want, diag->message);
    ck_assert_msg(strstr(diag->message, a) != NULL, "'%s' not in: %s", a, diag->message);
    if (b) ck_assert_msg(strstr(diag->message, b) != NULL, "'%s' not in: %s", b, diag->message);
}

/* ------------------------------------------------------------------ the bounded reader */

START_TEST(test_input_file_types_and_limits)
{
    Dir d;
    dir_make(&d);
    HsDiag diag;
    InputFile f;
    char *data;
    size_t size;
    write_text(in_dir(&d, "a.txt"), "hello");
    hs_diag_clear(&diag);
    ck_assert_int_eq(input_file_read_all(in_dir(&d, "a.txt"), 100, HS_E_INPUT, &data, &size, &diag), HS_OK);
    ck_assert_uint_eq(size, 5);
    ck_assert_str_eq(data, "hello");
    free(data);
    /* the limit */
    hs_diag_clear(&diag);
    expect_error(input_file_read_all(in_dir(&d, "a.txt"), 4, HS_E_INPUT, &data, &size, &diag), HS_E_INPUT, &diag,
                 "is 5 bytes, more than the limit of 4", "a.txt");
    /* missing: the caller's status */
    hs_diag_clear(&diag);
    expect_error(input_file_open(&f, in_dir(&d, "none"), 100, HS_E_MISSING, &diag), HS_E_MISSING, &diag, "not found",
                 NULL);
    hs_diag_clear(&diag);
    expect_error(input_file_open(&f, in_dir(&d, "none"), 100, HS_E_INPUT, &diag), HS_E_INPUT, &diag, "not found",
                 NULL);
    /* a directory, a FIFO (no writer: it must not block), a character device */
    hs_diag_clear(&diag);
    expect_error(input_file_open(&f, d.path, 100, HS_E_INPUT, &diag), HS_E_INPUT, &diag, "directory", NULL);
    ck_assert_int_eq(mkfifo(in_dir(&d, "fifo"), 0600), 0);
    hs_diag_clear(&diag);
    expect_error(input_file_open(&f, in_dir(&d, "fifo"), 100, HS_E_INPUT, &diag), HS_E_INPUT, &diag, "a FIFO",
                 "not a regular file");
    hs_diag_clear(&diag);
    expect_error(input_file_read_all("/dev/zero", 1u << 30, HS_E_INPUT, &data, &size, &diag), HS_E_INPUT, &diag,
                 "/dev/zero: is a character device", NULL);
    ck_assert_int_eq(f.fd, -1);
    /* read_exact names the offset where the data ran out */
    hs_diag_clear(&diag);
    ck_assert_int_eq(input_file_open(&f, in_dir(&d, "a.txt"), 100, HS_E_INPUT, &diag), HS_OK);
    char buf[8];
    ck_assert_int_eq(input_file_read_exact(&f, buf, 3, "the head", &diag), HS_OK);
    expect_error(input_file_read_exact(&f, buf, 4, "record 7", &diag), HS_E_INPUT, &diag,
                 "truncated at byte 3: record 7 needs 4 bytes, 2 left", NULL);
    input_file_close(&f);
    input_file_close(&f); /* twice is harmless */
    dir_remove(&d);
}
END_TEST

/* ------------------------------------------------------------------ CIFAR */

static uint8_t cifar_pixel(int file, int record, int j) { return (uint8_t)((file * 37 + record * 11 + j * 3) % 256); }

/* One CIFAR file of n records: label bytes then pixels; labels[r] (label_bytes each). */
static void write_cifar_file(const char *path, int file, int n, int label_bytes, const uint8_t *labels)
{
    size_t record = (size_t)label_bytes + 3072;
    uint8_t *data = malloc(record * (size_t)n + 1);
    for (int r = 0; r < n; r++) {
        memcpy(data + r * record, labels + r * label_bytes, (size_t)label_bytes);
        for (int j = 0; j < 3072; j++) data[r * record + label_bytes + j] = cifar_pixel(file, r, j);
    }
    write_bytes(path, data, record * (size_t)n);
    free(data);
}

static const int cifar10_counts[6] = {2, 3, 1, 2, 2, 3}; /* five training files, then the test file */

static void write_cifar10(const char *folder)
{
    static const char *const names[6] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                         "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"};
    for (int f = 0; f < 6; f++) {
        uint8_t labels[8];
        for (int r = 0; r < cifar10_counts[f]; r++) labels[r] = (uint8_t)((f + 3 * r) % 10);
        char path[256];
        snprintf(path, sizeof path, "%s/%s", folder, names[f]);
        write_cifar_file(path, f, cifar10_counts[f], 1, labels);
    }
}

/* Checks every value and label of a CIFAR-10 set written by write_cifar10. */
static void check_cifar10_values(const Dataset *ds)
{
    ck_assert_int_eq(ds->n_train, 10);
    ck_assert_int_eq(ds->n_test, 3);
    ck_assert_int_eq(ds->channels, 3);
    ck_assert_int_eq(ds->height, 32);
    ck_assert_int_eq(ds->width, 32);
    ck_assert_int_eq(ds->features, 3072);
    ck_assert_int_eq(ds->classes, 10);
    ck_assert_int_eq(ds->n_writers, 0);
    float *x = malloc(sizeof(float) * 3072 * 10);
    int y[10];
    for (int set = 0; set < 2; set++) {
        int n = set ? 3 : 10;
        dataset_gather(ds, set, NULL, n, x, y);
        int row = 0;
        for (int f = set ? 5 : 0; f < (set ? 6 : 5); f++)
            for (int r = 0; r < cifar10_counts[f]; r++, row++) {
                ck_assert_int_eq(y[row], (f + 3 * r) % 10);
                ck_assert_int_eq((set ? ds->test_y : ds->train_y)[row], (f + 3 * r) % 10);
                for (int j = 0; j < 3072; j++)
                    ck_assert_msg(x[(size_t)row * 3072 + j] == (float)cifar_pixel(f, r, j) / 255.0f,
                                  "set %d row %d value %d", set, row, j);
            }
    }
    free(x);
}

START_TEST(test_cifar10_every_value)
{
    Dir d;
    dir_make(&d);
    write_cifar10(d.path);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_open(DATA_CIFAR10, d.path, NULL, &ds, &diag), HS_OK);
    check_cifar10_values(ds);
    dataset_free(ds);
    /* the folder the tarball unpacks into, one level down */
    Dir top;
    dir_make(&top);
    sub_dir(&top, "cifar-10-batches-bin");
    write_cifar10(in_dir(&top, "cifar-10-batches-bin"));
    ck_assert_int_eq(dataset_open(DATA_CIFAR10, top.path, NULL, &ds, &diag), HS_OK);
    check_cifar10_values(ds);
    dataset_free(ds);
    /* test_samples keeps the first rows */
    DataOptions options = {.test_samples = 2};
    ck_assert_int_eq(dataset_open(DATA_CIFAR10, d.path, &options, &ds, &diag), HS_OK);
    ck_assert_int_eq(ds->n_test, 2);
    dataset_free(ds);
    dir_remove(&top);
    dir_remove(&d);
}
END_TEST

START_TEST(test_cifar10_malformed)
{
    Dir d;
    dir_make(&d);
    write_cifar10(d.path);
    Dataset *ds = (Dataset *)1;
    HsDiag diag;
    /* a record cut short: 2 records and 100 bytes */
    uint8_t labels[3] = {1, 2, 3};
    write_cifar_file(in_dir(&d, "data_batch_3.bin"), 2, 2, 1, labels);
    FILE *f = fopen(in_dir(&d, "data_batch_3.bin"), "ab");
    ck_assert_int_eq((int)fwrite(labels, 1, 3, f), 3);
    fclose(f);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR10, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag,
                 "data_batch_3.bin: truncated record 2 at byte offset 6146: 3 of its 3073 bytes", NULL);
    ck_assert_ptr_null(ds);
    /* a label out of range: record 1 of the test file */
    write_cifar10(d.path);
    uint8_t bad[3] = {4, 10, 2};
    write_cifar_file(in_dir(&d, "test_batch.bin"), 5, 3, 1, bad);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR10, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag,
                 "test_batch.bin: record 1 (byte offset 3073): label 10 is not a class 0..9", NULL);
    /* an empty file, a missing one, a directory in a file's place */
    write_cifar10(d.path);
    write_bytes(in_dir(&d, "data_batch_2.bin"), "", 0);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR10, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag, "data_batch_2.bin: empty",
                 NULL);
    write_cifar10(d.path);
    unlink(in_dir(&d, "test_batch.bin"));
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR10, d.path, NULL, &ds, &diag), HS_E_MISSING, &diag, "test_batch.bin",
                 "not found");
    sub_dir(&d, "test_batch.bin");
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR10, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag, "test_batch.bin",
                 "directory");
    rmdir(in_dir(&d, "test_batch.bin"));
    ck_assert_int_eq(mkfifo(in_dir(&d, "test_batch.bin"), 0600), 0);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR10, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag, "test_batch.bin",
                 "a FIFO");
    unlink(in_dir(&d, "test_batch.bin"));
    /* the size limit */
    write_cifar10(d.path);
    DataOptions small = {.max_file_bytes = 3 * 3073 - 1};
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR10, d.path, &small, &ds, &diag), HS_E_INPUT, &diag, "data_batch_2.bin",
                 "more than the limit");
    /* no path */
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR10, "", NULL, &ds, &diag), HS_E_INPUT, &diag, "cifar10 needs a path", NULL);
    dir_remove(&d);
}
END_TEST

static void write_cifar100(const char *folder, int n_train, int n_test)
{
    for (int s = 0; s < 2; s++) {
        int n = s ? n_test : n_train;
        uint8_t labels[16];
        for (int r = 0; r < n; r++) labels[2 * r] = (uint8_t)((r + s) % 20), labels[2 * r + 1] = (uint8_t)(97 - r - s);
        char path[256];
        snprintf(path, sizeof path, "%s/%s", folder, s ? "test.bin" : "train.bin");
        write_cifar_file(path, s, n, 2, labels);
    }
}

START_TEST(test_cifar100_fine_and_coarse)
{
    Dir d;
    dir_make(&d);
    write_cifar100(d.path, 4, 2);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    for (int coarse = 0; coarse <= 1; coarse++) {
        DataOptions options = {.label = coarse ? DATA_LABEL_COARSE : DATA_LABEL_FINE};
        ck_assert_int_eq(dataset_open(DATA_CIFAR100, d.path, &options, &ds, &diag), HS_OK);
        ck_assert_int_eq(ds->n_train, 4);
        ck_assert_int_eq(ds->n_test, 2);
        ck_assert_int_eq(ds->classes, coarse ? 20 : 100);
        for (int s = 0; s < 2; s++)
            for (int r = 0; r < (s ? 2 : 4); r++) {
                const uint8_t *y = s ? ds->test_y : ds->train_y, *x = s ? ds->test_pixels : ds->train_pixels;
                ck_assert_int_eq(y[r], coarse ? (r + s) % 20 : 97 - r - s);
                for (int j = 0; j < 3072; j++) ck_assert_int_eq(x[(size_t)r * 3072 + j], cifar_pixel(s, r, j));
            }
        dataset_free(ds);
    }
    /* a fine label of 100 and a coarse one of 20 */
    uint8_t fine[4] = {3, 7, 5, 100}, coarse[2] = {20, 1};
    write_cifar_file(in_dir(&d, "train.bin"), 0, 2, 2, fine);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR100, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag,
                 "train.bin: record 1 (byte offset 3075): fine label 100 is not a class 0..99", NULL);
    write_cifar100(d.path, 4, 2);
    write_cifar_file(in_dir(&d, "test.bin"), 1, 1, 2, coarse);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR100, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag,
                 "test.bin: record 0 (byte offset 0): coarse label 20 is not a class 0..19", NULL);
    /* CIFAR-10 records where CIFAR-100 ones are expected: not whole records */
    write_cifar100(d.path, 4, 2);
    write_cifar_file(in_dir(&d, "test.bin"), 1, 2, 1, coarse);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_CIFAR100, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag, "test.bin: truncated record 1",
                 "is this a CIFAR-100 file?");
    dir_remove(&d);
}
END_TEST

/* ------------------------------------------------------------------ normalisation and augmentation */

START_TEST(test_normalize_per_channel)
{
    Dir d;
    dir_make(&d);
    write_cifar10(d.path);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    DataOptions options = {.normalize = DATA_NORMALIZE_TRAIN};
    ck_assert_int_eq(dataset_open(DATA_CIFAR10, d.path, &options, &ds, &diag), HS_OK);
    ck_assert_ptr_nonnull(ds->norm_mean);
    /* the moments in double, value by value, in the test's own order */
    for (int c = 0; c < 3; c++) {
        double sum = 0, squares = 0, n = 10.0 * 1024;
        for (int i = 0; i < 10; i++)
            for (int j = 0; j < 1024; j++) {
                double v = (float)ds->train_pixels[(size_t)i * 3072 + c * 1024 + j] / 255.0f;
                sum += v, squares += v * v;
            }
        double mean = sum / n, sd = sqrt(squares / n - mean * mean);
        ck_assert_double_eq_tol(ds->norm_mean[c], mean, 1e-6);
        ck_assert_double_eq_tol(ds->norm_std[c], sd, 1e-6);
    }
    float *x = malloc(sizeof(float) * 3072);
    int y;
    int row = 7;
    dataset_gather(ds, 1, &row, 0, x, &y); /* B = 0 touches nothing */
    row = 2;
    dataset_gather(ds, 1, &row, 1, x, &y);
    for (int j = 0; j < 3072; j++) {
        int c = j / 1024;
        float want = ((float)ds->test_pixels[2 * 3072 + j] / 255.0f - ds->norm_mean[c]) / ds->norm_std[c];
        ck_assert(x[j] == want);
    }
    /* given values, and their removal */
    float mean[3] = {0.5f, 0.25f, 0.0f}, sd[3] = {0.5f, 2.0f, 1.0f}, zero[3] = {1, 0, 1};
    ck_assert_int_eq(dataset_set_normalization(ds, mean, zero), HS_E_INPUT);
    ck_assert_int_eq(dataset_set_normalization(ds, mean, sd), HS_OK);
    dataset_gather(ds, 0, NULL, 1, x, &y);
    ck_assert(x[5] == ((float)ds->train_pixels[5] / 255.0f - 0.5f) / 0.5f);
    ck_assert(x[1024 + 5] == ((float)ds->train_pixels[1024 + 5] / 255.0f - 0.25f) / 2.0f);
    ck_assert_int_eq(dataset_set_normalization(ds, NULL, NULL), HS_OK);
    dataset_gather(ds, 0, NULL, 1, x, &y);
    ck_assert(x[5] == (float)ds->train_pixels[5] / 255.0f);
    free(x);
    dataset_free(ds);
    dir_remove(&d);
}
END_TEST

START_TEST(test_augment_deterministic_and_exact)
{
    Dir d;
    dir_make(&d);
    write_cifar10(d.path);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    DataOptions options = {.normalize = DATA_NORMALIZE_TRAIN};
    ck_assert_int_eq(dataset_open(DATA_CIFAR10, d.path, &options, &ds, &diag), HS_OK);
    const int B = 10, F = 3072;
    float *plain = malloc(sizeof(float) * F * B), *a = malloc(sizeof(float) * F * B);
    float *b = malloc(sizeof(float) * F * B), *scratch = malloc(sizeof(float) * F);
    int y[10];
    DataAugment aug = {.crop_padding = 4, .flip = 1};
    ck_assert_int_eq(dataset_augment_check(ds, &aug, &diag), HS_OK);
    dataset_gather(ds, 0, NULL, B, plain, y);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    /* the same stream state gives the same images */
    gsl_rng_set(rng, 42);
    memcpy(a, plain, sizeof(float) * F * B);
    dataset_augment(ds, &aug, a, B, scratch, rng);
    unsigned long after = gsl_rng_get(rng);
    gsl_rng_set(rng, 42);
    memcpy(b, plain, sizeof(float) * F * B);
    dataset_augment(ds, &aug, b, B, scratch, rng);
    ck_assert_mem_eq(a, b, sizeof(float) * F * B);
    ck_assert_uint_eq(gsl_rng_get(rng), after); /* three draws a sample, no more */
    /* replay the draws and build each image by hand: pad with a raw 0, crop, flip */
    gsl_rng_set(rng, 42);
    int moved = 0, flipped = 0;
    for (int i = 0; i < B; i++) {
        int dy = (int)gsl_rng_uniform_int(rng, 9), dx = (int)gsl_rng_uniform_int(rng, 9);
        int flip = (int)gsl_rng_uniform_int(rng, 2);
        moved += dy != 4 || dx != 4;
        flipped += flip;
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 32; r++)
                for (int col = 0; col < 32; col++) {
                    int pc = flip ? 31 - col : col; /* column in the cropped image before the flip */
                    int sr = r + dy - 4, sc = pc + dx - 4;
                    float want = sr < 0 || sr > 31 || sc < 0 || sc > 31
                                     ? (0.0f - ds->norm_mean[c]) / ds->norm_std[c]
                                     : plain[(size_t)i * F + c * 1024 + sr * 32 + sc];
                    ck_assert_msg(a[(size_t)i * F + c * 1024 + r * 32 + col] == want, "sample %d c %d r %d col %d",
                                  i, c, r, col);
                }
    }
    ck_assert_int_gt(moved, 0);
    ck_assert_int_gt(flipped, 0);
    /* another seed, other images */
    gsl_rng_set(rng, 43);
    memcpy(b, plain, sizeof(float) * F * B);
    dataset_augment(ds, &aug, b, B, scratch, rng);
    ck_assert(memcmp(a, b, sizeof(float) * F * B) != 0);
    /* flip only: one draw a sample, each image itself or its mirror */
    DataAugment flip_only = {.flip = 1};
    gsl_rng_set(rng, 5);
    memcpy(b, plain, sizeof(float) * F * B);
    dataset_augment(ds, &flip_only, b, B, scratch, rng);
    for (int i = 0; i < B; i++) {
        int same = memcmp(b + (size_t)i * F, plain + (size_t)i * F, sizeof(float) * F) == 0;
        int mirrored = 1;
        for (int j = 0; j < F && mirrored; j++) mirrored = b[(size_t)i * F + j] == plain[(size_t)i * F + (j / 32) * 32 + 31 - j % 32];
        ck_assert(same || mirrored);
    }
    /* refused on flat samples and for too much padding */
    DataAugment wide = {.crop_padding = 33};
    expect_error(dataset_augment_check(ds, &wide, &diag), HS_E_INPUT, &diag, "crop padding 33 outside 0..32", NULL);
    gsl_rng_free(rng);
    free(plain), free(a), free(b), free(scratch);
    dataset_free(ds);
    dir_remove(&d);
}
END_TEST

/* ------------------------------------------------------------------ LEAF */

/* The value k of sample s (global over the training then test samples), position j. */
static int leaf_k(int s, int j) { return (s * 13 + j * 7) % 256; }

/* Writes user `name` with n samples starting at global sample s0 (4 values each). */
static void leaf_user(FILE *f, const char *name, int s0, int n, int last)
{
    fprintf(f, "\"%s\": {\"x\": [", name);
    for (int s = s0; s < s0 + n; s++) {
        fprintf(f, "%s[", s > s0 ? ", " : "");
        for (int j = 0; j < 4; j++) fprintf(f, "%s%.17g", j ? ", " : "", leaf_k(s, j) / 255.0);
        fprintf(f, "]");
    }
    fprintf(f, "], \"y\": [");
    for (int s = s0; s < s0 + n; s++) fprintf(f, "%s%d", s > s0 ? ", " : "", s % 5);
    fprintf(f, "]}%s", last ? "" : ", ");
}

/* train/a.json: w0 (2 samples), w1 (1); train/b.json: w2 (3), with "hierarchies" and the
 * keys in another order; test/t.json: one sample each. */
static void write_leaf(const Dir *d)
{
    sub_dir(d, "train");
    sub_dir(d, "test");
    FILE *f = fopen(in_dir(d, "train/a.json"), "w");
    fprintf(f, "{\"users\": [\"w0\", \"w1\"], \"num_samples\": [2, 1], \"user_data\": {");
    leaf_user(f, "w0", 0, 2, 0);
    leaf_user(f, "w1", 2, 1, 1);
    fprintf(f, "}}");
    fclose(f);
    f = fopen(in_dir(d, "train/b.json"), "w");
    fprintf(f, "{\n  \"user_data\": {\n    ");
    leaf_user(f, "w2", 3, 3, 1);
    fprintf(f, "\n  },\n  \"hierarchies\": [[\"a\", {\"b\": null}], true, false, -1.5e3],\n"
               "  \"num_samples\": [3],\n  \"users\": [\"w\\u0032\"]\n}\n");
    fclose(f);
    f = fopen(in_dir(d, "test/t.json"), "w");
    fprintf(f, "{\"users\": [\"w0\", \"w1\", \"w2\"], \"num_samples\": [1, 1, 1], \"user_data\": {");
    leaf_user(f, "w0", 6, 1, 0);
    leaf_user(f, "w1", 7, 1, 0);
    leaf_user(f, "w2", 8, 1, 1);
    fprintf(f, "}}");
    fclose(f);
}

START_TEST(test_leaf_every_value_and_writers)
{
    Dir d;
    dir_make(&d);
    write_leaf(&d);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_open(DATA_LEAF, d.path, NULL, &ds, &diag), HS_OK);
    ck_assert_int_eq(ds->n_train, 6);
    ck_assert_int_eq(ds->n_test, 3);
    ck_assert_int_eq(ds->features, 4);
    ck_assert_int_eq(ds->channels, 1);
    ck_assert_int_eq(ds->height, 2);
    ck_assert_int_eq(ds->width, 2);
    ck_assert_int_eq(ds->classes, 5);
    ck_assert_ptr_nonnull(ds->train_pixels); /* multiples of 1/255: bytes */
    for (int s = 0; s < 9; s++) {
        int test = s >= 6, row = test ? s - 6 : s;
        const uint8_t *x = (test ? ds->test_pixels : ds->train_pixels) + row * 4;
        for (int j = 0; j < 4; j++) ck_assert_int_eq(x[j], leaf_k(s, j));
        ck_assert_int_eq((test ? ds->test_y : ds->train_y)[row], s % 5);
        float g[4];
        int y;
        dataset_gather(ds, test, &row, 1, g, &y);
        for (int j = 0; j < 4; j++) ck_assert(g[j] == (float)(leaf_k(s, j) / 255.0)); /* the double, rounded */
    }
    ck_assert_int_eq(ds->n_writers, 3);
    const int starts[4] = {0, 2, 3, 6};
    for (int w = 0; w <= 3; w++) ck_assert_int_eq(ds->writer_start[w], starts[w]);
    ck_assert_str_eq(dataset_writer_name(ds, 0), "w0");
    ck_assert_str_eq(dataset_writer_name(ds, 1), "w1");
    ck_assert_str_eq(dataset_writer_name(ds, 2), "w2");
    ck_assert_ptr_null(dataset_writer_name(ds, 3));
    dataset_free(ds);
    /* a given shape and class count */
    DataOptions options = {.channels = 4, .height = 1, .width = 1, .classes = 7};
    ck_assert_int_eq(dataset_open(DATA_LEAF, d.path, &options, &ds, &diag), HS_OK);
    ck_assert_int_eq(ds->channels, 4);
    ck_assert_int_eq(ds->classes, 7);
    dataset_free(ds);
    options = (DataOptions){.channels = 3, .height = 1, .width = 1};
    expect_error(dataset_open(DATA_LEAF, d.path, &options, &ds, &diag), HS_E_INPUT, &diag,
                 "shape 3x1x1 given does not hold the 4 values", NULL);
    dir_remove(&d);
}
END_TEST

START_TEST(test_leaf_floats)
{
    Dir d;
    dir_make(&d);
    write_leaf(&d);
    /* one value that is not a multiple of 1/255, late in the test file: all floats */
    FILE *f = fopen(in_dir(&d, "test/t.json"), "w");
    fprintf(f, "{\"users\": [\"w0\"], \"num_samples\": [2], \"user_data\": {\"w0\": {\"x\": "
               "[[0.5, 1e-3, -2.25, 1E2], [0.0, 0.1, 3, 0.00392156862745098]], \"y\": [0, 4]}}}");
    fclose(f);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_open(DATA_LEAF, d.path, NULL, &ds, &diag), HS_OK);
    ck_assert_ptr_null(ds->train_pixels);
    ck_assert_ptr_nonnull(ds->train_x);
    for (int s = 0; s < 6; s++)
        for (int j = 0; j < 4; j++) ck_assert(ds->train_x[s * 4 + j] == (float)leaf_k(s, j) / 255.0f);
    const float want[8] = {0.5f, (float)1e-3, -2.25f, 100.0f, 0.0f, (float)0.1, 3.0f, (float)0.00392156862745098};
    for (int k = 0; k < 8; k++) ck_assert(ds->test_x[k] == want[k]);
    dataset_free(ds);
    dir_remove(&d);
}
END_TEST

/* Writes a fresh LEAF folder whose train/x.json is text (test/ valid) and expects the
 * error. */
static void leaf_case(const char *text, const DataOptions *options, const char *want, const char *want2)
{
    Dir d;
    dir_make(&d);
    sub_dir(&d, "train");
    sub_dir(&d, "test");
    write_text(in_dir(&d, "train/x.json"), text);
    write_text(in_dir(&d, "test/t.json"),
               "{\"users\": [\"w0\"], \"num_samples\": [1], \"user_data\": {\"w0\": {\"x\": [[0, 1, 0, 1]], "
               "\"y\": [1]}}}");
    Dataset *ds = (Dataset *)1;
    HsDiag diag;
    hs_diag_clear(&diag);
    int status = dataset_open(DATA_LEAF, d.path, options, &ds, &diag);
    expect_error(status, HS_E_INPUT, &diag, "train/x.json:", want);
    if (want2) expect_error(status, HS_E_INPUT, &diag, want2, NULL);
    ck_assert_ptr_null(ds);
    dir_remove(&d);
}

#define LEAF_HEAD "{\"users\": [\"w0\"], \"num_samples\": [1], \"user_data\": "

START_TEST(test_leaf_malformed)
{
    leaf_case("[1, 2]", NULL, ":1: byte 0: not LEAF's layout", NULL);
    leaf_case("{\"users\": [], \"num_samples\": []}", NULL, "no \"user_data\" key", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, 1, 0, 1]], \"y\": [1]}}, \"users\": []}", NULL, "\"users\" given twice",
              NULL);
    leaf_case("{\"users\": [\"w0\"], \"num_samples\": [2], \"user_data\": {\"w0\": {\"x\": [[0, 1, 0, 1]], \"y\": [1]}}}",
              NULL, "user 'w0': \"num_samples\" says 2 but \"user_data\" holds 1 samples", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, 1, 0, 1], [1, 1, 1, 1]], \"y\": [1]}}}", NULL,
              "user 'w0': 2 samples in x but 1 labels in y", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, 1, 0, 1], [1, 1, 1]], \"y\": [1, 2]}}}", NULL,
              "user 'w0', sample 1: 3 values, but the first sample had 4", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, 1, 0, 1], [1, 1, 1, 1, 1]], \"y\": [1, 2]}}}", NULL,
              "user 'w0', sample 1: more than the 4 values of the first sample", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, 1, 0, 1]], \"y\": [300]}}}", NULL,
              "user 'w0', label 0: 300 is not a class 0..255", NULL);
    DataOptions five = {.classes = 5};
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, 1, 0, 1]], \"y\": [7]}}}", &five, "7 is not a class 0..4", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, 1, 0, 1]], \"y\": [1.5]}}}", NULL, "1.5 is not a class", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [\"to be or not\"], \"y\": [1]}}}", NULL,
              "LEAF's text data sets are not supported", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, 1, 0, 1]], \"y\": [1]}}} x", NULL, "byte 92: 'x' after the top-level object",
              NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, 1, 0, 0.12", NULL, "the end of the file", NULL);
    leaf_case("{\"users\": [\"w0\", \"w9\"], \"num_samples\": [1, 1], \"user_data\": {\"w0\": {\"x\": [[0, 1, 0, 1]], "
              "\"y\": [1]}}}",
              NULL, "\"users\" names 2 users but \"user_data\" holds 1", NULL);
    leaf_case("{\"users\": [\"w9\"], \"num_samples\": [1], \"user_data\": {\"w0\": {\"x\": [[0, 1, 0, 1]], \"y\": [1]}}}",
              NULL, "disagree: 'w0' is in \"user_data\" only", NULL);
    leaf_case("{\"users\": [\"w0\", \"w0\"], \"num_samples\": [1, 1], \"user_data\": {\"w0\": {\"x\": [[0, 1, 0, 1]], "
              "\"y\": [1]}, \"w0\": {\"x\": [[0, 1, 0, 1]], \"y\": [1]}}}",
              NULL, "user 'w0' appears twice", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, -, 0, 1]], \"y\": [1]}}}", NULL, "expected a number", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[]], \"y\": [1]}}}", NULL, "user 'w0', sample 0: an empty list", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"y\": [1]}}}", NULL, "user 'w0': no \"x\"", NULL);
    leaf_case(LEAF_HEAD "{\"w0\": {\"x\": [[0, 1, 0, 1]], \"y\": [1], \"y\": [2]}}}", NULL, "\"y\" given twice", NULL);
    leaf_case("{\"users\": [\"w0\"], \"num_samples\": [-1]", NULL, "-1 is not a count", NULL);
    leaf_case("{\"users\": [\"w0\"], \"num_samples\": [1], \"user_data\": {\"w0", NULL,
              "a string is not closed before the end of the file", NULL);
    leaf_case("{\"users\": [\"w\\q\"]}", NULL, "unknown escape", NULL);
    leaf_case("{\"users\": [1]}", NULL, "\"users\" must hold strings, found '1'", NULL);
    leaf_case("{\"users\": [\"w0\"], \"num_samples\": [1], \"user_data\": {\"w0\": {\"x\": [[1e999, 0, 0, 0]]}}}",
              NULL, "number out of range", NULL);
    /* the line and byte of an error in an indented file */
    leaf_case("{\n  \"users\": [\"w0\"],\n  \"num_samples\": [1],\n  \"user_data\": {\"w0\": {\"x\": [[0, 1, 0, 1]], "
              "\"y\": [1]}}\n  \"more\": 1\n}",
              NULL, "train/x.json:5: byte 100: expected ',' or '}' at the top level, found '\"'", NULL);
    /* nesting in a skipped value is bounded */
    char deep[400] = "{\"h\": ";
    for (int i = 0; i < 70; i++) strcat(deep, "[");
    leaf_case(deep, NULL, "nested more than 64 deep", NULL);
    /* strings are bounded too */
    char *long_name = malloc(6000);
    strcpy(long_name, "{\"users\": [\"");
    memset(long_name + 12, 'a', 5000);
    strcpy(long_name + 5012, "\"]}");
    leaf_case(long_name, NULL, "a string longer than 4095 bytes", NULL);
    free(long_name);
}
END_TEST

START_TEST(test_leaf_folders)
{
    Dir d;
    dir_make(&d);
    Dataset *ds = (Dataset *)1;
    HsDiag diag;
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_LEAF, d.path, NULL, &ds, &diag), HS_E_MISSING, &diag, "/train: cannot open",
                 "train/ and test/");
    write_leaf(&d);
    /* a writer in two training files */
    write_text(in_dir(&d, "train/c.json"), "{\"users\": [\"w1\"], \"num_samples\": [1], \"user_data\": {\"w1\": "
                                           "{\"x\": [[0, 1, 0, 1]], \"y\": [1]}}}");
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_LEAF, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag,
                 "user 'w1' appears in more than one training file", NULL);
    unlink(in_dir(&d, "train/c.json"));
    /* a FIFO named like a JSON file: refused, never waited on */
    ck_assert_int_eq(mkfifo(in_dir(&d, "train/c.json"), 0600), 0);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_LEAF, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag, "train/c.json: is a FIFO",
                 NULL);
    unlink(in_dir(&d, "train/c.json"));
    /* an empty test folder */
    unlink(in_dir(&d, "test/t.json"));
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_LEAF, d.path, NULL, &ds, &diag), HS_E_MISSING, &diag, "/test: holds no .json file",
                 NULL);
    dir_remove(&d);
}
END_TEST

/* ------------------------------------------------------------------ the natural partition */

static int int_compare(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

START_TEST(test_partition_natural)
{
    Dir d;
    dir_make(&d);
    write_leaf(&d);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_open(DATA_LEAF, d.path, NULL, &ds, &diag), HS_OK);
    DataSpec spec = {.dataset = DATA_LEAF, .partition = PART_NATURAL};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    /* 3 agents: one writer each; 2 agents: writer 0, then writers 1 and 2 */
    static const int rows3[3][4] = {{0, 1}, {2}, {3, 4, 5}}, sizes3[3] = {2, 1, 3};
    static const int rows2[2][4] = {{0, 1}, {2, 3, 4, 5}}, sizes2[2] = {2, 4};
    for (int n = 2; n <= 3; n++) {
        int counts[3], first[4];
        ck_assert_int_eq(partition_natural_counts(ds, n, counts, first, &diag), HS_OK);
        Partition *p, *again;
        gsl_rng_set(rng, 11);
        ck_assert_int_eq(partition_make(ds, &spec, n, NULL, rng, &p, &diag), HS_OK);
        gsl_rng_set(rng, 11);
        ck_assert_int_eq(partition_make(ds, &spec, n, counts, rng, &again, &diag), HS_OK);
        ck_assert_int_eq(partition_n_agents(p), n);
        ck_assert_uint_eq(partition_total(p), 6);
        for (int a = 0; a < n; a++) {
            int count, count2;
            const int *rows = partition_indices(p, a, &count), *rows_again = partition_indices(again, a, &count2);
            ck_assert_int_eq(count, n == 3 ? sizes3[a] : sizes2[a]);
            ck_assert_int_eq(count, counts[a]);
            ck_assert_int_eq(count2, count);
            ck_assert_mem_eq(rows, rows_again, sizeof(int) * (size_t)count); /* the same seed, the same order */
            int sorted[4];
            memcpy(sorted, rows, sizeof(int) * (size_t)count);
            qsort(sorted, (size_t)count, sizeof(int), int_compare);
            ck_assert_mem_eq(sorted, n == 3 ? rows3[a] : rows2[a], sizeof(int) * (size_t)count);
        }
        ck_assert_int_eq(first[0], 0);
        ck_assert_int_eq(first[n], 3);
        if (n == 2) ck_assert_int_eq(first[1], 1);
        partition_free(p);
        partition_free(again);
    }
    /* more agents than writers; sizes that are not the writers'; a set without writers */
    Partition *p = (Partition *)1;
    expect_error(partition_make(ds, &spec, 4, NULL, rng, &p, &diag), HS_E_INPUT, &diag,
                 "4 agents for the 3 writers of the data set (lower [agents] count to 3 or less)", NULL);
    ck_assert_ptr_null(p);
    hs_diag_clear(&diag);
    int wrong[2] = {3, 3};
    expect_error(partition_make(ds, &spec, 2, wrong, rng, &p, &diag), HS_E_INPUT, &diag,
                 "agent 0 holds 2 samples of its writers, not the 3 asked for", NULL);
    hs_diag_clear(&diag);
    Dataset none = {.n_train = 6, .classes = 5};
    expect_error(partition_make(&none, &spec, 2, NULL, rng, &p, &diag), HS_E_INPUT, &diag,
                 "natural needs a data set with writers", NULL);
    gsl_rng_free(rng);
    dataset_free(ds);
    dir_remove(&d);
}
END_TEST

/* ------------------------------------------------------------------ NumPy */

/* Writes a .npy file: version 1 (2-byte header length) or 2 (4 bytes). */
static void write_npy(const char *path, const char *descr, const char *fortran, const char *shape, const void *data,
                      size_t bytes, int version)
{
    char dict[256];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fortran, shape);
    int preamble = version == 1 ? 10 : 12, total = preamble + n + 1;
    int pad = (64 - total % 64) % 64;
    unsigned char *out = malloc((size_t)(total + pad) + bytes);
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)version, out[7] = 0;
    unsigned len = (unsigned)(n + pad + 1);
    out[8] = (unsigned char)len, out[9] = (unsigned char)(len >> 8);
    if (version != 1) out[10] = (unsigned char)(len >> 16), out[11] = (unsigned char)(len >> 24);
    memcpy(out + preamble, dict, (size_t)n);
    memset(out + preamble + n, ' ', (size_t)pad);
    out[preamble + n + pad] = '\n';
    memcpy(out + total + pad, data, bytes);
    write_bytes(path, out, (size_t)(total + pad) + bytes);
    free(out);
}

/* A float32 (5, 6) / int64 pair for training and (2, 6) / int64 for test. */
static void write_npy_floats(const Dir *d, float *train, float *test)
{
    int64_t ytr[5] = {0, 3, 1, 2, 3}, yte[2] = {2, 0};
    for (int k = 0; k < 30; k++) train[k] = (float)k * 0.25f - 3.0f;
    for (int k = 0; k < 12; k++) test[k] = 1.0f / (float)(k + 1);
    write_npy(in_dir(d, "train_x.npy"), "<f4", "False", "(5, 6)", train, sizeof(float) * 30, 1);
    write_npy(in_dir(d, "train_y.npy"), "<i8", "False", "(5,)", ytr, sizeof ytr, 2);
    write_npy(in_dir(d, "test_x.npy"), "<f4", "False", "(2, 6)", test, sizeof(float) * 12, 1);
    write_npy(in_dir(d, "test_y.npy"), "<i8", "False", "(2,)", yte, sizeof yte, 1);
}

START_TEST(test_npy_every_value)
{
    Dir d;
    dir_make(&d);
    float train[30], test[12];
    write_npy_floats(&d, train, test);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_open(DATA_NPY, d.path, NULL, &ds, &diag), HS_OK);
    ck_assert_int_eq(ds->n_train, 5);
    ck_assert_int_eq(ds->n_test, 2);
    ck_assert_int_eq(ds->features, 6);
    ck_assert_int_eq(ds->channels, 6); /* a flat vector */
    ck_assert_int_eq(ds->height, 1);
    ck_assert_int_eq(ds->classes, 4);
    ck_assert_mem_eq(ds->train_x, train, sizeof train);
    ck_assert_mem_eq(ds->test_x, test, sizeof test);
    static const uint8_t ytr[5] = {0, 3, 1, 2, 3}, yte[2] = {2, 0};
    ck_assert_mem_eq(ds->train_y, ytr, 5);
    ck_assert_mem_eq(ds->test_y, yte, 2);
    dataset_free(ds);
    /* uint8 images (N, C, H, W) with int32 labels, and (N, H, W) with uint8 labels */
    uint8_t pixels[3 * 2 * 2 * 3], few[1 * 2 * 2 * 3];
    for (int k = 0; k < 36; k++) pixels[k] = (uint8_t)(k * 7);
    for (int k = 0; k < 12; k++) few[k] = (uint8_t)(255 - k);
    int32_t y32[3] = {1, 0, 9}, y1[1] = {5};
    write_npy(in_dir(&d, "train_x.npy"), "|u1", "False", "(3, 3, 2, 2)", pixels, sizeof pixels, 1);
    write_npy(in_dir(&d, "train_y.npy"), "<i4", "False", "(3,)", y32, sizeof y32, 1);
    write_npy(in_dir(&d, "test_x.npy"), "|u1", "False", "(1, 3, 2, 2)", few, sizeof few, 3);
    write_npy(in_dir(&d, "test_y.npy"), "<i4", "False", "(1,)", y1, sizeof y1, 1);
    DataOptions options = {.classes = 10};
    ck_assert_int_eq(dataset_open(DATA_NPY, d.path, &options, &ds, &diag), HS_OK);
    ck_assert_int_eq(ds->channels, 3);
    ck_assert_int_eq(ds->height, 2);
    ck_assert_int_eq(ds->width, 2);
    ck_assert_int_eq(ds->classes, 10);
    ck_assert_mem_eq(ds->train_pixels, pixels, sizeof pixels);
    ck_assert_mem_eq(ds->test_pixels, few, sizeof few);
    ck_assert_int_eq(ds->train_y[2], 9);
    float g[12];
    int y;
    dataset_gather(ds, 1, NULL, 1, g, &y);
    ck_assert(g[3] == (float)few[3] / 255.0f);
    ck_assert_int_eq(y, 5);
    dataset_free(ds);
    uint8_t yu[3] = {4, 4, 0};
    write_npy(in_dir(&d, "train_x.npy"), "|u1", "False", "(3, 6, 2)", pixels, sizeof pixels, 1);
    write_npy(in_dir(&d, "train_y.npy"), "|u1", "False", "(3,)", yu, sizeof yu, 1);
    write_npy(in_dir(&d, "test_x.npy"), "|u1", "False", "(1, 6, 2)", few, sizeof few, 1);
    ck_assert_int_eq(dataset_open(DATA_NPY, d.path, NULL, &ds, &diag), HS_OK);
    ck_assert_int_eq(ds->channels, 1);
    ck_assert_int_eq(ds->height, 6);
    ck_assert_int_eq(ds->width, 2);
    ck_assert_int_eq(ds->classes, 6); /* the largest label, 5 in the test set, + 1 */
    dataset_free(ds);
    dir_remove(&d);
}
END_TEST

START_TEST(test_npy_malformed)
{
    Dir d;
    dir_make(&d);
    float train[32] = {0}, test[12]; /* two spare floats: the trailing-bytes case */
    Dataset *ds = (Dataset *)1;
    HsDiag diag;
    int64_t y5[5] = {0, 1, 2, 3, 4};
    double doubles[30] = {0};
    struct {
        const char *file, *descr, *fortran, *shape;
        const void *data;
        size_t bytes;
        const char *want;
    } cases[] = {
        {"train_x.npy", ">f4", "False", "(5, 6)", train, 120, "unsupported dtype '>f4'"},
        {"train_x.npy", "<f8", "False", "(5, 6)", doubles, 240, "unsupported dtype '<f8'"},
        {"train_x.npy", "<f4", "True", "(5, 6)", train, 120, "Fortran order"},
        {"train_x.npy", "<f4", "False", "(5, 6)", train, 100, "truncated: shape (5, 6) needs 120 data bytes from byte offset 128, the file has 100"},
        {"train_x.npy", "<f4", "False", "(5, 6)", train, 124, "4 bytes after the 120 data bytes"},
        {"train_x.npy", "<i4", "False", "(5, 6)", train, 120, "features must be float32 or uint8, not int32"},
        {"train_x.npy", "<f4", "False", "(30,)", train, 120, "features of 1 dimensions"},
        {"train_y.npy", "<i8", "False", "(4,)", y5, 32, "4 labels for the 5 samples of"},
        {"train_y.npy", "<f4", "False", "(5,)", train, 20, "labels must be int32, int64 or uint8, not float32"},
        {"test_x.npy", "|u1", "False", "(12, 2)", y5, 24, "test features are uint8 but training features float32"},
        {"test_x.npy", "<f4", "False", "(2, 3, 2)", test, 48, "test samples are 1x3x2 but training samples 6x1x1"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        write_npy_floats(&d, train, test);
        write_npy(in_dir(&d, cases[c].file), cases[c].descr, cases[c].fortran, cases[c].shape, cases[c].data,
                  cases[c].bytes, 1);
        hs_diag_clear(&diag);
        expect_error(dataset_open(DATA_NPY, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag, cases[c].file, cases[c].want);
        ck_assert_ptr_null(ds);
    }
    /* labels out of range: negative, beyond a byte, beyond the classes given */
    int64_t negative[5] = {0, 1, -1, 0, 0}, big[5] = {0, 256, 0, 0, 0}, seven[5] = {7, 0, 0, 0, 0};
    write_npy_floats(&d, train, test);
    write_npy(in_dir(&d, "train_y.npy"), "<i8", "False", "(5,)", negative, 40, 1);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_NPY, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag,
                 "label -1 of record 2 (byte offset 144) is outside 0..255", NULL);
    write_npy(in_dir(&d, "train_y.npy"), "<i8", "False", "(5,)", big, 40, 1);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_NPY, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag, "label 256 of record 1", NULL);
    write_npy(in_dir(&d, "train_y.npy"), "<i8", "False", "(5,)", seven, 40, 1);
    DataOptions options = {.classes = 5};
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_NPY, d.path, &options, &ds, &diag), HS_E_INPUT, &diag,
                 "label 7 of record 0 (byte offset 128) is outside 0..4 (the classes given)", NULL);
    /* not a .npy at all; a header that is not a dict; a NaN feature; a missing file */
    write_npy_floats(&d, train, test);
    write_text(in_dir(&d, "test_y.npy"), "2,0\n");
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_NPY, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag, "test_y.npy: not a .npy file",
                 NULL);
    write_npy(in_dir(&d, "test_y.npy"), "<i8", "False", "(2,", y5, 16, 1);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_NPY, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag, "test_y.npy: header", NULL);
    write_npy_floats(&d, train, test);
    test[7] = NAN;
    write_npy(in_dir(&d, "test_x.npy"), "<f4", "False", "(2, 6)", test, 48, 1);
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_NPY, d.path, NULL, &ds, &diag), HS_E_INPUT, &diag,
                 "test_x.npy: value 1 of record 1 is not finite", NULL);
    unlink(in_dir(&d, "test_x.npy"));
    hs_diag_clear(&diag);
    expect_error(dataset_open(DATA_NPY, d.path, NULL, &ds, &diag), HS_E_MISSING, &diag, "test_x.npy: not found", NULL);
    dir_remove(&d);
}
END_TEST

/* ------------------------------------------------------------------ the decoded-data cache */

static void write_idx_gz(const char *path, int ndims, const int *dims, const uint8_t *payload, size_t bytes)
{
    gzFile gz = gzopen(path, "wb1");
    ck_assert_ptr_nonnull(gz);
    unsigned char header[16] = {0, 0, 8, (unsigned char)ndims};
    for (int k = 0; k < ndims; k++)
        for (int b = 0; b < 4; b++) header[4 + 4 * k + b] = (unsigned char)((uint32_t)dims[k] >> (24 - 8 * b));
    ck_assert_int_eq(gzwrite(gz, header, (unsigned)(4 + 4 * ndims)), 4 + 4 * ndims);
    ck_assert_int_eq(gzwrite(gz, payload, (unsigned)bytes), (int)bytes);
    ck_assert_int_eq(gzclose(gz), Z_OK);
}

/* A Fashion-MNIST-shaped set large enough to be cached: 2,000 training images. */
static void write_fashion(const Dir *d, int seed)
{
    const int n[2] = {2000, 20};
    const char *images[2] = {"train-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte.gz"};
    const char *labels[2] = {"train-labels-idx1-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};
    for (int s = 0; s < 2; s++) {
        uint8_t *x = malloc((size_t)n[s] * 784), *y = malloc((size_t)n[s]);
        for (size_t k = 0; k < (size_t)n[s] * 784; k++) x[k] = (uint8_t)((k * 2654435761u + (unsigned)seed) >> 13);
        for (int i = 0; i < n[s]; i++) y[i] = (uint8_t)((i + seed) % 10);
        int dims[3] = {n[s], 28, 28};
        write_idx_gz(in_dir(d, images[s]), 3, dims, x, (size_t)n[s] * 784);
        write_idx_gz(in_dir(d, labels[s]), 1, dims, y, (size_t)n[s]);
        free(x), free(y);
    }
}

static int cache_files(const Dir *cache, char *name, size_t size)
{
    char command[256];
    snprintf(command, sizeof command, "ls %s 2>/dev/null", cache->path);
    FILE *p = popen(command, "r");
    int n = 0;
    char line[256];
    while (fgets(line, sizeof line, p)) {
        if (n++ == 0 && name) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(name, size, "%s/%s", cache->path, line);
        }
    }
    pclose(p);
    return n;
}

/* The cache tests' common start: a Fashion-MNIST source, an empty cache folder, the
 * first open (which writes the one entry), and that entry's path. */
typedef struct {
    Dir src, cache;
    DataOptions options;
    Dataset *first;
    HsDiag diag;
    char entry[256];
} CacheCase;

static void cache_case_open(CacheCase *c)
{
    dir_make(&c->src);
    dir_make(&c->cache);
    write_fashion(&c->src, 1);
    hs_diag_clear(&c->diag);
    c->options = (DataOptions){.cache_dir = c->cache.path};
    ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c->src.path, &c->options, &c->first, &c->diag), HS_OK);
    ck_assert_int_eq(cache_files(&c->cache, c->entry, sizeof c->entry), 1);
    ck_assert_msg(strstr(c->entry, "/fashion-mnist-") != NULL, "%s", c->entry);
}

static void cache_case_close(CacheCase *c)
{
    dataset_free(c->first);
    dir_remove(&c->src);
    dir_remove(&c->cache);
}

START_TEST(test_cache_hit_stale_corrupt)
{
    CacheCase c;
    cache_case_open(&c);
    Dataset *ds;
    /* a hit serves the cache: the source's bytes overwritten in place, its size and time
     * restored, are never read */
    const char *images = in_dir(&c.src, "train-images-idx3-ubyte.gz");
    struct stat st;
    ck_assert_int_eq(stat(images, &st), 0);
    int fd = open(images, O_WRONLY);
    char junk[64];
    memset(junk, 'j', sizeof junk);
    ck_assert_int_eq((int)pwrite(fd, junk, sizeof junk, 0), (int)sizeof junk);
    close(fd);
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    ck_assert_int_eq(utimensat(AT_FDCWD, images, times, 0), 0);
    ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c.src.path, &c.options, &ds, &c.diag), HS_OK);
    ck_assert_int_eq(ds->n_train, 2000);
    ck_assert_int_eq(ds->n_test, 20);
    ck_assert_int_eq(ds->classes, 10);
    ck_assert_mem_eq(ds->train_pixels, c.first->train_pixels, 2000 * 784);
    ck_assert_mem_eq(ds->test_pixels, c.first->test_pixels, 20 * 784);
    ck_assert_mem_eq(ds->train_y, c.first->train_y, 2000);
    dataset_free(ds);
    /* a changed time makes the entry stale: the (now corrupt) source is decoded */
    times[1].tv_sec += 10;
    ck_assert_int_eq(utimensat(AT_FDCWD, images, times, 0), 0);
    hs_diag_clear(&c.diag);
    expect_error(dataset_open(DATA_FASHION_MNIST, c.src.path, &c.options, &ds, &c.diag), HS_E_IO, &c.diag,
                 "train-images-idx3-ubyte.gz", "corrupt");
    /* a new source rewrites the same entry */
    write_fashion(&c.src, 2);
    hs_diag_clear(&c.diag);
    ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c.src.path, &c.options, &ds, &c.diag), HS_OK);
    ck_assert(memcmp(ds->train_pixels, c.first->train_pixels, 2000 * 784) != 0);
    ck_assert_int_eq(cache_files(&c.cache, NULL, 0), 1);
    dataset_free(c.first);
    c.first = ds;
    /* a corrupt entry (one payload byte flipped) is ignored and rewritten */
    char *bytes;
    size_t size;
    ck_assert_int_eq(input_file_read_all(c.entry, 1ull << 30, HS_E_INPUT, &bytes, &size, &c.diag), HS_OK);
    bytes[size / 2] ^= 1;
    write_bytes(c.entry, bytes, size);
    ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c.src.path, &c.options, &ds, &c.diag), HS_OK);
    ck_assert_mem_eq(ds->train_pixels, c.first->train_pixels, 2000 * 784);
    dataset_free(ds);
    char *again;
    size_t again_size;
    ck_assert_int_eq(input_file_read_all(c.entry, 1ull << 30, HS_E_INPUT, &again, &again_size, &c.diag), HS_OK);
    ck_assert_uint_eq(again_size, size);
    bytes[size / 2] ^= 1;
    ck_assert_mem_eq(again, bytes, size);
    free(again);
    /* a truncated entry too */
    write_bytes(c.entry, bytes, size - 1000);
    ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c.src.path, &c.options, &ds, &c.diag), HS_OK);
    ck_assert_mem_eq(ds->test_pixels, c.first->test_pixels, 20 * 784);
    dataset_free(ds);
    free(bytes);
    /* a cache folder that cannot be made (a regular file is in the way): just decode */
    DataOptions blocked = {.cache_dir = in_dir(&c.src, "train-labels-idx1-ubyte.gz/cache")};
    ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c.src.path, &blocked, &ds, &c.diag), HS_OK);
    ck_assert_mem_eq(ds->train_pixels, c.first->train_pixels, 2000 * 784);
    dataset_free(ds);
    /* no cache at all */
    DataOptions none = {.cache_dir = ""};
    ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c.src.path, &none, &ds, &c.diag), HS_OK);
    dataset_free(ds);
    /* small sets are not cached */
    Dir cifar;
    dir_make(&cifar);
    write_cifar10(cifar.path);
    ck_assert_int_eq(dataset_open(DATA_CIFAR10, cifar.path, &c.options, &ds, &c.diag), HS_OK);
    dataset_free(ds);
    ck_assert_int_eq(cache_files(&c.cache, NULL, 0), 1);
    dir_remove(&cifar);
    cache_case_close(&c);
}
END_TEST

/* A settled entry (its time two seconds or more before the check) is hashed once per
 * process: `run` loads it in its preflight and again in the trainer. A write in place
 * stamps a new time, so the next load hashes again and finds the damage; a fresh entry
 * (just written) is hashed on every load. */
START_TEST(test_cache_hash_once)
{
    CacheCase c;
    cache_case_open(&c);
    Dataset *ds;
    /* fresh: hashed on each load */
    uint64_t hashes = dataset_cache_hashes();
    for (int k = 1; k <= 2; k++) {
        ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c.src.path, &c.options, &ds, &c.diag), HS_OK);
        ck_assert_uint_eq(dataset_cache_hashes(), hashes + (uint64_t)k);
        dataset_free(ds);
    }
    /* settled (an hour old): hashed once, then served unhashed, the same bytes */
    struct timespec old[2];
    clock_gettime(CLOCK_REALTIME, &old[0]);
    old[0].tv_sec -= 3600;
    old[1] = old[0];
    ck_assert_int_eq(utimensat(AT_FDCWD, c.entry, old, 0), 0);
    hashes = dataset_cache_hashes();
    ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c.src.path, &c.options, &ds, &c.diag), HS_OK);
    ck_assert_uint_eq(dataset_cache_hashes(), hashes + 1);
    dataset_free(ds);
    ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c.src.path, &c.options, &ds, &c.diag), HS_OK);
    ck_assert_uint_eq(dataset_cache_hashes(), hashes + 1);
    ck_assert_mem_eq(ds->train_pixels, c.first->train_pixels, 2000 * 784);
    ck_assert_mem_eq(ds->train_y, c.first->train_y, 2000);
    dataset_free(ds);
    /* one payload byte flipped in place (same inode and size, a new time): hashed again,
     * found corrupt, decoded and rewritten */
    struct stat st;
    ck_assert_int_eq(stat(c.entry, &st), 0);
    int fd = open(c.entry, O_RDWR);
    ck_assert_int_ge(fd, 0);
    unsigned char byte;
    ck_assert_int_eq((int)pread(fd, &byte, 1, st.st_size / 2), 1);
    byte ^= 1;
    ck_assert_int_eq((int)pwrite(fd, &byte, 1, st.st_size / 2), 1);
    close(fd);
    ck_assert_int_eq(dataset_open(DATA_FASHION_MNIST, c.src.path, &c.options, &ds, &c.diag), HS_OK);
    ck_assert_uint_eq(dataset_cache_hashes(), hashes + 2);
    ck_assert_mem_eq(ds->train_pixels, c.first->train_pixels, 2000 * 784);
    ck_assert_mem_eq(ds->test_pixels, c.first->test_pixels, 20 * 784);
    dataset_free(ds);
    struct stat again;
    ck_assert_int_eq(stat(c.entry, &again), 0);
    ck_assert_uint_ne((unsigned long long)again.st_ino, (unsigned long long)st.st_ino);
    cache_case_close(&c);
}
END_TEST

START_TEST(test_cache_leaf_writers)
{
    /* a LEAF set over the cache's threshold: 1,400 samples of 784 values, 7 writers */
    Dir src, cache;
    dir_make(&src);
    dir_make(&cache);
    sub_dir(&src, "train");
    sub_dir(&src, "test");
    for (int t = 0; t < 2; t++) {
        FILE *f = fopen(in_dir(&src, t ? "test/t.json" : "train/a.json"), "w");
        int writers = 7, per = t ? 1 : 200;
        fprintf(f, "{\"users\": [");
        for (int w = 0; w < writers; w++) fprintf(f, "%s\"u%d\"", w ? ", " : "", w);
        fprintf(f, "], \"num_samples\": [");
        for (int w = 0; w < writers; w++) fprintf(f, "%s%d", w ? ", " : "", per);
        fprintf(f, "], \"user_data\": {");
        for (int w = 0; w < writers; w++) {
            fprintf(f, "%s\"u%d\": {\"x\": [", w ? ", " : "", w);
            for (int s = 0; s < per; s++) {
                fprintf(f, "%s[", s ? ", " : "");
                for (int j = 0; j < 784; j++) fprintf(f, "%s%.17g", j ? ", " : "", ((w * 31 + s * 7 + j) % 256) / 255.0);
                fprintf(f, "]");
            }
            fprintf(f, "], \"y\": [");
            for (int s = 0; s < per; s++) fprintf(f, "%s%d", s ? ", " : "", (w + s) % 62);
            fprintf(f, "]}");
        }
        fprintf(f, "}}");
        fclose(f);
    }
    DataOptions options = {.cache_dir = cache.path};
    Dataset *a, *b;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_open(DATA_LEAF, src.path, &options, &a, &diag), HS_OK);
    ck_assert_int_eq(cache_files(&cache, NULL, 0), 1);
    ck_assert_int_eq(dataset_open(DATA_LEAF, src.path, &options, &b, &diag), HS_OK);
    ck_assert_int_eq(b->n_train, 1400);
    ck_assert_int_eq(b->n_writers, 7);
    ck_assert_int_eq(b->classes, a->classes);
    ck_assert_int_eq(b->height, 28);
    ck_assert_mem_eq(b->train_pixels, a->train_pixels, 1400 * 784);
    ck_assert_mem_eq(b->test_pixels, a->test_pixels, 7 * 784);
    ck_assert_mem_eq(b->writer_start, a->writer_start, sizeof(int) * 8);
    ck_assert_str_eq(dataset_writer_name(b, 6), "u6");
    ck_assert_int_eq(b->train_pixels[200 * 784 + 5], (31 + 5) % 256);
    /* other options, another entry: the shape is part of the key */
    DataOptions flat = {.cache_dir = cache.path, .channels = 784, .height = 1, .width = 1};
    Dataset *c;
    ck_assert_int_eq(dataset_open(DATA_LEAF, src.path, &flat, &c, &diag), HS_OK);
    ck_assert_int_eq(c->channels, 784);
    ck_assert_int_eq(cache_files(&cache, NULL, 0), 2);
    dataset_free(a), dataset_free(b), dataset_free(c);
    dir_remove(&src);
    dir_remove(&cache);
}
END_TEST

/* ------------------------------------------------------------------ device profiles */

START_TEST(test_device_profile)
{
    Dir d;
    dir_make(&d);
    DeviceProfile p;
    HsDiag diag;
    hs_diag_clear(&diag);
    write_text(in_dir(&d, "p.csv"), "# from FedScale\r\nagent,compute,bandwidth,latency,source\r\n"
                                    "0, 2.5e9, 1.25e6, 0.05, fedscale:17\r\n\r\n"
                                    "1,1 GFLOPS,10 Mbit/s,20 ms,fedscale:3  # a comment\n"
                                    "2,3e8,1e5,0,\n");
    ck_assert_int_eq(device_profile_read(in_dir(&d, "p.csv"), &p, &diag), HS_OK);
    ck_assert_int_eq(p.n_agents, 3);
    ck_assert(p.compute[0] == 2.5e9 && p.compute[1] == 1e9 && p.compute[2] == 3e8);
    ck_assert(p.bandwidth[0] == 1.25e6 && p.bandwidth[1] == 1.25e6 && p.bandwidth[2] == 1e5);
    ck_assert(p.latency[0] == 0.05 && p.latency[1] == 0.02 && p.latency[2] == 0);
    device_profile_free(&p);
    /* columns in another order, no agent and no latency */
    write_text(in_dir(&d, "p.csv"), "Bandwidth,COMPUTE\n1e6,2e9\n");
    ck_assert_int_eq(device_profile_read(in_dir(&d, "p.csv"), &p, &diag), HS_OK);
    ck_assert_int_eq(p.n_agents, 1);
    ck_assert(p.compute[0] == 2e9 && p.bandwidth[0] == 1e6);
    ck_assert_ptr_null(p.latency);
    device_profile_free(&p);
    device_profile_free(&p); /* twice is harmless */
    struct {
        const char *text, *want;
    } cases[] = {
        {"agent,compute,bandwith\n0,1,1\n", ":1: unknown column 'bandwith' (did you mean 'bandwidth'?)"},
        {"agent,compute\n0,1\n", ":1: the header must name the columns compute and bandwidth"},
        {"compute,compute,bandwidth\n", ":1: column 'compute' given twice"},
        {"agent,compute,bandwidth\n0,1e9,1e6\n2,1e9,1e6\n", ":3: agent '2' where agent 1 was expected"},
        {"agent,compute,bandwidth\n0,1e9\n", ":2: missing bandwidth: 2 fields, the header (line 1) has 3"},
        {"agent,compute,bandwidth\n0,,1e6\n", ":2: missing compute (an empty field)"},
        {"agent,compute,bandwidth\n0,0,1e6\n", ":2: compute '0' must be finite and > 0"},
        {"agent,compute,bandwidth\n0,1e9,-5\n", ":2: bandwidth '-5' must be finite and > 0"},
        {"agent,compute,bandwidth\n0,1e9,inf\n", ":2: bandwidth 'inf' must be finite and > 0"},
        {"agent,compute,bandwidth,latency\n0,1e9,1e6,-1 ms\n", ":2: latency '-1 ms' must be finite and >= 0"},
        {"agent,compute,bandwidth\n0,1e9,1e6,7\n", ":2: more fields than the 3 columns"},
        {"agent,compute,bandwidth\n0,1e9,10 furlongs\n", ":2: bandwidth '10 furlongs'"},
        {"agent,compute,bandwidth\n0,fast,1e6\n", ":2: compute 'fast'"},
        {"# nothing\n\n", "empty: expected a header"},
        {"compute,bandwidth\n", ":1: a header and no agent row"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        write_text(in_dir(&d, "p.csv"), cases[c].text);
        hs_diag_clear(&diag);
        expect_error(device_profile_read(in_dir(&d, "p.csv"), &p, &diag), HS_E_INPUT, &diag, "p.csv", cases[c].want);
        ck_assert_ptr_null(p.compute);
    }
    hs_diag_clear(&diag);
    expect_error(device_profile_read(in_dir(&d, "none.csv"), &p, &diag), HS_E_INPUT, &diag, "none.csv: not found", NULL);
    ck_assert_int_eq(mkfifo(in_dir(&d, "fifo.csv"), 0600), 0);
    hs_diag_clear(&diag);
    expect_error(device_profile_read(in_dir(&d, "fifo.csv"), &p, &diag), HS_E_INPUT, &diag, "fifo.csv: is a FIFO",
                 NULL);
    hs_diag_clear(&diag);
    expect_error(device_profile_read(d.path, &p, &diag), HS_E_INPUT, &diag, "directory", NULL);
    write_bytes(in_dir(&d, "p.csv"), "compute,bandwidth\n1,\0\n", 22);
    hs_diag_clear(&diag);
    expect_error(device_profile_read(in_dir(&d, "p.csv"), &p, &diag), HS_E_INPUT, &diag, "NUL byte", NULL);
    dir_remove(&d);
}
END_TEST

START_TEST(test_device_profile_from_fedscale_script)
{
    /* the script's output is what the reader reads: FedScale's units converted once */
    if (system("command -v python3 > /dev/null 2>&1") != 0 || access("scripts/fedscale-traces", R_OK) != 0) return;
    Dir d;
    dir_make(&d);
    char command[1024];
    snprintf(command, sizeof command,
             "python3 -c \"import pickle; pickle.dump({5: {'computation': 20.0, 'communication': 1000.0}, "
             "9: {'computation': 2.5, 'communication': 40.0}}, open('%s', 'wb'))\" && "
             "python3 scripts/fedscale-traces --capacity %s --clients 2 --sample-flops 3e6 --latency 0.01 "
             "--profile %s",
             in_dir(&d, "cap.pkl"), in_dir(&d, "cap.pkl"), in_dir(&d, "profile.csv"));
    ck_assert_int_eq(system(command), 0);
    DeviceProfile p;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_msg(device_profile_read(in_dir(&d, "profile.csv"), &p, &diag) == HS_OK, "%s", diag.message);
    ck_assert_int_eq(p.n_agents, 2);
    /* 3e6 FLOP a sample at 3 x 20 ms: 5e7 FLOP/s; 1000 kbit/s: 128,000 B/s */
    ck_assert(p.compute[0] == 5e7 && p.bandwidth[0] == 128000.0 && p.latency[0] == 0.01);
    ck_assert(p.compute[1] == 4e8 && p.bandwidth[1] == 5120.0);
    device_profile_free(&p);
    dir_remove(&d);
}
END_TEST

static Suite *readers_suite(void)
{
    Suite *s = suite_create("readers");
    TCase *tc = tcase_create("readers");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_input_file_types_and_limits);
    tcase_add_test(tc, test_cifar10_every_value);
    tcase_add_test(tc, test_cifar10_malformed);
    tcase_add_test(tc, test_cifar100_fine_and_coarse);
    tcase_add_test(tc, test_normalize_per_channel);
    tcase_add_test(tc, test_augment_deterministic_and_exact);
    tcase_add_test(tc, test_leaf_every_value_and_writers);
    tcase_add_test(tc, test_leaf_floats);
    tcase_add_test(tc, test_leaf_malformed);
    tcase_add_test(tc, test_leaf_folders);
    tcase_add_test(tc, test_partition_natural);
    tcase_add_test(tc, test_npy_every_value);
    tcase_add_test(tc, test_npy_malformed);
    tcase_add_test(tc, test_cache_hit_stale_corrupt);
    tcase_add_test(tc, test_cache_hash_once);
    tcase_add_test(tc, test_cache_leaf_writers);
    tcase_add_test(tc, test_device_profile);
    tcase_add_test(tc, test_device_profile_from_fedscale_script);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(readers_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
