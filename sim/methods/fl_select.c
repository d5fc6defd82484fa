/* fl_select.c — client selection for fedavg and fedbuff (fl_select.h; the models and the
 * departures from the papers: docs/selection.md).
 *
 * oort — Lai, Zhu, Madhyastha, Chowdhury, "Oort: Efficient Federated Learning via Guided
 * Participant Selection", OSDI 2021, Algorithm 1: a reported client's utility is its
 * statistical utility |B_i| sqrt(mean loss^2) plus the staleness bonus sqrt(0.1 ln R / L_i),
 * times (T / t_i)^alpha when it is predicted slower than the preferred duration T; a share
 * eps of the places (0.9, x 0.98 per round, down to 0.2) goes to clients never seen, by
 * speed, the rest to the explored ones, drawn by utility among those within 0.95 of the
 * cut-off utility. Its pacer (T grows by Delta when the last W rounds' summed utility fell
 * below the W rounds' before), its blacklist (a client selected more than a number of
 * times is left out) and its clipping of the statistical utility at a quantile (section
 * 4.4) are keys, off by default.
 * power-of-choice — Cho, Wang, Joshi, "Towards Understanding Biased Client Selection in
 * Federated Learning", AISTATS 2022 (pow-d): d candidates drawn without replacement with
 * probability by data share, each one's local loss at the server's model, the highest
 * K kept.
 * deadline, energy: the clients predicted (same cost model as the run) to finish within T,
 * or whose battery can pay the predicted job, drawn uniformly.
 * Oort and power-of-choice read training losses: timing mode computes none, so they are
 * refused there (select_validate), as they would time a run differently from train mode. */
#include "sim/methods/fl_select.h"

#include "sim/train/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

SelectCost select_predict(const Sim *sim, const SelectJob *job, int i)
{
    const Engine *e = sim->engine;
    int steps = job->local_steps > 0 ? job->local_steps : sim_agent_steps(sim, i);
    SelectCost c = {0};
    c.compute = steps * local_step_flops(job->step, i) / engine_agent_compute(e, i);
    double down = job->down_bytes / engine_message_bandwidth(e, job->server, i),
           up = job->up_bytes / engine_message_bandwidth(e, i, job->server);
    c.comm = down + up;
    c.time = c.compute + c.comm + engine_message_latency(e, job->server, i) + engine_message_latency(e, i, job->server);
    AgentEnergy power = world_agent_energy(sim->sc, &sim->world, i);
    /* the radio (docs/energy.md): receiving the model, then sending the update, never both
     * at once; one power for both takes the product it always took */
    double radio = power.power_tx == power.power_rx ? power.power_tx * c.comm
                                                    : power.power_rx * down + power.power_tx * up;
    c.joules = power.power_compute * c.compute + radio +
               power.energy_per_byte * (job->down_bytes + job->up_bytes) - engine_agent_charging(e, i) * c.time;
    return c;
}

double select_oort_utility(double stat, int round, int last, double t, double T, double alpha)
{
    double u = stat + sqrt(0.1 * log((double)round + 1) / ((double)last + 1));
    if (t > T) u *= pow(T / t, alpha);
    return u;
}

double select_oort_epsilon(double eps0, int round)
{
    double floor_eps = eps0 < SELECT_OORT_EPSILON_MIN ? eps0 : SELECT_OORT_EPSILON_MIN;
    double eps = eps0 * pow(SELECT_OORT_DECAY, round);
    return eps > floor_eps ? eps : floor_eps;
}

/* Orders by value, highest first, ties by the lower index (a total order: the same pick
 * whatever qsort's algorithm). Pairs, not a comparator reading a global: runs of a sweep
 * may share the process. */
typedef struct SelectPair {
    double value;
    int index;
} SelectPair;

