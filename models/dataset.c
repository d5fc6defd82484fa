/* dataset.c — the IDX loader (zlib), the synthetic Gaussian mixture, dataset_open's
 * dispatch to the readers (dataset_cifar.c, dataset_leaf.c, dataset_npy.c) through the
 * decoded-data cache (dataset_cache.c), normalisation, augmentation and gathering. The
 * whole set is read once into memory (Fashion-MNIST: 70,000 x 784 bytes = 55 MB);
 * agents never copy it, they gather batches by index. */
#include "models/dataset.h"

#include "models/dataset_internal.h"
#include "base/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#define DATASET_IDX_MAX_BYTES (1u << 30)

static const char dataset_package_hint[] =
    "install the Fashion-MNIST files with `apt-get install dataset-fashion-mnist` or set [data] path";

/* The IDX reader's format version in the cache key: bump it when decoding changes. */
#define DATASET_FASHION_CACHE_VERSION 1
/* Decoded sets smaller than this are not cached. */
#define DATASET_CACHE_MIN_BYTES (1u << 20)

static int dataset_read_idx_limited(const char *file, int expect_dims, uint64_t max_bytes, uint8_t **data,
                                    int dims[3], HsDiag *diag)
{
    *data = NULL;
    uint8_t *payload = NULL;
    gzFile gz = NULL;
    InputFile in;
    HsDiag opening;
    hs_diag_clear(&opening);
    int status = input_file_open(&in, file, max_bytes, HS_E_MISSING, &opening);
    if (status == HS_E_MISSING) /* most likely the Debian package is not installed */
        return hs_diag_set(diag, HS_E_MISSING, file, 0, "not found (%s)", dataset_package_hint);
    if (status != HS_OK) return hs_diag_set(diag, status, NULL, 0, "%s", opening.message);
    /* zlib owns the descriptor from here (gzclose closes it); the checks are done */
    gz = gzdopen(in.fd, "rb");
    if (!gz) {
        input_file_close(&in);
        return hs_diag_set(diag, HS_E_IO, file, 0, "cannot open: zlib error");
    }
    in.fd = -1;
    unsigned char header[16];
    int got = gzread(gz, header, 4);
    if (got != 4) {
        int zerr;
        const char *why = got < 0 ? gzerror(gz, &zerr) : "file too short for an IDX header";
        status = hs_diag_set(diag, HS_E_IO, file, 0, "corrupt IDX file: %s", why);
        goto fail;
    }
    if (header[0] != 0 || header[1] != 0 || header[2] != 0x08 || header[3] != expect_dims) {
        status = hs_diag_set(diag, HS_E_IO, file, 0,
                             "corrupt IDX file: magic number 0x%02x%02x%02x%02x, expected 0x000008%02x "
                             "(unsigned bytes, %d dimension%s)",
                             header[0], header[1], header[2], header[3], expect_dims, expect_dims,
                             expect_dims == 1 ? "" : "s");
        goto fail;
    }
    got = gzread(gz, header + 4, (unsigned)(4 * expect_dims));
    if (got != 4 * expect_dims) {
        int zerr;
        const char *why = got < 0 ? gzerror(gz, &zerr) : "file too short for an IDX header";
        status = hs_diag_set(diag, HS_E_IO, file, 0, "corrupt IDX file: %s", why);
        goto fail;
    }
    size_t total = 1;
    for (int d = 0; d < expect_dims; d++) {
        const unsigned char *p = header + 4 + 4 * d;
        uint32_t v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        if (v == 0 || v > DATASET_IDX_MAX_BYTES || (total *= v) > DATASET_IDX_MAX_BYTES) {
            status = hs_diag_set(diag, HS_E_IO, file, 0, "corrupt IDX file: implausible size %u in dimension %d",
                                 v, d);
            goto fail;
        }
        dims[d] = (int)v;
    }
    payload = malloc(total);
    if (!payload) {
        status = hs_diag_set(diag, HS_E_NOMEM, file, 0, "out of memory for %zu bytes", total);
        goto fail;
    }
    size_t have = 0;
    while (have < total) {
        int n = gzread(gz, payload + have, (unsigned)(total - have > (1u << 28) ? (1u << 28) : total - have));
        if (n < 0) {
            int zerr;
            status = hs_diag_set(diag, HS_E_IO, file, 0, "corrupt gzip data: %s", gzerror(gz, &zerr));
            goto fail;
        }
        if (n == 0) {
            status = hs_diag_set(diag, HS_E_IO, file, 0, "truncated: expected %zu data bytes, found %zu", total,
                                 have);
            goto fail;
        }
        have += (size_t)n;
    }
    /* Reading past the payload makes zlib check the gzip trailer (CRC and length). */
    unsigned char extra;
    int n = gzread(gz, &extra, 1);
    if (n != 0) {
        int zerr;
        status = hs_diag_set(diag, HS_E_IO, file, 0, "corrupt IDX file: %s",
                             n < 0 ? gzerror(gz, &zerr) : "trailing bytes after the data");
        goto fail;
    }
    gzclose(gz);
    *data = payload;
    return HS_OK;
fail:
    if (gz) gzclose(gz);
    free(payload);
    return status;
}

