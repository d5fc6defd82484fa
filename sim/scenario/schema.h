/* schema.h — the row type of the scenario schema: a key's section(s), type, range,
 * default, unit, where it lands, when it matters, its hooks and its help (SchemaKey), and
 * a section (SchemaSection). Types only, and nothing of the project above base/: the
 * fixed sections' rows are in scenario_schema.c (looked up through scenario_schema.h),
 * each method's rows in its own file (sim/scenario/method_ops.h, sim/methods/). */
#ifndef SIM_SCENARIO_SCHEMA_TYPES_H
#define SIM_SCENARIO_SCHEMA_TYPES_H

#include "base/units.h"

#include <stddef.h>
#include <stdio.h>

struct Scenario;
struct Resolver;
struct IniEntry;
struct SchemaValue;

/* How a value is read and where it lands (the C type at the row's offset). */
typedef enum {
    SCHEMA_INT,            /* int: a whole number in [min, max] */
    SCHEMA_REAL,           /* double: a number (with the row's unit) in [min, max] */
    SCHEMA_CHOICE,         /* int: the place of the value in `choices` ("a|b|c") */
    SCHEMA_SEED,           /* uint64_t: a whole number in [0, 2^63) */
    SCHEMA_TEXT,           /* char[size]: non-empty text without ';' or '#' */
    SCHEMA_METHOD,         /* char[size]: the name of a registered method */
    SCHEMA_INT_LIST,       /* lands through its row's hook: whole numbers in [min, max] */
    SCHEMA_REAL_LIST,      /* lands through its row's hook: numbers in [min, max] */
    SCHEMA_CHOICE_OR_FILE, /* one of `choices` or a FILE ending in `suffix` (absolute once read) */
    SCHEMA_DISTRIBUTION,   /* Distribution: a constant or a distribution of the unit */
    SCHEMA_SLOWDOWN,       /* Slowdown: none, markov(...) or periodic(...) */
    SCHEMA_AVAILABILITY,   /* Distribution: always (constant 1) or trace(FILE.csv) */
    /* the types of [method] keys (their messages say "expected ..., found '...'") */
    SCHEMA_STEPS,          /* int: `epoch` (read as 0) or a whole number in [min, max] */
    SCHEMA_TIME,           /* double: `none` (inf), the word in `choices` if any (NaN) or a time */
    SCHEMA_WORD_OR_REAL,   /* double: the word in `choices` (NaN) or a number in [min, max] */
} SchemaType;

/* The sections a row belongs to (a mask, SchemaKey.sections). The agent attributes are
 * rows of [agents], every [agents.NAME], [server] and [servers] at once. */
enum {
    SCHEMA_IN_RUN = 1 << 0,
    SCHEMA_IN_DATA = 1 << 1,
    SCHEMA_IN_MODEL = 1 << 2,
    SCHEMA_IN_METHOD = 1 << 3,
    SCHEMA_IN_TOPOLOGY = 1 << 4,
    SCHEMA_IN_AGENTS = 1 << 5,
    SCHEMA_IN_GROUP = 1 << 6,    /* [agents.NAME] */
    SCHEMA_IN_SERVER = 1 << 7,
    SCHEMA_IN_SERVERS = 1 << 8,
    SCHEMA_IN_NETWORK = 1 << 9,
    SCHEMA_IN_COMPRESSION = 1 << 10,
    SCHEMA_IN_BYZANTINE = 1 << 11,
    SCHEMA_IN_PRIVACY = 1 << 12,
    SCHEMA_IN_SWEEP = 1 << 13,
    SCHEMA_IN_DRIFT = 1 << 14,
};

