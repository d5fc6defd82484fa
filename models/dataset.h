/* dataset.h — the training and test sets of a run, loaded once and shared read-only by
 * every agent (agents hold index lists into it, see partition.h).
 *
 * fashion-mnist: the four IDX files, gzip'd, from DataSpec.path (default
 * /usr/share/datasets/fashion-mnist, Debian package dataset-fashion-mnist):
 * train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz,
 * t10k-labels-idx1-ubyte.gz. Pixels stay bytes in memory (a quarter of the floats: 47 MB
 * for the training set, and no 188 MB to fault in before the first step) and become
 * floats in [0, 1] (byte / 255) as they are gathered into a batch. With
 * DataSpec.test_samples > 0 only the first test_samples test images are kept.
 *
 * synthetic: a Gaussian mixture with `classes` components in `features` dimensions:
 * class means mu_c ~ N(0, s^2 I) with s = separation / sqrt(2 * features), so two class
 * means lie about `separation` noise standard deviations apart; a sample of class y
 * (uniform over classes) is mu_y + N(0, I). train_samples training samples, and a test
 * set from the same mixture of test_samples samples (0: train_samples / 6 + 1, as the
 * scenario resolver assumes). Draw order: means, training set, test set, all from rng.
 * Synthetic features are not bounded to [0, 1].
 *
 * Domains ([data] partition = domains, fashion-mnist only): image k of the training set
 * and image k of the test set belong to domain k mod n_domains (the files' order is
 * already random, so every domain is a random tenth, sixth, ... of the images, as
 * DomainBed's Rotated MNIST splits its images among the rotations) and are rotated once,
 * at load, by that domain's angle: counter-clockwise about the image centre, bilinear,
 * zero outside, rounded to the nearest byte (dataset_rotate).
 *
 * The readers of real data sets (dataset_open; the formats are documented in
 * docs/data.md and at each reader below) hold every image once, as bytes where the files
 * hold bytes, and refuse malformed input with the file and the record, byte offset or
 * line. Every file is read through base/input_file.h: regular files only, within
 * DataOptions.max_file_bytes. Decoding that costs more than reading (gzip'd IDX, LEAF's
 * JSON) is done once per machine: the decoded arrays are kept in a cache file (see
 * dataset_cache_dir) keyed by the sources' paths, sizes and modification times. */
#ifndef MODELS_DATASET_H
#define MODELS_DATASET_H

#include "models/model_spec.h"
#include "base/hs_error.h"

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* Labels are stored as uint8_t: at most 256 classes, for every data set (the scenario's
 * [data] classes is checked against this, sim/scenario/scenario.c). */
#define DATASET_MAX_CLASSES 256

typedef struct Dataset {
    int n_train, n_test;
    int channels, height, width; /* synthetic and flat arrays: channels = features, height = width = 1 */
    int features;                /* channels * height * width */
    int classes;                 /* labels are 0 .. classes-1, classes <= DATASET_MAX_CLASSES */
    /* Samples: bytes (images, pixel / 255) or floats (synthetic); the other pair is NULL.
     * Read them through dataset_gather*, which converts. */
    uint8_t *train_pixels; /* (n_train, features) */
    uint8_t *test_pixels;  /* (n_test, features) */
    float *train_x;        /* (n_train, features) */
    float *test_x;         /* (n_test, features) */
    uint8_t *train_y;      /* (n_train) */
    uint8_t *test_y;       /* (n_test) */
    int n_domains;         /* 0 without domains; else row k is in domain k mod n_domains */
    /* Per-channel normalisation, applied by dataset_gather*: x = (raw - mean[c]) / std[c]
     * with raw = pixel / 255 or the stored float, in float; NULL without (dataset_normalize). */
    float *norm_mean, *norm_std; /* (channels) */
    /* Writers (leaf): training rows writer_start[w] .. writer_start[w+1]-1 are writer w's,
     * in the files' order; the natural partition deals them to the agents. 0 and NULL for
     * the other kinds. */
    int n_writers;
    int *writer_start;  /* (n_writers + 1) */
    char *writer_names; /* the writers' ids, each NUL-terminated, one after the other */
    size_t writer_names_size;
    /* Not NULL when the arrays above (samples, labels, writers) lie in a private mapping of
     * a decoded-data cache file (dataset_cache.c): dataset_free unmaps it instead of
     * freeing them. Writes (the domains' rotation) copy the pages they touch. */
    void *mapping;
    size_t mapping_size;
} Dataset;

