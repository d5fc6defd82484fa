#!/usr/bin/env bash
# Every command of docs/tutorial.md and of the README's "Three jobs" runs as written: the
# fenced ```sh blocks in order, in one shell, in a scratch folder that looks like the top
# of the source (docs/ and scenarios/ linked in), with `hetsim` the binary under test.
# Runs and sweeps get --set run.rounds=$TUTORIAL_ROUNDS (default 1) so that the whole
# tutorial takes seconds; nothing else is changed. The ```python blocks run under a
# python3 that has pandas (python3-pandas), and are reported as skipped without one.
# Run from the top folder.
. "$(dirname "$0")/lib.bash"
top=$PWD
rounds=${TUTORIAL_ROUNDS:-1}

python=
for p in python3 /usr/bin/python3; do
  if command -v "$p" > /dev/null && "$p" -c 'import pandas' 2> /dev/null; then python=$p; break; fi
done

# FILE, first line of the part (a regex), first line after it -> a bash script on stdout
blocks_script() {
  awk -v from="$2" -v to="$3" -v py="$python" '
    $0 ~ from { on = 1 } on && to != "" && $0 ~ to && !($0 ~ from) { on = 0 }
    !on { next }
    /^```sh$/ { kind = "sh"; n++; print "echo \"== block " n " (line " NR ")\""; next }
    /^```python$/ {
      kind = "py"; n++
      if (py == "") { print "echo \"== block " n " (line " NR "): python skipped, no pandas\""; skip = 1 }
      else { print "echo \"== block " n " (line " NR "): python\""; print py " - <<'\''PYTHON_BLOCK'\''" }
      next }
    /^```/ && kind != "" { if (kind == "py" && !skip) print "PYTHON_BLOCK"; kind = ""; skip = 0; next }
    kind == "sh" || (kind == "py" && !skip) { print }' "$1"
}

mkdir -p "$tmp/src"
ln -s "$top/docs" "$tmp/src/docs"
ln -s "$top/scenarios" "$tmp/src/scenarios"
cat > "$tmp/src/hetsim" <<EOF
#!/bin/bash
case \$1 in
  run|sweep) exec "$HETSIM" "\$@" --set run.rounds=$rounds ;;
  *) exec "$HETSIM" "\$@" ;;
esac
EOF
chmod +x "$tmp/src/hetsim"

blocks_script docs/tutorial.md '^# Tutorial' '' > "$tmp/tutorial.bash"
check "the tutorial has its command blocks" test "$(grep -c '^echo "== block' "$tmp/tutorial.bash")" -ge 8
(cd "$tmp/src" && bash -e -o pipefail "$tmp/tutorial.bash") > "$tmp/tutorial.out" 2>&1
status=$?
check "every command of docs/tutorial.md runs (rounds=$rounds)" test "$status" -eq 0
[ "$status" -eq 0 ] || tail -20 "$tmp/tutorial.out"
check "the sweep wrote its 54 runs" test "$(sqlite3 "$tmp/src/study.db" 'select count(*) from runs where status = "done"' 2>/dev/null)" = 54
check "the SQL step printed the sync rows" grep -q '^sync  *1.5  *iid' "$tmp/tutorial.out"
check "the straggler figure was drawn" test -s "$tmp/src/study-plots/straggler.png"
check "the paper figures were drawn as PDF with their scripts" \
  test -s "$tmp/src/study-paper/straggler.pdf" -a -s "$tmp/src/study-paper/straggler.gp"
if [ -n "$python" ]; then
  check "the pandas step printed the pivot" grep -q 'comdml' "$tmp/tutorial.out"
else
  echo "tutorial.sh: the pandas block was not run: no python3 with pandas (apt-get install python3-pandas)"
fi

rm -f "$tmp/src"/*.db "$tmp/src"/*.db-*
blocks_script README.md '^## Three jobs' '^## ' > "$tmp/readme.bash"
check "the README's three jobs have their command blocks" test "$(grep -c '^echo "== block' "$tmp/readme.bash")" -ge 3
(cd "$tmp/src" && bash -e -o pipefail "$tmp/readme.bash") > "$tmp/readme.out" 2>&1
status=$?
check "every command of the README's three jobs runs" test "$status" -eq 0
[ "$status" -eq 0 ] || tail -20 "$tmp/readme.out"

finish tutorial.sh
