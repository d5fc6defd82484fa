/* scenario_config.c — the resolved scenario written back as INI (runs.config).
 * Numbers are written in SI with 17 significant digits so that reading the text back
 * resolves to the same bits; the round trip is tested. */
#include "sim/scenario/scenario.h"
#include "sim/scenario/method_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const config_optimizers[] = {"sgd", "momentum", "adam", "adamw"};
static const char *const config_schedules[] = {"constant", "step", "cosine"};
static const char *const config_partitions[] = {"iid", "dirichlet", "shards", "domains"};
static const char *const config_graphs[] = {"full", "ring", "torus", "random-regular", "exponential"};
static const char *const config_schemes[] = {"none", "topk", "randk", "dct", "slimdp"};
static const char *const config_feedbacks[] = {"none", "ef21", "econtrol", "ef", "dgc"};
static const char *const config_attacks[] = {"signflip", "gaussian", "alie", "ipm", "labelflip"};
static const char *const config_aggregators[] = {"mean", "median", "trimmed", "krum", "cclip", "betamle"};

/* Only the keys the resolved scheme, attack and aggregator use (the resolver resets the
 * others to their defaults), so the text reads back to the same Scenario. */
static void config_write_compression(const Scenario *sc, FILE *out)
{
    const CompressionSpec *c = &sc->compression;
    fprintf(out, "\n[compression]\nscheme = %s\n", config_schemes[c->scheme]);
    if (c->scheme == COMPRESS_NONE) return;
    fprintf(out, "ratio = %.17g\nfeedback = %s\n", c->ratio, config_feedbacks[c->feedback]);
    if (c->feedback == FEEDBACK_ECONTROL) fprintf(out, "eta = %.17g\n", c->eta);
    if (c->feedback != FEEDBACK_NONE) fprintf(out, "warm_start = %d\n", c->warm_start);
    if (c->scheme == COMPRESS_DCT) fprintf(out, "refresh = %d\n", c->refresh);
    if (c->scheme == COMPRESS_SLIMDP) fprintf(out, "explore = %.17g\n", c->explore);
    if (method_lookup(sc->method)->capabilities & METHOD_GOSSIPS_DIFFERENCES) fprintf(out, "gamma = %.17g\n", c->gamma);
    if (c->worker_momentum) fputs("momentum = worker\n", out);
    if (c->feedback == FEEDBACK_DGC)
        fprintf(out, "warmup_epochs = %d\nclip = %.17g\nmasking = %d\n", c->warmup_epochs, c->clip, c->masking);
}

static void config_write_byzantine(const ByzantineSpec *b, FILE *out)
{
    fprintf(out, "\n[byzantine]\ncount = %d\nattack = %s\n", b->count, config_attacks[b->attack]);
    if (b->attack == ATTACK_SIGNFLIP) fprintf(out, "scale = %.17g\n", b->scale);
    if (b->attack == ATTACK_GAUSSIAN) fprintf(out, "sigma = %.17g\n", b->sigma);
    if (b->attack == ATTACK_ALIE) fprintf(out, "z = %.17g\n", b->z);
    if (b->attack == ATTACK_IPM) fprintf(out, "epsilon = %.17g\n", b->epsilon);
    fprintf(out, "aggregator = %s\n", config_aggregators[b->aggregator]);
    if (b->aggregator == AGGREGATOR_TRIMMED) fprintf(out, "trim = %d\n", b->trim);
    if (b->aggregator == AGGREGATOR_KRUM) fprintf(out, "f = %d\n", b->f);
    if (b->aggregator == AGGREGATOR_CCLIP) fprintf(out, "tau = %.17g\niters = %d\n", b->tau, b->iters);
    if (b->aggregator == AGGREGATOR_BETAMLE)
        fprintf(out, "rank = %d\nlambda = %.17g\niters = %d\n", b->rank, b->lambda, b->iters);
}

