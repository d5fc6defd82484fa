/* sweep.h — a scenario's [sweep] expanded into runs: the values of each key, the points,
 * each run's scenario, label and the sweep id (sweep.c). Running the runs — the record
 * stream, the master and the drivers — is driver/sweep.h, a floor above; it also gives
 * sweep_resolve the check that draws each run's agents (the world is above this floor).
 *
 * Expansion rules (the contract tests and users rely on):
 *  - Every [sweep] key but `repeat` is SECTION.KEY, split at its last dot, so group keys
 *    work (`agents.stragglers.compute` is key compute of [agents.stragglers]). Its value
 *    is a list split at top-level commas: commas inside parentheses belong to the value
 *    (`lognormal(2 GFLOPS, 0.2), lognormal(2 GFLOPS, 1.6)` is two values). An item
 *    wrapped whole in parentheses loses them, which is how a value that is itself a
 *    list is swept: `model.layers = (784,256,10), (784,64,10)`. Items are trimmed; an
 *    empty item, unbalanced parentheses or a value listed twice is an error at the
 *    [sweep] line.
 *  - The runs are the Cartesian product of the lists, `repeat = R` (default 1) seeds
 *    each. Order is deterministic: the first key varies slowest, the seed fastest. Run
 *    index i is point i / R, repeat r = i % R.
 *  - A point's document is the scenario (with --set applied, [sweep] removed) with the
 *    point's values set on top, each entry keeping the file:line of its [sweep] line, so
 *    an unknown section, key or bad value is reported there. The swept values win over
 *    --set. Repeat r runs with seed = the point's resolved [run] seed + r.
 *  - Label of a run (runs.point): "KEY=VALUE" for each key in order, then "seed=N",
 *    space separated: `run.method=sync agents.compute=lognormal(2 GFLOPS, 0.2) seed=1`.
 *    A scenario without [sweep] (or an empty one) is a sweep of one run, "seed=N".
 *  - Sweep id (runs.sweep): "sw-" and 16 hex digits of FNV-1a 64 over every run's label
 *    and fully resolved config, in index order. The same scenario, overrides and hetsim
 *    version give the same id (whatever the file is called), which is how --resume finds
 *    an earlier attempt; changing any value that reaches a run gives a new sweep. */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include "base/hs_error.h"
#include "sim/scenario/inidoc.h"
#include "sim/scenario/scenario.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SWEEP_MAX_AXES 32
#define SWEEP_MAX_RUNS 10000000
#define SWEEP_ID_SIZE 24

typedef struct SweepAxis {
    char section[INIDOC_NAME_MAX];
    char key[INIDOC_NAME_MAX];
    char **values;      /* (n_values) trimmed, owned */
    int n_values;
    int line;           /* the [sweep] line */
} SweepAxis;

typedef struct Sweep {
    IniDoc base;        /* the scenario without [sweep]; owned */
    SweepAxis axes[SWEEP_MAX_AXES];
    int n_axes;
    int repeat;
    int repeat_line;    /* 0 when repeat is not given */
    int64_t n_points;   /* product of the lists' lengths */
    int64_t n_runs;     /* n_points * repeat */
    /* Filled by sweep_expand: */
    char **labels;      /* (n_runs) owned */
    int64_t *by_label;  /* (n_runs) run indices sorted by label, for sweep_find */
    char id[SWEEP_ID_SIZE];
    int64_t first_run;  /* run id of run index 0 when the writer reserved ids (0: none) */
    const struct RunOrigin *origin; /* driver/origin.h: the provenance its runs record */
    int threads_default; /* worker threads of a run whose [run] threads is not set (0: the cores) */
    /* Set by the command before sweep_expand (may be NULL): called with the scenario of
     * every point (its first repeat) after check, so the command can read the files its
     * runs will read before the database is opened (cli/cli_preflight.c, once per
     * folder, hence the context); an error stops the sweep there. */
    int (*check_run)(void *ctx, const Scenario *sc, HsDiag *diag);
    void *check_ctx;
} Sweep;

/* Splits text at top-level commas into a new array of *count trimmed items (outer
 * parentheses of a whole item removed). The caller frees with sweep_values_free.
 * Returns HS_E_INPUT with the reason in why, or HS_E_NOMEM. */
int sweep_split_values(const char *text, char ***values, int *count, char *why, size_t why_size);
void sweep_values_free(char **values, int count);

/* Reads doc's [sweep] into *sw (which owns a copy of doc without [sweep]). Checks the
 * shape of every [sweep] line; the keys themselves are checked by sweep_expand, which
 * resolves every point. Errors: HS_E_INPUT "FILE:LINE: ..." in diag. On failure *sw is
 * freed. */
int sweep_parse(const IniDoc *doc, Sweep *sw, HsDiag *diag);
/* What a run must pass beyond its resolution before anything runs: driver/sweep.h's
 * sweep_resolve draws its agents (world_build). HS_OK or an error with its message in
 * diag. */
typedef int (*SweepRunCheck)(const Scenario *sc, HsDiag *diag);
/* Resolves every run and calls check on it (when not NULL), so nothing runs unless every
 * run can start; fills labels and the id. Errors name the run: "... (in sweep run
 * KEY=VALUE ... seed=N)". */
int sweep_expand(Sweep *sw, SweepRunCheck check, HsDiag *diag);
/* The scenario of run index (0 <= index < n_runs), seed included. */
int sweep_scenario(const Sweep *sw, int64_t index, Scenario *sc, HsDiag *diag);
/* Index of the run labelled label, -1 if none. Needs sweep_expand. */
int64_t sweep_find(const Sweep *sw, const char *label);
/* Accepts a zeroed or freed Sweep. */
void sweep_free(Sweep *sw);

#endif
