/* dataset_cache.c — decoded data sets kept once per machine (dataset_internal.h).
 *
 * Inflating Fashion-MNIST's gzip'd IDX files took 22 % of a whole MLP run, and parsing a
 * LEAF JSON of hundreds of MB takes seconds, on every run. The decoded arrays are written
 * once to a cache file and mapped back afterwards: a private read-only mapping
 * (MAP_POPULATE) of the page cache, so there is no copy, the processes of a sweep share one
 * copy of the pages, and the domains' rotation, the one writer, makes it writable and copies
 * only the pages it touches.
 *
 * A cache file: "HSDCACHE", a byte-order mark 0x01020304, the format version, the key's
 * length, the key's text (compared verbatim: no hash collision can return another set),
 * the Dataset's shape (n_train, n_test, channels, height, width, features, classes,
 * n_writers, floats) and the writers' names' size; then the arrays, each at a multiple of
 * 64 bytes (training samples, test samples, their labels, writer starts, writer names);
 * last a 64-bit hash of every byte before it (four lanes of xor-rotate-multiply, each step
 * a bijection, so a changed word always changes the hash; it checks for damage, it is no
 * defence against someone forging a file). The name is the kind and an FNV-1a hash of the
 * key's text up to the sources' sizes and times, so a changed source rewrites the same file
 * rather than adding one. Written to a temporary file in the folder and renamed into place,
 * so a reader sees a whole file or none, and a mapped file is never changed under a reader
 * (hetsim replaces, never truncates); a truncated, damaged or stale one fails the checks
 * and is decoded and rewritten. Native byte order and int sizes: a cache is per machine. */
/* realpath is XSI; MAP_POPULATE is Linux's */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE

#include "models/dataset_internal.h"

#include "base/hash.h"
#include "base/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DATA_CACHE_MAGIC "HSDCACHE"
#define DATA_CACHE_FORMAT 2u
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
    snprintf(head, sizeof head, "hetsim data cache: %s", kind);
    dataset_cache_key_append(key, head);
    /* the versions on a line of their own starting with a tab: out of the file's name, so a
     * new format or decoder rewrites the old entry instead of leaving it behind */
    snprintf(head, sizeof head, "\tformat %u, decoder %d", DATA_CACHE_FORMAT, version);
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

/* ---------------------------------------------------------------- the layout and the hash */

/* Four lanes of x = rotl(x ^ word, 29) * odd over 32-byte blocks: every step is a bijection
 * of the lane for a given word, so two inputs differing in one word never hash alike. */
typedef struct CacheHash {
    uint64_t lane[4];
    uint64_t length;
} CacheHash;

static void cache_hash_start(CacheHash *h)
{
    h->lane[0] = 0x9e3779b97f4a7c15ull, h->lane[1] = 0xc2b2ae3d27d4eb4full;
    h->lane[2] = 0x165667b19e3779f9ull, h->lane[3] = 0x27d4eb2f165667c5ull;
    h->length = 0;
}

/* n must be a multiple of 32 (every region of a cache file is of 64). */
static void cache_hash_add(CacheHash *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t a = h->lane[0], b = h->lane[1], c = h->lane[2], d = h->lane[3];
    for (size_t i = 0; i + 32 <= n; i += 32) {
        uint64_t w[4];
        memcpy(w, p + i, 32);
        a ^= w[0], b ^= w[1], c ^= w[2], d ^= w[3];
        a = (a << 29 | a >> 35) * 0x9fb21c651e98df25ull;
        b = (b << 29 | b >> 35) * 0x9fb21c651e98df25ull;
        c = (c << 29 | c >> 35) * 0x9fb21c651e98df25ull;
        d = (d << 29 | d >> 35) * 0x9fb21c651e98df25ull;
    }
    h->lane[0] = a, h->lane[1] = b, h->lane[2] = c, h->lane[3] = d;
    h->length += n;
}

static uint64_t cache_hash_end(const CacheHash *h)
{
    uint64_t x = h->length * 0x9fb21c651e98df25ull;
    for (int k = 0; k < 4; k++) {
        x ^= h->lane[k];
        x = (x << 31 | x >> 33) * 0xbf58476d1ce4e5b9ull;
    }
    return x ^ (x >> 29);
}

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

