#!/usr/bin/env bash
# Energy and batteries end to end (docs/energy.md) on tests/fixtures/scenarios/energy.ini
# (sync, 4 agents, 2 of them 4x slower): joules per state against the powers and the
# rows' times, per-byte energy against the ring's bytes, a battery of E joules drained at
# P watts going offline at the first round end at or after E / (P - charging), charging
# bringing it back after resume_charge / charging, train = timing, determinism, the rows
# of runs without powers (NULL), bad inputs (exit 2 with FILE:LINE), and a database
# written before the columns existed.
. "$(dirname "$0")/lib.bash"
S=tests/fixtures/scenarios/energy.ini
db=$tmp/e.db
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; s = (a < 0 ? -a : a) + 1e-300; exit !(d <= 1e-9 * (s > 1 ? s : 1)) }'; }

# --- joules per state: compute_j = Pc compute_s, comm_j = Pm (busy - compute_s),
# idle_j = Pi idle_s, busy = round length - idle_s - offline_s
"$HETSIM" run $S --db $db --timing-only --quiet --set agents.power_compute=3W --set agents.power_comm=1500mW \
  --set agents.power_idle=0.25W
check "a run with powers exits 0" test $? -eq 0
bad=$(q $db "select count(*) from agent_rounds a join rounds r using (run_id, round) where run_id = 1 and (
  abs(compute_j - 3 * compute_s) > 1e-12 or abs(idle_j - 0.25 * a.idle_s) > 1e-12
  or abs(comm_j - 1.5 * ((t_end - t_start) - a.idle_s - offline_s - compute_s)) > 1e-12)")
check "joules per state are power x the state's time" test "$bad" = 0
check "every agent_rounds row has its joules" test "$(q $db "select count(*) from agent_rounds where run_id = 1 and compute_j is not null and comm_j > 0 and idle_j > 0")" = 48
check "the slow agents compute 4x as long, so 4x the joules" \
  test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (run_id, round) where run_id = 1 and a.agent = 0 and b.agent = 2 and abs(b.compute_j - 4 * a.compute_j) < 1e-12")" = 12
check "rounds.energy_j is the agents' sum" test "$(q $db "select count(*) from rounds r where run_id = 1 and abs(energy_j -
  (select sum(compute_j + comm_j + idle_j) from agent_rounds a where a.run_id = 1 and a.round = r.round)) < 1e-12")" = 12
check "without a battery, battery_j is NULL" test "$(q $db "select count(*) from agent_rounds where run_id = 1 and battery_j is null")" = 48

# --- per byte: a ring all-reduce of B bytes among N = 4 makes each member send and
# receive 2(N-1) B/N each way, 4(N-1)/N B in all: each agent's share of rounds.bytes
# (2(N-1) B) is 2/N = 1/2
"$HETSIM" run $S --db $db --timing-only --quiet --set agents.energy_per_byte=2nJ/B
check "energy_per_byte alone: comm_j = 2 nJ x bytes / 2, nothing else" test "$(q $db "select count(*) from agent_rounds a join rounds r using (run_id, round)
  where run_id = 2 and abs(comm_j - 2e-9 * r.bytes / 2) < 1e-15 and compute_j = 0 and idle_j = 0")" = 48

# --- no powers: the new columns are NULL, the other columns what they were
"$HETSIM" run $S --db $db --timing-only --quiet
check "no powers: every joule column is NULL" test "$(q $db "select count(*) from agent_rounds where run_id = 3 and
  coalesce(compute_j, comm_j, idle_j, battery_j) is null")" = 48
check "no powers: rounds.energy_j is NULL" test "$(q $db "select count(*) from rounds where run_id = 3 and energy_j is null")" = 12
check "no powers: the times are those of the run with powers" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b
  using (round, agent) where a.run_id = 1 and b.run_id = 3 and a.compute_s = b.compute_s and a.comm_s = b.comm_s and a.idle_s = b.idle_s")" = 48
check "no powers: runs.config says nothing of energy" test "$(q $db "select instr(config, 'power') + instr(config, 'battery') from runs where id = 3")" = 0

# --- a battery: every state at P = 1 W, so the charge falls at P - charging while online.
# Without charging, E = 0.5 J empties at t = E / P = 0.5 s, within round 2 ([3L, ...) with
# L = 0.2145216 s): the agents go offline at its end for good, and the next round fails.
P="--set agents.power_compute=1W --set agents.power_comm=1W --set agents.power_idle=1W"
rm -f $tmp/b.db
"$HETSIM" run $S --db $tmp/b.db --timing-only --quiet $P --set "agents.battery=500 mJ" 2> $tmp/b.err
check "a battery that runs out for good while sync needs it exits 2" test $? -eq 2
check "the message says the battery ran out" grep -q "energy.ini: round 4 can never end: agent 0's battery ran out and charging = 0" $tmp/b.err
check "the charge falls by P x t while online" test "$(q $tmp/b.db "select count(*) from agent_rounds a join rounds r using (run_id, round)
  where a.round < 2 and abs(battery_j - (0.5 - 1 * r.t_end)) < 1e-12")" = 8
