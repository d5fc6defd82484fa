#!/usr/bin/env bash
# On/off Markov processes end to end ([agents] availability and outage =
# markov(MEAN_UP, MEAN_DOWN), sim/kernel/trace_markov.h) on tests/fixtures/scenarios/lossy.ini
# (dpsgd on a ring of 6, timing mode): agents go away and come back, runs.config writes the
# process back and feeding it to `hetsim run` gives the same rows; train = timing and
# identical rows with 1 and 2 jobs; the offline time over a long run is near the law's; a
# battery's outages cut into the process;
# bad inputs exit 2 with FILE:LINE before any database.
. "$(dirname "$0")/lib.bash"
S=tests/fixtures/scenarios/lossy.ini
A="agents.availability=markov(400 ms, 100 ms)"
O="agents.outage=markov(1 s, 200 ms)"
db=$tmp/m.db
run() { "$HETSIM" run $S --db $db --quiet "$@" 2>> $tmp/err; }

# --- availability (run 1) and outage (run 2)
run --set "$A"
check "availability: exit 0" test $? -eq 0
check "availability: agents were offline" test "$(q $db "select sum(offline_s) > 0 from agent_rounds where run_id = 1")" = 1
check "availability: runs.config writes the process in seconds" test "$(q $db "select instr(config, 'availability = markov(0.4, 0.1)') > 0 from runs where id = 1")" = 1
run --set "$O"
check "outage: exit 0" test $? -eq 0
run
check "outage: rounds longer than with the links always up" test "$(q $db "select (select max(t_end) from rounds where run_id = 2) > (select max(t_end) from rounds where run_id = 3)")" = 1
check "outage: runs.config writes the process" test "$(q $db "select instr(config, 'outage = markov(1, 0.2)') > 0 from runs where id = 2")" = 1
check "no process: runs.config as before" test "$(q $db "select instr(config, 'markov') from runs where id = 3")" = 0

# --- runs.config fed back gives the same rows
for id in 1 2; do
  q $db "select config from runs where id = $id" > $tmp/config.ini
  "$HETSIM" run $tmp/config.ini --db $tmp/back.db --quiet 2>> $tmp/err
  b=$(q $tmp/back.db "select max(id) from runs")
  check "run $id from its runs.config: the same rounds" test "$(q $db "select group_concat(t_end || ',' || idle_s, ';') from rounds where run_id = $id")" = "$(q $tmp/back.db "select group_concat(t_end || ',' || idle_s, ';') from rounds where run_id = $b")"
done

# --- train = timing, availability and outage together (runs 4, 5)
run --set "$A" --set "$O"; t=$(q $db "select max(id) from runs")
run --set "$A" --set "$O" --set run.mode=train; r=$(q $db "select max(id) from runs")
check "train = timing: rounds" test "$(q $db "select count(*) from rounds a join rounds b using (round) where a.run_id = $t and b.run_id = $r
  and a.t_end = b.t_end and a.bytes = b.bytes and a.idle_s = b.idle_s")" = 4
check "train = timing: agent rows" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
  where a.run_id = $t and b.run_id = $r and a.compute_s = b.compute_s and a.comm_s = b.comm_s and a.idle_s = b.idle_s
  and a.offline_s = b.offline_s")" = 24

# --- the fraction offline over a long run: mean down / (mean up + mean down) = 0.2 (the
# start up costs little over 40 rounds of about 0.3 s each); within 0.05 over 6 agents
run --set "$A" --set run.rounds=40; l=$(q $db "select max(id) from runs")
check "offline fraction near 0.2" test "$(q $db "select abs(sum(a.offline_s) / (6 * max(r.t_end)) - 0.2) < 0.05
  from agent_rounds a join rounds r using (run_id, round) where run_id = $l")" = 1

# --- determinism: a sweep over the means, 1 and 2 jobs, identical rows; the seeds differ
cat > $tmp/sweep.ini <<EOS
$(cat $S)
outage = markov(1 s, 200 ms)
[network]
model = maxmin
[sweep]
agents.availability = always, markov(400 ms, 100 ms), markov(2 s, 1 s)
repeat = 2
EOS
same_rows_with_1_and_2_jobs sweep $tmp/sweep.ini $tmp/s
check "sweep: another seed, another process" test "$(q $tmp/s1.db "select count(distinct r.t_end) from rounds r join runs u on u.id = r.run_id where r.round = 3")" = 6

