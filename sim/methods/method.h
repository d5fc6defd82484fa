/* method.h — the vtable every training method implements, and the registry.
 * A method reacts to the engine's events: round_begin schedules the round's first work,
 * on_event continues it, and the round ends when the method calls engine_end_round or
 * the queue drains. Methods only see the engine's primitives (sim/engine.h), never SQL. */
#ifndef SIM_METHOD_H
#define SIM_METHOD_H

#include "sim/queue.h"

struct Engine;

/* One [method] key a method accepts, with the default written into runs.config. */
typedef struct MethodKey {
    const char *name;
    const char *default_value;
    const char *help;
} MethodKey;

typedef struct MethodOps {
    const char *name;
    const char *summary;
    const MethodKey *keys;  /* terminated by {NULL} */
    /* Reads its [method] keys (errors name FILE:LINE via the engine's diag) and
     * allocates its state. */
    int (*create)(struct Engine *engine, void **state);
    int (*round_begin)(void *state, struct Engine *engine, int round);
    int (*on_event)(void *state, struct Engine *engine, const Event *event);
    /* Called once the round's last event ran (e.g. to evaluate or average). Optional. */
    int (*round_end)(void *state, struct Engine *engine, int round);
    void (*destroy)(void *state);
} MethodOps;

/* NULL when no method has that name. */
const MethodOps *method_lookup(const char *name);
/* Methods in registry order, terminated by NULL. */
const MethodOps *const *method_all(void);

#endif
