/* check_data.c — the IDX loader on small gzip fixtures written here with zlib (good,
 * missing, corrupt, truncated, mismatched), the real Fashion-MNIST when installed (skipped
 * otherwise), the synthetic mixture, and the partitions: disjoint, sizes honoured,
 * Dirichlet label skew growing as alpha falls, shards seeing few labels, errors. */
#include "models/dataset.h"
#include "models/partition.h"
#include "base/hs_error.h"

#include <check.h>
#include <errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* ------------------------------------------------------------------ fixtures */

typedef struct Fixture {
    char dir[64];
} Fixture;

static void fixture_open(Fixture *f)
{
    strcpy(f->dir, "/tmp/hetsim-idx-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
}

static void fixture_path(const Fixture *f, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", f->dir, name);
}

static void fixture_close(Fixture *f)
{
    const char *names[] = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                           "t10k-labels-idx1-ubyte.gz"};
    char path[128];
    for (int i = 0; i < 4; i++) {
        fixture_path(f, names[i], path, sizeof path);
        unlink(path);
    }
    rmdir(f->dir);
}

/* Writes a gzip'd IDX file: magic 0x000008<ndims>, dims, then `bytes` payload bytes
 * (fewer than the dims promise makes a truncated file, more a trailing-data one). */
static void write_idx(const Fixture *f, const char *name, int ndims, const int *dims, const uint8_t *payload,
                      size_t bytes)
{
    char path[128];
    fixture_path(f, name, path, sizeof path);
    gzFile gz = gzopen(path, "wb");
    ck_assert_ptr_nonnull(gz);
    unsigned char header[16] = {0, 0, 8, (unsigned char)ndims};
    for (int d = 0; d < ndims; d++) {
        uint32_t v = (uint32_t)dims[d];
        header[4 + 4 * d] = (unsigned char)(v >> 24);
        header[5 + 4 * d] = (unsigned char)(v >> 16);
        header[6 + 4 * d] = (unsigned char)(v >> 8);
        header[7 + 4 * d] = (unsigned char)v;
    }
    ck_assert_int_eq(gzwrite(gz, header, (unsigned)(4 + 4 * ndims)), 4 + 4 * ndims);
    if (bytes) ck_assert_int_eq(gzwrite(gz, payload, (unsigned)bytes), (int)bytes);
    ck_assert_int_eq(gzclose(gz), Z_OK);
}

/* Writes a complete, valid fixture: n_train images of rows x cols and n_test, pixel
 * value (i * 7 + j) % 256 for image i, pixel j; label i % 10. */
static void write_fixture(const Fixture *f, int n_train, int n_test, int rows, int cols)
{
    for (int set = 0; set < 2; set++) {
        int n = set ? n_test : n_train;
        size_t pixels = (size_t)n * rows * cols;
        uint8_t *img = malloc(pixels), *lab = malloc((size_t)n);
        for (int i = 0; i < n; i++) {
            lab[i] = (uint8_t)(i % 10);
            for (int j = 0; j < rows * cols; j++) img[(size_t)i * rows * cols + j] = (uint8_t)((i * 7 + j) % 256);
        }
        int idims[3] = {n, rows, cols}, ldims[1] = {n};
        write_idx(f, set ? "t10k-images-idx3-ubyte.gz" : "train-images-idx3-ubyte.gz", 3, idims, img, pixels);
        write_idx(f, set ? "t10k-labels-idx1-ubyte.gz" : "train-labels-idx1-ubyte.gz", 1, ldims, lab, (size_t)n);
        free(img);
        free(lab);
    }
}

static DataSpec fashion_spec(const char *path)
{
    DataSpec d;
    memset(&d, 0, sizeof d);
    d.dataset = DATA_FASHION_MNIST;
    snprintf(d.path, sizeof d.path, "%s", path);
    return d;
}

static int load_expect(const DataSpec *d, int status, const char *must_contain)
{
    Dataset *ds = (Dataset *)1;
    HsDiag diag;
    hs_diag_clear(&diag);
    int got = dataset_load(d, NULL, &ds, &diag);
    ck_assert_int_eq(got, status);
    if (status != HS_OK) {
        ck_assert_ptr_null(ds);
        ck_assert_int_eq(diag.status, status);
        ck_assert_msg(strstr(diag.message, must_contain) != NULL, "message '%s' lacks '%s'", diag.message,
                      must_contain);
    }
    dataset_free(ds);
    return got;
}

/* ------------------------------------------------------------------ IDX loader */

