#!/usr/bin/env bash
# Issue 28, class 3, as a property: for every accepted scenario — each file in scenarios/
# and each seed of the scenario fuzzer (its "--set " lines applied as overrides), plus
# values that used to forge lines — runs.config fed back to `hetsim run` gives the same
# rows and the same config again. Timing mode (train mode where timing mode refuses the
# file: lib.bash mode_for), 1 round; sweep files run every point.
. "$(dirname "$0")/lib.bash"

# A run's rows without ids, wall-clock columns and the provenance of the file it came
# from (runs.scenario names the file; sweep and point only exist in a sweep).
run_rows() { # db, run id
  local db=$1 id=$2 sql
  # one query writes the others: each table's columns but run_id (two sqlite3 calls a run)
  sql=$(q "$db" "select group_concat('select ''' || m.name || ''', ' || (select group_concat('quote(' || p.name || ')', ',')
                   from pragma_table_info(m.name) p where p.name not in ('run_id', 'solve_ms'))
                   || ' from ' || m.name || ' where run_id = $id order by rowid;', ' ')
                 from sqlite_master m where m.type = 'table'
                   and m.name in ('agents', 'rounds', 'agent_rounds', 'pairings', 'metrics')")
  q "$db" "select name, method, seed, mode, config, status, quote(sim_time_s), quote(final_accuracy), rounds_done,
           message from runs where id = $id; $sql"
}

# Runs the runs of $1 (a database) again from their runs.config into a second database
# and compares; $2 names the case. A sweep's: its first and last run and two between.
replay_all() {
  local db=$1 name=$2 n=0 same=0
  for id in $(q "$db" "select id from runs where status = 'done' and (id in ((select min(id) from runs),
                       (select max(id) from runs)) or id % 17 = 5) order by id limit 4"); do
    n=$((n + 1))
    q "$db" "select config from runs where id = $id" > "$tmp/config.ini"
    rm -f "$tmp/again.db"
    if "$HETSIM" run "$tmp/config.ini" --db "$tmp/again.db" --quiet 2> "$tmp/err"; then
      run_rows "$db" "$id" > "$tmp/a.rows"
      run_rows "$tmp/again.db" 1 > "$tmp/b.rows"
      if cmp -s "$tmp/a.rows" "$tmp/b.rows"; then same=$((same + 1))
      else echo "  $name run $id: rows differ"; diff "$tmp/a.rows" "$tmp/b.rows" | head -5; fi
    else
      echo "  $name run $id: its runs.config is refused: $(head -1 "$tmp/err")"
    fi
  done
  check "$name: $same of $n runs give the same rows from runs.config" test "$n" -gt 0 -a "$same" -eq "$n"
}

cases=0
for f in scenarios/*.ini; do
  rm -f "$tmp/first.db"
  mode=$(mode_for "$f")
  if grep -q '^\[sweep\]' "$f"; then
    "$HETSIM" sweep "$f" --db "$tmp/first.db" --quiet $mode --set run.rounds=1 --set sweep.repeat=1 \
      --jobs 2 2> "$tmp/err"
  else
    "$HETSIM" run "$f" --db "$tmp/first.db" --quiet $mode --set run.rounds=1 2> "$tmp/err"
  fi
  check "$f runs" test $? -eq 0
  replay_all "$tmp/first.db" "$f"
  cases=$((cases + 1))
done

for f in tests/fuzz/seeds-fuzz_scenario/*; do
  # the fuzzer's "--set " lines are overrides; the rest is the file (kept in its folder,
  # so the paths it names resolve as they do for the fuzzer's seeds)
  sets=()
  while IFS= read -r line; do sets+=(--set "${line#--set }"); done < <(grep '^--set ' "$f")
  copy="$(dirname "$f")/.roundtrip-$$.ini"
  grep -v '^--set ' "$f" > "$copy"
  rm -f "$tmp/first.db"
  "$HETSIM" run "$copy" --db "$tmp/first.db" --quiet --timing-only --set run.rounds=1 "${sets[@]}" 2> "$tmp/err"
  status=$?
  rm -f "$copy"
  if [ $status -eq 2 ]; then
    echo "  $f is refused (not a case): $(head -1 "$tmp/err")"
    continue
  fi
  check "$f runs" test $status -eq 0
  replay_all "$tmp/first.db" "$f"
  cases=$((cases + 1))
done
check "every scenario and seed was a case ($cases)" test "$cases" -ge 30

# Text values at their edges: what is accepted must come back the same; what would not
# (a line break, a tab, a comment character) is refused, never stored.
q_ini=scenarios/quickstart.ini
for name in 'a b' 'x=y' '[agents]' 'ünïcode' 'a:b' 'quote"s' "it's"; do
  rm -f "$tmp/first.db"
  "$HETSIM" run $q_ini --db "$tmp/first.db" --quiet --timing-only --set run.rounds=1 --set "run.name=$name"
  check "run.name '$name' is accepted" test $? -eq 0
  check "run.name '$name' is stored as given" test "$(q "$tmp/first.db" "select name from runs")" = "$name"
  replay_all "$tmp/first.db" "run.name '$name'"
done
for name in $'a\nb' $'a\rb' $'a\tb' 'a ;b' 'a#b' $'a\x1b[0m'; do
  rm -f "$tmp/first.db"
  "$HETSIM" run $q_ini --db "$tmp/first.db" --quiet --timing-only --set run.rounds=1 --set "run.name=$name" 2> /dev/null
  status=$?
  check "run.name $(printf '%q' "$name") is refused" test $status -eq 2 -a ! -e "$tmp/first.db"
done
finish roundtrip.sh