/* SchemaKey.flags */
enum {
    SCHEMA_OPEN_MIN = 1 << 0,   /* min itself is refused (with the row's `edge` message) */
    SCHEMA_OPEN_MAX = 1 << 1,   /* max itself is refused */
    SCHEMA_REQUIRED = 1 << 2,   /* no default: absent is an error (unless inherited) */
    SCHEMA_GROUP = 1 << 3,      /* lands in the AgentGroupSpec being read, not the Scenario */
    SCHEMA_INHERITED = 1 << 8,  /* an agent attribute: an [agents.NAME] without it keeps
                                 * [agents]'s value (and does not require it) */
    SCHEMA_NO_TRACE = 1 << 4,   /* a distribution that may not be trace(FILE.csv) */
    SCHEMA_WHOLE = 1 << 5,      /* a distribution whose written values are whole numbers <= max */
    SCHEMA_WRITE_UNIT = 1 << 6, /* runs.config writes the number with its SI unit ("inf" alone) */
    SCHEMA_RESET = 1 << 7,      /* reset to its default when `when` is false (resolution), so
                                 * that runs.config, which leaves it out, reads back the same */
    SCHEMA_WITHIN_ROUND = 1 << 10, /* [method] rows: local steps that a round must hold (at most
                                    * world_round_steps, checked when the agents are drawn): a
                                    * period never crosses a round's end, so a longer one would
                                    * run cut to the round (issue 28 class 1) */
    SCHEMA_OMIT_DEFAULT = 1 << 9, /* [method] rows: runs.config leaves it out while it holds its
                                   * default, so that the configs (and sweep ids) of runs from
                                   * before the key existed stay what they were */
};

/* Most elements of a list key (its count_max may not exceed it). */
#define SCHEMA_LIST_MAX 64

/* A predicate on the resolved scenario (and, for agent attributes, the group). */
typedef int (*SchemaWhen)(const struct Scenario *sc, const void *target);

typedef struct SchemaKey {
    const char *name;
    unsigned sections;     /* SCHEMA_IN_* */
    SchemaType type;
    UnitKind unit;
    double min, max;       /* the range; lists: of each element */
    unsigned flags;        /* SCHEMA_* above */
    const char *choices;   /* CHOICE and CHOICE_OR_FILE: "a|b|c"; the word of TIME, WORD_OR_REAL */
    const char *suffix;    /* CHOICE_OR_FILE: what a FILE's name ends with (".edges") */
    const char *fallback;  /* the default as written; NULL when required or computed */
    const char *edge;      /* why a value at an open end of the range is refused */
    const char *empty;     /* TEXT: "is empty (leave the key out for <empty>)" */
    int count_min, count_max; /* lists: how many elements */
    const char *few;       /* lists: why fewer than count_min elements is refused */
    size_t offset, size;   /* where the value lands: in the Scenario, in the group
                            * (SCHEMA_GROUP) or in the method's key struct ([method]) */
    unsigned needs;        /* METHOD_* capabilities: the key applies only to methods with
                            * one of them (written back only then; reset otherwise) */
    SchemaWhen when;       /* NULL or: the key matters (written back, not reset) only when true */
    SchemaWhen written;    /* NULL or: written back only when true (instead of `when`) */
    /* Hooks for what a row cannot say alone (all optional). */
    void (*fallback_of)(const struct Scenario *sc, struct SchemaValue *value); /* computed default */
    void (*limits)(const struct Scenario *sc, double *min, double *max);     /* range from other keys */
    int (*check)(struct Resolver *r, const char *section, const struct SchemaKey *k, struct IniEntry *e,
                 struct SchemaValue *value, void *target); /* before it lands; e, value may be NULL */
    void (*land)(const struct SchemaKey *k, const struct SchemaValue *value, void *target);
    void (*write)(const struct Scenario *sc, const void *target, FILE *out);   /* the value as text */
    const char *help;
    const char *doc_default; /* the default as the docs say it, when `fallback` is not enough */
    const char *doc_range;   /* the range as the docs say it, when it is not [min, max] */
} SchemaKey;

/* A section of the scenario file, in the order the docs and "did you mean" list them. */
typedef struct SchemaSection {
    const char *name;      /* "agents.NAME" stands for every group */
    unsigned id;           /* SCHEMA_IN_* */
    unsigned needs;        /* METHOD_* capabilities it applies to (0: every method) */
    const char *help;
} SchemaSection;

#endif
