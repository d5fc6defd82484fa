/* fl_select.h — which clients a server-based method (fedavg, fedbuff: fl.c) sends its
 * model to: [method] selection = uniform | oort | power-of-choice | deadline | energy and
 * its parameters, the clients' predicted job time and energy from the cost model, and the
 * rules themselves (docs/selection.md has the models and what departs from the papers).
 * uniform is fl.c's own draw, untouched: this file is not called for it, so runs that do
 * not write the key draw exactly what they drew before.
 * The rules over plain arrays (select_oort_utility, select_top, select_weighted_draw,
 * select_oort) are here without a Sim so that tests/check_select.c can check them on
 * hand-worked tables. */
#ifndef SIM_METHODS_FL_SELECT_H
#define SIM_METHODS_FL_SELECT_H

#include "sim/methods/method.h"

#include <gsl/gsl_rng.h>

typedef enum { SELECT_UNIFORM, SELECT_OORT, SELECT_POWER_OF_CHOICE, SELECT_DEADLINE, SELECT_ENERGY } SelectRule;

/* Oort's constants that hetsim does not make keys (Lai et al. 2021, section 4 and its
 * artifact's defaults): the exploitation pool keeps the utilities within c of the cut-off,
 * and the exploration share decays by this factor per round down to its floor. */
#define SELECT_OORT_CUTOFF 0.95
#define SELECT_OORT_DECAY 0.98
#define SELECT_OORT_EPSILON_MIN 0.2

typedef struct SelectKeys {
    int selection;       /* SelectRule */
    int candidates;      /* power-of-choice's d; 0: twice the clients selected, at most every agent */
    double oort_alpha;   /* Oort's straggler penalty exponent */
    double oort_epsilon; /* Oort's first round's exploration share */
    double select_time;  /* s: Oort's preferred duration T, deadline's cut; inf: none */
    double oort_pacer_step; /* s: Oort's pacer step Delta; inf: no pacer (T fixed) */
    int oort_pacer_window;  /* Oort's pacer window W, in rounds */
    int oort_blacklist;     /* a client selected more than this many times is left out; 0: none */
    double oort_clip;       /* the quantile of the explored clients' statistical utilities they are capped at; 1: none */
} SelectKeys;

/* The keys' rows, in fedavg's and fedbuff's tables (member written with its dot). Every
 * row is left out of runs.config at its default, so runs that do not select keep their
 * configs and sweep ids. */
