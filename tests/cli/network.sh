#!/usr/bin/env bash
# CLI contract of [network]: bad values exit 2 naming FILE:LINE and write nothing; the
# resolved section is in runs.config; both models run every method.
. "$(dirname "$0")/lib.bash"

base=tests/fixtures/scenarios/golden-timing.ini
for bad in "model = maxmn" "uplink = queue" "backbone = 0 B/s" "backbone = fast" "tcp = reno" "modle = fifo"; do
  { cat "$base"; printf '\n[network]\n%s\n' "$bad"; } > "$tmp/bad.ini"
  line=$(grep -n "^$bad\$" "$tmp/bad.ini" | cut -d: -f1)
  "$HETSIM" run "$tmp/bad.ini" --db "$tmp/bad.db" --quiet 2> "$tmp/err"
  check "'$bad' exits 2" test $? -eq 2
  check "'$bad' names $tmp/bad.ini:$line" grep -q "^hetsim: $tmp/bad.ini:$line: " "$tmp/err"
  check "'$bad' writes no database" test ! -e "$tmp/bad.db"
done
"$HETSIM" run "$base" --db "$tmp/bad.db" --quiet --set network.tcp=cubic 2> "$tmp/err"
check "--set network.tcp=cubic exits 2" test $? -eq 2

"$HETSIM" run "$base" --db "$tmp/r.db" --quiet --set network.model=maxmin --set network.backbone=1Gbit/s
check "maxmin run with a backbone exits 0" test $? -eq 0
check "config holds [network]" sh -c "sqlite3 '$tmp/r.db' 'select config from runs' | grep -q '^backbone = 125000000 B/s'"
for method in sync localsgd qsr dpsgd adpsgd co2 comdml byzsgdnm ripples divshare swift; do
  for model in fifo maxmin; do
    "$HETSIM" run "$base" --db "$tmp/m.db" --quiet --set run.method=$method --set network.model=$model
    check "$method runs under $model" test $? -eq 0
  done
done
check "every run done" test "$(sqlite3 "$tmp/m.db" "select count(*) from runs where status = 'done'")" = 22

finish network.sh