/* How dataset_open reads a data set. Zero-initialised options are the defaults. */
typedef struct DataOptions {
    DataLabel label;          /* cifar100: fine (100 classes, default) or coarse (20) */
    DataNormalize normalize;  /* per-channel normalisation from the training set */
    int test_samples;         /* > 0: keep only the first test_samples test rows */
    int classes;              /* leaf, npy: the number of classes (0: the largest label + 1) */
    int channels, height, width; /* leaf: the shape of a sample (0: a grey square image when the
                                  * length of x is a square, else a flat vector) */
    const char *cache_dir;    /* the decoded-data cache: NULL the default (dataset_cache_dir),
                               * "" none */
    unsigned long long max_file_bytes; /* per file read (0: DATASET_MAX_FILE_BYTES) */
} DataOptions;

#define DATASET_MAX_FILE_BYTES (16ull << 30)

/* Reads the data set of kind at path (a folder; "" for fashion-mnist is its Debian folder)
 * into a new *out (free with dataset_free):
 *   fashion-mnist  the four gzip'd IDX files (see the top of this header);
 *   cifar10        data_batch_1.bin .. data_batch_5.bin and test_batch.bin in path (or in
 *                  path/cifar-10-batches-bin): records of 1 label byte (0..9) and 3,072
 *                  pixel bytes, channel-major 3x32x32; any number of whole records a file;
 *   cifar100       train.bin and test.bin in path (or path/cifar-100-binary): records of a
 *                  coarse label byte (0..19), a fine one (0..99) and 3,072 pixel bytes;
 *   leaf           every *.json in path/train and path/test (name order), LEAF's layout
 *                  {"users": [...], "num_samples": [...], "user_data": {USER: {"x": [...],
 *                  "y": [...]}}}, x a flat list of numbers per sample, y an integer label;
 *                  read by a streaming parser (memory: the samples, not the text). Values
 *                  that are all multiples of 1/255 (within 1e-6/255, as FEMNIST's) are held
 *                  as bytes, otherwise the whole set as floats. The training files' writers,
 *                  in order, are the Dataset's writers;
 *   npy            train_x.npy, train_y.npy, test_x.npy, test_y.npy in path: features
 *                  float32 or uint8, little-endian, C order, shape (N, F) (a flat vector),
 *                  (N, H, W) (grey images) or (N, C, H, W); labels int32, int64 or uint8,
 *                  shape (N,), each in 0 .. 255 (and below DataOptions.classes when given).
 * Errors: HS_E_MISSING (a file is absent: the message names it), HS_E_INPUT (a malformed
 * file: the message names it with the record and byte offset, or line and column for
 * JSON, and what was wrong; a path that is not a regular file or too large), HS_E_IO (a
 * read error), HS_E_NOMEM. Messages go to diag. synthetic has no files: HS_E_INPUT. */
int dataset_open(DatasetKind kind, const char *path, const DataOptions *options, Dataset **out, HsDiag *diag);

/* The kind's name as the scenario writes it ("cifar10"), NULL for an unknown kind. */
const char *dataset_kind_name(DatasetKind kind);

/* Computes the training set's per-channel mean and standard deviation (population, in
 * double, rows in order) of the raw values, and sets them as the normalisation; a channel
 * with standard deviation 0 gets 1. HS_E_NOMEM. */
int dataset_normalize(Dataset *ds);
/* Sets the normalisation to the given per-channel values (channels each; std > 0), or
 * removes it with NULL. HS_E_INPUT for a std <= 0, HS_E_NOMEM. */
int dataset_set_normalization(Dataset *ds, const float *mean, const float *std);

/* Training augmentation of gathered samples (DataSpec.crop_padding, DataSpec.flip). */
typedef struct DataAugment {
    int crop_padding; /* random crop of height x width out of the image zero-padded by this
                       * many pixels on each side (0: no crop) */
    int flip;         /* 1: horizontal flip with probability 1/2 */
} DataAugment;

/* HS_E_INPUT with a message when ds's samples are not images the augmentation fits
 * (height and width >= 2, crop_padding in 0 .. min(height, width)). */
int dataset_augment_check(const Dataset *ds, const DataAugment *aug, HsDiag *diag);
/* Augments B gathered samples x (B, features) in place, sample after sample, drawing from
 * rng in this order per sample: the crop's row offset and column offset (each uniform in
 * 0 .. 2 crop_padding, when crop_padding > 0), then the flip (uniform 0 or 1, when flip).
 * As torchvision's RandomCrop(padding) then RandomHorizontalFlip: the padding is a raw 0
 * (so with normalisation it is -mean/std of its channel), the flip mirrors the cropped
 * image. scratch holds features floats. The same rng state gives the same images. */
