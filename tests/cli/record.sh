#!/usr/bin/env bash
# [run] record = agents | summary (docs/recording.md): summary writes no agent_rounds rows
# and every other row as agents does (rounds, runs, agents, metrics); the default writes
# the per-agent rows and leaves the key out of runs.config; a bad value exits 2 naming
# FILE:LINE; `hetsim report` and `hetsim plot` say what a summary run lacks.
. "$(dirname "$0")/lib.bash"

# every row of a database except agent_rounds, without ids and the run's name/config
other_rows() { # db
  q "$1" "select round, quote(t_start), quote(t_end), quote(idle_s), quote(bytes), quote(extra), quote(energy_j),
                 quote(lost) from rounds order by run_id, rowid"
  q "$1" "select quote(sim_time_s), rounds_done, status, quote(final_accuracy) from runs order by id"
  q "$1" "select agent, grp, quote(compute), quote(uplink), quote(downlink), samples from agents order by run_id, rowid"
  q "$1" "select quote(t), agent, quote(test_accuracy) from metrics order by run_id, rowid"
}

both() { # name, scenario, run arguments... : one database with each record
  local name=$1 file=$2; shift 2
  rm -f "$tmp/$name-agents.db" "$tmp/$name-summary.db"
  "$HETSIM" run "$file" "$@" --db "$tmp/$name-agents.db" --quiet > /dev/null
  check "$name: record = agents runs" test $? -eq 0
  "$HETSIM" run "$file" "$@" --set run.record=summary --db "$tmp/$name-summary.db" --quiet > /dev/null
  check "$name: record = summary runs" test $? -eq 0
  local rows
  rows=$(q "$tmp/$name-agents.db" "select count(*) from agent_rounds")
  check "$name: agents writes agent_rounds ($rows rows)" test "$rows" -gt 0
  check "$name: summary writes no agent_rounds" test "$(q "$tmp/$name-summary.db" "select count(*) from agent_rounds")" -eq 0
  other_rows "$tmp/$name-agents.db" > "$tmp/$name-agents.rows"
  other_rows "$tmp/$name-summary.db" > "$tmp/$name-summary.rows"
  check "$name: rounds, runs, agents and metrics rows identical" cmp -s "$tmp/$name-agents.rows" "$tmp/$name-summary.rows"
  check "$name: the rounds rows are there" test "$(q "$tmp/$name-summary.db" "select count(*) from rounds")" -gt 0
  # the round's idle time is the sum of its agents' (formed either way)
  check "$name: rounds.idle_s = sum(agent_rounds.idle_s) per round" test -z "$(q "$tmp/$name-agents.db" \
    "select r.round from rounds r join (select round, sum(idle_s) s from agent_rounds group by round) a
       on a.round = r.round where abs(r.idle_s - a.s) > 1e-9 * (1 + r.idle_s)")"
}

cat > "$tmp/fedavg.ini" <<'EOF'
[run]
method = fedavg
rounds = 3
mode = timing
[model]
arch = mlp
layers = 784,64,10
[method.fedavg]
local_steps = 5
participation = 0.5
[agents]
count = 300
compute = lognormal(1 GFLOPS, 0.5)
bandwidth = uniform(10 Mbit/s, 100 Mbit/s)
latency = uniform(1 ms, 20 ms)
[server]
compute = 50 GFLOPS
bandwidth = 1 Gbit/s
EOF
both fedavg "$tmp/fedavg.ini"
both battery scenarios/energy-battery.ini --timing-only
both quickstart scenarios/quickstart.ini --timing-only
both train scenarios/quickstart.ini --set run.rounds=1 --set run.method=localsgd

# runs.config: the default leaves the key out (the configs of earlier runs stay), summary writes it
check "agents: runs.config has no record line" test -z "$(q "$tmp/fedavg-agents.db" "select config from runs" | grep '^record')"
check "summary: runs.config says record = summary" \
  test "$(q "$tmp/fedavg-summary.db" "select config from runs" | grep '^record')" = "record = summary"
