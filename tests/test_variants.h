/* test_variants.h — overrides that take other paths through the trainer than the default
 * runs: compression, Byzantine agents, split training, several tokens, pruning, freezing,
 * differential privacy, edge servers, deadlines, drift correction. check_threads runs each
 * with every thread count and mpi_rows with every rank count; one list, so a path added
 * for one is checked by both. */
#ifndef TESTS_TEST_VARIANTS_H
#define TESTS_TEST_VARIANTS_H

#include <stddef.h>

enum { TEST_VARIANT_SETS = 3 }; /* --set arguments in each variant */

extern const char *const test_variants[][TEST_VARIANT_SETS];
extern const size_t test_variants_n;

#endif
