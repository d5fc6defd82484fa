#!/usr/bin/env bash
# Client selection of fedavg and fedbuff (docs/selection.md) end to end on
# tests/fixtures/scenarios/selection.ini (8 clients at three fixed speeds): deadline
# selects exactly the clients whose hand-worked predicted job time fits, energy only
# those whose battery pays the predicted job, uniform is the draw it always was, train =
# timing for the rules that read no loss, oort and power-of-choice deterministic in train
# mode and refused in timing mode, Oort's blacklist (hand-worked), pacer and clip, and
# bad inputs (exit 2 with FILE:LINE, no database).
. "$(dirname "$0")/lib.bash"
S=tests/fixtures/scenarios/selection.ini
db=$tmp/s.db
run() { "$HETSIM" run $S --db "$@" --quiet; }
sel() { q $1 "select group_concat(agent) from (select distinct agent from agent_rounds where run_id = $2 and compute_s > 0 order by agent)"; }

# --- the predicted job time, by hand: compute (2 steps; the uniform run's compute_s, the
# cost model's steps x FLOPs / compute) + both messages alone on the client's 1 MB/s link:
# 2 x (1 ms latency + 2704 B / 1 MB/s). fast 8.68672 ms, medium 13.8016 ms, slow 71.344 ms.
run $db --timing-only
check "uniform, participation 1: every client trains" test "$(sel $db 1)" = "0,1,2,3,4,5,6,7"
fits() { # run, T (s) -> the agents whose predicted time <= T
  q $db "select group_concat(agent) from (select agent from agent_rounds where run_id = $1 and round = 0
         and compute_s + 2 * (0.001 + 2704 / 1e6) <= $2 order by agent)"
}
check "hand-worked: 20 ms fits the fast and the medium" test "$(fits 1 0.020)" = "0,1,2,3,4,5"
check "hand-worked: 10 ms fits the fast only" test "$(fits 1 0.010)" = "0,1,2,3"

run $db --timing-only --set method.fedavg.selection=deadline --set method.fedavg.select_time=20ms
check "deadline 20 ms: exactly the clients predicted within it" test "$(sel $db 2)" = "$(fits 1 0.020)"
check "deadline 20 ms: all 6 in every round (K = 8, 6 qualify)" \
  test "$(q $db "select count(*) from agent_rounds where run_id = 2 and compute_s > 0")" = 24
check "deadline: nobody selected is dropped (extra = 0)" test "$(q $db "select count(*) from rounds where run_id = 2 and extra = 0")" = 4
run $db --timing-only --set method.fedavg.selection=deadline --set method.fedavg.select_time=10ms
check "deadline 10 ms: the fast only" test "$(sel $db 3)" = "$(fits 1 0.010)"
run $db --timing-only --set method.fedavg.selection=deadline --set method.fedavg.select_time=20ms \
  --set method.fedavg.participation=0.25
check "deadline with K = 2 < 6 qualifying: draws among them only" \
  test "$(q $db "select count(*) from agent_rounds where run_id = 4 and compute_s > 0 and agent > 5")" = 0
check "... 2 per round" test "$(q $db "select count(*) from agent_rounds where run_id = 4 and compute_s > 0")" = 8
check "... and not the same 2 every round" test "$(q $db "select count(distinct agent) from agent_rounds where run_id = 4 and compute_s > 0")" -gt 2
run $db --timing-only --set method.fedavg.selection=deadline --set method.fedavg.deadline=20ms
check "deadline without select_time cuts at fedavg's deadline" test "$(sel $db 5)" = "$(fits 1 0.020)"
run $db --timing-only --set method.fedavg.selection=deadline --set method.fedavg.select_time=1ms
check "deadline that nobody fits: the K fastest" test "$(sel $db 6)" = "0,1,2,3,4,5,6,7"

