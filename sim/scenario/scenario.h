/* scenario.h — a scenario file resolved into plain data: every default filled in, every
 * unit converted to SI. Resolution validates everything a run will use, so a scenario
 * that resolves cannot fail later for a reason that was in the file.
 * Sections: [run] [data] [model] [method] [topology] [agents] [agents.NAME] [server]
 * [network] [compression] [byzantine] [sweep]. */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include "models/layer_profile.h"
#include "models/model_spec.h"
#include "sim/scenario/distribution.h"
#include "sim/kernel/dynamics.h"
#include "sim/scenario/inidoc.h"
#include "sim/scenario/stage_points.h"
#include "sim/scenario/topology.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SCENARIO_MAX_GROUPS 32
#define SCENARIO_MAX_PARAMS 32
/* Bytes of the struct a method declares for its [method] keys (MethodOps.keys_size). */
#define SCENARIO_METHOD_KEYS_MAX 256
/* Local samples per agent, in timing mode too (train mode: at most the data set). */
#define SCENARIO_MAX_SAMPLES 1000000000
/* A batch: [model] batch and each agent's ([agents] batch, its draws included). */
#define SCENARIO_MAX_BATCH 65536
#define SCENARIO_THREADS_EAGER (-1)

typedef enum { RUN_MODE_TRAIN = 0, RUN_MODE_TIMING = 1 } RunMode;
/* [run] record: what the database gets per agent (docs/recording.md) */
typedef enum { RUN_RECORD_AGENTS = 0, RUN_RECORD_SUMMARY = 1 } RunRecord;

/* Which attributes a group sets itself (the rest come from [agents]). */
typedef struct AgentGroupSpec {
    char name[INIDOC_NAME_MAX]; /* "default" for [agents] itself */
    int count;
    int line;                   /* where the group's section starts */
    Distribution compute;       /* FLOP/s */
    Distribution uplink;        /* bytes/s */
    Distribution downlink;      /* bytes/s */
    int symmetric_link;         /* `bandwidth` given: downlink = the uplink's draw */
    Distribution latency;       /* s */
    Distribution samples;       /* count; drawn and rounded */
    int has_samples;            /* else the dataset is shared out evenly */
    char samples_where[160];    /* "FILE:LINE" or "--set ..." of samples, for its draws' errors */
    Distribution batch;         /* samples per step; drawn and rounded (as samples) */
    int has_batch;              /* else every agent's batch is [model] batch */
    char batch_where[160];      /* "FILE:LINE" or "--set ..." of batch, for its draws' and methods' errors */
    Slowdown slowdown;          /* speed over time */
    double jitter;              /* lognormal sigma of per-computation noise */
    Distribution availability;  /* constant 1 (always) or a 0/1 trace */
    /* energy (docs/energy.md): all the constant 0 = not modelled, and nothing of it is
     * written back; a constant or a distribution drawn once per agent (world_energy.c) */
    Distribution power_compute; /* W while computing */
    Distribution power_tx;      /* W while sending and not computing ([agents] power_comm: */
    Distribution power_rx;      /* W while receiving       both, the same distribution) */
    Distribution power_idle;    /* W while online and neither */
    Distribution energy_per_byte; /* J per byte sent or received */
    Distribution battery;       /* J; the constant 0 = no battery (mains powered) */
    Distribution charging;      /* W put back into the battery, online or not */
    double resume_charge;       /* J an empty battery must hold again to come back; 0 = full */
    int battery_check;          /* 0 round: at the round's end; 1 instant: when it empties */
    /* unstable links (docs/network.md#unstable-links): 0 = none, nothing written back */
    double loss;                /* probability in [0, 1) that this end loses a message */
    Distribution outage;        /* constant 1 (none) or a 0/1 trace of the links' state (1 up) */
} AgentGroupSpec;

/* A [method] key of the method that runs as written: the given value or the method's
 * default, already checked against the key's type and range (sim/scenario/method_ops.h).
 * Its typed value is in the method's key struct (scenario_method_keys); this text is
 * what runs.config writes and where errors about the key point. */
typedef struct MethodParam {
    char key[INIDOC_NAME_MAX];
    char value[INIDOC_VALUE_MAX];  /* as written (trimmed): runs.config */
    char where[160];               /* "FILE:LINE" or "--set ..." of the value; "" for the default */
    int written;                   /* runs.config writes it (not a SCHEMA_OMIT_DEFAULT key at its default) */
} MethodParam;

