#!/usr/bin/env bash
# Unstable links end to end (docs/network.md#unstable-links) on
# tests/fixtures/scenarios/lossy.ini (dpsgd on a ring of 6, timing mode): lossless runs
# write nothing new (NULL lost columns, no loss keys in runs.config); retransmit puts one
# more message's bytes on the wire per lost attempt; drop puts none and still ends every
# round; train = timing and identical rows with 1 and 2 jobs under loss and outage; every
# method that takes loss runs under it (every method has it now: rog and motor too, and
# under drop they keep the lossless bytes); an outage delays a round by its length; bad
# inputs exit 2 with FILE:LINE before any database.
. "$(dirname "$0")/lib.bash"
S=tests/fixtures/scenarios/lossy.ini
O="agents.outage=trace(tests/fixtures/scenarios/lossy-outage.csv)"
db=$tmp/l.db
run() { "$HETSIM" run $S --db $db --quiet "$@" 2>> $tmp/err; }

# --- lossless: nothing of it in the rows or the config (run 1)
run
check "lossless: rounds.lost is NULL" test "$(q $db "select count(*) from rounds where run_id = 1 and lost is null")" = 4
check "lossless: agent_rounds.lost is NULL" test "$(q $db "select count(*) from agent_rounds where run_id = 1 and lost is null")" = 24
check "lossless: runs.config says nothing of loss" test "$(q $db "select instr(config, char(10) || 'loss =') + instr(config, 'loss_mode') + instr(config, 'rto =') + instr(config, 'outage =') from runs where id = 1")" = 0

# --- retransmit (run 2): 6 agents x 2 neighbours x 8 steps = 96 messages a round, each
# lost attempt one more message of the same bytes
run --set agents.loss=0.05
B=$(q $db "select bytes / 96 from rounds where run_id = 1 and round = 0")
check "retransmit: some attempts were lost" test "$(q $db "select sum(lost) > 0 from rounds where run_id = 2")" = 1
check "retransmit: bytes = (96 + lost) messages per round" test "$(q $db "select count(*) from rounds where run_id = 2 and abs(bytes - (96 + lost) * $B) < 1e-6")" = 4
check "retransmit: rounds.lost is the agents' sum" test "$(q $db "select count(*) from rounds r where run_id = 2 and lost =
  (select sum(lost) from agent_rounds a where a.run_id = 2 and a.round = r.round)")" = 4
check "retransmit: every round is longer than lossless" test "$(q $db "select count(*) from rounds a join rounds b using (round)
  where a.run_id = 1 and b.run_id = 2 and b.t_end - b.t_start > a.t_end - a.t_start")" = 4
check "retransmit: runs.config writes loss, loss_mode and rto" test "$(q $db "select instr(config, 'loss = 0.05') > 0 and instr(config, 'loss_mode = retransmit') > 0 and instr(config, 'rto = 0.2') > 0 from runs where id = 2")" = 1

# --- drop (run 3): no resend, the bytes of the lossless run
run --set agents.loss=0.05 --set network.loss_mode=drop
check "drop: the bytes of the lossless run" test "$(q $db "select count(*) from rounds a join rounds b using (round) where a.run_id = 1 and b.run_id = 3 and a.bytes = b.bytes")" = 4
check "drop: some messages were lost and every round ended" test "$(q $db "select sum(lost) > 0 and count(*) = 4 from rounds where run_id = 3")" = 1
# a larger rto: a lost message costs its receiver the wait (run 4)
run --set agents.loss=0.05 --set network.loss_mode=drop --set network.rto=1s
check "drop: the same losses (same draws) cost more with a longer rto" test "$(q $db "select count(*) from rounds a join rounds b using (round)
  where a.run_id = 3 and b.run_id = 4 and a.lost = b.lost and b.t_end > a.t_end")" = 4

# --- train = timing, under retransmit, drop and an outage (runs 5-10)
for set in "agents.loss=0.05" "network.loss_mode=drop" "$O"; do
  extra=(--set "$set"); [ "$set" = network.loss_mode=drop ] && extra+=(--set agents.loss=0.05)
  run "${extra[@]}"; t=$(q $db "select max(id) from runs")
  run "${extra[@]}" --set run.mode=train; r=$(q $db "select max(id) from runs")
  check "train = timing ($set)" test "$(q $db "select count(*) from rounds a join rounds b using (round) where a.run_id = $t and b.run_id = $r
    and a.t_end = b.t_end and a.bytes = b.bytes and a.idle_s = b.idle_s and a.lost is b.lost")" = 4
  check "train = timing ($set): agent rows" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
    where a.run_id = $t and b.run_id = $r and a.compute_s = b.compute_s and a.comm_s = b.comm_s and a.idle_s = b.idle_s and a.lost is b.lost")" = 24
