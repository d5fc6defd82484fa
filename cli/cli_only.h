/* cli_only.h — `--only KEY=V1,V2` of `hetsim sweep` and `hetsim check`: which points of a
 * sweep to run, without editing the file.
 *
 * Each --only names a [sweep] key (SECTION.KEY as the [sweep] line writes it) and some of
 * its swept values, split as [sweep] splits them (top-level commas; parentheses group).
 * A point is kept when, for every --only, its value of that key is one of the listed
 * ones (--only of different keys narrow each other; two --only of one key add up).
 * Every repeat (seed) of a kept point runs. A value matches a swept one when the two are
 * equal with all white space removed, or both read whole as the same number (`0.50`
 * matches `0.5`). A key no [sweep] line sweeps, or a value not among the swept ones, is
 * bad usage: exit 2, naming it and what is swept. */
#ifndef CLI_CLI_ONLY_H
#define CLI_CLI_ONLY_H

#include "sim/scenario/sweep.h"

#include <stddef.h>
#include <stdint.h>

/* Marks selected[i] = 1 for the kept runs i of sw (n_runs bytes, indexed like the
 * expansion) and puts their count in *n_selected. Needs sweep_parse only (not the
 * expansion). Returns 0, or the exit status with why in why (why_size bytes): 2 for bad
 * usage ("--only KEY: no point sweeps KEY (swept: ...)"), 1 when out of memory. */
int cli_only_select(const Sweep *sw, const char *const *only, int n_only, unsigned char *selected,
                    int64_t *n_selected, char *why, size_t why_size);

#endif