START_TEST(test_idx_fixture_loads)
{
    Fixture f;
    fixture_open(&f);
    write_fixture(&f, 12, 5, 4, 3);
    DataSpec d = fashion_spec(f.dir);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_load(&d, NULL, &ds, &diag), HS_OK);
    ck_assert_int_eq(ds->n_train, 12);
    ck_assert_int_eq(ds->n_test, 5);
    ck_assert_int_eq(ds->channels, 1);
    ck_assert_int_eq(ds->height, 4);
    ck_assert_int_eq(ds->width, 3);
    ck_assert_int_eq(ds->features, 12);
    ck_assert_int_eq(ds->classes, 10);
    /* pixels are kept as bytes and gathered as byte / 255 */
    ck_assert_ptr_null(ds->train_x);
    float all[12 * 12];
    int labels[12];
    dataset_gather_range(ds, 0, 0, 12, all, labels);
    for (int i = 0; i < 12; i++) {
        ck_assert_int_eq(labels[i], i % 10);
        for (int j = 0; j < 12; j++) {
            ck_assert_int_eq(ds->train_pixels[i * 12 + j], (i * 7 + j) % 256);
            ck_assert_float_eq(all[i * 12 + j], (float)((i * 7 + j) % 256) / 255.0f);
        }
    }
    dataset_gather_range(ds, 1, 4, 1, all, labels);
    ck_assert_int_eq(labels[0], 4);
    ck_assert_float_eq(all[11], (float)(4 * 7 + 11) / 255.0f);
    /* gather by index, and rows 0..B-1 without one */
    int idx[2] = {11, 3}, y[2];
    float x[24];
    dataset_gather(ds, 0, idx, 2, x, y);
    ck_assert_int_eq(y[0], 1);
    ck_assert_int_eq(y[1], 3);
    dataset_gather_range(ds, 0, 0, 12, all, labels);
    ck_assert_mem_eq(x, all + 11 * 12, 12 * sizeof(float));
    ck_assert_mem_eq(x + 12, all + 3 * 12, 12 * sizeof(float));
    dataset_gather(ds, 1, NULL, 2, x, y);
    dataset_gather_range(ds, 1, 0, 2, all, labels);
    ck_assert_mem_eq(x, all, 24 * sizeof(float));
    ck_assert_mem_eq(y, labels, 2 * sizeof(int));
    dataset_free(ds);
    /* test_samples keeps the first images of the test set */
    d.test_samples = 3;
    ck_assert_int_eq(dataset_load(&d, NULL, &ds, &diag), HS_OK);
    ck_assert_int_eq(ds->n_test, 3);
    dataset_free(ds);
    dataset_free(NULL);
    fixture_close(&f);
}
END_TEST

START_TEST(test_idx_missing_files)
{
    Fixture f;
    fixture_open(&f);
    DataSpec d = fashion_spec(f.dir);
    load_expect(&d, HS_E_MISSING, "apt-get install dataset-fashion-mnist");
    load_expect(&d, HS_E_MISSING, "labels-idx1-ubyte.gz");
    DataSpec nowhere = fashion_spec("/nonexistent/folder");
    load_expect(&nowhere, HS_E_MISSING, "/nonexistent/folder/train-");
    /* only the test files missing */
    write_fixture(&f, 3, 2, 2, 2);
    char path[128];
    fixture_path(&f, "t10k-images-idx3-ubyte.gz", path, sizeof path);
    unlink(path);
    load_expect(&d, HS_E_MISSING, "t10k-images-idx3-ubyte.gz");
    fixture_close(&f);
}
END_TEST

