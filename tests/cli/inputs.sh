#!/usr/bin/env bash
# Issue 28, class 5: every path hetsim reads, given a FIFO without a writer, a directory
# or /dev/zero, exits 2 within a second with a message naming the path (no hang, no read
# without bound, no "empty file" reading), and a run or sweep refused so writes no database.
. "$(dirname "$0")/lib.bash"

top=$(pwd)
mkfifo "$tmp/fifo"
mkdir "$tmp/dir"
# readers that want a file name ending (edges, assign) get links with that ending
for kind in fifo dir; do
  ln -s "$tmp/$kind" "$tmp/$kind.edges"
  ln -s "$tmp/$kind" "$tmp/$kind.assign"
done
ln -s /dev/zero "$tmp/zero.edges"
ln -s /dev/zero "$tmp/zero.assign"
# a dataset folder whose training images are the bad path
for kind in fifo dir zero; do
  mkdir "$tmp/data-$kind"
  for f in train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
    ln -s /usr/share/datasets/fashion-mnist/$f "$tmp/data-$kind/$f"
  done
done
ln -s "$tmp/fifo" "$tmp/data-fifo/train-images-idx3-ubyte.gz"
ln -s "$tmp/dir" "$tmp/data-dir/train-images-idx3-ubyte.gz"
ln -s /dev/zero "$tmp/data-zero/train-images-idx3-ubyte.gz"

cat > "$tmp/edge.ini" <<'INI'
[run]
method = sdfeel
rounds = 1
mode = timing
[agents]
count = 8
compute = 1 GFLOPS
bandwidth = 10 Mbit/s
[servers]
count = 2
compute = 1 GFLOPS
bandwidth = 100 Mbit/s
INI

# name, fragment the message must hold, arguments...: exit 2 within a second, no database
refused_fast() {
  local name=$1 fragment=$2; shift 2
  rm -f "$tmp/out.db"
  local start end status
  start=$(date +%s%N)
  timeout 1 "$HETSIM" "$@" > /dev/null 2> "$tmp/err"
  status=$?
  end=$(date +%s%N)
  check "$name exits 2 within a second (status $status, $(( (end - start) / 1000000 )) ms)" test $status -eq 2
  check "$name is named" grep -qF -- "$fragment" "$tmp/err"
  check "$name writes no database" test ! -e "$tmp/out.db"
}

# the same without the one-second limit, for files that are read before they are refused
refused_named() {
  local name=$1 fragment=$2; shift 2
  rm -f "$tmp/out.db"
  timeout 120 "$HETSIM" "$@" > /dev/null 2> "$tmp/err"
  local status=$?
  check "$name exits 2 (status $status)" test $status -eq 2
  check "$name is named" grep -qF -- "$fragment" "$tmp/err"
  check "$name writes no database" test ! -e "$tmp/out.db"
}

