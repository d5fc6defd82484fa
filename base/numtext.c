/* numtext.c — the shortest round-tripping text of a double (numtext.h). Tries %.1g up to
 * %.17g: 17 digits always round-trip, and most values a user typed need far fewer; a
 * number written with an exponent that fits in 17 digits is then written plain. At
 * most 17 snprintf/strtod pairs per value; reports print hundreds of values, not millions. */
#include "base/numtext.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *numtext_double(char *out, size_t size, double value)
{
    if (isnan(value)) {
        snprintf(out, size, "nan");
        return out;
    }
    if (isinf(value)) {
        snprintf(out, size, value > 0 ? "inf" : "-inf");
        return out;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, size, "%.*g", digits, value);
        if (strtod(out, NULL) == value) break;
    }
    /* %g writes 10 with one digit as 1e+01: a whole number below 1e17 is written plain */
    char *e = strchr(out, 'e');
    if (e != NULL) {
        long exponent = strtol(e + 1, NULL, 10);
        if (exponent >= 0 && exponent < 17) snprintf(out, size, "%.*g", (int)exponent + 1, value);
    }
    return out;
}