# --- energy: 1 W while computing (nothing else), so a job's predicted joules are its
# compute seconds: fast 1.28 mJ, medium 6.39 mJ. The medium have 5 mJ: never selected;
# the fast 1 J; the slow no battery (mains): always fit.
E="--set agents.power_compute=1W --set agents.battery=1J --set agents.medium.battery=5mJ --set agents.slow.battery=0J"
"$HETSIM" run $S --db $tmp/e.db --timing-only --quiet $E --set method.fedavg.selection=energy 2> $tmp/e.err
st=$?
if [ $st -ne 0 ]; then cat $tmp/e.err; fi
check "energy: runs" test $st -eq 0
check "energy: the medium (5 mJ < 6.39 mJ) never train, the others do" test "$(sel $tmp/e.db 1)" = "0,1,2,3,6,7"
check "energy: the medium's batteries stay full" \
  test "$(q $tmp/e.db "select count(*) from agent_rounds where run_id = 1 and agent in (4, 5) and battery_j = 0.005")" = 8
"$HETSIM" run $S --db $tmp/e.db --timing-only --quiet $E
check "uniform with the same batteries: the medium train (and drain)" test "$(sel $tmp/e.db 2)" = "0,1,2,3,4,5,6,7"

# --- train = timing, for the rules that read no loss
for r in deadline energy; do
  rm -f $tmp/tt.db
  "$HETSIM" run $S --db $tmp/tt.db --quiet $E --set method.fedavg.select_time=20ms --set method.fedavg.selection=$r
  "$HETSIM" run $S --db $tmp/tt.db --quiet $E --set method.fedavg.select_time=20ms --set method.fedavg.selection=$r --timing-only
  check "$r: train and timing mode give the same rounds" test "$(q $tmp/tt.db "select count(*) from rounds a join rounds b using (round)
    where a.run_id = 1 and b.run_id = 2 and a.t_end = b.t_end and a.bytes = b.bytes and a.energy_j is b.energy_j")" = 4
  check "$r: ... and the same agent rows" test "$(q $tmp/tt.db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
    where a.run_id = 1 and b.run_id = 2 and a.compute_s = b.compute_s and a.idle_s = b.idle_s and a.comm_s = b.comm_s
    and a.battery_j is b.battery_j")" = 32
done

# --- oort and power-of-choice: train mode, deterministic, not uniform's pick
for r in oort power-of-choice; do
  rm -f $tmp/d.db
  "$HETSIM" run $S --db $tmp/d.db --quiet --set method.fedavg.participation=0.25 --set method.fedavg.selection=$r
  check "$r: a train-mode run exits 0" test $? -eq 0
  "$HETSIM" run $S --db $tmp/d.db --quiet --set method.fedavg.participation=0.25 --set method.fedavg.selection=$r --threads 1
  check "$r: deterministic (threads 1 vs default): identical rows" \
    test "$(q $tmp/d.db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
      where a.run_id = 1 and b.run_id = 2 and a.compute_s = b.compute_s and a.idle_s = b.idle_s")" = 32 -a \
    "$(q $tmp/d.db "select count(*) from metrics a join metrics b using (round) where a.agent is null and b.agent is null
      and a.run_id = 1 and b.run_id = 2 and a.test_accuracy = b.test_accuracy and a.train_loss = b.train_loss")" = \
    "$(q $tmp/d.db "select count(*) from metrics where run_id = 1 and agent is null")"
  check "$r: 2 clients per round" test "$(q $tmp/d.db "select count(*) from agent_rounds where run_id = 1 and compute_s > 0")" = 8
done
rm -f $tmp/o.db
"$HETSIM" run $S --db $tmp/o.db --quiet --set method.fedavg.participation=0.5 --set method.fedavg.selection=oort \
  --set method.fedavg.select_time=10ms --set method.fedavg.oort_epsilon=0
check "oort without exploration after the first round: the slow (7x over T, alpha 2) never come back" \
  test "$(q $tmp/o.db "select count(*) from agent_rounds where run_id = 1 and round > 0 and agent > 5 and compute_s > 0")" = 0