q=scenarios/quickstart.ini
for kind in fifo dir zero; do
  case $kind in
    fifo) path=$tmp/fifo what="a FIFO" ;;
    dir) path=$tmp/dir what="a directory" ;;
    zero) path=/dev/zero what="a character device" ;;
  esac
  refused_fast "run scenario ($kind)" "$path: is $what, not a regular file" run "$path" --db "$tmp/out.db"
  refused_fast "sweep scenario ($kind)" "$path: is $what, not a regular file" sweep "$path" --db "$tmp/out.db"
  refused_fast "pair instance ($kind)" "$path: is $what, not a regular file" pair "$path"
  refused_fast "report database ($kind)" "$path: is $what, not a regular file" report "$path"
  refused_fast "plot database ($kind)" "$path: is $what, not a regular file" plot "$path" --out "$tmp/plots"
  refused_fast "run --db ($kind)" "$path: is $what, not a regular file" run $q --timing-only --db "$path"
  refused_fast "sweep --db ($kind)" "$path: is $what, not a regular file" sweep scenarios/sweep-demo.ini --db "$path"
  for key in compute bandwidth uplink downlink; do
    refused_fast "trace of $key ($kind)" "$path: is $what, not a regular file" run $q --timing-only --db "$tmp/out.db" \
      --set "agents.$key=trace($path)"
  done
  refused_fast "availability trace ($kind)" "$path: is $what, not a regular file" run $q --timing-only --db "$tmp/out.db" \
    --set "agents.stragglers.availability=trace($path)"
  refused_fast "trace in a sweep ($kind)" "$path: is $what, not a regular file" sweep scenarios/sweep-demo.ini \
    --db "$tmp/out.db" --set "agents.stragglers.bandwidth=trace($path)"
  refused_fast "edges file ($kind)" "$path: is $what, not a regular file" run $q --timing-only --db "$tmp/out.db" \
    --set "topology.graph=$tmp/$kind.edges"
  refused_fast "assign file ($kind)" "$path: is $what, not a regular file" run "$tmp/edge.ini" --db "$tmp/out.db" \
    --set "servers.assign=$tmp/$kind.assign"
  [ $kind = dir ] || refused_fast "dataset folder ($kind)" "$path: is $what, not a folder" run $q \
    --db "$tmp/out.db" --set run.rounds=1 --set "data.path=$path"
  refused_fast "dataset file ($kind)" "train-images-idx3-ubyte.gz: is $what, not a regular file" run $q \
    --db "$tmp/out.db" --set run.rounds=1 --set "data.path=$tmp/data-$kind"
  refused_fast "dataset file in a sweep ($kind)" "train-images-idx3-ubyte.gz: is $what, not a regular file" \
    sweep scenarios/sweep-demo.ini --db "$tmp/out.db" --set run.mode=train --set run.rounds=1 \
    --set "data.path=$tmp/data-$kind"
done

# Class 8: a bad file is named at the scenario's key (FILE:LINE), then at its own line,
# for run and sweep alike, and nothing is written.
printf 'agent,time,value\ndefault,0,1 GFLOPS\nstragglers,0,-1 GFLOPS\n' > "$tmp/bad.csv"
printf '0 1\n1 1\n' > "$tmp/bad.edges"
printf '0 0\n0 1\n' > "$tmp/bad.assign"
sed "s|^compute = 200 MFLOPS\$|compute = trace(bad.csv)|" $q > "$tmp/trace.ini"
{ cat $q; printf '[topology]\ngraph = bad.edges\n'; } > "$tmp/edges.ini"
{ cat "$tmp/edge.ini"; printf 'assign = bad.assign\n'; } > "$tmp/assign.ini"
{ sed '/^partition = iid$/a path = data-bad' $q; } > "$tmp/data.ini"
mkdir "$tmp/data-bad"
for f in train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  ln -s /usr/share/datasets/fashion-mnist/$f "$tmp/data-bad/$f"
done
head -c 100000 /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz > "$tmp/data-bad/train-images-idx3-ubyte.gz"
for cmd in run sweep; do
  refused_named "$cmd: a bad trace at its key" "trace.ini:39: [agents.stragglers] compute: $tmp/bad.csv:3: value must be positive" \
    $cmd "$tmp/trace.ini" --timing-only --db "$tmp/out.db"
  refused_named "$cmd: a bad edges file at its key" "edges.ini:41: [topology] graph: $tmp/bad.edges:2: self-loop 1-1" \
    $cmd "$tmp/edges.ini" --timing-only --db "$tmp/out.db"
  refused_named "$cmd: a bad assign file at its key" \
    "assign.ini:13: [servers] assign: $tmp/bad.assign:2: agent 0 is assigned twice (first at line 1)" \
    $cmd "$tmp/assign.ini" --db "$tmp/out.db"
  refused_named "$cmd: a truncated dataset file at [data] path" \
    "data.ini:15: [data] path: $tmp/data-bad/train-images-idx3-ubyte.gz: truncated" \
    $cmd "$tmp/data.ini" --set run.rounds=1 --db "$tmp/out.db"
done
refused_named "a missing [data] path at its key" "--set data.path=/nonexistent: /nonexistent: not found" \
  run $q --timing-only --db "$tmp/out.db" --set data.path=/nonexistent
cd "$top" || exit 1
finish inputs.sh