int dataset_read_idx(const char *file, int expect_dims, uint8_t **data, int dims[3], HsDiag *diag)
{
    return dataset_read_idx_limited(file, expect_dims, DATASET_MAX_FILE_BYTES, data, dims, diag);
}

void dataset_free(Dataset *ds)
{
    if (!ds) return;
    if (ds->mapping) {
        munmap(ds->mapping, ds->mapping_size);
    } else {
        free(ds->train_pixels);
        free(ds->test_pixels);
        free(ds->train_x);
        free(ds->test_x);
        free(ds->train_y);
        free(ds->test_y);
        free(ds->writer_start);
        free(ds->writer_names);
    }
    free(ds->norm_mean);
    free(ds->norm_std);
    free(ds);
}

/* Reads one images+labels pair into x (n, rows*cols) and y. */
static int dataset_read_pair(const char *folder, const char *images_name, const char *labels_name,
                             uint64_t max_bytes, uint8_t **x, uint8_t **y, int *n, int *rows, int *cols,
                             HsDiag *diag)
{
    char images_file[4200], labels_file[4200];
    uint8_t *pixels = NULL, *labels = NULL;
    int image_dims[3], label_dims[3], status;
    snprintf(images_file, sizeof images_file, "%s/%s", folder, images_name);
    snprintf(labels_file, sizeof labels_file, "%s/%s", folder, labels_name);
    /* Check both names first, so a missing package is reported as such. */
    if ((status = dataset_read_idx_limited(labels_file, 1, max_bytes, &labels, label_dims, diag)) ||
        (status = dataset_read_idx_limited(images_file, 3, max_bytes, &pixels, image_dims, diag)))
        goto fail;
    if (image_dims[0] != label_dims[0]) {
        status = hs_diag_set(diag, HS_E_IO, labels_file, 0, "%d labels for the %d images of %s", label_dims[0],
                             image_dims[0], images_file);
        goto fail;
    }
    for (int i = 0; i < label_dims[0]; i++)
        if (labels[i] >= 10) {
            status = hs_diag_set(diag, HS_E_IO, labels_file, 0, "label %d of sample %d is not a class 0..9",
                                 labels[i], i);
            goto fail;
        }
    *n = image_dims[0];
    *rows = image_dims[1];
    *cols = image_dims[2];
    *x = pixels;
    *y = labels;
    return HS_OK;
fail:
    free(pixels);
    free(labels);
    return status;
}

static const char *const dataset_fashion_files[4] = {"train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
                                                     "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"};

int dataset_read_fashion(const char *folder, uint64_t max_bytes, Dataset *ds, HsDiag *diag)
{
    int rows, cols, test_rows, test_cols, status;
    if ((status = dataset_read_pair(folder, dataset_fashion_files[1], dataset_fashion_files[0], max_bytes,
                                    &ds->train_pixels, &ds->train_y, &ds->n_train, &rows, &cols, diag)) ||
        (status = dataset_read_pair(folder, dataset_fashion_files[3], dataset_fashion_files[2], max_bytes,
                                    &ds->test_pixels, &ds->test_y, &ds->n_test, &test_rows, &test_cols, diag)))
        return status;
    if (rows != test_rows || cols != test_cols)
        return hs_diag_set(diag, HS_E_IO, folder, 0, "training images are %dx%d but test images %dx%d", rows,
                           cols, test_rows, test_cols);
    ds->channels = 1;
    ds->height = rows;
    ds->width = cols;
    ds->features = rows * cols;
    ds->classes = 10;
    return HS_OK;
}

