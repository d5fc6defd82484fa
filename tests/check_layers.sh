#!/usr/bin/env bash
# check_layers.sh — the folders are floors (docs/architecture.md): a file may include only the
# floors below its own (and its own). Fails naming every include that crosses a floor the
# wrong way, and every include circle between floors or between modules.
#   base/           nothing of the project but base/
#   models/         base/
#   solver/         base/
#   sim/kernel/     base/ — the event kernel knows no scenario, world, trainer or method
#   sim/scenario/   base/, models/, kernel/
#   sim/world/      base/, models/, kernel/, scenario/
#   sim/train/      base/, models/, kernel/, scenario/, world/
#   sim/stages/     base/, models/, kernel/, scenario/, world/, train/
#   sim/methods/    base/, models/, solver/, and every floor of sim/ above
#   sim/ (the run)  base/, models/, solver/, every floor of sim/
#   driver/         base/, models/, solver/, sim/, analysis/
#   analysis/       base/, and the sink interface (sim/kernel/sink.h) only
#   cli/            anything; nothing includes cli/ but cli/ (and tests/, bench/)
# A floor's rank is its line above; an include may only go to an equal or lower rank, so
# the floors cannot form a circle. The circle checks below hold that independently of the
# table: the floor graph, and the module graph of sim/ (x.c, x.h and x_*.[ch] beside them
# are one module: trainer_jobs.c and trainer_internal.h are the trainer's), each searched
# for strongly connected sets; plain dispatch (a function pointer, a registry) is no
# include.
# Known crossings still to be removed are listed in KNOWN with the reason; the script
# fails on any other, and on a KNOWN line that no longer occurs (so the list only shrinks).
set -u
cd "$(dirname "$0")/.."

