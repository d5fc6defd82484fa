#!/usr/bin/env bash
# The radio's two powers (docs/energy.md#sending-and-receiving) end to end: power_tx and
# power_rx on tests/fixtures/scenarios/energy.ini (sync, ring all-reduces: every member
# sends and receives at once, so comm_j = max(power_tx, power_rx) x its communicating time),
# power_comm as the shorthand of both (the same rows and runs.config), one draw for the
# same distribution and power_rx's draw after every other key, train = timing, determinism
# with 1 and 2 jobs, energy-aware selection that predicts the download at power_rx and the
# upload at power_tx (tests/fixtures/scenarios/selection.ini), and bad inputs (exit 2 with
# FILE:LINE or the --set argument, no database).
. "$(dirname "$0")/lib.bash"
S=tests/fixtures/scenarios/energy.ini
db=$tmp/r.db
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-9 * (b > 1 ? b : 1)) }'; }
run() { "$HETSIM" run $S --db "$@" --quiet > /dev/null; }

# --- a ring sends and receives at once: the larger power for the whole communicating time
comm_is() { # run id, watts -> the rows whose comm_j is not watts x (busy - compute_s)
  q $db "select count(*) from agent_rounds a join rounds r using (run_id, round) where run_id = $1 and
    abs(comm_j - $2 * ((t_end - t_start) - a.idle_s - offline_s - compute_s)) > 1e-12"
}
run $db --timing-only --set agents.power_tx=3W --set agents.power_rx=1W
check "power_tx 3 W, power_rx 1 W: runs" test $? -eq 0
check "... a ring's member is charged 3 W while it communicates" test "$(comm_is 1 3)" = 0
run $db --timing-only --set agents.power_tx=1W --set agents.power_rx=3W
check "power_tx 1 W, power_rx 3 W: 3 W as well" test "$(comm_is 2 3)" = 0
run $db --timing-only --set agents.power_tx=1W --set agents.power_rx=3W --set network.model=fifo
check "fifo: a ring is booked both ways, 3 W" test "$(comm_is 3 3)" = 0
check "comm_j is not zero" test "$(q $db "select count(*) from agent_rounds where run_id = 1 and comm_j > 0")" = 48
check "runs.config writes power_tx and power_rx, not power_comm" \
  test "$(q $db "select instr(config, 'power_tx = 3 W') > 0 and instr(config, 'power_rx = 1 W') > 0 and instr(config, 'power_comm') = 0 from runs where id = 1")" = 1

# --- power_comm is both: the same rows, and the same runs.config, as power_tx = power_rx
run $db --timing-only --set agents.power_comm=1.5W --set agents.power_compute=2W
run $db --timing-only --set agents.power_tx=1500mW --set agents.power_rx=1.5W --set agents.power_compute=2W
check "power_tx = power_rx = power_comm: the same rows" \
  test "$(dump_rows $db r.id | grep -v '^runs' | awk -F'|' '$2 == 4' | cut -d'|' -f3- | md5sum)" = \
       "$(dump_rows $db r.id | grep -v '^runs' | awk -F'|' '$2 == 5' | cut -d'|' -f3- | md5sum)"
check "... and runs.config says power_comm for both" \
  test "$(q $db "select count(*) from runs where id in (4, 5) and instr(config, 'power_comm = 1.5 W') > 0 and instr(config, 'power_tx') = 0")" = 2
# a group that overrides one direction of [agents]' power_comm
run $db --timing-only --set agents.power_comm=1W --set agents.slow.power_rx=4W
check "a group's own power_rx over [agents]' power_comm: runs" test $? -eq 0
check "... the group writes power_tx and power_rx, [agents] power_comm" \
  test "$(q $db "select instr(config, 'power_tx = 1 W') > 0 and instr(config, 'power_rx = 4 W') > 0 and instr(config, 'power_comm = 1 W') > 0 from runs where id = 6")" = 1
check "... the slow agents (2, 3) receive at 4 W, the others at 1 W" \
  test "$(q $db "select count(*) from agent_rounds a join rounds r using (run_id, round) where run_id = 6 and
    abs(comm_j - (case when agent >= 2 then 4 else 1 end) * ((t_end - t_start) - a.idle_s - offline_s - compute_s)) <= 1e-12")" = 48

# --- draws: the same distribution is one draw (power_comm's), power_rx's own comes last
U="uniform(1 W, 3 W)"
run $db --timing-only --set "agents.power_comm=$U" --set "agents.power_compute=$U"
run $db --timing-only --set "agents.power_tx=$U" --set "agents.power_rx=$U" --set "agents.power_compute=$U"
run $db --timing-only --set "agents.power_tx=$U" --set "agents.power_rx=uniform(4 W, 5 W)" --set "agents.power_compute=$U"
check "power_tx = power_rx = one distribution: the rows of power_comm" \
  test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round, agent) where a.run_id = 7 and b.run_id = 8
    and a.comm_j = b.comm_j and a.compute_j = b.compute_j")" = 48
check "power_rx drawn apart: power_compute's and power_tx's draws are unchanged" \
  test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round, agent) where a.run_id = 7 and b.run_id = 9
    and a.compute_j = b.compute_j and a.comm_j <> b.comm_j")" = 48

# --- train = timing, and determinism (1 and 2 jobs)
P="--set agents.power_tx=2.5W --set agents.power_rx=uniform(0.5W,1W) --set agents.power_compute=3W --set agents.power_idle=0.2W"
rm -f $tmp/tt.db
run $tmp/tt.db $P
run $tmp/tt.db $P --timing-only
check "train and timing mode: the same joules" test "$(q $tmp/tt.db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
  where a.run_id = 1 and b.run_id = 2 and a.comm_j = b.comm_j and a.compute_j = b.compute_j and a.idle_j = b.idle_j")" = 48
