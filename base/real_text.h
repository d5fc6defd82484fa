/* real_text.h — a double as the shortest text that reads back to it. runs.config writes
 * its numbers so (`momentum = 0.9`, not 0.90000000000000002): strtod of the text returns
 * the very same double, so a stored config still resolves to the same scenario and the
 * same rows, and a person reading it sees the value they wrote. */
#ifndef BASE_REAL_TEXT_H
#define BASE_REAL_TEXT_H

/* Room for any text real_text writes ("-2.2250738585072014e-308" and the NUL). */
#define REAL_TEXT_MAX 32

/* Writes into out the shortest of printf's %.15g, %.16g and %.17g that strtod reads back
 * to v (%.17g always does; on equal length the fewer digits); inf, -inf and nan as %g
 * writes them. Returns out. */
const char *real_text(double v, char out[REAL_TEXT_MAX]);

#endif