# --- oort's blacklist, pacer and clip (K = 2, T = 10 ms). Without exploration, oort keeps
# the two clients of round 0 (1 and 3) every round; oort_blacklist = 1 leaves a client out
# once selected twice, so the 16 places of rounds 0-7 go 2 to each of the 8 clients; in
# rounds 8 and 9 every client is out, and the fewest-selected come back, ties by index:
# {0, 1}, then {2, 3}.
O="--set method.fedavg.participation=0.25 --set method.fedavg.selection=oort --set method.fedavg.select_time=10ms"
picks() { q $1 "select group_concat(agent) from (select agent from agent_rounds where run_id = $2 and compute_s > 0 ${3:-} order by round, agent)"; }
rm -f $tmp/bl.db
"$HETSIM" run $S --db $tmp/bl.db --quiet $O --set method.fedavg.oort_epsilon=0 --set run.rounds=10
"$HETSIM" run $S --db $tmp/bl.db --quiet $O --set method.fedavg.oort_epsilon=0 --set run.rounds=10 --set method.fedavg.oort_blacklist=1
check "no blacklist: clients 1 and 3 every round" test "$(picks $tmp/bl.db 1)" = "$(printf '1,3,%.0s' 1 2 3 4 5 6 7 8 9 10 | sed 's/,$//')"
check "blacklist 1: two jobs per client in rounds 0-7" \
  test "$(q $tmp/bl.db "select count(distinct agent) || '/' || max(n) || '/' || min(n) from (select agent, count(*) n from agent_rounds
    where run_id = 2 and round < 8 and compute_s > 0 group by agent)")" = "8/2/2"
check "blacklist 1: all out in rounds 8, 9: the fewest-selected come back, by index" \
  test "$(picks $tmp/bl.db 2 "and round >= 8")" = "0,1,2,3"
"$HETSIM" run $S --db $tmp/bl.db --quiet $O --set method.fedavg.oort_epsilon=0 --set run.rounds=10 --set method.fedavg.oort_blacklist=1 --threads 1
check "blacklist: deterministic (threads 1)" test "$(picks $tmp/bl.db 3)" = "$(picks $tmp/bl.db 2)"
check "blacklist: runs.config names the key" test "$(q $tmp/bl.db "select count(*) from runs where instr(config, 'oort_blacklist = 1') > 0")" = 2
# The pacer: with exploration, the slow clients (71 ms, 7x over T) are explored once each
# and then kept out by the (T / t)^2 penalty; a 100 ms step relaxes T past them as soon as
# the summed utility falls, and they come back.
rm -f $tmp/pc.db
"$HETSIM" run $S --db $tmp/pc.db --quiet $O --set run.rounds=20
"$HETSIM" run $S --db $tmp/pc.db --quiet $O --set run.rounds=20 --set method.fedavg.oort_pacer_step=100ms --set method.fedavg.oort_pacer_window=2
"$HETSIM" run $S --db $tmp/pc.db --quiet $O --set run.rounds=20 --set method.fedavg.oort_pacer_step=100ms --set method.fedavg.oort_pacer_window=2 --threads 1
slow() { q $tmp/pc.db "select count(*) from agent_rounds where run_id = $1 and agent > 5 and compute_s > 0"; }
check "no pacer: each slow client explored once, then kept out" test "$(slow 1)" = 2
check "pacer: T relaxed, the slow clients come back" test "$(slow 2)" -gt 2
check "pacer: deterministic (threads 1)" test "$(picks $tmp/pc.db 3)" = "$(picks $tmp/pc.db 2)"
# The clip: utilities capped at their median change the pick
"$HETSIM" run $S --db $tmp/pc.db --quiet $O --set run.rounds=20 --set method.fedavg.oort_clip=0.5
"$HETSIM" run $S --db $tmp/pc.db --quiet $O --set run.rounds=20 --set method.fedavg.oort_clip=0.5 --threads 1
check "clip 0.5: a different pick from no clip" test "$(picks $tmp/pc.db 4)" != "$(picks $tmp/pc.db 1)"
check "clip: deterministic (threads 1)" test "$(picks $tmp/pc.db 5)" = "$(picks $tmp/pc.db 4)"

# --- fedbuff takes the rules too
"$HETSIM" run $S --db $tmp/b.db --timing-only --quiet --set run.method=fedbuff --set method.fedbuff.concurrency=3 \
  --set method.fedbuff.local_steps=2 --set method.fedbuff.buffer=2 --set method.fedbuff.selection=deadline --set method.fedbuff.select_time=20ms
