/* optim.c — SGD, momentum (heavy ball or Nesterov), Adam and AdamW on flat vectors.
 * Element updates run in float with the per-step constants computed once in double, so a
 * step is one pass over the range.
 *
 * Adam's step counts are run-length encoded: a sorted list of runs [start, end) of
 * parameters that have taken the same number of steps. A step splits the runs at its
 * range's two ends, adds one to the runs inside, computes each run's bias corrections
 * once and merges neighbours that became equal again. The runs' boundaries are the ends
 * of the ranges the callers step (blocks, heads, the split sides: a handful, at most a
 * few hundred), so the counts cost bytes instead of 4 bytes per parameter, and every
 * parameter's update is the same arithmetic as with a counter of its own. */
#include "models/optim.h"

#include "base/hs_error.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OPTIM_PI 3.14159265358979323846

/* Parameters [previous run's end (0 for the first), end) have taken `steps` steps. */
typedef struct OptimRun {
    size_t end;
    uint32_t steps;
} OptimRun;

struct Optim {
    OptimSpec spec;
    size_t n;
    void *memory;    /* the one state allocation below, NULL for SGD */
    float *velocity; /* (n) momentum */
    float *moment1;  /* (n) adam */
    float *moment2;  /* (n) adam */
    OptimRun *runs;  /* (n_runs) adam: step counts, runs in order, the last ends at n */
    int n_runs, runs_capacity;
};

static size_t optim_state_bytes(OptimKind kind, size_t n)
{
    switch (kind) {
    case OPTIM_MOMENTUM: return n * sizeof(float);
    case OPTIM_ADAM:
    case OPTIM_ADAMW: return n * 2 * sizeof(float);
    default: return 0;
    }
}

/* Every parameter at 0 steps: one run (none when n = 0). */
static void optim_runs_reset(Optim *o)
{
    o->n_runs = o->n > 0;
    if (o->n_runs) o->runs[0] = (OptimRun){.end = o->n, .steps = 0};
}

int optim_create(const OptimSpec *spec, size_t n, Optim **out)
{
    *out = NULL;
    if (spec->kind < OPTIM_SGD || spec->kind > OPTIM_ADAMW || !(spec->lr >= 0.0) || !(spec->weight_decay >= 0.0))
        return HS_E_INPUT;
    if (spec->kind == OPTIM_MOMENTUM && !(spec->momentum >= 0.0 && spec->momentum < 1.0)) return HS_E_INPUT;
    if ((spec->kind == OPTIM_ADAM || spec->kind == OPTIM_ADAMW) &&
        !(spec->beta1 >= 0.0 && spec->beta1 < 1.0 && spec->beta2 >= 0.0 && spec->beta2 < 1.0 && spec->eps > 0.0))
        return HS_E_INPUT;
    Optim *o = calloc(1, sizeof *o);
    if (!o) return HS_E_NOMEM;
    o->spec = *spec;
    o->n = n;
    size_t bytes = optim_state_bytes(spec->kind, n);
    if (bytes) {
        o->memory = calloc(1, bytes);
        if (!o->memory) {
            free(o);
            return HS_E_NOMEM;
        }
        if (spec->kind == OPTIM_MOMENTUM) {
            o->velocity = o->memory;
        } else {
            o->moment1 = o->memory;
            o->moment2 = o->moment1 + n;
        }
    }
    if (spec->kind == OPTIM_ADAM || spec->kind == OPTIM_ADAMW) {
        o->runs_capacity = 8;
        o->runs = malloc(sizeof *o->runs * (size_t)o->runs_capacity);
        if (!o->runs) {
            optim_free(o);
            return HS_E_NOMEM;
        }
        optim_runs_reset(o);
    }
    *out = o;
    return HS_OK;
}

void optim_free(Optim *o)
{
    if (!o) return;
    free(o->memory);
    free(o->runs);
    free(o);
}

void optim_reset(Optim *o)
{
    if (o->memory) memset(o->memory, 0, optim_state_bytes(o->spec.kind, o->n));
    if (o->runs) optim_runs_reset(o);
}

size_t optim_state_size(const Optim *o)
{
    return sizeof *o + optim_state_bytes(o->spec.kind, o->n) + sizeof *o->runs * (size_t)o->runs_capacity;
}

/* Makes `at` (0 < at < n) the end of a run: the run containing it is cut in two. */
static int optim_runs_cut(Optim *o, size_t at)
{
    int k = 0;
    while (o->runs[k].end < at) k++;
    if (o->runs[k].end == at) return HS_OK;
    if (o->n_runs == o->runs_capacity) {
        int capacity = 2 * o->runs_capacity;
        OptimRun *runs = realloc(o->runs, sizeof *runs * (size_t)capacity);
        if (!runs) return HS_E_NOMEM;
        o->runs = runs;
        o->runs_capacity = capacity;
    }
    memmove(o->runs + k + 1, o->runs + k, sizeof *o->runs * (size_t)(o->n_runs - k));
    o->runs[k].end = at;
    o->n_runs++;
    return HS_OK;
}

