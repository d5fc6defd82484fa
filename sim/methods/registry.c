/* registry.c — the list of methods a scenario can name in [run] method. */
#include "sim/methods/method.h"

#include <string.h>

extern const MethodOps method_sync;
extern const MethodOps method_localsgd;
extern const MethodOps method_qsr;
extern const MethodOps method_dpsgd;
extern const MethodOps method_adpsgd;
extern const MethodOps method_co2;
extern const MethodOps method_comdml;
extern const MethodOps method_byzsgdnm;
extern const MethodOps method_token;
extern const MethodOps method_ripples;
extern const MethodOps method_divshare;
extern const MethodOps method_swift;
extern const MethodOps method_lsgd;
extern const MethodOps method_eager;
extern const MethodOps method_rog;
extern const MethodOps method_motor;
/* servers (sim/methods/asgd.c, fl.c, sdfeel.c) */
extern const MethodOps method_fedavg;
extern const MethodOps method_fedbuff;
extern const MethodOps method_asgd;
extern const MethodOps method_rennala;
extern const MethodOps method_ringmaster;
extern const MethodOps method_sdfeel;

static const MethodOps *const method_registry[] = {
    &method_sync,
    &method_localsgd,
    &method_qsr,
    &method_dpsgd,
    &method_adpsgd,
    &method_co2,
    &method_comdml,
    &method_byzsgdnm,
    &method_token,
    &method_ripples,
    &method_divshare,
    &method_swift,
    &method_lsgd,
    &method_eager,
    &method_rog,
    &method_motor,
    &method_fedavg,
    &method_fedbuff,
    &method_asgd,
    &method_rennala,
    &method_ringmaster,
    &method_sdfeel,
    NULL,
};

static const MethodCapability method_capability_list[] = {
    {METHOD_USES_TOPOLOGY, "[topology]: it reads the graph (who talks to whom)"},
    {METHOD_USES_SERVER, "[server]: needs a parameter server (or [servers] with count = 1)"},
    {METHOD_EDGE_SERVERS, "[servers]: edge servers (count), [topology] a graph over the servers"},
    {METHOD_ACCUMULATES, "[compression] feedback = ef and dgc"},
    {METHOD_GOSSIPS_DIFFERENCES, "[compression] gamma: compresses differences to what the neighbours hold (CHOCO)"},
    {METHOD_SENDS_DIFFERENCES, "[compression] feedback = none: compresses differences to the copy each receiver holds"},
    {METHOD_WORKER_MOMENTUM, "[compression] momentum = worker"},
    {METHOD_SPLITS_MODEL, "[model]: splits it between agents (it needs two blocks or more)"},
    {METHOD_LOSSY_LINKS, "[agents] loss: its point-to-point messages may be lost and sent again"},
    {METHOD_DROPS_LOST, "[network] loss_mode = drop: it goes on with the messages that arrived"},
    {METHOD_LOSSY_RINGS, "[agents] loss: its ring all-reduces' chunks may be lost and sent again (retransmit)"},
    {METHOD_MIXES_WEIGHTS, "[topology] weights = FILE and graph = learned: mixes with the weights W_ij"},
    {METHOD_SENDS_ROWS, "[model]: sends rows of its layers (arch = mlp or cnn)"},
    {0, NULL},
};

const MethodCapability *method_capabilities(void)
{
    return method_capability_list;
}

const MethodOps *const *method_all(void)
{
    return method_registry;
}

const MethodOps *method_lookup(const char *name)
{
    for (const MethodOps *const *m = method_registry; *m; m++)
        if (strcmp((*m)->name, name) == 0) return *m;
    return NULL;
}
