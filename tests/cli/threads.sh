#!/usr/bin/env bash
# CLI contract of train mode's worker threads: `--threads N` and `[run] threads` are
# checked like any input, and the database rows (every column but the wall-clock ones)
# are the same for 1, 2 and 3 threads, and for a sweep's --jobs x --threads shapes.
. "$(dirname "$0")/lib.bash"
# every table's rows in written order, without run ids and wall-clock columns (lib.bash)
dump() { dump_rows "$1" "r.name, r.seed, r.method"; } # db

cat > "$tmp/s.ini" <<'INI'
[run]
name = threads-test
method = comdml
seed = 3
rounds = 2
mode = train

[data]
dataset = synthetic
features = 20
classes = 5
train_samples = 3000
test_samples = 500

[model]
layers = 20,256,128,5
batch = 32
optimizer = momentum
lr = 0.05

[agents]
count = 8
compute = lognormal(2 GFLOPS, 0.8)
bandwidth = 20 MB/s
latency = 1 ms

[agents.slow]
count = 2
compute = 100 MFLOPS

[sweep]
run.method = comdml, localsgd, co2
INI

# ---- bad input: exit 2, named, no database ----
"$HETSIM" run "$tmp/s.ini" --threads 0 --db "$tmp/bad.db" 2> "$tmp/err"
check "--threads 0 exits 2" test $? -eq 2
check "--threads 0 names the option" grep -q -- "--threads needs a number in \[1, 1024\], got '0'" "$tmp/err"
"$HETSIM" run "$tmp/s.ini" --threads two --db "$tmp/bad.db" 2> /dev/null
check "--threads two exits 2" test $? -eq 2
sed 's/^mode = train/mode = train\nthreads = 2.5/' "$tmp/s.ini" > "$tmp/bad.ini"
"$HETSIM" run "$tmp/bad.ini" --db "$tmp/bad.db" 2> "$tmp/err"
check "[run] threads = 2.5 exits 2" test $? -eq 2
line=$(grep -n '^threads' "$tmp/bad.ini" | cut -d: -f1)
check "[run] threads = 2.5 names its line" grep -q "bad.ini:$line:.*threads" "$tmp/err"
check "bad threads write no database" test ! -e "$tmp/bad.db"
"$HETSIM" run --help | grep -q -- '--threads'; check "run --help documents --threads" test $? -eq 0

# ---- the same rows for every thread count ----
for n in 1 2 3; do
  "$HETSIM" run "$tmp/s.ini" --threads $n --db "$tmp/run$n.db" --quiet 2> /dev/null
  check "run with --threads $n exits 0" test $? -eq 0
  dump "$tmp/run$n.db" > "$tmp/run$n.txt"
done
check "runs wrote metrics" grep -q '^metrics' "$tmp/run1.txt"
check "2 threads: rows identical to 1" cmp -s "$tmp/run1.txt" "$tmp/run2.txt"
check "3 threads: rows identical to 1" cmp -s "$tmp/run1.txt" "$tmp/run3.txt"
sed 's/^mode = train/mode = train\nthreads = 2/' "$tmp/s.ini" > "$tmp/t2.ini"
"$HETSIM" run "$tmp/t2.ini" --db "$tmp/file2.db" --quiet 2> /dev/null
dump "$tmp/file2.db" | sed 's/t2\.ini/s.ini/g' > "$tmp/file2.txt"
check "[run] threads = 2: rows identical, and runs.config leaves it out" cmp -s "$tmp/run1.txt" "$tmp/file2.txt"

"$HETSIM" sweep "$tmp/s.ini" --jobs 1 --threads 1 --db "$tmp/sweep11.db" --quiet 2> /dev/null
check "sweep --jobs 1 --threads 1 exits 0" test $? -eq 0
"$HETSIM" sweep "$tmp/s.ini" --jobs 2 --threads 2 --db "$tmp/sweep22.db" --quiet 2> /dev/null
check "sweep --jobs 2 --threads 2 exits 0" test $? -eq 0
"$HETSIM" sweep "$tmp/s.ini" --jobs 1 --db "$tmp/sweep1.db" --quiet 2> /dev/null
dump "$tmp/sweep11.db" > "$tmp/sweep11.txt"
dump "$tmp/sweep22.db" > "$tmp/sweep22.txt"
dump "$tmp/sweep1.db" > "$tmp/sweep1.txt"
check "sweep of 3 methods wrote 3 runs" test "$(q "$tmp/sweep11.db" 'select count(*) from runs where status = "done"')" = 3
check "sweep rows: jobs 2 x threads 2 = jobs 1 x threads 1" cmp -s "$tmp/sweep11.txt" "$tmp/sweep22.txt"
check "sweep rows: default threads = threads 1" cmp -s "$tmp/sweep11.txt" "$tmp/sweep1.txt"

finish threads.sh
