/* dataset_cifar.c — CIFAR-10 and CIFAR-100 from the binary distributions
 * (https://www.cs.toronto.edu/~kriz/cifar.html, "binary version"):
 *   CIFAR-10: data_batch_1.bin .. data_batch_5.bin (training, in that order) and
 *             test_batch.bin; a record is 1 label byte (0..9) then 3,072 pixel bytes:
 *             the red plane, the green, the blue, each 32 rows of 32, row-major;
 *   CIFAR-100: train.bin and test.bin; a record is the coarse label (0..19), the fine
 *             label (0..99), then the same 3,072 bytes.
 * The tarballs unpack into cifar-10-batches-bin/ and cifar-100-binary/: path may name the
 * folder of the files or the folder holding that one. A file may hold any number of
 * whole records (the real ones 10,000 or 50,000): the tests write a few.
 *
 * The files are raw already, so there is no cache: each file is read in blocks of 1,024
 * records straight into the pixel and label arrays (one copy; 180 MB of CIFAR-10 in
 * about 0.1 s from the page cache). */
#include "models/dataset_internal.h"

#include "base/input_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CIFAR_PIXELS 3072
#define CIFAR_BLOCK 1024 /* records a read */

typedef struct CifarSet {
    uint8_t *pixels; /* (n, 3072) */
    uint8_t *labels; /* (n) */
    size_t n, capacity;
} CifarSet;

static int cifar_folder_has(const char *folder, const char *name)
{
    char file[4200];
    struct stat st;
    snprintf(file, sizeof file, "%s/%s", folder, name);
    return stat(file, &st) == 0;
}

/* Appends the records of one file to set. label_bytes is 1 (CIFAR-10) or 2 (CIFAR-100,
 * coarse then fine); which (0 or 1) picks the label kept; classes bounds each label byte
 * (classes[0] for the first, classes[1] for the second). count_only: the file's size is
 * checked and its records counted (set->n), nothing is read. */
static int cifar_read_file(const char *file, int label_bytes, int which, const int classes[2], uint64_t max_bytes,
                           int count_only, CifarSet *set, HsDiag *diag)
{
    const size_t record = (size_t)label_bytes + CIFAR_PIXELS;
    InputFile in;
    int status = input_file_open(&in, file, max_bytes, HS_E_MISSING, diag);
    if (status != HS_OK) return status;
    uint8_t *block = NULL;
    if (in.size == 0) {
        status = hs_diag_set(diag, HS_E_INPUT, file, 0, "empty: no %zu-byte records", record);
        goto done;
    }
    if (in.size % record != 0) {
        uint64_t whole = in.size / record;
        status = hs_diag_set(diag, HS_E_INPUT, file, 0,
                             "truncated record %llu at byte offset %llu: %llu of its %zu bytes (%llu bytes is not a "
                             "whole number of %zu-byte records; is this a CIFAR-%s file?)",
                             (unsigned long long)whole, (unsigned long long)(whole * record),
                             (unsigned long long)(in.size - whole * record), record, (unsigned long long)in.size,
                             record, label_bytes == 1 ? "10" : "100");
        goto done;
    }
    size_t n = (size_t)(in.size / record);
    if (set->n + n > (size_t)0x7fffffff) {
        status = hs_diag_set(diag, HS_E_INPUT, file, 0, "more than 2^31 records in the set");
        goto done;
    }
    if (count_only) {
        set->n += n;
        goto done;
    }
    if (set->n + n > set->capacity) {
        size_t capacity = set->n + n;
        uint8_t *pixels = realloc(set->pixels, capacity * CIFAR_PIXELS), *labels;
        if (pixels) set->pixels = pixels;
        labels = pixels ? realloc(set->labels, capacity) : NULL;
        if (labels) set->labels = labels;
        if (!pixels || !labels) {
            status = hs_diag_set(diag, HS_E_NOMEM, file, 0, "out of memory for %zu records", capacity);
            goto done;
        }
        set->capacity = capacity;
    }
    block = malloc(record * CIFAR_BLOCK);
    if (!block) {
        status = hs_diag_set(diag, HS_E_NOMEM, file, 0, "out of memory");
        goto done;
    }
    for (size_t first = 0; first < n; first += CIFAR_BLOCK) {
        size_t count = n - first < CIFAR_BLOCK ? n - first : CIFAR_BLOCK, got;
        if ((status = input_file_read(&in, block, count * record, &got, diag)) != HS_OK) goto done;
        for (size_t r = 0; r < count; r++) {
            const uint8_t *rec = block + r * record;
            for (int b = 0; b < label_bytes; b++)
                if (rec[b] >= classes[b]) {
                    size_t index = first + r;
                    status = hs_diag_set(diag, HS_E_INPUT, file, 0,
                                         "record %zu (byte offset %zu): %slabel %d is not a class 0..%d", index,
                                         index * record + b,
                                         label_bytes == 1 ? "" : b == 0 ? "coarse " : "fine ", rec[b],
                                         classes[b] - 1);
                    goto done;
                }
            set->labels[set->n + first + r] = rec[which];
            memcpy(set->pixels + (set->n + first + r) * CIFAR_PIXELS, rec + label_bytes, CIFAR_PIXELS);
        }
    }
    set->n += n;
done:
    free(block);
    input_file_close(&in);
    return status;
}