START_TEST(test_idx_corrupt_files)
{
    Fixture f;
    fixture_open(&f);
    DataSpec d = fashion_spec(f.dir);
    uint8_t payload[64];
    for (int i = 0; i < 64; i++) payload[i] = (uint8_t)(i % 10);
    int dims3[3] = {4, 2, 2}, dims1[1] = {4};

    /* wrong magic: a label file where images belong */
    write_fixture(&f, 4, 2, 2, 2);
    write_idx(&f, "train-images-idx3-ubyte.gz", 1, dims1, payload, 4);
    load_expect(&d, HS_E_IO, "train-images-idx3-ubyte.gz: corrupt IDX file: magic number 0x00000801");

    /* truncated payload */
    write_fixture(&f, 4, 2, 2, 2);
    write_idx(&f, "train-images-idx3-ubyte.gz", 3, dims3, payload, 15);
    load_expect(&d, HS_E_IO, "truncated: expected 16 data bytes, found 15");

    /* trailing data */
    write_fixture(&f, 4, 2, 2, 2);
    write_idx(&f, "t10k-labels-idx1-ubyte.gz", 1, (int[]){2}, payload, 3);
    load_expect(&d, HS_E_IO, "t10k-labels-idx1-ubyte.gz: corrupt IDX file: trailing bytes");

    /* short header */
    write_fixture(&f, 4, 2, 2, 2);
    write_idx(&f, "train-labels-idx1-ubyte.gz", 0, NULL, payload, 0);
    load_expect(&d, HS_E_IO, "train-labels-idx1-ubyte.gz: corrupt IDX file");

    /* label and image counts differ */
    write_fixture(&f, 4, 2, 2, 2);
    write_idx(&f, "train-labels-idx1-ubyte.gz", 1, (int[]){3}, payload, 3);
    load_expect(&d, HS_E_IO, "3 labels for the 4 images");

    /* a label outside 0..9 */
    write_fixture(&f, 4, 2, 2, 2);
    uint8_t bad_labels[4] = {0, 1, 12, 3};
    write_idx(&f, "train-labels-idx1-ubyte.gz", 1, dims1, bad_labels, 4);
    load_expect(&d, HS_E_IO, "label 12 of sample 2");

    /* zero-sized dimension */
    write_fixture(&f, 4, 2, 2, 2);
    write_idx(&f, "train-images-idx3-ubyte.gz", 3, (int[]){4, 0, 2}, payload, 0);
    load_expect(&d, HS_E_IO, "implausible size 0");

    /* a damaged gzip trailer (CRC) */
    write_fixture(&f, 4, 2, 2, 2);
    char path[128];
    fixture_path(&f, "t10k-images-idx3-ubyte.gz", path, sizeof path);
    FILE *fp = fopen(path, "r+b");
    ck_assert_ptr_nonnull(fp);
    fseek(fp, -8, SEEK_END);
    int c = fgetc(fp);
    fseek(fp, -8, SEEK_END);
    fputc(c ^ 0xff, fp);
    fclose(fp);
    load_expect(&d, HS_E_IO, "t10k-images-idx3-ubyte.gz: corrupt");

    /* train and test image sizes differ */
    write_fixture(&f, 4, 2, 2, 2);
    write_idx(&f, "t10k-images-idx3-ubyte.gz", 3, (int[]){2, 1, 4}, payload, 8);
    load_expect(&d, HS_E_IO, "training images are 2x2 but test images 1x4");
    fixture_close(&f);
}
END_TEST

START_TEST(test_real_fashion_mnist)
{
    const char *dir = "/usr/share/datasets/fashion-mnist";
    char probe[256];
    snprintf(probe, sizeof probe, "%s/train-images-idx3-ubyte.gz", dir);
    if (access(probe, R_OK) != 0) {
        /* CI installs dataset-fashion-mnist (.ci/run), so there a missing copy is a failure;
         * elsewhere the test skips and says so */
        const char *ci = getenv("CI");
        int in_ci = ci != NULL && *ci && strcmp(ci, "false") != 0 && strcmp(ci, "0") != 0;
        ck_assert_msg(!in_ci, "%s: %s (CI=%s: the Debian package dataset-fashion-mnist must be installed)", probe,
                      strerror(errno), ci);
        fprintf(stderr, "check_data: %s not installed, skipping the real Fashion-MNIST test\n", dir);
        return;
    }
    DataSpec d = fashion_spec(dir);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_load(&d, NULL, &ds, &diag), HS_OK);
    ck_assert_int_eq(ds->n_train, 60000);
    ck_assert_int_eq(ds->n_test, 10000);
    ck_assert_int_eq(ds->features, 784);
    ck_assert_int_eq(ds->height, 28);
    int counts[10] = {0}, test_counts[10] = {0};
    for (int i = 0; i < ds->n_train; i++) counts[ds->train_y[i]]++;
    for (int i = 0; i < ds->n_test; i++) test_counts[ds->test_y[i]]++;
    for (int k = 0; k < 10; k++) {
        ck_assert_int_eq(counts[k], 6000);
        ck_assert_int_eq(test_counts[k], 1000);
    }
    float lo = 1, hi = 0, *x = malloc(sizeof(float) * 784 * 1000);
    int *y = malloc(sizeof(int) * 1000);
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_nonnull(y);
    dataset_gather_range(ds, 0, 0, 1000, x, y);
    for (size_t i = 0; i < (size_t)784 * 1000; i++) lo = fminf(lo, x[i]), hi = fmaxf(hi, x[i]);
    free(x), free(y);
    ck_assert_float_eq(lo, 0.0f);
    ck_assert_float_eq(hi, 1.0f);
    dataset_free(ds);
}
END_TEST

/* ------------------------------------------------------------------ synthetic */

static DataSpec synthetic_spec(int features, int classes, int n, double separation)
{
    DataSpec d;
    memset(&d, 0, sizeof d);
    d.dataset = DATA_SYNTHETIC;
    d.features = features;
    d.classes = classes;
    d.train_samples = n;
    d.separation = separation;
    d.alpha = 0.5;
    d.shards_per_agent = 2;
    return d;
}