void dataset_rotate(const uint8_t *in, uint8_t *out, int height, int width, double degrees)
{
    /* multiples of 90 degrees: exact cosines and sines, so pixels move without blur */
    double turns = degrees / 90.0, c, s;
    if (turns == floor(turns)) {
        static const double cosines[4] = {1, 0, -1, 0}, sines[4] = {0, 1, 0, -1};
        int q = (int)fmod(fmod(turns, 4.0) + 4.0, 4.0);
        c = cosines[q];
        s = sines[q];
    } else {
        double radians = degrees * 3.14159265358979323846 / 180.0;
        c = cos(radians);
        s = sin(radians);
    }
    double cy = (height - 1) / 2.0, cx = (width - 1) / 2.0;
    for (int r = 0; r < height; r++)
        for (int col = 0; col < width; col++) {
            /* (x, y) with y up; the source is the point rotated back by -degrees */
            double x = col - cx, y = cy - r;
            double xs = c * x + s * y, ys = -s * x + c * y;
            double rs = cy - ys, cs = xs + cx;
            double r0 = floor(rs), c0 = floor(cs), fr = rs - r0, fc = cs - c0;
            double value = 0;
            for (int dr = 0; dr <= 1; dr++)
                for (int dc = 0; dc <= 1; dc++) {
                    double w = (dr ? fr : 1 - fr) * (dc ? fc : 1 - fc);
                    int rr = (int)r0 + dr, cc = (int)c0 + dc;
                    if (w == 0 || rr < 0 || rr >= height || cc < 0 || cc >= width) continue;
                    value += w * in[(size_t)rr * width + cc];
                }
            double rounded = floor(value + 0.5);
            out[(size_t)r * width + col] = (uint8_t)(rounded > 255 ? 255 : rounded < 0 ? 0 : rounded);
        }
}

/* Rotates every image of a set by its domain's angle, in place. */
static int dataset_rotate_set(const DataSpec *spec, uint8_t *pixels, int n, int height, int width)
{
    size_t f = (size_t)height * width;
    uint8_t *copy = malloc(f);
    if (!copy) return HS_E_NOMEM;
    for (int k = 0; k < n; k++) {
        double degrees = spec->domain_degrees[k % spec->n_domains];
        if (degrees == 0) continue;
        memcpy(copy, pixels + (size_t)k * f, f);
        dataset_rotate(copy, pixels + (size_t)k * f, height, width, degrees);
    }
    free(copy);
    return HS_OK;
}

static void dataset_draw_mixture(gsl_rng *rng, const double *means, int features, int classes, int n, float *x,
                                 uint8_t *y)
{
    for (int i = 0; i < n; i++) {
        int c = (int)gsl_rng_uniform_int(rng, (unsigned long)classes);
        y[i] = (uint8_t)c;
        const double *mu = means + (size_t)c * features;
        float *row = x + (size_t)i * features;
        for (int j = 0; j < features; j++) row[j] = (float)(mu[j] + gsl_ran_gaussian_ziggurat(rng, 1.0));
    }
}