/* [compression] (sim/stages/compress.h): what sync, localsgd/qsr and dpsgd send instead of dense
 * vectors. present = 0 when the section is absent: nothing is compressed and nothing is
 * written back, so such runs are bit-identical to runs before compression existed. */
typedef enum { COMPRESS_NONE = 0, COMPRESS_TOPK, COMPRESS_RANDK, COMPRESS_DCT, COMPRESS_SLIMDP, COMPRESS_QSGD,
               COMPRESS_SIGN } CompressScheme;
typedef enum { FEEDBACK_NONE = 0, FEEDBACK_EF21, FEEDBACK_ECONTROL, FEEDBACK_EF, FEEDBACK_DGC } FeedbackKind;

typedef struct CompressionSpec {
    int present;
    int line;              /* of its header (0 when it came from --set) */
    CompressScheme scheme;
    double ratio;          /* share of entries kept, (0, 1] */
    FeedbackKind feedback;
    double eta;            /* EControl's feedback strength */
    int warm_start;        /* ef21/econtrol: the first message is the dense vector */
    int refresh;           /* DCT: steps between threshold recomputations */
    double explore;        /* Slim-DP: random share of the kept entries */
    int levels;            /* qsgd: s, the quantization levels (sim/stages/quantize.h) */
    double gamma;          /* dpsgd: consensus step of the CHOCO-style difference gossip */
    int worker_momentum;   /* sync: momentum = worker — each agent applies the [model] momentum
                            * to its own gradient before compressing (EF21-SGDM); 0 = aggregate */
    int warmup_epochs;     /* dgc: rounds of geometrically decreasing density before ratio */
    double clip;           /* dgc: global L2 clipping threshold (each agent: clip / sqrt(N)); 0 = off */
    int masking;           /* dgc: momentum factor masking (1) or not (0) */
} CompressionSpec;

/* [privacy] (sim/stages/privacy.h): differentially private FedAvg, seed 003 (Li, Jiang, Schmidt,
 * Alstrom, Stich, ICLR 2024). present = 0 or clip = none: no clipping, no noise. */
typedef enum { PRIVACY_CLIP_NONE = 0, PRIVACY_CLIP_SAMPLE, PRIVACY_CLIP_UPDATE } PrivacyClip;

typedef struct PrivacySpec {
    int present;
    int line;                /* of its header (0 when it came from --set) */
    PrivacyClip clip;
    double threshold;        /* C: L2 bound of a sample's gradient or a client's update */
    double noise_multiplier; /* sigma: Gaussian noise std = sigma x the sum's sensitivity C */
    double delta;            /* the delta of the reported (epsilon, delta) */
} PrivacySpec;

/* [drift] (sim/stages/drift.h): client drift correction of the local steps, FedProx (Li
 * et al., MLSys 2020) or SCAFFOLD (Karimireddy et al., ICML 2020). present = 0 or method =
 * none: the plain local steps. */
typedef enum { DRIFT_NONE = 0, DRIFT_FEDPROX, DRIFT_SCAFFOLD } DriftMethod;

typedef struct DriftSpec {
    int present;
    int line;              /* of its header (0 when it came from --set) */
    DriftMethod method;
    double mu;             /* fedprox: the proximal term's weight */
} DriftSpec;

/* [byzantine] (sim/stages/byzantine.h): count attackers, their attack and the aggregator. */
typedef enum { ATTACK_SIGNFLIP = 0, ATTACK_GAUSSIAN, ATTACK_ALIE, ATTACK_IPM, ATTACK_LABELFLIP } AttackKind;
typedef enum { AGGREGATOR_MEAN = 0, AGGREGATOR_MEDIAN, AGGREGATOR_TRIMMED, AGGREGATOR_KRUM,
               AGGREGATOR_CCLIP, AGGREGATOR_BETAMLE } AggregatorKind;

typedef struct ByzantineSpec {
    int present;
    int line;
    int count;             /* Byzantine agents, drawn from the seed */
    AttackKind attack;
    double scale;          /* signflip: send -scale * own vector */
    double sigma;          /* gaussian: N(0, sigma^2) per entry */
    double z;              /* ALIE: mean - z * std (default: Baruch et al.'s z_max) */
    double epsilon;        /* IPM: -epsilon * honest mean */
    AggregatorKind aggregator;
    int trim;              /* trimmed: values dropped at each end per coordinate */
    int f;                 /* krum: assumed Byzantine count */
    double tau;            /* cclip: clipping radius */
    int iters;             /* cclip: clipping iterations per step; betamle: IRLS reweightings */
    int rank;              /* betamle: subspace dimension */
    double lambda;         /* betamle: weight of the pairwise terms */
} ByzantineSpec;