static Dataset *synthetic(const DataSpec *d, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    ck_assert_int_eq(dataset_load(d, r, &ds, &diag), HS_OK);
    gsl_rng_free(r);
    return ds;
}

START_TEST(test_synthetic_mixture)
{
    DataSpec d = synthetic_spec(8, 3, 3000, 30.0);
    Dataset *a = synthetic(&d, 1), *b = synthetic(&d, 1), *c = synthetic(&d, 2);
    ck_assert_int_eq(a->n_train, 3000);
    ck_assert_int_eq(a->n_test, 501); /* train_samples / 6 + 1 */
    ck_assert_int_eq(a->features, 8);
    ck_assert_int_eq(a->channels, 8);
    ck_assert_int_eq(a->height * a->width, 1);
    ck_assert_mem_eq(a->train_x, b->train_x, sizeof(float) * 3000 * 8);
    ck_assert_mem_eq(a->test_y, b->test_y, 501);
    ck_assert(memcmp(a->train_x, c->train_x, sizeof(float) * 3000 * 8) != 0);
    /* class means estimated on train classify the test set (separation 30 sd: easy) */
    double mean[3][8] = {{0}};
    int count[3] = {0};
    for (int i = 0; i < a->n_train; i++) {
        count[a->train_y[i]]++;
        for (int j = 0; j < 8; j++) mean[a->train_y[i]][j] += a->train_x[i * 8 + j];
    }
    for (int k = 0; k < 3; k++) {
        ck_assert_int_gt(count[k], 800);
        for (int j = 0; j < 8; j++) mean[k][j] /= count[k];
    }
    int right = 0;
    for (int i = 0; i < a->n_test; i++) {
        int best = 0;
        double best_d = INFINITY;
        for (int k = 0; k < 3; k++) {
            double dist = 0;
            for (int j = 0; j < 8; j++) dist += pow(a->test_x[i * 8 + j] - mean[k][j], 2);
            if (dist < best_d) best_d = dist, best = k;
        }
        right += best == a->test_y[i];
    }
    ck_assert_int_gt(right, 0.95 * a->n_test);
    /* noise has unit variance around the means */
    double var = 0;
    for (int i = 0; i < a->n_train; i++)
        for (int j = 0; j < 8; j++) var += pow(a->train_x[i * 8 + j] - mean[a->train_y[i]][j], 2);
    var /= a->n_train * 8.0;
    ck_assert_double_eq_tol(var, 1.0, 0.05);
    dataset_free(a), dataset_free(b), dataset_free(c);
    /* explicit test size, and bad specs */
    d.test_samples = 7;
    a = synthetic(&d, 1);
    ck_assert_int_eq(a->n_test, 7);
    dataset_free(a);
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    d.classes = 1;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    ck_assert_int_eq(dataset_load(&d, r, &ds, &diag), HS_E_INPUT);
    ck_assert_ptr_null(ds);
    gsl_rng_free(r);
}
END_TEST

/* ------------------------------------------------------------------ partitions */

static Partition *make_partition(const Dataset *ds, const DataSpec *d, int n, const int *sizes, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    Partition *p;
    HsDiag diag;
    hs_diag_clear(&diag);
    int status = partition_make(ds, d, n, sizes, r, &p, &diag);
    ck_assert_msg(status == HS_OK, "partition_make: %s", diag.message);
    gsl_rng_free(r);
    return p;
}

/* Disjoint, in range, and of the requested sizes. */
static void check_partition_shape(const Partition *p, const Dataset *ds, const int *sizes)
{
    char *seen = calloc((size_t)ds->n_train, 1);
    size_t total = 0;
    for (int a = 0; a < partition_n_agents(p); a++) {
        int count;
        const int *idx = partition_indices(p, a, &count);
        ck_assert_int_eq(count, sizes ? sizes[a] : ds->n_train / partition_n_agents(p));
        for (int i = 0; i < count; i++) {
            ck_assert(idx[i] >= 0 && idx[i] < ds->n_train);
            ck_assert_msg(!seen[idx[i]], "sample %d held twice", idx[i]);
            seen[idx[i]] = 1;
        }
        total += (size_t)count;
    }
    ck_assert_uint_eq(partition_total(p), total);
    free(seen);
}

/* Mean over agents (holding >= 100 samples) of the total-variation distance between the agent's label
 * distribution and the data set's. */
