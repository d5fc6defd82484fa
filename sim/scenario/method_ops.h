/* method_ops.h — a training method as the scenario sees it: its [method] keys
 * (MethodKey), what it does (METHOD_* capabilities), its cross-checks, and the vtable
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

struct Scenario;
struct Sim;

/* How a [method] key's value is read. scenario_resolve checks every value of every
 * method named in the file against its key's type and range before anything runs, so a
 * method's create() reads values that are known to be good. */
typedef enum {
    METHOD_KEY_INT,     /* a whole number in [min, max] */
    METHOD_KEY_REAL,    /* a finite number in [min, max]; an end in `open` is excluded */
    METHOD_KEY_CHOICE,  /* one of `choices` ("a|b|c"); read as its index */
    METHOD_KEY_STEPS,   /* `epoch` (read as 0) or a whole number in [min, max] */
    METHOD_KEY_TIME,    /* `none` (read as inf), the word in `choices` if any (read as
                         * NaN), or a time (`500 ms`) in [min, max] */
    METHOD_KEY_WORD_OR_REAL, /* the word in `choices` (read as NaN) or a number in [min, max] */
} MethodKeyType;

enum { METHOD_KEY_OPEN_MIN = 1, METHOD_KEY_OPEN_MAX = 2 };

/* One [method] key a method accepts, with the default written into runs.config. */
typedef struct MethodKey {
    const char *name;
    const char *default_value;
    const char *help;
    MethodKeyType type;
    double min, max;
    int open;             /* METHOD_KEY_OPEN_* */
    const char *choices;  /* METHOD_KEY_CHOICE; the word of WORD_OR_REAL and (optional) TIME */
} MethodKey;

/* What a method does, so that scenario validation asks the method instead of listing
 * names: which sections and keys apply to it. */
enum {
    METHOD_USES_TOPOLOGY = 1 << 0,      /* reads the [topology] graph */
    METHOD_COMPRESSES = 1 << 1,         /* [compression] applies */
    METHOD_GOSSIPS_DIFFERENCES = 1 << 2, /* compresses x_i - xhat_i (CHOCO): its own error
                                         * feedback, and [compression] gamma applies */
    METHOD_WORKER_MOMENTUM = 1 << 3,    /* [compression] momentum = worker applies */
    METHOD_ROBUST = 1 << 4,             /* [byzantine] attackers and aggregators apply */
    METHOD_ACCUMULATES = 1 << 5,        /* [compression] feedback = ef and dgc apply */
    METHOD_USES_SERVER = 1 << 7,        /* needs [server]: a node after the agents that holds
                                         * a model and no data ([server] or [servers] count = 1) */
    METHOD_EDGE_SERVERS = 1 << 8,       /* with USES_SERVER: [servers] count edge servers, and
                                         * [topology] is a graph over the servers */
    METHOD_PRIVATE = 1 << 6,            /* [privacy] clipping and noise apply (sim/stages/privacy.h) */
};

typedef struct MethodOps {
    const char *name;
    const char *summary;
    const MethodKey *keys;  /* terminated by {NULL} */
    int capabilities;       /* METHOD_* flags */
    /* Optional: checks that involve several sections (e.g. a key that no other option
     * combines with), called by scenario_resolve for the method that runs. Errors are
     * HS_E_INPUT in diag naming FILE:LINE or the --set argument. */
    int (*validate)(const struct Scenario *sc, HsDiag *diag);
    /* Reads its [method] keys (already validated) and allocates its state. */
    int (*create)(struct Sim *sim, void **state);
    int (*round_begin)(void *state, struct Sim *sim, int round);
    int (*on_event)(void *state, struct Sim *sim, const Event *event);
    /* Called once the round's last event ran (e.g. to evaluate or average). Optional. */
    int (*round_end)(void *state, struct Sim *sim, int round);
    void (*destroy)(void *state);
} MethodOps;

/* NULL when no method has that name. */
const MethodOps *method_lookup(const char *name);
/* Methods in registry order, terminated by NULL. */
const MethodOps *const *method_all(void);

#endif
