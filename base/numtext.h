/* numtext.h — a double as the shortest decimal text that reads back (strtod) to the same
 * bits: what a person or a script reading `hetsim pair`, `report --json` or `show`
 * should see (0.1, not 0.10000000000000001; 16.8, not the 6 digits of %g that lose bits). */
#ifndef BASE_NUMTEXT_H
#define BASE_NUMTEXT_H

#include <stddef.h>

/* Big enough for any double in %.17g, sign and exponent included. */
#define NUMTEXT_SIZE 32

/* Writes value into out (size >= NUMTEXT_SIZE) with the fewest significant digits, 1 to
 * 17, whose text reads back to value; "inf", "-inf" and "nan" for the non-finite ones
 * (callers that must not print them check first). Returns out. */
char *numtext_double(char *out, size_t size, double value);

/* A copy of text (malloc'd; NULL when out of memory) in which every number written with a
 * point or an exponent, standing alone (not inside a word such as a file name), is
 * re-written with %.17g, as hetsim wrote numbers before numtext_double. Sweep ids hash
 * this form of runs.config (sim/scenario/sweep.c), so that the ids, and `--resume` of a
 * sweep begun by an older hetsim, do not depend on how numbers are written. */
char *numtext_as_17g(const char *text);

#endif