floor_of() { # path -> floor name
  case $1 in
    base/*) echo base ;;
    models/*) echo models ;;
    solver/*) echo solver ;;
    sim/kernel/*) echo kernel ;;
    sim/scenario/*) echo scenario ;;
    sim/world/*) echo world ;;
    sim/train/*) echo train ;;
    sim/stages/*) echo stages ;;
    sim/methods/*) echo methods ;;
    sim/*/*) echo unknown ;;
    sim/*) echo run ;;
    driver/*) echo driver ;;
    analysis/*) echo analysis ;;
    cli/*) echo cli ;;
    *) echo unknown ;;
  esac
}

module() { # path -> its module: x.c and x.h, and x_y.[ch] when x.c or x.h exists beside it
  local m=${1%.[ch]} prefix
  prefix=${m%%_*}
  prefix=${m%"${m#"${prefix}"}"}
  if [ "$prefix" != "$m" ] && { [ -f "$prefix.c" ] || [ -f "$prefix.h" ]; }; then echo "$prefix"; else echo "$m"; fi
}

allowed() { # floor -> the floors it may include, space separated
  case $1 in
    base) echo base ;;
    models) echo base models ;;
    solver) echo base solver ;;
    kernel) echo base kernel ;;
    scenario) echo base models kernel scenario ;;
    world) echo base models kernel scenario world ;;
    train) echo base models kernel scenario world train ;;
    stages) echo base models kernel scenario world train stages ;;
    methods) echo base models solver kernel scenario world train stages methods ;;
    run) echo base models solver kernel scenario world train stages methods run ;;
    driver) echo base models solver kernel scenario world train stages methods run driver analysis ;;
    analysis) echo base analysis ;;
    cli) echo base models solver kernel scenario world train stages methods run driver analysis cli ;;
  esac
}

# FILE INCLUDE — crossings still to be removed, one per line with the reason above
# them; none are left. (The one call that goes up a floor, scenario resolution asking
# sim/methods/registry.c for a method by name, goes through the registry's interface,
# declared on the scenario floor in sim/scenario/method_ops.h: plain dispatch, no
# include.)
KNOWN=''

bad=0 files=0 checked=0 known_seen=''
edges=$(mktemp) modules=$(mktemp)
trap 'rm -f "$edges" "$modules"' EXIT
while IFS= read -r file; do
  files=$((files + 1))
  from=$(floor_of "$file")
  if [ "$from" = unknown ]; then
    echo "FAIL $file is in no floor: add its folder to tests/check_layers.sh"
    bad=$((bad + 1))
    continue
  fi
  ok=" $(allowed "$from") "
  while IFS=: read -r line include; do
    checked=$((checked + 1))
    to=$(floor_of "$include")
    # modules of sim/ (module() above)
    case $file$include in sim/*sim/*) echo "$(module "$file") $(module "$include")" >> "$modules" ;; esac
    [ "$from" != "$to" ] && echo "$from $to" >> "$edges"
    case $ok in *" $to "*) continue ;; esac
    if printf '%s\n' "$KNOWN" | grep -qxF "$file $include"; then
      known_seen="$known_seen
$file $include"
      continue
    fi
    if [ "$from" = analysis ] && [ "$include" = sim/kernel/sink.h ]; then continue; fi
    echo "FAIL $file:$line includes \"$include\", which floor $from may not include ($to is above it)"
    bad=$((bad + 1))
  done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
done < <(find base models solver sim driver analysis cli -name '*.[ch]' | sort)

# Every KNOWN crossing must still exist: a removed one comes off the list.
while IFS= read -r entry; do
  [ -n "$entry" ] || continue
  if ! printf '%s\n' "$known_seen" | grep -qxF "$entry"; then
    echo "FAIL KNOWN lists \"$entry\", which no longer occurs: remove it from tests/check_layers.sh"
    bad=$((bad + 1))
  fi
done <<< "$KNOWN"
n_known=$(printf '%s\n' "$KNOWN" | grep -c .)

# The sink interface analysis/ may use must itself stay free of the rest of sim/.
if grep -n '^#include "' sim/kernel/sink.h | grep -Ev '"(base/|sim/kernel/sink)'; then
  echo "FAIL sim/kernel/sink.h includes more than base/: analysis/ would reach the rest of sim/ through it"
  bad=$((bad + 1))
fi
# The trainer has one entry header: nothing outside sim/train/ includes its inside
# (tests may).
if grep -rn '^#include "sim/train/\(trainer_internal\|workers\)\.h"' base models solver sim driver analysis cli \
   | grep -v '^sim/train/'; then
  echo "FAIL the trainer's inside is included from outside sim/train/: use sim/train/trainer.h"
  bad=$((bad + 1))
fi

# Circles. Between floors: every include circle is a failure, KNOWN crossings included
# (tsort reports the first loop it meets). Between modules (x.c + x.h): likewise.
circles() { # edge file, what -> prints one line per circle (a strongly connected set)
  local loops
  # Floyd-Warshall reachability over at most a few hundred nodes; then every node's
  # strongly connected set, printed once, in name order.
  loops=$(sort -u "$1" | awk '$1 != $2 {
      if (!($1 in id)) { id[$1] = n; name[n++] = $1 }
      if (!($2 in id)) { id[$2] = n; name[n++] = $2 }
      r[id[$1], id[$2]] = 1
    }
    END {
      for (k = 0; k < n; k++) for (i = 0; i < n; i++) if (r[i, k]) for (j = 0; j < n; j++) if (r[k, j]) r[i, j] = 1
      for (i = 0; i < n; i++) {
        if (done[i] || !r[i, i]) continue
        set = ""
        for (j = 0; j < n; j++) if (r[i, j] && r[j, i]) { done[j] = 1; set = set " " name[j] }
        print set
      }
    }' | while read -r line; do printf '%s\n' $line | sort | paste -sd' ' | sed 's/ / <-> /g'; done | sort)
  [ -z "$loops" ] && return 0
  while IFS= read -r l; do echo "$circle_label an include circle between $2: $l"; done <<< "$loops"
  return 1
}
# While KNOWN crossings remain they close circles: reported, not counted.
n_circles=0 circle_label=FAIL
[ "$n_known" -gt 0 ] && circle_label="known (closed by a KNOWN crossing):"
circles "$edges" floors || n_circles=$((n_circles + 1))
circles "$modules" "modules of sim/" || n_circles=$((n_circles + 1))
[ "$n_known" -eq 0 ] && bad=$((bad + n_circles))

[ "$files" -gt 50 ] || { echo "FAIL only $files files found: is this the top folder?"; bad=$((bad + 1)); }
echo "check_layers: $files files, $((checked - bad)) includes within their floors, $n_known known crossings"
echo "$((checked - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
