/* drift.h — client drift correction, a local-step stage ([drift], sim/scenario/scenario.h)
 * with its share of the outgoing vector and the aggregation.
 *
 * fedprox — Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, "Federated Optimization in
 * Heterogeneous Networks", MLSys 2020 (Algorithm 2): a client's local objective is
 * F_k(w) + mu/2 ||w - w^t||^2, w^t the model its period started from (the server's model,
 * fedbuff's y_0, localsgd's last average), so every local step's gradient gains
 * mu (w - w^t). The messages are the method's own.
 *
 * scaffold — Karimireddy, Kale, Mohri, Reddi, Stich, Suresh, "SCAFFOLD: Stochastic
 * Controlled Averaging for Federated Learning", ICML 2020 (Algorithm 1, option II): the
 * server keeps c, every client c_i (both 0 at the start); a local step is
 * y <- y - lr (g_i(y) - c_i + c); after its K steps the client sets
 * c_i+ = c_i - c + (x - y) / (K lr) and sends (y - x, c_i+ - c_i); the server takes
 * c <- c + (1/N) sum over its reports of (c_i+ - c_i). Each message carries the model and
 * a control variate: twice the bytes, both ways (drift_message_factor), and the server's
 * processing of an upload is two axpys instead of one.
 *
 * Where hetsim deviates, and why:
 *  - the corrected gradient goes to the [model] optimiser (momentum, weight decay, adam)
 *    as the method's plain gradient would; the papers use plain SGD. K lr is the sum of the
 *    learning rates of the period's steps (K lr with a constant rate).
 *  - the model's average stays the method's (fedavg's and localsgd's sample-weighted mean,
 *    SCAFFOLD's global step size eta_g = 1); only c's update is SCAFFOLD's uniform (1/N).
 *  - a client's c_i+ counts only once its report is aggregated (drift_commit): a report
 *    fedavg drops (over-commitment, deadline) changes neither c_i nor c, which keeps the
 *    paper's invariant c = mean of the c_i.
 *  - localsgd has no server: every agent holds c, and the all-reduce that averages the
 *    models carries the control variates' changes too (twice the bytes).
 *  - a label-flipping attacker ([byzantine]) takes its own steps, uncorrected.
 * Timing mode: only the bytes; train = timing, since nothing decided depends on values. */
#ifndef SIM_STAGES_DRIFT_H
#define SIM_STAGES_DRIFT_H

#include "sim/stages/privacy.h"
#include "sim/stages/stage.h"

typedef struct Drift {
    StageContext cx;
    DriftMethod method;   /* DRIFT_NONE: off, every function a no-op */
    float mu;             /* fedprox */
    int n;
    size_t d;             /* train mode: the model's parameters */
    float *anchor;        /* (n d) each agent's w^t: the model its period started from */
    float *ci;            /* scaffold: (n d) the clients' control variates */
    float *pending;       /* scaffold: (n d) c_i+ - c_i of the last period, until it counts */
    float *c;             /* scaffold: (d) the server's control variate */
    float *sum;           /* scaffold: (d) scratch */
    double *lr_sum;       /* scaffold: (n) the learning rates of the period's steps, summed */
} Drift;

/* From cx->sc->drift; allocates only when on and training. drift_free accepts a zeroed Drift. */
int drift_init(Drift *dr, const StageContext *cx);
void drift_free(Drift *dr);
/* 1 when [drift] corrects the local steps. */
int drift_on(const Drift *dr);
/* What the model's messages weigh relative to the model: 2 under scaffold, 1 otherwise. */
double drift_message_factor(const Drift *dr);
/* Agent starts a local period from start (its model now; fedbuff's y_0). */
int drift_begin(Drift *dr, int agent, const float *start);
/* One corrected local step of agent (queued like trainer_local_step), DP-SGD's with
 * [privacy] clip = sample. */
int drift_step(Drift *dr, Privacy *privacy, int agent);
/* Agent's period is over (its model is y): scaffold computes c_i+ - c_i. */
int drift_end(Drift *dr, int agent);
/* The reports of who[0..k) are aggregated: scaffold's c_i += their change, c += their
 * sum / N. */
int drift_commit(Drift *dr, const int *who, int k);

#endif