rm -f "$tmp/again.db"
q "$tmp/fedavg-summary.db" "select config from runs" > "$tmp/again.ini"
"$HETSIM" run "$tmp/again.ini" --db "$tmp/again.db" --quiet > /dev/null
check "summary's runs.config runs again without agent_rounds" \
  test "$(q "$tmp/again.db" "select count(*) from agent_rounds")" = 0 -a "$(q "$tmp/again.db" "select count(*) from rounds")" = 3

# bad values: exit 2, where, no database
sed 's/^mode = timing$/mode = timing\nrecord = everything/' "$tmp/fedavg.ini" > "$tmp/bad.ini"
rm -f "$tmp/bad.db"
"$HETSIM" run "$tmp/bad.ini" --db "$tmp/bad.db" --quiet 2> "$tmp/err"
status=$?
check "record = everything exits 2 (status $status)" test $status -eq 2
check "record = everything is named FILE:LINE" grep -q "bad.ini:5:" "$tmp/err"
check "record = everything writes no database" test ! -e "$tmp/bad.db"
"$HETSIM" run "$tmp/fedavg.ini" --set run.record=rows --db "$tmp/bad.db" --quiet 2> "$tmp/err"
status=$?
check "--set run.record=rows exits 2 (status $status)" test $status -eq 2
check "--set run.record=rows is named" grep -qF -- "--set run.record=rows" "$tmp/err"

# report: the same idle share (from the rounds), a note on stderr, none for agents
"$HETSIM" report "$tmp/fedavg-agents.db" > "$tmp/agents.txt" 2> "$tmp/agents.err"
"$HETSIM" report "$tmp/fedavg-summary.db" > "$tmp/summary.txt" 2> "$tmp/summary.err"
check "report: agents prints no note" test ! -s "$tmp/agents.err"
check "report: summary says what it lacks" grep -q "record = summary: no per-agent rows" "$tmp/summary.err"
idle() { "$HETSIM" report "$1" --csv 2> /dev/null | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "idle_share") c = i }
                                                      NR == 2 { print $c }'; }
a=$(idle "$tmp/fedavg-agents.db") s=$(idle "$tmp/fedavg-summary.db")
check "report: idle share of summary ($s) = agents' ($a) to 1e-12" \
  awk -v a="$a" -v s="$s" 'BEGIN { exit !(a > 0 && (a - s < 1e-12 * a) && (s - a < 1e-12 * a)) }'
check "report: summary's runs table = the view run_summary" test -z "$(same_as_report "$tmp/fedavg-summary.db")"
check "report: quickstart summary's runs table = run_summary" test -z "$(same_as_report "$tmp/quickstart-summary.db")"
check "report --csv of summary stays CSV (the note goes to stderr)" \
  test "$("$HETSIM" report "$tmp/fedavg-summary.db" --csv 2> /dev/null | wc -l)" -eq 2
offload() { "$HETSIM" report "$1" --csv 2> /dev/null | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "offload_share") c = i }
                                                         NR == 2 { print c ? $c : "none" }'; }
o=$(offload "$tmp/quickstart-agents.db")
check "report: an agents comdml run has an offloading share ('$o')" test -n "$o" -a "$o" != none
o=$(offload "$tmp/quickstart-summary.db")
check "report: a summary comdml run has none ('$o')" test -z "$o" -o "$o" = none

