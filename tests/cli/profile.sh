#!/usr/bin/env bash
# CLI contract of `hetsim profile` and of [model] profile: the MLP and the CNN of the
# quickstart are profiled (the file's structure: its comment lines, header, one row per
# block and auxiliary head, every figure positive; timings themselves are not asserted),
# and the scenario reads the file back with compute given as a relative speed; usage
# errors exit 2, an unwritable --out exits 1; a profile of another batch, or compute in
# FLOP/s beside a profile, exits 2 with FILE:LINE before any database exists. Run from the
# top folder with HETSIM set to the binary.
. "$(dirname "$0")/lib.bash"

# every data row: 6 fields, the name as expected, numbers > 0
rows_ok() { # file, expected names (space-separated)
  awk -F, -v names="$2" '
    BEGIN { n = split(names, want, " ") }
    /^#/ || /^$/ { next }
    !header { header = ($0 == "layer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s"); if (!header) exit 1; next }
    { k++; if (NF != 6 || $1 != want[k]) exit 1; for (i = 2; i <= 6; i++) if (!($i + 0 > 0)) exit 1 }
    END { exit !(header && k == n) }' "$1"
}

"$HETSIM" profile scenarios/quickstart.ini --out "$tmp/mlp.csv" --repeat 3 > "$tmp/out" 2> "$tmp/err"
check "profile of the MLP exits 0" test $? -eq 0
check "nothing on stdout or stderr with --out" test ! -s "$tmp/out" -a ! -s "$tmp/err"
check "the header names the host CPU" grep -qE '^# host: .+' "$tmp/mlp.csv"
check "the header has the command" grep -qx '# command: hetsim profile scenarios/quickstart.ini --out '"$tmp/mlp.csv"' --repeat 3' "$tmp/mlp.csv"
check "the header has the model" grep -qx '# model: mlp 784-256-128-10' "$tmp/mlp.csv"
check "the header has the batch" grep -qx '# batch: 64' "$tmp/mlp.csv"
check "one row per layer and head, every figure > 0" rows_ok "$tmp/mlp.csv" "fc1 fc2 fc3 head1 head2"

"$HETSIM" profile scenarios/quickstart.ini --set model.arch=cnn --set model.batch=8 --repeat 1 > "$tmp/cnn.csv"
check "profile of the CNN to stdout exits 0" test $? -eq 0
check "the CNN's rows" rows_ok "$tmp/cnn.csv" "conv1 conv2 fc1 fc2 head1 head2 head3"

# the scenario reads it: relative speeds, timing mode, one round
set_profile=(--set "model.profile=$tmp/mlp.csv" --set agents.compute="lognormal(0.05x, 0.8)"
             --set agents.stragglers.compute=0.005x)
"$HETSIM" check scenarios/quickstart.ini "${set_profile[@]}" > "$tmp/check" 2> "$tmp/err"
check "the scenario accepts the profile" test $? -eq 0
check "the resolved scenario writes the profile and the speeds back" \
  sh -c "grep -qx 'profile = $tmp/mlp.csv' '$tmp/check' && grep -qx 'compute = 0.005x' '$tmp/check'"
"$HETSIM" run scenarios/quickstart.ini "${set_profile[@]}" --timing-only --set run.rounds=1 --db "$tmp/ok.db" --quiet > /dev/null
check "a ComDML run under the profile" test "$(sqlite3 "$tmp/ok.db" 'select status from runs')" = done

# refusals before any database
sed 's/^# batch: 64$/# batch: 32/' "$tmp/mlp.csv" > "$tmp/b32.csv"
line=$(grep -n '^# batch:' "$tmp/b32.csv" | cut -d: -f1)
"$HETSIM" run scenarios/quickstart.ini --set "model.profile=$tmp/b32.csv" --set agents.compute=0.5x \
  --set agents.stragglers.compute=0.05x --db "$tmp/bad.db" 2> "$tmp/err"
check "a profile of another batch exits 2" test $? -eq 2
check "... naming the profile's line" grep -q "$tmp/b32.csv:$line: measured at batch 32" "$tmp/err"
check "... before any database" test ! -e "$tmp/bad.db"
"$HETSIM" run scenarios/quickstart.ini --set "model.profile=$tmp/mlp.csv" --db "$tmp/bad.db" 2> "$tmp/err"
check "compute in FLOP/s beside a profile exits 2" test $? -eq 2
check "... saying why at the key" grep -q "scenarios/quickstart.ini:3[0-9]: \[agents\] compute: is in FLOP/s, but \[model\] profile is set" "$tmp/err"
check "... before any database" test ! -e "$tmp/bad.db"

# usage
"$HETSIM" profile scenarios/quickstart.ini --repeat 0 > /dev/null 2> "$tmp/err"
check "--repeat 0 exits 2" test $? -eq 2
"$HETSIM" profile scenarios/quickstart.ini --bogus > /dev/null 2> "$tmp/err"
check "an unknown option exits 2" test $? -eq 2
"$HETSIM" profile > /dev/null 2> "$tmp/err"
check "no scenario exits 2" test $? -eq 2
"$HETSIM" profile scenarios/quickstart.ini --set model.batch=0 > /dev/null 2> "$tmp/err"
check "a bad scenario exits 2" test $? -eq 2
check "... saying where" grep -q 'model.batch=0' "$tmp/err"
"$HETSIM" profile scenarios/quickstart.ini --out "$tmp/no/such/folder.csv" --repeat 1 2> "$tmp/err"
check "an unwritable --out exits 1" test $? -eq 1
"$HETSIM" profile --help | grep -q '^usage: hetsim profile SCENARIO.ini'
check "--help prints the usage" test $? -eq 0

echo "profile.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
