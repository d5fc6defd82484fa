#!/usr/bin/env bash
# Ring all-reduce methods under [agents] loss (docs/network.md#unstable-links, "Rings";
# sim/kernel/loss.c) on tests/fixtures/scenarios/lossy.ini (6 agents, timing mode): a sync
# run's lost chunks each put one more chunk (the model's bytes / 6) on the wire and
# lengthen every round; rounds.lost is the agents' sum; train = timing; the same rows with
# 1 and 2 jobs under both network models; every ring method runs under loss; drop is
# refused for them at FILE:LINE.
. "$(dirname "$0")/lib.bash"
S=tests/fixtures/scenarios/lossy.ini
db=$tmp/r.db
run() { "$HETSIM" run $S --db $db --quiet --set run.method=sync "$@" > /dev/null 2>> $tmp/err; }

# --- sync lossless (run 1) and at 5 % (run 2): 8 steps a round, each a ring of 6 x 2 x 5
# chunks of B / 6
run
run --set agents.loss=0.05
check "lossless sync: rounds.lost is NULL" test "$(q $db "select count(*) from rounds where run_id = 1 and lost is null")" = 4
check "sync under loss: chunks were lost" test "$(q $db "select sum(lost) > 0 from rounds where run_id = 2")" = 1
check "sync under loss: bytes = lossless + one chunk (B/6) per lost attempt" test "$(q $db "select count(*) from rounds a join rounds b using (round)
  where a.run_id = 1 and b.run_id = 2 and abs(b.bytes - a.bytes - b.lost * a.bytes / (8 * 10 * 6)) < 1e-6")" = 4
check "sync under loss: rounds.lost is the agents' sum" test "$(q $db "select count(*) from rounds r where run_id = 2 and lost =
  (select sum(lost) from agent_rounds a where a.run_id = 2 and a.round = r.round)")" = 4
check "sync under loss: every round is longer" test "$(q $db "select count(*) from rounds a join rounds b using (round)
  where a.run_id = 1 and b.run_id = 2 and b.t_end - b.t_start > a.t_end - a.t_start")" = 4

# --- train = timing, sync and localsgd, both models
for m in sync localsgd; do
  for model in maxmin fifo; do
    run --set run.method=$m --set network.model=$model --set agents.loss=0.05; t=$(q $db "select max(id) from runs")
    run --set run.method=$m --set network.model=$model --set agents.loss=0.05 --set run.mode=train; r=$(q $db "select max(id) from runs")
    check "train = timing ($m, $model)" test "$(q $db "select count(*) from rounds a join rounds b using (round) where a.run_id = $t and b.run_id = $r
      and a.t_end = b.t_end and a.bytes = b.bytes and a.idle_s = b.idle_s and a.lost = b.lost")" = 4
    check "train = timing ($m, $model): agent rows" test "$(q $db "select count(*) from agent_rounds a join agent_rounds b using (round, agent)
      where a.run_id = $t and b.run_id = $r and a.compute_s = b.compute_s and a.comm_s = b.comm_s and a.idle_s = b.idle_s and a.lost = b.lost")" = 24
  done
done

# --- determinism: a sweep over loss, methods and models, 1 and 2 jobs, identical rows
cat > $tmp/sweep.ini <<EOS
$(cat $S)
[sweep]
run.method = sync, localsgd
agents.loss = 0, 0.05
network.model = maxmin, fifo
EOS
same_rows_with_1_and_2_jobs sweep $tmp/sweep.ini $tmp/s

# --- every ring method runs under loss and loses chunks (2 rounds)
for m in sync localsgd qsr co2 comdml byzsgdnm ripples lsgd eager; do
  "$HETSIM" run $S --db $tmp/m.db --quiet --set run.method=$m --set run.rounds=2 --set agents.loss=0.1 > /dev/null 2> $tmp/m.err
  check "$m runs under loss 0.1" test $? -eq 0
done
check "every ring method lost some chunks" test "$(q $tmp/m.db "select count(distinct run_id) from rounds where lost > 0")" = 9

# --- drop: refused at FILE:LINE, before any database
sed 's/^method = dpsgd/method = localsgd/' $S > $tmp/base.ini
refused_appended "drop with localsgd" $tmp/base.ini "loss = 0.1\n[network]\nloss_mode = drop" \
  "method localsgd averages by ring all-reduce, which needs every chunk"

finish loss_ring.sh
