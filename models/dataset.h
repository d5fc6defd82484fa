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
 * zero outside, rounded to the nearest byte (dataset_rotate). */
#ifndef MODELS_DATASET_H
#define MODELS_DATASET_H

#include "models/model_spec.h"
#include "base/hs_error.h"

#include <gsl/gsl_rng.h>
#include <stdint.h>

typedef struct Dataset {
    int n_train, n_test;
    int channels, height, width; /* synthetic: channels = features, height = width = 1 */
    int features;                /* channels * height * width */
    int classes;
    /* Samples: bytes (images, pixel / 255) or floats (synthetic); the other pair is NULL.
     * Read them through dataset_gather*, which converts. */
    uint8_t *train_pixels; /* (n_train, features) */
    uint8_t *test_pixels;  /* (n_test, features) */
    float *train_x;        /* (n_train, features) */
    float *test_x;         /* (n_test, features) */
    uint8_t *train_y;      /* (n_train) */
    uint8_t *test_y;       /* (n_test) */
    int n_domains;         /* 0 without domains; else row k is in domain k mod n_domains */
} Dataset;

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

/* Loads or generates the data of spec into a new *out (free with dataset_free). rng is
 * used by the synthetic generator only (may be NULL for fashion-mnist). Errors:
 * HS_E_MISSING (a file is absent; the message names the file and the Debian package),
 * HS_E_IO (unreadable or corrupt file; the message names it and what was wrong),
 * HS_E_INPUT (bad spec), HS_E_NOMEM. Messages go to diag. */
int dataset_load(const DataSpec *spec, gsl_rng *rng, Dataset **out, HsDiag *diag);
void dataset_free(Dataset *ds);

/* Without reading them: the files spec's dataset reads exist as regular files in a
 * folder (fashion-mnist: the four IDX files; synthetic reads nothing). HS_E_MISSING with
 * the Debian package's name for a missing folder or file, HS_E_INPUT for a path that is
 * not a folder or a file that is not a regular file (base/infile.h). Cheap: stat(2) only. */
int dataset_check_files(const DataSpec *spec, HsDiag *diag);
/* Reads the files whole as dataset_load does (gzip streams, IDX headers, labels) and
 * frees them: what dataset_load can refuse, this refuses first, with the same message.
 * For a check before anything is written; costs one load of the files. */
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
