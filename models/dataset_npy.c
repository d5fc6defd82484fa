/* dataset_npy.c — NumPy .npy arrays (format versions 1.0, 2.0 and 3.0,
 * numpy/lib/format.py): the magic "\x93NUMPY", the version, the header's length (2 bytes
 * little-endian in 1.0, 4 in 2.0 and 3.0), a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 784), } padded with spaces
 * and a newline, then the data, C order, to the end of the file.
 *
 * A data set is four files in one folder: train_x.npy, train_y.npy, test_x.npy,
 * test_y.npy. Features: float32 ('<f4') or uint8 ('|u1'), both files alike, shape (N, F),
 * (N, H, W) or (N, C, H, W). Labels: int32, int64 or uint8, shape (N,), 0 .. 255 (held as
 * bytes) and below the given number of classes. Written from Python with
 *   np.save("train_x.npy", x.astype(np.float32)); np.save("train_y.npy", y), ...
 * Images stored as (N, H, W, C) need x.transpose(0, 3, 1, 2) first (hetsim's images are
 * channel-major); the reader cannot tell the two orders apart. */
#include "models/dataset_internal.h"

#include "base/input_file.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAX_HEADER 65536 /* numpy writes a few hundred bytes */
#define NPY_MAX_DIMS 8

typedef enum { NPY_F4, NPY_U1, NPY_I4, NPY_I8 } NpyType;

typedef struct NpyHeader {
    NpyType type;
    int ndims;
    long long shape[NPY_MAX_DIMS];
    uint64_t data_offset; /* the data's first byte */
    size_t item;          /* bytes per element */
} NpyHeader;