static int select_cmp(const void *a, const void *b)
{
    const SelectPair *x = a, *y = b;
    if (x->value != y->value) return x->value > y->value ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int select_before(const double *value, int x, int y)
{
    return value[x] != value[y] ? value[x] > value[y] : x < y;
}

void select_top(int *cand, int m, const double *value, int count)
{
    (void)count; /* the whole order: m is at most the agents */
    SelectPair *p = malloc((size_t)m * sizeof *p);
    if (p == NULL) {
        /* no memory for the pairs: the same order, by insertion */
        for (int k = 1; k < m; k++)
            for (int j = k; j > 0 && select_before(value, cand[j], cand[j - 1]); j--) {
                int t = cand[j];
                cand[j] = cand[j - 1];
                cand[j - 1] = t;
            }
        return;
    }
    for (int k = 0; k < m; k++) p[k] = (SelectPair){value[cand[k]], cand[k]};
    qsort(p, (size_t)m, sizeof *p, select_cmp);
    for (int k = 0; k < m; k++) cand[k] = p[k].index;
    free(p);
}

static int select_index_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void select_weighted_draw(gsl_rng *rng, int *cand, int m, const double *weight, int count)
{
    for (int k = 0; k < count && k < m; k++) {
        double total = 0;
        for (int j = k; j < m; j++) total += weight[cand[j]];
        int pick = m - 1;
        if (total > 0) {
            double u = gsl_rng_uniform(rng) * total, acc = 0;
            for (int j = k; j < m; j++) {
                acc += weight[cand[j]];
                if (u < acc && weight[cand[j]] > 0) { pick = j; break; }
            }
            while (weight[cand[pick]] <= 0) pick--; /* u rounded onto the sum's end */
        } else {
            pick = k + (int)gsl_rng_uniform_int(rng, (unsigned long)(m - k));
        }
        int tmp = cand[k];
        cand[k] = cand[pick];
        cand[pick] = tmp;
    }
}

int select_oort(gsl_rng *rng, int *cand, int m, const char *explored, const double *util, const double *speed,
                double eps, int count)
{
    if (count > m) count = m;
    /* explored first, then the unexplored, each in index order (the draws below then do
     * not depend on the candidates' order) */
    qsort(cand, (size_t)m, sizeof *cand, select_index_cmp);
    int n_e = 0;
    for (int k = 0; k < m; k++) n_e += explored[cand[k]] != 0;
    int *tmp = malloc((size_t)(m - n_e) * sizeof *tmp + 1);
    if (tmp == NULL) return -1;
    for (int k = 0, e = 0, u = 0; k < m; k++) {
        if (explored[cand[k]]) cand[e++] = cand[k];
        else tmp[u++] = cand[k];
    }
    memcpy(cand + n_e, tmp, (size_t)(m - n_e) * sizeof *tmp);
    free(tmp);
    int n_u = m - n_e;
    int explore = (int)floor(eps * count + 0.5);
    if (explore > n_u) explore = n_u;
    int exploit = count - explore;
    if (exploit > n_e) exploit = n_e;
    explore = count - exploit;
    if (exploit > 0) {
        select_top(cand, n_e, util, n_e);
        double cut = SELECT_OORT_CUTOFF * util[cand[exploit - 1]];
        int pool = exploit;
        while (pool < n_e && util[cand[pool]] >= cut) pool++;
        select_weighted_draw(rng, cand, pool, util, exploit);
    }
    /* the unexplored, by speed, into the places after the exploited */
    int *u = cand + n_e;
    select_weighted_draw(rng, u, n_u, speed, explore);
    memmove(cand + exploit, u, (size_t)explore * sizeof *cand);
    /* cand[exploit + explore .. m) no longer holds the rest: only the first count matter */
    return count;
}

int select_oort_pacer_relax(const double *u, int window)
{
    double before = 0, recent = 0;
    for (int k = 0; k < window; k++) before += u[k];
    for (int k = window; k < 2 * window; k++) recent += u[k];
    return before > recent;
}

/* Orders the blacklisted by how often they were selected, then by index. */
static int select_fewest_before(const int *picks, int x, int y)
{
    return picks[x] != picks[y] ? picks[x] < picks[y] : x < y;
}

int select_oort_admit(int *cand, int m, const int *picks, int limit, int count)
{
    if (limit <= 0) return m;
    int *out = malloc((size_t)m * sizeof *out + 1);
    if (out == NULL) return -1;
    int a = 0, b = m;
    /* admitted in their order from the front, blacklisted from the back (reversed, then
     * ordered below) */
    for (int k = 0; k < m; k++) {
        if (picks[cand[k]] <= limit) out[a++] = cand[k];
        else out[--b] = cand[k];
    }
    int want = count < m ? count : m;
    if (a < want) {
        /* too few left: the blacklisted selected the fewest times come back (insertion
         * sort: a pick's blacklist is short) */
        for (int k = a + 1; k < m; k++)
            for (int j = k; j > a && select_fewest_before(picks, out[j], out[j - 1]); j--) {
                int t = out[j];
                out[j] = out[j - 1];
                out[j - 1] = t;
            }
        a = want;
    }
    memcpy(cand, out, (size_t)m * sizeof *cand);
    free(out);
    return a;
}

static int select_time_cmp(const void *a, const void *b);

double select_quantile(double *v, int m, double q)
{
    qsort(v, (size_t)m, sizeof *v, select_time_cmp);
    int k = (int)ceil(q * m - 1e-9) - 1; /* 1e-9: q m a whole number computed a hair above */
    if (k < 0) k = 0;
    if (k > m - 1) k = m - 1;
    return v[k];
}

int select_create(FlSelect *sel, const SelectKeys *keys, const SelectJob *job, int n, double deadline)
{
    memset(sel, 0, sizeof *sel);
    sel->keys = *keys;
    sel->job = *job;
    sel->n = n;
    sel->deadline = deadline;
    if (keys->selection == SELECT_UNIFORM) return HS_OK;
    sel->stat = calloc((size_t)n, sizeof *sel->stat);
    sel->pending = calloc((size_t)n, sizeof *sel->pending);
    sel->last = calloc((size_t)n, sizeof *sel->last);
    sel->explored = calloc((size_t)n, 1);
    sel->util = calloc((size_t)n, sizeof *sel->util);
    sel->speed = calloc((size_t)n, sizeof *sel->speed);
    sel->picks = calloc((size_t)n, sizeof *sel->picks);
    if (!sel->stat || !sel->pending || !sel->last || !sel->explored || !sel->util || !sel->speed || !sel->picks)
        return HS_E_NOMEM;
    sel->pacer_round = -1;
    if (keys->selection == SELECT_OORT && isfinite(keys->oort_pacer_step)) {
        /* Algorithm 1 starts T at Delta; a T the scenario gives is where it starts instead */
        sel->pacer_T = isfinite(keys->select_time) ? keys->select_time
                       : isfinite(deadline)         ? deadline
                                                    : keys->oort_pacer_step;
        size_t slots = 2 * (size_t)keys->oort_pacer_window;
        sel->pacer_u = calloc(slots, sizeof *sel->pacer_u);
        sel->pacer_scratch = calloc(slots, sizeof *sel->pacer_scratch);
        if (!sel->pacer_u || !sel->pacer_scratch) return HS_E_NOMEM;
    }
    return HS_OK;
}

void select_free(FlSelect *sel)
{
    free(sel->stat);
    free(sel->pending);
    free(sel->last);
    free(sel->explored);
    free(sel->util);
    free(sel->speed);
    free(sel->picks);
    free(sel->pacer_u);
    free(sel->pacer_scratch);
    memset(sel, 0, sizeof *sel);
}

static int select_time_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* T: select_time, else fedavg's deadline, else (oort) the median predicted time. */
static double select_T(const FlSelect *sel, const int *cand, int m, double *scratch)
{
    if (isfinite(sel->keys.select_time)) return sel->keys.select_time;
    if (isfinite(sel->deadline)) return sel->deadline;
    for (int k = 0; k < m; k++) scratch[k] = 1 / sel->speed[cand[k]];
    qsort(scratch, (size_t)m, sizeof *scratch, select_time_cmp);
    return m % 2 ? scratch[m / 2] : (scratch[m / 2 - 1] + scratch[m / 2]) / 2;
}

/* deadline and energy: the clients whose margin is >= 0 (value = the margin) drawn
 * uniformly; none: the count with the largest margins (the nearest to fitting). */
static int select_filtered(gsl_rng *rng, int *cand, int m, const double *margin, int count)
{
    int q = 0;
    for (int k = 0; k < m; k++)
        if (margin[cand[k]] >= 0) {
            int t = cand[q];
            cand[q++] = cand[k];
            cand[k] = t;
        }
    if (q == 0) {
        select_top(cand, m, margin, count);
        return count < m ? count : m;
    }
    /* the qualifying in index order, so the draw does not depend on the scan's swaps */
    qsort(cand, (size_t)q, sizeof *cand, select_index_cmp);
    int take = count < q ? count : q;
    for (int k = 0; k < take; k++) {
        int j = k + (int)gsl_rng_uniform_int(rng, (unsigned long)(q - k));
        int t = cand[k];
        cand[k] = cand[j];
        cand[j] = t;
    }
    return take;
}

int select_pow_d(gsl_rng *rng, int *cand, int m, const double *share, int d, int count, SelectLoss loss, void *ctx,
                 double *losses)
{
    select_weighted_draw(rng, cand, m, share, d);
    for (int k = 0; k < d; k++) {
        int status = HS_OK;
        double l = loss(ctx, cand[k], &status);
        if (status != HS_OK) return status;
        losses[cand[k]] = isnan(l) ? -INFINITY : l;
    }
    select_top(cand, d, losses, count);
    return HS_OK;
}

/* Power-of-choice's loss of a candidate: the server's model x on one batch of its data
 * (pow-d's estimate of F_k(x), the cpow-d form with the client's batch), free on the
 * clock: the paper counts rounds, where it does not appear (docs/selection.md). It counts toward the round's train loss, as every gradient does. */
typedef struct SelectLossAt {
    Sim *sim;
    const float *x;
} SelectLossAt;

static double select_loss_at(void *ctx, int c, int *status)
{
    SelectLossAt *at = ctx;
    *status = trainer_gradient_at(at->sim->trainer, c, at->x, trainer_gradient_scratch(at->sim->trainer));
    return *status == HS_OK ? trainer_agent_loss(at->sim->trainer, c) : NAN;
}

int select_pick(FlSelect *sel, Sim *sim, gsl_rng *rng, int *cand, int m, int count, int round, const float *x,
                int *picked)
{
    if (count > m) count = m;
    double *v = sel->util;
    switch ((SelectRule)sel->keys.selection) {
    case SELECT_DEADLINE: {
        double T = isfinite(sel->keys.select_time) ? sel->keys.select_time : sel->deadline;
        for (int k = 0; k < m; k++) v[cand[k]] = T - select_predict(sim, &sel->job, cand[k]).time;
        *picked = select_filtered(rng, cand, m, v, count);
        return HS_OK;
    }
    case SELECT_ENERGY:
        for (int k = 0; k < m; k++) {
            int c = cand[k];
            /* a battery left at or below 0 takes the agent offline: it must stay above */
            double left = engine_agent_charge(sim->engine, c) - select_predict(sim, &sel->job, c).joules;
            v[c] = left > 0 ? left : left == 0 ? -1e-300 : left;
        }
        *picked = select_filtered(rng, cand, m, v, count);
        return HS_OK;
    case SELECT_OORT: {
        /* the blacklist first: the left-out clients are no candidates for T, the clip or
         * the draws */
        if (sel->keys.oort_blacklist > 0) {
            m = select_oort_admit(cand, m, sel->picks, sel->keys.oort_blacklist, count);
            if (m < 0) return HS_E_NOMEM;
        }
        for (int k = 0; k < m; k++) sel->speed[cand[k]] = 1 / select_predict(sim, &sel->job, cand[k]).time;
        double T = sel->pacer_u ? select_pacer_T(sel, round) : select_T(sel, cand, m, v); /* v: scratch */
        double clip = INFINITY;
        if (sel->keys.oort_clip < 1) {
            int e = 0;
            for (int k = 0; k < m; k++)
                if (sel->explored[cand[k]]) v[e++] = sel->stat[cand[k]];
            if (e > 0) clip = select_quantile(v, e, sel->keys.oort_clip);
        }
        for (int k = 0; k < m; k++) {
            int c = cand[k];
            double stat = sel->stat[c] < clip ? sel->stat[c] : clip;
            v[c] = sel->explored[c]
                       ? select_oort_utility(stat, round, sel->last[c], 1 / sel->speed[c], T, sel->keys.oort_alpha)
                       : 0;
        }
        *picked = select_oort(rng, cand, m, sel->explored, v, sel->speed,
                              select_oort_epsilon(sel->keys.oort_epsilon, round), count);
        if (*picked < 0) return HS_E_NOMEM;
        for (int k = 0; k < *picked; k++) sel->picks[cand[k]]++;
        return HS_OK;
    }
    case SELECT_POWER_OF_CHOICE: {
        int d = sel->keys.candidates > 0 ? sel->keys.candidates : 2 * count;
        if (d < count) d = count; /* fedbuff's first pick of `concurrency` clients */
        if (d > m) d = m;         /* fewer online than d: every online client is a candidate */
        for (int k = 0; k < m; k++) v[cand[k]] = sim->world.agents[cand[k]].samples;
        SelectLossAt at = {sim, x};
        int status = select_pow_d(rng, cand, m, v, d, count, select_loss_at, &at, sel->stat);
        *picked = count;
        return status;
    }
    case SELECT_UNIFORM: break;
    }
    return HS_E_INTERNAL;
}

void select_job_done(FlSelect *sel, Sim *sim, int i, int steps)
{
    if (sel->keys.selection != SELECT_OORT) return;
    /* |B_i| sqrt(mean loss^2) over the job's samples, the loss of its last batch standing
     * for every sample's (one read per job: reading every step's would stop the
     * trainer's queue at each step) */
    double loss = trainer_agent_loss(sim->trainer, i);
    double samples = (double)steps * sim->world.agents[i].batch;
    if (samples > sim->world.agents[i].samples) samples = sim->world.agents[i].samples;
    sel->pending[i] = isfinite(loss) ? samples * fabs(loss) : 0;
}

/* Moves the pacer's ring on to `round`: at each new round k, first its test (over rounds
 * k - 2W .. k - 1, all still in the ring), then k's slot cleared (it held k - 2W). So
 * every round is tested once, in order, whether a report or a pick reaches it first. */
static void select_pacer_advance(FlSelect *sel, int round)
{
    int w = sel->keys.oort_pacer_window, slots = 2 * w;
    for (int k = sel->pacer_round + 1; k <= round; k++) {
        if (k >= slots) {
            for (int j = 0; j < slots; j++) sel->pacer_scratch[j] = sel->pacer_u[(k - slots + j) % slots];
            if (select_oort_pacer_relax(sel->pacer_scratch, w)) sel->pacer_T += sel->keys.oort_pacer_step;
        }
        sel->pacer_u[k % slots] = 0;
        sel->pacer_round = k;
    }
}

double select_pacer_T(FlSelect *sel, int round)
{
    select_pacer_advance(sel, round);
    return sel->pacer_T;
}

void select_reported(FlSelect *sel, int i, int round)
{
    if (sel->keys.selection != SELECT_OORT) return;
    if (sel->pacer_u) {
        select_pacer_advance(sel, round);
        sel->pacer_u[round % (2 * sel->keys.oort_pacer_window)] += sel->pending[i];
    }
    sel->stat[i] = sel->pending[i];
    sel->last[i] = round;
    sel->explored[i] = 1;
}

static int select_any_battery(const Scenario *sc)
{
    for (int g = 0; g < sc->n_groups; g++)
        if (!distribution_is_zero(&sc->groups[g].battery)) return 1;
    return 0;
}

/* A parameter of a rule that does not run is left alone (as prune_target without prune),
 * so that one file can sweep the rules. */
int select_validate(const Scenario *sc, const SelectKeys *keys, int count, double deadline, HsDiag *diag)
{
    SelectRule rule = (SelectRule)keys->selection;
    if ((rule == SELECT_OORT || rule == SELECT_POWER_OF_CHOICE) && sc->mode == RUN_MODE_TIMING)
        return scenario_key_error(sc, &keys->selection, diag,
                                  "%s selects by the clients' training losses, which timing mode does not compute "
                                  "(the selected clients, hence the times, would differ from train mode): run in "
                                  "train mode",
                                  rule == SELECT_OORT ? "oort" : "power-of-choice");
    if (rule == SELECT_DEADLINE && !isfinite(keys->select_time) && !isfinite(deadline))
        return scenario_key_error(sc, &keys->selection, diag,
                                  "deadline needs a cut: select_time (or fedavg's deadline)");
    if (rule == SELECT_ENERGY && !select_any_battery(sc))
        return scenario_key_error(sc, &keys->selection, diag,
                                  "energy selects by battery, and no [agents] group has a battery");
    if (rule == SELECT_POWER_OF_CHOICE && keys->candidates > 0) {
        if (keys->candidates < count)
            return scenario_key_error(sc, &keys->candidates, diag,
                                      "d = %d candidates cannot yield the %d clients a selection takes",
                                      keys->candidates, count);
        if (keys->candidates > sc->n_agents)
            return scenario_key_error(sc, &keys->candidates, diag, "d = %d candidates, but there are %d agents",
                                      keys->candidates, sc->n_agents);
    }
    return HS_OK;
}
