/* test_variants.c — the list test_variants.h describes. */
#include "tests/test_variants.h"

const char *const test_variants[][TEST_VARIANT_SETS] = {
    {"run.method=sync", "compression.scheme=topk", "compression.feedback=ef21"},
    {"run.method=localsgd", "compression.scheme=topk", "compression.feedback=ef21"},
    {"run.method=dpsgd", "compression.scheme=topk", "compression.ratio=0.3"},
    {"run.method=sync", "byzantine.count=2", "byzantine.aggregator=median"},
    {"run.method=byzsgdnm", "byzantine.count=2", "byzantine.attack=labelflip"},
    {"run.method=token", "method.tokens=3", "method.walk=metropolis"},
    {"run.method=comdml", "method.solver=greedy", "method.rebalance=2"},
    {"run.method=localsgd", "method.local_steps=3", "method.participation=0.5"},
    {"run.method=fedavg", "method.participation=0.5", "method.overcommit=0.5"},
    {"run.method=fedbuff", "method.concurrency=3", "method.buffer=2"},
    {"run.method=localsgd", "method.prune=width", "method.prune_target=makespan"},
    {"run.method=sync", "method.prune=width", "method.prune_min=0.25"},
    {"run.method=dpsgd", "method.prune=width", "method.prune_target=0.5"},
    {"run.method=localsgd", "method.freeze=progressive", "method.freeze_rounds=1"},
    {"run.method=localsgd", "privacy.clip=sample", "privacy.noise_multiplier=1"},
    {"run.method=localsgd", "privacy.clip=update", "privacy.noise_multiplier=1"},
    {"run.method=fedavg", "privacy.clip=sample", "privacy.noise_multiplier=1"},
    {"run.method=sdfeel", "servers.count=3", "method.intra_rounds=1"},
    {"run.method=sdfeel", "servers.count=3", "method.deadline=auto"},
    {"run.method=sync", "method.deadline=2 ms", "agents.slow.count=3"},
    /* features on the methods that took them as stages (issue 27) */
    {"run.method=dpsgd", "method.freeze=progressive", "method.freeze_rounds=1"},
    {"run.method=dpsgd", "privacy.clip=sample", "privacy.noise_multiplier=1"},
    {"run.method=comdml", "privacy.clip=update", "privacy.noise_multiplier=1"},
    {"run.method=comdml", "method.prune=width", "method.prune_target=0.5"},
    {"run.method=fedbuff", "method.prune=width", "method.prune_target=0.5"},
    {"run.method=divshare", "method.prune=width", "method.prune_target=0.5"},
    {"run.method=co2", "method.freeze=progressive", "method.freeze_rounds=1"},
    {"run.method=swift", "compression.scheme=topk", "compression.feedback=none"},
    {"run.method=dpsgd", "byzantine.count=2", "byzantine.aggregator=median"},
    {"run.method=fedavg", "compression.scheme=topk", "compression.feedback=ef21"},
    /* [drift]: the corrected steps read the anchors and control variates every rank holds */
    {"run.method=fedavg", "drift.method=scaffold", "method.participation=0.5"},
    {"run.method=localsgd", "drift.method=scaffold", "method.local_steps=3"},
    {"run.method=fedavg", "drift.method=fedprox", "drift.mu=0.5"},
    {"run.method=lsgd", "method.leaders=groups", "method.global_every=2"},
};

const size_t test_variants_n = sizeof test_variants / sizeof *test_variants;
