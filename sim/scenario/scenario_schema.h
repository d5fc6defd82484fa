/* scenario_schema.h — the scenario schema: one row per key of every section, with its
 * type, range, default, unit, where it lands in the resolved Scenario, when it matters
 * and a line of help. Resolution (scenario.c), runs.config (scenario_config.c), the
 * unknown-key check with its "did you mean", `hetsim help keys` and the generated
 * reference docs/reference/scenario-keys.md all read the rows; no key is listed twice.
 *
 * Adding a key to a fixed section is one row in scenario_schema.c plus the field that
 * holds it. Keys whose value depends on another key (a default of another key's value, a
 * range from the agent count) name a hook in their row; checks that involve several keys
 * stay as code in the section resolvers. [method] keys are rows of the same type in each
 * method's table (sim/scenario/method_ops.h, sim/methods/), landing in the method's own key struct. */
#ifndef SIM_SCENARIO_SCHEMA_H
#define SIM_SCENARIO_SCHEMA_H

#include "sim/scenario/schema.h"

/* The sections (terminated by {NULL}) and the rows of the fixed sections (n_keys of
 * them, in runs.config order). [method] rows live in the methods' tables. */
const SchemaSection *schema_sections(void);
const SchemaKey *schema_keys(int *n_keys);

/* The section a file's section name belongs to ("agents.slow" -> agents.NAME), or NULL. */
const SchemaSection *schema_section(const char *name);
/* The row of key in section id, or NULL. */
const SchemaKey *schema_find(unsigned section_id, const char *key);
/* The names of the keys of section id, in table order, into names (room for size - 1
 * plus the NULL that ends them); returns how many. */
int schema_key_names(unsigned section_id, const char **names, int size);

#endif
