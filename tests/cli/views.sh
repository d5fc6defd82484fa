#!/usr/bin/env bash
# The database's views against `hetsim report`: run_summary gives, column for column, what
# the report's runs table (--csv) prints, for a database of every scenario in scenarios/
# (timing mode, or train mode where timing mode refuses the file: lib.bash mode_for; 2
# rounds; sweeps with one seed per point), train-mode runs that reach a target (time to
# target, accuracy) with ComDML's pairings, and the report's hand-made
# fixture (tests/fixtures/store/report_fixture.sql: a failed run, a running one, an empty
# one, a seed of 2^64-1). Numbers compare exactly: the report's %.17g text read back as
# REAL by SQLite equals the view's double. Also: time_to_accuracy and agent_summary
# against plain queries, run_params pivots a sweep by sigma without parsing text, and
# schema_columns describes every column of every table and view.
. "$(dirname "$0")/lib.bash"
top=$(cd "$(dirname "$0")/../.." && pwd)

db="$tmp/all.db"
n=0
for f in "$top"/scenarios/*.ini; do
  mode=$(mode_for "$f")
  if grep -q '^\[sweep\]' "$f"; then
    "$HETSIM" sweep "$f" --db "$db" --quiet $mode --set run.rounds=2 --set sweep.repeat=1 --jobs 2 \
      > /dev/null 2> "$tmp/err" || { echo "  $f: $(head -2 "$tmp/err")"; continue; }
  else
    "$HETSIM" run "$f" --db "$db" --quiet $mode --set run.rounds=2 > /dev/null 2> "$tmp/err" ||
      { echo "  $f: $(head -2 "$tmp/err")"; continue; }
  fi
  n=$((n + 1))
done
check "every scenario ran into one database ($n)" test "$n" -eq "$(ls "$top"/scenarios/*.ini | wc -l)"

# train mode: a small synthetic problem that reaches its target, with and without pairings
cat > "$tmp/train.ini" <<'INI'
[run]
method = comdml
rounds = 3
seed = 3
target_accuracy = 0.3
[data]
dataset = synthetic
train_samples = 1200
test_samples = 200
features = 16
classes = 4
[model]
arch = mlp
layers = 16,24,4
batch = 16
lr = 0.05
[agents]
count = 6
compute = lognormal(20 MFLOPS, 0.8)
bandwidth = uniform(1 Mbit/s, 20 Mbit/s)
latency = 5 ms
[agents.slow]
count = 2
compute = 2 MFLOPS
INI
for m in comdml sync localsgd; do
  "$HETSIM" run "$tmp/train.ini" --db "$db" --quiet --set run.method=$m > /dev/null 2> "$tmp/err" ||
    echo "  train $m: $(head -2 "$tmp/err")"
done
check "the train runs reached their target" test "$(q "$db" "select count(*) from run_summary where time_to_target_s is not null")" -ge 2

same_as_report "$db" > "$tmp/diff"
check "run_summary agrees with hetsim report on every column of every run ($(q "$db" "select count(*) from runs") runs)" \
  test ! -s "$tmp/diff"
head -5 "$tmp/diff"

# the report's fixture: a schema made by hetsim, the rows written by hand
"$HETSIM" run "$tmp/train.ini" --db "$tmp/fixture.db" --quiet --timing-only > /dev/null
for t in runs agents rounds agent_rounds pairings metrics run_params sweeps sqlite_sequence; do
  q "$tmp/fixture.db" "delete from $t"
done
sqlite3 "$tmp/fixture.db" < "$top/tests/fixtures/store/report_fixture.sql"
same_as_report "$tmp/fixture.db" > "$tmp/diff"
check "run_summary agrees with hetsim report on the report's hand-made fixture" test ! -s "$tmp/diff"
head -5 "$tmp/diff"

# time_to_accuracy against the metrics rows themselves
bad=$(q "$db" "select count(*) from time_to_accuracy a where a.time_s is not
  (select min(t) from metrics m where m.run_id = a.run_id and m.agent is null and m.test_accuracy >= a.accuracy)")
check "time_to_accuracy is the first time each accuracy was reached" test "$bad" -eq 0
check "... with the run's own target marked" \
  test "$(q "$db" "select count(*) from time_to_accuracy t join run_summary s on s.id = t.run_id
                   where t.is_target and t.accuracy = s.target_accuracy and t.time_s is s.time_to_target_s")" -ge 2
bad=$(q "$db" "select count(*) from agent_summary a where a.compute_s_total is not
  (select sum(compute_s) from agent_rounds r where r.run_id = a.run_id and r.agent = a.agent)")
check "agent_summary sums each agent's rounds" test "$bad" -eq 0
check "... one row per agent" test "$(q "$db" "select count(*) from agent_summary")" -eq "$(q "$db" "select count(*) from agents")"

# a sweep pivoted by sigma with no string parsing
sigma=$(q "$db" "select count(distinct p.value_num) from run_params p join runs r on r.id = p.run_id
                 where r.name = 'sweep-demo' and p.section = 'agents' and p.key = 'compute.sigma' and p.swept")
check "run_params holds the swept sigma of sweep-demo as a number ($sigma values)" test "$sigma" -ge 2
check "... every run has its resolved keys" \
  test "$(q "$db" "select count(*) from runs r where not exists (select 1 from run_params p where p.run_id = r.id)")" -eq 0

# schema_columns: every column of every table and view, with a description
missing=$(q "$db" "select m.name || '.' || c.name from sqlite_master m, pragma_table_info(m.name) c
  where m.type in ('table', 'view') and m.name not in ('sqlite_sequence', 'run_targets')
  and not exists (select 1 from schema_columns s where s.table_name = m.name and s.column_name = c.name and s.doc <> '')")
check "schema_columns describes every column of every table and view" test -z "$missing"
echo "$missing" | head -3

# the reference: the committed file is what the binary writes, and its queries run
"$HETSIM" help database > "$tmp/database.md"
check "docs/database.md is what 'hetsim help database' writes (make docs)" \
  cmp -s "$tmp/database.md" "$top/docs/database.md"
sed -n '/^```sql$/,/^```$/p' "$top/docs/database.md" | grep -v '^```' > "$tmp/queries.sql"
sqlite3 "$db" < "$tmp/queries.sql" > /dev/null 2> "$tmp/err"
check "... and its example queries run" test $? -eq 0 -a ! -s "$tmp/err"
check "... on a sweep pivoted by sigma (one row per method and sigma)" \
  test "$(sed -n '/^-- a sweep over sigma/,/;$/p' "$top/docs/database.md" | sqlite3 "$db" | wc -l)" -ge 4

finish views.sh