static double label_skew(const Partition *p, const Dataset *ds)
{
    double global[256] = {0}, skew = 0;
    for (int i = 0; i < ds->n_train; i++) global[ds->train_y[i]] += 1.0 / ds->n_train;
    int agents = 0;
    for (int a = 0; a < partition_n_agents(p); a++) {
        int count;
        const int *idx = partition_indices(p, a, &count);
        if (count < 100) continue; /* tiny agents are skewed by chance */
        double local[256] = {0}, tv = 0;
        for (int i = 0; i < count; i++) local[ds->train_y[idx[i]]] += 1.0 / count;
        for (int k = 0; k < ds->classes; k++) tv += fabs(local[k] - global[k]) / 2;
        skew += tv;
        agents++;
    }
    return skew / agents;
}

START_TEST(test_partition_iid_and_sizes)
{
    DataSpec d = synthetic_spec(2, 10, 5000, 1.0);
    Dataset *ds = synthetic(&d, 3);
    int sizes[7] = {100, 0, 1, 2000, 333, 1500, 1066}; /* sums to 5000: all samples */
    d.partition = PART_IID;
    Partition *p = make_partition(ds, &d, 7, sizes, 1);
    check_partition_shape(p, ds, sizes);
    ck_assert_uint_eq(partition_total(p), 5000);
    ck_assert_double_lt(label_skew(p, ds), 0.1);
    int count;
    ck_assert_ptr_null(partition_indices(p, 7, &count));
    ck_assert_int_eq(count, 0);
    /* same seed, same partition; another seed, another */
    Partition *q = make_partition(ds, &d, 7, sizes, 1), *other = make_partition(ds, &d, 7, sizes, 2);
    int nq;
    ck_assert_mem_eq(partition_indices(p, 3, &count), partition_indices(q, 3, &nq), sizeof(int) * 2000);
    ck_assert(memcmp(partition_indices(p, 3, &count), partition_indices(other, 3, &nq), sizeof(int) * 2000) != 0);
    partition_free(p), partition_free(q), partition_free(other);
    /* NULL sizes: an even share */
    p = make_partition(ds, &d, 3, NULL, 1);
    check_partition_shape(p, ds, NULL);
    ck_assert_uint_eq(partition_total(p), 4998);
    partition_free(p);
    partition_free(NULL);
    dataset_free(ds);
}
END_TEST

START_TEST(test_partition_dirichlet_skew)
{
    DataSpec d = synthetic_spec(2, 10, 20000, 1.0);
    Dataset *ds = synthetic(&d, 4);
    int sizes[20];
    for (int a = 0; a < 20; a++) sizes[a] = 400 + 20 * a; /* 11,800 in total */
    d.partition = PART_DIRICHLET;
    const double alphas[] = {100.0, 1.0, 0.05};
    double skew[3];
    for (int i = 0; i < 3; i++) {
        d.alpha = alphas[i];
        Partition *p = make_partition(ds, &d, 20, sizes, 5);
        check_partition_shape(p, ds, sizes);
        skew[i] = label_skew(p, ds);
        partition_free(p);
    }
    ck_assert_msg(skew[0] < 0.15 && skew[0] < skew[1] && skew[1] < skew[2] && skew[2] > 0.6,
                  "skew at alpha 100, 1, 0.05: %.3f %.3f %.3f", skew[0], skew[1], skew[2]);
    /* every sample handed out: later agents take what the classes have left */
    int all[4] = {5000, 5000, 5000, 5000};
    d.alpha = 0.1;
    Partition *p = make_partition(ds, &d, 4, all, 6);
    check_partition_shape(p, ds, all);
    partition_free(p);
    /* tiny alpha: Gamma draws underflow, each agent still gets a valid distribution */
    d.alpha = 1e-6;
    p = make_partition(ds, &d, 20, sizes, 7);
    check_partition_shape(p, ds, sizes);
    ck_assert_double_gt(label_skew(p, ds), 0.8);
    partition_free(p);
    dataset_free(ds);
}
END_TEST

START_TEST(test_partition_shards)
{
    DataSpec d = synthetic_spec(2, 10, 10000, 1.0);
    Dataset *ds = synthetic(&d, 8);
    d.partition = PART_SHARDS;
    d.shards_per_agent = 2;
    int sizes[20];
    for (int a = 0; a < 20; a++) sizes[a] = 500;
    Partition *p = make_partition(ds, &d, 20, sizes, 9);
    check_partition_shape(p, ds, sizes);
    for (int a = 0; a < 20; a++) {
        int count, labels[10] = {0}, distinct = 0;
        const int *idx = partition_indices(p, a, &count);
        for (int i = 0; i < count; i++) labels[ds->train_y[idx[i]]] = 1;
        for (int k = 0; k < 10; k++) distinct += labels[k];
        ck_assert_int_le(distinct, 4); /* 2 shards of 250 rows, each across at most 2 labels */
    }
    ck_assert_double_gt(label_skew(p, ds), 0.5);
    partition_free(p);
    /* uneven sizes, sizes not divisible by the shard count */
    int uneven[5] = {7, 1, 0, 1234, 99};
    d.shards_per_agent = 3;
    p = make_partition(ds, &d, 5, uneven, 10);
    check_partition_shape(p, ds, uneven);
    partition_free(p);
    dataset_free(ds);
}
END_TEST

