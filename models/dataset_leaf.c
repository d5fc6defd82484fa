/* dataset_leaf.c — LEAF's federated data sets (Caldas et al., "LEAF: A Benchmark for
 * Federated Settings", https://github.com/TalwalkarLab/leaf), FEMNIST first.
 *
 * LEAF's preprocessing writes data/train/ and data/test/, JSON files of
 *   {"users": ["f0000_14", ...], "num_samples": [154, ...],
 *    "user_data": {"f0000_14": {"x": [[0.0, 1.0, ...], ...], "y": [7, ...]}, ...}}
 * (FEMNIST: x holds 784 grey values k/255 per sample, y a class 0..61), possibly with a
 * "hierarchies" list (skipped, as any other key). A JSON that lacks one of the three keys,
 * whose users, num_samples and user_data disagree, or whose samples are not flat lists of
 * numbers of one length is refused with the file, line and byte offset.
 *
 * The files are hundreds of MB, so they are parsed as a stream: a 1 MiB window slides over
 * the file and every value goes straight into the sample arrays; the parser holds the
 * window, one file's user names and the samples, never the text. Numbers take Clinger's
 * exact fast path (a mantissa below 2^53 and a power of ten up to 22: one correctly
 * rounded multiplication or division, as strtod would give) and strtod otherwise.
 * Samples are held as bytes while every value is a multiple of 1/255 within 1e-6/255 (the
 * byte k then reads back as k / 255.0f, which is (float) of the double k/255 for every k);
 * the first value that is not turns the whole set into floats.
 *
 * Writers: the training files' user_data entries, in file and entry order, with at least
 * one training sample, are the Dataset's writers (the natural partition deals them). */
#include "models/dataset_internal.h"

#include "base/input_file.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_WINDOW (1u << 20)
#define JSON_LOOKAHEAD 512 /* a number token is at most this long */
#define JSON_MAX_DEPTH 64  /* nesting of skipped values */
#define JSON_MAX_STRING 4096

/* ---------------------------------------------------------------- the stream */

typedef struct Json {
    InputFile in;
    const char *path;
    unsigned char *buf; /* JSON_WINDOW + JSON_LOOKAHEAD + 1 bytes, buf[len] = 0 */
    size_t len, pos;
    uint64_t base; /* file offset of buf[0] */
    int line;
    int eof;
    HsDiag *diag;
} Json;