run $tmp/tt.db $P --timing-only
check "the same run twice: the same rows" test "$(q $tmp/tt.db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
  where a.run_id = 2 and b.run_id = 3 and a.comm_j = b.comm_j")" = 48
sw=$tmp/sweep.ini
cp $S $sw
printf '\n[sweep]\nnetwork.model = maxmin, fifo\nagents.power_rx = 1 W, 4 W\n' >> $sw
"$HETSIM" sweep $sw --db $tmp/j1.db --jobs 1 --timing-only --quiet --set agents.power_tx=2W > /dev/null
"$HETSIM" sweep $sw --db $tmp/j2.db --jobs 2 --timing-only --quiet --set agents.power_tx=2W > /dev/null
check "a sweep over power_rx: 4 runs" test "$(q $tmp/j1.db "select count(*) from runs where status = 'done'")" = 4
check "... the same rows with 1 and 2 jobs" test "$(dump_rows $tmp/j1.db r.name,r.config | md5sum)" = "$(dump_rows $tmp/j2.db r.name,r.config | md5sum)"

# --- energy-aware selection: the download (bw(server -> i) = min(1 MB/s, the client's
# downlink 0.5 MB/s): 2704 B in 5.408 ms) at power_rx, the upload (2.704 ms) at power_tx;
# with 4 mJ in the battery and nothing else drawing, 1 W sending pays (2.704 mJ) and 1 W
# receiving does not (5.408 mJ); the slow group is on mains and always fits
F=tests/fixtures/scenarios/selection.ini
E="--set agents.uplink=1MB/s --set agents.downlink=500kB/s --set agents.battery=4mJ --set agents.slow.battery=0J --set method.fedavg.selection=energy"
"$HETSIM" run $F --db $tmp/s.db --timing-only --quiet $E --set agents.power_tx=1W > /dev/null
"$HETSIM" run $F --db $tmp/s.db --timing-only --quiet $E --set agents.power_rx=1W > /dev/null
"$HETSIM" run $F --db $tmp/s.db --timing-only --quiet $E --set agents.power_comm=1W > /dev/null
first() { q $tmp/s.db "select group_concat(agent) from (select agent from agent_rounds where run_id = $1 and round = 0 and compute_s > 0 order by agent)"; }
check "selection, 1 W sending: every client pays its first job" test "$(first 1)" = "0,1,2,3,4,5,6,7"
check "selection, 1 W receiving: only the mains-powered" test "$(first 2)" = "6,7"
check "selection, power_comm 1 W (both): only the mains-powered" test "$(first 3)" = "6,7"

# --- bad inputs: exit 2 with FILE:LINE (or the --set argument), no database
refused_appended "negative power_tx" $S "power_tx = -2 W" "outside \[0, 1e+09\]" "" --timing-only
refused_appended "negative power_rx in a distribution" $S "power_rx = uniform(-1 W, 2 W)" "the distribution's value -1 is outside" "" --timing-only
refused_appended "power_rx in joules" $S "power_rx = 2 J" "unknown unit" "" --timing-only
refused_appended "power_tx other than power_comm" $S "power_comm = 2 W\npower_tx = 3 W" "contradicts power_comm = 2 W (.*bad.ini:$(( $(wc -l < $S) + 1 )))" "" --timing-only
refused_appended "power_rx other than power_comm" $S "power_comm = 2 W\npower_rx = uniform(1 W, 2 W)" "contradicts power_comm" "" --timing-only
refused_appended "power_tx as a trace" $S "power_tx = trace(x.csv)" "trace() is available for" "" --timing-only
cp $S $tmp/ok.ini; printf 'power_comm = 2 W\npower_tx = 2000 mW\n' >> $tmp/ok.ini
"$HETSIM" run $tmp/ok.ini --db $tmp/ok.db --timing-only --quiet > /dev/null
check "power_tx equal to power_comm in the same section: accepted" test $? -eq 0
rm -f $tmp/bad.db
"$HETSIM" run $S --db $tmp/bad.db --timing-only --quiet --set agents.power_comm=2W --set agents.power_tx=3W 2> $tmp/bad.err
check "--set power_tx against --set power_comm: exit 2" test $? -eq 2
check "... names the --set argument" grep -q -- "--set agents.power_tx=3W: contradicts power_comm = 2W (--set agents.power_comm=2W)" $tmp/bad.err
check "... no database" test ! -e $tmp/bad.db
# written in two places, the later overrides: --set over the file
cp $S $tmp/over.ini; printf 'power_comm = 2 W\n' >> $tmp/over.ini
"$HETSIM" run $tmp/over.ini --db $tmp/over.db --timing-only --quiet --set agents.slow.power_tx=3W > /dev/null
check "--set power_tx over the file's power_comm: runs" test $? -eq 0
check "... sends at 3 W, receives at the file's 2 W" \
  test "$(q $tmp/over.db "select instr(config, 'power_tx = 3 W') > 0 and instr(config, 'power_rx = 2 W') > 0 from runs where id = 1")" = 1
cp $S $tmp/over.ini; printf 'power_tx = 3 W\npower_rx = 1 W\n' >> $tmp/over.ini
"$HETSIM" run $tmp/over.ini --db $tmp/over.db --timing-only --quiet --set agents.slow.power_comm=500mW > /dev/null
check "--set power_comm over the file's power_tx and power_rx: runs" test $? -eq 0
check "... both are power_comm's" test "$(q $tmp/over.db "select count(*) from agent_rounds a join rounds r using (run_id, round)
  where run_id = 2 and agent >= 2 and abs(comm_j - 0.5 * ((t_end - t_start) - a.idle_s - offline_s - compute_s)) <= 1e-12")" = 24

finish energy_radio.sh
