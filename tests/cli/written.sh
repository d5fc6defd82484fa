#!/usr/bin/env bash
# Issue 28: what runs is what was written. Each input below used to run (exit 0, a `done`
# run that is not what the scenario says); each now exits 2 naming the file and line (or
# the option) and writes no database.
. "$(dirname "$0")/lib.bash"

q=scenarios/quickstart.ini

# class 4: syntax libinih accepts but a scenario does not mean
sed 's/^\[agents.stragglers\]$/[agents.stragglers] count = 5/' $q > "$tmp/header.ini"
refused "text after a section header" "header.ini:37: text after the section header [agents.stragglers]: 'count = 5'" \
  run "$tmp/header.ini" --timing-only
printf '\n[agents.stragglers]\nlatency = 1 ms\n' | cat $q - > "$tmp/twice.ini"
refused "a section given twice" "twice.ini:41: [agents.stragglers] is given twice (first at line 37)" \
  run "$tmp/twice.ini" --timing-only
sed 's/^rounds = 5$/rounds: 5/' $q > "$tmp/colon.ini"
refused "KEY: VALUE" "colon.ini:9: 'rounds:' — a key and its value are separated by '='" run "$tmp/colon.ini" --timing-only
sed 's/^seed = 1$/seed = 1\n  rounds = 2/' $q > "$tmp/indented.ini"
refused "an indented KEY = VALUE after a key" "indented.ini:9: an indented line continues the value of 'seed'" \
  run "$tmp/indented.ini" --timing-only

# class 3: control characters never reach a value (or runs.config)
refused "a line break in --set run.name" "'run.name=a\n[agents]\ncount = 3' holds a line break" \
  run $q --timing-only --set "run.name=a
[agents]
count = 3"
refused "a tab in --set run.name" "--set run.name=a	b: holds a tab" run $q --timing-only --set "run.name=a	b"
refused "an escape in --set" "holds an escape character" run $q --timing-only --set $'run.name=\e[31mred'
sed 's/^name = quickstart$/name = quick\rstart/' $q > "$tmp/cr.ini"
refused "a carriage return in a value" "cr.ini:6: holds a carriage return (0x0d)" run "$tmp/cr.ini" --timing-only

# class 2: --set and [sweep] change what the file defines; --add-group adds a group
refused "--set on a misspelt group" \
  "--set agents.stragglrs.count=2: the scenario defines no group [agents.stragglrs] (did you mean 'agents.stragglers'?)" \
  run $q --timing-only --set agents.stragglrs.count=2
{ cat $q; printf '[sweep]\nagents.stragglrs.count = 1, 2\n'; } > "$tmp/sweep.ini"
refused "a sweep key on a misspelt group" "sweep.ini:41: [sweep] agents.stragglrs.count: the scenario defines no group" \
  sweep "$tmp/sweep.ini" --timing-only
rm -f "$tmp/add.db"
"$HETSIM" run $q --timing-only --quiet --db "$tmp/add.db" --set run.rounds=1 --add-group fast \
  --set agents.fast.count=2 --set "agents.fast.compute=20 GFLOPS" 2> "$tmp/err"
check "--add-group adds a group" test "$(q "$tmp/add.db" "select group_concat(grp || '=' || n) from
  (select grp, count(*) n from agents group by grp order by grp)")" = "default=10,fast=2,stragglers=4"
check "--add-group's group is in runs.config" sh -c "sqlite3 '$tmp/add.db' 'select config from runs' | grep -q '^\[agents.fast\]$'"
# provenance: runs.overrides records the group added, in the order applied, so the
# recorded command and overrides say how the run differs from runs.scenario_text
check "runs.overrides records --add-group, then the --set values" test "$(q "$tmp/add.db" "select overrides from runs")" = \
  "$(printf -- '--add-group fast\nrun.mode=timing\nrun.rounds=1\nagents.fast.count=2\nagents.fast.compute=20 GFLOPS')"
check "runs.scenario_text is the file as read" test "$(q "$tmp/add.db" "select scenario_text from runs")" = "$(cat $q)"
rm -f "$tmp/add.db"
"$HETSIM" sweep $q --timing-only --quiet --db "$tmp/add.db" --set run.rounds=1 --add-group fast \
  --set agents.fast.count=2 2> "$tmp/err"
check "a sweep's runs.overrides records --add-group too" test "$(q "$tmp/add.db" "select overrides from runs")" = \
  "$(printf -- '--add-group fast\nrun.mode=timing\nrun.rounds=1\nagents.fast.count=2')"
refused "--add-group of a group the file has" "quickstart.ini:37 defines [agents.stragglers] already" \
  run $q --timing-only --add-group stragglers