empty=$(q $tmp/b.db "select min(round) from agent_rounds where battery_j = 0 and agent = 0")
first=$(q $tmp/b.db "select min(round) from rounds where t_end >= 0.5 / 1")
check "it empties in the round where t = E / P falls" test "$empty" = "$first" -a "$first" = 2

# With charging C = 0.1 W, resume_charge R = 0.2 J: empty at E / (P - C) = 0.556 s (round
# 2's end, 3L); back R / C = 2 s later, so the next round holds 2 s offline, and its end's
# charge is R - (P - C) x its online time.
"$HETSIM" run $S --db $tmp/b.db --timing-only --quiet $P --set "agents.battery=0.5 J" --set agents.charging=0.1W \
  --set "agents.resume_charge=0.2 J"
check "a charging battery: the run is done" test "$(q $tmp/b.db "select status from runs where id = 2")" = done
check "charge = E - (P - C) t until empty" test "$(q $tmp/b.db "select count(*) from agent_rounds a join rounds r using (run_id, round)
  where run_id = 2 and a.round < 2 and abs(battery_j - (0.5 - 0.9 * r.t_end)) < 1e-12")" = 8
check "empty at the end of the round where E / (P - C) falls" test "$(q $tmp/b.db "select min(round) from agent_rounds where run_id = 2 and battery_j = 0")" = \
  "$(q $tmp/b.db "select min(round) from rounds where run_id = 2 and t_end >= 0.5 / 0.9")"
check "offline from then for R / C = 2 s" test "$(q $tmp/b.db "select count(*) from agent_rounds where run_id = 2 and round = 3 and abs(offline_s - 2) < 1e-12")" = 4
check "the round ends once they are back and done" test "$(q $tmp/b.db "select count(*) from rounds where run_id = 2 and round = 3 and abs(t_start - 3 * 0.2145216) < 1e-12 and abs((t_end - t_start) - (2 + 0.2145216)) < 1e-9")" = 1
check "back with R, charge = R - (P - C) x online time" test "$(q $tmp/b.db "select count(*) from agent_rounds a join rounds r using (run_id, round)
  where run_id = 2 and a.round = 3 and abs(battery_j - (0.2 - 0.9 * ((r.t_end - r.t_start) - offline_s))) < 1e-12")" = 4
check "offline draws nothing: joules = P x online time" test "$(q $tmp/b.db "select count(*) from agent_rounds a join rounds r using (run_id, round)
  where run_id = 2 and abs(compute_j + comm_j + idle_j - 1 * ((r.t_end - r.t_start) - offline_s)) < 1e-12")" = 48

# --- a battery on the slow group only (heterogeneous fleet), maxmin and fifo: train mode
# gives the timing run's joules and charges; the same run twice gives the same rows
B="$P --set agents.slow.battery=0.4J --set agents.slow.charging=50mW"
for net in maxmin fifo; do
  rm -f $tmp/t.db
  "$HETSIM" run $S --db $tmp/t.db --timing-only --quiet $B --set network.model=$net
  "$HETSIM" run $S --db $tmp/t.db --quiet $B --set network.model=$net
  "$HETSIM" run $S --db $tmp/t.db --timing-only --quiet $B --set network.model=$net
  check "$net: the slow group went offline" test "$(q $tmp/t.db "select count(*) > 0 from agent_rounds where run_id = 1 and agent >= 2 and offline_s > 0")" = 1
  check "$net: the fast agents have no battery" test "$(q $tmp/t.db "select count(*) from agent_rounds where run_id = 1 and agent < 2 and battery_j is null")" = 24
  same="a.compute_j = b.compute_j and a.comm_j = b.comm_j and a.idle_j = b.idle_j and a.battery_j is b.battery_j and a.offline_s = b.offline_s"
  check "$net: train = timing (joules, charges, offline)" test "$(q $tmp/t.db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
    where a.run_id = 1 and b.run_id = 2 and $same")" = 48
  check "$net: deterministic" test "$(q $tmp/t.db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
    where a.run_id = 1 and b.run_id = 3 and $same")" = 48
done