done
check "train mode learns under drop" test "$(q $db "select count(*) from metrics where run_id = 8 and test_accuracy > 0")" -gt 0

# --- an outage: agent 0's links are down on [0.5 s, 1.5 s), within round 1 of the
# lossless run ([0.256, 0.513)): every neighbour waits for its model, so the round is
# longer by the 1 s plus what had not been sent when the links went down
run --set "$O"; o=$(q $db "select max(id) from runs")
check "outage: round 0 is the lossless one" test "$(q $db "select count(*) from rounds a join rounds b using (round) where a.run_id = 1 and b.run_id = $o and round = 0 and a.t_end = b.t_end")" = 1
check "outage: round 1 ends 1 s later" test "$(q $db "select count(*) from rounds a join rounds b using (round) where a.run_id = 1 and b.run_id = $o and round = 1
  and abs((b.t_end - a.t_end) - 1) < 1e-9")" = 1
check "outage: runs.config names the trace" test "$(q $db "select instr(config, 'outage = trace(') > 0 from runs where id = $o")" = 1

# --- determinism: a sweep over loss and the mode, 1 and 2 jobs, identical rows
cat > $tmp/sweep.ini <<EOF
$(cat $S)
[sweep]
agents.loss = 0, 0.02, 0.1
network.loss_mode = retransmit, drop
EOF
sed -i "s|^\[run\]|[run]|" $tmp/sweep.ini
cp tests/fixtures/scenarios/lossy-outage.csv $tmp/
same_rows_with_1_and_2_jobs sweep $tmp/sweep.ini $tmp/s
check "sweep: loss 0 points are lossless (NULL lost)" test "$(q $tmp/s1.db "select count(*) from rounds r join runs u on u.id = r.run_id where u.point like 'agents.loss=0 %' and r.lost is null")" = 8

# --- rog (parameter server, cut at a deadline) and motor under loss, train mode: the same
# rows with 1 job and 1 thread as with 2 jobs and 2 threads
cat > $tmp/rm.ini <<EOF
$(cat $S)
[method.rog]
exchange = ps
cut = deadline
budget = 5 ms
[sweep]
run.method = rog, motor
network.loss_mode = retransmit, drop
EOF
sed -i "s/^mode = timing/mode = train/; s/^rounds = 4/rounds = 2/" $tmp/rm.ini
"$HETSIM" sweep $tmp/rm.ini --db $tmp/rm1.db --jobs 1 --quiet --set agents.loss=0.05 --set run.threads=1 > /dev/null 2>> $tmp/err
check "rog and motor sweep, 1 job: exit 0" test $? -eq 0
"$HETSIM" sweep $tmp/rm.ini --db $tmp/rm2.db --jobs 2 --quiet --set agents.loss=0.05 --set run.threads=2 > /dev/null 2>> $tmp/err
check "rog and motor sweep, 2 jobs: exit 0" test $? -eq 0
check "rog and motor under loss: the same rows with 1 and 2 jobs and threads" test "$(dump_rows $tmp/rm1.db r.point | md5sum)" = "$(dump_rows $tmp/rm2.db r.point | md5sum)"
check "rog and motor under loss: 4 runs, each lost attempts and learned" test "$(q $tmp/rm1.db "select count(distinct r.run_id) from rounds r join metrics m using (run_id) where r.lost > 0 and m.test_accuracy > 0")" = 4

# --- every method that takes loss runs under it (timing, 2 rounds)
cat > $tmp/server.ini <<EOF
$(cat $S)
[server]
compute = 100 MFLOPS
bandwidth = 1 MB/s
EOF
for m in dpsgd adpsgd token swift divshare fedavg fedbuff asgd rennala ringmaster rog motor; do
  "$HETSIM" run $tmp/server.ini --db $tmp/m.db --quiet --set run.method=$m --set run.rounds=2 --set agents.loss=0.1 2> $tmp/m.err
  check "$m runs under loss 0.1" test $? -eq 0
done
check "every method lost some attempts" test "$(q $tmp/m.db "select count(distinct run_id) from rounds where lost > 0")" = 12
# drop: motor mixes over the models that arrived, rog's parameter server (cut = start)
# steps on the pushes that arrived; neither sends anything again: the lossless bytes
for m in "motor" "rog --set method.rog.exchange=ps"; do
  "$HETSIM" run $S --db $tmp/d.db --quiet --set run.method=$m > /dev/null 2>> $tmp/err; a=$(q $tmp/d.db "select max(id) from runs")
  "$HETSIM" run $S --db $tmp/d.db --quiet --set run.method=$m --set agents.loss=0.1 --set network.loss_mode=drop > /dev/null 2>> $tmp/err
  check "$m, drop: exit 0" test $? -eq 0
  b=$(q $tmp/d.db "select max(id) from runs")
  check "$m, drop: lost some, the lossless bytes, every round" test "$(q $tmp/d.db "select count(*) from rounds a join rounds b using (round)
    where a.run_id = $a and b.run_id = $b and a.bytes = b.bytes and b.lost > 0")" = 4
