/* optim.c — SGD, momentum (heavy ball or Nesterov), Adam and AdamW on flat vectors.
 * Element updates run in float with the per-step constants computed once in double, so a
 * step is one pass over the range; Adam recomputes its bias corrections only when the
 * step count changes along the range (in practice once per call). */
#include "models/optim.h"

#include "base/hs_error.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OPTIM_PI 3.14159265358979323846

struct Optim {
    OptimSpec spec;
    size_t n;
    void *memory;    /* the one state allocation below, NULL for SGD */
    float *velocity; /* (n) momentum */
    float *moment1;  /* (n) adam */
    float *moment2;  /* (n) adam */
    uint32_t *steps; /* (n) adam: steps taken by each parameter */
};

static size_t optim_state_bytes(OptimKind kind, size_t n)
{
    switch (kind) {
    case OPTIM_MOMENTUM: return n * sizeof(float);
    case OPTIM_ADAM:
    case OPTIM_ADAMW: return n * (2 * sizeof(float) + sizeof(uint32_t));
    default: return 0;
    }
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
            o->steps = (uint32_t *)(o->moment2 + n);
        }
    }
    *out = o;
    return HS_OK;
}

void optim_free(Optim *o)
{
    if (!o) return;
    free(o->memory);
    free(o);
}

void optim_reset(Optim *o)
{
    if (o->memory) memset(o->memory, 0, optim_state_bytes(o->spec.kind, o->n));
}

size_t optim_size(const Optim *o) { return o->n; }

static void optim_adam(Optim *o, float *restrict p, const float *restrict g, size_t begin, size_t end, double lr)
{
    const OptimSpec *s = &o->spec;
    const float b1 = (float)s->beta1, b2 = (float)s->beta2, eps = (float)s->eps;
    const float one_b1 = (float)(1.0 - s->beta1), one_b2 = (float)(1.0 - s->beta2);
    const float l2 = s->kind == OPTIM_ADAM ? (float)s->weight_decay : 0.0f;
    const float decay = s->kind == OPTIM_ADAMW ? (float)(1.0 - lr * s->weight_decay) : 1.0f;
    float *restrict m = o->moment1, *restrict v = o->moment2;
    uint32_t *restrict t = o->steps;
    uint32_t cached_t = 0;
    float step_size = 0.0f, inv_sqrt_bc2 = 0.0f;
    for (size_t i = begin; i < end; i++) {
        uint32_t ti = ++t[i];
        if (ti != cached_t) {
            cached_t = ti;
            step_size = (float)(lr / (1.0 - pow(s->beta1, ti)));
            inv_sqrt_bc2 = (float)(1.0 / sqrt(1.0 - pow(s->beta2, ti)));
        }
        float gi = g[i] + l2 * p[i];
        m[i] = b1 * m[i] + one_b1 * gi;
        v[i] = b2 * v[i] + one_b2 * gi * gi;
        p[i] = p[i] * decay - step_size * m[i] / (sqrtf(v[i]) * inv_sqrt_bc2 + eps);
    }
}

void optim_step(Optim *o, float *restrict params, const float *restrict grads, size_t offset, size_t count, double lr)
{
    if (offset >= o->n) return;
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
    case OPTIM_ADAMW: optim_adam(o, params, grads, offset, end, lr); break;
    }
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
