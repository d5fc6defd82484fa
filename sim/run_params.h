/* run_params.h — every resolved key of a run as rows of the run_params table, from the
 * resolved scenario text (runs.config), so that swept and resolved values are data:
 * `SELECT value_num FROM run_params WHERE key = 'compute.sigma'`.
 *
 * One row per `key = value` of the text: value_text as written (SI: the config writes
 * SI), value_num the number when the value is one (inf included), NULL otherwise, unit
 * its SI unit. A value that is a distribution gets, besides its own row (value_num
 * NULL), a row KEY.dist holding its kind and one row per parameter:
 *   uniform(a, b)        KEY.low, KEY.high         (the key's unit)
 *   normal(m, s)         KEY.mean, KEY.sd          (the key's unit)
 *   lognormal(m, s)      KEY.median (the key's unit), KEY.sigma (plain)
 *   pareto(s, a)         KEY.scale (the key's unit), KEY.shape (plain)
 *   choice(v1:p1, ...)   KEY.value1, KEY.p1, KEY.value2, KEY.p2, ...
 *   trace(FILE)          KEY.path (text)
 * A constant (`compute = 200000000`) is a plain number in its own row. The unit of a key
 * is its scenario schema row's (run_params_unit).
 * `swept` is left 0 here: the sweep's writer marks the rows of its axes. */
#ifndef SIM_RUN_PARAMS_H
#define SIM_RUN_PARAMS_H

#include "base/hs_error.h"
#include "sim/kernel/sink.h"

typedef struct RunParams {
    SinkParam *rows;    /* (count) owned; strings point into text */
    int count;
    char *text;         /* owned */
} RunParams;

/* Rows of config (the resolved INI text) into *out (zeroed first); HS_E_NOMEM or HS_OK.
 * Lines that are neither a [section] nor `key = value` are skipped. */
int run_params_from_config(const char *config, RunParams *out);
void run_params_free(RunParams *params);

/* The SI unit of key in section for a run of method ("" for a plain number). */
const char *run_params_unit(const char *section, const char *key, const char *method);

#endif