"$HETSIM" run --help > "$tmp/help"; check "run --help documents --add-group" grep -q -- '--add-group NAME' "$tmp/help"
"$HETSIM" sweep --help > "$tmp/help"; check "sweep --help documents --add-group" grep -q -- '--add-group NAME' "$tmp/help"
# class 8: an input error names FILE:LINE of the key that caused it
sed 's/^dataset = fashion-mnist$/dataset = synthetic\nclasses = 300/' $q > "$tmp/classes.ini"
refused "synthetic classes beyond what labels hold" "classes.ini:14: [data] classes: expected a whole number in [2, 256]" \
  run "$tmp/classes.ini" --set model.layers=32,64,300
printf '[run]\nmethod = localsgd\nrounds = 1\n[data]\ndataset = synthetic\nchannels = 1\nheight = 3\nwidth = 3\n[model]\narch = cnn\n[agents]\ncount = 2\ncompute = 1 GFLOPS\nbandwidth = 1 Gbit/s\n' > "$tmp/small.ini"
refused "an image too small for a CNN" "small.ini:7: [data] height: 3x3 images are too small for arch = cnn ($tmp/small.ini:10)" \
  run "$tmp/small.ini"
sed '/^channels/d; /^height/d; /^width/d' "$tmp/small.ini" > "$tmp/flat.ini"
refused "a CNN on flat features" "flat.ini:7: [model] arch: cnn needs image data" run "$tmp/flat.ini"
refused "a domains partition that leaves an agent no rows" \
  "--set data.lambda=0: partition = domains deals agent 15000 no rows (70000 agents share 4 training domains" \
  run $q --timing-only --set run.method=localsgd --set data.partition=domains --set "data.domains=0,15,30,45" \
  --set data.lambda=0 --set agents.count=70000 --set agents.stragglers.count=0

# class 6: values that would overflow virtual time are refused at their key, before any
# database (they ran `done` with 1e307 s rounds, or failed mid-run blaming an
# "availability trace" the scenario does not have)
sed 's/^compute = 200 MFLOPS$/compute = 1e-300 FLOPS/' $q > "$tmp/slow.ini"
for cmd in run sweep; do
  refused "$cmd: a compute that overflows a step" \
    "slow.ini:39: [agents.stragglers] compute: 1e-300 FLOP/s makes one training step of [model]" \
    $cmd "$tmp/slow.ini" --timing-only
done
refused "a bandwidth that overflows a message" "--set agents.bandwidth=1e-300 bit/s: 1.25e-301 bytes/s makes one transfer" \
  run $q --timing-only --set "agents.bandwidth=1e-300 bit/s"
refused "a latency beyond the limit" "--set agents.latency=1e300 s: a latency of 1e+300 s is more than the 1e+12 s" \
  run $q --timing-only --set "agents.latency=1e300 s"
refused "a slowdown that overflows a step" "--set agents.stragglers.slowdown=markov(0.5, 0.5, 1e300): 2e+08 FLOP/s, slowed down" \
  run $q --timing-only --set "agents.stragglers.slowdown=markov(0.5, 0.5, 1e300)"
refused "a uniform whose low end overflows" "--set agents.compute=uniform(1e-20 FLOPS, 1 GFLOPS): 1e-20 FLOP/s" \
  run $q --timing-only --set "agents.compute=uniform(1e-20 FLOPS, 1 GFLOPS)"
refused "a lognormal draw that overflows a step" "quickstart.ini:31: [agents] compute: agent 4 drew 9.41862e-27" \
  run $q --timing-only --set "agents.compute=lognormal(1 GFLOPS, 200)"
{ cat $q; printf '[sweep]\nagents.stragglers.compute = 200 MFLOPS, 1e-300 FLOPS\n'; } > "$tmp/sweepslow.ini"
refused "a swept value that overflows a step" "[agents.stragglers] compute: 1e-300 FLOP/s makes one training step" \
  sweep "$tmp/sweepslow.ini" --timing-only
printf 'agent,time,value\ndefault,0,1 GFLOPS\nstragglers,0,1 GFLOPS\nstragglers,5,1e-300 FLOPS\n' > "$tmp/slow.csv"
sed 's/^compute = 200 MFLOPS$/compute = trace(slow.csv)/' $q > "$tmp/slowtrace.ini"
refused "a trace value that overflows a step" \
  "slowtrace.ini:39: [agents.stragglers] compute: $tmp/slow.csv: node 12's lowest value: 1e-300 FLOP/s" \
  run "$tmp/slowtrace.ini" --timing-only
finish written.sh