START_TEST(test_partition_errors)
{
    DataSpec d = synthetic_spec(2, 3, 100, 1.0);
    Dataset *ds = synthetic(&d, 11);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    Partition *p = (Partition *)1;
    HsDiag diag;
    int too_many[3] = {50, 30, 21};
    hs_diag_clear(&diag);
    ck_assert_int_eq(partition_make(ds, &d, 3, too_many, r, &p, &diag), HS_E_INPUT);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(diag.message, "would hold 101 samples but the training set has only 100"), "%s",
                  diag.message);
    int negative[2] = {5, -1};
    hs_diag_clear(&diag);
    ck_assert_int_eq(partition_make(ds, &d, 2, negative, r, &p, &diag), HS_E_INPUT);
    hs_diag_clear(&diag);
    ck_assert_int_eq(partition_make(ds, &d, 0, NULL, r, &p, &diag), HS_E_INPUT);
    d.partition = PART_DIRICHLET;
    d.alpha = 0;
    hs_diag_clear(&diag);
    ck_assert_int_eq(partition_make(ds, &d, 2, NULL, r, &p, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "alpha") != NULL);
    d.partition = PART_SHARDS;
    d.shards_per_agent = 0;
    hs_diag_clear(&diag);
    ck_assert_int_eq(partition_make(ds, &d, 2, NULL, r, &p, &diag), HS_E_INPUT);
    ck_assert(strstr(diag.message, "shards") != NULL);
    gsl_rng_free(r);
    dataset_free(ds);
}
END_TEST

/* ------------------------------------------------------------------ domains */

START_TEST(test_rotation)
{
    /* a 4 x 5 image with distinct pixels: 0 degrees copies, 90 moves pixels exactly
     * (counter-clockwise: out(r, c) = in(c, w-1-r) for a square image), four quarter turns
     * give the image back, 180 reverses it */
    uint8_t square[25], out[25], back[25], tmp[25];
    for (int j = 0; j < 25; j++) square[j] = (uint8_t)(10 * j + 1);
    dataset_rotate(square, out, 5, 5, 0);
    ck_assert_mem_eq(out, square, 25);
    dataset_rotate(square, out, 5, 5, 90);
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 5; c++) ck_assert_int_eq(out[r * 5 + c], square[c * 5 + (4 - r)]);
    memcpy(tmp, square, 25);
    for (int k = 0; k < 4; k++) {
        dataset_rotate(tmp, back, 5, 5, 90);
        memcpy(tmp, back, 25);
    }
    ck_assert_mem_eq(back, square, 25);
    dataset_rotate(square, out, 5, 5, -180);
    for (int j = 0; j < 25; j++) ck_assert_int_eq(out[j], square[24 - j]);
    /* 45 degrees: the centre pixel stays, corners fall outside (0), and a pixel between
     * four others is their bilinear mix, rounded: by hand for a 3 x 3 image */
    uint8_t three[9] = {0, 0, 0, 0, 200, 0, 0, 0, 0}, rotated[9];
    dataset_rotate(three, rotated, 3, 3, 45);
    ck_assert_int_eq(rotated[4], 200);
    /* out(0, 1), at (x 0, y 1) from the centre, comes from (x, y) = (sin 45, cos 45) =
     * (0.707, 0.707): row 1 - 0.707 = 0.293, col 1 + 0.707; between rows 0 and 1 and
     * columns 1 and 2, in(1, 1) = 200 weighs 0.293 (row) x (1 - 0.707) (column) */
    double w = (1 - M_SQRT1_2) * (1 - M_SQRT1_2);
    ck_assert_int_eq(rotated[1], (int)floor(200 * w + 0.5));
    ck_assert_int_eq(rotated[0], 0);
}
END_TEST

/* The paper's counts, by hand. 50,000 rows in 5 training domains of 10,000 (a sixth,
 * held out, has size 0). */
