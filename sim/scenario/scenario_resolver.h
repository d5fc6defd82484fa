/* scenario_resolver.h — inside scenario resolution (not for other modules): the
 * Resolver that the section resolvers share, the schema's reader, and the value helpers
 * it uses. A bad value is reported as "FILE:LINE: [section] key: why" (or
 * "--set SECTION.KEY=VALUE: why"). */
#ifndef SIM_SCENARIO_RESOLVER_H
#define SIM_SCENARIO_RESOLVER_H

#include "base/units.h"
#include "sim/scenario/method_ops.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_schema.h"

#include <stddef.h>
#include <stdint.h>

typedef struct Resolver {
    IniDoc *doc;
    Scenario *sc;
    HsDiag *diag;
} Resolver;

/* A value read as its schema row says, before it lands (scenario_read.c). */
typedef struct SchemaValue {
    double number;                 /* INT, REAL, STEPS, TIME, WORD_OR_REAL */
    int index;                     /* CHOICE; CHOICE_OR_FILE: -1 for a FILE */
    uint64_t seed;                 /* SEED */
    char text[INIDOC_VALUE_MAX];   /* TEXT, METHOD; the absolute path of a FILE */
    double list[SCHEMA_LIST_MAX];  /* INT_LIST, REAL_LIST: count elements */
    int count;
    Distribution dist;             /* DISTRIBUTION, AVAILABILITY */
    Slowdown slowdown;             /* SLOWDOWN */
} SchemaValue;

/* Reads every row of section id, in table order, from the file's section named
 * section: each key taken (marked used), parsed, checked against its range and its row's
 * check, and landed in sc (or in group, for SCHEMA_GROUP rows). An absent key gets its
 * default; in an [agents.NAME] group an absent inherited attribute keeps group's value. */
int schema_read_section(Resolver *r, unsigned id, const char *section, AgentGroupSpec *group);
/* Lands v where row k says: its hook, or the field at its offset in target (the
 * Scenario, the group, or the method's key struct). */
void schema_land(const SchemaKey *k, const SchemaValue *v, void *target);
/* Lands the default of every SCHEMA_RESET row of section id that does not apply (its
 * `needs` or `when`), so that runs.config, which leaves such keys out, reads back the same. */
void schema_reset_section(Resolver *r, unsigned id);
/* Whether row k applies to the resolved scenario (target: the group for SCHEMA_GROUP
 * rows), and whether runs.config writes it. */
int schema_applies(const SchemaKey *k, const Scenario *sc, const void *target);
int schema_written(const SchemaKey *k, const Scenario *sc, const void *target);

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

int scenario_parse_int(const char *text, long long min, long long max, long long *out);

/* value must be one of "a|b|c"; returns its index in *out. */
int scenario_match_choice(const char *value, const char *choices);

void scenario_trim_copy(char *dst, size_t size, const char *src);

/* A comma-separated list of whole numbers in [min, max]. An empty element (two commas in a
 * row, a leading or trailing comma, only blanks) is an error, never dropped: a `layers`
 * list that lost an element would silently describe a shallower model. */
int scenario_int_list(Resolver *r, IniEntry *e, const char *text, int min, int max, double *values,
                      int max_count, int *count);

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

/* Virtual time stays finite (scenario_times.c, issue 28 class 6): the `check` hook of a
 * group's compute, bandwidth, uplink, downlink, latency and slowdown rows. Every value
 * the key's distribution bounds (a constant, a choice, a uniform's end, a pareto's scale)
 * is checked at the key, a slowdown with the group's compute; draws without a bound are
 * checked as they are drawn (world_build). */
int scenario_span_row_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                            void *target);

/* The same for a trace of attribute (SCENARIO_TRACE_COMPUTE, _UPLINK, _DOWNLINK) of group
 * g: its lowest value among the needed nodes' rows, at e, the key that names it. */
struct Trace;
int scenario_check_trace_spans(Resolver *r, int g, int attribute, const struct Trace *trace, const char *needed,
                               const IniEntry *e);

/* The `check` hook of [data] path (scenario_inputs.c): a folder the file names is made
 * absolute (relative to the file's folder) and must exist as a folder whenever it is
 * given or the run trains; sets Scenario.data_where. */
int scenario_data_path_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                             void *target);

/* The `check` hook of [agents] profile (scenario_inputs.c): the file (relative to the
 * scenario's folder, landed absolute) read as the world will read it, with a row for each
 * agent and every value within the spans of [model]; sets Scenario.profile_latency. */
int scenario_profile_check(Resolver *r, const char *section, const SchemaKey *k, IniEntry *e, SchemaValue *v,
                           void *target);

/* The shape, classes and sizes of the files of [data] (cifar10, cifar100, leaf, npy) into
 * *info (free with dataset_info_free), or an input error at [data] path (scenario_inputs.c). */
struct DatasetInfo;
int scenario_probe_data(Resolver *r, struct DatasetInfo *info);

/* An error about a whole section (a combination of keys), at its header line. */
int scenario_section_bad(Resolver *r, const char *section, const char *message);

int scenario_resolve_method(Resolver *r);
/* Every row of the running method with a `limits` hook, its value against the range the
 * hook gives once [agents] and [model] are resolved (scenario_limits.c). */
int scenario_check_method_limits(Resolver *r);

/* [network]: the link-sharing model. Keys the chosen model does not use are accepted (so a
 * sweep can vary the model) and reset to their defaults, like [compression]'s. */
int scenario_resolve_network(Resolver *r);

/* [compression]: after [method] and [agents], since what is valid depends on both. Keys
 * the chosen scheme or method does not use are accepted (so a sweep can vary the scheme)
 * and reset to their defaults, so the resolved scenario and runs.config leave them out. */
int scenario_resolve_compression(Resolver *r);

int scenario_resolve_byzantine(Resolver *r);

/* Two features turned on that do not combine (features.h's pairs): an input error. */
int scenario_check_feature_pairs(Resolver *r);
/* [privacy]: clipping and noise, for the methods that take them (sim/scenario/features.h). */
int scenario_resolve_privacy(Resolver *r);
/* [drift]: after [privacy] (the methods and features it combines with). */
int scenario_resolve_drift(Resolver *r);

#endif