static int dataset_make_synthetic(const DataSpec *spec, gsl_rng *rng, Dataset *ds, HsDiag *diag)
{
    if (!rng) return hs_diag_set(diag, HS_E_INTERNAL, NULL, 0, "synthetic data needs a random stream");
    if (spec->features < 1 || spec->classes < 2 || spec->classes > DATASET_MAX_CLASSES || spec->train_samples < 1 ||
        spec->test_samples < 0 || !(spec->separation >= 0.0))
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0,
                           "synthetic data needs features >= 1, 2 <= classes <= %d, train_samples >= 1 and "
                           "separation >= 0", DATASET_MAX_CLASSES);
    int f = spec->features, k = spec->classes;
    ds->n_train = spec->train_samples;
    ds->n_test = spec->test_samples > 0 ? spec->test_samples : spec->train_samples / 6 + 1;
    ds->channels = f;
    ds->height = ds->width = 1;
    if (spec->channels > 0) {
        if ((long long)spec->channels * spec->height * spec->width != f)
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "synthetic image %dx%dx%d does not hold %d features",
                               spec->channels, spec->height, spec->width, f);
        ds->channels = spec->channels, ds->height = spec->height, ds->width = spec->width;
    }
    ds->features = f;
    ds->classes = k;
    double *means = malloc(sizeof(double) * (size_t)f * k);
    ds->train_x = malloc(sizeof(float) * (size_t)ds->n_train * f);
    ds->train_y = malloc((size_t)ds->n_train);
    ds->test_x = malloc(sizeof(float) * (size_t)ds->n_test * f);
    ds->test_y = malloc((size_t)ds->n_test);
    if (!means || !ds->train_x || !ds->train_y || !ds->test_x || !ds->test_y) {
        free(means);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for the synthetic data set");
    }
    double sd = spec->separation / sqrt(2.0 * f);
    for (size_t i = 0; i < (size_t)f * k; i++) means[i] = gsl_ran_gaussian_ziggurat(rng, 1.0) * sd;
    dataset_draw_mixture(rng, means, f, k, ds->n_train, ds->train_x, ds->train_y);
    dataset_draw_mixture(rng, means, f, k, ds->n_test, ds->test_x, ds->test_y);
    free(means);
    return HS_OK;
}

const char *dataset_kind_name(DatasetKind kind)
{
    switch (kind) {
    case DATA_FASHION_MNIST: return "fashion-mnist";
    case DATA_SYNTHETIC: return "synthetic";
    case DATA_CIFAR10: return "cifar10";
    case DATA_CIFAR100: return "cifar100";
    case DATA_LEAF: return "leaf";
    case DATA_NPY: return "npy";
    }
    return NULL;
}

/* Reads a kind whose decoding costs more than its reading through the cache: the
 * sources' key, a cache hit, or the decoder and then a store. */
static int dataset_open_cached(DatasetKind kind, const char *folder, const DataOptions *options,
                               uint64_t max_bytes, Dataset *ds, HsDiag *diag)
{
    char dir[4096];
    if (options->cache_dir)
        snprintf(dir, sizeof dir, "%s", options->cache_dir);
    else
        dataset_cache_dir(dir, sizeof dir);
    char **train = NULL, **test = NULL;
    int status = HS_OK;
    DataCacheKey key;
    if (kind == DATA_LEAF) {
        status = dataset_leaf_files(folder, &train, &test, diag);
        if (status != HS_OK) return status;
        dataset_cache_key_init(&key, "leaf", DATASET_LEAF_CACHE_VERSION);
        /* the options that change what is decoded */
        char shape[96];
        snprintf(shape, sizeof shape, "shape %d %d %d classes %d", options->channels, options->height,
                 options->width, options->classes);
        dataset_cache_key_add_text(&key, shape);
        for (char **p = train; *p; p++) dataset_cache_key_add(&key, *p);
        dataset_cache_key_add_text(&key, "test");
        for (char **p = test; *p; p++) dataset_cache_key_add(&key, *p);
    } else {
        dataset_cache_key_init(&key, "fashion-mnist", DATASET_FASHION_CACHE_VERSION);
        for (int i = 0; i < 4; i++) {
            char file[4200];
            snprintf(file, sizeof file, "%s/%s", folder, dataset_fashion_files[i]);
            dataset_cache_key_add(&key, file);
        }
    }
    dataset_cache_key_finish(&key);
    if (!dir[0] || !dataset_cache_load(dir, &key, ds)) {
        status = kind == DATA_LEAF ? dataset_read_leaf(train, test, options, max_bytes, ds, diag)
                                   : dataset_read_fashion(folder, max_bytes, ds, diag);
        /* small sets decode in milliseconds: caching them would only litter the folder
         * (the tests' fixtures in temporary folders, for one) */
        size_t bytes = ((size_t)ds->n_train + (size_t)ds->n_test) * (size_t)ds->features * (ds->train_x ? 4 : 1);
        if (status == HS_OK && dir[0] && bytes >= DATASET_CACHE_MIN_BYTES) dataset_cache_store(dir, &key, ds);
    }
    dataset_cache_key_free(&key);
    dataset_free_names(train);
    dataset_free_names(test);
    return status;
}

