/* dataset_cache.c — decoded data sets kept once per machine (dataset_internal.h).
 *
 * Inflating Fashion-MNIST's gzip'd IDX files took 22 % of a whole MLP run, and parsing a
 * LEAF JSON of hundreds of MB takes seconds, on every run. The decoded arrays are written
 * once to a cache file and read back with plain reads afterwards (a copy at memory speed
 * and a CRC-32 over the bytes).
 *
 * A cache file: "HSDCACHE", a byte-order mark 0x01020304, the format version, the key's
 * length and text (compared verbatim: no hash collision can return another set), the
 * Dataset's shape (n_train, n_test, channels, height, width, features, classes, n_writers,
 * floats), the writers' names' size, the arrays (training samples, test samples, their
 * labels, writer starts, writer names) and last a CRC-32 of everything before it. Its
 * name is the kind and a hash of the key's text up to the sources' sizes and times, so a
 * changed source rewrites the same file rather than adding one. Written to a temporary
 * file in the folder and renamed into place, so a reader sees a whole file or none; a
 * truncated, corrupt or stale one fails the checks and is decoded and rewritten. Native
 * byte order and int sizes: a cache is per machine. */
/* realpath is XSI */
#define _XOPEN_SOURCE 700

#include "models/dataset_internal.h"

#include "base/hash.h"
#include "base/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define DATA_CACHE_MAGIC "HSDCACHE"
#define DATA_CACHE_FORMAT 1u
#define DATA_CACHE_BOM 0x01020304u
#define DATA_CACHE_MAX_KEY (1u << 20)

enum { CACHE_N_TRAIN, CACHE_N_TEST, CACHE_CHANNELS, CACHE_HEIGHT, CACHE_WIDTH, CACHE_FEATURES, CACHE_CLASSES,
       CACHE_N_WRITERS, CACHE_FLOATS, CACHE_N_FIELDS };

static void dataset_cache_key_append(DataCacheKey *key, const char *text)
{
    if (!key->valid) return;
    size_t n = strlen(text);
    char *grown = realloc(key->text, key->length + n + 2);
    if (!grown) {
        key->valid = 0;
        return;
    }
    key->text = grown;
    memcpy(key->text + key->length, text, n);
    key->length += n;
    key->text[key->length++] = '\n';
    key->text[key->length] = '\0';
}

void dataset_cache_key_init(DataCacheKey *key, const char *kind, int version)
{
    memset(key, 0, sizeof *key);
    key->valid = 1;
    char head[128];
    snprintf(head, sizeof head, "hetsim data cache %u: %s decoder %d", DATA_CACHE_FORMAT, kind, version);
    dataset_cache_key_append(key, head);
    snprintf(key->name, sizeof key->name, "%s", kind);
}

void dataset_cache_key_add_text(DataCacheKey *key, const char *text) { dataset_cache_key_append(key, text); }