static int json_error(Json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int json_error(Json *j, const char *fmt, ...)
{
    char message[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return hs_diag_set(j->diag, HS_E_INPUT, j->path, j->line, "byte %llu: %s",
                       (unsigned long long)(j->base + j->pos), message);
}

/* Keeps the unread bytes and reads more behind them; at least want bytes are then
 * buffered unless the file ends first. */
static int json_fill(Json *j)
{
    if (j->eof) return HS_OK;
    size_t keep = j->len - j->pos;
    memmove(j->buf, j->buf + j->pos, keep);
    j->base += j->pos;
    j->pos = 0;
    j->len = keep;
    size_t got;
    int status = input_file_read(&j->in, j->buf + keep, JSON_WINDOW + JSON_LOOKAHEAD - keep, &got, j->diag);
    if (status != HS_OK) return status;
    j->len += got;
    j->buf[j->len] = '\0';
    if (j->in.offset == j->in.size) j->eof = 1;
    return HS_OK;
}

/* The next byte after blanks (newlines counted), or -1 at the end of the file. */
static inline int json_peek(Json *j)
{
    for (;;) {
        while (j->pos < j->len) {
            unsigned char c = j->buf[j->pos];
            if (c == ' ' || c == '\t' || c == '\r') {
                j->pos++;
            } else if (c == '\n') {
                j->pos++;
                j->line++;
            } else {
                return c;
            }
        }
        if (j->eof || json_fill(j) != HS_OK || j->len == 0) return -1;
    }
}

/* A byte for a message ("'x'", "byte 0x01", "the end of the file"), by value so that
 * messages can hold several without shared buffers: json_describe(c).text. */
typedef struct JsonByte {
    char text[24];
} JsonByte;

static JsonByte json_describe(int c)
{
    JsonByte out;
    if (c < 0)
        snprintf(out.text, sizeof out.text, "the end of the file");
    else if (c >= 0x20 && c < 0x7f)
        snprintf(out.text, sizeof out.text, "'%c'", c);
    else
        snprintf(out.text, sizeof out.text, "byte 0x%02x", c);
    return out;
}

static int json_expect(Json *j, int want, const char *context)
{
    int c = json_peek(j);
    if (c != want) return json_error(j, "expected '%c' %s, found %s", want, context, json_describe(c).text);
    j->pos++;
    return HS_OK;
}

/* Makes at least JSON_LOOKAHEAD bytes visible (fewer at the end of the file). */
static inline int json_lookahead(Json *j)
{
    if (j->len - j->pos < JSON_LOOKAHEAD && !j->eof) return json_fill(j);
    return HS_OK;
}

static const double json_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A JSON number at the current position (after json_peek). */
static int json_number(Json *j, double *value)
{
    int status = json_lookahead(j);
    if (status != HS_OK) return status;
    const unsigned char *start = j->buf + j->pos, *p = start;
    int negative = *p == '-';
    p += negative;
    if (*p < '0' || *p > '9') return json_error(j, "expected a number, found %s", json_describe(*p ? *p : -1).text);
    uint64_t mantissa = 0;
    int digits = 0, exponent = 0, dropped = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (digits < 19) {
            mantissa = mantissa * 10 + (uint64_t)(*p - '0');
            digits += mantissa != 0;
        } else {
            exponent++;
            dropped |= *p != '0';
        }
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9') return json_error(j, "a number's '.' must be followed by digits");
        for (; *p >= '0' && *p <= '9'; p++) {
            if (digits < 19) {
                mantissa = mantissa * 10 + (uint64_t)(*p - '0');
                digits += mantissa != 0;
                exponent--;
            } else {
                dropped |= *p != '0';
            }
        }
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        int sign = 1, e = 0;
        if (*p == '+' || *p == '-') sign = *p++ == '-' ? -1 : 1;
        if (*p < '0' || *p > '9') return json_error(j, "a number's exponent has no digits");
        for (; *p >= '0' && *p <= '9'; p++)
            if (e < 100000) e = e * 10 + (*p - '0');
        exponent += sign * e;
    }
    size_t length = (size_t)(p - start);
    if (length >= JSON_LOOKAHEAD - 1 && !j->eof) return json_error(j, "a number longer than %d characters", JSON_LOOKAHEAD - 2);
    if (!dropped && mantissa <= (1ull << 53) && exponent >= -22 && exponent <= 22) {
        double v = (double)mantissa;
        v = exponent < 0 ? v / json_pow10[-exponent] : v * json_pow10[exponent];
        *value = negative ? -v : v;
    } else {
        char token[JSON_LOOKAHEAD];
        memcpy(token, start, length);
        token[length] = '\0';
        *value = strtod(token, NULL);
    }
    if (!isfinite(*value)) return json_error(j, "number out of range");
    j->pos += length;
    return HS_OK;
}

/* Appends the UTF-8 of code point cp to out (at *n, size bytes). */
static int json_utf8(char *out, size_t *n, size_t size, unsigned cp)
{
    unsigned char b[4];
    int k;
    if (cp < 0x80) b[0] = (unsigned char)cp, k = 1;
    else if (cp < 0x800) b[0] = (unsigned char)(0xc0 | cp >> 6), b[1] = (unsigned char)(0x80 | (cp & 0x3f)), k = 2;
    else if (cp < 0x10000)
        b[0] = (unsigned char)(0xe0 | cp >> 12), b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f)),
        b[2] = (unsigned char)(0x80 | (cp & 0x3f)), k = 3;
    else
        b[0] = (unsigned char)(0xf0 | cp >> 18), b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f)),
        b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f)), b[3] = (unsigned char)(0x80 | (cp & 0x3f)), k = 4;
    if (*n + (size_t)k >= size) return 0;
    memcpy(out + *n, b, (size_t)k);
    *n += (size_t)k;
    return 1;
}

static int json_hex4(Json *j, unsigned *cp)
{
    *cp = 0;
    for (int k = 0; k < 4; k++) {
        if (j->pos == j->len && (json_fill(j) != HS_OK || j->pos == j->len))
            return json_error(j, "a string's \\u escape is cut off by the end of the file");
        unsigned char c = j->buf[j->pos++];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? c - 'a' + 10u
                   : c >= 'A' && c <= 'F' ? c - 'A' + 10u : 16u;
        if (d == 16) return json_error(j, "a \\u escape needs four hexadecimal digits");
        *cp = *cp << 4 | d;
    }
    return HS_OK;
}

/* A string at the current position (after json_peek saw '"'): into out (size bytes,
 * NUL-terminated) when out is not NULL, else skipped. Strings longer than size are errors. */
