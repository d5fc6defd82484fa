#!/usr/bin/env bash
# check_layers.sh — the folders are floors (README "Layout"): a file may include only the
# folders its floor allows. Fails naming every include that crosses a floor the wrong way.
#   base/      nothing of the project but base/
#   models/    base/
#   solver/    base/
#   sim/       base/, models/, solver/ (sim/methods/ likewise)
#   analysis/  base/, and sim/'s sink interface (sim/sink.h) only
#   cli/       anything; nothing includes cli/ but cli/ (and tests/, bench/)
# and inside sim/: the trainer does not include the engine.
set -u
cd "$(dirname "$0")/.."
allowed() { # folder -> a grep -E pattern of the include paths it may use
  case $1 in
    base) echo '^(base)/' ;;
    models) echo '^(base|models)/' ;;
    solver) echo '^(base|solver)/' ;;
    sim) echo '^(base|models|solver|sim)/' ;;
    analysis) echo '^(base|analysis)/|^sim/sink\.h$' ;;
    cli) echo '^(base|models|solver|sim|analysis|cli)/' ;;
  esac
}
bad=0 files=0 checked=0
for folder in base models solver sim analysis cli; do
  pattern=$(allowed "$folder")
  while IFS= read -r file; do
    files=$((files + 1))
    while IFS=: read -r line include; do
      checked=$((checked + 1))
      if ! printf '%s\n' "$include" | grep -Eq "$pattern"; then
        echo "FAIL $file:$line includes \"$include\", which floor $folder/ may not include"
        bad=$((bad + 1))
      fi
    done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
  done < <(find "$folder" -name '*.[ch]' | sort)
done
# The sink interface analysis/ may use must itself stay free of the rest of sim/.
if grep -n '^#include "' sim/sink.h | grep -Ev '"(base|sim/sink)' ; then
  echo "FAIL sim/sink.h includes more than base/: analysis/ would reach the rest of sim/ through it"
  bad=$((bad + 1))
fi
# The trainer is reached through Engine.trainer and knows nothing of the engine.
if grep -n '^#include "sim/engine.h"' sim/trainer.c sim/trainer.h; then
  echo "FAIL sim/trainer includes sim/engine.h: the trainer must not reach back into the engine"
  bad=$((bad + 1))
fi
[ "$files" -gt 50 ] || { echo "FAIL only $files files found: is this the top folder?"; bad=$((bad + 1)); }
echo "check_layers: $files files, $((checked - bad)) includes within their floors"
echo "$((checked - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
