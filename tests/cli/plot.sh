#!/usr/bin/env bash
# CLI contract of `hetsim plot` and `hetsim report --csv`: two quickstart timing runs
# (sync and localsgd) into a tiny database, then the figures as PNG and SVG, the notes
# for absent data, a missing gnuplot, and the report's CSV header; a small timing sweep
# plotted as PDF (pdfinfo opens it), SVG (xmllint parses it) and PNG with --keep, whose
# scripts redraw the same PNG bytes under plain gnuplot, from another folder.
. "$(dirname "$0")/lib.bash"
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
is_svg() { grep -q '<svg' "$1" && [ "$(tr -d ' \r\n' < "$1" | tail -c 6)" = '</svg>' ]; }

db=$tmp/tiny.db
"$HETSIM" run scenarios/quickstart.ini --timing-only --quiet --db "$db" --set run.method=sync
check "sync timing run exits 0" test $? -eq 0
"$HETSIM" run scenarios/quickstart.ini --timing-only --quiet --db "$db" --set run.method=localsgd
check "localsgd timing run exits 0" test $? -eq 0

"$HETSIM" plot "$db" --out "$tmp/plots" > "$tmp/out" 2> "$tmp/err"
check "plot exits 0" test $? -eq 0
for figure in idle timeline; do
  check "$figure.png is a PNG" is_png "$tmp/plots/$figure.png"
  check "$figure.svg is an SVG" is_svg "$tmp/plots/$figure.svg"
  check "$figure paths printed" grep -qx "$tmp/plots/$figure.png" "$tmp/out"
done
check "every printed path exists" sh -c 'while read -r f; do test -s "$f" || exit 1; done < "$1"' sh "$tmp/out"
check "timing runs: accuracy skipped with a note" grep -q 'skipped accuracy' "$tmp/err"
check "two runs, one level: straggler skipped with a note" grep -q 'skipped straggler: one heterogeneity level' "$tmp/err"
check "no ComDML run: pairing skipped with a note" grep -q 'skipped pairing' "$tmp/err"
check "nothing but notes on stderr" test "$(grep -vc '^hetsim plot: skipped' "$tmp/err")" -eq 0

# a timing sweep (sweep-demo: 54 runs, well under a second) in every format
demo=$tmp/demo.db
"$HETSIM" sweep scenarios/sweep-demo.ini --db "$demo" --quiet
check "sweep-demo exits 0" test $? -eq 0
"$HETSIM" plot "$demo" --out "$tmp/all" --format png,svg,pdf --keep > "$tmp/out" 2> "$tmp/err"
check "plot of the sweep exits 0" test $? -eq 0
for figure in straggler speedup idle pairing timeline; do
  check "$figure.pdf opens in pdfinfo" sh -c "pdfinfo '$tmp/all/$figure.pdf' | grep -q '^Pages: *1'"
  check "$figure.svg parses as XML" xmllint --noout "$tmp/all/$figure.svg"
  check "$figure.gp and .dat kept" test -s "$tmp/all/$figure.gp" -a -s "$tmp/all/$figure.dat"
  cp "$tmp/all/$figure.png" "$tmp/$figure.first.png"
  rm "$tmp/all/$figure.png"
  (cd / && gnuplot "$tmp/all/$figure.gp" 2> "$tmp/gnuplot.err")
  check "$figure.gp redraws with plain gnuplot" test $? -eq 0 -a ! -s "$tmp/gnuplot.err"
  check "$figure.gp redraws the same PNG" cmp -s "$tmp/all/$figure.png" "$tmp/$figure.first.png"
done
check "no sweep id in a figure" sh -c "! grep -l 'sw-[0-9a-f]' '$tmp'/all/*.svg '$tmp'/all/*.gp"
check "panels named in words" grep -q "stragglers' compute = 200 MFLOPS" "$tmp/all/straggler.svg"
check "the axis in words" grep -q 'compute σ (lognormal)' "$tmp/all/straggler.svg"
"$HETSIM" plot "$demo" --out "$tmp/again" --format svg --keep > /dev/null 2>&1
check "same database, same data bytes" sh -c "for f in '$tmp'/all/*.dat; do cmp -s \"\$f\" '$tmp'/again/\$(basename \"\$f\") || exit 1; done"
"$HETSIM" plot "$demo" --out "$tmp/paper" --style paper --format pdf > /dev/null 2>&1
check "paper style: one-column figures 3.5 in wide" sh -c "pdfinfo '$tmp/paper/pairing.pdf' | grep -q 'Page size: *252 x'"

"$HETSIM" plot "$db" --out "$tmp/svg only" --format svg --run 1 > "$tmp/out" 2> /dev/null
check "--format svg writes SVG only" sh -c "test -n \"\$(ls '$tmp/svg only')\" && ! ls '$tmp/svg only' | grep -qv '\\.svg\$'"

mkdir "$tmp/empty-bin"
PATH="$tmp/empty-bin" "$HETSIM" plot "$db" --out "$tmp/never" > "$tmp/out" 2> "$tmp/err"
check "missing gnuplot exits 1" test $? -eq 1
check "missing gnuplot names the package" grep -q 'apt-get install gnuplot-nox' "$tmp/err"
check "missing gnuplot writes nothing" test ! -e "$tmp/never"
"$HETSIM" plot "$tmp/absent.db" 2> "$tmp/err"
check "plot of a missing database exits 1" test $? -eq 1
"$HETSIM" plot "$db" --format gif 2> "$tmp/err"
check "bad --format exits 2" test $? -eq 2
"$HETSIM" plot "$db" --size 3in 2> "$tmp/err"
check "bad --size exits 2" test $? -eq 2
"$HETSIM" plot "$db" --style poster 2> "$tmp/err"
check "bad --style exits 2" test $? -eq 2
"$HETSIM" plot --help > "$tmp/out"
check "plot --help lists the figures" grep -q 'straggler' "$tmp/out"

"$HETSIM" report "$db" --csv > "$tmp/csv"
check "report --csv exits 0" test $? -eq 0
check "report --csv header" test "$(head -1 "$tmp/csv")" = \
  "id,name,method,seed,status,rounds,sim_time_s,idle_share,bytes,final_accuracy,target_accuracy,time_to_target_s,predicted_round_s,actual_round_s,offload_share,sweep,point,energy_j,energy_to_target_j"
check "report --csv has both runs" test "$(wc -l < "$tmp/csv")" -eq 3
"$HETSIM" report "$db" --csv --table speedup > "$tmp/csv"
check "speedup of localsgd over sync" grep -q '^localsgd,0,1,total virtual time,' "$tmp/csv"

finish plot.sh