/* Joins neighbouring runs with equal counts. */
static void optim_runs_merge(Optim *o)
{
    int kept = 0;
    for (int k = 0; k < o->n_runs; k++) {
        if (kept > 0 && o->runs[kept - 1].steps == o->runs[k].steps)
            o->runs[kept - 1].end = o->runs[k].end;
        else
            o->runs[kept++] = o->runs[k];
    }
    o->n_runs = kept;
}

size_t optim_size(const Optim *o) { return o->n; }

float *optim_velocity(Optim *o) { return o->velocity; }

/* The Adam update of [begin, end), whose parameters have all taken t steps (this one
 * included). */
static void optim_adam_run(const Optim *o, float *restrict p, const float *restrict g, size_t begin, size_t end,
                           uint32_t t, double lr)
{
    const OptimSpec *s = &o->spec;
    const float b1 = (float)s->beta1, b2 = (float)s->beta2, eps = (float)s->eps;
    const float one_b1 = (float)(1.0 - s->beta1), one_b2 = (float)(1.0 - s->beta2);
    const float l2 = s->kind == OPTIM_ADAM ? (float)s->weight_decay : 0.0f;
    const float decay = s->kind == OPTIM_ADAMW ? (float)(1.0 - lr * s->weight_decay) : 1.0f;
    const float step_size = (float)(lr / (1.0 - pow(s->beta1, t)));
    const float inv_sqrt_bc2 = (float)(1.0 / sqrt(1.0 - pow(s->beta2, t)));
    float *restrict m = o->moment1, *restrict v = o->moment2;
    for (size_t i = begin; i < end; i++) {
        float gi = g[i] + l2 * p[i];
        m[i] = b1 * m[i] + one_b1 * gi;
        v[i] = b2 * v[i] + one_b2 * gi * gi;
        p[i] = p[i] * decay - step_size * m[i] / (sqrtf(v[i]) * inv_sqrt_bc2 + eps);
    }
}

static int optim_adam(Optim *o, float *p, const float *g, size_t begin, size_t end, double lr)
{
    if (begin > 0 && optim_runs_cut(o, begin) != HS_OK) return HS_E_NOMEM;
    if (end < o->n && optim_runs_cut(o, end) != HS_OK) {
        optim_runs_merge(o);
        return HS_E_NOMEM;
    }
    size_t start = 0;
    for (int k = 0; k < o->n_runs && start < end; k++) {
        OptimRun *run = &o->runs[k];
        if (start >= begin) optim_adam_run(o, p, g, start, run->end, ++run->steps, lr);
        start = run->end;
    }
    optim_runs_merge(o);
    return HS_OK;
}

int optim_step(Optim *o, float *restrict params, const float *restrict grads, size_t offset, size_t count, double lr)
{
    if (offset >= o->n || count == 0) return HS_OK;
    size_t end = count > o->n - offset ? o->n : offset + count;
    const OptimSpec *s = &o->spec;
    const float rate = (float)lr, wd = (float)s->weight_decay;
    switch (s->kind) {
    case OPTIM_SGD:
        if (wd != 0.0f)
            for (size_t i = offset; i < end; i++) params[i] -= rate * (grads[i] + wd * params[i]);
        else
            for (size_t i = offset; i < end; i++) params[i] -= rate * grads[i];
        break;
    case OPTIM_MOMENTUM: {
        const float mu = (float)s->momentum;
        float *restrict v = o->velocity;
        if (s->nesterov) {
            for (size_t i = offset; i < end; i++) {
                float gi = grads[i] + wd * params[i];
                v[i] = mu * v[i] + gi;
                params[i] -= rate * (gi + mu * v[i]);
            }
        } else {
            for (size_t i = offset; i < end; i++) {
                v[i] = mu * v[i] + grads[i] + wd * params[i];
                params[i] -= rate * v[i];
            }
        }
        break;
    }
    case OPTIM_ADAM:
    case OPTIM_ADAMW: return optim_adam(o, params, grads, offset, end, lr);
    }
    return HS_OK;
}

double optim_schedule_lr(const OptimSpec *s, int round, int total_rounds)
{
    const int warm = s->warmup_rounds > 0 ? s->warmup_rounds : 0;
    if (round < 0) round = 0;
    if (round < warm) return s->lr * (round + 1) / warm;
    const int r = round - warm, T = total_rounds - warm;
    switch (s->schedule) {
    case SCHED_STEP: {
        int every = s->step_every > 0 ? s->step_every : 1;
        return s->lr * pow(s->step_gamma, r / every);
    }
    case SCHED_COSINE:
        if (T <= 0) return s->lr;
        return s->lr * 0.5 * (1.0 + cos(OPTIM_PI * (r < T ? r : T) / T));
    default: return s->lr;
    }
}
