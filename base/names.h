/* names.h — "did you mean" for misspelled names (sections, keys, methods, instance keys):
 * a case-insensitive edit distance and the rule for what counts as a near miss. */
#ifndef BASE_NAMES_H
#define BASE_NAMES_H

#include <stddef.h>

/* Levenshtein distance, letters compared without case; 99 for names over 63 characters. */
int names_edit_distance(const char *a, const char *b);
/* How far a near miss of name may be: a third of its length plus one, at most 3. */
int names_near_limit(const char *name);
/* Writes " (did you mean 'x'?)" for the closest of known (NULL-terminated) within
 * names_near_limit, else "". */
void names_suggest(const char *name, const char *const *known, char *out, size_t size);

#endif
