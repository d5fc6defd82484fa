#!/usr/bin/env bash
# ComDML under churn end to end (tests/fixtures/scenarios/comdml-churn.ini and its trace):
# agents offline at a rebalance are left alone, a helper drops an absent offloader's
# batches (rounds.extra), offline time is offline_s, and train mode times like timing; an
# agent offline for good while a round needs it fails the run (every method, exit 2).
. "$(dirname "$0")/lib.bash"
q() { sqlite3 "$tmp/c.db" "$1"; }
scenario=tests/fixtures/scenarios/comdml-churn.ini

"$HETSIM" run "$scenario" --db "$tmp/c.db" --timing-only --quiet
check "churn timing run exits 0" test $? -eq 0
"$HETSIM" run "$scenario" --db "$tmp/c.db" --quiet
check "churn train run exits 0" test $? -eq 0
check "both runs are done" test "$(q "select group_concat(status) from runs")" = "done,done"
check "agents 1 and 3 (offline at the first rebalance) are alone" \
  test "$(q "select group_concat(role) from agent_rounds where run_id = 1 and round = 0 and agent in (1, 3)")" = "alone,alone"
check "no pairing of round 0 involves an offline agent" \
  test "$(q "select count(*) from pairings where round = 0 and (slow in (1, 3) or fast in (1, 3))")" = 0
check "round 0 pairs the online agents" test "$(q "select slow || '>' || fast from pairings where run_id = 1 and round = 0")" = "2>0"
check "round 1: the helper of 3 dropped 6 batches" test "$(q "select extra from rounds where run_id = 1 and round = 1")" = 6.0
check "no batch dropped in the other rounds" test "$(q "select group_concat(extra) from rounds where run_id = 1 and round != 1")" = "0.0,0.0"
check "the helper stopped before its partner came back (14.5 s)" \
  test "$(q "select t_start + actual_s < 14.5 from pairings join rounds using (run_id, round) where run_id = 1 and round = 1 and slow = 3")" = 1
check "offline time is offline_s" test "$(q "select offline_s from agent_rounds where run_id = 1 and round = 1 and agent = 3")" = 1.5
check "the round waited for agent 1, offline at its end" \
  test "$(q "select t_end > 16 from rounds where run_id = 1 and round = 1")" = 1
check "train mode times like timing mode" test \
  "$(q "select count(*) from rounds a join rounds b on a.round = b.round and a.run_id = 1 and b.run_id = 2 where a.t_end = b.t_end and a.idle_s = b.idle_s and a.bytes = b.bytes and a.extra = b.extra")" = 3
check "train mode pairs and plays out like timing mode" test \
  "$(q "select count(*) from pairings a join pairings b on a.round = b.round and a.slow = b.slow and a.run_id = 1 and b.run_id = 2 where a.fast = b.fast and a.actual_s = b.actual_s")" = 5

# The asynchronous methods under the same trace: offline agents neither send nor receive;
# train mode times like timing mode (every ripples schedule; static waits for the absent).
for variant in "run.method=ripples" "method.ripples.schedule=random" "method.ripples.schedule=static" \
               "run.method=divshare" "run.method=swift"; do
  method=$(case $variant in *ripples*) echo ripples;; *) echo "${variant#run.method=}";; esac)
  rm -f "$tmp/a.db"
  "$HETSIM" run "$scenario" --db "$tmp/a.db" --timing-only --quiet --set run.method=$method --set "$variant"
  check "$variant under churn: timing run exits 0" test $? -eq 0
  "$HETSIM" run "$scenario" --db "$tmp/a.db" --quiet --set run.method=$method --set "$variant"
  check "$variant under churn: train run exits 0" test $? -eq 0
  check "$variant under churn: train mode times like timing mode" test "$(sqlite3 "$tmp/a.db" \
    "select count(*) from rounds a join rounds b on a.round = b.round and a.run_id = 1 and b.run_id = 2
     where a.t_end = b.t_end and a.idle_s = b.idle_s and a.bytes = b.bytes and a.extra is b.extra")" = 3
done

# An agent offline for good while a round needs it: the run fails, it is not `done` at t = inf
# (and AD-PSGD's others do not gossip on forever). Offline for good only after the run's end is fine.
head -n -1 tests/fixtures/scenarios/comdml-churn.csv > "$tmp/gone.csv"
for method in comdml sync adpsgd ripples divshare swift; do
  timeout 60 "$HETSIM" run "$scenario" --db "$tmp/gone.db" --timing-only --quiet --set run.method=$method \
    --set "agents.availability=trace($tmp/gone.csv)" 2> "$tmp/gone.err"
  check "$method: agent offline for good exits 2" test $? -eq 2
  check "$method: the message names the trace and the agent" grep -Eq "gone.csv: round [12] can never end: agent 3 is offline for good" "$tmp/gone.err"
done
check "those runs are failed, never done" \
  test "$(sqlite3 "$tmp/gone.db" "select group_concat(status) from runs")" = "failed,failed,failed,failed,failed,failed"
printf '3,1000,0\n' >> "$tmp/late.csv"
cat tests/fixtures/scenarios/comdml-churn.csv "$tmp/late.csv" > "$tmp/late-all.csv"
"$HETSIM" run "$scenario" --db "$tmp/late.db" --timing-only --quiet --set "agents.availability=trace($tmp/late-all.csv)"
check "offline for good after the run has ended is fine" test $? -eq 0

finish churn.sh