done

# --- a database written before the lost columns: it opens, gains them (NULL in the old
# rows), and a lossless run there has the older binary's rows
old=${HETSIM_OLD:-}  # a hetsim built before these columns, if the tester has one
if [ -x "$old" ] && [ "$("$old" run $S --db $tmp/old.db --quiet > /dev/null 2>&1; q $tmp/old.db "select count(*) from pragma_table_info('rounds') where name = 'lost'")" = 0 ]; then
  "$HETSIM" run $S --db $tmp/old.db --quiet 2>> $tmp/err
  check "an older file takes a lossless run" test $? -eq 0
  check "an older file: the lossless rounds are the older binary's" test "$(q $tmp/old.db "select count(*) from rounds a join rounds b using (round)
    where a.run_id = 1 and b.run_id = 2 and a.t_start = b.t_start and a.t_end = b.t_end and a.idle_s = b.idle_s and a.bytes = b.bytes
    and a.lost is null and b.lost is null")" = 4
  check "an older file: the agents' rows too" test "$(q $tmp/old.db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
    where a.run_id = 1 and b.run_id = 2 and a.compute_s = b.compute_s and a.comm_s = b.comm_s and a.idle_s = b.idle_s")" = 24
else
  echo "skip the older database: no $old without the lost columns (HETSIM_OLD)"
fi
"$HETSIM" run $S --db $tmp/drop.db --quiet > /dev/null 2>> $tmp/err
q $tmp/drop.db "alter table rounds drop column lost"; q $tmp/drop.db "alter table agent_rounds drop column lost"
"$HETSIM" report $tmp/drop.db --csv > /dev/null
check "a file without the lost columns: hetsim report reads it" test $? -eq 0
"$HETSIM" run $S --db $tmp/drop.db --quiet --set agents.loss=0.05 > /dev/null 2>> $tmp/err
check "a file without the lost columns: a lossy run is added" test $? -eq 0
check "a file without the lost columns: they are back, NULL in the old rows" \
  test "$(q $tmp/drop.db "select count(lost) || ',' || count(*) from agent_rounds")" = "24,48"

# --- bad inputs: exit 2 with FILE:LINE, before any database
bad_input() { # name, text to append, expected message, line (default: the file's last), method
  sed "s/^method = dpsgd/method = ${5:-dpsgd}/" $S > $tmp/base.ini
  cp tests/fixtures/scenarios/lossy-outage.csv $tmp/
  refused_appended "$1" $tmp/base.ini "$2" "$3" "${4:-}"
}
bad_input "loss of 1" "loss = 1" "must be below 1"
bad_input "loss above 1" "loss = 1.5" "outside"
bad_input "a negative loss" "loss = -0.01" "outside"
bad_input "drop with rog's all-gather" "loss = 0.1\n[network]\nloss_mode = drop" "loss_mode = drop: rog's exchange = gather all-gathers" "" rog
bad_input "drop with a ring all-reduce" "loss = 0.1\n[network]\nloss_mode = drop" "method sync averages by ring all-reduce, which needs every chunk" "" sync
bad_input "drop with a method that waits" "loss = 0.1\n[network]\nloss_mode = drop" "method adpsgd waits for every message" "" adpsgd
bad_input "drop with CHOCO" "loss = 0.1\n[network]\nloss_mode = drop\n[compression]\nscheme = topk" "loss_mode = drop: dpsgd's \[compression\]" $(($(wc -l < $S) + 3))
bad_input "an rto of a day and more" "loss = 0.1\n[network]\nrto = 2 d" "outside"
printf 'agent,time,value\ndefault,0,1\n2,0,1\n2,3 s,0\n' > $tmp/never.csv
bad_input "an outage that never comes back" "outage = trace(never.csv)" "node 2's link goes down at t = 3 s and never comes back"
printf 'agent,time,value\ndefault,0,0\n' > $tmp/never.csv
bad_input "an outage down all the time" "outage = trace(never.csv)" "node 0's link goes down at t = 0 s and never comes back"
bad_input "an outage under fifo" "outage = trace(lossy-outage.csv)\n[network]\nmodel = fifo" "needs \[network\] model = maxmin" $(($(wc -l < $S) + 1))
bad_input "an outage that is not a trace" "outage = always" "expected none, trace(FILE.csv) or markov"

finish links.sh