check "fedbuff deadline: runs" test $? -eq 0
check "fedbuff deadline: only the 6 that fit train" test "$(sel $tmp/b.db 1)" = "0,1,2,3,4,5"
"$HETSIM" run $S --db $tmp/b.db --quiet --set run.method=fedbuff --set method.fedbuff.concurrency=3 \
  --set method.fedbuff.buffer=2 --set method.fedbuff.selection=power-of-choice --set method.fedbuff.candidates=4
check "fedbuff power-of-choice: runs in train mode" test $? -eq 0

# --- uniform is what it was: the key at its default writes nothing and draws the same
rm -f $tmp/u.db
run $tmp/u.db --set method.fedavg.participation=0.5
run $tmp/u.db --set method.fedavg.participation=0.5 --set method.fedavg.selection=uniform
check "uniform: runs.config does not name the key" test "$(q $tmp/u.db "select count(*) from runs where instr(config, char(10) || 'selection') > 0")" = 0
check "... which a run that selects does" test "$(q $tmp/e.db "select count(*) from runs where instr(config, char(10) || 'selection = energy') > 0")" = 1
check "uniform written or not: identical rows" test "$(q $tmp/u.db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
  where a.run_id = 1 and b.run_id = 2 and a.compute_s = b.compute_s and a.idle_s = b.idle_s")" = 32

# --- bad inputs: exit 2, FILE:LINE or the --set argument, no database
bad() { # name, expected text, run arguments...
  local name=$1 want=$2; shift 2
  rm -f $tmp/bad.db
  "$HETSIM" run "$@" --db $tmp/bad.db --quiet 2> $tmp/bad.err
  local st=$?
  check "$name: exit 2" test $st -eq 2
  check "$name: says where and what" grep -q -- "$want" $tmp/bad.err
  check "$name: no database" test ! -e $tmp/bad.db
}
sed 's/^participation = 1$/participation = 1\nselection = oort/' $S > $tmp/oort.ini
line=$(grep -n '^selection = oort' $tmp/oort.ini | cut -d: -f1)
bad "oort in timing mode" "oort.ini:$line: .*oort selects by the clients' training losses, which timing mode does not compute" \
  $tmp/oort.ini --timing-only
bad "power-of-choice in timing mode" "method.fedavg.selection=power-of-choice.*timing mode" $S --timing-only \
  --set method.fedavg.selection=power-of-choice
bad "deadline without a cut" "deadline needs a cut" $S --set method.fedavg.selection=deadline
bad "energy without a battery" "no \[agents\] group has a battery" $S --set method.fedavg.selection=energy
bad "d below the clients selected" "d = 4 candidates cannot yield the 8 clients" $S \
  --set method.fedavg.selection=power-of-choice --set method.fedavg.candidates=4
bad "d above the agents" "d = 9 candidates, but there are 8 agents" $S --set method.fedavg.participation=0.25 \
  --set method.fedavg.selection=power-of-choice --set method.fedavg.candidates=9
bad "an unknown rule" "selection" $S --set method.fedavg.selection=random
bad "a negative select_time" "select_time" $S --set method.fedavg.selection=deadline --set method.fedavg.select_time=-1s
bad "oort_epsilon above 1" "oort_epsilon" $S --set method.fedavg.selection=oort --set method.fedavg.oort_epsilon=1.5
bad "a pacer step of 0" "oort_pacer_step=0s: expected none or a time in (0, inf]" $S --set method.fedavg.selection=oort \
  --set method.fedavg.oort_pacer_step=0s
bad "a pacer window of 0" "oort_pacer_window=0: expected a whole number in \[1," $S --set method.fedavg.selection=oort \
  --set method.fedavg.oort_pacer_window=0
bad "a negative blacklist" "oort_blacklist=-1: expected a whole number in \[0," $S --set method.fedavg.selection=oort \
  --set method.fedavg.oort_blacklist=-1
sed 's/^participation = 1$/participation = 1\nselection = oort\noort_clip = 0/' $S > $tmp/clip.ini
line=$(grep -n '^oort_clip' $tmp/clip.ini | cut -d: -f1)
bad "a clip of 0" "clip.ini:$line: .*oort_clip: expected a number in (0, 1]" $tmp/clip.ini
bad "a clip above 1" "oort_clip=1.5" $S --set method.fedavg.selection=oort --set method.fedavg.oort_clip=1.5

finish selection.sh