static int json_string(Json *j, char *out, size_t size, const char *what)
{
    j->pos++; /* the opening quote */
    size_t n = 0;
    for (;;) {
        if (j->pos == j->len) {
            int status = json_fill(j);
            if (status != HS_OK) return status;
            if (j->pos == j->len) return json_error(j, "%s: a string is not closed before the end of the file", what);
        }
        unsigned char c = j->buf[j->pos++];
        if (c == '"') break;
        if (c < 0x20) return json_error(j, "%s: a control character (0x%02x) inside a string", what, c);
        if (c == '\\') {
            if (j->pos == j->len && (json_fill(j) != HS_OK || j->pos == j->len))
                return json_error(j, "%s: a string is not closed before the end of the file", what);
            unsigned char e = j->buf[j->pos++];
            unsigned cp;
            switch (e) {
            case '"': case '\\': case '/': cp = e; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u': {
                int status = json_hex4(j, &cp);
                if (status != HS_OK) return status;
                if (cp >= 0xd800 && cp < 0xdc00) { /* a surrogate pair */
                    unsigned low;
                    if (json_lookahead(j) != HS_OK || j->buf[j->pos] != '\\' || j->buf[j->pos + 1] != 'u')
                        return json_error(j, "%s: an unpaired surrogate in a \\u escape", what);
                    j->pos += 2;
                    if ((status = json_hex4(j, &low)) != HS_OK) return status;
                    if (low < 0xdc00 || low > 0xdfff) return json_error(j, "%s: an unpaired surrogate", what);
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                }
                break;
            }
            default: return json_error(j, "%s: unknown escape '\\%c' in a string", what, e);
            }
            if (out && !json_utf8(out, &n, size, cp))
                return json_error(j, "%s: a string longer than %zu bytes", what, size - 1);
            continue;
        }
        if (out) {
            if (n + 1 >= size) return json_error(j, "%s: a string longer than %zu bytes", what, size - 1);
            out[n++] = (char)c;
        }
    }
    if (out) out[n] = '\0';
    return HS_OK;
}

/* Skips one value of any kind (bounded nesting). */
static int json_skip(Json *j, int depth)
{
    if (depth > JSON_MAX_DEPTH) return json_error(j, "values nested more than %d deep", JSON_MAX_DEPTH);
    int c = json_peek(j), status;
    if (c == '"') return json_string(j, NULL, 0, "a skipped value");
    if (c == '-' || (c >= '0' && c <= '9')) {
        double v;
        return json_number(j, &v);
    }
    if (c == '[' || c == '{') {
        int close = c == '[' ? ']' : '}';
        j->pos++;
        if (json_peek(j) == close) {
            j->pos++;
            return HS_OK;
        }
        for (;;) {
            if (close == '}') {
                if (json_peek(j) != '"') return json_error(j, "expected a key, found %s", json_describe(json_peek(j)).text);
                if ((status = json_string(j, NULL, 0, "a skipped key")) != HS_OK) return status;
                if ((status = json_expect(j, ':', "after a key")) != HS_OK) return status;
            }
            if ((status = json_skip(j, depth + 1)) != HS_OK) return status;
            c = json_peek(j);
            j->pos += c == ',' || c == close;
            if (c == close) return HS_OK;
            if (c != ',') return json_error(j, "expected ',' or '%c', found %s", close, json_describe(c).text);
        }
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(words[k]);
        if ((status = json_lookahead(j)) != HS_OK) return status;
        if (j->len - j->pos >= n && memcmp(j->buf + j->pos, words[k], n) == 0) {
            j->pos += n;
            return HS_OK;
        }
    }
    return json_error(j, "expected a value, found %s", json_describe(c).text);
}

/* ---------------------------------------------------------------- the data set */

typedef struct LeafSet {
    uint8_t *bytes;  /* (values) while the set is bytes */
    float *floats;   /* (values) once it is floats */
    size_t values, capacity;
    uint8_t *labels;
    size_t rows, label_capacity;
} LeafSet;

/* Names in one buffer, each NUL-terminated, with their starts. */
typedef struct Names {
    char *text;
    size_t size, capacity;
    size_t *at;
    size_t n, at_capacity;
} Names;

typedef struct Leaf {
    const DataOptions *options;
    LeafSet sets[2];    /* training, test */
    int floats;         /* every set is held as floats */
    int features;       /* values per sample, 0 until the first sample */
    int top_label;
    /* writers of the training files */
    Names writers;
    int *writer_start;  /* (n_writers + 1) */
    size_t writer_capacity;
} Leaf;

static int names_add(Names *names, const char *name)
{
    size_t n = strlen(name) + 1;
    if (names->size + n > names->capacity) {
        size_t capacity = names->capacity ? 2 * names->capacity : 4096;
        while (capacity < names->size + n) capacity *= 2;
        char *text = realloc(names->text, capacity);
        if (!text) return HS_E_NOMEM;
        names->text = text;
        names->capacity = capacity;
    }
    if (names->n == names->at_capacity) {
        size_t capacity = names->at_capacity ? 2 * names->at_capacity : 256;
        size_t *at = realloc(names->at, capacity * sizeof *at);
        if (!at) return HS_E_NOMEM;
        names->at = at;
        names->at_capacity = capacity;
    }
    names->at[names->n++] = names->size;
    memcpy(names->text + names->size, name, n);
    names->size += n;
    return HS_OK;
}

static void names_free(Names *names)
{
    free(names->text);
    free(names->at);
    memset(names, 0, sizeof *names);
}

static const char *names_get(const Names *names, size_t k) { return names->text + names->at[k]; }