int dataset_open(DatasetKind kind, const char *path, const DataOptions *options, Dataset **out, HsDiag *diag)
{
    *out = NULL;
    DataOptions defaults = {0};
    if (!options) options = &defaults;
    if (!path) path = "";
    uint64_t max_bytes = options->max_file_bytes ? options->max_file_bytes : DATASET_MAX_FILE_BYTES;
    if (kind != DATA_FASHION_MNIST && !path[0])
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "data set %s needs a path (the folder of its files)",
                           dataset_kind_name(kind) ? dataset_kind_name(kind) : "?");
    if (options->classes < 0 || options->classes > DATASET_MAX_CLASSES || options->test_samples < 0 || options->channels < 0 ||
        options->height < 0 || options->width < 0)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0,
                           "data options: classes must lie in 0..%d and test_samples and the shape be >= 0",
                           DATASET_MAX_CLASSES);
    Dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    int status;
    switch (kind) {
    case DATA_FASHION_MNIST:
        status = dataset_open_cached(kind, path[0] ? path : "/usr/share/datasets/fashion-mnist", options, max_bytes,
                                     ds, diag);
        break;
    case DATA_LEAF: status = dataset_open_cached(kind, path, options, max_bytes, ds, diag); break;
    case DATA_CIFAR10:
    case DATA_CIFAR100: status = dataset_read_cifar(kind, path, options->label, max_bytes, ds, diag); break;
    case DATA_NPY: status = dataset_read_npy_set(path, options->classes, max_bytes, ds, diag); break;
    default:
        status = hs_diag_set(diag, HS_E_INPUT, NULL, 0, "data set kind %d has no files to read", (int)kind);
    }
    if (status == HS_OK && options->test_samples > 0 && options->test_samples < ds->n_test)
        ds->n_test = options->test_samples;
    if (status == HS_OK && options->normalize == DATA_NORMALIZE_TRAIN) {
        status = dataset_normalize(ds);
        if (status != HS_OK) hs_diag_set(diag, status, NULL, 0, "out of memory for the normalisation");
    }
    if (status != HS_OK) {
        dataset_free(ds);
        return status;
    }
    *out = ds;
    return HS_OK;
}

/* The options of spec's files: the classes bound the labels of the kinds that find them
 * in their files (leaf, npy; 0: the largest label + 1). */
static DataOptions dataset_options_of(const DataSpec *spec)
{
    int from_files = spec->dataset == DATA_LEAF || spec->dataset == DATA_NPY;
    return (DataOptions){.label = spec->label, .normalize = spec->normalize, .test_samples = spec->test_samples,
                         .classes = from_files ? spec->classes : 0};
}

int dataset_probe(const DataSpec *spec, DatasetInfo *info, HsDiag *diag)
{
    memset(info, 0, sizeof *info);
    DatasetKind kind = spec->dataset;
    if (kind == DATA_FASHION_MNIST || kind == DATA_SYNTHETIC || !dataset_kind_name(kind))
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "data set kind %d has no files to probe", (int)kind);
    DataOptions options = dataset_options_of(spec);
    options.test_samples = 0;
    options.normalize = DATA_NORMALIZE_NONE;
    Dataset *ds = NULL, counted = {0};
    int status;
    if (kind == DATA_CIFAR10 || kind == DATA_CIFAR100) {
        if (!spec->path[0])
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "data set %s needs a path (the folder of its files)",
                               dataset_kind_name(kind));
        status = dataset_count_cifar(kind, spec->path, spec->label, DATASET_MAX_FILE_BYTES, &counted, diag);
        ds = &counted;
    } else {
        status = dataset_open(kind, spec->path, &options, &ds, diag);
    }
    if (status != HS_OK) return status;
    info->channels = ds->channels, info->height = ds->height, info->width = ds->width;
    info->classes = ds->classes, info->n_train = ds->n_train, info->n_test = ds->n_test;
    if (ds->n_writers > 0 && ds->writer_start) {
        info->writer_start = malloc(((size_t)ds->n_writers + 1) * sizeof *info->writer_start);
        if (!info->writer_start) status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        else {
            memcpy(info->writer_start, ds->writer_start, ((size_t)ds->n_writers + 1) * sizeof *info->writer_start);
            info->n_writers = ds->n_writers;
        }
    }
    if (ds != &counted) dataset_free(ds);
    return status;
}

