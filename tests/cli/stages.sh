#!/usr/bin/env bash
# The method x feature matrix (sim/scenario/features.h): every cell that
# `hetsim methods --features --list` says runs is run for 2 rounds of a small synthetic
# scenario in train mode, twice, and once in timing mode. Each must end `done`, the two
# train runs must give identical rows (determinism), and the timing run the same times
# (rounds, agent_rounds, runs.sim_time_s) as the train run. A refused cell, written in a
# scenario file, must be refused by `hetsim run` at the file's line that turns the feature
# on (FILE:LINE), with its stated reason, exit 2 and no database. And a feature's section
# given but off (scheme = none, count = 0, clip = none, prune = none, freeze = none) must
# give bitwise the rows of the method alone ([drift] method = none too, for every method).
# Run from the top folder with HETSIM set.
. "$(dirname "$0")/lib.bash"

cat > "$tmp/base.ini" <<'INI'
[run]
method = sync
rounds = 2
seed = 5
[data]
dataset = synthetic
train_samples = 480
test_samples = 96
features = 8
classes = 3
partition = dirichlet
alpha = 0.5
[model]
arch = mlp
layers = 8,12,3
batch = 16
optimizer = momentum
lr = 0.05
[topology]
graph = ring
[agents]
count = 5
compute = lognormal(20 MFLOPS, 0.8)
bandwidth = uniform(1 Mbit/s, 20 Mbit/s)
latency = 5 ms
[agents.slow]
count = 2
compute = 2 MFLOPS
[server]
compute = 1 GFLOPS
bandwidth = 50 Mbit/s
INI

declare -A on off
on[compression]="--set compression.scheme=topk --set compression.ratio=0.25"
on[byzantine]="--set byzantine.count=1 --set byzantine.attack=signflip --set byzantine.aggregator=median"
on[privacy.sample]="--set privacy.clip=sample --set privacy.threshold=1 --set privacy.noise_multiplier=0.5"
on[privacy.update]="--set privacy.clip=update --set privacy.threshold=1 --set privacy.noise_multiplier=0.5"
on[prune]="--set method.prune=width"
on[freeze]="--set method.freeze=progressive --set method.freeze_rounds=1"
on[drift.fedprox]="--set drift.method=fedprox --set drift.mu=0.1"
on[drift.scaffold]="--set drift.method=scaffold"
off[compression]="--set compression.scheme=none"
off[byzantine]="--set byzantine.count=0"
off[privacy.sample]="--set privacy.clip=none"
off[prune]="--set method.prune=none"
off[freeze]="--set method.freeze=none"
off[drift]="--set drift.method=none --set drift.mu=0.1"

run() { # label, args... -> $tmp/label.db, $tmp/label.err; returns the exit status
  local label=$1; shift
  rm -f "$tmp/$label.db"
  (cd "$tmp" && "$HETSIM" run ${scenario:-base.ini} --quiet --db "$tmp/$label.db" "$@" > /dev/null 2> "$tmp/$label.err")
}

# base.ini with the method and a feature's settings (on[feature]'s --set SECTION.KEY=VALUE)
# written in the file, each in its section -> $tmp/cell.ini
cell_ini() { # method, feature
  sed "s/^method = sync\$/method = $1/" "$tmp/base.ini" > "$tmp/cell.ini"
  # a method that builds its own graph refuses the [topology] written for the others
  if "$HETSIM" methods | grep -q "^  $1 .*(\[topology\] refused)"; then
    sed -i '/^\[topology\]$/,/^graph = ring$/d' "$tmp/cell.ini"
  fi
  base_lines=$(($(wc -l < "$tmp/cell.ini")))
  local word section=
  for word in ${on[$2]}; do
    [ "$word" = --set ] && continue
    [ "${word%%.*}" = "$section" ] || { section=${word%%.*}; printf '[%s]\n' "$section" >> "$tmp/cell.ini"; }
    printf '%s = %s\n' "$(echo "${word#*.}" | cut -d= -f1)" "${word#*=}" >> "$tmp/cell.ini"
  done
}

# results that do not depend on the mode's arithmetic: the times and bytes
times() { # db
  q "$1" "select round, t_start, t_end, idle_s, bytes from rounds order by rowid"
  q "$1" "select round, agent, compute_s, comm_s, idle_s, offline_s, role from agent_rounds order by rowid"
  q "$1" "select status, sim_time_s from runs"
}
# every result row but the resolved scenario's text (which names the sections given)
results() { # db
  q "$1" "select method, mode, seed, status, message, rounds_done, sim_time_s, final_accuracy from runs"
  for t in rounds agent_rounds metrics pairings agents; do q "$1" "select * from $t order by rowid"; done
}

"$HETSIM" methods --features --list > "$tmp/cells"
check "the feature table lists cells" test -s "$tmp/cells"
ran=0 refused=0
while read -r method feature verdict reason; do
  # shellcheck disable=SC2086
  if [ "$verdict" = refused ]; then
    cell_ini "$method" "$feature"
    scenario=cell.ini run refused
    status=$?
    line=$(sed -nE '1s/^hetsim: cell\.ini:([0-9]+): .*/\1/p' "$tmp/refused.err")
    check "$method + $feature is refused with its reason (exit 2, no database)" \
      test "$status" -eq 2 -a ! -e "$tmp/refused.db" -a -n "$(grep -F -- "$reason" "$tmp/refused.err")"
    # the feature's lines follow base.ini's in cell.ini
    check "$method + $feature is refused at a line of cell.ini that sets the feature" \
      test "${line:-0}" -gt "$base_lines"
    refused=$((refused + 1))
    continue
  fi
  ran=$((ran + 1))
  run a --set run.method="$method" ${on[$feature]} && run b --set run.method="$method" ${on[$feature]} &&
    run t --timing-only --set run.method="$method" ${on[$feature]}
  status=$?
  check "$method + $feature runs in train and timing mode" test "$status" -eq 0
  [ "$status" -eq 0 ] || { head -3 "$tmp/a.err" "$tmp/b.err" "$tmp/t.err"; continue; }
  check "$method + $feature ends done" test "$(q "$tmp/a.db" "select status from runs")" = done
  check "$method + $feature is deterministic" test "$(dump_rows "$tmp/a.db" r.id)" = "$(dump_rows "$tmp/b.db" r.id)"
  check "$method + $feature times alike in train and timing mode" test "$(times "$tmp/a.db")" = "$(times "$tmp/t.db")"
done < "$tmp/cells"
check "some cells run" test "$ran" -gt 0

# every feature given but off: the method alone, bitwise
for method in $("$HETSIM" methods | sed -nE 's/^  ([a-z0-9]+) .*/\1/p'); do
  run alone --set run.method="$method" || { check "$method runs alone" false; continue; }
  for feature in compression byzantine privacy.sample prune freeze drift; do
    # prune and freeze are keys of the methods that have them
    case $feature in prune | freeze)
      grep -q "^$method $feature ok" "$tmp/cells" || continue ;;
    esac
    # shellcheck disable=SC2086
    run off --set run.method="$method" ${off[$feature]}
    check "$method with $feature off runs" test $? -eq 0
    check "$method with $feature off gives the rows of $method alone" \
      test "$(results "$tmp/alone.db")" = "$(results "$tmp/off.db")"
  done
done

finish stages.sh