START_TEST(test_domain_counts_by_hand)
{
    int sizes[6] = {10000, 10000, 10000, 10000, 10000, 0}, counts[16 * 6];
    /* 10 agents >= 5 domains: two main agents per domain (ties to the first domain);
     * lambda 0.1: main domain 10000 (0.9/2 + 0.1/10) = 4600, others 10000 (0.1/10) = 100 */
    ck_assert_int_eq(partition_domain_counts(sizes, 6, 10, 0.1, counts), HS_OK);
    for (int c = 0; c < 10; c++)
        for (int d = 0; d < 6; d++)
            ck_assert_int_eq(counts[c * 6 + d], d == 5 ? 0 : d == c / 2 ? 4600 : 100);
    /* lambda 1: everyone 1000 of each; lambda 0: 5000 of its main domain only */
    ck_assert_int_eq(partition_domain_counts(sizes, 6, 10, 1, counts), HS_OK);
    for (int c = 0; c < 10; c++)
        for (int d = 0; d < 5; d++) ck_assert_int_eq(counts[c * 6 + d], 1000);
    ck_assert_int_eq(partition_domain_counts(sizes, 6, 10, 0, counts), HS_OK);
    for (int c = 0; c < 10; c++)
        for (int d = 0; d < 5; d++) ck_assert_int_eq(counts[c * 6 + d], d == c / 2 ? 5000 : 0);
    /* 7 agents over sizes 10001, 10000, 9999, 9999: main agents 2, 2, 2, 1 (one more each
     * to the domain with the most rows per main agent: 0, then 1, then 2); lambda 0.3:
     * agent 0 gets 10001 (0.7/2 + 0.3/7) = 3929.0 (truncated) of domain 0 and
     * 10000 (0.3/7) = 428.57 of domain 1; the remainders go to agents 0, 1, ... */
    int uneven[4] = {10001, 10000, 9999, 9999};
    ck_assert_int_eq(partition_domain_counts(uneven, 4, 7, 0.3, counts), HS_OK);
    const int expect[7][4] = {{3929, 429, 429, 429}, {3929, 429, 429, 429}, {429, 3929, 429, 429},
                              {429, 3929, 428, 429}, {429, 428, 3928, 428}, {428, 428, 3928, 428},
                              {428, 428, 428, 7427}};
    for (int c = 0; c < 7; c++)
        for (int d = 0; d < 4; d++) ck_assert_int_eq(counts[c * 4 + d], expect[c][d]);
    /* fewer agents than domains: whole domains dealt largest first (equal sizes: the
     * higher index first) to the least loaded agent; lambda 0.1 mixes in a tenth of an
     * even share: agent 0 gets domains 4 and 1, agent 1 domains 3 and 0, agent 2 domain 2 */
    ck_assert_int_eq(partition_domain_counts(sizes, 6, 3, 0.1, counts), HS_OK);
    const int three[3][6] = {{334, 9334, 334, 334, 9334, 0}, {9333, 333, 333, 9333, 333, 0},
                             {333, 333, 9333, 333, 333, 0}};
    for (int c = 0; c < 3; c++)
        for (int d = 0; d < 6; d++) ck_assert_int_eq(counts[c * 6 + d], three[c][d]);
    /* every row dealt exactly once, whatever the setting */
    const int agents[] = {1, 2, 3, 5, 6, 9, 16};
    const double lambdas[] = {0, 0.05, 0.1, 0.5, 0.999, 1};
    for (size_t a = 0; a < sizeof agents / sizeof *agents; a++)
        for (size_t l = 0; l < sizeof lambdas / sizeof *lambdas; l++) {
            ck_assert_int_eq(partition_domain_counts(uneven, 4, agents[a], lambdas[l], counts), HS_OK);
            for (int d = 0; d < 4; d++) {
                int total = 0;
                for (int c = 0; c < agents[a]; c++) {
                    ck_assert_int_ge(counts[c * 4 + d], 0);
                    total += counts[c * 4 + d];
                }
                ck_assert_msg(total == uneven[d], "%d agents, lambda %g, domain %d: %d of %d", agents[a],
                              lambdas[l], d, total, uneven[d]);
            }
        }
    ck_assert_int_eq(partition_domain_counts(sizes, 6, 3, 1.5, counts), HS_E_INPUT);
    int none[2] = {0, 0};
    ck_assert_int_eq(partition_domain_counts(none, 2, 3, 0.5, counts), HS_E_INPUT);
    /* the sizes of a training set: row k in domain k mod D, held-out domains 0 */
    DataSpec d;
    memset(&d, 0, sizeof d);
    d.n_domains = 4;
    d.held_out[2] = 1;
    int got[4];
    partition_domain_sizes(&d, 10, got);
    ck_assert(got[0] == 3 && got[1] == 3 && got[2] == 0 && got[3] == 2);
}
END_TEST

/* Partition statistics on a fixture of 600 images in 6 rotation domains, one held out:
 * every agent holds exactly its dealt rows of each domain, nobody holds a held-out row,
 * rows are disjoint, and the domain mix moves from one domain per agent (lambda 0) to
 * the common mix (lambda 1). */
