# lib.bash — what the CLI test scripts (tests/cli/*.sh) share; sourced, never run itself
# (`make test` runs *.sh only). Sets HETSIM (absolute, so a script may cd), a scratch
# folder $tmp removed at exit (with any background job still running), the pass/fail
# counters, check(), refused() and refused_appended() for inputs that must exit 2, and, for
# comparing databases, q(), dump_rows() and same_rows_with_1_and_2_jobs().
set -u
HETSIM=${HETSIM:-./hetsim}
HETSIM=$(cd "$(dirname "$HETSIM")" && pwd)/$(basename "$HETSIM")
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0 fail=0

check() { # name, condition-command...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi
}

q() { sqlite3 "$1" "$2"; } # db, sql

# The mode option for a scenario file the tests run in timing mode: --timing-only, unless
# timing mode refuses the file because its rules pick by training losses (a sweep over
# [method] selection = oort or power-of-choice, docs/selection.md): then train mode.
mode_for() { # scenario file -> an option
  if "$HETSIM" check "$1" --timing-only 2>&1 > /dev/null | grep -q "which timing mode does not compute"; then
    echo "--set run.mode=train"
  else
    echo "--timing-only"
  fi
}

# Every table's rows without run ids and columns that are not results, runs ordered by
# $2 (columns of runs r), each per-run table's rows in written order: equal dumps =
# identical results. The columns come from schema_columns (the row tables), so a column
# added to a row table is compared without a change here.
dump_rows() { # db, order
  local db=$1 order=$2 cols t
  cols=$(q "$db" "select group_concat('quote(r.' || column_name || ')', ',') from schema_columns
                  where table_name = 'runs' and is_result and column_name <> 'id'")
  q "$db" "select $cols from runs r order by $order"
  for t in $(q "$db" "select distinct table_name from schema_columns where column_name = 'run_id'
                      and table_name in (select name from sqlite_master where type = 'table') order by table_name"); do
    cols=$(q "$db" "select group_concat('quote(t.' || column_name || ')', ',') from schema_columns
                    where table_name = '$t' and is_result and column_name <> 'run_id'")
    q "$db" "select '$t', $order, $cols from $t t join runs r on r.id = t.run_id order by $order, t.rowid"
  done
}

# Prints every disagreement between `hetsim report --csv` (the runs table) and the view
# run_summary, column by column: '' is NULL, numbers exactly (the report's %.17g read
# back as REAL by SQLite); nothing when they agree.
same_as_report() { # db -> prints the disagreements
  local db=$1 cols c cond=""
  "$HETSIM" report "$db" --csv > "$tmp/report.csv" || return 1
  q "$db" "drop table if exists temp_report"
  sqlite3 "$db" ".import --csv $tmp/report.csv temp_report"
  cols=$(head -1 "$tmp/report.csv" | tr ',' ' ')
  for c in $cols; do
    cond="$cond union all select '$c', r.id, r.\"$c\", s.\"$c\" from temp_report r join run_summary s on s.id = r.id
      where not ((r.\"$c\" = '' and s.\"$c\" is null) or (r.\"$c\" <> '' and s.\"$c\" is not null and
                 (r.\"$c\" = s.\"$c\" or cast(r.\"$c\" as real) = s.\"$c\")))"
  done
  # seed: the report prints the uint64, the view the stored bit pattern (store.h)
  cond=${cond//"cast(r.\"seed\" as real) = s.\"seed\""/"cast(r.\"seed\" as real) = s.\"seed\" + (s.\"seed\" < 0) * 18446744073709551616.0"}
  q "$db" "select 'rows', a, b, '' from (select (select count(*) from temp_report) a, (select count(*) from run_summary) b)
           where a <> b $cond" 2>&1 # an SQL error (a column the view lacks) is a disagreement too
  q "$db" "drop table temp_report"
}
# The runs rows of a database in id order, ids included, every column but those
# schema_columns says are not results (wall clock, where and how a run was started):
# equal outputs = the same runs with the same ids.
runs_rows() { # db
  local cols
  cols=$(q "$1" "select group_concat('quote(' || column_name || ')', ',') from schema_columns
                 where table_name = 'runs' and is_result")
  q "$1" "select $cols from runs order by id"
}

# An input hetsim must refuse before it makes a database: runs `hetsim ARGS... --db
# $tmp/out.db --quiet` and checks exit 2, that stderr holds FRAGMENT (a fixed string, shown
# when it does not) and that no database was made.
refused() { # name, fragment of the message, hetsim arguments...
  local name=$1 fragment=$2 status; shift 2
  rm -f "$tmp/out.db"
  "$HETSIM" "$@" --db "$tmp/out.db" --quiet > /dev/null 2> "$tmp/err"
  status=$?
  check "$name exits 2 (status $status)" test $status -eq 2
  check "$name is named" grep -qF -- "$fragment" "$tmp/err" || sed 's/^/    /' "$tmp/err"
  check "$name writes no database" test ! -e "$tmp/out.db"
}

# A scenario file that must be refused at FILE:LINE before any database: BASE with TEXT
# appended (printf %b: \n starts another line), as $tmp/bad.ini, given to `hetsim run`
# with the options after LINE; checks exit 2, "bad.ini:LINE: ...EXPECTED" on stderr (LINE:
# the file's last unless given) and that no database was made.
refused_appended() { # name, base file, text, expected (a grep pattern), line or "", run options...
  local name=$1 base=$2 text=$3 expected=$4 line=${5:-} status; shift 4; shift $(($# > 0))
  cp "$base" $tmp/bad.ini; printf '%b\n' "$text" >> $tmp/bad.ini
  [ -n "$line" ] || line=$(wc -l < $tmp/bad.ini)
  rm -f $tmp/bad.db
  "$HETSIM" run $tmp/bad.ini --db $tmp/bad.db --quiet "$@" 2> $tmp/bad.err
  status=$?
  check "$name: exit 2" test $status -eq 2
  check "$name: FILE:LINE and why" grep -q "bad.ini:$line: .*$expected" $tmp/bad.err || sed 's/^/    /' $tmp/bad.err
  check "$name: no database" test ! -e $tmp/bad.db
}

# A sweep's rows must not depend on how many workers ran it: runs `hetsim sweep FILE
# --quiet` with --jobs 1 into PREFIX1.db and --jobs 2 into PREFIX2.db (kept for the
# caller's own checks) and checks that both exit 0 and that their rows (dump_rows, runs
# by point) are written and equal. A failed sweep's stderr is shown.
same_rows_with_1_and_2_jobs() { # check name prefix, scenario file, database prefix
  local name=$1 file=$2 db=$3 jobs status
  for jobs in 1 2; do
    "$HETSIM" sweep "$file" --db "$db$jobs.db" --jobs $jobs --quiet > /dev/null 2> "$db$jobs.err"
    status=$?
    check "$name, $jobs job$([ $jobs = 1 ] || echo s): exit 0" test $status -eq 0
    [ $status -eq 0 ] || cat "$db$jobs.err" >&2
    dump_rows "$db$jobs.db" r.point > "$db$jobs.rows"
  done
  check "$name: the same rows with 1 and 2 jobs" \
    test -s "$db"1.rows -a "$(md5sum < "$db"1.rows)" = "$(md5sum < "$db"2.rows)"
}

# Two trainings on other arithmetic (kernels) must agree to rounding: checks that B's
# train and test losses are A's to a relative TOL in every metrics row (and that there are
# rows), and prints the largest relative difference seen.
losses_within() { # check name, db A (the reference), db B, relative tolerance
  local name=$1 a=$2 b=$3 tol=$4
  local sql="select printf('%.17g %.17g', train_loss, test_loss) from metrics order by rowid"
  paste -d' ' <(q "$a" "$sql") <(q "$b" "$sql") > $tmp/losses
  local rel='function rel(a, b) { d = a - b; if (d < 0) d = -d; return d / (b < 0 ? -b : b) }'
  check "$name: losses to a relative $tol, every round ($(wc -l < $tmp/losses) rows)" \
    awk -v tol="$tol" "$rel"' { n++; if (rel($3, $1) > tol + 0 || rel($4, $2) > tol + 0) bad++ } END { exit !(n > 0 && bad == 0) }' $tmp/losses
  awk "$rel"' { r = rel($3, $1); if (r > m) m = r; r = rel($4, $2); if (r > m) m = r }
       END { printf "    largest relative difference: %.2g\n", m }' $tmp/losses
}

finish() { # script name
  echo "$1: $pass passed, $fail failed"
  test "$fail" -eq 0
}