void dataset_info_free(DatasetInfo *info)
{
    if (!info) return;
    free(info->writer_start);
    info->writer_start = NULL;
    info->n_writers = 0;
}

int dataset_load(const DataSpec *spec, gsl_rng *rng, Dataset **out, HsDiag *diag)
{
    *out = NULL;
    if (spec->dataset == DATA_SYNTHETIC) {
        Dataset *ds = calloc(1, sizeof *ds);
        if (!ds) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        int status = dataset_make_synthetic(spec, rng, ds, diag);
        if (status == HS_OK && spec->normalize == DATA_NORMALIZE_TRAIN) {
            status = dataset_normalize(ds);
            if (status != HS_OK) hs_diag_set(diag, status, NULL, 0, "out of memory for the normalisation");
        }
        if (status != HS_OK) {
            dataset_free(ds);
            return status;
        }
        *out = ds;
        return HS_OK;
    }
    if (!dataset_kind_name(spec->dataset))
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "unknown dataset kind %d", (int)spec->dataset);
    DataOptions options = dataset_options_of(spec);
    Dataset *ds;
    int status = dataset_open(spec->dataset, spec->path, &options, &ds, diag);
    if (status != HS_OK) return status;
    if (spec->partition == PART_DOMAINS && spec->n_domains > 0) {
        if (!ds->train_pixels || !ds->test_pixels || ds->channels != 1) {
            dataset_free(ds);
            return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "partition = domains needs grey images held as bytes");
        }
        ds->n_domains = spec->n_domains;
        /* a cached set is mapped read-only (dataset_cache.c); the rotation is its one writer,
         * and its private mapping copies the pages it writes */
        if (ds->mapping && mprotect(ds->mapping, ds->mapping_size, PROT_READ | PROT_WRITE) != 0) {
            dataset_free(ds);
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "cannot make the cached data writable for the rotated domains");
        }
        if (dataset_rotate_set(spec, ds->train_pixels, ds->n_train, ds->height, ds->width) != HS_OK ||
            dataset_rotate_set(spec, ds->test_pixels, ds->n_test, ds->height, ds->width) != HS_OK) {
            dataset_free(ds);
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for the rotated domains");
        }
    }
    *out = ds;
    return HS_OK;
}

int dataset_check(const DataSpec *spec, HsDiag *diag)
{
    if (spec->dataset == DATA_SYNTHETIC) return HS_OK;
    if (!dataset_kind_name(spec->dataset))
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "unknown dataset kind %d", (int)spec->dataset);
    DataOptions options = dataset_options_of(spec);
    Dataset *ds;
    int status = dataset_open(spec->dataset, spec->path, &options, &ds, diag);
    if (status != HS_OK) return status;
    if (spec->partition == PART_DOMAINS && spec->n_domains > 0 &&
        (!ds->train_pixels || !ds->test_pixels || ds->channels != 1))
        status = hs_diag_set(diag, HS_E_INPUT, NULL, 0, "partition = domains needs grey images held as bytes");
    dataset_free(ds);
    return status;
}

/* One sample into x: pixels divided by 255 (a loop the compiler vectorises), or floats,
 * then normalised per channel when the set has a normalisation. */
