#!/usr/bin/env bash
# Energy keys drawn per agent and charging over time (docs/energy.md, "Per agent and over
# time") on tests/fixtures/scenarios/energy.ini (sync, 4 agents, 2 of them 4x slower, a
# round of L = 0.2145216 s while nobody is offline): powers and capacities from a
# distribution, one draw per agent held for the whole run, against the rows' times;
# the draws move no other draw; charging = trace(FILE.csv) with a step, whose recharge
# instant has a closed form; train = timing; determinism; runs.config read back; bad
# inputs (exit 2 with FILE:LINE, before any database).
. "$(dirname "$0")/lib.bash"
S=tests/fixtures/scenarios/energy.ini
db=$tmp/d.db

# --- power_compute = choice(2 W, 4 W): agent i draws p_i once, so compute_j / compute_s
# is p_i in every round, and the run's computing joules are sum_i p_i x its compute_s
"$HETSIM" run $S --db $db --timing-only --quiet --set "agents.power_compute=choice(2 W:0.5, 4 W:0.5)" \
  --set "agents.power_idle=uniform(100 mW, 300 mW)"
check "a run with drawn powers exits 0" test $? -eq 0
check "each agent draws one power, held every round" test "$(q $db "select count(*) from (select agent from agent_rounds
  where run_id = 1 group by agent having max(compute_j / compute_s) - min(compute_j / compute_s) < 1e-12
  and (abs(min(compute_j / compute_s) - 2) < 1e-12 or abs(min(compute_j / compute_s) - 4) < 1e-12))")" = 4
check "the draws differ between agents (seed 3: both values)" test "$(q $db "select count(distinct round(compute_j / compute_s, 9))
  from agent_rounds where run_id = 1")" = 2
check "idle powers drawn within [100, 300) mW, one per agent" test "$(q $db "select count(*) from (select agent,
  min(idle_j / idle_s) lo, max(idle_j / idle_s) hi from agent_rounds where run_id = 1 and idle_s > 0 group by agent)
  where lo >= 0.1 and hi < 0.3 and hi - lo < 1e-9")" = 4
check "the drawn idle powers differ" test "$(q $db "select count(distinct round(idle_j / idle_s, 9)) from agent_rounds
  where run_id = 1 and idle_s > 0")" = 4
total=$(q $db "select sum(p * s) from (select agent, max(compute_j / compute_s) p, sum(compute_s) s from agent_rounds
  where run_id = 1 group by agent)")
check "the run's computing joules: sum_i p_i x compute_s_i" test "$(q $db "select abs(sum(compute_j) - $total) < 1e-9
  from agent_rounds where run_id = 1")" = 1
check "rounds.energy_j is the agents' sum" test "$(q $db "select count(*) from rounds r where run_id = 1 and abs(energy_j -
  (select sum(compute_j + comm_j + idle_j) from agent_rounds a where a.run_id = 1 and a.round = r.round)) < 1e-12")" = 12

# --- the energy draws come from their own streams: times and every other row of the run
# are those of the run without powers
"$HETSIM" run $S --db $db --timing-only --quiet
check "the times are those of a run without energy" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b
  using (round, agent) where a.run_id = 1 and b.run_id = 2 and a.compute_s = b.compute_s and a.comm_s = b.comm_s
  and a.idle_s = b.idle_s")" = 48
check "the agents rows are those of a run without energy" test "$(q $db "select count(*) from agents a join agents b
  using (agent) where a.run_id = 1 and b.run_id = 2 and a.compute = b.compute and a.uplink = b.uplink")" = 4

# --- train = timing, deterministic, and runs.config runs the same again
"$HETSIM" run $S --db $db --quiet --set "agents.power_compute=choice(2 W:0.5, 4 W:0.5)" \
  --set "agents.power_idle=uniform(100 mW, 300 mW)"
"$HETSIM" run $S --db $db --timing-only --quiet --set "agents.power_compute=choice(2 W:0.5, 4 W:0.5)" \
  --set "agents.power_idle=uniform(100 mW, 300 mW)"
