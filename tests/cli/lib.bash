# lib.bash — what the CLI test scripts (tests/cli/*.sh) share; sourced, never run itself
# (`make test` runs *.sh only). Sets HETSIM (absolute, so a script may cd), a scratch
# folder $tmp removed at exit (with any background job still running), the pass/fail
# counters, check() and, for comparing databases, q() and dump_rows().
set -u
HETSIM=${HETSIM:-./hetsim}
HETSIM=$(cd "$(dirname "$HETSIM")" && pwd)/$(basename "$HETSIM")
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0 fail=0

check() { # name, condition-command...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi
}

q() { sqlite3 "$1" "$2"; } # db, sql

# Every table's rows without run ids and wall-clock columns, runs ordered by $2 (columns
# of runs r), each table's rows in written order: equal dumps = identical results.
dump_rows() { # db, order
  local db=$1 order=$2
  q "$db" "select r.point, r.name, r.scenario, r.method, r.seed, r.mode, r.config, r.status, quote(r.sim_time_s),
             quote(r.final_accuracy), r.rounds_done, r.message from runs r order by $order"
  for t in agents rounds agent_rounds pairings metrics; do
    local cols
    cols=$(q "$db" "select group_concat('quote(t.' || name || ')', ',') from pragma_table_info('$t')
                    where name not in ('run_id', 'solve_ms')")
    q "$db" "select '$t', $order, $cols from $t t join runs r on r.id = t.run_id order by $order, t.rowid"
  done
}

finish() { # script name
  echo "$1: $pass passed, $fail failed"
  test "$fail" -eq 0
}