static int leaf_grow_values(Leaf *r, LeafSet *set, size_t more)
{
    if (set->values + more <= set->capacity) return HS_OK;
    size_t capacity = set->capacity < ((size_t)1 << 20) ? (size_t)1 << 20 : set->capacity + set->capacity / 2;
    while (capacity < set->values + more) capacity += capacity / 2;
    void *grown = r->floats ? realloc(set->floats, capacity * sizeof(float)) : realloc(set->bytes, capacity);
    if (!grown) return HS_E_NOMEM;
    if (r->floats)
        set->floats = grown;
    else
        set->bytes = grown;
    set->capacity = capacity;
    return HS_OK;
}

/* Turns every set held as bytes into floats (k -> k / 255.0f). */
static int leaf_to_floats(Leaf *r)
{
    for (int s = 0; s < 2; s++) {
        LeafSet *set = &r->sets[s];
        size_t capacity = set->capacity ? set->capacity : 1;
        float *floats = malloc(capacity * sizeof(float));
        if (!floats) return HS_E_NOMEM;
        for (size_t k = 0; k < set->values; k++) floats[k] = (float)set->bytes[k] / 255.0f;
        free(set->bytes);
        set->bytes = NULL;
        set->floats = floats;
        set->capacity = capacity;
    }
    r->floats = 1;
    return HS_OK;
}

/* x of one user: a list of samples, each a flat list of numbers; *count gets the samples. */
static int leaf_read_x(Json *j, Leaf *r, LeafSet *set, const char *user, long *count)
{
    int status = json_expect(j, '[', "to open the list x of a user");
    if (status != HS_OK) return status;
    *count = 0;
    if (json_peek(j) == ']') {
        j->pos++;
        return HS_OK;
    }
    for (;;) {
        if (json_peek(j) != '[')
            return json_error(j, "user '%s', sample %ld: expected '[' to open a list of numbers, found %s (LEAF's "
                              "text data sets are not supported)",
                              user, *count, json_describe(json_peek(j)).text);
        j->pos++;
        long values = 0;
        if (json_peek(j) == ']') return json_error(j, "user '%s', sample %ld: an empty list", user, *count);
        for (;;) {
            if (r->features && values == r->features)
                return json_error(j, "user '%s', sample %ld: more than the %d values of the first sample", user,
                                  *count, r->features);
            double v;
            int c = json_peek(j);
            if (c != '-' && (c < '0' || c > '9'))
                return json_error(j, "user '%s', sample %ld, value %ld: expected a number, found %s", user, *count,
                                  values, json_describe(c).text);
            if ((status = json_number(j, &v)) != HS_OK) return status;
            if (set->values == set->capacity && (status = leaf_grow_values(r, set, 1)) != HS_OK)
                return json_error(j, "out of memory");
            if (!r->floats) {
                double scaled = v * 255.0;
                if (scaled >= -0.5 && scaled < 255.5) {
                    double k = floor(scaled + 0.5);
                    if (fabs(scaled - k) <= 1e-6) {
                        set->bytes[set->values++] = (uint8_t)k;
                        goto next;
                    }
                }
                if ((status = leaf_to_floats(r)) != HS_OK) return json_error(j, "out of memory");
            }
            set->floats[set->values++] = (float)v;
        next:
            values++;
            c = json_peek(j);
            if (c == ',') {
                j->pos++;
                continue;
            }
            if (c == ']') {
                j->pos++;
                break;
            }
            return json_error(j, "user '%s', sample %ld: expected ',' or ']' after a value, found %s", user, *count,
                              json_describe(c).text);
        }
        if (!r->features) {
            if (values > 0x7fffffff) return json_error(j, "a sample of more than 2^31 values");
            r->features = (int)values;
        } else if (values != r->features) {
            return json_error(j, "user '%s', sample %ld: %ld values, but the first sample had %d", user, *count, values,
                              r->features);
        }
        ++*count;
        int c = json_peek(j);
        if (c == ',') {
            j->pos++;
            continue;
        }
        if (c == ']') {
            j->pos++;
            return HS_OK;
        }
        return json_error(j, "user '%s': expected ',' or ']' after sample %ld, found %s", user, *count - 1,
                          json_describe(c).text);
    }
}