static void config_write_group(const AgentGroupSpec *g, int write_samples, FILE *out)
{
    fputs("compute = ", out);
    distribution_write(&g->compute, out);
    if (g->symmetric_link) {
        fputs("\nbandwidth = ", out);
        distribution_write(&g->uplink, out);
    } else {
        fputs("\nuplink = ", out);
        distribution_write(&g->uplink, out);
        fputs("\ndownlink = ", out);
        distribution_write(&g->downlink, out);
    }
    fputs("\nlatency = ", out);
    distribution_write(&g->latency, out);
    char slowdown[160];
    slowdown_format(&g->slowdown, slowdown, sizeof slowdown);
    fprintf(out, "\nslowdown = %s\njitter = %.17g\n", slowdown, g->jitter);
    if (g->availability.kind == DIST_TRACE) fprintf(out, "availability = trace(%s)\n", g->availability.path);
    else fputs("availability = always\n", out);
    if (write_samples) {
        fputs("samples = ", out);
        distribution_write(&g->samples, out);
        fputc('\n', out);
    }
}

void scenario_write_config(const Scenario *sc, FILE *out)
{
    fprintf(out, "[run]\nname = %s\nmethod = %s\nseed = %llu\n", sc->name, sc->method,
            (unsigned long long)sc->seed);
    if (sc->rounds > 0) fprintf(out, "rounds = %d\n", sc->rounds);
    if (isfinite(sc->time_budget)) fprintf(out, "time_budget = %.17g\n", sc->time_budget);
    fprintf(out, "target_accuracy = %.17g\nmode = %s\neval_every = %d\n",
            sc->target_accuracy, sc->mode == RUN_MODE_TRAIN ? "train" : "timing", sc->eval_every);
    /* a CNN's always (auto depends on the build: the config says what ran, so that it
     * runs the same elsewhere); an MLP's or a ResNet's only when not auto's openblas, so
     * that their configs (and sweep ids) are unchanged */
    if (sc->model.arch == MODEL_ARCH_CNN || sc->model.kernels == MODEL_KERNELS_ONEDNN)
        fprintf(out, "kernels = %s\n", sc->model.kernels == MODEL_KERNELS_ONEDNN ? "onednn" : "openblas");

    const DataSpec *d = &sc->data;
    fprintf(out, "\n[data]\ndataset = %s\n", d->dataset == DATA_FASHION_MNIST ? "fashion-mnist" : "synthetic");
    if (d->dataset == DATA_FASHION_MNIST) fprintf(out, "path = %s\n", d->path);
    fprintf(out, "partition = %s\nalpha = %.17g\nshards = %d\ntest_samples = %d\n",
            config_partitions[d->partition], d->alpha, d->shards_per_agent, d->test_samples);
    if (d->partition == PART_DOMAINS) {
        /* only for domains, so that every other run's config (and sweep id) is unchanged */
        fputs("domains = ", out);
        for (int k = 0; k < d->n_domains; k++) fprintf(out, "%s%.17g", k ? "," : "", d->domain_degrees[k]);
        fputs("\ntest_domains = ", out);
        for (int k = 0, n = 0; k < d->n_domains; k++)
            if (d->held_out[k]) fprintf(out, "%s%.17g", n++ ? "," : "", d->domain_degrees[k]);
        fprintf(out, "\nlambda = %.17g\n", d->lambda);
    }
    if (d->dataset == DATA_SYNTHETIC)
        fprintf(out, "features = %d\nclasses = %d\ntrain_samples = %d\nseparation = %.17g\n",
                d->features, d->classes, d->train_samples, d->separation);
    if (d->dataset == DATA_SYNTHETIC && d->channels > 0)
        fprintf(out, "channels = %d\nheight = %d\nwidth = %d\n", d->channels, d->height, d->width);

    const ModelSpec *m = &sc->model;
    fprintf(out, "\n[model]\narch = %s\n", m->arch == MODEL_ARCH_MLP ? "mlp" : m->arch == MODEL_ARCH_CNN ? "cnn" : "resnet");
    if (m->arch == MODEL_ARCH_RESNET) {
        fprintf(out, "depth = %d\nwidth = %d\n", m->depth, m->base_channels / 16);
    } else if (m->arch == MODEL_ARCH_MLP) {
        fputs("layers = ", out);
        for (int i = 0; i < m->n_sizes; i++) fprintf(out, "%s%d", i ? "," : "", m->sizes[i]);
        fputc('\n', out);
    } else {
        fprintf(out, "channels = %d,%d\nkernel = %d\nhidden = %d\n", m->conv_channels[0],
                m->conv_channels[1], m->kernel, m->hidden);
    }
    const OptimSpec *o = &sc->optim;
    fprintf(out,
            "batch = %d\noptimizer = %s\nlr = %.17g\nmomentum = %.17g\nnesterov = %d\n"
            "weight_decay = %.17g\nbeta1 = %.17g\nbeta2 = %.17g\neps = %.17g\nschedule = %s\n"
            "step_gamma = %.17g\nstep_every = %d\nwarmup = %d\n",
            m->batch, config_optimizers[o->kind], o->lr, o->momentum, o->nesterov, o->weight_decay,
            o->beta1, o->beta2, o->eps, config_schedules[o->schedule], o->step_gamma, o->step_every,
            o->warmup_rounds);

    if (sc->n_params > 0) {
        fputs("\n[method]\n", out);
        for (int i = 0; i < sc->n_params; i++) fprintf(out, "%s = %s\n", sc->params[i].key, sc->params[i].value);
    }

    fprintf(out, "\n[topology]\ngraph = %s\ndegree = %d\n",
            sc->topology == TOPO_FILE ? sc->topology_file : config_graphs[sc->topology], sc->degree);

    const AgentGroupSpec *base = &sc->groups[0];
    fprintf(out, "\n[agents]\ncount = %d\n", sc->n_agents);
    config_write_group(base, base->has_samples, out);
    for (int g = 1; g < sc->n_groups; g++) {
        fprintf(out, "\n[agents.%s]\ncount = %d\n", sc->groups[g].name, sc->groups[g].count);
        config_write_group(&sc->groups[g], sc->groups[g].has_samples, out);
    }
    if (sc->has_server) {
        if (sc->servers_section)
            fprintf(out, "\n[servers]\ncount = %d\nassign = %s\n", sc->server_count,
                    sc->server_assign == SERVER_ASSIGN_FILE      ? sc->server_assign_file
                    : sc->server_assign == SERVER_ASSIGN_NEAREST ? "nearest"
                                                                 : "round-robin");
        else
            fputs("\n[server]\n", out);
        config_write_group(&sc->groups[sc->n_groups], 0, out);
    }
    const NetworkSpec *net = &sc->network;
    fprintf(out, "\n[network]\nmodel = %s\n", net->model == NETWORK_FIFO ? "fifo" : "maxmin");
    if (net->model == NETWORK_MAXMIN) {
        fprintf(out, "uplink = %s\n", net->uplink == UPLINK_FIFO ? "fifo" : "shared");
        if (isfinite(net->backbone)) fprintf(out, "backbone = %.17g B/s\n", net->backbone);
        else fputs("backbone = inf\n", out);
    }
    fprintf(out, "tcp = %s\n", net->tcp == TCP_LV08 ? "lv08" : "none");
    if (sc->compression.present) config_write_compression(sc, out);
    if (sc->byzantine.present) config_write_byzantine(&sc->byzantine, out);
    if (sc->privacy.present) {
        static const char *const clips[] = {"none", "sample", "update"};
        const PrivacySpec *p = &sc->privacy;
        fprintf(out, "\n[privacy]\nclip = %s\n", clips[p->clip]);
        if (p->clip != PRIVACY_CLIP_NONE)
            fprintf(out, "threshold = %.17g\nnoise_multiplier = %.17g\ndelta = %.17g\n", p->threshold,
                    p->noise_multiplier, p->delta);
    }
}

char *scenario_config_string(const Scenario *sc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) return NULL;
    scenario_write_config(sc, f);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