/* [network] (sim/kernel/network.h): how messages share the links. model = fifo is the older
 * model (a sender's uplink sends one message at a time at min(uplink, downlink);
 * downlinks unshared); maxmin shares every link among its flows by max-min fairness. */
typedef enum { NETWORK_MAXMIN = 0, NETWORK_FIFO } NetworkModelKind;
typedef enum { UPLINK_SHARED = 0, UPLINK_FIFO } UplinkKind;
typedef enum { TCP_NONE = 0, TCP_LV08 } TcpKind;
typedef enum { LOSS_RETRANSMIT = 0, LOSS_DROP } LossMode;

typedef struct NetworkSpec {
    NetworkModelKind model;
    UplinkKind uplink;     /* maxmin: a sender's concurrent messages share its uplink, or queue */
    double backbone;       /* maxmin: bytes/s of a link every message crosses; INFINITY: none */
    TcpKind tcp;           /* lv08: SimGrid's LV08 corrections (latency x13.01, bandwidth
                            * x0.97, shares weighted by 1 / (latency + 20537 B / bandwidth)) */
    /* unstable links ([agents] loss > 0 somewhere; else reset and not written) */
    LossMode loss_mode;    /* a lost message is sent again after rto, or dropped */
    double rto;            /* s from a lost attempt's would-be arrival to its resend (drop: the notice) */
    char loss_mode_where[160]; /* "FILE:LINE" or "--set ..." of loss_mode; "" for the default */
} NetworkSpec;

/* [servers] assign: how clients are given to edge servers (sim/methods/sdfeel.c). */
typedef enum { SERVER_ASSIGN_NEAREST = 0, SERVER_ASSIGN_ROUND_ROBIN, SERVER_ASSIGN_FILE } ServerAssign;

typedef struct Scenario {
    char file[512];             /* as given on the command line */
    /* [run] */
    char name[INIDOC_NAME_MAX];
    char method[INIDOC_NAME_MAX];
    uint64_t seed;
    int rounds;
    double time_budget;         /* s of virtual time; inf when unlimited */
    double target_accuracy;     /* 0 when none */
    RunMode mode;
    int eval_every;             /* rounds between evaluations (train mode) */
    RunRecord record;           /* summary: no agent_rounds rows (the rounds rows stay) */
    int threads;                /* train mode's worker threads; 0 = the online CPUs. An execution
                                 * setting: results do not depend on it, runs.config omits it.
                                 * SCENARIO_THREADS_EAGER (tests only): nothing is queued, every
                                 * step runs when the method asks — the reference order. */
    /* [data] [model] */
    DataSpec data;
    /* where the dataset's files were named: "FILE:LINE: [data] path" (or the [data]
     * dataset key, or the file, for the default folder), "--set data.path=...": messages
     * about the files' contents start with it (issue 28, class 8) */
    char data_where[640];
    /* What the file holds that this run does not use, one "WHERE: [section] key: why" a
     * line, for the CLI to print as notes (not errors: legitimate in a sweep, e.g.
     * target_accuracy over train and timing mode), issue 28 class 7 */
    char notes[1024];
    char shards_where[160];     /* "FILE:LINE" or "--set ..." of [data] shards; "" for the default */
    int dataset_train_size, dataset_test_size;
    int dataset_writers;        /* the writers of a data set that has them (leaf), else 0 */
    ModelSpec model;
    /* [model] profile: a measured compute profile (models/layer_profile.h; "" = the FLOP
     * model). With one, agents' compute is written as a speed relative to the profiling
     * host (0.25x) and held in the Distributions as that number; world_build multiplies
     * each draw by profile_rate, the host's FLOP/s on a whole step (step FLOPs / measured
     * step seconds), so a step takes profile_times.step_s / speed, and ComDML's split
     * fractions come from profile_times. */
    char model_profile[512];
    LayerTimes profile_times;   /* n_layers = 0 without a profile */
    double profile_rate;        /* FLOP/s; 0 without a profile */
    OptimSpec optim;
    /* [method]: params[i] is the running method's row i (MethodOps.keys) as written;
     * method_keys holds the values typed, in the struct the method declares (each row's
     * offset and size), read by the method through scenario_method_keys */
    MethodParam params[SCENARIO_MAX_PARAMS];
    int n_params;
    _Alignas(max_align_t) unsigned char method_keys[SCENARIO_METHOD_KEYS_MAX];
    /* [topology] */
    int topology_line;          /* of its header; 0 when the file has none */
    TopologyKind topology;
    int degree;                 /* random-regular: each agent's; learned: the most any agent gets */
    char topology_file[512];
    char topology_weights_file[512]; /* [topology] weights = FILE.weights; "" for metropolis */
    int fw_iterations;          /* learned: Frank-Wolfe steps at most */
    double fw_lambda;           /* learned: the objective's lambda */
    /* [agents] and groups; groups[0] is [agents] itself with the agents left over */
    int n_agents;
    /* [agents] profile: a device profile (base/device_profile.h) whose row i gives agent i's
     * compute, bandwidth and, when the file has the column, latency ("" without one) */
    char agents_profile[512];
    int profile_latency;        /* 1 when the profile has a latency column */
    AgentGroupSpec groups[SCENARIO_MAX_GROUPS + 1];
    int n_groups;
    /* [server] (the parameter server of the server methods) or [servers] (count edge
     * servers, sdfeel): their attributes are groups[n_groups] (name "server"), so that a
     * server node's group index works wherever an agent's does. has_server: one of the two
     * sections is present (validated whatever the method); n_servers: server nodes the
     * run simulates — server_count when the method uses servers (METHOD_USES_SERVER),
     * else 0. */
    int has_server;
    int servers_section;        /* 1: [servers] (written back as such), 0: [server] */
    int server_count;           /* [servers] count; 1 for [server] */
    ServerAssign server_assign; /* [servers] assign */
    char server_assign_file[512]; /* SERVER_ASSIGN_FILE: absolute path of the FILE.assign */
    int n_servers;
    /* [network] [compression] [byzantine] */
    NetworkSpec network;
    CompressionSpec compression;
    ByzantineSpec byzantine;
    PrivacySpec privacy;
    DriftSpec drift;
    /* [sweep] is kept as written; sweep.c expands it */
    int has_sweep;
} Scenario;