/* Reads (count_only: counts) the training and test files of kind in folder into ds. */
static int cifar_read_set(DatasetKind kind, const char *folder, DataLabel label, uint64_t max_bytes, int count_only,
                          Dataset *ds, HsDiag *diag)
{
    static const char *const ten_train[] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                            "data_batch_4.bin", "data_batch_5.bin", NULL};
    static const char *const ten_test[] = {"test_batch.bin", NULL};
    static const char *const hundred_train[] = {"train.bin", NULL}, *const hundred_test[] = {"test.bin", NULL};
    const int ten = kind == DATA_CIFAR10;
    const char *const *train = ten ? ten_train : hundred_train, *const *test = ten ? ten_test : hundred_test;
    const int label_bytes = ten ? 1 : 2, which = ten ? 0 : label == DATA_LABEL_COARSE ? 0 : 1;
    const int classes[2] = {ten ? 10 : 20, 100};
    /* the folder of the files, or the one the tarball unpacked into it */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", folder);
    if (!cifar_folder_has(dir, train[0])) {
        char inner[4200];
        snprintf(inner, sizeof inner, "%s/%s", folder, ten ? "cifar-10-batches-bin" : "cifar-100-binary");
        if (cifar_folder_has(inner, train[0])) snprintf(dir, sizeof dir, "%s", inner);
    }
    CifarSet sets[2] = {{0}};
    int status = HS_OK;
    for (int s = 0; s < 2 && status == HS_OK; s++)
        for (const char *const *name = s ? test : train; *name && status == HS_OK; name++) {
            char file[8400];
            snprintf(file, sizeof file, "%s/%s", dir, *name);
            status = cifar_read_file(file, label_bytes, which, classes, max_bytes, count_only, &sets[s], diag);
        }
    ds->train_pixels = sets[0].pixels, ds->train_y = sets[0].labels, ds->n_train = (int)sets[0].n;
    ds->test_pixels = sets[1].pixels, ds->test_y = sets[1].labels, ds->n_test = (int)sets[1].n;
    ds->channels = 3, ds->height = 32, ds->width = 32, ds->features = CIFAR_PIXELS;
    ds->classes = ten ? 10 : label == DATA_LABEL_COARSE ? 20 : 100;
    return status;
}

int dataset_read_cifar(DatasetKind kind, const char *folder, DataLabel label, uint64_t max_bytes, Dataset *ds,
                       HsDiag *diag)
{
    return cifar_read_set(kind, folder, label, max_bytes, 0, ds, diag);
}

int dataset_count_cifar(DatasetKind kind, const char *folder, DataLabel label, uint64_t max_bytes, Dataset *ds,
                        HsDiag *diag)
{
    return cifar_read_set(kind, folder, label, max_bytes, 1, ds, diag);
}