same="a.compute_j = b.compute_j and a.comm_j = b.comm_j and a.idle_j = b.idle_j"
check "train = timing (the same draws, the same joules)" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b
  using (round, agent) where a.run_id = 1 and b.run_id = 3 and $same")" = 48
check "deterministic" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
  where a.run_id = 1 and b.run_id = 4 and $same")" = 48
check "runs.config writes the distributions with their units" \
  test "$(q $db "select instr(config, 'power_compute = choice(2 W:0.5, 4 W:0.5)') > 0 and instr(config, 'power_idle = uniform(0.1 W, 0.3 W)') > 0 from runs where id = 1")" = 1
q $db "select config from runs where id = 1" > $tmp/config.ini
"$HETSIM" run $tmp/config.ini --db $db --timing-only --quiet
check "runs.config gives the same rows again" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b
  using (round, agent) where a.run_id = 1 and b.run_id = 5 and $same")" = 48
check "... and the same config" test "$(q $db "select count(*) from runs a, runs b where a.id = 1 and b.id = 5 and a.config = b.config")" = 1

# --- battery = uniform(0.4 J, 0.6 J) at 1 W in every state: agent i's charge after round 0
# is E_i - L, each E_i in [0.4, 0.6); they differ, so they empty in different rounds
P="--set agents.power_compute=1W --set agents.power_comm=1W --set agents.power_idle=1W"
rm -f $tmp/b.db
"$HETSIM" run $S --db $tmp/b.db --timing-only --quiet $P --set "agents.battery=uniform(0.4 J, 0.6 J)" \
  --set agents.charging=0.1W --set "agents.resume_charge=0.3 J"
check "drawn capacities: the run is done" test "$(q $tmp/b.db "select status from runs")" = done
check "each capacity is drawn in [0.4, 0.6) J" test "$(q $tmp/b.db "select count(*) from agent_rounds a join rounds r
  using (run_id, round) where a.round = 0 and battery_j + 0.9 * r.t_end >= 0.4 and battery_j + 0.9 * r.t_end < 0.6")" = 4
check "and differ between agents" test "$(q $tmp/b.db "select count(distinct round(battery_j, 9)) from agent_rounds where round = 0")" = 4

# --- charging = trace(FILE.csv): 0 W until 2 s, then C = 100 mW. E = 0.5 J at P = 1 W
# empties in round 2 ([2L, 3L), E / P = 0.5 s), offline from 3L; nothing comes in before
# 2 s, so resume_charge R = 0.2 J is back at 2 + R / C = 4 s exactly: round 3 holds
# 4 - 3L offline and ends at 4 + L
printf 'agent,time,watts\ndefault,0,0 W\ndefault,2 s,100 mW\nslow,0,0 W\nslow,2 s,100 mW\n' > $tmp/step.csv
rm -f $tmp/s.db
"$HETSIM" run $S --db $tmp/s.db --timing-only --quiet $P --set "agents.battery=0.5 J" \
  --set "agents.charging=trace($tmp/step.csv)" --set "agents.resume_charge=0.2 J"
check "a charging trace: the run is done" test "$(q $tmp/s.db "select status from runs")" = done
L=0.2145216
check "no charging before the step: charge = E - P t" test "$(q $tmp/s.db "select count(*) from agent_rounds a join rounds r
  using (run_id, round) where a.round < 2 and abs(battery_j - (0.5 - r.t_end)) < 1e-12")" = 8
check "empty at the end of the round where E / P falls" test "$(q $tmp/s.db "select min(round) from agent_rounds where battery_j = 0")" = 2
check "back at 2 + R / C = 4 s: round 3 holds 4 - 3L offline" test "$(q $tmp/s.db "select count(*) from agent_rounds
  where round = 3 and abs(offline_s - (4 - 3 * $L)) < 1e-12")" = 4
check "round 3 ends at 4 + L" test "$(q $tmp/s.db "select count(*) from rounds where round = 3 and abs(t_end - (4 + $L)) < 1e-9")" = 1
check "then R + (C - P) x online time" test "$(q $tmp/s.db "select count(*) from agent_rounds a join rounds r
  using (run_id, round) where a.round = 3 and abs(battery_j - (0.2 - 0.9 * ((r.t_end - r.t_start) - offline_s))) < 1e-12")" = 4