# --- hetsim report: the run's energy and its energy to the target accuracy
rm -f $tmp/r.db
"$HETSIM" run $S --db $tmp/r.db --quiet --set agents.power_idle=1W --set agents.power_compute=2W --set run.target_accuracy=0.5
"$HETSIM" run $S --db $tmp/r.db --quiet --set agents.power_idle=1W --set run.target_accuracy=0.99 --set run.rounds=2
"$HETSIM" run $S --db $tmp/r.db --timing-only --quiet
"$HETSIM" report $tmp/r.db --csv > $tmp/r.csv
col() { awk -F, -v run="$1" -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i } $1 == run { print $c }' $tmp/r.csv; }
check "report: energy_j is the run's sum of rounds.energy_j" close "$(col 1 energy_j)" "$(q $tmp/r.db "select sum(energy_j) from rounds where run_id = 1")"
check "report: energy to target sums the rounds that ended by the time to target" close "$(col 1 energy_to_target_j)" \
  "$(q $tmp/r.db "select sum(energy_j) from rounds where run_id = 1 and t_end <= (select min(t) from metrics where run_id = 1 and agent is null and test_accuracy >= 0.5)")"
check "report: no energy to an unreached target" test -z "$(col 2 energy_to_target_j)" -a -n "$(col 2 energy_j)"
check "report: no energy without powers" test -z "$(col 3 energy_j)"
same_as_report $tmp/r.db > $tmp/r.diff
check "run_summary's energy columns agree with the report's" test ! -s $tmp/r.diff
"$HETSIM" report $tmp/r.db > $tmp/r.txt
check "report text: an energy column when a run has one" grep -q "energy (J)" $tmp/r.txt
"$HETSIM" report $tmp/r.db --run 3 > $tmp/r3.txt
check "report text: none when no run has one" test "$(grep -c "energy (J)" $tmp/r3.txt)" = 0

# --- bad inputs: exit 2 with FILE:LINE, before any database
# name, line(s) to append to [agents.slow] (the file's last section), expected message
bad_input() { refused_appended "$1" $S "$2" "$3" "" --timing-only; }
bad_input "negative power" "power_compute = -2 W" "outside"
bad_input "battery without a unit" "battery = 3600" "needs a unit"
bad_input "power without a unit of power" "power_idle = 2 J" "unknown unit"
bad_input "charging without a battery" "charging = 1 W" "without a battery"
bad_input "resume_charge above the capacity" "battery = 1 Wh\nresume_charge = 2 Wh" \
  "resume_charge (7200 J) is above the battery's capacity (3600 J)"

# --- a database written before these columns: it opens, gains them (NULL in its rows),
# and takes runs with energy
old=${HETSIM_OLD:-}  # a hetsim built before these columns, if the tester has one
if [ -x "$old" ]; then
  "$old" run $S --db $tmp/old.db --timing-only --quiet
  check "an older hetsim wrote its database" test $? -eq 0
  check "without the columns" test "$(q $tmp/old.db "select count(*) from pragma_table_info('agent_rounds') where name = 'compute_j'")" = 0
  "$HETSIM" run $S --db $tmp/old.db --timing-only --quiet --set agents.power_idle=1W
  check "this hetsim adds a run to it" test $? -eq 0
  check "its old rows are NULL, the new ones have joules" test "$(q $tmp/old.db "select count(idle_j) || ',' || count(*) from agent_rounds")" = "48,96"
  "$HETSIM" report $tmp/old.db > $tmp/old.report
  check "hetsim report reads it" test $? -eq 0
else
  echo "skip the older database: no $old (HETSIM_OLD)"
fi

# The same without an older binary: a file whose energy columns are dropped (as before
# they existed) is read as it is and gains them back when a run is written to it.
"$HETSIM" run $S --db $tmp/drop.db --timing-only --quiet
q $tmp/drop.db "drop view run_summary" # it reads rounds.energy_j; hetsim writes it anew when it opens the file
for c in compute_j comm_j idle_j battery_j; do q $tmp/drop.db "alter table agent_rounds drop column $c"; done
q $tmp/drop.db "alter table rounds drop column energy_j"
"$HETSIM" report $tmp/drop.db --csv > $tmp/drop.csv
check "a file without the columns: hetsim report reads it" test $? -eq 0
"$HETSIM" run $S --db $tmp/drop.db --timing-only --quiet --set agents.power_idle=1W
check "a file without the columns: a run is added" test $? -eq 0
check "a file without the columns: they are back, NULL in the old rows" \
  test "$(q $tmp/drop.db "select count(idle_j) || ',' || count(*) from agent_rounds")" = "48,96"
check "a file without the columns: rounds.energy_j too" \
  test "$(q $tmp/drop.db "select count(energy_j) || ',' || count(*) from rounds")" = "12,24"

finish energy.sh
