/* real_text.c — see real_text.h. Trying 17, 16 and 15 digits costs three snprintf and
 * two strtod calls per number: the config writer writes a few hundred numbers a
 * run, so plain and obviously right is worth more than a shortest-digits algorithm
 * (Ryu, Grisu) here. */
#include "base/real_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *real_text(double v, char out[REAL_TEXT_MAX])
{
    snprintf(out, REAL_TEXT_MAX, "%.17g", v); /* always reads back */
    if (isnan(v)) return out;                 /* never equal to itself: nothing to test */
    /* fewer digits is not always fewer characters: %.15g writes 1.23456789012346e+16
     * where %.17g writes 12345678901234568 */
    char candidate[REAL_TEXT_MAX];
    for (int digits = 16; digits >= 15; digits--) {
        int n = snprintf(candidate, sizeof candidate, "%.*g", digits, v);
        if (strtod(candidate, NULL) == v && (size_t)n <= strlen(out)) memcpy(out, candidate, (size_t)n + 1);
    }
    return out;
}