# after the step, a constant C: the rows of the run with charging = 100 mW from t = 0
# differ before 2 s only; the trace's run gains nothing before it (checked above)

# --- a trace that ends at 0 W brings a spent battery back never: sync fails the run
printf 'agent,time,watts\ndefault,0,1 W\nslow,0,1 W\nslow,0.1 s,0 W\n' > $tmp/dusk.csv
rm -f $tmp/k.db
"$HETSIM" run $S --db $tmp/k.db --timing-only --quiet $P --set "agents.battery=0.5 J" \
  --set "agents.charging=trace($tmp/dusk.csv)" 2> $tmp/k.err
check "a charging trace ending at 0 W: exit 2" test $? -eq 2
check "the message names the charging trace" grep -q "agent 2's battery ran out and its charging trace, which ends at 0 W" $tmp/k.err

# --- energy selection predicts with each client's own drawn power (docs/selection.md):
# tests/fixtures/scenarios/selection.ini's medium clients compute 6.39 ms per job; at a
# drawn 0.5 W that is 3.2 mJ, within their 5 mJ, at 1 W 6.39 mJ, not: a medium client
# trains iff it drew 0.5 W (the uniform run shows the draws: the same seed draws the same;
# seed 1 draws one of each)
F=tests/fixtures/scenarios/selection.ini
E="--set run.seed=1 --set agents.power_compute=1W --set agents.battery=1J --set agents.medium.battery=5mJ --set agents.slow.battery=0J"
D="agents.medium.power_compute=choice(0.5 W:0.5, 1 W:0.5)"
rm -f $tmp/sel.db
"$HETSIM" run $F --db $tmp/sel.db --timing-only --quiet $E --set "$D"
"$HETSIM" run $F --db $tmp/sel.db --timing-only --quiet $E --set "$D" --set method.fedavg.selection=energy
half=$(q $tmp/sel.db "select group_concat(agent) from (select distinct agent from agent_rounds where run_id = 1
  and agent in (4, 5) and compute_s > 0 and abs(compute_j / compute_s - 0.5) < 1e-12 order by agent)")
trained=$(q $tmp/sel.db "select group_concat(agent) from (select distinct agent from agent_rounds where run_id = 2
  and agent in (4, 5) and compute_s > 0 order by agent)")
check "the medium clients drew one of each (seed 1)" test "$(q $tmp/sel.db "select count(distinct round(compute_j / compute_s, 9))
  from agent_rounds where run_id = 1 and agent in (4, 5) and compute_s > 0")" = 2
check "energy selection trains the medium client that drew 0.5 W, not the 1 W one" test -n "$half" -a "$trained" = "$half"

# --- bad inputs: exit 2 with FILE:LINE, before any database
# name, line(s) to append to [agents.slow] (the file's last section), expected message
bad_input() { refused_appended "$1" $S "$2" "$3" "" --timing-only; }
bad_input "a negative power in a distribution" "power_compute = uniform(-1 W, 2 W)" "value -1 is outside \[0, 1e+09\]"
bad_input "a negative choice" "power_comm = choice(1 W:0.5, -1 W:0.5)" "value -1 is outside"
bad_input "a distribution in the wrong unit" "power_idle = uniform(1 J, 2 J)" "unknown unit"
bad_input "a battery distribution without units" "battery = uniform(5, 8 J)" "needs a unit"
bad_input "a battery distribution that draws 0" "battery = uniform(0 J, 8 J)" "must draw positive values"
bad_input "a power trace" "power_idle = trace(x.csv)" "trace() is available for"
bad_input "resume_charge above a lognormal battery's least capacity" "$(printf 'battery = lognormal(6 J, 0.5)\nresume_charge = 1 J')" \
  "above the least capacity"
printf 'agent,time,watts\ndefault,0,0 W\ndefault,2 s,-100 mW\nslow,0,1 W\n' > $tmp/neg.csv
bad_input "a charging trace with negative watts" "$(printf 'battery = 1 J\ncharging = trace(%s)' $tmp/neg.csv)" \
  "neg.csv:3: watts must be in \[0, 1e9\], found -100 mW"

finish energy_draws.sh
