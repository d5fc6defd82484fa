/* dataset_internal.h — what the data-set readers of models/ share (dataset.c, the
 * readers dataset_cifar.c, dataset_leaf.c, dataset_npy.c and the cache dataset_cache.c);
 * not for use outside models/. */
#ifndef MODELS_DATASET_INTERNAL_H
#define MODELS_DATASET_INTERNAL_H

#include "models/dataset.h"
#include "base/hs_error.h"

#include <stddef.h>
#include <stdint.h>

/* The readers fill the arrays, shape and writers of a zeroed ds; dataset_open then cuts
 * the test set and normalises. On error they leave what they allocated in ds for
 * dataset_free. max_bytes is the per-file limit. */
int dataset_read_fashion(const char *folder, uint64_t max_bytes, Dataset *ds, HsDiag *diag);
int dataset_read_cifar(DatasetKind kind, const char *folder, DataLabel label, uint64_t max_bytes, Dataset *ds,
                       HsDiag *diag);
/* The same files' sizes checked and their records counted (n_train, n_test and the shape
 * set; no arrays): what a scenario's resolution needs, without reading 180 MB. */
int dataset_count_cifar(DatasetKind kind, const char *folder, DataLabel label, uint64_t max_bytes, Dataset *ds,
                        HsDiag *diag);
int dataset_read_npy_set(const char *folder, int classes, uint64_t max_bytes, Dataset *ds, HsDiag *diag);

/* LEAF: the .json files of the folder's train/ and test/, sorted by name, into *train and *test
 * (each a list of malloc'd paths, NULL-terminated; free with dataset_free_names). */
int dataset_leaf_files(const char *folder, char ***train, char ***test, HsDiag *diag);
void dataset_free_names(char **names);
/* The LEAF decoder's format version in the cache key: bump it when decoding changes. */
#define DATASET_LEAF_CACHE_VERSION 1
int dataset_read_leaf(char *const *train, char *const *test, const DataOptions *options, uint64_t max_bytes,
                      Dataset *ds, HsDiag *diag);

/* The decoded-data cache (dataset_cache.c). A key is the kind and every source file's
 * real path, size and modification time (and the decoder's format version): a source
 * changed, moved or replaced gives another key. The cache file's name depends on the
 * kind and the paths only, so a stale entry is overwritten in place. */
typedef struct DataCacheKey {
    char *text;    /* malloc'd */
    size_t length; /* bytes of text */
    char name[64]; /* the cache file's name in the cache folder */
    int valid;     /* 0 when a source could not be examined: no cache for this load */
} DataCacheKey;

void dataset_cache_key_init(DataCacheKey *key, const char *kind, int version);
/* Adds text (options that change what is decoded) to the key. */
void dataset_cache_key_add_text(DataCacheKey *key, const char *text);
/* Adds one source file; a file that cannot be examined makes the key invalid (the decoder
 * then reports the problem). */
void dataset_cache_key_add(DataCacheKey *key, const char *path);
/* Fixes the file name once every source is in. */
void dataset_cache_key_finish(DataCacheKey *key);
void dataset_cache_key_free(DataCacheKey *key);

/* 1 when the cache in dir held a complete, intact entry for key and ds (zeroed) now holds
 * its arrays; 0 otherwise (missing, stale, corrupt or unreadable: ds stays zeroed). */
int dataset_cache_load(const char *dir, const DataCacheKey *key, Dataset *ds);
/* How many entries this process has hashed (a load of the file it last found intact,
 * unchanged since, skips the hash: dataset_cache.c); for the tests. */
uint64_t dataset_cache_hashes(void);
/* Writes ds under key into dir (created when missing), atomically (a temporary file
 * renamed into place); any failure leaves no file and is ignored: 0 stored, -1 not. */
int dataset_cache_store(const char *dir, const DataCacheKey *key, const Dataset *ds);

#endif