static void dataset_copy_row(const Dataset *ds, int test_set, size_t row, float *restrict x)
{
    const size_t f = (size_t)ds->features;
    const uint8_t *restrict pixels = test_set ? ds->test_pixels : ds->train_pixels;
    if (!ds->norm_mean) {
        if (pixels) {
            pixels += row * f;
            for (size_t j = 0; j < f; j++) x[j] = (float)pixels[j] / 255.0f;
        } else {
            memcpy(x, (test_set ? ds->test_x : ds->train_x) + row * f, sizeof(float) * f);
        }
        return;
    }
    const size_t plane = (size_t)ds->height * ds->width;
    const float *restrict values = pixels ? NULL : (test_set ? ds->test_x : ds->train_x) + row * f;
    if (pixels) pixels += row * f;
    for (int c = 0; c < ds->channels; c++) {
        const float mean = ds->norm_mean[c], std = ds->norm_std[c];
        float *restrict out = x + (size_t)c * plane;
        if (pixels) {
            const uint8_t *restrict in = pixels + (size_t)c * plane;
            for (size_t j = 0; j < plane; j++) out[j] = ((float)in[j] / 255.0f - mean) / std;
        } else {
            const float *restrict in = values + (size_t)c * plane;
            for (size_t j = 0; j < plane; j++) out[j] = (in[j] - mean) / std;
        }
    }
}

void dataset_gather(const Dataset *ds, int test_set, const int *idx, int B, float *x, int *y)
{
    if (!idx) {
        dataset_gather_range(ds, test_set, 0, B, x, y);
        return;
    }
    const uint8_t *labels = test_set ? ds->test_y : ds->train_y;
    for (int i = 0; i < B; i++) {
        dataset_copy_row(ds, test_set, (size_t)idx[i], x + (size_t)i * ds->features);
        y[i] = labels[idx[i]];
    }
}

void dataset_gather_range(const Dataset *ds, int test_set, int first, int B, float *x, int *y)
{
    const uint8_t *labels = test_set ? ds->test_y : ds->train_y;
    for (int i = 0; i < B; i++) {
        dataset_copy_row(ds, test_set, (size_t)first + i, x + (size_t)i * ds->features);
        y[i] = labels[first + i];
    }
}

int dataset_set_normalization(Dataset *ds, const float *mean, const float *std)
{
    free(ds->norm_mean);
    free(ds->norm_std);
    ds->norm_mean = ds->norm_std = NULL;
    if (!mean) return HS_OK;
    for (int c = 0; c < ds->channels; c++)
        if (!(std[c] > 0.0f) || !isfinite(std[c]) || !isfinite(mean[c])) return HS_E_INPUT;
    ds->norm_mean = malloc(sizeof(float) * (size_t)ds->channels);
    ds->norm_std = malloc(sizeof(float) * (size_t)ds->channels);
    if (!ds->norm_mean || !ds->norm_std) {
        free(ds->norm_mean);
        free(ds->norm_std);
        ds->norm_mean = ds->norm_std = NULL;
        return HS_E_NOMEM;
    }
    memcpy(ds->norm_mean, mean, sizeof(float) * (size_t)ds->channels);
    memcpy(ds->norm_std, std, sizeof(float) * (size_t)ds->channels);
    return HS_OK;
}

int dataset_normalize(Dataset *ds)
{
    const int C = ds->channels;
    const size_t plane = (size_t)ds->height * ds->width, f = (size_t)ds->features;
    double *sum = calloc((size_t)C, sizeof(double)), *squares = calloc((size_t)C, sizeof(double));
    float *mean = malloc(sizeof(float) * (size_t)C), *std = malloc(sizeof(float) * (size_t)C);
    int status = HS_E_NOMEM;
    if (!sum || !squares || !mean || !std) goto done;
    /* bytes: count each value per channel first (exact), then the moments from the counts */
    if (ds->train_pixels) {
        uint64_t *counts = calloc((size_t)C * 256, sizeof(uint64_t));
        if (!counts) goto done;
        for (size_t i = 0; i < (size_t)ds->n_train; i++) {
            const uint8_t *row = ds->train_pixels + i * f;
            for (int c = 0; c < C; c++) {
                uint64_t *h = counts + (size_t)c * 256;
                for (size_t j = 0; j < plane; j++) h[row[(size_t)c * plane + j]]++;
            }
        }
        for (int c = 0; c < C; c++)
            for (int v = 0; v < 256; v++) {
                double x = (double)((float)v / 255.0f), n = (double)counts[(size_t)c * 256 + v];
                sum[c] += n * x;
                squares[c] += n * x * x;
            }
        free(counts);
    } else {
        for (size_t i = 0; i < (size_t)ds->n_train; i++) {
            const float *row = ds->train_x + i * f;
            for (int c = 0; c < C; c++)
                for (size_t j = 0; j < plane; j++) {
                    double x = row[(size_t)c * plane + j];
                    sum[c] += x;
                    squares[c] += x * x;
                }
        }
    }
    double n = (double)ds->n_train * (double)plane;
    for (int c = 0; c < C; c++) {
        double m = n > 0 ? sum[c] / n : 0.0, var = n > 0 ? squares[c] / n - m * m : 0.0;
        mean[c] = (float)m;
        std[c] = var > 0 && (float)sqrt(var) > 0.0f ? (float)sqrt(var) : 1.0f;
    }
    status = dataset_set_normalization(ds, mean, std);
done:
    free(sum);
    free(squares);
    free(mean);
    free(std);
    return status;
}

