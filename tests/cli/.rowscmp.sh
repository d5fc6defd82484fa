. "$(dirname "$0")/lib.bash"
main=/work/snap/hetsim-main
for b in main mine; do
  bin=$HETSIM; [ $b = main ] && bin=$main
  $bin run scenarios/quickstart.ini --db $tmp/$b.db --quiet --set run.rounds=2 --threads 2 > /dev/null
  $bin run scenarios/quickstart.ini --db $tmp/$b.db --quiet --set run.rounds=2 --set run.method=sync --threads 2 > /dev/null
  $bin run scenarios/sync-8.ini --db $tmp/$b.db --quiet --set run.rounds=2 > /dev/null
  $bin sweep tests/fixtures/cli/tiny-sweep.ini --db $tmp/$b.db --quiet --jobs 2 > /dev/null
  $bin sweep scenarios/sweep-demo.ini --db $tmp/$b.db --quiet --jobs 2 --timing-only > /dev/null
  dump_rows $tmp/$b.db r.id > $tmp/$b.rows
done
check "rows identical to main's binary ($(wc -l < $tmp/main.rows) lines)" cmp -s $tmp/main.rows $tmp/mine.rows
diff $tmp/main.rows $tmp/mine.rows | head -5
finish rowscmp
