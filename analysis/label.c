/* label.c — sweep point labels: see label.h for the grammar. */
#include "analysis/label.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_error.h"
#include "base/grow.h"
#include "base/units.h"

static int is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
}

/* Length of the KEY in "KEY=..." at text, 0 when text does not start a pair. */
static size_t key_length(const char *text)
{
    size_t n = 0;
    while (is_key_char(text[n])) n++;
    return n > 0 && text[n] == '=' ? n : 0;
}

static char *copy_span(const char *text, size_t length)
{
    char *copy = malloc(length + 1);
    if (copy == NULL) return NULL;
    memcpy(copy, text, length);
    copy[length] = '\0';
    return copy;
}

static int add_span(Label *label, const char *key, size_t key_len, const char *value,
                    size_t value_len)
{
    while (value_len > 0 && value[value_len - 1] == ' ') value_len--;
    if (hs_grow((void **)&label->pairs, &label->capacity, label->count, sizeof *label->pairs, 8) != HS_OK)
        return HS_E_NOMEM;
    LabelPair *pair = &label->pairs[label->count];
    pair->key = copy_span(key, key_len);
    pair->value = copy_span(value, value_len);
    if (pair->key == NULL || pair->value == NULL) {
        free(pair->key);
        free(pair->value);
        return HS_E_NOMEM;
    }
    label->count++;
    return HS_OK;
}

int label_add(Label *label, const char *key, const char *value)
{
    return add_span(label, key, strlen(key), value, strlen(value));
}

/* A whole decimal number that fits in uint64_t. */
static int parse_seed(const char *text, uint64_t *seed)
{
    if (*text < '0' || *text > '9') return -1;
    for (const char *p = text; *p; p++)
        if (*p < '0' || *p > '9') return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0') return -1;
    *seed = (uint64_t)value;
    return 0;
}

int label_parse(const char *text, Label *label)
{
    memset(label, 0, sizeof *label);
    if (text == NULL) return HS_OK;
    const char *key = NULL, *value = text;
    size_t key_len = 0;
    int depth = 0;
    for (const char *p = text; *p; p++) {
        int boundary = (p == text || (p[-1] == ' ' && depth == 0)) && *p != ' ';
        size_t length = boundary ? key_length(p) : 0;
        if (length > 0) {
            if (p > value || key != NULL) {
                /* close the pair before this one (or the leading keyless text) */
                int status = add_span(label, key ? key : "", key_len, value, (size_t)(p - value));
                if (status != HS_OK) return status;
            }
            key = p;
            key_len = length;
            value = p + length + 1;
            p += length;  /* the loop's p++ steps over '=' */
            depth = 0;
            continue;
        }
        if (*p == '(') depth++;
        else if (*p == ')' && depth > 0) depth--;
    }
    if (key != NULL || *value != '\0') {
        int status = add_span(label, key ? key : "", key_len, value, strlen(value));
        if (status != HS_OK) return status;
    }
    if (label->count > 0) {
        LabelPair *last = &label->pairs[label->count - 1];
        if (strcmp(last->key, "seed") == 0 && parse_seed(last->value, &label->seed) == 0) {
            label->has_seed = 1;
            free(last->key);
            free(last->value);
            label->count--;
        }
    }
    return HS_OK;
}

void label_free(Label *label)
{
    if (label == NULL) return;
    for (int i = 0; i < label->count; i++) {
        free(label->pairs[i].key);
        free(label->pairs[i].value);
    }
    free(label->pairs);
    memset(label, 0, sizeof *label);
}

const char *label_value(const Label *label, const char *key)
{
    for (int i = 0; i < label->count; i++)
        if (strcmp(label->pairs[i].key, key) == 0) return label->pairs[i].value;
    return NULL;
}

char *label_join(const Label *label, const char *skip_key)
{
    size_t size = 1;
    for (int i = 0; i < label->count; i++)
        size += strlen(label->pairs[i].key) + strlen(label->pairs[i].value) + 2;
    char *text = malloc(size), *w = text;
    if (text == NULL) return NULL;
    for (int i = 0; i < label->count; i++) {
        const LabelPair *pair = &label->pairs[i];
        if (skip_key != NULL && strcmp(pair->key, skip_key) == 0) continue;
        if (w > text) *w++ = ' ';
        if (pair->key[0] != '\0') {
            size_t n = strlen(pair->key);
            memcpy(w, pair->key, n);
            w += n;
            *w++ = '=';
        }
        size_t n = strlen(pair->value);
        memcpy(w, pair->value, n);
        w += n;
    }
    *w = '\0';
    return text;
}

/* strtod over the whole of [start, end) but for surrounding spaces. */
static int parse_whole_double(const char *start, const char *end, double *out)
{
    while (start < end && *start == ' ') start++;
    while (end > start && end[-1] == ' ') end--;
    if (start == end) return -1;
    char buffer[64];
    size_t length = (size_t)(end - start);
    if (length >= sizeof buffer) return -1;
    memcpy(buffer, start, length);
    buffer[length] = '\0';
    char *stop = NULL;
    double value = strtod(buffer, &stop);
    if (stop == buffer || *stop != '\0' || !isfinite(value)) return -1;
    *out = value;
    return 0;
}

int label_lognormal_sigma(const char *value, double *sigma)
{
    static const char name[] = "lognormal";
    while (*value == ' ') value++;
    if (strncmp(value, name, sizeof name - 1) != 0) return -1;
    const char *p = value + sizeof name - 1;
    while (*p == ' ') p++;
    if (*p != '(') return -1;
    const char *open = p, *close = p + strlen(p);
    while (close > open && close[-1] == ' ') close--;
    if (close == open || close[-1] != ')') return -1;
    close--;
    /* the comma between the two arguments, outside nested parentheses */
    int depth = 0;
    const char *comma = NULL;
    for (const char *q = open + 1; q < close; q++) {
        if (*q == '(') depth++;
        else if (*q == ')') depth--;
        else if (*q == ',' && depth == 0) {
            if (comma != NULL) return -1;  /* three arguments */
            comma = q;
        }
    }
    if (comma == NULL) return -1;
    return parse_whole_double(comma + 1, close, sigma);
}

int label_number_unit(const char *value, double *number, int *kind)
{
    static const UnitKind kinds[] = { UNIT_PLAIN, UNIT_COMPUTE, UNIT_BANDWIDTH, UNIT_TIME,
                                      UNIT_BYTES, UNIT_POWER, UNIT_ENERGY, UNIT_ENERGY_PER_BYTE,
                                      UNIT_SPEED };
    char why[256];
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        double parsed;
        if (units_parse(value, kinds[i], &parsed, why, (int)sizeof why) == HS_OK &&
            isfinite(parsed)) {
            *number = parsed;
            if (kind != NULL) *kind = (int)kinds[i];
            return 0;
        }
    }
    return -1;
}

int label_number(const char *value, double *number)
{
    return label_number_unit(value, number, NULL);
}