/* y of one user: a list of integer labels. */
static int leaf_read_y(Json *j, Leaf *r, LeafSet *set, const char *user, long *count)
{
    int status = json_expect(j, '[', "to open the list y of a user");
    if (status != HS_OK) return status;
    *count = 0;
    if (json_peek(j) == ']') {
        j->pos++;
        return HS_OK;
    }
    const int limit = r->options->classes > 0 ? r->options->classes : DATASET_MAX_CLASSES;
    for (;;) {
        double v;
        int c = json_peek(j);
        if (c != '-' && (c < '0' || c > '9'))
            return json_error(j, "user '%s', label %ld: expected a number, found %s", user, *count, json_describe(c).text);
        if ((status = json_number(j, &v)) != HS_OK) return status;
        if (v != floor(v) || v < 0 || v >= limit)
            return json_error(j, "user '%s', label %ld: %g is not a class 0..%d%s", user, *count, v, limit - 1,
                              r->options->classes > 0 ? "" : " (labels are held as bytes)");
        if (set->rows == set->label_capacity) {
            size_t capacity = set->label_capacity ? 2 * set->label_capacity : 65536;
            uint8_t *labels = realloc(set->labels, capacity);
            if (!labels) return json_error(j, "out of memory");
            set->labels = labels;
            set->label_capacity = capacity;
        }
        set->labels[set->rows++] = (uint8_t)v;
        if ((int)v > r->top_label) r->top_label = (int)v;
        ++*count;
        c = json_peek(j);
        if (c == ',') {
            j->pos++;
            continue;
        }
        if (c == ']') {
            j->pos++;
            return HS_OK;
        }
        return json_error(j, "user '%s': expected ',' or ']' after label %ld, found %s", user, *count - 1,
                          json_describe(c).text);
    }
}

/* One file's users, num_samples and user_data (names, and counts in entry order). */
typedef struct LeafFile {
    Names users;
    long *num_samples;
    size_t n_num_samples, num_capacity;
    int have_users, have_num_samples, have_user_data;
    Names data_users;
    long *data_counts; /* (data_users.n) samples of each user_data entry */
    size_t data_capacity;
    long data_rows_before; /* the set's rows when user_data began */
} LeafFile;

static int leaf_read_users(Json *j, LeafFile *file)
{
    int status = json_expect(j, '[', "to open \"users\" (LEAF's layout: a list of user ids)");
    if (status != HS_OK) return status;
    if (json_peek(j) == ']') {
        j->pos++;
        return HS_OK;
    }
    char name[JSON_MAX_STRING];
    for (;;) {
        if (json_peek(j) != '"')
            return json_error(j, "\"users\" must hold strings, found %s", json_describe(json_peek(j)).text);
        if ((status = json_string(j, name, sizeof name, "users")) != HS_OK) return status;
        if (names_add(&file->users, name) != HS_OK) return json_error(j, "out of memory");
        int c = json_peek(j);
        j->pos += c == ',' || c == ']';
        if (c == ']') return HS_OK;
        if (c != ',') return json_error(j, "\"users\": expected ',' or ']', found %s", json_describe(c).text);
    }
}

static int leaf_read_num_samples(Json *j, LeafFile *file)
{
    int status = json_expect(j, '[', "to open \"num_samples\" (LEAF's layout: a list of counts)");
    if (status != HS_OK) return status;
    if (json_peek(j) == ']') {
        j->pos++;
        return HS_OK;
    }
    for (;;) {
        int c = json_peek(j);
        double v;
        if (c != '-' && (c < '0' || c > '9'))
            return json_error(j, "\"num_samples\" must hold counts, found %s", json_describe(c).text);
        if ((status = json_number(j, &v)) != HS_OK) return status;
        if (v != floor(v) || v < 0 || v > 2147483647.0)
            return json_error(j, "\"num_samples\": %g is not a count", v);
        if (file->n_num_samples == file->num_capacity) {
            size_t capacity = file->num_capacity ? 2 * file->num_capacity : 256;
            long *grown = realloc(file->num_samples, capacity * sizeof *grown);
            if (!grown) return json_error(j, "out of memory");
            file->num_samples = grown;
            file->num_capacity = capacity;
        }
        file->num_samples[file->n_num_samples++] = (long)v;
        c = json_peek(j);
        j->pos += c == ',' || c == ']';
        if (c == ']') return HS_OK;
        if (c != ',') return json_error(j, "\"num_samples\": expected ',' or ']', found %s", json_describe(c).text);
    }
}