/* Resolves doc into *sc. Errors: HS_E_INPUT with "FILE:LINE: ..." in diag. Marks the
 * entries it used. */
int scenario_resolve(IniDoc *doc, Scenario *sc, HsDiag *diag);

/* The attributes a trace can drive, in the order the engine loads them. */
enum {
    SCENARIO_TRACE_COMPUTE, SCENARIO_TRACE_UPLINK, SCENARIO_TRACE_DOWNLINK, SCENARIO_TRACE_AVAILABILITY,
    SCENARIO_TRACE_OUTAGE, SCENARIO_TRACE_CHARGING, SCENARIO_TRACE_ATTRIBUTES
};
/* Loads the trace of one attribute of groups[group] (its Distribution is a trace) over
 * the run's nodes numbered as world.c numbers them (agents, then servers); needed (one
 * byte per node) gets 1 for the group's nodes, the ones it must cover. The resolver
 * checks every trace with it and the engine loads them with it, so the two cannot
 * disagree. Errors as trace_load's (sim/trace.h). */
struct Trace;
int scenario_trace_load(const Scenario *sc, int group, int attribute, char *needed, struct Trace *out,
                        HsDiag *diag);

/* Virtual time stays finite (issue 28, class 6). One training step of [model] at a node's
 * compute (times its worst slowdown), one transfer of the whole model over its uplink or
 * downlink, and its latency may each take at most SCENARIO_SPAN_MAX seconds of virtual
 * time (about 31,700 years): a run's clock adds at most a million rounds, each of the
 * agents' steps and messages (bounded by the sample and agent counts), so it stays
 * hundreds of orders of magnitude below the ~1.8e308 where it would overflow to inf. Values beyond are refused at the key
 * (scenario_resolve for the values a key bounds, world_build for each draw). */
#define SCENARIO_SPAN_MAX 1e12
typedef enum { SCENARIO_SPAN_COMPUTE, SCENARIO_SPAN_LINK, SCENARIO_SPAN_LATENCY } ScenarioSpanKind;
typedef struct ScenarioSpans {
    double step_flops;   /* of one training step of [model] (model_profile_step_flops) */
    double model_bytes;  /* of the whole model */
    int batch;
    double compute_scale; /* FLOP/s per unit of a compute value: [model] profile's host rate, else 1 */
} ScenarioSpans;
/* From the resolved [model]; every figure 0 (nothing is checked) when it has no profile. */
void scenario_spans(const Scenario *sc, ScenarioSpans *out);
/* The worst duration multiplier of a slowdown: markov's factor, periodic's 1 + amplitude. */
double scenario_slowdown_worst(const Slowdown *s);
/* Whether value (FLOP/s for compute, bytes/s for a link, s for latency; factor the worst
 * slowdown for compute, else 1) keeps its span within SCENARIO_SPAN_MAX: HS_OK, or
 * HS_E_INPUT with the reason in why (no location). */
