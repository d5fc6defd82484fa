/* dataset.c — the IDX loader (zlib) and the synthetic Gaussian mixture. The whole set is
 * read once into memory (Fashion-MNIST: 70,000 x 784 floats = 220 MB); agents never copy
 * it, they gather batches by index. */
#include "models/dataset.h"

#include "base/infile.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define DATASET_IDX_MAX_BYTES (1u << 30)

static const char dataset_package_hint[] =
    "install the Fashion-MNIST files with `apt-get install dataset-fashion-mnist` or set [data] path";

int dataset_read_idx(const char *file, int expect_dims, uint8_t **data, int dims[3], HsDiag *diag)
{
    *data = NULL;
    uint8_t *payload = NULL;
    gzFile gz = NULL;
    int status = HS_OK;
    if (access(file, F_OK) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return hs_diag_set(diag, HS_E_MISSING, file, 0, "not found (%s)", dataset_package_hint);
        return hs_diag_set(diag, HS_E_IO, file, 0, "cannot access: %s", strerror(errno));
    }
    /* a regular file of bounded size: a FIFO, folder or device is refused, never read */
    int fd;
    if ((status = infile_open(file, "dataset file", DATASET_IDX_MAX_BYTES, &fd, NULL, diag)) != HS_OK) return status;
    gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        status = hs_diag_set(diag, HS_E_IO, file, 0, "cannot open: %s", errno ? strerror(errno) : "zlib error");
        goto fail;
    }
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

void dataset_free(Dataset *ds)
{
    if (!ds) return;
    free(ds->train_pixels);
    free(ds->test_pixels);
    free(ds->train_x);
    free(ds->test_x);
    free(ds->train_y);
    free(ds->test_y);
    free(ds);
}

/* Reads one images+labels pair into x (n, rows*cols) and y. */
static int dataset_read_pair(const char *folder, const char *images_name, const char *labels_name, uint8_t **x,
                             uint8_t **y, int *n, int *rows, int *cols, HsDiag *diag)
{
    char images_file[512], labels_file[512];
    uint8_t *pixels = NULL, *labels = NULL;
    int image_dims[3], label_dims[3], status;
    snprintf(images_file, sizeof images_file, "%s/%s", folder, images_name);
    snprintf(labels_file, sizeof labels_file, "%s/%s", folder, labels_name);
    /* Check both names first, so a missing package is reported as such. */
    if ((status = dataset_read_idx(labels_file, 1, &labels, label_dims, diag)) ||
        (status = dataset_read_idx(images_file, 3, &pixels, image_dims, diag)))
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

static int dataset_load_fashion(const DataSpec *spec, Dataset *ds, HsDiag *diag)
{
    const char *folder = spec->path[0] ? spec->path : "/usr/share/datasets/fashion-mnist";
    /* a folder that is missing is a missing package (dataset_read_idx says so); one that
     * is something else (a file, a FIFO) is a bad path */
    if (access(folder, F_OK) == 0 && infile_check(folder, "dataset folder", INFILE_DIRECTORY, diag) != HS_OK)
        return HS_E_INPUT;
    int rows, cols, test_rows, test_cols, status;
    if ((status = dataset_read_pair(folder, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                    &ds->train_pixels, &ds->train_y, &ds->n_train, &rows, &cols, diag)) ||
        (status = dataset_read_pair(folder, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
                                    &ds->test_pixels, &ds->test_y, &ds->n_test, &test_rows, &test_cols, diag)))
        return status;
    if (rows != test_rows || cols != test_cols)
        return hs_diag_set(diag, HS_E_IO, folder, 0, "training images are %dx%d but test images %dx%d", rows,
                           cols, test_rows, test_cols);
    if (spec->test_samples > 0 && spec->test_samples < ds->n_test) ds->n_test = spec->test_samples;
    ds->channels = 1;
    ds->height = rows;
    ds->width = cols;
    ds->features = rows * cols;
    ds->classes = 10;
    if (spec->partition == PART_DOMAINS && spec->n_domains > 0) {
        ds->n_domains = spec->n_domains;
        if (dataset_rotate_set(spec, ds->train_pixels, ds->n_train, rows, cols) != HS_OK ||
            dataset_rotate_set(spec, ds->test_pixels, ds->n_test, rows, cols) != HS_OK)
            return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory for the rotated domains");
    }
    return HS_OK;
}

static const char *const dataset_fashion_files[] = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                                    "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};

int dataset_check_files(const DataSpec *spec, HsDiag *diag)
{
    if (spec->dataset != DATA_FASHION_MNIST) return HS_OK;
    const char *folder = spec->path[0] ? spec->path : "/usr/share/datasets/fashion-mnist";
    if (access(folder, F_OK) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return hs_diag_set(diag, HS_E_MISSING, folder, 0, "no such folder (%s)", dataset_package_hint);
        return hs_diag_set(diag, HS_E_INPUT, folder, 0, "cannot open the dataset folder: %s", strerror(errno));
    }
    int status = infile_check(folder, "dataset folder", INFILE_DIRECTORY, diag);
    for (int k = 0; status == HS_OK && k < 4; k++) {
        char file[600];
        snprintf(file, sizeof file, "%s/%s", folder, dataset_fashion_files[k]);
        if (access(file, F_OK) != 0 && (errno == ENOENT || errno == ENOTDIR))
            return hs_diag_set(diag, HS_E_MISSING, file, 0, "not found (%s)", dataset_package_hint);
        status = infile_check(file, "dataset file", INFILE_REGULAR, diag);
    }
    return status;
}

int dataset_check(const DataSpec *spec, HsDiag *diag)
{
    if (spec->dataset != DATA_FASHION_MNIST) return HS_OK;
    /* the domains' rotation cannot refuse anything (out of memory aside): skipped */
    DataSpec plain = *spec;
    plain.partition = PART_IID;
    plain.n_domains = 0;
    Dataset *ds;
    int status = dataset_load(&plain, NULL, &ds, diag);
    dataset_free(ds);
    return status;
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
    if (spec->features < 1 || spec->classes < 2 || spec->classes > 256 || spec->train_samples < 1 ||
        spec->test_samples < 0 || !(spec->separation >= 0.0))
        return hs_diag_set(diag, HS_E_INPUT, NULL, 0,
                           "synthetic data needs features >= 1, 2 <= classes <= 256, train_samples >= 1 and "
                           "separation >= 0");
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

int dataset_load(const DataSpec *spec, gsl_rng *rng, Dataset **out, HsDiag *diag)
{
    *out = NULL;
    Dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    int status;
    switch (spec->dataset) {
    case DATA_FASHION_MNIST: status = dataset_load_fashion(spec, ds, diag); break;
    case DATA_SYNTHETIC: status = dataset_make_synthetic(spec, rng, ds, diag); break;
    default: status = hs_diag_set(diag, HS_E_INPUT, NULL, 0, "unknown dataset kind %d", (int)spec->dataset);
    }
    if (status != HS_OK) {
        dataset_free(ds);
        return status;
    }
    *out = ds;
    return HS_OK;
}

/* One sample into x: pixels divided by 255 (a loop the compiler vectorises), or floats. */
static void dataset_copy_row(const Dataset *ds, int test_set, size_t row, float *restrict x)
{
    const size_t f = (size_t)ds->features;
    const uint8_t *restrict pixels = test_set ? ds->test_pixels : ds->train_pixels;
    if (pixels) {
        pixels += row * f;
        for (size_t j = 0; j < f; j++) x[j] = (float)pixels[j] / 255.0f;
    } else {
        memcpy(x, (test_set ? ds->test_x : ds->train_x) + row * f, sizeof(float) * f);
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
