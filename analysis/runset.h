/* runset.h — the runs of a database with the figures reports and plots derive from them,
 * grouped into sweep points, heterogeneity levels and series. One definition of every
 * derived figure, shared by `hetsim report` and `hetsim plot`.
 *
 * Per run (RunFacts; a missing figure is NaN):
 *   rounds         runs.rounds_done, or the number of logged rounds while none is set;
 *   sim_time_s     runs.sim_time_s, or max(rounds.t_end) while none is set;
 *   idle_share     sum(agent_rounds.idle_s) / (N_agents * sum(rounds.t_end - t_start)),
 *                  N_agents = count(agents rows); NaN without agent_rounds, agents or
 *                  round time; a run recorded with [run] record = summary (no
 *                  agent_rounds rows) takes sum(rounds.idle_s), the same time summed
 *                  round by round;
 *   summary        runs.config's [run] says record = summary;
 *   bytes          sum(rounds.bytes);
 *   makespan_s     mean over the run's rounds of t_end - t_start;
 *   target_accuracy  `target_accuracy` of the [run] section of runs.config, when > 0;
 *   time_to_target_s the t of the first metrics row (by t, then insertion) of the
 *                  averaged model (agent NULL) whose test_accuracy >= the target;
 *   predicted_s, actual_s  means over the run's pairings rows of predicted_s and actual_s
 *                  (a pair's predicted and played-out time from the round start to the
 *                  end of its work), for ComDML runs (method comdml, or any run with
 *                  pairings rows);
 *   offload_share  for the same runs: share of agent_rounds rows with role 'offloader';
 *   energy_j       sum(rounds.energy_j): the joules the agents drew (docs/energy.md); NaN
 *                  when no power was given (or the file predates the column);
 *   energy_to_target_j  sum(rounds.energy_j) over the rounds that ended by time_to_target_s
 *                  (the evaluation that reached the target closes its round).
 *
 * Points. A run of a sweep belongs to the point named by its label without the seed
 * (label.h), within its sweep. A run outside any sweep gets the label
 * `run.method=METHOD run.name=NAME`, plus `config=#K` (K = 2, 3, ... in id order) when
 * runs of that name have different configurations: runs outside a sweep are one point
 * when they share the name and runs.config agrees once [run] method, seed and name and
 * the whole [method] section (the method's own knobs) are left out. The runs of one
 * sweep, and all the runs outside any sweep, each make a group.
 *
 * Scenario of a point: its label without run.method. Method: the label's run.method,
 * else runs.method.
 *
 * Heterogeneity level of a point (RunGroup.axis_kind): among the keys whose value
 * differs between the scenarios of the group (run.method and the seed never count), in
 * label order,
 *   1. the first key whose every value is `lognormal(MEDIAN, SIGMA)`: the level is SIGMA;
 *   2. else the first key whose every value is one number with an optional unit
 *      (`200 MFLOPS`): the level is that number in SI units;
 *   3. else the first varying key: the level is the index of its value in the order the
 *      values first appear (by run id), 0, 1, 2, ...;
 *   4. no varying key: every point is level 0.
 * The other varying keys tell lines apart: a point's series is its method followed by
 * their `KEY=VALUE`s (`comdml, data.partition=iid`).
 *
 * Intervals: the mean over seeds with a 95 % interval mean ± t(0.975, n-1) * sd / sqrt(n)
 * (Student's t, sample standard deviation), over the runs with status 'done' that have
 * the figure; n = 1 gives no interval.
 *
 * Speedup over sync of a non-sync point P: the point S of the same group with the same
 * scenario and method sync; each done run of P is paired with the done run of S of the
 * same seed. A pair's speedup is t_sync / t_method with t = time to target when both
 * runs reached their target, else total virtual time (sim_time_s); the basis says which
 * (mixed when the seeds differ). Mean and interval over the pairs as above. */
#ifndef ANALYSIS_RUNSET_H
#define ANALYSIS_RUNSET_H

#include <sqlite3.h>
#include <stdint.h>

#include "base/hs_error.h"

typedef struct RunFacts {
    int64_t id;
    char *name, *method, *status; /* owned; name "" when NULL */
    char *sweep;                  /* owned; NULL outside a sweep */
    char *point;                  /* owned; runs.point without the seed, NULL when none */
    uint64_t seed;
    int done;                     /* status is 'done' */
    int summary;                  /* [run] record = summary: no agent_rounds rows */
    int has_rounds;
    int64_t rounds;
    double sim_time_s, idle_share, bytes, final_accuracy, makespan_s;
    double target_accuracy, time_to_target_s;
    double predicted_s, actual_s, offload_share;
    double energy_j, energy_to_target_j;
    int64_t pairings;             /* pairings rows of the run */
    int point_index;              /* into RunSet.points */
} RunFacts;