enum { CACHE_TRAIN_DATA, CACHE_TEST_DATA, CACHE_TRAIN_Y, CACHE_TEST_Y, CACHE_WRITERS, CACHE_NAMES, CACHE_N_ARRAYS };

/* Where everything lies in a cache file. */
typedef struct CacheLayout {
    size_t fields_at, header_end; /* the shape; the first array */
    size_t at[CACHE_N_ARRAYS], size[CACHE_N_ARRAYS];
    size_t hash_at, total;
} CacheLayout;

/* The layout for a key of key_length bytes and the shape (fields, names_size); 0 when the
 * sizes overflow. */
static int cache_layout(size_t key_length, const int32_t *fields, uint64_t names_size, CacheLayout *l)
{
    l->fields_at = (8 + 16 + key_length + 7) & ~(size_t)7;
    l->header_end = align64(l->fields_at + sizeof(int32_t) * CACHE_N_FIELDS + 4 + 8);
    double item = fields[CACHE_FLOATS] ? 4 : 1, f = fields[CACHE_FEATURES];
    double sizes[CACHE_N_ARRAYS] = {fields[CACHE_N_TRAIN] * f * item, fields[CACHE_N_TEST] * f * item,
                                    fields[CACHE_N_TRAIN], fields[CACHE_N_TEST],
                                    fields[CACHE_N_WRITERS] ? (fields[CACHE_N_WRITERS] + 1.0) * sizeof(int) : 0,
                                    (double)names_size};
    size_t at = l->header_end;
    for (int k = 0; k < CACHE_N_ARRAYS; k++) {
        if (sizes[k] > 1e15) return 0;
        l->at[k] = at;
        l->size[k] = (size_t)sizes[k];
        at = align64(at + l->size[k]);
    }
    l->hash_at = at;
    l->total = at + 8;
    return 1;
}

/* ---------------------------------------------------------------- reading */

/* The file whose hash this process last found intact. A train-mode `run` loads the same
 * entry twice, in its preflight (cli/cli_preflight.c) and in the trainer, and hashing
 * Fashion-MNIST's 55 MB was 1.2 % of the CNN whole run's CPU each time: the second load
 * skips the hash when the file is the same one (device, inode, size, modification time).
 * hetsim replaces entries by rename (a new inode) and never writes one in place; a write
 * in place by anyone else changes the modification time, unless it falls in the same
 * timestamp tick as the one the check saw, so a file is remembered only when its time was
 * at least DATA_CACHE_SETTLED_NS before its hash was checked: any later write then stamps
 * a later time. (A writer that resets the time by hand, utimensat, defeats it, as it
 * defeats the sources' keys.) The labels and writers are checked on every load. */
#define DATA_CACHE_SETTLED_NS 2000000000ll

typedef struct CacheVerified {
    uint64_t device, inode, size;
    int64_t mtime_ns;
    int valid;
} CacheVerified;

static pthread_mutex_t cache_verified_lock = PTHREAD_MUTEX_INITIALIZER;
static CacheVerified cache_verified;
static uint64_t cache_hashes; /* entries hashed by this process, for the tests */

static CacheVerified cache_identity(const InputFile *in)
{
    return (CacheVerified){.device = in->device, .inode = in->inode, .size = in->size, .mtime_ns = in->mtime_ns,
                           .valid = 1};
}

static int cache_was_verified(const InputFile *in)
{
    CacheVerified id = cache_identity(in);
    pthread_mutex_lock(&cache_verified_lock);
    const CacheVerified *v = &cache_verified;
    int same = v->valid && v->device == id.device && v->inode == id.inode && v->size == id.size &&
               v->mtime_ns == id.mtime_ns;
    pthread_mutex_unlock(&cache_verified_lock);
    return same;
}

/* Remembers in's file as intact (or forgets any: intact 0), checked at time now_ns. */
static void cache_remember(const InputFile *in, int intact, int64_t now_ns)
{
    pthread_mutex_lock(&cache_verified_lock);
    cache_hashes++;
    if (intact && now_ns - in->mtime_ns >= DATA_CACHE_SETTLED_NS)
        cache_verified = cache_identity(in);
    else
        cache_verified.valid = 0;
    pthread_mutex_unlock(&cache_verified_lock);
}

