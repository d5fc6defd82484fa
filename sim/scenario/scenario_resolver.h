/* scenario_resolver.h — inside scenario resolution (not for other modules): the
 * Resolver that the section resolvers share, and the value readers every section uses.
 * Each reader takes its entry (marking it used), converts it, checks its range and on
 * failure writes "FILE:LINE: [section] key: why" (or "--set SECTION.KEY=VALUE: why"). */
#ifndef SIM_SCENARIO_RESOLVER_H
#define SIM_SCENARIO_RESOLVER_H

#include "base/units.h"
#include "sim/scenario/method_ops.h"
#include "sim/scenario/scenario.h"

#include <stddef.h>

typedef struct Resolver {
    IniDoc *doc;
    Scenario *sc;
    HsDiag *diag;
} Resolver;

int scenario_is_group(const char *section);

/* [method.NAME]: knobs of method NAME, used only when NAME runs (so one file can sweep
 * over methods with their own knobs). */
const MethodOps *scenario_method_section(const char *section);

/* Where a section that has no line of its own came from: the first override that made it. */
const char *scenario_section_where(const IniDoc *doc, const char *section, char *where, size_t size);

/* A group that only an override names (--set agents.slw.count=4, a [sweep] key): an
 * override changes what the file defines, so this is an error with a "did you mean"
 * among the file's groups; --add-group NAME (inidoc_add_section) makes one on purpose. */
int scenario_invented_group(Resolver *r, const char *section);

IniEntry *scenario_take(Resolver *r, const char *section, const char *key);

/* "FILE:LINE: [section] key: detail", or "--set section.key=value: detail" for an
 * override, which names the section and key itself. */
int scenario_entry_bad(HsDiag *diag, const IniEntry *e, const char *detail);

int scenario_bad(Resolver *r, const IniEntry *e, const char *fmt, const char *detail);

int scenario_missing(Resolver *r, const char *section, const char *key);

int scenario_double(Resolver *r, const char *section, const char *key, double fallback,
                    UnitKind unit, double min, double max, double *out);

int scenario_parse_int(const char *text, long long min, long long max, long long *out);

int scenario_int(Resolver *r, const char *section, const char *key, int fallback, int min,
                 int max, int *out);

/* value must be one of "a|b|c"; returns its index in *out. */
int scenario_match_choice(const char *value, const char *choices);

void scenario_trim_copy(char *dst, size_t size, const char *src);

int scenario_choice(Resolver *r, const char *section, const char *key, const char *fallback,
                    const char *choices, int *out);

/* A comma-separated list of positive whole numbers. An empty element (two commas in a
 * row, a leading or trailing comma, only blanks) is an error, never dropped: a `layers`
 * list that lost an element would silently describe a shallower model. */
int scenario_int_list(Resolver *r, IniEntry *e, int *values, int max_count, int *count);

/* A comma-separated list of numbers in [min, max] (no unit), at most max_count; empty
 * elements are errors, as for scenario_int_list. */
int scenario_real_list(Resolver *r, IniEntry *e, const char *text, double min, double max, double *values,
                       int max_count, int *count);

/* Text that runs.config must give back as it was: no ';' or '#' (they would start a
 * comment when the config is read again) and no tab (every other control character is
 * refused by the document already, sim/inidoc.h). */
int scenario_plain_text(Resolver *r, const IniEntry *e, const char *text);

/* A file a scenario names (a trace, an edges list) is relative to the scenario file's
 * folder (an override's, to the current folder); it is stored absolute so that
 * runs.config still finds it from any working directory. */
int scenario_input_path(Resolver *r, const IniEntry *e, char *path, size_t size);

/* A file a key names was refused (inner: "FILE:LINE: what"): the error at the key,
 * "SCENARIO:LINE: [section] key: FILE:LINE: what" (issue 28, class 8); an error that is
 * not bad input (out of memory) is passed on as it is. */
int scenario_input_bad(Resolver *r, const IniEntry *e, const HsDiag *inner);

/* Every attribute trace, loaded as the engine will load it (scenario_inputs.c). */
int scenario_check_traces(Resolver *r);

/* The entry that gives group g (sc->n_groups: the server's) its key: the group's own, else
 * the one it inherits from [agents] ("bandwidth" for uplink and downlink); NULL when none. */
IniEntry *scenario_group_entry(Resolver *r, int g, const char *key);

/* Virtual time stays finite (scenario_times.c, issue 28 class 6): every value a group's
 * compute, uplink, downlink, latency and slowdown can take that has a bound (a constant,
 * a choice, a uniform's end, a pareto's scale) is checked at its key; draws without one
 * are checked as they are drawn (world_build). */
int scenario_check_spans(Resolver *r);

/* The same for a trace of attribute (SCENARIO_TRACE_COMPUTE, _UPLINK, _DOWNLINK) of group
 * g: its lowest value among the needed nodes' rows, at e, the key that names it. */
struct Trace;
int scenario_check_trace_spans(Resolver *r, int g, int attribute, const struct Trace *trace, const char *needed,
                               const IniEntry *e);

/* [data]: the dataset's files exist and are regular files (stat only), whenever [data]
 * path is given or the run trains; sets Scenario.data_where. */
int scenario_check_dataset(Resolver *r);

/* An error about a whole section (a combination of keys), at its header line. */
int scenario_section_bad(Resolver *r, const char *section, const char *message);

int scenario_resolve_method(Resolver *r);

/* [network]: the link-sharing model. Keys the chosen model does not use are accepted (so a
 * sweep can vary the model) and reset to their defaults, like [compression]'s. */
int scenario_resolve_network(Resolver *r);

/* [compression]: after [method] and [agents], since what is valid depends on both. Keys
 * the chosen scheme or method does not use are accepted (so a sweep can vary the scheme)
 * and reset to their defaults, so the resolved scenario and runs.config leave them out. */
int scenario_resolve_compression(Resolver *r);

int scenario_resolve_byzantine(Resolver *r);

/* [privacy]: clipping and noise for the methods with METHOD_PRIVATE (sim/stages/privacy.h). */
int scenario_resolve_privacy(Resolver *r);

#endif