int dataset_augment_check(const Dataset *ds, const DataAugment *aug, HsDiag *diag)
{
    if (!aug->crop_padding && !aug->flip) return HS_OK;
    int side = ds->height < ds->width ? ds->height : ds->width;
    if (ds->height < 2 || ds->width < 2)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0,
                           "augmentation needs images (height and width >= 2); this data set's samples are %dx%dx%d",
                           ds->channels, ds->height, ds->width);
    if (aug->crop_padding < 0 || aug->crop_padding > side)
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0, "crop padding %d outside 0..%d (the image's shorter side)",
                           aug->crop_padding, side);
    return HS_OK;
}

void dataset_augment(const Dataset *ds, const DataAugment *aug, float *x, int B, float *scratch, gsl_rng *rng)
{
    const int C = ds->channels, H = ds->height, W = ds->width, p = aug->crop_padding;
    const size_t plane = (size_t)H * W;
    for (int i = 0; i < B; i++) {
        float *image = x + (size_t)i * ds->features;
        int dy = p, dx = p, flip = 0; /* dy = dx = p: the image unmoved */
        if (p > 0) {
            dy = (int)gsl_rng_uniform_int(rng, (unsigned long)(2 * p + 1));
            dx = (int)gsl_rng_uniform_int(rng, (unsigned long)(2 * p + 1));
        }
        if (aug->flip) flip = (int)gsl_rng_uniform_int(rng, 2);
        if (dy == p && dx == p && !flip) continue;
        memcpy(scratch, image, sizeof(float) * (size_t)ds->features);
        for (int c = 0; c < C; c++) {
            /* a raw 0 of this channel as gathered: 0, or -mean/std when normalised */
            float fill = ds->norm_mean ? (0.0f - ds->norm_mean[c]) / ds->norm_std[c] : 0.0f;
            const float *in = scratch + (size_t)c * plane;
            float *out = image + (size_t)c * plane;
            for (int r = 0; r < H; r++) {
                int sr = r + dy - p; /* the source row in the unpadded image */
                for (int col = 0; col < W; col++) {
                    int cc = flip ? W - 1 - col : col, sc = cc + dx - p;
                    out[(size_t)r * W + col] = sr >= 0 && sr < H && sc >= 0 && sc < W ? in[(size_t)sr * W + sc] : fill;
                }
            }
        }
    }
}

const char *dataset_writer_name(const Dataset *ds, int w)
{
    if (!ds->writer_names || w < 0 || w >= ds->n_writers) return NULL;
    const char *p = ds->writer_names;
    for (int k = 0; k < w; k++) p += strlen(p) + 1;
    return p;
}

void dataset_cache_dir(char *buf, size_t size)
{
    const char *env = getenv("HETSIM_DATA_CACHE");
    if (env) {
        snprintf(buf, size, "%s", strcmp(env, "off") == 0 ? "" : env);
        return;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(buf, size, "%s/hetsim", xdg);
    else if (home && home[0])
        snprintf(buf, size, "%s/.cache/hetsim", home);
    else if (size)
        buf[0] = '\0';
}