uint64_t dataset_cache_hashes(void)
{
    pthread_mutex_lock(&cache_verified_lock);
    uint64_t n = cache_hashes;
    pthread_mutex_unlock(&cache_verified_lock);
    return n;
}

int dataset_cache_load(const char *dir, const DataCacheKey *key, Dataset *ds)
{
    if (!key->valid || !dir[0] || key->length > DATA_CACHE_MAX_KEY) return 0;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, key->name);
    InputFile in;
    if (input_file_open(&in, path, INPUT_FILE_MAX_BYTES, HS_E_MISSING, NULL) != HS_OK) return 0;
    /* the header by a plain read: the key is compared before anything is mapped */
    size_t fields_at = (8 + 16 + key->length + 7) & ~(size_t)7;
    size_t head_size = fields_at + sizeof(int32_t) * CACHE_N_FIELDS + 4 + 8;
    unsigned char *head = malloc(head_size);
    int32_t fields[CACHE_N_FIELDS];
    uint64_t names_size;
    uint32_t words[4];
    CacheLayout layout;
    int ok = head && input_file_read_exact(&in, head, head_size, "the cache header", NULL) == HS_OK;
    if (ok) {
        memcpy(words, head + 8, sizeof words);
        memcpy(fields, head + fields_at, sizeof fields);
        memcpy(&names_size, head + fields_at + sizeof fields + 4, sizeof names_size);
        ok = memcmp(head, DATA_CACHE_MAGIC, 8) == 0 && words[0] == DATA_CACHE_BOM && words[1] == DATA_CACHE_FORMAT &&
             words[2] == key->length && memcmp(head + 24, key->text, key->length) == 0;
    }
    free(head);
    if (ok) {
        /* the shape must be plausible before anything is taken from it */
        for (int i = 0; i < CACHE_N_FIELDS; i++) ok = ok && fields[i] >= 0;
        ok = ok && fields[CACHE_FEATURES] >= 1 && fields[CACHE_CLASSES] >= 1 && fields[CACHE_CLASSES] <= DATASET_MAX_CLASSES &&
             (int64_t)fields[CACHE_CHANNELS] * fields[CACHE_HEIGHT] * fields[CACHE_WIDTH] == fields[CACHE_FEATURES] &&
             fields[CACHE_FLOATS] <= 1 && names_size <= in.size &&
             cache_layout(key->length, fields, names_size, &layout) && layout.total == in.size;
    }
    void *map = MAP_FAILED;
    if (ok) {
        int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
        flags |= MAP_POPULATE;
#endif
        /* read-only: MAP_POPULATE on a private writable mapping takes a copy of every page
         * (the kernel breaks copy-on-write ahead of writes), and the copies' scattered pages
         * made the hash below 2.5x slower too; the domains' rotation makes its mapping
         * writable first (dataset.c) */
        map = mmap(NULL, layout.total, PROT_READ, flags, in.fd, 0);
        ok = map != MAP_FAILED;
    }
    if (ok && !cache_was_verified(&in)) {
        /* the clock before the hash: a write after this reading stamps a later time */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        CacheHash h;
        uint64_t stored;
        cache_hash_start(&h);
        cache_hash_add(&h, map, layout.hash_at);
        memcpy(&stored, (unsigned char *)map + layout.hash_at, sizeof stored);
        ok = stored == cache_hash_end(&h);
        cache_remember(&in, ok, (int64_t)now.tv_sec * 1000000000ll + now.tv_nsec);
    }
    input_file_close(&in);
    if (ok) {
        unsigned char *base = map;
        ds->n_train = fields[CACHE_N_TRAIN], ds->n_test = fields[CACHE_N_TEST];
        ds->channels = fields[CACHE_CHANNELS], ds->height = fields[CACHE_HEIGHT], ds->width = fields[CACHE_WIDTH];
        ds->features = fields[CACHE_FEATURES], ds->classes = fields[CACHE_CLASSES];
        ds->n_writers = fields[CACHE_N_WRITERS];
        if (fields[CACHE_FLOATS]) {
            ds->train_x = (float *)(base + layout.at[CACHE_TRAIN_DATA]);
            ds->test_x = (float *)(base + layout.at[CACHE_TEST_DATA]);
        } else {
            ds->train_pixels = base + layout.at[CACHE_TRAIN_DATA];
            ds->test_pixels = base + layout.at[CACHE_TEST_DATA];
        }
        ds->train_y = base + layout.at[CACHE_TRAIN_Y];
        ds->test_y = base + layout.at[CACHE_TEST_Y];
        if (ds->n_writers) ds->writer_start = (int *)(base + layout.at[CACHE_WRITERS]);
        if (names_size) ds->writer_names = (char *)base + layout.at[CACHE_NAMES];
        ds->writer_names_size = (size_t)names_size;
        ds->mapping = map;
        ds->mapping_size = layout.total;
    }
    /* the bytes are intact; check what indexes with them anyway, it costs little */
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
    if (!ok) {
        if (map != MAP_FAILED) munmap(map, layout.total);
        memset(ds, 0, sizeof *ds);
    }
    return ok;
}