void dataset_cache_key_add(DataCacheKey *key, const char *path)
{
    char real[PATH_MAX];
    struct stat st;
    if (!key->valid) return;
    if (!realpath(path, real) || stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        key->valid = 0;
        return;
    }
    /* the path on a line of its own first: the file name hashes the paths only */
    dataset_cache_key_append(key, real);
    char stamp[128];
    snprintf(stamp, sizeof stamp, "\t%lld bytes, modified %lld.%09ld, inode %llu", (long long)st.st_size,
             (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
    dataset_cache_key_append(key, stamp);
}

void dataset_cache_key_finish(DataCacheKey *key)
{
    if (!key->valid) return;
    /* hash the lines that do not start with a tab: the kind, options and paths */
    uint64_t h = HASH_FNV1A_START;
    for (const char *p = key->text; *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (p[0] != '\t') h = hash_fnv1a(h, p, n);
        p += n + (end != NULL);
    }
    char kind[32];
    snprintf(kind, sizeof kind, "%s", key->name);
    snprintf(key->name, sizeof key->name, "%s-%016llx.bin", kind, (unsigned long long)h);
}

void dataset_cache_key_free(DataCacheKey *key)
{
    free(key->text);
    key->text = NULL;
    key->valid = 0;
}

/* ---------------------------------------------------------------- reading */

typedef struct CacheIn {
    InputFile file;
    uLong crc;
} CacheIn;

static int cache_read(CacheIn *in, void *buf, size_t n)
{
    if (n == 0) return 1;
    if (input_file_read_exact(&in->file, buf, n, "cache", NULL) != HS_OK) return 0;
    /* zlib's crc32 takes uInt lengths */
    const unsigned char *p = buf;
    for (size_t done = 0; done < n;) {
        uInt part = n - done > (1u << 30) ? (1u << 30) : (uInt)(n - done);
        in->crc = crc32(in->crc, p + done, part);
        done += part;
    }
    return 1;
}

/* malloc'd n bytes read from in, NULL on failure (n = 0: NULL too, and *ok stays). */
static void *cache_read_array(CacheIn *in, size_t n, int *ok)
{
    if (!*ok || n == 0) return NULL;
    void *p = malloc(n);
    if (!p || !cache_read(in, p, n)) {
        free(p);
        *ok = 0;
        return NULL;
    }
    return p;
}

static void dataset_clear_arrays(Dataset *ds)
{
    free(ds->train_pixels);
    free(ds->test_pixels);
    free(ds->train_x);
    free(ds->test_x);
    free(ds->train_y);
    free(ds->test_y);
    free(ds->writer_start);
    free(ds->writer_names);
    memset(ds, 0, sizeof *ds);
}

int dataset_cache_load(const char *dir, const DataCacheKey *key, Dataset *ds)
{
    if (!key->valid || !dir[0]) return 0;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, key->name);
    CacheIn in = {.crc = crc32(0L, Z_NULL, 0)};
    if (input_file_open(&in.file, path, INPUT_FILE_MAX_BYTES, HS_E_MISSING, NULL) != HS_OK) return 0;
    int ok = 1;
    char magic[8];
    uint32_t head[3];
    int32_t fields[CACHE_N_FIELDS];
    uint64_t names_size = 0;
    char *text = NULL;
    ok = cache_read(&in, magic, sizeof magic) && memcmp(magic, DATA_CACHE_MAGIC, 8) == 0 &&
         cache_read(&in, head, sizeof head) && head[0] == DATA_CACHE_BOM && head[1] == DATA_CACHE_FORMAT &&
         head[2] == key->length && head[2] <= DATA_CACHE_MAX_KEY;
    if (ok) {
        text = malloc(key->length + 1);
        ok = text && cache_read(&in, text, key->length) && memcmp(text, key->text, key->length) == 0;
        free(text);
    }
    ok = ok && cache_read(&in, fields, sizeof fields) && cache_read(&in, &names_size, sizeof names_size);
    if (ok) {
        /* the shape must be plausible before anything is allocated from it */
        for (int i = 0; i < CACHE_N_FIELDS; i++) ok = ok && fields[i] >= 0;
        ok = ok && fields[CACHE_FEATURES] >= 1 && fields[CACHE_CLASSES] >= 1 && fields[CACHE_CLASSES] <= 256 &&
             (int64_t)fields[CACHE_CHANNELS] * fields[CACHE_HEIGHT] * fields[CACHE_WIDTH] == fields[CACHE_FEATURES] &&
             fields[CACHE_FLOATS] <= 1 && names_size <= in.file.size;
    }
    if (ok) {
        size_t item = fields[CACHE_FLOATS] ? sizeof(float) : 1, f = (size_t)fields[CACHE_FEATURES];
        size_t n_train = (size_t)fields[CACHE_N_TRAIN], n_test = (size_t)fields[CACHE_N_TEST];
        size_t n_writers = (size_t)fields[CACHE_N_WRITERS];
        /* the file must hold exactly what the shape says */
        double expect = (double)in.file.offset + (double)(n_train + n_test) * f * item + (double)(n_train + n_test) +
                        (n_writers ? (double)(n_writers + 1) * sizeof(int) : 0) + (double)names_size + 4;
        ok = expect == (double)in.file.size;
        if (ok) {
            ds->n_train = (int)n_train, ds->n_test = (int)n_test;
            ds->channels = fields[CACHE_CHANNELS], ds->height = fields[CACHE_HEIGHT], ds->width = fields[CACHE_WIDTH];
            ds->features = (int)f, ds->classes = fields[CACHE_CLASSES], ds->n_writers = (int)n_writers;
            if (item == 1) {
                ds->train_pixels = cache_read_array(&in, n_train * f, &ok);
                ds->test_pixels = cache_read_array(&in, n_test * f, &ok);
            } else {
                ds->train_x = cache_read_array(&in, n_train * f * item, &ok);
                ds->test_x = cache_read_array(&in, n_test * f * item, &ok);
            }
            ds->train_y = cache_read_array(&in, n_train, &ok);
            ds->test_y = cache_read_array(&in, n_test, &ok);
            if (n_writers) ds->writer_start = cache_read_array(&in, (n_writers + 1) * sizeof(int), &ok);
            ds->writer_names = cache_read_array(&in, (size_t)names_size, &ok);
            ds->writer_names_size = (size_t)names_size;
        }
    }
    uint32_t stored_crc = 0;
    uLong crc = in.crc;
    ok = ok && input_file_read_exact(&in.file, &stored_crc, sizeof stored_crc, "cache", NULL) == HS_OK &&
         stored_crc == (uint32_t)crc;
    input_file_close(&in.file);
    /* the arrays are intact; check what indexes with them anyway, it costs little */
    for (int i = 0; ok && i < ds->n_train; i++) ok = ds->train_y[i] < ds->classes;
    for (int i = 0; ok && i < ds->n_test; i++) ok = ds->test_y[i] < ds->classes;
    if (ok && ds->n_writers) {
        ok = ds->writer_start[0] == 0 && ds->writer_start[ds->n_writers] == ds->n_train;
        for (int w = 0; ok && w < ds->n_writers; w++) ok = ds->writer_start[w] < ds->writer_start[w + 1];
        size_t names = 0;
        for (size_t k = 0; ok && k < ds->writer_names_size; k++) names += ds->writer_names[k] == '\0';
        ok = ok && names == (size_t)ds->n_writers && ds->writer_names_size > 0 &&
             ds->writer_names[ds->writer_names_size - 1] == '\0';
    }
    if (!ok) dataset_clear_arrays(ds);
    return ok;
}

/* ---------------------------------------------------------------- writing */

typedef struct CacheOut {
    int fd;
    uLong crc;
    int ok;
} CacheOut;

static void cache_write(CacheOut *out, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    for (size_t done = 0; out->ok && done < n;) {
        size_t part = n - done > (1u << 30) ? (1u << 30) : n - done;
        ssize_t w = write(out->fd, p + done, part);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            out->ok = 0;
            break;
        }
        out->crc = crc32(out->crc, p + done, (uInt)w);
        done += (size_t)w;
    }
}

