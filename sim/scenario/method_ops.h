/* method_ops.h — a training method as the scenario sees it: its [method] keys
 * (schema rows, SchemaKey), what it does (METHOD_* capabilities), its cross-checks, and the vtable
 * the run drives (MethodOps, whose callbacks receive the Sim of sim/methods/method.h),
 * with the registry that finds one by name.
 * It sits on the scenario floor because resolution checks every method's keys and
 * capabilities before anything runs; the methods themselves (sim/methods/) are floors
 * above, and sim/methods/registry.c defines method_lookup and method_all. That is the
 * one call from a floor to one above it: by name, through the registry's table of
 * vtables (plain dispatch); no include goes up. */
#ifndef SIM_SCENARIO_METHOD_OPS_H
#define SIM_SCENARIO_METHOD_OPS_H

#include "base/hs_error.h"
#include "sim/kernel/queue.h"
#include "sim/scenario/stage_points.h"
#include "sim/scenario/schema.h"

#include <stddef.h>

struct Scenario;
struct Sim;

/* A method's [method] keys are rows of the scenario schema (schema.h) with the
 * types SCHEMA_INT, SCHEMA_REAL, SCHEMA_CHOICE, SCHEMA_STEPS, SCHEMA_TIME and
 * SCHEMA_WORD_OR_REAL; `fallback` is the default written into runs.config.
 * scenario_resolve checks every value of every method named in the file against its
 * key's type and range before anything runs, and lands the running method's values in
 * the struct the method declares (MethodOps.keys_size bytes, at each row's offset), so
 * that its validate() and create() read typed fields known to be good:
 *     typedef struct SyncKeys { double deadline; ... } SyncKeys;
 *     METHOD_KEY(SyncKeys, deadline, "none", "help", .type = SCHEMA_TIME, ...)
 * The key's name is its field's name, so a misspelt key is a field the compiler does not
 * know. The field's C type follows the row's type: int for INT, STEPS (epoch = 0) and
 * CHOICE (the place of the value in `choices`); double for REAL, TIME (none = inf) and
 * WORD_OR_REAL (the word = NaN). tests/check_scenario_keys.c checks that every row of
 * every method lands inside its struct, with the size of its type, over no other row.
 * METHOD_KEY_IN(Type, member, field, ...) is a key whose field is inside a struct that
 * several methods embed (sim/stages/prune.h's PruneKeys). */
#define METHOD_KEY_IN(Type, member, field, def, text, ...)                                                          \
    {.sections = SCHEMA_IN_METHOD, .name = #field, .fallback = (def), .help = (text),                                \
     .offset = offsetof(Type, member field), .size = sizeof(((Type *)0)->member field), __VA_ARGS__}
#define METHOD_KEY(Type, field, def, text, ...) METHOD_KEY_IN(Type, , field, def, text, __VA_ARGS__)

/* What a method does, so that scenario validation asks the method instead of listing
 * names: which sections and keys apply to it. */
enum {
    METHOD_USES_TOPOLOGY = 1 << 0,      /* reads the [topology] graph */
    METHOD_GOSSIPS_DIFFERENCES = 1 << 2, /* compresses x_i - xhat_i (CHOCO): its own error
                                         * feedback, and [compression] gamma applies */
    METHOD_SENDS_DIFFERENCES = 1 << 1,  /* compresses x_i minus the copy its receiver holds: its
                                         * own error feedback ([compression] feedback = none) */
    METHOD_WORKER_MOMENTUM = 1 << 3,    /* [compression] momentum = worker applies */
    METHOD_ACCUMULATES = 1 << 5,        /* [compression] feedback = ef and dgc apply */
    METHOD_USES_SERVER = 1 << 7,        /* needs [server]: a node after the agents that holds
                                         * a model and no data ([server] or [servers] count = 1) */
    METHOD_EDGE_SERVERS = 1 << 8,       /* with USES_SERVER: [servers] count edge servers, and
                                         * [topology] is a graph over the servers */
    METHOD_SPLITS_MODEL = 1 << 9,       /* trains the model split between agents: [model] needs
                                         * a split point (two blocks or more) */
    METHOD_LOSSY_LINKS = 1 << 10,       /* sends only point-to-point messages: [agents] loss
                                         * applies (sim/kernel/loss.c) */
    METHOD_DROPS_LOST = 1 << 11,        /* with LOSSY_LINKS: a lost message may stay lost
                                         * ([network] loss_mode = drop), the method uses what arrived */
    METHOD_MIXES_WEIGHTS = 1 << 12,     /* mixes with the topology's weights W_ij: [topology]
                                         * weights = FILE and graph = learned apply */
    METHOD_SENDS_ROWS = 1 << 13,        /* sends rows of its layers (ROG): [model] arch = mlp or
                                         * cnn, whose blocks are weight (OUT, X) + bias rows */
    METHOD_BUILDS_TOPOLOGY = 1 << 14,   /* builds its own graph (MOTOR: from the link rates): a
                                         * [topology] it would ignore is refused where it is
                                         * written when the method is the file's own (not
                                         * set over it by --set or [sweep]); said in its
                                         * summary: it is no section the method accepts */
    METHOD_LOSSY_RINGS = 1 << 15,       /* averages by ring all-reduce: under [agents] loss its
                                         * rings' chunks are messages lost and sent again
                                         * (retransmit only; sim/kernel/loss.c) */
};