static int leaf_read_user_data(Json *j, Leaf *r, LeafSet *set, LeafFile *file)
{
    int status = json_expect(j, '{', "to open \"user_data\" (LEAF's layout: an object of users)");
    if (status != HS_OK) return status;
    if (json_peek(j) == '}') {
        j->pos++;
        return HS_OK;
    }
    char user[JSON_MAX_STRING], key[64];
    for (;;) {
        if (json_peek(j) != '"')
            return json_error(j, "\"user_data\": expected a user id, found %s", json_describe(json_peek(j)).text);
        if ((status = json_string(j, user, sizeof user, "user_data")) != HS_OK) return status;
        if ((status = json_expect(j, ':', "after a user id")) != HS_OK) return status;
        if (json_peek(j) != '{')
            return json_error(j, "user '%s': expected an object {\"x\": ..., \"y\": ...}, found %s", user,
                              json_describe(json_peek(j)).text);
        j->pos++;
        long n_x = -1, n_y = -1;
        if (json_peek(j) != '}')
            for (;;) {
                if (json_peek(j) != '"')
                    return json_error(j, "user '%s': expected a key, found %s", user, json_describe(json_peek(j)).text);
                if ((status = json_string(j, key, sizeof key, "a user's key")) != HS_OK) return status;
                if ((status = json_expect(j, ':', "after a key")) != HS_OK) return status;
                if (strcmp(key, "x") == 0 && n_x < 0) {
                    if ((status = leaf_read_x(j, r, set, user, &n_x)) != HS_OK) return status;
                } else if (strcmp(key, "y") == 0 && n_y < 0) {
                    if ((status = leaf_read_y(j, r, set, user, &n_y)) != HS_OK) return status;
                } else if (strcmp(key, "x") == 0 || strcmp(key, "y") == 0) {
                    return json_error(j, "user '%s': \"%s\" given twice", user, key);
                } else if ((status = json_skip(j, 0)) != HS_OK) {
                    return status;
                }
                int c = json_peek(j);
                j->pos += c == ',' || c == '}';
                if (c == '}') break;
                if (c != ',') return json_error(j, "user '%s': expected ',' or '}', found %s", user, json_describe(c).text);
            }
        else
            j->pos++;
        if (n_x < 0 || n_y < 0)
            return json_error(j, "user '%s': no \"%s\" (LEAF's layout: {\"x\": [samples], \"y\": [labels]})", user,
                              n_x < 0 ? "x" : "y");
        if (n_x != n_y)
            return json_error(j, "user '%s': %ld samples in x but %ld labels in y", user, n_x, n_y);
        if (names_add(&file->data_users, user) != HS_OK) return json_error(j, "out of memory");
        if (file->data_users.n > file->data_capacity) {
            size_t capacity = file->data_capacity ? 2 * file->data_capacity : 256;
            long *grown = realloc(file->data_counts, capacity * sizeof *grown);
            if (!grown) return json_error(j, "out of memory");
            file->data_counts = grown;
            file->data_capacity = capacity;
        }
        file->data_counts[file->data_users.n - 1] = n_x;
        int c = json_peek(j);
        j->pos += c == ',' || c == '}';
        if (c == '}') return HS_OK;
        if (c != ',') return json_error(j, "\"user_data\": expected ',' or '}', found %s", json_describe(c).text);
    }
}

typedef struct NameIndex {
    const char *name;
    size_t index;
} NameIndex;

static int name_index_compare(const void *a, const void *b)
{
    const NameIndex *x = a, *y = b;
    return strcmp(x->name, y->name);
}

/* The names with their indices, sorted by name; NULL when out of memory. */
static NameIndex *names_order(const Names *names)
{
    NameIndex *order = malloc((names->n ? names->n : 1) * sizeof *order);
    if (!order) return NULL;
    for (size_t k = 0; k < names->n; k++) order[k] = (NameIndex){names_get(names, k), k};
    qsort(order, names->n, sizeof *order, name_index_compare);
    return order;
}

/* After a file: users, num_samples and user_data must name the same users with the same
 * counts. */