/* The figures of RunFacts that points aggregate. */
typedef enum {
    RUN_SIM_TIME, RUN_TIME_TO_TARGET, RUN_FINAL_ACCURACY, RUN_IDLE_SHARE, RUN_BYTES,
    RUN_MAKESPAN, RUN_PREDICTED, RUN_ACTUAL, RUN_OFFLOAD_SHARE, RUN_ENERGY, RUN_ENERGY_TO_TARGET,
    RUN_FIELD_COUNT
} RunField;

typedef enum {
    RUNSET_AXIS_NONE = 0, RUNSET_AXIS_SIGMA, RUNSET_AXIS_VALUE, RUNSET_AXIS_INDEX
} RunAxisKind;

typedef struct RunGroup {
    char *sweep;          /* owned; "" for the runs outside any sweep */
    RunAxisKind axis_kind;
    char *axis_key;       /* owned; the key of the level, NULL for RUNSET_AXIS_NONE */
    char *axis_title;     /* owned; "sigma of agents.compute (lognormal)", ... */
    char **level_names;   /* RUNSET_AXIS_INDEX: (level_count) value texts, owned */
    int level_count;
    int64_t last_run;     /* the highest run id of the group */
    int run_count;
} RunGroup;

typedef struct RunSeries {
    int group;
    char *name;           /* owned; "comdml" or "comdml, data.partition=iid" */
    char *method;         /* borrowed from a point */
} RunSeries;

typedef struct RunPoint {
    int group;
    char *label;          /* owned; label without the seed */
    char *scenario;       /* owned; label without the seed and run.method */
    char *method;         /* owned */
    int series;           /* into RunSet.series */
    double level;
    int *runs;            /* owned; (run_count) indices into RunSet.runs, id order */
    int run_count, done_count;
} RunPoint;

typedef struct RunSet {
    RunFacts *runs;
    int run_count;
    RunPoint *points;
    int point_count;
    RunGroup *groups;
    int group_count;
    RunSeries *series;
    int series_count;
} RunSet;

typedef struct RunSetFilter {
    const char *sweep;    /* only the runs of this sweep (NULL: every run) */
    int have_run;
    int64_t run_id;       /* only this run (when have_run) */
} RunSetFilter;

/* Reads the runs that pass filter (NULL: all) from db (a dbread_open connection to the
 * file at path, used in messages) into a new *out, freed with runset_free. Returns
 * HS_OK, or HS_E_IO / HS_E_NOMEM with "PATH: message" in diag (*out NULL). An empty
 * selection is not an error. */
int runset_load(sqlite3 *db, const char *path, const RunSetFilter *filter, RunSet **out,
                HsDiag *diag);

void runset_free(RunSet *set);

/* The order reports print points in: by group, then by scenario (the point's label
 * without run.method), then by method — scenarios and methods each in the order they
 * first appear in the runs' id order, which for a sweep is the order of its expansion
 * (run ids follow it). So every method of one scenario is side by side. Fills
 * order[0..point_count) with point indices. */
void runset_point_order(const RunSet *set, int *order);

/* The figure field of run (NaN when missing). */
double runset_field(const RunFacts *run, RunField field);

typedef struct RunStat {
    int n;                /* values that went in */
    double mean;          /* NaN when n = 0 */
    double half;          /* half-width of the 95 % interval; NaN when n < 2 */
} RunStat;

/* Mean and 95 % interval of the finite values among values[0..count). */
void runset_stat(const double *values, int count, RunStat *out);

/* The field over the done runs of point. Returns HS_OK or HS_E_NOMEM. */
int runset_point_stat(const RunSet *set, int point, RunField field, RunStat *out);

typedef enum { SPEEDUP_TARGET = 0, SPEEDUP_TOTAL, SPEEDUP_MIXED } SpeedupBasis;

const char *runset_basis_name(SpeedupBasis basis);  /* "time to target", ... */

typedef struct RunSpeedup {
    int point;            /* the method's point */
    int sync_point;       /* the sync point of the same scenario */
    SpeedupBasis basis;
    RunStat speedup;      /* t_sync / t_method over the pairs */
    RunStat time, sync_time;  /* t_method and t_sync over the same pairs */
} RunSpeedup;

/* Every non-sync point that has a sync point with at least one seed in common among
 * done runs whose times are positive, in point order, into a new array *out (free()) of
 * *count entries. Returns HS_OK or HS_E_NOMEM. */
int runset_speedups(const RunSet *set, RunSpeedup **out, int *count);

#endif