void dataset_augment(const Dataset *ds, const DataAugment *aug, float *x, int B, float *scratch, gsl_rng *rng);

/* Writer w's id as the files name it (leaf); NULL outside 0 .. n_writers-1. */
const char *dataset_writer_name(const Dataset *ds, int w);

/* The decoded-data cache folder: $HETSIM_DATA_CACHE when set ("" or "off": no cache),
 * else $XDG_CACHE_HOME/hetsim, else $HOME/.cache/hetsim; "" when there is none. Written
 * into buf (size bytes). */
void dataset_cache_dir(char *buf, size_t size);

/* The domain of a row of either set (0 without domains). */
static inline int dataset_domain(const Dataset *ds, int row)
{
    return ds->n_domains > 0 ? row % ds->n_domains : 0;
}
/* Rows of a set of n rows in domain d of n_domains: ceil((n - d) / n_domains). */
static inline int dataset_domain_size(int n, int n_domains, int d)
{
    return n > d ? (n - d + n_domains - 1) / n_domains : 0;
}

/* One image (height, width) rotated counter-clockwise by degrees into out (which must
 * not alias in): out(r, c) is the bilinear interpolation of in at the point that the
 * rotation brings to (r, c), about the centre ((height-1)/2, (width-1)/2), 0 outside,
 * rounded to the nearest byte. 0 degrees copies; multiples of 90 move pixels exactly. */
void dataset_rotate(const uint8_t *in, uint8_t *out, int height, int width, double degrees);

/* Loads or generates the data of spec into a new *out (free with dataset_free): the
 * synthetic mixture, or dataset_open(spec->dataset, spec->path) with spec's label,
 * normalisation and test_samples (and the default cache), then the domains' rotation.
 * rng is used by the synthetic generator only (may be NULL otherwise). Errors:
 * HS_E_MISSING (a file is absent; the message names the file, and for fashion-mnist the
 * Debian package), HS_E_IO (a corrupt gzip'd IDX file or a read error; the message names
 * it and what was wrong), HS_E_INPUT (a malformed file of the other kinds, a bad spec),
 * HS_E_NOMEM. Messages go to diag. */
int dataset_load(const DataSpec *spec, gsl_rng *rng, Dataset **out, HsDiag *diag);
void dataset_free(Dataset *ds);

/* What a run needs to know of a data set's files before it loads them (the scenario's
 * resolution, the world's sample counts in timing mode too): the shape, the classes, the
 * set sizes (before test_samples cuts the test set) and, for a data set with writers, the
 * training rows of each. */
typedef struct DatasetInfo {
    int channels, height, width, classes;
    int n_train, n_test;
    int n_writers;
    int *writer_start; /* (n_writers + 1), malloc'd (dataset_info_free); NULL without writers */
} DatasetInfo;

/* Fills *info (zeroed first) for spec's files: cifar10 and cifar100 from the files' sizes
 * alone (each must be a whole number of records; the labels are read by dataset_check),
 * npy and leaf by opening the set as dataset_load does (npy is read raw, leaf through the
 * decoded-data cache, so a second probe of the same files maps the cache). fashion-mnist
 * and synthetic read no file: HS_E_INPUT. Errors and messages as dataset_open's. */
int dataset_probe(const DataSpec *spec, DatasetInfo *info, HsDiag *diag);
void dataset_info_free(DatasetInfo *info);

/* Reads spec's files as dataset_load does (dataset_open with the same options, and the
 * domains' check, without the rotation) and frees them: what dataset_load can refuse for
 * its files, this refuses first, with the same status and message. For the check before
 * anything is written (cli/cli_preflight.c); one load of the files, or a hit of the
 * decoded-data cache. synthetic reads no file: HS_OK. */
int dataset_check(const DataSpec *spec, HsDiag *diag);

/* Copies B samples into x (B, features) and y (B): rows idx[0..B-1] of the training set
 * (test_set = 0) or of the test set; idx NULL takes rows 0..B-1. */
void dataset_gather(const Dataset *ds, int test_set, const int *idx, int B, float *x, int *y);

/* The same for the consecutive rows first..first+B-1. */
void dataset_gather_range(const Dataset *ds, int test_set, int first, int B, float *x, int *y);

/* Reads one gzip'd IDX file of unsigned bytes: magic 0x0801 (labels, dims = 1) or 0x0803
 * (images, dims = 3). On success *data (malloc'd, caller frees) holds the payload and
 * dims[0..ndims-1] the sizes. Exposed for the tests' fixtures. */
int dataset_read_idx(const char *file, int expect_dims, uint8_t **data, int dims[3], HsDiag *diag);

#endif