static int leaf_check_file(Json *j, LeafFile *file)
{
    if (!file->have_users || !file->have_num_samples || !file->have_user_data)
        return json_error(j, "not LEAF's layout: no \"%s\" key at the top level (expected \"users\", "
                          "\"num_samples\" and \"user_data\")",
                          !file->have_users ? "users" : !file->have_num_samples ? "num_samples" : "user_data");
    if (file->users.n != file->n_num_samples)
        return json_error(j, "\"users\" names %zu users but \"num_samples\" has %zu counts", file->users.n,
                          file->n_num_samples);
    if (file->users.n != file->data_users.n)
        return json_error(j, "\"users\" names %zu users but \"user_data\" holds %zu", file->users.n,
                          file->data_users.n);
    NameIndex *a = names_order(&file->users), *b = names_order(&file->data_users);
    int status = HS_OK;
    if (!a || !b) {
        status = json_error(j, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < file->users.n; k++) {
        const char *listed = a[k].name, *held = b[k].name;
        if (k > 0 && strcmp(held, b[k - 1].name) == 0) {
            status = json_error(j, "user '%s' appears twice in \"user_data\"", held);
            goto done;
        }
        if (strcmp(listed, held) != 0) {
            status = json_error(j, "\"users\" and \"user_data\" disagree: '%s' is in %s only",
                                strcmp(listed, held) < 0 ? listed : held,
                                strcmp(listed, held) < 0 ? "\"users\"" : "\"user_data\"");
            goto done;
        }
        if (file->num_samples[a[k].index] != file->data_counts[b[k].index]) {
            status = json_error(j, "user '%s': \"num_samples\" says %ld but \"user_data\" holds %ld samples", held,
                                file->num_samples[a[k].index], file->data_counts[b[k].index]);
            goto done;
        }
    }
done:
    free(a);
    free(b);
    return status;
}

static void leaf_file_free(LeafFile *file)
{
    names_free(&file->users);
    names_free(&file->data_users);
    free(file->num_samples);
    free(file->data_counts);
}

static int leaf_add_writers(Leaf *r, const LeafFile *file, size_t first_row)
{
    size_t row = first_row;
    for (size_t k = 0; k < file->data_users.n; k++) {
        long n = file->data_counts[k];
        if (n == 0) continue; /* a writer with no training sample holds nothing */
        if (names_add(&r->writers, names_get(&file->data_users, k)) != HS_OK) return HS_E_NOMEM;
        if (r->writers.n + 1 > r->writer_capacity) {
            size_t capacity = r->writer_capacity ? 2 * r->writer_capacity : 256;
            int *grown = realloc(r->writer_start, capacity * sizeof *grown);
            if (!grown) return HS_E_NOMEM;
            r->writer_start = grown;
            r->writer_capacity = capacity;
        }
        r->writer_start[r->writers.n - 1] = (int)row;
        row += (size_t)n;
        r->writer_start[r->writers.n] = (int)row;
    }
    return HS_OK;
}

/* One LEAF JSON file into the set (0 training, 1 test). */
static int leaf_read_file(Leaf *r, const char *path, int which, uint64_t max_bytes, HsDiag *diag)
{
    Json j = {.path = path, .line = 1, .diag = diag};
    LeafFile file = {0};
    LeafSet *set = &r->sets[which];
    size_t first_row = set->rows;
    int status = input_file_open(&j.in, path, max_bytes, HS_E_MISSING, diag);
    if (status != HS_OK) return status;
    j.buf = malloc(JSON_WINDOW + JSON_LOOKAHEAD + 1);
    if (!j.buf) {
        status = hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
        goto done;
    }
    j.buf[0] = '\0';
    if ((status = json_fill(&j)) != HS_OK) goto done;
    if (json_peek(&j) != '{') {
        status = json_error(&j, "not LEAF's layout: the file must hold one object {\"users\": ..., \"num_samples\": "
                            "..., \"user_data\": ...}, found %s", json_describe(json_peek(&j)).text);
        goto done;
    }
    j.pos++;
    char key[64];
    if (json_peek(&j) != '}')
        for (;;) {
            if (json_peek(&j) != '"') {
                status = json_error(&j, "expected a key, found %s", json_describe(json_peek(&j)).text);
                goto done;
            }
            /* keys longer than any LEAF key are skipped as unknown ones */
            char long_key[JSON_MAX_STRING];
            if ((status = json_string(&j, long_key, sizeof long_key, "a top-level key")) != HS_OK) goto done;
            snprintf(key, sizeof key, "%s", long_key);
            if ((status = json_expect(&j, ':', "after a key")) != HS_OK) goto done;
            int *seen = strcmp(key, "users") == 0         ? &file.have_users
                        : strcmp(key, "num_samples") == 0 ? &file.have_num_samples
                        : strcmp(key, "user_data") == 0   ? &file.have_user_data
                                                          : NULL;
            if (seen && *seen) {
                status = json_error(&j, "\"%s\" given twice", key);
                goto done;
            }
            if (seen) *seen = 1;
            if (seen == &file.have_users)
                status = leaf_read_users(&j, &file);
            else if (seen == &file.have_num_samples)
                status = leaf_read_num_samples(&j, &file);
            else if (seen == &file.have_user_data)
                status = leaf_read_user_data(&j, r, set, &file);
            else
                status = json_skip(&j, 0);
            if (status != HS_OK) goto done;
            int c = json_peek(&j);
            j.pos += c == ',' || c == '}';
            if (c == '}') break;
            if (c != ',') {
                status = json_error(&j, "expected ',' or '}' at the top level, found %s", json_describe(c).text);
                goto done;
            }
        }
    else
        j.pos++;
    if (json_peek(&j) != -1) {
        status = json_error(&j, "%s after the top-level object", json_describe(json_peek(&j)).text);
        goto done;
    }
    if ((status = leaf_check_file(&j, &file)) != HS_OK) goto done;
    if (set->rows > 0x7fffffff) {
        status = json_error(&j, "more than 2^31 samples");
        goto done;
    }
    if (which == 0 && leaf_add_writers(r, &file, first_row) != HS_OK)
        status = hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
done:
    free(j.buf);
    input_file_close(&j.in);
    leaf_file_free(&file);
    return status;
}

/* ---------------------------------------------------------------- the folder */

static int leaf_name_compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void dataset_free_names(char **names)
{
    if (!names) return;
    for (char **p = names; *p; p++) free(*p);
    free(names);
}

/* The *.json files of folder/sub, sorted, as a NULL-terminated list of paths. */
static int leaf_list(const char *folder, const char *sub, char ***out, HsDiag *diag)
{
    char dir_path[4200];
    snprintf(dir_path, sizeof dir_path, "%s/%s", folder, sub);
    *out = NULL;
    DIR *dir = opendir(dir_path);
    if (!dir)
        return hs_diag_set(diag, HS_E_MISSING, dir_path, 0,
                           "cannot open the folder (a LEAF data set is the folder holding train/ and test/ as LEAF's "
                           "preprocessing writes them)");
    char **names = NULL;
    size_t n = 0, capacity = 0;
    int status = HS_OK;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.') continue;
        if (n + 2 > capacity) {
            capacity = capacity ? 2 * capacity : 16;
            char **grown = realloc(names, capacity * sizeof *grown);
            if (!grown) {
                status = HS_E_NOMEM;
                break;
            }
            names = grown;
        }
        size_t size = strlen(dir_path) + len + 2;
        if (!(names[n] = malloc(size))) {
            status = HS_E_NOMEM;
            break;
        }
        snprintf(names[n++], size, "%s/%s", dir_path, e->d_name);
        names[n] = NULL;
    }
    closedir(dir);
    if (status == HS_OK && n == 0)
        status = hs_diag_set(diag, HS_E_MISSING, dir_path, 0, "holds no .json file");
    else if (status != HS_OK)
        hs_diag_set(diag, status, dir_path, 0, "out of memory");
    if (status != HS_OK) {
        if (names) names[n] = NULL;
        dataset_free_names(names);
        return status;
    }
    qsort(names, n, sizeof *names, leaf_name_compare);
    *out = names;
    return HS_OK;
}

