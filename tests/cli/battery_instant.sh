#!/usr/bin/env bash
# A battery checked at the instant it empties ([agents] battery_check = instant,
# docs/energy.md "Batteries", sim/kernel/battery.c). On tests/fixtures/scenarios/battery_one.ini
# (one agent computing a round of W s back to back): E joules at P watts charging C empty
# at E / (P - C) in the middle of the round's computation, which ends exactly E / (P - C)
# + R / C + (W - E / (P - C)); an outage per crossing when the charge crosses again after
# coming back; round mode as before. On tests/fixtures/scenarios/energy.ini (sync, 4 agents,
# every state at 1 W): the crossing instant pinned by the charge left, maxmin and fifo,
# train = timing, determinism, with availability = markov(); runs.config; bad inputs.
. "$(dirname "$0")/lib.bash"
S=tests/fixtures/scenarios/battery_one.ini
db=$tmp/i.db
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-12 * (a < 0 ? -a : a) + 1e-12) }'; }
run() { "$HETSIM" run "$@" --db $db --quiet > /dev/null 2>> $tmp/err; }
last() { q $db "select max(id) from runs"; }
B0="--set agents.power_compute=2W --set agents.charging=500mW"
B="$B0 --set agents.battery_check=instant"

# --- one crossing: E = 1.2 J, P = 2 W, C = 0.5 W, R = E: empty at 0.8 s, back 2.4 s later
run $S $B --set "agents.battery=1.2 J"; r=$(last)
W=$(q $db "select compute_s from agent_rounds where run_id = $r and round = 0")
check "instant: W is the round's work" close "$W" 1.022976
check "instant: the round ends at E/(P-C) + R/C + (W - E/(P-C))" close "$(q $db "select t_end from rounds where run_id = $r and round = 0")" \
  "$(awk -v w=$W 'BEGIN { printf "%.17g", 1.2 / 1.5 + 1.2 / 0.5 + (w - 1.2 / 1.5) }')"
check "instant: offline R/C = 2.4 s within the round" close "$(q $db "select offline_s from agent_rounds where run_id = $r and round = 0")" 2.4
check "instant: back with R, then R - (P-C)(W - E/(P-C)) left" close "$(q $db "select battery_j from agent_rounds where run_id = $r and round = 0")" \
  "$(awk -v w=$W 'BEGIN { printf "%.17g", 1.2 - 1.5 * (w - 0.8) }')"
check "instant: compute_j is P x W (offline draws nothing)" close "$(q $db "select compute_j from agent_rounds where run_id = $r and round = 0")" "$(awk -v w=$W 'BEGIN { printf "%.17g", 2 * w }')"
# the next round starts from what was left: empty again after left / (P - C)
left=$(q $db "select battery_j from agent_rounds where run_id = $r and round = 0")
check "instant: round 2 empties after left/(P-C) and ends R/C later than its work" close "$(q $db "select t_end - t_start from rounds where run_id = $r and round = 1")" \
  "$(awk -v w=$W 'BEGIN { printf "%.17g", w + 2.4 }')"

# --- round mode, same battery: the round's work goes on, offline from its end
run $S $B0 --set "agents.battery=1.2 J" --set agents.battery_check=round; o=$(last)
run $S $B0 --set "agents.battery=1.2 J"; d=$(last)
check "round: the first round is its work alone" close "$(q $db "select t_end from rounds where run_id = $o and round = 0")" "$W"
check "round: offline from the round's end (the next round holds it)" test "$(q $db "select offline_s from agent_rounds where run_id = $o and round = 0")" = 0.0
check "round: battery_check = round is what leaving it out gives" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round)
  where a.run_id = $o and b.run_id = $d and a.battery_j = b.battery_j and a.offline_s = b.offline_s")" = 2

# --- crossing again after coming back: E = 0.6 J, R = 0.3 J: empty at 0.4 s, then
# every R/(P-C) = 0.2 s of work, each outage R/C = 0.6 s
run $S $B --set "agents.battery=600 mJ" --set "agents.resume_charge=300 mJ"; k=$(last)
want=$(awk -v w=$W 'BEGIN { t = 0.4; work = w - 0.4; out = 0.6; while (work > 0.2) { t += 0.6 + 0.2; work -= 0.2; out += 0.6 } printf "%.17g %.17g", t + 0.6 + work, out }')
check "again: the round ends after every outage and the work" close "$(q $db "select t_end from rounds where run_id = $k and round = 0")" "${want% *}"
check "again: offline is the outages' sum" close "$(q $db "select offline_s from agent_rounds where run_id = $k and round = 0")" "${want#* }"