int scenario_span_check(const ScenarioSpans *spans, ScenarioSpanKind kind, double value, double factor, char *why,
                        size_t size);

/* `--add-group NAME`: adds an empty group [agents.NAME] to doc, which --set may then
 * fill (an override may change only what the file defines; a group is the one thing it
 * would otherwise invent, issue 28 class 2). HS_E_INPUT for a bad name or a group the
 * document has already. */
int scenario_add_group(IniDoc *doc, const char *name, HsDiag *diag);

/* Loads path, applies the --set overrides in order and resolves. */
int scenario_load(const char *path, const char *const *overrides, int n_overrides,
                  Scenario *sc, HsDiag *diag);

/* Writes the fully resolved scenario as INI that scenario_resolve reads back to the
 * same Scenario (runs.config). */
void scenario_write_config(const Scenario *sc, FILE *out);
/* Same into a malloc'd string; NULL when out of memory. Caller frees. */
char *scenario_config_string(const Scenario *sc);

/* 1 when sc turns feature f on (sim/scenario/features.h; prune and freeze are keys of
 * the running method). */
int scenario_feature_on(const Scenario *sc, Feature f);

/* Per-agent batch sizes ([agents] batch, [agents.NAME] batch): SCENARIO_BATCH_MODEL when
 * every agent's batch is [model] batch (no group with agents sets another), SCENARIO_BATCH_EQUAL
 * when every agent's is one other constant, SCENARIO_BATCH_UNEQUAL when they may differ
 * (two constants, or a distribution). *group (may be NULL) is the first group with agents
 * whose batch is not [model] batch, -1 when none: where a refusal points. */
enum { SCENARIO_BATCH_MODEL = 0, SCENARIO_BATCH_EQUAL = 1, SCENARIO_BATCH_UNEQUAL = 2 };
int scenario_batches(const Scenario *sc, int *group);
/* An input error at that group's batch key: "WHERE: [agents] batch: method M: why"
 * (WHERE is FILE:LINE, or "--set ...: why"). Returns HS_E_INPUT. */
int scenario_batch_error(const Scenario *sc, int group, HsDiag *diag, const char *why);

/* The running method's [method] keys, typed: a pointer to the struct it declares
 * (`const SyncKeys *keys = scenario_method_keys(sc);`), every field landed by its row. */
static inline const void *scenario_method_keys(const Scenario *sc)
{
    return sc->method_keys;
}
/* How the [method] key whose field is `field` (inside scenario_method_keys(sc)) was
 * written. A field that no row of the running method lands in is a bug, and aborts. */
const MethodParam *scenario_key_written(const Scenario *sc, const void *field);
/* An input error about that key: "WHERE: [method] KEY: message" (WHERE is the scenario
 * file for a default; "--set ...: message" for an override). Returns HS_E_INPUT. */
int scenario_key_error(const Scenario *sc, const void *field, HsDiag *diag, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* `limits` hooks of [method] rows whose range depends on other sections (issue 28 class
 * 1: a value the code would otherwise clamp is refused where it was written; checked once
 * [agents] and [model] are resolved, scenario_limits.c): at most the agent count, at most
 * the other agents (n - 1), at most the model's parameters, and a share of the agents that
 * rounds to at least one agent (round(share x n) >= 1). */
void scenario_limit_agents(const Scenario *sc, double *min, double *max);
void scenario_limit_other_agents(const Scenario *sc, double *min, double *max);
void scenario_limit_params(const Scenario *sc, double *min, double *max);
void scenario_limit_share_of_agents(const Scenario *sc, double *min, double *max);
/* Every row of the running method with SCHEMA_WITHIN_ROUND (local steps: `epoch` passes)
 * against the steps of a round, known once the agents' samples are drawn (world_build). */
int scenario_check_round_keys(const Scenario *sc, int round_steps, HsDiag *diag);

/* The scenario's [topology] graph over n nodes (topology_build_kind with its kind,
 * degree, edges file and seed): errors name the scenario's [topology], or the edges file
 * and line; a disconnected graph is an error. */
static inline int scenario_topology(const Scenario *sc, int n, Topology *out, HsDiag *diag)
{
    const char *where = sc->topology == TOPO_FILE ? sc->topology_file : sc->file;
    return topology_build_kind(sc->topology, n, sc->degree, where, sc->seed, out, diag);
}

#endif