/* Skips blanks in the header text. */
static const char *npy_blank(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* A quoted Python string at p into out (size bytes); returns the position after it or NULL. */
static const char *npy_string(const char *p, char *out, size_t size)
{
    char quote = *p;
    if (quote != '\'' && quote != '"') return NULL;
    size_t n = 0;
    for (p++; *p && *p != quote; p++) {
        if (n + 1 >= size) return NULL;
        out[n++] = *p;
    }
    if (*p != quote) return NULL;
    out[n] = '\0';
    return p + 1;
}

/* Parses the header dict of file (its text, NUL-terminated) into h. */
static int npy_parse_dict(const char *file, const char *text, NpyHeader *h, HsDiag *diag)
{
    char key[64], descr[32] = "";
    int fortran = -1, have_shape = 0;
    const char *p = npy_blank(text);
    if (*p++ != '{') return hs_diag_set(diag, HS_E_INPUT, file, 0, "header is not a Python dict: %.60s", text);
    for (;;) {
        p = npy_blank(p);
        if (*p == '}') break;
        if (!(p = npy_string(p, key, sizeof key)))
            return hs_diag_set(diag, HS_E_INPUT, file, 0, "header: expected a quoted key in %.80s", text);
        p = npy_blank(p);
        if (*p++ != ':') return hs_diag_set(diag, HS_E_INPUT, file, 0, "header: expected ':' after '%s'", key);
        p = npy_blank(p);
        if (strcmp(key, "descr") == 0) {
            if (!(p = npy_string(p, descr, sizeof descr)))
                return hs_diag_set(diag, HS_E_INPUT, file, 0,
                                   "header: 'descr' is not a simple type string (a structured dtype?)");
        } else if (strcmp(key, "fortran_order") == 0) {
            if (strncmp(p, "False", 5) == 0)
                fortran = 0, p += 5;
            else if (strncmp(p, "True", 4) == 0)
                fortran = 1, p += 4;
            else
                return hs_diag_set(diag, HS_E_INPUT, file, 0, "header: 'fortran_order' is neither True nor False");
        } else if (strcmp(key, "shape") == 0) {
            if (*p++ != '(') return hs_diag_set(diag, HS_E_INPUT, file, 0, "header: 'shape' is not a tuple");
            h->ndims = 0;
            for (;;) {
                p = npy_blank(p);
                if (*p == ')') break;
                if (!isdigit((unsigned char)*p))
                    return hs_diag_set(diag, HS_E_INPUT, file, 0, "header: 'shape' holds something else than sizes");
                if (h->ndims == NPY_MAX_DIMS)
                    return hs_diag_set(diag, HS_E_INPUT, file, 0, "header: more than %d dimensions", NPY_MAX_DIMS);
                char *end;
                h->shape[h->ndims++] = strtoll(p, &end, 10);
                p = end;
                if (*p == 'L') p++; /* written by Python 2 */
                p = npy_blank(p);
                if (*p == ',') p++;
                else if (*p != ')')
                    return hs_diag_set(diag, HS_E_INPUT, file, 0, "header: malformed 'shape'");
            }
            p++;
            have_shape = 1;
        } else {
            return hs_diag_set(diag, HS_E_INPUT, file, 0, "header: unknown key '%s'", key);
        }
        p = npy_blank(p);
        if (*p == ',') p++;
        else if (*p != '}') return hs_diag_set(diag, HS_E_INPUT, file, 0, "header: expected ',' or '}' after '%s'", key);
    }
    if (!descr[0] || fortran < 0 || !have_shape)
        return hs_diag_set(diag, HS_E_INPUT, file, 0, "header lacks %s", !descr[0] ? "'descr'" : fortran < 0 ? "'fortran_order'" : "'shape'");
    if (fortran)
        return hs_diag_set(diag, HS_E_INPUT, file, 0,
                           "array is in Fortran order; save it in C order (np.ascontiguousarray) first");
    static const struct {
        const char *descr;
        NpyType type;
        size_t item;
    } types[] = {{"<f4", NPY_F4, 4}, {"|u1", NPY_U1, 1}, {"<u1", NPY_U1, 1}, {"<i4", NPY_I4, 4}, {"<i8", NPY_I8, 8}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(descr, types[i].descr) == 0) {
            h->type = types[i].type;
            h->item = types[i].item;
            return HS_OK;
        }
    return hs_diag_set(diag, HS_E_INPUT, file, 0,
                       "unsupported dtype '%s' (features: float32 '<f4' or uint8 '|u1'; labels: int32 '<i4', int64 "
                       "'<i8' or uint8 '|u1'; little-endian)",
                       descr);
}

/* Opens file and reads its header; leaves in at the first data byte and checks that the
 * data fill the rest of the file exactly. */
static int npy_open(const char *file, uint64_t max_bytes, InputFile *in, NpyHeader *h, HsDiag *diag)
{
    unsigned char lead[12];
    int status = input_file_open(in, file, max_bytes, HS_E_MISSING, diag);
    if (status != HS_OK) return status;
    if (in->size < 10 || input_file_read_exact(in, lead, 10, "the .npy preamble", diag) != HS_OK ||
        memcmp(lead, "\x93NUMPY", 6) != 0) {
        input_file_close(in);
        return hs_diag_set(diag, HS_E_INPUT, file, 0, "not a .npy file (no \\x93NUMPY magic at byte 0)");
    }
    int major = lead[6];
    uint64_t header_len;
    if (major == 1) {
        header_len = (uint64_t)lead[8] | (uint64_t)lead[9] << 8;
    } else if (major == 2 || major == 3) {
        if ((status = input_file_read_exact(in, lead + 10, 2, "the .npy header length", diag)) != HS_OK) {
            input_file_close(in);
            return status;
        }
        header_len = (uint64_t)lead[8] | (uint64_t)lead[9] << 8 | (uint64_t)lead[10] << 16 | (uint64_t)lead[11] << 24;
    } else {
        input_file_close(in);
        return hs_diag_set(diag, HS_E_INPUT, file, 0, "unsupported .npy format version %d.%d", major, lead[7]);
    }
    if (header_len > NPY_MAX_HEADER) {
        input_file_close(in);
        return hs_diag_set(diag, HS_E_INPUT, file, 0, "header of %llu bytes (more than %d)",
                           (unsigned long long)header_len, NPY_MAX_HEADER);
    }
    char *text = malloc((size_t)header_len + 1);
    if (!text) {
        input_file_close(in);
        return hs_diag_set(diag, HS_E_NOMEM, file, 0, "out of memory");
    }
    status = input_file_read_exact(in, text, (size_t)header_len, "the .npy header", diag);
    if (status == HS_OK) {
        text[header_len] = '\0';
        status = npy_parse_dict(file, text, h, diag);
    }
    free(text);
    if (status != HS_OK) {
        input_file_close(in);
        return status;
    }
    h->data_offset = in->offset;
    /* the data: product(shape) elements to the end of the file, no more, no less */
    double elements = 1;
    for (int d = 0; d < h->ndims; d++) elements *= (double)h->shape[d];
    double want = elements * (double)h->item, have = (double)(in->size - in->offset);
    if (want != have) {
        input_file_close(in);
        char shape[160];
        int used = snprintf(shape, sizeof shape, "(");
        for (int d = 0; d < h->ndims && used < (int)sizeof shape - 24; d++)
            used += snprintf(shape + used, sizeof shape - used, d ? ", %lld" : "%lld", h->shape[d]);
        snprintf(shape + used, sizeof shape - used, ")");
        if (want > have)
            return hs_diag_set(diag, HS_E_INPUT, file, 0,
                               "truncated: shape %s needs %.0f data bytes from byte offset %llu, the file has %.0f",
                               shape, want, (unsigned long long)h->data_offset, have);
        return hs_diag_set(diag, HS_E_INPUT, file, 0, "%.0f bytes after the %.0f data bytes of shape %s",
                           have - want, want, shape);
    }
    return HS_OK;
}

/* One features file into *data (bytes or floats) with n rows of *shape_out (c, h, w). */
static int npy_read_features(const char *file, uint64_t max_bytes, NpyType *type, int *n, int shape_out[3],
                             void **data, HsDiag *diag)
{
    InputFile in;
    NpyHeader h;
    int status = npy_open(file, max_bytes, &in, &h, diag);
    if (status != HS_OK) return status;
    if (h.type != NPY_F4 && h.type != NPY_U1) {
        input_file_close(&in);
        return hs_diag_set(diag, HS_E_INPUT, file, 0, "features must be float32 or uint8, not %s",
                           h.type == NPY_I4 ? "int32" : "int64");
    }
    if (h.ndims < 2 || h.ndims > 4) {
        input_file_close(&in);
        return hs_diag_set(diag, HS_E_INPUT, file, 0,
                           "features of %d dimensions: expected (N, F), (N, H, W) or (N, C, H, W)", h.ndims);
    }
    int dims[3] = {1, 1, 1}; /* channels, height, width */
    long long features = 1;
    for (int d = 1; d < h.ndims; d++) features *= h.shape[d];
    if (h.shape[0] < 1 || h.shape[0] > 0x7fffffff || features < 1 || features > 0x7fffffff ||
        (double)h.shape[0] * (double)features > 1e15) {
        input_file_close(&in);
        return hs_diag_set(diag, HS_E_INPUT, file, 0, "shape with %lld rows of %lld values is outside hetsim's range",
                           h.shape[0], features);
    }
    if (h.ndims == 2) /* a flat vector: one channel per feature, as the synthetic data */
        dims[0] = (int)features;
    else if (h.ndims == 3)
        dims[1] = (int)h.shape[1], dims[2] = (int)h.shape[2];
    else
        dims[0] = (int)h.shape[1], dims[1] = (int)h.shape[2], dims[2] = (int)h.shape[3];
    size_t bytes = (size_t)h.shape[0] * (size_t)features * h.item;
    void *buffer = malloc(bytes ? bytes : 1);
    if (!buffer) {
        input_file_close(&in);
        return hs_diag_set(diag, HS_E_NOMEM, file, 0, "out of memory for %zu bytes", bytes);
    }
    status = input_file_read_exact(&in, buffer, bytes, "the data", diag);
    input_file_close(&in);
    if (status != HS_OK) {
        free(buffer);
        return status;
    }
    *type = h.type;
    *n = (int)h.shape[0];
    memcpy(shape_out, dims, sizeof dims);
    *data = buffer;
    return HS_OK;
}

/* One labels file of n rows into *labels (bytes), each below classes. */
static int npy_read_labels(const char *file, uint64_t max_bytes, int n, const char *features_file, int classes,
                           uint8_t **labels, HsDiag *diag)
{
    InputFile in;
    NpyHeader h;
    int status = npy_open(file, max_bytes, &in, &h, diag);
    if (status != HS_OK) return status;
    uint8_t *out = NULL, *block = NULL;
    if (h.type == NPY_F4) {
        status = hs_diag_set(diag, HS_E_INPUT, file, 0, "labels must be int32, int64 or uint8, not float32");
        goto done;
    }
    if (h.ndims != 1 && !(h.ndims == 2 && h.shape[1] == 1)) {
        status = hs_diag_set(diag, HS_E_INPUT, file, 0, "labels of %d dimensions: expected shape (N,)", h.ndims);
        goto done;
    }
    if (h.shape[0] != n) {
        status = hs_diag_set(diag, HS_E_INPUT, file, 0, "%lld labels for the %d samples of %s", h.shape[0], n,
                             features_file);
        goto done;
    }
    out = malloc(n > 0 ? (size_t)n : 1);
    block = malloc(8 * 4096);
    if (!out || !block) {
        status = hs_diag_set(diag, HS_E_NOMEM, file, 0, "out of memory");
        goto done;
    }
    const int limit = classes > 0 ? classes : DATASET_MAX_CLASSES;
    for (int first = 0; first < n; first += 4096) {
        int count = n - first < 4096 ? n - first : 4096;
        if ((status = input_file_read_exact(&in, block, (size_t)count * h.item, "the labels", diag)) != HS_OK)
            goto done;
        for (int i = 0; i < count; i++) {
            long long v;
            if (h.type == NPY_U1) {
                v = block[i];
            } else if (h.type == NPY_I4) {
                int32_t x;
                memcpy(&x, block + 4 * (size_t)i, 4);
                v = x;
            } else {
                int64_t x;
                memcpy(&x, block + 8 * (size_t)i, 8);
                v = x;
            }
            if (v < 0 || v >= limit) {
                long long index = first + i;
                status = hs_diag_set(diag, HS_E_INPUT, file, 0,
                                     "label %lld of record %lld (byte offset %llu) is outside 0..%d%s", v, index,
                                     (unsigned long long)(h.data_offset + (uint64_t)index * h.item), limit - 1,
                                     classes > 0 ? " (the classes given)" : " (labels are held as bytes)");
                goto done;
            }
            out[first + i] = (uint8_t)v;
        }
    }
    *labels = out;
    out = NULL;
done:
    free(out);
    free(block);
    input_file_close(&in);
    return status;
}

int dataset_read_npy_set(const char *folder, int classes, uint64_t max_bytes, Dataset *ds, HsDiag *diag)
{
    char files[4][4200];
    static const char *const names[4] = {"train_x.npy", "train_y.npy", "test_x.npy", "test_y.npy"};
    for (int i = 0; i < 4; i++) snprintf(files[i], sizeof files[i], "%s/%s", folder, names[i]);
    NpyType types[2];
    int shapes[2][3], status;
    void *data[2] = {NULL, NULL};
    if ((status = npy_read_features(files[0], max_bytes, &types[0], &ds->n_train, shapes[0], &data[0], diag)) ||
        (status = npy_read_features(files[2], max_bytes, &types[1], &ds->n_test, shapes[1], &data[1], diag)))
        goto fail;
    if (types[0] != types[1]) {
        status = hs_diag_set(diag, HS_E_INPUT, files[2], 0, "test features are %s but training features %s",
                             types[1] == NPY_F4 ? "float32" : "uint8", types[0] == NPY_F4 ? "float32" : "uint8");
        goto fail;
    }
    if (memcmp(shapes[0], shapes[1], sizeof shapes[0]) != 0) {
        status = hs_diag_set(diag, HS_E_INPUT, files[2], 0,
                             "test samples are %dx%dx%d but training samples %dx%dx%d (channels x height x width)",
                             shapes[1][0], shapes[1][1], shapes[1][2], shapes[0][0], shapes[0][1], shapes[0][2]);
        goto fail;
    }
    if (types[0] == NPY_F4)
        ds->train_x = data[0], ds->test_x = data[1];
    else
        ds->train_pixels = data[0], ds->test_pixels = data[1];
    data[0] = data[1] = NULL;
    ds->channels = shapes[0][0], ds->height = shapes[0][1], ds->width = shapes[0][2];
    ds->features = ds->channels * ds->height * ds->width;
    if ((status = npy_read_labels(files[1], max_bytes, ds->n_train, files[0], classes, &ds->train_y, diag)) ||
        (status = npy_read_labels(files[3], max_bytes, ds->n_test, files[2], classes, &ds->test_y, diag)))
        goto fail;
    if (classes > 0) {
        ds->classes = classes;
    } else {
        int top = 0;
        for (int i = 0; i < ds->n_train; i++) top = ds->train_y[i] > top ? ds->train_y[i] : top;
        for (int i = 0; i < ds->n_test; i++) top = ds->test_y[i] > top ? ds->test_y[i] : top;
        ds->classes = top + 1;
    }
    /* float features must be numbers */
    for (int s = 0; s < 2 && ds->train_x; s++) {
        const float *x = s ? ds->test_x : ds->train_x;
        size_t total = (size_t)(s ? ds->n_test : ds->n_train) * (size_t)ds->features;
        for (size_t k = 0; k < total; k++)
            if (!(x[k] - x[k] == 0.0f)) {
                status = hs_diag_set(diag, HS_E_INPUT, files[s ? 2 : 0], 0,
                                     "value %zu of record %zu is not finite (NaN or infinity)",
                                     k % (size_t)ds->features, k / (size_t)ds->features);
                goto fail;
            }
    }
    return HS_OK;
fail:
    free(data[0]);
    free(data[1]);
    return status;
}