#define SELECT_METHOD_KEYS(Type, member)                                                                           \
    METHOD_KEY_IN(Type, member, selection, "uniform",                                                              \
                  "which clients get the model: uniform, oort (utility: loss x speed, with exploration), "         \
                  "power-of-choice (highest loss of d sampled), deadline (predicted to finish within "            \
                  "select_time), energy (battery can pay the predicted job)",                                       \
                  .type = SCHEMA_CHOICE, .choices = "uniform|oort|power-of-choice|deadline|energy",                 \
                  .flags = SCHEMA_OMIT_DEFAULT),                                                                   \
    METHOD_KEY_IN(Type, member, candidates, "0",                                                                   \
                  "power-of-choice: d, the clients sampled by data share whose loss is evaluated (0: twice the "   \
                  "clients selected, at most every agent)",                                                        \
                  .type = SCHEMA_INT, .min = 0, .max = 100000000, .flags = SCHEMA_OMIT_DEFAULT),                   \
    METHOD_KEY_IN(Type, member, oort_alpha, "2",                                                                   \
                  "oort: straggler penalty, utility x (T / t)^alpha for a client predicted slower than T",         \
                  .type = SCHEMA_REAL, .min = 0, .max = 100, .flags = SCHEMA_OMIT_DEFAULT),                        \
    METHOD_KEY_IN(Type, member, oort_epsilon, "0.9",                                                               \
                  "oort: exploration share of the first round; x 0.98 per round down to min(0.2, it)",             \
                  .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OMIT_DEFAULT),                          \
    METHOD_KEY_IN(Type, member, select_time, "none",                                                               \
                  "oort: T, the preferred job time (none: fedavg's deadline, else the median prediction); "        \
                  "deadline: the cut (none: fedavg's deadline)",                                                   \
                  .type = SCHEMA_TIME, .unit = UNIT_TIME, .min = 0, .max = INFINITY,                               \
                  .flags = SCHEMA_OPEN_MIN | SCHEMA_OMIT_DEFAULT),                                                 \
    METHOD_KEY_IN(Type, member, oort_pacer_step, "none",                                                           \
                  "oort: the pacer's step Delta: T grows by it before a round whose last oort_pacer_window "        \
                  "rounds' summed utility is below the window's before (none: T fixed; T starts at select_time, "  \
                  "else fedavg's deadline, else Delta)",                                                           \
                  .type = SCHEMA_TIME, .unit = UNIT_TIME, .min = 0, .max = INFINITY,                               \
                  .flags = SCHEMA_OPEN_MIN | SCHEMA_OMIT_DEFAULT),                                                 \
    METHOD_KEY_IN(Type, member, oort_pacer_window, "20",                                                           \
                  "oort: the pacer's window W in rounds (with oort_pacer_step)",                                   \
                  .type = SCHEMA_INT, .min = 1, .max = 1000000, .flags = SCHEMA_OMIT_DEFAULT),                     \
    METHOD_KEY_IN(Type, member, oort_blacklist, "0",                                                               \
                  "oort: a client selected more than this many times is no longer selected, unless too few are "   \
                  "left (0: no blacklist)",                                                                        \
                  .type = SCHEMA_INT, .min = 0, .max = 100000000, .flags = SCHEMA_OMIT_DEFAULT),                   \
    METHOD_KEY_IN(Type, member, oort_clip, "1",                                                                    \
                  "oort: statistical utilities are capped at this quantile of the explored candidates' (1: none)", \
                  .type = SCHEMA_REAL, .min = 0, .max = 1, .flags = SCHEMA_OPEN_MIN | SCHEMA_OMIT_DEFAULT)

/* What a client's job is predicted to cost, alone on its links at the current trace
 * values (no sharing, no slowdown, no jitter): download, its local steps, upload. */
typedef struct SelectJob {
    double down_bytes, up_bytes; /* the model (and scaffold's control variate) each way */
    int local_steps;             /* 0: one epoch */
    const LocalStep *step;       /* each step's FLOPs (prune included) */
    int server;
} SelectJob;

typedef struct SelectCost {
    double compute; /* s on the processor */
    double comm;    /* s transferring (latency excluded) */
    double time;    /* compute + comm + both messages' latency */
    double joules;  /* power_compute x compute + power_rx x download + power_tx x upload + energy_per_byte x
                     * bytes - charging x time */
} SelectCost;

SelectCost select_predict(const Sim *sim, const SelectJob *job, int client);

/* Oort's utility of a client (Algorithm 1): stat + sqrt(0.1 ln R / L), R = round + 1,
 * L = last + 1 the round it last reported in (+1: rounds count from 0), then times
 * (T / t)^alpha when t > T. stat = |B_i| sqrt(mean loss^2). */
double select_oort_utility(double stat, int round, int last, double t, double T, double alpha);
/* Oort's exploration share in round r: max(min(eps0, floor), eps0 x decay^r). */
double select_oort_epsilon(double eps0, int round);
/* Reorders cand[0..m) so that its first count hold the count highest value[cand[k]]
 * (ties: the lower client index first), in that order. */
void select_top(int *cand, int m, const double *value, int count);
/* Draws count distinct clients of cand[0..m) with probability proportional to
 * weight[cand[k]] (successive draws without replacement; all weights 0: uniform), into
 * cand's first count places in draw order. O(count x m). */
void select_weighted_draw(gsl_rng *rng, int *cand, int m, const double *weight, int count);
/* Oort's selection of count clients among cand[0..m): explored[c] says whether c has
 * reported before; util[c] its utility, speed[c] 1 / its predicted time. The
 * explored get round((1 - eps) count) places at most: the cut-off is the utility at that
 * place (sorted), the pool every explored client within SELECT_OORT_CUTOFF of it, drawn
 * by utility; the other places go to the unexplored, drawn by speed (fewer unexplored:
 * more explored, and the other way round). Returns how many it selected (count, or m),
 * -1 when out of memory. Each draw is O(places x pool), as select_weighted_draw's. */
