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
 * method's table (sim/methods/method.h), landing in the method's own key struct. */
#ifndef SIM_SCENARIO_SCHEMA_H
#define SIM_SCENARIO_SCHEMA_H

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