# --- a battery with an availability process (docs/energy.md "Batteries"): the battery's
# outage is cut into the process as it is drawn, online when both say so. 1 W computing
# (about 26 mJ a round), 60 mJ, 10 mW charging, back at 30 mJ: 3 s out. Until the first
# battery outage the process is the one without a battery (same seed, same stream), to the
# bit; a round after the battery ran out is offline its 3 s at least; the process's own
# outages go on around them; train = timing.
B=(--set "$A" --set "agents.power_compute=1 W" --set "agents.battery=60 mJ" --set "agents.charging=10 mW"
   --set "agents.resume_charge=30 mJ" --set run.rounds=10)
run "${B[@]}"; st=$?; bt=$(q $db "select max(id) from runs")
check "battery + markov: exit 0" test $st -eq 0
run --set "$A" --set "agents.power_compute=1 W" --set run.rounds=10; nb=$(q $db "select max(id) from runs")
first=$(q $db "select min(round) from agent_rounds where run_id = $bt and battery_j = 0")
check "battery + markov: a battery ran out" test -n "$first"
check "battery + markov: before that, the process's own offline time, to the bit" test "$(q $db "select count(*) from agent_rounds a
  join agent_rounds b using (round, agent) where a.run_id = $bt and b.run_id = $nb and a.round <= $first and a.offline_s = b.offline_s")" = $((6 * (first + 1)))
check "battery + markov: the round after a battery ran out is 3 s offline at least" test "$(q $db "select count(*) from agent_rounds a
  join agent_rounds n on n.run_id = a.run_id and n.agent = a.agent and n.round = a.round + 1 join rounds r on r.run_id = n.run_id
  and r.round = n.round where a.run_id = $bt and a.battery_j = 0 and n.offline_s < min(3, r.t_end - r.t_start) - 1e-9")" = 0
check "battery + markov: the process's outages go on" test "$(q $db "select count(*) > 0 from agent_rounds a join agent_rounds p
  on p.run_id = a.run_id and p.agent = a.agent and p.round = a.round - 1 where a.run_id = $bt and p.battery_j > 0 and a.offline_s > 0
  and a.round > $first")" = 1
check "battery + markov: more offline than the process alone" test "$(q $db "select (select sum(offline_s) from agent_rounds where run_id = $bt) >
  (select sum(offline_s) from agent_rounds where run_id = $nb)")" = 1
run "${B[@]}" --set run.mode=train; tr=$(q $db "select max(id) from runs")
check "battery + markov: train = timing" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
  where a.run_id = $bt and b.run_id = $tr and a.offline_s = b.offline_s and a.battery_j = b.battery_j and a.compute_j = b.compute_j")" = 60

# --- bad inputs: exit 2 with FILE:LINE, before any database
# name, text to append, expected message, line (default: the file's last)
bad_input() { refused_appended "$1" $S "$2" "$3" "${4:-}"; }
bad_input "a zero mean up" "availability = markov(0, 1 s)" "needs both means positive"
bad_input "a negative mean down" "outage = markov(1 s, -1 s)" "needs both means positive"
bad_input "an infinite mean" "availability = markov(inf, 1 s)" "positive and finite"
bad_input "a missing argument" "availability = markov(1 s)" "takes 2 times"
bad_input "no arguments" "outage = markov()" "takes 2 times"
bad_input "a mean that is not a time" "availability = markov(1 MB, 1 s)" "in markov()"
bad_input "three arguments" "availability = markov(1 s, 1 s, 1 s)" "takes 2 times"
bad_input "no closing parenthesis" "availability = markov(1 s, 1 s" "expected markov(MEAN_UP, MEAN_DOWN)"
bad_input "an outage process under fifo" "outage = markov(1 s, 1 s)\n[network]\nmodel = fifo" "needs \[network\] model = maxmin" $(($(wc -l < $S) + 1))
bad_input "a battery without a unit with an availability process" "availability = markov(1 s, 1 s)\nbattery = 1" "needs a unit"

finish markov.sh