/* ---------------------------------------------------------------- writing */

typedef struct CacheOut {
    int fd;
    CacheHash hash;
    int ok;
} CacheOut;

static void cache_write_raw(CacheOut *out, const void *buf, size_t n)
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
        done += (size_t)w;
    }
}

/* n bytes of data (NULL: zeros) and zeros up to a multiple of 64, hashed. */
static void cache_write_region(CacheOut *out, const void *data, size_t n)
{
    static const unsigned char zeros[64];
    size_t whole = n & ~(size_t)63, tail = n - whole;
    if (whole) {
        if (data) {
            cache_write_raw(out, data, whole);
            cache_hash_add(&out->hash, data, whole);
        } else {
            for (size_t k = 0; k < whole; k += 64) cache_write_raw(out, zeros, 64), cache_hash_add(&out->hash, zeros, 64);
        }
    }
    if (tail) {
        unsigned char last[64] = {0};
        if (data) memcpy(last, (const unsigned char *)data + whole, tail);
        cache_write_raw(out, last, 64);
        cache_hash_add(&out->hash, last, 64);
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
    CacheOut out = {.fd = mkstemp(temp), .ok = 1};
    if (out.fd < 0) return -1;
    cache_hash_start(&out.hash);
    const int floats = ds->train_pixels == NULL;
    int32_t fields[CACHE_N_FIELDS] = {ds->n_train, ds->n_test, ds->channels, ds->height, ds->width,
                                      ds->features, ds->classes, ds->n_writers, floats};
    uint64_t names_size = ds->writer_names ? ds->writer_names_size : 0;
    CacheLayout layout;
    if (!cache_layout(key->length, fields, names_size, &layout)) out.ok = 0;
    /* the header, built whole and padded to the first array */
    unsigned char *head = out.ok ? calloc(1, layout.header_end) : NULL;
    if (!head) out.ok = 0;
    if (out.ok) {
        uint32_t words[4] = {DATA_CACHE_BOM, DATA_CACHE_FORMAT, (uint32_t)key->length, 0};
        memcpy(head, DATA_CACHE_MAGIC, 8);
        memcpy(head + 8, words, sizeof words);
        memcpy(head + 24, key->text, key->length);
        memcpy(head + layout.fields_at, fields, sizeof fields);
        memcpy(head + layout.fields_at + sizeof fields + 4, &names_size, sizeof names_size);
        cache_write_region(&out, head, layout.header_end);
    }
    free(head);
    const void *arrays[CACHE_N_ARRAYS] = {floats ? (const void *)ds->train_x : ds->train_pixels,
                                          floats ? (const void *)ds->test_x : ds->test_pixels,
                                          ds->train_y, ds->test_y, ds->writer_start, ds->writer_names};
    for (int k = 0; k < CACHE_N_ARRAYS && out.ok; k++)
        if (layout.size[k]) cache_write_region(&out, arrays[k], layout.size[k]);
    uint64_t hash = cache_hash_end(&out.hash);
    cache_write_raw(&out, &hash, sizeof hash);
    if (close(out.fd) != 0) out.ok = 0;
    if (!out.ok || rename(temp, path) != 0) {
        unlink(temp);
        return -1;
    }
    return 0;
}
