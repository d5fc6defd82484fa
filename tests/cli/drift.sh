#!/usr/bin/env bash
# [drift] (sim/stages/drift.h) on the shipped scenario scenarios/drift-dirichlet.ini:
# FedProx with mu = 0 gives bitwise the rows of the method alone (fedavg, localsgd);
# SCAFFOLD's rounds carry twice the bytes of FedAvg's; corrected runs are deterministic
# and time alike in train and timing mode; SCAFFOLD beats FedAvg's accuracy after 10
# rounds of Dirichlet(0.1) shares; bad values exit 2 at FILE:LINE with no database.
# Run from the top folder with HETSIM set.
. "$(dirname "$0")/lib.bash"

scenario=$PWD/scenarios/drift-dirichlet.ini
run() { # label, args... -> $tmp/label.db, $tmp/label.err
  local label=$1; shift
  rm -f "$tmp/$label.db"
  "$HETSIM" run "$scenario" --quiet --db "$tmp/$label.db" "$@" > /dev/null 2> "$tmp/$label.err"
}
# every result row but the resolved scenario's text (which names [drift])
results() { # db
  q "$1" "select method, mode, seed, status, message, rounds_done, sim_time_s, final_accuracy from runs"
  for t in rounds agent_rounds metrics agents; do q "$1" "select * from $t order by rowid"; done
}
times() { # db
  q "$1" "select round, t_start, t_end, idle_s, bytes from rounds order by rowid"
  q "$1" "select round, agent, compute_s, comm_s, idle_s, offline_s, role from agent_rounds order by rowid"
  q "$1" "select status, sim_time_s from runs"
}

for method in fedavg localsgd; do
  run alone --set run.method=$method --set run.rounds=3
  check "$method alone runs" test $? -eq 0
  run prox0 --set run.method=$method --set run.rounds=3 --set drift.method=fedprox --set drift.mu=0
  check "$method + fedprox mu = 0 runs" test $? -eq 0
  check "$method + fedprox mu = 0 gives bitwise the rows of $method alone" \
    test "$(results "$tmp/alone.db")" = "$(results "$tmp/prox0.db")"
  check "$method + fedprox mu = 0 writes [drift] into runs.config" \
    grep -q "^method = fedprox" <(q "$tmp/prox0.db" "select config from runs")
  run prox --set run.method=$method --set run.rounds=3 --set drift.method=fedprox --set drift.mu=1
  check "$method + fedprox mu = 1 changes training" test "$(results "$tmp/alone.db")" != "$(results "$tmp/prox.db")"
  check "$method + fedprox times like $method alone" test "$(times "$tmp/alone.db")" = "$(times "$tmp/prox.db")"
  for drift in "fedprox --set drift.mu=0.1" scaffold; do
    name=${drift%% *}
    # shellcheck disable=SC2086
    run a --set run.method=$method --set run.rounds=3 --set drift.method=$drift &&
      run b --set run.method=$method --set run.rounds=3 --set drift.method=$drift &&
      run t --set run.method=$method --set run.rounds=3 --set drift.method=$drift --timing-only
    check "$method + $name runs in train and timing mode" test $? -eq 0
    check "$method + $name is deterministic" test "$(dump_rows "$tmp/a.db" r.id)" = "$(dump_rows "$tmp/b.db" r.id)"
    check "$method + $name times alike in train and timing mode" test "$(times "$tmp/a.db")" = "$(times "$tmp/t.db")"
  done
  # SCAFFOLD: the model and the control variate in every message
  check "$method + scaffold rounds carry twice the bytes" \
    test "$(q "$tmp/a.db" "select group_concat(bytes) from rounds")" = \
         "$(q "$tmp/alone.db" "select group_concat(2 * bytes) from rounds")"
  check "$method + scaffold rounds take longer (its messages are twice as long)" \
    test "$(q "$tmp/a.db" "select max(t_end) from rounds")" != "$(q "$tmp/alone.db" "select max(t_end) from rounds")"
done

# drift correction pays off under Dirichlet(0.1): SCAFFOLD ahead of FedAvg after 10 rounds
run avg --set run.rounds=10 && run scaf --set run.rounds=10 --set drift.method=scaffold
check "10 rounds of fedavg and of scaffold run" test $? -eq 0
acc() { q "$1" "select test_accuracy from metrics where round = 9 and agent is null"; }
check "scaffold's accuracy after 10 rounds beats fedavg's by 0.03 ($(acc "$tmp/scaf.db") vs $(acc "$tmp/avg.db"))" \
  awk -v s="$(acc "$tmp/scaf.db")" -v f="$(acc "$tmp/avg.db")" 'BEGIN { exit !(s > f + 0.03) }'

# bad inputs: exit 2 at FILE:LINE, no database
bad() { # label, sed expression, expected message
  sed "$2" "$scenario" > "$tmp/bad.ini"
  rm -f "$tmp/bad.db"
  "$HETSIM" run "$tmp/bad.ini" --quiet --db "$tmp/bad.db" > /dev/null 2> "$tmp/bad.err"
  local status=$? line
  line=$(grep -n "${4:-^mu =}" "$tmp/bad.ini" | head -1 | cut -d: -f1)
  check "$1 exits 2 with no database" test "$status" -eq 2 -a ! -e "$tmp/bad.db"
  check "$1 is refused at bad.ini:$line" grep -q "bad.ini:$line: .*$3" "$tmp/bad.err"
}
bad "negative mu" 's/^method = none .*/method = fedprox/; s/^mu = .*/mu = -0.1/' "\[drift\] mu: -0.1 is outside"
bad "an unknown algorithm" 's/^method = none .*/method = feddyn/' "'feddyn' is not one of none|fedprox|scaffold" "^method = feddyn"
bad "scaffold with fedbuff" 's/^method = fedavg/method = fedbuff/; s/^method = none .*/method = scaffold/' \
  "synchronous rounds" "^\[drift\]"
bad "fedprox with sync" 's/^method = fedavg/method = sync/; s/^method = none .*/method = fedprox/;' \
  "no client drift to correct" "^\[drift\]"

finish drift.sh