/* What rounds.extra holds in a run of a method: its one figure per round (the run writes
 * NULL where it has none). A method states it once, in this table beside its vtable;
 * `hetsim methods`, docs/reference/methods.md, `hetsim show` and `hetsim report --run`
 * read it from here (method_extra_meaning). Where the figure depends on a [method] key
 * (sync's deadline, sdfeel's deadline, the local-step stage's figure under prune or
 * freeze: sim/stages/local_step.h owns those meanings), a run's meaning is that of the
 * first entry whose key holds: written with `value`, or, with `unless`, with any other
 * value than `value`; an entry without a key holds in every run. tests/check_scenario_keys.c
 * checks that every key is one of the method's, that `value` is not the key's default
 * (`unless`: is its default), so that a run which does not write the key is at its default
 * and matches no entry, and tests/check_train.c that a run whose extra is not NULL has a
 * meaning. */
typedef struct MethodExtra {
    const char *key;     /* a [method] key of the method; NULL: the entry holds always */
    const char *value;   /* as runs.config writes it: "width", "none" */
    int unless;          /* 1: the entry holds when key is anything but value */
    const char *meaning; /* a few words, for the report's column title: "H, local steps between averagings" */
} MethodExtra;

typedef struct MethodOps {
    const char *name;
    const char *summary;
    const SchemaKey *keys;  /* terminated by {0} */
    size_t keys_size;       /* sizeof the struct the keys land in (at most SCENARIO_METHOD_KEYS_MAX) */
    int capabilities;       /* METHOD_* flags */
    const MethodStages *stages; /* its stage points and why it refuses a feature (features.h) */
    const MethodExtra *extra;   /* what rounds.extra holds, terminated by {0}; NULL: never written */
    /* Optional: checks that involve several sections (e.g. a key that no other option
     * combines with), called by scenario_resolve for the method that runs, its keys
     * landed. Errors are HS_E_INPUT in diag naming FILE:LINE or the --set argument
     * (scenario_key_error). */
    int (*validate)(const struct Scenario *sc, HsDiag *diag);
    /* Reads its [method] keys (scenario_method_keys(sim->sc)) and allocates its state. */
    int (*create)(struct Sim *sim, void **state);
    int (*round_begin)(void *state, struct Sim *sim, int round);
    int (*on_event)(void *state, struct Sim *sim, const Event *event);
    /* Called once the round's last event ran (e.g. to evaluate or average). Optional. */
    int (*round_end)(void *state, struct Sim *sim, int round);
    void (*destroy)(void *state);
} MethodOps;

/* What a capability lets a method accept, for `hetsim methods` and the docs. */
typedef struct MethodCapability {
    int flag;             /* METHOD_* */
    const char *accepts;  /* what the scenario may then hold, in a few words */
} MethodCapability;

/* The capabilities in the order the docs list them, terminated by {0} (registry.c). */
const MethodCapability *method_capabilities(void);

/* How a run wrote [method] key `key` (as runs.config writes it), NULL when it did not. */
typedef const char *(*MethodParamText)(void *ctx, const char *key);
/* What rounds.extra means in a run of m whose keys param reads (MethodExtra; param NULL:
 * a run whose keys are not known, which matches only an entry without a key); NULL when
 * the method writes nothing there in such a run. */
const char *method_extra_meaning(const MethodOps *m, MethodParamText param, void *ctx);
/* The same for a resolved scenario: its method, its keys as written (Scenario.params). */
const char *method_extra_of_scenario(const struct Scenario *sc);

/* NULL when no method has that name. */
const MethodOps *method_lookup(const char *name);
/* Methods in registry order, terminated by NULL. */
const MethodOps *const *method_all(void);

#endif
