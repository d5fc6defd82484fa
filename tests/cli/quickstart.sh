#!/usr/bin/env bash
# The README's quick start on a fresh Debian 12, played with stand-ins: scripts/install-deps
# and scripts/quickstart run for real, against a PATH of shims for dpkg-query (which
# packages are missing), id (who we are), apt-get (logged, never run) and sudo (logged,
# then runs its command). Cases: root without sudo, a user with sudo, a user without it,
# nothing missing; and the README's first command is the script tested here.
# Run from the top folder.
. "$(dirname "$0")/lib.bash"
top=$PWD

mkdir -p "$tmp/base" "$tmp/sudo"
for tool in bash grep env cat; do ln -s "$(command -v "$tool")" "$tmp/base/$tool"; done
cat > "$tmp/base/dpkg-query" <<'EOF'
#!/bin/bash
for p in $FAKE_MISSING; do [ "$p" = "${!#}" ] && exit 1; done
printf 'install ok installed'
EOF
cat > "$tmp/base/id" <<'EOF'
#!/bin/bash
echo "$FAKE_UID"
EOF
cat > "$tmp/base/apt-get" <<'EOF'
#!/bin/bash
echo "apt-get $* DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-}" >> "$LOG"
EOF
cat > "$tmp/sudo/sudo" <<'EOF'
#!/bin/bash
echo "sudo $1" >> "$LOG"
exec "$@"
EOF
chmod +x "$tmp"/base/* "$tmp"/sudo/*
bash=$(command -v bash)

deps() { # uid, PATH, missing packages -> exit status; stderr in $tmp/err, calls in $LOG
  : > "$LOG"
  FAKE_UID=$1 PATH=$2 FAKE_MISSING=$3 "$bash" "$top/scripts/install-deps" > "$tmp/out" 2> "$tmp/err"
}
export LOG=$tmp/log

deps 0 "$tmp/base" "check libgsl-dev"
check "root without sudo: install-deps succeeds" test $? -eq 0
check "root without sudo: apt-get update runs directly" grep -qx "apt-get update DEBIAN_FRONTEND=noninteractive" "$LOG"
check "root without sudo: apt-get installs exactly the missing packages" \
  grep -qx "apt-get install -y --no-install-recommends libgsl-dev check DEBIAN_FRONTEND=noninteractive" "$LOG"
check "root without sudo: sudo is never called" test "$(grep -c '^sudo' "$LOG")" -eq 0

deps 0 "$tmp/sudo:$tmp/base" "check"
check "root with sudo installed: apt-get still runs without it" \
  test "$(grep -c '^sudo' "$LOG")" -eq 0 -a "$(grep -c '^apt-get' "$LOG")" -eq 2

deps 1000 "$tmp/sudo:$tmp/base" "check libgsl-dev"
check "a user with sudo: install-deps succeeds" test $? -eq 0
check "a user with sudo: both apt-get calls go through sudo" test "$(grep -c '^sudo env' "$LOG")" -eq 2
check "a user with sudo: apt-get installs the missing packages" \
  grep -qx "apt-get install -y --no-install-recommends libgsl-dev check DEBIAN_FRONTEND=noninteractive" "$LOG"
check "a user with sudo: it says what it installs and how" grep -q "installing the missing Debian packages with sudo: libgsl-dev check" "$tmp/err"

deps 1000 "$tmp/base" "check libgsl-dev"
check "a user without sudo: install-deps exits 1" test $? -eq 1
check "a user without sudo: nothing is installed" test ! -s "$LOG"
check "a user without sudo: it says sudo is missing" grep -q "sudo is not installed" "$tmp/err"
check "a user without sudo: it prints the command to run as root" \
  grep -qF "su -c 'apt-get update && apt-get install -y --no-install-recommends libgsl-dev check'" "$tmp/err"

deps 1000 "$tmp/base" ""
check "nothing missing: exit 0, silent, no apt-get" test $? -eq 0 -a ! -s "$LOG" -a ! -s "$tmp/err" -a ! -s "$tmp/out"

# scripts/quickstart: install-deps, then the build, then the default scenario, in that
# order and from the top folder wherever it is started; a failed install stops it.
mkdir -p "$tmp/src/scripts" "$tmp/elsewhere"
cp "$top/scripts/quickstart" "$top/scripts/install-deps" "$tmp/src/scripts/"
cat > "$tmp/base/make" <<'EOF'
#!/bin/bash
echo "make $* in $PWD" >> "$LOG"
EOF
cat > "$tmp/src/hetsim" <<'EOF'
#!/bin/bash
echo "hetsim $*" >> "$LOG"
EOF
ln -s "$(command -v nproc)" "$tmp/base/nproc"
ln -s "$(command -v dirname)" "$tmp/base/dirname"
chmod +x "$tmp/base/make" "$tmp/src/hetsim"
: > "$LOG"
(cd "$tmp/elsewhere" && FAKE_UID=1000 PATH="$tmp/sudo:$tmp/base" FAKE_MISSING=check \
   "$bash" ../src/scripts/quickstart > "$tmp/out" 2> "$tmp/err")
check "quickstart as a user with sudo succeeds" test $? -eq 0
sed -E 's/^(make) -j[0-9]+/\1 -jN/' "$LOG" > "$tmp/calls"
printf '%s\n' "sudo env" "apt-get update DEBIAN_FRONTEND=noninteractive" "sudo env" \
  "apt-get install -y --no-install-recommends check DEBIAN_FRONTEND=noninteractive" \
  "make -jN hetsim in $tmp/src" "hetsim run scenarios/quickstart.ini --db quickstart.db" > "$tmp/want"
check "quickstart installs, builds in the top folder, then runs the default scenario" cmp -s "$tmp/calls" "$tmp/want"
: > "$LOG"
(cd "$tmp/elsewhere" && FAKE_UID=1000 PATH="$tmp/base" FAKE_MISSING=check "$bash" ../src/scripts/quickstart \
   > "$tmp/out" 2> "$tmp/err")
check "quickstart as a user without sudo stops with exit 1" test $? -eq 1
check "... before building anything" test ! -s "$LOG"

# The README shows these commands, and .ci/run runs the test command the README shows.
block=$(sed -n '/^## Quick start/,/^## /p' README.md | sed -n '/^```sh$/,/^```$/p' | grep -v '^```')
check "the README's first command is scripts/quickstart" test "$(echo "$block" | sed -n 1p | cut -d' ' -f1)" = scripts/quickstart
check "the README's second command is make test" test "$(echo "$block" | sed -n 2p | cut -d' ' -f1-2)" = "make test"
check ".ci/run runs make test" grep -qx "make test" .ci/run
check "scripts/quickstart is executable in the repository" test -x scripts/quickstart

finish quickstart.sh