# --- every state at 1 W (energy.ini, 4 agents, sync): 0.5 J, C = 0.1 W, R = 0.2 J: empty
# at E / (P - C) = 0.5556 s, in round 2 whatever each agent is doing then (computing,
# communicating or waiting); back at 2.5556 s, so the charge at round 2's end is
# R - (P - C)(t_end - 2.5556): the instant pinned, not the round's end (0.6436 s)
E=tests/fixtures/scenarios/energy.ini
P="--set agents.power_compute=1W --set agents.power_comm=1W --set agents.power_idle=1W --set agents.battery_check=instant"
F="$P --set agents.battery=500mJ --set agents.charging=100mW --set agents.resume_charge=200mJ"
run $E --timing-only $F; a=$(last)
check "all states: 2 s offline in round 2" test "$(q $db "select count(*) from agent_rounds where run_id = $a and round = 2 and abs(offline_s - 2) < 1e-12")" = 4
check "all states: the charge at round 2's end pins the crossing at E/(P-C)" test "$(q $db "select count(*) from agent_rounds a join rounds r using (run_id, round)
  where run_id = $a and round = 2 and abs(battery_j - (0.2 - 0.9 * (r.t_end - (0.5 / 0.9 + 2)))) < 1e-12")" = 4
check "all states: before it, E - (P-C) t" test "$(q $db "select count(*) from agent_rounds a join rounds r using (run_id, round)
  where run_id = $a and round < 2 and abs(battery_j - (0.5 - 0.9 * r.t_end)) < 1e-12")" = 8

# --- without charging the agents are gone for good from E / P, which sync waits for
rm -f $tmp/f.db
"$HETSIM" run $E --db $tmp/f.db --timing-only --quiet $P --set agents.battery=500mJ > /dev/null 2> $tmp/f.err
check "no charging: exit 2" test $? -eq 2
check "no charging: the battery named" grep -q "energy.ini: round 3 can never end: agent 0's battery ran out and charging = 0" $tmp/f.err

# --- a method whose rounds end when the queue drains (swift): a crossing far ahead keeps
# no round going, so a battery that lasts leaves every row as in round mode
run $E --timing-only --set run.method=swift --set agents.power_compute=1W --set agents.power_idle=100mW --set agents.battery=50J; sr=$(last)
run $E --timing-only --set run.method=swift --set agents.power_compute=1W --set agents.power_idle=100mW --set agents.battery=50J \
  --set agents.battery_check=instant; si=$(last)
check "drained rounds: the same rounds as round mode" test "$(q $db "select count(*) from rounds a join rounds b using (round) where a.run_id = $sr and b.run_id = $si
  and a.t_end = b.t_end and a.energy_j = b.energy_j")" = 12

# --- a battery on the slow group only, maxmin and fifo: train = timing, deterministic
G="--set agents.slow.power_compute=1W --set agents.slow.power_idle=300mW --set agents.slow.power_comm=600mW
  --set agents.slow.battery=400mJ --set agents.slow.charging=50mW --set agents.slow.battery_check=instant"
for net in maxmin fifo; do
  run $E --timing-only $G --set network.model=$net; t=$(last)
  run $E $G --set network.model=$net; tr=$(last)
  run $E --timing-only $G --set network.model=$net; t2=$(last)
  check "$net: the slow group went offline" test "$(q $db "select count(*) > 0 from agent_rounds where run_id = $t and agent >= 2 and offline_s > 0")" = 1
  same="a.compute_j = b.compute_j and a.comm_j = b.comm_j and a.idle_j = b.idle_j and a.battery_j is b.battery_j and a.offline_s = b.offline_s
    and a.compute_s = b.compute_s and a.idle_s = b.idle_s"
  check "$net: train = timing" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round, agent) where a.run_id = $t and b.run_id = $tr and $same")" = 48
  check "$net: deterministic" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round, agent) where a.run_id = $t and b.run_id = $t2 and $same")" = 48
done

# --- with availability = markov(): the process's outages and the battery's together
run $E --timing-only $G --set "agents.slow.availability=markov(400 ms, 100 ms)"; m=$(last)
run $E $G --set "agents.slow.availability=markov(400 ms, 100 ms)"; mt=$(last)
check "markov: done" test "$(q $db "select status from runs where id = $m")" = done
check "markov: train = timing" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round, agent) where a.run_id = $m and b.run_id = $mt and $same")" = 48

# --- runs.config: battery_check = instant written and run again to the same rows; round left out
q $db "select config from runs where id = $a" > $tmp/config.ini
check "runs.config writes battery_check = instant" grep -q "^battery_check = instant" $tmp/config.ini
"$HETSIM" run $tmp/config.ini --db $tmp/back.db --quiet > /dev/null 2>> $tmp/err
check "runs.config run again: the same rows" test "$(q $tmp/back.db "select group_concat(battery_j || ',' || offline_s, ';') from agent_rounds")" = \
  "$(q $db "select group_concat(battery_j || ',' || offline_s, ';') from agent_rounds where run_id = $a")"
check "round mode: runs.config says nothing of it" test "$(q $db "select instr(config, 'battery_check') from runs where id = $o")" = 0

# --- bad inputs: exit 2 with FILE:LINE, before any database
refused_appended "instant without a battery" $S "battery_check = instant" "without a battery" "" --timing-only
refused_appended "an unknown check" $S "battery_check = often" "round" "" --timing-only

finish battery_instant.sh
