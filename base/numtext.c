/* numtext.c — the shortest round-tripping text of a double (numtext.h). Tries %.1g up to
 * %.17g: 17 digits always round-trip, and most values a user typed need far fewer; a
 * number written with an exponent that fits in 17 digits is then written plain. At
 * most 17 snprintf/strtod pairs per value; reports print hundreds of values, not millions. */
#include "base/numtext.h"

#include <ctype.h>
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

/* The characters that make a word: a number touching one is part of a name. */
static int numtext_word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.';
}

char *numtext_as_17g(const char *text)
{
    size_t length = strlen(text);
    /* a token of n >= 1 characters becomes at most NUMTEXT_SIZE: n + NUMTEXT_SIZE each */
    char *out = malloc(length * (NUMTEXT_SIZE + 1) + 1);
    if (out == NULL) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < length;) {
        int starts = (isdigit((unsigned char)text[i]) || (text[i] == '-' && isdigit((unsigned char)text[i + 1]))) &&
                     (i == 0 || !numtext_word_char(text[i - 1]));
        if (starts) {
            char *end;
            double value = strtod(text + i, &end);
            size_t n = (size_t)(end - (text + i));
            int written = memchr(text + i, '.', n) || memchr(text + i, 'e', n) || memchr(text + i, 'E', n);
            if (written && isfinite(value) && !numtext_word_char(*end)) {
                o += (size_t)snprintf(out + o, NUMTEXT_SIZE, "%.17g", value);
                i += n;
                continue;
            }
            /* not a number of its own: copy it through to the end of its word */
            while (i < length && (numtext_word_char(text[i]) || text[i] == '-')) out[o++] = text[i++];
            continue;
        }
        out[o++] = text[i++];
    }
    out[o] = '\0';
    return out;
}