int dataset_leaf_files(const char *folder, char ***train, char ***test, HsDiag *diag)
{
    *train = *test = NULL;
    int status = leaf_list(folder, "train", train, diag);
    if (status == HS_OK) status = leaf_list(folder, "test", test, diag);
    if (status != HS_OK) {
        dataset_free_names(*train);
        *train = NULL;
    }
    return status;
}

int dataset_read_leaf(char *const *train, char *const *test, const DataOptions *options, uint64_t max_bytes,
                      Dataset *ds, HsDiag *diag)
{
    Leaf r = {.options = options};
    int status = HS_OK;
    for (int which = 0; which < 2 && status == HS_OK; which++)
        for (char *const *p = which ? test : train; *p && status == HS_OK; p++)
            status = leaf_read_file(&r, *p, which, max_bytes, diag);
    if (status == HS_OK && r.sets[0].rows == 0)
        status = hs_diag_set(diag, HS_E_INPUT, train[0], 0, "the training files hold no sample");
    if (status == HS_OK && r.sets[1].rows == 0)
        status = hs_diag_set(diag, HS_E_INPUT, test[0], 0, "the test files hold no sample");
    /* a writer in two training files would be two agents' worth of one person */
    if (status == HS_OK) {
        NameIndex *order = names_order(&r.writers);
        if (!order) status = hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
        for (size_t k = 1; order && k < r.writers.n && status == HS_OK; k++)
            if (strcmp(order[k].name, order[k - 1].name) == 0)
                status = hs_diag_set(diag, HS_E_INPUT, train[0], 0, "user '%s' appears in more than one training file",
                                     order[k].name);
        free(order);
    }
    int c = options->channels, h = options->height, w = options->width;
    if (status == HS_OK) {
        if (c || h || w) {
            if ((long long)c * h * w != r.features)
                status = hs_diag_set(diag, HS_E_INPUT, train[0], 0,
                                     "the shape %dx%dx%d given does not hold the %d values of a sample", c, h, w,
                                     r.features);
        } else {
            int side = (int)lround(sqrt((double)r.features));
            if ((long long)side * side == r.features)
                c = 1, h = w = side;
            else
                c = r.features, h = w = 1;
        }
    }
    if (status == HS_OK && options->classes == 0 && r.top_label + 1 < 1)
        status = hs_diag_set(diag, HS_E_INPUT, train[0], 0, "no labels");
    for (int s = 0; s < 2; s++) {
        LeafSet *set = &r.sets[s];
        uint8_t **pixels = s ? &ds->test_pixels : &ds->train_pixels;
        float **floats = s ? &ds->test_x : &ds->train_x;
        /* hand the arrays over even on error: dataset_free frees them */
        if (r.floats)
            *floats = set->floats;
        else
            *pixels = set->bytes;
        free(r.floats ? (void *)set->bytes : (void *)set->floats);
        if (s) ds->test_y = set->labels, ds->n_test = (int)set->rows;
        else ds->train_y = set->labels, ds->n_train = (int)set->rows;
    }
    if (status == HS_OK) {
        ds->channels = c, ds->height = h, ds->width = w, ds->features = r.features;
        ds->classes = options->classes > 0 ? options->classes : r.top_label + 1;
        ds->n_writers = (int)r.writers.n;
        ds->writer_start = r.writer_start;
        ds->writer_names = r.writers.text;
        ds->writer_names_size = r.writers.size;
        r.writer_start = NULL;
        r.writers.text = NULL;
    }
    free(r.writer_start);
    names_free(&r.writers);
    return status;
}
