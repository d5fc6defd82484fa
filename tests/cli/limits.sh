#!/usr/bin/env bash
# Issue 28, classes 1 and 7 (docs/limits.md): a value the resolver accepted is never
# clamped later (each input below used to run `done` with another value than runs.config
# says), and contradictions are refused or noted. Each refused input exits 2 naming the
# file and line (or the --set), and writes no database; values at the limits run, and
# their runs.config runs again to the same rows.
. "$(dirname "$0")/lib.bash"

q=scenarios/quickstart.ini
fl="$tmp/fl.ini" # quickstart with a server, for fedavg
{ cat $q; printf '[server]\ncompute = 10 GFLOPS\nbandwidth = 1 Gbit/s\n'; } > "$fl"

# class 1: limits that depend on other sections ([method] rows' `limits` hooks)
{ cat $q; printf '[method.ripples]\ngroup_size = 17\n'; } > "$tmp/ripples.ini"
refused "ripples group_size above the agents" "ripples.ini:41: [method] group_size: 17 must be in [2, agents], here [2, 16]" \
  run "$tmp/ripples.ini" --timing-only --set run.method=ripples
refused "ripples' default group_size above the agents" \
  "quickstart.ini: [method] group_size: 3 must be in [2, agents], here [2, 2] (the default: set it)" \
  run $q --timing-only --set run.method=ripples --set agents.count=2 --set agents.stragglers.count=0
refused "divshare degree = the agents" "--set method.degree=16: 16 must be in [1, agents - 1], here [1, 15]" \
  run $q --timing-only --set run.method=divshare --set method.degree=16
refused "divshare fragments above the parameters" \
  "--set method.fragments=8000: 8000 must be in [1, 65536], at most the model's parameters, here [1, 7850]" \
  run $q --timing-only --set run.method=divshare --set model.layers=784,10 --set method.fragments=8000
refused "fedavg participation that rounds to no client" \
  "--set method.participation=0.03: 0.03 must be in (0, 1], at least 0.5 / agents, here [0.03125, 1]" \
  run "$fl" --timing-only --set run.method=fedavg --set method.participation=0.03
refused "fedavg overcommit beyond every agent" "--set method.overcommit=0.1: 0.1 must be in [0, 100], at most agents / K - 1" \
  run "$fl" --timing-only --set run.method=fedavg --set method.overcommit=0.1
{ cat $q; printf '[sweep]\nmethod.group_size = 3, 17\n'; } > "$tmp/sweep.ini"
refused "a swept group_size above the agents" "[method] group_size: 17 must be in [2, agents]" \
  sweep "$tmp/sweep.ini" --timing-only --set run.method=ripples
sed 's/^compute = 200 MFLOPS$/compute = 200 MFLOPS\nsamples = uniform(0.1, 0.4)/' $q > "$tmp/samples.ini"
refused "samples drawn that round to 0" \
  "samples.ini:40: [agents.stragglers] samples: agent 12 drew 0.3" run "$tmp/samples.ini" --timing-only
refused "samples drawn beyond the limit, at the key" \
  "--set agents.samples=pareto(1000000, 0.05): agent 1 drew 6.13652e+16 samples, more than an agent may hold" run $q --timing-only --set "agents.samples=pareto(1000000, 0.05)"

# class 1: local steps that a round must hold (60000 samples / 16 agents / batch 64: 59 steps)
sed 's/^local_steps = epoch$/local_steps = 235/' $q > "$tmp/steps.ini"
refused "localsgd local_steps beyond a round" \
  "steps.ini:29: [method] local_steps: 235 local steps, but a round holds 59" run "$tmp/steps.ini" --timing-only --set run.method=localsgd
refused "co2's default period beyond a round" "quickstart.ini: [method] period: 4 local steps, but a round holds 1" \
  run $q --timing-only --set run.method=co2 --set model.batch=4096
refused "qsr H_base beyond a round" "--set method.H_base=60: 60 local steps, but a round holds 59" \
  run $q --timing-only --set run.method=qsr --set method.H_base=60

# class 7: contradictions
refused "uniform(x, inf)" "--set agents.bandwidth=uniform(1 Mbit/s, inf): uniform() with an infinite argument" \
  run $q --timing-only --set "agents.bandwidth=uniform(1 Mbit/s, inf)"
refused "lognormal(inf, s)" "lognormal() with an infinite argument" \
  run $q --timing-only --set "agents.uplink=lognormal(inf, 0.5)"
sed 's/^layers = 784,256,128,10$/layers = 784,10/' $q > "$tmp/oneblock.ini"
refused "ComDML on a model with no split point" \
  "oneblock.ini:18: [model] layers: method comdml splits the model between agents, but this one is a single block" \
  run "$tmp/oneblock.ini" --timing-only
printf '[run]\nmethod = localsgd\nrounds = 1\n[data]\ndataset = synthetic\ntrain_samples = 400\nfeatures = 8\nclasses = 4\npartition = shards\nshards = 60\n[model]\narch = mlp\nlayers = 8,4\n[agents]\ncount = 8\ncompute = 1 GFLOPS\nbandwidth = 1 Gbit/s\n' > "$tmp/shards.ini"
refused "more shards than an agent's samples" \
  "shards.ini:10: [data] shards: 60 shards per agent, but agent 0 holds 50 samples" run "$tmp/shards.ini"
rm -f "$tmp/out.db"
"$HETSIM" run "$tmp/shards.ini" --set data.shards=50 --db "$tmp/out.db" --quiet > /dev/null 2> "$tmp/err"
check "as many shards as samples runs" test $? -eq 0
rm -f "$tmp/out.db"
"$HETSIM" run $q --timing-only --set run.rounds=1 --set run.target_accuracy=0.9 --db "$tmp/out.db" > /dev/null 2> "$tmp/err"
check "target_accuracy in timing mode runs" test $? -eq 0
check "target_accuracy in timing mode is noted" grep -qF \
  "hetsim: note: --set run.target_accuracy=0.9: has no effect in timing mode (no accuracy is evaluated)" "$tmp/err"

# the values at the limits run as written, and their runs.config gives the same rows
at_limit() { # name, run arguments...
  local name=$1; shift
  rm -f "$tmp/a.db" "$tmp/b.db"
  "$HETSIM" run "$fl" --timing-only --set run.rounds=2 "$@" --db "$tmp/a.db" --quiet > /dev/null 2> "$tmp/err"
  check "$name runs" test $? -eq 0
  q "$tmp/a.db" "select config from runs" > "$tmp/config.ini"
  "$HETSIM" run "$tmp/config.ini" --db "$tmp/b.db" --quiet > /dev/null 2> "$tmp/err"
  check "$name: runs.config runs again" test $? -eq 0
  check "$name: runs.config gives the same rows" test "$(dump_rows "$tmp/a.db" r.seed)" = "$(dump_rows "$tmp/b.db" r.seed)"
}
at_limit "ripples group_size = the agents" --set run.method=ripples --set method.group_size=16
at_limit "divshare degree = agents - 1" --set run.method=divshare --set method.degree=15
at_limit "fedavg participation at 0.5 / agents" --set run.method=fedavg --set method.participation=0.03125
at_limit "localsgd local_steps = a round" --set run.method=localsgd --set method.local_steps=59
at_limit "fedavg overcommit to every agent" --set run.method=fedavg --set method.participation=0.5 --set method.overcommit=1
finish limits.sh
