/* sweep_idtext.h — the text a sweep's id hashes for each run (sim/scenario/sweep.c), built
 * once per point rather than once per run. A point's repeats differ in [run] seed only,
 * and runs.config writes the seed once, as the line "seed = N" of [run]; the text of the
 * point's first run is therefore built in full (scenario_config_string, then the %.17g
 * form of sweep_id_text_full) and every repeat is that text with its seed's digits
 * replaced: the same bytes, at the cost of a copy instead of a config writer's pass
 * (~180k instructions a run, mostly number formatting). tests/check_sweep_idtext.c
 * compares the two for every scenario file in the tree and seeds of every length. */
#ifndef SIM_SCENARIO_SWEEP_IDTEXT_H
#define SIM_SCENARIO_SWEEP_IDTEXT_H

#include "sim/scenario/scenario.h"

#include <stddef.h>
#include <stdint.h>

typedef struct SweepIdText {
    char *text;       /* the point's text as built for its first seed; NULL: none yet */
    size_t length;    /* strlen(text) */
    size_t seed_at;   /* offset of the seed's digits in text; 0: not found, build in full */
    size_t seed_len;  /* how many digits */
    char *run;        /* a run's text: text with another seed spliced in */
} SweepIdText;

/* The reference: sc's runs.config (scenario_config_string) in the form sweep ids hash
 * (numbers in %.17g but in [method]). malloc'd; NULL when out of memory. */
char *sweep_id_text_full(const Scenario *sc);

/* Builds t (zeroed, or used before: it is reset) from a point's first run sc. HS_OK or
 * HS_E_NOMEM. */
int sweep_idtext_point(SweepIdText *t, const Scenario *sc);

/* The text of the run sc of the point t was built from (sc differs from the one given to
 * sweep_idtext_point in sc->seed at most): owned by t, valid until the next call; NULL
 * when out of memory. When the seed's line was not found the text is built in full. */
const char *sweep_idtext_run(SweepIdText *t, const Scenario *sc);

void sweep_idtext_free(SweepIdText *t);

#endif