# a sweep's database recorded with summary (bench/sweep's small-summary workload; 2 jobs):
# every reader of a sweep works on it and gives the agents sweep's figures
cat > "$tmp/sweep.ini" <<'EOF'
[run]
method = sync
rounds = 4
mode = timing
[model]
layers = 784,64,10
[agents]
count = 16
compute = lognormal(1 GFLOPS, 0.8)
bandwidth = uniform(10 Mbit/s, 100 Mbit/s)
[sweep]
agents.latency = 1 ms, 5 ms
repeat = 3
EOF
rm -f "$tmp/sweep-agents.db" "$tmp/sweep-summary.db"
"$HETSIM" sweep "$tmp/sweep.ini" --db "$tmp/sweep-agents.db" --jobs 2 --quiet > /dev/null
check "sweep: record = agents runs" test $? -eq 0
"$HETSIM" sweep "$tmp/sweep.ini" --set run.record=summary --db "$tmp/sweep-summary.db" --jobs 2 --quiet > /dev/null
check "sweep: record = summary runs" test $? -eq 0
check "sweep: summary wrote its 6 runs, done, without agent_rounds" test "$(q "$tmp/sweep-summary.db" \
  "select count(*) || ' ' || sum(status = 'done') || ' ' || (select count(*) from agent_rounds) from runs")" = "6 6 0"
# the points table without its sweep column (the id hashes the configuration, record included)
points() { "$HETSIM" report "$1" --table points --csv 2> /dev/null |
           awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "sweep") c = i }
                    { out = ""; for (i = 1; i <= NF; i++) if (i != c) out = out $i ","; print out }'; }
points "$tmp/sweep-agents.db" > "$tmp/points-agents.csv"
points "$tmp/sweep-summary.db" > "$tmp/points-summary.csv"
check "sweep: report --table points has both points, either record" \
  test "$(wc -l < "$tmp/points-agents.csv") $(wc -l < "$tmp/points-summary.csv")" = "3 3"
check "sweep: summary's points table = agents' (idle share from the rounds, to 1e-12)" \
  awk -F, 'NR == FNR { a[FNR] = $0; next }
           FNR == 1 { for (i = 1; i < NF; i++) if ($i ~ /idle/) c[i] = 1; if ($0 != a[1]) bad = 1; next }
           { split(a[FNR], x, ","); for (i = 1; i < NF; i++)
               if (i in c) { d = x[i] - $i; if (d < 0) d = -d; if (d > 1e-12) bad = 1 } else if (x[i] != $i) bad = 1 }
           END { exit bad || FNR != 3 }' "$tmp/points-agents.csv" "$tmp/points-summary.csv"
id=$(q "$tmp/sweep-summary.db" "select sweep from sweeps")
"$HETSIM" report "$tmp/sweep-summary.db" --sweep "$id" --csv > "$tmp/sweep-report.csv" 2> /dev/null
check "sweep: report --sweep $id lists its 6 runs" test $? -eq 0 -a "$(wc -l < "$tmp/sweep-report.csv")" -eq 7
check "sweep: summary's runs table = the view run_summary" test -z "$(same_as_report "$tmp/sweep-summary.db")"
"$HETSIM" show "$tmp/sweep-summary.db" 6 > "$tmp/show.txt" 2>&1
check "sweep: show of a summary run exits 0" test $? -eq 0
check "sweep: show names the run's sweep" grep -q "sweep $id (run 6 of its 6" "$tmp/show.txt"
check "sweep: show gives its idle share" grep -Eq "^  idle_share +0\.[0-9]+" "$tmp/show.txt"
check "sweep: show's config says record = summary" grep -q "^record = summary" "$tmp/show.txt"
"$HETSIM" diff "$tmp/sweep-summary.db" 1 4 > "$tmp/diff.txt" 2>&1
check "sweep: diff of two summary runs exits 0 and names the latency" \
  test $? -eq 0 -a -n "$(grep 'agents.latency' "$tmp/diff.txt")"

# plot: the per-agent figures are skipped with the reason
if command -v gnuplot > /dev/null; then
  "$HETSIM" plot "$tmp/fedavg-summary.db" --out "$tmp/plots" --format svg > /dev/null 2> "$tmp/plot.err"
  check "plot of a summary run exits 0" test $? -eq 0
  check "plot: idle says record = summary" grep -q "skipped idle: .*record = summary" "$tmp/plot.err"
  check "plot: timeline says record = summary" grep -q "skipped timeline: .*record = summary" "$tmp/plot.err"
else
  echo "skip plot checks: no gnuplot"
fi

echo "record.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
