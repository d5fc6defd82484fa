/* label.h — a sweep point label (runs.point) taken apart into its KEY=VALUE pairs.
 *
 * A label is "KEY=VALUE" pairs separated by single spaces with "seed=N" last
 * (sim/scenario/sweep.h), e.g. `run.method=sync agents.compute=lognormal(2 GFLOPS, 0.5) seed=2`.
 * Values may hold spaces (`200 MFLOPS`, `lognormal(2 GFLOPS, 0.5)`), so a space ends a
 * pair only where the text after it starts another KEY= (KEY made of letters, digits
 * and `_ . -`) and it is outside parentheses. Text before the first KEY= becomes a pair
 * with an empty key. The last pair is the seed when its key is `seed` and its value a
 * whole decimal number; it is kept apart from the other pairs. Parsing never fails on
 * the text itself (only when memory runs out): a label written by another version still
 * groups, at worst coarsely.
 *
 * Known limit: a value holding " KEY=" outside parentheses splits there (the sweep
 * never writes such values: its values come from INI lists, and a value with a top-level
 * space-and-equals would be ambiguous for any reader). */
#ifndef ANALYSIS_LABEL_H
#define ANALYSIS_LABEL_H

#include <stdint.h>

typedef struct LabelPair {
    char *key;      /* owned; "" for leading text without a key */
    char *value;    /* owned, trimmed of the spaces that separate pairs */
} LabelPair;

typedef struct Label {
    LabelPair *pairs;   /* (count) in label order, the seed excluded */
    int count, capacity;
    int has_seed;
    uint64_t seed;
} Label;

/* Parses text into *label (zeroed first; free with label_free, also after a failure).
 * Returns HS_OK or HS_E_NOMEM. */
int label_parse(const char *text, Label *label);

/* Appends a pair (copies of key and value). Returns HS_OK or HS_E_NOMEM. */
int label_add(Label *label, const char *key, const char *value);

void label_free(Label *label);

/* The value of key, or NULL when the label has none. Borrowed from label. */
const char *label_value(const Label *label, const char *key);

/* The pairs as "KEY=VALUE KEY=VALUE" without the seed and without pairs whose key is
 * skip_key (NULL skips none); a pair with an empty key prints its value alone.
 * malloc'd (the caller frees), NULL when out of memory. */
char *label_join(const Label *label, const char *skip_key);

/* The sigma of a `lognormal(MEDIAN, SIGMA)` value: 0 and *sigma, -1 when value is not
 * of that form or SIGMA is not a finite number. */
int label_lognormal_sigma(const char *value, double *sigma);

/* A value that is one finite number with an optional unit of the scenario grammar
 * (`200 MFLOPS`, `10 ms`, `0.5`), in SI units: 0 and *number, -1 otherwise. */
int label_number(const char *value, double *number);

/* label_number, and the UnitKind (base/units.h) the value was read as in *kind (may be
 * NULL): the first of plain, compute, bandwidth, time, bytes that reads it. */
int label_number_unit(const char *value, double *number, int *kind);

#endif
