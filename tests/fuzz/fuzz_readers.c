/* fuzz_readers.c — libFuzzer target: any bytes as one file of a data set or profile,
 * the first byte choosing which: 0 a LEAF training JSON (with a valid test file), 1 a .npy
 * training-features file (with valid labels and test files), 2 a CIFAR-10 training batch
 * (with the other files valid), 3 a device profile CSV. Every read either succeeds with a
 * consistent result or fails with a message; none reads out of bounds (ASan) or hangs. */
#include "models/dataset.h"
#include "models/partition.h"
#include "base/device_profile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];

static void put(const char *name, const void *bytes, size_t n)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", root, name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n) fwrite(bytes, 1, n, f);
    fclose(f);
}

/* A .npy file of version 1 with the given dict and data. */
static void put_npy(const char *name, const char *dict, const void *payload, size_t n)
{
    unsigned char buf[256 + 64];
    size_t len = strlen(dict), total = 10 + len + 1, pad = (64 - total % 64) % 64;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(len + pad + 1), buf[9] = 0;
    memcpy(buf + 10, dict, len);
    memset(buf + 10 + len, ' ', pad);
    buf[10 + len + pad] = '\n';
    memcpy(buf + total + pad, payload, n);
    put(name, buf, total + pad + n);
}

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/hetsim-fuzz-readers-%d", (int)getpid());
    mkdir(root, 0700);
    char path[160];
    snprintf(path, sizeof path, "%s/train", root), mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/test", root), mkdir(path, 0700);
    const char *test = "{\"users\": [\"w0\"], \"num_samples\": [1], \"user_data\": {\"w0\": {\"x\": [[0, 1, 0, 1]], "
                       "\"y\": [1]}}}";
    put("test/t.json", test, strlen(test));
    float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int64_t y[2] = {0, 1};
    put_npy("train_y.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", y, sizeof y);
    put_npy("test_x.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", x, sizeof x);
    put_npy("test_y.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", y, sizeof y);
    unsigned char record[3073] = {3};
    for (int b = 2; b <= 5; b++) {
        char name[32];
        snprintf(name, sizeof name, "data_batch_%d.bin", b);
        put(name, record, sizeof record);
    }
    put("test_batch.bin", record, sizeof record);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!root[0]) setup();
    if (size < 1) return 0;
    int which = data[0] % 4;
    data++, size--;
    HsDiag diag;
    hs_diag_clear(&diag);
    DataOptions options = {.cache_dir = "", .max_file_bytes = 1 << 20};
    Dataset *ds = NULL;
    int status;
    switch (which) {
    case 0:
        put("train/a.json", data, size);
        status = dataset_open(DATA_LEAF, root, &options, &ds, &diag);
        if (status == HS_OK) {
            if (ds->n_train < 1 || ds->features < 1 || ds->n_writers < 1 ||
                ds->writer_start[ds->n_writers] != ds->n_train || ds->classes < 1)
                abort();
            for (int i = 0; i < ds->n_train; i++)
                if (ds->train_y[i] >= ds->classes) abort();
            /* every writer holds rows, so the natural partition deals them */
            DataSpec spec = {.partition = PART_NATURAL};
            int counts[1];
            if (partition_natural_counts(ds, 1, counts, NULL, &diag) != HS_OK || counts[0] != ds->n_train) abort();
            (void)spec;
        }
        break;
    case 1:
        put("train_x.npy", data, size);
        status = dataset_open(DATA_NPY, root, &options, &ds, &diag);
        if (status == HS_OK && (ds->n_train != 2 || ds->features != 4)) abort();
        break;
    case 2:
        put("data_batch_1.bin", data, size);
        status = dataset_open(DATA_CIFAR10, root, &options, &ds, &diag);
        if (status == HS_OK && (ds->n_train < 5 || ds->features != 3072)) abort();
        break;
    default: {
        put("profile.csv", data, size);
        char path[160];
        snprintf(path, sizeof path, "%s/profile.csv", root);
        DeviceProfile p;
        status = device_profile_read(path, &p, &diag);
        if (status == HS_OK) {
            if (p.n_agents < 1) abort();
            for (int i = 0; i < p.n_agents; i++)
                if (!(p.compute[i] > 0) || !(p.bandwidth[i] > 0) || (p.latency && !(p.latency[i] >= 0))) abort();
            device_profile_free(&p);
        }
    }
    }
    if (status != HS_OK && diag.message[0] == '\0') abort();
    dataset_free(ds);
    return 0;
}
