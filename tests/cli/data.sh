#!/usr/bin/env bash
# The real data sets through the command: a CIFAR-10 folder of a few records the test
# writes trains (run and sweep), and each malformed case — a truncated record, a file of
# the wrong size, a label out of range, a missing file, a .npy in Fortran order, a JSON
# that is not LEAF's — exits 2 with the file and the record (or byte) and no database.
# scenarios/cifar10-comdml.ini runs in timing mode without the files and asks for a path
# to train. The readers' values are tests/check_readers.c, the keys tests/check_data_keys.c.
. "$(dirname "$0")/lib.bash"
export HETSIM_DATA_CACHE=off

record() { # label byte -> one CIFAR-10 record on stdout
  printf "\\$(printf '%03o' "$1")"
  head -c 3072 /dev/zero | tr '\0' '\200'
}
cifar() { # folder
  mkdir -p "$1"
  for i in 1 2 3 4 5; do { record $((i % 10)); record $(((i + 1) % 10)); } > "$1/data_batch_$i.bin"; done
  { record 1; record 2; } > "$1/test_batch.bin"
}
cifar "$tmp/c"
cat > "$tmp/c.ini" <<INI
[run]
method = localsgd
rounds = 1
[data]
dataset = cifar10
path = c
augment = crop-flip
normalize = train
[model]
arch = cnn
channels = 4,4
hidden = 8
batch = 2
[agents]
count = 2
compute = 1 GFLOPS
bandwidth = 10 MB/s
INI

"$HETSIM" run "$tmp/c.ini" --db "$tmp/ok.db" --quiet > /dev/null 2> "$tmp/err"
check "cifar10 from a folder relative to the scenario trains" test $? -eq 0
check "runs.config names the folder absolute, with the augmentation" \
  test "$(q "$tmp/ok.db" "select instr(config, 'path = $tmp/c') > 0 and instr(config, 'augment = crop-flip') > 0 from runs")" = 1
"$HETSIM" run "$tmp/c.ini" --db "$tmp/ok2.db" --quiet --threads 1 > /dev/null 2> "$tmp/err"
check "the same rows with one thread" test "$(dump_rows "$tmp/ok.db" r.id)" = "$(dump_rows "$tmp/ok2.db" r.id)"

refused() { # name, expected text, command words...
  local name=$1 want=$2; shift 2
  rm -f "$tmp/bad.db"
  "$HETSIM" "$@" --db "$tmp/bad.db" --quiet 2> "$tmp/err"
  local status=$?
  check "$name: exit 2" test $status -eq 2
  check "$name: names it" grep -qF -- "$want" "$tmp/err"
  check "$name: no database" test ! -e "$tmp/bad.db"
}
for cmd in run sweep; do
  cifar "$tmp/t"
  head -c 6000 "$tmp/c/data_batch_2.bin" > "$tmp/t/data_batch_2.bin"
  refused "$cmd: a truncated record" \
    "--set data.path=$tmp/t: $tmp/t/data_batch_2.bin: truncated record 1 at byte offset 3073" \
    $cmd "$tmp/c.ini" --set data.path="$tmp/t"
  cifar "$tmp/t"
  head -c 4 /dev/zero >> "$tmp/t/test_batch.bin"
  refused "$cmd: a file of the wrong size" "$tmp/t/test_batch.bin: truncated record 2 at byte offset 6146: 4 of its 3073 bytes" \
    $cmd "$tmp/c.ini" --set data.path="$tmp/t"
  cifar "$tmp/t"
  { record 3; record 10; } > "$tmp/t/data_batch_4.bin"
  refused "$cmd: a label out of range" "$tmp/t/data_batch_4.bin: record 1 (byte offset 3073): label 10 is not a class 0..9" \
    $cmd "$tmp/c.ini" --set data.path="$tmp/t"
  cifar "$tmp/t"
  rm "$tmp/t/data_batch_5.bin"
  refused "$cmd: a missing file" "$tmp/t/data_batch_5.bin: not found" $cmd "$tmp/c.ini" --set data.path="$tmp/t"
done

# npy in Fortran order; a JSON that is not LEAF's
mkdir "$tmp/n"
npy() { # file, dict
  python3 - "$1" "$2" <<'PY'
import struct, sys
d = sys.argv[2].encode(); pad = (64 - (10 + len(d) + 1) % 64) % 64
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d) + pad + 1) + d + b" " * pad + b"\n" + bytes(64))
PY
}
npy "$tmp/n/train_x.npy" "{'descr': '|u1', 'fortran_order': True, 'shape': (8, 8), }"
refused "npy in Fortran order" "$tmp/n/train_x.npy: array is in Fortran order" \
  run "$tmp/c.ini" --set data.dataset=npy --set data.path="$tmp/n" --set model.arch=mlp --set data.augment=none
mkdir -p "$tmp/l/train" "$tmp/l/test"
echo '{"users": ["a"], "num_samples": [1], "user_data": {"a": {"x": [[0.5]]}}}' > "$tmp/l/train/a.json"
cp "$tmp/l/train/a.json" "$tmp/l/test/a.json"
refused "a JSON that is not LEAF's" "$tmp/l/train/a.json" \
  run "$tmp/c.ini" --set data.dataset=leaf --set data.path="$tmp/l" --set model.arch=mlp --set data.augment=none

top=$(cd "$(dirname "$0")/../.." && pwd)
"$HETSIM" sweep "$top/scenarios/cifar10-comdml.ini" --db "$tmp/t.db" --quiet --timing-only --set run.rounds=1 > /dev/null 2> "$tmp/err"
check "cifar10-comdml.ini runs in timing mode without the files" test $? -eq 0
refused "cifar10-comdml.ini asks for a path to train" "[data] dataset: dataset = cifar10 needs [data] path" \
  sweep "$top/scenarios/cifar10-comdml.ini" --set run.rounds=1
finish data.sh