START_TEST(test_partition_domains)
{
    Fixture f;
    fixture_open(&f);
    write_fixture(&f, 600, 60, 4, 4);
    DataSpec d = fashion_spec(f.dir);
    d.partition = PART_DOMAINS;
    d.n_domains = 6;
    for (int k = 0; k < 6; k++) d.domain_degrees[k] = 15 * k;
    d.held_out[5] = 1;
    Dataset *ds;
    HsDiag diag;
    hs_diag_clear(&diag);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    ck_assert_int_eq(dataset_load(&d, NULL, &ds, &diag), HS_OK);
    ck_assert_int_eq(ds->n_domains, 6);
    ck_assert_int_eq(dataset_domain(ds, 13), 1);
    /* domain 0 is not rotated; 90 would be exact, 15 blurs: row 1 differs from the fixture */
    ck_assert_int_eq(ds->train_pixels[0 * 16 + 5], (0 * 7 + 5) % 256);
    const double lambdas[] = {0, 0.1, 1};
    double spread[3];
    for (int l = 0; l < 3; l++) {
        d.lambda = lambdas[l];
        int sizes[6], counts[10 * 6], samples[10];
        partition_domain_sizes(&d, ds->n_train, sizes);
        ck_assert_int_eq(partition_domain_counts(sizes, 6, 10, d.lambda, counts), HS_OK);
        for (int c = 0; c < 10; c++) {
            samples[c] = 0;
            for (int k = 0; k < 6; k++) samples[c] += counts[c * 6 + k];
        }
        Partition *p = make_partition(ds, &d, 10, samples, 3);
        check_partition_shape(p, ds, samples);
        ck_assert_uint_eq(partition_total(p), 500); /* the five training domains, all of them */
        spread[l] = 0;
        for (int c = 0; c < 10; c++) {
            int count, held[6] = {0};
            const int *idx = partition_indices(p, c, &count);
            for (int i = 0; i < count; i++) held[dataset_domain(ds, idx[i])]++;
            ck_assert_int_eq(held[5], 0);
            double tv = 0;
            for (int k = 0; k < 6; k++) {
                ck_assert_int_eq(held[k], counts[c * 6 + k]);
                tv += fabs((double)held[k] / count - (k == 5 ? 0 : 0.2)) / 2;
            }
            spread[l] += tv / 10;
        }
        /* the same seed deals the same rows */
        Partition *q = make_partition(ds, &d, 10, samples, 3);
        int nq, np;
        ck_assert_mem_eq(partition_indices(p, 4, &np), partition_indices(q, 4, &nq), sizeof(int) * (size_t)np);
        partition_free(p);
        partition_free(q);
    }
    /* the domain-mix distance to the common mix: 0.8 with one domain each, 0 with all */
    ck_assert_msg(fabs(spread[0] - 0.8) < 1e-12 && spread[1] < spread[0] && spread[2] < 1e-12,
                  "spread %g %g %g", spread[0], spread[1], spread[2]);
    ck_assert(fabs(spread[1] - 0.72) < 1e-12); /* (1 - lambda) 0.8 */
    /* samples that disagree with the deal are a bug in the caller */
    int wrong[10] = {50, 50, 50, 50, 50, 50, 50, 50, 50, 49};
    Partition *p;
    hs_diag_clear(&diag);
    ck_assert_int_eq(partition_make(ds, &d, 10, wrong, r, &p, &diag), HS_E_INTERNAL);
    /* a data set loaded without its domains cannot be dealt by domain */
    DataSpec plain = fashion_spec(f.dir);
    Dataset *flat;
    ck_assert_int_eq(dataset_load(&plain, NULL, &flat, &diag), HS_OK);
    hs_diag_clear(&diag);
    ck_assert_int_eq(partition_make(flat, &d, 10, NULL, r, &p, &diag), HS_E_INPUT);
    dataset_free(flat);
    gsl_rng_free(r);
    dataset_free(ds);
    fixture_close(&f);
}
END_TEST

static Suite *dataset_suite(void)
{
    Suite *s = suite_create("dataset");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_idx_fixture_loads);
    tcase_add_test(tc, test_idx_missing_files);
    tcase_add_test(tc, test_idx_corrupt_files);
    tcase_add_test(tc, test_real_fashion_mnist);
    tcase_add_test(tc, test_synthetic_mixture);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *partition_suite(void)
{
    Suite *s = suite_create("partition");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_partition_iid_and_sizes);
    tcase_add_test(tc, test_partition_dirichlet_skew);
    tcase_add_test(tc, test_partition_shards);
    tcase_add_test(tc, test_partition_errors);
    tcase_add_test(tc, test_rotation);
    tcase_add_test(tc, test_domain_counts_by_hand);
    tcase_add_test(tc, test_partition_domains);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(dataset_suite());
    srunner_add_suite(runner, partition_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