int select_oort(gsl_rng *rng, int *cand, int m, const char *explored, const double *util, const double *speed,
                double eps, int count);

/* Oort's pacer (Algorithm 1): relax T when the summed utility of the window's last W
 * rounds, u[W .. 2W), is below that of the W before, u[0 .. W) (u: 2W rounds' utility
 * sums, oldest first). */
int select_oort_pacer_relax(const double *u, int window);
/* Oort's blacklist: reorders cand[0..m) so that its first places hold the clients
 * selected at most `limit` times (picks[c] <= limit), in their order; when fewer than
 * count remain, the blacklisted selected the fewest times (ties: the lower index) are
 * readmitted up to count. Returns how many are admitted. limit 0: every client. */
int select_oort_admit(int *cand, int m, const int *picks, int limit, int count);
/* The nearest-rank q-quantile of v[0..m) (sorted in place, ascending): v[ceil(q m) - 1]. */
double select_quantile(double *v, int m, double q);

/* The loss of client c at the server's model (HS_OK in *status, else the error). */
typedef double (*SelectLoss)(void *ctx, int c, int *status);
/* Power-of-choice: draws d of cand[0..m) by share (select_weighted_draw), asks each its
 * loss in draw order (into losses[c]; NaN counts as -inf), and orders those d by loss,
 * highest first (select_top): the first count are the pick. */
int select_pow_d(gsl_rng *rng, int *cand, int m, const double *share, int d, int count, SelectLoss loss, void *ctx,
                 double *losses);

/* A run's selection: the keys and the clients' history. */
typedef struct FlSelect {
    SelectKeys keys;
    SelectJob job;
    int n;
    double deadline;   /* fedavg's, the deadline rule's fallback for select_time */
    double *stat;      /* (n) oort: |B_i| x the loss of i's last job; power-of-choice: losses */
    double *pending;   /* (n) oort: the stat of i's job under way */
    int *last;         /* (n) oort: the round i last reported in */
    char *explored;    /* (n) */
    double *util, *speed; /* (n) scratch */
    int *picks;        /* (n) oort: times i was selected (the blacklist's count) */
    /* oort's pacer: T, and the utility reported in each of the last 2W rounds */
    double pacer_T;
    double *pacer_u;   /* (2W) ring by round mod 2W: the sum of the stats reported in it */
    double *pacer_scratch; /* (2W) the window oldest first */
    int pacer_round;   /* the latest round whose slot is cleared (-1: none) */
    int pacer_tested;  /* the latest round the pacer's test ran for (-1: none) */
} FlSelect;

/* The rule's state for n clients; `deadline` fedavg's (inf for fedbuff). HS_E_NOMEM. */
int select_create(FlSelect *sel, const SelectKeys *keys, const SelectJob *job, int n, double deadline);
void select_free(FlSelect *sel);
/* Picks up to count clients of cand[0..m) into its first places (x: the model the server
 * sends, NULL in timing mode); returns how many (at least one when m > 0). */
int select_pick(FlSelect *sel, Sim *sim, gsl_rng *rng, int *cand, int m, int count, int round, const float *x,
                int *picked);
/* Client i finished its local steps (before its upload): oort reads its loss. */
void select_job_done(FlSelect *sel, Sim *sim, int i, int steps);
/* Client i's report counted in round `round`: oort's history (and its pacer's). */
void select_reported(FlSelect *sel, int i, int round);
/* Oort's pacer's T for round `round` (runs its test for every round since the last
 * call; rounds only go forward). Needs oort_pacer_step finite. */
double select_pacer_T(FlSelect *sel, int round);
/* The checks of fedavg's and fedbuff's validate: count the clients a pick asks for (the
 * largest), deadline fedavg's (inf: none). HS_E_INPUT naming the key's FILE:LINE. */
int select_validate(const Scenario *sc, const SelectKeys *keys, int count, double deadline, HsDiag *diag);

#endif
