/* optim.h — optimisers over a model's flat parameter vector. An Optim holds the state of
 * the whole vector in one allocation (none for SGD; the velocity for momentum; the first
 * and second moments for Adam/AdamW, plus their step counts as a short list of runs of
 * parameters with equal counts), and a step updates only [offset, offset + count), so
 * split training can step the slow side's and the fast side's ranges separately. One
 * thread at a time steps an Optim (Adam's list of runs is shared by every range).
 *
 * Update rules (g = gradient, p = parameter, wd = weight_decay, lr from the caller):
 *   sgd:      g += wd p;                    p -= lr g
 *   momentum: g += wd p; v = mu v + g;      p -= lr (nesterov ? g + mu v : v)    (v0 = 0)
 *   adam:     g += wd p; t += 1; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
 *             p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
 *   adamw:    p -= lr wd p (decoupled), then the adam rule without the L2 term.
 * These match PyTorch's SGD (dampening 0), Adam and AdamW. Adam counts t per parameter:
 * a parameter's bias correction uses the number of steps that parameter has had, so
 * stepping ranges separately, or only some of them, stays exact (stored as runs of equal
 * counts: one per tensor or side in practice, not 4 bytes per parameter). */
#ifndef MODELS_OPTIM_H
#define MODELS_OPTIM_H

#include "models/model_spec.h"

#include <stddef.h>

typedef struct Optim Optim;

/* State for n parameters, zeroed. HS_E_INPUT for a bad spec (negative lr, momentum or
 * betas outside [0, 1), eps <= 0 for Adam), HS_E_NOMEM. Free with optim_free. */
int optim_create(const OptimSpec *spec, size_t n, Optim **out);
void optim_free(Optim *o);
/* Zeroes the state (velocities, moments, step counts). */
void optim_reset(Optim *o);
size_t optim_size(const Optim *o);
/* The momentum optimiser's velocity v (n floats, read and written in place: what a method
 * does to it between steps, e.g. averaging it with other agents'); NULL for the others. */
float *optim_velocity(Optim *o);

/* One step of params[offset .. offset+count) with grads[offset .. offset+count) (both
 * are whole vectors of the optimiser's size). Ranges past the end are clipped. Returns
 * HS_OK, or HS_E_NOMEM when Adam's list of step-count runs cannot grow (nothing moved). */
int optim_step(Optim *o, float *params, const float *grads, size_t offset, size_t count, double lr);
/* Bytes the optimiser holds (its struct, state and step-count runs), for memory reports. */
size_t optim_state_size(const Optim *o);

/* Learning rate of 0-based round `round` out of total_rounds:
 *   warm-up (W = warmup_rounds > 0, round < W): lr (round + 1) / W, i.e. lr/W .. lr;
 *   then with r = round - W and T = total_rounds - W:
 *   constant: lr;   step: lr gamma^floor(r / step_every);
 *   cosine: lr (1 + cos(pi min(r, T) / T)) / 2 — lr at r = 0, never 0 inside the run
 *   (the last round gets lr (1 + cos(pi (T-1)/T)) / 2); total_rounds <= W (an open-ended
 *   run): constant lr. */
double optim_schedule_lr(const OptimSpec *spec, int round, int total_rounds);

#endif