/* mkdir -p for the cache folder (0700: the XDG base directory rule). */
static int dataset_cache_mkdir(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(path, 0700) != 0 && errno != EEXIST) return -1;
    return 0;
}

int dataset_cache_store(const char *dir, const DataCacheKey *key, const Dataset *ds)
{
    if (!key->valid || !dir[0] || key->length > DATA_CACHE_MAX_KEY) return -1;
    if (dataset_cache_mkdir(dir) != 0) return -1;
    char path[4200], temp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, key->name);
    snprintf(temp, sizeof temp, "%s/.%s.XXXXXX", dir, key->name);
    CacheOut out = {.fd = mkstemp(temp), .crc = crc32(0L, Z_NULL, 0), .ok = 1};
    if (out.fd < 0) return -1;
    const int floats = ds->train_pixels == NULL;
    const size_t item = floats ? sizeof(float) : 1, f = (size_t)ds->features;
    uint32_t head[3] = {DATA_CACHE_BOM, DATA_CACHE_FORMAT, (uint32_t)key->length};
    int32_t fields[CACHE_N_FIELDS] = {ds->n_train, ds->n_test, ds->channels, ds->height, ds->width,
                                      ds->features, ds->classes, ds->n_writers, floats};
    uint64_t names_size = ds->writer_names ? ds->writer_names_size : 0;
    cache_write(&out, DATA_CACHE_MAGIC, 8);
    cache_write(&out, head, sizeof head);
    cache_write(&out, key->text, key->length);
    cache_write(&out, fields, sizeof fields);
    cache_write(&out, &names_size, sizeof names_size);
    cache_write(&out, floats ? (const void *)ds->train_x : ds->train_pixels, (size_t)ds->n_train * f * item);
    cache_write(&out, floats ? (const void *)ds->test_x : ds->test_pixels, (size_t)ds->n_test * f * item);
    cache_write(&out, ds->train_y, (size_t)ds->n_train);
    cache_write(&out, ds->test_y, (size_t)ds->n_test);
    if (ds->n_writers) cache_write(&out, ds->writer_start, sizeof(int) * ((size_t)ds->n_writers + 1));
    cache_write(&out, ds->writer_names, (size_t)names_size);
    uint32_t crc = (uint32_t)out.crc;
    cache_write(&out, &crc, sizeof crc);
    if (close(out.fd) != 0) out.ok = 0;
    if (!out.ok || rename(temp, path) != 0) {
        unlink(temp);
        return -1;
    }
    return 0;
}
